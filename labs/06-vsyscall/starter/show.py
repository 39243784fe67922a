#!/usr/bin/env python3
"""show.py FILE - reads what entrysim wrote, so you need not scroll JSON.

  show.py TRANSCRIPT.jsonl   a debugger transcript (entrysim debug
                             --transcript): one block per script command,
                             where it stopped, the registers the lab is
                             about and the pt_regs slots ip, sp, orig_ax,
                             ax and dx (value, and whether the current
                             kernel entry has written the slot yet).
  show.py REPORT.json        a timing report (entrysim run --timing-json):
                             the exit status and one line per kernel entry
                             kind and system call.

Given: you do not need to change it."""
import json
import sys

REGS = ("rax", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp")
SLOTS = ("ip", "sp", "orig_ax", "ax", "dx")


def transcript(lines):
    if not lines:
        print("(empty transcript: does your script have commands?)")
    for line in lines:
        r = json.loads(line)
        where = r.get("symbol") or "(no symbol)"
        print(f"line {r['line']}: {r['command']!r} -> {r['stop']}  rip {r['rip']} {where}  "
              f"cpl {r['cpl']}  insn {r['instructions']}" +
              (f"  [program ended: {r['stop']}]" if r.get("exited") else ""))
        if r.get("result") == "error":
            print("   (this command failed: the script stopped here)")
        regs = r.get("regs") or {}
        print("   " + "  ".join(f"{k}={regs.get(k, '?')}" for k in REGS))
        slots = {s["field"]: s for s in (r.get("pt_regs") or [])}
        if slots:
            print("   pt_regs: " + "  ".join(
                f"{f}@{slots[f]['offset']:#x}={slots[f]['value']}" +
                ("" if slots[f]["written"] else " (not written yet)")
                for f in SLOTS if f in slots))


def timing(rep):
    print(f"program {rep.get('program')}  kernel {rep.get('kernel')}  "
          f"exit status {rep.get('exit_status')}")
    rows = rep.get("per_syscall") or []
    if not rows:
        print("   (no system call finished)")
    for p in rows:
        print(f"   entry {p['entry']:<10} {p['name']:<14} nr {p['nr']:<4} "
              f"count {p['count']:<3} cycles/call {p['cycles_per_call']:.0f}")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: python3 show.py TRANSCRIPT.jsonl | REPORT.json")
    with open(sys.argv[1]) as f:
        text = f.read()
    try:
        doc = json.loads(text)
    except ValueError:
        doc = None
    if isinstance(doc, dict) and "per_syscall" in doc:
        timing(doc)
    else:
        transcript([l for l in text.splitlines() if l.strip()])


if __name__ == "__main__":
    main()
