#!/usr/bin/env bash
# Processes: the cost of the work issue 14 added, measured in this one
# script against the same static glibc program run natively.
#   getpid N     the per-call floor: native, --direct (host services called
#                from the instruction), and the modeled kernel (v4.16, v4.17)
#   pingpong N   one-byte round trips between a parent and its child over two
#                pipes: two blocking reads and two context switches each
#   forkexec N   fork, execve of itself, wait: address-space copy, a new
#                kernel stack, ret_from_fork, loading an ELF
# (bench/workloads/procbench.c).  Each figure is operations per host second
# from the whole process's wall time (loading included, the same for both
# sides), the best of ROUNDS runs; "of native" is the ratio to the native
# run of the same line.
#   usage: bench/procs.sh [BUILD_DIR] [ROUNDS] [SCALE]
# SCALE multiplies the operation counts (default 1: a few seconds in all).
set -euo pipefail
build=${1:-build/release}
rounds=${2:-3}
scale=${3:-1}
es=$build/entrysim
src=$(cd "$(dirname "$0")" && pwd)/workloads/procbench.c
[ -x "$es" ] || { echo "missing $es (build first)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"${CC:-cc}" -O2 -static -o "$tmp/procbench" "$src"

calc() { awk "BEGIN { printf \"%.3f\", $1 }"; }
now() { date +%s%N; }
# best wall seconds of ROUNDS runs of "$@"; fails unless it prints "<mode> <n> ok"
best() {
  local mode=$1 n=$2 b="" t0 t1 s
  shift 2
  for ((r = 0; r < rounds; r++)); do
    t0=$(now)
    "$@" >"$tmp/out" 2>"$tmp/err" || { echo "exit $?: $(head -1 "$tmp/err")"; return 1; }
    t1=$(now)
    grep -qx "$mode $n ok" "$tmp/out" || { echo "unexpected output: $(head -c 200 "$tmp/out")"; return 1; }
    s=$(calc "($t1 - $t0) / 1e9")
    if [ -z "$b" ] || awk "BEGIN { exit !($s < $b) }"; then b=$s; fi
  done
  echo "$b"
}

printf "procbench (static glibc), best of %s runs, operations per host second\n" "$rounds"
printf "%-9s %8s %-9s %10s %14s %10s\n" workload n mode "wall s" "ops/s" "of native"
for w in getpid:$((200000 * scale)) pingpong:$((20000 * scale)) forkexec:$((300 * scale)); do
  mode=${w%%:*} n=${w##*:}
  modes=(native)
  [ "$mode" = getpid ] && modes+=(direct) # --direct has no kernel to switch tasks
  modes+=(v4.16 v4.17)
  native_rate=""
  for k in "${modes[@]}"; do
    case $k in
      native) cmd=("$tmp/procbench") ;;
      direct) cmd=("$es" run --direct --root=/ -- "$tmp/procbench") ;;
      *) cmd=("$es" run --convention "$k" --root=/ -- "$tmp/procbench") ;;
    esac
    if ! t=$(best "$mode" "$n" "${cmd[@]}" "$mode" "$n"); then
      printf "%-9s %8s %-9s failed: %s\n" "$mode" "$n" "$k" "$t"
      continue
    fi
    rate=$(calc "$n / $t")
    [ "$k" = native ] && native_rate=$rate
    rel=$([ -n "$native_rate" ] && calc "$rate / $native_rate" || echo -)
    printf "%-9s %8s %-9s %10s %14.0f %10s\n" "$mode" "$n" "$k" "$t" "$rate" "$rel"
  done
done
