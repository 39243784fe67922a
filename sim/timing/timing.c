/* timing.c - placeholder until the cycle model lands (issue 4, in progress
 * this session): every entry point reports that the model is not built. */
#include <stdio.h>

#include "timing.h"

static const char *const uarchs[] = {"znver4", "skylake", NULL};

const char *const *es_timing_uarchs(void) { return uarchs; }

es_timing *es_timing_new(const char *uarch, char *err, size_t errlen)
{
    snprintf(err, errlen, "the cycle model is not built yet (uarch %s)", uarch);
    return NULL;
}

void es_timing_free(es_timing *t) { (void)t; }
int es_timing_attach(es_timing *t, es_machine *m) { (void)t; (void)m; return -1; }
uint64_t es_timing_cycles(const es_timing *t) { (void)t; return 0; }
uint64_t es_timing_last_cost(const es_timing *t) { (void)t; return 0; }
void es_timing_get_stats(const es_timing *t, es_timing_stats *out) { (void)t; *out = (es_timing_stats){0}; }

int es_timing_throughput(const char *uarch, const uint8_t *code, size_t len, int mode,
                         double *cycles, char *err, size_t errlen)
{
    (void)code; (void)len; (void)mode; (void)cycles;
    snprintf(err, errlen, "the cycle model is not built yet (uarch %s)", uarch);
    return -1;
}

int es_throughput_cmd(int argc, char **argv)
{
    (void)argc; (void)argv;
    fprintf(stderr, "entrysim: throughput: the cycle model is not built yet\n");
    return 1;
}
