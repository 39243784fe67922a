// test_timing.cc - the cycle model (sim/timing/): steady-state cycles of
// small blocks against what tables/uarch/ says they must cost, and the
// model attached to a running machine.  Every expected number is read from
// the tables (never typed in here), so the tests follow the data files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include "es_shim.h"
#include "machine.h"
#include "tm_int.h"
}

namespace {

std::vector<uint8_t> hex(const char *s)
{
    std::vector<uint8_t> v;
    for (size_t i = 0; s[i] && s[i + 1]; i += 2)
        v.push_back((uint8_t)std::stoi(std::string(s + i, 2), nullptr, 16));
    return v;
}

// Steady-state cycles per iteration of a block (BHive definition).
double tput(const char *uarch, const char *h)
{
    std::vector<uint8_t> code = hex(h);
    double c = -1;
    char err[256] = "";
    EXPECT_EQ(es_timing_throughput(uarch, code.data(), code.size(), ES_MODE_64, &c, err,
                                   sizeof err),
              0)
        << h << ": " << err;
    return c;
}

struct Uarch {
    tm_uarch u;
    explicit Uarch(const char *name)
    {
        char err[256];
        if (tm_uarch_load(&u, name, err, sizeof err))
            ADD_FAILURE() << name << ": " << err;
    }
    ~Uarch() { tm_uarch_free(&u); }
    uint32_t lat(const char *form) const
    {
        const tm_row *r = tm_find_form(&u, form);
        EXPECT_NE(r, nullptr) << "no row for " << form;
        return r ? r->cost.lat : 0;
    }
    int group_ports(const char *form) const
    {
        const tm_row *r = tm_find_form(&u, form);
        EXPECT_TRUE(r && r->cost.ngroups == 1) << form;
        return r ? __builtin_popcount(r->cost.g[0].mask) : 0;
    }
};

const char *const kUarchs[] = {"znver4", "skylake"};

}  // namespace

TEST(Timing, EveryBuiltInUarchLoadsWithAllPrivilegedForms)
{
    // tm_uarch_load fails, naming the form, when <uarch>.priv.tsv lacks one
    // of the forms the model costs: this is where a missing form is loud.
    int n = 0;
    for (const char *const *u = es_timing_uarchs(); *u; u++, n++) {
        char err[256] = "";
        es_timing *t = es_timing_new(*u, err, sizeof err);
        EXPECT_NE(t, nullptr) << *u << ": " << err;
        es_timing_free(t);
    }
    EXPECT_GE(n, 2);
    char err[256] = "";
    EXPECT_EQ(es_timing_new("pentium", err, sizeof err), nullptr);
    EXPECT_NE(strstr(err, "unknown microarchitecture"), nullptr) << err;
}

// --uarch host: each uarch's .cfg lists the CPUs it models (cpu.match);
// the Zen 4, Zen 5 and Skylake-core parts pick their model, a Zen 3 or an
// Ice Lake none.
TEST(Timing, UarchForCpuFollowsTheCfgLists)
{
    EXPECT_STREQ(es_timing_uarch_for_cpu("AMD", 0x19, 0x11), "znver4");  // Genoa
    EXPECT_STREQ(es_timing_uarch_for_cpu("AMD", 0x19, 0x61), "znver4");  // Raphael
    EXPECT_STREQ(es_timing_uarch_for_cpu("AMD", 0x19, 0xa0), "znver4");  // Bergamo
    EXPECT_STREQ(es_timing_uarch_for_cpu("Intel", 6, 0x5e), "skylake"); // Skylake client
    EXPECT_STREQ(es_timing_uarch_for_cpu("Intel", 6, 0x9e), "skylake"); // Coffee Lake
    EXPECT_EQ(es_timing_uarch_for_cpu("AMD", 0x19, 0x01), nullptr);     // Zen 3 Milan
    EXPECT_STREQ(es_timing_uarch_for_cpu("AMD", 0x1a, 0x02), "znver5"); // Turin (this machine)
    EXPECT_STREQ(es_timing_uarch_for_cpu("AMD", 0x1a, 0x44), "znver5"); // Granite Ridge
    EXPECT_STREQ(es_timing_uarch_for_cpu("Intel", 6, 0xcf), "goldencove"); // Emerald Rapids
    EXPECT_STREQ(es_timing_uarch_for_cpu("Intel", 6, 0x97), "goldencove"); // Alder Lake
    EXPECT_EQ(es_timing_uarch_for_cpu("Intel", 6, 0x6a), nullptr);      // Ice Lake SP
    EXPECT_EQ(es_timing_uarch_for_cpu("Intel", 0x19, 0x11), nullptr);   // vendor counts
}

TEST(Timing, DependentAddChainCostsItsLatency)
{
    for (const char *name : kUarchs) {
        Uarch u(name);
        // add rax, rax: each add waits for the previous one
        EXPECT_NEAR(tput(name, "4801c0"), u.lat("add r64, r64"), 0.02) << name;
        // four adds on one chain: four latencies
        EXPECT_NEAR(tput(name, "4801c04801c04801c04801c0"), 4.0 * u.lat("add r64, r64"), 0.05)
            << name;
    }
}

TEST(Timing, IndependentAddsAreLimitedByAlusAndDispatchWidth)
{
    // add r64, imm8 on eight different registers (rax..rdi minus rsp, r8, r9)
    const char *block = "4883c0014883c1014883c2014883c3014883c5014883c6014883c7014983c001";
    for (const char *name : kUarchs) {
        Uarch u(name);
        double alus = u.group_ports("add r64, imm8");
        double bound = std::max(8.0 / alus, 8.0 / u.u.dispatch_width);
        EXPECT_NEAR(tput(name, block), bound, 0.05 * bound) << name;
    }
}

TEST(Timing, ImulChainCostsImulLatency)
{
    for (const char *name : kUarchs) {
        Uarch u(name);
        EXPECT_NEAR(tput(name, "480fafc0"), u.lat("imul r64, r64"), 0.02) << name;
    }
}

TEST(Timing, PointerChasingLoadCostsL1Latency)
{
    // mov rax, [rax]: memory holds the register value, so rax stays put and
    // every load waits for the previous one
    for (const char *name : kUarchs) {
        Uarch u(name);
        EXPECT_NEAR(tput(name, "488b00"), u.u.l1d_latency, 0.02) << name;
    }
}

TEST(Timing, ComplexAddressAddsItsLatencyToTheLoad)
{
    // mov eax, [rdi+rax*4]: a scaled index; mov eax, [rdi+rax]: base+index
    // without displacement, the simple form
    for (const char *name : kUarchs) {
        Uarch u(name);
        EXPECT_NEAR(tput(name, "8b0487"), u.u.l1d_latency + u.u.complex_addr_latency, 0.02)
            << name;
        EXPECT_NEAR(tput(name, "8b0407"), u.u.l1d_latency, 0.02) << name;
    }
}

TEST(Timing, GroupOccupancyKeepsTheTablesThroughput)
{
    // movq xmm0, rcx; movq xmm1, rdx: independent, so the block runs at the
    // rate the movq row's port group allows: n uops x occupancy over the
    // group's units (ports.exact_occupancy makes llvm's "FP45:2" for one uop
    // an occupancy of 2 on znver4)
    for (const char *name : kUarchs) {
        Uarch u(name);
        const tm_row *r = tm_find_form(&u.u, "movq xmm, r64");
        ASSERT_NE(r, nullptr) << name;
        ASSERT_EQ(r->cost.ngroups, 1) << name;
        const tm_group &g = r->cost.g[0];
        double want = 2.0 * g.n * g.occ / __builtin_popcount(g.mask);
        if (want < 1.0 * r->cost.uops * 2 / u.u.dispatch_width)
            want = 1.0 * r->cost.uops * 2 / u.u.dispatch_width;
        EXPECT_NEAR(tput(name, "66480f6ec166480f6eca"), want, 0.05) << name;
    }
    Uarch z("znver4");
    EXPECT_EQ(tm_find_form(&z.u, "movq xmm, r64")->cost.g[0].occ, 2);
}

TEST(Timing, LeaDependsOnItsAddressRegisters)
{
    // lea rax, [rax-1]: a chain through lea's base register, its latency
    // per iteration (it was once free: AGEN operands were not sources)
    for (const char *name : kUarchs) {
        Uarch u(name);
        const tm_row *r = tm_find_form(&u.u, "lea r64, m[base+disp]");
        uint32_t lat = r ? r->cost.lat : u.lat("lea r64, m");
        EXPECT_NEAR(tput(name, "488d40ff"), lat, 0.02) << name;
        // lea rax, [rax+rax*1+1]: three components, the general row
        EXPECT_NEAR(tput(name, "488d440001"), u.lat("lea r64, m"), 0.02) << name;
    }
}

TEST(Timing, StoreThenLoadForwards)
{
    // mov [rdi], rax; mov rax, [rsi]: same address (all registers equal),
    // different base registers, so forwarding and not memory renaming
    for (const char *name : kUarchs) {
        Uarch u(name);
        EXPECT_NEAR(tput(name, "4889078b06" /* 32-bit load: inside the store */),
                    u.u.stlf_latency, 0.05)
            << name;
        EXPECT_NEAR(tput(name, "488907488b06"), u.u.stlf_latency, 0.05) << name;
    }
}

// Store-pipe slots per iteration when consecutive scalar stores to one
// aligned pair_bytes chunk share a slot (two to a slot; pair_bytes 0: off),
// counted over many iterations so pairs across the loop's back edge count.
double store_slots(const tm_uarch &u, const std::vector<uint64_t> &offs)
{
    const int iters = 64;
    uint64_t open = 0; // chunk + 1 of the last store holding a slot alone
    int slots = 0;
    for (int i = 0; i < iters; i++)
        for (uint64_t o : offs) {
            uint64_t chunk = u.store_pair_line ? o / u.store_pair_line + 1 : 0;
            if (chunk && chunk == open) {
                open = 0;
            } else {
                slots++;
                open = chunk;
            }
        }
    return (double)slots / iters;
}

TEST(Timing, StoresToOneChunkShareAStoreSlot)
{
    // four 8-byte stores through rdi (0x12345600, 256-byte aligned): at
    // +0/+8/+0x20/+0x28 they form two pairs for any chunk of 16 bytes or
    // more, at +0/+0x10/+0x20/+0x30 pairs only for 32 bytes or more; the
    // cost is the store pipes' slots (or the
    // AGUs when fewer), from lsu.store_pair_bytes, stores_per_cycle and
    // store_occupancy
    for (const char *name : kUarchs) {
        Uarch u(name);
        auto want = [&](const std::vector<uint64_t> &offs) {
            double st = store_slots(u.u, offs) * u.u.store_occupancy / u.u.store_pipes;
            double agu = (double)offs.size() / u.u.agus;
            return st > agu ? st : agu;
        };
        EXPECT_NEAR(tput(name, "488907" "48894f08" "48895720" "48897728"),
                    want({0, 8, 0x20, 0x28}), 0.05)
            << name;
        EXPECT_NEAR(tput(name, "488907" "48894f10" "48895720" "48897730"),
                    want({0, 0x10, 0x20, 0x30}), 0.05)
            << name;
    }
}

TEST(Timing, LineSplitStoreForwardsToTheSameBytes)
{
    // movups [rdi+off], xmm0; movups xmm0, [rsi+off]: the same 16 bytes
    // (all registers equal); at off 0x3c they cross a 64-byte line, and the
    // split store still forwards, split_penalty later than the unsplit pair
    for (const char *name : kUarchs) {
        Uarch u(name);
        double whole = tput(name, "0f11470c0f10460c");
        double split = tput(name, "0f11473c0f10463c");
        EXPECT_NEAR(split - whole, u.u.split_penalty, 0.02) << name;
        EXPECT_LT(split, whole + u.u.stlf_fail_penalty) << name;
    }
}

TEST(Timing, LinearAliasOfAPhysicalLineReplaysTheLoad)
{
    // mov rax, [rdi]; mov rcx, [rsp]: RSP is 1 GiB above the other
    // registers and every page maps to one physical page, so the two loads
    // reach one physical line through two linear lines; each switch costs
    // the load pipe alias_penalty more cycles.  [rsi+0x40] is another line.
    for (const char *name : kUarchs) {
        Uarch u(name);
        double plain = tput(name, "488b07488b4e40");
        double want = (2.0 + 2.0 * u.u.alias_penalty) / u.u.load_pipes;
        if (want < plain)
            want = plain;
        EXPECT_NEAR(tput(name, "488b07488b0c24"), want, 0.02) << name;
    }
}

TEST(Timing, StoresUseTheMicroTagUnlessTheUarchSaysLoadsOnly)
{
    // mov rax, [rdi]; mov [rsp+8], rcx: a load and a store to one physical
    // line through two linear lines (no overlap, so no forwarding).  Where
    // stores use the linear micro-tag too (znver4), each retrains it and
    // both pay; where only loads do (znver5: l1d.alias_loads_only) the pair
    // runs as a load and a store to different lines (mov [rsi+0x40], rcx).
    for (const char *name : {"znver4", "znver5", "skylake"}) {
        Uarch u(name);
        double mixed = tput(name, "488b0748894c2408");
        double apart = tput(name, "488b0748894e40");
        if (u.u.alias_loads_only || !u.u.alias_penalty)
            EXPECT_NEAR(mixed, apart, 0.02) << name;
        else
            EXPECT_GT(mixed, apart + 0.5 * u.u.alias_penalty) << name;
    }
    EXPECT_TRUE(Uarch("znver5").u.alias_loads_only);
    EXPECT_FALSE(Uarch("znver4").u.alias_loads_only);
}

// The store queue's line filter (model_mem.c sq_lines): a load whose lines
// no queued store touches skips the queue's scan.  Straight through the
// issue functions: a store of `ssize` bytes at 0x10000 + soff, then a load
// of 8 bytes at 0x10000 + loff; whether the load was forwarded to (or
// failed to be) by the store.
bool load_meets_store(unsigned ssize, uint64_t soff, uint64_t loff)
{
    char err[256];
    es_timing *t = es_timing_new("znver4", err, sizeof err);
    EXPECT_NE(t, nullptr) << err;
    if (!t)
        return false;
    tm_sinfo st{}, ld{};
    st.store = 1;
    st.msize = (uint8_t)ssize;
    st.kind = TK_NORMAL;
    ld.load = 1;
    ld.msize = 8;
    ld.kind = TK_NORMAL;
    t->pend_expr = UINT64_MAX;
    t->pend_ea = t->pend_pa = 0x10000 + soff;
    tm_flow f{};
    f.has_addr = true;
    tm_store_issue(t, &st, &f, false);
    tm_store_retired(t, 1000); // retires late: still queued when the load issues
    t->pend_ea = t->pend_pa = 0x10000 + loff;
    tm_flow g{};
    g.has_addr = true;
    tm_load_issue(t, &ld, &g, false);
    es_timing_stats s;
    es_timing_get_stats(t, &s);
    es_timing_free(t);
    return s.stlf + s.stlf_fail > 0;
}

TEST(Timing, TheStoreQueueFilterMissesNoOverlap)
{
    EXPECT_TRUE(load_meets_store(8, 0, 0));
    EXPECT_TRUE(load_meets_store(8, 0x3c, 0x40));     // the store crosses into the load's line
    EXPECT_TRUE(load_meets_store(200, 0x10, 0x80));   // a middle line of a four-line store
    EXPECT_TRUE(load_meets_store(8, 0x80, 0x7c));     // the load crosses into the store's line
    EXPECT_FALSE(load_meets_store(8, 0, 0x40));       // the next line
    EXPECT_FALSE(load_meets_store(200, 0x10, 0x100)); // past the store's end
}

TEST(Timing, StraightLineCodePastTheL1iStreamsFromTheL2WhereTheUarchSaysSo)
{
    // nop; 300 x mov r8d, 1 (1801 bytes): the throughput harness's copies
    // do not fit the L1i, so every line misses.  Where
    // fetch.l2_stream_cycles_per_line is set (znver5, measured: 2.7
    // instructions a cycle) the next line arrives that many cycles after
    // the last, and decode (faster) waits for it; elsewhere each line pays
    // the L2 latency.
    std::string h = "90";
    for (int i = 0; i < 300; i++)
        h += "41b801000000";
    Uarch z5("znver5"), z4("znver4");
    ASSERT_GT(z5.u.l2_stream_cycles, 0u);
    EXPECT_EQ(z4.u.l2_stream_cycles, 0u);
    double lines = 1801.0 / 64;
    EXPECT_NEAR(tput("znver5", h.c_str()), lines * z5.u.l2_stream_cycles, 0.05 * lines * 4);
    EXPECT_GT(tput("znver4", h.c_str()), lines * z4.u.l2.latency);
}

TEST(Timing, PartialOverlapFailsToForward)
{
    // mov [rdi], eax (4 bytes); mov rax, [rsi] (8 bytes): the load needs
    // bytes the store does not have, so it waits for the store to commit
    for (const char *name : kUarchs) {
        Uarch u(name);
        double fwd = tput(name, "488907488b06");
        double fail = tput(name, "8907488b06");
        EXPECT_GE(fail, u.u.stlf_fail_penalty + u.u.l1d_latency) << name;
        EXPECT_GT(fail, fwd) << name;
    }
}

TEST(Timing, MemoryRenamingOnlyWhereTheTableSaysSo)
{
    // mov [rdi+8], rax; mov rax, [rdi+8]: same base and displacement
    for (const char *name : kUarchs) {
        Uarch u(name);
        double c = tput(name, "48894708488b4708");
        if (u.u.memrename)
            EXPECT_LT(c, u.u.stlf_latency) << name;
        else
            EXPECT_NEAR(c, u.u.stlf_latency, 0.05) << name;
    }
}

TEST(Timing, MemoryRenamingNeedsAnUnchangedBaseRegister)
{
    // mov [rdi+8], rax; mov rdi, rsi; mov rax, [rdi+8]: the same expression,
    // but rdi was rewritten between store and load (with the same value), so
    // the rename-time match fails and the load forwards from the store
    // queue: the chain costs the forwarding latency (Agner, Zen 2 chapter)
    for (const char *name : kUarchs) {
        Uarch u(name);
        EXPECT_NEAR(tput(name, "488947084889f7488b4708"), u.u.stlf_latency, 0.05) << name;
    }
}

TEST(Timing, ZeroIdiomBreaksTheChain)
{
    for (const char *name : kUarchs) {
        Uarch u(name);
        // imul rax, rax; or eax, eax: a chain of imul + or
        double chained = tput(name, "480fafc009c0");
        EXPECT_NEAR(chained, u.lat("imul r64, r64") + u.lat("or r32, r32"), 0.05) << name;
        // imul rax, rax; xor eax, eax: the xor does not read rax
        double broken = tput(name, "480fafc031c0");
        EXPECT_LT(broken, u.lat("imul r64, r64")) << name;
    }
}

TEST(Timing, SerialisingCpuidCostsItsTableValue)
{
    for (const char *name : kUarchs) {
        Uarch u(name);
        const tm_priv_cost &pc = u.u.priv[TP_CPUID];
        double c = tput(name, "0fa2");
        if (pc.serialising)
            EXPECT_NEAR(c, pc.cycles, 0.02 * pc.cycles + 0.1) << name;
        else
            EXPECT_GE(c, 1.0) << name;
    }
}

TEST(Timing, LfenceFollowsItsKind)
{
    for (const char *name : kUarchs) {
        Uarch u(name);
        const tm_priv_cost &pc = u.u.priv[TP_LFENCE];
        // lfence; add rax, rax
        double c = tput(name, "0faee84801c0");
        if (pc.serialising)
            EXPECT_GE(c, pc.cycles) << name;
        else
            EXPECT_LT(c, pc.cycles + 2.0 * u.lat("add r64, r64") + 1) << name;
    }
}

TEST(Timing, ThroughputIsDeterministic)
{
    const char *blocks[] = {"498b5510488b14c24883e8014885d2", "488907488b06", "0fa2",
                            "4c89ff4989c5498b042441c74508000000004889442428"};
    for (const char *b : blocks) {
        double a = tput("znver4", b), c = tput("znver4", b);
        EXPECT_EQ(a, c) << b;
    }
}

namespace {

// Runs code on a test machine with the model attached; returns the stats.
es_timing_stats run_timed(const char *uarch, const std::vector<uint8_t> &code)
{
    es_machine *m = est_new(ES_MODE_64);
    char err[256] = "";
    es_timing *t = es_timing_new(uarch, err, sizeof err);
    es_timing_stats st{};
    if (!m || !t) {
        ADD_FAILURE() << err;
    } else {
        EXPECT_EQ(es_timing_attach(t, m), 0);
        est_code(m, code.data(), code.size());
        EXPECT_EQ(est_run(m, code.size(), 1000000), 0);
        es_timing_get_stats(t, &st);
        EXPECT_EQ(st.cycles, es_timing_cycles(t));
    }
    es_timing_free(t);
    es_machine_free(m);
    return st;
}

}  // namespace

TEST(Timing, AttachedModelCountsALoopAndItsBranches)
{
    // mov ecx, N; L: add rax, rax; dec ecx; jnz L
    std::vector<uint8_t> c1000 = hex("b9e80300004801c0ffc975f9");
    std::vector<uint8_t> c2000 = hex("b9d00700004801c0ffc975f9");
    es_timing_stats a = run_timed("znver4", c1000);
    es_timing_stats b = run_timed("znver4", c2000);
    EXPECT_EQ(a.insns, 1 + 3 * 1000u);
    EXPECT_EQ(a.branches, 1000u);
    // a loop branch is learnt: mispredicts only while the global history
    // warms up and at the exit, the same number for both lengths
    EXPECT_LE(a.mispredicts, a.branches / 50);
    EXPECT_EQ(a.mispredicts, b.mispredicts);
    // the add chain bounds the loop: the 1000 extra iterations cost one add
    // latency each (cold caches and warm-up cancel in the difference)
    Uarch u("znver4");
    EXPECT_GE(b.cycles - a.cycles, 1000u * u.lat("add r64, r64"));
    EXPECT_LE(b.cycles - a.cycles, 1000u * u.lat("add r64, r64") + 20);
    es_timing_stats again = run_timed("znver4", c1000);
    EXPECT_EQ(a.cycles, again.cycles);
    EXPECT_EQ(a.uops, again.uops);
}

TEST(Timing, UnpredictableBranchesCostMispredicts)
{
    // rdx = pseudo-random bit stream (xorshift), branch on its low bit:
    // mov ecx, 2000; mov edx, 0x1234567
    // L: mov eax, edx; shl eax, 13; xor edx, eax; mov eax, edx; shr eax, 17;
    //    xor edx, eax; mov eax, edx; shl eax, 5; xor edx, eax;
    //    test dl, 1; jz S; add rbx, 1; S: dec ecx; jnz L
    std::vector<uint8_t> code = hex("b9d0070000ba67452301" "89d0c1e00d31c2" "89d0c1e81131c2"
                                    "89d0c1e00531c2" "f6c2017404" "4883c301" "ffc975de");
    es_timing_stats st = run_timed("znver4", code);
    Uarch u("znver4");
    EXPECT_EQ(st.branches, 4000u);
    // a random branch is mispredicted about half of the time
    EXPECT_GT(st.mispredicts, 500u);
    EXPECT_GE(st.cycles, st.mispredicts * u.u.mispredict_penalty);
}

TEST(Timing, DetachedMachineRunsThePlainLoop)
{
    es_machine *m = est_new(ES_MODE_64);
    EXPECT_EQ(m->nobs, 0);
    char err[256];
    es_timing *t = es_timing_new("znver4", err, sizeof err);
    ASSERT_NE(t, nullptr) << err;
    EXPECT_EQ(m->nobs, 0); // creating a model attaches nothing
    EXPECT_EQ(es_timing_cycles(t), 0u);
    es_timing_free(t);
    es_machine_free(m);
}

TEST(Timing, CmovWaitsForItsOwnDestination)
{
    // cmovne rax, rdx keeps rax when the condition fails, so each copy
    // waits for the previous one: a loop-carried chain of the cmov's
    // latency, not the 1/ports of independent cmovs.  test_decoder checks
    // that the access info reports the destination as a conditional write.
    for (const char *name : kUarchs) {
        Uarch u(name);
        EXPECT_NEAR(tput(name, "480f45c2"), u.lat("cmove r64, r64"), 0.05) << name;
        // four cmovs into four registers: four chains side by side, bound
        // by the chain or by the cmov ports, whichever is slower
        double ports = 4.0 / u.group_ports("cmove r64, r64");
        double lat = u.lat("cmove r64, r64");
        EXPECT_NEAR(tput(name, "480f45c2" "480f45da" "480f45ca" "480f45f2"),
                    ports > lat ? ports : lat, 0.05)
            << name;
    }
}

TEST(Timing, LeaRunsOnTheIntegerPipesItsRowNames)
{
    // eight independent LEAs: bound by the pipes of the lea row that
    // applies (znver4.published.tsv puts Zen 4's on the four ALUs; LLVM's
    // AGU placement would leave only the dispatch width), never faster
    for (const char *name : kUarchs) {
        Uarch u(name);
        double want = 8.0 / u.group_ports("lea r64, m[base+disp]");
        double dispatch = 8.0 / u.u.dispatch_width;
        EXPECT_NEAR(tput(name, "488d4701" "488d5f02" "488d4f03" "488d5704"
                               "488d7705" "4c8d4706" "4c8d4f07" "4c8d5708"),
                    want > dispatch ? want : dispatch, 0.05)
            << name;
    }
}

TEST(Timing, SbbSameRegisterStillWaitsForTheCarry)
{
    // cmp eax, 1; sbb eax, eax; and eax, 3: eax -> CF -> eax -> eax, a
    // loop-carried chain of three ALU latencies whether or not the renamer
    // knows sbb r, r ignores r (it is not a zero idiom: CF is a source)
    for (const char *name : kUarchs) {
        Uarch u(name);
        double chain = u.lat("cmp r32, imm8") + u.lat("sbb r32, r32") + u.lat("and r32, imm8");
        EXPECT_NEAR(tput(name, "83f801" "19c0" "83e003"), chain, 0.05) << name;
        // sbb eax, eax; xor ecx, ecx (the xor gives sbb a fresh CF): only
        // eax can chain the copies, and only where sbb r, r reads r
        double t = tput(name, "19c0" "31c9");
        if (u.u.sbb_same_independent)
            EXPECT_LT(t, u.lat("sbb r32, r32") - 0.2) << name;
        else
            EXPECT_NEAR(t, u.lat("sbb r32, r32"), 0.05) << name;
    }
}

TEST(Timing, TakenBranchEndsItsDispatchCycle)
{
    // five zero idioms (no pipe, dispatch-bound) copied 50 times and the
    // harness's jmp back: 251 ops per trip; where a taken branch ends the
    // dispatch cycle (fetch.taken_branch_ends_group) the trip takes whole
    // cycles, else the dispatch width's exact share
    for (const char *name : kUarchs) {
        Uarch u(name);
        double ops = 50 * 5 + 1, w = u.u.dispatch_width;
        double want = (u.u.taken_ends_group ? std::ceil(ops / w) : ops / w) / 50;
        EXPECT_NEAR(tput(name, "31c0" "31db" "31c9" "31d2" "31f6"), want, 0.002) << name;
    }
}

TEST(Timing, VectorStoresPairOnlyWhereTheyShareTheStorePipes)
{
    // four movaps stores through rdi at +0/+0x10/+0x20/+0x30: with
    // lsu.vec_stores_per_cycle = 0 they take the integer store slots and
    // pair within an lsu.store_pair_bytes chunk like scalar stores; with a
    // vector store pipe of their own, one each per that pipe's cycle
    for (const char *name : kUarchs) {
        Uarch u(name);
        std::vector<uint64_t> offs = {0, 0x10, 0x20, 0x30};
        double st = u.u.vec_store_pipes
                        ? 4.0 * u.u.store_occupancy / u.u.vec_store_pipes
                        : store_slots(u.u, offs) * u.u.store_occupancy / u.u.store_pipes;
        double agu = 4.0 / u.u.agus;
        EXPECT_NEAR(tput(name, "0f2907" "0f294710" "0f294720" "0f294730"), st > agu ? st : agu,
                    0.05)
            << name;
    }
}

TEST(Timing, PipelinedPrivilegedFormsCostTheirTableRow)
{
    // rdtsc is a pipelined row of the priv table (measured back to back):
    // one op holding an integer pipe for its cycles, whatever LLVM's
    // placeholder row says; two copies with an independent add between
    // take twice that, and the add does not wait for them
    for (const char *name : kUarchs) {
        Uarch u(name);
        const tm_priv_cost &pc = u.u.priv[TP_RDTSC];
        ASSERT_FALSE(pc.serialising) << name;
        EXPECT_NEAR(tput(name, "0f31"), pc.cycles, 0.05) << name;
        EXPECT_NEAR(tput(name, "0f31" "4801db" "0f31"), 2.0 * pc.cycles, 0.05) << name;
    }
}

TEST(Timing, MemoryOperationsSustainTheirConfiguredRate)
{
    // six independent loads from one line (rdi = 0x12345600) and nothing
    // else: bound by the load pipes / AGUs, or by the sustained rate
    // lsu.mem_ops_per_1000_cycles where one is set
    for (const char *name : kUarchs) {
        Uarch u(name);
        double want = 6.0 / std::min(u.u.load_pipes, u.u.agus);
        if (u.u.mem_ops_per_kcycle)
            want = std::max(want, 6.0 * 1000.0 / u.u.mem_ops_per_kcycle);
        want = std::max(want, 6.0 / u.u.dispatch_width);
        EXPECT_NEAR(tput(name, "488b07" "488b4f08" "488b5710" "488b7718" "4c8b4720" "4c8b4f28"),
                    want, 0.05)
            << name;
    }
}

TEST(Timing, MoveAndAluOpOnItsDestinationFuseWhereTheUarchSaysSo)
{
    // six pairs mov r32, eax; and r32, 0x400: adjacent (each ALU op on the
    // register the move just wrote) and apart (the same ops, each ALU op on
    // the register of the move before).  Fused (znver5: rename.mov_alu_fusion,
    // measured on Zen 5) a pair is one op, so six pairs are six ALU ops at
    // six per cycle; apart they are twelve ops for the front end.
    const char *adjacent = "89c181e10004000089c281e20004000089c681e60004000089c781e700040000"
                           "4189c04181e0000400004189c14181e100040000";
    const char *apart = "89c181e20004000089c281e60004000089c681e70004000089c74181e000040000"
                        "4189c04181e1000400004189c181e100040000";
    EXPECT_TRUE(Uarch("znver5").u.mov_alu_fusion);
    EXPECT_NEAR(tput("znver5", adjacent), 1.0, 0.02);
    // not fuses too (measured: bench/uarch/mov_not_fusable, 12 a cycle)
    EXPECT_NEAR(tput("znver5", "89c1f7d189c2f7d289c6f7d689c7f7d74189c041f7d04189c141f7d1"), 1.0, 0.02);
    EXPECT_GT(tput("znver5", apart), 1.5);
    for (const char *name : kUarchs) { // no fusion: adjacency changes nothing
        EXPECT_FALSE(Uarch(name).u.mov_alu_fusion) << name;
        EXPECT_NEAR(tput(name, adjacent), tput(name, apart), 0.02) << name;
    }
}

TEST(Timing, AFusedPairsMoveTakesAnAluOnceItsResultIsRead)
{
    // mov edx, eax; and edx, 0xa4 (a fused pair), then an instruction that
    // reads edx or not.  With rename.mov_alu_fusion_read_alu (znver5,
    // measured on Zen 5) a read by anything but a register move costs one
    // ALU op more than an unrelated instruction of the same kind; a move
    // reading it costs what a move of another register does.
    const std::string pair = "89c281e2a4000000";
    Uarch z("znver5");
    ASSERT_TRUE(z.u.mov_alu_fusion && z.u.mov_alu_fusion_read_alu);
    double alu = 1.0 / __builtin_popcount(z.u.dflt.g[0].mask);
    double unread = tput("znver5", (pair + "83f804").c_str()); // cmp eax, 4
    EXPECT_NEAR(tput("znver5", (pair + "83fa04").c_str()) - unread, alu, 0.02); // cmp edx, 4
    EXPECT_NEAR(tput("znver5", (pair + "8d7201").c_str()) - unread, alu, 0.02); // lea esi, [rdx+1]
    // cmp eax, 4; cmp edx, 4: the read need not be next
    EXPECT_NEAR(tput("znver5", (pair + "83f80483fa04").c_str()) -
                    tput("znver5", (pair + "83f80483f904").c_str()),
                alu, 0.02);
    EXPECT_NEAR(tput("znver5", (pair + "89d6").c_str()), // mov esi, edx
                tput("znver5", (pair + "89ce").c_str()), 0.02); // mov esi, ecx
    // a load taking it as an address: no more than another address register
    EXPECT_NEAR(tput("znver5", (pair + "488b3417").c_str()), // mov rsi, [rdi+rdx]
                tput("znver5", (pair + "488b3407").c_str()), 0.02); // mov rsi, [rdi+rax]
    for (const char *name : kUarchs) { // no fusion, no read rule
        EXPECT_FALSE(Uarch(name).u.mov_alu_fusion_read_alu) << name;
        EXPECT_NEAR(tput(name, (pair + "83fa04").c_str()), tput(name, (pair + "83f804").c_str()),
                    0.02)
            << name;
    }
}

TEST(Timing, AnEncodedZeroDisplacementMakesAThreeComponentLeaWhereTheUarchSaysSo)
{
    // lea r13, [r13+rax*8+0] (R13 as a base always carries a displacement
    // byte) chained on r13: like lea r13, [r13+rax*8+8] with
    // lea.encoded_zero_disp (znver5 measured, skylake from Intel's ORM),
    // like lea r12, [r12+rax*8] (no displacement byte) without it
    for (const char *name : {"znver4", "znver5", "skylake", "goldencove"}) {
        bool three = Uarch(name).u.lea_encoded_zero_disp;
        double zero = tput(name, "4d8d6cc500");
        EXPECT_NEAR(zero, tput(name, three ? "4d8d6cc508" : "4d8d24c4"), 0.02) << name;
    }
    EXPECT_TRUE(Uarch("znver5").u.lea_encoded_zero_disp);
    EXPECT_GT(tput("znver5", "4d8d6cc500"), tput("znver5", "4d8d24c4") + 0.5);
}

TEST(Timing, CmovOnCombinedFlagsWaitsACycleMoreForTheFlags)
{
    // cmp rax, rbx; cmovCC rax, rbx: a chain through the flags.  A condition
    // of one flag (E) costs cmp 1 + cmov 1; of two or more (BE: CF and ZF)
    // one more cycle on znver5 (rename.cmov_multi_flag, measured on Zen 5),
    // while the data alone (cmovbe rax, rbx, flags constant) still takes 1.
    EXPECT_NEAR(tput("znver5", "4839d8480f44c3"), 2.0, 0.02);
    EXPECT_NEAR(tput("znver5", "4839d8480f46c3"), 3.0, 0.02);
    EXPECT_NEAR(tput("znver5", "480f46c3"), 1.0, 0.02);
    // znver4 has no such rule (skylake's table itself costs CMOVBE two
    // uops of latency 2, a different mechanism)
    EXPECT_FALSE(Uarch("znver4").u.cmov_multi_flag);
    EXPECT_NEAR(tput("znver4", "4839d8480f46c3"), tput("znver4", "4839d8480f44c3"), 0.02);
}

TEST(Timing, MeasuredRowsOverrideTheBaseTable)
{
    // six independent lea r, [rax+1]: znver4's LLVM rows put simple LEAs on
    // the three AGUs (0.5 per lea -> 1.5 cycles over six with dispatch), the
    // Zen 5 measurements (znver5.measured.tsv) on the six ALUs: one cycle
    const char *leas = "488d5801488d4801488d5001488d7001488d78014c8d4001";
    EXPECT_NEAR(tput("znver5", leas), 1.0, 0.02);
    EXPECT_GT(tput("znver4", leas), 1.4);
}
