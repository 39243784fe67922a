#!/usr/bin/env python3
"""Behaviour of bench/sample_blocks.py on an object compiled here: every
block printed is bytes of the object's .text, decodes to 3-20 instructions,
and contains none of the excluded kinds (checked on objdump's decoding,
independently of the sampler's own rules); the sample is deterministic,
--count gives prefixes of one order, --seed reorders, --exclude removes.
  usage: test_sampling.py SAMPLE_BLOCKS.py CC"""
import os
import re
import subprocess
import sys
import tempfile

sampler, cc = sys.argv[1], sys.argv[2]
here = os.path.dirname(os.path.abspath(__file__))
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def sample(*extra):
    r = subprocess.run([sys.executable, sampler, *extra], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    check(r.returncode == 0, f"sample_blocks {extra}: exit {r.returncode} {r.stderr}")
    return r.stdout.split()


def decode(hexs):
    with tempfile.NamedTemporaryFile(suffix=".bin") as f:
        f.write(bytes.fromhex(hexs))
        f.flush()
        out = subprocess.run(["objdump", "-D", "-w", "-b", "binary", "-m", "i386:x86-64",
                              "-M", "intel", f.name], stdout=subprocess.PIPE, text=True).stdout
    return [m.group(1).strip() for m in
            re.finditer(r"^\s*[0-9a-f]+:\t[0-9a-f ]+\t(.*)$", out, re.M)]


BAD = re.compile(r"^(push|pop|call|ret|j[a-z]+|enter|leave|rep|movs[bwdq]?\b|stos|lods|"
                 r"syscall|int3?\b|ud2|hlt)")

with tempfile.TemporaryDirectory() as tmp:
    obj = os.path.join(tmp, "sample_src.o")
    subprocess.run([cc, "-O2", "-fno-pic", "-fstack-protector-all", "-c", "-o", obj,
                    os.path.join(here, "sample_src.c")], check=True)
    text = os.path.join(tmp, "text.bin")
    subprocess.run(["objcopy", "-O", "binary", "--only-section=.text", obj, text], check=True)
    code = open(text, "rb").read()

    allb = sample(obj, "--exclude", "none", "--count", "1000")
    check(len(allb) >= 4, f"too few blocks sampled: {len(allb)}")
    check(len(set(allb)) == len(allb), "duplicates in the sample")
    for h in allb:
        check(bytes.fromhex(h) in code, f"{h}: not bytes of .text")
        insns = decode(h)
        check(3 <= len(insns) <= 20, f"{h}: {len(insns)} instructions")
        for t in insns:
            check(not BAD.match(t), f"{h}: excluded instruction '{t}'")
            check("rip" not in t and "fs:" not in t and "gs:" not in t,
                  f"{h}: RIP- or segment-relative '{t}'")
            check(not re.match(r"^\S+\s+(rsp|esp),", t), f"{h}: writes rsp '{t}'")
            check("(bad)" not in t, f"{h}: undecodable")

    check(sample(obj, "--exclude", "none", "--count", "1000") == allb, "not deterministic")
    n = max(1, len(allb) // 2)
    check(sample(obj, "--exclude", "none", "--count", str(n)) == allb[:n],
          "--count does not give a prefix of the same order")
    other = sample(obj, "--exclude", "none", "--count", "1000", "--seed", "other")
    check(sorted(other) == sorted(allb), "--seed changes the set, not just the order")
    check(len(allb) < 3 or other != allb, "--seed does not reorder")
    excl = os.path.join(tmp, "excl.tsv")
    with open(excl, "w") as f:
        f.write(f"# comment\n{allb[0]}\t1.5\n")
    rest = sample(obj, "--exclude", excl, "--count", "1000")
    check(sorted(rest) == sorted(allb[1:]), "--exclude does not remove exactly that block")

    r = subprocess.run([sys.executable, sampler, os.path.join(tmp, "missing.o")],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    check(r.returncode != 0 and "no such file" in r.stderr and "Traceback" not in r.stderr,
          "a missing input gives a message and a failure status")

print("FAILED" if failures else "ok", len(failures), f"({len(allb)} blocks)")
sys.exit(1 if failures else 0)
