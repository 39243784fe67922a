/* host.h - host services: Linux system-call semantics for the guest
 * process, keyed by each ABI's own syscall numbers.
 *
 * In --direct mode SYSCALL / INT 0x80 / SYSENTER reach es_host_syscall
 * straight from the instruction handler; later the modeled kernel's syscall
 * bodies call es_host_call through a hypercall.  File access is confined to
 * the guest root: a path outside it gets -EACCES or -ENOENT.
 */
#ifndef ENTRYSIM_HOST_H
#define ENTRYSIM_HOST_H

#include "machine.h"

#ifdef __cplusplus
extern "C" {
#endif


typedef struct es_host_config {
    const char *root;   /* guest root directory (default ".") */
    bool rw;            /* writes allowed under root */
    bool deterministic; /* fixed time, getrandom and RDTSC */
    int stdin_fd, stdout_fd, stderr_fd; /* host fds behind guest 0, 1, 2 */
    const char *exe;    /* the program's path as the guest sees it (readlink of
                           /proc/self/exe); NULL = unknown */
    const char *name;   /* the program as executed (any path): comm, the task's
                           name, is its last component, as Linux's execve sets
                           it (TASK_COMM_LEN - 1 bytes); NULL = from exe */
    int max_tasks;      /* tasks alive at once (--max-tasks); 0 = 64 */
} es_host_config;

/* Creates the host-services state of m (file table, brk, signal records...).
 * Returns 0 or -1 (message in m->message). */
int es_host_init(es_machine *m, const es_host_config *cfg);
void es_host_free(es_machine *m);

/* Performs syscall `nr` of `abi` with arguments args[0..5]; returns the
 * value the kernel would return (-errno on error).  On exit/exit_group it
 * sets m->exit_status and m->stop = ES_STOP_EXIT and returns 0. */
int64_t es_host_call(es_machine *m, int abi, uint64_t nr, const uint64_t args[6]);

/* --direct entry: reads number and arguments from the registers of `abi`
 * (x86-64: rax; rdi rsi rdx r10 r8 r9.  i386: eax; ebx ecx edx esi edi ebp),
 * performs the call and writes the result to rax (eax for i386, zero
 * extended).  Returns ES_OK, or ES_STOP after exit. */
int es_host_syscall(es_machine *m, int abi);

/* Number of syscalls served so far (for --stats). */
uint64_t es_host_syscall_count(const es_machine *m);

/* ---- reverse execution: the history of the process table (hist.c) ----
 *
 * A debugger that undoes steps (debugger/dbg_undo.c) turns the history on
 * once (0, or -1 without a task table or host memory), then brackets each
 * step that may enter the simulator's services (a VMCALL) with
 * es_host_step_begin and es_host_step_end.  The end gives a record of what
 * the step changed in the task table, the tasks, the processes' undoable
 * state and which task and address space are current, or NULL when it
 * changed nothing; -1 when host memory ran out (the history cannot go
 * back past this step: the caller forgets it).  es_host_rec_undo puts the
 * state back (the newest record first, after every later one) and frees
 * the record; es_host_rec_drop frees a record that leaves the history
 * (the oldest first) and whatever only it could bring back.  Records not
 * given back are dropped before the machine is freed.  What is and is not
 * undone: sim/host/hist.c. */
typedef struct es_host_rec es_host_rec;
int es_host_history(es_machine *m);
void es_host_step_begin(es_machine *m);
int es_host_step_end(es_machine *m, es_host_rec **out);
void es_host_rec_undo(es_machine *m, es_host_rec *r);
void es_host_rec_drop(es_machine *m, es_host_rec *r);

/* Current program break (for tests and the loader). */
uint64_t es_host_brk(const es_machine *m);
void es_host_set_brk(es_machine *m, uint64_t start);

#ifdef __cplusplus
}
#endif
#endif
