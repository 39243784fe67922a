/* bcd.c - decimal adjusts: AAA, AAS, AAM, AAD, DAA, DAS.
 *
 * Valid only outside 64-bit mode (SDM: "Invalid in 64-bit mode"); Zydis does
 * not decode them there, and the handlers check again so a mis-decoded
 * instruction still raises #UD.  Semantics follow the SDM pseudo-code
 * (Vol. 1, 7.3.7 and the instruction pages), including the modern
 * "AX <- AX + 106H" form of AAA, whose carry out of AL reaches AH.
 *
 * Undefined flags.  The host these were written on cannot run 32-bit code
 * (its kernel has IA-32 emulation disabled), so unlike the other families
 * they could not be measured on Zen.  We define them as follows, which is
 * a deliberate choice, not a measurement:
 *  - AAA, AAS: SF, ZF, PF from the final AL, OF = 0;
 *  - DAA, DAS: OF = 0 (SF, ZF, PF are defined: from AL);
 *  - AAM: CF = OF = AF = 0 (SF, ZF, PF defined: from AL);
 *  - AAD: CF, OF, AF as for the 8-bit ADD AL + AH * imm8 that it performs.
 */
#include "ops.h"

#define BCD_GUARD(m, d)                                                                            \
    do {                                                                                           \
        if ((d)->mode == ES_MODE_64)                                                               \
            return es_raise((m), ES_VEC_UD, 0);                                                        \
    } while (0)

static inline unsigned al_of(const es_machine *m) { return (unsigned)(m->gpr[ES_RAX] & 0xff); }
static inline unsigned ah_of(const es_machine *m) { return (unsigned)((m->gpr[ES_RAX] >> 8) & 0xff); }

/* AAA and AAS: adjust AL after an unpacked-BCD add or subtract; AAA's
 * "AX <- AX + 106H" lets the carry out of AL reach AH, AAS takes 6 from AL
 * and 1 from AH. */
static inline __attribute__((always_inline)) int ascii_adjust(es_machine *m, const es_insn *d,
                                                              int sub)
{
    BCD_GUARD(m, d);
    uint64_t ax = m->gpr[ES_RAX] & 0xffff, f = 0;
    if ((ax & 0x0f) > 9 || (m->rflags & ES_AF)) {
        if (sub) {
            ax = (ax - 6) & 0xffff;
            ax = (ax - 0x100) & 0xffff; /* AH <- AH - 1 */
        } else {
            ax += 0x106;
        }
        f = ES_AF | ES_CF;
    }
    ax &= 0xff0f;
    es_gpr_set(m, ES_RAX, 2, ax);
    es_set_flags(m, f | es_flags_szp(ax & 0xff, 1), ES_ARITH_FLAGS);
    return ES_OK;
}

int op_aaa(es_machine *m, const es_insn *d) { return ascii_adjust(m, d, 0); }
int op_aas(es_machine *m, const es_insn *d) { return ascii_adjust(m, d, 1); }

/* DAA and DAS: adjust AL after a packed-BCD add or subtract. */
static inline __attribute__((always_inline)) int decimal_adjust(es_machine *m,
                                                                const es_insn *d, int sub)
{
    BCD_GUARD(m, d);
    unsigned al = al_of(m), old_al = al;
    int old_cf = (m->rflags & ES_CF) != 0, cf = 0;
    uint64_t f = 0;
    if ((al & 0x0f) > 9 || (m->rflags & ES_AF)) {
        cf = old_cf || (sub ? al < 6 : al + 6 > 0xff);
        al = (sub ? al - 6 : al + 6) & 0xff;
        f |= ES_AF;
    }
    if (old_al > 0x99 || old_cf) {
        al = (sub ? al - 0x60 : al + 0x60) & 0xff;
        cf = 1;
    } else if (!sub) {
        /* SDM DAS: unlike DAA, the second step leaves CF from the first
         * when old_AL <= 99H and old_CF = 0 */
        cf = 0;
    }
    es_gpr_set(m, ES_RAX, 1, al);
    es_set_flags(m, f | (cf ? ES_CF : 0) | es_flags_szp(al, 1), ES_ARITH_FLAGS);
    return ES_OK;
}

int op_daa(es_machine *m, const es_insn *d) { return decimal_adjust(m, d, 0); }
int op_das(es_machine *m, const es_insn *d) { return decimal_adjust(m, d, 1); }

/* AAM imm8: AH = AL / imm8, AL = AL % imm8; #DE when imm8 is 0. */
int op_aam(es_machine *m, const es_insn *d)
{
    BCD_GUARD(m, d);
    unsigned base = (unsigned)d->o[0].imm & 0xff, al = al_of(m);
    if (base == 0)
        return es_raise(m, ES_VEC_DE, 0);
    unsigned q = al / base, r = al % base;
    es_gpr_set(m, ES_RAX, 2, (q << 8) | r);
    es_set_flags(m, es_flags_logic(r, 1), ES_ARITH_FLAGS);
    return ES_OK;
}

/* AAD imm8: AL = AL + AH * imm8 (8 bits), AH = 0. */
int op_aad(es_machine *m, const es_insn *d)
{
    BCD_GUARD(m, d);
    unsigned base = (unsigned)d->o[0].imm & 0xff, al = al_of(m), ah = ah_of(m);
    unsigned prod = (ah * base) & 0xff;
    unsigned r = (al + prod) & 0xff;
    es_gpr_set(m, ES_RAX, 2, r);
    es_set_flags(m, es_flags_add(al, prod, 0, 1), ES_ARITH_FLAGS);
    return ES_OK;
}

