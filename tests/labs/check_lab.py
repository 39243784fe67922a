#!/usr/bin/env python3
"""check_lab.py - the honesty of one lab's grader and handout (issue 16).

  check_lab.py --entrysim PATH --labs DIR --lab NAME grader
      `entrysim lab start` into a fresh directory; the grader must FAIL on
      the untouched starter files (exit 1, not full marks) and, with the
      reference solution copied over them, PASS with full marks (exit 0);
      its JSON must list at least one hidden check.
  check_lab.py --entrysim PATH --labs DIR --lab NAME handout
      every `$ ` line of the handout's ```sh blocks runs, in order, with
      bash in a freshly started work directory (entrysim on PATH) and must
      exit 0, or N when the line ends with `# exit N`.

Exit status: 0 the lab holds, 1 it does not (the message says why), 2 bad
usage.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

# ENTRYSIM_LAB_TIMEOUT_SCALE (grading.py's) stretches this script's limits too
SCALE = max(1.0, float(os.environ.get("ENTRYSIM_LAB_TIMEOUT_SCALE", "1") or 1))


def start(a, env, top):
    work = os.path.join(top, "work")
    p = subprocess.run([a.entrysim, "lab", "start", a.lab, work], env=env, text=True,
                       capture_output=True, timeout=300)
    if p.returncode != 0:
        sys.exit(f"FAIL {a.lab}: lab start exited {p.returncode}: {p.stderr.strip()}")
    return work


def grade(a, env, work):
    t0 = time.monotonic()
    p = subprocess.run([a.entrysim, "lab", "grade", "--json", work], env=env, text=True,
                       capture_output=True, timeout=900 * SCALE)
    try:
        res = json.loads(p.stdout)
    except ValueError:
        sys.exit(f"FAIL {a.lab}: the grader printed no JSON (exit {p.returncode}): "
                 f"{p.stderr.strip()[-500:]}")
    return p.returncode, res, time.monotonic() - t0


def check_grader(a, env, top):
    work = start(a, env, top)
    rc, res, _ = grade(a, env, work)
    if rc != 1 or res["score"] >= res["max"]:
        sys.exit(f"FAIL {a.lab}: the starter files score {res['score']}/{res['max']} "
                 f"(exit {rc}); a grader must fail them")
    sol = os.path.join(a.labs, a.lab, "solution")
    if not os.path.isdir(sol):
        sys.exit(f"FAIL {a.lab}: no solution/ directory")
    shutil.copytree(sol, work, dirs_exist_ok=True)
    rc, res, secs = grade(a, env, work)
    if rc != 0 or res["score"] != res["max"]:
        bad = [f"{c['name']}: {c['message']}" for c in res["checks"] if not c["ok"]]
        sys.exit(f"FAIL {a.lab}: the reference solution scores {res['score']}/{res['max']} "
                 f"(exit {rc}): " + "; ".join(bad))
    hidden = sum(1 for c in res["checks"] if c["hidden"])
    if not hidden:
        sys.exit(f"FAIL {a.lab}: no hidden check")
    print(f"{a.lab}: starter fails, solution {res['score']}/{res['max']} in {secs:.1f} s; "
          f"{len(res['checks'])} checks, {hidden} hidden")


def handout_lines(path):
    """The `$ ` lines of the ```sh blocks: (command, expected exit status)."""
    out, inblock = [], False
    with open(path) as f:
        for line in f:
            s = line.rstrip("\n")
            if s.startswith("```"):
                inblock = not inblock and s[3:].strip() in ("sh", "bash", "console")
                continue
            if inblock and s.startswith("$ "):
                cmd = s[2:]
                m = re.search(r"#\s*exit\s+(\d+)\s*$", cmd)
                out.append((cmd, int(m.group(1)) if m else 0))
    return out


def check_handout(a, env, top):
    work = start(a, env, top)
    lines = handout_lines(os.path.join(work, "README.md")) if os.path.exists(
        os.path.join(work, "README.md")) else handout_lines(os.path.join(a.labs, a.lab, "README.md"))
    if not lines:
        sys.exit(f"FAIL {a.lab}: the handout has no `$ ` command lines")
    for cmd, want in lines:
        if cmd.startswith("entrysim lab start"):
            continue  # done above, into this work directory
        if re.match(r"cd\s", cmd):
            continue  # the work directory is the cwd already
        p = subprocess.run(["bash", "-c", cmd], cwd=work, env=env, text=True,
                           capture_output=True, timeout=600 * SCALE)
        if p.returncode != want:
            sys.exit(f"FAIL {a.lab}: handout command `{cmd}` exited {p.returncode}, "
                     f"the handout says {want}: {(p.stderr or p.stdout).strip()[-400:]}")
    print(f"{a.lab}: {len(lines)} handout commands ran as the handout says")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--entrysim", required=True)
    ap.add_argument("--labs", required=True)
    ap.add_argument("--lab", required=True)
    ap.add_argument("what", choices=["grader", "handout"])
    a = ap.parse_args()
    a.entrysim = os.path.abspath(a.entrysim)
    a.labs = os.path.abspath(a.labs)
    env = dict(os.environ, ENTRYSIM_LABS=a.labs,
               PATH=os.path.dirname(a.entrysim) + os.pathsep + os.environ.get("PATH", ""))
    top = tempfile.mkdtemp(prefix="entrysim-labtest-")
    try:
        (check_grader if a.what == "grader" else check_handout)(a, env, top)
    finally:
        shutil.rmtree(top, ignore_errors=True)


if __name__ == "__main__":
    main()
