/* system.c - CPUID, RDTSC/RDTSCP, XGETBV, the NOP family (NOP, PAUSE,
 * ENDBR, fences, prefetches, CLFLUSH), UD0/1/2, INT3/INT n/INTO, HLT,
 * SYSCALL/SYSENTER in --direct mode, and the privileged system
 * instructions (#GP(0) at CPL 3).  With a guest kernel, INT n, SYSCALL and
 * SYSENTER go to priv.c, which also has SYSRET, SYSEXIT, LTR, LLDT and
 * VMCALL.
 */
#include <string.h>
#include <time.h>

#include "host.h"
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

/* ---- CPUID ---- */

#define BIT(n) (1u << (n))

/* Features this simulator implements, and only those.  No MMX, AVX, FMA,
 * AES, RDRAND; CR4.OSXSAVE is treated as set, as Linux sets it on every
 * XSAVE-capable CPU. */
#define CPUID1_ECX                                                                                 \
    (BIT(0) /* SSE3 */ | BIT(9) /* SSSE3 */ | BIT(13) /* CX16 */ | BIT(19) /* SSE4.1 */ |         \
     BIT(20) /* SSE4.2 */ | BIT(22) /* MOVBE */ | BIT(23) /* POPCNT */ | BIT(26) /* XSAVE */ |    \
     BIT(27) /* OSXSAVE */ | BIT(17) /* PCID (mov.c: CR4.PCIDE, CR3 bit 63) */)
/* SEP (bit 11): SYSENTER/SYSEXIT are implemented (--cpu intel, and 32-bit
 * code on AMD); both vendors set it in CPUID.1:EDX (SDM Vol. 2A CPUID,
 * Table 3-11; AMD APM Vol. 3, CPUID Fn0000_0001_EDX). */
#define CPUID1_EDX                                                                                 \
    (BIT(0) /* FPU */ | BIT(4) /* TSC */ | BIT(5) /* MSR */ | BIT(8) /* CX8 */ |                  \
     BIT(11) /* SEP */ | BIT(15) /* CMOV */ | BIT(19) /* CLFSH */ | BIT(24) /* FXSR */ | BIT(25) /* SSE */ |          \
     BIT(26) /* SSE2 */)
#define CPUID7_EBX (BIT(3) /* BMI1 */ | BIT(8) /* BMI2 */ | BIT(9) /* ERMS */ | BIT(19) /* ADX */)
#define CPUID7_EDX (BIT(4) /* FSRM */)
/* Speculation control (issue 4's ibrs mitigation): IA32_SPEC_CTRL.IBRS and
 * IA32_PRED_CMD.IBPB exist.  Intel reports them in CPUID.(7,0):EDX[26]
 * (SDM Vol. 2A CPUID; Intel's "Speculative Execution Side Channel
 * Mitigations"); AMD in CPUID Fn8000_0008 EBX[12] IBPB and EBX[14] IBRS
 * (AMD's "Indirect Branch Control Extension"), and not in leaf 7.  Only
 * these bits of the MSRs are implemented (spec_ctrl_advertised below). */
#define CPUID7_EDX_INTEL_SPEC_CTRL BIT(26)
#define CPUIDX8_EBX_AMD_SPEC_CTRL (BIT(12) /* IBPB */ | BIT(14) /* IBRS */)
#define CPUIDX1_ECX (BIT(0) /* LAHF-SAHF */ | BIT(5) /* LZCNT (ABM) */ | BIT(8) /* PREFETCHW */)
#define CPUIDX1_EDX (BIT(11) /* SYSCALL */ | BIT(20) /* NX */ | BIT(27) /* RDTSCP */ | BIT(29) /* LM */)

/* Family/model/stepping: a Skylake client part for Intel (06_5EH), a
 * Zen 4 (family 19h, model 11h) for AMD. */
#define SIG_INTEL 0x000506e3u
#define SIG_AMD 0x00a10f11u

/* XSAVE area with x87 and SSE state only: 512-byte legacy area + 64-byte
 * header. */
#define XSAVE_SIZE 576u

static void cpuid_str(const char *s, uint32_t *r)
{
    memcpy(r, s, 4);
}

static void cpuid(const es_machine *m, uint32_t leaf, uint32_t sub, uint32_t r[4])
{
    int amd = m->vendor == 1;
    r[0] = r[1] = r[2] = r[3] = 0; /* [0]=EAX [1]=EBX [2]=ECX [3]=EDX */
    switch (leaf) {
    case 0:
        r[0] = 0xd;
        cpuid_str(amd ? "Auth" : "Genu", &r[1]);
        cpuid_str(amd ? "enti" : "ineI", &r[3]);
        cpuid_str(amd ? "cAMD" : "ntel", &r[2]);
        break;
    case 1:
        r[0] = amd ? SIG_AMD : SIG_INTEL;
        r[1] = (1u << 16) | (8u << 8); /* 1 logical CPU, 64-byte CLFLUSH line, APIC ID 0 */
        r[2] = CPUID1_ECX;
        r[3] = CPUID1_EDX;
        break;
    case 4: /* Intel deterministic cache parameters (glibc's cache sizing) */
        if (amd)
            break;
        switch (sub) {
        case 0: r[0] = 0x121; r[1] = (7u << 22) | 63; r[2] = 63; break;    /* L1d 32K 8-way */
        case 1: r[0] = 0x122; r[1] = (7u << 22) | 63; r[2] = 63; break;    /* L1i 32K 8-way */
        case 2: r[0] = 0x143; r[1] = (15u << 22) | 63; r[2] = 1023; break; /* L2 1M 16-way */
        case 3: r[0] = 0x163; r[1] = (15u << 22) | 63; r[2] = 32767; break; /* L3 32M 16-way */
        default: break;
        }
        break;
    case 7:
        if (sub == 0) {
            r[1] = CPUID7_EBX;
            r[3] = CPUID7_EDX | (amd ? 0 : CPUID7_EDX_INTEL_SPEC_CTRL);
        }
        break;
    case 0xd:
        if (sub == 0) {
            r[0] = 3; /* XCR0 may enable x87 | SSE */
            r[1] = XSAVE_SIZE;
            r[2] = XSAVE_SIZE;
        } else if (sub == 1) {
            /* XSAVEOPT and XSAVEC (fxsave.c); not XGETBV with ECX = 1, and
             * not XSAVES, which needs the IA32_XSS MSR the model lacks */
            r[0] = BIT(0) | BIT(1);
            r[1] = XSAVE_SIZE; /* compacted size of XCR0 | XSS components */
        } else if (sub == 2) {
            /* no AVX component */
        }
        break;
    case 0x80000000:
        r[0] = 0x80000008;
        if (amd) {
            cpuid_str("Auth", &r[1]);
            cpuid_str("enti", &r[3]);
            cpuid_str("cAMD", &r[2]);
        }
        break;
    case 0x80000001:
        r[0] = amd ? SIG_AMD : 0;
        r[2] = CPUIDX1_ECX;
        r[3] = CPUIDX1_EDX;
        break;
    case 0x80000002:
    case 0x80000003:
    case 0x80000004: {
        static const char brand[48] = "entrysim x86-64";
        memcpy(r, brand + (leaf - 0x80000002) * 16, 16);
        break;
    }
    case 0x80000005: /* AMD L1: 32K 8-way, 64-byte lines, data and code */
        if (amd)
            r[2] = r[3] = (32u << 24) | (8u << 16) | (1u << 8) | 64;
        break;
    case 0x80000006: /* L2 1M 16-way (encoding 8); AMD also L3 32M */
        r[2] = (1024u << 16) | (8u << 12) | 64;
        if (amd)
            r[3] = (64u << 18) | (8u << 12) | 64;
        break;
    case 0x80000008:
        r[0] = 0x3030; /* 48-bit virtual and physical addresses */
        if (amd)
            r[1] = CPUIDX8_EBX_AMD_SPEC_CTRL;
        break;
    default:
        /* unsupported leaves read as zero (AMD's behaviour; Intel repeats
         * the highest basic leaf, which no program relies on) */
        break;
    }
}

void es_cpuid(const es_machine *m, uint32_t leaf, uint32_t sub, uint32_t r[4])
{
    cpuid(m, leaf, sub, r);
}

/* IA32_SPEC_CTRL (0x48) and IA32_PRED_CMD (0x49) exist when CPUID says so
 * (the same bits the guest reads); without them RDMSR/WRMSR #GP. */
static bool spec_ctrl_advertised(const es_machine *m)
{
    uint32_t r[4];
    if (m->vendor == 1) {
        cpuid(m, 0x80000008, 0, r);
        return (r[1] & CPUIDX8_EBX_AMD_SPEC_CTRL) == CPUIDX8_EBX_AMD_SPEC_CTRL;
    }
    cpuid(m, 7, 0, r);
    return (r[3] & CPUID7_EDX_INTEL_SPEC_CTRL) != 0;
}

int op_cpuid(es_machine *m, const es_insn *d)
{
    uint32_t r[4];
    cpuid(m, (uint32_t)m->gpr[ES_RAX], (uint32_t)m->gpr[ES_RCX], r);
    m->gpr[ES_RAX] = r[0];
    m->gpr[ES_RBX] = r[1];
    m->gpr[ES_RCX] = r[2];
    m->gpr[ES_RDX] = r[3];
    return ES_OK;
}

/* ---- time-stamp counter ---- */

static uint64_t tsc_now(const es_machine *m)
{
    if (m->deterministic)
        return 3 * m->icount; /* a 3 GHz part retiring one insn per cycle */
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec) * 3;
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
    /* x87 must stay enabled and only x87 | SSE exist */
    if ((uint32_t)m->gpr[ES_RCX] != 0 || !(v & 1) || (v & ~3ull))
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

/* INT n: Linux's IDT lets user code reach only vectors 3 (#BP), 4 (#OF)
 * and 0x80; any other gate has DPL 0, so INT n raises #GP with the IDT
 * error code (vector << 3 | 2: IDT bit). */
int op_int(es_machine *m, const es_insn *d)
{
    unsigned v = (unsigned)d->o[0].imm & 0xff;
    if (m->has_kernel)
        return es_soft_int(m, v);
    if (v == 0x80) {
        int rc = es_host_syscall(m, ES_ABI_I386);
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
        return es_host_syscall(m, abi);
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
    int rc = es_host_syscall(m, ES_ABI_I386);
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
    int rc = es_host_syscall(m, ES_ABI_I386);
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

