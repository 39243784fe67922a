/* main.c - the entrysim command line: run a static Linux program on the
 * simulated CPU with the host's stdin/stdout/stderr, or the built-in demo. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "demo.h"
#include "cmd_debug.h"
#include "exposure.h"
#include "gdbstub.h"
#include "host.h"
#include "kernel.h"
#include "launch.h"
#include "loader.h"
#include "machine.h"
#include "matrix.h"
#include "mitigations.h"
#include "measure.h"
#include "phases.h"
#include "timing.h"
#include "vm.h"

extern char **environ;

/* Exit statuses (also in the --help text). */
enum {
    EX_USAGE = 2,
    EX_ERROR = 1,
    EX_OOM = 137,      /* 128 + SIGKILL, what Linux's OOM killer leaves */
    EX_TIMEOUT = 124,  /* like timeout(1) */
    EX_INSNS = 125,
    EX_NOEXEC = 126,   /* like a shell: found but cannot be executed */
    EX_NOTFOUND = 127, /* like a shell: command not found */
};

static const char usage_text[] =
    "usage: entrysim run [OPTIONS] PROGRAM [ARGS...]\n"
    "       entrysim [demo]\n"
    "       entrysim exposure --syscall NAME|--all [--entry syscall64|int80|sysenter32|\n"
    "                syscall32|x32|vsyscall] [--convention v4.16|v4.17] [--patches LIST]\n"
    "                [--cpu intel|amd] [--json]\n"
    "       entrysim explain NAME [--convention v4.16|v4.17] [--patches LIST]\n"
    "                [--syntax intel|att]\n"
    "       entrysim throughput [--uarch U] [--stats] HEX... | --file BLOCKS\n"
    "       entrysim measure-native --file BLOCKS [--reps N] [--json]  (x86-64 host)\n"
    "       entrysim bench --matrix FILE [OPTIONS]   (bench/README.md)\n"
    "       entrysim debug [OPTIONS] PROGRAM [ARGS...]   (the step-through debugger)\n"
    "       entrysim --help | --version\n"
    "\n"
    "Runs a static Linux ELF program (x86-64, i386 or x32; ET_EXEC or static-pie)\n"
    "on the simulated CPU, under a modeled Linux kernel whose entry code, syscall\n"
    "dispatch and syscall stubs run as guest code at CPL 0 (system calls enter it\n"
    "through SYSCALL or INT 0x80 as on hardware); --direct skips it.  The guest\n"
    "uses this terminal's stdin, stdout and stderr.  `entrysim` alone, or\n"
    "`entrysim demo`, runs a small built-in program under v4.16 and v4.17 and shows\n"
    "which user values reach the kernel's C code under each; `exposure` measures\n"
    "that for any syscall and entry path, `explain` disassembles a syscall's stubs\n"
    "(docs/EXPOSURE.md).\n"
    "\n"
    "Options (before PROGRAM; `--` ends them):\n"
    "  --convention v4.16|v4.17\n"
    "                    the guest kernel's syscall convention: Linux 4.16 (before\n"
    "                    the pt_regs series) or 4.17 (after it; the default)\n"
    "  --patches LIST    v4.16 plus the listed commits of the series, each named by\n"
    "                    a unique prefix of at least 7 hex digits of its id:\n"
    "                    dfe64506c01e fa697140f9a2 ebeb8c82ffaf 6dc936f175cc\n"
    "                    (e.g. --patches dfe6450,fa69714; '' = v4.16)\n"
    "  --mitigations LIST\n"
    "                    guest-kernel mitigations on top of the default (nospec):\n"
    "                    pti, retpoline, ibrs, nospec; no-NAME removes one, none\n"
    "                    clears them, all sets all (e.g. --mitigations pti,retpoline)\n"
    "  --timing          run the cycle model (--uarch) and report cycles, IPC and\n"
    "                    each system call's cycles by phase on stderr at the end\n"
    "  --timing-json FILE\n"
    "                    the same report as JSON in FILE (implies --timing)\n"
    "  --uarch NAME      the cycle model's microarchitecture: znver4 (default) or\n"
    "                    skylake\n"
    "  --gdb [HOST]:PORT wait for gdb (target remote HOST:PORT) before the first\n"
    "                    instruction and let it control the run\n"
    "  --direct          no guest kernel: system calls go straight to host services\n"
    "                    and faults end the run in the simulator\n"
    "  --stats           print instructions retired, decodes, wall time, MIPS and\n"
    "                    system calls to stderr at the end\n"
    "  --kernel-stats    with --stats, also count instructions run at CPL 0 (the\n"
    "                    guest kernel's share; attaches an observer, so slower)\n"
    "  --null-observer   attach an observer that does nothing (measures what the\n"
    "                    observer path costs; bench/mips.sh uses it)\n"
    "  --max-insns N     stop after N instructions\n"
    "  --timeout S       stop after S seconds of wall-clock time\n"
    "  --mem-cap MB      guest memory allowed (default 1024 MiB)\n"
    "  --root DIR        the directory the guest sees as / (default: .)\n"
    "  --rw              allow the guest to write under the root\n"
    "  --deterministic   fixed time, random bytes and time-stamp counter\n"
    "  --cpu intel|amd   CPU vendor the guest sees (default amd)\n"
    "\n"
    "Exit status:\n"
    "  0-255   the guest's own exit status\n"
    "  128+N   the guest died of signal N (an unhandled fault: SIGSEGV 139,\n"
    "          SIGILL 132, SIGFPE 136, SIGBUS 135, SIGTRAP 133)\n"
    "  137     out of guest memory (--mem-cap)\n"
    "  124     --timeout reached\n"
    "  125     --max-insns reached\n"
    "  126     PROGRAM is not a loadable static ELF executable\n"
    "  127     PROGRAM not found\n"
    "  2       bad usage\n"
    "  1       simulator error (also a guest kernel panic)\n";

typedef struct options {
    bool stats, rw, deterministic, null_observer, kernel_stats;
    bool direct;
    es_kernel_opts k; /* --convention --patches --mitigations --cpu --uarch */
    uint64_t max_insns;
    double timeout;
    uint64_t mem_cap_mb;
    const char *root;
    bool timing;
    const char *timing_json;
    const char *gdb;
} options;

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "entrysim: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'entrysim --help'.\n");
    return EX_USAGE;
}

static bool parse_u64(const char *s, uint64_t *out)
{
    if (!s || !*s || *s == '-')
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || *end)
        return false;
    *out = v;
    return true;
}

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
    if (m->fault.vector != ES_VEC_PF || (m->fault.error & ES_PFEC_P))
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

static int finish(es_machine *m, const options *o)
{
    if (o->null_observer) {
        es_observer ob = {.retire = null_retire};
        es_observe(m, &ob);
    }
    kernel_count kc = {0};
    if (o->stats && o->kernel_stats && m->has_kernel) {
        es_observer ob = {.ctx = &kc, .before = count_kernel};
        es_observe(m, &ob);
    }
    double t0 = now();
    /* --gdb may have run the guest to its end already */
    if (m->stop == ES_STOP_NONE)
        es_run(m);
    double secs = now() - t0;
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
        fprintf(stderr, "entrysim: stopped after %.1f s (--timeout) at rip=0x%llx\n", secs,
                (unsigned long long)m->rip);
        status = EX_TIMEOUT;
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

static int cmd_run(int argc, char **argv, options *o)
{
    int i = 0;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (a[0] != '-' || a[1] == 0)
            break;
        /* --opt=value or --opt value */
        char name[32];
        const char *val = NULL;
        const char *eq = strchr(a, '=');
        if (eq && (size_t)(eq - a) < sizeof name) {
            memcpy(name, a, (size_t)(eq - a));
            name[eq - a] = 0;
            val = eq + 1;
        } else {
            snprintf(name, sizeof name, "%s", a);
        }
        bool takes = !strcmp(name, "--max-insns") || !strcmp(name, "--mem-cap") ||
                     !strcmp(name, "--timeout") || !strcmp(name, "--root") ||
                     !strcmp(name, "--cpu") || !strcmp(name, "--convention") ||
                     !strcmp(name, "--patches") || !strcmp(name, "--mitigations") ||
                     !strcmp(name, "--timing-json") || !strcmp(name, "--uarch") ||
                     !strcmp(name, "--gdb");
        if (takes && !val) {
            if (i + 1 >= argc)
                return usage_error("option %s needs a value", name);
            val = argv[++i];
        } else if (!takes && val) {
            return usage_error("option %s takes no value", name);
        }
        char err[300];
        int kopt = es_kernel_opt(&o->k, name, val, err, sizeof err);
        if (kopt < 0)
            return usage_error("%s", err);
        if (kopt > 0) {
            /* chose the guest kernel, the CPU or the cycle model */
        } else if (!strcmp(name, "--direct")) {
            o->direct = true;
        } else if (!strcmp(name, "--kernel-stats")) {
            o->kernel_stats = true;
        } else if (!strcmp(name, "--timing")) {
            o->timing = true;
        } else if (!strcmp(name, "--timing-json")) {
            o->timing = true;
            o->timing_json = val;
        } else if (!strcmp(name, "--gdb")) {
            o->gdb = val;
        } else if (!strcmp(name, "--stats")) {
            o->stats = true;
        } else if (!strcmp(name, "--null-observer")) {
            o->null_observer = true;
        } else if (!strcmp(name, "--rw")) {
            o->rw = true;
        } else if (!strcmp(name, "--deterministic")) {
            o->deterministic = true;
        } else if (!strcmp(name, "--max-insns")) {
            if (!parse_u64(val, &o->max_insns) || !o->max_insns)
                return usage_error("--max-insns needs a positive number, not '%s'", val);
        } else if (!strcmp(name, "--mem-cap")) {
            if (!parse_u64(val, &o->mem_cap_mb) || o->mem_cap_mb < 1 || o->mem_cap_mb > 65536)
                return usage_error("--mem-cap needs a size in MiB (1..65536), not '%s'", val);
        } else if (!strcmp(name, "--timeout")) {
            char *end;
            double t = strtod(val, &end);
            if (!*val || *end || !(t > 0) || t > 1e9)
                return usage_error("--timeout needs a positive number of seconds, not '%s'", val);
            o->timeout = t;
        } else if (!strcmp(name, "--root")) {
            struct stat st;
            if (stat(val, &st) != 0 || !S_ISDIR(st.st_mode))
                return usage_error("--root: '%s' is not a directory", val);
            o->root = val;
        } else {
            return usage_error("unknown option %s", a);
        }
    }
    if (i >= argc)
        return usage_error("%s", "run: no PROGRAM given");
    char cerr[300];
    if (es_kernel_opts_check(&o->k, cerr, sizeof cerr))
        return usage_error("%s", cerr);
    if (o->direct && (o->k.convention || o->k.patch_list || o->k.mitigation_list))
        return usage_error("%s", "--direct runs without the guest kernel; --convention, "
                                 "--patches and --mitigations choose that kernel");

    const char *prog = argv[i];
    es_launch_cfg lc = {
        .program = prog, .argc = argc - i, .argv = argv + i, .envp = environ,
        .root = o->root, .rw = o->rw, .deterministic = o->deterministic,
        .mem_cap_mb = o->mem_cap_mb, .vendor = o->k.vendor, .direct = o->direct,
        .patches = o->k.patches, .mitigations = o->k.mitigations, .max_insns = o->max_insns,
        .timeout = o->timeout, .stdin_fd = 0, .stdout_fd = 1, .stderr_fd = 2,
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
    if (o->timing) {
        char err[200];
        t = es_timing_new(o->k.uarch, err, sizeof err);
        if (!t || es_timing_attach(t, m) || !(ph = es_phases_attach(m, t))) {
            fprintf(stderr, "entrysim: --timing: %s\n", t ? "cannot attach the cycle model" : err);
            es_timing_free(t);
            es_launch_free(m);
            return EX_ERROR;
        }
    }
    if (o->gdb && es_gdb_serve(m, o->gdb)) {
        fprintf(stderr, "entrysim: %s\n", m->message);
        es_phases_free(ph);
        es_timing_free(t);
        es_launch_free(m);
        return EX_ERROR;
    }
    int status = finish(m, o);
    if (o->timing) {
        char kname[64] = "direct", mname[64];
        if (!o->direct)
            es_patches_name(es_kernel_patches(m), kname, sizeof kname);
        es_mitigations_name(o->direct ? 0 : o->k.mitigations, mname, sizeof mname);
        es_run_meta meta = {.program = prog, .uarch = o->k.uarch, .kernel = kname,
                            .mitigations = mname, .cpu = o->k.vendor ? "amd" : "intel",
                            .exit_status = status};
        es_phases_print(ph, m, &meta, stderr);
        if (o->timing_json && es_phases_write_json(ph, m, &meta, o->timing_json)) {
            fprintf(stderr, "entrysim: --timing-json: cannot write %s\n", o->timing_json);
            if (status == 0)
                status = EX_ERROR;
        }
    }
    es_phases_free(ph);
    es_timing_free(t);
    es_launch_free(m);
    return status;
}

static int cmd_demo(options *o)
{
    /* the bundled program under v4.16 and v4.17, with the exposure
     * comparison (sim/demo.c) */
    return es_demo_compare(stdout, o->k.vendor);
}

int main(int argc, char **argv)
{
    options o = {.mem_cap_mb = 1024, .root = ".", .k = es_kernel_opts_default()};
    if (argc < 2 || !strcmp(argv[1], "demo")) {
        if (argc > 2)
            return usage_error("%s", "demo takes no arguments");
        return cmd_demo(&o);
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        fputs(usage_text, stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version")) {
        printf("entrysim 0.1.0\n");
        return 0;
    }
    if (!strcmp(cmd, "exposure"))
        return es_exposure_cmd(argc - 2, argv + 2);
    if (!strcmp(cmd, "explain"))
        return es_explain_cmd(argc - 2, argv + 2);
    if (!strcmp(cmd, "measure-native"))
        return es_native_cmd(argc - 2, argv + 2);
    if (!strcmp(cmd, "throughput"))
        return es_throughput_cmd(argc - 2, argv + 2);
    if (!strcmp(cmd, "bench"))
        return es_bench_cmd(argc - 2, argv + 2, "/proc/self/exe");
    if (!strcmp(cmd, "debug"))
        return es_debug_cmd(argc - 2, argv + 2);
    if (!strcmp(cmd, "run"))
        return cmd_run(argc - 2, argv + 2, &o);
    return usage_error("unknown command '%s' (try 'entrysim run PROGRAM')", cmd);
}
