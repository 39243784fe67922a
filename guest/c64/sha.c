/* sha.c - SHA-256 with the SHA extensions (SHA256RNDS2, SHA256MSG1/2),
 * its constants computed from their definition (the fractional parts of
 * square and cube roots of primes, by Newton: no libm), over "abc" (FIPS 180 example:
 * ba7816bf...f20015ad), "" and a 10 000-byte message, plus SHA1RNDS4 and
 * SHA1NEXTE/MSG1/MSG2 on fixed inputs.  Run natively and under entrysim;
 * the outputs must match. */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static uint32_t K[64], H0[8];

/* the k-th root of p by Newton's method in long double (no libm) */
static long double root(long double p, int k)
{
    long double x = 1 + p / k;
    for (int i = 0; i < 200; i++)
        x -= ((k == 2 ? x * x : x * x * x) - p) / (k * (k == 2 ? x : x * x));
    return x;
}

static uint32_t frac32(long double x)
{
    return (uint32_t)((x - (long double)(uint64_t)x) * 4294967296.0L);
}

static void constants(void)
{
    int n = 0;
    for (int p = 2; n < 64; p++) {
        int prime = 1;
        for (int q = 2; q * q <= p; q++)
            prime &= p % q != 0;
        if (!prime)
            continue;
        K[n] = frac32(root(p, 3));
        if (n < 8)
            H0[n] = frac32(root(p, 2));
        n++;
    }
}

static void blocks(uint32_t st[8], const uint8_t *p, size_t nb)
{
    const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bll, 0x0405060700010203ll);
    __m128i t = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)st), 0xb1);
    __m128i s1 = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)(st + 4)), 0x1b);
    __m128i s0 = _mm_alignr_epi8(t, s1, 8); /* ABEF */
    s1 = _mm_blend_epi16(s1, t, 0xf0);      /* CDGH */
    for (; nb--; p += 64) {
        __m128i a0 = s0, c0 = s1, w[4];
        for (int i = 0; i < 4; i++)
            w[i] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * i)), bswap);
        for (int i = 0; i < 16; i++) {
            __m128i wk = _mm_add_epi32(w[i % 4], _mm_loadu_si128((const __m128i *)&K[4 * i]));
            s1 = _mm_sha256rnds2_epu32(s1, s0, wk);
            s0 = _mm_sha256rnds2_epu32(s0, s1, _mm_shuffle_epi32(wk, 0x0e));
            if (i < 12) { /* W[4i+16..4i+19] replaces W[4i..4i+3] */
                __m128i x = _mm_sha256msg1_epu32(w[i % 4], w[(i + 1) % 4]);
                x = _mm_add_epi32(x, _mm_alignr_epi8(w[(i + 3) % 4], w[(i + 2) % 4], 4));
                w[i % 4] = _mm_sha256msg2_epu32(x, w[(i + 3) % 4]);
            }
        }
        s0 = _mm_add_epi32(s0, a0);
        s1 = _mm_add_epi32(s1, c0);
    }
    t = _mm_shuffle_epi32(s0, 0x1b);
    s1 = _mm_shuffle_epi32(s1, 0xb1);
    _mm_storeu_si128((__m128i *)st, _mm_blend_epi16(t, s1, 0xf0));
    _mm_storeu_si128((__m128i *)(st + 4), _mm_alignr_epi8(s1, t, 8));
}

static void sha256(const char *what, const uint8_t *msg, size_t n)
{
    uint32_t st[8];
    memcpy(st, H0, sizeof st);
    blocks(st, msg, n / 64);
    uint8_t last[128] = {0};
    size_t r = n % 64;
    memcpy(last, msg + n - r, r);
    last[r] = 0x80;
    size_t tail = r < 56 ? 64 : 128;
    uint64_t bits = (uint64_t)n * 8;
    for (int i = 0; i < 8; i++)
        last[tail - 1 - i] = (uint8_t)(bits >> (8 * i));
    blocks(st, last, tail / 64);
    printf("sha256(%s) = ", what);
    for (int i = 0; i < 8; i++)
        printf("%08x", st[i]);
    printf("\n");
}

static void show(const char *what, __m128i v)
{
    uint32_t d[4];
    _mm_storeu_si128((__m128i *)d, v);
    printf("%-10s %08x %08x %08x %08x\n", what, d[3], d[2], d[1], d[0]);
}

int main(void)
{
    constants();
    printf("K[0] %08x K[63] %08x H0[0] %08x\n", K[0], K[63], H0[0]);
    sha256("\"abc\"", (const uint8_t *)"abc", 3);
    sha256("\"\"", (const uint8_t *)"", 0);
    static uint8_t big[10000];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (uint8_t)(i * 7 + (i >> 8));
    sha256("10000 bytes", big, sizeof big);

    __m128i a = _mm_set_epi32(0x67452301, (int)0xefcdab89, (int)0x98badcfe, 0x10325476);
    __m128i m = _mm_set_epi32(0x61626380, 0, 0x18, (int)0xc3d2e1f0);
    show("rnds4 0", _mm_sha1rnds4_epu32(a, m, 0));
    show("rnds4 3", _mm_sha1rnds4_epu32(a, m, 3));
    show("nexte", _mm_sha1nexte_epu32(a, m));
    show("msg1", _mm_sha1msg1_epu32(a, m));
    show("msg2", _mm_sha1msg2_epu32(a, m));
    return 0;
}
