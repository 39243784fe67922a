/* alternatives.c - Linux's apply_alternatives() for the guest kernel image
 * (see alternatives.h): each .altinstructions site gets its replacement or
 * its original code, by the features a mitigation set puts in force. */
#include "alternatives.h"

#include <stdlib.h>
#include <string.h>

#include "es_boot.h"
#include "fault.h"
#include "guest_cpuid.h"
#include "kernel_int.h"
#include "kmem.h"
#include "ksyms.h"
#include "mitigations.h"

/* Intel's recommended multi-byte NOPs, 1 to 9 bytes (SDM Vol. 2B, NOP,
 * Table 4-12); AMD recommends the same forms.  Row n-1 is n bytes long. */
static const uint8_t long_nops[9][9] = {
    {0x90},
    {0x66, 0x90},
    {0x0f, 0x1f, 0x00},
    {0x0f, 0x1f, 0x40, 0x00},
    {0x0f, 0x1f, 0x44, 0x00, 0x00},
    {0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00},
    {0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00},
    {0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00},
    {0x66, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00},
};

/* n bytes of NOPs, as few instructions as possible (Linux's add_nops). */
static void fill_nops(uint8_t *p, size_t n)
{
    while (n) {
        size_t k = n > 9 ? 9 : n;
        memcpy(p, long_nops[k - 1], k);
        p += k;
        n -= k;
    }
}

typedef struct alt_rec {
    uint64_t site, repl;
    unsigned feature, sitelen, padlen, repllen;
} alt_rec;

/* Record i of .altinstructions, checked: site and replacement inside the
 * image, the replacement no longer than the site, a known feature. */
static int read_alt(es_machine *m, const struct es_kernel *k, uint64_t i, alt_rec *r)
{
    uint8_t b[ES_ALT_RECORD_SIZE];
    uint64_t at = k->alt_lo + i * ES_ALT_RECORD_SIZE;
    if (es_kernel_read(m, at, b, sizeof b))
        return es_fail_msg(m, "kernel image: alternative record %llu is not mapped",
                    (unsigned long long)i);
    r->site = at + (uint64_t)(int64_t)(int32_t)kimg_rd(b, 4);
    r->repl = at + 4 + (uint64_t)(int64_t)(int32_t)kimg_rd(b + 4, 4);
    r->feature = (unsigned)kimg_rd(b + 8, 2);
    r->sitelen = b[10];
    r->padlen = b[11];
    r->repllen = b[12];
    if (r->feature == 0 || r->feature >= ES_ALT_NFEATURES)
        return es_fail_msg(m, "kernel image: alternative record %llu has unknown feature %u",
                    (unsigned long long)i, r->feature);
    if (r->repllen > r->sitelen || r->padlen > r->sitelen)
        return es_fail_msg(m, "kernel image: alternative record %llu: replacement (%u bytes) or "
                       "padding (%u) longer than the site (%u)",
                    (unsigned long long)i, r->repllen, r->padlen, r->sitelen);
    if (r->site < k->lo || r->site + r->sitelen > k->hi || r->repl < k->lo ||
        r->repl + r->repllen > k->hi)
        return es_fail_msg(m, "kernel image: alternative record %llu points outside the image",
                    (unsigned long long)i);
    return 0;
}

/* Finds the records (symbols __alt_instructions/_end; an image without
 * them has no sites) and keeps each site's loaded bytes, so a later set
 * can be applied from the original code. */
int es_alt_read(es_machine *m, struct es_kernel *k)
{
    uint64_t lo = es_kernel_sym(m, "__alt_instructions");
    uint64_t hi = es_kernel_sym(m, "__alt_instructions_end");
    k->nalt = 0;
    if (!lo && !hi)
        return 0;
    if (!lo || hi < lo || (hi - lo) % ES_ALT_RECORD_SIZE)
        return es_fail_msg(m, "kernel image: .altinstructions is not a whole number of %d-byte records",
                    ES_ALT_RECORD_SIZE);
    k->alt_lo = lo;
    k->nalt = (hi - lo) / ES_ALT_RECORD_SIZE;
    size_t total = 0;
    for (uint64_t i = 0; i < k->nalt; i++) {
        alt_rec r;
        if (read_alt(m, k, i, &r))
            return -1;
        total += r.sitelen;
    }
    k->alt_orig = malloc(total ? total : 1);
    if (!k->alt_orig)
        return es_fail_msg(m, "out of host memory");
    size_t off = 0;
    for (uint64_t i = 0; i < k->nalt; i++) {
        alt_rec r;
        if (read_alt(m, k, i, &r) || es_kernel_read(m, r.site, k->alt_orig + off, r.sitelen))
            return es_fail_msg(m, "kernel image: alternative site %llu is not mapped",
                        (unsigned long long)i);
        off += r.sitelen;
    }
    return 0;
}

/* The ES_ALT_* features in force for a mitigation set. */
static unsigned alt_features(const es_machine *m, unsigned mit)
{
    unsigned f = 0;
    if (mit & ES_MIT_PTI) {
        f |= 1u << ES_ALT_PTI;
        if (es_cpu_has_pcid(m))
            f |= 1u << ES_ALT_PCID;
    }
    if (mit & ES_MIT_RETPOLINE)
        f |= 1u << ES_ALT_RETPOLINE;
    if (mit & ES_MIT_IBRS)
        f |= 1u << ES_ALT_IBRS;
    if (!(mit & ES_MIT_NOSPEC))
        f |= 1u << ES_ALT_NO_NOSPEC;
    return f;
}

/* apply_alternatives(): every site gets either its replacement plus NOPs
 * (feature in force) or its original code with the assembler's 0x90
 * padding turned into long NOPs. */
int es_alt_apply(es_machine *m, struct es_kernel *k, unsigned mit)
{
    unsigned feats = alt_features(m, mit);
    size_t off = 0;
    for (uint64_t i = 0; i < k->nalt; i++) {
        alt_rec r;
        uint8_t buf[256];
        if (read_alt(m, k, i, &r))
            return -1;
        if (feats & (1u << r.feature)) {
            if (es_kernel_read(m, r.repl, buf, r.repllen))
                return es_fail_msg(m, "kernel image: alternative replacement %llu is not mapped",
                            (unsigned long long)i);
            fill_nops(buf + r.repllen, r.sitelen - r.repllen);
        } else {
            memcpy(buf, k->alt_orig + off, r.sitelen);
            fill_nops(buf + r.sitelen - r.padlen, r.padlen);
        }
        if (es_kernel_write(m, r.site, buf, r.sitelen))
            return es_fail_msg(m, "kernel image: alternative site %llu is not mapped",
                        (unsigned long long)i);
        off += r.sitelen;
    }
    return 0;
}
