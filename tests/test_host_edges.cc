// Host services where Linux's behaviour has sharp edges (issue 12 items 7
// and 8): getdents into a buffer that faults part-way, linkat of an open
// file (AT_EMPTY_PATH, O_TMPFILE), MADV_DONTNEED on file mappings, and
// SIGBUS for pages of a file mapping past the end of the file.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "es_shim.h"
#include "es_syscall_32.h"
#include "es_syscall_64.h"
#include "es_syscall_names.h"
#include "host_fixture.h"
#include "vm.h"

namespace {

const uint64_t PG = 0x1000;
const int NFILES = 30;

struct HostEdgeTest : HostTest {
    // /many: NFILES files with long names (64-byte linux_dirent64 records)
    void make_many()
    {
        ASSERT_EQ(mkdir((root + "/many").c_str(), 0755), 0);
        for (int i = 0; i < NFILES; i++)
            write_file(root + "/many/" + name(i), "x");
    }
    static std::string name(int i)
    {
        char b[64];
        snprintf(b, sizeof b, "entry_%02d_with_a_rather_long_name_padding", i);
        return b;
    }
    // A page of memory with an unmapped page after it: the hole's address
    // (0 when the calls failed).
    uint64_t hole_after_page(bool i386)
    {
        const uint64_t anon = MAP_PRIVATE | MAP_ANONYMOUS, rw = PROT_READ | PROT_WRITE;
        int64_t a = i386 ? c32(ES_NR32_mmap2, 0, 2 * PG, rw, anon, (uint32_t)-1, 0)
                         : c64(ES_NR64_mmap, 0, 2 * PG, rw, anon, (uint64_t)-1, 0);
        if (a <= 0)
            return 0;
        int64_t r = i386 ? c32(ES_NR32_munmap, a + PG, PG) : c64(ES_NR64_munmap, a + PG, PG);
        return r ? 0 : (uint64_t)a + PG;
    }
    static std::vector<std::string> all_names()
    {
        std::vector<std::string> v = {".", ".."};
        for (int i = 0; i < NFILES; i++)
            v.push_back(name(i));
        std::sort(v.begin(), v.end());
        return v;
    }
};

// One directory-listing call: its ABI and number and where its records
// keep d_reclen and the name.
struct Dents {
    bool i386;
    uint64_t nr;
    size_t reclen_at, name_at;
};

// Every name of a listing held at va (n bytes), checking the records
// fill exactly n bytes; the length of the first record in *first.
std::vector<std::string> parse(HostEdgeTest &t, const Dents &k, uint64_t va, int64_t n)
{
    std::vector<std::string> v;
    auto b = t.peek(va, (size_t)n);
    int64_t o = 0;
    while (o < n) {
        uint16_t rl;
        memcpy(&rl, &b[(size_t)o + k.reclen_at], 2);
        EXPECT_GT(rl, 0);
        if (!rl)
            break;
        v.push_back((const char *)&b[(size_t)o + k.name_at]);
        o += rl;
    }
    EXPECT_EQ(o, n);
    return v;
}

// A listing call into a buffer whose first `good` bytes are mapped and the
// rest is not: Linux returns the whole records that fit in the good part
// (EFAULT only when none does), and the next call goes on with the first
// record not returned.  One more listing after a fully bad buffer starts
// where the directory was, losing nothing.
void faulting_listing(HostEdgeTest &t, const Dents &k, uint64_t edge, uint64_t good_buf)
{
    auto call = [&](uint64_t nr, uint64_t a0, uint64_t a1, uint64_t a2) {
        return k.i386 ? t.c32(nr, a0, a1, a2) : t.c64(nr, a0, a1, a2);
    };
    uint64_t open_nr = k.i386 ? ES_NR32_open : ES_NR64_open;
    int64_t d = call(open_nr, t.str("/many"), O_RDONLY | O_DIRECTORY, 0);
    ASSERT_GE(d, 3);
    const uint64_t good = 200;
    int64_t r = call(k.nr, d, edge - good, 4096);
    ASSERT_GT(r, 0) << "entries that fit before the fault are returned";
    ASSERT_LE(r, (int64_t)good);
    std::vector<std::string> seen = parse(t, k, edge - good, r);
    bool first = true;
    for (;;) {
        int64_t n = call(k.nr, d, good_buf, 4096);
        ASSERT_GE(n, 0);
        if (!n)
            break;
        std::vector<std::string> more = parse(t, k, good_buf, n);
        if (first) { // the record that did not fit is the next one
            uint16_t rl;
            auto b = t.peek(good_buf, 2 + k.reclen_at);
            memcpy(&rl, &b[k.reclen_at], 2);
            EXPECT_GT(rl, good - (uint64_t)r);
            first = false;
        }
        seen.insert(seen.end(), more.begin(), more.end());
    }
    std::sort(seen.begin(), seen.end());
    EXPECT_EQ(seen, HostEdgeTest::all_names()) << "no record skipped or repeated";

    int64_t d2 = call(open_nr, t.str("/many"), O_RDONLY | O_DIRECTORY, 0);
    ASSERT_GE(d2, 3);
    EXPECT_EQ(call(k.nr, d2, edge, 4096), -EFAULT);
    seen.clear();
    for (int64_t n; (n = call(k.nr, d2, good_buf, 4096)) > 0;) {
        auto more = parse(t, k, good_buf, n);
        seen.insert(seen.end(), more.begin(), more.end());
    }
    std::sort(seen.begin(), seen.end());
    EXPECT_EQ(seen, HostEdgeTest::all_names());
}

TEST_P(HostEdgeTest, GetdentsIntoAFaultingBufferKeepsWhatWasCopied)
{
    make_many();
    uint64_t edge = hole_after_page(false);
    ASSERT_NE(edge, 0u);
    // struct linux_dirent64: reclen @16, name @19; linux_dirent: @16, @18
    faulting_listing(*this, {false, ES_NR64_getdents64, 16, 19}, edge, BUF);
    faulting_listing(*this, {false, ES_NR64_getdents, 16, 18}, edge, BUF);
}

TEST_P(HostEdgeTest, GetdentsIntoAFaultingBufferKeepsWhatWasCopied32)
{
    make_many();
    es_vm_set_layout(m, 0xffffe000ull, 0xf7fff000ull);
    uint64_t edge = hole_after_page(true);
    ASSERT_NE(edge, 0u);
    // i386 getdents64 (small d_off cookies) and compat_linux_dirent (@8, @10)
    faulting_listing(*this, {true, ES_NR32_getdents64, 16, 19}, edge, BUF);
    faulting_listing(*this, {true, ES_NR32_getdents, 8, 10}, edge, BUF);
}

// ---- linkat(fd, "", ..., AT_EMPTY_PATH) ----

const uint64_t AT_CWD = (uint64_t)-100;
const int EMPTY_PATH = 0x1000;

TEST_P(HostEdgeTest, LinkatEmptyPathLinksAnOpenFile)
{
    es_host_free(m);
    init(true);
    // an O_TMPFILE file gets its first name
    int64_t t = c64(ES_NR64_open, str("/sub"), O_TMPFILE | O_RDWR, 0600);
    ASSERT_GE(t, 3);
    EXPECT_EQ(c64(ES_NR64_write, t, str("tmp data"), 8), 8);
    EXPECT_EQ(c64(ES_NR64_linkat, t, str(""), AT_CWD, str("/sub/made"), EMPTY_PATH), 0);
    EXPECT_EQ(read_file(root + "/sub/made"), "tmp data");
    // relative to a directory fd, and an existing name is EEXIST
    int64_t dir = c64(ES_NR64_open, str("/sub"), O_RDONLY | O_DIRECTORY);
    ASSERT_GE(dir, 3);
    EXPECT_EQ(c64(ES_NR64_linkat, t, str(""), dir, str("made2"), EMPTY_PATH), 0);
    EXPECT_EQ(c64(ES_NR64_linkat, t, str(""), dir, str("made2"), EMPTY_PATH), -EEXIST);
    EXPECT_EQ(access((root + "/sub/made2").c_str(), F_OK), 0);
    // O_TMPFILE | O_EXCL: never linkable (fs/namei.c vfs_link: ENOENT)
    int64_t x = c64(ES_NR64_open, str("/sub"), O_TMPFILE | O_RDWR | O_EXCL, 0600);
    ASSERT_GE(x, 3);
    EXPECT_EQ(c64(ES_NR64_linkat, x, str(""), AT_CWD, str("/sub/never"), EMPTY_PATH), -ENOENT);
    // an ordinary open file: a second name for the same inode
    int64_t h = open_ro("/hello.txt");
    ASSERT_GE(h, 3);
    EXPECT_EQ(c64(ES_NR64_linkat, h, str(""), AT_CWD, str("/hello2"), EMPTY_PATH), 0);
    struct stat s1, s2;
    ASSERT_EQ(stat((root + "/hello.txt").c_str(), &s1), 0);
    ASSERT_EQ(stat((root + "/hello2").c_str(), &s2), 0);
    EXPECT_EQ(s1.st_ino, s2.st_ino);
    EXPECT_EQ(s2.st_nlink, 2u);
    // the new name stays in the root: ".." at the root is the root
    EXPECT_EQ(c64(ES_NR64_linkat, h, str(""), AT_CWD, str("/../../hello3"), EMPTY_PATH), 0);
    EXPECT_EQ(access((root + "/hello3").c_str(), F_OK), 0);
    EXPECT_EQ(access((tmp + "/hello3").c_str(), F_OK), -1);
    EXPECT_EQ(c64(ES_NR64_linkat, h, str(""), AT_CWD, str("/updir/hello6"), EMPTY_PATH), 0);
    EXPECT_EQ(access((root + "/hello6").c_str(), F_OK), 0);
    EXPECT_EQ(access((tmp + "/hello6").c_str(), F_OK), -1);
    // directories are never linked; the cwd is one
    EXPECT_EQ(c64(ES_NR64_linkat, dir, str(""), AT_CWD, str("/d2"), EMPTY_PATH), -EPERM);
    EXPECT_EQ(c64(ES_NR64_linkat, AT_CWD, str(""), AT_CWD, str("/d3"), EMPTY_PATH), -EPERM);
    EXPECT_EQ(c64(ES_NR64_linkat, 77, str(""), AT_CWD, str("/d4"), EMPTY_PATH), -EBADF);
    // without AT_EMPTY_PATH an empty old path is ENOENT
    EXPECT_EQ(c64(ES_NR64_linkat, h, str(""), AT_CWD, str("/hello4"), 0), -ENOENT);
    // the guest's stdin came from outside the root (/dev/null here): it
    // gets no name inside it
    EXPECT_EQ(c64(ES_NR64_linkat, 0, str(""), AT_CWD, str("/stdin"), EMPTY_PATH), -EXDEV);
    int64_t d0 = c64(ES_NR64_dup, 0);
    ASSERT_GE(d0, 3);
    EXPECT_EQ(c64(ES_NR64_linkat, d0, str(""), AT_CWD, str("/stdin"), EMPTY_PATH), -EXDEV);
    EXPECT_EQ(access((root + "/stdin").c_str(), F_OK), -1);
    // without --rw: read-only
    es_host_free(m);
    init(false);
    h = open_ro("/hello.txt");
    EXPECT_EQ(c64(ES_NR64_linkat, h, str(""), AT_CWD, str("/hello5"), EMPTY_PATH), -EROFS);
}

// ---- file mappings ----

// A file of `pages` pages: page k is filled with 'a' + k; `tail` more
// bytes of the next letter after them.
void make_pages(HostEdgeTest &t, const std::string &p, int pages, int tail)
{
    std::string s;
    for (int k = 0; k < pages; k++)
        s.append(PG, (char)('a' + k));
    s.append((size_t)tail, (char)('a' + pages));
    HostEdgeTest::write_file(p, s.c_str());
    (void)t;
}

uint8_t byte_at(es_machine *m, uint64_t va)
{
    uint8_t b = 0xee;
    EXPECT_EQ(es_read(m, va, &b, 1), 0) << std::hex << va;
    return b;
}

TEST_P(HostEdgeTest, MadviseDontneedRereadsPrivateFileMappings)
{
    make_pages(*this, root + "/pages.bin", 3, 100);
    int64_t fd = open_ro("/pages.bin");
    ASSERT_GE(fd, 3);
    int64_t a = c64(ES_NR64_mmap, 0, 4 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    ASSERT_GT(a, 0);
    for (int k = 0; k < 4; k++) {
        EXPECT_EQ(byte_at(m, a + k * PG), 'a' + k);
        uint8_t z = 'Z';
        ASSERT_EQ(es_write(m, a + k * PG, &z, 1), 0);
    }
    EXPECT_EQ(byte_at(m, a + 3 * PG + 100), 0); // past EOF in the last page
    // the private copies differ from the file; a protection change in the
    // middle splits the mapping, each part keeping its place in the file
    EXPECT_EQ(c64(ES_NR64_mprotect, a + PG, PG, PROT_READ), 0);
    EXPECT_EQ(c64(ES_NR64_madvise, a, 4 * PG, MADV_DONTNEED), 0);
    for (int k = 0; k < 4; k++)
        EXPECT_EQ(byte_at(m, a + k * PG), 'a' + k) << "page " << k;
    EXPECT_EQ(byte_at(m, a + 3 * PG + 100), 0);
    // what the file holds now, not what it held at mmap (as the page cache)
    int hfd = open((root + "/pages.bin").c_str(), O_WRONLY);
    ASSERT_GE(hfd, 0);
    ASSERT_EQ(pwrite(hfd, "Q", 1, 2 * PG), 1);
    close(hfd);
    EXPECT_EQ(c64(ES_NR64_madvise, a + 2 * PG, PG, MADV_DONTNEED), 0);
    EXPECT_EQ(byte_at(m, a + 2 * PG), 'Q');
    // a mapping at a file offset, moved by mremap, still reads its pages
    int64_t c = c64(ES_NR64_mmap, 0, 2 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, PG);
    ASSERT_GT(c, 0);
    uint8_t z = 'Z';
    ASSERT_EQ(es_write(m, c + PG, &z, 1), 0);
    ASSERT_EQ(es_vm_map(m, c + 2 * PG, PG, ES_PROT_R), 0); // no growth in place
    int64_t e = c64(ES_NR64_mremap, c, 2 * PG, 3 * PG, 1 /* MREMAP_MAYMOVE */);
    ASSERT_GT(e, 0);
    ASSERT_NE(e, c);
    EXPECT_EQ(byte_at(m, e + PG), 'Z'); // the private copy moved with it
    EXPECT_EQ(c64(ES_NR64_madvise, e, 3 * PG, MADV_DONTNEED), 0);
    EXPECT_EQ(byte_at(m, e), 'b');
    EXPECT_EQ(byte_at(m, e + PG), 'Q');
    EXPECT_EQ(byte_at(m, e + 2 * PG), 'd');
    // read-only shared mappings read the file too
    int64_t s = c64(ES_NR64_mmap, 0, PG, PROT_READ, MAP_SHARED, fd, 0);
    ASSERT_GT(s, 0);
    EXPECT_EQ(c64(ES_NR64_madvise, s, PG, MADV_DONTNEED), 0);
    EXPECT_EQ(byte_at(m, s), 'a');
    // anonymous private memory reads zeros again
    int64_t an = c64(ES_NR64_mmap, 0, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                     (uint64_t)-1, 0);
    ASSERT_GT(an, 0);
    ASSERT_EQ(es_write(m, an, &z, 1), 0);
    EXPECT_EQ(c64(ES_NR64_madvise, an, PG, MADV_DONTNEED), 0);
    EXPECT_EQ(byte_at(m, an), 0);
}

// The host fds this process has open.
int open_fds()
{
    int n = 0;
    for (int fd = 0; fd < 4096; fd++)
        n += fcntl(fd, F_GETFD) >= 0;
    return n;
}

TEST_P(HostEdgeTest, FileMappingsHoldOneHostFdPerFile)
{
    make_pages(*this, root + "/pages.bin", 2, 0);
    int64_t fd = open_ro("/pages.bin");
    ASSERT_GE(fd, 3);
    int before = open_fds();
    std::vector<int64_t> maps;
    for (int i = 0; i < 50; i++) {
        maps.push_back(c64(ES_NR64_mmap, 0, 2 * PG, PROT_READ, MAP_PRIVATE, fd, 0));
        ASSERT_GT(maps.back(), 0);
    }
    EXPECT_EQ(open_fds(), before + 1); // one dup for the inode, shared
    // the guest's fd may go: the mappings keep the file
    EXPECT_EQ(c64(ES_NR64_close, fd), 0);
    EXPECT_EQ(byte_at(m, maps[7] + PG), 'b');
    // partial unmaps split mappings; the last one gone closes the file
    for (int64_t a : maps)
        EXPECT_EQ(c64(ES_NR64_munmap, a, PG), 0);
    EXPECT_EQ(open_fds(), before);
    for (int64_t a : maps)
        EXPECT_EQ(c64(ES_NR64_munmap, a + PG, PG), 0);
    EXPECT_EQ(open_fds(), before - 1);
}

// mov rax, [rbx]
const uint8_t LOAD_RBX[] = {0x48, 0x8b, 0x03};

TEST_P(HostEdgeTest, FileMappingPagesPastEofAreSigbus)
{
    int64_t fd = open_ro("/hello.txt"); // 12 bytes
    ASSERT_GE(fd, 3);
    int64_t a = c64(ES_NR64_mmap, 0, 3 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    ASSERT_GT(a, 0);
    EXPECT_EQ(byte_at(m, a), 'h');
    EXPECT_EQ(byte_at(m, a + PG - 1), 0); // the rest of the last page: zeros
    // a load from the page after it: SIGBUS (BUS_ADRERR), as Linux's
    // filemap_fault for a page wholly past i_size
    ASSERT_EQ(est_code(m, LOAD_RBX, sizeof LOAD_RBX), 0);
    m->gpr[ES_RBX] = a + PG + 8;
    EXPECT_EQ(est_run(m, sizeof LOAD_RBX, 10), ES_STOP_FAULT);
    EXPECT_EQ(m->signal, 7);
    EXPECT_EQ(m->fault.vector, ES_VEC_PF);
    EXPECT_EQ(m->fault.addr, (uint64_t)a + PG + 8);
    EXPECT_NE(strstr(m->message, "SIGBUS"), nullptr) << m->message;
    // writes too (the private copy starts as the file's page)
    uint64_t v = 1;
    EXPECT_NE(es_write(m, a + 2 * PG, &v, 8), 0);
    // the kernel's own copies fail with EFAULT instead
    EXPECT_EQ(c64(ES_NR64_write, 1, a + PG, 8), -EFAULT);
    EXPECT_EQ(c64(ES_NR64_read, fd, a + PG, 8), -EFAULT);
    // an unmapped page is still SIGSEGV
    m->stop = ES_STOP_NONE;
    m->signal = 0;
    ASSERT_EQ(est_code(m, LOAD_RBX, sizeof LOAD_RBX), 0);
    m->gpr[ES_RBX] = a + 3 * PG;
    EXPECT_EQ(est_run(m, sizeof LOAD_RBX, 10), ES_STOP_FAULT);
    EXPECT_EQ(m->signal, 11);
    // the file grows: the page has contents now (Linux checks i_size at
    // the fault); and a mapping whose file shrank faults
    std::string big(PG + 5, 'g');
    write_file(root + "/hello.txt", big.c_str());
    EXPECT_EQ(byte_at(m, a + PG), 'g');
    EXPECT_EQ(byte_at(m, a + PG + 5), 0);
    ASSERT_EQ(truncate((root + "/hello.txt").c_str(), 0), 0);
    EXPECT_NE(es_read(m, a + 2 * PG, &v, 8), 0);
    EXPECT_TRUE(m->fault.vector == ES_VEC_PF);
}

INSTANTIATE_TEST_SUITE_P(Resolution, HostEdgeTest, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool> &i) {
                             return std::string(i.param ? "Openat2" : "Walk");
                         });

} // namespace

// ---- ITIMER_REAL in waits (sim/host/timer.c) ----

// A 1 us periodic timer whose SIGALRM is blocked cannot end a wait: a
// 1000 s deterministic sleep sleeps through every period at once (one
// pending SIGALRM after it, the clock 1000 s on), and pause stops the run at
// once instead of waiting for a period that changes nothing.  Before, both
// looped once per period (a billion rounds for the sleep).
TEST_P(HostEdgeTest, BlockedTimerSignalCannotEndAWait)
{
    const uint64_t tv = BUF, set = BUF + 64, ts = BUF + 128;
    const uint64_t period[4] = {0, 1, 0, 1}; // it_interval = it_value = 1 us
    ASSERT_EQ(es_copy_to_guest(m, tv, period, sizeof period), 0);
    const uint64_t alrm = 1ull << 13;
    ASSERT_EQ(es_copy_to_guest(m, set, &alrm, 8), 0);
    ASSERT_EQ(c64(ES_NR64_rt_sigprocmask, 0 /* SIG_BLOCK */, set, 0, 8), 0);
    ASSERT_EQ(c64(ES_NR64_setitimer, 0, tv, 0), 0);
    const uint64_t sleep[2] = {1000, 0};
    ASSERT_EQ(es_copy_to_guest(m, ts, sleep, sizeof sleep), 0);
    ASSERT_EQ(c64(ES_NR64_clock_gettime, 1, BUF + 192), 0);
    uint64_t before[2], after[2], pending = 0;
    ASSERT_EQ(es_copy_from_guest(m, before, BUF + 192, 16), 0);
    EXPECT_EQ(c64(ES_NR64_nanosleep, ts, 0), 0);
    ASSERT_EQ(c64(ES_NR64_clock_gettime, 1, BUF + 192), 0);
    ASSERT_EQ(es_copy_from_guest(m, after, BUF + 192, 16), 0);
    EXPECT_GE(after[0] - before[0], 1000u);
    ASSERT_EQ(c64(ES_NR64_rt_sigpending, BUF + 256, 8), 0);
    ASSERT_EQ(es_copy_from_guest(m, &pending, BUF + 256, 8), 0);
    EXPECT_EQ(pending, alrm);
    EXPECT_EQ(c64(ES_NR64_pause), -EINTR);
    EXPECT_EQ(m->stop, ES_STOP_ERROR);
    EXPECT_NE(strstr(m->message, "waits for a signal that cannot come"), nullptr) << m->message;
}
