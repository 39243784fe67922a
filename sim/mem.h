/* mem.h - guest physical memory, 4-level paging, software TLB, and the
 * load/store interface every instruction handler uses.
 *
 * Addresses given to es_load/es_store are *linear* addresses (segment base
 * already added).  Each access is checked against the page tables (P, R/W,
 * U/S, NX; SDM Vol. 3A, 4.6) with the current CPL; a failed access records
 * #PF (with CR2 value and error code) or #GP (non-canonical) in m->fault
 * and returns -1 without any side effect.  Successful accesses return 0.
 */
#ifndef ENTRYSIM_MEM_H
#define ENTRYSIM_MEM_H

#include <string.h>

#include "machine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Page-table entry bits. */
#define ES_PTE_P 0x001ull
#define ES_PTE_W 0x002ull
#define ES_PTE_U 0x004ull
#define ES_PTE_A 0x020ull
#define ES_PTE_D 0x040ull
#define ES_PTE_PS 0x080ull
#define ES_PTE_G 0x100ull
#define ES_PTE_NX (1ull << 63)
#define ES_PTE_ADDR 0x000ffffffffff000ull

/* Access kinds for translation. */
enum es_access { ES_ACC_R = 0, ES_ACC_W = 1, ES_ACC_X = 2 };

/* ---- physical memory ---- */

/* Allocates a zeroed physical frame; returns its frame number, or 0 when the
 * memory cap is reached (frame 0 is never handed out). */
uint64_t es_frame_alloc(es_machine *m);
/* Returns a frame to the allocator. */
void es_frame_free(es_machine *m, uint64_t pfn);
/* Releases the host memory behind all frames (es_machine_free). */
void es_mem_free(es_machine *m);
/* An arena es_mem_free left to es_spares, unmapped (es_spares_free). */
void es_mem_unmap_arena(void *arena);
/* Host pointer to physical address pa (the frame is materialised on first
 * touch); NULL if pa is outside guest physical memory or the cap is hit. */
uint8_t *es_phys(es_machine *m, uint64_t pa);

/* ---- page tables (the host-side "kernel" uses these to build mappings) ---- */

/* Host pointer to the 4 KiB leaf PTE for va in the tables at CR3, creating
 * missing intermediate tables (present, writable, user) when `create`.
 * NULL if absent (or allocation failed). */
uint64_t *es_pte(es_machine *m, uint64_t cr3, uint64_t va, bool create);
/* Allocates a fresh empty PML4; returns its physical address or 0. */
uint64_t es_new_pml4(es_machine *m);

/* Translates va for `access` at privilege `user` without side effects on
 * the machine except A/D bits.  Returns 0 and sets *pa, or returns the #PF
 * error code (never 0: it always has at least one bit) on failure. */
uint32_t es_translate(es_machine *m, uint64_t va, int access, int user, uint64_t *pa);
/* The physical address a read of va (as user or supervisor) would reach
 * through the current page tables: 0, or -1 when it would fault.  No
 * fault is raised, nothing is demand-paged. */
int es_walk_read(es_machine *m, uint64_t va, bool user, uint64_t *pa);

/* Re-evaluates alignment checking (SDM Vol. 3A, 6.15 "#AC": CPL 3, CR0.AM
 * and RFLAGS.AC all set).  Call after anything that changes RFLAGS.AC or
 * CPL.  While it is on, the TLB is not filled, so every data access takes
 * the slow path, which checks alignment; the fast path never pays for it. */
void es_update_ac(es_machine *m);

/* Empties an es_wlog (sim/machine.h): unmarks its frames. */
void es_wlog_clear(es_machine *m, es_wlog *w);
/* Lists the frames written from now on in w (NULL: stops). */
static inline void es_wlog_attach(es_machine *m, es_wlog *w)
{
    m->wlog = w;
}

/* Invalidates the whole TLB (MOV CR3, mapping changes) or one page (INVLPG). */
void es_tlb_flush(es_machine *m);
void es_tlb_flush_page(es_machine *m, uint64_t va);

/* ---- linear-address access: slow paths (handle page crossing, faults,
 * observers, self-modifying code) ---- */
int es_read_slow(es_machine *m, uint64_t va, void *dst, unsigned n);
int es_write_slow(es_machine *m, uint64_t va, const void *src, unsigned n);

/* Reads/writes n bytes (any n) at linear address va: the general entry. */
int es_read(es_machine *m, uint64_t va, void *dst, unsigned n);
int es_write(es_machine *m, uint64_t va, const void *src, unsigned n);

/* Copies without permission checks as the kernel would (used by host
 * services on behalf of the guest, after validating user pointers with
 * es_user_ok).  Demand-faults pages of valid mappings.  Return 0 / -1. */
int es_copy_from_guest(es_machine *m, void *dst, uint64_t va, size_t n);
int es_copy_to_guest(es_machine *m, uint64_t va, const void *src, size_t n);

/* Fetches up to n instruction bytes at va for decoding (execute permission);
 * returns the number of bytes available (< n at an unmapped page boundary,
 * 0 with a fault recorded if the first byte faults). */
size_t es_fetch_bytes(es_machine *m, uint64_t va, uint8_t *dst, size_t n);

/* es_fetch_page's walk, for a TLB miss (or an entry without execute
 * permission at the current CPL). */
int es_fetch_walk(es_machine *m, uint64_t va, uint64_t *pa);

/* Frame pfn's bytes changed where stores do not see it (the kernel's
 * copies, a debugger's undo, a test writing code): every decode and block
 * of it is stale.  The one place code_gen moves, with the stamp that tells
 * the block cache some code changed (sim/block.c). */
/* 64 bytes at a and b equal: eight word compares kept inline (a memcmp
 * call per 64 bytes cost more than the compare in the debugger's undo
 * records and the host's step records, which compare kilobytes a step
 * and find them mostly unchanged). */
static inline bool es_same64(const uint8_t *a, const uint8_t *b)
{
    uint64_t x = 0;
    for (int i = 0; i < 64; i += 8) {
        uint64_t p, q;
        memcpy(&p, a + i, 8);
        memcpy(&q, b + i, 8);
        x |= p ^ q;
    }
    return !x;
}

static inline void es_code_stale(es_machine *m, uint64_t pfn)
{
    m->frames[pfn].code_gen++;
    m->code_stamp++;
}

static inline es_tlbe *es_tlb_slot(es_machine *m, uint64_t va)
{
    return &m->tlb[(va >> 12) & (ES_TLB_SIZE - 1)];
}

/* Fast path: one aligned-within-page access through the TLB. */
static inline int es_load(es_machine *m, uint64_t va, unsigned size, uint64_t *out)
{
    es_tlbe *e = es_tlb_slot(m, va);
    if (__builtin_expect(e->tag == (va & ~0xfffull) && (va & 0xfff) + size <= 4096 &&
                             (e->perm & m->need_u) == m->need_u, 1)) {
        const uint8_t *p = (const uint8_t *)(e->addend + va);
        switch (size) {
        case 1: *out = *p; return 0;
        case 2: { uint16_t v; memcpy(&v, p, 2); *out = v; return 0; }
        case 4: { uint32_t v; memcpy(&v, p, 4); *out = v; return 0; }
        default: { uint64_t v; memcpy(&v, p, 8); *out = v; return 0; }
        }
    }
    uint64_t v = 0;
    if (es_read_slow(m, va, &v, size))
        return -1;
    *out = v; /* little-endian host */
    return 0;
}

static inline int es_store(es_machine *m, uint64_t va, unsigned size, uint64_t v)
{
    es_tlbe *e = es_tlb_slot(m, va);
    uint32_t need = ES_TP_W | m->need_u;
    if (__builtin_expect(e->tag == (va & ~0xfffull) && (va & 0xfff) + size <= 4096 &&
                             (e->perm & need) == need, 1)) {
        uint8_t *p = (uint8_t *)(e->addend + va);
        switch (size) {
        case 1: *p = (uint8_t)v; return 0;
        case 2: { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); return 0; }
        case 4: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); return 0; }
        default: memcpy(p, &v, 8); return 0;
        }
    }
    return es_write_slow(m, va, &v, size);
}

/* Host pointer for an access of n bytes at va that stays within one page and
 * is permitted (write: for writing), or NULL (caller falls back to
 * es_read/es_write).  For block copies such as REP MOVS. */
static inline uint8_t *es_host_ptr(es_machine *m, uint64_t va, unsigned n, int write)
{
    es_tlbe *e = es_tlb_slot(m, va);
    uint32_t need = (write ? ES_TP_W : 0) | m->need_u;
    if (e->tag == (va & ~0xfffull) && (va & 0xfff) + n <= 4096 && (e->perm & need) == need)
        return (uint8_t *)(e->addend + va);
    return NULL;
}

/* Physical page (*pa, page aligned) of the instruction page holding linear
 * address va, checked for execute permission at the current CPL; 0, or -1
 * with the fault recorded.  A TLB entry filled by an earlier fetch or
 * access saves the walk. */
static inline int es_fetch_page(es_machine *m, uint64_t va, uint64_t *pa)
{
    const es_tlbe *e = es_tlb_slot(m, va);
    uint32_t need = ES_TP_X | m->need_u;
    if (__builtin_expect(e->tag == (va & ~0xfffull) && (e->perm & need) == need, 1)) {
        *pa = e->pa;
        return 0;
    }
    return es_fetch_walk(m, va, pa);
}

#ifdef __cplusplus
}
#endif
#endif
