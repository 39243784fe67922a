/* loader.h - Linux process set-up: load a static ELF (ELF64 x86-64,
 * ELF32 i386, ELF32 x32; ET_EXEC or static-pie ET_DYN) into a machine and
 * build the System V initial stack (argv, envp, auxv).
 */
#ifndef ENTRYSIM_LOADER_H
#define ENTRYSIM_LOADER_H

#include "machine.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct es_image {
    int abi;          /* enum es_abi of the program */
    uint64_t entry;   /* entry point (after relocation for static-pie) */
    uint64_t load_bias;
    uint64_t phdr, phnum, phent; /* program headers as mapped in the guest */
    uint64_t brk_start;          /* first page after the highest segment */
    uint64_t stack_top;
} es_image;

/* Validates and loads the ELF file at `path` (host path, already resolved by
 * the caller) into m, mapping its PT_LOAD segments with their permissions.
 * On failure returns -1 and writes a one-line reason to m->message (never
 * crashes on malformed or truncated input). */
int es_load_elf(es_machine *m, const char *path, es_image *img);

/* Same, from a buffer (used by tests and fuzzers). */
int es_load_elf_mem(es_machine *m, const uint8_t *data, size_t size, es_image *img);

/* The checks of es_load_elf_mem that need no mapping (headers, segments,
 * placement), so execve can refuse a program before its point of no
 * return: 0 with the program's abi and the page-aligned span [lo, hi) its
 * segments will take; -ENOEXEC with m->message, or -ENOMEM (host memory). */
int es_elf_check(es_machine *m, const uint8_t *data, size_t size, int *abi, uint64_t *lo,
                 uint64_t *hi);

/* The first half of es_start_process: maps the stack if need be and builds
 * it (strings, AT_EXECFN = execfn, or argv[0] when NULL), *sp its final
 * value.  0, or -1 with m->message.  Registers are not touched. */
int es_build_stack(es_machine *m, const es_image *img, int argc, char *const argv[],
                   char *const envp[], const char *execfn, uint64_t *sp);
/* The second: the registers, segments and mode of a fresh process at the
 * entry point of img with RSP = sp, CPL 3 (start_thread). */
void es_start_thread(es_machine *m, const es_image *img, uint64_t sp);

/* Builds the initial stack (argc, argv, envp, auxv with AT_PHDR, AT_PHNUM,
 * AT_PHENT, AT_PAGESZ, AT_ENTRY, AT_BASE, AT_RANDOM, AT_HWCAP, AT_HWCAP2,
 * AT_CLKTCK, AT_PLATFORM, AT_SECURE, AT_UID/EUID/GID/EGID, AT_EXECFN,
 * AT_SYSINFO_EHDR absent) and sets the registers and mode so the first
 * es_run starts the program at its entry point with CPL 3.
 * Returns 0 or -1 with m->message. */
int es_start_process(es_machine *m, const es_image *img, int argc, char *const argv[],
                     char *const envp[]);

#ifdef __cplusplus
}
#endif
#endif
