// test_throughput.cc - `entrysim throughput` (es_throughput_cmd) and
// es_timing_throughput: output format, exit status, and a clean error line
// for every kind of block the BHive method cannot time.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include "machine.h"
#include "cmd_throughput.h"
#include "host_cpu.h"
#include "timing.h"
}

namespace {

struct Out {
    int rc;
    std::string text;
};

Out cmd(std::vector<std::string> args)
{
    std::vector<char *> argv;
    for (auto &a : args)
        argv.push_back(a.data());
    testing::internal::CaptureStdout();
    int rc = es_throughput_cmd((int)argv.size(), argv.data());
    fflush(stdout);
    return {rc, testing::internal::GetCapturedStdout()};
}

std::string temp_file(const std::string &text)
{
    char path[] = "/tmp/es_tput_XXXXXX";
    int fd = mkstemp(path);
    EXPECT_GE(fd, 0);
    FILE *f = fdopen(fd, "w");
    fputs(text.c_str(), f);
    fclose(f);
    return path;
}

std::string error_of(const char *hexstr)
{
    Out o = cmd({hexstr});
    EXPECT_EQ(o.rc, 1) << hexstr;
    std::string prefix = std::string(hexstr) + "\terror: ";
    EXPECT_EQ(o.text.compare(0, prefix.size(), prefix), 0) << o.text;
    EXPECT_EQ(o.text.back(), '\n');
    return o.text;
}

}  // namespace

TEST(Throughput, OneLinePerBlockHexTabCycles)
{
    Out o = cmd({"--uarch", "znver4", "4801d84801ca", "4801c0"});
    EXPECT_EQ(o.rc, 0);
    // add rax, rbx; add rdx, rcx: independent of each other, each a chain
    // of one add: 1 cycle per iteration; add rax, rax: 1 cycle
    EXPECT_EQ(o.text, "4801d84801ca\t1.000\n4801c0\t1.000\n");
}

TEST(Throughput, GarbageIsAnErrorLineNotACrash)
{
    EXPECT_NE(error_of("48zz").find("not a hex digit"), std::string::npos);
    EXPECT_NE(error_of("480").find("odd number"), std::string::npos);
    EXPECT_NE(error_of("48").find("truncated"), std::string::npos);
    EXPECT_NE(error_of("0f0b").find("control flow"), std::string::npos); // ud2
}

TEST(Throughput, ControlFlowAndPrivilegedAreRefused)
{
    EXPECT_NE(error_of("ebfe").find("control flow"), std::string::npos);     // jmp $
    EXPECT_NE(error_of("7400").find("control flow"), std::string::npos);     // jz
    EXPECT_NE(error_of("c3").find("control flow"), std::string::npos);       // ret
    EXPECT_NE(error_of("0f05").find("control flow"), std::string::npos);     // syscall
    EXPECT_NE(error_of("0f30").find("privileged"), std::string::npos);       // wrmsr
    EXPECT_NE(error_of("f348a5").find("REP string"), std::string::npos);     // rep movsq
}

TEST(Throughput, FaultsNameTheVectorAndByte)
{
    // xor ecx, ecx; div rcx: #DE at byte 2
    EXPECT_NE(error_of("31c948f7f1").find("#DE at byte 2"), std::string::npos);
    // xor eax, eax; mov rax, [rax]: address 0 cannot be mapped
    EXPECT_NE(error_of("31c0488b00").find("#PF at byte 2"), std::string::npos);
    // mov rax, 1 << 63 | ...; mov rbx, [rax]: non-canonical
    EXPECT_NE(error_of("48b80000000000000080488b18").find("#GP at byte 10"), std::string::npos);
}

// A block whose first touch of its data page is a VEX store is timed like
// one that loads first (the store's #PF maps the page on demand).
TEST(Throughput, VexStoresMapTheirPageOnDemand)
{
    // vmovdqu [rdi], xmm5; vmovdqu [rdi], ymm5; vextracti128 [rdi+32], ymm5, 1
    for (const char *hex : {"c5fa7f2f", "c5fe7f2f", "c4e37d396f2001"}) {
        Out o = cmd({hex});
        EXPECT_EQ(o.rc, 0) << o.text;
        EXPECT_EQ(o.text.find("error"), std::string::npos) << o.text;
        EXPECT_GT(atof(o.text.c_str() + strlen(hex) + 1), 0.0) << o.text;
    }
}

TEST(Throughput, FileSkipsBlankAndCommentLinesAndReportsEach)
{
    std::string f = temp_file("# a comment\n\n4801c0\n  \n48zz\n480fafc0\tignored column\n");
    Out o = cmd({"--file", f});
    EXPECT_EQ(o.rc, 1); // one bad block
    EXPECT_EQ(o.text, "4801c0\t1.000\n48zz\terror: not a hex digit\n480fafc0\t3.000\n");
    std::remove(f.c_str());
    std::string good = temp_file("4801c0\n");
    o = cmd({"--file", good});
    EXPECT_EQ(o.rc, 0);
    std::remove(good.c_str());
}

// Issue 12 item 8: a --file line of any length is one block (here one
// too long to time), not split into pieces at 12 KiB
TEST(Throughput, LongFileLinesAreNotSplit)
{
    std::string f = temp_file(std::string(20000, '9') + "\n4801c0\n");
    Out o = cmd({"--file", f});
    EXPECT_EQ(o.rc, 1);
    EXPECT_EQ(o.text, std::string(20000, '9') + "\terror: block too long\n4801c0\t1.000\n");
    std::remove(f.c_str());
}

// Issue 12 item 8: the quoted block of an error line has its control
// characters escaped (a lone CR in the input reaches no output raw)
TEST(Throughput, ErrorLinesEscapeControlCharacters)
{
    std::string f = temp_file("48\r001c0\n");
    Out o = cmd({"--file", f});
    EXPECT_EQ(o.rc, 1);
    EXPECT_EQ(o.text, "48\\r001c0\terror: not a hex digit\n");
    std::remove(f.c_str());
    o = cmd({"48\x1b[2J"});
    EXPECT_EQ(o.text, "48\\x1b[2J\terror: not a hex digit\n");
}

TEST(Throughput, UsageErrors)
{
    EXPECT_EQ(cmd({}).rc, 2);
    EXPECT_EQ(cmd({"--uarch", "pentium", "4801c0"}).rc, 2);
    EXPECT_EQ(cmd({"--file", "/nonexistent/blocks"}).rc, 2);
    EXPECT_EQ(cmd({"--bogus"}).rc, 2);
    EXPECT_EQ(cmd({"--uarch"}).rc, 2);
}

// --uarch host: the model of the CPU the test runs on when a .cfg lists
// it (the same figures as naming it), else a usage error that names the CPU.
TEST(Throughput, UarchHostIsThisCpusModelOrAClearError)
{
    char why[320];
    const char *u = es_host_uarch(why, sizeof why);
    Out o = cmd({"--uarch", "host", "4801d84801ca"});
    if (u) {
        EXPECT_EQ(o.rc, 0);
        EXPECT_EQ(o.text, cmd({"--uarch", u, "4801d84801ca"}).text);
    } else {
        EXPECT_EQ(o.rc, 2);
        EXPECT_NE(strstr(why, "family 0x"), nullptr) << why;
    }
}

TEST(Throughput, ApiRefusesWhatItCannotTime)
{
    double c = 0;
    char err[256] = "";
    const uint8_t add[] = {0x48, 0x01, 0xc0};
    EXPECT_EQ(es_timing_throughput("znver4", add, 0, ES_MODE_64, &c, err, sizeof err), -1);
    EXPECT_EQ(es_timing_throughput("znver4", add, sizeof add, ES_MODE_32, &c, err, sizeof err),
              -1);
    EXPECT_EQ(es_timing_throughput("nope", add, sizeof add, ES_MODE_64, &c, err, sizeof err), -1);
    EXPECT_NE(strstr(err, "unknown microarchitecture"), nullptr) << err;
    EXPECT_EQ(es_timing_throughput("skylake", add, sizeof add, ES_MODE_64, &c, err, sizeof err),
              0)
        << err;
    EXPECT_GT(c, 0.0);
}

TEST(Throughput, StatsColumnsCountTheModelsEventsPerIteration)
{
    // --stats: a header, then per block cycles and per-iteration counts.
    // mov byte [rax], 0; mov rax, [rsp] (rax = rsp): the 8-byte load
    // overlaps the 1-byte store and cannot take its data, once per
    // iteration; add rax, rbx; add rdx, rcx: two instructions, no memory
    Out o = cmd({"--stats", "c60000488b0424", "4801d84801ca"});
    EXPECT_EQ(o.rc, 0);
    std::vector<std::vector<std::string>> rows;
    size_t p = 0;
    while (p < o.text.size()) {
        size_t e = o.text.find('\n', p);
        std::string line = o.text.substr(p, e - p);
        p = e + 1;
        std::vector<std::string> cols;
        size_t q = 0;
        for (size_t t; (t = line.find('\t', q)) != std::string::npos; q = t + 1)
            cols.push_back(line.substr(q, t - q));
        cols.push_back(line.substr(q));
        rows.push_back(cols);
    }
    ASSERT_EQ(rows.size(), 3u) << o.text;
    ASSERT_EQ(rows[0][0], "# hex");
    auto col = [&](const char *name) {
        for (size_t i = 0; i < rows[0].size(); i++)
            if (rows[0][i] == name)
                return i;
        ADD_FAILURE() << "no column " << name;
        return (size_t)0;
    };
    for (auto &r : rows)
        ASSERT_EQ(r.size(), rows[0].size()) << o.text;
    // the trips the timing measures include the loop's jmp back: one per
    // 50 copies of the block
    EXPECT_NEAR(std::stod(rows[1][col("insns")]), 2.02, 0.001);
    EXPECT_NEAR(std::stod(rows[1][col("stlf_fail")]), 1.0, 0.001);
    EXPECT_NEAR(std::stod(rows[1][col("stlf")]), 0.0, 0.001);
    EXPECT_NEAR(std::stod(rows[2][col("insns")]), 2.02, 0.001);
    EXPECT_NEAR(std::stod(rows[2][col("stlf_fail")]), 0.0, 0.001);
    EXPECT_EQ(rows[2][col("cycles")], "1.000");
    // the cycles column is what the plain command prints
    Out plain = cmd({"c60000488b0424"});
    EXPECT_EQ(plain.text, "c60000488b0424\t" + rows[1][1] + "\n");
}
