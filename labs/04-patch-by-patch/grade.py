import os, sys; sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from grading import Grader, Fail, norm

import json
import re

g = Grader(__file__)

# The seven commits of the Linux 4.17 pt_regs syscall series, in the order
# they were merged (git history of v4.17; docs/series/README.md lists them,
# and `entrysim exposure --help` under --patches).  Everything else the
# checks expect (which commits change code, the counts, the registers, the
# stub names) is computed from `entrysim exposure --json` at grading time.
SERIES = ["dfe6450", "1bd21c6", "fa69714", "7303e30", "ebeb8c8", "f8781c4", "6dc936f"]
POINTS = ("dispatch", "table_target", "body")
ENTRIES = ("syscall64", "int80")   # the two entries the handout walks
SYSCALL = "read"                   # the syscall Task 3 and 4 look at
ALONE = "fa69714"                  # the commit Task 4 takes alone

# ---------------------------------------------------------------- the truth
_cache = {}


def exposure(ctx, entry, patches, syscall=None):
    """`entrysim exposure --json` (every row, or one syscall) for a kernel of
    v4.16 plus `patches` (a list), run once per grading."""
    key = (entry, tuple(patches), syscall)
    if key not in _cache:
        args = ["exposure", "--json", "--entry", entry, "--patches", ",".join(patches)]
        args += ["--syscall", syscall] if syscall else ["--all"]
        out = ctx.entrysim_json(args)
        if not isinstance(out, list) or not out:
            raise Fail(f"grader: entrysim {' '.join(args)} printed no rows (is entrysim too old?)")
        _cache[key] = out
    return _cache[key]


def tally(objects):
    counts = {p: 0 for p in POINTS}
    for obj in objects:
        for probe in obj["probes"]:
            if probe["point"] in counts:
                counts[probe["point"]] += len(probe["exposed"])
    counts["total"] = sum(counts[p] for p in POINTS)
    return counts


def walk_step(ctx, entry, commits, k):
    """Row k of what verify.sh ENTRY COMMITS... must print."""
    objs = exposure(ctx, entry, commits[:k])
    row = dict(step=k, commit=commits[k - 1] if k else "", patches=",".join(commits[:k]),
               kernel=objs[0]["convention"])
    row.update(tally(objs))
    return row


def walk(ctx, entry, commits):
    """What verify.sh ENTRY COMMITS... must print: one row per step."""
    return [walk_step(ctx, entry, commits, k) for k in range(len(commits) + 1)]


def row_of(objects, syscall):
    for o in objects:
        if o.get("syscall") == syscall:
            return o
    raise Fail(f"grader: entrysim's --all output has no row for {syscall}")


def probe(obj, point):
    for p in obj["probes"]:
        if p["point"] == point:
            return p
    raise Fail(f"grader: entrysim's row for {obj.get('syscall')} has no {point} probe")


def direction(before, after):
    return "down" if after < before else "up" if after > before else "same"


# ------------------------------------------------------- the student's side
def same_commit(a, b):
    a, b = norm(str(a)), norm(str(b))
    return len(a) >= 7 and len(b) >= 7 and (a.startswith(b) or b.startswith(a))


def commit_set(text, what):
    """A list of commit ids ('none' = empty)."""
    items = [t for t in re.split(r"[\s,;]+", norm_list(text)) if t]
    if items == ["none"]:
        return set()
    out = set()
    for t in items:
        hit = [c for c in SERIES if same_commit(t, c)]
        if not hit:
            raise Fail(f"{what}: '{t}' is not a commit of the series (name each by its first 7 "
                       f"hex digits, e.g. {SERIES[0]}, or write none)")
        out.add(hit[0])
    return out


def name_set(text):
    items = [t.strip("%!") for t in re.split(r"[\s,;]+", norm_list(text)) if t.strip("%!")]
    return set() if items == ["none"] else set(items)


def norm_list(text):
    return text.strip().lower()


def answered(ctx, key):
    v = ctx.answer(key)
    if not v:
        raise Fail(f"answers.txt: '{key}' is empty")
    return v


def verify_table(ctx, args, label=None):
    """Runs the student's ./verify.sh ARGS with entrysim on PATH; returns the
    table it printed."""
    if not os.path.exists(ctx.path("verify.sh")):
        raise Fail("there is no verify.sh in the work directory")
    env_path = os.path.dirname(ctx.entrysim) + os.pathsep + os.environ.get("PATH", "")
    p = ctx.run(["env", "PATH=" + env_path, "bash", "verify.sh"] + args, timeout=100)
    shown = label or "./verify.sh " + " ".join(args)
    if p.returncode != 0:
        tail = " / ".join((p.stderr or "").strip().splitlines()[-3:]) or "nothing on stderr"
        raise Fail(f"{shown} exited {p.returncode}: {tail} (is every entrysim command of it "
                   f"right? run it by hand)")
    try:
        table = json.loads(p.stdout)
    except ValueError:
        raise Fail(f"{shown} did not print one JSON object on stdout (the table of Task 2)")
    if not isinstance(table, dict) or not isinstance(table.get("steps"), list):
        raise Fail(f'{shown}: the JSON has no "steps" list (the format is in Task 2)')
    return table


def compare_tables(ctx, got, commits, entry, shown, hide=False):
    """Fails at the first cell of `got` that differs from what entrysim
    says (computed step by step, so a wrong table fails fast); with hide (a
    hidden check) the messages do not name the commits."""
    if got.get("entry") != entry:
        raise Fail(f'{shown}: "entry" is {got.get("entry")!r}, not the ENTRY it was given')
    steps = got["steps"]
    if len(steps) != len(commits) + 1:
        raise Fail(f"{shown}: {len(steps)} steps, expected {len(commits) + 1} "
                   f"(step 0 = v4.16, then one per commit given)")
    for k, have in enumerate(steps):
        want = walk_step(ctx, entry, commits, k)
        at = f"step {k}" if hide else f'step {k} ({want["patches"] or "no patches"})'
        if not isinstance(have, dict):
            raise Fail(f"{shown}: step {k} is not a JSON object")
        if have.get("step") != k:
            raise Fail(f'{shown}: the step at position {k} has "step": {have.get("step")!r}')
        if k and not same_commit(have.get("commit", ""), want["commit"]):
            raise Fail(f'{shown}: {at}: "commit" is {have.get("commit")!r}, not the '
                       f'{k}th commit given')
        if not k and have.get("commit") not in ("", None):
            raise Fail(f'{shown}: step 0 adds no commit ("commit": "")')
        hp = [c for c in str(have.get("patches", "")).split(",") if c]
        wp = [c for c in want["patches"].split(",") if c]
        if len(hp) != len(wp) or not all(same_commit(a, b) for a, b in zip(hp, wp)):
            raise Fail(f'{shown}: {at}: "patches" is {have.get("patches")!r}, should be the '
                       f'first {k} commits given, comma-separated, in their order')
        if not have.get("kernel"):
            raise Fail(f'{shown}: {at}: "kernel" is empty; entrysim built {want["kernel"]!r} '
                       f'(kernel_name() in tally.py: the "convention" field of its JSON)')
        if have.get("kernel") != want["kernel"]:
            raise Fail(f'{shown}: {at}: "kernel" is {have.get("kernel")!r}, entrysim built '
                       f'{want["kernel"]!r} (the "convention" field of its JSON: did the step '
                       f'pass --patches with the first {k} commits?)')
        for f in POINTS + ("total",):
            if have.get(f) != want[f]:
                raise Fail(f'{shown}: {at}: "{f}" is {have.get(f)!r}, entrysim counts {want[f]} '
                           f'(exposed registers at that probe summed over every row of --all; '
                           f'total = the three)')


def check_verify(ctx, entry, commits=None, label=None):
    """label: how a hidden check names the run in its messages (its inputs
    stay hidden)."""
    args = [entry] + (commits or [])
    table = verify_table(ctx, args, label)
    compare_tables(ctx, table, commits or SERIES, entry,
                   label or "./verify.sh " + " ".join(args), hide=label is not None)


# ------------------------------------------------------------------ Task 1
@g.check("predictions recorded", points=5, section="Task 1")
def _(ctx):
    bad = []
    for c in SERIES:
        for e in ENTRIES:
            key = f"predict.{c}.{e}"
            if norm(ctx.answer(key)) not in ("down", "same", "up"):
                bad.append(key)
    if bad:
        raise Fail(f"answers.txt: {len(bad)} prediction(s) are not down, same or up: "
                   + ", ".join(bad[:4]) + (" ..." if len(bad) > 4 else ""))


# ------------------------------------------------------------------ Task 2
@g.check("verify.sh syscall64", points=15, section="Task 2", timeout=110)
def _(ctx):
    check_verify(ctx, "syscall64")


@g.check("verify.sh int80", points=10, section="Task 2", timeout=110)
def _(ctx):
    check_verify(ctx, "int80")


@g.check("verify.sh: another entry", points=10, section="Task 2", hidden=True, timeout=110)
def _(ctx):
    check_verify(ctx, "x32", ["fa69714", "f8781c4", "ebeb8c8"],
                 label="verify.sh with another entry")


@g.check("verify.sh: the commits in another order", points=10, section="Task 2", hidden=True,
         timeout=110)
def _(ctx):
    check_verify(ctx, "int80", ["6dc936f", "7303e30", "ebeb8c8", "dfe6450"],
                 label="verify.sh with some commits of the series in another order")


@g.check("verify.sh: one commit alone", points=10, section="Task 2", hidden=True, timeout=110)
def _(ctx):
    check_verify(ctx, "syscall64", ["fa69714"], label="verify.sh with one commit")
    check_verify(ctx, "sysenter32", ["6dc936f"],
                 label="verify.sh with one commit and another entry")


# ------------------------------------------------------------------ Task 3
@g.check("body counts per commit", points=10, section="Task 3", timeout=110)
def _(ctx):
    given = {f"body.{c}.{e}": answered(ctx, f"body.{c}.{e}") for e in ENTRIES for c in SERIES}
    wrong = []
    for e in ENTRIES:
        steps = walk(ctx, e, SERIES)
        for k, c in enumerate(SERIES, 1):
            key = f"body.{c}.{e}"
            v = given[key].replace(",", "").replace("_", "")
            if not re.fullmatch(r"\d+", v) or int(v) != steps[k]["body"]:
                wrong.append(key)
    if wrong:
        raise Fail(f"answers.txt: {', '.join(wrong)} differ from the body column of steps "
                   f"1-7 of ./verify.sh syscall64 / int80 (the kernel after the commit and "
                   f"all the commits before it)")


@g.check("registers no longer exposed (read)", points=10, section="Task 3", timeout=110)
def _(ctx):
    given = {c: answered(ctx, f"gone.{c}") for c in SERIES}
    wrong = []
    for k, c in enumerate(SERIES, 1):
        before = row_of(exposure(ctx, "syscall64", SERIES[:k - 1]), SYSCALL)
        after = row_of(exposure(ctx, "syscall64", SERIES[:k]), SYSCALL)
        gone = set()
        for pt in POINTS:
            gone |= set(probe(before, pt)["exposed"]) - set(probe(after, pt)["exposed"])
        key = f"gone.{c}"
        if name_set(given[c]) != gone:
            wrong.append(key)
    if wrong:
        raise Fail(f"answers.txt: {', '.join(wrong)}: compare the '!' registers of "
                   f"`entrysim exposure --syscall read --patches ...` at each probe before "
                   f"and after the commit (kernel register names, e.g. rcx, r8; none if none)")


@g.check("new stubs (read)", points=5, section="Task 3", timeout=110)
def _(ctx):
    given = {c: answered(ctx, f"stub.{c}") for c in SERIES}
    wrong = []
    for k, c in enumerate(SERIES, 1):
        new = set()
        for e in ENTRIES:
            before = probe(row_of(exposure(ctx, e, SERIES[:k - 1]), SYSCALL), "table_target")
            after = probe(row_of(exposure(ctx, e, SERIES[:k]), SYSCALL), "table_target")
            if after["symbol"] != before["symbol"]:
                new.add(after["symbol"].lower())
        key = f"stub.{c}"
        if name_set(given[c]) != new:
            wrong.append(key)
    if wrong:
        raise Fail(f"answers.txt: {', '.join(wrong)}: the function read's table slot points to "
                   f"(the table_target probe, via syscall64 or int80) when it is new with that "
                   f"commit, or none; `entrysim explain read --patches ...` shows its code")


@g.check("commits that change no code", points=5, section="Task 3", timeout=110)
def _(ctx):
    got = commit_set(answered(ctx, "noop"), "noop")
    steps = walk(ctx, "syscall64", SERIES)
    want = {SERIES[k - 1] for k in range(1, len(steps))
            if steps[k]["kernel"] == steps[k - 1]["kernel"]}
    if got != want:
        raise Fail(f"answers.txt: noop names {len(got)} commit(s); the right ones are those whose "
                   f"step builds the same kernel as the step before (the \"kernel\" column of "
                   f"your table, and the note on stderr)")


# ------------------------------------------------------------------ Task 4
@g.check("mispredictions listed", points=5, section="Task 4", timeout=110)
def _(ctx):
    guesses = {}
    for e in ENTRIES:
        for c in SERIES:
            guesses[c, e] = norm(ctx.answer(f"predict.{c}.{e}"))
            if guesses[c, e] not in ("down", "same", "up"):
                raise Fail(f"answers.txt: predict.{c}.{e} is not down, same or up (Task 1 first)")
    got = commit_set(answered(ctx, "mispredicted"), "mispredicted")
    want = set()
    for e in ENTRIES:
        steps = walk(ctx, e, SERIES)
        for k, c in enumerate(SERIES, 1):
            if guesses[c, e] != direction(steps[k - 1]["body"], steps[k]["body"]):
                want.add(c)
    if got != want:
        raise Fail(f"answers.txt: mispredicted should name exactly the commits for which one of "
                   f"your Task 1 predictions (syscall64 or int80) disagrees with the body column "
                   f"of your tables ({len(want)} commit(s); none if there are none)")


@g.check("one commit alone (read)", points=5, section="Task 4", timeout=110)
def _(ctx):
    got = name_set(answered(ctx, f"alone.{ALONE}.read"))
    fix = answered(ctx, f"alone.{ALONE}.fix")
    base = set(probe(exposure(ctx, "syscall64", [ALONE], SYSCALL)[0], "table_target")["exposed"])
    if got != base:
        raise Fail(f"answers.txt: alone.{ALONE}.read: list the '!' registers at read's "
                   f"table_target under `entrysim exposure --syscall read --patches {ALONE}`")
    # For each of those registers, the other commits that remove it when
    # added to fa69714 alone (the ones that change code: see noop).
    steps = walk(ctx, "syscall64", SERIES)
    toggles = [SERIES[k - 1] for k in range(1, len(steps))
               if steps[k]["kernel"] != steps[k - 1]["kernel"] and SERIES[k - 1] != ALONE]
    removers = {r: set() for r in base}
    for t in toggles:
        now = exposure(ctx, "syscall64", [ALONE, t], SYSCALL)[0]
        now = set(probe(now, "table_target")["exposed"])
        for r in base - now:
            removers[r].add(t)
    pairs = dict(re.findall(r"([a-z0-9%]+)\s*[=:]\s*([0-9a-f]+|none)", fix.lower()))
    pairs = {r.strip("%"): c for r, c in pairs.items()}
    bad = []
    for r in sorted(base):
        c = pairs.get(r)
        if c is None:
            bad.append(f"{r} missing")
        elif c == "none":
            if removers[r]:
                bad.append(r)
        elif not any(same_commit(c, t) for t in removers[r]):
            bad.append(r)
    extra = set(pairs) - base
    if bad or extra:
        raise Fail(f"answers.txt: alone.{ALONE}.fix: give REG=COMMIT for each register of "
                   f"alone.{ALONE}.read, COMMIT being the commit that removes it when added to "
                   f"{ALONE} alone (try --patches {ALONE},OTHER); wrong: "
                   + ", ".join(bad + sorted(extra)))


g.main()
