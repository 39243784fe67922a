/* cpu.c - machine lifetime, observers, the fetch/decode/dispatch loop and
 * the dispatch table (generated from isa/isa.tbl): the top of the machine.
 * It calls down into mem/vm/seg/priv and the instruction families; the
 * state of the layers above it (host services, the guest kernel) is freed
 * through the hooks they install (m->hooks), so this file includes none of
 * their headers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>

#include "block.h"
#include "fault.h"
#include "mem.h"
#include "ops.h"
#include "priv.h"
#include "seg.h"
#include "vm.h"

#define PAGE 4096ull
#define DEFAULT_MEM_CAP (1ull << 30)
/* Guest physical address space: frames are materialised on demand, so this
 * only sizes the bookkeeping array (8 bytes + meta per 4 KiB). */
#define MAX_PHYS (64ull << 30)
/* Frames are handed out from 1 upwards and recycled, so the frame table
 * needs only as many slots as the cap allows (plus frame 0), and room
 * beyond them for the guest kernel's frames (es_kernel_grow_frames:
 * the image's pages, their page tables, PTI's pair; ~150 for the embedded
 * images): the table grows into it instead of being copied, every page of
 * it touched, which for a short run cost more than the run. */
#define KERNEL_FRAMES_ROOM 512

/* ---- dispatch table ---- */

/* es_dispatch is const data generated from isa/isa.tbl (gen_isa.py):
 * nothing to build at run time. */
const es_handler *es_dispatch_table(void)
{
    return es_dispatch;
}

static void fault_stop(es_machine *m)
{
    es_fault_report(m, m->fault.vector, m->fault.error, m->fault.addr, m->fault.rip);
}

/* ---- the decode cache's memory ---- */

#define DC_SIZE (1u << ES_DCACHE_BITS)

/* Arenas of guest frames kept (sim/mem.c), at most: a short run uses one. */
#define SPARE_ARENAS 8

struct es_spares {
    es_dentry *dcache; /* a decode cache all zero, as calloc makes one, or NULL */
    uint64_t *dc_used; /* its bitmap, all clear */
    void *arenas[SPARE_ARENAS]; /* arenas all zero, as mmap makes them */
    size_t narenas;
};

void *es_spares_take_arena(es_spares *s)
{
    return s && s->narenas ? s->arenas[--s->narenas] : NULL;
}

bool es_spares_keep_arena(es_spares *s, void *arena)
{
    if (!s || s->narenas == SPARE_ARENAS)
        return false;
    s->arenas[s->narenas++] = arena;
    return true;
}

es_spares *es_spares_new(void)
{
    return calloc(1, sizeof(es_spares));
}

void es_spares_free(es_spares *s)
{
    if (!s)
        return;
    free(s->dcache);
    free(s->dc_used);
    while (s->narenas)
        es_mem_unmap_arena(s->arenas[--s->narenas]);
    free(s);
}

/* m's decode cache: s's spare, or a new one.  0, or -1 out of memory. */
static int dcache_new(es_machine *m, es_spares *s)
{
    m->spares = s;
    if (s && s->dcache) {
        m->dcache = s->dcache;
        m->dc_used = s->dc_used;
        s->dcache = NULL;
        s->dc_used = NULL;
        return 0;
    }
    m->dcache = calloc(DC_SIZE, sizeof *m->dcache);
    m->dc_used = calloc(DC_SIZE / 64, sizeof *m->dc_used);
    return m->dcache && m->dc_used ? 0 : -1;
}

/* Leaves m's decode cache to m->spares when it has none, all zero again:
 * only the entries m wrote are cleared (a short run writes a few hundred
 * of the 65536).  Else frees it. */
static void dcache_free(es_machine *m)
{
    es_spares *s = m->spares;
    if (!s || s->dcache || !m->dcache || !m->dc_used) {
        free(m->dcache);
        free(m->dc_used);
        return;
    }
    for (size_t w = 0; w < DC_SIZE / 64; w++) {
        for (uint64_t b = m->dc_used[w]; b; b &= b - 1)
            memset(&m->dcache[w * 64 + (size_t)__builtin_ctzll(b)], 0, sizeof *m->dcache);
        m->dc_used[w] = 0;
    }
    s->dcache = m->dcache;
    s->dc_used = m->dc_used;
}

/* ---- lifetime ---- */

es_machine *es_machine_new(uint64_t mem_cap)
{
    return es_machine_new_spared(mem_cap, NULL);
}

es_machine *es_machine_new_spared(uint64_t mem_cap, es_spares *s)
{
    es_machine *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->mem_cap = mem_cap ? mem_cap : DEFAULT_MEM_CAP;
    m->nframes = m->mem_cap / PAGE + 2;
    if (m->nframes > MAX_PHYS / PAGE)
        m->nframes = MAX_PHYS / PAGE;
    m->frames_room = m->nframes + KERNEL_FRAMES_ROOM;
    m->frames = calloc(m->frames_room, sizeof *m->frames);
    if (!m->frames || dcache_new(m, s)) {
        es_machine_free(m);
        return NULL;
    }
    m->next_free_pfn = 1; /* frame 0 means "none" */
    m->handlers = es_dispatch_table();
    m->rflags = 0x202;
    m->mxcsr = 0x1f80;
    m->fpu.fcw = 0x37f;
    m->fpu.ftw = 0xffff;
    m->cr0 = 0x80050033; /* PG, AM, WP, NE, ET, MP, PE as Linux runs */
    m->cr4 = 0x406f0;    /* PAE, MCE, PGE, OSFXSR, OSXMMEXCPT, OSXSAVE as Linux runs */
    m->efer = 0xd01;     /* SCE, LME, LMA, NXE */
    m->xcr0 = 7;         /* x87 | SSE | AVX, as Linux sets it */
    if (getrandom(&m->rng, sizeof m->rng, 0) != sizeof m->rng)
        m->rng = (uint64_t)es_now_ns() * 0x9e3779b97f4a7c15ull;
    /* raw descriptors as Linux's GDT_ENTRY_INIT values (arch/x86/kernel/cpu/common.c) */
    m->gdt[1] = 0x00cf9b000000ffffull; /* KERNEL32_CS */
    m->gdt[2] = 0x00af9b000000ffffull; /* KERNEL_CS: L=1 */
    m->gdt[3] = 0x00cf93000000ffffull; /* KERNEL_DS */
    m->gdt[4] = 0x00cffb000000ffffull; /* USER32_CS: D=1, DPL3 */
    m->gdt[5] = 0x00cff3000000ffffull; /* USER_DS */
    m->gdt[6] = 0x00affb000000ffffull; /* USER_CS: L=1, DPL3 */
    es_tlb_flush(m);
    es_set_mode(m, 3, ES_MODE_64);
    return m;
}

void es_machine_free(es_machine *m)
{
    if (!m)
        return;
    /* the layers above free their own state (installed when they made it) */
    if (m->hooks.free_host)
        m->hooks.free_host(m);
    if (m->hooks.free_kernel)
        m->hooks.free_kernel(m);
    es_vm_free(m);
    es_mem_free(m);
    free(m->frames);
    free(m->free_pfns);
    dcache_free(m);
    es_blocks_free(m);
    free(m);
}

int es_observe(es_machine *m, const es_observer *o)
{
    if (m->nobs >= ES_MAX_OBSERVERS)
        return -1;
    m->obs[m->nobs++] = *o;
    if (o->mem) {
        m->tlb_bypass = true;
        es_tlb_flush(m);
    }
    return 0;
}

void es_observe_kcopy(es_machine *m, uint64_t dst, uint64_t src, size_t n)
{
    for (int i = 0; i < m->nobs; i++)
        if (m->obs[i].kcopy)
            m->obs[i].kcopy(m->obs[i].ctx, m, dst, src, n);
}

void es_unobserve_all(es_machine *m)
{
    m->nobs = 0;
    m->tlb_bypass = false;
}

/* ---- fetch and decode ---- */

int es_fetch_set(es_machine *m, uint64_t lin)
{
    uint64_t pa;
    if (es_fetch_page(m, lin, &pa))
        return -1;
    m->fetch_va = lin & ~(PAGE - 1);
    m->fetch_pa = pa;
    m->fetch_frame = &m->frames[pa >> 12];
    /* offsets within a page stay adjacent in the cache; pages scatter by a
     * multiplicative hash of the frame number (computed once per page
     * change, not per instruction), so code at power-of-two distances does
     * not collide */
    m->fetch_hash = pa + (((pa >> 12) * 0x9e3779b1u) >> 8);
    m->fetch_key = (pa << 1) | m->mode;
    return 0;
}

/* Returns the decoded instruction at RIP, decoding on a cache miss; NULL
 * with a fault recorded when the fetch or the decode fails. */
static es_dentry *fetch(es_machine *m)
{
    uint64_t lin = (m->rip + m->seg[ES_SEG_CS].base) & m->ipmask;
    if ((lin & ~(PAGE - 1)) != m->fetch_va && es_fetch_set(m, lin))
        return NULL;
    uint64_t off = lin & (PAGE - 1);
    uint64_t key = m->fetch_key + (off << 1);
    size_t idx = (m->fetch_hash + off) & (DC_SIZE - 1);
    es_dentry *e = &m->dcache[idx];
    es_frame *f = m->fetch_frame;
    if (__builtin_expect(e->key == key && e->gen == f->code_gen, 1))
        return e;
    m->dc_used[idx / 64] |= 1ull << (idx % 64); /* written below, whatever the outcome */

    uint8_t buf[16];
    /* a fault fetching a later page stands only if the decoder needs its
     * bytes (an instruction running into a page it may not execute: #PF
     * with CR2 at that page) */
    m->fault.vector = 0xff;
    size_t got = es_fetch_bytes(m, lin, buf, 15);
    if (got == 0)
        return NULL;
    es_dentry *out = e;
    int st = es_decode(buf, got, m->mode, m->rip, &out->insn);
    if (st == ES_DECODE_NEED_MORE) {
        if (m->fault.vector == 0xff) /* bytes ran out at the end of memory */
            es_raise(m, ES_VEC_UD, 0);
        return NULL; /* the #PF of the next page stands */
    }
    if (st != ES_DECODE_OK) {
        out->key = 0;
        m->unimpl_op = 0;
        es_raise(m, ES_VEC_UD, 0);
        return NULL;
    }
    m->decodes++;
    bool crosses = (lin & (PAGE - 1)) + out->insn.len > PAGE;
    if (crosses) {
        /* bytes from two pages: keep it out of the cache (a write to the
         * second page could not invalidate it) */
        m->dscratch.insn = out->insn;
        out->key = 0;
        out = &m->dscratch;
    } else {
        if (!f->has_code) {
            f->has_code = 1;
            es_tlb_flush(m); /* drop write permission cached for this page */
            m->fetch_va = lin & ~(PAGE - 1);
        }
        out->key = key;
        out->gen = f->code_gen;
    }
    out->fn = m->handlers[out->insn.op];
    return out;
}

/* Handles a non-OK handler status; returns nonzero when the run stops.
 * With a guest kernel a fault is delivered through its IDT and the run
 * goes on at the handler (0). */
static int after_fault(es_machine *m, int rc)
{
    if (rc == ES_STOP)
        return 1;
    for (int i = 0; i < m->nobs; i++)
        if (m->obs[i].exception)
            m->obs[i].exception(m->obs[i].ctx, m, m->fault.vector, m->fault.error);
    if (m->has_kernel)
        return es_deliver_fault(m) != 0;
    fault_stop(m);
    return 1;
}

int64_t es_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void es_deadline_arm(es_machine *m)
{
    m->deadline_ns = m->wall_limit > 0 ? es_now_ns() + (int64_t)(m->wall_limit * 1e9) : 0;
    if (m->wall_limit > 0 && m->deadline_ns == 0)
        m->deadline_ns = 1;
}

void es_deadline_clear(es_machine *m)
{
    m->deadline_ns = 0;
}

bool es_deadline_passed(es_machine *m)
{
    if (!m->deadline_ns || es_now_ns() < m->deadline_ns)
        return false;
    snprintf(m->message, sizeof m->message, "the wall-clock limit (--timeout %g s) was reached",
             m->wall_limit);
    m->stop = ES_STOP_TIME;
    return true;
}

/* RFLAGS.TF was set when the instruction that just retired began: the
 * single-step trap (SDM Vol. 3B, 17.3.1.4), DR6.BS set, the saved RIP the
 * next instruction's; Linux turns an unhandled one into SIGTRAP. */
static int single_step_trap(es_machine *m)
{
    m->dr[6] |= 0x4000;
    es_raise(m, ES_VEC_DB, 0);
    return after_fault(m, ES_FAULT) ? ES_FAULT : ES_OK;
}

/* One instruction with the observers told: fetch, before, the handler,
 * retire.  The handler's status (ES_YIELD as ES_OK), ES_FAULT undelivered
 * (also when the fetch faulted). */
static inline int one_told(es_machine *m)
{
    es_dentry *e = fetch(m);
    if (!e)
        return ES_FAULT;
    uint64_t rip = m->rip;
    for (int i = 0; i < m->nobs; i++)
        if (m->obs[i].before)
            m->obs[i].before(m->obs[i].ctx, m, &e->insn, rip);
    m->nrip = (rip + e->insn.len) & m->ipmask;
    int rc = e->fn(m, &e->insn);
    if (rc == ES_FAULT)
        return rc;
    if (rc == ES_YIELD)
        rc = ES_OK;
    if (rc == ES_OK || m->stop == ES_STOP_EXIT) {
        m->rip = m->nrip;
        m->icount++;
        for (int i = 0; i < m->nobs; i++)
            if (m->obs[i].retire)
                m->obs[i].retire(m->obs[i].ctx, m, &e->insn, rip);
    }
    return rc;
}

int es_step(es_machine *m)
{
    m->stop = ES_STOP_NONE;
    bool tf = (m->rflags & ES_TF) != 0; /* TF as the instruction begins */
    uint8_t cpl = m->cpl;
    /* a fault the guest kernel takes (delivered through its IDT) is not
     * a stop: the step returns ES_OK with RIP at the handler */
    int rc = one_told(m);
    if (rc == ES_FAULT)
        return after_fault(m, rc) ? ES_FAULT : ES_OK;
    /* Only within one privilege level: a transfer that clears TF (SYSCALL
     * through SFMASK, INT n through its gate) takes no trap, as on
     * hardware; SYSENTER, which keeps TF, is not modelled to trap at the
     * kernel's first instruction.  POPF clearing TF misses its last trap. */
    if (tf && rc == ES_OK && (m->rflags & ES_TF) && m->cpl == cpl)
        return single_step_trap(m);
    return rc;
}

int es_step_raw(es_machine *m, bool (*pre)(void *ctx, es_machine *m, const es_insn *d),
                void *ctx)
{
    es_dentry *e = fetch(m);
    if (!e)
        return ES_FAULT;
    if (pre && !pre(ctx, m, &e->insn))
        return ES_STOP;
    m->nrip = (m->rip + e->insn.len) & m->ipmask;
    int rc = e->fn(m, &e->insn);
    if (rc == ES_YIELD)
        rc = ES_OK;
    if (rc == ES_OK)
        m->rip = m->nrip;
    return rc;
}

/* One instruction without observers: es_step's fetch, dispatch and
 * retire; the status as the handler returned it (ES_FAULT when the fetch
 * failed). */
static int one_plain(es_machine *m)
{
    es_dentry *e = fetch(m);
    if (__builtin_expect(!e, 0))
        return ES_FAULT;
    m->nrip = (m->rip + e->insn.len) & m->ipmask;
    int rc = e->fn(m, &e->insn);
    if (rc == ES_OK || rc == ES_YIELD || (rc == ES_STOP && m->stop == ES_STOP_EXIT)) {
        m->rip = m->nrip;
        m->icount++;
    }
    return rc;
}

/* The plain loop: no observers, nothing but blocks of pre-decoded
 * instructions (sim/block.c). */
static int run_plain(es_machine *m, uint64_t budget)
{
    uint64_t start = m->icount;
    /* faults the guest kernel takes count toward the budget too, so a
     * handler that faults forever still reaches the wall-clock check */
    for (uint64_t faults = 0;;) {
        uint64_t done = m->icount - start;
        if (done >= budget)
            return 0;
        int rc = es_blocks_run(m, budget - done, one_plain);
        if (rc == ES_OK || rc == ES_YIELD) /* budget spent; YIELD: es_run steps on */
            return 0;
        if (after_fault(m, rc))
            return 1;
        if (++faults >= budget)
            return 0;
    }
}

/* es_run_fenced's way past what no block holds: stop, the recorder steps it. */
static int one_fenced(es_machine *m)
{
    (void)m;
    return ES_STOP;
}

int es_run_fenced(es_machine *m, uint64_t budget, const es_fence *f, es_wlog *wlog)
{
    /* the observers are the recorder's: it logs this run as a whole.
     * With them unhooked the TLB may be filled (an observer of memory
     * needs every access, es_observe); stale entries go both ways. */
    int nobs = m->nobs;
    bool bypass = m->tlb_bypass;
    m->nobs = 0;
    m->tlb_bypass = false;
    m->fence = f;
    m->wlog = wlog;
    es_tlb_flush(m); /* a writable entry made before would not be listed */
    m->stop = ES_STOP_NONE;
    int rc = es_blocks_run(m, budget, one_fenced);
    /* the lazy record's operands are scratch once synced: cleared, so that
     * a recorder comparing the machine's words sees only what changed */
    m->lz_a = m->lz_b = 0;
    m->fence = NULL;
    m->wlog = NULL;
    m->nobs = nobs;
    m->tlb_bypass = bypass;
    es_tlb_flush(m);
    return rc;
}

/* es_blocks_run's way past what no block holds, with observers. */
static int one_observed(es_machine *m)
{
    m->stop = ES_STOP_NONE;
    return one_told(m);
}

static bool observers_take_blocks(const es_machine *m)
{
    if (m->tlb_bypass)
        return false;
    for (int i = 0; i < m->nobs; i++)
        if (!m->obs[i].blocks)
            return false;
    return true;
}

/* budget steps of es_step: a step retires an instruction or takes a fault.
 * Through blocks when every observer allows it (es_observer.blocks): the
 * same steps, the same hooks in the same order, so the batch boundaries
 * (and the timer ticks on them) fall where they fall stepping. */
static int run_observed(es_machine *m, uint64_t budget)
{
    bool blocks = observers_take_blocks(m);
    uint64_t start = m->icount, faults = 0;
    for (uint64_t n = 0; n < budget; n = m->icount - start + faults) {
        if (!blocks || (m->rflags & ES_TF)) {
            uint64_t ic = m->icount;
            int rc = es_step(m);
            if (rc != ES_OK)
                return 1;
            faults += m->icount == ic; /* a fault delivered (or a stop) */
            continue;
        }
        m->stop = ES_STOP_NONE;
        int rc = es_blocks_run(m, budget - n, one_observed);
        if (rc == ES_OK || rc == ES_YIELD)
            continue;
        if (rc != ES_FAULT || after_fault(m, rc))
            return 1;
        faults++;
    }
    return 0;
}

/* Instructions between two looks at the clock: small enough that a batch
 * of slow instructions (each touching a new page, say) ends well within
 * the --timeout margin, large enough that the clock read costs nothing. */
#define RUN_BATCH (1u << 16)

/* The timer tick: every batch boundary (RUN_BATCH instructions, 65 us of
 * --deterministic time), like a local APIC timer at about 15 kHz.  Nonzero
 * when the run stopped (a timer's signal killed the process). */
static int tick(es_machine *m)
{
    unsigned vec = m->hooks.tick(m);
    if (m->stop != ES_STOP_NONE)
        return 1;
    return vec && es_external_interrupt(m, vec) < 0;
}

static int run_batches(es_machine *m)
{
    for (;;) {
        uint64_t budget = RUN_BATCH;
        if (m->max_insns) {
            if (m->icount >= m->max_insns)
                return m->stop = ES_STOP_INSNS;
            if (m->max_insns - m->icount < budget)
                budget = m->max_insns - m->icount;
        }
        /* RFLAGS.TF set: es_step's single-step traps until it is clear */
        int done = m->nobs || (m->rflags & ES_TF) ? run_observed(m, budget) : run_plain(m, budget);
        if (done)
            return m->stop;
        if (es_deadline_passed(m))
            return m->stop;
        if (m->hooks.tick && tick(m))
            return m->stop;
        if (m->hooks.progress)
            m->hooks.progress(m, m->hooks.progress_ctx);
    }
}

int es_run(es_machine *m)
{
    m->stop = ES_STOP_NONE;
    es_deadline_arm(m);
    int stop = run_batches(m);
    es_deadline_clear(m);
    return stop;
}
