/* vm.h - the guest process's address space: virtual memory areas (VMAs)
 * over the page tables of mem.h, demand-paged like Linux's mm.
 *
 * Pages of a VMA are materialised on first touch (es_vm_fault, called by the
 * memory slow path before it would raise #PF), so a large malloc arena costs
 * nothing until used.  All addresses are user linear addresses.
 */
#ifndef ENTRYSIM_VM_H
#define ENTRYSIM_VM_H

#include "machine.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ES_PROT_R 1
#define ES_PROT_W 2
#define ES_PROT_X 4

/* Lowest and highest user addresses handed out by es_vm_find_free. */
#define ES_VM_MMAP_MIN 0x10000ull

/* Maps [va, va+len) (page aligned) with prot, replacing whatever was there;
 * pages read as zero until written.  Returns 0 or -errno (-ENOMEM). */
int es_vm_map(es_machine *m, uint64_t va, uint64_t len, int prot);
/* A file behind mappings (es_vm_map_file): a page not present is read
 * from it when first touched, so MADV_DONTNEED on a private file mapping
 * shows the file again, and a page wholly past the end of the file is
 * SIGBUS, as Linux's filemap_fault.  The layer that opens files
 * (sim/host/mm.c) makes one and sets key, read_page and release; vm.c
 * counts the VMAs that use it (refs, next) and releases it when none is
 * left, or when es_vm_free ends them all. */
typedef struct es_vm_file {
    uint64_t key[2]; /* the file's identity (device, inode) for es_vm_file_find */
    /* Reads the page at file offset off into page (4096 bytes, zeroed, so
     * what lies past EOF stays 0): 0, or -1 when it lies wholly past EOF
     * or cannot be read. */
    int (*read_page)(struct es_vm_file *f, uint64_t off, uint8_t *page);
    void (*release)(struct es_vm_file *f);
    uint64_t refs;           /* vm.c's: the VMAs using it */
    struct es_vm_file *next; /* vm.c's: the list of files in use */
} es_vm_file;

/* es_vm_map for a file mapping: [va, va+len) shows f from file offset off
 * (f NULL: anonymous memory, as es_vm_map).  f is kept while a VMA uses
 * it; one no VMA took (the call failed) is released at once. */
int es_vm_map_file(es_machine *m, uint64_t va, uint64_t len, int prot, es_vm_file *f,
                   uint64_t off);
/* The file mapped at va and va's page's offset in it (*off), or NULL for
 * anonymous memory and unmapped addresses. */
es_vm_file *es_vm_file_at(es_machine *m, uint64_t va, uint64_t *off);
/* A file some mapping uses whose key is (k0, k1), or NULL. */
es_vm_file *es_vm_file_find(es_machine *m, uint64_t k0, uint64_t k1);
/* Unmaps [va, va+len): frees frames, clears PTEs, flushes the TLB. 0/-errno */
int es_vm_unmap(es_machine *m, uint64_t va, uint64_t len);
/* Linux's default vm.max_map_count: mappings past it fail with ENOMEM. */
#define ES_VM_MAX_MAP_COUNT 65530

/* Frees the pages present in [va, va+len) but keeps the mapping, which
 * reads as zero again, or as its file for a file mapping (MADV_DONTNEED).
 * 0 or -ENOMEM (part unmapped). */
int es_vm_zap(es_machine *m, uint64_t va, uint64_t len);
/* Moves the mapping at [old, old+oldlen) to [to, to+newlen) (fresh range,
 * not overlapping), its pages with it: mremap's move.  0 or -errno. */
int es_vm_move(es_machine *m, uint64_t old, uint64_t oldlen, uint64_t to, uint64_t newlen);
/* Changes protection of mapped pages in [va, va+len).  0 or -ENOMEM when part
 * of the range is unmapped (as Linux). */
int es_vm_protect(es_machine *m, uint64_t va, uint64_t len, int prot);
/* Finds a free page-aligned range of len bytes, top-down below the mmap base
 * (or at hint if free).  Returns its address or 0 if none. */
uint64_t es_vm_find_free(es_machine *m, uint64_t len, uint64_t hint);
/* Protection of the VMA covering va, or -1 if unmapped. */
int es_vm_prot_at(es_machine *m, uint64_t va);
/* True when every byte of [va, va+len) is mapped with at least `prot`. */
bool es_vm_range_ok(es_machine *m, uint64_t va, uint64_t len, int prot);
/* Demand fault: materialises the page holding va if a VMA permits `access`
 * (enum es_access).  Returns 0 when the access may be retried, -1 when it
 * is a genuine fault, ES_DEMAND_SIGBUS when va is in a file mapping's page
 * wholly past the end of its file. */
int es_vm_fault(es_machine *m, uint64_t va, int access);
/* Sets the address-space limits: user addresses below `top` (47-bit for
 * 64-bit processes, 4 GiB for 32-bit ones); mmap grows down from mmap_base. */
void es_vm_set_layout(es_machine *m, uint64_t top, uint64_t mmap_base);
/* Frees all VMA bookkeeping (called by es_machine_free). */
void es_vm_free(es_machine *m);

/* ---- address spaces as objects (processes: fork, exec, exit) ---- */

/* One process's address space: the PGD (physical address, the value the
 * kernel loads into CR3 without PCID bits; under PTI the kernel PGD of an
 * 8 KiB-aligned pair) and its VMAs. */
typedef struct es_mm {
    uint64_t pgd;
    struct es_vmas *vmas;
} es_mm;
/* The current one: m->cr3 without PCID bits (and, under PTI, without the
 * user-PGD bit 12), m->vmas (made, empty, if there was none yet). */
es_mm es_vm_current(es_machine *m);
/* fork(): a copy of the current address space in *out (not switched to).
 * A new PGD (a PTI pair when m->hooks.pti_fork is set) whose kernel half
 * (PML4 256..511) is the current one's entries, so kernel mappings stay
 * shared; the user half copied eagerly: each leaf PTE holding a frame (P or
 * SW_FRAME) gets a fresh frame with the same bytes and PTE bits, except the
 * shared zero frame, which stays shared (never writable).  VMAs copied,
 * their files held.  Frames count against m->mem_cap: when they run out,
 * everything made is freed again.  0 or -ENOMEM. */
int es_vm_fork(es_machine *m, es_mm *out);
/* Makes mm the VM layer's current one (demand faults and mmap work on
 * it).  Neither writes CR3 nor flushes the TLB: the guest kernel loads CR3
 * right after.  es_vm_switch_cr3 (no guest kernel: --direct, tests) also
 * sets m->cr3 = mm.pgd and flushes the TLB and the fetch shortcut. */
void es_vm_switch(es_machine *m, es_mm mm);
void es_vm_switch_cr3(es_machine *m, es_mm mm);
/* Frees an address space that is NOT current: its user frames (not the
 * zero frame), user-half page tables, PGD (or pair), VMAs and file holds
 * (a VMA list with a keeper goes to its keeper instead).  False, and
 * nothing freed, when mm is the current one (by CR3's PGD or by m->vmas):
 * the caller still owns it. */
bool es_vm_release(es_machine *m, es_mm mm);
/* execve's point of no return on the current address space: every user
 * mapping goes (frames, user-half page tables, VMAs); the PGD and the
 * kernel half stay; the layout is back to the defaults.  0 or -errno. */
int es_vm_exec_reset(es_machine *m);

/* ---- VMA lists that outlive their address space ----
 *
 * Reverse execution (the debugger's history of the process table,
 * sim/host/hist.c) may bring back an address space that a step ended: a
 * list with a keeper is handed to keeper->dead rather than freed when
 * es_vm_release or es_vm_exec_reset ends it.  Its frames and page tables
 * are freed all the same (the debugger's undo log puts back the frame
 * allocator and guest memory); the keeper frees the list later with
 * es_vm_vmas_free, or the history puts it back in use.  A fork's copy and
 * exec's new list have the keeper of the list they come from. */
typedef struct es_vm_keeper {
    void (*dead)(struct es_vm_keeper *k, struct es_vmas *s);
    /* s is about to change (map, unmap, protect, layout): a history that
     * may have to give back its VMAs as they are now copies them here */
    void (*changing)(struct es_vm_keeper *k, struct es_vmas *s);
} es_vm_keeper;
void es_vm_set_keeper(struct es_vmas *s, es_vm_keeper *k); /* NULL: none */
es_vm_keeper *es_vm_keeper_of(const struct es_vmas *s);
/* Frees a list no address space uses any more, and its VMAs' file holds. */
void es_vm_vmas_free(struct es_vmas *s);
/* A copy of s holding its files too, no address space's (no keeper), or
 * NULL (host memory); es_vm_vmas_swap exchanges two lists' VMAs and
 * layout, each keeping its keeper: a copy swapped back in gives a list
 * back its old VMAs. */
struct es_vmas *es_vm_vmas_copy(const struct es_vmas *s);
void es_vm_vmas_swap(struct es_vmas *a, struct es_vmas *b);

/* ---- kernel stacks, mapped in every address space ---- */

/* Linux's vmalloc area: one PML4 entry of its own whose PDPT every PGD
 * shares (and under PTI the user PGDs too: the CPU pushes the hardware
 * frame on the kernel stack before the entry code switches CR3). */
#define ES_KSTACK_BASE 0xffffc90000000000ull
/* 16 KiB of stack with an unmapped 16 KiB guard below it (VMAP_STACK). */
#define ES_KSTACK_STRIDE 0x8000ull
#define ES_KSTACK_SIZE 0x4000ull
#define ES_KSTACK_SLOTS 1024u
/* Maps a fresh zeroed kernel stack (supervisor, RW, NX) for task slot
 * `slot` (< ES_KSTACK_SLOTS) at ES_KSTACK_BASE + slot * ES_KSTACK_STRIDE;
 * returns its top (one past its highest byte), or 0 when out of memory or
 * the slot is bad or taken. */
uint64_t es_vm_kstack_alloc(es_machine *m, unsigned slot);
void es_vm_kstack_free(es_machine *m, unsigned slot);
/* Host pointer to [va, va+n) of kernel memory in the current PGD, or NULL
 * when a page is absent or the range crosses a page boundary. */
uint8_t *es_vm_kptr(es_machine *m, uint64_t va, size_t n);

#ifdef __cplusplus
}
#endif
#endif
