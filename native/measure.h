/* measure.h - `entrysim measure-native`: the real throughput of basic blocks
 * on this x86-64 host, measured with BHive's method (sim/native/measure.c
 * and bench/README-native.md describe the method and its limits).
 *
 * Host-only: it runs the block's raw machine code natively.  On hosts that
 * are not x86-64 every entry point reports "unsupported". */
#ifndef ENTRYSIM_NATIVE_MEASURE_H
#define ENTRYSIM_NATIVE_MEASURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ES_NATIVE_MAX_BLOCK 4096 /* bytes of one block */

typedef struct es_native_opts {
    unsigned reps;        /* runs per length; the minimum is kept (default 25) */
    unsigned unroll;      /* copies of the block per loop iteration (default 50) */
    unsigned iters1;      /* loop iterations of the short run (default 100) */
    unsigned iters2;      /* loop iterations of the long run (default 200) */
    double noisy_pct;     /* flag when the two measurements differ more (default 2) */
    double timeout_s;     /* per block, enforced by the parent (default 10) */
    unsigned tries;       /* measurements until two agree (2..16, default 4) */
} es_native_opts;

typedef struct es_native_result {
    int status;              /* 0 measured; otherwise error[] says why */
    double cycles;           /* core cycles per iteration: the lower of the pair */
    double cycles_each[2];   /* the closest pair of independent measurements */
    double ticks_per_cycle;  /* TSC ticks per core cycle of the first measurement */
    bool noisy;              /* even the closest pair differs by more than noisy_pct */
    char error[160];
} es_native_result;

/* Fills *o with the defaults above. */
void es_native_default_opts(es_native_opts *o);

/* Whether this build can measure (x86-64 host). */
bool es_native_supported(void);

/* Parses a hex string (whitespace around it ignored; an even number of hex
 * digits, nothing else) into out[cap].  Returns 0 and sets *len, or -1 with
 * a reason in err. */
int es_native_parse_hex(const char *s, uint8_t *out, size_t cap, size_t *len, char *err,
                        size_t errlen);

/* Decodes the block with the project's decoder and refuses what the harness
 * cannot run as straight-line user code: control flow, privileged or I/O
 * instructions, REP string instructions, segment register loads, writes
 * through FS/GS or RIP-relative operands, undecodable bytes.  Returns 0 or
 * -1 with a reason in err. */
int es_native_check_block(const uint8_t *code, size_t len, char *err, size_t errlen);

/* TSC ticks per core cycle, from a chain of dependent 1-cycle ADDs measured
 * with the block method in a child process.  Returns 0 or -1 (err). */
int es_native_calibrate(const es_native_opts *o, double *ticks_per_cycle, char *err,
                        size_t errlen);

/* Measures one block (already checked or not: it is checked again) in a
 * forked child; never crashes the caller.  Returns out->status. */
int es_native_measure(const uint8_t *code, size_t len, const es_native_opts *o,
                      es_native_result *out);


#ifdef __cplusplus
}
#endif
#endif
