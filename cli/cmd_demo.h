/* cmd_demo.h - `entrysim demo` (cmd_demo.c). */
#ifndef ENTRYSIM_CLI_CMD_DEMO_H
#define ENTRYSIM_CLI_CMD_DEMO_H

#include "opts.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const es_cmd es_cmd_demo;

/* argv[0] is the first argument after "demo" (there must be none). */
int es_demo_cmd(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
