/* tm_int.h - internals of the cycle model shared by the files of timing/.
 *
 * tables.c  parses the embedded tables/uarch/ data (core parameters, per-form
 *           costs, privileged transitions) into tm_uarch;
 * model.c   the out-of-order core: the observer hooks, dispatch, execute
 *           and in-order retire, the public API (port reservation and the
 *           static-info cache lookup are inline below: every instruction
 *           calls them several times, from more than one file);
 * model_front.c  the front end: per-instruction static info cached per
 *           decode-cache entry (form, costs, register sets), fetch and
 *           decode timing, branch prediction;
 * model_mem.c  the memory side: caches and TLBs, load and store issue,
 *           the store queue with store-to-load forwarding and memory
 *           renaming;
 * throughput.c  BHive-style steady-state block throughput and its command.
 */
#ifndef ENTRYSIM_TM_INT_H
#define ENTRYSIM_TM_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "block.h"
#include "timing.h"

#define TM_MAXPORTS 32  /* physical execution ports (pseudo-ports included) */
#define TM_MAXGROUPS 4  /* port groups per instruction form */

/* One set of uops of a form: n uops, each busy `occ` cycles on one port of
 * `mask` (occ > 1 = not pipelined, e.g. a divider). */
typedef struct tm_group {
    uint32_t mask;
    uint16_t n, occ;
} tm_group;

/* The cost of one instruction form (a row of <uarch>.llvm.tsv, possibly
 * overridden by .published.tsv / .measured.tsv). */
typedef struct tm_cost {
    uint16_t uops, lat;
    uint8_t load, store, ngroups;
    tm_group g[TM_MAXGROUPS];
} tm_cost;

typedef struct tm_row {
    char *form;     /* "add r64, imm8" */
    char *mnem;     /* "add" (after any "lock "/"rep " prefix) */
    tm_cost cost;
} tm_row;

/* Privileged / serialising transitions (<uarch>.priv.tsv, contract with
 * engineer P): the forms the model must cost, in this order. */
enum tm_priv {
    TP_SYSCALL, TP_SYSRET, TP_SYSENTER, TP_SYSEXIT, TP_INT, TP_IRETQ, TP_SWAPGS, TP_WRMSR,
    TP_RDMSR, TP_WRMSR_SPEC_CTRL, TP_MOV_CR3, TP_MOV_CR3_NOFLUSH, TP_MOV_CR_OTHER, TP_LFENCE,
    TP_MFENCE, TP_SFENCE, TP_CPUID, TP_RDTSC, TP_RDTSCP, TP_VMCALL, TP_LGDT, TP_LIDT, TP_LTR,
    TP_CLI, TP_STI, TP_INVLPG, TP_HLT, TP_EXCEPTION, TP_VERW, TP_COUNT, TP_NONE = 0xff
};
extern const char *const tm_priv_names[TP_COUNT];

typedef struct tm_priv_cost {
    uint32_t cycles;
    bool serialising; /* else pipelined: an ordinary instruction of latency `cycles` */
} tm_priv_cost;

/* Geometry and latency of one cache or TLB level. */
typedef struct tm_cache_cfg {
    uint32_t sets, ways, line_shift, latency;
} tm_cache_cfg;

/* Everything the model reads from tables/uarch/ for one microarchitecture. */
typedef struct tm_uarch {
    const char *name;
    /* front end and core widths */
    uint32_t fetch_bytes, decode_width, opcache_entries, opcache_ops, opcache_ways;
    uint32_t dispatch_width, retire_width, rob_entries;
    uint32_t sched_entries;
    uint32_t taken_branch_bubble; /* dead cycles after a taken branch */
    uint32_t taken_ends_group;    /* a taken branch is the last op of its dispatch cycle */
    uint32_t l2_stream_cycles;    /* an L1i miss on the line after the one just fetched, found in
                                   * the L2 (instruction prefetch streaming): these cycles, not the
                                   * L2 latency (0: every miss pays the latency) */
    uint32_t macro_fusion, move_elim, zero_idioms, stack_engine;
    uint32_t sbb_same_independent; /* sbb r, r reads only CF */
    uint32_t mov_alu_fusion; /* an eliminated reg move + the ALU op on its destination: one op */
    uint32_t lea_encoded_zero_disp; /* base+index LEA with an encoded displacement of 0 is
                                     * a three-component one (the "m" row) */
    uint32_t mov_alu_fusion_read_alu; /* a later read of the fused result (not by a move)
                                       * makes the move take an ALU after all */
    uint32_t cmov_multi_flag; /* extra ops and cycles (from the flags) of a CMOVcc whose
                               * condition reads two or more flags */
    /* load / store */
    uint32_t load_pipes, store_pipes, vec_store_pipes, agus;
    uint32_t store_occupancy; /* cycles a store holds its store pipe */
    uint32_t mem_ops_per_kcycle; /* sustained memory operations per 1000 cycles (0: AGUs only) */
    uint32_t store_pair_line; /* bytes (0: off): a scalar store to the same aligned chunk as the
                               * scalar store just before it shares that store's pipe slot */
    uint32_t store_pair_shift; /* log2 of store_pair_line when a power of two, else 64 (divide) */
    uint32_t load_queue, store_queue;
    uint32_t stlf_latency, stlf_fail_penalty, split_penalty;
    uint32_t memrename, memrename_latency, memrename_bases; /* bases: GPR bit mask */
    uint32_t complex_addr_latency; /* added to a load whose address is base+index+disp or scaled */
    uint32_t alias_penalty; /* an L1D access through a second linear alias of a physical line */
    uint32_t alias_loads_only; /* only loads look the line up by its linear micro-tag (and retrain it) */
    uint32_t l1d_latency, l1d_fp_latency;
    uint32_t llvm_load_latency, llvm_fp_load_latency; /* what llvm rows include */
    uint32_t mem_latency;
    tm_cache_cfg l1i, l1d, l2, l3;
    tm_cache_cfg itlb1, itlb2, dtlb1, dtlb2;
    uint32_t pagewalk_latency;
    /* branch prediction */
    uint32_t bht_entries, btb_entries, ras_entries, mispredict_penalty;
    /* ports */
    int nports;
    char port_name[TM_MAXPORTS][16];
    uint32_t ld_mask, st_mask, stv_mask, ag_mask; /* the load/store unit's pseudo-ports */
    /* per-form costs */
    tm_row *rows;
    size_t nrows;
    uint32_t *hash; /* open addressing over rows by form string; size hmask+1 */
    uint32_t hmask;
    tm_cost dflt;   /* forms no table knows (default.* in the .cfg) */
    tm_priv_cost priv[TP_COUNT];
} tm_uarch;

/* Loads `name` from the embedded tables; 0 or -1 with a message. */
int tm_uarch_load(tm_uarch *u, const char *name, char *err, size_t errlen);
void tm_uarch_free(tm_uarch *u);
/* Row of a form string, NULL if the tables have no such form. */
const tm_row *tm_find_form(const tm_uarch *u, const char *form);
/* Best row for a mnemonic and operand kinds that are not an exact form
 * (imm8 vs imm32, r16 vs r32 ...); NULL when the mnemonic is unknown. */
const tm_row *tm_find_similar(const tm_uarch *u, const char *mnem, const char *const *kinds,
                              int nkinds);

/* ---- the model's state, shared by model.c, model_front.c, model_mem.c ---- */

/* Cycles of port reservation kept per port: enough for the ROB's worth of
 * uops in flight; small enough to stay in the host's L2. */
#define TM_SLOTW 512u

/* Register file indices of the dependency tracker. */
enum { TR_GPR = 0, TR_FLAGS = 16, TR_XMM = 17, TR_X87 = 33, TR_COUNT = 34 };

enum tm_kind { TK_NORMAL, TK_MOVE, TK_ZERO };
enum tm_branch { TB_NONE, TB_COND, TB_JMP, TB_INDIRECT, TB_CALL, TB_CALL_INDIRECT, TB_RET };
enum tm_memkind { TM_NOADDR = 0, TM_EXPLICIT, TM_PUSH, TM_POP };

typedef struct tm_sinfo {
    uint64_t key; /* the decode-cache entry's key and generation it describes */
    uint32_t gen;
    uint64_t src, dst, addr; /* register masks (TR_* bits) */
    uint64_t expr; /* an explicit memory operand's address expression (memory
                      renaming matches on it): base, index, scale, disp, size */
    tm_cost cost;
    uint16_t oplat;   /* latency after the load data arrived (load forms) */
    uint8_t kind, branch, fusible, priv; /* priv: enum tm_priv or TP_NONE */
    uint8_t load, store, memkind, memop, msize, fp;
    uint8_t stack; /* RSP updated by the stack engine */
    uint8_t len;
    uint8_t agu_extra; /* cycles a complex address adds before the load (lsu.complex_addr_latency) */
    uint8_t flag_extra; /* cycles the flags take on the way in (rename.cmov_multi_flag) */
    uint8_t movfuse; /* fuses with an eliminated move just before it (rename.mov_alu_fusion) */
} tm_sinfo;

typedef struct tm_store {
    uint64_t addr, data_ready, retire, expr;
    uint32_t size;
    uint32_t split;
    uint32_t base_ver; /* write count of the base register when the store renamed */
} tm_store;

#define TM_UTAGS 1024 /* physical lines whose linear alias the model remembers */
#define TM_SQ_BUCKETS 256 /* store-queue line filter (sq_lines) */
#define TM_HINTS 256 /* way hints per cache: O(1) hits in highly associative TLBs */

typedef struct tm_cache {
    uint64_t *tag, *stamp;
    uint32_t sets, ways, shift, setmask; /* setmask: sets - 1 when a power of two, else 0 */
    uint64_t clock, last; /* last line hit (fast path) */
    uint16_t hint[TM_HINTS]; /* way where a line hashing here was last found */
} tm_cache;

struct es_timing {
    tm_uarch u;
    es_machine *m;
    tm_sinfo *sc;     /* one per decode-cache entry, then one per block entry (tm_sinfo_of) */
    tm_sinfo scratch; /* page-crossing instructions (not cached by the core) */

    /* set by the before hook for the retire hook */
    const tm_sinfo *pend;
    uint64_t pend_ea, pend_pa, pend_expr;
    uint8_t pend_priv;

    /* clocks */
    uint64_t fe_cycle, serial_until, last_retire, prev_retire;
    uint64_t iline_ready; /* the cycle the line being fetched arrived (fetch.l2_stream_cycles_per_line) */
    uint64_t ucode_free; /* the microcode sequencer's next free cycle */
    uint32_t fe_used, retire_used, dec_used;
    uint64_t dec_cycle;
    uint64_t ready[TR_COUNT];
    /* writes per register, except the stack engine's RSP updates: memory
     * renaming matches a load to a store only while the base register
     * still holds the same value (same rename generation) */
    uint32_t wver[TR_COUNT];
    uint64_t *rob;
    uint32_t rob_pos; /* index of the next uop's ROB entry */
    /* scheduler: the cycle each of the last sched.*_entries uops issued; a
     * uop dispatches only once the one that many older has left (else a
     * port-bound stream would queue without bound behind the ROB) */
    uint64_t *sched;
    uint32_t sched_pos;
    /* the linear line that last touched each physical line (direct-mapped
     * by physical line): AMD's L1D finds a line through a linear-address
     * micro-tag, so a second linear alias of the same physical line misses
     * it and is refetched (AMD SOG "linear aliasing"; BHive maps every page
     * onto one physical page, so RSP and other bases alias) */
    uint64_t utag_pa[TM_UTAGS], utag_va[TM_UTAGS];
    uint32_t *slot; /* [port][TM_SLOTW]: (cycle + 1) a port is busy in, 32-bit stamps */
    /* memory operations issued per cycle (lsu.mem_ops_per_1000_cycles):
     * count and (cycle + 1) stamp per slot of the same window */
    uint8_t mem_used[TM_SLOTW];
    uint32_t mem_stamp[TM_SLOTW];
    tm_store *sq;
    uint32_t sq_pos, sq_count; /* next store's entry; entries in use */
    /* how many store-queue entries touch a 64-byte line hashing to each
     * bucket: a load whose lines' buckets are empty overlaps no store in
     * the queue, and skips the scan (model_mem.c, sq_lines_add) */
    uint16_t sq_lines[TM_SQ_BUCKETS];
    /* store pairing (lsu.store_pair_bytes): physical chunk + 1 of the
     * last scalar store that took a store-pipe slot of its own (0: none, or
     * already paired) and the cycle of that slot */
    uint64_t st_pair_line, st_pair_cycle;
    /* fusion: end rip of the last fusible cmp/test and its result */
    uint64_t fuse_rip, fuse_ready;
    uint64_t mfuse_rip, mfuse_dst; /* after an eliminated GPR move: where it ends, what it wrote */
    uint64_t mfused_live, mfused_at; /* the GPRs a fused pair wrote, unread and not rewritten since,
                                      * and the cycle its op issued */

    tm_cache l1i, l1d, l2, l3, itlb1, itlb2, dtlb1, dtlb2, opc;
    uint64_t last_iline, last_ipage;
    bool iline_in_opc;

    uint8_t *bht;
    uint64_t ghist;
    /* --speculate: on; the last branch's outcome for retire_insn (missed,
     * and where the predictor sent the front end: UINT64_MAX = nowhere) */
    bool spec_on, last_miss;
    uint64_t pred_next;
    es_spec_fn spec_fn; /* es_timing_set_spec_hook */
    void *spec_ctx;
    uint64_t *btb;
    uint64_t *ras;
    uint32_t ras_top;

    es_timing_stats st;

    /* pipeline trace (es_timing_set_tracer): tr.insn NULL = off; rec is
     * the instruction being costed, its uops filled by tm_port_alloc */
    es_timing_tracer tr;
    es_timing_insn rec;
    uint64_t pend_rip; /* the before hook's instruction (a fault flushes it) */
};

/* Times of one instruction on its way through the core (on_retire in
 * model.c fills it; the load/store issue of model_mem.c reads and
 * advances it). */
typedef struct tm_flow {
    uint64_t dsp;      /* dispatch cycle */
    uint64_t src;      /* register operands ready */
    uint64_t data;     /* operands ready, the load's data included */
    uint64_t issued;   /* the last cycle a uop of the instruction issued */
    uint64_t result;   /* its register result ready */
    uint64_t complete; /* every uop done: it may retire */
    bool has_addr;     /* the before hook computed its address (pend_ea, pend_pa) */
} tm_flow;

static inline uint64_t max64(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* The cycle the last of the registers in `mask` (TR_* bits) is ready. */
static inline uint64_t ready_of(const es_timing *t, uint64_t mask)
{
    uint64_t r = 0;
    for (; mask; mask &= mask - 1)
        r = max64(r, t->ready[__builtin_ctzll(mask)]);
    return r;
}

static inline bool tm_port_free(const uint32_t *s, uint64_t c, uint16_t occ)
{
    for (uint16_t k = 0; k < occ; k++)
        if (s[(c + k) & (TM_SLOTW - 1)] == (uint32_t)(c + k + 1)) /* cycle + 1: 0 = never */
            return false;
    return true;
}

/* A pipeline trace is on: port reservation kept for the tracer (model.c;
 * out of line so that the reservation below stays small when it is off). */
__attribute__((cold, noinline)) void tm_trace_uop(es_timing *t, uint64_t cycle, uint16_t occ,
                                                  int port);

/* Port reservation (model.c's execute, model_mem.c's load/store issue):
 * reserves one uop busy `occ` cycles on a port of `mask` at the first cycle
 * >= at; returns that cycle.  Inline: several calls per instruction.
 * `tracing` is a constant in every caller's inlined copy (retire_insn's
 * two instantiations), so the untraced model has no tracer test here: one
 * load-and-branch per reservation was 2.9% of the host instructions of
 * `run --timing` (callgrind, sieve_hash). */
static inline __attribute__((always_inline)) uint64_t tm_port_alloc(es_timing *t, uint32_t mask,
                                                                    uint64_t at, uint16_t occ,
                                                                    bool tracing)
{
    if (!mask)
        return at;
    for (uint64_t c = at;; c++) {
        for (uint32_t mm = mask; mm; mm &= mm - 1) {
            uint32_t *s = t->slot + (size_t)__builtin_ctz(mm) * TM_SLOTW;
            /* past half the window everything older is stale anyway:
             * take the slot (bounded work for pathological streams) */
            if (tm_port_free(s, c, occ) || c - at >= TM_SLOTW / 2) {
                for (uint16_t k = 0; k < occ; k++)
                    s[(c + k) & (TM_SLOTW - 1)] = (uint32_t)(c + k + 1);
                if (tracing)
                    tm_trace_uop(t, c, occ, __builtin_ctz(mm));
                return c;
            }
        }
    }
}

/* model.c: the linear address of memory operand o of d (as the before
 * hook computes it). */
uint64_t tm_linear_of(es_machine *m, const es_insn *d, const es_operand *o);

/* speculate.c: the wrong path from `from` after a mispredicted
 * conditional branch dispatched at dsp that resolves at `resolve`
 * (UINT64_MAX from: the predictor had no target). */
void tm_speculate(es_timing *t, es_machine *m, uint64_t from, uint64_t dsp, uint64_t resolve);

/* model_front.c */
/* Builds the static information of the instruction d at rip into s. */
void tm_build_sinfo(es_timing *t, es_machine *m, const es_insn *d, uint64_t rip, tm_sinfo *s);

#define TM_DC_SLOTS (1u << ES_DCACHE_BITS)

/* Static information of the instruction d at rip, cached per decode-cache
 * entry and per block entry (inline: asked for by every instruction, built once per entry). */
static inline tm_sinfo *tm_sinfo_at(es_timing *t, es_machine *m, const es_insn *d, uint64_t rip,
                                    size_t idx, uint64_t key, uint32_t gen)
{
    tm_sinfo *s = &t->sc[idx];
    if (s->key == key && s->gen == gen)
        return s;
    tm_build_sinfo(t, m, d, rip, s);
    s->key = key;
    s->gen = gen;
    return s;
}

static inline const tm_sinfo *tm_sinfo_of(es_timing *t, es_machine *m, const es_insn *d, uint64_t rip)
{
    if (m->obs_bent) { /* a block entry's (es_run through blocks): after the decode cache's */
        uint64_t tag;
        uint32_t slot = es_bent_slot(d, &tag);
        return tm_sinfo_at(t, m, d, rip, TM_DC_SLOTS + slot, tag, 0);
    }
    const es_dentry *e = (const es_dentry *)((const char *)d - offsetof(es_dentry, insn));
    size_t idx = (size_t)(e - m->dcache);
    if (e->key && idx < TM_DC_SLOTS)
        return tm_sinfo_at(t, m, d, rip, idx, e->key, e->gen);
    tm_build_sinfo(t, m, d, rip, &t->scratch);
    return &t->scratch;
}
/* Cycle at which the instruction at rip, `ops` ops from the op cache, can be dispatched. */
uint64_t tm_front_end(es_timing *t, uint64_t rip, uint32_t ops);
/* Fetch and dispatch restart at cycle `at` (mispredict, serialisation). */
void tm_redirect(es_timing *t, uint64_t at);
/* A retired branch from rip to next whose condition/target was ready at
 * `resolved`: prediction, and the front end's redirect or bubble. */
void tm_branch(es_timing *t, const tm_sinfo *s, uint64_t rip, uint64_t next, uint64_t resolved);

/* model_mem.c */
int tm_cache_init(tm_cache *c, const tm_cache_cfg *g);
void tm_cache_free(tm_cache *c);
/* Looks up (and on a miss fills) the line of addr; true on a hit. */
bool tm_cache_access(tm_cache *c, uint64_t addr);
void tm_cache_flush(tm_cache *c);
void tm_cache_evict(tm_cache *c, uint64_t addr);
/* CLFLUSH: the line of physical address pa leaves L1D, L2 and L3. */
void tm_data_evict(es_timing *t, uint64_t pa);
/* Cycles a two-level TLB adds to an access at va (0 on a first-level hit). */
uint32_t tm_tlb_cycles(es_timing *t, tm_cache *l1, tm_cache *l2, uint32_t l2_latency,
                       uint64_t va, uint64_t *misses);
/* Issue of the load of s: sets f->issued and f->data. */
void tm_load_issue(es_timing *t, const tm_sinfo *s, tm_flow *f, bool tracing);
/* Issue of the store of s: advances f->issued and f->complete and fills
 * the store queue's next entry (tm_store_retired commits it). */
void tm_store_issue(es_timing *t, const tm_sinfo *s, tm_flow *f, bool tracing);
/* The store just issued retired at cycle `at`: its queue entry is in use. */
void tm_store_retired(es_timing *t, uint64_t at);

#endif
