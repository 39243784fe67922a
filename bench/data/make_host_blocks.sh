#!/usr/bin/env bash
# Regenerates a host block set such as bench/data/host-zen5-blocks.tsv:
# samples blocks from this machine's Debian binaries (bench/sample_blocks.py),
# measures them PASSES times with `entrysim measure-native` (each pass already
# repeats until two measurements agree; bench/README-native.md), and keeps a
# block only when two passes agree within AGREE_PCT and neither flagged it
# noisy or failed.  The value kept is the lower of the closest pair of passes
# (measure-native's own rule, one level up).  Dropped blocks are counted in
# the header, not hidden.  Run it on an idle host (check `uptime`).
#   usage: bench/data/make_host_blocks.sh ENTRYSIM [COUNT] [SEED] > OUT.tsv
#   output: hex<TAB>cycles<TAB>binary lines after a '#' header
#   env:   PASSES (default 3), AGREE_PCT (default 2), REPS (default 25),
#          RETRY (extra passes over disagreeing blocks, default 2),
#          INPUTS (the ELF files to sample, space-separated; default the
#          sampler's perl, libperl, git, libstdc++, liblzma, libbz2),
#          EXCLUDE (block files whose blocks are left out, space-separated;
#          default the sampler's: the public zen4 set)
set -euo pipefail
es=${1:?usage: make_host_blocks.sh ENTRYSIM [COUNT] [SEED] > OUT.tsv}
count=${2:-340}
seed=${3:-entrysim}
passes=${PASSES:-3}
agree=${AGREE_PCT:-2}
reps=${REPS:-25}
retry=${RETRY:-2}
here=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$es" ] || { echo "make_host_blocks: no entrysim at '$es'" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck disable=SC2086 # INPUTS is a list of paths
excl=()
for f in ${EXCLUDE:-}; do excl+=(--exclude "$f"); done
python3 "$here/sample_blocks.py" --count "$count" --seed "$seed" --source "${excl[@]}" ${INPUTS:-} > "$tmp/sources.tsv"
cut -f1 "$tmp/sources.tsv" > "$tmp/blocks.txt"
# pick_agreeing: the kept blocks on stdout, "total kept failed disagree" in $1, the
# blocks without an agreeing pair in $2.  Input: every pass's lines
# (hex<TAB>value[<TAB>noisy] or hex<TAB>error: ...), any number per block.
pick_agreeing() {
  awk -F'\t' -v agree="$agree" -v hdr="$1" -v redo="$2" '
    !($1 in seen) { seen[$1] = 1; order[++nb] = $1 }
    $2 !~ /^error/ && $3 != "noisy" { nv[$1]++; val[$1, nv[$1]] = $2 + 0 }
    END {
      for (k = 1; k <= nb; k++) {
        h = order[k]; n = nv[h] + 0; best = -1
        for (a = 1; a <= n; a++) for (b = a + 1; b <= n; b++) {
          lo = val[h, a] < val[h, b] ? val[h, a] : val[h, b]
          hi = val[h, a] + val[h, b] - lo
          if (lo <= 0) continue
          d = (hi - lo) / lo * 100
          if (best < 0 || d < best) { best = d; keep = lo }
        }
        if (n == 0) failed++
        else if (best < 0 || best > agree) { disagree++; print h > redo }
        else { kept++; printf "%s\t%.3f\n", h, keep }
      }
      printf "%d %d %d %d\n", nb, kept + 0, failed + 0, disagree + 0 > hdr
    }'
}
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for p in $(seq 1 "$passes"); do
  "$es" measure-native --file "$tmp/blocks.txt" --reps "$reps" > "$tmp/pass$p.tsv"
done
# Blocks whose passes disagree (the host is shared: a neighbour's burst
# shifts one pass) are measured again, RETRY more passes of only those.
: > "$tmp/redo.txt"
cat "$tmp"/pass*.tsv | pick_agreeing "$tmp/stats" "$tmp/redo.txt" > /dev/null
for r in $(seq 1 "$retry"); do
  [ -s "$tmp/redo.txt" ] || break
  "$es" measure-native --file "$tmp/redo.txt" --reps "$reps" > "$tmp/retry$r.tsv"
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
retried=$(wc -l < "$tmp/redo.txt")

fam=$(grep -m1 'cpu family' /proc/cpuinfo | awk '{print $NF}')
model=$(grep -m1 '^model[[:space:]]' /proc/cpuinfo | awk '{print $NF}')
name=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')
case $fam in 23) core="AMD Zen/Zen 2";; 25) core="AMD Zen 3/Zen 4";; 26) core="AMD Zen 5";; *) core="see family/model";; esac

# (no retry file when every block agreed: not an error under pipefail)
{ cat "$tmp"/pass*.tsv; cat "$tmp"/retry*.tsv 2>/dev/null || true; } |
  pick_agreeing "$tmp/stats" /dev/null > "$tmp/kept.tsv"
read -r total kept failed disagree < "$tmp/stats"

cat <<EOF
# Host block set: basic blocks from this machine's Debian binaries
# (bench/sample_blocks.py --count $count --seed $seed; ${INPUTS:-perl, libperl, git,
# libstdc++, liblzma, libbz2}; blocks of ${EXCLUDE:-the public zen4 set} excluded).
# Host: $name, family $fam model $model ($core), $(nproc) vCPUs, shared VM.
# Date: $(date -u '+%Y-%m-%d %H:%M UTC'); load average $load_before before, $load_after after.
# Method: entrysim measure-native (BHive's; bench/README-native.md), reps $reps,
# $passes passes, then $retry more over the $retried blocks without an agreeing
# pair; a block is kept when two passes agree within $agree% and neither
# flagged it noisy; value = lower of the closest pair.
# $total sampled, $kept kept, $failed failed or noisy in every pass, $disagree
# dropped because no two passes agreed.
# Ground truth only for this host's core ($core): for a Zen 5 host NOT for
# znver4, but for a future znver5 calibration and as a check of the method.
# Columns: hex<TAB>core cycles per iteration<TAB>binary (the file the sampler took
# the block from: the first of its inputs, in their order, that holds it;
# bench/score_blocks.py splits train/test by it, bench/README-scoring.md).
EOF
# Append each kept block's binary (kept.tsv is in sampling order, a subset).
awk -F'\t' -v OFS='\t' 'NR == FNR { src[$1] = $2; next } { print $1, $2, src[$1] }' \
  "$tmp/sources.tsv" "$tmp/kept.tsv"
