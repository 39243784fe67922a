// test_measure_native.cc - the deterministic parts of `measure-native`:
// hex parsing, the decoder-based refusal of blocks the harness cannot run,
// that faulting blocks come back as errors (the test process survives), and
// that the TSC calibration is positive.  No timing assertions: the machine
// is shared and its clock varies.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "measure.h"

namespace {

std::vector<uint8_t> hex(const char *s)
{
    uint8_t buf[ES_NATIVE_MAX_BLOCK];
    size_t len = 0;
    char err[128];
    EXPECT_EQ(es_native_parse_hex(s, buf, sizeof buf, &len, err, sizeof err), 0) << err;
    return std::vector<uint8_t>(buf, buf + len);
}

std::string check(const char *s)
{
    auto b = hex(s);
    char err[160] = "";
    if (es_native_check_block(b.data(), b.size(), err, sizeof err) == 0)
        return "ok";
    return err;
}

es_native_opts fast_opts()
{
    es_native_opts o;
    es_native_default_opts(&o);
    o.reps = 3;
    o.timeout_s = 30;
    return o;
}

TEST(MeasureNativeHex, ParsesBytes)
{
    uint8_t buf[16];
    size_t len = 0;
    char err[64];
    ASSERT_EQ(es_native_parse_hex("  4801D8c3\r\n", buf, sizeof buf, &len, err, sizeof err), 0);
    ASSERT_EQ(len, 4u);
    EXPECT_EQ(buf[0], 0x48);
    EXPECT_EQ(buf[1], 0x01);
    EXPECT_EQ(buf[2], 0xd8);
    EXPECT_EQ(buf[3], 0xc3);
}

TEST(MeasureNativeHex, RejectsMalformed)
{
    uint8_t buf[4];
    size_t len = 0;
    char err[64];
    EXPECT_NE(es_native_parse_hex("480", buf, sizeof buf, &len, err, sizeof err), 0);
    EXPECT_NE(std::string(err).find("odd"), std::string::npos);
    EXPECT_NE(es_native_parse_hex("48zz", buf, sizeof buf, &len, err, sizeof err), 0);
    EXPECT_NE(es_native_parse_hex("", buf, sizeof buf, &len, err, sizeof err), 0);
    EXPECT_NE(es_native_parse_hex("0102030405", buf, sizeof buf, &len, err, sizeof err), 0);
    EXPECT_NE(std::string(err).find("too long"), std::string::npos);
}

TEST(MeasureNativeCheck, AcceptsStraightLineCode)
{
    EXPECT_EQ(check("4801d8"), "ok");                 // add rax, rbx
    EXPECT_EQ(check("01c38b4424304101c6"), "ok");     // add; load via rsp; add
    EXPECT_EQ(check("0f29042448894424204889ef"), "ok"); // movaps store, mov store, mov
    EXPECT_EQ(check("a4"), "ok");                     // movsb without REP is bounded
}

TEST(MeasureNativeCheck, RejectsControlFlow)
{
    EXPECT_NE(check("4801d8ebfe").find("control flow"), std::string::npos);   // jmp rel8
    EXPECT_NE(check("7405").find("control flow"), std::string::npos);         // jz
    EXPECT_NE(check("e800000000").find("control flow"), std::string::npos);   // call rel32
    EXPECT_NE(check("ffd0").find("control flow"), std::string::npos);         // call rax
    EXPECT_NE(check("c3").find("control flow"), std::string::npos);           // ret
    EXPECT_NE(check("0f05").find("control flow"), std::string::npos);         // syscall
    EXPECT_NE(check("cd80").find("control flow"), std::string::npos);         // int 0x80
    EXPECT_NE(check("0f0b").find("control flow"), std::string::npos);         // ud2
    EXPECT_NE(check("e2fe").find("control flow"), std::string::npos);         // loop
}

TEST(MeasureNativeCheck, RejectsPrivilegedAndUnbounded)
{
    EXPECT_NE(check("f4").find("privileged"), std::string::npos);     // hlt
    EXPECT_NE(check("0f30").find("privileged"), std::string::npos);   // wrmsr
    EXPECT_NE(check("0f32").find("privileged"), std::string::npos);   // rdmsr
    EXPECT_NE(check("0f22d8").find("privileged"), std::string::npos); // mov cr3, rax
    EXPECT_NE(check("ec").find("privileged"), std::string::npos);     // in al, dx
    EXPECT_NE(check("f3a4").find("REP string"), std::string::npos);   // rep movsb
    EXPECT_NE(check("8ed8").find("segment register"), std::string::npos); // mov ds, ax
    EXPECT_NE(check("64488904250000000000").find("FS/GS"), std::string::npos) // mov fs:[0], rax
        << check("64488904250000000000");
    EXPECT_NE(check("48890500000000").find("RIP-relative"), std::string::npos); // mov [rip], rax
    EXPECT_NE(check("4801").find("truncated"), std::string::npos);
}

TEST(MeasureNativeRun, RefusedBlockNeverRuns)
{
    es_native_opts o = fast_opts();
    es_native_result r;
    auto b = hex("ebfe"); // jmp $: would never end
    EXPECT_NE(es_native_measure(b.data(), b.size(), &o, &r), 0);
    EXPECT_NE(std::string(r.error).find("control flow"), std::string::npos);
}

#if defined(__x86_64__)
TEST(MeasureNativeRun, UnmappableAddressIsAnErrorNotACrash)
{
    es_native_opts o = fast_opts();
    es_native_result r;
    // movabs rax, [0x8000000000000000]: non-canonical, nothing can be mapped there
    auto b = hex("48a10000000000000080");
    ASSERT_EQ(check("48a10000000000000080"), "ok");
    EXPECT_NE(es_native_measure(b.data(), b.size(), &o, &r), 0);
    EXPECT_NE(r.error[0], 0);
    EXPECT_NE(std::string(r.error).find("general protection"), std::string::npos) << r.error;
}

TEST(MeasureNativeRun, DivideErrorIsAnErrorNotACrash)
{
    es_native_opts o = fast_opts();
    es_native_result r;
    auto b = hex("31c9f7f1"); // xor ecx, ecx; div ecx
    EXPECT_NE(es_native_measure(b.data(), b.size(), &o, &r), 0);
    EXPECT_NE(std::string(r.error).find("divide"), std::string::npos) << r.error;
}

TEST(MeasureNativeRun, ProtectionFaultIsAnErrorNotACrash)
{
    es_native_opts o = fast_opts();
    es_native_result r;
    // lea rax, [rip]; mov [rax], al: a store into the harness' own code page,
    // which is mapped read+execute, so the handler must not map over it
    auto b = hex("488d0500000000" "8800");
    ASSERT_EQ(check("488d05000000008800"), "ok");
    EXPECT_NE(es_native_measure(b.data(), b.size(), &o, &r), 0);
    EXPECT_NE(std::string(r.error).find("protection fault"), std::string::npos) << r.error;
}

TEST(MeasureNativeRun, MeasuresAStraightLineBlockWithOnDemandPages)
{
    es_native_opts o = fast_opts();
    es_native_result r;
    // loads and stores through every register's region: pages mapped on demand
    auto b = hex("488b4508488b5d10488b4d1848894708");
    ASSERT_EQ(es_native_measure(b.data(), b.size(), &o, &r), 0) << r.error;
    EXPECT_GT(r.cycles, 0.0);
    EXPECT_GT(r.ticks_per_cycle, 0.0);
}

TEST(MeasureNativeCalibrate, TicksPerCycleIsPositive)
{
    es_native_opts o = fast_opts();
    double tpc = 0;
    char err[160] = "";
    ASSERT_TRUE(es_native_supported());
    ASSERT_EQ(es_native_calibrate(&o, &tpc, err, sizeof err), 0) << err;
    EXPECT_GT(tpc, 0.0);
}
#endif

} // namespace
