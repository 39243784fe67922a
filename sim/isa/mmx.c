/* mmx.c - MMX: the forms shared with SSE run their SSE handler on a
 * layout of the operands (es_mmx_run, see mmx.h), and the MMX-only
 * instructions: EMMS, MOVD/MOVQ to and from MMX registers, MOVQ2DQ,
 * MOVDQ2Q, PSHUFW, PALIGNR, MOVNTQ, MASKMOVQ, and the conversions between
 * MMX integers and SSE floats (CVTPI2PS ... CVTTPD2PI), which run the
 * packed SSE conversion of the same values. */
#include "mmx.h"

#include "sse.h"
#include "x87.h"

/* ---- the MMX registers and the x87 state they share ---- */

static uint64_t mm_get(const es_machine *m, unsigned i)
{
    uint64_t v;
    memcpy(&v, &m->fpu.fpr[i & 7], 8);
    return v;
}

/* A write: the significand, with sign and exponent all ones. */
static void mm_set(es_machine *m, unsigned i, uint64_t v)
{
    uint8_t *p = (uint8_t *)&m->fpu.fpr[i & 7];
    memcpy(p, &v, 8);
    p[8] = p[9] = 0xff;
}

/* The checks every MMX instruction makes before anything else (SDM Vol.
 * 2, "Numeric exceptions"/"Protected Mode Exceptions" of the MMX pages):
 * CR0.EM is #UD, CR0.TS #NM, a pending unmasked x87 exception #MF. */
static int mmx_check(es_machine *m)
{
    if (m->cr0 & ES_CR0_EM)
        return es_raise(m, ES_VEC_UD, 0);
    if (m->cr0 & ES_CR0_TS)
        return es_raise(m, ES_VEC_NM, 0);
    if (m->fpu.fsw & ES_FSW_ES)
        return es_raise(m, ES_VEC_MF, 0);
    return ES_OK;
}

/* The switch to MMX operation an executed MMX instruction makes, after
 * its register write: TOP 0 and every register non-empty.  The full tag
 * word is what FSTENV/FSAVE store, and the hardware rebuilds it from the
 * contents of non-empty registers (SDM Vol. 1, 8.1.7): a register an MMX
 * write left with exponent all ones reads back "special", not "valid". */
static void mmx_enter(es_machine *m)
{
    m->fpu.top = 0;
    uint16_t w = 0;
    for (int i = 0; i < 8; i++)
        w |= (uint16_t)(es_x87_tag_of(&m->fpu.fpr[i]) << (2 * i));
    m->fpu.ftw = w;
}

/* Operand i of an MMX form as 64 bits: an MMX register, a GPR (its low
 * size bytes) or memory (size bytes; MMX forms have no alignment rule). */
static int mm_read(es_machine *m, const es_insn *d, int i, uint64_t *v)
{
    const es_operand *o = &d->o[i];
    if (o->kind == ES_OPK_MMX) {
        *v = mm_get(m, o->reg);
        return ES_OK;
    }
    if (o->kind == ES_OPK_XMM) {
        *v = m->xmm[o->reg].q[0];
        return ES_OK;
    }
    return es_rd(m, d, i, v);
}

/* ---- MMX forms of SSE mnemonics ---- */

/* The two XMM registers of the layout: x for the destination, s for the
 * source. */
static void lay_out(int layout, uint64_t a, uint64_t b, es_xmm *x, es_xmm *s)
{
    x->q[1] = s->q[1] = 0;
    switch (layout) {
    case ES_MMX_PAIR: x->q[0] = s->q[0] = a, x->q[1] = s->q[1] = b; break;
    case ES_MMX_HIGH: x->q[0] = s->q[0] = 0, x->q[1] = a >> 32, s->q[1] = b >> 32; break;
    case ES_MMX_DUP: x->q[0] = x->q[1] = a, s->q[0] = b; break;
    default: x->q[0] = a, s->q[0] = b; break;
    }
}

/* Runs sse on c with operand 0 (when x) and operand 1 (when s) turned
 * into XMM0 and XMM1 holding *x and *s; *r gets XMM0 after it.  The two
 * registers are borrowed: the instruction's own XMM operands were read
 * before and are written after, and nothing else looks in between. */
static int on_borrowed(es_machine *m, es_insn *c, es_handler sse, const es_xmm *x,
                       const es_xmm *s, es_xmm *r)
{
    es_xmm save[2] = {m->xmm[0], m->xmm[1]};
    if (x) {
        c->o[0].kind = ES_OPK_XMM, c->o[0].reg = 0, c->o[0].size = 16;
        m->xmm[0] = *x;
    }
    if (s) {
        c->o[1].kind = ES_OPK_XMM, c->o[1].reg = 1, c->o[1].size = 16;
        m->xmm[1] = *s;
    }
    int rc = sse(m, c);
    *r = m->xmm[0];
    m->xmm[0] = save[0];
    m->xmm[1] = save[1];
    return rc;
}

int es_mmx_run(es_machine *m, const es_insn *d, es_handler sse, int layout)
{
    TRY(mmx_check(m));
    const es_operand *o0 = &d->o[0], *o1 = &d->o[1];
    /* the source is a register of the layout when it is an MMX register
     * or an m64 of a `op mm, mm/m64` form (read here, so a fault comes
     * before anything changes); an m16 or a GPR stays as it is */
    bool dst = o0->kind == ES_OPK_MMX;
    bool src = o1->kind == ES_OPK_MMX || (dst && o1->kind == ES_OPK_MEM && o1->size == 8);
    uint64_t a = dst ? mm_get(m, o0->reg) : 0, b = 0;
    if (src)
        TRY(mm_read(m, d, 1, &b));
    es_xmm x, s;
    lay_out(layout, a, b, &x, &s);
    es_insn c = *d;
    for (int i = 0; layout == ES_MMX_IMM3 && i < c.nops; i++)
        if (c.o[i].kind == ES_OPK_IMM)
            c.o[i].imm &= 3;
    es_xmm r;
    TRY(on_borrowed(m, &c, sse, dst ? &x : NULL, src ? &s : NULL, &r));
    if (dst)
        mm_set(m, o0->reg, r.q[0]);
    mmx_enter(m);
    return ES_OK;
}

/* ---- MMX-only instructions ---- */

/* EMMS: every tag empty, and TOP 0 like the other MMX instructions
 * (SDM Vol. 1, Table 9-2; what Zen 4/5 do). */
int op_emms(es_machine *m, const es_insn *d)
{
    (void)d;
    TRY(mmx_check(m));
    m->fpu.top = 0;
    m->fpu.ftw = 0xffff;
    return ES_OK;
}

/* MOVD/MOVQ with an MMX operand: mm, r/m32|r/m64|mm/m64 and back.  A
 * 32-bit source is zero-extended; a 32-bit GPR destination too. */
int op_mmx_movd_movq(es_machine *m, const es_insn *d)
{
    TRY(mmx_check(m));
    uint64_t v;
    TRY(mm_read(m, d, 1, &v));
    const es_operand *o0 = &d->o[0];
    if (o0->kind == ES_OPK_MMX) {
        mm_set(m, o0->reg, v & es_mask(d->o[1].size));
        mmx_enter(m);
        return ES_OK;
    }
    TRY(es_wr(m, d, 0, v & es_mask(o0->size)));
    mmx_enter(m);
    return ES_OK;
}

/* MOVQ2DQ xmm, mm: the low quadword, the high one cleared. */
int op_movq2dq(es_machine *m, const es_insn *d)
{
    TRY(mmx_check(m));
    es_xmm *x = &m->xmm[d->o[0].reg];
    x->q[0] = mm_get(m, d->o[1].reg);
    x->q[1] = 0;
    mmx_enter(m);
    return ES_OK;
}

/* MOVDQ2Q mm, xmm: the low quadword. */
int op_movdq2q(es_machine *m, const es_insn *d)
{
    TRY(mmx_check(m));
    mm_set(m, d->o[0].reg, m->xmm[d->o[1].reg].q[0]);
    mmx_enter(m);
    return ES_OK;
}

/* PSHUFW mm, mm/m64, imm8: word i of the result is source word imm[2i+1:2i]. */
int op_pshufw(es_machine *m, const es_insn *d)
{
    TRY(mmx_check(m));
    uint64_t s, r = 0;
    TRY(mm_read(m, d, 1, &s));
    unsigned imm = (unsigned)d->o[2].imm & 0xff;
    for (int i = 0; i < 4; i++)
        r |= ((s >> (16 * ((imm >> (2 * i)) & 3))) & 0xffff) << (16 * i);
    mm_set(m, d->o[0].reg, r);
    mmx_enter(m);
    return ES_OK;
}

/* PALIGNR mm1, mm2/m64, imm8: mm1:mm2 shifted right by imm8 bytes, the low
 * 8 kept (zero from 16 on). */
int op_mmx_palignr(es_machine *m, const es_insn *d)
{
    TRY(mmx_check(m));
    uint64_t lo, hi = mm_get(m, d->o[0].reg), r;
    TRY(mm_read(m, d, 1, &lo));
    unsigned n = (unsigned)d->o[2].imm & 0xff;
    if (n >= 16)
        r = 0;
    else if (n >= 8)
        r = n == 8 ? hi : hi >> (8 * (n - 8));
    else
        r = n == 0 ? lo : (lo >> (8 * n)) | (hi << (64 - 8 * n));
    mm_set(m, d->o[0].reg, r);
    mmx_enter(m);
    return ES_OK;
}

/* MOVNTQ m64, mm: a store (the non-temporal hint has no architectural
 * effect). */
int op_movntq(es_machine *m, const es_insn *d)
{
    TRY(mmx_check(m));
    TRY(es_wr(m, d, 0, mm_get(m, d->o[1].reg)));
    mmx_enter(m);
    return ES_OK;
}

/* MASKMOVQ mm1, mm2: the bytes of mm1 whose mask byte in mm2 has its top
 * bit set, to DS:[rDI]; merged into the 8 bytes read first, as
 * MASKMOVDQU, so a fault leaves memory untouched. */
int op_maskmovq(es_machine *m, const es_insn *d)
{
    TRY(mmx_check(m));
    uint64_t v = mm_get(m, d->o[0].reg), k = mm_get(m, d->o[1].reg);
    uint64_t va = es_seg_lin(m, ES_SEG_DS, m->gpr[ES_RDI] & es_mask(d->asize));
    uint8_t b[8];
    TRY(es_read(m, va, b, 8));
    for (int i = 0; i < 8; i++)
        if ((k >> (8 * i + 7)) & 1)
            b[i] = (uint8_t)(v >> (8 * i));
    TRY(es_write(m, va, b, 8));
    mmx_enter(m);
    return ES_OK;
}

/* ---- conversions between MMX integers and SSE floats ----
 *
 * Each runs the SSE conversion of its values on XMM0 <- XMM1
 * (on_borrowed): the integer side is two dwords in the low quadword, the
 * rest zero, which converts without raising anything.  An MMX register
 * operand makes it an MMX instruction (the x87 switch, its faults). */
enum { CVT_TO_MM = 1, CVT_KEEP_HI = 2, CVT_M128 = 4 };

static int cvt(es_machine *m, const es_insn *d, es_handler sse, unsigned how)
{
    const es_operand *o0 = &d->o[0], *o1 = &d->o[1];
    bool mmx = o0->kind == ES_OPK_MMX || o1->kind == ES_OPK_MMX;
    if (mmx)
        TRY(mmx_check(m));
    es_xmm src = {{0}};
    if (o1->kind == ES_OPK_MMX)
        src.q[0] = mm_get(m, o1->reg);
    else if (o1->kind == ES_OPK_XMM)
        src = m->xmm[o1->reg];
    else
        TRY(sse_read_mem(m, d, o1, &src, how & CVT_M128 ? 16 : 8, how & CVT_M128));
    if (!(how & CVT_M128))
        src.q[1] = 0;
    /* the switch comes before the conversion: a SIMD exception (#XM)
     * leaves TOP 0 and the tags full, as the host does */
    if (mmx)
        mmx_enter(m);
    es_xmm dst = how & CVT_TO_MM ? (es_xmm){{0}} : m->xmm[o0->reg], r;
    es_insn c = *d;
    TRY(on_borrowed(m, &c, sse, &dst, &src, &r));
    if (how & CVT_TO_MM) {
        mm_set(m, o0->reg, r.q[0]);
    } else {
        if (how & CVT_KEEP_HI)
            r.q[1] = dst.q[1];
        m->xmm[o0->reg] = r;
    }
    if (mmx)
        mmx_enter(m);
    return ES_OK;
}

/* CVTPI2PS xmm, mm/m64: two floats into the low quadword, the high kept. */
int op_cvtpi2ps(es_machine *m, const es_insn *d)
{
    return cvt(m, d, op_cvtdq2ps, CVT_KEEP_HI);
}

/* CVTPI2PD xmm, mm/m64: two doubles (exact). */
int op_cvtpi2pd(es_machine *m, const es_insn *d)
{
    return cvt(m, d, op_cvtdq2pd, 0);
}

/* CVT(T)PS2PI mm, xmm/m64: two floats to dwords, MXCSR-rounded or truncated. */
int op_cvtps2pi(es_machine *m, const es_insn *d)
{
    return cvt(m, d, d->op == ES_OP_CVTTPS2PI ? op_cvttps2dq : op_cvtps2dq, CVT_TO_MM);
}

/* CVT(T)PD2PI mm, xmm/m128: two doubles to dwords (an m128 16-byte aligned). */
int op_cvtpd2pi(es_machine *m, const es_insn *d)
{
    return cvt(m, d, d->op == ES_OP_CVTTPD2PI ? op_cvttpd2dq : op_cvtpd2dq, CVT_TO_MM | CVT_M128);
}
