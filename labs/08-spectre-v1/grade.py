import os, sys; sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import json
import re
import shutil

from grading import Grader, Fail, norm

g = Grader(__file__)

# How this grader works.  It never uses the student's build or the student's
# copy of spectre.c: it compiles the lab's own spectre.c (starter/spectre.c)
# and builds a copy of the student's kernel tree (kernel/, without build/)
# in a temporary directory, with
#   - the lab's own lab_spectre.h (the hidden checks: another one, with
#     another bound, other values and another secret placed below the array);
#   - the starter's unpatched gadget appended to student.c as a second system
#     call, lab_lookup_ref (number 334).  Attacking it tells the grader that
#     the attack works in this entrysim at all (so a failing attack on 333
#     means the student's fix, not a model that stopped leaking), and gives
#     the Task 1 answers: what the attack recovers, and the speculation
#     counts of --timing-json, before any fix.
# The student's fix is judged by running the attack on 333 with --speculate
# (it must recover no more than 2 bytes of the secret) after the same attack
# on 334 recovered it; and, so that a fix which only removed the bound's
# eviction does not pass, lab_lookup's body must still take at least half the
# cycles per call of the unpatched gadget's (--timing-json).  Every expected
# value comes from the attack's JSON line (the guest program's stdout),
# entrysim's --timing-json and a debugger transcript (--transcript); the
# constants are the lab's own data (lab_spectre.h) and Linux's errno value.

LAB = os.path.dirname(os.path.abspath(__file__))
SPECTRE_C = os.path.join(LAB, "starter", "spectre.c")
HEADER = os.path.join(LAB, "starter", "kernel", "lab_spectre.h")
NR, NR_REF = 333, 334
EINVAL = 22          # Linux: include/uapi/asm-generic/errno-base.h
XOR = 0xa5           # spectre.c's lookup mode: table entry v holds v ^ 0xa5
TOL = 0.10           # the Task 1/3 counts: within 10% of the grader's own run

# The hidden checks' lab_spectre.h: a bound of 24, other values, another
# secret, placed before lab.array (idx = -32 reaches it: a huge unsigned idx).
HIDDEN_SECRET = "Squeamish ossifrage 1994"
HIDDEN_SIZE = 24
HIDDEN_OFFSET = -32
HIDDEN_HEADER = """/* lab_spectre.h - the grader's hidden variant of lab 08's data */
#ifndef LAB_SPECTRE_H
#define LAB_SPECTRE_H

#define LAB_SIZE 24
#define LAB_SECRET "%s"

static unsigned long lab_size __attribute__((aligned(64))) = LAB_SIZE;

static struct {
    char secret[32];
    unsigned char array[LAB_SIZE];
} lab __attribute__((aligned(64), used)) = {
    LAB_SECRET,
    {27, 18, 28, 18, 28, 45, 90, 45, 23, 53, 60, 28, 74, 71, 35, 26, 62, 49, 77, 57, 59, 36, 99, 95},
};

static inline void lab_evict_bound(void)
{
    __asm__ volatile("clflush %%0; mfence" : : "m"(lab_size) : "memory");
}

#define barrier_nospec() __asm__ volatile("lfence" ::: "memory")

#endif
""" % HIDDEN_SECRET

# The starter's gadget, unpatched, as system call 334 (appended to a copy of
# the student's student.c; lab_spectre.h's include guard makes the second
# include harmless).
REF_GADGET = """
/* ---- appended by the lab 08 grader (not part of your file) ---- */
#include "syscalls.h"
#include "lab_spectre.h"
SYSCALL_DEFINE2(lab_lookup_ref, unsigned long, idx, const unsigned char __user *, table)
{
    unsigned char v;

    lab_evict_bound();
    if (idx >= lab_size)
        return -EINVAL;
    if (get_user(v, table + lab.array[idx] * 512))
        return -EFAULT;
    return v;
}
"""
ROW = "%d\tcommon\t%s\t\t__x64_sys_%s\n"

_cache = {}


def visible_secret():
    with open(HEADER) as f:
        m = re.search(r'#define\s+LAB_SECRET\s+"([^"]*)"', f.read())
    if not m:
        raise Fail("grader: the lab's lab_spectre.h has no LAB_SECRET")
    return m.group(1)


def cached(key, fn):
    """fn() once per grading run; a Fail is remembered and raised again."""
    if key not in _cache:
        try:
            _cache[key] = (True, fn())
        except Fail as e:
            _cache[key] = (False, str(e))
    ok, v = _cache[key]
    if not ok:
        raise Fail(v)
    return v


def strip_comments(src):
    src = re.sub(r"/\*.*?\*/", " ", src, flags=re.S)
    return re.sub(r"//[^\n]*", " ", src)


def student_source(ctx):
    try:
        with open(ctx.path("kernel", "student.c")) as f:
            return f.read()
    except OSError as e:
        raise Fail(f"cannot read kernel/student.c: {e.strerror} (did you start the lab with "
                   "'entrysim lab start'?)")


def kernel(ctx, variant):
    """The grader's build of the student's tree: variant 'visible' (the lab's
    lab_spectre.h) or 'hidden' (HIDDEN_HEADER).  Returns its directory."""
    def build():
        src = ctx.path("kernel")
        if not os.path.isfile(os.path.join(src, "kernel.build")):
            raise Fail("kernel/ is not a kernel tree (no kernel/kernel.build): start the lab "
                       "with 'entrysim lab start 08-spectre-v1 DIR'")
        d = os.path.join(ctx.tempdir(), "kernel")
        shutil.copytree(src, d, ignore=lambda dirpath, names:
                        ["build"] if os.path.samefile(dirpath, src) else [])
        with open(os.path.join(d, "lab_spectre.h"), "w") as f:
            if variant == "visible":
                with open(HEADER) as h:
                    f.write(h.read())
            else:
                f.write(HIDDEN_HEADER)
        with open(os.path.join(d, "student.c"), "a") as f:
            f.write(REF_GADGET)
        tbl = os.path.join(d, "syscall_64.tbl")
        with open(tbl) as f:
            rows = f.read().splitlines(keepends=True)
        # no row of 334 but ours; a row for lab_lookup when the student has none
        rows = [r for r in rows if not re.match(r"\s*%d\s" % NR_REF, r)]
        if not rows[-1].endswith("\n"):
            rows[-1] += "\n"
        if not any(re.match(r"\s*\d+\s+\S+\s+lab_lookup\s", r) for r in rows):
            rows.append(ROW % (NR, "lab_lookup", "lab_lookup"))
        rows.append(ROW % (NR_REF, "lab_lookup_ref", "lab_lookup_ref"))
        with open(tbl, "w") as f:
            f.writelines(rows)
        p = ctx.run([ctx.entrysim, "kernel", "build", d])
        if p.returncode != 0:
            tail = " / ".join((p.stderr or "").strip().splitlines()[-4:])
            raise Fail(f"your kernel tree does not build ({'with the lab' if variant == 'visible' else 'with another'}"
                       f" lab_spectre.h, the row of lab_lookup in syscall_64.tbl added if missing): {tail}"
                       " (try: entrysim kernel build kernel)")
        return d
    return cached(("kernel", variant), build)


def attack_binary(ctx, nr):
    """The lab's spectre.c compiled for system call nr."""
    def compile_it():
        out = os.path.join(ctx.tempdir(), f"spectre{nr}")
        cc = os.environ.get("ENTRYSIM_KERNEL_CC") or "gcc"
        p = ctx.run([cc, "-O2", "-static", "-nostdlib", "-fno-pie", "-no-pie",
                     "-fno-stack-protector", f"-DNR_LAB_LOOKUP={nr}", "-o", out, SPECTRE_C])
        if p.returncode != 0:
            raise Fail(f"grader: cannot compile the lab's spectre.c with {cc}: "
                       + " / ".join(p.stderr.strip().splitlines()[-3:]))
        return out
    return cached(("bin", nr), compile_it)


def guest_json(p, what):
    lines = [l for l in (p.stdout or "").splitlines() if l.startswith("{")]
    if not lines:
        raise Fail(f"{what} printed no JSON line (exit {p.returncode}): "
                   + " / ".join((p.stderr or "").strip().splitlines()[-3:]))
    try:
        return json.loads(lines[-1])
    except ValueError:
        raise Fail(f"{what}: its JSON line does not parse: {lines[-1][:200]}")


def attack(ctx, variant, nr, opts=(), args=()):
    """Runs the attack on system call nr of the grader's build; returns
    (attack JSON, lab_lookup's per_syscall row of --timing-json or None)."""
    key = ("attack", variant, nr, tuple(opts), tuple(args))

    def run():
        k = kernel(ctx, variant)
        tj = os.path.join(ctx.tempdir(), "timing.json")
        argv = ["run", "--kernel", k, "--speculate", "--timing-json", tj] + list(opts) \
            + [attack_binary(ctx, nr)] + list(args)
        what = f"entrysim run --speculate {' '.join(opts)} spectre {' '.join(args)} (system call {nr})"
        p = ctx.entrysim_run(argv, ok=None)
        res = guest_json(p, what)
        if res.get("error") == "ENOSYS":
            raise Fail(f"{what}: system call {nr} is not in the kernel")
        if "error" in res:
            raise Fail(f"{what}: the attack could not start: {res}")
        timing = ctx.json_file(tj)
        rows = [r for r in timing.get("per_syscall", []) if r.get("nr") == nr]
        return res, (rows[0] if rows else None)
    return cached(key, run)


def matches(res, secret):
    got = res.get("bytes", [])
    return sum(1 for i, c in enumerate(secret.encode()) if i < len(got) and got[i] == c)


def body(row, what):
    try:
        return row["speculation"][what]["body"]
    except (TypeError, KeyError):
        return 0


def sanity(ctx, variant, secret, opts=(), args=()):
    """The unpatched gadget (334) must leak: else this entrysim does not
    model the attack and no verdict on the student's kernel would mean
    anything."""
    res, row = attack(ctx, variant, NR_REF, opts, args)
    if matches(res, secret) < 0.75 * len(secret):
        raise Fail(f"grader: the unpatched gadget does not leak under entrysim run --speculate "
                   f"{' '.join(opts)} (recovered {res.get('recovered')!r}, expected {secret!r}); "
                   "this entrysim's --speculate model may have changed: tell the instructor")
    return res, row


def body_cycles(row):
    try:
        return float(row["phases_per_call"]["body"])
    except (TypeError, KeyError, ValueError):
        return 0.0


def closed(ctx, variant, secret, opts=(), args=(), where=""):
    _, ref_row = sanity(ctx, variant, secret, opts, args)
    res, row = attack(ctx, variant, NR, opts, args)
    # The fix must close the gadget, not the window: with the bound evicted
    # the body waits for memory (hundreds of cycles a call, as the unpatched
    # gadget's); without lab_evict_bound() it takes a few dozen, the check
    # resolves at once, and the attack fails whatever the gadget does.
    mine, ref = body_cycles(row), body_cycles(ref_row)
    if mine < 0.5 * ref:
        raise Fail(f"lab_lookup's body takes {mine:.0f} cycles a call against the unpatched "
                   f"gadget's {ref:.0f}{where}: the bound no longer comes from memory, so the attack "
                   "cannot tell whether your fix works; keep lab_evict_bound() as the first "
                   "line of lab_lookup (Task 2's rules)")
    n = matches(res, secret)
    if n > 2:
        raise Fail(f"the attack still recovers {n} of the {len(secret)} bytes of the secret from "
                   f"your lab_lookup{where} (it printed {res.get('recovered')!r}); close the "
                   "gadget in kernel/student.c with array_index_nospec() or barrier_nospec() "
                   "right after the bounds check")
    return res, row


def lookups(ctx, variant, idxs):
    k = kernel(ctx, variant)
    p = ctx.entrysim_run(["run", "--kernel", k, attack_binary(ctx, NR), "lookup"]
                         + [str(i) for i in idxs], ok=None)
    res = guest_json(p, "spectre lookup")
    if "lookup" not in res or len(res["lookup"]) != len(idxs):
        raise Fail(f"spectre lookup stopped early (exit {p.returncode}): {res}"
                   " -- a system call that ENOSYS or kills the program")
    return [r["ret"] for r in res["lookup"]]


def functional(ctx, variant, extra):
    """lab_lookup returns the same as the unpatched gadget (334, whose values
    the attack learnt) at every index: the bound's edges, huge and negative
    ones."""
    ref, _ = attack(ctx, variant, NR_REF)
    bound, values = ref["bound"], ref["values"]
    idxs = sorted({0, 1, bound - 2, bound - 1, bound, bound + 1, 255, 1 << 32,
                   (1 << 32) + 1, 1 << 63, (1 << 64) - 1} | set(extra))
    got = lookups(ctx, variant, idxs)
    bad = []
    for i, r in zip(idxs, got):
        want = (values[i] ^ XOR) if i < bound else -EINVAL
        if r != want:
            shown = i if i < (1 << 63) else i - (1 << 64)
            bad.append(f"idx {shown}: {r} (expected {want}"
                       + (f" = table[lab.array[{shown}] * 512])" if i < bound else ", -EINVAL)"))
    if bad:
        raise Fail(f"lab_lookup (bound {bound}) answers wrongly: " + "; ".join(bad[:5])
                   + " -- it must return what the unpatched code returns, for every index")


def int_answer(ctx, key):
    v = ctx.answer(key).replace(",", "").replace("_", "")
    if not v:
        raise Fail(f"answers.txt: '{key}' is empty")
    try:
        return int(v, 0)
    except ValueError:
        raise Fail(f"answers.txt: '{key}' should be a whole number, not {v!r}")


def near(got, want):
    return abs(got - want) <= max(2, TOL * want)


# ---- Task 1: the attack on the unpatched kernel -----------------------------

@g.check("Task 1: kernel tree builds with the lab's lab_spectre.h", points=5,
         section="Task 1", timeout=420)
def _(ctx):
    kernel(ctx, "visible")


@g.check("Task 1: answers.txt 'secret' is what the attack leaks", points=10, section="Task 1")
def _(ctx):
    res, _ = sanity(ctx, "visible", visible_secret())
    want = res["recovered"]
    got = ctx.answer("secret").strip().strip("\"'")
    if not got:
        raise Fail("answers.txt: 'secret' is empty: run the attack (Task 1) and copy what it "
                   "recovered")
    if norm(got) != norm(want):
        raise Fail(f"answers.txt: 'secret' is {got!r}; the attack on the unpatched lab_lookup "
                   "recovers something else (run it with --speculate, Task 1)")


@g.check("Task 1: answers.txt 'windows_before' and 'fills_before' from --timing-json",
         points=5, section="Task 1")
def _(ctx):
    _, row = sanity(ctx, "visible", visible_secret())
    want = {"windows_before": body(row, "windows"), "fills_before": body(row, "fills")}
    wrong = []
    for key, w in want.items():
        got = int_answer(ctx, key)
        if not near(got, w):
            wrong.append(f"{key} = {got}")
    if wrong:
        raise Fail("answers.txt: " + ", ".join(wrong) + " do not match the grader's run of the "
                   "attack on the unpatched lab_lookup: read per_syscall's lab_lookup row, "
                   "speculation.windows.body and speculation.fills.body, of before.json")


def probe_base(ctx):
    """The address of spectre's probe array (the table it passes), from a
    debugger transcript: rsi at the first stop in lab_lookup's body."""
    def run():
        k = kernel(ctx, "visible")
        d = ctx.tempdir()
        script, tr = os.path.join(d, "probe.txt"), os.path.join(d, "probe.jsonl")
        with open(script, "w") as f:
            f.write("break __do_sys_lab_lookup\ncontinue\n")
        ctx.entrysim_run(["debug", "--kernel", k, "--script", script, "--transcript", tr,
                          attack_binary(ctx, NR)])
        lines = ctx.json_file(tr)
        lines = lines if isinstance(lines, list) else [lines]
        for l in lines:
            if l.get("command") == "continue" and l.get("stop") == "breakpoint":
                return int(l["regs"]["rsi"], 16)
        raise Fail("grader: the debugger did not stop in __do_sys_lab_lookup")
    return cached(("probe",), run)


@g.check("Task 1: answers.txt 'probe_line' from print wrongpath", points=5, section="Task 1")
def _(ctx):
    res, _ = sanity(ctx, "visible", visible_secret())
    base = probe_base(ctx)
    want = base + res["bytes"][0] * 512
    v = norm(ctx.answer("probe_line"))
    if not v:
        raise Fail("answers.txt: 'probe_line' is empty")
    try:
        got = int(v, 16)
    except ValueError:
        raise Fail(f"answers.txt: 'probe_line' should be an address in hex (0x...), not {v!r}")
    if got // 64 != want // 64:
        raise Fail(f"answers.txt: 'probe_line' = {v} is not the line the wrong path of the first "
                   f"out-of-bounds call filled (the grader's spectre has its probe array at "
                   f"{base:#x}: if yours differs, build spectre with the handout's command); "
                   "run wrongpath.txt in the debugger and take the 'filled line' of the load in "
                   "__es_get_user_1")


# ---- Task 2: the fix ---------------------------------------------------------

@g.check("Task 2: lab_lookup still returns the right values and -EINVAL", points=15,
         section="Task 2")
def _(ctx):
    functional(ctx, "visible", [])


@g.check("Task 2: the gadget uses array_index_nospec or barrier_nospec, eviction kept",
         points=5, section="Task 2")
def _(ctx):
    code = strip_comments(student_source(ctx))
    if "lab_evict_bound" not in code:
        raise Fail("kernel/student.c no longer calls lab_evict_bound(): keep it (it stands in "
                   "for the attacker; without it the bound is cached and the window too short "
                   "to leak, which fixes nothing on a real CPU)")
    if not re.search(r"\b(array_index_nospec(_ul)?|barrier_nospec)\s*\(|\blfence\b", code):
        raise Fail("kernel/student.c uses neither array_index_nospec() nor barrier_nospec() "
                   "(or an lfence): close the gadget with one of them")


@g.check("Task 2: the attack recovers nothing from your kernel", points=20, section="Task 2")
def _(ctx):
    closed(ctx, "visible", visible_secret())


def after_fix(ctx):
    try:
        return closed(ctx, "visible", visible_secret())
    except Fail as e:
        if str(e).startswith("grader:"):
            raise
        raise Fail(f"Task 3 measures your fixed kernel: pass Task 2's attack check first ({e})")


# ---- Task 3: what the fix changed ----------------------------------------------

@g.check("Task 3: answers.txt 'windows_after' and 'fills_after' from --timing-json",
         points=10, section="Task 3")
def _(ctx):
    _, row = after_fix(ctx)
    want = {"windows_after": body(row, "windows"), "fills_after": body(row, "fills")}
    wrong = []
    for key, w in want.items():
        got = int_answer(ctx, key)
        if not near(got, w):
            wrong.append(f"{key} = {got}")
    if wrong:
        raise Fail("answers.txt: " + ", ".join(wrong) + " do not match the grader's run of the "
                   "attack on your fixed lab_lookup: read lab_lookup's row of after.json")


@g.check("Task 3: answers.txt 'nospec_off_leaks' (--mitigations no-nospec)", points=5,
         section="Task 3")
def _(ctx):
    secret = visible_secret()
    after_fix(ctx)
    res, _ = attack(ctx, "visible", NR, ["--mitigations", "no-nospec"])
    want = "yes" if matches(res, secret) > 2 else "no"
    got = norm(ctx.answer("nospec_off_leaks"))
    if got not in ("yes", "no"):
        raise Fail("answers.txt: 'nospec_off_leaks' should be yes or no")
    if got != want:
        raise Fail(f"answers.txt: 'nospec_off_leaks' is {got}; the grader's run of the attack "
                   "on your kernel with --mitigations no-nospec says otherwise")


# ---- hidden checks --------------------------------------------------------------

@g.check("hidden: lab_lookup is right at the edges of another bound", points=7, hidden=True,
         timeout=420)
def _(ctx):
    functional(ctx, "hidden", [HIDDEN_SIZE - 8, HIDDEN_SIZE + 7, (1 << 64) + HIDDEN_OFFSET])


@g.check("hidden: no leak of another secret placed below the array", points=7, hidden=True)
def _(ctx):
    closed(ctx, "hidden", HIDDEN_SECRET, args=["leak", str(HIDDEN_OFFSET)],
           where=" (another lab_spectre.h: the secret below lab.array, idx negative)")


@g.check("hidden: no leak on Intel (skylake) under the v4.16 convention", points=6,
         hidden=True)
def _(ctx):
    closed(ctx, "visible", visible_secret(),
           opts=["--cpu", "intel", "--uarch", "skylake", "--convention", "v4.16"],
           where=" (--cpu intel --uarch skylake --convention v4.16)")


g.main()
