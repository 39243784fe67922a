/* ksyms.h - symbols of the loaded guest kernel image (.symtab), by name
 * and by address. */
#ifndef ENTRYSIM_KSYMS_H
#define ENTRYSIM_KSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "machine.h"

struct ksymtab;

#ifdef __cplusplus
extern "C" {
#endif

/* Symbols of the loaded image.  es_kernel_sym returns 0 when absent. */
uint64_t es_kernel_sym(const es_machine *m, const char *name);
bool es_kernel_sym_size(const es_machine *m, const char *name, uint64_t *addr, uint64_t *size);
/* The symbol at or below addr within the image (sized symbols preferred
 * when several start at the same address) and the offset into it; NULL
 * when addr lies outside the image. */
const char *es_kernel_addr2sym(const es_machine *m, uint64_t addr, uint64_t *off);
/* Number of symbols, and the i-th in address order (for listings). */
size_t es_kernel_nsyms(const es_machine *m);
const char *es_kernel_sym_at(const es_machine *m, size_t i, uint64_t *addr, uint64_t *size);

/* The name of system call nr of the loaded kernel's table (ia32: the
 * ia32 table), from the function its slot points to ("__x64_sys_write" ->
 * "write"): the kernel's own tables, whatever tree it was built from.
 * false for a hole (sys_ni_syscall), an out-of-range number or no kernel. */
bool es_kernel_syscall_name(es_machine *m, bool ia32, int nr, char *out, size_t n);

/* Reads .symtab and its string table into *t, the symbols within [lo, hi)
 * (the image's span), sorted by address and by name.  A missing symbol
 * table is an error: the simulator finds startup_64 and es_boot_info
 * through it.  0, or -1 with m->message (free *t either way). */
int es_ksyms_read(es_machine *m, struct ksymtab *t, const uint8_t *data, size_t size,
                  uint64_t lo, uint64_t hi);
void es_ksyms_free(struct ksymtab *t);

#ifdef __cplusplus
}
#endif
#endif
