/* string.c - memset/memcpy/memmove/memcmp and the str* functions a syscall
 * body may use (include/kstring.h).  The block operations are REP STOSB /
 * REP MOVSB, as Linux's x86 memset/memcpy are on CPUs with ERMS (the
 * simulator then charges them the cost of string instructions); written in
 * asm also because GCC would otherwise turn a C loop that copies bytes back
 * into a call to the very function being defined. */
#include "kstring.h"

void *memset(void *s, int c, size_t n)
{
    void *d = s;
    __asm__ volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(c) : "memory");
    return s;
}

void *memcpy(void *dst, const void *src, size_t n)
{
    void *d = dst;
    __asm__ volatile("rep movsb" : "+D"(d), "+S"(src), "+c"(n) : : "memory");
    return dst;
}

/* Overlapping ranges: copy backwards (DF = 1) when dst is above src. */
void *memmove(void *dst, const void *src, size_t n)
{
    if ((unsigned long)dst <= (unsigned long)src || (unsigned long)dst >= (unsigned long)src + n)
        return memcpy(dst, src, n);
    void *d = (char *)dst + n - 1;
    const void *s = (const char *)src + n - 1;
    __asm__ volatile("std; rep movsb; cld" : "+D"(d), "+S"(s), "+c"(n) : : "memory", "cc");
    return dst;
}

int memcmp(const void *a, const void *b, size_t n)
{
    const unsigned char *p = a, *q = b;
    for (size_t i = 0; i < n; i++)
        if (p[i] != q[i])
            return p[i] < q[i] ? -1 : 1;
    return 0;
}

size_t strnlen(const char *s, size_t max)
{
    size_t n = 0;
    while (n < max && s[n])
        n++;
    return n;
}

size_t strlen(const char *s)
{
    return strnlen(s, ~0ul);
}

int strncmp(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];
        if (x != y)
            return x < y ? -1 : 1;
        if (!x)
            break;
    }
    return 0;
}

int strcmp(const char *a, const char *b)
{
    return strncmp(a, b, ~0ul);
}
