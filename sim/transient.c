/* transient.c - see transient.h. */
#include "transient.h"

#include <stdlib.h>
#include <string.h>

#include "mem.h"
#include "ops.h"

typedef struct es_srec {
    uint64_t pa;
    uint32_t n, off; /* old bytes at pool[off..off+n) */
} es_srec;

/* The machine's fields a wrong path may change (it never changes
 * privilege, control registers or MSRs: es_step_transient's caller stops
 * it before any instruction that would); saved and restored from this
 * one list. */
#define SPEC_FIELDS(X)                                                                             \
    X(gpr) X(rip) X(nrip) X(rflags) X(lz_op) X(lz_a) X(lz_b) X(cr2) X(icount) X(tsc) X(mxcsr)   \
    X(xmm) X(ymmh) X(fpu) X(seg) X(fault) X(stop) X(exit_status) X(signal) X(unimpl_op) X(tlb_bypass)   \
    X(message) X(obs_bent)

struct es_transient {
#define DECL(f) __typeof__(((es_machine *)0)->f) f;
    SPEC_FIELDS(DECL)
#undef DECL
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
#define SAVE(f) memcpy(&x->f, &m->f, sizeof x->f);
    SPEC_FIELDS(SAVE)
#undef SAVE
    /* a window opened from a block's observer: the wrong path's handlers
     * read RFLAGS eagerly, and its decodes are the decode cache's */
    es_lazy_sync(m);
    m->obs_bent = false;
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
#define RESTORE(f) memcpy(&m->f, &x->f, sizeof m->f);
    SPEC_FIELDS(RESTORE)
#undef RESTORE
    m->spec = NULL;
    es_tlb_flush(m);  /* also drops the fetch shortcut the wrong path moved */
    m->fetch_va = 1;
    free(x->rec);
    free(x->pool);
    free(x);
}
