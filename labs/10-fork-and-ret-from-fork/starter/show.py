#!/usr/bin/env python3
"""show.py - entrysim's JSON as tables (not graded; change it as you like).

    python3 show.py fork.jsonl               a debugger transcript, one line
                                             per script command
    python3 show.py fork.jsonl REG...        and those registers (rdi rsp ...)
    python3 show.py fork.jsonl --frame LINE  the pt_regs slots after the
                                             command on script line LINE
    python3 show.py timing.json              a --timing-json report: each
                                             row of per_syscall

A transcript line: the script line and command, the instruction count, the
CPL, RIP with its symbol, RAX, and where the current task's struct pt_regs
is (the top of its kernel stack: each task has its own)."""
import json
import sys


def timing(d):
    print(f"{d['program']}: {d['kernel']}, {d['instructions']} instructions, "
          f"{d['syscalls']['count']} system calls")
    print(f"  {'entry':10} {'name':18} {'nr':>4} {'count':>6} {'cycles/call':>12}")
    for r in d["per_syscall"]:
        print(f"  {r['entry']:10} {r['name']:18} {r['nr']:>4} {r['count']:>6} "
              f"{r['cycles_per_call']:>12}")


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    path, rest = args[0], args[1:]
    with open(path) as f:
        text = f.read()
    try:
        whole = json.loads(text)
    except ValueError:
        whole = None
    if isinstance(whole, dict) and "per_syscall" in whole:
        return timing(whole)
    recs = [json.loads(line) for line in text.splitlines() if line.strip()]
    if rest[:1] == ["--frame"]:
        if len(rest) < 2:
            sys.exit("--frame needs a script line number (the first column)")
        want = int(rest[1])
        hits = [r for r in recs if r["line"] == want]
        if not hits:
            sys.exit(f"no command of line {want} in {path}")
        r = hits[-1]
        print(f"line {r['line']} {r['command']}: insn {r['instructions']}, "
              f"struct pt_regs at {r['pt_regs_base']}")
        for p in r["pt_regs"] or []:
            print(f"  0x{p['offset']:02x} {p['field']:8} {p['value']:>18}")
        return
    for r in recs:
        regs = "".join(f"  {x}={r['regs'].get(x, '?')}" for x in rest)
        sym = r["symbol"] or "?"
        print(f"{r['line']:3} {r['command'][:24]:24} {r['result']:5} insn {r['instructions']:<6} "
              f"cpl {r['cpl']}  {r['rip']} <{sym}>  rax={r['regs']['rax']}{regs}  "
              f"pt_regs@{r['pt_regs_base']}")


if __name__ == "__main__":
    main()
