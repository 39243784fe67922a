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

/* One command: its names, its arguments and help as `help` prints them,
 * and the function that runs it.  The table `commands` below is the only
 * list of command names: es_dbg_exec dispatches from it, `help` prints it,
 * and the usage errors quote its `args`. */
typedef struct dbg_cmd dbg_cmd;
typedef int dbg_cmd_fn(es_dbg *d, const dbg_cmd *c, char **t, int n, FILE *out);
struct dbg_cmd {
    const char *name;
    const char *aliases;  /* other words for it, space-separated, or NULL */
    const char *args;     /* as help and usage errors show them ("" none, NULL: args_fn) */
    const char *help;     /* NULL: the help line is the usage alone */
    bool runs;            /* runs the guest: refused once the program stopped */
    int arg;              /* for fn (the es_dbg_run_to target of syscall/kentry/kexit) */
    dbg_cmd_fn *fn;
    void (*args_fn)(char *buf, size_t cap); /* args built from a table (print, vregs) */
};

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

static int print_ptregs(es_dbg *d, char **t, int n, FILE *out)
{
    (void)t, (void)n;
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

static int print_exposure(es_dbg *d, char **args, int nargs, FILE *out)
{
    (void)args, (void)nargs;
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
    return ES_DBG_CMD_OK;
}

static int print_status(es_dbg *d, char **t, int n, FILE *out)
{
    (void)t, (void)n;
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
    return ES_DBG_CMD_OK;
}

static int cmd_usage(FILE *out, const dbg_cmd *c, const char *tail)
{
    char a[256];
    snprintf(a, sizeof a, "%s", c->args ? c->args : "");
    if (!c->args)
        c->args_fn(a, sizeof a);
    return err(out, "%s%s%s%s", c->name, a[0] ? " " : "", a, tail);
}

/* ---- print: its items, a table like the commands' ---- */

typedef int print_fn(es_dbg *d, char **t, int n, FILE *out);

static int print_all_regs(es_dbg *d, char **t, int n, FILE *out)
{
    (void)t, (void)n;
    print_regs(d, out, false);
    return ES_DBG_CMD_OK;
}

static int print_taint(es_dbg *d, char **t, int n, FILE *out)
{
    (void)t, (void)n;
    print_regs(d, out, true);
    return ES_DBG_CMD_OK;
}

static int print_output(es_dbg *d, char **t, int n, FILE *out)
{
    (void)t, (void)n;
    size_t len;
    const char *o = es_dbg_output(d, &len);
    say(out, "%.*s", (int)len, o);
    return ES_DBG_CMD_OK;
}

static int print_wrongpath(es_dbg *d, char **t, int n, FILE *out)
{
    (void)t, (void)n;
    es_dbg_line l[64];
    uint64_t windows;
    size_t k = es_dbg_wrongpath(d, l, 64, &windows);
    if (!d->cfg.speculate)
        return err(out, "print wrongpath: start the session with --speculate");
    if (!k) {
        say(out, "no wrong path run yet\n");
        return ES_DBG_CMD_OK;
    }
    say(out, "wrong-path window %llu, squashed: %zu instructions\n", (unsigned long long)windows, k);
    for (size_t i = 0; i < k; i++) {
        say(out, "  ~ 0x%016llx <%s>  %s  (%s", (unsigned long long)l[i].addr, l[i].sym, l[i].text,
            l[i].executed ? "executed" : "not started");
        if (l[i].filled != UINT64_MAX)
            say(out, ", filled line 0x%llx", (unsigned long long)l[i].filled);
        say(out, ")\n");
    }
    return ES_DBG_CMD_OK;
}

static int print_mem(es_dbg *d, char **t, int n, FILE *out)
{
    uint64_t a, len = 64;
    char e[160];
    if (n < 3)
        return err(out, "print mem ADDR [N]");
    if (es_dbg_resolve(d, t[2], &a, e, sizeof e))
        return err(out, "%s", e);
    if (n > 3 && !parse_num(t[3], &len))
        return err(out, "%s: not a byte count", t[3]);
    hexdump(d, a, len, out);
    return ES_DBG_CMD_OK;
}

/* ---- vector registers ---- */

/* The formats of vector values: the flag after `print ymmN` / `print
 * vregs`, the word of the `vregs` command, and what `help` says. */
static const struct vfmt_name {
    const char *flag, *word;
    int fmt; /* enum es_dbg_vfmt */
} vfmts[] = {
    {"/x", "hex", ES_DBG_VF_HEX},
    {"/f", "float", ES_DBG_VF_FLOAT},
    {"/d", "double", ES_DBG_VF_DOUBLE},
};
#define N_VFMTS (sizeof vfmts / sizeof *vfmts)

/* "/x|/f|/d" (flags) or "hex|float|double" (words), from the table */
static size_t vfmt_list(char *buf, size_t cap, bool words)
{
    size_t o = 0;
    if (cap)
        buf[0] = 0;
    for (size_t i = 0; i < N_VFMTS && o < cap; i++)
        o += (size_t)snprintf(buf + o, cap - o, "%s%s", i ? "|" : "",
                              words ? vfmts[i].word : vfmts[i].flag);
    return o < cap ? o : cap;
}

/* A format flag ("/f") or word ("float"); -1 when it is neither. */
static int vfmt_parse(const char *w)
{
    for (size_t i = 0; i < N_VFMTS; i++)
        if (!strcmp(w, vfmts[i].flag) || !strcmp(w, vfmts[i].word))
            return vfmts[i].fmt;
    return -1;
}

/* The low `bytes` bytes of v (16: XMM, 32: YMM), highest element first
 * (the SDM's notation, so the hex words read as one number); with pad,
 * floats are right-aligned in columns for the list.  Returns the element
 * range as a hint ("q3..q0"). */
static const char *vfmt_str(const es_ymm *v, unsigned bytes, int fmt, bool pad, char *buf,
                            size_t cap)
{
    static const char *const hint[3][2] = {
        {"q1..q0", "q3..q0"}, {"f3..f0", "f7..f0"}, {"d1..d0", "d3..d0"}};
    unsigned size = fmt == ES_DBG_VF_FLOAT ? 4 : 8, n = bytes / size;
    size_t o = 0;
    buf[0] = 0;
    for (unsigned k = n; k-- > 0 && o < cap;) {
        const char *sep = k + 1 < n ? " " : "";
        int w = 0;
        if (fmt == ES_DBG_VF_FLOAT) /* %.9g / %.17g: the exact value back (IEEE 754, 5.12) */
            w = snprintf(buf + o, cap - o, "%s%*.9g", sep, pad ? 15 : 0, (double)v->f[k]);
        else if (fmt == ES_DBG_VF_DOUBLE)
            w = snprintf(buf + o, cap - o, "%s%*.17g", sep, pad ? 24 : 0, v->g[k]);
        else
            w = snprintf(buf + o, cap - o, "%s0x%016llx", sep, (unsigned long long)v->q[k]);
        o += w > 0 ? (size_t)w : 0;
    }
    return hint[fmt == ES_DBG_VF_FLOAT ? 1 : fmt == ES_DBG_VF_DOUBLE ? 2 : 0][bytes == 32];
}

/* The optional format flag at t[i] (default hex); -1 after an error. */
static int vfmt_arg(char **t, int n, int i, FILE *out)
{
    if (n <= i)
        return ES_DBG_VF_HEX;
    int f = vfmt_parse(t[i]);
    char l[64];
    vfmt_list(l, sizeof l, false);
    if (f < 0 || n > i + 1)
        return err(out, "%s: the formats are %s", t[i], l), -1;
    return f;
}

/* print vregs [/x|/f|/d]: the registers the current mode has, as YMM, " *"
 * against those the last run-control command changed */
static int print_vregs(es_dbg *d, char **t, int n, FILE *out)
{
    int fmt = vfmt_arg(t, n, 2, out);
    if (fmt < 0)
        return ES_DBG_CMD_ERROR;
    es_dbg_vreg v[ES_DBG_MAX_VREGS];
    size_t k = es_dbg_vregs(d, v, ES_DBG_MAX_VREGS);
    char s[512];
    for (size_t i = 0; i < k; i++) {
        const char *hint = vfmt_str(&v[i].value, 32, fmt, true, s, sizeof s);
        if (i == 0)
            say(out, "%-6s (%s)\n", "", hint); /* the element order, once */
        say(out, "%-6s %s%s\n", v[i].name, s, v[i].changed ? " *" : "");
    }
    return ES_DBG_CMD_OK;
}

/* print ymmN|xmmN [/x|/f|/d]: one register, all 256 bits or the low 128;
 * false when w names no vector register */
static bool print_vreg(es_dbg *d, const char *w, char **t, int n, FILE *out, int *rc)
{
    if (strncmp(w, "ymm", 3) && strncmp(w, "xmm", 3))
        return false;
    es_dbg_vreg v[ES_DBG_MAX_VREGS];
    size_t k = es_dbg_vregs(d, v, ES_DBG_MAX_VREGS);
    for (size_t i = 0; i < k; i++)
        if (!strcmp(v[i].name + 1, w + 1)) {
            int fmt = vfmt_arg(t, n, 2, out);
            if (fmt < 0) {
                *rc = ES_DBG_CMD_ERROR;
                return true;
            }
            char s[512];
            const char *hint = vfmt_str(&v[i].value, w[0] == 'y' ? 32 : 16, fmt, false, s,
                                        sizeof s);
            say(out, "%s = %s  (%s)\n", w, s, hint);
            *rc = ES_DBG_CMD_OK;
            return true;
        }
    if (k < ES_DBG_MAX_VREGS) {
        *rc = err(out, "%s: compat mode has %cmm0-%zu only", w, w[0], k - 1);
        return true;
    }
    return false;
}

static void vregs_cmd_args(char *buf, size_t cap)
{
    size_t o = (size_t)snprintf(buf, cap, "[off|");
    if (o < cap)
        o += vfmt_list(buf + o, cap - o, true);
    if (o < cap)
        snprintf(buf + o, cap - o, "]");
}

/* vregs [off|hex|float|double]: the window's vector register panel; with
 * no argument hex when hidden, else hidden (the window's key) */
static int cmd_vregs(es_dbg *d, const dbg_cmd *c, char **t, int n, FILE *out)
{
    int f = n == 2 ? vfmt_parse(t[1]) : -1;
    if (n == 2 && !strcmp(t[1], "off"))
        f = ES_DBG_VF_OFF;
    if (n > 2 || (n == 2 && f < 0))
        return cmd_usage(out, c, "");
    if (n == 1)
        f = es_dbg_vregs_view(d) == ES_DBG_VF_OFF ? ES_DBG_VF_HEX : ES_DBG_VF_OFF;
    es_dbg_set_vregs_view(d, f);
    for (size_t i = 0; i < N_VFMTS; i++)
        if (vfmts[i].fmt == f)
            say(out, "vector registers shown as %s\n", vfmts[i].word);
    if (f == ES_DBG_VF_OFF)
        say(out, "vector registers hidden\n");
    return ES_DBG_CMD_OK;
}

/* ---- print's items ---- */

static const struct print_item {
    const char *name, *args;
    print_fn *fn;
    bool vfmt; /* takes a vector format flag (listed after args) */
} print_items[] = {
    {"regs", "", print_all_regs, false},   {"ptregs", "", print_ptregs, false},
    {"taint", "", print_taint, false},     {"exposure", "", print_exposure, false},
    {"status", "", print_status, false},   {"output", "", print_output, false},
    {"mem", " ADDR [N]", print_mem, false}, {"wrongpath", "", print_wrongpath, false},
    {"vregs", "", print_vregs, true},
};
#define N_PRINT_ITEMS (sizeof print_items / sizeof *print_items)

/* "REG|ymmN|xmmN [/x|/f|/d]|regs|...|mem ADDR [N]|vregs [/x|/f|/d]", from
 * the tables */
static void print_args(char *buf, size_t cap)
{
    char f[64];
    vfmt_list(f, sizeof f, false);
    size_t o = (size_t)snprintf(buf, cap, "REG|ymmN|xmmN [%s]|pt_regs.FIELD|*ADDR", f);
    for (size_t i = 0; i < N_PRINT_ITEMS && o < cap; i++)
        o += (size_t)snprintf(buf + o, cap - o, "|%s%s%s%s%s", print_items[i].name,
                              print_items[i].args, print_items[i].vfmt ? " [" : "",
                              print_items[i].vfmt ? f : "", print_items[i].vfmt ? "]" : "");
}

/* print REG: a register by its name in the register list, or by the 32-bit
 * name a 32-bit program's author thinks in */
static int print_reg(es_dbg *d, const char *w, FILE *out)
{
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

/* print pt_regs.FIELD: one slot of the frame the entry code builds */
static int print_slot(es_dbg *d, const char *field, FILE *out)
{
    es_dbg_slot sl[ES_DBG_PTREGS_SLOTS];
    uint64_t base;
    if (es_dbg_ptregs(d, &base, sl))
        return err(out, "no pt_regs: there is no guest kernel");
    for (int i = 0; i < ES_DBG_PTREGS_SLOTS; i++)
        if (!strcmp(sl[i].field, field)) {
            say(out, "pt_regs->%s = 0x%llx  (at 0x%llx%s%s%s%s)\n", field,
                (unsigned long long)sl[i].value, (unsigned long long)(base + sl[i].off),
                sl[i].cleared ? ", cleared" : "", sl[i].taint ? ", {" : "", sl[i].labels,
                sl[i].taint ? "}" : "");
            return ES_DBG_CMD_OK;
        }
    return err(out, "pt_regs has no field '%s'", field);
}

/* print *ADDR: the 8 bytes at ADDR (a symbol, SYM+OFF, a number or a
 * register holding the address) */
static int print_deref(es_dbg *d, const char *spec, FILE *out)
{
    uint64_t a, v = 0;
    char e[160];
    int r = dbg_reg_by_name(spec);
    if (r >= 0)
        a = r == 16 ? d->m->rip : d->m->gpr[r];
    else if (es_dbg_resolve(d, spec, &a, e, sizeof e))
        return err(out, "%s", e);
    if (es_dbg_read(d, a, &v, 8) != 8)
        return err(out, "0x%llx: not mapped", (unsigned long long)a);
    uint64_t off = 0;
    const char *s = es_dbg_symbolize(d, v, &off);
    say(out, "*0x%llx = 0x%llx", (unsigned long long)a, (unsigned long long)v);
    if (s)
        say(out, " <%s+0x%llx>", s, (unsigned long long)off);
    say(out, "\n");
    return ES_DBG_CMD_OK;
}

static int cmd_print(es_dbg *d, const dbg_cmd *c, char **t, int n, FILE *out)
{
    (void)c;
    if (n < 2) {
        char a[256];
        print_args(a, sizeof a);
        return err(out, "print what? %s", a);
    }
    for (size_t i = 0; i < N_PRINT_ITEMS; i++)
        if (!strcmp(t[1], print_items[i].name))
            return print_items[i].fn(d, t, n, out);
    if (!strncmp(t[1], "pt_regs.", 8) || !strncmp(t[1], "pt_regs->", 9))
        return print_slot(d, strchr(t[1], '.') ? strchr(t[1], '.') + 1 : t[1] + 9, out);
    if (t[1][0] == '*')
        return print_deref(d, t[1] + 1, out);
    int rc;
    if (print_vreg(d, t[1], t, n, out, &rc))
        return rc;
    if (n > 2)
        return err(out, "print %s: no format or count after it", t[1]);
    return print_reg(d, t[1], out);
}

static int cmd_restart(es_dbg *d, const dbg_cmd *cmd, char **t, int n, FILE *out)
{
    (void)cmd;
    es_dbg_cfg c = d->cfg;
    char e[320], note[600] = "";
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
            unsigned named;
            if (es_patches_parse_series(v, &c.launch.patches, &named, e, sizeof e))
                return err(out, "%s", e);
            es_patches_note(named, c.launch.patches, note, sizeof note);
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
    if (note[0])
        say(out, "%s\n", note);
    where(d, out);
    return ES_DBG_CMD_OK;
}

/* ---- run control ---- */

/* An optional positive count in t[1] (default 1); false when malformed. */
static bool count_arg(char **t, int n, uint64_t *k)
{
    *k = 1;
    return n < 2 || (n == 2 && parse_num(t[1], k) && *k != 0);
}

static int cmd_step(es_dbg *d, const dbg_cmd *c, char **t, int n, FILE *out)
{
    uint64_t k;
    if (!count_arg(t, n, &k))
        return cmd_usage(out, c, ": N is a positive count");
    return report(d, es_dbg_step(d, k), out);
}

static int cmd_next(es_dbg *d, const dbg_cmd *c, char **t, int n, FILE *out)
{
    (void)c, (void)t, (void)n;
    return report(d, es_dbg_next(d), out);
}

static int cmd_finish(es_dbg *d, const dbg_cmd *c, char **t, int n, FILE *out)
{
    (void)c, (void)t, (void)n;
    return report(d, es_dbg_finish(d), out);
}

static int cmd_continue(es_dbg *d, const dbg_cmd *c, char **t, int n, FILE *out)
{
    (void)c, (void)t, (void)n;
    return report(d, es_dbg_continue(d), out);
}

/* syscall, kentry, kexit: c->arg is the es_dbg_run_to target */
static int cmd_run_to(es_dbg *d, const dbg_cmd *c, char **t, int n, FILE *out)
{
    (void)t, (void)n;
    return report(d, es_dbg_run_to(d, c->arg), out);
}

static int cmd_until(es_dbg *d, const dbg_cmd *c, char **t, int n, FILE *out)
{
    uint64_t v;
    char e[320];
    if (n != 2)
        return cmd_usage(out, c, "");
    if (es_dbg_resolve(d, t[1], &v, e, sizeof e))
        return err(out, "%s", e);
    return report(d, es_dbg_until(d, v), out);
}

static int cmd_reverse(es_dbg *d, const dbg_cmd *c, char **t, int n, FILE *out)
{
    uint64_t k;
    if (!count_arg(t, n, &k) || (n == 2 && t[0][1] == 's')) /* rstep, rs */
        return cmd_usage(out, c, " (rstep takes no count)");
    return report(d, es_dbg_reverse(d, k), out);
}

static int cmd_rcontinue(es_dbg *d, const dbg_cmd *c, char **t, int n, FILE *out)
{
    (void)c, (void)t, (void)n;
    return report(d, es_dbg_reverse_continue(d), out);
}

/* ---- breakpoints ---- */

static int cmd_break(es_dbg *d, const dbg_cmd *c, char **t, int n, FILE *out)
{
    char e[320];
    if (n != 2)
        return cmd_usage(out, c, "");
    int id = es_dbg_break_add(d, t[1], e, sizeof e);
    if (id < 0)
        return err(out, "%s", e);
    say(out, "breakpoint %d at 0x%llx (%s)\n", id, (unsigned long long)d->bps[d->nbps - 1].addr,
        t[1]);
    return ES_DBG_CMD_OK;
}

static int cmd_delete(es_dbg *d, const dbg_cmd *c, char **t, int n, FILE *out)
{
    uint64_t v;
    if (n != 2 || !parse_num(t[1], &v) || v > 1000000)
        return cmd_usage(out, c, "");
    if (es_dbg_break_del(d, (int)v))
        return err(out, "no breakpoint %llu", (unsigned long long)v);
    say(out, "deleted breakpoint %llu\n", (unsigned long long)v);
    return ES_DBG_CMD_OK;
}

static int cmd_breaks(es_dbg *d, const dbg_cmd *c, char **t, int n, FILE *out)
{
    (void)c, (void)t, (void)n;
    for (size_t i = 0; i < d->nbps; i++)
        say(out, "%d  0x%016llx  %s  hits %llu\n", d->bps[i].id,
            (unsigned long long)d->bps[i].addr, d->bps[i].spec,
            (unsigned long long)d->bps[i].hits);
    if (!d->nbps)
        say(out, "no breakpoints\n");
    return ES_DBG_CMD_OK;
}

/* ---- views ---- */

static int cmd_x(es_dbg *d, const dbg_cmd *c, char **t, int n, FILE *out)
{
    uint64_t v, len = 64;
    char e[320];
    if (n < 2 || n > 3)
        return cmd_usage(out, c, "");
    if (es_dbg_resolve(d, t[1], &v, e, sizeof e))
        return err(out, "%s", e);
    if (n == 3 && !parse_num(t[2], &len))
        return err(out, "%s: not a byte count", t[2]);
    hexdump(d, v, len, out);
    return ES_DBG_CMD_OK;
}

static int cmd_mem(es_dbg *d, const dbg_cmd *c, char **t, int n, FILE *out)
{
    uint64_t v;
    char e[320];
    if (n != 2)
        return cmd_usage(out, c, "");
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

static int cmd_syntax(es_dbg *d, const dbg_cmd *c, char **t, int n, FILE *out)
{
    if (n != 2 || (strcmp(t[1], "intel") && strcmp(t[1], "att")))
        return cmd_usage(out, c, "");
    es_dbg_set_syntax(d, strcmp(t[1], "att") ? ES_SYNTAX_INTEL : ES_SYNTAX_ATT);
    return ES_DBG_CMD_OK;
}

static int cmd_screenshot(es_dbg *d, const dbg_cmd *c, char **t, int n, FILE *out)
{
    char e[320];
    if (n != 2)
        return cmd_usage(out, c, "");
    if (!d->shot)
        return err(out, "screenshot needs the window (entrysim debug)");
    if (d->shot(d->shot_ctx, d, t[1], e, sizeof e))
        return err(out, "screenshot: %s", e);
    d->caption[0] = 0; /* a caption is for one screenshot */
    return ES_DBG_CMD_OK;
}

/* disas [N]: N instructions from RIP as text (for handouts and graders) */
static int cmd_disas(es_dbg *d, const dbg_cmd *c, char **t, int n, FILE *out)
{
    uint64_t k = 10;
    if (n > 2 || (n == 2 && (!parse_num(t[1], &k) || k == 0 || k > 200)))
        return cmd_usage(out, c, " (N: 1..200)");
    es_dbg_line *l = calloc(k, sizeof *l);
    if (!l)
        return err(out, "out of memory");
    size_t got = es_dbg_disasm(d, 0, (int)k - 1, l, k);
    for (size_t i = 0; i < got; i++)
        say(out, "%s0x%llx%s%s%s:  %s\n", l[i].current ? "=> " : "   ",
            (unsigned long long)l[i].addr, l[i].sym[0] ? " <" : "", l[i].sym,
            l[i].sym[0] ? ">" : "", l[i].text);
    free(l);
    return ES_DBG_CMD_OK;
}

/* caption TEXT: drawn on the next screenshot (quotes around TEXT dropped) */
static int cmd_caption(es_dbg *d, const dbg_cmd *c, char **t, int n, FILE *out)
{
    (void)c, (void)out;
    char text[sizeof d->caption] = "";
    size_t at = 0;
    for (int i = 1; i < n && at + 1 < sizeof text; i++) {
        int k = snprintf(text + at, sizeof text - at, "%s%s", i > 1 ? " " : "", t[i]);
        at = k < 0 ? at : at + (size_t)k >= sizeof text ? sizeof text - 1 : at + (size_t)k;
    }
    size_t len = strlen(text);
    if (len >= 2 && text[0] == '"' && text[len - 1] == '"') {
        text[len - 1] = 0;
        memmove(text, text + 1, len - 1);
    }
    snprintf(d->caption, sizeof d->caption, "%s", text);
    return ES_DBG_CMD_OK;
}

static int cmd_help(es_dbg *d, const dbg_cmd *c, char **t, int n, FILE *out)
{
    (void)d, (void)c, (void)t, (void)n;
    if (out)
        es_dbg_help(out);
    return ES_DBG_CMD_OK;
}

static int cmd_quit(es_dbg *d, const dbg_cmd *c, char **t, int n, FILE *out)
{
    (void)d, (void)c, (void)t, (void)n, (void)out;
    return ES_DBG_CMD_QUIT;
}

/* In the order `help` lists them.  args NULL: built by print_args. */
static const dbg_cmd commands[] = {
    {"step", "s stepi si", "[N]", "execute N instructions (into calls and the kernel)", true, 0,
     cmd_step, NULL},
    {"next", "n", "", "step over a call, or over a whole system call", true, 0, cmd_next, NULL},
    {"finish", NULL, "", "run to the return of the current function (kernel: to user mode)",
     true, 0, cmd_finish, NULL},
    {"continue", "c", "", "run to a breakpoint or the end of the program", true, 0,
     cmd_continue, NULL},
    {"syscall", NULL, "", "run to the next syscall/sysenter/int 0x80 in user mode", true,
     ES_DBG_TO_SYSCALL, cmd_run_to, NULL},
    {"kentry", NULL, "", "run to the next kernel entry (CPL 3 -> 0)", true, ES_DBG_TO_KENTRY,
     cmd_run_to, NULL},
    {"kexit", NULL, "", "run to the next return to user mode (CPL 0 -> 3)", true,
     ES_DBG_TO_KEXIT, cmd_run_to, NULL},
    {"until", NULL, "SYM|ADDR", "run until RIP reaches SYM or ADDR", true, 0, cmd_until, NULL},
    {"break", "b", "SYM|ADDR",
     "set a breakpoint (user ELF or guest kernel symbol, SYM+OFF, 0xADDR)", false, 0, cmd_break,
     NULL},
    {"delete", "d", "N", "delete breakpoint N", false, 0, cmd_delete, NULL},
    {"breaks", "info", "", "list breakpoints", false, 0, cmd_breaks, NULL},
    {"reverse", "rstep rs", "[N]", "undo N instructions (rstep = reverse 1)", false, 0,
     cmd_reverse, NULL},
    {"rcontinue", "rc", "", "run backwards to a breakpoint or the oldest recorded state", false,
     0, cmd_rcontinue, NULL},
    {"print", "p", NULL, NULL, false, 0, cmd_print, print_args},
    {"x", NULL, "ADDR [N]", "hex dump of N bytes (default 64)", false, 0, cmd_x, NULL},
    {"mem", NULL, "ADDR|REG", "point the memory view at ADDR, or make it follow REG", false, 0,
     cmd_mem, NULL},
    {"syntax", NULL, "intel|att", "disassembly syntax", false, 0, cmd_syntax, NULL},
    {"vregs", NULL, NULL, "the window's vector register panel (no argument: shown/hidden)",
     false, 0, cmd_vregs, vregs_cmd_args},
    {"restart", NULL,
     "[--convention v4.16|v4.17] [--patches LIST] [--mitigations LIST] [--cpu intel|amd]", NULL,
     false, 0, cmd_restart, NULL},
    {"disas", NULL, "[N]", "N instructions from rip as text (default 10)", false, 0, cmd_disas,
     NULL},
    {"caption", NULL, "TEXT", "a line drawn on the next screenshot", false, 0, cmd_caption,
     NULL},
    {"screenshot", NULL, "FILE", "save the window as a PNG", false, 0, cmd_screenshot, NULL},
    {"help", "h", "", "this list", false, 0, cmd_help, NULL},
    {"quit", "q", "", "end the session (a script stops here)", false, 0, cmd_quit, NULL},
};
#define N_COMMANDS (sizeof commands / sizeof *commands)

/* w is the word itself or one of the space-separated words of list. */
static bool in_list(const char *w, const char *list)
{
    size_t n = strlen(w);
    for (const char *p = list; p && *p;) {
        size_t k = strcspn(p, " ");
        if (k == n && !strncmp(p, w, n))
            return true;
        p += k;
        p += *p == ' ';
    }
    return false;
}

static const dbg_cmd *cmd_find(const char *w)
{
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (!strcmp(w, commands[i].name) || in_list(w, commands[i].aliases))
            return &commands[i];
    return NULL;
}

void es_dbg_help(FILE *out)
{
    for (size_t i = 0; i < N_COMMANDS; i++) {
        const dbg_cmd *c = &commands[i];
        char args[256], use[300];
        if (c->args)
            snprintf(args, sizeof args, "%s", c->args);
        else
            c->args_fn(args, sizeof args);
        snprintf(use, sizeof use, "%s%s%s", c->name, args[0] ? " " : "", args);
        if (c->help)
            fprintf(out, "%-18s %s\n", use, c->help);
        else
            fprintf(out, "%s\n", use);
    }
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
    const dbg_cmd *c = cmd_find(t[0]);
    if (!c)
        return err(out, "%s: unknown command (try help)", t[0]);
    if (c->runs && d->exited && d->m->stop == ES_STOP_EXIT)
        return err(out, "the program has exited (status %d): reverse or restart",
                   d->m->exit_status);
    if (c->runs && d->exited)
        return err(out, "the program was stopped (%s): reverse or restart", d->m->message);
    return c->fn(d, c, t, n, out);
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
        if (d->transcript && line[strspn(line, " \t")] && line[strspn(line, " \t")] != '#')
            dbg_transcript_line(d, d->transcript, lineno, line, rc);
        if (rc == ES_DBG_CMD_ERROR)
            say(out, "%s:%d: stopped at this error\n", path, lineno);
    }
    fclose(f);
    return rc;
}
