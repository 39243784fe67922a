/* kstring.h - the string functions of the kernel's runtime (string.c), the
 * ones Linux's lib/string.c gives a body (and the ones GCC may call for a
 * struct copy or an array initialiser in a freestanding build). */
#ifndef ES_KSTRING_H
#define ES_KSTRING_H

#include "kmodel.h"

void *memset(void *s, int c, size_t n);
void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
size_t strnlen(const char *s, size_t max);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);

#endif
