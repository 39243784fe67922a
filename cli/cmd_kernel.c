/* cmd_kernel.c - `entrysim kernel init DIR` and `entrysim kernel build DIR`:
 * a guest kernel tree a student owns.  `init` copies the kernel SDK (the
 * sources of the built-in kernel, its headers, linker script, tables, stub
 * generator and kernel.build, staged by kernel_model/CMakeLists.txt) into
 * DIR; `build` builds DIR/build/kernel-p00..p15.elf (kbuild.c), which
 * `entrysim run --kernel DIR` loads.
 *
 * The SDK is found relative to the entrysim binary: BINDIR/share/entrysim/
 * kernel in the build tree, BINDIR/../share/entrysim/kernel when installed
 * (ENTRYSIM_KERNEL_SDK overrides both). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd_kernel.h"
#include "copytree.h"
#include "help.h"
#include "kbuild.h"
#include "opts.h"

enum { K_HELP };

static const es_opt kernel_opts[] = {
    {"--help", NULL, K_HELP, "this help"},
    {"-h", NULL, K_HELP, NULL},
};

/* its first argument (the parser below and the shell completion) */
static const char *const kernel_words[] = {"init", "build", NULL};

const es_cmd es_cmd_kernel = {
    .name = "kernel",
    .synopsis = "kernel init|build DIR   (a kernel tree of your own)",
    .about =
        "  kernel init DIR     copy the guest kernel's source tree into DIR\n"
        "  kernel build DIR    build DIR/build/kernel-p00..p15.elf with the host gcc\n"
        "\n"
        "A kernel tree holds the entry code, the dispatchers, the syscall tables\n"
        "(syscall_64.tbl, syscall_32.tbl in Linux's format, syscall_params.tbl), the\n"
        "headers (SYSCALL_DEFINEn, struct pt_regs), the linker script, gen_stubs.py and\n"
        "kernel.build, the build description the built-in kernel is built from.  Write\n"
        "system call bodies in student.c:\n"
        "    SYSCALL_DEFINE2(add2, long, a, long, b) { return a + b; }\n"
        "add their rows to the tables (333  common  add2  __x64_sys_add2), build, then\n"
        "    entrysim run --kernel DIR [--convention v4.16|--patches LIST] PROGRAM\n"
        "A row without a body in student.c is forwarded to the simulator's host\n"
        "services, which know Linux 4.17's calls at their numbers only.\n"
        "Environment: ENTRYSIM_KERNEL_CC (default gcc), ENTRYSIM_KERNEL_SDK.\n",
    .opts = kernel_opts,
    .nopts = sizeof kernel_opts / sizeof kernel_opts[0],
    .footer = "Exit status: 0 done, 2 bad usage or a bad tree (the message names the file\n"
              "and line; DIR/build is left as it was), 1 a host failure.\n",
    .run = es_kernel_cmd,
    .words = kernel_words,
};

static int kernel_init(const char *dir)
{
    char sdk[PATH_MAX + 64];
    int used = es_dir_used(dir);
    if (used) {
        fprintf(stderr, "entrysim: kernel init: %s %s; give a new or empty directory\n", dir,
                used > 0 ? "is not empty" : "is not a directory");
        return ES_EX_USAGE;
    }
    if (es_share_dir("ENTRYSIM_KERNEL_SDK", "kernel", "kernel.build", "kernel", "kernel SDK",
                     sdk, sizeof sdk))
        return ES_EX_ERROR;
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "entrysim: kernel init: %s: %s\n", dir, strerror(errno));
        return ES_EX_ERROR;
    }
    if (es_copy_tree(sdk, dir, "kernel init", false))
        return ES_EX_ERROR;
    printf("entrysim: kernel init: %s: the guest kernel's tree; write system calls in "
           "%s/student.c, then 'entrysim kernel build %s'\n", dir, dir, dir);
    return ES_EX_OK;
}

int es_kernel_cmd(int argc, char **argv)
{
    es_opts p = {.prefix = "entrysim: kernel: ", .trailer = "Try 'entrysim kernel --help'.\n"};
    if (argc >= 1 && (!strcmp(argv[0], "--help") || !strcmp(argv[0], "-h"))) {
        es_cmd_help(stdout, &es_cmd_kernel);
        return ES_EX_OK;
    }
    int word = argc == 2 ? es_opt_pick(argv[0], kernel_words) : -1;
    if (word < 0)
        return es_opts_fail(&p, "%s", "expected 'init DIR' or 'build DIR'");
    if (word == 0)
        return kernel_init(argv[1]);
    es_kbuild_cfg c = {.dir = argv[1], .cc = getenv("ENTRYSIM_KERNEL_CC"), .log = stdout};
    if (c.cc && !*c.cc)
        c.cc = NULL;
    return es_kbuild(&c);
}
