/* task.h - the tasks of a run (processes made by fork, vfork and clone),
 * private to sim/host/ (and the tests that look at the table).
 *
 * One simulator process holds the whole process tree: each task has its
 * process state (struct es_host: fds, signals, ids...), its address space
 * (es_mm: page tables and VMAs), its kernel stack in the guest kernel's
 * vmalloc area with pt_regs at the top, and what Linux's __switch_to keeps
 * in the task_struct.  The guest kernel switches stacks and CR3 itself
 * (kernel_model/sched.c, entry_64.S); task.c and sched.c are the
 * simulator's half: the table, fork, exit and reaping, wait, signals to
 * other processes, and the choice of the next task.
 */
#ifndef ENTRYSIM_HOST_TASK_H
#define ENTRYSIM_HOST_TASK_H

#include <poll.h>

#include "host_int.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ES_T_GONE: a thread that ended, freed at the next switch (nobody waits
 * for a thread).  ES_T_HELD: a group leader that called exit while its
 * other threads run on: Linux keeps it (a zombie nobody can reap yet) and
 * reports the process's end through it when the last thread ends. */
enum es_tstate { ES_T_RUN = 0, ES_T_ZOMBIE, ES_T_GONE, ES_T_HELD };

/* What a task's unfinished call waits for (it got ES_ERESCHED and the
 * kernel retries it when the task runs again). */
enum es_wkind {
    ES_W_NONE = 0,
    ES_W_FD,     /* fds ready (poll events) or the timeout */
    ES_W_CHILD,  /* wait4/waitid: a child matching `child` changed state */
    ES_W_SIGNAL, /* pause, sigsuspend: a signal to deliver */
    ES_W_VFORK,  /* vfork: the child (tid `child`) exec'd or ended */
    ES_W_FUTEX,  /* futex wait: a wake on (mm, uaddr) or the timeout */
};

#define ES_WAIT_FDS 64

typedef struct es_twait {
    bool active;   /* a call of this task waits */
    int kind;      /* enum es_wkind */
    struct pollfd fds[ES_WAIT_FDS];
    unsigned nfds;
    int64_t until; /* guest CLOCK_MONOTONIC ns that ends the wait, 0 = none */
    int child;     /* ES_W_CHILD: the pid argument (>0 pid, -1 any, 0 own
                      group, <-1 group); ES_W_VFORK: the child's tid */
    uint64_t done; /* bytes a write moved before it had to wait */
    uint64_t oldmask; /* rt_sigsuspend: the mask from before the call */
    uint64_t uaddr;   /* ES_W_FUTEX: the futex word (in the task's mm) */
    uint32_t bitset;  /* ...FUTEX_WAIT_BITSET's mask (all ones for WAIT) */
    bool woken;       /* ...a FUTEX_WAKE chose this waiter */
    uint64_t seq;     /* ...when it began waiting (wakes go in FIFO order) */
} es_twait;

/* What Linux keeps per thread rather than per process: the signal mask,
 * the alternate stack, clear_child_tid and the robust list.  The running
 * thread's copy lives in its struct es_host (where the services use it);
 * this one is saved there at each switch (es_thread_save/load). */
typedef struct es_tthread {
    uint64_t sigmask, sigpending, ss_sp, ss_size; /* sigpending: es_host.tsigpending */
    uint32_t ss_flags;
    uint64_t tid_address, robust_head, robust_len;
    uint64_t suspend_mask;
    bool suspend_saved;
} es_tthread;

/* The user state Linux's __switch_to saves in the task_struct (FPU/SSE,
 * the data segment registers, the FS base and the user GS base, which is
 * in IA32_KERNEL_GS_BASE while the kernel runs, the TLS descriptors). */
typedef struct es_tctx {
    es_xmm xmm[16];
    es_xmm ymmh[16];
    uint32_t mxcsr;
    es_x87 fpu;
    es_segreg es, ds, fs, gs; /* gs.base is the kernel's: not switched */
    uint64_t user_gs_base;
    uint64_t tls[3];          /* m->gdt[12..14] */
} es_tctx;

typedef struct es_task {
    int tid;                /* thread id; a process's first task: = its pid */
    bool is_thread;         /* made by CLONE_THREAD: shares proc and mm */
    int state;              /* enum es_tstate */
    int parent;             /* parent's tid, 0 = none (orphan) */
    int exit_signal;        /* sent to the parent at the end (clone's low byte) */
    int wstatus;            /* the wait status once a zombie */
    struct es_host *proc;   /* its process state */
    es_mm mm;               /* its address space */
    bool mm_live;           /* mm not released yet */
    unsigned slot;          /* kernel-stack slot (0: the boot stack in the image) */
    uint64_t ktop, ksp;     /* kernel stack top; saved RSP while not running */
    bool vfork_done;        /* exec'd or ended: a vfork parent goes on */
    es_tctx ctx;
    es_tthread th;          /* per-thread state while not running */
    es_twait wait;
} es_task;

#define ES_MAX_TASKS_DEFAULT 64

typedef struct es_world {
    es_task **t;            /* the table; NULL = free entry */
    int n, cap;
    int cur;                /* index of the running task, -1 before ES_SCHED_INIT */
    int live;               /* tasks not ended */
    int max_tasks;          /* --max-tasks */
    int next_pid;
    int64_t sleep_ns;       /* deterministic clock: time slept (all tasks) */
    uint64_t work_kva;      /* the kernel's exit-work word */
    uint64_t ret_from_fork; /* the kernel's ret_from_fork */
    uint64_t slice_start;   /* icount when the running task got the CPU */
    uint8_t slots[ES_KSTACK_SLOTS]; /* kernel-stack slots in use */
    /* the run's result is the first process's: kept when it ends first */
    int init_tid;
    bool init_ended;
    int init_stop, init_status, init_signal;
    char init_msg[256];
    uint64_t switches, forks, threads;
    uint64_t nsyscalls;     /* every task's, each call once (--stats) */
    uint64_t futex_seq;     /* futex waits begun (their FIFO order) */
    struct es_hist *hist;   /* the debugger's history of the table (hist.c), NULL = none */
} es_world;

/* task.c */
es_world *es_world_new(int max_tasks);
void es_world_free(es_machine *m);
/* The running task, or NULL (no kernel scheduler: --direct, or before the
 * kernel's ES_SCHED_INIT). */
es_task *es_task_cur(es_machine *m);
/* More than one task has not ended: calls that would block let others run. */
bool es_task_multi(es_machine *m);
es_task *es_task_by_tid(es_world *w, int tid);
/* The current task ended (exit: m->stop = ES_STOP_EXIT, or a fatal signal:
 * ES_STOP_FAULT, with exit_status, signal and message set): with other
 * tasks left it becomes a zombie and the run goes on (m->stop cleared). */
void es_task_end(es_machine *m, int wstatus);
/* Another process ends of signal sig (its default action) at once. */
void es_task_kill_other(es_machine *m, es_task *t, int sig);
/* kill(2)'s selection over the run's processes: 0 or -ESRCH. */
int64_t es_task_kill(es_machine *m, int pid, int sig);
/* Whether a wait4 of `me` (its wait.child spec) would end now. */
bool es_task_child_ready(es_machine *m, es_task *me);
/* ES_HC_SCHED (es_hooks.sched_op). */
int64_t es_task_sched_op(es_machine *m, const uint64_t a[4]);
/* The pieces of a new task: its table entry (index or -1), a kernel
 * stack slot (0 or -errno), the kernel stack es_switch_to pops into
 * ret_from_fork with p's pt_regs (rax = 0, newsp if not 0) above it. */
int es_task_add(es_world *w, es_task *t);
int es_task_alloc_slot(es_machine *m, es_task *t);
int es_task_build_kstack(es_machine *m, es_task *p, es_task *t, uint64_t newsp);
/* A 32-bit store into an address space that may not be the current one
 * (only when the page is present and writable). */
void es_task_put_u32(es_machine *m, es_mm mm, uint64_t va, uint32_t v);
/* A clone past --max-tasks: the run stops (ES_STOP_LIMIT); -EAGAIN. */
int64_t es_task_too_many(es_machine *m);
/* Frees what is left of an ended task (its table entry too; a thread's
 * process state stays: it is its group's). */
void es_task_put_mm(es_machine *m, es_task *t);
void es_task_reap(es_machine *m, es_task *t);
/* The leader of t's thread group (the task whose tid is the pid). */
es_task *es_task_leader(es_world *w, const es_task *t);

/* thread.c */
void es_thread_save(const struct es_host *h, es_tthread *th);
/* tls.c */
int64_t es_hs_clone_tls32(es_machine *m, const es_scall *c, uint64_t uinfo, es_tctx *x);
int64_t es_thread_signal(es_machine *m, es_task *t, int sig, int sender);
void es_thread_load(struct es_host *h, const es_tthread *th);
/* Running tasks of proc's thread group other than `except`. */
int es_thread_others(es_world *w, const struct es_host *proc, const es_task *except);
/* clone with CLONE_THREAD (flags checked by the caller). */
int64_t es_thread_clone(es_machine *m, const es_scall *c, uint64_t flags, uint64_t newsp,
                        uint64_t ptid, uint64_t ctid, uint64_t tls);
/* exit(2) of the running task while other threads of its group run: only
 * it ends (clear_child_tid written and woken).  False when it is the last:
 * the caller ends the process. */
bool es_thread_exit(es_machine *m, int code);
/* Ends every thread of proc's group but `keep` (exit_group, a fatal
 * signal, execve): threads are freed, a running leader is held. */
void es_thread_end_others(es_machine *m, struct es_host *proc, es_task *keep);
/* Frees threads that ended earlier (not the running one). */
void es_thread_reap_gone(es_machine *m);
/* futex: wait on *uaddr == val until woken or the guest monotonic time
 * `until` (0 = none); wake up to n waiters whose bitset meets `bitset`;
 * requeue: wake n, move up to n2 of the rest to uaddr2. */
int64_t es_futex_wait(es_machine *m, const es_scall *c, uint64_t uaddr, uint32_t val,
                      int64_t until, uint32_t bitset);
int64_t es_futex_wake(es_machine *m, uint64_t uaddr, int n, uint32_t bitset);
int64_t es_futex_requeue(es_machine *m, uint64_t uaddr, int n, uint64_t uaddr2, int n2);

/* hist.c: the table's history while a debugger keeps one (es_host_history).
 * The kinds of object a step makes and ends: */
enum { ES_HIST_TASK = 1, ES_HIST_PROC, ES_HIST_VMAS };
/* p (a task, a process's state, a VMA list) was made by the step under way. */
void es_hist_born(es_world *w, int kind, void *p);
/* p ends: true when the history keeps it (a reverse may bring it back; the
 * caller must not free it), false when the caller frees it as before. */
bool es_hist_keep(es_world *w, int kind, void *p);
/* The run ends: what ends from now on is freed at once (es_hist_off);
 * then everything kept goes with the history (es_hist_free). */
void es_hist_off(es_world *w);
void es_hist_free(es_world *w);

/* sched.c */
/* Whether t can run now: not waiting, or what it waits for is there. */
bool es_task_ready(es_machine *m, es_task *t);
/* ES_SCHED_SWITCH: saves the current task (kernel RSP prev_sp), picks the
 * next, switches the simulator's state and writes struct es_next at out.
 * 1 = switched, 0 = the current task goes on or the run stopped. */
int64_t es_sched_switch(es_machine *m, uint64_t prev_sp, uint64_t out);
/* Writes the running task's exit-work word (ES_WORK_*). */
void es_task_write_work(es_machine *m, uint64_t extra);
/* The tick: ends the time slice of a task that ran long enough while
 * others wait to run (ES_WORK_RESCHED); true when it did. */
bool es_sched_tick(es_machine *m);
/* Saves the machine's user state of the running task into ctx / loads it. */
void es_tctx_save(es_machine *m, es_tctx *ctx);
void es_tctx_load(es_machine *m, const es_tctx *ctx);

/* Records what the running task's call waits for; the service then returns
 * -ES_ERESCHED.  until: guest monotonic ns, 0 = none. */
void es_task_wait(es_machine *m, int kind, const struct pollfd *p, unsigned n, int64_t until,
                  int child);

#ifdef __cplusplus
}
#endif
#endif
