#!/usr/bin/env python3
"""tally.py ENTRY DIR COMMIT... - the JSON table verify.sh prints.

DIR holds step-0.json ... step-N.json, the output of
`entrysim exposure --all --json --entry ENTRY --patches LIST` for step 0
(no commit) to step N (all N commits).  For each step this prints the
kernel entrysim built and the exposed registers counted per probe point
and in total, over every row of the entry's table.
"""
import json
import os
import sys

POINTS = ("dispatch", "table_target", "body")


def count_exposed(objects):
    """objects: the list `exposure --all --json` printed (one object per
    syscall).  Returns {point: number of exposed registers at that probe,
    summed over every syscall} for the three points."""
    counts = {p: 0 for p in POINTS}
    for obj in objects:
        for probe in obj["probes"]:
            if probe["point"] in counts:
                counts[probe["point"]] += len(probe["exposed"])
    return counts


def kernel_name(objects):
    """The kernel the step ran: the "convention" field (the same in every
    object of one run)."""
    return objects[0]["convention"] if objects else ""


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: tally.py ENTRY DIR COMMIT...")
    entry, d, commits = sys.argv[1], sys.argv[2], sys.argv[3:]
    steps = []
    for k in range(len(commits) + 1):
        with open(os.path.join(d, f"step-{k}.json")) as f:
            objects = json.load(f)
        counts = count_exposed(objects)
        steps.append(dict(step=k,
                          commit=commits[k - 1] if k else "",
                          patches=",".join(commits[:k]),
                          kernel=kernel_name(objects),
                          dispatch=counts["dispatch"],
                          table_target=counts["table_target"],
                          body=counts["body"],
                          total=sum(counts.values())))
    print("{\"entry\": %s, \"steps\": [" % json.dumps(entry))
    print(",\n".join("  " + json.dumps(s) for s in steps))
    print("]}")


if __name__ == "__main__":
    main()
