// Programs whose syscalls go through the modeled kernel: every embedded image
// has the contract symbols, results match --direct, the pt_regs layout on
// the kernel stack, and how the kernel returns to user mode.  Shared helpers
// in kernel_util.h.

#include <gtest/gtest.h>

#include "kernel_util.h"

namespace {

TEST(KernelImages, EveryVariantLoadsWithTheContractSymbols)
{
    if (!have_images())
        GTEST_SKIP() << "entrysim was built without kernel_model/";
    const char *always[] = {
        "startup_64", "es_boot_info", "vsyscall_page", "entry_SYSCALL_64",
        "entry_INT80_compat", "entry_SYSCALL_compat", "entry_SYSENTER_compat", "do_syscall_64",
        "do_int80_syscall_32", "do_fast_syscall_32", "emulate_vsyscall", "sys_call_table",
        "ia32_sys_call_table", "sys_ni_syscall",
    };
    for (unsigned p = 0; p < 16; p++) {
        Machine h;
        es_machine *m = h.m;
        ASSERT_EQ(es_kernel_load(m, p), 0) << p << ": " << m->message;
        EXPECT_EQ(es_kernel_patches(m), p);
        for (const char *s : always)
            EXPECT_NE(es_kernel_sym(m, s), 0u) << s << " missing in variant " << p;
        // the naming of the 64-bit stubs follows fa697140, the compat ones ebeb8c82
        bool x64 = p & ES_PATCH_FA697140, compat = p & ES_PATCH_EBEB8C82;
        EXPECT_EQ(es_kernel_sym(m, "__x64_sys_read") != 0, x64) << p;
        EXPECT_EQ(es_kernel_sym(m, "__do_sys_getpid") != 0 || es_kernel_sym(m, "__do_sys_read") != 0,
                  x64 || compat)
            << p;
        if (!x64) {
            EXPECT_NE(es_kernel_sym(m, "SyS_read"), 0u) << p;
        }
        EXPECT_EQ(es_kernel_sym(m, "__ia32_sys_read") != 0, compat) << p;
        EXPECT_NE(es_kernel_sym(m, x64 ? "__x64_sys_recv" : "SyS_recv"), 0u) << p;
        // the table entries point into the image
        uint64_t tbl = es_kernel_sym(m, "sys_call_table"), t0 = 0;
        ASSERT_EQ(es_kernel_read(m, tbl, &t0, 8), 0);
        uint64_t off;
        const char *name = es_kernel_addr2sym(m, t0, &off);
        ASSERT_NE(name, nullptr);
        EXPECT_EQ(off, 0u);
        EXPECT_NE(std::string(name).find("read"), std::string::npos) << name;
        // vsyscall page present and user-readable
        uint64_t e = pte_of(m, ES_VSYSCALL_ADDR);
        EXPECT_TRUE((e & ES_PTE_P) && (e & ES_PTE_U) && (e & ES_PTE_NX) && !(e & ES_PTE_W));
    }
}

// Returns to user mode: which instruction (its op) took the CPU from CPL 0
// to CPL 3, in order.
struct Returns {
    uint16_t last_op = 0;
    int last_cpl = 0;
    std::vector<uint16_t> ops;
};

void ret_before(void *ctx, es_machine *m, const es_insn *d, uint64_t)
{
    auto *r = static_cast<Returns *>(ctx);
    r->last_op = d->op;
    r->last_cpl = m->cpl;
}

void ret_mode(void *ctx, es_machine *m, int cpl, int)
{
    auto *r = static_cast<Returns *>(ctx);
    if (cpl == 3 && r->last_cpl == 0)
        r->ops.push_back(r->last_op);
}

// getpid; write(1, "hello", 5); syscall 999; x32 bit on the 64-only row
// 19 (readv); getpid by int 0x80; x32 number 1000 (beyond the table);
// int 0x80 number 999; exit(7).  Results at URES + 0..0x30.
const std::vector<uint8_t> k_calls = {
    0xb8, 0x27, 0x00, 0x00, 0x00, 0x0f, 0x05, 0x48, 0x89, 0x04, 0x25, 0x00,
    0x08, 0x40, 0x00, 0xb8, 0x01, 0x00, 0x00, 0x00, 0xbf, 0x01, 0x00, 0x00,
    0x00, 0x48, 0x8d, 0x35, 0x66, 0x00, 0x00, 0x00, 0xba, 0x05, 0x00, 0x00,
    0x00, 0x0f, 0x05, 0x48, 0x89, 0x04, 0x25, 0x08, 0x08, 0x40, 0x00, 0xb8,
    0xe7, 0x03, 0x00, 0x00, 0x0f, 0x05, 0x48, 0x89, 0x04, 0x25, 0x10, 0x08,
    0x40, 0x00, 0xb8, 0x13, 0x00, 0x00, 0x40, 0x0f, 0x05, 0x48, 0x89, 0x04,
    0x25, 0x18, 0x08, 0x40, 0x00, 0xb8, 0x14, 0x00, 0x00, 0x00, 0xcd, 0x80,
    0x48, 0x89, 0x04, 0x25, 0x20, 0x08, 0x40, 0x00, 0xb8, 0xe8, 0x03, 0x00,
    0x40, 0x0f, 0x05, 0x48, 0x89, 0x04, 0x25, 0x28, 0x08, 0x40, 0x00, 0xb8,
    0xe7, 0x03, 0x00, 0x00, 0xcd, 0x80, 0x48, 0x89, 0x04, 0x25, 0x30, 0x08,
    0x40, 0x00, 0xb8, 0x3c, 0x00, 0x00, 0x00, 0xbf, 0x07, 0x00, 0x00, 0x00,
    0x0f, 0x05, 0x68, 0x65, 0x6c, 0x6c, 0x6f,
};

TEST(KernelRun, SyscallsThroughTheKernelMatchDirect)
{
    if (!have_images())
        GTEST_SKIP() << "entrysim was built without kernel_model/";
    Proc d;
    ASSERT_TRUE(d.start(user_elf(k_calls), -1)) << d.m->message;
    es_run(d.m);
    ASSERT_EQ(d.m->stop, ES_STOP_EXIT) << d.m->message;
    ASSERT_EQ(d.m->exit_status, 7);
    const int64_t enosys = -38;
    ASSERT_EQ((int64_t)d.res(1), 5);
    ASSERT_EQ((int64_t)d.res(2), enosys);
    ASSERT_EQ((int64_t)d.res(5), enosys);
    ASSERT_EQ((int64_t)d.res(6), enosys);
    for (unsigned patches : {0u, 1u, 2u, 4u, 8u, 15u}) {
        SCOPED_TRACE("patches " + std::to_string(patches));
        Proc k;
        ASSERT_TRUE(k.start(user_elf(k_calls), (int)patches)) << k.m->message;
        Returns r;
        es_observer ob{};
        ob.ctx = &r;
        ob.before = ret_before;
        ob.mode_change = ret_mode;
        es_observe(k.m, &ob);
        es_run(k.m);
        ASSERT_EQ(k.m->stop, ES_STOP_EXIT) << k.m->message << " at rip 0x" << std::hex << k.m->rip;
        EXPECT_EQ(k.m->exit_status, 7);
        EXPECT_EQ(k.res(0), d.res(0)) << "getpid";
        EXPECT_EQ((int64_t)k.res(1), 5) << "write";
        EXPECT_EQ(k.output(), "hello");
        EXPECT_EQ((int64_t)k.res(2), enosys) << "nr 999";
        // 4.17 shares one table between 64-bit and x32 (the x32-only table
        // came with 5.4): a 64-only row reached with the x32 bit runs its
        // 64-bit stub, and the host answers as for --direct
        EXPECT_EQ((int64_t)k.res(3), (int64_t)d.res(3)) << "x32 bit on a 64-only row";
        EXPECT_EQ(k.res(4), d.res(0)) << "getpid by int 0x80 from a 64-bit process";
        EXPECT_EQ((int64_t)k.res(5), enosys) << "x32 number beyond the table";
        EXPECT_EQ((int64_t)k.res(6), enosys) << "int 0x80 number 999";
        EXPECT_EQ(k.m->cpl, 0) << "exit_group ends the run inside the kernel's body";
        // the boot's IRETQ, then SYSRET after each SYSCALL and IRETQ after
        // each INT 0x80
        ASSERT_EQ(r.ops.size(), 8u);
        EXPECT_EQ(r.ops[0], ES_OP_IRETQ) << "entry to user mode";
        for (int i : {1, 2, 3, 4, 6})
            EXPECT_EQ(r.ops[i], ES_OP_SYSRET) << "return " << i;
        EXPECT_EQ(r.ops[5], ES_OP_IRETQ) << "int 0x80 returns by IRET";
        EXPECT_EQ(r.ops[7], ES_OP_IRETQ) << "int 0x80 returns by IRET";
    }
}

TEST(KernelRun, ReachesUserModeAtTheEntryPoint)
{
    if (!have_images())
        GTEST_SKIP() << "entrysim was built without kernel_model/";
    Proc k;
    ASSERT_TRUE(k.start(user_elf({0x90, 0xf4}), 15)) << k.m->message;
    uint64_t sp = 0;
    for (int i = 0; i < 200000 && k.m->cpl != 3; i++) {
        if (k.m->cpl == 0 && sp == 0)
            sp = k.m->gpr[ES_RSP];
        ASSERT_EQ(es_step(k.m), ES_OK) << k.m->message << " at 0x" << std::hex << k.m->rip;
    }
    ASSERT_EQ(k.m->cpl, 3);
    EXPECT_EQ(k.m->rip, UCODE);
    EXPECT_EQ(k.m->mode, ES_MODE_64);
    EXPECT_EQ(k.m->seg[ES_SEG_CS].sel, 0x33);
    EXPECT_EQ(k.m->seg[ES_SEG_SS].sel, 0x2b);
    EXPECT_EQ(k.m->rflags & 0x3fffff & ~ES_RF, 0x202u);
    es_boot_info bi;
    ASSERT_EQ(es_kernel_read(k.m, es_kernel_sym(k.m, "es_boot_info"), &bi, sizeof bi), 0);
    EXPECT_EQ(k.m->gpr[ES_RSP], bi.user_rsp);
    // start_thread's registers: everything else zero
    for (int r = 0; r < 16; r++) {
        if (r != ES_RSP) {
            EXPECT_EQ(k.m->gpr[r], 0u) << "gpr " << r;
        }
    }
}

// pt_regs as the dispatcher sees it: at do_syscall_64's first instruction
// the entry code has pushed the user's registers in Linux's order.
struct Regs {
    uint64_t dispatch = 0, user_rsp = 0, syscall_rip = 0;
    unsigned patches = 0;
    bool seen = false;
    uint64_t regs_ptr = 0;
    uint8_t frame[168];
};

void regs_before(void *ctx, es_machine *m, const es_insn *, uint64_t rip)
{
    auto *r = static_cast<Regs *>(ctx);
    if (m->cpl == 3 && rip == r->syscall_rip)
        r->user_rsp = m->gpr[ES_RSP];
    if (rip == r->dispatch && !r->seen) {
        r->seen = true;
        // do_syscall_64(regs) in v4.16, do_syscall_64(nr, regs) after dfe64506
        r->regs_ptr = m->gpr[(r->patches & ES_PATCH_DFE64506) ? ES_RSI : ES_RDI];
        es_kernel_read(m, r->regs_ptr, r->frame, sizeof r->frame);
    }
}

const std::vector<uint8_t> k_markers = {
    0x48, 0xbb, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x48, 0xbd, 0x22, 0x22,
    0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x49, 0xbc, 0x33, 0x33, 0x33, 0x33, 0x33, 0x33,
    0x33, 0x33, 0x49, 0xbd, 0x44, 0x44, 0x44, 0x44, 0x44, 0x44, 0x44, 0x44, 0x49, 0xbe,
    0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x49, 0xbf, 0x66, 0x66, 0x66, 0x66,
    0x66, 0x66, 0x66, 0x66, 0x48, 0xbf, 0x77, 0x77, 0x77, 0x77, 0x77, 0x77, 0x77, 0x77,
    0x48, 0xbe, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x48, 0xba, 0x99, 0x99,
    0x99, 0x99, 0x99, 0x99, 0x99, 0x99, 0x49, 0xba, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa,
    0xaa, 0xaa, 0x49, 0xb8, 0xbb, 0xbb, 0xbb, 0xbb, 0xbb, 0xbb, 0xbb, 0xbb, 0x49, 0xb9,
    0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xb8, 0x27, 0x00, 0x00, 0x00, 0x0f,
    0x05, 0xb8, 0x3c, 0x00, 0x00, 0x00, 0x31, 0xff, 0x0f, 0x05,
};
constexpr uint64_t k_markers_syscall = UCODE + 125; // the first `syscall`

TEST(KernelRun, PtRegsLayoutAtTheDispatcher)
{
    if (!have_images())
        GTEST_SKIP() << "entrysim was built without kernel_model/";
    for (unsigned patches : {0u, 15u}) {
        SCOPED_TRACE("patches " + std::to_string(patches));
        Proc k;
        ASSERT_TRUE(k.start(user_elf(k_markers), (int)patches)) << k.m->message;
        Regs r;
        r.dispatch = es_kernel_sym(k.m, "do_syscall_64");
        ASSERT_NE(r.dispatch, 0u);
        r.syscall_rip = k_markers_syscall;
        r.patches = patches;
        es_observer ob{};
        ob.ctx = &r;
        ob.before = regs_before;
        es_observe(k.m, &ob);
        es_run(k.m);
        ASSERT_EQ(k.m->stop, ES_STOP_EXIT) << k.m->message;
        ASSERT_TRUE(r.seen);
        ASSERT_NE(r.user_rsp, 0u);
        auto at = [&](int off) {
            uint64_t v;
            memcpy(&v, r.frame + off, 8);
            return v;
        };
        EXPECT_EQ(at(0x00), 0x6666666666666666u) << "r15";
        EXPECT_EQ(at(0x08), 0x5555555555555555u) << "r14";
        EXPECT_EQ(at(0x10), 0x4444444444444444u) << "r13";
        EXPECT_EQ(at(0x18), 0x3333333333333333u) << "r12";
        EXPECT_EQ(at(0x20), 0x2222222222222222u) << "bp";
        EXPECT_EQ(at(0x28), 0x1111111111111111u) << "bx";
        EXPECT_EQ(at(0x30) & ~(uint64_t)ES_RF, 0x202u | 0x2u) << "r11 = user rflags";
        EXPECT_EQ(at(0x38), 0xaaaaaaaaaaaaaaaau) << "r10";
        EXPECT_EQ(at(0x40), 0xccccccccccccccccu) << "r9";
        EXPECT_EQ(at(0x48), 0xbbbbbbbbbbbbbbbbu) << "r8";
        EXPECT_EQ((int64_t)at(0x50), -38) << "ax = -ENOSYS";
        EXPECT_EQ(at(0x58), k_markers_syscall + 2) << "cx = user rip";
        EXPECT_EQ(at(0x60), 0x9999999999999999u) << "dx";
        EXPECT_EQ(at(0x68), 0x8888888888888888u) << "si";
        EXPECT_EQ(at(0x70), 0x7777777777777777u) << "di";
        EXPECT_EQ(at(0x78), 39u) << "orig_ax";
        EXPECT_EQ(at(0x80), k_markers_syscall + 2) << "ip";
        EXPECT_EQ(at(0x88), 0x33u) << "cs";
        EXPECT_EQ(at(0x90) & 0x3fffff & ~(uint64_t)ES_RF, 0x202u) << "flags";
        EXPECT_EQ(at(0x98), r.user_rsp) << "sp";
        EXPECT_EQ(at(0xa0), 0x2bu) << "ss";
        // pt_regs ends at the (16-byte aligned) top of the kernel stack
        EXPECT_EQ((r.regs_ptr + 168) & 0xf, 0u);
    }
}

// A syscall whose saved user RIP is changed while in the kernel (as
// ptrace or execve would): RCX no longer equals RIP, so the kernel must
// return by IRET (and to the new RIP), not SYSRET.
const std::vector<uint8_t> k_newip = {
    0xb8, 0x27, 0x00, 0x00, 0x00, 0x0f, 0x05,                         // getpid
    0xb8, 0x3c, 0x00, 0x00, 0x00, 0xbf, 0x01, 0x00, 0x00, 0x00, 0x0f, 0x05, // exit(1)
    0xb8, 0x3c, 0x00, 0x00, 0x00, 0xbf, 0x02, 0x00, 0x00, 0x00, 0x0f, 0x05, // exit(2)
};

struct NewIp {
    uint64_t dispatch = 0;
    unsigned patches = 0;
    int hits = 0;
};

void newip_before(void *ctx, es_machine *m, const es_insn *, uint64_t rip)
{
    auto *r = static_cast<NewIp *>(ctx);
    if (rip != r->dispatch || r->hits++)
        return;
    uint64_t regs = m->gpr[(r->patches & ES_PATCH_DFE64506) ? ES_RSI : ES_RDI];
    uint64_t ip = UCODE + 19;
    es_kernel_write(m, regs + 0x80, &ip, 8);
}

TEST(KernelRun, ChangedReturnRipForcesIret)
{
    if (!have_images())
        GTEST_SKIP() << "entrysim was built without kernel_model/";
    for (unsigned patches : {0u, 15u}) {
        SCOPED_TRACE("patches " + std::to_string(patches));
        Proc k;
        ASSERT_TRUE(k.start(user_elf(k_newip), (int)patches)) << k.m->message;
        Returns r;
        NewIp n;
        n.dispatch = es_kernel_sym(k.m, "do_syscall_64");
        n.patches = patches;
        es_observer ob{};
        ob.ctx = &r;
        ob.before = ret_before;
        ob.mode_change = ret_mode;
        es_observe(k.m, &ob);
        es_observer ob2{};
        ob2.ctx = &n;
        ob2.before = newip_before;
        es_observe(k.m, &ob2);
        es_run(k.m);
        ASSERT_EQ(k.m->stop, ES_STOP_EXIT) << k.m->message;
        EXPECT_EQ(k.m->exit_status, 2) << "returned to the RIP in pt_regs";
        ASSERT_GE(r.ops.size(), 2u);
        EXPECT_EQ(r.ops[0], ES_OP_IRETQ);
        EXPECT_EQ(r.ops[1], ES_OP_IRETQ) << "RCX != RIP: SYSRET would return to RCX";
    }
}

// The legacy vsyscall page: calls into it fault (the page is not
// executable) and the kernel emulates time() and getcpu() (vsyscall=emulate).
const std::vector<uint8_t> k_vsyscall = {
    0x31, 0xff, 0x48, 0xc7, 0xc0, 0x00, 0x04, 0x60, 0xff, 0xff, 0xd0, 0x48, // time(NULL)
    0x89, 0x04, 0x25, 0x00, 0x08, 0x40, 0x00, 0xb8, 0xc9, 0x00, 0x00, 0x00, // then the syscall
    0x31, 0xff, 0x0f, 0x05, 0x48, 0x89, 0x04, 0x25, 0x08, 0x08, 0x40, 0x00,
    0xbf, 0x40, 0x08, 0x40, 0x00, 0xbe, 0x48, 0x08, 0x40, 0x00, 0x31, 0xd2, // getcpu(&c, &n, 0)
    0x48, 0xc7, 0xc0, 0x00, 0x08, 0x60, 0xff, 0xff, 0xd0, 0x48, 0x89, 0x04,
    0x25, 0x10, 0x08, 0x40, 0x00, 0xb8, 0x3c, 0x00, 0x00, 0x00, 0x31, 0xff, // exit(0)
    0x0f, 0x05,
};

TEST(KernelRun, VsyscallEmulation)
{
    if (!have_images())
        GTEST_SKIP() << "entrysim was built without kernel_model/";
    for (unsigned patches : {0u, 15u}) {
        SCOPED_TRACE("patches " + std::to_string(patches));
        auto elf = user_elf(k_vsyscall);
        for (int i = 0; i < 16; i++)
            elf[0x840 + i] = 0xff;
        Proc k;
        ASSERT_TRUE(k.start(elf, (int)patches)) << k.m->message;
        es_run(k.m);
        ASSERT_EQ(k.m->stop, ES_STOP_EXIT) << k.m->message;
        EXPECT_EQ(k.m->exit_status, 0);
        int64_t vt = (int64_t)k.res(0), st = (int64_t)k.res(1);
        EXPECT_GT(vt, 1000000000) << "time() through the vsyscall page";
        EXPECT_LE(vt, st);
        EXPECT_LE(st - vt, 1);
        EXPECT_EQ(k.res(2), 0u) << "getcpu returns 0";
        EXPECT_EQ(k.res(8), 0xffffffff00000000u) << "cpu written (4 bytes)";
        EXPECT_EQ(k.res(9), 0xffffffff00000000u) << "node written (4 bytes)";
    }
}

} // namespace
