/* dbg_cmd.c - the command language of `--script FILE` and of the window's
 * keys (es_dbg_exec).  Every input gives either a report or a one-line
 * error on `out`; nothing here can crash on a bad line. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "dbg_int.h"
#include "kernel.h"
#include "mitigations.h"

#define MAX_TOK 8

static const char help_text[] =
    "step [N]           execute N instructions (into calls and the kernel)\n"
    "next               step over a call, or over a whole system call\n"
    "finish             run to the return of the current function (kernel: to user mode)\n"
    "continue           run to a breakpoint or the end of the program\n"
    "syscall            run to the next syscall/sysenter/int 0x80 in user mode\n"
    "kentry             run to the next kernel entry (CPL 3 -> 0)\n"
    "kexit              run to the next return to user mode (CPL 0 -> 3)\n"
    "until SYM|ADDR     run until RIP reaches SYM or ADDR\n"
    "break SYM|ADDR     set a breakpoint (user ELF or guest kernel symbol, SYM+OFF, 0xADDR)\n"
    "delete N           delete breakpoint N\n"
    "breaks             list breakpoints\n"
    "reverse [N]        undo N instructions (rstep = reverse 1)\n"
    "rcontinue          run backwards to a breakpoint or the oldest recorded state\n"
    "print REG|regs|ptregs|taint|exposure|status|output|mem ADDR [N]\n"
    "x ADDR [N]         hex dump of N bytes (default 64)\n"
    "mem ADDR|REG       point the memory view at ADDR, or make it follow REG\n"
    "syntax intel|att   disassembly syntax\n"
    "restart [--convention v4.16|v4.17] [--patches LIST] [--mitigations LIST] [--cpu intel|amd]\n"
    "screenshot FILE    save the window as a PNG\n"
    "help, quit\n";

const char *es_dbg_help(void) { return help_text; }

static void say(FILE *out, const char *fmt, ...)
{
    if (!out)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(out, fmt, ap);
    va_end(ap);
}

static int err(FILE *out, const char *fmt, ...)
{
    if (out) {
        va_list ap;
        va_start(ap, fmt);
        fputs("error: ", out);
        vfprintf(out, fmt, ap);
        fputc('\n', out);
        va_end(ap);
    }
    return ES_DBG_CMD_ERROR;
}

static bool parse_num(const char *s, uint64_t *v)
{
    if (!s || !isdigit((unsigned char)s[0]))
        return false;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 0);
    if (*end || errno)
        return false;
    *v = x;
    return true;
}

/* "0xffffffff81000040 <entry_SYSCALL_64+0x10>  cpl 0  swapgs" */
static void where(es_dbg *d, FILE *out)
{
    es_dbg_line l;
    if (!es_dbg_disasm(d, 0, 0, &l, 1))
        return;
    say(out, "  0x%016llx", (unsigned long long)l.addr);
    if (l.sym[0])
        say(out, " <%s>", l.sym);
    say(out, "  cpl %d  %s\n", d->m->cpl, l.text);
}

static int report(es_dbg *d, int why, FILE *out)
{
    es_dbg_status s;
    es_dbg_get_status(d, &s);
    say(out, "[%s", es_dbg_stop_name(why));
    if (why == ES_DBG_BREAKPOINT)
        say(out, " %d", s.bp_hit);
    if (why == ES_DBG_EXITED)
        say(out, ": status %d", s.exit_status);
    if (why == ES_DBG_FAULTED)
        say(out, ": %s", s.message);
    say(out, "] insn %llu", (unsigned long long)s.icount);
    if (s.timing)
        say(out, " cycle %llu (+%llu)", (unsigned long long)s.cycles,
            (unsigned long long)s.last_cost);
    say(out, "\n");
    where(d, out);
    return ES_DBG_CMD_OK;
}

static void hexdump(es_dbg *d, uint64_t a, uint64_t n, FILE *out)
{
    if (n > 4096)
        n = 4096;
    uint8_t b[4096];
    size_t got = es_dbg_read(d, a, b, n);
    for (size_t i = 0; i < n; i += 16) {
        say(out, "%016llx ", (unsigned long long)(a + i));
        for (size_t k = i; k < i + 16; k++)
            if (k >= n)
                say(out, "   ");
            else if (k < got)
                say(out, " %02x", b[k]);
            else
                say(out, " ??");
        say(out, "  ");
        for (size_t k = i; k < i + 16 && k < n; k++)
            say(out, "%c", k < got && b[k] >= 0x20 && b[k] < 0x7f ? b[k] : '.');
        say(out, "\n");
    }
}

static void print_regs(es_dbg *d, FILE *out, bool taint_only)
{
    es_dbg_reg r[ES_DBG_MAX_REGS];
    size_t n = es_dbg_regs(d, r, ES_DBG_MAX_REGS);
    for (size_t i = 0; i < n; i++) {
        if (taint_only && !r[i].taint)
            continue;
        say(out, "%-14s 0x%0*llx%s", r[i].name, r[i].width * 2, (unsigned long long)r[i].value,
            r[i].changed ? " *" : "");
        if (!strcmp(r[i].name, "rflags")) {
            char f[96];
            es_dbg_flags_str(r[i].value, f, sizeof f);
            say(out, " [%s]", f);
        }
        if (r[i].taint)
            say(out, " {%s}", r[i].labels);
        say(out, "\n");
    }
}

static int print_ptregs(es_dbg *d, FILE *out)
{
    es_dbg_slot s[ES_DBG_PTREGS_SLOTS];
    uint64_t base;
    if (es_dbg_ptregs(d, &base, s))
        return err(out, "no guest kernel stack");
    say(out, "struct pt_regs at 0x%llx\n", (unsigned long long)base);
    for (int i = 0; i < ES_DBG_PTREGS_SLOTS; i++) {
        say(out, "  0x%02x %-8s 0x%016llx", s[i].off, s[i].field, (unsigned long long)s[i].value);
        if (s[i].written)
            say(out, "  written #%u", s[i].order);
        if (s[i].cleared)
            say(out, "  cleared");
        if (s[i].taint)
            say(out, "  {%s}", s[i].labels);
        say(out, "\n");
    }
    return ES_DBG_CMD_OK;
}

static void print_exposure(es_dbg *d, FILE *out)
{
    es_dbg_live v[64];
    size_t n = es_dbg_exposure(d, v, 64);
    if (!d->taint)
        say(out, "taint tracking is off\n");
    else if (!n)
        say(out, "no user-derived values live\n");
    for (size_t i = 0; i < n; i++)
        say(out, "  %-16s 0x%016llx  {%s}\n", v[i].where, (unsigned long long)v[i].value,
            v[i].labels);
    const char *t = es_dbg_probe_table(d);
    if (t)
        say(out, "%s", t);
}

static void print_status(es_dbg *d, FILE *out)
{
    es_dbg_status s;
    es_dbg_get_status(d, &s);
    say(out, "%s  mode %s  cpl %d  insn %llu", s.program, s.mode == ES_MODE_64 ? "64-bit" : "compat",
        s.cpl, (unsigned long long)s.icount);
    if (s.timing)
        say(out, "  cycles %llu", (unsigned long long)s.cycles);
    else
        say(out, "  cycles -");
    say(out, "  %s  mitigations %s  cpu %s  history %llu%s\n", s.convention, s.mitigation_names,
        s.vendor ? "amd" : "intel", (unsigned long long)s.history, s.exited ? "  (exited)" : "");
}

static int cmd_print(es_dbg *d, char **t, int n, FILE *out)
{
    if (n < 2)
        return err(out, "print what? REG|regs|ptregs|taint|exposure|status|output|mem ADDR [N]");
    const char *w = t[1];
    if (!strcmp(w, "regs"))
        print_regs(d, out, false);
    else if (!strcmp(w, "taint"))
        print_regs(d, out, true);
    else if (!strcmp(w, "ptregs"))
        return print_ptregs(d, out);
    else if (!strcmp(w, "exposure"))
        print_exposure(d, out);
    else if (!strcmp(w, "status"))
        print_status(d, out);
    else if (!strcmp(w, "output")) {
        size_t len;
        const char *o = es_dbg_output(d, &len);
        say(out, "%.*s", (int)len, o);
    } else if (!strcmp(w, "mem")) {
        uint64_t a, len = 64;
        char e[160];
        if (n < 3)
            return err(out, "print mem ADDR [N]");
        if (es_dbg_resolve(d, t[2], &a, e, sizeof e))
            return err(out, "%s", e);
        if (n > 3 && !parse_num(t[3], &len))
            return err(out, "%s: not a byte count", t[3]);
        hexdump(d, a, len, out);
    } else {
        es_dbg_reg r[ES_DBG_MAX_REGS];
        size_t k = es_dbg_regs(d, r, ES_DBG_MAX_REGS);
        for (size_t i = 0; i < k; i++)
            if (!strcmp(r[i].name, w)) {
                say(out, "%s = 0x%llx", w, (unsigned long long)r[i].value);
                if (r[i].taint)
                    say(out, " {%s}", r[i].labels);
                say(out, "\n");
                return ES_DBG_CMD_OK;
            }
        /* the 32-bit names a 32-bit program's author thinks in */
        static const char *const e32[] = {"eax", "ecx", "edx", "ebx", "esp", "ebp",
                                          "esi", "edi", "eip"};
        for (int i = 0; i < 9; i++)
            if (!strcmp(w, e32[i])) {
                uint64_t v = i == 8 ? d->m->rip : d->m->gpr[i];
                es_label l = i < 8 && d->taint && d->m->cpl == 0 ? es_taint_reg(d->taint, i) : 0;
                char lb[96] = "";
                if (l)
                    es_taint_label_str(l, d->abi, lb, sizeof lb);
                say(out, "%s = 0x%llx%s%s%s\n", w, (unsigned long long)(uint32_t)v, l ? " {" : "",
                    lb, l ? "}" : "");
                return ES_DBG_CMD_OK;
            }
        return err(out, "%s: no such register or item", w);
    }
    return ES_DBG_CMD_OK;
}

static int cmd_restart(es_dbg *d, char **t, int n, FILE *out)
{
    es_dbg_cfg c = d->cfg;
    char e[320];
    for (int i = 1; i < n; i++) {
        const char *o = t[i], *v = i + 1 < n ? t[i + 1] : NULL;
        if (!v)
            return err(out, "%s needs a value", o);
        i++;
        if (!strcmp(o, "--convention")) {
            if (!strcmp(v, "v4.16"))
                c.launch.patches = ES_CONV_V416;
            else if (!strcmp(v, "v4.17"))
                c.launch.patches = ES_CONV_V417;
            else
                return err(out, "%s: the conventions are v4.16 and v4.17", v);
        } else if (!strcmp(o, "--patches")) {
            if (es_patches_parse(v, &c.launch.patches, e, sizeof e))
                return err(out, "%s", e);
        } else if (!strcmp(o, "--mitigations")) {
            if (es_mitigations_parse(v, &c.launch.mitigations, e, sizeof e))
                return err(out, "%s", e);
        } else if (!strcmp(o, "--cpu")) {
            if (strcmp(v, "intel") && strcmp(v, "amd"))
                return err(out, "%s: --cpu intel or amd", v);
            c.launch.vendor = !strcmp(v, "amd");
        } else {
            return err(out, "%s: unknown restart option", o);
        }
    }
    if (es_dbg_restart(d, &c, e, sizeof e))
        return err(out, "restart: %s", e);
    char conv[64];
    es_patches_name(es_kernel_patches(d->m), conv, sizeof conv);
    say(out, "restarted under %s\n", conv);
    where(d, out);
    return ES_DBG_CMD_OK;
}

static int tokenize(char *s, char **t)
{
    int n = 0;
    while (*s) {
        while (isspace((unsigned char)*s))
            s++;
        if (!*s || *s == '#')
            break;
        if (n == MAX_TOK)
            return -1;
        t[n++] = s;
        while (*s && !isspace((unsigned char)*s))
            s++;
        if (*s)
            *s++ = 0;
    }
    return n;
}

static bool is(const char *w, const char *a, const char *b)
{
    return !strcmp(w, a) || (b && !strcmp(w, b));
}

int es_dbg_exec(es_dbg *d, const char *line, FILE *out)
{
    char buf[512];
    if (!line)
        return ES_DBG_CMD_OK;
    if (strlen(line) >= sizeof buf)
        return err(out, "command line too long");
    snprintf(buf, sizeof buf, "%s", line);
    char *t[MAX_TOK];
    int n = tokenize(buf, t);
    if (n < 0)
        return err(out, "too many words");
    if (n == 0)
        return ES_DBG_CMD_OK;
    const char *c = t[0];
    char e[320];
    uint64_t v;
    bool runs = is(c, "step", "s") || is(c, "stepi", "si") || is(c, "next", "n") ||
                is(c, "finish", NULL) || is(c, "continue", "c") || is(c, "syscall", NULL) ||
                is(c, "kentry", NULL) || is(c, "kexit", NULL) || is(c, "until", NULL);
    if (runs && d->exited && d->m->stop == ES_STOP_EXIT)
        return err(out, "the program has exited (status %d): reverse or restart",
                   d->m->exit_status);
    if (runs && d->exited)
        return err(out, "the program was stopped (%s): reverse or restart", d->m->message);
    if (is(c, "step", "s") || is(c, "stepi", "si")) {
        uint64_t k = 1;
        if (n > 2 || (n == 2 && (!parse_num(t[1], &k) || k == 0)))
            return err(out, "step [N]: N is a positive count");
        return report(d, es_dbg_step(d, k), out);
    }
    if (is(c, "next", "n"))
        return report(d, es_dbg_next(d), out);
    if (is(c, "finish", NULL))
        return report(d, es_dbg_finish(d), out);
    if (is(c, "continue", "c"))
        return report(d, es_dbg_continue(d), out);
    if (is(c, "syscall", NULL))
        return report(d, es_dbg_run_to(d, ES_DBG_TO_SYSCALL), out);
    if (is(c, "kentry", NULL))
        return report(d, es_dbg_run_to(d, ES_DBG_TO_KENTRY), out);
    if (is(c, "kexit", NULL))
        return report(d, es_dbg_run_to(d, ES_DBG_TO_KEXIT), out);
    if (is(c, "until", NULL)) {
        if (n != 2)
            return err(out, "until SYM|ADDR");
        if (es_dbg_resolve(d, t[1], &v, e, sizeof e))
            return err(out, "%s", e);
        return report(d, es_dbg_until(d, v), out);
    }
    if (is(c, "break", "b")) {
        if (n != 2)
            return err(out, "break SYM|ADDR");
        int id = es_dbg_break_add(d, t[1], e, sizeof e);
        if (id < 0)
            return err(out, "%s", e);
        say(out, "breakpoint %d at 0x%llx (%s)\n", id,
            (unsigned long long)d->bps[d->nbps - 1].addr, t[1]);
        return ES_DBG_CMD_OK;
    }
    if (is(c, "delete", "d")) {
        if (n != 2 || !parse_num(t[1], &v) || v > 1000000)
            return err(out, "delete N");
        if (es_dbg_break_del(d, (int)v))
            return err(out, "no breakpoint %llu", (unsigned long long)v);
        say(out, "deleted breakpoint %llu\n", (unsigned long long)v);
        return ES_DBG_CMD_OK;
    }
    if (is(c, "breaks", "info")) {
        for (size_t i = 0; i < d->nbps; i++)
            say(out, "%d  0x%016llx  %s  hits %llu\n", d->bps[i].id,
                (unsigned long long)d->bps[i].addr, d->bps[i].spec,
                (unsigned long long)d->bps[i].hits);
        if (!d->nbps)
            say(out, "no breakpoints\n");
        return ES_DBG_CMD_OK;
    }
    if (is(c, "reverse", "rstep") || is(c, "rs", NULL)) {
        uint64_t k = 1;
        if (n > 2 || (n == 2 && (!parse_num(t[1], &k) || k == 0)) || (n == 2 && c[1] == 's'))
            return err(out, "reverse [N] (rstep takes no count)");
        return report(d, es_dbg_reverse(d, k), out);
    }
    if (is(c, "rcontinue", "rc"))
        return report(d, es_dbg_reverse_continue(d), out);
    if (is(c, "print", "p"))
        return cmd_print(d, t, n, out);
    if (is(c, "x", NULL)) {
        uint64_t len = 64;
        if (n < 2 || n > 3)
            return err(out, "x ADDR [N]");
        if (es_dbg_resolve(d, t[1], &v, e, sizeof e))
            return err(out, "%s", e);
        if (n == 3 && !parse_num(t[2], &len))
            return err(out, "%s: not a byte count", t[2]);
        hexdump(d, v, len, out);
        return ES_DBG_CMD_OK;
    }
    if (is(c, "mem", NULL)) {
        if (n != 2)
            return err(out, "mem ADDR|REG");
        if (dbg_reg_by_name(t[1]) >= 0) {
            snprintf(d->memview_reg, sizeof d->memview_reg, "%s", t[1]);
        } else {
            if (es_dbg_resolve(d, t[1], &v, e, sizeof e))
                return err(out, "%s", e);
            d->memview_reg[0] = 0;
            d->memview_addr = v;
        }
        say(out, "memory view at 0x%llx\n", (unsigned long long)es_dbg_memview(d));
        return ES_DBG_CMD_OK;
    }
    if (is(c, "syntax", NULL)) {
        if (n != 2 || (strcmp(t[1], "intel") && strcmp(t[1], "att")))
            return err(out, "syntax intel|att");
        es_dbg_set_syntax(d, strcmp(t[1], "att") ? ES_SYNTAX_INTEL : ES_SYNTAX_ATT);
        return ES_DBG_CMD_OK;
    }
    if (is(c, "restart", NULL))
        return cmd_restart(d, t, n, out);
    if (is(c, "screenshot", NULL)) {
        if (n != 2)
            return err(out, "screenshot FILE");
        if (!d->shot)
            return err(out, "screenshot needs the window (entrysim debug)");
        if (d->shot(d->shot_ctx, d, t[1], e, sizeof e))
            return err(out, "screenshot: %s", e);
        return ES_DBG_CMD_OK;
    }
    if (is(c, "help", "h")) {
        say(out, "%s", help_text);
        return ES_DBG_CMD_OK;
    }
    if (is(c, "quit", "q"))
        return ES_DBG_CMD_QUIT;
    return err(out, "%s: unknown command (try help)", c);
}

int es_dbg_exec_file(es_dbg *d, const char *path, FILE *out)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return err(out, "%s: %s", path, strerror(errno));
    char line[512];
    int rc = ES_DBG_CMD_OK, lineno = 0;
    while (rc == ES_DBG_CMD_OK && fgets(line, sizeof line, f)) {
        lineno++;
        size_t l = strlen(line);
        if (l == sizeof line - 1 && line[l - 1] != '\n') {
            rc = err(out, "%s:%d: line too long", path, lineno);
            break;
        }
        if (l && line[l - 1] == '\n')
            line[l - 1] = 0;
        if (out)
            say(out, "> %s\n", line);
        rc = es_dbg_exec(d, line, out);
        if (rc == ES_DBG_CMD_ERROR)
            say(out, "%s:%d: stopped at this error\n", path, lineno);
    }
    fclose(f);
    return rc;
}
