/* probe.c - the confinement probe of tests/attack: a guest program that
 * tries, step by step, to reach files outside the root `entrysim run
 * --root DIR` gives it.  Compiled once per ABI (gcc -static for x86-64,
 * -m32 for i386, -mx32 for x32, musl-gcc -static) and driven by argv:
 * every argument is one step, its fields separated by '|':
 *
 *   open|S|PATH|FLAGS|MODE   openat|S|DIR|PATH|FLAGS   read|S   pread|S|OFF
 *   write|S|DATA   cat|PATH   put|PATH|DATA   creat|PATH   close|S   dup2|S|N
 *   chdir|PATH   fchdir|DIR   getcwd   getdents|DIR   ls|PATH
 *   stat|PATH   lstat|PATH   fstatat|DIR|PATH|FLAGS   fstat|S   oldstat|PATH
 *   readlink|PATH   readlinkat|DIR|PATH   access|PATH|MODE
 *   unlink|PATH   unlinkat|DIR|PATH|FLAGS   rmdir|PATH   mkdir|PATH
 *   mkdirat|DIR|PATH   rename|A|B   renameat2|DA|A|DB|B|FLAGS   link|A|B
 *   linkat|DA|A|DB|B|FLAGS   symlink|TARGET|LINK   symlinkat|TARGET|DIR|LINK
 *   truncate|PATH|LEN   ftruncate|S|LEN   chmod|PATH|MODE   fchmod|S|MODE
 *   fchmodat|DIR|PATH|MODE   chown|PATH   fchown|S   utimes|PATH   futimens|S
 *   mknod|PATH   sendfile|OUT|IN|N   mmap|S   mmapw|S|DATA   statfs|PATH
 *
 * S is a slot 0-9 holding an fd; DIR is `cwd` (AT_FDCWD), sN (slot N) or
 * rN (the raw number N, e.g. r0 = stdin, r-1).  Output lines: `Si ok V` or
 * `Si err E` per step, `R:` data read, `D:` directory entries, `I:dev:ino`
 * of anything stat'ed, `L:` link targets, `C:` the cwd.  The campaign looks
 * for the canary's secret, outside names and outside inodes in them.
 * Exit status: 0 every step worked, 10 one failed, 11 bad usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <stdint.h>
#include <unistd.h>

#ifndef SYS_statx /* older headers (musl) */
#if defined(__i386__)
#define SYS_statx 383
#elif defined(__ILP32__)
#define SYS_statx (332 | 0x40000000)
#else
#define SYS_statx 332
#endif
#endif

/* struct statx as the kernel lays it out (not every libc declares it) */
struct pstatx {
    uint32_t mask, blksize;
    uint64_t attributes;
    uint32_t nlink, uid, gid;
    uint16_t mode, pad1;
    uint64_t ino, size, blocks, attributes_mask;
    struct {
        int64_t sec;
        uint32_t nsec;
        int32_t pad;
    } atime, btime, ctime, mtime;
    uint32_t rdev_major, rdev_minor, dev_major, dev_minor;
    uint64_t spare[14];
};

#define NF 8
static long slot[10] = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
static char buf[8192];

static void out(const char *s, size_t n) { (void)!write(1, s, n); }
static void outs(const char *s) { out(s, strlen(s)); }

static long num(const char *s) { return s ? strtol(s, NULL, 0) : 0; }

static long dirfd_of(const char *s)
{
    if (!s || !strcmp(s, "cwd"))
        return AT_FDCWD;
    if (s[0] == 's')
        return slot[(unsigned long)num(s + 1) % 10];
    return num(s + 1);
}

static long *slot_of(const char *s) { return &slot[(unsigned long)num(s) % 10]; }

/* an fd operand: sN / rN / cwd as for DIR, or a bare slot number */
static long fd_of(const char *s)
{
    if (s && (s[0] == 's' || s[0] == 'r' || s[0] == 'c'))
        return dirfd_of(s);
    return *slot_of(s);
}

static void print_ino(long r, unsigned long long dev, unsigned long long ino)
{
    if (r == 0) {
        snprintf(buf, sizeof buf, "I:%llu:%llu\n", dev, ino);
        outs(buf);
    }
}

static long do_statx(long dir, const char *path, int flags)
{
    struct pstatx sx;
    memset(&sx, 0, sizeof sx);
    long r = syscall(SYS_statx, dir, path, flags, 0x7ff /* STATX_BASIC_STATS */, &sx);
    /* st_dev's encoding, as the campaign's os.lstat() gives it */
    print_ino(r, (unsigned long long)makedev(sx.dev_major, sx.dev_minor), sx.ino);
    return r;
}

static long oldstat(const char *path)
{
#if defined(__i386__)
    struct stat64 st;
    long r = syscall(SYS_stat64, path, &st);
#else
    struct stat st;
    long r = syscall(SYS_stat, path, &st);
#endif
    print_ino(r, (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
    return r;
}

static long getdents(long dir)
{
    long n = syscall(SYS_getdents64, dir, buf, sizeof buf);
    for (long off = 0; n > 0 && off < n;) {
        unsigned short reclen = *(unsigned short *)(buf + off + 16);
        outs("D:");
        outs(buf + off + 19);
        outs("\n");
        if (!reclen)
            break;
        off += reclen;
    }
    return n;
}

static long readfd(long fd, long off)
{
    long n = off < 0 ? syscall(SYS_read, fd, buf, sizeof buf - 1)
                     : (long)pread((int)fd, buf, sizeof buf - 1, off);
    if (n > 0) {
        outs("R:");
        out(buf, (size_t)n);
        outs("\n");
    }
    return n;
}

static long cat(const char *path)
{
    long fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY);
    if (fd < 0)
        return fd;
    long n = readfd(fd, -1);
    syscall(SYS_close, fd);
    return n;
}

static long put(const char *path, const char *data)
{
    long fd = syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return fd;
    long n = syscall(SYS_write, fd, data, strlen(data));
    syscall(SYS_close, fd);
    return n;
}

static long mapped(long fd, const char *data)
{
    size_t len = 4096;
    char *p = mmap(NULL, len, data ? PROT_READ | PROT_WRITE : PROT_READ,
                   data ? MAP_SHARED : MAP_PRIVATE, (int)fd, 0);
    if (p == MAP_FAILED)
        return -1;
    if (data) {
        memcpy(p, data, strlen(data));
        msync(p, len, MS_SYNC);
    } else {
        outs("R:");
        out(p, strnlen(p, len));
        outs("\n");
    }
    munmap(p, len);
    return 0;
}

static long step(char **f)
{
    const char *op = f[0];
    struct timespec ts[2] = {{0, 0}, {0, 0}};
    if (!strcmp(op, "open"))
        return *slot_of(f[1]) = syscall(SYS_open, f[2], num(f[3]), num(f[4]) ? num(f[4]) : 0644);
    if (!strcmp(op, "openat"))
        return *slot_of(f[1]) = syscall(SYS_openat, dirfd_of(f[2]), f[3], num(f[4]), 0644);
    if (!strcmp(op, "read"))
        return readfd(fd_of(f[1]), -1);
    if (!strcmp(op, "pread"))
        return readfd(fd_of(f[1]), num(f[2]));
    if (!strcmp(op, "write"))
        return syscall(SYS_write, fd_of(f[1]), f[2], strlen(f[2]));
    if (!strcmp(op, "cat"))
        return cat(f[1]);
    if (!strcmp(op, "put"))
        return put(f[1], f[2]);
    if (!strcmp(op, "creat"))
        return syscall(SYS_creat, f[1], 0644);
    if (!strcmp(op, "close"))
        return syscall(SYS_close, fd_of(f[1]));
    if (!strcmp(op, "dup2"))
        return syscall(SYS_dup3, fd_of(f[1]), num(f[2]), 0);
    if (!strcmp(op, "chdir"))
        return syscall(SYS_chdir, f[1]);
    if (!strcmp(op, "fchdir"))
        return syscall(SYS_fchdir, dirfd_of(f[1]));
    if (!strcmp(op, "getcwd")) {
        long r = syscall(SYS_getcwd, buf, sizeof buf);
        if (r > 0) {
            outs("C:");
            outs(buf);
            outs("\n");
        }
        return r;
    }
    if (!strcmp(op, "getdents"))
        return getdents(dirfd_of(f[1]));
    if (!strcmp(op, "ls")) {
        long fd = syscall(SYS_openat, AT_FDCWD, f[1], O_RDONLY | O_DIRECTORY);
        if (fd < 0)
            return fd;
        long r = getdents(fd);
        syscall(SYS_close, fd);
        return r;
    }
    if (!strcmp(op, "stat"))
        return do_statx(AT_FDCWD, f[1], 0);
    if (!strcmp(op, "lstat"))
        return do_statx(AT_FDCWD, f[1], AT_SYMLINK_NOFOLLOW);
    if (!strcmp(op, "fstatat"))
        return do_statx(dirfd_of(f[1]), f[2], (int)num(f[3]));
    if (!strcmp(op, "fstat"))
        return do_statx(fd_of(f[1]), "", AT_EMPTY_PATH);
    if (!strcmp(op, "oldstat"))
        return oldstat(f[1]);
    if (!strcmp(op, "readlink") || !strcmp(op, "readlinkat")) {
        long r = !strcmp(op, "readlink")
                     ? syscall(SYS_readlinkat, AT_FDCWD, f[1], buf, sizeof buf - 1)
                     : syscall(SYS_readlinkat, dirfd_of(f[1]), f[2], buf, sizeof buf - 1);
        if (r >= 0) {
            buf[r] = 0;
            outs("L:");
            outs(buf);
            outs("\n");
        }
        return r;
    }
    if (!strcmp(op, "access"))
        return syscall(SYS_faccessat, AT_FDCWD, f[1], num(f[2]));
    if (!strcmp(op, "unlink"))
        return syscall(SYS_unlink, f[1]);
    if (!strcmp(op, "unlinkat"))
        return syscall(SYS_unlinkat, dirfd_of(f[1]), f[2], num(f[3]));
    if (!strcmp(op, "rmdir"))
        return syscall(SYS_rmdir, f[1]);
    if (!strcmp(op, "mkdir"))
        return syscall(SYS_mkdir, f[1], 0755);
    if (!strcmp(op, "mkdirat"))
        return syscall(SYS_mkdirat, dirfd_of(f[1]), f[2], 0755);
    if (!strcmp(op, "rename"))
        return syscall(SYS_rename, f[1], f[2]);
    if (!strcmp(op, "renameat2"))
        return syscall(SYS_renameat2, dirfd_of(f[1]), f[2], dirfd_of(f[3]), f[4], num(f[5]));
    if (!strcmp(op, "link"))
        return syscall(SYS_link, f[1], f[2]);
    if (!strcmp(op, "linkat"))
        return syscall(SYS_linkat, dirfd_of(f[1]), f[2], dirfd_of(f[3]), f[4], num(f[5]));
    if (!strcmp(op, "symlink"))
        return syscall(SYS_symlink, f[1], f[2]);
    if (!strcmp(op, "symlinkat"))
        return syscall(SYS_symlinkat, f[1], dirfd_of(f[2]), f[3]);
    if (!strcmp(op, "truncate"))
        return syscall(SYS_truncate, f[1], num(f[2]));
    if (!strcmp(op, "ftruncate"))
        return syscall(SYS_ftruncate, fd_of(f[1]), num(f[2]));
    if (!strcmp(op, "chmod"))
        return syscall(SYS_chmod, f[1], num(f[2]));
    if (!strcmp(op, "fchmod"))
        return syscall(SYS_fchmod, dirfd_of(f[1]), num(f[2]));
    if (!strcmp(op, "fchmodat"))
        return syscall(SYS_fchmodat, dirfd_of(f[1]), f[2], num(f[3]));
    if (!strcmp(op, "chown"))
        return syscall(SYS_fchownat, AT_FDCWD, f[1], getuid(), getgid(), 0);
    if (!strcmp(op, "fchown"))
        return syscall(SYS_fchownat, dirfd_of(f[1]), "", getuid(), getgid(), AT_EMPTY_PATH);
    if (!strcmp(op, "utimes"))
        return syscall(SYS_utimensat, AT_FDCWD, f[1], ts, 0);
    if (!strcmp(op, "futimens"))
        return syscall(SYS_utimensat, dirfd_of(f[1]), NULL, ts, 0);
    if (!strcmp(op, "mknod"))
        return syscall(SYS_mknodat, AT_FDCWD, f[1], S_IFIFO | 0644, 0);
    if (!strcmp(op, "sendfile"))
        return syscall(SYS_sendfile, dirfd_of(f[1]), dirfd_of(f[2]), NULL, num(f[3]));
    if (!strcmp(op, "mmap"))
        return mapped(fd_of(f[1]), NULL);
    if (!strcmp(op, "mmapw"))
        return mapped(fd_of(f[1]), f[2]);
    if (!strcmp(op, "statfs")) {
        static char sfs[256];
        return syscall(SYS_statfs, f[1], sfs);
    }
    errno = EINVAL;
    return -2;
}

int main(int argc, char **argv)
{
    int failed = 0;
    if (argc < 2) {
        outs("usage: probe STEP...\n");
        return 11;
    }
    for (int i = 1; i < argc; i++) {
        char *f[NF + 1] = {0};
        int n = 0;
        for (char *s = argv[i]; n < NF && s; n++) {
            f[n] = s;
            s = strchr(s, '|');
            if (s)
                *s++ = 0;
        }
        errno = 0;
        long r = step(f);
        if (r == -2 && errno == EINVAL)
            return 11;
        if (r < 0) {
            failed = 1;
            snprintf(buf, sizeof buf, "S%d err %d\n", i, errno);
        } else {
            snprintf(buf, sizeof buf, "S%d ok %ld\n", i, r);
        }
        outs(buf);
    }
    return failed ? 10 : 0;
}
