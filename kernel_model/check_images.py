#!/usr/bin/env python3
"""check_images.py - ctest kernel_symbols: checks the 16 kernel images.

    check_images.py <image dir> <tables dir> <nm> <objdump>

For every image kernel-pNN.elf: the contract symbols exist (entries,
dispatchers, tables, per-row stubs and bodies of the image's conventions,
and none of the other convention's), es_boot_info.patches == NN, each table
slot points at the right function, and the disassembly of a few stubs and
entries shows the register use each patch promises.
"""
import os
import re
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FA, EBEB, DFE, CLR = 2, 4, 1, 8
errors = []


def err(msg):
    errors.append(msg)


def symbols(nm, path):
    out = subprocess.run([nm, path], check=True, capture_output=True, text=True).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3:
            syms[parts[2]] = int(parts[0], 16)
    return syms


class Elf:
    def __init__(self, path):
        self.data = open(path, "rb").read()
        d = self.data
        phoff, = struct.unpack_from("<Q", d, 32)
        phentsize, phnum = struct.unpack_from("<HH", d, 54)
        self.segs = []
        for i in range(phnum):
            p_type, _, off, vaddr, _, filesz, memsz, _ = struct.unpack_from("<IIQQQQQQ", d, phoff + i * phentsize)
            if p_type == 1:
                self.segs.append((vaddr, off, filesz))

    def u64(self, va):
        for vaddr, off, filesz in self.segs:
            if vaddr <= va < vaddr + filesz:
                return struct.unpack_from("<Q", self.data, off + va - vaddr)[0]
        raise KeyError(hex(va))


def without_ibrs(lines):
    """Drops the IBRS_ENTER/IBRS_EXIT bodies (calling.h: mov $0x48,%ecx ..
    wrmsr): they load EDX/EAX for WRMSR, which is not 6dc936f's clearing."""
    out, skip = [], False
    for l in lines:
        if l.startswith("mov    $0x48,%ecx"):
            skip = True
        if not skip:
            out.append(l)
        if l.startswith("wrmsr"):
            skip = False
    return out


def disasm(objdump, path, sym):
    out = subprocess.run([objdump, "-d", "--no-show-raw-insn", "--disassemble=" + sym, path],
                         check=True, capture_output=True, text=True).stdout
    lines = []
    on = False
    for line in out.splitlines():
        if line.endswith("<%s>:" % sym):
            on = True
            continue
        if on:
            if not line.strip():
                break
            lines.append(line.split("\t", 1)[-1].strip())
    return lines


def rdi_offsets(lines):
    """Offsets of the pt_regs fields a stub reads through %rdi (before %rdi is overwritten)."""
    offs = []
    for ins in lines:
        for m in re.finditer(r"(0x[0-9a-f]+)?\(%rdi\)", ins):
            offs.append(int(m.group(1) or "0", 16))
    return sorted(set(offs))


def main():
    imgdir, tables, nm, objdump = sys.argv[1:5]
    sys.path.insert(0, tables)
    sys.path.insert(0, HERE)
    import gen_syscalls as g
    import gen_stubs as gs
    t64 = g.read_table(os.path.join(tables, "syscall_64.tbl"), ("common", "64", "x32"))
    t32 = g.read_table(os.path.join(tables, "syscall_32.tbl"), ("i386",))

    def conv(entry, p, half):
        """(table symbol, [stub helpers], body) of a 4.17-named entry in image p."""
        kind, name = gs.classify(entry)
        if kind is None:
            return entry, [], None
        new = bool(p & half)
        if kind == "sys":
            pre = {FA: "__x64_sys_", EBEB: "__ia32_sys_"}[half]
            if new:
                return pre + name, ["__se_sys_" + name], "__do_sys_" + name
            return "sys_" + name, ["SyS_" + name], "SYSC_" + name
        if new:
            pre = "__x32_compat_sys_" if entry.startswith("__x32") else "__ia32_compat_sys_"
            return pre + name, ["__se_compat_sys_" + name], "__do_compat_sys_" + name
        return "compat_sys_" + name, ["compat_SyS_" + name], "C_SYSC_" + name

    def check_seed_alias(p, syms, what, stub):
        """A 4.17-final compat stub __{ia32,x32}_compat_sys_NAME has the seed
        ebeb8c82's name __compat_sys_{ia32,x32}_NAME as an alias."""
        for abi in ("ia32", "x32"):
            pre = "__%s_compat_sys_" % abi
            if stub.startswith(pre):
                alias = "__compat_sys_%s_%s" % (abi, stub[len(pre):])
                if alias not in syms:
                    err("p%02d: %s: no %s" % (p, what, alias))
                elif stub in syms and syms[alias] != syms[stub]:
                    err("p%02d: %s: %s is not an alias of %s" % (p, what, alias, stub))

    always = ["startup_64", "es_boot_info", "entry_SYSCALL_64", "entry_INT80_compat",
              "entry_SYSCALL_compat", "entry_SYSENTER_compat", "do_syscall_64",
              "do_int80_syscall_32", "do_fast_syscall_32", "emulate_vsyscall",
              "sys_call_table", "ia32_sys_call_table", "sys_ni_syscall", "vsyscall_page",
              "vdso32_image", "vdso32_image_syscall", "boot_stack_top"]
    for p in range(16):
        path = os.path.join(imgdir, "kernel-p%02d.elf" % p)
        if not os.path.exists(path):
            err("%s missing" % path)
            continue
        syms = symbols(nm, path)
        elf = Elf(path)
        for s in always:
            if s not in syms:
                err("p%02d: no %s" % (p, s))
        if elf.u64(syms["es_boot_info"] + 80) != p:
            err("p%02d: es_boot_info.patches != %d" % (p, p))
        if syms.get("vsyscall_page", 1) & 0xfff:
            err("p%02d: vsyscall_page not page aligned" % p)

        # every row: stub, helper and body of its convention; table slot
        for nr, abi, name, entry, _ in t64:
            half = EBEB if (entry or "").startswith("__x32_compat") else FA
            want = "sys_ni_syscall"
            if entry:
                want, helpers, body = conv(entry, p, half)
                for s in [want] + helpers + ([body] if body else []):
                    if s not in syms:
                        err("p%02d: 64-bit row %d (%s): no %s" % (p, nr, name, s))
            check_seed_alias(p, syms, "64-bit row %d (%s)" % (nr, name), want)
            slot = elf.u64(syms["sys_call_table"] + 8 * nr)
            if want in syms and slot != syms[want]:
                err("p%02d: sys_call_table[%d] is not %s" % (p, nr, want))
        for nr, _, name, entry, compat in t32:
            e = compat or entry
            want = "sys_ni_syscall"
            if e:
                want, helpers, body = conv(e, p, EBEB)
                for s in [want] + helpers + ([body] if body else []):
                    if s not in syms:
                        err("p%02d: i386 row %d (%s): no %s" % (p, nr, name, s))
            check_seed_alias(p, syms, "i386 row %d (%s)" % (nr, name), want)
            slot = elf.u64(syms["ia32_sys_call_table"] + 8 * nr)
            if want in syms and slot != syms[want]:
                err("p%02d: ia32_sys_call_table[%d] is not %s" % (p, nr, want))
        # every number below NR_syscalls without a row (from the tables, not
        # assumed: an instructor may add rows) is a hole
        n64 = max(r[0] for r in t64) + 1
        rows64 = {r[0] for r in t64}
        for nr in range(n64):
            if nr not in rows64 and \
                    elf.u64(syms["sys_call_table"] + 8 * nr) != syms["sys_ni_syscall"]:
                err("p%02d: hole %d is not sys_ni_syscall" % (p, nr))
        # the other convention's 64-bit names are absent in the pure images
        if p & (FA | EBEB) == FA | EBEB and ("SyS_read" in syms or "sys_read" in syms):
            err("p%02d: v4.16 names in a v4.17 image" % p)
        if p & (FA | EBEB) == 0 and ("__x64_sys_read" in syms or "__do_sys_read" in syms):
            err("p%02d: v4.17 names in a v4.16 image" % p)
        # recv: SYSCALL_DEFINE4 without a table row
        rs = "__x64_sys_recv" if p & FA else "SyS_recv"
        if rs not in syms:
            err("p%02d: no %s" % (p, rs))

        # --- register use ---
        if p & FA:
            got = rdi_offsets(disasm(objdump, path, "__x64_sys_read"))
            if got != [0x60, 0x68, 0x70]:
                err("p%02d: __x64_sys_read reads pt_regs offsets %s, want di/si/dx" % (p, [hex(x) for x in got]))
            got = rdi_offsets(disasm(objdump, path, "__x64_sys_recv"))
            if got != [0x38, 0x60, 0x68, 0x70]:
                err("p%02d: __x64_sys_recv reads %s, want di/si/dx/r10" % (p, [hex(x) for x in got]))
        else:
            d = " ".join(disasm(objdump, path, "do_syscall_64"))
            for off in ("0x38", "0x40", "0x48", "0x60", "0x68", "0x70"):
                if off + "(" not in d:
                    err("p%02d: do_syscall_64 does not load pt_regs %s (six-register call)" % (p, off))
        if p & EBEB:
            got = rdi_offsets(disasm(objdump, path, "__ia32_sys_read"))
            if got != [0x28, 0x58, 0x60]:
                err("p%02d: __ia32_sys_read reads %s, want bx/cx/dx" % (p, [hex(x) for x in got]))
        else:
            d = " ".join(disasm(objdump, path, "do_int80_syscall_32"))
            for off in ("0x20", "0x28", "0x58", "0x60", "0x68", "0x70"):
                if off + "(" not in d:
                    err("p%02d: do_int80_syscall_32 does not load pt_regs %s" % (p, off))
        e64 = without_ibrs(disasm(objdump, path, "entry_SYSCALL_64") +
                           disasm(objdump, path, "entry_SYSCALL_64_after_hwframe"))
        cleared = {r for r in ("%edx", "%ecx") if "xor    %s,%s" % (r, r) in e64}
        if bool(p & CLR) != (cleared == {"%edx", "%ecx"}) or (not p & CLR and cleared):
            err("p%02d: entry_SYSCALL_64 clears %s" % (p, sorted(cleared)))
        i80 = without_ibrs(disasm(objdump, path, "entry_INT80_compat"))
        cleared = {r for r in ("%esi", "%edx", "%ecx") if "xor    %s,%s" % (r, r) in i80}
        if (p & CLR and len(cleared) != 3) or (not p & CLR and cleared):
            err("p%02d: entry_INT80_compat clears %s" % (p, sorted(cleared)))
        dfe = "mov    %rax,%rdi" in e64
        if dfe != bool(p & DFE):
            err("p%02d: entry_SYSCALL_64 %s the number in rdi" % (p, "passes" if dfe else "does not pass"))

    for e in errors:
        print("FAIL:", e)
    print("%d problems in 16 images" % len(errors))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
