/* cmd_throughput.h - `entrysim throughput` (cmd_throughput.c). */
#ifndef ENTRYSIM_CLI_CMD_THROUGHPUT_H
#define ENTRYSIM_CLI_CMD_THROUGHPUT_H

#ifdef __cplusplus
extern "C" {
#endif

/* argv[0] is the first argument after "throughput".  Returns the exit
 * status. */
int es_throughput_cmd(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
