/* model.c - the out-of-order core of the cycle model.
 *
 * The model is a one-pass, program-order scheduler (the approach of
 * llvm-mca and uiCA, driven by the real dynamic instruction stream): when an
 * instruction retires functionally, its dispatch, issue, completion and
 * retire cycles are computed from the state older instructions left:
 *
 *   front end   op cache (hit: opcache.ops_per_cycle) or legacy decode
 *               (decode.width instructions, fetch.bytes_per_cycle), L1i and
 *               ITLB misses, taken-branch group breaks, mispredict redirects;
 *   dispatch    dispatch.width uops per cycle in order, stalled by a full
 *               ROB (rob.entries uops) and by serialising instructions;
 *   rename      zero idioms (no sources), move elimination (latency 0, no
 *               port), stack engine (push/pop update RSP without a uop
 *               dependency), partial-register merges (8/16-bit writes read
 *               the old register), macro-fusion of cmp/test + jcc;
 *   execute     each uop takes the first free cycle >= its operands' ready
 *               time on one port of its port set (per-cycle reservation
 *               table, so younger uops fill holes as in a real scheduler);
 *               non-pipelined units stay busy `occ` cycles;
 *   memory      loads/stores take load/store/AGU pseudo-ports; loads see
 *               store-to-load forwarding from the store queue (and its
 *               failures: partial overlap, line split), Zen's memory
 *               renaming, L1d/L2/L3 set-associative LRU caches by physical
 *               address and a two-level DTLB with page-walk cost;
 *   retire      in order, retire.width uops per cycle.
 *
 * Static per-instruction information (form, costs, register sets) is built
 * once per decode-cache entry and cached in a parallel array, so the
 * per-instruction work is O(uops) with no allocation.  All numbers come
 * from tables/uarch/ through tm_uarch.
 *
 * This file holds the hooks, dispatch, execute and retire; the front end
 * (static info, fetch/decode, branch prediction) is model_front.c, the
 * memory side (caches, TLBs, load/store issue, the store queue)
 * model_mem.c; tm_int.h holds the state they share.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"
#include "tm_int.h"

/* The per-instruction steps are inlined into both callers of retire_insn
 * (traced and untraced), as GCC inlines them into a single caller. */
#define ALWAYS_INLINE static inline __attribute__((always_inline))

/* ---- observer hooks ---- */

uint64_t tm_linear_of(es_machine *m, const es_insn *d, const es_operand *o)
{
    uint64_t a = (uint64_t)o->disp;
    if (o->base < 16)
        a += m->gpr[o->base];
    if (o->index < 16)
        a += m->gpr[o->index] * o->scale;
    if (d->asize == 4)
        a &= 0xffffffffu;
    else if (d->asize == 2)
        a &= 0xffffu;
    if (o->seg < 6 && (o->seg >= ES_SEG_FS || d->mode != ES_MODE_64))
        a += m->seg[o->seg].base;
    return a;
}

static void on_before(void *ctx, es_machine *m, const es_insn *d, uint64_t rip)
{
    es_timing *t = ctx;
    const tm_sinfo *s = tm_sinfo_of(t, m, d, rip);
    t->pend = s;
    t->pend_rip = rip;
    t->pend_priv = s->priv;
    if (__builtin_expect(s->priv != TP_NONE, 0)) {
        if (s->priv == TP_WRMSR && (uint32_t)m->gpr[ES_RCX] == 0x48)
            t->pend_priv = TP_WRMSR_SPEC_CTRL;
        else if (s->priv == TP_MOV_CR3 && d->o[1].kind == ES_OPK_GPR &&
                 (m->cr4 & (1u << 17)) && (m->gpr[d->o[1].reg] >> 63))
            t->pend_priv = TP_MOV_CR3_NOFLUSH; /* SDM Vol. 3A 4.10.4.1: bit 63 with CR4.PCIDE */
    }
    if (s->memkind == TM_NOADDR) {
        t->pend_ea = UINT64_MAX;
        return;
    }
    uint64_t ea;
    if (s->memkind == TM_EXPLICIT) {
        ea = tm_linear_of(m, d, &d->o[s->memop]);
        t->pend_expr = s->expr;
    } else {
        ea = m->gpr[ES_RSP] - (s->memkind == TM_PUSH ? s->msize : 0);
        t->pend_expr = UINT64_MAX; /* push/pop: the stack engine, not memory renaming */
    }
    t->pend_ea = ea;
    es_tlbe *te = es_tlb_slot(m, ea);
    uint64_t pa;
    if (te->tag == (ea & ~0xfffull))
        pa = te->pa | (ea & 0xfff);
    else if (es_translate(m, ea, ES_ACC_R, m->cpl == 3, &pa))
        pa = ea; /* faults anyway; the retire hook will not see it */
    t->pend_pa = pa;
#ifdef TM_TRACE
    fprintf(stderr, "  ea %llx pa %llx\n", (unsigned long long)ea, (unsigned long long)pa);
#endif
}

/* ---- dispatch, execute, retire ---- */

ALWAYS_INLINE void retire_at(es_timing *t, uint64_t complete, uint32_t uops)
{
    uint64_t r = max64(complete, t->last_retire);
    if (r == t->last_retire && t->retire_used + uops > t->u.retire_width && t->retire_used) {
        r++;
        t->retire_used = 0;
    } else if (r != t->last_retire) {
        t->retire_used = 0;
    }
    t->retire_used += uops;
    t->prev_retire = t->last_retire;
    t->last_retire = r;
}

/* A serialising transition: waits for every older instruction to retire,
 * takes `cycles`, and younger instructions start after it. */
static void serialise(es_timing *t, uint64_t at, uint32_t cycles)
{
    uint64_t start = max64(max64(at, t->last_retire), t->serial_until);
    uint64_t done = start + cycles;
    t->serial_until = done;
    for (int r = 0; r < TR_COUNT; r++)
        t->ready[r] = max64(t->ready[r], done);
    tm_redirect(t, done);
    t->prev_retire = t->last_retire;
    t->last_retire = done;
    t->retire_used = 0;
    t->st.serialising++;
}

/* A privileged transition before dispatch: a CR3 write without no-flush
 * drops the non-global TLB entries; a serialising one is costed whole here.
 * True when it was (the instruction is done). */
static bool priv_serialised(es_timing *t, uint64_t fe)
{
    const tm_priv_cost *pc = &t->u.priv[t->pend_priv];
    if (t->pend_priv == TP_MOV_CR3) {
        tm_cache_flush(&t->dtlb1);
        tm_cache_flush(&t->dtlb2);
        tm_cache_flush(&t->itlb1);
        tm_cache_flush(&t->itlb2);
        t->last_ipage = UINT64_MAX;
    }
    if (!pc->serialising)
        return false;
    /* microcoded: llvm's uop count for these forms is a placeholder
     * (tables/uarch/README.md), so count the instruction as one */
    t->st.uops += 1;
    serialise(t, max64(fe, t->fe_cycle), pc->cycles);
    t->st.cycles = t->last_retire;
    return true;
}

/* Dispatch of `uops` uops the front end delivered at `fe`: in order,
 * dispatch.width a cycle, each waiting for its ROB entry and scheduler
 * slot.  Returns the dispatch cycle. */
ALWAYS_INLINE uint64_t dispatch(es_timing *t, uint64_t fe, uint32_t uops)
{
    const tm_uarch *u = &t->u;
    uint64_t dsp = max64(max64(fe, t->fe_cycle), t->serial_until);
    if (uops) {
        /* the entry this instruction's last uop takes held the uop
         * rob.entries older: it must have retired */
        uint32_t last = t->rob_pos + (uops < u->rob_entries ? uops : u->rob_entries) - 1;
        if (last >= u->rob_entries)
            last -= u->rob_entries;
        dsp = max64(dsp, t->rob[last]);
        uint32_t n = u->sched_entries;
        uint32_t sl = t->sched_pos + (uops < n ? uops : n) - 1;
        if (sl >= n)
            sl -= n;
        dsp = max64(dsp, t->sched[sl]);
    }
    if (dsp > t->fe_cycle) {
        t->fe_cycle = dsp;
        t->fe_used = 0;
    }
    t->fe_used += uops;
    while (t->fe_used > u->dispatch_width) {
        t->fe_cycle++;
        t->fe_used -= u->dispatch_width;
    }
    if (t->fe_used == u->dispatch_width) {
        t->fe_cycle++;
        t->fe_used = 0;
    }
    return dsp;
}

/* Execution of the instruction's uops on their ports once its operands
 * (and load data) are ready: sets f->result and f->complete. */
ALWAYS_INLINE void execute(es_timing *t, const tm_sinfo *s, tm_flow *f, bool tracing)
{
    const tm_uarch *u = &t->u;
    if (s->kind == TK_MOVE || s->kind == TK_ZERO) {
        f->result = s->kind == TK_MOVE ? f->data : f->dsp;
        if (s->kind == TK_ZERO) /* the table's row may still name an execution port */
            for (int g = 0; g < s->cost.ngroups; g++)
                for (int k = 0; k < s->cost.g[g].n; k++)
                    f->result = max64(f->result, tm_port_alloc(t, s->cost.g[g].mask, f->dsp, 1, tracing) +
                                                     s->cost.lat);
        f->complete = f->result;
        return;
    }
    uint64_t first = UINT64_MAX, last = f->data;
    for (int g = 0; g < s->cost.ngroups; g++)
        for (int k = 0; k < s->cost.g[g].n; k++) {
            uint64_t c = tm_port_alloc(t, s->cost.g[g].mask, f->data, s->cost.g[g].occ, tracing);
            if (c < first)
                first = c;
            f->issued = max64(f->issued, c);
            last = max64(last, c + s->cost.g[g].occ);
        }
    if (first == UINT64_MAX)
        first = f->data;
    uint32_t lat = s->oplat;
    if (t->pend_priv != TP_NONE) {
        /* pipelined privileged form: its table latency, one at a time
         * through the microcode sequencer */
        lat = u->priv[t->pend_priv].cycles;
        first = max64(first, t->ucode_free);
        t->ucode_free = first + (lat ? lat : 1);
        f->issued = max64(f->issued, first);
        last = max64(last, first + lat);
    }
    f->result = first + lat;
    f->complete = max64(f->result, last);
}

/* Results written, then in-order retirement; the store queue, ROB and
 * scheduler entries the instruction took are stamped with its times. */
ALWAYS_INLINE void writeback_retire(es_timing *t, const tm_sinfo *s, const tm_flow *f,
                                    uint32_t uops)
{
    const tm_uarch *u = &t->u;
    for (uint64_t mk = s->dst; mk; mk &= mk - 1) {
        t->ready[__builtin_ctzll(mk)] = f->result;
        t->wver[__builtin_ctzll(mk)]++;
    }
    if (s->stack)
        t->ready[ES_RSP] = max64(t->ready[ES_RSP], f->dsp);

    retire_at(t, f->complete, uops);
    uint64_t R = t->last_retire;
    if (s->store && f->has_addr)
        tm_store_retired(t, R);
    for (uint32_t k = 0; k < uops && k < u->rob_entries; k++) {
        t->rob[t->rob_pos] = R;
        if (++t->rob_pos == u->rob_entries)
            t->rob_pos = 0;
    }
    for (uint32_t k = 0; k < uops && k < u->sched_entries; k++) {
        t->sched[t->sched_pos] = f->issued;
        if (++t->sched_pos == u->sched_entries)
            t->sched_pos = 0;
    }
}

/* ---- the pipeline-trace hook (es_timing_set_tracer) ---- */

static uint64_t at_least(uint64_t v, uint64_t floor) { return v > floor ? v : floor; }

/* Hands the instruction just costed to the tracer: fetched at f0, decoded
 * at fe, and either the flow f of an ordinary instruction or (f NULL) a
 * serialising one that ran from last_retire - cycles to last_retire. */
static void trace_insn(es_timing *t, es_machine *m, const es_insn *d, uint64_t rip, uint64_t f0,
                       uint64_t fe, const tm_flow *f)
{
    es_timing_insn *r = &t->rec;
    r->rip = rip;
    r->fetch = f0;
    r->decode = at_least(fe, f0);
    r->opcache = t->iline_in_opc;
    r->flushed = false;
    r->retire = t->last_retire;
    if (f) {
        r->serialising = false;
        r->dispatch = at_least(f->dsp, r->decode);
        uint64_t first = UINT64_MAX;
        for (unsigned k = 0; k < r->nuops; k++)
            if (r->uop[k].cycle < first)
                first = r->uop[k].cycle;
        r->issue = at_least(first == UINT64_MAX ? f->dsp : first, r->dispatch);
        r->complete = at_least(f->complete, r->issue);
    } else {
        r->serialising = true;
        uint64_t start = t->last_retire - t->u.priv[t->pend_priv].cycles;
        r->dispatch = r->issue = at_least(start, r->decode);
        r->complete = at_least(t->last_retire, r->issue);
    }
    if (r->retire < r->complete)
        r->retire = r->complete;
    t->tr.insn(t->tr.ctx, m, d, r);
}

/* An instruction the before hook saw faulted instead of retiring: it is
 * flushed when the delivery (the serialisation just costed) ends. */
static void trace_flush(es_timing *t, es_machine *m)
{
    es_timing_insn *r = &t->rec;
    memset(r, 0, sizeof *r);
    r->rip = t->pend_rip;
    r->fetch = r->decode = r->dispatch = r->issue = r->complete = t->dec_cycle;
    r->retire = at_least(t->last_retire, t->dec_cycle);
    r->flushed = true;
    t->tr.insn(t->tr.ctx, m, NULL, r);
}

void tm_trace_uop(es_timing *t, uint64_t cycle, uint16_t occ, int port)
{
    if (t->rec.nuops < ES_TIMING_MAXUOPS)
        t->rec.uop[t->rec.nuops++] = (es_timing_uop){cycle, occ, (uint8_t)port};
}

void es_timing_set_tracer(es_timing *t, const es_timing_tracer *tr)
{
    if (tr)
        t->tr = *tr;
    else
        memset(&t->tr, 0, sizeof t->tr);
}

const char *es_timing_port_name(const es_timing *t, unsigned p)
{
    return p < (unsigned)t->u.nports ? t->u.port_name[p] : "?";
}

static __attribute__((noinline)) void clflush(es_timing *t, es_machine *m, const es_insn *d)
{
    uint64_t pa;
    if (d->nops && !es_translate(m, tm_linear_of(m, d, &d->o[0]), ES_ACC_R, m->cpl == 3, &pa))
        tm_data_evict(t, pa);
}

/* rename.mov_alu_fusion_read_alu, measured on Zen 5 (bench/uarch/
 * mov_and_read*): a fused move + ALU pair stays one op only while nothing
 * reads its result; mov edx, eax; and edx, 0xa4 runs at 0.19 cycles, with
 * cmp edx, 4 after it (or two instructions later, or lea esi, [rdx+1])
 * 0.52 -- three ALU ops' worth, where cmp eax, 4 instead leaves 0.36, and a
 * register move reading edx (mov esi, edx) 0.26, and a load or store
 * taking it as an address (mov rsi, [rdi+rdx]) neither (0.363 against 0.373
 * with [rdi+rax]).  So the first read as a source operand by anything but
 * a move gives the pair's move an ALU slot from the cycle the pair issued
 * (the read's own timing is unchanged). */
static __attribute__((noinline)) void fused_result_read(es_timing *t, const tm_sinfo *s,
                                                        bool tracing)
{
    if ((s->src & t->mfused_live) && s->kind != TK_MOVE) {
        tm_port_alloc(t, t->u.dflt.g[0].mask, t->mfused_at, 1, tracing);
        t->mfused_live = 0;
        return;
    }
    t->mfused_live &= ~s->dst; /* rewritten: that value is never read */
}

/* Costs the instruction; the tracer is told when `tracing` (a constant in
 * each of the two callers below, so the untraced path has no trace code). */
ALWAYS_INLINE void retire_insn(es_timing *t, es_machine *m, const es_insn *d, uint64_t rip,
                               bool tracing)
{
    const tm_sinfo *s = t->pend;
    if (!s)
        s = tm_sinfo_of(t, m, d, rip);
    t->pend = NULL;
    t->st.insns++;

    uint64_t f0 = t->dec_cycle;
    /* move + ALU fusion: an eliminated register move and the ALU op right
     * after it on the register it wrote (mov ecx, eax; and ecx, 0x400) are
     * one op from the op cache on: measured on Zen 5 (bench/uarch/
     * mov_and_fusable: 12 instructions per cycle, six pairs on the six ALUs
     * and at the op cache's six ops; mov_and_apart, the same ops not
     * adjacent: 7.6) */
    bool mfused = s->movfuse && t->mfuse_rip == rip && (s->dst & t->mfuse_dst);
    uint64_t fe = tm_front_end(t, rip, mfused ? 0 : s->cost.uops);
    if (__builtin_expect(t->mfused_live != 0, 0))
        fused_result_read(t, s, tracing);
    if (t->pend_priv != TP_NONE && priv_serialised(t, fe)) {
        if (tracing)
            trace_insn(t, m, d, rip, f0, fe, NULL);
        return;
    }

    /* macro-fusion: a jcc right after a fusible cmp/test dispatches with it */
    bool fused = s->branch == TB_COND && t->fuse_rip == rip;
    uint32_t uops = fused || mfused ? 0 : s->cost.uops;
    t->st.uops += uops;

    tm_flow f = {0};
    f.dsp = dispatch(t, fe, uops);
    /* operands */
    f.src = s->kind == TK_ZERO ? f.dsp : max64(f.dsp, ready_of(t, s->src));
    if (__builtin_expect(s->flag_extra, 0))
        f.src = max64(f.src, t->ready[TR_FLAGS] + s->flag_extra);
    if (fused)
        f.src = max64(f.src, t->fuse_ready);
    f.has_addr = s->memkind != TM_NOADDR && t->pend_ea != UINT64_MAX;
    f.data = f.src;
    f.issued = f.dsp;
    if (s->load)
        tm_load_issue(t, s, &f, tracing);
    execute(t, s, &f, tracing);
    if (s->store)
        tm_store_issue(t, s, &f, tracing);
    writeback_retire(t, s, &f, uops);

    if (s->branch)
        tm_branch(t, s, rip, m->rip, f.result);
    t->fuse_rip = s->fusible ? rip + s->len : UINT64_MAX;
    t->fuse_ready = f.result;
    t->mfuse_rip = UINT64_MAX;
    if (mfused && t->u.mov_alu_fusion_read_alu) {
        t->mfused_live = s->dst & t->mfuse_dst;
        t->mfused_at = f.issued;
    }
    if (s->kind == TK_MOVE && !mfused && !(s->dst & ~0xffffull)) {
        t->mfuse_rip = rip + s->len;
        t->mfuse_dst = s->dst;
    }
    t->st.cycles = t->last_retire;
    if (tracing)
        trace_insn(t, m, d, rip, f0, fe, &f);
    m->model_cycles = t->last_retire;
    if (__builtin_expect(d->op == ES_OP_CLFLUSH || d->op == ES_OP_CLFLUSHOPT, 0))
        clflush(t, m, d); /* the line leaves every level (SDM CLFLUSH) */
    if (__builtin_expect(t->spec_on, 0) && s->branch == TB_COND && t->last_miss)
        tm_speculate(t, m, t->pred_next, f.dsp, f.result);
#ifdef TM_TRACE
    fprintf(stderr, "%-6s d=%llu src=%llu data=%llu res=%llu cpl=%llu R=%llu uops=%u ld=%d st=%d ea=%llx\n",
            es_op_name(d->op), (unsigned long long)f.dsp, (unsigned long long)f.src,
            (unsigned long long)f.data, (unsigned long long)f.result,
            (unsigned long long)f.complete, (unsigned long long)t->last_retire, uops, s->load,
            s->store, (unsigned long long)t->pend_ea);
#endif
}

static __attribute__((noinline)) void retire_traced(es_timing *t, es_machine *m,
                                                    const es_insn *d, uint64_t rip)
{
    t->rec.nuops = 0;
    retire_insn(t, m, d, rip, true);
}

static void on_retire(void *ctx, es_machine *m, const es_insn *d, uint64_t rip)
{
    es_timing *t = ctx;
    if (__builtin_expect(t->tr.insn != NULL, 0))
        retire_traced(t, m, d, rip);
    else
        retire_insn(t, m, d, rip, false);
}

static void on_exception(void *ctx, es_machine *m, int vector, uint32_t error)
{
    es_timing *t = ctx;
    (void)vector;
    (void)error;
    bool faulted = t->pend != NULL;
    t->pend = NULL;
    serialise(t, t->fe_cycle, t->u.priv[TP_EXCEPTION].cycles);
    t->st.cycles = t->last_retire;
    if (faulted && t->tr.insn)
        trace_flush(t, m);
}

/* ---- public API ---- */

#define TM_NCACHES 9

/* The caches and TLBs of t with the geometry each is built from (the op
 * cache's, derived from opcache.*, is opc's); returns how many. */
static size_t cache_list(es_timing *t, const tm_cache_cfg *opc, tm_cache **c,
                         const tm_cache_cfg **g)
{
    tm_uarch *u = &t->u;
    tm_cache *cs[] = {&t->l1i, &t->l1d, &t->l2, &t->l3, &t->itlb1,
                      &t->itlb2, &t->dtlb1, &t->dtlb2, &t->opc};
    const tm_cache_cfg *gs[] = {&u->l1i, &u->l1d, &u->l2, &u->l3, &u->itlb1,
                                &u->itlb2, &u->dtlb1, &u->dtlb2, opc};
    _Static_assert(sizeof cs / sizeof cs[0] == TM_NCACHES, "TM_NCACHES");
    memcpy(c, cs, sizeof cs);
    memcpy(g, gs, sizeof gs);
    return sizeof cs / sizeof cs[0];
}

/* Allocates the model's tables; -1 when one is missing or zero-sized. */
static int model_alloc(es_timing *t)
{
    const tm_uarch *u = &t->u;
    t->sc = calloc((size_t)TM_DC_SLOTS + ES_BENT_SLOTS, sizeof *t->sc);
    t->rob = calloc(u->rob_entries, sizeof *t->rob);
    t->sched = calloc(u->sched_entries ? u->sched_entries : 1, sizeof *t->sched);
    t->slot = calloc((size_t)u->nports * TM_SLOTW, sizeof *t->slot);
    t->sq = calloc(u->store_queue, sizeof *t->sq);
    t->bht = calloc(u->bht_entries ? u->bht_entries : 1, 1);
    t->btb = calloc(u->btb_entries ? u->btb_entries : 1, sizeof *t->btb);
    t->ras = calloc(u->ras_entries ? u->ras_entries : 1, sizeof *t->ras);
    if (!t->sc || !t->rob || !t->sched || !u->sched_entries || !t->slot || !t->sq || !t->bht ||
        !t->btb || !t->ras || !u->bht_entries || !u->btb_entries || !u->ras_entries)
        return -1;
    tm_cache_cfg opc = {u->opcache_entries / 8 / (u->opcache_ways ? u->opcache_ways : 1),
                        u->opcache_ways, 6, 0};
    tm_cache *c[TM_NCACHES];
    const tm_cache_cfg *g[TM_NCACHES];
    size_t n = cache_list(t, &opc, c, g);
    for (size_t i = 0; i < n; i++)
        if (tm_cache_init(c[i], g[i]))
            return -1;
    return 0;
}

es_timing *es_timing_new(const char *uarch, char *err, size_t errlen)
{
    es_timing *t = calloc(1, sizeof *t);
    if (!t) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (tm_uarch_load(&t->u, uarch ? uarch : "znver4", err, errlen)) {
        free(t);
        return NULL;
    }
    const tm_uarch *u = &t->u;
    if (model_alloc(t)) {
        snprintf(err, errlen, "out of memory (or a zero-sized predictor in %s.cfg)", uarch);
        es_timing_free(t);
        return NULL;
    }
    for (unsigned i = 0; i < u->bht_entries; i++)
        t->bht[i] = 1; /* weakly not taken */
    memset(t->btb, 0xff, u->btb_entries * sizeof *t->btb);
    t->last_iline = t->last_ipage = UINT64_MAX;
    t->fuse_rip = UINT64_MAX;
    t->mfuse_rip = UINT64_MAX;
    return t;
}

void es_timing_free(es_timing *t)
{
    if (!t)
        return;
    tm_cache *c[TM_NCACHES];
    const tm_cache_cfg *g[TM_NCACHES];
    size_t n = cache_list(t, NULL, c, g);
    for (size_t i = 0; i < n; i++)
        tm_cache_free(c[i]);
    free(t->sc);
    free(t->rob);
    free(t->sched);
    free(t->slot);
    free(t->sq);
    free(t->bht);
    free(t->btb);
    free(t->ras);
    tm_uarch_free(&t->u);
    free(t);
}

int es_timing_attach(es_timing *t, es_machine *m)
{
    es_observer o = {.ctx = t, .before = on_before, .retire = on_retire,
                     .exception = on_exception, .blocks = true};
    if (es_observe(m, &o))
        return -1;
    t->m = m;
    m->tsc_model = true;
    m->model_cycles = t->last_retire;
    return 0;
}

uint64_t es_timing_cycles(const es_timing *t) { return t->last_retire; }

void es_timing_set_speculate(es_timing *t, bool on) { t->spec_on = on; }

void es_timing_set_spec_hook(es_timing *t, es_spec_fn fn, void *ctx)
{
    t->spec_fn = fn;
    t->spec_ctx = ctx;
}

void es_timing_spec_counts(const es_timing *t, uint64_t out[3])
{
    out[0] = t->st.spec_windows;
    out[1] = t->st.spec_insns;
    out[2] = t->st.spec_fills;
}

uint64_t es_timing_last_cost(const es_timing *t) { return t->last_retire - t->prev_retire; }

void es_timing_get_stats(const es_timing *t, es_timing_stats *out)
{
    *out = t->st;
    out->cycles = t->last_retire;
}
