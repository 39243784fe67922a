/* dbg_syms.c - symbols and breakpoints: the user program's .symtab (read
 * here from the ELF file: sim/loader.c maps only segments), the guest
 * kernel's symbols (sim/kernel.h), resolving "SYM", "SYM+OFF", "0xADDR"
 * and register names, and the breakpoint table. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dbg_int.h"
#include "host.h"
#include "kernel.h"

/* ---- register names ---- */

static const char *const gpr_names[16] = {"rax", "rcx", "rdx", "rbx", "rsp", "rbp",
                                          "rsi", "rdi", "r8",  "r9",  "r10", "r11",
                                          "r12", "r13", "r14", "r15"};

const char *dbg_gpr_name(int reg) { return gpr_names[reg & 15]; }

/* GPR number (0..15), 16 for rip, -1 otherwise. */
int dbg_reg_by_name(const char *name)
{
    for (int i = 0; i < 16; i++)
        if (!strcmp(name, gpr_names[i]))
            return i;
    return strcmp(name, "rip") ? -1 : 16;
}

/* ---- the user ELF's symbol table ---- */

static uint64_t rd(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static int cmp_sym(const void *a, const void *b)
{
    const dbg_sym *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr ? 1 : (x->size < y->size) - (x->size > y->size);
}

void dbg_syms_free(es_dbg *d)
{
    for (size_t i = 0; i < d->nsyms; i++)
        free(d->syms[i].name);
    free(d->syms);
    d->syms = NULL;
    d->nsyms = 0;
    dbg_src_free(d->ksrc);
    dbg_src_free(d->usrc);
    d->ksrc = d->usrc = NULL;
}

/* The line table of the kernel image the machine runs: a student's tree
 * (--kernel DIR: the image file) or the embedded image. */
static void kernel_lines(es_dbg *d)
{
    if (!d->m || !d->m->has_kernel)
        return;
    unsigned p = es_kernel_patches(d->m);
    const char *dir = d->cfg.launch.kernel_dir;
    if (!dir) {
        size_t size = 0;
        const uint8_t *img = es_kernel_image(p, &size);
        if (img)
            d->ksrc = dbg_src_load(img, size);
        return;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/build/kernel-p%02u.elf", dir, p);
    FILE *f = fopen(path, "rb");
    uint8_t *b = malloc(32u << 20); /* es_kernel_load_dir's bound */
    size_t n = f && b ? fread(b, 1, 32u << 20, f) : 0;
    if (n)
        d->ksrc = dbg_src_load(b, n);
    if (f)
        fclose(f);
    free(b);
}

/* Reads ELF32/ELF64 little-endian section headers, finds SHT_SYMTAB and its
 * string table, keeps named FUNC/OBJECT/NOTYPE symbols with an address.
 * Every offset is bounds-checked: a malformed file gives no symbols, never
 * a crash.  Returns the number of symbols kept (0 for a stripped file). */
int dbg_syms_load(es_dbg *d, const char *path)
{
    dbg_syms_free(d);
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    uint8_t *b = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n == cap) {
            if (cap >= ((size_t)256 << 20))
                break; /* larger than any guest we run: treat as no symbols */
            cap = cap ? cap * 2 : 1 << 16;
            uint8_t *nb = realloc(b, cap);
            if (!nb)
                break;
            b = nb;
        }
        size_t got = fread(b + n, 1, cap - n, f);
        if (!got)
            break;
        n += got;
    }
    fclose(f);
    int kept = 0;
    if (n < 52 || memcmp(b, "\177ELF", 4) || b[5] != 1)
        goto out;
    bool e64 = b[4] == 2;
    unsigned machine = (unsigned)rd(b + 18, 2);
    d->abi = machine == 3 ? ES_ABI_I386 : e64 ? ES_ABI_X64 : ES_ABI_X32;
    uint64_t shoff = e64 ? rd(b + 40, 8) : rd(b + 32, 4);
    unsigned shentsize = (unsigned)(e64 ? rd(b + 58, 2) : rd(b + 46, 2));
    unsigned shnum = (unsigned)(e64 ? rd(b + 60, 2) : rd(b + 48, 2));
    d->elf_entry = e64 ? rd(b + 24, 8) : rd(b + 24, 4);
    d->elf_dyn = rd(b + 16, 2) == 3; /* ET_DYN: static-pie, loaded with a bias */
    if (n < 64 && e64)
        goto out;
    if (shentsize < (e64 ? 64u : 40u) || shoff > n || (uint64_t)shnum * shentsize > n - shoff)
        goto out;
    for (unsigned i = 0; i < shnum; i++) {
        const uint8_t *sh = b + shoff + (uint64_t)i * shentsize;
        if (rd(sh + 4, 4) != 2) /* SHT_SYMTAB */
            continue;
        uint64_t off = e64 ? rd(sh + 24, 8) : rd(sh + 16, 4);
        uint64_t size = e64 ? rd(sh + 32, 8) : rd(sh + 20, 4);
        unsigned link = (unsigned)rd(sh + (e64 ? 40 : 24), 4);
        uint64_t entsz = e64 ? rd(sh + 56, 8) : rd(sh + 36, 4);
        if (link >= shnum || entsz < (e64 ? 24u : 16u) || off > n || size > n - off)
            continue;
        const uint8_t *ssh = b + shoff + (uint64_t)link * shentsize;
        uint64_t soff = e64 ? rd(ssh + 24, 8) : rd(ssh + 16, 4);
        uint64_t ssize = e64 ? rd(ssh + 32, 8) : rd(ssh + 20, 4);
        if (soff > n || ssize > n - soff)
            continue;
        uint64_t count = size / entsz;
        dbg_sym *v = realloc(d->syms, (d->nsyms + count) * sizeof *v);
        if (!v)
            goto out;
        d->syms = v;
        for (uint64_t k = 0; k < count; k++) {
            const uint8_t *s = b + off + k * entsz;
            uint64_t name = rd(s, 4);
            uint64_t value = e64 ? rd(s + 8, 8) : rd(s + 4, 4);
            uint64_t ssz = e64 ? rd(s + 16, 8) : rd(s + 8, 4);
            unsigned type = (e64 ? s[4] : s[12]) & 0xf;
            if (type > 2 || !value || !name || name >= ssize)
                continue; /* NOTYPE, OBJECT, FUNC only; sections, files skipped */
            const char *nm = (const char *)b + soff + name;
            size_t len = strnlen(nm, ssize - name);
            if (len == 0 || len == ssize - name)
                continue;
            char *copy = malloc(len + 1);
            if (!copy)
                goto out;
            memcpy(copy, nm, len);
            copy[len] = 0;
            d->syms[d->nsyms++] = (dbg_sym){value, ssz, copy};
            kept++;
        }
    }
    if (d->nsyms)
        qsort(d->syms, d->nsyms, sizeof *d->syms, cmp_sym);
out:
    /* line tables: the program's (when built with -g) and the kernel
     * image's (always: kernel_model/ builds with -g) */
    if (n >= 52 && !memcmp(b, "\177ELF", 4))
        d->usrc = dbg_src_load(b, n);
    free(b);
    kernel_lines(d);
    return kept;
}

static uint64_t user_bias(const es_dbg *d)
{
    return d->elf_dyn ? (d->bias_known ? d->bias : 0) : 0;
}

static const char *user_sym_at(const es_dbg *d, uint64_t addr, uint64_t *off)
{
    if (!d->nsyms || (d->elf_dyn && !d->bias_known))
        return NULL;
    uint64_t a = addr - user_bias(d);
    /* last symbol starting at or below a */
    size_t lo = 0, hi = d->nsyms;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (d->syms[mid].addr <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!lo)
        return NULL;
    const dbg_sym *s = &d->syms[lo - 1];
    /* sized symbols must contain a; unsized ones (assembly labels) reach
     * to the next symbol, within a page */
    if (s->size ? a - s->addr >= s->size : a - s->addr >= 4096)
        return NULL;
    *off = a - s->addr;
    return s->name;
}

bool es_dbg_source(es_dbg *d, uint64_t addr, char *loc, size_t loclen, const char **text)
{
    bool kernel = addr >= 0xffff800000000000ull;
    dbg_src *s = kernel ? d->ksrc : d->usrc;
    if (!kernel && d->elf_dyn && !d->bias_known)
        return false;
    const dbg_src_row *r = dbg_src_find(s, kernel ? addr : addr - user_bias(d));
    if (!r)
        return false;
    const char *file = dbg_src_file(s, r), *base = strrchr(file, '/');
    snprintf(loc, loclen, "%s:%u", base ? base + 1 : file, r->line);
    if (text)
        *text = dbg_src_text(s, r);
    return true;
}

const char *es_dbg_symbolize(const es_dbg *d, uint64_t addr, uint64_t *off)
{
    uint64_t o = 0;
    const char *s = NULL;
    if (d->m && d->m->kernel)
        s = es_kernel_addr2sym(d->m, addr, &o);
    if (!s)
        s = user_sym_at(d, addr, &o);
    if (s && off)
        *off = o;
    return s;
}

static bool user_sym(const es_dbg *d, const char *name, uint64_t *addr)
{
    for (size_t i = 0; i < d->nsyms; i++)
        if (!strcmp(d->syms[i].name, name)) {
            if (d->elf_dyn && !d->bias_known)
                return false;
            *addr = d->syms[i].addr + user_bias(d);
            return true;
        }
    return false;
}

int es_dbg_resolve(es_dbg *d, const char *spec, uint64_t *addr, char *err, size_t errlen)
{
    char buf[128];
    while (isspace((unsigned char)*spec))
        spec++;
    size_t len = strlen(spec);
    while (len && isspace((unsigned char)spec[len - 1]))
        len--;
    if (!len || len >= sizeof buf) {
        snprintf(err, errlen, "expected a symbol or an address");
        return -1;
    }
    memcpy(buf, spec, len);
    buf[len] = 0;
    char *end;
    if (isdigit((unsigned char)buf[0])) {
        unsigned long long v = strtoull(buf, &end, 0);
        if (*end) {
            snprintf(err, errlen, "%s: not a number", buf);
            return -1;
        }
        *addr = v;
        return 0;
    }
    int reg = dbg_reg_by_name(buf);
    if (reg >= 0) {
        *addr = reg == 16 ? d->m->rip : d->m->gpr[reg];
        return 0;
    }
    uint64_t off = 0;
    char *plus = strchr(buf, '+');
    if (plus) {
        *plus = 0;
        unsigned long long v = strtoull(plus + 1, &end, 0);
        if (!plus[1] || *end) {
            snprintf(err, errlen, "%s: bad offset", plus + 1);
            return -1;
        }
        off = v;
    }
    uint64_t a = d->m && d->m->kernel ? es_kernel_sym(d->m, buf) : 0;
    if (!a && !user_sym(d, buf, &a)) {
        snprintf(err, errlen, "%s: no such symbol in the program or the guest kernel%s", buf,
                 d->elf_dyn && !d->bias_known ? " (program symbols resolve once it runs)" : "");
        return -1;
    }
    *addr = a + off;
    return 0;
}

/* ---- breakpoints ---- */

int es_dbg_break_add(es_dbg *d, const char *spec, char *err, size_t errlen)
{
    if (d->nbps == DBG_MAX_BPS) {
        snprintf(err, errlen, "too many breakpoints (%d)", DBG_MAX_BPS);
        return -1;
    }
    uint64_t a;
    if (es_dbg_resolve(d, spec, &a, err, errlen))
        return -1;
    es_dbg_bp *b = &d->bps[d->nbps++];
    memset(b, 0, sizeof *b);
    b->id = ++d->next_bp_id;
    b->addr = a;
    while (isspace((unsigned char)*spec))
        spec++;
    snprintf(b->spec, sizeof b->spec, "%s", spec);
    size_t l = strlen(b->spec);
    while (l && isspace((unsigned char)b->spec[l - 1]))
        b->spec[--l] = 0;
    return b->id;
}

int es_dbg_break_del(es_dbg *d, int id)
{
    for (size_t i = 0; i < d->nbps; i++)
        if (d->bps[i].id == id) {
            memmove(&d->bps[i], &d->bps[i + 1], (d->nbps - i - 1) * sizeof d->bps[0]);
            d->nbps--;
            return 0;
        }
    return -1;
}

size_t es_dbg_break_count(const es_dbg *d) { return d->nbps; }

const es_dbg_bp *es_dbg_break_get(const es_dbg *d, size_t i)
{
    return i < d->nbps ? &d->bps[i] : NULL;
}

bool es_dbg_break_at(const es_dbg *d, uint64_t addr)
{
    for (size_t i = 0; i < d->nbps; i++)
        if (d->bps[i].addr == addr)
            return true;
    return false;
}

/* After a restart (another image: kernel symbols move) or once a
 * static-pie's bias is known: resolve every spec again.  Numeric specs
 * keep their address; unresolvable ones get 0 (never hit). */
void dbg_breaks_rebind(es_dbg *d)
{
    for (size_t i = 0; i < d->nbps; i++) {
        char err[160];
        uint64_t a;
        d->bps[i].addr = es_dbg_resolve(d, d->bps[i].spec, &a, err, sizeof err) == 0 &&
                                 dbg_reg_by_name(d->bps[i].spec) < 0
                             ? a
                             : 0;
    }
}
