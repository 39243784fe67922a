/* compute.c - integer work: a sieve of Eratosthenes and an FNV-1a hash
 * over the primes, plus a string hash table; prints digests. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 2000000;
    unsigned char *composite = calloc(n + 1, 1);
    if (!composite)
        return 1;
    uint64_t h = 0xcbf29ce484222325ull;
    unsigned count = 0;
    for (unsigned i = 2; i <= n; i++) {
        if (composite[i])
            continue;
        count++;
        for (uint32_t v = i; v; v >>= 8) {
            h ^= v & 0xff;
            h *= 0x100000001b3ull;
        }
        for (uint64_t j = (uint64_t)i * i; j <= n; j += i)
            composite[j] = 1;
    }
    printf("primes <= %u: %u\n", n, count);
    printf("fnv1a: %016llx\n", (unsigned long long)h);
    /* string work: build keys, count collisions in a small table */
    enum { SLOTS = 4096 };
    unsigned *table = calloc(SLOTS, sizeof *table);
    char key[32];
    for (int i = 0; i < 50000; i++) {
        snprintf(key, sizeof key, "key-%d-%x", i, i * 2654435761u);
        uint32_t k = 2166136261u;
        for (char *p = key; *p; p++)
            k = (k ^ (unsigned char)*p) * 16777619u;
        table[k % SLOTS]++;
    }
    unsigned maxb = 0;
    for (int i = 0; i < SLOTS; i++)
        if (table[i] > maxb)
            maxb = table[i];
    printf("largest bucket: %u\n", maxb);
    free(table);
    free(composite);
    return count % 100;
}
