/* taint.c - taint tracking as an observer (see taint.h and
 * docs/EXPOSURE.md for the rules).
 *
 * Timing: `before` sees the instruction with the machine still in its old
 * state, so it computes the labels of every register the instruction will
 * write from the old labels and queues them; memory reads arrive through
 * the `mem` hook while the handler runs (their labels are collected in
 * rd), memory writes arrive there too and get their label at once (every
 * read of a read-modify-write precedes its write); `retire` applies the
 * queued register and flag labels, adding rd where the value came from
 * memory.  An instruction that faults never retires, so its register
 * labels are dropped with it, as its register effects are.
 */
#include "taint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "es_isa_taint.h"
#include "mem.h"
#include "taint_vec.h"

#define PAGE 4096ull
#define RSP_BIT (1u << ES_RSP)
#define ACCESS_SLOTS 256 /* decoded register accesses kept (access_of) */

/* One instruction's register accesses, as es_decode_access found them. */
typedef struct access_slot {
    es_insn insn; /* what it was decoded from (the sim's decode) */
    es_access_info a;
    bool valid;
} access_slot;

typedef struct shpage {
    uint64_t page; /* linear page address; 1 = empty slot */
    es_label *lab; /* 4096 labels */
} shpage;

typedef struct pend_w {
    uint8_t reg;
    uint8_t merge; /* partial write: the old label stays */
    uint8_t add_rd;
    es_label l;
} pend_w;

enum { F_NONE = 0, F_REPLACE, F_MERGE };

struct es_taint {
    es_label reg[16];
    es_tvec vec; /* XMM/YMM lanes, and their writes in flight */
    es_label flags;     /* the arithmetic flags */
    es_label rip_label; /* label of the user RIP (frames, RCX on SYSCALL) */
    es_label rflags_label;
    bool kernel_only;

    shpage *pages;
    size_t cap, n;

    /* the instruction in flight */
    bool live;
    es_label rd;     /* union of what it read from memory */
    es_label wl;     /* label of what it writes to memory */
    bool wl_rd;      /* ... plus rd */
    bool movs;       /* string move: each write copies the preceding read */
    uint64_t mr_va;
    unsigned mr_n;
    pend_w w[16];
    int nw;
    int fmode;
    es_label fl;
    bool f_rd;
    /* INT n: the frame is labelled at retire */
    bool int_frame;
    uint8_t cpl0;
    es_label f_rip, f_flags, f_rsp;
    /* exception delivered through the IDT: frame labelled at the next insn */
    bool exc_pending, exc_err, exc_user;
    es_label e_rip, e_flags, e_rsp;
    access_slot acc[ACCESS_SLOTS];
};

/* ---- shadow memory ---- */

static size_t hash_page(uint64_t page, size_t cap)
{
    return (size_t)(((page >> 12) * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
}

static shpage *find_page(const es_taint *t, uint64_t page)
{
    if (!t->cap)
        return NULL;
    for (size_t i = hash_page(page, t->cap);; i = (i + 1) & (t->cap - 1)) {
        if (t->pages[i].page == page)
            return &t->pages[i];
        if (t->pages[i].page == 1)
            return NULL;
    }
}

static int grow(es_taint *t)
{
    size_t ncap = t->cap ? t->cap * 2 : 64;
    shpage *np = malloc(ncap * sizeof *np);
    if (!np)
        return -1;
    for (size_t i = 0; i < ncap; i++)
        np[i].page = 1, np[i].lab = NULL;
    for (size_t i = 0; i < t->cap; i++) {
        if (t->pages[i].page == 1)
            continue;
        size_t j = hash_page(t->pages[i].page, ncap);
        while (np[j].page != 1)
            j = (j + 1) & (ncap - 1);
        np[j] = t->pages[i];
    }
    free(t->pages);
    t->pages = np;
    t->cap = ncap;
    return 0;
}

static es_label *get_page(es_taint *t, uint64_t page)
{
    shpage *p = find_page(t, page);
    if (p)
        return p->lab;
    if ((t->n + 1) * 2 > t->cap && grow(t))
        return NULL;
    es_label *lab = calloc(PAGE, sizeof *lab);
    if (!lab)
        return NULL;
    size_t j = hash_page(page, t->cap);
    while (t->pages[j].page != 1)
        j = (j + 1) & (t->cap - 1);
    t->pages[j].page = page;
    t->pages[j].lab = lab;
    t->n++;
    return lab;
}

/* Both walk the range a page at a time: one shadow-page lookup per page,
 * not per byte (an 8-byte access was eight hash probes). */
es_label es_taint_mem(const es_taint *t, uint64_t va, size_t n)
{
    es_label l = 0;
    while (n) {
        size_t off = va & (PAGE - 1), k = PAGE - off < n ? PAGE - off : n;
        const shpage *p = find_page(t, va - off);
        if (p)
            for (size_t i = 0; i < k; i++)
                l |= p->lab[off + i];
        va += k;
        n -= k;
    }
    return l;
}

int es_taint_set_mem(es_taint *t, uint64_t va, size_t n, es_label l)
{
    while (n) {
        size_t off = va & (PAGE - 1), k = PAGE - off < n ? PAGE - off : n;
        if (l == 0) { /* clearing never makes a page */
            shpage *p = find_page(t, va - off);
            if (p)
                memset(p->lab + off, 0, k * sizeof *p->lab);
        } else {
            es_label *lab = get_page(t, va - off);
            if (!lab)
                return -1;
            for (size_t i = 0; i < k; i++)
                lab[off + i] = l;
        }
        va += k;
        n -= k;
    }
    return 0;
}

/* ---- lifetime and accessors ---- */

es_taint *es_taint_new(void)
{
    return calloc(1, sizeof(es_taint));
}

void es_taint_free(es_taint *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->cap; i++)
        free(t->pages[i].lab);
    free(t->pages);
    free(t);
}

void es_taint_clear(es_taint *t)
{
    memset(t->reg, 0, sizeof t->reg);
    es_tvec_clear(&t->vec);
    t->flags = t->rip_label = t->rflags_label = 0;
    for (size_t i = 0; i < t->cap; i++)
        if (t->pages[i].lab)
            memset(t->pages[i].lab, 0, PAGE * sizeof(es_label));
}

void es_taint_kernel_only(es_taint *t, bool on) { t->kernel_only = on; }

es_label es_taint_reg(const es_taint *t, int reg) { return t->reg[reg & 15]; }
void es_taint_set_reg(es_taint *t, int reg, es_label l) { t->reg[reg & 15] = l; }
es_label es_taint_flags(const es_taint *t) { return t->flags; }

void es_taint_regs(const es_taint *t, es_label out[17])
{
    memcpy(out, t->reg, 16 * sizeof *out);
    out[16] = t->flags;
}
void es_taint_set_flags(es_taint *t, es_label l) { t->flags = l; }

es_label es_taint_vreg(const es_taint *t, int reg, int lane)
{
    if (reg < 0 || reg >= ES_TAINT_NVREG || lane < 0 || lane >= ES_TAINT_NLANE)
        return 0;
    return t->vec.lab[reg][lane];
}

void es_taint_set_vreg(es_taint *t, int reg, int lane, es_label l)
{
    if (reg >= 0 && reg < ES_TAINT_NVREG && lane >= 0 && lane < ES_TAINT_NLANE)
        t->vec.lab[reg][lane] = l;
}

void es_taint_label_user_regs(es_taint *t, es_machine *m, int abi)
{
    (void)m;
    for (int i = 0; i < 16; i++)
        t->reg[i] = (abi == 1 && i >= 8) ? 0 : ES_TL_REG(i);
    t->reg[ES_RAX] = ES_TL_NR;
    es_tvec_clear(&t->vec); /* no name to give them: see taint.h */
    t->flags = ES_TL_RFLAGS;
    t->rflags_label = ES_TL_RFLAGS;
    t->rip_label = ES_TL_RIP;
}

static const char *const n64[16] = {"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
                                    "r8",  "r9",  "r10", "r11", "r12", "r13", "r14", "r15"};
static const char *const n32[8] = {"eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi"};

const char *es_taint_gpr_name(int reg)
{
    return reg >= 0 && reg < 16 ? n64[reg] : "?";
}

const char *es_taint_label_name(int bit, int abi)
{
    if (bit >= 0 && bit < 16)
        return abi == 1 && bit < 8 ? n32[bit] : n64[bit];
    switch (bit) {
    case 16: return abi == 1 ? "eip" : "rip";
    case 17: return abi == 1 ? "eflags" : "rflags";
    case 18: return "nr";
    case 19: return "mem";
    default: return NULL;
    }
}

size_t es_taint_label_str(es_label l, int abi, char *buf, size_t bufsz)
{
    size_t k = 0;
    if (bufsz)
        buf[0] = 0;
    for (int b = 0; b < ES_TL_NBITS; b++) {
        if (!(l & (1u << b)))
            continue;
        int r = snprintf(buf + k, bufsz > k ? bufsz - k : 0, "%s%s", k ? "," : "",
                         es_taint_label_name(b, abi));
        if (r > 0)
            k += (size_t)r;
    }
    return k < bufsz ? k : (bufsz ? bufsz - 1 : 0);
}

/* ---- per-instruction helpers ---- */

static void qw(es_taint *t, int reg, es_label l, bool add_rd, bool merge)
{
    if (t->nw < 16 && reg >= 0 && reg < 16)
        t->w[t->nw++] = (pend_w){(uint8_t)reg, merge, add_rd, l};
}

/* A write to an explicit register operand: narrower than 32 bits keeps the
 * rest of the register (and its label); 32-bit writes zero-extend. */
static void qw_op(es_taint *t, const es_operand *o, es_label l, bool add_rd)
{
    if (o->kind == ES_OPK_GPR)
        qw(t, o->reg, l, add_rd, o->size < 4);
    else if (o->kind == ES_OPK_HI8)
        qw(t, o->reg, l, add_rd, true);
}

static void qflags(es_taint *t, int mode, es_label l, bool rd)
{
    t->fmode = mode;
    t->fl = l;
    t->f_rd = rd;
}

/* Label of a source operand; *mem set when it is a memory read (its label
 * arrives as rd). */
static es_label src(const es_taint *t, const es_operand *o, bool *mem)
{
    switch (o->kind) {
    case ES_OPK_GPR:
    case ES_OPK_HI8:
        return t->reg[o->reg & 15];
    case ES_OPK_MEM:
        *mem = true;
        return 0;
    case ES_OPK_AGEN: {
        es_label l = 0;
        if (o->base < 16)
            l |= t->reg[o->base];
        if (o->index < 16)
            l |= t->reg[o->index];
        return l;
    }
    default: /* immediates, segment/control registers */
        return 0;
    }
}

/* SDM Vol. 1, B.1: condition codes by the low nibble of the opcode. */
static bool cond(uint64_t f, unsigned cc)
{
    bool r;
    switch (cc >> 1) {
    case 0: r = f & ES_OF; break;
    case 1: r = f & ES_CF; break;
    case 2: r = f & ES_ZF; break;
    case 3: r = (f & ES_CF) || (f & ES_ZF); break;
    case 4: r = f & ES_SF; break;
    case 5: r = f & ES_PF; break;
    case 6: r = !!(f & ES_SF) != !!(f & ES_OF); break;
    default: r = (f & ES_ZF) || (!!(f & ES_SF) != !!(f & ES_OF)); break;
    }
    return (cc & 1) ? !r : r;
}

/* The register accesses of d at rip, implicit operands included.  They are
 * a function of the instruction, and the sim's decode d says everything
 * the encoding does about them (operation, operands, prefixes, mode), so a
 * slot whose saved decode equals d holds them: Zydis runs once per
 * instruction, not once per execution (self-modified code decodes to
 * another d and misses).  False when the bytes cannot be fetched again. */
static bool access_of(es_taint *t, es_machine *m, const es_insn *d, uint64_t rip,
                      es_access_info *a)
{
    access_slot *s = &t->acc[(rip ^ (rip >> 8)) & (ACCESS_SLOTS - 1)];
    if (s->valid && !memcmp(&s->insn, d, sizeof *d)) {
        *a = s->a;
        return true;
    }
    uint8_t buf[16];
    uint64_t lin = (rip + m->seg[ES_SEG_CS].base) & m->ipmask;
    size_t got = es_fetch_bytes(m, lin, buf, 15);
    if (!got || es_decode_access(buf, got, d->mode, rip, a) != ES_DECODE_OK)
        return false;
    s->insn = *d;
    s->a = *a;
    s->valid = true;
    return true;
}

static bool same_reg(const es_insn *d)
{
    return d->nops >= 2 && d->o[0].kind == ES_OPK_GPR && d->o[1].kind == ES_OPK_GPR &&
           d->o[0].reg == d->o[1].reg && d->o[0].size == d->o[1].size;
}

/* Everything the instruction reads goes to everything it writes (implicit
 * operands included; RSP only when named explicitly, since stack-pointer
 * arithmetic does not carry data).  Vector registers are among both
 * (taint_vec.c): movd eax, xmm0 gives eax xmm0's label, movq xmm0, rdi
 * gives xmm0 rdi's, a gather's destination its index register's and, at
 * retire, what its element reads delivered as rd. */
static void fallback(es_taint *t, es_machine *m, const es_insn *d, uint64_t rip)
{
    es_access_info a;
    if (!access_of(t, m, d, rip, &a))
        return;
    unsigned expl = 0;
    for (int i = 0; i < d->nops; i++)
        if (d->o[i].kind == ES_OPK_GPR || d->o[i].kind == ES_OPK_HI8)
            expl |= 1u << d->o[i].reg;
    unsigned rmask = a.gpr_read & ~(RSP_BIT & ~expl);
    unsigned wmask = a.gpr_write & ~(RSP_BIT & ~expl);
    es_label l = es_tvec_reads(&t->vec, d);
    for (int i = 0; i < 16; i++)
        if (rmask & (1u << i))
            l |= t->reg[i];
    if (a.flags_read & ES_ARITH_FLAGS)
        l |= t->flags;
    es_tvec_writes(&t->vec, d, l);
    for (int i = 0; i < 16; i++) {
        if (!(wmask & (1u << i)))
            continue;
        bool merge = false;
        for (int k = 0; k < d->nops; k++)
            if ((d->o[k].kind == ES_OPK_GPR && d->o[k].reg == i && d->o[k].size < 4) ||
                (d->o[k].kind == ES_OPK_HI8 && d->o[k].reg == i))
                merge = true;
        qw(t, i, l, true, merge);
    }
    if (a.flags_written & ES_ARITH_FLAGS)
        qflags(t, (a.flags_written & ES_ARITH_FLAGS) == ES_ARITH_FLAGS ? F_REPLACE : F_MERGE, l,
               true);
    t->wl = l;
    t->wl_rd = true;
}

/* ---- the rules: isa.tbl's taint column names one per op ----
 * Each sees the instruction before it runs (old register labels) and
 * queues what it will write. */

typedef void rule_fn(es_taint *t, es_machine *m, const es_insn *d, uint64_t rip);

/* A write to operand 0, register or memory (read-modify-write: the memory
 * destination's own old value arrives as rd). */
static void write_dst(es_taint *t, const es_insn *d, es_label l, bool mem)
{
    if (d->o[0].kind == ES_OPK_MEM) {
        t->wl = l;
        t->wl_rd = true;
    } else {
        qw_op(t, &d->o[0], l, mem);
    }
}

static void r_fallback(es_taint *t, es_machine *m, const es_insn *d, uint64_t rip)
{
    fallback(t, m, d, rip);
}

static void r_none(es_taint *t, es_machine *m, const es_insn *d, uint64_t rip) {}

/* VZEROUPPER/VZEROALL: constants into the upper lanes (all lanes),
 * which `none` would leave labelled. */
static void r_vzero(es_taint *t, es_machine *m, const es_insn *d, uint64_t rip)
{
    es_tvec_vzero(&t->vec, d);
}

static void r_move(es_taint *t, es_machine *m, const es_insn *d, uint64_t rip)
{
    bool mem = false;
    es_label l = src(t, &d->o[1], &mem);
    if (d->o[0].kind == ES_OPK_MEM)
        t->wl = l;
    else if (d->o[0].kind == ES_OPK_GPR || d->o[0].kind == ES_OPK_HI8)
        qw_op(t, &d->o[0], l, mem); /* moves copy; a 32-bit move zero-extends and so replaces */
}

static void r_lea(es_taint *t, es_machine *m, const es_insn *d, uint64_t rip)
{
    bool mem = false;
    qw_op(t, &d->o[0], src(t, &d->o[1], &mem), false);
}

/* The result of an operation reading l (plus the flags when `carry`):
 * operand 0 and the flags (`fmode`) get it. */
static void result(es_taint *t, const es_insn *d, es_label l, bool mem, bool carry, int fmode)
{
    if (carry)
        l |= t->flags;
    write_dst(t, d, l, mem);
    qflags(t, fmode, l, mem);
}

/* Two-operand arithmetic; `carry`: the flags are a source too. */
static void alu(es_taint *t, const es_insn *d, bool carry)
{
    bool mem = false;
    es_label l = src(t, &d->o[0], &mem) | src(t, &d->o[1], &mem);
    result(t, d, l, mem, carry, F_REPLACE);
}

static void r_alu(es_taint *t, es_machine *m, const es_insn *d, uint64_t rip)
{
    alu(t, d, false);
}

static void r_alu_cf(es_taint *t, es_machine *m, const es_insn *d, uint64_t rip)
{
    alu(t, d, true);
}

static void r_alu_idiom(es_taint *t, es_machine *m, const es_insn *d, uint64_t rip)
{
    if (!same_reg(d)) {
        alu(t, d, false);
        return;
    }
    qw_op(t, &d->o[0], 0, false); /* the zero idiom */
    qflags(t, F_REPLACE, 0, false);
}

static void r_sbb(es_taint *t, es_machine *m, const es_insn *d, uint64_t rip)
{
    if (!same_reg(d)) {
        alu(t, d, true);
        return;
    }
    /* sbb r,r = -CF: the carry's label alone (array_index_nospec's mask
     * after cmp nr, NR derives from nr) */
    qw_op(t, &d->o[0], t->flags, false);
    qflags(t, F_REPLACE, t->flags, false);
}

static void r_cmp(es_taint *t, es_machine *m, const es_insn *d, uint64_t rip)
{
    bool mem = false;
    es_label l = src(t, &d->o[0], &mem) | src(t, &d->o[1], &mem);
    qflags(t, F_REPLACE, l, mem);
}

/* One-operand arithmetic; `fmode`: how the flags change (INC/DEC leave CF
 * alone, NOT changes none). */
static void unary(es_taint *t, const es_insn *d, int fmode)
{
    bool mem = false;
    es_label l = src(t, &d->o[0], &mem);
    write_dst(t, d, l, mem);
    if (fmode != F_NONE)
        qflags(t, fmode, l, mem);
}

static void r_incdec(es_taint *t, es_machine *m, const es_insn *d, uint64_t rip)
{
    unary(t, d, F_MERGE);
}

static void r_neg(es_taint *t, es_machine *m, const es_insn *d, uint64_t rip)
{
    unary(t, d, F_REPLACE);
}

static void r_not(es_taint *t, es_machine *m, const es_insn *d, uint64_t rip)
{
    unary(t, d, F_NONE);
}

/* Shifts and rotates: every operand (count included) flows to the result;
 * `carry` for RCL/RCR, which rotate through CF. */
static void shift(es_taint *t, const es_insn *d, bool carry)
{
    bool mem = false;
    es_label l = 0;
    for (int i = 0; i < d->nops; i++)
        l |= src(t, &d->o[i], &mem);
    result(t, d, l, mem, carry, F_MERGE); /* a zero count leaves the flags */
}

static void r_shift(es_taint *t, es_machine *m, const es_insn *d, uint64_t rip)
{
    shift(t, d, false);
}

static void r_shift_cf(es_taint *t, es_machine *m, const es_insn *d, uint64_t rip)
{
    shift(t, d, true);
}

static void r_cmov(es_taint *t, es_machine *m, const es_insn *d, uint64_t rip)
{
    /* the value moved (or kept), plus the flags that chose it */
    bool mem = false;
    es_label l = cond(m->rflags, d->opcode & 15) ? src(t, &d->o[1], &mem)
                                                  : t->reg[d->o[0].reg & 15];
    qw(t, d->o[0].reg, l | t->flags, mem, d->o[0].size < 4);
}

static void r_setcc(es_taint *t, es_machine *m, const es_insn *d, uint64_t rip)
{
    if (d->o[0].kind == ES_OPK_MEM)
        t->wl = t->flags;
    else
        qw_op(t, &d->o[0], t->flags, false);
}

static void r_xchg(es_taint *t, es_machine *m, const es_insn *d, uint64_t rip)
{
    const es_operand *o = d->o;
    if (o[0].kind == ES_OPK_MEM || o[1].kind == ES_OPK_MEM) {
        const es_operand *r = o[0].kind == ES_OPK_MEM ? &o[1] : &o[0];
        t->wl = t->reg[r->reg & 15];
        qw_op(t, r, 0, true);
    } else {
        es_label a = t->reg[o[0].reg & 15], b = t->reg[o[1].reg & 15];
        qw_op(t, &o[0], b, false);
        qw_op(t, &o[1], a, false);
    }
}

static void r_push(es_taint *t, es_machine *m, const es_insn *d, uint64_t rip)
{
    /* the pushed value; RSP's own label is not data */
    bool mem = false;
    t->wl = src(t, &d->o[0], &mem);
    t->wl_rd = mem;
}

static void r_pop(es_taint *t, es_machine *m, const es_insn *d, uint64_t rip)
{
    if (d->o[0].kind == ES_OPK_MEM)
        t->wl_rd = true;
    else
        qw_op(t, &d->o[0], 0, true);
}

static void r_pushf(es_taint *t, es_machine *m, const es_insn *d, uint64_t rip)
{
    t->wl = t->flags;
}

static void r_popf(es_taint *t, es_machine *m, const es_insn *d, uint64_t rip)
{
    qflags(t, F_REPLACE, 0, true);
}

static void r_call(es_taint *t, es_machine *m, const es_insn *d, uint64_t rip)
{
    t->wl = 0; /* the return address: the kernel's own RIP */
}

static void r_leave(es_taint *t, es_machine *m, const es_insn *d, uint64_t rip)
{
    qw(t, ES_RSP, t->reg[ES_RBP], false, false);
    qw(t, ES_RBP, 0, true, false);
}

/* MOVSD and CMPSD with operands are the SSE2 instructions: the fallback. */
static void r_movs(es_taint *t, es_machine *m, const es_insn *d, uint64_t rip)
{
    if (d->nops == 0)
        t->movs = true;
    else
        fallback(t, m, d, rip);
}

static void r_cmps(es_taint *t, es_machine *m, const es_insn *d, uint64_t rip)
{
    if (d->nops == 0)
        qflags(t, F_REPLACE, 0, true);
    else
        fallback(t, m, d, rip);
}

static void r_stos(es_taint *t, es_machine *m, const es_insn *d, uint64_t rip)
{
    t->wl = t->reg[ES_RAX];
}

static void r_lods(es_taint *t, es_machine *m, const es_insn *d, uint64_t rip)
{
    qw(t, ES_RAX, 0, true, d->op == ES_OP_LODSB || d->op == ES_OP_LODSW);
}

static void r_scas(es_taint *t, es_machine *m, const es_insn *d, uint64_t rip)
{
    qflags(t, F_REPLACE, t->reg[ES_RAX], true);
}

static void r_syscall(es_taint *t, es_machine *m, const es_insn *d, uint64_t rip)
{
    /* SDM Vol. 2B SYSCALL: RCX <- RIP of the next insn, R11 <- RFLAGS */
    if (m->cpl == 3) {
        qw(t, ES_RCX, t->rip_label, false, false);
        qw(t, ES_R11, t->flags | t->rflags_label, false, false);
    }
    if (!m->has_kernel)
        qw(t, ES_RAX, 0, false, false); /* the host's return value */
}

static void r_sysenter(es_taint *t, es_machine *m, const es_insn *d, uint64_t rip)
{
    qw(t, ES_RSP, 0, false, false); /* from IA32_SYSENTER_ESP */
    if (!m->has_kernel)
        qw(t, ES_RAX, 0, false, false);
}

static void r_sysret(es_taint *t, es_machine *m, const es_insn *d, uint64_t rip)
{
    qflags(t, F_REPLACE, t->reg[ES_R11], false);
}

static void r_sysexit(es_taint *t, es_machine *m, const es_insn *d, uint64_t rip)
{
    qw(t, ES_RSP, t->reg[ES_RCX], false, false);
}

static void r_int(es_taint *t, es_machine *m, const es_insn *d, uint64_t rip)
{
    bool user = m->cpl == 3;
    if (!m->has_kernel) {
        qw(t, ES_RAX, 0, false, false);
        return;
    }
    t->int_frame = true;
    t->f_rip = user ? t->rip_label : 0;
    t->f_flags = t->flags | (user ? t->rflags_label : 0);
    t->f_rsp = t->reg[ES_RSP];
}

static void r_iret(es_taint *t, es_machine *m, const es_insn *d, uint64_t rip)
{
    unsigned s = d->op == ES_OP_IRETQ ? 8 : d->op == ES_OP_IRETD ? 4 : 2;
    uint64_t sp = m->gpr[ES_RSP];
    qflags(t, F_REPLACE, es_taint_mem(t, sp + 2 * s, s), false);
    qw(t, ES_RSP, es_taint_mem(t, sp + 3 * s, s), false, false);
}

static void r_vmcall(es_taint *t, es_machine *m, const es_insn *d, uint64_t rip)
{
    qw(t, ES_RAX, 0, false, false); /* the hypercall's result */
}

static void r_machine(es_taint *t, es_machine *m, const es_insn *d, uint64_t rip)
{
    /* machine state, not user data */
    es_access_info a;
    if (access_of(t, m, d, rip, &a))
        for (int i = 0; i < 16; i++)
            if (a.gpr_write & (1u << i))
                qw(t, i, 0, false, false);
}

/* Indexed by the rule isa.tbl gives each op (es_isa_taint.h). */
static rule_fn *const rules[TR_COUNT] = {
    [TR_FALLBACK] = r_fallback, [TR_NONE] = r_none,         [TR_MOVE] = r_move,
    [TR_LEA] = r_lea,           [TR_ALU] = r_alu,           [TR_ALU_CF] = r_alu_cf,
    [TR_ALU_IDIOM] = r_alu_idiom, [TR_SBB] = r_sbb,         [TR_CMP] = r_cmp,
    [TR_INCDEC] = r_incdec,     [TR_NEG] = r_neg,           [TR_NOT] = r_not,
    [TR_SHIFT] = r_shift,       [TR_SHIFT_CF] = r_shift_cf, [TR_CMOV] = r_cmov,
    [TR_SETCC] = r_setcc,       [TR_XCHG] = r_xchg,         [TR_PUSH] = r_push,
    [TR_POP] = r_pop,           [TR_PUSHF] = r_pushf,       [TR_POPF] = r_popf,
    [TR_CALL] = r_call,         [TR_LEAVE] = r_leave,       [TR_MOVS] = r_movs,
    [TR_STOS] = r_stos,         [TR_LODS] = r_lods,         [TR_SCAS] = r_scas,
    [TR_CMPS] = r_cmps,         [TR_SYSCALL] = r_syscall,   [TR_SYSENTER] = r_sysenter,
    [TR_SYSRET] = r_sysret,     [TR_SYSEXIT] = r_sysexit,   [TR_INT] = r_int,
    [TR_IRET] = r_iret,         [TR_VMCALL] = r_vmcall,     [TR_MACHINE] = r_machine,
    [TR_VZERO] = r_vzero,
};

/* The previous instruction faulted and the fault went through the IDT:
 * the handler's frame is at RSP (SDM Vol. 3A, 6.14.2). */
static void label_exception_frame(es_taint *t, es_machine *m)
{
    t->exc_pending = false;
    if (!m->has_kernel || m->cpl != 0)
        return;
    uint64_t sp = m->gpr[ES_RSP];
    if (t->exc_err)
        es_taint_set_mem(t, sp, 8, 0), sp += 8;
    es_taint_set_mem(t, sp, 8, t->e_rip);
    es_taint_set_mem(t, sp + 8, 8, 0);
    es_taint_set_mem(t, sp + 16, 8, t->e_flags);
    es_taint_set_mem(t, sp + 24, 8, t->e_rsp);
    es_taint_set_mem(t, sp + 32, 8, 0);
    if (t->exc_user)
        t->reg[ES_RSP] = 0; /* the TSS's RSP0 */
}

/* In kernel-only mode user code is not followed, except the instructions
 * that enter the kernel (their frames and registers carry user labels). */
static bool enters_kernel(unsigned op)
{
    return op == ES_OP_SYSCALL || op == ES_OP_SYSENTER || op == ES_OP_INT ||
           op == ES_OP_INT3 || op == ES_OP_INTO;
}

static void before(void *ctx, es_machine *m, const es_insn *d, uint64_t rip)
{
    es_taint *t = ctx;
    if (t->exc_pending)
        label_exception_frame(t, m);
    if (t->kernel_only && m->cpl == 3 && !enters_kernel(d->op)) {
        t->live = false;
        return;
    }
    t->live = true;
    t->rd = 0;
    t->wl = 0;
    t->wl_rd = false;
    t->movs = false;
    t->mr_n = 0;
    t->nw = 0;
    t->fmode = F_NONE;
    t->int_frame = false;
    t->cpl0 = m->cpl;
    es_tvec_begin(&t->vec);
    rules[es_isa_taint[d->op]](t, m, d, rip);
}

static void on_mem(void *ctx, es_machine *m, uint64_t va, unsigned size, int write)
{
    es_taint *t = ctx;
    if (!t->live)
        return;
    /* the kernel reading user memory reads user-controlled data, whoever
     * wrote it */
    bool umem = m->cpl == 0 && va < ES_TAINT_USER_TOP;
    if (!write) {
        t->rd |= umem ? ES_TL_MEM : es_taint_mem(t, va, size);
        if (t->movs) {
            t->mr_va = va;
            t->mr_n = size;
        }
        return;
    }
    if (t->movs && t->mr_n == size) {
        for (unsigned i = 0; i < size; i++)
            es_taint_set_mem(t, va + i, 1,
                             m->cpl == 0 && t->mr_va < ES_TAINT_USER_TOP
                                 ? ES_TL_MEM
                                 : es_taint_mem(t, t->mr_va + i, 1));
        t->mr_n = 0;
        return;
    }
    es_taint_set_mem(t, va, size, t->wl | (t->wl_rd ? t->rd : 0));
}

static void retire(void *ctx, es_machine *m, const es_insn *d, uint64_t rip)
{
    es_taint *t = ctx;
    (void)d;
    (void)rip;
    if (!t->live)
        return;
    t->live = false;
    for (int i = 0; i < t->nw; i++) {
        const pend_w *w = &t->w[i];
        es_label l = w->l | (w->add_rd ? t->rd : 0);
        t->reg[w->reg] = w->merge ? (t->reg[w->reg] | l) : l;
    }
    if (t->fmode != F_NONE) {
        es_label l = t->fl | (t->f_rd ? t->rd : 0);
        t->flags = t->fmode == F_MERGE ? (t->flags | l) : l;
    }
    es_tvec_retire(&t->vec, t->rd);
    if (t->int_frame && m->cpl == 0) {
        /* SDM Vol. 3A, 6.14.2: SS, RSP, RFLAGS, CS, RIP pushed on the new
         * stack; RSP itself came from the TSS if the privilege changed */
        uint64_t sp = m->gpr[ES_RSP];
        es_taint_set_mem(t, sp, 8, t->f_rip);
        es_taint_set_mem(t, sp + 8, 8, 0);
        es_taint_set_mem(t, sp + 16, 8, t->f_flags);
        es_taint_set_mem(t, sp + 24, 8, t->f_rsp);
        es_taint_set_mem(t, sp + 32, 8, 0);
        if (t->cpl0 == 3)
            t->reg[ES_RSP] = 0;
    }
}

static void exception(void *ctx, es_machine *m, int vector, uint32_t error)
{
    es_taint *t = ctx;
    (void)error;
    if (t->live) /* a gather that faults keeps what it completed */
        es_tvec_fault(&t->vec, t->rd);
    t->live = false;
    if (!m->has_kernel)
        return;
    bool user = m->cpl == 3;
    t->exc_pending = true;
    t->exc_user = user;
    t->exc_err = vector == ES_VEC_DF || (vector >= ES_VEC_TS && vector <= ES_VEC_PF) ||
                 vector == ES_VEC_AC;
    t->e_rip = user ? t->rip_label : 0;
    t->e_flags = t->flags | (user ? t->rflags_label : 0);
    t->e_rsp = t->reg[ES_RSP];
}

/* The kernel's host half copied or wrote guest memory: the labels go with
 * the bytes (fork's pt_regs for the child), or are dropped. */
static void on_kcopy(void *ctx, es_machine *m, uint64_t dst, uint64_t src, size_t n)
{
    (void)m;
    es_taint *t = ctx;
    for (size_t i = 0; i < n; i++)
        es_taint_set_mem(t, dst + i, 1, src ? es_taint_mem(t, src + i, 1) : 0);
}

int es_taint_attach(es_machine *m, es_taint *t)
{
    es_observer o = {0};
    o.ctx = t;
    o.before = before;
    o.retire = retire;
    o.mem = on_mem;
    o.exception = exception;
    o.kcopy = on_kcopy;
    return es_observe(m, &o);
}
