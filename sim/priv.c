/* priv.c - the privileged architecture with a guest kernel (see priv.h):
 * IDT event delivery, SYSCALL/SYSRET, SYSENTER/SYSEXIT, LTR/LLDT and the
 * VMCALL hypercalls.
 *
 * Selector and descriptor layouts are the IA-32e ones (SDM Vol. 3A, 3.4.5,
 * 6.14.1, 7.7).  Every instruction checks everything before it changes
 * anything, so faults stay precise.
 */
#include "priv.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "es_syscall_names.h" /* generated: ES_NR64_*, ES_NR32_* */
#include "fault.h"
#include "hypercall.h"
#include "ops.h"
#include "seg.h"

#define EFER_SCE 0x1ull
#define VENDOR_AMD 1

/* Flat descriptor caches that SYSCALL/SYSRET/SYSENTER/SYSEXIT load
 * without reading the GDT (SDM Vol. 2B, SYSCALL: "the processor does not
 * ensure that the descriptors ... correspond to the selectors"): access
 * byte | flags nibble << 8 as in es_segreg.attr. */
#define ATTR_CS64_DPL0 0xa9b /* G, L; present code exec/read accessed, DPL 0 */
#define ATTR_SS_DPL0 0xc93   /* G, D/B; present data read/write accessed, DPL 0 */
#define ATTR_CS64_DPL3 0xafb
#define ATTR_CS32_DPL3 0xcfb /* G, D/B */
#define ATTR_SS_DPL3 0xcf3

static int canonical(uint64_t v)
{
    return (uint64_t)((int64_t)(v << 16) >> 16) == v;
}

static int ud(es_machine *m)
{
    m->unimpl_op = 0; /* an architectural #UD, not a gap in the model */
    return es_raise(m, ES_VEC_UD, 0);
}

/* Loads CS and SS with fixed flat caches and switches CPL and mode. */
static void load_flat(es_machine *m, uint16_t cs, uint16_t cs_attr, uint16_t ss, uint16_t ss_attr,
                      int cpl, int mode)
{
    m->seg[ES_SEG_CS] = (es_segreg){.sel = cs, .attr = cs_attr, .limit = 0xffffffff, .base = 0};
    m->seg[ES_SEG_SS] = (es_segreg){.sel = ss, .attr = ss_attr, .limit = 0xffffffff, .base = 0};
    es_switch_mode(m, cpl, mode);
    /* SS was just given its flat base; es_switch_mode may have reread it */
    m->seg[ES_SEG_SS].base = 0;
    es_update_ac(m);
}

/* ---- supervisor-mode accesses (IDT, TSS, the handler's stack) ---- */

/* Reads or writes guest linear memory as the CPU's implicit supervisor
 * accesses do during event delivery: CPL 0 permissions and 64-bit
 * canonical checks, whatever the current CPL and mode.  Faults are
 * recorded (#PF with a supervisor error code) and -1 returned. */
static int sup_access(es_machine *m, uint64_t va, void *buf, unsigned n, int write)
{
    uint8_t cpl = m->cpl, mode = m->mode, need_u = m->need_u;
    bool ac = m->ac_check;
    m->cpl = 0;
    m->mode = ES_MODE_64;
    m->need_u = 0;
    m->ac_check = false; /* supervisor accesses are never alignment-checked */
    int r = write ? es_write(m, va, buf, n) : es_read(m, va, buf, n);
    m->cpl = cpl;
    m->mode = mode;
    m->need_u = need_u;
    if (ac) {
        /* pages filled into the TLB meanwhile would skip the #AC check */
        m->ac_check = true;
        es_tlb_flush(m);
    }
    return r;
}

/* ---- event delivery (SDM Vol. 3A, 6.12, 6.14) ---- */

/* Exception classes for double-fault detection (SDM Vol. 3A, Table 6-4). */
enum { BENIGN, CONTRIBUTORY, PAGE_FAULT };

static int vector_class(int v)
{
    switch (v) {
    case ES_VEC_DE: case ES_VEC_TS: case ES_VEC_NP: case ES_VEC_SS: case ES_VEC_GP:
        return CONTRIBUTORY;
    case ES_VEC_PF:
        return PAGE_FAULT;
    default:
        return BENIGN;
    }
}

/* Reads the 8-byte stack pointer at `off` in the 64-bit TSS (RSP0..2 at
 * 4, 12, 20; IST1..7 at 0x24..0x54; SDM Vol. 3A, Figure 7-11). */
static int tss_rsp(es_machine *m, unsigned off, uint32_t ext, uint64_t *rsp)
{
    uint32_t tss_err = (m->tr.sel & 0xfffc) | ext;
    if ((m->tr.sel & ~3u) == 0 || off + 7 > m->tr.limit)
        return es_fail_fault(m, ES_VEC_TS, tss_err);
    return sup_access(m, m->tr.base + off, rsp, 8, 0);
}

/* Delivers vector `vec` through the IDT.  `soft`: INT n / INT3 / INTO
 * (gate DPL checked, EXT = 0, no error code).  On success returns 0 with
 * *target the handler's RIP and the machine in the handler's context
 * except RIP; on failure returns -1 with the fault recorded and nothing
 * changed.  SDM Vol. 2A INT n pseudocode, IA-32e paths. */
static int deliver(es_machine *m, unsigned vec, int soft, int has_err, uint32_t err,
                   uint64_t ret_rip, uint64_t *target)
{
    uint32_t ext = soft ? 0 : 1;
    uint32_t idt_err = vec * 8 + 2 + ext; /* IDT bit, EXT (SDM Vol. 3A, 6.13) */
    if (vec * 16 + 15 > m->idtr.limit)
        return es_fail_fault(m, ES_VEC_GP, idt_err);
    uint64_t g[2];
    if (sup_access(m, m->idtr.base + vec * 16, g, 16, 0))
        return -1;
    /* 64-bit gate (SDM Vol. 3A, Figure 6-8): offset 15:0, selector, IST,
     * type (0xE interrupt, 0xF trap), DPL, P, offset 31:16, offset 63:32 */
    unsigned type = (unsigned)(g[0] >> 40) & 0x1f; /* with the S bit: must be 0 */
    unsigned gdpl = (unsigned)(g[0] >> 45) & 3;
    unsigned ist = (unsigned)(g[0] >> 32) & 7;
    uint16_t sel = (uint16_t)(g[0] >> 16);
    uint64_t off = (g[0] & 0xffff) | ((g[0] >> 32) & 0xffff0000ull) | (g[1] << 32);
    if (type != 0xe && type != 0xf)
        return es_fail_fault(m, ES_VEC_GP, idt_err);
    if (soft && gdpl < m->cpl) /* INT n / INT3 / INTO only */
        return es_fail_fault(m, ES_VEC_GP, idt_err);
    if (!((g[0] >> 47) & 1))
        return es_fail_fault(m, ES_VEC_NP, idt_err);

    /* the target code segment: a present 64-bit code segment with DPL <=
     * CPL */
    uint64_t cd;
    if ((sel & ~3u) == 0)
        return es_fail_fault(m, ES_VEC_GP, ext);
    if (es_desc_read(m, sel, &cd))
        return es_fail_fault(m, ES_VEC_GP, (sel & 0xfffc) | ext);
    unsigned acc = (unsigned)(cd >> 40) & 0xff, cdpl = (acc >> 5) & 3;
    unsigned fl = (unsigned)(cd >> 52) & 0xf;
    if ((acc & (ES_DESC_S | ES_DESC_CODE)) != (ES_DESC_S | ES_DESC_CODE) || cdpl > m->cpl ||
        (fl & 6) != 2 /* L = 1, D = 0 */)
        return es_fail_fault(m, ES_VEC_GP, (sel & 0xfffc) | ext);
    if (!(acc & ES_DESC_P))
        return es_fail_fault(m, ES_VEC_NP, (sel & 0xfffc) | ext);
    int conforming = (acc & ES_DESC_C) != 0;
    unsigned ncpl = conforming ? m->cpl : cdpl;
    if (!canonical(off))
        return es_fail_fault(m, ES_VEC_GP, ext);

    /* the stack: IST if the gate names one, else TSS.RSPn on a privilege
     * change, else the current one; aligned to 16 bytes (SDM Vol. 3A,
     * 6.14.2-6.14.5) */
    uint64_t rsp;
    if (ist)
        TRY(tss_rsp(m, 0x24 + (ist - 1) * 8, ext, &rsp));
    else if (ncpl < m->cpl)
        TRY(tss_rsp(m, 4 + ncpl * 8, ext, &rsp));
    else
        rsp = m->gpr[ES_RSP];
    if (!canonical(rsp))
        return es_fail_fault(m, ES_VEC_SS, ext);
    rsp &= ~0xfull;

    /* the frame: SS, RSP, RFLAGS, CS, RIP and the error code, 8 bytes each
     * (always SS:RSP in IA-32e mode).  RF is not modelled: the pushed
     * RFLAGS is the current value. */
    uint64_t f[6];
    int n = 0;
    if (has_err)
        f[n++] = err;
    f[n++] = ret_rip;
    f[n++] = m->seg[ES_SEG_CS].sel;
    f[n++] = m->rflags;
    f[n++] = m->gpr[ES_RSP];
    f[n++] = m->seg[ES_SEG_SS].sel;
    uint64_t frame = rsp - (uint64_t)n * 8;
    if (!canonical(frame)) {
        return es_fail_fault(m, ES_VEC_SS, ext);
    }
    if (sup_access(m, frame, f, (unsigned)n * 8, 1)) {
        if (m->fault.vector == ES_VEC_GP) /* non-canonical stack */
            m->fault.vector = ES_VEC_SS;
        return -1;
    }

    /* commit */
    int old_cpl = m->cpl;
    if (ncpl < (unsigned)old_cpl) /* a null SS with RPL = new CPL (SDM 6.14.4) */
        m->seg[ES_SEG_SS] = (es_segreg){.sel = (uint16_t)ncpl};
    es_commit_cs_cpl(m, (uint16_t)((sel & 0xfffc) | ncpl), (int)ncpl, ES_MODE_64);
    m->gpr[ES_RSP] = frame;
    m->rflags &= ~(uint64_t)(ES_TF | ES_NT | ES_RF | ES_VM);
    if (type == 0xe) /* interrupt gate: IF cleared; trap gate: kept */
        m->rflags &= ~(uint64_t)ES_IF;
    es_update_ac(m);
    *target = off;
    return 0;
}

int es_soft_int(es_machine *m, unsigned vector)
{
    uint64_t target;
    if (deliver(m, vector & 0xff, 1, 0, 0, m->nrip, &target))
        return ES_FAULT;
    m->nrip = target;
    return ES_OK;
}

int es_external_interrupt(es_machine *m, unsigned vector)
{
    if (!m->has_kernel || !(m->rflags & ES_IF))
        return 0; /* masked: the request waits (here: for the next tick) */
    for (int i = 0; i < m->nobs; i++) /* timing and phases see an entry */
        if (m->obs[i].exception)
            m->obs[i].exception(m->obs[i].ctx, m, (int)(vector & 0xff), 0);
    uint64_t target;
    /* an interrupt arrives between instructions: the saved RIP is the next
     * one to run; a fault while delivering it is handled as an exception */
    if (deliver(m, vector & 0xff, 0, 0, 0, m->rip, &target))
        return es_deliver_fault(m) ? -1 : 1;
    m->rip = target;
    return 1;
}

int es_deliver_fault(es_machine *m)
{
    int vec = m->fault.vector;
    uint32_t err = m->fault.error;
    int has_err = m->fault.has_error;
    uint64_t rip = m->fault.rip, first_rip = m->fault.rip;
    int first = vec;
    /* each round either delivers, escalates (at most #DF, then triple
     * fault), or replaces a benign event by the fault its delivery caused */
    for (int round = 0; round < 8; round++) {
        if (vec == ES_VEC_PF)
            m->cr2 = m->fault.addr; /* set when the fault is detected */
        uint64_t target;
        if (deliver(m, (unsigned)vec, 0, has_err, err, rip, &target) == 0) {
            m->rip = target;
            return 0;
        }
        int v2 = m->fault.vector;
        if (vec == ES_VEC_DF)
            break;
        int c1 = vector_class(vec), c2 = vector_class(v2);
        if ((c1 == CONTRIBUTORY && c2 == CONTRIBUTORY) || (c1 == PAGE_FAULT && c2 != BENIGN)) {
            /* SDM Vol. 3A, Table 6-5: double fault, error code 0 */
            vec = ES_VEC_DF;
            err = 0;
            has_err = 1;
            if (v2 == ES_VEC_PF)
                m->cr2 = m->fault.addr;
        } else {
            vec = v2;
            err = m->fault.error;
            has_err = m->fault.has_error;
        }
    }
    snprintf(m->message, sizeof m->message,
             "triple fault: %s at rip=0x%llx could not be delivered (%s while delivering #DF, "
             "error code 0x%x)",
             es_vector_name(first), (unsigned long long)first_rip,
             es_vector_name(m->fault.vector), m->fault.error);
    m->stop = ES_STOP_ERROR;
    return -1;
}

/* ---- SYSCALL / SYSRET (SDM Vol. 2B) ---- */

/* SYSCALL with a guest kernel.  64-bit mode: RCX = next RIP, R11 =
 * RFLAGS, RFLAGS &= ~IA32_FMASK, CS = STAR[47:32] & FFFCh (flat 64-bit,
 * DPL 0), SS = STAR[47:32] + 8, RIP = LSTAR, CPL 0.  Compatibility mode:
 * Intel raises #UD (SDM: "IF (CS.L != 1) ... THEN #UD"); AMD enters at
 * CSTAR with ECX = next EIP (AMD APM Vol. 3, SYSCALL, long mode).
 * #UD with EFER.SCE clear on both. */
int es_syscall_arch(es_machine *m, const es_insn *d)
{
    if (!(m->efer & EFER_SCE))
        return ud(m);
    int compat = m->mode != ES_MODE_64;
    if (compat && m->vendor != VENDOR_AMD)
        return ud(m);
    uint64_t fl = m->rflags;
    m->gpr[ES_RCX] = compat ? (uint32_t)m->nrip : m->nrip;
    m->gpr[ES_R11] = fl & ~(uint64_t)ES_RF;
    m->rflags = (fl & ~m->msr.sfmask & ~(uint64_t)ES_RF) | 2;
    uint16_t cs = (uint16_t)(m->msr.star >> 32);
    load_flat(m, cs & 0xfffc, ATTR_CS64_DPL0, (uint16_t)(cs + 8), ATTR_SS_DPL0, 0, ES_MODE_64);
    m->nrip = compat ? m->msr.cstar : m->msr.lstar;
    return ES_OK;
}

/* SYSRET (CPL 0, 64-bit mode): RIP = RCX with REX.W (64-bit CS =
 * STAR[63:48] + 16), else EIP = ECX (compatibility CS = STAR[63:48]); SS
 * = STAR[63:48] + 8, RPL 3; RFLAGS = (R11 & 3C7FD7H) | 2 (RF and VM
 * cleared, bit 1 set); CPL 3.  Intel raises #GP(0) in ring 0 for a
 * non-canonical RCX (SDM SYSRET); AMD does not check, and the fetch at
 * the bad address then faults in ring 3 (AMD APM SYSRET).  AMD also leaves
 * SS's hidden attributes as they were (Linux's X86_BUG_SYSRET_SS_ATTRS);
 * the model loads a flat DPL-3 SS on both. */
int es_op_sysret(es_machine *m, const es_insn *d)
{
    if (!(m->efer & EFER_SCE) || m->mode != ES_MODE_64)
        return ud(m);
    if (m->cpl != 0)
        return es_raise(m, ES_VEC_GP, 0);
    int rexw = (d->pfx & ES_PFX_REXW) != 0;
    uint64_t rip = rexw ? m->gpr[ES_RCX] : (uint32_t)m->gpr[ES_RCX];
    if (rexw && m->vendor != VENDOR_AMD && !canonical(rip))
        return es_raise(m, ES_VEC_GP, 0);
    uint16_t base = (uint16_t)(m->msr.star >> 48);
    uint16_t cs = (uint16_t)((rexw ? base + 16 : base) | 3);
    m->rflags = (m->gpr[ES_R11] & 0x3c7fd7) | 2;
    load_flat(m, cs, rexw ? ATTR_CS64_DPL3 : ATTR_CS32_DPL3, (uint16_t)((base + 8) | 3),
              ATTR_SS_DPL3, 3, rexw ? ES_MODE_64 : ES_MODE_32);
    m->nrip = rip;
    return ES_OK;
}

/* ---- SYSENTER / SYSEXIT (SDM Vol. 2B) ---- */

/* SYSENTER with a guest kernel.  Intel allows it in 64-bit and
 * compatibility mode; AMD raises #UD in long mode (AMD APM SYSENTER).
 * #GP(0) if IA32_SYSENTER_CS[15:2] is 0.  In IA-32e mode: CS =
 * SYSENTER_CS & FFFCh (flat 64-bit, DPL 0), SS = CS + 8, RIP =
 * SYSENTER_EIP, RSP = SYSENTER_ESP, VM, IF and RF cleared, CPL 0.  Nothing
 * is saved: the kernel finds the user's stack in EBP by convention. */
int es_sysenter_arch(es_machine *m, const es_insn *d)
{
    if (m->vendor == VENDOR_AMD)
        return ud(m);
    uint16_t cs = (uint16_t)m->msr.sysenter_cs & 0xfffc;
    if (cs == 0)
        return es_raise(m, ES_VEC_GP, 0);
    m->rflags &= ~(uint64_t)(ES_VM | ES_IF | ES_RF);
    load_flat(m, cs, ATTR_CS64_DPL0, (uint16_t)(cs + 8), ATTR_SS_DPL0, 0, ES_MODE_64);
    m->gpr[ES_RSP] = m->msr.sysenter_esp;
    m->nrip = m->msr.sysenter_eip;
    return ES_OK;
}

/* SYSEXIT (CPL 0): with REX.W to 64-bit mode (CS = SYSENTER_CS + 32, SS
 * = SYSENTER_CS + 40, RIP = RDX, RSP = RCX; #GP(0) unless both are
 * canonical), else to compatibility mode (CS = SYSENTER_CS + 16, SS =
 * SYSENTER_CS + 24, EIP = EDX, ESP = ECX); RPL 3, CPL 3, RFLAGS kept.
 * #GP(0) at CPL != 0 or with SYSENTER_CS[15:2] = 0.  AMD: #UD in long
 * mode, as SYSENTER. */
int es_op_sysexit(es_machine *m, const es_insn *d)
{
    if (m->vendor == VENDOR_AMD) /* invalid in long mode, before the CPL check */
        return ud(m);
    uint16_t base = (uint16_t)m->msr.sysenter_cs & 0xfffc;
    if (m->cpl != 0 || base == 0)
        return es_raise(m, ES_VEC_GP, 0);
    int rexw = (d->pfx & ES_PFX_REXW) != 0;
    uint64_t rip = m->gpr[ES_RDX], rsp = m->gpr[ES_RCX];
    if (rexw && (!canonical(rip) || !canonical(rsp)))
        return es_raise(m, ES_VEC_GP, 0);
    if (!rexw) {
        rip = (uint32_t)rip;
        rsp = (uint32_t)rsp;
    }
    uint16_t cs = (uint16_t)((base + (rexw ? 32 : 16)) | 3);
    load_flat(m, cs, rexw ? ATTR_CS64_DPL3 : ATTR_CS32_DPL3, (uint16_t)(cs + 8), ATTR_SS_DPL3, 3,
              rexw ? ES_MODE_64 : ES_MODE_32);
    m->gpr[ES_RSP] = rsp;
    m->nrip = rip;
    return ES_OK;
}

/* ---- LTR / LLDT ---- */

/* LTR r/m16 (SDM Vol. 2A LTR; Vol. 3A 7.2.3): CPL 0; the selector must
 * name an available 64-bit TSS in the GDT, 16 bytes in IA-32e mode
 * (#GP(sel) otherwise, #NP(sel) if not present); the descriptor is marked
 * busy. */
int es_op_ltr(es_machine *m, const es_insn *d)
{
    if (m->cpl != 0)
        return es_raise(m, ES_VEC_GP, 0);
    uint64_t v, lo, hi;
    TRY(es_rd(m, d, 0, &v));
    uint16_t sel = (uint16_t)v;
    if ((sel & ~3u) == 0)
        return es_raise(m, ES_VEC_GP, 0);
    if ((sel & 4) || es_desc_read(m, sel, &lo) || es_desc_read(m, (uint16_t)(sel + 8), &hi))
        return es_raise(m, ES_VEC_GP, sel & 0xfffc);
    unsigned acc = (unsigned)(lo >> 40) & 0xff;
    if ((acc & 0x1f) != 0x09) /* S = 0, type 9: available 64-bit TSS */
        return es_raise(m, ES_VEC_GP, sel & 0xfffc);
    if (!(acc & ES_DESC_P))
        return es_raise(m, ES_VEC_NP, sel & 0xfffc);
    es_segreg tr;
    es_desc_unpack(lo, sel, &tr);
    tr.base |= (hi & 0xffffffffull) << 32;
    if (!canonical(tr.base))
        return es_raise(m, ES_VEC_GP, sel & 0xfffc);
    if (es_desc_set_access(m, sel, (uint8_t)(acc | 0x02))) /* busy */
        return es_raise(m, ES_VEC_GP, sel & 0xfffc);
    tr.attr |= 0x02;
    m->tr = tr;
    return ES_OK;
}

/* LLDT: only the null selector (no LDT), which Linux loads at boot. */
int es_op_lldt(es_machine *m, const es_insn *d)
{
    if (m->cpl != 0)
        return es_raise(m, ES_VEC_GP, 0);
    uint64_t v;
    TRY(es_rd(m, d, 0, &v));
    if (((uint16_t)v & ~3u) != 0)
        return es_unimplemented(m, d);
    m->ldtr = (es_segreg){.sel = (uint16_t)v};
    return ES_OK;
}

/* ---- VMCALL hypercalls (hypercall.h) ---- */

/* Copies a NUL-terminated guest string (at most n-1 bytes). */
static void guest_str(es_machine *m, uint64_t va, char *out, size_t n)
{
    size_t i = 0;
    for (; i + 1 < n; i++) {
        char c;
        if (es_copy_from_guest(m, &c, va + i, 1) || c == 0)
            break;
        out[i] = c;
    }
    out[i] = 0;
}

/* syscall numbers from the generated tables (es_syscall_names.h):
 * arch_prctl is a common row (x86-64 and x32) */
#define NR_ARCH_PRCTL ES_NR64_arch_prctl
#define NR_SET_THREAD_AREA_64 ES_NR64_set_thread_area
#define NR_SET_THREAD_AREA_32 ES_NR32_set_thread_area
#define GDT_TLS_MIN 12
#define GDT_TLS_MAX 14

/* Copies the TLS descriptors the host keeps in m->gdt[12..14] into the
 * guest kernel's GDT, as Linux's load_TLS does before returning to user
 * mode, so a segment load of a TLS selector finds them. */
static void sync_tls(es_machine *m)
{
    if (!m->gdtr.limit)
        return;
    for (int i = GDT_TLS_MIN; i <= GDT_TLS_MAX; i++)
        if ((unsigned)i * 8 + 7 <= m->gdtr.limit)
            es_copy_to_guest(m, m->gdtr.base + (uint64_t)i * 8, &m->gdt[i], 8);
}

static int hc_syscall(es_machine *m)
{
    int abi = (int)m->gpr[ES_RDI];
    uint64_t nr = m->gpr[ES_RSI], args[6];
    if (abi < ES_ABI_X64 || abi > ES_ABI_X32 || (uint64_t)abi != m->gpr[ES_RDI]) {
        m->gpr[ES_RAX] = (uint64_t)-22; /* -EINVAL */
        return ES_OK;
    }
    if (es_copy_from_guest(m, args, m->gpr[ES_RDX], sizeof args)) {
        m->gpr[ES_RAX] = (uint64_t)-14; /* -EFAULT */
        return ES_OK;
    }
    /* After the entry code's SWAPGS the user's GS base is in
     * IA32_KERNEL_GS_BASE; arch_prctl(ARCH_SET_GS/ARCH_GET_GS) must see
     * and change that one (Linux writes the MSR the same way), and so must
     * set_thread_area when it reloads a GS holding the selector it changed
     * (do_set_thread_area's load_gs_index) */
    bool sta = (abi == ES_ABI_I386 && nr == NR_SET_THREAD_AREA_32) ||
               (abi == ES_ABI_X64 && nr == NR_SET_THREAD_AREA_64);
    int swap = sta || (abi != ES_ABI_I386 && (nr & ~ES_X32_SYSCALL_BIT) == NR_ARCH_PRCTL);
    uint64_t t;
    if (swap) {
        t = m->seg[ES_SEG_GS].base;
        m->seg[ES_SEG_GS].base = m->msr.kernel_gs_base;
        m->msr.kernel_gs_base = t;
    }
    m->stop = ES_STOP_NONE;
    /* no host services: the call does not exist */
    int64_t r = m->hooks.host_call ? m->hooks.host_call(m, abi, nr, args) : -ENOSYS;
    if (swap) {
        t = m->seg[ES_SEG_GS].base;
        m->seg[ES_SEG_GS].base = m->msr.kernel_gs_base;
        m->msr.kernel_gs_base = t;
    }
    if (sta)
        sync_tls(m);
    if (m->stop != ES_STOP_NONE) /* exit, a fatal signal */
        return ES_STOP;
    m->gpr[ES_RAX] = (uint64_t)r;
    return ES_OK;
}

/* ES_HC_PUTS: the kernel's log line(s) to the run's log, read in chunks up
 * to the length the kernel gives (64 KiB at most: a runaway string stops);
 * an unreadable byte ends the text, as a NUL would. */
static int hc_puts(es_machine *m)
{
    char buf[256];
    uint64_t va = m->gpr[ES_RDI], left = m->gpr[ES_RSI];
    if (left > 0x10000)
        left = 0x10000;
    while (left) {
        size_t n = 0, want = left < sizeof buf ? (size_t)left : sizeof buf;
        while (n < want && !es_copy_from_guest(m, &buf[n], va + n, 1) && buf[n])
            n++;
        if (n && m->hooks.kernel_log)
            m->hooks.kernel_log(m, buf, n);
        if (n < want)
            break;
        va += n;
        left -= n;
    }
    return ES_OK;
}

/* ES_HC_TASK: fills the kernel's struct es_task_info (hypercall.h). */
static int hc_task(es_machine *m)
{
    struct es_task_info t = {0};
    if (!m->hooks.task_info || m->hooks.task_info(m, &t.pid, &t.tgid, t.comm)) {
        m->gpr[ES_RAX] = (uint64_t)-38; /* -ENOSYS */
        return ES_OK;
    }
    /* a kernel pointer the kernel chose: a failure is its bug, not the user's */
    if (es_copy_to_guest(m, m->gpr[ES_RDI], &t, sizeof t)) {
        snprintf(m->message, sizeof m->message, "guest kernel panic: ES_HC_TASK to a bad address");
        return es_stop(m, ES_STOP_ERROR);
    }
    m->gpr[ES_RAX] = 0;
    return ES_OK;
}

/* VMCALL (0F 01 C1): outside VMX operation the CPU raises #UD (SDM Vol. 2B
 * VMCALL); here it is the guest kernel's way to the simulator, at CPL 0
 * with a kernel loaded.  Unknown services return -ENOSYS in RAX. */
int es_op_vmcall(es_machine *m, const es_insn *d)
{
    if (!m->has_kernel || m->cpl != 0)
        return ud(m);
    char msg[200];
    switch ((uint32_t)m->gpr[ES_RAX]) {
    case ES_HC_SYSCALL:
        return hc_syscall(m);
    case ES_HC_SIGNAL:
        es_fault_report(m, (int)(m->gpr[ES_RDI] & 0xff), (uint32_t)m->gpr[ES_RSI],
                        m->gpr[ES_RDX], m->gpr[ES_RCX]);
        /* other tasks go on, unless entrysim itself lacks the instruction */
        if (m->hooks.task_end && !(m->unimpl_op && m->unimpl_op != ES_OP_INVALID))
            m->hooks.task_end(m, m->signal);
        return m->stop != ES_STOP_NONE ? ES_STOP : ES_OK;
    case ES_HC_SCHED: {
        const uint64_t a[4] = {m->gpr[ES_RDI], m->gpr[ES_RSI], m->gpr[ES_RDX], m->gpr[ES_RCX]};
        m->gpr[ES_RAX] = m->hooks.sched_op ? (uint64_t)m->hooks.sched_op(m, a) : 0;
        return m->stop != ES_STOP_NONE ? ES_STOP : ES_OK;
    }
    case ES_HC_PANIC:
        guest_str(m, m->gpr[ES_RDI], msg, sizeof msg);
        snprintf(m->message, sizeof m->message, "guest kernel panic: %s", msg);
        return es_stop(m, ES_STOP_ERROR);
    case ES_HC_PUTS:
        return hc_puts(m);
    case ES_HC_TASK:
        return hc_task(m);
    case ES_HC_SIGOP: {
        const uint64_t a[5] = {m->gpr[ES_RDI], m->gpr[ES_RSI], m->gpr[ES_RDX], m->gpr[ES_RCX],
                               m->gpr[ES_R8]};
        m->gpr[ES_RAX] = m->hooks.signal_op ? (uint64_t)m->hooks.signal_op(m, a) : (uint64_t)-38;
        return m->stop != ES_STOP_NONE ? ES_STOP : ES_OK;
    }
    default:
        m->gpr[ES_RAX] = (uint64_t)-38; /* -ENOSYS */
        return ES_OK;
    }
}
