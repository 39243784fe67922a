// Privileged architecture with a guest kernel (sim/priv.c): tiny
// hand-assembled kernels in supervisor pages with a GDT (Linux's layout),
// a 64-bit TSS and an IDT in guest memory; user code at CPL 3 enters them by
// SYSCALL, SYSENTER, INT n and exceptions, and they return by SYSRET,
// SYSEXIT and IRETQ.  Values checked against SDM Vol. 2B (SYSCALL, SYSRET,
// SYSENTER, SYSEXIT, INT n) and Vol. 3A 6.12-6.15.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "es_shim.h"
#include "host.h"
#include "hypercall.h"
#include "mem.h"
#include "priv.h"
#include "seg.h"
#include "vm.h"

namespace {

const uint64_t C = EST_CODE;
const uint64_t KCODE = 0xffffffff81000000ull; // handlers: KCODE + vector * 0x40
const uint64_t KDATA = 0xffffffff82000000ull;
const uint64_t GDT = KDATA;
const uint64_t IDT = KDATA + 0x1000;
const uint64_t TSS = KDATA + 0x2000;
const uint64_t KBUF = KDATA + 0x3000;           // scratch (hypercall args, strings)
const uint64_t KSTACK = KDATA + 0x10000;        // TSS.RSP0 (stack grows down to KDATA + 0x8000)
const uint64_t ISTSTACK = KDATA + 0x18000;      // TSS.IST1
const uint64_t USTACK = EST_STACK_TOP - 0x100;  // the shim's user RSP
const uint16_t TSS_SEL = 0x40;                  // GDT entry 8, as Linux's GDT_ENTRY_TSS

uint64_t handler(unsigned v) { return KCODE + v * 0x40; }

// 64-bit IDT gate (SDM Vol. 3A, Figure 6-8).
void gate(uint64_t g[2], uint64_t off, uint16_t sel, unsigned type, unsigned dpl, unsigned ist,
          bool present = true)
{
    g[0] = (off & 0xffff) | ((uint64_t)sel << 16) | ((uint64_t)ist << 32) |
           ((uint64_t)type << 40) | ((uint64_t)dpl << 45) | ((uint64_t)present << 47) |
           ((off & 0xffff0000ull) << 32);
    g[1] = off >> 32;
}

struct K {
    es_machine *m;
    explicit K(int mode = ES_MODE_64, int vendor = 0)
    {
        m = est_new(mode);
        m->vendor = (uint8_t)vendor;
        for (uint64_t a = KCODE; a < KCODE + 0x10000; a += 0x1000)
            map_sup(a, false, true);
        for (uint64_t a = KDATA; a < KDATA + 0x18000; a += 0x1000)
            map_sup(a, true, false);
        // Linux's GDT (arch/x86/kernel/cpu/common.c values), TSS at entry 8
        uint64_t gdt[16] = {0,
                            0x00cf9b000000ffffull,  // 0x08 KERNEL32_CS
                            0x00af9b000000ffffull,  // 0x10 KERNEL_CS
                            0x00cf93000000ffffull,  // 0x18 KERNEL_DS
                            0x00cffb000000ffffull,  // 0x23 USER32_CS
                            0x00cff3000000ffffull,  // 0x2b USER_DS
                            0x00affb000000ffffull}; // 0x33 USER_CS
        gdt[8] = 0x67 | ((TSS & 0xffffff) << 16) | (0x89ull << 40) | (((TSS >> 24) & 0xff) << 56);
        gdt[9] = TSS >> 32;
        put(GDT, gdt, sizeof gdt);
        m->gdtr.base = GDT;
        m->gdtr.limit = sizeof gdt - 1;
        uint8_t tss[0x68] = {};
        uint64_t rsp0 = KSTACK, ist1 = ISTSTACK;
        memcpy(tss + 4, &rsp0, 8);
        memcpy(tss + 0x24, &ist1, 8);
        put(TSS, tss, sizeof tss);
        m->tr = es_segreg{TSS_SEL, 0x8b, 0x67, TSS};
        // every vector: an interrupt gate to KCODE + v*0x40, DPL 0; #BP, #OF
        // and 0x80 with DPL 3 as Linux sets them
        for (unsigned v = 0; v < 256; v++)
            set_gate(v, 0xe, (v == 3 || v == 4 || v == 0x80) ? 3 : 0, 0);
        m->idtr.base = IDT;
        m->idtr.limit = 256 * 16 - 1;
        m->msr.star = (0x23ull << 48) | (0x10ull << 32); // Linux: __USER32_CS, __KERNEL_CS
        m->msr.lstar = KCODE + 0x8000;
        m->msr.cstar = KCODE + 0x8100;
        m->msr.sfmask = 0x47700; // Linux: TF DF IF IOPL AC NT
        m->msr.sysenter_cs = 0x10;
        m->msr.sysenter_esp = KSTACK;
        m->msr.sysenter_eip = KCODE + 0x8200;
        m->has_kernel = true;
    }
    ~K() { es_machine_free(m); }
    es_machine *operator->() { return m; }

    void map_sup(uint64_t va, bool w, bool x)
    {
        uint64_t *pte = es_pte(m, m->cr3, va, true);
        uint64_t pfn = es_frame_alloc(m);
        ASSERT_TRUE(pte && pfn);
        *pte = (pfn << 12) | ES_PTE_P | (w ? ES_PTE_W : 0) | (x ? 0 : ES_PTE_NX);
        es_tlb_flush(m);
    }
    // writes behind the CPU's back (any page), invalidating decodes
    void put(uint64_t va, const void *src, size_t n)
    {
        const uint8_t *s = (const uint8_t *)src;
        for (size_t i = 0; i < n; i++) {
            uint64_t *pte = es_pte(m, m->cr3, va + i, false);
            ASSERT_TRUE(pte && (*pte & ES_PTE_P));
            uint64_t pa = (*pte & ES_PTE_ADDR) | ((va + i) & 0xfff);
            *es_phys(m, pa) = s[i];
            es_code_stale(m, pa >> 12);
        }
    }
    void put(uint64_t va, std::vector<uint8_t> b) { put(va, b.data(), b.size()); }
    uint64_t q(uint64_t va)
    {
        uint64_t v = 0;
        EXPECT_EQ(es_copy_from_guest(m, &v, va, 8), 0);
        return v;
    }
    void set_gate(unsigned v, unsigned type, unsigned dpl, unsigned ist, bool present = true,
                  uint16_t sel = 0x10)
    {
        uint64_t g[2];
        gate(g, handler(v), sel, type, dpl, ist, present);
        put(IDT + v * 16, g, 16);
    }
    // user code at EST_CODE, RIP there, CPL 3
    void user(std::vector<uint8_t> b) { ASSERT_EQ(est_code(m, b.data(), b.size()), 0); }
    // kernel code, CPL 0 in 64-bit mode with kernel CS/SS, RSP = KSTACK
    void kernel_at(uint64_t va, std::vector<uint8_t> b)
    {
        put(va, b);
        m->seg[ES_SEG_CS] = es_segreg{0x10, 0xa9b, 0xffffffff, 0};
        m->seg[ES_SEG_SS] = es_segreg{0x18, 0xc93, 0xffffffff, 0};
        es_set_mode(m, 0, ES_MODE_64);
        m->gpr[ES_RSP] = KSTACK;
        m->rip = va;
    }
    int step() { return es_step(m); }
};

// Checks the hardware frame at RSP: [error], RIP, CS, RFLAGS, RSP, SS.
void expect_frame(K &k, bool err, uint64_t e, uint64_t rip, uint64_t cs, uint64_t fl, uint64_t rsp,
                  uint64_t ss)
{
    uint64_t sp = k->gpr[ES_RSP];
    if (err) {
        EXPECT_EQ(k.q(sp), e) << "error code";
        sp += 8;
    }
    EXPECT_EQ(k.q(sp), rip) << "saved RIP";
    EXPECT_EQ(k.q(sp + 8), cs) << "saved CS";
    EXPECT_EQ(k.q(sp + 16), fl) << "saved RFLAGS";
    EXPECT_EQ(k.q(sp + 24), rsp) << "saved RSP";
    EXPECT_EQ(k.q(sp + 32), ss) << "saved SS";
}

void expect_in_handler(K &k, unsigned v, uint64_t frame_words, uint64_t stack_top = KSTACK)
{
    EXPECT_EQ(k->rip, handler(v));
    EXPECT_EQ(k->cpl, 0);
    EXPECT_EQ(k->mode, ES_MODE_64);
    EXPECT_EQ(k->seg[ES_SEG_CS].sel, 0x10);
    EXPECT_EQ(k->gpr[ES_RSP], stack_top - frame_words * 8);
}

} // namespace

// ---- VMCALL hypercalls ----

TEST(Priv, VmcallIsUdAtCpl3AndWithoutKernel)
{
    {
        K k;
        k.user({0x0f, 0x01, 0xc1});
        k->rflags = 0x246;
        ASSERT_EQ(k.step(), ES_OK) << k->message; // the #UD goes to the guest kernel
        expect_in_handler(k, ES_VEC_UD, 5);
        expect_frame(k, false, 0, C, 0x33, 0x246, USTACK, 0x2b);
    }
    es_machine *m = est_new(ES_MODE_64);
    es_set_mode(m, 0, ES_MODE_64);
    const uint8_t code[] = {0x0f, 0x01, 0xc1};
    est_code(m, code, sizeof code);
    EXPECT_EQ(est_run(m, sizeof code, 4), ES_STOP_FAULT);
    EXPECT_EQ(m->fault.vector, ES_VEC_UD);
    EXPECT_EQ(std::string(m->message).find("not implemented"), std::string::npos) << m->message;
    es_machine_free(m);
}

static void host_init(es_machine *m)
{
    es_host_config cfg = {};
    cfg.root = ".";
    cfg.deterministic = true;
    cfg.stdin_fd = 0, cfg.stdout_fd = 1, cfg.stderr_fd = 2;
    ASSERT_EQ(es_host_init(m, &cfg), 0) << m->message;
}

TEST(Priv, HypercallSyscall)
{
    K k;
    host_init(k.m);
    const uint64_t vmcall_at = KCODE + 0x9000;
    uint64_t args[6] = {0, 0, 0, 0, 0, 0};
    k.put(KBUF, args, sizeof args);
    k.kernel_at(vmcall_at, {0x0f, 0x01, 0xc1, 0x0f, 0x01, 0xc1});
    k->gpr[ES_RAX] = ES_HC_SYSCALL;
    k->gpr[ES_RDI] = ES_ABI_X64;
    k->gpr[ES_RSI] = 39; // getpid
    k->gpr[ES_RDX] = KBUF;
    ASSERT_EQ(k.step(), ES_OK) << k->message;
    EXPECT_EQ(k->gpr[ES_RAX], 1000u);
    EXPECT_EQ(k->rip, vmcall_at + 3);

    // x32 getpid, number with the x32 bit
    k->gpr[ES_RAX] = ES_HC_SYSCALL;
    k->gpr[ES_RDI] = ES_ABI_X32;
    k->gpr[ES_RSI] = ES_X32_SYSCALL_BIT | 39;
    ASSERT_EQ(k.step(), ES_OK) << k->message;
    EXPECT_EQ(k->gpr[ES_RAX], 1000u);

    // arch_prctl(ARCH_SET_GS) after SWAPGS: the user's base is KERNEL_GS_BASE
    k.kernel_at(vmcall_at, {0x0f, 0x01, 0xc1});
    k->seg[ES_SEG_GS].base = 0xffff888000001000ull; // the kernel's per-cpu base
    k->msr.kernel_gs_base = 0;
    args[0] = 0x1001;
    args[1] = 0x7000;
    k.put(KBUF, args, sizeof args);
    k->gpr[ES_RAX] = ES_HC_SYSCALL;
    k->gpr[ES_RDI] = ES_ABI_X64;
    k->gpr[ES_RSI] = 158;
    k->gpr[ES_RDX] = KBUF;
    ASSERT_EQ(k.step(), ES_OK) << k->message;
    EXPECT_EQ(k->gpr[ES_RAX], 0u);
    EXPECT_EQ(k->msr.kernel_gs_base, 0x7000u);
    EXPECT_EQ(k->seg[ES_SEG_GS].base, 0xffff888000001000ull);

    // exit_group(3) stops the run past the VMCALL
    k.kernel_at(vmcall_at, {0x0f, 0x01, 0xc1});
    args[0] = 3;
    k.put(KBUF, args, sizeof args);
    k->gpr[ES_RAX] = ES_HC_SYSCALL;
    k->gpr[ES_RSI] = 231;
    EXPECT_EQ(es_run(k.m), ES_STOP_EXIT);
    EXPECT_EQ(k->exit_status, 3);
    EXPECT_EQ(k->rip, vmcall_at + 3);
}

TEST(Priv, HypercallSignalMatchesDirectFaultReport)
{
    // the message and signal of a --direct #PF ...
    es_machine *d = est_new(ES_MODE_64);
    const uint8_t code[] = {0x48, 0x89, 0x03}; // mov [rbx], rax
    est_code(d, code, sizeof code);
    d->gpr[ES_RBX] = 0x1234;
    ASSERT_EQ(est_run(d, sizeof code, 4), ES_STOP_FAULT);
    std::string direct = d->message;
    int dsig = d->signal;
    es_machine_free(d);

    // ... are what ES_HC_SIGNAL reports for the same fault
    K k;
    k.kernel_at(KCODE + 0x9000, {0x0f, 0x01, 0xc1});
    k->gpr[ES_RAX] = ES_HC_SIGNAL;
    k->gpr[ES_RDI] = ES_VEC_PF;
    k->gpr[ES_RSI] = ES_PFEC_U | ES_PFEC_W;
    k->gpr[ES_RDX] = 0x1234;
    k->gpr[ES_RCX] = C;
    EXPECT_EQ(es_run(k.m), ES_STOP_FAULT);
    EXPECT_EQ(std::string(k->message), direct);
    EXPECT_EQ(k->signal, dsig);
    EXPECT_EQ(k->signal, 11);
    EXPECT_EQ(k->fault.vector, ES_VEC_PF);
    EXPECT_EQ(k->cr2, 0x1234u);

    k.kernel_at(KCODE + 0x9000, {0x0f, 0x01, 0xc1});
    k->gpr[ES_RAX] = ES_HC_SIGNAL;
    k->gpr[ES_RDI] = ES_VEC_UD;
    k->gpr[ES_RSI] = 0;
    k->gpr[ES_RCX] = C + 4;
    k->unimpl_op = 0;
    EXPECT_EQ(es_run(k.m), ES_STOP_FAULT);
    EXPECT_EQ(k->signal, 4);
    EXPECT_EQ(std::string(k->message), "guest fault #UD at rip=0x400004");
}

TEST(Priv, HypercallPanicAndPuts)
{
    K k;
    const char msg[] = "no init found";
    k.put(KBUF, msg, sizeof msg);
    k.kernel_at(KCODE + 0x9000, {0x0f, 0x01, 0xc1, 0x0f, 0x01, 0xc1});
    k->gpr[ES_RAX] = ES_HC_PUTS;
    k->gpr[ES_RDI] = KBUF;
    ASSERT_EQ(k.step(), ES_OK);
    k->gpr[ES_RAX] = ES_HC_PANIC;
    EXPECT_EQ(es_run(k.m), ES_STOP_ERROR);
    EXPECT_EQ(std::string(k->message), "guest kernel panic: no init found");
}

// ---- SYSCALL / SYSRET ----

TEST(Priv, Syscall64AndSysretq)
{
    for (int vendor = 0; vendor < 2; vendor++) {
        SCOPED_TRACE(vendor ? "amd" : "intel");
        K k(ES_MODE_64, vendor);
        k.user({0x0f, 0x05});
        k.put(k->msr.lstar, {0x48, 0x0f, 0x07}); // sysretq
        k->rflags = 0x747;           // TF IF DF ZF PF CF
        ASSERT_EQ(k.step(), ES_OK) << k->message;
        EXPECT_EQ(k->rip, k->msr.lstar);
        EXPECT_EQ(k->gpr[ES_RCX], C + 2);
        EXPECT_EQ(k->gpr[ES_R11], 0x747u);
        EXPECT_EQ(k->rflags, 0x747u & ~0x47700ull); // SFMASK cleared TF IF DF
        EXPECT_EQ(k->cpl, 0);
        EXPECT_EQ(k->mode, ES_MODE_64);
        EXPECT_EQ(k->seg[ES_SEG_CS].sel, 0x10);
        EXPECT_EQ(k->seg[ES_SEG_SS].sel, 0x18);
        EXPECT_EQ(k->gpr[ES_RSP], USTACK); // SYSCALL does not switch stacks
        ASSERT_EQ(k.step(), ES_OK) << k->message;
        EXPECT_EQ(k->rip, C + 2);
        EXPECT_EQ(k->cpl, 3);
        EXPECT_EQ(k->mode, ES_MODE_64);
        EXPECT_EQ(k->seg[ES_SEG_CS].sel, 0x33);
        EXPECT_EQ(k->seg[ES_SEG_SS].sel, 0x2b);
        EXPECT_EQ(k->rflags, 0x747u);
    }
}

TEST(Priv, SyscallNeedsSce)
{
    K k;
    k->efer &= ~1ull;
    k.user({0x0f, 0x05});
    ASSERT_EQ(k.step(), ES_OK);
    expect_in_handler(k, ES_VEC_UD, 5);
    expect_frame(k, false, 0, C, 0x33, 0x202, USTACK, 0x2b);
}

// Compatibility mode: AMD enters at CSTAR, Intel raises #UD.
TEST(Priv, SyscallCompatVendors)
{
    {
        K k(ES_MODE_32, 1);
        k.user({0x0f, 0x05});
        k.put(k->msr.cstar, {0x0f, 0x07}); // sysretl
        ASSERT_EQ(k.step(), ES_OK) << k->message;
        EXPECT_EQ(k->rip, k->msr.cstar);
        EXPECT_EQ(k->mode, ES_MODE_64);
        EXPECT_EQ(k->cpl, 0);
        EXPECT_EQ(k->gpr[ES_RCX], C + 2);
        EXPECT_EQ(k->gpr[ES_R11], 0x202u);
        ASSERT_EQ(k.step(), ES_OK) << k->message;
        EXPECT_EQ(k->rip, C + 2);
        EXPECT_EQ(k->mode, ES_MODE_32);
        EXPECT_EQ(k->seg[ES_SEG_CS].sel, 0x23);
        EXPECT_EQ(k->seg[ES_SEG_SS].sel, 0x2b);
    }
    K k(ES_MODE_32, 0);
    k.user({0x0f, 0x05});
    ASSERT_EQ(k.step(), ES_OK);
    expect_in_handler(k, ES_VEC_UD, 5);
    expect_frame(k, false, 0, C, 0x23, 0x202, USTACK, 0x2b);
}

// SYSRET with a non-canonical RCX: Intel #GP(0) in ring 0 (delivered on
// the kernel stack, no stack switch); AMD returns and the fetch faults in
// ring 3.
TEST(Priv, SysretNonCanonicalRcx)
{
    const uint64_t bad = 0x0000800000000000ull;
    {
        K k(ES_MODE_64, 0);
        k.kernel_at(KCODE + 0x9000, {0x48, 0x0f, 0x07});
        k->gpr[ES_RSP] = KSTACK - 0x100;
        k->gpr[ES_RCX] = bad;
        k->gpr[ES_R11] = 0x202;
        k->rflags = 0x2;
        ASSERT_EQ(k.step(), ES_OK);
        expect_in_handler(k, ES_VEC_GP, 6, KSTACK - 0x100);
        expect_frame(k, true, 0, KCODE + 0x9000, 0x10, 0x2, KSTACK - 0x100, 0x18);
    }
    K k(ES_MODE_64, 1);
    k.kernel_at(KCODE + 0x9000, {0x48, 0x0f, 0x07});
    k->gpr[ES_RCX] = bad;
    k->gpr[ES_R11] = 0x202;
    k->gpr[ES_RSP] = USTACK;
    ASSERT_EQ(k.step(), ES_OK);
    EXPECT_EQ(k->cpl, 3);
    EXPECT_EQ(k->rip, bad);
    ASSERT_EQ(k.step(), ES_OK); // the fetch: #GP(0) from ring 3
    expect_in_handler(k, ES_VEC_GP, 6);
    expect_frame(k, true, 0, bad, 0x33, 0x202, USTACK, 0x2b);
}

TEST(Priv, SysretAtCpl3IsGp)
{
    K k;
    k.user({0x48, 0x0f, 0x07});
    ASSERT_EQ(k.step(), ES_OK);
    expect_in_handler(k, ES_VEC_GP, 6);
    expect_frame(k, true, 0, C, 0x33, 0x202, USTACK, 0x2b);
}

// ---- SYSENTER / SYSEXIT ----

TEST(Priv, SysenterVendors)
{
    for (int mode : {ES_MODE_64, ES_MODE_32}) {
        SCOPED_TRACE(mode == ES_MODE_64 ? "64-bit" : "compat");
        // Intel: allowed in both; nothing saved, IF cleared
        K k(mode, 0);
        k.user({0x0f, 0x34});
        k->rflags = 0x346; // TF IF ZF PF
        k->gpr[ES_RBP] = USTACK;
        ASSERT_EQ(k.step(), ES_OK) << k->message;
        EXPECT_EQ(k->rip, KCODE + 0x8200);
        EXPECT_EQ(k->gpr[ES_RSP], KSTACK);
        EXPECT_EQ(k->cpl, 0);
        EXPECT_EQ(k->mode, ES_MODE_64);
        EXPECT_EQ(k->seg[ES_SEG_CS].sel, 0x10);
        EXPECT_EQ(k->seg[ES_SEG_SS].sel, 0x18);
        EXPECT_EQ(k->rflags, 0x146u); // IF cleared, TF kept (SDM SYSENTER)
        EXPECT_EQ(k->gpr[ES_RCX], 0u);
        // AMD: #UD in long mode
        K a(mode, 1);
        a.user({0x0f, 0x34});
        ASSERT_EQ(a.step(), ES_OK);
        expect_in_handler(a, ES_VEC_UD, 5);
        expect_frame(a, false, 0, C, mode == ES_MODE_64 ? 0x33 : 0x23, 0x202, USTACK, 0x2b);
    }
    // SYSENTER_CS = 0: #GP(0)
    K k(ES_MODE_32, 0);
    k->msr.sysenter_cs = 0;
    k.user({0x0f, 0x34});
    ASSERT_EQ(k.step(), ES_OK);
    expect_in_handler(k, ES_VEC_GP, 6);
    expect_frame(k, true, 0, C, 0x23, 0x202, USTACK, 0x2b);
}

TEST(Priv, Sysexit)
{
    for (int rexw = 0; rexw < 2; rexw++) {
        SCOPED_TRACE(rexw ? "sysexitq" : "sysexitl");
        K k(ES_MODE_64, 0);
        std::vector<uint8_t> code = {0x0f, 0x35};
        if (rexw)
            code.insert(code.begin(), 0x48);
        k.kernel_at(KCODE + 0x9000, code);
        k->rflags = 0x246;
        // without REX.W only EDX and ECX count
        k->gpr[ES_RDX] = rexw ? C + 0x10 : 0xabcd000000000000ull | (C + 0x10);
        k->gpr[ES_RCX] = rexw ? USTACK : 0x1234000000000000ull | USTACK;
        ASSERT_EQ(k.step(), ES_OK) << k->message;
        EXPECT_EQ(k->cpl, 3);
        EXPECT_EQ(k->mode, rexw ? ES_MODE_64 : ES_MODE_32);
        EXPECT_EQ(k->seg[ES_SEG_CS].sel, rexw ? 0x33 : 0x23); // SYSENTER_CS + 32 / + 16
        EXPECT_EQ(k->seg[ES_SEG_SS].sel, rexw ? 0x3b : 0x2b); // + 40 / + 24
        EXPECT_EQ(k->rip, C + 0x10);
        EXPECT_EQ(k->gpr[ES_RSP], USTACK);
        EXPECT_EQ(k->rflags, 0x246u);
    }
    // REX.W with a non-canonical RDX: #GP(0) in ring 0
    K k(ES_MODE_64, 0);
    k.kernel_at(KCODE + 0x9000, {0x48, 0x0f, 0x35});
    k->gpr[ES_RSP] = KSTACK - 0x100;
    k->gpr[ES_RDX] = 0x0000800000000000ull;
    k->gpr[ES_RCX] = USTACK;
    ASSERT_EQ(k.step(), ES_OK);
    expect_in_handler(k, ES_VEC_GP, 6, KSTACK - 0x100);
    // at CPL 3: #GP(0)
    K u(ES_MODE_64, 0);
    u.user({0x0f, 0x35});
    ASSERT_EQ(u.step(), ES_OK);
    expect_in_handler(u, ES_VEC_GP, 6);
    // AMD: #UD in long mode
    K a(ES_MODE_64, 1);
    a.kernel_at(KCODE + 0x9000, {0x0f, 0x35});
    a->gpr[ES_RSP] = KSTACK - 0x100;
    ASSERT_EQ(a.step(), ES_OK);
    expect_in_handler(a, ES_VEC_UD, 5, KSTACK - 0x100);
    K au(ES_MODE_64, 1);
    au.user({0x0f, 0x35});
    ASSERT_EQ(au.step(), ES_OK);
    expect_in_handler(au, ES_VEC_UD, 5);
}

// Every vendor x entry combination from user mode: the legal ones reach
// the kernel entry point, the illegal ones raise #UD.
TEST(Priv, VendorEntryMatrix)
{
    struct Row {
        const char *name;
        int mode;
        std::vector<uint8_t> code;
        uint64_t intel, amd; // entry RIP, or 0 for #UD
    };
    const uint64_t L = KCODE + 0x8000, CS = KCODE + 0x8100, SE = KCODE + 0x8200;
    const Row rows[] = {
        {"syscall64", ES_MODE_64, {0x0f, 0x05}, L, L},
        {"syscall32", ES_MODE_32, {0x0f, 0x05}, 0, CS},
        {"sysenter64", ES_MODE_64, {0x0f, 0x34}, SE, 0},
        {"sysenter32", ES_MODE_32, {0x0f, 0x34}, SE, 0},
        {"int80 from 64-bit", ES_MODE_64, {0xcd, 0x80}, handler(0x80), handler(0x80)},
        {"int80 from compat", ES_MODE_32, {0xcd, 0x80}, handler(0x80), handler(0x80)},
    };
    for (const Row &r : rows)
        for (int vendor = 0; vendor < 2; vendor++) {
            SCOPED_TRACE(std::string(r.name) + (vendor ? " amd" : " intel"));
            K k(r.mode, vendor);
            k.user(r.code);
            ASSERT_EQ(k.step(), ES_OK) << k->message;
            uint64_t want = vendor ? r.amd : r.intel;
            EXPECT_EQ(k->rip, want ? want : handler(ES_VEC_UD));
            EXPECT_EQ(k->cpl, 0);
            EXPECT_EQ(k->mode, ES_MODE_64);
        }
}

// ---- IDT delivery ----

// int 0x80 from ring 3: DPL-3 interrupt gate, stack switch to TSS.RSP0,
// null SS, IF cleared; IRETQ returns to the user context.
TEST(Priv, Int80FrameAndIretq)
{
    for (int mode : {ES_MODE_64, ES_MODE_32}) {
        SCOPED_TRACE(mode == ES_MODE_64 ? "64-bit" : "compat");
        K k(mode);
        k.user({0xcd, 0x80, 0x90});
        k.put(handler(0x80), {0x48, 0xcf}); // iretq
        k->rflags = 0x346; // TF IF ZF PF
        k->gpr[ES_RAX] = 0x1234;
        ASSERT_EQ(k.step(), ES_OK) << k->message;
        expect_in_handler(k, 0x80, 5);
        uint16_t ucs = mode == ES_MODE_64 ? 0x33 : 0x23;
        expect_frame(k, false, 0, C + 2, ucs, 0x346, USTACK, 0x2b);
        EXPECT_EQ(k->seg[ES_SEG_SS].sel, 0); // null SS, RPL 0 (SDM 6.14.4)
        EXPECT_EQ(k->rflags, 0x046u);        // TF and IF cleared
        EXPECT_EQ(k->gpr[ES_RAX], 0x1234u);
        ASSERT_EQ(k.step(), ES_OK) << k->message; // iretq
        EXPECT_EQ(k->rip, C + 2);
        EXPECT_EQ(k->cpl, 3);
        EXPECT_EQ(k->mode, mode);
        EXPECT_EQ(k->seg[ES_SEG_CS].sel, ucs);
        EXPECT_EQ(k->seg[ES_SEG_SS].sel, 0x2b);
        EXPECT_EQ(k->gpr[ES_RSP], USTACK);
        EXPECT_EQ(k->rflags, 0x346u);
    }
}

TEST(Priv, TrapGateKeepsIf)
{
    K k;
    k.set_gate(0x80, 0xf, 3, 0);
    k.user({0xcd, 0x80});
    k->rflags = 0x202;
    ASSERT_EQ(k.step(), ES_OK);
    expect_in_handler(k, 0x80, 5);
    EXPECT_EQ(k->rflags, 0x202u);
}

// INT n through a DPL-0 gate from ring 3: #GP(vector * 8 + 2), EXT = 0, on
// the INT instruction.
TEST(Priv, GateDplViolation)
{
    K k;
    k.user({0xcd, 0x21});
    ASSERT_EQ(k.step(), ES_OK);
    expect_in_handler(k, ES_VEC_GP, 6);
    expect_frame(k, true, 0x21 * 8 + 2, C, 0x33, 0x202, USTACK, 0x2b);
    // int3 with Linux's DPL-3 gate: #BP with the next RIP saved
    K b;
    b.user({0xcc});
    ASSERT_EQ(b.step(), ES_OK);
    expect_in_handler(b, ES_VEC_BP, 5);
    expect_frame(b, false, 0, C + 1, 0x33, 0x202, USTACK, 0x2b);
    // a DPL-0 #BP gate: #GP(3 * 8 + 2)
    K c;
    c.set_gate(3, 0xe, 0, 0);
    c.user({0xcc});
    ASSERT_EQ(c.step(), ES_OK);
    expect_in_handler(c, ES_VEC_GP, 6);
    expect_frame(c, true, 3 * 8 + 2, C, 0x33, 0x202, USTACK, 0x2b);
    // exceptions ignore the gate DPL: #UD through a DPL-0 gate
    K u;
    u.user({0x0f, 0x0b});
    ASSERT_EQ(u.step(), ES_OK);
    expect_in_handler(u, ES_VEC_UD, 5);
    expect_frame(u, false, 0, C, 0x33, 0x202, USTACK, 0x2b);
}

TEST(Priv, NotPresentGateIsNp)
{
    K k;
    k.set_gate(0x80, 0xe, 3, 0, false);
    k.user({0xcd, 0x80});
    ASSERT_EQ(k.step(), ES_OK);
    expect_in_handler(k, ES_VEC_NP, 6);
    expect_frame(k, true, 0x80 * 8 + 2, C, 0x33, 0x202, USTACK, 0x2b);
    // an exception's gate not present: EXT set in the error code
    K e;
    e.set_gate(ES_VEC_UD, 0xe, 0, 0, false);
    e.user({0x0f, 0x0b});
    ASSERT_EQ(e.step(), ES_OK);
    expect_in_handler(e, ES_VEC_NP, 6);
    expect_frame(e, true, ES_VEC_UD * 8 + 3, C, 0x33, 0x202, USTACK, 0x2b);
}

TEST(Priv, ExceptionsFromUserMode)
{
    // #DE
    K d;
    d.user({0xf7, 0xf1}); // div ecx (ecx = 0)
    ASSERT_EQ(d.step(), ES_OK);
    expect_in_handler(d, ES_VEC_DE, 5);
    expect_frame(d, false, 0, C, 0x33, 0x202, USTACK, 0x2b);
    // #PF on a write to an unmapped user address: CR2, U|W
    K p;
    p.user({0x48, 0x89, 0x03}); // mov [rbx], rax
    p->gpr[ES_RBX] = 0x1234;
    ASSERT_EQ(p.step(), ES_OK);
    expect_in_handler(p, ES_VEC_PF, 6);
    expect_frame(p, true, ES_PFEC_U | ES_PFEC_W, C, 0x33, 0x202, USTACK, 0x2b);
    EXPECT_EQ(p->cr2, 0x1234u);
    // #PF on a read of a supervisor page: P|U
    K s;
    s.user({0x48, 0x8b, 0x03}); // mov rax, [rbx]
    s->gpr[ES_RBX] = KDATA + 8;
    ASSERT_EQ(s.step(), ES_OK);
    expect_in_handler(s, ES_VEC_PF, 6);
    expect_frame(s, true, ES_PFEC_P | ES_PFEC_U, C, 0x33, 0x202, USTACK, 0x2b);
    EXPECT_EQ(s->cr2, KDATA + 8);
    // #GP(0) on a non-canonical address
    K g;
    g.user({0x48, 0x8b, 0x03});
    g->gpr[ES_RBX] = 0x8000000000000000ull;
    ASSERT_EQ(g.step(), ES_OK);
    expect_in_handler(g, ES_VEC_GP, 6);
    expect_frame(g, true, 0, C, 0x33, 0x202, USTACK, 0x2b);
    // privileged instruction at CPL 3: #GP(0)
    K h;
    h.user({0xf4});
    ASSERT_EQ(h.step(), ES_OK);
    expect_in_handler(h, ES_VEC_GP, 6);
    expect_frame(h, true, 0, C, 0x33, 0x202, USTACK, 0x2b);
}

// NX on instruction fetch (EFER.NXE): the vsyscall page as Linux maps it
// with vsyscall=emulate (user-readable, not executable) faults with P|U|I
// when user code calls into it.
TEST(Priv, NxFetchAndVsyscallPage)
{
    K k;
    const uint64_t vsys = 0xffffffffff600000ull;
    ASSERT_EQ(est_map(k.m, vsys, 0, 0), 0);
    k.user({0xff, 0xd0}); // call rax
    k->gpr[ES_RAX] = vsys;
    ASSERT_EQ(k.step(), ES_OK); // the call
    EXPECT_EQ(k->rip, vsys);
    ASSERT_EQ(k.step(), ES_OK); // the fetch faults
    expect_in_handler(k, ES_VEC_PF, 6);
    expect_frame(k, true, ES_PFEC_P | ES_PFEC_U | ES_PFEC_I, vsys, 0x33, 0x202, USTACK - 8, 0x2b);
    EXPECT_EQ(k->cr2, vsys);
    EXPECT_EQ(k.q(USTACK - 8), C + 2); // the return address the emulation pops
    // the page is readable from user mode
    uint64_t pa;
    EXPECT_EQ(es_translate(k.m, vsys, ES_ACC_R, 1, &pa), 0u);
    // without EFER.NXE the page is executable
    K n;
    n->efer &= ~(1ull << 11);
    ASSERT_EQ(est_map(n.m, vsys, 0, 0), 0);
    n.user({0xff, 0xd0});
    n->gpr[ES_RAX] = vsys;
    ASSERT_EQ(n.step(), ES_OK);
    ASSERT_EQ(n.step(), ES_OK); // add [rax], al on a zero page: a write to a read-only page
    expect_in_handler(n, ES_VEC_PF, 6);
    expect_frame(n, true, ES_PFEC_P | ES_PFEC_U | ES_PFEC_W, vsys, 0x33, 0x202, USTACK - 8, 0x2b);
}

// A kernel fault in ring 0: no stack switch, SS:RSP pushed all the same.
TEST(Priv, KernelFaultSameRing)
{
    K k;
    k.kernel_at(KCODE + 0x9000, {0x0f, 0x0b});
    k->gpr[ES_RSP] = KSTACK - 0x108; // aligned down to 16 for the frame
    k->rflags = 0x202;
    ASSERT_EQ(k.step(), ES_OK);
    EXPECT_EQ(k->rip, handler(ES_VEC_UD));
    EXPECT_EQ(k->gpr[ES_RSP], KSTACK - 0x110 - 40);
    expect_frame(k, false, 0, KCODE + 0x9000, 0x10, 0x202, KSTACK - 0x108, 0x18);
    EXPECT_EQ(k->seg[ES_SEG_SS].sel, 0x18);
}

// IST: the gate's IST index picks the stack, even without a privilege change.
TEST(Priv, IstStack)
{
    K k;
    k.set_gate(ES_VEC_UD, 0xe, 0, 1);
    k.user({0x0f, 0x0b});
    ASSERT_EQ(k.step(), ES_OK);
    expect_in_handler(k, ES_VEC_UD, 5, ISTSTACK);
    k.kernel_at(KCODE + 0x9000, {0x0f, 0x0b});
    k->rflags = 0x202;
    ASSERT_EQ(k.step(), ES_OK);
    expect_in_handler(k, ES_VEC_UD, 5, ISTSTACK);
    expect_frame(k, false, 0, KCODE + 0x9000, 0x10, 0x202, KSTACK, 0x18);
}

// A contributory fault while delivering a contributory fault is #DF (SDM
// Vol. 3A, Table 6-5); a fault while delivering #DF is a triple fault.
TEST(Priv, DoubleAndTripleFault)
{
    K k;
    k.set_gate(ES_VEC_GP, 0xe, 0, 0, false); // #GP -> #NP while delivering
    k.set_gate(ES_VEC_DF, 0xe, 0, 1);
    k.user({0x48, 0x8b, 0x03});
    k->gpr[ES_RBX] = 0x8000000000000000ull;
    ASSERT_EQ(k.step(), ES_OK);
    expect_in_handler(k, ES_VEC_DF, 6, ISTSTACK);
    expect_frame(k, true, 0, C, 0x33, 0x202, USTACK, 0x2b);

    // a #PF whose delivery hits an unmapped RSP0: #PF while delivering
    // #PF -> #DF
    K p;
    uint64_t bad = KDATA + 0x100000;
    p.put(TSS + 4, &bad, 8);
    p.set_gate(ES_VEC_DF, 0xe, 0, 1);
    p.user({0x48, 0x89, 0x03});
    p->gpr[ES_RBX] = 0x1234;
    ASSERT_EQ(p.step(), ES_OK);
    expect_in_handler(p, ES_VEC_DF, 6, ISTSTACK);
    EXPECT_EQ(p->cr2, bad - 48); // the last #PF's address: the frame's start

    // benign #UD, then #NP while delivering it: the #NP is delivered
    K b;
    b.set_gate(ES_VEC_UD, 0xe, 0, 0, false);
    b.user({0x0f, 0x0b});
    ASSERT_EQ(b.step(), ES_OK);
    expect_in_handler(b, ES_VEC_NP, 6);

    // #DF's own gate not present: triple fault stops the run
    K t;
    t.set_gate(ES_VEC_GP, 0xe, 0, 0, false);
    t.set_gate(ES_VEC_DF, 0xe, 0, 0, false);
    t.user({0x48, 0x8b, 0x03});
    t->gpr[ES_RBX] = 0x8000000000000000ull;
    EXPECT_EQ(t.step(), ES_FAULT);
    EXPECT_EQ(t->stop, ES_STOP_ERROR);
    EXPECT_NE(std::string(t->message).find("triple fault"), std::string::npos) << t->message;
    EXPECT_EQ(t->cpl, 3); // nothing delivered
    EXPECT_EQ(t->rip, C);
}

// IDTR limit too small: #GP(vector * 8 + 2 + EXT).
TEST(Priv, IdtLimit)
{
    K k;
    k->idtr.limit = 0x80 * 16 - 1; // vectors 0..0x7f
    k.user({0xcd, 0x80});
    ASSERT_EQ(k.step(), ES_OK);
    expect_in_handler(k, ES_VEC_GP, 6);
    expect_frame(k, true, 0x80 * 8 + 2, C, 0x33, 0x202, USTACK, 0x2b);
}

// ---- LTR, LIDT, IRETQ ----

TEST(Priv, LtrMarksBusy)
{
    K k;
    k->tr = es_segreg{};
    k.kernel_at(KCODE + 0x9000, {0x0f, 0x00, 0xd8}); // ltr ax
    k->gpr[ES_RAX] = TSS_SEL;
    ASSERT_EQ(k.step(), ES_OK) << k->message;
    EXPECT_EQ(k->tr.sel, TSS_SEL);
    EXPECT_EQ(k->tr.base, TSS);
    EXPECT_EQ(k->tr.limit, 0x67u);
    EXPECT_EQ((k.q(GDT + 8 * 8) >> 40) & 0xff, 0x8bu); // busy 64-bit TSS
    // again: a busy TSS is not available -> #GP(sel)
    k.kernel_at(KCODE + 0x9000, {0x0f, 0x00, 0xd8});
    k->gpr[ES_RSP] = KSTACK - 0x100;
    ASSERT_EQ(k.step(), ES_OK);
    expect_in_handler(k, ES_VEC_GP, 6, KSTACK - 0x100);
    expect_frame(k, true, TSS_SEL, KCODE + 0x9000, 0x10, 0x202, KSTACK - 0x100, 0x18);
    // a code segment selector: #GP(sel)
    K c;
    c.kernel_at(KCODE + 0x9000, {0x0f, 0x00, 0xd8});
    c->gpr[ES_RSP] = KSTACK - 0x100;
    c->gpr[ES_RAX] = 0x10;
    ASSERT_EQ(c.step(), ES_OK);
    expect_frame(c, true, 0x10, KCODE + 0x9000, 0x10, 0x202, KSTACK - 0x100, 0x18);
}

TEST(Priv, LidtSidt)
{
    K k;
    uint8_t desc[10] = {0xff, 0x0f};
    uint64_t base = IDT;
    memcpy(desc + 2, &base, 8);
    k.put(KBUF, desc, 10);
    // lidt [rax]; sidt [rbx]
    k.kernel_at(KCODE + 0x9000, {0x0f, 0x01, 0x18, 0x0f, 0x01, 0x0b});
    k->idtr.base = 0;
    k->idtr.limit = 0;
    k->gpr[ES_RAX] = KBUF;
    k->gpr[ES_RBX] = KBUF + 0x10;
    ASSERT_EQ(k.step(), ES_OK);
    EXPECT_EQ(k->idtr.base, IDT);
    EXPECT_EQ(k->idtr.limit, 0xfffu);
    ASSERT_EQ(k.step(), ES_OK);
    EXPECT_EQ(k.q(KBUF + 0x12), IDT);
}

// IRETQ from ring 0 to ring 0 pops SS:RSP too; to a compatibility-mode CS
// in ring 3 switches mode.
TEST(Priv, IretqForms)
{
    K k;
    k.kernel_at(KCODE + 0x9000, {0x48, 0xcf});
    uint64_t f[5] = {KCODE + 0x9100, 0x10, 0x2, KSTACK - 0x400, 0x18};
    k->gpr[ES_RSP] = KSTACK - 0x100;
    k.put(KSTACK - 0x100, f, sizeof f);
    k->seg[ES_SEG_SS] = es_segreg{0, 0, 0, 0}; // after an interrupt from ring 3
    ASSERT_EQ(k.step(), ES_OK) << k->message;
    EXPECT_EQ(k->rip, KCODE + 0x9100);
    EXPECT_EQ(k->gpr[ES_RSP], KSTACK - 0x400);
    EXPECT_EQ(k->seg[ES_SEG_SS].sel, 0x18);
    EXPECT_EQ(k->cpl, 0);
    EXPECT_EQ(k->rflags, 0x2u);

    K c;
    c.kernel_at(KCODE + 0x9000, {0x48, 0xcf});
    uint64_t g[5] = {C + 0x20, 0x23, 0x246, USTACK - 0x10, 0x2b};
    c->gpr[ES_RSP] = KSTACK - 0x100;
    c.put(KSTACK - 0x100, g, sizeof g);
    ASSERT_EQ(c.step(), ES_OK) << c->message;
    EXPECT_EQ(c->rip, C + 0x20);
    EXPECT_EQ(c->cpl, 3);
    EXPECT_EQ(c->mode, ES_MODE_32);
    EXPECT_EQ(c->seg[ES_SEG_CS].sel, 0x23);
    EXPECT_EQ(c->seg[ES_SEG_SS].sel, 0x2b);
    EXPECT_EQ(c->gpr[ES_RSP], USTACK - 0x10);
    EXPECT_EQ(c->rflags, 0x246u);
}

// HLT at CPL 0 with nothing to wake it stops the run; MOV CR3 flushes the
// TLB; CLI/STI at CPL 0.
TEST(Priv, HltCliStiMovCr)
{
    K k;
    // cli; sti; mov rax, cr3; mov cr3, rax; hlt
    k.kernel_at(KCODE + 0x9000, {0xfa, 0xfb, 0x0f, 0x20, 0xd8, 0x0f, 0x22, 0xd8, 0xf4});
    uint64_t cr3 = k->cr3;
    ASSERT_EQ(k.step(), ES_OK);
    EXPECT_EQ(k->rflags & ES_IF, 0u);
    ASSERT_EQ(k.step(), ES_OK);
    EXPECT_EQ(k->rflags & ES_IF, ES_IF);
    ASSERT_EQ(k.step(), ES_OK);
    EXPECT_EQ(k->gpr[ES_RAX], cr3);
    ASSERT_EQ(k.step(), ES_OK);
    EXPECT_EQ(k->tlb[0].tag, 1u);
    EXPECT_EQ(es_run(k.m), ES_STOP_HLT);
}

// Kernel accesses to not-yet-touched user pages of a VMA are demand-paged
// like user accesses (Linux's fault handler serves get_user the same way).
TEST(Priv, KernelAccessDemandPagesUserVma)
{
    K k;
    const uint64_t va = 0x10000000;
    ASSERT_EQ(es_vm_map(k.m, va, 0x4000, ES_PROT_R | ES_PROT_W), 0);
    k.kernel_at(KCODE + 0x9000, {0x48, 0x8b, 0x03, 0x48, 0x8b, 0x03}); // mov rax, [rbx] x2
    k->gpr[ES_RBX] = va + 0x1008;
    k->gpr[ES_RAX] = 1;
    ASSERT_EQ(k.step(), ES_OK) << k->message;
    EXPECT_EQ(k->rip, KCODE + 0x9003); // no #PF: the page was materialised
    EXPECT_EQ(k->gpr[ES_RAX], 0u);
    // outside any VMA the kernel's access faults (supervisor read: error 0)
    k->gpr[ES_RBX] = va + 0x8000;
    k->gpr[ES_RSP] = KSTACK - 0x100;
    ASSERT_EQ(k.step(), ES_OK);
    expect_in_handler(k, ES_VEC_PF, 6, KSTACK - 0x100);
    expect_frame(k, true, 0, KCODE + 0x9003, 0x10, 0x202, KSTACK - 0x100, 0x18);
    EXPECT_EQ(k->cr2, va + 0x8000);
}

// The whole path through es_run: a user getpid by SYSCALL into a kernel
// entry that does SWAPGS, switches to its stack, asks the host by VMCALL,
// and returns by SYSRETQ.
TEST(Priv, SyscallRoundTripThroughKernel)
{
    K k;
    host_init(k.m);
    const uint64_t percpu = KBUF + 0x100;
    k.put(k->msr.lstar,
          {0x0f, 0x01, 0xf8,                                     // swapgs
           0x65, 0x48, 0x89, 0x24, 0x25, 0x10, 0x00, 0x00, 0x00, // mov %rsp, %gs:0x10
           0x65, 0x48, 0x8b, 0x24, 0x25, 0x08, 0x00, 0x00, 0x00, // mov %gs:0x8, %rsp
           0x51, 0x41, 0x53,                                     // push %rcx; push %r11
           0x48, 0x89, 0xc6,                                     // mov %rax, %rsi
           0x48, 0xba, 0x00, 0x30, 0x00, 0x82, 0xff, 0xff, 0xff, 0xff, // movabs $KBUF, %rdx
           0x31, 0xff,                                           // xor %edi, %edi
           0xb8, 0x01, 0x00, 0x00, 0x00,                         // mov $ES_HC_SYSCALL, %eax
           0x0f, 0x01, 0xc1,                                     // vmcall
           0x41, 0x5b, 0x59,                                     // pop %r11; pop %rcx
           0x65, 0x48, 0x8b, 0x24, 0x25, 0x10, 0x00, 0x00, 0x00, // mov %gs:0x10, %rsp
           0x0f, 0x01, 0xf8,                                     // swapgs
           0x48, 0x0f, 0x07});                                   // sysretq
    uint64_t kstack = KSTACK;
    k.put(percpu + 8, &kstack, 8);
    k->msr.kernel_gs_base = percpu;
    k->seg[ES_SEG_GS].base = 0x7000; // the user's
    const std::vector<uint8_t> user = {0xb8, 0x27, 0x00, 0x00, 0x00, // mov $39, %eax
                                       0x0f, 0x05};                  // syscall
    k.user(user);
    k->rflags = 0x247;
    ASSERT_EQ(est_run(k.m, user.size(), 100), 0) << k->message;
    EXPECT_EQ(k->gpr[ES_RAX], 1000u);
    EXPECT_EQ(k->gpr[ES_RCX], C + 7);
    EXPECT_EQ(k->gpr[ES_R11], 0x247u);
    EXPECT_EQ(k->rflags, 0x247u);
    EXPECT_EQ(k->gpr[ES_RSP], USTACK);
    EXPECT_EQ(k->seg[ES_SEG_GS].base, 0x7000u);
    EXPECT_EQ(k->msr.kernel_gs_base, percpu);
    EXPECT_EQ(k->cpl, 3);
    EXPECT_EQ(k.q(percpu + 0x10), USTACK);
    EXPECT_EQ(k->icount, 2u + 15u); // user + kernel instructions retired
}
