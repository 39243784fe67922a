// Guest kernel boot tests: the hand-over to startup_64, what a process gets
// from the loader under the modeled kernel (vDSO page, AT_SYSINFO, x32).
// Shared helpers in kernel_util.h.

#include <gtest/gtest.h>

#include "kernel_util.h"

namespace {

TEST(KernelBoot, HandsTheProcessToStartup64)
{
    auto kimg = fake_kernel(15);
    Proc p;
    ASSERT_TRUE(p.start(user_elf({0xf4}), 15, &kimg)) << (p.m ? p.m->message : "");
    es_machine *m = p.m;
    EXPECT_TRUE(m->has_kernel);
    EXPECT_EQ(m->rip, KT);
    EXPECT_EQ(m->cpl, 0);
    EXPECT_EQ(m->mode, ES_MODE_64);
    EXPECT_EQ(m->seg[ES_SEG_CS].sel, 0x10);
    EXPECT_EQ(m->seg[ES_SEG_SS].sel, 0x18);
    EXPECT_EQ(m->rflags, 0x2u);
    EXPECT_EQ(m->gpr[ES_RSP], KSTACK_TOP);
    es_boot_info bi;
    ASSERT_EQ(es_kernel_read(m, KD, &bi, sizeof bi), 0);
    EXPECT_EQ(bi.magic, ES_BOOT_MAGIC);
    EXPECT_EQ(bi.user_rip, UCODE);
    EXPECT_EQ(bi.user_cs, 0x33u);
    EXPECT_EQ(bi.user_ss, 0x2bu);
    EXPECT_EQ(bi.user_rflags, 0x202u);
    EXPECT_EQ(bi.abi, (unsigned long long)ES_ABI_X64);
    EXPECT_EQ(bi.vendor, (unsigned long long)m->vendor);
    EXPECT_EQ(bi.vdso32_base, 0u);
    EXPECT_EQ(bi.patches, 15u);
    // the initial stack as es_start_process built it: argc = 1
    uint64_t argc = 0;
    ASSERT_EQ(es_copy_from_guest(m, &argc, bi.user_rsp, 8), 0);
    EXPECT_EQ(argc, 1u);
    // the vsyscall page is there, the 64-bit process has no 32-bit vDSO
    EXPECT_EQ(es_kernel_vdso32(m), 0u);
    EXPECT_TRUE(pte_of(m, ES_VSYSCALL_ADDR) & ES_PTE_U);
}

// The i386 guest built by guest/ (next to this test's build directory).
std::string guest_path(const char *name)
{
    return es_build_path(std::string("guest/") + name);
}

std::vector<uint8_t> read_file(const std::string &path)
{
    std::vector<uint8_t> b;
    FILE *f = fopen(path.c_str(), "rb");
    if (!f)
        return b;
    int c;
    while ((c = fgetc(f)) != EOF)
        b.push_back((uint8_t)c);
    fclose(f);
    return b;
}

TEST(KernelBoot, I386ProcessGetsTheVdsoPage)
{
    auto prog = read_file(guest_path("i386_freestanding"));
    if (prog.empty())
        GTEST_SKIP() << "no i386 guest built";
    auto kimg = fake_kernel(0);
    Proc p;
    ASSERT_TRUE(p.start(prog, 0, &kimg)) << (p.m ? p.m->message : "");
    es_machine *m = p.m;
    uint64_t v = es_kernel_vdso32(m);
    ASSERT_NE(v, 0u);
    EXPECT_LT(v + 4096, 0x100000000ull);
    EXPECT_EQ(v & 0xfff, 0u);
    EXPECT_EQ(es_vm_prot_at(m, v), ES_PROT_R | ES_PROT_X);
    uint8_t buf[4096];
    ASSERT_EQ(es_copy_from_guest(m, buf, v, sizeof buf), 0);
    for (int i = 0; i < 4096; i++)
        ASSERT_EQ(buf[i], (uint8_t)(i * 13 + 1)) << i;
    es_boot_info bi;
    ASSERT_EQ(es_kernel_read(m, KD, &bi, sizeof bi), 0);
    EXPECT_EQ(bi.vdso32_base, v);
    EXPECT_EQ(bi.abi, (unsigned long long)ES_ABI_I386);
    EXPECT_EQ(bi.user_cs, 0x23u);
}

TEST(KernelBoot, X32ProcessIsReportedAsX32)
{
    auto prog = read_file(guest_path("x32_freestanding"));
    if (prog.empty())
        GTEST_SKIP() << "no x32 guest built";
    auto kimg = fake_kernel(4);
    Proc p;
    ASSERT_TRUE(p.start(prog, 4, &kimg)) << (p.m ? p.m->message : "");
    es_boot_info bi;
    ASSERT_EQ(es_kernel_read(p.m, KD, &bi, sizeof bi), 0);
    EXPECT_EQ(bi.abi, (unsigned long long)ES_ABI_X32);
    EXPECT_EQ(bi.user_cs, 0x33u);
    EXPECT_EQ(bi.vdso32_base, 0u);
    EXPECT_EQ(bi.user_rip, p.img.entry);
    EXPECT_LT(bi.user_rsp, 0x100000000ull) << "x32 stack below 4 GiB";
}

// Linux gives an i386 process AT_SYSINFO = its vDSO's __kernel_vsyscall
// (ARCH_DLINFO_IA32); the loader does the same under the modeled kernel,
// and not with --direct (there is no vDSO).  Static glibc still uses
// int $0x80; libcs that honour it (and the exposure guests) enter by
// SYSENTER or 32-bit SYSCALL.
uint64_t auxv_value(es_machine *m, uint64_t sp, uint64_t type)
{
    uint32_t w = 0;
    es_copy_from_guest(m, &w, sp, 4);
    uint64_t p = sp + 4 + 4 * (uint64_t)w + 4; // argc, argv[], NULL
    for (;;) {                                  // envp[], NULL
        es_copy_from_guest(m, &w, p, 4);
        p += 4;
        if (!w)
            break;
    }
    for (int i = 0; i < 64; i++, p += 8) {
        uint32_t kv[2];
        if (es_copy_from_guest(m, kv, p, 8) || kv[0] == 0)
            return 0;
        if (kv[0] == type)
            return kv[1];
    }
    return 0;
}

TEST(KernelBoot, I386ProcessGetsAtSysinfo)
{
    if (!have_images())
        GTEST_SKIP() << "entrysim was built without kernel_model/";
    auto prog = read_file(guest_path("i386_glibc_hello"));
    if (prog.empty())
        GTEST_SKIP() << "no i386 glibc guest built";
    Proc d;
    ASSERT_TRUE(d.start(prog, -1)) << d.m->message;
    EXPECT_EQ(auxv_value(d.m, d.m->gpr[ES_RSP], 32), 0u) << "no vDSO with --direct";
    es_run(d.m);
    ASSERT_EQ(d.m->stop, ES_STOP_EXIT) << d.m->message;
    for (int vendor : {0, 1}) {
        SCOPED_TRACE(vendor ? "AMD" : "Intel");
        Proc k;
        k.vendor = vendor;
        ASSERT_TRUE(k.start(prog, 15)) << k.m->message;
        uint64_t v = es_kernel_vdso32(k.m);
        ASSERT_NE(v, 0u);
        es_boot_info bi;
        ASSERT_EQ(es_kernel_read(k.m, es_kernel_sym(k.m, "es_boot_info"), &bi, sizeof bi), 0);
        EXPECT_EQ(auxv_value(k.m, bi.user_rsp, 32), v + ES_VDSO32_KERNEL_VSYSCALL);
        uint8_t code[8] = {};
        ASSERT_EQ(es_copy_from_guest(k.m, code, v, sizeof code), 0);
        // __kernel_vsyscall: push ecx; push edx; push ebp; then SYSENTER
        // (0f 34, Intel) or mov ebp,ecx; SYSCALL (0f 05, AMD)
        EXPECT_EQ(code[0], 0x51);
        if (vendor)
            EXPECT_TRUE(code[5] == 0x0f && code[6] == 0x05);
        else
            EXPECT_TRUE(code[5] == 0x0f && code[6] == 0x34);
        es_run(k.m);
        ASSERT_EQ(k.m->stop, ES_STOP_EXIT) << k.m->message;
        EXPECT_EQ(k.output(), d.output());
    }
}

} // namespace
