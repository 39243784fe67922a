/* floats.c - printf with floats (SSE2 arithmetic, conversions, libm),
 * malloc/realloc and qsort. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(void)
{
    printf("%.6f %.3e %g %g\n", 3.14159265358979, 6.02214076e23, 1.0 / 3.0, -0.0);
    printf("sqrt(2)=%.15f exp(1)=%.15f\n", sqrt(2.0), exp(1.0));
    printf("sin(1)=%.12f atan2(1,2)=%.12f log10(12345)=%.12f\n", sin(1.0), atan2(1.0, 2.0),
           log10(12345.0));
    printf("floor(-2.5)=%g ceil(-2.5)=%g round(2.5)=%g trunc(-2.7)=%g\n", floor(-2.5),
           ceil(-2.5), round(2.5), trunc(-2.7));
    printf("(int)-3.99=%d (long)1e18=%ld %f\n", (int)-3.99, (long)1e18, (double)(float)0.1);
    float f = 1.0f;
    for (int i = 0; i < 30; i++)
        f = f * 1.5f - 0.25f;
    printf("float recurrence: %.9g\n", f);

    size_t n = 0, cap = 4;
    double *v = malloc(cap * sizeof *v);
    unsigned s = 12345;
    for (int i = 0; i < 5000; i++) {
        if (n == cap) {
            cap *= 2;
            v = realloc(v, cap * sizeof *v);
        }
        s = s * 1103515245u + 12345u;
        v[n++] = (double)(s >> 8) / 65536.0 - 128.0;
    }
    qsort(v, n, sizeof *v, cmp_double);
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    printf("sorted %zu: min %.4f median %.4f max %.4f mean %.6f\n", n, v[0], v[n / 2], v[n - 1],
           sum / (double)n);
    free(v);

    const char *words[] = {"pear", "apple", "fig", "kiwi", "banana", "cherry", "date", "grape"};
    char *w[8];
    for (int i = 0; i < 8; i++)
        w[i] = strdup(words[i]);
    qsort(w, 8, sizeof *w, cmp_str);
    for (int i = 0; i < 8; i++) {
        printf("%s%s", w[i], i < 7 ? " " : "\n");
        free(w[i]);
    }
    return 0;
}
