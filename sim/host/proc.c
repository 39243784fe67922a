/* proc.c - the process: exit, ids, signals, prctl, scheduling, and the
 * calls a single process answers alone (wait, sockets).  Time and limits
 * are in sysinfo.c, TLS and futexes in tls.c.
 *
 * One single-threaded process.  Signals: the actions, the blocked set and
 * the pending set live here; generation, default actions and what the
 * guest kernel asks to deliver are in signal.c.
 */
#include <stdio.h>
#include <string.h>

#include "host_int.h"
#include "hypercall.h"
#include "task.h"

#define G_SIGKILL 9
#define G_SIGSTOP 19

/* ---- signals ---- */

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
        es_hs_signal_dispatch(m); /* a pending signal now ignored is discarded */
    }
    return 0;
}

/* i386 sigaction (#67): struct old_sigaction {handler, mask, flags, restorer}.
 * Read new, write old, then store new: the order of every get-old-set-new
 * call (see do_prlimit in sysinfo.c), kept in each for its own layout. */
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
        es_hs_signal_dispatch(m); /* what it unblocked takes effect now */
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


/* ---- services: exit and ids ---- */

/* exit, exit_group: the run ends with the first process's status once no
 * task is left (task.c) */
ES_SYS(exit)
{
    m->exit_status = (int)(a[0] & 0xff);
    m->stop = ES_STOP_EXIT;
    es_task_end(m, (int)(a[0] & 0xff) << 8);
    return 0;
}

/* exit(2): with other threads in the process only this one ends */
ES_SYS(exit_thread)
{
    if (es_thread_exit(m, (int)(a[0] & 0xff)))
        return 0;
    return es_sys_exit(m, c, a);
}

ES_SYS(getpid) { return m->host->pid; }

static int64_t tid_of_caller(es_machine *m)
{
    es_task *t = es_task_cur(m);
    return t ? t->tid : m->host->pid;
}

ES_SYS(gettid) { return tid_of_caller(m); }
ES_SYS(getppid) { return m->host->ppid; }

ES_SYS(set_tid_address)
{
    m->host->tid_address = a[0];
    return tid_of_caller(m);
}

ES_SYS(set_robust_list)
{
    if (a[1] != (c->compat ? 12u : 24u))
        return -EINVAL;
    m->host->robust_head = a[0];
    m->host->robust_len = a[1];
    return 0;
}

/* get_robust_list(pid, &head, &len): this thread's (pid 0 or its own
 * tid) or another thread's of the run; musl asks it once to learn that
 * robust mutexes are supported */
ES_SYS(get_robust_list)
{
    struct es_host *h = m->host;
    uint64_t head = h->robust_head, len = h->robust_len;
    int tid = (int)a[0];
    es_task *me = es_task_cur(m);
    if (tid && (!me || tid != me->tid)) {
        es_task *t = me ? es_task_by_tid(h->world, tid) : NULL;
        if (!t || t->state != ES_T_RUN)
            return -ESRCH;
        head = t->th.robust_head, len = t->th.robust_len;
    }
    if (!len)
        len = c->compat ? 12 : 24; /* sizeof(struct robust_list_head) */
    uint8_t b[8];
    unsigned w = c->ptr32 ? 4 : 8;
    es_st64(b, head);
    int r = es_hs_put(m, c, a[1], b, w);
    if (!r) {
        es_st64(b, len);
        r = es_hs_put(m, c, a[2], b, w);
    }
    return r;
}

/* i386's unsuffixed id calls are the 16-bit ones (high2lowuid) */
static uint32_t id16(uint32_t id)
{
    return id & ~0xffffu ? 65534 : id;
}

ES_SYS(getuid) { return m->host->uid; }
ES_SYS(getgid) { return m->host->gid; }
ES_SYS(getuid16) { return id16(m->host->uid); }
ES_SYS(getgid16) { return id16(m->host->gid); }
ES_SYS(getresuid) { return put_ids(m, c, a, m->host->uid, false); }
ES_SYS(getresgid) { return put_ids(m, c, a, m->host->gid, false); }
ES_SYS(getresuid16) { return put_ids(m, c, a, m->host->uid, true); }
ES_SYS(getresgid16) { return put_ids(m, c, a, m->host->gid, true); }
ES_SYS(getgroups) { return (int)a[0] < 0 ? -EINVAL : 0; }
ES_SYS(setuid) { return (uint32_t)a[0] == m->host->uid ? 0 : -EPERM; }
ES_SYS(setgid) { return (uint32_t)a[0] == m->host->gid ? 0 : -EPERM; }
ES_SYS(personality) { return 0; /* PER_LINUX */ }
ES_SYS(prctl) { return do_prctl(m, c, (int)a[0], a[1]); }

/* ---- services: signals ---- */

ES_SYS(rt_sigaction) { return do_rt_sigaction(m, c, (int)a[0], a[1], a[2], a[3]); }
ES_SYS(sigaction) { return do_old_sigaction(m, c, (int)a[0], a[1], a[2]); }

ES_SYS(rt_sigprocmask)
{
    if (a[3] != 8)
        return -EINVAL;
    return do_sigprocmask(m, c, (int)a[0], a[1], a[2], 8);
}

ES_SYS(sigprocmask) { return do_sigprocmask(m, c, (int)a[0], a[1], a[2], 4); }
ES_SYS(sigaltstack) { return do_sigaltstack(m, c, a[0], a[1]); }

ES_SYS(rt_sigpending)
{
    if (a[1] != 8)
        return -EINVAL;
    uint8_t b[8]; /* pending and blocked (kernel/signal.c do_sigpending) */
    es_st64(b, es_hs_pending(m->host) & m->host->sigmask);
    return es_hs_put(m, c, a[0], b, 8);
}

ES_SYS(kill)
{
    int pid = m->host->pid, sig = (int)a[1];
    if (sig < 0 || sig > 64)
        return -EINVAL;
    if (es_task_cur(m)) /* the task table: any process of the run */
        return es_task_kill(m, (int)a[0], sig);
    /* pid -1 means everyone but the caller: nobody here */
    if ((int)a[0] != pid && (int)a[0] != 0 && (int)a[0] != -pid)
        return -ESRCH;
    return es_hs_signal_self(m, sig);
}

ES_SYS(signal) /* i386: sys_signal installs SA_ONESHOT | SA_NOMASK */
{
    struct es_host *h = m->host;
    int sig = (int)a[0];
    if (sig < 1 || sig > 64 || sig == G_SIGKILL || sig == G_SIGSTOP)
        return -EINVAL;
    uint64_t old = h->sigact[sig].handler;
    h->sigact[sig] = (es_ksigaction){.handler = a[1], .flags = 0x80000000u | 0x40000000u};
    return (int64_t)(uint32_t)old;
}

/* tkill, tgkill: a thread is a process here (tid = pid) */
static int64_t thread_kill(es_machine *m, int tgid, int tid, int sig)
{
    if (tid <= 0 || tgid == 0 || tgid < -1 || sig < 0 || sig > 64)
        return -EINVAL;
    /* a caught signal goes to the thread named (its own pending set,
     * thread.c); a default action is the whole process's */
    es_task *me = es_task_cur(m);
    es_task *t = me ? es_task_by_tid(m->host->world, tid) : NULL;
    if ((!t && tid == m->host->pid) || (t && t == me))
        return es_hs_signal_self_code(m, sig, -6 /* SI_TKILL */);
    if (!t || t->state != ES_T_RUN || (tgid > 0 && t->proc->pid != tgid))
        return -ESRCH;
    return es_thread_signal(m, t, sig, m->host->pid);
}

ES_SYS(tkill) { return thread_kill(m, -1, (int)a[0], (int)a[1]); }
ES_SYS(tgkill) { return thread_kill(m, (int)a[0], (int)a[1], (int)a[2]); }
/* socket, socketpair: no networking */
ES_SYS(socket) { return -EAFNOSUPPORT; }

/* ---- services: scheduling (one CPU, SCHED_OTHER, nice 0) ---- */

/* With other tasks the time slice ends: the exit path schedules. */
ES_SYS(sched_yield)
{
    if (es_task_multi(m))
        es_task_write_work(m, ES_WORK_RESCHED);
    return 0;
}

ES_SYS(sched_getaffinity)
{
    /* one CPU: cpumask_size() is one long of the caller's ABI */
    unsigned sz = c->compat ? 4 : 8;
    if ((uint32_t)a[1] < sz || ((uint32_t)a[1] & (sz - 1)))
        return -EINVAL;
    uint8_t mask[8] = {1};
    int r = es_hs_put(m, c, a[2], mask, sz);
    return r ? r : sz;
}

ES_SYS(sched_setaffinity) { return 0; }

ES_SYS(getcpu)
{
    uint8_t z[4] = {0};
    if (a[0] && es_hs_put(m, c, a[0], z, 4))
        return -EFAULT;
    if (a[1] && es_hs_put(m, c, a[1], z, 4))
        return -EFAULT;
    return 0;
}

ES_SYS(getpriority)
{
    if ((int)a[0] < 0 || (int)a[0] > 2)
        return -EINVAL;
    return 20; /* 20 - nice, as the raw syscall returns it */
}

ES_SYS(setpriority)
{
    if ((int)a[0] < 0 || (int)a[0] > 2)
        return -EINVAL;
    return (int)a[2] < 0 ? -EACCES : 0;
}

ES_SYS(nice) { return (int)a[0] < 0 ? -EPERM : 0; }
ES_SYS(sched_getscheduler) { return (int)a[0] < 0 ? -EINVAL : 0; }

/* SCHED_OTHER, SCHED_BATCH and SCHED_IDLE need no privilege */
static bool unprivileged_policy(int p)
{
    return p == 0 || p == 3 || p == 5;
}

ES_SYS(sched_setscheduler) { return unprivileged_policy((int)a[1]) ? 0 : -EPERM; }

ES_SYS(sched_getparam)
{
    uint8_t z[4] = {0};
    return es_hs_put(m, c, a[1], z, 4);
}

ES_SYS(sched_setparam) { return 0; }

/* SCHED_FIFO and SCHED_RR: 1..99; the others 0 */
ES_SYS(sched_get_priority_max)
{
    int p = (int)a[0];
    return p == 1 || p == 2 ? 99 : unprivileged_policy(p) ? 0 : -EINVAL;
}

ES_SYS(sched_get_priority_min)
{
    int p = (int)a[0];
    return p == 1 || p == 2 ? 1 : unprivileged_policy(p) ? 0 : -EINVAL;
}
