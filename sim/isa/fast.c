/* fast.c - specialised handlers for the hottest instruction forms, chosen
 * once per decode by the block cache (sim/block.c): Jcc by condition, the
 * ALU operations and MOV with register/immediate operands at 32 and 64
 * bits, loads and stores with 64-bit addressing, CMP against memory.
 *
 * Each one is the generic handler of its isa.tbl row (alu.c, mov.c,
 * branch.c) with the operand kinds and the width fixed, so the compiler
 * folds the operand switches and the width arithmetic of the flag helpers:
 * same results, same flags, same faults.  es_fast_handler returns the
 * generic handler for every form not listed here.
 *
 * Flags are lazy here: every handler this file hands out either leaves the
 * arithmetic flags alone, or replaces all six with a record (ALU, CMP), or
 * decides from the record (Jcc); none reads them from m->rflags while a
 * record is pending.  The block loop relies on that (sim/block.c).
 */
#include "../block.h"
#include "ops.h"

/* ---- lazy flags ----
 * The ALU handlers below record their operation and operands (m->lz_op,
 * lz_a, lz_b) instead of computing the six arithmetic flags; a Jcc here
 * decides from the record, and the block loop computes the flags (the same
 * es_flags_ helpers the eager handlers use) before any other handler runs
 * and before it returns (sim/block.c).  On compare-and-branch code most
 * flags are never computed. */

void es_lazy_flush(es_machine *m)
{
    uint64_t a = m->lz_a, b = m->lz_b, f;
    switch (m->lz_op) {
    case ES_LZ_SUB1: f = es_flags_sub(a, b, 0, 1); break;
    case ES_LZ_SUB4: f = es_flags_sub(a, b, 0, 4); break;
    case ES_LZ_SUB8: f = es_flags_sub(a, b, 0, 8); break;
    case ES_LZ_ADD4: f = es_flags_add(a, b, 0, 4); break;
    case ES_LZ_ADD8: f = es_flags_add(a, b, 0, 8); break;
    case ES_LZ_LOGIC4: f = es_flags_logic(a, 4); break;
    case ES_LZ_LOGIC8: f = es_flags_logic(a, 8); break;
    default: return;
    }
    es_set_flags(m, f, ES_ARITH_FLAGS);
    m->lz_op = ES_LZ_NONE;
}

static inline bool parity_even(uint64_t r)
{
    return !__builtin_parity((unsigned)(r & 0xff));
}

/* Condition cc of a - b at width sz without the flags: CF is the unsigned
 * compare, SF != OF the signed one (SDM Vol. 1, B.1, Jcc after CMP). */
static inline int sub_cond(uint64_t a, uint64_t b, unsigned sz, unsigned cc)
{
    uint64_t mk = es_mask(sz), r = (a - b) & mk;
    unsigned top = sz * 8 - 1;
    a &= mk;
    b &= mk;
    int v;
    switch (cc >> 1) {
    case 0: v = (int)((((a ^ b) & (a ^ r)) >> top) & 1); break;
    case 1: v = a < b; break;
    case 2: v = r == 0; break;
    case 3: v = a <= b; break;
    case 4: v = (int)((r >> top) & 1); break;
    case 5: v = parity_even(r); break;
    case 6: v = es_sext(a, sz) < es_sext(b, sz); break;
    default: v = es_sext(a, sz) <= es_sext(b, sz); break;
    }
    return (cc & 1) ? !v : v;
}

/* Condition cc of a logical result r: CF = OF = 0. */
static inline int logic_cond(uint64_t r, unsigned sz, unsigned cc)
{
    r &= es_mask(sz);
    int zf = r == 0, sf = (int)((r >> (sz * 8 - 1)) & 1), v;
    switch (cc >> 1) {
    case 0: case 1: v = 0; break;
    case 2: case 3: v = zf; break;
    case 4: case 6: v = sf; break;
    case 5: v = parity_even(r); break;
    default: v = zf | sf; break;
    }
    return (cc & 1) ? !v : v;
}

static inline int lazy_cond(const es_machine *m, unsigned cc)
{
    uint64_t a = m->lz_a, b = m->lz_b;
    switch (m->lz_op) {
    case ES_LZ_SUB1: return sub_cond(a, b, 1, cc);
    case ES_LZ_SUB4: return sub_cond(a, b, 4, cc);
    case ES_LZ_SUB8: return sub_cond(a, b, 8, cc);
    case ES_LZ_LOGIC4: return logic_cond(a, 4, cc);
    case ES_LZ_LOGIC8: return logic_cond(a, 8, cc);
    case ES_LZ_ADD4: return es_cond_f(es_flags_add(a, b, 0, 4), cc);
    case ES_LZ_ADD8: return es_cond_f(es_flags_add(a, b, 0, 8), cc);
    default: return es_cond(m, cc);
    }
}

/* ---- Jcc: the condition and a target checked at decode time ---- */

/* Both ways: a threaded block (sim/block.c) sets no m->nrip before it. */
#define JCC(cc)                                                                                    \
    static int jcc_##cc(es_machine *m, const es_insn *d)                                           \
    {                                                                                              \
        m->nrip = lazy_cond(m, cc) ? (uint64_t)d->o[0].imm : es_bent_of(d)->next;                  \
        return ES_OK;                                                                              \
    }
JCC(0) JCC(1) JCC(2) JCC(3) JCC(4) JCC(5) JCC(6) JCC(7)
JCC(8) JCC(9) JCC(10) JCC(11) JCC(12) JCC(13) JCC(14) JCC(15)

static const es_handler jcc_fast[16] = {
    jcc_0, jcc_1, jcc_2, jcc_3, jcc_4, jcc_5, jcc_6, jcc_7,
    jcc_8, jcc_9, jcc_10, jcc_11, jcc_12, jcc_13, jcc_14, jcc_15,
};

/* ---- ALU: dest = dest OP src with a register or immediate source ---- */

/* A fast handler: inlined into its threaded and fused forms (the ones the
 * block loop calls), and also standing alone, by address, for es_step-like
 * one-by-one runs. */
#define FAST static inline __attribute__((always_inline)) int

#define SRC_R(m, d) ((m)->gpr[(d)->o[1].reg])
#define SRC_I(m, d) ((uint64_t)(d)->o[1].imm)

/* WRITE: 1 for ADD/SUB/AND/OR/XOR, 0 for CMP/TEST; LZ(sz) the record,
 * LA its first operand (a, or the result r for the logical operations) */
#define ALU(name, SZ, SRC, EXPR, LZ, LA, WRITE)                                                    \
    FAST name(es_machine *m, const es_insn *d)                                                      \
    {                                                                                              \
        uint64_t a = m->gpr[d->o[0].reg], b = SRC(m, d), r = (EXPR);                               \
        if (WRITE)                                                                                 \
            es_gpr_set(m, d->o[0].reg, SZ, r);                                                     \
        m->lz_op = (LZ);                                                                           \
        m->lz_a = (LA);                                                                            \
        m->lz_b = b;                                                                               \
        return ES_OK;                                                                              \
    }

/* the four forms of one operation: [reg/imm source][32/64 bits] */
#define ALU4(op, EXPR, KIND, LA, WRITE)                                                            \
    ALU(op##_r4, 4, SRC_R, EXPR, ES_LZ_##KIND##4, LA, WRITE)                                       \
    ALU(op##_r8, 8, SRC_R, EXPR, ES_LZ_##KIND##8, LA, WRITE)                                       \
    ALU(op##_i4, 4, SRC_I, EXPR, ES_LZ_##KIND##4, LA, WRITE)                                       \
    ALU(op##_i8, 8, SRC_I, EXPR, ES_LZ_##KIND##8, LA, WRITE)                                       \
    static const es_handler op##_fast[4] = {op##_r4, op##_r8, op##_i4, op##_i8};

ALU4(add, a + b, ADD, a, 1)
ALU4(sub, a - b, SUB, a, 1)
ALU4(and, a &b, LOGIC, r, 1)
ALU4(or, a | b, LOGIC, r, 1)
ALU4(xor, a ^ b, LOGIC, r, 1)
ALU4(cmp, a - b, SUB, a, 0)
ALU4(test, a &b, LOGIC, r, 0)

/* SBB r, r (the same register: array_index_nospec's mask, Linux's
 * "cmp; sbb mask, mask"): the result is -CF, and its flags are those of
 * 0 - CF (CF and AF the borrow, ZF its absence, SF, PF of the result, OF
 * 0), so the record is SUB of 0 and CF, with CF taken from the pending
 * record (or RFLAGS). */
#define SBB_SELF(name, SZ, LZ)                                                                     \
    FAST name(es_machine *m, const es_insn *d)                                                     \
    {                                                                                              \
        uint64_t cf = (uint64_t)lazy_cond(m, 2);                                                   \
        m->gpr[d->o[0].reg] = (SZ) == 8 ? 0 - cf : (uint32_t)(0 - cf);                             \
        m->lz_op = (LZ);                                                                           \
        m->lz_a = 0;                                                                               \
        m->lz_b = cf;                                                                              \
        return ES_OK;                                                                              \
    }
SBB_SELF(sbb_self4, 4, ES_LZ_SUB4)
SBB_SELF(sbb_self8, 8, ES_LZ_SUB8)

/* ---- memory operands with 64-bit addressing ---- */

/* es_lin for a 64-bit mode operand with a 64-bit address size */
static inline uint64_t lin64(const es_machine *m, const es_operand *o)
{
    uint64_t a = (uint64_t)o->disp + m->seg[o->seg].base;
    if (o->base != ES_REG_NONE)
        a += m->gpr[o->base];
    if (o->index != ES_REG_NONE)
        a += m->gpr[o->index] * o->scale;
    return a;
}

/* CMP mem, reg/imm: the record of mem - src at the memory width (a fault
 * leaves the record, and the flags, as they were) */
#define CMPM(name, SZ, SRC, LZ)                                                                    \
    FAST name(es_machine *m, const es_insn *d)                                                      \
    {                                                                                              \
        uint64_t a, b = SRC(m, d);                                                                 \
        TRY(es_load(m, lin64(m, &d->o[0]), SZ, &a));                                               \
        m->lz_op = (LZ);                                                                           \
        m->lz_a = a;                                                                               \
        m->lz_b = b;                                                                               \
        return ES_OK;                                                                              \
    }
CMPM(cmp_mi1, 1, SRC_I, ES_LZ_SUB1)
CMPM(cmp_mi4, 4, SRC_I, ES_LZ_SUB4)
CMPM(cmp_mi8, 8, SRC_I, ES_LZ_SUB8)
CMPM(cmp_mr4, 4, SRC_R, ES_LZ_SUB4)
CMPM(cmp_mr8, 8, SRC_R, ES_LZ_SUB8)

/* CMP reg, mem: the record of reg - mem */
#define CMPRM(name, SZ, LZ)                                                                        \
    FAST name(es_machine *m, const es_insn *d)                                                     \
    {                                                                                              \
        uint64_t b;                                                                                \
        TRY(es_load(m, lin64(m, &d->o[1]), SZ, &b));                                               \
        m->lz_op = (LZ);                                                                           \
        m->lz_a = m->gpr[d->o[0].reg];                                                             \
        m->lz_b = b;                                                                               \
        return ES_OK;                                                                              \
    }
CMPRM(cmp_rm4, 4, ES_LZ_SUB4)
CMPRM(cmp_rm8, 8, ES_LZ_SUB8)

/* MOV: register and immediate sources into registers, and loads, at every
 * width (es_gpr_set: a 32-bit write clears the top half, a byte or word
 * write keeps the rest of the register), then stores */
#define MOVN(name, SZ, SRC)                                                                        \
    FAST name(es_machine *m, const es_insn *d)                                                     \
    {                                                                                              \
        es_gpr_set(m, d->o[0].reg, SZ, SRC(m, d));                                                 \
        return ES_OK;                                                                              \
    }
#define LOADN(name, SZ)                                                                            \
    FAST name(es_machine *m, const es_insn *d)                                                     \
    {                                                                                              \
        uint64_t v;                                                                                \
        TRY(es_load(m, lin64(m, &d->o[1]), SZ, &v));                                               \
        es_gpr_set(m, d->o[0].reg, SZ, v);                                                         \
        return ES_OK;                                                                              \
    }
MOVN(mov_rr1, 1, SRC_R) MOVN(mov_rr2, 2, SRC_R) MOVN(mov_rr4, 4, SRC_R) MOVN(mov_rr8, 8, SRC_R)
MOVN(mov_ri1, 1, SRC_I) MOVN(mov_ri2, 2, SRC_I) MOVN(mov_ri4, 4, SRC_I) MOVN(mov_ri8, 8, SRC_I)
LOADN(mov_load1, 1) LOADN(mov_load2, 2) LOADN(mov_load4, 4) LOADN(mov_load8, 8)

/* stores: the source (register or immediate) cut to the width by es_store */
#define STORE(name, SZ, SRC)                                                                       \
    FAST name(es_machine *m, const es_insn *d)                                                      \
    {                                                                                              \
        return es_store(m, lin64(m, &d->o[0]), SZ, SRC(m, d)) ? ES_FAULT : ES_OK;                  \
    }
STORE(mov_store_r1, 1, SRC_R)
STORE(mov_store_r4, 4, SRC_R)
STORE(mov_store_r8, 8, SRC_R)
STORE(mov_store_i1, 1, SRC_I)
STORE(mov_store_i4, 4, SRC_I)
STORE(mov_store_i8, 8, SRC_I)

/* MOVZX / MOVSX / MOVSXD into a 32- or 64-bit register from a register
 * (not AH..BH) or memory; a 32-bit destination clears the top half */
#define EXT(name, SZ, SEXT, DST8, MEM)                                                             \
    FAST name(es_machine *m, const es_insn *d)                                                     \
    {                                                                                              \
        uint64_t v;                                                                                \
        if (MEM)                                                                                   \
            TRY(es_load(m, lin64(m, &d->o[1]), SZ, &v));                                           \
        else                                                                                       \
            v = m->gpr[d->o[1].reg];                                                               \
        v = (SEXT) ? (uint64_t)es_sext(v, SZ) : v & es_mask(SZ);                                   \
        m->gpr[d->o[0].reg] = (DST8) ? v : (uint32_t)v;                                            \
        return ES_OK;                                                                              \
    }
EXT(movzx_r1, 1, 0, 1, 0) EXT(movzx_r2, 2, 0, 1, 0) EXT(movzx_m1, 1, 0, 1, 1) EXT(movzx_m2, 2, 0, 1, 1)
EXT(movsx_r1_4, 1, 1, 0, 0) EXT(movsx_r2_4, 2, 1, 0, 0) EXT(movsx_r4_4, 4, 1, 0, 0)
EXT(movsx_m1_4, 1, 1, 0, 1) EXT(movsx_m2_4, 2, 1, 0, 1) EXT(movsx_m4_4, 4, 1, 0, 1)
EXT(movsx_r1_8, 1, 1, 1, 0) EXT(movsx_r2_8, 2, 1, 1, 0) EXT(movsx_r4_8, 4, 1, 1, 0)
EXT(movsx_m1_8, 1, 1, 1, 1) EXT(movsx_m2_8, 2, 1, 1, 1) EXT(movsx_m4_8, 4, 1, 1, 1)

/* Word stores and byte compares (the record at width 1) */
STORE(mov_store_r2, 2, SRC_R)
STORE(mov_store_i2, 2, SRC_I)
ALU(cmp_r1, 1, SRC_R, a - b, ES_LZ_SUB1, a, 0)
ALU(cmp_i1, 1, SRC_I, a - b, ES_LZ_SUB1, a, 0)
CMPM(cmp_mr1, 1, SRC_R, ES_LZ_SUB1)
CMPRM(cmp_rm1, 1, ES_LZ_SUB1)

/* ---- the stack and near transfers (64-bit mode, 64-bit operand size) ----
 * es_push / es_pop / op_call / op_ret with the size and mode fixed (SDM
 * PUSH, POP, CALL, RET: 64-bit mode, stack address size 64).  A call, jmp
 * or ret ends its block and sets m->nrip itself; a fault goes through
 * thread_fault (the faulting entry's RIP, nothing retired). */

static __attribute__((noinline, cold)) int thread_fault(es_machine *m, const es_insn *d);

static inline bool canonical64(uint64_t t)
{
    return (uint64_t)((int64_t)(t << 16) >> 16) == t;
}

static inline uint64_t ss_lin64(const es_machine *m, uint64_t sp)
{
    return sp + m->seg[ES_SEG_SS].base;
}

/* PUSH RSP pushes the value before the decrement: read first */
#define PUSH(name, SRC)                                                                            \
    FAST name(es_machine *m, const es_insn *d)                                                     \
    {                                                                                              \
        uint64_t v = SRC, sp = m->gpr[ES_RSP] - 8;                                                 \
        if (es_store(m, ss_lin64(m, sp), 8, v))                                                    \
            return ES_FAULT;                                                                       \
        m->gpr[ES_RSP] = sp;                                                                       \
        return ES_OK;                                                                              \
    }
PUSH(push_r8, m->gpr[d->o[0].reg])
PUSH(push_i8, (uint64_t)d->o[0].imm)

/* POP RSP: the increment first, then the popped value lands in RSP */
FAST pop_r8(es_machine *m, const es_insn *d)
{
    uint64_t v, sp = m->gpr[ES_RSP];
    if (es_load(m, ss_lin64(m, sp), 8, &v))
        return ES_FAULT;
    m->gpr[ES_RSP] = sp + 8;
    m->gpr[d->o[0].reg] = v;
    return ES_OK;
}

static int jmp_rel(es_machine *m, const es_insn *d)
{
    m->nrip = (uint64_t)d->o[0].imm; /* canonical: checked at decode */
    return ES_OK;
}

static int call_rel(es_machine *m, const es_insn *d)
{
    uint64_t sp = m->gpr[ES_RSP] - 8;
    if (es_store(m, ss_lin64(m, sp), 8, es_bent_of(d)->next))
        return thread_fault(m, d);
    m->gpr[ES_RSP] = sp;
    m->nrip = (uint64_t)d->o[0].imm;
    return ES_OK;
}

static int ret_near(es_machine *m, const es_insn *d)
{
    uint64_t t, sp = m->gpr[ES_RSP];
    if (es_load(m, ss_lin64(m, sp), 8, &t))
        return thread_fault(m, d);
    if (!canonical64(t)) {
        es_raise(m, ES_VEC_GP, 0);
        return thread_fault(m, d);
    }
    m->gpr[ES_RSP] = sp + 8;
    m->nrip = t;
    return ES_OK;
}

/* ---- threading: each handler of a block runs the next one itself ----
 * In a block that runs whole, the entries' tfn chain: a handler here does
 * its instruction and tail-calls the next entry's tfn, so the host's
 * branch predictor sees one indirect jump per handler rather than one
 * shared call site.  The chain ends at a Jcc or fused compare-and-branch
 * (last in its block), at the block's sentinel, at an entry with a generic
 * handler (its tfn records where to go on, m->bpos, and returns
 * ES_THREAD_STOP), and after a memory
 * access that reset the fetch page (code written, TLB flushed: the block
 * must stop, sim/block.h).  A fault records the faulting entry's RIP and
 * position, nothing of it retired. */

static int thread_fault(es_machine *m, const es_insn *d)
{
    const es_bent *e = es_bent_of(d);
    m->rip = m->fault.rip = e->rip;
    m->bpos = e;
    return ES_FAULT;
}

/* MEM: the instruction accesses memory, so it may have reset the fetch page */
#define THREAD(name, MEM)                                                                          \
    static int name##_t(es_machine *m, const es_insn *d)                                           \
    {                                                                                              \
        if (name(m, d) != ES_OK)                                                                   \
            return thread_fault(m, d);                                                             \
        const es_bent *n = es_bent_after(d);                                                       \
        if ((MEM) && __builtin_expect(m->fetch_va == 1, 0)) {                                      \
            m->bpos = n;                                                                           \
            return ES_THREAD_STOP;                                                                 \
        }                                                                                          \
        return n->tfn(m, &n->insn);                                                                \
    }
/* Every handler above with a threaded form, once: (name, MEM) */
#define ALU_FORMS(X, op) X(op##_r4, 0) X(op##_r8, 0) X(op##_i4, 0) X(op##_i8, 0)
#define THREADED(X)                                                                                \
    ALU_FORMS(X, add) ALU_FORMS(X, sub) ALU_FORMS(X, and) ALU_FORMS(X, or) ALU_FORMS(X, xor)        \
    ALU_FORMS(X, cmp) ALU_FORMS(X, test)                                                           \
    X(cmp_r1, 0) X(cmp_i1, 0) X(sbb_self4, 0) X(sbb_self8, 0)                                      \
    X(cmp_mi1, 1) X(cmp_mi4, 1) X(cmp_mi8, 1) X(cmp_mr1, 1) X(cmp_mr4, 1) X(cmp_mr8, 1)            \
    X(cmp_rm1, 1) X(cmp_rm4, 1) X(cmp_rm8, 1)                                                      \
    X(mov_rr1, 0) X(mov_rr2, 0) X(mov_rr4, 0) X(mov_rr8, 0)                                        \
    X(mov_ri1, 0) X(mov_ri2, 0) X(mov_ri4, 0) X(mov_ri8, 0)                                        \
    X(mov_load1, 1) X(mov_load2, 1) X(mov_load4, 1) X(mov_load8, 1)                                \
    X(mov_store_r1, 1) X(mov_store_r2, 1) X(mov_store_r4, 1) X(mov_store_r8, 1)                    \
    X(mov_store_i1, 1) X(mov_store_i2, 1) X(mov_store_i4, 1) X(mov_store_i8, 1)                    \
    X(push_r8, 1) X(push_i8, 1) X(pop_r8, 1)                                                       \
    X(movzx_r1, 0) X(movzx_r2, 0) X(movzx_m1, 1) X(movzx_m2, 1)                                    \
    X(movsx_r1_4, 0) X(movsx_r2_4, 0) X(movsx_r4_4, 0)                                             \
    X(movsx_m1_4, 1) X(movsx_m2_4, 1) X(movsx_m4_4, 1)                                             \
    X(movsx_r1_8, 0) X(movsx_r2_8, 0) X(movsx_r4_8, 0)                                             \
    X(movsx_m1_8, 1) X(movsx_m2_8, 1) X(movsx_m4_8, 1)
THREADED(THREAD)

#define PAIR(name, MEM) {name, name##_t},
static const struct {
    es_handler fn, threaded;
} threaded[] = {THREADED(PAIR)};

es_handler es_fast_threaded(es_handler fn)
{
    for (size_t i = 0; i < sizeof threaded / sizeof threaded[0]; i++)
        if (threaded[i].fn == fn)
            return threaded[i].threaded;
    return fn; /* a Jcc, JMP, CALL or RET: last in its block, it ends the chain */
}

/* ---- a compare fused with the Jcc after it ----
 * CMP/TEST then Jcc, the last two instructions of a block, in one call:
 * the compare's handler (inlined: it records its flags lazily, or faults
 * with nothing retired), then the Jcc's decision from the record.  The
 * block loop counts the entry as two instructions and uses it only when
 * the whole block runs (sim/block.c). */

#define FUSE(first, cc)                                                                            \
    static int first##_j##cc(es_machine *m, const es_insn *d)                                      \
    {                                                                                              \
        if (first(m, d) != ES_OK)                                                                  \
            return thread_fault(m, d);                                                             \
        const es_bent *j = es_bent_after(d);                                                       \
        m->nrip = lazy_cond(m, cc) ? (uint64_t)j->insn.o[0].imm : j->next;                         \
        return ES_OK;                                                                              \
    }
#define FUSE16(first)                                                                              \
    FUSE(first, 0) FUSE(first, 1) FUSE(first, 2) FUSE(first, 3) FUSE(first, 4) FUSE(first, 5)      \
    FUSE(first, 6) FUSE(first, 7) FUSE(first, 8) FUSE(first, 9) FUSE(first, 10) FUSE(first, 11)    \
    FUSE(first, 12) FUSE(first, 13) FUSE(first, 14) FUSE(first, 15)                                \
    static const es_handler first##_jcc[16] = {                                                    \
        first##_j0, first##_j1, first##_j2, first##_j3, first##_j4, first##_j5,                    \
        first##_j6, first##_j7, first##_j8, first##_j9, first##_j10, first##_j11,                  \
        first##_j12, first##_j13, first##_j14, first##_j15,                                        \
    };
FUSE16(cmp_r4) FUSE16(cmp_r8) FUSE16(cmp_i4) FUSE16(cmp_i8)
FUSE16(test_r4) FUSE16(test_r8) FUSE16(test_i4) FUSE16(test_i8)
FUSE16(cmp_mi1) FUSE16(cmp_mi4) FUSE16(cmp_mi8) FUSE16(cmp_mr4) FUSE16(cmp_mr8)
FUSE16(cmp_rm4) FUSE16(cmp_rm8)
FUSE16(cmp_r1) FUSE16(cmp_i1) FUSE16(cmp_mr1) FUSE16(cmp_rm1)

static const struct {
    es_handler first;
    const es_handler *jcc;
} fusable[] = {
    {cmp_r4, cmp_r4_jcc}, {cmp_r8, cmp_r8_jcc}, {cmp_i4, cmp_i4_jcc}, {cmp_i8, cmp_i8_jcc},
    {test_r4, test_r4_jcc}, {test_r8, test_r8_jcc}, {test_i4, test_i4_jcc},
    {test_i8, test_i8_jcc}, {cmp_mi1, cmp_mi1_jcc}, {cmp_mi4, cmp_mi4_jcc},
    {cmp_mi8, cmp_mi8_jcc}, {cmp_mr4, cmp_mr4_jcc}, {cmp_mr8, cmp_mr8_jcc},
    {cmp_rm4, cmp_rm4_jcc}, {cmp_rm8, cmp_rm8_jcc}, {cmp_r1, cmp_r1_jcc}, {cmp_i1, cmp_i1_jcc},
    {cmp_mr1, cmp_mr1_jcc}, {cmp_rm1, cmp_rm1_jcc},
};

es_handler es_fast_fuse(const es_insn *d, es_handler fn, const es_insn *j, es_handler jfn)
{
    (void)d;
    unsigned cc = j->opcode & 0xf;
    if (jfn != jcc_fast[cc]) /* a specialised Jcc: its target checked at decode time */
        return NULL;
    for (size_t i = 0; i < sizeof fusable / sizeof fusable[0]; i++)
        if (fusable[i].first == fn)
            return fusable[i].jcc[cc];
    return NULL;
}

/* ---- selection ---- */

static bool is_gpr(const es_operand *o, unsigned size)
{
    return o->kind == ES_OPK_GPR && o->size == size;
}

/* A memory operand es_lin would address as lin64 does (64-bit mode, 64-bit
 * address size: no truncation). */
static bool mem64(const es_insn *d, const es_operand *o)
{
    return o->kind == ES_OPK_MEM && d->mode == ES_MODE_64 && d->asize == 8 &&
           (o->base < 16 || o->base == ES_REG_NONE) && (o->index < 16 || o->index == ES_REG_NONE);
}

static es_handler pick_alu(const es_insn *d, const es_handler fast[4])
{
    unsigned sz = d->o[0].size;
    if ((sz != 4 && sz != 8) || !is_gpr(&d->o[0], sz))
        return NULL;
    if (is_gpr(&d->o[1], sz))
        return fast[sz == 8];
    if (d->o[1].kind == ES_OPK_IMM)
        return fast[2 + (sz == 8)];
    return NULL;
}

static es_handler pick_cmp_mem(const es_insn *d)
{
    const es_operand *a = &d->o[0], *b = &d->o[1];
    if (is_gpr(a, a->size) && mem64(d, b) && b->size == a->size)
        return a->size == 1 ? cmp_rm1 : a->size == 4 ? cmp_rm4 : a->size == 8 ? cmp_rm8 : NULL;
    if (is_gpr(a, 1) && is_gpr(b, 1))
        return cmp_r1;
    if (is_gpr(a, 1) && b->kind == ES_OPK_IMM)
        return cmp_i1;
    if (!mem64(d, a))
        return NULL;
    if (b->kind == ES_OPK_IMM)
        return a->size == 1 ? cmp_mi1 : a->size == 4 ? cmp_mi4 : a->size == 8 ? cmp_mi8 : NULL;
    if (is_gpr(b, a->size))
        return a->size == 1 ? cmp_mr1 : a->size == 4 ? cmp_mr4 : a->size == 8 ? cmp_mr8 : NULL;
    return NULL;
}

static es_handler pick_mov(const es_insn *d)
{
    static const es_handler rr[9] = {[1] = mov_rr1, [2] = mov_rr2, [4] = mov_rr4, [8] = mov_rr8};
    static const es_handler ri[9] = {[1] = mov_ri1, [2] = mov_ri2, [4] = mov_ri4, [8] = mov_ri8};
    static const es_handler ld[9] = {[1] = mov_load1, [2] = mov_load2, [4] = mov_load4,
                                     [8] = mov_load8};
    static const es_handler sr[9] = {[1] = mov_store_r1, [2] = mov_store_r2, [4] = mov_store_r4,
                                     [8] = mov_store_r8};
    static const es_handler si[9] = {[1] = mov_store_i1, [2] = mov_store_i2, [4] = mov_store_i4,
                                     [8] = mov_store_i8};
    const es_operand *a = &d->o[0], *b = &d->o[1];
    unsigned sz = a->size;
    if (sz == 0 || sz > 8 || (sz & (sz - 1)))
        return NULL;
    if (is_gpr(a, sz)) {
        if (is_gpr(b, sz))
            return rr[sz];
        if (b->kind == ES_OPK_IMM)
            return ri[sz];
        return mem64(d, b) && b->size == sz ? ld[sz] : NULL;
    }
    if (!mem64(d, a))
        return NULL;
    if (is_gpr(b, sz))
        return sr[sz];
    return b->kind == ES_OPK_IMM ? si[sz] : NULL;
}

/* A Jcc whose target needs no run-time check: canonical in 64-bit mode,
 * within the operand size otherwise (near_target in branch.c). */
static es_handler pick_jcc(const es_insn *d)
{
    uint64_t t = (uint64_t)d->o[0].imm;
    if (d->o[0].kind != ES_OPK_REL)
        return NULL;
    bool ok = d->mode == ES_MODE_64 ? (uint64_t)((int64_t)(t << 16) >> 16) == t
                                    : (t & es_mask(d->osize)) == t;
    return ok ? jcc_fast[d->opcode & 0xf] : NULL;
}

/* MOVZX, MOVSX, MOVSXD into a 32/64-bit register (EXT above). */
static es_handler pick_ext(const es_insn *d)
{
    static const es_handler zx[2][2] = {{movzx_r1, movzx_r2}, {movzx_m1, movzx_m2}};
    static const es_handler sx[2][2][3] = {
        {{movsx_r1_4, movsx_r2_4, movsx_r4_4}, {movsx_m1_4, movsx_m2_4, movsx_m4_4}},
        {{movsx_r1_8, movsx_r2_8, movsx_r4_8}, {movsx_m1_8, movsx_m2_8, movsx_m4_8}},
    };
    const es_operand *a = &d->o[0], *b = &d->o[1];
    if (d->nops != 2 || (a->size != 4 && a->size != 8) || !is_gpr(a, a->size))
        return NULL;
    bool mem = mem64(d, b);
    if (!mem && !(b->kind == ES_OPK_GPR && b->reg < 16))
        return NULL;
    unsigned s = b->size;
    if (d->op == ES_OP_MOVZX)
        return s == 1 || s == 2 ? zx[mem][s == 2] : NULL;
    if (s != 1 && s != 2 && s != 4)
        return NULL;
    return sx[a->size == 8][mem][s == 1 ? 0 : s == 2 ? 1 : 2];
}

/* A relative target needing no run-time check in 64-bit mode. */
static bool rel_canonical(const es_insn *d)
{
    return d->o[0].kind == ES_OPK_REL && d->mode == ES_MODE_64 && d->osize == 8 &&
           canonical64((uint64_t)d->o[0].imm);
}

/* PUSH/POP of a 64-bit register or immediate, CALL/JMP rel, RET: 64-bit
 * mode with the default 64-bit operand size only. */
static es_handler pick_stack(const es_insn *d)
{
    const es_operand *o = &d->o[0];
    bool m64 = d->mode == ES_MODE_64 && d->osize == 8;
    switch (d->op) {
    case ES_OP_PUSH:
        if (m64 && o->kind == ES_OPK_GPR && o->size == 8 && o->reg < 16)
            return push_r8;
        return m64 && o->kind == ES_OPK_IMM ? push_i8 : NULL;
    case ES_OP_POP:
        return m64 && o->kind == ES_OPK_GPR && o->size == 8 && o->reg < 16 ? pop_r8 : NULL;
    case ES_OP_JMP: return rel_canonical(d) ? jmp_rel : NULL;
    case ES_OP_CALL: return rel_canonical(d) ? call_rel : NULL;
    case ES_OP_RET: return m64 && d->nops == 0 && d->opcode == 0xc3 ? ret_near : NULL;
    default: return NULL;
    }
}

es_handler es_fast_handler(const es_insn *d, es_handler generic)
{
    es_handler h = NULL;
    /* only in place of the handler isa.tbl names (never over one a test
     * or a tool installed) */
    if (generic != es_dispatch_table()[d->op] || (d->pfx & ES_PFX_LOCK) ||
        (d->nops < 1 && d->op != ES_OP_RET))
        return generic;
    switch (d->op) {
    case ES_OP_JB: case ES_OP_JBE: case ES_OP_JL: case ES_OP_JLE: case ES_OP_JNB:
    case ES_OP_JNBE: case ES_OP_JNL: case ES_OP_JNLE: case ES_OP_JNO: case ES_OP_JNP:
    case ES_OP_JNS: case ES_OP_JNZ: case ES_OP_JO: case ES_OP_JP: case ES_OP_JS: case ES_OP_JZ:
        h = generic == op_jcc ? pick_jcc(d) : NULL;
        break;
    case ES_OP_ADD: h = pick_alu(d, add_fast); break;
    case ES_OP_SUB: h = pick_alu(d, sub_fast); break;
    case ES_OP_AND: h = pick_alu(d, and_fast); break;
    case ES_OP_OR: h = pick_alu(d, or_fast); break;
    case ES_OP_XOR: h = pick_alu(d, xor_fast); break;
    case ES_OP_TEST: h = pick_alu(d, test_fast); break;
    case ES_OP_CMP: h = pick_alu(d, cmp_fast); if (!h) h = pick_cmp_mem(d); break;
    case ES_OP_MOV: h = pick_mov(d); break;
    case ES_OP_PUSH: case ES_OP_POP: case ES_OP_JMP: case ES_OP_CALL: case ES_OP_RET:
        h = pick_stack(d);
        break;
    case ES_OP_MOVZX: case ES_OP_MOVSX: case ES_OP_MOVSXD: h = pick_ext(d); break;
    case ES_OP_SBB:
        if ((d->o[0].size == 4 || d->o[0].size == 8) && is_gpr(&d->o[0], d->o[0].size) &&
            is_gpr(&d->o[1], d->o[0].size) && d->o[0].reg == d->o[1].reg)
            h = d->o[0].size == 8 ? sbb_self8 : sbb_self4;
        break;
    default: break;
    }
    return h ? h : generic;
}
