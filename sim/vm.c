/* vm.c - the guest process's address space: a sorted array of VMAs over the
 * page tables, demand paged like Linux's mm.
 *
 * The VMA list is the truth about what is mapped; page-table entries exist
 * only for pages that were touched.  Every leaf PTE this file writes carries
 * the software bit SW_FRAME (bit 9, ignored by the MMU, SDM Vol. 3A, 4.5):
 * a PROT_NONE page keeps its frame with P clear, so its contents survive an
 * mprotect back to readable, as Linux's _PAGE_PROTNONE does.
 *
 * Layering: this file sits on mem.c (frames, page tables, TLB) and calls
 * it; mem.c reaches es_vm_fault only through m->hooks.demand_fault, set
 * here when the VMA list is created.  PTI (sim/boot/pti.c) is above both:
 * the mapping changes here tell it through m->hooks.pti_*, which it
 * installs when it splits the page tables.
 */
#include "vm.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"

#define PAGE 4096ull
#define SW_FRAME (1ull << 9)

/* Defaults until the loader sets the layout: Linux x86-64's TASK_SIZE and
 * an mmap base 128 MiB (the minimum stack gap) below it. */
#define DEFAULT_TOP 0x7ffffffff000ull
#define DEFAULT_MMAP_BASE 0x7ffff7fff000ull

typedef struct es_vma {
    uint64_t start, end; /* [start, end), page aligned */
    int prot;            /* ES_PROT_* */
} es_vma;

struct es_vmas {
    es_vma *v;  /* sorted by start, non-overlapping */
    size_t n, cap;
    uint64_t top, mmap_base;
};

static struct es_vmas *vmas(es_machine *m)
{
    if (!m->vmas) {
        m->vmas = calloc(1, sizeof *m->vmas);
        if (m->vmas) {
            m->vmas->top = DEFAULT_TOP;
            m->vmas->mmap_base = DEFAULT_MMAP_BASE;
            m->hooks.demand_fault = es_vm_fault;
        }
    }
    return m->vmas;
}

/* Index of the first VMA whose end is above va (n when none). */
static size_t first_above(const struct es_vmas *s, uint64_t va)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->v[mid].end <= va)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static const es_vma *find(es_machine *m, uint64_t va)
{
    struct es_vmas *s = m->vmas;
    if (!s)
        return NULL;
    size_t i = first_above(s, va);
    return i < s->n && s->v[i].start <= va ? &s->v[i] : NULL;
}

static int reserve(struct es_vmas *s, size_t extra)
{
    if (s->n + extra <= s->cap)
        return 0;
    size_t nc = s->cap ? s->cap * 2 : 16;
    while (nc < s->n + extra)
        nc *= 2;
    es_vma *nv = realloc(s->v, nc * sizeof *nv);
    if (!nv)
        return -1;
    s->v = nv;
    s->cap = nc;
    return 0;
}

static void insert_at(struct es_vmas *s, size_t i, es_vma a)
{
    memmove(&s->v[i + 1], &s->v[i], (s->n - i) * sizeof *s->v);
    s->v[i] = a;
    s->n++;
}

static void remove_at(struct es_vmas *s, size_t i)
{
    memmove(&s->v[i], &s->v[i + 1], (s->n - i - 1) * sizeof *s->v);
    s->n--;
}

/* Merges VMA i with equal-protection neighbours that touch it, so a brk
 * that grows page by page stays one entry. */
static void merge_around(struct es_vmas *s, size_t i)
{
    if (i + 1 < s->n && s->v[i].end == s->v[i + 1].start && s->v[i].prot == s->v[i + 1].prot) {
        s->v[i].end = s->v[i + 1].end;
        remove_at(s, i + 1);
    }
    if (i > 0 && s->v[i - 1].end == s->v[i].start && s->v[i - 1].prot == s->v[i].prot) {
        s->v[i - 1].end = s->v[i].end;
        remove_at(s, i);
    }
}

/* Cuts [start, end) out of the VMA list (splitting a VMA that straddles an
 * edge).  Needs room for one extra entry (reserve first). */
static void cut(struct es_vmas *s, uint64_t start, uint64_t end)
{
    size_t i = first_above(s, start);
    while (i < s->n && s->v[i].start < end) {
        es_vma *a = &s->v[i];
        if (a->start < start && a->end > end) { /* hole in the middle */
            es_vma tail = {end, a->end, a->prot};
            a->end = start;
            insert_at(s, i + 1, tail);
            return;
        }
        if (a->start < start) { /* keep the head */
            a->end = start;
            i++;
        } else if (a->end > end) { /* keep the tail */
            a->start = end;
            return;
        } else {
            remove_at(s, i);
        }
    }
}

/* ---- page-table range walk ---- */

/* Calls fn on every leaf PTE in [start, end) that holds a frame (P or
 * SW_FRAME), skipping absent upper-level tables so a sparse terabyte range
 * costs only the tables that exist. */
static void pt_each(es_machine *m, uint64_t start, uint64_t end,
                    void (*fn)(es_machine *m, uint64_t va, uint64_t *pte, void *ctx), void *ctx)
{
    if (!m->cr3)
        return;
    uint64_t va = start;
    while (va < end) {
        uint64_t table = m->cr3 & ES_PTE_ADDR;
        int level;
        uint64_t *e = NULL;
        for (level = 3; level >= 0; level--) {
            uint64_t *t = (uint64_t *)es_phys(m, table);
            if (!t)
                break;
            e = &t[(va >> (12 + 9 * level)) & 511];
            if (level == 0)
                break;
            if (!(*e & ES_PTE_P) || (*e & ES_PTE_PS))
                break;
            table = *e & ES_PTE_ADDR;
        }
        if (level == 0 && e && (*e & (ES_PTE_P | SW_FRAME))) {
            fn(m, va, e, ctx);
        }
        if (level < 0)
            level = 0;
        /* advance past the region this level's entry covers */
        uint64_t span = 1ull << (12 + 9 * level);
        uint64_t next = (va & ~(span - 1)) + span;
        if (next <= va) /* wrapped at the top of the address space */
            break;
        va = next;
    }
}

static uint64_t pte_bits(int prot)
{
    if (!(prot & (ES_PROT_R | ES_PROT_W | ES_PROT_X)))
        return SW_FRAME; /* PROT_NONE: keep the frame, not present */
    /* x86 pages are always readable when present: PROT_W and PROT_X imply
     * read, as on Linux without protection keys */
    return ES_PTE_P | ES_PTE_U | SW_FRAME | ((prot & ES_PROT_W) ? ES_PTE_W : 0) |
           ((prot & ES_PROT_X) ? 0 : ES_PTE_NX);
}

static void free_pte(es_machine *m, uint64_t va, uint64_t *pte, void *ctx)
{
    (void)va;
    (void)ctx;
    es_frame_free(m, (*pte & ES_PTE_ADDR) >> 12);
    *pte = 0;
}

static void reprot_pte(es_machine *m, uint64_t va, uint64_t *pte, void *ctx)
{
    (void)m;
    (void)va;
    int prot = *(const int *)ctx;
    *pte = (*pte & ES_PTE_ADDR) | pte_bits(prot);
}

static void pti_user_flush(es_machine *m)
{
    if (m->hooks.pti_user_flush)
        m->hooks.pti_user_flush(m);
}

/* ---- the interface ---- */

static bool aligned_range(const struct es_vmas *s, uint64_t va, uint64_t len)
{
    return len && !(va & (PAGE - 1)) && !(len & (PAGE - 1)) && va + len > va &&
           va + len <= s->top;
}

int es_vm_map(es_machine *m, uint64_t va, uint64_t len, int prot)
{
    struct es_vmas *s = vmas(m);
    if (!s)
        return -ENOMEM;
    if (!aligned_range(s, va, len))
        return len && va + len > s->top ? -ENOMEM : -EINVAL;
    if (reserve(s, 2))
        return -ENOMEM;
    uint64_t end = va + len;
    pt_each(m, va, end, free_pte, NULL);
    cut(s, va, end);
    size_t i = first_above(s, va);
    insert_at(s, i, (es_vma){va, end, prot & (ES_PROT_R | ES_PROT_W | ES_PROT_X)});
    merge_around(s, i);
    es_tlb_flush(m);
    pti_user_flush(m); /* pti+PCID: the user ASID is stale */
    return 0;
}

int es_vm_unmap(es_machine *m, uint64_t va, uint64_t len)
{
    struct es_vmas *s = vmas(m);
    if (!s)
        return -ENOMEM;
    if ((va & (PAGE - 1)) || !len)
        return -EINVAL;
    len = (len + PAGE - 1) & ~(PAGE - 1);
    if (va + len < va || va + len > s->top)
        return -EINVAL;
    if (reserve(s, 1))
        return -ENOMEM;
    pt_each(m, va, va + len, free_pte, NULL);
    cut(s, va, va + len);
    es_tlb_flush(m);
    pti_user_flush(m); /* pti+PCID: the user ASID is stale */
    return 0;
}

int es_vm_protect(es_machine *m, uint64_t va, uint64_t len, int prot)
{
    struct es_vmas *s = vmas(m);
    if (!s)
        return -ENOMEM;
    if (va & (PAGE - 1))
        return -EINVAL;
    len = (len + PAGE - 1) & ~(PAGE - 1);
    if (!len)
        return 0;
    if (va + len < va)
        return -ENOMEM;
    uint64_t end = va + len;
    /* Linux applies mprotect VMA by VMA and stops at a hole with ENOMEM;
     * checking first keeps a failed call free of side effects */
    if (!es_vm_range_ok(m, va, len, 0))
        return -ENOMEM;
    if (reserve(s, 3))
        return -ENOMEM;
    prot &= ES_PROT_R | ES_PROT_W | ES_PROT_X;
    cut(s, va, end);
    size_t i = first_above(s, va);
    insert_at(s, i, (es_vma){va, end, prot});
    merge_around(s, i);
    pt_each(m, va, end, reprot_pte, &prot);
    es_tlb_flush(m);
    pti_user_flush(m); /* pti+PCID: the user ASID is stale */
    return 0;
}

uint64_t es_vm_find_free(es_machine *m, uint64_t len, uint64_t hint)
{
    struct es_vmas *s = vmas(m);
    if (!s || !len)
        return 0;
    len = (len + PAGE - 1) & ~(PAGE - 1);
    if (!len)
        return 0;
    hint &= ~(PAGE - 1);
    if (hint >= ES_VM_MMAP_MIN && hint + len > hint && hint + len <= s->top) {
        size_t i = first_above(s, hint);
        if (i == s->n || s->v[i].start >= hint + len)
            return hint;
    }
    /* top-down: the highest gap below mmap_base that fits (Linux's
     * arch_get_unmapped_area_topdown) */
    uint64_t hi = s->mmap_base < s->top ? s->mmap_base : s->top;
    for (size_t k = s->n; k-- > 0;) {
        const es_vma *a = &s->v[k];
        if (a->start >= hi)
            continue;
        if (a->end < hi && hi - a->end >= len)
            return hi - len;
        hi = a->start;
    }
    if (hi >= ES_VM_MMAP_MIN + len)
        return hi - len;
    return 0;
}

int es_vm_prot_at(es_machine *m, uint64_t va)
{
    const es_vma *a = find(m, va);
    return a ? a->prot : -1;
}

bool es_vm_range_ok(es_machine *m, uint64_t va, uint64_t len, int prot)
{
    struct es_vmas *s = m->vmas;
    if (!len)
        return true;
    if (!s || va + len < va)
        return false;
    uint64_t end = va + len;
    size_t i = first_above(s, va);
    while (va < end) {
        if (i >= s->n || s->v[i].start > va || (s->v[i].prot & prot) != prot)
            return false;
        va = s->v[i].end;
        i++;
    }
    return true;
}

int es_vm_fault(es_machine *m, uint64_t va, int access)
{
    const es_vma *a = find(m, va);
    if (!a)
        return -1;
    /* a read is allowed by any of R, W, X (see pte_bits) */
    int need = access == ES_ACC_W   ? ES_PROT_W
               : access == ES_ACC_X ? ES_PROT_X
                                    : ES_PROT_R | ES_PROT_W | ES_PROT_X;
    if (!(a->prot & need))
        return -1;
    uint64_t *pte = es_pte(m, m->cr3, va, false);
    if (pte && (*pte & (ES_PTE_P | SW_FRAME))) {
        if (*pte & ES_PTE_P)
            return -1; /* present and still refused: a real protection fault */
        /* a kept frame whose VMA now allows access (should not happen, as
         * protect rewrites PTEs; repair it rather than fault) */
        *pte = (*pte & ES_PTE_ADDR) | pte_bits(a->prot);
        es_tlb_flush_page(m, va);
        return 0;
    }
    int prot = a->prot;
    pte = es_pte(m, m->cr3, va, true);
    uint64_t pfn = pte ? es_frame_alloc(m) : 0;
    if (!pfn) {
        snprintf(m->message, sizeof m->message,
                 "out of guest memory (cap %llu MiB) touching 0x%llx",
                 (unsigned long long)(m->mem_cap >> 20), (unsigned long long)va);
        return -1;
    }
    *pte = (pfn << 12) | pte_bits(prot);
    es_tlb_flush_page(m, va);
    if (m->hooks.pti_sync)
        m->hooks.pti_sync(m, va); /* pti: both PGDs see a new upper table */
    return 0;
}

void es_vm_set_layout(es_machine *m, uint64_t top, uint64_t mmap_base)
{
    struct es_vmas *s = vmas(m);
    if (!s)
        return;
    s->top = top & ~(PAGE - 1);
    s->mmap_base = mmap_base & ~(PAGE - 1);
}

void es_vm_free(es_machine *m)
{
    if (!m->vmas)
        return;
    free(m->vmas->v);
    free(m->vmas);
    m->vmas = NULL;
    m->hooks.demand_fault = NULL;
}
