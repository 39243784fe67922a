/* fsmeta.c - the rest of the file system calls: statfs, sendfile, times
 * (utimensat...), modes and owners, links, truncate, select, and the
 * advice calls that need no more than a valid fd.
 *
 * Every path goes through fs.c's confined resolution (es_hs_open_at,
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

#define G_AT_FDCWD (-100)
#define G_AT_SYMLINK_NOFOLLOW 0x100
#define G_AT_SYMLINK_FOLLOW 0x400
#define G_AT_EMPTY_PATH 0x1000
#define NSEC 1000000000ll

static void proc_fd(char *buf, size_t n, int fd)
{
    snprintf(buf, n, "/proc/self/fd/%d", fd);
}

/* ---- statfs ---- */

static int64_t put_statfs(es_machine *m, const es_scall *c, int fd, uint64_t u, int kind,
                          uint64_t sz)
{
    struct statfs s;
    if (fstatfs(fd, &s))
        return -errno;
    uint64_t flags = (uint64_t)s.f_flags | (m->host->cfg.rw ? 0 : 1 /* ST_RDONLY */);
    uint32_t fsid[2];
    memcpy(fsid, &s.f_fsid, sizeof fsid);
    uint8_t b[120];
    memset(b, 0, sizeof b);
    if (kind == 0) { /* struct statfs (64-bit): 120 bytes */
        es_st64(b, (uint64_t)s.f_type);
        es_st64(b + 8, (uint64_t)s.f_bsize);
        es_st64(b + 16, s.f_blocks);
        es_st64(b + 24, s.f_bfree);
        es_st64(b + 32, s.f_bavail);
        es_st64(b + 40, s.f_files);
        es_st64(b + 48, s.f_ffree);
        es_st32(b + 56, fsid[0]);
        es_st32(b + 60, fsid[1]);
        es_st64(b + 64, (uint64_t)s.f_namelen);
        es_st64(b + 72, (uint64_t)s.f_frsize);
        es_st64(b + 80, flags);
        return es_hs_put(m, c, u, b, 120);
    }
    if (kind == 1) { /* struct compat_statfs: 64 bytes, EOVERFLOW past 32 bits */
        uint64_t v[5] = {s.f_blocks, s.f_bfree, s.f_bavail, s.f_files, s.f_ffree};
        for (int i = 0; i < 5; i++)
            if (v[i] >> 32 && v[i] != ~0ull)
                return -EOVERFLOW;
        es_st32(b, (uint32_t)s.f_type);
        es_st32(b + 4, (uint32_t)s.f_bsize);
        for (int i = 0; i < 5; i++)
            es_st32(b + 8 + 4 * i, (uint32_t)v[i]);
        es_st32(b + 28, fsid[0]);
        es_st32(b + 32, fsid[1]);
        es_st32(b + 36, (uint32_t)s.f_namelen);
        es_st32(b + 40, (uint32_t)s.f_frsize);
        es_st32(b + 44, (uint32_t)flags);
        return es_hs_put(m, c, u, b, 64);
    }
    /* struct compat_statfs64: 84 bytes, packed(4) */
    if (sz != 84)
        return -EINVAL;
    es_st32(b, (uint32_t)s.f_type);
    es_st32(b + 4, (uint32_t)s.f_bsize);
    es_st64(b + 8, s.f_blocks);
    es_st64(b + 16, s.f_bfree);
    es_st64(b + 24, s.f_bavail);
    es_st64(b + 32, s.f_files);
    es_st64(b + 40, s.f_ffree);
    es_st32(b + 48, fsid[0]);
    es_st32(b + 52, fsid[1]);
    es_st32(b + 56, (uint32_t)s.f_namelen);
    es_st32(b + 60, (uint32_t)s.f_frsize);
    es_st32(b + 64, (uint32_t)flags);
    return es_hs_put(m, c, u, b, 84);
}

static int statfs_kind(const es_scall *c, int sc)
{
    if (sc == ES_SC_statfs64 || sc == ES_SC_fstatfs64)
        return 2;
    return c->abi == ES_ABI_I386 ? 1 : 0;
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
    if (!np && timeout_ns > 0 && (m->deterministic || h->cfg.deterministic)) {
        es_hs_slept(h, timeout_ns); /* select as a sleep */
        r = 0;
    } else {
        r = poll(pf, (nfds_t)np, ms);
        if (r < 0)
            return -errno;
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
    int n = epoll_wait(f->host, ev, (int)maxev, timeout);
    if (n < 0)
        return -errno;
    if (n && es_hs_put(m, c, uev, ev, (size_t)n * 12))
        return -EFAULT;
    return n;
}

/* ---- dispatch ---- */

int64_t es_hs_fsmeta(es_machine *m, const es_scall *c, int sc, const uint64_t *a)
{
    struct es_host *h = m->host;
    bool i386 = c->abi == ES_ABI_I386;
    es_hfd *f;
    switch (sc) {
    case ES_SC_statfs:
    case ES_SC_statfs64: {
        int fd = es_hs_open_at(m, c, G_AT_FDCWD, a[0], true, false);
        if (fd < 0)
            return fd;
        int64_t r = sc == ES_SC_statfs64 ? put_statfs(m, c, fd, a[2], 2, a[1])
                                         : put_statfs(m, c, fd, a[1], statfs_kind(c, sc), 0);
        close(fd);
        return r;
    }
    case ES_SC_fstatfs:
    case ES_SC_fstatfs64:
        if (!(f = es_hs_fd(h, (int)a[0])))
            return -EBADF;
        return sc == ES_SC_fstatfs64 ? put_statfs(m, c, f->host, a[2], 2, a[1])
                                     : put_statfs(m, c, f->host, a[1], statfs_kind(c, sc), 0);
    case ES_SC_sendfile:
    case ES_SC_sendfile64: {
        es_hfd *o = es_hs_fd(h, (int)a[0]), *in = es_hs_fd(h, (int)a[1]);
        if (!o || !in)
            return -EBADF;
        size_t osz = sc == ES_SC_sendfile && i386 ? 4 : 8; /* compat_off_t */
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
    case ES_SC_utimensat: {
        struct timespec ts[2];
        if (a[2]) {
            int r = get_times(m, c, a[2], false, ts);
            if (r)
                return r;
        }
        return do_utimens(m, c, (int)a[0], a[1], a[2] ? ts : NULL, (int)a[3]);
    }
    case ES_SC_utimes:
    case ES_SC_futimesat: {
        int64_t dfd = sc == ES_SC_utimes ? G_AT_FDCWD : (int)a[0];
        uint64_t up = sc == ES_SC_utimes ? a[0] : a[1], ut = sc == ES_SC_utimes ? a[1] : a[2];
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
    case ES_SC_utime: {
        /* struct utimbuf {time_t actime, modtime} (compat: 32-bit) */
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
    case ES_SC_chmod:
    case ES_SC_fchmodat: {
        int64_t dfd = sc == ES_SC_chmod ? G_AT_FDCWD : (int)a[0];
        uint64_t up = sc == ES_SC_chmod ? a[0] : a[1], mode = sc == ES_SC_chmod ? a[1] : a[2];
        int fd = es_hs_open_at(m, c, dfd, up, true, false);
        if (fd < 0)
            return fd;
        if (!h->cfg.rw) {
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
    case ES_SC_chown:
    case ES_SC_lchown:
    case ES_SC_chown32:
    case ES_SC_lchown32:
    case ES_SC_fchownat: {
        bool at = sc == ES_SC_fchownat;
        int flags = at ? (int)a[4] : (sc == ES_SC_lchown || sc == ES_SC_lchown32) ? G_AT_SYMLINK_NOFOLLOW : 0;
        if (flags & ~(G_AT_SYMLINK_NOFOLLOW | G_AT_EMPTY_PATH))
            return -EINVAL;
        const uint64_t *v = at ? a + 1 : a;
        /* i386's chown/lchown are the 16-bit-id calls: 0xffff means "no change" */
        bool id16 = i386 && (sc == ES_SC_chown || sc == ES_SC_lchown);
        uint32_t uid = (uint32_t)v[1], gid = (uint32_t)v[2];
        if (id16) {
            uid = (uint16_t)uid == 0xffff ? ~0u : (uint16_t)uid;
            gid = (uint16_t)gid == 0xffff ? ~0u : (uint16_t)gid;
        }
        int fd = es_hs_open_at(m, c, at ? (int)a[0] : G_AT_FDCWD, v[0],
                               !(flags & G_AT_SYMLINK_NOFOLLOW), (flags & G_AT_EMPTY_PATH) != 0);
        if (fd < 0)
            return fd;
        int r = h->cfg.rw ? fchownat(fd, "", uid, gid, AT_EMPTY_PATH) : (errno = EROFS, -1);
        int e = errno;
        close(fd);
        return r ? -e : 0;
    }
    case ES_SC_fchown:
    case ES_SC_fchown32:
        if (!(f = es_hs_fd(h, (int)a[0])))
            return -EBADF;
        if (!h->cfg.rw)
            return -EROFS;
        return fchown(f->host, (uid_t)a[1], (gid_t)a[2]) ? -errno : 0;
    case ES_SC_link:
    case ES_SC_linkat: {
        bool at = sc == ES_SC_linkat;
        int flags = at ? (int)a[4] : 0;
        if (flags & ~(G_AT_SYMLINK_FOLLOW | G_AT_EMPTY_PATH))
            return -EINVAL;
        int ofd = -1, nfd;
        char on[256], nn[256];
        int r;
        if (flags & G_AT_SYMLINK_FOLLOW) {
            ofd = es_hs_open_at(m, c, at ? (int)a[0] : G_AT_FDCWD, at ? a[1] : a[0], true, false);
            if (ofd < 0)
                return ofd;
            proc_fd(on, sizeof on, ofd);
        } else {
            r = es_hs_name_at(m, c, at ? (int)a[0] : G_AT_FDCWD, at ? a[1] : a[0], false, &ofd, on);
            if (r)
                return r;
        }
        r = es_hs_name_at(m, c, at ? (int)a[2] : G_AT_FDCWD, at ? a[3] : a[1], true, &nfd, nn);
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
    case ES_SC_truncate:
    case ES_SC_truncate64: {
        int64_t len = sc == ES_SC_truncate64 ? (int64_t)(a[1] | a[2] << 32)
                      : i386                 ? (int64_t)(int32_t)a[1]
                                             : (int64_t)a[1];
        if (len < 0)
            return -EINVAL;
        int fd = es_hs_open_at(m, c, G_AT_FDCWD, a[0], true, false);
        if (fd < 0)
            return fd;
        char p[64];
        proc_fd(p, sizeof p, fd);
        int r = h->cfg.rw ? truncate(p, len) : (errno = EROFS, -1);
        int e = errno;
        close(fd);
        return r ? -e : 0;
    }
    case ES_SC_ftruncate64:
        if (!(f = es_hs_fd(h, (int)a[0])))
            return -EBADF;
        return ftruncate(f->host, (off_t)(a[1] | a[2] << 32)) ? -errno : 0;
    case ES_SC_fallocate:
        if (!(f = es_hs_fd(h, (int)a[0])))
            return -EBADF;
        if (i386)
            return fallocate(f->host, (int)a[1], (off_t)(a[2] | a[3] << 32),
                             (off_t)(a[4] | a[5] << 32)) ? -errno : 0;
        return fallocate(f->host, (int)a[1], (off_t)a[2], (off_t)a[3]) ? -errno : 0;
    case ES_SC_fadvise64:
    case ES_SC_fadvise64_64:
    case ES_SC_readahead:
    case ES_SC_flock:
    case ES_SC_syncfs:
        return es_hs_fd(h, (int)a[0]) ? 0 : -EBADF; /* advice and locks: one process */
    case ES_SC_sync:
        return 0;
    case ES_SC_epoll_create:
    case ES_SC_epoll_create1: {
        int flags = sc == ES_SC_epoll_create ? 0 : (int)a[0];
        if (sc == ES_SC_epoll_create ? (int)a[0] <= 0 : (flags & ~02000000))
            return -EINVAL;
        int hfd = epoll_create1(EPOLL_CLOEXEC);
        return hfd < 0 ? -errno : es_hs_fd_install(h, hfd, flags != 0);
    }
    case ES_SC_eventfd:
    case ES_SC_eventfd2: {
        int flags = sc == ES_SC_eventfd ? 0 : (int)a[1];
        if (flags & ~(02000000 | 04000 | 1)) /* EFD_CLOEXEC, EFD_NONBLOCK, EFD_SEMAPHORE */
            return -EINVAL;
        int hfd = eventfd((unsigned)a[0], EFD_CLOEXEC | (flags & (04000 | 1)));
        return hfd < 0 ? -errno : es_hs_fd_install(h, hfd, (flags & 02000000) != 0);
    }
    case ES_SC_epoll_ctl: {
        es_hfd *ep = es_hs_fd(h, (int)a[0]), *t = es_hs_fd(h, (int)a[2]);
        if (!ep || !t)
            return -EBADF;
        struct epoll_event ev;
        memset(&ev, 0, sizeof ev);
        if ((int)a[1] != EPOLL_CTL_DEL && es_hs_get(m, c, &ev, a[3], 12))
            return -EFAULT;
        return epoll_ctl(ep->host, (int)a[1], t->host, &ev) ? -errno : 0;
    }
    case ES_SC_epoll_wait: return do_epoll_wait(m, c, (int)a[0], a[1], (int)a[2], (int)a[3]);
    case ES_SC_epoll_pwait: return do_epoll_wait(m, c, (int)a[0], a[1], (int)a[2], (int)a[3]);
    case ES_SC_mknod:
    case ES_SC_mknodat:
        return h->cfg.rw ? -EPERM : -EROFS;
    case ES_SC_select:
        if (i386) { /* old select: struct sel_arg_struct {n, inp, outp, exp, tvp} */
            uint8_t b[20];
            if (es_hs_get(m, c, b, a[0], 20))
                return -EFAULT;
            uint64_t v[5];
            for (int i = 0; i < 5; i++)
                v[i] = es_ld32(b + 4 * i);
            es_scall cc = *c;
            uint64_t args[6] = {v[0], v[1], v[2], v[3], v[4], 0};
            return es_hs_fsmeta(m, &cc, ES_SC__newselect, args);
        }
        /* fall through */
    case ES_SC__newselect: {
        int64_t ns = -1;
        if (a[4]) {
            int64_t s, us;
            int r = es_hs_get_timespec(m, c, a[4], &s, &us); /* timeval: same shape */
            if (r)
                return r;
            if (s < 0 || us < 0 || us >= 1000000)
                return -EINVAL;
            ns = s > 1000000000 ? INT64_MAX / 2 : s * NSEC + us * 1000;
        }
        int64_t r = do_select(m, c, (int)a[0], a[1], a[2], a[3], ns);
        if (r == 0 && a[4])
            es_hs_put_timeval(m, c, a[4], 0, 0); /* the time left */
        return r;
    }
    case ES_SC_pselect6: {
        int64_t ns = -1;
        if (a[4]) {
            int64_t s, fr;
            int r = es_hs_get_timespec(m, c, a[4], &s, &fr);
            if (r)
                return r;
            if (s < 0 || fr < 0 || fr >= NSEC)
                return -EINVAL;
            ns = s > 1000000000 ? INT64_MAX / 2 : s * NSEC + fr;
        }
        int64_t r = do_select(m, c, (int)a[0], a[1], a[2], a[3], ns);
        if (r == 0 && a[4])
            es_hs_put_timespec(m, c, a[4], 0, 0);
        return r;
    }
    default:
        return ES_HS_NEXT;
    }
}
