/* stack.c - PUSH/POP (registers, memory, immediates, segment registers),
 * PUSHF/POPF, ENTER/LEAVE, PUSHA/POPA.
 *
 * The stack-address size is 64 bits in 64-bit mode and SS.B (32 bits for
 * Linux's flat SS) otherwise; see es_stack_size.
 */
#include "ops.h"
#include "seg.h"

static uint64_t ss_lin(const es_machine *m, uint64_t sp)
{
    return es_seg_lin(m, ES_SEG_SS, sp);
}

/* PUSH Sreg with a 32/64-bit operand size: SDM PUSH says the selector is
 * either zero-extended or written with a 16-bit move; recent Intel cores
 * do the 16-bit move (the rest of the slot keeps its old bytes), AMD
 * zero-extends.  The stack pointer moves by the full operand size. */
static int push_seg(es_machine *m, const es_insn *d)
{
    unsigned size = d->osize, ss = es_stack_size(m);
    uint16_t sel = m->seg[d->o[0].reg].sel;
    uint64_t sp = (m->gpr[ES_RSP] - size) & es_mask(ss);
    if (m->vendor == 0 && size > 2)
        TRY(es_store(m, ss_lin(m, sp), 2, sel));
    else
        TRY(es_store(m, ss_lin(m, sp), size, sel));
    es_gpr_set(m, ES_RSP, ss, sp);
    return ES_OK;
}

int op_push(es_machine *m, const es_insn *d)
{
    uint64_t v;
    if (d->o[0].kind == ES_OPK_SEG)
        return push_seg(m, d);
    /* PUSH RSP pushes the value before the decrement: read first */
    TRY(es_rd(m, d, 0, &v));
    TRY(es_push(m, d->osize, v));
    return ES_OK;
}

int op_pop(es_machine *m, const es_insn *d)
{
    const es_operand *o = &d->o[0];
    unsigned size = d->osize, ss = es_stack_size(m);
    uint64_t sp = m->gpr[ES_RSP] & es_mask(ss), v;
    TRY(es_load(m, ss_lin(m, sp), size, &v));
    switch (o->kind) {
    case ES_OPK_SEG:
        TRY(es_load_data_seg(m, o->reg, (uint16_t)v));
        es_gpr_set(m, ES_RSP, ss, sp + size);
        return ES_OK;
    case ES_OPK_MEM: {
        /* "If the ESP register is used as a base register for addressing a
         * destination operand in memory, the POP instruction computes the
         * effective address of the operand after it increments the ESP
         * register" (SDM POP). */
        uint64_t old = m->gpr[ES_RSP];
        es_gpr_set(m, ES_RSP, ss, sp + size);
        uint64_t a = es_lin(m, d, o);
        m->gpr[ES_RSP] = old;
        TRY(es_store(m, a, size, v));
        es_gpr_set(m, ES_RSP, ss, sp + size);
        return ES_OK;
    }
    default:
        /* POP rSP: the increment happens first, then the popped value
         * lands in rSP */
        es_gpr_set(m, ES_RSP, ss, sp + size);
        es_gpr_set(m, o->reg, o->size, v);
        return ES_OK;
    }
}

/* PUSHF/PUSHFD/PUSHFQ: VM and RF read as 0 in the image (SDM PUSHF). */
int op_pushf(es_machine *m, const es_insn *d)
{
    TRY(es_push(m, d->osize, m->rflags & ~(uint64_t)(ES_VM | ES_RF)));
    return ES_OK;
}

/* POPF/POPFD/POPFQ in protected/64-bit mode (SDM POPF, table 4-15):
 * IOPL changes only at CPL 0, IF only when CPL <= IOPL, VM/VIP/VIF never
 * from here (no virtual-8086 mode), RF is cleared; bit 1 reads as 1.  A
 * 16-bit POPF changes only the low 16 bits. */
int op_popf(es_machine *m, const es_insn *d)
{
    unsigned size = d->osize;
    uint64_t v;
    TRY(es_pop(m, size, &v));
    uint64_t mask = ES_CF | ES_PF | ES_AF | ES_ZF | ES_SF | ES_TF | ES_DF | ES_OF | ES_NT |
                    ES_AC | ES_ID;
    unsigned iopl = (unsigned)(m->rflags & ES_IOPL) >> 12;
    if (m->cpl <= iopl)
        mask |= ES_IF;
    if (m->cpl == 0)
        mask |= ES_IOPL;
    if (size == 2)
        mask &= 0xffff;
    else
        m->rflags &= ~(uint64_t)ES_RF;
    m->rflags = (m->rflags & ~mask) | (v & mask) | 2;
    es_update_ac(m);
    /* TF now set: the next instruction single-steps (es_step traps) */
    return (m->rflags & ES_TF) ? ES_YIELD : ES_OK;
}

/* ENTER imm16, imm8 (SDM ENTER): push rBP, copy level-1 frame pointers
 * from the enclosing frame, push the new frame pointer, allocate.  All
 * stores happen before any register changes, so a #PF leaves the
 * registers as they were. */
int op_enter(es_machine *m, const es_insn *d)
{
    unsigned size = d->osize, ss = es_stack_size(m);
    uint64_t smask = es_mask(ss);
    uint64_t alloc = (uint64_t)d->o[0].imm & 0xffff;
    unsigned level = (unsigned)d->o[1].imm & 31;
    uint64_t sp = (m->gpr[ES_RSP] - size) & smask;
    uint64_t bp = m->gpr[ES_RBP];
    TRY(es_store(m, ss_lin(m, sp), size, bp));
    uint64_t frame = sp;
    if (level > 0) {
        for (unsigned i = 1; i < level; i++) {
            uint64_t v;
            bp = (bp - size) & smask;
            TRY(es_load(m, ss_lin(m, bp), size, &v));
            sp = (sp - size) & smask;
            TRY(es_store(m, ss_lin(m, sp), size, v));
        }
        sp = (sp - size) & smask;
        TRY(es_store(m, ss_lin(m, sp), size, frame));
    }
    /* the allocation itself touches no memory */
    uint64_t nsp = (sp - alloc) & smask;
    es_gpr_set(m, ES_RBP, size, frame);
    es_gpr_set(m, ES_RSP, ss, nsp);
    return ES_OK;
}

/* LEAVE: rSP = rBP, then pop rBP. */
int op_leave(es_machine *m, const es_insn *d)
{
    unsigned size = d->osize, ss = es_stack_size(m);
    uint64_t bp = m->gpr[ES_RBP] & es_mask(ss), v;
    TRY(es_load(m, ss_lin(m, bp), size, &v));
    es_gpr_set(m, ES_RSP, ss, bp + size);
    es_gpr_set(m, ES_RBP, size, v);
    return ES_OK;
}

/* PUSHA/PUSHAD (32-bit mode only; the decoder rejects them in 64-bit
 * mode): EAX, ECX, EDX, EBX, the original ESP, EBP, ESI, EDI. */
int op_pusha(es_machine *m, const es_insn *d)
{
    unsigned size = d->osize, ss = es_stack_size(m);
    uint64_t smask = es_mask(ss), sp = m->gpr[ES_RSP] & smask;
    for (int r = ES_RAX; r <= ES_RDI; r++) {
        sp = (sp - size) & smask;
        TRY(es_store(m, ss_lin(m, sp), size, m->gpr[r]));
    }
    es_gpr_set(m, ES_RSP, ss, sp);
    return ES_OK;
}

/* POPA/POPAD: the reverse order, the ESP slot is skipped. */
int op_popa(es_machine *m, const es_insn *d)
{
    unsigned size = d->osize, ss = es_stack_size(m);
    uint64_t smask = es_mask(ss), sp = m->gpr[ES_RSP] & smask;
    uint64_t v[8];
    for (int r = ES_RDI; r >= ES_RAX; r--) {
        TRY(es_load(m, ss_lin(m, sp), size, &v[r]));
        sp = (sp + size) & smask;
    }
    for (int r = ES_RAX; r <= ES_RDI; r++)
        if (r != ES_RSP)
            es_gpr_set(m, r, size, v[r]);
    es_gpr_set(m, ES_RSP, ss, sp);
    return ES_OK;
}

