#!/usr/bin/env python3
"""Writes the hand-made seed corpora of tests/fuzz/corpus/ (run once; the
files are committed).  ELF seeds mirror fz_write_elf in fuzz_util.c."""
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
VA = 0x400000


def elf(code, bits32=False):
    if bits32:
        hdr = 52 + 32
        eh = struct.pack('<16sHHIIIIIHHHHHH', b'\x7fELF\x01\x01\x01' + b'\0' * 9, 2, 3, 1,
                         VA + hdr, 52, 0, 0, 52, 32, 1, 0, 0, 0)
        ph = struct.pack('<IIIIIIII', 1, 0, VA, VA, hdr + len(code), hdr + len(code), 5, 0x1000)
    else:
        hdr = 64 + 56
        eh = struct.pack('<16sHHIQQQIHHHHHH', b'\x7fELF\x02\x01\x01' + b'\0' * 9, 2, 62, 1,
                         VA + hdr, 64, 0, 0, 64, 56, 1, 0, 0, 0)
        ph = struct.pack('<IIQQQQQQ', 1, 5, 0, VA, VA, hdr + len(code), hdr + len(code),
                         0x1000)
    return eh + ph + code


EXIT64 = bytes.fromhex('b83c00000031ff0f05')            # exit(0)
EXIT32 = bytes.fromhex('b80100000031dbcd80')            # int $0x80 exit(0)
WRITE64 = bytes.fromhex('b801000000bf0100000048c7c600004000ba040000000f05') + EXIT64
ARITH64 = bytes.fromhex('4801d848f7e34883c0074831c9480fafc1d1e0') + EXIT64
STACK64 = bytes.fromhex('5053585b4889e0488b00c3')
SYSENTER32 = bytes.fromhex('b8140000000f34') + EXIT32  # getpid through sysenter
ARITH32 = bytes.fromhex('01d8f7e383c0070fafc1d1e0') + EXIT32

SEEDS = {
    'elf': {
        'exit64.elf': elf(EXIT64), 'exit32.elf': elf(EXIT32, True),
        'write64.elf': elf(WRITE64), 'truncated.elf': elf(EXIT64)[:70],
    },
    'exec': {
        'exit64': b'\0' + EXIT64, 'write64': b'\0' + WRITE64, 'arith64': b'\0' + ARITH64,
        'stack64': b'\0' + STACK64, 'exit32': b'\1' + EXIT32, 'sysenter32': b'\1' + SYSENTER32,
        'arith32': b'\1' + ARITH32, 'ud2': b'\0\x0f\x0b',
    },
    'gdb': {
        'session': b'\0' + b'\n'.join([b'qSupported:multiprocess+;xmlRegisters=i386', b'?', b'g',
                                      b'm400078,10', b'p10', b'Z0,40007f,1', b'c', b's',
                                      b'vCont;s', b'z0,40007f,1', b'M600000,2:0102',
                                      b'qXfer:features:read:target.xml:0,fff', b'D']),
        'kernel': b'\2' + b'\n'.join([b'QStartNoAckMode', b'?', b'g', b'si', b'P10=0000400000000000',
                                     b'qRcmd,68656c70', b'k']),
        'raw': b'\1$?#3f+$g#67+$s#73+',
    },
    'toml': {f: open(os.path.join(HERE, '../../bench/matrices', f), 'rb').read()
             for f in ('entry.toml', 'mitigations.toml', 'series.toml')},
    'hex': {
        'add_skylake': b'\1' + b'4801d8', 'load_znver4': b'\0' + b'488b0424',
        'block': b'\0' + b'0f29042448894424204889ef4889442438', 'spaced': b'\0' + b' 01c3 ',
    },
    'dbg': {
        'tour': b'\n'.join([b'step 5', b'regs', b'kentry', b'ptregs', b'taint', b'exposure',
                            b'kexit', b'reverse 3', b'break entry_SYSCALL_64', b'continue',
                            b'breaks', b'delete 1', b'x $rsp 32', b'mem rsp', b'syntax att',
                            b'print rax', b'status', b'output', b'next', b'finish', b'syscall',
                            b'rcontinue', b'until 0x400078', b'quit']),
        'restart': b'restart --patches all --mitigations pti --cpu amd\nstep 100\nregs',
    },
}


def call(abi, nr, *args):
    """A host record: abi, number, six selectors (0x40|k = scratch + 64k,
    0xc0 + 8 bytes = raw value)."""
    out = bytes([abi, nr & 0xff, nr >> 8])
    for a in (list(args) + [0] * 6)[:6]:
        out += a if isinstance(a, bytes) else bytes([a])
    return out


def raw(v):
    return b'\xc0' + struct.pack('<q', v)


def scratch(*strings):
    s = b''.join(x.ljust(64, b'\0') for x in strings[:-1]) + strings[-1] + b'\0'
    return bytes([len(s)]) + s


AT = raw(-100)
SEEDS['host'] = {
    'open_read': scratch(b'hello.txt') + call(0, 257, AT, 0x40, 8) + call(0, 0, 11, 0x41, raw(64)),
    'escape': scratch(b'../secret.txt', b'esc', b'sub/up/secret.txt', b'abs') +
              call(0, 257, AT, 0x40, raw(0x241), raw(0o644)) + call(0, 257, AT, 0x41, raw(2)) +
              call(0, 87, 0x42) + call(0, 82, 0x43, 0x40),
    'mkdir_rename': scratch(b'newdir', b'sub/x', b'newdir/y') + call(0, 83, 0x40, raw(0o755)) +
                    call(0, 82, 0x40, 0x42) + call(0, 84, 0x42),
    'i386_open': scratch(b'hello.txt') + call(1, 5, 0x40, 8, 8) + call(1, 3, 11, 0x41, raw(32)),
    'mmap_brk': call(0, 9, 8, raw(0x2000), raw(3), raw(0x22), raw(-1), 8) + call(0, 12, 8) +
                call(0, 12, raw(0x800000)),
    'x32_getcwd': scratch(b'') + call(2, 79, 0x40, raw(64)),
}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, 'corpus')
    for target, files in SEEDS.items():
        dirs = ['exec_direct', 'exec_kernel'] if target == 'exec' else [target]
        for d in dirs:
            os.makedirs(os.path.join(out, d), exist_ok=True)
            for name, data in files.items():
                with open(os.path.join(out, d, name), 'wb') as f:
                    f.write(data)


main()
