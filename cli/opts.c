/* opts.c - see opts.h. */
#include "opts.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"

static const es_opt *lookup(const es_opts *p, const char *name)
{
    for (size_t k = 0; k < p->n; k++)
        if (!strcmp(p->table[k].name, name))
            return &p->table[k];
    return NULL;
}

int es_opts_next(es_opts *p)
{
    p->val = NULL;
    p->name[0] = 0;
    if (p->i >= p->argc)
        return ES_OPT_DONE;
    const char *a = p->argv[p->i];
    p->arg = a;
    if (!p->no_dashdash && !strcmp(a, "--")) {
        p->i++;
        return ES_OPT_DONE;
    }
    if (a[0] != '-' || !a[1]) {
        if (!p->mixed)
            return ES_OPT_DONE;
        p->i++;
        return ES_OPT_ARG;
    }
    p->i++;
    const char *eq = strchr(a, '=');
    size_t len = eq ? (size_t)(eq - a) : strlen(a);
    if (len >= sizeof p->name)
        return ES_OPT_UNKNOWN;
    memcpy(p->name, a, len);
    p->name[len] = 0;
    const es_opt *o = lookup(p, p->name);
    if (!o)
        return ES_OPT_UNKNOWN;
    if (!o->arg) {
        if (eq) {
            p->val = eq + 1;
            return ES_OPT_EXTRA;
        }
        return o->id;
    }
    if (eq) {
        p->val = eq + 1;
    } else {
        if (p->i >= p->argc)
            return ES_OPT_NOVALUE;
        p->val = p->argv[p->i++];
    }
    return o->id;
}

es_opts es_opts_for(const es_cmd *c, int argc, char **argv)
{
    return (es_opts){.argc = argc, .argv = argv, .table = c->opts, .n = c->nopts,
                     .prefix = "entrysim: ", .cmd = c};
}

int es_opts_fail(const es_opts *p, const char *fmt, ...)
{
    /* the message quotes what the user typed: its control characters are
     * written visibly (escape.h), so a CR or an escape sequence in an
     * option value cannot act on the terminal */
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    size_t len = n > 0 ? (size_t)n : 0, cap = 4 * len + 1;
    char *msg = malloc(len + 1), *shown = malloc(cap);
    if (msg && shown) {
        vsnprintf(msg, len + 1, fmt, again);
        es_escape_ctl(shown, cap, msg);
    }
    va_end(again);
    fputs(p->prefix ? p->prefix : "entrysim: ", stderr);
    fputs(msg && shown ? shown : "invalid usage (out of memory for the message)", stderr);
    fputc('\n', stderr);
    if (p->trailer)
        fputs(p->trailer, stderr);
    else if (p->cmd)
        fprintf(stderr, "Try 'entrysim %s --help'.\n", p->cmd->name);
    free(msg);
    free(shown);
    return ES_EX_USAGE;
}

bool es_opt_int(const char *s, long lo, long hi, int *out)
{
    if (!s || !*s)
        return false;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return false;
    *out = (int)v;
    return true;
}

bool es_opt_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    if (!s || !*s || *s == '-')
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

bool es_opt_double(const char *s, double lo, bool lo_open, double hi, double *out)
{
    if (!s || !*s)
        return false;
    char *end;
    double v = strtod(s, &end);
    /* written so that NaN fails every test */
    if (*end || !(lo_open ? v > lo : v >= lo) || !(v <= hi))
        return false;
    *out = v;
    return true;
}

int es_opt_pick(const char *s, const char *const *names)
{
    for (int k = 0; names[k]; k++)
        if (!strcmp(s, names[k]))
            return k;
    return -1;
}

const char *es_opt_join(const char *const *names, const char *sep, const char *last, char *buf,
                        size_t n)
{
    size_t k = 0;
    buf[0] = 0;
    for (int j = 0; names[j] && k < n; j++) {
        const char *s = !j ? "" : names[j + 1] ? sep : last;
        int w = snprintf(buf + k, n - k, "%s%s", s, names[j]);
        if (w < 0)
            break;
        k += (size_t)w;
    }
    return buf;
}
