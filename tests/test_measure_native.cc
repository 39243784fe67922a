// test_measure_native.cc - the deterministic parts of `measure-native`:
// hex parsing, the decoder-based refusal of blocks the harness cannot run,
// that faulting blocks come back as errors (the test process survives), and
// that the TSC calibration is positive.  One timing check, on medians of
// five: that the unit is a core cycle (the machine is shared and its clock
// varies, so nothing finer).
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "measure.h"
#include "sandbox.h"

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
    EXPECT_NE(check("64488904250000000000").find("write through FS"), std::string::npos) // mov fs:[0], rax
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

// The median of five measurements: the CI host is shared (ASan tests run in
// parallel with this one), and one disturbed calibration inflates or
// deflates a single figure by any factor.  A wrong unit moves all five.
double median_cycles(const char *hexbytes, std::string *all)
{
    es_native_opts o = fast_opts();
    auto b = hex(hexbytes);
    std::vector<double> got;
    for (int i = 0; i < 5; i++) {
        es_native_result r;
        if (es_native_measure(b.data(), b.size(), &o, &r) == 0)
            got.push_back(r.cycles);
    }
    EXPECT_GE(got.size(), 3u) << hexbytes << ": most measurements failed";
    if (got.empty())
        return -1;
    std::sort(got.begin(), got.end());
    for (double c : got)
        *all += std::to_string(c) + " ";
    return got[got.size() / 2];
}

// The calibration's unit is a core cycle on every x86-64 core: a load chain
// costs about the L1's load-to-use latency (4-5 cycles on Zen 4/5, 5 on
// Golden Cove) and eight nops well under their count.  A reference chain of
// `add rax, 1` -- which Golden Cove's renamer folds, several per cycle --
// put both 5-6 times too high on an Emerald Rapids (30 and 7.6).
TEST(MeasureNativeCalibrate, CyclesAreCoreCyclesOnEveryVendor)
{
    std::string a, b, c; // every figure, printed when a check fails
    double chase = median_cycles("488b00", &a); // mov rax, [rax]: rax points at itself
    EXPECT_GT(chase, 3.0) << a;
    EXPECT_LT(chase, 8.0) << a;
    EXPECT_LT(median_cycles("9090909090909090", &b), 4.0) << b;
    // add rax, rax x 4: 4 cycles
    EXPECT_NEAR(median_cycles("4801c04801c04801c04801c0", &c), 4.0, 0.6) << c;
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

// Issue 12 item 1: the block that took control of the measuring child on
// 21294b6.  It finds the harness data page from RIP (code + data fit in
// two pages), writes a fake stack there and points the saved stack pointer
// at it, so the harness's return lands in bytes hidden in its own movabs
// immediate: push 1; pop rax; syscall (write(1, "PWNED!\n", 7), the
// arguments left in rdi/rsi/rdx by the block); ud2.
const char *hijack_block = "488d0500000000"       // lea rax, [rip]
                           "48b96a01580f050f0b90" // movabs rcx, <shellcode>
                           "48ba50574e4544210a00" // movabs rdx, "PWNED!\n"
                           "488d700c"             // lea rsi, [rax+12]
                           "bf01000000"           // mov edi, 1
                           "ba07000000"           // mov edx, 7
                           "488d4802"             // lea rcx, [rax+2]
                           "4889c3"               // mov rbx, rax
                           "4881cbff0f0000"       // or rbx, 0xfff
                           "48ffc3"               // inc rbx: the data page
                           "48894b70"             // mov [rbx+0x70], rcx
                           "488d6b40"             // lea rbp, [rbx+0x40]
                           "48892b";              // mov [rbx], rbp

TEST(MeasureNativeSandbox, HijackingBlockIsMeasuredNotRun)
{
    ASSERT_EQ(check(hijack_block), "ok"); // nothing the check can see
    es_native_opts o = fast_opts();
    o.timeout_s = 10;
    es_native_result r;
    auto b = hex(hijack_block);
    char path[] = "/tmp/es_native_stdout_XXXXXX";
    int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    fflush(stdout);
    int saved = dup(1);
    dup2(fd, 1);
    int st = es_native_measure(b.data(), b.size(), &o, &r);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    char out[64] = "";
    ssize_t n = pread(fd, out, sizeof out - 1, 0);
    close(fd);
    unlink(path);
    EXPECT_EQ(n, 0) << out;
    EXPECT_EQ(std::string(out).find("PWNED"), std::string::npos);
    // with FSGSBASE the saved stack pointer is out of its reach: measured;
    // without, the sandbox kills the child at its first system call
    if (st) {
        EXPECT_NE(std::string(r.error).find("sandbox"), std::string::npos) << r.error;
    }
}

TEST(MeasureNativeCheck, RefusesWhatReachesTheGsBase)
{
    EXPECT_NE(check("65488b042500000000").find("GS-relative"), std::string::npos); // mov rax, gs:[0]
    EXPECT_NE(check("f3480faec8").find("privileged"), std::string::npos);          // rdgsbase rax
    EXPECT_NE(check("f3480faed8").find("privileged"), std::string::npos);          // wrgsbase rax
    EXPECT_EQ(check("64488b042528000000"), "ok"); // mov rax, fs:[0x28]: the stack canary read
}

// Runs fn in a child confined by the sandbox; returns its wait status.
int sandboxed(void (*fn)(int pipe_fd, int memfd), std::string *got = nullptr)
{
    int p[2];
    if (pipe(p))
        return -1;
    int memfd = memfd_create("es_sandbox_test", 0);
    if (memfd < 0 || ftruncate(memfd, 4096))
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        if (es_native_sandbox_enter(p[1], memfd))
            _exit(99);
        fn(p[1], memfd);
        es_native_raw_exit(0);
    }
    close(p[1]);
    char buf[64];
    ssize_t n;
    while ((n = read(p[0], buf, sizeof buf)) > 0)
        if (got)
            got->append(buf, (size_t)n);
    close(p[0]);
    close(memfd);
    int ws = 0;
    waitpid(pid, &ws, 0);
    return ws;
}

long raw6(long nr, long a, long b, long c, long d, long e, long f)
{
    long ret;
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return ret;
}

// The signal an unsandboxed int 0x80 (i386 getpid) ends a child with on
// this host: 0 when the host runs it (it then returns normally).
int host_int80_signal()
{
    pid_t pid = fork();
    if (pid == 0) {
        long ret;
        __asm__ volatile("int $0x80" : "=a"(ret) : "a"(20) : "memory");
        _exit(0);
    }
    int ws = 0;
    waitpid(pid, &ws, 0);
    return WIFSIGNALED(ws) ? WTERMSIG(ws) : 0;
}

bool killed_by_sigsys(int ws)
{
    return WIFSIGNALED(ws) && WTERMSIG(ws) == SIGSYS;
}

TEST(MeasureNativeSandbox, AllowsWhatTheHarnessNeeds)
{
    std::string got;
    int ws = sandboxed(
        [](int fd, int memfd) {
            void *want = (void *)0x12345000;
            void *p = es_native_raw_mmap(0x12345000, 4096, PROT_READ | PROT_WRITE,
                                         MAP_SHARED | 0x100000 /* FIXED_NOREPLACE */, memfd);
            es_native_raw_write(fd, p == want ? "mapped" : "failed", 6);
        },
        &got);
    ASSERT_TRUE(WIFEXITED(ws)) << "signal " << (WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
    EXPECT_EQ(WEXITSTATUS(ws), 0);
    EXPECT_EQ(got, "mapped");
}

TEST(MeasureNativeSandbox, RefusesEverythingElse)
{
    // stdout, another process, an executable or private mapping, another
    // ABI: each kills the child with SIGSYS before it has any effect
    EXPECT_TRUE(killed_by_sigsys(sandboxed([](int, int) { es_native_raw_write(1, "PWNED\n", 6); })));
    EXPECT_TRUE(killed_by_sigsys(sandboxed([](int, int) {
        raw6(SYS_kill, getppid(), SIGKILL, 0, 0, 0, 0);
    })));
    EXPECT_TRUE(killed_by_sigsys(sandboxed([](int, int) { raw6(SYS_getpid, 0, 0, 0, 0, 0, 0); })));
    EXPECT_TRUE(killed_by_sigsys(sandboxed([](int, int memfd) {
        raw6(SYS_mmap, 0x12345000, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
             MAP_SHARED | 0x100000, memfd, 0);
    })));
    EXPECT_TRUE(killed_by_sigsys(sandboxed([](int, int) {
        raw6(SYS_mmap, 0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    })));
    EXPECT_TRUE(killed_by_sigsys(sandboxed([](int, int memfd) {
        raw6(SYS_mmap, 0x12345000, 8192, PROT_READ | PROT_WRITE, MAP_SHARED | 0x100000, memfd, 0);
    })));
    EXPECT_TRUE(killed_by_sigsys(sandboxed([](int fd, int) {
        raw6(SYS_write, fd | (1L << 32), (long)"x", 1, 0, 0, 0); // high bits of the fd
    })));
    EXPECT_TRUE(killed_by_sigsys(sandboxed([](int, int) {
        raw6(0x40000000 | SYS_write, 1, (long)"x", 1, 0, 0, 0); // x32 write
    })));
    // i386 write(1, ...) through int 0x80.  A host kernel without IA32
    // emulation (CONFIG_IA32_EMULATION off or ia32_emulation=0) refuses
    // the gate itself with #GP -> SIGSEGV before seccomp sees a syscall:
    // refused either way, so the expected signal is the host's own.
    int host = host_int80_signal();
    int ws = sandboxed([](int, int) {
        long ret;
        __asm__ volatile("int $0x80" : "=a"(ret) : "a"(4), "b"(1), "c"(0), "d"(0) : "memory");
    });
    EXPECT_TRUE(WIFSIGNALED(ws));
    EXPECT_EQ(WTERMSIG(ws), host == SIGSEGV ? SIGSEGV : SIGSYS);
}
#endif

} // namespace
