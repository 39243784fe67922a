/* pti.h - page-table isolation (the pti mitigation): a kernel/user PGD
 * pair, and the hooks that keep the pair in step with the process's
 * mappings (m->hooks.pti_sync / pti_user_flush, installed here, called by
 * sim/vm.c). */
#ifndef ENTRYSIM_PTI_H
#define ENTRYSIM_PTI_H

#include <stdint.h>

#include "machine.h"

struct es_kernel;

#ifdef __cplusplus
extern "C" {
#endif

/* Page-table isolation (Linux 4.17 arch/x86/mm/pti.c, our own code): a
 * PGD pair replaces the address space's PGD.  The kernel PGD is the old
 * one; the user PGD shares the user half (PML4 entries 0-255 point to the
 * same lower tables) and maps of the kernel half only what runs before
 * the entry code's CR3 switch or after the switch back: the entry text,
 * the entry data (per-cpu area, GDT, IDT, TSS), the task stack the CPU
 * pushes the interrupt frame on, and the vsyscall page (Linux maps its
 * cpu_entry_area and the vsyscall page the same way).  Any other kernel
 * address is not present in user mode. */
/* Returns 0 (also when already split), or -1 with m->message. */
int es_pti_setup(es_machine *m, struct es_kernel *k);

/* PTI: the PGD pair's kernel half (m->cr3 may be either while running).
 * 0 unless pti is in force.  The user PGD is this + 4096. */
uint64_t es_kernel_pti_pgd(const es_machine *m);

#ifdef __cplusplus
}
#endif
#endif
