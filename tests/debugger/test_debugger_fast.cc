// Runs recorded whole (debugger/dbg_run.c): of user code (dbg_run_user)
// and of kernel code (dbg_run_kernel, below).  Every command must leave
// exactly the state a session that records each instruction
// (es_dbg_cfg.step_only) leaves -- registers, instruction count, taint
// labels of registers and memory, the pt_regs tracking, command output, the
// user address space -- forward, and backward into a run (reverse re-runs
// it up to the instruction).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "session.h"

namespace {

// The user half of the address space as the page tables map it: linear
// page -> its bytes (physical frames may differ between two sessions: a
// page faulted in again after reverse gets a new one).
void user_pages(es_machine *m, uint64_t table, int level, uint64_t va,
                std::map<uint64_t, std::vector<uint8_t>> &out)
{
    const uint64_t addr = 0x000ffffffffff000ull;
    const uint64_t *t = reinterpret_cast<const uint64_t *>(m->frames[table >> 12].host);
    if (!t)
        return;
    for (unsigned i = 0; i < (level == 3 ? 256u : 512u); i++) {
        uint64_t e = t[i], v = va | ((uint64_t)i << (12 + 9 * level));
        if (!(e & 1) || !(e & 4)) // present, user
            continue;
        bool leaf = level == 0 || (level <= 2 && (e & 0x80));
        if (!leaf) {
            user_pages(m, e & addr, level - 1, v, out);
            continue;
        }
        uint64_t pages = 1ull << (9 * level);
        for (uint64_t p = 0; p < pages; p++) {
            const uint8_t *h = m->frames[((e & addr) >> 12) + p].host;
            if (h)
                out[v + (p << 12)].assign(h, h + 4096);
        }
    }
}

// The labels of [va, va+n) that are not clean, byte by byte (64 bytes at a
// time first: most memory carries none).
void labels_of(const es_taint *t, uint64_t va, uint64_t n, std::map<uint64_t, es_label> &out)
{
    for (uint64_t a = va; a < va + n; a += 64) {
        if (!es_taint_mem(t, a, 64))
            continue;
        for (uint64_t b = a; b < a + 64; b++)
            if (es_label l = es_taint_mem(t, b, 1))
                out[b] = l;
    }
}

// What the window shows of the pt_regs frame: the tracking's marks and
// the labels of the values there.
struct Slot {
    uint64_t value;
    bool written, cleared;
    unsigned order;
    es_label taint;
    bool operator==(const Slot &o) const
    {
        return value == o.value && written == o.written && cleared == o.cleared &&
               order == o.order && taint == o.taint;
    }
};

struct State {
    std::vector<uint8_t> arch;
    uint64_t icount = 0;
    es_label taint[17];
    std::map<uint64_t, std::vector<uint8_t>> pages;
    std::map<uint64_t, es_label> labels; // user pages and the kernel stack
    uint64_t ptregs = 0;
    std::vector<Slot> slots;
};

State capture(es_dbg *d)
{
    State s;
    es_machine *m = es_dbg_machine(d);
    const uint8_t *b = reinterpret_cast<const uint8_t *>(m);
    s.arch.assign(b + offsetof(es_machine, gpr), b + offsetof(es_machine, fault));
    s.icount = m->icount;
    const es_taint *t = es_dbg_taint(d);
    for (int r = 0; r < 16; r++)
        s.taint[r] = t ? es_taint_reg(t, r) : 0;
    s.taint[16] = t ? es_taint_flags(t) : 0;
    user_pages(m, m->cr3 & 0x000ffffffffff000ull, 3, 0, s.pages);
    for (const auto &p : s.pages)
        if (t)
            labels_of(t, p.first, 4096, s.labels);
    es_dbg_slot sl[ES_DBG_PTREGS_SLOTS];
    if (es_dbg_ptregs(d, &s.ptregs, sl) == 0) {
        for (const es_dbg_slot &x : sl)
            s.slots.push_back(Slot{x.value, x.written, x.cleared, x.order, x.taint});
        // the kernel stack the frame tops (16 KiB)
        uint64_t top = s.ptregs + 8 * ES_DBG_PTREGS_SLOTS;
        if (t)
            labels_of(t, top - 0x4000, 0x4000, s.labels);
    }
    return s;
}

void expect_same(const State &a, const State &b, const std::string &where)
{
    EXPECT_EQ(a.icount, b.icount) << where;
    ASSERT_EQ(a.arch.size(), b.arch.size());
    int bad = 0;
    for (size_t i = 0; i < a.arch.size() && bad < 5; i += 8)
        if (memcmp(&a.arch[i], &b.arch[i], 8)) {
            bad++;
            ADD_FAILURE() << where << ": architectural state differs at offset "
                          << i + offsetof(es_machine, gpr);
        }
    for (int r = 0; r < 17; r++)
        EXPECT_EQ(a.taint[r], b.taint[r]) << where << ": taint of register " << r;
    EXPECT_EQ(a.pages.size(), b.pages.size()) << where << ": mapped user pages";
    for (const auto &p : a.pages) {
        auto it = b.pages.find(p.first);
        if (it == b.pages.end()) {
            ADD_FAILURE() << where << ": page 0x" << std::hex << p.first << " not mapped";
            continue;
        }
        if (p.second != it->second && bad++ < 5) {
            size_t k = 0;
            while (p.second[k] == it->second[k])
                k++;
            ADD_FAILURE() << where << ": page 0x" << std::hex << p.first << " differs at 0x" << k
                          << ": " << (unsigned)p.second[k] << " vs " << (unsigned)it->second[k];
        }
    }
    if (a.labels != b.labels) {
        auto x = a.labels.begin(), y = b.labels.begin();
        while (x != a.labels.end() && y != b.labels.end() && *x == *y)
            ++x, ++y;
        uint64_t at = x != a.labels.end() ? x->first : y->first;
        ADD_FAILURE() << where << ": memory labels differ (" << a.labels.size() << " vs "
                      << b.labels.size() << " labelled bytes), first at 0x" << std::hex << at;
    }
    EXPECT_EQ(a.ptregs, b.ptregs) << where << ": pt_regs frame";
    EXPECT_TRUE(a.slots == b.slots) << where << ": pt_regs slots (tracking marks, values, labels)";
}

// A guest, its argument, and commands for the forward test.  Pages are
// compared up to the first command whose run calls fstat/statx on the
// guest's output: the two sessions capture it in two host memfds, whose
// inode numbers and times differ (host state, not the recording's).
struct Case {
    const char *guest, *arg;
    std::vector<const char *> cmds;
    size_t stat_at; // commands[stat_at] is the first one that stats the output (100: none)
    const char *hot; // a function called in the program's first 60000 instructions in main
};

void PrintTo(const Case &c, std::ostream *os)
{
    *os << c.guest << ' ' << c.arg;
}

class FastRun : public ::testing::TestWithParam<Case> {};

// Forward: the same commands give the same output and the same state.
TEST_P(FastRun, ForwardCommandsMatchStepOnly)
{
    const Case &k = GetParam();
    Session a(k.guest, k.arg, true), b(k.guest, k.arg, false);
    NEED(a);
    NEED(b);
    for (size_t i = 0; i < k.cmds.size(); i++) {
        std::string oa = a.ok(k.cmds[i]), ob = b.ok(k.cmds[i]);
        EXPECT_EQ(oa, ob) << k.cmds[i];
        State sa = capture(a.d), sb = capture(b.d);
        if (i >= k.stat_at)
            sa.pages.clear(), sb.pages.clear();
        expect_same(sa, sb, k.cmds[i]);
    }
}

// Backward into runs: states every K instructions of a step-only session,
// and the run-recording session going back over them.
TEST_P(FastRun, ReverseIntoARunRestoresEachState)
{
    Session a(GetParam().guest, GetParam().arg, true), b(GetParam().guest, GetParam().arg, false);
    NEED(a);
    NEED(b);
    const int K = 1999;
    int N = 12;
    std::vector<State> at;
    char cmd[64];
    snprintf(cmd, sizeof cmd, "step %d", K);
    for (int i = 0; i < N; i++) {
        at.push_back(capture(a.d));
        a.ok(cmd);
        es_dbg_status st;
        es_dbg_get_status(a.d, &st);
        if (st.exited) // a short program: back from somewhere before its exit
            N = i;
    }
    ASSERT_GT(N, 3);
    snprintf(cmd, sizeof cmd, "step %d", K * N);
    b.ok(cmd);
    // pages hold what the host's fstat of the output said (see Case)
    bool pages = GetParam().stat_at > 99;
    auto same = [&](State x, State y, const std::string &where) {
        if (!pages)
            x.pages.clear(), y.pages.clear();
        expect_same(x, y, where);
    };
    snprintf(cmd, sizeof cmd, "reverse %d", K);
    for (int i = N - 1; i >= 0; i--) {
        b.ok(cmd);
        same(at[i], capture(b.d), "reverse to " + std::to_string(i * K));
        if (i == N / 2) { // and single steps back and forth in the middle of a run
            b.ok("reverse 1");
            b.ok("step 1");
            same(at[i], capture(b.d), "reverse 1, step 1");
        }
    }
    EXPECT_NE(b.ok("reverse 1").find("history-end"), std::string::npos);
}

// reverse-continue to a breakpoint set after the run that passed it.
TEST_P(FastRun, ReverseContinueFindsTheLastHitInsideARun)
{
    Session a(GetParam().guest, GetParam().arg, true), b(GetParam().guest, GetParam().arg, false);
    NEED(a);
    NEED(b);
    std::string hot = std::string("break ") + GetParam().hot;
    int hit = 0;
    for (const char *c : {"break main", "continue", "step 60000", hot.c_str(), "rcontinue",
                          "rcontinue", "step 10", "continue"}) {
        std::string oa = a.ok(c), ob = b.ok(c);
        EXPECT_EQ(oa, ob) << c;
        if (!strcmp(c, "rcontinue") && !hit++) { // the run passed it
            EXPECT_NE(ob.find("[breakpoint 2]"), std::string::npos) << ob;
        }
        State sa = capture(a.d), sb = capture(b.d);
        if (GetParam().stat_at <= 99) // see Case
            sa.pages.clear(), sb.pages.clear();
        expect_same(sa, sb, c);
    }
}

const std::vector<const char *> kCompute = {
    "syscall", "kentry", "kexit", "syscall", "step 5", "kexit", "break main", "continue",
    "step 3000", "next", "next", "step 20000", "delete 1"};
const std::vector<const char *> kToExit = {
    "break main", "continue", "step 2000", "syscall", "kentry", "kexit", "next", "finish",
    "delete 1", "until exit", "reverse 5", "continue", "reverse 3", "step 3"};

INSTANTIATE_TEST_SUITE_P(Guests, FastRun,
                         ::testing::Values(Case{"musl_compute", "3000", kCompute, 100, "calloc"},
                                           Case{"i386_glibc_compute", "3000", kCompute, 100, "calloc"},
                                           Case{"glibc_signals", "1", kToExit, 100, "memset"},
                                           Case{"i386_glibc_hello", "1", kToExit, 2, "write"},
                                           Case{"x32_glibc_signals", "1", kToExit, 100, "memset"}),
                         [](const ::testing::TestParamInfo<Case> &i) {
                             return std::string(i.param.guest);
                         });

// Every physical frame (kernel memory, page tables, what host services
// wrote: the undo log finds those through the frames the sim lists for a
// VMCALL's step) comes back to what it was, every K instructions back
// over programs that fork, take signals, read files and make threads.
class HostServices : public ::testing::TestWithParam<const char *> {};

std::map<uint64_t, std::vector<uint8_t>> frames(es_machine *m)
{
    std::map<uint64_t, std::vector<uint8_t>> f;
    for (uint64_t p = 0; p < m->nframes; p++)
        if (m->frames[p].host)
            f[p].assign(m->frames[p].host, m->frames[p].host + 4096);
    return f;
}

// Steps `step 499` up to `points` times, remembering the state and every
// frame, then reverses 499 at a time and checks each point comes back.
void reverse_restores_every_frame(Session &b, size_t points)
{
    std::vector<State> at;
    std::vector<std::map<uint64_t, std::vector<uint8_t>>> mem;
    es_dbg_status st{};
    while (at.size() < points && !st.exited) {
        at.push_back(capture(b.d));
        mem.push_back(frames(b.m()));
        b.ok("step 499");
        es_dbg_get_status(b.d, &st);
    }
    ASSERT_GT(at.size(), 5u);
    char back[64];
    snprintf(back, sizeof back, "reverse %llu",
             (unsigned long long)(b.m()->icount - at.back().icount));
    for (size_t i = at.size(); i-- > 0;) {
        b.ok(i + 1 < at.size() ? "reverse 499" : back);
        std::string where = "reverse to " + std::to_string(at[i].icount);
        expect_same(at[i], capture(b.d), where);
        int bad = 0;
        for (const auto &f : mem[i]) {
            const uint8_t *h = b.m()->frames[f.first].host;
            if (h && memcmp(h, f.second.data(), 4096) && bad++ < 3) {
                size_t k = 0;
                while (h[k] == f.second[k])
                    k++;
                ADD_FAILURE() << where << ": frame " << f.first << " differs at " << k << ": "
                              << (unsigned)f.second[k] << " then " << (unsigned)h[k];
            }
        }
        if (bad || ::testing::Test::HasFailure())
            break;
    }
}

TEST_P(HostServices, ReverseRestoresEveryFrame)
{
    Session b(GetParam(), "1", false);
    NEED(b);
    reverse_restores_every_frame(b, 40);
}

INSTANTIATE_TEST_SUITE_P(Guests, HostServices,
                         ::testing::Values("glibc_procs", "glibc_signals", "musl_files",
                                           "glibc_threads", "i386_glibc_signals"));

// A history bound of a few instructions still keeps the newest ones.
TEST(FastRunHistory, BoundedByInstructions)
{
    Session b("musl_compute", "3000", false, 10);
    NEED(b);
    b.ok("step 25000");
    // runs are at most a quarter of the bound: the newest 8 to 10 are kept
    EXPECT_LE(es_dbg_history(b.d), 10u);
    EXPECT_GE(es_dbg_history(b.d), 8u);
    EXPECT_NE(b.ok("reverse 11").find("history-end"), std::string::npos);
}

// ---------------------------------------------------------- kernel runs
// Runs of kernel code recorded whole (dbg_run_kernel): each instruction
// still goes through es_step with the taint observer and the pt_regs
// tracking, but the run is one undo record that reverse re-runs.  The same
// comparison with step_only sessions, with breakpoints inside the kernel,
// under both conventions and with PTI (CR3 switches at every entry/exit).

struct KCase {
    const char *name, *guest, *arg;
    unsigned patches, mitigations;
    const std::vector<const char *> *cmds;
    const char *ksym; // a kernel function the program's first 20000 steps call
    bool no_taint = false;
};

void PrintTo(const KCase &c, std::ostream *os)
{
    *os << c.name;
}

// The session started again under the case's convention and mitigations
// (the Session constructor's are v4.17 and the default).
void configure(Session &s, const KCase &k, bool step_only, uint64_t undo_insns = 0)
{
    es_dbg_cfg c{};
    const char *argv[] = {s.path.c_str(), s.arg.c_str(), nullptr};
    c.launch.program = s.path.c_str();
    c.launch.argv = const_cast<char **>(argv);
    c.launch.argc = 2;
    c.launch.root = "/";
    c.launch.deterministic = true;
    c.launch.stdin_fd = -1;
    c.launch.patches = k.patches;
    c.launch.mitigations = k.mitigations;
    c.step_only = step_only;
    c.undo_insns = undo_insns;
    c.no_taint = k.no_taint;
    char err[320] = "";
    ASSERT_EQ(es_dbg_restart(s.d, &c, err, sizeof err), 0) << err;
    es_dbg_status st;
    es_dbg_get_status(s.d, &st);
    ASSERT_EQ(st.mitigations, k.mitigations);
}

class DebuggerFastKernelRun : public ::testing::TestWithParam<KCase> {};

// Forward and backward commands that stop inside the kernel (breakpoints,
// until, next, finish, kentry/kexit) leave the state step_only leaves.
TEST_P(DebuggerFastKernelRun, CommandsMatchStepOnly)
{
    const KCase &k = GetParam();
    Session a(k.guest, k.arg, true), b(k.guest, k.arg, false);
    NEED(a);
    NEED(b);
    configure(a, k, true);
    configure(b, k, false);
    if (HasFatalFailure())
        return;
    for (const char *c : *k.cmds) {
        std::string oa = a.ok(c), ob = b.ok(c);
        EXPECT_EQ(oa, ob) << c;
        expect_same(capture(a.d), capture(b.d), c);
        if (HasFailure())
            break; // the first difference says the most
    }
}

// Backward into kernel runs: the states every K steps of a step_only
// session, and the recording session going back over them.
TEST_P(DebuggerFastKernelRun, ReverseIntoKernelRunsRestoresEachState)
{
    const KCase &k = GetParam();
    Session a(k.guest, k.arg, true), b(k.guest, k.arg, false);
    NEED(a);
    NEED(b);
    configure(a, k, true);
    configure(b, k, false);
    if (HasFatalFailure())
        return;
    const int K = 997;
    int N = 12;
    std::vector<State> at;
    char cmd[64];
    snprintf(cmd, sizeof cmd, "step %d", K);
    for (int i = 0; i < N; i++) {
        at.push_back(capture(a.d));
        a.ok(cmd);
        es_dbg_status st;
        es_dbg_get_status(a.d, &st);
        if (st.exited)
            N = i;
    }
    ASSERT_GT(N, 3);
    snprintf(cmd, sizeof cmd, "step %d", K * N);
    b.ok(cmd);
    snprintf(cmd, sizeof cmd, "reverse %d", K);
    for (int i = N - 1; i >= 0; i--) {
        b.ok(cmd);
        expect_same(at[i], capture(b.d), "reverse to " + std::to_string(i * K));
        if (i == N / 2) {
            b.ok("reverse 1");
            b.ok("step 1");
            expect_same(at[i], capture(b.d), "reverse 1, step 1");
        }
    }
    EXPECT_NE(b.ok("reverse 1").find("history-end"), std::string::npos);
}

// reverse-continue to a kernel breakpoint set after the runs that passed
// it: the last hit is found inside a kernel run by running it again.
TEST_P(DebuggerFastKernelRun, ReverseContinueFindsAKernelBreakpointInsideARun)
{
    const KCase &k = GetParam();
    Session a(k.guest, k.arg, true), b(k.guest, k.arg, false);
    NEED(a);
    NEED(b);
    configure(a, k, true);
    configure(b, k, false);
    if (HasFatalFailure())
        return;
    std::string brk = std::string("break ") + k.ksym;
    int hit = 0;
    for (const char *c : {"step 20000", brk.c_str(), "rcontinue", "rcontinue", "reverse 9",
                          "step 10", "continue", "rcontinue"}) {
        std::string oa = a.ok(c), ob = b.ok(c);
        EXPECT_EQ(oa, ob) << c;
        if (!strcmp(c, "rcontinue") && !hit++) {
            EXPECT_NE(ob.find("[breakpoint 1]"), std::string::npos) << ob;
        }
        expect_same(capture(a.d), capture(b.d), c);
    }
}

// Every physical frame back to what it was (HostServices' check) under
// the case's convention and mitigations: a kernel run's memory is found by
// frame at its end (PTI loads CR3 twice per system call inside runs).
TEST_P(DebuggerFastKernelRun, ReverseRestoresEveryFrame)
{
    const KCase &k = GetParam();
    Session b(k.guest, k.arg, false);
    NEED(b);
    configure(b, k, false);
    if (HasFatalFailure())
        return;
    reverse_restores_every_frame(b, 20);
}

const std::vector<const char *> kGetpidCmds = {
    "break do_syscall_64", "continue", "next", "next", "step 3", "finish", "print ptregs",
    "continue", "break es_hc_syscall6", "continue", "next", "finish", "kexit", "print ptregs",
    "reverse 40", "print ptregs", "print taint", "step 1", "rcontinue", "rcontinue", "reverse 3",
    "step 300", "until es_hc_syscall6", "delete 2", "delete 1", "step 4000",
    "break entry_SYSCALL_64", "rcontinue", "reverse 77", "next", "delete 3", "syscall", "kentry",
    "finish", "step 2", "kentry", "until do_syscall_64", "finish", "kexit", "continue"};
const std::vector<const char *> kSignalCmds = {
    "break es_do_exception", "continue", "next", "next", "step 40", "finish", "print ptregs",
    "break copy_to_user", "continue", "finish", "kexit", "kentry", "print taint", "delete 1",
    "delete 2", "step 25000", "break restore_sigcontext", "continue", "finish", "kexit",
    "rcontinue", "reverse 300", "print taint", "step 1", "reverse 1000", "print ptregs",
    "step 999", "rcontinue", "rcontinue", "delete 3", "reverse 5000", "step 3"};
// (the rcontinue goes back over es_schedule's context switches and the
// forks before them: the host's task table is undone with them)
const std::vector<const char *> kProcCmds = {
    "break ret_from_fork", "continue", "print ptregs", "step 50", "break es_schedule", "continue",
    "finish", "continue", "next", "finish", "delete 2", "step 20000", "print ptregs",
    "break es_schedule", "rcontinue", "reverse 100", "print taint", "step 99", "rcontinue",
    "delete 1", "delete 3"};
const std::vector<const char *> kInt80Cmds = {
    "break do_int80_syscall_32", "continue", "next", "finish", "continue", "reverse 60",
    "print ptregs", "rcontinue", "break copy_to_user", "continue", "finish", "kexit",
    "delete 1", "delete 2", "step 10000", "break es_do_exception", "rcontinue", "reverse 7",
    "continue", "delete 3", "step 30000"};

INSTANTIATE_TEST_SUITE_P(
    Guests, DebuggerFastKernelRun,
    ::testing::Values(
        KCase{"getpid_v417", "getpid64", "200", ES_CONV_V417, ES_MIT_DEFAULT, &kGetpidCmds,
              "es_hc_syscall6"},
        KCase{"getpid_v416", "getpid64", "200", ES_CONV_V416, ES_MIT_DEFAULT, &kGetpidCmds,
              "do_syscall_64"},
        KCase{"getpid_v417_pti", "getpid64", "200", ES_CONV_V417, ES_MIT_DEFAULT | ES_MIT_PTI,
              &kGetpidCmds, "es_hc_syscall6"},
        KCase{"signals_v417_pti", "glibc_signals", "1", ES_CONV_V417, ES_MIT_DEFAULT | ES_MIT_PTI,
              &kSignalCmds, "copy_to_user"},
        KCase{"signals_v416", "glibc_signals", "1", ES_CONV_V416, ES_MIT_DEFAULT, &kSignalCmds,
              "es_do_exception"},
        KCase{"procs_v416", "glibc_procs", "1", ES_CONV_V416, ES_MIT_DEFAULT, &kProcCmds,
              "es_schedule"},
        KCase{"i386_signals_v417", "i386_glibc_signals", "1", ES_CONV_V417, ES_MIT_DEFAULT,
              &kInt80Cmds, "do_int80_syscall_32"},
        KCase{"signals_v417_no_taint", "glibc_signals", "1", ES_CONV_V417, ES_MIT_DEFAULT,
              &kSignalCmds, "copy_to_user", true}),
    [](const ::testing::TestParamInfo<KCase> &i) { return std::string(i.param.name); });

// A reverse back over a signal's delivery, then forward again: the
// program goes on as one that never went back.  (Before the host's state
// was undone with the steps, the re-run es_signal found the handler's
// frame already set up and the program faulted writing to 0x10 at insn
// 12322; the run without reverse goes on into its compute loop.)  The
// last command of kInt80Cmds is bounded for the same reason: the step-only
// session would record 200 M instructions one by one.
TEST(DebuggerReverseOverSignal, ForwardAgainRunsAsWithoutReverse)
{
    KCase k{"i386_signals_v417", "i386_glibc_signals", "1", ES_CONV_V417, ES_MIT_DEFAULT,
            &kInt80Cmds, "do_int80_syscall_32"};
    for (bool step_only : {false, true}) {
        Session b(k.guest, k.arg, step_only), c(k.guest, k.arg, step_only);
        NEED(b);
        NEED(c);
        configure(b, k, step_only);
        configure(c, k, step_only);
        if (HasFatalFailure())
            return;
        for (const char *cmd : kInt80Cmds)
            b.ok(cmd);
        es_dbg_status sb;
        es_dbg_get_status(b.d, &sb);
        ASSERT_FALSE(sb.exited);
        ASSERT_GT(sb.icount, 40000u) << "the program stopped early";
        // (a fault the kernel takes is a step that retires nothing)
        es_dbg_status sc;
        for (int i = 0; i < 20; i++) {
            es_dbg_get_status(c.d, &sc);
            if (sc.icount >= sb.icount)
                break;
            c.ok(("step " + std::to_string(sb.icount - sc.icount)).c_str());
        }
        expect_same(capture(c.d), capture(b.d), step_only ? "step-only" : "recorded runs");
    }
}

// Kernel code is recorded in runs at all: a getpid loop is 96% kernel
// code, a handful of records per system call (user run, SYSCALL, the
// kernel up to the VMCALL, the VMCALL, the kernel back to user mode)
// rather than one per instruction.
TEST(DebuggerFastKernelRunRecords, AFewRecordsPerSystemCall)
{
    Session b("getpid64", "200", false);
    NEED(b);
    EXPECT_NE(b.ok("continue").find("exited"), std::string::npos);
    es_dbg_status st;
    es_dbg_get_status(b.d, &st);
    EXPECT_GT(es_dbg_history(b.d), 200u * 100);
    EXPECT_LT(st.history * 20, es_dbg_history(b.d)) << st.history << " records";
    // and a step_only session one record per instruction
    Session a("getpid64", "200", true);
    NEED(a);
    a.ok("continue");
    es_dbg_get_status(a.d, &st);
    EXPECT_EQ(st.history, es_dbg_history(a.d));
    expect_same(capture(a.d), capture(b.d), "continue to the exit");
}

// A bounded history of kernel runs keeps the newest steps: runs are at
// most a quarter of the bound, and the state back at its oldest end is
// step_only's.
TEST(DebuggerFastKernelRunRecords, BoundedHistoryKeepsTheNewestSteps)
{
    const KCase k{"getpid", "getpid64", "300", ES_CONV_V417, ES_MIT_DEFAULT, nullptr, ""};
    Session a(k.guest, k.arg, true), b(k.guest, k.arg, false);
    NEED(a);
    NEED(b);
    configure(a, k, true, 1000);
    configure(b, k, false, 1000);
    if (HasFatalFailure())
        return;
    a.ok("step 25000");
    b.ok("step 25000");
    EXPECT_LE(es_dbg_history(b.d), 1000u);
    EXPECT_GE(es_dbg_history(b.d), 750u);
    a.ok("reverse 700");
    b.ok("reverse 700");
    expect_same(capture(a.d), capture(b.d), "reverse 700");
    EXPECT_NE(b.ok("reverse 1001").find("history-end"), std::string::npos);
}

// ---- reverse over the host's process table (sim/host/hist.c) ----

// What of the host's task table a guest can tell: the running task's pid
// (es_hooks.task_info, what the kernel's `current` reports), and the frame
// allocator behind every page table and CR3 value.
struct HostView {
    int pid = 0, tgid = 0;
    uint64_t used = 0, next = 0, nfree = 0;
};

HostView host_view(es_machine *m)
{
    HostView v;
    char comm[16];
    if (m->hooks.task_info)
        m->hooks.task_info(m, &v.pid, &v.tgid, comm);
    v.used = m->frames_used;
    v.next = m->next_free_pfn;
    v.nfree = m->nfree_pfns;
    return v;
}

void expect_same_host(const HostView &a, const HostView &b, const std::string &where)
{
    EXPECT_EQ(a.pid, b.pid) << where;
    EXPECT_EQ(a.tgid, b.tgid) << where;
    EXPECT_EQ(a.used, b.used) << where << ": frames in use";
    EXPECT_EQ(a.next, b.next) << where;
    EXPECT_EQ(a.nfree, b.nfree) << where;
}

// step_only: every instruction its own record, or runs recorded whole
class DebuggerReverseOverFork : public ::testing::TestWithParam<bool> {};

// Stepping forward again over a fork that a reverse went back past forks
// the same child as the first time -- same pid, same frames, page tables
// and CR3, the same instruction count to ret_from_fork -- and no second
// one: a session that never went back sees what this one sees, on through
// the child's exit and its reaping.  (Before the host's table was undone
// the child came back as pid 1002 150 instructions later, the first one
// stayed in the table, and LeakSanitizer found its VMA list.)
TEST_P(DebuggerReverseOverFork, ForksTheSameChildAgain)
{
    Session a("glibc_procs", "1", GetParam()), b("glibc_procs", "1", GetParam());
    NEED(a);
    NEED(b);
    for (Session *s : {&a, &b}) {
        s->ok("break ret_from_fork");
        EXPECT_NE(s->ok("continue").find("[breakpoint 1]"), std::string::npos);
    }
    HostView first = host_view(b.m());
    EXPECT_GT(first.pid, 1000); // the child runs at ret_from_fork
    EXPECT_NE(b.ok("rcontinue").find("history-end"), std::string::npos);
    EXPECT_EQ(host_view(b.m()).pid, 1000) << "back before the fork: the parent alone";
    EXPECT_NE(b.ok("continue").find("[breakpoint 1]"), std::string::npos);
    expect_same(capture(a.d), capture(b.d), "the fork again");
    expect_same_host(first, host_view(b.m()), "the fork again");
    for (const char *c : {"delete 1", "step 6000", "step 6000", "step 6000"}) {
        EXPECT_EQ(a.ok(c), b.ok(c)) << c;
        expect_same(capture(a.d), capture(b.d), c);
        expect_same_host(host_view(a.m()), host_view(b.m()), c);
    }
}

// Back to the start over three forks, the children's exits, their reaping
// by wait4, the pipes made, used and closed between parent and child, and
// the brk and mmap calls of glibc's start-up (VMA lists changed in
// place), then forward again: every state on the way is the first run's.
// Then within a short history, whose oldest records (ended tasks, old VMA
// lists) are let go as it fills.
TEST_P(DebuggerReverseOverFork, BackToTheStartAndForwardAgain)
{
    Session a("glibc_procs", "1", GetParam()), b("glibc_procs", "1", GetParam());
    NEED(a);
    NEED(b);
    std::vector<State> at;
    std::vector<HostView> hv;
    for (int i = 0; i < 6; i++) {
        a.ok("step 5000");
        at.push_back(capture(a.d));
        hv.push_back(host_view(a.m()));
    }
    b.ok("step 30000");
    EXPECT_NE(b.ok("rcontinue").find("history-end"), std::string::npos);
    for (int i = 0; i < 6; i++) {
        std::string where = "forward again, step " + std::to_string(5000 * (i + 1));
        b.ok("step 5000");
        expect_same(at[i], capture(b.d), where);
        expect_same_host(hv[i], host_view(b.m()), where);
    }
    // (15000: the second child forked, ran, ended and was reaped in the
    // 2000 steps; the pipes of the checks after it are host pipes: data a
    // reverse goes back over stays read)
    Session c("glibc_procs", "1", GetParam(), 3000);
    NEED(c);
    c.ok("step 15000");
    expect_same(at[2], capture(c.d), "a bounded history, forward");
    EXPECT_LE(es_dbg_history(c.d), 3000u);
    c.ok("reverse 2000");
    c.ok("step 2000");
    expect_same(at[2], capture(c.d), "a bounded history");
    expect_same_host(hv[2], host_view(c.m()), "a bounded history");
}

INSTANTIATE_TEST_SUITE_P(Recording, DebuggerReverseOverFork, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool> &i) {
                             return std::string(i.param ? "step_only" : "runs");
                         });

} // namespace
