/* cmd_run.h - `entrysim run` (cmd_run.c). */
#ifndef ENTRYSIM_CLI_CMD_RUN_H
#define ENTRYSIM_CLI_CMD_RUN_H

#include <stdio.h>

/* The options and exit statuses of `entrysim run` (in `entrysim --help`). */
void es_run_help(FILE *f);

/* argv[0] is the first argument after "run".  Returns the exit status. */
int es_run_cmd(int argc, char **argv);

#endif
