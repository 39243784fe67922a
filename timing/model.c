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
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"
#include "tm_int.h"
#include "es_isa_timing.h"

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
    tm_cost cost;
    uint16_t oplat;   /* latency after the load data arrived (load forms) */
    uint8_t kind, branch, fusible, priv; /* priv: enum tm_priv or TP_NONE */
    uint8_t load, store, memkind, memop, msize, fp;
    uint8_t stack; /* RSP updated by the stack engine */
    uint8_t len;
    uint8_t agu_extra; /* cycles a complex address adds before the load (lsu.complex_addr_latency) */
} tm_sinfo;

typedef struct tm_store {
    uint64_t addr, data_ready, retire, expr;
    uint32_t size;
    uint32_t split;
    uint32_t base_ver; /* write count of the base register when the store renamed */
} tm_store;

#define TM_UTAGS 1024 /* physical lines whose linear alias the model remembers */
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
    tm_sinfo *sc;     /* one per decode-cache entry */
    tm_sinfo scratch; /* page-crossing instructions (not cached by the core) */

    /* set by the before hook for the retire hook */
    const tm_sinfo *pend;
    uint64_t pend_ea, pend_pa, pend_expr;
    uint8_t pend_priv;

    /* clocks */
    uint64_t fe_cycle, serial_until, last_retire, prev_retire;
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
    /* store pairing (lsu.store_pair_bytes): physical chunk + 1 of the
     * last scalar store that took a store-pipe slot of its own (0: none, or
     * already paired) and the cycle of that slot */
    uint64_t st_pair_line, st_pair_cycle;
    /* fusion: end rip of the last fusible cmp/test and its result */
    uint64_t fuse_rip, fuse_ready;

    tm_cache l1i, l1d, l2, l3, itlb1, itlb2, dtlb1, dtlb2, opc;
    uint64_t last_iline, last_ipage;
    bool iline_in_opc;

    uint8_t *bht;
    uint64_t ghist;
    uint64_t *btb;
    uint64_t *ras;
    uint32_t ras_top;

    es_timing_stats st;
};

/* ---- caches and TLBs: set-associative, true LRU by stamp ---- */

static int cache_init(tm_cache *c, const tm_cache_cfg *g)
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

static void cache_free(tm_cache *c)
{
    free(c->tag);
    free(c->stamp);
}

/* Looks up (and on a miss fills) the line of addr; true on a hit. */
static bool cache_access(tm_cache *c, uint64_t addr)
{
    uint64_t line = addr >> c->shift;
    if (line == c->last)
        return true;
    c->last = line;
    /* index bits as the hardware takes them; non-power-of-two set counts
     * (op cache) by a multiplicative range reduction, no division */
    uint32_t si = c->setmask || c->sets == 1
                      ? (uint32_t)(line & c->setmask)
                      : (uint32_t)(((uint64_t)(uint32_t)(line * 0x9e3779b1u) * c->sets) >> 32);
    size_t set = (size_t)si * c->ways;
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

static void cache_flush(tm_cache *c)
{
    memset(c->tag, 0xff, (size_t)c->sets * c->ways * sizeof *c->tag);
    c->last = UINT64_MAX;
}

/* Extra cycles of a data access at physical address pa beyond an L1 hit. */
static uint32_t data_miss_cycles(es_timing *t, uint64_t pa)
{
    if (cache_access(&t->l1d, pa))
        return 0;
    t->st.l1d_misses++;
    if (cache_access(&t->l2, pa))
        return t->u.l2.latency - t->u.l1d.latency;
    t->st.l2_misses++;
    if (cache_access(&t->l3, pa))
        return t->u.l3.latency - t->u.l1d.latency;
    t->st.l3_misses++;
    return t->u.mem_latency - t->u.l1d.latency;
}

static uint32_t tlb_cycles(es_timing *t, tm_cache *l1, tm_cache *l2, uint32_t l2_latency,
                           uint64_t va, uint64_t *misses)
{
    if (cache_access(l1, va))
        return 0;
    (*misses)++;
    if (cache_access(l2, va))
        return l2_latency;
    return l2_latency + t->u.pagewalk_latency;
}

/* ---- port reservation ---- */

static inline bool port_free(const uint32_t *s, uint64_t c, uint16_t occ)
{
    for (uint16_t k = 0; k < occ; k++)
        if (s[(c + k) & (TM_SLOTW - 1)] == (uint32_t)(c + k + 1)) /* cycle + 1: 0 = never */
            return false;
    return true;
}

/* Reserves one uop busy `occ` cycles on a port of `mask` at the first cycle
 * >= at; returns that cycle. */
static uint64_t port_alloc(es_timing *t, uint32_t mask, uint64_t at, uint16_t occ)
{
    if (!mask)
        return at;
    for (uint64_t c = at;; c++) {
        for (uint32_t mm = mask; mm; mm &= mm - 1) {
            uint32_t *s = t->slot + (size_t)__builtin_ctz(mm) * TM_SLOTW;
            /* past half the window everything older is stale anyway:
             * take the slot (bounded work for pathological streams) */
            if (port_free(s, c, occ) || c - at >= TM_SLOTW / 2) {
                for (uint16_t k = 0; k < occ; k++)
                    s[(c + k) & (TM_SLOTW - 1)] = (uint32_t)(c + k + 1);
                return c;
            }
        }
    }
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

/* ---- static information of one instruction ---- */

static const char *kind_name(const es_insn *d, int i, char *buf, size_t n)
{
    const es_operand *o = &d->o[i];
    switch (o->kind) {
    case ES_OPK_GPR:
        if (o->size == 1 && o->reg == ES_RCX && i > 0 && (es_isa_timing[d->op] & TC_SHIFT_CL))
            return "cl";
        snprintf(buf, n, "r%d", o->size * 8);
        return buf;
    case ES_OPK_HI8:
        return "r8";
    case ES_OPK_XMM:
        return o->size >= 64 ? "zmm" : o->size == 32 ? "ymm" : "xmm";
    case ES_OPK_MMX:
        return "mm";
    case ES_OPK_ST:
        return "st";
    case ES_OPK_SEG: {
        static const char *const segs[] = {"es", "cs", "ss", "ds", "fs", "gs", "", ""};
        return segs[o->reg & 7];
    }
    case ES_OPK_CR:
        snprintf(buf, n, "cr%d", o->reg);
        return buf;
    case ES_OPK_DR:
        snprintf(buf, n, "dr%d", o->reg);
        return buf;
    case ES_OPK_MEM:
        if (o->base == ES_REG_RIP && o->size == 8)
            return "m64[rip]";
        if (o->size == 0 || o->size > 64)
            return "m";
        snprintf(buf, n, "m%d", o->size * 8);
        return buf;
    case ES_OPK_AGEN:
        if (o->base == ES_REG_RIP)
            return "m[rip]";
        /* base+index+displacement: the table's general "m" row (its
         * example is lea rbx, [rdi+rsi*4+8]); LLVM's IsThreeOperandsLEA
         * predicate, the slow LEA on Zen, does not look at the scale */
        if (o->index != ES_REG_NONE)
            return o->base < 16 && o->disp ? "m" : "m[base+index]";
        return o->disp ? "m[base+disp]" : "m[base]";
    case ES_OPK_IMM:
        if (o->imm == 1 && (d->opcode == 0xd0 || d->opcode == 0xd1) && d->opmap == 0)
            return "one";
        snprintf(buf, n, "imm%d", o->size ? o->size * 8 : 8);
        return buf;
    case ES_OPK_REL:
        return "rel";
    default:
        return "?";
    }
}

/* Condition-code families share one cost: the tables list one member
 * (isa.tbl's cc= class names it). */
static const char *cc_family(unsigned op)
{
    return tc_cc_rows[(es_isa_timing[op] & TC_CC_MASK) >> TC_CC_SHIFT];
}

static const tm_row *lookup_form(const tm_uarch *u, const es_insn *d, const char *name,
                                 bool zero, char *form, size_t formlen)
{
    const char *kinds[4];
    char kb[4][16];
    int nk = d->nops < 4 ? d->nops : 4;
    for (int i = 0; i < nk; i++)
        kinds[i] = kind_name(d, i, kb[i], sizeof kb[i]);
    const char *pfx = (d->pfx & ES_PFX_LOCK) ? "lock " : "";
    const tm_row *r = NULL;
    for (int pass = 0; pass < 2 && !r; pass++) {
        const char *mn = pass ? cc_family(d->op) : name;
        if (!mn)
            break;
        int n = snprintf(form, formlen, "%s%s", pfx, mn);
        for (int i = 0; i < nk; i++)
            n += snprintf(form + n, formlen - n, "%s%s", i ? ", " : " ", kinds[i]);
        if (zero) {
            char z[192];
            snprintf(z, sizeof z, "%s (zero idiom)", form);
            r = tm_find_form(u, z);
        }
        if (!r)
            r = tm_find_form(u, form);
        if (!r)
            r = tm_find_similar(u, mn, kinds, nk);
    }
    return r;
}

/* `op r, r` of a zero-idiom op (isa.tbl class zero_idiom). */
static bool is_zero_idiom(const es_insn *d, uint32_t tc)
{
    if (!(tc & TC_ZERO_IDIOM) || d->nops < 2)
        return false;
    const es_operand *a = &d->o[d->nops - 2], *b = &d->o[d->nops - 1];
    if (a->kind != b->kind || a->reg != b->reg ||
        (a->kind != ES_OPK_GPR && a->kind != ES_OPK_XMM))
        return false;
    return d->nops != 3 || d->o[0].kind == a->kind;
}

/* Register-to-register moves the renamer eliminates (SDM-level behaviour
 * documented for both vendors: AMD SOG 2.10 "move elimination", Intel ORM
 * 3.5.1.12); 8/16-bit moves merge and are not eliminated. */
static bool is_move(const es_insn *d, uint32_t tc)
{
    if (!(tc & TC_MOVE) || d->nops != 2 || d->o[0].kind != d->o[1].kind)
        return false;
    if (d->o[0].kind == ES_OPK_GPR)
        return d->o[0].size >= 4 && d->o[0].size == d->o[1].size;
    return d->o[0].kind == ES_OPK_XMM;
}

static uint8_t priv_of(const es_insn *d, uint32_t tc)
{
    if ((tc & TC_MOV_CR) && d->nops == 2 && d->o[0].kind == ES_OPK_CR)
        return d->o[0].reg == 3 ? TP_MOV_CR3 : TP_MOV_CR_OTHER;
    return TC_PRIV_OF(tc);
}

/* The row of the instruction with its memory operand replaced by a
 * register of the same width, NULL when the tables have none. */
static const tm_row *regform_of(const tm_uarch *u, const es_insn *d, const char *name, int memop)
{
    char form[160], kb[16];
    int n = snprintf(form, sizeof form, "%s%s", (d->pfx & ES_PFX_LOCK) ? "lock " : "", name);
    for (int i = 0; i < d->nops && i < 4; i++) {
        const char *k;
        if (i == memop) {
            unsigned sz = d->o[i].size;
            k = sz == 32 ? "ymm" : sz == 16 ? "xmm" : NULL;
            if (!k && (sz == 1 || sz == 2 || sz == 4 || sz == 8)) {
                snprintf(kb, sizeof kb, "r%u", sz * 8);
                k = kb;
            }
            if (!k)
                return NULL;
        } else {
            k = kind_name(d, i, kb, sizeof kb);
        }
        n += snprintf(form + n, sizeof form - n, "%s%s", i ? ", " : " ", k);
    }
    return tm_find_form(u, form);
}

static uint64_t gpr_bits(uint16_t m) { return (uint64_t)m << TR_GPR; }

static void build_sinfo(es_timing *t, es_machine *m, const es_insn *d, uint64_t rip,
                        tm_sinfo *s)
{
    const tm_uarch *u = &t->u;
    const char *name = es_op_name(d->op);
    const uint32_t tc = es_isa_timing[d->op]; /* isa.tbl's timing classes */
    memset(s, 0, sizeof *s);
    s->len = d->len;
    s->memop = 0xff;
    s->priv = priv_of(d, tc);
    bool zero = u->zero_idioms && is_zero_idiom(d, tc);
    /* sbb r, r is all ones or zero from CF alone: where the renamer
     * knows it (rename.sbb_same_reg_independent) the register is no
     * source, but the flags still are and the op still executes */
    bool sbb_same = u->sbb_same_independent && (tc & TC_SBB_IDIOM) && d->nops == 2 &&
                    d->o[0].kind == ES_OPK_GPR && d->o[1].kind == ES_OPK_GPR &&
                    d->o[0].reg == d->o[1].reg;
    char form[160];
    const tm_row *r = lookup_form(u, d, name, zero, form, sizeof form);
    s->cost = r ? r->cost : u->dflt;
    if (s->cost.uops == 0)
        s->cost.uops = 1;
    if (s->priv != TP_NONE && !u->priv[s->priv].serialising) {
        /* a pipelined privileged form (swapgs, rdmsr, rdtsc, vmcall...) is
         * a microcoded sequence: one dispatch slot, and the microcode
         * sequencer held for the priv table's cycles (on_retire), so
         * back-to-back copies run at that rate as measured
         * (znver4.priv.tsv: rdtsc 36 back to back).  LLVM's rows for these
         * forms are placeholders (100 uops on every ALU). */
        s->cost.uops = 1;
        s->cost.load = s->cost.store = 0;
        s->cost.ngroups = 0;
    }

    /* registers, including implicit operands */
    es_access_info ai = {0};
    uint8_t buf[16];
    uint64_t lin = (rip + m->seg[ES_SEG_CS].base) & m->ipmask;
    size_t got = es_fetch_bytes(m, lin, buf, d->len);
    if (got == d->len)
        es_decode_access(buf, got, d->mode, rip, &ai);
    uint64_t addr = 0, explicit_regs = 0;
    for (int i = 0; i < d->nops; i++) {
        const es_operand *o = &d->o[i];
        if (o->kind == ES_OPK_MEM) {
            s->memop = (uint8_t)i;
            s->msize = o->size;
            if (o->base < 16)
                addr |= 1ull << o->base;
            if (o->index < 16)
                addr |= 1ull << o->index;
        } else if (o->kind == ES_OPK_AGEN) {
            /* lea computes from its address registers: they are sources
             * (es_decode_access reports no read for an AGEN operand) */
            if (o->base < 16)
                s->src |= 1ull << o->base;
            if (o->index < 16)
                s->src |= 1ull << o->index;
        } else if (o->kind == ES_OPK_GPR || o->kind == ES_OPK_HI8) {
            explicit_regs |= 1ull << o->reg;
            /* 8/16-bit destinations merge into the old value */
            if (o->write && (o->size < 4 || o->kind == ES_OPK_HI8))
                s->src |= 1ull << o->reg;
        } else if (o->kind == ES_OPK_XMM) {
            uint64_t bit = 1ull << (TR_XMM + o->reg);
            if (o->write) {
                s->dst |= bit;
                if (i == 0 && d->nops == 2 && !(tc & TC_DEST_ONLY) && !is_move(d, tc))
                    s->src |= bit;
            } else {
                s->src |= bit;
            }
            s->fp = 1;
        } else if (o->kind == ES_OPK_ST) {
            s->src |= 1ull << TR_X87;
            s->dst |= 1ull << TR_X87;
        }
    }
    if (tc & TC_X87) { /* x87: the stack as one register */
        s->src |= 1ull << TR_X87;
        s->dst |= 1ull << TR_X87;
    }
    s->addr = addr;
    s->src |= gpr_bits(ai.gpr_read) & ~(addr & ~explicit_regs);
    s->dst |= gpr_bits(ai.gpr_write);
    /* a conditional write merges into the old value (cmovne rax, rdx
     * waits for rax as well as rdx and the flags) */
    s->src |= gpr_bits(ai.gpr_condwrite);
    if (ai.flags_read)
        s->src |= 1ull << TR_FLAGS;
    if (ai.flags_written)
        s->dst |= 1ull << TR_FLAGS;
    if (zero) {
        s->kind = TK_ZERO;
        s->src = 0;
    } else if (sbb_same) {
        s->src = 1ull << TR_FLAGS;
    } else if (u->move_elim && is_move(d, tc)) {
        s->kind = TK_MOVE;
    }

    /* memory */
    if (s->memop != 0xff) {
        const es_operand *o = &d->o[s->memop];
        s->memkind = TM_EXPLICIT;
        s->store = o->write;
        s->load = r ? (r->cost.load || !o->write) : (!o->write || !(tc & TC_DEST_ONLY));
        if (o->write && r && !r->cost.load)
            s->load = 0;
        if (tc & TC_NOADDR)
            s->load = s->store = 0, s->memkind = TM_NOADDR;
        /* three-component (base+index+displacement) or scaled-index
         * addresses take the AGU an extra cycle */
        if (o->index != ES_REG_NONE && (o->scale > 1 || o->disp != 0))
            s->agu_extra = (uint8_t)u->complex_addr_latency;
    } else if (tc & (TC_PUSH | TC_CALL)) {
        s->memkind = TM_PUSH;
        s->store = 1;
        s->msize = d->mode == ES_MODE_64 ? 8 : 4;
        if ((tc & TC_PUSH) && d->osize)
            s->msize = d->osize;
    } else if (tc & (TC_POP | TC_RET)) {
        s->memkind = TM_POP;
        s->load = 1;
        s->msize = d->mode == ES_MODE_64 ? 8 : 4;
        if ((tc & TC_POP) && d->osize)
            s->msize = d->osize;
    }
    if (s->memkind == TM_PUSH || s->memkind == TM_POP) {
        s->addr = 1ull << ES_RSP;
        if (u->stack_engine) {
            /* the stack engine keeps RSP's offset at rename (AMD SOG
             * 2.11 "stack pointer tracking"; Intel ORM 3.4.2.5) */
            s->stack = 1;
            s->src &= ~(1ull << ES_RSP);
            s->addr = 0;
        }
    }
    if (s->load) {
        /* the operation after the load costs what the register form of
         * the same instruction costs ("xor r64, m64" -> "xor r64, r64");
         * the load itself is timed by the LSU model */
        const tm_row *rr = s->memop != 0xff ? regform_of(u, d, name, s->memop) : NULL;
        uint32_t ll = s->fp ? u->llvm_fp_load_latency : u->llvm_load_latency;
        if (tc & TC_PLAIN_LOAD)
            s->oplat = 0; /* a plain load (extension included): the LSU's latency only */
        else if (rr)
            s->oplat = rr->cost.lat;
        else
            s->oplat = s->cost.lat > ll ? (uint16_t)(s->cost.lat - ll) : 0;
    } else {
        s->oplat = s->cost.lat;
    }

    /* branches */
    bool rel = false;
    for (int i = 0; i < d->nops; i++)
        rel |= d->o[i].kind == ES_OPK_REL;
    if (tc & TC_CALL)
        s->branch = rel ? TB_CALL : TB_CALL_INDIRECT;
    else if (tc & TC_RET)
        s->branch = TB_RET;
    else if (tc & TC_JMP)
        s->branch = rel ? TB_JMP : TB_INDIRECT;
    else if (rel)
        s->branch = TB_COND;
    s->fusible = u->macro_fusion && (tc & TC_FUSIBLE) &&
                 !(s->memop != 0xff && d->nops == 2 && d->o[1].kind == ES_OPK_IMM);
}

static const tm_sinfo *sinfo_of(es_timing *t, es_machine *m, const es_insn *d, uint64_t rip)
{
    const es_dentry *e = (const es_dentry *)((const char *)d - offsetof(es_dentry, insn));
    size_t idx = (size_t)(e - m->dcache);
    if (e->key && idx < (1u << ES_DCACHE_BITS)) {
        tm_sinfo *s = &t->sc[idx];
        if (s->key == e->key && s->gen == e->gen)
            return s;
        build_sinfo(t, m, d, rip, s);
        s->key = e->key;
        s->gen = e->gen;
        return s;
    }
    build_sinfo(t, m, d, rip, &t->scratch);
    return &t->scratch;
}

/* ---- observer hooks ---- */

static uint64_t linear_of(es_machine *m, const es_insn *d, const es_operand *o, uint64_t rip)
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
    (void)rip;
    return a;
}

static void on_before(void *ctx, es_machine *m, const es_insn *d, uint64_t rip)
{
    es_timing *t = ctx;
    const tm_sinfo *s = sinfo_of(t, m, d, rip);
    t->pend = s;
    t->pend_priv = s->priv;
    if (s->priv == TP_WRMSR && (uint32_t)m->gpr[ES_RCX] == 0x48)
        t->pend_priv = TP_WRMSR_SPEC_CTRL;
    else if (s->priv == TP_MOV_CR3 && d->o[1].kind == ES_OPK_GPR &&
             (m->cr4 & (1u << 17)) && (m->gpr[d->o[1].reg] >> 63))
        t->pend_priv = TP_MOV_CR3_NOFLUSH; /* SDM Vol. 3A 4.10.4.1: bit 63 with CR4.PCIDE */
    if (s->memkind == TM_NOADDR) {
        t->pend_ea = UINT64_MAX;
        return;
    }
    uint64_t ea;
    if (s->memkind == TM_EXPLICIT) {
        const es_operand *o = &d->o[s->memop];
        ea = linear_of(m, d, o, rip);
        t->pend_expr = (uint64_t)o->base | (uint64_t)o->index << 8 | (uint64_t)o->scale << 16 |
                       (uint64_t)(uint32_t)o->disp << 24 | (uint64_t)o->size << 56;
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

static inline uint64_t max64(uint64_t a, uint64_t b) { return a > b ? a : b; }

static uint64_t ready_of(const es_timing *t, uint64_t mask)
{
    uint64_t r = 0;
    for (; mask; mask &= mask - 1)
        r = max64(r, t->ready[__builtin_ctzll(mask)]);
    return r;
}

/* Front end: cycle at which the instruction at rip can be dispatched. */
static uint64_t front_end(es_timing *t, uint64_t rip, const tm_sinfo *s)
{
    const tm_uarch *u = &t->u;
    uint64_t line = rip >> 6;
    if (line != t->last_iline) {
        t->last_iline = line;
        uint64_t page = rip >> 12;
        if (page != t->last_ipage) {
            t->last_ipage = page;
            uint32_t c = tlb_cycles(t, &t->itlb1, &t->itlb2, u->itlb2.latency, rip,
                                    &t->st.itlb_misses);
            t->dec_cycle += c;
        }
        t->iline_in_opc = cache_access(&t->opc, rip);
        if (!cache_access(&t->l1i, rip)) {
            t->st.l1i_misses++;
            uint32_t c = u->l2.latency;
            if (!cache_access(&t->l2, rip))
                c = cache_access(&t->l3, rip) ? u->l3.latency : u->mem_latency;
            t->dec_cycle += c;
        }
    }
    /* legacy decode when the op cache misses: decode.width instructions
     * per cycle; op cache hits deliver opcache.ops_per_cycle ops */
    uint32_t per = t->iline_in_opc ? u->opcache_ops : u->decode_width;
    uint32_t need = t->iline_in_opc ? s->cost.uops : 1;
    if (t->dec_used + need > per) {
        t->dec_cycle++;
        t->dec_used = 0;
    }
    t->dec_used += need;
    return t->dec_cycle;
}

static void redirect(es_timing *t, uint64_t at)
{
    if (at > t->fe_cycle) {
        t->fe_cycle = at;
        t->fe_used = 0;
    }
    if (at > t->dec_cycle) {
        t->dec_cycle = at;
        t->dec_used = 0;
    }
}

/* Branch prediction; returns true when the branch was mispredicted. */
static bool predict(es_timing *t, const tm_sinfo *s, uint64_t rip, uint64_t next)
{
    const tm_uarch *u = &t->u;
    bool taken = next != rip + s->len;
    uint32_t bi = (uint32_t)(((uint64_t)(uint32_t)((rip ^ (rip >> 13)) * 0x9e3779b1u) *
                              u->btb_entries) >> 32);
    bool miss = false;
    switch (s->branch) {
    case TB_COND: {
        uint32_t i = (uint32_t)(((uint64_t)(uint32_t)((rip ^ (t->ghist << 4)) * 0x9e3779b1u) *
                                 u->bht_entries) >> 32);
        bool pred = t->bht[i] >= 2;
        if (taken && t->bht[i] < 3)
            t->bht[i]++;
        if (!taken && t->bht[i] > 0)
            t->bht[i]--;
        t->ghist = (t->ghist << 1 | taken) & 0xfff;
        miss = pred != taken || (taken && t->btb[bi] != next);
        break;
    }
    case TB_RET:
        if (t->ras_top) {
            uint64_t p = t->ras[--t->ras_top % u->ras_entries];
            miss = p != next;
        } else {
            miss = true;
        }
        break;
    case TB_CALL:
    case TB_CALL_INDIRECT:
        t->ras[t->ras_top++ % u->ras_entries] = rip + s->len;
        /* fall through */
    default:
        miss = t->btb[bi] != next;
        break;
    }
    if (taken)
        t->btb[bi] = next;
    return miss;
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
    for (uint32_t k = 0; k < t->sq_count; k++) {
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

static void retire_at(es_timing *t, uint64_t complete, uint32_t uops)
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
    redirect(t, done);
    t->prev_retire = t->last_retire;
    t->last_retire = done;
    t->retire_used = 0;
    t->st.serialising++;
}

static void on_retire(void *ctx, es_machine *m, const es_insn *d, uint64_t rip)
{
    es_timing *t = ctx;
    const tm_uarch *u = &t->u;
    const tm_sinfo *s = t->pend;
    if (!s)
        s = sinfo_of(t, m, d, rip);
    t->pend = NULL;
    t->st.insns++;

    uint64_t fe = front_end(t, rip, s);

    if (t->pend_priv != TP_NONE) {
        const tm_priv_cost *pc = &u->priv[t->pend_priv];
        if (t->pend_priv == TP_MOV_CR3) { /* without no-flush: non-global TLB entries go */
            cache_flush(&t->dtlb1);
            cache_flush(&t->dtlb2);
            cache_flush(&t->itlb1);
            cache_flush(&t->itlb2);
            t->last_ipage = UINT64_MAX;
        }
        if (pc->serialising) {
            /* microcoded: llvm's uop count for these forms is a placeholder
             * (tables/uarch/README.md), so count the instruction as one */
            t->st.uops += 1;
            serialise(t, max64(fe, t->fe_cycle), pc->cycles);
            t->st.cycles = t->last_retire;
            return;
        }
    }

    /* macro-fusion: a jcc right after a fusible cmp/test dispatches with it */
    bool fused = s->branch == TB_COND && t->fuse_rip == rip;
    uint32_t uops = fused ? 0 : s->cost.uops;
    t->st.uops += uops;

    /* dispatch */
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

    /* operands */
    uint64_t src = s->kind == TK_ZERO ? dsp : max64(dsp, ready_of(t, s->src));
    if (fused)
        src = max64(src, t->fuse_ready);
    uint64_t result, complete;
    uint64_t ea = t->pend_ea;
    bool has_addr = s->memkind != TM_NOADDR && ea != UINT64_MAX;

    uint64_t data = src;
    uint64_t issued = dsp; /* the last cycle a uop of this instruction issued */
    if (s->load) {
        uint64_t at = max64(dsp, ready_of(t, s->addr));
        uint64_t iss = port_alloc(t, u->ld_mask, at, 1);
        iss = mem_alloc(t, max64(iss, port_alloc(t, u->ag_mask, iss, 1))) + s->agu_extra;
        issued = iss;
        if (has_addr) {
            iss += tlb_cycles(t, &t->dtlb1, &t->dtlb2, u->dtlb2.latency, ea, &t->st.dtlb_misses);
            uint32_t ua = utag_cost(t, ea, t->pend_pa);
            if (ua) /* refetched: the load pipe replays it */
                iss = port_alloc(t, u->ld_mask, iss, (uint16_t)ua) + ua;
            data = load_ready(t, s, iss, t->pend_pa, t->pend_expr);
        } else {
            data = iss + (s->fp ? u->l1d_fp_latency : u->l1d_latency);
        }
        data = max64(data, src);
    }

    if (s->kind == TK_MOVE || s->kind == TK_ZERO) {
        result = s->kind == TK_MOVE ? data : dsp;
        if (s->kind == TK_ZERO) /* the table's row may still name an execution port */
            for (int g = 0; g < s->cost.ngroups; g++)
                for (int k = 0; k < s->cost.g[g].n; k++)
                    result = max64(result, port_alloc(t, s->cost.g[g].mask, dsp, 1) + s->cost.lat);
        complete = result;
    } else {
        uint64_t first = UINT64_MAX, last = data;
        for (int g = 0; g < s->cost.ngroups; g++)
            for (int k = 0; k < s->cost.g[g].n; k++) {
                uint64_t c = port_alloc(t, s->cost.g[g].mask, data, s->cost.g[g].occ);
                if (c < first)
                    first = c;
                issued = max64(issued, c);
                last = max64(last, c + s->cost.g[g].occ);
            }
        if (first == UINT64_MAX)
            first = data;
        uint32_t lat = s->oplat;
        if (t->pend_priv != TP_NONE) {
            /* pipelined privileged form: its table latency, one at a time
             * through the microcode sequencer */
            lat = u->priv[t->pend_priv].cycles;
            first = max64(first, t->ucode_free);
            t->ucode_free = first + (lat ? lat : 1);
            issued = max64(issued, first);
            last = max64(last, first + lat);
        }
        result = first + lat;
        complete = max64(result, last);
    }

    if (s->store) {
        uint64_t at = max64(dsp, ready_of(t, s->addr));
        uint64_t line = has_addr && u->store_pair_line
                            ? t->pend_pa / u->store_pair_line + 1 : 0;
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
            iss = port_alloc(t, s->fp ? u->stv_mask : u->st_mask, at,
                             (uint16_t)u->store_occupancy);
            if (pairs) {
                t->st_pair_line = line;
                t->st_pair_cycle = iss;
            }
        }
        iss = mem_alloc(t, max64(iss, port_alloc(t, u->ag_mask, iss, 1)));
        issued = max64(issued, iss);
        if (has_addr) {
            iss += tlb_cycles(t, &t->dtlb1, &t->dtlb2, u->dtlb2.latency, ea, &t->st.dtlb_misses);
            uint32_t ua = utag_cost(t, ea, t->pend_pa);
            if (ua)
                iss = port_alloc(t, s->fp ? u->stv_mask : u->st_mask, iss, (uint16_t)ua) + ua;
        }
        /* data of a plain store is its source register; of a
         * read-modify-write the computed value */
        uint64_t sdata = s->load ? result : (s->kind == TK_NORMAL && s->cost.ngroups ? result : src);
        complete = max64(complete, max64(iss, sdata) + 1);
        if (has_addr) {
            data_miss_cycles(t, t->pend_pa); /* write-allocate */
            tm_store *st = &t->sq[t->sq_pos];
            st->addr = t->pend_pa;
            st->size = s->msize ? s->msize : 8;
            st->split = ((t->pend_pa & 63) + st->size) > 64;
            st->data_ready = sdata;
            st->expr = t->pend_expr;
            st->base_ver = t->pend_expr != UINT64_MAX && (t->pend_expr & 0xff) < 16
                               ? t->wver[t->pend_expr & 0xff] : 0;
            st->retire = UINT64_MAX; /* set below */
        }
    }

    /* results */
    for (uint64_t mk = s->dst; mk; mk &= mk - 1) {
        t->ready[__builtin_ctzll(mk)] = result;
        t->wver[__builtin_ctzll(mk)]++;
    }
    if (s->stack)
        t->ready[ES_RSP] = max64(t->ready[ES_RSP], dsp);

    retire_at(t, complete, uops ? uops : 0);
    uint64_t R = t->last_retire;
    if (s->store && has_addr) {
        t->sq[t->sq_pos].retire = R;
        if (++t->sq_pos == u->store_queue)
            t->sq_pos = 0;
        if (t->sq_count < u->store_queue)
            t->sq_count++;
    }
    for (uint32_t k = 0; k < uops && k < u->rob_entries; k++) {
        t->rob[t->rob_pos] = R;
        if (++t->rob_pos == u->rob_entries)
            t->rob_pos = 0;
    }
    for (uint32_t k = 0; k < uops && k < u->sched_entries; k++) {
        t->sched[t->sched_pos] = issued;
        if (++t->sched_pos == u->sched_entries)
            t->sched_pos = 0;
    }

    /* branches */
    if (s->branch) {
        t->st.branches++;
        uint64_t next = m->rip;
        if (predict(t, s, rip, next)) {
            t->st.mispredicts++;
            redirect(t, result + u->mispredict_penalty);
        } else if (next != rip + s->len && u->taken_branch_bubble) {
            redirect(t, t->fe_cycle + u->taken_branch_bubble);
        } else if (next != rip + s->len && u->taken_ends_group && t->fe_used) {
            /* the ops at the target come from another fetch window: they
             * dispatch from the next cycle, not beside the branch */
            redirect(t, t->fe_cycle + 1);
        }
    }
    t->fuse_rip = s->fusible ? rip + s->len : UINT64_MAX;
    t->fuse_ready = result;
    t->st.cycles = t->last_retire;
#ifdef TM_TRACE
    fprintf(stderr, "%-6s d=%llu src=%llu data=%llu res=%llu cpl=%llu R=%llu uops=%u ld=%d st=%d ea=%llx\n",
            es_op_name(d->op), (unsigned long long)dsp, (unsigned long long)src,
            (unsigned long long)data, (unsigned long long)result, (unsigned long long)complete,
            (unsigned long long)R, uops, s->load, s->store, (unsigned long long)ea);
#endif
}

static void on_exception(void *ctx, es_machine *m, int vector, uint32_t error)
{
    es_timing *t = ctx;
    (void)m;
    (void)vector;
    (void)error;
    t->pend = NULL;
    serialise(t, t->fe_cycle, t->u.priv[TP_EXCEPTION].cycles);
    t->st.cycles = t->last_retire;
}

/* ---- public API ---- */

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
    t->sc = calloc((size_t)1 << ES_DCACHE_BITS, sizeof *t->sc);
    t->rob = calloc(u->rob_entries, sizeof *t->rob);
    t->sched = calloc(u->sched_entries ? u->sched_entries : 1, sizeof *t->sched);
    t->slot = calloc((size_t)u->nports * TM_SLOTW, sizeof *t->slot);
    t->sq = calloc(u->store_queue, sizeof *t->sq);
    t->bht = calloc(u->bht_entries ? u->bht_entries : 1, 1);
    t->btb = calloc(u->btb_entries ? u->btb_entries : 1, sizeof *t->btb);
    t->ras = calloc(u->ras_entries ? u->ras_entries : 1, sizeof *t->ras);
    tm_cache_cfg opc = {u->opcache_entries / 8 / (u->opcache_ways ? u->opcache_ways : 1),
                        u->opcache_ways, 6, 0};
    if (!t->sc || !t->rob || !t->sched || !u->sched_entries || !t->slot || !t->sq || !t->bht || !t->btb || !t->ras ||
        !u->bht_entries || !u->btb_entries || !u->ras_entries || cache_init(&t->l1i, &u->l1i) ||
        cache_init(&t->l1d, &u->l1d) || cache_init(&t->l2, &u->l2) ||
        cache_init(&t->l3, &u->l3) || cache_init(&t->itlb1, &u->itlb1) ||
        cache_init(&t->itlb2, &u->itlb2) || cache_init(&t->dtlb1, &u->dtlb1) ||
        cache_init(&t->dtlb2, &u->dtlb2) || cache_init(&t->opc, &opc)) {
        snprintf(err, errlen, "out of memory (or a zero-sized predictor in %s.cfg)", uarch);
        es_timing_free(t);
        return NULL;
    }
    for (unsigned i = 0; i < u->bht_entries; i++)
        t->bht[i] = 1; /* weakly not taken */
    memset(t->btb, 0xff, u->btb_entries * sizeof *t->btb);
    t->last_iline = t->last_ipage = UINT64_MAX;
    t->fuse_rip = UINT64_MAX;
    return t;
}

void es_timing_free(es_timing *t)
{
    if (!t)
        return;
    tm_cache *cs[] = {&t->l1i, &t->l1d, &t->l2, &t->l3, &t->itlb1,
                      &t->itlb2, &t->dtlb1, &t->dtlb2, &t->opc};
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
        cache_free(cs[i]);
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
                     .exception = on_exception};
    if (es_observe(m, &o))
        return -1;
    t->m = m;
    return 0;
}

uint64_t es_timing_cycles(const es_timing *t) { return t->last_retire; }

uint64_t es_timing_last_cost(const es_timing *t) { return t->last_retire - t->prev_retire; }

void es_timing_get_stats(const es_timing *t, es_timing_stats *out)
{
    *out = t->st;
    out->cycles = t->last_retire;
}
