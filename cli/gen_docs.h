/* gen_docs.h - the man page and the bash completion of entrysim, printed
 * from the same command list (commands.c) and options tables (cmd_*.c)
 * that the parser and every --help read, so that neither can name an
 * option the parser lacks or miss one it has.  The build runs the hidden
 * `entrysim help --man` and `entrysim help --completion bash` to make
 * entrysim.1 and the completion file it installs (CMakeLists.txt). */
#ifndef ENTRYSIM_CLI_GEN_DOCS_H
#define ENTRYSIM_CLI_GEN_DOCS_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* entrysim(1) in man(7) roff. */
void es_gen_man(FILE *f);

/* A bash completion script defining _entrysim and `complete`-ing entrysim
 * with it: commands, each command's options, the values of options whose
 * value is a fixed list ({conv}, {cpu}, ...), files and directories for
 * FILE, DIR, PROGRAM. */
void es_gen_bash_completion(FILE *f);

/* `entrysim help --man | --completion bash` (argv after "help"): the exit
 * status. */
int es_gen_docs_cmd(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
