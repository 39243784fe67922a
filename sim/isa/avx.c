/* avx.c - the AVX instructions that are not VEX forms of SSE ones: the
 * 256-bit moves (with the aligned forms' own rule), VZEROUPPER/VZEROALL,
 * the mask extractions and tests over all 256 bits, broadcasts, the
 * 128-bit-lane inserts, extracts and permutes, VPERMILPS/PD and the masked
 * moves VMASKMOVPS/PD, with their AVX2 integer twins (VBROADCASTI128,
 * VINSERTI128, VEXTRACTI128, VPERM2I128, VPMASKMOVD/Q).  Semantics: SDM
 * Vol. 2, each instruction's page. */
#include "vex.h"

#include "sse.h"

/* ---- moves ---- */

/* VMOVAPS/APD/DQA and the non-temporal VMOVNT*: #GP(0) unless a memory
 * operand is aligned to its size, 16 or 32 bytes (exception class 1). */
int op_vmovaligned(es_machine *m, const es_insn *d)
{
    TRY(es_vex_check(m));
    es_ymm v;
    TRY(es_vread_aligned(m, d, 1, &v));
    return es_vwrite(m, d, 0, &v, 1);
}

/* VMOVUPS/UPD/DQU, VLDDQU: no alignment rule. */
int op_vmovunaligned(es_machine *m, const es_insn *d)
{
    TRY(es_vex_check(m));
    es_ymm v;
    TRY(es_vread(m, d, 1, &v));
    return es_vwrite(m, d, 0, &v, 0);
}

/* VZEROUPPER zeroes bits 255:128 of every YMM register, VZEROALL all of
 * them; outside 64-bit mode only YMM0-7 exist to be changed. */
int op_vzeroupper(es_machine *m, const es_insn *d)
{
    TRY(es_vex_check(m));
    unsigned n = d->mode == ES_MODE_64 ? 16 : 8;
    memset(m->ymmh, 0, n * sizeof m->ymmh[0]);
    if (d->op == ES_OP_VZEROALL)
        memset(m->xmm, 0, n * sizeof m->xmm[0]);
    return ES_OK;
}

/* ---- masks and tests over the whole vector ---- */

/* VMOVMSKPS/PD, VPMOVMSKB: the sign bit of each element (4, 8 or 1 byte)
 * into the low bits of a GPR, the rest zero. */
int op_vmovmsk(es_machine *m, const es_insn *d)
{
    TRY(es_vex_check(m));
    es_ymm v;
    TRY(es_vread(m, d, 1, &v));
    unsigned es = d->op == ES_OP_VMOVMSKPS ? 4 : d->op == ES_OP_VMOVMSKPD ? 8 : 1;
    uint64_t r = 0;
    for (unsigned i = 0; i < es_vlen(d) / es; i++)
        r |= (uint64_t)(v.b[i * es + es - 1] >> 7) << i;
    m->gpr[d->o[0].reg] = r; /* a 32- or 64-bit destination: zero-extended */
    return ES_OK;
}

/* VPTEST: ZF = (a AND b) is zero, CF = (NOT a AND b) is zero; VTESTPS/PD
 * look at the elements' sign bits only.  AF, OF, PF, SF are cleared. */
int op_vtest(es_machine *m, const es_insn *d)
{
    TRY(es_vex_check(m));
    es_ymm a, b;
    TRY(es_vread(m, d, 0, &a));
    TRY(es_vread(m, d, 1, &b));
    uint64_t sign = d->op == ES_OP_VTESTPS   ? 0x8000000080000000ull
                    : d->op == ES_OP_VTESTPD ? 0x8000000000000000ull
                                             : ~0ull;
    uint64_t z = 0, c = 0;
    for (int i = 0; i < 4; i++) {
        z |= a.q[i] & b.q[i] & sign;
        c |= ~a.q[i] & b.q[i] & sign;
    }
    m->rflags &= ~(uint64_t)ES_ARITH_FLAGS;
    m->rflags |= (z ? 0 : ES_ZF) | (c ? 0 : ES_CF);
    return ES_OK;
}

/* ---- broadcasts, lane inserts, extracts and permutes ---- */

/* VBROADCASTSS/SD/F128 (and the AVX2 register-source forms of SS/SD):
 * the low element of the source (its size: the memory operand's, or 4/8
 * for a register) in every element of the destination. */
int op_vbroadcast(es_machine *m, const es_insn *d)
{
    TRY(es_vex_check(m));
    es_ymm s, r;
    TRY(es_vread(m, d, 1, &s));
    unsigned es = d->op == ES_OP_VBROADCASTSS ? 4 : d->op == ES_OP_VBROADCASTSD ? 8 : 16;
    for (unsigned i = 0; i < 32; i += es)
        memcpy(r.b + i, s.b, es);
    return es_vwrite(m, d, 0, &r, 0);
}

/* VINSERTF128 ymm1, ymm2, xmm3/m128, imm8: ymm2 with lane imm8[0]
 * replaced. */
int op_vinsert128(es_machine *m, const es_insn *d)
{
    TRY(es_vex_check(m));
    es_ymm r, s;
    TRY(es_vread(m, d, 1, &r));
    TRY(es_vread(m, d, 2, &s));
    r.x[d->o[3].imm & 1] = s.x[0];
    return es_vwrite(m, d, 0, &r, 0);
}

/* VEXTRACTF128 xmm1/m128, ymm2, imm8: lane imm8[0] of ymm2. */
int op_vextract128(es_machine *m, const es_insn *d)
{
    TRY(es_vex_check(m));
    es_ymm s, r = {{{{0}}}};
    TRY(es_vread(m, d, 1, &s));
    r.x[0] = s.x[d->o[2].imm & 1];
    return es_vwrite(m, d, 0, &r, 0);
}

/* VPERM2F128 ymm1, ymm2, ymm3/m256, imm8: each destination lane picks
 * one of the four source lanes (imm8[1:0], imm8[5:4]), or zero
 * (imm8[3], imm8[7]). */
int op_vperm2x128(es_machine *m, const es_insn *d)
{
    TRY(es_vex_check(m));
    es_ymm a, b, r;
    TRY(es_vread(m, d, 1, &a));
    TRY(es_vread(m, d, 2, &b));
    unsigned imm = (unsigned)d->o[3].imm;
    for (int i = 0; i < 2; i++) {
        unsigned sel = (imm >> (4 * i)) & 0xf;
        const es_ymm *src = (sel & 2) ? &b : &a;
        r.x[i] = src->x[sel & 1];
        if (sel & 8)
            memset(&r.x[i], 0, sizeof r.x[i]);
    }
    return es_vwrite(m, d, 0, &r, 0);
}

/* VPERMILPS/PD: within each 128-bit lane, element i takes the lane's
 * element chosen by a control: imm8 (2 bits per dword, the same for both
 * lanes; 1 bit per qword, lane 1 using imm8[3:2]) or a vector (bits 1:0
 * of each dword; bit 1 of each qword). */
int op_vpermil(es_machine *m, const es_insn *d)
{
    TRY(es_vex_check(m));
    bool pd = d->op == ES_OP_VPERMILPD;
    bool by_imm = d->o[d->nops - 1].kind == ES_OPK_IMM;
    es_ymm s, c = {{{{0}}}}, r;
    TRY(es_vread(m, d, 1, &s));
    if (!by_imm)
        TRY(es_vread(m, d, 2, &c));
    unsigned imm = by_imm ? (unsigned)d->o[d->nops - 1].imm : 0;
    for (unsigned i = 0; i < (pd ? 4u : 8u); i++) {
        unsigned base = pd ? i & ~1u : i & ~3u;
        if (pd) {
            unsigned sel = by_imm ? (imm >> i) & 1 : (unsigned)(c.q[i] >> 1) & 1;
            r.q[i] = s.q[base + sel];
        } else {
            unsigned sel = by_imm ? (imm >> (2 * (i & 3))) & 3 : c.d[i] & 3;
            r.d[i] = s.d[base + sel];
        }
    }
    return es_vwrite(m, d, 0, &r, 0);
}

/* ---- masked moves ---- */

/* VMASKMOVPS/PD (and AVX2's VPMASKMOVD/Q through the same rules):
 * elements whose mask element has its sign bit set are loaded (the others
 * are zero) or stored (the others are left alone), and only those can
 * fault (SDM Vol. 2, VMASKMOV: "Faults occur only due to mask-bit
 * required memory accesses").  A store checks every element it writes
 * before writing any, so a fault leaves memory unchanged. */
static int maskmov(es_machine *m, const es_insn *d, unsigned es)
{
    TRY(es_vex_check(m));
    bool store = d->o[0].kind == ES_OPK_MEM;
    const es_operand *mo = &d->o[store ? 0 : 2];
    es_ymm mask, v, r = {{{{0}}}};
    TRY(es_vread(m, d, 1, &mask));
    if (store)
        TRY(es_vread(m, d, 2, &v));
    uint64_t va = es_lin(m, d, mo);
    unsigned n = es_vlen(d) / es;
    for (unsigned i = 0; i < n; i++) {
        if (!(mask.b[i * es + es - 1] & 0x80))
            continue;
        uint64_t ea = va + (uint64_t)i * es, pa;
        if (d->mode != ES_MODE_64)
            ea = (uint32_t)ea;
        if (!store)
            TRY(es_read(m, ea, r.b + i * es, es));
        else if (es_translate(m, ea, ES_ACC_W, m->cpl == 3, &pa) ||
                 es_translate(m, ea + es - 1, ES_ACC_W, m->cpl == 3, &pa))
            TRY(es_write(m, ea, v.b + i * es, es)); /* raises the fault, or pages in */
    }
    if (!store)
        return es_vwrite(m, d, 0, &r, 0);
    for (unsigned i = 0; i < n; i++)
        if (mask.b[i * es + es - 1] & 0x80) {
            uint64_t ea = va + (uint64_t)i * es;
            TRY(es_write(m, d->mode != ES_MODE_64 ? (uint32_t)ea : ea, v.b + i * es, es));
        }
    return ES_OK;
}

int op_vmaskmov(es_machine *m, const es_insn *d)
{
    bool dword = d->op == ES_OP_VMASKMOVPS || d->op == ES_OP_VPMASKMOVD;
    return maskmov(m, d, dword ? 4 : 8);
}
