/* phases.h - per-syscall cycle breakdown of the kernel entry path (issue 4).
 *
 * Attached after the timing model, the tracker follows each system call
 * through its phases and charges the retire-time cycles (es_timing_cycles)
 * of every instruction to the phase it belongs to:
 *   hw_entry   the SYSCALL / INT / SYSENTER instruction itself (for a fault
 *              from user mode, e.g. a vsyscall: the first handler
 *              instruction, whose cost carries the delivery)
 *   entry_asm  entry assembly: stack switch, pt_regs pushes, clears (and
 *              whatever mitigations add there: CR3 switch, IBRS write)
 *   dispatch   do_syscall_64 / do_*_syscall_32 (es_do_exception for
 *              faults) up to the table target (bounds check,
 *              array_index_nospec, the indirect call or retpoline thunk)
 *   stub       the table target's argument decoding (__x64_sys_*, SyS_*...)
 *              and its epilogue after the body returns
 *   body       the syscall's C body (__do_sys_*, SYSC_*...) and everything
 *              it calls, the host-service hypercall included
 *   exit_path  from the table target's return (or the dispatcher's, when
 *              nothing was called) to the final instruction
 *   hw_exit    the SYSRET / SYSEXIT / IRET instruction itself
 * Boundaries come from the guest kernel's symbols and the stack pointer
 * (docs/TIMING.md), never from instruction counts, so they hold for every
 * patch subset, both conventions and every mitigation.
 */
#ifndef ENTRYSIM_PHASES_H
#define ENTRYSIM_PHASES_H

#include <stdint.h>
#include <stdio.h>

#include "machine.h"
#include "timing.h"

#ifdef __cplusplus
extern "C" {
#endif

enum es_phase {
    ES_PH_HW_ENTRY, ES_PH_ENTRY_ASM, ES_PH_DISPATCH, ES_PH_STUB, ES_PH_BODY, ES_PH_EXIT_PATH,
    ES_PH_HW_EXIT, ES_PH_COUNT
};

/* Phase names as used in reports and JSON ("hw_entry" ...). */
const char *es_phase_name(int phase);

typedef struct es_phases es_phases;

/* What a report says about the run besides the figures. */
typedef struct es_run_meta {
    const char *program;     /* as given on the command line */
    const char *uarch;       /* "znver4" */
    const char *kernel;      /* es_patches_name(): "v4.17", "v4.16+dfe6450" ... or "direct" */
    const char *mitigations; /* es_mitigations_name() */
    const char *cpu;         /* "amd" / "intel" */
    int exit_status;         /* what entrysim exits with */
    bool speculate;          /* --speculate: the wrong-path figures are reported */
} es_run_meta;

/* Creates a tracker for m (kernel loaded and booted or not: without a guest
 * kernel only totals are reported) and attaches it as an observer after the
 * timing model t.  t == NULL counts one cycle per retired instruction
 * (deterministic instruction counts, for tests).  NULL on allocation
 * failure or a full observer table. */
es_phases *es_phases_attach(es_machine *m, es_timing *t);
void es_phases_free(es_phases *p);

/* Entry kinds of a row: enum es_entry of exposure.h (syscall64, int80,
 * sysenter32, syscall32, x32, vsyscall), or ES_PH_ENTRY_TRAP for a fault or
 * software interrupt from user mode that is not a system call (nr = the
 * vector). */
#define ES_PH_ENTRY_TRAP 16
/* A new task's first way out of the kernel: ret_from_fork, from the
 * context switch that first runs it to the IRET to user mode (entry
 * "child", one row named "ret_from_fork"; its cycles count with the
 * system calls'). */
#define ES_PH_ENTRY_FORK 17
/* "syscall64" ... "vsyscall", "trap", "child". */
const char *es_ph_entry_name(int entry);

/* One row of the report: every call of one (entry kind, number). */
typedef struct es_phase_row {
    int entry;
    uint32_t nr;        /* number in the entry's table (x32 bit removed) */
    char name[48];      /* from the syscall tables ("getpid"), "#PF" for traps */
    uint64_t count;     /* entries into the kernel */
    uint64_t cycles;    /* sum of phase[] */
    uint64_t phase[ES_PH_COUNT];
    /* es_phases_count_speculation: wrong-path windows, transient
     * instructions and cache lines they filled, by the phase of the
     * mispredicted branch */
    uint64_t spec[3][ES_PH_COUNT];
} es_phase_row;

/* Also count the cycle model's wrong-path work (--speculate) per row and
 * phase. */
void es_phases_count_speculation(es_phases *p, bool on);

/* Rows sorted by (entry, nr); valid until the next instruction runs. */
size_t es_phases_nrows(const es_phases *p);
const es_phase_row *es_phases_row(const es_phases *p, size_t i);

typedef struct es_phase_totals {
    uint64_t insns, cycles;       /* since attach; cycles = user + kernel */
    uint64_t user_cycles;         /* CPL 3 outside any kernel entry */
    uint64_t kernel_cycles;       /* syscalls + traps + boot */
    uint64_t boot_cycles;         /* kernel work before the first user instruction */
    uint64_t boot_insns;          /* its instructions */
    uint64_t sys_count, sys_cycles, sys_phase[ES_PH_COUNT]; /* system calls (vsyscalls too) */
    uint64_t trap_count, trap_cycles;                      /* ES_PH_ENTRY_TRAP rows */
} es_phase_totals;
void es_phases_totals(const es_phases *p, es_phase_totals *out);

/* Human-readable report (totals, IPC, per-syscall phase table, the model's
 * statistics when a model is attached). */
void es_phases_print(const es_phases *p, es_machine *m, const es_run_meta *meta, FILE *out);

/* The same as JSON (schema in docs/TIMING.md; bench/ reads it).  Returns 0,
 * or -1 when the file cannot be written.  es_phases_fprint_json writes the
 * object (and a newline) to an open stream. */
int es_phases_write_json(const es_phases *p, es_machine *m, const es_run_meta *meta,
                         const char *path);
void es_phases_fprint_json(const es_phases *p, es_machine *m, const es_run_meta *meta,
                           FILE *f);
/* s as a JSON string (quotes and escapes; NULL as ""). */
void es_json_str(FILE *f, const char *s);


/* ---- one call at a time (the Chrome trace of trace_json.c) ----
 * Off unless a hook is set: then every kernel entry is handed over when it
 * returns to user mode (or when the next one opens, or at
 * es_phases_flush_call, for one that never returned: exit_group), with its
 * phases in the order they ran.  Times are the tracker's clock: the
 * model's cycles (instructions without a model). */
#define ES_PH_MAXSEG 16

typedef struct es_phase_seg {
    int phase;
    uint64_t start, cycles;
} es_phase_seg;

typedef struct es_phase_call {
    int entry;
    uint32_t nr;
    char name[48];
    uint64_t start, end;             /* end = start + the sum of seg[].cycles */
    uint64_t insn_start, insn_end;   /* the tracker's instruction count before/after */
    int returned;                    /* reached user mode again */
    unsigned nseg;                   /* consecutive runs of one phase (stub can come twice) */
    es_phase_seg seg[ES_PH_MAXSEG];  /* beyond the last, runs merge into it */
} es_phase_call;

typedef void (*es_phase_call_fn)(void *ctx, const es_phase_call *c);
void es_phases_set_call_hook(es_phases *p, es_phase_call_fn fn, void *ctx);
void es_phases_flush_call(es_phases *p);

#ifdef __cplusplus
}
#endif
#endif
