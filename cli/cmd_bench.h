/* cmd_bench.h - `entrysim bench` (cmd_bench.c). */
#ifndef ENTRYSIM_CLI_CMD_BENCH_H
#define ENTRYSIM_CLI_CMD_BENCH_H

#include "opts.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const es_cmd es_cmd_bench;

/* argv[0] is the first argument after "bench"; the cells run this
 * entrysim (/proc/self/exe) unless --runner says otherwise.  Returns the
 * exit status. */
int es_bench_cmd(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
