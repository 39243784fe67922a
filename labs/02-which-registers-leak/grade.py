import os, sys; sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import json
import re

from grading import Grader, Fail, norm

g = Grader(__file__)

# Every expected answer below comes from `entrysim exposure ... --json` at
# grading time; the only constants are the inputs (syscall and entry names)
# and, for the two explanations, the words a right answer cannot avoid.

KERNELS = ("v4.16", "v4.17")
POINTS = ("dispatch", "table_target", "body")
TASK1_SYSCALLS = ("getpid", "read", "close", "mmap")   # named in the handout

_cache = {}


def expo(ctx, args):
    """entrysim exposure ARGS --json, once per grading run."""
    key = tuple(args)
    if key not in _cache:
        out = ctx.entrysim_json(["exposure"] + list(args) + ["--json"])
        if isinstance(out, dict):
            out = [out]
        _cache[key] = out
    return _cache[key]


def one(ctx, syscall, entry):
    """{kernel: {point: set of exposed registers}} for one syscall and entry."""
    res = {}
    for o in expo(ctx, ["--syscall", syscall, "--entry", entry]):
        res[o["convention"]] = {p["point"]: set(p["exposed"]) for p in o["probes"]}
    missing = [k for k in KERNELS if k not in res]
    if missing:
        raise Fail(f"grader: entrysim exposure --syscall {syscall} --entry {entry} --json "
                   f"printed no case for {', '.join(missing)}")
    return res


def all_rows(ctx, entry, kernel):
    rows = [o for o in expo(ctx, ["--all", "--entry", entry]) if o["convention"] == kernel]
    if not rows:
        raise Fail(f"grader: entrysim exposure --all --entry {entry} --json printed no {kernel} rows")
    return rows


def total(ctx, entry, kernel):
    return sum(len(p["exposed"]) for o in all_rows(ctx, entry, kernel) for p in o["probes"])


def common_pairs(ctx, entry, kernel, point):
    """The (register, labels) pairs exposed at `point` in every row of the entry."""
    common = None
    for o in all_rows(ctx, entry, kernel):
        for p in o["probes"]:
            if p["point"] != point:
                continue
            pairs = {(r, frozenset(p["regs"].get(r, []))) for r in p["exposed"]}
            common = pairs if common is None else common & pairs
    return common or set()


# ---- reading the student's answers ------------------------------------------

def reg_set(ctx, key):
    """A list of register names ('none' for no register); None when unanswered."""
    v = ctx.answer(key).lower()
    if not v:
        return None
    v = v.replace("%", "").replace("!", "")
    if norm(v) in ("none", "-", "{}", "[]", "nothing", "empty"):
        return set()
    # 'rcx=r10' (copied from the text output) counts as rcx
    return {t.split("=")[0] for t in re.split(r"[\s,;]+", v) if t.split("=")[0]}


def pair_set(ctx, key):
    """'reg=label reg=label' pairs ('none' for no register); None when unanswered."""
    v = ctx.answer(key).lower().replace("%", "")
    if not v:
        return None
    if norm(v) in ("none", "-", "nothing"):
        return set()
    pairs = re.findall(r"([a-z0-9]+)\s*=\s*([a-z0-9_+|/]+)", v)
    if not pairs:
        raise Fail(f"answers.txt '{key}': write register=label pairs, such as 'rdi=rdi', "
                   f"separated by spaces (got '{v}')")
    return {(r, frozenset(x for x in re.split(r"[+|/]", l) if x)) for r, l in pairs}


def show_regs(s):
    return " ".join(sorted(s)) if s else "none"


def show_pairs(s):
    return " ".join(sorted(f"{r}={'+'.join(sorted(l))}" for r, l in s)) if s else "none"


def number(ctx, key):
    v = ctx.answer(key).replace(",", "").replace("_", "").strip()
    if not v:
        return None
    try:
        return int(v, 0)
    except ValueError:
        raise Fail(f"answers.txt '{key}' should be a whole number (got '{v}')")


# ---- Task 1 -----------------------------------------------------------------

def task1(name):
    def check(ctx):
        want = one(ctx, name, "syscall64")
        bad, empty, right = [], [], 0
        for k in KERNELS:
            for pt in POINTS:
                key = f"{name}.{k}.{pt}"
                got = reg_set(ctx, key)
                exp = want[k].get(pt, set())
                if got == exp:
                    right += 1
                elif got is None:
                    empty.append(key)
                else:
                    bad.append(f"'{key}': {show_regs(got)} is not what `entrysim exposure "
                               f"--syscall {name}` marks with '!' under {k} at {pt}")
        if empty:
            bad.append(f"{', '.join(empty)} unanswered (write 'none' when no register is exposed)")
        if bad:
            raise Fail(f"{right} of 6 right; " + "; ".join(bad))
    return check


for _n in TASK1_SYSCALLS:
    g.check(f"Task 1: {_n} at the three probes", points=5, section="Task 1")(task1(_n))


# ---- Task 2 -----------------------------------------------------------------

@g.check("Task 2: syscall64 totals over all rows", points=5, section="Task 2")
def _(ctx):
    bad = []
    for k in KERNELS:
        key = f"total.syscall64.{k}"
        got = number(ctx, key)
        if got != total(ctx, "syscall64", k):
            bad.append(f"'{key}' ({'empty' if got is None else got}) is not the sum of the exposed "
                       f"registers over every probe of every row of `entrysim exposure --all "
                       f"--entry syscall64 --json` under {k}")
    if bad:
        raise Fail("; ".join(bad))


def totals_check(entries):
    def check(ctx):
        bad = []
        for e in entries:
            for k in KERNELS:
                key = f"total.{e}.{k}"
                got = number(ctx, key)
                if got != total(ctx, e, k):
                    bad.append(f"'{key}' ({'empty' if got is None else got})")
        if bad:
            raise Fail(", ".join(bad) + " do not match `entrysim exposure --all --entry ENTRY "
                       "--json` (the exposed registers summed over every probe of every row of "
                       "that kernel)")
    return check


g.check("Task 2: x32 and int80 totals", points=5, section="Task 2")(
    totals_check(("x32", "int80")))
g.check("Task 2: syscall32 and sysenter32 totals", points=5, section="Task 2")(
    totals_check(("syscall32", "sysenter32")))


@g.check("Task 2: what is left of syscall64 under v4.17", points=5, section="Task 2")
def _(ctx):
    count = {}
    for o in all_rows(ctx, "syscall64", "v4.17"):
        for p in o["probes"]:
            for r in p["exposed"]:
                k = (p["point"], r, frozenset(p["regs"].get(r, [])))
                count[k] = count.get(k, 0) + 1
    if count:
        point, reg, labels = max(count, key=lambda k: count[k])
        want = (point, {reg}, set(labels))
    else:  # nothing left in this model: 'none' everywhere
        want = ("none", set(), set())
    got_point = re.sub(r"[\s_\-]", "", ctx.answer("leftover64.point").lower())
    got_reg = reg_set(ctx, "leftover64.reg")
    got_holds = reg_set(ctx, "leftover64.holds")
    bad = []
    if got_point != want[0].replace("_", ""):
        bad.append("'leftover64.point' should be the probe (dispatch, table_target or body) "
                   "where the exposed registers of syscall64's v4.17 rows are")
    if got_reg != want[1]:
        bad.append("'leftover64.reg' should be the register that is exposed there in most rows")
    if got_holds != want[2]:
        bad.append("'leftover64.holds' should be the user register (the label) its value comes from")
    if bad:
        raise Fail("; ".join(bad))


# ---- Task 3 -----------------------------------------------------------------

def pairs_check(entry, point, key, what):
    def check(ctx):
        want = common_pairs(ctx, entry, "v4.17", point)
        got = pair_set(ctx, key)
        if got is None:
            raise Fail(f"'{key}' is empty; {what}")
        if got != want:
            missing = {r for r, _ in want} - {r for r, _ in got}
            extra = {r for r, _ in got} - {r for r, _ in want}
            hint = []
            if missing:
                hint.append(f"{len(missing)} register(s) missing")
            if extra:
                hint.append(f"{', '.join(sorted(extra))} not exposed there in every row")
            if not hint:
                hint.append("the registers are right but a label (the user register after '=') is not")
            raise Fail(f"'{key}' = {show_pairs(got)}: {'; '.join(hint)}; {what}")
    return check


g.check("Task 3: sysenter32 leftovers at the dispatcher", points=5, section="Task 3")(
    pairs_check("sysenter32", "dispatch", "sysenter.dispatch",
                "it lists the registers exposed at the dispatch probe in every sysenter32 row "
                "under v4.17, as register=label (`entrysim exposure --all --entry sysenter32 "
                "--convention v4.17 --json`)"))
g.check("Task 3: sysenter32 leftovers at the table target", points=5, section="Task 3")(
    pairs_check("sysenter32", "table_target", "sysenter.table_target",
                "it lists the registers exposed at the table_target probe in every sysenter32 "
                "row under v4.17, as register=label"))
g.check("Task 3: syscall32 leftover at the table target", points=5, section="Task 3")(
    pairs_check("syscall32", "table_target", "syscall32.table_target",
                "it lists the registers exposed at the table_target probe in every syscall32 "
                "row under v4.17, as register=label (`entrysim exposure --all --entry syscall32 "
                "--convention v4.17 --json`)"))


def dispatch_exposed(ctx, entry, patch):
    objs = expo(ctx, ["--syscall", "getpid", "--entry", entry, "--patches", patch])
    return {p["point"]: set(p["exposed"]) for p in objs[0]["probes"]}.get("dispatch", set())


def clearing_commit(ctx):
    """The commit of the v4.17 kernel which, applied alone to v4.16, leaves no
    user value exposed at int80's dispatcher but leaves sysenter32's as it was."""
    if "commit" not in _cache:
        v417 = [o for o in expo(ctx, ["--syscall", "getpid", "--entry", "int80"])
                if o["convention"] == "v4.17"]
        patches = v417[0]["patches"] if v417 else []
        found = [p for p in patches
                 if not dispatch_exposed(ctx, "int80", p) and dispatch_exposed(ctx, "sysenter32", p)]
        if len(found) != 1:
            raise Fail(f"grader: expected one commit of {patches} to clear int80's dispatcher "
                       f"alone, found {found or 'none'}")
        _cache["commit"] = found[0].lower()
    return _cache["commit"]


@g.check("Task 3: the commit that clears the other 32-bit entries", points=5, section="Task 3")
def _(ctx):
    want = clearing_commit(ctx)
    got = norm(ctx.answer("sysenter.commit"))
    if len(got) < 7 or not re.fullmatch(r"[0-9a-f]+", got) or not (want.startswith(got) or got.startswith(want)):
        raise Fail("'sysenter.commit' should be the id (7 or more hex digits) of the commit that, "
                   "with `--patches ID` alone, leaves no user value exposed at int80's dispatcher "
                   "but changes nothing at sysenter32's (try each toggle of the series)")


def keywords(ctx, key, groups):
    """Every group (a description and the words any of which satisfies it)
    must appear in the answer."""
    text = " " + re.sub(r"[^a-z0-9_]+", " ", ctx.answer(key).lower()) + " "
    if len(text.split()) < 5:
        raise Fail(f"'{key}' should be a sentence or two of explanation")
    missing = [desc for desc, words in groups if not any(w in text for w in words)]
    if missing:
        raise Fail(f"'{key}' does not mention " + "; nor ".join(missing))


# The i386 syscall ABI passes arguments in ebx, ecx, edx, esi, edi, ebp; the
# fast paths (SYSENTER, 32-bit SYSCALL) need EBP for the stack pointer, so the
# vDSO pushes the sixth argument on the user stack and do_fast_syscall_32 reads
# it from there (Linux arch/x86/entry/common.c; docs/EXPOSURE.md, the probe
# table).  These words are the constants of the two explanations.
ARG6 = (" arg6 ", " arg 6 ", " argument 6 ", " 6th ", " sixth ", " six ", " get_user",
        " es_get_user")
CLEAR = (" clear", " xor", " zero")


@g.check("Task 3: why the SYSENTER entry still leaks", points=5, section="Task 3")
def _(ctx):
    commit = clearing_commit(ctx)
    # the entry's name as exposure --json spells it ("sysenter32"), without the digits
    entry = re.sub(r"\d+$", "", all_rows(ctx, "sysenter32", "v4.17")[0]["entry"].lower())
    keywords(ctx, "sysenter.why_entry", [
        ("the commit that added the clearing (its id, 7 or more hex digits)", (commit[:7],)),
        ("what that commit does to the registers (clears / xors / zeroes them)", CLEAR),
        ("which entry code it did not change (the SYSENTER entry)", (" " + entry, "_" + entry)),
    ])


@g.check("Task 3: where the table target's new user value comes from", points=5, section="Task 3")
def _(ctx):
    objs = all_rows(ctx, "sysenter32", "v4.17")
    disp = {p["symbol"].lower() for p in objs[0]["probes"] if p["point"] == "dispatch"}
    keywords(ctx, "sysenter.why_stack", [
        ("the function that loads it (the dispatcher, named in the dispatch probe)",
         tuple(" " + d + " " for d in disp)),
        ("where the value points (the user stack)", (" stack",)),
        ("what the dispatcher reads there (which argument)", ARG6),
    ])


# ---- Task 4 -----------------------------------------------------------------

def run_leaks(ctx, syscall, entry):
    bindir = os.path.dirname(ctx.entrysim)
    if not os.environ.get("PATH", "").startswith(bindir + os.pathsep):
        os.environ["PATH"] = bindir + os.pathsep + os.environ.get("PATH", "")
    if os.path.exists(ctx.path("leaks.py")):
        argv, name = [sys.executable, "leaks.py", syscall, entry], "leaks.py"
    elif os.path.exists(ctx.path("leaks.sh")):
        argv, name = ["bash", "leaks.sh", syscall, entry], "leaks.sh"
    else:
        raise Fail("no leaks.py (or leaks.sh) in the work directory")
    p = ctx.run(argv, timeout=60)
    if p.returncode != 0:
        lines = [l.strip() for l in (p.stderr or "").splitlines()
                 if l.strip() and not re.fullmatch(r"[\s~^]+", l)]
        tail = " / ".join(lines[-2:])
        raise Fail(f"`{name} SYSCALL ENTRY` exited {p.returncode}: {tail}")
    try:
        out = json.loads(p.stdout)
    except ValueError:
        raise Fail(f"{name} must print one JSON object; it printed: {p.stdout.strip()[:120]!r}")
    if not isinstance(out, dict):
        raise Fail(f"{name} must print a JSON object keyed by kernel (\"v4.16\", \"v4.17\")")
    return name, out


def leaks_case(ctx, syscall, entry, secret):
    """'' when the script's output matches exposure --json, else what is wrong."""
    name, out = run_leaks(ctx, syscall, entry)
    want = one(ctx, syscall, entry)
    what = "a syscall and entry the handout does not list" if secret else f"{syscall} via {entry}"
    for k in KERNELS:
        got = out.get(k)
        if not isinstance(got, dict):
            return f"for {what}, {name} printed no object under \"{k}\""
        for pt in POINTS:
            regs = got.get(pt, [])
            if not isinstance(regs, list) or not all(isinstance(r, str) for r in regs):
                return f"for {what}, {name}'s \"{k}\".\"{pt}\" is not a list of register names"
            regs = {r.lower().lstrip("%") for r in regs}
            if regs != want[k].get(pt, set()):
                return (f"for {what}, {name} printed {show_regs(regs)} for {k} {pt}, "
                        f"entrysim exposure --json says {show_regs(want[k].get(pt, set()))}"
                        if not secret else
                        f"for {what}, {name}'s {k} {pt} differs from entrysim exposure --json")
    return ""


def leaks_check(cases, secret):
    def check(ctx):
        errs = [e for e in (leaks_case(ctx, s, e, secret) for s, e in cases) if e]
        if errs:
            msg = "; ".join(dict.fromkeys(errs))   # each message once
            raise Fail(msg + (f" ({len(errs)} of {len(cases)} cases wrong)" if len(cases) > 1 else ""))
    return check


g.check("Task 4: leaks script on read via syscall64", points=5, section="Task 4")(
    leaks_check([("read", "syscall64")], False))
g.check("Task 4: leaks script on getpid via sysenter32", points=5, section="Task 4")(
    leaks_check([("getpid", "sysenter32")], False))
# Hidden: syscalls the handout names nowhere (one with no body probe: a
# sys_ni_syscall row), then entries the visible checks do not use.
g.check("Task 4: leaks script on other syscalls", points=10, section="Task 4", hidden=True)(
    leaks_check([("open", "syscall64"), ("uselib", "syscall64"), ("pipe", "int80")], True))
g.check("Task 4: leaks script on other entries", points=10, section="Task 4", hidden=True)(
    leaks_check([("write", "syscall32"), ("readv", "x32"), ("getcpu", "vsyscall")], True))

g.main()
