/* sysinfo.c - time, sleep, random bytes, resource limits and system
 * information (uname, sysinfo, getrusage, times).
 *
 * With --deterministic, time is a function of the instruction count (1 ns
 * per instruction from 2020-01-01 00:00:00 UTC, plus the time "slept"),
 * and random bytes come from a fixed-seed splitmix64 stream.
 */
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "host_int.h"
#include "mem.h"

#define DET_EPOCH 1577836800ll /* 2020-01-01T00:00:00Z */

/* ---- time ---- */

/* Clock `clk` (CLOCK_* id) in ns; -EINVAL for an unknown clock. */
static int clock_ns(es_machine *m, int64_t clk, int64_t *ns)
{
    struct es_host *h = m->host;
    *ns = 0; /* callers that pass a known clock read it without checking */
    if (clk < 0 || clk > 11 || clk == 8 || clk == 9 || clk == 10)
        return -EINVAL; /* 8/9: alarm clocks, 10: unused */
    if (m->deterministic || h->cfg.deterministic) {
        uint64_t ic = m->icount > (uint64_t)INT64_MAX / 4 ? (uint64_t)INT64_MAX / 4 : m->icount;
        int64_t t = (int64_t)ic + es_hs_sleep_ns(h);
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

int64_t es_hs_clock_mono(es_machine *m)
{
    int64_t ns;
    clock_ns(m, 1 /* CLOCK_MONOTONIC */, &ns);
    return ns;
}

int64_t es_hs_clock_real(es_machine *m)
{
    int64_t ns;
    clock_ns(m, 0 /* CLOCK_REALTIME */, &ns);
    return ns;
}

static int64_t do_clock_gettime(es_machine *m, const es_scall *c, int64_t clk, uint64_t utp)
{
    int64_t ns;
    int r = clock_ns(m, clk, &ns);
    if (r)
        return r;
    return es_hs_put_timespec(m, c, utp, ns / NSEC, ns % NSEC);
}

static int64_t do_nanosleep(es_machine *m, const es_scall *c, int64_t clk, int flags, uint64_t ureq)
{
    int64_t s, ns;
    int r = es_hs_get_timeout(m, c, ureq, NSEC, &s, &ns);
    if (r)
        return r;
    int64_t want = s > INT64_MAX / NSEC - 1 ? INT64_MAX / 2 : s * NSEC + ns;
    if (flags & 1) { /* TIMER_ABSTIME */
        int64_t now;
        r = clock_ns(m, clk, &now);
        if (r)
            return r;
        want -= now;
    }
    return es_hs_sleep(m, want);
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

/* ---- limits ---- */

/* prlimit's checks of new limit nl for resource res: 0, -EINVAL or -EPERM
 * (an unprivileged process may only lower its hard limits). */
static int rlim_check(const struct es_host *h, unsigned res, es_rlim nl)
{
    if (nl.cur > nl.max)
        return -EINVAL;
    if (nl.max > h->rlim[res].max || (res == 7 && nl.max > ES_HOST_MAX_FDS))
        return -EPERM;
    return 0;
}

/* Like every get-old-set-new call (sigaction, sigaltstack...), the new
 * value is read and checked first, the old one written back, and only
 * then is the new one stored: a fault on the old one changes nothing. */
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
        r = rlim_check(h, res, nl);
        if (r)
            return r;
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
    int r = rlim_check(h, res, nl);
    if (r)
        return r;
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


/* ---- services: time ---- */

ES_SYS(clock_gettime) { return do_clock_gettime(m, c, (int)a[0], a[1]); }

ES_SYS(clock_getres)
{
    int64_t ns;
    int r = clock_ns(m, (int)a[0], &ns);
    if (r)
        return r;
    bool coarse = (int)a[0] == 5 || (int)a[0] == 6;
    return a[1] ? es_hs_put_timespec(m, c, a[1], 0, coarse ? 4000000 : 1) : 0;
}

ES_SYS(gettimeofday)
{
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

ES_SYS(time)
{
    bool i386 = c->abi == ES_ABI_I386;
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

ES_SYS(nanosleep) { return do_nanosleep(m, c, 1, 0, a[0]); }

ES_SYS(clock_nanosleep)
{
    int64_t ns;
    int r = clock_ns(m, (int)a[0], &ns);
    if (r)
        return r;
    if ((int)a[0] == 2 || (int)a[0] == 3)
        return -EINVAL; /* not on the CPU-time clocks of the caller */
    return do_nanosleep(m, c, (int)a[0], (int)a[1], a[2]);
}

ES_SYS(getrandom) { return do_getrandom(m, c, a[0], a[1], (unsigned)a[2]); }

/* ---- services: limits ---- */

ES_SYS(prlimit64) { return do_prlimit(m, c, (int)a[0], (unsigned)a[1], a[2], a[3]); }
ES_SYS(getrlimit) { return do_prlimit(m, c, 0, (unsigned)a[0], 0, a[1]); }
ES_SYS(old_getrlimit) { return do_getrlimit32(m, c, (unsigned)a[0], a[1], 0x7fffffff); }
ES_SYS(ugetrlimit) { return do_getrlimit32(m, c, (unsigned)a[0], a[1], 0xffffffff); }
ES_SYS(setrlimit) { return do_setrlimit(m, c, (unsigned)a[0], a[1]); }

/* ---- services: system information ---- */

ES_SYS(uname) { return do_uname(m, c, a[0]); }
ES_SYS(olduname) { return do_old_uname(m, c, a[0], 65); }
ES_SYS(oldolduname) { return do_old_uname(m, c, a[0], 9); }
ES_SYS(sysinfo) { return do_sysinfo(m, c, a[0]); }
ES_SYS(getrusage) { return do_getrusage(m, c, (int)a[0], a[1]); }
ES_SYS(times) { return do_times(m, c, a[0]); }
