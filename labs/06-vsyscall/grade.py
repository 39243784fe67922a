import os, sys; sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from grading import Grader, Fail, norm

# Lab 06: the legacy vsyscall page, emulated through a page fault.
#
# Every expected answer the tool can tell is measured at grading time:
#   - the fault (handler, vector, error code), who emulates it, the return
#     address and the user stack slot it comes from: debugger transcripts
#     (--transcript, JSON lines) of a reference script, run on programs the
#     lab's own vcall.py writes;
#   - which system call an address gives, or which signal: `entrysim run
#     --timing-json` (its per_syscall rows with entry "vsyscall") and the
#     exit status;
#   - getcpu's third argument, the saved rdx, the exposed registers and the
#     commits: `entrysim exposure --json` (per convention and per single
#     patch) and debugger transcripts;
#   - whether the page is readable: a program that reads it.
# The constants are Linux's and Intel's rules, cited where they are used:
# the page-fault error code bits, the name of the C exception handler of
# entrysim's entry code, what vsyscall=xonly maps, the defaults of Linux's
# vsyscall= parameter, and the gadget in the page's code.

import importlib.util
import json
import re
import signal

g = Grader(__file__)

# Linux arch/x86/include/uapi/asm/vsyscall.h: VSYSCALL_ADDR = -10UL << 20;
# entrysim's ES_VSYSCALL_ADDR (sim/boot/kernel.h) is the same.
VSYSCALL_ADDR = 0xffffffffff600000
PAGE = 0x1000

# kernel_model/entry_64.S, macro idtentry: every exception vector's entry
# code builds pt_regs and calls this C function with (regs, vector,
# error code) (Linux 4.17 calls do_page_fault from its page_fault entry).
C_HANDLER = "es_do_exception"

# Intel SDM Vol. 3A, 4.7 "Page-Fault Exceptions", Figure 4-12 (Linux:
# enum x86_pf_error_code, X86_PF_PROT/WRITE/USER/INSTR): the error code's
# bits the handout asks about.
PF_BITS = {"fault.present": 0x1, "fault.write": 0x2, "fault.user": 0x4, "fault.fetch": 0x10}

# The four commits of the series that change code (`entrysim run --help`:
# the other three "change no code path on their own").
CODE_COMMITS = ("dfe64506", "fa697140", "ebeb8c82", "6dc936f1")

# The programs the handout makes, by the file names it gives them (the
# user stack's addresses depend on argv[0], so the grader runs them under
# the same names from their own directory).
HANDOUT_PROGS = {"gettimeofday": 0x000, "time": 0x400, "getcpu": 0x800}

# vaddr.py: the addresses the handout lists, and others it does not.
VADDR_SHOWN = ("0xffffffffff600000", "0xffffffffff600400", "0xffffffffff600800",
               "0xffffffffff600c00", "0xffffffffff600004")
VADDR_HIDDEN = ("0xffffffffff600401", "0xffffffffff601400", "0xFFFFFFFFFF600400",
                "0xffffffffff640800", "0xffffffffff600007", "0xffffffffff6007fc",
                "0xffffffffff600800")

_cache = {}


# ---------------------------------------------------------------- helpers

def vcall(ctx):
    """The lab's own vcall.py (starter/, not the student's copy)."""
    if "vcall" not in _cache:
        path = os.path.join(ctx.labdir, "starter", "vcall.py")
        sys.dont_write_bytecode = True  # no __pycache__ in the lab's directory
        spec = importlib.util.spec_from_file_location("lab06_vcall", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        _cache["vcall"] = mod
    return _cache["vcall"]


def program(ctx, name, addr, getpid=0, read=False):
    """Writes the program into a directory of its own; returns the
    directory (run it there as ./NAME)."""
    key = ("prog", name, addr, getpid, read)
    if key not in _cache:
        d = ctx.tempdir()
        vcall(ctx).write(os.path.join(d, name), addr, getpid, read)
        _cache[key] = d
    return _cache[key]


def debug(ctx, script, name, addr, getpid=0, opts=(), script_is_path=False):
    """Runs the debugger headless on ./NAME; returns the transcript records."""
    d = program(ctx, name, addr, getpid)
    t = ctx.tempdir()
    if script_is_path:
        spath = script
    else:
        spath = os.path.join(t, "s.script")
        with open(spath, "w") as f:
            f.write(script)
    tr = os.path.join(t, "t.jsonl")
    ctx.entrysim_run(["debug"] + list(opts) + ["--script", spath, "--transcript", tr, "./" + name],
                     cwd=d, ok=None, timeout=60)
    if not os.path.exists(tr) or os.path.getsize(tr) == 0:
        return []
    recs = ctx.json_file(tr)
    return [recs] if isinstance(recs, dict) else recs


def slot(rec, field):
    for s in rec.get("pt_regs") or []:
        if s["field"] == field:
            return s
    raise Fail(f"cannot grade: the transcript has no pt_regs slot {field}")


def reg(rec, name):
    return int(rec["regs"][name], 16)


def exposure(ctx, syscall, convention=None, patches=None):
    key = ("exp", syscall, convention, patches)
    if key not in _cache:
        args = ["exposure", "--entry", "vsyscall", "--syscall", syscall, "--json"]
        if convention:
            args += ["--convention", convention]
        if patches is not None:
            args += ["--patches", patches]
        objs = ctx.entrysim_json(args)
        if not isinstance(objs, list) or len(objs) != 1:
            raise Fail(f"cannot grade: entrysim {' '.join(args)} printed {len(objs)} objects, not one")
        _cache[key] = objs[0]
    return _cache[key]


def probe(obj, point):
    for p in obj["probes"]:
        if p["point"] == point:
            if not p["reached"]:
                raise Fail(f"cannot grade: probe {point} of {obj['syscall']} ({obj['convention']}) not reached")
            return p
    raise Fail(f"cannot grade: no probe {point}")


def emulator(ctx):
    """The C function that emulates a vsyscall: exposure's dispatch probe
    for the vsyscall entry."""
    return probe(exposure(ctx, "gettimeofday", "v4.17"), "dispatch")["symbol"]


def handler(ctx):
    """The symbol the CPU delivers the vsyscall fault to: the first kernel
    entry of a program whose first kernel entry is that call."""
    if "handler" not in _cache:
        recs = debug(ctx, "kentry\n", "gettimeofday", VSYSCALL_ADDR)
        if not recs or recs[0].get("cpl") != 0 or not recs[0].get("symbol"):
            raise Fail("cannot grade: `kentry` on a vsyscall call did not stop in the kernel")
        _cache["handler"] = recs[0]["symbol"].split("+")[0]
    return _cache["handler"]


def ref_script(ctx):
    return (f"break {handler(ctx)}\ncontinue\nbreak {C_HANDLER}\ncontinue\n"
            f"break {emulator(ctx)}\ncontinue\nkexit\n")


def reference(ctx, name, addr, getpid=0, opts=()):
    """The four stops (A handler, C C-handler, E emulator, D back in user
    mode or None when the program died), from the grader's own script."""
    key = ("ref", name, addr, getpid, tuple(opts))
    if key not in _cache:
        recs = debug(ctx, ref_script(ctx), name, addr, getpid, opts)
        if len(recs) != 7 or any(r.get("result") != "ok" for r in recs):
            raise Fail(f"cannot grade: the reference script did not run through on a call to {addr:#x}")
        A, C, E, D = recs[1], recs[3], recs[5], recs[6]
        ip = int(slot(A, "ip")["value"], 16)
        if A.get("cpl") != 0 or ip != addr:
            raise Fail(f"cannot grade: the reference's first stop is no fault at {addr:#x} (ip {ip:#x})")
        if D.get("exited") or D.get("cpl") != 3:
            D = None
        _cache[key] = (A, C, E, D)
    return _cache[key]


def ref_gtod(ctx):
    return reference(ctx, "gettimeofday", VSYSCALL_ADDR)


def hexint(s):
    s = norm(s)
    try:
        return int(s, 16) if s.startswith("0x") else int(s, 10)
    except ValueError:
        return None


def yesno(s):
    s = norm(s)
    if s in ("yes", "y", "true", "1"):
        return True
    if s in ("no", "n", "false", "0"):
        return False
    return None


def symname(s):
    s = norm(s).strip("<>").replace("()", "")
    return re.sub(r"\+0x0+$", "", s)


def regname(s):
    """rbp / ebp / %rbp / bp -> bp."""
    s = norm(s).strip("%")
    if s.startswith("pt_regs") or s.startswith("regs"):
        return s
    if len(s) == 3 and s[0] in "er" and s[1:] in ("ax", "bx", "cx", "dx", "si", "di", "bp", "sp"):
        return s[1:]
    return s


def check_keys(ctx, wants):
    """wants: list of (key, ok(answer) -> bool, expected text, hint)."""
    bad = []
    for key, ok, exp, hint in wants:
        a = ctx.answer(key)
        if not a:
            bad.append(f"'{key}' is empty (expected {exp})")
        elif not ok(a):
            bad.append(f"'{key}: {a}' is wrong: {hint}")
    if bad:
        raise Fail("; ".join(bad))


# ---------------------------------------------------------------- Task 1

def match_stops(recs, ref, who):
    """The student's transcript must pass through the reference's stops, in
    order, at the same rip and instruction count."""
    names = ("1 (the fault handler's first instruction)", "2 (the C exception handler)",
             "3 (the emulating function)", "4 (back in user mode)")
    i = 0
    for n, want in enumerate(ref):
        if want is None:
            continue
        j = next((k for k in range(i, len(recs))
                  if recs[k].get("rip") == want["rip"]
                  and recs[k].get("instructions") == want["instructions"]
                  and recs[k].get("cpl") == want["cpl"]), None)
        if j is None:
            why = ""
            for r in recs[i:]:
                if r.get("result") == "error":
                    why = f"; script line {r.get('line')} ({r.get('command')!r}) failed"
                    break
                if r.get("exited"):
                    why = (f"; the program ended during script line {r.get('line')} "
                           f"({r.get('command')!r})")
                    break
            if not recs:
                why = "; the transcript is empty (no commands in the script?)"
            elif not why:
                k = next((r for r in recs[i:] if r.get("cpl") == 0), None)
                if k is not None:
                    why = (f"; after the previous stop your script next stops in the kernel at "
                           f"{k.get('symbol')} (instruction {k.get('instructions')}), which is not it")
            raise Fail(f"{who}: no stop {names[n]}, or not in this order{why}")
        i = j + 1


def check_script(ctx, cases, hidden=False):
    spath = ctx.path("vsyscall.script")
    if not os.path.isfile(spath):
        raise Fail("no vsyscall.script in the work directory")
    for name, addr, getpid, opts, what in cases:
        ref = reference(ctx, name, addr, getpid, opts)
        recs = debug(ctx, spath, name, addr, getpid, opts, script_is_path=True)
        who = what if hidden else f"vsyscall.script on ./{name}"
        match_stops(recs, ref, who)


@g.check("vsyscall.script: gettimeofday", points=8, section="Task 1")
def _(ctx):
    check_script(ctx, [("gettimeofday", VSYSCALL_ADDR, 0, (), "")])


@g.check("vsyscall.script: other calls, conventions and a bad address", points=7,
         section="Task 1", hidden=True)
def _(ctx):
    check_script(ctx, [
        ("prog", VSYSCALL_ADDR + 0x400, 2, ("--convention", "v4.16"),
         "vsyscall.script on a program that makes two system calls first, v4.16"),
        ("prog", VSYSCALL_ADDR + 0x800, 1, ("--cpu", "intel"),
         "vsyscall.script on another vsyscall after a system call, --cpu intel"),
        ("prog", VSYSCALL_ADDR + 0x402, 1, (),
         "vsyscall.script on a call the kernel cannot emulate (stops 1 to 3)"),
    ], hidden=True)


@g.check("the fault: handler, vector, error code", points=6, section="Task 1")
def _(ctx):
    A, C, E, D = ref_gtod(ctx)
    vec, err = reg(C, "rsi"), reg(C, "rdx")
    check_keys(ctx, [
        ("fault.handler", lambda a: symname(a) == A["symbol"].split("+")[0], "a kernel symbol",
         "the symbol of stop 1 (the first kernel instruction after the call)"),
        ("fault.vector", lambda a: hexint(a) == vec, "a number",
         f"the second argument (rsi) of {C_HANDLER} at stop 2"),
        ("fault.error_code", lambda a: hexint(a) == err, "a hex number (0x...)",
         f"the third argument (rdx) of {C_HANDLER} at stop 2, or pt_regs->orig_ax at stop 1"),
    ])


@g.check("the fault: error code bits", points=5, section="Task 1")
def _(ctx):
    A, C, E, D = ref_gtod(ctx)
    err = reg(C, "rdx")
    check_keys(ctx, [(k, lambda a, v=bool(err & bit): yesno(a) == v, "yes or no",
                      "decode the error code bit by bit (Intel SDM Vol. 3A, 4.7; "
                      "kernel_model/traps.c names two of the bits)")
                     for k, bit in PF_BITS.items()])


@g.check("who handles and who emulates", points=5, section="Task 1")
def _(ctx):
    A, C, E, D = ref_gtod(ctx)
    check_keys(ctx, [
        ("fault.c_handler", lambda a: symname(a) == C["symbol"].split("+")[0], "a function name",
         "the C function the entry code of stop 1 calls (kernel_model/entry_64.S, idtentry)"),
        ("emulate.function", lambda a: symname(a) == E["symbol"].split("+")[0], "a function name",
         "the function stop 2's C code calls for a fetch fault in the vsyscall page "
         "(kernel_model/traps.c)"),
    ])


@g.check("where the call returns to", points=6, section="Task 1")
def _(ctx):
    A, C, E, D = ref_gtod(ctx)
    if D is None:
        raise Fail("cannot grade: the reference gettimeofday call did not return")
    sp = int(slot(A, "sp")["value"], 16)
    delta = reg(D, "rsp") - sp
    check_keys(ctx, [
        ("ret.addr", lambda a: hexint(a) == int(D["rip"], 16), "a hex address",
         "the rip of stop 4 in your t-gettimeofday.jsonl"),
        ("ret.slot_addr", lambda a: hexint(a) == sp, "a hex address",
         "where did the call push its return address, and which pt_regs slot at stop 1 "
         "says where that is? (made and run as ./gettimeofday, as the handout does: the "
         "stack's addresses depend on the program's name)"),
        ("ret.sp_delta", lambda a: hexint(a.lstrip("+")) == delta, "a number",
         "rsp at stop 4 minus pt_regs->sp at stop 1"),
    ])


# ---------------------------------------------------------------- Task 2

def outcome(ctx, addr):
    """What a call to addr does under entrysim: (name, nr) of the emulated
    system call, or the name of the signal that ends the program."""
    key = ("outcome", addr)
    if key not in _cache:
        d = program(ctx, "prog", addr)
        rep = os.path.join(ctx.tempdir(), "r.json")
        p = ctx.entrysim_run(["run", "--timing-json", rep, "./prog"], cwd=d, ok=None, timeout=60)
        if p.returncode == 0:
            rows = [r for r in ctx.json_file(rep).get("per_syscall", []) if r.get("entry") == "vsyscall"]
            if len(rows) != 1:
                raise Fail(f"cannot grade: a call to {addr:#x} returned with {len(rows)} vsyscall rows")
            _cache[key] = (rows[0]["name"], rows[0]["nr"])
        elif p.returncode > 128:
            _cache[key] = signal.Signals(p.returncode - 128).name
        else:
            raise Fail(f"cannot grade: a program calling {addr:#x} exited {p.returncode}")
    return _cache[key]


@g.check("where the number goes, and a bad address", points=5, section="Task 2")
def _(ctx):
    A, C, E, D = reference(ctx, "time", VSYSCALL_ADDR + 0x400)
    got = outcome(ctx, VSYSCALL_ADDR + 0x400)
    if D is None or isinstance(got, str):
        raise Fail("cannot grade: the reference time call did not return")
    fields = {s["field"] for s in D["pt_regs"] if int(s["value"], 16) == got[1]}
    d = program(ctx, "misaligned", VSYSCALL_ADDR + 4)
    p = ctx.entrysim_run(["run", "./misaligned"], cwd=d, ok=None)
    if p.returncode <= 128:
        raise Fail(f"cannot grade: a call to {VSYSCALL_ADDR + 4:#x} exited {p.returncode}, not by a signal")
    sig = signal.Signals(p.returncode - 128).name

    def field_ok(a):
        a = norm(a)
        for pre in ("pt_regs.", "pt_regs->", "regs->", "regs."):
            a = a.replace(pre, "")
        # user-space headers spell the slots with r (orig_rax, rip, rsp)
        return a in fields or (a.startswith("orig_r") and "orig_" + a[6:] in fields)
    check_keys(ctx, [
        ("nr.where", field_ok, "a pt_regs field name",
         f"the pt_regs slot holding time's number ({got[1]}) once the program runs again "
         "(your t-time.jsonl, kernel_model/vsyscall.c)"),
        ("bad.status", lambda a: hexint(a) == p.returncode, "a number",
         "the exit status of `entrysim run ./misaligned`"),
        ("bad.signal", lambda a: norm(a).upper().replace("SIG", "") == sig.replace("SIG", ""),
         "SIGxxx", "`entrysim run --help` says which signal an exit status above 128 means"),
    ])


def run_vaddr(ctx, addr_text):
    script = ctx.path("vaddr.py")
    if not os.path.isfile(script):
        raise Fail("no vaddr.py in the work directory")
    p = ctx.run([sys.executable, script, addr_text], timeout=30)
    if p.returncode != 0:
        tail = " / ".join((p.stderr or "").strip().splitlines()[-3:])
        raise Fail(f"python3 vaddr.py {addr_text} exited {p.returncode}: {tail}")
    return p.stdout.strip()


def vaddr_ok(out, truth):
    toks = out.split()
    if isinstance(truth, str):
        return len(toks) == 1 and toks[0].upper().replace("SIG", "") == truth.replace("SIG", "")
    return (len(toks) == 2 and toks[0].lower() == truth[0] and toks[1].isdigit()
            and int(toks[1]) == truth[1])


def check_vaddr(ctx, addrs, hidden):
    bad = []
    for i, a in enumerate(addrs):
        truth = outcome(ctx, int(a, 16))
        out = run_vaddr(ctx, a)
        if not vaddr_ok(out, truth):
            want = truth if isinstance(truth, str) else f"{truth[0]} {truth[1]}"
            what = f"an address not in the handout (#{i + 1})" if hidden else a
            bad.append(f"vaddr.py {what} printed {out[:60]!r}, entrysim does: {want}")
    if bad:
        raise Fail("; ".join(bad))


@g.check("vaddr.py: the handout's addresses", points=10, section="Task 2")
def _(ctx):
    check_vaddr(ctx, VADDR_SHOWN, False)


@g.check("vaddr.py: other addresses", points=8, section="Task 2", hidden=True)
def _(ctx):
    check_vaddr(ctx, VADDR_HIDDEN, True)


# ---------------------------------------------------------------- Task 3

def getcpu_runs(ctx):
    """For each convention: the registers and pt_regs at getcpu's table
    target (the function sys_call_table[getcpu] points to, from exposure),
    and back in user mode."""
    if "getcpu" not in _cache:
        out = {}
        for conv in ("v4.16", "v4.17"):
            target = probe(exposure(ctx, "getcpu", conv), "table_target")["symbol"]
            recs = debug(ctx, "continue\nkexit\n", "getcpu", VSYSCALL_ADDR + 0x800,
                         opts=("--convention", conv, "--break", target))
            if len(recs) != 2 or recs[0].get("symbol") != target + "+0x0" or recs[1].get("cpl") != 3:
                raise Fail(f"cannot grade: the {conv} getcpu run did not stop at {target} and return")
            out[conv] = (target, recs[0], recs[1])
        _cache["getcpu"] = out
    return _cache["getcpu"]


@g.check("getcpu's third argument and the caller's rdx", points=9, section="Task 3")
def _(ctx):
    runs = getcpu_runs(ctx)
    t16, at16, back16 = runs["v4.16"]
    t17, at17, back17 = runs["v4.17"]
    # v4.16's sys_getcpu is a C function taking (cpu, node, cache): its
    # third argument is in rdx (System V AMD64 psABI, 3.2.3).  v4.17's
    # __x64_sys_getcpu takes only regs and reads the cache from regs->dx.
    cache16 = reg(at16, "rdx")
    cache17 = int(slot(at17, "dx")["value"], 16)
    obj = exposure(ctx, "getcpu", "v4.17")
    saved = [r for r, labels in probe(obj, "table_target")["regs"].items() if labels == ["rdx"] and r != "rdx"]
    if len(saved) != 1:
        raise Fail(f"cannot grade: the caller's rdx is in {saved} at {t17}")
    after = {reg(back16, "rdx"), reg(back17, "rdx")}
    if len(after) != 1:
        raise Fail(f"cannot grade: rdx after the call differs between the conventions: {sorted(after)}")
    after = after.pop()

    def num(a):
        return 0 if norm(a) in ("null", "(nil)") else hexint(a)
    check_keys(ctx, [
        ("getcpu.cache.v4.16", lambda a: num(a) == cache16, "a number",
         f"rdx at the first instruction of {t16} (your g416.jsonl)"),
        ("getcpu.cache.v4.17", lambda a: num(a) == cache17, "a number",
         f"pt_regs->dx at the first instruction of {t17} (your g417.jsonl)"),
        ("getcpu.saved_in", lambda a: regname(a) == regname(saved[0]), "a register",
         f"the register labelled rdx at {t17} in `entrysim exposure --entry vsyscall --syscall getcpu`"),
        ("getcpu.rdx_after", lambda a: hexint(a) == after, "a hex number",
         "rdx at the last stop of g416.jsonl and g417.jsonl"),
    ])


def exposed_set(obj):
    p = probe(obj, "body")
    return {(r, frozenset(p["regs"].get(r, []))) for r in p["exposed"]}


def parse_exposed(a):
    """'rcx=rcx rbp=rdx' (also 'rbp = rdx!', commas between registers;
    several labels as exposure prints them, 'rsi=rdi,rsi') -> {(reg, labels)}."""
    a = re.sub(r"\s*([=:])\s*", r"\1", a.strip().lower())
    a = a.replace("!", " ").replace(";", " ").strip()
    if a in ("none", "-", "()", ""):
        return set()
    out = set()
    for word in a.split():
        for tok in re.split(r",(?=%?[a-z0-9]+[=:])", word.strip(",")):
            m = re.fullmatch(r"%?([a-z0-9]+)[=:]\{?([a-z0-9+,|]+)\}?", tok.strip(","))
            if not m:
                return None
            out.add((m.group(1), frozenset(x for x in re.split(r"[+,|]", m.group(2)) if x)))
    return out


@g.check("what getcpu exposes under each convention", points=8, section="Task 3")
def _(ctx):
    wants = []
    for conv in ("v4.16", "v4.17"):
        obj = exposure(ctx, "getcpu", conv)
        truth = exposed_set(obj)
        body = probe(obj, "body")["symbol"]
        wants.append((f"exposed.{conv}", lambda a, t=truth: parse_exposed(a) == t,
                      "reg=label words, or none",
                      f"the registers with ! at the body probe ({body}) of `entrysim exposure "
                      f"--entry vsyscall --syscall getcpu --convention {conv}`, each as reg=label"))
    check_keys(ctx, wants)


def commit_ok(truth):
    def f(a):
        a = norm(a)
        return len(a) >= 7 and re.fullmatch(r"[0-9a-f]+", a) is not None and \
            (truth.startswith(a) or a.startswith(truth))
    return f


@g.check("which commit did what", points=7, section="Task 3")
def _(ctx):
    base = exposure(ctx, "getcpu", "v4.16")
    base_regs = {r for r, _ in exposed_set(base)}
    saves, clears = [], []
    for c in CODE_COMMITS:
        obj = exposure(ctx, "getcpu", patches=c)
        body = probe(obj, "body")["regs"]
        ident = (obj.get("patches") or [c])[0]
        if any(labels == ["rdx"] and r != "rdx" for r, labels in body.items()):
            saves.append(ident)
        if base_regs - {r for r, _ in exposed_set(obj)}:
            clears.append(ident)
    if len(saves) != 1 or len(clears) != 1:
        raise Fail(f"cannot grade: commits saving rdx {saves}, clearing {sorted(base_regs)} {clears}")
    check_keys(ctx, [
        ("commit.saves_dx", commit_ok(saves[0]), "7 or more hex digits of a commit id",
         "run exposure with --patches and one commit at a time; docs/series/ has each commit's page"),
        ("commit.clears_rcx", commit_ok(clears[0]), "7 or more hex digits of a commit id",
         "run exposure with --patches and one commit at a time; which one alone makes v4.16's "
         "exposed register go away?"),
    ])


# ---------------------------------------------------------------- Task 4

@g.check("the page: readable, mode, xonly", points=8, section="Task 4")
def _(ctx):
    d = program(ctx, "peek", VSYSCALL_ADDR, read=True)
    p = ctx.entrysim_run(["run", "./peek"], cwd=d, ok=None)
    readable = p.returncode == 0
    emulated = not isinstance(outcome(ctx, VSYSCALL_ADDR), str)
    # Linux's modes (Documentation/admin-guide/kernel-parameters.txt,
    # vsyscall=): emulate = calls trap and are emulated, the page is
    # readable; xonly = calls are emulated, the page is not readable;
    # none = vsyscalls do not work.
    mode = ("emulate" if readable else "xonly") if emulated else "none"
    # Linux 5.3+ arch/x86/entry/vsyscall/vsyscall_64.c, map_vsyscall(): "In
    # execute-only mode, there is no PTE at all backing the vsyscall page",
    # so the same fetch finds no translation: the CPU pushes the error code
    # with P (bit 0) clear (Intel SDM Vol. 3A, 4.7), the other bits as
    # measured.  (Linux then reports user faults on kernel addresses to
    # signal handlers with X86_PF_PROT set anyway; the question is about
    # what the CPU pushes.)
    err = reg(ref_gtod(ctx)[1], "rdx")
    check_keys(ctx, [
        ("page.readable", lambda a: yesno(a) == readable, "yes or no",
         "the exit status of `entrysim run ./peek`"),
        ("page.mode", lambda a: norm(a).replace("vsyscall=", "") == mode, "none, emulate or xonly",
         "the vsyscall= entry of Linux's kernel-parameters.txt that fits a page you can read "
         "and call"),
        ("xonly.error_code", lambda a: hexint(a) == err & ~0x1, "a hex number (0x...)",
         "under xonly there is no page table entry for the page at all: which bit of your "
         "fault.error_code changes?"),
    ])


@g.check("why emulate: the gadget and Linux's defaults", points=8, section="Task 4")
def _(ctx):
    # kernel_model/vsyscall_page.S (as Linux's vsyscall_emu_64.S): each
    # entry is `mov $NR, %rax` (7 bytes: 48 c7 c0 imm32), `syscall`, `ret`.
    # Andy Lutomirski, "x86-64: Emulate legacy vsyscalls" (Linux 3.1,
    # 5cec93c216db): the page "contains a syscall instruction ... who knows
    # what will happen if an exploit jumps into the middle".
    gadget_words = {"syscall", "syscall;ret", "syscallret", "0f05", "0f05c3"}
    gadget_addr = VSYSCALL_ADDR + 7
    # Linux 4.17 arch/x86/Kconfig: choice "vsyscall table for legacy
    # applications", default LEGACY_VSYSCALL_EMULATE (kernel-parameters.txt:
    # "emulate [default]").  Linux 5.3 (merged through tip x86/entry):
    # 625b7b7f79c6 "x86/vsyscall: Change the default vsyscall mode to
    # xonly", default LEGACY_VSYSCALL_XONLY.
    check_keys(ctx, [
        ("why.gadget", lambda a: norm(a).replace(",", ";") in gadget_words, "an instruction",
         "look at the bytes `peek.script` prints and at kernel_model/vsyscall_page.S"),
        ("gadget.addr", lambda a: hexint(a) == gadget_addr, "a hex address",
         "the address of that instruction in the entry at 0xffffffffff600000 (count the bytes)"),
        ("linux.default.v4.17", lambda a: norm(a).replace("vsyscall=", "") == "emulate",
         "a vsyscall= mode", "Linux 4.17's arch/x86/Kconfig or kernel-parameters.txt"),
        ("linux.default.now", lambda a: norm(a).replace("vsyscall=", "") == "xonly",
         "a vsyscall= mode", "arch/x86/Kconfig of Linux 5.3 or later (commit 625b7b7f79c6)"),
    ])


g.main()
