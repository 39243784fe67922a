/* dbg_src.c - source lines for the debugger (issue 13): the DWARF line
 * tables of the guest kernel image and of the program, read with elfutils'
 * libdw (Debian libdw-dev), and the text of those lines from the source
 * files when they are on this machine.
 *
 * A table is every row of every CU's line program, sorted by address; the
 * row for an address is the last one at or below it, unless that row ends
 * a sequence (the address lies past the code of that sequence). */
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dbg_int.h"

struct dbg_src {
    dbg_src_row *rows;
    size_t n, cap;
    char **files;
    size_t nfiles;
    /* the text of a file, loaded when first shown: lines[file][line-1] */
    char ***text;
    size_t *ntext;
    char **blob;
};

static int file_index(dbg_src *s, const char *name)
{
    for (size_t i = s->nfiles; i-- > 0;)
        if (!strcmp(s->files[i], name))
            return (int)i;
    char **f = realloc(s->files, (s->nfiles + 1) * sizeof *f);
    if (!f)
        return -1;
    s->files = f;
    if (!(f[s->nfiles] = strdup(name)))
        return -1;
    return (int)s->nfiles++;
}

static int add_row(dbg_src *s, Dwarf_Line *l)
{
    Dwarf_Addr a;
    int line = 0;
    bool end = false;
    const char *file = dwarf_linesrc(l, NULL, NULL);
    if (dwarf_lineaddr(l, &a) || dwarf_lineno(l, &line) || dwarf_lineendsequence(l, &end) ||
        !file)
        return 0; /* a row libdw cannot describe is skipped, not fatal */
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 1024;
        dbg_src_row *r = realloc(s->rows, cap * sizeof *r);
        if (!r)
            return -1;
        s->rows = r;
        s->cap = cap;
    }
    int fi = file_index(s, file);
    if (fi < 0)
        return -1;
    s->rows[s->n++] = (dbg_src_row){a, (unsigned)line, (unsigned)fi, end};
    return 0;
}

static int cmp_row(const void *x, const void *y)
{
    const dbg_src_row *a = x, *b = y;
    if (a->addr != b->addr)
        return a->addr < b->addr ? -1 : 1;
    return (int)b->end - (int)a->end; /* an end and a start at one address: the start wins */
}

/* Every CU's line rows of the ELF image (in memory, size bytes). */
static int read_lines(dbg_src *s, Elf *elf)
{
    Dwarf *dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
    if (!dw)
        return -1; /* no debug info: no source lines, not an error */
    Dwarf_Off off = 0, next;
    size_t hsize;
    int rc = 0;
    while (!rc && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
        Dwarf_Die cu;
        Dwarf_Lines *lines;
        size_t nl;
        if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_getsrclines(&cu, &lines, &nl) == 0)
            for (size_t i = 0; i < nl && !rc; i++)
                rc = add_row(s, dwarf_onesrcline(lines, i));
        off = next;
    }
    dwarf_end(dw);
    if (s->n)
        qsort(s->rows, s->n, sizeof *s->rows, cmp_row);
    return rc;
}

dbg_src *dbg_src_load(const void *image, size_t size)
{
    dbg_src *s = calloc(1, sizeof *s);
    char *copy = malloc(size ? size : 1); /* libelf may want to write into it */
    if (!s || !copy) {
        free(s);
        free(copy);
        return NULL;
    }
    memcpy(copy, image, size);
    elf_version(EV_CURRENT);
    Elf *elf = elf_memory(copy, size);
    if (!elf || read_lines(s, elf) || !s->n) {
        if (elf)
            elf_end(elf);
        free(copy);
        dbg_src_free(s);
        return NULL;
    }
    elf_end(elf);
    free(copy);
    return s;
}

void dbg_src_free(dbg_src *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nfiles; i++) {
        free(s->files[i]);
        if (s->text) {
            free(s->text[i]);
            free(s->blob[i]);
        }
    }
    free(s->files);
    free(s->text);
    free(s->ntext);
    free(s->blob);
    free(s->rows);
    free(s);
}

const dbg_src_row *dbg_src_find(const dbg_src *s, uint64_t addr)
{
    if (!s || !s->n)
        return NULL;
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->rows[mid].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!lo || s->rows[lo - 1].end)
        return NULL;
    return &s->rows[lo - 1];
}

const char *dbg_src_file(const dbg_src *s, const dbg_src_row *r)
{
    return r->file < s->nfiles ? s->files[r->file] : "?";
}

/* Reads file i once and splits it into lines (at most 4 MiB). */
static void load_text(dbg_src *s, size_t i)
{
    if (!s->text) {
        s->text = calloc(s->nfiles, sizeof *s->text);
        s->ntext = calloc(s->nfiles, sizeof *s->ntext);
        s->blob = calloc(s->nfiles, sizeof *s->blob);
        if (!s->text || !s->ntext || !s->blob)
            return;
    }
    if (s->blob[i])
        return;
    FILE *f = fopen(s->files[i], "r");
    char *b = malloc((4u << 20) + 1);
    size_t n = f && b ? fread(b, 1, 4u << 20, f) : 0;
    if (f)
        fclose(f);
    if (!b)
        return;
    b[n] = 0;
    s->blob[i] = b;
    size_t lines = 1;
    for (size_t k = 0; k < n; k++)
        lines += b[k] == '\n';
    if (!(s->text[i] = malloc(lines * sizeof(char *))))
        return;
    size_t k = 0;
    for (char *p = b; k < lines; k++) {
        s->text[i][k] = p;
        char *nl = strchr(p, '\n');
        if (!nl)
            break;
        *nl = 0;
        p = nl + 1;
    }
    s->ntext[i] = k + 1 < lines ? k + 1 : lines;
}

const char *dbg_src_text(dbg_src *s, const dbg_src_row *r)
{
    if (r->file >= s->nfiles)
        return "";
    load_text(s, r->file);
    if (!s->text || !s->text[r->file] || r->line == 0 || r->line > s->ntext[r->file])
        return "";
    const char *t = s->text[r->file][r->line - 1];
    while (*t == ' ' || *t == '\t')
        t++;
    return t;
}
