/* system.c - CPUID, RDTSC/RDTSCP, XGETBV, the NOP family (NOP, PAUSE,
 * ENDBR, fences, prefetches, CLFLUSH), UD0/1/2, INT3/INT n/INTO, HLT,
 * SYSCALL/SYSENTER in --direct mode, and the privileged system
 * instructions (#GP(0) at CPL 3).  With a guest kernel, INT n, SYSCALL and
 * SYSENTER go to priv.c, which also has SYSRET, SYSEXIT, LTR, LLDT and
 * VMCALL.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "guest_cpuid.h"
#include "ops.h"
#include "priv.h"
#include "seg.h"


/* ---- no-ops ---- */

int op_nop(es_machine *m, const es_insn *d)
{
    return ES_OK;
}

/* CLFLUSH/CLFLUSHOPT/CLWB: no cache to flush, but the access is checked
 * like a one-byte read (SDM CLFLUSH: #PF, "treated as a load"). */
int op_clflush(es_machine *m, const es_insn *d)
{
    uint64_t v;
    TRY(es_load(m, es_lin(m, d, &d->o[0]), 1, &v));
    return ES_OK;
}

int op_ud(es_machine *m, const es_insn *d)
{
    m->unimpl_op = 0; /* a real #UD, not a gap in the model */
    return es_raise(m, ES_VEC_UD, 0);
}

/* Instructions that need CPL 0 and are not modelled further. */
int op_priv(es_machine *m, const es_insn *d)
{
    if (m->cpl != 0)
        return es_raise(m, ES_VEC_GP, 0);
    return es_unimplemented(m, d);
}

/* ---- CPUID (the table is sim/guest_cpuid.c) ---- */

/* IA32_SPEC_CTRL (0x48) and IA32_PRED_CMD (0x49) exist when CPUID says so
 * (the same bits the guest reads); without them RDMSR/WRMSR #GP. */
static bool spec_ctrl_advertised(const es_machine *m)
{
    uint32_t r[4];
    if (m->vendor == 1) {
        es_cpuid(m, 0x80000008, 0, r);
        return (r[1] & CPUIDX8_EBX_AMD_SPEC_CTRL) == CPUIDX8_EBX_AMD_SPEC_CTRL;
    }
    es_cpuid(m, 7, 0, r);
    return (r[3] & CPUID7_EDX_INTEL_SPEC_CTRL) != 0;
}

int op_cpuid(es_machine *m, const es_insn *d)
{
    uint32_t r[4];
    es_cpuid(m, (uint32_t)m->gpr[ES_RAX], (uint32_t)m->gpr[ES_RCX], r);
    m->gpr[ES_RAX] = r[0];
    m->gpr[ES_RBX] = r[1];
    m->gpr[ES_RCX] = r[2];
    m->gpr[ES_RDX] = r[3];
    return ES_OK;
}

/* ---- time-stamp counter ---- */

static uint64_t tsc_now(const es_machine *m)
{
    if (m->tsc_model)
        return m->model_cycles;
    if (m->deterministic)
        return 3 * m->icount; /* a 3 GHz part retiring one insn per cycle */
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec) * 3;
}

/* ---- RDRAND / RDSEED ---- */

/* The next value of the machine's stream (splitmix64 over m->rng).  Not a
 * cryptographic source: a simulated program gets reproducible values
 * under --deterministic, host-seeded ones otherwise. */
static uint64_t rng_next(es_machine *m)
{
    uint64_t z = (m->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* RDRAND/RDSEED r16/r32/r64: a value is always ready, so CF = 1 and OF,
 * SF, ZF, AF, PF = 0 (SDM Vol. 2B RDRAND, RDSEED). */
int op_rdrand(es_machine *m, const es_insn *d)
{
    TRY(es_wr(m, d, 0, rng_next(m) & es_mask(d->o[0].size)));
    m->rflags = (m->rflags & ~(uint64_t)ES_ARITH_FLAGS) | ES_CF;
    return ES_OK;
}

/* RDTSC/RDTSCP: #GP(0) at CPL > 0 when CR4.TSD is set. */
int op_rdtsc(es_machine *m, const es_insn *d)
{
    if ((m->cr4 & 4) && m->cpl != 0)
        return es_raise(m, ES_VEC_GP, 0);
    uint64_t t = tsc_now(m);
    m->gpr[ES_RAX] = (uint32_t)t;
    m->gpr[ES_RDX] = t >> 32;
    if (d->op == ES_OP_RDTSCP)
        m->gpr[ES_RCX] = (uint32_t)m->msr.tsc_aux;
    return ES_OK;
}

/* XGETBV: only XCR0 exists (XGETBV with ECX = 1 is not reported). */
int op_xgetbv(es_machine *m, const es_insn *d)
{
    if ((uint32_t)m->gpr[ES_RCX] != 0)
        return es_raise(m, ES_VEC_GP, 0);
    m->gpr[ES_RAX] = (uint32_t)m->xcr0;
    m->gpr[ES_RDX] = m->xcr0 >> 32;
    return ES_OK;
}

int op_xsetbv(es_machine *m, const es_insn *d)
{
    if (m->cpl != 0)
        return es_raise(m, ES_VEC_GP, 0);
    uint64_t v = (m->gpr[ES_RAX] & 0xffffffffull) | (m->gpr[ES_RDX] << 32);
    /* x87 must stay enabled, only x87 | SSE | AVX exist, and AVX needs SSE
     * (SDM Vol. 1, 13.3 "Enabling the XSAVE feature set") */
    if ((uint32_t)m->gpr[ES_RCX] != 0 || !(v & 1) || (v & ~7ull) || (v & 6) == 4)
        return es_raise(m, ES_VEC_GP, 0);
    m->xcr0 = v;
    return ES_OK;
}

/* ---- interrupts and system calls ----
 * Without a guest kernel (--direct) INT 0x80, SYSCALL and SYSENTER reach
 * the host services here and the other vectors stop the run; with one
 * (m->has_kernel) they are the architecture's, through the guest's IDT and
 * MSRs (priv.c). */

/* INT3 and INTO are software interrupts (gate DPL checked, the saved RIP
 * is the next instruction): Linux's #BP and #OF gates have DPL 3. */
int op_int3(es_machine *m, const es_insn *d)
{
    if (m->has_kernel)
        return es_soft_int(m, ES_VEC_BP);
    return es_raise(m, ES_VEC_BP, 0);
}

/* INT1 (ICEBP, F1): #DB as a trap, the saved RIP the next instruction's,
 * delivered like a hardware exception (no gate DPL check, SDM Vol. 3A
 * 6.12.1.2); Linux's do_debug sends SIGTRAP. */
int op_int1(es_machine *m, const es_insn *d)
{
    es_raise(m, ES_VEC_DB, 0);
    m->fault.rip = m->nrip;
    return ES_FAULT;
}

/* INTO (32-bit mode only; the decoder rejects it in 64-bit mode). */
int op_into(es_machine *m, const es_insn *d)
{
    if (m->rflags & ES_OF)
        return m->has_kernel ? es_soft_int(m, ES_VEC_OF) : es_raise(m, ES_VEC_OF, 0);
    return ES_OK;
}

/* After an i386 call made from 64-bit mode (int 0x80 is allowed there) the
 * kernel returns a long: error codes come back sign-extended in RAX. */
static void fix_i386_result(es_machine *m)
{
    if (m->mode == ES_MODE_64 && (uint32_t)m->gpr[ES_RAX] >= 0xfffff001u)
        m->gpr[ES_RAX] = (uint64_t)(int64_t)(int32_t)m->gpr[ES_RAX];
}

/* --direct: a system call goes straight to host services (installed as a
 * hook by es_host_init, so the families do not depend on sim/host); with
 * none, the call does not exist. */
static int direct_syscall(es_machine *m, int abi)
{
    if (m->hooks.host_syscall)
        return m->hooks.host_syscall(m, abi);
    m->gpr[ES_RAX] = (uint64_t)-ENOSYS;
    return ES_OK;
}

/* INT n: Linux's IDT lets user code reach only vectors 3 (#BP), 4 (#OF)
 * and 0x80; any other gate has DPL 0, so INT n raises #GP with the IDT
 * error code (vector << 3 | 2: IDT bit). */
int op_int(es_machine *m, const es_insn *d)
{
    unsigned v = (unsigned)d->o[0].imm & 0xff;
    if (m->has_kernel)
        return es_soft_int(m, v);
    if (v == 0x80) {
        int rc = direct_syscall(m, ES_ABI_I386);
        fix_i386_result(m);
        return rc;
    }
    if (v == 3)
        return es_raise(m, ES_VEC_BP, 0);
    if (v == 4)
        return es_raise(m, ES_VEC_OF, 0);
    return es_raise(m, ES_VEC_GP, (v << 3) | 2);
}

/* SYSCALL.  64-bit mode: the CPU puts the return RIP in RCX and RFLAGS in
 * R11, and Linux's SYSRET hands them back that way, so the program sees
 * RCX = next RIP, R11 = RFLAGS, RAX = result.  x32 calls are the x86-64
 * instruction with __X32_SYSCALL_BIT in the number.
 * Compatibility mode: only AMD CPUs have it (Intel: #UD).  Linux's
 * entry_SYSCALL_compat takes arg2 from EBP (ECX holds the return address)
 * and do_fast_syscall_32 reads arg6 from the user stack at [ESP] (the vDSO
 * pushed EBP there).  Linux returns to the vDSO's landing pad; with no
 * vDSO here the call returns to the next instruction, with ECX = return
 * EIP and EBP = the arg6 value as sysret32_from_system_call leaves them. */
int op_syscall(es_machine *m, const es_insn *d)
{
    if (m->has_kernel)
        return es_syscall_arch(m, d);
    if (!(m->efer & 1)) /* EFER.SCE */
        return es_raise(m, ES_VEC_UD, 0);
    if (m->mode == ES_MODE_64) {
        m->gpr[ES_RCX] = m->nrip;
        m->gpr[ES_R11] = m->rflags;
        int abi = (m->gpr[ES_RAX] & ES_X32_SYSCALL_BIT) ? ES_ABI_X32 : ES_ABI_X64;
        return direct_syscall(m, abi);
    }
    if (m->vendor != 1)
        return es_raise(m, ES_VEC_UD, 0);
    uint64_t sp = m->gpr[ES_RSP] & 0xffffffffull, arg6;
    uint64_t arg2 = (uint32_t)m->gpr[ES_RBP];
    if (es_load(m, es_seg_lin(m, ES_SEG_SS, sp), 4, &arg6)) {
        m->gpr[ES_RAX] = (uint32_t)-14; /* -EFAULT, as __get_user fails */
        m->gpr[ES_RCX] = (uint32_t)m->nrip;
        return ES_OK;
    }
    uint64_t ecx = m->gpr[ES_RCX], ebp = m->gpr[ES_RBP];
    m->gpr[ES_RCX] = arg2;
    m->gpr[ES_RBP] = (uint32_t)arg6;
    int rc = direct_syscall(m, ES_ABI_I386);
    if (rc == ES_STOP && m->stop != ES_STOP_EXIT) {
        /* stopped with RIP at the instruction: leave it re-executable */
        m->gpr[ES_RCX] = ecx;
        m->gpr[ES_RBP] = ebp;
        return rc;
    }
    m->gpr[ES_RCX] = (uint32_t)m->nrip;
    return rc;
}

/* SYSENTER: Intel only (AMD raises #UD in long mode).  Linux's convention
 * (entry_SYSENTER_compat): EBP holds the user stack with arg6 at [EBP];
 * the other arguments are in EBX, ECX, EDX, ESI, EDI.  SYSENTER loses EIP
 * and ESP; Linux returns to the vDSO landing pad with ESP = EBP.  Without
 * a vDSO the call returns to the next instruction with ESP = the old EBP,
 * EBP = arg6 and ECX = return EIP (SYSRETL), other registers kept. */
int op_sysenter(es_machine *m, const es_insn *d)
{
    if (m->has_kernel)
        return es_sysenter_arch(m, d);
    if (m->vendor == 1)
        return es_raise(m, ES_VEC_UD, 0);
    uint64_t ubp = m->gpr[ES_RBP] & 0xffffffffull, arg6;
    if (es_load(m, es_seg_lin(m, ES_SEG_SS, ubp), 4, &arg6)) {
        m->gpr[ES_RAX] = (uint32_t)-14;
        m->gpr[ES_RSP] = ubp;
        m->gpr[ES_RCX] = (uint32_t)m->nrip;
        return ES_OK;
    }
    uint64_t ebp = m->gpr[ES_RBP];
    m->gpr[ES_RBP] = (uint32_t)arg6;
    int rc = direct_syscall(m, ES_ABI_I386);
    if (rc == ES_STOP && m->stop != ES_STOP_EXIT) {
        m->gpr[ES_RBP] = ebp; /* re-executable, as for SYSCALL */
        return rc;
    }
    fix_i386_result(m);
    m->gpr[ES_RSP] = ubp;
    m->gpr[ES_RCX] = (uint32_t)m->nrip;
    return rc;
}

/* HLT: privileged; at CPL 0 with no interrupt source the run ends. */
int op_hlt(es_machine *m, const es_insn *d)
{
    if (m->cpl != 0)
        return es_raise(m, ES_VEC_GP, 0);
    return es_stop(m, ES_STOP_HLT);
}

/* ---- model-specific registers (CPL 0) ---- */

#define MSR_SPEC_CTRL 0x48u
#define MSR_PRED_CMD 0x49u
/* IA32_SPEC_CTRL bits modelled: IBRS (0) only; STIBP/SSBD are not
 * advertised, so setting them is #GP(0) (SDM Vol. 4, Table 2-2). */
#define SPEC_CTRL_VALID 1ull

static uint64_t *msr_slot(es_machine *m, uint32_t n)
{
    switch (n) {
    case MSR_SPEC_CTRL: return &m->msr.spec_ctrl;
    case 0x0000001b: return &m->msr.apic_base;
    case 0x00000174: return &m->msr.sysenter_cs;
    case 0x00000175: return &m->msr.sysenter_esp;
    case 0x00000176: return &m->msr.sysenter_eip;
    case 0x000001a0: return &m->msr.misc_enable;
    case 0x00000277: return &m->msr.pat;
    case 0xc0000080: return &m->efer;
    case 0xc0000081: return &m->msr.star;
    case 0xc0000082: return &m->msr.lstar;
    case 0xc0000083: return &m->msr.cstar;
    case 0xc0000084: return &m->msr.sfmask;
    case 0xc0000100: return &m->seg[ES_SEG_FS].base;
    case 0xc0000101: return &m->seg[ES_SEG_GS].base;
    case 0xc0000102: return &m->msr.kernel_gs_base;
    case 0xc0000103: return &m->msr.tsc_aux;
    default: return NULL;
    }
}

int op_rdmsr(es_machine *m, const es_insn *d)
{
    if (m->cpl != 0)
        return es_raise(m, ES_VEC_GP, 0);
    uint32_t n = (uint32_t)m->gpr[ES_RCX];
    uint64_t v;
    if (n == 0x10) {
        v = tsc_now(m);
    } else if (n == MSR_PRED_CMD || (n == MSR_SPEC_CTRL && !spec_ctrl_advertised(m))) {
        return es_raise(m, ES_VEC_GP, 0); /* PRED_CMD is write-only */
    } else {
        uint64_t *p = msr_slot(m, n);
        if (!p)
            return es_raise(m, ES_VEC_GP, 0);
        v = *p;
    }
    m->gpr[ES_RAX] = (uint32_t)v;
    m->gpr[ES_RDX] = v >> 32;
    return ES_OK;
}

int op_wrmsr(es_machine *m, const es_insn *d)
{
    if (m->cpl != 0)
        return es_raise(m, ES_VEC_GP, 0);
    uint32_t n = (uint32_t)m->gpr[ES_RCX];
    uint64_t v = (m->gpr[ES_RAX] & 0xffffffffull) | (m->gpr[ES_RDX] << 32);
    if (n == MSR_PRED_CMD) {
        /* IBPB: a barrier for indirect-branch prediction; no predictor
         * state in this model, so only the #GP rules (bit 0 only) */
        if (!spec_ctrl_advertised(m) || (v & ~1ull))
            return es_raise(m, ES_VEC_GP, 0);
        return ES_OK;
    }
    uint64_t *p = msr_slot(m, n);
    if (!p)
        return es_raise(m, ES_VEC_GP, 0);
    /* base and target-address MSRs must be canonical (SDM Vol. 2B WRMSR:
     * FS/GS base, KERNEL_GS_BASE, LSTAR, SYSENTER_EIP, SYSENTER_ESP; CSTAR
     * too, as on AMD) */
    if ((n == 0xc0000100 || n == 0xc0000101 || n == 0xc0000102 || n == 0xc0000082 ||
         n == 0xc0000083 || n == 0x00000175 || n == 0x00000176) &&
        (uint64_t)((int64_t)(v << 16) >> 16) != v)
        return es_raise(m, ES_VEC_GP, 0);
    if (n == 0xc0000080) {
        /* IA32_EFER (SDM Vol. 4, Table 2-2; Vol. 3A 10.8.5): SCE, LME, LMA,
         * NXE exist, any other 1 is #GP(0); LMA is the processor's (a
         * write leaves it); LME cannot change while CR0.PG is set. */
        const uint64_t sce = 1, lme = 1u << 8, lma = 1u << 10, nxe = 1u << 11;
        if (v & ~(sce | lme | lma | nxe))
            return es_raise(m, ES_VEC_GP, 0);
        if ((m->cr0 & (1ull << 31)) && ((v ^ m->efer) & lme))
            return es_raise(m, ES_VEC_GP, 0);
        v = (v & ~lma) | (m->efer & lma);
    }
    if (n == MSR_SPEC_CTRL && (!spec_ctrl_advertised(m) || (v & ~SPEC_CTRL_VALID)))
        return es_raise(m, ES_VEC_GP, 0);
    *p = v;
    return ES_OK;
}

/* SWAPGS (64-bit mode, CPL 0): exchange GS.base and IA32_KERNEL_GS_BASE. */
int op_swapgs(es_machine *m, const es_insn *d)
{
    if (m->cpl != 0)
        return es_raise(m, ES_VEC_GP, 0);
    uint64_t t = m->seg[ES_SEG_GS].base;
    m->seg[ES_SEG_GS].base = m->msr.kernel_gs_base;
    m->msr.kernel_gs_base = t;
    return ES_OK;
}

int op_invlpg(es_machine *m, const es_insn *d)
{
    if (m->cpl != 0)
        return es_raise(m, ES_VEC_GP, 0);
    es_tlb_flush_page(m, es_lin(m, d, &d->o[0]));
    return ES_OK;
}

int op_clts(es_machine *m, const es_insn *d)
{
    if (m->cpl != 0)
        return es_raise(m, ES_VEC_GP, 0);
    m->cr0 &= ~8ull; /* CR0.TS */
    return ES_OK;
}

int op_wbinvd(es_machine *m, const es_insn *d)
{
    if (m->cpl != 0)
        return es_raise(m, ES_VEC_GP, 0);
    return ES_OK;
}

/* LGDT/LIDT: limit (2 bytes) then base (8 bytes in 64-bit mode, 4 else). */
int op_lgdt_lidt(es_machine *m, const es_insn *d)
{
    if (m->cpl != 0)
        return es_raise(m, ES_VEC_GP, 0);
    uint64_t a = es_lin(m, d, &d->o[0]), lim, base;
    TRY(es_load(m, a, 2, &lim));
    TRY(es_load(m, a + 2, m->mode == ES_MODE_64 ? 8 : 4, &base));
    if (d->op == ES_OP_LGDT) {
        m->gdtr.base = base;
        m->gdtr.limit = (uint16_t)lim;
    } else {
        m->idtr.base = base;
        m->idtr.limit = (uint16_t)lim;
    }
    return ES_OK;
}

/* RDPMC: CPL 3 needs CR4.PCE (Linux leaves it clear unless perf maps a
 * counter); no counters are modelled, so #GP(0) either way. */
int op_rdpmc(es_machine *m, const es_insn *d)
{
    return es_raise(m, ES_VEC_GP, 0);
}

/* ---- descriptor-table stores and segment queries (usable at CPL 3) ---- */

/* SGDT/SIDT/SLDT/STR/SMSW: #GP(0) at CPL > 0 when CR4.UMIP is set (Linux
 * then emulates a few of them; the default CR4 leaves UMIP clear). */
static int umip_ok(es_machine *m)
{
    if ((m->cr4 & (1u << 11)) && m->cpl != 0)
        return es_raise(m, ES_VEC_GP, 0);
    return 0;
}

/* SGDT/SIDT m: limit (2 bytes) then base (8 bytes in 64-bit mode, 4 with a
 * 32-bit operand size). */
int op_sgdt_sidt(es_machine *m, const es_insn *d)
{
    TRY(umip_ok(m));
    uint64_t a = es_lin(m, d, &d->o[0]);
    uint64_t base = d->op == ES_OP_SGDT ? m->gdtr.base : m->idtr.base;
    uint16_t lim = d->op == ES_OP_SGDT ? m->gdtr.limit : m->idtr.limit;
    uint8_t b[10];
    unsigned n = d->mode == ES_MODE_64 ? 10 : 6;
    memcpy(b, &lim, 2);
    memcpy(b + 2, &base, n - 2);
    TRY(es_write(m, a, b, n));
    return ES_OK;
}

/* SLDT/STR/SMSW: a register destination takes the value zero-extended to
 * the operand size (SMSW: all of CR0, as on Zen 4); memory gets 16 bits. */
int op_store_sysreg(es_machine *m, const es_insn *d)
{
    TRY(umip_ok(m));
    uint64_t v = d->op == ES_OP_SLDT ? m->ldtr.sel : d->op == ES_OP_STR ? m->tr.sel : m->cr0;
    if (d->o[0].kind == ES_OPK_MEM)
        TRY(es_store(m, es_lin(m, d, &d->o[0]), 2, v));
    else
        es_gpr_set(m, d->o[0].reg, d->o[0].size, v & es_mask(d->o[0].size));
    return ES_OK;
}

/* The descriptor of a LAR/LSL/VERR/VERW selector if it is visible at the
 * current CPL and the selector's RPL (SDM LAR: DPL >= CPL and DPL >= RPL
 * unless conforming code); 0 if not. */
static int visible_desc(es_machine *m, uint16_t sel, uint64_t *desc)
{
    if ((sel & ~3u) == 0 || es_desc_read(m, sel, desc))
        return 0;
    unsigned acc = (unsigned)(*desc >> 40) & 0xff, dpl = (acc >> 5) & 3;
    int conforming = (acc & 0x1c) == 0x1c;
    if (!conforming && (dpl < m->cpl || dpl < (sel & 3u)))
        return 0;
    return 1;
}

static int sys_type_ok(uint64_t desc, int lar)
{
    unsigned type = (unsigned)(desc >> 40) & 0xf;
    /* 64-bit-mode system types: LDT, available/busy TSS; call gate for LAR */
    return type == 2 || type == 9 || type == 0xb || (lar && type == 0xc);
}

/* LAR/LSL: ZF = 1 and the access rights (desc[63:32] & 00FFFF00h, as Zen 4
 * returns them) or the expanded limit when the descriptor is visible; else
 * ZF = 0 and the destination keeps its value. */
int op_lar_lsl(es_machine *m, const es_insn *d)
{
    uint64_t s, desc;
    TRY(es_rd(m, d, 1, &s));
    int lar = d->op == ES_OP_LAR;
    int ok = visible_desc(m, (uint16_t)s, &desc);
    if (ok && !((desc >> 44) & 1))
        ok = sys_type_ok(desc, lar);
    if (!ok) {
        m->rflags &= ~(uint64_t)ES_ZF;
        return ES_OK;
    }
    uint64_t v;
    if (lar) {
        v = (desc >> 32) & 0x00ffff00;
    } else {
        es_segreg r;
        es_desc_unpack(desc, (uint16_t)s, &r);
        v = r.limit;
    }
    es_gpr_set(m, d->o[0].reg, d->o[0].size, v & es_mask(d->o[0].size));
    m->rflags |= ES_ZF;
    return ES_OK;
}

/* VERR/VERW: ZF = 1 if the segment is readable / writable from here. */
int op_verr_verw(es_machine *m, const es_insn *d)
{
    uint64_t s, desc;
    TRY(es_rd(m, d, 0, &s));
    int ok = visible_desc(m, (uint16_t)s, &desc);
    unsigned acc = (unsigned)(desc >> 40) & 0xff;
    if (ok && !(acc & 0x10))
        ok = 0; /* system segment */
    else if (ok && d->op == ES_OP_VERR)
        ok = !(acc & 0x08) || (acc & 0x02); /* data, or readable code */
    else if (ok)
        ok = !(acc & 0x08) && (acc & 0x02); /* writable data */
    if (ok)
        m->rflags |= ES_ZF;
    else
        m->rflags &= ~(uint64_t)ES_ZF;
    return ES_OK;
}

