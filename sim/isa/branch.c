/* branch.c - JMP, Jcc, CALL, RET (near and far), LOOP/LOOPE/LOOPNE and
 * JCXZ/JECXZ/JRCXZ.
 *
 * Relative targets arrive resolved (ES_OPK_REL, already truncated to the
 * operand size in 32-bit mode).  Far transfers go through seg.c; a far
 * JMP/CALL/RET to Linux's USER32_CS (0x23) or USER_CS (0x33) is how a
 * process moves between compatibility and 64-bit mode.
 */
#include "ops.h"
#include "seg.h"

static inline int canonical(uint64_t a)
{
    return (uint64_t)((int64_t)(a << 16) >> 16) == a;
}

/* Checks and adjusts a near-branch target: in 64-bit mode a non-canonical
 * target raises #GP(0) at the branch (SDM JMP/CALL/RET, 64-bit mode
 * exceptions); in 32-bit mode it is cut to the operand size. */
static inline int near_target(es_machine *m, const es_insn *d, uint64_t *t)
{
    if (d->mode == ES_MODE_64) {
        if (__builtin_expect(!canonical(*t), 0))
            return es_raise(m, ES_VEC_GP, 0);
    } else {
        *t &= es_mask(d->osize);
    }
    return 0;
}

/* Same for the offset of a far transfer into a segment of `mode`: 64-bit
 * code needs a canonical offset, 32-bit code one within its 4 GiB limit. */
static int far_target(es_machine *m, int mode, uint64_t off)
{
    if (mode == ES_MODE_64 ? !canonical(off) : off > 0xffffffffull)
        return es_raise(m, ES_VEC_GP, 0);
    return 0;
}

static inline int is_far(const es_insn *d)
{
    if (d->o[0].kind == ES_OPK_PTR)
        return 1;
    unsigned reg = (d->modrm >> 3) & 7;
    return d->opcode == 0xff && d->o[0].kind == ES_OPK_MEM && (reg == 3 || reg == 5);
}

/* Reads the far pointer operand: ptr16:32 (32-bit mode only) or
 * m16:16 / m16:32 / m16:64 (offset first, selector after it). */
static int far_pointer(es_machine *m, const es_insn *d, uint64_t *off, uint16_t *sel)
{
    const es_operand *o = &d->o[0];
    if (o->kind == ES_OPK_PTR) {
        *off = (uint64_t)o->imm & es_mask(d->osize);
        *sel = o->ptr_sel;
        return 0;
    }
    uint64_t a = es_lin(m, d, o), s;
    TRY(es_load(m, a, d->osize, off));
    uint64_t sa = a + d->osize;
    if (d->mode != ES_MODE_64)
        sa = (uint32_t)sa;
    TRY(es_load(m, sa, 2, &s));
    *sel = (uint16_t)s;
    return 0;
}

int op_jmp(es_machine *m, const es_insn *d)
{
    uint64_t t;
    if (__builtin_expect(is_far(d), 0)) {
        uint16_t sel;
        int mode;
        TRY(far_pointer(m, d, &t, &sel));
        TRY(es_check_far_cs(m, sel, &mode));
        TRY(far_target(m, mode, t));
        es_commit_cs(m, sel, mode);
        m->nrip = t;
        return ES_OK;
    }
    TRY(es_rd(m, d, 0, &t));
    TRY(near_target(m, d, &t));
    m->nrip = t;
    return ES_OK;
}

int op_jcc(es_machine *m, const es_insn *d)
{
    if (es_cond(m, d->opcode & 0xf)) {
        uint64_t t = (uint64_t)d->o[0].imm;
        TRY(near_target(m, d, &t));
        m->nrip = t;
    }
    return ES_OK;
}

/* Far CALL: push CS (zero-extended into an operand-size slot) and the
 * return offset, then load CS.  Same-privilege only (no call gates). */
static int far_call(es_machine *m, const es_insn *d)
{
    uint64_t t;
    uint16_t sel;
    int mode;
    TRY(far_pointer(m, d, &t, &sel));
    TRY(es_check_far_cs(m, sel, &mode));
    TRY(far_target(m, mode, t));
    unsigned size = d->osize, ss = es_stack_size(m);
    uint64_t smask = es_mask(ss);
    uint64_t sp1 = (m->gpr[ES_RSP] - size) & smask, sp2 = (sp1 - size) & smask;
    TRY(es_store(m, es_seg_lin(m, ES_SEG_SS, sp1), size, m->seg[ES_SEG_CS].sel));
    TRY(es_store(m, es_seg_lin(m, ES_SEG_SS, sp2), size, m->nrip));
    es_gpr_set(m, ES_RSP, ss, sp2);
    es_commit_cs(m, sel, mode);
    m->nrip = t;
    return ES_OK;
}

int op_call(es_machine *m, const es_insn *d)
{
    if (__builtin_expect(is_far(d), 0))
        return far_call(m, d);
    uint64_t t;
    TRY(es_rd(m, d, 0, &t));
    TRY(near_target(m, d, &t));
    TRY(es_push(m, d->osize, m->nrip));
    m->nrip = t;
    return ES_OK;
}

/* Far RET (CB / CA iw; REX.W pops 8-byte slots): same privilege only; a
 * return to an outer ring (RPL > CPL) would need the SS:RSP pop of an
 * inter-privilege return, which user code never reaches. */
static int far_ret(es_machine *m, const es_insn *d)
{
    unsigned size = d->osize, ss = es_stack_size(m);
    uint64_t smask = es_mask(ss), sp = m->gpr[ES_RSP] & smask, t, s;
    TRY(es_load(m, es_seg_lin(m, ES_SEG_SS, sp), size, &t));
    TRY(es_load(m, es_seg_lin(m, ES_SEG_SS, (sp + size) & smask), 2, &s));
    uint16_t sel = (uint16_t)s;
    int mode;
    if ((sel & ~3u) != 0 && (sel & 3) != m->cpl)
        return es_raise(m, ES_VEC_GP, sel & 0xfffc);
    TRY(es_check_far_cs(m, sel, &mode));
    TRY(far_target(m, mode, t));
    uint64_t imm = d->nops ? ((uint64_t)d->o[0].imm & 0xffff) : 0;
    es_gpr_set(m, ES_RSP, ss, sp + 2 * size + imm);
    es_commit_cs(m, sel, mode);
    m->nrip = t;
    return ES_OK;
}

int op_ret(es_machine *m, const es_insn *d)
{
    if (__builtin_expect(d->opcode == 0xcb || d->opcode == 0xca, 0))
        return far_ret(m, d);
    unsigned size = d->osize, ss = es_stack_size(m);
    uint64_t sp = m->gpr[ES_RSP] & es_mask(ss), t;
    TRY(es_load(m, es_seg_lin(m, ES_SEG_SS, sp), size, &t));
    TRY(near_target(m, d, &t));
    uint64_t imm = d->nops ? ((uint64_t)d->o[0].imm & 0xffff) : 0;
    es_gpr_set(m, ES_RSP, ss, sp + size + imm);
    m->nrip = t;
    return ES_OK;
}

/* IRET/IRETD/IRETQ in IA-32e mode (SDM IRET, "IA-32e-MODE" and
 * "RETURN-TO-OUTER-PRIVILEGE-LEVEL"): pops RIP, CS, RFLAGS, and RSP, SS
 * too when leaving 64-bit mode's frame (always in 64-bit mode) or
 * returning to an outer ring.  Task returns (NT = 1) #GP(0); returns to an
 * inner ring are impossible (RPL < CPL: #GP).  All loads and checks come
 * before any state changes. */
int op_iret(es_machine *m, const es_insn *d)
{
    if (m->rflags & ES_NT)
        return es_raise(m, ES_VEC_GP, 0);
    unsigned size = d->osize, ss = es_stack_size(m);
    uint64_t smask = es_mask(ss), sp = m->gpr[ES_RSP] & smask;
    uint64_t v[5];
    for (int i = 0; i < 3; i++)
        TRY(es_load(m, es_seg_lin(m, ES_SEG_SS, (sp + i * size) & smask), size, &v[i]));
    uint16_t cs = (uint16_t)v[1];
    unsigned rpl = cs & 3;
    if ((cs & ~3u) && rpl < m->cpl)
        return es_raise(m, ES_VEC_GP, cs & 0xfffc);
    int mode;
    TRY(es_check_ret_cs(m, cs, (int)rpl, &mode));
    TRY(far_target(m, mode, v[0] & es_mask(size)));
    int pop_ss = m->mode == ES_MODE_64 || rpl > m->cpl;
    es_segreg nss = m->seg[ES_SEG_SS];
    if (pop_ss) {
        for (int i = 3; i < 5; i++)
            TRY(es_load(m, es_seg_lin(m, ES_SEG_SS, (sp + i * size) & smask), size, &v[i]));
        /* a null SS is allowed when returning to 64-bit code below ring 3 */
        if (!((v[4] & 0xfffc) == 0 && mode == ES_MODE_64 && rpl != 3 && (v[4] & 3) == rpl))
            TRY(es_check_data_seg(m, ES_SEG_SS, (uint16_t)v[4], (int)rpl, &nss));
        else
            nss = (es_segreg){.sel = (uint16_t)v[4]};
    }
    /* RFLAGS as POPF would take them at the old CPL, plus RF; VM is
     * ignored in IA-32e mode */
    uint64_t mask = ES_CF | ES_PF | ES_AF | ES_ZF | ES_SF | ES_TF | ES_DF | ES_OF | ES_NT |
                    ES_RF | ES_AC | ES_ID;
    unsigned iopl = (unsigned)(m->rflags & ES_IOPL) >> 12;
    if (m->cpl <= iopl)
        mask |= ES_IF;
    if (m->cpl == 0)
        mask |= ES_IOPL | 0x180000; /* VIF, VIP */
    if (size == 2)
        mask &= 0xffff;
    unsigned oldcpl = m->cpl;
    m->rflags = (m->rflags & ~mask) | (v[2] & mask) | 2;
    es_commit_cs_cpl(m, cs, (int)rpl, mode);
    es_update_ac(m);
    if (pop_ss) {
        if (m->mode == ES_MODE_64)
            nss.base = 0;
        m->seg[ES_SEG_SS] = nss;
        m->gpr[ES_RSP] = v[3] & es_mask(size);
    } else {
        es_gpr_set(m, ES_RSP, ss, sp + 3 * size);
    }
    if (rpl > oldcpl) {
        /* data segments the outer ring may not use become null */
        static const int segs[] = {ES_SEG_ES, ES_SEG_DS, ES_SEG_FS, ES_SEG_GS};
        for (int i = 0; i < 4; i++) {
            es_segreg *r = &m->seg[segs[i]];
            unsigned dpl = (r->attr >> 5) & 3;
            int conforming = (r->attr & 0x0c) == 0x0c;
            if ((r->sel & ~3u) && !conforming && dpl < rpl) {
                r->sel = 0;
                r->attr = 0;
            }
        }
    }
    m->nrip = v[0] & es_mask(size);
    return ES_OK;
}

/* LOOP/LOOPE/LOOPNE: the counter (CX, ECX or RCX by address size) is
 * decremented without touching the flags. */
int op_loop(es_machine *m, const es_insn *d)
{
    unsigned as = d->asize;
    uint64_t c = (m->gpr[ES_RCX] - 1) & es_mask(as);
    int take = c != 0;
    if (d->op == ES_OP_LOOPE)
        take = take && (m->rflags & ES_ZF);
    else if (d->op == ES_OP_LOOPNE)
        take = take && !(m->rflags & ES_ZF);
    if (take) {
        uint64_t t = (uint64_t)d->o[0].imm;
        TRY(near_target(m, d, &t));
        m->nrip = t;
    }
    es_gpr_set(m, ES_RCX, as, c);
    return ES_OK;
}

int op_jrcxz(es_machine *m, const es_insn *d)
{
    if ((m->gpr[ES_RCX] & es_mask(d->asize)) == 0) {
        uint64_t t = (uint64_t)d->o[0].imm;
        TRY(near_target(m, d, &t));
        m->nrip = t;
    }
    return ES_OK;
}

