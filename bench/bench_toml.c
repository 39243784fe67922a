/* bench_toml.c - the strict TOML subset of bench matrices (bench.h). */
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

typedef struct parser {
    const char *p; /* cursor */
    int line;
    char *err;
    size_t errlen;
    es_toml *t;
} parser;

static int fail(parser *ps, const char *fmt, ...)
{
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(ps->err, ps->errlen, "%d: %s", ps->line, msg);
    return -1;
}

static char *dupn(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

static bool bare_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
}

static void skip_ws(parser *ps)
{
    while (*ps->p == ' ' || *ps->p == '\t')
        ps->p++;
}

/* Blanks and a comment up to the end of the line (not past it; a CRLF's
 * CR is skipped). */
static void skip_rest(parser *ps)
{
    skip_ws(ps);
    if (*ps->p == '#')
        while (*ps->p && *ps->p != '\n')
            ps->p++;
    if (*ps->p == '\r' && ps->p[1] == '\n')
        ps->p++;
}

/* After a value or header: only blanks and a comment may follow. */
static int end_of_line(parser *ps)
{
    skip_rest(ps);
    if (*ps->p && *ps->p != '\n')
        return fail(ps, "unexpected '%c' after the value", *ps->p);
    return 0;
}

/* Whitespace, newlines and comments (between lines, in a multi-line array). */
static void skip_ws_nl(parser *ps)
{
    for (skip_rest(ps); *ps->p == '\n'; skip_rest(ps)) {
        ps->p++;
        ps->line++;
    }
}

static int parse_string(parser *ps, char **out)
{
    ps->p++; /* opening quote */
    size_t cap = 32, n = 0;
    char *s = malloc(cap);
    if (!s)
        return fail(ps, "out of memory");
    for (;;) {
        char c = *ps->p++;
        if (c == '"')
            break;
        if (c == 0 || c == '\n') {
            free(s);
            return fail(ps, "unterminated string");
        }
        if (c == '\\') {
            char e = *ps->p++;
            switch (e) {
            case '"': c = '"'; break;
            case '\\': c = '\\'; break;
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            default:
                free(s);
                return fail(ps, "unsupported escape '\\%c' in a string", e ? e : '0');
            }
        } else if ((unsigned char)c < 0x20 && c != '\t') {
            free(s);
            return fail(ps, "control character in a string");
        }
        if (n + 2 > cap) {
            char *g = realloc(s, cap *= 2);
            if (!g) {
                free(s);
                return fail(ps, "out of memory");
            }
            s = g;
        }
        s[n++] = c;
    }
    s[n] = 0;
    *out = s;
    return 0;
}

static int parse_value(parser *ps, es_tkey *k)
{
    const char *p = ps->p;
    if (*p == '"') {
        if (p[1] == '"' && p[2] == '"')
            return fail(ps, "multi-line strings are not supported");
        k->type = ES_TV_STRING;
        return parse_string(ps, &k->str);
    }
    if (*p == '\'')
        return fail(ps, "literal ('single-quoted') strings are not supported; use \"...\"");
    if (*p == '[') {
        k->type = ES_TV_ARRAY;
        ps->p++;
        size_t cap = 0;
        for (;;) {
            skip_ws_nl(ps);
            if (*ps->p == ']') {
                ps->p++;
                return 0;
            }
            if (!*ps->p)
                return fail(ps, "unterminated array");
            if (*ps->p != '"')
                return fail(ps, "arrays may hold only \"strings\"");
            char *s;
            if (parse_string(ps, &s))
                return -1;
            if (k->narr == cap) {
                cap = cap ? cap * 2 : 8;
                char **g = realloc(k->arr, cap * sizeof *g);
                if (!g) {
                    free(s);
                    return fail(ps, "out of memory");
                }
                k->arr = g;
            }
            k->arr[k->narr++] = s;
            skip_ws_nl(ps);
            if (*ps->p == ',')
                ps->p++;
            else if (*ps->p != ']')
                return fail(ps, *ps->p ? "expected ',' or ']' in the array"
                                       : "unterminated array");
        }
    }
    if (!strncmp(p, "true", 4) && !bare_char(p[4])) {
        k->type = ES_TV_BOOL, k->i = 1, ps->p += 4;
        return 0;
    }
    if (!strncmp(p, "false", 5) && !bare_char(p[5])) {
        k->type = ES_TV_BOOL, k->i = 0, ps->p += 5;
        return 0;
    }
    const char *d = p + (*p == '-' || *p == '+');
    if (*d >= '0' && *d <= '9') {
        long long v = 0;
        while (*d >= '0' && *d <= '9') {
            if (v > (9223372036854775807LL - 9) / 10)
                return fail(ps, "integer too large");
            v = v * 10 + (*d++ - '0');
        }
        if (bare_char(*d) || *d == '.')
            return fail(ps, "only decimal integers are supported (no floats, dates, 0x...)");
        k->type = ES_TV_INT, k->i = *p == '-' ? -v : v, ps->p = d;
        return 0;
    }
    return fail(ps, "expected a value: \"string\", integer, true/false or [\"array\"]");
}

static int dotted_name(parser *ps, char *buf, size_t len, char stop)
{
    size_t n = 0;
    for (;;) {
        skip_ws(ps);
        if (!bare_char(*ps->p))
            return fail(ps, *ps->p == '"' ? "quoted keys are not supported"
                                          : "expected a bare key (letters, digits, _ and -)");
        while (bare_char(*ps->p)) {
            if (n + 2 > len)
                return fail(ps, "name too long");
            buf[n++] = *ps->p++;
        }
        skip_ws(ps);
        if (*ps->p != '.' || stop == '=')
            break;
        buf[n++] = *ps->p++;
    }
    buf[n] = 0;
    if (*ps->p != stop)
        return fail(ps, stop == ']' ? "expected ']' to close the table header"
                                    : "expected '=' after the key (dotted keys are not supported)");
    ps->p++;
    return 0;
}

static int add_table(parser *ps, const char *name)
{
    es_toml *t = ps->t;
    for (size_t i = 0; i < t->ntables; i++)
        if (!strcmp(t->tables[i], name))
            return fail(ps, "table [%s] defined twice (first on line %d)", name, t->table_lines[i]);
    char **g = realloc(t->tables, (t->ntables + 1) * sizeof *g);
    if (!g)
        return fail(ps, "out of memory");
    t->tables = g;
    int *l = realloc(t->table_lines, (t->ntables + 1) * sizeof *l);
    if (!l)
        return fail(ps, "out of memory");
    t->table_lines = l;
    if (!(t->tables[t->ntables] = dupn(name, strlen(name))))
        return fail(ps, "out of memory");
    t->table_lines[t->ntables++] = ps->line;
    return 0;
}

int es_toml_parse(const char *text, es_toml *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    parser ps = {text, 1, err, errlen, t};
    char table[128] = "";
    size_t cap = 0;
    for (;;) {
        skip_ws_nl(&ps);
        if (!*ps.p)
            return 0;
        if (*ps.p == '[') {
            ps.p++;
            if (*ps.p == '[')
                goto bad_aot;
            if (dotted_name(&ps, table, sizeof table, ']') || add_table(&ps, table) ||
                end_of_line(&ps))
                goto bad;
            continue;
        }
        char key[128];
        if (dotted_name(&ps, key, sizeof key, '='))
            goto bad;
        for (size_t i = 0; i < t->nkeys; i++)
            if (!strcmp(t->keys[i].table, table) && !strcmp(t->keys[i].key, key)) {
                fail(&ps, "key '%s' defined twice (first on line %d)", key, t->keys[i].line);
                goto bad;
            }
        if (t->nkeys == cap) {
            cap = cap ? cap * 2 : 16;
            es_tkey *g = realloc(t->keys, cap * sizeof *g);
            if (!g) {
                fail(&ps, "out of memory");
                goto bad;
            }
            t->keys = g;
        }
        es_tkey *k = &t->keys[t->nkeys++];
        memset(k, 0, sizeof *k);
        k->line = ps.line;
        k->table = dupn(table, strlen(table));
        k->key = dupn(key, strlen(key));
        if (!k->table || !k->key) {
            fail(&ps, "out of memory");
            goto bad;
        }
        skip_ws(&ps);
        if (parse_value(&ps, k) || end_of_line(&ps))
            goto bad;
    }
bad_aot:
    fail(&ps, "arrays of tables ([[...]]) are not supported");
bad:
    es_toml_free(t);
    return -1;
}

void es_toml_free(es_toml *t)
{
    for (size_t i = 0; i < t->nkeys; i++) {
        es_tkey *k = &t->keys[i];
        free(k->table);
        free(k->key);
        free(k->str);
        for (size_t j = 0; j < k->narr; j++)
            free(k->arr[j]);
        free(k->arr);
    }
    for (size_t i = 0; i < t->ntables; i++)
        free(t->tables[i]);
    free(t->keys);
    free(t->tables);
    free(t->table_lines);
    memset(t, 0, sizeof *t);
}

es_tkey *es_toml_get(es_toml *t, const char *table, const char *key)
{
    for (size_t i = 0; i < t->nkeys; i++)
        if (!strcmp(t->keys[i].table, table) && !strcmp(t->keys[i].key, key)) {
            t->keys[i].used = 1;
            return &t->keys[i];
        }
    return NULL;
}
