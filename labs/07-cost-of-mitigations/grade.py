import os, sys; sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from grading import Grader, Fail, norm

import re
import struct
import xml.etree.ElementTree as ET

g = Grader(__file__)

# The six mitigation sets of the lab, as `run --mitigations` takes them, and
# the set each one comes to (bench normalises `pti` to "pti,nospec" etc.;
# bench/README.md "mitigations").
SETS = ["none", "nospec", "retpoline", "ibrs", "pti", "all"]
FULL = {
    "none": frozenset(),
    "nospec": frozenset({"nospec"}),
    "retpoline": frozenset({"retpoline", "nospec"}),
    "ibrs": frozenset({"ibrs", "nospec"}),
    "pti": frozenset({"pti", "nospec"}),
    "all": frozenset({"pti", "retpoline", "ibrs", "nospec"}),
    "pti,retpoline": frozenset({"pti", "retpoline", "nospec"}),
    "ibrs,retpoline": frozenset({"ibrs", "retpoline", "nospec"}),
    "pti,ibrs": frozenset({"pti", "ibrs", "nospec"}),
}
ITERATIONS = 1000
# what Task 1 fixes (the handout's table)
FIXED = dict(kernel="v4.17", entry="syscall64", syscall="getpid", uarch="znver4", cpu="amd",
             workload="sysloop", iterations=ITERATIONS)
REQUIRED_KEYS = ["kernels", "entries", "mitigations", "syscalls", "uarch", "cpu", "workloads",
                 "iterations"]
HANDOUT_PROG = ["syscall64", "getpid", "3"]

_cache = {}


def mset(s):
    """A results.json `mitigations` value as a set ("none" = empty)."""
    return frozenset(x for x in re.split(r"[,\s]+", s.strip().lower()) if x and x != "none")


def cells_by_set(doc, what):
    if not isinstance(doc, dict) or not isinstance(doc.get("cells"), list):
        raise Fail(f"{what} is not a bench results.json (no 'cells' list)")
    out = {}
    for c in doc["cells"]:
        out.setdefault(mset(str(c.get("mitigations", ""))), []).append(c)
    return out


def check_six(doc, what):
    """The six cells of Task 1 in a results.json, by set name; Fail otherwise."""
    by = cells_by_set(doc, what)
    got, bad = {}, []
    for name in SETS:
        cs = by.get(FULL[name], [])
        if len(cs) != 1:
            bad.append(f"{len(cs)} cells for mitigations '{name}' (want 1: every other axis "
                       "takes one value)")
            continue
        c = cs[0]
        for k, v in FIXED.items():
            if c.get(k) != v:
                bad.append(f"the '{name}' cell has {k} = {c.get(k)!r}, Task 1 asks for {v!r}")
        if c.get("status") != "ok":
            bad.append(f"the '{name}' cell failed ({c.get('note') or c.get('status')})")
        got[name] = c
    extra = len(doc["cells"]) - sum(len(by.get(FULL[n], [])) for n in SETS)
    if extra > 0:
        bad.append(f"{extra} cell(s) beyond the six sets of Task 1 (keep other experiments in "
                   "another matrix and --out directory)")
    if bad:
        raise Fail(f"{what}: " + "; ".join(bad[:4]) + (" ..." if len(bad) > 4 else ""))
    return got


def bench(ctx, uarch, names, cpu="amd"):
    """The grader's own bench run: {set name: (cell, its timing report)}."""
    key = ("bench", uarch, cpu, tuple(names))
    if key in _cache:
        return _cache[key]
    d = ctx.tempdir()
    m = os.path.join(d, "ref.toml")
    with open(m, "w") as f:
        f.write("[matrix]\nname = \"ref\"\n")
        f.write("mitigations = [" + ", ".join(f'"{n}"' for n in names) + "]\n")
        f.write(f'syscalls = "getpid"\nentries = "syscall64"\nuarch = "{uarch}"\n'
                f'cpu = "{cpu}"\nkernels = "v4.17"\niterations = {ITERATIONS}\n')
    out = os.path.join(d, "out")
    ctx.entrysim_run(["bench", "--matrix", m, "--out", out, "-j", "2", "--timeout", "60"],
                     timeout=100)
    doc = ctx.json_file(os.path.join(out, "results.json"))
    by = cells_by_set(doc, "the grader's bench run")
    res = {}
    for n in names:
        c = by[FULL[n]][0]
        if c.get("status") != "ok":
            raise Fail(f"grader: its own cell {n} on {uarch} failed: {c.get('note')}")
        rep = ctx.json_file(os.path.join(out, "cells", c["key"] + ".json"))
        res[n] = (c, rep)
    _cache[key] = res
    return res


def partial(msgs):
    """Partial credit carries no message in grading.py: say what was wrong
    on stderr (just above the check's line)."""
    print("    partial credit: " + "; ".join(msgs), file=sys.stderr, flush=True)


def phases_of(cell):
    return cell["phases_per_call"]


def grown(ref, name, base="nospec"):
    """The phases that carry the increase of `name` over `base`: each at
    least 10% of the total increase in cycles per call."""
    a, b = phases_of(ref[name][0]), phases_of(ref[base][0])
    d = {p: a[p] - b[p] for p in a}
    total = sum(d.values())
    return {p for p, v in d.items() if v >= 0.10 * total}, d


def unchanged(ref, names):
    ps = phases_of(ref[names[0]][0]).keys()
    return {p for p in ps if max(phases_of(ref[n][0])[p] for n in names)
            - min(phases_of(ref[n][0])[p] for n in names) <= 1.0}


def per_call_stat(ref, name, base, stat):
    c, rep = ref[name]
    b = ref[base][1]
    return (rep["stats"][stat] - b["stats"][stat]) / c["calls"]


def phase_set(ctx, key, known):
    v = ctx.answer(key)
    if not v:
        raise Fail(f"answers.txt: '{key}' is empty")
    got = {x for x in re.split(r"[,\s]+", v.lower()) if x}
    unknown = got - set(known)
    if unknown:
        raise Fail(f"answers.txt: '{key}' names {', '.join(sorted(unknown))}, which is not a "
                   f"phase; the phases are {', '.join(known)} (docs/TIMING.md, Phases)")
    return got


def number(ctx, key):
    v = ctx.answer(key)
    if not v:
        raise Fail(f"answers.txt: '{key}' is empty")
    try:
        return float(v.replace(",", ""))
    except ValueError:
        raise Fail(f"answers.txt: '{key}' should be a number, not {v!r}")


def hexnum(ctx, key):
    v = norm(ctx.answer(key))
    if not v:
        raise Fail(f"answers.txt: '{key}' is empty")
    try:
        return int(v, 16)  # the handout asks for hex; "0x" is optional
    except ValueError:
        raise Fail(f"answers.txt: '{key}' should be a hex number (0x...), not {v!r}")


def sysloop(ctx):
    p = os.path.join(os.path.dirname(os.path.realpath(ctx.entrysim)), "bench", "sysloop64")
    if not os.path.exists(p):
        raise Fail(f"grader: no {p} (build the bench_workloads target)")
    return p


def debug(ctx, script_path, mitig, prog_args):
    """Runs a debugger script headless; the transcript's records."""
    d = ctx.tempdir()
    t = os.path.join(d, "t.jsonl")
    p = ctx.entrysim_run(["debug", "--mitigations", mitig, "--script", script_path,
                          "--transcript", t, sysloop(ctx)] + prog_args, ok=None, timeout=60)
    if not os.path.exists(t) or os.path.getsize(t) == 0:
        tail = " / ".join((p.stderr or "").strip().splitlines()[-2:])
        raise Fail(f"entrysim debug --script {os.path.basename(script_path)} wrote no "
                   f"transcript (exit {p.returncode}): {tail}")
    recs = ctx.json_file(t)
    return recs if isinstance(recs, list) else [recs]


def entry_trace(ctx, mitig, prog_args=HANDOUT_PROG):
    """The grader's own walk through the first kernel entry, one record per
    instruction, from entry_SYSCALL_64 to the call of do_syscall_64."""
    key = ("trace", mitig, tuple(prog_args))
    if key in _cache:
        return _cache[key]
    d = ctx.tempdir()
    s = os.path.join(d, "walk.dbg")
    with open(s, "w") as f:
        f.write("syscall\nkentry\n" + "step\n" * 90)
    recs = debug(ctx, s, mitig, prog_args)
    out, started = [], False
    for r in recs:
        sym = r.get("symbol") or ""
        if r.get("command") == "kentry":
            started = True
        if not started:
            continue
        if sym.startswith("do_syscall_64"):
            break
        out.append(r)
    else:
        raise Fail(f"grader: its walk under {mitig} did not reach do_syscall_64")
    _cache[key] = out
    return out


def added_block(ctx, mitig, prog_args=HANDOUT_PROG):
    """The instructions `mitig` adds to the entry, before do_syscall_64: the
    first run of consecutive instructions whose addresses the nospec kernel
    does not execute (the alternatives are patched in place, so the same
    code has the same address in every set)."""
    base = {r["rip"] for r in entry_trace(ctx, "nospec", prog_args)}
    block = []
    for r in entry_trace(ctx, mitig, prog_args):
        if r["rip"] not in base:
            block.append(r)
        elif block:
            break
    if len(block) < 2:
        raise Fail(f"grader: found no code that {mitig} adds to entry_SYSCALL_64")
    return block


def cr3_facts(ctx, prog_args=HANDOUT_PROG):
    # Linux 4.17 arch/x86/entry/calling.h SWITCH_TO_KERNEL_CR3: `mov %cr3, reg`,
    # the PCID/page-table bit changes, then `mov reg, %cr3` as its last
    # instruction (kernel_model/include/calling.h follows it).
    b = added_block(ctx, "pti", prog_args)
    return dict(write_rip=int(b[-1]["rip"], 16), write_sym=b[-1]["symbol"],
                user_cr3=int(b[1]["regs"]["rsp"], 16), kernel_cr3=int(b[-1]["regs"]["rsp"], 16))


def wrmsr_facts(ctx, prog_args=HANDOUT_PROG):
    # Linux 5.19 arch/x86/entry/calling.h IBRS_ENTER: ecx = MSR_IA32_SPEC_CTRL,
    # edx:eax = the value, then `wrmsr` as its last instruction.
    b = added_block(ctx, "ibrs", prog_args)
    r = b[-1]["regs"]
    return dict(write_rip=int(b[-1]["rip"], 16), write_sym=b[-1]["symbol"],
                msr=int(r["rcx"], 16) & 0xffffffff,
                value=((int(r["rdx"], 16) & 0xffffffff) << 32) | (int(r["rax"], 16) & 0xffffffff))


def last_stop(recs, name):
    for r in recs:
        if r.get("result") == "error":
            raise Fail(f"{name} line {r.get('line')}: '{r.get('command')}' failed in the debugger "
                       "(run the handout's entrysim debug command and read its error: line)")
    recs = [r for r in recs if r.get("result") == "ok"]
    if not recs:
        raise Fail(f"{name} has no command that ran (it needs at least one run-control command)")
    return recs[-1]


def check_script(ctx, fname, mitig, facts, what, prog_args, hidden=False):
    path = ctx.path(fname)
    if not os.path.exists(path):
        raise Fail(f"no {fname} in the work directory")
    r = last_stop(debug(ctx, path, mitig, prog_args), fname)
    where = f"{r.get('symbol') or '?'} ({r.get('rip')}, cpl {r.get('cpl')})"
    if r.get("exited") and not hidden:
        raise Fail(f"{fname} ran the program to its end; it should stop at {what} of the first "
                   "entry, before it executes")
    if r.get("rip") is None or int(r["rip"], 16) != facts["write_rip"]:
        if hidden:
            raise Fail(f"{fname}, run on another system call and mitigation set, does not stop at "
                       f"{what}: stop there by the code's address, not by counting")
        raise Fail(f"{fname} (under --mitigations {mitig}) stops at {where}; it should stop AT "
                   f"{what} in the kernel entry, before it executes (use disas to find it)")


# ---------------------------------------------------------------- Task 1
def read_matrix_keys(path):
    keys, table = set(), None
    with open(path) as f:
        for line in f:
            s = line.split("#", 1)[0].strip()
            if s.startswith("["):
                table = s.strip("[] ")
                continue
            m = re.match(r"([A-Za-z_]+)\s*=", s)
            if m and table == "matrix":
                keys.add(m.group(1))
    return keys


@g.check("matrix.toml runs the six cells", points=10, section="Task 1")
def _(ctx):
    path = ctx.path("matrix.toml")
    if not os.path.exists(path):
        raise Fail("no matrix.toml in the work directory")
    keys = read_matrix_keys(path)
    if "conventions" in keys or "patches" in keys:
        keys.add("kernels")
    missing = [k for k in REQUIRED_KEYS if k not in keys]
    if missing:
        raise Fail("matrix.toml does not set " + ", ".join(missing) + " in [matrix] (Task 1 "
                   "asks for every axis written out, even where the default is the value)")
    out = os.path.join(ctx.tempdir(), "out")
    ctx.entrysim_run(["bench", "--matrix", path, "--out", out, "-j", "2", "--timeout", "60"],
                     timeout=110)
    check_six(ctx.json_file(os.path.join(out, "results.json")),
              "entrysim bench --matrix matrix.toml (rerun by the grader)")


@g.check("results/results.json is bench's output for the six cells", points=10, section="Task 1")
def _(ctx):
    p = ctx.path("results", "results.json")
    if not os.path.exists(p):
        raise Fail("no results/results.json: run `entrysim bench --matrix matrix.toml --out "
                   "results -j 2` in the work directory")
    mine = check_six(ctx.json_file(p), "results/results.json")
    ref = bench(ctx, "znver4", SETS)
    bad = [n for n in SETS if abs(mine[n]["cycles_per_call"] - ref[n][0]["cycles_per_call"])
           > 0.005 * ref[n][0]["cycles_per_call"]]
    if bad:
        raise Fail("results/results.json: the cycles per call of " + ", ".join(bad) + " are not "
                   "what this entrysim computes for those cells; run bench again (same --out)")


# ---------------------------------------------------------------- Task 2
@g.check("cycles per getpid under each set", points=15, section="Task 2")
def _(ctx):
    ref = bench(ctx, "znver4", SETS)
    wrong = []
    for n in SETS:
        key = "cycles_" + n
        try:
            v = number(ctx, key)
        except Fail as e:
            wrong.append(str(e).replace("answers.txt: ", ""))
            continue
        want = ref[n][0]["cycles_per_call"]
        if abs(v - want) > max(1.5, 0.01 * want):
            wrong.append(f"{key} = {v:g} is not the cycles_per_call of the '{n}' cell (1% "
                         "tolerance)")
    if wrong:
        ok = len(SETS) - len(wrong)
        if ok == 0:
            raise Fail("answers.txt: " + "; ".join(wrong[:3]) + (" ..." if len(wrong) > 3 else "")
                       + " (results/results.csv, column cycles_per_call)")
        partial(wrong)
        return ok / len(SETS)


# ---------------------------------------------------------------- Task 3
@g.check("the phases no mitigation moves", points=5, section="Task 3")
def _(ctx):
    ref = bench(ctx, "znver4", SETS)
    known = list(phases_of(ref["none"][0]))
    want = unchanged(ref, SETS)
    got = phase_set(ctx, "unchanged_phases", known)
    if got != want:
        raise Fail(f"unchanged_phases: {', '.join(sorted(got))} is not the set of phases whose "
                   "cycles per call stay the same (within 1 cycle) in all six cells")


@g.check("the phases pti and ibrs make grow", points=10, section="Task 3")
def _(ctx):
    ref = bench(ctx, "znver4", SETS)
    known = list(phases_of(ref["none"][0]))
    score, msgs = 0, []
    for n in ("pti", "ibrs"):
        want, _ = grown(ref, n)
        try:
            got = phase_set(ctx, n + "_phases", known)
        except Fail as e:
            msgs.append(str(e))
            continue
        if got == want:
            score += 1
        else:
            msgs.append(f"{n}_phases: {', '.join(sorted(got))} is not the set of phases that carry "
                        f"the {n} cell's extra cycles over nospec (each >= 10% of them)")
    if score < 2:
        if score == 0:
            raise Fail("; ".join(msgs))
        partial(msgs)
        return score / 2


@g.check("the phase retpoline makes grow most", points=5, section="Task 3")
def _(ctx):
    ref = bench(ctx, "znver4", SETS)
    known = list(phases_of(ref["none"][0]))
    _, d = grown(ref, "retpoline")
    want = max(d, key=d.get)
    got = phase_set(ctx, "retpoline_phase", known)
    if got != {want}:
        raise Fail(f"retpoline_phase: {', '.join(sorted(got))} is not the one phase whose cycles "
                   "per call grow most from nospec to retpoline")


COUNTERS = [("retpoline_mispredicts", "retpoline", "mispredicts"),
            ("pti_serialising", "pti", "serialising"),
            ("ibrs_serialising", "ibrs", "serialising")]


@g.check("what the model's counters say", points=5, section="Task 3")
def _(ctx):
    ref = bench(ctx, "znver4", SETS)
    msgs = []
    for key, n, stat in COUNTERS:
        try:
            v = number(ctx, key)
        except Fail as e:
            msgs.append(str(e))
            continue
        want = per_call_stat(ref, n, "nospec", stat)
        if abs(v - want) > 0.1:
            msgs.append(f"{key} = {v:g} is not the extra '{stat}' per getpid of the {n} cell over "
                        "nospec (stats in results/cells/KEY.json; divide by calls)")
    if msgs:
        ok = len(COUNTERS) - len(msgs)
        if ok == 0:
            raise Fail("; ".join(msgs))
        partial(msgs)
        return ok / len(COUNTERS)


# ---------------------------------------------------------------- Task 4
@g.check("pti.dbg stops at the CR3 write", points=10, section="Task 4")
def _(ctx):
    check_script(ctx, "pti.dbg", "pti", cr3_facts(ctx), "the MOV to CR3 of SWITCH_TO_KERNEL_CR3",
                 HANDOUT_PROG)


@g.check("ibrs.dbg stops at the WRMSR", points=10, section="Task 4")
def _(ctx):
    check_script(ctx, "ibrs.dbg", "ibrs", wrmsr_facts(ctx), "the WRMSR of IBRS_ENTER",
                 HANDOUT_PROG)


@g.check("the CR3 and SPEC_CTRL values", points=5, section="Task 4")
def _(ctx):
    cr3, msr = cr3_facts(ctx), wrmsr_facts(ctx)
    kc = cr3["kernel_cr3"]
    tests = [
        ("user_cr3", {cr3["user_cr3"]}, "the CR3 value the first instruction of "
         "SWITCH_TO_KERNEL_CR3 reads (in RSP right after it)"),
        ("kernel_cr3", {kc, kc & ~(1 << 63)}, "the value the MOV to CR3 writes (RSP at it)"),
        ("spec_ctrl_msr", {msr["msr"]}, "the MSR number WRMSR writes (ECX at it)"),
        ("spec_ctrl_value", {msr["value"]}, "the value WRMSR writes (EDX:EAX at it)"),
    ]
    msgs = []
    for key, want, what in tests:
        try:
            v = hexnum(ctx, key)
        except Fail as e:
            msgs.append(str(e))
            continue
        if v not in want:
            msgs.append(f"{key} = {ctx.answer(key)} is not {what}")
    if msgs:
        ok = len(tests) - len(msgs)
        if ok == 0:
            raise Fail("; ".join(msgs))
        partial(msgs)
        return ok / len(tests)


# ---------------------------------------------------------------- Task 5
def valid_png(data):
    if not data.startswith(b"\x89PNG\r\n\x1a\n") or len(data) < 33 or data[12:16] != b"IHDR":
        return False
    w, h = struct.unpack(">II", data[16:24])
    return w > 0 and h > 0


def valid_svg(data):
    try:
        root = ET.fromstring(data)
    except ET.ParseError:
        return False
    return root.tag.split("}")[-1] == "svg" and len(list(root.iter())) > 5


@g.check("the plot is handed in", points=5, section="Task 5")
def _(ctx):
    res = ctx.path("results", "results.json")
    if not os.path.exists(res):
        raise Fail("no results/results.json to plot (Task 1)")
    found = [n for n in ("plot.svg", "plot.png") if os.path.exists(ctx.path(n))]
    if not found:
        raise Fail("no plot.svg or plot.png in the work directory")
    for n in found:
        with open(ctx.path(n), "rb") as f:
            data = f.read()
        ok = valid_png(data) if n.endswith(".png") else valid_svg(data)
        if not ok:
            raise Fail(f"{n} is not a valid {'PNG' if n.endswith('.png') else 'SVG'} image")
        # a minute of slack: copying a finished directory (cp -r, a git checkout)
        # may write the two files in either order
        if os.path.getmtime(ctx.path(n)) < os.path.getmtime(res) - 60:
            raise Fail(f"{n} is older than results/results.json: plot the results you hand in "
                       "(make it again after your last bench run)")


# ---------------------------------------------------------------- hidden
@g.check("phase claims hold on another CPU model", points=4, section="Task 3", hidden=True)
def _(ctx):
    ref = bench(ctx, "skylake", SETS, cpu="intel")
    known = list(phases_of(ref["none"][0]))
    bad = []
    if phase_set(ctx, "unchanged_phases", known) != unchanged(ref, SETS):
        bad.append("unchanged_phases")
    for n in ("pti", "ibrs"):
        if phase_set(ctx, n + "_phases", known) != grown(ref, n)[0]:
            bad.append(n + "_phases")
    if bad:
        raise Fail("on another cycle model, these answers no longer describe the phases: "
                   + ", ".join(bad) + " (name the phases by the code that runs in them)")


@g.check("counter claims hold for combined mitigations", points=3, section="Task 3", hidden=True)
def _(ctx):
    combos = ["nospec", "pti", "ibrs", "pti,retpoline", "ibrs,retpoline", "pti,ibrs"]
    vals = {k: number(ctx, k) for k, _, _ in COUNTERS}
    bad = 0
    for uarch in ("znver4", "skylake"):
        ref = bench(ctx, uarch, combos)
        for n in ("pti", "ibrs"):
            got = per_call_stat(ref, n + ",retpoline", n, "mispredicts")
            bad += abs(got - vals["retpoline_mispredicts"]) > 0.1
        got = per_call_stat(ref, "pti,ibrs", "nospec", "serialising")
        bad += abs(got - vals["pti_serialising"] - vals["ibrs_serialising"]) > 0.2
    if bad:
        raise Fail("your counter answers do not predict what the counters show when mitigations "
                   "are combined (count what each one's code does on every entry and exit)")


@g.check("debugger scripts on another system call and set", points=3, section="Task 4",
         hidden=True)
def _(ctx):
    args = ["syscall64", "getppid", "3"]
    check_script(ctx, "pti.dbg", "all", cr3_facts(ctx, args),
                 "the MOV to CR3 of SWITCH_TO_KERNEL_CR3", args, hidden=True)
    check_script(ctx, "ibrs.dbg", "all", wrmsr_facts(ctx, args), "the WRMSR of IBRS_ENTER", args,
                 hidden=True)


g.main()
