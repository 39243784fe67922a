/* mov.c - data movement: MOV (GPR, memory, immediate, moffs, segment,
 * control and debug registers), MOVZX/MOVSX/MOVSXD, XCHG, CMOVcc, SETcc,
 * LEA, CBW..CQO, LAHF/SAHF, the flag instructions, CLI/STI and XLAT.
 */
#include "guest_cpuid.h"
#include "ops.h"
#include "seg.h"

/* IOPL-sensitive instructions (CLI, STI) need CPL <= IOPL. */
static int iopl_ok(const es_machine *m)
{
    return m->cpl <= ((m->rflags & ES_IOPL) >> 12);
}

/* MOV from a segment register (8C /r): a 16-bit store to memory, and a
 * zero-extended selector in a 32/64-bit register (SDM MOV, "the upper bits
 * of the destination are cleared" on processors since the Pentium Pro;
 * measured on Zen 4). */
static int mov_from_seg(es_machine *m, const es_insn *d)
{
    uint64_t v = m->seg[d->o[1].reg].sel;
    TRY(es_wr(m, d, 0, v));
    return ES_OK;
}

/* MOV to/from CRn or DRn: privileged (SDM MOV CR: #GP(0) if CPL != 0). */
#define CR0_PE 0x1ull
#define CR0_NW (1ull << 29)
#define CR0_CD (1ull << 30)
#define CR0_PG (1ull << 31)
#define CR0_AM (1ull << 18)
#define CR4_PAE (1ull << 5)
#define EFER_LME (1ull << 8)
#define EFER_LMA (1ull << 10)
/* CR4 bits this CPU has: VME..OSXMMEXCPT (0-10), UMIP (11, modelled for
 * SGDT/SIDT/SLDT/SMSW/STR), PCIDE (17, when CPUID.1:ECX.PCID[17] says so)
 * and OSXSAVE (18).  The rest are reserved here: bit 15 and 25+ always, and
 * the features CPUID does not report (LA57, VMXE, SMXE, FSGSBASE, KL, SMEP,
 * SMAP, PKE, CET, PKS). */
#define CR4_VALID (0xfffull | (1ull << 18))
#define CR4_PCIDE (1ull << 17)
/* CPUID 0x80000008 reports MAXPHYADDR 48: CR3 bits 63:48 are reserved;
 * with CR4.PCIDE bit 63 of the source is the no-flush hint instead (SDM
 * Vol. 3A 4.10.4.1; MOV to CR3: "bit 63 of the source operand is not
 * written to CR3"), and bits 11:0 are the PCID. */
#define CR3_RESERVED (~0ull << 48)
#define CR3_NOFLUSH (1ull << 63)
#define CR3_PCID 0xfffull

static bool cpu_has_pcid(const es_machine *m)
{
    uint32_t r[4];
    es_cpuid(m, 1, 0, r);
    return (r[2] >> 17) & 1;
}

/* The #GP(0) conditions of MOV to CR0/CR3/CR4/CR8 (SDM Vol. 2B, MOV-Move
 * to/from Control Registers, Protected Mode and 64-Bit Mode Exceptions;
 * Vol. 3A 2.5 Control Registers): a 1 in a reserved bit, CR0.PG without
 * PE, CR0.NW without CD, clearing CR0.PG or CR4.PAE while IA-32e mode is
 * active, setting CR0.PG with EFER.LME and no CR4.PAE. */
static bool cr_write_bad(const es_machine *m, int cr, uint64_t v)
{
    bool lma = (m->efer & EFER_LMA) != 0;
    switch (cr) {
    case 0:
        if (v >> 32)
            return true;
        if ((v & CR0_PG) && !(v & CR0_PE))
            return true;
        if ((v & CR0_NW) && !(v & CR0_CD))
            return true;
        if (lma && !(v & CR0_PG))
            return true;
        if ((v & CR0_PG) && !(m->cr0 & CR0_PG) && (m->efer & EFER_LME) && !(m->cr4 & CR4_PAE))
            return true;
        return false;
    case 3:
        if (m->cr4 & CR4_PCIDE)
            return lma && (v & CR3_RESERVED & ~CR3_NOFLUSH);
        return lma && (v & CR3_RESERVED);
    case 4:
        if (v & ~(CR4_VALID | (cpu_has_pcid(m) ? CR4_PCIDE : 0)))
            return true;
        /* setting PCIDE: only in IA-32e mode and with PCID 000H current
         * (SDM Vol. 3A 4.10.1; MOV CR #GP(0) list) */
        if ((v & CR4_PCIDE) && !(m->cr4 & CR4_PCIDE) && (!lma || (m->cr3 & CR3_PCID)))
            return true;
        return lma && !(v & CR4_PAE);
    case 8:
        return (v >> 4) != 0; /* TPR: bits 3:0 only */
    default:
        return false;
    }
}

static int mov_cr_dr(es_machine *m, const es_insn *d)
{
    if (m->cpl != 0)
        return es_raise(m, ES_VEC_GP, 0);
    const es_operand *c = d->o[0].kind == ES_OPK_GPR ? &d->o[1] : &d->o[0];
    uint64_t *r = NULL;
    if (c->kind == ES_OPK_DR) {
        if (c->reg > 7)
            return es_raise(m, ES_VEC_UD, 0);
        r = &m->dr[c->reg];
    } else {
        switch (c->reg) {
        case 0: r = &m->cr0; break;
        case 2: r = &m->cr2; break;
        case 3: r = &m->cr3; break;
        case 4: r = &m->cr4; break;
        case 8: r = &m->cr8; break;
        default: return es_raise(m, ES_VEC_UD, 0);
        }
    }
    if (d->o[0].kind == ES_OPK_GPR) {
        es_gpr_set(m, d->o[0].reg, 8, *r & es_mask(d->o[0].size));
        return ES_OK;
    }
    uint64_t v = m->gpr[d->o[1].reg] & es_mask(d->o[1].size);
    if (c->kind == ES_OPK_CR && cr_write_bad(m, c->reg, v))
        return es_raise(m, ES_VEC_GP, 0);
    uint64_t old = *r;
    if (c->kind == ES_OPK_CR && c->reg == 3 && (m->cr4 & CR4_PCIDE))
        v &= ~CR3_NOFLUSH; /* the hint, never stored */
    *r = v;
    if (c->kind == ES_OPK_CR && (c->reg == 0 || c->reg == 3 || c->reg == 4))
        /* paging-structure changes: drop all translations.  The software
         * TLB is not tagged with PCIDs, so a CR3 load with the no-flush
         * hint flushes it too: keeping translations is only permitted,
         * never required (SDM Vol. 3A 4.10.4.1), and a kept entry of the
         * other PCID would be wrong here.  What a no-flush load costs is
         * the cycle model's business (it sees bit 63 in the source). */
        es_tlb_flush(m);
    if (c->kind == ES_OPK_CR && c->reg == 0 && ((old ^ v) & CR0_AM))
        es_update_ac(m); /* alignment checking follows CR0.AM */
    return ES_OK;
}

/* MOV: one of the hottest handlers, so operands are dispatched directly
 * (the register write and the store truncate to the operand size). */
int op_mov(es_machine *m, const es_insn *d)
{
    const es_operand *dst = &d->o[0], *src = &d->o[1];
    uint64_t v;
    switch (src->kind) {
    case ES_OPK_GPR: v = m->gpr[src->reg]; break;
    case ES_OPK_IMM: v = (uint64_t)src->imm; break;
    case ES_OPK_MEM: TRY(es_load(m, es_lin(m, d, src), src->size, &v)); break;
    case ES_OPK_HI8: v = m->gpr[src->reg] >> 8; break;
    case ES_OPK_SEG: return mov_from_seg(m, d);
    default: return mov_cr_dr(m, d);
    }
    switch (dst->kind) {
    case ES_OPK_GPR: es_gpr_set(m, dst->reg, dst->size, v); return ES_OK;
    case ES_OPK_MEM: TRY(es_store(m, es_lin(m, d, dst), dst->size, v)); return ES_OK;
    case ES_OPK_HI8:
        m->gpr[dst->reg] = (m->gpr[dst->reg] & ~0xff00ull) | ((v & 0xff) << 8);
        return ES_OK;
    /* MOV Sreg (8E /r); CS is not a valid destination (the decoder rejects
     * it).  A load of SS also inhibits interrupts for one instruction;
     * with no interrupt model that has no visible effect. */
    case ES_OPK_SEG: TRY(es_load_data_seg(m, dst->reg, (uint16_t)v)); return ES_OK;
    default: return mov_cr_dr(m, d);
    }
}

int op_movzx(es_machine *m, const es_insn *d)
{
    uint64_t v;
    TRY(es_rd(m, d, 1, &v));
    es_gpr_set(m, d->o[0].reg, d->o[0].size, v);
    return ES_OK;
}

/* MOVSX and MOVSXD (with a 32- or 16-bit destination MOVSXD is a plain
 * move of that many bits). */
int op_movsx(es_machine *m, const es_insn *d)
{
    uint64_t v;
    TRY(es_rd(m, d, 1, &v));
    es_gpr_set(m, d->o[0].reg, d->o[0].size, (uint64_t)es_sext(v, d->o[1].size));
    return ES_OK;
}

/* XCHG: with a memory operand the exchange is locked whether or not LOCK
 * is given (SDM XCHG); a single interpreter thread makes that automatic.
 * 90 in 64-bit mode decodes as NOP, so "xchg eax, eax" here is 87 C0, which
 * does zero-extend RAX. */
int op_xchg(es_machine *m, const es_insn *d)
{
    uint64_t a, b;
    TRY(es_rd(m, d, 0, &a));
    TRY(es_rd(m, d, 1, &b));
    /* the memory side first, so a fault leaves the register alone */
    if (d->o[1].kind == ES_OPK_MEM) {
        TRY(es_wr(m, d, 1, a));
        es_wr(m, d, 0, b);
    } else {
        TRY(es_wr(m, d, 0, b));
        es_wr(m, d, 1, a);
    }
    return ES_OK;
}

/* CMOVcc: the source is read (and may fault) whatever the condition, and
 * the 32-bit form writes (zero-extends) the destination even when the
 * condition is false (SDM CMOVcc, 64-bit mode note). */
int op_cmovcc(es_machine *m, const es_insn *d)
{
    uint64_t v;
    TRY(es_rd(m, d, 1, &v));
    unsigned r = d->o[0].reg, size = d->o[0].size;
    if (es_cond(m, d->opcode & 0xf))
        es_gpr_set(m, r, size, v);
    else if (size == 4)
        m->gpr[r] = (uint32_t)m->gpr[r];
    return ES_OK;
}

int op_setcc(es_machine *m, const es_insn *d)
{
    TRY(es_wr(m, d, 0, (uint64_t)es_cond(m, d->opcode & 0xf)));
    return ES_OK;
}

/* LEA: the address computed at the address size, then truncated or
 * zero-extended to the operand size (SDM LEA, table 3-54). */
int op_lea(es_machine *m, const es_insn *d)
{
    es_gpr_set(m, d->o[0].reg, d->o[0].size, es_ea(m, d, &d->o[1]));
    return ES_OK;
}

int op_cbw(es_machine *m, const es_insn *d)
{
    es_gpr_set(m, ES_RAX, 2, (uint64_t)(int64_t)(int8_t)m->gpr[ES_RAX]);
    return ES_OK;
}

int op_cwde(es_machine *m, const es_insn *d)
{
    es_gpr_set(m, ES_RAX, 4, (uint64_t)(int64_t)(int16_t)m->gpr[ES_RAX]);
    return ES_OK;
}

int op_cdqe(es_machine *m, const es_insn *d)
{
    m->gpr[ES_RAX] = (uint64_t)(int64_t)(int32_t)m->gpr[ES_RAX];
    return ES_OK;
}

/* CWD/CDQ/CQO: rDX = the sign of rAX, replicated. */
int op_cwd(es_machine *m, const es_insn *d)
{
    unsigned size = d->op == ES_OP_CWD ? 2 : d->op == ES_OP_CDQ ? 4 : 8;
    uint64_t s = (m->gpr[ES_RAX] & es_sign_bit(size)) ? ~0ull : 0;
    es_gpr_set(m, ES_RDX, size, s);
    return ES_OK;
}

/* LAHF/SAHF: valid in 64-bit mode because CPUID 8000_0001h ECX[0] is
 * reported.  AH = SF:ZF:0:AF:0:PF:1:CF. */
int op_lahf(es_machine *m, const es_insn *d)
{
    uint64_t f = (m->rflags & (ES_SF | ES_ZF | ES_AF | ES_PF | ES_CF)) | 2;
    m->gpr[ES_RAX] = (m->gpr[ES_RAX] & ~0xff00ull) | (f << 8);
    return ES_OK;
}

int op_sahf(es_machine *m, const es_insn *d)
{
    es_set_flags(m, (m->gpr[ES_RAX] >> 8) & 0xff, ES_SF | ES_ZF | ES_AF | ES_PF | ES_CF);
    return ES_OK;
}

int op_clc(es_machine *m, const es_insn *d) { m->rflags &= ~(uint64_t)ES_CF; return ES_OK; }
int op_stc(es_machine *m, const es_insn *d) { m->rflags |= ES_CF; return ES_OK; }
int op_cmc(es_machine *m, const es_insn *d) { m->rflags ^= ES_CF; return ES_OK; }
int op_cld(es_machine *m, const es_insn *d) { m->rflags &= ~(uint64_t)ES_DF; return ES_OK; }
int op_std(es_machine *m, const es_insn *d) { m->rflags |= ES_DF; return ES_OK; }

/* CLI/STI: #GP(0) when CPL > IOPL (protected mode without CR4.PVI, which
 * Linux leaves clear). */
int op_cli(es_machine *m, const es_insn *d)
{
    if (!iopl_ok(m))
        return es_raise(m, ES_VEC_GP, 0);
    m->rflags &= ~(uint64_t)ES_IF;
    return ES_OK;
}

int op_sti(es_machine *m, const es_insn *d)
{
    if (!iopl_ok(m))
        return es_raise(m, ES_VEC_GP, 0);
    m->rflags |= ES_IF;
    return ES_OK;
}

/* XLAT: AL = [seg:rBX + zero-extended AL] at the address size. */
int op_xlat(es_machine *m, const es_insn *d)
{
    uint64_t off = (m->gpr[ES_RBX] + (m->gpr[ES_RAX] & 0xff)) & es_mask(d->asize);
    uint64_t v;
    TRY(es_load(m, es_seg_lin(m, d->sseg, off), 1, &v));
    es_gpr_set(m, ES_RAX, 1, v);
    return ES_OK;
}

/* LDS/LES/LFS/LGS/LSS r, m16:16/32/64: offset first, then the selector;
 * the segment load (with all its checks) happens before the register is
 * written, so a faulting selector leaves both unchanged. */
int op_lseg(es_machine *m, const es_insn *d)
{
    unsigned size = d->o[0].size;
    uint64_t a = es_lin(m, d, &d->o[1]), off, sel;
    TRY(es_load(m, a, size, &off));
    uint64_t sa = a + size;
    TRY(es_load(m, d->mode == ES_MODE_64 ? sa : (uint32_t)sa, 2, &sel));
    int seg;
    switch (d->op) {
    case ES_OP_LDS: seg = ES_SEG_DS; break;
    case ES_OP_LES: seg = ES_SEG_ES; break;
    case ES_OP_LFS: seg = ES_SEG_FS; break;
    case ES_OP_LGS: seg = ES_SEG_GS; break;
    default: seg = ES_SEG_SS; break;
    }
    TRY(es_load_data_seg(m, seg, (uint16_t)sel));
    es_gpr_set(m, d->o[0].reg, size, off);
    return ES_OK;
}

