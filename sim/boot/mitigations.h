/* mitigations.h - speculative-execution mitigations of the guest kernel
 * (issue 4): each one changes the entry code the guest runs, and so its
 * cost, by patching the loaded image's alternative sites as Linux's
 * apply_alternatives() does at boot.
 *
 *   pti        page-table isolation: CR3 switch on every entry and exit
 *              (with PCID, the no-flush bit), kernel/user page tables
 *   retpoline  the indirect syscall-table call goes through a retpoline
 *              thunk instead of `call *%rax`
 *   ibrs       WRMSR IA32_SPEC_CTRL.IBRS on entry (and clear on exit)
 *   nospec     array_index_nospec() on the syscall number (in both 4.16 and
 *              4.17; `no-nospec` removes it to show what it costs)
 *
 * kernel_model/README.md describes the sites, the ALTERNATIVE records and
 * what each mitigation does to the page tables and MSRs.
 */
#ifndef ENTRYSIM_MITIGATIONS_H
#define ENTRYSIM_MITIGATIONS_H

#include <stddef.h>
#include <stdint.h>

#include "machine.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ES_MIT_PTI 1u
#define ES_MIT_RETPOLINE 2u
#define ES_MIT_IBRS 4u
#define ES_MIT_NOSPEC 8u
#define ES_MIT_ALL 15u
/* what the images do without --mitigations */
#define ES_MIT_DEFAULT ES_MIT_NOSPEC

/* Parses a comma-separated list applied to ES_MIT_DEFAULT: a name adds a
 * mitigation, "no-NAME" removes it, "none" clears the set, "all" sets every
 * one ("none,pti" = PTI only).  Returns 0, or -1 with a one-line reason. */
int es_mitigations_parse(const char *list, unsigned *out, char *err, size_t errlen);

/* "pti,retpoline,nospec" in that fixed order, or "none". */
void es_mitigations_name(unsigned mit, char *buf, size_t n);

/* After es_kernel_load and before es_kernel_boot: patches the image's
 * alternative sites for `mit` (from the bytes saved at load, so it may be
 * called again with another set; es_kernel_load already applied
 * ES_MIT_DEFAULT).  With ES_MIT_PTI it also replaces the address space's
 * PGD by an 8 KiB-aligned kernel/user pair (m->cr3 = the kernel PGD),
 * which cannot be undone: a later set without pti is refused.  Returns 0,
 * or -1 with m->message (no kernel, already booted, unknown bits, a
 * malformed .altinstructions record, out of guest memory). */
int es_kernel_set_mitigations(es_machine *m, unsigned mit);

/* Mitigations in force in the loaded image (ES_MIT_DEFAULT after
 * es_kernel_load; 0 with no kernel). */
unsigned es_kernel_mitigations(const es_machine *m);

#ifdef __cplusplus
}
#endif
#endif
