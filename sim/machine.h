/* machine.h - the one struct that holds a simulated machine.
 *
 * Every function of the simulator takes `es_machine *m` first; there is no
 * other mutable state.  Instruction handlers share one signature
 * (es_handler) and report faults by recording them in m->fault and
 * returning ES_FAULT; the run loop delivers them.
 */
#ifndef ENTRYSIM_MACHINE_H
#define ENTRYSIM_MACHINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decoder.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct es_machine es_machine;

/* Handler results. */
enum es_status {
    ES_OK = 0,    /* retired; RIP advances to m->nrip */
    ES_FAULT = 1, /* m->fault holds the exception; RIP stays at the insn */
    ES_STOP = 2,  /* the run must stop (guest exit, HLT without kernel, limit) */
    ES_YIELD = 3, /* retired like ES_OK, but the next instruction must go
                   * through es_step (POPF set RFLAGS.TF: it traps after one) */
};

typedef int (*es_handler)(es_machine *m, const es_insn *d);

/* Exception vectors (SDM Vol. 3A, 6.3.1). */
enum es_vector {
    ES_VEC_DE = 0, ES_VEC_DB = 1, ES_VEC_NMI = 2, ES_VEC_BP = 3, ES_VEC_OF = 4, ES_VEC_BR = 5,
    ES_VEC_UD = 6, ES_VEC_NM = 7, ES_VEC_DF = 8, ES_VEC_TS = 10, ES_VEC_NP = 11, ES_VEC_SS = 12,
    ES_VEC_GP = 13, ES_VEC_PF = 14, ES_VEC_MF = 16, ES_VEC_AC = 17, ES_VEC_MC = 18, ES_VEC_XM = 19,
};

/* #PF error-code bits (SDM Vol. 3A, 4.7). */
#define ES_PFEC_P 0x01
#define ES_PFEC_W 0x02
#define ES_PFEC_U 0x04
#define ES_PFEC_RSVD 0x08
#define ES_PFEC_I 0x10

/* RFLAGS bits. */
#define ES_CF 0x0001u
#define ES_PF 0x0004u
#define ES_AF 0x0010u
#define ES_ZF 0x0040u
#define ES_SF 0x0080u
#define ES_TF 0x0100u
#define ES_IF 0x0200u
#define ES_DF 0x0400u
#define ES_OF 0x0800u
#define ES_IOPL 0x3000u
#define ES_NT 0x4000u
#define ES_RF 0x10000u
#define ES_VM 0x20000u
#define ES_AC 0x40000u
#define ES_ID 0x200000u
#define ES_ARITH_FLAGS (ES_CF | ES_PF | ES_AF | ES_ZF | ES_SF | ES_OF)

/* General-purpose register numbers. */
enum es_gpr {
    ES_RAX, ES_RCX, ES_RDX, ES_RBX, ES_RSP, ES_RBP, ES_RSI, ES_RDI,
    ES_R8, ES_R9, ES_R10, ES_R11, ES_R12, ES_R13, ES_R14, ES_R15,
};

typedef union es_xmm {
    uint8_t b[16];
    uint16_t w[8];
    uint32_t d[4];
    uint64_t q[2];
    int8_t sb[16];
    int16_t sw[8];
    int32_t sd[4];
    int64_t sq[2];
    float f[4];
    double g[2];
} es_xmm;

/* es_machine.vr[]: XMM0-15, the YMM upper halves, four scratch slots. */
#define ES_VR_SLOTS 36
#define ES_VR_HIGH 16 /* vr[ES_VR_HIGH + r]: bits 255:128 of YMMr */
#define ES_VR_TMP 32  /* vr[ES_VR_TMP + i]: scratch */

/* A YMM value: the two 128-bit lanes, low first. */
typedef union es_ymm {
    es_xmm x[2];
    uint8_t b[32];
    uint16_t w[16];
    uint32_t d[8];
    uint64_t q[4];
    int8_t sb[32];
    int16_t sw[16];
    int32_t sd[8];
    int64_t sq[4];
    float f[8];
    double g[4];
} es_ymm;

typedef struct es_segreg {
    uint16_t sel;   /* visible selector */
    uint16_t attr;  /* descriptor access byte | flags nibble << 8 (G, D/B, L, AVL) */
    uint32_t limit; /* expanded limit */
    uint64_t base;  /* FS/GS: the 64-bit base (MSR); others: descriptor base */
} es_segreg;

/* Segment attribute bits as stored in es_segreg.attr. */
#define ES_SEGA_L 0x200  /* 64-bit code */
#define ES_SEGA_DB 0x400 /* default operand size 32 */

/* x87 FPU state.  Values are kept in host long double (x87 80-bit extended
 * on x86-64 hosts) in physical register order; st(i) = fpr[(top+i)&7]. */
typedef struct es_x87 {
    long double fpr[8];
    uint16_t fcw, fsw, ftw; /* ftw: full two-bit tag word (11 = empty) */
    uint8_t top;
    uint16_t fop;
    uint64_t fip, fdp;
    uint16_t fcs, fds; /* selectors of the last instruction / operand (FNSTENV, FXSAVE) */
    /* Intel: FOP, FDP and FDS as of the last non-control instruction that
     * incurred an unmasked exception -- what Intel's save instructions
     * store (es_x87_saved_ptrs in sim/isa/x87.h) */
    uint16_t fop_x, fds_x;
    uint64_t fdp_x;
} es_x87;

/* One software-TLB entry: a 4 KiB linear page mapped to host memory. */
typedef struct es_tlbe {
    uint64_t tag;     /* linear page address; 1 = invalid (never page aligned) */
    uintptr_t addend; /* host address = addend + linear address */
    uint64_t pa;      /* physical page address */
    uint32_t perm;    /* ES_TP_* */
    uint32_t pad;
} es_tlbe;

#define ES_TP_W 0x1 /* writable (and page holds no decoded code) */
#define ES_TP_U 0x2 /* user accessible */
#define ES_TP_X 0x4 /* executable */

#define ES_TLB_SIZE 256

/* Physical frame bookkeeping. */
typedef struct es_frame {
    uint8_t *host;     /* NULL until first touched */
    uint32_t code_gen; /* bumped when a page holding decoded code is written */
    uint8_t has_code;  /* decode cache holds entries from this page */
    uint8_t wlogged;   /* listed in the es_wlog of the unobserved run under way */
    uint8_t pad[2];
} es_frame;

/* The frames an unobserved run (es_run_fenced) or a step with the list
 * attached (es_wlog_attach) may have written, each listed once: every
 * frame a write translated to or a writable TLB entry mapped, the page
 * tables whose accessed/dirty bits a walk set, what kcopy wrote.  A
 * recorder compares those with its own copies instead of all memory. */
typedef struct es_wlog {
    uint64_t *pfn;
    size_t n, cap;
    bool overflow; /* out of host memory for the list: any frame may differ */
    bool any_phys; /* also every frame es_phys hands out: the host's own writes
                      (a syscall's service, page tables) go through it or kcopy */
} es_wlog;

/* What an unobserved run must not run (the recorder steps it instead):
 * fn is asked about each instruction as a block is decoded; key names the
 * set of instructions it refuses (nonzero; blocks decoded under another
 * key are dropped first). */
typedef struct es_fence {
    bool (*fn)(void *ctx, const es_insn *d, uint64_t rip);
    void *ctx;
    uint64_t key;
} es_fence;

/* Decode-cache entry: keyed by physical address and mode, valid while the
 * page's code_gen matches. */
typedef struct es_dentry {
    uint64_t key; /* (pa << 1) | mode; 0 = empty (pa 0 holds no code) */
    uint32_t gen;
    uint32_t pad;
    es_handler fn;
    es_insn insn;
} es_dentry;

#define ES_DCACHE_BITS 16

/* Observer hooks (timing, taint, trace, debugger).  Attach with
 * es_observe(); with none attached the run loop is the plain loop and the
 * memory fast path stays on, so they cost nothing. */
typedef struct es_observer {
    void *ctx;
    /* before an instruction executes (RIP = rip, state not yet changed);
     * taint tracking computes effective addresses here */
    void (*before)(void *ctx, es_machine *m, const es_insn *d, uint64_t rip);
    void (*retire)(void *ctx, es_machine *m, const es_insn *d, uint64_t rip);
    /* every guest memory access (linear address, size, 1 = write); makes
     * all accesses take the slow path while attached */
    void (*mem)(void *ctx, es_machine *m, uint64_t va, unsigned size, int write);
    void (*exception)(void *ctx, es_machine *m, int vector, uint32_t error);
    void (*mode_change)(void *ctx, es_machine *m, int cpl, int mode);
    void (*syscall)(void *ctx, es_machine *m, int abi, uint64_t nr, uint64_t ret);
    /* the simulator's half of the kernel wrote n bytes of guest memory at
     * dst: a copy of the n bytes at src, or (src 0) values derived from no
     * guest memory (fork's copy of pt_regs to the child's kernel stack) */
    void (*kcopy)(void *ctx, es_machine *m, uint64_t dst, uint64_t src, size_t n);
    /* the hooks read no arithmetic flag and need no memory hook: es_run
     * may run with them through the block cache (sim/block.c), telling
     * them every instruction as es_step does but with the flags lazy
     * inside a block.  A decode they are told of then lies in a block
     * entry (m->obs_bent), not in the decode cache. */
    bool blocks;
    /* with blocks: at CPL 3 the hooks want only the instructions that may
     * enter the kernel by design (es_may_enter); through the block cache
     * the others are not told one by one but counted, and user_run(n) is
     * called with how many retired before the next instruction told to any
     * observer and before the run returns (so before any exception hook).
     * es_step still tells every instruction (the observer must treat the
     * two the same). */
    bool user_quiet;
    void (*user_run)(void *ctx, es_machine *m, uint64_t n);
} es_observer;

/* The instructions that enter the kernel from user mode by design (a
 * fault or a vsyscall fetch arrives through the exception hook instead). */
static inline bool es_may_enter(int op)
{
    return op == ES_OP_SYSCALL || op == ES_OP_SYSENTER || op == ES_OP_INT || op == ES_OP_INT3 ||
           op == ES_OP_INTO || op == ES_OP_INT1;
}

#define ES_MAX_OBSERVERS 4

struct es_host; /* host services state (sim/host/host.h) */
struct es_kernel; /* the loaded guest kernel image (sim/boot/kernel.h) */
struct es_vmas; /* address-space bookkeeping (sim/vm.c) */
struct es_vm_file; /* a file behind mappings (sim/vm.h) */
struct es_transient; /* an open wrong-path window (sim/transient.h) */

/* execve's point of no return was passed and the new image could not be
 * loaded: the process cannot continue (es_hooks.exec). */
#define ES_EXEC_DEAD (-10000)

/* Where a program loaded by es_hooks.exec starts. */
typedef struct es_exec_start {
    uint64_t rip, rsp, brk_start;
    int abi;     /* enum es_abi */
    uint64_t cs; /* 0x33 (x86-64, x32) or 0x23 (i386) */
} es_exec_start;

/* Calls from a lower layer of the machine into a higher one, installed by
 * the higher layer when it creates the state they serve, so the lower
 * layer depends on no header of the higher one.  NULL = nothing to do.
 * None is called per instruction: only on a TLB miss that fails its walk,
 * on mapping changes and at es_machine_free. */
/* A process's system-call ABI (which table its numbers index). */
enum es_abi { ES_ABI_X64 = 0, ES_ABI_I386 = 1, ES_ABI_X32 = 2 };

/* Guest x32 syscalls have this bit set in the number (__X32_SYSCALL_BIT). */
#define ES_X32_SYSCALL_BIT 0x40000000ull

/* What the demand_fault hook returns for a file page past EOF. */
#define ES_DEMAND_SIGBUS (-2)

typedef struct es_hooks {
    /* demand paging: mem.c's page walk failed for va; returns 0 when the
     * page now exists (retry the walk), -1 for a genuine fault,
     * ES_DEMAND_SIGBUS for a page of a file mapping wholly past the end
     * of its file (the #PF then carries fault.bus).  Set by vm.c
     * (es_vm_fault) when it creates the VMA list. */
    int (*demand_fault)(es_machine *m, uint64_t va, int access);
    /* PTI (sim/boot/pti.c, set when the page tables are split): vm.c added
     * a user mapping at va / changed or removed user mappings. */
    void (*pti_sync)(es_machine *m, uint64_t va);
    void (*pti_user_flush)(es_machine *m);
    /* PTI (sim/boot/pti.c): es_vm_fork wants a new 8 KiB-aligned PGD pair
     * whose kernel halves are the current pair's; 0 and the kernel PGD's
     * physical address in *kernel_pgd_out, or -ENOMEM.  Set means PTI is
     * on: every address space's PGD is then such a pair (user = +4096). */
    int (*pti_fork)(es_machine *m, uint64_t *kernel_pgd_out);
    /* execve (sim/boot/exec.c, installed by es_launch): the program's bytes
     * data[size] (host memory, not guest) are validated, and only when they
     * are a loadable static ELF of the same abi as the current process
     * (cur_abi) is the current address space reset (es_vm_exec_reset) and
     * the image loaded with a fresh SysV stack (argv, envp, auxv as
     * es_start_process builds them; AT_EXECFN = execfn).  0 with *start
     * filled; without a guest kernel (--direct) the registers and mode are
     * set too, as es_start_process does.  Before the point of no return:
     * -ENOEXEC / -ENOMEM with nothing changed; after it ES_EXEC_DEAD (the
     * reason in m->message). */
    int (*exec)(es_machine *m, const uint8_t *data, size_t size, int cur_abi, int argc,
                char *const argv[], char *const envp[], const char *execfn,
                es_exec_start *start);
    /* es_machine_free: host services (sim/host, set by es_host_init) and
     * the guest kernel image (sim/boot, set when an image is loaded). */
    void (*free_host)(es_machine *m);
    void (*free_kernel)(es_machine *m);
    /* host services (sim/host, set by es_host_init): a guest system call in
     * --direct mode, from SYSCALL/INT 0x80/SYSENTER (registers in, RAX out;
     * returns a handler status), and the kernel model's ES_HC_SYSCALL
     * hypercall (number and arguments given; returns the result) */
    int (*host_syscall)(es_machine *m, int abi);
    int64_t (*host_call)(es_machine *m, int abi, uint64_t nr, const uint64_t args[6]);
    /* the guest kernel's log (ES_HC_PUTS: printk) and its `current`
     * (ES_HC_TASK); set by es_host_init.  kernel_log gets text, not a C
     * string; task_info fills pid, tgid and comm (16 bytes, NUL-padded). */
    void (*kernel_log)(es_machine *m, const char *text, size_t n);
    int (*task_info)(es_machine *m, int *pid, int *tgid, char comm[16]);
    /* ES_HC_SIGOP (hypercall.h): a[0] = ES_SIG_*, a[1..4] its arguments;
     * returns RAX.  May stop the run (a fatal signal). */
    int64_t (*signal_op)(es_machine *m, const uint64_t a[5]);
    /* ES_HC_SCHED (hypercall.h): a[0] = ES_SCHED_*, a[1..3] its arguments;
     * returns RAX.  task_end: the running task ended of an unhandled fault
     * (ES_HC_SIGNAL; m->stop, signal and message say how): with other
     * tasks left the run goes on (m->stop cleared).  Set by es_host_init. */
    int64_t (*sched_op)(es_machine *m, const uint64_t a[4]);
    void (*task_end)(es_machine *m, int wstatus);
    /* the modeled timer tick (es_run, between batches of instructions):
     * host services fire expired timers; returns an interrupt vector to
     * raise (the kernel then delivers what became pending), or 0 */
    unsigned (*tick)(es_machine *m);
    /* a front end's progress report (`entrysim run --progress`, cli/): es_run
     * calls it between batches of instructions (at most RUN_BATCH = 65536
     * apart, fewer when a system call yields), with progress_ctx; the
     * library itself never prints.  NULL: none (one test per batch). */
    void (*progress)(es_machine *m, void *ctx);
    void *progress_ctx;
} es_hooks;

/* Why a run stopped. */
enum es_stop {
    ES_STOP_NONE = 0,
    ES_STOP_EXIT,      /* guest exit/exit_group: exit_status */
    ES_STOP_FAULT,     /* unhandled guest fault: fault, signal */
    ES_STOP_INSNS,     /* --max-insns reached */
    ES_STOP_TIME,      /* wall-clock cap reached */
    ES_STOP_HLT,       /* HLT with no kernel to wake it */
    ES_STOP_ERROR,     /* simulator error (out of memory cap...): message */
    ES_STOP_BREAK,     /* an observer or debugger asked to stop */
    ES_STOP_LIMIT,     /* the guest hit a limit the run set (--max-tasks): message */
};

struct es_machine {
    /* --- architectural state --- */
    uint64_t gpr[16];  /* rax..r15 */
    uint64_t rip;      /* address of the executing instruction */
    uint64_t nrip;     /* next rip; branch handlers overwrite it */
    uint64_t rflags;   /* all flags; the arithmetic ones exact unless lz_op */
    /* Lazy arithmetic flags (sim/block.c, sim/isa/fast.c): while lz_op is
     * not ES_LZ_NONE, CF/PF/AF/ZF/SF/OF in rflags are stale and are those
     * of operation lz_op on lz_a and lz_b.  Only es_blocks_run sets it, and
     * it computes the flags before any other code can read them. */
    uint32_t lz_op;
    uint64_t lz_a, lz_b;
    /* The vector registers, stored as the XSAVE state components are laid
     * out (SDM Vol. 1, 13.4): bits 127:0 of each in xmm[] (component 1),
     * bits 255:128 in ymmh[] (component 2, YMM_Hi128).  AVX-512 adds
     * bits 511:256 of ZMM0-15 (component 6), ZMM16-31 whole (component 7)
     * and the opmask registers (component 5) as arrays of their own here,
     * so no access to the lower parts changes (es_vlane in sim/isa/vex.h
     * is the one place that maps a register and lane to its storage).
     * vr[] is the same storage indexed as one array -- vr[r] is XMMr,
     * vr[16 + r] bits 255:128 of YMMr -- with four scratch slots after
     * it: the SSE handlers address their operands as vr[o->reg], so a
     * VEX.256 form's upper lane runs through them by register number
     * (sim/isa/vex.c), without copies. */
    union {
        es_xmm vr[ES_VR_SLOTS];
        struct {
            es_xmm xmm[16];
            es_xmm ymmh[16];
            es_xmm vtmp[4]; /* es_vex_run's scratch: dead between instructions */
        };
    };
    uint32_t mxcsr;
    es_x87 fpu;
    es_segreg seg[8];  /* indexed by enum es_seg; [6],[7] stay zero (no segment) */
    uint64_t cr0, cr2, cr3, cr4, cr8;
    uint64_t efer;
    uint64_t xcr0;
    uint64_t dr[8];
    uint8_t cpl;       /* current privilege level, 0 or 3 */
    uint8_t mode;      /* enum es_mode of CS */
    uint8_t need_u;    /* ES_TP_U when cpl == 3: required TLB permission */
    uint8_t vendor;    /* 0 = Intel, 1 = AMD (CPUID strings and SYSCALL rules) */
    struct {
        uint64_t star, lstar, cstar, sfmask;
        uint64_t kernel_gs_base, tsc_aux;
        uint64_t sysenter_cs, sysenter_esp, sysenter_eip;
        uint64_t pat, apic_base, misc_enable, spec_ctrl;
    } msr;
    struct {
        uint64_t base;
        uint16_t limit;
    } gdtr, idtr;
    es_segreg tr, ldtr;
    /* Descriptor table the segment loads read until the guest kernel has a
     * GDT in guest memory: Linux x86-64's layout (1 KERNEL32_CS 0x08,
     * 2 KERNEL_CS 0x10, 3 KERNEL_DS 0x18, 4 USER32_CS 0x23, 5 USER_DS 0x2b,
     * 6 USER_CS 0x33, 12..14 TLS entries set by set_thread_area). */
    uint64_t gdt[16];
    uint64_t tsc;      /* deterministic time-stamp counter */
    /* RDRAND/RDSEED's generator state (sim/isa/system.c): seeded from the
     * host by es_machine_new, with ES_RNG_SEED under --deterministic
     * (es_launch).  Architectural, so the debugger's undo and replay of a
     * run see the same values. */
    uint64_t rng;
    /* with a cycle model attached (timing/): RDTSC/RDTSCP read the model's
     * clock, the retire cycle of the last instruction before them, so a
     * guest's own timing (Flush+Reload) sees the model's cache */
    bool tsc_model;
    uint64_t model_cycles;

    /* --- pending fault (recorded by handlers / memory, delivered by run loop) --- */
    struct {
        uint8_t vector;
        uint8_t has_error;
        uint32_t error;
        uint64_t addr;   /* #PF linear address (becomes CR2) */
        uint64_t rip;    /* faulting instruction */
        int write;       /* #PF: the access was a write */
        uint8_t bus;     /* #PF: on a file page past EOF, Linux's SIGBUS
                          * (BUS_ADRERR) rather than SIGSEGV */
    } fault;

    /* --- memory --- */
    es_frame *frames;     /* indexed by physical frame number */
    uint64_t nframes;     /* size of frames[] = physical address space / 4 KiB */
    uint64_t frames_used; /* touched frames (counts toward mem_cap) */
    uint64_t mem_cap;     /* bytes of guest memory allowed */
    uint64_t next_free_pfn;
    uint64_t *free_pfns;  /* stack of released frames */
    size_t nfree_pfns, cap_free_pfns;
    uint8_t **arenas;     /* host memory of frames, 512 per arena (sim/mem.c) */
    size_t narenas;
    es_tlbe tlb[ES_TLB_SIZE];
    bool tlb_bypass;      /* memory observers attached: never fill the TLB */
    struct es_transient *spec; /* a wrong-path window is open (sim/transient.h):
                                  stores are logged, no demand paging */
    bool ac_check;        /* CPL 3 with CR0.AM and RFLAGS.AC: alignment checks on */
    /* fetch shortcut: the page RIP ran from last */
    uint64_t fetch_va;    /* linear page, 1 = none */
    uint64_t fetch_pa;
    es_frame *fetch_frame;
    uint64_t fetch_hash;  /* decode-cache index of the page's offset 0 */
    uint64_t fetch_key;   /* decode-cache key of the page's offset 0 */
    uint64_t code_stamp;  /* bumped with any frame's code_gen: a block checked
                             at the current stamp is valid (sim/block.c) */

    /* --- decode cache --- */
    es_dentry *dcache;    /* 1 << ES_DCACHE_BITS entries */
    const es_handler *handlers; /* dispatch table indexed by es_op */
    uint64_t decodes;     /* decode-cache misses (statistics) */
    es_dentry dscratch;   /* page-crossing instructions are decoded here, uncached */
    uint64_t ipmask;      /* 0xffffffff in 32-bit mode: EIP wraps */
    struct es_bcache *bcache; /* es_run's block cache (sim/block.c), made on first use */
    const struct es_bent *bpos; /* where a threaded block's chain stopped, NULL: its end */
    const es_fence *fence; /* es_run_fenced's, for the blocks it decodes; NULL otherwise */
    es_wlog *wlog;         /* es_run_fenced's list of written frames; NULL otherwise */
    uint16_t unimpl_op;   /* es_op of the last unimplemented instruction hit */
    /* es_vex_run (sim/isa/vex.c) runs an SSE handler once per lane: while
     * fp_defer is set, sse_fp_commit collects the lanes' exception flags
     * in fp_acc, so the instruction raises #XM or sets MXCSR once, for
     * all of its elements (SDM Vol. 1, 11.5.1) */
    bool fp_defer;
    uint32_t fp_acc;

    /* --- run control --- */
    uint64_t icount;      /* instructions retired */
    uint64_t max_insns;   /* 0 = unlimited */
    double wall_limit;    /* seconds, 0 = unlimited */
    int64_t deadline_ns;  /* CLOCK_MONOTONIC ns when wall_limit runs out in the
                           * current run (es_deadline_arm), 0 = none; host
                           * services never wait past it */
    int stop;             /* enum es_stop after a run */
    int exit_status;      /* guest exit status (ES_STOP_EXIT) */
    int signal;           /* signal number when a fault killed the guest */
    char message[256];    /* human-readable reason for ES_STOP_FAULT/ERROR */
    bool deterministic;   /* RDTSC, time and getrandom from fixed seeds */

    /* --- observers --- */
    es_observer obs[ES_MAX_OBSERVERS];
    int nobs;
    /* the observers are being told of a decode held in a block entry
     * (es_observer.blocks; es_bent_slot in sim/block.h names it) */
    bool obs_bent;

    /* --- host services (Linux process semantics, sim/host/) --- */
    struct es_host *host;
    /* The running process's LDT (modify_ldt, sim/host/ldt.c): the
     * descriptors a selector with TI = 1 names (sim/seg.c), kept in host
     * memory as m->gdt[] is before LGDT; NULL = no LDT (ldtr null). */
    uint64_t *ldt;
    uint32_t ldt_n;

    /* --- guest kernel (kernel_model/, loaded by sim/boot/kernel.c) ---
     * has_kernel: SYSCALL/SYSENTER/INT n/exceptions go through the guest's
     * MSRs and IDT; false = --direct mode, where they reach es_host_syscall
     * or stop the run as before. */
    bool has_kernel;
    struct es_kernel *kernel;

    /* --- address space: VMAs over the page tables (sim/vm.c) --- */
    struct es_vmas *vmas; /* the current address space's */
    /* what every address space shares (sim/vm.c) */
    struct {
        uint64_t zero_pfn;        /* the shared zero frame, 0 until first needed */
        struct es_vm_file *files; /* the files some VMA of any address space uses */
        uint64_t kstack_pdpt;     /* PDPT of the kernel-stack region, 0 until made */
    } vmg;

    /* --- upward calls, installed by the layers above (see es_hooks) --- */
    es_hooks hooks;

    /* --- host memory (sim/cpu.c), last: fields added above would move
     * the hot ones (the TLB) and change the code the compiler makes --- */
    uint64_t frames_room; /* entries frames[] has room for (>= nframes): the
                             guest kernel's frames fit without a realloc */
    uint64_t *dc_used;    /* bit i: dcache[i] was written (so that passing the
                             cache on clears those entries only, es_spares) */
    struct es_spares *spares; /* where es_machine_free leaves the cache, or NULL */
};

/* RDRAND/RDSEED's seed in a --deterministic run. */
#define ES_RNG_SEED 0x5eed2026c0ffee01ull

/* Creates a machine with `mem_cap` bytes of guest memory allowed (0 = the
 * default, 1 GiB).  Returns NULL on host allocation failure. */
es_machine *es_machine_new(uint64_t mem_cap);
void es_machine_free(es_machine *m);

/* Host memory that machines made and freed one after another pass on (a
 * batch of short runs: `entrysim exposure --all` makes a machine per
 * syscall).  A freed machine leaves its decode cache there with the
 * entries it wrote cleared, and the next one takes it: a fresh cache is
 * 10 MiB that calloc clears byte by byte (heap memory) or that faults in
 * page by page (fresh mmap'd memory, twice as slow as clearing).  Owned by
 * the caller; es_machine_new_spared's machines leave their memory in it
 * when freed, so free it after the last of them. */
typedef struct es_spares es_spares;
es_spares *es_spares_new(void);
void es_spares_free(es_spares *s);
/* es_machine_new taking host memory from s and leaving it there when
 * freed (s NULL: es_machine_new). */
es_machine *es_machine_new_spared(uint64_t mem_cap, es_spares *s);
/* The spares' stock of guest-frame arenas (sim/mem.c takes and leaves
 * them): take one all zero (NULL: none), keep one all zero (false: no
 * room, the caller unmaps it).  A freed machine's arenas already have
 * host pages behind the frames it touched: the next machine skips those
 * page faults, most of a short run's time. */
void *es_spares_take_arena(es_spares *s);
bool es_spares_keep_arena(es_spares *s, void *arena);

/* Runs until something stops the machine; returns enum es_stop (also in
 * m->stop). */
int es_run(es_machine *m);

/* --timeout: es_deadline_arm starts the clock of a run (m->deadline_ns from
 * m->wall_limit; es_run does it, a debugger's resume does it itself),
 * es_deadline_clear stops it.  es_deadline_passed sets m->stop =
 * ES_STOP_TIME and returns true once the deadline is reached.  es_now_ns:
 * CLOCK_MONOTONIC in ns. */
int64_t es_now_ns(void);
void es_deadline_arm(es_machine *m);
void es_deadline_clear(es_machine *m);
bool es_deadline_passed(es_machine *m);

/* Executes exactly one instruction (observers are called).  Returns the
 * handler status; without a guest kernel, faults are left in m->fault and
 * m->stop is set as es_run would.  With one (has_kernel), a fault is
 * delivered through the guest IDT and es_step returns ES_OK with RIP at the
 * handler; only a triple fault stops the run. */
int es_step(es_machine *m);

/* Runs at most budget instructions through blocks as es_run's plain loop
 * does, with no observer told and the TLB filled, for a recorder that logs
 * the effect of the run as a whole (the debugger's continue: user code
 * between two kernel entries).  The frames it may write are added to
 * *wlog (es_wlog_clear, sim/mem.h, empties it).  It stops before an instruction
 * f->fn refuses and before one no block can hold (both return ES_STOP
 * with m->stop ES_STOP_NONE, RIP at it, nothing run), and at a fault,
 * which is not delivered (ES_FAULT, RIP at the faulting instruction, which
 * did not retire: es_step runs it again and delivers it).  Else as
 * es_blocks_run: ES_OK when the budget ran out. */
int es_run_fenced(es_machine *m, uint64_t budget, const es_fence *f, es_wlog *wlog);

/* Attaches an observer; returns 0, or -1 when the table is full. */
int es_observe(es_machine *m, const es_observer *o);
/* One instruction with no observer told and no fault delivered: pre (when
 * not NULL) sees the decode first and may refuse it (ES_STOP); else the
 * handler's status (ES_FAULT with m->fault recorded).  For wrong-path
 * windows (sim/transient.h). */
int es_step_raw(es_machine *m, bool (*pre)(void *ctx, es_machine *m, const es_insn *d),
                void *ctx);
/* Tells the observers of a kcopy (es_observer.kcopy). */
void es_observe_kcopy(es_machine *m, uint64_t dst, uint64_t src, size_t n);
void es_unobserve_all(es_machine *m);

/* The dispatch table (immutable after first use). */
const es_handler *es_dispatch_table(void);

#ifdef __cplusplus
}
#endif
#endif
