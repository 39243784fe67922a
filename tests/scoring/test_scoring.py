#!/usr/bin/env python3
"""Behaviour of bench/score_blocks.py on a tiny fixture with a fake predictor
(no llvm-mca needed): the metrics against values worked out by hand, the
categories, the fixed split, error accounting and the exit statuses.
  usage: test_scoring.py SCORE_BLOCKS.py"""
import hashlib
import json
import os
import subprocess
import sys
import tempfile

score = sys.argv[1]
here = os.path.dirname(os.path.abspath(__file__))
fixture = os.path.join(here, "fixture.tsv")
fake = os.path.join(here, "fake_throughput.py")
fake_mca = os.path.join(here, "fake_mca.py")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def close(a, b):
    return a is not None and abs(a - b) < 1e-9


def run(*extra):
    return subprocess.run([sys.executable, score, *extra], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)


with tempfile.TemporaryDirectory() as tmp:
    pb = os.path.join(tmp, "per_block.tsv")
    r = run(fixture, "--entrysim", fake, "--llvm-mca", "none", "--json", "--per-block", pb)
    check(r.returncode == 0, f"exit 0 expected, got {r.returncode}: {r.stderr}")
    rep = json.loads(r.stdout)
    es = rep["predictors"]["entrysim"]
    # 7 blocks: 5 predicted, one "error: ..." line, one with no output line.
    check(rep["blocks"] == 7 and es["scored"] == 5 and es["errors"] == 2,
          f"counts: {rep['blocks']} {es['scored']} {es['errors']}")
    check(es["error_blocks"].get("4801c04801c0", "").startswith("error: fake predictor"),
          "the predictor's error message is kept")
    check("no output line" in es["error_blocks"].get("4831c04831db", ""),
          "a block without an output line is an error, not dropped")
    # measured 1,2,4,8,10 vs predicted 1.0,2.1,3.4,10.4,5.0:
    # APE 0, .05, .15, .30, .50 -> MAPE .2, median .15, <=10% 2/5, <=20% 3/5;
    # only the pair (8,10)/(10.4,5.0) is discordant: tau = (9-1)/10.
    m = es["common"]
    check(m["n"] == 5, f"n {m['n']}")
    check(close(m["mape"], 0.2), f"MAPE {m['mape']}")
    check(close(m["median_ape"], 0.15), f"median APE {m['median_ape']}")
    check(close(m["within10"], 0.4), f"within10 {m['within10']}")
    check(close(m["within20"], 0.6), f"within20 {m['within20']}")
    check(close(m["kendall_tau"], 0.8), f"tau {m['kendall_tau']}")
    # predicted/measured = 1, 1.05, .85, 1.3, .5: geometric mean and 2/5 under.
    check(close(m["bias"], (1.05 * 0.85 * 1.3 * 0.5) ** 0.2), f"bias {m['bias']}")
    check(close(m["under"], 0.4), f"under {m['under']}")
    check(rep["categories"] == {"Scalar": 3, "Load": 1, "Store": 1, "Vec": 1, "Vec+Mem": 1},
          f"categories {rep['categories']}")
    bc = es["by_category"]
    check(bc["Vec+Mem"]["n"] == 1 and close(bc["Vec+Mem"]["mape"], 0.5), "Vec+Mem row")
    check(bc["Scalar"]["n"] == 1 and close(bc["Scalar"]["mape"], 0.0), "Scalar row (errors excluded)")
    # Per-block file: every block, its split = parity of sha1's last digit.
    with open(pb) as f:
        rows = [l.rstrip("\n").split("\t") for l in f][1:]
    check(len(rows) == 7, "per-block rows")
    for row in rows:
        want = "train" if int(hashlib.sha1(row[0].encode()).hexdigest()[-1], 16) % 2 == 0 else "test"
        check(row[5] == want, f"split of {row[0]}")
    n_split = 0
    for s in ("train", "test"):
        r = run(fixture, "--entrysim", fake, "--llvm-mca", "none", "--json", "--split", s)
        if r.returncode == 0:
            n_split += json.loads(r.stdout)["blocks"]
        else:
            check("no blocks in the" in r.stderr, f"split {s}: {r.stderr}")
    check(n_split == 7, f"train + test = all ({n_split})")

    # Malformed input: a clear message and status 2, no traceback.
    bad = os.path.join(tmp, "bad.tsv")
    for content, msg in (("4801d8\n", "expected 'hex<TAB>cycles'"),
                         ("48zz\t1\n", "hex"), ("4801d8\t-1\n", "> 0"),
                         ("4801d8\tnan\n", "> 0"), ("4801d8\tabc\n", "not a number")):
        with open(bad, "w") as f:
            f.write(content)
        r = run(bad, "--entrysim", fake, "--llvm-mca", "none")
        check(r.returncode == 2 and msg in r.stderr and "Traceback" not in r.stderr,
              f"malformed {content!r}: {r.returncode} {r.stderr}")
    r = run(os.path.join(tmp, "missing.tsv"), "--llvm-mca", "none")
    check(r.returncode == 2 and "cannot read" in r.stderr, "missing data file")
    # A predictor that cannot run: reported, status 3.
    r = run(fixture, "--entrysim", os.path.join(tmp, "no-such-entrysim"), "--llvm-mca", "none")
    check(r.returncode == 3 and "not found" in r.stderr, f"missing entrysim: {r.returncode}")

    # llvm-mca's path with a fake llvm-mca (k instructions -> k x N + 10
    # total cycles over N iterations; refuses 'xor' blocks): Total/N at
    # N = 100 gives k + 0.1, --mca-steady gives exactly k.
    for extra, per2 in (([], 2.1), (["--mca-steady"], 2.0), (["--mca-iterations", "10"], 3.0)):
        r = run(fixture, "--entrysim", fake, "--llvm-mca", fake_mca, "--json", "--per-block", pb,
                *extra)
        check(r.returncode == 0, f"fake llvm-mca {extra}: {r.returncode} {r.stderr}")
        rep = json.loads(r.stdout)
        mca = rep["predictors"]["llvm-mca"]
        check(mca["scored"] == 6 and mca["errors"] == 1 and
              "fake_mca refuses" in mca["error_blocks"].get("4831c04831db", ""),
              f"fake llvm-mca {extra}: counts/errors {mca['scored']} {mca['errors']}")
        with open(pb) as f:
            rows = {l.split("\t")[0]: l.rstrip("\n").split("\t") for l in f}
        check(close(float(rows["4801d84801ca"][3]), per2), f"{extra}: {rows['4801d84801ca']}")
        # Common blocks: the 5 both predicted (entrysim refuses one, llvm-mca another).
        check(rep["common"] == 5, f"common {rep['common']}")
        cmp_ = rep["comparison"]
        check(cmp_["rows"][0]["category"] == "all" and cmp_["rows"][0]["n"] == 5, "comparison 'all'")
        check(cmp_["categories"] == 5, f"comparison categories {cmp_['categories']}")
    # Steady: llvm-mca predicts 2 for every fixture block (all have 2 insns);
    # on the common blocks, measured 1,2,4,8,10 -> APE 1, 0, .5, .75, .8,
    # MAPE 3.05/5 = .61.
    r = run(fixture, "--entrysim", fake, "--llvm-mca", fake_mca, "--json", "--mca-steady")
    rep = json.loads(r.stdout)
    m = rep["predictors"]["llvm-mca"]["common"]
    check(close(m["mape"], 0.61), f"steady llvm-mca MAPE {m['mape']}")
    check(m["kendall_tau"] is None, "constant predictions: tau-b undefined")
    # Per category (one block each): llvm-mca's APE is lower only on Load
    # (measured 2: entrysim 2.1, llvm-mca 2).
    for row in rep["comparison"]["rows"]:
        check(row["entrysim_better"] == (row["category"] != "Load"),
              f"comparison row {row['category']}: {row['entrysim_better']}")
    check(rep["comparison"]["categories_better"] == 4, "entrysim lower on 4 of 5")

# A host set's binary column: the split is by binary (BINARY_SPLIT: perl
# and libperl train, git and the libraries test, anything else unassigned and
# in neither half), --by binary groups by it, and a column on some rows only
# is refused.
with tempfile.TemporaryDirectory() as tmp:
    rows = [l.split("\t")[:2] for l in open(fixture) if l.strip() and not l.startswith("#")]
    bins = ["perl", "libperl.so.5.36", "git", "libstdc++.so.6", "other-binary", "git", "perl"]
    side = {"perl": "train", "libperl.so.5.36": "train", "git": "test", "libstdc++.so.6": "test",
            "other-binary": "unassigned"}
    hb = os.path.join(tmp, "host.tsv")
    with open(hb, "w") as f:
        for (h, c), b in zip(rows, bins):
            f.write(f"{h}\t{c.strip()}\t{b}\n")
    for want in ("train", "test"):
        r = run(hb, "--entrysim", fake, "--llvm-mca", "none", "--json", "--split", want,
                "--by", "binary")
        check(r.returncode == 0, f"binary split {want}: exit {r.returncode}: {r.stderr}")
        rep = json.loads(r.stdout)
        check(rep["split_rule"] == "binary", f"split rule {rep['split_rule']}")
        n_want = sum(1 for b in bins[:len(rows)] if side[b] == want)
        check(rep["blocks"] == n_want, f"{want}: {rep['blocks']} blocks, expected {n_want}")
        groups = set(rep["predictors"]["entrysim"]["by_binary"])
        check(groups == {b for b in bins[:len(rows)] if side[b] == want},
              f"{want}: by_binary groups {sorted(groups)}")
    mixed = os.path.join(tmp, "mixed.tsv")
    with open(mixed, "w") as f:
        for k, (h, c) in enumerate(rows):
            f.write(f"{h}\t{c.strip()}" + ("\tgit\n" if k % 2 else "\n"))
    r = run(mixed, "--entrysim", fake, "--llvm-mca", "none")
    check(r.returncode != 0 and "binary column" in r.stderr,
          f"a binary column on some rows only is refused: {r.returncode} {r.stderr[:120]}")

# Kendall tau-b with ties in both variables (hand-worked: C=4, D=0, one tie
# in x, one in y, n0=6 -> 4/sqrt(5*5)).
sys.path.insert(0, os.path.dirname(score))
import score_blocks  # noqa: E402
check(close(score_blocks.kendall_tau_b([1, 2, 2, 3], [1, 2, 3, 3]), 0.8), "tau-b with ties")
check(close(score_blocks.kendall_tau_b([1, 2, 3], [3, 2, 1]), -1.0), "tau-b reversed")
check(score_blocks.kendall_tau_b([1, 1], [1, 2]) is None, "tau-b undefined")

print("FAILED" if failures else "ok", len(failures))
sys.exit(1 if failures else 0)
