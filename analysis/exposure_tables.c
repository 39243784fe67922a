/* exposure_tables.c - the syscall tables as each entry path sees them
 * (exposure.h): names, numbers and arities from the tables generated from
 * tables/ (es_syscall_64.h, es_syscall_32.h, es_syscall_args.h), the
 * entry paths' names, and which entry an instruction takes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoder.h"
#include "exposure.h"
#include "host.h"
#include "loader.h"

/* ---- the tables (generated from tables/) ---- */

typedef struct row64 {
    int nr;
    const char *abi;
    const char *name;
} row64;
typedef struct row32 {
    int nr;
    const char *name;
} row32;
typedef struct rowargs {
    int nr, nargs;
} rowargs;

static const row64 rows64[] = {
#define ES_SYSCALL_64(nr, abi, name, entry) {nr, #abi, #name},
#include "es_syscall_64.h"
#undef ES_SYSCALL_64
};
static const row32 rows32[] = {
#define ES_SYSCALL_32(nr, name, entry, compat) {nr, #name},
#include "es_syscall_32.h"
#undef ES_SYSCALL_32
};
static const rowargs args64[] = {
#define ES_SYSCALL_ARGS_64(nr, n, p) {nr, n},
#include "es_syscall_args.h"
#undef ES_SYSCALL_ARGS_64
};
static const rowargs args32[] = {
#define ES_SYSCALL_ARGS_32(nr, n, p) {nr, n},
#include "es_syscall_args.h"
#undef ES_SYSCALL_ARGS_32
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static int arity_of(const rowargs *a, size_t n, int nr)
{
    for (size_t i = 0; i < n; i++)
        if (a[i].nr == nr)
            return a[i].nargs;
    return 0;
}

bool es_entry_is32(int entry)
{
    return entry == ES_ENTRY_INT80 || entry == ES_ENTRY_SYSENTER32 || entry == ES_ENTRY_SYSCALL32;
}

/* Rows an entry path can call: the i386 table for the 32-bit entries, the
 * common and 64 rows for syscall64, common and x32 rows for x32, and the
 * three vsyscalls. */
/* The vsyscall page's three entries, in page order (0xffffffffff600000 +
 * 0x400 * index; Linux's arch/x86/entry/vsyscall/vsyscall_emu_64.S). */
static const char *const vsyscalls[] = {"gettimeofday", "time", "getcpu"};

int es_vsyscall_index(const char *name)
{
    for (int i = 0; i < (int)NELEM(vsyscalls); i++)
        if (!strcmp(name, vsyscalls[i]))
            return i;
    return -1;
}

/* Whether a row of the 64-bit table (abi "common", "64" or "x32") is one
 * the entry path can call. */
static bool abi_usable(const char *abi, const char *name, int entry)
{
    if (entry == ES_ENTRY_VSYSCALL)
        return es_vsyscall_index(name) >= 0;
    if (!strcmp(abi, "common"))
        return true;
    return !strcmp(abi, entry == ES_ENTRY_X32 ? "x32" : "64");
}

static bool row64_usable(const row64 *r, int entry)
{
    return abi_usable(r->abi, r->name, entry);
}

static const char *const entry_names[ES_ENTRY_COUNT] = {"syscall64", "int80", "sysenter32",
                                                        "syscall32", "x32", "vsyscall"};

const char *es_entry_name(int entry)
{
    return entry >= 0 && entry < ES_ENTRY_COUNT ? entry_names[entry] : "?";
}

int es_entry_parse(const char *name)
{
    for (int i = 0; i < ES_ENTRY_COUNT; i++)
        if (!strcmp(name, entry_names[i]))
            return i;
    return -1;
}

bool es_syscall_name(int entry, int nr, char *out, size_t n)
{
    if (entry < 0 || entry >= ES_ENTRY_COUNT)
        return false;
    if (es_entry_is32(entry)) {
        for (size_t i = 0; i < NELEM(rows32); i++)
            if (rows32[i].nr == nr) {
                snprintf(out, n, "%s", rows32[i].name);
                return true;
            }
        return false;
    }
    for (size_t i = 0; i < NELEM(rows64); i++)
        if (rows64[i].nr == nr && row64_usable(&rows64[i], entry)) {
            snprintf(out, n, "%s", rows64[i].name);
            return true;
        }
    return false;
}

int es_syscall_nr(int entry, const char *name)
{
    int nr = -1;
    if (entry < 0 || entry >= ES_ENTRY_COUNT)
        return -1;
    if (es_entry_is32(entry)) {
        for (size_t i = 0; i < NELEM(rows32); i++)
            if (!strcmp(rows32[i].name, name))
                nr = rows32[i].nr;
    } else {
        for (size_t i = 0; i < NELEM(rows64); i++)
            if (!strcmp(rows64[i].name, name) && row64_usable(&rows64[i], entry))
                nr = rows64[i].nr;
    }
    return nr;
}


int es_entry_abi(int entry)
{
    return es_entry_is32(entry) ? ES_ABI_I386 : entry == ES_ENTRY_X32 ? ES_ABI_X32 : ES_ABI_X64;
}

int es_syscall_arity(int entry, int nr)
{
    return es_entry_is32(entry) ? arity_of(args32, NELEM(args32), nr)
                                : arity_of(args64, NELEM(args64), nr);
}

size_t es_entry_syscalls(int entry, const char **names, size_t cap)
{
    size_t n = 0;
    if (es_entry_is32(entry)) {
        for (size_t i = 0; i < NELEM(rows32); i++, n++)
            if (names && n < cap)
                names[n] = rows32[i].name;
        return n;
    }
    for (size_t i = 0; i < NELEM(rows64); i++)
        if (row64_usable(&rows64[i], entry)) {
            if (names && n < cap)
                names[n] = rows64[i].name;
            n++;
        }
    return n;
}

int es_entry_of(const es_machine *m, const es_insn *d)
{
    if (d->op == ES_OP_SYSCALL)
        return m->mode == ES_MODE_32                          ? ES_ENTRY_SYSCALL32
               : (m->gpr[ES_RAX] & ES_X32_SYSCALL_BIT) != 0 ? ES_ENTRY_X32
                                                              : ES_ENTRY_SYSCALL64;
    if (d->op == ES_OP_SYSENTER)
        return ES_ENTRY_SYSENTER32;
    if (d->op == ES_OP_INT && d->nops && (d->o[0].imm & 0xff) == 0x80)
        return ES_ENTRY_INT80;
    return -1;
}


/* ---- a kernel tree's own rows (`exposure --kernel DIR`) ---- */

typedef struct ktab_row {
    bool is32;      /* syscall_32.tbl (else syscall_64.tbl) */
    int nr, arity;
    char abi[8];
    char name[48];
} ktab_row;

struct es_ktab {
    ktab_row *rows;
    size_t n;
};

/* One line "table nr abi name arity" of syscalls.tsv; false when malformed. */
static bool ktab_parse(const char *line, ktab_row *r)
{
    int table, used = 0;
    if (sscanf(line, "%d %d %7s %47s %d%n", &table, &r->nr, r->abi, r->name, &r->arity,
               &used) != 5 ||
        (table != 64 && table != 32) || r->nr < 0 || r->arity < 0 || r->arity > 6)
        return false;
    r->is32 = table == 32;
    return line[used] == '\n' || line[used] == 0;
}

es_ktab *es_ktab_load(const char *dir, char *err, size_t errlen)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/build/gen/syscalls.tsv", dir);
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open (build the tree with 'entrysim kernel build %s')",
                 path, dir);
        return NULL;
    }
    es_ktab *t = calloc(1, sizeof *t);
    char line[256];
    size_t cap = 0;
    for (int ln = 1; t && fgets(line, sizeof line, f); ln++) {
        if (line[0] == '#')
            continue;
        if (t->n == cap) {
            ktab_row *nr = realloc(t->rows, (cap = cap ? 2 * cap : 512) * sizeof *nr);
            if (!nr) {
                snprintf(err, errlen, "out of memory");
                es_ktab_free(t);
                t = NULL;
                break;
            }
            t->rows = nr;
        }
        if (!ktab_parse(line, &t->rows[t->n++])) {
            snprintf(err, errlen, "%s:%d: malformed row", path, ln);
            es_ktab_free(t);
            t = NULL;
        }
    }
    fclose(f);
    return t;
}

void es_ktab_free(es_ktab *t)
{
    if (t)
        free(t->rows);
    free(t);
}

static bool ktab_usable(const ktab_row *r, int entry)
{
    return es_entry_is32(entry) ? r->is32 : !r->is32 && abi_usable(r->abi, r->name, entry);
}

int es_ktab_nr(const es_ktab *t, int entry, const char *name)
{
    int nr = -1;
    for (size_t i = 0; i < t->n; i++)
        if (ktab_usable(&t->rows[i], entry) && !strcmp(t->rows[i].name, name))
            nr = t->rows[i].nr;
    return nr;
}

int es_ktab_arity(const es_ktab *t, int entry, int nr)
{
    for (size_t i = 0; i < t->n; i++)
        if (ktab_usable(&t->rows[i], entry) && t->rows[i].nr == nr)
            return t->rows[i].arity;
    return 0;
}

size_t es_ktab_syscalls(const es_ktab *t, int entry, const char **names, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++)
        if (ktab_usable(&t->rows[i], entry)) {
            if (names && n < cap)
                names[n] = t->rows[i].name;
            n++;
        }
    return n;
}
