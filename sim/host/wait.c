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

int es_hs_poll(es_machine *m, struct pollfd *p, unsigned long n, int64_t want_ns, const char *what)
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
    if (!guest_pipe && !m->deadline_ns)
        return 0;
    short ev = wr ? POLLOUT : POLLIN;
    int fl = fcntl(hfd, F_GETFL);
    if (fl < 0 || (fl & O_NONBLOCK))
        return 0; /* the call itself says EAGAIN */
    struct pollfd p = {.fd = hfd, .events = ev};
    /* The guest's own pipe: its other end can only be a guest fd (no fork,
     * no fd passing), so not ready with the other end open (no POLLHUP,
     * no POLLERR) means only the guest itself could make it ready. */
    if (guest_pipe && poll(&p, 1, 0) == 0) {
        es_hs_deadlock(m, wr ? "a write to the guest's own full pipe"
                             : "a read of the guest's own empty pipe");
        return -1;
    }
    if (!m->deadline_ns)
        return 0;
    int r = es_hs_poll(m, &p, 1, -1, wr ? "a blocking write" : "a blocking read");
    (void)r; /* a poll error: the call itself reports it */
    return m->stop != ES_STOP_NONE ? -1 : 0;
}
