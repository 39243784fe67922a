/* alternatives.h - the alternative sites of the guest kernel image
 * (kernel_model/include/alternative.h, es_boot.h), patched for a set of
 * mitigations as Linux's apply_alternatives() does at boot. */
#ifndef ENTRYSIM_ALTERNATIVES_H
#define ENTRYSIM_ALTERNATIVES_H

#include "machine.h"

struct es_kernel;

#ifdef __cplusplus
extern "C" {
#endif

/* Finds the records (symbols __alt_instructions/_end; an image without
 * them has no sites) and keeps each site's loaded bytes, so a later set
 * can be applied from the original code. */
int es_alt_read(es_machine *m, struct es_kernel *k);

/* apply_alternatives(): every site gets either its replacement plus NOPs
 * (feature in force) or its original code with the assembler's 0x90
 * padding turned into long NOPs.  `mit` is a set of ES_MIT_*
 * (mitigations.h).  Returns 0, or -1 with m->message. */
int es_alt_apply(es_machine *m, struct es_kernel *k, unsigned mit);

#ifdef __cplusplus
}
#endif
#endif
