/* help.h - help texts that name lists print them from the lists. */
#ifndef ENTRYSIM_CLI_HELP_H
#define ENTRYSIM_CLI_HELP_H

#include <stdio.h>

/* Writes text to f with these fields replaced:
 *   {conv}        v4.16|v4.17            {cpu}      intel|amd
 *   {uarchs}      the uarchs, ", "        {uarch}    the default uarch
 *   {mitigations} pti, retpoline, ...    {mitdefault} the default set
 *   {patches}     the series' ids (12 hex digits each, space-separated)
 *   {entries}     syscall64|int80|...    (exposure's entry paths)
 * A line that comes out longer than 80 columns is broken before its last
 * " [" that fits, and goes on indented by 16 columns (synopsis lines). */
void es_help_print(FILE *f, const char *text);

#endif
