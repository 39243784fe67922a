#!/usr/bin/env bash
# Syscall speed: a static program that calls getpid N times
# (bench/workloads/getpid_loop.c, built here with the host cc: x86-64 with
# SYSCALL, and i386 with INT 0x80 when gcc -m32 works) runs under entrysim
# --direct (host services called straight from the instruction) and
# through the modeled kernel as v4.16 and v4.17 (entry code, dispatcher,
# stub, body, hypercall, SYSRET/IRET, all as guest instructions).  Prints
# simulated syscalls per host second (from the run's own wall time, which
# excludes loading) and each kernel path's slowdown against --direct, all
# measured in this one script.
#   usage: bench/syscalls.sh [BUILD_DIR] [N] [ROUNDS]
set -euo pipefail
build=${1:-build/release}
n=${2:-1000000}
rounds=${3:-3}
es=$build/entrysim
src=$(cd "$(dirname "$0")" && pwd)/workloads/getpid_loop.c
[ -x "$es" ] || { echo "missing $es (build first)"; exit 1; }
cc=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
flags=(-O2 -static -nostdlib -ffreestanding -fno-stack-protector -fno-pie -no-pie
       -fno-asynchronous-unwind-tables)
"$cc" "${flags[@]}" -o "$tmp/getpid64" "$src"
progs=(getpid64)
if "$cc" -m32 "${flags[@]}" -o "$tmp/getpid32" "$src" 2>/dev/null; then
  progs+=(getpid32)
fi

calc() { awk "BEGIN { printf \"%.3f\", $1 }"; }
# one run: prints "<wall seconds> <syscalls> <instructions>" from --stats;
# the best (shortest) of ROUNDS runs
run() {
  local best="" line
  for ((r = 0; r < rounds; r++)); do
    "$es" run --stats "$@" >"$tmp/out" 2>"$tmp/err" || { head -1 "$tmp/err"; return 1; }
    grep -q "^$n getpid calls\$" "$tmp/out" || { echo "unexpected output: $(head -c 200 "$tmp/out")"; return 1; }
    line=$(sed -n 's/.*stats: *\([0-9]*\) instructions retired.*, \([0-9.]*\) s wall.*, \([0-9]*\) syscalls$/\2 \3 \1/p' "$tmp/err" | head -1)
    [ -n "$line" ] || { echo "no stats line: $(head -1 "$tmp/err")"; return 1; }
    if [ -z "$best" ] || awk "BEGIN { exit !(${line%% *} < ${best%% *}) }"; then best=$line; fi
  done
  echo "$best"
}

printf "workload: getpid x %s, best of %s runs, simulated syscalls per host second\n" "$n" "$rounds"
printf "%-10s %-8s %10s %14s %12s %10s\n" program mode "wall s" "syscalls/s" "insns/call" slowdown
for p in "${progs[@]}"; do
  direct_t=""
  for mode in direct v4.16 v4.17; do
    if [ $mode = direct ]; then opt=(--direct); else opt=(--convention "$mode"); fi
    if ! res=$(run "${opt[@]}" "$tmp/$p" "$n"); then
      printf "%-10s %-8s failed: %s\n" "$p" "$mode" "$res"
      continue
    fi
    read -r t calls insns <<<"$res"
    rate=$(calc "$calls / $t")
    per=$(calc "$insns / $calls")
    if [ $mode = direct ]; then
      direct_t=$t; slow="1.00x"
    elif [ -n "$direct_t" ]; then
      slow="$(awk "BEGIN { printf \"%.1f\", $t / $direct_t }")x"
    else
      slow="-"
    fi
    printf "%-10s %-8s %10.3f %14.0f %12.1f %10s\n" "$p" "$mode" "$t" "$rate" "$per" "$slow"
  done
done
