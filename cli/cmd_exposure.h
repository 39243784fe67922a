/* cmd_exposure.h - `entrysim exposure` (cmd_exposure.c). */
#ifndef ENTRYSIM_CLI_CMD_EXPOSURE_H
#define ENTRYSIM_CLI_CMD_EXPOSURE_H

#include "opts.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const es_cmd es_cmd_exposure;

/* argv[0] is the first argument after "exposure".  Returns the exit status. */
int es_exposure_cmd(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
