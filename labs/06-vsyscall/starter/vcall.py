#!/usr/bin/env python3
"""vcall.py [--read] [--getpid N] ADDR OUT

Writes OUT, a tiny static x86-64 ELF program (no compiler needed) that
calls ADDR the way an old glibc called the vsyscall page:

    sub   rsp, 64
    (N times: mov eax, 39; syscall)        getpid, only with --getpid N
    lea   rdi, [rsp+16]                    argument 1: a buffer
    lea   rsi, [rsp+32]                    argument 2: another buffer
    mov   rdx, 0x5555                      whatever the caller left in rdx
    mov   ecx, 0xc0ffee                    ... and in rcx
    mov   rax, ADDR
    call  rax                              (with --read: mov rax, [ADDR])
    xor   edi, edi                         the call came back:
    mov   eax, 60
    syscall                                exit(0)

So `entrysim run OUT` exits with status 0 when the call returned (or the
read worked), and with 128+N when the program died of signal N on the
way.  Given: you do not need to change it.  Python 3 standard library
only.
"""
import argparse
import os
import struct
import sys

BASE = 0x400000          # where the one segment is loaded
CODE_OFF = 64 + 56       # the code follows the ELF header and one program header


def code(addr, getpid=0, read=False):
    c = b"\x48\x83\xec\x40"                          # sub rsp, 0x40
    c += b"\xb8\x27\x00\x00\x00\x0f\x05" * getpid    # mov eax, 39; syscall
    c += b"\x48\x8d\x7c\x24\x10"                     # lea rdi, [rsp+0x10]
    c += b"\x48\x8d\x74\x24\x20"                     # lea rsi, [rsp+0x20]
    c += b"\x48\xba" + struct.pack("<Q", 0x5555)     # mov rdx, 0x5555
    c += b"\xb9\xee\xff\xc0\x00"                     # mov ecx, 0xc0ffee
    if read:
        c += b"\x48\xa1" + struct.pack("<Q", addr)   # mov rax, [ADDR] (movabs)
    else:
        c += b"\x48\xb8" + struct.pack("<Q", addr)   # mov rax, ADDR
        c += b"\xff\xd0"                             # call rax
    c += b"\x31\xff"                                 # xor edi, edi
    c += b"\xb8\x3c\x00\x00\x00"                     # mov eax, 60
    c += b"\x0f\x05"                                 # syscall (exit)
    return c


def elf(addr, getpid=0, read=False):
    body = code(addr, getpid, read)
    size = CODE_OFF + len(body)
    ehdr = struct.pack("<4sBBBBB7xHHIQQQIHHHHHH", b"\x7fELF", 2, 1, 1, 0, 0,
                       2, 62, 1, BASE + CODE_OFF, 64, 0, 0, 64, 56, 1, 0, 0, 0)
    phdr = struct.pack("<IIQQQQQQ", 1, 5, 0, BASE, BASE, size, size, 0x1000)
    return ehdr + phdr + body


def write(path, addr, getpid=0, read=False):
    """Writes the program (the grader uses this function too)."""
    with open(path, "wb") as f:
        f.write(elf(addr, getpid, read))
    os.chmod(path, 0o755)


def main():
    ap = argparse.ArgumentParser(description="write a static ELF that calls ADDR")
    ap.add_argument("addr", help="the address to call, e.g. 0xffffffffff600400")
    ap.add_argument("out", help="the program file to write")
    ap.add_argument("--getpid", type=int, default=0, metavar="N",
                    help="make N getpid system calls before the call (default 0)")
    ap.add_argument("--read", action="store_true",
                    help="read the 8 bytes at ADDR instead of calling it")
    a = ap.parse_args()
    try:
        addr = int(a.addr, 0) & (2**64 - 1)
    except ValueError:
        sys.exit(f"vcall.py: not an address: {a.addr}")
    write(a.out, addr, max(0, a.getpid), a.read)


if __name__ == "__main__":
    main()
