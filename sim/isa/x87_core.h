/* x87_core.h - the x87 family's internals, shared by x87.c (the
 * instructions) and x87_core.c: the host x87 bracket every rounding
 * operation runs in, the guest register stack and status helpers, and the
 * environment image.  Not for other families (they use x87.h). */
#ifndef ENTRYSIM_X87_CORE_H
#define ENTRYSIM_X87_CORE_H

#include "x87.h"

/* ---------------------------------------------------------------------
 * The host x87 unit
 * ------------------------------------------------------------------- */

/* Each block loads the guest FCW, runs the body and puts the host FCW
 * back; the body stores the host FSW right after the operation (later
 * FSTPs change C1).  FNCLEX costs more than the operation itself, so it is
 * avoided: the host's sticky exception flags may stay set between blocks
 * as long as every one of them is also set in the guest FSW (OR-ing them
 * in again changes nothing), and the FCW is reloaded only when it differs
 * from the host's.  hx_setup decides, the block tests h.f:
 *   bit 0: FNCLEX first (a stale host flag the guest does not have);
 *   bit 1: FLDCW the guest FCW, and the host's back at the end;
 *   bit 2: the guest unmasks some exception: FNCLEX right after FNSTSW too,
 *          so the pending exception never reaches a waiting host
 *          instruction (and the next block starts clean).
 * An unmasked flag never stays set on the host: with bit 2 it is cleared,
 * and loading such an FCW onto a dirty status word is avoided by bit 0. */
#define HX_PRE                                                                                     \
    "testb $1, %[f]\n\tjz 8f\n\tfnclex\n8:\n\t"                                                    \
    "testb $2, %[f]\n\tjz 7f\n\tfldcw %[cw]\n7:\n\t"
#define HX_POST "\n\ttestb $2, %[f]\n\tjz 6f\n\tfldcw %[sv]\n6:"
#define HX_CLEAR "testb $4, %[f]\n\tjz 5f\n\tfnclex\n5:\n\t"
#define HX_IN(h) [cw] "m"(h.cw), [sv] "m"(h.sv), [f] "m"(h.f)
#define HX_CLOB "st", "st(1)", "st(2)", "st(3)", "st(4)", "st(5)", "st(6)", "st(7)", "cc"

typedef struct hx {
    uint16_t cw; /* FCW to run the operation with */
    uint16_t sv; /* host FCW */
    uint16_t sw; /* host FSW after the operation */
    uint8_t f;   /* what the block must do (above) */
} hx;

static inline hx hx_setup(const es_machine *m, uint16_t cw)
{
    hx h;
    uint16_t hsw;
    __asm__ volatile("fnstcw %0\n\tfnstsw %1" : "=m"(h.sv), "=m"(hsw));
    h.cw = cw;
    h.sw = 0;
    int unmasked = (cw & ES_FSW_EXC) != ES_FSW_EXC;
    h.f = (uint8_t)(((unmasked || (hsw & ES_FSW_EXC & ~m->fpu.fsw)) ? 1 : 0) |
                    (h.sv != cw ? 2 : 0) | (unmasked ? 4 : 0));
    return h;
}

/* All exceptions masked on the host: the default. */
static inline hx hx_begin(const es_machine *m)
{
    return hx_setup(m, (uint16_t)(m->fpu.fcw | ES_FSW_EXC));
}

/* For the blocks that neither push nor pop on the host (HX_BIN, HX_MEM,
 * HX_UN) the guest's own exception masks are used: the host then does
 * exactly what the guest's FPU would, including the unmasked-overflow and
 * -underflow results with their exponent biased by 24576 (SDM Vol. 1,
 * 4.9.1.4-4.9.1.5) and an unchanged st(0) for an unmasked invalid,
 * denormal or zero-divide. */
static inline hx hx_exact(const es_machine *m)
{
    return hx_setup(m, m->fpu.fcw);
}

/* The two-register blocks: a in st(0), b in st(1), result from st(0);
 * `tail` is what follows fnstsw (clearing the exceptions, and dropping
 * st(1) when the instruction does not pop it itself). */
#define HX_BIN2(h, insn, a, b, r, tail)                                                            \
    __asm__ volatile(HX_PRE "fldt %[B]\n\tfldt %[A]\n\t" insn "\n\tfnstsw %[sw]\n\t" tail HX_POST \
                     : [sw] "=m"(h.sw), [R] "=m"(*(r))                                             \
                     : HX_IN(h), [A] "m"(*(a)), [B] "m"(*(b))                                      \
                     : HX_CLOB)

/* r = a OP b; the register form never has the AT&T operand-order trap
 * because the destination is st(0). */
#define HX_BIN(h, insn, a, b, r) HX_BIN2(h, insn, a, b, r, HX_CLEAR "fstpt %[R]\n\tfstp %%st(0)")

/* r = f(a, b) where the instruction pops. */
#define HX_BINPOP(h, insn, a, b, r) HX_BIN2(h, insn, a, b, r, "fstpt %[R]")

/* r = a OP memory operand. */
#define HX_MEM(h, insn, a, mp, r)                                                                  \
    __asm__ volatile(HX_PRE "fldt %[A]\n\t" insn " %[M]\n\tfnstsw %[sw]\n\t" HX_CLEAR              \
                            "fstpt %[R]" HX_POST                                                   \
                     : [sw] "=m"(h.sw), [R] "=m"(*(r))                                             \
                     : HX_IN(h), [A] "m"(*(a)), [M] "m"(*(mp))                                     \
                     : HX_CLOB)

/* r = OP(a) in place on st(0). */
#define HX_UN(h, insn, a, r)                                                                       \
    __asm__ volatile(HX_PRE "fldt %[A]\n\t" insn "\n\tfnstsw %[sw]\n\t" HX_CLEAR                   \
                            "fstpt %[R]" HX_POST                                                   \
                     : [sw] "=m"(h.sw), [R] "=m"(*(r))                                             \
                     : HX_IN(h), [A] "m"(*(a))                                                     \
                     : HX_CLOB)

/* Pushes a value from memory (FLD m32/m64, FBLD) or a constant. */
#define HX_LD(h, insn, mp, r)                                                                      \
    __asm__ volatile(HX_PRE insn " %[M]\n\tfnstsw %[sw]\n\tfstpt %[R]" HX_POST                     \
                     : [sw] "=m"(h.sw), [R] "=m"(*(r))                                             \
                     : HX_IN(h), [M] "m"(*(mp))                                                    \
                     : HX_CLOB)
#define HX_CONST(h, insn, r)                                                                       \
    __asm__ volatile(HX_PRE insn "\n\tfnstsw %[sw]\n\tfstpt %[R]" HX_POST                          \
                     : [sw] "=m"(h.sw), [R] "=m"(*(r))                                             \
                     : HX_IN(h)                                                                    \
                     : HX_CLOB)

/* Stores st(0) = a to memory with a popping store instruction. */
#define HX_ST(h, insn, a, mp)                                                                      \
    __asm__ volatile(HX_PRE "fldt %[A]\n\t" insn " %[M]\n\tfnstsw %[sw]" HX_POST                   \
                     : [sw] "=m"(h.sw), [M] "=m"(*(mp))                                            \
                     : HX_IN(h), [A] "m"(*(a))                                                     \
                     : HX_CLOB)

/* Only the status: comparisons, FTST, FXAM. */
#define HX_CMP2(h, insn, a, b)                                                                     \
    __asm__ volatile(HX_PRE "fldt %[B]\n\tfldt %[A]\n\t" insn "\n\tfnstsw %[sw]" HX_POST           \
                     : [sw] "=m"(h.sw)                                                             \
                     : HX_IN(h), [A] "m"(*(a)), [B] "m"(*(b))                                      \
                     : HX_CLOB)
#define HX_CMPM(h, insn, a, mp)                                                                    \
    __asm__ volatile(HX_PRE "fldt %[A]\n\t" insn " %[M]\n\tfnstsw %[sw]\n\tfstp %%st(0)" HX_POST   \
                     : [sw] "=m"(h.sw)                                                             \
                     : HX_IN(h), [A] "m"(*(a)), [M] "m"(*(mp))                                     \
                     : HX_CLOB)
#define HX_CMP1(h, insn, a)                                                                        \
    __asm__ volatile(HX_PRE "fldt %[A]\n\t" insn "\n\tfnstsw %[sw]\n\tfstp %%st(0)" HX_POST        \
                     : [sw] "=m"(h.sw)                                                             \
                     : HX_IN(h), [A] "m"(*(a))                                                     \
                     : HX_CLOB)

/* Two results: r0 replaces st(0), r1 is pushed.  FPTAN and FSINCOS push
 * only when C2 = 0 (C2 = 1: operand out of range, st(0) unchanged), so the
 * block tests C2 to keep the host stack balanced; FXTRACT always pushes
 * (its C2 is undefined, so it must not be tested). */
#define HX_TWO(h, insn, a, r0, r1)                                                                 \
    __asm__ volatile(HX_PRE "fldt %[A]\n\t" insn "\n\tfnstsw %%ax\n\tmovw %%ax, %[sw]\n\t"         \
                            "testb $4, %%ah\n\tjnz 1f\n\tfstpt %[R1]\n1:\n\tfstpt %[R0]" HX_POST   \
                     : [sw] "=m"(h.sw), [R0] "=m"(*(r0)), [R1] "=m"(*(r1))                         \
                     : HX_IN(h), [A] "m"(*(a))                                                     \
                     : "ax", HX_CLOB)
#define HX_XTRACT(h, a, r0, r1)                                                                    \
    __asm__ volatile(HX_PRE "fldt %[A]\n\tfxtract\n\tfnstsw %[sw]\n\t"                             \
                            "fstpt %[R1]\n\tfstpt %[R0]" HX_POST                                   \
                     : [sw] "=m"(h.sw), [R0] "=m"(*(r0)), [R1] "=m"(*(r1))                         \
                     : HX_IN(h), [A] "m"(*(a))                                                     \
                     : HX_CLOB)

/* ---------------------------------------------------------------------
 * Register stack and status
 * ------------------------------------------------------------------- */

#define PHYS(m, i) (((m)->fpu.top + (i)) & 7)
#define ST(m, i) ((m)->fpu.fpr[PHYS(m, i)])

static const es_f80 k_indefinite = {.p = {0xc000000000000000ull, 0xffff}};

/* Values are built and copied as integers, not through long double: an
 * x87 load/store pair is slow, and integer reads of an 80-bit x87 store
 * stall on store forwarding. */
static inline es_f80 f80(uint64_t mant, uint16_t se)
{
    es_f80 f = {.b = {0}};
    f.p.mant = mant;
    f.p.se = se;
    return f;
}

static inline es_f80 st_get(const es_machine *m, unsigned i)
{
    es_f80 f;
    memcpy(&f, &m->fpu.fpr[PHYS(m, i)], sizeof f);
    return f;
}

/* FILD: every 16/32/64-bit integer is exact in a 64-bit significand. */
static inline es_f80 f80_from_int(int64_t v)
{
    if (v == 0)
        return f80(0, 0);
    uint16_t sign = v < 0 ? 0x8000 : 0;
    uint64_t a = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    int lz = __builtin_clzll(a);
    return f80(a << lz, (uint16_t)(sign | (0x3fff + 63 - lz)));
}

/* FLD m32/m64 of a normal number or a zero (exact, no exception). */
static inline es_f80 f80_from_f32(uint32_t u)
{
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
    unsigned e = (u >> 23) & 0xff;
    if (e == 0)
        return f80(0, sign);
    return f80((1ull << 63) | ((uint64_t)(u & 0x7fffff) << 40),
               (uint16_t)(sign | (e - 127 + 16383)));
}

static inline es_f80 f80_from_f64(uint64_t v)
{
    uint16_t sign = (uint16_t)((v >> 48) & 0x8000);
    unsigned e = (v >> 52) & 0x7ff;
    if (e == 0)
        return f80(0, sign);
    return f80((1ull << 63) | ((v & 0xfffffffffffffull) << 11),
               (uint16_t)(sign | (e - 1023 + 16383)));
}

static inline int st_empty(const es_machine *m, unsigned i)
{
    return ((m->fpu.ftw >> (2 * PHYS(m, i))) & 3) == 3;
}

static inline void st_set(es_machine *m, unsigned i, const long double *v)
{
    unsigned p = PHYS(m, i);
    memcpy(&m->fpu.fpr[p], v, sizeof(long double));
    m->fpu.ftw = (uint16_t)((m->fpu.ftw & ~(3u << (2 * p))) | (es_x87_tag_of(v) << (2 * p)));
}

static inline void st_set_indef(es_machine *m, unsigned i)
{
    st_set(m, i, &k_indefinite.v);
}

static inline void fpu_pop(es_machine *m)
{
    m->fpu.ftw |= (uint16_t)(3u << (2 * m->fpu.top));
    m->fpu.top = (m->fpu.top + 1) & 7;
}

static inline void fpu_push(es_machine *m, const long double *v)
{
    m->fpu.top = (m->fpu.top - 1) & 7;
    st_set(m, 0, v);
}

/* A push finds st(7) in use: stack overflow. */
static inline int push_full(const es_machine *m)
{
    return st_empty(m, 7) == 0;
}

/* Records a stack fault (SDM Vol. 1, 8.5.1.1): IE and SF, C1 = 1 for
 * overflow, 0 for underflow.  Returns 1 when IE is masked and the caller
 * writes the QNaN indefinite; 0 when the exception is pending and nothing
 * else may change. */
int es_x87_stack_fault(es_machine *m, int overflow);


/* Merges the host status of an operation: the exception flags, and the
 * condition bits in `cc` from the host; when an unmasked exception in
 * `block` stops the instruction, only those flags (x87_core.c says how).
 * Returns 1 when results may be written. */
int es_x87_merge_status_blk(es_machine *m, uint16_t hsw, uint16_t cc, unsigned block);


static inline int merge_status(es_machine *m, uint16_t hsw, uint16_t cc)
{
    return es_x87_merge_status_blk(m, hsw, cc, ES_FSW_IE | ES_FSW_DE | ES_FSW_ZE);
}

static inline void set_cc(es_machine *m, uint16_t clear, uint16_t set)
{
    m->fpu.fsw = (uint16_t)((m->fpu.fsw & ~clear) | set);
}

/* Checks every x87 instruction makes first: #NM, then (for waiting
 * instructions) a pending unmasked exception becomes #MF here. */
static inline int fpu_nm(es_machine *m)
{
    if (m->cr0 & (ES_CR0_EM | ES_CR0_TS))
        return es_raise(m, ES_VEC_NM, 0);
    return 0;
}

static inline int fpu_wait(es_machine *m)
{
    if (m->cr0 & (ES_CR0_EM | ES_CR0_TS))
        return es_raise(m, ES_VEC_NM, 0);
    if (m->fpu.fsw & ES_FSW_ES)
        return es_raise(m, ES_VEC_MF, 0);
    return 0;
}

static inline const es_operand *mem_operand(const es_insn *d)
{
    for (int i = 0; i < d->nops; i++)
        if (d->o[i].kind == ES_OPK_MEM)
            return &d->o[i];
    return NULL;
}

/* Last-instruction pointers (SDM Vol. 1, 8.1.8-8.1.9), updated by every
 * non-control instruction that completes. */
static inline void note(es_machine *m, const es_insn *d, const es_operand *mo)
{
    m->fpu.fop = (uint16_t)(((d->opcode & 7) << 8) | d->modrm);
    m->fpu.fip = m->rip;
    m->fpu.fcs = m->seg[ES_SEG_CS].sel;
    if (mo) {
        m->fpu.fdp = es_ea(m, d, mo);
        m->fpu.fds = m->seg[mo->seg].sel;
    }
}

static inline int is_mem(const es_insn *d)
{
    return d->modrm < 0xc0;
}

/* ---------------------------------------------------------------------
 * The environment image (x87_core.c)
 * ------------------------------------------------------------------- */

/* Writes the FNSTENV image (14 bytes with o16, else 28) to b; returns its
 * length. */
unsigned es_x87_env_image(const es_machine *m, int o16, uint8_t *b);
/* Loads an environment image; the register contents must already be in
 * place (FRSTOR) since the tags are recomputed from them. */
void es_x87_env_load(es_machine *m, int o16, const uint8_t *b);

#endif
