/* explain.c - `entrysim explain`: the disassembly of a syscall's stub
 * chain and the dispatchers that call it (exposure.h: es_explain). */
#include <stdbool.h>
#include <string.h>

#include "decoder.h"
#include "exposure.h"
#include "kernel.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* es_symbolizer over the guest kernel's symbol table */
static const char *kernel_sym(void *m, uint64_t addr, uint64_t *off)
{
    return es_kernel_addr2sym(m, addr, off);
}

static int dis_sym(FILE *f, es_machine *m, const char *sym, int syntax)
{
    uint64_t a, sz;
    if (!es_kernel_sym_size(m, sym, &a, &sz))
        return -1;
    if (sz == 0 || sz > 65536)
        sz = 64;
    fprintf(f, "%016llx <%s>:\n", (unsigned long long)a, sym);
    uint8_t buf[16];
    for (uint64_t off = 0; off < sz;) {
        memset(buf, 0, sizeof buf);
        size_t avail = sz - off < 15 ? (size_t)(sz - off) : 15;
        if (es_kernel_read(m, a + off, buf, avail))
            break;
        char text[200];
        size_t len = es_format_sym(buf, avail, ES_MODE_64, a + off, syntax, kernel_sym, m, text,
                                   sizeof text);
        if (!len)
            len = 1;
        fprintf(f, "  %6llx:  %s\n", (unsigned long long)off, text);
        off += len;
    }
    fputc('\n', f);
    return 0;
}

/* Does the table `table` hold any of the n addresses? */
static bool table_refers(es_machine *m, const char *table, const uint64_t *addrs, int n)
{
    uint64_t tab, sz;
    if (!es_kernel_sym_size(m, table, &tab, &sz))
        return false;
    for (uint64_t off = 0; off + 8 <= sz; off += 8) {
        uint64_t slot;
        if (es_kernel_read(m, tab + off, &slot, 8))
            return false;
        for (int i = 0; i < n; i++)
            if (slot == addrs[i])
                return true;
    }
    return false;
}

int es_explain(FILE *f, unsigned patches, const char *name, int syntax)
{
    return es_explain_dir(f, NULL, patches, name, syntax);
}

int es_explain_dir(FILE *f, const char *kernel_dir, unsigned patches, const char *name,
                   int syntax)
{
    es_machine *m = es_machine_new(16ull << 20);
    if (!m)
        return -1;
    int rc = -1;
    if (kernel_dir ? es_kernel_load_dir(m, kernel_dir, patches) : es_kernel_load(m, patches)) {
        fprintf(stderr, "entrysim: explain: %s\n", m->message);
        goto out;
    }
    char conv[64];
    es_patches_name(patches, conv, sizeof conv);
    static const char *const pats[] = {
        "__x64_sys_%s", "__se_sys_%s", "__do_sys_%s", "__ia32_sys_%s",
        "__ia32_compat_sys_%s", "__x32_compat_sys_%s", "__se_compat_sys_%s",
        "__do_compat_sys_%s", "sys_%s", "SyS_%s", "SYSC_%s", "compat_sys_%s", "C_SYSC_%s",
    };
    enum { NP = NELEM(pats) };
    char syms[NP][128];
    uint64_t addr[NP];
    int nfound = 0;
    for (size_t i = 0; i < NP; i++) {
        snprintf(syms[i], sizeof syms[i], pats[i], name);
        addr[i] = es_kernel_sym(m, syms[i]);
        if (addr[i])
            addr[nfound] = addr[i], memmove(syms[nfound], syms[i], sizeof syms[i]), nfound++;
    }
    if (!nfound) {
        /* nothing on f: the header alone would read as an empty listing */
        fprintf(stderr, "entrysim: explain: no stub named after '%s' in the %s image\n", name,
                conv);
        rc = -2;
        goto out;
    }
    fprintf(f, "# %s in the %s kernel image: the stub chain and the dispatcher\n\n", name, conv);
    for (int i = 0; i < nfound; i++) {
        /* several names, one address (v4.16's sys_X is SyS_X): the code is
         * listed under the first name printed, the others point to it */
        int first = -1;
        for (int j = 0; j < i && first < 0; j++)
            if (addr[j] == addr[i])
                first = j;
        if (first >= 0)
            fprintf(f, "%016llx <%s>: alias of <%s>\n\n", (unsigned long long)addr[i], syms[i],
                    syms[first]);
        else
            dis_sym(f, m, syms[i], syntax);
    }
    /* the dispatchers that call through a table holding one of these stubs:
     * do_syscall_64 for sys_call_table (64-bit and x32 rows), the int80 and
     * fast (SYSENTER/SYSCALL32) ones for ia32_sys_call_table */
    bool t64 = table_refers(m, "sys_call_table", addr, nfound);
    bool t32 = table_refers(m, "ia32_sys_call_table", addr, nfound);
    if (t64 || !t32)
        dis_sym(f, m, "do_syscall_64", syntax);
    if (t32) {
        dis_sym(f, m, "do_int80_syscall_32", syntax);
        dis_sym(f, m, "do_fast_syscall_32", syntax);
    }
    rc = 0;
out:
    es_machine_free(m);
    return rc;
}
