#!/usr/bin/env python3
"""vaddr.py ADDR

Predicts what happens when a 64-bit program under entrysim's kernel
executes `call ADDR` (ADDR a hex address 0xffffffffff6XXXXX, near the
vsyscall page), and prints one line:

    NAME NR     the kernel emulates the system call NAME, number NR
    SIGNAME     the program dies of that signal instead

Reference solution.
"""
import sys

VSYSCALL_ADDR = 0xffffffffff600000

# vsyscall number (the address's bits 10-11) -> the system call emulate_vsyscall
# makes (kernel_model/vsyscall.c) and its x86-64 number (the nr that
# `entrysim exposure --entry vsyscall --json` and the timing report print)
CALLS = (("gettimeofday", 96), ("time", 201), ("getcpu", 309))


def predict(addr):
    """What a call to addr does: (NAME, NR) or a signal name."""
    # Every fetch fault in the page reaches emulate_vsyscall; it accepts
    # only the three entry points, each at the start of a 1 KiB slot
    # (addr_to_vsyscall_nr).  Anything else - the middle of an entry, the
    # fourth slot, another page - stays a page fault in user mode: SIGSEGV.
    if addr & ~0xC00 != VSYSCALL_ADDR:
        return "SIGSEGV"
    nr = (addr & 0xC00) >> 10
    if nr >= len(CALLS):
        return "SIGSEGV"
    return CALLS[nr]


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: python3 vaddr.py ADDR")
    try:
        addr = int(sys.argv[1], 16)
    except ValueError:
        sys.exit(f"vaddr.py: not a hex address: {sys.argv[1]}")
    r = predict(addr)
    print(r if isinstance(r, str) else f"{r[0]} {r[1]}")


if __name__ == "__main__":
    main()
