#!/usr/bin/env python3
"""show.py TRANSCRIPT.jsonl - a debugger transcript (entrysim debug
--transcript), one block per script command: where it stopped, the
registers holding user values (taint) and the pt_regs slots written so far
with their labels.  Given: you do not need to change it."""
import json
import sys


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: python3 show.py TRANSCRIPT.jsonl")
    with open(sys.argv[1]) as f:
        lines = [l for l in f if l.strip()]
    if not lines:
        print("(empty transcript: does your script have commands?)")
    for line in lines:
        r = json.loads(line)
        where = r["symbol"] or "(no symbol)"
        print(f"line {r['line']}: {r['command']!r} -> {r['stop']}  rip {r['rip']} {where}  "
              f"cpl {r['cpl']}  insn {r['instructions']}")
        regs = r.get("regs") or {}
        taint = r.get("taint") or {}
        if taint:
            print("   registers with user values: " +
                  "  ".join(f"{k}={regs.get(k, '?')} {{{v}}}" for k, v in sorted(taint.items())))
        slots = [s for s in (r.get("pt_regs") or []) if s.get("written")]
        if slots:
            print("   pt_regs written: " +
                  "  ".join(f"{s['field']}@{s['offset']:#x}={s['value']}" +
                            (f" {{{s['taint']}}}" if s['taint'] else "") for s in slots))


if __name__ == "__main__":
    main()
