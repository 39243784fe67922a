#!/usr/bin/env bash
# run_guest.sh - one end-to-end check: runs a program under entrysim and
# compares its stdout and exit status with a native run of the same program
# and/or an expected-output file.
#
#   run_guest.sh --sim ENTRYSIM [checks...] [--] PROGRAM [ARGS...]
#
#   --native            run PROGRAM natively too; stdout and status must match
#   --expect FILE       stdout must equal FILE
#   --contains TEXT     stdout must contain TEXT (a fixed string)
#   --status N          exit status must be N
#   --status-range A B  exit status must be in A..B
#   --stderr RE         stderr must match the extended regex RE
#   --one-line-stderr   stderr must be exactly one line
#   --cwd DIR           run (both) in DIR
#   --opt OPTION        pass OPTION to `entrysim run` (repeatable)
#   --raw               pass PROGRAM and ARGS to entrysim itself (no `run`)
#   --kill-after SECS   entrysim must end within SECS seconds (else killed,
#                       status 137, and the check fails)
set -u

sim="" expect="" contains="" status="" smin="" smax="" stderr_re="" cwd="." native=0 raw=0
one_line=0 kill_after=""
opts=()
while [ $# -gt 0 ]; do
    case "$1" in
    --sim) sim=$2; shift 2 ;;
    --native) native=1; shift ;;
    --expect) expect=$2; shift 2 ;;
    --contains) contains=$2; shift 2 ;;
    --status) status=$2; shift 2 ;;
    --status-range) smin=$2; smax=$3; shift 3 ;;
    --stderr) stderr_re=$2; shift 2 ;;
    --one-line-stderr) one_line=1; shift ;;
    --cwd) cwd=$2; shift 2 ;;
    --opt) opts+=("$2"); shift 2 ;;
    --raw) raw=1; shift ;;
    --kill-after) kill_after=$2; shift 2 ;;
    --) shift; break ;;
    -*) echo "run_guest.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
    esac
done
[ -n "$sim" ] || { echo "run_guest.sh: --sim is required" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
say() { echo "FAIL: $*"; fail=1; }

limit=()
[ -n "$kill_after" ] && limit=(timeout -s KILL "$kill_after")
if [ $raw = 1 ]; then
    (cd "$cwd" && "${limit[@]}" "$sim" "$@" </dev/null >"$tmp/out" 2>"$tmp/err")
else
    (cd "$cwd" && "${limit[@]}" "$sim" run --deterministic "${opts[@]}" "$@" </dev/null >"$tmp/out" 2>"$tmp/err")
fi
rc=$?
[ -n "$kill_after" ] && [ $rc = 137 ] && say "still running after $kill_after s"
echo "entrysim exit status: $rc"

if [ $native = 1 ]; then
    (cd "$cwd" && "$@" </dev/null >"$tmp/nout" 2>"$tmp/nerr")
    nrc=$?
    [ "$rc" = "$nrc" ] || say "exit status $rc, native run gave $nrc"
    cmp -s "$tmp/out" "$tmp/nout" || { say "stdout differs from the native run:"; diff "$tmp/nout" "$tmp/out" | head -20; }
fi
if [ -n "$expect" ]; then
    cmp -s "$tmp/out" "$expect" || { say "stdout differs from $expect:"; diff "$expect" "$tmp/out" | head -20; }
fi
if [ -n "$contains" ]; then
    grep -qF -- "$contains" "$tmp/out" || say "stdout lacks: $contains"
fi
if [ -n "$status" ] && [ "$rc" != "$status" ]; then
    say "exit status $rc, expected $status"
fi
if [ -n "$smin" ] && { [ "$rc" -lt "$smin" ] || [ "$rc" -gt "$smax" ]; }; then
    say "exit status $rc, expected $smin..$smax"
fi
if [ -n "$stderr_re" ] && ! grep -qE -- "$stderr_re" "$tmp/err"; then
    say "stderr does not match /$stderr_re/"
fi
if [ $one_line = 1 ] && [ "$(wc -l <"$tmp/err")" != 1 ]; then
    say "stderr is not exactly one line"
fi
if [ $fail = 1 ]; then
    echo "--- stdout (first 20 lines) ---"; head -20 "$tmp/out"
    echo "--- stderr (first 20 lines) ---"; head -20 "$tmp/err"
    exit 1
fi
echo "ok"
exit 0
