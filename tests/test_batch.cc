// What a batch of machines made one after another shares (issue 18): the
// kernel images parsed once (es_kimages) and the decode cache passed on
// (es_spares).  Sharing must change nothing a machine does: the same
// symbols, the same messages, the same exposure results as machines made
// alone; a passed-on decode cache is all zero, as a new one.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include "exposure.h"
#include "kernel_util.h" // user_elf, es_load_elf_mem, es_start_process
#include "mitigations.h"

namespace {

struct M {
    es_machine *m;
    explicit M(es_spares *s = nullptr) : m(es_machine_new_spared(64ull << 20, s)) {}
    ~M() { es_machine_free(m); }
};

// Every symbol of a's kernel, by address and by name, is b's.
void expect_same_symbols(es_machine *a, es_machine *b)
{
    ASSERT_EQ(es_kernel_nsyms(a), es_kernel_nsyms(b));
    ASSERT_GT(es_kernel_nsyms(a), 100u);
    for (size_t i = 0; i < es_kernel_nsyms(a); i++) {
        uint64_t aa = 0, as = 0, ba = 0, bs = 0;
        std::string an = es_kernel_sym_at(a, i, &aa, &as);
        std::string bn = es_kernel_sym_at(b, i, &ba, &bs);
        ASSERT_EQ(an, bn) << i;
        ASSERT_EQ(aa, ba) << an;
        ASSERT_EQ(as, bs) << an;
        ASSERT_EQ(es_kernel_sym(a, an.c_str()), es_kernel_sym(b, an.c_str())) << an;
        uint64_t ao = 1, bo = 2;
        const char *x = es_kernel_addr2sym(a, aa + 1, &ao), *y = es_kernel_addr2sym(b, aa + 1, &bo);
        ASSERT_STREQ(x, y) << an;
        ASSERT_EQ(ao, bo) << an;
    }
}

TEST(ExposureBatch, SharedImagesHaveTheSymbolsOfOwnOnes)
{
    es_kimages *c = es_kimages_new(nullptr);
    ASSERT_NE(c, nullptr);
    for (unsigned patches : {ES_CONV_V416, ES_CONV_V417}) {
        M own;
        ASSERT_EQ(es_kernel_load(own.m, patches), 0) << own.m->message;
        // the first shared load parses, the second takes the parse
        for (int round = 0; round < 2; round++) {
            M shared;
            ASSERT_EQ(es_kernel_load_shared(shared.m, c, patches), 0) << shared.m->message;
            EXPECT_EQ(es_kernel_patches(shared.m), es_kernel_patches(own.m));
            expect_same_symbols(own.m, shared.m);
            // the same image bytes in guest memory
            uint64_t a = es_kernel_sym(own.m, "startup_64");
            uint8_t x[256], y[256];
            ASSERT_EQ(es_kernel_read(own.m, a, x, sizeof x), 0);
            ASSERT_EQ(es_kernel_read(shared.m, a, y, sizeof y), 0);
            EXPECT_EQ(memcmp(x, y, sizeof x), 0);
        }
    }
    es_kimages_free(c);
}

TEST(ExposureBatch, SharedLoadsGiveTheMessagesOfOwnOnes)
{
    es_kimages *c = es_kimages_new(nullptr);
    ASSERT_NE(c, nullptr);
    M a, b;
    EXPECT_EQ(es_kernel_load(a.m, 16), -1);
    EXPECT_EQ(es_kernel_load_shared(b.m, c, 16), -1);
    EXPECT_STREQ(a.m->message, b.m->message);
    EXPECT_EQ(b.m->kernel, nullptr);
    es_kimages_free(c);
    M d;
    EXPECT_EQ(es_kernel_load_shared(d.m, nullptr, ES_CONV_V417), 0) << "NULL: es_kernel_load";
}

// A tree's image file, read once: the same kernel and messages as
// es_kernel_load_dir.
TEST(ExposureBatch, SharedImagesOfAKernelTree)
{
    char dir[] = "/tmp/es_batch_XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    std::string build = std::string(dir) + "/build";
    ASSERT_EQ(mkdir(build.c_str(), 0755), 0);
    size_t size = 0;
    const uint8_t *img = es_kernel_image(ES_CONV_V417, &size);
    ASSERT_NE(img, nullptr);
    std::string path = build + "/kernel-p15.elf";
    FILE *f = fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(fwrite(img, 1, size, f), size);
    fclose(f);

    es_kimages *c = es_kimages_new(dir);
    ASSERT_NE(c, nullptr);
    {
        M own, s1, s2;
        ASSERT_EQ(es_kernel_load_dir(own.m, dir, ES_CONV_V417), 0) << own.m->message;
        ASSERT_EQ(es_kernel_load_shared(s1.m, c, ES_CONV_V417), 0) << s1.m->message;
        unlink(path.c_str()); // read once: the second machine needs no file
        ASSERT_EQ(es_kernel_load_shared(s2.m, c, ES_CONV_V417), 0) << s2.m->message;
        expect_same_symbols(own.m, s2.m);
    }
    {
        M own, shared;
        EXPECT_EQ(es_kernel_load_dir(own.m, dir, ES_CONV_V416), -1);
        EXPECT_EQ(es_kernel_load_shared(shared.m, c, ES_CONV_V416), -1);
        EXPECT_STREQ(own.m->message, shared.m->message);
        EXPECT_NE(std::string(shared.m->message).find("no such image"), std::string::npos)
            << shared.m->message;
    }
    es_kimages_free(c);
    rmdir(build.c_str());
    rmdir(dir);
}

// A machine's decode cache, passed on, is all zero again; the next machine
// takes it, and one made while it is taken makes its own.
TEST(ExposureBatch, PassedOnDecodeCacheIsClear)
{
    es_spares *s = es_spares_new();
    ASSERT_NE(s, nullptr);
    es_dentry *cache = nullptr;
    {
        M a(s);
        std::vector<uint8_t> code(64, 0x90);                       // nops
        code.insert(code.end(), {0x48, 0x83, 0xc0, 0x01, 0xeb, 0xba}); // add rax, 1; jmp back
        auto elf = user_elf(code);
        es_image img{};
        ASSERT_EQ(es_load_elf_mem(a.m, elf.data(), elf.size(), &img), 0) << a.m->message;
        char arg0[] = "prog";
        char *argv[] = {arg0, nullptr};
        char *envp[] = {nullptr};
        ASSERT_EQ(es_start_process(a.m, &img, 1, argv, envp), 0) << a.m->message;
        for (int i = 0; i < 500; i++)
            ASSERT_EQ(es_step(a.m), ES_OK) << a.m->message;
        EXPECT_EQ(a.m->decodes, 66u);
        EXPECT_EQ(a.m->gpr[ES_RAX], 7u);
        cache = a.m->dcache;
    }
    {
        M b(s), c(s);
        EXPECT_EQ(b.m->dcache, cache) << "the spare is taken";
        EXPECT_NE(c.m->dcache, cache);
        const uint8_t *p = (const uint8_t *)b.m->dcache;
        size_t n = sizeof(es_dentry) << ES_DCACHE_BITS, nonzero = 0;
        for (size_t i = 0; i < n; i++)
            nonzero += p[i] != 0;
        EXPECT_EQ(nonzero, 0u);
    }
    es_spares_free(s);
}

// A freed machine's arenas of guest frames go to the spares all zero
// again: the next machine gets the same host memory (its pages already
// backed) and reads zeros in every frame, those the first one wrote and
// those it never touched.
TEST(ExposureBatch, PassedOnArenasAreClear)
{
    es_spares *s = es_spares_new();
    ASSERT_NE(s, nullptr);
    const uint64_t pas[] = {0x1000, 0x5000, 0x1ff000, 0x200000 + 0x3000};
    std::set<const uint8_t *> arenas_a, arenas_b; // host address of each 2 MiB arena
    {
        M a(s);
        for (uint64_t pa : pas) {
            uint8_t *h = es_phys(a.m, pa);
            ASSERT_NE(h, nullptr) << pa;
            memset(h, 0xa5, 4096);
            arenas_a.insert(h - (pa & 0x1fffff));
        }
        uint64_t pfn = es_frame_alloc(a.m); // through the allocator too
        ASSERT_NE(pfn, 0u);
        memset(es_phys(a.m, pfn << 12), 0x5a, 4096);
    }
    {
        M b(s);
        for (uint64_t pa : pas) {
            const uint8_t *h = es_phys(b.m, pa);
            ASSERT_NE(h, nullptr);
            arenas_b.insert(h - (pa & 0x1fffff));
        }
        EXPECT_EQ(arenas_a.size(), 2u);
        EXPECT_EQ(arenas_a, arenas_b) << "the arenas were not passed on";
        // every frame of the first two arenas reads zero
        for (uint64_t pa = 0x1000; pa < 0x400000; pa += 4096) {
            const uint8_t *h = es_phys(b.m, pa);
            ASSERT_NE(h, nullptr) << pa;
            size_t nonzero = 0;
            for (size_t k = 0; k < 4096; k++)
                nonzero += h[k] != 0;
            ASSERT_EQ(nonzero, 0u) << "frame at 0x" << std::hex << pa;
        }
    }
    es_spares_free(s);
}

std::string json(const es_exposure &e)
{
    char *buf = nullptr;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    es_exposure_print_json(f, &e);
    fclose(f);
    std::string s(buf, n);
    free(buf);
    return s;
}

// The same exposure, case by case, alone and in a batch (the batch's
// machines one after another, the two images alternating).
TEST(ExposureBatch, CasesInABatchAreTheCasesAlone)
{
    es_exposure_batch batch = {es_kimages_new(nullptr), es_spares_new()};
    ASSERT_NE(batch.images, nullptr);
    ASSERT_NE(batch.spares, nullptr);
    es_exposure_opts opts = {};
    opts.mitigations = ES_MIT_DEFAULT;
    for (int entry : {ES_ENTRY_SYSCALL64, ES_ENTRY_INT80, ES_ENTRY_X32})
        for (const char *name : {"read", "write", "getpid"})
            for (unsigned patches : {ES_CONV_V416, ES_CONV_V417}) {
                SCOPED_TRACE(std::string(es_entry_name(entry)) + " " + name + " " +
                             std::to_string(patches));
                es_exposure alone, in_batch;
                int a = es_exposure_run_opts(patches, entry, -1, name, &opts, &alone);
                int b = es_exposure_run_batch(patches, entry, -1, name, &opts, &batch, &in_batch);
                ASSERT_EQ(a, 0) << alone.error;
                ASSERT_EQ(b, 0) << in_batch.error;
                EXPECT_EQ(json(alone), json(in_batch));
                EXPECT_GT(json(alone).size(), 100u);
            }
    es_spares_free(batch.spares);
    es_kimages_free(batch.images);
}

// The frame table grows into the room es_machine_new left, and past it.
TEST(ExposureBatch, FrameTableGrowsPastItsRoom)
{
    M a;
    uint64_t n = a.m->nframes;
    ASSERT_EQ(es_kernel_grow_frames(a.m, 100), 0);
    EXPECT_EQ(a.m->nframes, n + 100);
    ASSERT_EQ(es_kernel_grow_frames(a.m, 5000), 0);
    EXPECT_EQ(a.m->nframes, n + 5100);
    EXPECT_GE(a.m->frames_room, a.m->nframes);
    for (uint64_t p = n; p < a.m->nframes; p++)
        ASSERT_EQ(a.m->frames[p].host, nullptr) << p;
}

} // namespace
