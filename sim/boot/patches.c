/* patches.c - the series' patch toggles (see patches.h). */
#include "patches.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "list.h"

/* The whole series, in the order it was merged (the seed patches 002-008).
 * Three commits change no code path of their own: entrysim accepts them in
 * --patches so that the series can be walked commit by commit, and says
 * why the kernel is the same with them (es_patches_note). */
static const es_series_commit series[ES_SERIES_LEN] = {
    {"dfe64506c01e57159a4c550fe537c13a317ff01b",
     "x86/syscalls: Don't pointlessly reload the system call number", ES_PATCH_DFE64506, NULL},
    {"1bd21c6c21e848996339508d3ffb106d505256a8",
     "syscalls/core: Introduce CONFIG_ARCH_HAS_SYSCALL_WRAPPER=y", 0,
     "generic: an architecture may define its own SYSCALL_DEFINE; none does yet"},
    {"fa697140f9a20119a9ec8fd7460cc4314fbdaff3",
     "syscalls/x86: Use 'struct pt_regs' based syscall calling convention for 64-bit syscalls",
     ES_PATCH_FA697140, NULL},
    {"7303e30ec1d8fb5ca1f07c92d069241c32b2ee1b",
     "syscalls/core: Prepare CONFIG_ARCH_HAS_SYSCALL_WRAPPER=y for compat syscalls", 0,
     "generic: the same for the compat and not-implemented stubs"},
    {"ebeb8c82ffaf94435806ff0b686fffd41dd410b5",
     "syscalls/x86: Use 'struct pt_regs' based syscall calling for IA32_EMULATION and x32",
     ES_PATCH_EBEB8C82, NULL},
    {"f8781c4a226319fe60e652118b90cf094ccfe747",
     "syscalls/x86: Unconditionally enable 'struct pt_regs' based syscalls on x86_64", 0,
     "drops CONFIG_SYSCALL_PTREGS, always on for x86-64, and its dead #else code"},
    {"6dc936f175cc6d12a8eb14d29b87e9238e460383",
     "syscalls/x86: Extend register clearing on syscall entry to lower registers",
     ES_PATCH_6DC936F, NULL},
};

static void errf(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

const es_series_commit *es_series(int k)
{
    return k >= 0 && k < ES_SERIES_LEN ? &series[k] : NULL;
}

/* The commit of the series whose toggle is bit i. */
static const es_series_commit *toggle(int i)
{
    for (int k = 0; i >= 0 && i < ES_NPATCHES && k < ES_SERIES_LEN; k++)
        if (series[k].bit == 1u << i)
            return &series[k];
    return NULL;
}

const char *es_patch_id(int i)
{
    return toggle(i) ? toggle(i)->id : NULL;
}

const char *es_patch_subject(int i)
{
    return toggle(i) ? toggle(i)->subject : NULL;
}

/* The id table es_patches_parse_ids matches items against. */
typedef struct id_table {
    const char *const *ids;
    const unsigned *bits;
    size_t n;
    unsigned mask;  /* the bits named so far */
    unsigned named; /* bit k: ids[k] was named */
} id_table;

/* One commit-id prefix: adds its bit to t->mask, or -1 and the reason. */
static int patch_item(void *ctx, const char *s, size_t len, char *err, size_t errlen)
{
    id_table *t = ctx;
    char item[64], known[160];
    if (len >= sizeof item) {
        errf(err, errlen, "patch '%.20s...' is too long for a commit id", s);
        return -1;
    }
    memcpy(item, s, len);
    item[len] = 0;
    for (size_t k = 0; k < len; k++) {
        if (!isxdigit((unsigned char)item[k])) {
            errf(err, errlen, "patch '%s' is not a commit id (hex digits only)", item);
            return -1;
        }
        item[k] = (char)tolower((unsigned char)item[k]);
    }
    if (len < 7) {
        errf(err, errlen, "patch '%s' is too short: name it by at least 7 hex digits", item);
        return -1;
    }
    size_t hit = t->n, nhits = 0;
    for (size_t k = 0; k < t->n; k++)
        if (strlen(t->ids[k]) >= len && strncmp(t->ids[k], item, len) == 0) {
            if (nhits == 0)
                hit = k;
            nhits++;
        }
    if (nhits == 0) {
        es_list_join(known, sizeof known, t->ids, NULL, t->n, 12);
        errf(err, errlen, "patch '%s' is not in the series (%s)", item, known);
        return -1;
    }
    if (nhits > 1) {
        errf(err, errlen, "patch '%s' is ambiguous: it names %zu commits", item, nhits);
        return -1;
    }
    t->mask |= t->bits[hit]; /* a commit that is no toggle adds no bit */
    t->named |= 1u << hit;
    return 0;
}

/* es_patches_parse_ids, also setting *named (when not NULL). */
static int parse_named(const char *list, const char *const ids[], const unsigned bits[],
                       size_t n, unsigned *out, unsigned *named, char *err, size_t errlen)
{
    /* "" alone is the empty set; an empty item inside a list is a typo */
    id_table t = {ids, bits, n, 0, 0};
    if (es_list_walk(list, "patch", patch_item, &t, err, errlen))
        return -1;
    *out = t.mask;
    if (named)
        *named = t.named;
    return 0;
}

int es_patches_parse_ids(const char *list, const char *const ids[], const unsigned bits[],
                         size_t n, unsigned *out, char *err, size_t errlen)
{
    return parse_named(list, ids, bits, n, out, NULL, err, errlen);
}

int es_patches_parse_series(const char *list, unsigned *out, unsigned *named, char *err,
                            size_t errlen)
{
    const char *ids[ES_SERIES_LEN];
    unsigned bits[ES_SERIES_LEN];
    for (int k = 0; k < ES_SERIES_LEN; k++) {
        ids[k] = series[k].id;
        bits[k] = series[k].bit;
    }
    return parse_named(list, ids, bits, ES_SERIES_LEN, out, named, err, errlen);
}

int es_patches_parse(const char *list, unsigned *out, char *err, size_t errlen)
{
    return es_patches_parse_series(list, out, NULL, err, errlen);
}

void es_patches_note(unsigned named, unsigned patches, char *buf, size_t n)
{
    size_t k = 0;
    int inert = 0;
    buf[0] = 0;
    for (int i = 0; i < ES_SERIES_LEN && k < n; i++)
        if ((named & (1u << i)) && !series[i].bit) {
            int w = snprintf(buf + k, n - k, "%s%.12s (%s)", inert++ ? "; " : "",
                             series[i].id, series[i].alone);
            k += w > 0 ? (size_t)w : 0;
        }
    if (!inert || k >= n)
        return;
    char name[64];
    es_patches_name(patches, name, sizeof name);
    snprintf(buf + k, n - k, ": %s no code path on %s own; the guest kernel is %s",
             inert > 1 ? "they change" : "it changes", inert > 1 ? "their" : "its", name);
}

void es_patches_name(unsigned patches, char *buf, size_t n)
{
    patches &= ES_CONV_V417;
    if (patches == ES_CONV_V417) {
        snprintf(buf, n, "v4.17");
        return;
    }
    size_t k = (size_t)snprintf(buf, n, "v4.16");
    for (int i = 0; i < ES_NPATCHES && k < n; i++)
        if (patches & (1u << i))
            k += (size_t)snprintf(buf + k, n - k, "+%.8s", es_patch_id(i));
}
