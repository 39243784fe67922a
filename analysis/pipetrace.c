/* pipetrace.c - Kanata log writer (pipetrace.h; docs/TIMING.md).
 *
 * The model costs an instruction when it retires functionally, so its
 * stage events (fetch ... retire) arrive in program order, not in cycle
 * order, while a Kanata log must never go back in time.  The writer keeps
 * the events not yet written in a min-heap keyed by (cycle, arrival); when
 * an instruction arrives with fetch cycle F, every held event at or before
 * F is written: the model's fetch cycle never decreases (timing.h), so
 * nothing later can land before it.
 */
#include "pipetrace.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoder.h"
#include "exposure.h"
#include "kernel.h"
#include "mem.h"

enum { PT_WAIT, PT_ON, PT_DONE };

typedef struct pt_ev {
    uint64_t cycle, ord;
    uint32_t id, rid;
    char cmd;      /* 'S', 'E', 'R' */
    uint8_t lane;
    uint8_t rtype; /* R: 0 retire, 1 flush */
    char stage[13];
} pt_ev;

struct es_pipetrace {
    es_machine *m;
    es_timing *t;
    FILE *f;
    es_pipetrace_cfg cfg;
    char sys_name[64]; /* cfg.sys_name points here */
    int state;
    uint64_t sys_seen;
    bool header;
    uint64_t cur;          /* cycle of the last line written */
    uint32_t next_id, next_rid;
    uint64_t ord;
    pt_ev *heap;
    size_t n, cap;
    bool oom;
};

/* ---- the held events ---- */

static bool ev_less(const pt_ev *a, const pt_ev *b)
{
    return a->cycle < b->cycle || (a->cycle == b->cycle && a->ord < b->ord);
}

/* Holds e (its arrival order set here). */
static void push_ev(es_pipetrace *p, pt_ev e)
{
    if (p->n == p->cap) {
        size_t nc = p->cap ? 2 * p->cap : 256;
        pt_ev *h = realloc(p->heap, nc * sizeof *h);
        if (!h) {
            p->oom = true;
            return;
        }
        p->heap = h;
        p->cap = nc;
    }
    e.ord = p->ord++;
    size_t i = p->n++;
    while (i && ev_less(&e, &p->heap[(i - 1) / 2])) {
        p->heap[i] = p->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    p->heap[i] = e;
}

static void push(es_pipetrace *p, uint64_t cycle, uint32_t id, char cmd, int lane,
                 const char *stage)
{
    pt_ev e = {.cycle = cycle, .id = id, .cmd = cmd, .lane = (uint8_t)lane};
    snprintf(e.stage, sizeof e.stage, "%s", stage);
    push_ev(p, e);
}

static pt_ev pop(es_pipetrace *p)
{
    pt_ev top = p->heap[0], last = p->heap[--p->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= p->n)
            break;
        if (c + 1 < p->n && ev_less(&p->heap[c + 1], &p->heap[c]))
            c++;
        if (!ev_less(&p->heap[c], &last))
            break;
        p->heap[i] = p->heap[c];
        i = c;
    }
    if (p->n)
        p->heap[i] = last;
    return top;
}

/* ---- writing ---- */

/* Moves the log's clock to cycle c (the header and C= the first time). */
static void advance(es_pipetrace *p, uint64_t c)
{
    if (!p->header) {
        fprintf(p->f, "Kanata\t0004\nC=\t%llu\n", (unsigned long long)c);
        p->header = true;
        p->cur = c;
    } else if (c > p->cur) {
        fprintf(p->f, "C\t%llu\n", (unsigned long long)(c - p->cur));
        p->cur = c;
    }
}

static void write_ev(es_pipetrace *p, const pt_ev *e)
{
    advance(p, e->cycle);
    if (e->cmd == 'R')
        fprintf(p->f, "R\t%u\t%u\t%u\n", e->id, e->rid, e->rtype);
    else
        fprintf(p->f, "%c\t%u\t%u\t%s\n", e->cmd, e->id, e->lane, e->stage);
}

static void flush_upto(es_pipetrace *p, uint64_t limit)
{
    while (p->n && p->heap[0].cycle <= limit) {
        pt_ev e = pop(p);
        write_ev(p, &e);
    }
}

static const char *ksym(void *ctx, uint64_t addr, uint64_t *off)
{
    const es_machine *m = ctx;
    return m->kernel ? es_kernel_addr2sym(m, addr, off) : NULL;
}

/* The label shown left of the pipeline: address, symbol, disassembly. */
static void write_label(es_pipetrace *p, uint32_t id, const es_insn *d, uint64_t rip)
{
    es_machine *m = p->m;
    char text[160], sym[96] = "";
    uint8_t b[16];
    int mode = d ? d->mode : m->mode;
    size_t got = es_fetch_bytes(m, rip, b, 15);
    if (!got || !es_format_sym(b, got, mode, rip, ES_SYNTAX_INTEL, ksym, m, text, sizeof text))
        snprintf(text, sizeof text, "%s", d ? es_op_name(d->op) : "(not mapped)");
    for (char *c = text; *c; c++)
        if (*c == '\t' || *c == '\n')
            *c = ' ';
    uint64_t off = 0;
    const char *s = ksym(m, rip, &off);
    if (s)
        snprintf(sym, sizeof sym, off ? " <%s+0x%llx>" : " <%s>", s, (unsigned long long)off);
    fprintf(p->f, "L\t%u\t0\t%llx%s: %s\n", id, (unsigned long long)rip, sym, text);
}

/* The mouse-over detail: every stage cycle and the port reservations. */
static void write_detail(es_pipetrace *p, uint32_t id, const es_timing_insn *ev)
{
    fprintf(p->f,
            "L\t%u\t1\tfetch %llu, decode %llu (%s), dispatch %llu, issue %llu, complete %llu, "
            "%s %llu%s",
            id, (unsigned long long)ev->fetch, (unsigned long long)ev->decode,
            ev->opcache ? "op cache" : "decoders", (unsigned long long)ev->dispatch,
            (unsigned long long)ev->issue, (unsigned long long)ev->complete,
            ev->flushed ? "flushed" : "retire", (unsigned long long)ev->retire,
            ev->serialising ? " (serialising)" : "");
    for (unsigned k = 0; k < ev->nuops; k++)
        fprintf(p->f, "%s%s@%llu+%u", k ? " " : "\\nports: ",
                es_timing_port_name(p->t, ev->uop[k].port), (unsigned long long)ev->uop[k].cycle,
                ev->uop[k].occ);
    fputc('\n', p->f);
}

/* Holds the stage events of instruction id after its fetch. */
static void push_stages(es_pipetrace *p, uint32_t id, const es_timing_insn *ev)
{
    if (ev->flushed) {
        push(p, ev->retire, id, 'E', 0, "F");
    } else {
        const char *dec = ev->opcache ? "Uc" : "Dc";
        const struct { const char *name; uint64_t from, to; } st[] = {
            {dec, ev->decode, ev->dispatch}, {"Ds", ev->dispatch, ev->issue},
            {"X", ev->issue, ev->complete},  {"Cm", ev->complete, ev->retire}};
        push(p, ev->decode, id, 'E', 0, "F");
        for (size_t i = 0; i < sizeof st / sizeof st[0]; i++) {
            push(p, st[i].from, id, 'S', 0, st[i].name);
            push(p, st[i].to, id, 'E', 0, st[i].name);
        }
        for (unsigned k = 0; k < ev->nuops; k++) {
            const char *port = es_timing_port_name(p->t, ev->uop[k].port);
            uint64_t end = ev->uop[k].cycle + ev->uop[k].occ;
            push(p, ev->uop[k].cycle, id, 'S', 1, port);
            push(p, end < ev->retire ? end : ev->retire, id, 'E', 1, port);
        }
    }
    pt_ev r = {.cycle = ev->retire, .id = id, .cmd = 'R', .rtype = ev->flushed,
               .rid = ev->flushed ? p->next_rid : p->next_rid++};
    push_ev(p, r);
}

/* ---- the range selector ---- */

/* Does this retired instruction enter the kernel for the system call the
 * selector names?  (m is after it ran: RAX still holds the number.) */
static bool is_selected_call(const es_pipetrace *p, es_machine *m, const es_insn *d)
{
    if (!d)
        return false;
    int entry;
    uint64_t rax = m->gpr[ES_RAX];
    if (d->op == ES_OP_SYSCALL)
        entry = d->mode != ES_MODE_64           ? ES_ENTRY_SYSCALL32
                : (rax & ES_X32_SYSCALL_BIT) != 0 ? ES_ENTRY_X32
                                                  : ES_ENTRY_SYSCALL64;
    else if (d->op == ES_OP_SYSENTER)
        entry = ES_ENTRY_SYSENTER32;
    else if (d->op == ES_OP_INT && (d->o[0].imm & 0xff) == 0x80)
        entry = ES_ENTRY_INT80;
    else
        return false;
    int64_t nr = (int64_t)(uint32_t)(rax & ~ES_X32_SYSCALL_BIT);
    if (p->cfg.sys_name)
        return es_syscall_nr(entry, p->cfg.sys_name) == nr;
    return nr == p->cfg.sys_nr;
}

static bool starts_here(es_pipetrace *p, es_machine *m, const es_insn *d, uint64_t rip)
{
    const es_pipetrace_cfg *c = &p->cfg;
    if (c->has_from)
        return rip == c->from_addr;
    if (c->sys_name || c->sys_nr >= 0)
        return is_selected_call(p, m, d) && ++p->sys_seen >= (c->sys_nth ? c->sys_nth : 1);
    return true;
}

static void on_insn(void *ctx, es_machine *m, const es_insn *d, const es_timing_insn *ev)
{
    es_pipetrace *p = ctx;
    if (p->state == PT_DONE)
        return;
    if (p->state == PT_WAIT) {
        if (!starts_here(p, m, d, ev->rip))
            return;
        p->state = PT_ON;
    }
    flush_upto(p, ev->fetch);
    advance(p, ev->fetch);
    uint32_t id = p->next_id++;
    fprintf(p->f, "I\t%u\t%llu\t0\n", id, (unsigned long long)m->icount);
    write_label(p, id, d, ev->rip);
    write_detail(p, id, ev);
    fprintf(p->f, "S\t%u\t0\tF\n", id);
    push_stages(p, id, ev);
    if (p->next_id >= (p->cfg.max_insns ? p->cfg.max_insns : 2000)) {
        flush_upto(p, UINT64_MAX);
        p->state = PT_DONE;
        fflush(p->f);
        es_timing_set_tracer(p->t, NULL); /* the rest of the run at full speed */
    }
}

/* ---- public ---- */

es_pipetrace *es_pipetrace_open(es_machine *m, es_timing *t, const es_pipetrace_cfg *cfg,
                                char *err, size_t errlen)
{
    es_pipetrace *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    p->f = fopen(cfg->path, "w");
    if (!p->f) {
        snprintf(err, errlen, "cannot create %s", cfg->path);
        free(p);
        return NULL;
    }
    p->m = m;
    p->t = t;
    p->cfg = *cfg;
    if (cfg->sys_name) {
        snprintf(p->sys_name, sizeof p->sys_name, "%s", cfg->sys_name);
        p->cfg.sys_name = p->sys_name;
    }
    es_timing_tracer tr = {.ctx = p, .insn = on_insn};
    es_timing_set_tracer(t, &tr);
    return p;
}

int es_pipetrace_close(es_pipetrace *p, uint64_t *insns)
{
    if (!p)
        return 0;
    es_timing_set_tracer(p->t, NULL);
    flush_upto(p, UINT64_MAX);
    if (!p->header)
        fprintf(p->f, "Kanata\t0004\nC=\t0\n"); /* the range never started: an empty log */
    if (insns)
        *insns = p->next_id;
    int rc = (ferror(p->f) || p->oom) ? -1 : 0;
    if (fclose(p->f))
        rc = -1;
    free(p->heap);
    free(p);
    return rc;
}

int es_pipetrace_resolve(const es_machine *m, const char *s, uint64_t *addr)
{
    char *end;
    if (!strncmp(s, "0x", 2) || !strncmp(s, "0X", 2)) {
        *addr = strtoull(s, &end, 16);
        return *end == 0 && end != s + 2;
    }
    if (!m->kernel)
        return 0;
    char name[128];
    const char *plus = strchr(s, '+');
    size_t len = plus ? (size_t)(plus - s) : strlen(s);
    if (len == 0 || len >= sizeof name)
        return 0;
    memcpy(name, s, len);
    name[len] = 0;
    uint64_t a = es_kernel_sym(m, name), off = 0;
    if (!a)
        return 0;
    if (plus) {
        off = strtoull(plus + 1, &end, 0);
        if (*end || end == plus + 1)
            return 0;
    }
    *addr = a + off;
    return 1;
}
