/* vm_mm.c - address spaces as objects (fork, switch, release, the reset of
 * execve) and the kernel stacks every address space maps.
 *
 * An address space is a PGD and a VMA list (es_mm).  Its PML4 has two
 * halves: entries 0..255 map the user half and belong to it alone;
 * entries 256..511 map the kernel and are the same in every PGD, pointing
 * to the same lower tables, so a kernel mapping made below them is seen by
 * all (Linux copies the kernel half into each new PGD the same way,
 * pgd_ctor).  Under PTI (m->hooks.pti_fork set, sim/boot/pti.c) each PGD
 * is the kernel half of an 8 KiB-aligned pair whose second page, the user
 * PGD, shares the user half entry for entry and maps only the entry
 * trampolines of the kernel half.
 *
 * fork copies eagerly, not copy on write: a page of the parent is a page
 * of the child at once, so neither PTE needs to change later and nothing
 * here must know which address spaces share a frame.  Only the shared
 * zero frame is shared, and its PTEs are never writable (vm.c pte_for).
 */
#include <errno.h>
#include <string.h>

#include "mem.h"
#include "vm.h"
#include "vm_int.h"

#define PAGE 4096ull
#define USER_HALF 256u /* PML4 entries of the user half */
/* The user PGD of a PTI pair: Linux's PTI_USER_PGTABLE_MASK. */
#define PTI_USER 0x1000ull
#define KSTACK_PML4 ((unsigned)((ES_KSTACK_BASE >> 39) & 511))
#define KSTACK_PAGES (ES_KSTACK_SIZE / PAGE)

static bool pti_on(const es_machine *m)
{
    return m->hooks.pti_fork != NULL;
}

static uint64_t *table(es_machine *m, uint64_t entry)
{
    return (uint64_t *)es_phys(m, entry & ES_PTE_ADDR);
}

es_mm es_vm_current(es_machine *m)
{
    /* bits 0..11 are the PCID with CR4.PCIDE; bit 12 picks the user PGD
     * of a pair only under PTI (elsewhere it is an address bit) */
    uint64_t pgd = m->cr3 & ES_PTE_ADDR;
    if (pti_on(m))
        pgd &= ~PTI_USER;
    /* the VMA list is made here if no mapping made it yet: an es_mm kept
     * by the caller must name the list the machine goes on using */
    return (es_mm){pgd, es_vmas_get(m)};
}

/* Under PTI: a user-half entry only the user PGD of the pair at pgd has
 * goes into the kernel PGD too (pti_sync keeps them equal; this only makes
 * the kernel PGD's half the whole truth before it is copied or freed). */
static void user_half_sync(es_machine *m, uint64_t pgd)
{
    uint64_t *k = table(m, pgd), *u = pti_on(m) ? table(m, pgd + PTI_USER) : NULL;
    for (unsigned i = 0; k && u && i < USER_HALF; i++)
        if (!(k[i] & ES_PTE_P) && (u[i] & ES_PTE_P))
            k[i] = u[i];
}

/* Frees what entries [0, n) of table t (level 3: a PML4 ... 0: a page
 * table) hold: frames (not the zero frame) and lower tables, and clears
 * the entries.  Large pages are only unlinked (vm.c makes none). */
static void free_level(es_machine *m, uint64_t *t, unsigned n, int level)
{
    for (unsigned i = 0; i < n; i++) {
        uint64_t e = t[i], pfn = (e & ES_PTE_ADDR) >> 12;
        t[i] = 0;
        if (level == 0) {
            if ((e & (ES_PTE_P | SW_FRAME)) && pfn != m->vmg.zero_pfn)
                es_frame_free(m, pfn);
            continue;
        }
        if (!(e & ES_PTE_P) || (e & ES_PTE_PS))
            continue;
        uint64_t *c = table(m, e);
        if (c)
            free_level(m, c, 512, level - 1);
        es_frame_free(m, pfn);
    }
}

/* Copies entries [0, n) of table src into the empty table dst (levels as
 * free_level): every lower table and every frame anew with the same entry
 * bits, the zero frame shared.  -1 when frames run out; dst then holds
 * what was made so far, which free_level frees. */
static int copy_level(es_machine *m, const uint64_t *src, uint64_t *dst, unsigned n, int level)
{
    for (unsigned i = 0; i < n; i++) {
        uint64_t e = src[i], pfn = (e & ES_PTE_ADDR) >> 12;
        if (!(e & (level ? ES_PTE_P : ES_PTE_P | SW_FRAME)))
            continue;
        if ((level && (e & ES_PTE_PS)) || (!level && pfn == m->vmg.zero_pfn)) {
            dst[i] = e; /* shared as it is */
            continue;
        }
        uint64_t np = es_frame_alloc(m);
        if (!np)
            return -1;
        dst[i] = (e & ~ES_PTE_ADDR) | np << 12;
        uint8_t *from = es_phys(m, pfn << 12), *to = es_phys(m, np << 12);
        if (!from || !to)
            return -1;
        if (!level)
            memcpy(to, from, PAGE);
        else if (copy_level(m, (const uint64_t *)from, (uint64_t *)to, 512, level - 1))
            return -1;
    }
    return 0;
}

/* Makes sure the PGD pgd (and under PTI its user PGD) has the PML4 entry
 * of the kernel-stack region, whose PDPT is made on first need and then
 * shared by every PGD.  The PDPT is the kernel's: like the image's frames
 * it does not count against the process's cap.  0 or -1. */
static int kstack_region(es_machine *m, uint64_t pgd)
{
    uint64_t *k = table(m, pgd), *u = pti_on(m) ? table(m, pgd + PTI_USER) : NULL;
    if (!k || (pti_on(m) && !u))
        return -1;
    if (!m->vmg.kstack_pdpt) {
        uint64_t pfn = es_frame_alloc(m);
        if (!pfn)
            return -1;
        m->frames_used--;
        m->vmg.kstack_pdpt = pfn << 12;
    }
    /* supervisor (U clear): no user access below it, whatever the lower
     * entries say */
    uint64_t e = m->vmg.kstack_pdpt | ES_PTE_P | ES_PTE_W;
    k[KSTACK_PML4] = e;
    if (u)
        u[KSTACK_PML4] = e; /* the CPU pushes the entry frame before CR3 switches */
    return 0;
}

int es_vm_fork(es_machine *m, es_mm *out)
{
    es_mm cur = es_vm_current(m);
    struct es_vmas *s = es_vmas_get(m);
    if (!cur.pgd || !s || kstack_region(m, cur.pgd))
        return -ENOMEM;
    es_mm child = {0, NULL};
    if (pti_on(m)) {
        if (m->hooks.pti_fork(m, &child.pgd))
            return -ENOMEM;
    } else {
        child.pgd = es_new_pml4(m);
        if (!child.pgd)
            return -ENOMEM;
        memcpy(table(m, child.pgd) + USER_HALF, table(m, cur.pgd) + USER_HALF,
               USER_HALF * sizeof(uint64_t));
    }
    user_half_sync(m, cur.pgd);
    uint64_t *dst = table(m, child.pgd);
    int rc = copy_level(m, table(m, cur.pgd), dst, USER_HALF, 3);
    if (!rc)
        child.vmas = es_vmas_clone(s);
    if (rc || !child.vmas) {
        es_vm_release(m, child);
        return -ENOMEM;
    }
    if (pti_on(m))
        memcpy(table(m, child.pgd + PTI_USER), dst, USER_HALF * sizeof(uint64_t));
    *out = child;
    return 0;
}

void es_vm_switch(es_machine *m, es_mm mm)
{
    m->vmas = mm.vmas;
    /* pti+PCID: what the user PCID caches belongs to the last process */
    if (m->hooks.pti_user_flush)
        m->hooks.pti_user_flush(m);
}

void es_vm_switch_cr3(es_machine *m, es_mm mm)
{
    es_vm_switch(m, mm);
    m->cr3 = mm.pgd;
    es_tlb_flush(m); /* also drops the fetch shortcut (fetch_va = 1) */
}

bool es_vm_release(es_machine *m, es_mm mm)
{
    es_mm cur = es_vm_current(m);
    if ((mm.vmas && mm.vmas == cur.vmas) || (mm.pgd && mm.pgd == cur.pgd))
        return false; /* the current one is never freed under the CPU's feet */
    es_vmas_end(mm.vmas);
    uint64_t *k = mm.pgd ? table(m, mm.pgd) : NULL;
    if (!k)
        return true;
    user_half_sync(m, mm.pgd);
    free_level(m, k, USER_HALF, 3);
    es_frame_free(m, mm.pgd >> 12);
    if (pti_on(m))
        es_frame_free(m, (mm.pgd + PTI_USER) >> 12);
    return true;
}

int es_vm_exec_reset(es_machine *m)
{
    es_mm cur = es_vm_current(m);
    uint64_t *k = cur.pgd ? table(m, cur.pgd) : NULL;
    if (!k)
        return -EINVAL;
    user_half_sync(m, cur.pgd);
    free_level(m, k, USER_HALF, 3);
    if (pti_on(m))
        memset(table(m, cur.pgd + PTI_USER), 0, USER_HALF * sizeof(uint64_t));
    es_vm_keeper *keep = es_vm_keeper_of(m->vmas);
    es_vmas_end(m->vmas);
    m->vmas = NULL;
    es_tlb_flush(m);
    if (m->hooks.pti_user_flush)
        m->hooks.pti_user_flush(m);
    /* the default layout; the new list is the keeper's as the old one was */
    es_vm_set_keeper(es_vmas_get(m), keep);
    return m->vmas ? 0 : -ENOMEM;
}

/* ---- kernel stacks ---- */

static uint64_t kstack_lo(unsigned slot)
{
    return ES_KSTACK_BASE + (uint64_t)slot * ES_KSTACK_STRIDE;
}

void es_vm_kstack_free(es_machine *m, unsigned slot)
{
    es_mm cur = es_vm_current(m);
    if (slot >= ES_KSTACK_SLOTS || !cur.pgd)
        return;
    for (uint64_t i = 0; i < KSTACK_PAGES; i++) {
        uint64_t *pte = es_pte(m, cur.pgd, kstack_lo(slot) + i * PAGE, false);
        if (pte && (*pte & ES_PTE_P))
            es_frame_free(m, (*pte & ES_PTE_ADDR) >> 12);
        if (pte)
            *pte = 0;
    }
    es_tlb_flush(m);
}

uint64_t es_vm_kstack_alloc(es_machine *m, unsigned slot)
{
    es_mm cur = es_vm_current(m);
    if (slot >= ES_KSTACK_SLOTS || !cur.pgd || kstack_region(m, cur.pgd))
        return 0;
    uint64_t *first = es_pte(m, cur.pgd, kstack_lo(slot), false);
    if (first && (*first & ES_PTE_P))
        return 0; /* taken */
    for (uint64_t i = 0; i < KSTACK_PAGES; i++) {
        /* the tables below the shared PDPT come with user bits from
         * es_pte; the PML4 entry's clear U bit denies user access */
        uint64_t *pte = es_pte(m, cur.pgd, kstack_lo(slot) + i * PAGE, true);
        uint64_t pfn = pte ? es_frame_alloc(m) : 0;
        if (!pfn) {
            es_vm_kstack_free(m, slot);
            return 0;
        }
        *pte = pfn << 12 | ES_PTE_P | ES_PTE_W | ES_PTE_NX;
    }
    return kstack_lo(slot) + ES_KSTACK_SIZE;
}

uint8_t *es_vm_kptr(es_machine *m, uint64_t va, size_t n)
{
    es_mm cur = es_vm_current(m);
    if (!n || !cur.pgd || (va & (PAGE - 1)) + n > PAGE)
        return NULL;
    uint64_t *pte = es_pte(m, cur.pgd, va, false);
    if (!pte || !(*pte & ES_PTE_P))
        return NULL;
    return es_phys(m, (*pte & ES_PTE_ADDR) | (va & (PAGE - 1)));
}
