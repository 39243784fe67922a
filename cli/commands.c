/* commands.c - see commands.h.  `entrysim --help`, the unknown-command
 * error and the dispatch all read the one list below; each command's
 * synopsis, --help and options table are its es_cmd (cmd_*.c). */
#include "commands.h"

#include <stdio.h>
#include <string.h>

#include "cmd_bench.h"
#include "cmd_debug.h"
#include "cmd_demo.h"
#include "cmd_explain.h"
#include "cmd_kernel.h"
#include "cmd_lab.h"
#include "cmd_exposure.h"
#include "cmd_measure_native.h"
#include "cmd_run.h"
#include "cmd_throughput.h"
#include "gen_docs.h"
#include "help.h"

static const es_cmd *const commands[] = {
    &es_cmd_run,        &es_cmd_demo,           &es_cmd_exposure, &es_cmd_explain,
    &es_cmd_throughput, &es_cmd_measure_native, &es_cmd_bench,    &es_cmd_debug,
    &es_cmd_kernel,     &es_cmd_lab,
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

const es_cmd *const *es_commands(size_t *n)
{
    *n = NCOMMANDS;
    return commands;
}

const char es_overview[] =
    "Runs a static Linux ELF program (x86-64, i386 or x32; ET_EXEC or static-pie)\n"
    "on the simulated CPU, under a modeled Linux kernel whose entry code, syscall\n"
    "dispatch and syscall stubs run as guest code at CPL 0 (system calls enter it\n"
    "through SYSCALL or INT 0x80 as on hardware); --direct skips it.  The guest\n"
    "uses this terminal's stdin, stdout and stderr.  `entrysim` alone, or\n"
    "`entrysim demo`, runs a small built-in program under v4.16 and v4.17 and shows\n"
    "which user values reach the kernel's C code under each; `exposure` measures\n"
    "that for any syscall and entry path, `explain` disassembles a syscall's stubs\n"
    "(docs/EXPOSURE.md).  `entrysim COMMAND --help` lists a command's options.\n";

static void print_help(FILE *f)
{
    char line[400];
    for (size_t i = 0; i < NCOMMANDS; i++) {
        snprintf(line, sizeof line, "%s%s\n", i ? "       entrysim " : "usage: entrysim ",
                 commands[i]->synopsis);
        es_help_print(f, line);
    }
    fputs("       entrysim --help | --version\n\n", f);
    fputs(es_overview, f);
    fputs("\nOptions of run:\n", f);
    es_help_options(f, es_cmd_run.opts, es_cmd_run.nopts);
    es_help_print(f, es_cmd_run.footer);
}

static int unknown_command(const char *cmd)
{
    char names[256];
    size_t k = 0;
    for (size_t i = 0; i < NCOMMANDS && k < sizeof names; i++)
        k += (size_t)snprintf(names + k, sizeof names - k, "%s%s", i ? ", " : "",
                              commands[i]->name);
    es_opts p = {.prefix = "entrysim: ", .trailer = "Try 'entrysim --help'.\n"};
    return es_opts_fail(&p, "unknown command '%s' (try 'entrysim run PROGRAM'; the commands: %s)",
                        cmd, names);
}

int es_main(int argc, char **argv)
{
    if (argc < 2)
        return es_demo_cmd(0, argv + 1);
    const char *cmd = argv[1];
    /* hidden: what the build turns into entrysim.1 and the completion */
    if (!strcmp(cmd, "help") && argc > 2)
        return es_gen_docs_cmd(argc - 2, argv + 2);
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        print_help(stdout);
        return ES_EX_OK;
    }
    if (!strcmp(cmd, "--version")) {
        printf("entrysim 0.1.0\n");
        return ES_EX_OK;
    }
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strcmp(cmd, commands[i]->name))
            return commands[i]->run(argc - 2, argv + 2);
    return unknown_command(cmd);
}
