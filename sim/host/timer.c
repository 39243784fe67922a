/* timer.c - ITIMER_REAL (alarm, setitimer, getitimer) and the waits a
 * signal ends (pause, rt_sigsuspend, and sleeps cut short by a timer).
 *
 * The timer runs on the guest's monotonic clock: instructions (1 ns each)
 * plus time slept with --deterministic, so a rerun fires at the same
 * instruction; the host's clock otherwise.  It is checked at every host
 * call, at every modeled timer tick (es_hooks.tick, between batches of
 * instructions: es_run raises the timer interrupt so that a program
 * spinning without system calls still gets its SIGALRM), and a wait that
 * the timer ends sleeps until the timer instead of for ever.  Expiry sends
 * SIGALRM with si_code SI_KERNEL (kernel/time/itimer.c it_real_fn) and
 * re-arms by the interval.
 */
#include <stdio.h>
#include <string.h>

#include "host_int.h"
#include "hypercall.h"
#include "mem.h"
#include "task.h"

#define SIGALRM 14
#define SI_KERNEL 0x80
#define TIMER_VECTOR 0xec /* kernel_model's LOCAL_TIMER_VECTOR */

void es_hs_timer_check(es_machine *m)
{
    es_hs_timer_check_proc(m, m->host);
}

void es_hs_timer_check_proc(es_machine *m, struct es_host *h)
{
    if (!h->itimer_at)
        return;
    int64_t now = es_hs_clock_mono(m);
    if (now < h->itimer_at)
        return;
    if (h->itimer_every) { /* the missed periods collapse into one signal */
        int64_t late = (now - h->itimer_at) / h->itimer_every + 1;
        h->itimer_at += late * h->itimer_every;
    } else {
        h->itimer_at = 0;
    }
    es_hs_signal_proc(m, h, SIGALRM, SI_KERNEL, 0);
}

unsigned es_hs_tick(es_machine *m)
{
    struct es_host *h = m->host;
    es_hs_timer_check(m);
    if (m->stop != ES_STOP_NONE || m->cpl != 3)
        return 0;
    /* a caught signal waits, or the time slice is over while another task
     * can run: interrupt the user program so the kernel's exit path
     * delivers it or schedules */
    if (es_sched_tick(m))
        return TIMER_VECTOR;
    return h->sig_frames && (es_hs_pending(h) & ~h->sigmask) ? TIMER_VECTOR : 0;
}

/* Whether a caught signal can be delivered now (the call returns -EINTR
 * and the kernel runs its handler on the way out). */
static bool caught_pending(const struct es_host *h)
{
    return (es_hs_pending(h) & ~h->sigmask) != 0;
}

/* Whether the timer's expiry can end a wait: SIGALRM unblocked and either
 * caught by a handler the kernel will run or left to its default action
 * (terminate).  Blocked or ignored, it cannot: a wait sleeps through every
 * period at once (a short interval must not cost a loop per period). */
static bool timer_can_interrupt(const struct es_host *h)
{
    uint64_t hd = h->sigact[SIGALRM].handler;
    return h->itimer_at && !(h->sigmask & (1ull << (SIGALRM - 1))) &&
           (hd > 1 ? h->sig_frames : hd == 0);
}

/* Sleeps until the timer fires (false: no timer that can end the wait, or
 * the run stopped). */
static bool sleep_to_timer(es_machine *m)
{
    struct es_host *h = m->host;
    if (!timer_can_interrupt(h))
        return false;
    int64_t now = es_hs_clock_mono(m);
    if (h->itimer_at > now && (es_hs_sleep_plain(m, h->itimer_at - now) || m->stop))
        return false;
    es_hs_timer_check(m);
    return m->stop == ES_STOP_NONE;
}

int64_t es_hs_wait_signal(es_machine *m, const char *what)
{
    if (es_task_multi(m)) { /* another task may send it */
        es_hs_signal_dispatch(m);
        if (m->stop != ES_STOP_NONE || caught_pending(m->host) || es_task_cur(m)->state)
            return -EINTR;
        es_task_wait(m, ES_W_SIGNAL, NULL, 0, 0, 0);
        return -ES_ERESCHED;
    }
    for (int n = 0; n < 4; n++) { /* a caught or fatal SIGALRM ends it at once */
        es_hs_signal_dispatch(m);
        if (m->stop != ES_STOP_NONE)
            return -EINTR;
        if (caught_pending(m->host))
            return -EINTR;
        if (!sleep_to_timer(m))
            break;
    }
    if (m->stop == ES_STOP_NONE) {
        snprintf(m->message, sizeof m->message,
                 "%s waits for a signal that cannot come: no timer is armed and nothing else "
                 "can send one to a single-process guest", what);
        m->stop = ES_STOP_ERROR;
    }
    return -EINTR;
}

int64_t es_hs_sleep(es_machine *m, int64_t ns)
{
    struct es_host *h = m->host;
    if (es_task_multi(m)) /* a wait as a task: its timer's signal ends it */
        return es_hs_sleep_plain(m, ns);
    while (ns > 0) {
        int64_t now = es_hs_clock_mono(m);
        bool cut = timer_can_interrupt(h) && h->itimer_at - now < ns;
        int64_t step = cut ? h->itimer_at - now : ns;
        if (step > 0 && (es_hs_sleep_plain(m, step) || m->stop))
            return -EINTR;
        ns -= step > 0 ? step : 0;
        es_hs_timer_check(m);
        if (m->stop != ES_STOP_NONE || caught_pending(h))
            return -EINTR; /* a handler runs: the sleep is interrupted */
    }
    return 0;
}

/* ---- the calls ---- */

static void put_tv(uint8_t *b, int64_t ns, bool compat)
{
    if (compat) {
        es_st32(b, (uint32_t)(ns / NSEC));
        es_st32(b + 4, (uint32_t)(ns % NSEC / 1000));
    } else {
        es_st64(b, (uint64_t)(ns / NSEC));
        es_st64(b + 8, (uint64_t)(ns % NSEC / 1000));
    }
}

/* struct itimerval {it_interval, it_value} of the caller's ABI. */
static int put_itimer(es_machine *m, const es_scall *c, uint64_t va)
{
    struct es_host *h = m->host;
    uint8_t b[32];
    int tv = c->compat ? 8 : 16;
    int64_t left = h->itimer_at ? h->itimer_at - es_hs_clock_mono(m) : 0;
    put_tv(b, h->itimer_every, c->compat);
    put_tv(b + tv, left > 0 ? left : h->itimer_at ? 1000 : 0, c->compat);
    return es_hs_put(m, c, va, b, (size_t)tv * 2);
}

static int get_tv(const uint8_t *b, bool compat, int64_t *ns)
{
    int64_t s = compat ? (int32_t)es_ld32(b) : (int64_t)es_ld64(b);
    int64_t us = compat ? (int32_t)es_ld32(b + 4) : (int64_t)es_ld64(b + 8);
    if (s < 0 || us < 0 || us >= 1000000)
        return -EINVAL;
    *ns = s > INT64_MAX / NSEC / 2 ? INT64_MAX / 2 : s * NSEC + us * 1000;
    return 0;
}

static void arm(es_machine *m, int64_t value, int64_t every)
{
    struct es_host *h = m->host;
    h->itimer_every = value ? every : 0;
    h->itimer_at = value ? es_hs_clock_mono(m) + value : 0;
}

ES_SYS(setitimer)
{
    if (a[0] != 0) /* ITIMER_VIRTUAL, ITIMER_PROF: not modelled */
        return a[0] <= 2 ? -ENOSYS : -EINVAL;
    uint8_t b[32];
    int tv = c->compat ? 8 : 16;
    int64_t every = 0, value = 0;
    if (a[1]) {
        int r = es_hs_get(m, c, b, a[1], (size_t)tv * 2);
        if (r)
            return r;
        if (get_tv(b, c->compat, &every) || get_tv(b + tv, c->compat, &value))
            return -EINVAL;
    }
    if (a[2]) {
        int r = put_itimer(m, c, a[2]);
        if (r)
            return r;
    }
    arm(m, value, every);
    return 0;
}

ES_SYS(getitimer)
{
    if (a[0] != 0)
        return a[0] <= 2 ? -ENOSYS : -EINVAL;
    return put_itimer(m, c, a[1]);
}

/* alarm(s): the seconds left of the previous alarm, rounded to nearest
 * and at least 1 while one is pending (kernel/time/itimer.c alarm_setitimer) */
ES_SYS(alarm)
{
    struct es_host *h = m->host;
    int64_t left = h->itimer_at ? h->itimer_at - es_hs_clock_mono(m) : 0;
    int64_t old = h->itimer_at ? (left + NSEC / 2) / NSEC : 0;
    if (h->itimer_at && old == 0)
        old = 1;
    arm(m, (int64_t)(uint32_t)a[0] * NSEC, 0);
    return old;
}

ES_SYS(pause) { return es_hs_wait_signal(m, "pause"); }

/* rt_sigsuspend: the mask given while waiting; the handler's frame saves
 * the mask from before (restored by rt_sigreturn), as Linux's
 * set_restore_sigmask does. */
ES_SYS(rt_sigsuspend)
{
    struct es_host *h = m->host;
    if (a[1] != 8)
        return -EINVAL;
    uint8_t b[8];
    int r = es_hs_get(m, c, b, a[0], 8);
    if (r)
        return r;
    es_task *t = es_task_cur(m);
    bool retry = t && t->wait.active && t->wait.kind == ES_W_SIGNAL;
    uint64_t old = retry ? t->wait.oldmask : h->sigmask;
    h->sigmask = es_ld64(b) & ~((1ull << 8) | (1ull << 18)); /* not SIGKILL, SIGSTOP */
    int64_t ret = es_hs_wait_signal(m, "rt_sigsuspend");
    if (ret == -ES_ERESCHED) {
        t->wait.oldmask = old; /* the retry must not take the temporary mask for it */
        return ret;
    }
    if (caught_pending(h)) {
        h->suspend_mask = old; /* the frame's uc_sigmask */
        h->suspend_saved = true;
    } else {
        h->sigmask = old;
    }
    return ret;
}
