/* progress.h - one status line on a terminal for long runs (`entrysim
 * bench`'s cells done / total and ETA, `entrysim run --progress`'s
 * instructions and rate): rewritten in place ("\r" and erase to the end of
 * the line), at most a few times a second, and only when the stream is a
 * terminal; in a pipe or a file, or with TERM=dumb, nothing is written, so
 * logs and JSON output stay as they were.  The library layers never print:
 * they call back (es_hooks.progress, es_bench_cfg.progress) and this front
 * end draws. */
#ifndef ENTRYSIM_CLI_PROGRESS_H
#define ENTRYSIM_CLI_PROGRESS_H

#include <stdbool.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct es_progress {
    FILE *f;
    bool on;       /* f is a terminal that can erase a line */
    bool shown;    /* a status line is on the screen */
    double t0;     /* es_progress_init's time (CLOCK_MONOTONIC s) */
    double last;   /* when the line was last drawn */
} es_progress;

/* Starts the clock; the line is drawn on f only when f is a terminal (and
 * TERM is not "dumb"). */
void es_progress_init(es_progress *p, FILE *f);

/* Seconds since es_progress_init. */
double es_progress_elapsed(const es_progress *p);

/* Whether a redraw is due: on, and 0.25 s since the last one (or none
 * yet).  Callers format the line only then. */
bool es_progress_due(const es_progress *p);

/* Draws text (no newline) as the status line, replacing the previous one. */
void es_progress_show(es_progress *p, const char *text);

/* Erases the status line, if one is shown, so that the next line written
 * to the stream starts in column 0 of an empty line. */
void es_progress_clear(es_progress *p);

/* "1:05" or "2:03:04" for a number of seconds, into buf. */
const char *es_progress_hms(double secs, char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif
