/* signal.c - signals of the one guest process: generation (kill, tkill,
 * tgkill, a broken pipe, a user exception), default actions, and the
 * ES_HC_SIGOP services the guest kernel uses to deliver the rest to
 * handlers (kernel_model/signal.c builds the frames).  After Linux's
 * kernel/signal.c: a signal is pending until it is unblocked; a pending
 * signal whose action is to terminate ends the process as soon as it is
 * unblocked; ignored ones are discarded; caught ones wait for the kernel's
 * exit-to-user work (ES_SIG_NEXT).  Without a kernel that builds frames
 * for this process (--direct, or an ABI it does not support yet) a caught
 * signal is dropped, as before signals were modelled.
 */
#include <string.h>

#include "fault.h"
#include "host_int.h"
#include "hypercall.h"
#include "mem.h"
#include "task.h"
#include "vm.h"

#define G_SIGKILL 9
#define G_SIGSTOP 19
#define BIT(sig) (1ull << ((sig) - 1))
#define UNBLOCKABLE (BIT(G_SIGKILL) | BIT(G_SIGSTOP))
#define SA_NODEFER 0x40000000u
#define SA_RESETHAND 0x80000000u
#define SI_USER 0
#define SI_KERNEL 0x80
#define SI_TKILL (-6)

static bool default_ignored(int sig)
{
    /* SIGCHLD SIGCONT SIGURG SIGWINCH are ignored by default; the stop
     * signals would stop us until a SIGCONT nobody can send: drop them */
    return sig == 17 || sig == 18 || sig == 23 || sig == 28 || (sig >= 19 && sig <= 22);
}

static bool ignored(const struct es_host *h, int sig)
{
    uint64_t hd = h->sigact[sig].handler;
    return hd == 1 /* SIG_IGN */ || (hd == 0 && default_ignored(sig));
}

static void take_defaults(es_machine *m, uint64_t ready);

/* Takes the default actions of every pending, unblocked signal without a
 * handler (terminate: the run stops; ignore: discarded), and drops caught
 * ones no kernel will deliver. */
void es_hs_signal_dispatch(es_machine *m)
{
    struct es_host *h = m->host;
    uint64_t ready = es_hs_pending(h) & ~h->sigmask;
    take_defaults(m, ready);
    /* the kernel's TIF_SIGPENDING: set while a caught signal can be
     * delivered, so its exit path asks only then (ES_SIG_NEXT); with the
     * task table the whole exit-work word */
    if (es_task_cur(m)) {
        if (m->stop == ES_STOP_NONE)
            es_task_write_work(m, 0);
    } else if (h->sig_frames && m->stop == ES_STOP_NONE) {
        uint64_t flag = (es_hs_pending(h) & ~h->sigmask) != 0;
        es_copy_to_guest(m, h->sig_flag_kva, &flag, sizeof flag);
    }
}

static void take_defaults(es_machine *m, uint64_t ready)
{
    struct es_host *h = m->host;
    for (int sig = 1; ready && sig <= 64; sig++) {
        if (!(ready & BIT(sig)))
            continue;
        ready &= ~BIT(sig);
        if (h->sigact[sig].handler > 1 && sig != G_SIGKILL) {
            if (!h->sig_frames)
                es_hs_unpend(h, sig);
            continue;
        }
        es_hs_unpend(h, sig);
        if (!ignored(h, sig) || sig == G_SIGKILL) {
            es_hs_kill_self(m, sig);
            return;
        }
    }
}

/* Makes sig pending with its siginfo (code, address; the sender is us):
 * a fault and a tkill/tgkill are this thread's (force_sig_info and
 * do_send_specific use task->pending), the rest the process's. */
static void raise_sig(es_machine *m, int sig, int code, uint64_t addr, bool fault)
{
    struct es_host *h = m->host;
    if (fault || code == SI_TKILL)
        h->tsigpending |= BIT(sig);
    else
        h->sigpending |= BIT(sig);
    h->siginfo[sig] = (es_hsiginfo){.code = code, .addr = addr, .fault = fault};
    /* a default action may end the task: the caller's info is set first */
    es_hs_signal_dispatch(m);
}

int64_t es_hs_signal_self_code(es_machine *m, int sig, int code)
{
    struct es_host *h = m->host;
    if (sig < 0 || sig > 64)
        return -EINVAL;
    if (sig == 0)
        return 0;
    /* an ignored signal is discarded at generation unless blocked
     * (kernel/signal.c sig_ignored) */
    if (sig != G_SIGKILL && ignored(h, sig) && !(h->sigmask & BIT(sig)))
        return 0;
    raise_sig(m, sig, code, 0, false);
    return 0;
}

int64_t es_hs_signal_self(es_machine *m, int sig)
{
    return es_hs_signal_self_code(m, sig, SI_USER);
}

int64_t es_hs_signal_proc(es_machine *m, struct es_host *h, int sig, int code, int sender)
{
    if (h == m->host) {
        int64_t r = es_hs_signal_self_code(m, sig, code);
        if (sig > 0 && sig <= 64)
            h->siginfo[sig].pid = sender;
        return r;
    }
    if (sig < 0 || sig > 64)
        return -EINVAL;
    if (sig == 0 || (sig != G_SIGKILL && ignored(h, sig) && !(h->sigmask & BIT(sig))))
        return 0;
    h->sigpending |= BIT(sig);
    h->siginfo[sig] = (es_hsiginfo){.code = code, .pid = sender};
    bool fatal = sig == G_SIGKILL || (!(h->sigmask & BIT(sig)) && h->sigact[sig].handler == 0);
    es_task *t = fatal ? es_task_by_tid(h->world, h->pid) : NULL;
    if (t)
        es_task_kill_other(m, t, sig);
    return 0;
}

/* siginfo_t of the 64-bit ABI: signo, errno, code, then the union at 16:
 * {pid, uid} for a sender, the address for a fault. */
static void fill_info(const struct es_host *h, int sig, uint8_t info[128])
{
    const es_hsiginfo *s = &h->siginfo[sig];
    memset(info, 0, 128);
    es_st32(info, (uint32_t)sig);
    es_st32(info + 8, (uint32_t)s->code);
    if (s->fault) {
        es_st64(info + 16, s->addr);
    } else if (s->code != SI_KERNEL) {
        es_st32(info + 16, (uint32_t)(s->pid ? s->pid : h->pid));
        es_st32(info + 20, h->uid);
    }
}

/* ES_SIG_NEXT: the lowest pending, unblocked, caught signal into the
 * kernel's struct es_ksignal at kva; its number, or 0. */
static int64_t sig_next(es_machine *m, uint64_t kva)
{
    struct es_host *h = m->host;
    es_hs_signal_dispatch(m);
    uint64_t ready = es_hs_pending(h) & ~h->sigmask;
    if (m->stop != ES_STOP_NONE || !ready)
        return 0;
    int sig = __builtin_ctzll(ready) + 1;
    es_ksigaction *sa = &h->sigact[sig];
    /* after rt_sigsuspend the frame keeps the mask from before it */
    uint64_t oldmask = h->suspend_saved ? h->suspend_mask : h->sigmask;
    h->suspend_saved = false;
    struct es_ksignal k = {.handler = sa->handler, .flags = sa->flags, .restorer = sa->restorer,
                           .mask = sa->mask, .oldmask = oldmask, .ss_sp = h->ss_sp,
                           .ss_size = h->ss_size, .ss_flags = h->ss_size ? h->ss_flags : 2,
                           .sig = (unsigned)sig};
    fill_info(h, sig, k.info);
    if (es_copy_to_guest(m, kva, &k, sizeof k))
        return 0;
    es_hs_unpend(h, sig);
    /* kernel/signal.c signal_delivered: block sa_mask and the signal */
    h->sigmask |= sa->mask | ((sa->flags & SA_NODEFER) ? 0 : BIT(sig));
    h->sigmask &= ~UNBLOCKABLE;
    if (sa->flags & SA_RESETHAND)
        *sa = (es_ksigaction){0};
    es_hs_signal_dispatch(m); /* the flag for what is left */
    return sig;
}

/* ES_SIG_FORCE: a user exception becomes its signal when a handler can
 * take it now (arch/x86/kernel/traps.c do_trap / mm/fault.c); else 0 and
 * the kernel reports the fault, which ends the run.  A #UD on an
 * instruction entrysim does not implement is never handed to the guest:
 * it is the simulator's limit, not the program's fault. */
static int64_t sig_force(es_machine *m, int vec, uint32_t err, uint64_t addr, uint64_t rip)
{
    struct es_host *h = m->host;
    bool bus = es_fault_is_bus(m, vec, addr);
    int sig = bus ? 7 : es_vector_signal(vec);
    if (!h->sig_frames || (vec == ES_VEC_UD && m->unimpl_op && m->unimpl_op != ES_OP_INVALID))
        return 0;
    if (h->sigact[sig].handler <= 1 || (h->sigmask & BIT(sig)))
        return 0; /* force_sig_info: blocked or ignored -> default: death */
    int code = SI_KERNEL;
    uint64_t a = 0;
    if (vec == ES_VEC_PF) {
        /* mm/fault.c: no VMA is bad_area (SEGV_MAPERR), a VMA that does
         * not allow the access is access_error (SEGV_ACCERR), whether or
         * not the page was present yet */
        code = bus ? 2 /* BUS_ADRERR */ : es_vm_prot_at(m, addr) >= 0 ? 2 : 1;
        a = addr;
    } else if (vec == ES_VEC_DE || vec == ES_VEC_UD) {
        code = vec == ES_VEC_DE ? 1 /* FPE_INTDIV */ : 2 /* ILL_ILLOPN */;
        a = rip;
    }
    raise_sig(m, sig, code, a, code != SI_KERNEL);
    return 1;
}

/* ES_SIG_RETURN: the frame's blocked set and sigaltstack come back. */
static int64_t sig_return(es_machine *m, uint64_t mask, uint64_t uss, bool compat)
{
    struct es_host *h = m->host;
    h->sigmask = mask & ~UNBLOCKABLE;
    uint8_t b[24];
    /* stack_t {sp, flags, size}: 8/4/8 bytes, compat 4/4/4 */
    if (uss && !es_copy_from_guest(m, b, uss, compat ? 12 : 24)) {
        uint32_t fl = es_ld32(b + (compat ? 4 : 8));
        uint64_t sp = compat ? es_ld32(b) : es_ld64(b);
        uint64_t size = compat ? es_ld32(b + 8) : es_ld64(b + 16);
        if ((fl & ~0x80000000u) == 2) {
            h->ss_sp = h->ss_size = 0;
            h->ss_flags = 2;
        } else if (size >= 2048) { /* MINSIGSTKSZ; else left as it was */
            h->ss_sp = sp;
            h->ss_size = size;
            h->ss_flags = fl & 0x80000000u;
        }
    }
    es_hs_signal_dispatch(m);
    return 0;
}

int64_t es_hs_sigop(es_machine *m, const uint64_t a[5])
{
    struct es_host *h = m->host;
    if (!h)
        return -ENOSYS;
    switch (a[0]) {
    case ES_SIG_ENABLE:
        h->sig_frames = true;
        h->sig_flag_kva = a[2];
        es_hs_signal_dispatch(m);
        return 0;
    case ES_SIG_NEXT:
        return sig_next(m, a[1]);
    case ES_SIG_FORCE:
        return sig_force(m, (int)a[1], (uint32_t)a[2], a[3], a[4]);
    case ES_SIG_RETURN:
        return sig_return(m, a[1], a[2], a[3] != 0);
    case ES_SIG_KILL:
        es_hs_kill_self(m, a[1] >= 1 && a[1] <= 64 ? (int)a[1] : 11);
        return 0;
    default:
        return -ENOSYS;
    }
}
