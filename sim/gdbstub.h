/* gdbstub.h - a gdb remote-serial-protocol server over TCP (issue 5):
 * `entrysim run --gdb :1234 PROG` waits for gdb, which can then read and
 * write registers and memory, set breakpoints and single-step, in user and
 * guest-kernel mode. */
#ifndef ENTRYSIM_GDBSTUB_H
#define ENTRYSIM_GDBSTUB_H

#include "machine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Listens on `addr` ("[host]:port"), accepts one gdb connection and serves
 * it until the guest stops (m->stop set: the caller only reports) or gdb
 * detaches (m->stop left ES_STOP_NONE: the caller runs the rest).  A gdb
 * `kill` stops the run with ES_STOP_BREAK.  Returns 0, or -1 with a message
 * in m->message on socket errors. */
int es_gdb_serve(es_machine *m, const char *addr);

#ifdef __cplusplus
}
#endif
#endif
