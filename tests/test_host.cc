// Host services: syscalls called through es_host_call / es_host_syscall on a
// shim machine, with a temporary guest root.
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

// ---- tables ----

TEST(HostTables, NumbersComeFromTheTblFiles)
{
    EXPECT_EQ(ES_NR64_getpid, 39);
    EXPECT_EQ(ES_NR32_getpid, 20);
    EXPECT_EQ(ES_NRX32_readv, 515);
    EXPECT_EQ(ES_NR64_readv, 19);
    EXPECT_EQ(ES_NR64_statx, 332);
    EXPECT_EQ(ES_NR32_arch_prctl, 384);
    EXPECT_EQ(ES_NR_SYSCALLS_64, 548);
    EXPECT_EQ(ES_NR_SYSCALLS_32, 385);
}

#define ES_SYSCALL_ARGS_64(nr, n, s) {nr, n},
static const int g_args64[][2] = {
#include "es_syscall_args.h"
};
#undef ES_SYSCALL_ARGS_64
#define ES_SYSCALL_ARGS_32(nr, n, s) {nr, n},
static const int g_args32[][2] = {
#include "es_syscall_args.h"
};
#undef ES_SYSCALL_ARGS_32

static int arity(const int (*t)[2], size_t n, int nr)
{
    for (size_t i = 0; i < n; i++)
        if (t[i][0] == nr)
            return t[i][1];
    return -1;
}

TEST(HostTables, Arity)
{
    const size_t n64 = sizeof g_args64 / sizeof g_args64[0], n32 = sizeof g_args32 / sizeof g_args32[0];
    EXPECT_EQ(arity(g_args64, n64, ES_NR64_read), 3);
    EXPECT_EQ(arity(g_args64, n64, ES_NR64_mmap), 6);
    EXPECT_EQ(arity(g_args64, n64, ES_NR64_getpid), 0);
    EXPECT_EQ(arity(g_args32, n32, ES_NR32_mmap), 1);     // old_mmap takes a struct
    EXPECT_EQ(arity(g_args32, n32, ES_NR32_pread64), 5);  // position split in two
    EXPECT_EQ(arity(g_args64, n64, ES_NRX32_preadv), 4);  // compat_sys_preadv64
    EXPECT_EQ(arity(g_args64, n64, 134), -1);             // uselib: no entry point
}

// The first number past the 64-bit table's native rows (below the x32
// rows at 512), from the table itself: no number is assumed free.
static uint64_t first_free_nr64()
{
    uint64_t n = 0;
#define ES_SYSCALL_64(nr, abi, name, entry)                                                  \
    if ((nr) < 512 && (nr) + 1 > n)                                                          \
        n = (nr) + 1;
#include "es_syscall_64.h"
#undef ES_SYSCALL_64
    return n;
}

// ---- dispatch ----

TEST_P(HostTest, UnknownNumbersAreENOSYS)
{
    EXPECT_EQ(c64(1000), -ENOSYS);
    EXPECT_EQ(c64(first_free_nr64()), -ENOSYS); // past the last native row
    EXPECT_EQ(c64(134), -ENOSYS);       // uselib: a hole in the table
    EXPECT_EQ(c32(ES_NR_SYSCALLS_32), -ENOSYS); // past the i386 table
    EXPECT_EQ(c32(17), -ENOSYS);        // break
    EXPECT_EQ(c64(X32 | 1000), -ENOSYS);
    EXPECT_EQ(c64(~0ull), -ENOSYS);
}

TEST_P(HostTest, RegisterConventions)
{
    m->gpr[ES_RAX] = ES_NR64_getpid;
    EXPECT_EQ(es_host_syscall(m, ES_ABI_X64), ES_OK);
    EXPECT_EQ(m->gpr[ES_RAX], 1000u);
    m->gpr[ES_RAX] = 0xffffffff00000000ull | ES_NR32_getpid; // upper half ignored
    EXPECT_EQ(es_host_syscall(m, ES_ABI_I386), ES_OK);
    EXPECT_EQ(m->gpr[ES_RAX], 1000u);
    m->gpr[ES_RAX] = 9999;
    EXPECT_EQ(es_host_syscall(m, ES_ABI_I386), ES_OK);
    EXPECT_EQ(m->gpr[ES_RAX], (uint32_t)-ENOSYS); // eax, zero extended
    // write(1, "hi", 2) with i386 registers ebx ecx edx
    uint64_t s = str("hi");
    m->gpr[ES_RAX] = ES_NR32_write;
    m->gpr[ES_RBX] = 1;
    m->gpr[ES_RCX] = s;
    m->gpr[ES_RDX] = 2;
    EXPECT_EQ(es_host_syscall(m, ES_ABI_I386), ES_OK);
    EXPECT_EQ(m->gpr[ES_RAX], 2u);
    char b[4] = {};
    EXPECT_EQ(read(out[0], b, sizeof b), 2);
    EXPECT_STREQ(b, "hi");
    // exit_group(3) with x86-64 registers
    m->gpr[ES_RAX] = ES_NR64_exit_group;
    m->gpr[ES_RDI] = 0x103;
    EXPECT_EQ(es_host_syscall(m, ES_ABI_X64), ES_STOP);
    EXPECT_EQ(m->stop, ES_STOP_EXIT);
    EXPECT_EQ(m->exit_status, 3);
    EXPECT_GE(es_host_syscall_count(m), 5u);
}

// ---- files ----

TEST_P(HostTest, ReadAFileUnderTheRoot)
{
    int64_t fd = open_ro("/hello.txt");
    ASSERT_GE(fd, 3);
    EXPECT_EQ(c64(ES_NR64_read, fd, BUF, 100), 12);
    auto v = peek(BUF, 12);
    EXPECT_EQ(std::string(v.begin(), v.end()), "hello world\n");
    EXPECT_EQ(c64(ES_NR64_read, fd, BUF, 100), 0);
    EXPECT_EQ(c64(ES_NR64_lseek, fd, 6, SEEK_SET), 6);
    EXPECT_EQ(c64(ES_NR64_pread64, fd, BUF, 5, 0), 5);
    EXPECT_EQ(c64(ES_NR64_close, fd), 0);
    EXPECT_EQ(c64(ES_NR64_close, fd), -EBADF);
    EXPECT_EQ(c64(ES_NR64_read, 77, BUF, 1), -EBADF);
    // relative to the cwd, and through a symlink inside the root
    EXPECT_EQ(c64(ES_NR64_chdir, str("sub")), 0);
    EXPECT_EQ(c64(ES_NR64_getcwd, BUF, 100), 5);
    EXPECT_STREQ((const char *)peek(BUF, 5).data(), "/sub");
    fd = open_ro("inner.txt");
    EXPECT_GE(fd, 3);
    fd = open_ro("../link_in");
    ASSERT_GE(fd, 3);
    EXPECT_EQ(c64(ES_NR64_read, fd, BUF, 100), 6);
    fd = open_ro("/abs_in"); // absolute target: resolved inside the root
    ASSERT_GE(fd, 3);
    EXPECT_EQ(c64(ES_NR64_read, fd, BUF, 100), 12);
}

TEST_P(HostTest, PathsCannotLeaveTheRoot)
{
    EXPECT_EQ(open_ro("../secret.txt"), -ENOENT);
    EXPECT_EQ(open_ro("../../../../secret.txt"), -ENOENT);
    EXPECT_EQ(open_ro("/../secret.txt"), -ENOENT);
    EXPECT_EQ(open_ro("/etc/passwd"), -ENOENT);
    EXPECT_EQ(open_ro("../../etc/passwd"), -ENOENT);
    EXPECT_EQ(open_ro((tmp + "/secret.txt").c_str()), -ENOENT);
    EXPECT_EQ(open_ro("/esc"), -ENOENT);       // ../secret.txt
    EXPECT_EQ(open_ro("/sub/esc2"), -ENOENT);  // ../../../../secret.txt
    EXPECT_EQ(open_ro("/updir/secret.txt"), -ENOENT);
    EXPECT_EQ(open_ro("/updir/updir/hello.txt") >= 3, true); // ".." of the root is the root
    EXPECT_EQ(open_ro("/hostabs"), -ENOENT);   // a host-absolute target
    EXPECT_EQ(c64(ES_NR64_stat, str("/esc"), BUF), -ENOENT);
    EXPECT_EQ(c64(ES_NR64_chdir, str("/updir/..")), 0);
    EXPECT_EQ(c64(ES_NR64_getcwd, BUF, 100), 2);
    EXPECT_EQ(open_ro("../secret.txt"), -ENOENT);
    // a directory fd cannot be used to climb out either
    int64_t d = c64(ES_NR64_open, str("/sub"), O_RDONLY | O_DIRECTORY);
    ASSERT_GE(d, 3);
    EXPECT_EQ(c64(ES_NR64_openat, d, str("../../secret.txt"), O_RDONLY), -ENOENT);
    EXPECT_GE(c64(ES_NR64_openat, d, str("../hello.txt"), O_RDONLY), 3);
    EXPECT_EQ(c64(ES_NR64_openat, d, str("inner.txt"), O_RDONLY) >= 3, true);
}

TEST_P(HostTest, WritesNeedRw)
{
    EXPECT_EQ(c64(ES_NR64_open, str("/new.txt"), O_WRONLY | O_CREAT, 0644), -EROFS);
    EXPECT_EQ(c64(ES_NR64_open, str("/hello.txt"), O_RDWR), -EROFS);
    EXPECT_EQ(c64(ES_NR64_mkdir, str("/d"), 0755), -EROFS);
    EXPECT_EQ(c64(ES_NR64_unlink, str("/hello.txt")), -EROFS);
    EXPECT_EQ(c64(ES_NR64_access, str("/hello.txt"), W_OK), -EROFS);
    EXPECT_EQ(c64(ES_NR64_access, str("/hello.txt"), R_OK), 0);
    EXPECT_EQ(access((root + "/new.txt").c_str(), F_OK), -1);

    es_host_free(m);
    init(true);
    int64_t fd = c64(ES_NR64_openat, (uint64_t)-100, str("/new.txt"), O_RDWR | O_CREAT | O_EXCL, 0644);
    ASSERT_GE(fd, 3);
    EXPECT_EQ(c64(ES_NR64_write, fd, str("abc"), 3), 3);
    EXPECT_EQ(c64(ES_NR64_mkdir, str("/d/"), 0755), 0);
    EXPECT_EQ(c64(ES_NR64_rename, str("/new.txt"), str("/d/moved.txt")), 0);
    struct stat st;
    ASSERT_EQ(stat((root + "/d/moved.txt").c_str(), &st), 0);
    EXPECT_EQ(st.st_size, 3);
    EXPECT_EQ(st.st_mode & 0777, 0644u & ~022u);
    EXPECT_EQ(c64(ES_NR64_unlink, str("/d/moved.txt")), 0);
    EXPECT_EQ(c64(ES_NR64_rmdir, str("/d")), 0);
    // creating through an escaping symlink lands inside the root or fails
    EXPECT_EQ(c64(ES_NR64_open, str("/esc"), O_WRONLY | O_CREAT, 0644) >= 3, true);
    EXPECT_EQ(access((tmp + "/secret.txt").c_str(), F_OK), 0);
    EXPECT_EQ(access((root + "/secret.txt").c_str(), F_OK), 0); // created in the root
}

TEST_P(HostTest, BadPointersAreEFAULT)
{
    int64_t fd = open_ro("/hello.txt");
    ASSERT_GE(fd, 3);
    EXPECT_EQ(c64(ES_NR64_read, fd, 0x1000, 10), -EFAULT);             // unmapped
    EXPECT_EQ(c64(ES_NR64_read, fd, EST_CODE, 10), -EFAULT);           // read-only
    EXPECT_EQ(c64(ES_NR64_read, fd, 0xffff800000000000ull, 10), -EFAULT); // kernel half
    EXPECT_EQ(c64(ES_NR64_lseek, fd, 0, SEEK_CUR), 0); // nothing consumed
    EXPECT_EQ(c64(ES_NR64_write, 1, 0x1000, 10), -EFAULT);
    EXPECT_EQ(c64(ES_NR64_open, 0xdead0000, O_RDONLY), -EFAULT);
    EXPECT_EQ(c64(ES_NR64_fstat, fd, 0x2000), -EFAULT);
    EXPECT_EQ(c64(ES_NR64_uname, 0), -EFAULT);
    EXPECT_EQ(c64(ES_NR64_clock_gettime, 1, 0x3000), -EFAULT);
    EXPECT_EQ(c64(ES_NR64_getrandom, EST_DATA + 0x10000 - 8, 64, 0), -EFAULT);
    // a read that ends in an unmapped page returns what fitted
    EXPECT_EQ(c64(ES_NR64_lseek, fd, 0, SEEK_SET), 0);
    EXPECT_EQ(c64(ES_NR64_read, fd, EST_DATA + 0x10000 - 4, 12), 4);
    EXPECT_EQ(c64(ES_NR64_lseek, fd, 0, SEEK_CUR), 4); // the rest stays unread
    // a path that runs off the end of mapped memory, and one too long
    std::vector<char> fill(4096, 'a');
    ASSERT_EQ(es_copy_to_guest(m, EST_DATA + 0xf000, fill.data(), 4096), 0);
    EXPECT_EQ(c64(ES_NR64_open, EST_DATA + 0x10000 - 100, O_RDONLY), -EFAULT);
    EXPECT_EQ(c64(ES_NR64_open, EST_DATA + 0xf000, O_RDONLY), -ENAMETOOLONG);
    // i386: the upper halves of the registers are not part of the pointer
    EXPECT_EQ(c32(ES_NR32_read, fd, 0xffffffff00000000ull | BUF, 4), 4);
}

TEST_P(HostTest, GetdentsAndReadlink)
{
    int64_t d = c64(ES_NR64_open, str("/"), O_RDONLY | O_DIRECTORY);
    ASSERT_GE(d, 3);
    int64_t n = c64(ES_NR64_getdents64, d, BUF, 4096);
    ASSERT_GT(n, 0);
    auto v = peek(BUF, (size_t)n);
    bool found = false;
    for (int64_t o = 0; o < n;) {
        uint16_t rl;
        memcpy(&rl, &v[o + 16], 2);
        if (!strcmp((const char *)&v[o + 19], "hello.txt")) {
            found = true;
            EXPECT_EQ(v[o + 18], DT_REG);
        }
        o += rl;
    }
    EXPECT_TRUE(found);
    EXPECT_EQ(c64(ES_NR64_readlink, str("/link_in"), BUF, 100), 13);
    EXPECT_EQ(std::string((const char *)peek(BUF, 13).data(), 13), "sub/inner.txt");
    EXPECT_EQ(c64(ES_NR64_readlink, str("/proc/self/exe"), BUF, 100), 9);
    EXPECT_EQ(std::string((const char *)peek(BUF, 9).data(), 9), "/bin/prog");
    EXPECT_EQ(c64(ES_NR64_readlink, str("/hello.txt"), BUF, 100), -EINVAL);
    // /proc/self/fd/N names the guest's fd N by its guest path
    int64_t fd = open_ro("/sub/inner.txt");
    ASSERT_GE(fd, 3);
    std::string p = "/proc/self/fd/" + std::to_string(fd);
    EXPECT_EQ(c64(ES_NR64_readlink, str(p.c_str()), BUF, 100), 14);
    EXPECT_EQ(std::string((const char *)peek(BUF, 14).data(), 14), "/sub/inner.txt");
    EXPECT_EQ(c64(ES_NR64_readlink, str("/proc/self/fd/1"), BUF, 100) > 5, true); // pipe:[...]
    EXPECT_EQ(std::string((const char *)peek(BUF, 5).data(), 5), "pipe:");
    EXPECT_EQ(c64(ES_NR64_readlink, str("/proc/self/fd/77"), BUF, 100), -ENOENT);
    EXPECT_EQ(c64(ES_NR64_chdir, str("/sub")), 0);
    EXPECT_EQ(c64(ES_NR64_readlink, str("/proc/self/cwd"), BUF, 100), 4);
    // symlink loops end with ELOOP
    ASSERT_EQ(symlink("loop2", (root + "/loop1").c_str()), 0);
    ASSERT_EQ(symlink("loop1", (root + "/loop2").c_str()), 0);
    EXPECT_EQ(open_ro("/loop1"), -ELOOP);
    EXPECT_EQ(open_ro("/loop1/x"), -ELOOP);
    EXPECT_EQ(c64(ES_NR64_lstat, str("/loop1"), BUF), 0);
}

// ---- stat layouts ----

TEST_P(HostTest, StatLayoutsPerAbi)
{
    struct stat st;
    ASSERT_EQ(stat((root + "/hello.txt").c_str(), &st), 0);
    // x86-64 struct stat: st_ino @8, st_mode @24, st_size @48 (144 bytes)
    std::vector<uint8_t> guard(160, 0xee);
    es_copy_to_guest(m, BUF, guard.data(), guard.size());
    EXPECT_EQ(c64(ES_NR64_stat, str("/hello.txt"), BUF), 0);
    EXPECT_EQ(u64(BUF + 8), (uint64_t)st.st_ino);
    EXPECT_EQ(u32(BUF + 24), (uint32_t)st.st_mode);
    EXPECT_EQ(u64(BUF + 48), 12u);
    EXPECT_EQ(u64(BUF + 72), (uint64_t)st.st_atim.tv_sec);
    EXPECT_EQ(peek(BUF + 144, 1)[0], 0xee); // nothing past the struct
    // lstat sees the link, stat its target
    EXPECT_EQ(c64(ES_NR64_lstat, str("/link_in"), BUF), 0);
    EXPECT_EQ(u32(BUF + 24) & S_IFMT, (uint32_t)S_IFLNK);
    EXPECT_EQ(c64(ES_NR64_newfstatat, (uint64_t)-100, str("link_in"), BUF, 0), 0);
    EXPECT_EQ(u64(BUF + 48), 6u);
    // i386 struct stat64 (96 bytes, packed): mode @16, size @44, ino @88
    es_copy_to_guest(m, BUF, guard.data(), guard.size());
    EXPECT_EQ(c32(ES_NR32_stat64, str("/hello.txt"), BUF), 0);
    EXPECT_EQ(u32(BUF + 16), (uint32_t)st.st_mode);
    EXPECT_EQ(u64(BUF + 44), 12u);
    EXPECT_EQ(u64(BUF + 88), (uint64_t)st.st_ino);
    EXPECT_EQ(u32(BUF + 12), (uint32_t)st.st_ino);
    EXPECT_EQ(peek(BUF + 96, 1)[0], 0xee);
    int64_t fd = c32(ES_NR32_open, str("/hello.txt"), O_RDONLY);
    ASSERT_GE(fd, 3);
    EXPECT_EQ(c32(ES_NR32_fstat64, fd, BUF), 0);
    EXPECT_EQ(u64(BUF + 44), 12u);
    EXPECT_EQ(c32(ES_NR32_fstatat64, (uint32_t)-100, str("sub/inner.txt"), BUF, 0), 0);
    EXPECT_EQ(u64(BUF + 44), 6u);
    // i386 struct stat (compat_stat, 64 bytes): mode @8 (16 bit), size @20
    es_copy_to_guest(m, BUF, guard.data(), guard.size());
    int64_t r = c32(ES_NR32_fstat, fd, BUF);
    if (major(st.st_dev) < 256 && minor(st.st_dev) < 256 && (uint32_t)st.st_ino == st.st_ino) {
        EXPECT_EQ(r, 0);
        EXPECT_EQ(peek(BUF + 8, 2)[0] | peek(BUF + 9, 1)[0] << 8, (int)(st.st_mode & 0xffff));
        EXPECT_EQ(u32(BUF + 20), 12u);
        EXPECT_EQ(peek(BUF + 64, 1)[0], 0xee);
    } else {
        EXPECT_EQ(r, -EOVERFLOW); // old_valid_dev fails, as on Linux
    }
    // statx (shared by every ABI): stx_mode @28, stx_size @40, stx_mask @0
    EXPECT_EQ(c64(ES_NR64_statx, (uint64_t)-100, str("/hello.txt"), 0, 0x7ff, BUF), 0);
    EXPECT_EQ(u64(BUF + 40), 12u);
    EXPECT_EQ(peek(BUF + 28, 2)[0] | peek(BUF + 29, 1)[0] << 8, (int)(st.st_mode & 0xffff));
    EXPECT_EQ(u32(BUF) & 0x7ff, 0x7ffu);
    EXPECT_EQ(c32(ES_NR32_statx, (uint32_t)-100, str("/hello.txt"), 0, 0x7ff, BUF), 0);
    EXPECT_EQ(u64(BUF + 40), 12u);
}

// ---- iovecs per ABI ----

TEST_P(HostTest, WritevLayouts)
{
    uint64_t a = str("ab"), b = str("cde");
    uint8_t iov64[32];
    memcpy(iov64, &a, 8);
    uint64_t l = 2;
    memcpy(iov64 + 8, &l, 8);
    memcpy(iov64 + 16, &b, 8);
    l = 3;
    memcpy(iov64 + 24, &l, 8);
    ASSERT_EQ(es_copy_to_guest(m, BUF, iov64, 32), 0);
    EXPECT_EQ(c64(ES_NR64_writev, 1, BUF, 2), 5);
    // x32's writev (516) and i386's take struct compat_iovec {u32, u32}
    uint32_t iov32[4] = {(uint32_t)a, 2, (uint32_t)b, 3};
    ASSERT_EQ(es_copy_to_guest(m, BUF, iov32, 16), 0);
    EXPECT_EQ(c64(X32 | ES_NRX32_writev, 1, BUF, 2), 5);
    EXPECT_EQ(c32(ES_NR32_writev, 1, BUF, 2), 5);
    char got[16] = {};
    EXPECT_EQ(read(out[0], got, sizeof got), 15);
    EXPECT_STREQ(got, "abcdeabcdeabcde");
    // x32 readv
    int64_t fd = open_ro("/hello.txt");
    uint32_t riov[4] = {(uint32_t)BUF + 0x100, 5, (uint32_t)BUF + 0x200, 7};
    ASSERT_EQ(es_copy_to_guest(m, BUF, riov, 16), 0);
    EXPECT_EQ(c64(X32 | ES_NRX32_readv, fd, BUF, 2), 12);
    EXPECT_EQ(std::string((const char *)peek(BUF + 0x200, 7).data(), 7), " world\n");
}

// ---- memory ----

TEST_P(HostTest, DeterministicRandomAndClock)
{
    EXPECT_EQ(c64(ES_NR64_getrandom, BUF, 32, 0), 32);
    auto r1 = peek(BUF, 32);
    EXPECT_NE(r1, std::vector<uint8_t>(32, 0));
    EXPECT_EQ(c64(ES_NR64_getrandom, BUF, 32, 0), 32);
    EXPECT_NE(peek(BUF, 32), r1); // a stream, not a constant
    EXPECT_EQ(c64(ES_NR64_getrandom, BUF, 8, 4), -EINVAL);
    es_host_free(m);
    init(false);
    EXPECT_EQ(c64(ES_NR64_getrandom, BUF, 32, 0), 32);
    EXPECT_EQ(peek(BUF, 32), r1); // same seed, same bytes

    m->icount = 5000;
    EXPECT_EQ(c64(ES_NR64_clock_gettime, 1 /* MONOTONIC */, BUF), 0);
    EXPECT_EQ(u64(BUF), 0u);
    EXPECT_EQ(u64(BUF + 8), 5000u);
    EXPECT_EQ(c64(ES_NR64_clock_gettime, 0 /* REALTIME */, BUF), 0);
    EXPECT_EQ(u64(BUF), 1577836800u);
    EXPECT_EQ(c64(ES_NR64_time, 0), 1577836800);
    EXPECT_EQ(c64(ES_NR64_clock_gettime, 99, BUF), -EINVAL);
    // nanosleep advances the deterministic clock instead of sleeping
    uint64_t ts[2] = {2, 500};
    ASSERT_EQ(es_copy_to_guest(m, BUF, ts, 16), 0);
    EXPECT_EQ(c64(ES_NR64_nanosleep, BUF, 0), 0);
    EXPECT_EQ(c64(ES_NR64_clock_gettime, 1, BUF), 0);
    EXPECT_EQ(u64(BUF), 2u);
    EXPECT_EQ(u64(BUF + 8), 5500u);
    // i386: struct timespec of two 32-bit words
    std::vector<uint8_t> guard(16, 0xee);
    es_copy_to_guest(m, BUF, guard.data(), 16);
    EXPECT_EQ(c32(ES_NR32_clock_gettime, 0, BUF), 0);
    EXPECT_EQ(u32(BUF), 1577836802u);
    EXPECT_EQ(u32(BUF + 4), 5500u);
    EXPECT_EQ(peek(BUF + 8, 1)[0], 0xee);
    EXPECT_EQ(c64(ES_NR64_gettimeofday, BUF, 0), 0);
    EXPECT_EQ(u64(BUF + 8), 5u); // microseconds
}

TEST_P(HostTest, UnameAndIds)
{
    EXPECT_EQ(c64(ES_NR64_uname, BUF), 0);
    EXPECT_STREQ((const char *)peek(BUF, 6).data(), "Linux");
    EXPECT_STREQ((const char *)peek(BUF + 130, 16).data(), "4.17.0-entrysim");
    EXPECT_STREQ((const char *)peek(BUF + 260, 7).data(), "x86_64");
    EXPECT_EQ(c32(ES_NR32_uname, BUF), 0);
    EXPECT_STREQ((const char *)peek(BUF + 260, 5).data(), "i686");
    EXPECT_EQ(c64(ES_NR64_getuid), 1000);
    EXPECT_EQ(c32(ES_NR32_getuid32), 1000);
    EXPECT_EQ(c32(ES_NR32_getuid), 1000);
    EXPECT_EQ(c64(ES_NR64_gettid), c64(ES_NR64_getpid));
    EXPECT_EQ(c64(ES_NR64_set_tid_address, BUF), 1000);
}

TEST_P(HostTest, SelfSignalsTakeTheDefaultAction)
{
    EXPECT_EQ(c64(ES_NR64_kill, 1000, 0), 0);
    EXPECT_EQ(c64(ES_NR64_kill, 4242, 6), -ESRCH);
    EXPECT_EQ(c64(ES_NR64_tgkill, 1000, 1000, 17 /* SIGCHLD: ignored */), 0);
    EXPECT_EQ(m->stop, ES_STOP_NONE);
    // a handler is recorded, not run: the signal is dropped
    uint64_t sa[4] = {0x401000, 0x04000000, 0x401100, 0};
    ASSERT_EQ(es_copy_to_guest(m, BUF, sa, 32), 0);
    EXPECT_EQ(c64(ES_NR64_rt_sigaction, 6, BUF, 0, 8), 0);
    EXPECT_EQ(c64(ES_NR64_rt_sigaction, 6, 0, BUF + 64, 8), 0);
    EXPECT_EQ(u64(BUF + 64), 0x401000u);
    EXPECT_EQ(c64(ES_NR64_rt_sigaction, 9, BUF, 0, 8), -EINVAL);
    EXPECT_EQ(c64(ES_NR64_tgkill, 1000, 1000, 6), 0);
    EXPECT_EQ(m->stop, ES_STOP_NONE);
    // back to SIG_DFL: abort() kills
    sa[0] = 0;
    ASSERT_EQ(es_copy_to_guest(m, BUF, sa, 32), 0);
    EXPECT_EQ(c64(ES_NR64_rt_sigaction, 6, BUF, 0, 8), 0);
    EXPECT_EQ(c64(ES_NR64_tgkill, 1000, 1000, 6), 0);
    EXPECT_EQ(m->stop, ES_STOP_FAULT);
    EXPECT_EQ(m->signal, 6);
    EXPECT_EQ(m->exit_status, 134);
    EXPECT_NE(strstr(m->message, "SIGABRT"), nullptr);
}

TEST_P(HostTest, TlsThroughArchPrctlAndSetThreadArea)
{
    EXPECT_EQ(c64(ES_NR64_arch_prctl, 0x1002 /* SET_FS */, 0x7f0000001000ull), 0);
    EXPECT_EQ(m->seg[ES_SEG_FS].base, 0x7f0000001000ull);
    EXPECT_EQ(c64(ES_NR64_arch_prctl, 0x1003 /* GET_FS */, BUF), 0);
    EXPECT_EQ(u64(BUF), 0x7f0000001000ull);
    EXPECT_EQ(c64(ES_NR64_arch_prctl, 0x1001 /* SET_GS */, 0x800000000000ull), -EPERM);
    EXPECT_EQ(c32(ES_NR32_arch_prctl, 0x1002, 0x1000), -EINVAL);
    // struct user_desc {entry_number = -1, base, limit, seg_32bit|limit_in_pages|useable}
    uint32_t ud[4] = {0xffffffffu, 0x12345678, 0xfffff, 0x51};
    ASSERT_EQ(es_copy_to_guest(m, BUF, ud, 16), 0);
    EXPECT_EQ(c32(ES_NR32_set_thread_area, BUF), 0);
    EXPECT_EQ(u32(BUF), 12u); // the first TLS slot
    // base 0x12345678, limit 0xfffff, G, D, AVL, P, DPL 3, data RW accessed
    EXPECT_EQ(m->gdt[12], 0x12dff3345678ffffull);
    ud[0] = 0xffffffffu;
    ASSERT_EQ(es_copy_to_guest(m, BUF, ud, 16), 0);
    EXPECT_EQ(c32(ES_NR32_set_thread_area, BUF), 0);
    EXPECT_EQ(u32(BUF), 13u);
    uint32_t q[4] = {12, 0, 0, 0};
    ASSERT_EQ(es_copy_to_guest(m, BUF, q, 16), 0);
    EXPECT_EQ(c32(ES_NR32_get_thread_area, BUF), 0);
    EXPECT_EQ(u32(BUF + 4), 0x12345678u);
    EXPECT_EQ(u32(BUF + 8), 0xfffffu);
    EXPECT_EQ(u32(BUF + 12), 0x51u);
    ud[0] = 3;
    ASSERT_EQ(es_copy_to_guest(m, BUF, ud, 16), 0);
    EXPECT_EQ(c32(ES_NR32_set_thread_area, BUF), -EINVAL);
    EXPECT_EQ(c64(205 /* set_thread_area has no 64-bit entry */, BUF), -ENOSYS);
}

TEST_P(HostTest, LimitsFutexAndMore)
{
    EXPECT_EQ(c64(ES_NR64_prlimit64, 0, 7 /* NOFILE */, 0, BUF), 0);
    EXPECT_EQ(u64(BUF), 1024u);
    uint64_t nl[2] = {16, 1024};
    ASSERT_EQ(es_copy_to_guest(m, BUF, nl, 16), 0);
    EXPECT_EQ(c64(ES_NR64_prlimit64, 0, 7, BUF, 0), 0);
    EXPECT_EQ(c64(ES_NR64_getrlimit, 7, BUF), 0);
    EXPECT_EQ(u64(BUF), 16u);
    EXPECT_EQ(c32(ES_NR32_ugetrlimit, 3 /* STACK */, BUF), 0);
    EXPECT_EQ(u32(BUF), 8u << 20);
    EXPECT_EQ(u32(BUF + 4), 0xffffffffu);
    // futex: value differs -> EAGAIN; wake -> 0
    uint32_t fv = 5;
    ASSERT_EQ(es_copy_to_guest(m, BUF, &fv, 4), 0);
    EXPECT_EQ(c64(ES_NR64_futex, BUF, 128 /* WAIT|PRIVATE */, 4, 0), -EAGAIN);
    EXPECT_EQ(c64(ES_NR64_futex, BUF, 129 /* WAKE|PRIVATE */, 1), 0);
    EXPECT_EQ(c64(ES_NR64_futex, 0x1000, 0, 4, 0), -EFAULT);
    EXPECT_EQ(c64(ES_NR64_sched_getaffinity, 0, 128, BUF), 8);
    EXPECT_EQ(peek(BUF, 1)[0], 1);
    EXPECT_EQ(c64(ES_NR64_socket, 2, 1, 0), -EAFNOSUPPORT);
    es_host_free(m);
    init(false, true, false);
    // guest fds 0 and 2 do not exist here (stdin_fd = stderr_fd = -1): the
    // host's stdin and stderr are out of reach
    EXPECT_EQ(c64(ES_NR64_read, 0, BUF, 1), -EBADF);
    EXPECT_EQ(c64(ES_NR64_fstat, 2, BUF), -EBADF);
    EXPECT_EQ(c64(ES_NR64_dup, 1), 0); // the lowest free number
    EXPECT_EQ(c64(ES_NR64_dup2, 1, 10), 10);
    EXPECT_EQ(c64(ES_NR64_fcntl, 10, 1 /* F_GETFD */), 0);
    EXPECT_EQ(c64(ES_NR64_dup3, 1, 11, O_CLOEXEC), 11);
    EXPECT_EQ(c64(ES_NR64_fcntl, 11, 1), 1);
    EXPECT_EQ(c64(ES_NR64_fcntl, 1, 0 /* F_DUPFD */, 12), 12);
    EXPECT_EQ(c64(ES_NR64_fcntl, 1, 0, 1024), -EINVAL);
    EXPECT_EQ(c64(ES_NR64_pipe2, BUF, 0), 0);
    EXPECT_EQ(u32(BUF), 2u);
    EXPECT_EQ(u32(BUF + 4), 3u);
    EXPECT_EQ(c64(ES_NR64_write, 3, str("xy"), 2), 2);
    EXPECT_EQ(c64(ES_NR64_read, 2, BUF, 10), 2);
    EXPECT_EQ(c64(ES_NR64_ioctl, 1, 0x5401 /* TCGETS on a pipe */, BUF), -ENOTTY);
    EXPECT_EQ(c64(ES_NR64_close, 10), 0);
    EXPECT_EQ(c64(ES_NR64_write, 10, str("x"), 1), -EBADF);
}

TEST_P(HostTest, StatfsSendfileSelectUtimes)
{
    // struct statfs (120 bytes): f_bsize @8, f_flags @80 with ST_RDONLY
    EXPECT_EQ(c64(ES_NR64_statfs, str("/"), BUF), 0);
    EXPECT_GT(u64(BUF + 8), 0u);
    EXPECT_EQ(u64(BUF + 80) & 1, 1u);
    // i386 statfs64 takes the size of struct compat_statfs64 (84)
    EXPECT_EQ(c32(ES_NR32_statfs64, str("/"), 84, BUF), 0);
    EXPECT_EQ(c32(ES_NR32_statfs64, str("/"), 88, BUF), -EINVAL);
    // sendfile from a file at an offset to the stdout pipe
    int64_t fd = open_ro("/hello.txt");
    ASSERT_GE(fd, 3);
    uint64_t off = 6;
    ASSERT_EQ(es_copy_to_guest(m, BUF, &off, 8), 0);
    EXPECT_EQ(c64(ES_NR64_sendfile, 1, fd, BUF, 100), 6);
    EXPECT_EQ(u64(BUF), 12u);
    char got[16] = {};
    EXPECT_EQ(read(out[0], got, sizeof got), 6);
    EXPECT_STREQ(got, "world\n");
    EXPECT_EQ(c64(ES_NR64_lseek, fd, 0, SEEK_CUR), 0); // the file offset did not move
    // select with no fds is a sleep (on the deterministic clock)
    uint64_t tv[2] = {1, 500000};
    ASSERT_EQ(es_copy_to_guest(m, BUF, tv, 16), 0);
    EXPECT_EQ(c64(ES_NR64_select, 0, 0, 0, 0, BUF), 0);
    EXPECT_EQ(c64(ES_NR64_clock_gettime, 1, BUF), 0);
    EXPECT_EQ(u64(BUF), 1u);
    EXPECT_EQ(u64(BUF + 8), 500000000u);
    // select for reading on a pipe with data: fd 5 is ready, fd 4 is not asked
    EXPECT_EQ(c64(ES_NR64_pipe2, BUF, 0), 0);
    uint32_t rfd = u32(BUF), wfd = u32(BUF + 4);
    EXPECT_EQ(c64(ES_NR64_write, wfd, str("z"), 1), 1);
    uint64_t set = 1ull << rfd | 1ull << wfd;
    ASSERT_EQ(es_copy_to_guest(m, BUF, &set, 8), 0);
    tv[0] = tv[1] = 0;
    ASSERT_EQ(es_copy_to_guest(m, BUF + 64, tv, 16), 0);
    EXPECT_EQ(c64(ES_NR64_select, wfd + 1, BUF, 0, 0, BUF + 64), 1);
    EXPECT_EQ(u64(BUF), 1ull << rfd);
    set = 1ull << 40;
    ASSERT_EQ(es_copy_to_guest(m, BUF, &set, 8), 0);
    EXPECT_EQ(c64(ES_NR64_select, 41, BUF, 0, 0, BUF + 64), -EBADF);
    // utimensat needs --rw, then sets the times
    uint64_t ts[4] = {1000000000, 0, 1200000000, 5};
    ASSERT_EQ(es_copy_to_guest(m, BUF, ts, 32), 0);
    EXPECT_EQ(c64(ES_NR64_utimensat, (uint64_t)-100, str("/hello.txt"), BUF, 0), -EROFS);
    es_host_free(m);
    init(true);
    EXPECT_EQ(c64(ES_NR64_utimensat, (uint64_t)-100, str("/link_in"), BUF, 0), 0);
    struct stat st;
    ASSERT_EQ(stat((root + "/sub/inner.txt").c_str(), &st), 0);
    EXPECT_EQ(st.st_mtim.tv_sec, 1200000000);
    EXPECT_EQ(st.st_mtim.tv_nsec, 5);
    EXPECT_EQ(c64(ES_NR64_chmod, str("/hello.txt"), 0600), 0);
    ASSERT_EQ(stat((root + "/hello.txt").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    EXPECT_EQ(c64(ES_NR64_link, str("/hello.txt"), str("/sub/hard")), 0);
    ASSERT_EQ(stat((root + "/sub/hard").c_str(), &st), 0);
    EXPECT_EQ(st.st_nlink, 2u);
    EXPECT_EQ(c64(ES_NR64_truncate, str("/sub/hard"), 5), 0);
    ASSERT_EQ(stat((root + "/hello.txt").c_str(), &st), 0);
    EXPECT_EQ(st.st_size, 5);
}

TEST_P(HostTest, PrctlAndChildren)
{
    EXPECT_EQ(c64(ES_NR64_prctl, 15 /* PR_SET_NAME */, str("worker")), 0);
    EXPECT_EQ(c64(ES_NR64_prctl, 16 /* PR_GET_NAME */, BUF), 0);
    EXPECT_STREQ((const char *)peek(BUF, 7).data(), "worker");
    EXPECT_EQ(c64(ES_NR64_wait4, (uint64_t)-1, 0, 0, 0), -ECHILD);
    EXPECT_EQ(c64(ES_NR64_kill, (uint64_t)-1, 15), -ESRCH); // everyone but us: nobody
    EXPECT_EQ(m->stop, ES_STOP_NONE);
    EXPECT_EQ(c64(ES_NR64_kill, 0, 34 /* SIGRTMIN+2: terminates by default */), 0);
    EXPECT_EQ(m->stop, ES_STOP_FAULT);
    EXPECT_EQ(m->exit_status, 128 + 34);
}

TEST_P(HostTest, PreadvOldStatAndWaits)
{
    int64_t fd = open_ro("/hello.txt");
    ASSERT_GE(fd, 3);
    // x86-64 preadv(fd, iov, 1, pos_l = 6, pos_h = 0)
    uint64_t iov[2] = {BUF + 0x100, 5};
    ASSERT_EQ(es_copy_to_guest(m, BUF, iov, 16), 0);
    EXPECT_EQ(c64(ES_NR64_preadv, fd, BUF, 1, 6, 0), 5);
    EXPECT_EQ(std::string((const char *)peek(BUF + 0x100, 5).data(), 5), "world");
    EXPECT_EQ(c64(ES_NR64_lseek, fd, 0, SEEK_CUR), 0);
    // x32 preadv (534): compat iovec, one loff_t
    uint32_t iov32[2] = {(uint32_t)BUF + 0x200, 4};
    ASSERT_EQ(es_copy_to_guest(m, BUF, iov32, 8), 0);
    EXPECT_EQ(c64(X32 | ES_NRX32_preadv, fd, BUF, 1, 1), 4);
    EXPECT_EQ(std::string((const char *)peek(BUF + 0x200, 4).data(), 4), "ello");
    // i386 preadv: the position in two registers
    EXPECT_EQ(c32(ES_NR32_preadv, fd, BUF, 1, 2, 0), 4);
    EXPECT_EQ(std::string((const char *)peek(BUF + 0x200, 4).data(), 4), "llo ");
    EXPECT_EQ(c64(ES_NR64_preadv, fd, BUF, 1, (uint64_t)-5, 0), -EINVAL);
    // i386 __old_kernel_stat: 16-bit inode numbers, or EOVERFLOW
    struct stat st;
    ASSERT_EQ(stat((root + "/hello.txt").c_str(), &st), 0);
    int64_t r = c32(ES_NR32_oldstat, str("/hello.txt"), BUF);
    if (st.st_ino <= 0xffff) {
        EXPECT_EQ(r, 0);
        EXPECT_EQ(u32(BUF + 16), 12u);
    } else {
        EXPECT_EQ(r, -EOVERFLOW);
    }
    EXPECT_EQ(c32(ES_NR32_olduname, BUF), 0);
    EXPECT_STREQ((const char *)peek(BUF + 4 * 65, 5).data(), "i686");
    // waiting for a signal cannot end: the run stops with a reason
    EXPECT_EQ(m->stop, ES_STOP_NONE);
    m->gpr[ES_RAX] = ES_NR64_pause;
    EXPECT_EQ(es_host_syscall(m, ES_ABI_X64), ES_STOP);
    EXPECT_EQ(m->stop, ES_STOP_ERROR);
    EXPECT_NE(strstr(m->message, "signal"), nullptr);
}

// 32-bit callers see small directory cookies (Linux gives compat tasks
// 32-bit hashes); seeking back to one re-reads from there.
TEST_P(HostTest, DirectoryCookiesFor32BitCallers)
{
    int64_t d = c32(ES_NR32_open, str("/"), O_RDONLY | O_DIRECTORY);
    ASSERT_GE(d, 3);
    int64_t n = c32(ES_NR32_getdents64, d, BUF, 4096);
    ASSERT_GT(n, 0);
    auto v = peek(BUF, (size_t)n);
    std::vector<std::string> names;
    std::vector<uint64_t> offs;
    for (int64_t o = 0; o < n;) {
        uint64_t off;
        uint16_t rl;
        memcpy(&off, &v[o + 8], 8);
        memcpy(&rl, &v[o + 16], 2);
        names.push_back((const char *)&v[o + 19]);
        offs.push_back(off);
        o += rl;
    }
    ASSERT_GE(names.size(), 4u);
    for (size_t i = 0; i < offs.size(); i++)
        EXPECT_EQ(offs[i], i + 1); // cookies 1, 2, 3...
    EXPECT_EQ(c32(ES_NR32_lseek, d, 0, SEEK_CUR), (int64_t)offs.size());
    EXPECT_EQ(c32(ES_NR32_lseek, d, 2, SEEK_SET), 2);
    n = c32(ES_NR32_getdents64, d, BUF, 4096);
    ASSERT_GT(n, 0);
    EXPECT_STREQ((const char *)peek(BUF + 19, 64).data(), names[2].c_str());
    EXPECT_EQ(u64(BUF + 8), 3u);
    // old getdents (struct compat_linux_dirent) from the start
    EXPECT_EQ(c32(ES_NR32__llseek, d, 0, 0, BUF + 0x800, SEEK_SET), 0);
    n = c32(ES_NR32_getdents, d, BUF, 4096);
    ASSERT_GT(n, 0);
    EXPECT_EQ(u32(BUF + 4), 1u);
    EXPECT_STREQ((const char *)peek(BUF + 10, 64).data(), names[0].c_str());
    EXPECT_EQ(c32(ES_NR32_lseek, d, 100000, SEEK_SET), -EINVAL);
    // 64-bit callers get the host's offsets untouched
    int64_t d64 = c64(ES_NR64_open, str("/"), O_RDONLY | O_DIRECTORY);
    n = c64(ES_NR64_getdents64, d64, BUF, 4096);
    ASSERT_GT(n, 0);
    std::vector<uint64_t> g64;
    for (int64_t o = 0; o < n;) {
        uint16_t rl;
        memcpy(&rl, &peek(BUF + o + 16, 2)[0], 2);
        g64.push_back(u64(BUF + o + 8));
        o += rl;
    }
    int hd = open(root.c_str(), O_RDONLY | O_DIRECTORY);
    ASSERT_GE(hd, 0);
    std::vector<uint8_t> hb(4096);
    long hn = syscall(SYS_getdents64, hd, hb.data(), 4096);
    close(hd);
    std::vector<uint64_t> h64;
    for (long o = 0; o < hn;) {
        uint16_t rl;
        uint64_t off;
        memcpy(&off, &hb[o + 8], 8);
        memcpy(&rl, &hb[o + 16], 2);
        h64.push_back(off);
        o += rl;
    }
    EXPECT_EQ(g64, h64);
}

// A broken pipe signals the guest, never the simulator's process.
TEST_P(HostTest, BrokenPipeIsTheGuestsSigpipe)
{
    EXPECT_EQ(c64(ES_NR64_pipe2, BUF, 0), 0);
    uint32_t rfd = u32(BUF), wfd = u32(BUF + 4);
    EXPECT_EQ(c64(ES_NR64_close, rfd), 0);
    uint64_t sa[4] = {1 /* SIG_IGN */, 0, 0, 0};
    ASSERT_EQ(es_copy_to_guest(m, BUF, sa, 32), 0);
    EXPECT_EQ(c64(ES_NR64_rt_sigaction, 13, BUF, 0, 8), 0);
    EXPECT_EQ(c64(ES_NR64_write, wfd, str("x"), 1), -EPIPE);
    EXPECT_EQ(m->stop, ES_STOP_NONE);
    sa[0] = 0; // SIG_DFL: the guest dies of it
    ASSERT_EQ(es_copy_to_guest(m, BUF, sa, 32), 0);
    EXPECT_EQ(c64(ES_NR64_rt_sigaction, 13, BUF, 0, 8), 0);
    EXPECT_EQ(c64(ES_NR64_write, wfd, str("x"), 1), -EPIPE);
    EXPECT_EQ(m->stop, ES_STOP_FAULT);
    EXPECT_EQ(m->signal, 13);
    EXPECT_EQ(m->exit_status, 141);
}

// Bad input never crashes the host: random numbers and arguments on every
// ABI (calls that could block the test forever are left out: pipes, poll,
// select, epoll_wait, eventfd reads).  Checks only that each call returns an errno-range value or a
// plausible result, and that the machine stays usable.
void HostTest::fuzz(bool rw)
{
    es_host_free(m);
    init(rw);
    ASSERT_EQ(fcntl(out[1], F_SETFL, O_NONBLOCK), 0); // a full stdout pipe gives EAGAIN
    ASSERT_EQ(fcntl(out[0], F_SETFL, O_NONBLOCK), 0); // and draining it never waits
    // ES_HOST_FUZZ=<iterations>[:<seed>] runs a longer or different round
    uint64_t seed = 0x1234567887654321ull;
    long iters = 30000;
    if (const char *e = getenv("ES_HOST_FUZZ")) {
        iters = strtol(e, nullptr, 0);
        if (const char *c = strchr(e, ':'))
            seed = strtoull(c + 1, nullptr, 0) | 1;
    }
    auto rnd = [&seed]() {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        return seed;
    };
    // interesting argument values: valid guest buffers, paths, small ints,
    // garbage pointers, huge lengths
    const uint64_t path = str("/hello.txt"), dpath = str("/sub"), lpath = str("/link_in");
    const uint64_t vals[] = {0, 1, 2, 3, 4, 5, 8, 16, 64, 100, 4096, 0x10000, 1ull << 30,
                             (uint64_t)-1, (uint64_t)-100, 0x80000000ull, BUF, BUF + 0x1000,
                             EST_DATA + 0xfff8, EST_CODE, 0x1000, 0xdead0000,
                             0xffff800000000000ull, path, dpath, lpath};
    const size_t nv = sizeof vals / sizeof vals[0];
    auto skip = [](int abi, uint64_t nr) {
        if (abi == ES_ABI_I386)
            return nr == ES_NR32_pipe || nr == ES_NR32_pipe2 || nr == ES_NR32_poll ||
                   nr == ES_NR32_ppoll || nr == ES_NR32_select || nr == ES_NR32__newselect ||
                   nr == ES_NR32_pselect6 || nr == ES_NR32_epoll_wait || nr == ES_NR32_epoll_pwait ||
                   nr == ES_NR32_eventfd || nr == ES_NR32_eventfd2;
        return nr == ES_NR64_pipe || nr == ES_NR64_pipe2 || nr == ES_NR64_poll ||
               nr == ES_NR64_ppoll || nr == ES_NR64_select || nr == ES_NR64_pselect6 ||
               nr == ES_NR64_epoll_wait || nr == ES_NR64_epoll_pwait || nr == ES_NR64_eventfd ||
               nr == ES_NR64_eventfd2;
    };
    char drain[65536];
    auto refresh = [&]() {
        // random munmap/mmap/mprotect may take the data pages away: give
        // them back (as ordinary mappings) with the strings in place
        uint8_t probe;
        bool ok = true;
        for (uint64_t pg = EST_DATA; pg < EST_DATA + 0x10000; pg += 0x1000)
            ok = ok && es_copy_from_guest(m, &probe, pg, 1) == 0 &&
                 es_copy_to_guest(m, pg, &probe, 1) == 0;
        if (!ok) {
            ASSERT_EQ(es_vm_map(m, EST_DATA, 0x10000, ES_PROT_R | ES_PROT_W), 0);
        }
        // the strings may have been overwritten by a read into them
        const char *ps[3] = {"/hello.txt", "/sub", "/link_in"};
        const uint64_t pa[3] = {path, dpath, lpath};
        for (int k = 0; k < 3; k++)
            ASSERT_EQ(es_copy_to_guest(m, pa[k], ps[k], strlen(ps[k]) + 1), 0);
    };
    for (long i = 0; i < iters; i++) {
        if (i % 16 == 0)
            refresh();
        int abi = (int)(rnd() % 3);
        uint64_t nr = abi == ES_ABI_I386 ? rnd() % 400 : rnd() % 560;
        if (abi == ES_ABI_X32)
            nr |= X32;
        if (skip(abi, nr & ~X32))
            continue;
        uint64_t a[6];
        for (auto &x : a)
            x = rnd() % 4 == 0 ? rnd() : vals[rnd() % nv];
        int64_t r = es_host_call(m, abi == ES_ABI_X32 ? ES_ABI_X64 : abi, nr, a);
        if (r < 0) {
            EXPECT_GE(r, -4095) << "abi " << abi << " nr " << nr;
        }
        m->stop = ES_STOP_NONE; // exits and fatal signals end nothing here
        (void)!read(out[0], drain, sizeof drain);
    }
    // still a working process afterwards
    refresh();
    EXPECT_EQ(c64(ES_NR64_getpid), 1000);
    // random setrlimit calls may have lowered NOFILE, opens may have used it up
    m->host->rlim[7].cur = m->host->rlim[7].max = ES_HOST_MAX_FDS;
    for (int i = 3; i < ES_HOST_MAX_FDS; i++)
        c64(ES_NR64_close, i);
    if (rw)
        return; // the file may be gone: unlink and rename were fair game
    int64_t fd = c64(ES_NR64_open, path, O_RDONLY);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(c64(ES_NR64_read, fd, BUF, 5), 5);
    EXPECT_EQ(std::string((const char *)peek(BUF, 5).data(), 5), "hello");
}

TEST_P(HostTest, RandomCallsDoNotCrash)
{
    fuzz(false);
}

// With --rw the random calls create, rename, truncate and delete at will:
// all of it stays under the root.
TEST_P(HostTest, RandomWritingCallsStayInTheRoot)
{
    fuzz(true);
    DIR *d = opendir(tmp.c_str());
    ASSERT_NE(d, nullptr);
    std::vector<std::string> names;
    while (struct dirent *e = readdir(d))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            names.push_back(e->d_name);
    closedir(d);
    std::sort(names.begin(), names.end());
    EXPECT_EQ(names, (std::vector<std::string>{"root", "secret.txt"}));
    char b[16] = {};
    int fd = open((tmp + "/secret.txt").c_str(), O_RDONLY);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(read(fd, b, sizeof b), 7);
    close(fd);
    EXPECT_STREQ(b, "secret\n");
}

TEST_P(HostTest, EpollAndEventfd)
{
    int64_t ep = c64(ES_NR64_epoll_create1, O_CLOEXEC);
    ASSERT_GE(ep, 0);
    int64_t ev = c64(ES_NR64_eventfd2, 0, 04000 /* EFD_NONBLOCK */);
    ASSERT_GE(ev, 0);
    // struct epoll_event {u32 events = EPOLLIN; u64 data} packed: 12 bytes
    uint8_t e[12] = {1, 0, 0, 0, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11};
    ASSERT_EQ(es_copy_to_guest(m, BUF, e, 12), 0);
    EXPECT_EQ(c64(ES_NR64_epoll_ctl, ep, 1 /* ADD */, ev, BUF), 0);
    EXPECT_EQ(c64(ES_NR64_epoll_wait, ep, BUF + 64, 8, 0), 0);
    uint64_t one = 1;
    ASSERT_EQ(es_copy_to_guest(m, BUF + 32, &one, 8), 0);
    EXPECT_EQ(c64(ES_NR64_write, ev, BUF + 32, 8), 8);
    EXPECT_EQ(c64(ES_NR64_epoll_wait, ep, BUF + 64, 8, 0), 1);
    EXPECT_EQ(u32(BUF + 64) & 1, 1u);
    EXPECT_EQ(u64(BUF + 68), 0x1122334455667788ull); // the guest's data word
    EXPECT_EQ(c64(ES_NR64_read, ev, BUF + 32, 8), 8);
    EXPECT_EQ(u64(BUF + 32), 1u);
    EXPECT_EQ(c64(ES_NR64_read, ev, BUF + 32, 8), -EAGAIN);
    EXPECT_EQ(c64(ES_NR64_epoll_wait, ep, BUF + 64, 0, 0), -EINVAL);
    EXPECT_EQ(c64(ES_NR64_epoll_ctl, ep, 1, 99, BUF), -EBADF);
}

INSTANTIATE_TEST_SUITE_P(Resolution, HostTest, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool> &i) {
                             return std::string(i.param ? "Openat2" : "Walk");
                         });

} // namespace

// Reverse execution (sim/host/hist.c): a step that opened fds -- at the
// lowest free number, through dup2 far above every fd used so far, and a
// pipe's two ends -- gives a record whose undo closes them again, so a
// step forward gets the same numbers.  (Checks es_host.fd_top: the record
// only looks at slots below it.)
TEST_P(HostTest, UndoingAStepClosesTheFdsItOpened)
{
    ASSERT_EQ(es_host_history(m), 0);
    es_host_step_begin(m);
    EXPECT_EQ(c64(ES_NR64_dup, 1), 3);
    EXPECT_EQ(c64(ES_NR64_dup2, 1, 900), 900);
    EXPECT_EQ(c64(ES_NR64_pipe2, BUF, 0), 0);
    EXPECT_EQ(u32(BUF), 4u);
    EXPECT_EQ(u32(BUF + 4), 5u);
    es_host_rec *r = nullptr;
    ASSERT_EQ(es_host_step_end(m, &r), 0);
    ASSERT_NE(r, nullptr);
    es_host_rec_undo(m, r);
    for (int fd : {3, 4, 5, 900})
        EXPECT_EQ(c64(ES_NR64_fcntl, fd, 1 /* F_GETFD */), -EBADF) << fd;
    EXPECT_EQ(c64(ES_NR64_fcntl, 1, 1), 0); // what was open stays open
    // forward again: the same numbers
    EXPECT_EQ(c64(ES_NR64_dup2, 1, 900), 900);
    EXPECT_EQ(c64(ES_NR64_dup, 1), 3);
}
