/* aes.c - AES-128 with AES-NI (key expansion with AESKEYGENASSIST, the
 * decryption keys with AESIMC) on the FIPS-197 appendix C.1 vector, a
 * round trip over a buffer, and a carry-less multiply (PCLMULQDQ), as
 * hex.  Run natively and under entrysim; the outputs must match. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <wmmintrin.h>

static __m128i expand_step(__m128i k, __m128i t)
{
    t = _mm_shuffle_epi32(t, 0xff);
    k = _mm_xor_si128(k, _mm_slli_si128(k, 4));
    k = _mm_xor_si128(k, _mm_slli_si128(k, 4));
    k = _mm_xor_si128(k, _mm_slli_si128(k, 4));
    return _mm_xor_si128(k, t);
}

#define STEP(i, rc) ks[i] = expand_step(ks[(i) - 1], _mm_aeskeygenassist_si128(ks[(i) - 1], rc))

static void expand(const uint8_t key[16], __m128i ks[11], __m128i dk[11])
{
    ks[0] = _mm_loadu_si128((const __m128i *)key);
    STEP(1, 0x01); STEP(2, 0x02); STEP(3, 0x04); STEP(4, 0x08); STEP(5, 0x10);
    STEP(6, 0x20); STEP(7, 0x40); STEP(8, 0x80); STEP(9, 0x1b); STEP(10, 0x36);
    dk[0] = ks[10];
    for (int i = 1; i < 10; i++)
        dk[i] = _mm_aesimc_si128(ks[10 - i]);
    dk[10] = ks[0];
}

static __m128i enc(__m128i b, const __m128i ks[11])
{
    b = _mm_xor_si128(b, ks[0]);
    for (int i = 1; i < 10; i++)
        b = _mm_aesenc_si128(b, ks[i]);
    return _mm_aesenclast_si128(b, ks[10]);
}

static __m128i dec(__m128i b, const __m128i dk[11])
{
    b = _mm_xor_si128(b, dk[0]);
    for (int i = 1; i < 10; i++)
        b = _mm_aesdec_si128(b, dk[i]);
    return _mm_aesdeclast_si128(b, dk[10]);
}

static void hex(const char *what, __m128i v)
{
    uint8_t b[16];
    _mm_storeu_si128((__m128i *)b, v);
    printf("%-12s", what);
    for (int i = 0; i < 16; i++)
        printf("%02x", b[i]);
    printf("\n");
}

int main(void)
{
    uint8_t key[16], pt[16];
    for (int i = 0; i < 16; i++)
        key[i] = (uint8_t)i, pt[i] = (uint8_t)(0x11 * i);
    __m128i ks[11], dk[11];
    expand(key, ks, dk);
    hex("round key 10", ks[10]);
    __m128i c = enc(_mm_loadu_si128((const __m128i *)pt), ks);
    hex("ciphertext", c); /* FIPS-197 C.1: 69c4e0d86a7b0430d8cdb78070b4c55a */
    hex("decrypted", dec(c, dk));

    uint8_t buf[4096];
    uint32_t x = 12345;
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)((x = x * 1103515245 + 12345) >> 16);
    uint8_t out[4096];
    __m128i sum = _mm_setzero_si128();
    for (size_t i = 0; i < sizeof buf; i += 16) {
        __m128i e = enc(_mm_loadu_si128((const __m128i *)(buf + i)), ks);
        sum = _mm_xor_si128(sum, e);
        _mm_storeu_si128((__m128i *)(out + i), dec(e, dk));
    }
    hex("xor of 256", sum);
    printf("round trip: %s\n", memcmp(buf, out, sizeof buf) ? "differs" : "same");

    __m128i a = _mm_set_epi64x(0x0123456789abcdefll, (long long)0xfedcba9876543210ull);
    __m128i b = _mm_set_epi64x((long long)0x8000000000000001ull, 0x00000000ffffffffll);
    hex("clmul 00", _mm_clmulepi64_si128(a, b, 0x00));
    hex("clmul 11", _mm_clmulepi64_si128(a, b, 0x11));
    hex("clmul 10", _mm_clmulepi64_si128(a, b, 0x10));
    return 0;
}
