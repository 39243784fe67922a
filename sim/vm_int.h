/* vm_int.h - what the two files of the address-space layer share: vm.c
 * (the VMA list, demand paging) and vm_mm.c (address spaces as objects:
 * fork, release, exec, kernel stacks).  Not for other layers. */
#ifndef ENTRYSIM_VM_INT_H
#define ENTRYSIM_VM_INT_H

#include "machine.h"

/* Software bit of a leaf PTE (bit 9, ignored by the MMU, SDM Vol. 3A,
 * 4.5): the entry holds a frame even with P clear (a PROT_NONE page). */
#define SW_FRAME (1ull << 9)

/* The current VMA list, made (with the default layout) on first use;
 * NULL when host memory runs out. */
struct es_vmas *es_vmas_get(es_machine *m);
/* A copy of s whose VMAs hold their files too, or NULL (host memory). */
struct es_vmas *es_vmas_clone(const struct es_vmas *s);
/* Frees s, dropping its VMAs' file holds (NULL: nothing). */
void es_vmas_destroy(struct es_vmas *s);
/* s's address space ended: to its keeper if it has one (vm.h), else
 * es_vmas_destroy. */
void es_vmas_end(struct es_vmas *s);

#endif
