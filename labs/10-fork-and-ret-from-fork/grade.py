import os, sys; sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from grading import Grader, Fail, norm

import json
import re
import struct

# Lab 10-fork-and-ret-from-fork: the student's forker.c (Task 1), a debugger
# script that follows one fork from the child's ret_from_fork back to the
# parent's syscall instruction (Task 2) and answers about both returns and
# what fork copies (Tasks 3-5).
#
# The grader builds forker from the student's forker.c itself (the handout's
# gcc command), so a stale or hand-made binary never counts.  Expected
# values come from entrysim at grading time: the grader's own trace of the
# fork, one instruction at a time, from the parent's syscall instruction to
# the child's first user-mode instruction (`entrysim debug --transcript`),
# and `entrysim run --timing-json` (system call names and numbers, the
# `child` row that names the function a new task starts in).  Facts of
# Linux that no JSON states are constants with their source.

g = Grader(__file__)

CC = os.environ.get("ENTRYSIM_LAB_CC", "gcc")
CFLAGS = ["-static", "-O2", "-g"]      # the handout's command line

# The system calls that make a process (Linux's names, syscall_64.tbl); the
# numbers come from the timing JSON's rows.
FORK_CALLS = ("clone", "fork", "vfork")

V417 = ["--convention", "v4.17"]
# The handout's configuration, and the hidden ones: the student's script on
# a program it has not seen (clone with a new stack, no symbols at all) and
# on forker under Linux 4.16's convention with PTI and retpolines.
VISIBLE = dict(key="visible", prog="forker", args=V417)
HIDDEN_PROG = dict(key="hidden-prog", prog="rawclone", args=V417)
HIDDEN_CONF = dict(key="hidden-conf", prog="forker",
                   args=["--convention", "v4.16", "--mitigations", "pti,retpoline"])

_cache = {}


def cached(key, make):
    """make() once; a Fail it raised is raised again by every later call."""
    if key not in _cache:
        try:
            _cache[key] = make()
        except Fail as e:
            _cache[key] = e
    v = _cache[key]
    if isinstance(v, Fail):
        raise Fail(str(v))
    return v


def H(x):
    return int(x, 16) if isinstance(x, str) else int(x)


# ---------------------------------------------------------------- programs

def forker(ctx):
    """forker built from the student's forker.c with the handout's command."""
    def make():
        src = ctx.path("forker.c")
        if not os.path.exists(src):
            raise Fail("there is no forker.c in your work directory (Task 1)")
        out = os.path.join(ctx.tempdir(), "forker")
        p = ctx.run([CC] + CFLAGS + ["-o", out, src], timeout=90)
        if p.returncode != 0:
            errs = [l for l in p.stderr.splitlines() if "error" in l] or p.stderr.splitlines()
            errs = [l.replace(ctx.work + os.sep, "") for l in errs]
            raise Fail(f"forker.c does not compile ({CC} {' '.join(CFLAGS)}): "
                       + " / ".join(errs[:3]))
        return out
    return cached("forker", make)


def _tiny_elf(code, base, pad, memsz):
    """A static ELF64 executable with one RWX PT_LOAD segment (memsz past
    the file: zero pages) and no sections or symbols."""
    ehsz, phsz = 64, 56
    off = ehsz + phsz + pad
    size = off + len(code)
    eh = struct.pack("<4sBBBBB7xHHIQQQIHHHHHH", b"\x7fELF", 2, 1, 1, 0, 0,
                     2, 0x3e, 1, base + off, ehsz, 0, 0, ehsz, phsz, 1, 64, 0, 0)
    ph = struct.pack("<IIQQQQQQ", 1, 7, 0, base, base, size, memsz, 0x1000)
    return eh + ph + b"\x90" * pad + code


def rawclone(ctx):
    """clone(SIGCHLD, stack_top, 0, 0, 0) made by a `syscall` instruction of
    its own (no C library, no symbols); the child exit_group(7)s on its new
    stack, the parent wait4(-1, NULL, 0, NULL)s and exit_group(0)s."""
    def make():
        base, pad = 0x6170000, 0x2b
        top = base + 0x3000                      # the child's stack: zero pages of the segment
        code = bytes.fromhex("bf11000000")       # mov edi, 17 (SIGCHLD)
        rip_after = base + 64 + 56 + pad + len(code) + 7
        code += bytes.fromhex("488d35") + struct.pack("<i", top - rip_after)  # lea rsi, [rip+top]
        code += bytes.fromhex("31d2" "4531d2" "4531c0"       # xor edx, r10d, r8d
                              "b838000000" "0f05"             # mov eax, 56 (clone); syscall
                              "4885c0" "750c"                 # test rax, rax; jnz parent
                              "bf07000000" "b8e7000000" "0f05"  # child: exit_group(7)
                              "48c7c7ffffffff" "31f6" "31d2" "4531d2"  # parent: wait4(-1, 0, 0, 0)
                              "b83d000000" "0f05"
                              "31ff" "b8e7000000" "0f05")     # exit_group(0)
        path = os.path.join(ctx.tempdir(), "prog")
        with open(path, "wb") as f:
            f.write(_tiny_elf(code, base, pad, 0x3000))
        os.chmod(path, 0o755)
        return path
    return cached("rawclone", make)


def program(ctx, conf):
    if conf["prog"] == "forker":
        return [forker(ctx), "1"]
    return [rawclone(ctx)]


# ---------------------------------------------------------------- running

def debug(ctx, conf, script_text=None, script_path=None):
    """entrysim debug with a script; the transcript's records."""
    d = ctx.tempdir()
    if script_path is None:
        script_path = os.path.join(d, "s.script")
        with open(script_path, "w") as f:
            f.write(script_text)
    out = os.path.join(d, "t.jsonl")
    ctx.entrysim_run(["debug"] + conf["args"] + ["--script", script_path, "--transcript", out]
                     + program(ctx, conf), timeout=90, ok=None, cwd=d)
    if not os.path.exists(out) or os.path.getsize(out) == 0:
        return []
    recs = ctx.json_file(out)
    return recs if isinstance(recs, list) else [recs]


def timing(ctx, conf, argv, key):
    """`entrysim run --deterministic --timing-json` of argv: (the program's
    stdout, the timing JSON)."""
    def make():
        d = ctx.tempdir()
        tj = os.path.join(d, "timing.json")
        p = ctx.entrysim_run(["run", "--deterministic"] + conf["args"] + ["--timing-json", tj]
                             + argv, timeout=90, ok=None, cwd=d)
        if p.returncode != 0:
            tail = (p.stderr or "").strip().splitlines()
            tail = [l for l in tail if not l.startswith("  ")][-2:]
            raise Fail(f"{os.path.basename(argv[0])} {' '.join(argv[1:])} exited {p.returncode} "
                       f"under entrysim run " + (": " + " / ".join(tail) if tail else ""))
        return p.stdout, ctx.json_file(tj)
    return cached(("timing", key), make)


def rows(tj):
    return tj.get("per_syscall") or []


def fork_rows(tj):
    return [r for r in rows(tj) if r.get("entry") != "child" and r.get("name") in FORK_CALLS]


def child_rows(tj):
    return [r for r in rows(tj) if r.get("entry") == "child"]


def sym_name(s):
    return (s or "").split("+", 1)[0]


def sym_off(s):
    s = s or ""
    return int(s.split("+", 1)[1], 16) if "+" in s else 0


def ref(ctx, conf):
    """The grader's own trace of the program's first fork, one instruction
    per record: R[0] at the parent's syscall instruction, R[-1] the child's
    first instruction back in user mode; the indices of the six stops."""
    def make():
        prog = program(ctx, conf)
        if conf["prog"] == "forker":
            hint = ("does forker.c fork yet (Task 1)?  The answers and the script are checked "
                    "against `forker 1`")
        else:
            hint = "is entrysim working?"
        _, tj = timing(ctx, conf, prog, conf["key"])
        made = {r["nr"]: r["name"] for r in fork_rows(tj)}
        kids = child_rows(tj)
        if not made or not kids:
            raise Fail(f"entrysim run --timing-json of {os.path.basename(prog[0])} "
                       f"{' '.join(prog[1:])} shows no fork and no child: {hint}")
        child_sym = kids[0]["name"]
        # the parent's syscall instruction: the first `syscall` stop whose RAX
        # is one of the calls that made the child
        S = debug(ctx, conf, "syscall\n" * 80)
        j = next((i for i, r in enumerate(S) if r["result"] == "ok" and r["cpl"] == 3
                  and r["stop"] == "reached" and H(r["regs"]["rax"]) in made), None)
        if j is None:
            raise Fail(f"grader: no syscall instruction of fork/clone/vfork found ({conf['key']}); "
                       + hint)
        to_p0 = "syscall\n" * (j + 1)
        C = debug(ctx, conf, to_p0 + f"break {child_sym}\ncontinue\nkexit\n")
        if len(C) != j + 4 or C[-1]["result"] != "ok" or C[-1]["cpl"] != 3:
            raise Fail(f"grader: cannot run from the fork to the child's return ({conf['key']})")
        n = C[-1]["instructions"] - C[j]["instructions"]
        R = debug(ctx, conf, to_p0 + "step\n" * n)[j:]
        if len(R) != n + 1 or any(r["result"] != "ok" for r in R):
            raise Fail(f"grader: stepping from the fork to the child's return failed ({conf['key']})")
        back = H(R[0]["rip"]) + 2                      # syscall is two bytes long
        p3 = next((i for i in range(1, len(R)) if R[i]["cpl"] == 3), None)
        c1 = next((i for i in range(1, len(R)) if R[i]["symbol"] == child_sym + "+0x0"), None)
        c3 = len(R) - 1
        if None in (p3, c1) or not p3 < c1 < c3 or H(R[p3]["rip"]) != back \
                or H(R[c3]["rip"]) != back or H(R[c3]["regs"]["rax"]) != 0:
            raise Fail(f"grader: in its own trace of the first fork the parent does not "
                       f"return first and the child second at the same address ({conf['key']}); "
                       f"forker must call fork(), not vfork()")
        f = dict(R=R, P0=0, P2=p3 - 1, P3=p3, C1=c1, C2=c3 - 1, C3=c3, made=made,
                 child_sym=child_sym, tj=tj)
        syms = {}
        for r in R:
            nm = sym_name(r["symbol"])
            if nm:
                syms.setdefault(nm.lower(), H(r["rip"]) - sym_off(r["symbol"]))
        f["syms"] = syms
        return f
    return cached(("ref", conf["key"]), make)


def frame(rec):
    return {p["field"]: H(p["value"]) for p in rec.get("pt_regs") or []}


# ---------------------------------------------------------------- Task 1: forker.c

def forker_json(ctx, conf, n):
    out, tj = timing(ctx, conf, [forker(ctx), str(n)], ("forker", conf["key"], n))
    lines = [l for l in out.strip().splitlines() if l.strip()]
    if not lines:
        raise Fail(f"forker {n} printed nothing (it must print one JSON line at the end)")
    try:
        v = json.loads(lines[-1])
    except ValueError:
        raise Fail(f"forker {n}: its last line is not JSON: '{lines[-1][:80]}'")
    if not isinstance(v, dict):
        raise Fail(f"forker {n}: its last line is not a JSON object")
    for k in ("children", "pids", "reported", "statuses", "counter"):
        if k not in v:
            raise Fail(f"forker {n}: no key '{k}' in its JSON line")
    for k in ("pids", "reported", "statuses"):
        if not isinstance(v[k], list) or len(v[k]) != n:
            raise Fail(f"forker {n}: '{k}' must be a list of {n} numbers, one per child")
    return v, tj


def check_pids(v, n):
    if v["children"] != n:
        raise Fail(f"forker {n}: 'children' is {v['children']}, not {n}")
    pids = v["pids"]
    if not all(isinstance(p, int) and p > 0 for p in pids):
        raise Fail(f"forker {n}: 'pids' {pids}: fork() returns the child's pid (> 0) in the "
                   f"parent; store it in pids[i]")
    if len(set(pids)) != n:
        raise Fail(f"forker {n}: 'pids' {pids} are not {n} different pids")
    if v["reported"] != pids:
        raise Fail(f"forker {n}: 'reported' {v['reported']} is not 'pids' {pids}: each child "
                   f"writes getpid() into the pipe, the parent reads it after waiting for it")


# Each child adds i + 1 to its own copy of the global counter, which starts
# at 0 (the handout's rules for forker): with the memory copied at fork, the
# exit statuses are 1..N and the parent's counter stays 0 (fork(2): "The
# child process and the parent process run in separate memory spaces").
def check_copies(v, n):
    want = list(range(1, n + 1))
    if v["statuses"] != want:
        raise Fail(f"forker {n}: 'statuses' {v['statuses']}, expected {want}: child i ends with "
                   f"_exit(counter) after adding i + 1 to its copy of counter (0 at every fork), "
                   f"and the parent stores WEXITSTATUS of each waitpid")
    if v["counter"] != 0:
        raise Fail(f"forker {n}: the parent's counter is {v['counter']}; only the children "
                   f"change counter")


def check_tool(v, tj, n):
    made = sum(r["count"] for r in fork_rows(tj))
    kids = sum(r["count"] for r in child_rows(tj))
    if made != n or kids != n:
        raise Fail(f"forker {n}: entrysim's --timing-json counts {made} fork/clone/vfork calls "
                   f"and {kids} new tasks (rows with entry 'child'), not {n}: one fork per child")


@g.check("forker 3: children and pids", points=5, section="Task 1")
def _(ctx):
    v, _ = forker_json(ctx, VISIBLE, 3)
    check_pids(v, 3)


@g.check("forker 3: exit statuses and the parent's counter", points=5, section="Task 1")
def _(ctx):
    v, _ = forker_json(ctx, VISIBLE, 3)
    check_copies(v, 3)


@g.check("forker 3: as many forks and new tasks as --timing-json counts", points=5,
         section="Task 1")
def _(ctx):
    v, tj = forker_json(ctx, VISIBLE, 3)
    check_tool(v, tj, 3)


@g.check("forker with another N under another kernel configuration", points=6,
         section="Task 1", hidden=True)
def _(ctx):
    n = 5
    v, tj = forker_json(ctx, HIDDEN_CONF, n)
    check_pids(v, n)
    check_copies(v, n)
    check_tool(v, tj, n)


# ---------------------------------------------------------------- Task 2: fork.script

STOPS = [("C1", "at the child's first instruction"),
         ("C2", "at the child's return instruction (before it executes)"),
         ("C3", "at the child's first user-mode instruction"),
         ("P3", "at the parent's first user-mode instruction after the fork"),
         ("P2", "at the parent's return instruction (before it executes)"),
         ("P0", "at the parent's syscall instruction")]


def student(ctx, conf):
    def make():
        path = ctx.path("fork.script")
        if not os.path.exists(path):
            raise Fail("there is no fork.script in your work directory (Task 2)")
        return debug(ctx, conf, script_path=path)
    return cached(("stu", conf["key"]), make)


def need_stops(ctx, conf, which, hidden=False):
    f = ref(ctx, conf)
    S = student(ctx, conf)
    have = {(r["instructions"], r["rip"]) for r in S if r.get("result") in ("ok", "quit")}
    missing = [(k, what) for k, what in STOPS if k in which
               and (f["R"][f[k]]["instructions"], f["R"][f[k]]["rip"]) not in have]
    if not missing:
        return
    if not S:
        raise Fail("fork.script produced no transcript at all (is it empty?)")
    if hidden:
        msg = (f"your fork.script misses {len(missing)} of the {len(which)} stops, the first "
               f"one {missing[0][1]}")
    else:
        msg = "your fork.script never stops " + "; never ".join(w for _, w in missing)
    err = next((r for r in S if r.get("result") == "error"), None)
    if err:
        msg += f" (it stopped with an error at line {err['line']}: '{err['command']}')"
    if hidden:
        msg += (", on a program or kernel configuration the handout does not use: no step "
                "counts, addresses or symbols of forker or the C library in the script")
    else:
        r = f["R"][f[missing[0][0]]]
        msg += f" (expected a stop with insn {r['instructions']}, rip {r['rip']} <{r['symbol']}>)"
    raise Fail(msg)


@g.check("fork.script: the child from ret_from_fork back to user mode", points=8,
         section="Task 2")
def _(ctx):
    need_stops(ctx, VISIBLE, ("C1", "C2", "C3"))


@g.check("fork.script: the parent's return from the same fork", points=6, section="Task 2")
def _(ctx):
    need_stops(ctx, VISIBLE, ("P2", "P3"))


@g.check("fork.script: the parent's syscall instruction", points=4, section="Task 2")
def _(ctx):
    need_stops(ctx, VISIBLE, ("P0",))


@g.check("fork.script on another program (clone with a new stack, no symbols)", points=7,
         section="Task 2", hidden=True)
def _(ctx):
    need_stops(ctx, HIDDEN_PROG, [k for k, _ in STOPS], hidden=True)


@g.check("fork.script under another kernel configuration", points=6, section="Task 2",
         hidden=True)
def _(ctx):
    need_stops(ctx, HIDDEN_CONF, [k for k, _ in STOPS], hidden=True)


# ---------------------------------------------------------------- answers

def given(ctx, key):
    a = ctx.answer(key)
    if not a:
        raise Fail(f"answers.txt: '{key}:' has no answer yet")
    return a


def first_token(a):
    return re.split(r"[\s(,;]+", a.strip())[0]


def to_int(a):
    """A number as the student wrote it (0x hex, decimal, negative decimal)
    as a 64-bit value; None when it is not a number."""
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
    """0xADDR, SYM, SYM+0xOFF or <SYM+0xOFF>: the addresses it may mean."""
    t = first_token(a).strip("<>").lower()
    v = to_int(t)
    if v is not None and t.startswith("0x"):
        return {v}
    m = re.fullmatch(r"([a-z0-9_.$]+)(?:\+(0x[0-9a-f]+|[0-9a-f]+))?", t)
    if not m or m.group(1) not in syms:
        return set()
    base, off = syms[m.group(1)], m.group(2)
    if off is None:
        return {base}
    out = {base + int(off, 16)}
    if off.isdigit():
        out.add(base + int(off, 10))
    return out


def want_int(ctx, key, value, what, where):
    a = given(ctx, key)
    v = to_int(a)
    if v is None:
        raise Fail(f"answers.txt '{key}': '{a}' is not a number (write 0x... or decimal)")
    if v != value:
        raise Fail(f"answers.txt '{key}': {a} is not {what}; {where}")


def want_word(ctx, key, accepted, what, where):
    a = given(ctx, key)
    t = norm(first_token(a).strip("<>")).lstrip("%")
    if t.endswith("+0x0"):
        t = t[:-4]
    if t not in {norm(x) for x in accepted}:
        raise Fail(f"answers.txt '{key}': '{a}' is not {what}; {where}")


def fields_of(a):
    out = set()
    for t in re.findall(r"[a-z0-9_>.\-]+", a.lower()):
        for p in ("pt_regs->", "pt_regs.", "regs->", "regs."):
            if t.startswith(p):
                t = t[len(p):]
        out.add(t)
    return out


def letters(ctx, key, allowed="ABCDEFGHIJ"):
    a = given(ctx, key)
    toks = re.findall(r"[A-Za-z]+", a)
    if len(toks) == 1 and re.fullmatch(f"[{allowed}{allowed.lower()}]+", toks[0]):
        toks = list(toks[0])              # 'BD' for 'B, D'
    if not toks or any(len(t) != 1 or t.upper() not in allowed for t in toks):
        raise Fail(f"answers.txt '{key}': '{a}': write letters {allowed[0]}-{allowed[-1]} "
                   f"only, e.g. 'A, C'")
    return {t.upper() for t in toks}


# Task 3: one fork, two returns

@g.check("syscall_nr", points=2, section="Task 3")
def _(ctx):
    f = ref(ctx, VISIBLE)
    want_int(ctx, "syscall_nr", H(f["R"][0]["regs"]["rax"]),
             "the number in RAX at the parent's syscall instruction",
             "print rax at your stop 6 (or pt_regs.orig_ax at the child's ret_from_fork)")


@g.check("syscall_name", points=2, section="Task 3")
def _(ctx):
    f = ref(ctx, VISIBLE)
    name = f["made"][H(f["R"][0]["regs"]["rax"])]
    want_word(ctx, "syscall_name", [name, "sys_" + name, "__x64_sys_" + name],
              "the name of that system call",
              "entrysim run --timing-json names every system call with its number")


@g.check("clone_flags", points=3, section="Task 3")
def _(ctx):
    f = ref(ctx, VISIBLE)
    want_int(ctx, "clone_flags", H(f["R"][0]["regs"]["rdi"]),
             "RDI at the parent's syscall instruction",
             "print rdi at your stop 6 (or pt_regs.di in either frame)")


@g.check("child_pid", points=3, section="Task 3")
def _(ctx):
    f = ref(ctx, VISIBLE)
    want_int(ctx, "child_pid", H(f["R"][f["P3"]]["regs"]["rax"]),
             "the child's pid as fork() returns it to the parent",
             "print rax where the parent is back in user mode (your stop 4)")


@g.check("return_rip", points=2, section="Task 3")
def _(ctx):
    f = ref(ctx, VISIBLE)
    a = given(ctx, "return_rip")
    got = to_addr(a, f["syms"])
    if not got:
        raise Fail(f"answers.txt 'return_rip': '{a}' is neither an address (0x...) nor a "
                   f"symbol (SYM+0xOFF) of this trace")
    if H(f["R"][f["P3"]]["rip"]) not in got:
        raise Fail(f"answers.txt 'return_rip': '{a}' is not where the parent and the child "
                   f"continue in user mode; compare rip at your stops 3 and 4")


@g.check("first_to_run", points=2, section="Task 3")
def _(ctx):
    f = ref(ctx, VISIBLE)
    R = f["R"]
    first = "parent" if R[f["P3"]]["instructions"] < R[f["C3"]]["instructions"] else "child"
    want_word(ctx, "first_to_run", [first],
              "the one that is back in user mode first",
              "compare the instruction counts (insn) of your stops 3 and 4")


@g.check("child_first", points=2, section="Task 3")
def _(ctx):
    f = ref(ctx, VISIBLE)
    want_word(ctx, "child_first", [f["child_sym"], "0x%x" % f["syms"][f["child_sym"].lower()]],
              "the kernel function a new child starts in",
              "entrysim run --timing-json has a row with entry 'child' for it")


@g.check("child_pt_regs", points=3, section="Task 3")
def _(ctx):
    f = ref(ctx, VISIBLE)
    want_int(ctx, "child_pt_regs", H(f["R"][f["C1"]]["pt_regs_base"]),
             "the address of the child's struct pt_regs",
             "print rsp (or print ptregs) at the child's first instruction; compare it with "
             "the parent's")


# Task 4: two ways out

def mnemonic(rec):
    m = (rec.get("source_text") or "").split()
    return m[0].lower() if m else ""


ALIASES = {"sysretq": ["sysretq", "sysret", "sysretq64"], "sysret": ["sysretq", "sysret"],
           "iretq": ["iretq", "iret"], "iret": ["iretq", "iret"]}


@g.check("parent_return", points=3, section="Task 4")
def _(ctx):
    f = ref(ctx, VISIBLE)
    m = mnemonic(f["R"][f["P2"]])
    want_word(ctx, "parent_return", ALIASES.get(m, [m]),
              "the instruction the parent leaves the kernel with", "disas 1 at your stop 5")


@g.check("child_return", points=3, section="Task 4")
def _(ctx):
    f = ref(ctx, VISIBLE)
    m = mnemonic(f["R"][f["C2"]])
    want_word(ctx, "child_return", ALIASES.get(m, [m]),
              "the instruction the child leaves the kernel with", "disas 1 at your stop 2")


# Why a new child leaves by IRET, facts of Linux that no JSON states: in
# Linux v4.17 arch/x86/entry/entry_64.S, ret_from_fork calls schedule_tail
# and syscall_return_slowpath and then `jmp swapgs_restore_regs_and_return_
# to_usermode`, the exit shared with interrupts and exceptions, which ends in
# iretq; the opportunistic SYSRET tests exist only in entry_SYSCALL_64's own
# tail (B).  The same ret_from_fork starts kernel threads (copy_thread puts
# the function in rbx), which reach user mode after a successful execve
# (the comment "A kernel thread is allowed to return here after successfully
# calling do_execve()") with a pt_regs no SYSCALL built (D).  A is false
# (the child's cx and ip are the parent's, equal), C (SYSRET leaves RAX
# alone), E (SYSRET loads no RSP), F (es_switch_to and Linux's switch_mm
# write CR3 with a mov) too.  entrysim's ret_from_fork (kernel_model/
# entry_64.S) has the same jump.  The letters are those of README.md, Task 4.
WHY_IRET = set("BD")


@g.check("why_iret", points=5, section="Task 4")
def _(ctx):
    got = letters(ctx, "why_iret", "ABCDEF")
    if got != WHY_IRET:
        wrong = len(got - WHY_IRET) + len(WHY_IRET - got)
        raise Fail(f"answers.txt 'why_iret': {wrong} letter(s) wrong or missing; compare "
                   f"the child's frame with the SYSRET tests, and read ret_from_fork "
                   f"(entry_64.S) and Linux's in the Background")


# Task 5: what fork copies

def differ(f):
    pf, cf = frame(f["R"][f["P2"]]), frame(f["R"][f["C1"]])
    return pf, {k for k in pf if pf[k] != cf.get(k)}


@g.check("ptregs_same", points=3, section="Task 5")
def _(ctx):
    f = ref(ctx, VISIBLE)
    pf, d = differ(f)
    want_int(ctx, "ptregs_same", len(pf) - len(d),
             "the number of pt_regs slots equal in the two frames",
             "compare print ptregs at the child's first instruction (stop 1) and at the "
             "parent's return instruction (stop 5)")


def want_fields(ctx, key, exp, where):
    a = given(ctx, key)
    got = fields_of(a)
    got = {"ax" if t in ("rax",) else "sp" if t in ("rsp",) else t for t in got}
    if got != exp:
        raise Fail(f"answers.txt '{key}': '{a}' is not the set of pt_regs fields that differ "
                   f"(names as print ptregs shows them, comma-separated); {where}")


@g.check("ptregs_differ", points=4, section="Task 5")
def _(ctx):
    f = ref(ctx, VISIBLE)
    _, d = differ(f)
    want_fields(ctx, "ptregs_differ", d,
                "compare the frames of your stops 1 and 5 (python3 show.py fork.jsonl --frame LINE)")


@g.check("newstack_differ", points=5, section="Task 5")
def _(ctx):
    f = ref(ctx, HIDDEN_PROG)
    _, d = differ(f)
    want_fields(ctx, "newstack_differ", d,
                "read how the child's frame is made (es_task_build_kstack in sim/host/task.c, "
                "Linux's copy_thread_tls) and what clone's second argument is")


# What the child of fork does not inherit, facts of Linux (fork(2), Linux
# man-pages: "The child process is an exact duplicate of the parent process
# except for the following points": its own PID (G); resource utilizations
# and CPU time counters reset to zero (J); the set of pending signals
# initially empty (E); no record locks from fcntl (I); no timers from
# setitimer/alarm/timer_create (F)).  Memory is a copy (A), and "The child
# inherits copies of the parent's set of open file descriptors" (B), signal
# dispositions (sigaction(2): "A child created via fork(2) inherits a copy
# of its parent's signal dispositions", C), the signal mask (sigprocmask(2),
# D) and the working directory (H) are inherited.  entrysim's
# es_host_clone (sim/host/host.c) clears the pending signals and the
# interval timer the same way.  Letters: README.md, Task 5.
NOT_INHERITED = set("EFGIJ")


@g.check("not_inherited", points=6, section="Task 5")
def _(ctx):
    got = letters(ctx, "not_inherited")
    if got != NOT_INHERITED:
        wrong = len(got - NOT_INHERITED) + len(NOT_INHERITED - got)
        raise Fail(f"answers.txt 'not_inherited': {wrong} letter(s) wrong or missing; the "
                   f"fork(2) manual page lists what the child does not get")


g.main()
