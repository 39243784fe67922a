import os, sys; sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import json
import re
import shutil

from grading import Grader, Fail, norm

g = Grader(__file__)

# Where the expected values come from: every address, register value,
# offset, instruction and symbol is read at grading time from the grader's
# own `entrysim debug --transcript` of the program being graded (TRUTH_SCRIPT
# below) and from `entrysim exposure --json`.  The constants are Linux's
# rules, which the tool cannot print; each says where it comes from.

MASK64 = (1 << 64) - 1
BUILD_FLAGS = ["-static", "-O1", "-g"]   # the handout's build command

# x86-64 psABI 3.2.2 "The Stack Frame": the 128 bytes below RSP are the red
# zone; Linux's get_sigframe() (arch/x86/kernel/signal.c) skips them.
RED_ZONE = 128
# arch/x86/include/uapi/asm/ucontext.h + sigcontext.h: uc_mcontext sits 40
# bytes into struct ucontext (uc_flags, uc_link, 24-byte stack_t), and `ip`
# is the 17th u64 of struct sigcontext (r8..r15, di, si, bp, bx, dx, ax,
# cx, sp, ip): 40 + 16 * 8.
RIP_IN_UC = 40 + 16 * 8
# RFLAGS.TF and RFLAGS.RF (Intel SDM vol. 1, 3.4.3): the opportunistic
# SYSRET check refuses either (entry_64.S, as Linux's).
X86_EFLAGS_TF, X86_EFLAGS_RF = 0x100, 0x10000
# The SYSRET checks in the order entry_SYSCALL_64 makes them
# (kernel_model/entry_64.S; Linux 4.17 arch/x86/entry/entry_64.S).
CONDITIONS = ("rcx_rip", "canonical_rip", "cs", "r11_rflags", "rf_tf", "ss")

# The grader's walk through one signal: stops by symbol only.
TRUTH_SCRIPT = """\
break es_fpu_save_user
break on_signal
break __x64_sys_rt_sigreturn
continue
continue
reverse 1
step 1
finish
continue
kexit
reverse 1
step 1
continue
"""
# transcript line -> stop name (the lines of TRUTH_SCRIPT, from 1)
TRUTH_LINES = {4: "deliver", 5: "handler", 6: "enter", 8: "restorer", 9: "sigreturn",
               10: "back", 11: "leave", 13: "end"}
STOPS = ("deliver", "enter", "handler", "sigreturn", "leave", "back")   # the handout's six, in its order
STOP_TEXT = {
    "deliver": "1 (deliver: the first instruction of es_fpu_save_user)",
    "enter": "2 (enter: the kernel instruction that returns into on_signal)",
    "handler": "3 (handler: the first instruction of on_signal)",
    "sigreturn": "4 (sigreturn: the first instruction of __x64_sys_rt_sigreturn)",
    "leave": "5 (leave: the kernel instruction that returns to user mode after rt_sigreturn)",
    "back": "6 (back: the first user instruction after that return)",
}

# A grader-owned program for the hidden checks: the signal comes from a
# fault (ud2 -> SIGILL), not a system call, and the handler moves the saved
# RIP over the ud2 and sets the saved RAX; the program exits 0 only when the
# return from rt_sigreturn lands there with that RAX.
FAULT_C = r"""
#define _GNU_SOURCE
#include <signal.h>
#include <string.h>
#include <ucontext.h>

void on_signal(int sig, siginfo_t *info, void *ucv)
{
    ucontext_t *uc = ucv;
    (void)sig; (void)info;
    uc->uc_mcontext.gregs[REG_RIP] += 2;       /* over the ud2 */
    uc->uc_mcontext.gregs[REG_RAX] = 0x6b6b;
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGILL, &sa, 0);
    long rax;
    __asm__ volatile("mov $7, %%eax\n\tud2" : "=a"(rax) : : "memory");
    return rax == 0x6b6b ? 0 : 1;
}
"""

_cache = {}


# ---- building and running --------------------------------------------------

def compiler():
    for cc in ("gcc", "musl-gcc"):
        if shutil.which(cc):
            return cc
    raise Fail("no C compiler (gcc or musl-gcc) on this machine: the grader builds sig.c itself")


def build(ctx, src_text, what):
    """A directory holding ./sig built from src_text (cached per source)."""
    key = ("build", src_text)
    if key not in _cache:
        d = ctx.tempdir()
        with open(os.path.join(d, "sig.c"), "w") as f:
            f.write(src_text)
        cc = compiler()
        p = ctx.run([cc] + BUILD_FLAGS + ["-o", "sig", "sig.c"], cwd=d, timeout=60)
        if p.returncode != 0:
            err = " / ".join((p.stderr or "").strip().splitlines()[:3])
            raise Fail(f"{what} does not compile with `{cc} {' '.join(BUILD_FLAGS)} -o sig sig.c`: {err}")
        _cache[key] = d
    return _cache[key]


def student_dir(ctx):
    try:
        with open(ctx.path("sig.c")) as f:
            src = f.read()
    except OSError as e:
        raise Fail(f"cannot read sig.c in the work directory: {e.strerror}")
    return build(ctx, src, "sig.c")


def fault_dir(ctx):
    return build(ctx, FAULT_C, "the grader's own test program")


def debug(ctx, d, script_text, args, what):
    """Runs `entrysim debug --script` on ./sig ARGS in d; the transcript lines."""
    key = ("debug", d, script_text, tuple(args))
    if key not in _cache:
        sp = os.path.join(ctx.tempdir(), "script")
        tp = sp + ".jsonl"
        with open(sp, "w") as f:
            f.write(script_text)
        p = ctx.entrysim_run(["debug", "--script", sp, "--transcript", tp, "./sig"] + list(args),
                             cwd=d, ok=None, timeout=90)
        lines = []
        if os.path.exists(tp) and os.path.getsize(tp) > 0:
            lines = ctx.json_file(tp)
            if isinstance(lines, dict):
                lines = [lines]
        _cache[key] = (p.returncode, lines)
    return _cache[key]


def truth(ctx, d, args, what):
    """The grader's trace of one signal in ./sig ARGS: {stop name: line}."""
    key = ("truth", d, tuple(args))
    if key in _cache:
        return _cache[key]
    rc, lines = debug(ctx, d, TRUTH_SCRIPT, args, what)
    t = {TRUTH_LINES[l["line"]]: l for l in lines if l.get("line") in TRUTH_LINES}
    run = "`" + " ".join(["entrysim debug ./sig"] + list(args)) + "`"

    def at(name, sym):
        l = t.get(name)
        return l is not None and l.get("result") == "ok" and (l.get("symbol") or "").startswith(sym)

    if not at("deliver", "es_fpu_save_user+0x0"):
        raise Fail(f"in {run} of {what} the kernel never built a signal frame "
                   f"(es_fpu_save_user was not reached): does it install on_signal with "
                   f"sigaction() and send the signal (handout Task 1)?")
    if not at("handler", "on_signal+0x0"):
        raise Fail(f"in {run} of {what} on_signal never ran after the kernel built the frame: "
                   f"is on_signal the function sigaction() installs?")
    if not at("sigreturn", "__x64_sys_rt_sigreturn+0x0"):
        raise Fail(f"in {run} of {what} on_signal never returned through rt_sigreturn "
                   f"(did the handler crash, exit or longjmp?)")
    for name in ("enter", "leave"):
        if t.get(name, {}).get("cpl") != 0:
            raise Fail(f"grader: the instruction before the handler / after rt_sigreturn in {run} "
                       f"is not kernel code; the model changed")
    for name in ("restorer", "back"):
        if t.get(name, {}).get("cpl") != 3:
            raise Fail(f"grader: {run}: the `finish` / `kexit` stop is not in user mode")
    _cache[key] = t
    return t


def facts(ctx, d, args, what="./sig"):
    """The JSON object ./sig ARGS prints, run by `entrysim run` with an empty
    environment (as `entrysim debug` runs it, so that addresses agree)."""
    key = ("facts", d, tuple(args))
    if key in _cache:
        return _cache[key]
    p = ctx.run(["env", "-i", ctx.entrysim, "run", "./sig"] + list(args), cwd=d, timeout=60)
    cmd = ("env -i entrysim run ./sig " + " ".join(args)).strip()
    if p.returncode != 0:
        tail = " / ".join((p.stderr or "").strip().splitlines()[-2:])
        raise Fail(f"`{cmd}` exited {p.returncode} (it must exit 0){': ' + tail if tail else ''}")
    obj = None
    for line in (p.stdout or "").splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                v = json.loads(line)
            except ValueError:
                continue
            if isinstance(v, dict) and "signal" in v:
                obj = v
    if obj is None:
        raise Fail(f"`{cmd}` printed no JSON object with a \"signal\" key on a line of its own "
                   f"(keep print_facts as the starter has it)")
    _cache[key] = obj
    return obj


# ---- values ----------------------------------------------------------------

def h(s):
    return int(s, 16) if isinstance(s, str) else int(s)


def reg(line, r):
    return h(line["regs"][r])


def ptregs(line):
    return {p["field"]: h(p["value"]) for p in line.get("pt_regs") or []}


def as_int(v):
    """A JSON value or answer as a number: ints, "0x..", decimal strings."""
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, str):
        s = v.strip().replace("_", "")
        try:
            return int(s, 0)
        except ValueError:
            try:
                return int(s, 16) if re.fullmatch(r"[0-9a-fA-F]+", s) else None
            except ValueError:
                return None
    return None


def hx(v):
    return hex(v & MASK64) if v is not None else "nothing"


def ret_insn(line):
    """iretq or sysretq: the return instruction at a kernel stop."""
    t = (line.get("source_text") or "").strip().lower()
    m = re.match(r"(iret|sysret)q?\b", t)
    if m:
        return m.group(1) + "q"
    # The kernel's source is not on this machine: the two return paths of
    # kernel_model/entry_64.S, by symbol.
    sym = line.get("symbol") or ""
    if sym.startswith(("swapgs_restore_regs_and_return_to_usermode", "es_exception_return")):
        return "iretq"
    if sym.startswith(("syscall_return_via_sysret", "entry_SYSCALL_64")):
        return "sysretq"
    raise Fail(f"grader: cannot tell which instruction is at {sym} (no source text)")


def canonical(a):
    a &= MASK64
    top = a >> 47
    return top == 0 or top == (1 << 17) - 1


def first_failing(line):
    """The first SYSRET check (entry_64.S's order) that pt_regs fails at a
    return instruction, or "none".  CS and SS are what SYSRET would load:
    STAR[63:48] + 16 and + 8 (Intel SDM, SYSRET), from the transcript's MSR."""
    pt = ptregs(line)
    star_base = (reg(line, "star") >> 48) & 0xffff
    user_cs, user_ds = (star_base + 16) | 3, (star_base + 8) | 3
    if pt["cx"] != pt["ip"]:
        return "rcx_rip"
    if not canonical(pt["ip"]):
        return "canonical_rip"
    if pt["cs"] != user_cs:
        return "cs"
    if pt["r11"] != pt["flags"]:
        return "r11_rflags"
    if pt["r11"] & (X86_EFLAGS_RF | X86_EFLAGS_TF):
        return "rf_tf"
    if pt["ss"] != user_ds:
        return "ss"
    return "none"


def answer_insn(ctx, key):
    v = norm(ctx.answer(key)).rstrip(".")
    if not v:
        return None
    m = re.fullmatch(r"(iret|sysret)[qdl]?", v)
    return m.group(1) + "q" if m else v


def answer_condition(ctx, key):
    a = ctx.answer(key).lower()
    if not a:
        return None
    toks = set(re.findall(r"[a-z0-9]+", a))
    if "none" in toks:
        return "none"
    if toks & {"rcx", "cx"} and toks & {"rip", "ip"}:
        return "rcx_rip"
    if "canonical" in a:
        return "canonical_rip"
    if "r11" in toks and toks & {"rflags", "eflags", "flags"}:
        return "r11_rflags"
    if toks & {"rf", "tf"}:
        return "rf_tf"
    if "cs" in toks:
        return "cs"
    if "ss" in toks:
        return "ss"
    return a


def answer_number(ctx, key):
    v = ctx.answer(key)
    if not v:
        return None
    n = as_int(v.split()[0].rstrip(",;"))
    if n is None:
        raise Fail(f"answers.txt '{key}': '{v}' is not a number (decimal or 0x hex)")
    return n


def score(parts, what):
    """parts: [(ok, message when wrong)]; a fraction, or Fail when none is right."""
    bad = [m for ok, m in parts if not ok]
    if not bad:
        return 1.0
    right = len(parts) - len(bad)
    msg = "; ".join(bad[:4]) + (f" (and {len(bad) - 4} more)" if len(bad) > 4 else "")
    if right == 0:
        raise Fail(msg)
    print(f"    {what}: {msg}", file=sys.stderr, flush=True)
    return right / len(parts)


# ---- Task 1: the facts the handler reports ---------------------------------

def expected_facts(t, sig_mode_redirect):
    """The values the JSON must hold, from the grader's trace."""
    dl, hd = t["deliver"], t["handler"]
    pt = ptregs(dl)
    sig = reg(hd, "rdi")
    exp = {
        "signal": (sig, "RDI at on_signal's first instruction (the handler's 1st argument)"),
        "frame": (reg(hd, "rsp"), "RSP at on_signal's first instruction"),
        "info": (reg(hd, "rsi"), "RSI at on_signal's first instruction"),
        "uc": (reg(hd, "rdx"), "RDX at on_signal's first instruction"),
        "pretcode": (reg(t["restorer"], "rip"), "where the handler's ret went: `finish` from on_signal"),
        "saved_rip": (pt["ip"], "pt_regs->ip while the kernel builds the frame"),
        "saved_rsp": (pt["sp"], "pt_regs->sp while the kernel builds the frame"),
        "saved_rax": (pt["ax"], "pt_regs->ax while the kernel builds the frame"),
        "saved_rcx": (pt["cx"], "pt_regs->cx while the kernel builds the frame"),
        "saved_r11": (pt["r11"], "pt_regs->r11 while the kernel builds the frame"),
        "saved_eflags": (pt["flags"], "pt_regs->flags while the kernel builds the frame"),
        "fpstate": (reg(dl, "rdi"), "RDI at es_fpu_save_user (where the FPU state goes)"),
        # Linux's rules (kernel/signal.c signal_delivered(), sigaction(2)):
        # the frame keeps the blocked set the interrupted code had (sig.c
        # blocks nothing), and while the handler runs the signal itself is
        # blocked too (no SA_NODEFER, empty sa_mask).
        "uc_sigmask": (0, "the blocked set before delivery (sig.c blocks nothing)"),
        "blocked_in_handler": (1 << (sig - 1) if 0 < sig <= 64 else 0,
                               "the signal's own bit, 1 << (signal - 1): Linux blocks a signal "
                               "while its handler runs"),
        # kill_marked: -1 when its `mov $-1, %rax` runs; with the redirect,
        # the RAX the return from rt_sigreturn brought back.
        "result": (reg(t["back"], "rax") if sig_mode_redirect else -1,
                   "what kill_marked returned"),
    }
    return exp


def compare_facts(ctx, args, redirect):
    d = student_dir(ctx)
    t = truth(ctx, d, args, "your sig")
    got = facts(ctx, d, args)
    exp = expected_facts(t, redirect)
    cmd = ("./sig " + " ".join(args)).strip()
    parts = []
    for k, (want, where) in exp.items():
        v = as_int(got.get(k))
        if k == "result":
            ok = v is not None and (v & MASK64) == (want & MASK64)
            shown = str(v) if v is not None else "nothing"
            wanted = str(want) if want < 0 else hx(want)
        else:
            ok = v is not None and (v & MASK64) == (want & MASK64)
            shown, wanted = hx(v) if v is not None else repr(got.get(k)), hx(want)
        parts.append((ok, f"{cmd}: \"{k}\" is {shown}, expected {wanted} ({where})"))
    return parts


@g.check("Task 1: the handler's facts for SIGUSR1 match the debugger's trace", points=20,
         section="Task 1")
def _(ctx):
    return score(compare_facts(ctx, [], False), "Task 1")


def redact(msg):
    """A hidden check's message names its inputs only as "another signal"."""
    return re.sub(r"\./sig \d+( redirect)?", lambda m: "./sig (another signal"
                  + (", redirect)" if m.group(1) else ")"), msg)


def hidden(fn):
    def run(ctx):
        try:
            return fn(ctx)
        except Fail as e:
            raise Fail(redact(str(e)))
    return run


@g.check("Task 1: the facts for other signals, with and without redirect", points=10,
         section="Task 1", hidden=True)
@hidden
def _(ctx):
    parts = compare_facts(ctx, ["12"], False) + compare_facts(ctx, ["14", "redirect"], True)
    return score([(ok, redact(msg)) for ok, msg in parts], "hidden Task 1")


# ---- Task 2: the student's debugger script ---------------------------------

def script_stops(ctx, d, args, t, label):
    """[(found, message)] for the six stops of the student's script on ./sig ARGS in d."""
    try:
        with open(ctx.path("trace.script")) as f:
            text = f.read()
    except OSError as e:
        raise Fail(f"cannot read trace.script: {e.strerror}")
    rc, lines = debug(ctx, d, text, args, label)
    err = next((l for l in lines if l.get("result") == "error"), None)
    note = ""
    if err is not None:
        note = f" (your script stopped at its line {err.get('line')}, `{err.get('command')}`, with an error)"
    parts = []
    for name in STOPS:
        want = t[name]
        hit = any(l.get("instructions") == want["instructions"] and l.get("rip") == want["rip"]
                  for l in lines)
        parts.append((hit, f"{label}: no command of trace.script ends at stop {STOP_TEXT[name]}"
                           + note))
    return parts


@g.check("Task 2: trace.script stops at the six points of ./sig's signal", points=15,
         section="Task 2")
def _(ctx):
    d = student_dir(ctx)
    t = truth(ctx, d, [], "your sig")
    return score(script_stops(ctx, d, [], t, "./sig"), "Task 2")


@g.check("Task 2: trace.script on other programs (a fault's signal, a redirect)", points=10,
         section="Task 2", hidden=True)
@hidden
def _(ctx):
    fd = fault_dir(ctx)
    tf = truth(ctx, fd, [], "the grader's program")
    if tf["end"].get("exit_status") != 0 or ret_insn(tf["leave"]) != "iretq":
        raise Fail("grader: its own program did not land where its handler pointed; the model changed")
    parts = script_stops(ctx, fd, [], tf, "another program")
    d = student_dir(ctx)
    tr = truth(ctx, d, ["12", "redirect"], "your sig")
    parts += script_stops(ctx, d, ["12", "redirect"], tr, "your sig with another signal and redirect")
    return score([(ok, redact(msg)) for ok, msg in parts], "hidden Task 2")


# ---- Task 3: the frame -----------------------------------------------------

def plain_truth(ctx):
    d = student_dir(ctx)
    return truth(ctx, d, [], "your sig")


def check_numbers(ctx, items):
    parts = []
    for key, want, hint in items:
        got = answer_number(ctx, key)
        if got is None:
            parts.append((False, f"'{key}' is empty"))
        else:
            parts.append((got == want, f"'{key}': {got} is not right ({hint})"))
    return parts


@g.check("Task 3: where the frame is (frame_below_rsp, red_zone, fpstate_offset)", points=7,
         section="Task 3")
def _(ctx):
    t = plain_truth(ctx)
    frame = reg(t["handler"], "rsp")
    sp = ptregs(t["deliver"])["sp"]
    return score(check_numbers(ctx, [
        ("frame_below_rsp", sp - frame,
         "the interrupted RSP is pt_regs->sp at stop 1; the frame is RSP at stop 3"),
        ("red_zone", RED_ZONE, "the x86-64 psABI's red zone, skipped by the kernel"),
        ("fpstate_offset", reg(t["deliver"], "rdi") - frame,
         "RDI at stop 1 is where the FPU state goes; subtract the frame address"),
    ]), "Task 3")


@g.check("Task 3: inside the frame (uc_offset, info_offset, rip_offset, restorer)", points=8,
         section="Task 3")
def _(ctx):
    t = plain_truth(ctx)
    hd = t["handler"]
    frame = reg(hd, "rsp")
    uc_off = reg(hd, "rdx") - frame
    parts = check_numbers(ctx, [
        ("uc_offset", uc_off, "the handler's 3rd argument (RDX at stop 3) minus its RSP"),
        ("info_offset", reg(hd, "rsi") - frame, "the handler's 2nd argument (RSI at stop 3) minus its RSP"),
        ("rip_offset", uc_off + RIP_IN_UC,
         "the ucontext's offset in the frame, plus where uc_mcontext's ip slot is in the "
         "ucontext: struct kucontext and struct sigcontext_64 in src/signal.c"),
    ])
    rs = t["restorer"]
    sym = (rs.get("symbol") or "").split("+")[0]
    a = ctx.answer("restorer").strip()
    ok = bool(a) and (a.split("+")[0].rstrip("()") == sym
                      or as_int(a) == reg(rs, "rip"))
    parts.append((ok, f"'restorer': '{a}' is not the function the frame's first 8 bytes point to "
                      f"(`print *rsp` at stop 3, or `finish` from there)"))
    return score(parts, "Task 3")


# ---- Task 4: the two returns, and pt_regs ----------------------------------

@g.check("Task 4: the returns into the handler and after rt_sigreturn", points=9,
         section="Task 4")
def _(ctx):
    t = plain_truth(ctx)
    parts = []
    want = ret_insn(t["enter"])
    got = answer_insn(ctx, "handler_entry_insn")
    parts.append((got == want, f"'handler_entry_insn': {got or 'empty'} is not the instruction at stop 2"))
    want = first_failing(t["enter"])
    got = answer_condition(ctx, "handler_sysret_fails")
    parts.append((got == want, f"'handler_sysret_fails': {got or 'empty'} is not the first SYSRET check "
                               f"(entry_SYSCALL_64's order) that pt_regs fails at stop 2; "
                               f"compare pt_regs->cx, ip, r11, flags, cs, ss there"))
    want = ret_insn(t["leave"])
    got = answer_insn(ctx, "sigreturn_exit_insn")
    parts.append((got == want, f"'sigreturn_exit_insn': {got or 'empty'} is not the instruction at stop 5 "
                               f"(`reverse 1` after `kexit`)"))
    return score(parts, "Task 4")


@g.check("Task 4: rt_sigreturn under v4.16, and why it needs all of pt_regs", points=6,
         section="Task 4")
def _(ctx):
    out = ctx.entrysim_json(["exposure", "--syscall", "rt_sigreturn", "--entry", "syscall64", "--json"])
    out = out if isinstance(out, list) else [out]
    row = next((o for o in out if o.get("convention") == "v4.16"), None)
    if row is None:
        raise Fail("grader: entrysim exposure --syscall rt_sigreturn --json printed no v4.16 case")
    probe = next((p for p in row["probes"] if p["point"] == "table_target"), None)
    parts = []
    got = ctx.answer("v416_target").strip().rstrip("()")
    parts.append((got == probe["symbol"],
                  f"'v416_target': '{got}' is not the table_target of `entrysim exposure "
                  f"--syscall rt_sigreturn` under v4.16"))
    n = answer_number(ctx, "v416_exposed")
    parts.append((n == len(probe["exposed"]),
                  f"'v416_exposed': {n if n is not None else 'empty'} is not the number of registers "
                  f"marked '!' at v4.16's table_target"))
    why = ctx.answer("why_all_pt_regs").lower()
    ok = (len(why) >= 30 and re.search(r"pt_?regs|register|frame", why) is not None
          and re.search(r"\b(all|every|whole|entire)\b", why) is not None)
    parts.append((ok, "'why_all_pt_regs': say what rt_sigreturn does to the saved registers "
                      "(all of them, not six arguments) and where it reads them"))
    return score(parts, "Task 4")


# ---- Task 5: redirect ------------------------------------------------------

@g.check("Task 5: redirect lands at skip_to with RAX = 0x5a5a, and how it returns", points=15,
         section="Task 5")
def _(ctx):
    d = student_dir(ctx)
    t = truth(ctx, d, ["10", "redirect"], "your sig")
    back = t["back"]
    parts = []
    landed = (back.get("symbol") or "").startswith("skip_to+0x0") and reg(back, "rax") == 0x5a5a
    parts.append((landed, f"./sig 10 redirect: after rt_sigreturn the program went on at "
                          f"{back.get('symbol')} with RAX = {hx(reg(back, 'rax'))}, "
                          f"not at skip_to with RAX = 0x5a5a"))
    res = as_int(facts(ctx, d, ["10", "redirect"]).get("result"))
    parts.append((res == 0x5a5a, f"./sig 10 redirect: \"result\" is {res}, expected 0x5a5a (23130)"))
    want = ret_insn(t["leave"])
    got = answer_insn(ctx, "redirect_exit_insn")
    parts.append((got == want, f"'redirect_exit_insn': {got or 'empty'} is not the instruction at "
                               f"stop 5 of ./sig 10 redirect"))
    want = first_failing(t["leave"])
    got = answer_condition(ctx, "redirect_sysret_fails")
    parts.append((got == want, f"'redirect_sysret_fails': {got or 'empty'} is not the first SYSRET "
                               f"check that pt_regs fails at stop 5 of ./sig 10 redirect"))
    return score(parts, "Task 5")


g.main()
