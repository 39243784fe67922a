import os, sys; sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from grading import Grader, Fail, norm

import re
import struct

g = Grader(__file__)

# The program of the handout: a copy of guest/asm64/hello.S built by the
# project (write(1, msg, 13); exit_group(0)).  The grader traces its own
# copy, not the student's, so a rebuilt or replaced work/hello cannot shift
# the expected values.
HELLO = os.path.join(g.labdir, "starter", "hello")

# The visible configuration: the handout's command line.
VISIBLE = dict(key="visible", prog="hello", syscall="write",
               args=["--convention", "v4.17"], conv="v4.17", mitig=None)
# Hidden configurations: the student's trace.script must hold up on them too.
# (1) another program, whose first system call is getpid, at another address,
#     with no symbols at all (written by this grader, below);
# (2) the handout's program under Linux 4.16's convention with PTI and
#     retpolines: other stubs, other instruction counts, RSP used as a
#     scratch register for the CR3 switch before the stack switch.
HIDDEN_PROG = dict(key="hidden-prog", prog="other", syscall="getpid",
                   args=["--convention", "v4.17"], conv="v4.17", mitig=None)
HIDDEN_CONF = dict(key="hidden-conf", prog="hello", syscall="write",
                   args=["--convention", "v4.16", "--mitigations", "pti,retpoline"],
                   conv="v4.16", mitig="pti,retpoline")

GPRS = ["rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
        "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"]

_cache = {}


# ---------------------------------------------------------------- programs

def _tiny_elf(code, base, pad):
    """A static ELF64 executable with one PT_LOAD segment and no sections."""
    ehsz, phsz = 64, 56
    off = ehsz + phsz + pad
    size = off + len(code)
    eh = struct.pack("<4sBBBBB7xHHIQQQIHHHHHH", b"\x7fELF", 2, 1, 1, 0, 0,
                     2, 0x3e, 1, base + off, ehsz, 0, 0, ehsz, phsz, 1, 64, 0, 0)
    ph = struct.pack("<IIQQQQQQ", 1, 5, 0, base, base, size, size, 0x1000)
    return eh + ph + b"\x90" * pad + code


def program(ctx, name):
    if name == "hello":
        if not os.path.exists(HELLO):
            raise Fail(f"grader: the lab's copy of hello is missing ({HELLO})")
        return HELLO
    path = _cache.get(("prog", name))
    if path is None:
        # mov edi, 7; mov esi, 9; mov eax, 39 (getpid); syscall;
        # mov eax, 231 (exit_group); xor edi, edi; syscall
        code = bytes.fromhex("bf07000000" "be09000000" "b827000000" "0f05"
                             "b8e7000000" "31ff" "0f05")
        path = os.path.join(ctx.tempdir(), "other")
        with open(path, "wb") as f:
            f.write(_tiny_elf(code, base=0x5230000, pad=0x35))
        os.chmod(path, 0o755)
        _cache[("prog", name)] = path
    return path


# ---------------------------------------------------------------- running

def debug(ctx, conf, script_text=None, script_path=None):
    """entrysim debug with a script; returns the transcript's records."""
    d = ctx.tempdir()
    if script_path is None:
        script_path = os.path.join(d, "s.script")
        with open(script_path, "w") as f:
            f.write(script_text)
    out = os.path.join(d, "t.jsonl")
    ctx.entrysim_run(["debug"] + conf["args"] + ["--script", script_path, "--transcript", out,
                                                  program(ctx, conf["prog"])],
                     timeout=90, ok=None, cwd=d)
    if not os.path.exists(out) or os.path.getsize(out) == 0:
        return []
    recs = ctx.json_file(out)
    return recs if isinstance(recs, list) else [recs]


def exposure(ctx, conf):
    """The dispatcher, table target and body of conf's system call, as
    `entrysim exposure --json` names them."""
    k = ("exp", conf["key"])
    if k not in _cache:
        args = ["exposure", "--syscall", conf["syscall"], "--json", "--convention", conf["conv"]]
        if conf["mitig"]:
            args += ["--mitigations", conf["mitig"]]
        v = ctx.entrysim_json(args)
        objs = v if isinstance(v, list) else [v]
        objs = [o for o in objs if isinstance(o, dict) and o.get("entry", "syscall64") == "syscall64"]
        if not objs:
            raise Fail("grader: entrysim exposure printed no syscall64 case")
        probes = {p["point"]: p["symbol"] for p in objs[0]["probes"]}
        _cache[k] = probes
    return _cache[k]


def H(x):
    return int(x, 16) if isinstance(x, str) else int(x)


def slot(rec, field):
    for p in rec.get("pt_regs") or []:
        if p["field"] == field:
            return p
    raise Fail(f"grader: no pt_regs slot {field} in the transcript")


def ref(ctx, conf):
    """The grader's own trace of conf's first system call, one instruction
    per record (R[0] at the user's syscall instruction, R[-1] back in user
    mode), and what it shows."""
    k = ("ref", conf["key"])
    if k in _cache:
        return _cache[k]
    two = debug(ctx, conf, "syscall\nkexit\n")
    if len(two) < 2 or any(r["result"] != "ok" for r in two) or two[1]["cpl"] != 3:
        raise Fail("grader: cannot run `syscall` then `kexit` on the program "
                   f"({conf['key']}); is entrysim working?")
    n = two[1]["instructions"] - two[0]["instructions"]
    R = debug(ctx, conf, "syscall\n" + "step\n" * n)
    if len(R) != n + 1 or R[-1]["cpl"] != 3 or any(r["result"] != "ok" for r in R):
        raise Fail(f"grader: stepping the system call one instruction at a time failed ({conf['key']})")
    f = dict(R=R, n=n)
    base = H(R[1]["pt_regs_base"])
    size = max(p["offset"] for p in R[1]["pt_regs"]) + 8
    f["pt_regs_base"], f["top"] = base, base + size
    # the stack switch: the first instruction after which RSP is the top of the task stack
    ks = next((i for i in range(1, len(R)) if H(R[i]["regs"]["rsp"]) == f["top"]), None)
    # the orig_ax push: the first instruction after which the slot is written
    ko = next((i for i in range(1, len(R)) if slot(R[i], "orig_ax")["written"]), None)
    probes = exposure(ctx, conf)
    kd = next((i for i, r in enumerate(R) if sym_name(r["symbol"]) == probes["dispatch"]
               and sym_off(r["symbol"]) == 0), None)
    kt = next((i for i, r in enumerate(R) if sym_name(r["symbol"]) == probes["table_target"]
               and sym_off(r["symbol"]) == 0), None)
    if None in (ks, ko, kd, kt):
        raise Fail(f"grader: could not find the stack switch, the orig_ax push, the dispatcher "
                   f"or the table target in its own trace ({conf['key']})")
    f.update(ks=ks - 1, ko=ko - 1, kd=kd, kt=kt, kr=n - 1, probes=probes)
    # symbols seen, for answers given as SYM+OFF
    syms = {}
    for r in R:
        nm = sym_name(r["symbol"])
        if nm:
            syms.setdefault(nm.lower(), H(r["rip"]) - sym_off(r["symbol"]))
    f["syms"] = syms
    _cache[k] = f
    return f


def sym_name(s):
    return (s or "").split("+", 1)[0]


def sym_off(s):
    s = s or ""
    return int(s.split("+", 1)[1], 16) if "+" in s else 0


# ---------------------------------------------------------------- the student's script

def student(ctx, conf):
    k = ("stu", conf["key"])
    if k not in _cache:
        path = ctx.path("trace.script")
        if not os.path.exists(path):
            raise Fail("there is no trace.script in your work directory (Task 1)")
        _cache[k] = debug(ctx, conf, script_path=path)
    return _cache[k]


def need_states(ctx, conf, wanted, hidden=False):
    """Fails unless the student's transcript has a record for each of the
    reference trace's states in `wanted` ([(index, what), ...])."""
    f = ref(ctx, conf)
    S = student(ctx, conf)
    have = {(r["instructions"], r["rip"]) for r in S if r.get("result") in ("ok", "quit")}
    missing = [what for i, what in wanted
               if (f["R"][i]["instructions"], f["R"][i]["rip"]) not in have]
    if not missing:
        return
    err = next((r for r in S if r.get("result") == "error"), None)
    if hidden:
        msg = (f"your trace.script misses {len(missing)} of the {len(wanted)} stops, the first "
               f"one {missing[0]}")
    else:
        msg = "your trace.script never stops " + "; never ".join(missing)
    if not S:
        msg = "trace.script produced no transcript at all (is it empty?)"
    if err:
        msg += f" (it stopped with an error at line {err['line']}: '{err['command']}')"
    if hidden:
        msg += (", on a program or kernel configuration the handout does not use: "
                "no step counts, addresses or names of write's own functions in the script")
    else:
        R = f["R"]
        i = wanted[[w for _, w in wanted].index(missing[0])][0]
        msg += f" (expected a stop with insn {R[i]['instructions']}, rip {R[i]['rip']})"
    raise Fail(msg)


def all_states(f):
    return [(0, "at the syscall instruction"),
            (1, "at the entry point (one step after the syscall)"),
            (f["ks"], "right before the instruction that switches to the kernel stack"),
            (f["ks"] + 1, "right after the stack switch"),
            (f["ko"], "right before the push of orig_ax"),
            (f["ko"] + 1, "right after the push of orig_ax"),
            (f["kd"], "at the first instruction of the dispatcher"),
            (f["kt"], "at the first instruction of the table target"),
            (f["kr"], "at the instruction that returns to user mode"),
            (f["kr"] + 1, "back in user mode after it")]


@g.check("trace.script: the syscall instruction and the entry point", points=4, section="Task 1")
def _(ctx):
    f = ref(ctx, VISIBLE)
    need_states(ctx, VISIBLE, all_states(f)[0:2])


@g.check("trace.script: both sides of the stack switch", points=5, section="Task 1")
def _(ctx):
    f = ref(ctx, VISIBLE)
    need_states(ctx, VISIBLE, all_states(f)[2:4])


@g.check("trace.script: both sides of the orig_ax push", points=5, section="Task 1")
def _(ctx):
    f = ref(ctx, VISIBLE)
    need_states(ctx, VISIBLE, all_states(f)[4:6])


@g.check("trace.script: the dispatcher and the table target", points=4, section="Task 1")
def _(ctx):
    f = ref(ctx, VISIBLE)
    need_states(ctx, VISIBLE, all_states(f)[6:8])


@g.check("trace.script: both sides of the return to user mode", points=5, section="Task 1")
def _(ctx):
    f = ref(ctx, VISIBLE)
    need_states(ctx, VISIBLE, all_states(f)[8:10])


@g.check("trace.script on another program (first syscall not write)", points=8,
         section="Task 1", hidden=True)
def _(ctx):
    f = ref(ctx, HIDDEN_PROG)
    need_states(ctx, HIDDEN_PROG, all_states(f), hidden=True)


@g.check("trace.script under another kernel configuration", points=8,
         section="Task 1", hidden=True)
def _(ctx):
    f = ref(ctx, HIDDEN_CONF)
    need_states(ctx, HIDDEN_CONF, all_states(f), hidden=True)


# ---------------------------------------------------------------- answers

def given(ctx, key):
    a = ctx.answer(key)
    if not a:
        raise Fail(f"answers.txt: '{key}:' has no answer yet")
    return a


def first_token(a):
    return re.split(r"[\s(,;]+", a.strip())[0]


def to_int(a):
    """A number as the student wrote it: 0x hex, decimal or negative
    decimal, as a 64-bit value; None when it is not a number."""
    t = first_token(a).lower().rstrip(".")
    try:
        if re.fullmatch(r"-?0x[0-9a-f]+", t):
            v = int(t, 16)
        elif re.fullmatch(r"-?[0-9]+", t):
            v = int(t, 10)
        else:
            return None
    except ValueError:
        return None
    return v & (2 ** 64 - 1)


def to_addr(a, syms):
    """An address written as 0xADDR or SYM, SYM+0xOFF, <SYM+0xOFF> (the
    debugger's notation); the set of addresses it may mean."""
    t = first_token(a).strip("<>").lower()
    v = to_int(t)
    if v is not None and t.startswith("0x"):
        return {v}
    m = re.fullmatch(r"([a-z0-9_.$]+)(?:\+(0x[0-9a-f]+|[0-9a-f]+))?", t)
    if not m or m.group(1) not in syms:
        return set()
    base = syms[m.group(1)]
    off = m.group(2)
    if off is None:
        return {base}
    if off.startswith("0x"):
        return {base + int(off, 16)}
    out = {base + int(off, 16)}
    if off.isdigit():
        out.add(base + int(off, 10))
    return out


def want_addr(ctx, key, addr, what, where):
    f = ref(ctx, VISIBLE)
    a = given(ctx, key)
    got = to_addr(a, f["syms"])
    if not got:
        raise Fail(f"answers.txt '{key}': '{a}' is neither an address (0x...) nor a symbol "
                   f"(SYM+0xOFF) of this trace")
    if addr not in got:
        raise Fail(f"answers.txt '{key}': '{a}' is not {what}; {where}")


def want_int(ctx, key, value, what, where, extra=()):
    a = given(ctx, key)
    if norm(a) in extra:
        return
    v = to_int(a)
    if v is None:
        raise Fail(f"answers.txt '{key}': '{a}' is not a number (write 0x... or decimal)")
    if v != value:
        raise Fail(f"answers.txt '{key}': {a} is not {what}; {where}")


def want_word(ctx, key, accepted, what, where):
    a = given(ctx, key)
    t = norm(first_token(a).strip("<>")).lstrip("%")
    for p in ("pt_regs->", "pt_regs.", "regs->", "regs.", "struct pt_regs->"):
        if t.startswith(p):
            t = t[len(p):]
    if t.endswith("+0x0"):
        t = t[:-4]
    if t not in {norm(x) for x in accepted}:
        raise Fail(f"answers.txt '{key}': '{a}' is not {what}; {where}")


# Task 2: the way in

@g.check("syscall_rip", points=2, section="Task 2")
def _(ctx):
    f = ref(ctx, VISIBLE)
    want_addr(ctx, "syscall_rip", H(f["R"][0]["rip"]), "the address of write's syscall instruction",
              "it is the rip of your transcript's first stop")


@g.check("entry_point", points=2, section="Task 2")
def _(ctx):
    f = ref(ctx, VISIBLE)
    want_addr(ctx, "entry_point", H(f["R"][1]["rip"]), "where SYSCALL sends the CPU",
              "step once from the syscall instruction (or read MSR_LSTAR: print lstar)")


@g.check("rcx_after_syscall", points=3, section="Task 2")
def _(ctx):
    f = ref(ctx, VISIBLE)
    want_int(ctx, "rcx_after_syscall", H(f["R"][1]["regs"]["rcx"]),
             "what RCX holds once SYSCALL has executed",
             "print rcx one step after the syscall instruction")


@g.check("r11_after_syscall", points=2, section="Task 2")
def _(ctx):
    f = ref(ctx, VISIBLE)
    want_int(ctx, "r11_after_syscall", H(f["R"][1]["regs"]["r11"]),
             "what R11 holds once SYSCALL has executed",
             "print r11 one step after the syscall instruction")


@g.check("stack_switch", points=4, section="Task 2")
def _(ctx):
    f = ref(ctx, VISIBLE)
    want_addr(ctx, "stack_switch", H(f["R"][f["ks"]]["rip"]),
              "the instruction that loads the kernel stack pointer into RSP",
              "step through entry_SYSCALL_64 and watch rsp: which instruction makes it a kernel address?")


@g.check("kernel_rsp", points=3, section="Task 2")
def _(ctx):
    f = ref(ctx, VISIBLE)
    want_int(ctx, "kernel_rsp", f["top"], "RSP right after the stack switch",
             "print rsp right after that instruction")


@g.check("user_rsp_field", points=3, section="Task 2")
def _(ctx):
    f = ref(ctx, VISIBLE)
    R = f["R"]
    user_rsp = H(R[0]["regs"]["rsp"])
    fields = [p["field"] for p in R[f["kd"]]["pt_regs"] if p["written"] and H(p["value"]) == user_rsp]
    want_word(ctx, "user_rsp_field", fields, "the pt_regs field that keeps the user's RSP",
              "compare the user's rsp with the slots of print ptregs at do_syscall_64")


# Task 3: orig_ax and pt_regs

@g.check("orig_ax_push", points=4, section="Task 3")
def _(ctx):
    f = ref(ctx, VISIBLE)
    want_addr(ctx, "orig_ax_push", H(f["R"][f["ko"]]["rip"]),
              "the instruction that pushes pt_regs->orig_ax",
              "the slot's 'written' mark appears right after it (print ptregs)")


@g.check("orig_ax_offset", points=2, section="Task 3")
def _(ctx):
    f = ref(ctx, VISIBLE)
    want_int(ctx, "orig_ax_offset", slot(f["R"][0], "orig_ax")["offset"],
             "orig_ax's offset in struct pt_regs", "print ptregs lists each slot's offset")


@g.check("orig_ax_addr", points=3, section="Task 3")
def _(ctx):
    f = ref(ctx, VISIBLE)
    want_int(ctx, "orig_ax_addr", f["pt_regs_base"] + slot(f["R"][0], "orig_ax")["offset"],
             "the address of the orig_ax slot", "print pt_regs.orig_ax prints it (or RSP after the push)")


@g.check("orig_ax_value", points=2, section="Task 3")
def _(ctx):
    f = ref(ctx, VISIBLE)
    want_int(ctx, "orig_ax_value", H(slot(f["R"][f["ko"] + 1], "orig_ax")["value"]),
             "the value pushed as orig_ax", "print pt_regs.orig_ax right after the push")


@g.check("ax_at_dispatch", points=3, section="Task 3")
def _(ctx):
    f = ref(ctx, VISIBLE)
    v = H(slot(f["R"][f["kd"]], "ax")["value"])
    extra = {"-enosys"} if v == 2 ** 64 - 38 else set()  # ENOSYS = 38 (include/uapi/asm-generic/errno.h)
    want_int(ctx, "ax_at_dispatch", v, "pt_regs->ax when do_syscall_64 starts",
             "print pt_regs.ax at do_syscall_64 (and compare it with orig_ax)", extra)


@g.check("pt_regs_reg", points=3, section="Task 3")
def _(ctx):
    f = ref(ctx, VISIBLE)
    r = f["R"][f["kd"]]
    regs = [x for x in GPRS if H(r["regs"][x]) == f["pt_regs_base"]]
    want_word(ctx, "pt_regs_reg", regs, "the register holding the pt_regs pointer at do_syscall_64",
              "print regs at do_syscall_64 and look for the address print ptregs shows")


# Task 4: dispatch

@g.check("table_target", points=3, section="Task 4")
def _(ctx):
    f = ref(ctx, VISIBLE)
    t = f["probes"]["table_target"]
    want_word(ctx, "table_target", [t, "0x%x" % f["syms"][t.lower()]],
              "the function sys_call_table points to for write",
              "it is where your stop 8 is (or: entrysim explain write)")


@g.check("body", points=3, section="Task 4")
def _(ctx):
    f = ref(ctx, VISIBLE)
    b = f["probes"]["body"]
    acc = [b] + (["0x%x" % f["syms"][b.lower()]] if b.lower() in f["syms"] else [])
    want_word(ctx, "body", acc, "write's body (the function the stub ends up in)",
              "step on from the table target, or: entrysim explain write")


@g.check("return_value", points=2, section="Task 4")
def _(ctx):
    f = ref(ctx, VISIBLE)
    want_int(ctx, "return_value", H(f["R"][-1]["regs"]["rax"]), "write's return value",
             "print rax back in user mode (or pt_regs.ax before the return)")


# Task 5: the way out

@g.check("return_insn", points=4, section="Task 5")
def _(ctx):
    f = ref(ctx, VISIBLE)
    want_addr(ctx, "return_insn", H(f["R"][f["kr"]]["rip"]),
              "the instruction that returns to user mode",
              "kexit, then reverse one instruction")


@g.check("return_mnemonic", points=2, section="Task 5")
def _(ctx):
    f = ref(ctx, VISIBLE)
    r = f["R"][f["kr"]]
    m = (r.get("source_text") or "").split()
    m = m[0].lower() if m else ("sysretq" if "sysret" in r["symbol"] else "iretq")
    acc = {"sysretq": ["sysretq", "sysret", "sysretq64"], "iretq": ["iretq", "iret"]}.get(m, [m])
    want_word(ctx, "return_mnemonic", acc, "the mnemonic of that instruction", "disas 1 there")


@g.check("clobbered", points=3, section="Task 5")
def _(ctx):
    f = ref(ctx, VISIBLE)
    R = f["R"]
    exp = {x for x in GPRS if x != "rax" and R[0]["regs"][x] != R[-1]["regs"][x]}
    a = given(ctx, "clobbered")
    got = set(re.findall(r"[a-z0-9]+", a.lower().replace("%", "")))
    if got != exp:
        raise Fail(f"answers.txt 'clobbered': '{a}' is not the set of registers (besides rax) "
                   f"that differ after the system call; compare print regs at the syscall "
                   f"instruction and back in user mode (name them rcx-style, comma-separated)")


# The conditions of Linux's opportunistic SYSRET, a fact of Linux that no
# JSON output of entrysim states: Linux v4.17 arch/x86/entry/entry_64.S,
# entry_SYSCALL_64 after "Try to use SYSRET instead of IRET if we're
# returning to a completely clean 64-bit userspace context": RCX == RIP, RIP
# canonical (Intel's SYSRET #GPs in ring 0 otherwise), CS == __USER_CS,
# R11 == RFLAGS, neither RF nor TF set, SS == __USER_DS; entrysim's
# kernel_model/entry_64.S makes the same tests.  The letters are those of
# the list in README.md (Task 5) and starter/answers.txt.
SYSRET_CONDITIONS = set("BDFHI")


@g.check("sysret_conditions", points=6, section="Task 5")
def _(ctx):
    a = given(ctx, "sysret_conditions")
    toks = re.findall(r"[A-Za-z]+", a)
    if len(toks) == 1 and re.fullmatch(r"[A-Ja-j]+", toks[0]):
        toks = list(toks[0])  # 'BDF' for 'B, D, F'
    if not toks or any(len(t) != 1 or t.upper() not in "ABCDEFGHIJ" for t in toks):
        raise Fail(f"answers.txt 'sysret_conditions': '{a}': write letters A-J only, e.g. 'A, C'")
    got = {t.upper() for t in toks}
    if got != SYSRET_CONDITIONS:
        wrong = len(got - SYSRET_CONDITIONS) + len(SYSRET_CONDITIONS - got)
        raise Fail(f"answers.txt 'sysret_conditions': {wrong} letter(s) wrong or missing; read "
                   f"the instructions between do_syscall_64's return and the sysretq "
                   f"(disas, or entry_64.S in a kernel tree)")


# Which of those conditions a signal delivery breaks, also a fact of Linux:
# on the way out of a system call with a caught signal pending, setup_rt_frame
# (Linux arch/x86/kernel/signal.c; entrysim's kernel_model/signal.c) points
# regs->ip at the handler and leaves regs->cx (the user's return address) as
# it was, so RCX == RIP (letter B) fails and the return takes IRET; a trace of
# guest musl_signals shows it (tgkill returning through iretq with pt_regs->cx
# != pt_regs->ip).  regs->flags loses only DF/RF/TF, which are clear here.
SIGNAL_FAILS = {"B"}


@g.check("signal_check", points=2, section="Task 5")
def _(ctx):
    a = given(ctx, "signal_check")
    toks = {t.upper() for t in re.findall(r"[A-Za-z]+", a)}
    if toks != SIGNAL_FAILS:
        raise Fail(f"answers.txt 'signal_check': '{a}' is not the letter of the check that fails "
                   f"when pt_regs->ip has been pointed at a signal handler (one letter)")


g.main()
