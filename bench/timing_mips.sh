#!/usr/bin/env bash
# Simulation speed with the cycle model on: runs the compute benchmark
# (bench/workloads/sieve_hash.c) under `entrysim run` in functional mode and
# with `--timing --uarch U` (the full model: core, caches, predictor and the
# per-phase report), same binary, same build, runs interleaved
# (functional, timed, functional, timed...) so both see the same host load,
# best of N each; and with --speculate (wrong-path windows after every
# mispredicted conditional branch, timing/speculate.c) in the same rounds.
# Prints the three MIPS, the slowdown of the timing model and the cost of
# speculation against plain --timing.
# The instruction count is the one entrysim retires (--stats); both modes
# must print the same guest output as a native run.
# Issue 4's target: >= 20 MIPS with timing on.
#   usage: bench/timing_mips.sh [BUILD_DIR] [ROUNDS (default 5: ~170M instructions)] [N (default 5)]
#   env:   UARCH (default znver4)
set -euo pipefail
build=${1:-build/release}
rounds=${2:-5}
n=${3:-5}
uarch=${UARCH:-znver4}
prog=$build/bench/sieve_hash
es=$build/entrysim
[ -x "$es" ] || { echo "timing_mips: no entrysim at $es" >&2; exit 2; }
[ -x "$prog" ] || { echo "timing_mips: missing $prog (bench target; needs musl-gcc)" >&2; exit 2; }
case $rounds$n in *[!0-9]*) echo "timing_mips: ROUNDS and N must be numbers" >&2; exit 2;; esac
[ "$n" -ge 1 ] || { echo "timing_mips: N must be >= 1" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
calc() { awk "BEGIN { printf \"%.3f\", $1 }"; }
# t OUTPREFIX CMD...: wall seconds of CMD; its stdout/stderr kept in OUTPREFIX.{out,err}.
t() {
  local out=$1 s e; shift
  s=$(date +%s.%N)
  if ! "$@" > "$out.out" 2> "$out.err"; then
    echo "timing_mips: '$*' failed:" >&2; tail -3 "$out.err" >&2; exit 1
  fi
  e=$(date +%s.%N); calc "$e - $s"
}
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (b == "" || a + 0 < b + 0) ? a : b }'; }

"$prog" "$rounds" > "$tmp/native.out"
best_f="" best_t="" best_s=""
for i in $(seq 1 "$n"); do
  tf=$(t "$tmp/f" "$es" run --stats "$prog" "$rounds")
  tt=$(t "$tmp/t" "$es" run --stats --timing --uarch "$uarch" "$prog" "$rounds")
  ts=$(t "$tmp/s" "$es" run --stats --speculate --uarch "$uarch" "$prog" "$rounds")
  cmp -s "$tmp/f.out" "$tmp/native.out" || { echo "timing_mips: functional output differs from native" >&2; exit 1; }
  cmp -s "$tmp/t.out" "$tmp/native.out" || { echo "timing_mips: --timing output differs from native" >&2; exit 1; }
  cmp -s "$tmp/s.out" "$tmp/native.out" || { echo "timing_mips: --speculate output differs from native" >&2; exit 1; }
  best_f=$(min "$tf" "$best_f"); best_t=$(min "$tt" "$best_t"); best_s=$(min "$ts" "$best_s")
done
insns() { sed -n 's/.*stats: *\([0-9]*\) instructions retired.*/\1/p' "$1" | head -1; }
in_f=$(insns "$tmp/f.err"); in_t=$(insns "$tmp/t.err")
[ -n "$in_f" ] || { echo "timing_mips: no instruction count in --stats output" >&2; exit 1; }
[ "$in_f" = "$in_t" ] || { echo "timing_mips: --timing retired $in_t instructions, functional $in_f" >&2; exit 1; }

mips() { calc "$in_f / $1 / 1000000"; }
echo "workload: sieve_hash $rounds rounds, $in_f guest instructions; best of $n interleaved runs;" \
     "load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-22s %8.3f s %9s MIPS\n" functional "$best_f" "$(mips "$best_f")"
printf "%-22s %8.3f s %9s MIPS\n" "timing ($uarch)" "$best_t" "$(mips "$best_t")"
printf "%-22s %8.3f s %9s MIPS\n" "speculate ($uarch)" "$best_s" "$(mips "$best_s")"
printf "timing / functional time: %.2fx   (target: >= 20 MIPS with timing on)\n" "$(calc "$best_t / $best_f")"
printf "speculate / timing time: %.2fx\n" "$(calc "$best_s / $best_t")"
spec=$(grep -m1 'speculation:' "$tmp/s.err" | sed 's/^ *//' || true)
[ -n "$spec" ] && echo "model's report: $spec"
cyc=$(grep -m1 -E 'cycles [0-9]+ +IPC' "$tmp/t.err" | sed 's/^ *//' || true)
[ -n "$cyc" ] && echo "model's report: $cyc"
exit 0
