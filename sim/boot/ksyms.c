/* ksyms.c - the loaded guest kernel's symbol table (see ksyms.h). */
#include "ksyms.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault.h"
#include "kernel_int.h"
#include "kmem.h"

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
int es_ksyms_read(es_machine *m, ksymtab *k, const uint8_t *data, size_t size, uint64_t lo,
                  uint64_t hi)
{
    uint64_t shoff = kimg_rd(data + 40, 8);
    uint16_t shentsize = (uint16_t)kimg_rd(data + 58, 2), shnum = (uint16_t)kimg_rd(data + 60, 2);
    if (!shoff || !shnum)
        return es_fail_msg(m, "kernel image has no section headers (stripped?)");
    if (shentsize != 64)
        return es_fail_msg(m, "kernel image: section header size %u, expected 64", shentsize);
    if (shoff > size || (uint64_t)shnum * 64 > size - shoff)
        return es_fail_msg(m, "kernel image: section headers extend past the end (truncated?)");
    const uint8_t *sym_sh = NULL;
    for (unsigned i = 0; i < shnum; i++) {
        const uint8_t *sh = data + shoff + (uint64_t)i * 64;
        if (kimg_rd(sh + 4, 4) == SHT_SYMTAB) {
            sym_sh = sh;
            break;
        }
    }
    if (!sym_sh)
        return es_fail_msg(m, "kernel image has no symbol table (stripped?)");
    uint64_t symoff = kimg_rd(sym_sh + 24, 8), symsize = kimg_rd(sym_sh + 32, 8);
    uint32_t link = (uint32_t)kimg_rd(sym_sh + 40, 4);
    uint64_t entsize = kimg_rd(sym_sh + 56, 8);
    if (entsize != 24)
        return es_fail_msg(m, "kernel image: symbol entry size %llu, expected 24",
                    (unsigned long long)entsize);
    if (symoff > size || symsize > size - symoff)
        return es_fail_msg(m, "kernel image: symbol table extends past the end (truncated?)");
    if (link == 0 || link >= shnum)
        return es_fail_msg(m, "kernel image: symbol table links to no string table");
    const uint8_t *str_sh = data + shoff + (uint64_t)link * 64;
    uint64_t stroff = kimg_rd(str_sh + 24, 8), strsize = kimg_rd(str_sh + 32, 8);
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
        uint32_t name = (uint32_t)kimg_rd(s, 4);
        uint8_t info = s[4];
        uint16_t shndx = (uint16_t)kimg_rd(s + 6, 2);
        uint64_t value = kimg_rd(s + 8, 8), sz = kimg_rd(s + 16, 8);
        int type = info & 0xf;
        if (name == 0 || name >= strsize || shndx == SHN_UNDEF || shndx >= SHN_LORESERVE)
            continue;
        if (type != STT_NOTYPE && type != STT_OBJECT && type != STT_FUNC)
            continue; /* sections, files, TLS */
        if (value < lo || value >= hi)
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

void es_ksyms_free(ksymtab *k)
{
    free(k->names);
    free(k->syms);
    free(k->by_name);
    *k = (ksymtab){0};
}

static const ksym *find_name(const es_machine *m, const char *name)
{
    const ksymtab *k = m->kernel ? m->kernel->st : NULL;
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
    const struct es_kernel *kern = m->kernel;
    if (!kern || addr < kern->lo || addr >= kern->hi || !kern->st->nsyms)
        return NULL;
    const ksymtab *k = kern->st;
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
    return m->kernel ? m->kernel->st->nsyms : 0;
}

const char *es_kernel_sym_at(const es_machine *m, size_t i, uint64_t *addr, uint64_t *size)
{
    const ksymtab *k = m->kernel ? m->kernel->st : NULL;
    if (!k || i >= k->nsyms)
        return NULL;
    if (addr)
        *addr = k->syms[i].addr;
    if (size)
        *size = k->syms[i].size;
    return k->names + k->syms[i].name;
}

/* The name is the function's minus its convention's prefix (include/
 * syscalls.h: __x64_sys_NAME, sys_NAME, compat_sys_NAME...), so it is the
 * definition's name ("newstat" for the row stat). */
bool es_kernel_syscall_name(es_machine *m, bool ia32, int nr, char *out, size_t n)
{
    static const char *const pfx[] = {"__ia32_compat_sys_", "__x32_compat_sys_", "__x64_sys_",
                                      "__ia32_sys_", "compat_SyS_", "compat_sys_", "SyS_",
                                      "sys_"};
    uint64_t tab, size, slot = 0, off = 1;
    if (!es_kernel_sym_size(m, ia32 ? "ia32_sys_call_table" : "sys_call_table", &tab, &size) ||
        nr < 0 || (uint64_t)(nr + 1) * 8 > size ||
        es_kernel_read(m, tab + 8u * (unsigned)nr, &slot, 8) != 0)
        return false;
    const char *s = es_kernel_addr2sym(m, slot, &off);
    if (!s || off)
        return false;
    for (size_t i = 0; i < sizeof pfx / sizeof pfx[0]; i++)
        if (!strncmp(s, pfx[i], strlen(pfx[i]))) {
            snprintf(out, n, "%s", s + strlen(pfx[i]));
            return strcmp(out, "ni_syscall") != 0;
        }
    return false;
}
