/* proc.c - the process: exit, ids, uname, time, signals, limits, random
 * bytes, TLS (arch_prctl, set_thread_area), futexes and system information.
 *
 * One single-threaded process.  Signals are recorded, not delivered: a
 * signal the guest sends itself takes its default action when that action
 * ends the process (abort() -> SIGABRT), and is otherwise dropped.  With
 * --deterministic, time is a function of the instruction count (1 ns per
 * instruction from 2020-01-01 00:00:00 UTC, plus the time "slept"), and
 * random bytes come from a fixed-seed splitmix64 stream.
 */
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "host_int.h"
#include "mem.h"

#define NSEC 1000000000ll
#define DET_EPOCH 1577836800ll /* 2020-01-01T00:00:00Z */
#define G_SIGKILL 9
#define G_SIGSTOP 19

/* ---- time ---- */

/* Clock `clk` (CLOCK_* id) in ns; -EINVAL for an unknown clock. */
static int clock_ns(es_machine *m, int64_t clk, int64_t *ns)
{
    struct es_host *h = m->host;
    if (clk < 0 || clk > 11 || clk == 8 || clk == 9 || clk == 10)
        return -EINVAL; /* 8/9: alarm clocks, 10: unused */
    if (m->deterministic || h->cfg.deterministic) {
        uint64_t ic = m->icount > (uint64_t)INT64_MAX / 4 ? (uint64_t)INT64_MAX / 4 : m->icount;
        int64_t t = (int64_t)ic + h->sleep_ns;
        bool wall = clk == 0 || clk == 5 || clk == 11; /* REALTIME, _COARSE, TAI */
        bool cpu = clk == 2 || clk == 3;
        *ns = cpu ? (int64_t)ic : wall ? DET_EPOCH * NSEC + t : t;
        return 0;
    }
    struct timespec ts;
    if (clock_gettime((clockid_t)clk, &ts))
        return -errno;
    *ns = ts.tv_sec * NSEC + ts.tv_nsec;
    return 0;
}

static int64_t do_clock_gettime(es_machine *m, const es_scall *c, int64_t clk, uint64_t utp)
{
    int64_t ns;
    int r = clock_ns(m, clk, &ns);
    if (r)
        return r;
    return es_hs_put_timespec(m, c, utp, ns / NSEC, ns % NSEC);
}

/* Sleeps ns (or advances the deterministic clock by it). */
static int64_t do_sleep(es_machine *m, int64_t ns)
{
    if (ns <= 0)
        return 0;
    if (m->deterministic || m->host->cfg.deterministic) {
        es_hs_slept(m->host, ns);
        return 0;
    }
    struct timespec ts = {.tv_sec = ns / NSEC, .tv_nsec = ns % NSEC};
    while (nanosleep(&ts, &ts) && errno == EINTR)
        ;
    return 0;
}

static int64_t do_nanosleep(es_machine *m, const es_scall *c, int64_t clk, int flags, uint64_t ureq)
{
    int64_t s, ns;
    int r = es_hs_get_timespec(m, c, ureq, &s, &ns);
    if (r)
        return r;
    if (s < 0 || ns < 0 || ns >= NSEC)
        return -EINVAL;
    int64_t want = s > INT64_MAX / NSEC - 1 ? INT64_MAX / 2 : s * NSEC + ns;
    if (flags & 1) { /* TIMER_ABSTIME */
        int64_t now;
        r = clock_ns(m, clk, &now);
        if (r)
            return r;
        want -= now;
    }
    return do_sleep(m, want);
}

/* ---- random ---- */

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int64_t do_getrandom(es_machine *m, const es_scall *c, uint64_t ubuf, uint64_t count,
                            unsigned flags)
{
    struct es_host *h = m->host;
    if (flags & ~3u) /* GRND_NONBLOCK | GRND_RANDOM */
        return -EINVAL;
    if (count > 0x1ffffff) /* INT_MAX >> (ENTROPY_SHIFT + 3) */
        count = 0x1ffffff;
    uint8_t buf[4096];
    uint64_t done = 0;
    while (done < count) {
        size_t n = count - done < sizeof buf ? (size_t)(count - done) : sizeof buf;
        if (m->deterministic || h->cfg.deterministic) {
            for (size_t i = 0; i < n; i += 8) {
                uint64_t v = splitmix64(&h->rng);
                memcpy(buf + i, &v, n - i < 8 ? n - i : 8);
            }
        } else {
            size_t got = 0;
            while (got < n) {
                ssize_t r = getrandom(buf + got, n - got, 0);
                if (r < 0 && errno != EINTR)
                    return done ? (int64_t)done : -errno;
                if (r > 0)
                    got += (size_t)r;
            }
        }
        if (es_hs_put(m, c, ubuf + done, buf, n))
            return done ? (int64_t)done : -EFAULT;
        done += n;
    }
    return (int64_t)done;
}

/* ---- signals ---- */

static bool default_ignored(int sig)
{
    /* SIGCHLD SIGCONT SIGURG SIGWINCH are ignored by default; the stop
     * signals would stop us until a SIGCONT nobody can send: drop them */
    return sig == 17 || sig == 18 || sig == 23 || sig == 28 || (sig >= 19 && sig <= 22);
}

int64_t es_hs_signal_self(es_machine *m, int sig)
{
    struct es_host *h = m->host;
    if (sig < 0 || sig > 64)
        return -EINVAL;
    if (sig == 0)
        return 0;
    if (sig != G_SIGKILL) {
        if (h->sigmask & (1ull << (sig - 1)))
            return 0; /* blocked: stays pending, never delivered */
        uint64_t hd = h->sigact[sig].handler;
        if (hd == 1 /* SIG_IGN */ || (hd == 0 && default_ignored(sig)))
            return 0;
        if (hd > 1)
            return 0; /* handlers are not run in --direct mode */
    }
    es_hs_kill_self(m, sig);
    return 0;
}

static int64_t do_rt_sigaction(es_machine *m, const es_scall *c, int64_t sig, uint64_t uact,
                               uint64_t uold, uint64_t setsize)
{
    struct es_host *h = m->host;
    if (setsize != 8)
        return -EINVAL;
    if (sig < 1 || sig > 64 || (uact && (sig == G_SIGKILL || sig == G_SIGSTOP)))
        return -EINVAL;
    es_ksigaction nsa;
    if (uact) {
        int r = es_hs_get_sigaction(m, c, uact, &nsa);
        if (r)
            return r;
    }
    if (uold) {
        int r = es_hs_put_sigaction(m, c, uold, &h->sigact[sig]);
        if (r)
            return r;
    }
    if (uact) {
        nsa.mask &= ~((1ull << (G_SIGKILL - 1)) | (1ull << (G_SIGSTOP - 1)));
        h->sigact[sig] = nsa;
    }
    return 0;
}

/* i386 sigaction (#67): struct old_sigaction {handler, mask, flags, restorer}. */
static int64_t do_old_sigaction(es_machine *m, const es_scall *c, int64_t sig, uint64_t uact,
                                uint64_t uold)
{
    struct es_host *h = m->host;
    if (sig < 1 || sig > 64 || (uact && (sig == G_SIGKILL || sig == G_SIGSTOP)))
        return -EINVAL;
    uint8_t b[16];
    es_ksigaction nsa = {0};
    if (uact) {
        int r = es_hs_get(m, c, b, uact, 16);
        if (r)
            return r;
        nsa.handler = es_ld32(b);
        nsa.mask = es_ld32(b + 4);
        nsa.flags = es_ld32(b + 8);
        nsa.restorer = es_ld32(b + 12);
    }
    if (uold) {
        const es_ksigaction *o = &h->sigact[sig];
        es_st32(b, (uint32_t)o->handler);
        es_st32(b + 4, (uint32_t)o->mask);
        es_st32(b + 8, (uint32_t)o->flags);
        es_st32(b + 12, (uint32_t)o->restorer);
        int r = es_hs_put(m, c, uold, b, 16);
        if (r)
            return r;
    }
    if (uact)
        h->sigact[sig] = nsa;
    return 0;
}

static int64_t do_sigprocmask(es_machine *m, const es_scall *c, int how, uint64_t uset,
                              uint64_t uold, size_t size)
{
    struct es_host *h = m->host;
    uint8_t b[8] = {0};
    uint64_t set = 0;
    if (uset) {
        int r = es_hs_get(m, c, b, uset, size);
        if (r)
            return r;
        set = size == 8 ? es_ld64(b) : es_ld32(b);
        if (how < 0 || how > 2)
            return -EINVAL;
    }
    if (uold) {
        es_st64(b, h->sigmask);
        int r = es_hs_put(m, c, uold, b, size);
        if (r)
            return r;
    }
    if (uset) {
        uint64_t keep = size == 8 ? 0 : h->sigmask & ~0xffffffffull;
        if (how == 0)
            h->sigmask |= set;
        else if (how == 1)
            h->sigmask &= ~set;
        else
            h->sigmask = keep | set;
        h->sigmask &= ~((1ull << (G_SIGKILL - 1)) | (1ull << (G_SIGSTOP - 1)));
    }
    return 0;
}

static int64_t do_sigaltstack(es_machine *m, const es_scall *c, uint64_t uss, uint64_t uoss)
{
    struct es_host *h = m->host;
    /* stack_t: {void *ss_sp; int ss_flags; size_t ss_size} (24 bytes), or
     * compat {u32 sp; s32 flags; u32 size} (12) */
    bool cm = c->compat;
    uint8_t b[24];
    uint64_t sp = 0, size = 0;
    uint32_t flags = 0;
    if (uss) {
        int r = es_hs_get(m, c, b, uss, cm ? 12 : 24);
        if (r)
            return r;
        sp = cm ? es_ld32(b) : es_ld64(b);
        flags = es_ld32(b + (cm ? 4 : 8));
        size = cm ? es_ld32(b + 8) : es_ld64(b + 16);
        uint32_t mode = flags & ~0x80000000u; /* SS_AUTODISARM */
        if (mode != 0 && mode != 2 /* SS_DISABLE */ && mode != 1 /* SS_ONSTACK */)
            return -EINVAL;
        if (mode != 2 && size < 2048) /* MINSIGSTKSZ */
            return -ENOMEM;
    }
    if (uoss) {
        memset(b, 0, sizeof b);
        uint32_t of = h->ss_size ? h->ss_flags : 2;
        if (cm) {
            es_st32(b, (uint32_t)h->ss_sp);
            es_st32(b + 4, of);
            es_st32(b + 8, (uint32_t)h->ss_size);
        } else {
            es_st64(b, h->ss_sp);
            es_st32(b + 8, of);
            es_st64(b + 16, h->ss_size);
        }
        int r = es_hs_put(m, c, uoss, b, cm ? 12 : 24);
        if (r)
            return r;
    }
    if (uss) {
        if ((flags & ~0x80000000u) == 2) {
            h->ss_sp = h->ss_size = 0;
            h->ss_flags = 2;
        } else {
            h->ss_sp = sp;
            h->ss_size = size;
            h->ss_flags = flags & 0x80000000u;
        }
    }
    return 0;
}

/* ---- prctl: the few options programs use on themselves ---- */

static int64_t do_prctl(es_machine *m, const es_scall *c, int op, uint64_t arg)
{
    struct es_host *h = m->host;
    uint8_t b[16];
    switch (op) {
    case 15: /* PR_SET_NAME: 16 bytes, NUL-terminated */
        if (es_hs_get_str(m, c, arg, (char *)b, sizeof b) == -EFAULT)
            return -EFAULT;
        memcpy(h->comm, b, sizeof b);
        h->comm[15] = 0;
        return 0;
    case 16: /* PR_GET_NAME */
        return es_hs_put(m, c, arg, h->comm, 16);
    case 1: /* PR_SET_PDEATHSIG */
        return arg > 64 ? -EINVAL : 0;
    case 2: /* PR_GET_PDEATHSIG */
        memset(b, 0, 4);
        return es_hs_put(m, c, arg, b, 4);
    case 3: return 1; /* PR_GET_DUMPABLE */
    case 4: return arg > 1 ? -EINVAL : 0; /* PR_SET_DUMPABLE */
    case 38: return arg == 1 ? 0 : -EINVAL; /* PR_SET_NO_NEW_PRIVS */
    case 39: return 0; /* PR_GET_NO_NEW_PRIVS */
    default: return -EINVAL;
    }
}

/* ---- TLS ---- */

#define ARCH_SET_GS 0x1001
#define ARCH_SET_FS 0x1002
#define ARCH_GET_FS 0x1003
#define ARCH_GET_GS 0x1004
#define ARCH_GET_CPUID 0x1011
#define ARCH_SET_CPUID 0x1012

static int64_t do_arch_prctl(es_machine *m, const es_scall *c, int code, uint64_t arg)
{
    if (code == ARCH_GET_CPUID)
        return 1; /* CPUID is never made to fault */
    if (code == ARCH_SET_CPUID)
        return arg ? 0 : -ENODEV; /* no CPUID faulting support */
    if (c->abi == ES_ABI_I386)
        return -EINVAL; /* compat arch_prctl knows only the CPUID codes */
    switch (code) {
    case ARCH_SET_FS:
    case ARCH_SET_GS: {
        if (arg >= 0x7ffffffff000ull) /* TASK_SIZE_MAX */
            return -EPERM;
        int s = code == ARCH_SET_FS ? ES_SEG_FS : ES_SEG_GS;
        m->seg[s].sel = 0; /* Linux loads a null selector, then the base */
        m->seg[s].base = arg;
        return 0;
    }
    case ARCH_GET_FS:
    case ARCH_GET_GS: {
        uint8_t v[8];
        es_st64(v, m->seg[code == ARCH_GET_FS ? ES_SEG_FS : ES_SEG_GS].base);
        return es_hs_put(m, c, arg, v, 8);
    }
    default:
        return -EINVAL;
    }
}

#define GDT_TLS_MIN 12
#define GDT_TLS_MAX 14

/* struct user_desc -> raw descriptor as fill_ldt (arch/x86/include/asm/desc.h). */
static uint64_t user_desc_to_raw(const uint8_t *u)
{
    uint32_t base = es_ld32(u + 4), limit = es_ld32(u + 8), fl = es_ld32(u + 12);
    uint32_t seg_32bit = fl & 1, contents = (fl >> 1) & 3, ro = (fl >> 3) & 1,
             pages = (fl >> 4) & 1, notp = (fl >> 5) & 1, useable = (fl >> 6) & 1;
    /* LDT_empty: a "clear this entry" request */
    if (!base && !limit && !contents && ro && !seg_32bit && !pages && notp && !useable)
        return 0;
    uint64_t type = ((ro ^ 1) << 1) | (contents << 2) | 1; /* accessed set, as 4.17 */
    uint64_t d = (limit & 0xffff) | (uint64_t)(base & 0xffffff) << 16;
    d |= type << 40;
    d |= 1ull << 44;               /* S: code/data */
    d |= 3ull << 45;               /* DPL 3 */
    d |= (uint64_t)(notp ^ 1) << 47;
    d |= (uint64_t)((limit >> 16) & 0xf) << 48;
    d |= (uint64_t)useable << 52;
    d |= (uint64_t)seg_32bit << 54;
    d |= (uint64_t)pages << 55;
    d |= (uint64_t)(base >> 24) << 56;
    return d;
}

static void raw_to_user_desc(uint64_t d, uint32_t idx, uint8_t *u)
{
    memset(u, 0, 16);
    es_st32(u, idx);
    uint32_t base = (uint32_t)((d >> 16) & 0xffffff) | (uint32_t)(d >> 56) << 24;
    uint32_t limit = (uint32_t)(d & 0xffff) | (uint32_t)((d >> 48) & 0xf) << 16;
    uint32_t type = (d >> 40) & 0xf;
    uint32_t fl = (uint32_t)((d >> 54) & 1) | ((type >> 2) & 3) << 1 | (((type >> 1) & 1) ^ 1) << 3 |
                  (uint32_t)((d >> 55) & 1) << 4 | (uint32_t)(((d >> 47) & 1) ^ 1) << 5 |
                  (uint32_t)((d >> 52) & 1) << 6;
    if (!d)
        fl = 1u << 3 | 1u << 5; /* read_exec_only, seg_not_present */
    es_st32(u + 4, base);
    es_st32(u + 8, limit);
    es_st32(u + 12, fl);
}

static int64_t do_set_thread_area(es_machine *m, const es_scall *c, uint64_t uinfo)
{
    uint8_t u[16];
    int r = es_hs_get(m, c, u, uinfo, 16);
    if (r)
        return r;
    uint32_t idx = es_ld32(u);
    if (idx == 0xffffffffu) {
        /* the first free TLS slot, reported back to the caller */
        for (idx = GDT_TLS_MIN; idx <= GDT_TLS_MAX && m->gdt[idx]; idx++)
            ;
        if (idx > GDT_TLS_MAX)
            return -ESRCH;
        uint8_t v[4];
        es_st32(v, idx);
        r = es_hs_put(m, c, uinfo, v, 4);
        if (r)
            return r;
    }
    if (idx < GDT_TLS_MIN || idx > GDT_TLS_MAX)
        return -EINVAL;
    uint64_t d = user_desc_to_raw(u);
    m->gdt[idx] = d;
    /* a segment register holding this selector is reloaded, as
     * do_set_thread_area does for the current task */
    uint16_t sel = (uint16_t)(idx << 3 | 3);
    static const int segs[4] = {ES_SEG_DS, ES_SEG_ES, ES_SEG_FS, ES_SEG_GS};
    for (int i = 0; i < 4; i++) {
        es_segreg *s = &m->seg[segs[i]];
        if (s->sel != sel)
            continue;
        s->base = (uint32_t)(((d >> 16) & 0xffffff) | (d >> 56) << 24);
        uint32_t lim = (uint32_t)((d & 0xffff) | ((d >> 48) & 0xf) << 16);
        s->limit = (d >> 55) & 1 ? lim << 12 | 0xfff : lim;
        s->attr = (uint16_t)(((d >> 40) & 0xff) | ((d >> 52) & 0xf) << 8);
    }
    return 0;
}

static int64_t do_get_thread_area(es_machine *m, const es_scall *c, uint64_t uinfo)
{
    uint8_t u[16];
    int r = es_hs_get(m, c, u, uinfo, 4);
    if (r)
        return r;
    uint32_t idx = es_ld32(u);
    if (idx < GDT_TLS_MIN || idx > GDT_TLS_MAX)
        return -EINVAL;
    raw_to_user_desc(m->gdt[idx], idx, u);
    return es_hs_put(m, c, uinfo, u, 16);
}

/* ---- futex ---- */

static int64_t do_futex(es_machine *m, const es_scall *c, uint64_t uaddr, int op, uint32_t val,
                        uint64_t utime, uint64_t uaddr2, uint32_t val3)
{
    int cmd = op & 0x7f; /* without FUTEX_PRIVATE_FLAG and FUTEX_CLOCK_REALTIME */
    if (uaddr & 3)
        return -EINVAL;
    uint8_t b[4];
    switch (cmd) {
    case 0: /* FUTEX_WAIT */
    case 9: /* FUTEX_WAIT_BITSET */ {
        if (cmd == 9 && !val3)
            return -EINVAL;
        int r = es_hs_get(m, c, b, uaddr, 4);
        if (r)
            return r;
        if (es_ld32(b) != val)
            return -EAGAIN;
        if (utime)
            return -ETIMEDOUT; /* nobody else can wake us */
        snprintf(m->message, sizeof m->message,
                 "futex wait at 0x%llx would block forever (single-threaded guest)",
                 (unsigned long long)uaddr);
        m->stop = ES_STOP_ERROR;
        return -EINTR;
    }
    case 1:  /* FUTEX_WAKE */
    case 10: /* FUTEX_WAKE_BITSET */
        return cmd == 10 && !val3 ? -EINVAL : 0;
    case 3: /* FUTEX_REQUEUE */
        return 0;
    case 4: { /* FUTEX_CMP_REQUEUE */
        int r = es_hs_get(m, c, b, uaddr, 4);
        if (r)
            return r;
        return es_ld32(b) != val3 ? -EAGAIN : 0;
    }
    case 5: { /* FUTEX_WAKE_OP: do the operation on *uaddr2, wake nobody */
        if (uaddr2 & 3)
            return -EINVAL;
        int r = es_hs_get(m, c, b, uaddr2, 4);
        if (r)
            return r;
        uint32_t old = es_ld32(b), oparg = (val3 >> 12) & 0xfff, nv;
        unsigned fop = (val3 >> 28) & 0xf;
        if (fop & 8)
            oparg = oparg < 32 ? 1u << oparg : 0;
        switch (fop & 7) {
        case 0: nv = oparg; break;
        case 1: nv = old + oparg; break;
        case 2: nv = old | oparg; break;
        case 3: nv = old & ~oparg; break;
        case 4: nv = old ^ oparg; break;
        default: return -ENOSYS;
        }
        es_st32(b, nv);
        return es_hs_put(m, c, uaddr2, b, 4);
    }
    default:
        return -ENOSYS;
    }
}

/* ---- limits ---- */

static int64_t do_prlimit(es_machine *m, const es_scall *c, int64_t pid, unsigned res,
                          uint64_t unew, uint64_t uold)
{
    struct es_host *h = m->host;
    if (pid && pid != h->pid)
        return -ESRCH;
    if (res >= 16)
        return -EINVAL;
    es_rlim nl;
    uint8_t b[16];
    if (unew) {
        int r = es_hs_get(m, c, b, unew, 16);
        if (r)
            return r;
        nl.cur = es_ld64(b);
        nl.max = es_ld64(b + 8);
        if (nl.cur > nl.max)
            return -EINVAL;
        if (nl.max > h->rlim[res].max || (res == 7 && nl.max > ES_HOST_MAX_FDS))
            return -EPERM;
    }
    if (uold) {
        es_st64(b, h->rlim[res].cur);
        es_st64(b + 8, h->rlim[res].max);
        int r = es_hs_put(m, c, uold, b, 16);
        if (r)
            return r;
    }
    if (unew)
        h->rlim[res] = nl;
    return 0;
}

/* getrlimit in the compat layout: {u32 cur, u32 max}, infinity clamped to
 * `inf` (0xffffffff for ugetrlimit, 0x7fffffff for the old getrlimit). */
static int64_t do_getrlimit32(es_machine *m, const es_scall *c, unsigned res, uint64_t u, uint32_t inf)
{
    if (res >= 16)
        return -EINVAL;
    const es_rlim *l = &m->host->rlim[res];
    uint8_t b[8];
    es_st32(b, l->cur > inf ? inf : (uint32_t)l->cur);
    es_st32(b + 4, l->max > inf ? inf : (uint32_t)l->max);
    return es_hs_put(m, c, u, b, 8);
}

static int64_t do_setrlimit(es_machine *m, const es_scall *c, unsigned res, uint64_t u)
{
    if (res >= 16)
        return -EINVAL;
    uint8_t b[16];
    if (c->abi == ES_ABI_I386) {
        int r = es_hs_get(m, c, b, u, 8);
        if (r)
            return r;
        uint32_t cur = es_ld32(b), max = es_ld32(b + 4);
        es_st64(b, cur == 0xffffffffu ? ~0ull : cur);
        es_st64(b + 8, max == 0xffffffffu ? ~0ull : max);
    } else {
        int r = es_hs_get(m, c, b, u, 16);
        if (r)
            return r;
    }
    /* through prlimit's checks, from a host copy of the limits */
    es_rlim nl = {es_ld64(b), es_ld64(b + 8)};
    struct es_host *h = m->host;
    if (nl.cur > nl.max)
        return -EINVAL;
    if (nl.max > h->rlim[res].max || (res == 7 && nl.max > ES_HOST_MAX_FDS))
        return -EPERM;
    h->rlim[res] = nl;
    return 0;
}

/* ---- system information ---- */

static int64_t do_uname(es_machine *m, const es_scall *c, uint64_t u)
{
    char b[6 * 65];
    memset(b, 0, sizeof b);
    strcpy(b + 0 * 65, "Linux");
    strcpy(b + 1 * 65, "entrysim");
    strcpy(b + 2 * 65, "4.17.0-entrysim");
    strcpy(b + 3 * 65, "#1 SMP PREEMPT Sun Jun 3 21:00:00 UTC 2018");
    strcpy(b + 4 * 65, c->abi == ES_ABI_I386 ? "i686" : "x86_64");
    strcpy(b + 5 * 65, "(none)");
    return es_hs_put(m, c, u, b, sizeof b);
}

/* i386 olduname (#109): struct old_utsname, five 65-byte fields;
 * oldolduname (#59): struct oldold_utsname, five 9-byte fields. */
static int64_t do_old_uname(es_machine *m, const es_scall *c, uint64_t u, size_t len)
{
    static const char *const f[5] = {"Linux", "entrysim", "4.17.0-entrysim",
                                     "#1 SMP PREEMPT Sun Jun 3 21:00:00 UTC 2018", "i686"};
    char b[5 * 65];
    memset(b, 0, sizeof b);
    for (int i = 0; i < 5; i++)
        strncpy(b + i * len, f[i], len - 1);
    return es_hs_put(m, c, u, b, 5 * len);
}

static int64_t do_sysinfo(es_machine *m, const es_scall *c, uint64_t u)
{
    int64_t up;
    clock_ns(m, 7 /* BOOTTIME */, &up);
    uint64_t total = m->mem_cap, used = m->frames_used * 4096ull;
    uint64_t freeram = total > used ? total - used : 0;
    uint8_t b[112];
    memset(b, 0, sizeof b);
    if (c->compat) {
        /* struct compat_sysinfo: 64 bytes, all 32-bit; mem_unit scales */
        uint32_t unit = total >> 32 ? 4096 : 1;
        es_st32(b, (uint32_t)(up / NSEC));
        es_st32(b + 16, (uint32_t)(total / unit));
        es_st32(b + 20, (uint32_t)(freeram / unit));
        es_st16(b + 40, 1); /* procs */
        es_st32(b + 52, unit);
        return es_hs_put(m, c, u, b, 64);
    }
    es_st64(b, (uint64_t)(up / NSEC));
    es_st64(b + 32, total);
    es_st64(b + 40, freeram);
    es_st16(b + 80, 1);
    es_st32(b + 104, 1);
    return es_hs_put(m, c, u, b, 112);
}

static int64_t cpu_ns(es_machine *m)
{
    int64_t ns;
    clock_ns(m, 2 /* PROCESS_CPUTIME */, &ns);
    return ns;
}

static int64_t do_getrusage(es_machine *m, const es_scall *c, int who, uint64_t u)
{
    if (who != 0 && who != -1 && who != 1) /* SELF, CHILDREN, THREAD */
        return -EINVAL;
    int64_t t = who == -1 ? 0 : cpu_ns(m);
    uint8_t b[144];
    memset(b, 0, sizeof b);
    uint64_t maxrss = who == -1 ? 0 : m->frames_used * 4; /* KiB */
    if (c->compat) {
        es_st32(b, (uint32_t)(t / NSEC));
        es_st32(b + 4, (uint32_t)(t % NSEC / 1000));
        es_st32(b + 16, (uint32_t)maxrss);
        return es_hs_put(m, c, u, b, 72);
    }
    es_st64(b, (uint64_t)(t / NSEC));
    es_st64(b + 8, (uint64_t)(t % NSEC / 1000));
    es_st64(b + 32, maxrss);
    return es_hs_put(m, c, u, b, 144);
}

static int64_t do_times(es_machine *m, const es_scall *c, uint64_t u)
{
    int64_t up;
    clock_ns(m, 7, &up);
    uint64_t ticks = (uint64_t)cpu_ns(m) / 10000000; /* USER_HZ = 100 */
    if (u) {
        uint8_t b[32];
        memset(b, 0, sizeof b);
        if (c->compat) {
            es_st32(b, (uint32_t)ticks);
            if (es_hs_put(m, c, u, b, 16))
                return -EFAULT;
        } else {
            es_st64(b, ticks);
            if (es_hs_put(m, c, u, b, 32))
                return -EFAULT;
        }
    }
    uint64_t now = (uint64_t)up / 10000000;
    return c->abi == ES_ABI_I386 ? (int64_t)(uint32_t)now : (int64_t)now;
}

static int64_t put_ids(es_machine *m, const es_scall *c, const uint64_t *u, uint32_t id, bool w16)
{
    uint8_t b[4];
    for (int i = 0; i < 3; i++) {
        if (w16)
            es_st16(b, id & ~0xffffu ? 65534 : (uint16_t)id);
        else
            es_st32(b, id);
        int r = es_hs_put(m, c, u[i], b, w16 ? 2 : 4);
        if (r)
            return r;
    }
    return 0;
}

/* ---- dispatch ---- */

int64_t es_hs_proc(es_machine *m, const es_scall *c, int sc, const uint64_t *a)
{
    struct es_host *h = m->host;
    bool i386 = c->abi == ES_ABI_I386;
    uint32_t uid16 = h->uid & ~0xffffu ? 65534 : h->uid, gid16 = h->gid & ~0xffffu ? 65534 : h->gid;
    switch (sc) {
    case ES_SC_exit:
    case ES_SC_exit_group:
        m->exit_status = (int)(a[0] & 0xff);
        m->stop = ES_STOP_EXIT;
        return 0;
    case ES_SC_getpid:
    case ES_SC_gettid:
    case ES_SC_getpgrp:
    case ES_SC_getsid:
    case ES_SC_getpgid:
        return h->pid;
    case ES_SC_getppid: return h->ppid;
    case ES_SC_set_tid_address:
        h->tid_address = a[0];
        return h->pid;
    case ES_SC_set_robust_list:
        if (a[1] != (c->compat ? 12u : 24u))
            return -EINVAL;
        h->robust_head = a[0];
        h->robust_len = a[1];
        return 0;
    /* i386's unsuffixed id calls are the 16-bit ones */
    case ES_SC_getuid:
    case ES_SC_geteuid: return i386 ? uid16 : h->uid;
    case ES_SC_getgid:
    case ES_SC_getegid: return i386 ? gid16 : h->gid;
    case ES_SC_getuid32:
    case ES_SC_geteuid32: return h->uid;
    case ES_SC_getgid32:
    case ES_SC_getegid32: return h->gid;
    case ES_SC_getresuid: return put_ids(m, c, a, h->uid, i386);
    case ES_SC_getresgid: return put_ids(m, c, a, h->gid, i386);
    case ES_SC_getresuid32: return put_ids(m, c, a, h->uid, false);
    case ES_SC_getresgid32: return put_ids(m, c, a, h->gid, false);
    case ES_SC_getgroups:
    case ES_SC_getgroups32:
        return (int)a[0] < 0 ? -EINVAL : 0;
    case ES_SC_setuid:
    case ES_SC_setuid32:
        return (uint32_t)a[0] == h->uid ? 0 : -EPERM;
    case ES_SC_setgid:
    case ES_SC_setgid32:
        return (uint32_t)a[0] == h->gid ? 0 : -EPERM;
    case ES_SC_setpgid: return 0;
    case ES_SC_setsid: return -EPERM; /* already a session leader */
    case ES_SC_uname: return do_uname(m, c, a[0]);
    case ES_SC_olduname: return do_old_uname(m, c, a[0], 65);
    case ES_SC_oldolduname: return do_old_uname(m, c, a[0], 9);
    case ES_SC_personality: return 0; /* PER_LINUX */
    case ES_SC_arch_prctl: return do_arch_prctl(m, c, (int)a[0], a[1]);
    case ES_SC_set_thread_area:
        return i386 ? do_set_thread_area(m, c, a[0]) : ES_HS_NEXT;
    case ES_SC_get_thread_area:
        return i386 ? do_get_thread_area(m, c, a[0]) : ES_HS_NEXT;
    case ES_SC_futex:
        return do_futex(m, c, a[0], (int)a[1], (uint32_t)a[2], a[3], a[4], (uint32_t)a[5]);
    case ES_SC_clock_gettime: return do_clock_gettime(m, c, (int)a[0], a[1]);
    case ES_SC_clock_getres: {
        int64_t ns;
        int r = clock_ns(m, (int)a[0], &ns);
        if (r)
            return r;
        bool coarse = (int)a[0] == 5 || (int)a[0] == 6;
        return a[1] ? es_hs_put_timespec(m, c, a[1], 0, coarse ? 4000000 : 1) : 0;
    }
    case ES_SC_gettimeofday: {
        int64_t ns;
        clock_ns(m, 0, &ns);
        if (a[0]) {
            int r = es_hs_put_timeval(m, c, a[0], ns / NSEC, ns % NSEC / 1000);
            if (r)
                return r;
        }
        if (a[1]) {
            uint8_t z[8] = {0}; /* struct timezone: UTC */
            return es_hs_put(m, c, a[1], z, 8);
        }
        return 0;
    }
    case ES_SC_time: {
        int64_t ns;
        clock_ns(m, 0, &ns);
        int64_t s = ns / NSEC;
        if (a[0]) {
            uint8_t v[8];
            es_st64(v, (uint64_t)s);
            int r = es_hs_put(m, c, a[0], v, i386 ? 4 : 8);
            if (r)
                return r;
        }
        return i386 ? (int64_t)(uint32_t)s : s;
    }
    case ES_SC_nanosleep: return do_nanosleep(m, c, 1, 0, a[0]);
    case ES_SC_clock_nanosleep: {
        int64_t ns;
        int r = clock_ns(m, (int)a[0], &ns);
        if (r)
            return r;
        if ((int)a[0] == 2 || (int)a[0] == 3)
            return -EINVAL; /* not on the CPU-time clocks of the caller */
        return do_nanosleep(m, c, (int)a[0], (int)a[1], a[2]);
    }
    case ES_SC_sched_yield: return 0;
    case ES_SC_sched_getaffinity: {
        /* one CPU: cpumask_size() is one long of the caller's ABI */
        unsigned sz = c->compat ? 4 : 8;
        if ((uint32_t)a[1] < sz || ((uint32_t)a[1] & (sz - 1)))
            return -EINVAL;
        uint8_t mask[8] = {1};
        int r = es_hs_put(m, c, a[2], mask, sz);
        return r ? r : sz;
    }
    case ES_SC_sched_setaffinity: return 0;
    case ES_SC_getcpu: {
        uint8_t z[4] = {0};
        if (a[0] && es_hs_put(m, c, a[0], z, 4))
            return -EFAULT;
        if (a[1] && es_hs_put(m, c, a[1], z, 4))
            return -EFAULT;
        return 0;
    }
    case ES_SC_getrandom: return do_getrandom(m, c, a[0], a[1], (unsigned)a[2]);
    case ES_SC_prlimit64: return do_prlimit(m, c, (int)a[0], (unsigned)a[1], a[2], a[3]);
    case ES_SC_getrlimit:
        if (i386)
            return do_getrlimit32(m, c, (unsigned)a[0], a[1], 0x7fffffff);
        return do_prlimit(m, c, 0, (unsigned)a[0], 0, a[1]);
    case ES_SC_ugetrlimit: return do_getrlimit32(m, c, (unsigned)a[0], a[1], 0xffffffff);
    case ES_SC_setrlimit: return do_setrlimit(m, c, (unsigned)a[0], a[1]);
    case ES_SC_sysinfo: return do_sysinfo(m, c, a[0]);
    case ES_SC_getrusage: return do_getrusage(m, c, (int)a[0], a[1]);
    case ES_SC_times: return do_times(m, c, a[0]);
    case ES_SC_rt_sigaction: return do_rt_sigaction(m, c, (int)a[0], a[1], a[2], a[3]);
    case ES_SC_sigaction: return do_old_sigaction(m, c, (int)a[0], a[1], a[2]);
    case ES_SC_rt_sigprocmask:
        if (a[3] != 8)
            return -EINVAL;
        return do_sigprocmask(m, c, (int)a[0], a[1], a[2], 8);
    case ES_SC_sigprocmask: return do_sigprocmask(m, c, (int)a[0], a[1], a[2], 4);
    case ES_SC_sigaltstack: return do_sigaltstack(m, c, a[0], a[1]);
    case ES_SC_rt_sigpending: {
        if (a[1] != 8)
            return -EINVAL;
        uint8_t z[8] = {0};
        return es_hs_put(m, c, a[0], z, 8);
    }
    case ES_SC_kill:
        /* pid -1 means everyone but the caller: nobody here */
        if ((int)a[0] != h->pid && (int)a[0] != 0 && (int)a[0] != -h->pid)
            return (int)a[1] < 0 || (int)a[1] > 64 ? -EINVAL : -ESRCH;
        return es_hs_signal_self(m, (int)a[1]);
    case ES_SC_signal: { /* i386: sys_signal installs SA_ONESHOT | SA_NOMASK */
        int sig = (int)a[0];
        if (sig < 1 || sig > 64 || sig == G_SIGKILL || sig == G_SIGSTOP)
            return -EINVAL;
        uint64_t old = h->sigact[sig].handler;
        h->sigact[sig] = (es_ksigaction){.handler = a[1], .flags = 0x80000000u | 0x40000000u};
        return (int64_t)(uint32_t)old;
    }
    case ES_SC_wait4:
    case ES_SC_waitpid:
    case ES_SC_waitid:
        return -ECHILD; /* no children: fork is not modelled */
    case ES_SC_prctl: return do_prctl(m, c, (int)a[0], a[1]);
    case ES_SC_tkill:
        return (int)a[0] == h->pid ? es_hs_signal_self(m, (int)a[1]) : (int)a[0] <= 0 ? -EINVAL : -ESRCH;
    case ES_SC_tgkill:
        if ((int)a[0] <= 0 || (int)a[1] <= 0)
            return -EINVAL;
        if ((int)a[0] != h->pid || (int)a[1] != h->pid)
            return -ESRCH;
        return es_hs_signal_self(m, (int)a[2]);
    case ES_SC_alarm: return 0;
    case ES_SC_pause:
    case ES_SC_rt_sigsuspend:
    case ES_SC_sigsuspend:
        /* only a signal ends these, and nothing can send one */
        snprintf(m->message, sizeof m->message,
                 "the guest waits for a signal that cannot come (single process)");
        m->stop = ES_STOP_ERROR;
        return -EINTR;
    /* scheduling: one CPU, SCHED_OTHER, nice 0 */
    case ES_SC_getpriority:
        if ((int)a[0] < 0 || (int)a[0] > 2)
            return -EINVAL;
        return 20; /* 20 - nice, as the raw syscall returns it */
    case ES_SC_setpriority:
        if ((int)a[0] < 0 || (int)a[0] > 2)
            return -EINVAL;
        return (int)a[2] < 0 ? -EACCES : 0;
    case ES_SC_nice: return (int)a[0] < 0 ? -EPERM : 0;
    case ES_SC_sched_getscheduler: return (int)a[0] < 0 ? -EINVAL : 0;
    case ES_SC_sched_setscheduler: return (int)a[1] == 0 || (int)a[1] == 3 || (int)a[1] == 5 ? 0 : -EPERM;
    case ES_SC_sched_getparam: {
        uint8_t z[4] = {0};
        return es_hs_put(m, c, a[1], z, 4);
    }
    case ES_SC_sched_setparam: return 0;
    case ES_SC_sched_get_priority_max:
        return (int)a[0] == 1 || (int)a[0] == 2 ? 99 : (int)a[0] == 0 || (int)a[0] == 3 || (int)a[0] == 5 ? 0 : -EINVAL;
    case ES_SC_sched_get_priority_min:
        return (int)a[0] == 1 || (int)a[0] == 2 ? 1 : (int)a[0] == 0 || (int)a[0] == 3 || (int)a[0] == 5 ? 0 : -EINVAL;
    case ES_SC_socket:
    case ES_SC_socketpair:
        return -EAFNOSUPPORT;
    default:
        return ES_HS_NEXT;
    }
}
