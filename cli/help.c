/* help.c - see help.h. */
#include "help.h"

#include <string.h>

#include "exposure.h"
#include "kernel_opts.h"
#include "mitigations.h"
#include "opts.h"

#define HELP_WIDTH 80
#define HELP_INDENT "                "

static const char *entries_list(char *buf, size_t n)
{
    const char *names[ES_ENTRY_COUNT + 1] = {NULL};
    for (int e = 0; e < ES_ENTRY_COUNT; e++)
        names[e] = es_entry_name(e);
    return es_opt_join(names, "|", "|", buf, n);
}

/* The value of {name} into buf, or NULL when it is no field. */
static const char *field(const char *name, size_t len, char *buf, size_t n)
{
#define IS(s) (len == sizeof(s) - 1 && !memcmp(name, s, len))
    if (IS("conv"))
        return es_conventions_list(buf, n);
    if (IS("cpu"))
        return es_vendors_list(buf, n);
    if (IS("uarchs"))
        return es_uarchs_list(", ", buf, n);
    if (IS("uarch"))
        return es_kernel_opts_default().uarch;
    if (IS("mitigations"))
        return es_mitigations_list(buf, n);
    if (IS("mitdefault")) {
        es_mitigations_name(es_kernel_opts_default().mitigations, buf, n);
        return buf;
    }
    if (IS("patches"))
        return es_patches_list(buf, n);
    if (IS("entries"))
        return entries_list(buf, n);
    return NULL;
#undef IS
}

/* One expanded line (without its newline), broken when too long. */
static void put_line(FILE *f, const char *s, size_t len)
{
    size_t width = HELP_WIDTH;
    while (len > width) {
        size_t cut = 0;
        for (size_t k = 1; k + 1 < len && k < width; k++)
            if (s[k] == ' ' && s[k + 1] == '[')
                cut = k;
        if (!cut)
            break;
        fprintf(f, "%.*s\n" HELP_INDENT, (int)cut, s);
        s += cut + 1;
        len -= cut + 1;
        width = HELP_WIDTH - (sizeof HELP_INDENT - 1);
    }
    fprintf(f, "%.*s\n", (int)len, s);
}

void es_help_print(FILE *f, const char *text)
{
    char line[1024], val[512];
    size_t k = 0;
    for (const char *p = text; *p; p++) {
        const char *close = *p == '{' ? strchr(p, '}') : NULL;
        const char *v = close ? field(p + 1, (size_t)(close - p - 1), val, sizeof val) : NULL;
        if (v) {
            k += (size_t)snprintf(line + k, sizeof line - k, "%s", v);
            p = close;
        } else if (*p == '\n') {
            put_line(f, line, k);
            k = 0;
        } else if (k + 1 < sizeof line) {
            line[k++] = *p;
        }
        if (k >= sizeof line)
            k = sizeof line - 1;
    }
    if (k)
        fprintf(f, "%.*s", (int)k, line);
}
