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
