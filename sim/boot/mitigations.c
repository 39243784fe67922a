/* mitigations.c - the --mitigations list (parsing and naming) and
 * choosing a set for the loaded image: PTI's page-table pair (pti.c) and
 * the alternatives patching (alternatives.c). */
#include "mitigations.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "alternatives.h"
#include "fault.h"
#include "kernel_int.h"
#include "list.h"
#include "pti.h"

/* In ES_MIT_* bit order; es_mitigations_name prints them in this order. */
static const char *const mit_names[] = {"pti", "retpoline", "ibrs", "nospec"};
#define NMIT (sizeof mit_names / sizeof mit_names[0])

/* One item, without surrounding blanks: 0 and the updated set, or -1. */
static int apply_item(const char *s, size_t len, unsigned *mask)
{
    if (len == 4 && !memcmp(s, "none", 4)) {
        *mask = 0;
        return 0;
    }
    if (len == 3 && !memcmp(s, "all", 3)) {
        *mask = ES_MIT_ALL;
        return 0;
    }
    bool off = len > 3 && !memcmp(s, "no-", 3);
    if (off) {
        s += 3;
        len -= 3;
    }
    for (size_t i = 0; i < NMIT; i++)
        if (strlen(mit_names[i]) == len && !memcmp(mit_names[i], s, len)) {
            if (off)
                *mask &= ~(1u << i);
            else
                *mask |= 1u << i;
            return 0;
        }
    return -1;
}

/* es_mitigations_parse's state: the set so far and, for errors, the list. */
typedef struct mit_walk {
    unsigned mask;
    const char *list;
} mit_walk;

/* One list item: applies it to the set, or -1 and the reason, which names
 * the known mitigations from mit_names. */
static int mit_item(void *ctx, const char *s, size_t len, char *err, size_t errlen)
{
    mit_walk *w = ctx;
    if (!apply_item(s, len, &w->mask))
        return 0;
    if (err && errlen) {
        char known[64];
        es_list_join(known, sizeof known, mit_names, NULL, NMIT, 0);
        snprintf(err, errlen,
                 "unknown mitigation '%.*s' in mitigation list '%s' (known: %s, each also as "
                 "no-NAME; none; all)",
                 (int)len, s, w->list, known);
    }
    return -1;
}

int es_mitigations_parse(const char *list, unsigned *out, char *err, size_t errlen)
{
    /* "" (or only blanks) is the default set; an empty item inside a list
     * ("pti,,retpoline", "pti,", ",pti") is a typo and an error */
    mit_walk w = {ES_MIT_DEFAULT, list ? list : ""};
    if (es_list_walk(list, "mitigation", mit_item, &w, err, errlen))
        return -1;
    *out = w.mask;
    return 0;
}

void es_mitigations_name(unsigned mit, char *buf, size_t n)
{
    if (!buf || !n)
        return;
    buf[0] = 0;
    size_t k = 0;
    for (size_t i = 0; i < NMIT; i++)
        if (mit & (1u << i)) {
            int w = snprintf(buf + k, n - k, "%s%s", k ? "," : "", mit_names[i]);
            if (w < 0 || (size_t)w >= n - k)
                return; /* truncated, still NUL-terminated */
            k += (size_t)w;
        }
    if (k == 0)
        snprintf(buf, n, "none");
}

int es_kernel_set_mitigations(es_machine *m, unsigned mit)
{
    struct es_kernel *k = m->kernel;
    if (!k)
        return es_fail_msg(m, "no guest kernel loaded");
    if (mit & ~ES_MIT_ALL)
        return es_fail_msg(m, "unknown mitigation bits 0x%x", mit & ~ES_MIT_ALL);
    if (m->has_kernel)
        return es_fail_msg(m, "mitigations must be chosen before the kernel boots");
    if (k->pti_pgd && !(mit & ES_MIT_PTI))
        return es_fail_msg(m, "pti cannot be turned off once the page tables are split");
    if ((mit & ES_MIT_PTI) && es_pti_setup(m, k))
        return -1;
    if (es_alt_apply(m, k, mit))
        return -1;
    k->mit = mit;
    return 0;
}

unsigned es_kernel_mitigations(const es_machine *m)
{
    return m->kernel ? m->kernel->mit : 0;
}
