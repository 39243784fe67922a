/* cmd_bench.h - `entrysim bench` (cmd_bench.c). */
#ifndef ENTRYSIM_CLI_CMD_BENCH_H
#define ENTRYSIM_CLI_CMD_BENCH_H

/* argv[0] is the first argument after "bench"; the cells run this
 * entrysim (/proc/self/exe) unless --runner says otherwise.  Returns the
 * exit status. */
int es_bench_cmd(int argc, char **argv);

#endif
