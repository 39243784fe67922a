// Guest kernel loader tests: the patch list of --patches, loading a kernel
// image (a hand-built one for the ELF checks, mapping and symbols; the
// embedded kernel_model/ images for the symbols every variant must have),
// the boot hand-over, and programs whose syscalls go through the modeled
// kernel: results, pt_regs layout on the kernel stack, and how the kernel
// returns to user mode.

#include <gtest/gtest.h>

#include "kernel_util.h"

namespace {

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
    EXPECT_NE(parse_err("dfe6450,").find("empty"), std::string::npos);
    EXPECT_NE(parse_err(",dfe6450").find("empty"), std::string::npos);
    EXPECT_NE(parse_err("dfe6450,,fa69714").find("empty"), std::string::npos);
}

// The three commits of the series that change no code path alone are
// accepted (issue 13 item 2: they were refused, so the series could not be
// walked in order): they add no toggle, and the note says why.
TEST(KernelPatches, TheWholeSeriesIsAcceptedInOrder)
{
    EXPECT_EQ(parse_ok("1bd21c6c"), ES_CONV_V416);
    EXPECT_EQ(parse_ok("7303e30e"), ES_CONV_V416);
    EXPECT_EQ(parse_ok("f8781c4a2263"), ES_CONV_V416);
    EXPECT_EQ(parse_ok("dfe6450,1bd21c6"), ES_PATCH_DFE64506);
    // walking the series: each prefix of it, in merge order
    const char *order[] = {"dfe64506", "1bd21c6c", "fa697140", "7303e30e",
                           "ebeb8c82", "f8781c4a", "6dc936f1"};
    const unsigned want[] = {1, 1, 3, 3, 7, 7, 15};
    std::string list;
    for (int k = 0; k < ES_SERIES_LEN; k++) {
        list += (k ? "," : "") + std::string(order[k]);
        unsigned out = 0, named = 0;
        char err[200] = "";
        ASSERT_EQ(es_patches_parse_series(list.c_str(), &out, &named, err, sizeof err), 0)
            << list << ": " << err;
        EXPECT_EQ(out, want[k]) << list;
        EXPECT_EQ(named, (2u << k) - 1) << list;
    }
}

TEST(KernelPatches, SeriesTableHasEveryCommitOnce)
{
    unsigned bits = 0;
    int toggles = 0;
    for (int k = 0; k < ES_SERIES_LEN; k++) {
        const es_series_commit *c = es_series(k);
        ASSERT_NE(c, nullptr);
        EXPECT_EQ(strlen(c->id), 40u);
        EXPECT_NE(c->subject[0], 0);
        EXPECT_EQ(bits & c->bit, 0u) << c->id;
        bits |= c->bit;
        toggles += c->bit != 0;
        EXPECT_EQ(c->alone == nullptr, c->bit != 0) << c->id;
        unsigned out = 0xdead;
        char err[100];
        ASSERT_EQ(es_patches_parse(c->id, &out, err, sizeof err), 0) << err;
        EXPECT_EQ(out, c->bit);
    }
    EXPECT_EQ(es_series(ES_SERIES_LEN), nullptr);
    EXPECT_EQ(toggles, ES_NPATCHES);
    EXPECT_EQ(bits, ES_CONV_V417);
}

TEST(KernelPatches, NoteNamesTheInertCommitsAndTheKernel)
{
    char note[600];
    unsigned out = 0, named = 0;
    char err[200];
    ASSERT_EQ(es_patches_parse_series("dfe6450,fa69714", &out, &named, err, sizeof err), 0);
    es_patches_note(named, out, note, sizeof note);
    EXPECT_STREQ(note, "");
    ASSERT_EQ(es_patches_parse_series("dfe6450,1bd21c6", &out, &named, err, sizeof err), 0);
    es_patches_note(named, out, note, sizeof note);
    std::string n = note;
    EXPECT_EQ(n.rfind("1bd21c6c21e8 (generic", 0), 0u) << n;
    EXPECT_NE(n.find("it changes no code path on its own; the guest kernel is v4.16+dfe64506"),
              std::string::npos)
        << n;
    EXPECT_EQ(n.find('\n'), std::string::npos) << n;
    ASSERT_EQ(es_patches_parse_series("7303e30,f8781c4", &out, &named, err, sizeof err), 0);
    es_patches_note(named, out, note, sizeof note);
    n = note;
    EXPECT_NE(n.find("7303e30ec1d8 ("), std::string::npos) << n;
    EXPECT_NE(n.find("; f8781c4a2263 ("), std::string::npos) << n;
    EXPECT_NE(n.find("they change no code path on their own; the guest kernel is v4.16"),
              std::string::npos)
        << n;
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

TEST(KernelPatches, ErrorsListTheTablesCommits)
{
    // the list of commits in an error comes from the table parsed against;
    // a commit that is no toggle (bit 0) is accepted and adds nothing
    const char *ids[] = {"abcdef0123", "abcdef0456", "1234567890"};
    const unsigned bits[] = {1, 0, 4};
    unsigned out = 0;
    char err[200] = "";
    EXPECT_EQ(es_patches_parse_ids("9999999", ids, bits, 3, &out, err, sizeof err), -1);
    EXPECT_STREQ(err, "patch '9999999' is not in the series (abcdef0123, abcdef0456, 1234567890)");
    EXPECT_EQ(es_patches_parse_ids("abcdef04,1234567", ids, bits, 3, &out, err, sizeof err), 0);
    EXPECT_EQ(out, 4u);
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
// (Long on purpose: one corruption per block, in the order the loader checks
// the image, so a failure points at the check that missed it.)
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

} // namespace
