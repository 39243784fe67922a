"""elfmut.py - mutations of real static ELF programs: header and program
header fields set to boundary values (field-aware, so the loader's checks
are reached one at a time), segment types swapped (PT_INTERP, PT_TLS,
PT_DYNAMIC...), section headers broken (the debugger reads .symtab),
overlapping or duplicated segments, bit flips, truncation, appended junk."""
import struct

INTERESTING = [0, 1, 2, 7, 8, 0x3f, 0x40, 0x7f, 0x80, 0xff, 0x100, 0xfff, 0x1000, 0x1001,
               0x7fff, 0x8000, 0xffff, 0x10000, 0x7fffffff, 0x80000000, 0xffffffff,
               0x100000000, 0x7fffffffffff, 0x800000000000, 0x7ffffffff000,
               0xffff800000000000, 0xffffffff81000000, 0xffffffffff600000,
               0x7fffffffffffffff, 0x8000000000000000, 0xfffffffffffff000, 0xffffffffffffffff]
PTYPES = [0, 1, 2, 3, 4, 5, 6, 7, 8, 0x6474e550, 0x6474e551, 0x6474e552, 0x6474e553,
          0x60000000, 0x6fffffff, 0x70000000, 0x7fffffff, 0xffffffff]

# (name, offset, size) of ELF header fields after e_ident, per class
EHDR = {
    64: [('type', 16, 2), ('machine', 18, 2), ('version', 20, 4), ('entry', 24, 8),
         ('phoff', 32, 8), ('shoff', 40, 8), ('flags', 48, 4), ('ehsize', 52, 2),
         ('phentsize', 54, 2), ('phnum', 56, 2), ('shentsize', 58, 2), ('shnum', 60, 2),
         ('shstrndx', 62, 2)],
    32: [('type', 16, 2), ('machine', 18, 2), ('version', 20, 4), ('entry', 24, 4),
         ('phoff', 28, 4), ('shoff', 32, 4), ('flags', 36, 4), ('ehsize', 40, 2),
         ('phentsize', 42, 2), ('phnum', 44, 2), ('shentsize', 46, 2), ('shnum', 48, 2),
         ('shstrndx', 50, 2)],
}
PHDR = {
    64: [('type', 0, 4), ('flags', 4, 4), ('offset', 8, 8), ('vaddr', 16, 8), ('paddr', 24, 8),
         ('filesz', 32, 8), ('memsz', 40, 8), ('align', 48, 8)],
    32: [('type', 0, 4), ('offset', 4, 4), ('vaddr', 8, 4), ('paddr', 12, 4), ('filesz', 16, 4),
         ('memsz', 20, 4), ('flags', 24, 4), ('align', 28, 4)],
}
SHDR = {
    64: [('name', 0, 4), ('type', 4, 4), ('flags', 8, 8), ('addr', 16, 8), ('offset', 24, 8),
         ('size', 32, 8), ('link', 40, 4), ('info', 44, 4), ('addralign', 48, 8),
         ('entsize', 56, 8)],
    32: [('name', 0, 4), ('type', 4, 4), ('flags', 8, 4), ('addr', 12, 4), ('offset', 16, 4),
         ('size', 20, 4), ('link', 24, 4), ('info', 28, 4), ('addralign', 32, 4),
         ('entsize', 36, 4)],
}
FMT = {1: '<B', 2: '<H', 4: '<I', 8: '<Q'}


class Elf:
    def __init__(self, data):
        self.b = bytearray(data)
        self.cls = 32 if len(data) > 4 and data[4] == 1 else 64

    def get(self, off, size):
        if off + size > len(self.b):
            return 0
        return struct.unpack_from(FMT[size], self.b, off)[0]

    def put(self, off, size, v):
        if off + size <= len(self.b):
            struct.pack_into(FMT[size], self.b, off, v & ((1 << (8 * size)) - 1))

    def field(self, table, name):
        for n, o, s in table[self.cls]:
            if n == name:
                return o, s
        raise KeyError(name)

    def ehdr(self, name):
        return self.get(*self.field(EHDR, name))

    def table_entry(self, kind, i):
        """File offset of program header (kind 'ph') or section header i."""
        if kind == 'ph':
            return self.ehdr('phoff') + i * (56 if self.cls == 64 else 32)
        return self.ehdr('shoff') + i * (64 if self.cls == 64 else 40)


def interesting(rng, old, size, filelen):
    choices = INTERESTING + [old + 1, old - 1, old + 0x1000, old * 2, old ^ 0x80000000,
                             filelen, filelen + 1, filelen - 1, old + filelen,
                             old | 0xfff, old & ~0xfff, old + 0x8000000]
    if rng.random() < 0.15:
        return rng.getrandbits(8 * size)
    return rng.choice(choices) & ((1 << (8 * size)) - 1)


def mut_ehdr(rng, e):
    name, off, size = rng.choice(EHDR[e.cls])
    e.put(off, size, interesting(rng, e.get(off, size), size, len(e.b)))
    return 'ehdr.' + name


def mut_ident(rng, e):
    i = rng.randrange(4, 16)
    e.b[i] = rng.choice([0, 1, 2, 3, 0xff, rng.randrange(256)])
    return f'e_ident[{i}]'


def mut_phdr(rng, e):
    n = max(1, e.ehdr('phnum'))
    i = rng.randrange(min(n, 16))
    name, off, size = rng.choice(PHDR[e.cls])
    base = e.table_entry('ph', i)
    old = e.get(base + off, size)
    v = rng.choice(PTYPES) if name == 'type' and rng.random() < 0.7 else \
        interesting(rng, old, size, len(e.b))
    e.put(base + off, size, v)
    return f'phdr[{i}].{name}'


def mut_shdr(rng, e):
    n = e.ehdr('shnum')
    if not n:
        return mut_ehdr(rng, e)
    i = rng.randrange(min(n, 64))
    name, off, size = rng.choice(SHDR[e.cls])
    base = e.table_entry('sh', i)
    e.put(base + off, size, interesting(rng, e.get(base + off, size), size, len(e.b)))
    return f'shdr[{i}].{name}'


def mut_dup_phdr(rng, e):
    n = e.ehdr('phnum')
    if n < 2:
        return mut_phdr(rng, e)
    a, b = rng.sample(range(min(n, 16)), 2)
    sz = 56 if e.cls == 64 else 32
    src, dst = e.table_entry('ph', a), e.table_entry('ph', b)
    if max(src, dst) + sz <= len(e.b):
        e.b[dst:dst + sz] = e.b[src:src + sz]
    return f'phdr[{b}] = phdr[{a}]'


def mut_interp(rng, e):
    """A segment becomes PT_INTERP naming some string (maybe unterminated)."""
    n = max(1, e.ehdr('phnum'))
    i = rng.randrange(min(n, 16))
    base = e.table_entry('ph', i)
    fo = {64: (8, 8, 32), 32: (4, 4, 16)}[e.cls]
    e.put(base, 4, 3)
    e.put(base + fo[0], fo[1], rng.choice([0, 1, len(e.b) - 3, rng.randrange(len(e.b))]))
    e.put(base + fo[2], fo[1], rng.choice([0, 1, 16, 4096, 0xffffffff]))
    return f'phdr[{i}] -> PT_INTERP'


def mut_flip(rng, e):
    span = min(len(e.b), rng.choice([256, 4096, len(e.b)]))
    k = rng.randrange(1, 9)
    for _ in range(k):
        i = rng.randrange(span)
        e.b[i] ^= 1 << rng.randrange(8)
    return f'{k} bit flips in the first {span} bytes'


def mut_bytes(rng, e):
    i = rng.randrange(min(len(e.b), 4096))
    n = rng.randrange(1, 16)
    e.b[i:i + n] = rng.randbytes(n)
    return f'{n} random bytes at {i}'


def mut_truncate(rng, e):
    n = rng.choice([rng.randrange(0, 128), rng.randrange(len(e.b))])
    del e.b[n:]
    return f'truncated to {n}'


def mut_append(rng, e):
    n = rng.randrange(1, 8192)
    e.b += rng.randbytes(n)
    return f'{n} bytes appended'


MUTATORS = [(mut_ehdr, 4), (mut_ident, 1), (mut_phdr, 8), (mut_shdr, 3), (mut_dup_phdr, 1),
            (mut_interp, 1), (mut_flip, 3), (mut_bytes, 2), (mut_truncate, 1), (mut_append, 1)]


def mutate(rng, data):
    """-> (bytes, description)"""
    e = Elf(data)
    fns, weights = zip(*MUTATORS)
    done = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        if len(e.b) < 64:
            break
        done.append(rng.choices(fns, weights)[0](rng, e))
    return bytes(e.b), ', '.join(done)
