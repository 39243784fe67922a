/* sse_cvt.c - conversions between integers, single and double precision.
 *
 * Integer -> FP and FP -> FP conversions run on the host under the guest's
 * MXCSR (the host's conversion instructions give the bit-exact result and
 * flags).  FP -> integer is explicit: out-of-range and NaN sources give the
 * integer indefinite (0x80000000 / 0x8000000000000000) with IE, inexact
 * results set PE, and DE is never signalled (SDM Vol. 2, CVTSD2SI). */
#include <math.h>

#include "sse.h"

#define INT_PIN(v) __asm__ volatile("" : "+r"(v))

/* Converts x (already flushed by DAZ) to a `bits`-bit integer, rounding
 * per rc (0 nearest-even, 1 down, 2 up, 3 toward zero). */
static inline uint64_t fp_to_int(double x, int nan, unsigned rc, int bits, uint32_t *f)
{
    uint64_t indef = bits == 64 ? 0x8000000000000000ull : 0x80000000ull;
    if (nan) {
        *f |= ES_MXCSR_IE;
        return indef;
    }
    double ti = trunc(x);
    double diff = x - ti; /* exact; NaN for infinities, which fail the range check */
    switch (rc) {
    case 0:
        if (diff > 0.5 || (diff == 0.5 && fmod(ti, 2.0) != 0))
            ti += 1;
        else if (diff < -0.5 || (diff == -0.5 && fmod(ti, 2.0) != 0))
            ti -= 1;
        break;
    case 1:
        if (diff < 0)
            ti -= 1;
        break;
    case 2:
        if (diff > 0)
            ti += 1;
        break;
    default: break;
    }
    int ok = bits == 64 ? (ti >= -9223372036854775808.0 && ti < 9223372036854775808.0)
                        : (ti >= -2147483648.0 && ti <= 2147483647.0);
    if (!ok) {
        *f |= ES_MXCSR_IE;
        return indef;
    }
    if (ti != x)
        *f |= ES_MXCSR_PE;
    return (uint64_t)(int64_t)ti & es_mask((unsigned)bits / 8);
}

static inline unsigned mx_rc(const es_machine *m)
{
    return (m->mxcsr >> 13) & 3;
}

static inline uint64_t f32_to_int(const es_machine *m, uint32_t b, unsigned rc, int bits,
                                  uint32_t *f)
{
    b = sse_daz_f(m, b);
    return fp_to_int((double)sse_f(b), sse_isnan_f(b), rc, bits, f);
}

static inline uint64_t f64_to_int(const es_machine *m, uint64_t b, unsigned rc, int bits,
                                  uint32_t *f)
{
    b = sse_daz_d(m, b);
    return fp_to_int(sse_d(b), sse_isnan_d(b), rc, bits, f);
}

/* CVT(T)SS2SI / CVT(T)SD2SI r32/r64, xmm/m32/m64. */
static inline int cvt_s2si(es_machine *m, const es_insn *d, int dbl, int trunc)
{
    es_xmm t;
    const es_xmm *s = sse_src(m, d, 1, &t, 0);
    if (!s)
        return ES_FAULT;
    const es_operand *o = &d->o[0];
    int bits = o->size == 8 ? 64 : 32;
    unsigned rc = trunc ? 3 : mx_rc(m);
    uint32_t f = 0;
    uint64_t v = dbl ? f64_to_int(m, s->q[0], rc, bits, &f) : f32_to_int(m, s->d[0], rc, bits, &f);
    TRY(sse_fp_commit(m, f));
    es_gpr_set(m, o->reg, o->size, v);
    return ES_OK;
}

int op_cvtss2si(es_machine *m, const es_insn *d) { return cvt_s2si(m, d, 0, 0); }
int op_cvttss2si(es_machine *m, const es_insn *d) { return cvt_s2si(m, d, 0, 1); }
int op_cvtsd2si(es_machine *m, const es_insn *d) { return cvt_s2si(m, d, 1, 0); }
int op_cvttsd2si(es_machine *m, const es_insn *d) { return cvt_s2si(m, d, 1, 1); }

/* CVTSI2SS / CVTSI2SD xmm, r/m32/64: the low element, rounded per MXCSR. */
static inline int cvt_si2s(es_machine *m, const es_insn *d, int dbl)
{
    if (d->o[0].kind != ES_OPK_XMM)
        return es_unimplemented(m, d);
    uint64_t v;
    TRY(es_rd(m, d, 1, &v));
    int64_t iv = es_sext(v, d->o[1].size);
    es_xmm *x = &m->vr[d->o[0].reg];
    uint32_t h = sse_fp_enter(m);
    INT_PIN(iv);
    if (dbl) {
        double r = (double)iv;
        SSE_PIN(r);
        TRY(sse_fp_commit(m, sse_fp_leave(h)));
        x->q[0] = sse_dbits(r);
    } else {
        float r = (float)iv;
        SSE_PIN(r);
        TRY(sse_fp_commit(m, sse_fp_leave(h)));
        x->d[0] = sse_fbits(r);
    }
    return ES_OK;
}

int op_cvtsi2ss(es_machine *m, const es_insn *d) { return cvt_si2s(m, d, 0); }
int op_cvtsi2sd(es_machine *m, const es_insn *d) { return cvt_si2s(m, d, 1); }

/* ---- FP <-> FP ---- */

static inline uint64_t f2d(uint32_t b)
{
    float v = sse_f(b);
    SSE_PIN(v);
    double r = (double)v;
    SSE_PIN(r);
    return sse_dbits(r);
}

static inline float d2f_value(double v)
{
    SSE_PIN(v);
    float r = (float)v;
    SSE_PIN(r);
    return r;
}

static inline uint32_t d2f(uint64_t b)
{
    return sse_fbits(d2f_value(sse_d(b)));
}

/* CVTSD2SS with OE or UE unmasked: the flags follow the result rounded
 * with an unbounded exponent (sse_round_unbounded_f); see sse_fp.c. */
static uint32_t d2f_lane(const es_machine *m, uint64_t b, uint32_t *f)
{
    uint32_t h = sse_fp_enter_mx(sse_fp_lane_mxcsr(m));
    uint32_t r = d2f(b);
    uint32_t lf = sse_fp_leave(h);
    if (!(lf & ES_MXCSR_IE)) {
        double v = sse_d(sse_daz_d(m, b));
        uint32_t g = 0;
        double mag = sse_round_unbounded_f(m, v, &g);
        if (!(m->mxcsr & ES_MXCSR_UM) && mag != 0 && mag < 0x1p-126)
            lf = (lf & ~(ES_MXCSR_UE | ES_MXCSR_PE)) | ES_MXCSR_UE | (g & ES_MXCSR_PE);
        else if (!(m->mxcsr & ES_MXCSR_OM) && (lf & ES_MXCSR_OE))
            lf = (lf & ~ES_MXCSR_PE) | (g & ES_MXCSR_PE);
    }
    *f |= lf;
    return r;
}

int op_cvtss2sd(es_machine *m, const es_insn *d)
{
    SSE_OPERANDS(x, s, t, 0);
    uint32_t h = sse_fp_enter(m);
    uint64_t r = f2d(s->d[0]);
    TRY(sse_fp_commit(m, sse_fp_leave(h)));
    x->q[0] = r;
    return ES_OK;
}

int op_cvtsd2ss(es_machine *m, const es_insn *d)
{
    SSE_OPERANDS(x, s, t, 0);
    uint32_t f = 0, r;
    if (sse_fp_plain(m)) {
        uint32_t h = sse_fp_enter(m);
        r = d2f(s->q[0]);
        f = sse_fp_leave(h);
    } else {
        r = d2f_lane(m, s->q[0], &f);
    }
    TRY(sse_fp_commit(m, f));
    x->d[0] = r;
    return ES_OK;
}

/* CVTPS2PD xmm, xmm/m64 */
int op_cvtps2pd(es_machine *m, const es_insn *d)
{
    SSE_OPERANDS(x, s, t, 0);
    es_xmm r;
    uint32_t h = sse_fp_enter(m);
    r.q[0] = f2d(s->d[0]);
    r.q[1] = f2d(s->d[1]);
    TRY(sse_fp_commit(m, sse_fp_leave(h)));
    *x = r;
    return ES_OK;
}

/* CVTPD2PS xmm, xmm/m128: the upper half of the result is zeroed. */
int op_cvtpd2ps(es_machine *m, const es_insn *d)
{
    SSE_OPERANDS(x, s, t, 1);
    es_xmm r = {{0}};
    uint32_t f = 0;
    if (sse_fp_plain(m)) {
        uint32_t h = sse_fp_enter(m);
        r.d[0] = d2f(s->q[0]);
        r.d[1] = d2f(s->q[1]);
        f = sse_fp_leave(h);
    } else {
        r.d[0] = d2f_lane(m, s->q[0], &f);
        r.d[1] = d2f_lane(m, s->q[1], &f);
    }
    TRY(sse_fp_commit(m, f));
    *x = r;
    return ES_OK;
}

/* CVTDQ2PS xmm, xmm/m128: rounded per MXCSR. */
int op_cvtdq2ps(es_machine *m, const es_insn *d)
{
    SSE_OPERANDS(x, s, t, 1);
    es_xmm r;
    uint32_t h = sse_fp_enter(m);
    for (int i = 0; i < 4; i++) {
        int32_t v = s->sd[i];
        INT_PIN(v);
        float fr = (float)v;
        SSE_PIN(fr);
        r.d[i] = sse_fbits(fr);
    }
    TRY(sse_fp_commit(m, sse_fp_leave(h)));
    *x = r;
    return ES_OK;
}

/* CVTDQ2PD xmm, xmm/m64: exact. */
int op_cvtdq2pd(es_machine *m, const es_insn *d)
{
    SSE_OPERANDS(x, s, t, 0);
    es_xmm r;
    r.g[0] = (double)s->sd[0];
    r.g[1] = (double)s->sd[1];
    *x = r;
    return ES_OK;
}

/* CVT(T)PS2DQ xmm, xmm/m128 (four lanes) and CVT(T)PD2DQ xmm, xmm/m128
 * (two lanes, the upper half of the result zeroed). */
static inline __attribute__((always_inline)) int cvt_to_dq(es_machine *m, const es_insn *d,
                                                           int dbl, int trunc)
{
    SSE_OPERANDS(x, s, t, 1);
    es_xmm r = {{0}};
    uint32_t f = 0;
    unsigned rc = trunc ? 3 : mx_rc(m);
    for (int i = 0; i < (dbl ? 2 : 4); i++)
        r.d[i] = (uint32_t)(dbl ? f64_to_int(m, s->q[i], rc, 32, &f)
                                : f32_to_int(m, s->d[i], rc, 32, &f));
    TRY(sse_fp_commit(m, f));
    *x = r;
    return ES_OK;
}

int op_cvtps2dq(es_machine *m, const es_insn *d) { return cvt_to_dq(m, d, 0, 0); }
int op_cvttps2dq(es_machine *m, const es_insn *d) { return cvt_to_dq(m, d, 0, 1); }
int op_cvtpd2dq(es_machine *m, const es_insn *d) { return cvt_to_dq(m, d, 1, 0); }
int op_cvttpd2dq(es_machine *m, const es_insn *d) { return cvt_to_dq(m, d, 1, 1); }
