/* dbg_view.c - the state the window shows, as plain data: registers with
 * change marks and taint labels, disassembly around RIP, struct pt_regs on
 * the kernel stack, live user values, the probe table, memory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dbg_int.h"
#include "kernel.h"
#include "mem.h"

/* One-way dependency: the view uses dbg_syms.c (symbol names beside the
 * disassembly, breakpoint marks, register names) and dbg_syms.c uses
 * nothing here.  Names are the lower layer: resolving "rip" or "SYM+8" is
 * needed by breakpoints and commands without anything being shown, while
 * showing the state always needs the names. */

/* ---- memory without side effects ---- */

static const uint8_t *frame_of(const es_machine *m, uint64_t pa)
{
    uint64_t pfn = pa >> 12;
    return pfn && pfn < m->nframes ? m->frames[pfn].host : NULL;
}

/* The 4-level walk (SDM Vol. 3A, 4.5) without any side effect: no A/D
 * bits set (es_translate sets them, which would change page tables just by
 * looking), no frame materialised.  Paging off: identity.  Returns false
 * when va is not mapped; else *pa and, for paging, *pte_pa (the physical
 * address of the leaf entry, 0 with paging off). */
bool dbg_walk(const es_machine *m, uint64_t va, uint64_t *pa, uint64_t *pte_pa)
{
    if (!(m->cr0 & 0x80000000u)) {
        *pa = va;
        *pte_pa = 0;
        return true;
    }
    uint64_t table = m->cr3 & ES_PTE_ADDR;
    for (int level = 3; level >= 0; level--) {
        const uint8_t *t = frame_of(m, table);
        uint64_t at = table + 8 * ((va >> (12 + 9 * level)) & 511), e;
        if (!t)
            return false;
        memcpy(&e, t + (at & 4095), 8);
        if (!(e & ES_PTE_P))
            return false;
        if (level == 0 || ((level == 1 || level == 2) && (e & ES_PTE_PS))) {
            uint64_t span = 1ull << (12 + 9 * level);
            *pa = (e & ES_PTE_ADDR & ~(span - 1)) | (va & (span - 1));
            *pte_pa = at;
            return true;
        }
        table = e & ES_PTE_ADDR;
    }
    return false;
}

/* Reads through the current page tables with supervisor rights.  Unlike
 * es_kernel_read it never demand-faults a user page in, and it sets no
 * accessed bits: looking does not change the machine.  Frames never
 * touched read as zeros. */
size_t dbg_read(es_machine *m, uint64_t va, void *buf, size_t n)
{
    uint8_t *out = buf;
    size_t got = 0;
    while (got < n) {
        uint64_t v = va + got, pa, pte;
        if (!dbg_walk(m, v, &pa, &pte))
            break;
        size_t c = 4096 - (v & 4095);
        if (c > n - got)
            c = n - got;
        uint64_t pfn = pa >> 12;
        const uint8_t *h = pfn && pfn < m->nframes ? m->frames[pfn].host : NULL;
        if (h)
            memcpy(out + got, h + (pa & 4095), c);
        else
            memset(out + got, 0, c);
        got += c;
    }
    return got;
}

size_t es_dbg_read(es_dbg *d, uint64_t addr, void *buf, size_t n)
{
    return dbg_read(d->m, addr, buf, n);
}

uint64_t es_dbg_memview(es_dbg *d)
{
    const char *r = d->memview_reg[0] ? d->memview_reg : (d->memview_addr ? "" : "rsp");
    int reg = r[0] ? dbg_reg_by_name(r) : -1;
    if (reg >= 0)
        return reg == 16 ? d->m->rip : d->m->gpr[reg];
    return d->memview_addr;
}

/* ---- registers ---- */

static void row(es_dbg_reg *r, const char *name, uint64_t v, int width, int group, es_label t,
                int abi)
{
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", name);
    r->value = v;
    r->width = (uint8_t)width;
    r->group = (uint8_t)group;
    r->taint = t;
    if (t)
        es_taint_label_str(t, abi, r->labels, sizeof r->labels);
}

size_t es_dbg_regs(const es_dbg *d, es_dbg_reg *out, size_t max)
{
    const es_machine *m = d->m;
    es_dbg_reg v[ES_DBG_MAX_REGS];
    size_t n = 0;
    /* labels mean something in the kernel only: user-mode code is not
     * followed (the labels are renewed at each entry), and every user-mode
     * value is the user's anyway */
    const es_taint *t = m->cpl == 0 ? d->taint : NULL;
    for (int i = 0; i < 16; i++)
        row(&v[n++], dbg_gpr_name(i), m->gpr[i], 8, ES_DBG_RG_GPR, t ? es_taint_reg(t, i) : 0,
            d->abi);
    row(&v[n++], "rip", m->rip, 8, ES_DBG_RG_CTRL, 0, d->abi);
    row(&v[n++], "rflags", m->rflags, 4, ES_DBG_RG_CTRL, t ? es_taint_flags(t) : 0, d->abi);
    row(&v[n++], "cpl", m->cpl, 1, ES_DBG_RG_CTRL, 0, d->abi);
    row(&v[n++], "mode", m->mode, 1, ES_DBG_RG_CTRL, 0, d->abi);
    static const char *const segs[6] = {"es", "cs", "ss", "ds", "fs", "gs"};
    static const int order[6] = {ES_SEG_CS, ES_SEG_DS, ES_SEG_ES, ES_SEG_FS, ES_SEG_GS,
                                 ES_SEG_SS};
    for (int i = 0; i < 6; i++)
        row(&v[n++], segs[order[i]], m->seg[order[i]].sel, 2, ES_DBG_RG_SEG, 0, d->abi);
    row(&v[n++], "fs.base", m->seg[ES_SEG_FS].base, 8, ES_DBG_RG_SEG, 0, d->abi);
    row(&v[n++], "gs.base", m->seg[ES_SEG_GS].base, 8, ES_DBG_RG_SEG, 0, d->abi);
    row(&v[n++], "star", m->msr.star, 8, ES_DBG_RG_MSR, 0, d->abi);
    row(&v[n++], "lstar", m->msr.lstar, 8, ES_DBG_RG_MSR, 0, d->abi);
    row(&v[n++], "cstar", m->msr.cstar, 8, ES_DBG_RG_MSR, 0, d->abi);
    row(&v[n++], "sfmask", m->msr.sfmask, 4, ES_DBG_RG_MSR, 0, d->abi);
    row(&v[n++], "sysenter_cs", m->msr.sysenter_cs, 2, ES_DBG_RG_MSR, 0, d->abi);
    row(&v[n++], "sysenter_esp", m->msr.sysenter_esp, 8, ES_DBG_RG_MSR, 0, d->abi);
    row(&v[n++], "sysenter_eip", m->msr.sysenter_eip, 8, ES_DBG_RG_MSR, 0, d->abi);
    row(&v[n++], "kernel_gs_base", m->msr.kernel_gs_base, 8, ES_DBG_RG_MSR, 0, d->abi);
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < d->nprev; k++)
            if (!strcmp(d->prev_regs[k].name, v[i].name))
                v[i].changed = d->prev_regs[k].value != v[i].value;
    if (n > max)
        n = max;
    memcpy(out, v, n * sizeof *v);
    return n;
}

size_t es_dbg_vregs(const es_dbg *d, es_dbg_vreg *out, size_t max)
{
    const es_machine *m = d->m;
    /* compat-mode code encodes only 3 register bits (no REX/VEX.R, SDM
     * Vol. 1, 14.1): YMM8-15 are out of its reach, and listing them would
     * show state the program cannot have touched */
    size_t n = m->mode == ES_MODE_64 ? 16 : 8;
    if (n > max)
        n = max;
    for (size_t i = 0; i < n; i++) {
        es_dbg_vreg *v = &out[i];
        memset(v, 0, sizeof *v);
        snprintf(v->name, sizeof v->name, "ymm%zu", i);
        v->value.x[0] = m->xmm[i];
        v->value.x[1] = m->ymmh[i];
        v->changed = d->have_prev_v && memcmp(&d->prev_vregs[i], &v->value, sizeof v->value);
    }
    return n;
}

void dbg_remember_regs(es_dbg *d)
{
    d->nprev = es_dbg_regs(d, d->prev_regs, ES_DBG_MAX_REGS);
    /* all 16 whatever the mode: a command that enters the kernel from
     * compat mode still marks YMM8-15 against their values before it */
    for (int i = 0; i < ES_DBG_MAX_VREGS; i++) {
        d->prev_vregs[i].x[0] = d->m->xmm[i];
        d->prev_vregs[i].x[1] = d->m->ymmh[i];
    }
    d->have_prev_v = true;
}

int es_dbg_vregs_view(const es_dbg *d) { return d->vregs_view; }
void es_dbg_set_vregs_view(es_dbg *d, int fmt)
{
    d->vregs_view = fmt >= ES_DBG_VF_HEX && fmt <= ES_DBG_VF_OFF ? fmt : ES_DBG_VF_OFF;
}

void es_dbg_flags_str(uint64_t f, char *buf, size_t n)
{
    /* SDM Vol. 1, 3.4.3: the names in bit order from the top */
    static const struct {
        uint64_t bit;
        const char *name;
    } fl[] = {{ES_ID, "ID"}, {ES_AC, "AC"}, {ES_VM, "VM"}, {ES_RF, "RF"}, {ES_NT, "NT"},
              {ES_OF, "OF"}, {ES_DF, "DF"}, {ES_IF, "IF"}, {ES_TF, "TF"}, {ES_SF, "SF"},
              {ES_ZF, "ZF"}, {ES_AF, "AF"}, {ES_PF, "PF"}, {ES_CF, "CF"}};
    size_t k = 0;
    if (n)
        buf[0] = 0;
    for (size_t i = 0; i < sizeof fl / sizeof fl[0]; i++)
        if ((f & fl[i].bit) && k < n)
            k += (size_t)snprintf(buf + k, n - k, "%s%s", k ? " " : "", fl[i].name);
    unsigned iopl = (unsigned)((f & ES_IOPL) >> 12);
    if (iopl && k < n)
        snprintf(buf + k, n - k, "%sIOPL=%u", k ? " " : "", iopl);
}

/* ---- disassembly ---- */

int es_dbg_syntax(const es_dbg *d) { return d->syntax; }
void es_dbg_set_syntax(es_dbg *d, int syntax)
{
    d->syntax = syntax == ES_SYNTAX_ATT ? ES_SYNTAX_ATT : ES_SYNTAX_INTEL;
}

static void line_at(es_dbg *d, uint64_t a, es_dbg_line *l);

size_t es_dbg_wrongpath(es_dbg *d, es_dbg_line *out, size_t max, uint64_t *windows)
{
    *windows = d->wp_windows;
    size_t n = d->wp_nlast < max ? d->wp_nlast : max;
    for (size_t i = 0; i < n; i++) {
        line_at(d, d->wp_last[i].rip, &out[i]);
        out[i].transient = true;
        out[i].executed = d->wp_last[i].executed;
        out[i].filled = d->wp_last[i].filled;
    }
    return n;
}

static int mode_at(const es_machine *m, uint64_t addr)
{
    return addr >= 0xffff800000000000ull ? ES_MODE_64 : m->mode;
}

/* es_symbolizer over the session's kernel and program symbols */
static const char *sym_of(void *d, uint64_t addr, uint64_t *off)
{
    return es_dbg_symbolize(d, addr, off);
}

static void line_at(es_dbg *d, uint64_t a, es_dbg_line *l)
{
    memset(l, 0, sizeof *l);
    l->addr = a;
    l->cycles = -1;
    uint8_t b[16];
    size_t got = dbg_read(d->m, a, b, 15);
    int mode = mode_at(d->m, a);
    l->len = got ? (uint8_t)es_format_sym(b, got, mode, a, d->syntax, sym_of, d, l->text,
                                          sizeof l->text)
                 : 0;
    if (!got)
        snprintf(l->text, sizeof l->text, "(not mapped)");
    uint64_t off = 0;
    const char *s = es_dbg_symbolize(d, a, &off);
    if (s) {
        if (off)
            snprintf(l->sym, sizeof l->sym, "%s+0x%llx", s, (unsigned long long)off);
        else
            snprintf(l->sym, sizeof l->sym, "%s", s);
        l->label = off == 0;
    }
    char loc[96];
    const char *text = "";
    if (es_dbg_source(d, a, loc, sizeof loc, &text))
        snprintf(l->src, sizeof l->src, "%s%s%s", loc, text[0] ? "  " : "", text);
    l->current = a == d->m->rip;
    l->breakpoint = es_dbg_break_at(d, a);
    if (d->timing) {
        const dbg_cyc *c = &d->cyc[(a ^ (a >> 12)) % DBG_CYC_SLOTS];
        if (c->addr == a)
            l->cycles = (int64_t)c->cycles;
    }
}

/* Decodes forward from `from`; if that lands on `to`, fills starts[] with
 * the instruction addresses before it (at most max) and returns their
 * count, else -1. */
static int walk_to(es_dbg *d, uint64_t from, uint64_t to, uint64_t *starts, int max)
{
    int k = 0;
    uint64_t ring[64];
    for (uint64_t a = from; a < to;) {
        uint8_t b[16];
        es_insn ins;
        size_t got = dbg_read(d->m, a, b, 15);
        if (!got || es_decode(b, got, mode_at(d->m, a), a, &ins) != ES_DECODE_OK)
            return -1;
        ring[k++ % 64] = a;
        a += ins.len;
        if (a > to)
            return -1;
    }
    int n = k < max ? k : max;
    for (int i = 0; i < n; i++)
        starts[i] = ring[(k - n + i) % 64];
    return n;
}

size_t es_dbg_disasm(es_dbg *d, int before, int after, es_dbg_line *out, size_t max)
{
    es_machine *m = d->m;
    uint64_t rip = m->rip, starts[64];
    if (before > 64)
        before = 64;
    if (before < 0)
        before = 0;
    int nb = -1;
    uint64_t off;
    if (before && es_dbg_symbolize(d, rip, &off) && off <= 4096)
        nb = walk_to(d, rip - off, rip, starts, before);
    /* without a symbol (or when the symbol's start does not decode to RIP):
     * from an address executed recently */
    for (unsigned i = 0; nb < 0 && before && i < 64 && i < d->nrecent; i++) {
        uint64_t r = d->recent[(d->nrecent - 1 - i) % 64];
        if (r < rip && rip - r <= 256)
            nb = walk_to(d, r, rip, starts, before);
    }
    size_t n = 0;
    for (int i = 0; i < nb && n < max; i++)
        line_at(d, starts[i], &out[n++]);
    uint64_t a = rip;
    for (int i = 0; i <= after && n < max; i++) {
        line_at(d, a, &out[n]);
        if (!out[n].len) {
            n++;
            break;
        }
        a += out[n++].len;
    }
    /* a source line is shown above the first instruction it covers; the
     * location part ("file.c:12") decides, so a repeated line text does
     * not hide a change of line */
    for (size_t i = 0; i < n; i++) {
        size_t k = strcspn(out[i].src, " ");
        out[i].src_start = out[i].src[0] && (i == 0 || strncmp(out[i].src, out[i - 1].src, k) ||
                                             out[i - 1].src[k] != out[i].src[k]);
    }
    return n;
}

/* ---- pt_regs ---- */

static const char *const slot_names[ES_DBG_PTREGS_SLOTS] = {
    "r15", "r14", "r13", "r12", "bp", "bx", "r11", "r10", "r9", "r8", "ax",
    "cx",  "dx",  "si",  "di",  "orig_ax", "ip", "cs", "flags", "sp", "ss"};

int dbg_gpr_slot(int reg)
{
    /* Linux's struct pt_regs (arch/x86/include/asm/ptrace.h), 8 bytes a slot */
    static const int slot[16] = {10, 11, 12, 5, -1, 4, 13, 14, 9, 8, 7, 6, 3, 2, 1, 0};
    return reg >= 0 && reg < 16 ? slot[reg] : -1;
}

/* TSS.RSP0 - sizeof(struct pt_regs): the top of the task stack, where the
 * entry code (kernel_model/entry_64.S, entry_64_compat.S) and the CPU's
 * interrupt frame build pt_regs.  RSP0 is at offset 4 of the 64-bit TSS
 * (SDM Vol. 3A, 8.7). */
uint64_t dbg_ptregs_base(es_dbg *d)
{
    es_machine *m = d->m;
    uint64_t rsp0 = 0;
    if (!m->has_kernel || !m->tr.base || dbg_read(m, m->tr.base + 4, &rsp0, 8) != 8 || !rsp0)
        return 0;
    return rsp0 - 8 * ES_DBG_PTREGS_SLOTS;
}

int es_dbg_ptregs(es_dbg *d, uint64_t *base, es_dbg_slot out[ES_DBG_PTREGS_SLOTS])
{
    uint64_t b = d->track.base ? d->track.base : dbg_ptregs_base(d);
    if (!b)
        return -1;
    if (base)
        *base = b;
    uint64_t v[ES_DBG_PTREGS_SLOTS];
    if (dbg_read(d->m, b, v, sizeof v) != sizeof v)
        memset(v, 0, sizeof v);
    for (int s = 0; s < ES_DBG_PTREGS_SLOTS; s++) {
        es_dbg_slot *o = &out[s];
        memset(o, 0, sizeof *o);
        o->field = slot_names[s];
        o->off = 8u * (unsigned)s;
        o->value = v[s];
        o->order = d->track.base == b ? d->track.order[s] : 0;
        o->written = o->order != 0;
        o->cleared = d->track.base == b && ((d->track.cleared >> s) & 1);
        o->taint = d->taint ? es_taint_mem(d->taint, b + o->off, 8) : 0;
        if (o->taint)
            es_taint_label_str(o->taint, d->abi, o->labels, sizeof o->labels);
    }
    return 0;
}

/* ---- exposure ---- */

size_t es_dbg_exposure(es_dbg *d, es_dbg_live *out, size_t max)
{
    size_t n = 0;
    if (!d->taint)
        return 0;
    for (int r = 0; r < 16 && n < max && d->m->cpl == 0; r++) {
        es_label l = es_taint_reg(d->taint, r);
        if (!l)
            continue;
        es_dbg_live *e = &out[n++];
        snprintf(e->where, sizeof e->where, "%s", dbg_gpr_name(r));
        e->value = d->m->gpr[r];
        e->taint = l;
        es_taint_label_str(l, d->abi, e->labels, sizeof e->labels);
    }
    es_dbg_slot s[ES_DBG_PTREGS_SLOTS];
    if (es_dbg_ptregs(d, NULL, s) == 0)
        for (int i = 0; i < ES_DBG_PTREGS_SLOTS && n < max; i++) {
            if (!s[i].taint)
                continue;
            es_dbg_live *e = &out[n++];
            snprintf(e->where, sizeof e->where, "pt_regs->%s", s[i].field);
            e->value = s[i].value;
            e->taint = s[i].taint;
            snprintf(e->labels, sizeof e->labels, "%s", s[i].labels);
        }
    return n;
}

static bool is32(int entry)
{
    return entry == ES_ENTRY_INT80 || entry == ES_ENTRY_SYSENTER32 ||
           entry == ES_ENTRY_SYSCALL32;
}

/* The syscall's name from the function its table slot points to
 * ("__x64_sys_write", "sys_write", "compat_sys_x" -> "write"...). */
static bool syscall_name(es_dbg *d, int entry, int nr, char *out, size_t n)
{
    return es_kernel_syscall_name(d->m, is32(entry), nr, out, n);
}

const char *es_dbg_probe_table(es_dbg *d)
{
    es_machine *m = d->m;
    if (m->cpl != 0 || !d->track.open || d->track.entry < 0)
        return NULL;
    unsigned patches = es_kernel_patches(m);
    const es_exposure *e = NULL;
    for (size_t i = 0; i < d->nprobe_cache; i++) {
        const es_exposure *c = &d->probe_cache[i];
        if (c->entry == d->track.entry && c->patches == patches && c->vendor == m->vendor &&
            c->nr == d->track.nr)
            e = c;
    }
    if (!e) {
        /* the exposure analysis of this syscall, by the same code as
         * `entrysim exposure` (its own generated program, same image) */
        char name[64];
        if (!syscall_name(d, d->track.entry, d->track.nr, name, sizeof name))
            return NULL;
        es_exposure *c = &d->probe_cache[d->nprobe_cache < DBG_PROBE_CACHE
                                             ? d->nprobe_cache++
                                             : (size_t)(d->track.nr % DBG_PROBE_CACHE)];
        if (es_exposure_run(patches, d->track.entry, m->vendor, name, c) && !c->error[0])
            snprintf(c->error, sizeof c->error, "failed");
        /* keyed as looked up (a failure is remembered too: the run is not
         * repeated at every redraw) */
        c->entry = d->track.entry;
        c->patches = patches;
        c->vendor = m->vendor;
        c->nr = d->track.nr;
        e = c;
    }
    if (e->error[0])
        return NULL;
    bool at = false;
    for (int p = 0; p < ES_NPROBES; p++)
        at |= e->probe[p].present && e->probe[p].addr == m->rip;
    if (!at)
        return NULL;
    if (d->probe_text)
        return d->probe_text;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    es_exposure_print_text(f, e);
    fclose(f);
    d->probe_text = buf;
    return buf;
}
