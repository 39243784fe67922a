/* fault.h - the bottom layer of the machine: recording a fault for the run
 * loop to deliver, stopping the run, and the one-line reports a stopped
 * run leaves in m->message.  Depends on nothing but machine.h, so every
 * other part of sim/ (memory, segments, instruction families, boot) can
 * use it without depending on the run loop (cpu.c).
 */
#ifndef ENTRYSIM_FAULT_H
#define ENTRYSIM_FAULT_H

#include "machine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Records a fault for the run loop to deliver; returns ES_FAULT so a handler
 * can `return es_raise(m, ES_GP, 0);`. */
int es_raise(es_machine *m, int vector, uint32_t error);
int es_raise_noerr(es_machine *m, int vector);

/* The same for helpers that return 0 / -1: records the fault, returns -1. */
int es_fail_fault(es_machine *m, int vector, uint32_t error);

/* Raises #UD and notes the op as not implemented (for the fault report). */
int es_unimplemented(es_machine *m, const es_insn *d);

/* Stops the run: records reason and returns ES_STOP. */
int es_stop(es_machine *m, int reason);

/* Writes a one-line reason (printf format) to m->message and returns -1:
 * the error convention of the loader and the guest-kernel image. */
int es_fail_msg(es_machine *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* True if the vector pushes an error code when delivered as an exception
 * (SDM Vol. 3A, Table 6-1). */
int es_vector_has_error(int vector);

/* Name of an exception vector ("#PF"). */
const char *es_vector_name(int vector);
/* Linux's signal for a user exception of that vector (arch/x86/kernel/
 * traps.c): SIGFPE, SIGILL, SIGTRAP, SIGBUS or SIGSEGV. */
int es_vector_signal(int vector);
/* Whether a user #PF at addr is the SIGBUS of a file page past its end. */
bool es_fault_is_bus(const es_machine *m, int vector, uint64_t addr);

/* Ends the run as Linux ends a process killed by an unhandled exception:
 * m->signal (SIGSEGV, SIGILL, ...), a one-line m->message, m->stop =
 * ES_STOP_FAULT and m->fault describing the fault.  Used for faults in
 * --direct mode (cpu.c) and for the guest kernel's ES_HC_SIGNAL report
 * (priv.c). */
void es_fault_report(es_machine *m, int vector, uint32_t error, uint64_t addr, uint64_t rip);

#ifdef __cplusplus
}
#endif
#endif
