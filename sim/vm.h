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

#ifdef __cplusplus
}
#endif
#endif
