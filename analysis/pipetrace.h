/* pipetrace.h - the cycle model's per-instruction stages as a Kanata log
 * (version 0004), the native format of the Konata pipeline viewer
 * (github.com/shioyadan/Konata, docs/kanata-log-format.md).
 *
 * Attached as the timing model's tracer (es_timing_set_tracer): nothing
 * runs unless a trace is open.  A range selector picks where the trace
 * starts (an address, or the entry of the Nth system call with a number
 * or name) and how many instructions it holds.  Stages (docs/TIMING.md,
 * "Pipeline traces"): lane 0 F, Dc or Uc, Ds, X, Cm; lane 1 one stage per
 * port reservation, named by the port.
 */
#ifndef ENTRYSIM_PIPETRACE_H
#define ENTRYSIM_PIPETRACE_H

#include <stddef.h>
#include <stdint.h>

#include "machine.h"
#include "timing.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct es_pipetrace_cfg {
    const char *path;
    /* where to start: from_addr (when has_from), else the sys_nth-th (from
     * 1) system call entry whose number is sys_nr or whose name in its
     * entry's table is sys_name (when either is set), else at once */
    int has_from;
    uint64_t from_addr;
    const char *sys_name; /* NULL: by number */
    int64_t sys_nr;       /* -1: none */
    uint64_t sys_nth;     /* 0 counts as 1 */
    uint64_t max_insns;   /* instructions in the trace; 0 = 2000 */
} es_pipetrace_cfg;

typedef struct es_pipetrace es_pipetrace;

/* Opens cfg->path and installs the tracer on t (m is the machine t is
 * attached to).  NULL with a message in err when the file cannot be
 * created or on allocation failure. */
es_pipetrace *es_pipetrace_open(es_machine *m, es_timing *t, const es_pipetrace_cfg *cfg,
                                char *err, size_t errlen);

/* Writes what is pending, removes the tracer and closes the file; returns
 * 0, or -1 when a write failed.  *insns (if given) gets the number of
 * instructions written. */
int es_pipetrace_close(es_pipetrace *p, uint64_t *insns);

/* Parses "SYM", "SYM+OFF" (guest kernel symbols) or "0xADDR" into *addr;
 * false when unknown. */
int es_pipetrace_resolve(const es_machine *m, const char *s, uint64_t *addr);

#ifdef __cplusplus
}
#endif
#endif
