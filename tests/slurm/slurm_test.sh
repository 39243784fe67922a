#!/usr/bin/env bash
# slurm_test.sh ENTRYSIM FAKE_RUNNER WORKLOADS - `entrysim bench --slurm`
# against a real Slurm (Debian's slurm-wlm and munge; no mock): a one-node
# cluster on localhost (cluster.sh), a 24-cell matrix on the fake runner
# and a 2-cell matrix on the real model submitted as job arrays, one array
# task cancelled on purpose while its cell runs, the status then, the
# resubmission (only the cancelled shard goes again), and the merged
# results.csv / results.json / chart.svg compared byte for byte with the
# same matrices run locally.  Also: a rejected submission (a partition that
# does not exist) and an unwritable output folder exit 2 with one line.
# Exit 77 (skipped) when it cannot run: not root, or Slurm or munge missing.
set -euo pipefail
ENTRYSIM=$1 RUNNER=$2 WORKLOADS=$3
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d /tmp/es_slurm_test.XXXXXX)
t0=$(date +%s)
cleanup() {
    "$HERE/cluster.sh" stop "$T/cluster" || true
    if [ "${ok:-0}" = 1 ]; then rm -rf "$T"; else echo "kept $T for a look" >&2; fi
}
fail() { echo "FAIL: $*" >&2; exit 1; }
log() { echo "[$(($(date +%s) - t0)) s] $*"; }

set +e
conf=$("$HERE/cluster.sh" start "$T/cluster")
rc=$?
set -e
if [ $rc -eq 77 ]; then rm -rf "$T"; exit 77; fi
trap cleanup EXIT
[ $rc -eq 0 ] || fail "the test cluster did not start"
eval "$conf"
log "cluster up: $SLURM_CONF"

# A job's state while Slurm remembers it (MinJobAge=600), "" after.
job_state() { scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | head -1; }
# Waits until a job (and, for an array, all its tasks) has left the queue.
wait_gone() {
    local i
    for i in $(seq 1 600); do
        [ -z "$(squeue -h -j "$1" 2>/dev/null)" ] && return 0
        sleep 0.25
    done
    fail "job $1 still queued after 150 s"
}

# --- the matrices: 4 kernels x 2 entries x 3 syscalls = 24 cells on the fake
# runner; 2 real cells (sysloop64 getpid, 2 conventions)
cat >"$T/fake24.toml" <<'EOF'
[matrix]
kernels = ["v4.16", "dfe6450", "dfe6450,fa69714", "v4.17"]
entries = ["syscall64", "int80"]
syscalls = ["getpid", "getppid", "time"]
iterations = 50
EOF
cat >"$T/real2.toml" <<'EOF'
[matrix]
kernels = ["v4.16", "v4.17"]
entries = "syscall64"
syscalls = "getpid"
iterations = 200
EOF
FAKE=(--runner "$RUNNER" --workloads "$WORKLOADS")
OUT=$T/out-fake REAL=$T/out-real

# --- bad input first: each one clear line, exit 2
set +e
err=$("$ENTRYSIM" bench --matrix "$T/fake24.toml" "${FAKE[@]}" --slurm --partition nope \
      --out "$T/out-bad" 2>&1 >/dev/null); rc=$?
set -e
[ $rc -eq 2 ] || fail "bad partition: exit $rc, not 2"
[ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || fail "bad partition: not one line: $err"
grep -q "sbatch rejected the array job: .*[Ii]nvalid partition" <<<"$err" ||
    fail "bad partition: $err"
set +e
err=$("$ENTRYSIM" bench --matrix "$T/fake24.toml" "${FAKE[@]}" --slurm \
      --out /proc/es-unwritable 2>&1 >/dev/null); rc=$?
set -e
[ $rc -eq 2 ] && [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] && grep -q "cannot create" <<<"$err" ||
    fail "unwritable folder: exit $rc: $err"
log "bad partition and unwritable folder: exit 2, one line each"

# --- submission, with one cell made to hang (its report path is an argument
# of its runner only) so that its task is running when cancelled
key=$("$ENTRYSIM" bench --matrix "$T/fake24.toml" "${FAKE[@]}" --list | sed -n 10p | cut -d' ' -f1)
[ ${#key} -eq 16 ] || fail "no key from --list"
FAKE_RUNNER_HANG=$OUT/cells/$key.json \
    "$ENTRYSIM" bench --matrix "$T/fake24.toml" "${FAKE[@]}" --slurm --shards 8 \
    --time 5 --out "$OUT" >"$T/submit1.out"
"$ENTRYSIM" bench --matrix "$T/real2.toml" --workloads "$WORKLOADS" --slurm \
    --out "$REAL" >"$T/submit-real.out"
array=$(sed -n 's/^array_job=//p' "$T/submit1.out")
merge=$(sed -n 's/^merge_job=//p' "$T/submit1.out")
[ -n "$array" ] && [ -n "$merge" ] || fail "no job ids: $(cat "$T/submit1.out")"
log "submitted array $array (8 tasks) and merge $merge"

# the hanging cell's task: wait for its cell to start, then cancel that task
for i in $(seq 1 400); do
    [ -e "$OUT/cells/$key.out" ] && break
    sleep 0.25
done
[ -e "$OUT/cells/$key.out" ] || fail "the hanging cell never started"
# cell 10 (runnable cell 9 from 0) is in shard 9 % 8 + 1 = 2: cancelling
# another task would let the hang end (30 s) in a failed cell, caught below
task=2
scancel "${array}_${task}"
log "cancelled task ${array}_$task"
wait_gone "$merge"
st=$(job_state "${array}_${task}")
[ "$st" = CANCELLED ] || fail "task ${array}_$task is $st, not CANCELLED"
[ -e "$OUT/cells/$key.tsv" ] && fail "the cancelled cell has a result"
ls "$OUT"/cells/*.tmp >/dev/null 2>&1 && fail "temporary files left"
set +e
"$ENTRYSIM" bench --status "$OUT" >"$T/status1"; rc=$?
set -e
[ $rc -eq 1 ] || fail "status after the cancel: exit $rc"
grep -Eq "24 cells: 2[0-3] done, 0 failed, [1-4] left" "$T/status1" ||
    fail "status after the cancel: $(cat "$T/status1")"
log "after the cancel: $(head -1 "$T/status1")"

# --- resubmission (no hang now): only the cancelled shard runs again
"$ENTRYSIM" bench --matrix "$T/fake24.toml" "${FAKE[@]}" --slurm --shards 8 --out "$OUT" \
    >"$T/submit2.out" 2>"$T/submit2.err"
grep -q "in 1 of 8 shards" "$T/submit2.err" || fail "resubmission: $(cat "$T/submit2.err")"
wait_gone "$(sed -n 's/^merge_job=//p' "$T/submit2.out")"
wait_gone "$(sed -n 's/^merge_job=//p' "$T/submit-real.out")"
"$ENTRYSIM" bench --status "$OUT" | grep -q "24 cells: 24 done, 0 failed, 0 left" ||
    fail "status after the resubmission: $("$ENTRYSIM" bench --status "$OUT")"
"$ENTRYSIM" bench --status "$REAL" | grep -q "2 cells: 2 done" || fail "real cells not done"
log "resubmitted; all cells done"

# --- the merges against local runs of the same matrices
"$ENTRYSIM" bench --matrix "$T/fake24.toml" "${FAKE[@]}" --out "$T/local-fake" 2>/dev/null
"$ENTRYSIM" bench --matrix "$T/real2.toml" --workloads "$WORKLOADS" --out "$T/local-real" 2>/dev/null
for f in results.csv results.json chart.svg; do
    cmp "$OUT/$f" "$T/local-fake/$f" || fail "$f differs from the local run (fake runner)"
    cmp "$REAL/$f" "$T/local-real/$f" || fail "$f differs from the local run (real model)"
done
[ "$(wc -l <"$OUT/results.csv")" -eq 25 ] || fail "results.csv has not 24 rows"
grep -c ',ok,' "$REAL/results.csv" | grep -qx 2 || fail "real cells not ok"
log "merged outputs identical to the local runs"
ok=1
