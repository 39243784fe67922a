/* demo.h - the built-in demo guest that `entrysim demo` runs. */
#ifndef ENTRYSIM_DEMO_H
#define ENTRYSIM_DEMO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Writes a complete static x86-64 ELF executable (a hand-assembled program
 * that prints a greeting, sums i*i for i = 1..1000000 in a loop, prints
 * the sum 333333833333500000 and exits 0) into buf.  Returns its size, or
 * 0 if cap is too small. */
size_t es_demo_elf(uint8_t *buf, size_t cap);

/* What the demo prints on stdout, for tests. */
extern const char es_demo_expected[];

/* `entrysim demo`: runs the demo program twice through the modeled kernel,
 * under v4.16's and v4.17's syscall conventions, with taint tracking
 * following every syscall (exposure.h, live mode), and prints the guest's
 * output once and then, syscall by syscall, which user values sit in which
 * registers at the dispatcher, the table's target and the body under each.
 * vendor: 0 Intel, 1 AMD.  Returns the guest's exit status (or 1 when the
 * runs could not be set up, or their statuses differ). */
int es_demo_compare(FILE *out, int vendor);

#ifdef __cplusplus
}
#endif
#endif
