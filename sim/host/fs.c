/* fs.c - files for the guest: the guest fd table, paths confined to the
 * guest root, and the file system calls.
 *
 * Confinement: every guest path is composed into an absolute guest path
 * (cwd or a directory fd's path + relative path) and resolved from the
 * root directory fd.  The directory part is opened with openat2(...,
 * RESOLVE_IN_ROOT) when the host kernel has it (5.6+; checked once at
 * init), otherwise by walking it component by component with O_NOFOLLOW,
 * where ".." at the root stays at the root and symlinks are expanded
 * inside the root.  The last component is always handled here with
 * O_NOFOLLOW, following a symlink by re-resolving its target the same way,
 * so no host-side path lookup ever leaves the root.  Guest fds map to host
 * fds through h->fds: the guest names only fds it opened (or 0/1/2).
 */
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "host_int.h"

#define CHUNK (1u << 20)          /* host bounce buffer for read/write */
#define MAX_RW 0x7ffff000ull      /* MAX_RW_COUNT */
#define MAX_LINKS 40              /* MAXSYMLINKS */
#define G_AT_FDCWD (-100)
#define G_AT_SYMLINK_NOFOLLOW 0x100
#define G_AT_REMOVEDIR 0x200
#define G_AT_NO_AUTOMOUNT 0x800
#define G_AT_EMPTY_PATH 0x1000
#define G_AT_STATX_SYNC_TYPE 0x6000

#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#ifndef SYS_faccessat2
#define SYS_faccessat2 439
#endif
struct es_open_how {
    uint64_t flags, mode, resolve;
};
#define ES_RESOLVE_NO_MAGICLINKS 0x02
#define ES_RESOLVE_IN_ROOT 0x10

/* ---- fd table ---- */

es_hfd *es_hs_fd(struct es_host *h, int64_t fd)
{
    if (fd < 0 || fd >= ES_HOST_MAX_FDS || h->fds[fd].host < 0)
        return NULL;
    return &h->fds[fd];
}

int es_hs_hostfd(es_machine *m, int64_t fd)
{
    es_hfd *f = es_hs_fd(m->host, fd);
    return f ? f->host : -1;
}

static int nofile(struct es_host *h)
{
    uint64_t n = h->rlim[7].cur;
    return n > ES_HOST_MAX_FDS ? ES_HOST_MAX_FDS : (int)n;
}

/* Installs host fd hfd (which we own) as the lowest free guest fd >= min. */
static int fd_install(struct es_host *h, int hfd, bool cloexec, int min)
{
    int lim = nofile(h);
    for (int i = min < 0 ? 0 : min; i < lim; i++) {
        if (h->fds[i].host < 0) {
            h->fds[i] = (es_hfd){.host = hfd, .owned = true, .cloexec = cloexec};
            return i;
        }
    }
    close(hfd);
    return -EMFILE;
}

int es_hs_fd_install(struct es_host *h, int hfd, bool cloexec)
{
    return fd_install(h, hfd, cloexec, 0);
}

static void fd_close(struct es_host *h, int fd)
{
    es_hfd *f = &h->fds[fd];
    if (f->owned)
        close(f->host);
    free(f->doff);
    *f = (es_hfd){.host = -1};
}

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

/* lseek on a directory a 32-bit caller reads: cookies, not host offsets. */
static int64_t dir_seek(es_hfd *f, int64_t off, int whence)
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

/* ---- confined path resolution ---- */

/* Guest path of a host fd, from the host's /proc/self/fd link. */
static int gpath_of(struct es_host *h, int hfd, char *out, size_t cap)
{
    char link[64], real[ES_HOST_PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", hfd);
    ssize_t n = readlink(link, real, sizeof real - 1);
    if (n < 0)
        return -ENOENT;
    real[n] = 0;
    if (strncmp(real, h->root, h->rootlen) || (real[h->rootlen] != '/' && real[h->rootlen]))
        return -ENOENT; /* cannot happen for fds opened through the root */
    const char *rest = real + h->rootlen;
    if (!*rest)
        rest = "/";
    if (strlen(rest) >= cap)
        return -ENAMETOOLONG;
    strcpy(out, rest);
    return 0;
}

/* Absolute guest path of `path` relative to guest dirfd (or the cwd). */
static int compose(es_machine *m, int64_t dirfd, const char *path, char *out, size_t cap)
{
    struct es_host *h = m->host;
    if (path[0] == '/') {
        if (strlen(path) >= cap)
            return -ENAMETOOLONG;
        strcpy(out, path);
        return 0;
    }
    char base[ES_HOST_PATH_MAX];
    if ((int)dirfd == G_AT_FDCWD) {
        strcpy(base, h->cwd);
    } else {
        es_hfd *f = es_hs_fd(h, (int)dirfd);
        if (!f)
            return -EBADF;
        struct stat st;
        if (fstat(f->host, &st))
            return -errno;
        if (!S_ISDIR(st.st_mode))
            return -ENOTDIR;
        int r = gpath_of(h, f->host, base, sizeof base);
        if (r)
            return r;
    }
    if (snprintf(out, cap, "%s/%s", base, path) >= (int)cap)
        return -ENAMETOOLONG;
    return 0;
}

/* Walks `rel` (relative to the root) as a directory, one component at a
 * time with O_NOFOLLOW, expanding symlinks inside the root.  Returns an
 * O_PATH fd of the directory or -errno. */
static int walk_dir(struct es_host *h, const char *rel)
{
    enum { DEPTH = 256 };
    int stack[DEPTH], depth = 0, links = 0;
    char buf[2 * ES_HOST_PATH_MAX];
    if (strlen(rel) >= sizeof buf)
        return -ENAMETOOLONG;
    strcpy(buf, rel);
    char *p = buf;
    int err = 0;
    while (*p) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        char *end = strchr(p, '/');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char comp[256];
        if (len > 255) {
            err = -ENAMETOOLONG;
            goto out;
        }
        memcpy(comp, p, len);
        comp[len] = 0;
        p += len;
        if (!strcmp(comp, "."))
            continue;
        if (!strcmp(comp, "..")) {
            if (depth) /* never above the root */
                close(stack[--depth]);
            continue;
        }
        int cur = depth ? stack[depth - 1] : h->rootfd;
        int fd = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
            err = -errno;
            goto out;
        }
        struct stat st;
        if (fstat(fd, &st)) {
            err = -errno;
            close(fd);
            goto out;
        }
        if (S_ISLNK(st.st_mode)) {
            char tgt[ES_HOST_PATH_MAX];
            ssize_t n = readlinkat(fd, "", tgt, sizeof tgt - 1);
            close(fd);
            if (n < 0) {
                err = -errno;
                goto out;
            }
            tgt[n] = 0;
            if (++links > MAX_LINKS) {
                err = -ELOOP;
                goto out;
            }
            char nbuf[2 * ES_HOST_PATH_MAX];
            if (snprintf(nbuf, sizeof nbuf, "%s/%s", tgt, p) >= (int)sizeof nbuf) {
                err = -ENAMETOOLONG;
                goto out;
            }
            if (tgt[0] == '/') /* absolute targets start again at the root */
                while (depth)
                    close(stack[--depth]);
            strcpy(buf, nbuf);
            p = buf;
            continue;
        }
        if (!S_ISDIR(st.st_mode)) {
            close(fd);
            err = -ENOTDIR;
            goto out;
        }
        if (depth == DEPTH) {
            close(fd);
            err = -ENAMETOOLONG;
            goto out;
        }
        stack[depth++] = fd;
    }
out:
    if (err) {
        while (depth)
            close(stack[--depth]);
        return err;
    }
    if (!depth) {
        int fd = fcntl(h->rootfd, F_DUPFD_CLOEXEC, 0);
        return fd < 0 ? -errno : fd;
    }
    int fd = stack[--depth];
    while (depth)
        close(stack[--depth]);
    return fd;
}

static int open_dir(struct es_host *h, const char *rel)
{
    if (h->use_openat2) {
        struct es_open_how how = {
            .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
            .resolve = ES_RESOLVE_IN_ROOT | ES_RESOLVE_NO_MAGICLINKS,
        };
        for (int tries = 0; tries < 4; tries++) {
            long fd = syscall(SYS_openat2, h->rootfd, *rel ? rel : ".", &how, sizeof how);
            if (fd >= 0)
                return (int)fd;
            if (errno != EAGAIN) /* EAGAIN: a rename raced the lookup */
                return -errno;
        }
    }
    return walk_dir(h, rel);
}

/* Splits absolute guest path gp into (O_PATH fd of its directory, last
 * component).  A path ending in ".", ".." or "/" resolves entirely as a
 * directory and yields name "." (`create`: trailing slashes are dropped
 * instead, so mkdir("d/") names d).  *last_off: where the last component
 * starts in gp (its directory is gp[0, last_off)). */
static int split(struct es_host *h, const char *gp, bool create, int *dirfd, char *name,
                 size_t *last_off)
{
    char p[ES_HOST_PATH_MAX];
    size_t n = strlen(gp);
    if (n >= sizeof p)
        return -ENAMETOOLONG;
    memcpy(p, gp, n + 1);
    bool slash = false;
    while (n > 1 && p[n - 1] == '/') {
        p[--n] = 0;
        slash = true;
    }
    char *last = strrchr(p, '/');
    const char *lname = last ? last + 1 : p;
    bool whole = !*lname || !strcmp(lname, ".") || !strcmp(lname, "..") || (slash && !create);
    if (strlen(lname) > 255)
        return -ENAMETOOLONG;
    int fd;
    if (whole) {
        fd = open_dir(h, p + (p[0] == '/'));
        strcpy(name, ".");
        *last_off = n;
    } else {
        *last_off = (size_t)(lname - p);
        strcpy(name, lname);
        if (last)
            *last = 0;
        fd = open_dir(h, p + (p[0] == '/'));
    }
    if (fd < 0)
        return fd;
    *dirfd = fd;
    return 0;
}

static bool is_proc_self_exe(const char *gp)
{
    return !strcmp(gp, "/proc/self/exe");
}

/* Opens absolute guest path gp with host open flags (O_NOFOLLOW is added;
 * a symlink in last position is followed by re-resolution when `follow`).
 * Returns a host fd or -errno. */
static int open_gp(struct es_host *h, const char *gp0, int flags, mode_t mode, bool follow)
{
    char gp[2 * ES_HOST_PATH_MAX];
    if (strlen(gp0) >= sizeof gp)
        return -ENAMETOOLONG;
    strcpy(gp, gp0);
    if (is_proc_self_exe(gp) && h->exe[0] && follow)
        strcpy(gp, h->exe);
    for (int links = 0;; links++) {
        int dfd;
        char name[256];
        size_t off;
        int r = split(h, gp, (flags & O_CREAT) != 0, &dfd, name, &off);
        if (r)
            return r;
        struct stat st;
        if (follow && strcmp(name, ".") && !fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) &&
            S_ISLNK(st.st_mode)) {
            char tgt[ES_HOST_PATH_MAX];
            ssize_t n = readlinkat(dfd, name, tgt, sizeof tgt - 1);
            close(dfd);
            if (n < 0)
                return -errno;
            tgt[n] = 0;
            if (links >= MAX_LINKS)
                return -ELOOP;
            char ngp[2 * ES_HOST_PATH_MAX];
            if (tgt[0] == '/')
                snprintf(ngp, sizeof ngp, "%s", tgt);
            else if (snprintf(ngp, sizeof ngp, "%.*s/%s", (int)off, gp, tgt) >= (int)sizeof ngp)
                return -ENAMETOOLONG;
            strcpy(gp, ngp);
            continue;
        }
        int fd = openat(dfd, name, flags | O_NOFOLLOW | O_CLOEXEC, mode);
        int e = errno;
        close(dfd);
        return fd < 0 ? -e : fd;
    }
}

/* Guest path argument -> composed absolute guest path. */
static int get_gp(es_machine *m, const es_scall *c, int64_t dirfd, uint64_t upath, char *gp,
                  size_t cap, bool empty_ok)
{
    char path[ES_HOST_PATH_MAX];
    int64_t n = es_hs_get_str(m, c, upath, path, sizeof path);
    if (n < 0)
        return (int)n;
    if (n == 0 && !empty_ok)
        return -ENOENT;
    return compose(m, dirfd, path, gp, cap);
}

/* Opens guest (dirfd, path) as O_PATH for stat-like calls; an empty path
 * with AT_EMPTY_PATH names dirfd itself. */
int es_hs_open_at(es_machine *m, const es_scall *c, int64_t dirfd, uint64_t upath,
                  bool follow, bool empty_path)
{
    struct es_host *h = m->host;
    char path[ES_HOST_PATH_MAX];
    int64_t n = es_hs_get_str(m, c, upath, path, sizeof path);
    if (n < 0)
        return (int)n;
    if (n == 0) {
        if (!empty_path)
            return -ENOENT;
        if ((int)dirfd == G_AT_FDCWD)
            return open_gp(h, h->cwd, O_PATH, 0, true);
        es_hfd *f = es_hs_fd(h, (int)dirfd);
        if (!f)
            return -EBADF;
        int fd = fcntl(f->host, F_DUPFD_CLOEXEC, 0);
        return fd < 0 ? -errno : fd;
    }
    char gp[ES_HOST_PATH_MAX];
    int r = compose(m, dirfd, path, gp, sizeof gp);
    if (r)
        return r;
    return open_gp(h, gp, O_PATH, 0, follow);
}

/* ---- read/write with guest buffers ---- */

/* Copies n bytes to the guest page by page; returns bytes copied. */
static size_t put_partial(es_machine *m, const es_scall *c, uint64_t va, const uint8_t *src, size_t n)
{
    size_t done = 0;
    while (done < n) {
        size_t k = 4096 - ((va + done) & 0xfff);
        if (k > n - done)
            k = n - done;
        if (es_hs_put(m, c, va + done, src + done, k))
            break;
        done += k;
    }
    return done;
}

static size_t get_partial(es_machine *m, const es_scall *c, uint8_t *dst, uint64_t va, size_t n)
{
    size_t done = 0;
    while (done < n) {
        size_t k = 4096 - ((va + done) & 0xfff);
        if (k > n - done)
            k = n - done;
        if (es_hs_get(m, c, dst + done, va + done, k))
            break;
        done += k;
    }
    return done;
}

/* read()/pread() of up to count bytes into guest buf; pos < 0: no offset. */
static int64_t do_read(es_machine *m, const es_scall *c, int hfd, uint64_t buf, uint64_t count,
                       int64_t pos)
{
    if (count > MAX_RW)
        count = MAX_RW;
    if (count == 0)
        return 0;
    size_t cap = count < CHUNK ? (size_t)count : CHUNK;
    uint8_t *tmp = malloc(cap);
    if (!tmp)
        return -ENOMEM;
    uint64_t done = 0;
    int64_t ret = 0;
    while (done < count) {
        size_t want = count - done < cap ? (size_t)(count - done) : cap;
        ssize_t r = pos < 0 ? read(hfd, tmp, want) : pread(hfd, tmp, want, pos + (off_t)done);
        if (r < 0) {
            ret = done ? 0 : -errno;
            break;
        }
        size_t put = put_partial(m, c, buf + done, tmp, (size_t)r);
        done += put;
        if (put < (size_t)r) {
            /* Linux stops at the first bad byte: give the rest back */
            if (pos < 0)
                lseek(hfd, -(off_t)((size_t)r - put), SEEK_CUR);
            if (!done)
                ret = -EFAULT;
            break;
        }
        if ((size_t)r < want)
            break;
    }
    free(tmp);
    return ret < 0 ? ret : (int64_t)done;
}

/* SIGPIPE is blocked in this thread only, and one raised by the write is
 * taken back, so the process-wide disposition stays the embedder's. */
void es_hs_pipe_hold(void *old)
{
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, (sigset_t *)old);
}

void es_hs_pipe_release(es_machine *m, const void *old, bool broken)
{
    int e = errno;
    if (broken) {
        sigset_t pipe;
        sigemptyset(&pipe);
        sigaddset(&pipe, SIGPIPE);
        struct timespec zero = {0, 0};
        sigtimedwait(&pipe, NULL, &zero);
    }
    pthread_sigmask(SIG_SETMASK, (const sigset_t *)old, NULL);
    if (broken)
        es_hs_signal_self(m, SIGPIPE);
    errno = e;
}

ssize_t es_hs_host_write(es_machine *m, int hfd, const void *buf, size_t n, int64_t pos)
{
    if (pos >= 0)
        return pwrite(hfd, buf, n, (off_t)pos);
    sigset_t old;
    es_hs_pipe_hold(&old);
    ssize_t w = write(hfd, buf, n);
    es_hs_pipe_release(m, &old, w < 0 && errno == EPIPE);
    return w;
}

static int64_t do_write(es_machine *m, const es_scall *c, int hfd, uint64_t buf, uint64_t count,
                        int64_t pos)
{
    if (count > MAX_RW)
        count = MAX_RW;
    if (count == 0)
        return 0;
    size_t cap = count < CHUNK ? (size_t)count : CHUNK;
    uint8_t *tmp = malloc(cap);
    if (!tmp)
        return -ENOMEM;
    uint64_t done = 0;
    int64_t ret = 0;
    while (done < count) {
        size_t want = count - done < cap ? (size_t)(count - done) : cap;
        size_t got = get_partial(m, c, tmp, buf + done, want);
        if (!got) {
            ret = done ? 0 : -EFAULT;
            break;
        }
        ssize_t w = es_hs_host_write(m, hfd, tmp, got, pos < 0 ? -1 : pos + (int64_t)done);
        if (w < 0) {
            ret = done ? 0 : -errno;
            break;
        }
        done += (size_t)w;
        if ((size_t)w < want)
            break;
    }
    free(tmp);
    return ret < 0 ? ret : (int64_t)done;
}

/* readv/writev, and preadv/pwritev when pos >= 0. */
static int64_t do_rwv(es_machine *m, const es_scall *c, int64_t fd, uint64_t uvec, uint64_t cnt,
                      bool wr, int64_t pos)
{
    es_hfd *f = es_hs_fd(m->host, fd);
    if (!f)
        return -EBADF;
    if (cnt > 1024)
        return -EINVAL;
    es_iov iov[1024];
    int r = es_hs_get_iovec(m, c, uvec, cnt, iov);
    if (r)
        return r;
    /* rw_copy_check_uvector: the total is capped at MAX_RW_COUNT */
    uint64_t total = 0;
    for (uint64_t i = 0; i < cnt; i++) {
        if (iov[i].len > MAX_RW - total)
            iov[i].len = MAX_RW - total;
        total += iov[i].len;
    }
    int64_t done = 0;
    for (uint64_t i = 0; i < cnt; i++) {
        if (!iov[i].len)
            continue;
        int64_t p = pos < 0 ? -1 : pos + done;
        int64_t n = wr ? do_write(m, c, f->host, iov[i].base, iov[i].len, p)
                       : do_read(m, c, f->host, iov[i].base, iov[i].len, p);
        if (n < 0)
            return done ? done : n;
        done += n;
        if ((uint64_t)n < iov[i].len)
            break;
    }
    return done;
}

/* ---- open/close/dup ---- */

#define G_O_ACCMODE 03
#define G_O_CREAT 0100
#define G_O_TRUNC 01000
#define G_O_APPEND 02000
#define G_O_CLOEXEC 02000000
#define G_O_TMPFILE 020200000

static int64_t do_open(es_machine *m, const es_scall *c, int64_t dirfd, uint64_t upath, int flags,
                       uint32_t mode)
{
    struct es_host *h = m->host;
    char gp[ES_HOST_PATH_MAX];
    int r = get_gp(m, c, dirfd, upath, gp, sizeof gp, false);
    if (r)
        return r;
    bool writes = (flags & G_O_ACCMODE) != 0 || (flags & (G_O_CREAT | G_O_TRUNC | G_O_APPEND)) ||
                  (flags & G_O_TMPFILE) == G_O_TMPFILE; /* O_TMPFILE includes O_DIRECTORY */
    if (writes && !h->cfg.rw && !(flags & O_PATH))
        return -EROFS;
    /* x86 guests and the x86-64 host share the O_* values */
    bool follow = !(flags & O_NOFOLLOW) && !((flags & O_CREAT) && (flags & O_EXCL));
    int hfd = open_gp(h, gp, flags & ~O_CLOEXEC, (mode & 07777) & ~h->umask, follow);
    if (hfd < 0)
        return hfd;
    return fd_install(h, hfd, (flags & G_O_CLOEXEC) != 0, 0);
}

static int64_t do_dup3(struct es_host *h, int64_t oldfd, int64_t newfd, int flags, bool dup2)
{
    es_hfd *f = es_hs_fd(h, oldfd);
    if (!f)
        return -EBADF;
    if (oldfd == newfd)
        return dup2 ? newfd : -EINVAL;
    if (newfd < 0 || newfd >= nofile(h))
        return -EBADF;
    int hfd = fcntl(f->host, F_DUPFD_CLOEXEC, 3);
    if (hfd < 0)
        return -errno;
    if (h->fds[newfd].host >= 0)
        fd_close(h, (int)newfd);
    h->fds[newfd] = (es_hfd){.host = hfd, .owned = true, .cloexec = (flags & G_O_CLOEXEC) != 0};
    return newfd;
}

static int64_t do_fcntl(struct es_host *h, int64_t fd, unsigned cmd, uint64_t arg)
{
    es_hfd *f = es_hs_fd(h, fd);
    if (!f)
        return -EBADF;
    switch (cmd) {
    case 0:    /* F_DUPFD */
    case 1030: /* F_DUPFD_CLOEXEC */ {
        if ((int64_t)(int)arg < 0 || (int)arg >= nofile(h))
            return -EINVAL;
        int hfd = fcntl(f->host, F_DUPFD_CLOEXEC, 3);
        if (hfd < 0)
            return -errno;
        return fd_install(h, hfd, cmd == 1030, (int)arg);
    }
    case 1: return f->cloexec ? 1 : 0; /* F_GETFD */
    case 2: f->cloexec = arg & 1; return 0;
    case 3: { /* F_GETFL */
        int fl = fcntl(f->host, F_GETFL);
        return fl < 0 ? -errno : fl;
    }
    case 4: { /* F_SETFL: only the flags Linux lets change */
        int keep = fcntl(f->host, F_GETFL);
        if (keep < 0)
            return -errno;
        int chg = O_APPEND | O_NONBLOCK | O_ASYNC | O_DIRECT | O_NOATIME;
        if (fcntl(f->host, F_SETFL, (keep & ~chg) | ((int)arg & chg)))
            return -errno;
        return 0;
    }
    case 6: case 7: case 13: case 14: /* F_SETLK(W)(64): one process, never contended */
        return 0;
    case 1032: { /* F_GETPIPE_SZ */
        int r = fcntl(f->host, F_GETPIPE_SZ);
        return r < 0 ? -errno : r;
    }
    default: return -EINVAL;
    }
}

/* ---- stat ---- */

static int stat_kind(const es_scall *c, int sc)
{
    if (sc == ES_SC_oldstat || sc == ES_SC_oldlstat || sc == ES_SC_oldfstat)
        return 3;
    if (sc == ES_SC_stat64 || sc == ES_SC_lstat64 || sc == ES_SC_fstat64 || sc == ES_SC_fstatat64)
        return 1;
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

static int64_t do_statat(es_machine *m, const es_scall *c, int sc, int64_t dirfd, uint64_t upath,
                         uint64_t ubuf, int flag)
{
    if (flag & ~(G_AT_SYMLINK_NOFOLLOW | G_AT_NO_AUTOMOUNT | G_AT_EMPTY_PATH))
        return -EINVAL;
    int fd = es_hs_open_at(m, c, dirfd, upath, !(flag & G_AT_SYMLINK_NOFOLLOW),
                          (flag & G_AT_EMPTY_PATH) != 0);
    if (fd < 0)
        return fd;
    int64_t r = put_stat(m, c, fd, stat_kind(c, sc), ubuf);
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

static int64_t do_getdents(es_machine *m, const es_scall *c, int64_t fd, uint64_t ubuf,
                           uint64_t count, bool d64)
{
    es_hfd *f = es_hs_fd(m->host, fd);
    if (!f)
        return -EBADF;
    if (count > CHUNK)
        count = CHUNK;
    uint8_t *in = malloc(count + 1), *out = malloc(count + 1);
    if (!in || !out) {
        free(in);
        free(out);
        return -ENOMEM;
    }
    int64_t ret;
    long n = syscall(SYS_getdents64, f->host, in, (unsigned)count);
    if (n < 0) {
        ret = -errno;
        goto done;
    }
    size_t o = 0;
    int64_t resume = -1; /* d_off of the last entry that fit */
    bool cut = false;
    bool cookies = c->ptr32; /* 32-bit callers get small d_off cookies */
    uint32_t pos = f->dpos, lastpos = f->dpos;
    for (long i = 0; i < n;) {
        uint64_t ino = es_ld64(in + i), hoff = es_ld64(in + i + 8), off = hoff;
        if (cookies) {
            int64_t k = dir_cookie(f, pos, hoff);
            if (k < 0) {
                ret = o ? (int64_t)o : -ENOMEM;
                if (o)
                    lseek(f->host, resume, SEEK_SET);
                goto copy;
            }
            off = (uint64_t)k;
        }
        uint16_t reclen = (uint16_t)(in[i + 16] | in[i + 17] << 8);
        uint8_t type = in[i + 18];
        const char *name = (const char *)in + i + 19;
        size_t nl = strlen(name);
        size_t rl;
        if (d64) {
            rl = reclen;
            if (o + rl > count) { cut = true; break; }
            memcpy(out + o, in + i, rl);
            es_st64(out + o + 8, off);
        } else if (c->compat) {
            /* struct compat_linux_dirent: u32 ino, u32 off, u16 reclen, name, pad, type */
            rl = (10 + nl + 2 + 3) & ~(size_t)3;
            if (o + rl > count) { cut = true; break; }
            if ((uint32_t)ino != ino) {
                if (o) /* the entries so far; this one comes next time (and fails) */
                    lseek(f->host, resume, SEEK_SET);
                ret = o ? (int64_t)o : -EOVERFLOW;
                goto copy;
            }
            memset(out + o, 0, rl);
            es_st32(out + o, (uint32_t)ino);
            es_st32(out + o + 4, (uint32_t)off);
            es_st16(out + o + 8, (uint16_t)rl);
            memcpy(out + o + 10, name, nl);
            out[o + rl - 1] = type;
        } else {
            /* struct linux_dirent: u64 ino, u64 off, u16 reclen, name, pad, type */
            rl = (18 + nl + 2 + 7) & ~(size_t)7;
            if (o + rl > count) { cut = true; break; }
            memset(out + o, 0, rl);
            es_st64(out + o, ino);
            es_st64(out + o + 8, off);
            es_st16(out + o + 16, (uint16_t)rl);
            memcpy(out + o + 18, name, nl);
            out[o + rl - 1] = type;
        }
        o += rl;
        resume = (int64_t)hoff;
        lastpos = pos = (uint32_t)off;
        i += reclen;
    }
    if (cookies)
        f->dpos = lastpos;
    if (cut) {
        if (!o) {
            ret = -EINVAL; /* buffer too small for one entry */
            goto done;
        }
        lseek(f->host, resume, SEEK_SET); /* the rest comes next call */
    }
    ret = (int64_t)o;
copy:
    if (ret > 0 && es_hs_put(m, c, ubuf, out, (size_t)ret))
        ret = -EFAULT;
done:
    free(in);
    free(out);
    return ret;
}

static int64_t do_readlink(es_machine *m, const es_scall *c, int64_t dirfd, uint64_t upath,
                           uint64_t ubuf, int64_t bufsiz)
{
    struct es_host *h = m->host;
    if ((int)bufsiz <= 0)
        return -EINVAL;
    char gp[ES_HOST_PATH_MAX], tgt[ES_HOST_PATH_MAX];
    int r = get_gp(m, c, dirfd, upath, gp, sizeof gp, false);
    if (r)
        return r;
    ssize_t n;
    int pfd = -1;
    if (is_proc_self_exe(gp)) {
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
        if (gpath_of(h, f->host, tgt, sizeof tgt)) {
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
        r = split(h, gp, false, &dfd, name, &off);
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

/* mkdir/unlink/rename...: (dirfd, name) of a guest path, writes allowed only
 * with --rw. */
int es_hs_name_at(es_machine *m, const es_scall *c, int64_t dirfd, uint64_t upath, bool create,
                  int *dfd, char *name)
{
    if (!m->host->cfg.rw)
        return -EROFS;
    char gp[ES_HOST_PATH_MAX];
    int r = get_gp(m, c, dirfd, upath, gp, sizeof gp, false);
    if (r)
        return r;
    size_t off;
    return split(m->host, gp, create, dfd, name, &off);
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
    int fd = open_gp(h, gp, O_PATH | O_DIRECTORY, 0, true);
    if (fd < 0)
        return fd;
    char np[ES_HOST_PATH_MAX];
    int r = gpath_of(h, fd, np, sizeof np);
    close(fd);
    if (r)
        return r;
    strcpy(h->cwd, np);
    return 0;
}

/* ---- ioctl, poll ---- */

static int64_t do_ioctl(es_machine *m, const es_scall *c, int64_t fd, uint32_t cmd, uint64_t arg)
{
    es_hfd *f = es_hs_fd(m->host, fd);
    if (!f)
        return -EBADF;
    switch (cmd) {
    case 0x5401: { /* TCGETS: struct termios (kernel's, 36 bytes) */
        uint8_t t[64];
        if (syscall(SYS_ioctl, f->host, 0x5401, t))
            return -errno;
        return es_hs_put(m, c, arg, t, 36);
    }
    case 0x5402: /* TCSETS, TCSETSW, TCSETSF: the guest's terminal is ours */
    case 0x5403:
    case 0x5404: {
        if (!isatty(f->host))
            return -ENOTTY;
        uint8_t t[64] = {0};
        int r = es_hs_get(m, c, t, arg, 36);
        if (r)
            return r;
        return syscall(SYS_ioctl, f->host, cmd, t) ? -errno : 0;
    }
    case 0x5413: { /* TIOCGWINSZ */
        uint8_t w[8];
        if (syscall(SYS_ioctl, f->host, 0x5413, w))
            return -errno;
        return es_hs_put(m, c, arg, w, 8);
    }
    case 0x540f: { /* TIOCGPGRP */
        if (!isatty(f->host))
            return -ENOTTY;
        uint8_t v[4];
        es_st32(v, (uint32_t)m->host->pid);
        return es_hs_put(m, c, arg, v, 4);
    }
    case 0x541b: { /* FIONREAD */
        int n = 0;
        if (ioctl(f->host, FIONREAD, &n))
            return -errno;
        uint8_t v[4];
        es_st32(v, (uint32_t)n);
        return es_hs_put(m, c, arg, v, 4);
    }
    case 0x5421: { /* FIONBIO: int *arg, nonzero sets O_NONBLOCK */
        uint8_t v[4];
        int r = es_hs_get(m, c, v, arg, 4);
        if (r)
            return r;
        int fl = fcntl(f->host, F_GETFL);
        if (fl < 0 || fcntl(f->host, F_SETFL, es_ld32(v) ? fl | O_NONBLOCK : fl & ~O_NONBLOCK))
            return -errno;
        return 0;
    }
    case 0x5451: f->cloexec = true; return 0;  /* FIOCLEX */
    case 0x5450: f->cloexec = false; return 0; /* FIONCLEX */
    default:
        return -ENOTTY;
    }
}

static int64_t do_poll(es_machine *m, const es_scall *c, uint64_t ufds, uint64_t nfds, int timeout)
{
    struct es_host *h = m->host;
    if (nfds > (uint64_t)nofile(h))
        return -EINVAL;
    struct pollfd *p = calloc(nfds ? nfds : 1, sizeof *p);
    uint8_t *raw = malloc(nfds * 8 + 1);
    if (!p || !raw) {
        free(p);
        free(raw);
        return -ENOMEM;
    }
    int64_t ret = es_hs_get(m, c, raw, ufds, nfds * 8);
    int ready = 0;
    if (!ret) {
        /* struct pollfd {int fd; short events, revents;} on every ABI */
        for (uint64_t i = 0; i < nfds; i++) {
            int gf = (int)es_ld32(raw + i * 8);
            p[i].events = (short)(raw[i * 8 + 4] | raw[i * 8 + 5] << 8);
            es_hfd *f = gf >= 0 ? es_hs_fd(h, gf) : NULL;
            p[i].fd = f ? f->host : -1;
            if (gf >= 0 && !f)
                ready++; /* POLLNVAL, reported below */
        }
        int r = ready ? 0 : poll(p, nfds, timeout);
        if (r < 0) {
            ret = -errno;
        } else {
            int cnt = 0;
            for (uint64_t i = 0; i < nfds; i++) {
                int gf = (int)es_ld32(raw + i * 8);
                short rev = gf < 0 ? 0 : p[i].fd < 0 ? POLLNVAL : p[i].revents;
                if (ready && p[i].fd >= 0)
                    rev = 0;
                raw[i * 8 + 6] = (uint8_t)rev;
                raw[i * 8 + 7] = (uint8_t)((uint16_t)rev >> 8);
                cnt += rev != 0;
            }
            ret = es_hs_put(m, c, ufds, raw, nfds * 8);
            if (!ret)
                ret = cnt;
        }
    }
    free(p);
    free(raw);
    return ret;
}

/* ---- lifetime ---- */

int es_hs_fs_init(es_machine *m)
{
    struct es_host *h = m->host;
    const char *root = h->cfg.root && *h->cfg.root ? h->cfg.root : ".";
    char real[ES_HOST_PATH_MAX];
    if (!realpath(root, real)) {
        snprintf(m->message, sizeof m->message, "guest root %s: %s", root, strerror(errno));
        return -1;
    }
    h->rootlen = strcmp(real, "/") ? strlen(real) : 0;
    memcpy(h->root, real, h->rootlen);
    h->root[h->rootlen] = 0;
    h->rootfd = open(real, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (h->rootfd < 0) {
        snprintf(m->message, sizeof m->message, "guest root %s: %s", root, strerror(errno));
        return -1;
    }
    struct es_open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                              .resolve = ES_RESOLVE_IN_ROOT | ES_RESOLVE_NO_MAGICLINKS};
    long t = syscall(SYS_openat2, h->rootfd, ".", &how, sizeof how);
    h->use_openat2 = t >= 0;
    if (t >= 0)
        close((int)t);
    strcpy(h->cwd, "/");
    int std[3] = {h->cfg.stdin_fd, h->cfg.stdout_fd, h->cfg.stderr_fd};
    for (int i = 0; i < 3; i++)
        if (std[i] >= 0)
            h->fds[i] = (es_hfd){.host = std[i], .owned = false};
    return 0;
}

void es_hs_fs_free(es_machine *m)
{
    struct es_host *h = m->host;
    for (int i = 0; i < ES_HOST_MAX_FDS; i++)
        if (h->fds[i].host >= 0)
            fd_close(h, i);
    if (h->rootfd >= 0)
        close(h->rootfd);
    h->rootfd = -1;
}

/* ---- dispatch ---- */

int64_t es_hs_fs(es_machine *m, const es_scall *c, int sc, const uint64_t *a)
{
    struct es_host *h = m->host;
    es_hfd *f;
    switch (sc) {
    case ES_SC_read:
        if (!(f = es_hs_fd(h, (int)a[0])))
            return -EBADF;
        return do_read(m, c, f->host, a[1], a[2], -1);
    case ES_SC_write:
        if (!(f = es_hs_fd(h, (int)a[0])))
            return -EBADF;
        return do_write(m, c, f->host, a[1], a[2], -1);
    case ES_SC_pread64:
    case ES_SC_pwrite64: {
        if (!(f = es_hs_fd(h, (int)a[0])))
            return -EBADF;
        /* i386 passes the 64-bit position in two registers */
        int64_t pos = c->abi == ES_ABI_I386 ? (int64_t)(a[3] | a[4] << 32) : (int64_t)a[3];
        if (pos < 0)
            return -EINVAL;
        return sc == ES_SC_pread64 ? do_read(m, c, f->host, a[1], a[2], pos)
                                   : do_write(m, c, f->host, a[1], a[2], pos);
    }
    case ES_SC_readv: return do_rwv(m, c, (int)a[0], a[1], a[2], false, -1);
    case ES_SC_writev: return do_rwv(m, c, (int)a[0], a[1], a[2], true, -1);
    case ES_SC_preadv:
    case ES_SC_pwritev:
    case ES_SC_preadv2:
    case ES_SC_pwritev2: {
        bool two = sc == ES_SC_preadv2 || sc == ES_SC_pwritev2;
        /* the position: one register on x86-64 (pos_h is shifted out), the
         * x32 rows take a loff_t, i386 two halves */
        int64_t pos = c->abi == ES_ABI_I386 ? (int64_t)(a[3] | a[4] << 32) : (int64_t)a[3];
        uint64_t flags = c->compat && c->abi != ES_ABI_I386 ? a[4] : a[5];
        if (two && (flags & ~0x1full)) /* RWF_HIPRI DSYNC SYNC NOWAIT APPEND */
            return -EOPNOTSUPP;
        if (pos < 0 && !(two && pos == -1))
            return -EINVAL;
        bool wr = sc == ES_SC_pwritev || sc == ES_SC_pwritev2;
        return do_rwv(m, c, (int)a[0], a[1], a[2], wr, pos);
    }
    case ES_SC_open: return do_open(m, c, G_AT_FDCWD, a[0], (int)a[1], (uint32_t)a[2]);
    case ES_SC_openat: return do_open(m, c, (int)a[0], a[1], (int)a[2], (uint32_t)a[3]);
    case ES_SC_creat:
        return do_open(m, c, G_AT_FDCWD, a[0], O_CREAT | O_WRONLY | O_TRUNC, (uint32_t)a[1]);
    case ES_SC_close:
        if (!es_hs_fd(h, (int)a[0]))
            return -EBADF;
        fd_close(h, (int)a[0]);
        return 0;
    case ES_SC_lseek: {
        if (!(f = es_hs_fd(h, (int)a[0])))
            return -EBADF;
        int64_t off = c->abi == ES_ABI_I386 ? (int64_t)(int32_t)a[1] : (int64_t)a[1];
        if ((unsigned)a[2] > 4)
            return -EINVAL;
        if (f->ndoff)
            return dir_seek(f, off, (int)a[2]);
        off_t r = lseek(f->host, off, (int)a[2]);
        return r < 0 ? -errno : r;
    }
    case ES_SC__llseek: {
        if (!(f = es_hs_fd(h, (int)a[0])))
            return -EBADF;
        if ((unsigned)a[4] > 4)
            return -EINVAL;
        int64_t r = f->ndoff ? dir_seek(f, (int64_t)((a[1] << 32) | (uint32_t)a[2]), (int)a[4])
                             : lseek(f->host, (off_t)((a[1] << 32) | (uint32_t)a[2]), (int)a[4]);
        if (r < 0)
            return f->ndoff ? r : -errno;
        uint8_t v[8];
        es_st64(v, (uint64_t)r);
        return es_hs_put(m, c, a[3], v, 8);
    }
    case ES_SC_dup: {
        if (!(f = es_hs_fd(h, (int)a[0])))
            return -EBADF;
        int hfd = fcntl(f->host, F_DUPFD_CLOEXEC, 3);
        return hfd < 0 ? -errno : fd_install(h, hfd, false, 0);
    }
    case ES_SC_dup2: return do_dup3(h, (int)a[0], (int)a[1], 0, true);
    case ES_SC_dup3:
        if ((int)a[2] & ~G_O_CLOEXEC)
            return -EINVAL;
        return do_dup3(h, (int)a[0], (int)a[1], (int)a[2], false);
    case ES_SC_fcntl:
    case ES_SC_fcntl64: return do_fcntl(h, (int)a[0], (unsigned)a[1], a[2]);
    case ES_SC_pipe:
    case ES_SC_pipe2: {
        int flags = sc == ES_SC_pipe2 ? (int)a[1] : 0;
        if (flags & ~(G_O_CLOEXEC | O_NONBLOCK | O_DIRECT))
            return -EINVAL;
        int p[2];
        if (pipe2(p, O_CLOEXEC | (flags & (O_NONBLOCK | O_DIRECT))))
            return -errno;
        int r = fd_install(h, p[0], flags & G_O_CLOEXEC, 0);
        if (r < 0) {
            close(p[1]);
            return r;
        }
        int w = fd_install(h, p[1], flags & G_O_CLOEXEC, 0);
        if (w < 0) {
            fd_close(h, r);
            return w;
        }
        uint8_t v[8];
        es_st32(v, (uint32_t)r);
        es_st32(v + 4, (uint32_t)w);
        if (es_hs_put(m, c, a[0], v, 8)) {
            fd_close(h, r);
            fd_close(h, w);
            return -EFAULT;
        }
        return 0;
    }
    case ES_SC_fstat:
    case ES_SC_fstat64:
    case ES_SC_oldfstat:
        if (!(f = es_hs_fd(h, (int)a[0])))
            return -EBADF;
        return put_stat(m, c, f->host, stat_kind(c, sc), a[1]);
    case ES_SC_stat:
    case ES_SC_stat64:
    case ES_SC_oldstat: return do_statat(m, c, sc, G_AT_FDCWD, a[0], a[1], 0);
    case ES_SC_lstat:
    case ES_SC_lstat64:
    case ES_SC_oldlstat: return do_statat(m, c, sc, G_AT_FDCWD, a[0], a[1], G_AT_SYMLINK_NOFOLLOW);
    case ES_SC_newfstatat:
    case ES_SC_fstatat64: return do_statat(m, c, sc, (int)a[0], a[1], a[2], (int)a[3]);
    case ES_SC_statx: return do_statx(m, c, (int)a[0], a[1], (unsigned)a[2], (unsigned)a[3], a[4]);
    case ES_SC_getdents64: return do_getdents(m, c, (int)a[0], a[1], (uint32_t)a[2], true);
    case ES_SC_getdents: return do_getdents(m, c, (int)a[0], a[1], (uint32_t)a[2], false);
    case ES_SC_readlink: return do_readlink(m, c, G_AT_FDCWD, a[0], a[1], (int)a[2]);
    case ES_SC_readlinkat: return do_readlink(m, c, (int)a[0], a[1], a[2], (int)a[3]);
    case ES_SC_access: return do_access(m, c, G_AT_FDCWD, a[0], (int)a[1]);
    case ES_SC_faccessat: return do_access(m, c, (int)a[0], a[1], (int)a[2]);
    case ES_SC_getcwd: {
        size_t len = strlen(h->cwd) + 1;
        if (a[1] < len)
            return -ERANGE;
        int r = es_hs_put(m, c, a[0], h->cwd, len);
        return r ? r : (int64_t)len;
    }
    case ES_SC_chdir: {
        char gp[ES_HOST_PATH_MAX];
        int r = get_gp(m, c, G_AT_FDCWD, a[0], gp, sizeof gp, false);
        return r ? r : do_chdir(m, gp);
    }
    case ES_SC_fchdir: {
        if (!(f = es_hs_fd(h, (int)a[0])))
            return -EBADF;
        struct stat st;
        if (fstat(f->host, &st))
            return -errno;
        if (!S_ISDIR(st.st_mode))
            return -ENOTDIR;
        char np[ES_HOST_PATH_MAX];
        int r = gpath_of(h, f->host, np, sizeof np);
        if (!r)
            strcpy(h->cwd, np);
        return r;
    }
    case ES_SC_mkdir: return do_mkdir(m, c, G_AT_FDCWD, a[0], (uint32_t)a[1]);
    case ES_SC_mkdirat: return do_mkdir(m, c, (int)a[0], a[1], (uint32_t)a[2]);
    case ES_SC_unlink: return do_unlink(m, c, G_AT_FDCWD, a[0], 0);
    case ES_SC_rmdir: return do_unlink(m, c, G_AT_FDCWD, a[0], G_AT_REMOVEDIR);
    case ES_SC_unlinkat: return do_unlink(m, c, (int)a[0], a[1], (int)a[2]);
    case ES_SC_rename: return do_rename(m, c, G_AT_FDCWD, a[0], G_AT_FDCWD, a[1], 0);
    case ES_SC_renameat: return do_rename(m, c, (int)a[0], a[1], (int)a[2], a[3], 0);
    case ES_SC_renameat2: return do_rename(m, c, (int)a[0], a[1], (int)a[2], a[3], (unsigned)a[4]);
    case ES_SC_symlink: return do_symlink(m, c, a[0], G_AT_FDCWD, a[1]);
    case ES_SC_symlinkat: return do_symlink(m, c, a[0], (int)a[1], a[2]);
    case ES_SC_ftruncate: {
        if (!(f = es_hs_fd(h, (int)a[0])))
            return -EBADF;
        int64_t len = c->abi == ES_ABI_I386 ? (int64_t)(uint32_t)a[1] : (int64_t)a[1];
        return ftruncate(f->host, len) ? -errno : 0;
    }
    case ES_SC_fchmod:
        if (!(f = es_hs_fd(h, (int)a[0])))
            return -EBADF;
        if (!h->cfg.rw)
            return -EROFS;
        return fchmod(f->host, (mode_t)a[1] & 07777) ? -errno : 0;
    case ES_SC_fsync:
    case ES_SC_fdatasync:
        if (!es_hs_fd(h, (int)a[0]))
            return -EBADF;
        return 0;
    case ES_SC_umask: {
        uint32_t old = h->umask;
        h->umask = (uint32_t)a[0] & 0777;
        return old;
    }
    case ES_SC_ioctl: return do_ioctl(m, c, (int)a[0], (uint32_t)a[1], a[2]);
    case ES_SC_poll: return do_poll(m, c, a[0], (uint32_t)a[1], (int)a[2]);
    case ES_SC_ppoll: {
        int ms = -1;
        if (a[2]) {
            int64_t s, ns;
            int r = es_hs_get_timespec(m, c, a[2], &s, &ns);
            if (r)
                return r;
            if (s < 0 || ns < 0 || ns >= 1000000000)
                return -EINVAL;
            ms = s > 1000000 ? 1000000000 : (int)(s * 1000 + (ns + 999999) / 1000000);
        }
        return do_poll(m, c, a[0], (uint32_t)a[1], ms);
    }
    default:
        return ES_HS_NEXT;
    }
}
