/* kernel.h - the guest kernel image (kernel_model/) inside a machine: which
 * variant of Linux 4.17's syscall series to run, loading its ELF image into
 * the high half of the address space, its symbol table, and the hand-over
 * from the process loader to the kernel's startup code (es_boot.h).
 *
 * The headers it includes declare the image's symbols (ksyms.h), memory
 * (kmem.h) and the patch toggles (patches.h), so users of the image need
 * only this one.
 *
 * Order of use (sim/boot/launch.c):
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

#include "kmem.h"    /* es_kernel_read, es_kernel_write */
#include "ksyms.h"   /* es_kernel_sym and the other symbol look-ups */
#include "machine.h"
#include "patches.h" /* ES_PATCH_*, ES_CONV_*, the patch lists */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct es_kernel_config {
    unsigned patches; /* bitmask of ES_PATCH_* */
} es_kernel_config;

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

/* Same from DIR/build/kernel-pNN.elf (NN = patches), a kernel tree built
 * by `entrysim kernel build DIR`; the same checks, the file's path in the
 * message. */
int es_kernel_load_dir(es_machine *m, const char *dir, unsigned patches);

/* Kernel images parsed once for a batch of machines that load them one
 * after another (`entrysim exposure --all` makes a machine per syscall):
 * each patch set's image has its headers checked and its symbol table
 * sorted the first time a machine loads it, and every later machine
 * shares that, read-only.  dir NULL: the embedded images; else the tree's
 * DIR/build/kernel-pNN.elf, each file read once.  The machines borrow the
 * images: free the set after the last of them is freed. */
typedef struct es_kimages es_kimages;
es_kimages *es_kimages_new(const char *dir);
void es_kimages_free(es_kimages *c);
/* es_kernel_load (es_kernel_load_dir with c's dir) through c: the same
 * image, checks and messages, the parsing only the first time.  c NULL:
 * es_kernel_load. */
int es_kernel_load_shared(es_machine *m, es_kimages *c, unsigned patches);

/* es_kernel_set_abi's result when the program's address space has no page
 * below 4 GiB for the vDSO: the program cannot be executed (Linux maps the
 * vDSO as part of the exec, arch_setup_additional_pages), unlike -1, a
 * fault of the kernel image or of the machine. */
#define ES_KERNEL_NO_ROOM (-2)

/* The program's ABI (enum es_abi) for es_boot_info.abi; for i386 it also
 * maps the 32-bit vDSO, so call it before es_start_process (which then
 * passes AT_SYSINFO).  Without this call es_kernel_boot infers i386 from a
 * 32-bit user CS and x86-64 otherwise, and i386 programs get no
 * AT_SYSINFO (they use int $0x80).  Returns 0, or -1 or ES_KERNEL_NO_ROOM
 * with m->message. */
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

/* User address of the 32-bit vDSO page (0 = none). */
uint64_t es_kernel_vdso32(const es_machine *m);

/* execve of an i386 program (sim/boot/exec.c): maps the 32-bit vDSO page
 * again at the address it has (es_boot_info.vdso32_base, which the kernel
 * keeps), after es_vm_exec_reset removed it.  0 (also when there is no
 * kernel or no vDSO), or -1 with m->message. */
int es_kernel_remap_vdso32(es_machine *m);

/* Frees the image bookkeeping (es_machine_free calls it). */
void es_kernel_free(es_machine *m);

/* Linux's vsyscall page (arch/x86/include/asm/vsyscall.h: VSYSCALL_ADDR). */
#define ES_VSYSCALL_ADDR 0xffffffffff600000ull

#ifdef __cplusplus
}
#endif
#endif
