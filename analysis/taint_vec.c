/* taint_vec.c - XMM/YMM labels for the fallback rule (see taint_vec.h).
 *
 * es_insn says which operands are written but not which are read, and
 * es_decode_access reports GPRs only, so whether a written vector
 * destination is also a source is decided here by op.  Where in doubt it
 * is a source: that can only add labels, never lose one.
 */
#include "taint_vec.h"

#include <string.h>

#define ALL_LANES ((uint8_t)((1u << ES_TAINT_NLANE) - 1))

void es_tvec_clear(es_tvec *v)
{
    memset(v->lab, 0, sizeof v->lab);
}

void es_tvec_begin(es_tvec *v)
{
    v->nw = 0;
    v->bulk = TV_BULK_NONE;
    v->partial = false;
}

/* Lanes an operand of this kind spans (a ZMM kind would give 4). */
static unsigned op_lanes(const es_operand *o)
{
    switch (o->kind) {
    case ES_OPK_XMM: return 1;
    case ES_OPK_YMM: return 2;
    case ES_OPK_VSIB: return o->vsib / 16; /* the index register */
    default: return 0;
    }
}

static es_label reg_lanes(const es_tvec *v, unsigned reg, unsigned n)
{
    es_label l = 0;
    for (unsigned i = 0; i < n && i < ES_TAINT_NLANE; i++)
        l |= v->lab[reg % ES_TAINT_NVREG][i];
    return l;
}

/* Registers the state-management instructions cover: only XMM0-7 (YMM0-7)
 * exist outside 64-bit mode. */
static unsigned file_regs(const es_insn *d)
{
    return d->mode == ES_MODE_64 ? 16 : 8;
}

/* FXSAVE/FXRSTOR carry the XMM half (lane 0), XSAVE/XRSTOR the AVX state
 * too; 0 for any other op. */
static uint8_t state_lanes(unsigned op, bool *save)
{
    switch (op) {
    case ES_OP_FXSAVE: case ES_OP_FXSAVE64:
        *save = true;
        return 1;
    case ES_OP_FXRSTOR: case ES_OP_FXRSTOR64:
        *save = false;
        return 1;
    case ES_OP_XSAVE: case ES_OP_XSAVE64: case ES_OP_XSAVEOPT: case ES_OP_XSAVEOPT64:
    case ES_OP_XSAVEC: case ES_OP_XSAVEC64: case ES_OP_XSAVES: case ES_OP_XSAVES64:
        *save = true;
        return ALL_LANES;
    case ES_OP_XRSTOR: case ES_OP_XRSTOR64: case ES_OP_XRSTORS: case ES_OP_XRSTORS64:
        *save = false;
        return ALL_LANES;
    default:
        return 0;
    }
}

/* A VEX destination is never a source (the old value comes, if at all,
 * from VEX.vvvv), except where the instruction accumulates into it: FMA3
 * (the FMA4 forms in the same range are #UD here), VNNI, IFMA, and the
 * gathers, whose masked-off elements keep the old value. */
static bool vex_dst_read(const es_insn *d)
{
    if (d->op >= ES_OP_VFMADD132PD && d->op <= ES_OP_VFNMSUBSS)
        return true;
    switch (d->op) {
    case ES_OP_VPDPBUSD: case ES_OP_VPDPBUSDS: case ES_OP_VPDPWSSD: case ES_OP_VPDPWSSDS:
    case ES_OP_VPMADD52HUQ: case ES_OP_VPMADD52LUQ:
        return true;
    default:
        for (int i = 0; i < d->nops; i++)
            if (d->o[i].kind == ES_OPK_VSIB)
                return true;
        return false;
    }
}

/* Legacy SSE ops that replace all of bits 127:0 from their sources alone
 * (moves, shuffles and conversions of whole registers); every other
 * two-operand SSE op reads its destination or keeps part of it. */
static bool sse_dst_replaced(const es_insn *d)
{
    switch (d->op) {
    case ES_OP_MOVSS: case ES_OP_MOVSD: /* from memory they zero the rest */
        return d->nops == 2 && d->o[1].kind == ES_OPK_MEM;
    case ES_OP_MOVAPS: case ES_OP_MOVAPD: case ES_OP_MOVUPS: case ES_OP_MOVUPD:
    case ES_OP_MOVDQA: case ES_OP_MOVDQU: case ES_OP_LDDQU: case ES_OP_MOVNTDQA:
    case ES_OP_MOVD: case ES_OP_MOVQ: case ES_OP_MOVQ2DQ:
    case ES_OP_MOVDDUP: case ES_OP_MOVSLDUP: case ES_OP_MOVSHDUP:
    case ES_OP_PSHUFD: case ES_OP_PSHUFHW: case ES_OP_PSHUFLW:
    case ES_OP_PMOVSXBW: case ES_OP_PMOVSXBD: case ES_OP_PMOVSXBQ: case ES_OP_PMOVSXWD:
    case ES_OP_PMOVSXWQ: case ES_OP_PMOVSXDQ: case ES_OP_PMOVZXBW: case ES_OP_PMOVZXBD:
    case ES_OP_PMOVZXBQ: case ES_OP_PMOVZXWD: case ES_OP_PMOVZXWQ: case ES_OP_PMOVZXDQ:
    case ES_OP_CVTDQ2PS: case ES_OP_CVTPS2DQ: case ES_OP_CVTTPS2DQ: case ES_OP_CVTDQ2PD:
    case ES_OP_CVTPS2PD: case ES_OP_CVTPD2PS: case ES_OP_CVTPD2DQ: case ES_OP_CVTTPD2DQ:
    case ES_OP_CVTPI2PD: case ES_OP_SQRTPS: case ES_OP_SQRTPD: case ES_OP_RCPPS:
    case ES_OP_RSQRTPS: case ES_OP_ROUNDPS: case ES_OP_ROUNDPD: case ES_OP_PABSB:
    case ES_OP_PABSW: case ES_OP_PABSD: case ES_OP_PHMINPOSUW: case ES_OP_AESIMC:
    case ES_OP_AESKEYGENASSIST:
        return true;
    default:
        return false;
    }
}

/* Whether written operand i is also a source.  Past operand 0 only a
 * gather's mask is written, and it is cleared element by element. */
static bool dst_read(const es_insn *d, int i)
{
    if (i > 0)
        return true;
    if (d->pfx & ES_PFX_VEX)
        return vex_dst_read(d);
    return !sse_dst_replaced(d);
}

/* `op x, x` whose result is a constant whatever x holds (0, or all ones
 * for the compares for equality): the value carries no label. */
static bool zero_idiom(const es_insn *d)
{
    switch (d->op) {
    case ES_OP_PXOR: case ES_OP_XORPS: case ES_OP_XORPD: case ES_OP_PANDN: case ES_OP_ANDNPS:
    case ES_OP_ANDNPD: case ES_OP_PSUBB: case ES_OP_PSUBW: case ES_OP_PSUBD: case ES_OP_PSUBQ:
    case ES_OP_PSUBSB: case ES_OP_PSUBSW: case ES_OP_PSUBUSB: case ES_OP_PSUBUSW:
    case ES_OP_PCMPGTB: case ES_OP_PCMPGTW: case ES_OP_PCMPGTD: case ES_OP_PCMPGTQ:
    case ES_OP_PCMPEQB: case ES_OP_PCMPEQW: case ES_OP_PCMPEQD: case ES_OP_PCMPEQQ:
        return d->nops == 2 && !(d->pfx & ES_PFX_VEX) && d->o[0].kind == ES_OPK_XMM &&
               d->o[1].kind == ES_OPK_XMM && d->o[0].reg == d->o[1].reg;
    case ES_OP_VPXOR: case ES_OP_VXORPS: case ES_OP_VXORPD: case ES_OP_VPANDN:
    case ES_OP_VANDNPS: case ES_OP_VANDNPD: case ES_OP_VPSUBB: case ES_OP_VPSUBW:
    case ES_OP_VPSUBD: case ES_OP_VPSUBQ: case ES_OP_VPSUBSB: case ES_OP_VPSUBSW:
    case ES_OP_VPSUBUSB: case ES_OP_VPSUBUSW: case ES_OP_VPCMPGTB: case ES_OP_VPCMPGTW:
    case ES_OP_VPCMPGTD: case ES_OP_VPCMPGTQ: case ES_OP_VPCMPEQB: case ES_OP_VPCMPEQW:
    case ES_OP_VPCMPEQD: case ES_OP_VPCMPEQQ:
        return d->nops == 3 && op_lanes(&d->o[1]) && d->o[1].kind == d->o[2].kind &&
               d->o[1].reg == d->o[2].reg;
    default:
        return false;
    }
}

/* The legacy variable blends and SHA256RNDS2 read XMM0 without naming it
 * (their VEX forms name the mask register). */
static bool reads_xmm0(const es_insn *d)
{
    if (d->pfx & ES_PFX_VEX)
        return false;
    return d->op == ES_OP_BLENDVPS || d->op == ES_OP_BLENDVPD || d->op == ES_OP_PBLENDVB ||
           d->op == ES_OP_SHA256RNDS2;
}

static bool writes_xmm0(const es_insn *d)
{
    return d->op == ES_OP_PCMPESTRM || d->op == ES_OP_PCMPISTRM || d->op == ES_OP_VPCMPESTRM ||
           d->op == ES_OP_VPCMPISTRM;
}

es_label es_tvec_reads(const es_tvec *v, const es_insn *d)
{
    if (zero_idiom(d))
        return 0;
    es_label l = 0;
    for (int i = 0; i < d->nops; i++) {
        const es_operand *o = &d->o[i];
        unsigned n = op_lanes(o);
        if (n && (o->kind == ES_OPK_VSIB || !o->write || dst_read(d, i)))
            l |= reg_lanes(v, o->kind == ES_OPK_VSIB ? o->index : o->reg, n);
    }
    if (reads_xmm0(d))
        l |= v->lab[0][0];
    bool save = false;
    uint8_t lanes = state_lanes(d->op, &save);
    if (lanes && save)
        for (unsigned r = 0; r < file_regs(d); r++)
            l |= reg_lanes(v, r, lanes == ALL_LANES ? ES_TAINT_NLANE : 1);
    return l;
}

static void queue(es_tvec *v, unsigned reg, uint8_t set, uint8_t zero, es_label l)
{
    if (v->nw < TV_NPEND)
        v->w[v->nw++] = (tv_pend){(uint8_t)(reg % ES_TAINT_NVREG), set, zero, l};
}

/* A write of the first n lanes of reg: a VEX-encoded instruction zeroes
 * the lanes above its operand (SDM Vol. 1, 14.1.3), a legacy SSE one
 * leaves them as they are. */
static void queue_lanes(es_tvec *v, const es_insn *d, unsigned reg, unsigned n, es_label l)
{
    uint8_t set = (uint8_t)((1u << n) - 1) & ALL_LANES;
    queue(v, reg, set, (d->pfx & ES_PFX_VEX) ? (uint8_t)(ALL_LANES & ~set) : 0, l);
}

void es_tvec_writes(es_tvec *v, const es_insn *d, es_label l)
{
    for (int i = 0; i < d->nops; i++)
        v->partial |= d->o[i].kind == ES_OPK_VSIB;
    for (int i = 0; i < d->nops; i++) {
        const es_operand *o = &d->o[i];
        if (!o->write || (o->kind != ES_OPK_XMM && o->kind != ES_OPK_YMM))
            continue;
        if (v->partial && i > 0)
            queue(v, o->reg, 0, ALL_LANES, 0); /* a completed gather zeroes its mask */
        else
            queue_lanes(v, d, o->reg, op_lanes(o), l);
    }
    if (writes_xmm0(d))
        queue_lanes(v, d, 0, 1, l);
    bool save = false;
    uint8_t lanes = state_lanes(d->op, &save);
    if (lanes && !save) {
        /* which components XRSTOR restores (and which it initialises)
         * depends on the header and RFBM: every register may get the
         * image's labels, none is sure to lose its own */
        v->bulk = TV_BULK_RESTORE;
        v->bulk_n = (uint8_t)file_regs(d);
        v->bulk_lanes = lanes;
    }
}

void es_tvec_vzero(es_tvec *v, const es_insn *d)
{
    v->bulk = d->op == ES_OP_VZEROALL ? TV_BULK_ZEROALL : TV_BULK_ZEROUPPER;
    v->bulk_n = (uint8_t)file_regs(d);
}

static void apply_bulk(es_tvec *v, es_label rd)
{
    for (unsigned r = 0; r < v->bulk_n && r < ES_TAINT_NVREG; r++)
        for (unsigned i = 0; i < ES_TAINT_NLANE; i++) {
            if (v->bulk == TV_BULK_ZEROALL || (v->bulk == TV_BULK_ZEROUPPER && i > 0))
                v->lab[r][i] = 0;
            else if (v->bulk == TV_BULK_RESTORE && (v->bulk_lanes & (1u << i)))
                v->lab[r][i] |= rd;
        }
}

void es_tvec_retire(es_tvec *v, es_label rd)
{
    if (v->bulk != TV_BULK_NONE)
        apply_bulk(v, rd);
    for (unsigned k = 0; k < v->nw; k++) {
        const tv_pend *w = &v->w[k];
        for (unsigned i = 0; i < ES_TAINT_NLANE; i++) {
            if (w->set & (1u << i))
                v->lab[w->reg][i] = w->l | rd;
            else if (w->zero & (1u << i))
                v->lab[w->reg][i] = 0;
        }
    }
    v->nw = 0;
    v->bulk = TV_BULK_NONE;
}

void es_tvec_fault(es_tvec *v, es_label rd)
{
    if (!v->partial)
        return;
    /* the destination holds the completed elements (labels in rd so
     * far) and old ones; the mask is partly cleared: nothing is sure to
     * be gone, so merge, and zero nothing (the mask's queued zeroing and
     * VEX.128's upper lane happen only on completion) */
    for (unsigned k = 0; k < v->nw; k++) {
        const tv_pend *w = &v->w[k];
        for (unsigned i = 0; i < ES_TAINT_NLANE; i++)
            if (w->set & (1u << i))
                v->lab[w->reg][i] |= w->l | rd;
    }
    v->nw = 0;
    v->partial = false;
}
