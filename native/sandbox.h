/* sandbox.h - what confines the measuring child of `measure-native` (issue 12
 * item 1): a seccomp filter that lets it do only what the harness needs, and
 * raw system calls for the child after the filter is in place (the C
 * library's wrappers may be intercepted, e.g. by a sanitizer runtime whose
 * _exit runs a leak scan that clones and ptraces: refused, and fatal). */
#ifndef ENTRYSIM_NATIVE_SANDBOX_H
#define ENTRYSIM_NATIVE_SANDBOX_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stddef.h>
#include <stdint.h>

/* Restricts the calling process, for good, to: write(pipe_fd, ...),
 * mmap(any address, 4096, PROT_READ|PROT_WRITE, MAP_SHARED|
 * MAP_FIXED_NOREPLACE, memfd, 0), rt_sigreturn, exit and exit_group, in the
 * x86-64 ABI only.  Any other system call (or the i386/x32 ABIs) kills the
 * process with SIGSYS.  Returns 0, or -1 with errno when the kernel has no
 * seccomp filters (then nothing is restricted: the caller must not go on). */
int es_native_sandbox_enter(int pipe_fd, int memfd);

/* Raw system calls (no C library wrapper), usable inside the sandbox.
 * es_native_raw_exit does not return, but is deliberately not declared
 * noreturn: ASan calls __asan_handle_no_return before a noreturn call, and
 * that asks sigaltstack(), which the sandbox refuses. */
long es_native_raw_write(int fd, const void *buf, size_t n);
void *es_native_raw_mmap(uint64_t addr, size_t len, int prot, int flags, int fd);
void es_native_raw_exit(int status);

#ifdef __cplusplus
}
#endif

#endif
