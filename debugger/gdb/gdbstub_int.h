/* gdbstub_int.h - pieces of the gdb stub shared between its files (not a
 * public interface): the register layout gdb sees and its target
 * description, guest memory reads, the monitor commands. */
#ifndef ENTRYSIM_GDBSTUB_INT_H
#define ENTRYSIM_GDBSTUB_INT_H

#include <stddef.h>
#include <stdint.h>

#include "machine.h"

/* Number of registers in the target description; gdb numbers them 0..n-1
 * in description order, which is also the order of the `g` packet. */
size_t es_gdb_nregs(void);

/* Size in bytes of register r (0 when r is out of range). */
unsigned es_gdb_reg_size(size_t r);

/* Copies register r into out (little endian, es_gdb_reg_size bytes, at
 * most 16).  Returns the size, or 0 when r is out of range. */
unsigned es_gdb_reg_read(es_machine *m, size_t r, uint8_t out[16]);

/* Writes register r from in (es_gdb_reg_size bytes).  Returns 0, or -1
 * when r is out of range or read-only (segment selectors, control
 * registers, cpl: changing them behind the CPU's back would leave the
 * derived state -- descriptor caches, mode, TLB -- inconsistent). */
int es_gdb_reg_write(es_machine *m, size_t r, const uint8_t *in);

/* The target description (XML) for qXfer:features:read:target.xml, built
 * from the same register table.  Writes a NUL-terminated document into
 * buf and returns its length, or 0 when cap is too small. */
size_t es_gdb_target_xml(char *buf, size_t cap);

/* Reads up to n bytes of guest memory at va (supervisor rights, through
 * the current page tables, faulting in untouched user pages as ptrace
 * does); returns how many were readable from the start (gdbstub.c). */
size_t es_gdb_mem_read(es_machine *m, uint64_t va, uint8_t *dst, size_t n);

/* The answer to `monitor CMD` as console text (NUL-terminated, cut to
 * cap); an unknown command gets the list of commands (gdbstub_monitor.c). */
void es_gdb_monitor(es_machine *m, const char *cmd, char *text, size_t cap);

#endif
