#!/usr/bin/env python3
"""Validate the data files in tables/uarch/ (standalone; exit status 0 = all good).

  *.llvm.tsv  header and column count, numeric fields, 0/1 flags, port list syntax,
              unique forms, same form set for every microarchitecture.
  *.published.tsv, *.measured.tsv
              overrides: the same checks per row, ports named as in that uarch's
              .llvm.tsv, and every row's source names where its numbers come from.
  *.cfg       "key = value  # source" lines: dotted lowercase keys, no duplicates, every
              value carries a source comment, the required keys are present, and the
              port names of ports.* keys occur in that uarch's .llvm.tsv.

Usage: python3 tables/uarch/check.py [DIR]
"""
import glob
import os
import re
import sys

GPRS = {"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", "r8", "r9", "r10", "r11",
        "r12", "r13", "r14", "r15", "any"}
HEADER = ["form", "uops", "latency", "rthroughput", "ports", "load", "store", "side_effects", "asm", "source"]
PORT_RE = re.compile(r"^(-|[A-Za-z0-9_]+:\d+(\.\d+)?(\+[A-Za-z0-9_]+:\d+(\.\d+)?)*)$")
REQUIRED = """fetch.bytes_per_cycle decode.width opcache.entries opcache.ops_per_cycle dispatch.width retire.width
rob.entries sched.int_entries sched.fp_entries ports.int_alu ports.agu ports.branch ports.mul ports.div ports.fp
lsu.loads_per_cycle lsu.stores_per_cycle lsu.load_queue lsu.store_queue l1i.size_kb l1i.assoc l1d.size_kb
l1d.assoc l1d.latency l2.size_kb l2.assoc l2.latency l3.size_kb l3.assoc l3.latency itlb.l1_entries
dtlb.l1_entries dtlb.l2_entries pagewalk.latency btb.l1_entries ras.entries branch.mispredict_penalty""".split()

errors = []


def err(path, line, msg):
    errors.append(f"{path}:{line}: {msg}")


def dropped_forms(path):
    """Forms gen_llvm.py dropped from this table (its '# dropped:' header)."""
    with open(path) as f:
        for line in f:
            if line.startswith("# dropped"):
                return {x.strip() for x in line.split(":", 1)[1].split(";") if x.strip()}
            if not line.startswith("#"):
                break
    return set()


def check_tsv(path):
    forms, ports = set(), set()
    header_seen = False
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if line.startswith("#") or not line:
                continue
            cols = line.split("\t")
            if not header_seen:
                if cols != HEADER:
                    err(path, n, f"header must be {HEADER}, got {cols}")
                header_seen = True
                continue
            if len(cols) != len(HEADER):
                err(path, n, f"{len(cols)} columns, expected {len(HEADER)}")
                continue
            r = dict(zip(HEADER, cols))
            if not r["form"] or r["form"] in forms:
                err(path, n, f"empty or duplicate form {r['form']!r}")
            forms.add(r["form"])
            for k in ("uops", "latency"):
                if not re.fullmatch(r"\d+", r[k]):
                    err(path, n, f"{k} not a non-negative integer: {r[k]!r}")
            if not re.fullmatch(r"\d+(\.\d+)?", r["rthroughput"]):
                err(path, n, f"rthroughput not a number: {r['rthroughput']!r}")
            for k in ("load", "store", "side_effects"):
                if r[k] not in ("0", "1"):
                    err(path, n, f"{k} must be 0 or 1: {r[k]!r}")
            if not PORT_RE.match(r["ports"]):
                err(path, n, f"bad ports list {r['ports']!r}")
            elif r["ports"] != "-":
                ports.update(p.split(":")[0] for p in r["ports"].split("+"))
            if not r["asm"] or not r["source"]:
                err(path, n, "asm and source must be non-empty")
    if not header_seen:
        err(path, 0, "no header line")
    return forms, ports


def cfg_value(path, key):
    """A .cfg key's value (its last definition), None when absent."""
    val = None
    with open(path) as f:
        for raw in f:
            m = re.match(r"^\s*" + re.escape(key) + r"\s*=\s*([^#]+?)\s*(#|$)", raw)
            if m:
                val = m.group(1)
    return val


def check_cfg(path, ports):
    """ports: the port names of the uarch's tables (its own or its tables.base's);
    a core wider than its base adds the units its ports.widen rules name."""
    keys = {}
    widen = cfg_value(path, "ports.widen") or ""
    extra = {p.strip() for rule in widen.split(";") if ">" in rule
             for p in rule.split(">")[1].split(",")}
    with open(path) as f:
        for n, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            m = re.match(r"^([a-z0-9_]+(\.[a-z0-9_]+)+)\s*=\s*([^#]+?)\s*#\s*(\S.*)$", line)
            if not m:
                err(path, n, "expected 'unit.key = value  # source'")
                continue
            key, val, src = m.group(1), m.group(3), m.group(4)
            if key in keys:
                err(path, n, f"duplicate key {key}")
            keys[key] = val
            if key == "ports.widen":
                for rule in val.split(";"):
                    if rule.count(">") != 1:
                        err(path, n, f"ports.widen: {rule.strip()!r} is not 'FROM > TO'")
                        continue
                    for p in re.split(r"[,>]", rule):
                        if ports and p.strip() not in ports and p.strip() not in extra:
                            err(path, n, f"port {p.strip()!r} does not occur in the .llvm.tsv")
            elif key.startswith("ports."):
                for p in val.split(","):
                    if key == "ports.exact_occupancy" and p == "none":
                        continue
                    if ports and p not in ports and p not in extra:
                        err(path, n, f"port {p!r} does not occur in the .llvm.tsv of this uarch")
            elif key == "tables.base":
                if not os.path.exists(os.path.join(os.path.dirname(path), val + ".llvm.tsv")):
                    err(path, n, f"tables.base {val!r}: no {val}.llvm.tsv")
            elif key.endswith(".bases"):
                for r in val.split(","):
                    if r not in GPRS:
                        err(path, n, f"{key}: {r!r} is not a 64-bit register name")
            elif key == "cpu.match":
                # VENDOR FAMILY MODEL... (a model: 0xNN or a range 0xLO-0xHI)
                if not re.fullmatch(r"(AMD|Intel) 0x[0-9a-f]+( 0x[0-9a-f]+(-0x[0-9a-f]+)?)+", val):
                    err(path, n, f"cpu.match is not 'VENDOR FAMILY MODEL...': {val!r}")
            elif not re.fullmatch(r"\d+(\.\d+)?", val):
                err(path, n, f"value of {key} is not a number: {val!r}")
    for k in REQUIRED:
        if k not in keys:
            err(path, 0, f"missing required key {k}")


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    tsvs = sorted(glob.glob(os.path.join(d, "*.llvm.tsv")))
    if not tsvs:
        err(d, 0, "no *.llvm.tsv files")
    formsets, portsets, dropped = {}, {}, {}
    for p in tsvs:
        name = os.path.basename(p).split(".")[0]
        formsets[name], portsets[name] = check_tsv(p)
        dropped[name] = dropped_forms(p)
    names = list(formsets)
    for a in names[1:]:
        # a form llvm-mca cannot cost for one cpu (gen_llvm.py lists it in
        # the table's header) is missing from that table only
        fa = formsets[a] | dropped[a]
        f0 = formsets[names[0]] | dropped[names[0]]
        if fa != f0:
            diff = sorted(fa ^ f0)[:5]
            err(d, 0, f"form sets of {names[0]} and {a} differ (e.g. {diff})")
    noverride = 0
    for kind in ("published", "measured"):
        for p in sorted(glob.glob(os.path.join(d, f"*.{kind}.tsv"))):
            name = os.path.basename(p).split(".")[0]
            cfg = os.path.join(d, name + ".cfg")
            known = set()
            if name not in portsets and os.path.exists(cfg):
                # a core costed from another's table (tables.base), with the
                # units its ports.widen rules add
                widen = cfg_value(cfg, "ports.widen") or ""
                known = {q.strip() for rule in widen.split(";") if ">" in rule
                         for q in rule.split(">")[1].split(",")}
                name = cfg_value(cfg, "tables.base") or name
            if name not in portsets:
                err(p, 0, f"no {name}.llvm.tsv (nor a tables.base) for these overrides")
                continue
            forms, ports = check_tsv(p)
            noverride += len(forms)
            for port in sorted(ports - portsets[name] - known):
                err(p, 0, f"port {port!r} does not occur in {name}.llvm.tsv")
    for p in sorted(glob.glob(os.path.join(d, "*.cfg"))):
        name = os.path.basename(p)[:-4]
        check_cfg(p, portsets.get(name) or portsets.get(cfg_value(p, "tables.base") or "", set()))
    for e in errors:
        print(e, file=sys.stderr)
    print(f"check.py: {len(tsvs)} tables, {sum(len(s) for s in formsets.values())} rows, "
          f"{noverride} override rows, {len(errors)} error(s)", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
