#!/usr/bin/env bash
# Core speed (issue 18), all figures from this one run so they share the
# host's load: the compute workload bench/workloads/sieve_hash.c natively,
# under qemu-x86_64 (a JIT, when installed) and under entrysim in functional
# mode and with `--timing`, then getpid through the modeled kernel (v4.17)
# and --direct.  Guest MIPS use the instruction count entrysim retires (same
# static binary, same input); each figure is the best of N runs, the runs
# interleaved.  Prints MIPS, ratios to native and to qemu, and getpid/s.
#   usage: bench/speed.sh [BUILD_DIR] [ROUNDS (default 17: ~582M insns)] [N (default 3)]
#   env:   TROUNDS (sieve rounds for --timing, default 5), GETPIDS (default 300000),
#          UARCH (default znver4)
set -euo pipefail
build=${1:-build/release}
rounds=${2:-17}
n=${3:-3}
trounds=${TROUNDS:-5}
calls=${GETPIDS:-300000}
uarch=${UARCH:-znver4}
es=$build/entrysim
prog=$build/bench/sieve_hash
[ -x "$es" ] || { echo "speed: no entrysim at $es" >&2; exit 2; }
[ -x "$prog" ] || { echo "speed: missing $prog (bench target; needs musl-gcc)" >&2; exit 2; }
case $rounds$n$trounds$calls in *[!0-9]*) echo "speed: ROUNDS, N, TROUNDS, GETPIDS are numbers" >&2; exit 2;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

me=speed
. "$(dirname "$0")/timed.sh"
same() { cmp -s "$tmp/$1.out" "$tmp/native.out" || { echo "speed: $1 output differs from native" >&2; exit 1; }; }

qemu=$(command -v qemu-x86_64 || true)
best_n="" best_q="" best_f="" best_t=""
for i in $(seq 1 "$n"); do
  best_n=$(min "$(t native "$prog" "$rounds")" "$best_n")
  best_f=$(min "$(t func "$es" run --stats "$prog" "$rounds")" "$best_f"); same func
  if [ -n "$qemu" ]; then best_q=$(min "$(t qemu "$qemu" "$prog" "$rounds")" "$best_q"); same qemu; fi
done
"$prog" "$trounds" >"$tmp/native.out"
best_t=$(t timing "$es" run --stats --timing --uarch "$uarch" "$prog" "$trounds"); same timing
"$prog" "$trounds" >"$tmp/native.out"
best_ft=$(t functr "$es" run --stats "$prog" "$trounds"); same functr
in_f=$(insns func); in_t=$(insns timing)
[ -n "$in_f" ] && [ -n "$in_t" ] || { echo "speed: no instruction count in --stats output" >&2; exit 1; }

mips() { calc "$1 / $2 / 1000000"; }
echo "sieve_hash $rounds rounds, $in_f guest instructions, best of $n interleaved runs;" \
     "load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-24s %8.3f s %9s MIPS\n" native "$best_n" "$(mips "$in_f" "$best_n")"
[ -n "$qemu" ] && printf "%-24s %8.3f s %9s MIPS\n" qemu-x86_64 "$best_q" "$(mips "$in_f" "$best_q")"
printf "%-24s %8.3f s %9s MIPS\n" "entrysim" "$best_f" "$(mips "$in_f" "$best_f")"
printf "%-24s %8.3f s %9s MIPS  (%s rounds, %s insns; functional on the same: %s MIPS)\n" \
  "entrysim --timing $uarch" "$best_t" "$(mips "$in_t" "$best_t")" "$trounds" "$in_t" "$(mips "$in_t" "$best_ft")"
printf "entrysim / native MIPS: %s\n" "$(calc "$best_n / $best_f")"
[ -n "$qemu" ] && printf "entrysim / qemu MIPS: %s   (target >= 0.15)\n" "$(calc "$best_q / $best_f")"
printf "timing / functional MIPS: %s\n" "$(calc "$best_ft / $best_t")"

# getpid through the modeled kernel and --direct: syscalls per host second
# from the run's own wall time in --stats (loading excluded)
src=$(cd "$(dirname "$0")" && pwd)/workloads/getpid_loop.c
${CC:-cc} -O2 -static -nostdlib -ffreestanding -fno-stack-protector -fno-pie -no-pie \
  -fno-asynchronous-unwind-tables -o "$tmp/getpid64" "$src"
for mode in v4.17 direct; do
  if [ $mode = direct ]; then opt=(--direct); else opt=(--convention "$mode"); fi
  best=""
  for i in $(seq 1 "$n"); do
    "$es" run --stats "${opt[@]}" "$tmp/getpid64" "$calls" >"$tmp/g.out" 2>"$tmp/g.err"
    grep -q "^$calls getpid calls\$" "$tmp/g.out" || { echo "speed: getpid output: $(head -c 200 "$tmp/g.out")" >&2; exit 1; }
    line=$(sed -n 's/.*stats: *\([0-9]*\) instructions retired.*, \([0-9.]*\) s wall.*, \([0-9]*\) syscalls$/\2 \3 \1/p' "$tmp/g.err" | head -1)
    [ -n "$line" ] || { echo "speed: no stats line: $(head -1 "$tmp/g.err")" >&2; exit 1; }
    if [ -z "$best" ] || awk "BEGIN { exit !(${line%% *} < ${best%% *}) }"; then best=$line; fi
  done
  read -r s c ins <<<"$best"
  printf "getpid %-7s %12.0f calls/s  %6.1f insns/call  %8s MIPS\n" "$mode" "$(calc "$c / $s")" \
    "$(calc "$ins / $c")" "$(mips "$ins" "$s")"
done
exit 0
