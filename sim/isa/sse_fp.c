/* sse_fp.c - SSE floating-point arithmetic: ADD/SUB/MUL/DIV/SQRT (computed
 * on the host under the guest's MXCSR), MIN/MAX, CMPcc, (U)COMIS and
 * ROUND (explicit, with SSE's own NaN and flag rules), the SSE3 horizontal
 * forms, DPPS/DPPD and the RCP/RSQRT approximations. */
#include <math.h>

#include "sse.h"

enum { F_ADD, F_SUB, F_MUL, F_DIV, F_SQRT };

/* ---- the two widths ----
 * Everything that exists for single and double precision is written once,
 * as a DEF_ macro instantiated by FP_WIDTHS for each width (suffix W, bit
 * pattern type T, C type FT, es_xmm lane array L, packed suffix P), with
 * the per-width constants below named NAME_##W.  The instances compile to
 * the same code the two hand-written copies did. */
#define FP_WIDTHS(X) X(f, uint32_t, float, d, ps) X(d, uint64_t, double, q, pd)
#define SIGN_f 0x80000000u
#define SIGN_d 0x8000000000000000ull
#define QUIET_f 0x00400000u            /* the quiet bit of a NaN */
#define QUIET_d 0x0008000000000000ull
#define SQRT_f "sqrtss"
#define SQRT_d "sqrtsd"
#define INTEGRAL_f 0x4b000000u         /* 2^23: every float this large is an integer */
#define INTEGRAL_d 0x4330000000000000ull /* 2^52 */
#define BIG_f 8388608.0f
#define BIG_d 4503599627370496.0

/* ---- arithmetic on the host ----
 * The result of the host instruction is exact; only the NaN choice is
 * redone because the compiler may commute a + b: SSE returns the first
 * source's NaN (quieted) if it is one, else the second's (SDM Vol. 1,
 * table 4-7).  An invalid operation on non-NaNs gives the default NaN,
 * which the host already produced.  SQRT is the host instruction itself:
 * the C library's sqrt of a negative number recomputes it with extra
 * flags (DE from (x-x)/(x-x) on a denormal).  Call inside
 * sse_fp_enter/leave. */
#define DEF_ARITH(W, T, FT, L, P)                                                                  \
    static inline T arith_##W(int op, T ab, T bb)                                                  \
    {                                                                                              \
        FT a = sse_##W(ab), b = sse_##W(bb), r;                                                    \
        SSE_PIN(a);                                                                                \
        SSE_PIN(b);                                                                                \
        switch (op) {                                                                              \
        case F_ADD: r = a + b; break;                                                              \
        case F_SUB: r = a - b; break;                                                              \
        case F_MUL: r = a * b; break;                                                              \
        case F_DIV: r = a / b; break;                                                              \
        default: __asm__(SQRT_##W " %1, %0" : "=x"(r) : "x"(b)); break;                            \
        }                                                                                          \
        SSE_PIN(r);                                                                                \
        T rb = sse_##W##bits(r);                                                                   \
        if (__builtin_expect(sse_isnan_##W(rb), 0)) {                                              \
            if (op != F_SQRT && sse_isnan_##W(ab))                                                 \
                rb = ab | QUIET_##W;                                                               \
            else if (sse_isnan_##W(bb))                                                            \
                rb = bb | QUIET_##W;                                                               \
        }                                                                                          \
        return rb;                                                                                 \
    }
FP_WIDTHS(DEF_ARITH)

/* ---- unmasked overflow / underflow ----
 * With OE or UE unmasked the flags depend on the result rounded with an
 * unbounded exponent (SDM Vol. 1, 4.9.1.4-5): an unmasked underflow is
 * signalled for any tiny result, exact or not, and PE then says whether
 * that unbounded result was exact (likewise for overflow).  The result is
 * recomputed where it is not tiny or huge, where the host's PE flag and
 * the magnitude answer both questions.  lf: the lane's masked flags. */

static uint32_t apply_unbounded(const es_machine *m, uint32_t lf, int up, double mag, double thr,
                                uint32_t g)
{
    if (up && mag != 0 && mag < thr)
        return (lf & ~(ES_MXCSR_UE | ES_MXCSR_PE)) | ES_MXCSR_UE | (g & ES_MXCSR_PE);
    if (!up && mag >= thr)
        return (lf & ~ES_MXCSR_PE) | (g & ES_MXCSR_PE);
    return lf;
}

#define UNBOUNDED_NEEDED(up)                                                                       \
    ((up) ? !(m->mxcsr & ES_MXCSR_UM) : (!(m->mxcsr & ES_MXCSR_OM) && (lf & ES_MXCSR_OE)))

/* Single precision: the double-precision result of two floats is exact
 * for MUL and for a tiny or huge ADD/SUB, and within double range for all
 * of them; DIV keeps the double quotient's own PE.  es_sse_round_unbounded
 * then rounds it to 24 bits. */
static uint32_t unmasked_f(const es_machine *m, int op, uint32_t ab, uint32_t bb, uint32_t lf)
{
    if ((lf & (ES_MXCSR_IE | ES_MXCSR_ZE)) || op == F_SQRT)
        return lf; /* no rounded result, or SQRT, which cannot over/underflow */
    double a = sse_f(sse_daz_f(m, ab)), b = sse_f(sse_daz_f(m, bb));
    for (int up = 0; up < 2; up++) {
        if (!UNBOUNDED_NEEDED(up))
            continue;
        uint32_t g = 0;
        uint32_t h = sse_fp_enter_mx(sse_fp_lane_mxcsr(m) & ~ES_MXCSR_DAZ);
        SSE_PIN(a);
        SSE_PIN(b);
        double v = op == F_ADD ? a + b : op == F_SUB ? a - b : op == F_MUL ? a * b : a / b;
        SSE_PIN(v);
        g |= sse_fp_leave(h);
        double mag = sse_round_unbounded_f(m, v, &g);
        lf = apply_unbounded(m, lf, up, mag, up ? 0x1p-126 : 0x1p128, g);
    }
    return lf;
}

/* Double precision: the operands themselves are scaled (exactly: each
 * stays finite and normal whenever the result is in the range checked),
 * the product or quotient by 2^+-1126 / 2^+-1076 in total. */
static uint32_t unmasked_d(const es_machine *m, int op, uint64_t ab, uint64_t bb, uint32_t lf)
{
    if ((lf & (ES_MXCSR_IE | ES_MXCSR_ZE)) || op == F_SQRT)
        return lf;
    double a = sse_d(sse_daz_d(m, ab)), b = sse_d(sse_daz_d(m, bb));
    for (int up = 0; up < 2; up++) {
        if (!UNBOUNDED_NEEDED(up))
            continue;
        double sa = a, sb = b, thr;
        int a_small = __builtin_fabs(a) < __builtin_fabs(b);
        switch (op) {
        case F_MUL:
            if (!up) {
                sa *= 0x1p-563;
                sb *= 0x1p-563;
            } else if (__builtin_fabs(a) < 1 && __builtin_fabs(b) < 1) {
                sa *= 0x1p563;
                sb *= 0x1p563;
            } else if (a_small) {
                sa = sa * 0x1p563 * 0x1p563;
            } else {
                sb = sb * 0x1p563 * 0x1p563;
            }
            thr = up ? 0x1p104 : 0x1p-102;
            break;
        case F_DIV:
            if (!up) {
                sa *= 0x1p-538;
                sb *= 0x1p538;
            } else if (__builtin_fabs(a) < 0x1p-52) {
                sa = sa * 0x1p538 * 0x1p538;
            } else {
                sb = sb * 0x1p-538 * 0x1p-538;
            }
            thr = up ? 0x1p54 : 0x1p-52;
            break;
        default:
            sa = sa * (up ? 0x1p538 : 0x1p-538) * (up ? 0x1p538 : 0x1p-538);
            sb = sb * (up ? 0x1p538 : 0x1p-538) * (up ? 0x1p538 : 0x1p-538);
            thr = up ? 0x1p54 : 0x1p-52;
            break;
        }
        uint32_t g = 0;
        uint32_t h = sse_fp_enter_mx(sse_fp_lane_mxcsr(m) & ~ES_MXCSR_DAZ);
        SSE_PIN(sa);
        SSE_PIN(sb);
        double v = op == F_ADD ? sa + sb : op == F_SUB ? sa - sb : op == F_MUL ? sa * sb : sa / sb;
        SSE_PIN(v);
        g |= sse_fp_leave(h);
        lf = apply_unbounded(m, lf, up, __builtin_fabs(v), thr, g);
    }
    return lf;
}

/* One lane with its own flags, for the unmasked OE/UE path. */
#define DEF_LANE(W, T, FT, L, P)                                                                   \
    static T lane_##W(const es_machine *m, int op, T a, T b, uint32_t *f)                          \
    {                                                                                              \
        uint32_t h = sse_fp_enter_mx(sse_fp_lane_mxcsr(m));                                        \
        T r = arith_##W(op, a, b);                                                                 \
        *f |= unmasked_##W(m, op, a, b, sse_fp_leave(h));                                          \
        return r;                                                                                  \
    }
FP_WIDTHS(DEF_LANE)

/* The computation of a handler: FP_BEGIN enters the MXCSR bracket once for
 * all lanes (the usual case) or selects the per-lane path; FOP
 * compute a lane; FP_END collects the flags into f. */
#define FP_BEGIN                                                                                   \
    int plain_ = sse_fp_plain(m);                                                                  \
    uint32_t f = 0, h_ = plain_ ? sse_fp_enter(m) : 0
#define FOP(W, op, a, b) (plain_ ? arith_##W(op, a, b) : lane_##W(m, op, a, b, &f))
#define FP_END                                                                                     \
    if (plain_)                                                                                    \
    f = sse_fp_leave(h_)

/* `op xmm1, xmm2/mem` over n lanes (n = 1: the SS/SD form, memory is
 * m32/m64 and the other lanes are kept).  ADDSUBPS/PD: subtract in even
 * lanes, add in odd ones.  HADD/HSUB: adjacent pairs of the destination
 * fill the low half, pairs of the source the high half. */
#define DEF_ARITH_P(W, T, FT, L, P)                                                                \
    static inline int arith_##P(es_machine *m, const es_insn *d, int op, int n)                    \
    {                                                                                              \
        SSE_OPERANDS(x, s, t, 1);                                                                  \
        es_xmm r = *x;                                                                             \
        FP_BEGIN;                                                                                  \
        for (int i = 0; i < n; i++)                                                                \
            r.L[i] = FOP(W, op, x->L[i], s->L[i]);                                                 \
        FP_END;                                                                                    \
        TRY(sse_fp_commit(m, f));                                                                  \
        *x = r;                                                                                    \
        return ES_OK;                                                                              \
    }                                                                                              \
    static inline int addsub_##P(es_machine *m, const es_insn *d)                                  \
    {                                                                                              \
        SSE_OPERANDS(x, s, t, 1);                                                                  \
        es_xmm r;                                                                                  \
        FP_BEGIN;                                                                                  \
        for (int i = 0; i < 16 / (int)sizeof(T); i++)                                              \
            r.L[i] = FOP(W, (i & 1) ? F_ADD : F_SUB, x->L[i], s->L[i]);                            \
        FP_END;                                                                                    \
        TRY(sse_fp_commit(m, f));                                                                  \
        *x = r;                                                                                    \
        return ES_OK;                                                                              \
    }                                                                                              \
    static inline int hop_##P(es_machine *m, const es_insn *d, int op)                             \
    {                                                                                              \
        SSE_OPERANDS(x, s, t, 1);                                                                  \
        es_xmm r;                                                                                  \
        enum { half = 8 / (int)sizeof(T) };                                                        \
        FP_BEGIN;                                                                                  \
        for (int i = 0; i < half; i++)                                                             \
            r.L[i] = FOP(W, op, x->L[2 * i], x->L[2 * i + 1]);                                     \
        for (int i = 0; i < half; i++)                                                             \
            r.L[half + i] = FOP(W, op, s->L[2 * i], s->L[2 * i + 1]);                              \
        FP_END;                                                                                    \
        TRY(sse_fp_commit(m, f));                                                                  \
        *x = r;                                                                                    \
        return ES_OK;                                                                              \
    }
FP_WIDTHS(DEF_ARITH_P)

#define ARITH(op, OP)                                                                              \
    int op_##op##ps(es_machine *m, const es_insn *d)                                               \
    {                                                                                              \
        return arith_ps(m, d, OP, 4);                                                              \
    }                                                                                              \
    int op_##op##ss(es_machine *m, const es_insn *d)                                               \
    {                                                                                              \
        return arith_ps(m, d, OP, 1);                                                              \
    }                                                                                              \
    int op_##op##pd(es_machine *m, const es_insn *d)                                               \
    {                                                                                              \
        return arith_pd(m, d, OP, 2);                                                              \
    }                                                                                              \
    int op_##op##sd(es_machine *m, const es_insn *d)                                               \
    {                                                                                              \
        return arith_pd(m, d, OP, 1);                                                              \
    }
ARITH(add, F_ADD)
ARITH(sub, F_SUB)
ARITH(mul, F_MUL)
ARITH(div, F_DIV)
ARITH(sqrt, F_SQRT)

int op_addsubps(es_machine *m, const es_insn *d)
{
    return addsub_ps(m, d);
}

int op_addsubpd(es_machine *m, const es_insn *d)
{
    return addsub_pd(m, d);
}

int op_haddps(es_machine *m, const es_insn *d)
{
    return hop_ps(m, d, F_ADD);
}
int op_hsubps(es_machine *m, const es_insn *d)
{
    return hop_ps(m, d, F_SUB);
}
int op_haddpd(es_machine *m, const es_insn *d)
{
    return hop_pd(m, d, F_ADD);
}
int op_hsubpd(es_machine *m, const es_insn *d)
{
    return hop_pd(m, d, F_SUB);
}

/* DPPS/DPPD run in stages - the multiplies, then each level of adds - and
 * an unmasked exception stops at the stage that raises it: MXCSR then
 * gets the flags of the earlier stages plus that stage's own, chosen as
 * sse_fp_commit does (measured on the host: a denormal product with DM
 * unmasked faults in the add stage with the multiplies' UE and PE set). */
static int stage_commit(es_machine *m, uint32_t *acc, uint32_t f)
{
    uint32_t unmasked = f & ~(m->mxcsr >> 7) & ES_MXCSR_FLAGS;
    if (unmasked) {
        uint32_t pre = f & (ES_MXCSR_IE | ES_MXCSR_DE | ES_MXCSR_ZE);
        m->mxcsr |= *acc;
        return sse_fp_commit(m, (pre & unmasked) ? pre : f);
    }
    *acc |= f;
    return 0;
}

/* The flags of a DPPS/DPPD add stage.  A denormal product is a denormal
 * operand of the adds (DE), except on Intel with underflow unmasked: there
 * the product is kept unrounded inside the instruction, so the adds see
 * no denormal (measured on an Emerald Rapids; Zen 5 flags it either way,
 * stage_commit). */
static uint32_t add_stage_flags(const es_machine *m, uint32_t f)
{
    bool um_unmasked = !(m->mxcsr & (ES_MXCSR_UE << 7));
    return m->vendor == 0 && um_unmasked ? f & ~(uint32_t)ES_MXCSR_DE : f;
}

#define FP_RESTART                                                                                     f = 0;                                                                                             if (plain_)                                                                                        h_ = sse_fp_enter(m)

/* DPPS: products of the lanes selected by imm[7:4] (others +0.0), summed
 * as (p0 + p1) + (p2 + p3), broadcast to the lanes selected by imm[3:0]
 * (SDM Vol. 2, DPPS "Operation"); that is what AMD does.  Intel sums each
 * result lane j on its own as (p[j^1] + p[j]) + (s[j] + s[j^2]) with the
 * pair sums s: the same values, flags and rounding (addition commutes),
 * but which NaN comes out depends on the lane (measured by the
 * differential test on an Emerald Rapids: lane 3 of p = {NaN1, 0, 0, NaN2}
 * is NaN2, lane 0 NaN1); DPPD takes each lane's own product first. */
int op_dpps(es_machine *m, const es_insn *d)
{
    SSE_OPERANDS(x, s, t, 1);
    unsigned imm = sse_imm8(d, 2);
    bool intel = m->vendor == 0;
    uint32_t p[4], ps[4], sum[4], acc = 0;
    FP_BEGIN;
    for (int i = 0; i < 4; i++)
        p[i] = (imm & (0x10u << i)) ? FOP(f, F_MUL, x->d[i], s->d[i]) : 0;
    FP_END;
    TRY(stage_commit(m, &acc, f));
    FP_RESTART;
    for (int j = 0; j < 4; j++)
        ps[j] = intel ? FOP(f, F_ADD, p[j ^ 1], p[j]) : FOP(f, F_ADD, p[j & 2], p[(j & 2) + 1]);
    FP_END;
    TRY(stage_commit(m, &acc, add_stage_flags(m, f)));
    FP_RESTART;
    for (int j = 0; j < 4; j++)
        sum[j] = intel ? FOP(f, F_ADD, ps[j], ps[j ^ 2]) : FOP(f, F_ADD, ps[0], ps[2]);
    FP_END;
    TRY(stage_commit(m, &acc, add_stage_flags(m, f)));
    m->mxcsr |= acc;
    for (int i = 0; i < 4; i++)
        x->d[i] = (imm & (1u << i)) ? sum[i] : 0;
    return ES_OK;
}

int op_dppd(es_machine *m, const es_insn *d)
{
    SSE_OPERANDS(x, s, t, 1);
    unsigned imm = sse_imm8(d, 2);
    uint64_t p[2];
    uint32_t acc = 0;
    FP_BEGIN;
    for (int i = 0; i < 2; i++)
        p[i] = (imm & (0x10u << i)) ? FOP(d, F_MUL, x->q[i], s->q[i]) : 0;
    FP_END;
    TRY(stage_commit(m, &acc, f));
    FP_RESTART;
    bool intel = m->vendor == 0;
    uint64_t sum[2];
    for (int j = 0; j < 2; j++) /* Intel: each lane its own operand first (as DPPS) */
        sum[j] = FOP(d, F_ADD, p[intel ? j : 0], p[intel ? j ^ 1 : 1]);
    FP_END;
    TRY(stage_commit(m, &acc, add_stage_flags(m, f)));
    m->mxcsr |= acc;
    for (int i = 0; i < 2; i++)
        x->q[i] = (imm & (1u << i)) ? sum[i] : 0;
    return ES_OK;
}

/* ---- ordering, done on the bit patterns so no host flag leaks in ---- */

/* Order of two non-NaN values: -1, 0, 1; zeros of either sign are equal. */
#define DEF_ORDER(W, T, FT, L, P)                                                                  \
    static inline int order_##W(T a, T b)                                                          \
    {                                                                                              \
        if (((a | b) & ~SIGN_##W) == 0)                                                            \
            return 0;                                                                              \
        T ka = (a & SIGN_##W) ? ~a : a | SIGN_##W;                                                 \
        T kb = (b & SIGN_##W) ? ~b : b | SIGN_##W;                                                 \
        return ka < kb ? -1 : ka > kb;                                                             \
    }
FP_WIDTHS(DEF_ORDER)

/* Flags of a comparison (CMPcc, MIN/MAX, COMIS): IE for an SNaN, or for
 * any NaN when the comparison signals; DE for a denormal (after DAZ) only
 * when no operand is a NaN - as measured on the host, a NaN suppresses DE. */
#define DEF_CMP_FLAGS(W, T, FT, L, P)                                                              \
    static inline uint32_t cmp_flags_##W(T a, T b, int signaling)                                  \
    {                                                                                              \
        return (sse_isnan_##W(a) || sse_isnan_##W(b))                                              \
                   ? ((signaling || sse_issnan_##W(a) || sse_issnan_##W(b)) ? ES_MXCSR_IE : 0)     \
                   : ((sse_isdenorm_##W(a) || sse_isdenorm_##W(b)) ? ES_MXCSR_DE : 0);             \
    }
FP_WIDTHS(DEF_CMP_FLAGS)

/* MIN/MAX: dst < src ? dst : src (resp. >): the source is returned when
 * either is a NaN or both are zeros (SDM Vol. 2, MINPS).  Operands are
 * taken after DAZ, and the returned value is the flushed one (measured). */
#define DEF_MINMAX(W, T, FT, L, P)                                                                 \
    static inline int minmax_##P(es_machine *m, const es_insn *d, int max, int n)                  \
    {                                                                                              \
        SSE_OPERANDS(x, s, t, 1);                                                                  \
        es_xmm r = *x;                                                                             \
        uint32_t f = 0;                                                                            \
        for (int i = 0; i < n; i++) {                                                              \
            T a = sse_daz_##W(m, x->L[i]), b = sse_daz_##W(m, s->L[i]);                            \
            f |= cmp_flags_##W(a, b, 1);                                                           \
            int pick_a =                                                                           \
                !sse_isnan_##W(a) && !sse_isnan_##W(b) && order_##W(a, b) == (max ? 1 : -1);      \
            r.L[i] = pick_a ? a : b;                                                               \
        }                                                                                          \
        TRY(sse_fp_commit(m, f));                                                                  \
        *x = r;                                                                                    \
        return ES_OK;                                                                              \
    }
FP_WIDTHS(DEF_MINMAX)

int op_minps(es_machine *m, const es_insn *d)
{
    return minmax_ps(m, d, 0, 4);
}
int op_minss(es_machine *m, const es_insn *d)
{
    return minmax_ps(m, d, 0, 1);
}
int op_maxps(es_machine *m, const es_insn *d)
{
    return minmax_ps(m, d, 1, 4);
}
int op_maxss(es_machine *m, const es_insn *d)
{
    return minmax_ps(m, d, 1, 1);
}
int op_minpd(es_machine *m, const es_insn *d)
{
    return minmax_pd(m, d, 0, 2);
}
int op_minsd(es_machine *m, const es_insn *d)
{
    return minmax_pd(m, d, 0, 1);
}
int op_maxpd(es_machine *m, const es_insn *d)
{
    return minmax_pd(m, d, 1, 2);
}
int op_maxsd(es_machine *m, const es_insn *d)
{
    return minmax_pd(m, d, 1, 1);
}

/* CMPcc predicates 0..7: EQ LT LE UNORD NEQ NLT NLE ORD (imm8[2:0]; the
 * legacy encodings ignore bits 7:3).  LT, LE, NLT, NLE signal on QNaN.
 * The VEX forms have 32 (imm8[4:0], SDM Vol. 2, CMPPS, Table 3-1): 8..15
 * are 0..7 with the unordered outcome inverted (EQ_UQ, NGE, NGT, FALSE,
 * NEQ_OQ, GE, GT, TRUE), and 16..31 are 0..15 with the opposite QNaN
 * signalling. */
static inline int pred(unsigned p, int unord, int c)
{
    if (unord)
        return ((p & 7) >= 3 && (p & 7) <= 6) ^ ((p >> 3) & 1);
    switch (p & 7) {
    case 0: return !unord && c == 0;
    case 1: return !unord && c < 0;
    case 2: return !unord && c <= 0;
    case 3: return unord;
    case 4: return unord || c != 0;
    case 5: return unord || c >= 0;
    case 6: return unord || c > 0;
    default: return !unord;
    }
}

static inline int pred_signals(unsigned p)
{
    return ((p & 3) == 1 || (p & 3) == 2) ^ ((p >> 4) & 1);
}

#define DEF_CMP(W, T, FT, L, P)                                                                    \
    static inline int cmp_##P(es_machine *m, const es_insn *d, int n)                              \
    {                                                                                              \
        SSE_OPERANDS(x, s, t, 1);                                                                  \
        unsigned p = sse_imm8(d, 2) & ((d->pfx & ES_PFX_VEX) ? 31 : 7);                            \
        es_xmm r = *x;                                                                             \
        uint32_t f = 0;                                                                            \
        for (int i = 0; i < n; i++) {                                                              \
            T a = sse_daz_##W(m, x->L[i]), b = sse_daz_##W(m, s->L[i]);                            \
            int u = sse_isnan_##W(a) || sse_isnan_##W(b);                                          \
            f |= cmp_flags_##W(a, b, pred_signals(p));                                             \
            r.L[i] = pred(p, u, u ? 0 : order_##W(a, b)) ? (T)~(T)0 : 0;                           \
        }                                                                                          \
        TRY(sse_fp_commit(m, f));                                                                  \
        *x = r;                                                                                    \
        return ES_OK;                                                                              \
    }
FP_WIDTHS(DEF_CMP)

int op_cmpps(es_machine *m, const es_insn *d)
{
    return cmp_ps(m, d, 4);
}
int op_cmpss(es_machine *m, const es_insn *d)
{
    return cmp_ps(m, d, 1);
}
int op_cmppd(es_machine *m, const es_insn *d)
{
    return cmp_pd(m, d, 2);
}

/* CMPSD is also the string compare (A7 with a 32-bit operand size). */
int op_cmpsd(es_machine *m, const es_insn *d)
{
    if (d->nops == 0 || d->o[0].kind != ES_OPK_XMM)
        return es_string_cmpsd(m, d);
    return cmp_pd(m, d, 1);
}

/* (U)COMISS/SD: ZF, PF, CF = 111 unordered, 000 greater, 001 less, 100
 * equal; OF, SF, AF cleared.  COMIS signals on QNaN, UCOMIS only on SNaN. */
static inline int comis(es_machine *m, const es_insn *d, int dbl, int signaling)
{
    es_xmm t;
    const es_xmm *s = sse_src(m, d, 1, &t, 0);
    if (!s)
        return ES_FAULT;
    const es_xmm *x = &m->vr[d->o[0].reg];
    int u, c;
    uint32_t f;
    if (dbl) {
        uint64_t a = sse_daz_d(m, x->q[0]), b = sse_daz_d(m, s->q[0]);
        u = sse_isnan_d(a) || sse_isnan_d(b);
        c = u ? 0 : order_d(a, b);
        f = cmp_flags_d(a, b, signaling);
    } else {
        uint32_t a = sse_daz_f(m, x->d[0]), b = sse_daz_f(m, s->d[0]);
        u = sse_isnan_f(a) || sse_isnan_f(b);
        c = u ? 0 : order_f(a, b);
        f = cmp_flags_f(a, b, signaling);
    }
    TRY(sse_fp_commit(m, f));
    uint64_t fl = u ? (ES_ZF | ES_PF | ES_CF) : c < 0 ? ES_CF : c == 0 ? ES_ZF : 0;
    es_set_flags(m, fl, ES_ARITH_FLAGS);
    return ES_OK;
}

int op_comiss(es_machine *m, const es_insn *d)
{
    return comis(m, d, 0, 1);
}
int op_ucomiss(es_machine *m, const es_insn *d)
{
    return comis(m, d, 0, 0);
}
int op_comisd(es_machine *m, const es_insn *d)
{
    return comis(m, d, 1, 1);
}
int op_ucomisd(es_machine *m, const es_insn *d)
{
    return comis(m, d, 1, 0);
}

/* ---- ROUNDSS/SD/PS/PD ----
 * imm[2] set: MXCSR.RC, else imm[1:0]; imm[3] suppresses PE.  A value
 * below 2^23 (2^52) in magnitude is rounded by adding and subtracting that
 * power of two in the host's rounding mode, which raises PE exactly when
 * it is not an integer.  ROUND never signals DE (measured; SDM lists only
 * IE and PE); DAZ still flushes a denormal source. */
static inline uint32_t round_enter(const es_machine *m, unsigned imm)
{
    uint32_t host, rc = (imm & 4) ? (m->mxcsr & ES_MXCSR_RC) : (imm & 3) << 13;
    uint32_t g = rc | (m->mxcsr & (ES_MXCSR_DAZ | ES_MXCSR_FTZ)) | ES_MXCSR_MASKS;
    __asm__ volatile("stmxcsr %0" : "=m"(host));
    __asm__ volatile("ldmxcsr %0" : : "m"(g));
    return host;
}

#define DEF_ROUND(W, T, FT, L, P)                                                                  \
    static inline T round_##W(T b)                                                                 \
    {                                                                                              \
        if (sse_isnan_##W(b)) {                                                                    \
            FT q = sse_##W(b);                                                                     \
            SSE_PIN(q);                                                                            \
            q = q + (FT)0; /* raises IE for an SNaN */                                             \
            SSE_PIN(q);                                                                            \
            return b | QUIET_##W;                                                                  \
        }                                                                                          \
        if ((b & ~SIGN_##W) >= INTEGRAL_##W) /* already integral */                                \
            return b;                                                                              \
        FT x = sse_##W(b), big = (b & SIGN_##W) ? -BIG_##W : BIG_##W;                              \
        SSE_PIN(x);                                                                                \
        SSE_PIN(big);                                                                              \
        FT r = (x + big) - big;                                                                    \
        SSE_PIN(r);                                                                                \
        return (sse_##W##bits(r) & ~SIGN_##W) | (b & SIGN_##W);                                    \
    }
FP_WIDTHS(DEF_ROUND)

static inline int round_common(es_machine *m, const es_insn *d, int dbl, int n)
{
    SSE_OPERANDS(x, s, t, 1);
    unsigned imm = sse_imm8(d, 2);
    es_xmm r = *x;
    uint32_t h = round_enter(m, imm);
    for (int i = 0; i < n; i++) {
        if (dbl)
            r.q[i] = round_d(s->q[i]);
        else
            r.d[i] = round_f(s->d[i]);
    }
    uint32_t f = sse_fp_leave(h) & ~ES_MXCSR_DE;
    if (imm & 8)
        f &= ~ES_MXCSR_PE;
    TRY(sse_fp_commit(m, f));
    *x = r;
    return ES_OK;
}

int op_roundps(es_machine *m, const es_insn *d)
{
    return round_common(m, d, 0, 4);
}
int op_roundss(es_machine *m, const es_insn *d)
{
    return round_common(m, d, 0, 1);
}
int op_roundpd(es_machine *m, const es_insn *d)
{
    return round_common(m, d, 1, 2);
}
int op_roundsd(es_machine *m, const es_insn *d)
{
    return round_common(m, d, 1, 1);
}

/* ---- RCP / RSQRT ----
 * Hardware returns an implementation-specific approximation (relative
 * error <= 1.5 * 2^-12) that differs between Intel and AMD parts; entrysim
 * returns 1/x and 1/sqrt(x) rounded to single precision, so these results
 * are excluded from the differential comparison.  As on hardware, a
 * denormal source counts as zero, a result too small for a normal float
 * is flushed to zero, and no MXCSR flag is ever raised. */
static inline uint32_t rcp_f(uint32_t b, int rsqrt)
{
    uint32_t sign = b & 0x80000000u, mag = b & 0x7fffffffu;
    if (mag > 0x7f800000u)
        return b | 0x00400000u;
    if (mag < 0x00800000u) /* zero or denormal */
        return sign | 0x7f800000u;
    if (rsqrt && sign)
        return ES_QNAN_F;
    if (mag == 0x7f800000u)
        return sign;
    double v = (double)sse_f(b);
    float r = (float)(rsqrt ? 1.0 / sqrt(v) : 1.0 / v);
    uint32_t rb = sse_fbits(r);
    if ((rb & 0x7f800000u) == 0)
        rb &= 0x80000000u;
    return rb;
}

static inline int rcp_common(es_machine *m, const es_insn *d, int rsqrt, int n)
{
    SSE_OPERANDS(x, s, t, 1);
    es_xmm r = *x;
    for (int i = 0; i < n; i++)
        r.d[i] = rcp_f(s->d[i], rsqrt);
    *x = r;
    return ES_OK;
}

int op_rcpps(es_machine *m, const es_insn *d)
{
    return rcp_common(m, d, 0, 4);
}
int op_rcpss(es_machine *m, const es_insn *d)
{
    return rcp_common(m, d, 0, 1);
}
int op_rsqrtps(es_machine *m, const es_insn *d)
{
    return rcp_common(m, d, 1, 4);
}
int op_rsqrtss(es_machine *m, const es_insn *d)
{
    return rcp_common(m, d, 1, 1);
}

