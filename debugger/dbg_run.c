/* dbg_run.c - run control: every command is a loop of recorded single
 * steps (dbg_step1) with a goal checked before and after each one, and of
 * runs recorded whole -- of user code, unobserved (dbg_run_user), and of
 * kernel code, stepped with every observer (dbg_run_kernel) -- that stop
 * in front of everything the goal or the session needs to see one step at
 * a time, or whose re-run for reverse would not repeat it. */
#include <stdlib.h>
#include <string.h>

#include "dbg_int.h"

enum goal_kind { G_STEP, G_UNTIL, G_NEXT, G_FINISH, G_CONT, G_SYSCALL, G_KENTRY, G_KEXIT };

typedef struct goal {
    int kind;
    uint64_t n;     /* G_STEP */
    uint64_t addr;  /* G_UNTIL, G_NEXT: where to stop */
    uint64_t rsp;   /* G_NEXT, G_FINISH: the frame the command started in */
    int cpl;        /* G_NEXT, G_FINISH: its privilege level */
} goal;

/* Decodes the instruction at RIP (no side effects); false if it does not. */
static bool peek(es_dbg *d, es_insn *out)
{
    uint8_t b[16];
    size_t got = dbg_read(d->m, d->m->rip, b, 15);
    return got && es_decode(b, got, d->m->mode, d->m->rip, out) == ES_DECODE_OK;
}

static bool user_entry_insn(es_dbg *d)
{
    es_insn i;
    if (d->m->cpl != 3 || !peek(d, &i))
        return false;
    return i.op == ES_OP_SYSCALL || i.op == ES_OP_SYSENTER ||
           (i.op == ES_OP_INT && i.nops && i.o[0].imm == 0x80);
}

static es_dbg_bp *bp_at(es_dbg *d, uint64_t rip)
{
    for (size_t i = 0; i < d->nbps; i++)
        if (d->bps[i].addr && d->bps[i].addr == rip)
            return &d->bps[i];
    return NULL;
}

static int bp_here(es_dbg *d)
{
    es_dbg_bp *b = bp_at(d, d->m->rip);
    if (!b)
        return 0;
    b->hits++;
    return b->id;
}

/* ---- runs of user code ---- */

typedef struct fence_ctx {
    es_dbg *d;
    const goal *g;
} fence_ctx;

static bool goal_addr(const goal *g)
{
    return g->kind == G_UNTIL || g->kind == G_NEXT;
}

/* What a run stops in front of, for a recorded step: the instructions
 * that enter the kernel (the session labels the registers and opens the
 * pt_regs tracking at them), VMCALL (the host services it: it may write
 * guest memory and reach files and the clock, which a re-run for reverse
 * must not repeat), RDTSC/RDTSCP/RDPMC (host values: a re-run must see the
 * same ones), breakpoints, the goal's address, and finish's RETs. */
static bool fenced(void *ctx, const es_insn *i, uint64_t rip)
{
    const fence_ctx *c = ctx;
    switch (i->op) {
    case ES_OP_SYSCALL: case ES_OP_SYSENTER: case ES_OP_INT: case ES_OP_INT1:
    case ES_OP_INT3: case ES_OP_INTO: case ES_OP_VMCALL:
    case ES_OP_RDTSC: case ES_OP_RDTSCP: case ES_OP_RDPMC:
        return true;
    case ES_OP_RET:
        if (c->g->kind == G_FINISH)
            return true;
        break;
    default: break;
    }
    if (goal_addr(c->g) && rip == c->g->addr)
        return true;
    return bp_at(c->d, rip) != NULL;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        h = (h ^ ((v >> (8 * i)) & 0xff)) * 0x100000001b3ull; /* FNV-1a */
    return h;
}

/* The fence for goal g; its key names what it refuses (the block cache is
 * cut again when that changes). */
static es_fence make_fence(es_dbg *d, const goal *g, fence_ctx *c)
{
    c->d = d;
    c->g = g;
    uint64_t h = mix(0xcbf29ce484222325ull, g->kind == G_FINISH);
    h = mix(h, goal_addr(g) ? g->addr : 0);
    for (size_t i = 0; i < d->nbps; i++)
        h = mix(h, d->bps[i].addr);
    return (es_fence){.fn = fenced, .ctx = c, .key = h | 1};
}

/* A run of user code (CPL 3) or of kernel code (CPL 0) in one record;
 * the steps it took (0: none, the next instruction is dbg_step1's). */
static uint64_t run_any(es_dbg *d, uint64_t budget, const es_fence *f, int *st)
{
    if (d->m->cpl == 3)
        return dbg_run_user(d, budget, f, st);
    return dbg_run_kernel(d, budget, f, st);
}

/* Steps before a reverse's target re-run one record each, so the reverse
 * steps after it are a record each too. */
#define REPLAY_TAIL 1024

/* Forward `steps` steps inside the run whose record was just undone
 * (deterministic: the run had nothing fenced).  With hit: the last count
 * of steps after the start at which RIP was at a breakpoint, and no tail.
 * Steps, not instructions: a kernel run's fault takes a step and retires
 * nothing. */
static void replay(es_dbg *d, uint64_t steps, uint64_t *hit)
{
    goal g = {.kind = G_CONT};
    fence_ctx c;
    es_fence f = make_fence(d, &g, &c);
    uint64_t done = 0, tail = hit ? 0 : REPLAY_TAIL;
    while (done < steps && !d->exited) {
        if (hit && done > 0 && bp_at(d, d->m->rip))
            *hit = done;
        int st;
        uint64_t left = steps - done, ran;
        if (left > tail + 1 && (ran = run_any(d, left - tail, &f, &st))) {
            done += ran;
            continue;
        }
        done++;
        if (dbg_step1(d) >= 0)
            break;
    }
}

/* Undoes one record and re-runs into it up to its last step: one step
 * back. */
static bool back_one(es_dbg *d)
{
    uint64_t span;
    if (!dbg_undo_pop(d, &span))
        return false;
    d->exited = false;
    if (span > 1)
        replay(d, span - 1, NULL);
    d->frame_base = dbg_ptregs_base(d);
    return true;
}

static int finish_cmd(es_dbg *d, int why, int bp)
{
    d->last_stop = why;
    d->bp_hit = bp;
    free(d->probe_text);
    d->probe_text = NULL;
    dbg_output_poll(d);
    return why;
}

/* Whether goal g is reached at the current instruction (before it runs). */
static bool reached_before(es_dbg *d, const goal *g)
{
    es_machine *m = d->m;
    switch (g->kind) {
    case G_UNTIL: return m->rip == g->addr;
    case G_NEXT: return m->rip == g->addr && m->cpl == g->cpl && m->gpr[ES_RSP] >= g->rsp;
    case G_SYSCALL: return user_entry_insn(d);
    default: return false;
    }
}

/* Whether goal g is reached after the step just taken (at privilege level
 * pcpl; last: it was finish's RET). */
static bool reached_after(es_dbg *d, const goal *g, uint64_t done, int pcpl, bool last)
{
    int cpl = d->m->cpl;
    switch (g->kind) {
    case G_STEP: return done >= g->n;
    /* the kernel's entry code returns to user mode, not with RET */
    case G_FINISH: return last || (g->cpl == 0 && pcpl == 0 && cpl == 3);
    case G_KENTRY: return pcpl == 3 && cpl == 0;
    case G_KEXIT: return pcpl == 0 && cpl == 3;
    default: return false;
    }
}

static int run(es_dbg *d, goal g)
{
    es_machine *m = d->m;
    dbg_remember_regs(d);
    if (d->exited)
        return finish_cmd(d, m->stop == ES_STOP_EXIT ? ES_DBG_EXITED : ES_DBG_FAULTED, 0);
    uint64_t budget = d->cfg.run_budget ? d->cfg.run_budget : 200000000u;
    fence_ctx fc;
    es_fence f = make_fence(d, &g, &fc);
    bool step_next = false; /* a run just stopped in front of something */
    for (uint64_t i = 0;;) {
        if (i > 0) {
            /* a resuming command never stops where it started */
            int bp = bp_here(d);
            if (bp)
                return finish_cmd(d, ES_DBG_BREAKPOINT, bp);
            if (reached_before(d, &g))
                return finish_cmd(d, ES_DBG_REACHED, 0);
        }
        if (i >= budget)
            return finish_cmd(d, ES_DBG_BUDGET, 0);
        if (!step_next) {
            /* up to the next fenced instruction (or CPL change), in one
             * record */
            uint64_t lim = budget - i;
            if (g.kind == G_STEP && g.n - i < lim)
                lim = g.n - i;
            int st, pcpl = m->cpl;
            uint64_t ran = lim > 1 ? run_any(d, lim, &f, &st) : 0;
            if (ran) {
                i += ran;
                if (st >= 0)
                    return finish_cmd(d, st, 0);
                /* a kernel run's last step may have left the kernel */
                if ((m->cpl != pcpl || g.kind == G_STEP) &&
                    reached_after(d, &g, i, pcpl, false))
                    return finish_cmd(d, g.kind == G_STEP ? ES_DBG_STEPPED : ES_DBG_REACHED, 0);
                step_next = ran < lim && m->cpl == pcpl;
                continue;
            }
        }
        step_next = false;
        /* step out: the RET that pops the frame the command started in
         * (its RSP is at or above the starting one: nested calls' RETs
         * run deeper), at the same privilege level */
        bool last = false;
        if (g.kind == G_FINISH && m->cpl == g.cpl) {
            es_insn ins;
            if (peek(d, &ins) && ins.op == ES_OP_RET && m->gpr[ES_RSP] >= g.rsp)
                last = true;
        }
        int pcpl = m->cpl;
        int st = dbg_step1(d);
        i++;
        if (st >= 0)
            return finish_cmd(d, st, 0);
        if (reached_after(d, &g, i, pcpl, last))
            return finish_cmd(d, g.kind == G_STEP ? ES_DBG_STEPPED : ES_DBG_REACHED, 0);
    }
}

int es_dbg_step(es_dbg *d, uint64_t n)
{
    if (n == 0) {
        dbg_remember_regs(d);
        return finish_cmd(d, ES_DBG_STEPPED, 0);
    }
    return run(d, (goal){.kind = G_STEP, .n = n});
}

int es_dbg_next(es_dbg *d)
{
    es_insn ins;
    if (!d->exited && peek(d, &ins) &&
        (ins.op == ES_OP_CALL || ins.op == ES_OP_SYSCALL || ins.op == ES_OP_SYSENTER ||
         ins.op == ES_OP_INT)) {
        /* over a call, or over a whole system call: to the next instruction
         * at this privilege level with the stack no deeper */
        uint64_t ret = (d->m->rip + ins.len) & d->m->ipmask;
        return run(d, (goal){.kind = G_NEXT, .addr = ret, .rsp = d->m->gpr[ES_RSP],
                             .cpl = d->m->cpl});
    }
    return es_dbg_step(d, 1);
}

int es_dbg_finish(es_dbg *d)
{
    return run(d, (goal){.kind = G_FINISH, .rsp = d->m->gpr[ES_RSP], .cpl = d->m->cpl});
}

int es_dbg_continue(es_dbg *d)
{
    return run(d, (goal){.kind = G_CONT});
}

int es_dbg_run_to(es_dbg *d, int target)
{
    static const int kinds[] = {G_SYSCALL, G_KENTRY, G_KEXIT};
    if (target < 0 || target > ES_DBG_TO_KEXIT)
        target = ES_DBG_TO_SYSCALL;
    return run(d, (goal){.kind = kinds[target]});
}

int es_dbg_until(es_dbg *d, uint64_t addr)
{
    return run(d, (goal){.kind = G_UNTIL, .addr = addr});
}

int es_dbg_reverse(es_dbg *d, uint64_t n)
{
    dbg_remember_regs(d);
    for (uint64_t i = 0; i < n; i++)
        if (!back_one(d))
            return finish_cmd(d, ES_DBG_HISTORY_END, 0);
    return finish_cmd(d, ES_DBG_STEPPED, 0);
}

int es_dbg_reverse_continue(es_dbg *d)
{
    dbg_remember_regs(d);
    for (;;) {
        uint64_t span;
        if (!dbg_undo_pop(d, &span))
            return finish_cmd(d, ES_DBG_HISTORY_END, 0);
        d->exited = false;
        if (span > 1) {
            /* a run: the last breakpoint inside it, found by running it
             * again, then back to its start (the records the re-run
             * pushed) and forward to that */
            uint64_t pushed = d->undo.pushed, hit = 0, s;
            replay(d, span, &hit);
            for (uint64_t k = d->undo.pushed - pushed; k && dbg_undo_pop(d, &s); k--)
                ;
            d->exited = false;
            if (hit)
                replay(d, hit, NULL);
        }
        d->frame_base = dbg_ptregs_base(d);
        int bp = bp_here(d);
        if (bp)
            return finish_cmd(d, ES_DBG_BREAKPOINT, bp);
    }
}

const char *es_dbg_stop_name(int why)
{
    static const char *const n[] = {"stepped", "reached", "breakpoint", "exited",
                                    "faulted", "budget",  "history-end"};
    return why >= 0 && why <= ES_DBG_HISTORY_END ? n[why] : "?";
}
