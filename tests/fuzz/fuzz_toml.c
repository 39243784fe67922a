/* fuzz_toml.c - the TOML subset of `entrysim bench` matrices
 * (bench/bench_toml.c) on arbitrary text. */
#include <stdlib.h>

#include "bench.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fz_cstr(data, size, 64 * 1024);
    es_toml t;
    char err[256];
    if (es_toml_parse(text, &t, err, sizeof err) == 0) {
        es_toml_get(&t, "", "name");
        es_toml_free(&t);
    }
    free(text);
    return 0;
}
