/* list.h - the comma-separated name lists of the command line
 * (--patches, --mitigations): walking one, and printing a name table into
 * an error message, so each list of names exists once. */
#ifndef ENTRYSIM_LIST_H
#define ENTRYSIM_LIST_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One item of a list, blanks around it trimmed (not NUL-terminated).
 * Returns 0 to go on, or -1 after writing a one-line reason to err. */
typedef int (*es_list_item_fn)(void *ctx, const char *item, size_t len, char *err,
                               size_t errlen);

/* Calls fn for each item of `list` (NULL or blanks only: no items) in
 * order.  An empty item in a list with others (",a", "a,,b", "a,") is a
 * typo: "empty item in <what> list '<list>'".  Returns 0, or -1 with the
 * reason in err (the first failing item's). */
int es_list_walk(const char *list, const char *what, es_list_item_fn fn, void *ctx, char *err,
                 size_t errlen);

/* Writes "a, b, c" into buf (always NUL-terminated, cut when too small):
 * names[i] for each i < n with keep == NULL or keep[i] != 0, each cut to
 * `width` characters when width > 0. */
void es_list_join(char *buf, size_t size, const char *const names[], const unsigned keep[],
                  size_t n, int width);

#ifdef __cplusplus
}
#endif
#endif
