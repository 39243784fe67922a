import os, sys; sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from grading import Grader, Fail, norm

import json
import re
import shutil

# Lab 03-add-a-syscall: system call 333, sumarray(arr, n, out), in the
# student's kernel tree (WORK/kernel), a user-space wrapper and program
# (WORK/user), and what the two conventions make of the call (answers.txt).
#
# The grader builds a copy of WORK/kernel, compiles its own test programs
# (tests/*.c, static, gcc) and runs them with `entrysim run --kernel`; each
# test program prints one JSON object per case.  The expected sums are
# computed by the test programs; EFAULT (14) and EINVAL (22) are Linux's
# errno values (include/uapi/asm-generic/errno-base.h).  Task 3's answers
# are compared with `entrysim exposure --kernel ... --json` of the student's
# own kernel.

g = Grader(__file__)

NR = 333                      # the handout's number for sumarray
NAME = "sumarray"
ARITY = 3
TESTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tests")
CC = os.environ.get("ENTRYSIM_LAB_CC", "gcc")
ROW = "333  common  sumarray  __x64_sys_sumarray"

_state = {}


def _cached(key, make):
    """make() once; a Fail it raised is raised again by every later call."""
    if key not in _state:
        try:
            _state[key] = make()
        except Fail as e:
            _state[key] = e
    v = _state[key]
    if isinstance(v, Fail):
        raise Fail(str(v))
    return v


def bindir(ctx):
    return _cached("bin", ctx.tempdir)


def kernel(ctx):
    """A built copy of WORK/kernel (built once, in a temporary directory, so
    a stale WORK/kernel/build never counts)."""
    def make():
        src = ctx.path("kernel")
        if not os.path.isfile(os.path.join(src, "student.c")):
            raise Fail("no kernel/student.c in the work directory (entrysim lab start makes "
                       "the kernel tree; see Setup)")
        dst = os.path.join(ctx.tempdir(), "kernel")
        shutil.copytree(src, dst, symlinks=True,
                        ignore=shutil.ignore_patterns("build", ".build-tmp.*"))
        # gcc's per-function stack usage (build/obj/*.su) for the frame check
        try:
            with open(os.path.join(dst, "kernel.build"), "a") as f:
                f.write("\n# added by the grader\ncflags -fstack-usage\n")
        except OSError as e:
            raise Fail(f"cannot copy kernel/kernel.build: {e.strerror}")
        p = ctx.run([ctx.entrysim, "kernel", "build", dst], timeout=200)
        if p.returncode != 0:
            text = (p.stderr + p.stdout).replace(dst, "kernel").strip().splitlines()
            errs = [l.strip() for l in text if "error:" in l][:2] or text[-2:]
            raise Fail("your kernel does not build ('entrysim kernel build kernel' exited "
                       f"{p.returncode}): " + " / ".join(errs) + " (run make for the whole "
                       "output)")
        return dst
    return _cached("kernel", make)


def exposure(ctx):
    """`entrysim exposure --kernel K --syscall sumarray --json`: {convention: record}."""
    def make():
        k = kernel(ctx)
        p = ctx.entrysim_run(["exposure", "--kernel", k, "--syscall", NAME, "--json"], ok=None)
        if p.returncode != 0:
            raise Fail(f"your kernel has no system call '{NAME}' in its 64-bit table "
                       f"('entrysim exposure --kernel kernel --syscall {NAME}' exited "
                       f"{p.returncode}): add the row '{ROW}' to kernel/syscall_64.tbl")
        try:
            recs = json.loads(p.stdout)
        except ValueError:
            raise Fail("entrysim exposure --json printed no JSON")
        if isinstance(recs, dict):
            recs = [recs]
        out = {r.get("convention"): r for r in recs}
        if "v4.16" not in out or "v4.17" not in out:
            raise Fail("entrysim exposure --json did not report both v4.16 and v4.17")
        return out
    return _cached("exposure", make)


def wiring_hint(ctx):
    """Why syscall 333 might not reach sumarray, or ''."""
    try:
        rec = exposure(ctx)["v4.17"]
    except Fail as e:
        return str(e)
    if rec.get("nr") != NR:
        return (f"sumarray is row {rec.get('nr')} of kernel/syscall_64.tbl; the tests call "
                f"{NR}: '{ROW}'")
    return ""


def compile_prog(ctx, name, sources, includes=()):
    out = os.path.join(bindir(ctx), name)
    argv = [CC, "-static", "-O1", "-o", out]
    for d in includes:
        argv += ["-I", d]
    p = ctx.run(argv + list(sources), timeout=90)
    if p.returncode != 0:
        errs = [l for l in p.stderr.splitlines() if "error:" in l] or p.stderr.splitlines()
        errs = [l.replace(ctx.work + os.sep, "") for l in errs]
        raise Fail(f"{CC} could not build {name} from "
                   + ", ".join(os.path.relpath(s, ctx.work) if s.startswith(ctx.work)
                               else os.path.basename(s) for s in sources)
                   + ": " + " / ".join(errs[:3]))
    return out


def kernel_tests(ctx):
    return _cached("kernel_cases", lambda: compile_prog(
        ctx, "kernel_cases", [os.path.join(TESTS, "kernel_cases.c")]))


def guest(ctx, prog, args, kopts, extra=()):
    """Runs prog under the student's kernel; returns the CompletedProcess."""
    argv = ["run", "--kernel", kernel(ctx), "--timeout", "30"] + list(kopts) + list(extra)
    return ctx.entrysim_run(argv + [prog] + list(args), ok=None, timeout=90)


def json_lines(text):
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
    return out


def stopped(p):
    """Why a guest run ended early, from its exit status (entrysim run --help)."""
    rc = p.returncode
    why = {1: "the kernel panicked (a fault in kernel code with no fixup: a user pointer "
              "dereferenced directly?) or the simulator failed",
           124: "it ran past the 30 s timeout (an endless loop in the kernel?)",
           125: "it ran past the instruction limit"}.get(rc)
    if why is None and rc > 128:
        why = f"the program died of signal {rc - 128}"
    tail = [l for l in (p.stderr or "").strip().splitlines() if l.strip()][-2:]
    return f"exit {rc}" + (f": {why}" if why else "") + (" (" + " / ".join(tail) + ")" if tail else "")


def run_cases(ctx, prog, group, kopts, what, hidden=False):
    """Runs a test program's case group; fails with the first failing case."""
    p = guest(ctx, prog, [group], kopts)
    objs = json_lines(p.stdout)
    cases = [o for o in objs if "case" in o]
    done = any("done" in o for o in objs)
    label = f"{what} ({' '.join(kopts)})"
    bad = [c for c in cases if not c.get("ok")]
    if bad:
        c = bad[0]
        msg = (f"{label}: {len(bad)} of {len(cases)} cases failed; the first: "
               f"{c['case']}: {c.get('why', '')}")
        if "ENOSYS" in c.get("why", ""):
            hint = wiring_hint(ctx)
            msg += " - " + (hint or "syscall 333 reaches sumarray but it returned -ENOSYS")
        raise Fail(msg)
    if not done:
        last = f"after the case '{cases[-1]['case']}'" if cases else "before its first case"
        raise Fail(f"{label}: the test program stopped {last}: {stopped(p)}")
    if p.returncode != 0:
        raise Fail(f"{label}: the test program exited {p.returncode}")
    return len(cases)


V416 = ["--convention", "v4.16"]
V417 = ["--convention", "v4.17"]


# ---------------------------------------------------------------- Task 1

@g.check("kernel: it builds, with sumarray as syscall 333 of 3 arguments", points=10,
         section="Task 1", timeout=240)
def _(ctx):
    recs = exposure(ctx)
    r16, r17 = recs["v4.16"], recs["v4.17"]
    if r17.get("nr") != NR:
        raise Fail(f"sumarray is number {r17.get('nr')} in kernel/syscall_64.tbl, the handout "
                   f"says {NR}: '{ROW}'")
    if r17.get("arity") != ARITY:
        raise Fail(f"sumarray is declared with SYSCALL_DEFINE{r17.get('arity')}; it takes "
                   f"{ARITY} arguments (arr, n, out): SYSCALL_DEFINE{ARITY}")
    for conv, rec in (("v4.16", r16), ("v4.17", r17)):
        if not all(pr.get("reached") for pr in rec.get("probes", [])):
            raise Fail(f"under {conv} a call to sumarray did not reach its body "
                       "(entrysim exposure --kernel kernel --syscall sumarray)")


# Linux's CONFIG_FRAME_WARN for 64-bit kernels (lib/Kconfig.debug: "default
# 2048 if 64BIT"); the kernel stack is 16 KiB (include/kmodel.h,
# KERNEL_STACK_SIZE), and Linux's guard page turns an overflow into a crash
# that the simulator's kernel does not have.
FRAME_WARN = 2048


@g.check("kernel: student.c's stack frames are under 2 KiB", points=5, section="Task 1",
         timeout=240)
def _(ctx):
    obj = os.path.join(kernel(ctx), "build", "obj")
    rows = []
    try:
        names = sorted(n for n in os.listdir(obj) if n.startswith("student.c") and n.endswith(".su"))
    except OSError:
        names = []
    if not names:
        raise Fail("the build of your kernel wrote no stack-usage file for student.c "
                   "(is student.c still a 'src' of kernel/kernel.build?)")
    for n in names:
        with open(os.path.join(obj, n)) as f:
            for line in f:
                parts = line.rstrip("\n").split("\t")
                if len(parts) == 3 and parts[1].isdigit():
                    rows.append((parts[0].rsplit(":", 1)[-1], int(parts[1]), parts[2]))
    if not any(NAME in fn for fn, _, _ in rows):
        raise Fail("student.c defines no sumarray yet")
    big = sorted({(fn, size) for fn, size, _ in rows if size >= FRAME_WARN}, key=lambda r: -r[1])
    if big:
        fn, size = big[0]
        raise Fail(f"{fn} uses {size} bytes of stack; the kernel stack is 16 KiB and Linux "
                   f"warns at {FRAME_WARN} (CONFIG_FRAME_WARN): copy the array in small "
                   "chunks (or one element at a time), not all at once")
    vla = sorted({fn for fn, _, kind in rows if "dynamic" in kind and "bounded" not in kind})
    if vla:
        raise Fail(f"{vla[0]} has a stack frame whose size depends on its input (a "
                   "variable-length array or alloca): use a fixed, small buffer")


@g.check("kernel: the handout's cases, v4.16", points=10, section="Task 1", timeout=240)
def _(ctx):
    run_cases(ctx, kernel_tests(ctx), "visible", V416, "sumarray")


@g.check("kernel: the handout's cases, v4.17", points=10, section="Task 1", timeout=240)
def _(ctx):
    run_cases(ctx, kernel_tests(ctx), "visible", V417, "sumarray")


@g.check("kernel: bad pointers give -EFAULT", points=15, section="Task 1", hidden=True,
         timeout=240)
def _(ctx):
    for kopts in (V416, V417):
        run_cases(ctx, kernel_tests(ctx), "efault", kopts, "sumarray with bad pointers")


@g.check("kernel: sizes, -EINVAL and the largest n", points=10, section="Task 1", hidden=True,
         timeout=240)
def _(ctx):
    for kopts in (V416, V417):
        run_cases(ctx, kernel_tests(ctx), "einval", kopts, "sumarray with other sizes")


@g.check("kernel: every case on other kernels", points=5, section="Task 1", hidden=True,
         timeout=240)
def _(ctx):
    for kopts in (["--patches", "fa69714"], V417 + ["--mitigations", "all"],
                  V416 + ["--cpu", "intel"]):
        run_cases(ctx, kernel_tests(ctx), "all", kopts, "sumarray")


# ---------------------------------------------------------------- Task 2

def user_file(ctx, name):
    path = ctx.path("user", name)
    if not os.path.isfile(path):
        raise Fail(f"no user/{name} in the work directory")
    return path


def wrapper_tests(ctx):
    def make():
        return compile_prog(ctx, "wrapper_cases",
                            [os.path.join(TESTS, "wrapper_cases.c"), user_file(ctx, "sumarray.c")],
                            includes=[ctx.path("user")])
    return _cached("wrapper_cases", make)


def sumtest(ctx):
    def make():
        return compile_prog(ctx, "sumtest",
                            [user_file(ctx, "sumtest.c"), user_file(ctx, "sumarray.c")],
                            includes=[ctx.path("user")])
    return _cached("sumtest", make)


def expect_sumtest(ctx, n, kopts):
    """sumtest N (or no argument when n is None, meaning 100) must print the
    sum line and exit 0."""
    args = [] if n is None else [str(n)]
    nn = 100 if n is None else n
    p = guest(ctx, sumtest(ctx), args, kopts)
    cmd = "sumtest" + (f" {n}" if n is not None else "") + f" ({' '.join(kopts)})"
    want = f"sumarray(1..{nn}) = {nn * (nn + 1) // 2}"
    lines = [l for l in p.stdout.splitlines() if l.strip()]
    if p.returncode != 0:
        err = (p.stderr or "").strip().splitlines()
        raise Fail(f"{cmd} exited {p.returncode}, want 0"
                   + (f" (stderr: {err[-1]})" if err else "")
                   + (f"; stdout: {lines[:2]}" if lines else ""))
    if [norm(l) for l in lines] != [norm(want)]:
        raise Fail(f"{cmd} printed {lines[:3]}, want exactly one line '{want}'")


@g.check("user: the wrapper returns 0, or -1 with errno", points=10, section="Task 2",
         timeout=240)
def _(ctx):
    prog = wrapper_tests(ctx)
    try:
        run_cases(ctx, prog, "visible", V417, "your sumarray() wrapper")
    except Fail as e:
        raise Fail(f"{e} (the wrapper runs on your kernel: Task 1's sumarray must work too)")


@g.check("user: sumtest 100 prints the sum it got from syscall 333", points=10,
         section="Task 2", timeout=240)
def _(ctx):
    expect_sumtest(ctx, 100, V416)
    tj = os.path.join(bindir(ctx), "sumtest-timing.json")
    guest(ctx, sumtest(ctx), ["100"], V416, ["--timing-json", tj])
    t = ctx.json_file(tj)
    calls = [s for s in t.get("per_syscall", []) if s.get("nr") == NR]
    if not calls or calls[0].get("count", 0) < 1:
        raise Fail("sumtest printed the right sum but made no system call 333 (entrysim run "
                   "--timing-json's per_syscall): the sum must come from the kernel")
    if calls[0].get("entry") != "syscall64":
        raise Fail(f"sumtest entered syscall 333 through {calls[0].get('entry')}, not the "
                   "SYSCALL instruction (syscall64)")
    expect_sumtest(ctx, 100, V417)


@g.check("user: sumtest and the wrapper on other inputs", points=5, section="Task 2",
         hidden=True, timeout=240)
def _(ctx):
    run_cases(ctx, wrapper_tests(ctx), "hidden", V417, "your sumarray() wrapper")
    expect_sumtest(ctx, None, V417)
    expect_sumtest(ctx, 4096, V416)
    p = guest(ctx, sumtest(ctx), ["4097"], V417)
    if p.returncode != 2 or p.stdout.strip():
        raise Fail(f"sumtest 4097 (more than SUMARRAY_MAX) exited {p.returncode} with "
                   f"stdout {p.stdout.strip()[:60]!r}; want exit 2 and nothing on stdout "
                   "(the error goes to stderr)")


# ---------------------------------------------------------------- Task 3

def probe(rec, point):
    for pr in rec.get("probes", []):
        if pr.get("point") == point:
            return pr
    raise Fail(f"entrysim exposure --json has no '{point}' probe")


def answer_set(s):
    s = s.strip().lower()
    if s in ("none", "-", "nothing", "{}", "[]"):
        return set()
    return {w.lstrip("%") for w in re.split(r"[\s,;/]+", s) if w}


@g.check("answers: the functions each convention calls", points=5, section="Task 3",
         timeout=240)
def _(ctx):
    recs = exposure(ctx)
    wrong = []
    for conv in ("v4.16", "v4.17"):
        for point, key in (("table_target", "table_target"), ("body", "body")):
            k = f"{conv.replace('.', '')}_{key}"
            got = ctx.answer(k)
            want = probe(recs[conv], point).get("symbol", "")
            ok = {norm(want)}
            if want.startswith("sys_"):
                ok.add(norm("SyS_" + want[4:]))  # v4.16's sys_NAME is an alias of SyS_NAME
            if not got:
                wrong.append(f"{k} is empty")
            elif norm(got) not in ok:
                wrong.append(f"{k}: '{got}' is not the function the tool names at the "
                             f"{point} probe under {conv}")
    if wrong:
        raise Fail("; ".join(wrong) + " (entrysim exposure --kernel kernel --syscall sumarray, "
                   "and explain)")


@g.check("answers: undeclared registers at the body", points=5, section="Task 3",
         timeout=240)
def _(ctx):
    recs = exposure(ctx)
    wrong = []
    for conv in ("v4.16", "v4.17"):
        k = f"{conv.replace('.', '')}_undeclared"
        got = ctx.answer(k)
        body = probe(recs[conv], "body")
        exposed = body.get("exposed", [])
        labels = set()
        for reg in exposed:
            labels.update(body.get("regs", {}).get(reg, []))
        if not got:
            wrong.append(f"{k} is empty (write 'none' when there are none)")
        elif answer_set(got) not in (labels, set(exposed)):
            wrong.append(f"{k}: '{got}' is not the set of user registers marked '!' at the "
                         f"body under {conv} (in 'rcx=r10!', the user register is r10)")
    if wrong:
        raise Fail("; ".join(wrong))


g.main()
