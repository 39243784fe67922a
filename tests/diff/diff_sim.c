/* diff_sim.c - the simulator side of the differential test: one shim
 * machine per mode, reset to the case's state before every run. */
#include "diff_native.h"

#include <string.h>

#include "es_shim.h"
#include "mem.h"

es_machine *diff_sim_new(int mode)
{
    es_machine *m = est_new(mode);
    /* The native side runs in a Linux process, whose XCR0 enables the x87,
     * SSE and AVX state (and more the simulator does not model): without
     * XCR0[2:1] = 11b every VEX instruction is #UD (SDM Vol. 2, 2.4), and
     * the comparison would mean nothing. */
    if (m)
        m->xcr0 |= 7;
    return m;
}

/* Writes the instruction at EST_CODE as the kernel would and invalidates
 * the decode cache for the page (est_code writes behind its back, which is
 * fine for fresh machines but not for one reused across cases). */
static int put_code(es_machine *m, const uint8_t *insn, size_t len)
{
    uint8_t buf[32];
    memset(buf, 0x90, sizeof buf);
    memcpy(buf, insn, len);
    for (size_t i = 0; i < sizeof buf; i++) {
        uint64_t *pte = es_pte(m, m->cr3, EST_CODE + i, false);
        if (!pte)
            return -1;
        uint64_t pa = (*pte & ES_PTE_ADDR) | ((EST_CODE + i) & 0xfff);
        uint8_t *p = es_phys(m, pa);
        if (!p)
            return -1;
        *p = buf[i];
        es_code_stale(m, pa >> 12);
    }
    return 0;
}

/* x87 tag of an 80-bit value (SDM Vol. 1, 8.1.7): 0 valid, 1 zero, 2
 * special (NaN, infinity, denormal, unnormal). */
static unsigned tag_of(const uint8_t *v)
{
    uint64_t mant;
    uint16_t se;
    memcpy(&mant, v, 8);
    memcpy(&se, v + 8, 2);
    unsigned e = se & 0x7fff;
    if (e == 0x7fff)
        return 2;
    if (e == 0)
        return mant ? 2 : 1;
    return (mant >> 63) ? 0 : 2;
}

/* FXSAVE image <-> es_x87 (machine.h: physical register order, FSW without
 * TOP, full tag word). */
static void x87_in(es_machine *m, const uint8_t *fx)
{
    uint16_t fcw, fsw;
    memcpy(&fcw, fx, 2);
    memcpy(&fsw, fx + 2, 2);
    m->fpu.fcw = fcw;
    m->fpu.top = (fsw >> 11) & 7;
    m->fpu.fsw = fsw & ~0x3800;
    m->fpu.ftw = 0;
    m->fpu.fop = 0;
    m->fpu.fip = m->fpu.fdp = 0;
    for (int i = 0; i < 8; i++) {
        int p = (m->fpu.top + i) & 7;
        memset(&m->fpu.fpr[p], 0, sizeof m->fpu.fpr[p]);
        memcpy(&m->fpu.fpr[p], fx + 32 + 16 * i, 10);
    }
    for (int p = 0; p < 8; p++) {
        unsigned tag = (fx[4] >> p) & 1 ? tag_of((const uint8_t *)&m->fpu.fpr[p]) : 3;
        m->fpu.ftw |= (uint16_t)(tag << (2 * p));
    }
}

static void x87_out(const es_machine *m, uint8_t *fx)
{
    uint16_t fsw = (uint16_t)((m->fpu.fsw & ~0x3800) | ((m->fpu.top & 7) << 11));
    memcpy(fx, &m->fpu.fcw, 2);
    memcpy(fx + 2, &fsw, 2);
    fx[4] = 0;
    for (int p = 0; p < 8; p++)
        if (((m->fpu.ftw >> (2 * p)) & 3) != 3)
            fx[4] |= (uint8_t)(1 << p);
    for (int i = 0; i < 8; i++)
        memcpy(fx + 32 + 16 * i, &m->fpu.fpr[(m->fpu.top + i) & 7], 10);
}

void diff_sim_run(es_machine *m, const uint8_t *insn, size_t len, const diff_state *in,
                  const uint8_t *data, const uint8_t *stack, diff_result *out)
{
    int mode = m->mode;
    uint64_t wmask = mode == ES_MODE_64 ? ~0ull : 0xffffffffull;
    memset(out, 0, sizeof *out);
    for (int i = 0; i < 16; i++)
        m->gpr[i] = in->gpr[i] & wmask;
    m->rflags = (in->rflags & 0x3f7fd7) | 0x202; /* IF and bit 1 set, as natively */
    m->mxcsr = in->mxcsr;
    memcpy(m->xmm, in->xmm, sizeof m->xmm);
    memcpy(m->ymmh, in->ymmh, sizeof m->ymmh);
    x87_in(m, in->fx);
    m->fault.vector = 0;
    m->unimpl_op = 0;
    if (es_copy_to_guest(m, DIFF_DATA, data, DIFF_DATA_SIZE) ||
        es_copy_to_guest(m, DIFF_STACK, stack, DIFF_STACK_SIZE) || put_code(m, insn, len)) {
        out->fault = 256; /* harness problem */
        return;
    }
    m->rip = EST_CODE;
    /* A REP string instruction may retire one iteration per step with RIP
     * unchanged; step until RIP leaves the instruction. */
    int rc = ES_OK;
    for (int n = 0; n < 100000 && m->rip == EST_CODE; n++) {
        rc = es_step(m);
        if (rc != ES_OK)
            break;
    }
    if (rc == ES_FAULT) {
        out->fault = m->fault.vector + 1;
        out->unimpl = m->fault.vector == 6 /* #UD */ && m->unimpl_op != 0 &&
                      m->unimpl_op != ES_OP_INVALID;
    } else if (rc != ES_OK) {
        out->fault = 257;
    }
    for (int i = 0; i < 16; i++)
        out->st.gpr[i] = m->gpr[i] & wmask;
    out->st.rflags = m->rflags;
    out->st.mxcsr = m->mxcsr;
    memcpy(out->st.xmm, m->xmm, sizeof out->st.xmm);
    memcpy(out->st.ymmh, m->ymmh, sizeof out->st.ymmh);
    x87_out(m, out->st.fx);
    es_copy_from_guest(m, out->data, DIFF_DATA, DIFF_DATA_SIZE);
    es_copy_from_guest(m, out->stack, DIFF_STACK, DIFF_STACK_SIZE);
}
