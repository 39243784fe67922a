/* matrix.h - `entrysim bench --matrix FILE` (issue 4): batch runs over a
 * matrix of configurations, in parallel, resumable, to CSV, JSON and SVG. */
#ifndef ENTRYSIM_BENCH_MATRIX_H
#define ENTRYSIM_BENCH_MATRIX_H

#ifdef __cplusplus
extern "C" {
#endif

/* argv[0] is the first argument after "bench"; `self` is the path of the
 * running entrysim (cells run it as a child).  Returns the exit status. */
int es_bench_cmd(int argc, char **argv, const char *self);

#ifdef __cplusplus
}
#endif
#endif
