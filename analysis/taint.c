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

#include "mem.h"

#define PAGE 4096ull
#define RSP_BIT (1u << ES_RSP)

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

static es_label byte_label(const es_taint *t, uint64_t va)
{
    const shpage *p = find_page(t, va & ~(PAGE - 1));
    return p ? p->lab[va & (PAGE - 1)] : 0;
}

es_label es_taint_mem(const es_taint *t, uint64_t va, size_t n)
{
    es_label l = 0;
    for (size_t i = 0; i < n; i++)
        l |= byte_label(t, va + i);
    return l;
}

int es_taint_set_mem(es_taint *t, uint64_t va, size_t n, es_label l)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t a = va + i;
        if (l == 0) {
            shpage *p = find_page(t, a & ~(PAGE - 1));
            if (p)
                p->lab[a & (PAGE - 1)] = 0;
            continue;
        }
        es_label *lab = get_page(t, a & ~(PAGE - 1));
        if (!lab)
            return -1;
        lab[a & (PAGE - 1)] = l;
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
    t->flags = t->rip_label = t->rflags_label = 0;
    for (size_t i = 0; i < t->cap; i++)
        if (t->pages[i].lab)
            memset(t->pages[i].lab, 0, PAGE * sizeof(es_label));
}

void es_taint_kernel_only(es_taint *t, bool on) { t->kernel_only = on; }

es_label es_taint_reg(const es_taint *t, int reg) { return t->reg[reg & 15]; }
void es_taint_set_reg(es_taint *t, int reg, es_label l) { t->reg[reg & 15] = l; }
es_label es_taint_flags(const es_taint *t) { return t->flags; }
void es_taint_set_flags(es_taint *t, es_label l) { t->flags = l; }

void es_taint_label_user_regs(es_taint *t, es_machine *m, int abi)
{
    (void)m;
    for (int i = 0; i < 16; i++)
        t->reg[i] = (abi == 1 && i >= 8) ? 0 : ES_TL_REG(i);
    t->reg[ES_RAX] = ES_TL_NR;
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

/* ---- per-instruction rules ---- */

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

static bool same_reg(const es_insn *d)
{
    return d->nops >= 2 && d->o[0].kind == ES_OPK_GPR && d->o[1].kind == ES_OPK_GPR &&
           d->o[0].reg == d->o[1].reg && d->o[0].size == d->o[1].size;
}

/* Everything the instruction reads goes to everything it writes (implicit
 * operands included; RSP only when named explicitly, since stack-pointer
 * arithmetic does not carry data). */
static void fallback(es_taint *t, es_machine *m, const es_insn *d, uint64_t rip)
{
    uint8_t buf[16];
    es_access_info a;
    uint64_t lin = (rip + m->seg[ES_SEG_CS].base) & m->ipmask;
    size_t got = es_fetch_bytes(m, lin, buf, 15);
    if (!got || es_decode_access(buf, got, d->mode, rip, &a) != ES_DECODE_OK)
        return;
    unsigned expl = 0;
    for (int i = 0; i < d->nops; i++)
        if (d->o[i].kind == ES_OPK_GPR || d->o[i].kind == ES_OPK_HI8)
            expl |= 1u << d->o[i].reg;
    unsigned rmask = a.gpr_read & ~(RSP_BIT & ~expl);
    unsigned wmask = a.gpr_write & ~(RSP_BIT & ~expl);
    es_label l = 0;
    for (int i = 0; i < 16; i++)
        if (rmask & (1u << i))
            l |= t->reg[i];
    if (a.flags_read & ES_ARITH_FLAGS)
        l |= t->flags;
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

static void before(void *ctx, es_machine *m, const es_insn *d, uint64_t rip)
{
    es_taint *t = ctx;

    if (t->exc_pending) {
        /* the previous instruction faulted and the fault went through the
         * IDT: the handler's frame is at RSP (SDM Vol. 3A, 6.14.2) */
        t->exc_pending = false;
        if (m->has_kernel && m->cpl == 0) {
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
    }

    if (t->kernel_only && m->cpl == 3 && d->op != ES_OP_SYSCALL && d->op != ES_OP_SYSENTER &&
        d->op != ES_OP_INT && d->op != ES_OP_INT3 && d->op != ES_OP_INTO) {
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

    const es_operand *o = d->o;
    bool mem = false;
    es_label l;
    unsigned op = d->op;
    bool user = m->cpl == 3;

    switch (op) {
    case ES_OP_MOV:
    case ES_OP_MOVZX:
    case ES_OP_MOVSX:
    case ES_OP_MOVSXD:
        l = src(t, &o[1], &mem);
        if (o[0].kind == ES_OPK_MEM) {
            t->wl = l;
        } else if (o[0].kind == ES_OPK_GPR || o[0].kind == ES_OPK_HI8) {
            /* moves copy; a 32-bit move zero-extends and so replaces */
            qw_op(t, &o[0], l, mem);
        }
        return;
    case ES_OP_LEA:
        qw_op(t, &o[0], src(t, &o[1], &mem), false);
        return;
    case ES_OP_XOR:
    case ES_OP_SUB:
    case ES_OP_SBB:
        if (same_reg(d)) {
            if (op == ES_OP_SBB) {
                /* sbb r,r = -CF: the carry's label alone (array_index_nospec's
                 * mask after cmp nr, NR derives from nr) */
                qw_op(t, &o[0], t->flags, false);
                qflags(t, F_REPLACE, t->flags, false);
            } else {
                qw_op(t, &o[0], 0, false); /* the zero idiom */
                qflags(t, F_REPLACE, 0, false);
            }
            return;
        }
        /* fall through */
    case ES_OP_ADD:
    case ES_OP_ADC:
    case ES_OP_AND:
    case ES_OP_OR:
        l = src(t, &o[0], &mem) | src(t, &o[1], &mem);
        if (op == ES_OP_ADC || op == ES_OP_SBB)
            l |= t->flags;
        if (o[0].kind == ES_OPK_MEM) {
            t->wl = l;
            t->wl_rd = true;
        } else {
            qw_op(t, &o[0], l, mem);
        }
        qflags(t, F_REPLACE, l, mem);
        return;
    case ES_OP_CMP:
    case ES_OP_TEST:
        l = src(t, &o[0], &mem) | src(t, &o[1], &mem);
        qflags(t, F_REPLACE, l, mem);
        return;
    case ES_OP_INC:
    case ES_OP_DEC:
    case ES_OP_NEG:
    case ES_OP_NOT:
        l = src(t, &o[0], &mem);
        if (o[0].kind == ES_OPK_MEM) {
            t->wl = l;
            t->wl_rd = true;
        } else {
            qw_op(t, &o[0], l, mem);
        }
        if (op == ES_OP_NEG)
            qflags(t, F_REPLACE, l, mem);
        else if (op != ES_OP_NOT)
            qflags(t, F_MERGE, l, mem); /* CF is left alone */
        return;
    case ES_OP_SHL:
    case ES_OP_SHR:
    case ES_OP_SAR:
    case ES_OP_ROL:
    case ES_OP_ROR:
    case ES_OP_RCL:
    case ES_OP_RCR:
    case ES_OP_SHLD:
    case ES_OP_SHRD:
        l = 0;
        for (int i = 0; i < d->nops; i++)
            l |= src(t, &o[i], &mem);
        if (op == ES_OP_RCL || op == ES_OP_RCR)
            l |= t->flags;
        if (o[0].kind == ES_OPK_MEM) {
            t->wl = l;
            t->wl_rd = true;
        } else {
            qw_op(t, &o[0], l, mem);
        }
        qflags(t, F_MERGE, l, mem); /* a zero count leaves the flags */
        return;
    case ES_OP_CMOVO: case ES_OP_CMOVNO: case ES_OP_CMOVB: case ES_OP_CMOVNB:
    case ES_OP_CMOVZ: case ES_OP_CMOVNZ: case ES_OP_CMOVBE: case ES_OP_CMOVNBE:
    case ES_OP_CMOVS: case ES_OP_CMOVNS: case ES_OP_CMOVP: case ES_OP_CMOVNP:
    case ES_OP_CMOVL: case ES_OP_CMOVNL: case ES_OP_CMOVLE: case ES_OP_CMOVNLE: {
        /* the value moved (or kept), plus the flags that chose it */
        bool taken = cond(m->rflags, d->opcode & 15);
        if (taken)
            l = src(t, &o[1], &mem);
        else
            l = t->reg[o[0].reg & 15];
        qw(t, o[0].reg, l | t->flags, mem, o[0].size < 4);
        return;
    }
    case ES_OP_SETO: case ES_OP_SETNO: case ES_OP_SETB: case ES_OP_SETNB:
    case ES_OP_SETZ: case ES_OP_SETNZ: case ES_OP_SETBE: case ES_OP_SETNBE:
    case ES_OP_SETS: case ES_OP_SETNS: case ES_OP_SETP: case ES_OP_SETNP:
    case ES_OP_SETL: case ES_OP_SETNL: case ES_OP_SETLE: case ES_OP_SETNLE:
        if (o[0].kind == ES_OPK_MEM)
            t->wl = t->flags;
        else
            qw_op(t, &o[0], t->flags, false);
        return;
    case ES_OP_XCHG:
        if (o[0].kind == ES_OPK_MEM || o[1].kind == ES_OPK_MEM) {
            const es_operand *r = o[0].kind == ES_OPK_MEM ? &o[1] : &o[0];
            t->wl = t->reg[r->reg & 15];
            qw_op(t, r, 0, true);
        } else {
            es_label a = t->reg[o[0].reg & 15], b = t->reg[o[1].reg & 15];
            qw_op(t, &o[0], b, false);
            qw_op(t, &o[1], a, false);
        }
        return;
    case ES_OP_BSWAP:
        return; /* the same bytes, reordered */
    case ES_OP_PUSH:
        /* the pushed value; RSP's own label is not data */
        t->wl = src(t, &o[0], &mem);
        t->wl_rd = mem;
        return;
    case ES_OP_POP:
        if (o[0].kind == ES_OPK_MEM)
            t->wl_rd = true;
        else
            qw_op(t, &o[0], 0, true);
        return;
    case ES_OP_PUSHF:
    case ES_OP_PUSHFD:
    case ES_OP_PUSHFQ:
        t->wl = t->flags;
        return;
    case ES_OP_POPF:
    case ES_OP_POPFD:
    case ES_OP_POPFQ:
        qflags(t, F_REPLACE, 0, true);
        return;
    case ES_OP_CALL:
        t->wl = 0; /* the return address: the kernel's own RIP */
        return;
    case ES_OP_RET:
    case ES_OP_JMP:
    case ES_OP_NOP:
    case ES_OP_LFENCE:
    case ES_OP_MFENCE:
    case ES_OP_SFENCE:
    case ES_OP_PAUSE:
    case ES_OP_CLI:
    case ES_OP_STI:
    case ES_OP_CLD:
    case ES_OP_STD:
    case ES_OP_HLT:
    case ES_OP_WRMSR:
    case ES_OP_SWAPGS:
        return;
    case ES_OP_LEAVE:
        qw(t, ES_RSP, t->reg[ES_RBP], false, false);
        qw(t, ES_RBP, 0, true, false);
        return;
    case ES_OP_MOVSB:
    case ES_OP_MOVSW:
    case ES_OP_MOVSD:
    case ES_OP_MOVSQ:
        if (d->nops == 0) {
            t->movs = true;
            return;
        }
        break;
    case ES_OP_STOSB:
    case ES_OP_STOSW:
    case ES_OP_STOSD:
    case ES_OP_STOSQ:
        t->wl = t->reg[ES_RAX];
        return;
    case ES_OP_LODSB:
    case ES_OP_LODSW:
    case ES_OP_LODSD:
    case ES_OP_LODSQ:
        qw(t, ES_RAX, 0, true, op == ES_OP_LODSB || op == ES_OP_LODSW);
        return;
    case ES_OP_SCASB:
    case ES_OP_SCASW:
    case ES_OP_SCASD:
    case ES_OP_SCASQ:
        qflags(t, F_REPLACE, t->reg[ES_RAX], true);
        return;
    case ES_OP_CMPSB:
    case ES_OP_CMPSW:
    case ES_OP_CMPSD:
    case ES_OP_CMPSQ:
        if (d->nops == 0) {
            qflags(t, F_REPLACE, 0, true);
            return;
        }
        break;
    case ES_OP_SYSCALL:
        /* SDM Vol. 2B SYSCALL: RCX <- RIP of the next insn, R11 <- RFLAGS */
        if (user) {
            qw(t, ES_RCX, t->rip_label, false, false);
            qw(t, ES_R11, t->flags | t->rflags_label, false, false);
        }
        if (!m->has_kernel)
            qw(t, ES_RAX, 0, false, false); /* the host's return value */
        return;
    case ES_OP_SYSENTER:
        qw(t, ES_RSP, 0, false, false); /* from IA32_SYSENTER_ESP */
        if (!m->has_kernel)
            qw(t, ES_RAX, 0, false, false);
        return;
    case ES_OP_SYSRET:
        qflags(t, F_REPLACE, t->reg[ES_R11], false);
        return;
    case ES_OP_SYSEXIT:
        qw(t, ES_RSP, t->reg[ES_RCX], false, false);
        return;
    case ES_OP_INT:
    case ES_OP_INT1:
    case ES_OP_INT3:
    case ES_OP_INTO:
        if (!m->has_kernel) {
            qw(t, ES_RAX, 0, false, false);
            return;
        }
        t->int_frame = true;
        t->f_rip = user ? t->rip_label : 0;
        t->f_flags = t->flags | (user ? t->rflags_label : 0);
        t->f_rsp = t->reg[ES_RSP];
        return;
    case ES_OP_IRET:
    case ES_OP_IRETD:
    case ES_OP_IRETQ: {
        unsigned s = op == ES_OP_IRETQ ? 8 : op == ES_OP_IRETD ? 4 : 2;
        uint64_t sp = m->gpr[ES_RSP];
        qflags(t, F_REPLACE, es_taint_mem(t, sp + 2 * s, s), false);
        qw(t, ES_RSP, es_taint_mem(t, sp + 3 * s, s), false, false);
        return;
    }
    case ES_OP_VMCALL:
        qw(t, ES_RAX, 0, false, false); /* the hypercall's result */
        return;
    case ES_OP_RDMSR:
    case ES_OP_RDTSC:
    case ES_OP_RDTSCP:
    case ES_OP_CPUID:
    case ES_OP_XGETBV:
    case ES_OP_RDPID: {
        /* machine state, not user data */
        uint8_t buf[16];
        es_access_info a;
        uint64_t lin = (rip + m->seg[ES_SEG_CS].base) & m->ipmask;
        size_t got = es_fetch_bytes(m, lin, buf, 15);
        if (got && es_decode_access(buf, got, d->mode, rip, &a) == ES_DECODE_OK)
            for (int i = 0; i < 16; i++)
                if (a.gpr_write & (1u << i))
                    qw(t, i, 0, false, false);
        return;
    }
    default:
        break;
    }
    fallback(t, m, d, rip);
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
                                 : byte_label(t, t->mr_va + i));
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

int es_taint_attach(es_machine *m, es_taint *t)
{
    es_observer o = {0};
    o.ctx = t;
    o.before = before;
    o.retire = retire;
    o.mem = on_mem;
    o.exception = exception;
    return es_observe(m, &o);
}
