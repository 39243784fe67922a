// Host services, memory: brk, mmap/munmap/mremap/madvise of anonymous and
// file memory, the mapping-count limit and what untouched memory costs
// (split from test_host.cc; the fixture is tests/shim/host_fixture.h).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <string>
#include <vector>

#include "es_shim.h"
#include "es_syscall_32.h"
#include "es_syscall_64.h"
#include "es_syscall_names.h"
#include "host_fixture.h"
#include "host.h"
#include "host_int.h"
#include "machine.h"
#include "mem.h"
#include "vm.h"

namespace {

TEST_P(HostTest, BrkGrowsAndShrinks)
{
    const uint64_t start = 0x10000123;
    es_host_set_brk(m, start);
    EXPECT_EQ(c64(ES_NR64_brk, 0), (int64_t)start);
    EXPECT_EQ(c64(ES_NR64_brk, start - 0x1000), (int64_t)start); // below the start: no change
    EXPECT_EQ(c64(ES_NR64_brk, start + 0x5000), (int64_t)(start + 0x5000));
    EXPECT_EQ(es_host_brk(m), start + 0x5000);
    uint64_t v = 0x1122334455667788ull;
    EXPECT_EQ(es_write(m, start + 0x4000, &v, 8), 0); // user write into the new break
    EXPECT_EQ(c64(ES_NR64_brk, start + 0x100), (int64_t)(start + 0x100));
    EXPECT_NE(es_read(m, start + 0x4000, &v, 8), 0); // shrunk away
    EXPECT_EQ(m->fault.vector, ES_VEC_PF);
    // it stops at an existing mapping (with a guard page)
    ASSERT_EQ(es_vm_map(m, 0x10010000, 0x1000, ES_PROT_R), 0);
    EXPECT_EQ(c64(ES_NR64_brk, 0x10010000), (int64_t)(start + 0x100));
}

// Issue 12, item 4: a request the kernel cannot satisfy leaves the break
// where it was (brk(-1) used to wrap its page round-up to 0 and unmap the
// program); every length round-up that wraps is refused as Linux does.
TEST_P(HostTest, BrkAndLengthOverflowsAreRefused)
{
    const uint64_t start = 0x10000000;
    es_host_set_brk(m, start);
    ASSERT_EQ(es_vm_map(m, 0x400000, 0x1000, ES_PROT_R | ES_PROT_W), 0); // "the program"
    uint64_t v = 7;
    ASSERT_EQ(es_write(m, 0x400000, &v, 8), 0);
    EXPECT_EQ(c64(ES_NR64_brk, (uint64_t)-1), (int64_t)start);
    EXPECT_EQ(c64(ES_NR64_brk, (uint64_t)-4096), (int64_t)start);
    EXPECT_EQ(c64(ES_NR64_brk, 1ull << 63), (int64_t)start);
    EXPECT_EQ(es_read(m, 0x400000, &v, 8), 0); // still mapped
    EXPECT_EQ(v, 7u);
    EXPECT_EQ(c64(ES_NR64_madvise, 0x400000, (uint64_t)-1, 4), -EINVAL);
    EXPECT_EQ(c64(ES_NR64_munmap, 0x400000, (uint64_t)-1), -EINVAL);
    EXPECT_EQ(c64(ES_NR64_mprotect, 0x400000, (uint64_t)-1, PROT_READ), -ENOMEM);
    EXPECT_EQ(c64(ES_NR64_mremap, 0x400000, 0x1000, (uint64_t)-1, 1), -EINVAL);
    EXPECT_EQ(c64(ES_NR64_mmap, 0, (uint64_t)-1, 3, MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1, 0),
              -ENOMEM);
    EXPECT_EQ(c64(ES_NR64_mmap, (uint64_t)-4096, 0x2000, 3, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                  (uint64_t)-1, 0),
              -ENOMEM);
    EXPECT_EQ(es_read(m, 0x400000, &v, 8), 0);
}

// Issue 12, item 5: vm.max_map_count (65530) holds, with ENOMEM, and
// mapping up to it costs about linear time.
TEST_P(HostTest, MappingCountStopsAtMaxMapCount)
{
    int64_t big = c64(ES_NR64_mmap, 0, 0x3000, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1, 0);
    ASSERT_GT(big, 0);
    int64_t r = 0;
    int n = 0;
    std::clock_t t0 = std::clock(); // CPU time: the machine may be loaded
    for (; n < 70000; n++) { // alternate protections so no two merge
        r = c64(ES_NR64_mmap, 0, 0x1000, n & 1 ? PROT_READ : PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1, 0);
        if (r < 0)
            break;
    }
    double secs = double(std::clock() - t0) / CLOCKS_PER_SEC;
    EXPECT_EQ(r, -ENOMEM);
    EXPECT_GE(n, 65000);
    EXPECT_LE(n, 65531);
    EXPECT_LT(secs, 2.0);
    // at the limit, splitting a mapping in two is refused as well
    EXPECT_EQ(c64(ES_NR64_munmap, big + 0x1000, 0x1000), -ENOMEM);
    EXPECT_EQ(c64(ES_NR64_munmap, big, 0x3000), 0);
}

// Issue 12, item 6: reading never-written memory maps one shared zero
// frame (Linux's zero page), so it costs no guest memory; the first write
// gets the page its own frame.
TEST_P(HostTest, ReadingUntouchedMemoryCostsNoFrames)
{
    const uint64_t len = 2ull << 30; // twice the default 1 GiB cap
    int64_t a = c64(ES_NR64_mmap, 0, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                    (uint64_t)-1, 0);
    ASSERT_GT(a, 0);
    uint64_t before = m->frames_used, z = 1;
    for (uint64_t o = 0; o < len; o += 0x1000) {
        ASSERT_EQ(es_read(m, a + o, &z, 8), 0) << std::hex << o;
        ASSERT_EQ(z, 0u);
    }
    EXPECT_LT(m->frames_used - before, 2048u); // page tables and one zero frame
    uint64_t v = 0x55;
    EXPECT_EQ(es_write(m, a + 0x5000, &v, 8), 0);
    EXPECT_EQ(es_read(m, a + 0x5000, &z, 8), 0);
    EXPECT_EQ(z, 0x55u);
    EXPECT_EQ(es_read(m, a + 0x6000, &z, 8), 0); // its neighbour still reads zero
    EXPECT_EQ(z, 0u);
    // the kernel-side copy (write(2) of a fresh buffer) reads zeros too
    EXPECT_EQ(c64(ES_NR64_write, 1, a + 0x100000, 0x8000), 0x8000);
    EXPECT_LT(m->frames_used - before, 2100u);
    // mprotect does not make the shared zero frame writable
    EXPECT_EQ(c64(ES_NR64_mprotect, a, 0x10000, PROT_READ), 0);
    EXPECT_EQ(c64(ES_NR64_mprotect, a, 0x10000, PROT_READ | PROT_WRITE), 0);
    EXPECT_EQ(es_write(m, a + 0x7000, &v, 8), 0);
    EXPECT_EQ(es_read(m, a + 0x8000, &z, 8), 0);
    EXPECT_EQ(z, 0u);
}

// Issue 12, item 7: MADV_DONTNEED and mremap cost what is present, not
// the size of the range (16 TiB took 15 s, a 64 TiB mremap 79 s).
TEST_P(HostTest, HugeMadviseAndMremapAreFast)
{
    const uint64_t big = 16ull << 40;
    std::clock_t t0 = std::clock(); // CPU time: the machine may be loaded
    int64_t a = c64(ES_NR64_mmap, 0, big, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, (uint64_t)-1, 0);
    ASSERT_GT(a, 0);
    uint64_t v = 0x77, z = 1;
    ASSERT_EQ(es_write(m, a + 0x123000, &v, 8), 0);
    EXPECT_EQ(c64(ES_NR64_madvise, a, big, 4 /* DONTNEED */), 0);
    EXPECT_EQ(es_read(m, a + 0x123000, &z, 8), 0);
    EXPECT_EQ(z, 0u);
    ASSERT_EQ(es_write(m, a + big - 0x1000, &v, 8), 0);
    int64_t b = c64(ES_NR64_mremap, a, big, 2 * big, 1 /* MAYMOVE */);
    ASSERT_GT(b, 0);
    EXPECT_EQ(es_read(m, b + big - 0x1000, &z, 8), 0);
    EXPECT_EQ(z, 0x77u);
    double secs = double(std::clock() - t0) / CLOCKS_PER_SEC;
    EXPECT_LT(secs, 2.0);
}

TEST_P(HostTest, MmapAnonymousAndMunmap)
{
    int64_t a = c64(ES_NR64_mmap, 0, 10000, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                    (uint64_t)-1, 0);
    ASSERT_GT(a, 0);
    EXPECT_EQ(a & 0xfff, 0);
    uint64_t v = 42, z = 1;
    EXPECT_EQ(es_read(m, a + 0x2000, &z, 8), 0);
    EXPECT_EQ(z, 0u);
    EXPECT_EQ(es_write(m, a + 0x2000, &v, 8), 0);
    EXPECT_EQ(c64(ES_NR64_mprotect, a, 0x1000, PROT_READ), 0);
    EXPECT_NE(es_write(m, a, &v, 8), 0);
    EXPECT_EQ(c64(ES_NR64_munmap, a, 10000), 0);
    EXPECT_NE(es_read(m, a + 0x2000, &v, 8), 0);
    EXPECT_EQ(m->fault.vector, ES_VEC_PF);
    EXPECT_EQ(c64(ES_NR64_munmap, a + 1, 10), -EINVAL);
    EXPECT_EQ(c64(ES_NR64_mmap, 0, 0, 3, MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1, 0), -EINVAL);
    // MAP_FIXED_NOREPLACE refuses an occupied range; MAP_FIXED replaces it
    int64_t b = c64(ES_NR64_mmap, 0, 0x2000, 3, MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1, 0);
    ASSERT_GT(b, 0);
    EXPECT_EQ(c64(ES_NR64_mmap, b, 0x1000, 3, MAP_PRIVATE | MAP_ANONYMOUS | 0x100000, (uint64_t)-1, 0),
              -EEXIST);
    EXPECT_EQ(c64(ES_NR64_mmap, b, 0x1000, 3, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, (uint64_t)-1, 0), b);
    // MAP_32BIT: below 2 GiB
    int64_t lo = c64(ES_NR64_mmap, 0, 0x3000, 3, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, (uint64_t)-1, 0);
    EXPECT_GT(lo, 0);
    EXPECT_LE(lo + 0x3000, 0x80000000ll);
    // i386 mmap2 and old mmap (#90, a struct of six u32), in a 32-bit layout
    // as the loader sets it for i386 processes
    es_vm_set_layout(m, 0xffffe000ull, 0xf7fff000ull);
    int64_t c = c32(ES_NR32_mmap2, 0, 0x1000, 3, MAP_PRIVATE | MAP_ANONYMOUS, (uint32_t)-1, 0);
    ASSERT_GT(c, 0);
    EXPECT_LT(c, 0x100000000ll);
    uint32_t arg[6] = {0, 0x1000, 3, MAP_PRIVATE | MAP_ANONYMOUS, (uint32_t)-1, 0};
    ASSERT_EQ(es_copy_to_guest(m, BUF, arg, sizeof arg), 0);
    int64_t d = c32(ES_NR32_mmap, BUF);
    EXPECT_GT(d, 0);
    EXPECT_LT(d, 0x100000000ll);
    // mremap: grow in place or move, keeping contents
    int64_t e = c64(ES_NR64_mmap, 0, 0x1000, 3, MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1, 0);
    ASSERT_GT(e, 0);
    v = 0xabcdef;
    ASSERT_EQ(es_write(m, e + 8, &v, 8), 0);
    ASSERT_EQ(es_vm_map(m, e + 0x1000, 0x1000, ES_PROT_R), 0); // blocks growth in place
    EXPECT_EQ(c64(ES_NR64_mremap, e, 0x1000, 0x3000, 0), -ENOMEM);
    int64_t f = c64(ES_NR64_mremap, e, 0x1000, 0x3000, 1 /* MAYMOVE */);
    ASSERT_GT(f, 0);
    EXPECT_NE(f, e);
    z = 0;
    EXPECT_EQ(es_read(m, f + 8, &z, 8), 0);
    EXPECT_EQ(z, 0xabcdefu);
    EXPECT_NE(es_read(m, e + 8, &z, 8), 0);
}

TEST_P(HostTest, MmapOfAFile)
{
    int64_t fd = open_ro("/hello.txt");
    ASSERT_GE(fd, 3);
    int64_t a = c64(ES_NR64_mmap, 0, 0x2000, PROT_READ, MAP_PRIVATE, fd, 0);
    ASSERT_GT(a, 0);
    char b[16] = {};
    EXPECT_EQ(es_read(m, a, b, 12), 0);
    EXPECT_STREQ(b, "hello world\n");
    uint64_t z = 1;
    EXPECT_EQ(es_read(m, a + 0xff8, &z, 8), 0); // past EOF in the last page: zero
    EXPECT_EQ(z, 0u);
    // the page after it lies wholly past EOF: SIGBUS, as Linux
    EXPECT_NE(es_read(m, a + 0x1000, &z, 8), 0);
    EXPECT_EQ(m->fault.vector, ES_VEC_PF);
    EXPECT_TRUE(m->fault.bus);
    EXPECT_NE(es_write(m, a, b, 1), 0); // PROT_READ
    EXPECT_FALSE(m->fault.bus);
    // a private writable copy at an offset: offset 4096 is past EOF too
    int64_t c = c64(ES_NR64_mmap, 0, 0x1000, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0x1000);
    ASSERT_GT(c, 0);
    EXPECT_NE(es_read(m, c, &z, 8), 0);
    EXPECT_TRUE(m->fault.bus);
    EXPECT_EQ(c64(ES_NR64_mmap, 0, 0x1000, 3, MAP_SHARED, fd, 0), -EINVAL);
    EXPECT_GT(c64(ES_NR64_mmap, 0, 0x1000, PROT_READ, MAP_SHARED, fd, 0), 0);
    EXPECT_EQ(c64(ES_NR64_mmap, 0, 0x1000, PROT_READ, MAP_PRIVATE, fd, 1), -EINVAL);
    EXPECT_EQ(c64(ES_NR64_mmap, 0, 0x1000, PROT_READ, MAP_PRIVATE, 99, 0), -EBADF);
    // i386 mmap2 counts the offset in pages
    es_vm_set_layout(m, 0xffffe000ull, 0xf7fff000ull);
    int64_t d = c32(ES_NR32_mmap2, 0, 0x1000, PROT_READ, MAP_PRIVATE, fd, 0);
    ASSERT_GT(d, 0);
    memset(b, 0, sizeof b);
    EXPECT_EQ(es_read(m, d + 6, b, 5), 0);
    EXPECT_STREQ(b, "world");
}

// ---- process ----

INSTANTIATE_TEST_SUITE_P(Resolution, HostTest, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool> &i) {
                             return std::string(i.param ? "Openat2" : "Walk");
                         });

} // namespace
