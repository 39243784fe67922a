/* fuzz_hex.c - what `entrysim throughput HEX` does with one block: parse
 * the hex (native/measure.c) and, when it parses, run the cycle model's
 * throughput on it (timing/throughput.c).  Byte 0 picks the model. */
#include <stdlib.h>

#include "fuzz_util.h"
#include "measure.h"
#include "timing.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    char *hex = fz_cstr(data + 1, size - 1, 3 * ES_NATIVE_MAX_BLOCK);
    uint8_t code[ES_NATIVE_MAX_BLOCK];
    size_t len;
    char err[256];
    double cycles;
    es_timing_stats st;
    if (es_native_parse_hex(hex, code, sizeof code, &len, err, sizeof err) == 0)
        es_timing_throughput_stats(data[0] & 1 ? "skylake" : "znver4", code, len, ES_MODE_64,
                                   &cycles, &st, err, sizeof err);
    free(hex);
    return 0;
}
