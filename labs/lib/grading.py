"""grading.py - the grading library every lab's grade.py uses (Python 3
standard library only).

A lab's grader declares checks with points; `Grader.main()` runs them the
way `make grade` does in MIT 6.S081: one line per check with its points, a
total, exit status 0 only at full marks.  With --json it prints one JSON
object for an LMS / autograder upload instead.

    from grading import Grader, Fail
    g = Grader(__file__)

    @g.check("write enters through SYSCALL", points=10, section="Task 1")
    def _(ctx):
        facts = ctx.entrysim_json(["exposure", "--syscall", "write", "--json"])
        if ctx.answer("entry") != "syscall64":
            raise Fail("'entry' should name how write enters the kernel")

    g.main()

Checks read entrysim's JSON outputs, transcripts and the student's files,
never screen text.  A check marked hidden=True tests inputs the handout does
not list (the 6.S081 practice): its name is printed, its inputs are not.
Every check runs under a timeout (default 120 s); a check that runs out, or
raises anything but Fail, scores 0 with the reason.  ENTRYSIM_LAB_TIMEOUT_SCALE
multiplies every timeout (a slow machine, or an entrysim built with
sanitizers: CI's ASan build sets 5).

Command line (entrysim lab grade runs it this way):
    grade.py --entrysim PATH --work DIR [--json] [--only NAME]
Exit status: 0 full marks, 1 fewer, 2 bad usage or a lab that cannot be
graded at all (no work directory, no entrysim).
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

__all__ = ["Grader", "Fail", "Context"]


class Fail(Exception):
    """A check's failure: the message tells the student what was wrong."""


class _Timeout(Exception):
    pass


class Context:
    """What a check sees: the work directory, the lab's directory, entrysim,
    and helpers to run it and read what it writes."""

    def __init__(self, entrysim, work, labdir, timeout):
        self.entrysim = entrysim
        self.work = work
        self.labdir = labdir
        self.timeout = timeout
        self.scale = timeout_scale()
        self._answers = None

    def path(self, *parts):
        """A path inside the work directory."""
        return os.path.join(self.work, *parts)

    def run(self, argv, timeout=None, cwd=None, stdin=None):
        """Runs a command; returns the CompletedProcess (text output)."""
        limit = timeout * self.scale if timeout else self.timeout
        try:
            return subprocess.run(argv, cwd=cwd or self.work, input=stdin, text=True,
                                  capture_output=True, timeout=limit)
        except subprocess.TimeoutExpired:
            raise Fail(f"{' '.join(argv[:3])} ... ran longer than {limit:g} s")
        except OSError as e:
            raise Fail(f"cannot run {argv[0]}: {e.strerror}")

    def entrysim_run(self, args, timeout=None, cwd=None, ok=(0,)):
        """Runs `entrysim ARGS`; fails the check when its exit status is not
        in `ok` (None: any)."""
        p = self.run([self.entrysim] + list(args), timeout=timeout, cwd=cwd)
        if ok is not None and p.returncode not in ok:
            tail = (p.stderr or "").strip().splitlines()[-3:]
            raise Fail(f"entrysim {' '.join(args)} exited {p.returncode}: " + " / ".join(tail))
        return p

    def entrysim_json(self, args, timeout=None, cwd=None):
        """Runs `entrysim ARGS` (which must print JSON: one value, or one
        value per line) and returns the value or the list of values."""
        p = self.entrysim_run(args, timeout=timeout, cwd=cwd)
        return parse_json_text(p.stdout, "entrysim " + " ".join(args))

    def json_file(self, path):
        """A JSON file (or JSON lines) written by entrysim."""
        try:
            with open(path) as f:
                return parse_json_text(f.read(), path)
        except OSError as e:
            raise Fail(f"cannot read {os.path.relpath(path, self.work)}: {e.strerror}")

    def answers(self, name="answers.txt"):
        """The student's answers file: `key: value` lines ('#' comments);
        keys are lower case."""
        if self._answers is None:
            self._answers = read_answers(self.path(name))
        return self._answers

    def answer(self, key, name="answers.txt"):
        """One answer, stripped ('' when the key is there but empty); fails
        when the key is missing."""
        a = self.answers(name)
        if key not in a:
            raise Fail(f"{name} has no line '{key}:' (the starter file lists every key)")
        return a[key]

    def tempdir(self):
        """A fresh directory removed at exit."""
        d = tempfile.mkdtemp(prefix="entrysim-grade-")
        _TEMPS.append(d)
        return d


_TEMPS = []


def timeout_scale():
    """ENTRYSIM_LAB_TIMEOUT_SCALE (>= 1; default 1)."""
    try:
        return max(1.0, float(os.environ.get("ENTRYSIM_LAB_TIMEOUT_SCALE", "1")))
    except ValueError:
        return 1.0


def parse_json_text(text, what):
    text = text.strip()
    if not text:
        raise Fail(f"{what} printed no JSON")
    try:
        return json.loads(text)
    except ValueError:
        pass
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                out.append(json.loads(line))
            except ValueError:
                raise Fail(f"{what}: line {n} is not JSON")
    return out


def read_answers(path):
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise Fail(f"cannot read {os.path.basename(path)}: {e.strerror}")
    out = {}
    for line in lines:
        line = line.split("#", 1)[0].rstrip()
        m = re.match(r"^\s*([A-Za-z0-9_.\-]+)\s*:\s*(.*)$", line)
        if m:
            out[m.group(1).lower()] = m.group(2).strip()
    return out


def norm(s):
    """An answer compared loosely: lower case, no spaces, no '0x' padding."""
    s = s.strip().lower().replace(" ", "")
    if re.fullmatch(r"0x0*[0-9a-f]+", s):
        s = "0x" + s[2:].lstrip("0").rjust(1, "0")
    return s


class Grader:
    def __init__(self, grade_py, handout="README.md"):
        self.labdir = os.path.dirname(os.path.abspath(grade_py))
        self.lab = os.path.basename(self.labdir)
        self.handout = handout
        self.checks = []

    def check(self, name, points, section=None, hidden=False, timeout=120):
        """Decorator: fn(ctx) passes by returning, fails by raising Fail.
        It may return a number in [0, 1] for partial credit, or a tuple
        (fraction, message) saying what the missing part was."""
        def wrap(fn):
            self.checks.append(dict(name=name, points=points, section=section, hidden=hidden,
                                    timeout=timeout, fn=fn))
            return fn
        return wrap

    def _one(self, c, ctx):
        def alarm(signum, frame):
            raise _Timeout()
        old = signal.signal(signal.SIGALRM, alarm)
        limit = int(c["timeout"] * ctx.scale)
        signal.alarm(limit)
        t0 = time.monotonic()
        ctx.timeout = limit
        try:
            frac, msg = c["fn"](ctx), None
            if isinstance(frac, tuple):  # (fraction, why not all of it)
                frac, msg = frac
            frac = 1.0 if frac is None else max(0.0, min(1.0, float(frac)))
            if msg is None or frac == 1.0:
                msg = "" if frac == 1.0 else "partial credit" if frac > 0 else "no credit"
        except Fail as e:
            frac, msg = 0.0, str(e)
        except _Timeout:
            frac, msg = 0.0, f"timed out after {limit} s"
        except Exception as e:  # the grader's own bug must not look like a pass
            frac, msg = 0.0, f"grader error: {type(e).__name__}: {e}"
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)
        got = round(c["points"] * frac, 2)
        if frac < 1.0 and c["section"]:
            msg += f" (handout: {self.handout}, {c['section']})"
        return dict(name=c["name"], points=got, max=c["points"], ok=frac == 1.0,
                    hidden=c["hidden"], section=c["section"], message=msg,
                    seconds=round(time.monotonic() - t0, 2))

    def main(self, argv=None):
        ap = argparse.ArgumentParser(description=f"grades lab {self.lab}")
        ap.add_argument("--entrysim", required=True)
        ap.add_argument("--work", required=True)
        ap.add_argument("--json", action="store_true")
        ap.add_argument("--only", help="run only the checks whose name contains this")
        a = ap.parse_args(argv)
        if not os.path.isdir(a.work):
            print(f"grade: no work directory {a.work}", file=sys.stderr)
            sys.exit(2)
        if not os.access(a.entrysim, os.X_OK):
            print(f"grade: {a.entrysim} is not an executable entrysim", file=sys.stderr)
            sys.exit(2)
        ctx = Context(os.path.abspath(a.entrysim), os.path.abspath(a.work), self.labdir, 120)
        t0 = time.monotonic()
        results = []
        for c in self.checks:
            if a.only and a.only not in c["name"]:
                continue
            r = self._one(c, ctx)
            results.append(r)
            if not a.json:
                self._print(r)
        score = round(sum(r["points"] for r in results), 2)
        top = sum(r["max"] for r in results)
        for d in _TEMPS:
            subprocess.run(["rm", "-rf", d])
        if a.json:
            print(json.dumps(dict(lab=self.lab, score=score, max=top, full=score == top,
                                  seconds=round(time.monotonic() - t0, 2), checks=results),
                             indent=1))
        else:
            print(f"Score: {_num(score)}/{_num(top)}")
        sys.exit(0 if score == top else 1)

    @staticmethod
    def _print(r):
        tag = "OK" if r["ok"] else "FAIL"
        name = r["name"] + (" [hidden]" if r["hidden"] else "")
        print(f"{name}: {tag} ({_num(r['points'])}/{_num(r['max'])})", flush=True)
        if r["message"]:
            print(f"    {r['message']}", flush=True)


def _num(x):
    return str(int(x)) if float(x).is_integer() else f"{x:.2f}"
