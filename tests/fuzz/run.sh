#!/bin/sh
# run.sh BUILD_DIR SECONDS_PER_TARGET - runs every libFuzzer target of
# BUILD_DIR/fuzz (the `fuzz` preset) for a fixed time, starting from a copy
# of its seed corpus (tests/fuzz/corpus/<target>), in a temporary directory
# of its own.  Prints executions and coverage per target (libFuzzer's
# final stats); fails when any target crashed, leaked, timed out (one input
# over 10 s) or ran out of memory, leaving the input that did it in
# BUILD_DIR/fuzz/artifacts/.
#
# CI: tests/fuzz/run.sh build/fuzz 20  (8 targets, about 3 minutes)
set -u
build=${1:?usage: run.sh BUILD_DIR SECONDS_PER_TARGET}
secs=${2:?usage: run.sh BUILD_DIR SECONDS_PER_TARGET}
here=$(cd "$(dirname "$0")" && pwd)
bins=$(cd "$build/fuzz" 2>/dev/null && pwd) || { echo "run.sh: no $build/fuzz (build the fuzz preset)" >&2; exit 2; }
arts=$bins/artifacts
mkdir -p "$arts"
work=$(mktemp -d "${TMPDIR:-/tmp}/es-fuzz-run-XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
passed=0 failed=0
printf '%-12s %10s %8s %8s %s\n' target execs cov ft result
for bin in "$bins"/fuzz_*; do
  [ -x "$bin" ] || continue
  t=${bin##*/fuzz_}
  mkdir -p "$work/$t/corpus"
  [ -d "$here/corpus/$t" ] && cp "$here/corpus/$t"/* "$work/$t/corpus/" 2>/dev/null
  # the target's cwd is its own directory: nothing it does lands elsewhere
  (cd "$work/$t" && TMPDIR="$work/$t" "$bin" -max_total_time="$secs" -timeout=10 \
      -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$work/$t/" corpus \
      >"$work/$t/log" 2>&1)
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$t/log" | tail -1)
  last=$(grep -E '^#[0-9]+.*cov: ' "$work/$t/log" | tail -1)
  cov=$(printf '%s' "$last" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
  ft=$(printf '%s' "$last" | sed -n 's/.*ft: \([0-9]*\).*/\1/p')
  found=$(ls "$work/$t" | grep -E '^(crash|leak|timeout|oom|slow-unit)-' || true)
  if [ $rc -ne 0 ] || [ -n "$found" ]; then
    failed=$((failed + 1))
    result=FAIL
    for f in $found; do cp "$work/$t/$f" "$arts/${t}-$f"; done
    cp "$work/$t/log" "$arts/$t.log"
  else
    passed=$((passed + 1))
    result=ok
  fi
  printf '%-12s %10s %8s %8s %s\n' "$t" "${execs:-?}" "${cov:-?}" "${ft:-?}" "$result"
  if [ "$result" = FAIL ]; then
    grep -E 'ERROR|SUMMARY|fuzz_[a-z_]+:' "$work/$t/log" | head -5 | sed 's/^/    /'
    echo "    input and log in $arts/"
  fi
done
echo "fuzz: $passed passed, $failed failed"
[ $failed -eq 0 ]
