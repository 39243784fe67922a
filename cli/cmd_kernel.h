/* cmd_kernel.h - `entrysim kernel init|build DIR` (cmd_kernel.c). */
#ifndef ENTRYSIM_CLI_CMD_KERNEL_H
#define ENTRYSIM_CLI_CMD_KERNEL_H

#ifdef __cplusplus
extern "C" {
#endif

#include "opts.h"

/* The command (commands.c lists it). */
extern const es_cmd es_cmd_kernel;

/* argv[0] is the first argument after "kernel".  Returns the exit status. */
int es_kernel_cmd(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
