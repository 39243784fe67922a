#!/usr/bin/env python3
"""vaddr.py ADDR

Predicts what happens when a 64-bit program under entrysim's kernel
executes `call ADDR` (ADDR a hex address 0xffffffffff6XXXXX, near the
vsyscall page), and prints one line:

    NAME NR     the kernel emulates the system call NAME, number NR
                (for example: getpid 39, which is not one of them)
    SIGNAME     the program dies of that signal instead (for example SIGFPE,
                which is not the right one)

Task 2 of the handout: complete the TODO below, following the rule the
kernel uses (kernel_model/vsyscall.c and traps.c).  No entrysim run: the
grader compares your prediction with what entrysim does, on addresses the
handout does not list too.  Python 3 standard library only.
"""
import sys


def predict(addr):
    """What a call to addr does: (NAME, NR) or a signal name."""
    # TODO
    return "TODO"


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
