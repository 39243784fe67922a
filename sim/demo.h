/* demo.h - the built-in demo guest that `entrysim demo` runs. */
#ifndef ENTRYSIM_DEMO_H
#define ENTRYSIM_DEMO_H

#include <stddef.h>
#include <stdint.h>

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

#ifdef __cplusplus
}
#endif
#endif
