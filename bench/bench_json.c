/* bench_json.c - a small JSON reader (RFC 8259) for timing reports, and the
 * string writer of bench outputs. */
#include <stdlib.h>
#include <string.h>

#include "bench.h"

typedef struct jp {
    const char *p, *end;
    int depth;
    const char *why;
} jp;

static void ws(jp *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
        j->p++;
}

static int lit(jp *j, const char *s)
{
    size_t n = strlen(s);
    if ((size_t)(j->end - j->p) < n || memcmp(j->p, s, n))
        return 0;
    j->p += n;
    return 1;
}

static void put_utf8(char *s, size_t *n, unsigned cp)
{
    if (cp < 0x80) {
        s[(*n)++] = (char)cp;
    } else if (cp < 0x800) {
        s[(*n)++] = (char)(0xc0 | cp >> 6);
        s[(*n)++] = (char)(0x80 | (cp & 0x3f));
    } else {
        s[(*n)++] = (char)(0xe0 | cp >> 12);
        s[(*n)++] = (char)(0x80 | (cp >> 6 & 0x3f));
        s[(*n)++] = (char)(0x80 | (cp & 0x3f));
    }
}

/* A string literal (cursor on the quote); surrogate pairs are kept as two
 * 3-byte sequences, which is enough for names in reports. */
static char *str(jp *j)
{
    j->p++;
    const char *s = j->p;
    while (j->p < j->end && *j->p != '"')
        j->p += *j->p == '\\' ? 2 : 1;
    if (j->p >= j->end) {
        j->why = "unterminated string";
        return NULL;
    }
    size_t cap = (size_t)(j->p - s) + 1, n = 0;
    char *out = malloc(cap);
    if (!out) {
        j->why = "out of memory";
        return NULL;
    }
    for (const char *q = s; q < j->p; q++) {
        if ((unsigned char)*q < 0x20) {
            free(out);
            j->why = "control character in a string";
            return NULL;
        }
        if (*q != '\\') {
            out[n++] = *q;
            continue;
        }
        q++;
        switch (*q) {
        case '"': case '\\': case '/': out[n++] = *q; break;
        case 'b': out[n++] = '\b'; break;
        case 'f': out[n++] = '\f'; break;
        case 'n': out[n++] = '\n'; break;
        case 'r': out[n++] = '\r'; break;
        case 't': out[n++] = '\t'; break;
        case 'u': {
            unsigned cp = 0;
            for (int i = 1; i <= 4; i++) {
                char c = q + i < j->p ? q[i] : 0;
                int v = c >= '0' && c <= '9' ? c - '0'
                        : (c | 32) >= 'a' && (c | 32) <= 'f' ? (c | 32) - 'a' + 10 : -1;
                if (v < 0) {
                    free(out);
                    j->why = "bad \\u escape";
                    return NULL;
                }
                cp = cp << 4 | (unsigned)v;
            }
            q += 4;
            put_utf8(out, &n, cp); /* 6 input bytes >= 3 output bytes */
            break;
        }
        default:
            free(out);
            j->why = "bad escape in a string";
            return NULL;
        }
    }
    out[n] = 0;
    j->p++;
    return out;
}

static int value(jp *j, es_json *v);

static int push(es_json *v, size_t *cap, char *key)
{
    if (v->n == *cap) {
        *cap = *cap ? *cap * 2 : 4;
        es_json *g = realloc(v->items, *cap * sizeof *g);
        if (!g)
            return -1;
        v->items = g;
        if (v->type == ES_J_OBJ) {
            char **k = realloc(v->keys, *cap * sizeof *k);
            if (!k)
                return -1;
            v->keys = k;
        }
    }
    if (v->type == ES_J_OBJ)
        v->keys[v->n] = key;
    memset(&v->items[v->n], 0, sizeof v->items[0]);
    v->n++;
    return 0;
}

static int container(jp *j, es_json *v, char close)
{
    size_t cap = 0;
    j->p++;
    if (++j->depth > 64) {
        j->why = "nested too deeply";
        return -1;
    }
    ws(j);
    if (j->p < j->end && *j->p == close) {
        j->p++;
        j->depth--;
        return 0;
    }
    for (;;) {
        char *key = NULL;
        ws(j);
        if (v->type == ES_J_OBJ) {
            if (j->p >= j->end || *j->p != '"') {
                j->why = "expected a member name";
                return -1;
            }
            if (!(key = str(j)))
                return -1;
            ws(j);
            if (j->p >= j->end || *j->p != ':') {
                free(key);
                j->why = "expected ':'";
                return -1;
            }
            j->p++;
        }
        if (push(v, &cap, key)) {
            free(key);
            j->why = "out of memory";
            return -1;
        }
        if (value(j, &v->items[v->n - 1]))
            return -1;
        ws(j);
        if (j->p < j->end && *j->p == ',') {
            j->p++;
            continue;
        }
        if (j->p < j->end && *j->p == close) {
            j->p++;
            j->depth--;
            return 0;
        }
        j->why = close == '}' ? "expected ',' or '}'" : "expected ',' or ']'";
        return -1;
    }
}

static int value(jp *j, es_json *v)
{
    ws(j);
    if (j->p >= j->end) {
        j->why = "unexpected end";
        return -1;
    }
    char c = *j->p;
    if (c == '{') {
        v->type = ES_J_OBJ;
        return container(j, v, '}');
    }
    if (c == '[') {
        v->type = ES_J_ARR;
        return container(j, v, ']');
    }
    if (c == '"') {
        v->type = ES_J_STR;
        return (v->str = str(j)) ? 0 : -1;
    }
    if (lit(j, "true") || lit(j, "false")) {
        v->type = ES_J_BOOL;
        v->boolean = j->p[-1] == 'e' && j->p[-2] == 'u';
        return 0;
    }
    if (lit(j, "null")) {
        v->type = ES_J_NULL;
        return 0;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        char buf[64];
        size_t n = 0;
        while (j->p < j->end && n + 1 < sizeof buf && strchr("+-.eE0123456789", *j->p))
            buf[n++] = *j->p++;
        buf[n] = 0;
        char *e;
        v->type = ES_J_NUM;
        v->num = strtod(buf, &e);
        if (*e) {
            j->why = "bad number";
            return -1;
        }
        return 0;
    }
    j->why = "unexpected character";
    return -1;
}

es_json *es_json_parse(const char *text, size_t len, char *err, size_t errlen)
{
    jp j = {text, text + len, 0, NULL};
    es_json *v = calloc(1, sizeof *v);
    if (!v) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (value(&j, v) == 0) {
        ws(&j);
        if (j.p == j.end)
            return v;
        j.why = "trailing characters";
    }
    snprintf(err, errlen, "byte %ld: %s", (long)(j.p - text), j.why ? j.why : "error");
    es_json_free(v);
    return NULL;
}

static void free_inner(es_json *v)
{
    for (size_t i = 0; i < v->n; i++) {
        free_inner(&v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->str);
}

void es_json_free(es_json *j)
{
    if (j) {
        free_inner(j);
        free(j);
    }
}

const es_json *es_json_get(const es_json *j, const char *key)
{
    if (!j || j->type != ES_J_OBJ)
        return NULL;
    for (size_t i = 0; i < j->n; i++)
        if (!strcmp(j->keys[i], key))
            return &j->items[i];
    return NULL;
}

double es_json_num(const es_json *j, const char *key)
{
    const es_json *v = es_json_get(j, key);
    return v && v->type == ES_J_NUM ? v->num : -1;
}

void es_json_write_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}
