/* model_mem.c - the memory side of the cycle model: set-associative
 * caches and TLBs, the issue of loads and stores (load/store/AGU
 * pseudo-ports, the memory-operation rate, store pairing), and the store
 * queue with store-to-load forwarding (and its failures: partial overlap,
 * line split) and Zen's memory renaming.  Caches are looked up by physical
 * address; a line is found through its linear alias on AMD (utag_cost).
 */
#include <stdlib.h>
#include <string.h>

#include "tm_int.h"

/* ---- caches and TLBs: set-associative, true LRU by stamp ---- */

int tm_cache_init(tm_cache *c, const tm_cache_cfg *g)
{
    c->sets = g->sets ? g->sets : 1;
    c->ways = g->ways ? g->ways : 1;
    c->shift = g->line_shift;
    c->setmask = (c->sets & (c->sets - 1)) ? 0 : c->sets - 1;
    c->tag = calloc((size_t)c->sets * c->ways, sizeof *c->tag);
    c->stamp = calloc((size_t)c->sets * c->ways, sizeof *c->stamp);
    c->last = UINT64_MAX;
    if (!c->tag || !c->stamp)
        return -1;
    memset(c->tag, 0xff, (size_t)c->sets * c->ways * sizeof *c->tag);
    return 0;
}

void tm_cache_free(tm_cache *c)
{
    free(c->tag);
    free(c->stamp);
}

/* The first way of line's set: index bits as the hardware takes them;
 * non-power-of-two set counts (op cache) by a multiplicative range
 * reduction, no division. */
static inline size_t set_of(const tm_cache *c, uint64_t line)
{
    uint32_t si = c->setmask || c->sets == 1
                      ? (uint32_t)(line & c->setmask)
                      : (uint32_t)(((uint64_t)(uint32_t)(line * 0x9e3779b1u) * c->sets) >> 32);
    return (size_t)si * c->ways;
}

/* Looks up (and on a miss fills) the line of addr; true on a hit. */
bool tm_cache_access(tm_cache *c, uint64_t addr)
{
    uint64_t line = addr >> c->shift;
    if (line == c->last)
        return true;
    c->last = line;
    size_t set = set_of(c, line);
    uint64_t *tag = c->tag + set, *st = c->stamp + set;
    uint16_t *h = &c->hint[(line ^ (line >> 8)) & (TM_HINTS - 1)];
    c->clock++;
    if (*h < c->ways && tag[*h] == line) {
        st[*h] = c->clock;
        return true;
    }
    uint32_t victim = 0;
    for (uint32_t w = 0; w < c->ways; w++) {
        if (tag[w] == line) {
            st[w] = c->clock;
            *h = (uint16_t)w;
            return true;
        }
        if (st[w] < st[victim])
            victim = w;
    }
    tag[victim] = line;
    st[victim] = c->clock;
    *h = (uint16_t)victim;
    return false;
}

/* Drops the line of addr if present (CLFLUSH). */
void tm_cache_evict(tm_cache *c, uint64_t addr)
{
    uint64_t line = addr >> c->shift;
    if (c->last == line)
        c->last = UINT64_MAX;
    size_t set = set_of(c, line);
    for (uint32_t w = 0; w < c->ways; w++)
        if (c->tag[set + w] == line)
            c->tag[set + w] = UINT64_MAX;
}

void tm_data_evict(es_timing *t, uint64_t pa)
{
    tm_cache_evict(&t->l1d, pa);
    tm_cache_evict(&t->l2, pa);
    tm_cache_evict(&t->l3, pa);
}

void tm_cache_flush(tm_cache *c)
{
    memset(c->tag, 0xff, (size_t)c->sets * c->ways * sizeof *c->tag);
    c->last = UINT64_MAX;
}

/* Extra cycles of a data access at physical address pa beyond an L1 hit. */
static uint32_t data_miss_cycles(es_timing *t, uint64_t pa)
{
    if (tm_cache_access(&t->l1d, pa))
        return 0;
    t->st.l1d_misses++;
    if (tm_cache_access(&t->l2, pa))
        return t->u.l2.latency - t->u.l1d.latency;
    t->st.l2_misses++;
    if (tm_cache_access(&t->l3, pa))
        return t->u.l3.latency - t->u.l1d.latency;
    t->st.l3_misses++;
    return t->u.mem_latency - t->u.l1d.latency;
}

uint32_t tm_tlb_cycles(es_timing *t, tm_cache *l1, tm_cache *l2, uint32_t l2_latency,
                       uint64_t va, uint64_t *misses)
{
    if (tm_cache_access(l1, va))
        return 0;
    (*misses)++;
    if (tm_cache_access(l2, va))
        return l2_latency;
    return l2_latency + t->u.pagewalk_latency;
}


/* The first cycle >= at with room for one more memory operation under
 * lsu.mem_ops_per_1000_cycles (0: only the AGU ports limit them).  The
 * per-cycle capacity alternates so that any window averages the rate
 * (2.67: 3, 3, 2, 3, 3, 2...); reserved like a port, so an operation that
 * issues late does not hold back younger ones that issue earlier. */
static uint64_t mem_alloc(es_timing *t, uint64_t at)
{
    uint64_t r = t->u.mem_ops_per_kcycle;
    if (!r)
        return at;
    for (uint64_t c = at;; c++) {
        uint32_t cap = (uint32_t)((c + 1) * r / 1000 - c * r / 1000);
        uint32_t i = (uint32_t)(c & (TM_SLOTW - 1));
        if (t->mem_stamp[i] != (uint32_t)(c + 1)) {
            t->mem_stamp[i] = (uint32_t)(c + 1);
            t->mem_used[i] = 0;
        }
        if (t->mem_used[i] < cap || c - at >= TM_SLOTW / 2) {
            if (t->mem_used[i] < UINT8_MAX)
                t->mem_used[i]++;
            return c;
        }
    }
}

/* Extra cycles of an access at linear `ea`, physical `pa`: alias_penalty
 * when the physical line was last touched through another linear line. */
static inline uint32_t utag_cost(es_timing *t, uint64_t ea, uint64_t pa)
{
    if (!t->u.alias_penalty)
        return 0;
    uint64_t pl = (pa >> 6) + 1, vl = ea >> 6; /* +1: 0 = empty */
    uint32_t i = (uint32_t)(pl & (TM_UTAGS - 1));
    bool miss = t->utag_pa[i] == pl && t->utag_va[i] != vl;
    t->utag_pa[i] = pl;
    t->utag_va[i] = vl;
    return miss ? t->u.alias_penalty : 0;
}

/* The line filter's bucket of the 64-byte line holding addr. */
static inline uint32_t sq_bucket(uint64_t addr) { return (uint32_t)(addr >> 6) & (TM_SQ_BUCKETS - 1); }

/* Counts store entry st in (d = 1) or out of (d = -1) the bucket of every
 * line it touches (an XSAVE-sized store touches many). */
static inline void sq_lines_add(es_timing *t, const tm_store *st, int d)
{
    for (uint64_t l = st->addr >> 6; l <= (st->addr + st->size - 1) >> 6; l++)
        t->sq_lines[l & (TM_SQ_BUCKETS - 1)] = (uint16_t)(t->sq_lines[l & (TM_SQ_BUCKETS - 1)] + d);
}

/* Whether a store in the queue may touch [a, a + size): false only when
 * none does (a load of more than a line always scans). */
static inline bool sq_may_overlap(const es_timing *t, uint64_t a, uint32_t size)
{
    return size > 64 || t->sq_lines[sq_bucket(a)] || t->sq_lines[sq_bucket(a + size - 1)];
}

/* Load data ready time: forwarding from the store queue, renaming, caches. */
static uint64_t load_ready(es_timing *t, const tm_sinfo *s, uint64_t issue, uint64_t pa,
                           uint64_t expr)
{
    const tm_uarch *u = &t->u;
    uint32_t size = s->msize ? s->msize : 8;
    uint64_t a = pa;
    bool split = ((a & 63) + size) > 64;
    uint32_t lat = s->fp ? u->l1d_fp_latency : u->l1d_latency;
    uint32_t i = t->sq_pos;
    /* no store in the queue touches the load's lines: the scan below
     * would find none (exact; most loads of a loop that stores elsewhere) */
    uint32_t n = sq_may_overlap(t, a, size) ? t->sq_count : 0;
    for (uint32_t k = 0; k < n; k++) {
        i = i ? i - 1 : u->store_queue - 1;
        const tm_store *st = &t->sq[i];
        if (st->retire + 1 < issue)
            break; /* committed to the cache before the load issued */
        if (st->addr >= a + size || a >= st->addr + st->size)
            continue;
        bool inside = st->addr <= a && a + size <= st->addr + st->size;
        /* Agner (Zen 2 chapter, "mirroring memory operands"): the match is
         * made at rename on the address expression, so it fails when the
         * base register was rewritten in between (only the stack engine's
         * push/pop/call/ret adjustments are compensated) */
        if (inside && u->memrename && st->expr == expr && expr != UINT64_MAX &&
            (size == 4 || size == 8) && (expr & 0xff) < 16 &&
            st->base_ver == t->wver[expr & 0xff] &&
            ((u->memrename_bases >> (expr & 0xff)) & 1) && ((expr >> 8) & 0xff) == ES_REG_NONE) {
            /* memory renaming (AMD SOG for Zen 2+, "memory file"): the
             * load takes the store's data register directly */
            t->st.stlf++;
            t->st.memrename++;
            return max64(st->data_ready, issue) + u->memrename_latency;
        }
        if (inside && !split && !st->split) {
            t->st.stlf++;
            return max64(issue, st->data_ready) + u->stlf_latency;
        }
        if (st->addr == a && st->size == size) {
            /* a line-split store forwards to a load of exactly its bytes
             * (fit: the train half's struct copies through 16-byte split
             * accesses run at ~10 cycles per store->load round, not the
             * commit-and-reload ~19), one split_penalty more */
            t->st.stlf++;
            return max64(issue, st->data_ready) + u->stlf_latency + u->split_penalty;
        }
        /* partial overlap or a split access: wait until the store has
         * written the cache, then load from it */
        t->st.stlf_fail++;
        return max64(issue, st->retire) + u->stlf_fail_penalty + lat;
    }
    uint32_t extra = data_miss_cycles(t, a) + (split ? u->split_penalty : 0);
    if (split)
        extra += data_miss_cycles(t, a + size);
    return issue + lat + extra;
}

/* The access of the instruction being retired issued at `iss` on a port of
 * `mask`: the DTLB's cycles, and when the L1D holds the line under another
 * linear alias, the pipe replays it (refetched).  With l1d.alias_loads_only
 * a store neither pays nor retrains the micro-tag (Zen 5: a load and a
 * store reaching one line through two linear lines run at the store rate,
 * two such loads do not; README-scoring.md, worst blocks). */
static inline __attribute__((always_inline)) uint64_t translate(es_timing *t, uint32_t mask,
                                                                uint64_t iss, bool load,
                                                                bool tracing)
{
    iss += tm_tlb_cycles(t, &t->dtlb1, &t->dtlb2, t->u.dtlb2.latency, t->pend_ea,
                         &t->st.dtlb_misses);
    if (!load && t->u.alias_loads_only)
        return iss;
    uint32_t ua = utag_cost(t, t->pend_ea, t->pend_pa);
    if (ua)
        iss = tm_port_alloc(t, mask, iss, (uint16_t)ua, tracing) + ua;
    return iss;
}

static inline __attribute__((always_inline)) void load_issue(es_timing *t, const tm_sinfo *s,
                                                             tm_flow *f, bool tracing)
{
    const tm_uarch *u = &t->u;
    uint64_t at = max64(f->dsp, ready_of(t, s->addr));
    uint64_t iss = tm_port_alloc(t, u->ld_mask, at, 1, tracing);
    iss = mem_alloc(t, max64(iss, tm_port_alloc(t, u->ag_mask, iss, 1, tracing))) + s->agu_extra;
    f->issued = iss;
    uint64_t data;
    if (f->has_addr) {
        iss = translate(t, u->ld_mask, iss, true, tracing);
        data = load_ready(t, s, iss, t->pend_pa, t->pend_expr);
    } else {
        data = iss + (s->fp ? u->l1d_fp_latency : u->l1d_latency);
    }
    f->data = max64(data, f->src);
}

/* Two copies, each with `tracing` a constant (see tm_port_alloc). */
void tm_load_issue(es_timing *t, const tm_sinfo *s, tm_flow *f, bool tracing)
{
    if (tracing)
        load_issue(t, s, f, true);
    else
        load_issue(t, s, f, false);
}

/* The store pipe slot of a store whose address is ready at `at`. */
static inline __attribute__((always_inline)) uint64_t store_slot(es_timing *t, const tm_sinfo *s,
                                                                 const tm_flow *f, uint64_t at,
                                                                 bool tracing)
{
    const tm_uarch *u = &t->u;
    uint64_t line = 0;
    if (f->has_addr && u->store_pair_line)
        line = (u->store_pair_shift < 64 ? t->pend_pa >> u->store_pair_shift
                                         : t->pend_pa / u->store_pair_line) + 1;
    uint64_t iss;
    /* vector stores take part in pairing when they share the integer
     * store pipes (lsu.vec_stores_per_cycle = 0) */
    bool pairs = u->store_pair_line && (!s->fp || !u->vec_store_pipes);
    if (pairs && line && line == t->st_pair_line && at <= t->st_pair_cycle) {
        /* two stores to one aligned lsu.store_pair_bytes chunk leave
         * the store pipe together (AMD SOG Zen 4, LS unit: two stores
         * per cycle only when they are to the same line; the sustained
         * rate is otherwise one; the chunk size is fitted): this store
         * rides in the slot of the pairing store just before it when its
         * address is ready by then, at most two to a slot.  A block's
         * only store pairs with itself in the next iteration. */
        iss = t->st_pair_cycle;
        t->st_pair_line = 0;
    } else {
        /* vector store data leaves through the FP unit's own store
         * pipe where the uarch has one (stv_mask = st_mask if not) */
        iss = tm_port_alloc(t, s->fp ? u->stv_mask : u->st_mask, at,
                            (uint16_t)u->store_occupancy, tracing);
        if (pairs) {
            t->st_pair_line = line;
            t->st_pair_cycle = iss;
        }
    }
    return iss;
}

static inline __attribute__((always_inline)) void store_issue(es_timing *t, const tm_sinfo *s,
                                                              tm_flow *f, bool tracing)
{
    const tm_uarch *u = &t->u;
    uint64_t at = max64(f->dsp, ready_of(t, s->addr));
    uint64_t iss = store_slot(t, s, f, at, tracing);
    iss = mem_alloc(t, max64(iss, tm_port_alloc(t, u->ag_mask, iss, 1, tracing)));
    f->issued = max64(f->issued, iss);
    if (f->has_addr)
        iss = translate(t, s->fp ? u->stv_mask : u->st_mask, iss, false, tracing);
    /* data of a plain store is its source register; of a
     * read-modify-write the computed value */
    uint64_t sdata =
        s->load ? f->result : (s->kind == TK_NORMAL && s->cost.ngroups ? f->result : f->src);
    f->complete = max64(f->complete, max64(iss, sdata) + 1);
    if (f->has_addr) {
        data_miss_cycles(t, t->pend_pa); /* write-allocate */
        tm_store *st = &t->sq[t->sq_pos];
        if (t->sq_count == t->u.store_queue)
            sq_lines_add(t, st, -1); /* the oldest entry leaves the queue */
        st->addr = t->pend_pa;
        st->size = s->msize ? s->msize : 8;
        st->split = ((t->pend_pa & 63) + st->size) > 64;
        st->data_ready = sdata;
        st->expr = t->pend_expr;
        st->base_ver = t->pend_expr != UINT64_MAX && (t->pend_expr & 0xff) < 16
                           ? t->wver[t->pend_expr & 0xff] : 0;
        st->retire = UINT64_MAX; /* set by tm_store_retired */
        sq_lines_add(t, st, 1);
    }
}

void tm_store_issue(es_timing *t, const tm_sinfo *s, tm_flow *f, bool tracing)
{
    if (tracing)
        store_issue(t, s, f, true);
    else
        store_issue(t, s, f, false);
}

void tm_store_retired(es_timing *t, uint64_t at)
{
    t->sq[t->sq_pos].retire = at;
    if (++t->sq_pos == t->u.store_queue)
        t->sq_pos = 0;
    if (t->sq_count < t->u.store_queue)
        t->sq_count++;
}
