/* x87.c - the x87 FPU: loads and stores in every format, arithmetic,
 * comparisons, transcendental functions, control and environment
 * instructions, in 64-bit and 32-bit mode.
 *
 * How results are computed: every operation that can round or raise an
 * exception runs on the host's own x87 unit (this file requires an x86
 * host; long double is the 80-bit format), inside one asm block that loads
 * the guest's FCW (with all exceptions masked, or the guest's own masks
 * where the host stack discipline allows), executes the very instruction
 * the guest executed on the guest's operands, reads the host FSW, and puts
 * the host FCW back.  This is more faithful than libm plus fesetround: the
 * rounding control, precision control (24/53/64-bit significands), NaN
 * propagation, denormal and unsupported-format handling, the C1 "rounded
 * up" bit and the exception flags are those of real hardware bit for bit.
 * Exact operations (loads of normal numbers, FILD, FLD1/FLDZ, FXCH, FCHS,
 * FABS, FCMOV, register copies) are done with integer code.  The
 * transcendental instructions (FSIN, FCOS, FSINCOS, FPTAN, FPATAN, F2XM1,
 * FYL2X, FYL2XP1) give the host CPU's answers: exact for this AMD Zen
 * host, but the last ulp may differ from Intel parts, so differential
 * tests against other hardware must not compare them bit for bit.
 *
 * What the host cannot see, this file models: the guest register stack,
 * tags, stack overflow/underflow (IE+SF, C1 = 1 on overflow; with IM
 * masked the QNaN indefinite is written as hardware does, measured on the
 * host), and exception delivery.  An unmasked exception sets FSW.ES and B
 * and is reported as #MF by the next waiting x87 instruction (SDM Vol. 1,
 * 8.6), which is the hardware rule; CR0.NE is assumed set (Linux sets it).
 * With an unmasked invalid, denormal or divide-by-zero exception the
 * destination and the stack are left unchanged (SDM Vol. 1, 8.5).  With
 * an unmasked overflow or underflow into a register, hardware stores the
 * result with its exponent biased by 24576: the arithmetic, FSQRT,
 * FRNDINT, FSCALE, FPREM(1), F2XM1, FSIN and FCOS get that from the host
 * (see hx_exact); FYL2X, FYL2XP1, FPATAN, FPTAN, FSINCOS and FXTRACT store
 * the masked result instead (documented limitation; Linux runs with all
 * exceptions masked).  Unmasked overflow, underflow or invalid on a store
 * to memory leave memory and the stack unchanged.
 *
 * Condition codes the SDM calls undefined follow the host (AMD Zen 4),
 * found by comparing random instruction sequences with it
 * (tests/test_x87.cc) and by tests/diff's x87 family.
 *
 * CR0.EM or CR0.TS give #NM for every x87 instruction (FWAIT: only when
 * CR0.MP and CR0.TS are both set).
 */
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

/* r = a OP b with a in st(0), b in st(1); the register form never has
 * the AT&T operand-order trap because the destination is st(0). */
#define HX_BIN(h, insn, a, b, r)                                                                   \
    __asm__ volatile(HX_PRE "fldt %[B]\n\tfldt %[A]\n\t" insn "\n\tfnstsw %[sw]\n\t" HX_CLEAR      \
                            "fstpt %[R]\n\tfstp %%st(0)" HX_POST                                   \
                     : [sw] "=m"(h.sw), [R] "=m"(*(r))                                             \
                     : HX_IN(h), [A] "m"(*(a)), [B] "m"(*(b))                                      \
                     : HX_CLOB)

/* r = f(a, b) where the instruction pops: a in st(0), b in st(1). */
#define HX_BINPOP(h, insn, a, b, r)                                                                \
    __asm__ volatile(HX_PRE "fldt %[B]\n\tfldt %[A]\n\t" insn "\n\tfnstsw %[sw]\n\t"               \
                            "fstpt %[R]" HX_POST                                                   \
                     : [sw] "=m"(h.sw), [R] "=m"(*(r))                                             \
                     : HX_IN(h), [A] "m"(*(a)), [B] "m"(*(b))                                      \
                     : HX_CLOB)

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

/* The instruction in flight (its pointers already noted) incurred an
 * unmasked exception: Intel's saved FOP/FDP/FDS become its own
 * (es_x87_saved_ptrs). */
static inline void latch_unmasked(es_machine *m)
{
    m->fpu.fop_x = m->fpu.fop;
    m->fpu.fdp_x = m->fpu.fdp;
    m->fpu.fds_x = m->fpu.fds;
}

/* Records a stack fault (SDM Vol. 1, 8.5.1.1): IE and SF, C1 = 1 for
 * overflow, 0 for underflow.  Returns 1 when IE is masked and the caller
 * writes the QNaN indefinite; 0 when the exception is pending and nothing
 * else may change. */
static int stack_fault(es_machine *m, int overflow)
{
    uint16_t fsw = (uint16_t)(m->fpu.fsw | ES_FSW_IE | ES_FSW_SF);
    fsw = overflow ? (uint16_t)(fsw | ES_FSW_C1) : (uint16_t)(fsw & ~ES_FSW_C1);
    if (!(m->fpu.fcw & ES_FSW_IE)) {
        fsw |= ES_FSW_ES | ES_FSW_B;
        latch_unmasked(m);
    }
    m->fpu.fsw = fsw;
    return (m->fpu.fcw & ES_FSW_IE) != 0;
}

/* Merges the host status of an operation: the exception flags, and the
 * condition bits in `cc` from the host.  When an unmasked exception in
 * `block` (normally the pre-computation ones: invalid, denormal,
 * zero-divide) stops the instruction, the operation never happened: its
 * post-computation flags (overflow, underflow, precision) are dropped --
 * the host unit may have computed it with every exception masked -- and
 * of the condition bits C1 and C2 are cleared, the others kept (host).
 * Returns 1 when results may be written. */
static int merge_status_blk(es_machine *m, uint16_t hsw, uint16_t cc, unsigned block)
{
    unsigned exc = hsw & ES_FSW_EXC;
    unsigned unmasked = exc & ~m->fpu.fcw & ES_FSW_EXC;
    int go = !(unmasked & block);
    uint16_t fsw = m->fpu.fsw;
    if (go) {
        fsw = (uint16_t)((fsw & ~cc) | (hsw & cc));
    } else {
        exc &= block;
        unmasked &= block;
        fsw &= (uint16_t)~(cc & (ES_FSW_C1 | ES_FSW_C2));
    }
    fsw |= (uint16_t)exc;
    if (unmasked) {
        fsw |= ES_FSW_ES | ES_FSW_B;
        latch_unmasked(m);
    }
    m->fpu.fsw = fsw;
    return go;
}

static inline int merge_status(es_machine *m, uint16_t hsw, uint16_t cc)
{
    return merge_status_blk(m, hsw, cc, ES_FSW_IE | ES_FSW_DE | ES_FSW_ZE);
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
 * Arithmetic: FADD FMUL FSUB FSUBR FDIV FDIVR, popping and integer forms
 * ------------------------------------------------------------------- */

enum { K_ADD = 0, K_MUL = 1, K_SUB = 4, K_SUBR = 5, K_DIV = 6, K_DIVR = 7 };

/* r = x OP y for the register forms (the reversed ones swap operands). */
static uint16_t arith_reg(const es_machine *m, int k, const long double *x, const long double *y,
                          long double *r)
{
    hx h = hx_exact(m);
    switch (k) {
    case K_ADD: HX_BIN(h, "fadd %%st(1), %%st", x, y, r); break;
    case K_MUL: HX_BIN(h, "fmul %%st(1), %%st", x, y, r); break;
    case K_SUB: HX_BIN(h, "fsub %%st(1), %%st", x, y, r); break;
    case K_SUBR: HX_BIN(h, "fsub %%st(1), %%st", y, x, r); break;
    case K_DIV: HX_BIN(h, "fdiv %%st(1), %%st", x, y, r); break;
    default: HX_BIN(h, "fdiv %%st(1), %%st", y, x, r); break;
    }
    return h.sw;
}

/* Memory floating-point forms run as the memory instruction itself: a
 * QNaN in st(0) with an SNaN in memory must return st(0)'s NaN (SDM Vol.
 * 1, Table 4-7), which converting the operand first would not. */
static uint16_t arith_m32(const es_machine *m, int k, const long double *x, const float *f,
                          long double *r)
{
    hx h = hx_exact(m);
    switch (k) {
    case K_ADD: HX_MEM(h, "fadds", x, f, r); break;
    case K_MUL: HX_MEM(h, "fmuls", x, f, r); break;
    case K_SUB: HX_MEM(h, "fsubs", x, f, r); break;
    case K_SUBR: HX_MEM(h, "fsubrs", x, f, r); break;
    case K_DIV: HX_MEM(h, "fdivs", x, f, r); break;
    default: HX_MEM(h, "fdivrs", x, f, r); break;
    }
    return h.sw;
}

static uint16_t arith_m64(const es_machine *m, int k, const long double *x, const double *f,
                          long double *r)
{
    hx h = hx_exact(m);
    switch (k) {
    case K_ADD: HX_MEM(h, "faddl", x, f, r); break;
    case K_MUL: HX_MEM(h, "fmull", x, f, r); break;
    case K_SUB: HX_MEM(h, "fsubl", x, f, r); break;
    case K_SUBR: HX_MEM(h, "fsubrl", x, f, r); break;
    case K_DIV: HX_MEM(h, "fdivl", x, f, r); break;
    default: HX_MEM(h, "fdivrl", x, f, r); break;
    }
    return h.sw;
}

/* D8 (st0 op m32 / st0 op st(i)), DA (m32int), DC (m64 / st(i) op st0),
 * DE (m16int / st(i) op st0 and pop). */
int op_arith(es_machine *m, const es_insn *d)
{
    TRY(fpu_wait(m));
    unsigned esc = d->opcode & 7;
    int k = (d->modrm >> 3) & 7;
    long double r;
    if (is_mem(d)) {
        const es_operand *mo = mem_operand(d);
        uint64_t v;
        TRY(es_load(m, es_lin(m, d, mo), (esc == 0 || esc == 2) ? 4 : esc == 4 ? 8 : 2, &v));
        note(m, d, mo);
        if (st_empty(m, 0)) {
            if (stack_fault(m, 0))
                st_set_indef(m, 0);
            return ES_OK;
        }
        uint16_t sw;
        if (esc == 0) {
            float f;
            uint32_t u = (uint32_t)v;
            memcpy(&f, &u, 4);
            sw = arith_m32(m, k, &ST(m, 0), &f, &r);
        } else if (esc == 4) {
            double f;
            memcpy(&f, &v, 8);
            sw = arith_m64(m, k, &ST(m, 0), &f, &r);
        } else {
            /* integers convert exactly: the register form gives the same */
            es_f80 y = f80_from_int(esc == 2 ? (int32_t)v : (int16_t)v);
            sw = arith_reg(m, k, &ST(m, 0), &y.v, &r);
        }
        if (merge_status(m, sw, ES_FSW_C1))
            st_set(m, 0, &r);
        return ES_OK;
    }
    unsigned i = d->modrm & 7, dst = 0, src = i;
    int pop = esc == 6;
    if (esc != 0) {
        /* DC/DE register forms write st(i); their SUB/SUBR and DIV/DIVR
         * encodings are swapped relative to D8 (SDM Vol. 2, FSUB/FSUBR) */
        dst = i;
        src = 0;
        if (k >= 4)
            k ^= 1;
    }
    note(m, d, NULL);
    if (st_empty(m, dst) || st_empty(m, src)) {
        if (!stack_fault(m, 0))
            return ES_OK;
        st_set_indef(m, dst);
    } else {
        uint16_t sw = arith_reg(m, k, &ST(m, dst), &ST(m, src), &r);
        if (!merge_status(m, sw, ES_FSW_C1))
            return ES_OK;
        st_set(m, dst, &r);
    }
    if (pop)
        fpu_pop(m);
    return ES_OK;
}

/* ---------------------------------------------------------------------
 * Loads
 * ------------------------------------------------------------------- */

/* Pushes *v, or the indefinite on overflow (masked). */
static void push_checked(es_machine *m, const long double *v)
{
    if (push_full(m)) {
        if (stack_fault(m, 1))
            fpu_push(m, &k_indefinite.v);
        return;
    }
    fpu_push(m, v);
}

int op_fld(es_machine *m, const es_insn *d)
{
    TRY(fpu_wait(m));
    long double r;
    if (!is_mem(d)) {
        /* FLD st(i): the source is read before the push, so an empty
         * source is reported as underflow even when the stack is also
         * full (host) */
        unsigned i = d->modrm & 7;
        note(m, d, NULL);
        if (st_empty(m, i) || push_full(m)) {
            if (stack_fault(m, !st_empty(m, i)))
                fpu_push(m, &k_indefinite.v);
            return ES_OK;
        }
        es_f80 f = st_get(m, i);
        set_cc(m, ES_FSW_C1, 0);
        fpu_push(m, &f.v);
        return ES_OK;
    }
    const es_operand *mo = mem_operand(d);
    uint64_t lin = es_lin(m, d, mo);
    if (mo->size == 10) {
        uint8_t b[10];
        TRY(es_read(m, lin, b, 10));
        note(m, d, mo);
        es_f80 f;
        memset(&f, 0, sizeof f);
        memcpy(f.b, b, 10);
        set_cc(m, ES_FSW_C1, 0);
        push_checked(m, &f.v);
        return ES_OK;
    }
    uint64_t v;
    TRY(es_load(m, lin, mo->size, &v));
    note(m, d, mo);
    if (push_full(m)) {
        if (stack_fault(m, 1))
            fpu_push(m, &k_indefinite.v);
        return ES_OK;
    }
    /* normal numbers and zeros convert exactly and raise nothing: no
     * need for the host unit (SNaN, denormal, inf and NaN go through it) */
    if (mo->size == 4) {
        float f;
        uint32_t u = (uint32_t)v;
        memcpy(&f, &u, 4);
        unsigned e = (u >> 23) & 0xff;
        if ((e != 0 && e != 0xff) || (u << 1) == 0) {
            es_f80 x = f80_from_f32(u);
            set_cc(m, ES_FSW_C1, 0);
            fpu_push(m, &x.v);
            return ES_OK;
        }
        hx h = hx_begin(m);
        HX_LD(h, "flds", &f, &r);
        if (merge_status_blk(m, h.sw, ES_FSW_C1, ES_FSW_IE))
            fpu_push(m, &r);
        return ES_OK;
    }
    double f;
    memcpy(&f, &v, 8);
    unsigned e = (v >> 52) & 0x7ff;
    if ((e != 0 && e != 0x7ff) || (v << 1) == 0) {
        es_f80 x = f80_from_f64(v);
        set_cc(m, ES_FSW_C1, 0);
        fpu_push(m, &x.v);
        return ES_OK;
    }
    hx h = hx_begin(m);
    HX_LD(h, "fldl", &f, &r);
    /* an unmasked denormal-operand exception does not stop the load
     * (measured on the host); an unmasked invalid (SNaN) does */
    if (merge_status_blk(m, h.sw, ES_FSW_C1, ES_FSW_IE))
        fpu_push(m, &r);
    return ES_OK;
}

int op_fild(es_machine *m, const es_insn *d)
{
    TRY(fpu_wait(m));
    const es_operand *mo = mem_operand(d);
    uint64_t v;
    TRY(es_load(m, es_lin(m, d, mo), mo->size, &v));
    note(m, d, mo);
    es_f80 r = f80_from_int(mo->size == 2   ? (int16_t)v
                            : mo->size == 4 ? (int32_t)v
                                            : (int64_t)v);
    set_cc(m, ES_FSW_C1, 0);
    push_checked(m, &r.v);
    return ES_OK;
}

int op_fbld(es_machine *m, const es_insn *d)
{
    TRY(fpu_wait(m));
    const es_operand *mo = mem_operand(d);
    uint8_t b[10];
    TRY(es_read(m, es_lin(m, d, mo), b, 10));
    note(m, d, mo);
    if (push_full(m)) {
        if (stack_fault(m, 1))
            fpu_push(m, &k_indefinite.v);
        return ES_OK;
    }
    long double r;
    hx h = hx_begin(m);
    HX_LD(h, "fbld", (const uint8_t(*)[10])b, &r);
    if (merge_status(m, h.sw, ES_FSW_C1))
        fpu_push(m, &r);
    return ES_OK;
}

/* FLD1 FLDZ FLDPI FLDL2E FLDL2T FLDLG2 FLDLN2: the irrational ones round
 * by FCW.RC, so they come from the host under the guest FCW. */
int op_fldconst(es_machine *m, const es_insn *d)
{
    TRY(fpu_wait(m));
    note(m, d, NULL);
    if (push_full(m)) {
        if (stack_fault(m, 1))
            fpu_push(m, &k_indefinite.v);
        return ES_OK;
    }
    long double r;
    if (d->modrm == 0xe8 || d->modrm == 0xee) {
        /* exact constants: no rounding, no flags */
        es_f80 c = d->modrm == 0xe8 ? f80(1ull << 63, 0x3fff) : f80(0, 0);
        set_cc(m, ES_FSW_C1, 0);
        fpu_push(m, &c.v);
        return ES_OK;
    }
    hx h = hx_begin(m);
    switch (d->modrm) {
    case 0xe8: HX_CONST(h, "fld1", &r); break;
    case 0xe9: HX_CONST(h, "fldl2t", &r); break;
    case 0xea: HX_CONST(h, "fldl2e", &r); break;
    case 0xeb: HX_CONST(h, "fldpi", &r); break;
    case 0xec: HX_CONST(h, "fldlg2", &r); break;
    case 0xed: HX_CONST(h, "fldln2", &r); break;
    default: HX_CONST(h, "fldz", &r); break;
    }
    merge_status(m, h.sw, ES_FSW_C1);
    fpu_push(m, &r);
    return ES_OK;
}

/* ---------------------------------------------------------------------
 * Stores
 * ------------------------------------------------------------------- */

static inline int is_pop_store(const es_insn *d)
{
    return d->op == ES_OP_FSTP || d->op == ES_OP_FISTP || d->op == ES_OP_FISTTP ||
           d->op == ES_OP_FBSTP || d->op == ES_OP_FSTPNCE;
}

/* FST/FSTP st(i) (DD D0+i, DD D8+i and the D9 D8+i / DF D0+i / DF D8+i
 * aliases). */
static int fst_reg(es_machine *m, const es_insn *d, int pop)
{
    unsigned i = d->modrm & 7;
    note(m, d, NULL);
    if (st_empty(m, 0)) {
        if (!stack_fault(m, 0))
            return ES_OK;
        st_set_indef(m, i);
    } else {
        es_f80 v = st_get(m, 0);
        st_set(m, i, &v.v);
        set_cc(m, ES_FSW_C1, 0);
    }
    if (pop)
        fpu_pop(m);
    return ES_OK;
}

/* Runs the host store of value *a into a temporary of `size` bytes with
 * the instruction of this op; returns the host status. */
static uint16_t store_conv(const es_machine *m, const es_insn *d, unsigned size,
                           const long double *a, uint8_t *out)
{
    hx h = hx_begin(m);
    if (d->op == ES_OP_FST || d->op == ES_OP_FSTP) {
        if (size == 4)
            HX_ST(h, "fstps", a, (float *)out);
        else
            HX_ST(h, "fstpl", a, (double *)out);
    } else if (d->op == ES_OP_FISTTP) {
        if (size == 2)
            HX_ST(h, "fisttps", a, (int16_t *)out);
        else if (size == 4)
            HX_ST(h, "fisttpl", a, (int32_t *)out);
        else
            HX_ST(h, "fisttpll", a, (int64_t *)out);
    } else if (d->op == ES_OP_FBSTP) {
        HX_ST(h, "fbstp", a, (uint8_t(*)[10])out);
    } else {
        if (size == 2)
            HX_ST(h, "fistps", a, (int16_t *)out);
        else if (size == 4)
            HX_ST(h, "fistpl", a, (int32_t *)out);
        else
            HX_ST(h, "fistpll", a, (int64_t *)out);
    }
    return h.sw;
}

/* FST FSTP FIST FISTP FISTTP FBSTP to memory. */
int op_store(es_machine *m, const es_insn *d)
{
    TRY(fpu_wait(m));
    int pop = is_pop_store(d);
    if (!is_mem(d))
        return fst_reg(m, d, pop);
    const es_operand *mo = mem_operand(d);
    uint64_t lin = es_lin(m, d, mo);
    unsigned size = mo->size;
    uint8_t out[16] = {0};
    int underflow = st_empty(m, 0);
    if (underflow && !(m->fpu.fcw & ES_FSW_IE)) {
        /* unmasked: nothing is stored, the stack stays */
        note(m, d, mo);
        stack_fault(m, 0);
        return ES_OK;
    }
    uint16_t sw = 0;
    if (size == 10 && (d->op == ES_OP_FSTP)) {
        memcpy(out, underflow ? k_indefinite.b : (const uint8_t *)&ST(m, 0), 10);
    } else {
        /* an empty source stores what the indefinite converts to: the
         * format's QNaN indefinite, integer indefinite, or BCD indefinite */
        sw = store_conv(m, d, size, underflow ? &k_indefinite.v : &ST(m, 0), out);
        if (!underflow && (sw & ~m->fpu.fcw & ES_FSW_EXC & ~ES_FSW_PE)) {
            /* unmasked IE/DE/OE/UE: memory is left unchanged, no pop, and
             * (host) no PE and C1 = 0 since nothing was rounded into memory */
            note(m, d, mo);
            merge_status(m, sw & (uint16_t)~ES_FSW_PE, 0);
            set_cc(m, ES_FSW_C1, 0);
            return ES_OK;
        }
    }
    if (size == 10) {
        TRY(es_write(m, lin, out, 10));
    } else {
        uint64_t v;
        memcpy(&v, out, 8);
        TRY(es_store(m, lin, size, v));
    }
    note(m, d, mo);
    if (underflow)
        stack_fault(m, 0);
    else
        merge_status(m, sw, ES_FSW_C1);
    if (pop)
        fpu_pop(m);
    return ES_OK;
}

/* ---------------------------------------------------------------------
 * Comparisons
 * ------------------------------------------------------------------- */

#define CC_CMP (ES_FSW_C0 | ES_FSW_C2 | ES_FSW_C3)

/* Maps compare condition bits to EFLAGS for FCOMI and friends: ZF = C3,
 * PF = C2, CF = C0; OF, SF and AF are cleared. */
static void cc_to_eflags(es_machine *m, uint16_t cc)
{
    uint64_t f = 0;
    if (cc & ES_FSW_C3)
        f |= ES_ZF;
    if (cc & ES_FSW_C2)
        f |= ES_PF;
    if (cc & ES_FSW_C0)
        f |= ES_CF;
    es_set_flags(m, f, ES_ZF | ES_PF | ES_CF | ES_OF | ES_SF | ES_AF);
}

int op_compare(es_machine *m, const es_insn *d)
{
    TRY(fpu_wait(m));
    int unordered = d->op == ES_OP_FUCOM || d->op == ES_OP_FUCOMP || d->op == ES_OP_FUCOMPP ||
                    d->op == ES_OP_FUCOMI || d->op == ES_OP_FUCOMIP;
    int to_eflags = d->op == ES_OP_FCOMI || d->op == ES_OP_FCOMIP || d->op == ES_OP_FUCOMI ||
                    d->op == ES_OP_FUCOMIP;
    int pops = (d->op == ES_OP_FCOMPP || d->op == ES_OP_FUCOMPP) ? 2
               : (d->op == ES_OP_FCOMP || d->op == ES_OP_FUCOMP || d->op == ES_OP_FICOMP ||
                  d->op == ES_OP_FCOMIP || d->op == ES_OP_FUCOMIP)
                   ? 1
                   : 0;
    uint16_t sw;
    int go;
    const es_operand *mo = NULL;
    hx h = hx_begin(m);
    if (is_mem(d)) {
        mo = mem_operand(d);
        uint64_t v;
        unsigned esc = d->opcode & 7;
        TRY(es_load(m, es_lin(m, d, mo), mo->size, &v));
        note(m, d, mo);
        if (st_empty(m, 0))
            goto underflow;
        if (esc == 0) {
            float f;
            uint32_t u = (uint32_t)v;
            memcpy(&f, &u, 4);
            HX_CMPM(h, "fcoms", &ST(m, 0), &f);
        } else if (esc == 4) {
            double f;
            memcpy(&f, &v, 8);
            HX_CMPM(h, "fcoml", &ST(m, 0), &f);
        } else {
            es_f80 y = f80_from_int(mo->size == 4 ? (int32_t)v : (int16_t)v);
            HX_CMP2(h, "fcompp", &ST(m, 0), &y.v);
        }
    } else {
        unsigned i = (d->op == ES_OP_FCOMPP || d->op == ES_OP_FUCOMPP) ? 1 : d->modrm & 7;
        note(m, d, NULL);
        if (st_empty(m, 0) || st_empty(m, i))
            goto underflow;
        if (unordered)
            HX_CMP2(h, "fucompp", &ST(m, 0), &ST(m, i));
        else
            HX_CMP2(h, "fcompp", &ST(m, 0), &ST(m, i));
    }
    /* Measured on the host: the condition codes (or EFLAGS) are written
     * even when an unmasked exception is raised; only the pops are
     * suppressed then. */
    sw = h.sw;
    go = merge_status(m, sw, 0);
    if (to_eflags) {
        cc_to_eflags(m, sw); /* FSW's C0-C3 unchanged (host) */
    } else {
        set_cc(m, CC_CMP | ES_FSW_C1, sw & CC_CMP);
    }
    if (!go)
        return ES_OK;
    goto pop;
underflow:
    /* the result is "unordered", masked or not (host) */
    go = stack_fault(m, 0);
    if (to_eflags)
        cc_to_eflags(m, CC_CMP);
    else
        set_cc(m, 0, CC_CMP);
    if (!go)
        return ES_OK;
pop:
    for (int n = 0; n < pops; n++)
        fpu_pop(m);
    return ES_OK;
}

int op_ftst(es_machine *m, const es_insn *d)
{
    TRY(fpu_wait(m));
    note(m, d, NULL);
    if (st_empty(m, 0)) {
        stack_fault(m, 0);
        set_cc(m, 0, CC_CMP);
        return ES_OK;
    }
    hx h = hx_begin(m);
    HX_CMP1(h, "ftst", &ST(m, 0));
    merge_status(m, h.sw, 0);
    set_cc(m, CC_CMP | ES_FSW_C1, h.sw & CC_CMP); /* written even when unmasked (host) */
    return ES_OK;
}

/* FXAM never faults; an empty register reports class 101 with C1 = the
 * sign of its stale contents (as measured on the host). */
int op_fxam(es_machine *m, const es_insn *d)
{
    TRY(fpu_wait(m));
    note(m, d, NULL);
    hx h = hx_begin(m);
    HX_CMP1(h, "fxam", &ST(m, 0));
    uint16_t cc = h.sw & ES_FSW_CC;
    if (st_empty(m, 0))
        cc = (uint16_t)((cc & ES_FSW_C1) | ES_FSW_C3 | ES_FSW_C0);
    set_cc(m, ES_FSW_CC, cc);
    return ES_OK;
}

/* ---------------------------------------------------------------------
 * Register-stack manipulation
 * ------------------------------------------------------------------- */

int op_fxch(es_machine *m, const es_insn *d)
{
    TRY(fpu_wait(m));
    unsigned i = d->modrm & 7;
    note(m, d, NULL);
    if (st_empty(m, 0) || st_empty(m, i)) {
        if (!stack_fault(m, 0))
            return ES_OK;
        /* masked: empty operands become the indefinite, then swap */
        if (st_empty(m, 0))
            st_set_indef(m, 0);
        if (st_empty(m, i))
            st_set_indef(m, i);
    } else {
        set_cc(m, ES_FSW_C1, 0);
    }
    es_f80 a = st_get(m, 0), b = st_get(m, i);
    st_set(m, 0, &b.v);
    st_set(m, i, &a.v);
    return ES_OK;
}

/* FCHS FABS: sign-bit operations, exact and exception-free. */
int op_sign(es_machine *m, const es_insn *d)
{
    TRY(fpu_wait(m));
    note(m, d, NULL);
    if (st_empty(m, 0)) {
        if (stack_fault(m, 0))
            st_set_indef(m, 0);
        return ES_OK;
    }
    es_f80 f;
    memset(&f, 0, sizeof f);
    memcpy(f.b, &ST(m, 0), 10);
    if (d->op == ES_OP_FCHS)
        f.p.se ^= 0x8000;
    else
        f.p.se &= 0x7fff;
    st_set(m, 0, &f.v);
    set_cc(m, ES_FSW_C1, 0);
    return ES_OK;
}

int op_fcmov(es_machine *m, const es_insn *d)
{
    TRY(fpu_wait(m));
    unsigned i = d->modrm & 7;
    note(m, d, NULL);
    if (st_empty(m, 0) || st_empty(m, i)) {
        /* the host writes the indefinite whatever the condition */
        if (stack_fault(m, 0))
            st_set_indef(m, 0);
        return ES_OK;
    }
    uint64_t f = m->rflags;
    int c;
    switch (d->op) {
    case ES_OP_FCMOVB: c = (f & ES_CF) != 0; break;
    case ES_OP_FCMOVNB: c = !(f & ES_CF); break;
    case ES_OP_FCMOVE: c = (f & ES_ZF) != 0; break;
    case ES_OP_FCMOVNE: c = !(f & ES_ZF); break;
    case ES_OP_FCMOVBE: c = (f & (ES_CF | ES_ZF)) != 0; break;
    case ES_OP_FCMOVNBE: c = !(f & (ES_CF | ES_ZF)); break;
    case ES_OP_FCMOVU: c = (f & ES_PF) != 0; break;
    default: c = !(f & ES_PF); break;
    }
    if (c) {
        es_f80 v = st_get(m, i);
        st_set(m, 0, &v.v);
    }
    return ES_OK; /* C0-C3 unchanged (host) */
}

int op_ffree(es_machine *m, const es_insn *d)
{
    TRY(fpu_wait(m));
    note(m, d, NULL);
    m->fpu.ftw |= (uint16_t)(3u << (2 * PHYS(m, d->modrm & 7)));
    set_cc(m, ES_FSW_C1, 0); /* host: C1 cleared, C0/C2/C3 kept */
    if (d->op == ES_OP_FFREEP)
        fpu_pop(m);
    return ES_OK;
}

int op_fincdecstp(es_machine *m, const es_insn *d)
{
    TRY(fpu_wait(m));
    note(m, d, NULL);
    m->fpu.top = (m->fpu.top + (d->op == ES_OP_FINCSTP ? 1 : 7)) & 7;
    set_cc(m, ES_FSW_C1, 0);
    return ES_OK;
}

int op_fnop(es_machine *m, const es_insn *d)
{
    TRY(fpu_wait(m));
    note(m, d, NULL);
    return ES_OK;
}

/* FENI, FDISI, FSETPM: 8087/287 leftovers, no-ops on the 387 and later. */
int op_legacy_nop(es_machine *m, const es_insn *d)
{
    TRY(fpu_nm(m));
    return ES_OK;
}

/* WAIT/FWAIT: #NM only when CR0.MP and CR0.TS are set (SDM Vol. 3A,
 * Table 2-2), then reports a pending exception. */
int op_fwait(es_machine *m, const es_insn *d)
{
    if ((m->cr0 & (ES_CR0_MP | ES_CR0_TS)) == (ES_CR0_MP | ES_CR0_TS))
        return es_raise(m, ES_VEC_NM, 0);
    if (m->fpu.fsw & ES_FSW_ES)
        return es_raise(m, ES_VEC_MF, 0);
    return ES_OK;
}

/* ---------------------------------------------------------------------
 * Square root, rounding, scaling and the transcendental instructions
 * ------------------------------------------------------------------- */

/* FSQRT FRNDINT F2XM1 FSIN FCOS: st(0) = f(st(0)). */
int op_unary(es_machine *m, const es_insn *d)
{
    TRY(fpu_wait(m));
    note(m, d, NULL);
    if (st_empty(m, 0)) {
        /* FSIN/FCOS clear C2 ("in range") on a stack fault too (host) */
        if (d->op == ES_OP_FSIN || d->op == ES_OP_FCOS)
            set_cc(m, ES_FSW_C2, 0);
        if (stack_fault(m, 0))
            st_set_indef(m, 0);
        return ES_OK;
    }
    long double r;
    uint16_t cc = ES_FSW_C1;
    hx h = hx_exact(m);
    switch (d->op) {
    case ES_OP_FSQRT: HX_UN(h, "fsqrt", &ST(m, 0), &r); break;
    case ES_OP_FRNDINT: HX_UN(h, "frndint", &ST(m, 0), &r); break;
    case ES_OP_F2XM1: HX_UN(h, "f2xm1", &ST(m, 0), &r); break;
    case ES_OP_FSIN: HX_UN(h, "fsin", &ST(m, 0), &r); cc |= ES_FSW_C2; break;
    default: HX_UN(h, "fcos", &ST(m, 0), &r); cc |= ES_FSW_C2; break;
    }
    if (merge_status(m, h.sw, cc))
        st_set(m, 0, &r);
    return ES_OK;
}

/* FSCALE FPREM FPREM1: st(0) = f(st(0), st(1)). */
int op_binary01(es_machine *m, const es_insn *d)
{
    TRY(fpu_wait(m));
    note(m, d, NULL);
    int prem = d->op != ES_OP_FSCALE;
    if (st_empty(m, 0) || st_empty(m, 1)) {
        if (prem) /* C2 ("incomplete") cleared on a stack fault (host) */
            set_cc(m, ES_FSW_C2, 0);
        if (stack_fault(m, 0))
            st_set_indef(m, 0);
        return ES_OK;
    }
    long double r;
    uint16_t cc = ES_FSW_C1;
    hx h = hx_exact(m);
    switch (d->op) {
    case ES_OP_FSCALE: HX_BIN(h, "fscale", &ST(m, 0), &ST(m, 1), &r); break;
    case ES_OP_FPREM: HX_BIN(h, "fprem", &ST(m, 0), &ST(m, 1), &r); cc = ES_FSW_CC; break;
    default: HX_BIN(h, "fprem1", &ST(m, 0), &ST(m, 1), &r); cc = ES_FSW_CC; break;
    }
    /* a NaN result (NaN operand or invalid) leaves C0 and C3 as they were
     * and clears C1 and C2 (host); the host unit's own C0/C3 are not the
     * guest's, so only C1/C2 are taken from it then */
    es_f80 rf;
    memcpy(&rf, &r, sizeof r);
    if (prem && (rf.p.se & 0x7fff) == 0x7fff && (rf.p.mant << 1) != 0)
        cc = ES_FSW_C1 | ES_FSW_C2;
    if (merge_status(m, h.sw, cc))
        st_set(m, 0, &r);
    return ES_OK;
}

/* FYL2X FYL2XP1 FPATAN: st(1) = f(st(1), st(0)), then pop. */
int op_binary_pop(es_machine *m, const es_insn *d)
{
    TRY(fpu_wait(m));
    note(m, d, NULL);
    if (st_empty(m, 0) || st_empty(m, 1)) {
        if (!stack_fault(m, 0))
            return ES_OK;
        st_set_indef(m, 1);
        fpu_pop(m);
        return ES_OK;
    }
    long double r;
    hx h = hx_begin(m);
    switch (d->op) {
    case ES_OP_FYL2X: HX_BINPOP(h, "fyl2x", &ST(m, 0), &ST(m, 1), &r); break;
    case ES_OP_FYL2XP1: HX_BINPOP(h, "fyl2xp1", &ST(m, 0), &ST(m, 1), &r); break;
    default: HX_BINPOP(h, "fpatan", &ST(m, 0), &ST(m, 1), &r); break;
    }
    if (merge_status(m, h.sw, ES_FSW_C1)) {
        st_set(m, 1, &r);
        fpu_pop(m);
    }
    return ES_OK;
}

/* FPTAN FSINCOS FXTRACT: st(0) = r0, then push r1.  Measured on the host:
 * an empty st(0) or a full stack (masked) leaves the indefinite in both
 * st(0) and the pushed register. */
int op_two_results(es_machine *m, const es_insn *d)
{
    TRY(fpu_wait(m));
    note(m, d, NULL);
    int empty = st_empty(m, 0), full = push_full(m);
    if (empty || full) {
        if (d->op != ES_OP_FXTRACT) /* C2 cleared on a stack fault (host) */
            set_cc(m, ES_FSW_C2, 0);
        if (!stack_fault(m, full && !empty))
            return ES_OK;
        st_set_indef(m, 0);
        fpu_push(m, &k_indefinite.v);
        return ES_OK;
    }
    long double r0, r1;
    uint16_t cc = ES_FSW_C1;
    hx h = hx_begin(m);
    switch (d->op) {
    case ES_OP_FPTAN: HX_TWO(h, "fptan", &ST(m, 0), &r0, &r1); cc |= ES_FSW_C2; break;
    case ES_OP_FSINCOS: HX_TWO(h, "fsincos", &ST(m, 0), &r0, &r1); cc |= ES_FSW_C2; break;
    default:
        HX_XTRACT(h, &ST(m, 0), &r0, &r1);
        h.sw &= (uint16_t)~ES_FSW_C2; /* undefined for FXTRACT: not "out of range" */
        break;
    }
    if (!merge_status(m, h.sw, cc))
        return ES_OK;
    if (h.sw & ES_FSW_C2)
        return ES_OK; /* operand out of range: st(0) unchanged, no push */
    st_set(m, 0, &r0);
    fpu_push(m, &r1);
    return ES_OK;
}

/* ---------------------------------------------------------------------
 * Control word, status word, environment
 * ------------------------------------------------------------------- */

int op_fldcw(es_machine *m, const es_insn *d)
{
    TRY(fpu_wait(m));
    uint64_t v;
    TRY(es_rd(m, d, 0, &v));
    es_x87_set_fcw(m, (uint16_t)v);
    return ES_OK;
}

int op_fnstcw(es_machine *m, const es_insn *d)
{
    TRY(fpu_nm(m));
    TRY(es_wr(m, d, 0, m->fpu.fcw));
    return ES_OK;
}

int op_fnstsw(es_machine *m, const es_insn *d)
{
    TRY(fpu_nm(m));
    TRY(es_wr(m, d, 0, es_x87_fsw(m)));
    return ES_OK;
}

int op_fnclex(es_machine *m, const es_insn *d)
{
    TRY(fpu_nm(m));
    m->fpu.fsw &= (uint16_t)~(ES_FSW_EXC | ES_FSW_SF | ES_FSW_ES | ES_FSW_B);
    return ES_OK;
}

int op_fninit(es_machine *m, const es_insn *d)
{
    TRY(fpu_nm(m));
    es_x87_init(m);
    return ES_OK;
}

/* The environment image (SDM Vol. 1, 8.1.10, Figures 8-9 and 8-10): 28
 * bytes (32-bit format, also used in 64-bit mode) or 14 bytes with a 66
 * prefix.  The host stores 1s in the reserved upper halves of the 32-bit
 * format; so do we. */
static unsigned env_image(const es_machine *m, int o16, uint8_t *b)
{
    uint16_t fcw = m->fpu.fcw, fsw = es_x87_fsw(m), ftw = m->fpu.ftw;
    es_x87_ptrs p = es_x87_saved_ptrs(m);
    if (o16) {
        uint16_t w[7] = {fcw, fsw, ftw, (uint16_t)p.fip, p.fcs, (uint16_t)p.fdp, p.fds};
        memcpy(b, w, 14);
        return 14;
    }
    uint32_t w[7] = {
        0xffff0000u | fcw,
        0xffff0000u | fsw,
        0xffff0000u | ftw,
        (uint32_t)p.fip,
        ((uint32_t)(p.fop & 0x7ff) << 16) | p.fcs,
        (uint32_t)p.fdp,
        0xffff0000u | p.fds,
    };
    memcpy(b, w, 28);
    return 28;
}

/* Loads an environment image; the register contents must already be in
 * place (FRSTOR) since the tags are recomputed from them. */
static void env_load(es_machine *m, int o16, const uint8_t *b)
{
    uint16_t fcw, fsw, ftw;
    if (o16) {
        uint16_t w[7];
        memcpy(w, b, 14);
        fcw = w[0], fsw = w[1], ftw = w[2];
        m->fpu.fip = w[3], m->fpu.fcs = w[4], m->fpu.fdp = w[5], m->fpu.fds = w[6];
        m->fpu.fop = 0;
    } else {
        uint32_t w[7];
        memcpy(w, b, 28);
        fcw = (uint16_t)w[0], fsw = (uint16_t)w[1], ftw = (uint16_t)w[2];
        m->fpu.fip = w[3];
        m->fpu.fcs = (uint16_t)w[4];
        m->fpu.fop = (uint16_t)((w[4] >> 16) & 0x7ff);
        m->fpu.fdp = w[5];
        m->fpu.fds = (uint16_t)w[6];
    }
    es_x87_loaded_ptrs(m);
    uint8_t nonempty = 0;
    for (int i = 0; i < 8; i++)
        if (((ftw >> (2 * i)) & 3) != 3)
            nonempty |= (uint8_t)(1u << i);
    m->fpu.fcw = (uint16_t)((fcw & 0x1f3f) | 0x40);
    es_x87_set_fsw(m, fsw);
    es_x87_set_tags(m, nonempty);
}

int op_fnstenv(es_machine *m, const es_insn *d)
{
    TRY(fpu_nm(m));
    uint8_t b[28];
    unsigned n = env_image(m, d->osize == 2, b);
    TRY(es_write(m, es_lin(m, d, mem_operand(d)), b, n));
    /* FNSTENV then masks every exception (SDM Vol. 2, FSTENV), which
     * also clears ES and B: nothing is pending any more (host) */
    m->fpu.fcw |= ES_FSW_EXC;
    es_x87_update_es(m);
    return ES_OK;
}

int op_fldenv(es_machine *m, const es_insn *d)
{
    TRY(fpu_wait(m));
    uint8_t b[28];
    TRY(es_read(m, es_lin(m, d, mem_operand(d)), b, d->osize == 2 ? 14 : 28));
    env_load(m, d->osize == 2, b);
    return ES_OK;
}

int op_fnsave(es_machine *m, const es_insn *d)
{
    TRY(fpu_nm(m));
    uint8_t b[108];
    unsigned n = env_image(m, d->osize == 2, b);
    for (unsigned i = 0; i < 8; i++)
        es_x87_get_raw(m, PHYS(m, i), b + n + 10 * i);
    TRY(es_write(m, es_lin(m, d, mem_operand(d)), b, n + 80));
    es_x87_init(m);
    return ES_OK;
}

int op_frstor(es_machine *m, const es_insn *d)
{
    TRY(fpu_wait(m));
    uint8_t b[108];
    unsigned n = d->osize == 2 ? 14 : 28;
    TRY(es_read(m, es_lin(m, d, mem_operand(d)), b, n + 80));
    uint16_t fsw;
    memcpy(&fsw, b + (n == 14 ? 2 : 4), 2);
    unsigned top = (fsw >> 11) & 7;
    for (unsigned i = 0; i < 8; i++)
        es_x87_put_raw(m, (top + i) & 7, b + n + 10 * i);
    env_load(m, d->osize == 2, b);
    return ES_OK;
}

/* The FNSAVE image without the reinitialisation, and FRSTOR from one (for
 * host services building i386 signal frames). */
void es_fnsave_image(const es_machine *m, uint8_t out[108])
{
    unsigned n = env_image(m, 0, out);
    for (unsigned i = 0; i < 8; i++)
        es_x87_get_raw(m, PHYS(m, i), out + n + 10 * i);
}

void es_frstor_image(es_machine *m, const uint8_t in[108])
{
    uint16_t fsw;
    memcpy(&fsw, in + 4, 2);
    unsigned top = (fsw >> 11) & 7;
    for (unsigned i = 0; i < 8; i++)
        es_x87_put_raw(m, (top + i) & 7, in + 28 + 10 * i);
    env_load(m, 0, in);
}

/* ---------------------------------------------------------------------
 * Registration
 * ------------------------------------------------------------------- */

