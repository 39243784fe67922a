/* block.h - the block cache of es_run's plain loop (no observers, RFLAGS.TF
 * clear): basic blocks of pre-decoded instructions with their handlers,
 * keyed by the physical address and mode of their first byte, executed by
 * threading through the array (each fast handler calls the next entry's,
 * sim/isa/fast.c) and chained to their successors.
 *
 * Validity: a block holds the decodes of one page (it never crosses one);
 * it is used while that frame's code_gen is the one it was decoded under
 * and RIP is the one its relative targets were resolved against.  A
 * successor pointer is followed only when the page of the new RIP is the
 * translated fetch page (m->fetch_va), which everything that can change
 * the code's translation or bytes resets (TLB flushes, mode changes, a
 * store to a page holding code): the same rule the one-instruction fetch
 * of es_step uses, so both see the same instructions.
 */
#ifndef ENTRYSIM_BLOCK_H
#define ENTRYSIM_BLOCK_H

#include <stddef.h>

#include "machine.h"

/* One pre-decoded instruction of a block. */
typedef struct es_bent {
    es_handler tfn; /* threaded (sim/isa/fast.c): runs this and tail-calls the next; in
                       a fused block's second-to-last entry, this and the Jcc after it */
    es_handler fn1; /* this instruction alone */
    uint64_t rip;   /* its own RIP */
    uint64_t next;  /* RIP of the instruction after it (rip + len) */
    uint32_t idx;   /* its index in the block (the sentinel's: n) */
    uint32_t slot;  /* its index in the cache's entries (es_bent_slot) */
    uint32_t epoch; /* the cache's epoch when it was decoded */
    bool lazy;      /* fn1 is one of sim/isa/fast.c's: it keeps a lazy flag record,
                       reads neither RIP nor the instruction count, and only a
                       Jcc (always last in its block) writes m->nrip */
    bool sync;      /* a generic fn1 that may read or write the arithmetic flags:
                       a pending lazy record is computed before it */
    bool may_enter; /* es_may_enter(insn.op): told to user_quiet observers at CPL 3 */
    es_insn insn;
} es_bent;

/* What a threaded chain returns when it stops before the end of its block
 * without a fault (at m->bpos: a generic entry, or the one after a memory
 * access that reset the fetch page).  Never leaves es_blocks_run. */
#define ES_THREAD_STOP 16

/* The entry holding d, and the one after it (sim/isa/fast.c). */
static inline const es_bent *es_bent_of(const es_insn *d)
{
    return (const es_bent *)(const void *)((const char *)d - offsetof(es_bent, insn));
}

static inline const es_bent *es_bent_after(const es_insn *d)
{
    return es_bent_of(d) + 1;
}

/* Entries the block cache holds at most (sim/block.c). */
#define ES_BENT_SLOTS (1u << 17)

/* For an observer told of d while m->obs_bent is set: the slot of its block
 * entry (< ES_BENT_SLOTS) and a tag, nonzero, that differs whenever the
 * slot is decoded again, so per-instruction data an observer derives from
 * d can be cached by slot (the cycle model's static information). */
static inline uint32_t es_bent_slot(const es_insn *d, uint64_t *tag)
{
    const es_bent *e = es_bent_of(d);
    *tag = (uint64_t)e->epoch + 1;
    return e->slot;
}

typedef struct es_block {
    uint64_t key;    /* (pa << 1) | mode of the first byte */
    uint64_t rip;    /* RIP of the first instruction */
    uint64_t end;    /* RIP after the last one: the fall-through successor */
    uint64_t pfn;    /* the page's frame */
    uint32_t gen;    /* its code_gen when decoded */
    uint64_t stamp;  /* m->code_stamp when gen was last found current */
    uint32_t n;      /* instructions, >= 1 */
    es_bent *ins;    /* its n entries, then a sentinel ending a threaded chain */
    struct es_block *succ[2]; /* chained successors: [0] fall-through, [1] taken */
    struct es_block *near[2]; /* the same, when on the same linear page (sim/block.c) */
} es_block;

/* Runs at most budget instructions of the plain loop through blocks (an
 * instruction no block can hold goes through `one`, es_step's fetch and
 * dispatch without observers).  Returns ES_OK when the budget ran out, else
 * the first other status: ES_FAULT with m->rip at the faulting instruction
 * (which did not retire), ES_YIELD and ES_STOP as es_step leaves them.
 *
 * Arithmetic flags may be lazy inside (m->lz_op, sim/ops.h): they are
 * computed before any handler but sim/isa/fast.c's runs, before `one`, and
 * before this returns, so no other code ever sees a pending record. */
typedef int (*es_one_insn)(es_machine *m);
int es_blocks_run(es_machine *m, uint64_t budget, es_one_insn one);

void es_blocks_free(es_machine *m);

/* A handler running the compare d and the Jcc j after it in one call
 * (sim/isa/fast.c), or NULL when their forms have none. */
es_handler es_fast_fuse(const es_insn *d, es_handler fn, const es_insn *j, es_handler jfn);

/* The threaded form of fast handler fn (sim/isa/fast.c): fn itself for a
 * Jcc, which ends its block. */
es_handler es_fast_threaded(es_handler fn);

/* Makes the page of linear address lin the fetch page (m->fetch_va and the
 * fields after it, sim/cpu.c); 0, or -1 with the fault recorded. */
int es_fetch_set(es_machine *m, uint64_t lin);

#endif
