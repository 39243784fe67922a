/* muldiv.c - MUL, IMUL (one, two and three operands), DIV, IDIV and the
 * flag-less BMI2 MULX.
 *
 * SDM Vol. 2A/2B: the one-operand forms multiply AL/AX/EAX/RAX by the
 * operand into AX, DX:AX, EDX:EAX or RDX:RAX; DIV/IDIV divide that double
 * register by the operand and raise #DE for a zero divisor or a quotient
 * that does not fit (including INT_MIN / -1).  The 64-bit forms use
 * unsigned __int128.  A #DE leaves every register and flag unchanged.
 *
 * Flags.  MUL/IMUL: CF = OF = "the high half is significant" (SDM); SF,
 * ZF, AF and PF are undefined.  DIV/IDIV: all six undefined.  We follow
 * AMD Zen as measured on the host the differential tests compare against
 * (every form below was run natively with random operands and compared):
 *  - MUL/IMUL (all forms and widths) leave SF, ZF, AF and PF unchanged;
 *  - DIV/IDIV clear SF, ZF and PF, set AF, and leave CF and OF unchanged.
 */
#include "ops.h"

/* Flags after a multiply: `ovf` is the CF/OF condition.  Zen leaves the
 * undefined SF, ZF, AF and PF as they were. */
static inline void mul_flags(es_machine *m, int ovf)
{
    es_set_flags(m, ovf ? (ES_CF | ES_OF) : 0, ES_CF | ES_OF);
}

/* Flags after a divide (all six undefined in the SDM): Zen clears SF, ZF
 * and PF, sets AF and keeps CF and OF. */
static inline void div_flags(es_machine *m)
{
    es_set_flags(m, ES_AF, ES_SF | ES_ZF | ES_PF | ES_AF);
}

/* The double-width register of the one-operand forms, for sz < 8: AX for
 * bytes, else rDX:rAX (DX:AX or EDX:EAX). */
static inline uint64_t pair_get(const es_machine *m, unsigned sz)
{
    return sz == 1 ? es_gpr_get(m, ES_RAX, 2)
                   : (es_gpr_get(m, ES_RDX, sz) << (sz * 8)) | es_gpr_get(m, ES_RAX, sz);
}

/* Writes the two halves of a one-operand result: AH = hi, AL = lo for
 * bytes, else rDX = hi, rAX = lo (MUL/IMUL: the product; DIV/IDIV: hi is
 * the remainder, lo the quotient). */
static inline void pair_set(es_machine *m, unsigned sz, uint64_t hi, uint64_t lo)
{
    if (sz == 1) {
        es_gpr_set(m, ES_RAX, 2, ((hi & 0xff) << 8) | (lo & 0xff));
    } else {
        es_gpr_set(m, ES_RAX, sz, lo);
        es_gpr_set(m, ES_RDX, sz, hi);
    }
}

int op_mul(es_machine *m, const es_insn *d)
{
    uint64_t s;
    unsigned sz = d->o[0].size;
    TRY(es_rd(m, d, 0, &s));
    uint64_t a = es_gpr_get(m, ES_RAX, sz), lo, hi;
    if (sz == 8) {
        unsigned __int128 p = (unsigned __int128)a * s;
        lo = (uint64_t)p;
        hi = (uint64_t)(p >> 64);
    } else {
        uint64_t p = a * s; /* fits: both factors have sz * 8 <= 32 bits */
        lo = p & es_mask(sz);
        hi = p >> (sz * 8);
    }
    pair_set(m, sz, hi, lo);
    mul_flags(m, hi != 0);
    return ES_OK;
}

/* Signed product of a and b (sign-extended from sz) truncated to sz, and
 * whether it differs from the full product (CF = OF). */
static inline uint64_t imul_trunc(uint64_t a, uint64_t b, unsigned sz, int *ovf, uint64_t *hi)
{
    if (sz == 8) {
        __int128 p = (__int128)(int64_t)a * (int64_t)b;
        uint64_t lo = (uint64_t)p;
        *hi = (uint64_t)(p >> 64);
        *ovf = p != (__int128)(int64_t)lo;
        return lo;
    }
    int64_t p = es_sext(a, sz) * es_sext(b, sz); /* fits: |p| <= 2^62 */
    *hi = (uint64_t)(p >> (sz * 8));
    *ovf = p != es_sext((uint64_t)p, sz);
    return (uint64_t)p & es_mask(sz);
}

int op_imul(es_machine *m, const es_insn *d)
{
    uint64_t a, b, hi;
    int ovf;
    unsigned sz = d->o[0].size;
    if (d->nops == 1) {
        TRY(es_rd(m, d, 0, &b));
        a = es_gpr_get(m, ES_RAX, sz);
        uint64_t lo = imul_trunc(a, b, sz, &ovf, &hi);
        pair_set(m, sz, hi, lo);
        mul_flags(m, ovf);
        return ES_OK;
    }
    /* two operands: dest *= src; three: dest = src * imm */
    int i = d->nops == 3 ? 1 : 0;
    TRY(es_rd(m, d, i, &a));
    TRY(es_rd(m, d, i + 1, &b));
    uint64_t lo = imul_trunc(a, b, sz, &ovf, &hi);
    TRY(es_wr(m, d, 0, lo));
    mul_flags(m, ovf);
    return ES_OK;
}

int op_div(es_machine *m, const es_insn *d)
{
    uint64_t s;
    unsigned sz = d->o[0].size;
    TRY(es_rd(m, d, 0, &s));
    if (s == 0)
        return es_raise(m, ES_VEC_DE, 0);
    if (sz == 8) {
        uint64_t hi = m->gpr[ES_RDX], lo = m->gpr[ES_RAX];
        if (hi >= s) /* quotient would need more than 64 bits */
            return es_raise(m, ES_VEC_DE, 0);
        unsigned __int128 n = ((unsigned __int128)hi << 64) | lo;
        m->gpr[ES_RAX] = (uint64_t)(n / s);
        m->gpr[ES_RDX] = (uint64_t)(n % s);
    } else {
        uint64_t n = pair_get(m, sz);
        uint64_t q = n / s, r = n % s;
        if (q > es_mask(sz))
            return es_raise(m, ES_VEC_DE, 0);
        pair_set(m, sz, r, q);
    }
    div_flags(m);
    return ES_OK;
}

int op_idiv(es_machine *m, const es_insn *d)
{
    uint64_t s;
    unsigned sz = d->o[0].size;
    TRY(es_rd(m, d, 0, &s));
    if ((s & es_mask(sz)) == 0)
        return es_raise(m, ES_VEC_DE, 0);
    if (sz == 8) {
        __int128 n = (__int128)(((unsigned __int128)m->gpr[ES_RDX] << 64) | m->gpr[ES_RAX]);
        int64_t v = (int64_t)s;
        /* -2^127 / -1 does not fit even in __int128: it is #DE anyway */
        if (v == -1 && n == (__int128)((unsigned __int128)1 << 127))
            return es_raise(m, ES_VEC_DE, 0);
        __int128 q = n / v, r = n % v;
        if (q > INT64_MAX || q < INT64_MIN)
            return es_raise(m, ES_VEC_DE, 0);
        m->gpr[ES_RAX] = (uint64_t)q;
        m->gpr[ES_RDX] = (uint64_t)r;
    } else {
        /* the dividend has 2 * sz * 8 <= 64 bits: 64-bit arithmetic
         * suffices, except INT64_MIN / -1 for the 32-bit form, checked first */
        int64_t n = es_sext(pair_get(m, sz), sz * 2);
        int64_t v = es_sext(s, sz);
        if (v == -1 && n == INT64_MIN)
            return es_raise(m, ES_VEC_DE, 0);
        int64_t q = n / v, r = n % v;
        if (q != es_sext((uint64_t)q, sz))
            return es_raise(m, ES_VEC_DE, 0);
        pair_set(m, sz, (uint64_t)r, (uint64_t)q);
    }
    div_flags(m);
    return ES_OK;
}

/* MULX hi, lo, src: unsigned EDX/RDX * src, no flags.  When hi and lo
 * name the same register it receives the high half (SDM MULX), so the low
 * half is written first. */
int op_mulx(es_machine *m, const es_insn *d)
{
    uint64_t s;
    unsigned sz = d->o[0].size;
    TRY(es_rd(m, d, 2, &s));
    uint64_t lo, hi;
    if (sz == 8) {
        unsigned __int128 p = (unsigned __int128)m->gpr[ES_RDX] * s;
        lo = (uint64_t)p;
        hi = (uint64_t)(p >> 64);
    } else {
        uint64_t p = (m->gpr[ES_RDX] & 0xffffffffu) * (s & 0xffffffffu);
        lo = p & 0xffffffffu;
        hi = p >> 32;
    }
    TRY(es_wr(m, d, 1, lo));
    TRY(es_wr(m, d, 0, hi));
    return ES_OK;
}

