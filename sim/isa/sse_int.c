/* sse_int.c - packed integer SSE..SSE4.1: logic, add/sub (wrapping and
 * saturating), multiplies, averages, min/max, abs/sign, compares, shifts,
 * shuffles, unpacks, packs, blends, insert/extract and sign/zero
 * extension.  Every m128 source must be 16-byte aligned (legacy SSE). */
#include "sse.h"

/* `op xmm1, xmm2/m128`: r = f(a = xmm1, s = source), then xmm1 = r. */
#define BINOP(name, body)                                                                          \
    int name(es_machine *m, const es_insn *d)                                               \
    {                                                                                              \
        SSE_OPERANDS(x, s, tmp_, 1);                                                               \
        const es_xmm *a = x;                                                                       \
        es_xmm r;                                                                                  \
        body;                                                                                      \
        (void)a;                                                                                   \
        *x = r;                                                                                    \
        return ES_OK;                                                                              \
    }

#define LANES(n, f, expr)                                                                          \
    for (int i = 0; i < (n); i++)                                                                  \
        r.f[i] = (expr)

static inline int8_t sat8s(int v)
{
    return (int8_t)(v > 127 ? 127 : v < -128 ? -128 : v);
}
static inline uint8_t sat8u(int v)
{
    return (uint8_t)(v > 255 ? 255 : v < 0 ? 0 : v);
}
static inline int16_t sat16s(int v)
{
    return (int16_t)(v > 32767 ? 32767 : v < -32768 ? -32768 : v);
}
static inline uint16_t sat16u(int v)
{
    return (uint16_t)(v > 65535 ? 65535 : v < 0 ? 0 : v);
}

/* ---- logic (PAND..PXOR and the ANDPS..XORPD aliases) ---- */
BINOP(op_pand, LANES(2, q, a->q[i] & s->q[i]))
BINOP(op_pandn, LANES(2, q, ~a->q[i] & s->q[i]))
BINOP(op_por, LANES(2, q, a->q[i] | s->q[i]))
BINOP(op_pxor, LANES(2, q, a->q[i] ^ s->q[i]))

/* ---- add / subtract ---- */
BINOP(op_paddb, LANES(16, b, (uint8_t)(a->b[i] + s->b[i])))
BINOP(op_paddw, LANES(8, w, (uint16_t)(a->w[i] + s->w[i])))
BINOP(op_paddd, LANES(4, d, a->d[i] + s->d[i]))
BINOP(op_paddq, LANES(2, q, a->q[i] + s->q[i]))
BINOP(op_psubb, LANES(16, b, (uint8_t)(a->b[i] - s->b[i])))
BINOP(op_psubw, LANES(8, w, (uint16_t)(a->w[i] - s->w[i])))
BINOP(op_psubd, LANES(4, d, a->d[i] - s->d[i]))
BINOP(op_psubq, LANES(2, q, a->q[i] - s->q[i]))
BINOP(op_paddsb, LANES(16, sb, sat8s(a->sb[i] + s->sb[i])))
BINOP(op_paddsw, LANES(8, sw, sat16s(a->sw[i] + s->sw[i])))
BINOP(op_paddusb, LANES(16, b, sat8u(a->b[i] + s->b[i])))
BINOP(op_paddusw, LANES(8, w, sat16u(a->w[i] + s->w[i])))
BINOP(op_psubsb, LANES(16, sb, sat8s(a->sb[i] - s->sb[i])))
BINOP(op_psubsw, LANES(8, sw, sat16s(a->sw[i] - s->sw[i])))
BINOP(op_psubusb, LANES(16, b, sat8u(a->b[i] - s->b[i])))
BINOP(op_psubusw, LANES(8, w, sat16u(a->w[i] - s->w[i])))

/* ---- multiply ---- */
BINOP(op_pmullw, LANES(8, w, (uint16_t)((uint32_t)a->w[i] * s->w[i])))
BINOP(op_pmulhw, LANES(8, w, (uint16_t)(((int32_t)a->sw[i] * s->sw[i]) >> 16)))
BINOP(op_pmulhuw, LANES(8, w, (uint16_t)(((uint32_t)a->w[i] * s->w[i]) >> 16)))
BINOP(op_pmuludq, LANES(2, q, (uint64_t)a->d[2 * i] * s->d[2 * i]))
BINOP(op_pmulld, LANES(4, d, a->d[i] * s->d[i]))
BINOP(op_pmuldq, LANES(2, sq, (int64_t)a->sd[2 * i] * s->sd[2 * i]))
/* the sum of two products wraps: 2 * (-32768)^2 gives 0x80000000 */
BINOP(op_pmaddwd, LANES(4, d, (uint32_t)((int64_t)a->sw[2 * i] * s->sw[2 * i] +
                                         (int64_t)a->sw[2 * i + 1] * s->sw[2 * i + 1])))
/* unsigned bytes of the destination times signed bytes of the source */
BINOP(op_pmaddubsw, LANES(8, sw, sat16s(a->b[2 * i] * s->sb[2 * i] +
                                        a->b[2 * i + 1] * s->sb[2 * i + 1])))
BINOP(op_pmulhrsw, LANES(8, w, (uint16_t)((((int32_t)a->sw[i] * s->sw[i] >> 14) + 1) >> 1)))
BINOP(op_pavgb, LANES(16, b, (uint8_t)((a->b[i] + s->b[i] + 1) >> 1)))
BINOP(op_pavgw, LANES(8, w, (uint16_t)((a->w[i] + s->w[i] + 1) >> 1)))

int op_psadbw(es_machine *m, const es_insn *d)
{
    SSE_OPERANDS(x, s, t, 1);
    es_xmm r = {{0}};
    for (int h = 0; h < 2; h++) {
        unsigned sum = 0;
        for (int i = 0; i < 8; i++) {
            int v = x->b[8 * h + i] - s->b[8 * h + i];
            sum += v < 0 ? -v : v;
        }
        r.q[h] = sum;
    }
    *x = r;
    return ES_OK;
}

/* ---- min / max ---- */
#define MIN(p, q) ((p) < (q) ? (p) : (q))
#define MAX(p, q) ((p) > (q) ? (p) : (q))
/* PMIN<sfx> and PMAX<sfx> over n lanes of field f */
#define MINMAX(sfx, n, f)                                                                          \
    BINOP(op_pmin##sfx, LANES(n, f, MIN(a->f[i], s->f[i])))                                        \
    BINOP(op_pmax##sfx, LANES(n, f, MAX(a->f[i], s->f[i])))
MINMAX(ub, 16, b)
MINMAX(sb, 16, sb)
MINMAX(uw, 8, w)
MINMAX(sw, 8, sw)
MINMAX(ud, 4, d)
MINMAX(sd, 4, sd)

/* ---- abs / sign (SSSE3); PABS of the most negative value stays it ---- */
BINOP(op_pabsb, LANES(16, b, (uint8_t)(s->sb[i] < 0 ? -s->sb[i] : s->sb[i])))
BINOP(op_pabsw, LANES(8, w, (uint16_t)(s->sw[i] < 0 ? -s->sw[i] : s->sw[i])))
BINOP(op_pabsd, LANES(4, d, s->sd[i] < 0 ? 0u - s->d[i] : s->d[i]))
BINOP(op_psignb, LANES(16, b, (uint8_t)(s->sb[i] < 0 ? -a->b[i] : s->sb[i] ? a->b[i] : 0)))
BINOP(op_psignw, LANES(8, w, (uint16_t)(s->sw[i] < 0 ? -a->w[i] : s->sw[i] ? a->w[i] : 0)))
BINOP(op_psignd, LANES(4, d, s->sd[i] < 0 ? 0u - a->d[i] : s->sd[i] ? a->d[i] : 0))

/* ---- compares ---- */
BINOP(op_pcmpeqb, LANES(16, b, a->b[i] == s->b[i] ? 0xff : 0))
BINOP(op_pcmpeqw, LANES(8, w, a->w[i] == s->w[i] ? 0xffff : 0))
BINOP(op_pcmpeqd, LANES(4, d, a->d[i] == s->d[i] ? ~0u : 0))
BINOP(op_pcmpeqq, LANES(2, q, a->q[i] == s->q[i] ? ~0ull : 0))
BINOP(op_pcmpgtb, LANES(16, b, a->sb[i] > s->sb[i] ? 0xff : 0))
BINOP(op_pcmpgtw, LANES(8, w, a->sw[i] > s->sw[i] ? 0xffff : 0))
BINOP(op_pcmpgtd, LANES(4, d, a->sd[i] > s->sd[i] ? ~0u : 0))
BINOP(op_pcmpgtq, LANES(2, q, a->sq[i] > s->sq[i] ? ~0ull : 0))

/* ---- unpack (the FP unpacks are the same data movement) ---- */
BINOP(op_punpcklbw, LANES(16, b, (i & 1) ? s->b[i / 2] : a->b[i / 2]))
BINOP(op_punpckhbw, LANES(16, b, (i & 1) ? s->b[8 + i / 2] : a->b[8 + i / 2]))
BINOP(op_punpcklwd, LANES(8, w, (i & 1) ? s->w[i / 2] : a->w[i / 2]))
BINOP(op_punpckhwd, LANES(8, w, (i & 1) ? s->w[4 + i / 2] : a->w[4 + i / 2]))
BINOP(op_punpckldq, LANES(4, d, (i & 1) ? s->d[i / 2] : a->d[i / 2]))
BINOP(op_punpckhdq, LANES(4, d, (i & 1) ? s->d[2 + i / 2] : a->d[2 + i / 2]))
BINOP(op_punpcklqdq, r.q[0] = a->q[0]; r.q[1] = s->q[0])
BINOP(op_punpckhqdq, r.q[0] = a->q[1]; r.q[1] = s->q[1])

/* ---- pack with saturation: destination elements first ---- */
BINOP(op_packsswb, LANES(16, sb, sat8s(i < 8 ? a->sw[i] : s->sw[i - 8])))
BINOP(op_packuswb, LANES(16, b, sat8u(i < 8 ? a->sw[i] : s->sw[i - 8])))
BINOP(op_packssdw, LANES(8, sw, sat16s(i < 4 ? a->sd[i] : s->sd[i - 4])))
BINOP(op_packusdw, LANES(8, w, sat16u(i < 4 ? a->sd[i] : s->sd[i - 4])))

/* ---- horizontal add / subtract (SSSE3): pairs of the destination fill
 * the low half, pairs of the source the high half ---- */
#define HPAIR(v, i, n, f) ((i) < (n) / 2 ? a->v[2 * (i) + (f)] : s->v[2 * ((i) - (n) / 2) + (f)])
BINOP(op_phaddw, LANES(8, w, (uint16_t)(HPAIR(w, i, 8, 0) + HPAIR(w, i, 8, 1))))
BINOP(op_phaddd, LANES(4, d, HPAIR(d, i, 4, 0) + HPAIR(d, i, 4, 1)))
BINOP(op_phaddsw, LANES(8, sw, sat16s(HPAIR(sw, i, 8, 0) + HPAIR(sw, i, 8, 1))))
BINOP(op_phsubw, LANES(8, w, (uint16_t)(HPAIR(w, i, 8, 0) - HPAIR(w, i, 8, 1))))
BINOP(op_phsubd, LANES(4, d, HPAIR(d, i, 4, 0) - HPAIR(d, i, 4, 1)))
BINOP(op_phsubsw, LANES(8, sw, sat16s(HPAIR(sw, i, 8, 0) - HPAIR(sw, i, 8, 1))))

/* ---- shuffles ---- */
BINOP(op_pshufb, LANES(16, b, (s->b[i] & 0x80) ? 0 : a->b[s->b[i] & 15]))

/* PSHUFD (four dwords), PSHUFLW / PSHUFHW (the four words of the low or
 * high quadword, the other one copied): lane base + i of the result is
 * lane base + imm[2i+1:2i] of the source. */
static inline __attribute__((always_inline)) int
shuffle4(es_machine *m, const es_insn *d, unsigned esize, unsigned base)
{
    SSE_OPERANDS(x, s, t, 1);
    unsigned imm = sse_imm8(d, 2);
    es_xmm r = *s;
    for (unsigned i = 0; i < 4; i++)
        memcpy(&r.b[(base + i) * esize], &s->b[(base + ((imm >> (2 * i)) & 3)) * esize], esize);
    *x = r;
    return ES_OK;
}

int op_pshufd(es_machine *m, const es_insn *d) { return shuffle4(m, d, 4, 0); }
int op_pshufhw(es_machine *m, const es_insn *d) { return shuffle4(m, d, 2, 4); }
int op_pshuflw(es_machine *m, const es_insn *d) { return shuffle4(m, d, 2, 0); }

int op_shufps(es_machine *m, const es_insn *d)
{
    SSE_OPERANDS(x, s, t, 1);
    unsigned imm = sse_imm8(d, 2);
    es_xmm r = {.d = {x->d[imm & 3], x->d[(imm >> 2) & 3], s->d[(imm >> 4) & 3],
                      s->d[(imm >> 6) & 3]}};
    *x = r;
    return ES_OK;
}

int op_shufpd(es_machine *m, const es_insn *d)
{
    SSE_OPERANDS(x, s, t, 1);
    unsigned imm = sse_imm8(d, 2);
    es_xmm r = {.q = {x->q[imm & 1], s->q[(imm >> 1) & 1]}};
    *x = r;
    return ES_OK;
}

/* PALIGNR: (dst:src) >> (imm * 8), low 16 bytes; imm >= 32 gives zero. */
int op_palignr(es_machine *m, const es_insn *d)
{
    SSE_OPERANDS(x, s, t, 1);
    unsigned imm = sse_imm8(d, 2);
    uint8_t cat[48] = {0};
    memcpy(cat, s, 16);
    memcpy(cat + 16, x, 16);
    es_xmm r;
    memcpy(&r, cat + (imm > 32 ? 32 : imm), 16);
    *x = r;
    return ES_OK;
}

/* ---- shifts ---- */

/* Count of a shift: the immediate, or the low quadword of xmm/m128. */
static inline int shift_count(es_machine *m, const es_insn *d, uint64_t *n)
{
    if (d->o[1].kind == ES_OPK_IMM) {
        *n = sse_imm8(d, 1);
        return 0;
    }
    es_xmm t;
    const es_xmm *s = sse_src(m, d, 1, &t, 1);
    if (!s)
        return -1;
    *n = s->q[0];
    return 0;
}

#define SHIFT(name, n, f, bits, expr)                                                              \
    int name(es_machine *m, const es_insn *d)                                               \
    {                                                                                              \
        es_xmm *x = sse_dst(m, d);                                                                 \
        uint64_t c;                                                                                \
        if (!x || shift_count(m, d, &c))                                                           \
            return ES_FAULT;                                                                       \
        for (int i = 0; i < (n); i++)                                                              \
            x->f[i] = (expr);                                                                      \
        return ES_OK;                                                                              \
    }
SHIFT(op_psllw, 8, w, 16, c > 15 ? 0 : (uint16_t)(x->w[i] << c))
SHIFT(op_pslld, 4, d, 32, c > 31 ? 0 : x->d[i] << c)
SHIFT(op_psllq, 2, q, 64, c > 63 ? 0 : x->q[i] << c)
SHIFT(op_psrlw, 8, w, 16, c > 15 ? 0 : x->w[i] >> c)
SHIFT(op_psrld, 4, d, 32, c > 31 ? 0 : x->d[i] >> c)
SHIFT(op_psrlq, 2, q, 64, c > 63 ? 0 : x->q[i] >> c)
SHIFT(op_psraw, 8, sw, 16, (int16_t)(x->sw[i] >> (c > 15 ? 15 : c)))
SHIFT(op_psrad, 4, sd, 32, x->sd[i] >> (c > 31 ? 31 : c))

/* PSLLDQ / PSRLDQ: the whole register shifted by imm bytes; imm > 15
 * gives zero. */
static inline __attribute__((always_inline)) int
byte_shift(es_machine *m, const es_insn *d, int left)
{
    es_xmm *x = sse_dst(m, d);
    if (!x)
        return ES_FAULT;
    unsigned n = sse_imm8(d, 1);
    if (n > 16)
        n = 16;
    uint8_t cat[32] = {0};
    memcpy(cat + (left ? 16 : 0), x, 16);
    memcpy(x, cat + (left ? 16 - n : n), 16);
    return ES_OK;
}

int op_pslldq(es_machine *m, const es_insn *d) { return byte_shift(m, d, 1); }
int op_psrldq(es_machine *m, const es_insn *d) { return byte_shift(m, d, 0); }

/* ---- blends ---- */

/* Element i of x (esize bytes each) takes s's when imm bit i is set, or
 * for the variable blends when the top bit of element i of the implicit
 * XMM0 is set (XMM0 is read before the destination is written, which
 * matters when the destination is XMM0 itself). */
static inline __attribute__((always_inline)) int
blend(es_machine *m, const es_insn *d, unsigned esize, int variable)
{
    SSE_OPERANDS(x, s, t, 1);
    unsigned imm = variable ? 0 : sse_imm8(d, 2);
    es_xmm k = m->xmm[0];
    for (unsigned i = 0; i < 16 / esize; i++) {
        int take = variable ? k.b[i * esize + esize - 1] >> 7 : (imm >> i) & 1;
        if (take)
            memcpy(&x->b[i * esize], &s->b[i * esize], esize);
    }
    return ES_OK;
}

int op_pblendw(es_machine *m, const es_insn *d) { return blend(m, d, 2, 0); }
int op_blendps(es_machine *m, const es_insn *d) { return blend(m, d, 4, 0); }
int op_blendpd(es_machine *m, const es_insn *d) { return blend(m, d, 8, 0); }
int op_pblendvb(es_machine *m, const es_insn *d) { return blend(m, d, 1, 1); }
int op_blendvps(es_machine *m, const es_insn *d) { return blend(m, d, 4, 1); }
int op_blendvpd(es_machine *m, const es_insn *d) { return blend(m, d, 8, 1); }

/* ---- insert / extract ---- */

/* PEXTRB/W/D/Q, EXTRACTPS: element imm (modulo the count) to a GPR
 * (zero-extended) or memory of the element's size.  PEXTRW's 0F C5 form
 * and the SSE4.1 66 0F 3A 15 form behave the same. */
static inline __attribute__((always_inline)) int
extract(es_machine *m, const es_insn *d, unsigned esize)
{
    if (d->o[1].kind != ES_OPK_XMM)
        return es_unimplemented(m, d);
    const es_xmm *s = &m->vr[d->o[1].reg];
    unsigned i = sse_imm8(d, 2) & (16 / esize - 1);
    uint64_t v = 0;
    memcpy(&v, &s->b[i * esize], esize); /* little-endian host */
    const es_operand *o = &d->o[0];
    if (o->kind == ES_OPK_GPR) {
        /* a 32/64-bit register destination: the value zero-extends */
        es_gpr_set(m, o->reg, o->size < 4 ? 4 : o->size, v);
        return ES_OK;
    }
    TRY(sse_write_mem(m, d, o, &v, esize, 0));
    return ES_OK;
}

int op_pextrb(es_machine *m, const es_insn *d) { return extract(m, d, 1); }
int op_pextrw(es_machine *m, const es_insn *d) { return extract(m, d, 2); }
int op_pextrd(es_machine *m, const es_insn *d) { return extract(m, d, 4); }
int op_pextrq(es_machine *m, const es_insn *d) { return extract(m, d, 8); }

static inline __attribute__((always_inline)) int
insert(es_machine *m, const es_insn *d, unsigned esize)
{
    es_xmm *x = sse_dst(m, d);
    if (!x)
        return ES_FAULT;
    uint64_t v = 0;
    if (d->o[1].kind == ES_OPK_GPR)
        v = m->gpr[d->o[1].reg];
    else if (d->o[1].kind == ES_OPK_MEM)
        TRY(sse_read_mem(m, d, &d->o[1], &v, esize, 0));
    else
        return es_unimplemented(m, d);
    unsigned i = sse_imm8(d, 2) & (16 / esize - 1);
    memcpy(&x->b[i * esize], &v, esize); /* little-endian host */
    return ES_OK;
}

int op_pinsrb(es_machine *m, const es_insn *d) { return insert(m, d, 1); }
int op_pinsrw(es_machine *m, const es_insn *d) { return insert(m, d, 2); }
int op_pinsrd(es_machine *m, const es_insn *d) { return insert(m, d, 4); }
int op_pinsrq(es_machine *m, const es_insn *d) { return insert(m, d, 8); }

int op_extractps(es_machine *m, const es_insn *d) { return extract(m, d, 4); }

/* INSERTPS xmm1, xmm2/m32, imm: element imm[7:6] of xmm2 (or the m32) into
 * element imm[5:4] of xmm1, then zero the elements selected by imm[3:0]. */
int op_insertps(es_machine *m, const es_insn *d)
{
    es_xmm *x = sse_dst(m, d);
    if (!x)
        return ES_FAULT;
    unsigned imm = sse_imm8(d, 2);
    uint32_t v = 0;
    if (d->o[1].kind == ES_OPK_XMM)
        v = m->vr[d->o[1].reg].d[imm >> 6];
    else
        TRY(sse_read_mem(m, d, &d->o[1], &v, 4, 0));
    x->d[(imm >> 4) & 3] = v;
    for (int i = 0; i < 4; i++)
        if (imm & (1u << i))
            x->d[i] = 0;
    return ES_OK;
}

/* ---- PMOVSX / PMOVZX: the source is the low 8/4/2 bytes (memory of that
 * size, never an alignment check) ---- */
/* PMOVSX<sfx> and PMOVZX<sfx>: n lanes, the signed and the unsigned view
 * of the destination and source fields */
#define PMOVX(sfx, n, sdst, ssrc, udst, usrc)                                                      \
    BINOP(op_pmovsx##sfx, LANES(n, sdst, s->ssrc[i]))                                              \
    BINOP(op_pmovzx##sfx, LANES(n, udst, s->usrc[i]))
PMOVX(bw, 8, sw, sb, w, b)
PMOVX(bd, 4, sd, sb, d, b)
PMOVX(bq, 2, sq, sb, q, b)
PMOVX(wd, 4, sd, sw, d, w)
PMOVX(wq, 2, sq, sw, q, w)
PMOVX(dq, 2, sq, sd, q, d)

