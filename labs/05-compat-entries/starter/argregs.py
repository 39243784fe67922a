#!/usr/bin/env python3
"""argregs.py ENTRY SYSCALL

Prints where each argument of a 32-bit system call comes from when an i386
program enters the kernel through ENTRY (int80, sysenter32 or syscall32),
under the v4.17 kernel: one line per declared argument,

    arg1 ebx
    arg2 ecx
    ...

naming the user register that holds the argument at the entry instruction
(ebx, ecx, ...), or the word `stack` when the kernel reads it from the user
stack.  A call with no arguments prints nothing.  Exit status 0.

Task 3 of the handout: complete the TODO below.  Python 3 standard library
only.  entrysim is found on PATH (or in $ENTRYSIM).
"""
import json
import os
import subprocess
import sys


def exposure(entry, syscall):
    """The one JSON object `entrysim exposure --json` prints for this case."""
    entrysim = os.environ.get("ENTRYSIM", "entrysim")
    out = subprocess.run([entrysim, "exposure", "--entry", entry, "--syscall", syscall,
                          "--convention", "v4.17", "--json"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"argregs: entrysim exposure exited {out.returncode}: {out.stderr.strip()}")
    return json.loads(out.stdout)[0]


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: python3 argregs.py ENTRY SYSCALL")
    entry, syscall = sys.argv[1], sys.argv[2]
    obj = exposure(entry, syscall)
    # TODO: use obj["arity"] and the probe whose "point" is "body" (a C
    # function: in which register does a C function receive its i-th
    # argument?) to print one line "argN REG" per argument, N = 1..arity.
    print(f"argregs: TODO ({syscall} via {entry}: {obj['arity']} arguments)", file=sys.stderr)


if __name__ == "__main__":
    main()
