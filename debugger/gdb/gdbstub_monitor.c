/* gdbstub_monitor.c - `monitor CMD` of the gdb stub: what gdb cannot know by
 * itself -- guest-kernel symbols without loading the image, where the CPU
 * stands, which image it runs, and the code at RIP with its targets named
 * (gdb's own x/i knows only the symbols of the files it loaded).  One table
 * of commands; `monitor help` prints from it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoder.h"
#include "gdbstub_int.h"
#include "kernel.h"
#include "patches.h"

typedef void (*mon_fn)(es_machine *m, const char *arg, char *text, size_t cap);

static void mon_sym(es_machine *m, const char *arg, char *text, size_t cap)
{
    uint64_t a = m->kernel ? es_kernel_sym(m, arg) : 0;
    if (a)
        snprintf(text, cap, "%s = 0x%llx\n", arg, (unsigned long long)a);
    else
        snprintf(text, cap, "no kernel symbol '%s'\n", arg);
}

static void mon_where(es_machine *m, const char *arg, char *text, size_t cap)
{
    (void)arg;
    uint64_t off = 0;
    const char *sym = m->kernel ? es_kernel_addr2sym(m, m->rip, &off) : NULL;
    char at[200] = "";
    if (sym)
        snprintf(at, sizeof at, " (%s+0x%llx)", sym, (unsigned long long)off);
    snprintf(text, cap, "rip 0x%llx%s, CPL %u, %s mode, %llu instructions\n",
             (unsigned long long)m->rip, at, m->cpl,
             m->ipmask == ~0ull ? "64-bit" : "compatibility", (unsigned long long)m->icount);
}

static void mon_kernel(es_machine *m, const char *arg, char *text, size_t cap)
{
    (void)arg;
    char name[64];
    es_patches_name(es_kernel_patches(m), name, sizeof name);
    if (!m->has_kernel)
        snprintf(text, cap, "no guest kernel (--direct)\n");
    else
        snprintf(text, cap,
                 "guest kernel %s; its symbols: add-symbol-file "
                 "<build>/kernel_model/kernel-p%02u.elf\n",
                 name, es_kernel_patches(m));
}

static const char *kernel_sym(void *m, uint64_t addr, uint64_t *off)
{
    return ((es_machine *)m)->kernel ? es_kernel_addr2sym(m, addr, off) : NULL;
}

/* N instructions (default 8, at most 64) from RIP, in the CPU's current
 * mode, branch and memory targets named from the kernel's symbols. */
static void mon_disas(es_machine *m, const char *arg, char *text, size_t cap)
{
    long n = *arg ? strtol(arg, NULL, 10) : 8;
    n = n < 1 ? 1 : n > 64 ? 64 : n;
    size_t at = 0;
    text[0] = 0;
    uint64_t a = m->rip;
    for (long i = 0; i < n && at + 1 < cap; i++) {
        uint8_t b[16];
        size_t got = es_gdb_mem_read(m, a, b, 15);
        char line[200];
        size_t len = got ? es_format_sym(b, got, m->mode, a, ES_SYNTAX_INTEL, kernel_sym, m, line,
                                         sizeof line)
                         : 0;
        if (!got)
            snprintf(line, sizeof line, "(not mapped)");
        uint64_t off = 0;
        const char *s = kernel_sym(m, a, &off);
        char where[160] = "";
        if (s)
            snprintf(where, sizeof where, " <%s+0x%llx>", s, (unsigned long long)off);
        int k = snprintf(text + at, cap - at, "%s0x%llx%s:  %s\n", i ? "   " : "=> ",
                         (unsigned long long)a, where, line);
        if (k < 0 || (size_t)k >= cap - at)
            break;
        at += (size_t)k;
        if (!len)
            break;
        a += len;
    }
}

static const struct {
    const char *name, *args, *help;
    mon_fn fn;
} mon_cmds[] = {
    {"sym", "NAME", "address of a guest-kernel symbol", mon_sym},
    {"where", "", "rip (with kernel symbol), CPL, mode, instructions retired", mon_where},
    {"kernel", "", "the guest kernel's patch set and its symbol file", mon_kernel},
    {"disas", "[N]", "N instructions from rip (default 8), targets named", mon_disas},
};

void es_gdb_monitor(es_machine *m, const char *cmd, char *text, size_t cap)
{
    size_t nl = strcspn(cmd, " ");
    const char *arg = cmd[nl] ? cmd + nl + 1 : cmd + nl;
    for (size_t i = 0; i < sizeof mon_cmds / sizeof mon_cmds[0]; i++)
        if (strlen(mon_cmds[i].name) == nl && !strncmp(cmd, mon_cmds[i].name, nl) &&
            (*mon_cmds[i].args || !*arg) && (mon_cmds[i].args[0] != 'N' || *arg)) {
            mon_cmds[i].fn(m, arg, text, cap);
            return;
        }
    size_t at = (size_t)snprintf(text, cap, "entrysim monitor commands:\n");
    for (size_t i = 0; i < sizeof mon_cmds / sizeof mon_cmds[0] && at < cap; i++) {
        char usage[32];
        snprintf(usage, sizeof usage, "%s %s", mon_cmds[i].name, mon_cmds[i].args);
        at += (size_t)snprintf(text + at, cap - at, "  %-10s %s\n", usage, mon_cmds[i].help);
    }
}
