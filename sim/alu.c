/* alu.c - two-operand integer arithmetic and logic: ADD, ADC, SUB, SBB,
 * AND, OR, XOR, CMP, TEST, and the one-operand INC, DEC, NEG, NOT.
 *
 * Operands come straight from the decoded form: o[0] is the destination
 * (GPR, high byte or memory), o[1] the source (GPR, memory or an immediate
 * already sign-extended by the decoder).  Results are masked by es_wr to
 * the operand width, so a 32-bit register destination is zero-extended
 * (SDM Vol. 1, 3.4.1.1) and CMP/TEST never write.
 *
 * LOCK: the decoder rejects LOCK on register destinations and on CMP/TEST
 * (Zydis reports an illegal LOCK, the run loop raises #UD), so a handler
 * only ever sees LOCK on a memory read-modify-write, which is atomic
 * already because the simulated machine has one CPU.
 */
#include "ops.h"

/* Binary RMW op: dest = dest OP src, flags from FLAGS(a, b, r, size).
 * Memory destinations: the load faults before anything changes, the store
 * before any flag does, so a fault leaves the machine as it was. */
#define BINOP(name, EXPR, FLAGS, WHICH)                                                            \
    static int name(es_machine *m, const es_insn *d)                                               \
    {                                                                                              \
        uint64_t a, b;                                                                             \
        unsigned sz = d->o[0].size;                                                                \
        TRY(es_rd(m, d, 0, &a));                                                                   \
        TRY(es_rd(m, d, 1, &b));                                                                   \
        uint64_t cf = m->rflags & ES_CF;                                                           \
        (void)cf;                                                                                  \
        uint64_t r = (EXPR);                                                                       \
        TRY(es_wr(m, d, 0, r));                                                                    \
        es_set_flags(m, (FLAGS), (WHICH));                                                         \
        return ES_OK;                                                                              \
    }

BINOP(op_add, a + b, es_flags_add(a, b, 0, sz), ES_ARITH_FLAGS)
BINOP(op_adc, a + b + cf, es_flags_add(a, b, cf, sz), ES_ARITH_FLAGS)
BINOP(op_sub, a - b, es_flags_sub(a, b, 0, sz), ES_ARITH_FLAGS)
BINOP(op_sbb, a - b - cf, es_flags_sub(a, b, cf, sz), ES_ARITH_FLAGS)
BINOP(op_and, a & b, es_flags_logic(r, sz), ES_ARITH_FLAGS)
BINOP(op_or, a | b, es_flags_logic(r, sz), ES_ARITH_FLAGS)
BINOP(op_xor, a ^ b, es_flags_logic(r, sz), ES_ARITH_FLAGS)

static int op_cmp(es_machine *m, const es_insn *d)
{
    uint64_t a, b;
    TRY(es_rd(m, d, 0, &a));
    TRY(es_rd(m, d, 1, &b));
    es_set_flags(m, es_flags_sub(a, b, 0, d->o[0].size), ES_ARITH_FLAGS);
    return ES_OK;
}

static int op_test(es_machine *m, const es_insn *d)
{
    uint64_t a, b;
    TRY(es_rd(m, d, 0, &a));
    TRY(es_rd(m, d, 1, &b));
    es_set_flags(m, es_flags_logic(a & b, d->o[0].size), ES_ARITH_FLAGS);
    return ES_OK;
}

/* INC and DEC leave CF alone (SDM Vol. 2A, INC: "The CF flag is not
 * affected"), which is what lets ADC loops use them as counters. */
static int op_inc(es_machine *m, const es_insn *d)
{
    uint64_t a;
    TRY(es_rd(m, d, 0, &a));
    TRY(es_wr(m, d, 0, a + 1));
    es_set_flags(m, es_flags_add(a, 1, 0, d->o[0].size), ES_ARITH_FLAGS & ~ES_CF);
    return ES_OK;
}

static int op_dec(es_machine *m, const es_insn *d)
{
    uint64_t a;
    TRY(es_rd(m, d, 0, &a));
    TRY(es_wr(m, d, 0, a - 1));
    es_set_flags(m, es_flags_sub(a, 1, 0, d->o[0].size), ES_ARITH_FLAGS & ~ES_CF);
    return ES_OK;
}

/* NEG is 0 - a: CF = (a != 0), the other flags as for SUB. */
static int op_neg(es_machine *m, const es_insn *d)
{
    uint64_t a;
    TRY(es_rd(m, d, 0, &a));
    TRY(es_wr(m, d, 0, 0 - a));
    es_set_flags(m, es_flags_sub(0, a, 0, d->o[0].size), ES_ARITH_FLAGS);
    return ES_OK;
}

static int op_not(es_machine *m, const es_insn *d)
{
    uint64_t a;
    TRY(es_rd(m, d, 0, &a));
    return es_wr(m, d, 0, ~a) ? ES_FAULT : ES_OK;
}

void es_family_alu(es_handler *t)
{
    t[ES_OP_ADD] = op_add;
    t[ES_OP_ADC] = op_adc;
    t[ES_OP_SUB] = op_sub;
    t[ES_OP_SBB] = op_sbb;
    t[ES_OP_AND] = op_and;
    t[ES_OP_OR] = op_or;
    t[ES_OP_XOR] = op_xor;
    t[ES_OP_CMP] = op_cmp;
    t[ES_OP_TEST] = op_test;
    t[ES_OP_INC] = op_inc;
    t[ES_OP_DEC] = op_dec;
    t[ES_OP_NEG] = op_neg;
    t[ES_OP_NOT] = op_not;
}
