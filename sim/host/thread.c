/* thread.c - threads (clone with CLONE_THREAD) and futexes.  See task.h.
 *
 * A thread is a task that shares its creator's process state (struct
 * es_host: fds, signal handlers, pending signals, ids) and address space
 * (the same PGD: no copy, and no TLB flush when one thread of a process
 * follows another, as Linux's switch_mm_irqs_off skips a switch to the
 * same mm).  What Linux keeps per thread (the signal mask, sigaltstack,
 * clear_child_tid, the robust list: es_tthread) is swapped in and out of
 * the es_host with each switch, so the services keep using the running
 * thread's copy where they always did.  Pending signals are two sets, as
 * in Linux: the process's (shared_pending: kill, the timer), which
 * whichever thread runs with the signal unblocked takes, and each
 * thread's own (task->pending: tgkill, tkill, its own faults).
 *
 * exit(2) ends one thread: clear_child_tid is written and woken, which is
 * what pthread_join waits for (Linux's mm_release).  exit_group, a fatal
 * signal and execve end every thread (zap_other_threads, de_thread).  When
 * the leader exits first it is held until the last thread ends; the
 * process then ends through it (its parent sees the leader's pid).
 *
 * Futexes are keyed by (address space, address): private futexes, and a
 * shared one inside one process.  A waiter sleeps as a task wait
 * (ES_W_FUTEX) and wakes in FIFO order, as Linux's hash-bucket queue does
 * for waiters of the same priority.
 */
#include "task.h"

#include <stdio.h>
#include <stdlib.h>

#include "hypercall.h"
#include "mem.h"

#define CLONE_VM 0x100
#define CLONE_SIGHAND 0x800
#define CLONE_SETTLS 0x80000
#define CLONE_PARENT_SETTID 0x100000
#define CLONE_CHILD_CLEARTID 0x200000
#define CLONE_CHILD_SETTID 0x1000000
#define SS_DISABLE 2
#define FUTEX_WAITERS 0x80000000u
#define FUTEX_OWNER_DIED 0x40000000u
#define FUTEX_TID_MASK 0x3fffffffu
#define ROBUST_LIST_LIMIT 2048

void es_thread_save(const struct es_host *h, es_tthread *th)
{
    *th = (es_tthread){.sigmask = h->sigmask, .sigpending = h->tsigpending, .ss_sp = h->ss_sp, .ss_size = h->ss_size,
                       .ss_flags = h->ss_flags, .tid_address = h->tid_address,
                       .robust_head = h->robust_head, .robust_len = h->robust_len,
                       .suspend_mask = h->suspend_mask, .suspend_saved = h->suspend_saved};
}

/* tgkill to a task that is not running: a caught signal waits in its own
 * set (es_task_ready sees it, so a wait of that thread is interrupted
 * when it is scheduled); an uncaught one takes its default action on the
 * whole process, as Linux's complete_signal does for a fatal one. */
int64_t es_thread_signal(es_machine *m, es_task *t, int sig, int sender)
{
    struct es_host *h = t->proc;
    if (sig < 0 || sig > 64)
        return -EINVAL;
    if (!sig)
        return 0;
    if (h->sigact[sig].handler <= 1 || sig == 9 || sig == 19)
        return es_hs_signal_proc(m, h, sig, -6 /* SI_TKILL */, sender);
    t->th.sigpending |= 1ull << (sig - 1);
    h->siginfo[sig] = (es_hsiginfo){.code = -6, .pid = sender};
    return 0;
}

void es_thread_load(struct es_host *h, const es_tthread *th)
{
    h->sigmask = th->sigmask;
    h->tsigpending = th->sigpending;
    h->ss_sp = th->ss_sp;
    h->ss_size = th->ss_size;
    h->ss_flags = th->ss_flags;
    h->tid_address = th->tid_address;
    h->robust_head = th->robust_head;
    h->robust_len = th->robust_len;
    h->suspend_mask = th->suspend_mask;
    h->suspend_saved = th->suspend_saved;
}

int es_thread_others(es_world *w, const struct es_host *proc, const es_task *except)
{
    int n = 0;
    for (int i = 0; i < w->n; i++) {
        const es_task *t = w->t[i];
        n += t && t != except && t->proc == proc && t->state == ES_T_RUN;
    }
    return n;
}

/* ---- clone(CLONE_THREAD) ---- */

/* The new thread's own state: a copy of the creator's user registers with
 * the new TLS, no alternate stack (copy_process clears it for CLONE_VM),
 * no robust list, clear_child_tid from CLONE_CHILD_CLEARTID. */
static int64_t thread_state(es_machine *m, const es_scall *c, es_task *t, uint64_t flags,
                            uint64_t ctid, uint64_t tls)
{
    es_tctx_save(m, &t->ctx);
    if ((flags & CLONE_SETTLS) && c->abi == ES_ABI_I386) {
        int64_t r = es_hs_clone_tls32(m, c, tls, &t->ctx);
        if (r)
            return r;
    } else if (flags & CLONE_SETTLS) {
        t->ctx.fs.base = tls;
    }
    es_thread_save(m->host, &t->th);
    t->th.ss_sp = t->th.ss_size = 0;
    t->th.ss_flags = SS_DISABLE;
    t->th.robust_head = t->th.robust_len = 0;
    t->th.suspend_saved = false;
    t->th.tid_address = (flags & CLONE_CHILD_CLEARTID) ? ctid : 0;
    return 0;
}

int64_t es_thread_clone(es_machine *m, const es_scall *c, uint64_t flags, uint64_t newsp,
                        uint64_t ptid, uint64_t ctid, uint64_t tls)
{
    /* copy_process: CLONE_THREAD needs CLONE_SIGHAND, which needs CLONE_VM */
    if (!(flags & CLONE_SIGHAND) || !(flags & CLONE_VM))
        return -EINVAL;
    es_world *w = m->host->world;
    es_task *p = es_task_cur(m);
    if (w->live >= w->max_tasks)
        return es_task_too_many(m);
    es_task *t = calloc(1, sizeof *t);
    if (!t)
        return -ENOMEM;
    t->is_thread = true;
    t->proc = m->host;
    t->mm = p->mm;
    int64_t err = thread_state(m, c, t, flags, ctid, tls);
    if (!err)
        err = es_task_alloc_slot(m, t);
    if (!err)
        err = es_task_build_kstack(m, p, t, c->ptr32 ? (uint32_t)newsp : newsp);
    if (!err && es_task_add(w, t) < 0)
        err = -ENOMEM;
    if (err) {
        es_task_reap(m, t);
        return err;
    }
    t->tid = w->next_pid++;
    w->live++;
    w->threads++;
    es_hist_born(w, ES_HIST_TASK, t);
    uint8_t b[4];
    es_st32(b, (uint32_t)t->tid);
    if (flags & CLONE_CHILD_SETTID)
        es_task_put_u32(m, t->mm, ctid, (uint32_t)t->tid);
    if ((flags & CLONE_PARENT_SETTID) && es_hs_put(m, c, ptid, b, 4))
        return -EFAULT; /* Linux too leaves the thread running */
    return t->tid;
}

/* ---- the end of threads ---- */

/* mm_release: clear_child_tid gets 0 and one waiter is woken (the
 * pthread_join of this thread). */
static void clear_child_tid(es_machine *m, es_task *t)
{
    uint64_t a = m->host->tid_address;
    if (!a)
        return;
    es_task_put_u32(m, t->mm, a, 0);
    es_futex_wake(m, a, 1, ~0u);
    m->host->tid_address = 0;
}

/* A robust futex whose owner died (kernel/futex.c handle_futex_death):
 * the owner's tid gives way to FUTEX_OWNER_DIED, and a waiter is woken to
 * take it (pthread_mutex_lock then returns EOWNERDEAD). */
static void futex_death(es_machine *m, es_task *t, uint64_t uaddr)
{
    uint32_t v;
    if ((uaddr & 3) || es_copy_from_guest(m, &v, uaddr, 4) || (v & FUTEX_TID_MASK) != (uint32_t)t->tid)
        return;
    uint32_t nv = (v & FUTEX_WAITERS) | FUTEX_OWNER_DIED;
    if (es_copy_to_guest(m, uaddr, &nv, 4))
        return;
    if (v & FUTEX_WAITERS)
        es_futex_wake(m, uaddr, 1, ~0u);
}

/* exit_robust_list: the locks of the robust list the thread registered
 * (set_robust_list; struct robust_list_head, or the compat one of 12
 * bytes with 32-bit pointers): each held one dies with it.  At most
 * ROBUST_LIST_LIMIT entries, as Linux walks, so a looped list ends. */
static void exit_robust_list(es_machine *m, es_task *t)
{
    uint64_t head = m->host->robust_head;
    unsigned w = m->host->robust_len == 12 ? 4 : 8;
    uint64_t hv[3] = {0};
    for (int i = 0; i < 3 && head; i++)
        if (es_copy_from_guest(m, &hv[i], head + (uint64_t)i * w, w))
            return;
    if (!head)
        return;
    int64_t off = w == 4 ? (int64_t)(int32_t)hv[1] : (int64_t)hv[1];
    uint64_t entry = hv[0] & ~1ull, pending = hv[2] & ~1ull; /* bit 0: PI */
    for (int n = 0; entry != head && entry && n < ROBUST_LIST_LIMIT; n++) {
        uint64_t next = 0;
        if (es_copy_from_guest(m, &next, entry, w))
            break;
        if (entry != pending)
            futex_death(m, t, entry + (uint64_t)off);
        entry = next & ~1ull;
    }
    if (pending)
        futex_death(m, t, pending + (uint64_t)off);
}

bool es_thread_exit(es_machine *m, int code)
{
    es_task *t = es_task_cur(m);
    if (!t || t->state != ES_T_RUN || !es_thread_others(m->host->world, m->host, t))
        return false;
    exit_robust_list(m, t);
    clear_child_tid(m, t);
    t->state = t->is_thread ? ES_T_GONE : ES_T_HELD;
    t->wstatus = (code & 0xff) << 8;
    t->wait.active = false;
    m->host->world->live--;
    es_task_write_work(m, 0);
    return true;
}

void es_thread_end_others(es_machine *m, struct es_host *proc, es_task *keep)
{
    es_world *w = m->host->world;
    for (int i = 0; i < w->n; i++) {
        es_task *t = w->t[i];
        if (!t || t == keep || t->proc != proc || t->state != ES_T_RUN)
            continue;
        w->live--;
        t->wait.active = false;
        t->state = t->is_thread ? ES_T_GONE : ES_T_HELD;
        if (t->is_thread)
            es_task_reap(m, t); /* not running: its kernel stack is idle */
    }
}

void es_thread_reap_gone(es_machine *m)
{
    es_world *w = m->host->world;
    es_task *cur = es_task_cur(m);
    for (int i = 0; i < w->n; i++)
        if (w->t[i] && w->t[i] != cur && w->t[i]->state == ES_T_GONE)
            es_task_reap(m, w->t[i]);
}

/* ---- futexes ---- */

int64_t es_futex_wait(es_machine *m, const es_scall *c, uint64_t uaddr, uint32_t val,
                      int64_t until, uint32_t bitset)
{
    es_task *t = es_task_cur(m);
    es_twait *w = t ? &t->wait : NULL;
    if (w && w->active && w->kind == ES_W_FUTEX) { /* run again: woken or timed out? */
        if (w->woken)
            return 0;
        if (w->until && es_hs_clock_mono(m) >= w->until)
            return -ETIMEDOUT;
        return -ES_ERESCHED;
    }
    uint8_t b[4];
    int r = es_hs_get(m, c, b, uaddr, 4);
    if (r)
        return r;
    if (es_ld32(b) != val)
        return -EAGAIN;
    if (!es_task_multi(m)) {
        if (until)
            return -ETIMEDOUT; /* nobody else can wake it */
        snprintf(m->message, sizeof m->message,
                 "futex wait at 0x%llx would block forever (no other task can wake it)",
                 (unsigned long long)uaddr);
        m->stop = ES_STOP_ERROR;
        return -EINTR;
    }
    es_task_wait(m, ES_W_FUTEX, NULL, 0, until, 0);
    w->uaddr = uaddr;
    w->bitset = bitset;
    w->woken = false;
    w->seq = ++m->host->world->futex_seq;
    return -ES_ERESCHED;
}

/* The longest-waiting task of this address space on uaddr (bitset met). */
static es_task *first_waiter(es_world *w, uint64_t pgd, uint64_t uaddr, uint32_t bitset)
{
    es_task *best = NULL;
    for (int i = 0; i < w->n; i++) {
        es_task *t = w->t[i];
        es_twait *tw = t ? &t->wait : NULL;
        if (!t || t->state != ES_T_RUN || !tw->active || tw->kind != ES_W_FUTEX || tw->woken ||
            tw->uaddr != uaddr || t->mm.pgd != pgd || !(tw->bitset & bitset))
            continue;
        if (!best || tw->seq < best->wait.seq)
            best = t;
    }
    return best;
}

int64_t es_futex_wake(es_machine *m, uint64_t uaddr, int n, uint32_t bitset)
{
    es_task *me = es_task_cur(m);
    int woke = 0;
    while (me && woke < n) {
        es_task *t = first_waiter(m->host->world, me->mm.pgd, uaddr, bitset);
        if (!t)
            break;
        t->wait.woken = true;
        woke++;
    }
    return woke;
}

int64_t es_futex_requeue(es_machine *m, uint64_t uaddr, int n, uint64_t uaddr2, int n2)
{
    int64_t woke = es_futex_wake(m, uaddr, n, ~0u);
    es_task *me = es_task_cur(m);
    int moved = 0;
    for (; me && moved < n2; moved++) {
        es_task *t = first_waiter(m->host->world, me->mm.pgd, uaddr, ~0u);
        if (!t)
            break;
        t->wait.uaddr = uaddr2;
    }
    return woke + moved; /* Linux: woken plus requeued */
}
