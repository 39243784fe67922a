/* run_traces.c - see run_traces.h; the formats are analysis/pipetrace.c
 * and analysis/trace_json.c, their documentation docs/TIMING.md. */
#include "run_traces.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exposure.h"
#include "opts.h"

/* --pipetrace-syscall NR|NAME[:N] into the selector's fields; false when
 * malformed or the name is in no table. */
static bool parse_sys(const char *s, es_pipetrace_cfg *c, char *name, size_t namelen)
{
    const char *colon = strchr(s, ':');
    size_t len = colon ? (size_t)(colon - s) : strlen(s);
    c->sys_nth = 1;
    if (colon && !es_opt_u64(colon + 1, 1, UINT64_MAX, &c->sys_nth))
        return false;
    if (len == 0 || len >= namelen)
        return false;
    memcpy(name, s, len);
    name[len] = 0;
    uint64_t nr;
    if (es_opt_u64(name, 0, 0xffffffffu, &nr)) {
        c->sys_nr = (int64_t)nr;
        c->sys_name = NULL;
        return true;
    }
    c->sys_nr = -1;
    c->sys_name = name;
    for (int e = 0; e < ES_ENTRY_COUNT; e++)
        if (es_syscall_nr(e, name) >= 0)
            return true;
    return false;
}

int es_run_traces_check(const es_run_traces *o, char *err, size_t errlen)
{
    if (!o->pipetrace && (o->from || o->sys || o->insns)) {
        snprintf(err, errlen, "--pipetrace-from, --pipetrace-syscall and --pipetrace-insns "
                              "choose what --pipetrace FILE records");
        return -1;
    }
    if (o->from && o->sys) {
        snprintf(err, errlen, "--pipetrace-from and --pipetrace-syscall: give one start");
        return -1;
    }
    es_pipetrace_cfg c = {0};
    char name[64];
    if (o->sys && !parse_sys(o->sys, &c, name, sizeof name)) {
        snprintf(err, errlen,
                 "--pipetrace-syscall %s: expected NR or a system call's NAME, then "
                 "optionally :N for the Nth call (e.g. getpid:2)",
                 o->sys);
        return -1;
    }
    return 0;
}

int es_run_traces_open(es_run_traces *o, es_machine *m, es_timing *t, es_phases *ph, char *err,
                       size_t errlen)
{
    if (o->pipetrace) {
        es_pipetrace_cfg c = {.path = o->pipetrace, .sys_nr = -1, .max_insns = o->insns};
        char name[64];
        if (o->sys)
            parse_sys(o->sys, &c, name, sizeof name); /* checked by es_run_traces_check */
        if (o->from && !(c.has_from = es_pipetrace_resolve(m, o->from, &c.from_addr))) {
            snprintf(err, errlen,
                     "--pipetrace-from %s: no such guest kernel symbol (SYM, SYM+OFF or 0xADDR)",
                     o->from);
            return 2;
        }
        char e[160];
        if (!(o->pt = es_pipetrace_open(m, t, &c, e, sizeof e))) {
            snprintf(err, errlen, "--pipetrace: %s", e);
            return 1;
        }
    }
    char e[160];
    if (o->json && !(o->tj = es_trace_json_open(ph, o->json, e, sizeof e))) {
        snprintf(err, errlen, "--trace-json: %s", e);
        es_pipetrace_close(o->pt, NULL);
        o->pt = NULL;
        return 1;
    }
    return 0;
}

int es_run_traces_close(es_run_traces *o, const es_run_meta *meta)
{
    int rc = 0;
    if (o->pt && es_pipetrace_close(o->pt, NULL)) {
        fprintf(stderr, "entrysim: --pipetrace: cannot write %s\n", o->pipetrace);
        rc = -1;
    }
    if (o->tj && es_trace_json_close(o->tj, meta)) {
        fprintf(stderr, "entrysim: --trace-json: cannot write %s\n", o->json);
        rc = -1;
    }
    o->pt = NULL;
    o->tj = NULL;
    return rc;
}
