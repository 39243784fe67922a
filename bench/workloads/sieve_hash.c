/* sieve_hash.c - a compute-bound workload for the speed benchmark: a prime
 * sieve plus FNV-1a and xorshift hashing over its result, repeated ROUNDS
 * times (argv[1], default 40).  Prints one checksum line so runs under
 * different engines can be compared for correctness too. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 2000000

static unsigned char sieve[N + 1];

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 40;
    uint64_t h = 1469598103934665603ull, x = 88172645463325252ull;
    unsigned primes = 0;
    for (int r = 0; r < rounds; r++) {
        memset(sieve, 1, sizeof sieve);
        sieve[0] = sieve[1] = 0;
        for (unsigned i = 2; (uint64_t)i * i <= N; i++)
            if (sieve[i])
                for (unsigned j = i * i; j <= N; j += i)
                    sieve[j] = 0;
        primes = 0;
        for (unsigned i = 0; i <= N; i++) {
            if (sieve[i]) {
                primes++;
                h = (h ^ i) * 1099511628211ull;
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                h += x >> 32;
            }
        }
    }
    printf("primes=%u hash=%016llx\n", primes, (unsigned long long)h);
    return 0;
}
