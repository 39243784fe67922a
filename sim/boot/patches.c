/* patches.c - the series' patch toggles (see patches.h). */
#include "patches.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "list.h"

/* The series, in the order of the bitmask (and the order it was merged). */
static const char *const patch_ids[ES_NPATCHES] = {
    "dfe64506c01e57159a4c550fe537c13a317ff01b",
    "fa697140f9a20119a9ec8fd7460cc4314fbdaff3",
    "ebeb8c82ffaf94435806ff0b686fffd41dd410b5",
    "6dc936f175cc6d12a8eb14d29b87e9238e460383",
};
static const char *const patch_subjects[ES_NPATCHES] = {
    "x86/syscalls: Don't pointlessly reload the system call number",
    "syscalls/x86: Use 'struct pt_regs' based syscall calling convention for 64-bit syscalls",
    "syscalls/x86: Use 'struct pt_regs' based syscall calling for IA32_EMULATION and x32",
    "syscalls/x86: Extend register clearing on syscall entry to lower registers",
};
/* The rest of the series touches no x86 code path of its own (generic
 * Kconfig/header preparation); naming one is an error that says so. */
static const char *const series_ids[] = {
    "dfe64506c01e57159a4c550fe537c13a317ff01b", "1bd21c6c21e848996339508d3ffb106d505256a8",
    "fa697140f9a20119a9ec8fd7460cc4314fbdaff3", "7303e30ec1d8fb5ca1f07c92d069241c32b2ee1b",
    "ebeb8c82ffaf94435806ff0b686fffd41dd410b5", "f8781c4a226319fe60e652118b90cf094ccfe747",
    "6dc936f175cc6d12a8eb14d29b87e9238e460383",
};
static const unsigned series_bits[] = {
    ES_PATCH_DFE64506, 0, ES_PATCH_FA697140, 0, ES_PATCH_EBEB8C82, 0, ES_PATCH_6DC936F,
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

const char *es_patch_id(int i)
{
    return i >= 0 && i < ES_NPATCHES ? patch_ids[i] : NULL;
}

const char *es_patch_subject(int i)
{
    return i >= 0 && i < ES_NPATCHES ? patch_subjects[i] : NULL;
}

/* The id table es_patches_parse_ids matches items against. */
typedef struct id_table {
    const char *const *ids;
    const unsigned *bits;
    size_t n;
    unsigned mask; /* the bits named so far */
} id_table;

/* The toggles of the table ("dfe64506c01e, fa697140f9a2, ..."), for the
 * errors that list them. */
static void toggles(const id_table *t, char *buf, size_t size)
{
    es_list_join(buf, size, t->ids, t->bits, t->n, 12);
}

/* One commit-id prefix: adds its bit to t->mask, or -1 and the reason. */
static int patch_item(void *ctx, const char *s, size_t len, char *err, size_t errlen)
{
    id_table *t = ctx;
    char item[64], known[128];
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
        toggles(t, known, sizeof known);
        errf(err, errlen, "patch '%s' is not in the series (%s)", item, known);
        return -1;
    }
    if (nhits > 1) {
        errf(err, errlen, "patch '%s' is ambiguous: it names %zu commits", item, nhits);
        return -1;
    }
    if (!t->bits[hit]) {
        toggles(t, known, sizeof known);
        errf(err, errlen,
             "commit %.12s is in the series but is no toggle (no x86 code path of its own); "
             "the toggles are %s",
             t->ids[hit], known);
        return -1;
    }
    t->mask |= t->bits[hit];
    return 0;
}

int es_patches_parse_ids(const char *list, const char *const ids[], const unsigned bits[],
                         size_t n, unsigned *out, char *err, size_t errlen)
{
    /* "" alone is the empty set; an empty item inside a list is a typo */
    id_table t = {ids, bits, n, 0};
    if (es_list_walk(list, "patch", patch_item, &t, err, errlen))
        return -1;
    *out = t.mask;
    return 0;
}

int es_patches_parse(const char *list, unsigned *out, char *err, size_t errlen)
{
    return es_patches_parse_ids(list, series_ids, series_bits,
                                sizeof series_ids / sizeof series_ids[0], out, err, errlen);
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
            k += (size_t)snprintf(buf + k, n - k, "+%.8s", patch_ids[i]);
}
