/* help.c - see help.h. */
#include "help.h"

#include <string.h>

#include "exposure.h"
#include "kernel_opts.h"
#include "mitigations.h"
#include "opts.h"

#define HELP_WIDTH 80
#define HELP_INDENT "                "
#define OPT_COL 22 /* where an option's help text starts */

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
    es_kernel_opts def = es_kernel_opts_default();
    if (IS("conv"))
        return es_conventions_list(buf, n);
    if (IS("cpu"))
        return es_vendors_list(buf, n);
    if (IS("cpudefault"))
        return es_vendor_name(def.vendor);
    if (IS("syntax"))
        return es_syntaxes_list("|", "|", buf, n);
    if (IS("uarchs"))
        return es_uarchs_list(", ", buf, n);
    if (IS("uarch"))
        return def.uarch;
    if (IS("mitigations"))
        return es_mitigations_list(buf, n);
    if (IS("mitdefault")) {
        es_mitigations_name(def.mitigations, buf, n);
        return buf;
    }
    if (IS("patches"))
        return es_patches_list(false, buf, n);
    if (IS("inert"))
        return es_patches_list(true, buf, n);
    if (IS("entries"))
        return entries_list(buf, n);
    return NULL;
#undef IS
}

size_t es_help_expand(const char *text, char *out, size_t n)
{
    char val[512];
    size_t k = 0;
    for (const char *p = text; *p && k + 1 < n; p++) {
        const char *close = *p == '{' ? strchr(p, '}') : NULL;
        const char *v = close ? field(p + 1, (size_t)(close - p - 1), val, sizeof val) : NULL;
        if (v) {
            int w = snprintf(out + k, n - k, "%s", v);
            k = w < 0 ? k : k + (size_t)w < n ? k + (size_t)w : n - 1;
            p = close;
        } else {
            out[k++] = *p;
        }
    }
    out[k] = 0;
    return k;
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
    char buf[8192];
    size_t len = es_help_expand(text, buf, sizeof buf);
    const char *s = buf;
    for (const char *nl; (nl = memchr(s, '\n', len - (size_t)(s - buf))); s = nl + 1)
        put_line(f, s, (size_t)(nl - s));
    if (*s)
        fputs(s, f);
}

/* Words of s (an expanded help text; '\n' starts a new line) from column
 * col, wrapped at HELP_WIDTH and going on at column `indent`. */
static void put_wrapped(FILE *f, const char *s, int col, int indent)
{
    while (*s) {
        if (*s == '\n' || *s == ' ') {
            if (*s == '\n')
                col = fprintf(f, "\n%*s", indent, "") - 1;
            s++;
            continue;
        }
        int w = (int)strcspn(s, " \n");
        if (col > indent && col + 1 + w > HELP_WIDTH)
            col = fprintf(f, "\n%*s", indent, "") - 1;
        else if (col > indent)
            col += fprintf(f, " ");
        col += fprintf(f, "%.*s", w, s);
        s += w;
    }
    fputc('\n', f);
}

bool es_help_shadowed(const es_opt *t, size_t k)
{
    for (size_t j = 0; j < k; j++)
        if (!strcmp(t[j].name, t[k].name))
            return true;
    return false;
}

void es_help_options(FILE *f, const es_opt *t, size_t n)
{
    char head[256], text[4096];
    for (size_t k = 0; k < n; k++) {
        if (!t[k].help || es_help_shadowed(t, k))
            continue;
        int h = snprintf(head, sizeof head, "  %s", t[k].name);
        for (size_t j = k + 1; j < n && !t[j].help && h < (int)sizeof head; j++)
            h += snprintf(head + h, sizeof head - (size_t)h, ", %s", t[j].name);
        if (t[k].arg && h + 1 < (int)sizeof head) {
            head[h++] = ' ';
            h += (int)es_help_expand(t[k].arg, head + h, sizeof head - (size_t)h);
        }
        fputs(head, f);
        if (h + 1 < OPT_COL)
            fprintf(f, "%*s", OPT_COL - h, "");
        else
            fprintf(f, "\n%*s", OPT_COL, "");
        es_help_expand(t[k].help, text, sizeof text);
        put_wrapped(f, text, OPT_COL, OPT_COL);
    }
}

void es_cmd_help(FILE *f, const es_cmd *c)
{
    char line[512];
    snprintf(line, sizeof line, "usage: entrysim %s\n", c->synopsis);
    es_help_print(f, line);
    if (c->about)
        es_help_print(f, c->about);
    fputs("Options:\n", f);
    es_help_options(f, c->opts, c->nopts);
    if (c->footer)
        es_help_print(f, c->footer);
}
