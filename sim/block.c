/* block.c - the block cache and the loop that threads through it (see
 * block.h).  Decoding once per block and walking an array of handlers
 * replaces the per-instruction hash lookup of the decode cache: on the
 * sieve benchmark that lookup and its bookkeeping were 40% of the time. */
#include "block.h"

#include <stdlib.h>

#include "mem.h"
#include "ops.h"

#define PAGE 4096ull
#define BLOCK_MAX 64u          /* instructions per block */
#define NBLOCKS (1u << 14)     /* blocks before the cache starts over */
#define NBENTS ES_BENT_SLOTS  /* pre-decoded instructions (16 MiB, touched as used) */
#define TAB_BITS 14            /* hash table of blocks by physical address */

struct es_bcache {
    es_block *tab[1u << TAB_BITS];
    uint32_t nblocks, nbents;
    uint32_t epoch;            /* bumped when everything is dropped */
    uint64_t fence_key;        /* the es_fence the blocks were cut by, 0: none */
    es_block blocks[NBLOCKS];
    es_bent bents[NBENTS];
};

void es_blocks_free(es_machine *m)
{
    free(m->bcache);
    m->bcache = NULL;
}

/* Instructions after which a block ends: control transfers, and what
 * changes the mode, the privilege level or the translation of code.  Only
 * an economy: the loop also leaves a block when RIP leaves it or the fetch
 * page is reset, so an instruction missing here still runs right. */
static bool ends_block(const es_insn *d)
{
    switch (d->op) {
    case ES_OP_JMP: case ES_OP_CALL: case ES_OP_RET:
    case ES_OP_IRET: case ES_OP_IRETD: case ES_OP_IRETQ:
    case ES_OP_SYSCALL: case ES_OP_SYSRET: case ES_OP_SYSENTER: case ES_OP_SYSEXIT:
    case ES_OP_INT: case ES_OP_INT1: case ES_OP_INT3: case ES_OP_INTO:
    case ES_OP_HLT: case ES_OP_UD0: case ES_OP_UD1: case ES_OP_UD2:
    case ES_OP_POPF: case ES_OP_POPFD: case ES_OP_POPFQ:
    case ES_OP_VMCALL: case ES_OP_WRMSR: case ES_OP_INVLPG: case ES_OP_LGDT:
    case ES_OP_LIDT: case ES_OP_RSM: case ES_OP_XSETBV:
        return true;
    default: break;
    }
    for (int i = 0; i < d->nops; i++) {
        uint8_t k = d->o[i].kind;
        if (k == ES_OPK_REL || k == ES_OPK_PTR ||
            (d->o[i].write && (k == ES_OPK_CR || k == ES_OPK_SEG || k == ES_OPK_DR)))
            return true;
    }
    return false;
}

/* Generic handlers that neither read nor write the arithmetic flags: a
 * pending lazy record may stay pending across them (moves, the stack, near
 * transfers, string moves; DF is not lazy).  Anything else sees exact
 * flags first. */
static bool flag_free(const es_insn *d)
{
    switch (d->op) {
    case ES_OP_MOV: case ES_OP_MOVZX: case ES_OP_MOVSX: case ES_OP_MOVSXD: case ES_OP_LEA:
    case ES_OP_PUSH: case ES_OP_POP: case ES_OP_NOP: case ES_OP_XCHG: case ES_OP_BSWAP:
    case ES_OP_CDQE: case ES_OP_CWDE: case ES_OP_CDQ: case ES_OP_CQO:
    case ES_OP_CALL: case ES_OP_RET: case ES_OP_JMP:
    case ES_OP_STOSB: case ES_OP_STOSW: case ES_OP_STOSD: case ES_OP_STOSQ:
    case ES_OP_MOVSB: case ES_OP_MOVSW: case ES_OP_MOVSQ:
    case ES_OP_LODSB: case ES_OP_LODSW: case ES_OP_LODSD: case ES_OP_LODSQ:
        return true;
    default:
        return false;
    }
}

static uint32_t slot_of(uint64_t pa)
{
    return (uint32_t)((pa * 0x9e3779b97f4a7c15ull) >> (64 - TAB_BITS));
}

static void drop_all(struct es_bcache *bc)
{
    memset(bc->tab, 0, sizeof bc->tab);
    bc->nblocks = bc->nbents = 0;
    bc->epoch++;
}

/* The tfn of an entry with a generic handler: a threaded chain stops in
 * front of it (the loop runs it, sim/isa/fast.c). */
static int thread_exit(es_machine *m, const es_insn *d)
{
    m->bpos = es_bent_of(d);
    return ES_THREAD_STOP;
}

/* The tfn of the sentinel after a block's last entry: the chain ran it all. */
static int thread_end(es_machine *m, const es_insn *d)
{
    (void)m;
    (void)d;
    return ES_OK;
}

/* Decodes the block at RIP (physical address pa, within the fetch page).
 * NULL when its first instruction does not fit the page or does not
 * decode: the one-instruction path fetches it (and raises what it must). */
static es_block *build(es_machine *m, struct es_bcache *bc, uint64_t pa, uint64_t key)
{
    if (bc->nblocks == NBLOCKS || bc->nbents + BLOCK_MAX + 1 > NBENTS)
        drop_all(bc);
    es_bent *e = &bc->bents[bc->nbents];
    const uint8_t *page = es_phys(m, pa & ~(PAGE - 1));
    if (!page)
        return NULL;
    uint64_t off = pa & (PAGE - 1), rip = m->rip;
    unsigned n = 0;
    while (n < BLOCK_MAX && off < PAGE) {
        size_t avail = PAGE - off < 15 ? PAGE - off : 15;
        if (es_decode(page + off, avail, m->mode, rip, &e[n].insn) != ES_DECODE_OK)
            break;
        if (__builtin_expect(m->fence != NULL, 0) && m->fence->fn(m->fence->ctx, &e[n].insn, rip))
            break; /* an unobserved run stops in front of it (es_run_fenced) */
        e[n].rip = rip;
        e[n].idx = n;
        e[n].slot = (uint32_t)(e + n - bc->bents);
        e[n].epoch = bc->epoch;
        uint64_t next = (rip + e[n].insn.len) & m->ipmask;
        e[n].next = next;
        es_handler generic = m->handlers[e[n].insn.op];
        e[n].fn1 = es_fast_handler(&e[n].insn, generic);
        e[n].lazy = e[n].fn1 != generic;
        e[n].sync = !e[n].lazy && !flag_free(&e[n].insn);
        e[n].may_enter = es_may_enter(e[n].insn.op);
        off += e[n].insn.len;
        n++;
        bool wrapped = next < rip; /* EIP wrapped: the page goes on, RIP does not */
        rip = next;
        if (ends_block(&e[n - 1].insn) || wrapped)
            break;
    }
    if (n == 0)
        return NULL;
    /* a Jcc ends its block: a compare right before it can run with it */
    es_handler fused = n >= 2 ? es_fast_fuse(&e[n - 2].insn, e[n - 2].fn1, &e[n - 1].insn,
                                             e[n - 1].fn1)
                              : NULL;
    for (unsigned i = 0; i < n; i++)
        e[i].tfn = e[i].lazy ? es_fast_threaded(e[i].fn1) : thread_exit;
    if (fused)
        e[n - 2].tfn = fused;
    e[n] = (es_bent){.tfn = thread_end, .rip = rip, .next = rip, .idx = n}; /* the sentinel */
    es_frame *f = &m->frames[pa >> 12];
    if (!f->has_code) {
        uint64_t va = m->fetch_va;
        f->has_code = 1;
        es_tlb_flush(m); /* drop write permission cached for this page */
        m->fetch_va = va;
    }
    m->decodes += n;
    es_block *b = &bc->blocks[bc->nblocks++];
    bc->nbents += n + 1;
    *b = (es_block){.key = key, .rip = m->rip, .end = rip, .pfn = pa >> 12, .gen = f->code_gen,
                    .stamp = m->code_stamp, .n = n, .ins = e};
    bc->tab[slot_of(pa)] = b;
    return b;
}

/* The block at RIP: the chained candidate when still valid, else from the
 * table, else decoded.  Returns ES_OK with *out set (NULL: no block here),
 * or ES_FAULT when the code page does not translate. */
static int block_at(es_machine *m, struct es_bcache *bc, es_block *cand, es_block **out)
{
    uint64_t lin = (m->rip + m->seg[ES_SEG_CS].base) & m->ipmask;
    if ((lin & ~(PAGE - 1)) != m->fetch_va) {
        if (es_fetch_set(m, lin))
            return ES_FAULT;
        cand = NULL; /* a translation made now: the table decides */
    }
    uint64_t pa = m->fetch_pa | (lin & (PAGE - 1));
    uint64_t key = (pa << 1) | m->mode;
    es_block *b = cand;
    if (!b || b->key != key || b->rip != m->rip) {
        b = bc->tab[slot_of(pa)];
        if (!b || b->key != key || b->rip != m->rip)
            b = NULL;
    }
    if (b && b->stamp != m->code_stamp) { /* some code was written since b was checked */
        if (b->gen != m->frames[b->pfn].code_gen)
            b = NULL;
        else
            b->stamp = m->code_stamp;
    }
    *out = b ? b : build(m, bc, pa, key);
    return ES_OK;
}

/* Whether a handler's status other than ES_OK retired its instruction:
 * only generic handlers yield or stop, and an exit retires */
static inline bool retires(const es_machine *m, int rc)
{
    return rc == ES_YIELD || (rc == ES_STOP && m->stop == ES_STOP_EXIT);
}

/* Runs entry e, whose handler is a generic one, as es_step would: RIP,
 * the next RIP and the count it may read, exact flags if it uses them.
 * Returns its status, m->rip moved on when it retired. */
static inline int run_generic(es_machine *m, const es_bent *e, uint64_t ic0)
{
    m->rip = e->rip;
    m->nrip = e->next;
    m->icount = ic0 + e->idx;
    if (e->sync && m->lz_op != ES_LZ_NONE) /* a handler using RFLAGS eagerly */
        es_lazy_flush(m);
    int rc = e->fn1(m, &e->insn);
    if (rc == ES_OK || retires(m, rc))
        m->rip = m->nrip;
    return rc;
}

/* Runs b's instructions from the first up to end, each alone (no fused
 * pair, no threading: for a budget ending inside the block).  Returns the
 * status of the last one run, having retired what retired (as es_step
 * would) and taken them off *left.
 *
 * RIP and the instruction count are written only where someone can look:
 * before a generic handler (which may read them, or push RIP), on a fault
 * (which records the faulting instruction's RIP) and on the way out.  A
 * fast.c handler reads neither, and changes m->nrip only as the Jcc that
 * ends its block, so between two of them there is nothing to keep. */
static int run_entries(es_machine *m, const es_block *b, const es_bent *end, uint64_t *left)
{
    uint64_t fva = m->fetch_va, ic0 = m->icount;
    const es_bent *e = b->ins;
    int rc;
    for (;;) {
        m->nrip = e->next;
        if (e->lazy) {
            rc = e->fn1(m, &e->insn);
            if (rc != ES_OK) { /* a fault: nothing retired */
                m->rip = m->fault.rip = e->rip;
                break;
            }
            /* a memory access may have reset the fetch page */
            if (++e == end || m->fetch_va != fva)
                break;
            continue;
        }
        if ((rc = run_generic(m, e, ic0)) != ES_OK) {
            e += retires(m, rc);
            break;
        }
        /* RIP left the block (a branch) or the code's translation, mode or
         * bytes may have changed (the fetch page was reset) */
        if (++e == end || m->nrip != e[-1].next || m->fetch_va != fva)
            break;
    }
    if (rc == ES_OK)
        m->rip = m->nrip;
    m->icount = ic0 + e->idx;
    *left -= e->idx;
    return rc;
}

/* Runs all of b (it fits the budget): runs of fast entries through their
 * threaded chain, generic entries one by one in between.  Returns as
 * run_entries does. */
static int run_whole(es_machine *m, const es_block *b, uint64_t *left)
{
    uint64_t fva = m->fetch_va, ic0 = m->icount;
    const es_bent *e = b->ins, *end = b->ins + b->n;
    int rc;
    for (;;) {
        if (__builtin_expect(e->lazy, 1)) {
            m->nrip = b->end; /* the fall-through, unless a Jcc says otherwise */
            rc = e->tfn(m, &e->insn);
            if (__builtin_expect(rc == ES_OK, 1)) { /* to the end (or the branch ending it) */
                e = end;
                m->rip = m->nrip;
                break;
            }
            e = m->bpos;
            if (rc == ES_FAULT) /* RIP is the faulting instruction */
                break;
            rc = ES_OK; /* ES_THREAD_STOP: at a generic entry, or after a reset */
            if (m->fetch_va != fva) { /* a memory access reset the fetch page */
                m->rip = e->rip;
                break;
            }
        }
        if (__builtin_expect((rc = run_generic(m, e, ic0)) != ES_OK, 0)) {
            e += retires(m, rc);
            break;
        }
        if (++e == end || m->nrip != e[-1].next || m->fetch_va != fva)
            break;
    }
    m->icount = ic0 + e->idx;
    *left -= e->idx;
    return rc;
}

/* The before and retire hooks of the observers, gathered once per es_run
 * batch and again if the number of observers changed: every observer's, and (loud)
 * those of the observers that are not es_observer.user_quiet, for the
 * user instructions the quiet ones only count. */
typedef struct hookset {
    int nb, nr;
    void (*before[ES_MAX_OBSERVERS])(void *, es_machine *, const es_insn *, uint64_t);
    void (*retire[ES_MAX_OBSERVERS])(void *, es_machine *, const es_insn *, uint64_t);
    void *bctx[ES_MAX_OBSERVERS], *rctx[ES_MAX_OBSERVERS];
} hookset;

typedef struct hooks {
    hookset all, loud;
    int nobs; /* m->nobs when gathered (-1: not yet) */
    int nq;   /* quiet observers */
    void (*user_run[ES_MAX_OBSERVERS])(void *, es_machine *, uint64_t);
    void *qctx[ES_MAX_OBSERVERS];
} hooks;

static void add_hooks(hookset *h, const es_observer *o)
{
    if (o->before) {
        h->before[h->nb] = o->before;
        h->bctx[h->nb++] = o->ctx;
    }
    if (o->retire) {
        h->retire[h->nr] = o->retire;
        h->rctx[h->nr++] = o->ctx;
    }
}

static inline void gather(const es_machine *m, hooks *h)
{
    h->all.nb = h->all.nr = h->loud.nb = h->loud.nr = h->nq = 0;
    h->nobs = m->nobs;
    for (int i = 0; i < m->nobs; i++) {
        const es_observer *o = &m->obs[i];
        add_hooks(&h->all, o);
        if (o->user_quiet && o->user_run) {
            h->user_run[h->nq] = o->user_run;
            h->qctx[h->nq++] = o->ctx;
        } else {
            add_hooks(&h->loud, o);
        }
    }
}

/* The quiet observers learn of the n user instructions they were not told. */
static void tell_quiet(es_machine *m, const hooks *h, uint64_t *n)
{
    if (!*n)
        return;
    for (int i = 0; i < h->nq; i++)
        h->user_run[i](h->qctx[i], m, *n);
    *n = 0;
}

/* With observers (all es_observer.blocks): b's instructions up to end one
 * by one, each told to them as es_step tells it -- before the handler with
 * RIP and the count at the instruction, after it (when it retired) with
 * RIP at the next one and the count moved on; user instructions that
 * cannot enter the kernel are counted for the user_quiet observers
 * instead (told before anything else is).  Fast handlers keep their lazy
 * flag record (the observers read no flag); no threading, no fused pair,
 * since each instruction is told apart.  Returns as run_entries. */
static int run_told(es_machine *m, const es_block *b, const es_bent *end, uint64_t *left,
                    hooks *hp)
{
    uint64_t fva = m->fetch_va, ic0 = m->icount, quiet = 0;
    const es_bent *e = b->ins;
    int rc;
    if (hp->nobs != m->nobs)
        gather(m, hp);
    const hooks *h = hp;
    m->obs_bent = true;
    for (;;) {
        m->rip = e->rip;
        m->icount = ic0 + e->idx;
        bool q = h->nq && m->cpl == 3 && !e->may_enter;
        const hookset *hs = q ? &h->loud : &h->all;
        if (!q)
            tell_quiet(m, h, &quiet);
        for (int i = 0; i < hs->nb; i++)
            hs->before[i](hs->bctx[i], m, &e->insn, e->rip);
        m->nrip = e->next;
        if (e->sync && m->lz_op != ES_LZ_NONE)
            es_lazy_flush(m);
        rc = e->fn1(m, &e->insn);
        if (__builtin_expect(rc == ES_FAULT, 0)) { /* nothing retired */
            if (e->lazy) /* a fast handler knows no RIP; a generic one raised at it */
                m->rip = m->fault.rip = e->rip;
            break;
        }
        if (rc != ES_OK && !retires(m, rc))
            break; /* a stop that did not retire */
        m->rip = m->nrip;
        m->icount = ic0 + e->idx + 1;
        quiet += q;
        for (int i = 0; i < hs->nr; i++)
            hs->retire[i](hs->rctx[i], m, &e->insn, e->rip);
        if (rc != ES_OK) {
            e++;
            break;
        }
        if (++e == end || m->nrip != e[-1].next || m->fetch_va != fva)
            break;
    }
    tell_quiet(m, h, &quiet);
    m->obs_bent = false;
    m->icount = ic0 + e->idx;
    *left -= e->idx;
    return rc;
}

/* Runs b's instructions, at most *left of them: the whole block threaded
 * only when it fits (a budget ending inside runs them one by one, the
 * fused compare and Jcc apart, so --max-insns stays exact). */
static int run_block(es_machine *m, const es_block *b, uint64_t *left, hooks *h)
{
    if (m->nobs)
        return run_told(m, b, b->ins + (b->n <= *left ? b->n : *left), left, h);
    if (b->n <= *left)
        return run_whole(m, b, left);
    return run_entries(m, b, b->ins + *left, left);
}

/* The successor of b, which just ran whole with the fetch page untouched,
 * when it can be taken without block_at: a same-page link (b->near, set
 * only between blocks of one linear page with a zero CS base, so the
 * translation b was checked under covers it and RIP is its linear offset),
 * at the RIP it starts at, with no code written since it was checked. */
static inline es_block *near_successor(const es_machine *m, const es_block *b, int way)
{
    es_block *nb = b->near[way];
    if (nb && nb->rip == m->rip && nb->stamp == m->code_stamp && m->seg[ES_SEG_CS].base == 0)
        return nb;
    return NULL;
}

static int blocks_run(es_machine *m, uint64_t budget, es_one_insn one)
{
    struct es_bcache *bc = m->bcache;
    if (!bc && !(bc = m->bcache = calloc(1, sizeof *bc))) {
        for (; budget; budget--) { /* no memory for blocks: one by one */
            int rc = one(m);
            if (rc != ES_OK)
                return rc;
        }
        return ES_OK;
    }
    uint64_t fkey = m->fence ? m->fence->key : 0;
    if (__builtin_expect(bc->fence_key != fkey, 0)) { /* cut by another fence */
        drop_all(bc);
        bc->fence_key = fkey;
    }
    hooks h = {.nobs = -1};
    es_block *prev = NULL, *b = NULL;
    uint64_t pfva = 1; /* the fetch page prev ran on */
    int way = 0;
    for (uint64_t left = budget; left;) {
        /* RFLAGS.TF with observers: es_step takes the single-step traps
         * (the plain loop's callers check it per batch) */
        if (m->nobs && (m->rflags & ES_TF))
            return ES_YIELD;
        if (!b) {
            uint32_t epoch = bc->epoch;
            int rc = block_at(m, bc, prev ? prev->succ[way] : NULL, &b);
            if (rc != ES_OK)
                return rc;
            if (!b) { /* an instruction across the page end, or one that does not decode */
                prev = NULL;
                es_lazy_sync(m);
                if ((rc = one(m)) != ES_OK)
                    return rc;
                left--;
                continue;
            }
            if (prev && bc->epoch == epoch) {
                prev->succ[way] = b;
                if (m->fetch_va == pfva && m->seg[ES_SEG_CS].base == 0)
                    prev->near[way] = b; /* same linear page, same translation */
            }
        }
        uint64_t before = left, fva = m->fetch_va;
        int rc = run_block(m, b, &left, &h);
        if (rc != ES_OK)
            return rc;
        way = m->rip != b->end;
        /* chain only after the whole block ran and nothing reset the fetch page */
        if (before - left != b->n || m->fetch_va != fva) {
            prev = b = NULL;
            continue;
        }
        es_block *nb = near_successor(m, b, way);
        prev = b;
        pfva = fva;
        b = nb;
    }
    return ES_OK;
}

int es_blocks_run(es_machine *m, uint64_t budget, es_one_insn one)
{
    int rc = blocks_run(m, budget, one);
    /* every way out: faults, stops, the budget; whoever looks next (the
     * fault delivery, the debugger, a state dump) sees exact RFLAGS */
    es_lazy_sync(m);
    return rc;
}
