/* fsmeta.c - the rest of the file system calls: statfs, sendfile, times
 * (utimensat...), modes and owners, links, truncate, select, and the
 * advice calls that need no more than a valid fd.
 *
 * Every path goes through path.c's confined resolution (es_hs_open_at,
 * es_hs_name_at); where a host call has no "empty path" form we name the
 * already-resolved file through its /proc/self/fd link, which refers to
 * that very file and never to a path outside the root.
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "host_int.h"
#include "task.h"

static void proc_fd(char *buf, size_t n, int fd)
{
    snprintf(buf, n, "/proc/self/fd/%d", fd);
}

/* ---- statfs ---- */

/* The fields of the three statfs layouts, in the order put_statfs fills
 * them: f_type, f_bsize, f_blocks, f_bfree, f_bavail, f_files, f_ffree,
 * f_fsid[0], f_fsid[1], f_namelen, f_frsize, f_flags. */
enum { NSTATFS = 12 };
static const struct statfs_layout {
    uint8_t size;
    es_field f[NSTATFS];
} g_statfs[3] = {
    /* struct statfs (64-bit): 120 bytes */
    {120, {{0, 8}, {8, 8}, {16, 8}, {24, 8}, {32, 8}, {40, 8}, {48, 8}, {56, 4}, {60, 4}, {64, 8},
           {72, 8}, {80, 8}}},
    /* struct compat_statfs: 64 bytes, EOVERFLOW past 32 bits */
    {64, {{0, 4}, {4, 4}, {8, 4}, {12, 4}, {16, 4}, {20, 4}, {24, 4}, {28, 4}, {32, 4}, {36, 4},
          {40, 4}, {44, 4}}},
    /* struct compat_statfs64: 84 bytes, packed(4) */
    {84, {{0, 4}, {4, 4}, {8, 8}, {16, 8}, {24, 8}, {32, 8}, {40, 8}, {48, 4}, {52, 4}, {56, 4},
          {60, 4}, {64, 4}}},
};

/* kind: 0 = struct statfs, 1 = compat_statfs, 2 = compat_statfs64 (whose
 * callers pass its size sz). */
static int64_t put_statfs(es_machine *m, const es_scall *c, int fd, uint64_t u, int kind,
                          uint64_t sz)
{
    struct statfs s;
    if (fstatfs(fd, &s))
        return -errno;
    uint64_t flags = (uint64_t)s.f_flags | (m->host->cfg.rw ? 0 : 1 /* ST_RDONLY */);
    uint32_t fsid[2];
    memcpy(fsid, &s.f_fsid, sizeof fsid);
    uint64_t v[NSTATFS] = {(uint64_t)s.f_type, (uint64_t)s.f_bsize, s.f_blocks, s.f_bfree,
                           s.f_bavail, s.f_files, s.f_ffree, fsid[0], fsid[1],
                           (uint64_t)s.f_namelen, (uint64_t)s.f_frsize, flags};
    if (kind == 1)
        for (int i = 2; i < 7; i++) /* the block and file counts */
            if (v[i] >> 32 && v[i] != ~0ull)
                return -EOVERFLOW;
    if (kind == 2 && sz != 84)
        return -EINVAL;
    uint8_t b[120];
    memset(b, 0, sizeof b);
    es_hs_put_fields(b, g_statfs[kind].f, v, NSTATFS);
    return es_hs_put(m, c, u, b, g_statfs[kind].size);
}

/* ---- times ---- */

/* utimensat(dfd, path, times, flags); path 0 works on dfd (futimens). */
static int64_t do_utimens(es_machine *m, const es_scall *c, int64_t dfd, uint64_t upath,
                          const struct timespec *ts, int flags)
{
    if (flags & ~G_AT_SYMLINK_NOFOLLOW)
        return -EINVAL;
    if (!m->host->cfg.rw)
        return -EROFS;
    int r;
    if (!upath) {
        if (flags)
            return -EINVAL;
        es_hfd *f = es_hs_fd(m->host, dfd);
        if (!f)
            return -EBADF;
        return futimens(f->host, ts) ? -errno : 0;
    }
    if (flags & G_AT_SYMLINK_NOFOLLOW) {
        int pfd;
        char name[256];
        r = es_hs_name_at(m, c, dfd, upath, false, &pfd, name);
        if (r)
            return r;
        r = utimensat(pfd, name, ts, AT_SYMLINK_NOFOLLOW);
        int e = errno;
        close(pfd);
        return r ? -e : 0;
    }
    int fd = es_hs_open_at(m, c, dfd, upath, true, false);
    if (fd < 0)
        return fd;
    char p[64];
    proc_fd(p, sizeof p, fd);
    r = utimensat(AT_FDCWD, p, ts, 0);
    int e = errno;
    close(fd);
    return r ? -e : 0;
}

/* Reads n timespecs (or timevals when `usec`) into ts. */
static int get_times(es_machine *m, const es_scall *c, uint64_t u, bool usec, struct timespec *ts)
{
    for (int i = 0; i < 2; i++) {
        int64_t s, f;
        int r = es_hs_get_timespec(m, c, u + (uint64_t)i * (c->abi == ES_ABI_I386 ? 8 : 16), &s, &f);
        if (r)
            return r;
        if (usec) {
            if (f < 0 || f >= 1000000)
                return -EINVAL;
            f *= 1000;
        } else if ((f < 0 || f >= NSEC) && f != UTIME_NOW && f != UTIME_OMIT) {
            return -EINVAL;
        }
        ts[i].tv_sec = s;
        ts[i].tv_nsec = f;
    }
    return 0;
}

/* ---- select ---- */

static int64_t do_select(es_machine *m, const es_scall *c, int64_t n, uint64_t uin, uint64_t uout,
                         uint64_t uex, int64_t timeout_ns)
{
    struct es_host *h = m->host;
    if (n < 0)
        return -EINVAL;
    if (n > ES_HOST_MAX_FDS)
        n = ES_HOST_MAX_FDS;
    /* fd_set: an array of longs of the caller's size; the bits are the
     * same bytes either way (little endian) */
    size_t word = c->abi == ES_ABI_I386 ? 4 : 8;
    size_t bytes = ((size_t)n + word * 8 - 1) / (word * 8) * word;
    uint8_t set[3][ES_HOST_MAX_FDS / 8] = {{0}}, res[3][ES_HOST_MAX_FDS / 8] = {{0}};
    uint64_t u[3] = {uin, uout, uex};
    for (int k = 0; k < 3; k++)
        if (u[k] && es_hs_get(m, c, set[k], u[k], bytes))
            return -EFAULT;
    struct pollfd pf[ES_HOST_MAX_FDS];
    int gfdn[ES_HOST_MAX_FDS];
    int np = 0;
    for (int fd = 0; fd < n; fd++) {
        int bits = 0;
        for (int k = 0; k < 3; k++)
            bits |= (set[k][fd / 8] >> (fd % 8) & 1) << k;
        if (!bits)
            continue;
        es_hfd *f = es_hs_fd(h, fd);
        if (!f)
            return -EBADF;
        pf[np].fd = f->host;
        pf[np].events = (short)((bits & 1 ? POLLIN : 0) | (bits & 2 ? POLLOUT : 0) |
                                (bits & 4 ? POLLPRI : 0));
        pf[np].revents = 0;
        gfdn[np++] = fd;
    }
    int ms = timeout_ns < 0 ? -1 : (int)(timeout_ns > 1000000000ll * 1000 ? 1000000000 : (timeout_ns + 999999) / 1000000);
    int r;
    bool multi = es_task_multi(m);
    if (!np && timeout_ns > 0 && !multi && (m->deterministic || h->cfg.deterministic)) {
        es_hs_slept(h, timeout_ns); /* select as a sleep */
        r = 0;
    } else if (!np && timeout_ns < 0 && !multi) {
        es_hs_deadlock(m, "select with no fd to wait on and no timeout");
        return -EINTR;
    } else {
        r = es_hs_poll(m, pf, (nfds_t)np, ms < 0 ? -1 : ms * 1000000ll, "select");
        if (r < 0)
            return r;
    }
    int cnt = 0;
    for (int i = 0; i < np; i++) {
        int fd = gfdn[i];
        short rv = pf[i].revents;
        bool in = (pf[i].events & POLLIN) && (rv & (POLLIN | POLLHUP | POLLERR));
        bool out = (pf[i].events & POLLOUT) && (rv & (POLLOUT | POLLERR));
        bool ex = (pf[i].events & POLLPRI) && (rv & POLLPRI);
        if (in) res[0][fd / 8] |= (uint8_t)(1 << fd % 8);
        if (out) res[1][fd / 8] |= (uint8_t)(1 << fd % 8);
        if (ex) res[2][fd / 8] |= (uint8_t)(1 << fd % 8);
        cnt += in + out + ex;
    }
    for (int k = 0; k < 3; k++)
        if (u[k] && es_hs_put(m, c, u[k], res[k], bytes))
            return -EFAULT;
    return cnt;
}

/* ---- epoll, eventfd: host objects behind guest fds ---- */

/* struct epoll_event is 12 bytes on x86-64 and i386 alike ({u32 events;
 * u64 data} packed), the host's layout: entries copy through unchanged and
 * the data word is the guest's own. */
static int64_t do_epoll_wait(es_machine *m, const es_scall *c, int64_t epfd, uint64_t uev,
                             int64_t maxev, int timeout)
{
    es_hfd *f = es_hs_fd(m->host, epfd);
    if (!f)
        return -EBADF;
    if (maxev <= 0 || maxev > 0x7fffffff / 12)
        return -EINVAL;
    if (maxev > 1024)
        maxev = 1024;
    struct epoll_event ev[1024];
    if (timeout != 0 && (m->deadline_ns || es_task_multi(m))) {
        /* an epoll fd polls readable when it has events: wait on it with
         * the deadline, then collect without waiting */
        struct pollfd p = {.fd = f->host, .events = POLLIN};
        int r = es_hs_poll(m, &p, 1, timeout < 0 ? -1 : timeout * 1000000ll, "epoll_wait");
        if (r < 0)
            return r;
        if (r == 0)
            return 0;
        timeout = 0;
    }
    int n = epoll_wait(f->host, ev, (int)maxev, timeout);
    if (n < 0)
        return -errno;
    if (n && es_hs_put(m, c, uev, ev, (size_t)n * 12))
        return -EFAULT;
    return n;
}


/* ---- services: statfs, sendfile ---- */

static int64_t statfs_path(es_machine *m, const es_scall *c, uint64_t upath, uint64_t u, int kind,
                           uint64_t sz)
{
    int fd = es_hs_open_at(m, c, G_AT_FDCWD, upath, true, false);
    if (fd < 0)
        return fd;
    int64_t r = put_statfs(m, c, fd, u, kind, sz);
    close(fd);
    return r;
}

static int64_t statfs_fd(es_machine *m, const es_scall *c, int64_t fd, uint64_t u, int kind,
                         uint64_t sz)
{
    es_hfd *f = es_hs_fd(m->host, fd);
    return f ? put_statfs(m, c, f->host, u, kind, sz) : -EBADF;
}

/* statfs and fstatfs take the caller's struct statfs, the *64 forms
 * compat_statfs64 and its size. */
ES_SYS(statfs) { return statfs_path(m, c, a[0], a[1], c->abi == ES_ABI_I386, 0); }
ES_SYS(statfs64) { return statfs_path(m, c, a[0], a[2], 2, a[1]); }
ES_SYS(fstatfs) { return statfs_fd(m, c, (int)a[0], a[1], c->abi == ES_ABI_I386, 0); }
ES_SYS(fstatfs64) { return statfs_fd(m, c, (int)a[0], a[2], 2, a[1]); }

/* osz: the size of the guest's offset (compat_off_t for i386's sendfile). */
static int64_t do_sendfile(es_machine *m, const es_scall *c, const uint64_t *a, size_t osz)
{
    struct es_host *h = m->host;
    es_hfd *o = es_hs_fd(h, (int)a[0]), *in = es_hs_fd(h, (int)a[1]);
    if (!o || !in)
        return -EBADF;
    uint64_t count = a[3] > 0x7ffff000ull ? 0x7ffff000ull : a[3];
    off_t off = 0;
    if (a[2]) {
        uint8_t b[8] = {0};
        if (es_hs_get(m, c, b, a[2], osz))
            return -EFAULT;
        off = osz == 4 ? (int32_t)es_ld32(b) : (off_t)es_ld64(b);
        if (off < 0)
            return -EINVAL;
    }
    sigset_t old;
    es_hs_pipe_hold(&old);
    ssize_t r = sendfile(o->host, in->host, a[2] ? &off : NULL, (size_t)count);
    es_hs_pipe_release(m, &old, r < 0 && errno == EPIPE);
    if (r < 0)
        return -errno;
    if (a[2]) {
        uint8_t b[8];
        es_st64(b, (uint64_t)off);
        if (es_hs_put(m, c, a[2], b, osz))
            return -EFAULT;
    }
    return r;
}

ES_SYS(sendfile) { return do_sendfile(m, c, a, c->abi == ES_ABI_I386 ? 4 : 8); }
ES_SYS(sendfile64) { return do_sendfile(m, c, a, 8); }

/* ---- services: times ---- */

ES_SYS(utimensat)
{
    struct timespec ts[2];
    if (a[2]) {
        int r = get_times(m, c, a[2], false, ts);
        if (r)
            return r;
    }
    return do_utimens(m, c, (int)a[0], a[1], a[2] ? ts : NULL, (int)a[3]);
}

/* utimes and futimesat: struct timeval[2] */
static int64_t do_utimes(es_machine *m, const es_scall *c, int64_t dfd, uint64_t up, uint64_t ut)
{
    struct timespec ts[2];
    if (ut) {
        int r = get_times(m, c, ut, true, ts);
        if (r)
            return r;
    }
    if (!up)
        return -EFAULT;
    return do_utimens(m, c, dfd, up, ut ? ts : NULL, 0);
}

ES_SYS(utimes) { return do_utimes(m, c, G_AT_FDCWD, a[0], a[1]); }
ES_SYS(futimesat) { return do_utimes(m, c, (int)a[0], a[1], a[2]); }

ES_SYS(utime)
{
    /* struct utimbuf {time_t actime, modtime} (compat: 32-bit) */
    bool i386 = c->abi == ES_ABI_I386;
    struct timespec ts[2];
    if (a[1]) {
        uint8_t b[16];
        if (es_hs_get(m, c, b, a[1], i386 ? 8 : 16))
            return -EFAULT;
        ts[0].tv_sec = i386 ? (int32_t)es_ld32(b) : (int64_t)es_ld64(b);
        ts[1].tv_sec = i386 ? (int32_t)es_ld32(b + 4) : (int64_t)es_ld64(b + 8);
        ts[0].tv_nsec = ts[1].tv_nsec = 0;
    }
    return do_utimens(m, c, G_AT_FDCWD, a[0], a[1] ? ts : NULL, 0);
}

/* ---- services: modes, owners, links ---- */

static int64_t do_chmod(es_machine *m, const es_scall *c, int64_t dfd, uint64_t up, uint64_t mode)
{
    int fd = es_hs_open_at(m, c, dfd, up, true, false);
    if (fd < 0)
        return fd;
    if (!m->host->cfg.rw) {
        close(fd);
        return -EROFS;
    }
    char p[64];
    proc_fd(p, sizeof p, fd);
    int r = chmod(p, (mode_t)mode & 07777);
    int e = errno;
    close(fd);
    return r ? -e : 0;
}

ES_SYS(chmod) { return do_chmod(m, c, G_AT_FDCWD, a[0], a[1]); }
ES_SYS(fchmodat) { return do_chmod(m, c, (int)a[0], a[1], a[2]); }

/* id16: i386's chown/lchown are the 16-bit-id calls, where 0xffff means
 * "no change". */
static int64_t do_chown(es_machine *m, const es_scall *c, int64_t dfd, const uint64_t *v, int flags,
                        bool id16)
{
    if (flags & ~(G_AT_SYMLINK_NOFOLLOW | G_AT_EMPTY_PATH))
        return -EINVAL;
    uint32_t uid = (uint32_t)v[1], gid = (uint32_t)v[2];
    if (id16) {
        uid = (uint16_t)uid == 0xffff ? ~0u : (uint16_t)uid;
        gid = (uint16_t)gid == 0xffff ? ~0u : (uint16_t)gid;
    }
    int fd = es_hs_open_at(m, c, dfd, v[0], !(flags & G_AT_SYMLINK_NOFOLLOW),
                           (flags & G_AT_EMPTY_PATH) != 0);
    if (fd < 0)
        return fd;
    int r = m->host->cfg.rw ? fchownat(fd, "", uid, gid, AT_EMPTY_PATH) : (errno = EROFS, -1);
    int e = errno;
    close(fd);
    return r ? -e : 0;
}

ES_SYS(chown) { return do_chown(m, c, G_AT_FDCWD, a, 0, false); }
ES_SYS(lchown) { return do_chown(m, c, G_AT_FDCWD, a, G_AT_SYMLINK_NOFOLLOW, false); }
ES_SYS(chown16) { return do_chown(m, c, G_AT_FDCWD, a, 0, true); }
ES_SYS(lchown16) { return do_chown(m, c, G_AT_FDCWD, a, G_AT_SYMLINK_NOFOLLOW, true); }
ES_SYS(fchownat) { return do_chown(m, c, (int)a[0], a + 1, (int)a[4], false); }

ES_SYS(fchown)
{
    es_hfd *f = es_hs_fd(m->host, (int)a[0]);
    if (!f)
        return -EBADF;
    if (!m->host->cfg.rw)
        return -EROFS;
    return fchown(f->host, (uid_t)a[1], (gid_t)a[2]) ? -errno : 0;
}

/* linkat(fd, "", newdirfd, newpath, AT_EMPTY_PATH): a new name for the
 * open file fd (an O_TMPFILE file's first; AT_FDCWD names the cwd, a
 * directory: EPERM).  Linux 4.17 asked for CAP_DAC_READ_SEARCH here; 6.10
 * lets the process that opened the file do it (fs/namei.c do_linkat), as
 * the guest did every fd it names.  The host call links the file through
 * its /proc/self/fd link with AT_SYMLINK_FOLLOW (open(2) on O_TMPFILE):
 * that link is the open file itself, never a path lookup, and the new name
 * is resolved in the root.  The embedder's fds (0-2) may be files outside
 * the root: they get no name in it (EXDEV, as a file of another mount).
 * An O_TMPFILE | O_EXCL file stays unlinkable (the host's ENOENT). */
static int64_t link_open_file(es_machine *m, const es_scall *c, int64_t od, int64_t nd,
                              uint64_t np)
{
    struct es_host *h = m->host;
    es_hfd *f = NULL;
    if ((int)od != G_AT_FDCWD && !(f = es_hs_fd(h, od)))
        return -EBADF;
    int nfd;
    char nn[256];
    int r = es_hs_name_at(m, c, nd, np, true, &nfd, nn);
    if (r)
        return r;
    int cwd = f ? -1 : es_hs_open_gp(h, h->cwd, O_PATH, 0, true);
    if (f && f->foreign)
        r = -EXDEV;
    else if (!f && cwd < 0)
        r = cwd;
    else {
        char on[64];
        proc_fd(on, sizeof on, f ? f->host : cwd);
        r = linkat(AT_FDCWD, on, nfd, nn, AT_SYMLINK_FOLLOW) ? -errno : 0;
    }
    if (cwd >= 0)
        close(cwd);
    close(nfd);
    return r;
}

static int64_t do_link(es_machine *m, const es_scall *c, int64_t od, uint64_t op, int64_t nd,
                       uint64_t np, int flags)
{
    if (flags & ~(G_AT_SYMLINK_FOLLOW | G_AT_EMPTY_PATH))
        return -EINVAL;
    if (flags & G_AT_EMPTY_PATH) {
        char first[2];
        int64_t n = es_hs_get_str(m, c, op, first, sizeof first);
        if (n == -EFAULT)
            return n;
        if (n == 0)
            return link_open_file(m, c, od, nd, np);
    }
    int ofd = -1, nfd;
    char on[256], nn[256];
    int r;
    if (flags & G_AT_SYMLINK_FOLLOW) {
        ofd = es_hs_open_at(m, c, od, op, true, false);
        if (ofd < 0)
            return ofd;
        proc_fd(on, sizeof on, ofd);
    } else {
        r = es_hs_name_at(m, c, od, op, false, &ofd, on);
        if (r)
            return r;
    }
    r = es_hs_name_at(m, c, nd, np, true, &nfd, nn);
    if (r) {
        close(ofd);
        return r;
    }
    if (flags & G_AT_SYMLINK_FOLLOW)
        r = linkat(AT_FDCWD, on, nfd, nn, AT_SYMLINK_FOLLOW);
    else
        r = !strcmp(on, ".") ? (errno = EPERM, -1) : linkat(ofd, on, nfd, nn, 0);
    int e = errno;
    close(ofd);
    close(nfd);
    return r ? -e : 0;
}

ES_SYS(link) { return do_link(m, c, G_AT_FDCWD, a[0], G_AT_FDCWD, a[1], 0); }
ES_SYS(linkat) { return do_link(m, c, (int)a[0], a[1], (int)a[2], a[3], (int)a[4]); }

ES_SYS(mknod) { return m->host->cfg.rw ? -EPERM : -EROFS; }

/* ---- services: sizes and space ---- */

static int64_t do_truncate(es_machine *m, const es_scall *c, uint64_t upath, int64_t len)
{
    if (len < 0)
        return -EINVAL;
    int fd = es_hs_open_at(m, c, G_AT_FDCWD, upath, true, false);
    if (fd < 0)
        return fd;
    char p[64];
    proc_fd(p, sizeof p, fd);
    int r = m->host->cfg.rw ? truncate(p, len) : (errno = EROFS, -1);
    int e = errno;
    close(fd);
    return r ? -e : 0;
}

ES_SYS(truncate)
{
    int64_t len = c->abi == ES_ABI_I386 ? (int64_t)(int32_t)a[1] : (int64_t)a[1];
    return do_truncate(m, c, a[0], len);
}

ES_SYS(truncate64) { return do_truncate(m, c, a[0], (int64_t)(a[1] | a[2] << 32)); }

ES_SYS(ftruncate64)
{
    es_hfd *f = es_hs_fd(m->host, (int)a[0]);
    if (!f)
        return -EBADF;
    return ftruncate(f->host, (off_t)(a[1] | a[2] << 32)) ? -errno : 0;
}

ES_SYS(fallocate)
{
    es_hfd *f = es_hs_fd(m->host, (int)a[0]);
    if (!f)
        return -EBADF;
    if (c->abi == ES_ABI_I386)
        return fallocate(f->host, (int)a[1], (off_t)(a[2] | a[3] << 32),
                         (off_t)(a[4] | a[5] << 32)) ? -errno : 0;
    return fallocate(f->host, (int)a[1], (off_t)a[2], (off_t)a[3]) ? -errno : 0;
}

ES_SYS(sync) { return 0; }

/* ---- services: epoll, eventfd ---- */

ES_SYS(epoll_create)
{
    if ((int)a[0] <= 0)
        return -EINVAL;
    int hfd = epoll_create1(EPOLL_CLOEXEC);
    return hfd < 0 ? -errno : es_hs_fd_install(m->host, hfd, false);
}

ES_SYS(epoll_create1)
{
    int flags = (int)a[0];
    if (flags & ~02000000)
        return -EINVAL;
    int hfd = epoll_create1(EPOLL_CLOEXEC);
    return hfd < 0 ? -errno : es_hs_fd_install(m->host, hfd, flags != 0);
}

static int64_t do_eventfd(es_machine *m, unsigned initval, int flags)
{
    if (flags & ~(02000000 | 04000 | 1)) /* EFD_CLOEXEC, EFD_NONBLOCK, EFD_SEMAPHORE */
        return -EINVAL;
    int hfd = eventfd(initval, EFD_CLOEXEC | (flags & (04000 | 1)));
    return hfd < 0 ? -errno : es_hs_fd_install(m->host, hfd, (flags & 02000000) != 0);
}

ES_SYS(eventfd) { return do_eventfd(m, (unsigned)a[0], 0); }
ES_SYS(eventfd2) { return do_eventfd(m, (unsigned)a[0], (int)a[1]); }

ES_SYS(epoll_ctl)
{
    struct es_host *h = m->host;
    es_hfd *ep = es_hs_fd(h, (int)a[0]), *t = es_hs_fd(h, (int)a[2]);
    if (!ep || !t)
        return -EBADF;
    struct epoll_event ev;
    memset(&ev, 0, sizeof ev);
    if ((int)a[1] != EPOLL_CTL_DEL && es_hs_get(m, c, &ev, a[3], 12))
        return -EFAULT;
    return epoll_ctl(ep->host, (int)a[1], t->host, &ev) ? -errno : 0;
}

/* epoll_pwait too: no signal is ever delivered, so its mask changes nothing */
ES_SYS(epoll_wait) { return do_epoll_wait(m, c, (int)a[0], a[1], (int)a[2], (int)a[3]); }

/* ---- services: select ---- */

/* select(n, in, out, ex, timeout): a struct timeval, or a timespec for
 * pselect6 (`nsec`); the time left is written back as zero on timeout. */
static int64_t select_with(es_machine *m, const es_scall *c, const uint64_t *a, bool nsec)
{
    int64_t ns = -1;
    if (a[4]) {
        int64_t s, fr;
        int r = es_hs_get_timeout(m, c, a[4], nsec ? NSEC : 1000000, &s, &fr);
        if (r)
            return r;
        ns = s > 1000000000 ? INT64_MAX / 2 : s * NSEC + (nsec ? fr : fr * 1000);
    }
    int64_t r = do_select(m, c, (int)a[0], a[1], a[2], a[3], ns);
    if (r == 0 && a[4])
        es_hs_put_timespec(m, c, a[4], 0, 0); /* the time left (a timeval: same shape) */
    return r;
}

ES_SYS(_newselect) { return select_with(m, c, a, false); }
ES_SYS(pselect6) { return select_with(m, c, a, true); }

/* i386's old select (#82): struct sel_arg_struct {n, inp, outp, exp, tvp} */
ES_SYS(old_select)
{
    uint8_t b[20];
    if (es_hs_get(m, c, b, a[0], 20))
        return -EFAULT;
    uint64_t args[6] = {0};
    for (int i = 0; i < 5; i++)
        args[i] = es_ld32(b + 4 * i);
    return es_sys__newselect(m, c, args);
}
