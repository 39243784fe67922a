"""kprobe.py - kernel-entry probe programs: each makes a handful of kernel
entries with hostile register state, through every way user code has into
the guest kernel: SYSCALL (64-bit, x32 numbers, out-of-range numbers, upper
bits set), INT 0x80 from 64-bit and from compatibility mode, SYSENTER,
SYSCALL from compatibility mode, calls into the vsyscall page at good and bad
offsets, software interrupts to every vector, privileged instructions,
IRETQ/SYSRET/SWAPGS at CPL 3, far returns to other code segments, with
TF/AC/NT/DF set in RFLAGS, odd data segment selectors and a stack pointer
that is NULL, a kernel address or non-canonical.  Pointer arguments point at
paths of the sandbox (the canary outside the root among them), so a
confinement hole reachable from raw syscalls shows up as an escape."""
import struct

from .x86 import DATA, EXIT, elf, mov_imm

KERNEL_ADDRS = [0xffffffff81000000, 0xffffffff81000080, 0xffff888000000000,
                0xfffffe0000000000, 0xffffffffff600000, 0xffffc90000000000]
NONCANON = [0x0000800000000000, 0x8000000000000000, 0xdead000000000000, 0x00007ffffffff000 + 0x1000]
NUMS = [0, 1, 2, 3, 4, 5, 7, 8, 64, 0x1000, 0x7fffffff, 0x80000000, 0xffffffff, 0x100000000,
        0xffffffffffffffff, 0xfffffffffffff000, 0x7fffffffffffffff]
FLAG_BITS = [0x100, 0x400, 0x4000, 0x40000, 0x3000, 0x10000, 0x200000, 0x800, 0x1, 0x80000,
             0x100000]
SELECTORS = [0, 3, 0x10, 0x18, 0x23, 0x2b, 0x33, 0x3b, 0x53, 0x63, 0x7b, 0xffff, 0x1234]


def data_area(paths):
    """The data segment: NUL-terminated paths at 64-byte slots, then zeroes."""
    return b''.join(p.encode()[:63].ljust(64, b'\0') for p in paths)


def pick_value(rng, strings):
    k = rng.random()
    if k < 0.3:
        return rng.choice(NUMS)
    if k < 0.55:
        return DATA + 64 * rng.randrange(strings)        # a path
    if k < 0.7:
        return DATA + rng.randrange(0, 0x10000)           # mapped memory
    if k < 0.8:
        return rng.choice(KERNEL_ADDRS) + rng.randrange(0, 0x100)
    if k < 0.88:
        return rng.choice(NONCANON)
    if k < 0.94:
        return rng.randrange(3, 8)                        # likely fds
    return rng.getrandbits(64)


def syscall_nr(rng, x32=False):
    k = rng.random()
    if k < 0.7:
        n = rng.randrange(0, 335)
    elif k < 0.8:
        n = rng.randrange(512, 548)
    elif k < 0.9:
        n = rng.choice([335, 400, 450, 511, 548, 0x3fffffff, 0x7fffffff, 0xffffffff,
                        0xffffffffffffffff, 0x100000000])
    else:
        n = rng.getrandbits(64)
    if x32 or rng.random() < 0.1:
        n |= 0x40000000
    if rng.random() < 0.05:
        n |= rng.choice([1 << 32, 1 << 63, 0x80000000])
    return n


MM_ADDRS = [0, 0x1000, 0x10000, 0x400000, 0x600000, 0x7ffffffde000, 0x7fffffffe000,
            0x7ffffffff000, 0x800000000000, 0xffff800000000000, 0xffffffff81000000,
            0xffffffffff600000, 0xfffffffffffff000]
MM_LENS = [0, 1, 0x1000, 0x10000, 0x200000, 1 << 40, 0x7ffffffff000, 0xfffffffffffff000]


def mm_entry(rng):
    """The address space: mmap/munmap/mprotect/mremap/brk/madvise at the
    edges (over the program's own code, the stack, the top of user space,
    the kernel half, the vsyscall page), then a touch of the address."""
    a, n = rng.choice(MM_ADDRS) + rng.choice([0, 0, 0x10, -0x1000]), rng.choice(MM_LENS)
    prot = rng.choice([0, 1, 3, 5, 7, 0x1000007, 0xffffffff])
    k = rng.randrange(6)
    nr, args = [
        (9, [a, n, prot, rng.choice([0x22, 0x32, 0x100022, 0x100032, 0x21, 0x31, 0x122, 0x20022]),
             -1, 0]),
        (11, [a, n]), (10, [a, n, prot]),
        (25, [a, n, rng.choice(MM_LENS), rng.choice([0, 1, 3, 4, 7]), rng.choice(MM_ADDRS)]),
        (12, [a]), (28, [a, n, rng.choice([4, 8, 9, 14, 100])]),
    ][k]
    out = b''
    for r, v in zip([7, 6, 2, 10, 8, 9], args):
        out += mov_imm(r, v)
    out += mov_imm(0, nr) + b'\x0f\x05'
    if rng.random() < 0.3:                           # touch it: mov rax, a; mov [rax], al
        out += mov_imm(0, a) + rng.choice([b'\x88\x00', b'\x8a\x00'])
    return out


def entry64(rng, strings):
    """One kernel entry from 64-bit mode, with its register set-up."""
    out = b''
    regs = [7, 6, 2, 10, 8, 9]                       # rdi rsi rdx r10 r8 r9
    for r in regs + ([3, 1, 11, 12, 13, 14] if rng.random() < 0.3 else []):
        out += mov_imm(r, pick_value(rng, strings))
    if rng.random() < 0.15:                          # RFLAGS: push imm32; popfq
        f = 0x202
        for _ in range(rng.randrange(1, 3)):
            f |= rng.choice(FLAG_BITS)
        out += b'\x68' + struct.pack('<I', f) + b'\x9d'
    if rng.random() < 0.1:                           # mov ax, sel; mov Sreg, ax
        out += b'\x66\xb8' + struct.pack('<H', rng.choice(SELECTORS))
        out += bytes([0x8e, rng.choice([0xd8, 0xc0, 0xe0, 0xe8, 0xd0])])
    weird_sp = rng.random() < 0.1
    if weird_sp:                                     # mov rbp, rsp; mov rsp, X
        out += b'\x48\x89\xe5' + mov_imm(4, rng.choice([0] + KERNEL_ADDRS + NONCANON))
    k = rng.random()
    if k < 0.55:
        out += mov_imm(0, syscall_nr(rng)) + b'\x0f\x05'
    elif k < 0.62:
        out += mov_imm(0, syscall_nr(rng, x32=True)) + b'\x0f\x05'
    elif k < 0.72:
        out += mov_imm(0, rng.randrange(0, 390)) + b'\xcd\x80'
    elif k < 0.76:
        out += mov_imm(0, rng.randrange(0, 390)) + b'\x0f\x34'
    elif k < 0.84:                                   # call/jmp into the vsyscall page
        off = rng.choice([0, 0x400, 0x800, 0x10, 0x401, 0xc00, 0xfff, rng.randrange(0x1000)])
        out += mov_imm(7, DATA + 0x8000) + mov_imm(6, DATA + 0x8100)
        out += mov_imm(0, 0xffffffffff600000 + off) + rng.choice([b'\xff\xd0', b'\xff\xe0'])
    elif k < 0.9:
        out += bytes([0xcd, rng.randrange(256)])
    else:
        out += rng.choice([b'\x48\xcf', b'\x48\x0f\x07', b'\x0f\x07', b'\x0f\x01\xf8', b'\xf4',
                           b'\x0f\x30', b'\x0f\x32', b'\x0f\x22\xd8', b'\x0f\x00\xd8',
                           b'\x0f\x01\x10', b'\xfa', b'\xec', b'\xcc', b'\xf1', b'\x0f\x35',
                           b'\x0f\x0b', b'\x0f\x33', b'\x0f\x06', b'\x0f\x01\x38'])
    if weird_sp:
        out += b'\x48\x89\xec'                       # mov rsp, rbp
    return out


def iret_frame(rng):
    """IRETQ to a crafted frame whose RIP is the next instruction."""
    cs = rng.choice([0x33, 0x33, 0x23, 0x10, 0x2b, 0x1b, 0x3b, rng.randrange(0x10000)])
    ss = rng.choice([0x2b, 0x2b, 0x18, 0, 0x23, rng.randrange(0x10000)])
    fl = 0x202 | rng.choice([0, 0x100, 0x3000, 0x4000, 0x20000, 0x40000])
    tail = b'\x48\x89\xe0'                           # mov rax, rsp
    tail += b'\x6a' + bytes([ss & 0x7f]) if ss < 0x80 else b'\x68' + struct.pack('<I', ss)
    tail += b'\x50' + b'\x68' + struct.pack('<I', fl)
    tail += b'\x68' + struct.pack('<I', cs)
    # lea rcx, [rip+3]; push rcx; iretq  (the frame's RIP: right after iretq)
    tail += b'\x48\x8d\x0d\x03\x00\x00\x00\x51\x48\xcf'
    return tail


def to_compat(rng):
    """push cs; lea rax,[rip+3]; push rax; retfq -> the code after it runs
    in compatibility mode (cs 0x23) or faults (other selectors)."""
    cs = rng.choice([0x23, 0x23, 0x23, 0x1b, 0x2b, 0x10])
    return bytes([0x6a, cs]) + b'\x48\x8d\x05\x03\x00\x00\x00\x50\x48\xcb'


def entry32(rng, strings):
    out = b''
    for r in (3, 1, 2, 6, 7, 5):                     # ebx ecx edx esi edi ebp
        out += mov_imm(r, pick_value(rng, strings) & 0xffffffff, 32)
    nr = rng.randrange(0, 390) if rng.random() < 0.9 else rng.getrandbits(32)
    out += mov_imm(0, nr, 32)
    out += rng.choice([b'\xcd\x80'] * 6 + [b'\x0f\x34', b'\x0f\x05', bytes([0xcd, rng.randrange(256)])])
    return out


def probe_program(rng, strings):
    """-> (elf bytes, description)"""
    n = rng.randrange(3, 13)
    kind = rng.choices(['64', 'compat', 'i386'], [6, 2, 2])[0]
    code = b''
    if kind == 'i386':
        code = b''.join(entry32(rng, strings) for _ in range(n)) + EXIT[32]
        return elf(code, data_area_placeholder(strings), 32), f'i386, {n} entries'
    for _ in range(n):
        r = rng.random()
        code += iret_frame(rng) if r < 0.05 else mm_entry(rng) if r < 0.2 else entry64(rng, strings)
    if kind == 'compat':
        code += to_compat(rng) + b''.join(entry32(rng, strings) for _ in range(n)) + EXIT[32]
    else:
        code += EXIT[64]
    return elf(code, data_area_placeholder(strings), 64), f'{kind}, {n} entries'


def data_area_placeholder(strings):
    # filled in by the caller (the paths depend on the sandbox): see build()
    return bytes(64 * strings)


def build(rng, paths):
    """The probe with its data area holding `paths`."""
    blob, what = probe_program(rng, len(paths))
    area = data_area(paths)
    return blob[:len(blob) - len(area)] + area, what
