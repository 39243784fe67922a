/* diff_native.c - the host side of the differential test.
 *
 * Why compatibility mode instead of a separate `gcc -m32` runner: a far
 * return to USER32_CS lets one process run both modes with the same fixed
 * mappings and the same fault handling, with no second build, no IPC and
 * no per-case process round trip.  Everything the 32-bit code touches
 * (stub, state, scratch stack, data and stack windows) sits below 4 GiB.
 * Signals raised in compatibility mode are delivered to our 64-bit handler
 * (Linux switches CS back to USER_CS for the handler), which siglongjmps
 * out and reports the fault.
 *
 * Some hosts refuse compatibility mode altogether: under a PVM guest kernel
 * (and with ia32_emulation=0) the far return to 0x23 raises #GP(0x20), an
 * LDT code segment from modify_ldt raises #GP too, and -m32 executables get
 * ENOEXEC, so no 32-bit runner could work there either.
 * diff_native_has_compat() probes once; without it the test runs 32-bit
 * cases as their 64-bit-mode equivalents (end of generate() in diff_host.cc).
 */
#include "diff_native.h"

#include <cpuid.h>
#include <setjmp.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#define DIFF_RB 0x20000000ull
#define DIFF_IN (DIFF_RB + 0x1000)
#define DIFF_OUT (DIFF_RB + 0x1800) /* diff_stub.S: the same */
#define DIFF_STUB32_AT (DIFF_RB + 0x800)
#define DIFF_SLOT 16

/* the stubs address the state by these offsets */
_Static_assert(offsetof(diff_state, rflags) == 128, "diff_state layout");
_Static_assert(offsetof(diff_state, mxcsr) == 136, "diff_state layout");
_Static_assert(offsetof(diff_state, xmm) == 144, "diff_state layout");
_Static_assert(offsetof(diff_state, fx) == 400, "diff_state layout");
_Static_assert(offsetof(diff_state, ymmh) == 912, "diff_state layout");
_Static_assert(sizeof(diff_state) <= DIFF_OUT - DIFF_IN,
               "diff_state must fit between DIFF_IN and DIFF_OUT");

extern const uint8_t diff_stub64[], diff_stub64_slot[], diff_stub64_end[];
extern const uint8_t diff_stub32[], diff_stub32_slot[], diff_stub32_end[];

/* Signal handling needs process-wide state; this is test code, not the
 * product, and the harness is single-threaded. */
static sigjmp_buf g_jb;
static volatile sig_atomic_t g_armed;
static diff_state g_fstate; /* registers at the fault, from the signal frame */
static uint64_t g_frip;
static const char *g_context; /* the case under way, told if the harness crashes */
static struct sigaction g_old[32];
static unsigned g_ymm_off; /* YMM_Hi128 in the standard XSAVE layout: CPUID.(0DH,2).EBX */

/* Bits 255:128 of the YMM registers at a fault, from the XSAVE image the
 * kernel puts in the signal frame (an FXSAVE image, then the XSAVE header
 * at 512 and the components at their standard offsets; the FXSAVE image's
 * software-reserved bytes at 464 say that the rest is there).  A component
 * whose XSTATE_BV bit is clear is in its initial state, zero, and its
 * bytes in the image are not written. */
static void ymmh_at_fault(const uint8_t *fp, uint8_t ymmh[16][16])
{
    uint32_t magic1;
    uint64_t xstate_bv;
    memset(ymmh, 0, 16 * 16);
    memcpy(&magic1, fp + 464, 4);
    if (magic1 != 0x46505853u /* FP_XSTATE_MAGIC1 */ || !g_ymm_off)
        return;
    memcpy(&xstate_bv, fp + 512, 8);
    if (xstate_bv & 4)
        memcpy(ymmh, fp + g_ymm_off, 16 * 16);
}

void diff_set_context(const char *what)
{
    g_context = what;
}

static void on_fault(int sig, siginfo_t *si, void *ucv)
{
    (void)si;
    if (g_armed) {
        const ucontext_t *uc = ucv;
        const greg_t *g = uc->uc_mcontext.gregs;
        static const int map[16] = {REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP,
                                    REG_RSI, REG_RDI, REG_R8,  REG_R9,  REG_R10, REG_R11,
                                    REG_R12, REG_R13, REG_R14, REG_R15};
        for (int i = 0; i < 16; i++)
            g_fstate.gpr[i] = (uint64_t)g[map[i]];
        g_fstate.rflags = (uint64_t)g[REG_EFL];
        g_frip = (uint64_t)g[REG_RIP];
        if (uc->uc_mcontext.fpregs) {
            g_fstate.mxcsr = uc->uc_mcontext.fpregs->mxcsr;
            memcpy(g_fstate.xmm, uc->uc_mcontext.fpregs->_xmm, sizeof g_fstate.xmm);
            /* the kernel's 64-bit frame holds an FXSAVE image */
            memcpy(g_fstate.fx, uc->uc_mcontext.fpregs, sizeof g_fstate.fx);
            ymmh_at_fault((const uint8_t *)uc->uc_mcontext.fpregs, g_fstate.ymmh);
        }
        g_armed = 0;
        siglongjmp(g_jb, sig);
    }
    /* a crash of the simulator (or the harness): say which case, then let
     * the previous handler (the sanitizer's, or the default) take it when
     * the instruction re-executes */
    if (g_context) {
        static const char hdr[] = "\n*** crashed while running this case:\n";
        ssize_t w = write(2, hdr, sizeof hdr - 1);
        w = write(2, g_context, strlen(g_context));
        w = write(2, "\n", 1);
        (void)w;
        g_context = NULL;
    }
    sigaction(sig, &g_old[sig], NULL);
    if (sig == SIGABRT)
        raise(sig);
}

static int map_fixed(uint64_t addr, size_t size, int prot, char *err, size_t errsz)
{
    void *p = mmap((void *)addr, size, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
                   -1, 0);
    if (p == MAP_FAILED || p != (void *)addr) {
        snprintf(err, errsz, "cannot map 0x%llx (+0x%zx) in the test process",
                 (unsigned long long)addr, size);
        return -1;
    }
    return 0;
}

int diff_native_init(char *err, size_t errsz)
{
    static int done;
    if (done)
        return 0;
    if ((size_t)(diff_stub64_end - diff_stub64) > 0x800 ||
        (size_t)(diff_stub32_end - diff_stub32) > 0x800) {
        snprintf(err, errsz, "stub templates too large");
        return -1;
    }
    if (map_fixed(DIFF_RB, 0x4000, PROT_READ | PROT_WRITE | PROT_EXEC, err, errsz) ||
        map_fixed(0x600000, 0x10000, PROT_READ | PROT_WRITE, err, errsz) ||
        map_fixed(0x7f0000, 0x10000, PROT_READ | PROT_WRITE, err, errsz))
        return -1;
    memcpy((void *)DIFF_RB, diff_stub64, diff_stub64_end - diff_stub64);
    memcpy((void *)DIFF_STUB32_AT, diff_stub32, diff_stub32_end - diff_stub32);
    /* the stubs load and store the YMM upper halves with VINSERTF128 and
     * VEXTRACTF128 (AVX: no AVX2 needed) */
    if (!__builtin_cpu_supports("avx")) {
        snprintf(err, errsz, "the host has no AVX (the stubs move YMM registers)");
        return -1;
    }
    unsigned a, b, c, d;
    if (__get_cpuid_count(0xd, 2, &a, &b, &c, &d))
        g_ymm_off = b;

    static uint8_t altstack[1 << 16];
    stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack};
    sigaltstack(&ss, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    int sigs[] = {SIGFPE, SIGSEGV, SIGILL, SIGBUS, SIGTRAP, SIGABRT};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaction(sigs[i], &sa, &g_old[sigs[i]]);
    done = 1;
    return 0;
}

int diff_native_has_compat(void)
{
    static int known = -1;
    if (known < 0) {
        static diff_state in;
        static diff_result out;
        const uint8_t nop = 0x90;
        in.gpr[ES_RSP] = DIFF_STACK + 0x1000;
        in.rflags = 2;
        in.mxcsr = 0x1f80;
        static uint8_t zero[DIFF_DATA_SIZE];
        diff_native_run(ES_MODE_32, &nop, 1, &in, zero, zero, &out);
        known = out.fault == 0;
    }
    return known;
}

static void set_mxcsr(uint32_t v)
{
    __asm__ volatile("ldmxcsr %0" ::"m"(v));
}

static uint32_t get_mxcsr(void)
{
    uint32_t v;
    __asm__ volatile("stmxcsr %0" : "=m"(v));
    return v;
}

void diff_native_run(int mode, const uint8_t *insn, size_t len, const diff_state *in,
                     const uint8_t *data, const uint8_t *stack, diff_result *out)
{
    uint8_t *stub = (uint8_t *)(mode == ES_MODE_64 ? DIFF_RB : DIFF_STUB32_AT);
    size_t slot = mode == ES_MODE_64 ? (size_t)(diff_stub64_slot - diff_stub64)
                                     : (size_t)(diff_stub32_slot - diff_stub32);
    memset(stub + slot, 0x90, DIFF_SLOT);
    memcpy(stub + slot, insn, len < DIFF_SLOT ? len : DIFF_SLOT);
    __builtin___clear_cache((char *)stub + slot, (char *)stub + slot + DIFF_SLOT);

    diff_state *nin = (diff_state *)DIFF_IN, *nout = (diff_state *)DIFF_OUT;
    *nin = *in;
    memcpy(nin->fx + 24, &in->mxcsr, 4); /* FXRSTOR #GPs on reserved MXCSR bits */
    memset(nin->fx + 28, 0, 4);
    memset(nout, 0, sizeof *nout);
    memcpy((void *)DIFF_DATA, data, DIFF_DATA_SIZE);
    memcpy((void *)DIFF_STACK, stack, DIFF_STACK_SIZE);

    uint32_t host_mxcsr = get_mxcsr();
    void (*fn)(void) = (void (*)(void))(uintptr_t)stub;
    int sig = sigsetjmp(g_jb, 1);
    if (sig == 0) {
        g_armed = 1;
        fn();
        g_armed = 0;
    } else {
        set_mxcsr(host_mxcsr); /* the guest's MXCSR may still be loaded */
    }
    out->fault = sig;
    out->unimpl = 0;
    out->st = sig ? g_fstate : *nout;
    /* a fault anywhere but at the instruction is the harness's own */
    out->fault_elsewhere = sig && g_frip != (uint64_t)(uintptr_t)(stub + slot);
    memcpy(out->data, (void *)DIFF_DATA, DIFF_DATA_SIZE);
    memcpy(out->stack, (void *)DIFF_STACK, DIFF_STACK_SIZE);
}
