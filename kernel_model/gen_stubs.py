#!/usr/bin/env python3
"""gen_stubs.py - the guest kernel's syscall definitions and tables.

    gen_stubs.py <tables dir> <output dir> [--student FILE] [--host-rows FILE]

Reads tables/syscall_64.tbl, syscall_32.tbl and syscall_params.tbl (parsed
by tables/gen_syscalls.py) and writes into <output dir>:

  stubs_sys.c      SYSCALL_DEFINEn(name, ...) for every native definition a
                   table names (__x64_sys_NAME rows of syscall_64.tbl and
                   __ia32_sys_NAME entries of syscall_32.tbl), plus the
                   parameter rows without a table row (recv);
  stubs_compat.c   COMPAT_SYSCALL_DEFINEn for every __x32_compat_sys_NAME /
                   __ia32_compat_sys_NAME entry;
  stubs_special.c  the entries that are no definition (sys32_*sigreturn);
  tables.c         sys_call_table (64-bit and x32 rows at their numbers) and
                   ia32_sys_call_table, holes -> sys_ni_syscall;
  syscall_nrs.h    NR_syscalls and IA32_NR_syscalls, and ES_NR64_<name>,
                   ES_NRX32_<name>, ES_NR32_<name> (as es_syscall_names.h).

The tables are written with 4.17's names; tables.c maps each to the name of
the convention it is compiled for (ES_T64/ES_TX32/ES_T32/ES_T32C).  Every
body forwards its arguments, in declaration order and cast to unsigned
long, to the host with the ES_HC_SYSCALL hypercall (es_hc_syscall6), using
the ABI and number the dispatcher recorded.

--student FILE: the SYSCALL_DEFINEn / COMPAT_SYSCALL_DEFINEn bodies written
in FILE (student.c, compiled into every image) replace the forwarding
definition of their name; their rows need no parameter row.
--host-rows FILE (`entrysim kernel build`): the rows the simulator's host
services know, "<64|32> <nr> <name>" a line.  A forwarded row must be one
of them (the host dispatches by number), else the row has no body and it is
an error naming the table's file and line.  Errors print as
"FILE:LINE: error: ..." and exit 1.
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def load_parser(tables_dir):
    sys.path.insert(0, tables_dir)
    import gen_syscalls  # noqa: E402  (the tables' own parser and checks)
    return gen_syscalls


def split_param(p):
    m = re.match(r"^(.*?)\s*\b([A-Za-z_][A-Za-z0-9_]*)$", p)
    if not m:
        raise SystemExit("gen_stubs.py: cannot split parameter %r" % p)
    return m.group(1).strip(), m.group(2)


PREFIXES = (("__x64_sys_", "sys"), ("__x32_compat_sys_", "compat"),
            ("__ia32_sys_", "sys"), ("__ia32_compat_sys_", "compat"))


def classify(entry):
    for pre, kind in PREFIXES:
        if entry.startswith(pre):
            return kind, entry[len(pre):]
    return None, entry


# Bodies that do more than forward (kernel-side state the host cannot see).
EXTRA = {
    # the TLS descriptor lives in this kernel's GDT (arch/x86/kernel/tls.c)
    ("sys", "set_thread_area"): "\tif (ret == 0)\n\t\tes_tls_update((unsigned long)%(p0)s);\n",
}


def body(kind, name, params):
    args = ["(unsigned long)(%s)" % n for _, n in params] + ["0"] * (6 - len(params))
    extra = EXTRA.get((kind, name))
    s = "{\n\tlong ret = es_hc_syscall6(%s);\n" % ", ".join(args)
    if extra:
        s += extra % {"p0": params[0][1]}
    return s + "\treturn ret;\n}\n\n"


def define(kind, name, params):
    macro = ("SYSCALL_DEFINE%d" if kind == "sys" else "COMPAT_SYSCALL_DEFINE%d") % len(params)
    flat = [name]
    for t, n in params:
        flat += [t, n]
    return "%s(%s)\n" % (macro, ", ".join(flat)) + body(kind, name, params)


def error(where, msg):
    sys.stderr.write("%s: error: %s\n" % (where, msg))
    sys.exit(1)


DEFINE_RE = re.compile(r"\b(COMPAT_)?SYSCALL_DEFINE([0-6])\s*\(")
# C's own words that may make up a parameter type
C_WORDS = {"void", "char", "short", "int", "long", "signed", "unsigned", "const", "volatile",
           "__user", "_Bool"}


def known_types(texts):
    """The typedef names of the kernel headers (include/) and of texts."""
    names = set()
    inc = os.path.join(HERE, "include")
    for f in sorted(os.listdir(inc)) if os.path.isdir(inc) else []:
        if f.endswith(".h"):
            with open(os.path.join(inc, f)) as h:
                texts = texts + [h.read()]
    for t in texts:
        for m in re.finditer(r"\btypedef\b([^;]*);", t):
            fp = re.search(r"\(\s*\*\s*(\w+)\s*\)", m.group(1))
            names.add(fp.group(1) if fp else re.findall(r"\w+", m.group(1))[-1])
    return names


def check_type(where, name, t, types):
    """A parameter type must be C's, struct/union X, or a known typedef."""
    words = re.findall(r"[A-Za-z_]\w*", t)
    i = 0
    while i < len(words):
        w = words[i]
        if w in ("struct", "union") and i + 1 < len(words):
            i += 2
            continue
        if w not in C_WORDS and w not in types:
            error(where, "unknown parameter type '%s' in %s (the C types, struct/union NAME "
                  "and the typedefs of include/, e.g. size_t, loff_t, pid_t)" % (t.strip(), name))
        i += 1
    if not words:
        error(where, "parameter of %s without a type" % name)


def define_args(text, start):
    """The comma-separated arguments of the macro call whose '(' ends at start."""
    depth, i, args, cur = 1, start, [], ""
    while i < len(text) and depth:
        c = text[i]
        depth += (c == "(") - (c == ")")
        if depth and c == "," and depth == 1:
            args.append(cur)
            cur = ""
        elif depth:
            cur += c
        i += 1
    return [a.strip() for a in args + [cur]] if not depth else None


def read_student(path):
    """{(kind, name): (line, arity)} of the SYSCALL_DEFINEs written in path;
    their parameters are checked (count, known types)."""
    found = {}
    if not path:
        return found
    with open(path) as f:
        text = f.read()
    code = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)
    code = re.sub(r"//[^\n]*", "", code)
    types = known_types([code])
    for m in DEFINE_RE.finditer(code):
        ln = code.count("\n", 0, m.start()) + 1
        where = "%s:%d" % (path, ln)
        n = int(m.group(2))
        args = define_args(code, m.end())
        macro = m.group(0).rstrip("( \t\n")
        if args is None or len(args) != 2 * n + 1 or not re.match(r"^[A-Za-z_]\w*$", args[0]):
            error(where, "%s(name, type1, arg1, ...) needs a name and %d (type, name) pair%s"
                  % (macro, n, "" if n == 1 else "s"))
        for k in range(n):
            check_type(where, args[0], args[1 + 2 * k], types)
        key = ("compat" if m.group(1) else "sys", args[0])
        if key in found:
            error(where, "%s defined twice (first at line %d)" % (args[0], found[key][0]))
        found[key] = (ln, n)
    return found


# The kernel's own syscall bodies (beside this script, in the source tree
# and in a student's copy alike): their rows get no forwarding definition.
KERNEL_BODIES = ("signal.c", "signal32.c")


def read_bodies(student_path):
    """read_student over the kernel's body files and student.c; a name
    both define is an error at the student's line."""
    found = {}
    for f in KERNEL_BODIES:
        path = os.path.join(HERE, f)
        if os.path.exists(path):
            found.update({k: v + (f,) for k, v in read_student(path).items()})
    for k, v in read_student(student_path).items():
        if k in found:
            error("%s:%d" % (student_path, v[0]), "%s has a body in the kernel already (%s); "
                  "edit it there" % (k[1], found[k][2]))
        found[k] = v
    return found


def kernel_specials():
    """Table entries that are no SYSCALL_DEFINE but that the kernel's body
    files define themselves (asmlinkage long NAME(void))."""
    names = set()
    for f in KERNEL_BODIES:
        path = os.path.join(HERE, f)
        if os.path.exists(path):
            with open(path) as fh:
                names.update(re.findall(r"^long\s+(sys32_\w+)\s*\(void\)\s*$", fh.read(), re.M))
    return names


def read_host_rows(path):
    """{(table, nr): name} the host can perform, or None (no check)."""
    if not path:
        return None
    rows = {}
    with open(path) as f:
        for line in f:
            t, nr, name = line.split()
            rows[(t, int(nr))] = name
    return rows


def row_lines(g, path):
    """{number: line} of a table file (for messages)."""
    return {int(text.split()[0]): ln for ln, text in g.lines(path)}


def parse_args(argv):
    opts = {"--student": None, "--host-rows": None}
    pos = []
    i = 0
    while i < len(argv):
        if argv[i] in opts and i + 1 < len(argv):
            opts[argv[i]] = argv[i + 1]
            i += 2
        else:
            pos.append(argv[i])
            i += 1
    if len(pos) != 2:
        raise SystemExit("usage: gen_stubs.py <tables dir> <output dir> [--student FILE] "
                         "[--host-rows FILE]")
    return pos[0], pos[1], opts["--student"], opts["--host-rows"]


class Rows:
    """Checks a row that forwards to the host (no student body)."""

    def __init__(self, g, src, host):
        self.host = host
        self.paths = {"64": os.path.join(src, "syscall_64.tbl"),
                      "32": os.path.join(src, "syscall_32.tbl")}
        self.lines = {t: row_lines(g, p) for t, p in self.paths.items()} if host is not None else {}

    def where(self, table, nr):
        return "%s:%d" % (self.paths[table], self.lines[table].get(nr, 0))

    def forward(self, table, nr, name, dname, kind, has_params):
        if self.host is None:
            return
        if self.host.get((table, nr)) != name:
            macro = "SYSCALL_DEFINEn" if kind != "compat" else "COMPAT_SYSCALL_DEFINEn"
            error(self.where(table, nr),
                  "%s (%d) has no body: write %s(%s, ...) in student.c (the host has no "
                  "system call %s at %d to forward it to)" % (name, nr, macro, dname, name, nr))
        if not has_params:
            error(self.where(table, nr), "%s (%d): no row in syscall_params.tbl" % (name, nr))


def main():
    src, out, student_path, host_path = parse_args(sys.argv[1:])
    g = load_parser(src)
    student = read_bodies(student_path)
    rows = Rows(g, src, read_host_rows(host_path))
    t64 = g.read_table(os.path.join(src, "syscall_64.tbl"), ("common", "64", "x32"))
    t32 = g.read_table(os.path.join(src, "syscall_32.tbl"), ("i386",))
    params = g.read_params(os.path.join(src, "syscall_params.tbl"))

    defs = {"sys": {}, "compat": {}}  # name -> [(type, name)]
    specials = []
    used = set()

    def add(kind, name, plist, where):
        pl = [split_param(p) for p in plist]
        old = defs[kind].get(name)
        if old is not None:
            if len(old) != len(pl):
                raise SystemExit("gen_stubs.py: %s_%s has arity %d and %d (%s)"
                                 % (kind, name, len(old), len(pl), where))
            return  # same definition seen from another row (types may be spelled differently)
        defs[kind][name] = pl

    for nr, abi, name, entry, _ in t64:
        if entry is None:
            continue
        kind, dname = classify(entry)
        pabi = "x32" if abi == "x32" else None
        key = (name, pabi) if (name, pabi) in params else (name, None)
        used.add(key)
        if (kind, dname) in student:
            continue
        if entry != "sys_ni_syscall":
            rows.forward("64", nr, name, dname, kind, kind is None or key in params)
        if kind is None:
            if entry != "sys_ni_syscall" and entry not in specials:
                specials.append(entry)
            continue
        add(kind, dname, params[key], "syscall_64.tbl %d" % nr)
    for nr, _, name, entry, compat in t32:
        e = compat or entry
        if e is None:
            continue
        kind, dname = classify(e)
        key = (name, "i386") if (name, "i386") in params else (name, None)
        used.add(key)
        if (kind, dname) in student:
            continue
        if e != "sys_ni_syscall":
            rows.forward("32", nr, name, dname, kind, kind is None or key in params)
        if kind is None:
            if e != "sys_ni_syscall" and e not in specials:
                specials.append(e)
            continue
        add(kind, dname, params[key], "syscall_32.tbl %d" % nr)
    # Parameter rows without a table row (recv): native definitions.
    for key, plist in params.items():
        if key not in used and key[1] is None and key[0] not in defs["sys"] \
                and ("sys", key[0]) not in student:
            add("sys", key[0], plist, "syscall_params.tbl")

    os.makedirs(out, exist_ok=True)
    head = "/* Generated by kernel_model/gen_stubs.py from the tables/ directory - do not edit. */\n"

    structs = set()
    for kind in defs:
        for pl in defs[kind].values():
            for t, _ in pl:
                structs.update(re.findall(r"\b(struct|union)\s+([A-Za-z_]\w*)", t))
    fwd = "".join("%s %s;\n" % s for s in sorted(structs))
    inc = '#include "syscalls.h"\n\n' + fwd + "\n"

    s = [head, inc]
    for name in sorted(defs["sys"]):
        s.append(define("sys", name, defs["sys"][name]))
    g.write_if_changed(os.path.join(out, "stubs_sys.c"), "".join(s))

    s = [head, inc]
    for name in sorted(defs["compat"]):
        s.append(define("compat", name, defs["compat"][name]))
    g.write_if_changed(os.path.join(out, "stubs_compat.c"), "".join(s))

    s = [head, '#include "kmodel.h"\n\n',
         "/* Table entries that are no SYSCALL_DEFINE (Linux: asmlinkage functions\n"
         " * reading current_pt_regs()); they forward with no arguments. */\n"]
    for e in specials:
        if e in kernel_specials():
            continue  # the kernel's own (signal32.c: sys32_*sigreturn)
        s.append("long %s(void);\nlong %s(void)\n{\n\treturn es_hc_syscall6(0, 0, 0, 0, 0, 0);\n}\n\n"
                 % (e, e))
    g.write_if_changed(os.path.join(out, "stubs_special.c"), "".join(s))

    n64 = max(r[0] for r in t64) + 1
    n32 = max(r[0] for r in t32) + 1
    # The numbers by name, as tables/gen_syscalls.py writes them into
    # es_syscall_names.h (same guard, so both headers can meet); the
    # freestanding kernel build does not see the simulator's generated dir.
    nrs = ["#ifndef ES_SYSCALL_NUMBERS_DEFINED\n#define ES_SYSCALL_NUMBERS_DEFINED\n"]
    for nr, abi, name, _, _ in t64:
        nrs.append("#define ES_NR%s_%s %d\n" % ("X32" if abi == "x32" else "64", name, nr))
    for nr, _, name, _, _ in t32:
        nrs.append("#define ES_NR32_%s %d\n" % (name, nr))
    nrs.append("#endif\n")
    g.write_if_changed(os.path.join(out, "syscall_nrs.h"),
                       head + "#define NR_syscalls %d\n#define IA32_NR_syscalls %d\n" % (n64, n32)
                       + "".join(nrs))

    def tname(entry, table):
        kind, dname = classify(entry)
        if kind is None:
            return entry
        if table == "64":
            return ("ES_T64(%s)" if kind == "sys" else "ES_TX32(%s)") % dname
        return ("ES_T32(%s)" if kind == "sys" else "ES_T32C(%s)") % dname

    rows64 = {nr: tname(e, "64") for nr, _, _, e, _ in t64 if e}
    rows32 = {nr: tname(c or e, "32") for nr, _, _, e, c in t32 if (c or e)}
    syms = sorted(set(rows64.values()) | set(rows32.values()) | {"sys_ni_syscall"})
    s = [head, '#include "kmodel.h"\n#include "syscalls.h"\n#include "syscall_nrs.h"\n\n',
         "/* Entry names per convention: fa697140 switches the 64-bit rows,\n"
         " * ebeb8c82 the x32 (compat) and ia32 rows. */\n",
         "#if ES_HAS(FA697140)\n#define ES_T64(n) __x64_sys_##n\n#else\n#define ES_T64(n) sys_##n\n#endif\n",
         "#if ES_HAS(EBEB8C82)\n#define ES_TX32(n) __x32_compat_sys_##n\n#define ES_T32(n) __ia32_sys_##n\n"
         "#define ES_T32C(n) __ia32_compat_sys_##n\n#else\n#define ES_TX32(n) compat_sys_##n\n"
         "#define ES_T32(n) sys_##n\n#define ES_T32C(n) compat_sys_##n\n#endif\n\n",
         "/* Declared without a prototype: the table holds them as one pointer\n"
         " * type, as Linux's does (\"this is a lie, but it does not hurt\"). */\n"]
    for sym in syms:
        s.append("extern long %s();\n" % sym)
    s.append("\n#if ES_HAS(FA697140)\ntypedef sys_call_ptr_regs_t sys_call_ptr_t;\n#else\n"
             "typedef sys_call_ptr_6_t sys_call_ptr_t;\n#endif\n")
    s.append("#if ES_HAS(EBEB8C82)\ntypedef sys_call_ptr_regs_t ia32_sys_call_ptr_t;\n#else\n"
             "typedef sys_call_ptr_6_t ia32_sys_call_ptr_t;\n#endif\n\n")
    s.append("const sys_call_ptr_t sys_call_table[NR_syscalls] = {\n")
    for nr in range(n64):
        s.append("\t[%d] = (sys_call_ptr_t)%s,\n" % (nr, rows64.get(nr, "sys_ni_syscall")))
    s.append("};\n\nconst ia32_sys_call_ptr_t ia32_sys_call_table[IA32_NR_syscalls] = {\n")
    for nr in range(n32):
        s.append("\t[%d] = (ia32_sys_call_ptr_t)%s,\n" % (nr, rows32.get(nr, "sys_ni_syscall")))
    s.append("};\n")
    g.write_if_changed(os.path.join(out, "tables.c"), "".join(s))
    write_rows(g, out, head, t64, t32, params, student)


def write_rows(g, out, head, t64, t32, params, student):
    """syscalls.tsv: every row of both tables with its declared arity, for
    the analyses of a student's kernel (`entrysim exposure --kernel DIR`
    reads DIR/build/gen/syscalls.tsv: names, numbers and arities that the
    simulator's own tables may not have)."""
    def arity(entry, name, pabi):
        """A student's SYSCALL_DEFINEn says n; else the parameter row (also
        for a row whose slot is sys_ni_syscall, as the built-in tables); a
        row without an entry point has none."""
        if not entry:
            return 0
        kind, dname = classify(entry)
        if (kind, dname) in student:
            return student[(kind, dname)][1]
        key = (name, pabi) if (name, pabi) in params else (name, None)
        return len(params[key]) if key in params else 0

    s = ["# " + head.strip("/* \n") + "\n# table\tnr\tabi\tname\tarity\n"]
    for nr, abi, name, entry, _ in t64:  # every row, as the built-in tables list them
        s.append("64\t%d\t%s\t%s\t%d\n"
                 % (nr, abi, name, arity(entry, name, "x32" if abi == "x32" else None)))
    for nr, _, name, entry, compat in t32:
        s.append("32\t%d\ti386\t%s\t%d\n" % (nr, name, arity(compat or entry, name, "i386")))
    g.write_if_changed(os.path.join(out, "syscalls.tsv"), "".join(s))


if __name__ == "__main__":
    main()
