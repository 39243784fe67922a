/* task.c - the task table: the boot task, fork/vfork/clone, the end of a
 * task and its reaping by wait4/waitid, and the calls that name other
 * processes (kill, getppid, process groups).  See task.h.
 *
 * fork copies the parent's address space eagerly (es_vm_fork: every page
 * present gets its own frame now, the zero page stays shared), duplicates
 * its host fds (so a pipe's end closes only when every task has closed
 * it, as on Linux) and builds the child's kernel stack so that the guest
 * kernel's es_switch_to returns into ret_from_fork with the parent's
 * pt_regs above it, rax = 0: the child leaves the kernel through the same
 * IRET path as Linux's (kernel_model/entry_64.S).  vfork is the same copy
 * with the parent waiting until the child exec's or ends; the child does
 * not share the parent's memory (a vfork child may only exec or _exit,
 * which cannot tell the difference).  Threads (CLONE_VM without
 * CLONE_VFORK, CLONE_THREAD) are not modelled yet: -ENOSYS.
 */
#include "task.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hypercall.h"
#include "mem.h"

#define G_SIGCHLD 17
#define G_SIGKILL 9
#define CLONE_VM 0x100
#define CLONE_VFORK 0x4000
#define CLONE_PARENT 0x8000
#define CLONE_THREAD 0x10000
#define CLONE_SETTLS 0x80000
#define CLONE_PARENT_SETTID 0x100000
#define CLONE_CHILD_CLEARTID 0x200000
#define CLONE_CHILD_SETTID 0x1000000
#define PT_REGS_SIZE 168
#define PT_REGS_AX 80 /* offsetof(struct pt_regs, ax) */
#define PT_REGS_SP 152
#define SWITCH_FRAME 56 /* six callee-saved registers and the return address */

es_world *es_world_new(int max_tasks)
{
    es_world *w = calloc(1, sizeof *w);
    if (w) {
        w->cur = -1;
        w->max_tasks = max_tasks > 0 ? max_tasks : ES_MAX_TASKS_DEFAULT;
    }
    return w;
}

es_task *es_task_cur(es_machine *m)
{
    es_world *w = m->host ? m->host->world : NULL;
    return w && w->cur >= 0 ? w->t[w->cur] : NULL;
}

bool es_task_multi(es_machine *m)
{
    es_world *w = m->host ? m->host->world : NULL;
    return w && w->cur >= 0 && w->live > 1;
}

es_task *es_task_by_tid(es_world *w, int tid)
{
    for (int i = 0; i < w->n; i++)
        if (w->t[i] && w->t[i]->tid == tid)
            return w->t[i];
    return NULL;
}

int es_task_add(es_world *w, es_task *t)
{
    for (int i = 0; i < w->n; i++)
        if (!w->t[i]) {
            w->t[i] = t;
            return i;
        }
    if (w->n == w->cap) {
        int cap = w->cap ? w->cap * 2 : 16;
        es_task **nt = realloc(w->t, (size_t)cap * sizeof *nt);
        if (!nt)
            return -1;
        w->t = nt;
        w->cap = cap;
    }
    w->t[w->n] = t;
    return w->n++;
}

/* An ended task lets go of its address space: another task still using
 * it (a thread of the process) takes it over, as the mm's last user frees
 * it in Linux (mmput); the one loaded in CR3 waits for the next switch. */
void es_task_put_mm(es_machine *m, es_task *t)
{
    es_world *w = m->host->world;
    if (!t->mm_live)
        return;
    for (int i = 0; i < w->n; i++) {
        es_task *u = w->t[i];
        if (u && u != t && u->mm.pgd == t->mm.pgd && u->state != ES_T_ZOMBIE &&
            u->state != ES_T_GONE) {
            u->mm_live = true;
            t->mm_live = false;
            return;
        }
    }
    if (t->mm.pgd == es_vm_current(m).pgd)
        return;
    /* es_vm_release refuses the one m->vmas names as well: then the task
     * keeps it (freed at a later switch or with the run), never nobody */
    if (es_vm_release(m, t->mm))
        t->mm_live = false;
}

/* Frees what is left of an ended task (its table entry goes too). */
void es_task_reap(es_machine *m, es_task *t)
{
    es_world *w = m->host->world;
    es_task_put_mm(m, t);
    for (int i = 0; i < w->n; i++)
        if (w->t[i] == t)
            w->t[i] = NULL;
    if (t->slot) {
        es_vm_kstack_free(m, t->slot);
        w->slots[t->slot] = 0;
    }
    /* under a debugger's history the task and its process state are kept
     * (a reverse may bring them back); their fds go now all the same */
    if (t->proc != m->host && !t->is_thread) {
        es_hs_fs_release(t->proc);
        if (!es_hist_keep(w, ES_HIST_PROC, t->proc)) {
            es_hs_ldt_free(t->proc);
            free(t->proc);
        }
    }
    if (!es_hist_keep(w, ES_HIST_TASK, t))
        free(t);
}

void es_world_free(es_machine *m)
{
    es_world *w = m->host->world;
    es_hist_off(w);
    /* the address space es_vm_free takes with the machine is the VM
     * layer's current one (m->vmas); every other live one goes here.  Not
     * told by CR3: the run may end between the switch that changed m->vmas
     * and the guest kernel's CR3 load, or in a debugger's reverse there */
    struct es_vmas *cur = m->vmas;
    for (int i = 0; i < w->n; i++)
        if (w->t[i] && w->t[i]->mm_live && w->t[i]->mm.vmas == cur)
            m->cr3 = w->t[i]->mm.pgd; /* so es_vm_release agrees which is current */
    for (int i = 0; i < w->n; i++) {
        es_task *t = w->t[i];
        if (!t)
            continue;
        if (t->mm_live && t->mm.vmas != cur)
            es_vm_release(m, t->mm);
        if (t->proc != m->host && !t->is_thread) {
            es_hs_fs_release(t->proc);
            es_hs_ldt_free(t->proc);
            free(t->proc);
        }
        free(t);
    }
    es_hist_free(w); /* what the history kept: not in the table any more */
    free(w->t);
    free(w);
    m->host->world = NULL;
}

void es_hs_slept(struct es_host *h, int64_t ns)
{
    const int64_t cap = INT64_MAX / 4; /* leaves room for the epoch and icount */
    int64_t *s = &h->world->sleep_ns;
    *s = ns >= cap - *s ? cap : *s + ns;
}

int64_t es_hs_sleep_ns(const struct es_host *h)
{
    return h->world->sleep_ns;
}

/* ES_SCHED_INIT: the running program becomes the first task. */
static int64_t sched_init(es_machine *m, uint64_t top, uint64_t work_kva, uint64_t rff)
{
    struct es_host *h = m->host;
    es_world *w = h->world;
    if (w->cur >= 0)
        return -EBUSY;
    es_task *t = calloc(1, sizeof *t);
    if (!t)
        return -ENOMEM;
    t->tid = h->pid;
    t->proc = h;
    t->mm = es_vm_current(m);
    t->mm_live = true;
    t->ktop = top;
    t->parent = 0;
    int i = es_task_add(w, t);
    if (i < 0) {
        free(t);
        return -ENOMEM;
    }
    w->cur = i;
    w->live = 1;
    w->init_tid = t->tid;
    w->work_kva = work_kva;
    w->ret_from_fork = rff;
    w->next_pid = h->pid + 1;
    w->slice_start = m->icount;
    return 0;
}

int64_t es_task_sched_op(es_machine *m, const uint64_t a[4])
{
    if (!m->host)
        return -ENOSYS;
    switch (a[0]) {
    case ES_SCHED_INIT:
        return sched_init(m, a[1], a[2], a[3]);
    case ES_SCHED_SWITCH:
        return es_task_cur(m) ? es_sched_switch(m, a[1], a[2]) : 0;
    default:
        return -ENOSYS;
    }
}

/* ---- fork ---- */

/* A 32-bit store into another address space (CLONE_CHILD_SETTID): through
 * its page tables, only when the page is there (the parent touched it). */
void es_task_put_u32(es_machine *m, es_mm mm, uint64_t va, uint32_t v)
{
    if (va & 3)
        return;
    uint64_t *pte = es_pte(m, mm.pgd, va, false);
    if (!pte || !(*pte & ES_PTE_P) || !(*pte & ES_PTE_W))
        return;
    uint8_t *p = es_phys(m, (*pte & ES_PTE_ADDR) | (va & 0xfff));
    if (p)
        es_st32(p, v);
}

/* The child's kernel stack: pt_regs copied from the parent's (rax = 0, a
 * new user stack if clone gave one) and below it the frame es_switch_to
 * pops: six zero callee-saved registers and ret_from_fork. */
int es_task_build_kstack(es_machine *m, es_task *p, es_task *t, uint64_t newsp)
{
    uint8_t regs[PT_REGS_SIZE], frame[SWITCH_FRAME] = {0};
    if (es_copy_from_guest(m, regs, p->ktop - PT_REGS_SIZE, sizeof regs))
        return -EFAULT;
    es_st64(regs + PT_REGS_AX, 0);
    if (newsp)
        es_st64(regs + PT_REGS_SP, newsp);
    es_st64(frame + 48, m->host->world->ret_from_fork);
    t->ksp = t->ktop - PT_REGS_SIZE - SWITCH_FRAME;
    if (es_copy_to_guest(m, t->ktop - PT_REGS_SIZE, regs, sizeof regs) ||
        es_copy_to_guest(m, t->ksp, frame, sizeof frame))
        return -EFAULT;
    /* what taint sees: copy_thread's *childregs = *current_pt_regs(), then
     * ax (and a new sp, clone's argument: its label is not followed) set,
     * and a switch frame of kernel values */
    es_observe_kcopy(m, t->ktop - PT_REGS_SIZE, p->ktop - PT_REGS_SIZE, PT_REGS_SIZE);
    es_observe_kcopy(m, t->ktop - PT_REGS_SIZE + PT_REGS_AX, 0, 8);
    if (newsp)
        es_observe_kcopy(m, t->ktop - PT_REGS_SIZE + PT_REGS_SP, 0, 8);
    es_observe_kcopy(m, t->ksp, 0, sizeof frame);
    return 0;
}

int es_task_alloc_slot(es_machine *m, es_task *t)
{
    es_world *w = m->host->world;
    for (unsigned s = 1; s < ES_KSTACK_SLOTS; s++)
        if (!w->slots[s]) {
            t->ktop = es_vm_kstack_alloc(m, s);
            if (!t->ktop)
                return -ENOMEM;
            w->slots[s] = 1;
            t->slot = s;
            return 0;
        }
    return -EAGAIN;
}

/* The child's task, process state, address space and kernel stack; NULL
 * with *err on failure (nothing left behind). */
static es_task *make_child(es_machine *m, es_task *p, uint64_t newsp, int *err)
{
    es_task *t = calloc(1, sizeof *t);
    struct es_host *proc = t ? es_host_clone(m, m->host) : NULL;
    *err = -ENOMEM;
    if (!proc) {
        free(t);
        return NULL;
    }
    t->proc = proc;
    *err = es_vm_fork(m, &t->mm);
    if (!*err) {
        t->mm_live = true;
        *err = es_task_alloc_slot(m, t);
    }
    if (!*err)
        *err = es_task_build_kstack(m, p, t, newsp);
    if (*err) {
        if (t->mm_live)
            es_vm_release(m, t->mm);
        if (t->slot) {
            es_vm_kstack_free(m, t->slot);
            m->host->world->slots[t->slot] = 0;
        }
        es_hs_fs_release(proc);
        free(proc);
        free(t);
        return NULL;
    }
    return t;
}

/* vfork's parent, made to run again: the child's tid once it exec'd or
 * ended, else it waits on. */
static int64_t vfork_resume(es_machine *m, es_task *p)
{
    int tid = p->wait.child;
    es_task *t = es_task_by_tid(m->host->world, tid);
    if (t && !t->vfork_done && t->state == ES_T_RUN) {
        es_task_wait(m, ES_W_VFORK, NULL, 0, 0, tid);
        return -ES_ERESCHED;
    }
    return tid;
}

int64_t es_task_too_many(es_machine *m)
{
    es_world *w = m->host->world;
    snprintf(m->message, sizeof m->message,
             "fork: the guest would have more than %d tasks (--max-tasks): a fork bomb?",
             w->max_tasks);
    m->stop = ES_STOP_LIMIT;
    return -EAGAIN;
}

static int64_t do_clone(es_machine *m, const es_scall *c, uint64_t flags, uint64_t newsp,
                        uint64_t ptid, uint64_t ctid, uint64_t tls)
{
    es_task *p = es_task_cur(m);
    if (!p)
        return -ENOSYS; /* --direct: no kernel to switch tasks */
    if (p->wait.active && p->wait.kind == ES_W_VFORK)
        return vfork_resume(m, p);
    if (flags & CLONE_THREAD)
        return es_thread_clone(m, c, flags, newsp, ptid, ctid, tls);
    if ((flags & CLONE_VM) && !(flags & CLONE_VFORK))
        return -ENOSYS; /* a process sharing its parent's memory: not modelled */
    es_world *w = m->host->world;
    if (w->live >= w->max_tasks)
        return es_task_too_many(m);
    int err;
    es_task *t = make_child(m, p, c->ptr32 ? (uint32_t)newsp : newsp, &err);
    if (!t)
        return err;
    t->tid = w->next_pid++;
    t->proc->pid = t->tid;
    t->proc->ppid = m->host->pid;
    /* the parent is the creator's process (any thread of it may wait) */
    es_task *lead = es_task_leader(w, p);
    t->parent = (flags & CLONE_PARENT) ? (lead ? lead->parent : 0) : m->host->pid;
    t->exit_signal = (int)(flags & 0xff);
    es_tctx_save(m, &t->ctx);
    if ((flags & CLONE_SETTLS) && !c->ptr32)
        t->ctx.fs.base = tls;
    t->proc->tid_address = (flags & CLONE_CHILD_CLEARTID) ? ctid : 0;
    t->proc->robust_head = t->proc->robust_len = 0;
    es_thread_save(t->proc, &t->th);
    if (flags & CLONE_CHILD_SETTID)
        es_task_put_u32(m, t->mm, ctid, (uint32_t)t->tid);
    if (es_task_add(w, t) < 0) {
        es_task_reap(m, t); /* releases its address space too */
        return -ENOMEM;
    }
    w->live++;
    w->forks++;
    es_hist_born(w, ES_HIST_TASK, t);
    es_hist_born(w, ES_HIST_PROC, t->proc);
    es_hist_born(w, ES_HIST_VMAS, t->mm.vmas);
    if (flags & CLONE_PARENT_SETTID) {
        uint8_t b[4];
        es_st32(b, (uint32_t)t->tid);
        es_hs_put(m, c, ptid, b, 4);
    }
    if (flags & CLONE_VFORK) {
        es_task_wait(m, ES_W_VFORK, NULL, 0, 0, t->tid);
        return -ES_ERESCHED;
    }
    return t->tid;
}

ES_SYS(fork) { return do_clone(m, c, G_SIGCHLD, 0, 0, 0, 0); }
ES_SYS(vfork) { return do_clone(m, c, CLONE_VM | CLONE_VFORK | G_SIGCHLD, 0, 0, 0, 0); }

/* clone's argument order: x86-64 and x32 (flags, newsp, ptid, ctid, tls),
 * i386 CONFIG_CLONE_BACKWARDS (flags, newsp, ptid, tls, ctid) */
ES_SYS(clone)
{
    if (c->abi == ES_ABI_I386)
        return do_clone(m, c, a[0], a[1], a[2], a[4], a[3]);
    return do_clone(m, c, a[0], a[1], a[2], a[3], a[4]);
}

/* ---- the end of a task ---- */

/* Orphans go to "init" (nobody here reaps them but the table: an ended
 * orphan is freed at once). */
static void reparent_children(es_machine *m, es_task *dead)
{
    es_world *w = m->host->world;
    for (int i = 0; i < w->n; i++) {
        es_task *t = w->t[i];
        if (!t || t->parent != dead->tid)
            continue;
        t->parent = 0;
        t->proc->ppid = 1;
        if (t->state == ES_T_ZOMBIE)
            es_task_reap(m, t);
    }
}

/* The parent hears of it (SIGCHLD with CLD_EXITED/CLD_KILLED). */
static void notify_parent(es_machine *m, es_task *t)
{
    es_world *w = m->host->world;
    es_task *p = t->parent ? es_task_by_tid(w, t->parent) : NULL;
    if (!p || (p->state != ES_T_RUN && p->state != ES_T_HELD)) {
        t->parent = 0;
        return;
    }
    if (t->exit_signal > 0 && t->exit_signal <= 64) {
        int code = (t->wstatus & 0x7f) ? 2 /* CLD_KILLED */ : 1 /* CLD_EXITED */;
        es_hs_signal_proc(m, p->proc, t->exit_signal, code, t->tid);
    }
}

/* Frees the task's process resources that others may be waiting on: its
 * fds (a pipe's reader sees EOF), and clear_child_tid. */
static void release_process(es_machine *m, es_task *t)
{
    if (t->proc->tid_address)
        es_task_put_u32(m, t->mm, t->proc->tid_address, 0);
    es_hs_fs_release(t->proc);
    t->proc->itimer_at = 0;
}

static void keep_init(es_world *w, int stop, int status, int sig, const char *msg)
{
    w->init_ended = true;
    w->init_stop = stop;
    w->init_status = status;
    w->init_signal = sig;
    snprintf(w->init_msg, sizeof w->init_msg, "%s", msg);
}

static void run_result(es_machine *m, es_world *w)
{
    m->stop = w->init_stop;
    m->exit_status = w->init_status;
    m->signal = w->init_signal;
    memcpy(m->message, w->init_msg, sizeof m->message);
}

/* The task's process ends: its memory and files go, its children go to
 * init, its parent hears (SIGCHLD, a waiter woken); it stays a zombie
 * holding wstatus until reaped. */
static void become_zombie(es_machine *m, es_task *t, int wstatus)
{
    if (t->state == ES_T_RUN)
        m->host->world->live--;
    t->state = ES_T_ZOMBIE;
    t->wstatus = wstatus;
    t->vfork_done = true;
    t->wait.active = false;
    release_process(m, t);
    reparent_children(m, t);
    notify_parent(m, t);
}

es_task *es_task_leader(es_world *w, const es_task *t)
{
    if (!t->is_thread)
        return (es_task *)t;
    es_task *l = es_task_by_tid(w, t->proc->pid);
    return l && l->proc == t->proc ? l : NULL;
}

/* exit_group or a fatal signal: every thread ends; the process ends
 * through its leader (held if it exited first). */
void es_task_end(es_machine *m, int wstatus)
{
    es_task *t = es_task_cur(m);
    if (!t || t->state != ES_T_RUN)
        return;
    es_world *w = m->host->world;
    es_thread_end_others(m, m->host, t);
    es_task *lead = es_task_leader(w, t);
    if (lead != t) { /* freed at the next switch, once off its stack */
        t->state = ES_T_GONE;
        t->wait.active = false;
        w->live--;
    }
    if (!lead)
        lead = t; /* cannot happen: a leader is freed only after its threads */
    if (lead->tid == w->init_tid)
        keep_init(w, m->stop, m->exit_status, m->signal, m->message);
    become_zombie(m, lead, wstatus);
    if (w->live == 0) {
        run_result(m, w);
        return;
    }
    m->stop = ES_STOP_NONE;
    es_task_write_work(m, 0);
}

void es_task_kill_other(es_machine *m, es_task *t, int sig)
{
    if (t->state != ES_T_RUN && t->state != ES_T_HELD)
        return;
    es_world *w = m->host->world;
    es_thread_end_others(m, t->proc, t);
    if (t->tid == w->init_tid) {
        char msg[64];
        snprintf(msg, sizeof msg, "killed by signal %d", sig);
        keep_init(w, ES_STOP_FAULT, 128 + sig, sig, msg);
    }
    become_zombie(m, t, sig);
}

/* ---- wait4, waitid ---- */

static bool matches(const es_task *caller, const es_task *t, int spec)
{
    if (t->is_thread || t->parent != caller->proc->pid)
        return false;
    if (spec > 0)
        return t->tid == spec;
    if (spec == -1)
        return true;
    int pg = spec == 0 ? caller->proc->pgid : -spec;
    return t->proc->pgid == pg;
}

/* A zombie child matching spec (*found: any child matches at all). */
static es_task *find_zombie(es_world *w, const es_task *me, int spec, bool *found)
{
    *found = false;
    for (int i = 0; i < w->n; i++) {
        es_task *t = w->t[i];
        if (!t || !matches(me, t, spec))
            continue;
        *found = true;
        if (t->state == ES_T_ZOMBIE)
            return t;
    }
    return NULL;
}

bool es_task_child_ready(es_machine *m, es_task *me)
{
    bool found;
    return find_zombie(m->host->world, me, me->wait.child, &found) || !found;
}

#define WNOHANG 1
#define WEXITED 4
#define WNOWAIT 0x01000000

/* The zombie to report for (pid, options), NULL with *r set otherwise. */
static es_task *wait_pick(es_machine *m, int spec, int options, int64_t *r)
{
    es_task *me = es_task_cur(m);
    if (!me) {
        *r = -ECHILD;
        return NULL;
    }
    bool found;
    es_task *z = find_zombie(m->host->world, me, spec, &found);
    if (z)
        return z;
    if (!found)
        *r = -ECHILD;
    else if (options & WNOHANG)
        *r = 0;
    else {
        es_task_wait(m, ES_W_CHILD, NULL, 0, 0, spec);
        *r = -ES_ERESCHED;
    }
    return NULL;
}

static int64_t do_wait4(es_machine *m, const es_scall *c, int spec, uint64_t ustatus,
                        int options, uint64_t urusage)
{
    if (options & ~(WNOHANG | 2 /* WUNTRACED */ | 8 /* WCONTINUED */ | 0x20000000 /* __WNOTHREAD */ |
                    0x40000000 /* __WALL */ | 0x80000000u /* __WCLONE */))
        return -EINVAL;
    int64_t r = 0;
    es_task *z = wait_pick(m, spec == -2147483648 ? -1 : spec, options, &r);
    if (!z)
        return r;
    uint8_t b[144] = {0};
    es_st32(b, (uint32_t)z->wstatus);
    if (ustatus && es_hs_put(m, c, ustatus, b, 4))
        return -EFAULT;
    memset(b, 0, 4);
    if (urusage && es_hs_put(m, c, urusage, b, c->compat ? 72 : 144))
        return -EFAULT;
    int tid = z->tid;
    es_task_reap(m, z);
    return tid;
}

ES_SYS(wait4) { return do_wait4(m, c, (int)a[0], a[1], (int)a[2], a[3]); }
ES_SYS(waitpid) { return do_wait4(m, c, (int)a[0], a[1], (int)a[2], 0); }

/* waitid(idtype, id, infop, options, rusage): P_ALL 0, P_PID 1, P_PGID 2 */
ES_SYS(waitid)
{
    int type = (int)a[0], id = (int)a[1], options = (int)a[3];
    if (type < 0 || type > 2 || !(options & WEXITED) ||
        (options & ~(WNOHANG | WEXITED | WNOWAIT | 2 | 8 | 0x20000000 | 0x40000000 | 0x80000000u)))
        return -EINVAL;
    int spec = type == 0 ? -1 : type == 1 ? id : id == 0 ? 0 : -id;
    if (type != 0 && id <= 0 && type == 1)
        return -EINVAL;
    int64_t r = 0;
    es_task *z = wait_pick(m, spec, options, &r);
    uint8_t info[128] = {0};
    if (z) { /* siginfo: signo, errno, code, then pid, uid, status */
        bool killed = (z->wstatus & 0x7f) != 0;
        es_st32(info, G_SIGCHLD);
        es_st32(info + 8, killed ? 2 : 1);
        es_st32(info + 12 + (c->compat ? 0 : 4), (uint32_t)z->tid);
        es_st32(info + 16 + (c->compat ? 0 : 4), z->proc->uid);
        es_st32(info + 20 + (c->compat ? 0 : 4),
                (uint32_t)(killed ? z->wstatus & 0x7f : (z->wstatus >> 8) & 0xff));
    } else if (r) {
        return r;
    }
    if (a[2] && es_hs_put(m, c, a[2], info, 128))
        return -EFAULT;
    if (z && !(options & WNOWAIT))
        es_task_reap(m, z);
    return 0;
}

/* ---- other processes: kill, ids, groups ---- */

/* Whether kill(pid) selects task t (pgid: the caller's group). */
static bool kill_selects(const es_task *me, const es_task *t, int pid, int pgid)
{
    return pid > 0     ? t->proc->pid == pid
           : pid == 0  ? t->proc->pgid == pgid
           : pid == -1 ? t->proc != me->proc
                       : t->proc->pgid == -pid;
}

/* Sends sig to every process pid selects (kill(2)); -ESRCH when none.
 * The caller's own signal goes last: it may end the caller. */
int64_t es_task_kill(es_machine *m, int pid, int sig)
{
    es_task *me = es_task_cur(m);
    es_world *w = m->host->world;
    int pgid = m->host->pgid, hits = 0;
    for (int i = 0; me && i < w->n; i++) {
        es_task *t = w->t[i];
        /* a process once: its leader (running, or held while threads run) */
        if (!t || t->is_thread || (t->state != ES_T_RUN && t->state != ES_T_HELD) ||
            t->proc == m->host || !kill_selects(me, t, pid, pgid))
            continue;
        hits++;
        if (sig)
            es_hs_signal_proc(m, t->proc, sig, 0 /* SI_USER */, m->host->pid);
    }
    if (me && kill_selects(me, me, pid, pgid) && pid != -1) {
        hits++;
        if (sig)
            es_hs_signal_self(m, sig);
    }
    return hits ? 0 : -ESRCH;
}

ES_SYS(setpgid)
{
    int pid = (int)a[0] ? (int)a[0] : m->host->pid, pg = (int)a[1] ? (int)a[1] : pid;
    if ((int)a[1] < 0)
        return -EINVAL;
    es_task *me = es_task_cur(m);
    struct es_host *target = m->host;
    if (pid != m->host->pid) {
        es_task *t = me ? es_task_by_tid(m->host->world, pid) : NULL;
        if (!t || t->is_thread || t->parent != m->host->pid || t->state != ES_T_RUN)
            return -ESRCH;
        target = t->proc;
    }
    if (target->sid != m->host->sid)
        return -EPERM;
    target->pgid = pg;
    return 0;
}

ES_SYS(setsid)
{
    struct es_host *h = m->host;
    if (h->pgid == h->pid)
        return -EPERM; /* already a group leader */
    h->sid = h->pgid = h->pid;
    return h->sid;
}

/* getpgid(pid), getsid(pid): 0 = the caller */
static int64_t other_ids(es_machine *m, int pid, bool sid)
{
    struct es_host *h = m->host;
    if (pid && pid != h->pid) {
        es_task *t = es_task_cur(m) ? es_task_by_tid(h->world, pid) : NULL;
        if (!t)
            return -ESRCH;
        h = t->proc;
    }
    return sid ? h->sid : h->pgid;
}

ES_SYS(getpgid) { return other_ids(m, (int)a[0], false); }
ES_SYS(getsid) { return other_ids(m, (int)a[0], true); }
ES_SYS(getpgrp) { return m->host->pgid; }
