/* exposure_probe.c - the three probe points of a syscall in the loaded
 * image (the C dispatcher, the function its table slot points to, the
 * syscall's body), what each register may legitimately hold there, and
 * what it does hold when execution arrives (exposure_probe.h). */
#include <stdio.h>
#include <string.h>

#include "exposure.h"
#include "exposure_probe.h"
#include "kernel.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const int cabi[6] = {ES_RDI, ES_RSI, ES_RDX, ES_RCX, ES_R8, ES_R9};

/* The label the i-th syscall argument legitimately carries on this entry. */
static es_label arg_source(int entry, int i)
{
    static const int r64[6] = {ES_RDI, ES_RSI, ES_RDX, ES_R10, ES_R8, ES_R9};
    static const int r80[6] = {ES_RBX, ES_RCX, ES_RDX, ES_RSI, ES_RDI, ES_RBP};
    static const int rse[6] = {ES_RBX, ES_RCX, ES_RDX, ES_RSI, ES_RDI, -1};
    static const int rsc[6] = {ES_RBX, ES_RBP, ES_RDX, ES_RSI, ES_RDI, -1};
    const int *t = entry == ES_ENTRY_INT80        ? r80
                   : entry == ES_ENTRY_SYSENTER32 ? rse
                   : entry == ES_ENTRY_SYSCALL32  ? rsc
                                                  : r64;
    return t[i] < 0 ? ES_TL_MEM : ES_TL_REG(t[i]);
}

static bool starts(const char *s, const char *p)
{
    return !strncmp(s, p, strlen(p));
}

/* pt_regs-style functions take one argument, the kernel's regs pointer:
 * no user value belongs in any register. */
static bool ptregs_style(const char *sym)
{
    return starts(sym, "__x64_") || starts(sym, "__ia32_") || starts(sym, "__x32_") ||
           starts(sym, "sys32_x32_");
}

/* The body behind a table target: __do_sys_X for __x64/__ia32_sys_X,
 * __do_compat_sys_X for the compat stubs, SYSC_X / C_SYSC_X for v4.16's
 * sys_X / compat_sys_X. */
static void body_of(const es_machine *m, const char *target, char *out, size_t n)
{
    static const char *const map[][2] = {
        {"__x64_sys_", "__do_sys_"},         {"__ia32_sys_", "__do_sys_"},
        {"__ia32_compat_sys_", "__do_compat_sys_"}, {"__x32_compat_sys_", "__do_compat_sys_"},
        {"compat_sys_", "C_SYSC_"},          {"compat_SyS_", "C_SYSC_"},
        {"sys_", "SYSC_"},                   {"SyS_", "SYSC_"},
    };
    out[0] = 0;
    if (!strcmp(target, "sys_ni_syscall"))
        return;
    for (size_t i = 0; i < NELEM(map); i++) {
        if (!starts(target, map[i][0]))
            continue;
        const char *base = target + strlen(map[i][0]);
        snprintf(out, n, "%s%s", map[i][1], base);
        if (es_kernel_sym(m, out))
            return;
        /* the other convention's body of the same name */
        const char *alt = map[i][1][0] == '_' ? (strstr(map[i][1], "compat") ? "C_SYSC_" : "SYSC_")
                                              : (map[i][1][0] == 'C' ? "__do_compat_sys_"
                                                                     : "__do_sys_");
        snprintf(out, n, "%s%s", alt, base);
        if (es_kernel_sym(m, out))
            return;
        out[0] = 0;
        return;
    }
}

void es_probe_record(es_probe *p, const es_taint *t)
{
    p->hit = true;
    p->exposed = 0;
    for (int r = 0; r < 16; r++) {
        p->regs[r] = es_taint_reg(t, r);
        /* the syscall number alone is not exposure: every path carries it
         * (bounds-checked and masked with array_index_nospec) */
        if (p->regs[r] & ~p->allowed[r] & ~ES_TL_NR)
            p->exposed |= (uint16_t)(1u << r);
    }
}

/* The name the convention gives the function at a table slot's address.
 * Under v4.16 sys_X and SyS_X (compat_sys_X and compat_SyS_X) are one
 * address, and es_kernel_addr2sym may return either; the table's own entry
 * names (sys_X, compat_sys_X under v4.16; __x64_sys_X, __ia32_sys_X,
 * __ia32_compat_sys_X, __x32_compat_sys_X under v4.17) are preferred so
 * that every probe of a run is named the same way.  Falls back to
 * es_kernel_addr2sym's name.  Returns false if the address starts no
 * symbol. */
static bool table_entry_name(const es_machine *m, uint64_t addr, char *out, size_t n)
{
    /* entry names first; after them the alias spellings, which are only
     * stripped: v4.16's SyS_, and the seed series' own __compat_sys_ia32_ /
     * __compat_sys_x32_ (renamed in the merged 4.17) */
    static const char *const prefixes[] = {"__x64_sys_", "__ia32_sys_", "__ia32_compat_sys_",
                                           "__x32_compat_sys_", "compat_sys_", "sys_",
                                           "compat_SyS_", "SyS_", "__compat_sys_ia32_",
                                           "__compat_sys_x32_"};
    enum { NENTRY = 6 };
    uint64_t off;
    const char *s = es_kernel_addr2sym(m, addr, &off);
    if (!s || off != 0)
        return false;
    snprintf(out, n, "%s", s);
    const char *base = NULL;
    for (size_t i = 0; i < NELEM(prefixes) && !base; i++)
        if (starts(s, prefixes[i]))
            base = s + strlen(prefixes[i]);
    if (!base)
        return true;
    char b[80];
    snprintf(b, sizeof b, "%s", base);
    for (size_t i = 0; i < NENTRY; i++) {
        char cand[128];
        snprintf(cand, sizeof cand, "%s%s", prefixes[i], b);
        if (es_kernel_sym(m, cand) == addr) {
            size_t l = strlen(cand) < n ? strlen(cand) : n - 1; /* symbols fit; be safe */
            memcpy(out, cand, l);
            out[l] = 0;
            return true;
        }
    }
    return true;
}

/* Finds the probe points of e's syscall in the loaded image and what each
 * register may hold at each of them. */
void es_probe_setup(es_machine *m, es_exposure *e, int entry, unsigned patches)
{
    static const char *const dispatch[ES_ENTRY_COUNT] = {
        "do_syscall_64", "do_int80_syscall_32", "do_fast_syscall_32", "do_fast_syscall_32",
        "do_syscall_64", "emulate_vsyscall"};
    es_probe *pd = &e->probe[ES_PROBE_DISPATCH], *pt = &e->probe[ES_PROBE_TABLE_TARGET],
             *pb = &e->probe[ES_PROBE_BODY];
    snprintf(pd->symbol, sizeof pd->symbol, "%s", dispatch[entry]);
    pd->addr = es_kernel_sym(m, pd->symbol);
    pd->present = pd->addr != 0;
    if (pd->present && entry != ES_ENTRY_VSYSCALL && !strcmp(pd->symbol, "do_syscall_64") &&
        (patches & ES_PATCH_DFE64506))
        pd->allowed[ES_RDI] = ES_TL_NR; /* dfe64506: do_syscall_64(nr, regs) */

    const char *table = es_entry_is32(entry) ? "ia32_sys_call_table" : "sys_call_table";
    uint64_t tab, tabsz, slot = 0;
    unsigned idx = entry == ES_ENTRY_VSYSCALL ? (unsigned)e->nr : (unsigned)e->nr;
    if (es_kernel_sym_size(m, table, &tab, &tabsz) && (idx + 1) * 8ull <= tabsz &&
        es_kernel_read(m, tab + idx * 8ull, &slot, 8) == 0 && slot) {
        char s[sizeof pt->symbol];
        if (table_entry_name(m, slot, s, sizeof s)) {
            snprintf(pt->symbol, sizeof pt->symbol, "%s", s);
            pt->addr = slot;
            pt->present = true;
            if (!ptregs_style(s) && strcmp(s, "sys_ni_syscall") != 0)
                for (int i = 0; i < e->arity && i < 6; i++)
                    pt->allowed[cabi[i]] = arg_source(entry, i);
            body_of(m, s, pb->symbol, sizeof pb->symbol);
            if (pb->symbol[0]) {
                pb->addr = es_kernel_sym(m, pb->symbol);
                pb->present = pb->addr != 0;
                for (int i = 0; i < e->arity && i < 6; i++)
                    pb->allowed[cabi[i]] = arg_source(entry, i);
            }
        }
    }
    if (entry == ES_ENTRY_VSYSCALL) {
        /* a vsyscall passes no number: nothing derived from RAX is expected */
    }
}

