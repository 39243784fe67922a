/* fs.c - the guest fd table and what works on fds: read and write through
 * a bounce buffer, open/close/dup/fcntl, lseek, pipes, ioctl and poll.
 *
 * Guest fds map to host fds through h->fds: the guest names only fds it
 * opened (or 0/1/2).  Paths are resolved by path.c, confined to the guest
 * root; calls on files by name are in fsdir.c and fsmeta.c.
 */
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
#include "hypercall.h"
#include "task.h"

#define MAX_RW 0x7ffff000ull      /* MAX_RW_COUNT */

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

/* Slot fd now holds a host fd (es_host.fd_top). */
static void fd_used(struct es_host *h, int fd)
{
    if (fd >= h->fd_top)
        h->fd_top = fd + 1;
}

/* Installs host fd hfd (which we own) as the lowest free guest fd >= min. */
static int fd_install(struct es_host *h, int hfd, bool cloexec, int min)
{
    int lim = nofile(h);
    for (int i = min < 0 ? 0 : min; i < lim; i++) {
        if (h->fds[i].host < 0) {
            h->fds[i] = (es_hfd){.host = hfd, .owned = true, .cloexec = cloexec};
            fd_used(h, i);
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

void es_hs_fd_close(struct es_host *h, int fd)
{
    fd_close(h, fd);
}

/* ---- read/write with guest buffers ---- */

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

/* Copies n bytes between host buffer `host` and guest va page by page
 * (to the guest when to_guest); returns the bytes copied before the first
 * bad page. */
static size_t copy_partial(es_machine *m, const es_scall *c, uint64_t va, uint8_t *host, size_t n,
                           bool to_guest)
{
    size_t done = 0;
    while (done < n) {
        size_t k = 4096 - ((va + done) & 0xfff);
        if (k > n - done)
            k = n - done;
        int r = to_guest ? es_hs_put(m, c, va + done, host + done, k)
                         : es_hs_get(m, c, host + done, va + done, k);
        if (r)
            break;
        done += k;
    }
    return done;
}

/* One chunk of read()/pread() (pos < 0: no offset) into guest buf through
 * tmp: the bytes given to the guest, or -errno / -EFAULT when none. */
static int64_t read_chunk(es_machine *m, const es_scall *c, int hfd, uint8_t *tmp, uint64_t buf,
                          size_t want, int64_t pos)
{
    ssize_t r = pos < 0 ? read(hfd, tmp, want) : pread(hfd, tmp, want, (off_t)pos);
    if (r < 0)
        return -errno;
    size_t put = copy_partial(m, c, buf, tmp, (size_t)r, true);
    if (put < (size_t)r) {
        /* Linux stops at the first bad byte: give the rest back */
        if (pos < 0)
            lseek(hfd, -(off_t)((size_t)r - put), SEEK_CUR);
        if (!put)
            return -EFAULT;
    }
    return (int64_t)put;
}

/* One chunk of write()/pwrite() from guest buf through tmp: the bytes
 * written, or -EFAULT / -errno when none. */
static int64_t write_chunk(es_machine *m, const es_scall *c, int hfd, uint8_t *tmp, uint64_t buf,
                           size_t want, int64_t pos)
{
    size_t got = copy_partial(m, c, buf, tmp, want, false);
    if (!got)
        return -EFAULT;
    ssize_t w = es_hs_host_write(m, hfd, tmp, got, pos);
    return w < 0 ? -errno : (int64_t)w;
}

/* read()/pread() (or write()/pwrite() when wr) of up to count bytes of
 * guest buf, one bounce-buffer chunk at a time; pos < 0: no offset.  An
 * error after some bytes ends the call with those bytes, as Linux. */
static int64_t do_rw(es_machine *m, const es_scall *c, int hfd, uint64_t buf, uint64_t count,
                     int64_t pos, bool wr)
{
    if (count > MAX_RW)
        count = MAX_RW;
    if (count == 0)
        return 0;
    size_t cap = count < ES_HS_CHUNK ? (size_t)count : ES_HS_CHUNK;
    uint8_t *tmp = malloc(cap);
    if (!tmp)
        return -ENOMEM;
    uint64_t done = 0;
    int64_t ret = 0;
    while (done < count) {
        size_t want = count - done < cap ? (size_t)(count - done) : cap;
        int64_t p = pos < 0 ? -1 : pos + (int64_t)done;
        int64_t n = wr ? write_chunk(m, c, hfd, tmp, buf + done, want, p)
                       : read_chunk(m, c, hfd, tmp, buf + done, want, p);
        if (n < 0) {
            ret = done ? 0 : n;
            break;
        }
        done += (uint64_t)n;
        if ((size_t)n < want)
            break;
    }
    free(tmp);
    return ret < 0 ? ret : (int64_t)done;
}

static int64_t write_as_task(es_machine *m, const es_scall *c, es_hfd *f, const es_iov *iov,
                             uint64_t cnt);

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
    if (wr && pos < 0 && es_task_multi(m))
        return write_as_task(m, c, f, iov, cnt);
    int w = pos < 0 && total ? es_hs_wait_fd(m, f->host, f->pipe_ino != 0, wr) : 0;
    if (w)
        return w;
    int64_t done = 0;
    for (uint64_t i = 0; i < cnt; i++) {
        if (!iov[i].len)
            continue;
        int64_t p = pos < 0 ? -1 : pos + done;
        int64_t n = do_rw(m, c, f->host, iov[i].base, iov[i].len, p, wr);
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
#define G_O_TMPFILE 020200000

/* A blocking open of a FIFO under a deadline: the host's open would wait
 * for the other end with no bound, so open non-blocking and wait here.
 * For reading, the wait ends with the first data or the writer's close
 * (poll cannot see a writer that opens and stays silent; the guest's
 * next read would wait for its data anyway); for writing, the open is
 * retried until a reader is there (ENXIO until then).  A host fd, -errno,
 * -EINTR with the run stopped, or -EAGAIN: not such an open. */
static int fifo_open(es_machine *m, const char *gp, int flags, bool follow)
{
    struct es_host *h = m->host;
    int acc = flags & G_O_ACCMODE;
    if (!m->deadline_ns || (flags & (O_NONBLOCK | O_PATH | G_O_CREAT)) || acc == O_RDWR)
        return -EAGAIN;
    int probe = es_hs_open_gp(h, gp, O_PATH, 0, follow);
    struct stat st;
    bool fifo = probe >= 0 && !fstat(probe, &st) && S_ISFIFO(st.st_mode);
    if (probe >= 0)
        close(probe);
    if (!fifo)
        return -EAGAIN;
    int hfd;
    while ((hfd = es_hs_open_gp(h, gp, flags | O_NONBLOCK, 0, follow)) == -ENXIO) {
        es_hs_poll_host(m, NULL, 0, 10000000, "opening a FIFO with no reader");
        if (m->stop != ES_STOP_NONE)
            return -EINTR;
    }
    if (hfd >= 0 && acc == O_RDONLY) {
        struct pollfd p = {.fd = hfd, .events = POLLIN};
        es_hs_poll_host(m, &p, 1, -1, "opening a FIFO with no writer");
        if (m->stop != ES_STOP_NONE) {
            close(hfd);
            return -EINTR;
        }
    }
    if (hfd >= 0)
        fcntl(hfd, F_SETFL, fcntl(hfd, F_GETFL) & ~O_NONBLOCK);
    return hfd;
}

static int64_t do_open(es_machine *m, const es_scall *c, int64_t dirfd, uint64_t upath, int flags,
                       uint32_t mode)
{
    struct es_host *h = m->host;
    char gp[ES_HOST_PATH_MAX];
    int r = es_hs_get_gp(m, c, dirfd, upath, gp, sizeof gp, false);
    if (r)
        return r;
    bool writes = (flags & G_O_ACCMODE) != 0 || (flags & (G_O_CREAT | G_O_TRUNC | G_O_APPEND)) ||
                  (flags & G_O_TMPFILE) == G_O_TMPFILE; /* O_TMPFILE includes O_DIRECTORY */
    if (writes && !h->cfg.rw && !(flags & O_PATH))
        return -EROFS;
    /* x86 guests and the x86-64 host share the O_* values */
    bool follow = !(flags & O_NOFOLLOW) && !((flags & O_CREAT) && (flags & O_EXCL));
    int hfd = fifo_open(m, gp, flags & ~O_CLOEXEC, follow);
    if (hfd == -EAGAIN) /* not a FIFO, or no deadline: the host's own open */
        hfd = es_hs_open_gp(h, gp, flags & ~O_CLOEXEC, (mode & 07777) & ~h->umask, follow);
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
    h->fds[newfd] = (es_hfd){.host = hfd, .owned = true, .cloexec = (flags & G_O_CLOEXEC) != 0,
                             .foreign = f->foreign, .pipe_ino = f->pipe_ino};
    fd_used(h, (int)newfd);
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
        uint64_t ino = f->pipe_ino;
        bool foreign = f->foreign;
        int nfd = fd_install(h, hfd, cmd == 1030, (int)arg);
        if (nfd >= 0) {
            h->fds[nfd].pipe_ino = ino;
            h->fds[nfd].foreign = foreign;
        }
        return nfd;
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
    int ready = 0, waits = 0;
    if (!ret) {
        /* struct pollfd {int fd; short events, revents;} on every ABI */
        for (uint64_t i = 0; i < nfds; i++) {
            int gf = (int)es_ld32(raw + i * 8);
            p[i].events = (short)(raw[i * 8 + 4] | raw[i * 8 + 5] << 8);
            es_hfd *f = gf >= 0 ? es_hs_fd(h, gf) : NULL;
            p[i].fd = f ? f->host : -1;
            if (gf >= 0 && !f)
                ready++; /* POLLNVAL, reported below */
            waits += p[i].fd >= 0;
        }
        int r = 0;
        if (!ready && !waits && timeout < 0 && !es_task_multi(m))
            es_hs_deadlock(m, "poll with no fd to wait on and no timeout");
        else if (!ready)
            r = es_hs_poll(m, p, nfds, timeout < 0 ? -1 : timeout * 1000000ll, "poll");
        if (m->stop != ES_STOP_NONE) {
            ret = -EINTR;
        } else if (r < 0) {
            ret = r;
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
    if (es_hs_root_open(m))
        return -1;
    int std[3] = {h->cfg.stdin_fd, h->cfg.stdout_fd, h->cfg.stderr_fd};
    for (int i = 0; i < 3; i++)
        if (std[i] >= 0) {
            h->fds[i] = (es_hfd){.host = std[i], .owned = false, .foreign = true};
            fd_used(h, i);
        }
    return 0;
}

void es_hs_fs_free(es_machine *m)
{
    es_hs_fs_release(m->host);
}

void es_hs_fs_release(struct es_host *h)
{
    for (int i = 0; i < ES_HOST_MAX_FDS; i++)
        if (h->fds[i].host >= 0)
            fd_close(h, i);
    if (h->rootfd >= 0)
        close(h->rootfd);
    h->rootfd = -1;
}

/* fork: the child's fd table holds host dups of the parent's (so an end
 * of a pipe closes when the last task closes it), its own directory
 * cookies and root. */
int es_hs_fs_clone(struct es_host *dst, const struct es_host *src)
{
    dst->rootfd = src->rootfd >= 0 ? fcntl(src->rootfd, F_DUPFD_CLOEXEC, 3) : -1;
    dst->fd_top = src->fd_top;
    for (int i = 0; i < ES_HOST_MAX_FDS; i++) {
        const es_hfd *f = &src->fds[i];
        dst->fds[i] = (es_hfd){.host = -1};
        if (f->host < 0)
            continue;
        es_hfd g = *f;
        g.host = fcntl(f->host, F_DUPFD_CLOEXEC, 3);
        g.owned = true;
        g.doff = NULL;
        if (f->doff && (g.doff = malloc(f->cdoff * sizeof *g.doff)))
            memcpy(g.doff, f->doff, f->cdoff * sizeof *g.doff);
        else
            g.ndoff = g.cdoff = g.dpos = 0;
        if (g.host < 0 || (src->rootfd >= 0 && dst->rootfd < 0)) {
            free(g.doff);
            es_hs_fs_release(dst);
            return -EMFILE;
        }
        dst->fds[i] = g;
    }
    return 0;
}

bool es_hs_fd_is_guest_pipe(const struct es_host *h, int hfd)
{
    for (int i = 0; i < ES_HOST_MAX_FDS; i++)
        if (h->fds[i].host == hfd)
            return h->fds[i].pipe_ino != 0;
    return false;
}

/* ---- services ---- */

/* The fd-table slot of a[0], or return -EBADF. */
#define FD_OR_EBADF(f)                                   \
    es_hfd *f = es_hs_fd(m->host, (int)a[0]);            \
    if (!f)                                              \
        return -EBADF

ES_SYS(read)
{
    FD_OR_EBADF(f);
    int w = es_hs_wait_fd(m, f->host, f->pipe_ino != 0, false);
    return w ? w : do_rw(m, c, f->host, a[1], a[2], -1, false);
}

/* One non-blocking write of a pipe or FIFO (the simulator must not sleep
 * in write() while the reader is another guest task): -EAGAIN when it is
 * full, a partial count past PIPE_BUF. */
static int64_t write_nowait(es_machine *m, const es_scall *c, int hfd, uint64_t buf,
                            uint64_t count)
{
    struct stat st;
    int fl = fcntl(hfd, F_GETFL);
    bool toggle = fl >= 0 && !(fl & O_NONBLOCK) && !fstat(hfd, &st) && S_ISFIFO(st.st_mode);
    if (toggle)
        fcntl(hfd, F_SETFL, fl | O_NONBLOCK);
    int64_t n = do_rw(m, c, hfd, buf, count, -1, true);
    if (toggle)
        fcntl(hfd, F_SETFL, fl);
    return n;
}

/* A write while other tasks run: what fits now goes in; for the rest the
 * task waits (ES_ERESCHED) and the retry goes on where it stopped, so the
 * caller sees one write of all its bytes, as a blocking pipe write on
 * Linux (pipe(7)); an O_NONBLOCK fd gets EAGAIN or the partial count.
 * iov[cnt]: write's one buffer or writev's vector (lengths capped). */
static int64_t write_as_task(es_machine *m, const es_scall *c, es_hfd *f, const es_iov *iov,
                             uint64_t cnt)
{
    es_task *t = es_task_cur(m);
    uint64_t done = t->wait.active ? t->wait.done : 0, total = 0;
    for (uint64_t i = 0; i < cnt; i++)
        total += iov[i].len;
    int fl = fcntl(f->host, F_GETFL);
    while (done < total) {
        uint64_t skip = done, i = 0;
        while (skip >= iov[i].len) /* the buffer and offset `done` is at */
            skip -= iov[i++].len;
        int64_t n = write_nowait(m, c, f->host, iov[i].base + skip, iov[i].len - skip);
        if (n > 0) {
            done += (uint64_t)n;
            continue;
        }
        if (n != -EAGAIN || (fl >= 0 && (fl & O_NONBLOCK)))
            return done ? (int64_t)done : n ? n : -EAGAIN;
        struct pollfd p = {.fd = f->host, .events = POLLOUT};
        int r = es_hs_poll(m, &p, 1, -1, "a write");
        if (r == -ES_ERESCHED)
            t->wait.done = done; /* after es_task_wait: kept for the retry */
        if (r < 0)
            return r == -ES_ERESCHED || !done ? r : (int64_t)done;
    }
    return (int64_t)done;
}

ES_SYS(write)
{
    FD_OR_EBADF(f);
    if (es_task_multi(m)) {
        es_iov one = {.base = a[1], .len = a[2] > MAX_RW ? MAX_RW : a[2]};
        return write_as_task(m, c, f, &one, 1);
    }
    int w = es_hs_wait_fd(m, f->host, f->pipe_ino != 0, true);
    return w ? w : do_rw(m, c, f->host, a[1], a[2], -1, true);
}

/* The position argument a[3] of pread64 and preadv and their kin: i386
 * passes the 64-bit value in two registers (a[3] low, a[4] high). */
static int64_t pos_arg(const es_scall *c, const uint64_t *a)
{
    return c->abi == ES_ABI_I386 ? (int64_t)(a[3] | a[4] << 32) : (int64_t)a[3];
}

static int64_t prw(es_machine *m, const es_scall *c, const uint64_t *a, bool wr)
{
    FD_OR_EBADF(f);
    int64_t pos = pos_arg(c, a);
    if (pos < 0)
        return -EINVAL;
    return do_rw(m, c, f->host, a[1], a[2], pos, wr);
}

ES_SYS(pread64) { return prw(m, c, a, false); }
ES_SYS(pwrite64) { return prw(m, c, a, true); }
ES_SYS(readv) { return do_rwv(m, c, (int)a[0], a[1], a[2], false, -1); }
ES_SYS(writev) { return do_rwv(m, c, (int)a[0], a[1], a[2], true, -1); }

/* preadv/pwritev and their *2 forms (`two`: with RWF_* flags). */
static int64_t prwv(es_machine *m, const es_scall *c, const uint64_t *a, bool wr, bool two)
{
    /* the position: one register on x86-64 (pos_h is shifted out), the
     * x32 rows take a loff_t, i386 two halves */
    int64_t pos = pos_arg(c, a);
    uint64_t flags = c->compat && c->abi != ES_ABI_I386 ? a[4] : a[5];
    if (two && (flags & ~0x1full)) /* RWF_HIPRI DSYNC SYNC NOWAIT APPEND */
        return -EOPNOTSUPP;
    if (pos < 0 && !(two && pos == -1))
        return -EINVAL;
    return do_rwv(m, c, (int)a[0], a[1], a[2], wr, pos);
}

ES_SYS(preadv) { return prwv(m, c, a, false, false); }
ES_SYS(pwritev) { return prwv(m, c, a, true, false); }
ES_SYS(preadv2) { return prwv(m, c, a, false, true); }
ES_SYS(pwritev2) { return prwv(m, c, a, true, true); }
ES_SYS(open) { return do_open(m, c, G_AT_FDCWD, a[0], (int)a[1], (uint32_t)a[2]); }
ES_SYS(openat) { return do_open(m, c, (int)a[0], a[1], (int)a[2], (uint32_t)a[3]); }
ES_SYS(creat) { return do_open(m, c, G_AT_FDCWD, a[0], O_CREAT | O_WRONLY | O_TRUNC, (uint32_t)a[1]); }

ES_SYS(close)
{
    if (!es_hs_fd(m->host, (int)a[0]))
        return -EBADF;
    fd_close(m->host, (int)a[0]);
    return 0;
}

ES_SYS(lseek)
{
    FD_OR_EBADF(f);
    int64_t off = c->abi == ES_ABI_I386 ? (int64_t)(int32_t)a[1] : (int64_t)a[1];
    if ((unsigned)a[2] > 4)
        return -EINVAL;
    if (f->ndoff)
        return es_hs_dir_seek(f, off, (int)a[2]);
    off_t r = lseek(f->host, off, (int)a[2]);
    return r < 0 ? -errno : r;
}

ES_SYS(_llseek)
{
    FD_OR_EBADF(f);
    if ((unsigned)a[4] > 4)
        return -EINVAL;
    int64_t r = f->ndoff ? es_hs_dir_seek(f, (int64_t)((a[1] << 32) | (uint32_t)a[2]), (int)a[4])
                         : lseek(f->host, (off_t)((a[1] << 32) | (uint32_t)a[2]), (int)a[4]);
    if (r < 0)
        return f->ndoff ? r : -errno;
    uint8_t v[8];
    es_st64(v, (uint64_t)r);
    return es_hs_put(m, c, a[3], v, 8);
}

ES_SYS(dup)
{
    FD_OR_EBADF(f);
    int hfd = fcntl(f->host, F_DUPFD_CLOEXEC, 3);
    return hfd < 0 ? -errno : fd_install(m->host, hfd, false, 0);
}

ES_SYS(dup2) { return do_dup3(m->host, (int)a[0], (int)a[1], 0, true); }

ES_SYS(dup3)
{
    if ((int)a[2] & ~G_O_CLOEXEC)
        return -EINVAL;
    return do_dup3(m->host, (int)a[0], (int)a[1], (int)a[2], false);
}

ES_SYS(fcntl) { return do_fcntl(m->host, (int)a[0], (unsigned)a[1], a[2]); }

static int64_t do_pipe(es_machine *m, const es_scall *c, uint64_t ufds, int flags)
{
    struct es_host *h = m->host;
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
    struct stat st;
    if (!fstat(p[0], &st)) /* the ends share the inode */
        h->fds[r].pipe_ino = h->fds[w].pipe_ino = (uint64_t)st.st_ino;
    uint8_t v[8];
    es_st32(v, (uint32_t)r);
    es_st32(v + 4, (uint32_t)w);
    if (es_hs_put(m, c, ufds, v, 8)) {
        fd_close(h, r);
        fd_close(h, w);
        return -EFAULT;
    }
    return 0;
}

ES_SYS(pipe) { return do_pipe(m, c, a[0], 0); }
ES_SYS(pipe2) { return do_pipe(m, c, a[0], (int)a[1]); }

ES_SYS(ftruncate)
{
    FD_OR_EBADF(f);
    int64_t len = c->abi == ES_ABI_I386 ? (int64_t)(uint32_t)a[1] : (int64_t)a[1];
    return ftruncate(f->host, len) ? -errno : 0;
}

ES_SYS(fchmod)
{
    FD_OR_EBADF(f);
    if (!m->host->cfg.rw)
        return -EROFS;
    return fchmod(f->host, (mode_t)a[1] & 07777) ? -errno : 0;
}

/* fsync and the advice and lock calls: one process, no one to tell */
ES_SYS(fd_advice)
{
    return es_hs_fd(m->host, (int)a[0]) ? 0 : -EBADF;
}

ES_SYS(umask)
{
    uint32_t old = m->host->umask;
    m->host->umask = (uint32_t)a[0] & 0777;
    return old;
}

ES_SYS(ioctl) { return do_ioctl(m, c, (int)a[0], (uint32_t)a[1], a[2]); }
ES_SYS(poll) { return do_poll(m, c, a[0], (uint32_t)a[1], (int)a[2]); }

ES_SYS(ppoll)
{
    int ms = -1;
    if (a[2]) {
        int64_t s, ns;
        int r = es_hs_get_timeout(m, c, a[2], NSEC, &s, &ns);
        if (r)
            return r;
        ms = s > 1000000 ? 1000000000 : (int)(s * 1000 + (ns + 999999) / 1000000);
    }
    return do_poll(m, c, a[0], (uint32_t)a[1], ms);
}
