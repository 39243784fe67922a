/* sched.c - the simulator's half of a context switch (ES_SCHED_SWITCH):
 * which task runs next, what waits, and the user state Linux's
 * __switch_to keeps in the task_struct.  See task.h.
 *
 * The choice is deterministic round robin: the task after the current one
 * in the table that can run (not waiting, or what it waits for is there:
 * an fd ready, a timeout passed, a child ended, a signal to deliver).  A
 * task loses the CPU when its call waits (ES_ERESCHED) and when it has run
 * a time slice of SLICE instructions while another can run (the modeled
 * timer tick sets ES_WORK_RESCHED, the kernel's exit path calls schedule:
 * Linux's preemption on return to user mode).  When no task can run the
 * simulator waits for the earliest timeout or an fd outside the guest (a
 * terminal, a pipe from the embedder); with --deterministic a timeout
 * passes at once on the guest clock.  When nothing can ever wake a task
 * (every task waits on another's pipe, or for a signal nobody sends) the
 * run stops with a message naming what each one waits for.
 */
#include "task.h"

#include <stdio.h>
#include <string.h>

#include "hypercall.h"
#include "mem.h"

#define SLICE 1000000 /* instructions: 1 ms on the guest clock */
#define GDT_TLS_MIN 12

/* ---- the user state of a task ---- */

void es_tctx_save(es_machine *m, es_tctx *x)
{
    memcpy(x->xmm, m->xmm, sizeof x->xmm);
    memcpy(x->ymmh, m->ymmh, sizeof x->ymmh);
    x->mxcsr = m->mxcsr;
    x->fpu = m->fpu;
    x->es = m->seg[ES_SEG_ES];
    x->ds = m->seg[ES_SEG_DS];
    x->fs = m->seg[ES_SEG_FS];
    x->gs = m->seg[ES_SEG_GS];
    x->user_gs_base = m->msr.kernel_gs_base;
    memcpy(x->tls, &m->gdt[GDT_TLS_MIN], sizeof x->tls);
}

void es_tctx_load(es_machine *m, const es_tctx *x)
{
    memcpy(m->xmm, x->xmm, sizeof x->xmm);
    memcpy(m->ymmh, x->ymmh, sizeof x->ymmh);
    m->mxcsr = x->mxcsr;
    m->fpu = x->fpu;
    m->seg[ES_SEG_ES] = x->es;
    m->seg[ES_SEG_DS] = x->ds;
    m->seg[ES_SEG_FS] = x->fs;
    uint64_t kbase = m->seg[ES_SEG_GS].base; /* the kernel's per-cpu area */
    m->seg[ES_SEG_GS] = x->gs;
    m->seg[ES_SEG_GS].base = kbase;
    m->msr.kernel_gs_base = x->user_gs_base;
    memcpy(&m->gdt[GDT_TLS_MIN], x->tls, sizeof x->tls);
    /* load_TLS: the guest kernel's GDT holds them for segment loads */
    for (int i = 0; i < 3; i++) {
        uint64_t off = (uint64_t)(GDT_TLS_MIN + i) * 8;
        if (m->gdtr.limit && off + 7 <= m->gdtr.limit)
            es_copy_to_guest(m, m->gdtr.base + off, &x->tls[i], 8);
    }
}

/* ---- waiting ---- */

void es_task_wait(es_machine *m, int kind, const struct pollfd *p, unsigned n, int64_t until,
                  int child)
{
    es_task *t = es_task_cur(m);
    if (!t)
        return;
    es_twait *w = &t->wait;
    w->kind = kind;
    w->nfds = n < ES_WAIT_FDS ? n : ES_WAIT_FDS;
    for (unsigned i = 0; i < w->nfds; i++)
        w->fds[i] = (struct pollfd){.fd = p[i].fd, .events = p[i].events};
    w->until = until;
    w->child = child;
    if (!w->active)
        w->done = 0;
    w->active = true;
}

static bool signal_ready(const struct es_host *h)
{
    return (es_hs_pending(h) & ~h->sigmask) != 0;
}

/* The running task's mask is in its es_host; another's in its es_tthread
 * (threads of one process share the es_host but not the mask). */
static bool task_signal_ready(es_machine *m, const es_task *t)
{
    if (t == es_task_cur(m))
        return signal_ready(t->proc);
    return ((t->proc->sigpending | t->th.sigpending) & ~t->th.sigmask) != 0;
}

bool es_task_ready(es_machine *m, es_task *t)
{
    if (t->state != ES_T_RUN)
        return false;
    es_twait *w = &t->wait;
    if (!w->active || task_signal_ready(m, t))
        return true;
    if (w->until && es_hs_clock_mono(m) >= w->until)
        return true;
    switch (w->kind) {
    case ES_W_FD:
        return w->nfds && poll(w->fds, w->nfds, 0) > 0;
    case ES_W_CHILD:
        return es_task_child_ready(m, t);
    case ES_W_FUTEX:
        return w->woken;
    case ES_W_VFORK: {
        es_task *c = es_task_by_tid(m->host->world, w->child);
        return !c || c->vfork_done;
    }
    default:
        return false;
    }
}

/* Interval timers of every process (the running one's fire at its calls
 * and ticks too): an expiry makes SIGALRM pending there. */
static void fire_timers(es_machine *m)
{
    es_world *w = m->host->world;
    for (int i = 0; i < w->n; i++) {
        es_task *t = w->t[i];
        if (t && t->state == ES_T_RUN && t->proc->itimer_at)
            es_hs_timer_check_proc(m, t->proc);
    }
}

static es_task *pick(es_machine *m)
{
    es_world *w = m->host->world;
    fire_timers(m);
    for (int k = 1; k <= w->n; k++) {
        es_task *t = w->t[(w->cur + k) % w->n];
        if (t && es_task_ready(m, t))
            return t;
    }
    return NULL;
}

/* ---- nobody can run: wait for the world ---- */

/* What the waiting tasks wait for: the fds outside the guest, and the
 * earliest timeout (a wait's own or a process timer's). */
static unsigned idle_set(es_machine *m, struct pollfd *p, unsigned cap, int64_t *until)
{
    es_world *w = m->host->world;
    unsigned n = 0;
    *until = 0;
    for (int i = 0; i < w->n; i++) {
        es_task *t = w->t[i];
        if (!t || t->state != ES_T_RUN)
            continue;
        int64_t u = t->wait.active ? t->wait.until : 0;
        if (t->proc->itimer_at && (!u || t->proc->itimer_at < u))
            u = t->proc->itimer_at;
        if (u && (!*until || u < *until))
            *until = u;
        for (unsigned j = 0; t->wait.active && t->wait.kind == ES_W_FD && j < t->wait.nfds; j++)
            if (n < cap && !es_hs_fd_is_guest_pipe(t->proc, t->wait.fds[j].fd))
                p[n++] = (struct pollfd){.fd = t->wait.fds[j].fd, .events = t->wait.fds[j].events};
    }
    return n;
}

static void deadlock(es_machine *m)
{
    es_world *w = m->host->world;
    static const char *const what[] = {"runs", "waits on a pipe or fd", "waits for a child",
                                       "waits for a signal", "waits for its vfork child",
                                       "waits on a futex"};
    char *p = m->message, *end = m->message + sizeof m->message;
    p += snprintf(p, (size_t)(end - p), "deadlock: every task waits and nothing can wake one:");
    for (int i = 0; i < w->n && p < end - 1; i++) {
        es_task *t = w->t[i];
        if (t && t->state == ES_T_RUN)
            p += snprintf(p, (size_t)(end - p), " %d %s;", t->tid,
                          t->wait.active ? what[t->wait.kind] : what[0]);
    }
    m->stop = ES_STOP_ERROR;
}

/* Waits until some task can run (it returns it), or stops the run. */
static es_task *idle(es_machine *m)
{
    for (;;) {
        es_task *t = pick(m);
        if (t || m->stop != ES_STOP_NONE)
            return t;
        struct pollfd p[256];
        int64_t until;
        unsigned n = idle_set(m, p, 256, &until);
        int64_t now = es_hs_clock_mono(m);
        if (!n && !until) {
            deadlock(m);
            return NULL;
        }
        bool det = m->deterministic || m->host->cfg.deterministic;
        if (det && until) {
            /* the guest clock jumps; an outside fd that is ready first wins */
            if (!n || poll(p, n, 0) == 0)
                es_hs_slept(m->host, until > now ? until - now : 0);
            continue;
        }
        int r = es_hs_poll_host(m, p, n, until ? (until > now ? until - now : 0) : -1,
                                "waiting for any task to be able to run");
        if (r < 0 && m->stop != ES_STOP_NONE)
            return NULL;
    }
}

/* ---- the switch ---- */

void es_task_write_work(es_machine *m, uint64_t extra)
{
    es_world *w = m->host->world;
    es_task *t = es_task_cur(m);
    if (!w->work_kva || !t)
        return;
    struct es_host *h = m->host;
    uint64_t work = extra;
    if (t->state != ES_T_RUN)
        work |= ES_WORK_DEAD;
    else if (h->sig_frames && signal_ready(h))
        work |= ES_WORK_SIGPENDING;
    es_copy_to_guest(m, w->work_kva, &work, sizeof work);
}

/* Address spaces of ended tasks that are no longer loaded are freed. */
static void release_mms(es_machine *m)
{
    es_world *w = m->host->world;
    for (int i = 0; i < w->n; i++) {
        es_task *t = w->t[i];
        if (t && (t->state == ES_T_ZOMBIE || t->state == ES_T_GONE))
            es_task_put_mm(m, t);
    }
}

int64_t es_sched_switch(es_machine *m, uint64_t prev_sp, uint64_t out)
{
    es_world *w = m->host->world;
    es_task *prev = es_task_cur(m);
    prev->ksp = prev_sp;
    release_mms(m);
    es_thread_reap_gone(m);
    es_task *next = pick(m);
    if (!next)
        next = idle(m);
    if (!next || next == prev) {
        if (next)
            es_task_write_work(m, 0);
        return 0;
    }
    es_tctx_save(m, &prev->ctx);
    es_thread_save(m->host, &prev->th);
    for (int i = 0; i < w->n; i++)
        if (w->t[i] == next)
            w->cur = i;
    m->host = next->proc;
    es_hs_ldt_load(m); /* switch_mm's load_mm_ldt */
    es_thread_load(m->host, &next->th);
    bool same_mm = next->mm.pgd == prev->mm.pgd;
    if (!same_mm)
        es_vm_switch(m, next->mm);
    es_tctx_load(m, &next->ctx);
    struct es_next nx = {.sp = next->ksp, .cr3 = same_mm ? 0 : next->mm.pgd, .top = next->ktop};
    if (es_copy_to_guest(m, out, &nx, sizeof nx)) {
        snprintf(m->message, sizeof m->message, "guest kernel panic: ES_SCHED_SWITCH to a bad address");
        m->stop = ES_STOP_ERROR;
        return 0;
    }
    /* the user ASID of the old process must not survive the switch
     * (Linux's switch_mm_irqs_off invalidates the other PCIDs; a thread
     * of the same mm keeps them) */
    if (!same_mm && m->hooks.pti_user_flush)
        m->hooks.pti_user_flush(m);
    es_task_write_work(m, 0);
    w->slice_start = m->icount;
    w->switches++;
    return 1;
}

bool es_sched_tick(es_machine *m)
{
    es_world *w = m->host ? m->host->world : NULL;
    if (!w || w->cur < 0 || w->live < 2 || m->icount - w->slice_start < SLICE)
        return false;
    es_task *me = es_task_cur(m);
    for (int i = 0; i < w->n; i++) /* someone else can run: the slice ends */
        if (w->t[i] && w->t[i] != me && es_task_ready(m, w->t[i])) {
            es_task_write_work(m, ES_WORK_RESCHED);
            return true;
        }
    w->slice_start = m->icount;
    return false;
}
