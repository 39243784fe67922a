#!/usr/bin/env python3
"""calibrate.py - the core's parameters measured on this host, and the model's
view of the same code.

Runs every block of bench/uarch/blocks.tsv through `entrysim measure-native`
(the host, cycles per iteration) and `entrysim throughput --uarch UARCH` (the
model), and prints per block the measured rate or latency (ops / cycles, or
cycles / ops), the model's, and the .cfg key the block informs.  A new
machine kind is calibrated by running this on it and writing what it prints
into tables/uarch/NAME.cfg with `# measured here (bench/uarch/BLOCK)`.

It first prints the host CPU (vendor, family, model, name) and the load
average before and after, and warns when the host is not a CPU the uarch's
`cpu.match` lists (a VM can move to another machine kind: measured figures
then belong to that machine, not to the .cfg).  Measure on an idle host (a
1-minute load below about 1.2 on this 2-vCPU machine): under load rates read
low.

usage: bench/uarch/calibrate.py ENTRYSIM [--uarch U] [--tries N] [--json]
exit status: 0 printed, 2 bad usage, 3 entrysim failed (the message says)
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CFG_DIR = os.path.join(HERE, "..", "..", "tables", "uarch")


def host_cpu():
    """(vendor, family, model, name) from /proc/cpuinfo (CPUID's displayed
    family and model), or None."""
    info = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if not line.strip():
                    break
                k, _, v = line.partition(":")
                info[k.strip()] = v.strip()
    except OSError:
        return None
    vendor = {"AuthenticAMD": "AMD", "GenuineIntel": "Intel"}.get(info.get("vendor_id"), info.get("vendor_id"))
    try:
        return vendor, int(info["cpu family"]), int(info["model"]), info.get("model name", "?")
    except (KeyError, ValueError):
        return None


def uarch_matches(uarch, cpu):
    """True/False: the uarch's cpu.match lists the CPU; None: cannot tell."""
    try:
        with open(os.path.join(CFG_DIR, uarch + ".cfg")) as f:
            line = next((l for l in f if l.startswith("cpu.match")), None)
    except OSError:
        return None
    if line is None or cpu is None:
        return None
    words = line.split("=", 1)[1].split("#")[0].split()
    if len(words) < 3 or words[0] != cpu[0] or int(words[1], 16) != cpu[1]:
        return False
    for w in words[2:]:
        lo, _, hi = w.partition("-")
        if int(lo, 16) <= cpu[2] <= int(hi or lo, 16):
            return True
    return False


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"


def read_blocks(path):
    rows = []
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            name, hexs, ops, derive, key, code = line.rstrip("\n").split("\t")
            rows.append({"name": name, "hex": hexs, "ops": int(ops), "derive": derive,
                         "key": key, "code": code})
    return rows


def cycles(cmd, hexes):
    """hex -> cycles (or None) from an entrysim command reading --file -."""
    p = subprocess.run(cmd + ["--file", "-"], input="\n".join(hexes) + "\n",
                       capture_output=True, text=True)
    if p.returncode not in (0, 1):
        sys.exit(f"calibrate: {' '.join(cmd)}: {p.stderr.strip()}")
    out = {}
    for line in p.stdout.splitlines():
        f = line.split("\t")
        try:
            out[f[0]] = float(f[1])
        except (IndexError, ValueError):
            out[f[0]] = None
    return out


def value(row, c):
    if not c:
        return None
    return row["ops"] / c if row["derive"] == "per_cycle" else c / row["ops"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("entrysim")
    ap.add_argument("--uarch", default="host")
    ap.add_argument("--tries", default="8")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    rows = read_blocks(os.path.join(HERE, "blocks.tsv"))
    hexes = [r["hex"] for r in rows]
    cpu = host_cpu()
    head = [f"host: {cpu[3]}, {cpu[0]} family {cpu[1]:#x} model {cpu[2]:#x}" if cpu else "host: unknown CPU",
            f"load average before: {loadavg()}"]
    if a.uarch != "host" and uarch_matches(a.uarch, cpu) is False:
        head.append(f"WARNING: this host is not a CPU that {a.uarch}.cfg's cpu.match lists: "
                    f"the measured column is this machine's, not {a.uarch}'s")
    host = cycles([a.entrysim, "measure-native", "--tries", a.tries], hexes)
    model = cycles([a.entrysim, "throughput", "--uarch", a.uarch], hexes)
    for r in rows:
        r["measured_cycles"], r["model_cycles"] = host.get(r["hex"]), model.get(r["hex"])
        r["measured"], r["model"] = value(r, r["measured_cycles"]), value(r, r["model_cycles"])
    head.append(f"load average after: {loadavg()}")
    if a.json:
        for h in head:
            print("# " + h, file=sys.stderr)
        json.dump(rows, sys.stdout, indent=1)
        print()
        return 0
    for h in head:
        print("# " + h)
    print(f"{'block':<28} {'derive':<10} {'measured':>9} {'model':>9}  cfg key")
    for r in rows:
        fmt = lambda v: f"{v:9.2f}" if v is not None else "    error"
        print(f"{r['name']:<28} {r['derive']:<10} {fmt(r['measured'])} {fmt(r['model'])}  {r['key']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
