/* trace_json.h - the run as Chrome Trace Event JSON (chrome://tracing,
 * ui.perfetto.dev): each kernel entry a complete slice ("ph":"X") named by
 * entry kind and call, its phases (phases.h) nested in it in the order they
 * ran, "user" slices between, and the IPC of every slice as a counter
 * track.  Timestamps are cycles: ts and dur in the file are cycles / 1000
 * (the format's unit is the microsecond), so one nanosecond on the
 * timeline is one cycle (docs/TIMING.md, "Pipeline traces").
 */
#ifndef ENTRYSIM_TRACE_JSON_H
#define ENTRYSIM_TRACE_JSON_H

#include <stddef.h>

#include "phases.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct es_trace_json es_trace_json;

/* Creates path and installs the call hook on ph; NULL with a message in
 * err when the file cannot be created or out of memory. */
es_trace_json *es_trace_json_open(es_phases *ph, const char *path, char *err, size_t errlen);

/* Delivers the call still open, the user time after the last call and the
 * run's metadata (meta may be NULL), closes the file and removes the hook.
 * Returns 0, or -1 when a write failed. */
int es_trace_json_close(es_trace_json *j, const es_run_meta *meta);

#ifdef __cplusplus
}
#endif
#endif
