/* cmd_throughput.h - `entrysim throughput` (cmd_throughput.c). */
#ifndef ENTRYSIM_CLI_CMD_THROUGHPUT_H
#define ENTRYSIM_CLI_CMD_THROUGHPUT_H

#include "opts.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const es_cmd es_cmd_throughput;

/* argv[0] is the first argument after "throughput".  Returns the exit
 * status. */
int es_throughput_cmd(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
