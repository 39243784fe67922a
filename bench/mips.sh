#!/usr/bin/env bash
# Guest speed: runs the same static musl workload natively, under
# qemu-x86_64 (a JIT) and under entrysim, in one script, and prints guest
# MIPS and the ratios.  The instruction count is the one entrysim retires
# (same binary, same input, so the same dynamic instruction stream).
#   usage: bench/mips.sh [BUILD_DIR] [ROUNDS]
set -euo pipefail
build=${1:-build/release}
rounds=${2:-40}
prog=$build/bench/sieve_hash
es=$build/entrysim
[ -x "$prog" ] || { echo "missing $prog (needs musl-gcc)"; exit 1; }

calc() { awk "BEGIN { printf \"%.3f\", $1 }"; }
t() { local s e; s=$(date +%s.%N); "$@" >/tmp/es_bench_out.$$ 2>/tmp/es_bench_err.$$; e=$(date +%s.%N); calc "$e - $s"; }

native=$(t "$prog" "$rounds"); ref=$(cat /tmp/es_bench_out.$$)
es_t=$(t "$es" run --stats "$prog" "$rounds"); es_out=$(cat /tmp/es_bench_out.$$)
insns=$(sed -n 's/.*stats: *\([0-9]*\) instructions retired.*/\1/p' /tmp/es_bench_err.$$ | head -1)
[ "$es_out" = "$ref" ] || { echo "entrysim output differs: '$es_out' vs '$ref'"; exit 1; }
obs_t=$(t "$es" run --null-observer "$prog" "$rounds")
if command -v qemu-x86_64 >/dev/null; then
  q_t=$(t qemu-x86_64 "$prog" "$rounds")
else
  q_t=""
fi
rm -f /tmp/es_bench_out.$$ /tmp/es_bench_err.$$
mips() { calc "$insns / $1 / 1000000"; }
printf "workload: sieve_hash %s rounds, %s guest instructions\n" "$rounds" "$insns"
printf "%-12s %8.2f s %10s MIPS\n" native "$native" "$(mips "$native")"
[ -n "$q_t" ] && printf "%-12s %8.2f s %10s MIPS\n" qemu-x86_64 "$q_t" "$(mips "$q_t")"
printf "%-12s %8.2f s %10s MIPS\n" entrysim "$es_t" "$(mips "$es_t")"
printf "%-12s %8.2f s %10s MIPS\n" "entrysim+obs" "$obs_t" "$(mips "$obs_t")"
printf "observer path (a no-op retire hook attached) / plain loop time: %.2fx\n" "$(calc "$obs_t / $es_t")"
printf "entrysim / native time: %.1fx\n" "$(calc "$es_t / $native")"
[ -n "$q_t" ] && printf "entrysim / qemu-x86_64 time: %.2fx\n" "$(calc "$es_t / $q_t")"
exit 0
