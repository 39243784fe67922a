/* run_traces.h - `entrysim run --pipetrace / --trace-json` (run_traces.c):
 * the options' values, and opening and closing the two traces around the
 * run.  Both need --timing (they imply it); neither does any work unless
 * given. */
#ifndef ENTRYSIM_CLI_RUN_TRACES_H
#define ENTRYSIM_CLI_RUN_TRACES_H

#include <stdint.h>

#include "machine.h"
#include "phases.h"
#include "pipetrace.h"
#include "timing.h"
#include "trace_json.h"

typedef struct es_run_traces {
    const char *pipetrace;  /* --pipetrace FILE */
    const char *from;       /* --pipetrace-from SYM|ADDR */
    const char *sys;        /* --pipetrace-syscall NR|NAME[:N] */
    uint64_t insns;         /* --pipetrace-insns N (0: 2000) */
    const char *json;       /* --trace-json FILE */
    /* open traces */
    es_pipetrace *pt;
    es_trace_json *tj;
} es_run_traces;

/* Checks the options that need no machine (a --pipetrace-syscall name in
 * the tables, the range options only with --pipetrace); 0, or a message in
 * err. */
int es_run_traces_check(const es_run_traces *o, char *err, size_t errlen);

/* Opens what was asked for on the machine's model t and tracker ph.
 * 0, or 2 (usage: unknown symbol) / 1 (a file) with a message in err. */
int es_run_traces_open(es_run_traces *o, es_machine *m, es_timing *t, es_phases *ph, char *err,
                       size_t errlen);

/* Closes both; 0, or -1 after printing which could not be written. */
int es_run_traces_close(es_run_traces *o, const es_run_meta *meta);

#endif
