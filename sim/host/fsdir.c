/* fsdir.c - files by name: stat and statx, directory listings, readlink,
 * mkdir/unlink/rename/symlink, access, and the current directory.
 *
 * Every path goes through path.c's confined resolution (es_hs_open_at,
 * es_hs_name_at, es_hs_split): nothing here opens a host path itself.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "host_int.h"

#ifndef SYS_faccessat2
#define SYS_faccessat2 439
#endif

/* ---- directory positions for 32-bit callers ---- */

/* The cookie that follows position `pos` for host offset `hoff` (see
 * es_hfd.doff); -1 when out of memory. */
static int64_t dir_cookie(es_hfd *f, uint32_t pos, uint64_t hoff)
{
    if (!f->ndoff) {
        f->cdoff = 64;
        f->doff = malloc(f->cdoff * sizeof *f->doff);
        if (!f->doff)
            return -1;
        f->doff[0] = 0;
        f->ndoff = 1;
    }
    if (pos + 1 < f->ndoff && f->doff[pos + 1] == hoff)
        return pos + 1; /* read again after a seek back */
    if (f->ndoff == f->cdoff) {
        if (f->cdoff >= 0x40000000u)
            return -1;
        uint64_t *n = realloc(f->doff, 2 * f->cdoff * sizeof *n);
        if (!n)
            return -1;
        f->doff = n;
        f->cdoff *= 2;
    }
    f->doff[f->ndoff] = hoff;
    return f->ndoff++;
}

int64_t es_hs_dir_seek(es_hfd *f, int64_t off, int whence)
{
    if (whence == SEEK_CUR && off == 0)
        return f->dpos; /* telldir */
    if (whence != SEEK_SET)
        return -EINVAL;
    if (off < 0 || (off > 0 && (uint64_t)off >= f->ndoff))
        return -EINVAL;
    if (lseek(f->host, off ? (off_t)f->doff[off] : 0, SEEK_SET) < 0)
        return -errno;
    f->dpos = (uint32_t)off;
    return off;
}

/* ---- stat ---- */

/* The layouts of es_hs_conv_stat: the old* calls take __old_kernel_stat
 * (3), the *64 calls i386's stat64 (1), the others the caller's struct
 * stat (compat_stat for i386). */
enum { STAT_OLD = 3, STAT_64 = 1 };

static int stat_native(const es_scall *c)
{
    return c->abi == ES_ABI_I386 ? 2 : 0;
}

static int64_t put_stat(es_machine *m, const es_scall *c, int hfd, int kind, uint64_t ubuf)
{
    struct stat st;
    if (fstat(hfd, &st))
        return -errno;
    uint8_t out[144];
    int n = es_hs_conv_stat(&st, kind, out);
    if (n < 0)
        return n;
    return es_hs_put(m, c, ubuf, out, (size_t)n);
}

static int64_t do_statat(es_machine *m, const es_scall *c, int kind, int64_t dirfd, uint64_t upath,
                         uint64_t ubuf, int flag)
{
    if (flag & ~(G_AT_SYMLINK_NOFOLLOW | G_AT_NO_AUTOMOUNT | G_AT_EMPTY_PATH))
        return -EINVAL;
    int fd = es_hs_open_at(m, c, dirfd, upath, !(flag & G_AT_SYMLINK_NOFOLLOW),
                          (flag & G_AT_EMPTY_PATH) != 0);
    if (fd < 0)
        return fd;
    int64_t r = put_stat(m, c, fd, kind, ubuf);
    close(fd);
    return r;
}

static int64_t do_statx(es_machine *m, const es_scall *c, int64_t dirfd, uint64_t upath,
                        unsigned flags, unsigned mask, uint64_t ubuf)
{
    if (flags & ~(G_AT_SYMLINK_NOFOLLOW | G_AT_NO_AUTOMOUNT | G_AT_EMPTY_PATH |
                  G_AT_STATX_SYNC_TYPE))
        return -EINVAL;
    if ((flags & G_AT_STATX_SYNC_TYPE) == G_AT_STATX_SYNC_TYPE || (mask & 0x80000000u))
        return -EINVAL;
    int fd = es_hs_open_at(m, c, dirfd, upath, !(flags & G_AT_SYMLINK_NOFOLLOW),
                          (flags & G_AT_EMPTY_PATH) != 0);
    if (fd < 0)
        return fd;
    uint8_t buf[256];
    memset(buf, 0, sizeof buf);
    long r = syscall(SYS_statx, fd, "", AT_EMPTY_PATH | (flags & G_AT_STATX_SYNC_TYPE), mask, buf);
    int e = errno;
    close(fd);
    if (r)
        return -e;
    /* Linux 4.17's struct statx ends at stx_dev_minor (0x90); its mask has
     * STATX_BASIC_STATS | STATX_BTIME */
    memset(buf + 0x90, 0, sizeof buf - 0x90);
    es_st32(buf, es_ld32(buf) & 0xfff);
    return es_hs_put(m, c, ubuf, buf, sizeof buf);
}

/* ---- directories ---- */

/* Longest record of any layout: a 255-byte name, its NUL and padding. */
#define DIRENT_MAX 288

/* The host's linux_dirent64 record `in` in the caller's layout, with d_off
 * `off`, into out: its length, or 0 when the inode number does not fit the
 * compat layout (EOVERFLOW). */
static size_t dirent_layout(const es_scall *c, bool d64, const uint8_t *in, uint64_t off,
                            uint8_t *out)
{
    uint64_t ino = es_ld64(in);
    uint16_t reclen = (uint16_t)(in[16] | in[17] << 8);
    uint8_t type = in[18];
    const char *name = (const char *)in + 19;
    size_t nl = strnlen(name, 255), rl;
    if (d64) {
        rl = reclen < DIRENT_MAX ? reclen : DIRENT_MAX;
        memcpy(out, in, rl);
        es_st64(out + 8, off);
        return rl;
    }
    if (c->compat) {
        /* struct compat_linux_dirent: u32 ino, u32 off, u16 reclen, name, pad, type */
        if ((uint32_t)ino != ino)
            return 0;
        rl = (10 + nl + 2 + 3) & ~(size_t)3;
        memset(out, 0, rl);
        es_st32(out, (uint32_t)ino);
        es_st32(out + 4, (uint32_t)off);
        es_st16(out + 8, (uint16_t)rl);
        memcpy(out + 10, name, nl);
    } else {
        /* struct linux_dirent: u64 ino, u64 off, u16 reclen, name, pad, type */
        rl = (18 + nl + 2 + 7) & ~(size_t)7;
        memset(out, 0, rl);
        es_st64(out, ino);
        es_st64(out + 8, off);
        es_st16(out + 16, (uint16_t)rl);
        memcpy(out + 18, name, nl);
    }
    out[rl - 1] = type;
    return rl;
}

/* getdents/getdents64 as fs/readdir.c: records go to the guest one at a
 * time, and the first one that cannot (no room: EINVAL; a fault: EFAULT;
 * an inode number too wide: EOVERFLOW) ends the call, which then returns
 * the bytes of the records before it if there are any, else the error.
 * The directory position is that of the last record returned, so the
 * next call starts with the one that failed (the host read ahead: it is
 * seeked back). */
static int64_t do_getdents(es_machine *m, const es_scall *c, int64_t fd, uint64_t ubuf,
                           uint64_t count, bool d64)
{
    es_hfd *f = es_hs_fd(m->host, fd);
    if (!f)
        return -EBADF;
    uint64_t top = es_hs_task_size(c);
    if (ubuf > top || count > top - ubuf) /* access_ok(dirent, count) */
        return -EFAULT;
    if (count > ES_HS_CHUNK)
        count = ES_HS_CHUNK;
    uint8_t *in = malloc(count + 1);
    if (!in)
        return -ENOMEM;
    off_t resume = lseek(f->host, 0, SEEK_CUR); /* where a failed first record comes again */
    long n = syscall(SYS_getdents64, f->host, in, (unsigned)count);
    if (n < 0) {
        int e = errno;
        free(in);
        return -e;
    }
    size_t o = 0;
    int64_t err = 0;
    bool cookies = c->ptr32; /* 32-bit callers get small d_off cookies */
    long i = 0;
    while (i < n) {
        uint64_t hoff = es_ld64(in + i + 8), off = hoff;
        if (cookies) {
            int64_t k = dir_cookie(f, f->dpos, hoff);
            if (k < 0) {
                err = -ENOMEM;
                break;
            }
            off = (uint64_t)k;
        }
        uint8_t rec[DIRENT_MAX];
        size_t rl = dirent_layout(c, d64, in + i, off, rec);
        err = !rl ? -EOVERFLOW : o + rl > count ? -EINVAL : 0;
        if (!err && es_hs_put(m, c, ubuf + o, rec, rl))
            err = -EFAULT;
        if (err)
            break;
        o += rl;
        resume = (off_t)hoff;
        if (cookies)
            f->dpos = (uint32_t)off;
        i += (uint16_t)(in[i + 16] | in[i + 17] << 8);
    }
    if (i < n) /* the rest comes next call */
        lseek(f->host, resume, SEEK_SET);
    free(in);
    return o ? (int64_t)o : err;
}

static int64_t do_readlink(es_machine *m, const es_scall *c, int64_t dirfd, uint64_t upath,
                           uint64_t ubuf, int64_t bufsiz)
{
    struct es_host *h = m->host;
    if ((int)bufsiz <= 0)
        return -EINVAL;
    char gp[ES_HOST_PATH_MAX], tgt[ES_HOST_PATH_MAX];
    int r = es_hs_get_gp(m, c, dirfd, upath, gp, sizeof gp, false);
    if (r)
        return r;
    ssize_t n;
    int pfd = -1;
    if (es_hs_is_proc_self_exe(gp)) {
        if (!h->exe[0])
            return -ENOENT;
        n = (ssize_t)strlen(h->exe);
        memcpy(tgt, h->exe, (size_t)n);
    } else if (!strcmp(gp, "/proc/self/cwd")) {
        n = (ssize_t)strlen(h->cwd);
        memcpy(tgt, h->cwd, (size_t)n);
    } else if (sscanf(gp, "/proc/self/fd/%d", &pfd) == 1 && pfd >= 0) {
        /* the guest's fd, named by its guest path (the host's fd numbers
         * are not the guest's) */
        char num[32];
        snprintf(num, sizeof num, "/proc/self/fd/%d", pfd);
        if (strcmp(gp, num))
            return -ENOENT;
        es_hfd *f = es_hs_fd(h, pfd);
        if (!f)
            return -ENOENT;
        if (es_hs_gpath_of(h, f->host, tgt, sizeof tgt)) {
            /* pipes, ttys and files outside the root: the host's text
             * ("pipe:[123]") when it is not a path, else nothing */
            char link[64];
            snprintf(link, sizeof link, "/proc/self/fd/%d", f->host);
            n = readlink(link, tgt, sizeof tgt - 1);
            if (n < 0 || tgt[0] == '/')
                return -ENOENT;
            tgt[n] = 0;
        }
        n = (ssize_t)strlen(tgt);
    } else {
        int dfd;
        char name[256];
        size_t off;
        r = es_hs_split(h, gp, false, &dfd, name, &off);
        if (r)
            return r;
        n = readlinkat(dfd, name, tgt, sizeof tgt);
        int e = errno;
        close(dfd);
        if (n < 0)
            return -e;
    }
    if (n > (int)bufsiz)
        n = (int)bufsiz;
    if (es_hs_put(m, c, ubuf, tgt, (size_t)n))
        return -EFAULT;
    return n;
}

static int64_t do_mkdir(es_machine *m, const es_scall *c, int64_t dirfd, uint64_t upath,
                        uint32_t mode)
{
    int dfd;
    char name[256];
    int r = es_hs_name_at(m, c, dirfd, upath, true, &dfd, name);
    if (r)
        return r;
    r = strcmp(name, ".") ? mkdirat(dfd, name, (mode & 07777) & ~m->host->umask) : (errno = EEXIST, -1);
    int e = errno;
    close(dfd);
    return r ? -e : 0;
}

static int64_t do_unlink(es_machine *m, const es_scall *c, int64_t dirfd, uint64_t upath, int flag)
{
    if (flag & ~G_AT_REMOVEDIR)
        return -EINVAL;
    int dfd;
    char name[256];
    int r = es_hs_name_at(m, c, dirfd, upath, false, &dfd, name);
    if (r)
        return r;
    r = strcmp(name, ".") ? unlinkat(dfd, name, flag ? AT_REMOVEDIR : 0) : (errno = EINVAL, -1);
    int e = errno;
    close(dfd);
    return r ? -e : 0;
}

static int64_t do_rename(es_machine *m, const es_scall *c, int64_t od, uint64_t op, int64_t nd,
                         uint64_t np, unsigned flags)
{
    int ofd, nfd;
    char on[256], nn[256];
    int r = es_hs_name_at(m, c, od, op, false, &ofd, on);
    if (r)
        return r;
    r = es_hs_name_at(m, c, nd, np, true, &nfd, nn);
    if (r) {
        close(ofd);
        return r;
    }
    long x = (!strcmp(on, ".") || !strcmp(nn, ".")) ? (errno = EBUSY, -1)
                                                    : syscall(SYS_renameat2, ofd, on, nfd, nn, flags);
    int e = errno;
    close(ofd);
    close(nfd);
    return x ? -e : 0;
}

static int64_t do_symlink(es_machine *m, const es_scall *c, uint64_t utgt, int64_t nd, uint64_t np)
{
    char tgt[ES_HOST_PATH_MAX];
    int64_t n = es_hs_get_str(m, c, utgt, tgt, sizeof tgt);
    if (n < 0)
        return n;
    if (n == 0)
        return -ENOENT;
    int dfd;
    char name[256];
    int r = es_hs_name_at(m, c, nd, np, true, &dfd, name);
    if (r)
        return r;
    r = symlinkat(tgt, dfd, name);
    int e = errno;
    close(dfd);
    return r ? -e : 0;
}

static int64_t do_access(es_machine *m, const es_scall *c, int64_t dirfd, uint64_t upath, int mode)
{
    if (mode & ~7)
        return -EINVAL;
    int fd = es_hs_open_at(m, c, dirfd, upath, true, false);
    if (fd < 0)
        return fd;
    long r = syscall(SYS_faccessat2, fd, "", mode, AT_EMPTY_PATH);
    if (r && errno == ENOSYS) {
        char p[64];
        snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
        r = access(p, mode);
    }
    int e = errno;
    close(fd);
    if (r)
        return -e;
    if ((mode & W_OK) && !m->host->cfg.rw)
        return -EROFS;
    return 0;
}

static int64_t do_chdir(es_machine *m, const char *gp)
{
    struct es_host *h = m->host;
    int fd = es_hs_open_gp(h, gp, O_PATH | O_DIRECTORY, 0, true);
    if (fd < 0)
        return fd;
    char np[ES_HOST_PATH_MAX];
    int r = es_hs_gpath_of(h, fd, np, sizeof np);
    close(fd);
    if (r)
        return r;
    strcpy(h->cwd, np);
    return 0;
}

/* ---- services ---- */

static int64_t fstat_kind(es_machine *m, const es_scall *c, const uint64_t *a, int kind)
{
    es_hfd *f = es_hs_fd(m->host, (int)a[0]);
    if (!f)
        return -EBADF;
    return put_stat(m, c, f->host, kind, a[1]);
}

ES_SYS(fstat) { return fstat_kind(m, c, a, stat_native(c)); }
ES_SYS(fstat64) { return fstat_kind(m, c, a, STAT_64); }
ES_SYS(oldfstat) { return fstat_kind(m, c, a, STAT_OLD); }
ES_SYS(stat) { return do_statat(m, c, stat_native(c), G_AT_FDCWD, a[0], a[1], 0); }
ES_SYS(stat64) { return do_statat(m, c, STAT_64, G_AT_FDCWD, a[0], a[1], 0); }
ES_SYS(oldstat) { return do_statat(m, c, STAT_OLD, G_AT_FDCWD, a[0], a[1], 0); }
ES_SYS(lstat)
{
    return do_statat(m, c, stat_native(c), G_AT_FDCWD, a[0], a[1], G_AT_SYMLINK_NOFOLLOW);
}
ES_SYS(lstat64) { return do_statat(m, c, STAT_64, G_AT_FDCWD, a[0], a[1], G_AT_SYMLINK_NOFOLLOW); }
ES_SYS(oldlstat) { return do_statat(m, c, STAT_OLD, G_AT_FDCWD, a[0], a[1], G_AT_SYMLINK_NOFOLLOW); }
ES_SYS(newfstatat) { return do_statat(m, c, stat_native(c), (int)a[0], a[1], a[2], (int)a[3]); }
ES_SYS(fstatat64) { return do_statat(m, c, STAT_64, (int)a[0], a[1], a[2], (int)a[3]); }
ES_SYS(statx) { return do_statx(m, c, (int)a[0], a[1], (unsigned)a[2], (unsigned)a[3], a[4]); }
ES_SYS(getdents64) { return do_getdents(m, c, (int)a[0], a[1], (uint32_t)a[2], true); }
ES_SYS(getdents) { return do_getdents(m, c, (int)a[0], a[1], (uint32_t)a[2], false); }
ES_SYS(readlink) { return do_readlink(m, c, G_AT_FDCWD, a[0], a[1], (int)a[2]); }
ES_SYS(readlinkat) { return do_readlink(m, c, (int)a[0], a[1], a[2], (int)a[3]); }
ES_SYS(access) { return do_access(m, c, G_AT_FDCWD, a[0], (int)a[1]); }
ES_SYS(faccessat) { return do_access(m, c, (int)a[0], a[1], (int)a[2]); }
ES_SYS(mkdir) { return do_mkdir(m, c, G_AT_FDCWD, a[0], (uint32_t)a[1]); }
ES_SYS(mkdirat) { return do_mkdir(m, c, (int)a[0], a[1], (uint32_t)a[2]); }
ES_SYS(unlink) { return do_unlink(m, c, G_AT_FDCWD, a[0], 0); }
ES_SYS(rmdir) { return do_unlink(m, c, G_AT_FDCWD, a[0], G_AT_REMOVEDIR); }
ES_SYS(unlinkat) { return do_unlink(m, c, (int)a[0], a[1], (int)a[2]); }
ES_SYS(rename) { return do_rename(m, c, G_AT_FDCWD, a[0], G_AT_FDCWD, a[1], 0); }
ES_SYS(renameat) { return do_rename(m, c, (int)a[0], a[1], (int)a[2], a[3], 0); }
ES_SYS(renameat2) { return do_rename(m, c, (int)a[0], a[1], (int)a[2], a[3], (unsigned)a[4]); }
ES_SYS(symlink) { return do_symlink(m, c, a[0], G_AT_FDCWD, a[1]); }
ES_SYS(symlinkat) { return do_symlink(m, c, a[0], (int)a[1], a[2]); }

ES_SYS(getcwd)
{
    struct es_host *h = m->host;
    size_t len = strlen(h->cwd) + 1;
    if (a[1] < len)
        return -ERANGE;
    int r = es_hs_put(m, c, a[0], h->cwd, len);
    return r ? r : (int64_t)len;
}

ES_SYS(chdir)
{
    char gp[ES_HOST_PATH_MAX];
    int r = es_hs_get_gp(m, c, G_AT_FDCWD, a[0], gp, sizeof gp, false);
    return r ? r : do_chdir(m, gp);
}

ES_SYS(fchdir)
{
    struct es_host *h = m->host;
    char np[ES_HOST_PATH_MAX];
    int r = es_hs_dirfd_gpath(h, (int)a[0], np, sizeof np);
    if (!r)
        strcpy(h->cwd, np);
    return r;
}
