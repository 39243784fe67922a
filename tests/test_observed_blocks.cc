// Observers that allow blocks (es_observer.blocks: the cycle model, the
// phase accounting) are told every instruction as es_step tells it, while
// es_run runs the instructions through the block cache (sim/block.c's
// run_told).  Each real guest program here runs twice under the guest
// kernel, once with an observer that allows blocks and once with the same
// observer refusing them (every instruction through es_step): the sequence
// of hook calls -- each with its RIP, instruction count, CPL, registers and,
// at retire, the next RIP; each exception with its vector and error code --
// must be the same, as must the exit.  A second observer is user_quiet
// (the phase accounting's mode): it must see the same told events and the
// same counts of the user instructions it was not told of.  The output goes to /dev/null: stdio
// stats its stdout, and a host file's inode and times would differ between
// the two runs (an i386 program copies them through its registers).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

#include "build_path.h"
#include "kernel.h"
#include "launch.h"
#include "machine.h"

namespace {

struct Seen {
    uint64_t hash = 1469598103934665603ull;
    uint64_t befores = 0, retires = 0, exceptions = 0, from_blocks = 0;
    void mix(uint64_t v)
    {
        for (int i = 0; i < 8; i++) {
            hash ^= (v >> (8 * i)) & 0xff;
            hash *= 1099511628211ull;
        }
    }
    void state(es_machine *m, uint64_t kind, uint64_t rip)
    {
        mix(kind);
        mix(rip);
        mix(m->rip);
        mix(m->icount);
        mix(m->cpl);
        for (int r = 0; r < 16; r++)
            mix(m->gpr[r]);
    }
};

void on_before(void *ctx, es_machine *m, const es_insn *d, uint64_t rip)
{
    Seen *s = (Seen *)ctx;
    s->befores++;
    s->from_blocks += m->obs_bent;
    s->state(m, 1, rip);
    s->mix(d->op);
    s->mix(d->len);
}

void on_retire(void *ctx, es_machine *m, const es_insn *d, uint64_t rip)
{
    Seen *s = (Seen *)ctx;
    s->retires++;
    s->state(m, 2, rip);
    s->mix(d->op);
}

void on_exception(void *ctx, es_machine *m, int vector, uint32_t error)
{
    Seen *s = (Seen *)ctx;
    s->exceptions++;
    s->mix(3);
    s->mix((uint64_t)vector);
    s->mix(error);
    s->mix(m->rip);
}

// A user_quiet observer: user instructions that cannot enter the kernel
// are only counted.  Stepping tells it every instruction, so it drops
// those itself; through blocks they are not told but counted for it
// (user_run).  The counts are folded into the hash only at the next event
// it is told of (and at the end), so the two runs must agree on how many
// such instructions retired between any two events, not on how the count
// was split.
struct Quiet {
    Seen seen;
    uint64_t pending = 0, runs = 0, counted = 0;
    void flush()
    {
        if (!pending)
            return;
        seen.mix(4);
        seen.mix(pending);
        counted += pending;
        pending = 0;
    }
};

bool dropped(es_machine *m, const es_insn *d)
{
    return m->cpl == 3 && !es_may_enter(d->op);
}

void q_before(void *ctx, es_machine *m, const es_insn *d, uint64_t rip)
{
    Quiet *q = (Quiet *)ctx;
    if (dropped(m, d))
        return;
    q->flush();
    on_before(&q->seen, m, d, rip);
}

void q_retire(void *ctx, es_machine *m, const es_insn *d, uint64_t rip)
{
    Quiet *q = (Quiet *)ctx;
    // (at retire the CPL is the one after the instruction: a dropped one
    // cannot change it, and one that entered the kernel was told)
    if (m->cpl == 3 && !es_may_enter(d->op)) {
        q->pending++;
        return;
    }
    q->flush();
    on_retire(&q->seen, m, d, rip);
}

void q_exception(void *ctx, es_machine *m, int vector, uint32_t error)
{
    Quiet *q = (Quiet *)ctx;
    q->flush();
    on_exception(&q->seen, m, vector, error);
}

void q_user_run(void *ctx, es_machine *m, uint64_t n)
{
    (void)m;
    Quiet *q = (Quiet *)ctx;
    q->runs++;
    q->pending += n;
}

struct Outcome {
    Seen seen;
    Quiet quiet;
    std::string err;
    int stop = -1, status = -1;
    uint64_t icount = 0;
};

Outcome run_prog(const std::string &prog, const std::vector<std::string> &args, bool blocks,
        uint64_t max_insns)
{
    Outcome r;
    FILE *out = fopen("/dev/null", "w");
    std::vector<std::string> a{prog};
    a.insert(a.end(), args.begin(), args.end());
    std::vector<char *> argv;
    for (auto &s : a)
        argv.push_back(s.data());
    argv.push_back(nullptr);
    es_launch_cfg c{};
    c.program = prog.c_str();
    c.argc = (int)a.size();
    c.argv = argv.data();
    c.deterministic = true;
    c.mem_cap_mb = 256;
    c.vendor = 1;
    c.patches = ES_CONV_V417;
    c.max_insns = max_insns;
    c.stdin_fd = -1;
    c.stdout_fd = fileno(out);
    c.stderr_fd = fileno(out);
    es_machine *m = nullptr;
    char e[512] = "";
    if (es_launch(&c, &m, e, sizeof e) != ES_LAUNCH_OK) {
        r.err = e;
        fclose(out);
        return r;
    }
    es_observer ob{};
    ob.ctx = &r.seen;
    ob.before = on_before;
    ob.retire = on_retire;
    ob.exception = on_exception;
    ob.blocks = blocks;
    es_observe(m, &ob);
    // second, quiet, observer: told around the first one's calls
    es_observer qo{};
    qo.ctx = &r.quiet;
    qo.before = q_before;
    qo.retire = q_retire;
    qo.exception = q_exception;
    qo.blocks = blocks;
    qo.user_quiet = true;
    qo.user_run = q_user_run;
    es_observe(m, &qo);
    es_run(m);
    r.quiet.flush();
    r.stop = m->stop;
    r.status = m->stop == ES_STOP_EXIT ? m->exit_status : 128 + m->signal;
    r.icount = m->icount;
    es_launch_free(m);
    fclose(out);
    return r;
}

struct Case {
    const char *prog;
    std::vector<std::string> args;
    uint64_t max_insns;
};

class ObservedBlocks : public ::testing::TestWithParam<Case> {};

TEST_P(ObservedBlocks, TellTheObserversWhatSteppingTellsThem)
{
    const Case &k = GetParam();
    std::string prog = es_build_path(k.prog);
    if (access(prog.c_str(), X_OK) != 0)
        GTEST_SKIP() << prog << " was not built (its toolchain is missing)";
    Outcome stepped = run_prog(prog, k.args, false, k.max_insns);
    Outcome blocked = run_prog(prog, k.args, true, k.max_insns);
    ASSERT_EQ(stepped.err, "");
    ASSERT_EQ(blocked.err, "");
    EXPECT_EQ(stepped.seen.from_blocks, 0u);
    // most of it ran through blocks (else this compares stepping with itself)
    EXPECT_GT(blocked.seen.from_blocks, blocked.seen.befores / 2);
    EXPECT_EQ(blocked.seen.befores, stepped.seen.befores);
    EXPECT_EQ(blocked.seen.retires, stepped.seen.retires);
    EXPECT_EQ(blocked.seen.exceptions, stepped.seen.exceptions);
    EXPECT_EQ(blocked.seen.hash, stepped.seen.hash);
    EXPECT_EQ(blocked.icount, stepped.icount);
    EXPECT_EQ(blocked.stop, stepped.stop);
    EXPECT_EQ(blocked.status, stepped.status);
    EXPECT_GT(stepped.seen.retires, 10000u);
    // the quiet observer: the same events and counts, and through blocks it
    // was told of counts (else the quiet path was never taken)
    EXPECT_EQ(blocked.quiet.seen.hash, stepped.quiet.seen.hash);
    EXPECT_EQ(blocked.quiet.counted, stepped.quiet.counted);
    EXPECT_EQ(blocked.quiet.seen.retires, stepped.quiet.seen.retires);
    EXPECT_EQ(stepped.quiet.runs, 0u);
    EXPECT_GT(blocked.quiet.runs, 0u);
    EXPECT_GT(blocked.quiet.counted, 1000u);
}

// signals (fault delivery, sigreturn), threads and fork (task switches on
// timer ticks, which fall on batch boundaries counted in steps), i386 and
// x32 entries, MMX and AVX code, and a --max-insns cut in mid-run
INSTANTIATE_TEST_SUITE_P(
    Programs, ObservedBlocks,
    ::testing::Values(Case{"guest/glibc_signals", {}, 0}, Case{"guest/i386_glibc_signals", {}, 0},
                      Case{"guest/x32_glibc_signals", {}, 0}, Case{"guest/musl_threads", {}, 0},
                      Case{"guest/glibc_procs", {}, 0}, Case{"guest/musl_alarms", {}, 0},
                      Case{"guest/i386_glibc_mmx", {}, 0}, Case{"guest/musl_v3_compute", {}, 0},
                      Case{"guest/glibc_procs", {}, 123457}, Case{"guest/getpid64", {"3000"}, 0}));

} // namespace
