import os, sys; sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from grading import Grader, Fail, norm

# Lab 05: the three ways an i386 program enters a 64-bit kernel.
#
# Every expected answer is measured at grading time:
#   - which vendor accepts which entry: `entrysim exposure --json` (exit 0 and
#     a JSON object) or its refusal (exit 2, nothing on stdout);
#   - which entry the vDSO uses: `entrysim run --timing-json` of sysloop32;
#   - what the hardware does with a fast entry on the wrong vendor: the exit
#     status of kernel_model/tests/fast32_{sysenter,syscall};
#   - return address, saved stack pointer, landing pad, pt_regs offsets:
#     debugger transcripts (--transcript, JSON lines) of a reference script;
#   - argument registers: the `body` probe of `entrysim exposure --json`.
# The only constants are the x86-64 C calling convention (which register
# holds a C function's i-th integer argument) and the Linux rule saying
# which pt_regs slot do_fast_syscall_32 reads arg 6 through; both are cited
# where they are used.

import json
import re
import signal

g = Grader(__file__)

ENTRIES = ("int80", "sysenter32", "syscall32")
VENDORS = ("intel", "amd")

# System V AMD64 psABI, section 3.2.3 "Parameter Passing": a C function's
# integer arguments 1..6 arrive in rdi, rsi, rdx, rcx, r8, r9.  The body
# probe (__do_sys_NAME) is such a C function.
C_ABI = ("rdi", "rsi", "rdx", "rcx", "r8", "r9")

# What the grader runs the debugger with (the student's fast32.script must
# stop at the same four places, see the handout, Task 2).
REF_SCRIPT = """syscall
step
break do_int80_syscall_32
break do_fast_syscall_32
continue
kexit
"""

DISPATCHERS = ("do_int80_syscall_32+0x0", "do_fast_syscall_32+0x0")

_cache = {}


# ---------------------------------------------------------------- helpers

def bindir(ctx):
    return os.path.dirname(os.path.realpath(ctx.entrysim))


def program(ctx, rel):
    """A program built next to entrysim (bench/sysloop32, guest/..., ...)."""
    p = os.path.join(bindir(ctx), rel)
    if not os.path.isfile(p):
        raise Fail(f"cannot grade: {p} is missing (built with entrysim when gcc -m32 works)")
    return p


def sysloop32(ctx):
    return program(ctx, os.path.join("bench", "sysloop32"))


def env_with_entrysim(ctx):
    """argregs.py finds entrysim on PATH (or $ENTRYSIM)."""
    os.environ["ENTRYSIM"] = ctx.entrysim
    path = os.environ.get("PATH", "")
    if bindir(ctx) not in path.split(os.pathsep):
        os.environ["PATH"] = bindir(ctx) + os.pathsep + path


def exposure(ctx, entry, syscall, cpu=None):
    """One exposure object (v4.17), or None when entrysim refuses the
    combination (exit 2 and no JSON)."""
    key = ("exp", entry, syscall, cpu)
    if key not in _cache:
        args = ["exposure", "--entry", entry, "--syscall", syscall, "--convention", "v4.17", "--json"]
        if cpu:
            args += ["--cpu", cpu]
        p = ctx.entrysim_run(args, ok=None)
        if p.returncode == 2 and not p.stdout.strip():
            _cache[key] = (None, p.returncode)
        elif p.returncode != 0:
            raise Fail(f"entrysim {' '.join(args)} exited {p.returncode}: {p.stderr.strip()[-200:]}")
        else:
            objs = json.loads(p.stdout)
            if not isinstance(objs, list) or len(objs) != 1:
                raise Fail(f"entrysim {' '.join(args)}: expected one JSON object")
            _cache[key] = (objs[0], 0)
    return _cache[key]


def arg_sources(ctx, entry, syscall):
    """The user register (as named at the entry instruction) each argument
    of SYSCALL comes from, through ENTRY under v4.17: 'stack' for an
    argument read from the user stack (label 'mem')."""
    obj, _ = exposure(ctx, entry, syscall)
    if obj is None:
        raise Fail(f"entrysim refused exposure --entry {entry} --syscall {syscall}")
    body = [p for p in obj["probes"] if p["point"] == "body"]
    out = []
    for i in range(obj["arity"]):
        if not body or not body[0]["reached"]:
            raise Fail(f"exposure {entry} {syscall}: the body probe was not reached")
        labels = body[0]["regs"].get(C_ABI[i], [])
        out.append("+".join("stack" if l == "mem" else l for l in labels) or "?")
    return out


def timing_entry(ctx, cpu):
    """The entry sysloop32's getpid calls through __kernel_vsyscall take."""
    key = ("vdso", cpu)
    if key not in _cache:
        d = ctx.tempdir()
        out = os.path.join(d, f"vdso-{cpu}.json")
        ctx.entrysim_run(["run", "--cpu", cpu, "--timing-json", out, sysloop32(ctx),
                          "sysenter32", "getpid", "2"])
        rep = ctx.json_file(out)
        ent = {p["entry"] for p in rep.get("per_syscall", []) if p.get("name") == "getpid"}
        if len(ent) != 1:
            raise Fail(f"timing report of sysloop32 under --cpu {cpu}: getpid rows {sorted(ent)}")
        _cache[key] = ent.pop()
    return _cache[key]


def debug_transcript(ctx, script_text, cpu, argv, script_path=None):
    """Runs the debugger headless; returns (exit status, transcript records)."""
    d = ctx.tempdir()
    if script_path is None:
        script_path = os.path.join(d, "s.script")
        with open(script_path, "w") as f:
            f.write(script_text)
    tr = os.path.join(d, "t.jsonl")
    p = ctx.entrysim_run(["debug", "--cpu", cpu, "--script", script_path, "--transcript", tr] + argv,
                         ok=None, timeout=60)
    recs = []
    if os.path.exists(tr) and os.path.getsize(tr) > 0:
        recs = ctx.json_file(tr)
        if isinstance(recs, dict):
            recs = [recs]
    return p.returncode, recs


def walk(recs, who):
    """The four states of Task 2 in a transcript: A the user-mode entry
    instruction, B the kernel's first instruction (one instruction later),
    C the first instruction of the C dispatcher, D the first stop back in
    user mode after C."""
    def why_not():
        for r in recs:
            if r.get("exited"):
                return (f"; the program exited during script line {r.get('line')} "
                        f"({r.get('command')!r}): it ran to a place this path never reaches")
            if r.get("result") == "error":
                return f"; script line {r.get('line')} ({r.get('command')!r}) failed"
        return ""
    ia = None
    for i in range(len(recs) - 1):
        a, b = recs[i], recs[i + 1]
        if a.get("cpl") == 3 and b.get("cpl") == 0 and b.get("instructions") == a.get("instructions", -9) + 1:
            ia = i
            break
    if ia is None:
        raise Fail(f"{who}: no stop at the user-mode entry instruction followed by a stop one "
                   "instruction later in the kernel (stops 1 and 2)" + why_not())
    A, B = recs[ia], recs[ia + 1]
    C = next((j for j in range(ia + 2, len(recs))
              if recs[j].get("cpl") == 0 and recs[j].get("symbol") in DISPATCHERS), None)
    if C is None:
        raise Fail(f"{who}: after the entry, no stop at the first instruction of the C dispatcher "
                   "(do_int80_syscall_32 or do_fast_syscall_32; stop 3)" + why_not())
    D = next((recs[j] for j in range(C + 1, len(recs))
              if recs[j].get("cpl") == 3 and not recs[j].get("exited")), None)
    if D is None:
        raise Fail(f"{who}: after the dispatcher, no stop back in user mode with the program still "
                   "running (stop 4)" + why_not())
    return A, B, recs[C], D


def reference(ctx, cpu, argv):
    key = ("ref", cpu, tuple(argv))
    if key not in _cache:
        rc, recs = debug_transcript(ctx, REF_SCRIPT, cpu, argv)
        _cache[key] = walk(recs, "reference run (grader)")
    return _cache[key]


def ref_vdso(ctx, cpu):
    return reference(ctx, cpu, [sysloop32(ctx), "sysenter32", "getpid", "1"])


def ref_int80(ctx):
    return reference(ctx, "amd", [sysloop32(ctx), "int80", "getpid", "1"])


def ref_for(ctx, entry):
    return ref_int80(ctx) if entry == "int80" else ref_vdso(ctx, "intel" if entry == "sysenter32" else "amd")


def labels(s):
    return [x for x in (s or "").split(",") if x]


def where_eip(B):
    """Where the user's return address (label 'eip') is at the kernel's
    first instruction: a register, a written pt_regs slot, or nowhere."""
    for reg, lab in sorted((B.get("taint") or {}).items()):
        if "eip" in labels(lab) and reg not in ("rip",):
            return ("reg", reg)
    for slot in B.get("pt_regs") or []:
        if slot.get("written") and "eip" in labels(slot.get("taint")):
            return ("slot", slot["field"])
    return ("none", None)


def slot(rec, field):
    for s in rec.get("pt_regs") or []:
        if s["field"] == field:
            return s
    raise Fail(f"transcript has no pt_regs slot {field}")


def reg_core(s):
    """ebx / rbx / bx -> bx (a user register however it is spelled)."""
    s = norm(s).strip("%")
    if len(s) == 3 and s[0] in "er" and s[1:] in ("ax", "bx", "cx", "dx", "si", "di", "bp", "sp", "ip"):
        return s[1:]
    return s


STACK_WORDS = {"stack", "mem", "memory", "userstack", "user_stack", "[esp]", "[ebp]", "(%esp)", "(%ebp)"}


def arg_token(s):
    s = norm(s).strip("%")
    if s in STACK_WORDS:
        return "stack"
    return reg_core(s)


def hexint(s):
    try:
        return int(norm(s), 16) if norm(s).startswith("0x") else int(norm(s), 0)
    except ValueError:
        return None


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

def vendor_set(ctx, entry):
    ok = []
    for cpu in VENDORS:
        obj, _ = exposure(ctx, entry, "getpid", cpu)
        if obj is not None and obj.get("cpu") == cpu:
            ok.append(cpu)
    return "both" if len(ok) == 2 else (ok[0] if ok else "none")


def vendor_ok(truth):
    def f(a):
        v = norm(a).replace("and", ",").replace("+", ",")
        parts = set(x for x in re.split(r"[,/;]+", v) if x)
        if truth == "both":
            return parts == {"both"} or parts == {"intel", "amd"}
        return parts == {truth}
    return f


@g.check("vendors: which CPU accepts which entry", points=8, section="Task 1")
def _(ctx):
    wants = []
    for e in ENTRIES:
        t = vendor_set(ctx, e)
        wants.append((f"vendors.{e}", vendor_ok(t), "intel, amd or both",
                      f"run `entrysim exposure --entry {e} --cpu intel|amd ...` and look at the exit status"))
    # the refusal's exit status, from a refused combination
    _, rc = exposure(ctx, "syscall32", "getpid", "intel")
    wants.append(("refused.status", lambda a: a.strip().isdigit() and int(a) == rc, "a number",
                  "the exit status `entrysim exposure` gives for a combination the CPU cannot run"))
    check_keys(ctx, wants)


@g.check("vDSO: which entry __kernel_vsyscall uses on each vendor", points=6, section="Task 1")
def _(ctx):
    wants = []
    for cpu in VENDORS:
        t = timing_entry(ctx, cpu)
        wants.append((f"vdso.{cpu}", lambda a, t=t: norm(a) == t, "int80, sysenter32 or syscall32",
                      f"the 'entry' of getpid's row in the --timing-json report of sysloop32 under --cpu {cpu}"))
    check_keys(ctx, wants)


@g.check("a fast entry on the wrong vendor", points=6, section="Task 1")
def _(ctx):
    sigs = set()
    for prog, cpu in (("fast32_syscall", "intel"), ("fast32_sysenter", "amd")):
        p = ctx.entrysim_run(["run", "--cpu", cpu, program(ctx, os.path.join("kernel_model", "tests", prog))],
                             ok=None)
        if p.returncode <= 128:
            raise Fail(f"cannot grade: {prog} under --cpu {cpu} exited {p.returncode}, not by a signal")
        sigs.add(p.returncode - 128)
    if len(sigs) != 1:
        raise Fail(f"cannot grade: the two programs died of different signals {sorted(sigs)}")
    n = sigs.pop()
    name = signal.Signals(n).name  # the host's (Linux's) numbering, as the guest kernel's

    def ok(a):
        a = norm(a)
        return a in (name.lower(), name[3:].lower(), str(n))
    check_keys(ctx, [("raw.signal", ok, "a signal name such as SIGxxx",
                      "exit status 128+N means the guest died of signal N (entrysim run --help)")])


# ---------------------------------------------------------------- Task 2

def student_script(ctx):
    p = ctx.path("fast32.script")
    if not os.path.isfile(p):
        raise Fail("no fast32.script in the work directory")
    with open(p) as f:
        body = [l.split("#", 1)[0].strip() for l in f]
    if not any(body):
        raise Fail("fast32.script has no commands yet")
    return p


def check_script(ctx, cpu, argv, what):
    script = student_script(ctx)
    ref = reference(ctx, cpu, argv)
    rc, recs = debug_transcript(ctx, None, cpu, argv, script_path=script)
    if not recs:
        raise Fail(f"fast32.script on {what}: the debugger wrote no transcript (exit {rc})")
    A, B, C, D = walk(recs, f"fast32.script on {what}")
    rA, rB, rC, rD = ref
    if A["rip"] != rA["rip"]:
        raise Fail(f"fast32.script on {what}: the first entry instruction is at {rA['rip']}, "
                   f"your script stopped at {A['rip']}")
    if B["symbol"] != rB["symbol"]:
        raise Fail(f"fast32.script on {what}: the kernel's first instruction is {rB['symbol']}, "
                   f"your script shows {B['symbol']}")
    if C["symbol"] != rC["symbol"] or C["instructions"] != rC["instructions"]:
        raise Fail(f"fast32.script on {what}: expected a stop at {rC['symbol']} "
                   f"(instruction {rC['instructions']}), got {C['symbol']} ({C['instructions']})")
    if D["rip"] != rD["rip"] or D["instructions"] != rD["instructions"]:
        raise Fail(f"fast32.script on {what}: the return to user mode is at {rD['rip']} "
                   f"(instruction {rD['instructions']}); your last stop is {D['rip']} ({D['instructions']})")


@g.check("fast32.script: through the vDSO on Intel", points=5, section="Task 2")
def _(ctx):
    check_script(ctx, "intel", [sysloop32(ctx), "sysenter32", "getpid", "1"], "sysloop32 --cpu intel")


@g.check("fast32.script: through the vDSO on AMD", points=5, section="Task 2")
def _(ctx):
    check_script(ctx, "amd", [sysloop32(ctx), "sysenter32", "getpid", "1"], "sysloop32 --cpu amd")


@g.check("fast32.script: through int $0x80", points=5, section="Task 2")
def _(ctx):
    check_script(ctx, "amd", [sysloop32(ctx), "int80", "getpid", "1"], "sysloop32 int80")


@g.check("fast32.script: other programs and vendors", points=5, section="Task 2", hidden=True)
def _(ctx):
    check_script(ctx, "intel", [program(ctx, os.path.join("kernel_model", "tests", "fast32_sysenter"))],
                 "another program (Intel)")
    check_script(ctx, "amd", [program(ctx, os.path.join("guest", "i386_glibc_hello"))],
                 "another program (AMD, int $0x80)")
    check_script(ctx, "intel", [program(ctx, os.path.join("guest", "getpid32")), "2"],
                 "another program (Intel, int $0x80)")


def retaddr_ok(truth):
    kind, name = truth

    def f(a):
        a = norm(a)
        if kind == "none":
            return a in ("none", "nowhere", "lost", "-", "nothing")
        if kind == "reg":
            return reg_core(a) == reg_core(name)
        forms = {f"pt_regs.{name}", f"pt_regs->{name}", f"regs->{name}", f"pt_regs.{name}(kernelstack)"}
        return a in forms
    return f


def retaddr_text(truth):
    kind, name = truth
    return {"none": "none", "reg": name, "slot": f"pt_regs.{name}"}[kind]


@g.check("where the user's return address is after the entry instruction", points=8, section="Task 2")
def _(ctx):
    wants = []
    for e in ENTRIES:
        A, B, C, D = ref_for(ctx, e)
        t = where_eip(B)
        wants.append((f"retaddr.{e}", retaddr_ok(t), "a register (rcx...), pt_regs.FIELD or none",
                      f"look for the label 'eip' in the transcript's 'taint' and 'pt_regs' at the kernel's "
                      f"first instruction ({B['symbol']})"))
    check_keys(ctx, wants)


@g.check("which user register pt_regs->sp is saved from", points=7, section="Task 2")
def _(ctx):
    wants = []
    for e in ENTRIES:
        A, B, C, D = ref_for(ctx, e)
        t = labels(slot(C, "sp")["taint"])
        if len(t) != 1:
            raise Fail(f"cannot grade: pt_regs.sp at {C['symbol']} has labels {t}")
        wants.append((f"usersp.{e}", lambda a, t=t[0]: reg_core(a) == reg_core(t), "a user register (esp...)",
                      f"the taint of the pt_regs slot 'sp' at {C['symbol']} in your {e} transcript"))
    check_keys(ctx, wants)


@g.check("where the fast entries return to", points=5, section="Task 2")
def _(ctx):
    pads = {ref_vdso(ctx, cpu)[3]["rip"] for cpu in VENDORS}
    if len(pads) != 1:
        raise Fail(f"cannot grade: the two vendors return to different addresses {sorted(pads)}")
    pad = int(pads.pop(), 16)
    check_keys(ctx, [("landing_pad", lambda a: hexint(a) == pad, "a hex address",
                      "the rip of the last stop (kexit) of your Intel and AMD sysloop32 transcripts")])


# ---------------------------------------------------------------- Task 3

def args_ok(truth):
    def f(a):
        toks = [t for t in re.split(r"[\s,;]+", a.strip()) if t]
        return [arg_token(t) for t in toks] == [arg_token(t) for t in truth]
    return f


@g.check("the six argument registers of each entry", points=12, section="Task 3")
def _(ctx):
    wants = []
    for e in ENTRIES:
        t = arg_sources(ctx, e, "pselect6")
        if len(t) != 6:
            raise Fail(f"cannot grade: pselect6 has {len(t)} arguments")
        wants.append((f"args.{e}", args_ok(t), "six words: registers in argument order, 'stack' for the user stack",
                      f"the body probe of `entrysim exposure --entry {e} --syscall pselect6 --convention v4.17`"))
    check_keys(ctx, wants)


@g.check("the ia32 stub and do_fast_syscall_32 read pt_regs", points=8, section="Task 3")
def _(ctx):
    # arg 6 through int $0x80 is in a user register; the stub reads the
    # pt_regs slot of that register (the slot names are the register names
    # without e/r: pt_regs.bp holds the user's ebp).  Offsets come from the
    # transcript's pt_regs list (the layout of Linux's struct pt_regs).
    a6 = arg_sources(ctx, "int80", "pselect6")[5]
    A, B, C, D = ref_int80(ctx)
    field6 = reg_core(a6)
    off6 = slot(C, field6)["offset"]
    # Linux arch/x86/entry/common.c, do_fast_syscall_32(): arg 6 is read
    # from the user stack at regs->sp ("__get_user(*(u32 *)&regs->bp,
    # (u32 __user __force *)(unsigned long)(u32)regs->sp)"); entrysim's
    # kernel_model/common.c does the same.
    off_sp = slot(C, "sp")["offset"]

    def ok_field(a, field, off):
        a2 = norm(a)
        if hexint(a2) is not None and re.fullmatch(r"(0x)?[0-9a-f]+", a2):
            return hexint(a2) == off
        return reg_core(a2.replace("pt_regs.", "").replace("pt_regs->", "").replace("regs->", "")) == field
    check_keys(ctx, [
        ("stub.arg6_offset", lambda a: hexint(a) == off6, "a hex offset",
         "the offset in pt_regs that __ia32_sys_pselect6 loads into r9d (`entrysim explain pselect6`)"),
        ("fast.arg6_from", lambda a: ok_field(a, "sp", off_sp), "a pt_regs field (or its offset)",
         "the pt_regs slot do_fast_syscall_32 reads to find the user address of argument 6 "
         "(`entrysim explain pselect6`, kernel_model/common.c)"),
    ])


def run_argregs(ctx, entry, syscall):
    script = ctx.path("argregs.py")
    if not os.path.isfile(script):
        raise Fail("no argregs.py in the work directory")
    env_with_entrysim(ctx)
    p = ctx.run([sys.executable, script, entry, syscall], timeout=60)
    if p.returncode != 0:
        tail = " / ".join((p.stderr or "").strip().splitlines()[-3:])
        raise Fail(f"python3 argregs.py {entry} ... exited {p.returncode}: {tail}")
    got = {}
    for line in p.stdout.splitlines():
        m = re.match(r"^\s*arg\s*([1-6])\s*[:=]?\s*(\S+)\s*$", line)
        if m:
            got[int(m.group(1))] = m.group(2)
    return got, p.stdout


def check_argregs(ctx, cases, hidden=False):
    for entry, syscall in cases:
        truth = arg_sources(ctx, entry, syscall)
        got, out = run_argregs(ctx, entry, syscall)
        want = {i + 1: t for i, t in enumerate(truth)}
        # a hidden case names the entry and the arity, not the system call
        what = (f"argregs.py {entry} (a {len(want)}-argument call not in the handout)" if hidden
                else f"argregs.py {entry} {syscall}")
        if set(got) != set(want):
            shown = "" if hidden else f": {out.strip()[:200]!r}"
            raise Fail(f"{what}: expected lines arg1..arg{len(want)}, one per argument, "
                       f"got {', '.join(f'arg{i}' for i in sorted(got)) or 'none'}{shown}")
        for i, t in want.items():
            if arg_token(got[i]) != arg_token(t):
                raise Fail(f"{what}: arg{i} is {got[i]!r}, expected {t}")


@g.check("argregs.py: pselect6 and read", points=10, section="Task 3")
def _(ctx):
    check_argregs(ctx, [("int80", "pselect6"), ("sysenter32", "pselect6"), ("syscall32", "pselect6"),
                        ("int80", "read")])


@g.check("argregs.py: other system calls", points=10, section="Task 3", hidden=True)
def _(ctx):
    check_argregs(ctx, [("sysenter32", "mmap2"), ("syscall32", "readv"), ("syscall32", "futex"),
                        ("int80", "getpid"), ("sysenter32", "write")], hidden=True)


g.main()
