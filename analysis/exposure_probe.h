/* exposure_probe.h - the probe points of one syscall (exposure_probe.c),
 * shared by the one-case runner (exposure.c) and live mode
 * (exposure_live.c). */
#ifndef ENTRYSIM_EXPOSURE_PROBE_H
#define ENTRYSIM_EXPOSURE_PROBE_H

#include "exposure.h"

/* Finds the probe points of e's syscall (e->nr, e->arity) in the loaded
 * image and what each register may hold at each of them. */
void es_probe_setup(es_machine *m, es_exposure *e, int entry, unsigned patches);

/* Execution reached p: records the labels of every GPR and which are
 * exposed. */
void es_probe_record(es_probe *p, const es_taint *t);

#endif
