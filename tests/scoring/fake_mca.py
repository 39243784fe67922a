#!/usr/bin/env python3
"""Stands in for llvm-mca in the scorer's test: reads the assembly on stdin
and reports, as llvm-mca's summary does, Iterations N and Total Cycles =
N x (instructions in the block) + 10 -- a block of k instructions is k
cycles per iteration in the steady state, plus 10 cycles of fill/drain.
A block containing 'xor' is refused the way llvm-mca refuses bad input."""
import re
import sys

iters = None
for a in sys.argv[1:]:
    m = re.fullmatch(r"-iterations=(\d+)", a)
    if m:
        iters = int(m.group(1))
if iters is None or sys.argv[-1] != "-":
    sys.exit(f"fake_mca: unexpected arguments {sys.argv[1:]}")
lines = [l.strip() for l in sys.stdin if l.strip() and not l.strip().startswith(".")]
if any(l.startswith("xor") for l in lines):
    print("<stdin>:2:1: error: fake_mca refuses xor", file=sys.stderr)
    sys.exit(1)
print(f"Iterations:        {iters}\nInstructions:      {iters * len(lines)}\n"
      f"Total Cycles:      {iters * len(lines) + 10}\nTotal uOps:        {iters * len(lines)}")
