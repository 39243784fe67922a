/* kmem.h - kernel memory of the loaded guest kernel: reads and writes
 * through its page tables (the kernel's view under PTI), and room for its
 * frames beyond the process's memory cap. */
#ifndef ENTRYSIM_KMEM_H
#define ENTRYSIM_KMEM_H

#include <stddef.h>
#include <stdint.h>

#include "machine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Reads kernel memory (any mapping of the current address space, no
 * permission checks, no side effects).  Returns 0 or -1. */
int es_kernel_read(es_machine *m, uint64_t va, void *dst, size_t n);
/* Writes kernel memory the same way (tests and debuggers changing saved
 * registers, as ptrace would).  Decoded code on the pages is invalidated. */
int es_kernel_write(es_machine *m, uint64_t va, const void *src, size_t n);

/* Makes room for `extra` more frames beyond the user's memory cap: the
 * kernel's pages are the machine's, not the process's, so --mem-cap keeps
 * meaning what it meant without a kernel. */
int es_kernel_grow_frames(es_machine *m, uint64_t extra);

#ifdef __cplusplus
}
#endif
#endif
