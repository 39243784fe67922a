/* debugger.h - `entrysim debug` (issue 5): the SDL2 step-through debugger.
 * Only debugger/ links SDL2. */
#ifndef ENTRYSIM_DEBUGGER_H
#define ENTRYSIM_DEBUGGER_H

#ifdef __cplusplus
extern "C" {
#endif

/* argv[0] is the first argument after "debug".  Returns the exit status. */
int es_debug_cmd(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
