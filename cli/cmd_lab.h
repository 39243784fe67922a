/* cmd_lab.h - `entrysim lab list|start|grade` (cmd_lab.c). */
#ifndef ENTRYSIM_CLI_CMD_LAB_H
#define ENTRYSIM_CLI_CMD_LAB_H

#ifdef __cplusplus
extern "C" {
#endif

#include "opts.h"

/* The command (commands.c lists it). */
extern const es_cmd es_cmd_lab;

/* argv[0] is the first argument after "lab".  Returns the exit status. */
int es_lab_cmd(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
