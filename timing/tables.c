/* tables.c - the cycle model's data: parses the text of tables/uarch/ that
 * tables/uarch/embed.py put into the binary (es_uarch_data.h).
 *
 * Files and formats are described in tables/uarch/README.md.  Every number
 * the model uses comes from there; a missing required parameter or
 * privileged form is an error of es_timing_new (loud), never a silent
 * default in C.
 */
#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "es_uarch_data.h"
#include "tm_int.h"

const char *const tm_priv_names[TP_COUNT] = {
    "syscall", "sysret", "sysenter", "sysexit", "int", "iretq", "swapgs", "wrmsr",
    "rdmsr", "wrmsr_spec_ctrl", "mov_cr3", "mov_cr3_noflush", "mov_cr_other", "lfence",
    "mfence", "sfence", "cpuid", "rdtsc", "rdtscp", "vmcall", "lgdt", "lidt", "ltr",
    "cli", "sti", "invlpg", "hlt", "exception", "verw"};

static const char *const gpr_names[16] = {"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
                                          "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"};

const char *const *es_timing_uarchs(void) { return es_uarch_names; }

/* ---- .cfg: "key = value  # source" ---- */

typedef struct cfg_kv {
    char key[48];
    char val[160];
} cfg_kv;

typedef struct cfg {
    cfg_kv *kv;
    size_t n;
    char file[48];
    char *err;
    size_t errlen;
    int bad;
} cfg;

static void trim(char *s)
{
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = 0;
    size_t i = 0;
    while (isspace((unsigned char)s[i]))
        i++;
    memmove(s, s + i, n - i + 1);
}

/* Copies the next line of *p into buf (truncated), advances *p; 0 at end. */
static int next_line(const char **p, char *buf, size_t cap)
{
    if (!**p)
        return 0;
    const char *e = strchr(*p, '\n');
    size_t n = e ? (size_t)(e - *p) : strlen(*p);
    size_t k = n < cap - 1 ? n : cap - 1;
    memcpy(buf, *p, k);
    buf[k] = 0;
    *p += n + (e ? 1 : 0);
    return 1;
}

static int cfg_parse(cfg *c, const char *text)
{
    size_t cap = 1;
    for (const char *p = text; *p; p++)
        cap += *p == '\n';
    c->kv = calloc(cap, sizeof *c->kv);
    if (!c->kv) {
        snprintf(c->err, c->errlen, "out of memory");
        return -1;
    }
    char line[512];
    int lineno = 0;
    for (const char *p = text; next_line(&p, line, sizeof line);) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        trim(line);
        if (!line[0])
            continue;
        char *eq = strchr(line, '=');
        if (!eq) {
            snprintf(c->err, c->errlen, "%s line %d: expected key = value", c->file, lineno);
            return -1;
        }
        *eq = 0;
        cfg_kv *kv = &c->kv[c->n++];
        snprintf(kv->key, sizeof kv->key, "%.47s", line);
        snprintf(kv->val, sizeof kv->val, "%.159s", eq + 1);
        trim(kv->key);
        trim(kv->val);
    }
    return 0;
}

static const char *cfg_str(cfg *c, const char *key)
{
    for (size_t i = c->n; i-- > 0;) /* the last definition wins */
        if (!strcmp(c->kv[i].key, key))
            return c->kv[i].val;
    return NULL;
}

/* A required numeric parameter; records the first missing or bad one. */
static uint32_t cfg_num(cfg *c, const char *key)
{
    const char *v = cfg_str(c, key);
    char *end = NULL;
    double d = v ? strtod(v, &end) : 0;
    if (!v || end == v || *end || d < 0 || d > 1e9) {
        if (!c->bad)
            snprintf(c->err, c->errlen, "%s: %s parameter %s", c->file, v ? "bad" : "missing", key);
        c->bad = 1;
        return 0;
    }
    return (uint32_t)d;
}

static uint32_t log2u(uint32_t v)
{
    uint32_t s = 0;
    while ((1u << s) < v)
        s++;
    return s;
}

/* Geometry of a cache level `unit` (unit.size_kb, unit.assoc, unit.latency;
 * the line size is l1d.line_bytes for all levels). */
static tm_cache_cfg cache_of(cfg *c, const char *unit, uint32_t line, bool has_latency)
{
    char k[64];
    tm_cache_cfg r = {0};
    snprintf(k, sizeof k, "%s.size_kb", unit);
    uint32_t size = cfg_num(c, k) * 1024u;
    snprintf(k, sizeof k, "%s.assoc", unit);
    r.ways = cfg_num(c, k);
    if (has_latency) {
        snprintf(k, sizeof k, "%s.latency", unit);
        r.latency = cfg_num(c, k);
    }
    r.line_shift = log2u(line ? line : 64);
    r.sets = r.ways && line ? size / line / r.ways : 1;
    if (!r.sets)
        r.sets = 1;
    return r;
}

/* A TLB level: unit.<lvl>_entries and unit.<lvl>_assoc, 4 KiB pages. */
static tm_cache_cfg tlb_of(cfg *c, const char *unit, const char *lvl)
{
    char k[64];
    tm_cache_cfg r = {0};
    snprintf(k, sizeof k, "%s.%s_entries", unit, lvl);
    uint32_t entries = cfg_num(c, k);
    snprintf(k, sizeof k, "%s.%s_assoc", unit, lvl);
    r.ways = cfg_num(c, k);
    r.line_shift = 12;
    r.sets = r.ways ? entries / r.ways : 1;
    if (!r.sets)
        r.sets = 1;
    return r;
}

/* Whether `name` is in the comma-separated list `list`. */
static bool in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p && *p;) {
        while (*p == ' ' || *p == ',')
            p++;
        const char *e = p;
        while (*e && *e != ',' && *e != ' ')
            e++;
        if ((size_t)(e - p) == n && !strncmp(p, name, n))
            return true;
        p = e;
    }
    return false;
}

/* ---- per-form tables ---- */

static uint32_t hash_str(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

const tm_row *tm_find_form(const tm_uarch *u, const char *form)
{
    for (uint32_t i = hash_str(form) & u->hmask;; i = (i + 1) & u->hmask) {
        uint32_t r = u->hash[i];
        if (r == UINT32_MAX)
            return NULL;
        if (!strcmp(u->rows[r].form, form))
            return &u->rows[r];
    }
}

static int add_port(tm_uarch *u, const char *name, uint32_t units, char *err, size_t errlen)
{
    if (u->nports + (int)units > TM_MAXPORTS) {
        snprintf(err, errlen, "%s: more than %d execution ports", u->name, TM_MAXPORTS);
        return -1;
    }
    for (uint32_t k = 0; k < units; k++) {
        if (units > 1)
            snprintf(u->port_name[u->nports], sizeof u->port_name[0], "%s.%u", name, k);
        else
            snprintf(u->port_name[u->nports], sizeof u->port_name[0], "%s", name);
        u->nports++;
    }
    return 0;
}

/* Mask of the ports named `name` or `name.K` (0 when none is). */
static uint32_t ports_named(const tm_uarch *u, const char *name)
{
    size_t n = strlen(name);
    uint32_t m = 0;
    for (int p = 0; p < u->nports; p++)
        if (!strncmp(u->port_name[p], name, n) &&
            (u->port_name[p][n] == 0 || u->port_name[p][n] == '.'))
            m |= 1u << p;
    return m;
}

/* Port mask of resource `name` (all its units), adding it when new. */
static int port_mask(tm_uarch *u, cfg *c, const char *name, uint32_t *mask, char *err,
                     size_t errlen)
{
    uint32_t m = ports_named(u, name);
    if (!m) {
        char k[64];
        snprintf(k, sizeof k, "units.%s", name);
        for (char *q = k; *q; q++) /* .cfg keys are lower case */
            *q = (char)tolower((unsigned char)*q);
        const char *v = cfg_str(c, k);
        uint32_t units = v ? (uint32_t)atoi(v) : 1; /* one unit unless the .cfg says */
        if (!units)
            units = 1;
        int first = u->nports;
        if (add_port(u, name, units, err, errlen))
            return -1;
        for (int p = first; p < u->nports; p++)
            m |= 1u << p;
    }
    *mask = m;
    return 0;
}

/* Resources of one pressure string that share a group of uops: the same
 * name stem and the same cycles. */
typedef struct port_share {
    char stem[16];
    int q;
    uint32_t mask;
    double total;
    bool exact; /* a resource named in ports.exact_occupancy */
} port_share;

/* The mask of a .cfg list of port names ("ALU0,ALU1"), creating them. */
static int list_mask(tm_uarch *u, cfg *c, const char *list, uint32_t *mask, char *err,
                     size_t errlen)
{
    *mask = 0;
    for (const char *p = list; *p;) {
        char tok[16];
        size_t n = strcspn(p, ", ");
        snprintf(tok, sizeof tok, "%.*s", (int)(n < 15 ? n : 15), p);
        p += n + strspn(p + n, ", ");
        uint32_t m;
        if (tok[0] && port_mask(u, c, tok, &m, err, errlen))
            return -1;
        *mask |= tok[0] ? m : 0;
    }
    return 0;
}

/* A core wider than its tables' (tables.base): `ports.widen = FROM > TO;
 * FROM > TO...`: a group of uops the base core spreads over exactly FROM
 * runs on any of TO (Zen 4's four integer ALUs -> Zen 5's six; its one
 * multiplier pipe -> three). */
static int widen_groups(tm_uarch *u, cfg *c, port_share *grp, int ng, char *err, size_t errlen)
{
    const char *rules = cfg_str(c, "ports.widen");
    for (const char *r = rules; r && *r;) {
        char from[80] = "", to[80] = "";
        size_t n = strcspn(r, ";");
        const char *gt = memchr(r, '>', n);
        if (!gt) {
            snprintf(err, errlen, "%s: ports.widen: a rule is FROM > TO", c->file);
            return -1;
        }
        snprintf(from, sizeof from, "%.*s", (int)(gt - r), r);
        snprintf(to, sizeof to, "%.*s", (int)(r + n - gt - 1), gt + 1);
        r += n + (r[n] == ';');
        trim(from), trim(to);
        uint32_t fm, tm;
        if (list_mask(u, c, from, &fm, err, errlen) || list_mask(u, c, to, &tm, err, errlen))
            return -1;
        for (int g = 0; g < ng; g++)
            if (grp[g].mask == fm)
                grp[g].mask = tm;
    }
    return 0;
}

/* The groups of the pressure string s into grp[0..*ng) (at most 8). */
static int port_shares(tm_uarch *u, cfg *c, const char *s, port_share *grp, int *ng,
                       char *err, size_t errlen)
{
    const char *lsu = cfg_str(c, "ports.lsu_modelled");
    for (const char *p = s; *p;) {
        const char *e = strchr(p, '+');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        char tok[48];
        if (n >= sizeof tok)
            n = sizeof tok - 1;
        memcpy(tok, p, n);
        tok[n] = 0;
        p += n + (e ? 1 : 0);
        char *colon = strchr(tok, ':');
        if (!colon)
            continue;
        *colon = 0;
        double cyc = atof(colon + 1);
        if (cyc <= 0 || in_list(lsu, tok))
            continue;
        uint32_t mask;
        if (port_mask(u, c, tok, &mask, err, errlen))
            return -1;
        char stem[16];
        snprintf(stem, sizeof stem, "%.15s", tok);
        for (char *q = stem; *q; q++)
            if (isdigit((unsigned char)*q)) {
                *q = 0;
                break;
            }
        int q = (int)lround(cyc * 10); /* 0.33 and 0.34 are the same share */
        int g;
        for (g = 0; g < *ng; g++)
            if (!strcmp(grp[g].stem, stem) && abs(grp[g].q - q) <= 1)
                break;
        if (g == *ng) {
            if (*ng == 8)
                continue;
            grp[g] = (port_share){.q = q};
            snprintf(grp[g].stem, sizeof grp[g].stem, "%s", stem);
            ++*ng;
        }
        grp[g].mask |= mask;
        grp[g].total += cyc;
        grp[g].exact |= in_list(cfg_str(c, "ports.exact_occupancy"), tok);
    }
    return widen_groups(u, c, grp, *ng, err, errlen);
}

/* The uops of one group of a form with `uops` uops. */
static void group_of(const port_share *sh, uint16_t uops, tm_group *t)
{
    t->mask = sh->mask;
    int members = __builtin_popcount(sh->mask);
    long total = lround(sh->total);
    if (total < 1)
        total = 1;
    if (members == 1 && total > 1) {
        /* one unit busy for several cycles: not pipelined (divider) */
        t->n = 1;
        t->occ = (uint16_t)(total > 255 ? 255 : total);
        return;
    }
    /* uops spread over a set; never more uops than the form has */
    long n = total;
    if (uops && n > uops)
        n = uops;
    t->n = (uint16_t)n;
    t->occ = 1;
    /* fewer uops than the group's busy cycles (llvm "FP45:2" for
     * the one-uop movq xmm, r64, rthroughput 1): on the groups
     * ports.exact_occupancy names, each uop holds its unit for its
     * share so the form keeps llvm's throughput; elsewhere llvm's
     * extra cycles are artefacts (mov r32, imm32 at 0.5/cycle) */
    if (total > n && sh->exact) {
        long occ = (total + n - 1) / n;
        t->occ = (uint16_t)(occ > 255 ? 255 : occ);
    }
}

/* llvm-mca's resource pressure "ALU0:0.25+ALU1:0.25+...": resources with
 * the same name stem and the same cycles share one group of uops (a uop
 * that may go to any of them); memory resources (ports.lsu_modelled) are
 * left to the load/store unit of the model. */
static int parse_ports(tm_uarch *u, cfg *c, const char *s, uint16_t uops, tm_cost *out,
                       char *err, size_t errlen)
{
    port_share grp[8];
    int ng = 0;
    out->ngroups = 0;
    if (!strcmp(s, "-"))
        return 0;
    if (port_shares(u, c, s, grp, &ng, err, errlen))
        return -1;
    for (int g = 0; g < ng && out->ngroups < TM_MAXGROUPS; g++)
        group_of(&grp[g], uops, &out->g[out->ngroups++]);
    return 0;
}

/* Column positions of a .tsv header. */
typedef struct cols {
    int form, uops, lat, ports, load, store;
} cols;

static int split_tabs(char *line, char **f, int max)
{
    int n = 0;
    for (char *p = line; n < max;) {
        f[n++] = p;
        char *t = strchr(p, '\t');
        if (!t)
            break;
        *t = 0;
        p = t + 1;
    }
    return n;
}

/* The next row of a .tsv text into line, its fields in f (at most max),
 * skipping comments and blank lines; returns the field count, 0 at the end. */
static int next_row(const char **p, char *line, size_t cap, int *lineno, char **f, int max)
{
    while (next_line(p, line, cap)) {
        ++*lineno;
        if (line[0] == '#' || !line[0])
            continue;
        return split_tabs(line, f, max);
    }
    return 0;
}

static int col_of(char **f, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(f[i], name))
            return i;
    return -1;
}

static int add_row(tm_uarch *u, const char *form, const tm_cost *cost, size_t *cap,
                   bool is_override)
{
    for (size_t i = 0; is_override && i < u->nrows; i++) /* overrides replace */
        if (!strcmp(u->rows[i].form, form)) {
            u->rows[i].cost = *cost;
            return 0;
        }
    if (u->nrows == *cap) {
        size_t nc = *cap ? *cap * 2 : 1024;
        tm_row *r = realloc(u->rows, nc * sizeof *r);
        if (!r)
            return -1;
        u->rows = r;
        *cap = nc;
    }
    tm_row *r = &u->rows[u->nrows];
    r->form = strdup(form);
    if (!r->form)
        return -1;
    const char *m = form;
    if (!strncmp(m, "lock ", 5))
        m += 5;
    else if (!strncmp(m, "rep ", 4))
        m += 4;
    r->mnem = strndup(m, strcspn(m, " "));
    if (!r->mnem)
        return -1;
    r->cost = *cost;
    u->nrows++;
    return 0;
}

static int parse_tsv(tm_uarch *u, cfg *c, const char *text, const char *file, size_t *cap,
                     bool is_override, char *err, size_t errlen)
{
    char line[1024];
    char *f[16];
    cols k = {-1, -1, -1, -1, -1, -1};
    int lineno = 0, n;
    for (const char *p = text; (n = next_row(&p, line, sizeof line, &lineno, f, 16));) {
        if (k.form < 0) {
            k = (cols){col_of(f, n, "form"), col_of(f, n, "uops"), col_of(f, n, "latency"),
                       col_of(f, n, "ports"), col_of(f, n, "load"), col_of(f, n, "store")};
            if (k.form < 0 || k.uops < 0 || k.lat < 0 || k.ports < 0 || k.load < 0 ||
                k.store < 0) {
                snprintf(err, errlen, "%s line %d: header lacks form/uops/latency/ports/load/store",
                         file, lineno);
                return -1;
            }
            continue;
        }
        int need = k.form;
        const int idx[] = {k.uops, k.lat, k.ports, k.load, k.store};
        for (int i = 0; i < 5; i++)
            if (idx[i] > need)
                need = idx[i];
        if (n <= need) {
            snprintf(err, errlen, "%s line %d: %d columns, expected more", file, lineno, n);
            return -1;
        }
        tm_cost cost = {0};
        cost.uops = (uint16_t)atoi(f[k.uops]);
        cost.lat = (uint16_t)lround(atof(f[k.lat]));
        cost.load = (uint8_t)atoi(f[k.load]);
        cost.store = (uint8_t)atoi(f[k.store]);
        if (parse_ports(u, c, f[k.ports], cost.uops, &cost, err, errlen) ||
            add_row(u, f[k.form], &cost, cap, is_override)) {
            if (!err[0])
                snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    if (k.form < 0) {
        snprintf(err, errlen, "%s: no header line", file);
        return -1;
    }
    return 0;
}

static int parse_priv(tm_uarch *u, const char *text, char *err, size_t errlen)
{
    bool seen[TP_COUNT] = {0};
    char line[512];
    char *f[8];
    int lineno = 0, n;
    for (const char *p = text; (n = next_row(&p, line, sizeof line, &lineno, f, 8));) {
        if (n < 3) {
            snprintf(err, errlen, "%s.priv.tsv line %d: expected form, cycles, kind, source",
                     u->name, lineno);
            return -1;
        }
        if (!strcmp(f[0], "form")) /* optional header */
            continue;
        int i;
        for (i = 0; i < TP_COUNT; i++)
            if (!strcmp(f[0], tm_priv_names[i]))
                break;
        if (i == TP_COUNT)
            continue; /* a form the model does not use yet */
        char *end;
        double cyc = strtod(f[1], &end);
        if (end == f[1] || cyc < 0 || cyc > 1e6 ||
            (strcmp(f[2], "serialising") && strcmp(f[2], "pipelined"))) {
            snprintf(err, errlen, "%s.priv.tsv line %d: bad cycles or kind", u->name, lineno);
            return -1;
        }
        u->priv[i].cycles = (uint32_t)lround(cyc);
        u->priv[i].serialising = !strcmp(f[2], "serialising");
        seen[i] = true;
    }
    for (int i = 0; i < TP_COUNT; i++)
        if (!seen[i]) {
            snprintf(err, errlen, "%s.priv.tsv lacks the form %s", u->name, tm_priv_names[i]);
            return -1;
        }
    return 0;
}

/* ---- lookup of forms the tables do not list exactly ---- */

static int kind_class(const char *k)
{
    if (k[0] == 'r' && isdigit((unsigned char)k[1]))
        return 1;
    if (k[0] == 'm' && (isdigit((unsigned char)k[1]) || k[1] == 0 || k[1] == '['))
        return 2;
    if (!strncmp(k, "imm", 3) || !strcmp(k, "one"))
        return 3;
    if (!strcmp(k, "xmm") || !strcmp(k, "ymm") || !strcmp(k, "zmm"))
        return 4;
    return 5;
}

const tm_row *tm_find_similar(const tm_uarch *u, const char *mnem, const char *const *kinds,
                              int nkinds)
{
    const tm_row *best = NULL;
    int best_score = -1000;
    for (size_t i = 0; i < u->nrows; i++) {
        const tm_row *r = &u->rows[i];
        if (strcmp(r->mnem, mnem) || strstr(r->form, "(zero idiom)"))
            continue;
        /* operand kinds of the row */
        const char *ops = strstr(r->form, r->mnem) + strlen(r->mnem);
        char *rk[4];
        int nk = 0;
        char tmp[128];
        snprintf(tmp, sizeof tmp, "%s", ops);
        for (char *t = strtok(tmp, ", "); t && nk < 4; t = strtok(NULL, ", "))
            rk[nk++] = t;
        int score = nk == nkinds ? 10 : -10 - abs(nk - nkinds);
        for (int j = 0; j < nk && j < nkinds; j++) {
            if (!strcmp(rk[j], kinds[j]))
                score += 3;
            else if (kind_class(rk[j]) == kind_class(kinds[j]))
                score += 1;
            else
                score -= 5;
        }
        if (score > best_score) {
            best_score = score;
            best = r;
        }
    }
    return best;
}

/* ---- loading ---- */

static uint32_t gpr_mask_of(const char *list)
{
    uint32_t m = 0;
    for (int r = 0; r < 16; r++)
        if (in_list(list, gpr_names[r]) || in_list(list, "any"))
            m |= 1u << r;
    return m;
}

void tm_uarch_free(tm_uarch *u)
{
    for (size_t i = 0; i < u->nrows; i++) {
        free(u->rows[i].form);
        free(u->rows[i].mnem);
    }
    free(u->rows);
    free(u->hash);
    memset(u, 0, sizeof *u);
}

/* The embedded tables of `name`; NULL with a message when it is unknown
 * or lacks a required file. */
static const es_uarch_data *uarch_data(const char *name, char *err, size_t errlen)
{
    const es_uarch_data *d = NULL;
    for (const es_uarch_data *e = es_uarch_table; e->name; e++)
        if (!strcmp(e->name, name))
            d = e;
    if (!d) {
        char list[128] = "";
        for (const es_uarch_data *e = es_uarch_table; e->name; e++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
                     list[0] ? ", " : "", e->name);
        snprintf(err, errlen, "unknown microarchitecture '%s' (known: %s)", name, list);
        return NULL;
    }
    return d;
}

/* The tables a uarch runs on: its own, or for the ones it lacks those of
 * the uarch its .cfg names as `tables.base` (a core whose per-form costs no
 * LLVM release models yet: its own .cfg says what differs).  The base's
 * published and measured overrides are its core's, so they do not carry
 * over. */
static int resolve_tables(cfg *c, const char *name, es_uarch_data *dd, char *err, size_t errlen)
{
    const char *base = cfg_str(c, "tables.base");
    if (base && (!dd->llvm || !dd->priv)) {
        const es_uarch_data *b = uarch_data(base, err, errlen);
        if (!b)
            return -1;
        dd->llvm = dd->llvm ? dd->llvm : b->llvm;
        dd->priv = dd->priv ? dd->priv : b->priv;
    }
    if (!dd->llvm) {
        snprintf(err, errlen, "tables/uarch/%s.llvm.tsv is missing", name);
        return -1;
    }
    if (!dd->priv) {
        snprintf(err, errlen, "tables/uarch/%s.priv.tsv is missing (privileged transitions)", name);
        return -1;
    }
    return 0;
}

/* A required .cfg number and the tm_uarch field it adds to (two rows for
 * one field sum: sched.int_entries + sched.fp_entries). */
typedef struct cfg_field {
    const char *key;
    size_t off;
} cfg_field;

#define F(key, field) {key, offsetof(tm_uarch, field)}
/* in the order they are read: the first missing one is the one reported */
static const cfg_field core_fields[] = {
    F("fetch.bytes_per_cycle", fetch_bytes),
    F("fetch.taken_branch_bubble", taken_branch_bubble),
    F("fetch.taken_branch_ends_group", taken_ends_group),
    F("fetch.l2_stream_cycles_per_line", l2_stream_cycles),
    F("decode.width", decode_width),
    F("opcache.entries", opcache_entries),
    F("opcache.ops_per_cycle", opcache_ops),
    F("opcache.assoc", opcache_ways),
    F("dispatch.width", dispatch_width),
    F("retire.width", retire_width),
    F("rob.entries", rob_entries),
    F("sched.int_entries", sched_entries),
    F("sched.fp_entries", sched_entries),
    F("rename.macro_fusion", macro_fusion),
    F("rename.move_elimination", move_elim),
    F("rename.zero_idioms", zero_idioms),
    F("rename.sbb_same_reg_independent", sbb_same_independent),
    F("rename.mov_alu_fusion", mov_alu_fusion),
    F("rename.mov_alu_fusion_read_alu", mov_alu_fusion_read_alu),
    F("lea.encoded_zero_disp", lea_encoded_zero_disp),
    F("rename.cmov_multi_flag", cmov_multi_flag),
    F("rename.stack_engine", stack_engine),
    F("lsu.loads_per_cycle", load_pipes),
    F("lsu.stores_per_cycle", store_pipes),
    F("lsu.vec_stores_per_cycle", vec_store_pipes),
    F("lsu.memops_per_cycle", agus),
    F("lsu.store_occupancy", store_occupancy),
    F("lsu.store_pair_bytes", store_pair_line),
    F("lsu.mem_ops_per_1000_cycles", mem_ops_per_kcycle),
    F("lsu.load_queue", load_queue),
    F("lsu.store_queue", store_queue),
    F("lsu.stlf_latency", stlf_latency),
    F("lsu.stlf_fail_penalty", stlf_fail_penalty),
    F("lsu.split_penalty", split_penalty),
    F("memrename.enabled", memrename),
    F("memrename.latency", memrename_latency),
    F("lsu.complex_addr_latency", complex_addr_latency),
    F("l1d.alias_penalty", alias_penalty),
    F("l1d.alias_loads_only", alias_loads_only),
    F("l1d.latency", l1d_latency),
    F("l1d.fp_latency", l1d_fp_latency),
    F("llvm.load_latency", llvm_load_latency),
    F("llvm.fp_load_latency", llvm_fp_load_latency),
    F("mem.latency", mem_latency),
};
static const cfg_field pred_fields[] = {
    F("pagewalk.latency", pagewalk_latency),
    F("bpred.bht_entries", bht_entries),
    F("btb.l1_entries", btb_entries),
    F("btb.l2_entries", btb_entries),
    F("ras.entries", ras_entries),
    F("branch.mispredict_penalty", mispredict_penalty),
};
#undef F

static void read_fields(tm_uarch *u, cfg *c, const cfg_field *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        *(uint32_t *)((char *)u + f[i].off) += cfg_num(c, f[i].key);
}

/* Every .cfg parameter of the core, caches, TLBs and predictors; -1 with
 * c's message on the first missing or bad one, or a zero width. */
static int read_params(tm_uarch *u, cfg *c, const char *name, char *err, size_t errlen)
{
    read_fields(u, c, core_fields, sizeof core_fields / sizeof core_fields[0]);
    const char *bases = cfg_str(c, "memrename.bases");
    u->memrename_bases = bases ? gpr_mask_of(bases) : 0;
    uint32_t line = cfg_num(c, "l1d.line_bytes");
    u->l1i = cache_of(c, "l1i", line, false);
    u->l1d = cache_of(c, "l1d", line, true);
    u->l2 = cache_of(c, "l2", line, true);
    u->l3 = cache_of(c, "l3", line, true);
    u->itlb1 = tlb_of(c, "itlb", "l1");
    u->itlb2 = tlb_of(c, "itlb", "l2");
    u->itlb2.latency = cfg_num(c, "itlb.l2_latency");
    u->dtlb1 = tlb_of(c, "dtlb", "l1");
    u->dtlb2 = tlb_of(c, "dtlb", "l2");
    u->dtlb2.latency = cfg_num(c, "dtlb.l2_latency");
    read_fields(u, c, pred_fields, sizeof pred_fields / sizeof pred_fields[0]);
    u->dflt.uops = (uint16_t)cfg_num(c, "default.uops");
    u->dflt.lat = (uint16_t)cfg_num(c, "default.latency");
    if (c->bad)
        return -1;
    if (!u->dispatch_width || !u->retire_width || !u->rob_entries || !u->load_pipes ||
        !u->store_pipes || !u->agus || !u->store_queue || !u->store_occupancy) {
        snprintf(err, errlen, "%s.cfg: widths, rob.entries and lsu.* must be positive", name);
        return -1;
    }
    return 0;
}

/* The default form (forms no table knows) runs on the integer ALUs. */
static int default_form(tm_uarch *u, cfg *c, const char *name, char *err, size_t errlen)
{
    const char *alus = cfg_str(c, "ports.int_alu");
    if (!alus) {
        snprintf(err, errlen, "%s.cfg: missing parameter ports.int_alu", name);
        return -1;
    }
    u->dflt.ngroups = 1;
    u->dflt.g[0].n = 1;
    u->dflt.g[0].occ = 1;
    for (const char *p = alus; *p;) {
        char tok[16];
        size_t n = strcspn(p, ", ");
        snprintf(tok, sizeof tok, "%.*s", (int)(n < 15 ? n : 15), p);
        p += n;
        while (*p == ',' || *p == ' ')
            p++;
        uint32_t m;
        if (tok[0] && port_mask(u, c, tok, &m, err, errlen))
            return -1;
        u->dflt.g[0].mask |= tok[0] ? m : 0;
    }
    return 0;
}

/* The per-form rows: llvm's, then the overrides in precedence order
 * (published, then host measurements), and their hash index. */
static int read_forms(tm_uarch *u, cfg *c, const es_uarch_data *d, const char *name,
                      char *err, size_t errlen)
{
    const char *const texts[] = {d->llvm, d->published, d->measured};
    const char *const kinds[] = {"llvm", "published", "measured"};
    size_t cap = 0;
    for (int i = 0; i < 3; i++) {
        char file[64];
        snprintf(file, sizeof file, "%s.%s.tsv", name, kinds[i]);
        if (texts[i] && parse_tsv(u, c, texts[i], file, &cap, i > 0, err, errlen))
            return -1;
    }
    uint32_t hsize = 1;
    while (hsize < u->nrows * 2 + 2)
        hsize <<= 1;
    u->hash = malloc(hsize * sizeof *u->hash);
    if (!u->hash) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    memset(u->hash, 0xff, hsize * sizeof *u->hash);
    u->hmask = hsize - 1;
    for (size_t r = 0; r < u->nrows; r++) {
        uint32_t i = hash_str(u->rows[r].form) & u->hmask;
        while (u->hash[i] != UINT32_MAX)
            i = (i + 1) & u->hmask;
        u->hash[i] = (uint32_t)r;
    }
    return 0;
}

/* The load/store unit's pseudo-ports: loads, stores, vector stores where
 * they have their own pipes, address units. */
static int lsu_ports(tm_uarch *u, char *err, size_t errlen)
{
    if (add_port(u, "LD", u->load_pipes, err, errlen) ||
        add_port(u, "ST", u->store_pipes, err, errlen) ||
        (u->vec_store_pipes && add_port(u, "SV", u->vec_store_pipes, err, errlen)) ||
        add_port(u, "AG", u->agus, err, errlen))
        return -1;
    u->ld_mask = ports_named(u, "LD");
    u->st_mask = ports_named(u, "ST");
    u->stv_mask = ports_named(u, "SV");
    u->ag_mask = ports_named(u, "AG");
    if (!u->vec_store_pipes) /* 0: vector stores share the integer store pipes */
        u->stv_mask = u->st_mask;
    /* a store's chunk number without a 64-bit division per store */
    u->store_pair_shift = 64;
    if (u->store_pair_line && !(u->store_pair_line & (u->store_pair_line - 1)))
        u->store_pair_shift = (uint32_t)__builtin_ctz(u->store_pair_line);
    return 0;
}

int tm_uarch_load(tm_uarch *u, const char *name, char *err, size_t errlen)
{
    memset(u, 0, sizeof *u);
    err[0] = 0;
    const es_uarch_data *d = uarch_data(name, err, errlen);
    if (!d)
        return -1;
    u->name = d->name;
    cfg c = {.err = err, .errlen = errlen};
    snprintf(c.file, sizeof c.file, "%s.cfg", name);
    int rc = -1;
    es_uarch_data dd = *d;
    if (!cfg_parse(&c, d->cfg) && !resolve_tables(&c, name, &dd, err, errlen) &&
        !read_params(u, &c, name, err, errlen) && !default_form(u, &c, name, err, errlen) &&
        !read_forms(u, &c, &dd, name, err, errlen) && !parse_priv(u, dd.priv, err, errlen) &&
        !lsu_ports(u, err, errlen))
        rc = 0;
    free(c.kv);
    if (rc)
        tm_uarch_free(u);
    return rc;
}

/* ---- the model of a CPU (--uarch host) ----
 * Each uarch's .cfg lists the CPUs it models: `cpu.match = VENDOR FAMILY
 * MODEL...`, a model being a number or a range LO-HI (CPUID's displayed
 * family and model).  The names stay in one place: the .cfg files. */

static bool model_matches(const char *list, const char *vendor, unsigned family, unsigned model)
{
    char buf[160];
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL, *tok = strtok_r(buf, " \t", &save);
    if (!tok || strcmp(tok, vendor))
        return false;
    tok = strtok_r(NULL, " \t", &save);
    if (!tok || strtoul(tok, NULL, 0) != family)
        return false;
    while ((tok = strtok_r(NULL, " \t", &save))) {
        char *dash = strchr(tok, '-');
        unsigned long lo = strtoul(tok, NULL, 0), hi = dash ? strtoul(dash + 1, NULL, 0) : lo;
        if (model >= lo && model <= hi)
            return true;
    }
    return false;
}

const char *es_timing_uarch_for_cpu(const char *vendor, unsigned family, unsigned model)
{
    for (const es_uarch_data *d = es_uarch_table; d->name; d++) {
        char err[64];
        cfg c = {.err = err, .errlen = sizeof err};
        if (cfg_parse(&c, d->cfg)) {
            free(c.kv);
            continue;
        }
        const char *list = cfg_str(&c, "cpu.match");
        bool hit = list && model_matches(list, vendor, family, model);
        free(c.kv);
        if (hit)
            return d->name;
    }
    return NULL;
}

