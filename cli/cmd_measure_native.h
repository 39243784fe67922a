/* cmd_measure_native.h - `entrysim measure-native` (cmd_measure_native.c). */
#ifndef ENTRYSIM_CLI_CMD_MEASURE_NATIVE_H
#define ENTRYSIM_CLI_CMD_MEASURE_NATIVE_H

#include "opts.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const es_cmd es_cmd_measure_native;

/* argv[0] is the first argument after "measure-native".  Returns the exit
 * status. */
int es_native_cmd(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
