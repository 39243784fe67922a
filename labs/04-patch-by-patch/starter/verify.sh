#!/usr/bin/env bash
# verify.sh ENTRY [COMMIT...] - walk a list of commits of the 4.17 syscall
# series one at a time, cumulatively, and print what each step does to the
# exposed registers of ENTRY (a JSON table on stdout; Task 2 of the handout).
#
#   ./verify.sh syscall64                      # the series, in its order
#   ./verify.sh int80 6dc936f fa69714          # these commits, in this order
#
# Step 0 is v4.16 (no commit); step k adds the k-th commit to the k-1 before
# it: entrysim exposure --all --json --entry ENTRY --patches C1,...,Ck
set -euo pipefail

if [ $# -lt 1 ]; then
    echo "usage: verify.sh ENTRY [COMMIT...]" >&2
    exit 2
fi
entry=$1
shift
if [ $# -gt 0 ]; then
    commits=("$@")
else
    commits=(dfe6450 1bd21c6 fa69714 7303e30 ebeb8c8 f8781c4 6dc936f)
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

list=""
for k in $(seq 0 ${#commits[@]}); do
    # TODO (Task 2): make $list the first k commits joined by commas: empty
    # at step 0, "dfe6450" at step 1, "dfe6450,1bd21c6" at step 2, ...
    # (${commits[$((k - 1))]} is the commit step k adds.)

    # TODO (Task 2): run entrysim exposure for this step: every row of the
    # entry's table (--all), as JSON, through "$entry", with --patches "$list";
    # its stdout into "$tmp/step-$k.json", its stderr into "$tmp/step-$k.err".
    # Remove the placeholder line below.
    echo '[]' > "$tmp/step-$k.json"
done

python3 "$(dirname "$0")/tally.py" "$entry" "$tmp" "${commits[@]}"
