/* priv.h - the privileged architecture when a guest kernel runs
 * (m->has_kernel): event delivery through the IDT (SDM Vol. 3A, 6.14),
 * SYSCALL/SYSENTER into the kernel and SYSRET/SYSEXIT out of it (SDM
 * Vol. 2B), LTR, and the VMCALL hypercalls of sim/hypercall.h.
 *
 * In --direct mode (has_kernel false) none of the entry paths here is
 * used: SYSCALL, SYSENTER and INT 0x80 reach the host services from the
 * instruction handler and faults stop the run (cpu.c, fault.c).
 */
#ifndef ENTRYSIM_PRIV_H
#define ENTRYSIM_PRIV_H

#include "machine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Delivers the fault recorded in m->fault through the guest's IDT, as the
 * CPU does for an exception: the saved RIP is m->fault.rip, CR2 is set for
 * #PF, and a fault while delivering is handled as SDM Vol. 3A Table 6-5
 * says (serially, or as #DF; a fault while delivering #DF is a triple
 * fault, which stops the run with ES_STOP_ERROR).  Returns 0 when the CPU
 * now executes the handler (RIP, CS, CPL, stack changed), -1 when the run
 * stopped. */
int es_deliver_fault(es_machine *m);

/* INT n, INT3 and INTO with a guest kernel: a software interrupt (gate DPL
 * checked against CPL, no error code, the saved RIP is the next
 * instruction).  Called from the instruction handler: returns ES_OK with
 * m->nrip = the handler, or ES_FAULT with the delivery's fault recorded. */
int es_soft_int(es_machine *m, unsigned vector);

/* An external interrupt (the modeled local APIC timer) at an instruction
 * boundary: delivered through the IDT as hardware does (no gate DPL check,
 * EXT set) when RFLAGS.IF = 1 and a guest kernel runs.  Returns 1 when the
 * CPU now runs the handler, 0 when masked, -1 when the run stopped. */
int es_external_interrupt(es_machine *m, unsigned vector);

/* SYSCALL and SYSENTER with a guest kernel (SDM Vol. 2B); the --direct
 * forms are in system.c. */
int es_syscall_arch(es_machine *m, const es_insn *d);
int es_sysenter_arch(es_machine *m, const es_insn *d);

/* Instruction handlers (registered by system.c). */
int es_op_sysret(es_machine *m, const es_insn *d);
int es_op_sysexit(es_machine *m, const es_insn *d);
int es_op_ltr(es_machine *m, const es_insn *d);
int es_op_lldt(es_machine *m, const es_insn *d);
int es_op_vmcall(es_machine *m, const es_insn *d);

#ifdef __cplusplus
}
#endif
#endif
