/* transient.h - wrong-path (transient) execution for the cycle model's
 * speculation (timing/speculate.c, `--speculate`).
 *
 * es_transient_begin saves the architectural state and starts logging the
 * bytes every store overwrites; es_step_transient then runs instructions
 * one at a time with no observer told, no fault delivered and no demand
 * paging (a fault ends the window: on hardware it would be squashed with
 * the branch), and es_transient_end puts registers, flags, FPU/SSE state
 * and memory back exactly as they were.  Microarchitectural state the
 * caller touched meanwhile (its caches) is not the machine's and stays.
 */
#ifndef ENTRYSIM_TRANSIENT_H
#define ENTRYSIM_TRANSIENT_H

#include <stdbool.h>

#include "machine.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct es_transient es_transient;

/* Checks the instruction about to run transiently; false ends the window
 * before it executes (a serialising or privileged one, a fence...). */
typedef bool (*es_transient_pre)(void *ctx, es_machine *m, const es_insn *d);

/* Saves the state and starts the store log; RIP becomes `from` (the
 * predicted path).  NULL when out of memory (nothing changed). */
es_transient *es_transient_begin(es_machine *m, uint64_t from);

/* One wrong-path instruction: ES_OK, or the status that ends the window
 * (ES_FAULT: fetch or execution faulted; ES_STOP: pre said no, or the
 * instruction stopped). */
int es_step_transient(es_machine *m, es_transient_pre pre, void *ctx);

/* Meltdown for this window: a user-mode read of a present supervisor
 * page returns the data instead of faulting (a CPU vendor/generation
 * property: timing/speculate.c turns it on for --cpu intel). */
void es_transient_set_meltdown(es_transient *x, bool on);
bool es_transient_meltdown(const es_machine *m);

/* Squash: memory (newest store first), registers and the rest back. */
void es_transient_end(es_machine *m, es_transient *x);

/* sim/mem.c calls this before a store while a window is open. */
void es_transient_log(es_machine *m, uint64_t pa, unsigned n);

#ifdef __cplusplus
}
#endif
#endif
