"""x86.py - just enough x86 machine code for the campaign: minimal ELF
containers (x86-64, i386, x32), register set-up and exit sequences, and a
generator of random instruction streams that the decoder mostly accepts
(so runs get past the first byte), with prefixes, ModRM/SIB forms,
RIP-relative operands into the code itself (self-modifying code), system
and privileged instructions, VEX/EVEX and x87/SSE forms."""
import struct

VA = 0x400000            # code (read/write/execute: code may rewrite itself)
DATA = 0x600000          # data: strings, then zeroed memory
DATA_SIZE = 0x10000

EXIT = {
    64: bytes.fromhex('b83c00000031ff0f05'),          # exit(0)
    32: bytes.fromhex('b80100000031dbcd80'),          # int $0x80 exit(0)
    'x32': bytes.fromhex('b83c00004031ff0f05'),       # exit | __X32_SYSCALL_BIT
}


def elf(code, data=b'', mode=64, bss=DATA_SIZE, entry_off=0):
    """A static executable: code at VA (RWX), data at DATA (RW, data then
    zeroes up to bss bytes).  mode 64, 32 (i386) or 'x32'."""
    c32 = mode != 64
    machine = 3 if mode == 32 else 62
    ehsz, phsz = (52, 32) if c32 else (64, 56)
    hdr = ehsz + 2 * phsz
    doff = (hdr + len(code) + 0xfff) & ~0xfff
    ident = b'\x7fELF' + bytes([1 if c32 else 2, 1, 1]) + bytes(9)
    if c32:
        eh = ident + struct.pack('<HHIIIIIHHHHHH', 2, machine, 1, VA + hdr + entry_off, ehsz,
                                 0, 0, ehsz, phsz, 2, 0, 0, 0)
        ph = struct.pack('<IIIIIIII', 1, 0, VA, VA, hdr + len(code), hdr + len(code), 7, 0x1000)
        ph += struct.pack('<IIIIIIII', 1, doff, DATA, DATA, len(data), max(bss, len(data)), 6,
                          0x1000)
    else:
        eh = ident + struct.pack('<HHIQQQIHHHHHH', 2, machine, 1, VA + hdr + entry_off, ehsz,
                                 0, 0, ehsz, phsz, 2, 0, 0, 0)
        ph = struct.pack('<IIQQQQQQ', 1, 7, 0, VA, VA, hdr + len(code), hdr + len(code), 0x1000)
        ph += struct.pack('<IIQQQQQQ', 1, 6, doff, DATA, DATA, len(data), max(bss, len(data)),
                          0x1000)
    body = eh + ph + code
    return body + bytes(doff - len(body)) + data


def code_offset(mode):
    """File offset (= offset from VA) where elf() puts the code."""
    return 52 + 64 if mode != 64 else 64 + 112


def mov_imm(reg, value, bits=64):
    """mov reg, imm (64-bit: movabs; 32-bit: mov r32, imm32)."""
    if bits == 64:
        return bytes([0x48 | (reg >> 3), 0xb8 + (reg & 7)]) + struct.pack('<Q', value & (2**64 - 1))
    return bytes([0xb8 + (reg & 7)]) + struct.pack('<I', value & 0xffffffff)


def set_regs(rng, bits, pointer_bias=0.8):
    """Every general register except the stack pointer: mostly a pointer into
    the data area, so memory operands reach mapped memory."""
    out = b''
    for r in range(16 if bits == 64 else 8):
        if r == 4:
            continue
        if rng.random() < pointer_bias:
            v = DATA + (rng.randrange(0, DATA_SIZE - 0x100) & ~7)
        else:
            v = rng.choice([0, 1, 0xffffffff, rng.getrandbits(64), rng.getrandbits(8)])
        out += mov_imm(r, v, bits)
    return out


PREFIXES = [0x66, 0x67, 0xf2, 0xf3, 0xf0, 0x2e, 0x36, 0x3e, 0x26, 0x64, 0x65]
ONE = [0x90, 0x98, 0x99, 0x9c, 0x9d, 0x9e, 0x9f, 0xc3, 0xc9, 0xcc, 0xf4, 0xf5, 0xf8, 0xf9,
       0xfa, 0xfb, 0xfc, 0xfd, 0xd7, 0xcf, 0xf1, 0xce, 0x27, 0x2f, 0x37, 0x3f, 0x60, 0x61, 0x06,
       0x07, 0x0e, 0x16, 0x17, 0x1e, 0x1f, 0xec, 0xed, 0xee, 0xef, 0x6c, 0x6d, 0x6e, 0x6f, 0xcb,
       0xca] + list(range(0x50, 0x60)) + list(range(0xa4, 0xb0))
IMM8 = [0x04, 0x0c, 0x14, 0x1c, 0x24, 0x2c, 0x34, 0x3c, 0xa8, 0x6a, 0xcd, 0xd4, 0xd5, 0xe4,
        0xe5, 0xe6, 0xe7] + list(range(0xb0, 0xb8))
REL8 = list(range(0x70, 0x80)) + [0xeb, 0xe0, 0xe1, 0xe2, 0xe3]
IMM32 = [0x05, 0x0d, 0x15, 0x1d, 0x25, 0x2d, 0x35, 0x3d, 0xa9, 0x68] + list(range(0xb8, 0xc0))
MODRM = ([b + i for b in range(0, 0x40, 8) for i in range(4)] +
         [0x62, 0x63, 0x8c, 0x8e, 0x8f, 0xf6, 0xf7, 0xfe, 0xff, 0xc4, 0xc5] +
         list(range(0x84, 0x8e)) + list(range(0xd0, 0xd4)) + list(range(0xd8, 0xe0)))
MODRM_I8 = [0x80, 0x82, 0x83, 0xc0, 0xc1, 0xc6, 0x6b]
MODRM_I32 = [0x81, 0xc7, 0x69]
OF_NOMODRM = [0x05, 0x06, 0x07, 0x08, 0x09, 0x0b, 0x0e, 0x30, 0x31, 0x32, 0x33, 0x34, 0x35,
              0x37, 0x77, 0xa0, 0xa1, 0xa2, 0xa8, 0xa9, 0xaa] + list(range(0xc8, 0xd0))
OF_I8 = [0x70, 0x71, 0x72, 0x73, 0xa4, 0xac, 0xba, 0xc2, 0xc4, 0xc5, 0xc6]
SYSTEM = [bytes.fromhex(h) for h in (
    '0f01f8', '0f01f9', '0f01d0', '0f01d1', '0f01ca', '0f01cb', '0f01ee', '0f01ef', '0f01c8',
    '0f01c9', '0f0110', '0f0118', '0f0100', '0f0108', '0f0138', '0f00d8', '0f00c0', '0f00c8',
    '0f22d8', '0f20d8', '0f22e0', '0f21c0', '0f23c0', 'f30fae10', 'f30fae18', 'f30fae00',
    'f30fae08', '0fae00', '0fae08', '0fae10', '0fae18', '0fae20', '0fae28', '0faee8',
    '0faef0', '0faef8', '0fc7f0', '0fc7f8', 'f30fc7f8', '48cf', '480f07', '0f07', '0f35',
    '0f34', '0f05', 'cd80', 'cc', 'f1', '0fff00', '0fb900', '0f0d00', '0f1800', '0f1f00')]


def _modrm_tail(rng, bits):
    mod = rng.choice([0, 0, 1, 2, 3, 3, 3])
    rm = rng.randrange(8)
    out = bytes([mod << 6 | rng.randrange(8) << 3 | rm])
    if mod != 3 and rm == 4:
        out += bytes([rng.randrange(256)])
    if mod == 0 and rm == 5:
        # 64-bit: RIP-relative, kept near the code; 32-bit: an absolute address
        disp = rng.randrange(-0x200, 0x200) if bits == 64 else DATA + rng.randrange(0x1000)
        out += struct.pack('<i', disp if bits == 64 else disp - 2**32 * (disp >= 2**31))
    elif mod == 1:
        out += bytes([rng.randrange(256)])
    elif mod == 2:
        out += struct.pack('<i', rng.randrange(-0x1000, 0x1000))
    return out


def insn(rng, bits):
    """One random instruction (not always a valid one)."""
    pre = b''
    while rng.random() < 0.25:
        pre += bytes([rng.choice(PREFIXES)])
    if bits == 64 and rng.random() < 0.35:
        pre += bytes([0x40 | rng.randrange(16)])
    k = rng.random()
    r8 = lambda: bytes([rng.randrange(256)])
    if k < 0.08:
        return pre + bytes([rng.choice(ONE)])
    if k < 0.14:
        return pre + bytes([rng.choice(IMM8)]) + r8()
    if k < 0.18:
        # mostly forward: backward branches make loops (which --timeout ends)
        d = rng.randrange(0, 24) if rng.random() < 0.9 else rng.randrange(-40, 0) & 0xff
        return pre + bytes([rng.choice(REL8), d])
    if k < 0.22:
        return pre + bytes([rng.choice(IMM32)]) + rng.getrandbits(32).to_bytes(4, 'little')
    if k < 0.52:
        return pre + bytes([rng.choice(MODRM)]) + _modrm_tail(rng, bits)
    if k < 0.60:
        return pre + bytes([rng.choice(MODRM_I8)]) + _modrm_tail(rng, bits) + r8()
    if k < 0.64:
        return (pre + bytes([rng.choice(MODRM_I32)]) + _modrm_tail(rng, bits) +
                rng.getrandbits(32).to_bytes(4, 'little'))
    if k < 0.80:
        op = rng.randrange(256)
        if op in OF_NOMODRM:
            return pre + bytes([0x0f, op])
        if 0x80 <= op < 0x90:
            return pre + bytes([0x0f, op]) + struct.pack('<i', rng.randrange(0, 40))
        tail = _modrm_tail(rng, bits) + (r8() if op in OF_I8 else b'')
        return pre + bytes([0x0f, op]) + tail
    if k < 0.85:
        esc = rng.choice([0x38, 0x3a])
        return (pre + bytes([0x0f, esc, rng.randrange(256)]) + _modrm_tail(rng, bits) +
                (r8() if esc == 0x3a else b''))
    if k < 0.90:
        vex = rng.choice([b'\xc5' + r8(), b'\xc4' + r8() + r8(), b'\x62' + r8() + r8() + r8()])
        return pre + vex + r8() + _modrm_tail(rng, bits) + (r8() if rng.random() < 0.3 else b'')
    if k < 0.95:
        return pre + rng.choice(SYSTEM)
    # a system call with a random number (kept small: mostly real ones)
    nr = rng.randrange(0, 460) if rng.random() < 0.9 else rng.getrandbits(32)
    if bits == 64:
        return mov_imm(0, nr, 64) + b'\x0f\x05'
    return mov_imm(0, nr, 32) + rng.choice([b'\xcd\x80', b'\x0f\x34', b'\x0f\x05'])


def soup(rng, bits, n):
    return b''.join(insn(rng, bits) for _ in range(n))


def smc(rng, n):
    """Self-modifying code: stores through RIP-relative operands into the
    bytes just ahead (decoded soon after, maybe already decoded by then),
    between soup instructions; sometimes across a page boundary."""
    out = b''
    for _ in range(n):
        d = rng.randrange(0, 200) if rng.random() < 0.9 else rng.randrange(-200, 0)
        b = rng.choice([0x90, 0xcc, 0xc3, 0x0f, 0x05, 0xeb, 0xfe, 0x48, 0x66, rng.randrange(256)])
        out += rng.choice([b'\xc6\x05' + struct.pack('<i', d) + bytes([b]),
                           b'\xc7\x05' + struct.pack('<i', d) + rng.randbytes(4),
                           b'\x48\x8d\x05' + struct.pack('<i', d) + b'\x48\x89\x18'])
        out += insn(rng, 64)
    return out


def random_program(rng):
    """A random-code program: (elf bytes, mode, what)."""
    mode = rng.choices([64, 32, 'x32'], [6, 3, 1])[0]
    bits = 64 if mode != 32 else 32
    k = rng.random()
    if k < 0.25:
        body, what = rng.randbytes(rng.randrange(1, 512)), 'random bytes'
    elif k < 0.8 or bits == 32:
        body, what = set_regs(rng, bits) + soup(rng, bits, rng.randrange(4, 200)), 'instruction soup'
    elif k < 0.9:
        pad = b'\x90' * (rng.randrange(0, 4096) if rng.random() < 0.3 else 0)
        body, what = set_regs(rng, bits) + pad + smc(rng, rng.randrange(2, 40)), 'self-modifying code'
    else:
        # straight to the soup with registers as the loader left them
        body, what = soup(rng, bits, rng.randrange(4, 60)), 'soup, loader registers'
    data = rng.randbytes(rng.randrange(0, 256))
    return elf(body + EXIT[mode], data, mode), mode, what
