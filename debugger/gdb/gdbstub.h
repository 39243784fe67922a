/* gdbstub.h - a gdb remote-serial-protocol server over TCP (issue 5):
 * `entrysim run --gdb :1234 PROG` waits for gdb, which can then read and
 * write registers and memory, set breakpoints and single-step, in user and
 * guest-kernel mode. */
#ifndef ENTRYSIM_GDBSTUB_H
#define ENTRYSIM_GDBSTUB_H

#include <stddef.h>

#include "machine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Listens on `addr` ("[host]:port"), prints "entrysim: gdb: listening on
 * HOST:PORT" on stderr (the actual port when 0 was asked for), runs the
 * guest kernel's boot up to the program's first user instruction, accepts
 * one gdb connection and serves it until the guest stops (m->stop set: the
 * caller only reports) or gdb detaches or hangs up (m->stop left
 * ES_STOP_NONE: the caller runs the rest).  A gdb `kill` stops the run with
 * ES_STOP_BREAK and "killed by gdb" in m->message.  Returns 0, or -1 with a
 * message in m->message on socket errors (bad address, port in use). */
int es_gdb_serve(es_machine *m, const char *addr);

/* The two halves of es_gdb_serve, for callers that need the port before
 * the stub blocks (tests connecting from another thread).
 *
 * es_gdb_listen opens a listening TCP socket for `addr`: "[HOST]:PORT",
 * HOST empty = 127.0.0.1 (a debugger port is not for the network), PORT 0 =
 * any free port.  Stores the bound port in *port and returns the socket,
 * or -1 with a one-line reason in err.
 *
 * es_gdb_serve_fd takes such a socket (and closes it), runs the machine
 * from wherever it stands to the program's first user-mode instruction
 * (the guest kernel's boot is not something gdb should see as the
 * process), accepts one connection and serves it with the outcome
 * described for es_gdb_serve.  A connection that drops counts as a detach.
 * It prints nothing. */
int es_gdb_listen(const char *addr, int *port, char *err, size_t errlen);
int es_gdb_serve_fd(es_machine *m, int listen_fd);

#ifdef __cplusplus
}
#endif
#endif
