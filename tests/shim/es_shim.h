/* es_shim.h - small C helpers the C++ tests call: a machine with code,
 * data and stack pages mapped directly in its page tables, no process. */
#ifndef ENTRYSIM_TEST_SHIM_H
#define ENTRYSIM_TEST_SHIM_H

#include <stddef.h>
#include <stdint.h>

#include "machine.h"

#ifdef __cplusplus
extern "C" {
#endif

#define EST_CODE 0x400000ull /* 64 KiB, user, read+execute */
#define EST_DATA 0x600000ull /* 64 KiB, user, read+write, zeroed */
#define EST_STACK_TOP 0x800000ull /* 64 KiB below, user, read+write */

/* A machine at CPL 3 in `mode` (ES_MODE_64 / ES_MODE_32) with the three
 * regions above mapped; all GPRs zero, RSP = EST_STACK_TOP - 0x100. */
es_machine *est_new(int mode);
/* Copies code to EST_CODE and points RIP at it. */
int est_code(es_machine *m, const uint8_t *code, size_t n);
/* Runs until RIP reaches EST_CODE + n (the end of the code) or something
 * stops the machine, at most max instructions.  Returns 0 when the end was
 * reached, else the es_stop reason (ES_STOP_FAULT: m->fault says why). */
int est_run(es_machine *m, size_t n, uint64_t max);
/* Maps one more user page at va with the given writability. */
int est_map(es_machine *m, uint64_t va, int writable, int exec);

#ifdef __cplusplus
}
#endif
#endif
