/* shift.c - shifts and rotates: SHL/SAL (Zydis decodes both as SHL), SHR,
 * SAR, ROL, ROR, RCL, RCR, SHLD, SHRD, and the flag-less BMI2 forms SARX,
 * SHLX, SHRX, RORX.
 *
 * SDM Vol. 2B, "SAL/SAR/SHL/SHR", "RCL/RCR/ROL/ROR", "SHLD", "SHRD":
 *  - the count is masked to 5 bits (6 with REX.W); a masked count of 0
 *    changes no flag, but the destination is still written: a 32-bit
 *    register is zero-extended and a read-only memory operand faults, as
 *    on the host;
 *  - OF is defined only for a count of 1, AF is undefined for shifts.
 *
 * Where the SDM leaves a result undefined we reproduce AMD Zen, measured
 * by running every form natively on the Zen host with random operands and
 * counts 0..69 and comparing all registers, memory and the six flags:
 *  - SHL, SHR, SAR, SHLD, SHRD with a nonzero count set AF;
 *  - OF for any nonzero count: SHL and SHLD: MSB(result) XOR CF; SHR:
 *    MSB(original) for count 1 and 0 beyond; SAR: 0; ROL, RCL: MSB(result)
 *    XOR CF; ROR, RCR, SHRD: the XOR of the two top result bits (the
 *    count-1 rules, applied to every count);
 *  - 8/16-bit SHL/SHR with a count past the width: plain wide shifts (CF
 *    is the bit that would be moved out, 0 beyond the width);
 *  - 16-bit SHLD/SHRD with a count of 16..31: see shift_calc.
 */
#include "ops.h"

/* Destination access with the register case first (the common one). */
static inline int dst_rd(es_machine *m, const es_insn *d, uint64_t *v)
{
    const es_operand *o = &d->o[0];
    if (__builtin_expect(o->kind == ES_OPK_GPR, 1)) {
        *v = m->gpr[o->reg] & es_mask(o->size);
        return 0;
    }
    return es_rd(m, d, 0, v);
}

static inline int dst_wr(es_machine *m, const es_insn *d, uint64_t v)
{
    const es_operand *o = &d->o[0];
    if (__builtin_expect(o->kind == ES_OPK_GPR, 1)) {
        es_gpr_set(m, o->reg, o->size, v);
        return 0;
    }
    return es_wr(m, d, 0, v);
}

/* The masked shift count of operand i: an immediate or CL. */
static inline unsigned shift_count(const es_machine *m, const es_insn *d, int i)
{
    const es_operand *o = &d->o[i];
    uint64_t c = o->kind == ES_OPK_IMM ? (uint64_t)o->imm : m->gpr[ES_RCX];
    return (unsigned)c & (d->o[0].size == 8 ? 63 : 31);
}

static inline uint64_t msb(uint64_t v, unsigned w)
{
    return (v >> (w - 1)) & 1;
}

/* Flags after a shift: S/Z/P from the result, then CF and OF. */
static inline void shift_flags(es_machine *m, uint64_t r, unsigned sz, uint64_t cf, uint64_t of,
                               uint64_t af)
{
    uint64_t f = es_flags_szp(r, sz) | (cf ? ES_CF : 0) | (of ? ES_OF : 0) | (af ? ES_AF : 0);
    es_set_flags(m, f, ES_ARITH_FLAGS);
}

/* A count of 0 still performs the write (zero-extension of a 32-bit
 * register, and the access check of a memory operand). */
static inline int write_back(es_machine *m, const es_insn *d, uint64_t v)
{
    return dst_wr(m, d, v) ? ES_FAULT : ES_OK;
}

/* Rotates change only CF and OF. */
static inline void rot_flags(es_machine *m, uint64_t cf, uint64_t of)
{
    es_set_flags(m, (cf ? ES_CF : 0) | (of ? ES_OF : 0), ES_CF | ES_OF);
}

static inline uint64_t rotl(uint64_t a, unsigned n, unsigned w)
{
    n &= w - 1;
    if (n == 0)
        return a;
    return ((a << n) | (a >> (w - n))) & es_mask(w / 8);
}

/* RCL/RCR rotate the (w+1)-bit value CF:dest.  The count is taken modulo
 * 9 for bytes and 17 for words (SDM: tempCOUNT); a count that reduces to
 * 0 rotates nothing but, being nonzero, still defines OF. */
static inline unsigned rc_count(unsigned c, unsigned w)
{
    return w == 8 ? c % 9 : w == 16 ? c % 17 : c;
}

enum { S_SHL, S_SHR, S_SAR, S_ROL, S_ROR, S_RCL, S_RCR, S_SHLD, S_SHRD };

/* SHLD/SHRD with a 16-bit operand and a count of 17..31 (undefined in the
 * SDM) on Intel: the 48-bit value dest:src:dest shifted, as measured on an
 * Intel host (Emerald Rapids) by tests/diff: SHLD takes bits 32-c..47-c,
 * SHRD bits c..c+15; CF is the last bit shifted out. */
static inline uint64_t intel_wide16(uint64_t a, uint64_t b)
{
    return (a << 32) | (b << 16) | a;
}

/* The result r, CF and OF of shift/rotate k of a (b: SHLD/SHRD's source)
 * by a nonzero masked count c at width w. */
static inline __attribute__((always_inline)) uint64_t
shift_calc(const es_machine *m, int k, uint64_t a, uint64_t b, unsigned c, unsigned sz,
           uint64_t *cf, uint64_t *of)
{
    unsigned w = sz * 8, t;
    uint64_t r;
    unsigned __int128 v;
    switch (k) {
    case S_SHL:
        r = (a << c) & es_mask(sz);
        /* bit w-c of a; zero once c passes the width (8/16-bit operands) */
        *cf = ((a << (c - 1)) >> (w - 1)) & 1;
        *of = msb(r, w) ^ *cf;
        return r;
    case S_SHR:
        *cf = (a >> (c - 1)) & 1;
        *of = c == 1 ? msb(a, w) : 0;
        return a >> c; /* c <= 31 for widths <= 32, <= 63 for 64 */
    case S_SAR: {
        int64_t s = es_sext(a, sz);
        *cf = (uint64_t)(s >> (c - 1)) & 1;
        *of = 0;
        return (uint64_t)(s >> c) & es_mask(sz);
    }
    case S_ROL:
        r = rotl(a, c, w);
        *cf = r & 1;
        *of = msb(r, w) ^ *cf;
        return r;
    case S_ROR:
        r = rotl(a, w - (c & (w - 1)), w);
        *cf = msb(r, w);
        *of = *cf ^ ((r >> (w - 2)) & 1);
        return r;
    case S_RCL:
    case S_RCR:
        t = rc_count(c, w);
        v = ((unsigned __int128)(m->rflags & ES_CF) << w) | a;
        if (t)
            v = k == S_RCL ? (v << t) | (v >> (w + 1 - t)) : (v >> t) | (v << (w + 1 - t));
        r = (uint64_t)v & es_mask(sz);
        *cf = (uint64_t)(v >> w) & 1;
        *of = k == S_RCL ? msb(r, w) ^ *cf : msb(r, w) ^ ((r >> (w - 2)) & 1);
        return r;
    case S_SHLD:
        if (c < w) {
            r = ((a << c) | (b >> (w - c))) & es_mask(sz);
            *cf = (a >> (w - c)) & 1;
            *of = msb(r, w) ^ *cf;
            return r;
        }
        if (m->vendor == 0) {
            uint64_t v = intel_wide16(a, b);
            r = (v >> (32 - c)) & 0xffff;
            *cf = (v >> (48 - c)) & 1;
            *of = msb(r, w) ^ *cf;
            return r;
        }
        /* 16-bit operand, count 16..31: undefined in the SDM.  Zen returns
         * the source rotated left by count-16, with CF = the last bit of
         * dest shifted out at count 16 and 0 beyond; OF is then CF. */
        *cf = c == 16 ? a & 1 : 0;
        *of = *cf;
        return rotl(b, c - 16, 16);
    default: /* S_SHRD */
        if (c < w) {
            r = ((a >> c) | (b << (w - c))) & es_mask(sz);
            *cf = (a >> (c - 1)) & 1;
        } else if (m->vendor == 0) {
            uint64_t v = intel_wide16(a, b);
            r = (v >> c) & 0xffff;
            *cf = (v >> (c - 1)) & 1;
        } else {
            /* 16-bit, count 16..31 (undefined): as on Zen, the source
             * rotated right by count-16; CF = MSB(dest) at count 16, else 0. */
            r = rotl(b, 32 - c, 16);
            *cf = c == 16 ? msb(a, 16) : 0;
        }
        *of = msb(r, w) ^ ((r >> (w - 2)) & 1);
        return r;
    }
}

/* Every shift and rotate by a count has this shape: read the destination
 * (and SHLD/SHRD's source), a zero count writes it back unchanged, else
 * write the result and set the flags (rotates: CF and OF only).  Inlined
 * into each handler with a constant k, so each keeps its own code. */
static inline __attribute__((always_inline)) int shift_op(es_machine *m, const es_insn *d, int k)
{
    int dbl = k == S_SHLD || k == S_SHRD;
    unsigned sz = d->o[0].size, c = shift_count(m, d, dbl ? 2 : 1);
    uint64_t a, b = 0, cf, of;
    TRY(dst_rd(m, d, &a));
    if (dbl)
        TRY(es_rd(m, d, 1, &b));
    if (c == 0)
        return write_back(m, d, a);
    uint64_t r = shift_calc(m, k, a, b, c, sz, &cf, &of);
    TRY(dst_wr(m, d, r));
    if (k >= S_ROL && k <= S_RCR)
        rot_flags(m, cf, of);
    else
        shift_flags(m, r, sz, cf, of, 1);
    return ES_OK;
}

int op_shl(es_machine *m, const es_insn *d) { return shift_op(m, d, S_SHL); }
int op_shr(es_machine *m, const es_insn *d) { return shift_op(m, d, S_SHR); }
int op_sar(es_machine *m, const es_insn *d) { return shift_op(m, d, S_SAR); }
int op_rol(es_machine *m, const es_insn *d) { return shift_op(m, d, S_ROL); }
int op_ror(es_machine *m, const es_insn *d) { return shift_op(m, d, S_ROR); }
int op_rcl(es_machine *m, const es_insn *d) { return shift_op(m, d, S_RCL); }
int op_rcr(es_machine *m, const es_insn *d) { return shift_op(m, d, S_RCR); }

/* SHLD/SHRD dest, src, count: dest shifted with bits of src filling in. */
int op_shld(es_machine *m, const es_insn *d) { return shift_op(m, d, S_SHLD); }
int op_shrd(es_machine *m, const es_insn *d) { return shift_op(m, d, S_SHRD); }

/* ---- BMI2: no flags; the count is the third operand (a register, or the
 * immediate of RORX) masked to the operand width. ---- */

static inline __attribute__((always_inline)) int bmi2_shift(es_machine *m, const es_insn *d,
                                                            int k)
{
    uint64_t a, c, r;
    TRY(es_rd(m, d, 1, &a));
    TRY(es_rd(m, d, 2, &c));
    unsigned w = d->o[0].size * 8, n = (unsigned)(c & (w - 1));
    switch (k) {
    case S_SHL: r = a << n; break;
    case S_SHR: r = a >> n; break;
    case S_SAR: r = (uint64_t)(es_sext(a, w / 8) >> n); break;
    default: r = rotl(a, w - n, w); break; /* RORX */
    }
    return write_back(m, d, r);
}

int op_shlx(es_machine *m, const es_insn *d) { return bmi2_shift(m, d, S_SHL); }
int op_shrx(es_machine *m, const es_insn *d) { return bmi2_shift(m, d, S_SHR); }
int op_sarx(es_machine *m, const es_insn *d) { return bmi2_shift(m, d, S_SAR); }
int op_rorx(es_machine *m, const es_insn *d) { return bmi2_shift(m, d, S_ROR); }

