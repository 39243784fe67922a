// System family: the NOP forms, UD*, HLT, INT3/INT n/INTO, CPUID,
// RDTSC(P), XGETBV, privileged instructions at CPL 3 and their CPL-0
// model, and SYSCALL/INT 0x80/SYSENTER in --direct mode.
#include "ctl_util.h"

#include <cstring>
#include <string>

#include "host.h"
#include "seg.h"

using namespace ctl;

static const uint64_t C = EST_CODE;
static const uint64_t D = EST_DATA;
static const uint64_t S = EST_STACK_TOP - 0x100;
static const int M64 = ES_MODE_64, M32 = ES_MODE_32;

TEST(System, NopForms)
{
    run_cases({
        {"nop; xchg ax, ax (66 90); pause; endbr64; endbr32", M64,
         {0x90, 0x66, 0x90, 0xf3, 0x90, 0xf3, 0x0f, 0x1e, 0xfa, 0xf3, 0x0f, 0x1e, 0xfb},
         {{ES_RAX, 0x123456789ull}}, {{ES_RAX, 0x123456789ull}}, 0x8d7, ~0ull, 0x8d7},
        // multi-byte NOPs never touch memory, even unmapped
        {"nop dword [rax]; nop word [rax+rax+0]", M64,
         {0x0f, 0x1f, 0x00, 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00}, {{ES_RAX, 0x10000}}, {}},
        {"lfence; mfence; sfence; prefetchnta [rax]; prefetchw [rax]", M64,
         {0x0f, 0xae, 0xe8, 0x0f, 0xae, 0xf0, 0x0f, 0xae, 0xf8, 0x0f, 0x18, 0x00, 0x0f, 0x0d,
          0x08},
         {{ES_RAX, 0x10000}}, {}},
        {"clflush [rax]", M64, {0x0f, 0xae, 0x38}, {{ES_RAX, D}}, {}},
        {"clflush [rax] on an unmapped page: #PF", M64, {0x0f, 0xae, 0x38}, {{ES_RAX, 0x10000}},
         {}, 0x202, 0, 0, {}, {}, ES_VEC_PF, ES_PFEC_U, C},
        {"nop (32-bit mode)", M32, {0x90, 0x0f, 0x1f, 0x00}, {{ES_RAX, 0x10000}}, {}},
    });
}

TEST(System, TrapsAndFaults)
{
    run_cases({
        {"ud2", M64, {0x0f, 0x0b}, {}, {}, 0x202, 0, 0, {}, {}, ES_VEC_UD, 0, C},
        {"ud1 eax, [rax]", M64, {0x0f, 0xb9, 0x00}, {}, {}, 0x202, 0, 0, {}, {}, ES_VEC_UD, 0},
        {"hlt at CPL 3", M64, {0xf4}, {}, {}, 0x202, 0, 0, {}, {}, ES_VEC_GP, 0, C},
        {"int3", M64, {0xcc}, {}, {}, 0x202, 0, 0, {}, {}, ES_VEC_BP, 0},
        {"int 3", M32, {0xcd, 0x03}, {}, {}, 0x202, 0, 0, {}, {}, ES_VEC_BP, 0},
        {"int 0x21: DPL-0 gate, #GP(0x21 << 3 | 2)", M64, {0xcd, 0x21}, {}, {}, 0x202, 0, 0, {},
         {}, ES_VEC_GP, 0x10a},
        {"into with OF = 1", M32, {0xce}, {}, {}, 0xa02, 0, 0, {}, {}, ES_VEC_OF, 0},
        {"int 4", M64, {0xcd, 0x04}, {}, {}, 0x202, 0, 0, {}, {}, ES_VEC_OF, 0},
        {"into with OF = 0", M32, {0xce}, {}, {}},
    });
    M m(M64);
    ASSERT_EQ(m.run({0x0f, 0x0b}), ES_STOP_FAULT);
    EXPECT_EQ(std::string(m->message).find("not implemented"), std::string::npos) << m->message;
}

TEST(System, PrivilegedAtCpl3)
{
    const std::vector<std::pair<const char *, std::vector<uint8_t>>> insns = {
        {"rdmsr", {0x0f, 0x32}},        {"wrmsr", {0x0f, 0x30}},
        {"lgdt [rax]", {0x0f, 0x01, 0x10}}, {"lidt [rax]", {0x0f, 0x01, 0x18}},
        {"invlpg [rax]", {0x0f, 0x01, 0x38}}, {"wbinvd", {0x0f, 0x09}},
        {"invd", {0x0f, 0x08}},         {"clts", {0x0f, 0x06}},
        {"swapgs", {0x0f, 0x01, 0xf8}}, {"ltr ax", {0x0f, 0x00, 0xd8}},
        {"lldt ax", {0x0f, 0x00, 0xd0}}, {"sysret", {0x0f, 0x07}},
        {"xsetbv", {0x0f, 0x01, 0xd1}}, {"rdpmc", {0x0f, 0x33}},
        {"lmsw ax", {0x0f, 0x01, 0xf0}},
    };
    for (auto &i : insns) {
        SCOPED_TRACE(i.first);
        M m(M64);
        m->gpr[ES_RAX] = D;
        ASSERT_EQ(m.run(i.second), ES_STOP_FAULT);
        EXPECT_EQ(m->fault.vector, ES_VEC_GP);
        EXPECT_EQ(m->fault.error, 0u);
        EXPECT_EQ(m->rip, C);
    }
}

TEST(System, Cpl0Msrs)
{
    M m(M64);
    es_set_mode(m.m, 0, ES_MODE_64);
    // wrmsr FS_BASE; rdmsr KERNEL_GS_BASE after swapgs
    m->gpr[ES_RCX] = 0xc0000100;
    m->gpr[ES_RAX] = 0x12345678;
    m->gpr[ES_RDX] = 0x7f;
    ASSERT_EQ(m.run({0x0f, 0x30}), 0) << m->message;
    EXPECT_EQ(m->seg[ES_SEG_FS].base, 0x7f12345678ull);
    m->seg[ES_SEG_GS].base = 0x1000;
    m->msr.kernel_gs_base = 0x2000;
    m->gpr[ES_RCX] = 0xc0000102;
    ASSERT_EQ(m.run({0x0f, 0x01, 0xf8, 0x0f, 0x32}), 0); // swapgs; rdmsr
    EXPECT_EQ(m->seg[ES_SEG_GS].base, 0x2000u);
    EXPECT_EQ(m->gpr[ES_RAX], 0x1000u);
    EXPECT_EQ(m->gpr[ES_RDX], 0u);
    // unknown MSR and a non-canonical base: #GP(0)
    m->gpr[ES_RCX] = 0x12345;
    ASSERT_EQ(m.run({0x0f, 0x32}), ES_STOP_FAULT);
    EXPECT_EQ(m->fault.vector, ES_VEC_GP);
    m->gpr[ES_RCX] = 0xc0000101;
    m->gpr[ES_RDX] = 0x8000;
    m->rip = C;
    ASSERT_EQ(m.run({0x0f, 0x30}), ES_STOP_FAULT);
    EXPECT_EQ(m->fault.vector, ES_VEC_GP);
}

// WRMSR checks of SDM Vol. 2B WRMSR and Vol. 3A 10.8.5: SYSENTER_ESP/EIP
// must be canonical like the base MSRs; EFER has no bits besides SCE, LME,
// LMA, NXE; LME cannot change with paging on; LMA is not writable.
TEST(System, WrmsrEferAndSysenterChecks)
{
    M m(M64);
    es_set_mode(m.m, 0, ES_MODE_64);
    auto wrmsr = [&](uint32_t n, uint64_t v) {
        m->rip = C;
        m->gpr[ES_RCX] = n;
        m->gpr[ES_RAX] = v & 0xffffffffu;
        m->gpr[ES_RDX] = v >> 32;
        return m.run({0x0f, 0x30});
    };
    const uint64_t noncanon = 0x0000800000000000ull, canon = 0xffff800000001000ull;
    for (uint32_t n : {0x175u, 0x176u}) {
        EXPECT_EQ(wrmsr(n, noncanon), ES_STOP_FAULT) << std::hex << n;
        EXPECT_EQ(m->fault.vector, ES_VEC_GP);
        EXPECT_EQ(m->fault.error, 0u);
        ASSERT_EQ(wrmsr(n, canon), 0) << m->message;
    }
    EXPECT_EQ(m->msr.sysenter_esp, canon);
    EXPECT_EQ(m->msr.sysenter_eip, canon);
    ASSERT_EQ(m->efer, 0xd01u);
    // reserved bits (bit 1, bit 12 = AMD's SVME, bit 63)
    for (uint64_t bad : {0xd03ull, 0x1d01ull, 0x8000000000000d01ull}) {
        EXPECT_EQ(wrmsr(0xc0000080, bad), ES_STOP_FAULT) << std::hex << bad;
        EXPECT_EQ(m->fault.vector, ES_VEC_GP);
        EXPECT_EQ(m->efer, 0xd01u);
    }
    // clearing LME while CR0.PG is set
    EXPECT_EQ(wrmsr(0xc0000080, 0xc01), ES_STOP_FAULT);
    EXPECT_EQ(m->fault.vector, ES_VEC_GP);
    EXPECT_EQ(m->efer, 0xd01u);
    // SCE and NXE may change; a written LMA is ignored (the processor's)
    ASSERT_EQ(wrmsr(0xc0000080, 0x100), 0) << m->message;
    EXPECT_EQ(m->efer, 0x500u);
    ASSERT_EQ(wrmsr(0xc0000080, 0xd01), 0) << m->message;
    EXPECT_EQ(m->efer, 0xd01u);
}

// MOV to CR0/CR3/CR4/CR8: #GP(0) for reserved bits and illegal
// combinations (SDM Vol. 2B MOV-Move to/from Control Registers; Vol. 3A
// 2.5); a change of CR0.AM re-evaluates alignment checking.
TEST(System, MovToCrChecks)
{
    M m(M64);
    es_set_mode(m.m, 0, ES_MODE_64);
    const uint64_t cr0 = m->cr0, cr3 = m->cr3, cr4 = m->cr4;
    auto mov_to = [&](int cr, uint64_t v) {
        m->rip = C;
        m->gpr[ES_RAX] = v;
        switch (cr) {
        case 0: return m.run({0x0f, 0x22, 0xc0});
        case 3: return m.run({0x0f, 0x22, 0xd8});
        case 4: return m.run({0x0f, 0x22, 0xe0});
        default: return m.run({0x44, 0x0f, 0x22, 0xc0}); // mov cr8, rax
        }
    };
    struct Bad {
        int cr;
        uint64_t v;
        const char *why;
    } bad[] = {
        {0, cr0 | 1ull << 32, "CR0 bit 32 reserved"},
        {0, cr0 & ~1ull, "CR0.PG without PE"},
        {0, cr0 | 1ull << 29, "CR0.NW without CD"},
        {0, cr0 & ~(1ull << 31), "clearing CR0.PG in IA-32e mode"},
        {3, cr3 | 1ull << 52, "CR3 above MAXPHYADDR"},
        {3, cr3 | 1ull << 63, "CR3 bit 63 without PCIDE"},
        {4, cr4 & ~(1ull << 5), "clearing CR4.PAE in IA-32e mode"},
        {4, cr4 | 1ull << 15, "CR4 bit 15 reserved"},
        {4, cr4 | 1ull << 12, "CR4.LA57 not supported"},
        {4, cr4 | 1ull << 20, "CR4.SMEP not reported by CPUID"},
        {4, cr4 | 1ull << 32, "CR4 bit 32 reserved"},
        {8, 0x10, "CR8 bits 63:4 reserved"},
    };
    for (const Bad &b : bad) {
        EXPECT_EQ(mov_to(b.cr, b.v), ES_STOP_FAULT) << b.why;
        EXPECT_EQ(m->fault.vector, ES_VEC_GP) << b.why;
        EXPECT_EQ(m->fault.error, 0u) << b.why;
    }
    EXPECT_EQ(m->cr0, cr0);
    EXPECT_EQ(m->cr3, cr3);
    EXPECT_EQ(m->cr4, cr4);
    // legal writes: CD+NW (caches off), TPR 15, CR4.TSD
    ASSERT_EQ(mov_to(0, cr0 | 3ull << 29), 0) << m->message;
    EXPECT_EQ(m->cr0, cr0 | 3ull << 29);
    ASSERT_EQ(mov_to(0, cr0), 0) << m->message;
    ASSERT_EQ(mov_to(8, 15), 0) << m->message;
    EXPECT_EQ(m->cr8, 15u);
    ASSERT_EQ(mov_to(4, cr4 | 4), 0) << m->message;
    EXPECT_EQ(m->cr4, cr4 | 4);
    ASSERT_EQ(mov_to(4, cr4), 0) << m->message;
    // CR0.AM: the write re-evaluates alignment checking (es_update_ac);
    // a stale "on" left in ac_check must be recomputed (off at CPL 0)
    m->ac_check = true;
    ASSERT_EQ(mov_to(0, cr0 & ~(1ull << 18)), 0) << m->message;
    EXPECT_EQ(m->cr0, cr0 & ~(1ull << 18));
    EXPECT_FALSE(m->ac_check);
    ASSERT_EQ(mov_to(0, cr0), 0) << m->message;
}

static void cpuid(es_machine *m, uint32_t leaf, uint32_t sub, uint32_t r[4])
{
    m->gpr[ES_RAX] = 0xffffffff00000000ull | leaf;
    m->gpr[ES_RCX] = 0xffffffff00000000ull | sub;
    m->gpr[ES_RBX] = m->gpr[ES_RDX] = ~0ull;
    m->rip = C;
    const uint8_t code[] = {0x0f, 0xa2};
    est_code(m, code, 2);
    ASSERT_EQ(est_run(m, 2, 1), 0);
    for (int i : {ES_RAX, ES_RBX, ES_RCX, ES_RDX})
        EXPECT_EQ(m->gpr[i] >> 32, 0u) << "upper half of gpr " << i;
    r[0] = (uint32_t)m->gpr[ES_RAX];
    r[1] = (uint32_t)m->gpr[ES_RBX];
    r[2] = (uint32_t)m->gpr[ES_RCX];
    r[3] = (uint32_t)m->gpr[ES_RDX];
}

// RDRAND/RDSEED: CF = 1, the other arithmetic flags clear, the width's
// bits written (a 16-bit destination keeps the rest), and the values a
// function of the seed alone (--deterministic, the debugger's replay).
TEST(System, RdrandRdseed)
{
    const std::vector<uint8_t> code = {
        0x48, 0x0f, 0xc7, 0xf0, // rdrand rax
        0x66, 0x0f, 0xc7, 0xf3, // rdrand bx
        0x0f, 0xc7, 0xf9,       // rdseed ecx
    };
    uint64_t got[2][3];
    for (int run = 0; run < 2; run++) {
        M m(M64);
        m->rng = ES_RNG_SEED;
        m->rflags = 0x202 | ES_ZF | ES_SF | ES_OF | ES_AF | ES_PF;
        m->gpr[ES_RBX] = 0x1111222233334444ull;
        m->gpr[ES_RCX] = ~0ull;
        ASSERT_EQ(m.run(code), 0) << m->message;
        EXPECT_EQ(m->rflags & ES_ARITH_FLAGS, ES_CF);
        EXPECT_EQ(m->gpr[ES_RBX] >> 16, 0x111122223333ull);
        EXPECT_EQ(m->gpr[ES_RCX] >> 32, 0u);
        got[run][0] = m->gpr[ES_RAX], got[run][1] = m->gpr[ES_RBX], got[run][2] = m->gpr[ES_RCX];
    }
    for (int i = 0; i < 3; i++)
        EXPECT_EQ(got[0][i], got[1][i]);
    EXPECT_NE(got[0][0], got[0][2]); // a stream, not one value
    M other(M64);
    other->rng = ES_RNG_SEED + 1;
    ASSERT_EQ(other.run(code), 0);
    EXPECT_NE(other->gpr[ES_RAX], got[0][0]);
}

TEST(System, Cpuid)
{
    M m(M64);
    uint32_t r[4];
    char v[13] = {0};
    m->vendor = 0;
    cpuid(m.m, 0, 0, r);
    memcpy(v, &r[1], 4), memcpy(v + 4, &r[3], 4), memcpy(v + 8, &r[2], 4);
    EXPECT_STREQ(v, "GenuineIntel");
    EXPECT_GE(r[0], 0xdu);
    m->vendor = 1;
    cpuid(m.m, 0, 0, r);
    memcpy(v, &r[1], 4), memcpy(v + 4, &r[3], 4), memcpy(v + 8, &r[2], 4);
    EXPECT_STREQ(v, "AuthenticAMD");
    cpuid(m.m, 1, 0, r);
    EXPECT_EQ((r[0] >> 8) & 0xf, 0xfu);           // AMD: base family 0xf
    EXPECT_EQ(((r[0] >> 20) & 0xff) + 0xf, 0x19u); // Zen 4: family 19h
    // bit 11 SEP (SYSENTER/SYSEXIT), reported by Intel and AMD alike; was
    // missing before although SYSENTER works
    const uint32_t want_edx = 1u << 0 | 1u << 4 | 1u << 5 | 1u << 8 | 1u << 11 | 1u << 15 |
                              1u << 19 | 1u << 23 /* MMX: sim/isa/mmx.c */ | 1u << 24 |
                              1u << 25 | 1u << 26;
    const uint32_t want_ecx = 1u << 0 | 1u << 9 | 1u << 13 | 1u << 19 | 1u << 20 | 1u << 22 |
                              1u << 23 | 1u << 26 | 1u << 27 |
                              1u << 17 | // PCID (issue 4: pti's CR3 switches)
                              1u << 30 | // RDRAND
                              1u << 1 | 1u << 25 | // PCLMULQDQ, AES (sim/isa/crypto.c)
                              1u << 12 | 1u << 28 | 1u << 29; // FMA, AVX, F16C (x86-64-v3)
    EXPECT_EQ(r[3], want_edx); // no HTT, no APIC
    EXPECT_EQ(r[2], want_ecx);
    m->cr4 &= ~(1ull << 18); // OSXSAVE (27) is CR4.OSXSAVE
    cpuid(m.m, 1, 0, r);
    EXPECT_EQ(r[2], want_ecx & ~(1u << 27));
    m->cr4 |= 1ull << 18;
    m->vendor = 0;
    cpuid(m.m, 1, 0, r);
    EXPECT_EQ(r[3], want_edx); // Intel: the same features, SEP included
    EXPECT_NE(r[3] & 1u << 11, 0u);
    m->vendor = 1;
    cpuid(m.m, 7, 0, r);
    // BMI1 AVX2 BMI2 ERMS RDSEED ADX SHA; no AVX-512
    EXPECT_EQ(r[1], 1u << 3 | 1u << 5 | 1u << 8 | 1u << 9 | 1u << 18 | 1u << 19 | 1u << 29);
    EXPECT_EQ(r[3], 1u << 4);                                 // FSRM
    cpuid(m.m, 7, 1, r);
    EXPECT_EQ(r[1], 0u);
    cpuid(m.m, 0xd, 0, r);
    EXPECT_EQ(r[0], 7u);   // x87 SSE AVX
    EXPECT_EQ(r[1], 832u); // for XCR0 = 7: legacy 512 + header 64 + YMM_Hi128 256
    EXPECT_EQ(r[2], 832u);
    cpuid(m.m, 0xd, 1, r);
    EXPECT_EQ(r[0], 3u); // XSAVEOPT, XSAVEC; no XGETBV1, no XSAVES
    EXPECT_EQ(r[1], 832u);
    cpuid(m.m, 0xd, 2, r);
    EXPECT_EQ(r[0], 256u); // YMM_Hi128: size, standard offset
    EXPECT_EQ(r[1], 576u);
    m->xcr0 = 3; // sizes follow XCR0
    cpuid(m.m, 0xd, 0, r);
    EXPECT_EQ(r[1], 576u);
    EXPECT_EQ(r[2], 832u);
    m->xcr0 = 7;
    cpuid(m.m, 0x80000000, 0, r);
    EXPECT_GE(r[0], 0x80000004u);
    cpuid(m.m, 0x80000001, 0, r);
    EXPECT_EQ(r[2], 1u << 0 | 1u << 5 | 1u << 8);               // LAHF, ABM, PREFETCHW
    // SYSCALL NX RDTSCP LM, and AMD's copy of MMX (bit 23)
    EXPECT_EQ(r[3], 1u << 11 | 1u << 20 | 1u << 23 | 1u << 27 | 1u << 29);
    char brand[49] = {0};
    for (uint32_t i = 0; i < 3; i++) {
        cpuid(m.m, 0x80000002 + i, 0, r);
        memcpy(brand + 16 * i, r, 16);
    }
    EXPECT_STREQ(brand, "entrysim x86-64");
    cpuid(m.m, 0x40000000, 0, r); // no hypervisor leaves
    EXPECT_EQ(r[0] | r[1] | r[2] | r[3], 0u);
}

TEST(System, Rdtsc)
{
    M m(M64);
    m->deterministic = true;
    m->msr.tsc_aux = 0x1234;
    m->gpr[ES_RDX] = ~0ull;
    // nop; nop; rdtsc; rdtscp
    ASSERT_EQ(m.run({0x90, 0x90, 0x0f, 0x31, 0x48, 0x89, 0xc3, 0x0f, 0x01, 0xf9}), 0);
    EXPECT_EQ(m->gpr[ES_RBX], 6u);  // 3 * 2 retired instructions
    EXPECT_EQ(m->gpr[ES_RAX], 12u); // 3 * 4
    EXPECT_EQ(m->gpr[ES_RDX], 0u);
    EXPECT_EQ(m->gpr[ES_RCX], 0x1234u);
    // wall-clock mode is monotonic
    M w(M64);
    ASSERT_EQ(w.run({0x0f, 0x31, 0x48, 0x89, 0xc3, 0x48, 0x89, 0xd1, 0x0f, 0x31}), 0);
    uint64_t t0 = (w->gpr[ES_RCX] << 32) | w->gpr[ES_RBX];
    uint64_t t1 = (w->gpr[ES_RDX] << 32) | w->gpr[ES_RAX];
    EXPECT_GT(t1, t0);
    // CR4.TSD makes it privileged
    M t(M64);
    t->cr4 |= 4;
    ASSERT_EQ(t.run({0x0f, 0x31}), ES_STOP_FAULT);
    EXPECT_EQ(t->fault.vector, ES_VEC_GP);
}

TEST(System, Xgetbv)
{
    run_cases({
        {"xgetbv, ecx = 0", M64, {0x0f, 0x01, 0xd0}, {{ES_RCX, 0}, {ES_RDX, ~0ull}},
         {{ES_RAX, 7}, {ES_RDX, 0}}},
        {"xgetbv, ecx = 1: #GP(0)", M64, {0x0f, 0x01, 0xd0}, {{ES_RCX, 1}}, {}, 0x202, 0, 0, {},
         {}, ES_VEC_GP, 0},
        {"xgetbv (32-bit mode)", M32, {0x0f, 0x01, 0xd0}, {{ES_RCX, 0}}, {{ES_RAX, 7}}},
    });
}

// ---- system calls through host services (deterministic: getpid = 1000) ----

struct SysObs {
    int n = 0, abi = -1;
    uint64_t nr = 0, ret = 0, rcx = 0, rbp = 0, rbx = 0;
};

static void on_syscall(void *ctx, es_machine *m, int abi, uint64_t nr, uint64_t ret)
{
    SysObs *o = (SysObs *)ctx;
    o->n++;
    o->abi = abi;
    o->nr = nr;
    o->ret = ret;
    o->rcx = m->gpr[ES_RCX]; // what host services read as arguments
    o->rbp = m->gpr[ES_RBP];
    o->rbx = m->gpr[ES_RBX];
}

static void with_host(M &m, SysObs *o)
{
    es_host_config cfg = {};
    cfg.root = ".";
    cfg.deterministic = true;
    cfg.stdin_fd = 0, cfg.stdout_fd = 1, cfg.stderr_fd = 2;
    ASSERT_EQ(es_host_init(m.m, &cfg), 0) << m->message;
    es_observer ob = {};
    ob.ctx = o;
    ob.syscall = on_syscall;
    ASSERT_EQ(es_observe(m.m, &ob), 0);
}

TEST(System, Syscall64)
{
    M m(M64);
    SysObs o;
    with_host(m, &o);
    m->gpr[ES_RAX] = 39; // getpid
    m->rflags = 0x287;
    ASSERT_EQ(m.run({0x0f, 0x05}), 0) << m->message;
    EXPECT_EQ(o.n, 1);
    EXPECT_EQ(o.abi, ES_ABI_X64);
    EXPECT_EQ(m->gpr[ES_RAX], 1000u);
    EXPECT_EQ(m->gpr[ES_RCX], C + 2); // SYSRET's RCX
    EXPECT_EQ(m->gpr[ES_R11], 0x287u);
    // x32: the same instruction with __X32_SYSCALL_BIT
    m->gpr[ES_RAX] = ES_X32_SYSCALL_BIT | 39;
    ASSERT_EQ(m.run({0x0f, 0x05}), 0);
    EXPECT_EQ(o.abi, ES_ABI_X32);
    // an unknown number: -ENOSYS
    m->gpr[ES_RAX] = 100000;
    ASSERT_EQ(m.run({0x0f, 0x05}), 0);
    EXPECT_EQ(m->gpr[ES_RAX], (uint64_t)-38);
}

TEST(System, Int80)
{
    M m(M32);
    SysObs o;
    with_host(m, &o);
    m->gpr[ES_RAX] = 20; // i386 getpid
    ASSERT_EQ(m.run({0xcd, 0x80}), 0) << m->message;
    EXPECT_EQ(o.abi, ES_ABI_I386);
    EXPECT_EQ(m->gpr[ES_RAX], 1000u);
    // from 64-bit mode: the i386 table, errors sign-extended in RAX
    M w(M64);
    SysObs p;
    with_host(w, &p);
    w->gpr[ES_RAX] = 0x100000000ull | 20; // upper half ignored
    ASSERT_EQ(w.run({0xcd, 0x80}), 0);
    EXPECT_EQ(p.abi, ES_ABI_I386);
    EXPECT_EQ(p.nr, 20u);
    EXPECT_EQ(w->gpr[ES_RAX], 1000u);
    w->gpr[ES_RAX] = 5000;
    ASSERT_EQ(w.run({0xcd, 0x80}), 0);
    EXPECT_EQ(w->gpr[ES_RAX], (uint64_t)-38);
}

TEST(System, CompatSyscallAndSysenter)
{
    // SYSCALL in compatibility mode: AMD only; arg2 from EBP, arg6 at [ESP]
    M a(M32);
    SysObs o;
    with_host(a, &o);
    a->vendor = 1;
    a->gpr[ES_RAX] = 20;
    a->gpr[ES_RBP] = 0x2222;
    a->gpr[ES_RCX] = 0x9999;
    a.wr(S, 0x6666, 4);
    ASSERT_EQ(a.run({0x0f, 0x05}), 0) << a->message;
    EXPECT_EQ(o.abi, ES_ABI_I386);
    EXPECT_EQ(o.rcx, 0x2222u); // arg2
    EXPECT_EQ(o.rbp, 0x6666u); // arg6
    EXPECT_EQ(a->gpr[ES_RAX], 1000u);
    EXPECT_EQ(a->gpr[ES_RCX], C + 2);
    M i(M32);
    i->vendor = 0;
    ASSERT_EQ(i.run({0x0f, 0x05}), ES_STOP_FAULT);
    EXPECT_EQ(i->fault.vector, ES_VEC_UD);

    // SYSENTER: Intel only; EBP = user stack with arg6 at [EBP]
    M s(M32);
    SysObs q;
    with_host(s, &q);
    s->vendor = 0;
    s->gpr[ES_RAX] = 20;
    s->gpr[ES_RBP] = S + 0x10;
    s->gpr[ES_RCX] = 0x3333;
    s->gpr[ES_RSP] = 0x1234; // lost by SYSENTER
    s.wr(S + 0x10, 0x6666, 4);
    ASSERT_EQ(s.run({0x0f, 0x34}), 0) << s->message;
    EXPECT_EQ(q.abi, ES_ABI_I386);
    EXPECT_EQ(q.rcx, 0x3333u);
    EXPECT_EQ(q.rbp, 0x6666u);
    EXPECT_EQ(s->gpr[ES_RAX], 1000u);
    EXPECT_EQ(s->gpr[ES_RSP], S + 0x10);
    M u(M32);
    u->vendor = 1;
    ASSERT_EQ(u.run({0x0f, 0x34}), ES_STOP_FAULT);
    EXPECT_EQ(u->fault.vector, ES_VEC_UD);
}

TEST(System, SyscallExitStops)
{
    M m(M64);
    SysObs o;
    with_host(m, &o);
    m->gpr[ES_RAX] = 231; // exit_group(7)
    m->gpr[ES_RDI] = 7;
    const uint8_t code[] = {0x0f, 0x05, 0xf4};
    est_code(m.m, code, sizeof code);
    EXPECT_EQ(es_run(m.m), ES_STOP_EXIT);
    EXPECT_EQ(m->exit_status, 7);
    EXPECT_EQ(m->rip, C + 2);
}

// SYSRET from ring 0 with Linux's STAR (USER32_CS 0x23 in bits 63:48).
TEST(System, Sysret)
{
    for (int rexw = 0; rexw < 2; rexw++) {
        SCOPED_TRACE(rexw ? "sysretq" : "sysretl");
        M m(M64);
        es_set_mode(m.m, 0, ES_MODE_64);
        m->msr.star = (0x23ull << 48) | (0x10ull << 32);
        m->gpr[ES_RCX] = C + 0x40;
        m->gpr[ES_R11] = 0x3247 | ES_RF | ES_VM;
        std::vector<uint8_t> code = {0x0f, 0x07};
        if (rexw)
            code.insert(code.begin(), 0x48);
        est_code(m.m, code.data(), code.size());
        ASSERT_EQ(es_step(m.m), ES_OK) << m->message;
        EXPECT_EQ(m->cpl, 3);
        EXPECT_EQ(m->mode, rexw ? ES_MODE_64 : ES_MODE_32);
        EXPECT_EQ(m->seg[ES_SEG_CS].sel, rexw ? 0x33 : 0x23);
        EXPECT_EQ(m->seg[ES_SEG_SS].sel, 0x2b);
        EXPECT_EQ(m->rip, C + 0x40);
        EXPECT_EQ(m->rflags, 0x3247u); // RF and VM cleared (mask 3C7FD7h)
    }
    // Intel: a non-canonical RCX faults in ring 0
    M i(M64);
    es_set_mode(i.m, 0, ES_MODE_64);
    i->vendor = 0;
    i->gpr[ES_RCX] = 0x0000800000000000ull;
    ASSERT_EQ(i.run({0x48, 0x0f, 0x07}), ES_STOP_FAULT);
    EXPECT_EQ(i->fault.vector, ES_VEC_GP);
    EXPECT_EQ(i->cpl, 0);
}

// LAR/LSL/VERR/VERW against Linux's GDT; the values are those the Zen 4
// host returns for the same selectors (0x23 excepted: unusable there).
TEST(System, SegmentQueries)
{
    const uint64_t junk = 0xdeadbeefcafebabeull;
    const uint64_t Z = ES_ZF;
    run_cases({
        {"lar rax, rcx (0x2b)", M64, {0x48, 0x0f, 0x02, 0xc1}, {{ES_RCX, 0x2b}, {ES_RAX, junk}},
         {{ES_RAX, 0xcff300}}, 0x202, Z, Z},
        {"lar rax, rcx (0x33)", M64, {0x48, 0x0f, 0x02, 0xc1}, {{ES_RCX, 0x33}, {ES_RAX, junk}},
         {{ES_RAX, 0xaffb00}}, 0x202, Z, Z},
        {"lar ax, cx (0x2b)", M64, {0x66, 0x0f, 0x02, 0xc1}, {{ES_RCX, 0x2b}, {ES_RAX, ~0ull}},
         {{ES_RAX, 0xfffffffffffff300ull}}, 0x202, Z, Z},
        {"lar rax, rcx (kernel CS 0x10): ZF = 0, rax kept", M64, {0x48, 0x0f, 0x02, 0xc1},
         {{ES_RCX, 0x10}, {ES_RAX, junk}}, {{ES_RAX, junk}}, 0x242, Z, 0},
        {"lar rax, rcx (null)", M64, {0x48, 0x0f, 0x02, 0xc1}, {{ES_RCX, 0}, {ES_RAX, junk}},
         {{ES_RAX, junk}}, 0x242, Z, 0},
        {"lar eax, ecx (RPL 0 of a DPL-3 segment)", M32, {0x0f, 0x02, 0xc1}, {{ES_RCX, 0x28}},
         {{ES_RAX, 0xcff300}}, 0x202, Z, Z},
        {"lsl rax, rcx (0x2b)", M64, {0x48, 0x0f, 0x03, 0xc1}, {{ES_RCX, 0x2b}, {ES_RAX, junk}},
         {{ES_RAX, 0xffffffffull}}, 0x202, Z, Z},
        {"lsl eax, [rbx] (past the table)", M64, {0x0f, 0x03, 0x03}, {{ES_RBX, D}, {ES_RAX, 5}},
         {{ES_RAX, 5}}, 0x242, Z, 0, {{D, 0x83, 2}}},
        {"verr ax (0x2b)", M64, {0x0f, 0x00, 0xe0}, {{ES_RAX, 0x2b}}, {}, 0x202, Z, Z},
        {"verw ax (0x2b)", M64, {0x0f, 0x00, 0xe8}, {{ES_RAX, 0x2b}}, {}, 0x202, Z, Z},
        {"verr ax (0x33)", M64, {0x0f, 0x00, 0xe0}, {{ES_RAX, 0x33}}, {}, 0x202, Z, Z},
        {"verw ax (0x33: code)", M64, {0x0f, 0x00, 0xe8}, {{ES_RAX, 0x33}}, {}, 0x242, Z, 0},
        {"verr ax (0x18: DPL 0)", M32, {0x0f, 0x00, 0xe0}, {{ES_RAX, 0x18}}, {}, 0x242, Z, 0},
        {"smsw rax", M64, {0x48, 0x0f, 0x01, 0xe0}, {{ES_RAX, ~0ull}}, {{ES_RAX, 0x80050033}}},
        {"smsw [rbx] (16 bits)", M64, {0x0f, 0x01, 0x23}, {{ES_RBX, D}}, {}, 0x202, 0, 0,
         {{D, ~0ull, 8}}, {{D, 0xffffffffffff0033ull, 8}}},
        {"str eax", M64, {0x0f, 0x00, 0xc8}, {{ES_RAX, ~0ull}}, {{ES_RAX, 0}}},
    });
    // SGDT stores limit and base; UMIP makes it privileged
    M m(M64);
    m->gdtr.base = 0xfffffe0000001000ull;
    m->gdtr.limit = 0x7f;
    m->gpr[ES_RBX] = D;
    ASSERT_EQ(m.run({0x0f, 0x01, 0x03}), 0) << m->message; // sgdt [rbx]
    EXPECT_EQ(m.rd(D, 2), 0x7fu);
    EXPECT_EQ(m.rd(D + 2, 8), 0xfffffe0000001000ull);
    m->cr4 |= 1u << 11;
    ASSERT_EQ(m.run({0x0f, 0x01, 0x03}), ES_STOP_FAULT);
    EXPECT_EQ(m->fault.vector, ES_VEC_GP);
}
