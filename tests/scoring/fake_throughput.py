#!/usr/bin/env python3
"""Stands in for `entrysim throughput --uarch U --file BLOCKS` in the scorer's
test: answers each block from fake_predictions.tsv (next to this file) in
entrysim's output format, `hex<TAB>cycles` or `hex<TAB>error: ...`; a block
not in that table gets no line at all (the scorer must notice)."""
import os
import sys

args = sys.argv[1:]
if len(args) != 5 or args[0] != "throughput" or args[1] != "--uarch" or args[3] != "--file":
    sys.exit(f"fake_throughput: unexpected arguments {args}")
table = {}
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_predictions.tsv")) as f:
    for line in f:
        h, v = line.rstrip("\n").split("\t")
        table[h] = v
with open(args[4]) as f:
    for line in f:
        h = line.strip()
        if h in table:
            print(f"{h}\t{table[h]}")
