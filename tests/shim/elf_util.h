// elf_util.h - in-memory ELF images for the tests that load programs
// (tests/test_loader.cc, tests/test_vm_fork.cc): headers, program headers
// and a payload whose bytes can be checked after loading; a fixture with a
// machine to load them into.
#ifndef ENTRYSIM_TEST_ELF_UTIL_H
#define ENTRYSIM_TEST_ELF_UTIL_H

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "loader.h"
#include "machine.h"
#include "mem.h"

namespace {

struct Seg {
    uint32_t type, flags;
    uint64_t offset, vaddr, filesz, memsz;
};

enum : uint32_t { PT_LOAD = 1, PT_INTERP = 3, PT_GNU_STACK = 0x6474e551 };

inline void put(std::vector<uint8_t> &b, size_t at, uint64_t v, int n)
{
    if (b.size() < at + n)
        b.resize(at + n);
    for (int i = 0; i < n; i++)
        b[at + i] = (uint8_t)(v >> (8 * i));
}

// An ELF image: header, program headers right after it, then `size` bytes
// of payload where byte i holds (i * 7 + 3) & 0xff (so contents can be
// checked after loading).
inline std::vector<uint8_t> elf(bool is64, unsigned machine, unsigned type, uint64_t entry,
                         const std::vector<Seg> &segs, size_t size)
{
    std::vector<uint8_t> b(size);
    for (size_t i = 0; i < size; i++)
        b[i] = (uint8_t)(i * 7 + 3);
    const unsigned eh = is64 ? 64 : 52, pe = is64 ? 56 : 32;
    std::fill(b.begin(), b.begin() + std::min<size_t>(size, eh + pe * segs.size()), 0);
    memcpy(b.data(), "\177ELF", 4);
    b[4] = is64 ? 2 : 1;
    b[5] = 1;
    b[6] = 1;
    put(b, 16, type, 2);
    put(b, 18, machine, 2);
    put(b, 20, 1, 4);
    if (is64) {
        put(b, 24, entry, 8);
        put(b, 32, eh, 8);
        put(b, 52, eh, 2);
        put(b, 54, pe, 2);
        put(b, 56, segs.size(), 2);
    } else {
        put(b, 24, entry, 4);
        put(b, 28, eh, 4);
        put(b, 40, eh, 2);
        put(b, 42, pe, 2);
        put(b, 44, segs.size(), 2);
    }
    for (size_t i = 0; i < segs.size(); i++) {
        size_t p = eh + i * pe;
        const Seg &s = segs[i];
        put(b, p, s.type, 4);
        if (is64) {
            put(b, p + 4, s.flags, 4);
            put(b, p + 8, s.offset, 8);
            put(b, p + 16, s.vaddr, 8);
            put(b, p + 24, s.vaddr, 8);
            put(b, p + 32, s.filesz, 8);
            put(b, p + 40, s.memsz, 8);
            put(b, p + 48, 0x1000, 8);
        } else {
            put(b, p + 4, s.offset, 4);
            put(b, p + 8, s.vaddr, 4);
            put(b, p + 12, s.vaddr, 4);
            put(b, p + 16, s.filesz, 4);
            put(b, p + 20, s.memsz, 4);
            put(b, p + 24, s.flags, 4);
            put(b, p + 28, 0x1000, 4);
        }
    }
    return b;
}

// The usual static executable: text R+X from offset 0 at 0x400000 (so it
// holds the headers), data R+W at 0x402000 with a bss tail, non-executable
// stack.
inline std::vector<uint8_t> exec64(unsigned type = 2, uint64_t base = 0x400000)
{
    return elf(true, 62, type, base + 0x1100,
               {{PT_LOAD, 5, 0, base, 0x1800, 0x1800},
                {PT_LOAD, 6, 0x2010, base + 0x2010, 0x100, 0x3000},
                {PT_GNU_STACK, 6, 0, 0, 0, 0}},
               0x2110);
}

// A fresh 64 MiB machine to load programs into, and guest-memory peeks.
struct LoaderBase : ::testing::Test {
    es_machine *m = nullptr;
    es_image img{};
    void SetUp() override
    {
        m = es_machine_new(64ull << 20);
        ASSERT_NE(m, nullptr);
    }
    void TearDown() override { es_machine_free(m); }
    int load(const std::vector<uint8_t> &b) { return es_load_elf_mem(m, b.data(), b.size(), &img); }
    uint64_t peek(uint64_t va, int n)
    {
        uint64_t v = 0;
        EXPECT_EQ(es_copy_from_guest(m, &v, va, (size_t)n), 0) << std::hex << va;
        return v;
    }
    std::string str(uint64_t va)
    {
        std::string s;
        char c;
        while (es_copy_from_guest(m, &c, va++, 1) == 0 && c && s.size() < 4096)
            s += c;
        return s;
    }
};

} // namespace

#endif
