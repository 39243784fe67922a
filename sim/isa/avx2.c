/* avx2.c - the AVX2-only instructions that are not VEX forms of SSE ones:
 * integer broadcasts, the cross-lane permutes VPERMD/PS/Q/PD, VPBLENDD,
 * the per-element variable shifts and the eight gathers (SDM Vol. 2, each
 * instruction's page; Vol. 1, 14.7 and 14.8).  The integer-domain twins of
 * AVX instructions (VBROADCASTI128, VINSERTI128, VEXTRACTI128, VPERM2I128,
 * VPMASKMOVD/Q) share avx.c's handlers.
 *
 * All of them are VEX-only, so every handler starts with es_vex_check and
 * reads and writes its operands as YMM values through the vex.h accessors
 * (an XMM destination loses bits 255:128: the VEX.128 rule).  Invalid
 * VEX.L / VEX.W combinations are #UD in the decoder already. */
#include "vex.h"

/* ---- broadcasts and permutes ---- */

/* Element width of a VPBROADCAST op in bytes. */
static unsigned bcast_width(unsigned op)
{
    switch (op) {
    case ES_OP_VPBROADCASTB: return 1;
    case ES_OP_VPBROADCASTW: return 2;
    case ES_OP_VPBROADCASTD: return 4;
    default: return 8;
    }
}

/* VPBROADCASTB/W/D/Q xmm/ymm, xmm/m: the low element of the source in
 * every element of the destination. */
int op_vpbroadcast(es_machine *m, const es_insn *d)
{
    TRY(es_vex_check(m));
    es_ymm s, r;
    TRY(es_vread(m, d, 1, &s));
    unsigned w = bcast_width(d->op), n = es_vlen(d);
    memset(&r, 0, sizeof r);
    for (unsigned i = 0; i < n; i += w)
        memcpy(r.b + i, s.b, w);
    return es_vwrite(m, d, 0, &r, 0) ? ES_FAULT : ES_OK;
}

/* VPERMD/VPERMPS ymm1, ymm2, ymm3/m256: dword i of the result is the dword
 * of ymm3/m256 that ymm2's dword i selects (its bits 2:0). */
int op_vpermd(es_machine *m, const es_insn *d)
{
    TRY(es_vex_check(m));
    es_ymm idx, s, r;
    TRY(es_vread(m, d, 1, &idx));
    TRY(es_vread(m, d, 2, &s));
    for (int i = 0; i < 8; i++)
        r.d[i] = s.d[idx.d[i] & 7];
    return es_vwrite(m, d, 0, &r, 0) ? ES_FAULT : ES_OK;
}

/* VPERMQ/VPERMPD ymm1, ymm2/m256, imm8: qword i is the source qword
 * imm8[2i+1:2i] selects. */
int op_vpermq(es_machine *m, const es_insn *d)
{
    TRY(es_vex_check(m));
    es_ymm s, r;
    TRY(es_vread(m, d, 1, &s));
    unsigned imm = (unsigned)d->o[2].imm;
    for (int i = 0; i < 4; i++)
        r.q[i] = s.q[(imm >> (2 * i)) & 3];
    return es_vwrite(m, d, 0, &r, 0) ? ES_FAULT : ES_OK;
}

/* VPBLENDD x/ymm1, x/ymm2, x/ymm3/m, imm8: dword i from the third operand
 * where imm8[i] is set, else from the second. */
int op_vpblendd(es_machine *m, const es_insn *d)
{
    TRY(es_vex_check(m));
    es_ymm a, b;
    TRY(es_vread(m, d, 1, &a));
    TRY(es_vread(m, d, 2, &b));
    unsigned imm = (unsigned)d->o[3].imm, n = es_vlen(d) / 4;
    for (unsigned i = 0; i < n; i++)
        if (imm & (1u << i))
            a.d[i] = b.d[i];
    return es_vwrite(m, d, 0, &a, 0) ? ES_FAULT : ES_OK;
}

/* ---- variable shifts ---- */

/* VPSLLVD/Q, VPSRLVD/Q, VPSRAVD x/ymm1, x/ymm2, x/ymm3/m: element i of the
 * second operand shifted by the unsigned count in element i of the third.
 * A count of the element width or more gives 0 (logical) or the sign in
 * every bit (VPSRAVD), not the count modulo the width as the scalar shifts
 * have it (SDM Vol. 2, VPSRAVD: "if the count is greater than 31, each
 * destination element is filled with the sign bit"). */
int op_vpshiftv(es_machine *m, const es_insn *d)
{
    TRY(es_vex_check(m));
    es_ymm a, c;
    TRY(es_vread(m, d, 1, &a));
    TRY(es_vread(m, d, 2, &c));
    unsigned op = d->op, n = es_vlen(d);
    if (op == ES_OP_VPSLLVQ || op == ES_OP_VPSRLVQ) {
        for (unsigned i = 0; i < n / 8; i++) {
            uint64_t k = c.q[i];
            a.q[i] = k > 63 ? 0 : op == ES_OP_VPSLLVQ ? a.q[i] << k : a.q[i] >> k;
        }
    } else {
        for (unsigned i = 0; i < n / 4; i++) {
            uint32_t k = c.d[i];
            if (op == ES_OP_VPSRAVD)
                a.sd[i] = a.sd[i] >> (k > 31 ? 31 : k);
            else
                a.d[i] = k > 31 ? 0 : op == ES_OP_VPSLLVD ? a.d[i] << k : a.d[i] >> k;
        }
    }
    return es_vwrite(m, d, 0, &a, 0) ? ES_FAULT : ES_OK;
}

/* ---- gathers ---- */

/* Index and element widths of a gather op. */
static void gather_widths(unsigned op, unsigned *iw, unsigned *ew)
{
    *iw = (op == ES_OP_VPGATHERDD || op == ES_OP_VPGATHERDQ || op == ES_OP_VGATHERDPS ||
           op == ES_OP_VGATHERDPD)
              ? 4
              : 8;
    *ew = (op == ES_OP_VPGATHERDD || op == ES_OP_VPGATHERQD || op == ES_OP_VGATHERDPS ||
           op == ES_OP_VGATHERQPS)
              ? 4
              : 8;
}

/* Linear address of gather element i: base + sign-extended index element
 * * scale + disp, truncated to the address size, plus the segment base
 * (SDM Vol. 2, 2.3.12 "Vector SIB (VSIB) Memory Addressing"). */
static uint64_t vsib_addr(const es_machine *m, const es_insn *d, const es_operand *o,
                          const es_ymm *ix, unsigned iw, unsigned i)
{
    int64_t idx = iw == 4 ? (int64_t)ix->sd[i] : ix->sq[i];
    uint64_t a = (uint64_t)o->disp + (uint64_t)idx * o->scale;
    if (o->base != ES_REG_NONE)
        a += m->gpr[o->base];
    if (d->asize == 4)
        a = (uint32_t)a;
    a += m->seg[o->seg].base;
    return d->mode == ES_MODE_64 ? a : (uint32_t)a;
}

/* Intel's first step, before any element is read (SDM Vol. 2, the
 * gathers' Operation): each mask element, over the whole vector length,
 * becomes all ones or zero from its top bit; a VEX.128 form clears the
 * mask's bits 255:128.  Zen 5 leaves the mask's other bits as they were
 * (both measured by the differential test: Emerald Rapids, Zen 5). */
static void intel_gather_mask(es_ymm *k, unsigned vlen, unsigned ew)
{
    for (unsigned b = 0; b < vlen; b += ew)
        memset(k->b + b, (k->b[b + ew - 1] & 0x80) ? 0xff : 0, ew);
    memset(k->b + vlen, 0, sizeof *k - vlen);
}

/* VPGATHERDD/DQ/QD/QQ, VGATHERDPS/DPD/QPS/QPD dst, vsib, mask.
 *
 * #UD if any two of destination, index and mask are the same register, or
 * with 16-bit addressing (SDM Vol. 2, 2.5 and the gathers' exception
 * tables).  Elements are loaded in order, those whose mask element has its
 * top bit set; each completed element (loaded or not) clears its mask
 * element.  A fault leaves the elements before the faulting one completed
 * in the destination and the mask, and the rest of both (bits 255:128 of
 * the VEX.128 forms included) as they were on AMD (what Zen 5 does;
 * Intel's differ: intel_gather_prologue), and the restartable state the
 * SDM describes ("the destination and mask
 * registers are partially updated").  This is the one exception to the
 * rule that a fault leaves the registers unchanged.  At completion the
 * mask is all zero and the destination's elements past the last gathered
 * one are zero (bits 255:128 of the VEX.128 forms, bits 127:64 of
 * VPGATHERQD/VGATHERQPS xmm, [xmm]). */
int op_vgather(es_machine *m, const es_insn *d)
{
    TRY(es_vex_check(m));
    const es_operand *o = &d->o[1];
    unsigned dr = d->o[0].reg, kr = d->o[2].reg;
    if (o->kind != ES_OPK_VSIB || d->asize == 2 || dr == kr || dr == o->index || kr == o->index)
        return es_raise(m, ES_VEC_UD, 0);
    unsigned iw, ew;
    gather_widths(d->op, &iw, &ew);
    unsigned n = (es_vlen(d) / ew < o->vsib / iw) ? es_vlen(d) / ew : o->vsib / iw;
    es_ymm ix, dst, k;
    ix.x[0] = m->xmm[o->index];
    ix.x[1] = m->ymmh[o->index];
    dst.x[0] = m->xmm[dr], dst.x[1] = m->ymmh[dr];
    k.x[0] = m->xmm[kr], k.x[1] = m->ymmh[kr];
    bool intel = m->vendor == 0, loaded = false;
    if (intel)
        intel_gather_mask(&k, es_vlen(d), ew);
    for (unsigned i = 0; i < n; i++) {
        if (k.b[i * ew + ew - 1] & 0x80) {
            /* through a temporary: a page-crossing read that faults may
             * have copied its first part */
            uint64_t e;
            if (es_read(m, vsib_addr(m, d, o, &ix, iw, i), &e, ew)) {
                /* restartable: elements 0..i-1 are complete; on Intel a
                 * VEX.128 form that wrote an element wrote the register as
                 * VEX.128 does, bits 255:128 cleared (measured as above) */
                if (intel && loaded && es_vlen(d) == 16)
                    dst.x[1] = (es_xmm){0};
                m->xmm[dr] = dst.x[0], m->ymmh[dr] = dst.x[1];
                m->xmm[kr] = k.x[0], m->ymmh[kr] = k.x[1];
                return ES_FAULT;
            }
            memcpy(dst.b + i * ew, &e, ew);
            loaded = true;
        }
        memset(k.b + i * ew, 0, ew);
    }
    memset(dst.b + n * ew, 0, sizeof dst - n * ew);
    m->xmm[dr] = dst.x[0], m->ymmh[dr] = dst.x[1];
    memset(&m->xmm[kr], 0, sizeof(es_xmm));
    memset(&m->ymmh[kr], 0, sizeof(es_xmm));
    return ES_OK;
}
