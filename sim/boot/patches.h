/* patches.h - Linux 4.17's syscall series: its seven commits in one table,
 * the four x86 commits among them that the guest kernel can be built with,
 * as toggles, and the comma-separated lists that name them (--patches). */
#ifndef ENTRYSIM_PATCHES_H
#define ENTRYSIM_PATCHES_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The four x86 commits of the series as toggles (same values as es_boot.h,
 * which the freestanding kernel build uses). */
#ifndef ES_PATCH_DFE64506
#define ES_PATCH_DFE64506 1u /* dfe64506c01e: nr passed to do_syscall_64 in rdi */
#define ES_PATCH_FA697140 2u /* fa697140f9a2: pt_regs-based stubs for 64-bit syscalls */
#define ES_PATCH_EBEB8C82 4u /* ebeb8c82ffaf: pt_regs-based stubs for ia32 and x32 */
#define ES_PATCH_6DC936F 8u  /* 6dc936f175cc: clear dx, cx / si, dx, cx on entry */
#endif
#define ES_CONV_V416 0u
#define ES_CONV_V417 15u
#define ES_NPATCHES 4

#define ES_SERIES_LEN 7

/* One commit of the series.  bit is its toggle (ES_PATCH_*), or 0 for the
 * three that change no code path of their own (generic preparation, or
 * making an always-on option unconditional); `alone` says so for those. */
typedef struct es_series_commit {
    const char *id;      /* 40 hex digits */
    const char *subject; /* its one-line subject */
    unsigned bit;
    const char *alone;   /* bit 0: why the kernel is the same with it */
} es_series_commit;

/* Commit k (0..ES_SERIES_LEN-1) in the order the series was merged, or NULL. */
const es_series_commit *es_series(int k);

/* Full commit id of patch bit i (0..3) and its one-line subject. */
const char *es_patch_id(int i);
const char *es_patch_subject(int i);

/* Parses a comma-separated list of commit-id prefixes (at least 7 hex
 * digits each, any case, each matching exactly one commit of the series;
 * whitespace around items is ignored; "" means none) into a bitmask of
 * toggles (a commit that is none adds nothing).  Returns 0, or -1 with a
 * one-line reason in err. */
int es_patches_parse(const char *list, unsigned *out, char *err, size_t errlen);

/* The same, also setting bit k of *named for each commit k of the series
 * (es_series) the list names. */
int es_patches_parse_series(const char *list, unsigned *out, unsigned *named, char *err,
                            size_t errlen);

/* One line (no newline) for the commits of `named` that are no toggle:
 * each with why it changes nothing alone, and the kernel `patches` makes
 * ("v4.16+dfe64506"); "" when `named` has none. */
void es_patches_note(unsigned named, unsigned patches, char *buf, size_t n);

/* Same against an arbitrary id table (ids[i] names bit bits[i]; bits 0
 * marks a commit of the series that is not a toggle: accepted, no bit).
 * For tests of the ambiguity rule, which the real ids never trigger. */
int es_patches_parse_ids(const char *list, const char *const ids[], const unsigned bits[],
                         size_t n, unsigned *out, char *err, size_t errlen);

/* Human-readable name of a patch set: "v4.16", "v4.17" or
 * "v4.16+dfe64506+6dc936f1". */
void es_patches_name(unsigned patches, char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif
