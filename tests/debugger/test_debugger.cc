// The debugger's session model (debugger/dbg.h): scripted sessions on real
// guest programs through the guest kernel -- run control, the pt_regs view
// as the entry code builds it under v4.16 and v4.17, taint labels, reverse
// execution restoring the exact state, breakpoints, command errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include "session.h"
#include "build_path.h"
#include "dbg.h"
#include "kernel.h"
#include "mitigations.h"

namespace {


bool at_syscall_insn(es_dbg *d)
{
    uint8_t b[2] = {0, 0};
    es_machine *m = es_dbg_machine(d);
    return es_dbg_read(d, m->rip, b, 2) == 2 && b[0] == 0x0f && b[1] == 0x05;
}

// pt_regs slot index (address order, r15 first) of a field name
int slot(const char *f)
{
    static const char *const n[] = {"r15", "r14", "r13", "r12", "bp",      "bx", "r11",
                                    "r10", "r9",  "r8",  "ax",  "cx",      "dx", "si",
                                    "di",  "orig_ax", "ip", "cs", "flags", "sp", "ss"};
    for (int i = 0; i < ES_DBG_PTREGS_SLOTS; i++)
        if (!strcmp(n[i], f))
            return i;
    return -1;
}

// Everything the undo log promises to restore: the architectural part of
// the machine, the instruction count and every guest frame.
struct State {
    std::vector<uint8_t> arch;
    uint64_t icount;
    std::map<uint64_t, std::vector<uint8_t>> frames;
    es_label taint[17];
};

State capture(es_dbg *d)
{
    State s;
    es_machine *m = es_dbg_machine(d);
    const uint8_t *b = reinterpret_cast<const uint8_t *>(m);
    s.arch.assign(b + offsetof(es_machine, gpr), b + offsetof(es_machine, fault));
    s.icount = m->icount;
    for (uint64_t p = 0; p < m->nframes; p++)
        if (m->frames[p].host)
            s.frames[p].assign(m->frames[p].host, m->frames[p].host + 4096);
    for (int r = 0; r < 16; r++)
        s.taint[r] = es_taint_reg(es_dbg_taint(d), r);
    s.taint[16] = es_taint_flags(es_dbg_taint(d));
    return s;
}

void expect_same(const State &a, const State &b)
{
    EXPECT_EQ(a.icount, b.icount);
    ASSERT_EQ(a.arch.size(), b.arch.size());
    for (size_t i = 0; i < a.arch.size(); i += 8)
        EXPECT_EQ(memcmp(&a.arch[i], &b.arch[i], 8), 0)
            << "architectural state differs at offset " << i + offsetof(es_machine, gpr);
    int diff = 0;
    for (const auto &f : a.frames) {
        auto it = b.frames.find(f.first);
        // frames that exist only afterwards were paged in by the host
        if (it != b.frames.end() && f.second != it->second && ++diff < 5) {
            size_t k = 0;
            while (f.second[k] == it->second[k])
                k++;
            ADD_FAILURE() << "frame " << f.first << " differs at offset " << k << ": "
                          << (unsigned)f.second[k] << " then " << (unsigned)it->second[k];
        }
    }
    EXPECT_EQ(diff, 0);
    for (int r = 0; r < 17; r++)
        EXPECT_EQ(a.taint[r], b.taint[r]) << "taint of register " << r;
}

// ------------------------------------------------------------ run control

TEST(DebuggerRun, StartsAtTheProgramsEntry)
{
    Session s("asm_hello", ES_CONV_V417);
    NEED(s);
    EXPECT_EQ(s.m()->cpl, 3);
    uint64_t start = 0;
    char err[200];
    ASSERT_EQ(es_dbg_resolve(s.d, "_start", &start, err, sizeof err), 0) << err;
    EXPECT_EQ(s.m()->rip, start);
    uint64_t off = 1;
    const char *sym = es_dbg_symbolize(s.d, start + 5, &off);
    ASSERT_NE(sym, nullptr);
    EXPECT_STREQ(sym, "_start");
    EXPECT_EQ(off, 5u);
}

TEST(DebuggerRun, SyscallThenStepEntersTheKernel)
{
    Session s("asm_hello", ES_CONV_V417);
    NEED(s);
    std::string out = s.ok("syscall");
    EXPECT_NE(out.find("[reached]"), std::string::npos) << out;
    EXPECT_EQ(s.m()->cpl, 3);
    EXPECT_TRUE(at_syscall_insn(s.d));
    EXPECT_EQ(s.m()->gpr[0], 1u); // write
    uint64_t user_rip = s.m()->rip;
    s.ok("step");
    EXPECT_EQ(s.m()->cpl, 0);
    EXPECT_EQ(s.m()->rip, es_kernel_sym(s.m(), "entry_SYSCALL_64"));
    EXPECT_EQ(s.m()->gpr[1], user_rip + 2); // SYSCALL saved the return RIP in RCX
    // the register view marks what the step changed
    es_dbg_reg r[ES_DBG_MAX_REGS];
    size_t n = es_dbg_regs(s.d, r, ES_DBG_MAX_REGS);
    std::map<std::string, bool> changed;
    for (size_t i = 0; i < n; i++)
        changed[r[i].name] = r[i].changed;
    EXPECT_TRUE(changed["rip"]);
    EXPECT_TRUE(changed["rcx"]);
    EXPECT_TRUE(changed["r11"]);
    EXPECT_TRUE(changed["cpl"]);
    EXPECT_FALSE(changed["rdi"]);
    EXPECT_FALSE(changed["lstar"]);
    // the disassembly is at the entry, labelled
    es_dbg_line l[8];
    size_t k = es_dbg_disasm(s.d, 2, 3, l, 8);
    ASSERT_GE(k, 1u);
    EXPECT_TRUE(l[0].current);
    EXPECT_STREQ(l[0].sym, "entry_SYSCALL_64");
    EXPECT_NE(std::string(l[0].text).find("swapgs"), std::string::npos) << l[0].text;
}

// Issue 13: a call's target is shown by name, not as a bare address.
TEST(DebuggerRun, DisassemblyNamesCallTargets)
{
    Session s("asm_hello", ES_CONV_V417);
    NEED(s);
    s.ok("until do_syscall_64");
    es_dbg_line l[64];
    size_t k = es_dbg_disasm(s.d, 0, 63, l, 64);
    bool named = false;
    for (size_t i = 0; i < k; i++)
        named |= std::string(l[i].text).find("<__x86_indirect_thunk_rax>") != std::string::npos ||
                 std::string(l[i].text).find("<sys_call_table>") != std::string::npos;
    EXPECT_TRUE(named) << (k ? l[0].text : "no lines");
}

TEST(DebuggerRun, KentryKexitAndExit)
{
    Session s("asm_hello", ES_CONV_V416);
    NEED(s);
    s.ok("kentry");
    EXPECT_EQ(s.m()->cpl, 0);
    EXPECT_EQ(s.m()->rip, es_kernel_sym(s.m(), "entry_SYSCALL_64"));
    uint64_t ret = s.m()->gpr[1];
    s.ok("kexit");
    EXPECT_EQ(s.m()->cpl, 3);
    EXPECT_EQ(s.m()->rip, ret);
    EXPECT_EQ(s.m()->gpr[0], 13u); // write returned the length of "hello, world\n"
    // back in user mode registers carry no labels (they are the user's)
    es_dbg_reg r[ES_DBG_MAX_REGS];
    size_t nr = es_dbg_regs(s.d, r, ES_DBG_MAX_REGS);
    for (size_t i = 0; i < nr; i++)
        EXPECT_EQ(r[i].taint, 0u) << r[i].name;
    size_t len = 0;
    EXPECT_EQ(std::string(es_dbg_output(s.d, &len)), "hello, world\n");
    std::string out = s.ok("continue");
    EXPECT_NE(out.find("[exited: status 0]"), std::string::npos) << out;
    es_dbg_status st;
    es_dbg_get_status(s.d, &st);
    EXPECT_TRUE(st.exited);
    EXPECT_STREQ(st.convention, "v4.16");
    int rc;
    s.exec("step", &rc);
    EXPECT_EQ(rc, ES_DBG_CMD_ERROR);
}

TEST(DebuggerRun, NextStepsOverAWholeSyscall)
{
    Session s("asm_hello", ES_CONV_V417);
    NEED(s);
    s.ok("syscall");
    uint64_t after = s.m()->rip + 2;
    std::string out = s.ok("next");
    EXPECT_EQ(s.m()->cpl, 3);
    EXPECT_EQ(s.m()->rip, after) << out;
}

TEST(DebuggerRun, FinishReturnsFromFunctionsAndFromTheEntry)
{
    Session s("musl_hello", ES_CONV_V417);
    NEED(s);
    s.ok("until printf");
    uint64_t off;
    const char *sym = es_dbg_symbolize(s.d, s.m()->rip, &off);
    ASSERT_NE(sym, nullptr);
    EXPECT_STREQ(sym, "printf");
    uint64_t ret = 0;
    ASSERT_EQ(es_dbg_read(s.d, s.m()->gpr[4], &ret, 8), 8u);
    s.ok("finish");
    EXPECT_EQ(s.m()->rip, ret);
    sym = es_dbg_symbolize(s.d, s.m()->rip, &off);
    ASSERT_NE(sym, nullptr);
    EXPECT_STREQ(sym, "main");
}

TEST(DebuggerRun, StaticPieSymbolsCarryTheLoadBias)
{
    Session s("musl_hello_pie", ES_CONV_V417);
    NEED(s);
    uint64_t main_addr = 0;
    char err[200];
    ASSERT_EQ(es_dbg_resolve(s.d, "main", &main_addr, err, sizeof err), 0) << err;
    EXPECT_GT(main_addr, 0x10000u); // relocated, not the ELF's link-time value near 0
    s.ok("break main");
    std::string out = s.ok("continue");
    EXPECT_NE(out.find("[breakpoint 1]"), std::string::npos) << out;
    EXPECT_NE(out.find("<main>"), std::string::npos) << out;
    EXPECT_EQ(s.m()->rip, main_addr);
}

TEST(DebuggerRun, FinishInTheKernel)
{
    // finish inside do_syscall_64 comes back to the entry code; finish in
    // the entry code comes back to user mode
    Session s("asm_hello", ES_CONV_V417);
    NEED(s);
    s.ok("break do_syscall_64");
    s.ok("continue");
    EXPECT_EQ(s.m()->rip, es_kernel_sym(s.m(), "do_syscall_64"));
    uint64_t ret = 0, off;
    ASSERT_EQ(es_dbg_read(s.d, s.m()->gpr[4], &ret, 8), 8u);
    s.ok("finish");
    EXPECT_EQ(s.m()->rip, ret);
    const char *sym = es_dbg_symbolize(s.d, s.m()->rip, &off);
    ASSERT_NE(sym, nullptr);
    EXPECT_EQ(std::string(sym).rfind("entry_SYSCALL_64", 0), 0u) << sym;
    EXPECT_EQ(s.m()->cpl, 0);
    EXPECT_EQ(s.m()->gpr[0], 13u); // write's result
    s.ok("finish");
    EXPECT_EQ(s.m()->cpl, 3);
}

// ---------------------------------------------------------------- pt_regs

// Steps from the kernel entry to do_syscall_64 and checks the frame: the
// hardware-frame pushes first (ss ... ip), then orig_ax, then di ... r15.
void check_frame(unsigned patches, bool dx_cx_cleared)
{
    Session s("asm_hello", patches);
    NEED(s);
    s.ok("syscall");
    uint64_t user_rip = s.m()->rip, user_rsp = s.m()->gpr[4];
    s.ok("step");
    // nothing is written until the first push, which writes ss (swapgs and
    // the stack switch come first)
    int steps = 0;
    while (!s.slots()[slot("ss")].written && steps++ < 20) {
        for (int i = 0; i < ES_DBG_PTREGS_SLOTS; i++)
            EXPECT_FALSE(s.slots()[i].written) << s.slots()[i].field;
        es_dbg_line l;
        ASSERT_EQ(es_dbg_disasm(s.d, 0, 0, &l, 1), 1u);
        bool push = std::string(l.text).rfind("push", 0) == 0;
        s.ok("step");
        EXPECT_EQ(s.slots()[slot("ss")].written, push) << l.text;
    }
    EXPECT_TRUE(s.slots()[slot("ss")].written);
    EXPECT_EQ(s.slots()[slot("ss")].order, 1u);
    EXPECT_FALSE(s.slots()[slot("sp")].written);
    s.ok("until do_syscall_64");
    const es_dbg_slot *sl = s.slots();
    for (int i = 0; i < ES_DBG_PTREGS_SLOTS; i++) {
        EXPECT_TRUE(sl[i].written) << sl[i].field;
        EXPECT_EQ(sl[i].order, (unsigned)(ES_DBG_PTREGS_SLOTS - i)) << sl[i].field;
        EXPECT_EQ(sl[i].off, 8u * i);
    }
    EXPECT_EQ(sl[slot("ip")].value, user_rip + 2);
    EXPECT_EQ(sl[slot("sp")].value, user_rsp);
    EXPECT_EQ(sl[slot("cs")].value, 0x33u);
    EXPECT_EQ(sl[slot("ss")].value, 0x2bu);
    EXPECT_EQ(sl[slot("orig_ax")].value, 1u);
    EXPECT_EQ(sl[slot("ax")].value, (uint64_t)-38); // -ENOSYS
    EXPECT_EQ(sl[slot("di")].value, 1u);             // fd
    EXPECT_EQ(sl[slot("dx")].value, 13u);            // count
    for (const char *f : {"r8", "r9", "r10", "r11", "bx", "bp", "r12", "r13", "r14", "r15"})
        EXPECT_TRUE(sl[slot(f)].cleared) << f;
    EXPECT_EQ(sl[slot("dx")].cleared, dx_cx_cleared);
    EXPECT_EQ(sl[slot("cx")].cleared, dx_cx_cleared);
    for (const char *f : {"di", "si", "ax", "orig_ax", "ip", "cs", "flags", "sp", "ss"})
        EXPECT_FALSE(sl[slot(f)].cleared) << f;
    // taint: the saved user registers carry their own labels
    EXPECT_NE(sl[slot("di")].taint & ES_TL_REG(ES_RDI), 0u);
    EXPECT_STREQ(sl[slot("dx")].labels, "rdx");
    EXPECT_EQ(sl[slot("cs")].taint, 0u);
    std::string p = s.ok("print ptregs");
    EXPECT_NE(p.find("0x70 di"), std::string::npos) << p;
    // dx is live in RDX under v4.16 only (6dc936f clears it)
    EXPECT_EQ((s.reg_taint(ES_RDX) & ES_TL_REG(ES_RDX)) != 0, !dx_cx_cleared);
}

TEST(DebuggerPtRegs, FilledInPushOrderV416) { check_frame(ES_CONV_V416, false); }
TEST(DebuggerPtRegs, FilledInPushOrderV417) { check_frame(ES_CONV_V417, true); }
TEST(DebuggerPtRegs, OnlyTheClearingPatchChangesCleared)
{
    check_frame(ES_PATCH_6DC936F, true);
    check_frame(ES_CONV_V417 & ~ES_PATCH_6DC936F, false);
}

TEST(DebuggerPtRegs, Int80HardwareFrameThenPushes)
{
    Session s("i386_freestanding", ES_CONV_V417);
    NEED(s);
    s.ok("syscall");
    uint8_t b[2] = {0, 0};
    ASSERT_EQ(es_dbg_read(s.d, s.m()->rip, b, 2), 2u);
    EXPECT_EQ(b[0], 0xcd); // int 0x80
    EXPECT_EQ(b[1], 0x80);
    EXPECT_EQ(s.m()->mode, ES_MODE_32);
    s.ok("step");
    EXPECT_EQ(s.m()->rip, es_kernel_sym(s.m(), "entry_INT80_compat"));
    // the CPU pushed ss, sp, flags, cs, ip (in that order) on its way in
    const es_dbg_slot *sl = s.slots();
    const char *hw[] = {"ss", "sp", "flags", "cs", "ip"};
    for (unsigned i = 0; i < 5; i++) {
        EXPECT_TRUE(sl[slot(hw[i])].written) << hw[i];
        EXPECT_EQ(sl[slot(hw[i])].order, i + 1) << hw[i];
    }
    EXPECT_FALSE(sl[slot("orig_ax")].written);
    EXPECT_EQ(sl[slot("cs")].value, 0x23u);
    s.ok("until do_int80_syscall_32");
    sl = s.slots();
    for (int i = 0; i < ES_DBG_PTREGS_SLOTS; i++)
        EXPECT_TRUE(sl[i].written) << sl[i].field;
    // a 32-bit program's labels are the 32-bit names
    EXPECT_STREQ(sl[slot("bx")].labels, "ebx");
    EXPECT_STREQ(sl[slot("ip")].labels, "eip");
    es_dbg_status st;
    es_dbg_get_status(s.d, &st);
    EXPECT_EQ(st.mode, ES_MODE_64);
    s.ok("kexit");
    EXPECT_EQ(s.m()->mode, ES_MODE_32);
}

TEST(DebuggerSession, TimingModelWhenAsked)
{
    std::string path = guest_path("asm_hello");
    es_dbg_cfg c{};
    c.launch.program = path.c_str();
    c.launch.root = "/";
    c.launch.deterministic = true;
    c.launch.stdin_fd = -1;
    c.uarch = "znver4";
    char err[320] = "";
    es_dbg *d = es_dbg_new(&c, err, sizeof err);
    if (!d && access(path.c_str(), R_OK) != 0)
        GTEST_SKIP() << path << " not built";
    ASSERT_NE(d, nullptr) << err;
    es_dbg_status st;
    es_dbg_get_status(d, &st);
    if (!st.timing) {
        es_dbg_free(d);
        GTEST_SKIP() << "no cycle model in this build";
    }
    EXPECT_EQ(es_dbg_exec(d, "step 3", nullptr), ES_DBG_CMD_OK);
    es_dbg_get_status(d, &st);
    EXPECT_GT(st.cycles, 0u);
    // the instructions that ran have a cycle count; those that did not, none
    es_dbg_line l[8];
    EXPECT_EQ(es_dbg_exec(d, "reverse 3", nullptr), ES_DBG_CMD_OK);
    size_t n = es_dbg_disasm(d, 0, 5, l, 8);
    ASSERT_GE(n, 5u);
    for (int i = 0; i < 3; i++)
        EXPECT_GE(l[i].cycles, 0) << l[i].text;
    EXPECT_EQ(l[4].cycles, -1) << l[4].text;
    // an unknown model is not fatal: the session runs without cycles
    c.uarch = "no-such-core";
    es_dbg *d2 = es_dbg_new(&c, err, sizeof err);
    ASSERT_NE(d2, nullptr) << err;
    es_dbg_get_status(d2, &st);
    EXPECT_FALSE(st.timing);
    es_dbg_free(d2);
    es_dbg_free(d);
}

// ------------------------------------------------------------------ taint

TEST(DebuggerTaint, TableTargetRegistersV416VsV417)
{
    {
        Session s("asm_hello", ES_CONV_V416);
        NEED(s);
        const char *target = es_kernel_sym(s.m(), "sys_write") ? "sys_write" : "SyS_write";
        s.ok((std::string("until ") + target).c_str());
        EXPECT_EQ(s.m()->cpl, 0);
        // v4.16 calls sys_write(fd, buf, count) with the user's registers
        EXPECT_NE(s.reg_taint(ES_RDI) & ES_TL_REG(ES_RDI), 0u);
        EXPECT_NE(s.reg_taint(ES_RSI) & ES_TL_REG(ES_RSI), 0u);
        EXPECT_NE(s.reg_taint(ES_RDX) & ES_TL_REG(ES_RDX), 0u);
        std::string p = s.ok("print rdi");
        EXPECT_NE(p.find("{rdi"), std::string::npos) << p;
        es_dbg_live v[64];
        size_t n = es_dbg_exposure(s.d, v, 64);
        bool rdi = false, ptdi = false;
        for (size_t i = 0; i < n; i++) {
            rdi |= !strcmp(v[i].where, "rdi");
            ptdi |= !strcmp(v[i].where, "pt_regs->di");
        }
        EXPECT_TRUE(rdi);
        EXPECT_TRUE(ptdi);
        // at a probe point the exposure table of `entrysim exposure`
        const char *t = es_dbg_probe_table(s.d);
        ASSERT_NE(t, nullptr);
        EXPECT_NE(std::string(t).find("write"), std::string::npos) << t;
    }
    {
        Session s("asm_hello", ES_CONV_V417);
        NEED(s);
        s.ok("until __x64_sys_write");
        // v4.17 passes only the pt_regs pointer
        EXPECT_EQ(s.reg_taint(ES_RDI) & ES_TL_REG(ES_RDI), 0u);
        uint64_t base = 0;
        es_dbg_slot sl[ES_DBG_PTREGS_SLOTS];
        ASSERT_EQ(es_dbg_ptregs(s.d, &base, sl), 0);
        EXPECT_EQ(s.m()->gpr[ES_RDI], base); // &pt_regs
    }
}

// ---------------------------------------------------------------- reverse

TEST(DebuggerReverse, OneStepRestoresEverything)
{
    Session s("asm_hello", ES_CONV_V417);
    NEED(s);
    s.ok("step 2");
    for (int i = 0; i < 30; i++) {
        State a = capture(s.d);
        s.ok("step");
        s.ok("rstep");
        expect_same(a, capture(s.d));
        s.ok("step");
    }
}

TEST(DebuggerReverse, AcrossTheSyscallBoundary)
{
    Session s("asm_hello", ES_CONV_V416);
    NEED(s);
    s.ok("syscall");
    State user = capture(s.d);
    s.ok("step");
    ASSERT_EQ(s.m()->cpl, 0);
    s.ok("reverse");
    EXPECT_EQ(s.m()->cpl, 3);
    EXPECT_TRUE(at_syscall_insn(s.d));
    expect_same(user, capture(s.d));
    // a whole syscall, host write included, and back
    uint64_t before = s.m()->icount;
    s.ok("kexit");
    uint64_t n = s.m()->icount - before;
    ASSERT_GT(n, 20u);
    EXPECT_EQ(s.m()->gpr[0], 13u);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "reverse %llu", (unsigned long long)n);
    s.ok(cmd);
    expect_same(user, capture(s.d));
    for (int i = 0; i < ES_DBG_PTREGS_SLOTS; i++)
        EXPECT_FALSE(s.slots()[i].written) << s.slots()[i].field;
    // and forward again gives the same result
    s.ok("kexit");
    EXPECT_EQ(s.m()->gpr[0], 13u);
    EXPECT_EQ(s.m()->icount - before, n);
    // host-side effects are not undone: the text was written once per run
    size_t len;
    EXPECT_EQ(std::string(es_dbg_output(s.d, &len)), "hello, world\nhello, world\n");
}

// The host writes the read(2) buffer without a CPU store; the log finds
// the change by comparing frames and undoes it too.
TEST(DebuggerReverse, AcrossAHostRead)
{
    std::string path = guest_path("musl_files");
    if (access(path.c_str(), R_OK) != 0)
        GTEST_SKIP() << path << " not built";
    es_dbg_cfg c{};
    c.launch.program = path.c_str();
    c.launch.root = ES_GUEST_SRC;
    c.launch.deterministic = true;
    c.launch.stdin_fd = -1;
    char err[320] = "";
    es_dbg *d = es_dbg_new(&c, err, sizeof err);
    ASSERT_NE(d, nullptr) << err;
    es_machine *m = es_dbg_machine(d);
    int i = 0;
    for (; i < 100; i++) {
        ASSERT_EQ(es_dbg_exec(d, "syscall", nullptr), ES_DBG_CMD_OK);
        if (m->gpr[ES_RAX] == 0 /* read */ || m->gpr[ES_RAX] == 19 /* readv */)
            break;
    }
    ASSERT_LT(i, 100) << "no read";
    State before = capture(d);
    uint64_t n0 = m->icount;
    ASSERT_EQ(es_dbg_exec(d, "next", nullptr), ES_DBG_CMD_OK);
    ASSERT_GT((int64_t)m->gpr[ES_RAX], 0) << "the read read nothing";
    State after = capture(d);
    bool changed = false;
    for (const auto &f : before.frames) {
        auto it = after.frames.find(f.first);
        changed |= it != after.frames.end() && it->second != f.second;
    }
    EXPECT_TRUE(changed);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "reverse %llu", (unsigned long long)(m->icount - n0));
    ASSERT_EQ(es_dbg_exec(d, cmd, nullptr), ES_DBG_CMD_OK);
    expect_same(before, capture(d));
    es_dbg_free(d);
}

TEST(DebuggerReverse, ContinueBackToABreakpointAndHistoryEnd)
{
    Session s("asm_hello", ES_CONV_V417);
    NEED(s);
    s.ok("break entry_SYSCALL_64");
    std::string out = s.ok("continue");
    EXPECT_NE(out.find("[breakpoint 1]"), std::string::npos) << out;
    s.ok("kexit");
    out = s.ok("rcontinue");
    EXPECT_NE(out.find("[breakpoint 1]"), std::string::npos) << out;
    EXPECT_EQ(s.m()->rip, es_kernel_sym(s.m(), "entry_SYSCALL_64"));
    out = s.ok("rcontinue");
    EXPECT_NE(out.find("[history-end]"), std::string::npos) << out;
    uint64_t start;
    char err[200];
    ASSERT_EQ(es_dbg_resolve(s.d, "_start", &start, err, sizeof err), 0);
    EXPECT_EQ(s.m()->rip, start);
    EXPECT_EQ(es_dbg_history(s.d), 0u);
}

TEST(DebuggerReverse, FromTheExit)
{
    Session s("asm_exit42", ES_CONV_V417);
    NEED(s);
    std::string out = s.ok("continue");
    EXPECT_NE(out.find("status 42"), std::string::npos) << out;
    s.ok("reverse 5");
    es_dbg_status st;
    es_dbg_get_status(s.d, &st);
    EXPECT_FALSE(st.exited);
    s.ok("continue");
    es_dbg_get_status(s.d, &st);
    EXPECT_TRUE(st.exited);
    EXPECT_EQ(st.exit_status, 42);
}

TEST(DebuggerReverse, BoundedHistory)
{
    Session s("asm_hello", ES_CONV_V417);
    NEED(s);
    // a session with a 10-instruction log keeps the last 10
    es_dbg_cfg c{};
    c.launch.program = s.path.c_str();
    c.launch.root = "/";
    c.launch.deterministic = true;
    c.launch.stdin_fd = -1;
    c.undo_insns = 10;
    char err[200];
    ASSERT_EQ(es_dbg_restart(s.d, &c, err, sizeof err), 0) << err;
    s.ok("step 25");
    EXPECT_EQ(es_dbg_history(s.d), 10u);
    std::string out = s.ok("reverse 11");
    EXPECT_NE(out.find("[history-end]"), std::string::npos) << out;
}

// ------------------------------------------------------------ breakpoints

TEST(DebuggerBreak, SymbolsAddressesDelete)
{
    Session s("asm_hello", ES_CONV_V417);
    NEED(s);
    std::string out = s.ok("break do_syscall_64");
    EXPECT_NE(out.find("breakpoint 1"), std::string::npos);
    char a[64];
    snprintf(a, sizeof a, "break 0x%llx",
             (unsigned long long)es_kernel_sym(s.m(), "entry_SYSCALL_64"));
    s.ok(a);
    ASSERT_EQ(es_dbg_break_count(s.d), 2u);
    out = s.ok("continue");
    EXPECT_NE(out.find("[breakpoint 2]"), std::string::npos) << out;
    out = s.ok("continue");
    EXPECT_NE(out.find("[breakpoint 1]"), std::string::npos) << out;
    EXPECT_EQ(s.m()->rip, es_kernel_sym(s.m(), "do_syscall_64"));
    s.ok("delete 1");
    s.ok("delete 2");
    out = s.ok("continue"); // exit_group's entry no longer stops
    EXPECT_NE(out.find("[exited"), std::string::npos) << out;
    // restart under another convention keeps the breakpoints by name
    s.ok("break do_syscall_64");
    out = s.ok("restart --convention v4.16");
    EXPECT_NE(out.find("v4.16"), std::string::npos) << out;
    out = s.ok("continue");
    EXPECT_NE(out.find("[breakpoint 3]"), std::string::npos) << out;
    EXPECT_EQ(s.m()->rip, es_kernel_sym(s.m(), "do_syscall_64"));
    es_dbg_line l[4];
    size_t n = es_dbg_disasm(s.d, 0, 1, l, 4);
    ASSERT_GE(n, 1u);
    EXPECT_TRUE(l[0].breakpoint);
    EXPECT_TRUE(l[0].label);
}

TEST(DebuggerCommands, BadInputGivesErrors)
{
    Session s("asm_hello", ES_CONV_V417);
    NEED(s);
    const char *bad[] = {"frobnicate",       "step x",          "step 0",
                         "step 1 2",         "break",           "break no_such_symbol_here",
                         "break 0xzz",       "until",           "delete 99",
                         "delete -1",        "print",           "print nothing",
                         "print mem",        "x",               "x 0x1000 lots",
                         "syntax klingon",   "restart --convention v9", "restart --patches zzz",
                         "restart --cpu arm", "screenshot /tmp/x.png", "reverse q",
                         "rstep 3",          "\x01\x02\x03",    "break do_syscall_64+"};
    for (const char *b : bad) {
        int rc = -1;
        std::string out = s.exec(b, &rc);
        EXPECT_EQ(rc, ES_DBG_CMD_ERROR) << b;
        EXPECT_NE(out.find("error:"), std::string::npos) << b << ": " << out;
    }
    std::string longline(2000, 'a');
    int rc = -1;
    s.exec(longline.c_str(), &rc);
    EXPECT_EQ(rc, ES_DBG_CMD_ERROR);
    EXPECT_EQ(s.exec("", &rc), "");
    EXPECT_EQ(rc, ES_DBG_CMD_OK);
    s.exec("# a comment", &rc);
    EXPECT_EQ(rc, ES_DBG_CMD_OK);
    s.exec("quit", &rc);
    EXPECT_EQ(rc, ES_DBG_CMD_QUIT);
    // nothing ran
    EXPECT_EQ(es_dbg_history(s.d), 0u);
    // unmapped memory prints as ??
    std::string out = s.ok("x 0x10 16");
    EXPECT_NE(out.find("??"), std::string::npos) << out;
    s.ok("syntax att");
    es_dbg_line l[2];
    ASSERT_GE(es_dbg_disasm(s.d, 0, 0, l, 2), 1u);
    EXPECT_NE(std::string(l[0].text).find('$'), std::string::npos) << l[0].text; // mov $1, %eax
}

TEST(DebuggerCommands, ScriptFile)
{
    Session s("asm_hello", ES_CONV_V417);
    NEED(s);
    char path[] = "/tmp/es_dbg_scriptXXXXXX";
    int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    const char script[] = "# enter and build the frame\nsyscall\nstep\nuntil do_syscall_64\n"
                          "print ptregs\nbogus\nstep\n";
    ASSERT_EQ(write(fd, script, sizeof script - 1), (ssize_t)(sizeof script - 1));
    close(fd);
    char *buf = nullptr;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    int rc = es_dbg_exec_file(s.d, path, f);
    fclose(f);
    std::string out(buf, len);
    free(buf);
    unlink(path);
    EXPECT_EQ(rc, ES_DBG_CMD_ERROR);
    EXPECT_NE(out.find(":6: stopped at this error"), std::string::npos) << out;
    EXPECT_EQ(s.m()->rip, es_kernel_sym(s.m(), "do_syscall_64")); // the last step did not run
    EXPECT_EQ(es_dbg_exec_file(s.d, "/nonexistent/script", nullptr), ES_DBG_CMD_ERROR);
}

int fake_shot(void *ctx, es_dbg *, const char *file, char *err, size_t errlen)
{
    std::string *got = static_cast<std::string *>(ctx);
    *got = file;
    if (!strcmp(file, "fail.png")) {
        snprintf(err, errlen, "disk full");
        return -1;
    }
    return 0;
}

TEST(DebuggerCommands, ScreenshotCallsTheRenderer)
{
    Session s("asm_hello", ES_CONV_V417);
    NEED(s);
    std::string got;
    es_dbg_set_screenshot(s.d, fake_shot, &got);
    s.ok("screenshot out.png");
    EXPECT_EQ(got, "out.png");
    int rc;
    std::string out = s.exec("screenshot fail.png", &rc);
    EXPECT_EQ(rc, ES_DBG_CMD_ERROR);
    EXPECT_NE(out.find("disk full"), std::string::npos) << out;
}

// Random command lines (a fixed seed): every one gives OK, an error or
// quit, and the session stays usable.
TEST(DebuggerCommands, RandomLinesNeverCrash)
{
    Session s("asm_hello", ES_CONV_V417);
    NEED(s);
    const char *words[] = {"step", "next", "finish", "continue", "syscall", "kentry", "kexit",
                           "until", "break", "delete", "reverse", "rstep", "rcontinue", "print",
                           "x", "mem", "syntax", "help", "breaks", "regs", "ptregs", "taint",
                           "exposure", "status", "output", "rsp", "rip", "0x0", "0xffffffffffffffff",
                           "-1", "99999999999999999999999", "do_syscall_64", "_start+", "+",
                           "att", "intel", "%s%n", "\\x", "18446744073709551615", "3"};
    const size_t nw = sizeof words / sizeof words[0];
    uint32_t seed = 12345;
    auto rnd = [&seed]() { return (seed = seed * 1103515245u + 12345u) >> 8; };
    for (int i = 0; i < 400; i++) {
        std::string line;
        int n = (int)(rnd() % 4);
        for (int k = 0; k <= n; k++) {
            if (rnd() % 8 == 0) {
                for (int c = (int)(rnd() % 6); c >= 0; c--)
                    line += (char)(1 + rnd() % 255);
            } else {
                line += words[rnd() % nw];
            }
            line += ' ';
        }
        int rc = -1;
        s.exec(line.c_str(), &rc);
        EXPECT_TRUE(rc == ES_DBG_CMD_OK || rc == ES_DBG_CMD_ERROR || rc == ES_DBG_CMD_QUIT)
            << line;
    }
    s.ok("restart");
    s.ok("syscall");
    EXPECT_TRUE(at_syscall_insn(s.d));
}

// A program whose section headers are garbage still runs; it just has no
// symbols to offer.
TEST(DebuggerSession, CorruptSectionHeadersGiveNoSymbols)
{
    std::string src = guest_path("asm_hello");
    FILE *f = fopen(src.c_str(), "rb");
    if (!f)
        GTEST_SKIP() << src << " not built";
    std::vector<uint8_t> b;
    int c;
    while ((c = fgetc(f)) != EOF)
        b.push_back((uint8_t)c);
    fclose(f);
    ASSERT_GT(b.size(), 64u);
    uint64_t shoff;
    memcpy(&shoff, &b[40], 8);
    struct Mut {
        size_t at;
        std::vector<uint8_t> bytes;
    };
    std::vector<Mut> muts = {
        {40, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}}, // e_shoff far away
        {60, {0xff, 0xff}},                                       // e_shnum huge
        {58, {0x01, 0x00}},                                       // e_shentsize tiny
    };
    // every section header's size and offset fields set to huge values
    for (uint16_t i = 0; i < 16; i++) {
        size_t sh = (size_t)shoff + 64u * i;
        if (sh + 64 <= b.size()) {
            muts.push_back({sh + 24, {0xf0, 0xff, 0xff, 0xff, 0, 0, 0, 0}});
            muts.push_back({sh + 32, {0xf0, 0xff, 0xff, 0xff, 0, 0, 0, 0}});
            muts.push_back({sh + 40, {0xff, 0xff, 0, 0}});
        }
    }
    char path[] = "/tmp/es_dbg_elfXXXXXX";
    int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    close(fd);
    chmod(path, 0700); // executable, as execve (and so the loader) requires
    int launched = 0;
    for (const Mut &mu : muts) {
        std::vector<uint8_t> m = b;
        if (mu.at + mu.bytes.size() > m.size())
            continue;
        memcpy(&m[mu.at], mu.bytes.data(), mu.bytes.size());
        FILE *o = fopen(path, "wb");
        ASSERT_NE(o, nullptr);
        fwrite(m.data(), 1, m.size(), o);
        fclose(o);
        es_dbg_cfg cfg{};
        cfg.launch.program = path;
        cfg.launch.root = "/";
        cfg.launch.stdin_fd = -1;
        char err[320] = "";
        es_dbg *d = es_dbg_new(&cfg, err, sizeof err);
        if (!d)
            continue; // the loader may refuse it: that is an error, not a crash
        launched++;
        char e[200];
        uint64_t a;
        es_dbg_resolve(d, "_start", &a, e, sizeof e);
        es_dbg_line l[4];
        es_dbg_disasm(d, 2, 2, l, 4);
        EXPECT_EQ(es_dbg_exec(d, "continue", nullptr), ES_DBG_CMD_OK);
        es_dbg_free(d);
    }
    unlink(path);
    EXPECT_GT(launched, 3); // the loader reads program headers only
}

TEST(DebuggerSession, MissingProgramIsAnError)
{
    es_dbg_cfg c{};
    c.launch.program = "/nonexistent/program";
    c.launch.root = "/";
    char err[200] = "";
    EXPECT_EQ(es_dbg_new(&c, err, sizeof err), nullptr);
    EXPECT_NE(std::string(err).find("No such file"), std::string::npos) << err;
    es_dbg_cfg none{};
    EXPECT_EQ(es_dbg_new(&none, err, sizeof err), nullptr);
}

} // namespace
