/* phases.c - the per-syscall phase tracker (phases.h; docs/TIMING.md).
 *
 * One observer.  `before` remembers the CPL, RSP and, for a kernel entry
 * instruction at CPL 3, the entry kind and number; `retire` charges the
 * instruction's cycles (the timing model's retire-time delta, or 1) to the
 * phase it belongs to and moves the phase on.  Boundaries:
 *   - CPL 3 -> 0 across a SYSCALL / SYSENTER / INT 0x80: hw_entry, a new
 *     record; across anything else (a fault, INT3): a trap record.
 *   - entry_asm -> dispatch at the first instruction of a C dispatcher
 *     (do_syscall_64, do_int80_syscall_32, do_fast_syscall_32,
 *     es_do_exception); the RSP there marks its frame.
 *   - dispatch -> stub at the first instruction of any function the two
 *     syscall tables point to (read from the image at attach time), however
 *     it is reached: `call *%rax`, a retpoline thunk's `ret`, a vsyscall
 *     emulation's direct call.
 *   - stub -> body at the first instruction of a body symbol (__do_sys_*,
 *     __do_compat_sys_*, SYSC_*, C_SYSC_*), by call or tail jump.
 *   - body -> stub, stub/body -> exit_path, dispatch -> exit_path when RSP
 *     rises above the value it had at that function's first instruction
 *     (the slot of its return address): the function has returned.  A
 *     callee never pops above its own return address, so this holds
 *     whatever the compiler or the mitigations put in between.
 *   - CPL 0 -> 3 (SYSRET, SYSEXIT, IRET to user mode): hw_exit, record
 *     closed.
 * Kernel work before the first user instruction is boot.
 */
#include "phases.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "decoder.h"
#include "exposure.h"
#include "fault.h"
#include "host.h"
#include "kernel.h"
#include "vm.h"

const char *es_phase_name(int phase)
{
    static const char *const n[] = {"hw_entry", "entry_asm", "dispatch", "stub",
                                    "body", "exit_path", "hw_exit"};
    return phase >= 0 && phase < ES_PH_COUNT ? n[phase] : "?";
}

const char *es_ph_entry_name(int entry)
{
    return entry == ES_PH_ENTRY_TRAP   ? "trap"
           : entry == ES_PH_ENTRY_FORK ? "child"
                                       : es_entry_name(entry);
}

enum { ST_BOOT, ST_USER, ST_KERNEL };

#define NDISP 4

struct es_phases {
    es_machine *m;
    es_timing *t;
    uint64_t last; /* es_timing_cycles at the previous charged retirement */
    /* with a timing model, plain user-mode instructions are not charged one
     * by one: `lazy` says some retired since `last`, and their cycles go to
     * user_cycles at the next transition (flush_user) or totals read */
    bool lazy;

    /* totals */
    uint64_t insns, cycles, user_cycles, boot_cycles, boot_insns;

    /* what the image looks like */
    uint64_t disp[NDISP];
    uint64_t *targets; /* sorted table targets */
    size_t ntargets;

    /* state */
    int state;
    int phase;
    size_t cur;              /* open row */
    uint64_t disp_rsp, stub_rsp, body_rsp;
    uint8_t pre_cpl;
    uint64_t pre_rsp;
    uint64_t pend_rip;       /* entry instruction seen by `before` */
    int pend_entry;
    uint32_t pend_nr;
    int trap_entry;          /* from the exception hook: entry kind / nr */
    uint32_t trap_nr;
    bool trap_pending;

    /* body symbol cache: last addresses looked up */
    uint64_t body_hit[8], body_miss[8];
    unsigned body_hi, body_mi;

    es_phase_row *rows;
    size_t nrows, caprows;

    /* context switches: es_switch_to's text, es_ret_from_fork, and the
     * records of tasks switched away from, keyed by the RSP they resume at */
    uint64_t sw_lo, sw_hi, rff_c;
    /* es_phases_count_speculation: on, and the model's counts last seen */
    bool spec;
    uint64_t spec_last[3];
    struct es_ph_parked *parked;
    size_t nparked, capparked;

    /* the call hook (es_phases_set_call_hook): the open call, if nseg */
    es_phase_call_fn call_fn;
    void *call_ctx;
    es_phase_call call;
};

struct es_ph_parked {
    uint64_t key; /* the kernel RSP the task resumes at */
    int entry;
    uint32_t nr;
    int phase;
    uint64_t disp_rsp, stub_rsp, body_rsp;
};

/* ---- the image ---- */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Reads every slot of sys_call_table and ia32_sys_call_table. */
static void load_targets(es_phases *p)
{
    static const char *const tables[] = {"sys_call_table", "ia32_sys_call_table"};
    size_t cap = 0;
    for (int i = 0; i < 2; i++) {
        uint64_t a, sz;
        if (es_kernel_sym_size(p->m, tables[i], &a, &sz))
            cap += sz / 8;
    }
    if (!cap || !(p->targets = malloc(cap * sizeof *p->targets)))
        return;
    for (int i = 0; i < 2; i++) {
        uint64_t a, sz;
        if (!es_kernel_sym_size(p->m, tables[i], &a, &sz))
            continue;
        for (uint64_t k = 0; k < sz / 8 && p->ntargets < cap; k++) {
            uint64_t v;
            if (es_kernel_read(p->m, a + 8 * k, &v, 8) == 0 && v)
                p->targets[p->ntargets++] = v;
        }
    }
    qsort(p->targets, p->ntargets, sizeof *p->targets, cmp_u64);
    size_t u = 0;
    for (size_t i = 0; i < p->ntargets; i++)
        if (!u || p->targets[u - 1] != p->targets[i])
            p->targets[u++] = p->targets[i];
    p->ntargets = u;
}

static bool is_target(const es_phases *p, uint64_t rip)
{
    size_t lo = 0, hi = p->ntargets;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (p->targets[mid] < rip)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < p->ntargets && p->targets[lo] == rip;
}

static bool starts(const char *s, const char *pre)
{
    return !strncmp(s, pre, strlen(pre));
}

/* Does a syscall body start at rip?  Bodies are real functions in every
 * convention (kernel_model/README.md, "Symbols per convention"). */
static bool is_body(es_phases *p, uint64_t rip)
{
    for (unsigned i = 0; i < 8; i++) {
        if (p->body_hit[i] == rip)
            return true;
        if (p->body_miss[i] == rip)
            return false;
    }
    uint64_t off;
    const char *s = es_kernel_addr2sym(p->m, rip, &off);
    bool yes = s && off == 0 &&
               (starts(s, "__do_sys_") || starts(s, "__do_compat_sys_") || starts(s, "SYSC_") ||
                starts(s, "C_SYSC_"));
    if (yes)
        p->body_hit[p->body_hi++ & 7] = rip;
    else
        p->body_miss[p->body_mi++ & 7] = rip;
    return yes;
}

/* ---- rows ---- */

static void row_name(es_phases *p, es_phase_row *r)
{
    if (r->entry == ES_PH_ENTRY_FORK) {
        snprintf(r->name, sizeof r->name, "ret_from_fork");
        return;
    }
    if (r->entry == ES_PH_ENTRY_TRAP) {
        if (r->nr < 32)
            snprintf(r->name, sizeof r->name, "%s", es_vector_name((int)r->nr));
        else
            snprintf(r->name, sizeof r->name, "int 0x%02x", r->nr);
        return;
    }
    /* the tables' name; a row they lack (a student's kernel, --kernel DIR)
     * is named by the loaded kernel's own table */
    if (!es_syscall_name(r->entry, (int)r->nr, r->name, sizeof r->name) &&
        !(r->entry != ES_ENTRY_VSYSCALL &&
          es_kernel_syscall_name(p->m, es_entry_is32(r->entry), (int)r->nr, r->name,
                                 sizeof r->name)))
        snprintf(r->name, sizeof r->name, "#%u", r->nr);
}

/* Finds or inserts (entry, nr), keeping the rows sorted; returns its index
 * or (size_t)-1 when out of memory. */
static size_t row_find(es_phases *p, int entry, uint32_t nr)
{
    size_t i = 0;
    while (i < p->nrows && (p->rows[i].entry < entry ||
                            (p->rows[i].entry == entry && p->rows[i].nr < nr)))
        i++;
    if (i < p->nrows && p->rows[i].entry == entry && p->rows[i].nr == nr)
        return i;
    if (p->nrows == p->caprows) {
        size_t nc = p->caprows ? 2 * p->caprows : 16;
        es_phase_row *nr_ = realloc(p->rows, nc * sizeof *nr_);
        if (!nr_)
            return (size_t)-1;
        p->rows = nr_;
        p->caprows = nc;
    }
    memmove(&p->rows[i + 1], &p->rows[i], (p->nrows - i) * sizeof *p->rows);
    p->nrows++;
    es_phase_row *r = &p->rows[i];
    memset(r, 0, sizeof *r);
    r->entry = entry;
    r->nr = nr;
    row_name(p, r);
    return i;
}

/* ---- the call hook ---- */

static void call_close(es_phases *p, bool returned)
{
    if (!p->call_fn || !p->call.nseg)
        return;
    p->call.returned = returned;
    p->call_fn(p->call_ctx, &p->call);
    p->call.nseg = 0;
}

static void call_open(es_phases *p, int entry, uint32_t nr)
{
    call_close(p, false);
    memset(&p->call, 0, sizeof p->call);
    p->call.entry = entry;
    p->call.nr = nr;
    if (p->cur != (size_t)-1)
        memcpy(p->call.name, p->rows[p->cur].name, sizeof p->call.name);
}

/* c cycles of `phase`, ending now, go to the open call. */
static void call_charge(es_phases *p, int phase, uint64_t c)
{
    es_phase_call *k = &p->call;
    uint64_t end = p->t ? p->last : p->cycles;
    if (!k->nseg) {
        k->start = end - c;
        k->insn_start = p->insns - 1;
    }
    if (!k->nseg || (k->seg[k->nseg - 1].phase != phase && k->nseg < ES_PH_MAXSEG))
        k->seg[k->nseg++] = (es_phase_seg){phase, end - c, 0};
    k->seg[k->nseg - 1].cycles += c;
    k->end = end;
    k->insn_end = p->insns;
}

void es_phases_set_call_hook(es_phases *p, es_phase_call_fn fn, void *ctx)
{
    p->call_fn = fn;
    p->call_ctx = ctx;
}

void es_phases_flush_call(es_phases *p) { call_close(p, false); }

void es_phases_count_speculation(es_phases *p, bool on)
{
    p->spec = on && p->t;
    if (p->spec)
        es_timing_spec_counts(p->t, p->spec_last);
}

/* The model's wrong-path work since the last look goes to the open row's
 * current phase. */
static void spec_charge(es_phases *p)
{
    uint64_t now[3];
    es_timing_spec_counts(p->t, now);
    if (p->cur != (size_t)-1)
        for (int k = 0; k < 3; k++)
            p->rows[p->cur].spec[k][p->phase] += now[k] - p->spec_last[k];
    memcpy(p->spec_last, now, sizeof now);
}

static void open_record(es_phases *p, int entry, uint32_t nr)
{
    if (p->spec) /* user-mode windows belong to no row */
        es_timing_spec_counts(p->t, p->spec_last);
    p->cur = row_find(p, entry, nr);
    if (p->call_fn)
        call_open(p, entry, nr);
    if (p->cur != (size_t)-1)
        p->rows[p->cur].count++;
    p->state = ST_KERNEL;
    p->phase = ES_PH_HW_ENTRY;
}

static void charge(es_phases *p, int phase, uint64_t c)
{
    if (p->cur == (size_t)-1)
        return;
    p->rows[p->cur].phase[phase] += c;
    p->rows[p->cur].cycles += c;
    if (p->call_fn)
        call_charge(p, phase, c);
}

/* ---- context switches ---- */

/* Kernel stacks are ES_KSTACK_STRIDE apart (sim/vm.h): an RSP that moves
 * to another stride inside es_switch_to is the switch to another task. */
static bool other_stack(uint64_t a, uint64_t b)
{
    return (a / ES_KSTACK_STRIDE) != (b / ES_KSTACK_STRIDE);
}

static void park(es_phases *p, uint64_t key)
{
    if (p->cur == (size_t)-1 || p->state != ST_KERNEL)
        return;
    if (p->nparked == p->capparked) {
        size_t nc = p->capparked ? 2 * p->capparked : 8;
        struct es_ph_parked *n = realloc(p->parked, nc * sizeof *n);
        if (!n)
            return;
        p->parked = n;
        p->capparked = nc;
    }
    const es_phase_row *r = &p->rows[p->cur];
    p->parked[p->nparked++] = (struct es_ph_parked){key, r->entry, r->nr, p->phase,
                                                    p->disp_rsp, p->stub_rsp, p->body_rsp};
    call_close(p, false); /* the slice of a call that blocks ends here */
}

/* The task that runs from here on: one switched away from earlier (its
 * record goes on, a new slice of its call opens), or a new one, whose way
 * to user mode is ret_from_fork.  A parked record on the new task's stack
 * belonged to a task that ended there (do_exit's last switch). */
static void task_switch(es_phases *p, uint64_t from, uint64_t to)
{
    park(p, from);
    for (size_t i = 0; i < p->nparked; i++) {
        struct es_ph_parked k = p->parked[i];
        if (k.key != to && other_stack(k.key, to))
            continue;
        p->parked[i--] = p->parked[--p->nparked];
        if (k.key != to)
            continue;
        p->cur = row_find(p, k.entry, k.nr);
        if (p->call_fn)
            call_open(p, k.entry, k.nr);
        p->state = ST_KERNEL;
        p->phase = k.phase;
        p->disp_rsp = k.disp_rsp;
        p->stub_rsp = k.stub_rsp;
        p->body_rsp = k.body_rsp;
        return;
    }
    open_record(p, ES_PH_ENTRY_FORK, 0);
    p->phase = ES_PH_ENTRY_ASM;
}

/* ---- the observer ---- */

/* A user instruction that may enter the kernel (ph_before's slow part,
 * out of line so that the common path saves no registers). */
static __attribute__((noinline)) void ph_before_entry(es_phases *p, es_machine *m,
                                                      const es_insn *d, uint64_t rip)
{
    int entry = es_entry_of(m, d);
    if (entry >= 0) {
        p->pend_rip = rip;
        p->pend_entry = entry;
        /* the 32-bit tables are indexed by EAX; x32 masks the bit off */
        p->pend_nr = (uint32_t)(m->gpr[ES_RAX] & ~ES_X32_SYSCALL_BIT);
    } else if (d->op == ES_OP_INT3 || d->op == ES_OP_INT || d->op == ES_OP_INTO) {
        p->pend_rip = rip;
        p->pend_entry = ES_PH_ENTRY_TRAP;
        p->pend_nr = d->op == ES_OP_INT3   ? 3u
                     : d->op == ES_OP_INTO ? 4u
                                           : (uint32_t)(d->o[0].imm & 0xff);
    }
}

static void ph_before(void *ctx, es_machine *m, const es_insn *d, uint64_t rip)
{
    es_phases *p = ctx;
    p->pre_cpl = m->cpl;
    p->pre_rsp = m->gpr[ES_RSP];
    /* the only user instructions that enter the kernel (es_entry_of and
     * the traps in ph_before_entry): one cheap test for all the others */
    if (m->cpl == 3 && (d->op == ES_OP_SYSCALL || d->op == ES_OP_SYSENTER || d->op == ES_OP_INT ||
                        d->op == ES_OP_INT3 || d->op == ES_OP_INTO))
        ph_before_entry(p, m, d, rip);
}

/* A fault at CPL 3 (delivered through the IDT next): a trap record, or a
 * vsyscall when the fetch hit the vsyscall page (Linux emulates it from
 * the #PF handler: arch/x86/entry/vsyscall/vsyscall_64.c). */
static void flush_user(es_phases *p, uint64_t upto)
{
    if (!p->lazy)
        return;
    uint64_t d = upto - p->last;
    p->user_cycles += d;
    p->cycles += d;
    p->last = upto;
    p->lazy = false;
}

static void ph_exception(void *ctx, es_machine *m, int vector, uint32_t error)
{
    (void)error;
    es_phases *p = ctx;
    if (m->cpl != 3)
        return;
    /* the timing model's exception hook ran first (it was attached first,
     * es_phases_attach's contract) and counted the delivery as its last
     * cost: user time ends where the delivery starts, as when every user
     * instruction was charged */
    if (p->t)
        flush_user(p, es_timing_cycles(p->t) - es_timing_last_cost(p->t));
    p->trap_pending = true;
    p->trap_entry = ES_PH_ENTRY_TRAP;
    p->trap_nr = (uint32_t)vector;
    if (vector == ES_VEC_PF && m->rip >= ES_VSYSCALL_ADDR && m->rip < ES_VSYSCALL_ADDR + 4096) {
        p->trap_entry = ES_ENTRY_VSYSCALL;
        /* 64-bit rows of the three vsyscalls: gettimeofday, time, getcpu */
        static const char *const vs[3] = {"gettimeofday", "time", "getcpu"};
        unsigned i = (unsigned)((m->rip - ES_VSYSCALL_ADDR) / 0x400);
        int nr = i < 3 ? es_syscall_nr(ES_ENTRY_SYSCALL64, vs[i]) : -1;
        p->trap_nr = nr >= 0 ? (uint32_t)nr : 0xffffffffu;
    }
}

/* A kernel instruction outside a record: boot code, or the first handler
 * instruction of a fault from user mode (its cost carries the delivery, so
 * it is the hardware entry).  True when it was one of those. */
static bool kernel_outside_record(es_phases *p, es_machine *m, uint64_t c)
{
    if (p->state == ST_BOOT) {
        p->boot_cycles += c;
        p->boot_insns++;
        if (m->cpl == 3)
            p->state = ST_USER;
        return true;
    }
    if (p->state != ST_USER)
        return false;
    if (p->trap_pending)
        open_record(p, p->trap_entry, p->trap_nr);
    else
        open_record(p, ES_PH_ENTRY_TRAP, 0xffffffffu);
    p->trap_pending = false;
    charge(p, ES_PH_HW_ENTRY, c);
    p->phase = ES_PH_ENTRY_ASM;
    if (m->cpl == 3) {
        p->phase = ES_PH_HW_EXIT;
        p->state = ST_USER;
        call_close(p, true);
    }
    return true;
}

/* Inside a record: the phases that start at the instruction at rip. */
static void phase_starts(es_phases *p, uint64_t rip)
{
    switch (p->phase) {
    case ES_PH_ENTRY_ASM:
        if (rip == p->rff_c) /* ret_from_fork's C half: the exit work */
            p->phase = ES_PH_EXIT_PATH;
        for (int i = 0; i < NDISP; i++)
            if (p->disp[i] && rip == p->disp[i]) {
                p->phase = ES_PH_DISPATCH;
                p->disp_rsp = p->pre_rsp;
            }
        break;
    case ES_PH_DISPATCH:
        if (is_target(p, rip)) {
            p->phase = ES_PH_STUB;
            p->stub_rsp = p->pre_rsp;
        }
        break;
    case ES_PH_STUB:
        if (is_body(p, rip)) {
            p->phase = ES_PH_BODY;
            p->body_rsp = p->pre_rsp;
        }
        break;
    default:
        break;
    }
}

static __attribute__((noinline)) void ph_retire_slow(es_phases *p, es_machine *m, uint64_t rip);

/* n plain user instructions retired (es_observer.user_quiet, set only
 * under the cycle model): ph_retire's first branch n times over. */
static void ph_user_run(void *ctx, es_machine *m, uint64_t n)
{
    (void)m;
    es_phases *p = ctx;
    p->insns += n;
    p->state = ST_USER;
    p->pend_rip = 0;
    p->pre_cpl = 3;
    p->lazy = true;
}

static void ph_retire(void *ctx, es_machine *m, const es_insn *d, uint64_t rip)
{
    (void)d;
    es_phases *p = ctx;
    if (p->t && p->pre_cpl == 3 && !(m->cpl == 0 && p->pend_rip == rip)) {
        /* a plain user instruction: charged at the next transition */
        p->insns++;
        p->state = ST_USER;
        p->pend_rip = 0;
        p->lazy = true;
        return;
    }
    ph_retire_slow(p, m, rip);
}

/* Everything but a plain user instruction under the cycle model (out of
 * line: the common path above saves no registers). */
static __attribute__((noinline)) void ph_retire_slow(es_phases *p, es_machine *m, uint64_t rip)
{
    uint64_t c = 1;
    if (p->t) {
        uint64_t now = es_timing_cycles(p->t);
        /* user instructions up to this one's start */
        flush_user(p, now - es_timing_last_cost(p->t));
        c = now - p->last;
        p->last = now;
    }
    p->insns++;
    p->cycles += c;

    if (p->pre_cpl == 3) {
        if (m->cpl == 0 && p->pend_rip == rip) { /* SYSCALL, SYSENTER, INT n */
            open_record(p, p->pend_entry, p->pend_nr);
            charge(p, ES_PH_HW_ENTRY, c);
            p->phase = ES_PH_ENTRY_ASM;
        } else {
            p->state = ST_USER;
            p->user_cycles += c;
        }
        p->pend_rip = 0;
        return;
    }

    /* a kernel instruction */
    if (kernel_outside_record(p, m, c))
        return;
    phase_starts(p, rip);

    if (m->cpl == 3) { /* SYSRET, SYSEXIT, IRET to user mode */
        charge(p, ES_PH_HW_EXIT, c);
        p->state = ST_USER;
        call_close(p, true);
        return;
    }
    charge(p, p->phase, c);
    if (p->spec)
        spec_charge(p);

    uint64_t rsp = m->gpr[ES_RSP];
    if (rip >= p->sw_lo && rip < p->sw_hi && other_stack(p->pre_rsp, rsp)) {
        task_switch(p, p->pre_rsp, rsp);
        return;
    }
    /* phases that end with this instruction: a return above the frame */
    if ((p->phase == ES_PH_STUB || p->phase == ES_PH_BODY) && rsp > p->stub_rsp)
        p->phase = ES_PH_EXIT_PATH;
    else if (p->phase == ES_PH_BODY && rsp > p->body_rsp)
        p->phase = ES_PH_STUB;
    else if (p->phase == ES_PH_DISPATCH && rsp > p->disp_rsp)
        p->phase = ES_PH_EXIT_PATH;
}

es_phases *es_phases_attach(es_machine *m, es_timing *t)
{
    es_phases *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->m = m;
    p->t = t;
    p->last = t ? es_timing_cycles(t) : 0;
    p->cur = (size_t)-1;
    p->state = m->cpl == 3 ? ST_USER : ST_BOOT;
    if (m->kernel) {
        static const char *const disp[NDISP] = {"do_syscall_64", "do_int80_syscall_32",
                                                "do_fast_syscall_32", "es_do_exception"};
        for (int i = 0; i < NDISP; i++)
            p->disp[i] = es_kernel_sym(m, disp[i]);
        load_targets(p);
        uint64_t sz;
        if (es_kernel_sym_size(m, "es_switch_to", &p->sw_lo, &sz))
            p->sw_hi = p->sw_lo + sz;
        p->rff_c = es_kernel_sym(m, "es_ret_from_fork");
    }
    es_observer o = {0};
    o.ctx = p;
    o.before = ph_before;
    o.retire = ph_retire;
    o.exception = ph_exception;
    o.blocks = true; /* reads RIP, CPL, RSP and the entry registers, no flag */
    /* under the cycle model a user instruction that cannot enter the
     * kernel is only counted (ph_retire's first branch): through the block
     * cache it is not told one by one (ph_user_run) */
    o.user_quiet = p->t != NULL;
    o.user_run = ph_user_run;
    if (es_observe(m, &o)) {
        es_phases_free(p);
        return NULL;
    }
    return p;
}

void es_phases_free(es_phases *p)
{
    if (!p)
        return;
    free(p->targets);
    free(p->rows);
    free(p->parked);
    free(p);
}

size_t es_phases_nrows(const es_phases *p) { return p ? p->nrows : 0; }

const es_phase_row *es_phases_row(const es_phases *p, size_t i)
{
    return p && i < p->nrows ? &p->rows[i] : NULL;
}

void es_phases_totals(const es_phases *p, es_phase_totals *o)
{
    memset(o, 0, sizeof *o);
    if (!p)
        return;
    /* user instructions not charged yet (es_phases' lazy) end at the
     * model's current cycle */
    uint64_t pend = p->lazy && p->t ? es_timing_cycles(p->t) - p->last : 0;
    o->insns = p->insns;
    o->cycles = p->cycles + pend;
    o->user_cycles = p->user_cycles + pend;
    o->boot_cycles = p->boot_cycles;
    o->boot_insns = p->boot_insns;
    for (size_t i = 0; i < p->nrows; i++) {
        const es_phase_row *r = &p->rows[i];
        if (r->entry == ES_PH_ENTRY_TRAP) {
            o->trap_count += r->count;
            o->trap_cycles += r->cycles;
            continue;
        }
        o->sys_count += r->count;
        o->sys_cycles += r->cycles;
        for (int k = 0; k < ES_PH_COUNT; k++)
            o->sys_phase[k] += r->phase[k];
    }
    o->kernel_cycles = o->sys_cycles + o->trap_cycles + o->boot_cycles;
}

/* ---- reports ---- */

static double ratio(uint64_t a, uint64_t b)
{
    return b ? (double)a / (double)b : 0.0;
}

static const char *str(const char *s)
{
    return s ? s : "";
}

void es_phases_print(const es_phases *p, es_machine *m, const es_run_meta *meta, FILE *out)
{
    (void)m;
    es_phase_totals tt;
    es_phases_totals(p, &tt);
    fprintf(out, "entrysim: timing: %s (model %s, kernel %s, mitigations %s, cpu %s)\n",
            str(meta ? meta->program : NULL), p && p->t ? str(meta ? meta->uarch : NULL)
                                                      : "none, 1 cycle per instruction",
            str(meta ? meta->kernel : NULL), str(meta ? meta->mitigations : NULL),
            str(meta ? meta->cpu : NULL));
    fprintf(out, "  instructions %" PRIu64 "  cycles %" PRIu64 "  IPC %.3f\n", tt.insns,
            tt.cycles, ratio(tt.insns, tt.cycles));
    fprintf(out,
            "  user cycles %" PRIu64 "  kernel cycles %" PRIu64 " (syscalls %" PRIu64
            ", traps %" PRIu64 ", boot %" PRIu64 ")\n",
            tt.user_cycles, tt.kernel_cycles, tt.sys_cycles, tt.trap_cycles, tt.boot_cycles);
    fprintf(out, "  syscalls %" PRIu64 "  cycles/call %.1f\n", tt.sys_count,
            ratio(tt.sys_cycles, tt.sys_count));
    if (p && p->nrows) {
        fprintf(out, "  per kernel entry, cycles per call:\n");
        fprintf(out, "  %-10s %-18s %4s %7s %9s", "entry", "name", "nr", "count", "total");
        for (int k = 0; k < ES_PH_COUNT; k++)
            fprintf(out, " %9s", es_phase_name(k));
        fputc('\n', out);
        for (size_t i = 0; i < p->nrows; i++) {
            const es_phase_row *r = &p->rows[i];
            fprintf(out, "  %-10s %-18s %4d %7" PRIu64 " %9.1f", es_ph_entry_name(r->entry),
                    r->name, r->nr == 0xffffffffu ? -1 : (int)r->nr, r->count,
                    ratio(r->cycles, r->count));
            for (int k = 0; k < ES_PH_COUNT; k++)
                fprintf(out, " %9.1f", ratio(r->phase[k], r->count));
            fputc('\n', out);
        }
    }
    if (p && p->t) {
        es_timing_stats s;
        es_timing_get_stats(p->t, &s);
        fprintf(out,
                "  model: cycles %" PRIu64 " insns %" PRIu64 " uops %" PRIu64
                " branches %" PRIu64 " mispredicts %" PRIu64 "\n"
                "         L1i misses %" PRIu64 " L1d misses %" PRIu64 " L2 misses %" PRIu64
                " L3 misses %" PRIu64 " iTLB misses %" PRIu64 " dTLB misses %" PRIu64 "\n"
                "         store-to-load forwards %" PRIu64 " serialising %" PRIu64 "\n",
                s.cycles, s.insns, s.uops, s.branches, s.mispredicts, s.l1i_misses, s.l1d_misses,
                s.l2_misses, s.l3_misses, s.itlb_misses, s.dtlb_misses, s.stlf, s.serialising);
        if (meta && meta->speculate)
            fprintf(out,
                    "  speculation: %" PRIu64 " wrong-path windows, %" PRIu64
                    " transient instructions, %" PRIu64 " cache lines filled by them\n",
                    s.spec_windows, s.spec_insns, s.spec_fills);
    }
}

void es_json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *c = (const unsigned char *)str(s); *c; c++) {
        if (*c == '"' || *c == '\\')
            fprintf(f, "\\%c", *c);
        else if (*c < 0x20)
            fprintf(f, "\\u%04x", *c);
        else
            fputc(*c, f);
    }
    fputc('"', f);
}

static void json_phases(FILE *f, const uint64_t *ph)
{
    fputc('{', f);
    for (int k = 0; k < ES_PH_COUNT; k++)
        fprintf(f, "%s\"%s\":%" PRIu64, k ? "," : "", es_phase_name(k), ph[k]);
    fputc('}', f);
}

void es_phases_fprint_json(const es_phases *p, es_machine *m, const es_run_meta *meta, FILE *f)
{
    (void)m;
    es_phase_totals tt;
    es_phases_totals(p, &tt);
    fputs("{\"entrysim\":\"0.1.0\",\"program\":", f);
    es_json_str(f, meta ? meta->program : NULL);
    fputs(",\"uarch\":", f);
    es_json_str(f, p && p->t ? (meta ? meta->uarch : NULL) : "none");
    fputs(",\"kernel\":", f);
    es_json_str(f, meta ? meta->kernel : NULL);
    fputs(",\"mitigations\":", f);
    es_json_str(f, meta ? meta->mitigations : NULL);
    fputs(",\"cpu\":", f);
    es_json_str(f, meta ? meta->cpu : NULL);
    fprintf(f,
            ",\"exit_status\":%d,\"instructions\":%" PRIu64 ",\"cycles\":%" PRIu64
            ",\"ipc\":%.6f,\"user_cycles\":%" PRIu64 ",\"kernel_cycles\":%" PRIu64
            ",\"boot_cycles\":%" PRIu64,
            meta ? meta->exit_status : 0, tt.insns, tt.cycles, ratio(tt.insns, tt.cycles),
            tt.user_cycles, tt.kernel_cycles, tt.boot_cycles);
    fprintf(f, ",\"syscalls\":{\"count\":%" PRIu64 ",\"cycles\":%" PRIu64 ",\"phases\":",
            tt.sys_count, tt.sys_cycles);
    json_phases(f, tt.sys_phase);
    fprintf(f, "},\"traps\":{\"count\":%" PRIu64 ",\"cycles\":%" PRIu64 "}", tt.trap_count,
            tt.trap_cycles);
    fputs(",\"per_syscall\":[", f);
    for (size_t i = 0; p && i < p->nrows; i++) {
        const es_phase_row *r = &p->rows[i];
        fputs(i ? ",{\"name\":" : "{\"name\":", f);
        es_json_str(f, r->name);
        fprintf(f, ",\"nr\":%d,\"entry\":", r->nr == 0xffffffffu ? -1 : (int)r->nr);
        es_json_str(f, es_ph_entry_name(r->entry));
        fprintf(f, ",\"count\":%" PRIu64 ",\"cycles\":%" PRIu64 ",\"cycles_per_call\":%.3f",
                r->count, r->cycles, ratio(r->cycles, r->count));
        fputs(",\"phases\":", f);
        json_phases(f, r->phase);
        fputs(",\"phases_per_call\":{", f);
        for (int k = 0; k < ES_PH_COUNT; k++)
            fprintf(f, "%s\"%s\":%.3f", k ? "," : "", es_phase_name(k),
                    ratio(r->phase[k], r->count));
        fputc('}', f);
        if (meta && meta->speculate) {
            static const char *const sn[3] = {"windows", "transient_insns", "fills"};
            fputs(",\"speculation\":{", f);
            for (int k = 0; k < 3; k++) {
                fprintf(f, "%s\"%s\":", k ? "," : "", sn[k]);
                json_phases(f, r->spec[k]);
            }
            fputc('}', f);
        }
        fputc('}', f);
    }
    fputs("],\"stats\":", f);
    if (p && p->t) {
        es_timing_stats s;
        es_timing_get_stats(p->t, &s);
        fprintf(f,
                "{\"cycles\":%" PRIu64 ",\"insns\":%" PRIu64 ",\"uops\":%" PRIu64
                ",\"branches\":%" PRIu64 ",\"mispredicts\":%" PRIu64 ",\"l1i_misses\":%" PRIu64
                ",\"l1d_misses\":%" PRIu64 ",\"l2_misses\":%" PRIu64 ",\"l3_misses\":%" PRIu64
                ",\"itlb_misses\":%" PRIu64 ",\"dtlb_misses\":%" PRIu64 ",\"stlf\":%" PRIu64
                ",\"serialising\":%" PRIu64,
                s.cycles, s.insns, s.uops, s.branches, s.mispredicts, s.l1i_misses, s.l1d_misses,
                s.l2_misses, s.l3_misses, s.itlb_misses, s.dtlb_misses, s.stlf, s.serialising);
        if (meta && meta->speculate)
            fprintf(f,
                    ",\"speculation\":{\"windows\":%" PRIu64 ",\"transient_insns\":%" PRIu64
                    ",\"fills\":%" PRIu64 "}",
                    s.spec_windows, s.spec_insns, s.spec_fills);
        fputc('}', f);
    } else {
        fputs("null", f);
    }
    fputs("}\n", f);
}

int es_phases_write_json(const es_phases *p, es_machine *m, const es_run_meta *meta,
                         const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    es_phases_fprint_json(p, m, meta, f);
    int bad = ferror(f);
    return (fclose(f) == 0 && !bad) ? 0 : -1;
}
