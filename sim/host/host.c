/* host.c - host services: lifetime, dispatch of a syscall number of each
 * ABI through the generated tables, the --direct register conventions and
 * the guest-memory helpers the syscall bodies share.
 *
 * Numbers are never typed by hand: tables/syscall_64.tbl and syscall_32.tbl
 * (Linux 4.17) map each number to a name, and tables/host_services.tbl each
 * name to its service function es_sys_<service>; systab.c holds the
 * generated rows.  As in 4.17, x86-64 and x32 share one table: the x32 bit
 * is masked off for every 64-bit caller, and the bit itself is what makes a
 * call "x32" (in_x32_syscall()).
 *
 * Files of sim/host/: host.c (this: lifetime, dispatch, registers, guest
 * memory), systab.c (the generated tables and their lookups), path.c
 * (paths confined to the guest root), fs.c (fd table, read/write, open,
 * dup, fcntl, pipes, ioctl, poll), fsdir.c (stat, getdents, readlink,
 * mkdir, unlink, rename, access, cwd), fsmeta.c (statfs, sendfile, times,
 * modes, owners, links, epoll, select), mm.c (brk, mmap...), proc.c (exit,
 * ids, signals, scheduling), tls.c (arch_prctl, TLS descriptors, futex),
 * sysinfo.c (time, random, limits, uname, sysinfo), compat.c (struct
 * layouts per ABI).
 *
 * What a single simulated process cannot have, and what it gets instead:
 * fork/vfork/clone/execve and sockets are absent (-ENOSYS; socket() gives
 * -EAFNOSUPPORT); wait*() gives -ECHILD; signals (signal.c) run their
 * handlers when the guest kernel builds frames for the process (64-bit
 * today), default actions always; ITIMER_REAL fires SIGALRM (timer.c);
 * a wait that only another thread or a signal could end (futex without
 * timeout; pause, sigsuspend with no timer armed) stops the run with
 * ES_STOP_ERROR instead of hanging; file mappings are private copies (see mm.c).  Calls that 4.17
 * did not have (rseq, clock_gettime64, openat2...) are -ENOSYS because they
 * are not in the tables.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host_int.h"
#include "hypercall.h"
#include "mem.h"
#include "systab.h"
#include "task.h"

/* ---- the guest kernel's log and `current` (sim/priv.c's hypercalls) ---- */

/* printk goes to the run's stderr (the host fd the caller gave for the
 * guest's fd 2, whatever the guest did with its own fd 2 since), as a
 * console would; a closed or broken log loses the text, never the run. */
static void host_kernel_log(es_machine *m, const char *text, size_t n)
{
    int fd = m->host->cfg.stderr_fd;
    if (fd < 0)
        return;
    sigset_t old;
    es_hs_pipe_hold(&old);
    while (n) {
        ssize_t w = write(fd, text, n);
        if (w <= 0 && errno != EINTR)
            break;
        if (w > 0) {
            text += w;
            n -= (size_t)w;
        }
    }
    es_hs_pipe_release(m, &old, false);
}

/* One thread per process: pid = tgid (what getpid/gettid return). */
static int host_task_info(es_machine *m, int *pid, int *tgid, char comm[16])
{
    *pid = *tgid = m->host->pid;
    memcpy(comm, m->host->comm, 16);
    return 0;
}

/* ---- lifetime ---- */

int es_host_init(es_machine *m, const es_host_config *cfg)
{
    if (m->host)
        es_host_free(m);
    struct es_host *h = calloc(1, sizeof *h);
    if (!h) {
        snprintf(m->message, sizeof m->message, "host services: out of memory");
        return -1;
    }
    m->host = h;
    es_hs_ldt_load(m); /* none yet */
    m->hooks.free_host = es_host_free; /* es_machine_free calls it */
    m->hooks.host_syscall = es_host_syscall; /* sim/isa/system.c, --direct */
    m->hooks.host_call = es_host_call;       /* sim/priv.c, the hypercall */
    m->hooks.kernel_log = host_kernel_log;   /* sim/priv.c, ES_HC_PUTS */
    m->hooks.task_info = host_task_info;     /* sim/priv.c, ES_HC_TASK */
    m->hooks.signal_op = es_hs_sigop;        /* sim/priv.c, ES_HC_SIGOP */
    m->hooks.tick = es_hs_tick;              /* sim/cpu.c, between batches */
    m->hooks.sched_op = es_task_sched_op;    /* sim/priv.c, ES_HC_SCHED */
    m->hooks.task_end = es_task_end;         /* sim/priv.c, an unhandled fault */
    h->cfg = *cfg;
    h->world = es_world_new(cfg->max_tasks);
    if (!h->world) {
        snprintf(m->message, sizeof m->message, "host services: out of memory");
        return -1;
    }
    h->rootfd = -1;
    for (int i = 0; i < ES_HOST_MAX_FDS; i++)
        h->fds[i].host = -1;
    if (cfg->exe && strlen(cfg->exe) < sizeof h->exe)
        strcpy(h->exe, cfg->exe);
    const char *name = cfg->name ? cfg->name : h->exe;
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    size_t n = strlen(base) < sizeof h->comm - 1 ? strlen(base) : sizeof h->comm - 1;
    memcpy(h->comm, base, n); /* calloc'd: NUL-terminated */
    h->cfg.exe = h->cfg.name = NULL; /* the caller's strings may not outlive us */
    h->umask = 022;
    h->rng = 0x9e3779b97f4a7c15ull;
    /* The guest sees one process; fixed ids when deterministic. */
    h->pid = cfg->deterministic ? 1000 : (int)getpid();
    h->ppid = cfg->deterministic ? 999 : (int)getppid();
    h->pgid = h->sid = h->pid; /* its own group: kill(0, sig) reaches only the guest */
    h->uid = cfg->deterministic ? 1000 : (uint32_t)getuid();
    h->gid = cfg->deterministic ? 1000 : (uint32_t)getgid();
    /* Linux defaults for an ordinary user (RLIM_INFINITY = ~0). */
    for (int i = 0; i < 16; i++)
        h->rlim[i].cur = h->rlim[i].max = ~0ull;
    h->rlim[3].cur = 8ull << 20;                       /* RLIMIT_STACK */
    h->rlim[4].cur = 0;                                /* RLIMIT_CORE */
    h->rlim[6].cur = h->rlim[6].max = 63408;           /* RLIMIT_NPROC */
    h->rlim[7].cur = ES_HOST_MAX_FDS;                  /* RLIMIT_NOFILE */
    h->rlim[7].max = ES_HOST_MAX_FDS;
    h->rlim[8].cur = h->rlim[8].max = 64ull << 10;     /* RLIMIT_MEMLOCK */
    h->rlim[11].cur = h->rlim[11].max = 63408;         /* RLIMIT_SIGPENDING */
    h->rlim[12].cur = h->rlim[12].max = 819200;        /* RLIMIT_MSGQUEUE */
    h->rlim[13].cur = h->rlim[13].max = 0;             /* RLIMIT_NICE */
    h->rlim[14].cur = h->rlim[14].max = 0;             /* RLIMIT_RTPRIO */
    int r = es_hs_fs_init(m);
    h->cfg.root = NULL;
    return r ? -1 : 0; /* on failure the message is set; es_host_free cleans up */
}

void es_host_free(es_machine *m)
{
    if (!m || !m->host)
        return;
    if (m->host->world)
        es_world_free(m);
    es_hs_fs_free(m);
    es_hs_ldt_free(m->host);
    free(m->host);
    m->host = NULL;
    es_hs_ldt_load(m);
    m->hooks.sched_op = NULL;
    m->hooks.task_end = NULL;
    m->hooks.kernel_log = NULL;
    m->hooks.task_info = NULL;
    m->hooks.signal_op = NULL;
    m->hooks.tick = NULL;
}

uint64_t es_host_syscall_count(const es_machine *m)
{
    if (!m->host)
        return 0;
    /* with the task table: all processes', not the one running last */
    return m->host->world && m->host->world->cur >= 0 ? m->host->world->nsyscalls
                                                      : m->host->nsyscalls;
}

uint64_t es_host_brk(const es_machine *m)
{
    return m->host ? m->host->brk_cur : 0;
}

void es_host_set_brk(es_machine *m, uint64_t start)
{
    if (!m->host)
        return;
    m->host->brk_start = m->host->brk_cur = start;
}

/* ---- guest memory ---- */

uint64_t es_hs_task_size(const es_scall *c)
{
    /* TASK_SIZE_MAX for 64-bit callers; IA32_PAGE_OFFSET for i386 and x32
     * (arch/x86/include/asm/processor.h, 4.17) */
    return c->ptr32 ? 0xffffe000ull : 0x7ffffffff000ull;
}

static bool range_ok(const es_scall *c, uint64_t va, size_t n)
{
    uint64_t top = es_hs_task_size(c);
    return va <= top && n <= top - va;
}

int es_hs_get(es_machine *m, const es_scall *c, void *dst, uint64_t va, size_t n)
{
    if (n == 0)
        return 0;
    if (!range_ok(c, va, n) || es_copy_from_guest(m, dst, va, n))
        return -EFAULT;
    return 0;
}

int es_hs_put(es_machine *m, const es_scall *c, uint64_t va, const void *src, size_t n)
{
    if (n == 0)
        return 0;
    if (!range_ok(c, va, n) || es_copy_to_guest(m, va, src, n))
        return -EFAULT;
    return 0;
}

int64_t es_hs_get_str(es_machine *m, const es_scall *c, uint64_t va, char *dst, size_t cap)
{
    size_t got = 0;
    while (got < cap) {
        size_t chunk = 4096 - ((va + got) & 0xfff); /* never cross a page in one copy */
        if (chunk > cap - got)
            chunk = cap - got;
        if (es_hs_get(m, c, dst + got, va + got, chunk))
            return -EFAULT;
        void *z = memchr(dst + got, 0, chunk);
        if (z)
            return (char *)z - dst;
        got += chunk;
    }
    return -ENAMETOOLONG;
}

/* ---- signals that end the guest ---- */

static const char *const g_signames[32] = {
    "0", "SIGHUP", "SIGINT", "SIGQUIT", "SIGILL", "SIGTRAP", "SIGABRT", "SIGBUS", "SIGFPE",
    "SIGKILL", "SIGUSR1", "SIGSEGV", "SIGUSR2", "SIGPIPE", "SIGALRM", "SIGTERM", "SIGSTKFLT",
    "SIGCHLD", "SIGCONT", "SIGSTOP", "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGURG", "SIGXCPU",
    "SIGXFSZ", "SIGVTALRM", "SIGPROF", "SIGWINCH", "SIGIO", "SIGPWR", "SIGSYS",
};

void es_hs_kill_self(es_machine *m, int sig)
{
    m->signal = sig;
    m->exit_status = 128 + sig; /* what a shell reports for the death */
    snprintf(m->message, sizeof m->message, "killed by signal %d (%s)", sig,
             sig > 0 && sig < 32 ? g_signames[sig] : "SIGRT");
    m->stop = ES_STOP_FAULT;
    es_task_end(m, sig); /* with other tasks the run goes on */
}

struct es_host *es_host_clone(es_machine *m, const struct es_host *src)
{
    (void)m;
    struct es_host *h = malloc(sizeof *h);
    if (!h)
        return NULL;
    memcpy(h, src, sizeof *h);
    if (es_hs_ldt_clone(h, src)) {
        free(h);
        return NULL;
    }
    if (es_hs_fs_clone(h, src)) {
        es_hs_ldt_free(h);
        free(h);
        return NULL;
    }
    /* fork(2): nothing pending, no interval timer, no clear_child_tid or
     * robust list, no suspend mask; the rest is inherited */
    h->sigpending = h->tsigpending = 0;
    memset(h->siginfo, 0, sizeof h->siginfo);
    h->itimer_at = h->itimer_every = 0;
    h->tid_address = h->robust_head = h->robust_len = 0;
    h->suspend_saved = false;
    h->nsyscalls = 0;
    h->rng ^= 0x9e3779b97f4a7c15ull * (uint64_t)(src->world->next_pid + 1);
    return h;
}

/* ---- dispatch ---- */

int64_t es_host_call(es_machine *m, int abi, uint64_t nr, const uint64_t args[6])
{
    struct es_host *h = m->host;
    if (!h)
        return -ENOSYS;
    /* a guest making one slow call after another reaches the deadline
     * here, not at the end of a batch of instructions (the call is not
     * made: resuming re-executes it) */
    if (es_deadline_passed(m))
        return -EINTR;
    h->nsyscalls++;
    es_task *t = es_task_cur(m);
    /* a call resumed after it waited is the same call */
    if (t && !t->wait.active)
        h->world->nsyscalls++;
    /* a waiting call that a signal interrupts ends here: the bytes a write
     * moved, or Linux's restart codes (the kernel's signal delivery turns
     * them into a restart or -EINTR by SA_RESTART, kernel_model/signal.c);
     * pause and sigsuspend see to it themselves */
    if (t && t->wait.active && t->wait.kind != ES_W_SIGNAL &&
        !(t->wait.kind == ES_W_FUTEX && t->wait.woken) && (es_hs_pending(h) & ~h->sigmask)) {
        es_twait *w = &t->wait;
        w->active = false;
        bool plain = w->kind == ES_W_CHILD || w->kind == ES_W_VFORK ||
                     (w->kind == ES_W_FD && w->nfds == 1 && !w->until); /* read, write */
        return w->done ? (int64_t)w->done : plain ? -ERESTARTSYS : -ERESTARTNOHAND;
    }
    es_scall c = {.abi = abi};
    uint64_t a[6];
    if (abi == ES_ABI_I386) {
        /* 32-bit registers: the upper halves do not exist */
        for (int i = 0; i < 6; i++)
            a[i] = (uint32_t)args[i];
        c.nr = (uint32_t)nr;
        c.compat = c.ptr32 = true;
    } else {
        memcpy(a, args, sizeof a);
        c.x32 = (nr & ES_X32_SYSCALL_BIT) != 0;
        c.nr = nr & ~ES_X32_SYSCALL_BIT;
        c.ptr32 = c.x32 || abi == ES_ABI_X32;
        c.compat = c.nr >= 512; /* the x32 rows take compat structs */
    }
    const es_sysrow *row = es_sysrow_at(abi, c.nr);
    int64_t r = row && row->service ? row->service(m, &c, a) : -ENOSYS;
    if (t && r != -ES_ERESCHED)
        t->wait.active = false;
    if (t && t->state != ES_T_RUN) /* it ended: the kernel schedules away */
        r = -ES_ERESCHED;
    if (m->stop == ES_STOP_NONE)
        es_hs_timer_check(m); /* an expired timer's signal goes out with this return */
    for (int i = 0; i < m->nobs && r != -ES_ERESCHED; i++) /* a wait: seen once, when it ends */
        if (m->obs[i].syscall)
            m->obs[i].syscall(m->obs[i].ctx, m, abi, nr, (uint64_t)r);
    return r;
}

int es_host_syscall(es_machine *m, int abi)
{
    uint64_t a[6];
    uint64_t nr;
    if (abi == ES_ABI_I386) {
        nr = (uint32_t)m->gpr[ES_RAX];
        static const int regs[6] = {ES_RBX, ES_RCX, ES_RDX, ES_RSI, ES_RDI, ES_RBP};
        for (int i = 0; i < 6; i++)
            a[i] = (uint32_t)m->gpr[regs[i]];
    } else {
        nr = m->gpr[ES_RAX];
        static const int regs[6] = {ES_RDI, ES_RSI, ES_RDX, ES_R10, ES_R8, ES_R9};
        for (int i = 0; i < 6; i++)
            a[i] = m->gpr[regs[i]];
    }
    m->stop = ES_STOP_NONE;
    int64_t r = es_host_call(m, abi, nr, a);
    if (m->stop != ES_STOP_NONE) /* exit, a fatal signal, a wait forever */
        return ES_STOP;
    m->gpr[ES_RAX] = abi == ES_ABI_I386 ? (uint32_t)r : (uint64_t)r;
    return ES_OK;
}
