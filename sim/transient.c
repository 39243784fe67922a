/* transient.c - see transient.h. */
#include "transient.h"

#include <stdlib.h>
#include <string.h>

#include "mem.h"

typedef struct es_srec {
    uint64_t pa;
    uint32_t n, off; /* old bytes at pool[off..off+n) */
} es_srec;

struct es_transient {
    /* the architectural state a wrong path may change (it never changes
     * privilege, control registers or MSRs: es_step_transient's caller
     * stops it before any instruction that would) */
    uint64_t gpr[16], rip, nrip, rflags, lz_a, lz_b, cr2, icount, tsc;
    uint32_t lz_op, mxcsr;
    es_xmm xmm[16];
    es_x87 fpu;
    es_segreg seg[8];
    __typeof__(((es_machine *)0)->fault) fault;
    int stop, exit_status, signal;
    uint16_t unimpl_op;
    bool tlb_bypass;
    char message[sizeof((es_machine *)0)->message];
    /* the store log */
    es_srec *rec;
    size_t nrec, caprec;
    uint8_t *pool;
    size_t npool, cappool;
    bool oom; /* a store could not be logged: the window ends */
    bool meltdown;
};

void es_transient_set_meltdown(es_transient *x, bool on) { x->meltdown = on; }

bool es_transient_meltdown(const es_machine *m) { return m->spec && m->spec->meltdown; }

es_transient *es_transient_begin(es_machine *m, uint64_t from)
{
    es_transient *x = calloc(1, sizeof *x);
    if (!x)
        return NULL;
    memcpy(x->gpr, m->gpr, sizeof x->gpr);
    x->rip = m->rip, x->nrip = m->nrip, x->rflags = m->rflags;
    x->lz_op = m->lz_op, x->lz_a = m->lz_a, x->lz_b = m->lz_b;
    x->cr2 = m->cr2, x->icount = m->icount, x->tsc = m->tsc;
    x->mxcsr = m->mxcsr;
    memcpy(x->xmm, m->xmm, sizeof x->xmm);
    x->fpu = m->fpu;
    memcpy(x->seg, m->seg, sizeof x->seg);
    x->fault = m->fault;
    x->stop = m->stop, x->exit_status = m->exit_status, x->signal = m->signal;
    x->unimpl_op = m->unimpl_op;
    x->tlb_bypass = m->tlb_bypass;
    memcpy(x->message, m->message, sizeof x->message);
    /* every store through the slow path, where it is logged */
    m->tlb_bypass = true;
    es_tlb_flush(m);
    m->spec = x;
    m->rip = from;
    return x;
}

void es_transient_log(es_machine *m, uint64_t pa, unsigned n)
{
    es_transient *x = m->spec;
    if (x->nrec == x->caprec) {
        size_t c = x->caprec ? 2 * x->caprec : 64;
        es_srec *r = realloc(x->rec, c * sizeof *r);
        if (!r) {
            x->oom = true;
            return;
        }
        x->rec = r, x->caprec = c;
    }
    if (x->npool + n > x->cappool) {
        size_t c = x->cappool ? 2 * x->cappool : 4096;
        while (c < x->npool + n)
            c *= 2;
        uint8_t *p = realloc(x->pool, c);
        if (!p) {
            x->oom = true;
            return;
        }
        x->pool = p, x->cappool = c;
    }
    memcpy(x->pool + x->npool, es_phys(m, pa), n);
    x->rec[x->nrec++] = (es_srec){pa, n, (uint32_t)x->npool};
    x->npool += n;
}

int es_step_transient(es_machine *m, es_transient_pre pre, void *ctx)
{
    es_transient *x = m->spec;
    if (x->oom)
        return ES_STOP;
    return es_step_raw(m, pre, ctx);
}

void es_transient_end(es_machine *m, es_transient *x)
{
    for (size_t i = x->nrec; i-- > 0;)
        memcpy(es_phys(m, x->rec[i].pa), x->pool + x->rec[i].off, x->rec[i].n);
    memcpy(m->gpr, x->gpr, sizeof x->gpr);
    m->rip = x->rip, m->nrip = x->nrip, m->rflags = x->rflags;
    m->lz_op = x->lz_op, m->lz_a = x->lz_a, m->lz_b = x->lz_b;
    m->cr2 = x->cr2, m->icount = x->icount, m->tsc = x->tsc;
    m->mxcsr = x->mxcsr;
    memcpy(m->xmm, x->xmm, sizeof x->xmm);
    m->fpu = x->fpu;
    memcpy(m->seg, x->seg, sizeof x->seg);
    m->fault = x->fault;
    m->stop = x->stop, m->exit_status = x->exit_status, m->signal = x->signal;
    m->unimpl_op = x->unimpl_op;
    memcpy(m->message, x->message, sizeof m->message);
    m->tlb_bypass = x->tlb_bypass;
    m->spec = NULL;
    es_tlb_flush(m);  /* also drops the fetch shortcut the wrong path moved */
    m->fetch_va = 1;
    free(x->rec);
    free(x->pool);
    free(x);
}
