/* seg.h - segment-register loads from the descriptor table (MOV/POP to a
 * segment register, far JMP/CALL/RET), with the protected-mode checks of
 * SDM Vol. 3A, 5.5-5.8 as they apply to a flat Linux process.
 */
#ifndef ENTRYSIM_SEG_H
#define ENTRYSIM_SEG_H

#include "machine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Descriptor access-byte bits (SDM Vol. 3A, 3.4.5). */
#define ES_DESC_A 0x01    /* accessed */
#define ES_DESC_RW 0x02   /* data: writable; code: readable */
#define ES_DESC_C 0x04    /* code: conforming (data: expand-down) */
#define ES_DESC_CODE 0x08 /* code segment */
#define ES_DESC_S 0x10    /* code or data (not a system descriptor) */
#define ES_DESC_P 0x80    /* present */

/* Reads the raw descriptor of `sel` from the GDT: m->gdt[] while
 * m->gdtr.limit is 0, else the table at m->gdtr.base in guest memory (as
 * loaded by LGDT).  An LDT selector, an index past the table or an
 * unreadable table fails.  Returns 0 and sets *desc, or -1. */
int es_desc_read(es_machine *m, uint16_t sel, uint64_t *desc);

/* Expands a raw descriptor into the hidden part of a segment register. */
void es_desc_unpack(uint64_t desc, uint16_t sel, es_segreg *out);

/* Checks `sel` for data segment register `seg` (ES, SS, DS, FS, GS) at
 * privilege `cpl` and fills *out with the descriptor's contents; records
 * the fault and returns -1 if the load would fault.  Nothing changes. */
int es_check_data_seg(es_machine *m, int seg, uint16_t sel, int cpl, es_segreg *out);

/* Loads data segment register `seg` (ES, SS, DS, FS, GS) with `sel` as
 * MOV Sreg / POP Sreg do, at the current CPL and mode.  Faults (#GP(sel),
 * #GP(0), #NP, #SS) are recorded and -1 returned, with nothing changed.
 * In 64-bit mode the bases of ES/SS/DS stay 0 (ignored by the CPU) and a
 * selector load of FS/GS sets the base from the descriptor's 32-bit base. */
int es_load_data_seg(es_machine *m, int seg, uint16_t sel);

/* Checks `sel` as the target of a far JMP/CALL/RET to the same privilege
 * level (call gates and privilege changes are not modelled) and reports
 * the execution mode of the code segment in *mode.  Returns 0, or -1 with
 * the fault recorded; nothing is changed. */
int es_check_far_cs(es_machine *m, uint16_t sel, int *mode);

/* The same for a return (IRET) to privilege `cpl` (RPL of sel, >= CPL). */
int es_check_ret_cs(es_machine *m, uint16_t sel, int cpl, int *mode);

/* Commits CS = sel (already checked) and switches the execution mode
 * (64-bit <-> compatibility), fixing up the data-segment bases that the
 * mode makes visible or hidden. */
void es_commit_cs(es_machine *m, uint16_t sel, int mode);
/* Same, also changing CPL (a return to an outer privilege level). */
void es_commit_cs_cpl(es_machine *m, uint16_t sel, int cpl, int mode);

/* Switches CPL and execution mode after CS was written directly (SYSCALL,
 * SYSRET, SYSENTER, SYSEXIT load fixed descriptor caches, not the GDT's),
 * fixing up the ES/SS/DS bases the mode makes visible or hidden. */
void es_switch_mode(es_machine *m, int cpl, int mode);

/* Sets CPL and mode (64-bit or compatibility) and everything derived from
 * them (the user-page permission the TLB needs, the RIP mask, alignment
 * checking), and tells the observers when they changed. */
void es_set_mode(es_machine *m, int cpl, int mode);

/* Rewrites the access byte of the descriptor of `sel` in the GDT (LTR marks
 * the TSS busy).  Returns 0 or -1. */
int es_desc_set_access(es_machine *m, uint16_t sel, uint8_t acc);

#ifdef __cplusplus
}
#endif
#endif
