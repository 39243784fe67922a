/* help.h - help texts that name lists print them from the lists, and the
 * options part of every --help printed from the command's options table. */
#ifndef ENTRYSIM_CLI_HELP_H
#define ENTRYSIM_CLI_HELP_H

#include <stdio.h>

#include "opts.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Writes text to f with these fields replaced:
 *   {conv}        v4.16|v4.17            {cpu}      intel|amd
 *   {cpudefault}  the default vendor     {syntax}   intel|att
 *   {uarchs}      the uarchs, ", "        {uarch}    the default uarch
 *   {mitigations} pti, retpoline, ...    {mitdefault} the default set
 *   {patches}     the series' ids (12 hex digits each, space-separated)
 *   {inert}       those of them that are no toggle (", "-separated)
 *   {entries}     syscall64|int80|...    (exposure's entry paths)
 * A line that comes out longer than 80 columns is broken before its last
 * " [" that fits, and goes on indented by 16 columns (synopsis lines). */
void es_help_print(FILE *f, const char *text);

/* text with its {fields} (above) replaced, into out (cut at n - 1 bytes);
 * returns the length written.  The man page and the shell completion
 * (gen_docs.c) read the tables through it too. */
size_t es_help_expand(const char *text, char *out, size_t n);

/* Whether row k of table t is shadowed by an earlier row of the same name
 * (es_opts_next returns the first row of a name): no help, man page or
 * completion shows it. */
bool es_help_shadowed(const es_opt *t, size_t k);

/* The options block of a --help: one entry per name the parser accepts
 * (a row shadowed by an earlier row of the same name is never returned by
 * es_opts_next, so it is not shown), "  --name ARG" then its help text
 * wrapped at 80 columns from column 22; rows without help join the row
 * before as other names ("  --help, -h"). */
void es_help_options(FILE *f, const es_opt *table, size_t n);

/* A command's whole --help: "usage: entrysim SYNOPSIS", about, "Options:"
 * and the options block, footer. */
void es_cmd_help(FILE *f, const es_cmd *c);

#ifdef __cplusplus
}
#endif
#endif
