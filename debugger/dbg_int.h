/* dbg_int.h - the session's internals shared by debugger/dbg_*.c (not for
 * the window: debugger.c uses dbg.h only). */
#ifndef ENTRYSIM_DBG_INT_H
#define ENTRYSIM_DBG_INT_H

#include <stddef.h>
#include <stdint.h>

#include "dbg.h"
#include "exposure.h"
#include "timing.h"

/* The architectural part of es_machine the undo log saves: from gpr up to
 * (not including) the pending fault, i.e. registers, segments, control and
 * debug registers, MSRs, descriptor tables and the TSC. */
#define DBG_ARCH_OFF offsetof(es_machine, gpr)
#define DBG_ARCH_END offsetof(es_machine, fault)
#define DBG_ARCH_WORDS ((DBG_ARCH_END - DBG_ARCH_OFF) / 8)
_Static_assert((DBG_ARCH_END - DBG_ARCH_OFF) % 8 == 0, "the saved region is whole words");
_Static_assert(DBG_ARCH_WORDS < 65536, "word indexes fit the log's 16 bits");

/* What the session remembers about the pt_regs frame of the kernel entry
 * in progress (part of the state the undo log restores). */
typedef struct dbg_track {
    uint64_t base;                        /* frame address, 0 = no entry yet */
    uint8_t order[ES_DBG_PTREGS_SLOTS];   /* write order, 0 = not written */
    uint8_t seq;                          /* slots written so far */
    uint8_t building;                     /* still in the entry code (before its first call) */
    uint8_t open;                         /* an entry is in progress (not yet back in user mode) */
    uint32_t cleared;                     /* bit i: slot i's register zeroed after the save */
    /* the syscall in progress, as seen at the user's entry instruction */
    int entry;                            /* enum es_entry, -1 = none */
    int nr;
} dbg_track;

typedef struct dbg_rec {
    uint8_t *blob;
    uint32_t len;
    uint64_t span; /* steps it undoes: 1, or a run of user code
                      (dbg_undo_fast) or of kernel code (dbg_run_kernel)
                      that reverse re-runs to step into.  Steps, not
                      instructions: a fault the kernel takes is a step
                      that retires nothing */
    bool host;     /* holds a record of the process table (REC_HOST) */
} dbg_rec;

/* Most records (a few registers, one store) fit this: their blobs come
 * from dbg_undo.pool rather than malloc and go back to it; so do those of
 * up to DBG_SMALL << (DBG_NCLASS - 1) bytes, by size class. */
#define DBG_SMALL 96
#define DBG_NCLASS 5

typedef struct dbg_undo {
    uint8_t **mirror;      /* per physical frame: its contents after the last step */
    uint64_t nmirror;
    dbg_rec *ring;         /* rcap slots, oldest at head */
    uint64_t cap, head, count;
    uint64_t rcap;         /* slots of the ring: doubled as records come, up to cap */
    uint64_t insns;        /* steps the records undo (<= cap) */
    uint64_t pushed;       /* records pushed so far (reverse-continue pops
                              what a replay pushed) */
    size_t bytes, max_bytes;
    es_wlog wlog;          /* frames an unobserved run may have written, not yet
                              compared with the mirror */
    /* the step being recorded */
    uint8_t *scratch;
    size_t slen, scap;
    uint16_t n_arch, n_mem, n_treg, n_tmem;
    bool recording;
    bool by_frame;         /* a kernel run: memory is found by frame at its end
                              (wlog attached throughout), only the taint labels
                              of written bytes are logged per write */
    uint64_t arch_before[DBG_ARCH_WORDS];
    es_label treg_before[17];
    /* a kernel run's vector-register labels at its start (the kernel's
     * XSAVE/XRSTOR of a signal frame moves them to and from memory) */
    es_label tvec_before[ES_TAINT_NVREG * ES_TAINT_NLANE];
    uint64_t icount_before;
    dbg_track track_before;
    uint64_t alloc_before[5];
    uint64_t cr3_before;
    /* the frame allocator's free stack as the newest record left it, and
     * the allocator's state then (dbg_undo.c, log_alloc) */
    uint64_t *fstack;
    size_t nfstack, capfstack;
    uint64_t alloc_synced[5];
    bool host_step;        /* the step under way began a record of the
                              process table (a VMCALL: es_host_step_begin) */
    bool rec_host;         /* ...and the record being built holds it */
    bool lost;             /* a record could not be made whole: the history
                              is forgotten after it */
    bool resync;           /* memory may have changed without a CPU write */
    uint8_t **pool[DBG_NCLASS]; /* freed record blobs of DBG_SMALL << c bytes, reused */
    size_t npool[DBG_NCLASS], cappool[DBG_NCLASS];
} dbg_undo;

typedef struct dbg_sym {
    uint64_t addr, size;
    char *name;
} dbg_sym;

typedef struct dbg_cyc {
    uint64_t addr;
    uint64_t cycles;
} dbg_cyc;
#define DBG_CYC_SLOTS 4096

/* What a kernel run decoded to check the fence before a step, and the
 * fence's answer (dbg_session.c, kernel_may_step); 32 bytes, looked at
 * every step (the decode itself is apart, in dbg_icache.insn, read only
 * when the fence is asked). */
typedef struct dbg_ient {
    uint64_t rip, pa;
    uint64_t fkey;   /* es_fence.key of `refused`, 0: not asked yet */
    uint32_t gen;    /* the frame's code_gen when decoded */
    uint8_t mode, valid, refused;
} dbg_ient;
#define DBG_ICACHE_BITS 11
#define DBG_ICACHE (1u << DBG_ICACHE_BITS)
typedef struct dbg_icache {
    dbg_ient e[DBG_ICACHE];
    es_insn insn[DBG_ICACHE];
} dbg_icache;

#define DBG_MAX_BPS 64
#define DBG_PROBE_CACHE 8

typedef struct dbg_src dbg_src;

struct es_dbg {
    es_dbg_cfg cfg;
    /* deep copies behind cfg's pointers */
    char *program, *root, *uarch;
    char **argv, **envp;
    int argc;

    es_machine *m;
    es_taint *taint;
    es_timing *timing;
    /* --speculate: the window being collected and the last squashed one */
    es_spec_insn wp_cur[64], wp_last[64];
    size_t wp_ncur, wp_nlast;
    uint64_t wp_windows;
    int abi;                 /* of the user program (enum es_abi) */
    int out_fd;              /* memfd behind guest fds 1 and 2 */
    uint64_t out_read;       /* bytes of the memfd consumed */
    char *out;               /* the kept output */
    size_t out_len;

    dbg_undo undo;
    dbg_track track;

    /* user ELF symbols, sorted by address */
    dbg_sym *syms;
    size_t nsyms;
    uint64_t elf_entry;
    bool elf_dyn;            /* static-pie: bias known once user code runs */
    uint64_t bias;
    bool bias_known;

    es_dbg_bp bps[DBG_MAX_BPS];
    size_t nbps;
    int next_bp_id;

    int syntax;
    dbg_cyc cyc[DBG_CYC_SLOTS];
    uint64_t recent[64];     /* recently executed RIPs (disassembly context) */
    unsigned nrecent;

    /* state before the last run-control command (change marks) */
    es_dbg_reg prev_regs[ES_DBG_MAX_REGS];
    size_t nprev;
    es_ymm prev_vregs[ES_DBG_MAX_VREGS]; /* all 16, whatever the mode */
    bool have_prev_v;
    int vregs_view;          /* enum es_dbg_vfmt: the window's vector panel */

    uint64_t frame_base;     /* TSS.RSP0 - 168, refreshed at every CPL change */
    /* the instruction being stepped (from the before hook): what the
     * pt_regs tracking reads of it, and its first operand's GPR before it */
    uint16_t cur_op;
    uint8_t cur_nops;
    es_operand cur_o0;
    uint64_t cur_prev;
    dbg_icache *icache;      /* made by the first kernel run */
    bool have_cur;
    /* an exception was just delivered: the taint observer labels its frame
     * at the next instruction it is told of (state no undo record holds, so
     * that step is never inside a kernel run, which reverse re-runs) */
    bool exc_pending;
    char timing_err[160];

    int last_stop, bp_hit;
    bool exited;
    char memview_reg[16];
    uint64_t memview_addr;

    es_exposure probe_cache[DBG_PROBE_CACHE];
    size_t nprobe_cache;
    char *probe_text;

    es_dbg_screenshot_fn shot;
    void *shot_ctx;
    char caption[160]; /* for the next screenshot (`caption`) */
    uint64_t boot_icount; /* instructions of the kernel's start-up */
    dbg_src *ksrc, *usrc; /* line tables of the kernel image and the program */
    FILE *transcript;  /* --transcript: a JSON line per script command */
};

/* dbg_undo.c */
int dbg_undo_init(es_dbg *d);
void dbg_undo_free(es_dbg *d);
void dbg_undo_begin(es_dbg *d);
void dbg_undo_mem_write(es_dbg *d, uint64_t va, unsigned n);
void dbg_undo_end(es_dbg *d);
/* The step being recorded executes a VMCALL: the host's services may
 * change the process table (fork, exit, a context switch), which the
 * record then holds too. */
void dbg_undo_host_begin(es_dbg *d);
/* Undoes the newest step; false when there is none. */
/* Undoes the newest record; *span: the instructions it covered (the
 * machine is at the first of them). */
bool dbg_undo_pop(es_dbg *d, uint64_t *span);
/* Runs at most budget instructions of user code with es_run_fenced and
 * records them as one record; returns es_run_fenced's status, *ran the
 * instructions it ran (0: no record). */
int dbg_undo_fast(es_dbg *d, uint64_t budget, const es_fence *f, uint64_t *ran);
/* A record of a run of observed steps (dbg_run_kernel): begin, then end
 * with the steps taken (0: no record). */
void dbg_undo_run_begin(es_dbg *d);
void dbg_undo_run_end(es_dbg *d, uint64_t steps);

/* dbg_session.c: one recorded instruction; an es_dbg_stop when the
 * machine stopped (exit, fault), else -1 */
int dbg_step1(es_dbg *d);
/* dbg_session.c: whether user code may run unobserved now (dbg_run_user) */
bool dbg_can_run(const es_dbg *d);
/* dbg_session.c: at most budget instructions of user code in one record
 * (none when !dbg_can_run), stopping before what f refuses; returns the
 * number run, *stop as dbg_step1's status */
uint64_t dbg_run_user(es_dbg *d, uint64_t budget, const es_fence *f, int *stop);
/* dbg_session.c: at most budget steps of kernel code in one record, each
 * through es_step with every observer as dbg_step1 does (none when the CPU
 * is not at CPL 0, an exception frame is pending, or the session steps
 * only or times), stopping before what f refuses and before a VMCALL,
 * RDTSC, RDTSCP or RDPMC whatever f says, and after a step that leaves
 * CPL 0 or delivers an exception; returns the steps taken, *stop as
 * dbg_step1's status */
uint64_t dbg_run_kernel(es_dbg *d, uint64_t budget, const es_fence *f, int *stop);

/* dbg_src.c: a DWARF line table, sorted by address */
typedef struct dbg_src_row {
    uint64_t addr;
    unsigned line, file;
    bool end; /* ends a sequence: no line from here */
} dbg_src_row;
/* The line table of an ELF image in memory; NULL when it has none. */
dbg_src *dbg_src_load(const void *image, size_t size);
void dbg_src_free(dbg_src *s);
/* The row for addr, or NULL. */
const dbg_src_row *dbg_src_find(const dbg_src *s, uint64_t addr);
const char *dbg_src_file(const dbg_src *s, const dbg_src_row *r);
/* The text of the row's line (leading blanks dropped), "" when the file is
 * not on this machine. */
const char *dbg_src_text(dbg_src *s, const dbg_src_row *r);

/* dbg_transcript.c: the state after script command `cmd` (line lineno,
 * result rc) as one JSON object on a line of f */
void dbg_transcript_line(es_dbg *d, FILE *f, int lineno, const char *cmd, int rc);

/* dbg_syms.c (below dbg_view.c: the view calls it, never the reverse) */
int dbg_syms_load(es_dbg *d, const char *path);
/* GPR number (0..15), 16 for rip, -1 otherwise. */
int dbg_reg_by_name(const char *name);
const char *dbg_gpr_name(int reg); /* "rax".."r15" for 0..15 */
void dbg_syms_free(es_dbg *d);
void dbg_breaks_rebind(es_dbg *d);

/* dbg_undo.c: logs a change of the leaf page-table entries mapping
 * [va, va+n) (the accessed/dirty bits the CPU's walk just set) */
void dbg_undo_pte(es_dbg *d, uint64_t va, unsigned n);

/* dbg_view.c */
bool dbg_walk(const es_machine *m, uint64_t va, uint64_t *pa, uint64_t *pte_pa);
size_t dbg_read(es_machine *m, uint64_t va, void *buf, size_t n);
uint64_t dbg_ptregs_base(es_dbg *d);
int dbg_gpr_slot(int reg); /* pt_regs slot index of GPR reg, -1 for rsp */
/* Remembers the registers (GPRs and the rest, vector registers) as the
 * state the change marks compare with: before a run-control command. */
void dbg_remember_regs(es_dbg *d);
void dbg_output_poll(es_dbg *d);

#endif
