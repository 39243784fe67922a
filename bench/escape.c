/* escape.c - control characters in quoted user input written visibly
 * (escape.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"

char *es_escape_ctl(char *dst, size_t n, const char *src)
{
    if (!n)
        return dst;
    /* a copy when escaping in place (or when the buffers overlap) */
    char *copy = NULL;
    size_t slen = strlen(src);
    if (src < dst + n && dst < src + slen + 1) {
        copy = malloc(slen + 1);
        if (!copy) {
            dst[0] = 0;
            return dst;
        }
        memcpy(copy, src, slen + 1);
        src = copy;
    }
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)src; *p; p++) {
        char esc[5];
        if (*p == '\r' || *p == '\n' || *p == '\t')
            esc[0] = '\\', esc[1] = *p == '\r' ? 'r' : *p == '\n' ? 'n' : 't', esc[2] = 0;
        else if (*p < 0x20 || *p == 0x7f)
            snprintf(esc, sizeof esc, "\\x%02x", *p);
        else
            esc[0] = (char)*p, esc[1] = 0;
        size_t k = strlen(esc);
        if (o + k >= n)
            break;
        memcpy(dst + o, esc, k);
        o += k;
    }
    dst[o] = 0;
    free(copy);
    return dst;
}
