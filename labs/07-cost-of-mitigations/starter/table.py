#!/usr/bin/env python3
"""table.py - lab 07: bench's results.csv as an aligned table, one row per
cell: its mitigations, cycles per call and the seven phases per call.
usage: python3 table.py [results/results.csv]"""
import csv
import sys

COLS = ["mitigations", "status", "cycles_per_call", "hw_entry", "entry_asm", "dispatch", "stub",
        "body", "exit_path", "hw_exit"]
path = sys.argv[1] if len(sys.argv) > 1 else "results/results.csv"
with open(path, newline="") as f:
    rows = [[r[c] for c in COLS] for r in csv.DictReader(f)]
widths = [max(len(x) for x in col) for col in zip(COLS, *rows)]
for row in [COLS] + rows:
    print("  ".join(x.rjust(w) if i > 1 else x.ljust(w) for i, (x, w) in enumerate(zip(row, widths))))
