/* cmd_debug.h - `entrysim debug` (issue 5): the SDL2 step-through debugger
 * (cmd_debug.c).  Only debugger/ links SDL2. */
#ifndef ENTRYSIM_DEBUGGER_H
#define ENTRYSIM_DEBUGGER_H

#include "opts.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const es_cmd es_cmd_debug;

/* argv[0] is the first argument after "debug".  Returns the exit status. */
int es_debug_cmd(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
