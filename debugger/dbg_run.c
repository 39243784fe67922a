/* dbg_run.c - run control: every command is a loop of recorded single
 * steps (dbg_step1) with a goal checked before and after each one. */
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

static int bp_here(es_dbg *d)
{
    for (size_t i = 0; i < d->nbps; i++)
        if (d->bps[i].addr && d->bps[i].addr == d->m->rip) {
            d->bps[i].hits++;
            return d->bps[i].id;
        }
    return 0;
}

static void remember_regs(es_dbg *d)
{
    d->nprev = es_dbg_regs(d, d->prev_regs, ES_DBG_MAX_REGS);
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

static int run(es_dbg *d, goal g)
{
    es_machine *m = d->m;
    remember_regs(d);
    if (d->exited)
        return finish_cmd(d, m->stop == ES_STOP_EXIT ? ES_DBG_EXITED : ES_DBG_FAULTED, 0);
    uint64_t budget = d->cfg.run_budget ? d->cfg.run_budget : 200000000u;
    for (uint64_t i = 0;; i++) {
        if (i > 0) {
            /* a resuming command never stops where it started */
            int bp = bp_here(d);
            if (bp)
                return finish_cmd(d, ES_DBG_BREAKPOINT, bp);
            bool reached = false;
            switch (g.kind) {
            case G_UNTIL: reached = m->rip == g.addr; break;
            case G_NEXT:
                reached = m->rip == g.addr && m->cpl == g.cpl && m->gpr[ES_RSP] >= g.rsp;
                break;
            case G_SYSCALL: reached = user_entry_insn(d); break;
            default: break;
            }
            if (reached)
                return finish_cmd(d, ES_DBG_REACHED, 0);
        }
        if (i >= budget)
            return finish_cmd(d, ES_DBG_BUDGET, 0);
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
        if (st >= 0)
            return finish_cmd(d, st, 0);
        switch (g.kind) {
        case G_STEP:
            if (i + 1 >= g.n)
                return finish_cmd(d, ES_DBG_STEPPED, 0);
            break;
        case G_FINISH:
            /* the kernel's entry code returns to user mode, not with RET */
            if (last || (g.cpl == 0 && pcpl == 0 && m->cpl == 3))
                return finish_cmd(d, ES_DBG_REACHED, 0);
            break;
        case G_KENTRY:
            if (pcpl == 3 && m->cpl == 0)
                return finish_cmd(d, ES_DBG_REACHED, 0);
            break;
        case G_KEXIT:
            if (pcpl == 0 && m->cpl == 3)
                return finish_cmd(d, ES_DBG_REACHED, 0);
            break;
        default: break;
        }
    }
}

int es_dbg_step(es_dbg *d, uint64_t n)
{
    if (n == 0) {
        remember_regs(d);
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
    remember_regs(d);
    for (uint64_t i = 0; i < n; i++) {
        if (!dbg_undo_pop(d))
            return finish_cmd(d, ES_DBG_HISTORY_END, 0);
        d->exited = false;
        d->frame_base = dbg_ptregs_base(d);
    }
    return finish_cmd(d, ES_DBG_STEPPED, 0);
}

int es_dbg_reverse_continue(es_dbg *d)
{
    remember_regs(d);
    for (uint64_t i = 0;; i++) {
        if (!dbg_undo_pop(d))
            return finish_cmd(d, ES_DBG_HISTORY_END, 0);
        d->exited = false;
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
