/* dbg_session.c - a debugging session: starting the guest, the observer
 * that feeds the undo log and the pt_regs tracking, the single-step engine
 * every run-control command is built on, and status. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dbg_int.h"
#include "host.h"
#include "kernel.h"
#include "mem.h"
#include "mitigations.h"
#include "vm.h"

/* Instructions the kernel's boot code may take before it first enters the
 * program (it takes a few thousand). */
#define BOOT_BUDGET 20000000u

/* ---- the observer ---- */

/* es_spec_fn: the model's wrong-path instructions, kept per window */
static void on_wrong_path(void *ctx, const es_spec_insn *i)
{
    es_dbg *d = ctx;
    if (i) {
        if (d->wp_ncur < sizeof d->wp_cur / sizeof *d->wp_cur)
            d->wp_cur[d->wp_ncur++] = *i;
        return;
    }
    memcpy(d->wp_last, d->wp_cur, d->wp_ncur * sizeof *d->wp_cur);
    d->wp_nlast = d->wp_ncur;
    d->wp_ncur = 0;
    d->wp_windows++;
}

static void track_open(es_dbg *d)
{
    dbg_track *t = &d->track;
    t->base = d->frame_base;
    memset(t->order, 0, sizeof t->order);
    t->seq = 0;
    t->cleared = 0;
    t->building = 1;
    t->open = 1;
}

static void obs_before(void *ctx, es_machine *m, const es_insn *ins, uint64_t rip)
{
    es_dbg *d = ctx;
    d->cur_op = ins->op;
    d->cur_nops = ins->nops;
    d->cur_o0 = ins->o[0];
    d->cur_prev = ins->o[0].kind == ES_OPK_GPR && ins->o[0].reg < 16 ? m->gpr[ins->o[0].reg] : 0;
    d->have_cur = true;
    d->exc_pending = false; /* the taint observer, told next, takes it now */
    /* the fetch's walk set accessed bits: the decoder's window is 15
     * bytes, and near a page end it walks the next page even for a
     * shorter instruction */
    if (!d->undo.by_frame)
        dbg_undo_pte(d, rip, 15);
    if (ins->op == ES_OP_VMCALL) {
        /* the host may write guest memory: the frames it touches are
         * listed (dbg_step1 detaches the list after the step) */
        d->undo.wlog.any_phys = true;
        es_wlog_attach(m, &d->undo.wlog);
        dbg_undo_host_begin(d);
    }
    if (m->cpl == 3) {
        int e = es_entry_of(m, ins);
        if (e >= 0) {
            /* as `entrysim exposure` live mode: the user registers are
             * labelled afresh at every entry instruction, before the taint
             * observer (attached after this one) sees it */
            if (d->taint)
                es_taint_label_user_regs(d->taint, m, d->abi);
            d->track.entry = e;
            d->track.nr = (int)(uint32_t)(m->gpr[ES_RAX] & ~(uint64_t)ES_X32_SYSCALL_BIT);
        }
    } else if (ins->op == ES_OP_CALL && d->track.open) {
        d->track.building = 0; /* the entry code hands over to C */
    }
}

static void obs_mem(void *ctx, es_machine *m, uint64_t va, unsigned n, int write)
{
    es_dbg *d = ctx;
    (void)m;
    if (!write) {
        if (!d->undo.by_frame)
            dbg_undo_pte(d, va, n); /* the walk's accessed bit */
        return;
    }
    dbg_undo_mem_write(d, va, n);
    uint64_t b = d->frame_base;
    if (!b || va + n <= b || va >= b + 8 * ES_DBG_PTREGS_SLOTS)
        return;
    /* the kernel stack is supervisor memory: a write to the frame while no
     * entry is open is the entry (the hardware frame of INT/exceptions is
     * pushed before CPL changes) */
    if (!d->track.open)
        track_open(d);
    /* one write covering several slots is the CPU's interrupt frame, which
     * the SDM describes as pushes starting with SS (Vol. 3A, 6.14.2):
     * number the slots it overlaps from the top down, as the pushes go */
    uint64_t lo = va <= b ? 0 : (va - b) / 8, hi = (va + n - 1 - b) / 8;
    if (hi > ES_DBG_PTREGS_SLOTS - 1)
        hi = ES_DBG_PTREGS_SLOTS - 1;
    for (uint64_t s = hi + 1; s-- > lo;)
        if (!d->track.order[s])
            d->track.order[s] = ++d->track.seq;
}

/* As the taint observer's exception hook: the frame of an exception
 * delivered through the IDT is labelled at the next instruction. */
static void obs_exception(void *ctx, es_machine *m, int vector, uint32_t error)
{
    (void)m;
    (void)vector;
    (void)error;
    ((es_dbg *)ctx)->exc_pending = true;
}

/* After each step: CPL transitions open/close an entry; a register the
 * entry code zeroes after saving it marks its slot cleared. */
static void track_step(es_dbg *d, int prev_cpl, uint64_t prev_rsp)
{
    es_machine *m = d->m;
    if (prev_cpl != m->cpl)
        d->frame_base = dbg_ptregs_base(d);
    if (prev_cpl == 3 && m->cpl == 0 && !d->track.open)
        track_open(d);
    if (prev_cpl == 0 && m->cpl == 3)
        d->track.open = 0;
    /* a context switch (es_switch_to loads the next task's RSP, another
     * kernel stack): the pt_regs shown are the new task's, at its
     * TSS.RSP0, and the marks of the old task's entry no longer apply */
    if (prev_cpl == 0 && m->cpl == 0 &&
        prev_rsp / ES_KSTACK_STRIDE != m->gpr[ES_RSP] / ES_KSTACK_STRIDE &&
        d->frame_base != dbg_ptregs_base(d)) {
        d->frame_base = dbg_ptregs_base(d);
        d->track.open = 0;
        d->track.base = 0;
    }
    if (!d->track.open || !d->track.building || m->cpl != 0 || !d->have_cur)
        return;
    const es_operand *o = &d->cur_o0;
    if (d->cur_nops && o->kind == ES_OPK_GPR && o->write && o->reg < 16 &&
        m->gpr[o->reg] == 0 && (d->cur_prev != 0 || d->cur_op == ES_OP_XOR)) {
        int s = dbg_gpr_slot(o->reg);
        if (s >= 0 && d->track.order[s])
            d->track.cleared |= 1u << s;
    }
}

/* ---- stepping ---- */

/* After a step or a run: the machine's stop as an es_dbg_stop, else -1. */
static int stopped(es_dbg *d)
{
    es_machine *m = d->m;
    if (m->stop == ES_STOP_EXIT) {
        d->exited = true;
        return ES_DBG_EXITED;
    }
    if (m->stop != ES_STOP_NONE) {
        /* killed by a fault, or the simulator gave up: as final as an exit
         * (only reverse and restart go on) */
        d->exited = true;
        return ES_DBG_FAULTED;
    }
    return -1;
}

/* One es_step with the session's work around it (the pt_regs tracking,
 * the recent RIPs, the cycle cost): what dbg_step1 and every step of a
 * kernel run do inside their records. */
static void step_observed(es_dbg *d)
{
    es_machine *m = d->m;
    uint64_t rip = m->rip, rsp = m->gpr[ES_RSP];
    int pcpl = m->cpl;
    d->have_cur = false;
    es_step(m);
    if (!d->undo.by_frame) { /* a VMCALL's list of frames, for this step only */
        es_wlog_attach(m, NULL);
        d->undo.wlog.any_phys = false;
    }
    track_step(d, pcpl, rsp);
    d->recent[d->nrecent++ % 64] = rip;
    if (d->timing) {
        dbg_cyc *c = &d->cyc[(rip ^ (rip >> 12)) % DBG_CYC_SLOTS];
        c->addr = rip;
        c->cycles = es_timing_last_cost(d->timing);
    }
}

/* A PIE's load bias, known at its first user instruction. */
static void learn_bias(es_dbg *d)
{
    es_machine *m = d->m;
    if (d->elf_dyn && !d->bias_known && m->cpl == 3) {
        d->bias = m->rip - d->elf_entry;
        d->bias_known = true;
        dbg_breaks_rebind(d);
    }
}

/* One instruction, recorded in the undo log.  Returns an es_dbg_stop when
 * the machine stopped (exit, fault), else -1. */
int dbg_step1(es_dbg *d)
{
    if (d->exited)
        return ES_DBG_EXITED;
    dbg_undo_begin(d);
    step_observed(d);
    dbg_undo_end(d);
    learn_bias(d);
    return stopped(d);
}

bool dbg_can_run(const es_dbg *d)
{
    const es_machine *m = d->m;
    /* user code only (the kernel's is what the session shows step by
     * step: taint, pt_regs); not under the cycle model, which times every
     * instruction, nor with RFLAGS.TF, whose trap es_step raises */
    return !d->cfg.step_only && !d->exited && !d->timing && m->cpl == 3 &&
           !(m->rflags & ES_TF) && (!d->elf_dyn || d->bias_known);
}

uint64_t dbg_run_user(es_dbg *d, uint64_t budget, const es_fence *f, int *stop)
{
    uint64_t ran = 0;
    *stop = -1;
    if (!dbg_can_run(d))
        return 0;
    /* a quarter of the history at most, so that a bounded history still
     * holds the newest instructions when the oldest run is dropped */
    uint64_t most = d->undo.cap / 4 ? d->undo.cap / 4 : 1;
    dbg_undo_fast(d, budget < most ? budget : most, f, &ran);
    *stop = stopped(d); /* a fault is left for dbg_step1 to deliver */
    return ran;
}

/* ---- runs of kernel code ---- */

#define KRUN_MIN_HISTORY 256

/* The instruction at RIP, decoded without side effects: the sim's own
 * decode-cache entry when it is on the page the sim fetches from (the
 * check is fetch()'s), else from memory; false when it does not decode. */
static bool decode_next(es_machine *m, uint64_t lin, es_insn *out)
{
    if ((lin & ~(uint64_t)4095) == m->fetch_va) {
        uint64_t off = lin & 4095;
        const es_dentry *e = &m->dcache[(m->fetch_hash + off) & ((1u << ES_DCACHE_BITS) - 1)];
        if (e->key == m->fetch_key + (off << 1) && e->gen == m->fetch_frame->code_gen) {
            *out = e->insn;
            return true;
        }
    }
    uint8_t b[16];
    size_t got = dbg_read(m, lin, b, 15);
    return got && es_decode(b, got, m->mode, m->rip, out) == ES_DECODE_OK;
}

/* What a kernel run never holds, whatever fence it is given: the host's
 * services (VMCALL: they may write guest memory, files, the terminal) and
 * clock (RDTSC/RDTSCP/RDPMC), which a re-run for reverse must not repeat
 * (dbg_run.c's fences refuse them too). */
static bool host_insn(const es_insn *i)
{
    return i->op == ES_OP_VMCALL || i->op == ES_OP_RDTSC || i->op == ES_OP_RDTSCP ||
           i->op == ES_OP_RDPMC;
}

/* kernel_may_step's cache miss: decodes the instruction at RIP (page pa,
 * frame fr) into e, or asks the fence of an instruction not kept. */
static __attribute__((noinline)) bool ient_fill(es_dbg *d, size_t k, uint64_t lin, uint64_t pa,
                                                const es_frame *fr, const es_fence *f)
{
    es_machine *m = d->m;
    dbg_ient *e = &d->icache->e[k];
    es_insn *i = &d->icache->insn[k];
    e->valid = 0;
    if (!decode_next(m, lin, i))
        return false;
    if (!fr->has_code || (lin & 4095) + i->len > 4096) {
        e->refused = host_insn(i) || f->fn(f->ctx, i, m->rip); /* not kept: asked now */
        return true;
    }
    *e = (dbg_ient){.rip = m->rip, .pa = pa, .gen = fr->code_gen, .mode = (uint8_t)m->mode,
                    .valid = 1};
    return true;
}

/* Whether the instruction at RIP may be a step of a kernel run: it
 * decodes (a fetch fault is dbg_step1's) and the fence lets it.  The
 * decode and the fence's answer (for the fence key it was asked under: a
 * command's goal and breakpoints) are kept in the session's cache, as the
 * sim keeps its decodes: by RIP, physical address and mode, valid while
 * the frame's code_gen is what it was -- an entry is made only while the
 * frame holds code the sim decoded (has_code), so that any write to it
 * bumps code_gen.  The physical address is the sim's fetch page's when
 * RIP is on it, else a walk's (most kernel code is on another page than
 * the last fetch: a call, a return). */
static inline bool kernel_may_step(es_dbg *d, const es_fence *f)
{
    es_machine *m = d->m;
    uint64_t rip = m->rip, lin = (rip + m->seg[ES_SEG_CS].base) & m->ipmask, pa, pte;
    if ((lin & ~(uint64_t)4095) == m->fetch_va)
        pa = m->fetch_pa | (lin & 4095);
    else if (!dbg_walk(m, lin, &pa, &pte) || !(pa >> 12) || pa >> 12 >= m->nframes)
        return false; /* not mapped: dbg_step1 takes the fault */
    const es_frame *fr = &m->frames[pa >> 12];
    size_t k = (rip * 0x9e3779b97f4a7c15ull) >> (64 - DBG_ICACHE_BITS);
    dbg_ient *e = &d->icache->e[k];
    if (!e->valid || e->rip != rip || e->pa != pa || e->mode != m->mode ||
        e->gen != fr->code_gen) {
        if (!ient_fill(d, k, lin, pa, fr, f))
            return false;
        if (!e->valid)
            return !e->refused;
    }
    if (e->fkey != f->key) {
        e->refused = host_insn(&d->icache->insn[k]) || f->fn(f->ctx, &d->icache->insn[k], rip);
        e->fkey = f->key;
    }
    return !e->refused;
}

uint64_t dbg_run_kernel(es_dbg *d, uint64_t budget, const es_fence *f, int *stop)
{
    es_machine *m = d->m;
    *stop = -1;
    /* not under the cycle model: it is not undone, and reverse re-runs
     * the record (the instructions would be timed twice); tlb_bypass:
     * every access goes through the walk, which lists the frame */
    if (d->cfg.step_only || d->exited || d->timing || m->cpl != 0 || !m->tlb_bypass ||
        d->exc_pending)
        return 0;
    /* a quarter of the history at most, as dbg_run_user; none in a history
     * of fewer than KRUN_MIN_HISTORY steps, which then keeps exactly its
     * bound of the newest (a run is dropped whole: a log of runs keeps
     * between the bound less a run and the bound), and where runs that
     * short would save little */
    uint64_t most = d->undo.cap / 4;
    if (d->undo.cap < KRUN_MIN_HISTORY)
        return 0;
    if (budget > most)
        budget = most;
    if (!d->icache && !(d->icache = calloc(1, sizeof *d->icache)))
        return 0;
    if (!budget || !kernel_may_step(d, f))
        return 0;
    dbg_undo_run_begin(d);
    uint64_t n = 0;
    /* the step that leaves CPL 0 ends the run: the goals that watch CPL
     * (kentry, kexit, finish) see it as the last step of a run; so does a
     * step that delivered an exception (the next one is dbg_step1's, see
     * exc_pending: a re-run could not start with the taint observer's
     * pending frame, and one that ends just after it leaves it pending as
     * a reverse over single steps does) */
    do {
        step_observed(d);
        n++;
    } while (n < budget && m->cpl == 0 && m->stop == ES_STOP_NONE && !d->exc_pending &&
             kernel_may_step(d, f));
    dbg_undo_run_end(d, n);
    learn_bias(d);
    *stop = stopped(d);
    return n;
}

/* ---- starting and stopping ---- */

static char *dupstr(const char *s)
{
    return s ? strdup(s) : NULL;
}

static char **dupv(char *const *v, int *count)
{
    int n = 0;
    while (v && v[n])
        n++;
    char **c = calloc((size_t)n + 1, sizeof *c);
    if (!c)
        return NULL;
    for (int i = 0; i < n; i++)
        c[i] = strdup(v[i]);
    if (count)
        *count = n;
    return c;
}

static void freev(char **v)
{
    for (int i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

static void copy_cfg(es_dbg *d, const es_dbg_cfg *cfg)
{
    free(d->program);
    free(d->root);
    free(d->uarch);
    freev(d->argv);
    freev(d->envp);
    d->cfg = *cfg;
    d->program = dupstr(cfg->launch.program);
    d->root = dupstr(cfg->launch.root);
    d->uarch = dupstr(cfg->uarch);
    if (cfg->launch.argv && cfg->launch.argc > 0) {
        d->argv = calloc((size_t)cfg->launch.argc + 1, sizeof *d->argv);
        for (int i = 0; d->argv && i < cfg->launch.argc; i++)
            d->argv[i] = strdup(cfg->launch.argv[i] ? cfg->launch.argv[i] : "");
        d->argc = cfg->launch.argc;
    } else {
        char *one[] = {d->program, NULL};
        d->argv = dupv(one, &d->argc);
    }
    d->envp = cfg->launch.envp ? dupv(cfg->launch.envp, NULL) : NULL;
    d->cfg.launch.program = d->program;
    d->cfg.launch.root = d->root;
    d->cfg.launch.argv = d->argv;
    d->cfg.launch.argc = d->argc;
    d->cfg.launch.envp = d->envp;
    d->cfg.uarch = d->uarch;
}

/* The host path of the program as es_launch resolves it (PATH lookup for
 * a bare name not in the current directory), for reading its symbols. */
/* Everything a run owns (freed on restart). */
static void stop_run(es_dbg *d)
{
    dbg_undo_free(d);
    if (d->m)
        es_launch_free(d->m);
    d->m = NULL;
    es_taint_free(d->taint);
    d->taint = NULL;
    es_timing_free(d->timing);
    d->timing = NULL;
    if (d->out_fd >= 0)
        close(d->out_fd);
    d->out_fd = -1;
    dbg_syms_free(d);
    free(d->probe_text);
    d->probe_text = NULL;
    free(d->icache);
    d->icache = NULL;
}

static void reset_run_state(es_dbg *d)
{
    memset(&d->track, 0, sizeof d->track);
    d->track.entry = -1;
    memset(d->cyc, 0, sizeof d->cyc);
    d->nrecent = 0;
    d->exc_pending = false;
    d->nprev = 0;
    d->have_prev_v = false;
    d->last_stop = ES_DBG_STEPPED;
    d->bp_hit = 0;
    d->exited = false;
    d->nprobe_cache = 0;
    d->bias = 0;
    d->bias_known = false;
    d->elf_dyn = false;
    d->out_read = 0;
    d->out_len = 0;
    d->timing_err[0] = 0;
    d->boot_icount = 0;
}

static int start_run(es_dbg *d, char *err, size_t errlen)
{
    reset_run_state(d);
    d->out_fd = memfd_create("entrysim-guest-output", MFD_CLOEXEC);
    if (d->out_fd < 0) {
        snprintf(err, errlen, "memfd_create: %s", strerror(errno));
        return -1;
    }
    es_launch_cfg lc = d->cfg.launch;
    lc.stdout_fd = lc.stderr_fd = d->out_fd;
    lc.max_insns = 0;
    lc.timeout = 0;
    if (es_launch(&lc, &d->m, err, errlen) != ES_LAUNCH_OK)
        return -1;
    if (!d->m->has_kernel) {
        snprintf(err, errlen, "the debugger needs the guest kernel (not --direct)");
        return -1;
    }
    char path[4096];
    char found[4096];
    snprintf(path, sizeof path, "%s", es_launch_resolve(d->program, found, sizeof found));
    dbg_syms_load(d, path);

    /* boot: the kernel's start-up code up to the program's first
     * instruction, unobserved (the history starts at the program) */
    es_machine *m = d->m;
    for (uint64_t i = 0; m->cpl != 3; i++) {
        es_step(m);
        if (m->stop != ES_STOP_NONE || i > BOOT_BUDGET) {
            snprintf(err, errlen, "guest kernel did not start the program: %s",
                     m->message[0] ? m->message : "boot budget exhausted");
            return -1;
        }
    }
    d->boot_icount = m->icount; /* counted apart: the session starts here */
    if (d->elf_dyn) {
        d->bias = m->rip - d->elf_entry;
        d->bias_known = true;
    }
    d->frame_base = dbg_ptregs_base(d);

    es_observer o = {0};
    o.ctx = d;
    o.before = obs_before;
    o.mem = obs_mem;
    o.exception = obs_exception;
    if (es_observe(m, &o)) {
        snprintf(err, errlen, "no free observer slot");
        return -1;
    }
    if (!d->cfg.no_taint) {
        d->taint = es_taint_new();
        if (!d->taint || es_taint_attach(m, d->taint)) {
            snprintf(err, errlen, "cannot attach taint tracking");
            return -1;
        }
        /* user-mode code between syscalls is not followed: the labels are
         * renewed at every entry instruction (as exposure's live mode) */
        es_taint_kernel_only(d->taint, true);
    }
    if (d->cfg.uarch) {
        /* the cycle model may not be built yet: then no cycles are shown */
        d->timing = es_timing_new(d->cfg.uarch, d->timing_err, sizeof d->timing_err);
        if (d->timing && es_timing_attach(d->timing, m)) {
            es_timing_free(d->timing);
            d->timing = NULL;
            snprintf(d->timing_err, sizeof d->timing_err, "no free observer slot");
        }
        if (d->timing && d->cfg.speculate) {
            es_timing_set_speculate(d->timing, true);
            es_timing_set_spec_hook(d->timing, on_wrong_path, d);
        }
    }
    if (dbg_undo_init(d)) {
        snprintf(err, errlen, "out of host memory for the undo log");
        return -1;
    }
    dbg_breaks_rebind(d);
    dbg_remember_regs(d);
    dbg_output_poll(d);
    return 0;
}

es_dbg *es_dbg_new(const es_dbg_cfg *cfg, char *err, size_t errlen)
{
    if (!cfg || !cfg->launch.program) {
        snprintf(err, errlen, "no program to debug");
        return NULL;
    }
    es_dbg *d = calloc(1, sizeof *d);
    if (!d) {
        snprintf(err, errlen, "out of host memory");
        return NULL;
    }
    d->out_fd = -1;
    d->syntax = ES_SYNTAX_INTEL;
    d->vregs_view = ES_DBG_VF_OFF;
    copy_cfg(d, cfg);
    if (start_run(d, err, errlen)) {
        es_dbg_free(d);
        return NULL;
    }
    return d;
}

void es_dbg_free(es_dbg *d)
{
    if (!d)
        return;
    stop_run(d);
    free(d->out);
    free(d->program);
    free(d->root);
    free(d->uarch);
    freev(d->argv);
    freev(d->envp);
    free(d);
}

int es_dbg_restart(es_dbg *d, const es_dbg_cfg *cfg, char *err, size_t errlen)
{
    /* the new run is built in a scratch session so that a failure leaves
     * the current one untouched */
    es_dbg *n = calloc(1, sizeof *n);
    if (!n) {
        snprintf(err, errlen, "out of host memory");
        return -1;
    }
    n->out_fd = -1;
    n->syntax = d->syntax;
    n->vregs_view = d->vregs_view; /* view settings outlive the run, as the syntax */
    memcpy(n->bps, d->bps, sizeof d->bps);
    n->nbps = d->nbps;
    n->next_bp_id = d->next_bp_id;
    copy_cfg(n, cfg ? cfg : &d->cfg);
    if (start_run(n, err, errlen)) {
        es_dbg_free(n);
        return -1;
    }
    /* swap the runs; the caller's pointer stays valid */
    es_dbg tmp = *d;
    *d = *n;
    *n = tmp;
    d->shot = n->shot;
    d->shot_ctx = n->shot_ctx;
    d->transcript = n->transcript; /* a script's transcript goes on across a restart */
    snprintf(d->memview_reg, sizeof d->memview_reg, "%s", n->memview_reg);
    d->memview_addr = n->memview_addr;
    /* the observer's context is the session: point it at d, not n */
    for (int i = 0; i < d->m->nobs; i++)
        if (d->m->obs[i].ctx == n)
            d->m->obs[i].ctx = d;
    es_dbg_free(n);
    return 0;
}

es_machine *es_dbg_machine(es_dbg *d) { return d->m; }
const es_taint *es_dbg_taint(const es_dbg *d) { return d->taint; }

void es_dbg_set_screenshot(es_dbg *d, es_dbg_screenshot_fn fn, void *ctx)
{
    d->shot = fn;
    d->shot_ctx = ctx;
}

/* ---- guest output ---- */

void dbg_output_poll(es_dbg *d)
{
    if (d->out_fd < 0)
        return;
    size_t cap = d->cfg.output_cap ? d->cfg.output_cap : (size_t)256 << 10;
    if (!d->out && !(d->out = malloc(cap + 1)))
        return;
    char buf[8192];
    for (;;) {
        ssize_t got = pread(d->out_fd, buf, sizeof buf, (off_t)d->out_read);
        if (got <= 0)
            break;
        d->out_read += (uint64_t)got;
        size_t g = (size_t)got;
        if (g >= cap) {
            memcpy(d->out, buf + g - cap, cap);
            d->out_len = cap;
            continue;
        }
        if (d->out_len + g > cap) {
            size_t drop = d->out_len + g - cap;
            memmove(d->out, d->out + drop, d->out_len - drop);
            d->out_len -= drop;
        }
        memcpy(d->out + d->out_len, buf, g);
        d->out_len += g;
    }
    d->out[d->out_len] = 0;
    /* the consumed part of the memfd is given back: memory stays bounded
     * however much the guest writes */
    if (d->out_read >= 65536)
        fallocate(d->out_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0,
                  (off_t)(d->out_read & ~(uint64_t)4095));
}

const char *es_dbg_output(es_dbg *d, size_t *len)
{
    dbg_output_poll(d);
    if (len)
        *len = d->out_len;
    return d->out ? d->out : "";
}

/* ---- status ---- */

void es_dbg_get_status(es_dbg *d, es_dbg_status *s)
{
    es_machine *m = d->m;
    memset(s, 0, sizeof *s);
    s->cpl = m->cpl;
    s->mode = m->mode;
    s->icount = m->icount - d->boot_icount;
    s->boot_icount = d->boot_icount;
    s->timing = d->timing != NULL;
    if (d->timing) {
        s->cycles = es_timing_cycles(d->timing);
        s->last_cost = es_timing_last_cost(d->timing);
    }
    s->patches = es_kernel_patches(m);
    es_patches_name(s->patches, s->convention, sizeof s->convention);
    s->mitigations = es_kernel_mitigations(m);
    es_mitigations_name(s->mitigations, s->mitigation_names, sizeof s->mitigation_names);
    s->vendor = m->vendor;
    s->last_stop = d->last_stop;
    s->bp_hit = d->bp_hit;
    s->exited = d->exited;
    /* a guest killed by a signal: 128 + N, the status `entrysim run` exits with */
    s->exit_status = m->stop == ES_STOP_FAULT ? 128 + (m->signal ? m->signal : 11) : m->exit_status;
    snprintf(s->message, sizeof s->message, "%s", m->message);
    s->history = d->undo.count;
    snprintf(s->program, sizeof s->program, "%s", d->program ? d->program : "");
}
