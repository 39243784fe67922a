// x87_util.h - what the x87/FXSAVE/XSAVE test files share: running bytes
// natively and in the simulator, building data areas, reading the FPU.
// (Split from test_x87.cc; see that file for how the tests work.)
#ifndef ENTRYSIM_TESTS_X87_UTIL_H
#define ENTRYSIM_TESTS_X87_UTIL_H

#include <gtest/gtest.h>

#include <cpuid.h>
#include <sys/mman.h>

#include <cmath>
#include <random>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "es_shim.h"
#include "mem.h"
#include "x87.h"

namespace {

constexpr size_t kData = 0x1000;  // bytes of data compared
constexpr uint32_t kSave = 0xe00; // where the final FNSAVE goes

using Bytes = std::vector<uint8_t>;

struct SimOut {
    es_machine *m = nullptr;
    int rc = -1;
    Bytes data;
    ~SimOut() { es_machine_free(m); }
};

// Runs code with RBX = EST_DATA and `data` at EST_DATA.
inline void sim_run(SimOut &o, int mode, const Bytes &code, const Bytes &data,
             void (*setup)(es_machine *) = nullptr)
{
    o.m = est_new(mode);
    ASSERT_NE(o.m, nullptr);
    ASSERT_EQ(est_code(o.m, code.data(), code.size()), 0);
    o.m->gpr[ES_RBX] = EST_DATA;
    if (!data.empty()) {
        ASSERT_EQ(es_copy_to_guest(o.m, EST_DATA, data.data(), data.size()), 0);
    }
    if (setup)
        setup(o.m);
    o.rc = est_run(o.m, code.size(), 10000);
    o.data.assign(kData, 0);
    ASSERT_EQ(es_copy_from_guest(o.m, o.data.data(), EST_DATA, kData), 0);
}

// Runs code natively with RBX pointing at a copy of `data`; returns the
// data afterwards and the arithmetic flags.
inline void native_run(const Bytes &code, const Bytes &data, Bytes &out, uint64_t &flags)
{
    void *page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(page, MAP_FAILED);
    memcpy(page, code.data(), code.size());
    static_cast<uint8_t *>(page)[code.size()] = 0xc3; // ret
    alignas(64) static uint8_t buf[kData];
    memset(buf, 0, sizeof buf);
    if (!data.empty())
        memcpy(buf, data.data(), data.size());
    uint32_t mxcsr;
    const uint32_t mxcsr0 = 0x1f80; // the simulator's initial MXCSR
    uint64_t fl;
    // zero every physical register first (FNINIT keeps their contents and
    // FNSAVE shows them), and start with the simulator's arithmetic flags
    __asm__ volatile("stmxcsr %[mx]\n\t"
                     "ldmxcsr %[mx0]\n\t"
                     "fninit\n\t"
                     "fldz\n\tfldz\n\tfldz\n\tfldz\n\tfldz\n\tfldz\n\tfldz\n\tfldz\n\t"
                     "fninit\n\t"
                     "sub $128, %%rsp\n\t" // keep the call off the red zone
                     "pushq $0x202\n\t"
                     "popfq\n\t"
                     "mov %[d], %%rbx\n\t"
                     "call *%[c]\n\t"
                     "pushfq\n\t"
                     "pop %[fl]\n\t"
                     "add $128, %%rsp\n\t"
                     "fninit\n\t"
                     "ldmxcsr %[mx]"
                     : [fl] "=&r"(fl), [mx] "+m"(mxcsr)
                     : [d] "r"(buf), [c] "r"(page), [mx0] "m"(mxcsr0)
                     : "rax", "rbx", "memory", "cc", "st", "st(1)", "st(2)", "st(3)", "st(4)",
                       "st(5)", "st(6)", "st(7)");
    munmap(page, 4096);
    out.assign(buf, buf + kData);
    flags = fl & (ES_CF | ES_PF | ES_ZF | ES_SF | ES_OF | ES_AF);
}

inline bool host_is_amd()
{
    unsigned a, b, c, d;
    __cpuid(0, a, b, c, d);
    return b == 0x68747541; // "Auth"enticAMD
}

// FNSAVE [rbx+0xe00]: dd b3 00 0e 00 00
const Bytes kFnsave = {0xdd, 0xb3, 0x00, 0x0e, 0x00, 0x00};

// Offsets (from the start of an FNSAVE/FNSTENV image) that differ natively.
inline bool env_skipped(size_t off)
{
    return (off >= 12 && off < 16) || (off >= 20 && off < 26);
}

inline void vendor_like_host(es_machine *m)
{
    m->vendor = host_is_amd() ? 1 : 0;
}

// Runs `code` natively and simulated, then compares; returns "" when they
// agree, else a description.  `skip` lists more [from, to) data ranges to
// ignore (e.g. a second environment image).
inline std::string host_diff(const Bytes &code0, const Bytes &data,
                      const std::vector<std::pair<size_t, size_t>> &skip, bool flags)
{
    Bytes code = code0;
    code.insert(code.end(), kFnsave.begin(), kFnsave.end());
    Bytes native;
    uint64_t nflags = 0;
    native_run(code, data, native, nflags);
    SimOut s;
    sim_run(s, ES_MODE_64, code, data, vendor_like_host);
    if (s.rc != 0)
        return "simulator stopped: fault " + std::to_string(s.m->fault.vector) + ": " +
               s.m->message;
    std::string diffs;
    int ndiff = 0;
    for (size_t i = 0; i < kData; i++) {
        if (i >= kSave && i < kSave + 108 && env_skipped(i - kSave))
            continue;
        bool sk = false;
        for (auto &r : skip)
            sk |= i >= r.first && i < r.second;
        if (sk || s.data[i] == native[i])
            continue;
        if (ndiff++ < 24) {
            char b[64];
            snprintf(b, sizeof b, " [%#zx%s] sim %02x host %02x;", i, i >= kSave ? " fnsave" : "",
                     s.data[i], native[i]);
            diffs += b;
        }
    }
    uint64_t sflags = s.m->rflags & (ES_CF | ES_PF | ES_ZF | ES_SF | ES_OF | ES_AF);
    if (flags && sflags != nflags) {
        char b[64];
        snprintf(b, sizeof b, " flags sim %#llx host %#llx", (unsigned long long)sflags,
                 (unsigned long long)nflags);
        diffs += b;
    }
    return diffs;
}

inline void same_as_host(const Bytes &code, const Bytes &data = {},
                  std::vector<std::pair<size_t, size_t>> skip = {}, bool flags = true)
{
    std::string d = host_diff(code, data, skip, flags);
    EXPECT_EQ(d, "");
}

template <typename T> void put(Bytes &d, size_t off, T v)
{
    if (d.size() < off + sizeof v)
        d.resize(off + sizeof v);
    memcpy(&d[off], &v, sizeof v);
}

inline void put80(Bytes &d, size_t off, uint64_t mant, uint16_t se)
{
    put(d, off, mant);
    put(d, off + 8, se);
}

// Raw bits of st(i).
inline uint64_t st_mant(const es_machine *m, int i)
{
    uint64_t v;
    memcpy(&v, &m->fpu.fpr[(m->fpu.top + i) & 7], 8);
    return v;
}
inline uint16_t st_se(const es_machine *m, int i)
{
    uint16_t v;
    memcpy(&v, reinterpret_cast<const uint8_t *>(&m->fpu.fpr[(m->fpu.top + i) & 7]) + 8, 2);
    return v;
}
inline uint16_t fsw(const es_machine *m)
{
    return (uint16_t)((m->fpu.fsw & ~0x3800) | (m->fpu.top << 11));
}

template <typename T> T rd(const SimOut &s, size_t off)
{
    T v;
    memcpy(&v, &s.data[off], sizeof v);
    return v;
}

} // namespace

#endif
