#!/usr/bin/env bash
# The getpid table of docs/TIMING.md: getpid's cycles per call by phase for
# each uarch x kernel x mitigation set, from `entrysim run --timing
# --timing-json` on bench/workloads/getpid_loop.c (10000 calls), printed as
# a Markdown table.  Model outputs only; deterministic.
#   usage: bench/getpid_table.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build/release}
es=$build/entrysim
[ -x "$es" ] || { echo "missing $es (build first)" >&2; exit 1; }
src=$(cd "$(dirname "$0")" && pwd)/workloads/getpid_loop.c
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
${CC:-cc} -O2 -static -nostdlib -ffreestanding -fno-stack-protector -fno-pie -no-pie \
  -fno-asynchronous-unwind-tables -o "$tmp/getpid64" "$src"
echo "| uarch | kernel | mitigations | cycles/call | hw_entry | entry_asm | dispatch | stub | body | exit_path | hw_exit |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
while read -r uarch conv mit label; do
  "$es" run --deterministic --timing --uarch "$uarch" --convention "$conv" --mitigations "$mit" \
    --timing-json "$tmp/t.json" "$tmp/getpid64" 10000 >/dev/null 2>&1
  python3 - "$tmp/t.json" "$uarch" "$conv" "$label" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = [r for r in d["per_syscall"] if r["name"] == "getpid" and r["entry"] == "syscall64"]
r = rows[0]
ph = r["phases_per_call"]
f = lambda x: ("%.1f" % x).rstrip("0").rstrip(".")
print("| %s | %s | %s | %.1f | %s |" % (sys.argv[2], sys.argv[3], sys.argv[4], r["cycles_per_call"],
      " | ".join(f(ph[k]) for k in ("hw_entry", "entry_asm", "dispatch", "stub", "body", "exit_path", "hw_exit"))))
PY
done <<'CELLS'
znver4 v4.17 none none
znver4 v4.17 nospec nospec (default)
znver4 v4.17 retpoline retpoline
znver4 v4.17 pti,retpoline pti,retpoline
znver4 v4.17 all all
znver4 v4.16 retpoline retpoline
skylake v4.17 retpoline retpoline
skylake v4.17 pti,retpoline pti,retpoline
skylake v4.17 all all
CELLS
