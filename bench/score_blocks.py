#!/usr/bin/env python3
"""Score entrysim's basic-block throughput predictions, and llvm-mca's on the
same blocks in the same run, against measured cycles (bench/README-scoring.md).

Input: a TSV of `hex<TAB>measured cycles per iteration[<TAB>binary]` ('#'
lines are comments; the optional third column names the binary the block was
sampled from, as bench/data/make_host_blocks.sh writes it).  entrysim runs once over all blocks (`entrysim throughput --uarch U
--file BLOCKS`, one `hex<TAB>cycles` or `hex<TAB>error: ...` line back per
block); llvm-mca runs once per block on its disassembly, and its prediction
is Total Cycles / Iterations with -iterations=100 (how BHive and Ithemal
scored llvm-mca), or with --mca-steady (cycles(2N) - cycles(N)) / N, the
measurement's own steady-state definition.

Reported per predictor, overall and per category (defined in
classify_block), and with --by per binary or per split: MAPE, median APE,
fraction within 10% and 20%, Kendall's tau-b, bias.  The fixed train/test
split is by binary when the data has a binary column (BINARY_SPLIT), else by
the block's bytes (split_of).  Blocks a predictor cannot handle are counted and listed, never
dropped silently; the side-by-side numbers are on the blocks both predictors
handled (the 'common' set), so the two columns are comparable.

Exit status: 0 scored; 2 bad usage or malformed input; 3 a predictor could
not be run at all (the other one is still reported).
"""
import argparse
import concurrent.futures
import hashlib
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

DEFAULT_DATA = "/work/shared/data/zen4-blocks-public.tsv"
# llvm-mca's CPU name for each entrysim uarch name.
# llvm-16 (Debian 12) has no znver5 and would silently fall back to a generic
# CPU: znver5 is scored against llvm-mca's znver4 unless --mcpu says otherwise
# (pass --mcpu znver5 to a newer llvm-mca).
MCA_CPU = {"znver4": "znver4", "skylake": "skylake", "znver5": "znver4", "goldencove": "alderlake"}
MCA_ITERATIONS = 100  # default of --mca-iterations
CATEGORIES = ["Scalar", "Vec", "Scalar+Ld", "Scalar+St", "Load", "Store", "Ld/St", "Vec+Mem"]


class InputError(Exception):
    pass


# ---------------------------------------------------------------- input

def read_blocks(path):
    """[(hex, measured, binary or None)] from a hex<TAB>cycles[<TAB>binary]
    file; InputError on garbage.  The binary column is all or nothing."""
    try:
        f = open(path)
    except OSError as e:
        raise InputError(f"cannot read {path}: {e.strerror}")
    out, seen = [], set()
    with f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            cols = line.split("\t")
            if len(cols) < 2:
                raise InputError(f"{path}:{n}: expected 'hex<TAB>cycles'")
            hexs = cols[0].strip().lower()
            if not re.fullmatch(r"([0-9a-f]{2})+", hexs):
                raise InputError(f"{path}:{n}: not an even-length hex string: {cols[0][:40]!r}")
            try:
                meas = float(cols[1])
            except ValueError:
                raise InputError(f"{path}:{n}: measured cycles is not a number: {cols[1][:40]!r}")
            if not math.isfinite(meas) or meas <= 0:
                raise InputError(f"{path}:{n}: measured cycles must be > 0, got {cols[1]}")
            if hexs in seen:
                raise InputError(f"{path}:{n}: duplicate block {hexs[:40]}")
            binary = cols[2].strip() if len(cols) > 2 and cols[2].strip() else None
            if binary is not None and not re.fullmatch(r"[A-Za-z0-9_.+-]+", binary):
                raise InputError(f"{path}:{n}: binary column is not a file name: {cols[2][:40]!r}")
            seen.add(hexs)
            out.append((hexs, meas, binary))
    if not out:
        raise InputError(f"{path}: no blocks")
    with_bin = sum(b is not None for _, _, b in out)
    if 0 < with_bin < len(out):
        raise InputError(f"{path}: {with_bin} of {len(out)} blocks have a binary column: "
                         "all or none must")
    return out


# The fixed split of host block sets by binary (issue 20; bench/README-scoring.md
# "Fixed split by binary"): anything fitted is fitted on blocks of the train
# binaries only, the test binaries are never fitted on.  Matched against the
# binary column (a file name); perl and libperl are one program (the same
# interpreter source: 17,700 blocks in common) and are on one side.  The
# sampler labels a block with the first input holding it and lists perl and
# libperl first, so a test-labelled block occurs in no train binary.  A binary
# not listed is 'unassigned': neither train nor test.
BINARY_SPLIT = [
    (re.compile(r"^(perl|libperl\.so(\.[0-9.]+)?)$"), "train"),
    (re.compile(r"^(git|libstdc\+\+\.so(\.[0-9.]+)?|liblzma\.so(\.[0-9.]+)?|"
                r"libbz2\.so(\.[0-9.]+)?)$"), "test"),
    # host-zen5-blocks-b.tsv (2026-12-07): binaries never looked at while fitting
    (re.compile(r"^(python3(\.[0-9]+)?|bash|libcrypto\.so(\.[0-9.]+)?|"
                r"libsqlite3\.so(\.[0-9.]+)?|libz\.so(\.[0-9.]+)?)$"), "test"),
]


def split_of_binary(binary):
    for rx, side in BINARY_SPLIT:
        if rx.match(binary):
            return side
    return "unassigned"


def split_of(hexs, binary=None):
    """The fixed train/test split.  With a binary (a data set with a binary
    column): the binary's side in BINARY_SPLIT.  Without: the last hex digit
    of sha1(lower-case hex string) even = train, odd = test -- it depends only
    on the block's bytes, so a block keeps its side in every data set and
    every run (the public zen4 set's split)."""
    if binary is not None:
        return split_of_binary(binary)
    return "train" if int(hashlib.sha1(hexs.encode()).hexdigest()[-1], 16) % 2 == 0 else "test"


# ---------------------------------------------------------------- disassembly

def disassemble(blocks, syntax):
    """{hex: [insn text]} (None when a block does not decode into whole
    instructions).  All blocks are concatenated into one file and objdump
    runs once; the block boundaries must fall on instruction boundaries."""
    objdump = shutil.which("objdump")
    if not objdump:
        raise InputError("objdump not found (apt-get install binutils)")
    starts, blob = {}, bytearray()
    for hexs in blocks:
        starts[len(blob)] = hexs
        blob += bytes.fromhex(hexs)
    with tempfile.NamedTemporaryFile(suffix=".bin") as f:
        f.write(blob)
        f.flush()
        args = [objdump, "-D", "-w", "-b", "binary", "-m", "i386:x86-64", "--insn-width=16"]
        if syntax == "intel":
            args += ["-M", "intel"]
        proc = subprocess.run(args + [f.name], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise InputError(f"objdump failed: {proc.stderr.strip()}")
    lines = []
    for line in proc.stdout.splitlines():
        m = re.match(r"^\s*([0-9a-f]+):\t([0-9a-f ]+?)\s*\t(.*)$", line)
        if m:
            lines.append((int(m.group(1), 16), len(m.group(2).replace(" ", "")) // 2,
                          m.group(3).split("#")[0].strip()))
    out = {}
    i = 0
    for start, hexs in sorted(starts.items()):
        end = start + len(hexs) // 2
        pos, insns = start, []
        while i < len(lines) and lines[i][0] < end:
            off, size, text = lines[i]
            i += 1
            if off != pos or "(bad)" in text:
                insns = None  # a previous block's instruction ran into this one
                pos = -1
            elif insns is not None:
                insns.append(text)
                pos = off + size
        # Whole instructions only: the last one must end at the block's end.
        out[hexs] = insns if insns and pos == end else None
    return out


# ---------------------------------------------------------------- categories

VEC_REG = re.compile(r"\b([xyz]mm\d+|mm\d|k[0-7]|st(\(\d\))?)\b")
# Forms whose memory destination is written without being read (pure stores).
PURE_STORE = re.compile(
    r"^(mov[a-z]*|vmov[a-z]*|set[a-z]+|v?pextr[bwdq]|v?extractps|vextract[a-z0-9]+|"
    r"f(i?)st[a-z]*|fisttp|fnst[a-z]*|v?stmxcsr|v?cvtps2ph|vpmov[a-z]*|v?maskmov[a-z]*)$")
# Forms with a memory operand that neither read nor write it.
NO_ACCESS = re.compile(r"^(lea|nop[a-z]*)$")
# Forms that read their first (memory) operand without writing it.
ONE_OP_RMW = re.compile(r"^(inc|dec|neg|not)$")
READ_ONLY_DEST = re.compile(r"^(cmp|test|bt|v?u?comis[sd]|prefetch[a-z0-9]*)$")


def split_operands(ops):
    """Top-level comma split (commas inside [] kept)."""
    out, depth, cur = [], 0, ""
    for c in ops:
        if c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
        if c == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += c
    if cur.strip():
        out.append(cur.strip())
    return out


def insn_access(text):
    """(reads memory, writes memory, vector/FP) of one Intel-syntax insn."""
    words = text.split(None, 1)
    mn = words[0] if words else ""
    ops = words[1] if len(words) > 1 else ""
    while mn in ("lock", "data16", "addr32", "cs", "ds", "es", "ss", "notrack", "bnd") and ops:
        w = ops.split(None, 1)
        mn, ops = w[0], (w[1] if len(w) > 1 else "")
    opl = split_operands(ops)
    vec = bool(VEC_REG.search(ops)) or (mn.startswith("f") and mn != "fence")
    reads = writes = False
    if not NO_ACCESS.match(mn):
        for i, o in enumerate(opl):
            if "[" not in o:
                continue
            if i == 0 and len(opl) == 1:
                # One memory operand: a store (setcc, fst...), a RMW
                # (inc/dec/neg/not), or a source (mul/div, fld, prefetch...).
                if PURE_STORE.match(mn):
                    writes = True
                elif ONE_OP_RMW.match(mn):
                    reads = writes = True
                else:
                    reads = True
            elif i == 0 or mn == "xchg":
                # The first operand is the destination in Intel syntax.
                if READ_ONLY_DEST.match(mn):
                    reads = True
                else:
                    writes = True
                    if not PURE_STORE.match(mn):
                        reads = True  # read-modify-write
            else:
                reads = True
    return reads, writes, vec


def classify_block(insns):
    """The category of a block, after BHive's (Chen et al., IISWC 2019; the
    Ithemal/BHive evaluation): a partition of all blocks.
      no memory access:  Scalar (no vector/FP register), Vec (any)
      memory, any vector/FP register: Vec+Mem
      memory, scalar only, memory instructions >= half the block:
          Load (loads only), Store (stores only), Ld/St (both)
      memory, scalar only, fewer than half: Scalar+Ld (no store),
          Scalar+St (stores, with or without loads)
    An instruction counts once as memory when it reads or writes memory
    (LEA and NOP do not access it; RMW both reads and writes)."""
    n = len(insns)
    ld = st = mem = vec = 0
    for t in insns:
        r, w, v = insn_access(t)
        ld += r
        st += w
        mem += r or w
        vec += v
    if mem == 0:
        return "Vec" if vec else "Scalar"
    if vec:
        return "Vec+Mem"
    if 2 * mem >= n:
        return "Load" if st == 0 else ("Store" if ld == 0 else "Ld/St")
    return "Scalar+Ld" if st == 0 else "Scalar+St"


# ---------------------------------------------------------------- predictors

def run_entrysim(path, uarch, blocks, timeout):
    """({hex: cycles}, {hex: error}, fatal message or None)."""
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as f:
        f.write("".join(h + "\n" for h in blocks))
        f.flush()
        try:
            proc = subprocess.run([path, "throughput", "--uarch", uarch, "--file", f.name],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, timeout=timeout)
        except FileNotFoundError:
            return {}, {}, f"entrysim not found at '{path}' (--entrysim)"
        except PermissionError:
            return {}, {}, f"entrysim at '{path}' is not executable"
        except subprocess.TimeoutExpired:
            return {}, {}, f"entrysim throughput took more than {timeout} s"
    pred, errs = {}, {}
    for line in proc.stdout.splitlines():
        cols = line.split("\t")
        if len(cols) < 2 or cols[0].lower() not in blocks:
            continue
        h, v = cols[0].lower(), cols[1].strip()
        if v.startswith("error"):
            errs[h] = v
            continue
        try:
            x = float(v)
        except ValueError:
            errs[h] = f"error: unparsable output {v[:40]!r}"
            continue
        if math.isfinite(x) and x > 0:
            pred[h] = x
        else:
            errs[h] = f"error: non-positive prediction {v}"
    if not pred and not errs:
        msg = proc.stderr.strip().splitlines()
        return {}, {}, (f"entrysim throughput gave no block lines (exit {proc.returncode}"
                        + (f": {msg[0]}" if msg else "") + ")")
    for h in blocks:
        if h not in pred and h not in errs:
            errs[h] = "error: no output line for this block"
    return pred, errs, None


def mca_total(mca, cpu, src, iterations, timeout):
    """(Total Cycles, None) of one llvm-mca run, or (None, error)."""
    try:
        proc = subprocess.run([mca, "-mtriple=x86_64-unknown-unknown", f"-mcpu={cpu}",
                               f"-iterations={iterations}", "-"],
                              input=src, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "error: llvm-mca timed out"
    it = re.search(r"^Iterations:\s+(\d+)", proc.stdout, re.M)
    cyc = re.search(r"^Total Cycles:\s+(\d+)", proc.stdout, re.M)
    if proc.returncode != 0 or not it or not cyc or int(it.group(1)) != iterations:
        msg = (proc.stderr.strip().splitlines() or ["no summary"])[0]
        return None, f"error: llvm-mca: {msg[:120]}"
    return int(cyc.group(1)), None


def mca_one(mca, cpu, asm, iterations, steady, timeout):
    """llvm-mca's cycles per iteration: Total Cycles / iterations, or with
    `steady` the difference of a 2N- and an N-iteration run over N (the
    measurement's own definition, which cancels pipeline fill and drain)."""
    src = ".text\n" + "\n".join(asm) + "\n"
    t1, err = mca_total(mca, cpu, src, iterations, timeout)
    if err or not steady:
        return (None, err) if err else (t1 / iterations, None)
    t2, err = mca_total(mca, cpu, src, 2 * iterations, timeout)
    if err:
        return None, err
    if t2 <= t1:
        return None, "error: llvm-mca: no steady state (2N run not longer)"
    return (t2 - t1) / iterations, None


def run_mca(mca, cpu, att, iterations, steady, jobs, timeout):
    """({hex: cycles}, {hex: error}, fatal or None).  Fed AT&T text from
    objdump, which LLVM's GAS-compatible parser reads."""
    path = shutil.which(mca)
    if not path:
        return {}, {}, (f"{mca} not found: apt-get install -y llvm-16 (Debian 12) "
                        "gives llvm-mca-16, or pass --llvm-mca none")
    pred, errs = {}, {}
    todo = {h: a for h, a in att.items() if a is not None}
    for h, a in att.items():
        if a is None:
            errs[h] = "error: objdump could not decode the block"
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as ex:
        futs = {ex.submit(mca_one, path, cpu, a, iterations, steady, timeout): h for h, a in todo.items()}
        for fu in concurrent.futures.as_completed(futs):
            v, e = fu.result()
            if e:
                errs[futs[fu]] = e
            else:
                pred[futs[fu]] = v
    return pred, errs, None


# ---------------------------------------------------------------- metrics

def kendall_tau_b(xs, ys):
    """Kendall's tau-b (ties in either variable corrected), O(n^2):
    (C - D) / sqrt((n0 - n1)(n0 - n2)), n0 = n(n-1)/2, n1/n2 = pairs tied in
    x/y.  None when undefined (fewer than 2 points, or a constant side)."""
    n = len(xs)
    conc = disc = tx = ty = 0
    for i in range(n):
        for j in range(i + 1, n):
            dx = xs[i] - xs[j]
            dy = ys[i] - ys[j]
            if dx == 0 and dy == 0:
                tx += 1
                ty += 1
            elif dx == 0:
                tx += 1
            elif dy == 0:
                ty += 1
            elif (dx > 0) == (dy > 0):
                conc += 1
            else:
                disc += 1
    n0 = n * (n - 1) // 2
    den = math.sqrt((n0 - tx) * (n0 - ty))
    return (conc - disc) / den if den > 0 else None


def metrics(pairs):
    """pairs = [(measured, predicted)] -> dict of the reported numbers."""
    if not pairs:
        return {"n": 0}
    apes = sorted(abs(p - m) / m for m, p in pairs)
    n = len(apes)
    med = apes[n // 2] if n % 2 else (apes[n // 2 - 1] + apes[n // 2]) / 2
    return {
        "n": n,
        "mape": sum(apes) / n,
        "median_ape": med,
        "within10": sum(a <= 0.10 for a in apes) / n,
        "within20": sum(a <= 0.20 for a in apes) / n,
        "kendall_tau": kendall_tau_b([m for m, _ in pairs], [p for _, p in pairs]),
        # Geometric mean of predicted/measured: < 1 = the model is fast
        # overall (MAPE alone does not say in which direction it errs).
        "bias": math.exp(sum(math.log(p / m) for m, p in pairs) / n),
        "under": sum(p < m for m, p in pairs) / n,
    }


# ---------------------------------------------------------------- report

def side_of_group(g, by, hexes, key, side):
    """The split side of a --by group (a binary's blocks are all on one side)."""
    if by == "split":
        return g
    return next(side[h] for h in hexes if key[h] == g)


def fmt_row(name, m):
    if m.get("n", 0) == 0:
        return f"  {name:<24} {'-':>5}"
    tau = "-" if m["kendall_tau"] is None else f"{m['kendall_tau']:.3f}"
    return (f"  {name:<24} {m['n']:>5} {100 * m['mape']:>7.1f}% {100 * m['median_ape']:>7.1f}% "
            f"{100 * m['within10']:>6.1f}% {100 * m['within20']:>6.1f}% {tau:>7} "
            f"{m['bias']:>6.3f} {100 * m['under']:>6.1f}%")


def main():
    ap = argparse.ArgumentParser(description="Score block throughput predictions "
                                 "(entrysim and llvm-mca) against measured cycles.")
    ap.add_argument("data", nargs="?", default=DEFAULT_DATA,
                    help=f"hex<TAB>cycles TSV (default {DEFAULT_DATA})")
    ap.add_argument("--entrysim", default="build/release/entrysim",
                    help="entrysim binary, or 'none' (default build/release/entrysim)")
    ap.add_argument("--uarch", default="znver4", help="entrysim --uarch (default znver4)")
    ap.add_argument("--llvm-mca", default="llvm-mca-16", help="llvm-mca binary, or 'none'")
    ap.add_argument("--mcpu", default=None, help="llvm-mca -mcpu (default: from --uarch)")
    ap.add_argument("--mca-iterations", type=int, default=MCA_ITERATIONS,
                    help=f"llvm-mca -iterations (default {MCA_ITERATIONS})")
    ap.add_argument("--mca-steady", action="store_true",
                    help="llvm-mca's steady state: (cycles(2N) - cycles(N)) / N instead of "
                    "cycles(N) / N")
    ap.add_argument("--split", choices=["train", "test", "all"], default="all",
                    help="which half of the fixed split to score (see split_of): by binary "
                    "when the data has a binary column, else by the block's sha1")
    ap.add_argument("--split-rule", choices=["auto", "binary", "hash"], default="auto",
                    help="auto (binary column if present, else hash), or force one")
    ap.add_argument("--by", action="append", choices=["binary", "split"], default=[],
                    help="also report per binary / per split side (repeatable)")
    ap.add_argument("--json", action="store_true", help="print the report as JSON")
    ap.add_argument("--per-block", metavar="FILE",
                    help="write a TSV of hex, measured, entrysim, llvm-mca, category, split, "
                    "binary, instructions (Intel syntax)")
    ap.add_argument("--jobs", type=int, default=2, help="parallel llvm-mca processes (2)")
    ap.add_argument("--timeout", type=float, default=600, help="seconds for entrysim (600)")
    args = ap.parse_args()
    if args.jobs < 1 or args.mca_iterations < 1:
        print("score_blocks: --jobs and --mca-iterations must be >= 1", file=sys.stderr)
        return 2

    try:
        allb = read_blocks(args.data)
        has_bin = allb[0][2] is not None
        if args.split_rule == "binary" and not has_bin:
            raise InputError(f"{args.data}: --split-rule binary needs a binary column")
        rule = "binary" if has_bin and args.split_rule != "hash" else "hash"
        if "binary" in args.by and not has_bin:
            raise InputError(f"{args.data}: --by binary needs a binary column")
        binary_of = {h: b for h, _, b in allb}
        side = {h: split_of(h, b if rule == "binary" else None) for h, _, b in allb}
        blocks = [(h, m) for h, m, _ in allb if args.split == "all" or side[h] == args.split]
        if not blocks:
            raise InputError(f"no blocks in the {args.split} split")
        hexes = [h for h, _ in blocks]
        intel = disassemble(hexes, "intel")
        att = disassemble(hexes, "att")
    except InputError as e:
        print(f"score_blocks: {e}", file=sys.stderr)
        return 2
    meas = dict(blocks)
    cat = {h: (classify_block(intel[h]) if intel[h] else "undecodable") for h in hexes}

    preds, errors, fatal = {}, {}, {}
    if args.entrysim != "none":
        p, e, f = run_entrysim(args.entrysim, args.uarch, set(hexes), args.timeout)
        preds["entrysim"], errors["entrysim"] = p, e
        if f:
            fatal["entrysim"] = f
    if args.llvm_mca != "none":
        cpu = args.mcpu or MCA_CPU.get(args.uarch, args.uarch)
        p, e, f = run_mca(args.llvm_mca, cpu, att, args.mca_iterations, args.mca_steady,
                          args.jobs, 120)
        preds["llvm-mca"], errors["llvm-mca"] = p, e
        if f:
            fatal["llvm-mca"] = f
    for name, msg in fatal.items():
        print(f"score_blocks: {name}: {msg}", file=sys.stderr)
        del preds[name], errors[name]
    names = list(preds)

    common = [h for h in hexes if all(h in preds[n] for n in names)]
    cats = [c for c in CATEGORIES + ["undecodable"] if any(cat[h] == c for h in hexes)]
    report = {
        "data": args.data, "split": args.split, "split_rule": rule, "uarch": args.uarch,
        "mca_cpu": args.mcpu or MCA_CPU.get(args.uarch, args.uarch) if "llvm-mca" in preds else None,
        "mca_iterations": args.mca_iterations, "mca_steady": args.mca_steady,
        "blocks": len(hexes), "common": len(common),
        "categories": {c: sum(cat[h] == c for h in hexes) for c in cats},
        "unavailable": fatal,
        "predictors": {},
    }
    for n in names:
        own = [(meas[h], preds[n][h]) for h in hexes if h in preds[n]]
        report["predictors"][n] = {
            "scored": len(own),
            "errors": len(errors[n]),
            "error_blocks": {h: errors[n][h] for h in hexes if h in errors[n]},
            "own": metrics(own),
            "common": metrics([(meas[h], preds[n][h]) for h in common]),
            "by_category": {c: metrics([(meas[h], preds[n][h]) for h in common if cat[h] == c])
                            for c in cats},
        }
        for by in args.by:
            key = binary_of if by == "binary" else side
            groups = sorted(set(key[h] for h in hexes),
                            key=lambda g: (["train", "test", "unassigned"].index(side_of_group(
                                g, by, hexes, key, side)), g))
            report["predictors"][n]["by_" + by] = {
                g: metrics([(meas[h], preds[n][h]) for h in common if key[h] == g]) for g in groups}

    if "entrysim" in preds and "llvm-mca" in preds and common:
        rows = []
        for c in ["all"] + cats:
            me = (report["predictors"]["entrysim"]["common"] if c == "all"
                  else report["predictors"]["entrysim"]["by_category"][c])
            mm = (report["predictors"]["llvm-mca"]["common"] if c == "all"
                  else report["predictors"]["llvm-mca"]["by_category"][c])
            if me["n"] == 0:
                continue
            rows.append({"category": c, "n": me["n"],
                         "entrysim_mape": me["mape"], "llvm_mca_mape": mm["mape"],
                         "entrysim_tau": me["kendall_tau"], "llvm_mca_tau": mm["kendall_tau"],
                         "entrysim_better": None if me["mape"] == mm["mape"]
                         else me["mape"] < mm["mape"]})
        per_cat = [r for r in rows if r["category"] != "all"]
        report["comparison"] = {"rows": rows, "categories": len(per_cat),
                                "categories_better": sum(bool(r["entrysim_better"]) for r in per_cat)}

    if args.per_block:
        try:
            with open(args.per_block, "w") as f:
                f.write("hex\tmeasured\tentrysim\tllvm-mca\tcategory\tsplit\tbinary\tinstructions\n")
                for h in hexes:
                    col = []
                    for n in ("entrysim", "llvm-mca"):
                        if n in preds and h in preds[n]:
                            col.append(f"{preds[n][h]:.3f}")
                        elif n in errors and h in errors[n]:
                            col.append(errors[n][h])
                        else:
                            col.append("-")
                    asm = "; ".join(" ".join(t.split()) for t in intel[h] or ["(undecodable)"])
                    f.write(f"{h}\t{meas[h]:g}\t{col[0]}\t{col[1]}\t{cat[h]}\t{side[h]}\t"
                            f"{binary_of[h] or '-'}\t{asm}\n")
        except OSError as e:
            print(f"score_blocks: cannot write {args.per_block}: {e.strerror}", file=sys.stderr)
            return 2

    if args.json:
        json.dump(report, sys.stdout, indent=1, sort_keys=True)
        print()
    else:
        print(f"data: {args.data}  split: {args.split} (by {rule})  blocks: {len(hexes)}  "
              f"uarch: {args.uarch}")
        if report["mca_cpu"]:
            print(f"llvm-mca: {args.llvm_mca} -mcpu={report['mca_cpu']}, "
                  + (f"steady state over {args.mca_iterations}" if args.mca_steady
                     else f"Total Cycles / {args.mca_iterations} iterations"))
        print("categories: " + ", ".join(f"{c} {v}" for c, v in report["categories"].items()))
        for n in names:
            r = report["predictors"][n]
            print(f"{n}: {r['scored']} predicted, {r['errors']} errors")
        print(f"side by side on the {len(common)} blocks every predictor handled:")
        hdr = f"  {'':<24} {'n':>5} {'MAPE':>8} {'medAPE':>8} {'<=10%':>7} {'<=20%':>7} {'tau-b':>7} {'bias':>6} {'under':>7}"
        for n in names:
            print(f"[{n}]")
            print(hdr)
            print(fmt_row("all", report["predictors"][n]["common"]))
            for c in cats:
                print(fmt_row(c, report["predictors"][n]["by_category"][c]))
            for by in args.by:
                print(f"  per {by}:")
                for g, m in report["predictors"][n]["by_" + by].items():
                    label = g if by == "split" else f"{g} ({side_of_group(g, by, hexes, binary_of, side)})"
                    print(fmt_row(label, m))
        cmp_ = report.get("comparison")
        if cmp_:
            print("entrysim vs llvm-mca (common blocks): MAPE and tau-b, lower MAPE marked *")
            for row in cmp_["rows"]:
                def f(v, pct):
                    return "-" if v is None else (f"{100 * v:.1f}%" if pct else f"{v:.3f}")
                star_e = "*" if row["entrysim_better"] else " "
                star_m = "*" if row["entrysim_better"] is False else " "
                print(f"  {row['category']:<12} {row['n']:>5}  MAPE {f(row['entrysim_mape'], 1):>7}{star_e}"
                      f" {f(row['llvm_mca_mape'], 1):>7}{star_m}  tau-b {f(row['entrysim_tau'], 0):>6}"
                      f" {f(row['llvm_mca_tau'], 0):>6}")
            print(f"entrysim has the lower MAPE on {cmp_['categories_better']} of "
                  f"{cmp_['categories']} categories; overall "
                  f"{'lower' if cmp_['rows'][0]['entrysim_better'] else 'not lower'}")
        for n in names:
            eb = report["predictors"][n]["error_blocks"]
            if eb:
                print(f"{n} errors ({len(eb)}):")
                for h, e in eb.items():
                    print(f"  {h}\t{e}")
    return 3 if fatal else 0


if __name__ == "__main__":
    sys.exit(main())
