// code_rand.h - what the tests that generate x86-64 code share
// (test_blocks.cc, test_lazy_flags.cc): xorshift64 values, registers that
// are neither RSP nor RBX (the stack and the data pointer), immediates,
// and the comparison of the data region two machines wrote.
#ifndef ENTRYSIM_TEST_CODE_RAND_H
#define ENTRYSIM_TEST_CODE_RAND_H

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "es_shim.h"
#include "mem.h"

struct CodeRand {
    uint64_t s;
    uint64_t next()
    {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        return s;
    }
    unsigned reg() { return (unsigned[]){0, 1, 2, 6, 7}[next() % 5]; } // never rsp, rbx
    // n little-endian bytes of a random value
    void imm(std::vector<uint8_t> &c, int n)
    {
        uint64_t v = next();
        for (int i = 0; i < n; i++)
            c.push_back((uint8_t)(v >> (8 * i)));
    }
};

// The first 128 bytes of EST_DATA, where the generated code loads and
// stores, are the same in both machines.
inline void ExpectSameData(es_machine *a, es_machine *b)
{
    uint64_t da[16], db[16];
    ASSERT_EQ(es_read(a, EST_DATA, da, sizeof da), 0);
    ASSERT_EQ(es_read(b, EST_DATA, db, sizeof db), 0);
    EXPECT_EQ(memcmp(da, db, sizeof da), 0);
}

#endif
