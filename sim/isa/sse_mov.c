/* sse_mov.c - SSE data movement: MOVD/MOVQ, the full-register moves, the
 * scalar and half-register moves, duplicates, mask extraction,
 * non-temporal stores, MASKMOVDQU and LDMXCSR/STMXCSR. */
#include "sse.h"

/* MOVAPS/MOVAPD/MOVDQA/MOVNT*: 16 bytes, memory must be aligned.
 * MOVUPS/MOVUPD/MOVDQU/LDDQU: no alignment requirement. */
static inline int move128(es_machine *m, const es_insn *d, int align)
{
    const es_operand *o0 = &d->o[0];
    if (o0->kind == ES_OPK_XMM) {
        es_xmm tmp;
        const es_xmm *s = sse_src(m, d, 1, &tmp, align);
        if (!s)
            return ES_FAULT;
        m->vr[o0->reg] = *s;
        return ES_OK;
    }
    if (o0->kind != ES_OPK_MEM || d->o[1].kind != ES_OPK_XMM)
        return es_unimplemented(m, d); /* MMX forms (MOVNTQ has its own mnemonic) */
    TRY(sse_write_mem(m, d, o0, &m->vr[d->o[1].reg], 16, align));
    return ES_OK;
}

int op_movaligned(es_machine *m, const es_insn *d)
{
    return move128(m, d, 1);
}

int op_movunaligned(es_machine *m, const es_insn *d)
{
    return move128(m, d, 0);
}

/* MOVD/MOVQ, every SSE form (66 0F 6E/7E, REX.W variants, F3 0F 7E,
 * 66 0F D6): loads into an XMM register zero its upper bits. */
int op_movd_movq(es_machine *m, const es_insn *d)
{
    const es_operand *o0 = &d->o[0], *o1 = &d->o[1];
    if (o0->kind == ES_OPK_XMM) {
        uint64_t v;
        if (o1->kind == ES_OPK_XMM)
            v = m->vr[o1->reg].q[0]; /* movq xmm, xmm */
        else if (o1->kind == ES_OPK_GPR || o1->kind == ES_OPK_MEM)
            TRY(es_rd(m, d, 1, &v));
        else
            return es_unimplemented(m, d);
        es_xmm *x = &m->vr[o0->reg];
        x->q[0] = v;
        x->q[1] = 0;
        return ES_OK;
    }
    if ((o0->kind != ES_OPK_GPR && o0->kind != ES_OPK_MEM) || o1->kind != ES_OPK_XMM)
        return es_unimplemented(m, d);
    TRY(es_wr(m, d, 0, m->vr[o1->reg].q[0] & es_mask(o0->size)));
    return ES_OK;
}

/* MOVSS / MOVSD: register to register merges the low element; a load zeroes
 * the rest; a store writes the low element. */
static inline int move_scalar(es_machine *m, const es_insn *d, unsigned n)
{
    const es_operand *o0 = &d->o[0], *o1 = &d->o[1];
    if (o0->kind == ES_OPK_XMM) {
        es_xmm *x = &m->vr[o0->reg];
        if (o1->kind == ES_OPK_XMM) {
            memcpy(x, &m->vr[o1->reg], n);
            return ES_OK;
        }
        es_xmm t = {{0}};
        TRY(sse_read_mem(m, d, o1, &t, n, 0));
        *x = t;
        return ES_OK;
    }
    TRY(sse_write_mem(m, d, o0, &m->vr[o1->reg], n, 0));
    return ES_OK;
}

int op_movss(es_machine *m, const es_insn *d)
{
    return move_scalar(m, d, 4);
}

/* MOVSD is also the string instruction (A5 with a 32-bit operand size):
 * that form has no visible operands. */
int op_movsd(es_machine *m, const es_insn *d)
{
    if (d->nops == 0 || (d->o[0].kind != ES_OPK_XMM && d->o[1].kind != ES_OPK_XMM))
        return es_string_movsd(m, d);
    return move_scalar(m, d, 8);
}

/* MOVLPS/MOVLPD (0F 12 / 66 0F 12 with memory, 0F 13 store): the low
 * quadword; MOVHPS/MOVHPD (0F 16 / 0F 17): the high one. */
static inline int move_half(es_machine *m, const es_insn *d, int hi)
{
    const es_operand *o0 = &d->o[0], *o1 = &d->o[1];
    if (o0->kind == ES_OPK_XMM && o1->kind == ES_OPK_MEM) {
        uint64_t v;
        TRY(sse_read_mem(m, d, o1, &v, 8, 0));
        m->vr[o0->reg].q[hi] = v;
        return ES_OK;
    }
    if (o0->kind == ES_OPK_MEM && o1->kind == ES_OPK_XMM) {
        TRY(sse_write_mem(m, d, o0, &m->vr[o1->reg].q[hi], 8, 0));
        return ES_OK;
    }
    return es_unimplemented(m, d);
}

int op_movlp(es_machine *m, const es_insn *d)
{
    return move_half(m, d, 0);
}

int op_movhp(es_machine *m, const es_insn *d)
{
    return move_half(m, d, 1);
}

/* MOVHLPS xmm1, xmm2: low(xmm1) = high(xmm2). */
int op_movhlps(es_machine *m, const es_insn *d)
{
    m->vr[d->o[0].reg].q[0] = m->vr[d->o[1].reg].q[1];
    return ES_OK;
}

/* MOVLHPS xmm1, xmm2: high(xmm1) = low(xmm2). */
int op_movlhps(es_machine *m, const es_insn *d)
{
    m->vr[d->o[0].reg].q[1] = m->vr[d->o[1].reg].q[0];
    return ES_OK;
}

int op_movmskps(es_machine *m, const es_insn *d)
{
    const es_xmm *s = &m->vr[d->o[1].reg];
    uint64_t r = (s->d[0] >> 31) | (s->d[1] >> 31 << 1) | (s->d[2] >> 31 << 2) |
                 (s->d[3] >> 31 << 3);
    es_gpr_set(m, d->o[0].reg, d->o[0].size, r);
    return ES_OK;
}

int op_movmskpd(es_machine *m, const es_insn *d)
{
    const es_xmm *s = &m->vr[d->o[1].reg];
    es_gpr_set(m, d->o[0].reg, d->o[0].size, (s->q[0] >> 63) | (s->q[1] >> 63 << 1));
    return ES_OK;
}

int op_pmovmskb(es_machine *m, const es_insn *d)
{
    if (d->o[1].kind != ES_OPK_XMM)
        return es_unimplemented(m, d);
    const es_xmm *s = &m->vr[d->o[1].reg];
    /* gather the top bit of each byte: multiply-free bit tricks per half */
    uint32_t r = 0;
    for (int h = 0; h < 2; h++) {
        uint64_t v = (s->q[h] >> 7) & 0x0101010101010101ull;
        r |= (uint32_t)((v * 0x0102040810204080ull) >> 56) << (8 * h);
    }
    es_gpr_set(m, d->o[0].reg, d->o[0].size, r);
    return ES_OK;
}

/* MOVNTI m32/m64, r: a plain store here (no cache model). */
int op_movnti(es_machine *m, const es_insn *d)
{
    TRY(es_wr(m, d, 0, m->gpr[d->o[1].reg]));
    return ES_OK;
}

/* MOVDDUP xmm, xmm/m64: both halves = the low quadword (no alignment). */
int op_movddup(es_machine *m, const es_insn *d)
{
    uint64_t v;
    if (d->o[1].kind == ES_OPK_XMM)
        v = m->vr[d->o[1].reg].q[0];
    else
        TRY(sse_read_mem(m, d, &d->o[1], &v, 8, 0));
    es_xmm *x = &m->vr[d->o[0].reg];
    x->q[0] = x->q[1] = v;
    return ES_OK;
}

int op_movsldup(es_machine *m, const es_insn *d)
{
    SSE_OPERANDS(x, s, t, 1);
    es_xmm r = {.d = {s->d[0], s->d[0], s->d[2], s->d[2]}};
    *x = r;
    return ES_OK;
}

int op_movshdup(es_machine *m, const es_insn *d)
{
    SSE_OPERANDS(x, s, t, 1);
    es_xmm r = {.d = {s->d[1], s->d[1], s->d[3], s->d[3]}};
    *x = r;
    return ES_OK;
}

/* MASKMOVDQU xmm1, xmm2: stores the bytes of xmm1 whose mask byte in xmm2
 * has its top bit set to DS:[rDI].  The selected bytes are merged into the
 * 16 bytes read first, so a fault leaves memory untouched. */
int op_maskmovdqu(es_machine *m, const es_insn *d)
{
    const es_xmm *v = &m->vr[d->o[0].reg], *k = &m->vr[d->o[1].reg];
    uint64_t va = es_seg_lin(m, ES_SEG_DS, m->gpr[ES_RDI] & es_mask(d->asize));
    uint8_t b[16];
    TRY(es_read(m, va, b, 16));
    for (int i = 0; i < 16; i++)
        if (k->b[i] & 0x80)
            b[i] = v->b[i];
    TRY(es_write(m, va, b, 16));
    return ES_OK;
}

/* LDMXCSR m32: #GP(0) if a reserved bit is set (SDM Vol. 2, LDMXCSR). */
int op_ldmxcsr(es_machine *m, const es_insn *d)
{
    uint64_t v;
    TRY(es_rd(m, d, 0, &v));
    if (v & ~(uint64_t)ES_MXCSR_WRITABLE)
        return es_raise(m, ES_VEC_GP, 0);
    m->mxcsr = (uint32_t)v;
    return ES_OK;
}

int op_stmxcsr(es_machine *m, const es_insn *d)
{
    TRY(es_wr(m, d, 0, m->mxcsr));
    return ES_OK;
}

