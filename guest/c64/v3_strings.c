/* v3_strings.c - the C library's string and memory functions over odd
 * lengths, every alignment and the end of a page followed by an
 * inaccessible one.  glibc picks its AVX2 versions (memcpy, memmove,
 * memset, memchr, memcmp, strlen, strchr, strcmp, strcpy...) from CPUID and
 * XCR0 at start-up: under entrysim they are the ones that run when the
 * guest CPU reports AVX2, and reading past the end of the page would fault.
 * Prints a digest of every result and which paths the CPU allows. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static uint64_t h = 1469598103934665603ull;

static void mix(uint64_t v)
{
    for (int i = 0; i < 8; i++)
        h = (h ^ ((v >> (8 * i)) & 0xff)) * 1099511628211ull;
}

/* A page of data with an inaccessible page after it. */
static char *guarded_page(void)
{
    long ps = sysconf(_SC_PAGESIZE);
    char *p = mmap(NULL, 2 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED || mprotect(p + ps, ps, PROT_NONE))
        return NULL;
    return p;
}

static void strings_at_page_end(char *pg, long ps)
{
    for (int len = 0; len < 300; len += (len < 70 ? 1 : 13)) {
        char *s = pg + ps - len - 1; /* the NUL is the page's last byte */
        for (int i = 0; i < len; i++)
            s[i] = (char)('a' + (i * 7 + len) % 26);
        s[len] = 0;
        mix(strlen(s));
        mix(strnlen(s, len / 2 + 1));
        char *c = strchr(s, 'q');
        mix(c ? (uint64_t)(c - s) : ~0ull);
        c = strrchr(s, 'e');
        mix(c ? (uint64_t)(c - s) : ~0ull);
        c = memchr(s, 'z', len + 1);
        mix(c ? (uint64_t)(c - s) : ~0ull);
        c = memchr(s, 0, len + 1);
        mix((uint64_t)(c - s));
        static char copy[400];
        strcpy(copy, s);
        mix((uint64_t)strcmp(copy, s));
        if (len) {
            copy[len - 1] ^= 1;
            mix((uint64_t)(strcmp(copy, s) > 0));
            mix((uint64_t)(strncmp(copy, s, len - 1)));
            mix((uint64_t)(memcmp(copy, s, len) < 0));
        }
    }
}

static void memory_ops(void)
{
    static unsigned char src[1200], dst[1300];
    for (int i = 0; i < 1200; i++)
        src[i] = (unsigned char)(i * 131 + 7);
    for (int n = 0; n < 1100; n += (n < 140 ? 1 : 37))
        for (int a = 0; a < 64; a += 9) {
            memset(dst, 0x5a, sizeof dst);
            memcpy(dst + a, src + (a * 3 % 32), n);
            memmove(dst + a + 5, dst + a, n);
            memset(dst + a + n / 3, n & 0xff, n / 4);
            for (size_t i = 0; i < sizeof dst; i += 8) {
                uint64_t v;
                memcpy(&v, dst + i, 8);
                mix(v);
            }
            mix((uint64_t)(memcmp(dst + a, src, n) < 0));
        }
}

int main(void)
{
    long ps = sysconf(_SC_PAGESIZE);
    char *pg = guarded_page();
    if (!pg)
        return 1;
    printf("cpu avx2 %d bmi2 %d\n", __builtin_cpu_supports("avx2") != 0,
           __builtin_cpu_supports("bmi2") != 0);
    strings_at_page_end(pg, ps);
    printf("strings %016llx\n", (unsigned long long)h);
    memory_ops();
    printf("memory %016llx\n", (unsigned long long)h);
    return 0;
}
