/* x87_core.c - the x87 family's out-of-line helpers: stack faults, merging
 * the host status into the guest FSW, and the FNSTENV/FNSAVE images (also
 * for host services building i386 signal frames).  The instructions are in
 * x87.c. */
#include "x87_core.h"

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
int es_x87_stack_fault(es_machine *m, int overflow)
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
int es_x87_merge_status_blk(es_machine *m, uint16_t hsw, uint16_t cc, unsigned block)
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

/* The environment image (SDM Vol. 1, 8.1.10, Figures 8-9 and 8-10): 28
 * bytes (32-bit format, also used in 64-bit mode) or 14 bytes with a 66
 * prefix.  The host stores 1s in the reserved upper halves of the 32-bit
 * format; so do we. */
unsigned es_x87_env_image(const es_machine *m, int o16, uint8_t *b)
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
void es_x87_env_load(es_machine *m, int o16, const uint8_t *b)
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

/* The FNSAVE image without the reinitialisation, and FRSTOR from one (for
 * host services building i386 signal frames). */
void es_fnsave_image(const es_machine *m, uint8_t out[108])
{
    unsigned n = es_x87_env_image(m, 0, out);
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
    es_x87_env_load(m, 0, in);
}
