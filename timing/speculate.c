/* speculate.c - wrong-path execution (`--speculate`): what the front end
 * fetched past a conditional branch the predictor got wrong runs until the
 * branch resolves, then is squashed.
 *
 * When retire_insn (model.c) costs a mispredicted conditional branch, the
 * path the predictor chose is executed transiently (sim/transient.h: no
 * observer sees it, no fault is delivered, every register and byte of
 * memory comes back).  Its timing is a small dataflow model on top of the
 * real one: instruction i of the window dispatches at the branch's
 * dispatch cycle + i / dispatch width; it starts when its source registers
 * are ready (the model's ready times of the registers at the branch, then
 * the window's own results); a load's data comes after the latency of the
 * level that holds its line.  What starts before the branch resolves (its
 * flags ready, f.result) happens: a load fills the caches it misses in --
 * the state a Flush+Reload probe reads afterwards.  What would start later
 * never executes.  The window ends at the resolve cycle, after
 * rob_entries instructions, at a fault (suppressed, as the squash
 * suppresses it on hardware), and before any serialising or privileged
 * instruction (the model's `priv` classes: LFENCE, CPUID, SYSCALL, VMCALL,
 * ... -- LFENCE is the speculation barrier of Intel's and AMD's guidance)
 * or CLFLUSH.
 *
 * Not modelled: nested mispredictions inside the window (its branches go
 * the way their transient operands say), indirect-branch and return
 * mispredictions (Spectre v2/RSB), and loads that fault yet forward data
 * (Meltdown).
 */
#include <string.h>

#include "mem.h"
#include "tm_int.h"
#include "transient.h"

typedef struct spec_run {
    es_timing *t;
    uint64_t t0, resolve;
    uint32_t n, width, max;
    uint64_t ready[TR_COUNT];
} spec_run;

/* The cache level holding pa: its latency; the line is filled on the way
 * (a wrong-path load's lasting effect). */
static uint32_t spec_load(es_timing *t, uint64_t pa)
{
    const tm_uarch *u = &t->u;
    if (tm_cache_access(&t->l1d, pa))
        return u->l1d.latency;
    t->st.spec_fills++;
    if (tm_cache_access(&t->l2, pa))
        return u->l2.latency;
    if (tm_cache_access(&t->l3, pa))
        return u->l3.latency;
    return u->mem_latency;
}

static uint64_t spec_ready(const spec_run *r, uint64_t mask)
{
    uint64_t v = 0;
    for (; mask; mask &= mask - 1)
        v = max64(v, r->ready[__builtin_ctzll(mask)]);
    return v;
}

/* es_transient_pre: times the instruction about to run on the wrong path
 * and performs its cache accesses; false ends the window before it. */
static bool spec_pre(void *ctx, es_machine *m, const es_insn *d)
{
    spec_run *r = ctx;
    es_timing *t = r->t;
    const tm_sinfo *s = tm_sinfo_of(t, m, d, m->rip);
    uint64_t dsp = r->t0 + 1 + r->n / r->width;
    if (r->n >= r->max || dsp >= r->resolve || s->priv != TP_NONE || d->op == ES_OP_CLFLUSH ||
        d->op == ES_OP_CLFLUSHOPT)
        return false;
    /* a long REP string is far more uops than any window holds (and its
     * stores would all be logged): the window ends before it */
    if ((d->pfx & (ES_PFX_REP | ES_PFX_REPNE)) && m->gpr[ES_RCX] > 512)
        return false;
    r->n++;
    t->st.spec_insns++;
    uint64_t start = max64(dsp, spec_ready(r, s->src | s->addr));
    uint64_t done = UINT64_MAX; /* never: squashed before it could start */
    es_spec_insn shown = {m->rip, start < r->resolve, UINT64_MAX};
    if (start < r->resolve) {
        done = start + (s->cost.lat ? s->cost.lat : 1);
        if (s->load && s->memkind != TM_NOADDR) {
            uint64_t ea = s->memkind == TM_EXPLICIT
                              ? tm_linear_of(m, d, &d->o[s->memop])
                              : m->gpr[ES_RSP] - (s->memkind == TM_PUSH ? s->msize : 0);
            uint64_t pa;
            if (es_walk_read(m, ea, m->cpl == 3, &pa) &&
                !(m->cpl == 3 && es_transient_meltdown(m) && !es_walk_read(m, ea, false, &pa)))
                return false; /* it would fault: nothing past it runs */
            uint64_t fills = t->st.spec_fills;
            done = start + spec_load(t, pa) + s->oplat;
            if (t->st.spec_fills != fills)
                shown.filled = ea & ~63ull;
        }
    }
    if (t->spec_fn)
        t->spec_fn(t->spec_ctx, &shown);
    for (uint64_t w = s->dst; w; w &= w - 1)
        r->ready[__builtin_ctzll(w)] = done;
    return true;
}

void tm_speculate(es_timing *t, es_machine *m, uint64_t from, uint64_t dsp, uint64_t resolve)
{
    if (from == UINT64_MAX || resolve <= dsp + 1)
        return;
    es_transient *x = es_transient_begin(m, from);
    if (!x)
        return;
    /* the Intel cores --cpu intel stands for (Skylake: tables/uarch) read
     * supervisor data on the wrong path before the permission check
     * (Meltdown, CVE-2017-5754); AMD's do not (AMD's 2018 statement) */
    es_transient_set_meltdown(x, m->vendor == 0);
    spec_run r = {.t = t, .t0 = dsp, .resolve = resolve,
                  .width = t->u.dispatch_width ? t->u.dispatch_width : 1,
                  .max = t->u.rob_entries};
    memcpy(r.ready, t->ready, sizeof r.ready);
    t->st.spec_windows++;
    while (es_step_transient(m, spec_pre, &r) == ES_OK)
        ;
    es_transient_end(m, x);
    if (t->spec_fn)
        t->spec_fn(t->spec_ctx, NULL);
}
