/* cmd_explain.h - `entrysim explain` (cmd_explain.c). */
#ifndef ENTRYSIM_CLI_CMD_EXPLAIN_H
#define ENTRYSIM_CLI_CMD_EXPLAIN_H

#ifdef __cplusplus
extern "C" {
#endif

/* argv[0] is the first argument after "explain".  Returns the exit status. */
int es_explain_cmd(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
