/* cmd_run.c - `entrysim run [OPTIONS] PROGRAM [ARGS...]`: a static Linux
 * program on the simulated CPU with the host's stdin/stdout/stderr, under
 * the modeled guest kernel (or --direct). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cmd_run.h"
#include "gdbstub.h"
#include "help.h"
#include "host.h"
#include "kernel.h"
#include "kernel_opts.h"
#include "launch.h"
#include "machine.h"
#include "mitigations.h"
#include "opts.h"
#include "phases.h"
#include "progress.h"
#include "run_traces.h"
#include "timing.h"
#include "vm.h"

extern char **environ;

/* Exit statuses (also in the --help text). */
enum {
    EX_USAGE = ES_EX_USAGE,
    EX_ERROR = ES_EX_ERROR,
    EX_OOM = 137,      /* 128 + SIGKILL, what Linux's OOM killer leaves */
    EX_TIMEOUT = 124,  /* like timeout(1) */
    EX_INSNS = 125,
    EX_LIMIT = 2,      /* the guest went past --max-tasks: the run refused it */
};

typedef struct options {
    bool stats, rw, deterministic, null_observer, kernel_stats;
    bool direct, progress;
    es_kernel_opts k; /* --convention --patches --mitigations --cpu --uarch */
    uint64_t max_insns;
    double timeout;
    uint64_t mem_cap_mb;
    int max_tasks;
    const char *root;
    bool timing, speculate;
    const char *timing_json;
    const char *gdb;
    es_run_traces tr; /* --pipetrace*, --trace-json */
} options;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* --kernel-stats: instructions that begin at CPL 0 */
typedef struct kernel_count {
    uint64_t insns;
} kernel_count;

static void count_kernel(void *ctx, es_machine *m, const es_insn *d, uint64_t rip)
{
    (void)d;
    (void)rip;
    if (m->cpl == 0)
        ((kernel_count *)ctx)->insns++;
}

static void print_stats(es_machine *m, double secs, const kernel_count *kc)
{
    double mips = secs > 0 ? (double)m->icount / secs / 1e6 : 0;
    uint64_t calls = m->host ? es_host_syscall_count(m) : 0;
    fprintf(stderr,
            "entrysim: stats: %llu instructions retired, %llu decodes (cache misses), "
            "%.3f s wall, %.1f MIPS, %llu syscalls\n",
            (unsigned long long)m->icount, (unsigned long long)m->decodes, secs, mips,
            (unsigned long long)calls);
    if (m->has_kernel) {
        char name[64];
        es_patches_name(es_kernel_patches(m), name, sizeof name);
        fprintf(stderr, "entrysim: stats: guest kernel %s, %.0f syscalls per host second",
                name, secs > 0 ? (double)calls / secs : 0.0);
        if (kc)
            fprintf(stderr, ", %llu instructions at CPL 0 (%.1f%%)",
                    (unsigned long long)kc->insns,
                    m->icount ? 100.0 * (double)kc->insns / (double)m->icount : 0.0);
        fputc('\n', stderr);
    }
}

/* A #PF on a page its VMA allows, not present: demand paging ran out of
 * the memory cap (vm.c could not get a frame). */
static bool fault_is_oom(es_machine *m)
{
    /* a file page past EOF is allowed by its VMA too, but is SIGBUS */
    if (m->fault.vector != ES_VEC_PF || (m->fault.error & ES_PFEC_P) || m->fault.bus)
        return false;
    int prot = es_vm_prot_at(m, m->fault.addr);
    if (prot <= 0)
        return false;
    if (m->fault.error & ES_PFEC_I)
        return (prot & ES_PROT_X) != 0;
    if (m->fault.error & ES_PFEC_W)
        return (prot & ES_PROT_W) != 0;
    return true;
}

/* Runs a loaded machine to the end and turns the outcome into an exit
 * status, reporting on stderr. */
static void null_retire(void *ctx, es_machine *m, const es_insn *d, uint64_t rip)
{
    (void)ctx;
    (void)m;
    (void)d;
    (void)rip;
}

/* The run stopped on a fault while the process's pages had used the whole
 * cap: with a guest kernel the #PF went through the IDT to the kernel's
 * handler (ES_HC_SIGNAL), which knows nothing of the host's cap. */
static bool cap_exhausted(es_machine *m)
{
    return m->has_kernel && m->signal == 11 && (m->frames_used + 1) * 4096ull > m->mem_cap;
}

/* --progress: the status line, drawn from es_run's batches (es_hooks). */
static void run_progress(es_machine *m, void *ctx)
{
    es_progress *p = ctx;
    if (!es_progress_due(p))
        return;
    double secs = es_progress_elapsed(p);
    char line[160], t[32];
    snprintf(line, sizeof line, "entrysim: %llu instructions, %.1f MIPS, %s",
             (unsigned long long)m->icount, secs > 0 ? (double)m->icount / secs / 1e6 : 0.0,
             es_progress_hms(secs, t, sizeof t));
    es_progress_show(p, line);
}

/* Runs the machine (unless --gdb ran it to its end already); the seconds
 * it took.  With --progress on a terminal, the status line is up while it
 * runs and gone before anything else is printed. */
static double run_timed(es_machine *m, const options *o)
{
    es_progress p;
    es_progress_init(&p, stderr);
    if (o->progress && p.on) {
        m->hooks.progress = run_progress;
        m->hooks.progress_ctx = &p;
    }
    double t0 = now();
    if (m->stop == ES_STOP_NONE)
        es_run(m);
    double secs = now() - t0;
    m->hooks.progress = NULL;
    es_progress_clear(&p);
    return secs;
}

static int finish(es_machine *m, const options *o)
{
    if (o->null_observer) {
        es_observer ob = {.retire = null_retire, .blocks = true};
        es_observe(m, &ob);
    }
    kernel_count kc = {0};
    if (o->stats && o->kernel_stats && m->has_kernel) {
        es_observer ob = {.ctx = &kc, .before = count_kernel, .blocks = true};
        es_observe(m, &ob);
    }
    double secs = run_timed(m, o);
    fflush(stdout);
    int status;
    switch (m->stop) {
    case ES_STOP_EXIT:
        status = m->exit_status & 0xff;
        break;
    case ES_STOP_FAULT:
        if (fault_is_oom(m) || cap_exhausted(m)) {
            fprintf(stderr,
                    "entrysim: out of guest memory (--mem-cap %llu MiB) at rip=0x%llx touching "
                    "0x%llx\n",
                    (unsigned long long)o->mem_cap_mb, (unsigned long long)m->fault.rip,
                    (unsigned long long)m->fault.addr);
            status = EX_OOM;
        } else {
            fprintf(stderr, "entrysim: %s\n", m->message);
            status = 128 + (m->signal ? m->signal : 11);
        }
        break;
    case ES_STOP_INSNS:
        fprintf(stderr, "entrysim: stopped after %llu instructions (--max-insns) at rip=0x%llx\n",
                (unsigned long long)m->icount, (unsigned long long)m->rip);
        status = EX_INSNS;
        break;
    case ES_STOP_TIME:
        fprintf(stderr, "entrysim: stopped after %.1f s (--timeout) at rip=0x%llx: %s\n", secs,
                (unsigned long long)m->rip, m->message);
        status = EX_TIMEOUT;
        break;
    case ES_STOP_LIMIT:
        fprintf(stderr, "entrysim: %s\n", m->message);
        status = EX_LIMIT;
        break;
    case ES_STOP_HLT:
        fprintf(stderr, "entrysim: the guest halted (HLT) at rip=0x%llx\n",
                (unsigned long long)m->rip);
        status = EX_ERROR;
        break;
    default:
        fprintf(stderr, "entrysim: %s\n", m->message[0] ? m->message : "simulator error");
        status = EX_ERROR;
        break;
    }
    if (o->stats)
        print_stats(m, secs, o->kernel_stats && m->has_kernel ? &kc : NULL);
    return status;
}

enum {
    O_KERNEL, O_DIRECT, O_KSTATS, O_TIMING, O_SPEC, O_TJSON, O_GDB, O_STATS, O_NULLOBS, O_RW, O_DET,
    O_MAXINSNS, O_MAXTASKS, O_MEMCAP, O_TIMEOUT, O_ROOT, O_PTRACE, O_PTFROM, O_PTSYS, O_PTINSNS, O_TRJSON,
    O_PROGRESS, O_HELP,
};

static const es_opt run_opts[] = {
    ES_KERNEL_OPT_ROWS(O_KERNEL),
    ES_KOPT_KERNEL(O_KERNEL),
    {"--timing", NULL, O_TIMING,
     "run the cycle model (--uarch) and report cycles, IPC and each system call's cycles by "
     "phase on stderr at the end (docs/TIMING.md)"},
    {"--timing-json", "FILE", O_TJSON, "the same report as JSON in FILE (implies --timing)"},
    {"--speculate", NULL, O_SPEC,
     "after a conditional branch the cycle model mispredicts, run the predicted (wrong) path "
     "until the branch resolves, then squash it: registers and memory come back, the caches "
     "keep what it loaded; RDTSC reads the model's clock (implies --timing)"},
    {"--pipetrace", "FILE", O_PTRACE,
     "a Kanata log of the cycle model's pipeline stages per instruction (Konata: File > Open; "
     "implies --timing)"},
    {"--pipetrace-from", "SYM|ADDR", O_PTFROM,
     "start it at a guest kernel symbol (SYM+OFF) or 0xADDR"},
    {"--pipetrace-syscall", "NR|NAME[:N]", O_PTSYS,
     "start it at the entry of the Nth (default first) system call with that number or name "
     "(e.g. getpid, getpid:2)"},
    {"--pipetrace-insns", "N", O_PTINSNS, "instructions in it (default 2000)"},
    {"--trace-json", "FILE", O_TRJSON,
     "each system call and its phases as slices on a cycle timeline, with IPC, in Chrome "
     "Trace Event JSON (Perfetto: ui.perfetto.dev > Open trace file; implies --timing)"},
    {"--gdb", "[HOST]:PORT", O_GDB,
     "wait for gdb (target remote HOST:PORT) before the first instruction and let it control "
     "the run"},
    {"--direct", NULL, O_DIRECT,
     "no guest kernel: system calls go straight to host services and faults end the run in "
     "the simulator"},
    {"--stats", NULL, O_STATS,
     "print instructions retired, decodes, wall time, MIPS and system calls to stderr at the "
     "end"},
    {"--kernel-stats", NULL, O_KSTATS,
     "with --stats, also count instructions run at CPL 0 (the guest kernel's share; attaches "
     "an observer, so slower)"},
    {"--progress", NULL, O_PROGRESS,
     "while the program runs, show instructions executed and the rate on stderr, when "
     "stderr is a terminal (nothing in a pipe or file)"},
    {"--null-observer", NULL, O_NULLOBS,
     "attach an observer that does nothing (measures what the observer path costs; "
     "bench/mips.sh uses it)"},
    {"--max-insns", "N", O_MAXINSNS, "stop after N instructions"},
    {"--timeout", "S", O_TIMEOUT, "stop after S seconds of wall-clock time"},
    {"--mem-cap", "MB", O_MEMCAP, "guest memory allowed (default 1024 MiB)"},
    {"--max-tasks", "N", O_MAXTASKS,
     "processes alive at once (default 64): a fork past it ends the run (exit 2)"},
    {"--root", "DIR", O_ROOT, "the directory the guest sees as / (default: .)"},
    {"--rw", NULL, O_RW, "allow the guest to write under the root"},
    {"--deterministic", NULL, O_DET, "fixed time, random bytes and time-stamp counter"},
    ES_OPT_HELP_ROWS(O_HELP),
};

const es_cmd es_cmd_run = {
    .name = "run",
    .synopsis = "run [OPTIONS] PROGRAM [ARGS...]",
    .about = "Options come before PROGRAM; `--` ends them.\n",
    .opts = run_opts,
    .nopts = sizeof run_opts / sizeof run_opts[0],
    .footer = "\n"
              "Exit status:\n"
              "  0-255   the guest's own exit status\n"
              "  128+N   the guest died of signal N (an unhandled fault: SIGSEGV 139,\n"
              "          SIGILL 132, SIGFPE 136, SIGBUS 135, SIGTRAP 133)\n"
              "  137     out of guest memory (--mem-cap)\n"
              "  124     --timeout reached\n"
              "  125     --max-insns reached\n"
              "  126     PROGRAM is not a loadable static ELF executable\n"
              "  127     PROGRAM not found\n"
              "  2       bad usage; the guest went past --max-tasks (a fork bomb)\n"
              "  1       simulator error (also a guest kernel panic)\n",
    .run = es_run_cmd,
};

/* --pipetrace and friends, --trace-json: 0, or the usage error's status. */
static int trace_option(es_opts *p, int id, options *o)
{
    const char *val = p->val;
    switch (id) {
    case O_PTRACE:
        o->timing = true;
        o->tr.pipetrace = val;
        return 0;
    case O_PTFROM:
        o->tr.from = val;
        return 0;
    case O_PTSYS:
        o->tr.sys = val;
        return 0;
    case O_PTINSNS:
        if (!es_opt_u64(val, 1, UINT64_MAX, &o->tr.insns))
            return es_opts_fail(p, "--pipetrace-insns needs a positive number, not '%s'", val);
        return 0;
    case O_TRJSON:
        o->timing = true;
        o->tr.json = val;
        return 0;
    }
    return 0;
}

/* One option of the table but the kernel's: 0, or the usage error's status. */
static int run_option(es_opts *p, int id, options *o)
{
    const char *val = p->val;
    struct stat st;
    switch (id) {
    case O_DIRECT:
        o->direct = true;
        return 0;
    case O_KSTATS:
        o->kernel_stats = true;
        return 0;
    case O_TIMING:
        o->timing = true;
        return 0;
    case O_SPEC:
        o->timing = o->speculate = true;
        return 0;
    case O_STATS:
        o->stats = true;
        return 0;
    case O_PROGRESS:
        o->progress = true;
        return 0;
    case O_NULLOBS:
        o->null_observer = true;
        return 0;
    case O_RW:
        o->rw = true;
        return 0;
    case O_DET:
        o->deterministic = true;
        return 0;
    case O_TJSON:
        o->timing = true;
        o->timing_json = val;
        return 0;
    case O_GDB: {
        /* [HOST]:PORT; the port checked here so that a bad one is a usage
         * error (2), as es_gdb_listen words it */
        const char *colon = strrchr(val, ':');
        int port;
        if (!colon || !es_opt_int(colon + 1, 0, 65535, &port))
            return es_opts_fail(p, "--gdb %s: expected [HOST]:PORT, the port a number 0..65535",
                                val);
        o->gdb = val;
        return 0;
    }
    case O_MAXINSNS:
        if (!es_opt_u64(val, 1, UINT64_MAX, &o->max_insns))
            return es_opts_fail(p, "--max-insns needs a positive number, not '%s'", val);
        return 0;
    case O_MAXTASKS:
        if (!es_opt_int(val, 1, 1023, &o->max_tasks))
            return es_opts_fail(p, "--max-tasks needs a number 1..1023, not '%s'", val);
        return 0;
    case O_MEMCAP:
        if (!es_opt_u64(val, 1, 65536, &o->mem_cap_mb))
            return es_opts_fail(p, "--mem-cap needs a size in MiB (1..65536), not '%s'", val);
        return 0;
    case O_TIMEOUT:
        if (!es_opt_double(val, 0, true, 1e9, &o->timeout))
            return es_opts_fail(p, "--timeout needs a positive number of seconds, not '%s'",
                                val);
        return 0;
    case O_ROOT:
        if (stat(val, &st) != 0 || !S_ISDIR(st.st_mode))
            return es_opts_fail(p, "--root: '%s' is not a directory", val);
        o->root = val;
        return 0;
    }
    return trace_option(p, id, o);
}

/* What run_parse returns after --help (no exit status is this large). */
#define RUN_HELP 1000

/* The options up to PROGRAM: its index in argv, -(exit status), or
 * -RUN_HELP. */
static int run_parse(int argc, char **argv, options *o)
{
    es_opts p = es_opts_for(&es_cmd_run, argc, argv);
    char err[300];
    int id, rc = 0;
    while (!rc && (id = es_opts_next(&p)) != ES_OPT_DONE) {
        if (id == O_HELP) {
            es_cmd_help(stdout, &es_cmd_run);
            return -RUN_HELP;
        }
        if (id == ES_OPT_UNKNOWN)
            rc = es_opts_fail(&p, "unknown option %s", p.arg);
        else if (id == ES_OPT_NOVALUE)
            rc = es_opts_fail(&p, "option %s needs a value", p.name);
        else if (id == ES_OPT_EXTRA)
            rc = es_opts_fail(&p, "option %s takes no value", p.name);
        else if (id == O_KERNEL && es_kernel_opt(&o->k, p.name, p.val, err, sizeof err) < 0)
            rc = es_opts_fail(&p, "%s", err);
        else if (id != O_KERNEL)
            rc = run_option(&p, id, o);
    }
    if (rc)
        return -rc;
    if (p.i >= argc)
        return -es_opts_fail(&p, "%s", "run: no PROGRAM given");
    if (es_kernel_opts_check(&o->k, err, sizeof err) ||
        es_run_traces_check(&o->tr, err, sizeof err))
        return -es_opts_fail(&p, "%s", err);
    if (o->direct && (o->k.convention || o->k.patch_list || o->k.mitigation_list ||
                      o->k.kernel_dir))
        return -es_opts_fail(&p, "%s", "--direct runs without the guest kernel; --convention, "
                                       "--patches, --mitigations and --kernel choose that kernel");
    es_kernel_opts_note(&o->k, stderr);
    return p.i;
}

/* The report of --timing / --timing-json after the run; closes the traces. */
static int timing_report(es_machine *m, options *o, es_phases *ph, const char *prog,
                         int status)
{
    char kname[64] = "direct", mname[64];
    if (!o->direct)
        es_patches_name(es_kernel_patches(m), kname, sizeof kname);
    es_mitigations_name(o->direct ? 0 : o->k.mitigations, mname, sizeof mname);
    es_run_meta meta = {.program = prog, .uarch = o->k.uarch, .kernel = kname,
                        .mitigations = mname, .cpu = o->k.vendor ? "amd" : "intel",
                        .exit_status = status, .speculate = o->speculate};
    if (es_run_traces_close(&o->tr, &meta) && status == 0)
        status = EX_ERROR;
    es_phases_print(ph, m, &meta, stderr);
    if (o->timing_json && es_phases_write_json(ph, m, &meta, o->timing_json)) {
        fprintf(stderr, "entrysim: --timing-json: cannot write %s\n", o->timing_json);
        if (status == 0)
            status = EX_ERROR;
    }
    return status;
}

/* A standard fd the caller left closed stays closed for the guest (EBADF,
 * as natively): /dev/null takes its number here, before entrysim opens
 * anything, so none of entrysim's own files (the guest root's handle...)
 * lands on it and shows through as the guest's fd 0, 1 or 2.  Returns the
 * fd the guest gets for std fd i: i, or -1 when it was closed. */
static int std_fd(int i)
{
    struct stat st;
    if (fstat(i, &st) == 0 || errno != EBADF)
        return i;
    /* fds below i are open (they were, or were filled): this lands on i;
     * the stream stays open for the process's life, holding the number */
    FILE *f = fopen("/dev/null", "r+e");
    if (f && fileno(f) != i)
        fclose(f);
    return -1;
}

int es_run_cmd(int argc, char **argv)
{
    options o = {.mem_cap_mb = 1024, .root = ".", .k = es_kernel_opts_default()};
    int i = run_parse(argc, argv, &o);
    if (i == -RUN_HELP)
        return ES_EX_OK;
    if (i < 0)
        return -i;
    const char *prog = argv[i];
    int std[3];
    for (int k = 0; k < 3; k++)
        std[k] = std_fd(k);
    es_launch_cfg lc = {
        .program = prog, .argc = argc - i, .argv = argv + i, .envp = environ,
        .root = o.root, .rw = o.rw, .deterministic = o.deterministic,
        .mem_cap_mb = o.mem_cap_mb, .vendor = o.k.vendor, .direct = o.direct,
        .patches = o.k.patches, .kernel_dir = o.k.kernel_dir, .mitigations = o.k.mitigations,
        .max_insns = o.max_insns, .max_tasks = o.max_tasks,
        .timeout = o.timeout, .stdin_fd = std[0], .stdout_fd = std[1], .stderr_fd = std[2],
    };
    es_machine *m;
    char err[400];
    int lrc = es_launch(&lc, &m, err, sizeof err);
    if (lrc) {
        fprintf(stderr, "entrysim: %s\n", err);
        return lrc;
    }
    es_timing *t = NULL;
    es_phases *ph = NULL;
    if (o.timing) {
        char err[200];
        t = es_timing_new(o.k.uarch, err, sizeof err);
        if (t)
            es_timing_set_speculate(t, o.speculate);
        if (!t || es_timing_attach(t, m) || !(ph = es_phases_attach(m, t))) {
            fprintf(stderr, "entrysim: --timing: %s\n", t ? "cannot attach the cycle model" : err);
            es_timing_free(t);
            es_launch_free(m);
            return EX_ERROR;
        }
        es_phases_count_speculation(ph, o.speculate);        int trc = es_run_traces_open(&o.tr, m, t, ph, err, sizeof err);
        if (trc) {
            fprintf(stderr, "entrysim: %s\n", err);
            es_phases_free(ph);
            es_timing_free(t);
            es_launch_free(m);
            return trc == 2 ? EX_USAGE : EX_ERROR;
        }
    }
    if (o.gdb && es_gdb_serve(m, o.gdb)) {
        fprintf(stderr, "entrysim: %s\n", m->message);
        es_run_traces_close(&o.tr, NULL);
        es_phases_free(ph);
        es_timing_free(t);
        es_launch_free(m);
        return EX_ERROR;
    }
    int status = finish(m, &o);
    if (o.timing)
        status = timing_report(m, &o, ph, prog, status);
    es_phases_free(ph);
    es_timing_free(t);
    es_launch_free(m);
    return status;
}

