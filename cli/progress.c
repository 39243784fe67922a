/* progress.c - see progress.h. */
#include "progress.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Redraws a second: enough to see it move, few enough that a slow
 * terminal (ssh) costs nothing. */
#define REDRAW_S 0.25

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void es_progress_init(es_progress *p, FILE *f)
{
    const char *term = getenv("TERM");
    *p = (es_progress){.f = f, .t0 = mono()};
    p->on = isatty(fileno(f)) && !(term && !strcmp(term, "dumb"));
    p->last = p->t0 - REDRAW_S;
}

double es_progress_elapsed(const es_progress *p)
{
    return mono() - p->t0;
}

bool es_progress_due(const es_progress *p)
{
    return p->on && mono() - p->last >= REDRAW_S;
}

void es_progress_show(es_progress *p, const char *text)
{
    if (!p->on)
        return;
    /* CR, the text, then erase what a longer previous line left (EL, ECMA-48
     * CSI K): the cursor stays at the line's end, where a guest's output
     * that interrupts it goes on */
    fprintf(p->f, "\r%s\033[K", text);
    fflush(p->f);
    p->shown = true;
    p->last = mono();
}

void es_progress_clear(es_progress *p)
{
    if (!p->shown)
        return;
    fputs("\r\033[K", p->f);
    fflush(p->f);
    p->shown = false;
}

const char *es_progress_hms(double secs, char *buf, size_t n)
{
    long s = secs > 0 && secs < 1e9 ? (long)(secs + 0.5) : 0;
    if (s >= 3600)
        snprintf(buf, n, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
    else
        snprintf(buf, n, "%ld:%02ld", s / 60, s % 60);
    return buf;
}
