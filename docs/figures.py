#!/usr/bin/env python3
"""Figures in the docs come from the tool: regenerates or checks them.

A doc marks each generated region with two lines:

    <!-- figures: KIND ARGS -->
    ...generated text...
    <!-- /figures -->

KIND is
  output CMD [| FILTER]...   a fenced block with "$ CMD" and what CMD prints
                             (stdout and stderr as one stream); CMD starts with
                             `entrysim`; each FILTER is `grep RE` (the
                             lines that match the regular expression RE,
                             shown as grep -E), `section TEXT` (from
                             the first line that contains TEXT to the next
                             blank line) or `head N`
  exposure-totals            the table of exposed registers per entry path
                             (`entrysim exposure --all --entry E`, summaries)
  patches-alone              each toggle of the series alone: read's probes
                             and the syscall64 total
  series-walk                the series commit by commit: the kernel each
                             prefix of it makes, its exposed registers per
                             entry path and getpid's cycles by phase

The series and which of its commits are toggles come from `entrysim run
--help` (sim/boot/patches.c), not from a list here.

CMD runs with an empty environment from a directory that mirrors the
source root, where build/release/ is the build directory given (--build),
so a doc reads the same whichever build checks it.

usage: figures.py --entrysim BIN [--build DIR] (--check | --update) DOC...
--check exits 1 and prints a diff when a region differs from what the tool
prints now; --update rewrites the regions.  ctest runs --check on every doc
that has regions (tests/docs/CMakeLists.txt).
"""
import argparse
import atexit
import difflib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

BEGIN = re.compile(r"^<!-- figures: (.*?) -->$")
END = "<!-- /figures -->"
DOC_BUILD = "build/release"
ENTRIES = ["syscall64", "x32", "int80", "syscall32", "sysenter32", "vsyscall"]
WALK_ENTRIES = ["syscall64", "x32", "int80", "sysenter32"]


class Tool:
    """Runs entrysim as the docs show it: from a directory that mirrors the
    source root with build/release/ standing for the build directory, so
    paths in commands and output are the doc's whichever build checks it
    (and the guest's stack, where argv and the environment sit, is laid out
    the same), with an empty environment."""

    def __init__(self, entrysim, build, root):
        self.entrysim = os.path.abspath(entrysim)
        self.memo = {}
        self.cwd = tempfile.mkdtemp(prefix="es_figures_")
        atexit.register(shutil.rmtree, self.cwd, True)
        for name in os.listdir(root):
            if name != "build":
                os.symlink(os.path.join(root, name), os.path.join(self.cwd, name))
        os.makedirs(os.path.join(self.cwd, os.path.dirname(DOC_BUILD)))
        os.symlink(os.path.abspath(build or os.path.join(root, DOC_BUILD)),
                   os.path.join(self.cwd, DOC_BUILD))

    def run(self, args):
        """What `entrysim ARGS` writes to stdout and stderr, as one stream
        (a pipe, as `2>&1 |` in a shell: stderr's lines where they came).
        The same command runs once (the regions share many)."""
        key = tuple(args)
        if key not in self.memo:
            p = subprocess.run([self.entrysim] + args, cwd=self.cwd, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, timeout=900, env={})
            self.memo[key] = (p.returncode, p.stdout)
        return self.memo[key]


def summary(tool, args):
    """The summary line of `exposure --all ARGS`: {kernel: (total, rows)}."""
    rc, text = tool.run(["exposure", "--all"] + args)
    line = next((l for l in text.splitlines() if l.startswith("summary (")), None)
    if rc != 0 or line is None:
        raise RuntimeError(f"exposure --all {' '.join(args)}: exit {rc}\n{text[-2000:]}")
    return {k: (int(n), int(r)) for k, n, r in
            re.findall(r"(v4\.1[67][+\w]*): (\d+) exposed registers in (\d+) syscall", line)}


def series(tool):
    """The series' commits in order (12 hex digits each) and the set of
    those that are no toggle, as `entrysim run --help` lists them."""
    rc, text = tool.run(["run", "--help"])
    flat = " ".join(text.split())
    m = re.search(r"the series in order: ((?:[0-9a-f]{12} )+)\(((?:[0-9a-f]{12},? )+)change", flat)
    if rc != 0 or not m:
        raise RuntimeError("entrysim run --help does not list the series")
    return m.group(1).split(), set(m.group(2).replace(",", "").split())


def toggles(tool):
    ids, inert = series(tool)
    return [i[:7] for i in ids if i not in inert]


def filtered(lines, filt):
    """lines through one FILTER, and the shell command that does the same."""
    verb, _, text = filt.partition(" ")
    if verb == "grep":
        return [l for l in lines if re.search(text, l)], f"grep -E '{text}'"
    if verb == "section":
        start = next((k for k, l in enumerate(lines) if text in l), len(lines))
        end = next((k for k in range(start, len(lines)) if not lines[k].strip()), len(lines))
        return lines[start:end], f"sed -n '/{text}/,/^$/p'"
    if verb == "head" and text.isdigit():
        return lines[:int(text)], f"head -n {text}"
    raise RuntimeError(f"output: unknown filter '{filt}'")


def gen_output(tool, spec):
    cmd, *filters = spec.split(" | ")
    args = shlex.split(cmd)
    if args[0] != "entrysim":
        raise RuntimeError(f"output: the command must start with entrysim: {cmd}")
    rc, text = tool.run(args[1:])
    lines = text.rstrip("\n").split("\n")
    shown = [cmd]
    for f in filters:
        lines, sh = filtered(lines, f)
        shown.append(sh)
    status = [f"(exit status {rc})"] if rc else []
    # the filters see stderr too, as after 2>&1 in a shell
    shell = shown[0] + (" 2>&1 | " + " | ".join(shown[1:]) if filters else "")
    return ["```text", "$ " + shell] + lines + status + ["```"]


def gen_exposure_totals(tool, spec):
    out = ["| entry | rows | v4.16 | v4.17 |", "|---|---|---|---|"]
    for e in ENTRIES:
        s = summary(tool, ["--entry", e])
        rows = s["v4.16"][1]
        out.append(f"| {e} | {rows} | {s['v4.16'][0]} | {s['v4.17'][0]} |")
    return out


def probes(tool, patches):
    """read via syscall64 under --patches: the three probe lines' values."""
    rc, text = tool.run(["exposure", "--syscall", "read", "--patches", patches])
    got = {}
    for l in text.splitlines():
        m = re.match(r"^  (dispatch|table_target|body)\s+(\S+)\s+(.*)$", l)
        if m:
            got[m.group(1)] = f"`{m.group(2)}` {m.group(3)}"
    if rc != 0 or len(got) != 3:
        raise RuntimeError(f"exposure --patches '{patches}': exit {rc}\n{text[-2000:]}")
    return got


def gen_patches_alone(tool, spec):
    out = ["| `--patches` | read: dispatch | read: table target | read: body | "
           "syscall64, all rows |", "|---|---|---|---|---|"]
    tg = toggles(tool)
    for p in [""] + tg + [",".join(tg)]:
        pr = probes(tool, p)
        total = list(summary(tool, ["--entry", "syscall64", "--patches", p]).values())[0][0]
        name = f"`{p}`" if p else "`''` (v4.16)"
        out.append(f"| {name} | {pr['dispatch']} | {pr['table_target']} | {pr['body']} | "
                   f"{total} |")
    return out


def getpid_phases(tool, patches):
    """getpid's row of `run --timing` under --patches: total, dispatch,
    stub, body cycles per call."""
    rc, text = tool.run(["run", "--timing", "--patches", patches,
                         f"{DOC_BUILD}/guest/getpid64", "1000"])
    row = next((l.split() for l in text.splitlines() if l.split()[:2] == ["syscall64", "getpid"]),
               None)
    if rc != 0 or row is None:
        raise RuntimeError(f"run --timing --patches '{patches}': exit {rc}\n{text[-2000:]}")
    return row[4], row[7], row[8], row[9]


def gen_series_walk(tool, spec):
    ids, inert = series(tool)
    out = ["| step | `--patches` adds | kernel | " + " | ".join(WALK_ENTRIES) +
           " | getpid cycles/call (dispatch, stub, body) |",
           "|---|---|---|" + "---|" * len(WALK_ENTRIES) + "---|"]
    for k in range(len(ids) + 1):
        patches = ",".join(i[:7] for i in ids[:k])
        sums = [summary(tool, ["--entry", e, "--patches", patches]) for e in WALK_ENTRIES]
        kernel = list(sums[0].keys())[0]
        total, disp, stub, body = getpid_phases(tool, patches)
        added = "(v4.16)" if k == 0 else f"[{ids[k - 1][:8]}]({ids[k - 1][:8]}.md)"
        if k and ids[k - 1] in inert:
            added += " (no toggle)"
        out.append(f"| {k} | {added} | {kernel} | " +
                   " | ".join(str(list(x.values())[0][0]) for x in sums) +
                   f" | {total} ({disp}, {stub}, {body}) |")
    return out


KINDS = {"output": gen_output, "exposure-totals": gen_exposure_totals,
         "patches-alone": gen_patches_alone, "series-walk": gen_series_walk}


def regenerate(tool, lines, path):
    """The doc's lines with every region regenerated."""
    out, i = [], 0
    while i < len(lines):
        out.append(lines[i])
        m = BEGIN.match(lines[i])
        i += 1
        if not m:
            continue
        kind, _, spec = m.group(1).partition(" ")
        if kind not in KINDS:
            raise RuntimeError(f"{path}: unknown figures kind '{kind}'")
        end = lines.index(END, i) if END in lines[i:] else -1
        if end < 0:
            raise RuntimeError(f"{path}: '{m.group(0)}' has no '{END}'")
        out += KINDS[kind](tool, spec)
        out.append(END)
        i = end + 1
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--entrysim", required=True)
    ap.add_argument("--build", help="the build directory that build/release/ stands for")
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true")
    mode.add_argument("--update", action="store_true")
    ap.add_argument("docs", nargs="+")
    a = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    tool = Tool(a.entrysim, a.build, root)
    bad = 0
    for path in a.docs:
        with open(path) as f:
            lines = f.read().split("\n")
        new = regenerate(tool, lines, path)
        if new == lines:
            continue
        if a.update:
            with open(path, "w") as f:
                f.write("\n".join(new))
            print(f"updated {path}")
        else:
            bad = 1
            sys.stdout.writelines(difflib.unified_diff(
                [l + "\n" for l in lines], [l + "\n" for l in new],
                f"{path} (the doc)", f"{path} (the tool now)"))
    if bad:
        print("the docs' figures differ from the tool's: check the change, then run "
              "docs/figures.py --update", file=sys.stderr)
    return bad


if __name__ == "__main__":
    sys.exit(main())
