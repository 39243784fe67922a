#!/usr/bin/env python3
"""Sample basic blocks from compiled code on this machine (for scoring and
host measurement; bench/README-scoring.md).

Disassembles Debian binaries/libraries with `objdump -d`, cuts the code into
straight-line blocks and prints a deterministic sample, one hex block per
line, under the rules of /work/shared/data/README.md (the reference set's):

  * a block ends before every control transfer (jmp/jcc/call/ret/loop/
    jrcxz/syscall/int/ud2/hlt/iret..., the transfer itself is not part of
    the block) and before every symbol label and every direct branch/call
    target, so a block is code that always runs from its first instruction
    to its last;
  * 3-20 instructions are kept; longer runs are dropped, not truncated (a
    truncation would be a block that never starts there);
  * a block is dropped whole when any instruction is privileged or
    system-level, a string instruction (movs/stos/lods/scas/cmps/ins/outs,
    any rep prefix), changes the stack pointer (push/pop/call/ret/enter/
    leave and any explicit write to rsp/esp/sp/spl), is FS/GS-relative or
    RIP-relative, is a gather/scatter (VSIB: measure-native's decoder
    refuses it), reads a non-deterministic source (rdtsc, rdrand, cpuid...),
    or objdump could not decode it;
  * blocks made only of padding (nop, int3) are dropped.

Sampling: every candidate block of every input is collected, duplicates
(same bytes) merged, blocks present in --exclude files (default the public
reference set) removed, then blocks are ordered by sha1(seed + hex) and the
first --count are printed.  The same inputs and seed give the same output;
a different --count gives a prefix/extension of the same order.

A block's source (--source, --asm) is the first input, in the order given,
that holds it: with the train binaries of a split by binary listed first (the
default order: perl and libperl before the others, bench/README-scoring.md),
a block labelled with a test binary occurs in no train binary.
"""
import argparse
import hashlib
import os
import re
import subprocess
import sys

DEFAULT_INPUTS = [
    "/usr/bin/perl",
    "/usr/lib/x86_64-linux-gnu/libperl.so.5.36",
    "/usr/bin/git",
    "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
    "/usr/lib/x86_64-linux-gnu/liblzma.so.5",
    "/usr/lib/x86_64-linux-gnu/libbz2.so.1.0",
]
DEFAULT_EXCLUDE = "/work/shared/data/zen4-blocks-public.tsv"

# Mnemonics that end a block (control transfers; SDM Vol. 1 6.3-6.5 and the
# system instructions that leave the sequential path).
TERMINATORS = re.compile(
    r"^(j[a-z]+|call|callq|ret|retq|retf|lret|loop[a-z]*|jrcxz|jecxz|"
    r"syscall|sysenter|sysexit|sysret[a-z]*|int|int1|int3|into|ud[012]|hlt|"
    r"iret[a-z]*|bnd|notrack|xbegin|xend|xabort)$")

# Instructions that make a block unusable as steady-state user code.
FORBIDDEN = re.compile(
    r"^(push[a-z]*|pop[a-z]*|enter[a-z]*|leave[a-z]*|"          # stack pointer
    r"movs[bwdq]?|stos[bwdq]?|lods[bwdq]?|scas[bwdq]?|cmps[bwdq]?|"  # string
    r"ins[bwd]?|outs[bwd]?|in|out|"                              # port I/O
    r"cli|sti|clts|lgdt|lidt|lldt|ltr|sgdt|sidt|sldt|str|lmsw|smsw|invd|"
    r"wbinvd|invlpg[a-z]*|invpcid|rdmsr|wrmsr|rdpmc|swapgs|wrfsbase|"
    r"wrgsbase|rdfsbase|rdgsbase|xsetbv|monitor[a-z]*|mwait[a-z]*|"
    r"vmcall|vmmcall|vmrun|stac|clac|"                           # privileged
    r"cpuid|rdtsc|rdtscp|rdrand|rdseed|rdpid|xgetbv|"            # non-deterministic
    r"xsave[a-z0-9]*|xrstor[a-z0-9]*|fxsave[a-z0-9]*|fxrstor[a-z0-9]*|"
    r"v?p?gather[a-z]*|v?p?scatter[a-z]*|"                      # VSIB
    r"lfs|lgs|lss|les|lds|"                                      # segment loads
    r"\(bad\))$")

# A register write to the stack pointer as the first (destination) operand,
# Intel syntax.
STACK_DEST = re.compile(r"^(rsp|esp|sp|spl)\b")
PADDING = re.compile(r"^(nop[a-z]*|xchg\s+ax,\s*ax|int3|data16|cs\s+nop[a-z]*)")

INSN_LINE = re.compile(r"^\s*([0-9a-f]+):\t([0-9a-f ]+?)\s*\t(.*)$")
LABEL_LINE = re.compile(r"^([0-9a-f]+) <.*>:$")
DIRECT_TARGET = re.compile(r"^(j[a-z]+|call|callq|loop[a-z]*|jrcxz|jecxz|xbegin)\s+([0-9a-f]+)\s")


def parse_objdump(path):
    """Yields ('label', addr) and ('insn', addr, hexbytes, text) in order."""
    try:
        proc = subprocess.run(
            ["objdump", "-d", "-w", "-M", "intel", "--insn-width=16", path],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, check=False)
    except FileNotFoundError:
        sys.exit("sample_blocks: objdump not found (apt-get install binutils)")
    if proc.returncode != 0:
        print(f"sample_blocks: objdump failed on {path}: {proc.stderr.strip()}",
              file=sys.stderr)
        return
    for line in proc.stdout.splitlines():
        m = INSN_LINE.match(line)
        if m:
            text = m.group(3).split("#")[0].strip()
            yield ("insn", int(m.group(1), 16), m.group(2).replace(" ", ""), text)
            continue
        m = LABEL_LINE.match(line)
        if m:
            yield ("label", int(m.group(1), 16))


def split_mnemonic(text):
    """(mnemonic, operand string, prefixes) with lock/rep/segment prefixes
    that objdump prints as separate words peeled off."""
    parts = text.split(None, 1)
    if not parts:
        return "", "", []
    mn = parts[0]
    ops = parts[1] if len(parts) > 1 else ""
    prefixes = []
    while mn in ("lock", "rep", "repz", "repe", "repnz", "repne", "bnd", "notrack",
                 "data16", "addr32", "cs", "ds", "es", "ss", "fs", "gs",
                 "xacquire", "xrelease", "rex", "rex.W"):
        prefixes.append(mn)
        nxt = ops.split(None, 1)
        if not nxt:
            break
        mn, ops = nxt[0], (nxt[1] if len(nxt) > 1 else "")
    return mn, ops, prefixes


def insn_forbidden(text):
    mn, ops, prefixes = split_mnemonic(text)
    if any(p.startswith("rep") for p in prefixes):
        return True
    if FORBIDDEN.match(mn):
        return True
    low = ops.lower()
    if "rip" in low or "fs:" in low or "gs:" in low:
        return True
    if STACK_DEST.match(low):
        return True
    if mn == "xchg" and re.search(r"\b(rsp|esp|sp|spl)\b", low):
        return True
    if mn.startswith(("mov", "lea")) and re.match(r"^(cr|dr)\d", low):
        return True
    if mn == "mov" and re.match(r"^(cs|ds|es|ss|fs|gs)\b", low):
        return True  # segment register load
    return False


def blocks_of(path):
    """Candidate blocks of one file: lists of (hex, text)."""
    items = list(parse_objdump(path))
    targets = set()
    for it in items:
        if it[0] == "insn":
            m = DIRECT_TARGET.match(it[3])
            if m:
                targets.add(int(m.group(2), 16))
    blocks = []
    cur = []
    too_long = False  # the current run passed 20 instructions: dropped whole

    def flush():
        nonlocal too_long
        if not too_long and len(cur) >= 3 and \
           not all(PADDING.match(t) for _, t in cur) and \
           not any(insn_forbidden(t) for _, t in cur):
            blocks.append(list(cur))
        cur.clear()
        too_long = False

    for it in items:
        if it[0] == "label":
            flush()
            continue
        _, addr, hexb, text = it
        if addr in targets:
            flush()
        if not hexb or TERMINATORS.match(split_mnemonic(text)[0]):
            flush()
            continue
        if too_long:
            continue
        cur.append((hexb, text))
        if len(cur) > 20:
            too_long = True
            cur.clear()
    flush()
    return blocks


def read_exclude(paths):
    out = set()
    for p in paths:
        try:
            with open(p) as f:
                for line in f:
                    if line.startswith("#") or not line.strip():
                        continue
                    out.add(line.split("\t")[0].strip().lower())
        except OSError as e:
            sys.exit(f"sample_blocks: cannot read exclude file {p}: {e.strerror}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("inputs", nargs="*", help="ELF files (default: perl, libperl, git, "
                    "libstdc++, liblzma, libbz2 where present)")
    ap.add_argument("--count", type=int, default=300, help="blocks to print (default 300)")
    ap.add_argument("--seed", default="entrysim", help="sampling seed (default 'entrysim')")
    ap.add_argument("--exclude", action="append", default=None,
                    help=f"TSV/hex file whose blocks are left out (repeatable; default {DEFAULT_EXCLUDE}"
                    " when it exists; 'none' for no exclusion)")
    ap.add_argument("--asm", action="store_true",
                    help="print hex<TAB>source file<TAB>instructions ('; '-separated) instead of hex")
    ap.add_argument("--source", action="store_true",
                    help="print hex<TAB>source file name (basename: the binary column of a block set)")
    args = ap.parse_args()
    if args.count < 0:
        sys.exit("sample_blocks: --count must be >= 0")

    inputs = args.inputs or [p for p in DEFAULT_INPUTS if os.path.exists(p)]
    if not inputs:
        sys.exit("sample_blocks: no input binaries")
    if args.exclude is None:
        excl_files = [DEFAULT_EXCLUDE] if os.path.exists(DEFAULT_EXCLUDE) else []
    else:
        excl_files = [p for p in args.exclude if p != "none"]
    exclude = read_exclude(excl_files)

    seen = {}
    for path in inputs:
        if not os.path.isfile(path):
            sys.exit(f"sample_blocks: no such file: {path}")
        for b in blocks_of(os.path.realpath(path)):
            hexs = "".join(h for h, _ in b).lower()
            if hexs in exclude or hexs in seen:
                continue
            seen[hexs] = (path, "; ".join(t for _, t in b))
    order = sorted(seen, key=lambda h: hashlib.sha1((args.seed + ":" + h).encode()).hexdigest())
    print(f"sample_blocks: {len(seen)} unique candidate blocks from {len(inputs)} files, "
          f"{len(exclude)} excluded blocks known, printing {min(args.count, len(order))}",
          file=sys.stderr)
    for h in order[:args.count]:
        if args.asm:
            print(f"{h}\t{seen[h][0]}\t{seen[h][1]}")
        elif args.source:
            print(f"{h}\t{os.path.basename(seen[h][0])}")
        else:
            print(h)


if __name__ == "__main__":
    main()
