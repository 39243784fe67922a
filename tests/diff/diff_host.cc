// diff_host.cc - differential test of the simulator against the host CPU.
//
// Each case is one randomly generated instruction (from the byte templates
// of diff_templates.cc: opcode, ModRM with random fields, prefixes,
// immediates, a memory operand whose base points into the data window)
// plus a random initial state (diff_generate.cc).  It runs natively
// (diff_native.c) and on the simulator (diff_sim.c); registers, the flags
// the SDM defines for the instruction (es_insn.fl_undef masked out), the
// YMM registers (XMM and bits 255:128, which start random on both sides),
// MXCSR and both memory windows must match, and a native fault must be
// the simulator's fault (diff_compare.cc).
//
// Reproduce or extend:   ES_DIFF_SEED=<n> ES_DIFF_CASES=<per family and mode>
//   ES_DIFF_FIRST=<case index>   (or --seed= --cases= --first=)
//   ES_DIFF_SHOW=<n> mismatches printed per mnemonic (--show=), ES_DIFF_VERBOSE=1
//   lists every case
//   --gtest_filter='*alu_64*'    one family in one mode
//   ES_DIFF_DUMP=<file> (--dump=) writes the template table and every
//   generated case (bytes, initial state, outcome) to a file, so that a
//   refactoring of the generator can be shown to change nothing (diff two
//   dumps); ES_DIFF_EMU32=1 (--emu32) runs 32-bit cases as their 64-bit-mode
//   equivalents even on a host with compatibility mode
// Every mismatch prints the exact variables that rerun just that case (and
// so does a simulator crash).
//
// Output, per family and mode: one row per mnemonic with
//   pass    cases that matched (including matching faults: same signal and
//           the same state at the fault),
//   fail    mismatches (the first few are printed in full),
//   unimpl  the simulator raised #UD for a decodable instruction it lacks,
//   faults  passing cases where both sides faulted (#DE, #GP, #XM...),
//   undef~  passing cases where a flag the SDM leaves undefined differs
//           from the host (informational: Zen behaviour is the target).
// x87 condition codes C0..C3 are compared strictly (the decoder exports no
// undefined mask for them).  A totals table by family follows at exit.
#include <gtest/gtest.h>

#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "diff_host.h"
#include "es_shim.h"

using namespace diffhost;

namespace {

// ---------------------------------------------------------------- options

struct Options {
    uint64_t seed = 0x5eed2026;
    unsigned cases = 1000;
    unsigned first = 0;
    unsigned show = 3;        // mismatches printed per mnemonic
    bool verbose = false;     // ES_DIFF_VERBOSE=1: print every case
    bool force_emu32 = false; // ES_DIFF_EMU32=1: the no-compatibility-mode path
    FILE *dump = nullptr;     // ES_DIFF_DUMP=<file>: every case written out
} g_opt;

// ---------------------------------------------------------------- the tests

struct Param {
    const char *fam;
    int mode;
};

void PrintTo(const Param &p, std::ostream *os)
{
    *os << p.fam << (p.mode == ES_MODE_64 ? " in 64-bit mode" : " in 32-bit mode");
}

std::string param_name(const testing::TestParamInfo<Param> &i)
{
    return std::string(i.param.fam) + (i.param.mode == ES_MODE_64 ? "_64" : "_32");
}

struct Stat {
    unsigned pass = 0, fail = 0, unimpl = 0, faults = 0, undef = 0, shown = 0;
};

// Totals over the whole run, printed at exit (the progress meter).
struct Totals {
    std::map<std::string, Stat> by_fam;
    ~Totals()
    {
        if (by_fam.empty())
            return;
        printf("\n==== differential test totals (seed %#" PRIx64 ", %u cases per family/mode)\n",
               g_opt.seed, g_opt.cases);
        printf("%-12s %8s %8s %8s %8s\n", "family", "pass", "fail", "unimpl", "rate");
        for (auto &[k, s] : by_fam) {
            unsigned tot = s.pass + s.fail + s.unimpl;
            printf("%-12s %8u %8u %8u %7.1f%%\n", k.c_str(), s.pass, s.fail, s.unimpl,
                   tot ? 100.0 * s.pass / tot : 0.0);
        }
    }
};
Totals g_totals;

bool features_ok(const Tmpl &t)
{
    if (t.fam == "bmi")
        return __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2");
    // avx also has VPMOVMSKB ymm (AVX2); VAES/VPCLMULQDQ are not drawn
    if (t.fam == "avx")
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("aes") &&
               __builtin_cpu_supports("pclmul");
    if (t.fam == "avx2")
        return __builtin_cpu_supports("avx2");
    if (t.fam == "fma")
        return __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
    if (t.map == 2 && (t.opc == 0xf0 || t.opc == 0xf1) && t.pfx == 0)
        return __builtin_cpu_supports("movbe");
    if (t.map == 2 && t.opc == 0xf6)
        return __builtin_cpu_supports("adx");
    if (t.fam.rfind("sse", 0) == 0)
        return __builtin_cpu_supports("sse4.2");
    if (t.pfx == 0xf3 && t.map == 1 && (t.opc == 0xbc || t.opc == 0xbd || t.opc == 0xb8))
        return __builtin_cpu_supports("lzcnt") && __builtin_cpu_supports("popcnt") &&
               __builtin_cpu_supports("bmi");
    return true;
}

// The family's templates this host can run natively in this mode.
std::vector<const Tmpl *> family_templates(const char *fam, int mode, bool emu32)
{
    std::vector<const Tmpl *> ts;
    for (const Tmpl &t : templates())
        if (t.fam == fam && features_ok(t) &&
            !((t.f & T_NO64) && mode == ES_MODE_64) && !((t.f & T_NO32) && mode == ES_MODE_32) &&
            !(emu32 && (t.f & T_COMPAT)))
            ts.push_back(&t);
    return ts;
}

void note_emulated_32()
{
    static bool told;
    if (told)
        return;
    told = true;
    if (g_opt.force_emu32)
        printf("NOTE: --emu32 (ES_DIFF_EMU32=1): 32-bit cases run natively as their 64-bit-mode\n"
               "      equivalents, as on a host without compatibility mode (32-bit-operand\n"
               "      stack operations and PUSHA/POPA are not drawn).\n");
    else
        printf("NOTE: this host cannot run compatibility-mode code (USER32_CS unusable: a PVM\n"
               "      guest or ia32_emulation=0).  32-bit cases run natively as their 64-bit-mode\n"
               "      equivalents; 32-bit-operand PUSH/POP/PUSHF/POPF/ENTER/LEAVE and PUSHA/POPA\n"
               "      are not drawn (16-bit forms are).\n");
}

// One family in one mode: its templates, the simulated machine and the
// counts so far.
struct FamilyRun {
    Param prm;
    int mode;
    bool emu32;
    std::vector<const Tmpl *> ts;
    es_machine *m;
    std::map<std::string, Stat> st; // by mnemonic
    Stat &tot;
    uint64_t hash; // the family's seed: FNV-1a of its name, stable across builds
    unsigned fails = 0, skipped = 0;
    int bits() const { return mode == ES_MODE_64 ? 64 : 32; }
};

uint64_t family_hash(const char *fam, int mode)
{
    uint64_t h = 1469598103934665603ull ^ (unsigned)mode;
    for (const char *q = fam; *q; q++)
        h = (h ^ (uint8_t)*q) * 1099511628211ull;
    return h;
}

std::string disasm(const Case &c, int mode)
{
    char dis[128];
    es_format(c.code, c.len, mode, EST_CODE, ES_SYNTAX_INTEL, dis, sizeof dis);
    return dis;
}

// Case i: up to 20 draws of a template until one decodes; the template, or
// null when none did.
const Tmpl *draw(const FamilyRun &fr, unsigned i, Case &c)
{
    Rng r(mix(mix(g_opt.seed, fr.hash), i));
    bool ok = false;
    const Tmpl *drawn = nullptr;
    for (int tries = 0; tries < 20 && !ok; tries++) {
        drawn = fr.ts[r.below((uint32_t)fr.ts.size())];
        ok = generate(*drawn, fr.mode, fr.emu32, r, c);
    }
    return ok ? drawn : nullptr;
}

// Runs case i natively and on the simulator (whose crash prints how to
// reproduce the case).
void run_both(const FamilyRun &fr, unsigned i, const Case &c, diff_result &nr, diff_result &sr)
{
    diff_native_run(fr.emu32 ? ES_MODE_64 : fr.mode, c.native, c.nlen, &c.st, c.data, c.stack,
                    &nr);
    if (fr.mode == ES_MODE_32)
        for (int k = 0; k < 16; k++)
            nr.st.gpr[k] &= 0xffffffffu;
    static char ctx[256];
    snprintf(ctx, sizeof ctx,
             "[%s/%d] %s\n  reproduce: ES_DIFF_SEED=%#" PRIx64
             " ES_DIFF_FIRST=%u ES_DIFF_CASES=1 es_diff_host --gtest_filter='*/%s'",
             fr.prm.fam, fr.bits(), disasm(c, fr.mode).c_str(), g_opt.seed, i,
             param_name(testing::TestParamInfo<Param>(fr.prm, 0)).c_str());
    diff_set_context(ctx);
    diff_sim_run(fr.m, c.code, c.len, &c.st, c.data, c.stack, &sr);
    diff_set_context(nullptr);
}

// Counts the outcome under the mnemonic and the family.
Stat &tally(FamilyRun &fr, const Case &c, const diff_result &nr, const Outcome &o)
{
    // (a gather with a register named twice does not decode: its #UD case)
    Stat &s = fr.st[c.d.op == ES_OP_INVALID ? "(gather #UD)" : es_op_name(c.d.op)];
    if (o.ok) {
        s.pass++, fr.tot.pass++;
        s.faults += nr.fault != 0;
        s.undef += o.undef_diff;
    } else if (o.unimpl) {
        s.unimpl++, fr.tot.unimpl++, fr.fails++;
    } else {
        s.fail++, fr.tot.fail++, fr.fails++;
    }
    return s;
}

std::string bytes_text(const uint8_t *b, size_t n)
{
    char out[64] = "";
    for (size_t k = 0; k < n; k++)
        snprintf(out + 3 * k, 4, "%02x ", b[k]);
    return out;
}

void report_mismatch(const FamilyRun &fr, unsigned i, const Case &c, const Outcome &o)
{
    std::string nat;
    if (fr.emu32)
        nat = "  host ran the 64-bit-mode equivalent " + bytes_text(c.native, c.nlen) + "\n";
    ADD_FAILURE() << "[" << fr.prm.fam << (fr.mode == ES_MODE_64 ? "/64] " : "/32] ")
                  << disasm(c, fr.mode) << "   (" << bytes_text(c.code, c.len) << ")\n"
                  << nat << "  reproduce: ES_DIFF_SEED=" << hex(g_opt.seed)
                  << " ES_DIFF_FIRST=" << i << " ES_DIFF_CASES=1 es_diff_host --gtest_filter='*/"
                  << param_name(testing::TestParamInfo<Param>(fr.prm, 0)) << "'\n"
                  << o.why;
}

void run_case(FamilyRun &fr, unsigned i)
{
    static Case c;
    static diff_result nr, sr;
    const Tmpl *drawn = draw(fr, i, c);
    if (!drawn) {
        fr.skipped++;
        if (g_opt.dump)
            fprintf(g_opt.dump, "%s/%d #%u skipped\n", fr.prm.fam, fr.bits(), i);
        return;
    }
    run_both(fr, i, c, nr, sr);
    Outcome o = compare(c, fr.mode, nr, sr);
    if (g_opt.dump)
        dump_case(g_opt.dump, fr.prm.fam, fr.mode, i, (long)(drawn - templates().data()), c, nr,
                  sr, o);
    if (g_opt.verbose)
        printf("[%s/%d] #%u %-4s %s\n", fr.prm.fam, fr.bits(), i,
               o.ok ? "ok" : o.unimpl ? "unim" : "FAIL", disasm(c, fr.mode).c_str());
    Stat &s = tally(fr, c, nr, o);
    if (!o.ok && !o.unimpl && s.shown++ < g_opt.show)
        report_mismatch(fr, i, c, o);
}

void print_table(const FamilyRun &fr)
{
    const char *fam = fr.prm.fam;
    printf("[%s/%d] %-12s %6s %6s %6s %6s %7s\n", fam, fr.bits(), "mnemonic", "pass", "fail",
           "unimpl", "faults", "undef~");
    for (auto &[mn, s] : fr.st)
        printf("[%s/%d] %-12s %6u %6u %6u %6u %7u%s\n", fam, fr.bits(), mn.c_str(), s.pass,
               s.fail, s.unimpl, s.faults, s.undef,
               s.fail ? "  <- MISMATCH" : s.unimpl ? "  <- not implemented" : "");
    if (fr.skipped)
        printf("[%s/%d] %u cases skipped (no decodable encoding drawn)\n", fam, fr.bits(),
               fr.skipped);
}

class DiffHost : public testing::TestWithParam<Param> {};

TEST_P(DiffHost, Run)
{
    const Param prm = GetParam();
    const int mode = prm.mode;
    char err[128];
    ASSERT_EQ(diff_native_init(err, sizeof err), 0) << err;

    // The simulated CPU is the host's vendor: where the SDM leaves a result
    // undefined (16-bit SHLD/SHRD counts over 16, the x87 error pointers,
    // REP with ECX = 0) entrysim models both Intel and AMD (--cpu), and the
    // host checks the one it is.
    const int host_vendor = __builtin_cpu_is("amd") ? 1 : 0;
    const bool emu32 = mode == ES_MODE_32 && (g_opt.force_emu32 || !diff_native_has_compat());
    if (emu32)
        note_emulated_32();
    std::vector<const Tmpl *> ts = family_templates(prm.fam, mode, emu32);
    if (ts.empty())
        GTEST_SKIP() << prm.fam << " has no forms this host can run natively in this mode";

    es_machine *m = diff_sim_new(mode);
    ASSERT_NE(m, nullptr);
    m->vendor = (uint8_t)host_vendor;
    Stat &tot = g_totals.by_fam[std::string(prm.fam) + (mode == ES_MODE_64 ? "/64" : "/32")];
    FamilyRun fr{prm, mode, emu32, ts, m, {}, tot, family_hash(prm.fam, mode)};
    for (unsigned i = g_opt.first; i < g_opt.first + g_opt.cases; i++)
        run_case(fr, i);
    es_machine_free(m);
    print_table(fr);
    const unsigned fails = fr.fails;
    EXPECT_EQ(fails, 0u) << "mismatching or unimplemented cases in " << prm.fam;
}

// The harness itself: the native runner really executes (known results,
// memory, a fault), and compare() notices every kind of difference.  Without
// this a broken stub could make every family "pass".
void check_native_runner(Case &c, diff_result &n)
{
    const uint8_t add[] = {0x01, 0xd8}; // add eax, ebx
    diff_native_run(ES_MODE_64, add, sizeof add, &c.st, c.data, c.stack, &n);
    EXPECT_EQ(n.fault, 0);
    EXPECT_EQ(n.st.gpr[ES_RAX], 3u);
    EXPECT_EQ(n.st.rflags & kCmpFlags, (uint64_t)ES_PF);
    const uint8_t store[] = {0x48, 0x89, 0x1c, 0x25, 0x00, 0x01, 0x60, 0x00}; // mov [0x600100], rbx
    diff_native_run(ES_MODE_64, store, sizeof store, &c.st, c.data, c.stack, &n);
    EXPECT_EQ(n.data[0x100], 2);
    EXPECT_EQ(n.data[0x101], 0);
    const uint8_t push[] = {0x53}; // push rbx
    diff_native_run(ES_MODE_64, push, sizeof push, &c.st, c.data, c.stack, &n);
    EXPECT_EQ(n.st.gpr[ES_RSP], DIFF_STACK + 0x1000 - 8);
    EXPECT_EQ(n.stack[0x1000 - 8], 2);
    const uint8_t div[] = {0xf7, 0xf1}; // div ecx (ecx = 0)
    diff_native_run(ES_MODE_64, div, sizeof div, &c.st, c.data, c.stack, &n);
    EXPECT_EQ(n.fault, SIGFPE);
    // the YMM upper halves go in and come out: a legacy SSE instruction
    // keeps them, a VEX.128 one zeroes its destination's, VEX.256 computes
    // them, and they are read at a fault too
    diff_state st = c.st;
    for (int i = 0; i < 16; i++)
        for (int b = 0; b < 16; b++)
            st.ymmh[i][b] = (uint8_t)(0x11 * (i + 1) + b);
    const uint8_t por[] = {0x66, 0x0f, 0xeb, 0xca}; // por xmm1, xmm2
    diff_native_run(ES_MODE_64, por, sizeof por, &st, c.data, c.stack, &n);
    EXPECT_EQ(n.fault, 0);
    EXPECT_EQ(memcmp(n.st.ymmh, st.ymmh, sizeof st.ymmh), 0);
    const uint8_t vpor128[] = {0xc5, 0xf1, 0xeb, 0xca}; // vpor xmm1, xmm1, xmm2
    diff_native_run(ES_MODE_64, vpor128, sizeof vpor128, &st, c.data, c.stack, &n);
    const uint8_t zero[16] = {0};
    EXPECT_EQ(memcmp(n.st.ymmh[1], zero, 16), 0);
    EXPECT_EQ(memcmp(n.st.ymmh[2], st.ymmh[2], 16), 0);
    EXPECT_EQ(memcmp(n.st.ymmh[15], st.ymmh[15], 16), 0);
    const uint8_t vpor256[] = {0xc5, 0xf5, 0xeb, 0xca}; // vpor ymm1, ymm1, ymm2
    diff_native_run(ES_MODE_64, vpor256, sizeof vpor256, &st, c.data, c.stack, &n);
    EXPECT_EQ(n.st.ymmh[1][0], (uint8_t)(st.ymmh[1][0] | st.ymmh[2][0]));
    const uint8_t ud2[] = {0x0f, 0x0b};
    diff_native_run(ES_MODE_64, ud2, sizeof ud2, &st, c.data, c.stack, &n);
    EXPECT_EQ(n.fault, SIGILL);
    EXPECT_EQ(memcmp(n.st.ymmh, st.ymmh, sizeof st.ymmh), 0);
}

// compare(): equal results pass, each kind of difference fails.
void check_compare(Case &c, diff_result &n, diff_result &s)
{
    const uint8_t add[] = {0x01, 0xd8}; // add eax, ebx
    c.len = sizeof add;
    memcpy(c.code, add, sizeof add);
    ASSERT_EQ(es_decode(c.code, c.len, ES_MODE_64, EST_CODE, &c.d), ES_DECODE_OK);
    diff_native_run(ES_MODE_64, add, sizeof add, &c.st, c.data, c.stack, &n);
    s = n;
    EXPECT_TRUE(compare(c, ES_MODE_64, n, s).ok);
    s.st.gpr[ES_R15] ^= 1ull << 63;
    EXPECT_FALSE(compare(c, ES_MODE_64, n, s).ok);
    s = n;
    s.st.rflags ^= ES_OF;
    EXPECT_FALSE(compare(c, ES_MODE_64, n, s).ok);
    s = n;
    s.st.xmm[15][15] ^= 1;
    EXPECT_FALSE(compare(c, ES_MODE_64, n, s).ok);
    s = n;
    s.st.ymmh[15][15] ^= 1;
    EXPECT_FALSE(compare(c, ES_MODE_64, n, s).ok);
    s = n;
    s.st.ymmh[0][0] ^= 1;
    EXPECT_FALSE(compare(c, ES_MODE_32, n, s).ok);
    s = n;
    s.stack[DIFF_STACK_SIZE - 1] ^= 1;
    EXPECT_FALSE(compare(c, ES_MODE_64, n, s).ok);
    s = n;
    s.fault = VEC_DE + 1;
    EXPECT_FALSE(compare(c, ES_MODE_64, n, s).ok);
    // a flag the SDM leaves undefined (AF after AND) is noted, not failed
    const uint8_t andi[] = {0x21, 0xd8}; // and eax, ebx
    memcpy(c.code, andi, sizeof andi);
    c.len = sizeof andi;
    ASSERT_EQ(es_decode(c.code, c.len, ES_MODE_64, EST_CODE, &c.d), ES_DECODE_OK);
    ASSERT_TRUE(c.d.fl_undef & ES_AF);
    diff_native_run(ES_MODE_64, andi, sizeof andi, &c.st, c.data, c.stack, &n);
    s = n;
    s.st.rflags ^= ES_AF;
    Outcome u = compare(c, ES_MODE_64, n, s);
    EXPECT_TRUE(u.ok);
    EXPECT_TRUE(u.undef_diff);
    s.st.rflags ^= ES_ZF;
    EXPECT_FALSE(compare(c, ES_MODE_64, n, s).ok);
    // x87 state differences are caught too
    s = n;
    s.st.fx[2] ^= 1; // FSW.IE
    EXPECT_FALSE(compare(c, ES_MODE_64, n, s).ok);
    // the 32-bit view ignores upper halves and xmm8-15
    s = n;
    s.st.xmm[8][0] ^= 1;
    s.st.ymmh[8][0] ^= 1;
    EXPECT_TRUE(compare(c, ES_MODE_32, n, s).ok);
}

TEST(DiffHarness, NativeRunnerAndCompareCanFail)
{
    char err[128];
    ASSERT_EQ(diff_native_init(err, sizeof err), 0) << err;
    static Case c;
    static diff_result n, s;
    memset(&c, 0, sizeof c);
    c.st.gpr[ES_RAX] = 1;
    c.st.gpr[ES_RBX] = 2;
    c.st.gpr[ES_RSP] = DIFF_STACK + 0x1000;
    c.st.rflags = 2;
    c.st.mxcsr = 0x1f80;
    c.data[0x100] = 0xaa;
    check_native_runner(c, n);
    check_compare(c, n, s);
    if (diff_native_has_compat()) {
        const uint8_t inc[] = {0x40}; // inc eax (32-bit mode)
        diff_native_run(ES_MODE_32, inc, sizeof inc, &c.st, c.data, c.stack, &n);
        EXPECT_EQ(n.fault, 0);
        EXPECT_EQ(n.st.gpr[ES_RAX], 2u);
    }
}

const Param kParams[] = {
    {"alu", ES_MODE_64},    {"alu", ES_MODE_32},    {"shift", ES_MODE_64},
    {"shift", ES_MODE_32},  {"muldiv", ES_MODE_64}, {"muldiv", ES_MODE_32},
    {"bits", ES_MODE_64},   {"bits", ES_MODE_32},   {"bmi", ES_MODE_64},
    {"bmi", ES_MODE_32},    {"mov", ES_MODE_64},    {"mov", ES_MODE_32},
    {"stack", ES_MODE_64},  {"stack", ES_MODE_32},  {"string", ES_MODE_64},
    {"string", ES_MODE_32}, {"atomic", ES_MODE_64}, {"atomic", ES_MODE_32},
    {"sse_int", ES_MODE_64}, {"sse_int", ES_MODE_32}, {"sse_fp", ES_MODE_64},
    {"sse_fp", ES_MODE_32}, {"misc", ES_MODE_64},   {"misc", ES_MODE_32},
    {"x87", ES_MODE_64},    {"x87", ES_MODE_32},    {"bcd", ES_MODE_32},
    {"legacy32", ES_MODE_32}, {"mmx", ES_MODE_64},   {"mmx", ES_MODE_32},
    {"crypto", ES_MODE_64}, {"crypto", ES_MODE_32},
    {"avx", ES_MODE_64},    {"avx", ES_MODE_32},    {"avx2", ES_MODE_64},
    {"avx2", ES_MODE_32},   {"fma", ES_MODE_64},    {"fma", ES_MODE_32},
};

INSTANTIATE_TEST_SUITE_P(Families, DiffHost, testing::ValuesIn(kParams), param_name);

// ---------------------------------------------------------------- options

void read_env()
{
    if (const char *e = getenv("ES_DIFF_SEED"))
        g_opt.seed = strtoull(e, nullptr, 0);
    if (const char *e = getenv("ES_DIFF_CASES"))
        g_opt.cases = (unsigned)strtoul(e, nullptr, 0);
    if (const char *e = getenv("ES_DIFF_FIRST"))
        g_opt.first = (unsigned)strtoul(e, nullptr, 0);
    if (const char *e = getenv("ES_DIFF_VERBOSE"))
        g_opt.verbose = atoi(e) != 0;
    if (const char *e = getenv("ES_DIFF_SHOW"))
        g_opt.show = (unsigned)strtoul(e, nullptr, 0);
    if (const char *e = getenv("ES_DIFF_EMU32"))
        g_opt.force_emu32 = atoi(e) != 0;
}

// The arguments GoogleTest left; false for --long without ES_DIFF_LONG (the
// long run is skipped).  *dump: the dump file's name, if one is given.
bool read_args(int argc, char **argv, const char **dump)
{
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "--seed=", 7))
            g_opt.seed = strtoull(argv[i] + 7, nullptr, 0);
        else if (!strncmp(argv[i], "--cases=", 8))
            g_opt.cases = (unsigned)strtoul(argv[i] + 8, nullptr, 0);
        else if (!strncmp(argv[i], "--first=", 8))
            g_opt.first = (unsigned)strtoul(argv[i] + 8, nullptr, 0);
        else if (!strncmp(argv[i], "--show=", 7))
            g_opt.show = (unsigned)strtoul(argv[i] + 7, nullptr, 0);
        else if (!strncmp(argv[i], "--dump=", 7))
            *dump = argv[i] + 7;
        else if (!strcmp(argv[i], "--emu32"))
            g_opt.force_emu32 = true;
        else if (!strcmp(argv[i], "--long") && !getenv("ES_DIFF_LONG"))
            return false;
    }
    return true;
}

} // namespace

int main(int argc, char **argv)
{
    testing::InitGoogleTest(&argc, argv);
    read_env();
    const char *dump = getenv("ES_DIFF_DUMP");
    if (!read_args(argc, argv, &dump)) {
        printf("diff_host_long: skipped (set ES_DIFF_LONG=1 to run it)\n");
        return 77;
    }
    if (dump && *dump) {
        g_opt.dump = fopen(dump, "w");
        if (!g_opt.dump) {
            perror(dump);
            return 1;
        }
        dump_templates(g_opt.dump);
    }
    int rc = RUN_ALL_TESTS();
    if (g_opt.dump)
        fclose(g_opt.dump);
    return rc;
}
