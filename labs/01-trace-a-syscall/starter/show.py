#!/usr/bin/env python3
"""show.py - a transcript of `entrysim debug --transcript` as a table (not
graded; change it as you like).

    python3 show.py transcript.jsonl          one line per script command
    python3 show.py transcript.jsonl REG...   and those registers (rcx r11 ...)

Each line: the script line and command, the instruction count, the CPL, RIP
with its symbol, RSP, and the pt_regs slots written so far in this kernel
entry, from the top of the frame down (ss first)."""
import json
import sys


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    extra = sys.argv[2:]
    with open(sys.argv[1]) as f:
        recs = [json.loads(line) for line in f if line.strip()]
    for r in recs:
        slots = [p["field"] for p in (r.get("pt_regs") or []) if p["written"]]
        regs = "".join(f"  {x}={r['regs'].get(x, '?')}" for x in extra)
        print(f"{r['line']:3} {r['command'][:30]:30} {r['result']:5} insn {r['instructions']:<6} "
              f"cpl {r['cpl']}  {r['rip']} <{r['symbol']}>  rsp={r['regs']['rsp']}{regs}")
        if r["cpl"] == 0 and slots:
            print(f"      pt_regs at {r['pt_regs_base']}, written: {' '.join(reversed(slots))}")


if __name__ == "__main__":
    main()
