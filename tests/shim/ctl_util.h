// ctl_util.h - table-driven instruction tests for the mov, stack, branch,
// string, atomic and system suites: bytes (with their disassembly), the
// registers, flags and memory before, and what must hold after.
#ifndef ENTRYSIM_CTL_UTIL_H
#define ENTRYSIM_CTL_UTIL_H

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

#include "es_shim.h"
#include "host.h"
#include "machine.h"
#include "mem.h"
#include "mem.h"

namespace ctl {

struct Reg {
    int r;
    uint64_t v;
};
struct Mem {
    uint64_t va;
    uint64_t v;
    unsigned size;
};

struct Case {
    const char *text; // disassembly of code, for failure messages
    int mode;
    std::vector<uint8_t> code;
    std::vector<Reg> in;
    std::vector<Reg> out;
    uint64_t flags_in = 0x202;
    uint64_t flags_mask = 0; // bits of RFLAGS checked after
    uint64_t flags_out = 0;
    std::vector<Mem> mem_in = {};
    std::vector<Mem> mem_out = {};
    int fault = -1;        // expected exception vector, -1 = none
    uint32_t error = 0;    // its error code
    uint64_t rip_out = 0;  // expected RIP after (0: end of code, or the insn on a fault)
};

// A machine for one test, freed at scope exit.
struct M {
    es_machine *m;
    explicit M(int mode) : m(est_new(mode)) {}
    ~M()
    {
        if (m && m->host) // es_machine_free leaves host services to their owner
            es_host_free(m);
        es_machine_free(m);
    }
    M(const M &) = delete;
    M &operator=(const M &) = delete;
    es_machine *operator->() { return m; }
    uint64_t rd(uint64_t va, unsigned size)
    {
        uint64_t v = 0;
        EXPECT_EQ(es_read(m, va, &v, size), 0) << "reading 0x" << std::hex << va;
        return v;
    }
    void wr(uint64_t va, uint64_t v, unsigned size) { EXPECT_EQ(es_write(m, va, &v, size), 0); }
    // loads code and runs to its end; returns est_run's result
    int run(const std::vector<uint8_t> &code, uint64_t max = 100000)
    {
        // est_code writes the bytes behind the decode cache's back: retire
        // what an earlier run() cached on those pages
        for (uint64_t off = 0; off < code.size() + 15; off += 4096) {
            uint64_t *pte = es_pte(m, m->cr3, EST_CODE + off, false);
            if (pte && (*pte & ES_PTE_P))
                es_code_stale(m, (*pte & ES_PTE_ADDR) >> 12);
        }
        est_code(m, code.data(), code.size());
        return est_run(m, code.size(), max);
    }
};

inline void run_case(const Case &c, const std::function<void(es_machine *)> &setup = nullptr)
{
    SCOPED_TRACE(c.text);
    M m(c.mode);
    ASSERT_NE(m.m, nullptr);
    for (const Reg &r : c.in)
        m->gpr[r.r] = r.v;
    m->rflags = c.flags_in;
    for (const Mem &x : c.mem_in)
        m.wr(x.va, x.v, x.size);
    if (setup)
        setup(m.m);
    int rc = m.run(c.code);
    if (c.fault >= 0) {
        ASSERT_EQ(rc, ES_STOP_FAULT);
        EXPECT_EQ(m->fault.vector, c.fault);
        EXPECT_EQ(m->fault.error, c.error);
        if (c.rip_out) {
            EXPECT_EQ(m->rip, c.rip_out);
        }
    } else {
        ASSERT_EQ(rc, 0) << m->message;
        if (c.rip_out) {
            EXPECT_EQ(m->rip, c.rip_out);
        }
    }
    for (const Reg &r : c.out)
        EXPECT_EQ(m->gpr[r.r], r.v) << "gpr " << r.r;
    if (c.flags_mask) {
        EXPECT_EQ(m->rflags & c.flags_mask, c.flags_out) << std::hex << "rflags " << m->rflags;
    }
    for (const Mem &x : c.mem_out)
        EXPECT_EQ(m.rd(x.va, x.size), x.v) << std::hex << "memory at 0x" << x.va;
}

inline void run_cases(const std::vector<Case> &cs)
{
    for (const Case &c : cs)
        run_case(c);
}

} // namespace ctl

#endif
