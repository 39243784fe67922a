/* main.c - the entrysim command line: finds the subcommand in the one
 * table below and hands it the arguments after its name.  `entrysim
 * --help` and the unknown-command error print from the same table. */
#include <stdio.h>
#include <string.h>

#include "cmd_bench.h"
#include "cmd_debug.h"
#include "cmd_demo.h"
#include "cmd_explain.h"
#include "cmd_kernel.h"
#include "cmd_exposure.h"
#include "cmd_measure_native.h"
#include "cmd_run.h"
#include "cmd_throughput.h"
#include "help.h"
#include "opts.h"

typedef struct subcommand {
    const char *name;
    const char *synopsis; /* after "entrysim "; {fields} as in help.h */
    int (*run)(int argc, char **argv);
} subcommand;

static const subcommand commands[] = {
    {"run", "run [OPTIONS] PROGRAM [ARGS...]", es_run_cmd},
    {"demo", "[demo]", es_demo_cmd},
    {"exposure",
     "exposure --syscall NAME|--all [--entry {entries}] [--convention {conv}] "
     "[--patches LIST] [--cpu {cpu}] [--json]",
     es_exposure_cmd},
    {"explain", "explain NAME [--convention {conv}] [--patches LIST] [--syntax intel|att]",
     es_explain_cmd},
    {"throughput", "throughput [--uarch U] [--stats] HEX... | --file BLOCKS", es_throughput_cmd},
    {"measure-native", "measure-native --file BLOCKS [--reps N] [--json]  (x86-64 host)",
     es_native_cmd},
    {"bench", "bench --matrix FILE [OPTIONS]   (bench/README.md)", es_bench_cmd},
    {"debug", "debug [OPTIONS] PROGRAM [ARGS...]   (the step-through debugger)", es_debug_cmd},
    {"kernel", "kernel init|build DIR   (a guest kernel tree of your own; run --kernel DIR)",
     es_kernel_cmd},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static const char overview[] =
    "Runs a static Linux ELF program (x86-64, i386 or x32; ET_EXEC or static-pie)\n"
    "on the simulated CPU, under a modeled Linux kernel whose entry code, syscall\n"
    "dispatch and syscall stubs run as guest code at CPL 0 (system calls enter it\n"
    "through SYSCALL or INT 0x80 as on hardware); --direct skips it.  The guest\n"
    "uses this terminal's stdin, stdout and stderr.  `entrysim` alone, or\n"
    "`entrysim demo`, runs a small built-in program under v4.16 and v4.17 and shows\n"
    "which user values reach the kernel's C code under each; `exposure` measures\n"
    "that for any syscall and entry path, `explain` disassembles a syscall's stubs\n"
    "(docs/EXPOSURE.md).\n"
    "\n";

static void print_help(FILE *f)
{
    char line[400];
    for (size_t i = 0; i < NCOMMANDS; i++) {
        snprintf(line, sizeof line, "%s%s\n", i ? "       entrysim " : "usage: entrysim ",
                 commands[i].synopsis);
        es_help_print(f, line);
    }
    fputs("       entrysim --help | --version\n\n", f);
    fputs(overview, f);
    es_run_help(f);
}

static int unknown_command(const char *cmd)
{
    char names[256];
    size_t k = 0;
    for (size_t i = 0; i < NCOMMANDS && k < sizeof names; i++)
        k += (size_t)snprintf(names + k, sizeof names - k, "%s%s", i ? ", " : "",
                              commands[i].name);
    es_opts p = {.prefix = "entrysim: ", .trailer = "Try 'entrysim --help'.\n"};
    return es_opts_fail(&p, "unknown command '%s' (try 'entrysim run PROGRAM'; the commands: %s)",
                        cmd, names);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return es_demo_cmd(0, argv + 1);
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        print_help(stdout);
        return ES_EX_OK;
    }
    if (!strcmp(cmd, "--version")) {
        printf("entrysim 0.1.0\n");
        return ES_EX_OK;
    }
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strcmp(cmd, commands[i].name))
            return commands[i].run(argc - 2, argv + 2);
    return unknown_command(cmd);
}
