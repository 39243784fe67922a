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
#include <string.h>

#include "ops.h"

/* The common forms, register destination and register or immediate
 * source, skip the generic operand switch: the flag helpers ignore bits
 * above the operand size, so the operands need no masking and es_gpr_set
 * applies the partial-register rules. */
static inline int reg_form(const es_insn *d)
{
    return d->o[0].kind == ES_OPK_GPR &&
           (d->o[1].kind == ES_OPK_GPR || d->o[1].kind == ES_OPK_IMM);
}

static inline uint64_t reg_src(const es_machine *m, const es_operand *o)
{
    return o->kind == ES_OPK_IMM ? (uint64_t)o->imm : m->gpr[o->reg];
}

/* A memory destination the TLB maps writable: read and write it through
 * one host pointer (one translation instead of two).  NULL otherwise, and
 * always while memory observers are attached (they bypass the TLB), so the
 * slow path still reports every access. */
static inline uint8_t *rmw_ptr(es_machine *m, const es_insn *d)
{
    const es_operand *o = &d->o[0];
    return o->kind == ES_OPK_MEM ? es_host_ptr(m, es_lin(m, d, o), o->size, 1) : NULL;
}

static inline uint64_t ptr_get(const uint8_t *p, unsigned sz)
{
    uint64_t v = 0;
    memcpy(&v, p, sz); /* little-endian host */
    return v;
}

/* Read-modify-write op: dest = EXPR (of a = dest, and for NSRC == 2 of
 * b = source), flags FLAGS(a, b, r, sz) replace WHICH.  NSRC is a constant,
 * so each handler keeps its own straight-line body.
 * Memory destinations: the load faults before anything changes, the store
 * before any flag does, so a fault leaves the machine as it was. */
#define RMWOP(name, NSRC, EXPR, FLAGS, WHICH)                                                      \
    static __attribute__((noinline)) int name##_generic(es_machine *m, const es_insn *d)           \
    {                                                                                              \
        uint64_t a, b = 0, r, cf = m->rflags & ES_CF;                                              \
        unsigned sz = d->o[0].size;                                                                \
        uint8_t *p = rmw_ptr(m, d);                                                                \
        (void)cf;                                                                                  \
        (void)b;                                                                                   \
        if (NSRC == 2 && d->o[0].kind == ES_OPK_GPR) { /* memory or high-byte source */            \
            a = m->gpr[d->o[0].reg];                                                               \
            TRY(es_rd(m, d, 1, &b));                                                               \
            r = (EXPR);                                                                            \
            es_gpr_set(m, d->o[0].reg, sz, r);                                                     \
        } else if (p) {                                                                            \
            a = ptr_get(p, sz);                                                                    \
            if (NSRC == 2) /* register or immediate: cannot fault */                               \
                TRY(es_rd(m, d, 1, &b));                                                           \
            r = (EXPR);                                                                            \
            memcpy(p, &r, sz);                                                                     \
        } else {                                                                                   \
            TRY(es_rd(m, d, 0, &a));                                                               \
            if (NSRC == 2)                                                                         \
                TRY(es_rd(m, d, 1, &b));                                                           \
            r = (EXPR);                                                                            \
            TRY(es_wr(m, d, 0, r));                                                                \
        }                                                                                          \
        es_set_flags(m, (FLAGS), (WHICH));                                                         \
        return ES_OK;                                                                              \
    }                                                                                              \
    int name(es_machine *m, const es_insn *d)                                                      \
    {                                                                                              \
        int fast = NSRC == 2 ? reg_form(d) : d->o[0].kind == ES_OPK_GPR;                           \
        if (__builtin_expect(!fast, 0))                                                            \
            return name##_generic(m, d);                                                           \
        uint64_t cf = m->rflags & ES_CF;                                                           \
        unsigned sz = d->o[0].size;                                                                \
        uint64_t a = m->gpr[d->o[0].reg], b = NSRC == 2 ? reg_src(m, &d->o[1]) : 0, r = (EXPR);    \
        (void)cf;                                                                                  \
        (void)b;                                                                                   \
        es_gpr_set(m, d->o[0].reg, sz, r);                                                         \
        es_set_flags(m, (FLAGS), (WHICH));                                                         \
        return ES_OK;                                                                              \
    }

/* Binary op: dest = dest OP src. */
#define BINOP(name, EXPR, FLAGS, WHICH) RMWOP(name, 2, EXPR, FLAGS, WHICH)

BINOP(op_add, a + b, es_flags_add(a, b, 0, sz), ES_ARITH_FLAGS)
BINOP(op_adc, a + b + cf, es_flags_add(a, b, cf, sz), ES_ARITH_FLAGS)
BINOP(op_sub, a - b, es_flags_sub(a, b, 0, sz), ES_ARITH_FLAGS)
BINOP(op_sbb, a - b - cf, es_flags_sub(a, b, cf, sz), ES_ARITH_FLAGS)
BINOP(op_and, a & b, es_flags_logic(r, sz), ES_ARITH_FLAGS)
BINOP(op_or, a | b, es_flags_logic(r, sz), ES_ARITH_FLAGS)
BINOP(op_xor, a ^ b, es_flags_logic(r, sz), ES_ARITH_FLAGS)

/* The operands of CMP and TEST, which only read them. */
static inline __attribute__((always_inline)) int read_pair(es_machine *m, const es_insn *d,
                                                           uint64_t *a, uint64_t *b)
{
    if (__builtin_expect(reg_form(d), 1)) {
        *a = m->gpr[d->o[0].reg];
        *b = reg_src(m, &d->o[1]);
        return ES_OK;
    }
    TRY(es_rd(m, d, 0, a));
    TRY(es_rd(m, d, 1, b));
    return ES_OK;
}

int op_cmp(es_machine *m, const es_insn *d)
{
    uint64_t a, b;
    TRY(read_pair(m, d, &a, &b));
    es_set_flags(m, es_flags_sub(a, b, 0, d->o[0].size), ES_ARITH_FLAGS);
    return ES_OK;
}

int op_test(es_machine *m, const es_insn *d)
{
    uint64_t a, b;
    TRY(read_pair(m, d, &a, &b));
    es_set_flags(m, es_flags_logic(a & b, d->o[0].size), ES_ARITH_FLAGS);
    return ES_OK;
}

/* One-operand op: dest = EXPR(a); flags FLAGS replace WHICH. */
#define UNOP(name, EXPR, FLAGS, WHICH) RMWOP(name, 1, EXPR, FLAGS, WHICH)

/* INC and DEC leave CF alone (SDM Vol. 2A, INC: "The CF flag is not
 * affected"), which is what lets ADC loops use them as counters. */
UNOP(op_inc, a + 1, es_flags_add(a, 1, 0, sz), ES_ARITH_FLAGS & ~ES_CF)
UNOP(op_dec, a - 1, es_flags_sub(a, 1, 0, sz), ES_ARITH_FLAGS & ~ES_CF)
/* NEG is 0 - a: CF = (a != 0), the other flags as for SUB. */
UNOP(op_neg, 0 - a, es_flags_sub(0, a, 0, sz), ES_ARITH_FLAGS)
/* NOT changes no flag. */
UNOP(op_not, ~a, 0, 0)

