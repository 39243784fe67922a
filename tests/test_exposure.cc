// Exposure analysis against the guest kernel images: each seed patch's own
// effect on which user values reach the dispatcher, the table's target and
// the body, and `explain`'s listing of the recv stub.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include "decoder.h"
#include "demo.h"
#include "cmd_explain.h"
#include "cmd_util.h"
#include "cmd_exposure.h"
#include "exposure.h"
#include "kernel.h"
#include "machine.h"

#define L(r) ES_TL_REG(ES_##r)

static const uint16_t BIT_RCX = 1u << ES_RCX, BIT_RDX = 1u << ES_RDX, BIT_R8 = 1u << ES_R8,
                      BIT_R9 = 1u << ES_R9, BIT_RSI = 1u << ES_RSI;

static es_exposure run(unsigned patches, int entry, const char *name, int vendor = -1)
{
    es_exposure e;
    int rc = es_exposure_run(patches, entry, vendor, name, &e);
    EXPECT_EQ(rc, 0) << e.error;
    return e;
}

static const es_probe &P(const es_exposure &e, int p)
{
    EXPECT_TRUE(e.probe[p].present) << p;
    EXPECT_TRUE(e.probe[p].hit) << e.probe[p].symbol;
    return e.probe[p];
}

// registers holding anything user-derived besides the syscall number
static uint16_t user_regs(const es_probe &p)
{
    uint16_t m = 0;
    for (int r = 0; r < 16; r++)
        if (p.regs[r] & ~ES_TL_NR)
            m |= (uint16_t)(1u << r);
    return m;
}

TEST(Exposure, ReadThroughSyscall64V416ExposesR10R8R9AtTheTableTarget)
{
    es_exposure e = run(ES_CONV_V416, ES_ENTRY_SYSCALL64, "read");
    EXPECT_EQ(e.nr, 0);
    EXPECT_EQ(e.arity, 3);
    const es_probe &t = P(e, ES_PROBE_TABLE_TARGET);
    EXPECT_STREQ(t.symbol, "sys_read");
    EXPECT_EQ(t.exposed, BIT_RCX | BIT_R8 | BIT_R9);
    EXPECT_EQ(t.regs[ES_RCX], L(R10)); // the 4th C argument carries user r10
    EXPECT_EQ(t.regs[ES_R8], L(R8));
    EXPECT_EQ(t.regs[ES_R9], L(R9));
    EXPECT_EQ(t.regs[ES_RDI], L(RDI)); // declared arguments are not exposed
    EXPECT_EQ(t.regs[ES_RSI], L(RSI));
    EXPECT_EQ(t.regs[ES_RDX], L(RDX));
}

TEST(Exposure, ReadThroughSyscall64V417ExposesNothing)
{
    es_exposure e = run(ES_CONV_V417, ES_ENTRY_SYSCALL64, "read");
    const es_probe &d = P(e, ES_PROBE_DISPATCH), &t = P(e, ES_PROBE_TABLE_TARGET),
                   &b = P(e, ES_PROBE_BODY);
    EXPECT_STREQ(t.symbol, "__x64_sys_read");
    EXPECT_STREQ(b.symbol, "__do_sys_read");
    EXPECT_EQ(d.exposed, 0);
    EXPECT_EQ(t.exposed, 0);
    EXPECT_EQ(user_regs(t), 0); // only the pt_regs pointer, no user value at all
    EXPECT_EQ(b.exposed, 0);
    EXPECT_EQ(b.regs[ES_RDI], L(RDI));
    EXPECT_EQ(b.regs[ES_RSI], L(RSI));
    EXPECT_EQ(b.regs[ES_RDX], L(RDX));
    EXPECT_EQ(es_exposure_count(&e), 0);
}

// 6dc936f on its own: the 64-bit entry clears dx and cx, so the user's rdx
// and the user rip that SYSCALL left in rcx no longer reach do_syscall_64.
TEST(Exposure, Patch6dc936fClearsRdxRcxAtDispatch)
{
    es_exposure v416 = run(ES_CONV_V416, ES_ENTRY_SYSCALL64, "read");
    const es_probe &before = P(v416, ES_PROBE_DISPATCH);
    EXPECT_EQ(before.regs[ES_RDX], L(RDX));
    EXPECT_EQ(before.regs[ES_RCX], ES_TL_RIP);
    EXPECT_TRUE(before.exposed & BIT_RDX);
    es_exposure e = run(ES_PATCH_6DC936F, ES_ENTRY_SYSCALL64, "read");
    const es_probe &after = P(e, ES_PROBE_DISPATCH);
    EXPECT_EQ(after.regs[ES_RDX], 0u);
    EXPECT_EQ(after.regs[ES_RCX], 0u);
    EXPECT_FALSE(after.exposed & (BIT_RDX | BIT_RCX));
    // the table target is still v4.16's: the same C-argument leftovers
    EXPECT_EQ(P(e, ES_PROBE_TABLE_TARGET).exposed, BIT_RCX | BIT_R8 | BIT_R9);
}

// dfe64506 on its own: do_syscall_64(nr, regs) receives the number in rdi,
// which is a declared argument there, and the user's rsi is gone.
TEST(Exposure, PatchDfe64506PassesNrInRdi)
{
    es_exposure v416 = run(ES_CONV_V416, ES_ENTRY_SYSCALL64, "read");
    const es_probe &before = P(v416, ES_PROBE_DISPATCH);
    EXPECT_EQ(before.regs[ES_RDI], 0u); // v4.16: the regs pointer
    es_exposure e = run(ES_PATCH_DFE64506, ES_ENTRY_SYSCALL64, "read");
    const es_probe &d = P(e, ES_PROBE_DISPATCH);
    EXPECT_EQ(d.regs[ES_RDI], ES_TL_NR);
    EXPECT_FALSE(d.exposed & (1u << ES_RDI));
    EXPECT_EQ(d.regs[ES_RSI], 0u);
}

// fa697140 on its own: the 64-bit table points at __x64_sys_* stubs that
// take only the pt_regs pointer; the ia32 table is untouched.
TEST(Exposure, PatchFa697140SwitchesOnlyThe64BitTable)
{
    es_exposure e = run(ES_PATCH_FA697140, ES_ENTRY_SYSCALL64, "read");
    const es_probe &t = P(e, ES_PROBE_TABLE_TARGET);
    EXPECT_STREQ(t.symbol, "__x64_sys_read");
    EXPECT_FALSE(t.exposed & (BIT_R8 | BIT_R9));
    EXPECT_EQ(P(e, ES_PROBE_BODY).exposed & (BIT_R8 | BIT_R9), 0);
    es_exposure i = run(ES_PATCH_FA697140, ES_ENTRY_INT80, "read");
    EXPECT_STREQ(P(i, ES_PROBE_TABLE_TARGET).symbol, "sys_read");
}

// ebeb8c82 on its own: the ia32 table's stubs take pt_regs too.
TEST(Exposure, PatchEbeb8c82SwitchesTheIa32Table)
{
    es_exposure v416 = run(ES_CONV_V416, ES_ENTRY_INT80, "read");
    const es_probe &t0 = P(v416, ES_PROBE_TABLE_TARGET);
    EXPECT_STREQ(t0.symbol, "sys_read");
    EXPECT_EQ(t0.regs[ES_RCX], L(RSI)); // arg 4 position carries user esi
    EXPECT_TRUE(t0.exposed & (BIT_RCX | BIT_R8 | BIT_R9));
    es_exposure e = run(ES_PATCH_EBEB8C82, ES_ENTRY_INT80, "read");
    const es_probe &t = P(e, ES_PROBE_TABLE_TARGET);
    EXPECT_STREQ(t.symbol, "__ia32_sys_read");
    EXPECT_FALSE(t.exposed & (BIT_R8 | BIT_R9));
}

TEST(Exposure, Int80V417BodyGetsEbxEcxEdx)
{
    es_exposure e = run(ES_CONV_V417, ES_ENTRY_INT80, "read");
    const es_probe &b = P(e, ES_PROBE_BODY);
    EXPECT_EQ(b.regs[ES_RDI], L(RBX));
    EXPECT_EQ(b.regs[ES_RSI], L(RCX));
    EXPECT_EQ(b.regs[ES_RDX], L(RDX));
    EXPECT_EQ(b.exposed, 0);
    EXPECT_EQ(es_exposure_count(&e), 0);
}

// The AMD vDSO's SYSCALL path: ECX is clobbered, arg 2 rides in EBP.
TEST(Exposure, Syscall32Arg2ComesFromEbp)
{
    es_exposure e = run(ES_CONV_V417, ES_ENTRY_SYSCALL32, "read", 1);
    const es_probe &b = P(e, ES_PROBE_BODY);
    EXPECT_EQ(b.regs[ES_RSI], L(RBP));
    EXPECT_EQ(b.regs[ES_RDI], L(RBX));
    EXPECT_FALSE(b.exposed & BIT_RSI);
}

// sysenter32 / syscall32: the 6th argument comes from the user stack.
TEST(Exposure, SixthArgumentFromTheUserStack)
{
    es_exposure e = run(ES_CONV_V416, ES_ENTRY_SYSENTER32, "mmap2", 0);
    const es_probe &b = P(e, ES_PROBE_BODY);
    EXPECT_EQ(e.arity, 6);
    EXPECT_EQ(b.regs[ES_R9], ES_TL_MEM);
    EXPECT_FALSE(b.exposed & BIT_R9);
}

TEST(Exposure, X32UsesTheCommonStubs)
{
    es_exposure e = run(ES_CONV_V417, ES_ENTRY_X32, "read");
    EXPECT_STREQ(P(e, ES_PROBE_TABLE_TARGET).symbol, "__x64_sys_read");
    EXPECT_EQ(P(e, ES_PROBE_DISPATCH).regs[ES_RDI], ES_TL_NR);
    EXPECT_EQ(es_exposure_count(&e), 0);
}

// getcpu through the vsyscall page: emulate_vsyscall zeroes regs->dx (the
// cache argument) around the pt_regs call, as fa697140 does.
TEST(Exposure, VsyscallGetcpu)
{
    es_exposure e = run(ES_CONV_V417, ES_ENTRY_VSYSCALL, "getcpu");
    EXPECT_STREQ(P(e, ES_PROBE_DISPATCH).symbol, "emulate_vsyscall");
    EXPECT_STREQ(P(e, ES_PROBE_TABLE_TARGET).symbol, "__x64_sys_getcpu");
    const es_probe &b = P(e, ES_PROBE_BODY);
    EXPECT_EQ(b.regs[ES_RDI], L(RDI));
    EXPECT_EQ(b.regs[ES_RSI], L(RSI));
    EXPECT_EQ(b.regs[ES_RDX], 0u);
    EXPECT_EQ(b.regs[ES_RSP], 0u); // the exception's stack switch
}

TEST(Exposure, IllegalVendorEntryCombinationsAreRefused)
{
    es_exposure e;
    EXPECT_EQ(es_exposure_run(ES_CONV_V417, ES_ENTRY_SYSCALL32, 0, "read", &e), -1);
    EXPECT_NE(std::string(e.error).find("amd"), std::string::npos) << e.error;
    EXPECT_EQ(es_exposure_run(ES_CONV_V417, ES_ENTRY_SYSENTER32, 1, "read", &e), -1);
    EXPECT_NE(std::string(e.error).find("intel"), std::string::npos) << e.error;
    EXPECT_EQ(es_exposure_run(ES_CONV_V417, ES_ENTRY_SYSCALL64, -1, "no_such_call", &e), -1);
    EXPECT_EQ(es_exposure_run(ES_CONV_V417, ES_ENTRY_VSYSCALL, -1, "read", &e), -1);
}

static std::string capture(const std::function<void(FILE *)> &fn)
{
    char *buf = nullptr;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    fn(f);
    fclose(f);
    std::string s(buf, n);
    free(buf);
    return s;
}

TEST(Exposure, JsonFormat)
{
    es_exposure e = run(ES_CONV_V416, ES_ENTRY_SYSCALL64, "read");
    std::string j = capture([&](FILE *f) { es_exposure_print_json(f, &e); });
    EXPECT_EQ(j.rfind("{\"convention\": \"v4.16\", \"patches\": [], \"entry\": \"syscall64\"", 0),
              0u)
        << j;
    EXPECT_NE(j.find("\"syscall\": \"read\", \"nr\": 0, \"arity\": 3"), std::string::npos) << j;
    EXPECT_NE(j.find("{\"point\": \"table_target\", \"symbol\": \"sys_read\""), std::string::npos);
    EXPECT_NE(j.find("\"rcx\": [\"r10\"]"), std::string::npos) << j;
    EXPECT_NE(j.find("\"exposed\": [\"rcx\", \"r8\", \"r9\"]"), std::string::npos) << j;
    es_exposure i = run(ES_CONV_V417, ES_ENTRY_INT80, "read");
    std::string k = capture([&](FILE *f) { es_exposure_print_json(f, &i); });
    EXPECT_NE(k.find("\"rdi\": [\"ebx\"]"), std::string::npos) << k; // i386 label names
    EXPECT_NE(k.find("\"patches\": [\"dfe64506\", \"fa697140\", \"ebeb8c82\", \"6dc936f1\"]"),
              std::string::npos)
        << k;
}

// recv's v4.17 stub reads di, si, dx and r10 from pt_regs and nothing else
// (the cover letter's listing), checked on the image's bytes.
TEST(Exposure, RecvStubReadsDiSiDxR10)
{
    es_machine *m = es_machine_new(16ull << 20);
    ASSERT_EQ(es_kernel_load(m, ES_CONV_V417), 0) << m->message;
    uint64_t a, sz;
    ASSERT_TRUE(es_kernel_sym_size(m, "__x64_sys_recv", &a, &sz));
    std::set<int64_t> offs;
    for (uint64_t off = 0; off < sz;) {
        uint8_t b[16] = {0};
        ASSERT_EQ(es_kernel_read(m, a + off, b, 15), 0);
        es_insn d;
        ASSERT_EQ(es_decode(b, 15, ES_MODE_64, a + off, &d), ES_DECODE_OK);
        for (int i = 0; i < d.nops; i++)
            if (d.o[i].kind == ES_OPK_MEM && d.o[i].base == ES_RDI && !d.o[i].write)
                offs.insert(d.o[i].disp);
        off += d.len;
    }
    // pt_regs: di 0x70, si 0x68, dx 0x60, r10 0x38
    EXPECT_EQ(offs, (std::set<int64_t>{0x70, 0x68, 0x60, 0x38}));
    es_machine_free(m);
}

// `entrysim explain recv --convention v4.17`, addresses normalised, against
// tests/golden/explain_recv_v417.txt (set ES_UPDATE_GOLDEN=1 to rewrite).
TEST(Exposure, ExplainRecvGolden)
{
    std::string out = capture([](FILE *f) { EXPECT_EQ(es_explain(f, ES_CONV_V417, "recv", 1), 0); });
    // keep the stub chain, drop the dispatcher (its code belongs to other tests)
    size_t cut = out.find("<do_syscall_64>:");
    if (cut != std::string::npos)
        out = out.substr(0, out.rfind('\n', cut) + 1);
    std::string norm = std::regex_replace(out, std::regex("(0x)?[0-9a-fA-F]{16}"), "ADDR");
    norm = std::regex_replace(norm, std::regex("<([A-Za-z0-9_]+)\\+0x[0-9a-f]+>"), "<$1+OFF>");
    std::string path = std::string(__FILE__).substr(0, std::string(__FILE__).rfind('/')) +
                       "/golden/explain_recv_v417.txt";
    if (getenv("ES_UPDATE_GOLDEN")) {
        std::ofstream(path) << norm;
        GTEST_SKIP() << "golden rewritten";
    }
    std::ifstream in(path);
    ASSERT_TRUE(in.good()) << path;
    std::stringstream ss;
    ss << in.rdbuf();
    EXPECT_EQ(norm, ss.str());
    EXPECT_NE(out.find("mov 0x70(%rdi)"), std::string::npos) << out;
    EXPECT_NE(out.find("mov 0x38(%rdi)"), std::string::npos) << out;
}

TEST(Exposure, ExplainUnknownNameFails)
{
    std::string out = capture([](FILE *f) { EXPECT_EQ(es_explain(f, ES_CONV_V417, "nosuchcall", 0), -2); });
    EXPECT_EQ(out, ""); // no header for a name that is not there
    CmdResult r = cmd(es_explain_cmd, {"nosuchcall"});
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find("no stub named after 'nosuchcall'"), std::string::npos) << r.err;
}

// An alias names the first name printed for its address, never itself; the
// ia32 table's stubs come with the ia32 dispatchers.
TEST(Exposure, ExplainAliasesAndIa32Dispatchers)
{
    unsigned p;
    char err[200];
    ASSERT_EQ(es_patches_parse("ebeb8c8", &p, err, sizeof err), 0) << err;
    std::string out = capture([&](FILE *f) { EXPECT_EQ(es_explain(f, p, "readv", 0), 0); });
    EXPECT_NE(out.find("<SyS_readv>: alias of <sys_readv>"), std::string::npos) << out;
    EXPECT_EQ(out.find("<SyS_readv>: alias of <SyS_readv>"), std::string::npos) << out;
    std::regex self("<([^>]+)>: alias of <\\1>");
    EXPECT_FALSE(std::regex_search(out, self)) << out;
    EXPECT_NE(out.find("<do_syscall_64>:\n"), std::string::npos) << out;
    EXPECT_NE(out.find("<do_int80_syscall_32>:\n"), std::string::npos) << out;
    EXPECT_NE(out.find("<do_fast_syscall_32>:\n"), std::string::npos) << out;
    // recv has no table row: only the 64-bit dispatcher, as in the golden file
    out = capture([](FILE *f) { EXPECT_EQ(es_explain(f, ES_CONV_V417, "recv", 0), 0); });
    EXPECT_EQ(out.find("<do_int80_syscall_32>"), std::string::npos) << out;
}

// `entrysim demo`: the bundled program through both conventions; under
// v4.17 no user value is left where it does not belong.
TEST(Exposure, DemoComparison)
{
    int status = -1;
    std::string out = capture([&](FILE *f) { status = es_demo_compare(f, 1); });
    EXPECT_EQ(status, 0) << out;
    EXPECT_NE(out.find("syscall 1: write (nr 1, 3 arguments)"), std::string::npos) << out;
    EXPECT_NE(out.find("exit_group"), std::string::npos) << out;
    EXPECT_NE(out.find("sys_write                rdi=rdi rsi=rsi rdx=rdx rcx=r10! r8=r8! r9=r9!"),
              std::string::npos)
        << out;
    EXPECT_NE(out.find(", v4.17 0\n"), std::string::npos) << out;
}


// --convention and --patches both choose the kernel: giving both is a usage
// error, as for `entrysim run`, in either order and for both commands.
TEST(ExposureCmd, ConventionAndPatchesTogetherAreRefused)
{
    for (auto fn : {es_exposure_cmd, es_explain_cmd}) {
        std::vector<std::string> pre =
            fn == es_exposure_cmd ? std::vector<std::string>{"--syscall", "read"}
                                  : std::vector<std::string>{"read"};
        auto a = pre, b = pre;
        a.insert(a.end(), {"--convention", "v4.17", "--patches", "ebeb8c8"});
        b.insert(b.end(), {"--patches=ebeb8c8", "--convention=v4.16"});
        for (auto &args : {a, b}) {
            CmdResult r = cmd(fn, args);
            EXPECT_EQ(r.status, 2) << r.err;
            EXPECT_EQ(r.out, "");
            EXPECT_NE(r.err.find("give one"), std::string::npos) << r.err;
        }
    }
}

// An unknown syscall is a usage error: exit 2, the reason on stderr, no
// summary (nothing ran).  vsyscall names its three entries.
TEST(ExposureCmd, UnknownSyscallIsAUsageErrorWithoutSummary)
{
    CmdResult r = cmd(es_exposure_cmd, {"--syscall", "nosuch"});
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err.find("summary"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("nosuch: no such syscall in the x86-64 table"), std::string::npos)
        << r.err;
    r = cmd(es_exposure_cmd, {"--syscall", "nosuch", "--json"});
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err.find("summary"), std::string::npos) << r.err;
    r = cmd(es_exposure_cmd, {"--entry", "vsyscall", "--syscall", "read"});
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find("vsyscall page offers only gettimeofday, time and getcpu"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(r.err.find("no such syscall"), std::string::npos) << r.err;
    // a case that cannot run for another reason: failure, still no summary
    r = cmd(es_exposure_cmd, {"--entry", "syscall32", "--syscall", "read", "--cpu", "intel"});
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.out, "");
    // and a good one still prints both conventions and the summary
    r = cmd(es_exposure_cmd, {"--syscall", "read"});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("summary (syscall64): v4.16: "), std::string::npos) << r.out;
}

// v4.16's sys_X and SyS_X share an address: the probe is named as the table
// names its entry (sys_X, compat_sys_X), for every syscall alike.
TEST(Exposure, V416TableTargetsUseTheTableEntryNames)
{
    for (const char *name : {"read", "exit_group", "write", "readv"}) {
        es_exposure e = run(ES_CONV_V416, ES_ENTRY_SYSCALL64, name);
        EXPECT_EQ(std::string(e.probe[ES_PROBE_TABLE_TARGET].symbol), std::string("sys_") + name);
    }
    es_exposure c = run(ES_CONV_V416, ES_ENTRY_INT80, "readv");
    EXPECT_EQ(std::string(c.probe[ES_PROBE_TABLE_TARGET].symbol), "compat_sys_readv");
    es_exposure v = run(ES_CONV_V417, ES_ENTRY_INT80, "readv");
    EXPECT_EQ(std::string(v.probe[ES_PROBE_TABLE_TARGET].symbol), "__ia32_compat_sys_readv");
    std::string out = capture([&](FILE *f) { es_demo_compare(f, 1); });
    EXPECT_EQ(out.find("SyS_"), std::string::npos) << out;
}

// x32 JSON objects say the x32 bit was set; "nr" is the table row.  The demo
// names its points as exposure does and shows nr-only registers like it.
TEST(Exposure, X32JsonAndDemoWording)
{
    es_exposure e = run(ES_CONV_V417, ES_ENTRY_X32, "readv");
    std::string j = capture([&](FILE *f) { es_exposure_print_json(f, &e); });
    EXPECT_NE(j.find("\"nr\": 515, \"x32_bit\": true, \"arity\": 3"), std::string::npos) << j;
    es_exposure r = run(ES_CONV_V417, ES_ENTRY_SYSCALL64, "read");
    j = capture([&](FILE *f) { es_exposure_print_json(f, &r); });
    EXPECT_EQ(j.find("x32_bit"), std::string::npos) << j;
    std::string out = capture([](FILE *f) { es_demo_compare(f, 1); });
    EXPECT_EQ(out.find("table target"), std::string::npos) << out;
    EXPECT_NE(out.find("    dispatch      do_syscall_64            rdi=nr rax=nr\n"), std::string::npos)
        << out;
    // the table call goes through __x86_indirect_thunk_rax (Linux built with
    // CONFIG_RETPOLINE), so rax holds the table entry, not nr, at the stub;
    // rdx still holds array_index_nospec's mask (all ones), derived from nr
    EXPECT_NE(out.find("    table_target  __x64_sys_write          rdx=nr\n"), std::string::npos)
        << out;
    EXPECT_NE(out.find("nr = the syscall number"), std::string::npos) << out;
}

/* The rows a kernel tree's build writes (gen/syscalls.tsv, what `exposure
 * --kernel` reads) say for the shipped tree what the built-in tables say:
 * the same names per entry, numbers and arities. */
TEST(Exposure, KernelTreeRowsMatchTheBuiltInTables)
{
    /* es_ktab_load wants DIR/build/gen/syscalls.tsv: make DIR a view of
     * the build's kernel_model/ (its gen/ beside a build/ link) */
    char tmpl[] = "/tmp/ktab.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    std::string dir = tmpl;
    ASSERT_EQ(symlink(ES_BUILD_DIR "/kernel_model", (dir + "/build").c_str()), 0);
    char err[300] = "";
    es_ktab *t = es_ktab_load(dir.c_str(), err, sizeof err);
    ASSERT_NE(t, nullptr) << err;
    for (int entry = 0; entry < ES_ENTRY_COUNT; entry++) {
        SCOPED_TRACE(es_entry_name(entry));
        size_t n = es_entry_syscalls(entry, nullptr, 0);
        ASSERT_EQ(es_ktab_syscalls(t, entry, nullptr, 0), n);
        std::vector<const char *> a(n), b(n);
        es_entry_syscalls(entry, a.data(), n);
        es_ktab_syscalls(t, entry, b.data(), n);
        for (size_t i = 0; i < n; i++) {
            ASSERT_STREQ(a[i], b[i]);
            int nr = es_syscall_nr(entry, a[i]);
            EXPECT_EQ(es_ktab_nr(t, entry, a[i]), nr) << a[i];
            EXPECT_EQ(es_ktab_arity(t, entry, nr), es_syscall_arity(entry, nr)) << a[i];
        }
        EXPECT_EQ(es_ktab_nr(t, entry, "nosuchcall"), -1);
    }
    es_ktab_free(t);
    unlink((dir + "/build").c_str());

    /* no build, a malformed row: NULL and a message naming the file */
    EXPECT_EQ(es_ktab_load(dir.c_str(), err, sizeof err), nullptr);
    EXPECT_NE(std::string(err).find("syscalls.tsv: cannot open"), std::string::npos) << err;
    ASSERT_EQ(mkdir((dir + "/build").c_str(), 0700), 0);
    ASSERT_EQ(mkdir((dir + "/build/gen").c_str(), 0700), 0);
    std::ofstream(dir + "/build/gen/syscalls.tsv") << "# header\n64\t0\tcommon\tread\t3\n64\tx\n";
    EXPECT_EQ(es_ktab_load(dir.c_str(), err, sizeof err), nullptr);
    EXPECT_NE(std::string(err).find("syscalls.tsv:3: malformed row"), std::string::npos) << err;
    std::ofstream(dir + "/build/gen/syscalls.tsv") << "64\t0\tcommon\tread\t9\n";
    EXPECT_EQ(es_ktab_load(dir.c_str(), err, sizeof err), nullptr) << "arity 9 accepted";
    std::string rm = "rm -rf " + dir;
    EXPECT_EQ(system(rm.c_str()), 0);
}
