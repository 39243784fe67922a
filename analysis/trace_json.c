/* trace_json.c - Chrome Trace Event JSON of the run (trace_json.h).
 *
 * Written as the run goes (phases.c hands over each call when it ends), so
 * memory stays flat however long the run.  The format (the Trace Event
 * Format document of the Chromium project): an object whose "traceEvents"
 * array holds complete events {"ph":"X","ts","dur","pid","tid","name",
 * "cat","args"}, counter events {"ph":"C","ts","name","args":{series:
 * value}} and metadata events {"ph":"M"} naming the process and thread;
 * "displayTimeUnit" and "otherData" sit beside the array.
 */
#include "trace_json.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

struct es_trace_json {
    es_phases *ph;
    FILE *f;
    bool any;           /* an event written: the next needs a comma */
    uint64_t prev_end;  /* where the last slice ended (cycles) */
    uint64_t prev_insn; /* the tracker's instruction count there */
    uint64_t calls;
    uint64_t origin;    /* the tracker's clock when the trace opened */
};

/* A cycle count as the format's microseconds: cycles / 1000, exactly. */
static void put_ts(FILE *f, const char *key, uint64_t cycles)
{
    fprintf(f, ",\"%s\":%" PRIu64 ".%03u", key, cycles / 1000, (unsigned)(cycles % 1000));
}

static void begin_event(es_trace_json *j)
{
    fputs(j->any ? ",\n" : "\n", j->f);
    j->any = true;
}

/* A complete slice on the one thread; args_fmt is the inside of "args". */
static void slice(es_trace_json *j, const char *name, const char *cat, uint64_t start,
                  uint64_t dur, const char *args)
{
    begin_event(j);
    fputs("{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"name\":", j->f);
    es_json_str(j->f, name);
    fprintf(j->f, ",\"cat\":\"%s\"", cat);
    put_ts(j->f, "ts", start);
    put_ts(j->f, "dur", dur);
    fprintf(j->f, ",\"args\":{%s}}", args ? args : "");
}

/* The IPC of [start, start + cycles) as the counter's value from start. */
static void ipc(es_trace_json *j, uint64_t start, uint64_t insns, uint64_t cycles)
{
    begin_event(j);
    fputs("{\"ph\":\"C\",\"pid\":1,\"name\":\"IPC\"", j->f);
    put_ts(j->f, "ts", start);
    fprintf(j->f, ",\"args\":{\"ipc\":%.3f}}", cycles ? (double)insns / (double)cycles : 0.0);
}

/* The guest kernel's start-up, when the trace began before it: the first
 * cycles of the run (the tracker's `boot`), before any user instruction. */
static void boot_slice(es_trace_json *j)
{
    es_phase_totals t;
    es_phases_totals(j->ph, &t);
    if (j->prev_end != j->origin || !t.boot_cycles || t.boot_cycles > t.cycles - j->origin)
        return;
    char args[64];
    snprintf(args, sizeof args, "\"instructions\":%" PRIu64, t.boot_insns);
    slice(j, "boot", "kernel", j->prev_end, t.boot_cycles, args);
    ipc(j, j->prev_end, t.boot_insns, t.boot_cycles);
    j->prev_end += t.boot_cycles;
    j->prev_insn += t.boot_insns;
}

/* User-mode time from the previous slice's end up to `to`. */
static void user_until(es_trace_json *j, uint64_t to, uint64_t insn)
{
    if (!j->calls)
        boot_slice(j);
    if (to <= j->prev_end)
        return;
    char args[64];
    snprintf(args, sizeof args, "\"instructions\":%" PRIu64, insn - j->prev_insn);
    slice(j, "user", "user", j->prev_end, to - j->prev_end, args);
    ipc(j, j->prev_end, insn - j->prev_insn, to - j->prev_end);
}

static void on_call(void *ctx, const es_phase_call *c)
{
    es_trace_json *j = ctx;
    user_until(j, c->start, c->insn_start);
    char name[96], args[256];
    snprintf(name, sizeof name, "%s %s", es_ph_entry_name(c->entry), c->name);
    snprintf(args, sizeof args,
             "\"entry\":\"%s\",\"nr\":%" PRIu32 ",\"cycles\":%" PRIu64
             ",\"instructions\":%" PRIu64 ",\"returned\":%s",
             es_ph_entry_name(c->entry), c->nr, c->end - c->start, c->insn_end - c->insn_start,
             c->returned ? "true" : "false");
    slice(j, name, "syscall", c->start, c->end - c->start, args);
    for (unsigned k = 0; k < c->nseg; k++)
        slice(j, es_phase_name(c->seg[k].phase), "phase", c->seg[k].start, c->seg[k].cycles,
              NULL);
    ipc(j, c->start, c->insn_end - c->insn_start, c->end - c->start);
    j->prev_end = c->end;
    j->prev_insn = c->insn_end;
    j->calls++;
}

es_trace_json *es_trace_json_open(es_phases *ph, const char *path, char *err, size_t errlen)
{
    es_trace_json *j = calloc(1, sizeof *j);
    if (!j) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    j->f = fopen(path, "w");
    if (!j->f) {
        snprintf(err, errlen, "cannot create %s", path);
        free(j);
        return NULL;
    }
    j->ph = ph;
    es_phase_totals t;
    es_phases_totals(ph, &t);
    j->origin = j->prev_end = t.cycles;
    j->prev_insn = t.insns;
    fputs("{\"traceEvents\":[", j->f);
    begin_event(j);
    fputs("{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":\"entrysim\"}}",
          j->f);
    begin_event(j);
    fputs("{\"ph\":\"M\",\"pid\":1,\"tid\":1,\"name\":\"thread_name\","
          "\"args\":{\"name\":\"cpu (1 ns = 1 cycle)\"}}",
          j->f);
    es_phases_set_call_hook(ph, on_call, j);
    return j;
}

int es_trace_json_close(es_trace_json *j, const es_run_meta *meta)
{
    if (!j)
        return 0;
    es_phases_flush_call(j->ph);
    es_phases_set_call_hook(j->ph, NULL, NULL);
    es_phase_totals t;
    es_phases_totals(j->ph, &t);
    user_until(j, t.cycles, t.insns);
    fputs("\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"entrysim\":\"0.1.0\","
          "\"time_unit\":\"cycles: ts and dur are cycles / 1000 (1 ns shown = 1 cycle)\"",
          j->f);
    fprintf(j->f, ",\"cycles\":%" PRIu64 ",\"instructions\":%" PRIu64 ",\"calls\":%" PRIu64,
            t.cycles, t.insns, j->calls);
    static const char *const keys[] = {"program", "uarch", "kernel", "mitigations", "cpu"};
    const char *vals[] = {meta ? meta->program : NULL, meta ? meta->uarch : NULL,
                          meta ? meta->kernel : NULL, meta ? meta->mitigations : NULL,
                          meta ? meta->cpu : NULL};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        fprintf(j->f, ",\"%s\":", keys[k]);
        es_json_str(j->f, vals[k]);
    }
    fputs("}}\n", j->f);
    int rc = ferror(j->f) ? -1 : 0;
    if (fclose(j->f))
        rc = -1;
    free(j);
    return rc;
}
