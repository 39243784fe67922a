#!/usr/bin/env python3
"""make_bad_elves.py OUTDIR GOOD_ELF - writes the malformed inputs of the
end-to-end loader tests, derived from a valid static x86-64 program:

  truncated   the first 40 bytes (an ELF64 header needs 64)
  bad_phoff   e_phoff pointing past the end of the file
  huge_phnum  e_phnum = 0xffff
  zero        an empty file
  random      4 KiB of pseudo-random bytes (not an ELF)
  garbage     a valid ELF whose entry point holds pseudo-random bytes
  noexec      the valid program without execute permission (mode 0644)
  fifo        a named pipe (opening it for reading would wait for a writer)

Every other file gets mode 0755, so that what is refused is its contents.
"""
import os
import struct
import sys


def lcg_bytes(seed, n):
    # a fixed xorshift generator: the same bytes on every Python
    x = seed
    out = bytearray()
    while len(out) < n:
        x ^= (x << 13) & 0xFFFFFFFFFFFFFFFF
        x ^= x >> 7
        x ^= (x << 17) & 0xFFFFFFFFFFFFFFFF
        out.append((x >> 24) & 0xFF)
    return bytes(out)


def main():
    out, good = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    data = open(good, "rb").read()

    def write(name, b, mode=0o755):
        path = os.path.join(out, name)
        with open(path, "wb") as f:
            f.write(b)
        os.chmod(path, mode)

    write("truncated", data[:40])
    b = bytearray(data)
    struct.pack_into("<Q", b, 32, len(data) + 4096)
    write("bad_phoff", bytes(b))
    b = bytearray(data)
    struct.pack_into("<H", b, 56, 0xFFFF)
    write("huge_phnum", bytes(b))
    write("zero", b"")
    write("random", lcg_bytes(0x2545F4914F6CDD1D, 4096))

    # garbage: ELF header + one R+X PT_LOAD at 0x400000; code at 0x400078
    code = lcg_bytes(0x9E3779B97F4A7C15, 4096)
    ehdr = b"\x7fELF\x02\x01\x01" + bytes(9)
    ehdr += struct.pack("<HHIQQQIHHHHHH", 2, 62, 1, 0x400078, 64, 0, 0, 64, 56, 1, 0, 0, 0)
    size = 64 + 56 + len(code)
    phdr = struct.pack("<IIQQQQQQ", 1, 5, 0, 0x400000, 0x400000, size, size, 0x1000)
    write("garbage", ehdr + phdr + code)

    write("noexec", data, 0o644)
    fifo = os.path.join(out, "fifo")
    if os.path.lexists(fifo):
        os.remove(fifo)
    os.mkfifo(fifo)


if __name__ == "__main__":
    main()
