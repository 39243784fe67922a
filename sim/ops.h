/* ops.h - what instruction handlers share: operand access with the
 * partial-register rules, effective addresses, eager flag computation,
 * stack pushes and pops, and the handler prototypes (generated from
 * isa/isa.tbl, which also builds the dispatch table).
 *
 * Handler rules:
 *  - signature `static int op_xxx(es_machine *m, const es_insn *d)`;
 *  - read every source, compute, then write memory destinations, then
 *    registers and flags: a fault (return ES_FAULT from any TRY) must leave
 *    architectural state unchanged (faults are precise);
 *  - branches set m->nrip; everything else leaves it (= rip + len).
 */
#ifndef ENTRYSIM_OPS_H
#define ENTRYSIM_OPS_H

#include "fault.h"
#include "machine.h"
#include "mem.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TRY(x)                                                                                     \
    do {                                                                                           \
        if ((x))                                                                                   \
            return ES_FAULT;                                                                       \
    } while (0)

static inline uint64_t es_mask(unsigned size)
{
    return size >= 8 ? ~0ull : (1ull << (size * 8)) - 1;
}

static inline uint64_t es_sign_bit(unsigned size)
{
    return 1ull << (size * 8 - 1);
}

/* Sign-extends the low `size` bytes of v to 64 bits. */
static inline int64_t es_sext(uint64_t v, unsigned size)
{
    unsigned sh = 64 - size * 8;
    return (int64_t)(v << sh) >> sh;
}

/* ---- general-purpose registers ---- */

static inline uint64_t es_gpr_get(const es_machine *m, unsigned r, unsigned size)
{
    return m->gpr[r] & es_mask(size);
}

/* Writes with the SDM's rules (Vol. 1, 3.4.1.1): 32-bit writes zero-extend
 * to 64 bits; 8- and 16-bit writes merge into the old value. */
static inline void es_gpr_set(es_machine *m, unsigned r, unsigned size, uint64_t v)
{
    switch (size) {
    case 1: m->gpr[r] = (m->gpr[r] & ~0xffull) | (v & 0xff); break;
    case 2: m->gpr[r] = (m->gpr[r] & ~0xffffull) | (v & 0xffff); break;
    case 4: m->gpr[r] = (uint32_t)v; break;
    default: m->gpr[r] = v; break;
    }
}

/* ---- operands ---- */

/* Effective address (offset within the segment) of a MEM/AGEN operand,
 * truncated to the address size. */
static inline uint64_t es_ea(const es_machine *m, const es_insn *d, const es_operand *o)
{
    uint64_t a = (uint64_t)o->disp;
    if (o->base != ES_REG_NONE)
        a += m->gpr[o->base];
    if (o->index != ES_REG_NONE)
        a += m->gpr[o->index] * o->scale;
    if (d->asize == 4)
        a = (uint32_t)a;
    else if (d->asize == 2)
        a = (uint16_t)a;
    return a;
}

/* Linear address of a MEM operand: segment base + effective address.  In
 * 64-bit mode only FS and GS have bases (kept zero for the others). */
static inline uint64_t es_lin(const es_machine *m, const es_insn *d, const es_operand *o)
{
    uint64_t a = es_ea(m, d, o) + m->seg[o->seg].base;
    return d->mode == ES_MODE_64 ? a : (uint32_t)a;
}

/* Linear address of segment `seg` : offset `off` (string instructions). */
static inline uint64_t es_seg_lin(const es_machine *m, int seg, uint64_t off)
{
    uint64_t a = off + m->seg[seg].base;
    return m->mode == ES_MODE_64 ? a : (uint32_t)a;
}

/* Reads operand i (GPR, HI8, MEM, IMM, REL) zero-extended from its size.
 * Immediates are returned sign-extended to 64 bits as decoded; callers mask
 * to the operation size. */
static inline int es_rd(es_machine *m, const es_insn *d, int i, uint64_t *v)
{
    const es_operand *o = &d->o[i];
    switch (o->kind) {
    case ES_OPK_GPR: *v = m->gpr[o->reg] & es_mask(o->size); return 0;
    case ES_OPK_HI8: *v = (m->gpr[o->reg] >> 8) & 0xff; return 0;
    case ES_OPK_IMM:
    case ES_OPK_REL: *v = (uint64_t)o->imm; return 0;
    case ES_OPK_MEM: return es_load(m, es_lin(m, d, o), o->size, v);
    default: return es_raise(m, ES_VEC_UD, 0) ? -1 : -1;
    }
}

/* Writes operand i (GPR, HI8, MEM) with the partial-register rules. */
static inline int es_wr(es_machine *m, const es_insn *d, int i, uint64_t v)
{
    const es_operand *o = &d->o[i];
    switch (o->kind) {
    case ES_OPK_GPR: es_gpr_set(m, o->reg, o->size, v); return 0;
    case ES_OPK_HI8:
        m->gpr[o->reg] = (m->gpr[o->reg] & ~0xff00ull) | ((v & 0xff) << 8);
        return 0;
    case ES_OPK_MEM: return es_store(m, es_lin(m, d, o), o->size, v);
    default: es_raise(m, ES_VEC_UD, 0); return -1;
    }
}

/* ---- flags (computed eagerly, SDM Vol. 1, 3.4.3.1) ---- */

/* The flag helpers are branch-free and accept operands with garbage above
 * `size` (such as sign-extended immediates): only bits below 8 * size reach
 * the result, shifted to bit 63 where needed. */
static inline uint64_t es_flags_szp(uint64_t r, unsigned size)
{
    uint64_t t = r << (64 - size * 8);
    return (t ? 0 : ES_ZF) | ((t >> 63) << 7) /* SF */ |
           (__builtin_parity((unsigned)(r & 0xff)) ? 0 : ES_PF);
}

/* Flags of a + b + cin (ADD/ADC) at width size; cin is 0 or 1. */
static inline uint64_t es_flags_add(uint64_t a, uint64_t b, uint64_t cin, unsigned size)
{
    unsigned top = size * 8 - 1;
    uint64_t r = a + b + cin;
    uint64_t carry = (a & b) | ((a ^ b) & ~r); /* carry out of every bit */
    uint64_t ovf = (a ^ r) & (b ^ r);
    return es_flags_szp(r, size) | ((carry >> top) & 1) /* CF */ | (((ovf >> top) & 1) << 11) |
           ((a ^ b ^ r) & ES_AF);
}

/* Flags of a - b - bin (SUB/SBB/CMP/NEG) at width size; bin is 0 or 1. */
static inline uint64_t es_flags_sub(uint64_t a, uint64_t b, uint64_t bin, unsigned size)
{
    unsigned top = size * 8 - 1;
    uint64_t r = a - b - bin;
    uint64_t borrow = (~a & b) | (~(a ^ b) & r); /* borrow out of every bit */
    uint64_t ovf = (a ^ b) & (a ^ r);
    return es_flags_szp(r, size) | ((borrow >> top) & 1) /* CF */ | (((ovf >> top) & 1) << 11) |
           ((a ^ b ^ r) & ES_AF);
}

/* Flags of a logical result (AND/OR/XOR/TEST): CF = OF = 0; AF undefined,
 * cleared here (what AMD Zen and Intel cores do). */
static inline uint64_t es_flags_logic(uint64_t r, unsigned size)
{
    return es_flags_szp(r, size);
}

/* Replaces the arithmetic flags selected by `which` with those in f. */
static inline void es_set_flags(es_machine *m, uint64_t f, uint64_t which)
{
    m->rflags = (m->rflags & ~which) | (f & which);
}

/* Evaluates condition code cc (0..15, the low nibble of Jcc/SETcc/CMOVcc)
 * on the flags f. */
static inline int es_cond_f(uint64_t f, unsigned cc)
{
    int r;
    switch (cc >> 1) {
    case 0: r = (f & ES_OF) != 0; break;
    case 1: r = (f & ES_CF) != 0; break;
    case 2: r = (f & ES_ZF) != 0; break;
    case 3: r = (f & (ES_CF | ES_ZF)) != 0; break;
    case 4: r = (f & ES_SF) != 0; break;
    case 5: r = (f & ES_PF) != 0; break;
    case 6: r = !(f & ES_SF) != !(f & ES_OF); break;
    default: r = (f & ES_ZF) || (!(f & ES_SF) != !(f & ES_OF)); break;
    }
    return (cc & 1) ? !r : r;
}

/* Evaluates condition code cc on RFLAGS. */
static inline int es_cond(const es_machine *m, unsigned cc)
{
    return es_cond_f(m->rflags, cc);
}

/* ---- lazy flags (the block loop only, sim/isa/fast.c) ---- */

/* The operations a lazy flag record can hold (m->lz_op): the specialised
 * handlers' subtractions (SUB/CMP), additions and logical operations at
 * their widths.  lz_a, lz_b are the operands (for LOGIC lz_a is the
 * result), garbage above the width allowed, as for the es_flags_ helpers. */
enum {
    ES_LZ_NONE,
    ES_LZ_SUB1, ES_LZ_SUB4, ES_LZ_SUB8,
    ES_LZ_ADD4, ES_LZ_ADD8,
    ES_LZ_LOGIC4, ES_LZ_LOGIC8,
};

/* Computes the arithmetic flags of the recorded operation into RFLAGS and
 * clears the record. */
void es_lazy_flush(es_machine *m);

static inline void es_lazy_sync(es_machine *m)
{
    if (m->lz_op != ES_LZ_NONE)
        es_lazy_flush(m);
}

/* ---- stack ---- */

/* Stack-pointer width: 8 in 64-bit mode, else SS.B (4 for Linux's flat SS). */
static inline unsigned es_stack_size(const es_machine *m)
{
    return m->mode == ES_MODE_64 ? 8 : 4;
}

/* Pushes `size` bytes; RSP changes only if the store succeeds. */
static inline int es_push(es_machine *m, unsigned size, uint64_t v)
{
    unsigned ss = es_stack_size(m);
    uint64_t sp = (m->gpr[ES_RSP] - size) & es_mask(ss);
    if (es_store(m, es_seg_lin(m, ES_SEG_SS, sp), size, v))
        return -1;
    es_gpr_set(m, ES_RSP, ss, sp);
    return 0;
}

/* Pops `size` bytes into *v; RSP changes only if the load succeeds. */
static inline int es_pop(es_machine *m, unsigned size, uint64_t *v)
{
    unsigned ss = es_stack_size(m);
    uint64_t sp = m->gpr[ES_RSP] & es_mask(ss);
    if (es_load(m, es_seg_lin(m, ES_SEG_SS, sp), size, v))
        return -1;
    es_gpr_set(m, ES_RSP, ss, sp + size);
    return 0;
}

/* ---- handlers: one row each in isa/isa.tbl, defined in isa/<family>.c ---- */
#include "es_isa_handlers.h"
/* The string forms of the MOVSD/CMPSD mnemonics (A5/A7, no visible
 * operands); their isa.tbl rows name the SSE handlers, which delegate
 * to these. */
int es_string_movsd(es_machine *m, const es_insn *d);
int es_string_cmpsd(es_machine *m, const es_insn *d);

/* The specialised handler for the form of d (sim/isa/fast.c), or generic
 * (the handler of d's isa.tbl row) when its form has none. */
es_handler es_fast_handler(const es_insn *d, es_handler generic);

#ifdef __cplusplus
}
#endif
#endif
