/* sandbox.h - the measuring child's seccomp filter (native/measure.c). */
#ifndef ENTRYSIM_NATIVE_SANDBOX_H
#define ENTRYSIM_NATIVE_SANDBOX_H

#ifdef __cplusplus
extern "C" {
#endif

/* From here on the calling process may only: write to `pipe_fd`, map
 * `memfd` read-write shared at a fixed address that must be free (the
 * on-demand pages), unmap, return from a signal handler and exit.  Any other
 * system call -- from any ABI, including int 0x80 and x32 numbers -- kills
 * the process with SIGSYS.  Returns 0, or -1 when the kernel refuses the
 * filter (the caller must then not run untrusted code). */
int es_native_sandbox(int pipe_fd, int memfd);

#ifdef __cplusplus
}
#endif
#endif
