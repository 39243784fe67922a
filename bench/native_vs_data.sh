#!/usr/bin/env bash
# Host measurement vs the reference data: measures the first N blocks of a
# "hex<TAB>cycles" file with `entrysim measure-native` and prints how well the
# host's cycles agree with the file's (MAPE, fraction within 10%, Kendall's
# tau), plus how many blocks errored or were noisy.  Not a test: the numbers
# depend on the host CPU and on how loaded it is (bench/README-native.md).
#   usage: bench/native_vs_data.sh [DATA.tsv] [N] [ENTRYSIM]
#   env:   REPS (runs per length, default 25), OUT (keep the per-block table)
set -euo pipefail
data=${1:-/work/shared/data/zen4-blocks-public.tsv}
n=${2:-200}
es=${3:-${ENTRYSIM:-build/entrysim}}
reps=${REPS:-25}
[ -x "$es" ] || { echo "no entrysim at '$es' (give it as the third argument)"; exit 1; }
[ -r "$data" ] || { echo "cannot read $data"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Only hex and cycles: a host set's third column (the binary) is not needed here.
grep -v '^#' "$data" | awk -F'\t' -v OFS='\t' 'NF >= 2 && $1 != "" { print $1, $2 }' | head -n "$n" > "$tmp/ref.tsv"
cut -f1 "$tmp/ref.tsv" > "$tmp/blocks.txt"
"$es" measure-native --file "$tmp/blocks.txt" --reps "$reps" > "$tmp/native.tsv"
# joined: hex, reference, native (or "error: ..."), noisy flag
paste "$tmp/ref.tsv" <(cut -f2- "$tmp/native.tsv") > "$tmp/joined.tsv"
[ -n "${OUT:-}" ] && cp "$tmp/joined.tsv" "$OUT"

echo "host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')," \
     "family $(grep -m1 'cpu family' /proc/cpuinfo | awk '{print $NF}')" \
     "model $(grep -m1 '^model[[:space:]]' /proc/cpuinfo | awk '{print $NF}');" \
     "load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "data: $data (first $(wc -l < "$tmp/ref.tsv") blocks), reps $reps"
awk -F'\t' '
  $3 ~ /^error/ { err++; next }
  {
    ref = $2 + 0; nat = $3 + 0
    if (ref <= 0) next
    k++; R[k] = ref; N[k] = nat
    ape = (nat > ref ? nat - ref : ref - nat) / ref
    sum += ape
    if (ape <= 0.10) w10++
    if (ape <= 0.02) w2++
    if ($4 == "noisy") noisy++
    if (nat < ref) lower++
  }
  END {
    if (k == 0) { printf "no block measured (%d errors)\n", err; exit 1 }
    conc = 0; disc = 0
    for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) {
      s = (R[i] - R[j]) * (N[i] - N[j])
      if (s > 0) conc++; else if (s < 0) disc++
    }
    printf "measured %d, errors %d, noisy %d\n", k, err + 0, noisy + 0
    printf "MAPE vs data: %.1f%%\n", 100 * sum / k
    printf "within 10%%: %.1f%%   within 2%%: %.1f%%\n", 100 * w10 / k, 100 * w2 / k
    printf "Kendall tau: %.3f   host lower than data on %.1f%% of blocks\n",
           (conc + disc) ? (conc - disc) / (conc + disc) : 0, 100 * lower / k
  }' "$tmp/joined.tsv"
