/* copytree.h - copying a directory tree for the commands that hand out
 * files: `kernel init` (the kernel SDK) and `lab start` (a lab's starter
 * files over a fresh kernel tree). */
#ifndef ENTRYSIM_CLI_COPYTREE_H
#define ENTRYSIM_CLI_COPYTREE_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Copies one file (created with `mode`; replaced when `overwrite`, else an
 * existing one is an error).  0, or -1 with a message on stderr. */
int es_copy_file(const char *from, const char *to, mode_t mode, const char *who,
                 bool overwrite);

/* Copies the regular files and directories under `from` into `to` (which
 * exists), skipping hidden names.  A file already in `to` is an error,
 * unless `overwrite` (then it is replaced; directories merge).  `who` names
 * the command in messages ("kernel init").  0, or -1 with a message on
 * stderr. */
int es_copy_tree(const char *from, const char *to, const char *who, bool overwrite);

/* The data directory `share/entrysim/SUB` a command hands files out of:
 * $ENV when set (it must hold PROBE), else BINDIR/share/entrysim/SUB (the
 * build tree) or BINDIR/../share/entrysim/SUB (installed), the first that
 * holds PROBE.  0 with the directory in out, or -1 with a message on stderr
 * naming `who` (the command) and `what` ("kernel SDK", "labs"). */
int es_share_dir(const char *env, const char *sub, const char *probe, const char *who,
                 const char *what, char *out, size_t n);

/* 1 when dir exists and holds anything, 0 when empty or absent, -1 when it
 * is no directory. */
int es_dir_used(const char *dir);

#ifdef __cplusplus
}
#endif
#endif
