/* exposure.h - which user-controlled values sit in which registers when the
 * guest kernel's C code runs (`entrysim exposure`), and the compiled stub
 * chain of a syscall (`entrysim explain`).  See docs/EXPOSURE.md.
 *
 * For one (patch set, entry path, syscall) a generated guest program loads
 * a distinct marker into every user register and makes the syscall through
 * the entry path; taint tracking (taint.h), with every user register
 * labelled at the syscall instruction, follows the values into the kernel.
 * At three probe points, the first instruction of the C dispatcher, of the
 * function the syscall table points to, and of the syscall's body, the
 * registers holding user-derived values are recorded, and those holding a
 * value that is not the function's declared argument in that register are
 * "exposed".  The run stops at the last probe: the body itself never runs
 * (nothing reaches the host).
 */
#ifndef ENTRYSIM_EXPOSURE_H
#define ENTRYSIM_EXPOSURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "phases.h"
#include "taint.h"

#ifdef __cplusplus
extern "C" {
#endif

enum es_entry {
    ES_ENTRY_SYSCALL64 = 0, /* 64-bit process, SYSCALL */
    ES_ENTRY_INT80,         /* i386 process, INT 0x80 */
    ES_ENTRY_SYSENTER32,    /* i386 process, SYSENTER as the vDSO does it (Intel) */
    ES_ENTRY_SYSCALL32,     /* i386 process, SYSCALL as the vDSO does it (AMD) */
    ES_ENTRY_X32,           /* x32 process, SYSCALL with the x32 bit */
    ES_ENTRY_VSYSCALL,      /* 64-bit process, call into the vsyscall page */
    ES_ENTRY_COUNT
};

enum es_probe_point { ES_PROBE_DISPATCH = 0, ES_PROBE_TABLE_TARGET, ES_PROBE_BODY, ES_NPROBES };

typedef struct es_probe {
    bool present;     /* the probe has a symbol in this image */
    bool hit;         /* execution reached it */
    char symbol[80];
    uint64_t addr;
    es_label regs[16];  /* labels of every GPR at the probe's first insn */
    es_label allowed[16]; /* what each register may legitimately hold */
    uint16_t exposed;   /* bit i: GPR i holds an exposed user value */
} es_probe;

typedef struct es_exposure {
    unsigned patches;
    int entry;       /* enum es_entry */
    int abi;         /* enum es_abi of the generated program */
    int vendor;      /* 0 Intel, 1 AMD */
    char name[48];   /* the syscall */
    int nr;          /* its number in the entry's table */
    int arity;
    es_probe probe[ES_NPROBES];
    char error[320]; /* set when the case could not run */
    bool bad_name;   /* ...because the entry has no syscall of that name (a usage error) */
    /* with es_exposure_opts.timing: the same call run on to its return to
     * user mode (the body runs on the host with the marker arguments, which
     * are no valid pointers or descriptors: bodies fail early, as with bad
     * user input), its cycles per phase (phases.h).  A single, cold call:
     * caches, TLBs and predictors have seen only the boot. */
    bool timed;
    bool returned;          /* the call came back to user mode (not exit, not a stop) */
    char uarch[16];         /* the model, "" = instruction count (1 cycle each) */
    unsigned mitigations;   /* ES_MIT_* of the image */
    uint64_t cycles;        /* sum of phase[] */
    uint64_t phase[ES_PH_COUNT];
} es_exposure;

/* A kernel tree's own syscall rows (`entrysim kernel build DIR` writes
 * DIR/build/gen/syscalls.tsv: both tables with each row's declared arity),
 * for the analyses of a student's kernel.  es_ktab_load returns NULL with
 * a message in err when the file is missing or malformed.  The lookups
 * mirror es_syscall_nr, es_syscall_arity and es_entry_syscalls. */
typedef struct es_ktab es_ktab;
es_ktab *es_ktab_load(const char *kernel_dir, char *err, size_t errlen);
void es_ktab_free(es_ktab *t);
int es_ktab_nr(const es_ktab *t, int entry, const char *name);
int es_ktab_arity(const es_ktab *t, int entry, int nr);
size_t es_ktab_syscalls(const es_ktab *t, int entry, const char **names, size_t cap);

typedef struct es_exposure_opts {
    bool timing;            /* fill timed/cycles/phase[] */
    const char *uarch;      /* cycle model; NULL = count instructions */
    unsigned mitigations;   /* applied with es_kernel_set_mitigations */
    /* a student's kernel tree (NULL = the embedded images and the built-in
     * tables): its images DIR/build/kernel-pNN.elf and its rows (ktab,
     * loaded from the same DIR by the caller) */
    const char *kernel_dir;
    const es_ktab *ktab;
} es_exposure_opts;

/* Name of an entry ("syscall64"); its number from a name, -1 if unknown. */
const char *es_entry_name(int entry);
int es_entry_parse(const char *name);

/* The entry path's process: whether it is an i386 one (int80, sysenter32,
 * syscall32), and its enum es_abi. */
bool es_entry_is32(int entry);
int es_entry_abi(int entry);

/* The declared argument count of syscall nr in the entry's table (0 when
 * unknown); the vsyscall page index of name (gettimeofday 0, time 1,
 * getcpu 2), or -1. */
int es_syscall_arity(int entry, int nr);
int es_vsyscall_index(const char *name);

/* The syscall tables as an entry path sees them (the i386 table for int80,
 * sysenter32 and syscall32; common and 64 rows for syscall64; common and x32
 * rows for x32; the three vsyscalls' 64-bit rows for vsyscall).
 * es_syscall_name writes the name of number nr and returns true, or false
 * (out untouched) when the entry has no such row; es_syscall_nr returns the
 * number of `name`, or -1. */
bool es_syscall_name(int entry, int nr, char *out, size_t n);

/* The entry path an instruction about to run at CPL 3 takes into the
 * kernel (SYSCALL in 64-bit mode: syscall64, or x32 with the x32 bit in RAX;
 * in compatibility mode: syscall32; SYSENTER: sysenter32; INT 0x80: int80),
 * or -1 when it is no system call instruction.  vsyscall is a fault, not an
 * instruction, and is never returned. */
int es_entry_of(const es_machine *m, const es_insn *d);
int es_syscall_nr(int entry, const char *name);

/* Runs one case.  vendor -1 picks the vendor the entry needs (Intel for
 * sysenter32, AMD otherwise).  Returns 0, or -1 with out->error (unknown
 * syscall, illegal vendor/entry combination, no kernel image...). */
int es_exposure_run(unsigned patches, int entry, int vendor, const char *name, es_exposure *out);
/* The same with options (NULL = es_exposure_run: no timing, default
 * mitigations). */
int es_exposure_run_opts(unsigned patches, int entry, int vendor, const char *name,
                         const es_exposure_opts *opts, es_exposure *out);
/* What the cases of a batch share (es_exposure_report makes them): the
 * kernel images, parsed once (kernel.h: es_kimages, made for
 * opts->kernel_dir), and the machines' host memory (machine.h: es_spares).
 * A NULL member: each case makes its own. */
typedef struct es_exposure_batch {
    struct es_kimages *images;
    struct es_spares *spares;
} es_exposure_batch;
/* es_exposure_run_opts within a batch (NULL: es_exposure_run_opts). */
int es_exposure_run_batch(unsigned patches, int entry, int vendor, const char *name,
                          const es_exposure_opts *opts, const es_exposure_batch *batch,
                          es_exposure *out);

/* Output: a readable table, or one JSON object (no trailing newline). */
void es_exposure_print_text(FILE *f, const es_exposure *e);
void es_exposure_print_json(FILE *f, const es_exposure *e);
/* Number of exposed registers over all probes of a case. */
int es_exposure_count(const es_exposure *e);

/* Live mode: follows every syscall a real program makes.  Attaches a
 * labeller and taint tracking to m (after es_kernel_boot, before es_run):
 * at each kernel entry instruction in user mode the user registers are
 * labelled afresh and a record opened; the record's probes fill in as the
 * kernel reaches them.  Taint does not propagate in user mode (the labels
 * are renewed at every syscall anyway), so the program runs at
 * observer-loop speed between syscalls. */
typedef struct es_live es_live;
es_live *es_live_attach(es_machine *m, int abi);
size_t es_live_count(const es_live *l);
const es_exposure *es_live_get(const es_live *l, size_t i);
void es_live_free(es_live *l);

/* Writes the disassembly of NAME's stub chain and its dispatchers in the
 * image of `patches` to f (do_syscall_64 when sys_call_table holds a stub,
 * do_int80_syscall_32 and do_fast_syscall_32 when ia32_sys_call_table
 * does).  Returns 0; -2 when the image has no stub of that name (nothing
 * written to f); -1 otherwise; a message on stderr in both cases. */
int es_explain(FILE *f, unsigned patches, const char *name, int syntax);
/* The same for the images of a kernel tree (kernel_dir NULL = es_explain). */
int es_explain_dir(FILE *f, const char *kernel_dir, unsigned patches, const char *name,
                   int syntax);

/* The syscall names entry can call, in table order: their number, and
 * the first cap of them in names (names may be NULL to count). */
size_t es_entry_syscalls(int entry, const char **names, size_t cap);

/* A batch of cases: one syscall (name) or every one the entry has (all),
 * under each of the nconv patch sets, printed to out as text or as one
 * JSON array; errors, and with json the summary, go to diag.  Returns 0,
 * 1 when a case could not run, 2 when the one syscall asked for does not
 * exist for the entry (a usage error). */
typedef struct es_exposure_cfg {
    unsigned convs[2];
    int nconv;
    int entry;              /* enum es_entry */
    int vendor;             /* -1: the one the entry needs */
    const char *name;       /* the syscall, unless all */
    bool all, json;
    es_exposure_opts opts;
} es_exposure_cfg;
int es_exposure_report(const es_exposure_cfg *cfg, FILE *out, FILE *diag);

#ifdef __cplusplus
}
#endif
#endif
