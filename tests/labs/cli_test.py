#!/usr/bin/env python3
"""cli_test.py - `entrysim lab list|start|grade` and labs/lib/grading.py on
a labs directory made here (two small labs), independent of the real labs.

usage: cli_test.py ENTRYSIM LIBDIR      (LIBDIR: the real labs/lib)
Exit status: 0 all held, 1 a check failed (printed).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

GRADER = '''import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from grading import Grader, Fail, norm
g = Grader(__file__)

@g.check("x is 0x2a", points=6, section="Task 1")
def _(ctx):
    if norm(ctx.answer("x")) != "0x2a":
        raise Fail("x should be 0x2a")

@g.check("entrysim runs", points=3, section="Task 2")
def _(ctx):
    ctx.entrysim_run(["--version"])

@g.check("half of y", points=2, section="Task 3", hidden=True)
def _(ctx):
    y = ctx.answer("y")
    return 1.0 if y == "yes" else 0.5 if y else 0.0

@g.check("slow", points=1, hidden=True, timeout=1)
def _(ctx):
    if ctx.answer("y") == "slow":
        import time; time.sleep(5)

g.main()
'''

failures = []


def expect(what, cond, detail=""):
    print(("ok   " if cond else "FAIL ") + what + ("" if cond else f": {detail}"))
    if not cond:
        failures.append(what)


def main():
    es, lib = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    top = tempfile.mkdtemp(prefix="entrysim-labcli-")
    try:
        labs = os.path.join(top, "labs")
        shutil.copytree(lib, os.path.join(labs, "lib"))
        for name, kernel in (("01-first", "no"), ("02-kernel-one", "yes")):
            d = os.path.join(labs, name)
            os.makedirs(os.path.join(d, "starter"))
            os.makedirs(os.path.join(d, "solution"))
            with open(os.path.join(d, "lab.conf"), "w") as f:
                f.write(f"title = The {name} lab\nminutes = 15\nkernel = {kernel}\n")
            with open(os.path.join(d, "grade.py"), "w") as f:
                f.write(GRADER)
            with open(os.path.join(d, "starter", "answers.txt"), "w") as f:
                f.write("x:   # the answer\ny:\n")
            with open(os.path.join(d, "solution", "answers.txt"), "w") as f:
                f.write("x: 0x002A\ny: yes\n")
        os.makedirs(os.path.join(labs, "02-kernel-one", "starter", "kernel"))
        with open(os.path.join(labs, "02-kernel-one", "starter", "kernel", "student.c"), "w") as f:
            f.write("/* the lab's own student.c */\n")
        env = dict(os.environ, ENTRYSIM_LABS=labs)

        def run(*args, cwd=None):
            return subprocess.run([es, "lab"] + list(args), env=env, cwd=cwd, text=True,
                                  capture_output=True, timeout=300)

        p = run("list")
        expect("list: one line per lab, with title and minutes", p.returncode == 0 and
               p.stdout.count("\n") == 2 and "01-first" in p.stdout and "15 min" in p.stdout and
               "The 02-kernel-one lab (a kernel tree of your own)" in p.stdout, p.stdout)
        p = run("start", "03", os.path.join(top, "w0"))
        expect("start: an unknown lab is a usage error listing the labs",
               p.returncode == 2 and "01-first" in p.stderr, p.stderr)
        p = run("start", "0", os.path.join(top, "w0"))
        expect("start: an ambiguous prefix is a usage error", p.returncode == 2 and
               "more than one" in p.stderr, p.stderr)
        w = os.path.join(top, "w1")
        p = run("start", "01", w)
        expect("start: by a unique prefix", p.returncode == 0 and
               os.path.exists(os.path.join(w, "answers.txt")) and
               not os.path.exists(os.path.join(w, "solution")), p.stderr)
        p = run("start", "01", w)
        expect("start: a non-empty directory is refused", p.returncode == 2, p.stderr)
        p = run("grade", os.path.join(top, "nowhere"))
        expect("grade: a directory with no started lab is a usage error",
               p.returncode == 2 and "no started lab" in p.stderr, p.stderr)
        p = run("grade", cwd=w)
        expect("grade: the starter fails, each check printed with points",
               p.returncode == 1 and "x is 0x2a: FAIL (0/6)" in p.stdout and
               "handout: README.md, Task 1" in p.stdout and "Score: 4/12" in p.stdout, p.stdout)
        with open(os.path.join(w, "answers.txt"), "w") as f:
            f.write("x: 0x2a\ny: slow\n")
        p = run("grade", "--json", w)
        res = json.loads(p.stdout) if p.stdout.strip().startswith("{") else {}
        checks = {c["name"]: c for c in res.get("checks", [])}
        expect("grade --json: partial credit, a timeout scores 0 with its reason",
               p.returncode == 1 and res.get("max") == 12 and res.get("score") == 10 and
               checks["half of y"]["points"] == 1 and checks["half of y"]["hidden"] and
               "timed out" in checks["slow"]["message"], p.stdout)
        shutil.copytree(os.path.join(labs, "01-first", "solution"), w, dirs_exist_ok=True)
        p = run("grade", w)
        expect("grade: the solution gets full marks and exit 0",
               p.returncode == 0 and "Score: 12/12" in p.stdout, p.stdout)
        k = os.path.join(top, "w2")
        p = run("start", "02-kernel-one", k)
        sc = os.path.join(k, "kernel", "student.c")
        expect("start: kernel = yes gives a kernel tree with the starter's files over it",
               p.returncode == 0 and os.path.exists(os.path.join(k, "kernel", "kernel.build")) and
               open(sc).read().startswith("/* the lab's own"), p.stderr)
        p = subprocess.run([es, "lab", "list"], env=dict(env, ENTRYSIM_LABS=top), text=True,
                           capture_output=True)
        expect("a labs directory without lib/grading.py is an error", p.returncode == 1 and
               "ENTRYSIM_LABS" in p.stderr, p.stderr)
    finally:
        shutil.rmtree(top, ignore_errors=True)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
