/* list.c - see list.h. */
#include "list.h"

#include <stdio.h>
#include <string.h>

/* The next item at *pos (start with *pos = list): 1 and the item, 0 when
 * the list has no more, -1 for an empty item in a list with others. */
static int next_item(const char *list, const char **pos, const char **item, size_t *len)
{
    const char *p = *pos;
    if (!p)
        return 0; /* past the last item */
    const char *s = p;
    while (*s == ' ' || *s == '\t')
        s++;
    const char *e = s;
    while (*e && *e != ',')
        e++;
    const char *t = e;
    while (t > s && (t[-1] == ' ' || t[-1] == '\t'))
        t--;
    *item = s;
    *len = (size_t)(t - s);
    *pos = *e ? e + 1 : NULL;
    if (*len)
        return 1;
    return *e == 0 && p == list ? 0 : -1; /* a blank list has no items */
}

int es_list_walk(const char *list, const char *what, es_list_item_fn fn, void *ctx, char *err,
                 size_t errlen)
{
    if (!list)
        list = "";
    const char *p = list, *s;
    size_t len;
    int more;
    while ((more = next_item(list, &p, &s, &len)) != 0) {
        if (more < 0) {
            if (err && errlen)
                snprintf(err, errlen, "empty item in %s list '%s'", what, list);
            return -1;
        }
        if (fn(ctx, s, len, err, errlen))
            return -1;
    }
    return 0;
}

void es_list_join(char *buf, size_t size, const char *const names[], const unsigned keep[],
                  size_t n, int width)
{
    if (!buf || !size)
        return;
    buf[0] = 0;
    size_t k = 0;
    for (size_t i = 0; i < n && k < size; i++) {
        if (keep && !keep[i])
            continue;
        int w = snprintf(buf + k, size - k, "%s%.*s", k ? ", " : "",
                         width > 0 ? width : (int)strlen(names[i]), names[i]);
        if (w < 0)
            return;
        k += (size_t)w;
    }
}
