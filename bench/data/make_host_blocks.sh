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
#   env:   PASSES (default 3), AGREE_PCT (default 2), REPS (default 25)
set -euo pipefail
es=${1:?usage: make_host_blocks.sh ENTRYSIM [COUNT] [SEED] > OUT.tsv}
count=${2:-340}
seed=${3:-entrysim}
passes=${PASSES:-3}
agree=${AGREE_PCT:-2}
reps=${REPS:-25}
here=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$es" ] || { echo "make_host_blocks: no entrysim at '$es'" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$here/sample_blocks.py" --count "$count" --seed "$seed" > "$tmp/blocks.txt"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for p in $(seq 1 "$passes"); do
  "$es" measure-native --file "$tmp/blocks.txt" --reps "$reps" > "$tmp/pass$p.tsv"
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

fam=$(grep -m1 'cpu family' /proc/cpuinfo | awk '{print $NF}')
model=$(grep -m1 '^model[[:space:]]' /proc/cpuinfo | awk '{print $NF}')
name=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')

# One line per block: hex, then per pass "value" or "x" (error/noisy).
paste "$tmp"/pass*.tsv | awk -F'\t' -v passes="$passes" -v agree="$agree" \
    -v hdr="$tmp/stats" '
  {
    hex = $1; n = 0; i = 1
    # Each pass contributes 2 or 3 columns (hex, value, [noisy]).
    for (p = 1; p <= passes; p++) {
      if ($i != hex) { print "make_host_blocks: passes out of step at " hex > "/dev/stderr"; exit 2 }
      v = $(i + 1); bad = (v ~ /^error/)
      if ($(i + 2) == "noisy") { bad = 1; i += 3 } else i += 2
      if (!bad) val[++n] = v + 0
    }
    total++
    best = -1
    for (a = 1; a <= n; a++) for (b = a + 1; b <= n; b++) {
      lo = val[a] < val[b] ? val[a] : val[b]; hi = val[a] + val[b] - lo
      if (lo <= 0) continue
      d = (hi - lo) / lo * 100
      if (best < 0 || d < best) { best = d; keep = lo }
    }
    if (n == 0) failed++
    else if (best < 0 || best > agree) disagree++
    else { kept++; printf "%s\t%.3f\n", hex, keep }
  }
  END { printf "%d %d %d %d\n", total, kept + 0, failed + 0, disagree + 0 > hdr }
' > "$tmp/kept.tsv"
read -r total kept failed disagree < "$tmp/stats"

cat <<EOF
# Host block set: basic blocks from this machine's Debian binaries
# (bench/sample_blocks.py --count $count --seed $seed; perl, libperl, git,
# libstdc++, liblzma, libbz2; the public zen4 set's blocks excluded).
# Host: $name, family $fam model $model (AMD Zen 5), $(nproc) vCPUs, shared VM.
# Date: $(date -u '+%Y-%m-%d %H:%M UTC'); load average $load_before before, $load_after after.
# Method: entrysim measure-native (BHive's; bench/README-native.md), reps $reps,
# $passes passes; a block is kept when two passes agree within $agree% and
# neither flagged it noisy; value = lower of the closest pair.
# $total sampled, $kept kept, $failed failed or noisy in every pass, $disagree
# dropped because no two passes agreed.
# NOT ground truth for znver4: a Zen 5 set, for a future znver5 calibration
# and as a check of the method.  Columns: hex<TAB>core cycles per iteration.
EOF
cat "$tmp/kept.tsv"
