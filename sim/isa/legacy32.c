/* legacy32.c - instructions that exist only outside 64-bit mode and fit no
 * other family: BOUND, SALC, ARPL.
 *
 * In 64-bit mode their opcodes are something else (62 is the EVEX prefix,
 * 63 is MOVSXD) or invalid (D6), and Zydis does not decode them as these;
 * the handlers check the mode again so a mis-decoded instruction still
 * raises #UD, as bcd.c does.  The simulator has no real-address or virtual-
 * 8086 mode (ES_MODE_32 is protected or compatibility mode), so ARPL's #UD
 * there is reached only through EFLAGS.VM.
 */
#include "ops.h"

#define LEGACY32_GUARD(m, d)                                                                       \
    do {                                                                                           \
        if ((d)->mode == ES_MODE_64)                                                               \
            return es_raise((m), ES_VEC_UD, 0);                                                    \
    } while (0)

/* Linear address of the BOUND operand's bound at byte offset `off`: the
 * offset wraps at the address size, the linear address at 4 GiB (never
 * 64-bit mode here). */
static uint64_t bound_lin(const es_machine *m, const es_insn *d, unsigned off)
{
    const es_operand *o = &d->o[1];
    uint64_t ea = (es_ea(m, d, o) + off) & es_mask(d->asize);
    return (uint32_t)(ea + m->seg[o->seg].base);
}

/* BOUND r16, m16&16 / r32, m32&32 (SDM Vol. 2A, BOUND): #BR (a fault: the
 * saved EIP is the BOUND's) unless lower <= index <= upper, compared
 * signed; flags are unchanged.  The SDM does not order the two reads.  On
 * the Intel host (measured with the upper bound on an unreadable page) the
 * lower bound is read and compared first: an index below it is #BR without
 * the upper bound being read, any other index reads it (#PF there).
 * A register second operand is #UD (on AVX-512 processors 62 /r with
 * mod = 11 is EVEX and never decodes as BOUND).  Linux delivers a user #BR
 * as SIGSEGV when MPX is not in use (arch/x86/kernel/traps.c, do_bounds). */
int op_bound(es_machine *m, const es_insn *d)
{
    LEGACY32_GUARD(m, d);
    if (d->o[1].kind != ES_OPK_MEM)
        return es_raise(m, ES_VEC_UD, 0);
    unsigned size = d->o[0].size;
    uint64_t index, lower, upper;
    TRY(es_rd(m, d, 0, &index));
    TRY(es_load(m, bound_lin(m, d, 0), size, &lower));
    if (es_sext(index, size) < es_sext(lower, size))
        return es_raise(m, ES_VEC_BR, 0);
    TRY(es_load(m, bound_lin(m, d, size), size, &upper));
    if (es_sext(index, size) > es_sext(upper, size))
        return es_raise(m, ES_VEC_BR, 0);
    return ES_OK;
}

/* SALC (D6, undocumented; AMD and Intel processors implement it): AL = FFH
 * when CF is set, else 00H; no flag changes. */
int op_salc(es_machine *m, const es_insn *d)
{
    LEGACY32_GUARD(m, d);
    es_gpr_set(m, ES_RAX, 1, (m->rflags & ES_CF) ? 0xff : 0);
    return ES_OK;
}

/* ARPL r/m16, r16 (SDM Vol. 2A, ARPL): raises the destination selector's
 * RPL (bits 1:0) to the source's; ZF says whether it changed, no other flag
 * does.  The destination is written only when it changes.  #UD in virtual-
 * 8086 mode. */
int op_arpl(es_machine *m, const es_insn *d)
{
    LEGACY32_GUARD(m, d);
    if (m->rflags & ES_VM)
        return es_raise(m, ES_VEC_UD, 0);
    uint64_t dst, src;
    TRY(es_rd(m, d, 0, &dst));
    TRY(es_rd(m, d, 1, &src));
    if ((dst & 3) < (src & 3)) {
        TRY(es_wr(m, d, 0, (dst & ~3ull) | (src & 3)));
        es_set_flags(m, ES_ZF, ES_ZF);
    } else {
        es_set_flags(m, 0, ES_ZF);
    }
    return ES_OK;
}
