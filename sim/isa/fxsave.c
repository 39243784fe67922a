/* fxsave.c - FXSAVE/FXRSTOR (and the REX.W "64" forms), XSAVE, XSAVEOPT,
 * XSAVEC, XRSTOR and the supervisor XSAVES/XRSTORS (and their 64 forms)
 * for the three state components entrysim has: x87 (bit 0), SSE (bit 1)
 * and AVX (bit 2, bits 255:128 of the YMM registers).  XCR0 is m->xcr0
 * (7 as Linux sets it; XSETBV may clear AVX); IA32_XSS is 0.
 *
 * Layouts: SDM Vol. 1, 10.5.1 (the 512-byte FXSAVE area) and 13.4 (the
 * XSAVE area: the same legacy region, then a 64-byte header at 512 with
 * XSTATE_BV and XCOMP_BV).  Components 0 and 1 live in the legacy region
 * in both the standard and the compacted format; component 2 follows the
 * header at 576 in both (the standard offset, CPUID.(0DH,2).EBX, and the
 * first compacted one), so compaction only changes the header.
 *
 * Pointer registers: AMD processors (m->vendor == 1, like the Zen 4 host)
 * write FOP, FIP and FDP (and the selectors) as zero unless FSW.ES is set
 * (AMD APM Vol. 4, FXSAVE); FXRSTOR/XRSTOR load them from the image in
 * any case, so a save/restore pair clears them (both measured on the
 * host, which reports RstrFpErrPtrs).  Intel processors always save them.
 */
#include "sse.h" /* ES_MXCSR_WRITABLE: the MXCSR_MASK (0xFFFF; the host reports
                    * 0x2FFFF, adding AMD's misaligned-SSE bit entrysim lacks) */
#include "x87.h"

#define XFEATURE_X87 1ull
#define XFEATURE_SSE 2ull
#define XFEATURE_YMM 4ull
#define XSAVE_YMM_OFF 576u
#define XSAVE_END 832u
#define XCOMP_COMPACT (1ull << 63)

/* Bytes of the legacy region FXSAVE writes: through XMM15 in 64-bit mode,
 * XMM7 otherwise (the rest is reserved or available to software and is
 * never written). */
static unsigned legacy_end(const es_machine *m)
{
    return m->mode == ES_MODE_64 ? 416 : 288;
}

static unsigned nxmm(const es_machine *m)
{
    return m->mode == ES_MODE_64 ? 16 : 8;
}

static int save_pointers(const es_machine *m)
{
    return m->vendor != 1 || (m->fpu.fsw & ES_FSW_ES);
}

/* Writes the x87 part of the legacy region: bytes 0..23 except MXCSR,
 * and the eight register slots at 32 (in ST order, 10 value bytes and 6
 * zero bytes each, as the host writes them). */
static void put_x87(const es_machine *m, uint8_t *b, int rex_w)
{
    uint16_t fcw = m->fpu.fcw, fsw = es_x87_fsw(m);
    memcpy(b + 0, &fcw, 2);
    memcpy(b + 2, &fsw, 2);
    b[4] = es_x87_abridged_tag(m);
    b[5] = 0;
    memset(b + 6, 0, 18);
    if (save_pointers(m)) {
        es_x87_ptrs p = es_x87_saved_ptrs(m);
        uint16_t fop = p.fop & 0x7ff;
        memcpy(b + 6, &fop, 2);
        if (rex_w) {
            memcpy(b + 8, &p.fip, 8);
            memcpy(b + 16, &p.fdp, 8);
        } else {
            uint32_t ip = (uint32_t)p.fip, dp = (uint32_t)p.fdp;
            memcpy(b + 8, &ip, 4);
            memcpy(b + 12, &p.fcs, 2);
            memcpy(b + 16, &dp, 4);
            memcpy(b + 20, &p.fds, 2);
        }
    }
    for (unsigned i = 0; i < 8; i++) {
        uint8_t *slot = b + 32 + 16 * i;
        es_x87_get_raw(m, (m->fpu.top + i) & 7, slot);
        memset(slot + 10, 0, 6);
    }
}

static void put_mxcsr(const es_machine *m, uint8_t *b)
{
    uint32_t mask = ES_MXCSR_WRITABLE;
    memcpy(b + 24, &m->mxcsr, 4);
    memcpy(b + 28, &mask, 4);
}

static void put_xmm(const es_machine *m, uint8_t *b)
{
    memcpy(b + 160, m->xmm, 16 * nxmm(m));
}

/* Component 2: bits 255:128 of YMM0..15 (YMM0..7 outside 64-bit mode). */
static void put_ymmh(const es_machine *m, uint8_t *b)
{
    memcpy(b + XSAVE_YMM_OFF, m->ymmh, 16 * nxmm(m));
}

/* Loads the x87 part of a legacy region (already validated). */
static void get_x87(es_machine *m, const uint8_t *b, int rex_w)
{
    uint16_t fcw, fsw;
    memcpy(&fcw, b + 0, 2);
    memcpy(&fsw, b + 2, 2);
    unsigned top = (fsw >> 11) & 7;
    for (unsigned i = 0; i < 8; i++)
        es_x87_put_raw(m, (top + i) & 7, b + 32 + 16 * i);
    m->fpu.fcw = (uint16_t)((fcw & 0x1f3f) | 0x40);
    es_x87_set_fsw(m, fsw);
    es_x87_set_tags(m, b[4]);
    uint16_t fop;
    memcpy(&fop, b + 6, 2);
    m->fpu.fop = fop & 0x7ff;
    if (rex_w) {
        memcpy(&m->fpu.fip, b + 8, 8);
        memcpy(&m->fpu.fdp, b + 16, 8);
        m->fpu.fcs = m->fpu.fds = 0;
    } else {
        uint32_t ip, dp;
        memcpy(&ip, b + 8, 4);
        memcpy(&m->fpu.fcs, b + 12, 2);
        memcpy(&dp, b + 16, 4);
        memcpy(&m->fpu.fds, b + 20, 2);
        m->fpu.fip = ip;
        m->fpu.fdp = dp;
    }
    es_x87_loaded_ptrs(m);
}

/* The x87 initial configuration (XRSTOR with XSTATE_BV[0] = 0). */
static void init_x87(es_machine *m)
{
    es_x87_init(m);
    memset(m->fpu.fpr, 0, sizeof m->fpu.fpr);
}

/* XINUSE (SDM Vol. 1, 13.6): a component not in its initial
 * configuration, judged from the contents.  MXCSR counts for SSE because a
 * compacted XRSTOR re-initialises it when XSTATE_BV[1] is 0.  The host
 * tracks modifications instead (FLDZ/FSTP leaves its XINUSE[0] set, FNOP
 * does not set it although FOP changes), so XSTATE_BV can differ from the
 * host's; both are allowed (XINUSE may be 1 for a component in its initial
 * configuration, and XRSTOR restores the same state either way). */
static uint64_t xinuse(const es_machine *m)
{
    uint64_t r = 0;
    const es_x87 *f = &m->fpu;
    int x87 = f->fcw != 0x37f || es_x87_fsw(m) != 0 || f->ftw != 0xffff || f->fop || f->fip ||
              f->fdp;
    for (int i = 0; i < 8 && !x87; i++) {
        uint8_t z[10] = {0};
        x87 = memcmp(&f->fpr[i], z, 10) != 0;
    }
    if (x87)
        r |= XFEATURE_X87;
    int sse = m->mxcsr != 0x1f80;
    for (unsigned i = 0; i < nxmm(m) && !sse; i++)
        sse = (m->xmm[i].q[0] | m->xmm[i].q[1]) != 0;
    if (sse)
        r |= XFEATURE_SSE;
    for (unsigned i = 0; i < nxmm(m); i++)
        if (m->ymmh[i].q[0] | m->ymmh[i].q[1]) {
            r |= XFEATURE_YMM;
            break;
        }
    return r;
}

/* Checks shared by FXSAVE and FXRSTOR: #NM (CR0.TS or CR0.EM), #GP(0) for
 * an area not 16-byte aligned. */
static int fx_check(es_machine *m, uint64_t lin)
{
    if (m->cr0 & (ES_CR0_EM | ES_CR0_TS))
        return es_raise(m, ES_VEC_NM, 0);
    if (lin & 15)
        return es_raise(m, ES_VEC_GP, 0);
    return 0;
}

/* Whether FXSAVE/FXRSTOR handle the XMM registers: CR4.OSFXSR, and not
 * AMD's fast FXSAVE (EFER.FFXSR in 64-bit mode at CPL 0). */
static int fx_xmm(const es_machine *m)
{
    if (!(m->cr4 & ES_CR4_OSFXSR))
        return 0;
    return !(m->vendor == 1 && (m->efer & (1ull << 14)) && m->mode == ES_MODE_64 && m->cpl == 0);
}

static inline const es_operand *mem_operand(const es_insn *d)
{
    for (int i = 0; i < d->nops; i++)
        if (d->o[i].kind == ES_OPK_MEM)
            return &d->o[i];
    return NULL;
}

/* FXSAVE does not check for pending x87 exceptions (SDM Vol. 2). */
int op_fxsave(es_machine *m, const es_insn *d)
{
    uint64_t lin = es_lin(m, d, mem_operand(d));
    TRY(fx_check(m, lin));
    uint8_t b[512];
    unsigned n = legacy_end(m);
    put_x87(m, b, d->op == ES_OP_FXSAVE64);
    put_mxcsr(m, b);
    if (fx_xmm(m)) {
        put_xmm(m, b);
        TRY(es_write(m, lin, b, n));
    } else {
        TRY(es_write(m, lin, b, 160)); /* the XMM slots are left as they were */
    }
    return ES_OK;
}

int op_fxrstor(es_machine *m, const es_insn *d)
{
    uint64_t lin = es_lin(m, d, mem_operand(d));
    TRY(fx_check(m, lin));
    uint8_t b[512];
    TRY(es_read(m, lin, b, legacy_end(m)));
    uint32_t mxcsr;
    memcpy(&mxcsr, b + 24, 4);
    if (mxcsr & ~ES_MXCSR_WRITABLE)
        return es_raise(m, ES_VEC_GP, 0);
    get_x87(m, b, d->op == ES_OP_FXRSTOR64);
    m->mxcsr = mxcsr;
    if (fx_xmm(m))
        memcpy(m->xmm, b + 160, 16 * nxmm(m));
    return ES_OK;
}

/* ---- XSAVE family ---- */

/* #NM with CR0.TS, #GP(0) unless 64-byte aligned (SDM Vol. 2, XSAVE).
 * The #UD for CR4.OSXSAVE = 0 is not raised: like CPUID and XGETBV
 * (system.c), entrysim treats OSXSAVE as set, as Linux sets it on every
 * XSAVE-capable CPU, while the machine's default CR4 value lacks the bit. */
static int xs_check(es_machine *m, uint64_t lin)
{
    if (m->cr0 & ES_CR0_TS)
        return es_raise(m, ES_VEC_NM, 0);
    if (lin & 63)
        return es_raise(m, ES_VEC_GP, 0);
    return 0;
}

static uint64_t rfbm(const es_machine *m)
{
    uint64_t edx_eax = ((m->gpr[ES_RDX] & 0xffffffffull) << 32) | (m->gpr[ES_RAX] & 0xffffffffull);
    return edx_eax & m->xcr0;
}

/* XSAVE, XSAVEOPT, XSAVEC.  The area is read, updated and written back in
 * one access so a fault leaves memory untouched (and bytes XSAVE does not
 * own keep their values). */
int op_xsave(es_machine *m, const es_insn *d)
{
    uint64_t lin = es_lin(m, d, mem_operand(d));
    TRY(xs_check(m, lin));
    int rex_w = d->op == ES_OP_XSAVE64 || d->op == ES_OP_XSAVEOPT64 ||
                d->op == ES_OP_XSAVEC64 || d->op == ES_OP_XSAVES64;
    int opt = d->op == ES_OP_XSAVEOPT || d->op == ES_OP_XSAVEOPT64;
    int sup = d->op == ES_OP_XSAVES || d->op == ES_OP_XSAVES64;
    int compact = sup || d->op == ES_OP_XSAVEC || d->op == ES_OP_XSAVEC64;
    /* XSAVES is XSAVEC for CPL 0 with the supervisor components of
     * IA32_XSS added; entrysim has none (XSS = 0) */
    if (sup && m->cpl != 0)
        return es_raise(m, ES_VEC_GP, 0);
    uint64_t rf = rfbm(m), inuse = xinuse(m);
    /* the bytes written: through the header's XCOMP_BV, and component 2
     * when it is requested */
    unsigned n = (rf & XFEATURE_YMM) ? XSAVE_END : 512 + 16;
    uint8_t b[XSAVE_END];
    TRY(es_read(m, lin, b, n));
    /* XSAVEOPT and XSAVEC skip components in their initial configuration
     * (the init optimization); MXCSR is saved whenever SSE is requested,
     * because a standard-form XRSTOR loads it even when XSTATE_BV[1] = 0
     * (measured on the host). */
    uint64_t save = (opt || compact) ? rf & inuse : rf;
    if (save & XFEATURE_X87)
        put_x87(m, b, rex_w);
    if (rf & XFEATURE_SSE)
        put_mxcsr(m, b);
    if (save & XFEATURE_SSE)
        put_xmm(m, b);
    if (save & XFEATURE_YMM)
        put_ymmh(m, b);
    uint64_t xstate_bv;
    memcpy(&xstate_bv, b + 512, 8);
    if (compact) {
        /* XSTATE_BV and XCOMP_BV are written; the rest of the header is
         * left alone (as the host does) */
        uint64_t xcomp = XCOMP_COMPACT | rf;
        xstate_bv = rf & inuse;
        memcpy(b + 520, &xcomp, 8);
    } else {
        xstate_bv = (xstate_bv & ~rf) | (rf & inuse);
    }
    memcpy(b + 512, &xstate_bv, 8);
    TRY(es_write(m, lin, b, n));
    return ES_OK;
}

int op_xrstor(es_machine *m, const es_insn *d)
{
    uint64_t lin = es_lin(m, d, mem_operand(d));
    TRY(xs_check(m, lin));
    int rex_w = d->op == ES_OP_XRSTOR64 || d->op == ES_OP_XRSTORS64;
    int sup = d->op == ES_OP_XRSTORS || d->op == ES_OP_XRSTORS64;
    if (sup && m->cpl != 0)
        return es_raise(m, ES_VEC_GP, 0);
    uint64_t rf = rfbm(m);
    uint8_t b[XSAVE_END];
    TRY(es_read(m, lin, b, (rf & XFEATURE_YMM) ? XSAVE_END : 576u));
    uint64_t xstate_bv, xcomp_bv;
    memcpy(&xstate_bv, b + 512, 8);
    memcpy(&xcomp_bv, b + 520, 8);
    /* header checks (SDM Vol. 1, 13.8): #GP(0) on any violation; XRSTORS
     * accepts only the compacted form */
    int compact = (xcomp_bv & XCOMP_COMPACT) != 0;
    if (sup && !compact)
        return es_raise(m, ES_VEC_GP, 0);
    int reserved_set = 0;
    for (unsigned i = compact ? 528 : 520; i < (compact ? 576u : 536u); i++)
        reserved_set |= b[i];
    if (compact) {
        if ((xcomp_bv & ~XCOMP_COMPACT & ~m->xcr0) || (xstate_bv & ~xcomp_bv) || reserved_set)
            return es_raise(m, ES_VEC_GP, 0);
    } else if ((xstate_bv & ~m->xcr0) || reserved_set) {
        return es_raise(m, ES_VEC_GP, 0);
    }
    /* MXCSR: the standard form loads it whenever SSE is requested; the
     * compacted form only when XSTATE_BV says SSE state is present, else
     * it is initialised to 1F80H (both measured on the host). */
    uint32_t mxcsr = m->mxcsr;
    if (rf & XFEATURE_SSE) {
        if (!compact || (xstate_bv & XFEATURE_SSE))
            memcpy(&mxcsr, b + 24, 4);
        else
            mxcsr = 0x1f80;
        if (mxcsr & ~ES_MXCSR_WRITABLE)
            return es_raise(m, ES_VEC_GP, 0);
    }
    if (rf & XFEATURE_X87) {
        if (xstate_bv & XFEATURE_X87)
            get_x87(m, b, rex_w);
        else
            init_x87(m);
    }
    if (rf & XFEATURE_SSE) {
        m->mxcsr = mxcsr;
        if (xstate_bv & XFEATURE_SSE)
            memcpy(m->xmm, b + 160, 16 * nxmm(m));
        else
            memset(m->xmm, 0, 16 * nxmm(m));
    }
    /* a compacted area holds component 2 at 576 only when XCOMP_BV
     * lists it (it is then the first beyond the legacy region) */
    if (rf & XFEATURE_YMM) {
        if ((xstate_bv & XFEATURE_YMM) && (!compact || (xcomp_bv & XFEATURE_YMM)))
            memcpy(m->ymmh, b + XSAVE_YMM_OFF, 16 * nxmm(m));
        else
            memset(m->ymmh, 0, 16 * nxmm(m));
    }
    return ES_OK;
}

void es_fxsave_image(const es_machine *m, uint8_t out[512], int rex_w)
{
    memset(out, 0, 512);
    put_x87(m, out, rex_w);
    put_mxcsr(m, out);
    put_xmm(m, out);
}

int es_fxrstor_image(es_machine *m, const uint8_t in[512], int rex_w)
{
    uint32_t mxcsr;
    memcpy(&mxcsr, in + 24, 4);
    if (mxcsr & ~ES_MXCSR_WRITABLE)
        return -1;
    get_x87(m, in, rex_w);
    m->mxcsr = mxcsr;
    memcpy(m->xmm, in + 160, 16 * nxmm(m));
    return 0;
}

