/* dbg.h - the debugging session behind `entrysim debug` (issue 5): one
 * guest program under the guest kernel, run control (step, step over, step
 * out, continue, run to the next syscall / kernel entry / return to user,
 * until, breakpoints, reverse step and reverse continue), and everything
 * the window shows as plain data (registers with change marks and taint
 * labels, disassembly, the kernel stack as struct pt_regs, live user
 * values, memory, guest output, status).  No SDL here: debugger.c (the
 * window) draws from these calls and maps keys to es_dbg_exec commands.
 *
 * Reverse execution: an undo log recorded while stepping (see dbg_undo.c
 * for why a log rather than snapshots + re-execution).  It restores the
 * architectural state and guest memory exactly; host-side effects (bytes
 * written to files or the terminal, the host's file table, pages mapped on
 * demand) are not undone.
 */
#ifndef ENTRYSIM_DBG_H
#define ENTRYSIM_DBG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "launch.h"
#include "machine.h"
#include "taint.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct es_dbg es_dbg;

typedef struct es_dbg_cfg {
    /* How to start the guest, as for `entrysim run` (program, argv,
     * patches, mitigations, vendor...).  stdout_fd/stderr_fd are ignored:
     * the session captures the guest's fds 1 and 2 (es_dbg_output). */
    es_launch_cfg launch;
    const char *uarch;    /* timing model to attach ("znver4"), NULL = none */
    bool speculate;       /* with uarch: the model runs wrong paths (--speculate) */
    bool no_taint;        /* do not track which values come from user space */
    uint64_t undo_insns;  /* instructions kept for reverse (0 = 1M) */
    size_t undo_bytes;    /* memory the undo log may use (0 = 256 MiB) */
    size_t output_cap;    /* bytes of guest output kept (0 = 256 KiB; older are dropped) */
    uint64_t run_budget;  /* max instructions per continue-like command (0 = 200M) */
    bool step_only;       /* run user code one recorded instruction at a time too
                             (not unobserved between kernel entries): slower, for
                             comparing the two */
} es_dbg_cfg;

/* Starts the program (es_launch) with the session's observers attached.
 * Returns NULL with a one-line reason in err (program not found, not an
 * ELF, no kernel image...). The session copies what it needs from cfg
 * (strings included). */
es_dbg *es_dbg_new(const es_dbg_cfg *cfg, char *err, size_t errlen);
void es_dbg_free(es_dbg *d);

/* Starts the program again from the beginning, with cfg (NULL = the same
 * configuration as before).  Breakpoints are kept and resolved again in
 * the new image.  Returns 0, or -1 with err (the old session is kept). */
int es_dbg_restart(es_dbg *d, const es_dbg_cfg *cfg, char *err, size_t errlen);

/* The machine (for reading; changing it behind the session's back
 * invalidates the undo log).  Changes on restart. */
es_machine *es_dbg_machine(es_dbg *d);
/* The taint state (NULL with no_taint). */
const es_taint *es_dbg_taint(const es_dbg *d);

/* ---- run control ----
 * Every command returns why it stopped.  The first instruction executed
 * by a resuming command never stops at a breakpoint at the current RIP. */
enum es_dbg_stop {
    ES_DBG_STEPPED = 0,  /* the requested steps were done */
    ES_DBG_REACHED,      /* the target of next/finish/until/syscall/kentry/kexit */
    ES_DBG_BREAKPOINT,   /* a breakpoint (es_dbg_status.bp_hit says which) */
    ES_DBG_EXITED,       /* the guest exited (status in es_dbg_status) */
    ES_DBG_FAULTED,      /* the guest died of a fault, or the simulator stopped (message) */
    ES_DBG_BUDGET,       /* run_budget instructions without reaching the target */
    ES_DBG_HISTORY_END,  /* reverse: no older state recorded */
};
const char *es_dbg_stop_name(int why);

enum es_dbg_target {
    ES_DBG_TO_SYSCALL = 0, /* RIP at a user syscall/sysenter/int 0x80 instruction */
    ES_DBG_TO_KENTRY,      /* CPL went 3 -> 0 */
    ES_DBG_TO_KEXIT,       /* CPL went 0 -> 3 */
};

int es_dbg_step(es_dbg *d, uint64_t n);          /* step into, n instructions */
int es_dbg_next(es_dbg *d);                       /* step over calls */
int es_dbg_finish(es_dbg *d);                     /* to the return of the current function */
int es_dbg_continue(es_dbg *d);                   /* to a breakpoint or the end */
int es_dbg_run_to(es_dbg *d, int target);         /* enum es_dbg_target */
int es_dbg_until(es_dbg *d, uint64_t addr);       /* to RIP == addr */
int es_dbg_reverse(es_dbg *d, uint64_t n);        /* undo n instructions */
int es_dbg_reverse_continue(es_dbg *d);           /* back to a breakpoint or the oldest state */
/* Instructions that can be undone now. */
uint64_t es_dbg_history(const es_dbg *d);

/* ---- symbols and breakpoints ---- */

/* Resolves "SYMBOL", "SYMBOL+OFF", "0xADDR" or a register name ("rsp")
 * against the user ELF's .symtab and the guest kernel's symbols.  Returns
 * 0, or -1 with a reason in err. */
int es_dbg_resolve(es_dbg *d, const char *spec, uint64_t *addr, char *err, size_t errlen);
/* The source line of addr from the DWARF line tables of the kernel image
 * or the program: "FILE:LINE" (FILE's base name) in loc and the line's text
 * in *text ("" when the file is not on this machine).  false when there is
 * no line for addr. */
bool es_dbg_source(es_dbg *d, uint64_t addr, char *loc, size_t loclen, const char **text);
/* Name of the symbol containing addr (user or kernel) and the offset;
 * NULL when none. */
const char *es_dbg_symbolize(const es_dbg *d, uint64_t addr, uint64_t *off);

typedef struct es_dbg_bp {
    int id;          /* 1, 2, ... as shown to the user; never reused in a session */
    uint64_t addr;   /* 0 when the spec does not resolve in the current image */
    char spec[96];   /* as given */
    uint64_t hits;
} es_dbg_bp;
/* Adds a breakpoint; returns its id, or -1 with err. */
int es_dbg_break_add(es_dbg *d, const char *spec, char *err, size_t errlen);
/* Deletes breakpoint id; 0, or -1 if there is none. */
int es_dbg_break_del(es_dbg *d, int id);
size_t es_dbg_break_count(const es_dbg *d);
const es_dbg_bp *es_dbg_break_get(const es_dbg *d, size_t i);
bool es_dbg_break_at(const es_dbg *d, uint64_t addr);

/* ---- state the window shows ---- */

enum es_dbg_reg_group { ES_DBG_RG_GPR = 0, ES_DBG_RG_CTRL, ES_DBG_RG_SEG, ES_DBG_RG_MSR };

typedef struct es_dbg_reg {
    char name[16];     /* "rax", "rip", "rflags", "cs", "fs.base", "lstar", "cpl"... */
    uint64_t value;
    uint8_t width;     /* bytes worth showing (2 for selectors) */
    uint8_t group;     /* enum es_dbg_reg_group */
    bool changed;      /* differs from before the last run-control command */
    es_label taint;    /* GPRs and rflags in kernel mode: the user values it derives from */
    char labels[96];   /* taint as names ("rdi,nr"), "" when clean */
} es_dbg_reg;
#define ES_DBG_MAX_REGS 48
/* Fills out[] (at most ES_DBG_MAX_REGS rows) in display order: the 16 GPRs
 * (rax..r15 in the SDM's order), rip, rflags, cpl, mode; cs ds es fs gs ss
 * selectors, fs.base, gs.base; star, lstar, cstar, sfmask, sysenter_cs,
 * sysenter_esp, sysenter_eip, kernel_gs_base.  Returns the row count. */
size_t es_dbg_regs(const es_dbg *d, es_dbg_reg *out, size_t max);
/* The vector registers as YMM (AVX): bits 255:0 of each, the XMM register
 * being the low half.  Code in compat mode reaches YMM0-7 only (SDM Vol. 1,
 * 14.1), so there only those 8 are listed; in 64-bit mode all 16. */
#define ES_DBG_MAX_VREGS 16
typedef struct es_dbg_vreg {
    char name[8];      /* "ymm0".."ymm15" */
    es_ymm value;      /* value.x[0]: bits 127:0 (xmmN), value.x[1]: bits 255:128 */
    bool changed;      /* differs from before the last run-control command */
} es_dbg_vreg;
/* Fills out[] (at most max rows) in register order; returns the row count. */
size_t es_dbg_vregs(const es_dbg *d, es_dbg_vreg *out, size_t max);
/* How vector values are shown: 64-bit words in hex, 32-bit floats or
 * 64-bit doubles, the highest element first; ES_DBG_VF_OFF is the window's
 * panel hidden. */
enum es_dbg_vfmt { ES_DBG_VF_HEX = 0, ES_DBG_VF_FLOAT, ES_DBG_VF_DOUBLE, ES_DBG_VF_OFF };
/* The window's vector register panel (set by the `vregs` command, so a
 * script's screenshot can show it): an es_dbg_vfmt, ES_DBG_VF_OFF at
 * first. */
int es_dbg_vregs_view(const es_dbg *d);
void es_dbg_set_vregs_view(es_dbg *d, int fmt);
/* RFLAGS decoded: "IF ZF PF" (set flags, the SDM's names, IOPL=n when not 0). */
void es_dbg_flags_str(uint64_t rflags, char *buf, size_t n);

typedef struct es_dbg_line {
    uint64_t addr;
    uint8_t len;            /* 0 when the bytes do not decode/are not mapped */
    char text[160];         /* es_format_sym in the session's syntax */
    char sym[96];           /* "entry_SYSCALL_64+0x12", "" when unknown */
    char src[160];          /* "common.c:290  regs->ax = ...", "" without line tables */
    bool src_start;         /* src differs from the line before it (shown above it) */
    bool label;             /* first instruction of a symbol */
    bool current;           /* RIP */
    bool breakpoint;
    int64_t cycles;         /* cycles of its last execution (timing on), else -1 */
    /* es_dbg_wrongpath: ran on the wrong path and was squashed; started
     * before the branch resolved; the cache line its load filled (else
     * UINT64_MAX) */
    bool transient, executed;
    uint64_t filled;
} es_dbg_line;
/* Disassembly around RIP: up to `before` instructions before it (found by
 * decoding forward from the symbol start or from recently executed
 * addresses) and `after` after it.  Returns the number of lines written;
 * the current line is the one with `current`. */
size_t es_dbg_disasm(es_dbg *d, int before, int after, es_dbg_line *out, size_t max);
/* --speculate: the last wrong-path window the cycle model ran and
 * squashed, one line per instruction (transient set); *windows: how many
 * windows so far.  0 lines when none ran yet. */
size_t es_dbg_wrongpath(es_dbg *d, es_dbg_line *out, size_t max, uint64_t *windows);
int es_dbg_syntax(const es_dbg *d);  /* enum es_syntax */
void es_dbg_set_syntax(es_dbg *d, int syntax);

/* struct pt_regs on the kernel stack (Linux x86-64 layout, 168 bytes) at
 * TSS.RSP0 - 168: where the 64-bit and compat entries build it. */
#define ES_DBG_PTREGS_SLOTS 21
typedef struct es_dbg_slot {
    const char *field;  /* "r15" ... "di", "orig_ax", "ip", "cs", "flags", "sp", "ss" */
    unsigned off;       /* byte offset in pt_regs (0x00 r15 ... 0xa0 ss) */
    uint64_t value;
    bool written;       /* written since the last kernel entry */
    unsigned order;     /* 1 = first slot written in this entry, 0 = not written */
    bool cleared;       /* the register saved here was then zeroed by the entry code */
    es_label taint;
    char labels[96];
} es_dbg_slot;
/* Fills the 21 slots in address order (r15 first) and *base (the frame's
 * address).  Returns 0, or -1 when there is no guest kernel. */
int es_dbg_ptregs(es_dbg *d, uint64_t *base, es_dbg_slot out[ES_DBG_PTREGS_SLOTS]);

/* Live user-derived values at this point: every register and pt_regs slot
 * whose taint is not empty. */
typedef struct es_dbg_live {
    char where[24];     /* "rdi", "pt_regs->di" */
    uint64_t value;
    es_label taint;
    char labels[96];
} es_dbg_live;
size_t es_dbg_exposure(es_dbg *d, es_dbg_live *out, size_t max);
/* At a probe point of the syscall in progress (first instruction of the
 * C dispatcher, the table target or the body): the table `entrysim
 * exposure` prints for this convention, entry and syscall.  NULL when RIP
 * is not at a probe point.  The string stays valid until the next call
 * that changes the state. */
const char *es_dbg_probe_table(es_dbg *d);

/* Reads guest memory at a linear address (no side effects, current
 * address space); returns the number of bytes readable from addr (stops
 * at the first unmapped page). */
size_t es_dbg_read(es_dbg *d, uint64_t addr, void *buf, size_t n);
/* The address the memory view shows (set by the `mem` command; a register
 * name there makes it follow that register). */
uint64_t es_dbg_memview(es_dbg *d);

/* Guest stdout and stderr as written so far (the last output_cap bytes),
 * NUL-terminated; valid until the next command or restart. */
const char *es_dbg_output(es_dbg *d, size_t *len);

typedef struct es_dbg_status {
    int cpl;
    int mode;               /* enum es_mode */
    uint64_t icount;        /* instructions retired by the program and the kernel
                             * for it, from its first instruction (0 there) */
    uint64_t boot_icount;   /* the kernel's start-up before it (not in icount) */
    bool timing;            /* a cycle model is attached */
    uint64_t cycles;        /* its clock (0 without) */
    uint64_t last_cost;     /* cycles of the last instruction (0 without) */
    unsigned patches;
    char convention[64];    /* es_patches_name: "v4.16", "v4.17", "v4.16+dfe64506" */
    unsigned mitigations;
    char mitigation_names[64];
    int vendor;             /* 0 Intel, 1 AMD */
    int last_stop;          /* enum es_dbg_stop of the last command */
    int bp_hit;             /* breakpoint id of the last stop, 0 if none */
    bool exited;            /* the guest exited or was stopped (last_stop says which):
                             * only reverse and restart go on */
    int exit_status;
    char message[256];      /* the simulator's reason for a fault stop */
    uint64_t history;       /* instructions that can be undone */
    char program[256];
} es_dbg_status;
void es_dbg_get_status(es_dbg *d, es_dbg_status *out);

/* ---- commands (the script runner; the window's keys use the same) ----
 * step [N] | next | finish | continue | syscall | kentry | kexit |
 * until SYM|ADDR | break SYM|ADDR | delete N | reverse [N] | rstep |
 * rcontinue | print REG|regs|ptregs|taint|exposure|status|output|mem ADDR [N] |
 * print vregs [/x|/f|/d] | print ymmN|xmmN [/x|/f|/d] | vregs [off|hex|float|double] |
 * x ADDR [N] | mem ADDR|REG | syntax intel|att | restart [--convention v4.16|v4.17]
 * [--patches LIST] [--mitigations LIST] [--cpu intel|amd] | disas [N] | caption TEXT |
 * screenshot FILE |
 * help | quit.  Blank lines and lines starting with '#' do nothing. */
enum {
    ES_DBG_CMD_OK = 0,
    ES_DBG_CMD_ERROR = 1, /* bad command or argument: a message went to out */
    ES_DBG_CMD_QUIT = 2,
};
/* Runs one command line, writing its report (or error message) to out
 * (NULL: discarded).  Never crashes on any input. */
int es_dbg_exec(es_dbg *d, const char *line, FILE *out);
/* Runs every line of a script file; stops at the first error or quit.
 * Returns ES_DBG_CMD_OK/ERROR/QUIT (ERROR also for an unreadable file). */
int es_dbg_exec_file(es_dbg *d, const char *path, FILE *out);
/* While set (not NULL), es_dbg_exec_file writes after each command line a
 * JSON object on a line of f: the line number, the command, its result,
 * rip with its symbol, cpl, mode, instructions, the stop, the registers,
 * their taint labels and the pt_regs slots (docs/DEBUGGER.md, transcript).
 * The caller owns f. */
void es_dbg_set_transcript(es_dbg *d, FILE *f);
/* The text `caption` set for the next screenshot ("" when none). */
const char *es_dbg_caption(const es_dbg *d);

/* Writes the command summary (what `help` prints; for a help overlay),
 * one line per command, from the command table. */
void es_dbg_help(FILE *out);

/* The renderer behind `screenshot FILE` (debugger.c registers it). Returns
 * 0, or -1 with err. */
typedef int (*es_dbg_screenshot_fn)(void *ctx, es_dbg *d, const char *file, char *err,
                                    size_t errlen);
void es_dbg_set_screenshot(es_dbg *d, es_dbg_screenshot_fn fn, void *ctx);

#ifdef __cplusplus
}
#endif
#endif
