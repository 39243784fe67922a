// est_case.h - table-driven instruction tests for GoogleTest: each case is
// the instruction bytes (with their disassembly), the initial registers,
// flags and data memory, and the expected registers, flags, memory or
// exception.  Every case runs on a fresh machine from es_shim.h.
//
//   static const EstCase kCases[] = {
//       // 48 01 d8    add rax, rbx
//       {"add rax, rbx", "48 01 d8", ES_MODE_64, {{ES_RAX, 1}, {ES_RBX, 2}}, 0, {},
//        {{ES_RAX, 3}}, 0, {}},
//   };
//   EST_CASE_SUITE(Add, kCases)
//
// Registers not listed in `out` must keep their initial value; all six
// arithmetic flags are compared, the other RFLAGS bits must not change.  A
// case with `fault` >= 0 expects that exception with nothing changed (faults
// are precise) and RIP still at the instruction.
//
// The expected values in the tables are checked by running the same bytes
// with the same inputs natively on the AMD Zen host: tests/oracle builds
// es_oracle_<name> (ninja es_oracle_alu; ./tests/oracle/es_oracle_alu),
// which includes a test file with EST_NATIVE_CHECK defined, turning each
// EST_CASE_SUITE into a call to est_native_register().
#ifndef ENTRYSIM_EST_CASE_H
#define ENTRYSIM_EST_CASE_H

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "case_spec.h"
#include "machine.h"

struct EstReg {
    int r;      // enum es_gpr
    uint64_t v; // full 64-bit value
};

struct EstMem {
    uint32_t off; // at EST_DATA + off
    uint8_t size; // 1, 2, 4 or 8 bytes
    uint64_t v;
};

struct EstCase {
    const char *dis;             // disassembly, for messages
    const char *hex;             // instruction bytes, e.g. "48 01 d8"
    int mode;                    // ES_MODE_64 or ES_MODE_32
    std::vector<EstReg> in;      // initial registers (others 0, RSP the shim's)
    uint32_t fl_in;              // initial arithmetic flags (IF and bit 1 are added)
    std::vector<EstMem> mem_in;  // initial data memory (the rest is zero)
    std::vector<EstReg> out;     // registers that change, with their new value
    uint32_t fl_out;             // the six arithmetic flags afterwards
    std::vector<EstMem> mem_out; // memory afterwards
    int fault = -1;              // expected exception vector, -1 for none
    const char *native = nullptr; // 32-bit cases: 64-bit bytes with the same
                                  // meaning, for the host check (none: unchecked)
    int vendor = -1;              // m->vendor for the case (EST_INTEL / EST_AMD), -1: default
};

enum { EST_INTEL = 0, EST_AMD = 1 };

// Flag shorthands for the tables.
enum : uint32_t {
    F_C = ES_CF,
    F_P = ES_PF,
    F_A = ES_AF,
    F_Z = ES_ZF,
    F_S = ES_SF,
    F_O = ES_OF,
};

static inline std::vector<uint8_t> est_hex(const char *s)
{
    std::vector<uint8_t> b;
    while (*s) {
        if (*s == ' ') {
            s++;
            continue;
        }
        auto nib = [](char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; };
        b.push_back((uint8_t)(nib(s[0]) << 4 | nib(s[1])));
        s += 2;
    }
    return b;
}

#ifdef EST_NATIVE_CHECK
int est_native_register(const char *suite, const EstCase *cases, size_t n);
#define EST_CASE_SUITE(Name, table)                                                                \
    static int Name##_registered = est_native_register(#Name, table, sizeof table / sizeof table[0]);
#else
#include <gtest/gtest.h>

#include "es_shim.h"
#include "mem.h"

static inline void est_check_case(const EstCase &c)
{
    SCOPED_TRACE(std::string(c.dis) + "   [" + c.hex + "]");
    std::vector<uint8_t> code = est_hex(c.hex);
    es_machine *m = est_new(c.mode);
    ASSERT_NE(m, nullptr);
    if (c.vendor >= 0)
        m->vendor = (uint8_t)c.vendor;
    ASSERT_EQ(est_code(m, code.data(), code.size()), 0);
    for (const EstReg &r : c.in)
        m->gpr[r.r] = r.v;
    uint64_t fl0 = 0x202 | c.fl_in;
    m->rflags = fl0;
    for (const EstMem &w : c.mem_in)
        ASSERT_EQ(es_write(m, EST_DATA + w.off, &w.v, w.size), 0);
    uint64_t regs[16];
    memcpy(regs, m->gpr, sizeof regs);

    int rc = est_run(m, code.size(), 16);

    if (c.fault >= 0) {
        ASSERT_EQ(rc, ES_STOP_FAULT) << "expected an exception";
        EXPECT_EQ(m->fault.vector, c.fault) << m->message;
        EXPECT_EQ(m->rip, EST_CODE);
        EXPECT_EQ(m->rflags, fl0);
    } else {
        ASSERT_EQ(rc, 0) << m->message;
        for (const EstReg &r : c.out)
            regs[r.r] = r.v;
        EXPECT_EQ(m->rflags & ES_ARITH_FLAGS, c.fl_out)
            << "flags 0x" << std::hex << (m->rflags & ES_ARITH_FLAGS) << ", expected 0x"
            << c.fl_out;
        EXPECT_EQ(m->rflags & ~(uint64_t)ES_ARITH_FLAGS, fl0 & ~(uint64_t)ES_ARITH_FLAGS);
    }
    for (int i = 0; i < 16; i++)
        EXPECT_EQ(m->gpr[i], regs[i]) << kCaseGprNames[i] << " = 0x" << std::hex << m->gpr[i]
                                      << ", expected 0x" << regs[i];
    // a fault changes no memory: check the initial contents are still there
    for (const EstMem &w : c.fault >= 0 ? c.mem_in : c.mem_out) {
        uint64_t v = 0;
        ASSERT_EQ(es_read(m, EST_DATA + w.off, &v, w.size), 0);
        EXPECT_EQ(v, w.v) << "memory at EST_DATA+0x" << std::hex << w.off;
    }
    es_machine_free(m);
}

static inline std::string est_case_name(const ::testing::TestParamInfo<EstCase> &info)
{
    std::string s = std::to_string(info.index) + "_";
    for (const char *p = info.param.dis; *p; p++)
        s += isalnum((unsigned char)*p) ? *p : '_';
    return s;
}

#define EST_CASE_SUITE(Name, table)                                                                \
    class Name : public ::testing::TestWithParam<EstCase> {};                                      \
    TEST_P(Name, Runs) { est_check_case(GetParam()); }                                             \
    INSTANTIATE_TEST_SUITE_P(Cases, Name, ::testing::ValuesIn(table), est_case_name);
#endif

#endif
