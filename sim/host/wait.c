/* wait.c - the host services' blocking waits, bounded by --timeout.
 *
 * A guest call that blocks (sleep, poll, select, epoll_wait, a read of an
 * empty pipe or terminal, a FIFO open) must not hold the run past
 * m->deadline_ns: every wait here goes through ppoll with the time left,
 * and when the deadline cuts a wait short the run stops with ES_STOP_TIME
 * (the call does not complete: the guest's RIP stays on it).  A wait that
 * nothing can end (no fd to wait on and no timeout, a pipe whose other end
 * only the single-threaded guest holds) stops the run at once with
 * ES_STOP_ERROR and says why, as futex and pause do (tls.c, proc.c).
 * Without a deadline the waits are the host's own, as before.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <time.h>

#include "host_int.h"
#include "hypercall.h"
#include "task.h"

/* ns left before the deadline (0 when it has passed), or -1 = none. */
static int64_t time_left(es_machine *m)
{
    if (!m->deadline_ns)
        return -1;
    int64_t left = m->deadline_ns - es_now_ns();
    return left > 0 ? left : 0;
}

void es_hs_time_up(es_machine *m, const char *what)
{
    snprintf(m->message, sizeof m->message, "%s would outlast --timeout %g s", what,
             m->wall_limit);
    m->stop = ES_STOP_TIME;
}

void es_hs_deadlock(es_machine *m, const char *what)
{
    snprintf(m->message, sizeof m->message,
             "%s would block forever: nothing else can wake a single-process guest", what);
    m->stop = ES_STOP_ERROR;
}

/* With other tasks: the fds are looked at without waiting; when none is
 * ready the call waits as a task (ES_ERESCHED) until one is or until the
 * timeout, which a retry keeps from the first attempt. */
static int poll_as_task(es_machine *m, struct pollfd *p, unsigned long n, int64_t want_ns)
{
    int r = n ? poll(p, n, 0) : 0;
    if (r != 0 || want_ns == 0)
        return r < 0 ? -errno : r;
    es_task *t = es_task_cur(m);
    int64_t now = es_hs_clock_mono(m);
    int64_t until = want_ns < 0                               ? 0
                    : t->wait.active && t->wait.until          ? t->wait.until
                    : want_ns > INT64_MAX / 4 - now            ? INT64_MAX / 4
                                                               : now + want_ns;
    if (until && now >= until)
        return 0;
    es_task_wait(m, ES_W_FD, p, (unsigned)n, until, 0);
    return -ES_ERESCHED;
}

int es_hs_poll(es_machine *m, struct pollfd *p, unsigned long n, int64_t want_ns, const char *what)
{
    if (es_task_multi(m))
        return poll_as_task(m, p, n, want_ns);
    return es_hs_poll_host(m, p, n, want_ns, what);
}

int es_hs_poll_host(es_machine *m, struct pollfd *p, unsigned long n, int64_t want_ns,
                    const char *what)
{
    int64_t left = time_left(m);
    bool cut = left >= 0 && (want_ns < 0 || want_ns > left);
    int64_t ns = cut ? left : want_ns;
    struct timespec ts = {.tv_sec = ns / NSEC, .tv_nsec = ns % NSEC};
    int r = ppoll(p, n, ns < 0 ? NULL : &ts, NULL);
    if (r < 0)
        return -errno;
    if (r == 0 && cut) {
        es_hs_time_up(m, what);
        return -EINTR;
    }
    return r;
}

int64_t es_hs_sleep_plain(es_machine *m, int64_t ns)
{
    if (ns <= 0)
        return 0;
    if (es_task_multi(m)) /* other tasks run meanwhile */
        return poll_as_task(m, NULL, 0, ns);
    if (m->deterministic || m->host->cfg.deterministic) {
        es_hs_slept(m->host, ns);
        return 0;
    }
    int64_t left = time_left(m);
    if (left >= 0 && ns > left) {
        /* nothing can end the sleep early: stop now, not at the deadline */
        char what[64];
        snprintf(what, sizeof what, "a sleep of %.3f s", (double)ns / NSEC);
        es_hs_time_up(m, what);
        return -EINTR;
    }
    struct timespec ts = {.tv_sec = ns / NSEC, .tv_nsec = ns % NSEC};
    while (nanosleep(&ts, &ts) && errno == EINTR)
        ;
    return 0;
}

int es_hs_wait_fd(es_machine *m, int hfd, bool guest_pipe, bool wr)
{
    bool multi = es_task_multi(m);
    if (!guest_pipe && !m->deadline_ns && !multi)
        return 0;
    short ev = wr ? POLLOUT : POLLIN;
    int fl = fcntl(hfd, F_GETFL);
    if (fl < 0 || (fl & O_NONBLOCK))
        return 0; /* the call itself says EAGAIN */
    struct pollfd p = {.fd = hfd, .events = ev};
    if (multi) {
        int r = poll_as_task(m, &p, 1, -1);
        return r < 0 ? r : 0;
    }
    /* The guest's own pipe: its other end can only be a guest fd (no fork,
     * no fd passing), so not ready with the other end open (no POLLHUP,
     * no POLLERR) means only the guest itself could make it ready. */
    if (guest_pipe && poll(&p, 1, 0) == 0) {
        es_hs_deadlock(m, wr ? "a write to the guest's own full pipe"
                             : "a read of the guest's own empty pipe");
        return -EINTR;
    }
    if (!m->deadline_ns)
        return 0;
    int r = es_hs_poll_host(m, &p, 1, -1, wr ? "a blocking write" : "a blocking read");
    (void)r; /* a poll error: the call itself reports it */
    return m->stop != ES_STOP_NONE ? -EINTR : 0;
}
