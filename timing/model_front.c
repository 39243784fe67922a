/* model_front.c - the front end of the cycle model: what an instruction is
 * (its form, costs and register sets, built once per decode-cache entry),
 * when it can be fetched and decoded (op cache or legacy decode, L1i and
 * ITLB misses), and branch prediction (BHT with global history, BTB,
 * return stack) with the redirects a mispredict or a taken branch costs.
 */
#include <stdio.h>
#include <string.h>

#include "mem.h"
#include "tm_int.h"
#include "es_isa_timing.h"

/* ---- static information of one instruction ---- */

/* Whether the instruction's ModRM encodes a displacement (mod 1: disp8,
 * mod 2: disp16/32), whatever its value. */
static inline bool disp_encoded(const es_insn *d)
{
    unsigned mod = (d->modrm >> 6) & 3;
    return mod == 1 || mod == 2;
}

static const char *kind_name(const tm_uarch *u, const es_insn *d, int i, char *buf, size_t n)
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
        return "xmm";
    case ES_OPK_YMM:
        return "ymm";
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
         * predicate, the slow LEA on Zen, does not look at the scale.
         * With lea.encoded_zero_disp the hardware looks at the encoding,
         * not the value: a displacement of 0 that the encoding carries
         * (ModRM.mod 1 or 2, as RBP and R13 bases always need) makes a
         * three-component LEA too (znver5.cfg: measured) */
        if (o->index != ES_REG_NONE)
            return o->base < 16 && (o->disp || (u->lea_encoded_zero_disp && disp_encoded(d)))
                       ? "m"
                       : "m[base+index]";
        return o->disp ? "m[base+disp]" : "m[base]";
    case ES_OPK_IMM:
        if (o->imm == 1 && (d->opcode == 0xd0 || d->opcode == 0xd1) && d->opmap == 0)
            return "one";
        snprintf(buf, n, "imm%d", o->size ? o->size * 8 : 8);
        return buf;
    case ES_OPK_REL:
        return "rel";
    case ES_OPK_VSIB: {
        /* LLVM's names: vm32x, vm64y...: the index elements' width (the D
         * or Q after GATHER) and the index register's */
        const char *nm = es_op_name(d->op);
        const char *g = strstr(nm, "GATHER");
        bool q = g && g[6] == 'Q';
        snprintf(buf, n, "vm%d%c", q ? 64 : 32, o->vsib == 32 ? 'y' : 'x');
        return buf;
    }
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
        kinds[i] = kind_name(u, d, i, kb[i], sizeof kb[i]);
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
        (a->kind != ES_OPK_GPR && a->kind != ES_OPK_XMM && a->kind != ES_OPK_YMM))
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
    return d->o[0].kind == ES_OPK_XMM || d->o[0].kind == ES_OPK_YMM;
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
            k = kind_name(u, d, i, kb, sizeof kb);
        }
        n += snprintf(form + n, sizeof form - n, "%s%s", i ? ", " : " ", k);
    }
    return tm_find_form(u, form);
}

static uint64_t gpr_bits(uint16_t m) { return (uint64_t)m << TR_GPR; }

/* The form's row and costs (s->cost); NULL row when the tables have no
 * such form and the .cfg's default applies. */
static const tm_row *sinfo_cost(const tm_uarch *u, const es_insn *d, const char *name,
                                bool zero, tm_sinfo *s)
{
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
    return r;
}

/* Registers of the explicit operands: sources and destinations into s,
 * the address registers of a memory operand into *addr, the GPRs named
 * as operands into *explicit_regs. */
static void operand_regs(const es_insn *d, uint32_t tc, tm_sinfo *s, uint64_t *addr,
                         uint64_t *explicit_regs)
{
    for (int i = 0; i < d->nops; i++) {
        const es_operand *o = &d->o[i];
        if (o->kind == ES_OPK_MEM) {
            s->memop = (uint8_t)i;
            s->msize = o->size;
            if (o->base < 16)
                *addr |= 1ull << o->base;
            if (o->index < 16)
                *addr |= 1ull << o->index;
        } else if (o->kind == ES_OPK_VSIB) {
            /* a gather: the base is an address register, the index
             * vector a source; its several accesses have no one address
             * for the memory model (the row's load cost stands for them) */
            if (o->base < 16)
                *addr |= 1ull << o->base;
            s->src |= 1ull << (TR_XMM + o->index);
            s->fp = 1;
        } else if (o->kind == ES_OPK_AGEN) {
            /* lea computes from its address registers: they are sources
             * (es_decode_access reports no read for an AGEN operand) */
            if (o->base < 16)
                s->src |= 1ull << o->base;
            if (o->index < 16)
                s->src |= 1ull << o->index;
        } else if (o->kind == ES_OPK_GPR || o->kind == ES_OPK_HI8) {
            *explicit_regs |= 1ull << o->reg;
            /* 8/16-bit destinations merge into the old value */
            if (o->write && (o->size < 4 || o->kind == ES_OPK_HI8))
                s->src |= 1ull << o->reg;
        } else if (o->kind == ES_OPK_XMM || o->kind == ES_OPK_YMM) {
            /* one register to the renamer, whatever the width */
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
}

/* A CMOVcc whose condition combines flags (A/BE: CF and ZF; L/GE: SF and
 * OF; G/LE: all three) is one more op on Zen 5: the condition is evaluated
 * from the flags, then the select runs, so the flags arrive a cycle later
 * than the data and the pair takes two ALU slots.  Measured on Zen 5
 * (bench/uarch/cmp_cmov_latency, cmp_cmova_latency: 3 cycles per cmp + cmov
 * pair against 2 for E/NE/B/S/O/P; cmov_latency: 1 from the data;
 * cmova_throughput: ~2.4 per cycle against 5.3 for cmove); SETcc of the same
 * conditions is not slower (cmp_setbe_latency). */
static void cmov_multi_flag(const tm_uarch *u, uint32_t flags_read, tm_sinfo *s)
{
    const uint32_t status = 0x8d5; /* CF PF AF ZF SF OF */
    if (__builtin_popcount(flags_read & status) < 2 || s->cost.ngroups >= TM_MAXGROUPS)
        return;
    s->flag_extra = (uint8_t)u->cmov_multi_flag;
    s->cost.uops += (uint16_t)u->cmov_multi_flag;
    s->cost.g[s->cost.ngroups++] =
        (tm_group){.mask = u->dflt.g[0].mask, .n = (uint16_t)u->cmov_multi_flag, .occ = 1};
}

/* Source, destination and address registers, implicit operands included,
 * and the renamer's special cases (zero idioms, sbb r, r, eliminated moves). */
static void sinfo_regs(const tm_uarch *u, es_machine *m, const es_insn *d, uint64_t rip,
                       uint32_t tc, bool zero, bool sbb_same, tm_sinfo *s)
{
    es_access_info ai = {0};
    uint8_t buf[16];
    uint64_t lin = (rip + m->seg[ES_SEG_CS].base) & m->ipmask;
    size_t got = es_fetch_bytes(m, lin, buf, d->len);
    if (got == d->len)
        es_decode_access(buf, got, d->mode, rip, &ai);
    uint64_t addr = 0, explicit_regs = 0;
    operand_regs(d, tc, s, &addr, &explicit_regs);
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
    if (u->cmov_multi_flag && (tc & TC_CC_MASK) == TC_CC_CMOVE)
        cmov_multi_flag(u, ai.flags_read, s);
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
    /* the ALU op half of a move + ALU pair: it writes a GPR it also reads
     * (model.c checks the move before it wrote that register) */
    s->movfuse = u->mov_alu_fusion && (tc & TC_MOVFUSE) && s->memop == 0xff && d->nops >= 1 &&
                 d->o[0].kind == ES_OPK_GPR && d->o[0].size >= 4;
}

/* The memory access: explicit operand, or the stack of push/call and
 * pop/ret; r is the form's row (NULL: unknown form). */
static void sinfo_mem(const tm_uarch *u, const es_insn *d, const tm_row *r, uint32_t tc,
                      tm_sinfo *s)
{
    if (s->memop != 0xff) {
        const es_operand *o = &d->o[s->memop];
        s->memkind = TM_EXPLICIT;
        s->expr = (uint64_t)o->base | (uint64_t)o->index << 8 | (uint64_t)o->scale << 16 |
                  (uint64_t)(uint32_t)o->disp << 24 | (uint64_t)o->size << 56;
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
    } else if (tc & (TC_PUSH | TC_CALL | TC_POP | TC_RET)) {
        /* push and call store below RSP, pop and ret load from it; an
         * operand-size prefix narrows push and pop only */
        bool push = tc & (TC_PUSH | TC_CALL);
        s->memkind = push ? TM_PUSH : TM_POP;
        s->store = push;
        s->load = !push;
        s->msize = d->mode == ES_MODE_64 ? 8 : 4;
        if ((tc & (push ? TC_PUSH : TC_POP)) && d->osize)
            s->msize = d->osize;
        s->addr = 1ull << ES_RSP;
        if (u->stack_engine) {
            /* the stack engine keeps RSP's offset at rename (AMD SOG
             * 2.11 "stack pointer tracking"; Intel ORM 3.4.2.5) */
            s->stack = 1;
            s->src &= ~(1ull << ES_RSP);
            s->addr = 0;
        }
    }
}

/* Latency of the operation after the load's data arrived (s->oplat). */
static void sinfo_oplat(const tm_uarch *u, const es_insn *d, const char *name, uint32_t tc,
                        tm_sinfo *s)
{
    if (!s->load) {
        s->oplat = s->cost.lat;
        return;
    }
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
}

/* Branch kind and whether a following jcc fuses with it. */
static void sinfo_branch(const tm_uarch *u, const es_insn *d, uint32_t tc, tm_sinfo *s)
{
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

void tm_build_sinfo(es_timing *t, es_machine *m, const es_insn *d, uint64_t rip,
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
    const tm_row *r = sinfo_cost(u, d, name, zero, s);
    sinfo_regs(u, m, d, rip, tc, zero, sbb_same, s);
    sinfo_mem(u, d, r, tc, s);
    sinfo_oplat(u, d, name, tc, s);
    sinfo_branch(u, d, tc, s);
}

/* The fetch of a new line: ITLB, op cache and L1i lookups, and the
 * cycles a miss costs (out of line: most instructions stay on one line,
 * and the per-instruction path below then saves no registers). */
static __attribute__((noinline)) void fetch_line(es_timing *t, uint64_t rip, uint64_t line)
{
    const tm_uarch *u = &t->u;
    bool next = line == t->last_iline + 1;
    t->last_iline = line;
    uint64_t page = rip >> 12;
    if (page != t->last_ipage) {
        t->last_ipage = page;
        uint32_t c = tm_tlb_cycles(t, &t->itlb1, &t->itlb2, u->itlb2.latency, rip,
                                   &t->st.itlb_misses);
        t->dec_cycle += c;
    }
    t->iline_in_opc = tm_cache_access(&t->opc, rip);
    if (!tm_cache_access(&t->l1i, rip)) {
        t->st.l1i_misses++;
        uint32_t c = u->l2.latency;
        if (!tm_cache_access(&t->l2, rip))
            c = tm_cache_access(&t->l3, rip) ? u->l3.latency : u->mem_latency;
        else if (next && u->l2_stream_cycles && u->l2_stream_cycles < c)
            c = 0; /* streaming: below */
        if (c)
            t->dec_cycle += c;
        else if (t->iline_ready + u->l2_stream_cycles > t->dec_cycle)
            /* straight-line code streams from the L2, a line every
             * l2_stream_cycles after the last one arrived: fetch runs
             * ahead of decode, so only the arrival rate limits it */
            t->dec_cycle = t->iline_ready + u->l2_stream_cycles;
    }
    t->iline_ready = t->dec_cycle;
}

/* Front end: cycle at which the instruction at rip can be decoded and
 * handed to dispatch. */
uint64_t tm_front_end(es_timing *t, uint64_t rip, uint32_t ops)
{
    const tm_uarch *u = &t->u;
    uint64_t line = rip >> 6;
    if (line != t->last_iline)
        fetch_line(t, rip, line);
    /* legacy decode when the op cache misses: decode.width instructions
     * per cycle; op cache hits deliver opcache.ops_per_cycle ops */
    uint32_t per = t->iline_in_opc ? u->opcache_ops : u->decode_width;
    uint32_t need = t->iline_in_opc ? ops : 1;
    if (t->dec_used + need > per) {
        t->dec_cycle++;
        t->dec_used = 0;
    }
    t->dec_used += need;
    return t->dec_cycle;
}

void tm_redirect(es_timing *t, uint64_t at)
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
/* The return stack's slot of push/pop count i: a mask when ras.entries is
 * a power of two (a division per call and return otherwise). */
static inline uint32_t ras_slot(const tm_uarch *u, uint32_t i)
{
    uint32_t n = u->ras_entries;
    return n & (n - 1) ? i % n : i & (n - 1);
}

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
        t->pred_next = !pred ? rip + s->len : t->btb[bi] != UINT64_MAX ? t->btb[bi] : UINT64_MAX;
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
            uint64_t p = t->ras[ras_slot(u, --t->ras_top)];
            miss = p != next;
        } else {
            miss = true;
        }
        break;
    case TB_CALL:
    case TB_CALL_INDIRECT:
        t->ras[ras_slot(u, t->ras_top++)] = rip + s->len;
        /* fall through */
    default:
        miss = t->btb[bi] != next;
        break;
    }
    if (taken)
        t->btb[bi] = next;
    return miss;
}

void tm_branch(es_timing *t, const tm_sinfo *s, uint64_t rip, uint64_t next, uint64_t resolved)
{
    const tm_uarch *u = &t->u;
    t->st.branches++;
    t->last_miss = false;
    if (predict(t, s, rip, next)) {
        t->last_miss = true;
        t->st.mispredicts++;
        tm_redirect(t, resolved + u->mispredict_penalty);
    } else if (next != rip + s->len && u->taken_branch_bubble) {
        tm_redirect(t, t->fe_cycle + u->taken_branch_bubble);
    } else if (next != rip + s->len && u->taken_ends_group && t->fe_used) {
        /* the ops at the target come from another fetch window: they
         * dispatch from the next cycle, not beside the branch */
        tm_redirect(t, t->fe_cycle + 1);
    }
}
