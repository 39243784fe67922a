/* kbuild.h - `entrysim kernel build DIR`: builds the 16 guest kernel images
 * of a kernel tree (a copy of the SDK made by `entrysim kernel init`) with
 * the host gcc, from the tree's kernel.build, the same description
 * kernel_model/CMakeLists.txt builds the embedded images from.
 *
 * Steps: gen_stubs.py (python3) writes the stubs and tables from the
 * tree's *.tbl files and student.c; each source is compiled once per value
 * of (patch set & its mask); each image is linked with kernel.lds.  All of
 * it happens in DIR/.build-tmp.PID; only a complete build is renamed to
 * DIR/build (the previous one is removed then), so `run --kernel DIR` never
 * sees a half-built kernel.  Programs are started with posix_spawnp, never
 * through a shell; up to `jobs` at a time. */
#ifndef ENTRYSIM_CLI_KBUILD_H
#define ENTRYSIM_CLI_KBUILD_H

#include <stdio.h>

typedef struct es_kbuild_cfg {
    const char *dir;    /* the kernel tree */
    const char *cc;     /* NULL = "gcc" */
    const char *python; /* NULL = "python3" */
    int jobs;           /* <= 0: the number of online CPUs */
    FILE *log;          /* progress and the summary line (NULL = none) */
} es_kbuild_cfg;

/* Builds DIR/build.  Returns 0; 2 when the tree is bad (kernel.build, a
 * table, student.c, a compiler or linker error: the message, naming the
 * file and line, is on stderr); 1 when the host failed (no gcc, no
 * python3, a directory that cannot be written). */
int es_kbuild(const es_kbuild_cfg *c);

/* Removes a directory tree (no symlinks followed).  0 or -1. */
int es_rm_tree(const char *path);

#endif
