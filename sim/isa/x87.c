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
#include "x87_core.h"

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
#define DEF_ARITH_M(BITS, FT, SUF)                                                                 \
    static uint16_t arith_m##BITS(const es_machine *m, int k, const long double *x, const FT *f,   \
                                  long double *r)                                                  \
    {                                                                                              \
        hx h = hx_exact(m);                                                                        \
        switch (k) {                                                                               \
        case K_ADD: HX_MEM(h, "fadd" SUF, x, f, r); break;                                         \
        case K_MUL: HX_MEM(h, "fmul" SUF, x, f, r); break;                                         \
        case K_SUB: HX_MEM(h, "fsub" SUF, x, f, r); break;                                         \
        case K_SUBR: HX_MEM(h, "fsubr" SUF, x, f, r); break;                                       \
        case K_DIV: HX_MEM(h, "fdiv" SUF, x, f, r); break;                                         \
        default: HX_MEM(h, "fdivr" SUF, x, f, r); break;                                           \
        }                                                                                          \
        return h.sw;                                                                               \
    }
DEF_ARITH_M(32, float, "s")
DEF_ARITH_M(64, double, "l")

/* An empty st(0) where a value is needed is a stack underflow: reports
 * it and, when masked, writes the indefinite to st(0).  Returns ES_OK
 * (the instruction is done either way). */
static int st0_underflow(es_machine *m)
{
    if (es_x87_stack_fault(m, 0))
        st_set_indef(m, 0);
    return ES_OK;
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
        if (st_empty(m, 0))
            return st0_underflow(m);
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
        if (!es_x87_stack_fault(m, 0))
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

/* With a full stack a push is a stack overflow: reports it, pushes the
 * indefinite when it is masked, and returns 1 (the push is done). */
static int push_overflowed(es_machine *m)
{
    if (!push_full(m))
        return 0;
    if (es_x87_stack_fault(m, 1))
        fpu_push(m, &k_indefinite.v);
    return 1;
}

/* Pushes *v, or the indefinite on overflow (masked). */
static void push_checked(es_machine *m, const long double *v)
{
    if (!push_overflowed(m))
        fpu_push(m, v);
}

/* FLD m32fp / m64fp (dbl a constant) of the raw bits v onto a stack with
 * room: normal numbers and zeros convert exactly and raise nothing, so
 * they need no host unit (SNaN, denormal, inf and NaN go through it). */
static inline __attribute__((always_inline)) int fld_real(es_machine *m, uint64_t v, int dbl)
{
    unsigned emax = dbl ? 0x7ff : 0xff, e = (unsigned)(v >> (dbl ? 52 : 23)) & emax;
    uint64_t magnitude = v & (dbl ? ~0ull >> 1 : 0x7fffffffu);
    if ((e != 0 && e != emax) || magnitude == 0) {
        es_f80 x = dbl ? f80_from_f64(v) : f80_from_f32((uint32_t)v);
        set_cc(m, ES_FSW_C1, 0);
        fpu_push(m, &x.v);
        return ES_OK;
    }
    long double r;
    hx h = hx_begin(m);
    if (dbl) {
        double f;
        memcpy(&f, &v, 8);
        HX_LD(h, "fldl", &f, &r);
    } else {
        float f;
        uint32_t u = (uint32_t)v;
        memcpy(&f, &u, 4);
        HX_LD(h, "flds", &f, &r);
    }
    /* an unmasked denormal-operand exception does not stop the load
     * (measured on the host); an unmasked invalid (SNaN) does */
    if (es_x87_merge_status_blk(m, h.sw, ES_FSW_C1, ES_FSW_IE))
        fpu_push(m, &r);
    return ES_OK;
}

int op_fld(es_machine *m, const es_insn *d)
{
    TRY(fpu_wait(m));
    if (!is_mem(d)) {
        /* FLD st(i): the source is read before the push, so an empty
         * source is reported as underflow even when the stack is also
         * full (host) */
        unsigned i = d->modrm & 7;
        note(m, d, NULL);
        if (st_empty(m, i) || push_full(m)) {
            if (es_x87_stack_fault(m, !st_empty(m, i)))
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
    if (push_overflowed(m))
        return ES_OK;
    return mo->size == 4 ? fld_real(m, v, 0) : fld_real(m, v, 1);
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
    if (push_overflowed(m))
        return ES_OK;
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
    if (push_overflowed(m))
        return ES_OK;
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
        if (!es_x87_stack_fault(m, 0))
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
        es_x87_stack_fault(m, 0);
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
        es_x87_stack_fault(m, 0);
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
    go = es_x87_stack_fault(m, 0);
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
        es_x87_stack_fault(m, 0);
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
        if (!es_x87_stack_fault(m, 0))
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
    if (st_empty(m, 0))
        return st0_underflow(m);
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
        return st0_underflow(m);
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
        return st0_underflow(m);
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
        return st0_underflow(m);
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
        if (!es_x87_stack_fault(m, 0))
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
        if (!es_x87_stack_fault(m, full && !empty))
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

int op_fnstenv(es_machine *m, const es_insn *d)
{
    TRY(fpu_nm(m));
    uint8_t b[28];
    unsigned n = es_x87_env_image(m, d->osize == 2, b);
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
    es_x87_env_load(m, d->osize == 2, b);
    return ES_OK;
}

int op_fnsave(es_machine *m, const es_insn *d)
{
    TRY(fpu_nm(m));
    uint8_t b[108];
    unsigned n = es_x87_env_image(m, d->osize == 2, b);
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
    es_x87_env_load(m, d->osize == 2, b);
    return ES_OK;
}

/* ---------------------------------------------------------------------
 * Registration
 * ------------------------------------------------------------------- */

