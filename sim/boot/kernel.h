/* kernel.h - the guest kernel image (kernel_model/) inside a machine: which
 * variant of Linux 4.17's syscall series to run, loading its ELF image into
 * the high half of the address space, its symbol table, and the hand-over
 * from the process loader to the kernel's startup code (es_boot.h).
 *
 * Order of use (sim/main.c):
 *     es_load_elf(m, path, &img);        the user program
 *     es_kernel_load(m, patches);        the kernel image, supervisor pages
 *     es_kernel_set_abi(m, img.abi);     (i386: maps the vDSO for AT_SYSINFO; x32: the abi)
 *     es_start_process(m, &img, ...);    the user's initial registers/stack
 *     es_kernel_boot(m);                 CPU at startup_64, CPL 0
 *     es_run(m);                         the kernel IRETQs to the program
 */
#ifndef ENTRYSIM_KERNEL_H
#define ENTRYSIM_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "machine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The four x86 commits of the series as toggles (same values as es_boot.h,
 * which the freestanding kernel build uses). */
#ifndef ES_PATCH_DFE64506
#define ES_PATCH_DFE64506 1u /* dfe64506c01e: nr passed to do_syscall_64 in rdi */
#define ES_PATCH_FA697140 2u /* fa697140f9a2: pt_regs-based stubs for 64-bit syscalls */
#define ES_PATCH_EBEB8C82 4u /* ebeb8c82ffaf: pt_regs-based stubs for ia32 and x32 */
#define ES_PATCH_6DC936F 8u  /* 6dc936f175cc: clear dx, cx / si, dx, cx on entry */
#endif
#define ES_CONV_V416 0u
#define ES_CONV_V417 15u
#define ES_NPATCHES 4

typedef struct es_kernel_config {
    unsigned patches; /* bitmask of ES_PATCH_* */
} es_kernel_config;

/* Full commit id of patch bit i (0..3) and its one-line subject. */
const char *es_patch_id(int i);
const char *es_patch_subject(int i);

/* Parses a comma-separated list of commit-id prefixes (at least 7 hex
 * digits each, any case, each matching exactly one patch of the series;
 * whitespace around items is ignored; "" means none) into a bitmask.
 * Returns 0, or -1 with a one-line reason in err. */
int es_patches_parse(const char *list, unsigned *out, char *err, size_t errlen);

/* Comma-separated lists (--patches, --mitigations): the next item of
 * `list` at *pos (start with *pos = list), blanks around it trimmed, in
 * *item and *len; *pos moves past its comma.  Returns 1 for an item, 0 when
 * the list has no more (a blank list has none), -1 for an empty item in a
 * list with others (",a", "a,,b", "a,"). */
int es_list_next(const char *list, const char **pos, const char **item, size_t *len);

/* Same against an arbitrary id table (ids[i] names bit bits[i]; bits 0
 * marks a commit of the series that is not a toggle).  For tests of the
 * ambiguity rule, which the real ids never trigger. */
int es_patches_parse_ids(const char *list, const char *const ids[], const unsigned bits[],
                         size_t n, unsigned *out, char *err, size_t errlen);

/* Human-readable name of a patch set: "v4.16", "v4.17" or
 * "v4.16+dfe64506+6dc936f1". */
void es_patches_name(unsigned patches, char *buf, size_t n);

/* The embedded image built for `patches` (0..15); NULL/0 when the build had
 * none (kernel_model/ not built). */
const uint8_t *es_kernel_image(unsigned patches, size_t *size);

/* Loads the embedded kernel image for `patches` into m: validates the
 * ELF64, maps every PT_LOAD at its virtual address as supervisor pages of
 * the current address space (creating CR3 if there is none), writable only
 * for PF_W segments, NX for non-PF_X ones, .bss zeroed; reads .symtab;
 * maps the vsyscall page (symbol vsyscall_page) at 0xffffffffff600000,
 * user-readable, not executable (Linux's vsyscall=emulate).  The kernel's
 * frames do not count against the user's memory cap.
 * Returns 0, or -1 with the reason in m->message. */
int es_kernel_load(es_machine *m, unsigned patches);
/* Same from a caller's buffer (tests; malformed images are rejected with a
 * message, never a crash).  `patches` is what the image must say it was
 * built with (es_boot_info.patches); pass ~0u to accept any. */
int es_kernel_load_image(es_machine *m, const uint8_t *data, size_t size, unsigned patches);

/* The program's ABI (enum es_abi) for es_boot_info.abi; for i386 it also
 * maps the 32-bit vDSO, so call it before es_start_process (which then
 * passes AT_SYSINFO).  Without this call es_kernel_boot infers i386 from a
 * 32-bit user CS and x86-64 otherwise, and i386 programs get no
 * AT_SYSINFO (they use int $0x80).  Returns 0 or -1 with m->message. */
int es_kernel_set_abi(es_machine *m, int abi);

/* After es_start_process: writes the user's initial state into the
 * kernel's es_boot_info (through physical memory: the page is supervisor),
 * maps the 32-bit vDSO page for i386 programs, checks the image's magic and
 * patch set, then sets has_kernel and starts the CPU at startup_64 (CPL 0,
 * 64-bit mode, CS 0x10, SS 0x18, RFLAGS 0x2, RSP = boot_stack_top).
 * Returns 0 or -1 with m->message. */
int es_kernel_boot(es_machine *m);

/* Patch set of the loaded image (0 when none is loaded). */
unsigned es_kernel_patches(const es_machine *m);

/* Symbols of the loaded image.  es_kernel_sym returns 0 when absent. */
uint64_t es_kernel_sym(const es_machine *m, const char *name);
bool es_kernel_sym_size(const es_machine *m, const char *name, uint64_t *addr, uint64_t *size);
/* The symbol at or below addr within the image (sized symbols preferred
 * when several start at the same address) and the offset into it; NULL
 * when addr lies outside the image. */
const char *es_kernel_addr2sym(const es_machine *m, uint64_t addr, uint64_t *off);
/* Number of symbols, and the i-th in address order (for listings). */
size_t es_kernel_nsyms(const es_machine *m);
const char *es_kernel_sym_at(const es_machine *m, size_t i, uint64_t *addr, uint64_t *size);

/* Reads kernel memory (any mapping of the current address space, no
 * permission checks, no side effects).  Returns 0 or -1. */
int es_kernel_read(es_machine *m, uint64_t va, void *dst, size_t n);
/* Writes kernel memory the same way (tests and debuggers changing saved
 * registers, as ptrace would).  Decoded code on the pages is invalidated. */
int es_kernel_write(es_machine *m, uint64_t va, const void *src, size_t n);

/* User address of the 32-bit vDSO page (0 = none). */
uint64_t es_kernel_vdso32(const es_machine *m);

/* Frees the image bookkeeping (es_machine_free calls it). */
void es_kernel_free(es_machine *m);

/* Linux's vsyscall page (arch/x86/include/asm/vsyscall.h: VSYSCALL_ADDR). */
#define ES_VSYSCALL_ADDR 0xffffffffff600000ull

#ifdef __cplusplus
}
#endif
#endif
