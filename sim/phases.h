/* phases.h - per-syscall cycle breakdown of the kernel entry path (issue 4).
 *
 * Attached after the timing model, the tracker follows each system call
 * through its phases and charges the retire-time cycles (es_timing_cycles)
 * of every instruction to the phase it belongs to:
 *   hw_entry   the SYSCALL / INT / SYSENTER instruction itself
 *   entry_asm  entry assembly: stack switch, pt_regs pushes, clears
 *   dispatch   do_syscall_64 / do_*_syscall_32 up to the table call
 *              (bounds check, array_index_nospec, the indirect call)
 *   stub       the table target's argument decoding (__x64_sys_*, SyS_*...)
 *   body       the syscall's C body (__do_sys_*, SYSC_*...)
 *   exit_path  from the body's return to the final instruction
 *   hw_exit    the SYSRET / SYSEXIT / IRET instruction itself
 */
#ifndef ENTRYSIM_PHASES_H
#define ENTRYSIM_PHASES_H

#include <stdio.h>

#include "machine.h"
#include "timing/timing.h"

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
} es_run_meta;

/* Creates a tracker for m (kernel loaded and booted or not: without a guest
 * kernel only totals are reported) and attaches it as an observer after the
 * timing model t.  NULL on allocation failure or a full observer table. */
es_phases *es_phases_attach(es_machine *m, es_timing *t);
void es_phases_free(es_phases *p);

/* Human-readable report (totals, IPC, per-syscall phase table). */
void es_phases_print(const es_phases *p, es_machine *m, const es_run_meta *meta, FILE *out);

/* The same as JSON (schema in docs/TIMING.md; bench/ reads it).  Returns 0,
 * or -1 when the file cannot be written. */
int es_phases_write_json(const es_phases *p, es_machine *m, const es_run_meta *meta,
                         const char *path);

#ifdef __cplusplus
}
#endif
#endif
