/* Compiled by test_sampling.py (gcc -O2 -c) as input for
 * bench/sample_blocks.py: straight-line arithmetic and memory code between
 * branches and calls, plus code the sampler must reject (prologues with
 * push, RIP-relative globals, TLS through fs:, string instructions). */
#include <string.h>

int counter;
__thread int tls_value;
extern void sink(long, long, long);

long mix(long *p, long a, long b, long c)
{
    long x = p[0] * a + (b >> 3) - (c ^ 0x55);
    long y = p[1] + x * 7 + (a & b);
    if (y > 100)
        p[2] = x + y;
    else
        p[3] = x - y + c;
    x = (x << 5) ^ (y >> 2) ^ p[4];
    y = y * 13 + x - p[5];
    sink(x, y, a);
    counter += (int)y;
    tls_value += (int)x;
    for (int i = 0; i < (int)c; i++) {
        x = x * 3 + p[i & 7];
        y ^= x + i;
        p[(i + 1) & 7] = y - x;
    }
    return x + y;
}

double dot(const double *a, const double *b, int n)
{
    double s = 0, t = 0;
    for (int i = 0; i + 1 < n; i += 2) {
        s += a[i] * b[i];
        t += a[i + 1] * b[i + 1];
    }
    return s + t;
}

void copy(char *d, const char *s, unsigned long n)
{
    memcpy(d, s, n & 0xff);
    __asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
}
