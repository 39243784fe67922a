/* x87.h - x87 state helpers shared by x87.c (the FPU instructions) and
 * fxsave.c (FXSAVE/FXRSTOR, XSAVE family).  Internal to sim/.
 *
 * State model (es_x87 in machine.h): fpr[] in physical register order as
 * host long double (the x87 80-bit format on an x86 host, which this file
 * requires); FSW kept without its TOP field (TOP lives in fpu.top and is
 * merged by es_x87_fsw); ftw is the full two-bit tag word, kept exact on
 * every register write (00 valid, 01 zero, 10 special, 11 empty).
 */
#ifndef ENTRYSIM_X87_H
#define ENTRYSIM_X87_H

#include <float.h>
#include <string.h>

#include "ops.h"

#if LDBL_MANT_DIG != 64
#error "entrysim's x87 model needs a host whose long double is the x87 80-bit format"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* FSW bits (SDM Vol. 1, 8.1.3). */
#define ES_FSW_IE 0x0001
#define ES_FSW_DE 0x0002
#define ES_FSW_ZE 0x0004
#define ES_FSW_OE 0x0008
#define ES_FSW_UE 0x0010
#define ES_FSW_PE 0x0020
#define ES_FSW_SF 0x0040
#define ES_FSW_ES 0x0080
#define ES_FSW_C0 0x0100
#define ES_FSW_C1 0x0200
#define ES_FSW_C2 0x0400
#define ES_FSW_TOP 0x3800
#define ES_FSW_C3 0x4000
#define ES_FSW_B 0x8000
#define ES_FSW_EXC 0x003f
#define ES_FSW_CC (ES_FSW_C0 | ES_FSW_C1 | ES_FSW_C2 | ES_FSW_C3)

/* CR0 bits the FPU instructions check. */
#define ES_CR0_MP 0x02
#define ES_CR0_EM 0x04
#define ES_CR0_TS 0x08

#define ES_CR4_OSFXSR 0x200
#define ES_CR4_OSXSAVE 0x40000

/* One 80-bit register image: 64-bit significand, sign+exponent. */
typedef union es_f80 {
    long double v;
    struct {
        uint64_t mant;
        uint16_t se;
    } p;
    uint8_t b[16];
} es_f80;

/* Tag of an 80-bit value (SDM Vol. 1, 8.1.7): zero, valid, or special
 * (NaN, infinity, denormal, and the unsupported encodings). */
static inline unsigned es_x87_tag_of(const long double *v)
{
    uint64_t mant;
    uint16_t se;
    memcpy(&mant, v, 8);
    memcpy(&se, (const uint8_t *)v + 8, 2);
    unsigned e = se & 0x7fff;
    if (e == 0x7fff)
        return 2;
    if (e == 0)
        return mant ? 2 : 1;
    return (mant >> 63) ? 0 : 2; /* unnormal: special */
}

/* FSW with TOP merged in. */
static inline uint16_t es_x87_fsw(const es_machine *m)
{
    return (uint16_t)((m->fpu.fsw & ~ES_FSW_TOP) | ((m->fpu.top & 7) << 11));
}

/* Sets ES and B from the exception flags and masks: an unmasked flag is a
 * pending exception the next waiting instruction reports as #MF. */
static inline void es_x87_update_es(es_machine *m)
{
    if (m->fpu.fsw & ~m->fpu.fcw & ES_FSW_EXC)
        m->fpu.fsw |= ES_FSW_ES | ES_FSW_B;
    else
        m->fpu.fsw &= (uint16_t)~(ES_FSW_ES | ES_FSW_B);
}

/* Loads an FSW image (FLDENV, FRSTOR, FXRSTOR, XRSTOR). */
static inline void es_x87_set_fsw(es_machine *m, uint16_t v)
{
    m->fpu.top = (uint8_t)((v >> 11) & 7);
    m->fpu.fsw = (uint16_t)(v & ~ES_FSW_TOP);
    es_x87_update_es(m);
}

/* Loads an FCW image: bit 6 reads as 1, bits 7 and 13..15 as 0 (measured
 * on the host: FLDCW 0 -> 0x0040, FLDCW 0xffff -> 0x1f7f). */
static inline void es_x87_set_fcw(es_machine *m, uint16_t v)
{
    m->fpu.fcw = (uint16_t)((v & 0x1f3f) | 0x40);
    es_x87_update_es(m);
}

/* The abridged tag byte of FXSAVE: bit i set when physical register i is
 * not empty. */
static inline uint8_t es_x87_abridged_tag(const es_machine *m)
{
    uint8_t t = 0;
    for (int i = 0; i < 8; i++)
        if (((m->fpu.ftw >> (2 * i)) & 3) != 3)
            t |= (uint8_t)(1u << i);
    return t;
}

/* Rebuilds the full tag word from a "non-empty" bit per physical register
 * and the register contents, as FLDENV/FRSTOR/FXRSTOR do (the processor
 * keeps only empty/non-empty and derives the rest from the values). */
static inline void es_x87_set_tags(es_machine *m, uint8_t nonempty)
{
    uint16_t ftw = 0;
    for (int i = 0; i < 8; i++) {
        unsigned t = (nonempty >> i) & 1 ? es_x87_tag_of(&m->fpu.fpr[i]) : 3;
        ftw |= (uint16_t)(t << (2 * i));
    }
    m->fpu.ftw = ftw;
}

/* Writes a register from 10 bytes of memory image (padding zeroed so the
 * state stays deterministic). */
static inline void es_x87_put_raw(es_machine *m, unsigned phys, const uint8_t *src)
{
    es_f80 f;
    memset(&f, 0, sizeof f);
    memcpy(f.b, src, 10);
    memcpy(&m->fpu.fpr[phys & 7], &f, sizeof f.v);
}

static inline void es_x87_get_raw(const es_machine *m, unsigned phys, uint8_t *dst)
{
    memcpy(dst, &m->fpu.fpr[phys & 7], 10);
}

/* FNINIT state (SDM Vol. 1, 8.1.10); register contents are left alone. */
static inline void es_x87_init(es_machine *m)
{
    m->fpu.fcw = 0x37f;
    m->fpu.fsw = 0;
    m->fpu.top = 0;
    m->fpu.ftw = 0xffff;
    m->fpu.fop = 0;
    m->fpu.fip = m->fpu.fdp = 0;
    m->fpu.fcs = m->fpu.fds = 0;
    m->fpu.fop_x = m->fpu.fds_x = 0;
    m->fpu.fdp_x = 0;
}

/* The last-instruction pointers as FNSTENV, FNSAVE, FXSAVE and XSAVE store
 * them.  AMD: the last non-control instruction's.  Intel (the model is a
 * current core, as are the hosts its differential tests run on): FCS and
 * FDS are deprecated and stored as 0 (CPUID.(EAX=7,ECX=0):EBX[13], SDM
 * Vol. 1, 8.1.8); FDP only for an instruction that incurred an unmasked
 * exception (EBX[6], FDP_EXCPTN_ONLY); and FOP likewise, since fopcode
 * compatibility mode is off unless IA32_MISC_ENABLE[2] is set (SDM Vol. 1,
 * 8.1.9.1).  FIP is always the last instruction's. */
typedef struct es_x87_ptrs {
    uint64_t fip, fdp;
    uint16_t fcs, fds, fop;
} es_x87_ptrs;

static inline es_x87_ptrs es_x87_saved_ptrs(const es_machine *m)
{
    const es_x87 *f = &m->fpu;
    if (m->vendor == 1)
        return (es_x87_ptrs){f->fip, f->fdp, f->fcs, f->fds, f->fop};
    return (es_x87_ptrs){f->fip, f->fdp_x, 0, 0, f->fop_x};
}

/* FLDENV, FRSTOR, FXRSTOR and XRSTOR load one set of pointers: it stands
 * for both the last instruction and the last unmasked exception. */
static inline void es_x87_loaded_ptrs(es_machine *m)
{
    m->fpu.fop_x = m->fpu.fop;
    m->fpu.fdp_x = m->fpu.fdp;
    m->fpu.fds_x = m->fpu.fds;
}

/* Images for host services (signal frames, ptrace-like dumps):
 * es_fxsave_image writes the 512-byte FXSAVE area (FXSAVE64 layout when
 * rex_w, XMM registers of the current mode, reserved bytes zero) without
 * any fault checks; es_fxrstor_image loads one and returns -1, changing
 * nothing, when its MXCSR has reserved bits set.  es_fnsave_image and
 * es_frstor_image do the same with the 108-byte 32-bit FNSAVE format
 * (without FNSAVE's reinitialisation). */
void es_fxsave_image(const es_machine *m, uint8_t out[512], int rex_w);
int es_fxrstor_image(es_machine *m, const uint8_t in[512], int rex_w);
void es_fnsave_image(const es_machine *m, uint8_t out[108]);
void es_frstor_image(es_machine *m, const uint8_t in[108]);

#ifdef __cplusplus
}
#endif
#endif
