/* kernel.c - the guest kernel image in a machine: the series' patch
 * toggles, loading the embedded ELF image into the high half, its symbols,
 * and the hand-over to the kernel's startup code (kernel_model/include/
 * es_boot.h).
 *
 * The image is a kernel the simulator knows nothing about beyond its ELF
 * headers and a few symbols: every header field is checked against the
 * image size before use, so a malformed image gets a one-line reason in
 * m->message, never a host crash.
 */
#include "es_boot.h"
#include "kernel.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault.h"
#include "guest_cpuid.h"
#include "host.h" /* ES_ABI_* */
#include "mem.h"
#include "mitigations.h"
#include "seg.h"
#include "vm.h"

#define PAGE 4096ull
#define PAGE_START(x) ((x) & ~(PAGE - 1))
#define PAGE_ALIGN(x) (((x) + PAGE - 1) & ~(PAGE - 1))

/* The kernel half of the address space; the image must lie in it and
 * below the vsyscall page. */
#define KERNEL_LO 0xffff800000000000ull
#define MAX_IMAGE_SPAN (32ull << 20) /* the real image is ~100 KiB */
#define MAX_PHNUM 64

/* Selectors of Linux's GDT (arch/x86/include/asm/segment.h). */
#define KERNEL_CS 0x10
#define KERNEL_DS 0x18

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

typedef struct ksym {
    uint64_t addr, size;
    uint32_t name; /* offset into names */
    uint8_t global, sized;
} ksym;

struct es_kernel {
    unsigned patches;
    int abi; /* -1: infer at boot */
    uint64_t lo, hi; /* span of the image's PT_LOAD segments */
    char *names;
    size_t names_len;
    ksym *syms; /* by address; at one address the preferred first */
    size_t nsyms;
    uint32_t *by_name; /* indices into syms, by name, globals first */
    uint64_t vdso32;
    /* mitigations (es_kernel_set_mitigations) */
    unsigned mit;
    uint64_t alt_lo, nalt;  /* the .altinstructions records */
    uint8_t *alt_orig;      /* each site's bytes as loaded, concatenated */
    uint64_t pti_pgd;       /* kernel PGD of the pti pair (user = +4 KiB), 0 = none */
};

/* ---- the series as toggles ---- */

const char *es_patch_id(int i)
{
    return i >= 0 && i < ES_NPATCHES ? patch_ids[i] : NULL;
}

const char *es_patch_subject(int i)
{
    return i >= 0 && i < ES_NPATCHES ? patch_subjects[i] : NULL;
}

static void errf(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

int es_list_next(const char *list, const char **pos, const char **item, size_t *len)
{
    const char *p = *pos;
    if (!p)
        return 0; /* past the last item */
    const char *s = p;
    while (*s == ' ' || *s == '\t')
        s++;
    const char *e = s;
    while (*e && *e != ',')
        e++;
    const char *t = e;
    while (t > s && (t[-1] == ' ' || t[-1] == '\t'))
        t--;
    *item = s;
    *len = (size_t)(t - s);
    *pos = *e ? e + 1 : NULL;
    if (*len)
        return 1;
    return *e == 0 && p == list ? 0 : -1; /* a blank list has no items */
}

int es_patches_parse_ids(const char *list, const char *const ids[], const unsigned bits[],
                         size_t n, unsigned *out, char *err, size_t errlen)
{
    unsigned mask = 0;
    if (!list)
        list = "";
    const char *p = list, *s;
    size_t len;
    int more;
    /* "" alone is the empty set; an empty item inside a list is a typo */
    while ((more = es_list_next(list, &p, &s, &len)) != 0) {
        if (more < 0) {
            errf(err, errlen, "empty item in patch list '%s'", list);
            return -1;
        }
        char item[64];
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
            errf(err, errlen, "patch '%s' is too short: name it by at least 7 hex digits",
                 item);
            return -1;
        }
        size_t hit = n, nhits = 0;
        for (size_t k = 0; k < n; k++)
            if (strlen(ids[k]) >= len && strncmp(ids[k], item, len) == 0) {
                if (nhits == 0)
                    hit = k;
                nhits++;
            }
        if (nhits == 0) {
            errf(err, errlen,
                 "patch '%s' is not in the series (dfe64506c01e, fa697140f9a2, "
                 "ebeb8c82ffaf, 6dc936f175cc)",
                 item);
            return -1;
        }
        if (nhits > 1) {
            errf(err, errlen, "patch '%s' is ambiguous: it names %zu commits", item, nhits);
            return -1;
        }
        if (!bits[hit]) {
            errf(err, errlen,
                 "commit %.12s is in the series but is no toggle (no x86 code path of its own); "
                 "the toggles are dfe64506c01e, "
                 "fa697140f9a2, ebeb8c82ffaf, 6dc936f175cc",
                 ids[hit]);
            return -1;
        }
        mask |= bits[hit];
    }
    *out = mask;
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

/* ---- the embedded images (generated by cmake/embed_kernel.cmake) ---- */

/* 16 pairs {offset from the table, size}; size 0 = not built. */
extern const uint64_t es_kernel_image_table[];

const uint8_t *es_kernel_image(unsigned patches, size_t *size)
{
    if (patches > ES_CONV_V417) {
        *size = 0;
        return NULL;
    }
    uint64_t off = es_kernel_image_table[2 * patches], sz = es_kernel_image_table[2 * patches + 1];
    *size = (size_t)sz;
    return sz ? (const uint8_t *)es_kernel_image_table + off : NULL;
}

/* ---- kernel memory, through the page tables ---- */

/* Host pointer to the byte at va in the current tables (4 KiB, 2 MiB and
 * 1 GiB leaves), no permission checks, no A/D updates; NULL if unmapped. */
static uint8_t *kptr_pa(es_machine *m, uint64_t va, uint64_t *pa_out)
{
    /* under pti the kernel's view: the user PGD lacks most of the kernel
     * half, and the CPU may be in user mode on it */
    uint64_t root = m->kernel && m->kernel->pti_pgd ? m->kernel->pti_pgd : m->cr3;
    if (!root)
        return NULL;
    uint64_t table = root & ES_PTE_ADDR;
    for (int level = 3; level >= 0; level--) {
        uint64_t *t = (uint64_t *)es_phys(m, table);
        if (!t)
            return NULL;
        uint64_t e = t[(va >> (12 + 9 * level)) & 511];
        if (!(e & ES_PTE_P))
            return NULL;
        if (level == 0 || ((level == 1 || level == 2) && (e & ES_PTE_PS))) {
            uint64_t span = 1ull << (12 + 9 * level);
            uint64_t pa = (e & ES_PTE_ADDR & ~(span - 1)) | (va & (span - 1));
            if (pa_out)
                *pa_out = pa;
            return es_phys(m, pa);
        }
        table = e & ES_PTE_ADDR;
    }
    return NULL;
}

/* Copies n bytes between host memory and kernel virtual addresses, page by
 * page; a write bumps the code generation of pages holding decoded code
 * (written behind the CPU's back, their decodes are stale). */
static int kcopy(es_machine *m, uint64_t va, uint8_t *host, size_t n, bool write)
{
    while (n) {
        uint64_t pa = 0;
        uint8_t *p = kptr_pa(m, va, &pa);
        if (!p)
            return -1;
        if (write && (pa >> 12) < m->nframes && m->frames[pa >> 12].has_code)
            m->frames[pa >> 12].code_gen++;
        size_t chunk = PAGE - (va & (PAGE - 1));
        if (chunk > n)
            chunk = n;
        if (write)
            memcpy(p, host, chunk);
        else
            memcpy(host, p, chunk);
        host += chunk;
        va += chunk;
        n -= chunk;
    }
    return 0;
}

int es_kernel_read(es_machine *m, uint64_t va, void *dst, size_t n)
{
    return kcopy(m, va, dst, n, false);
}

static int kwrite(es_machine *m, uint64_t va, const void *src, size_t n)
{
    return kcopy(m, va, (uint8_t *)src, n, true);
}

int es_kernel_write(es_machine *m, uint64_t va, const void *src, size_t n)
{
    return kwrite(m, va, src, n);
}

/* ---- ELF parsing ---- */

static uint64_t rd(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

typedef struct kphdr {
    uint32_t type, flags;
    uint64_t offset, vaddr, filesz, memsz;
} kphdr;

#define PT_LOAD 1
#define PF_X 1
#define PF_W 2
#define SHT_SYMTAB 2
#define SHN_UNDEF 0
#define SHN_LORESERVE 0xff00
#define STT_NOTYPE 0
#define STT_OBJECT 1
#define STT_FUNC 2
#define STB_LOCAL 0

static int cmp_addr(const void *a, const void *b)
{
    const ksym *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    /* at one address: sized before labels, globals before locals */
    if (x->sized != y->sized)
        return x->sized ? -1 : 1;
    if (x->global != y->global)
        return x->global ? -1 : 1;
    return x->name < y->name ? -1 : x->name > y->name;
}

/* qsort has no context argument in C17: the name comparison goes through
 * a small array of {name pointer, index, global}. */
typedef struct nameref {
    const char *name;
    uint32_t idx;
    uint8_t global;
} nameref;

static int cmp_name(const void *a, const void *b)
{
    const nameref *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c)
        return c;
    if (x->global != y->global)
        return x->global ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Reads .symtab and its string table.  A missing symbol table is an error:
 * the simulator finds startup_64 and es_boot_info through it. */
static int read_symbols(es_machine *m, struct es_kernel *k, const uint8_t *data, size_t size)
{
    uint64_t shoff = rd(data + 40, 8);
    uint16_t shentsize = (uint16_t)rd(data + 58, 2), shnum = (uint16_t)rd(data + 60, 2);
    if (!shoff || !shnum)
        return es_fail_msg(m, "kernel image has no section headers (stripped?)");
    if (shentsize != 64)
        return es_fail_msg(m, "kernel image: section header size %u, expected 64", shentsize);
    if (shoff > size || (uint64_t)shnum * 64 > size - shoff)
        return es_fail_msg(m, "kernel image: section headers extend past the end (truncated?)");
    const uint8_t *sym_sh = NULL;
    for (unsigned i = 0; i < shnum; i++) {
        const uint8_t *sh = data + shoff + (uint64_t)i * 64;
        if (rd(sh + 4, 4) == SHT_SYMTAB) {
            sym_sh = sh;
            break;
        }
    }
    if (!sym_sh)
        return es_fail_msg(m, "kernel image has no symbol table (stripped?)");
    uint64_t symoff = rd(sym_sh + 24, 8), symsize = rd(sym_sh + 32, 8);
    uint32_t link = (uint32_t)rd(sym_sh + 40, 4);
    uint64_t entsize = rd(sym_sh + 56, 8);
    if (entsize != 24)
        return es_fail_msg(m, "kernel image: symbol entry size %llu, expected 24",
                    (unsigned long long)entsize);
    if (symoff > size || symsize > size - symoff)
        return es_fail_msg(m, "kernel image: symbol table extends past the end (truncated?)");
    if (link == 0 || link >= shnum)
        return es_fail_msg(m, "kernel image: symbol table links to no string table");
    const uint8_t *str_sh = data + shoff + (uint64_t)link * 64;
    uint64_t stroff = rd(str_sh + 24, 8), strsize = rd(str_sh + 32, 8);
    if (stroff > size || strsize > size - stroff)
        return es_fail_msg(m, "kernel image: string table extends past the end (truncated?)");
    if (strsize == 0 || data[stroff + strsize - 1] != 0)
        return es_fail_msg(m, "kernel image: string table is not NUL-terminated");
    if (strsize > 0xffffffffull)
        return es_fail_msg(m, "kernel image: string table too large");

    k->names = malloc((size_t)strsize);
    uint64_t count = symsize / 24;
    k->syms = calloc(count ? (size_t)count : 1, sizeof *k->syms);
    if (!k->names || !k->syms)
        return es_fail_msg(m, "out of host memory reading kernel symbols");
    memcpy(k->names, data + stroff, (size_t)strsize);
    k->names_len = (size_t)strsize;
    size_t n = 0;
    for (uint64_t i = 1; i < count; i++) { /* entry 0 is the null symbol */
        const uint8_t *s = data + symoff + i * 24;
        uint32_t name = (uint32_t)rd(s, 4);
        uint8_t info = s[4];
        uint16_t shndx = (uint16_t)rd(s + 6, 2);
        uint64_t value = rd(s + 8, 8), sz = rd(s + 16, 8);
        int type = info & 0xf;
        if (name == 0 || name >= strsize || shndx == SHN_UNDEF || shndx >= SHN_LORESERVE)
            continue;
        if (type != STT_NOTYPE && type != STT_OBJECT && type != STT_FUNC)
            continue; /* sections, files, TLS */
        if (value < k->lo || value >= k->hi)
            continue; /* not in the loaded image */
        ksym *y = &k->syms[n++];
        y->addr = value;
        y->size = sz;
        y->name = name;
        y->global = (info >> 4) != STB_LOCAL;
        y->sized = sz != 0;
    }
    k->nsyms = n;
    qsort(k->syms, n, sizeof *k->syms, cmp_addr);
    nameref *refs = malloc((n ? n : 1) * sizeof *refs);
    k->by_name = malloc((n ? n : 1) * sizeof *k->by_name);
    if (!refs || !k->by_name) {
        free(refs);
        return es_fail_msg(m, "out of host memory reading kernel symbols");
    }
    for (size_t i = 0; i < n; i++)
        refs[i] = (nameref){k->names + k->syms[i].name, (uint32_t)i, k->syms[i].global};
    qsort(refs, n, sizeof *refs, cmp_name);
    for (size_t i = 0; i < n; i++)
        k->by_name[i] = refs[i].idx;
    free(refs);
    return 0;
}

/* Makes room for `extra` more frames beyond the user's memory cap: the
 * kernel's pages are the machine's, not the process's, so --mem-cap keeps
 * meaning what it meant without a kernel. */
static int grow_frames(es_machine *m, uint64_t extra)
{
    es_frame *f = realloc(m->frames, (size_t)(m->nframes + extra) * sizeof *f);
    if (!f)
        return -1;
    memset(f + m->nframes, 0, (size_t)extra * sizeof *f);
    m->frames = f;
    m->nframes += extra;
    m->fetch_va = 1; /* fetch_frame pointed into the old array */
    m->fetch_frame = NULL;
    return 0;
}

/* Maps one page of the image at va (supervisor; `w`, `x` as the segment
 * says, or-ed with what an earlier segment sharing the page needed). */
static int map_kernel_page(es_machine *m, uint64_t va, bool w, bool x, uint64_t user)
{
    uint64_t *pte = es_pte(m, m->cr3, va, true);
    if (!pte)
        return -1;
    uint64_t nx = (m->efer & (1ull << 11)) ? ES_PTE_NX : 0; /* EFER.NXE */
    if (*pte & ES_PTE_P) {
        /* shared with an earlier segment: the union of the rights */
        uint64_t e = *pte;
        if (w)
            e |= ES_PTE_W;
        if (x)
            e &= ~ES_PTE_NX;
        *pte = e;
        return 0;
    }
    uint64_t pfn = es_frame_alloc(m);
    if (!pfn)
        return -1;
    *pte = (pfn << 12) | ES_PTE_P | ES_PTE_A | ES_PTE_D | user | (w ? ES_PTE_W : 0) |
           (x ? 0 : nx);
    return 0;
}

/* ---- alternatives (kernel_model/include/alternative.h, es_boot.h) ---- */

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
    r->site = at + (uint64_t)(int64_t)(int32_t)rd(b, 4);
    r->repl = at + 4 + (uint64_t)(int64_t)(int32_t)rd(b + 4, 4);
    r->feature = (unsigned)rd(b + 8, 2);
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
static int read_alternatives(es_machine *m, struct es_kernel *k)
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
static int apply_alternatives(es_machine *m, struct es_kernel *k, unsigned mit)
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
        if (kwrite(m, r.site, buf, r.sitelen))
            return es_fail_msg(m, "kernel image: alternative site %llu is not mapped",
                        (unsigned long long)i);
        off += r.sitelen;
    }
    return 0;
}

static int load_image(es_machine *m, const uint8_t *data, size_t size, unsigned patches)
{
    if (!data || size < 64)
        return es_fail_msg(m, "kernel image too small to be an ELF file (%zu bytes)", size);
    if (memcmp(data, "\177ELF", 4) != 0)
        return es_fail_msg(m, "kernel image is not an ELF file");
    if (data[4] != 2 || data[5] != 1)
        return es_fail_msg(m, "kernel image is not a little-endian ELF64 file");
    if (rd(data + 16, 2) != 2 /* ET_EXEC */)
        return es_fail_msg(m, "kernel image is not an executable (ET_EXEC)");
    if (rd(data + 18, 2) != 62 /* EM_X86_64 */)
        return es_fail_msg(m, "kernel image is not for x86-64");
    uint64_t phoff = rd(data + 32, 8);
    uint16_t phentsize = (uint16_t)rd(data + 54, 2), phnum = (uint16_t)rd(data + 56, 2);
    if (phentsize != 56)
        return es_fail_msg(m, "kernel image: program header size %u, expected 56", phentsize);
    if (phnum == 0 || phnum > MAX_PHNUM)
        return es_fail_msg(m, "kernel image: %u program headers", phnum);
    if (phoff > size || (uint64_t)phnum * 56 > size - phoff)
        return es_fail_msg(m, "kernel image: program headers extend past the end (truncated?)");

    kphdr ph[MAX_PHNUM];
    uint64_t lo = ~0ull, hi = 0, pages = 0;
    unsigned nload = 0;
    for (unsigned i = 0; i < phnum; i++) {
        const uint8_t *p = data + phoff + (uint64_t)i * 56;
        kphdr *h = &ph[i];
        h->type = (uint32_t)rd(p, 4);
        h->flags = (uint32_t)rd(p + 4, 4);
        h->offset = rd(p + 8, 8);
        h->vaddr = rd(p + 16, 8);
        h->filesz = rd(p + 32, 8);
        h->memsz = rd(p + 40, 8);
        if (h->type != PT_LOAD || h->memsz == 0)
            continue;
        if (h->filesz > h->memsz)
            return es_fail_msg(m, "kernel image: segment %u: file size exceeds memory size", i);
        if (h->offset > size || h->filesz > size - h->offset)
            return es_fail_msg(m, "kernel image: segment %u extends past the end (truncated?)", i);
        if (h->vaddr < KERNEL_LO || h->memsz > MAX_IMAGE_SPAN ||
            h->vaddr + h->memsz > ES_VSYSCALL_ADDR || h->vaddr + h->memsz < h->vaddr)
            return es_fail_msg(m, "kernel image: segment %u at 0x%llx is outside the kernel half", i,
                        (unsigned long long)h->vaddr);
        if (h->vaddr < lo)
            lo = h->vaddr;
        if (h->vaddr + h->memsz > hi)
            hi = h->vaddr + h->memsz;
        pages += (PAGE_ALIGN(h->vaddr + h->memsz) - PAGE_START(h->vaddr)) / PAGE;
        nload++;
    }
    if (!nload)
        return es_fail_msg(m, "kernel image has no loadable segments");
    if (hi - lo > MAX_IMAGE_SPAN)
        return es_fail_msg(m, "kernel image spans %llu MiB", (unsigned long long)((hi - lo) >> 20));

    es_kernel_free(m);
    struct es_kernel *k = calloc(1, sizeof *k);
    if (!k)
        return es_fail_msg(m, "out of host memory");
    k->abi = -1;
    k->lo = lo;
    k->hi = hi;
    m->kernel = k;
    m->hooks.free_kernel = es_kernel_free;
    if (read_symbols(m, k, data, size))
        goto bad;

    /* the kernel's frames: segments, page tables (one per 2 MiB plus the
     * upper levels), the vsyscall page and its tables, the vDSO page */
    uint64_t extra = pages + pages / 512 + 16;
    if (grow_frames(m, extra)) {
        es_fail_msg(m, "out of host memory");
        goto bad;
    }
    uint64_t cap = m->mem_cap, used = m->frames_used;
    m->mem_cap = (m->frames_used + extra) * PAGE;
    int rc = 0;
    if (!m->cr3) {
        m->cr3 = es_new_pml4(m);
        if (!m->cr3)
            rc = es_fail_msg(m, "out of guest memory for the kernel's page tables");
    }
    for (unsigned i = 0; i < phnum && !rc; i++) {
        const kphdr *h = &ph[i];
        if (h->type != PT_LOAD || h->memsz == 0)
            continue;
        bool w = (h->flags & PF_W) != 0, x = (h->flags & PF_X) != 0;
        for (uint64_t va = PAGE_START(h->vaddr); va < h->vaddr + h->memsz && !rc; va += PAGE)
            if (map_kernel_page(m, va, w, x, 0))
                rc = es_fail_msg(m, "out of guest memory mapping the kernel at 0x%llx",
                          (unsigned long long)va);
        /* file bytes; the rest of the segment (.bss) stays as the fresh
         * zeroed frames left it */
        if (!rc && h->filesz && kwrite(m, h->vaddr, data + h->offset, (size_t)h->filesz))
            rc = es_fail_msg(m, "cannot copy kernel segment %u", i);
    }
    /* the vsyscall page: a user-readable, never executable copy, so a call
     * into it faults and the kernel emulates it (vsyscall=emulate) */
    uint64_t vs, vs_size;
    if (!rc && es_kernel_sym_size(m, "vsyscall_page", &vs, &vs_size)) {
        uint8_t buf[PAGE];
        memset(buf, 0xcc, sizeof buf); /* int3 filler, as Linux pads it */
        size_t n = vs_size && vs_size < PAGE ? (size_t)vs_size : (size_t)PAGE;
        if (es_kernel_read(m, vs, buf, n))
            rc = es_fail_msg(m, "kernel image: vsyscall_page is not mapped");
        uint64_t *pte = rc ? NULL : es_pte(m, m->cr3, ES_VSYSCALL_ADDR, true);
        uint64_t pfn = 0;
        if (pte && (*pte & ES_PTE_P))
            pfn = (*pte & ES_PTE_ADDR) >> 12; /* reloaded: reuse the frame */
        else if (pte)
            pfn = es_frame_alloc(m);
        if (!rc && !pfn)
            rc = es_fail_msg(m, "out of guest memory for the vsyscall page");
        if (!rc) {
            *pte = (pfn << 12) | ES_PTE_P | ES_PTE_U | ES_PTE_A | ES_PTE_NX;
            memcpy(es_phys(m, pfn << 12), buf, PAGE);
        }
    }
    /* the process's pages alone count against the cap from here on */
    uint64_t kframes = m->frames_used - used;
    m->frames_used = used;
    m->mem_cap = cap;
    es_tlb_flush(m);
    m->fetch_va = 1;
    if (rc)
        goto bad;
    (void)kframes;

    uint64_t bi, bi_size;
    if (!es_kernel_sym(m, "startup_64")) {
        es_fail_msg(m, "kernel image lacks the symbol startup_64");
        goto bad;
    }
    if (!es_kernel_sym_size(m, "es_boot_info", &bi, &bi_size)) {
        es_fail_msg(m, "kernel image lacks the symbol es_boot_info");
        goto bad;
    }
    if (bi_size && bi_size < sizeof(struct es_boot_info)) {
        es_fail_msg(m, "kernel image: es_boot_info is %llu bytes, expected %zu",
             (unsigned long long)bi_size, sizeof(struct es_boot_info));
        goto bad;
    }
    struct es_boot_info info;
    if (es_kernel_read(m, bi, &info, sizeof info)) {
        es_fail_msg(m, "kernel image: es_boot_info is not mapped");
        goto bad;
    }
    if (patches != ~0u && info.patches != patches) {
        char want[64], got[64];
        es_patches_name(patches, want, sizeof want);
        es_patches_name((unsigned)info.patches, got, sizeof got);
        es_fail_msg(m, "kernel image was built for %s (patches 0x%llx), not %s", got,
             (unsigned long long)info.patches, want);
        goto bad;
    }
    k->patches = (unsigned)info.patches & ES_CONV_V417;
    if (read_alternatives(m, k) || apply_alternatives(m, k, ES_MIT_DEFAULT))
        goto bad;
    k->mit = ES_MIT_DEFAULT;
    return 0;
bad:
    es_kernel_free(m);
    return -1;
}

int es_kernel_load_image(es_machine *m, const uint8_t *data, size_t size, unsigned patches)
{
    return load_image(m, data, size, patches);
}

int es_kernel_load(es_machine *m, unsigned patches)
{
    if (patches > ES_CONV_V417)
        return es_fail_msg(m, "no such patch set 0x%x", patches);
    size_t size;
    const uint8_t *img = es_kernel_image(patches, &size);
    if (!img) {
        char name[64];
        es_patches_name(patches, name, sizeof name);
        return es_fail_msg(m, "no guest kernel image for %s was built into entrysim "
                       "(kernel_model/ missing from the build?)",
                    name);
    }
    return load_image(m, img, size, patches);
}

static int map_vdso32(es_machine *m, struct es_kernel *k);

int es_kernel_set_abi(es_machine *m, int abi)
{
    if (!m->kernel)
        return 0;
    m->kernel->abi = abi;
    /* mapped now, before es_start_process, so the loader can point
     * AT_SYSINFO at it */
    if (abi == ES_ABI_I386 && !m->kernel->vdso32)
        return map_vdso32(m, m->kernel);
    return 0;
}

unsigned es_kernel_patches(const es_machine *m)
{
    return m->kernel ? m->kernel->patches : 0;
}

uint64_t es_kernel_vdso32(const es_machine *m)
{
    return m->kernel ? m->kernel->vdso32 : 0;
}

/* ---- symbols ---- */

static const ksym *find_name(const es_machine *m, const char *name)
{
    const struct es_kernel *k = m->kernel;
    if (!k || !name)
        return NULL;
    size_t lo = 0, hi = k->nsyms;
    while (lo < hi) { /* first entry >= name: the global one when both exist */
        size_t mid = (lo + hi) / 2;
        if (strcmp(k->names + k->syms[k->by_name[mid]].name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < k->nsyms && strcmp(k->names + k->syms[k->by_name[lo]].name, name) == 0)
        return &k->syms[k->by_name[lo]];
    return NULL;
}

uint64_t es_kernel_sym(const es_machine *m, const char *name)
{
    const ksym *s = find_name(m, name);
    return s ? s->addr : 0;
}

bool es_kernel_sym_size(const es_machine *m, const char *name, uint64_t *addr, uint64_t *size)
{
    const ksym *s = find_name(m, name);
    if (!s)
        return false;
    if (addr)
        *addr = s->addr;
    if (size)
        *size = s->size;
    return true;
}

const char *es_kernel_addr2sym(const es_machine *m, uint64_t addr, uint64_t *off)
{
    const struct es_kernel *k = m->kernel;
    if (!k || addr < k->lo || addr >= k->hi || !k->nsyms)
        return NULL;
    size_t lo = 0, hi = k->nsyms;
    while (lo < hi) { /* first symbol above addr */
        size_t mid = (lo + hi) / 2;
        if (k->syms[mid].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    size_t i = lo - 1;
    while (i > 0 && k->syms[i - 1].addr == k->syms[i].addr)
        i--; /* the preferred symbol of that address */
    if (off)
        *off = addr - k->syms[i].addr;
    return k->names + k->syms[i].name;
}

size_t es_kernel_nsyms(const es_machine *m)
{
    return m->kernel ? m->kernel->nsyms : 0;
}

const char *es_kernel_sym_at(const es_machine *m, size_t i, uint64_t *addr, uint64_t *size)
{
    const struct es_kernel *k = m->kernel;
    if (!k || i >= k->nsyms)
        return NULL;
    if (addr)
        *addr = k->syms[i].addr;
    if (size)
        *size = k->syms[i].size;
    return k->names + k->syms[i].name;
}

/* ---- the hand-over ---- */

/* A flat segment register from m->gdt (the kernel loads its own GDT in
 * startup_64; until then these are the descriptors the CPU holds). */
static void flat_seg(es_machine *m, int seg, uint16_t sel)
{
    es_segreg *r = &m->seg[seg];
    uint64_t d = m->gdt[sel >> 3];
    r->sel = sel;
    r->base = 0;
    r->attr = (uint16_t)(((d >> 40) & 0xff) | (((d >> 52) & 0xf) << 8));
    r->limit = 0xffffffffu;
}

/* The 32-bit vDSO: one page below 4 GiB, user read+execute, a VMA like
 * Linux's [vdso] (the program may unmap it).  AT_SYSINFO points at its
 * __kernel_vsyscall (sim/loader.c), so i386 libcs enter by SYSENTER on
 * Intel and by 32-bit SYSCALL on AMD, as on Linux. */
static int map_vdso32(es_machine *m, struct es_kernel *k)
{
    /* the kernel has one vDSO per vendor: SYSENTER for Intel, SYSCALL for
     * AMD (es_boot.h), as Linux picks vdso32-sysenter / vdso32-syscall */
    uint64_t src, size;
    if (!(m->vendor == 1 && es_kernel_sym_size(m, "vdso32_image_syscall", &src, &size)) &&
        !es_kernel_sym_size(m, "vdso32_image", &src, &size))
        return 0; /* the image has none: nothing to map */
    uint64_t va = es_vm_find_free(m, PAGE, 0);
    if (!va || va + PAGE > 0x100000000ull)
        return es_fail_msg(m, "no room below 4 GiB for the 32-bit vDSO");
    uint8_t buf[PAGE];
    memset(buf, 0, sizeof buf);
    size_t n = size && size < PAGE ? (size_t)size : (size_t)PAGE;
    if (es_kernel_read(m, src, buf, n))
        return es_fail_msg(m, "kernel image: vdso32_image is not mapped");
    if (es_vm_map(m, va, PAGE, ES_PROT_R | ES_PROT_W) || es_copy_to_guest(m, va, buf, PAGE) ||
        es_vm_protect(m, va, PAGE, ES_PROT_R | ES_PROT_X))
        return es_fail_msg(m, "out of guest memory mapping the 32-bit vDSO");
    k->vdso32 = va;
    return 0;
}

int es_kernel_boot(es_machine *m)
{
    struct es_kernel *k = m->kernel;
    if (!k)
        return es_fail_msg(m, "no guest kernel loaded");
    uint64_t bi = es_kernel_sym(m, "es_boot_info"), start = es_kernel_sym(m, "startup_64");
    struct es_boot_info info;
    if (!bi || !start || es_kernel_read(m, bi, &info, sizeof info))
        return es_fail_msg(m, "guest kernel image lacks es_boot_info or startup_64");
    if ((info.patches & ES_CONV_V417) != k->patches)
        return es_fail_msg(m, "guest kernel's es_boot_info.patches changed since loading");
    if (!info.boot_stack_top || info.boot_stack_top < k->lo || info.boot_stack_top > k->hi ||
        (info.boot_stack_top & 7))
        return es_fail_msg(m, "guest kernel's boot_stack_top 0x%llx is not in the image",
                    (unsigned long long)info.boot_stack_top);

    int abi = k->abi;
    if (abi < 0)
        abi = m->mode != ES_MODE_64 ? ES_ABI_I386 : ES_ABI_X64;
    if (abi == ES_ABI_I386 && !k->vdso32 && map_vdso32(m, k))
        return -1;

    info.magic = ES_BOOT_MAGIC;
    info.user_rip = m->rip;
    info.user_rsp = m->gpr[ES_RSP];
    info.user_cs = m->seg[ES_SEG_CS].sel;
    info.user_ss = m->seg[ES_SEG_SS].sel;
    info.user_rflags = m->rflags;
    info.abi = (unsigned long long)abi;
    info.vendor = m->vendor;
    info.vdso32_base = k->vdso32;
    if (kwrite(m, bi, &info, sizeof info))
        return es_fail_msg(m, "cannot write the guest kernel's es_boot_info");

    /* the CPU as a boot loader leaves it for startup_64: CPL 0, 64-bit
     * code, interrupts off; user DS/ES stay loaded (IRET to CPL 3 keeps
     * DPL-3 data segments, SDM Vol. 3A, 6.14.3 / IRET pseudo-code) */
    memset(m->gpr, 0, sizeof m->gpr);
    m->gpr[ES_RSP] = info.boot_stack_top;
    m->rflags = 0x2;
    flat_seg(m, ES_SEG_CS, KERNEL_CS);
    flat_seg(m, ES_SEG_SS, KERNEL_DS);
    m->has_kernel = true;
    es_set_mode(m, 0, ES_MODE_64);
    m->rip = start;
    m->nrip = start;
    es_tlb_flush(m);
    return 0;
}

/* ---- mitigations (sim/mitigations.h) ---- */

/* Two physically consecutive frames, the first 8 KiB aligned: the PGD
 * pair (Linux allocates it as one order-1 page, PGD_ALLOCATION_ORDER).
 * Frames come one at a time, so take a few until two neighbours turn up
 * and give the rest back. */
static uint64_t alloc_pgd_pair(es_machine *m)
{
    enum { TRIES = 64 };
    uint64_t got[TRIES], pair = 0;
    size_t n = 0;
    while (n < TRIES && !pair) {
        uint64_t pfn = es_frame_alloc(m);
        if (!pfn)
            break;
        got[n++] = pfn;
        for (size_t a = 0; a < n && !pair; a++)
            for (size_t b = 0; b < n && !(got[a] & 1); b++)
                if (got[b] == got[a] + 1)
                    pair = got[a];
    }
    for (size_t a = 0; a < n; a++)
        if (got[a] != pair && got[a] != pair + 1)
            es_frame_free(m, got[a]);
    return pair << 12;
}

/* Maps [lo, hi) of the kernel PGD into the user PGD with the same leaf
 * entries (same frames, same rights). */
static int pti_share(es_machine *m, uint64_t kpgd, uint64_t upgd, uint64_t lo, uint64_t hi,
                     const char *what)
{
    if (!lo || hi < lo)
        return es_fail_msg(m, "kernel image: %s is missing or empty (pti cannot map it)", what);
    for (uint64_t va = PAGE_START(lo); va < hi; va += PAGE) {
        uint64_t *kpte = es_pte(m, kpgd, va, false);
        if (!kpte || !(*kpte & ES_PTE_P))
            return es_fail_msg(m, "kernel image: %s at 0x%llx is not mapped", what,
                        (unsigned long long)va);
        uint64_t e = *kpte;
        uint64_t *upte = es_pte(m, upgd, va, true);
        if (!upte)
            return es_fail_msg(m, "out of guest memory for pti's user page tables");
        *upte = e;
    }
    return 0;
}

/* PTI with PCID: user mappings were changed or removed (sim/vm.c), so the
 * kernel's next switch to the user PGD must flush the user PCID (sets the
 * per-cpu flag SWITCH_TO_USER_CR3 tests, Linux's user_pcid_flush_mask).
 * No-op otherwise. */
static void pti_user_flush(es_machine *m)
{
    const struct es_kernel *k = m->kernel;
    if (!k || !k->pti_pgd || !es_cpu_has_pcid(m))
        return;
    uint64_t pcpu = es_kernel_sym(m, "es_percpu");
    uint64_t one = 1;
    if (pcpu)
        kwrite(m, pcpu + ES_PCPU_USER_PCID_FLUSH, &one, sizeof one);
}

/* PTI: after the simulator adds a user mapping at va (sim/vm.c), copies
 * the PML4 entry of the user half between the two PGDs so both see it
 * (Linux's pti_set_user_pgtbl keeps them equal the same way).  No-op
 * without pti. */
static void pti_sync(es_machine *m, uint64_t va)
{
    const struct es_kernel *k = m->kernel;
    if (!k || !k->pti_pgd || va >= KERNEL_LO)
        return;
    uint64_t *kp = (uint64_t *)es_phys(m, k->pti_pgd);
    uint64_t *up = (uint64_t *)es_phys(m, k->pti_pgd + PAGE);
    unsigned i = (unsigned)((va >> 39) & 511);
    if (!kp || !up || kp[i] == up[i])
        return;
    /* a new PML4 entry appears in whichever PGD was current */
    if (kp[i] & ES_PTE_P)
        up[i] = kp[i];
    else
        kp[i] = up[i];
}

/* Page-table isolation (Linux 4.17 arch/x86/mm/pti.c, our own code): a
 * PGD pair replaces the address space's PGD.  The kernel PGD is the old
 * one; the user PGD shares the user half (PML4 entries 0-255 point to the
 * same lower tables) and maps of the kernel half only what runs before
 * the entry code's CR3 switch or after the switch back: the entry text,
 * the entry data (per-cpu area, GDT, IDT, TSS), the task stack the CPU
 * pushes the interrupt frame on, and the vsyscall page (Linux maps its
 * cpu_entry_area and the vsyscall page the same way).  Any other kernel
 * address is not present in user mode. */
static int pti_setup(es_machine *m, struct es_kernel *k)
{
    if (k->pti_pgd)
        return 0;
    if (!m->cr3)
        return es_fail_msg(m, "no address space to isolate");
    enum { EXTRA = 96 }; /* the pair, its search, a few page tables */
    if (grow_frames(m, EXTRA))
        return es_fail_msg(m, "out of host memory");
    uint64_t cap = m->mem_cap, used = m->frames_used;
    m->mem_cap = (m->frames_used + EXTRA) * PAGE;
    int rc = 0;
    uint64_t pair = alloc_pgd_pair(m);
    if (!pair)
        rc = es_fail_msg(m, "out of guest memory for pti's page-table pair");
    if (!rc) {
        uint64_t *old = (uint64_t *)es_phys(m, m->cr3 & ES_PTE_ADDR);
        uint64_t *kp = (uint64_t *)es_phys(m, pair), *up = (uint64_t *)es_phys(m, pair + PAGE);
        memcpy(kp, old, PAGE);
        memcpy(up, old, PAGE / 2); /* the user half */
        uint64_t task = 0, task_size = 0; /* its top may be the image's end: use the size */
        es_kernel_sym_size(m, "es_task_stack", &task, &task_size);
        rc = pti_share(m, pair, pair + PAGE, es_kernel_sym(m, "__entry_text_start"),
                       es_kernel_sym(m, "__entry_text_end"), "the entry text") ||
             pti_share(m, pair, pair + PAGE, es_kernel_sym(m, "__entry_data_start"),
                       es_kernel_sym(m, "__entry_data_end"), "the entry data") ||
             pti_share(m, pair, pair + PAGE, task, task + task_size, "the task stack") ||
             pti_share(m, pair, pair + PAGE, ES_VSYSCALL_ADDR, ES_VSYSCALL_ADDR + PAGE,
                       "the vsyscall page");
    }
    /* the kernel's frames do not count against the process's cap; the
     * old PGD frame stays allocated (unused) */
    m->frames_used = used;
    m->mem_cap = cap;
    if (rc)
        return -1;
    m->cr3 = pair; /* the kernel PGD, PCID 0: the loader's view until boot */
    k->pti_pgd = pair;
    /* vm.c's mapping changes must now keep the two PGDs in step */
    m->hooks.pti_sync = pti_sync;
    m->hooks.pti_user_flush = pti_user_flush;
    es_tlb_flush(m);
    m->fetch_va = 1;
    return 0;
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
    if ((mit & ES_MIT_PTI) && pti_setup(m, k))
        return -1;
    if (apply_alternatives(m, k, mit))
        return -1;
    k->mit = mit;
    return 0;
}

unsigned es_kernel_mitigations(const es_machine *m)
{
    return m->kernel ? m->kernel->mit : 0;
}

uint64_t es_kernel_pti_pgd(const es_machine *m)
{
    return m->kernel ? m->kernel->pti_pgd : 0;
}

void es_kernel_free(es_machine *m)
{
    struct es_kernel *k = m->kernel;
    if (!k)
        return;
    free(k->names);
    free(k->syms);
    free(k->by_name);
    free(k->alt_orig);
    free(k);
    m->kernel = NULL;
    m->hooks.free_kernel = NULL;
    m->hooks.pti_sync = NULL;
    m->hooks.pti_user_flush = NULL;
}
