// Runs of user code recorded whole (debugger/dbg_run.c, dbg_run_user):
// every command must leave exactly the state a session that records each
// instruction (es_dbg_cfg.step_only) leaves -- registers, instruction
// count, taint labels, command output, the user address space -- forward,
// and backward into a run (reverse re-runs it up to the instruction).
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

struct State {
    std::vector<uint8_t> arch;
    uint64_t icount = 0;
    es_label taint[17];
    std::map<uint64_t, std::vector<uint8_t>> pages;
};

State capture(es_dbg *d)
{
    State s;
    es_machine *m = es_dbg_machine(d);
    const uint8_t *b = reinterpret_cast<const uint8_t *>(m);
    s.arch.assign(b + offsetof(es_machine, gpr), b + offsetof(es_machine, fault));
    s.icount = m->icount;
    for (int r = 0; r < 16; r++)
        s.taint[r] = es_taint_reg(es_dbg_taint(d), r);
    s.taint[16] = es_taint_flags(es_dbg_taint(d));
    user_pages(m, m->cr3 & 0x000ffffffffff000ull, 3, 0, s.pages);
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

TEST_P(HostServices, ReverseRestoresEveryFrame)
{
    Session b(GetParam(), "1", false);
    NEED(b);
    const int K = 499;
    std::vector<State> at;
    std::vector<std::map<uint64_t, std::vector<uint8_t>>> mem;
    char cmd[64];
    snprintf(cmd, sizeof cmd, "step %d", K);
    es_dbg_status st{};
    while (at.size() < 40 && !st.exited) {
        at.push_back(capture(b.d));
        mem.push_back(frames(b.m()));
        b.ok(cmd);
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
        if (bad)
            break;
    }
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

} // namespace
