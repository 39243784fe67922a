/* v3_compute.c - x86-64-v3 code as compilers emit it: built with
 * -O3 -march=x86-64-v3, the loops below vectorize to 256-bit AVX2/FMA code
 * (float and double matrix products, integer reductions, shuffles, masked
 * tails), and the intrinsics add what compilers do not emit on their own
 * (gathers, F16C, permutes).  Prints digests of every result, so a run in
 * entrysim must print exactly what the host prints. */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define N 67 /* odd: the vector loops have tails */

static float fa[N][N], fb[N][N], fc[N][N];
static double da[N][N], db[N][N], dc[N][N];
static int32_t ia[4096], ib[4096];
static uint8_t bytes[4099];

static uint64_t digest(const void *p, size_t n)
{
    const uint8_t *b = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

static void matmul(void)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            fa[i][j] = (float)((i * 7 + j * 3) % 29) / 7.0f - 1.5f;
            fb[i][j] = (float)((i * 5 + j * 11) % 31) / 9.0f + 0.25f;
            da[i][j] = fa[i][j] * 1.0000001;
            db[i][j] = fb[i][j] / 3.0;
        }
    for (int i = 0; i < N; i++)
        for (int k = 0; k < N; k++)
            for (int j = 0; j < N; j++) {
                fc[i][j] += fa[i][k] * fb[k][j];
                dc[i][j] += da[i][k] * db[k][j];
            }
    printf("matmul float %016llx double %016llx c[3][5] %.9g %.17g\n",
           (unsigned long long)digest(fc, sizeof fc), (unsigned long long)digest(dc, sizeof dc),
           fc[3][5], dc[3][5]);
}

static void integers(void)
{
    uint32_t x = 12345;
    for (int i = 0; i < 4096; i++) {
        x = x * 1664525u + 1013904223u;
        ia[i] = (int32_t)x >> 7;
        ib[i] = (int32_t)(x ^ (x >> 13)) % 1000;
    }
    for (int i = 0; i < 4099; i++)
        bytes[i] = (uint8_t)(i * 37 + (i >> 3));
    int64_t dot = 0;
    int32_t mn = INT32_MAX, mx = INT32_MIN;
    uint32_t sum8 = 0;
    for (int i = 0; i < 4096; i++) {
        dot += (int64_t)ia[i] * ib[i];
        mn = ia[i] < mn ? ia[i] : mn;
        mx = ib[i] > mx ? ib[i] : mx;
        ia[i] = (ia[i] << (ib[i] & 7)) ^ (ib[i] >> 2);
    }
    for (int i = 0; i < 4099; i++)
        sum8 += bytes[i] > 100 ? bytes[i] : 0;
    printf("integers dot %lld min %d max %d sum8 %u shifted %016llx\n", (long long)dot, mn, mx,
           sum8, (unsigned long long)digest(ia, sizeof ia));
}

/* Gathers, permutes, variable shifts, blends, F16C, FMA: intrinsics. */
static void intrinsics(void)
{
    __m256i idx = _mm256_setr_epi32(7, 100, 3, 4000, 55, 1, 2048, 999);
    __m256i g = _mm256_i32gather_epi32(ib, idx, 4);
    __m256i mask = _mm256_setr_epi32(-1, 0, -1, -1, 0, -1, -1, 0);
    __m256i gm = _mm256_mask_i32gather_epi32(_mm256_set1_epi32(-7), ib, idx, mask, 4);
    __m256d gd = _mm256_i32gather_pd(&da[0][0], _mm_setr_epi32(0, 70, 140, 4000), 8);
    __m256i p = _mm256_permutevar8x32_epi32(g, _mm256_setr_epi32(7, 6, 5, 4, 3, 2, 1, 0));
    __m256i q = _mm256_permute4x64_epi64(gm, 0x1b);
    __m256i s = _mm256_sllv_epi32(p, _mm256_setr_epi32(0, 1, 5, 31, 32, 33, 3, 9));
    __m256i t = _mm256_srav_epi32(q, _mm256_setr_epi32(0, 1, 5, 31, 32, 33, 3, 9));
    __m256i b = _mm256_blend_epi32(s, t, 0xa5);
    __m256 f = _mm256_fmadd_ps(_mm256_loadu_ps(fa[1]), _mm256_loadu_ps(fb[2]), _mm256_loadu_ps(fc[3]));
    __m256d fd = _mm256_fnmsub_pd(gd, _mm256_loadu_pd(db[4]), _mm256_loadu_pd(dc[5]));
    __m128i h = _mm256_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT);
    __m256 back = _mm256_cvtph_ps(h);
    uint8_t out[32 * 6];
    _mm256_storeu_si256((void *)out, b);
    _mm256_storeu_ps((float *)(out + 32), f);
    _mm256_storeu_pd((double *)(out + 64), fd);
    _mm256_storeu_ps((float *)(out + 96), back);
    _mm256_storeu_si256((void *)(out + 128), g);
    _mm256_storeu_si256((void *)(out + 160), gm);
    printf("intrinsics %016llx movemask %08x test %d\n",
           (unsigned long long)digest(out, sizeof out),
           (unsigned)_mm256_movemask_epi8(_mm256_cmpgt_epi8(b, g)), _mm256_testz_si256(b, p));
}

int main(void)
{
    printf("cpu avx2 %d fma %d f16c %d\n", __builtin_cpu_supports("avx2") != 0,
           __builtin_cpu_supports("fma") != 0, __builtin_cpu_supports("f16c") != 0);
    matmul();
    integers();
    intrinsics();
    return 0;
}
