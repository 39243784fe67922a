/* gdbstub.c - placeholder until the gdb remote stub lands (issue 5). */
#include <stdio.h>

#include "gdbstub.h"

int es_gdb_serve(es_machine *m, const char *addr)
{
    snprintf(m->message, sizeof m->message, "--gdb %s: the gdb stub is not built yet", addr);
    return -1;
}
