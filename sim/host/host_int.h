/* host_int.h - what the files of sim/host/ share: the host-services state,
 * the per-call context, guest-memory helpers, the confined path resolution
 * and the service functions of the generated table.
 *
 * Private to sim/host/ (and tests/test_host.cc, which pokes at a few
 * fields).  Every service returns the value the kernel would return:
 * >= 0 on success, -errno on failure.
 */
#ifndef ENTRYSIM_HOST_INT_H
#define ENTRYSIM_HOST_INT_H

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "host.h"
#include "machine.h"
#include "vm.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ES_HOST_MAX_FDS 1024 /* RLIMIT_NOFILE hard limit we allow */
#define ES_HOST_PATH_MAX 4096

typedef struct es_hfd {
    int host;     /* host fd, -1 = slot free */
    bool owned;   /* we opened it (closing the guest fd closes it) */
    bool cloexec; /* FD_CLOEXEC as the guest set it */
    /* The embedder's (the configured stdin/stdout/stderr and their dups):
     * not opened through the root, so possibly a file outside it. */
    bool foreign;
    /* Directory positions for 32-bit callers: Linux gives compat tasks
     * 32-bit d_off values (ext4's is_32bit_api()), the host gives us 64-bit
     * hashes, so such callers see small cookies: doff[k] is the host offset
     * of cookie k (doff[0] = 0, the start), dpos the current cookie. */
    uint64_t *doff;
    uint32_t ndoff, cdoff, dpos;
    uint64_t pipe_ino; /* inode of a pipe the guest's pipe() made (0 = not one) */
} es_hfd;

typedef struct es_ksigaction {
    uint64_t handler, flags, restorer, mask;
} es_ksigaction;

/* What a pending signal carries (siginfo_t): si_code, and for a fault its
 * address; otherwise the sender is this process. */
typedef struct es_hsiginfo {
    int code;
    bool fault;
    uint64_t addr;
    int pid; /* the sender (0: this process itself) */
} es_hsiginfo;

typedef struct es_rlim {
    uint64_t cur, max;
} es_rlim;

struct es_world; /* the tasks of the run (task.c) */

struct es_host {
    es_host_config cfg;
    char root[ES_HOST_PATH_MAX]; /* realpath of cfg->root, no trailing '/' */
    size_t rootlen;
    int rootfd;                  /* O_PATH|O_DIRECTORY of the root */
    bool use_openat2;            /* host kernel has openat2 RESOLVE_IN_ROOT */
    char exe[ES_HOST_PATH_MAX];  /* guest path of the program ("" = unknown) */
    char cwd[ES_HOST_PATH_MAX];  /* guest's current directory (guest path) */

    es_hfd fds[ES_HOST_MAX_FDS];
    /* One past the highest fd slot ever given a host fd (never lowered):
     * what scans every open fd on each step (sim/host/hist.c, once per
     * system call under the debugger) stop there instead of at 1024. */
    int fd_top;

    uint64_t brk_start, brk_cur; /* program break (brk_cur unaligned, as Linux) */
    uint64_t nsyscalls;

    es_ksigaction sigact[65];    /* [1..64] as the guest set them */
    uint64_t sigmask;
    uint64_t sigpending;         /* bit sig-1: generated, not yet delivered */
    uint64_t tsigpending;        /* ...sent to the running thread alone (tgkill:
                                    Linux's task->pending; thread.c swaps it) */
    es_hsiginfo siginfo[65];
    bool sig_frames;             /* the guest kernel delivers to handlers (ES_SIG_ENABLE) */
    uint64_t sig_flag_kva;       /* ...and wants its TIF_SIGPENDING word there */
    uint64_t suspend_mask;       /* rt_sigsuspend: the mask to restore after the handler */
    bool suspend_saved;
    int64_t itimer_at, itimer_every; /* ITIMER_REAL: expiry on the guest's monotonic
                                        clock (0 = disarmed), interval */
    uint64_t ss_sp, ss_size;     /* sigaltstack */
    uint32_t ss_flags;
    es_rlim rlim[16];
    uint32_t umask;
    uint64_t rng;                /* deterministic getrandom stream state */
    uint64_t tid_address, robust_head, robust_len;
    struct es_world *world;      /* shared by every process of the run (task.c) */
    int pid, ppid, pgid, sid;
    char comm[16];               /* prctl(PR_SET_NAME) */
    uint32_t uid, gid;
    uint64_t *ldt;               /* modify_ldt's entries (ldt.c), NULL = none */
    uint32_t ldt_n;              /* entries in use: the highest written + 1 */
};

/* The signals the running thread may take: its own and its process's. */
static inline uint64_t es_hs_pending(const struct es_host *h)
{
    return h->sigpending | h->tsigpending;
}

/* Takes sig off the pending sets: the thread's own first (Linux's
 * dequeue_signal looks at task->pending before shared_pending). */
static inline void es_hs_unpend(struct es_host *h, int sig)
{
    uint64_t b = 1ull << (sig - 1);
    if (h->tsigpending & b)
        h->tsigpending &= ~b;
    else
        h->sigpending &= ~b;
}

/* What a call knows about itself. */
typedef struct es_scall {
    int abi;      /* enum es_abi of the caller */
    bool compat;  /* 32-bit struct layouts: i386 call or x32 row 512+ */
    bool x32;     /* 64-bit table call with the x32 bit */
    bool ptr32;   /* user pointers are 32-bit (i386, x32) */
    uint64_t nr;  /* number in its table (x32 bit removed) */
} es_scall;

/* ---- the services: one per call (or per calls that share all their
 * logic), named in tables/host_services.tbl, reached through systab.c ---- */

/* Defines (or declares) service es_sys_<fn>: the call's context c and its
 * six arguments a[0..5] (zero-extended 32-bit registers for i386). */
#define ES_SYS(fn) int64_t es_sys_##fn(es_machine *m, const es_scall *c, const uint64_t *a)
#define ES_HOST_SERVICE(fn) ES_SYS(fn);
#include "es_host_services.h"
#undef ES_HOST_SERVICE

/* The guest's AT_* and O_* values (x86 guests and the x86-64 host share
 * the O_* values; these name the guest's side where it matters). */
#define G_AT_FDCWD (-100)
#define G_AT_SYMLINK_NOFOLLOW 0x100
#define G_AT_REMOVEDIR 0x200
#define G_AT_SYMLINK_FOLLOW 0x400
#define G_AT_NO_AUTOMOUNT 0x800
#define G_AT_EMPTY_PATH 0x1000
#define G_AT_STATX_SYNC_TYPE 0x6000
#define G_O_CLOEXEC 02000000
#define NSEC 1000000000ll
/* Linux's kernel-internal restart codes (include/linux/errno.h): only the
 * guest kernel's signal delivery sees them */
#define ERESTARTSYS 512
#define ERESTARTNOHAND 514
#define ES_HS_CHUNK (1u << 20) /* host bounce buffer for read/write/getdents */

static inline struct es_host *es_h(es_machine *m)
{
    return m->host;
}

/* ---- guest memory (host.c) ---- */

/* Highest user address + 1 for the caller's address space. */
uint64_t es_hs_task_size(const es_scall *c);
/* Copies from/to guest user memory; -EFAULT for a bad or non-user range. */
int es_hs_get(es_machine *m, const es_scall *c, void *dst, uint64_t va, size_t n);
int es_hs_put(es_machine *m, const es_scall *c, uint64_t va, const void *src, size_t n);
/* Copies a NUL-terminated string of at most cap-1 bytes: its length, or
 * -EFAULT / -ENAMETOOLONG. */
int64_t es_hs_get_str(es_machine *m, const es_scall *c, uint64_t va, char *dst, size_t cap);
/* Little-endian field stores into a host buffer. */
static inline void es_st16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline void es_st32(uint8_t *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static inline void es_st64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static inline uint32_t es_ld32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
static inline uint64_t es_ld64(const uint8_t *p) { return es_ld32(p) | (uint64_t)es_ld32(p + 4) << 32; }

/* Advances the deterministic clock by ns (saturating: a guest may sleep
 * for centuries, the clock stays representable). */
void es_hs_slept(struct es_host *h, int64_t ns);
/* The deterministic clock's time slept so far (one clock for all tasks). */
int64_t es_hs_sleep_ns(const struct es_host *h);

/* Stops the guest as a fatal signal's default action would. */
void es_hs_kill_self(es_machine *m, int sig);
/* The guest sends itself sig (kill(getpid(), sig)): the default action
 * when it kills, else nothing (handlers are not run).  0 or -EINVAL. */
int64_t es_hs_signal_self(es_machine *m, int sig);
/* signal.c: the same with si_code (SI_TKILL for tkill/tgkill); the default
 * actions of pending unblocked signals (after a mask change); and the
 * ES_HC_SIGOP services (the es_hooks.signal_op hook). */
int64_t es_hs_signal_self_code(es_machine *m, int sig, int code);
/* Makes sig pending in process h (any of the run's; sender: its pid, 0 =
 * the kernel): ignored ones are discarded, a fatal default action ends
 * that process at once, a caught one waits for its exit to user mode. */
int64_t es_hs_signal_proc(es_machine *m, struct es_host *h, int sig, int code, int sender);
/* fork: a copy of process state src for a child (fds duplicated, nothing
 * pending, no timer); NULL when out of memory or fds. */
struct es_host *es_host_clone(es_machine *m, const struct es_host *src);
void es_hs_signal_dispatch(es_machine *m);
int64_t es_hs_sigop(es_machine *m, const uint64_t a[5]);
/* write()/pwrite() on a host fd with the host's SIGPIPE held back: a
 * broken pipe signals the guest (es_hs_signal_self), never the simulator.
 * Returns the host result with errno set as write does. */
ssize_t es_hs_host_write(es_machine *m, int hfd, const void *buf, size_t n, int64_t pos);
/* The same around any other host call that may write to a pipe: hold
 * stores the old mask in *old (a sigset_t), release restores it and, when
 * `broken` (the call failed with EPIPE), signals the guest. */
void es_hs_pipe_hold(void *old);
void es_hs_pipe_release(es_machine *m, const void *old, bool broken);

/* ---- tls.c: struct user_desc (set_thread_area, modify_ldt) ---- */
/* A user_desc (16 bytes) -> the raw descriptor fill_ldt makes
 * (arch/x86/include/asm/desc.h), 0 for LDT_empty's "clear" request. */
uint64_t es_hs_user_desc_to_raw(const uint8_t *u);
/* A raw descriptor -> user_desc (entry number idx). */
void es_hs_raw_to_user_desc(uint64_t d, uint32_t idx, uint8_t *u);

/* ---- ldt.c: the process's LDT ---- */
/* Makes the machine's LDT the running process's (after m->host changed). */
void es_hs_ldt_load(es_machine *m);
/* fork: dst gets a copy of src's LDT; 0 or -ENOMEM. */
int es_hs_ldt_clone(struct es_host *dst, const struct es_host *src);
/* Frees h's LDT (exec, the process's end). */
void es_hs_ldt_free(struct es_host *h);

/* ---- fs.c: the fd table ---- */
int es_hs_fs_init(es_machine *m);
void es_hs_fs_free(es_machine *m);
/* The same for any process's state (fork's copy, an ended task's). */
void es_hs_fs_release(struct es_host *h);
/* Closes guest fd (open) of process h. */
void es_hs_fd_close(struct es_host *h, int fd);
/* fork: dst's fd table and root become host dups of src's; 0 or -EMFILE. */
int es_hs_fs_clone(struct es_host *dst, const struct es_host *src);
/* Whether host fd hfd is one of h's ends of a pipe the guest made. */
bool es_hs_fd_is_guest_pipe(const struct es_host *h, int hfd);
/* Host fd behind guest fd, or -1. */
int es_hs_hostfd(es_machine *m, int64_t gfd);
/* Installs host fd hfd (ours now) as the lowest free guest fd: the guest
 * fd, or -EMFILE (hfd closed). */
int es_hs_fd_install(struct es_host *h, int hfd, bool cloexec);
/* The fd-table slot of guest fd, or NULL when it is not open. */
es_hfd *es_hs_fd(struct es_host *h, int64_t fd);

/* ---- wait.c: blocking waits bounded by --timeout (m->deadline_ns) ---- */
/* Stops the run: ES_STOP_TIME, "<what> would outlast --timeout". */
void es_hs_time_up(es_machine *m, const char *what);
/* Stops the run: ES_STOP_ERROR, "<what> would block forever...". */
void es_hs_deadlock(es_machine *m, const char *what);
/* ppoll for at most want_ns (< 0 = forever) and never past the deadline:
 * poll's result or -errno; -EINTR with the run stopped (es_hs_time_up
 * naming `what`) when the deadline ended the wait. */
struct pollfd;
int es_hs_poll(es_machine *m, struct pollfd *p, unsigned long n, int64_t want_ns,
               const char *what);
/* The same without the tasks: always the host's own wait.  With other
 * tasks es_hs_poll waits as a task instead: -ES_ERESCHED (task.h). */
int es_hs_poll_host(es_machine *m, struct pollfd *p, unsigned long n, int64_t want_ns,
                    const char *what);
/* Sleeps ns (the deterministic clock advances instead); a sleep past the
 * deadline stops the run at once.  0, or -EINTR with the run stopped. */
int64_t es_hs_sleep_plain(es_machine *m, int64_t ns);
/* timer.c: the same, cut short (-EINTR) when the interval timer's signal
 * becomes deliverable to a handler during it; ITIMER_REAL expiry
 * (SIGALRM); the tick hook (es_hooks.tick); a wait only a signal ends
 * (pause, sigsuspend): -EINTR when a caught signal is pending, else it
 * sleeps to the timer, else the run stops as a deadlock naming `what`. */
int64_t es_hs_sleep(es_machine *m, int64_t ns);
void es_hs_timer_check(es_machine *m);
/* The same for any process of the run (its SIGALRM goes to it). */
void es_hs_timer_check_proc(es_machine *m, struct es_host *h);
unsigned es_hs_tick(es_machine *m);
int64_t es_hs_wait_signal(es_machine *m, const char *what);
/* sysinfo.c: the guest's CLOCK_MONOTONIC in ns (instructions + sleeps with
 * --deterministic) */
int64_t es_hs_clock_mono(es_machine *m);
int64_t es_hs_clock_real(es_machine *m); /* CLOCK_REALTIME, ns */
/* Before a blocking read (write when wr) of hfd: waits until it is ready
 * or the deadline stops the run; a pipe the guest's pipe() made
 * (guest_pipe) that cannot become ready stops it at once.  0 = go on with
 * the call, -EINTR = the run stopped, -ES_ERESCHED = the task waits (other
 * tasks run meanwhile). */
int es_hs_wait_fd(es_machine *m, int hfd, bool guest_pipe, bool wr);

/* ---- path.c: paths confined to the guest root ---- */
/* Opens the guest root (cfg.root) and sets the cwd to it; 0, or -1 with
 * m->message set. */
int es_hs_root_open(es_machine *m);
/* Guest path of a host fd opened through the root (-ENOENT otherwise). */
int es_hs_gpath_of(struct es_host *h, int hfd, char *out, size_t cap);
/* Guest path of guest directory fd: -EBADF, -ENOTDIR or as es_hs_gpath_of. */
int es_hs_dirfd_gpath(struct es_host *h, int64_t fd, char *out, size_t cap);
/* Guest path argument (dirfd, upath) -> absolute guest path gp[cap];
 * an empty path is -ENOENT unless empty_ok. */
int es_hs_get_gp(es_machine *m, const es_scall *c, int64_t dirfd, uint64_t upath, char *gp,
                 size_t cap, bool empty_ok);
/* Opens absolute guest path gp with host open flags (O_NOFOLLOW is added;
 * a symlink in last position is followed inside the root when `follow`).
 * A host fd or -errno. */
int es_hs_open_gp(struct es_host *h, const char *gp, int flags, mode_t mode, bool follow);
/* Splits absolute guest path gp into (O_PATH fd of its directory, last
 * component name[256]); see path.c. */
int es_hs_split(struct es_host *h, const char *gp, bool create, int *dirfd, char *name,
                size_t *last_off);
/* Whether absolute guest path gp is /proc/self/exe (the program: h->exe). */
bool es_hs_is_proc_self_exe(const char *gp);
/* Opens guest (dirfd, path) as a host O_PATH fd confined to the root
 * (`empty_path`: "" names dirfd itself, as AT_EMPTY_PATH).  fd or -errno. */
int es_hs_open_at(es_machine *m, const es_scall *c, int64_t dirfd, uint64_t upath, bool follow,
                  bool empty_path);
/* For calls that change the file system (-EROFS without --rw): the host
 * O_PATH fd of the directory holding guest (dirfd, path) and the last
 * component (name[256]; "." when the path names a directory as a whole). */
int es_hs_name_at(es_machine *m, const es_scall *c, int64_t dirfd, uint64_t upath, bool create,
                  int *dfd, char *name);

/* ---- fsdir.c ---- */
/* lseek on a directory a 32-bit caller reads: cookies, not host offsets. */
int64_t es_hs_dir_seek(es_hfd *f, int64_t off, int whence);

/* ---- compat.c: struct layouts per ABI ---- */

/* A field of a guest struct: byte offset and width (0: no such field). */
typedef struct es_field {
    uint8_t off, width;
} es_field;
/* Stores v[i], little endian and cut to its width, at field f[i] of out
 * for i < n. */
void es_hs_put_fields(uint8_t *out, const es_field *f, const uint64_t *v, int n);

/* Host struct stat -> the guest's layout; returns bytes written to out or
 * -EOVERFLOW.  kind: 0 = x86-64 struct stat (144), 1 = i386 stat64 (96),
 * 2 = i386 struct stat (compat_stat, 64), 3 = i386 __old_kernel_stat (32). */
struct stat;
int es_hs_conv_stat(const struct stat *st, int kind, uint8_t *out);
/* struct timespec / timeval in the caller's layout (16 or 8 bytes). */
int es_hs_get_timespec(es_machine *m, const es_scall *c, uint64_t va, int64_t *sec, int64_t *nsec);
int es_hs_put_timespec(es_machine *m, const es_scall *c, uint64_t va, int64_t sec, int64_t nsec);
int es_hs_put_timeval(es_machine *m, const es_scall *c, uint64_t va, int64_t sec, int64_t usec);
/* A timeout: a timespec (or timeval, same shape) whose fraction must be in
 * [0, frac_lim) and seconds >= 0, else -EINVAL. */
int es_hs_get_timeout(es_machine *m, const es_scall *c, uint64_t va, int64_t frac_lim,
                      int64_t *sec, int64_t *frac);
/* Reads an iovec array (16-byte or compat 8-byte entries); at most 1024. */
typedef struct es_iov {
    uint64_t base, len;
} es_iov;
int es_hs_get_iovec(es_machine *m, const es_scall *c, uint64_t va, uint64_t cnt, es_iov *out);
/* Kernel sigaction in the 64-bit (32 bytes) or compat (20 bytes) layout. */
int es_hs_get_sigaction(es_machine *m, const es_scall *c, uint64_t va, es_ksigaction *sa);
int es_hs_put_sigaction(es_machine *m, const es_scall *c, uint64_t va, const es_ksigaction *sa);

#ifdef __cplusplus
}
#endif
#endif
