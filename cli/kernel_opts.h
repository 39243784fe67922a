/* kernel_opts.h - the options that choose the guest kernel, the CPU and
 * the cycle model, shared by every command that starts a guest or builds a
 * kernel image (run, debug, exposure, explain):
 *   --convention v4.16|v4.17, --patches LIST, --mitigations LIST,
 *   --cpu intel|amd, --uarch NAME, and for run and debug --kernel DIR (a
 *   student's kernel tree built by `entrysim kernel build DIR`).
 * Also --syntax intel|att, which explain and debug share.
 * Their names and values print from the lists that define them (the
 * conventions and vendors here, the patch series in sim/boot/kernel.c, the
 * mitigations in sim/boot/mitigations.c, the uarchs in timing/). */
#ifndef ENTRYSIM_CLI_KERNEL_OPTS_H
#define ENTRYSIM_CLI_KERNEL_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct es_kernel_opts {
    unsigned patches;        /* ES_PATCH_* (default ES_CONV_V417) */
    unsigned mitigations;    /* ES_MIT_* (default ES_MIT_DEFAULT) */
    int vendor;              /* 0 Intel, 1 AMD (default) */
    const char *uarch;       /* cycle model (default "znver4") */
    const char *convention;  /* as given, NULL when absent (conflict checks) */
    const char *patch_list;
    const char *mitigation_list;
    const char *cpu;
    unsigned patches_named;  /* the commits --patches named (es_patches_parse_series) */
    const char *kernel_dir;  /* --kernel DIR, NULL = the embedded images */
} es_kernel_opts;

/* Their --help texts, one each (kernel_opts.c). */
extern const char es_help_convention[], es_help_patches[], es_help_mitigations[],
    es_help_cpu[], es_help_uarch[], es_help_kernel[];

/* The five options as es_opt rows (opts.h), each returning `id`; a
 * command that takes only some of them lists those rows. */
#define ES_KOPT_CONVENTION(id) {"--convention", "{conv}", id, es_help_convention}
#define ES_KOPT_PATCHES(id) {"--patches", "LIST", id, es_help_patches}
#define ES_KOPT_MITIGATIONS(id) {"--mitigations", "LIST", id, es_help_mitigations}
#define ES_KOPT_CPU(id) {"--cpu", "{cpu}", id, es_help_cpu}
#define ES_KOPT_UARCH(id) {"--uarch", "NAME", id, es_help_uarch}
/* --kernel DIR: a student's tree (run, debug, exposure, explain; not in
 * ES_KERNEL_OPT_ROWS: bench and measure-native take none) */
#define ES_KOPT_KERNEL(id) {"--kernel", "DIR", id, es_help_kernel}
#define ES_KERNEL_OPT_ROWS(id)                                                               \
    ES_KOPT_CONVENTION(id), ES_KOPT_PATCHES(id), ES_KOPT_MITIGATIONS(id), ES_KOPT_CPU(id),  \
        ES_KOPT_UARCH(id)

/* The defaults above. */
es_kernel_opts es_kernel_opts_default(void);

/* If `name` (with its `val`) is one of the options above, applies it and
 * returns 1; returns 0 when it is not one of them, -1 with a one-line
 * reason in err when the value is bad. */
int es_kernel_opt(es_kernel_opts *k, const char *name, const char *val, char *err,
                  size_t errlen);

/* After all options: -1 with a reason when --convention and --patches were
 * both given (both choose the kernel), else 0. */
int es_kernel_opts_check(const es_kernel_opts *k, char *err, size_t errlen);

/* After the checks: when --patches named commits of the series that change
 * no code path alone, one line on f (stderr) that says so and names the
 * kernel the list makes (es_patches_note). */
void es_kernel_opts_note(const es_kernel_opts *k, FILE *f);

/* The value lists of the help texts and errors, from their one list each:
 * "v4.16|v4.17", "intel|amd", the uarchs (sep between them),
 * "pti, retpoline, ibrs, nospec", the series' ids (12 digits) in merge
 * order ("dfe64506c01e 1bd21c6c21e8 ...") or, with only_inert, those that
 * are no toggle ("1bd21c6c21e8, 7303e30ec1d8, f8781c4a2263") */
const char *es_conventions_list(char *buf, size_t n);
const char *es_vendors_list(char *buf, size_t n);
const char *es_uarchs_list(const char *sep, char *buf, size_t n);
/* --uarch VAL: a built-in model's name, or "host" (the model of the CPU
 * this runs on: cli/host_cpu.c); 0 with *out set, or -1 with a message. */
int es_uarch_pick(const char *val, const char **out, char *err, size_t errlen);
const char *es_mitigations_list(char *buf, size_t n);
const char *es_patches_list(bool only_inert, char *buf, size_t n);

/* The name of vendor v (0 intel, 1 amd). */
const char *es_vendor_name(int v);

/* --syntax (explain, debug): the index of s in "intel", "att" (the
 * ES_SYNTAX_* values), or -1; and the list with sep and last between the
 * names. */
int es_syntax_pick(const char *s);
const char *es_syntaxes_list(const char *sep, const char *last, char *buf, size_t n);

#endif
