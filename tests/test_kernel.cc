// Guest kernel loader tests: the patch list of --patches, loading a kernel
// image (a hand-built one for the ELF checks, mapping and symbols; the
// embedded kernel_model/ images for the symbols every variant must have),
// the boot hand-over, and programs whose syscalls go through the modeled
// kernel: results, pt_regs layout on the kernel stack, and how the kernel
// returns to user mode.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

#include "build_path.h"
#include "es_boot.h"
#include "host.h"
#include "kernel.h"
#include "loader.h"
#include "machine.h"
#include "mem.h"
#include "vm.h"

namespace {

// ---------------------------------------------------------------- patches

unsigned parse_ok(const char *s)
{
    unsigned out = 0xdead;
    char err[200] = "";
    EXPECT_EQ(es_patches_parse(s, &out, err, sizeof err), 0) << s << ": " << err;
    return out;
}

std::string parse_err(const char *s)
{
    unsigned out = 0xdead;
    char err[200] = "";
    EXPECT_EQ(es_patches_parse(s, &out, err, sizeof err), -1) << s;
    EXPECT_EQ(out, 0xdeadu) << "output written on error for " << s;
    EXPECT_NE(err[0], 0) << "no message for " << s;
    return err;
}

TEST(KernelPatches, PrefixesOfAtLeastSevenDigits)
{
    EXPECT_EQ(parse_ok("dfe6450"), ES_PATCH_DFE64506);
    EXPECT_EQ(parse_ok("fa69714"), ES_PATCH_FA697140);
    EXPECT_EQ(parse_ok("ebeb8c8"), ES_PATCH_EBEB8C82);
    EXPECT_EQ(parse_ok("6dc936f"), ES_PATCH_6DC936F);
    EXPECT_EQ(parse_ok("dfe64506c01e"), ES_PATCH_DFE64506);
    EXPECT_EQ(parse_ok("6dc936f175cc6d12a8eb14d29b87e9238e460383"), ES_PATCH_6DC936F);
    EXPECT_EQ(parse_ok("DFE64506,FA697140f9"), ES_PATCH_DFE64506 | ES_PATCH_FA697140);
    EXPECT_EQ(parse_ok(" ebeb8c82 , 6dc936f1 "), ES_PATCH_EBEB8C82 | ES_PATCH_6DC936F);
    EXPECT_EQ(parse_ok("dfe64506,fa697140,ebeb8c82,6dc936f"), ES_CONV_V417);
    EXPECT_EQ(parse_ok("dfe64506,dfe6450"), ES_PATCH_DFE64506); // repeated: same set
    EXPECT_EQ(parse_ok(""), ES_CONV_V416);
}

TEST(KernelPatches, Errors)
{
    EXPECT_NE(parse_err("dfe645").find("at least 7"), std::string::npos);
    EXPECT_NE(parse_err("f").find("at least 7"), std::string::npos);
    EXPECT_NE(parse_err("dfe6450x").find("hex"), std::string::npos);
    EXPECT_NE(parse_err("v4.17").find("hex"), std::string::npos);
    EXPECT_NE(parse_err("0123456").find("not in the series"), std::string::npos);
    // one digit past the real id
    EXPECT_NE(parse_err("dfe64506c01e57159a4c550fe537c13a317ff01b0").find("not in the series"),
              std::string::npos);
    EXPECT_NE(parse_err("dfe64506c01e57159a4c550fe537c13a317ff01c").find("not in the series"),
              std::string::npos);
    // commits of the series that are not toggles
    EXPECT_NE(parse_err("1bd21c6c").find("no toggle"), std::string::npos);
    EXPECT_NE(parse_err("f8781c4a2263").find("no toggle"), std::string::npos);
    EXPECT_NE(parse_err("dfe6450,").find("empty"), std::string::npos);
    EXPECT_NE(parse_err(",dfe6450").find("empty"), std::string::npos);
    EXPECT_NE(parse_err("dfe6450,,fa69714").find("empty"), std::string::npos);
}

TEST(KernelPatches, AmbiguousPrefix)
{
    // the real ids share no 7-digit prefix; the rule on a table where two do
    const char *ids[] = {"abcdef0123", "abcdef0456", "1234567890"};
    const unsigned bits[] = {1, 2, 4};
    unsigned out = 0;
    char err[200] = "";
    EXPECT_EQ(es_patches_parse_ids("abcdef0", ids, bits, 3, &out, err, sizeof err), -1);
    EXPECT_NE(std::string(err).find("ambiguous"), std::string::npos) << err;
    EXPECT_EQ(es_patches_parse_ids("abcdef01,1234567", ids, bits, 3, &out, err, sizeof err), 0);
    EXPECT_EQ(out, 5u);
}

TEST(KernelPatches, ErrorsListTheTablesToggles)
{
    // the list of toggles in an error comes from the table parsed against
    const char *ids[] = {"abcdef0123", "abcdef0456", "1234567890"};
    const unsigned bits[] = {1, 0, 4};
    unsigned out = 0;
    char err[200] = "";
    EXPECT_EQ(es_patches_parse_ids("9999999", ids, bits, 3, &out, err, sizeof err), -1);
    EXPECT_STREQ(err, "patch '9999999' is not in the series (abcdef0123, 1234567890)");
    EXPECT_EQ(es_patches_parse_ids("abcdef04", ids, bits, 3, &out, err, sizeof err), -1);
    EXPECT_NE(std::string(err).find("the toggles are abcdef0123, 1234567890"), std::string::npos)
        << err;
}

TEST(KernelPatches, Names)
{
    char buf[64];
    es_patches_name(ES_CONV_V416, buf, sizeof buf);
    EXPECT_STREQ(buf, "v4.16");
    es_patches_name(ES_CONV_V417, buf, sizeof buf);
    EXPECT_STREQ(buf, "v4.17");
    es_patches_name(ES_PATCH_DFE64506 | ES_PATCH_6DC936F, buf, sizeof buf);
    EXPECT_STREQ(buf, "v4.16+dfe64506+6dc936f1");
    for (int i = 0; i < ES_NPATCHES; i++) {
        ASSERT_NE(es_patch_id(i), nullptr);
        EXPECT_EQ(strlen(es_patch_id(i)), 40u);
        unsigned bit = 0;
        char err[100];
        ASSERT_EQ(es_patches_parse(es_patch_id(i), &bit, err, sizeof err), 0);
        EXPECT_EQ(bit, 1u << i);
    }
}

// ------------------------------------------------- a hand-built kernel image

void put(std::vector<uint8_t> &b, size_t at, uint64_t v, int n)
{
    if (b.size() < at + n)
        b.resize(at + n);
    for (int i = 0; i < n; i++)
        b[at + i] = (uint8_t)(v >> (8 * i));
}

constexpr uint64_t KT = 0xffffffff81000000ull; // text: 2 pages, R+X
constexpr uint64_t KD = 0xffffffff81200000ull; // data: 2 pages file + 2 bss, R+W
constexpr uint64_t KSTACK_TOP = KD + 0x4000;

struct Sym {
    const char *name;
    uint64_t value, size;
    int type, bind, shndx;
};

// ELF64 ET_EXEC: text at file 0x1000, data at 0x3000, then symtab, strtab
// and section headers.  The text starts with `startup` (the code run at
// startup_64) and has vsyscall_page at its second page (0x0f 0x05 0xc3
// pattern); the data holds es_boot_info and vdso32_image.
std::vector<uint8_t> fake_kernel(unsigned patches, const std::vector<uint8_t> &startup = {0xf4})
{
    std::vector<uint8_t> b(0x5000, 0);
    memcpy(b.data(), "\177ELF", 4);
    b[4] = 2;
    b[5] = 1;
    b[6] = 1;
    put(b, 16, 2, 2);    // ET_EXEC
    put(b, 18, 62, 2);   // EM_X86_64
    put(b, 20, 1, 4);
    put(b, 24, KT, 8);
    put(b, 32, 64, 8);   // phoff
    put(b, 52, 64, 2);
    put(b, 54, 56, 2);
    put(b, 56, 2, 2);
    put(b, 58, 64, 2);
    auto ph = [&](int i, uint32_t flags, uint64_t off, uint64_t va, uint64_t fsz, uint64_t msz) {
        size_t p = 64 + 56 * i;
        put(b, p, 1, 4);
        put(b, p + 4, flags, 4);
        put(b, p + 8, off, 8);
        put(b, p + 16, va, 8);
        put(b, p + 24, va, 8);
        put(b, p + 32, fsz, 8);
        put(b, p + 40, msz, 8);
        put(b, p + 48, 0x1000, 8);
    };
    ph(0, 5, 0x1000, KT, 0x2000, 0x2000);
    ph(1, 6, 0x3000, KD, 0x2000, 0x4000);
    for (size_t i = 0; i < startup.size(); i++)
        b[0x1000 + i] = startup[i];
    for (int i = 0; i < 0x1000; i++)
        b[0x2000 + i] = (uint8_t)"\x0f\x05\xc3"[i % 3];
    // es_boot_info: the kernel build's constants
    put(b, 0x3000 + offsetof(es_boot_info, boot_stack_top), KSTACK_TOP, 8);
    put(b, 0x3000 + offsetof(es_boot_info, patches), patches, 8);
    for (int i = 0; i < 0x1000; i++)
        b[0x4000 + i] = (uint8_t)(i * 13 + 1);

    const std::vector<Sym> syms = {
        {"startup_64", KT, 16, 2, 1, 1},
        {"startup_alias", KT, 0, 0, 1, 1},
        {"helper_local", KT + 0x10, 0x20, 2, 0, 1},
        {"vsyscall_page", KT + 0x1000, 0x1000, 1, 1, 1},
        {"es_boot_info", KD, sizeof(es_boot_info), 1, 1, 2},
        {"vdso32_image", KD + 0x1000, 0x1000, 1, 1, 2},
        {"boot_stack", KD + 0x2000, 0x2000, 1, 0, 2},
        {"dup", KT + 0x40, 4, 2, 0, 1},
        {"dup", KT + 0x50, 4, 2, 1, 1},
        {"an_absolute", 0x1234, 0, 0, 1, 0xfff1},
        {"an_undefined", 0, 0, 0, 1, 0},
        {"past_the_image", KD + 0x9000, 0, 0, 1, 2},
    };
    std::string strtab(1, '\0');
    size_t symoff = b.size();
    b.resize(symoff + 24 * (syms.size() + 1), 0);
    for (size_t i = 0; i < syms.size(); i++) {
        size_t p = symoff + 24 * (i + 1);
        put(b, p, strtab.size(), 4);
        strtab += syms[i].name;
        strtab += '\0';
        b[p + 4] = (uint8_t)(syms[i].bind << 4 | syms[i].type);
        put(b, p + 6, syms[i].shndx, 2);
        put(b, p + 8, syms[i].value, 8);
        put(b, p + 16, syms[i].size, 8);
    }
    size_t stroff = b.size();
    b.insert(b.end(), strtab.begin(), strtab.end());
    while (b.size() % 8)
        b.push_back(0);
    size_t shoff = b.size();
    b.resize(shoff + 3 * 64, 0);
    put(b, shoff + 64 + 4, 2, 4); // SHT_SYMTAB
    put(b, shoff + 64 + 24, symoff, 8);
    put(b, shoff + 64 + 32, 24 * (syms.size() + 1), 8);
    put(b, shoff + 64 + 40, 2, 4); // link: strtab
    put(b, shoff + 64 + 56, 24, 8);
    put(b, shoff + 128 + 4, 3, 4); // SHT_STRTAB
    put(b, shoff + 128 + 24, stroff, 8);
    put(b, shoff + 128 + 32, strtab.size(), 8);
    put(b, 40, shoff, 8);
    put(b, 60, 3, 2);
    return b;
}

uint64_t pte_of(es_machine *m, uint64_t va)
{
    uint64_t *p = es_pte(m, m->cr3, va, false);
    return p ? *p : 0;
}

struct Machine {
    es_machine *m;
    explicit Machine(uint64_t cap = 64ull << 20) : m(es_machine_new(cap)) {}
    ~Machine() { es_machine_free(m); }
};

TEST(KernelLoad, MapsSegmentsAsSupervisorPages)
{
    Machine h;
    es_machine *m = h.m;
    auto img = fake_kernel(5);
    uint64_t used = m->frames_used;
    ASSERT_EQ(es_kernel_load_image(m, img.data(), img.size(), 5), 0) << m->message;
    EXPECT_EQ(es_kernel_patches(m), 5u);
    // the process's memory cap does not pay for the kernel
    EXPECT_EQ(m->frames_used, used + 0) << "kernel frames counted against the cap";

    for (uint64_t va : {KT, KT + 0x1000}) {
        uint64_t e = pte_of(m, va);
        EXPECT_TRUE(e & ES_PTE_P);
        EXPECT_FALSE(e & ES_PTE_U) << std::hex << va;
        EXPECT_FALSE(e & ES_PTE_W) << std::hex << va;
        EXPECT_FALSE(e & ES_PTE_NX) << std::hex << va;
    }
    for (uint64_t va = KD; va < KD + 0x4000; va += 0x1000) {
        uint64_t e = pte_of(m, va);
        EXPECT_TRUE(e & ES_PTE_P);
        EXPECT_FALSE(e & ES_PTE_U);
        EXPECT_TRUE(e & ES_PTE_W);
        EXPECT_TRUE(e & ES_PTE_NX);
    }
    EXPECT_EQ(pte_of(m, KD + 0x4000) & ES_PTE_P, 0u);
    // contents: file bytes, then zeroed .bss
    uint8_t buf[0x1000];
    ASSERT_EQ(es_kernel_read(m, KD + 0x1000, buf, sizeof buf), 0);
    for (int i = 0; i < 0x1000; i++)
        ASSERT_EQ(buf[i], (uint8_t)(i * 13 + 1)) << i;
    ASSERT_EQ(es_kernel_read(m, KD + 0x2000, buf, sizeof buf), 0);
    for (int i = 0; i < 0x1000; i++)
        ASSERT_EQ(buf[i], 0) << i;
    EXPECT_EQ(es_kernel_read(m, KD + 0x4000, buf, 1), -1);

    // a user-mode read of kernel text faults with a protection violation
    uint64_t pa;
    EXPECT_EQ(es_translate(m, KT, ES_ACC_R, 1, &pa) & 0xff, (uint32_t)(ES_PFEC_P | ES_PFEC_U));
    EXPECT_EQ(es_translate(m, KT, ES_ACC_X, 0, &pa), 0u);
    EXPECT_NE(es_translate(m, KD, ES_ACC_X, 0, &pa), 0u);
    EXPECT_NE(es_translate(m, KT, ES_ACC_W, 0, &pa), 0u);
    EXPECT_EQ(es_translate(m, KD, ES_ACC_W, 0, &pa), 0u);
}

TEST(KernelLoad, VsyscallPageIsUserReadableNotExecutable)
{
    Machine h;
    es_machine *m = h.m;
    auto img = fake_kernel(0);
    ASSERT_EQ(es_kernel_load_image(m, img.data(), img.size(), 0), 0) << m->message;
    uint64_t e = pte_of(m, ES_VSYSCALL_ADDR);
    EXPECT_TRUE(e & ES_PTE_P);
    EXPECT_TRUE(e & ES_PTE_U);
    EXPECT_FALSE(e & ES_PTE_W);
    EXPECT_TRUE(e & ES_PTE_NX);
    uint64_t pa;
    EXPECT_EQ(es_translate(m, ES_VSYSCALL_ADDR + 0x400, ES_ACC_R, 1, &pa), 0u);
    // instruction fetch from user mode: #PF with P, U and I set (emulation)
    EXPECT_EQ(es_translate(m, ES_VSYSCALL_ADDR, ES_ACC_X, 1, &pa) & 0xff,
              (uint32_t)(ES_PFEC_P | ES_PFEC_U | ES_PFEC_I));
    uint8_t buf[0x1000];
    ASSERT_EQ(es_kernel_read(m, ES_VSYSCALL_ADDR, buf, sizeof buf), 0);
    for (int i = 0; i < 0x1000; i++)
        ASSERT_EQ(buf[i], (uint8_t)"\x0f\x05\xc3"[i % 3]) << i;
}

TEST(KernelLoad, Symbols)
{
    Machine h;
    es_machine *m = h.m;
    auto img = fake_kernel(0);
    ASSERT_EQ(es_kernel_load_image(m, img.data(), img.size(), ~0u), 0) << m->message;
    EXPECT_EQ(es_kernel_sym(m, "startup_64"), KT);
    EXPECT_EQ(es_kernel_sym(m, "helper_local"), KT + 0x10);
    EXPECT_EQ(es_kernel_sym(m, "dup"), KT + 0x50) << "the global one wins";
    EXPECT_EQ(es_kernel_sym(m, "an_absolute"), 0u);
    EXPECT_EQ(es_kernel_sym(m, "an_undefined"), 0u);
    EXPECT_EQ(es_kernel_sym(m, "past_the_image"), 0u);
    EXPECT_EQ(es_kernel_sym(m, "nonexistent"), 0u);
    EXPECT_EQ(es_kernel_sym(m, ""), 0u);
    uint64_t a = 0, s = 0;
    ASSERT_TRUE(es_kernel_sym_size(m, "vdso32_image", &a, &s));
    EXPECT_EQ(a, KD + 0x1000);
    EXPECT_EQ(s, 0x1000u);
    EXPECT_FALSE(es_kernel_sym_size(m, "nonexistent", &a, &s));

    uint64_t off = 99;
    EXPECT_STREQ(es_kernel_addr2sym(m, KT, &off), "startup_64") << "sized beats label";
    EXPECT_EQ(off, 0u);
    EXPECT_STREQ(es_kernel_addr2sym(m, KT + 0x1f, &off), "helper_local");
    EXPECT_EQ(off, 0xfu);
    EXPECT_STREQ(es_kernel_addr2sym(m, KT + 0x1234, &off), "vsyscall_page");
    EXPECT_EQ(off, 0x234u);
    EXPECT_STREQ(es_kernel_addr2sym(m, KD + 0x3ff8, &off), "boot_stack");
    EXPECT_EQ(es_kernel_addr2sym(m, KT - 1, &off), nullptr);
    EXPECT_EQ(es_kernel_addr2sym(m, KD + 0x4000, &off), nullptr);
    EXPECT_EQ(es_kernel_addr2sym(m, 0x401000, &off), nullptr);
    // address order listing
    size_t n = es_kernel_nsyms(m);
    EXPECT_EQ(n, 9u);
    uint64_t prev = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t ad;
        ASSERT_NE(es_kernel_sym_at(m, i, &ad, nullptr), nullptr);
        EXPECT_GE(ad, prev);
        prev = ad;
    }
}

TEST(KernelLoad, WrongPatchSetIsRejected)
{
    Machine h;
    auto img = fake_kernel(3);
    EXPECT_EQ(es_kernel_load_image(h.m, img.data(), img.size(), 15), -1);
    EXPECT_NE(std::string(h.m->message).find("built for v4.16+dfe64506+fa697140"),
              std::string::npos)
        << h.m->message;
    EXPECT_EQ(h.m->kernel, nullptr);
}

// Every malformed image gets a message, never a crash (run under ASan).
TEST(KernelLoad, MalformedImages)
{
    auto good = fake_kernel(0);
    auto expect_fail = [](std::vector<uint8_t> img, const char *what) {
        Machine h;
        EXPECT_EQ(es_kernel_load_image(h.m, img.data(), img.size(), ~0u), -1) << what;
        EXPECT_NE(std::string(h.m->message).find(what), std::string::npos)
            << "message '" << h.m->message << "' lacks '" << what << "'";
        EXPECT_EQ(h.m->kernel, nullptr);
    };
    expect_fail({}, "too small");
    {
        auto b = good;
        b[0] = 'X';
        expect_fail(b, "not an ELF");
    }
    {
        auto b = good;
        b[4] = 1;
        expect_fail(b, "ELF64");
    }
    {
        auto b = good;
        put(b, 18, 3, 2);
        expect_fail(b, "x86-64");
    }
    {
        auto b = good;
        put(b, 16, 3, 2);
        expect_fail(b, "ET_EXEC");
    }
    {
        auto b = good;
        put(b, 64 + 16, 0x400000, 8); // a text segment in user space
        expect_fail(b, "outside the kernel half");
    }
    {
        auto b = good;
        put(b, 64 + 16, 0xfffffffffffff000ull, 8); // wraps
        expect_fail(b, "outside the kernel half");
    }
    {
        auto b = good;
        put(b, 64 + 32, 0x3000, 8); // filesz > memsz
        expect_fail(b, "file size exceeds");
    }
    {
        auto b = good;
        put(b, 64 + 56 + 8, 0x100000, 8); // offset past the end
        expect_fail(b, "past the end");
    }
    {
        auto b = good;
        put(b, 56, 0, 2);
        expect_fail(b, "program headers");
    }
    {
        auto b = good;
        put(b, 60, 0, 2);
        expect_fail(b, "no section headers");
    }
    {
        auto b = good;
        put(b, 40, b.size() - 10, 8);
        expect_fail(b, "section headers extend");
    }
    {
        auto b = good;
        uint64_t shoff = 0;
        for (int i = 0; i < 8; i++)
            shoff |= (uint64_t)b[40 + i] << (8 * i);
        put(b, shoff + 64 + 4, 1, 4); // the symtab becomes PROGBITS
        expect_fail(b, "no symbol table");
    }
    {
        auto b = good;
        uint64_t shoff = 0;
        for (int i = 0; i < 8; i++)
            shoff |= (uint64_t)b[40 + i] << (8 * i);
        put(b, shoff + 128 + 32, 1u << 30, 8); // strtab size
        expect_fail(b, "string table");
    }
    {
        // no startup_64: rename it in the string table
        auto b = good;
        for (size_t i = 0; i + 10 < b.size(); i++)
            if (memcmp(&b[i], "startup_64", 11) == 0)
                b[i] = 'X';
        expect_fail(b, "startup_64");
    }

    // every truncation, and random damage: never a crash
    for (size_t n = 0; n < good.size(); n += (n < 256 ? 1 : 97)) {
        Machine h;
        int rc = es_kernel_load_image(h.m, good.data(), n, ~0u);
        if (rc != 0) {
            EXPECT_NE(h.m->message[0], 0) << n;
        }
    }
    uint64_t seed = 12345;
    auto rnd = [&] {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        return seed >> 33;
    };
    for (int iter = 0; iter < 300; iter++) {
        auto b = good;
        int hits = 1 + (int)(rnd() % 4);
        for (int k = 0; k < hits; k++) {
            size_t at = rnd() % 4 == 0 ? rnd() % 128 : rnd() % b.size();
            b[at] = (uint8_t)rnd();
        }
        Machine h;
        int rc = es_kernel_load_image(h.m, b.data(), b.size(), ~0u);
        if (rc != 0) {
            EXPECT_NE(h.m->message[0], 0);
            EXPECT_EQ(h.m->kernel, nullptr);
        }
    }
}

TEST(KernelLoad, NoImageForBadPatchSet)
{
    Machine h;
    EXPECT_EQ(es_kernel_load(h.m, 16), -1);
    EXPECT_NE(h.m->message[0], 0);
}

// ---------------------------------------------------- processes and boot

// An ELF64 ET_EXEC with one RWX segment at 0x400000 (headers included),
// code at 0x400100 and a zeroed result area at 0x400800.
constexpr uint64_t UBASE = 0x400000, UCODE = 0x400100, URES = 0x400800;

std::vector<uint8_t> user_elf(const std::vector<uint8_t> &code)
{
    std::vector<uint8_t> b(0x1000, 0);
    memcpy(b.data(), "\177ELF", 4);
    b[4] = 2;
    b[5] = 1;
    b[6] = 1;
    put(b, 16, 2, 2);
    put(b, 18, 62, 2);
    put(b, 20, 1, 4);
    put(b, 24, UCODE, 8);
    put(b, 32, 64, 8);
    put(b, 52, 64, 2);
    put(b, 54, 56, 2);
    put(b, 56, 1, 2);
    put(b, 64, 1, 4);
    put(b, 68, 7, 4);
    put(b, 72, 0, 8);
    put(b, 80, UBASE, 8);
    put(b, 88, UBASE, 8);
    put(b, 96, 0x1000, 8);
    put(b, 104, 0x1000, 8);
    put(b, 112, 0x1000, 8);
    memcpy(&b[0x100], code.data(), code.size());
    return b;
}

struct Proc {
    es_machine *m = nullptr;
    FILE *out = nullptr;
    es_image img{};
    int vendor = -1; // -1: the machine's default; 0 Intel, 1 AMD
    Proc() = default;
    Proc(const Proc &) = delete;
    ~Proc()
    {
        if (m) {
            es_host_free(m);
            es_machine_free(m);
        }
        if (out)
            fclose(out);
    }
    // kernel: -1 = --direct, else the patch set (from the embedded image,
    // or `image` when given)
    bool start(const std::vector<uint8_t> &elf, int kernel, const std::vector<uint8_t> *image = nullptr)
    {
        m = es_machine_new(64ull << 20);
        out = tmpfile();
        if (!m || !out)
            return false;
        m->deterministic = true;
        if (vendor >= 0)
            m->vendor = (uint8_t)vendor;
        es_host_config cfg{};
        cfg.root = ".";
        cfg.deterministic = true;
        cfg.stdin_fd = -1;
        cfg.stdout_fd = fileno(out);
        cfg.stderr_fd = fileno(out);
        if (es_host_init(m, &cfg))
            return false;
        if (es_load_elf_mem(m, elf.data(), elf.size(), &img))
            return false;
        if (kernel >= 0) {
            int rc = image ? es_kernel_load_image(m, image->data(), image->size(), (unsigned)kernel)
                           : es_kernel_load(m, (unsigned)kernel);
            if (rc)
                return false;
            es_kernel_set_abi(m, img.abi);
        }
        char arg0[] = "prog";
        char *argv[] = {arg0, nullptr};
        char *envp[] = {nullptr};
        if (es_start_process(m, &img, 1, argv, envp))
            return false;
        if (kernel >= 0 && es_kernel_boot(m))
            return false;
        m->max_insns = 2000000;
        return true;
    }
    uint64_t res(int i)
    {
        uint64_t v = 0;
        es_copy_from_guest(m, &v, URES + 8 * i, 8);
        return v;
    }
    std::string output()
    {
        fflush(out);
        std::string s;
        rewind(out);
        int c;
        while ((c = fgetc(out)) != EOF)
            s += (char)c;
        return s;
    }
};

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

// ------------------------------------------- the embedded kernel_model images

bool have_images()
{
    size_t n = 0;
    return es_kernel_image(ES_CONV_V417, &n) && n;
}

TEST(KernelImages, EveryVariantLoadsWithTheContractSymbols)
{
    if (!have_images())
        GTEST_SKIP() << "entrysim was built without kernel_model/";
    const char *always[] = {
        "startup_64", "es_boot_info", "vsyscall_page", "entry_SYSCALL_64",
        "entry_INT80_compat", "entry_SYSCALL_compat", "entry_SYSENTER_compat", "do_syscall_64",
        "do_int80_syscall_32", "do_fast_syscall_32", "emulate_vsyscall", "sys_call_table",
        "ia32_sys_call_table", "sys_ni_syscall",
    };
    for (unsigned p = 0; p < 16; p++) {
        Machine h;
        es_machine *m = h.m;
        ASSERT_EQ(es_kernel_load(m, p), 0) << p << ": " << m->message;
        EXPECT_EQ(es_kernel_patches(m), p);
        for (const char *s : always)
            EXPECT_NE(es_kernel_sym(m, s), 0u) << s << " missing in variant " << p;
        // the naming of the 64-bit stubs follows fa697140, the compat ones ebeb8c82
        bool x64 = p & ES_PATCH_FA697140, compat = p & ES_PATCH_EBEB8C82;
        EXPECT_EQ(es_kernel_sym(m, "__x64_sys_read") != 0, x64) << p;
        EXPECT_EQ(es_kernel_sym(m, "__do_sys_getpid") != 0 || es_kernel_sym(m, "__do_sys_read") != 0,
                  x64 || compat)
            << p;
        if (!x64) {
            EXPECT_NE(es_kernel_sym(m, "SyS_read"), 0u) << p;
        }
        EXPECT_EQ(es_kernel_sym(m, "__ia32_sys_read") != 0, compat) << p;
        EXPECT_NE(es_kernel_sym(m, x64 ? "__x64_sys_recv" : "SyS_recv"), 0u) << p;
        // the table entries point into the image
        uint64_t tbl = es_kernel_sym(m, "sys_call_table"), t0 = 0;
        ASSERT_EQ(es_kernel_read(m, tbl, &t0, 8), 0);
        uint64_t off;
        const char *name = es_kernel_addr2sym(m, t0, &off);
        ASSERT_NE(name, nullptr);
        EXPECT_EQ(off, 0u);
        EXPECT_NE(std::string(name).find("read"), std::string::npos) << name;
        // vsyscall page present and user-readable
        uint64_t e = pte_of(m, ES_VSYSCALL_ADDR);
        EXPECT_TRUE((e & ES_PTE_P) && (e & ES_PTE_U) && (e & ES_PTE_NX) && !(e & ES_PTE_W));
    }
}

// Returns to user mode: which instruction (its op) took the CPU from CPL 0
// to CPL 3, in order.
struct Returns {
    uint16_t last_op = 0;
    int last_cpl = 0;
    std::vector<uint16_t> ops;
};

void ret_before(void *ctx, es_machine *m, const es_insn *d, uint64_t)
{
    auto *r = static_cast<Returns *>(ctx);
    r->last_op = d->op;
    r->last_cpl = m->cpl;
}

void ret_mode(void *ctx, es_machine *m, int cpl, int)
{
    auto *r = static_cast<Returns *>(ctx);
    if (cpl == 3 && r->last_cpl == 0)
        r->ops.push_back(r->last_op);
}

// getpid; write(1, "hello", 5); syscall 999; x32 bit on the 64-only row
// 19 (readv); getpid by int 0x80; x32 number 1000 (beyond the table);
// int 0x80 number 999; exit(7).  Results at URES + 0..0x30.
const std::vector<uint8_t> k_calls = {
    0xb8, 0x27, 0x00, 0x00, 0x00, 0x0f, 0x05, 0x48, 0x89, 0x04, 0x25, 0x00,
    0x08, 0x40, 0x00, 0xb8, 0x01, 0x00, 0x00, 0x00, 0xbf, 0x01, 0x00, 0x00,
    0x00, 0x48, 0x8d, 0x35, 0x66, 0x00, 0x00, 0x00, 0xba, 0x05, 0x00, 0x00,
    0x00, 0x0f, 0x05, 0x48, 0x89, 0x04, 0x25, 0x08, 0x08, 0x40, 0x00, 0xb8,
    0xe7, 0x03, 0x00, 0x00, 0x0f, 0x05, 0x48, 0x89, 0x04, 0x25, 0x10, 0x08,
    0x40, 0x00, 0xb8, 0x13, 0x00, 0x00, 0x40, 0x0f, 0x05, 0x48, 0x89, 0x04,
    0x25, 0x18, 0x08, 0x40, 0x00, 0xb8, 0x14, 0x00, 0x00, 0x00, 0xcd, 0x80,
    0x48, 0x89, 0x04, 0x25, 0x20, 0x08, 0x40, 0x00, 0xb8, 0xe8, 0x03, 0x00,
    0x40, 0x0f, 0x05, 0x48, 0x89, 0x04, 0x25, 0x28, 0x08, 0x40, 0x00, 0xb8,
    0xe7, 0x03, 0x00, 0x00, 0xcd, 0x80, 0x48, 0x89, 0x04, 0x25, 0x30, 0x08,
    0x40, 0x00, 0xb8, 0x3c, 0x00, 0x00, 0x00, 0xbf, 0x07, 0x00, 0x00, 0x00,
    0x0f, 0x05, 0x68, 0x65, 0x6c, 0x6c, 0x6f,
};

TEST(KernelRun, SyscallsThroughTheKernelMatchDirect)
{
    if (!have_images())
        GTEST_SKIP() << "entrysim was built without kernel_model/";
    Proc d;
    ASSERT_TRUE(d.start(user_elf(k_calls), -1)) << d.m->message;
    es_run(d.m);
    ASSERT_EQ(d.m->stop, ES_STOP_EXIT) << d.m->message;
    ASSERT_EQ(d.m->exit_status, 7);
    const int64_t enosys = -38;
    ASSERT_EQ((int64_t)d.res(1), 5);
    ASSERT_EQ((int64_t)d.res(2), enosys);
    ASSERT_EQ((int64_t)d.res(5), enosys);
    ASSERT_EQ((int64_t)d.res(6), enosys);
    for (unsigned patches : {0u, 1u, 2u, 4u, 8u, 15u}) {
        SCOPED_TRACE("patches " + std::to_string(patches));
        Proc k;
        ASSERT_TRUE(k.start(user_elf(k_calls), (int)patches)) << k.m->message;
        Returns r;
        es_observer ob{};
        ob.ctx = &r;
        ob.before = ret_before;
        ob.mode_change = ret_mode;
        es_observe(k.m, &ob);
        es_run(k.m);
        ASSERT_EQ(k.m->stop, ES_STOP_EXIT) << k.m->message << " at rip 0x" << std::hex << k.m->rip;
        EXPECT_EQ(k.m->exit_status, 7);
        EXPECT_EQ(k.res(0), d.res(0)) << "getpid";
        EXPECT_EQ((int64_t)k.res(1), 5) << "write";
        EXPECT_EQ(k.output(), "hello");
        EXPECT_EQ((int64_t)k.res(2), enosys) << "nr 999";
        // 4.17 shares one table between 64-bit and x32 (the x32-only table
        // came with 5.4): a 64-only row reached with the x32 bit runs its
        // 64-bit stub, and the host answers as for --direct
        EXPECT_EQ((int64_t)k.res(3), (int64_t)d.res(3)) << "x32 bit on a 64-only row";
        EXPECT_EQ(k.res(4), d.res(0)) << "getpid by int 0x80 from a 64-bit process";
        EXPECT_EQ((int64_t)k.res(5), enosys) << "x32 number beyond the table";
        EXPECT_EQ((int64_t)k.res(6), enosys) << "int 0x80 number 999";
        EXPECT_EQ(k.m->cpl, 0) << "exit_group ends the run inside the kernel's body";
        // the boot's IRETQ, then SYSRET after each SYSCALL and IRETQ after
        // each INT 0x80
        ASSERT_EQ(r.ops.size(), 8u);
        EXPECT_EQ(r.ops[0], ES_OP_IRETQ) << "entry to user mode";
        for (int i : {1, 2, 3, 4, 6})
            EXPECT_EQ(r.ops[i], ES_OP_SYSRET) << "return " << i;
        EXPECT_EQ(r.ops[5], ES_OP_IRETQ) << "int 0x80 returns by IRET";
        EXPECT_EQ(r.ops[7], ES_OP_IRETQ) << "int 0x80 returns by IRET";
    }
}

TEST(KernelRun, ReachesUserModeAtTheEntryPoint)
{
    if (!have_images())
        GTEST_SKIP() << "entrysim was built without kernel_model/";
    Proc k;
    ASSERT_TRUE(k.start(user_elf({0x90, 0xf4}), 15)) << k.m->message;
    uint64_t sp = 0;
    for (int i = 0; i < 200000 && k.m->cpl != 3; i++) {
        if (k.m->cpl == 0 && sp == 0)
            sp = k.m->gpr[ES_RSP];
        ASSERT_EQ(es_step(k.m), ES_OK) << k.m->message << " at 0x" << std::hex << k.m->rip;
    }
    ASSERT_EQ(k.m->cpl, 3);
    EXPECT_EQ(k.m->rip, UCODE);
    EXPECT_EQ(k.m->mode, ES_MODE_64);
    EXPECT_EQ(k.m->seg[ES_SEG_CS].sel, 0x33);
    EXPECT_EQ(k.m->seg[ES_SEG_SS].sel, 0x2b);
    EXPECT_EQ(k.m->rflags & 0x3fffff & ~ES_RF, 0x202u);
    es_boot_info bi;
    ASSERT_EQ(es_kernel_read(k.m, es_kernel_sym(k.m, "es_boot_info"), &bi, sizeof bi), 0);
    EXPECT_EQ(k.m->gpr[ES_RSP], bi.user_rsp);
    // start_thread's registers: everything else zero
    for (int r = 0; r < 16; r++) {
        if (r != ES_RSP) {
            EXPECT_EQ(k.m->gpr[r], 0u) << "gpr " << r;
        }
    }
}

// pt_regs as the dispatcher sees it: at do_syscall_64's first instruction
// the entry code has pushed the user's registers in Linux's order.
struct Regs {
    uint64_t dispatch = 0, user_rsp = 0, syscall_rip = 0;
    unsigned patches = 0;
    bool seen = false;
    uint64_t regs_ptr = 0;
    uint8_t frame[168];
};

void regs_before(void *ctx, es_machine *m, const es_insn *, uint64_t rip)
{
    auto *r = static_cast<Regs *>(ctx);
    if (m->cpl == 3 && rip == r->syscall_rip)
        r->user_rsp = m->gpr[ES_RSP];
    if (rip == r->dispatch && !r->seen) {
        r->seen = true;
        // do_syscall_64(regs) in v4.16, do_syscall_64(nr, regs) after dfe64506
        r->regs_ptr = m->gpr[(r->patches & ES_PATCH_DFE64506) ? ES_RSI : ES_RDI];
        es_kernel_read(m, r->regs_ptr, r->frame, sizeof r->frame);
    }
}

const std::vector<uint8_t> k_markers = {
    0x48, 0xbb, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x48, 0xbd, 0x22, 0x22,
    0x22, 0x22, 0x22, 0x22, 0x22, 0x22, 0x49, 0xbc, 0x33, 0x33, 0x33, 0x33, 0x33, 0x33,
    0x33, 0x33, 0x49, 0xbd, 0x44, 0x44, 0x44, 0x44, 0x44, 0x44, 0x44, 0x44, 0x49, 0xbe,
    0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x49, 0xbf, 0x66, 0x66, 0x66, 0x66,
    0x66, 0x66, 0x66, 0x66, 0x48, 0xbf, 0x77, 0x77, 0x77, 0x77, 0x77, 0x77, 0x77, 0x77,
    0x48, 0xbe, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x48, 0xba, 0x99, 0x99,
    0x99, 0x99, 0x99, 0x99, 0x99, 0x99, 0x49, 0xba, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa,
    0xaa, 0xaa, 0x49, 0xb8, 0xbb, 0xbb, 0xbb, 0xbb, 0xbb, 0xbb, 0xbb, 0xbb, 0x49, 0xb9,
    0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xb8, 0x27, 0x00, 0x00, 0x00, 0x0f,
    0x05, 0xb8, 0x3c, 0x00, 0x00, 0x00, 0x31, 0xff, 0x0f, 0x05,
};
constexpr uint64_t k_markers_syscall = UCODE + 125; // the first `syscall`

TEST(KernelRun, PtRegsLayoutAtTheDispatcher)
{
    if (!have_images())
        GTEST_SKIP() << "entrysim was built without kernel_model/";
    for (unsigned patches : {0u, 15u}) {
        SCOPED_TRACE("patches " + std::to_string(patches));
        Proc k;
        ASSERT_TRUE(k.start(user_elf(k_markers), (int)patches)) << k.m->message;
        Regs r;
        r.dispatch = es_kernel_sym(k.m, "do_syscall_64");
        ASSERT_NE(r.dispatch, 0u);
        r.syscall_rip = k_markers_syscall;
        r.patches = patches;
        es_observer ob{};
        ob.ctx = &r;
        ob.before = regs_before;
        es_observe(k.m, &ob);
        es_run(k.m);
        ASSERT_EQ(k.m->stop, ES_STOP_EXIT) << k.m->message;
        ASSERT_TRUE(r.seen);
        ASSERT_NE(r.user_rsp, 0u);
        auto at = [&](int off) {
            uint64_t v;
            memcpy(&v, r.frame + off, 8);
            return v;
        };
        EXPECT_EQ(at(0x00), 0x6666666666666666u) << "r15";
        EXPECT_EQ(at(0x08), 0x5555555555555555u) << "r14";
        EXPECT_EQ(at(0x10), 0x4444444444444444u) << "r13";
        EXPECT_EQ(at(0x18), 0x3333333333333333u) << "r12";
        EXPECT_EQ(at(0x20), 0x2222222222222222u) << "bp";
        EXPECT_EQ(at(0x28), 0x1111111111111111u) << "bx";
        EXPECT_EQ(at(0x30) & ~(uint64_t)ES_RF, 0x202u | 0x2u) << "r11 = user rflags";
        EXPECT_EQ(at(0x38), 0xaaaaaaaaaaaaaaaau) << "r10";
        EXPECT_EQ(at(0x40), 0xccccccccccccccccu) << "r9";
        EXPECT_EQ(at(0x48), 0xbbbbbbbbbbbbbbbbu) << "r8";
        EXPECT_EQ((int64_t)at(0x50), -38) << "ax = -ENOSYS";
        EXPECT_EQ(at(0x58), k_markers_syscall + 2) << "cx = user rip";
        EXPECT_EQ(at(0x60), 0x9999999999999999u) << "dx";
        EXPECT_EQ(at(0x68), 0x8888888888888888u) << "si";
        EXPECT_EQ(at(0x70), 0x7777777777777777u) << "di";
        EXPECT_EQ(at(0x78), 39u) << "orig_ax";
        EXPECT_EQ(at(0x80), k_markers_syscall + 2) << "ip";
        EXPECT_EQ(at(0x88), 0x33u) << "cs";
        EXPECT_EQ(at(0x90) & 0x3fffff & ~(uint64_t)ES_RF, 0x202u) << "flags";
        EXPECT_EQ(at(0x98), r.user_rsp) << "sp";
        EXPECT_EQ(at(0xa0), 0x2bu) << "ss";
        // pt_regs ends at the (16-byte aligned) top of the kernel stack
        EXPECT_EQ((r.regs_ptr + 168) & 0xf, 0u);
    }
}

// A syscall whose saved user RIP is changed while in the kernel (as
// ptrace or execve would): RCX no longer equals RIP, so the kernel must
// return by IRET (and to the new RIP), not SYSRET.
const std::vector<uint8_t> k_newip = {
    0xb8, 0x27, 0x00, 0x00, 0x00, 0x0f, 0x05,                         // getpid
    0xb8, 0x3c, 0x00, 0x00, 0x00, 0xbf, 0x01, 0x00, 0x00, 0x00, 0x0f, 0x05, // exit(1)
    0xb8, 0x3c, 0x00, 0x00, 0x00, 0xbf, 0x02, 0x00, 0x00, 0x00, 0x0f, 0x05, // exit(2)
};

struct NewIp {
    uint64_t dispatch = 0;
    unsigned patches = 0;
    int hits = 0;
};

void newip_before(void *ctx, es_machine *m, const es_insn *, uint64_t rip)
{
    auto *r = static_cast<NewIp *>(ctx);
    if (rip != r->dispatch || r->hits++)
        return;
    uint64_t regs = m->gpr[(r->patches & ES_PATCH_DFE64506) ? ES_RSI : ES_RDI];
    uint64_t ip = UCODE + 19;
    es_kernel_write(m, regs + 0x80, &ip, 8);
}

TEST(KernelRun, ChangedReturnRipForcesIret)
{
    if (!have_images())
        GTEST_SKIP() << "entrysim was built without kernel_model/";
    for (unsigned patches : {0u, 15u}) {
        SCOPED_TRACE("patches " + std::to_string(patches));
        Proc k;
        ASSERT_TRUE(k.start(user_elf(k_newip), (int)patches)) << k.m->message;
        Returns r;
        NewIp n;
        n.dispatch = es_kernel_sym(k.m, "do_syscall_64");
        n.patches = patches;
        es_observer ob{};
        ob.ctx = &r;
        ob.before = ret_before;
        ob.mode_change = ret_mode;
        es_observe(k.m, &ob);
        es_observer ob2{};
        ob2.ctx = &n;
        ob2.before = newip_before;
        es_observe(k.m, &ob2);
        es_run(k.m);
        ASSERT_EQ(k.m->stop, ES_STOP_EXIT) << k.m->message;
        EXPECT_EQ(k.m->exit_status, 2) << "returned to the RIP in pt_regs";
        ASSERT_GE(r.ops.size(), 2u);
        EXPECT_EQ(r.ops[0], ES_OP_IRETQ);
        EXPECT_EQ(r.ops[1], ES_OP_IRETQ) << "RCX != RIP: SYSRET would return to RCX";
    }
}

// The legacy vsyscall page: calls into it fault (the page is not
// executable) and the kernel emulates time() and getcpu() (vsyscall=emulate).
const std::vector<uint8_t> k_vsyscall = {
    0x31, 0xff, 0x48, 0xc7, 0xc0, 0x00, 0x04, 0x60, 0xff, 0xff, 0xd0, 0x48, // time(NULL)
    0x89, 0x04, 0x25, 0x00, 0x08, 0x40, 0x00, 0xb8, 0xc9, 0x00, 0x00, 0x00, // then the syscall
    0x31, 0xff, 0x0f, 0x05, 0x48, 0x89, 0x04, 0x25, 0x08, 0x08, 0x40, 0x00,
    0xbf, 0x40, 0x08, 0x40, 0x00, 0xbe, 0x48, 0x08, 0x40, 0x00, 0x31, 0xd2, // getcpu(&c, &n, 0)
    0x48, 0xc7, 0xc0, 0x00, 0x08, 0x60, 0xff, 0xff, 0xd0, 0x48, 0x89, 0x04,
    0x25, 0x10, 0x08, 0x40, 0x00, 0xb8, 0x3c, 0x00, 0x00, 0x00, 0x31, 0xff, // exit(0)
    0x0f, 0x05,
};

TEST(KernelRun, VsyscallEmulation)
{
    if (!have_images())
        GTEST_SKIP() << "entrysim was built without kernel_model/";
    for (unsigned patches : {0u, 15u}) {
        SCOPED_TRACE("patches " + std::to_string(patches));
        auto elf = user_elf(k_vsyscall);
        for (int i = 0; i < 16; i++)
            elf[0x840 + i] = 0xff;
        Proc k;
        ASSERT_TRUE(k.start(elf, (int)patches)) << k.m->message;
        es_run(k.m);
        ASSERT_EQ(k.m->stop, ES_STOP_EXIT) << k.m->message;
        EXPECT_EQ(k.m->exit_status, 0);
        int64_t vt = (int64_t)k.res(0), st = (int64_t)k.res(1);
        EXPECT_GT(vt, 1000000000) << "time() through the vsyscall page";
        EXPECT_LE(vt, st);
        EXPECT_LE(st - vt, 1);
        EXPECT_EQ(k.res(2), 0u) << "getcpu returns 0";
        EXPECT_EQ(k.res(8), 0xffffffff00000000u) << "cpu written (4 bytes)";
        EXPECT_EQ(k.res(9), 0xffffffff00000000u) << "node written (4 bytes)";
    }
}

} // namespace

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
