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

Reference solution.
"""
import json
import os
import subprocess
import sys

# x86-64 C calling convention (System V psABI 3.2.3): integer arguments
# 1..6 arrive in these registers.  The body probe is such a C function.
C_ARGS = ("rdi", "rsi", "rdx", "rcx", "r8", "r9")


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
    body = next((p for p in obj["probes"] if p["point"] == "body"), None)
    for i in range(obj["arity"]):
        if body is None or not body["reached"]:
            sys.exit(f"argregs: the body of {syscall} was not reached")
        labels = body["regs"].get(C_ARGS[i], [])
        # 'mem': loaded from user memory, i.e. the user stack (arg 6 of the
        # fast entries)
        src = "+".join("stack" if l == "mem" else l for l in labels) or "?"
        print(f"arg{i + 1} {src}")


if __name__ == "__main__":
    main()
