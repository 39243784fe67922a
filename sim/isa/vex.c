/* vex.c - YMM operand access and the lane runs of the VEX forms of SSE
 * instructions (see vex.h for the rules and the layouts). */
#include "vex.h"

#include "sse.h"
#include "x87.h" /* ES_CR0_TS, ES_CR4_OSXSAVE */

int es_vex_check(es_machine *m)
{
    if ((m->xcr0 & 6) != 6 || !(m->cr4 & ES_CR4_OSXSAVE))
        return es_raise(m, ES_VEC_UD, 0);
    if (m->cr0 & ES_CR0_TS)
        return es_raise(m, ES_VEC_NM, 0);
    return ES_OK;
}

/* n bytes at memory operand o, read into or written from v. */
static int vmem(es_machine *m, const es_insn *d, const es_operand *o, void *v, unsigned n,
                int write, int align)
{
    uint64_t va = es_lin(m, d, o);
    if (align && (va & (n - 1)))
        return es_raise(m, ES_VEC_GP, 0);
    uint8_t *p = es_host_ptr(m, va, n, write);
    if (__builtin_expect(p != NULL, 1)) {
        if (write)
            memcpy(p, v, n);
        else
            memcpy(v, p, n);
        return 0;
    }
    /* es_read/es_write return -1 with the fault recorded; a handler's
     * status is ES_FAULT (returned as is by the handlers that end in a
     * VEX store, so a #PF there must not look like a stopped machine) */
    return (write ? es_write(m, va, v, n) : es_read(m, va, v, n)) ? ES_FAULT : ES_OK;
}

static unsigned mem_size(const es_operand *o)
{
    return o->size && o->size <= 32 ? o->size : 32;
}

static int vread(es_machine *m, const es_insn *d, int i, es_ymm *v, int align)
{
    const es_operand *o = &d->o[i];
    switch (o->kind) {
    case ES_OPK_XMM:
        v->x[0] = m->xmm[o->reg];
        v->q[2] = v->q[3] = 0;
        return 0;
    case ES_OPK_YMM:
        v->x[0] = m->xmm[o->reg];
        v->x[1] = m->ymmh[o->reg];
        return 0;
    case ES_OPK_MEM:
        memset(v, 0, sizeof *v);
        return vmem(m, d, o, v, mem_size(o), 0, align);
    default:
        return es_unimplemented(m, d);
    }
}

int es_vread(es_machine *m, const es_insn *d, int i, es_ymm *v)
{
    return vread(m, d, i, v, 0);
}

int es_vread_aligned(es_machine *m, const es_insn *d, int i, es_ymm *v)
{
    return vread(m, d, i, v, 1);
}

int es_vwrite(es_machine *m, const es_insn *d, int i, const es_ymm *v, int align)
{
    const es_operand *o = &d->o[i];
    switch (o->kind) {
    case ES_OPK_XMM:
        m->xmm[o->reg] = v->x[0];
        memset(&m->ymmh[o->reg], 0, sizeof(es_xmm));
        return 0;
    case ES_OPK_YMM:
        m->xmm[o->reg] = v->x[0];
        m->ymmh[o->reg] = v->x[1];
        return 0;
    case ES_OPK_MEM:
        return vmem(m, d, o, (void *)v, mem_size(o), 1, align);
    default:
        return es_unimplemented(m, d);
    }
}

/* ---- the VEX forms of SSE instructions ---- */

/* A VEX.128 form without a VEX.vvvv operand has the SSE form's operands:
 * the handler runs on them as they are, and then the XMM registers it
 * wrote lose bits 255:128 (PCMPxSTRM writes XMM0 implicitly). */
static int run_direct(es_machine *m, const es_insn *d, es_handler sse)
{
    TRY(sse(m, d));
    for (int i = 0; i < d->nops; i++)
        if (d->o[i].kind == ES_OPK_XMM && d->o[i].write)
            memset(&m->ymmh[d->o[i].reg], 0, sizeof(es_xmm));
    if (d->op == ES_OP_VPCMPISTRM || d->op == ES_OP_VPCMPESTRM)
        memset(&m->ymmh[0], 0, sizeof(es_xmm));
    return ES_OK;
}

/* The SSE form a lane runs: c's vector register operands renamed to the
 * borrowed XMM1.. (XMM1 the destination), XMM0 the blendv mask, and each
 * one's value in both lanes; memory operands stay, with the offset of
 * their second half. */
typedef struct vex_plan {
    es_insn c;
    es_xmm val[4][2]; /* [slot][lane] */
    unsigned nslots;
    int8_t mem;       /* c's memory operand, -1 = none */
    uint8_t memstep;  /* lane 1's displacement added to it */
    int8_t imm;       /* c's immediate operand, -1 = none */
} vex_plan;

/* The two lanes of register operand o (see vex.h: an XMM operand of a
 * VEX.256 form is the same in both but for the widening layouts, whose
 * lane 1 takes the upper bytes of the source's used part). */
static void lanes_of(const es_machine *m, const es_operand *o, int layout, es_xmm out[2])
{
    out[0] = m->xmm[o->reg];
    if (o->kind == ES_OPK_YMM) {
        out[1] = m->ymmh[o->reg];
    } else if (layout >= ES_VEX_WIDEN2 && layout <= ES_VEX_WIDEN8) {
        unsigned sh = 8u >> (layout - ES_VEX_WIDEN2); /* 8, 4, 2 bytes */
        memset(&out[1], 0, sizeof out[1]);
        memcpy(out[1].b, out[0].b + sh, 16 - sh);
    } else {
        out[1] = out[0];
    }
}

static void plan(const es_machine *m, const es_insn *d, int layout, bool nds, vex_plan *p)
{
    p->c = *d;
    es_insn *c = &p->c;
    /* a vvvv operand (VEX.NDS's first source, VEX.NDD's destination)
     * makes `op dst, src1, src2...` into the SSE `op dst(=src1), src2...` */
    lanes_of(m, &d->o[nds ? 1 : 0], layout, p->val[1]);
    if (nds) {
        /* constant sizes: no rep-string copy in this hot path */
        memcpy(&c->o[1], &d->o[2], 2 * sizeof c->o[0]);
        memset(&c->o[3], 0, sizeof c->o[3]);
        c->nops--;
    }
    if (layout == ES_VEX_BLENDV) {
        /* VBLENDVPS dst, src1, src2, mask: the SSE form's mask is XMM0 */
        lanes_of(m, &c->o[c->nops - 1], layout, p->val[0]);
        memset(&c->o[--c->nops], 0, sizeof c->o[0]);
    }
    c->o[0].kind = ES_OPK_XMM, c->o[0].reg = 1, c->o[0].size = 16;
    p->nslots = 2, p->mem = -1, p->imm = -1, p->memstep = 0;
    for (int i = 1; i < c->nops; i++) {
        es_operand *o = &c->o[i];
        if (o->kind == ES_OPK_XMM || o->kind == ES_OPK_YMM) {
            lanes_of(m, o, layout, p->val[p->nslots]);
            o->kind = ES_OPK_XMM, o->reg = (uint8_t)p->nslots++, o->size = 16;
        } else if (o->kind == ES_OPK_MEM) {
            p->mem = (int8_t)i;
            if (layout >= ES_VEX_WIDEN2 && layout <= ES_VEX_WIDEN8) {
                o->size /= 2;
                p->memstep = o->size;
            } else if (o->size == 32) {
                o->size = 16;
                p->memstep = 16;
            }
        } else if (o->kind == ES_OPK_IMM) {
            p->imm = (int8_t)i;
        }
    }
}

/* Runs lane `lane` of the plan: the result (XMM1) in *r.  Lane 1 moves
 * the plan's memory operand and immediate on in place (lane 0 ran). */
static int run_lane(es_machine *m, vex_plan *p, es_handler sse, int layout, int lane, es_xmm *r)
{
    es_insn *c = &p->c;
    if (lane) {
        if (p->mem >= 0)
            c->o[p->mem].disp += p->memstep;
        if (p->imm >= 0 && layout >= ES_VEX_IMM2 && layout <= ES_VEX_IMM4)
            c->o[p->imm].imm = (int64_t)((uint64_t)c->o[p->imm].imm >> (2 + layout - ES_VEX_IMM2));
    }
    m->xmm[0] = p->val[0][lane];
    for (unsigned s = 1; s < p->nslots; s++)
        m->xmm[s] = p->val[s][lane];
    int rc = sse(m, c);
    *r = m->xmm[1];
    return rc;
}

/* Whether d is a 256-bit form: a YMM operand or an m256.  Not VEX.L
 * alone: the scalar forms ignore it (LIG in the SDM's opcode tables), and
 * Zydis gives them XMM operands whatever L is. */
static bool wide_form(const es_insn *d)
{
    for (int i = 0; i < d->nops; i++)
        if (d->o[i].kind == ES_OPK_YMM || (d->o[i].kind == ES_OPK_MEM && d->o[i].size == 32))
            return true;
    return false;
}

/* ---- the in-place run: the common case, without copies ----
 * When nothing can fault once the handler runs -- every SIMD exception
 * masked (Linux's default MXCSR), any memory operand reachable through the
 * TLB's host pointer -- the lanes run on the registers themselves: lane 1
 * names the upper halves by their vr[] numbers (ES_VR_HIGH + r), the
 * destination gets the first source before the handler computes into it
 * (a source that is also the destination is first copied to a scratch
 * slot), and nothing needs putting back.  Narrowing and widening forms,
 * blendv and anything else take the copying path below. */

/* The vr[] index of lane `lane` of register operand o. */
static unsigned lane_reg(const es_operand *o, int lane)
{
    return (lane && o->kind == ES_OPK_YMM) ? ES_VR_HIGH + o->reg : o->reg;
}

/* Whether d can run in place; *mem_step: lane 1's displacement. */
static bool inplace_ok(es_machine *m, const es_insn *d, int layout, bool wide, unsigned *mem_step)
{
    if (layout > ES_VEX_IMM4 || (m->mxcsr & ES_MXCSR_MASKS) != ES_MXCSR_MASKS)
        return false;
    if (d->o[0].kind != (wide ? ES_OPK_YMM : ES_OPK_XMM))
        return false;
    *mem_step = 0;
    for (int i = 1; i < d->nops; i++) {
        const es_operand *o = &d->o[i];
        if (o->kind != ES_OPK_MEM)
            continue;
        unsigned n = o->size ? o->size : 16;
        if (n > 32 || !es_host_ptr(m, es_lin(m, d, o), n, 0))
            return false; /* a fault, a page crossing or observers: the careful path */
        *mem_step = n == 32 ? 16 : 0;
    }
    return true;
}

static int run_inplace(es_machine *m, const es_insn *d, es_handler sse, int layout, bool wide,
                       bool nds, unsigned mem_step)
{
    es_insn c = *d;
    if (nds) {
        memcpy(&c.o[1], &d->o[2], 2 * sizeof c.o[0]);
        memset(&c.o[3], 0, sizeof c.o[3]);
        c.nops--;
    }
    /* an XMM operand of a VEX.256 form (a shift count) serves both lanes:
     * if it is the destination's register, lane 0 would overwrite it */
    bool held[4] = {false, false, false, false};
    for (int i = 1; wide && i < c.nops; i++) {
        const es_operand *src = &d->o[i + (nds ? 1 : 0)];
        if (src->kind == ES_OPK_XMM && src->reg == d->o[0].reg) {
            m->vr[ES_VR_TMP + i] = m->vr[src->reg];
            held[i] = true;
        }
    }
    for (int lane = 0; lane <= (int)wide; lane++) {
        unsigned dst = lane_reg(&d->o[0], lane);
        for (int i = 1; i < c.nops; i++) {
            es_operand *o = &c.o[i];
            const es_operand *src = &d->o[i + (nds ? 1 : 0)];
            if (src->kind == ES_OPK_XMM || src->kind == ES_OPK_YMM) {
                unsigned r = held[i] ? ES_VR_TMP + (unsigned)i : lane_reg(src, lane);
                if (nds && r == dst && lane_reg(&d->o[1], lane) != dst) {
                    m->vr[ES_VR_TMP + i] = m->vr[r]; /* read before dst is overwritten */
                    r = ES_VR_TMP + (unsigned)i;
                }
                o->kind = ES_OPK_XMM, o->reg = (uint8_t)r, o->size = 16;
            } else if (o->kind == ES_OPK_MEM && lane) {
                o->disp += mem_step;
            } else if (o->kind == ES_OPK_MEM && o->size == 32) {
                o->size = 16;
            } else if (o->kind == ES_OPK_IMM && lane && layout >= ES_VEX_IMM2) {
                o->imm = (int64_t)((uint64_t)o->imm >> (2 + layout - ES_VEX_IMM2));
            }
        }
        if (nds)
            m->vr[dst] = m->vr[lane_reg(&d->o[1], lane)];
        c.o[0].kind = ES_OPK_XMM, c.o[0].reg = (uint8_t)dst, c.o[0].size = 16;
        TRY(sse(m, &c)); /* cannot fault (inplace_ok); were it to, it says so */
    }
    if (!wide)
        memset(&m->ymmh[d->o[0].reg], 0, sizeof(es_xmm));
    return ES_OK;
}

int es_vex_run(es_machine *m, const es_insn *d, es_handler sse, int layout)
{
    TRY(es_vex_check(m));
    bool wide = (d->pfx & ES_PFX_VEXL) && wide_form(d);
    bool nds = d->nops > 1 && (d->o[0].vvvv || d->o[1].vvvv);
    if (!wide && !nds && layout != ES_VEX_BLENDV)
        return run_direct(m, d, sse);
    if (d->o[0].kind != ES_OPK_XMM && d->o[0].kind != ES_OPK_YMM)
        return es_unimplemented(m, d);
    unsigned mem_step;
    if (inplace_ok(m, d, layout, wide, &mem_step))
        return run_inplace(m, d, sse, layout, wide, nds, mem_step);
    vex_plan p;
    p.val[0][0] = p.val[0][1] = m->xmm[0]; /* XMM0 as it is, but for blendv's mask */
    plan(m, d, layout, nds, &p);
    /* XMM0..3 are borrowed: the operands were read into the plan, and the
     * destination is written after they are put back */
    es_xmm save[4];
    memcpy(save, m->xmm, sizeof save);
    m->fp_defer = true;
    m->fp_acc = 0;
    es_xmm r[2] = {{{0}}, {{0}}};
    int rc = run_lane(m, &p, sse, layout, 0, &r[0]);
    if (rc == ES_OK && wide)
        rc = run_lane(m, &p, sse, layout, 1, &r[1]);
    memcpy(m->xmm, save, sizeof save);
    m->fp_defer = false;
    if (rc != ES_OK)
        return rc;
    TRY(m->fp_acc && sse_fp_commit(m, m->fp_acc));
    unsigned dst = d->o[0].reg;
    if (d->o[0].kind == ES_OPK_XMM && wide) {
        /* VCVTPD2PS xmm, ymm and the like: a half-width result per lane */
        r[0].q[1] = r[1].q[0];
        memset(&r[1], 0, sizeof r[1]);
    }
    m->xmm[dst] = r[0];
    m->ymmh[dst] = r[1];
    return ES_OK;
}
