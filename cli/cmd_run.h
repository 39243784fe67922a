/* cmd_run.h - `entrysim run` (cmd_run.c). */
#ifndef ENTRYSIM_CLI_CMD_RUN_H
#define ENTRYSIM_CLI_CMD_RUN_H

#include "opts.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Its options and exit statuses are also the end of `entrysim --help`. */
extern const es_cmd es_cmd_run;

/* argv[0] is the first argument after "run".  Returns the exit status. */
int es_run_cmd(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
