#!/usr/bin/env bash
# Simulation speed with the traces of `entrysim run` on (docs/TIMING.md,
# "Pipeline and timeline traces"): the compute benchmark (sieve_hash) under
# --timing alone, with --trace-json, with --pipetrace (its default 2000
# instructions, then the tracer detaches), and with --pipetrace recording
# PT_INSNS instructions; runs interleaved so all see the same host load,
# best of N each.  MIPS = guest instructions / wall seconds.
#   usage: bench/traces_mips.sh [BUILD_DIR] [ROUNDS (default 1)] [N (default 3)]
#   env:   PT_INSNS (default 200000)
set -euo pipefail
build=${1:-build/release}
rounds=${2:-1}
n=${3:-3}
pt=${PT_INSNS:-200000}
es=$build/entrysim
prog=$build/bench/sieve_hash
[ -x "$es" ] || { echo "traces_mips: no entrysim at $es" >&2; exit 2; }
[ -x "$prog" ] || { echo "traces_mips: missing $prog (bench target; needs musl-gcc)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
calc() { awk "BEGIN { printf \"%.3f\", $1 }"; }
t() {
  local s e; s=$(date +%s.%N)
  "$@" > /dev/null 2> "$tmp/err" || { echo "traces_mips: '$*' failed" >&2; tail -3 "$tmp/err" >&2; exit 1; }
  e=$(date +%s.%N); calc "$e - $s"
}
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (b == "" || a + 0 < b + 0) ? a : b }'; }
names=(timing trace-json pipetrace-2000 "pipetrace-$pt")
declare -A best
for i in $(seq 1 "$n"); do
  best[timing]=$(min "$(t "$es" run --timing "$prog" "$rounds")" "${best[timing]:-}")
  best[trace-json]=$(min "$(t "$es" run --trace-json "$tmp/t.json" "$prog" "$rounds")" "${best[trace-json]:-}")
  best[pipetrace-2000]=$(min "$(t "$es" run --pipetrace "$tmp/a.k" "$prog" "$rounds")" "${best[pipetrace-2000]:-}")
  best[pipetrace-$pt]=$(min "$(t "$es" run --pipetrace "$tmp/b.k" --pipetrace-insns "$pt" "$prog" "$rounds")" "${best[pipetrace-$pt]:-}")
done
insns=$("$es" run --stats "$prog" "$rounds" 2>&1 >/dev/null | sed -n 's/.*stats: *\([0-9]*\) instructions retired.*/\1/p' | head -1)
echo "workload: sieve_hash $rounds rounds, $insns guest instructions; best of $n interleaved runs;" \
     "load average $(cut -d' ' -f1-3 /proc/loadavg); pipetrace file $(wc -c < "$tmp/b.k") bytes for $pt instructions"
for k in "${names[@]}"; do
  printf "%-22s %8.3f s %9s MIPS  %.2fx timing alone\n" "$k" "${best[$k]}" \
    "$(calc "$insns / ${best[$k]} / 1000000")" "$(calc "${best[$k]} / ${best[timing]}")"
done
