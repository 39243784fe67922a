#!/usr/bin/env python3
"""leaks.py SYSCALL ENTRY - which registers are exposed when the kernel's C
code for SYSCALL starts running, entered through ENTRY, under v4.16 and v4.17.

    python3 leaks.py read syscall64

must print ONE JSON object, keyed by kernel, then by probe point, each a
list of the exposed register names (any order):

    {"v4.16": {"dispatch": [...], "table_target": [...], "body": [...]},
     "v4.17": {"dispatch": [...], "table_target": [...], "body": [...]}}

ENTRY is one of syscall64, int80, sysenter32, syscall32, x32, vsyscall.
Ask entrysim (it is on PATH) and read its JSON (docs/EXPOSURE.md, "Output");
do not copy numbers into this file: the grader runs it on syscalls and
entries the handout does not name.  Python 3 standard library only.
"""
import json
import subprocess
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: python3 leaks.py SYSCALL ENTRY")
    syscall, entry = sys.argv[1], sys.argv[2]

    result = {}
    # TODO: run `entrysim exposure` for this syscall and entry with --json
    #       (subprocess.run(..., capture_output=True, text=True)), parse its
    #       stdout with json.loads, and fill `result` from the objects it
    #       printed: one per kernel ("convention"), each with its "probes".

    print(json.dumps(result))


if __name__ == "__main__":
    main()
