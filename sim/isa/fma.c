/* fma.c - FMA3 (VFMADD/VFMSUB/VFNMADD/VFNMSUB{132,213,231}{PS,PD,SS,SD},
 * VFMADDSUB/VFMSUBADD{132,213,231}{PS,PD}) and F16C (VCVTPH2PS,
 * VCVTPS2PH).
 *
 * FMA computes a*b+c with one rounding.  The products and sums are done by
 * the C library's fma()/fmaf() inside the MXCSR bracket of sse.h (the
 * guest's RC, DAZ and FTZ in the host's MXCSR, so on an FMA host glibc's
 * fma is the host instruction and raises exactly its flags); the flags of
 * all elements are committed once.  F16C is computed here bit by bit: the
 * half-precision format has no host arithmetic to borrow. */
#include <math.h>

#include "sse.h"
#include "vex.h"

/* ---- FMA3 ----
 * Every FMA3 opcode is 0F38 9x/Ax/Bx: the high nibble is the operand
 * order (9 = 132, A = 213, B = 231), the low one the operation (6
 * FMADDSUB, 7 FMSUBADD, 8/9 FMADD, A/B FMSUB, C/D FNMADD, E/F FNMSUB, odd
 * = scalar), VEX.W the precision (SDM Vol. 2, 5.1 "Intel AVX / FMA
 * Instructions" opcode tables).  So one handler serves the 60 ops, with
 * the variation in two small tables. */
typedef struct fma_form {
    uint8_t neg_prod; /* -(a*b) */
    uint8_t neg_even; /* subtract c in the even elements (0, 2, ...) */
    uint8_t neg_odd;  /* ... in the odd ones */
    uint8_t scalar;
} fma_form;

static const fma_form kFmaForms[10] = {
    {0, 1, 0, 0}, /* x6 FMADDSUB: even a*b-c, odd a*b+c */
    {0, 0, 1, 0}, /* x7 FMSUBADD: even a*b+c, odd a*b-c */
    {0, 0, 0, 0}, {0, 0, 0, 1}, /* x8/x9 FMADD PS/PD, SS/SD */
    {0, 1, 1, 0}, {0, 1, 1, 1}, /* xA/xB FMSUB */
    {1, 0, 0, 0}, {1, 0, 0, 1}, /* xC/xD FNMADD */
    {1, 1, 1, 0}, {1, 1, 1, 1}, /* xE/xF FNMSUB */
};

/* Which operand (0 = destination, 1 = VEX.vvvv, 2 = r/m) is multiplicand
 * a, multiplicand b and addend c, by order: 132 = dst*rm + vvvv, 213 =
 * vvvv*dst + rm, 231 = vvvv*rm + dst. */
static const uint8_t kFmaOrder[3][3] = {{0, 2, 1}, {1, 0, 2}, {1, 2, 0}};

/* The NaN rule (found on Zen 5 for every form and order, and what the SDM's
 * table 4-7 extends to three operands): the first NaN of a, b, c in that
 * order, quieted, whatever the negations; an SNaN has no precedence. */
#define DEF_FMA_ELEM(W, T, FT, FN, SIGN, QUIET)                                                    \
    static T fma_elem_##W(const es_machine *m, T a, T b, T c, int np, int nc)                      \
    {                                                                                              \
        a = sse_daz_##W(m, a), b = sse_daz_##W(m, b), c = sse_daz_##W(m, c);                      \
        FT x = sse_##W(np ? a ^ SIGN : a), y = sse_##W(b), z = sse_##W(nc ? c ^ SIGN : c);         \
        SSE_PIN(x);                                                                                \
        SSE_PIN(y);                                                                                \
        SSE_PIN(z);                                                                                \
        FT r = FN(x, y, z);                                                                        \
        SSE_PIN(r);                                                                                \
        if (sse_isnan_##W(a))                                                                      \
            return a | QUIET;                                                                      \
        if (sse_isnan_##W(b))                                                                      \
            return b | QUIET;                                                                      \
        if (sse_isnan_##W(c))                                                                      \
            return c | QUIET;                                                                      \
        return sse_##W##bits(r);                                                                   \
    }
DEF_FMA_ELEM(f, uint32_t, float, fmaf, 0x80000000u, 0x00400000u)
DEF_FMA_ELEM(d, uint64_t, double, fma, 0x8000000000000000ull, 0x0008000000000000ull)

/* Element i of the three operands (width ew) into r's element i. */
static void fma_elem(const es_machine *m, const fma_form *f, const es_ymm *a, const es_ymm *b,
                     const es_ymm *c, es_ymm *r, unsigned ew, unsigned i)
{
    int nc = (i & 1) ? f->neg_odd : f->neg_even;
    if (ew == 4)
        r->d[i] = fma_elem_f(m, a->d[i], b->d[i], c->d[i], f->neg_prod, nc);
    else
        r->q[i] = fma_elem_d(m, a->q[i], b->q[i], c->q[i], f->neg_prod, nc);
}

/* ---- unmasked overflow / underflow ----
 * With OE or UE unmasked the flags follow the result rounded with an
 * unbounded exponent (SDM Vol. 1, 4.9.1.4-5): UE for any tiny result,
 * exact or not, and PE for whether that result is exact.  The host ran
 * the element masked (without FTZ, sse_fp_lane_mxcsr); where it
 * overflowed or came near underflow, the element is computed again out of
 * range: single precision as a double FMA (a*b+c rounded once to 53 bits,
 * then to 24 with an unbounded exponent by sse_round_unbounded_f), double
 * precision with the smaller multiplicand and the addend scaled by
 * 2^+-600 (exact for every element that can reach these cases; a
 * scaled value that leaves the range keeps the masked flags). */
static uint32_t fma_unbounded_f(const es_machine *m, float x, float y, float z, uint32_t lf)
{
    double a = x, b = y, c = z;
    uint32_t g = 0, h = sse_fp_enter_mx(sse_fp_lane_mxcsr(m) & ~(ES_MXCSR_DAZ | ES_MXCSR_FTZ));
    SSE_PIN(a);
    SSE_PIN(b);
    SSE_PIN(c);
    double v = fma(a, b, c);
    SSE_PIN(v);
    g = sse_fp_leave(h) & ES_MXCSR_PE;
    double mag = sse_round_unbounded_f(m, v, &g);
    lf = (lf & ~(ES_MXCSR_UE | ES_MXCSR_PE)) | g;
    if (mag != 0 && mag < 0x1p-126)
        lf |= ES_MXCSR_UE;
    return lf;
}

static uint32_t fma_unbounded_d(const es_machine *m, double x, double y, double z, int up,
                                uint32_t lf)
{
    if (__builtin_fabs(x) > __builtin_fabs(y)) {
        double t = x;
        x = y, y = t;
    }
    int s = up ? 600 : -600;
    double a = __builtin_ldexp(x, s), c = __builtin_ldexp(z, s);
    if (__builtin_isinf(a) || __builtin_isinf(c) || (a == 0) != (x == 0) || (c == 0) != (z == 0))
        return lf;
    uint32_t h = sse_fp_enter_mx(sse_fp_lane_mxcsr(m) & ~(ES_MXCSR_DAZ | ES_MXCSR_FTZ));
    SSE_PIN(a);
    SSE_PIN(y);
    SSE_PIN(c);
    double v = fma(a, y, c);
    SSE_PIN(v);
    uint32_t g = sse_fp_leave(h);
    lf = (lf & ~(ES_MXCSR_UE | ES_MXCSR_PE)) | (g & ES_MXCSR_PE);
    double mag = __builtin_fabs(v);
    if (up && mag != 0 && mag < 0x1p-422) /* 2^-1022 * 2^600 */
        lf |= ES_MXCSR_UE;
    return lf;
}

/* Element i again for the unmasked flags when its masked flags lf and
 * result say it overflowed or may be tiny. */
static uint32_t fma_unmasked(const es_machine *m, const fma_form *f, const es_ymm *a,
                             const es_ymm *b, const es_ymm *c, const es_ymm *r, unsigned ew,
                             unsigned i, uint32_t lf)
{
    int up = !(m->mxcsr & ES_MXCSR_UM) &&
             ((lf & ES_MXCSR_UE) || (ew == 4 ? sse_isdenorm_f(r->d[i]) : sse_isdenorm_d(r->q[i])));
    int ov = !(m->mxcsr & ES_MXCSR_OM) && (lf & ES_MXCSR_OE);
    if (!up && !ov)
        return lf;
    int nc = (i & 1) ? f->neg_odd : f->neg_even;
    if (ew == 4) {
        float x = sse_f(sse_daz_f(m, a->d[i])), y = sse_f(sse_daz_f(m, b->d[i]));
        float z = sse_f(sse_daz_f(m, c->d[i]));
        return fma_unbounded_f(m, f->neg_prod ? -x : x, y, nc ? -z : z, lf);
    }
    double x = sse_d(sse_daz_d(m, a->q[i])), y = sse_d(sse_daz_d(m, b->q[i]));
    double z = sse_d(sse_daz_d(m, c->q[i]));
    return fma_unbounded_d(m, f->neg_prod ? -x : x, y, nc ? -z : z, up, lf);
}

/* All FMA3 ops.  The scalar forms (VEX.LIG) compute element 0 and keep
 * bits 127:ew*8 of the destination, zeroing 255:128 (SDM Vol. 2,
 * VFMADD132SD: "DEST[127:64] <- DEST[127:64]; DEST[MAXVL-1:128] <- 0"). */
int op_vfma(es_machine *m, const es_insn *d)
{
    TRY(es_vex_check(m));
    unsigned lo = d->opcode & 0xf, hi = d->opcode >> 4;
    if (lo < 6 || hi < 9 || hi > 11 || d->o[0].kind == ES_OPK_MEM)
        return es_unimplemented(m, d);
    const fma_form *f = &kFmaForms[lo - 6];
    const uint8_t *ord = kFmaOrder[hi - 9];
    es_ymm v[3], r;
    for (int i = 0; i < 3; i++)
        TRY(es_vread(m, d, i, &v[i]));
    /* the precision is VEX.W, which the mnemonic spells: ...PS/SS or
     * ...PD/SD (read from the name, which does not depend on how the
     * decoder reports VEX.W) */
    const char *name = es_op_name(d->op);
    unsigned ew = name[strlen(name) - 1] == 'd' ? 8 : 4;
    unsigned n = f->scalar ? 1 : es_vlen(d) / ew;
    r = v[0];
    uint32_t flags = 0;
    if (sse_fp_plain(m)) {
        uint32_t h = sse_fp_enter(m);
        for (unsigned i = 0; i < n; i++)
            fma_elem(m, f, &v[ord[0]], &v[ord[1]], &v[ord[2]], &r, ew, i);
        flags = sse_fp_leave(h);
    } else {
        for (unsigned i = 0; i < n; i++) {
            uint32_t h = sse_fp_enter_mx(sse_fp_lane_mxcsr(m));
            fma_elem(m, f, &v[ord[0]], &v[ord[1]], &v[ord[2]], &r, ew, i);
            uint32_t lf = sse_fp_leave(h);
            flags |= fma_unmasked(m, f, &v[ord[0]], &v[ord[1]], &v[ord[2]], &r, ew, i, lf);
        }
    }
    TRY(sse_fp_commit(m, flags));
    if (f->scalar)
        memset(&r.x[1], 0, sizeof r.x[1]);
    return es_vwrite(m, d, 0, &r, 0) ? ES_FAULT : ES_OK;
}

/* ---- F16C ---- */

/* Half to single: exact (the format is a subset), denormal halves become
 * normal singles, MXCSR.DAZ does not apply and no DE is raised; an SNaN is
 * quieted with IE (SDM Vol. 2, VCVTPH2PS; checked on Zen 5). */
static uint32_t half_to_single(uint16_t h, uint32_t *fl)
{
    uint32_t s = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1f, f = h & 0x3ffu;
    if (e == 0x1f) {
        if (f && !(f & 0x200))
            *fl |= ES_MXCSR_IE;
        return s | 0x7f800000u | (f << 13) | (f ? 0x00400000u : 0);
    }
    if (e == 0) {
        if (!f)
            return s;
        unsigned p = 31 - (unsigned)__builtin_clz(f); /* f = 1.x * 2^p, value f * 2^-24 */
        return s | ((p + 103) << 23) | ((f << (23 - p)) & 0x7fffffu);
    }
    return s | ((e + 112) << 23) | (f << 13);
}

/* m >> sh rounded by rc (0 nearest-even, 1 down, 2 up, 3 toward zero) for
 * a value of sign neg; *inexact when bits were lost. */
static uint32_t round_shift(uint32_t mant, unsigned sh, int neg, unsigned rc, int *inexact)
{
    uint32_t q = sh > 31 ? 0 : mant >> sh;
    uint32_t rem = sh > 31 ? mant : mant & ((1u << sh) - 1);
    /* past 32 bits the whole 24-bit significand is below half a unit */
    uint32_t half = sh > 32 ? 0xffffffffu : 1u << (sh - 1);
    *inexact = rem != 0;
    if (!rem)
        return q;
    switch (rc) {
    case 0: return q + (rem > half || (rem == half && (q & 1)));
    case 1: return q + (neg ? 1 : 0);
    case 2: return q + (neg ? 0 : 1);
    default: return q;
    }
}

/* Single to half under rounding control rc.  MXCSR.DAZ applies to the
 * input (a denormal input otherwise raises DE), FTZ does not apply to the
 * result; overflow and tininess are judged on the result rounded with an
 * unbounded exponent (SDM Vol. 1, 4.9.1.4-5; VCVTPS2PH "MXCSR.FTZ is
 * ignored"), all checked on Zen 5. */
static uint16_t single_to_half(const es_machine *m, uint32_t x, unsigned rc, uint32_t *fl)
{
    uint16_t s = (uint16_t)((x >> 16) & 0x8000u);
    int neg = s != 0;
    uint32_t e = (x >> 23) & 0xff, f = x & 0x7fffffu;
    if (e == 0xff) {
        if (f && !(f & 0x00400000u))
            *fl |= ES_MXCSR_IE;
        return (uint16_t)(s | 0x7c00u | (f ? 0x200u | (f >> 13) : 0));
    }
    if (e == 0 && (!f || (m->mxcsr & ES_MXCSR_DAZ)))
        return s;
    if (e == 0)
        *fl |= ES_MXCSR_DE;
    int E = e ? (int)e - 127 : -126;     /* unbiased exponent */
    uint32_t mant = e ? f | 0x800000u : f; /* value = mant * 2^(E-23) */
    int inexact, tiny = E < -14;
    if (E == -15) {
        /* rounded to 11 bits it may reach 2^-14: then not tiny */
        int ix;
        tiny = round_shift(mant, 13, neg, rc, &ix) < 0x800;
    }
    int qe = E < -14 ? -14 : E; /* exponent of the half's leading bit */
    uint32_t r = round_shift(mant, (unsigned)(13 + (qe - E)), neg, rc, &inexact);
    uint32_t bits = ((uint32_t)(qe + 14) << 10) + r;
    if (bits >= 0x7c00u) {
        /* masked, the result (infinity or the largest half) is inexact;
         * unmasked, PE says whether the unbounded-exponent result is
         * (SDM Vol. 1, 4.9.1.4; seen on the host: OE alone for an exact
         * one) */
        *fl |= ES_MXCSR_OE | ((inexact || (m->mxcsr & ES_MXCSR_OM)) ? ES_MXCSR_PE : 0);
        int to_inf = rc == 0 || (rc == 1 && neg) || (rc == 2 && !neg);
        return (uint16_t)(s | (to_inf ? 0x7c00u : 0x7bffu));
    }
    if (inexact)
        *fl |= ES_MXCSR_PE;
    if (tiny && (inexact || !(m->mxcsr & ES_MXCSR_UM)))
        *fl |= ES_MXCSR_UE;
    return (uint16_t)(s | bits);
}

/* VCVTPH2PS xmm1, xmm2/m64 and ymm1, xmm2/m128. */
int op_vcvtph2ps(es_machine *m, const es_insn *d)
{
    TRY(es_vex_check(m));
    es_ymm s, r;
    TRY(es_vread(m, d, 1, &s));
    unsigned n = es_vlen(d) / 4;
    uint32_t fl = 0;
    memset(&r, 0, sizeof r);
    for (unsigned i = 0; i < n; i++)
        r.d[i] = half_to_single(s.w[i], &fl);
    TRY(sse_fp_commit(m, fl));
    return es_vwrite(m, d, 0, &r, 0) ? ES_FAULT : ES_OK;
}

/* VCVTPS2PH xmm1/m64, xmm2, imm8 and xmm1/m128, ymm2, imm8: imm8[1:0] is
 * the rounding mode unless imm8[2] selects MXCSR.RC (SDM Vol. 2,
 * VCVTPS2PH, table 5-3).  A register destination gets zeros above the
 * result (bits 127:64 of the VEX.128 form, 255:128 of both). */
int op_vcvtps2ph(es_machine *m, const es_insn *d)
{
    TRY(es_vex_check(m));
    es_ymm s, r;
    TRY(es_vread(m, d, 1, &s));
    unsigned imm = (unsigned)d->o[2].imm, n = es_vlen(d) / 4;
    unsigned rc = (imm & 4) ? (m->mxcsr & ES_MXCSR_RC) >> 13 : imm & 3;
    uint32_t fl = 0;
    memset(&r, 0, sizeof r);
    for (unsigned i = 0; i < n; i++)
        r.w[i] = single_to_half(m, s.d[i], rc, &fl);
    TRY(sse_fp_commit(m, fl));
    return es_vwrite(m, d, 0, &r, 0) ? ES_FAULT : ES_OK;
}
