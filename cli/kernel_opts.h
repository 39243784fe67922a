/* kernel_opts.h - the options that choose the guest kernel, the CPU and
 * the cycle model, shared by every command that starts a guest or builds a
 * kernel image (run, debug, exposure, explain):
 *   --convention v4.16|v4.17, --patches LIST, --mitigations LIST,
 *   --cpu intel|amd, --uarch NAME, --kernel DIR (a student's kernel tree
 *   built by `entrysim kernel build DIR`, instead of the embedded images).
 * Their names and values print from the lists that define them (the
 * conventions and vendors here, the patch series in sim/boot/kernel.c, the
 * mitigations in sim/boot/mitigations.c, the uarchs in timing/). */
#ifndef ENTRYSIM_CLI_KERNEL_OPTS_H
#define ENTRYSIM_CLI_KERNEL_OPTS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct es_kernel_opts {
    unsigned patches;        /* ES_PATCH_* (default ES_CONV_V417) */
    unsigned mitigations;    /* ES_MIT_* (default ES_MIT_DEFAULT) */
    int vendor;              /* 0 Intel, 1 AMD (default) */
    const char *uarch;       /* cycle model (default "znver4") */
    const char *convention;  /* as given, NULL when absent (conflict checks) */
    const char *patch_list;
    const char *mitigation_list;
    const char *cpu;
    const char *kernel_dir;  /* --kernel DIR, NULL = the embedded images */
} es_kernel_opts;

/* The six options as es_opt rows (opts.h), all returning `id`. */
#define ES_KERNEL_OPT_ROWS(id)                                                               \
    {"--convention", true, id}, {"--patches", true, id}, {"--mitigations", true, id},        \
        {"--cpu", true, id}, {"--uarch", true, id}, {"--kernel", true, id}

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

/* The value lists of the help texts and errors, from their one list each:
 * "v4.16|v4.17", "intel|amd", the uarchs (sep between them),
 * "pti, retpoline, ibrs, nospec", "dfe64506c01e fa697140f9a2 ..." */
const char *es_conventions_list(char *buf, size_t n);
const char *es_vendors_list(char *buf, size_t n);
const char *es_uarchs_list(const char *sep, char *buf, size_t n);
const char *es_mitigations_list(char *buf, size_t n);
const char *es_patches_list(char *buf, size_t n);

#endif
