/* cmd_explain.h - `entrysim explain` (cmd_explain.c). */
#ifndef ENTRYSIM_CLI_CMD_EXPLAIN_H
#define ENTRYSIM_CLI_CMD_EXPLAIN_H

#include "opts.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const es_cmd es_cmd_explain;

/* argv[0] is the first argument after "explain".  Returns the exit status. */
int es_explain_cmd(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
