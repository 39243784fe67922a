/* commands.h - the subcommands of entrysim in one list, and the command
 * line's entry point (main.c only calls es_main). */
#ifndef ENTRYSIM_CLI_COMMANDS_H
#define ENTRYSIM_CLI_COMMANDS_H

#include <stddef.h>

#include "opts.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The subcommands, in the order `entrysim --help` lists them; *n gets
 * their count. */
const es_cmd *const *es_commands(size_t *n);

/* What `entrysim --help` says of the program before run's options (the
 * man page's DESCRIPTION too). */
extern const char es_overview[];

/* `entrysim ARGS...` (argv[0] is the program's name): dispatches to the
 * subcommand named by argv[1], or runs the demo when there is none.
 * Returns the exit status. */
int es_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
