/* fault.c - see fault.h. */
#include "fault.h"

#include <stdarg.h>
#include <stdio.h>

int es_raise(es_machine *m, int vector, uint32_t error)
{
    m->fault.vector = (uint8_t)vector;
    m->fault.error = error;
    m->fault.has_error = (uint8_t)es_vector_has_error(vector);
    m->fault.rip = m->rip;
    m->fault.addr = 0;
    m->fault.write = 0;
    m->fault.bus = 0;
    return ES_FAULT;
}

int es_vector_has_error(int vector)
{
    return vector == ES_VEC_DF || (vector >= ES_VEC_TS && vector <= ES_VEC_PF) ||
           vector == ES_VEC_AC;
}

int es_raise_noerr(es_machine *m, int vector)
{
    return es_raise(m, vector, 0);
}

int es_fail_fault(es_machine *m, int vector, uint32_t error)
{
    es_raise(m, vector, error);
    return -1;
}

int es_unimplemented(es_machine *m, const es_insn *d)
{
    m->unimpl_op = d->op;
    return es_raise(m, ES_VEC_UD, 0);
}

int es_stop(es_machine *m, int reason)
{
    m->stop = reason;
    return ES_STOP;
}

int es_fail_msg(es_machine *m, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->message, sizeof m->message, fmt, ap);
    va_end(ap);
    return -1;
}

const char *es_vector_name(int v)
{
    static const char *const names[32] = {
        "#DE", "#DB", "NMI", "#BP", "#OF", "#BR", "#UD", "#NM", "#DF", "CSO", "#TS",
        "#NP", "#SS", "#GP", "#PF", "#15", "#MF", "#AC", "#MC", "#XM", "#VE", "#CP",
    };
    if (v >= 0 && v < 32 && names[v])
        return names[v];
    return "#??";
}

/* Linux's signal for an unhandled user exception (arch/x86/kernel/traps.c). */
int es_vector_signal(int v)
{
    switch (v) {
    case ES_VEC_DE: case ES_VEC_MF: case ES_VEC_XM: return 8; /* SIGFPE */
    case ES_VEC_UD: return 4;                         /* SIGILL */
    case ES_VEC_BP: case ES_VEC_DB: return 5;             /* SIGTRAP */
    case ES_VEC_AC: case ES_VEC_SS: return 7;             /* SIGBUS (SS: Linux sends SIGBUS) */
    default: return 11;                           /* SIGSEGV */
    }
}

/* A fault that kills the process ends the run with Linux's signal and a
 * one-line report: without a guest kernel for every fault, with one when
 * the kernel reports an unhandled user fault (ES_HC_SIGNAL). */
bool es_fault_is_bus(const es_machine *m, int v, uint64_t addr)
{
    /* the #PF recorded at the access (the guest kernel reports it after
     * running its handler): a file page past EOF is SIGBUS, BUS_ADRERR
     * (arch/x86/mm/fault.c do_sigbus for VM_FAULT_SIGBUS) */
    return v == ES_VEC_PF && m->fault.bus && m->fault.addr == addr;
}

void es_fault_report(es_machine *m, int v, uint32_t e, uint64_t addr, uint64_t rip)
{
    bool bus = es_fault_is_bus(m, v, addr);
    m->fault.vector = (uint8_t)v;
    m->fault.error = e;
    m->fault.has_error = (uint8_t)es_vector_has_error(v);
    m->fault.addr = addr;
    m->fault.rip = rip;
    m->fault.bus = bus;
    m->signal = bus ? 7 /* SIGBUS */ : es_vector_signal(v);
    if (v == ES_VEC_PF) {
        snprintf(m->message, sizeof m->message, "guest fault #PF at rip=0x%llx: %s 0x%llx (%s)",
                 (unsigned long long)rip,
                 (e & ES_PFEC_I) ? "execute at" : (e & ES_PFEC_W) ? "write to" : "read from",
                 (unsigned long long)addr,
                 bus ? "past the end of the mapped file: SIGBUS"
                 : (e & ES_PFEC_P) ? "protection violation" : "not present");
    } else if (v == ES_VEC_UD && m->unimpl_op && m->unimpl_op != ES_OP_INVALID) {
        snprintf(m->message, sizeof m->message,
                 "guest fault #UD at rip=0x%llx: %s is not implemented by entrysim",
                 (unsigned long long)rip, es_op_name(m->unimpl_op));
    } else if (m->fault.has_error) {
        snprintf(m->message, sizeof m->message, "guest fault %s at rip=0x%llx (error code 0x%x)",
                 es_vector_name(v), (unsigned long long)rip, e);
    } else {
        snprintf(m->message, sizeof m->message, "guest fault %s at rip=0x%llx",
                 es_vector_name(v), (unsigned long long)rip);
    }
    if (v == ES_VEC_PF)
        m->cr2 = addr;
    m->stop = ES_STOP_FAULT;
}
