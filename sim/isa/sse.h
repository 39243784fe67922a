/* sse.h - helpers shared by the SSE family files (sse*.c): XMM operand
 * access with the legacy-SSE alignment rule, and the MXCSR bracket that runs
 * a floating-point computation on the host under the guest's rounding
 * control and DAZ/FTZ and turns the host's exception flags into the guest's
 * (sticky flags, or #XM when unmasked).
 *
 * The SSE family (SSE..SSE4.2) lives in one file per concern:
 *   sse_mov.c  moves, loads and stores, MOVMSK*, LDMXCSR/STMXCSR
 *   sse_int.c  packed integer arithmetic, shuffles, packs, blends, insert/extract
 *   sse_fp.c   floating-point arithmetic, MIN/MAX, compares, ROUND, DPPS/DPPD, RCP/RSQRT
 *   sse_cvt.c  conversions
 *   sse_str.c  PCMPxSTRx, CRC32, PTEST, MPSADBW, PHMINPOSUW
 * with one isa.tbl row per instruction.
 *
 * The VEX forms run through the same handlers, a lane at a time (vex.h):
 * with ES_PFX_VEX the m128 alignment rule is off and the floating-point
 * exception flags are committed once for all lanes.  MMX
 * forms share mnemonics with the SSE ones: the dispatch sends them to
 * sim/isa/mmx.c, which runs these handlers on XMM registers (mmx.h), so
 * the handlers here only ever see XMM operands.
 */
#ifndef ENTRYSIM_SSE_H
#define ENTRYSIM_SSE_H

#include <string.h>

#include "ops.h"

#if !defined(__x86_64__)
#error "the SSE floating-point paths compute on the host's own SSE unit (x86-64 hosts only)"
#endif

/* MXCSR fields (SDM Vol. 1, 10.2.3). */
#define ES_MXCSR_IE 0x0001u
#define ES_MXCSR_DE 0x0002u
#define ES_MXCSR_ZE 0x0004u
#define ES_MXCSR_OE 0x0008u
#define ES_MXCSR_UE 0x0010u
#define ES_MXCSR_PE 0x0020u
#define ES_MXCSR_FLAGS 0x003fu
#define ES_MXCSR_DAZ 0x0040u
#define ES_MXCSR_MASKS 0x1f80u
#define ES_MXCSR_RC 0x6000u
#define ES_MXCSR_FTZ 0x8000u
/* Writable bits (the MXCSR_MASK FXSAVE reports): setting any other bit with
 * LDMXCSR is #GP(0).  AMD parts with MisAlignSse also accept bit 17 (MM);
 * entrysim models the common subset, so that bit faults here. */
#define ES_MXCSR_WRITABLE 0xffffu

#define ES_CR4_OSXMMEXCPT 0x400u

/* ---- operands ---- */

/* Reads n bytes of memory operand o.  `align`: the legacy-SSE m128 rule,
 * #GP(0) unless the linear address is 16-byte aligned (SDM Vol. 2, 2.4,
 * exception classes 1, 2 and 4); checked before any page fault. */
static inline int sse_read_mem(es_machine *m, const es_insn *d, const es_operand *o, void *v,
                               unsigned n, int align)
{
    uint64_t va = es_lin(m, d, o);
    /* the VEX forms run through these handlers have no alignment rule */
    if (align && (va & 15) && !(d->pfx & ES_PFX_VEX))
        return es_raise(m, ES_VEC_GP, 0);
    const uint8_t *p = es_host_ptr(m, va, n, 0);
    if (__builtin_expect(p != NULL, 1)) {
        memcpy(v, p, n);
        return 0;
    }
    return es_read(m, va, v, n);
}

static inline int sse_write_mem(es_machine *m, const es_insn *d, const es_operand *o,
                                const void *v, unsigned n, int align)
{
    uint64_t va = es_lin(m, d, o);
    if (align && (va & 15) && !(d->pfx & ES_PFX_VEX))
        return es_raise(m, ES_VEC_GP, 0);
    uint8_t *p = es_host_ptr(m, va, n, 1);
    if (__builtin_expect(p != NULL, 1)) {
        memcpy(p, v, n);
        return 0;
    }
    return es_write(m, va, v, n);
}

/* The r/m source operand i: the XMM register itself, or memory loaded into
 * *tmp (o->size bytes, the rest zero).  The alignment rule applies to
 * 16-byte accesses when `align`.  NULL with a fault recorded on failure
 * (another kind of operand raises #UD). */
static inline const es_xmm *sse_src(es_machine *m, const es_insn *d, int i, es_xmm *tmp,
                                    int align)
{
    const es_operand *o = &d->o[i];
    if (__builtin_expect(o->kind == ES_OPK_XMM, 1))
        return &m->vr[o->reg];
    if (o->kind != ES_OPK_MEM) {
        es_unimplemented(m, d);
        return NULL;
    }
    unsigned n = o->size ? o->size : 16;
    if (n < 16) {
        tmp->q[0] = tmp->q[1] = 0;
        align = 0;
    }
    if (sse_read_mem(m, d, o, tmp, n > 16 ? 16 : n, align))
        return NULL;
    return tmp;
}

/* Destination register of the usual `op xmm1, xmm2/m` form, NULL (with #UD
 * recorded) for anything else. */
static inline es_xmm *sse_dst(es_machine *m, const es_insn *d)
{
    if (__builtin_expect(d->o[0].kind == ES_OPK_XMM, 1))
        return &m->vr[d->o[0].reg];
    es_unimplemented(m, d);
    return NULL;
}

/* Immediate operand i as an unsigned byte. */
static inline unsigned sse_imm8(const es_insn *d, int i)
{
    return (unsigned)d->o[i].imm & 0xff;
}

/* The common prologue: x = destination register, s = source (reg or m128),
 * returning ES_FAULT from the handler on failure. */
#define SSE_OPERANDS(x, s, tmp, align)                                                             \
    es_xmm tmp;                                                                                    \
    es_xmm *x = sse_dst(m, d);                                                                     \
    if (!x)                                                                                        \
        return ES_FAULT;                                                                           \
    const es_xmm *s = sse_src(m, d, 1, &tmp, align);                                               \
    if (!s)                                                                                        \
        return ES_FAULT

/* ---- floating point on the host ----
 *
 * The host is x86-64, so float/double arithmetic compiles to the very SSE
 * instructions being modelled.  sse_fp_enter loads the guest's RC, DAZ and
 * FTZ into the host MXCSR with every exception masked and the flags clear;
 * sse_fp_leave collects the flags the computation raised and restores the
 * host's MXCSR.  Values cross the bracket through SSE_PIN so the compiler
 * cannot move the arithmetic outside it (the asm statements are volatile
 * and therefore stay in order). */
#define SSE_PIN(v) __asm__ volatile("" : "+x"(v))

static inline uint32_t sse_fp_enter(const es_machine *m)
{
    uint32_t host, g = (m->mxcsr & (ES_MXCSR_RC | ES_MXCSR_DAZ | ES_MXCSR_FTZ)) | ES_MXCSR_MASKS;
    __asm__ volatile("stmxcsr %0" : "=m"(host));
    __asm__ volatile("ldmxcsr %0" : : "m"(g));
    return host;
}

static inline uint32_t sse_fp_leave(uint32_t host)
{
    uint32_t f;
    __asm__ volatile("stmxcsr %0" : "=m"(f));
    __asm__ volatile("ldmxcsr %0" : : "m"(host));
    return f & ES_MXCSR_FLAGS;
}

/* OE and UE masked (Linux's default): the masked host computation gives
 * the exact flags.  Otherwise OE/UE need the unbounded-exponent result
 * (SDM Vol. 1, 4.9.1.4-5): see the per-lane paths of sse_fp.c/sse_cvt.c. */
#define ES_MXCSR_OM 0x0400u
#define ES_MXCSR_UM 0x0800u
static inline int sse_fp_plain(const es_machine *m)
{
    return (m->mxcsr & (ES_MXCSR_OM | ES_MXCSR_UM)) == (ES_MXCSR_OM | ES_MXCSR_UM);
}

/* The host MXCSR for one lane of the unmasked-OE/UE path: FTZ only acts
 * while UE is masked. */
static inline uint32_t sse_fp_lane_mxcsr(const es_machine *m)
{
    uint32_t g = (m->mxcsr & (ES_MXCSR_RC | ES_MXCSR_DAZ | ES_MXCSR_FTZ)) | ES_MXCSR_MASKS;
    if (!(m->mxcsr & ES_MXCSR_UM))
        g &= ~ES_MXCSR_FTZ;
    return g;
}

static inline uint32_t sse_fp_enter_mx(uint32_t g)
{
    uint32_t host;
    __asm__ volatile("stmxcsr %0" : "=m"(host));
    __asm__ volatile("ldmxcsr %0" : : "m"(g));
    return host;
}

/* Rounds the double v to single precision with an unbounded exponent in
 * the guest's rounding mode (the significand is rounded at exponent 0 and
 * the exponent put back, both exact in double); returns the magnitude of
 * the result and ORs PE into *g when it is inexact. */
static inline double sse_round_unbounded_f(const es_machine *m, double v, uint32_t *g)
{
    int e;
    double mant = __builtin_frexp(v, &e);
    uint32_t h = sse_fp_enter_mx(sse_fp_lane_mxcsr(m) & ~ES_MXCSR_DAZ);
    __asm__ volatile("" : "+x"(mant));
    float r = (float)mant;
    __asm__ volatile("" : "+x"(r));
    uint32_t f;
    __asm__ volatile("stmxcsr %0" : "=m"(f));
    __asm__ volatile("ldmxcsr %0" : : "m"(h));
    *g |= f & ES_MXCSR_PE;
    return __builtin_fabs(__builtin_ldexp((double)r, e));
}

/* Applies the exception flags `f` one instruction raised (all lanes).  SDM
 * Vol. 1, 11.5.1: if an unmasked pre-computation exception (IE, DE, ZE)
 * occurred in any lane, those flags are set and #XM is raised without a
 * result; otherwise, if an unmasked post-computation exception (OE, UE, PE)
 * occurred, all flags are set and #XM is raised, again with no destination
 * update.  Otherwise the flags are ORed into MXCSR.  With CR4.OSXMMEXCPT
 * clear the exception is #UD instead.  Returns nonzero on a fault. */
static inline int sse_fp_commit(es_machine *m, uint32_t f)
{
    if (__builtin_expect(m->fp_defer, 0)) {
        m->fp_acc |= f; /* a lane of a VEX form: es_vex_run commits */
        return 0;
    }
    uint32_t unmasked = f & ~(m->mxcsr >> 7) & ES_MXCSR_FLAGS;
    if (__builtin_expect(unmasked != 0, 0)) {
        uint32_t pre = f & (ES_MXCSR_IE | ES_MXCSR_DE | ES_MXCSR_ZE);
        m->mxcsr |= (pre & unmasked) ? pre : f;
        return es_raise(m, (m->cr4 & ES_CR4_OSXMMEXCPT) ? ES_VEC_XM : ES_VEC_UD, 0);
    }
    m->mxcsr |= f;
    return 0;
}

/* ---- IEEE helpers on bit patterns ---- */

static inline int sse_isnan_f(uint32_t b)
{
    return (b & 0x7fffffffu) > 0x7f800000u;
}
static inline int sse_isnan_d(uint64_t b)
{
    return (b & 0x7fffffffffffffffull) > 0x7ff0000000000000ull;
}
static inline int sse_issnan_f(uint32_t b)
{
    return sse_isnan_f(b) && !(b & 0x00400000u);
}
static inline int sse_issnan_d(uint64_t b)
{
    return sse_isnan_d(b) && !(b & 0x0008000000000000ull);
}
static inline int sse_isdenorm_f(uint32_t b)
{
    return (b & 0x7f800000u) == 0 && (b & 0x007fffffu) != 0;
}
static inline int sse_isdenorm_d(uint64_t b)
{
    return (b & 0x7ff0000000000000ull) == 0 && (b & 0x000fffffffffffffull) != 0;
}

/* A source operand after DAZ: denormals become zeros of the same sign. */
static inline uint32_t sse_daz_f(const es_machine *m, uint32_t b)
{
    return ((m->mxcsr & ES_MXCSR_DAZ) && sse_isdenorm_f(b)) ? (b & 0x80000000u) : b;
}
static inline uint64_t sse_daz_d(const es_machine *m, uint64_t b)
{
    return ((m->mxcsr & ES_MXCSR_DAZ) && sse_isdenorm_d(b)) ? (b & 0x8000000000000000ull) : b;
}

/* The same bits seen as the other type (memcpy is the defined way). */
#define SSE_PUN(name, to, from)                                                                    \
    static inline to name(from v)                                                                  \
    {                                                                                              \
        to r;                                                                                      \
        memcpy(&r, &v, sizeof r);                                                                  \
        return r;                                                                                  \
    }
SSE_PUN(sse_f, float, uint32_t)
SSE_PUN(sse_d, double, uint64_t)
SSE_PUN(sse_fbits, uint32_t, float)
SSE_PUN(sse_dbits, uint64_t, double)

#define ES_QNAN_F 0xffc00000u                  /* QNaN floating-point indefinite */
#define ES_QNAN_D 0xfff8000000000000ull

#endif
