#!/usr/bin/env python3
"""progress_test.py ENTRYSIM WORKLOADS FAKE_RUNNER

`entrysim run --progress` and `entrysim bench` draw a status line on
stderr when it is a terminal (a pseudo-terminal here) and nothing when it
is a pipe; the results are the same either way.  Exit 0 ok, 1 failed, 77
skipped (no pseudo-terminal on this machine)."""
import os
import pty
import subprocess
import sys
import tempfile

ES, WORKLOADS, FAKE = sys.argv[1:4]
ESC_EL = b"\x1b[K"
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(argv, tty, cwd, env=None):
    """Runs argv with stdout to a file and stderr on a pty (tty) or a pipe;
    returns (exit status, stdout bytes, stderr bytes)."""
    out_path = os.path.join(cwd, "stdout")
    with open(out_path, "wb") as out:
        if not tty:
            p = subprocess.run(argv, stdout=out, stderr=subprocess.PIPE, cwd=cwd, env=env)
            err, status = p.stderr, p.returncode
        else:
            master, slave = pty.openpty()
            p = subprocess.Popen(argv, stdout=out, stderr=slave, cwd=cwd, env=env)
            os.close(slave)
            chunks = []
            while True:
                try:
                    b = os.read(master, 65536)
                except OSError:  # EIO: the child closed its end
                    break
                if not b:
                    break
                chunks.append(b)
            os.close(master)
            status = p.wait()
            err = b"".join(chunks).replace(b"\r\n", b"\n")  # the pty's ONLCR
    with open(out_path, "rb") as f:
        return status, f.read(), err


def test_run(tmp):
    prog = [os.path.join(WORKLOADS, "sysloop64"), "syscall64", "getpid", "100000"]
    res = {}
    for name, progress, tty in (("tty", True, True), ("pipe", True, False),
                                ("plain", False, True)):
        d = os.path.join(tmp, "run_" + name)
        os.mkdir(d)
        argv = [ES, "run", "--deterministic", "--timing-json", "t.json"]
        argv += ["--progress"] if progress else []
        status, out, err = run(argv + prog, tty, d)
        tj = os.path.join(d, "t.json")
        res[name] = (status, out, open(tj, "rb").read() if os.path.exists(tj) else b"", err)
    status, out, tj, err = res["tty"]
    check(status == 0, "run --progress on a tty: exit %d: %r" % (status, err[-300:]))
    check(b"\rentrysim: " in err and b" instructions, " in err and b" MIPS, " in err,
          "run --progress on a tty shows no status line: %r" % err[:300])
    # the line is erased before the report that follows it
    check(b"\r" + ESC_EL + b"entrysim: timing:" in err,
          "run --progress: the status line is not erased before the report: %r" % err[-600:])
    for name in ("pipe", "plain"):
        e = res[name][3]
        check(b"\r" not in e and b"\x1b" not in e and b"MIPS" not in e,
              "run (%s) shows progress: %r" % (name, e[:300]))
        check(res[name][:3] == res["tty"][:3],
              "run (%s): exit status, stdout or --timing-json differ from the tty run" % name)
    # what is left on the screen after the line is erased is the pipe's stderr
    shown = err.split(b"\r" + ESC_EL)[-1]
    check(shown == res["pipe"][3], "the tty run's report differs: %r vs %r"
          % (shown[:200], res["pipe"][3][:200]))


MATRIX = """[matrix]
name = "small"
kernels = ["v4.16", "dfe6450", "v4.17"]
entries = ["syscall64", "int80"]
syscalls = ["getpid", "getppid"]
uarch = ["znver4"]
iterations = 1000
"""


def test_bench(tmp):
    with open(os.path.join(tmp, "m.toml"), "w") as f:
        f.write(MATRIX)
    csv = {}
    for name, tty in (("tty", True), ("pipe", False)):
        argv = [ES, "bench", "--matrix", os.path.join(tmp, "m.toml"), "--out",
                os.path.join(tmp, "bench_" + name), "--workloads", WORKLOADS,
                "--runner", FAKE, "-j", "2"]
        status, out, err = run(argv, tty, tmp)
        check(status == 0, "bench (%s): exit %d: %r" % (name, status, err[-300:]))
        path = os.path.join(tmp, "bench_" + name, "results.csv")
        csv[name] = open(path, "rb").read() if os.path.exists(path) else b"(none)"
        if tty:
            check(b"\rentrysim: bench: 0/12 cells done, 2 running" in err and
                  b"/12 cells done, " in err.replace(b"0/12", b""),
                  "bench on a tty: no cell count: %r" % err[-400:])
            check(b" elapsed, ETA " in err, "bench on a tty: no ETA: %r" % err[:400])
            check(b"\r" + ESC_EL + b"entrysim: bench: 12 ran," in err,
                  "bench: the status line is not erased before the summary: %r" % err[-300:])
        else:
            check(b"\r" not in err and b"\x1b" not in err and b"cells done" not in err,
                  "bench in a pipe shows progress: %r" % err)
    check(csv["tty"] == csv["pipe"], "bench: results.csv differs between the tty and the pipe")


def main():
    try:
        m, s = pty.openpty()
        os.close(m)
        os.close(s)
    except OSError as e:
        print("SKIPPED: no pseudo-terminal:", e)
        return 77
    with tempfile.TemporaryDirectory(prefix="es_progress_") as tmp:
        test_run(tmp)
        test_bench(tmp)
    print("FAILED: %d checks" % len(failures) if failures else "ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
