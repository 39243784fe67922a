#!/usr/bin/env bash
# blockers.sh - one case of guest/c64/blockers.c under `entrysim run` (not
# --deterministic: sleeps really sleep) with the caller's stdin an open pipe
# that never gets data, and checks the exit status, stderr and that the
# run ended within a wall-clock bound.
#
#   blockers.sh ENTRYSIM BLOCKERS CASE STATUS MAX_SECONDS STDERR_RE [RUN OPTIONS...]
#
# CASE "fd0" runs with stdin closed instead; CASE "fifo" gets a FIFO path.
set -u
sim=$1 prog=$2 case=$3 want=$4 max=$5 re=$6
shift 6
tmp=$(mktemp -d)
trap 'exec 3>&-; rm -rf "$tmp"' EXIT
mkfifo "$tmp/stdin" "$tmp/fifo"
exec 3<>"$tmp/stdin" # a writer that never writes: reads of stdin wait
args=("$case")
[ "$case" = fifo ] && args+=(/fifo)
t0=$(date +%s.%N)
if [ "$case" = fd0 ]; then
    "$sim" run "$@" "$prog" "${args[@]}" <&- >"$tmp/out" 2>"$tmp/err"
else
    "$sim" run --root="$tmp" "$@" "$prog" "${args[@]}" <"$tmp/stdin" >"$tmp/out" 2>"$tmp/err"
fi
rc=$?
t1=$(date +%s.%N)
secs=$(echo "$t1 - $t0" | bc)
echo "case $case: exit status $rc after $secs s"
cat "$tmp/out" "$tmp/err"
fail=0
[ "$rc" = "$want" ] || { echo "FAIL: exit status $rc, expected $want"; fail=1; }
[ "$(echo "$secs > $max" | bc)" = 0 ] || { echo "FAIL: took $secs s, more than $max s"; fail=1; }
grep -qE -- "$re" "$tmp/err" "$tmp/out" || { echo "FAIL: output does not match /$re/"; fail=1; }
exit $fail
