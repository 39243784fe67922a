/* escape.h - user input quoted in a message, made safe to print (issue 12):
 * a terminal must not act on a CR or an escape sequence that came from a
 * matrix, a block file or the command line.  Lives with bench/ (its first
 * user); cli/cmd_throughput.c uses it too. */
#ifndef ENTRYSIM_BENCH_ESCAPE_H
#define ENTRYSIM_BENCH_ESCAPE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Copies src into dst (n bytes, NUL-terminated, cut to fit) with each
 * control character and DEL written as \r \n \t or \xHH; everything else
 * (UTF-8 included) as it is.  Idempotent, so a message may be escaped
 * whole although its parts were escaped already.  dst and src may be the
 * same buffer.  Returns dst. */
char *es_escape_ctl(char *dst, size_t n, const char *src);

#ifdef __cplusplus
}
#endif
#endif
