/* vm.c - the guest process's address space: a sorted list of VMAs over the
 * page tables, demand paged like Linux's mm.
 *
 * The VMA list is the truth about what is mapped; page-table entries exist
 * only for pages that were touched.  A file mapping's VMA names its file
 * (es_vm_file) and offset: its pages are read from the file when first
 * touched, and again after MADV_DONTNEED drops them.  Every leaf PTE this
 * file writes carries the software bit SW_FRAME (bit 9, ignored by the
 * MMU, SDM Vol. 3A, 4.5): a PROT_NONE page keeps its frame with P clear,
 * so its contents survive an mprotect back to readable, as Linux's
 * _PAGE_PROTNONE does.
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
#include "vm_int.h"

#define PAGE 4096ull

/* Defaults until the loader sets the layout: Linux x86-64's TASK_SIZE and
 * an mmap base 128 MiB (the minimum stack gap) below it. */
#define DEFAULT_TOP 0x7ffffffff000ull
#define DEFAULT_MMAP_BASE 0x7ffff7fff000ull

typedef struct es_vma {
    uint64_t start, end; /* [start, end), page aligned */
    int prot;            /* ES_PROT_* */
    es_vm_file *file;    /* the file behind it (NULL: anonymous memory) */
    uint64_t off;        /* file offset of start */
} es_vma;

/* The VMAs, sorted by start and non-overlapping, live in blocks of up to
 * BLK entries (a two-level B-tree): lookup is a binary search over the
 * blocks and one within a block, an insert or removal moves at most one
 * block's entries and the block pointers.  One flat array moved every
 * entry above the change: top-down mmaps insert below all others, so 125k
 * of them cost 8.4 s (issue 12).  Each block keeps the largest gap
 * between its own neighbours so the top-down free-range search skips
 * full blocks. */
#define BLK 128
#define NSPARE 3

typedef struct vblk {
    uint32_t n;
    bool dirty;      /* maxgap needs recomputing */
    uint64_t maxgap; /* largest v[i].start - v[i-1].end within the block */
    es_vma v[BLK];
} vblk;

typedef struct vpos {
    size_t b, i; /* block, entry; b == nb is the end */
} vpos;

struct es_vmas {
    vblk **b;
    size_t nb, capb;
    size_t count;       /* VMAs in all blocks (Linux's mm->map_count) */
    uint64_t top, mmap_base;
    /* the files some VMA of any address space uses (refs > 0): the
     * machine's list, m->vmg.files, as a file's one `next` link cannot be
     * on a list per address space */
    es_vm_file **files;
    vblk *spare[NSPARE]; /* blocks reserve() set aside for inserts */
    es_vm_keeper *keeper; /* takes the list when its address space ends (vm.h) */
};

struct es_vmas *es_vmas_get(es_machine *m)
{
    if (!m->vmas) {
        m->vmas = calloc(1, sizeof *m->vmas);
        if (m->vmas) {
            m->vmas->top = DEFAULT_TOP;
            m->vmas->mmap_base = DEFAULT_MMAP_BASE;
            m->vmas->files = &m->vmg.files;
            m->hooks.demand_fault = es_vm_fault;
        }
    }
    return m->vmas;
}

/* s is about to change: its keeper may want a copy of it as it was. */
static void changing(struct es_vmas *s)
{
    if (s->keeper && s->keeper->changing)
        s->keeper->changing(s->keeper, s);
}

static es_vma *at(const struct es_vmas *s, vpos p)
{
    return &s->b[p.b]->v[p.i];
}

static bool valid(const struct es_vmas *s, vpos p)
{
    return p.b < s->nb;
}

static vpos next(const struct es_vmas *s, vpos p)
{
    return p.i + 1 < s->b[p.b]->n ? (vpos){p.b, p.i + 1} : (vpos){p.b + 1, 0};
}

/* Position of the first VMA whose end is above va (the end when none). */
static vpos first_above(const struct es_vmas *s, uint64_t va)
{
    size_t lo = 0, hi = s->nb;
    while (lo < hi) { /* first block whose last VMA ends above va */
        size_t mid = (lo + hi) / 2;
        const vblk *k = s->b[mid];
        if (k->v[k->n - 1].end <= va)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == s->nb)
        return (vpos){s->nb, 0};
    const vblk *k = s->b[lo];
    size_t l = 0, h = k->n;
    while (l < h) {
        size_t mid = (l + h) / 2;
        if (k->v[mid].end <= va)
            l = mid + 1;
        else
            h = mid;
    }
    return (vpos){lo, l};
}

static const es_vma *find(es_machine *m, uint64_t va)
{
    struct es_vmas *s = m->vmas;
    if (!s)
        return NULL;
    vpos p = first_above(s, va);
    return valid(s, p) && at(s, p)->start <= va ? at(s, p) : NULL;
}

/* Inserts block k at index b of the block list; 0 or -1. */
static int add_block(struct es_vmas *s, size_t b, vblk *k)
{
    if (s->nb == s->capb) {
        size_t nc = s->capb ? s->capb * 2 : 8;
        vblk **nv = realloc(s->b, nc * sizeof *nv);
        if (!nv)
            return -1;
        s->b = nv;
        s->capb = nc;
    }
    memmove(&s->b[b + 1], &s->b[b], (s->nb - b) * sizeof *s->b);
    s->b[b] = k;
    s->nb++;
    return 0;
}

/* Makes sure the block an insert at p lands in has room (splitting a full
 * block in two, or creating the first block); p is updated.  0 or -1. */
static int make_room(struct es_vmas *s, vpos *p)
{
    if (p->b == s->nb && s->nb) /* append: the end of the last block */
        *p = (vpos){s->nb - 1, s->b[s->nb - 1]->n};
    if (p->b == s->nb || s->b[p->b]->n == BLK) {
        vblk *k = NULL;
        for (int i = 0; i < NSPARE && !k; i++)
            if (s->spare[i]) {
                k = s->spare[i];
                s->spare[i] = NULL;
            }
        if (!k || add_block(s, p->b == s->nb ? s->nb : p->b + 1, k))
            return -1;
        k->n = 0;
        k->dirty = true;
        if (p->b + 1 < s->nb && s->b[p->b] != k) { /* split the full one */
            vblk *full = s->b[p->b];
            k->n = BLK / 2;
            memcpy(k->v, &full->v[BLK - BLK / 2], (BLK / 2) * sizeof *k->v);
            full->n = BLK - BLK / 2;
            full->dirty = k->dirty = true;
            if (p->i > full->n)
                *p = (vpos){p->b + 1, p->i - full->n};
        }
    }
    return 0;
}

/* A VMA (or a caller holding it for a while) starts using f: the first
 * user puts it on the list of files. */
static void file_hold(struct es_vmas *s, es_vm_file *f)
{
    if (f && f->refs++ == 0) {
        f->next = *s->files;
        *s->files = f;
    }
}

/* A user of f is gone: the last one releases it. */
static void file_drop(struct es_vmas *s, es_vm_file *f)
{
    if (!f || --f->refs)
        return;
    for (es_vm_file **p = s->files; *p; p = &(*p)->next)
        if (*p == f) {
            *p = f->next;
            break;
        }
    f->release(f);
}

/* Inserts a before p (room ensured by the caller through reserve). */
static vpos insert_at(struct es_vmas *s, vpos p, es_vma a)
{
    if (make_room(s, &p))
        abort(); /* cannot happen: reserve() set the memory aside */
    vblk *k = s->b[p.b];
    memmove(&k->v[p.i + 1], &k->v[p.i], (k->n - p.i) * sizeof *k->v);
    k->v[p.i] = a;
    file_hold(s, a.file);
    k->n++;
    k->dirty = true;
    s->count++;
    return p;
}

/* Removes the entry at p; returns the position of the one after it. */
static vpos remove_at(struct es_vmas *s, vpos p)
{
    vblk *k = s->b[p.b];
    file_drop(s, k->v[p.i].file);
    memmove(&k->v[p.i], &k->v[p.i + 1], (k->n - p.i - 1) * sizeof *k->v);
    k->n--;
    k->dirty = true;
    s->count--;
    if (!k->n) {
        free(k);
        memmove(&s->b[p.b], &s->b[p.b + 1], (s->nb - p.b - 1) * sizeof *s->b);
        s->nb--;
        return (vpos){p.b, 0};
    }
    return p.i < k->n ? p : (vpos){p.b + 1, 0};
}

/* Pre-allocates what `extra` inserts may need (a new block and a block
 * pointer each), so the list never changes halfway through an operation
 * that then fails. */
static int reserve(struct es_vmas *s, size_t extra)
{
    for (size_t i = 0; i < extra && i < NSPARE; i++)
        if (!s->spare[i] && !(s->spare[i] = malloc(sizeof(vblk))))
            return -1;
    if (s->nb + extra > s->capb) {
        size_t nc = s->capb ? s->capb : 8;
        while (nc < s->nb + extra)
            nc *= 2;
        vblk **nv = realloc(s->b, nc * sizeof *nv);
        if (!nv)
            return -1;
        s->b = nv;
        s->capb = nc;
    }
    return 0;
}

/* Whether b continues a: adjacent, same protection, and the same memory
 * (anonymous, or the next pages of the same file). */
static bool mergeable(const es_vma *a, const es_vma *b)
{
    return a->end == b->start && a->prot == b->prot && a->file == b->file &&
           (!a->file || a->off + (a->end - a->start) == b->off);
}

/* Merges the VMAs that meet [start, end] (its neighbours included) where
 * one continues the other, so a brk that grows page by page stays one
 * entry. */
static void merge_range(struct es_vmas *s, uint64_t start, uint64_t end)
{
    vpos p = first_above(s, start ? start - 1 : 0);
    while (valid(s, p) && at(s, p)->start <= end) {
        vpos q = next(s, p);
        if (!valid(s, q) || !mergeable(at(s, p), at(s, q))) {
            p = q;
            continue;
        }
        at(s, p)->end = at(s, q)->end;
        s->b[p.b]->dirty = true;
        remove_at(s, q); /* q comes after p: p stays where it is */
    }
}

/* Splits the VMA that straddles addr (if one does) in two at addr.  Needs
 * room for one insert (reserve first). */
static void split_at(struct es_vmas *s, uint64_t addr)
{
    vpos p = first_above(s, addr);
    if (!valid(s, p) || at(s, p)->start >= addr)
        return;
    es_vma *a = at(s, p), tail = *a;
    tail.start = addr;
    if (tail.file)
        tail.off += addr - a->start;
    a->end = addr;
    s->b[p.b]->dirty = true;
    insert_at(s, next(s, p), tail);
}

/* Cuts [start, end) out of the VMA list (splitting a VMA that straddles an
 * edge).  Needs room for two inserts (reserve first). */
static void cut(struct es_vmas *s, uint64_t start, uint64_t end)
{
    split_at(s, start);
    split_at(s, end);
    vpos i = first_above(s, start);
    while (valid(s, i) && at(s, i)->start < end)
        i = remove_at(s, i);
}

/* Linux's map_count checks: a new mapping is refused once the count is
 * over the limit (mm/mmap.c do_mmap), and each split of a VMA needs the
 * count below it (__split_vma); true when [start, end) may be cut. */
static bool splits_ok(const struct es_vmas *s, uint64_t start, uint64_t end)
{
    size_t n = s->count;
    const uint64_t edge[2] = {start, end};
    for (int e = 0; e < 2; e++) {
        vpos p = first_above(s, edge[e]);
        if (valid(s, p) && at(s, p)->start < edge[e]) {
            if (n >= ES_VM_MAX_MAP_COUNT)
                return false;
            n++;
        }
    }
    return true;
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

/* The leaf PTE for frame pfn with prot: the shared zero frame is never
 * writable, so the first write to such a page faults and gets its own
 * frame (copy on write of Linux's zero page). */
static uint64_t pte_for(const es_machine *m, uint64_t pfn, int prot)
{
    uint64_t bits = pte_bits(prot);
    if (pfn == m->vmg.zero_pfn)
        bits &= ~ES_PTE_W;
    return (pfn << 12) | bits;
}

static void free_pte(es_machine *m, uint64_t va, uint64_t *pte, void *ctx)
{
    (void)va;
    (void)ctx;
    uint64_t pfn = (*pte & ES_PTE_ADDR) >> 12;
    if (pfn != m->vmg.zero_pfn)
        es_frame_free(m, pfn);
    *pte = 0;
}

static void reprot_pte(es_machine *m, uint64_t va, uint64_t *pte, void *ctx)
{
    (void)va;
    *pte = pte_for(m, (*pte & ES_PTE_ADDR) >> 12, *(const int *)ctx);
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

/* Replaces [v.start, v.end) in the list by v (merged with the neighbours
 * it continues).  The caller reserved room and checked the count. */
static void put_vma(struct es_vmas *s, es_vma v)
{
    cut(s, v.start, v.end);
    insert_at(s, first_above(s, v.start), v);
    merge_range(s, v.start, v.end);
}

int es_vm_map_file(es_machine *m, uint64_t va, uint64_t len, int prot, es_vm_file *f,
                   uint64_t off)
{
    struct es_vmas *s = es_vmas_get(m);
    if (!s) {
        if (f && !f->refs)
            f->release(f);
        return -ENOMEM;
    }
    /* held across the change: replacing a mapping of the same file must
     * not release it on the way, and a file no VMA took is released */
    file_hold(s, f);
    int r = 0;
    if (!aligned_range(s, va, len))
        r = len && va + len > s->top ? -ENOMEM : -EINVAL;
    else if (s->count > ES_VM_MAX_MAP_COUNT || !splits_ok(s, va, va + len) || reserve(s, 3))
        r = -ENOMEM;
    if (!r) {
        uint64_t end = va + len;
        changing(s);
        pt_each(m, va, end, free_pte, NULL);
        put_vma(s, (es_vma){va, end, prot & (ES_PROT_R | ES_PROT_W | ES_PROT_X), f, f ? off : 0});
        es_tlb_flush(m);
        pti_user_flush(m); /* pti+PCID: the user ASID is stale */
    }
    file_drop(s, f);
    return r;
}

int es_vm_map(es_machine *m, uint64_t va, uint64_t len, int prot)
{
    return es_vm_map_file(m, va, len, prot, NULL, 0);
}

es_vm_file *es_vm_file_at(es_machine *m, uint64_t va, uint64_t *off)
{
    const es_vma *a = find(m, va);
    if (!a || !a->file)
        return NULL;
    *off = a->off + ((va & ~(PAGE - 1)) - a->start);
    return a->file;
}

es_vm_file *es_vm_file_find(es_machine *m, uint64_t k0, uint64_t k1)
{
    for (es_vm_file *f = m->vmg.files; f; f = f->next)
        if (f->key[0] == k0 && f->key[1] == k1)
            return f;
    return NULL;
}

int es_vm_unmap(es_machine *m, uint64_t va, uint64_t len)
{
    struct es_vmas *s = es_vmas_get(m);
    if (!s)
        return -ENOMEM;
    if ((va & (PAGE - 1)) || !len)
        return -EINVAL;
    len = (len + PAGE - 1) & ~(PAGE - 1);
    if (!len || va + len < va || va + len > s->top)
        return -EINVAL;
    if (!splits_ok(s, va, va + len) || reserve(s, 2))
        return -ENOMEM;
    changing(s);
    pt_each(m, va, va + len, free_pte, NULL);
    cut(s, va, va + len);
    es_tlb_flush(m);
    pti_user_flush(m); /* pti+PCID: the user ASID is stale */
    return 0;
}

int es_vm_zap(es_machine *m, uint64_t va, uint64_t len)
{
    struct es_vmas *s = es_vmas_get(m);
    if (!s || !es_vm_range_ok(m, va, len, 0))
        return -ENOMEM;
    pt_each(m, va, va + len, free_pte, NULL);
    es_tlb_flush(m);
    pti_user_flush(m);
    return 0;
}

int es_vm_protect(es_machine *m, uint64_t va, uint64_t len, int prot)
{
    struct es_vmas *s = es_vmas_get(m);
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
    if (!splits_ok(s, va, end) || reserve(s, 3))
        return -ENOMEM;
    prot &= ES_PROT_R | ES_PROT_W | ES_PROT_X;
    changing(s);
    /* VMA by VMA: each keeps its file and offset */
    split_at(s, va);
    split_at(s, end);
    for (vpos p = first_above(s, va); valid(s, p) && at(s, p)->start < end; p = next(s, p)) {
        at(s, p)->prot = prot;
        s->b[p.b]->dirty = true;
    }
    merge_range(s, va, end);
    pt_each(m, va, end, reprot_pte, &prot);
    es_tlb_flush(m);
    pti_user_flush(m); /* pti+PCID: the user ASID is stale */
    return 0;
}

struct move_ctx {
    uint64_t from, to;
    int prot;
    int err;
};

static void move_pte(es_machine *m, uint64_t va, uint64_t *pte, void *ctx)
{
    struct move_ctx *c = ctx;
    uint64_t *d = c->err ? NULL : es_pte(m, m->cr3, c->to + (va - c->from), true);
    if (!d) {
        c->err = -ENOMEM;
        return; /* left in place: unmapping the old range frees it */
    }
    *d = pte_for(m, (*pte & ES_PTE_ADDR) >> 12, c->prot);
    *pte = 0;
    if (m->hooks.pti_sync)
        m->hooks.pti_sync(m, c->to + (va - c->from));
}

int es_vm_move(es_machine *m, uint64_t old, uint64_t oldlen, uint64_t to, uint64_t newlen)
{
    int prot = es_vm_prot_at(m, old);
    if (prot < 0)
        return -EFAULT;
    uint64_t off = 0;
    es_vm_file *f = es_vm_file_at(m, old, &off); /* a file mapping stays one */
    int r = es_vm_map_file(m, to, newlen, prot, f, off);
    if (r)
        return r;
    /* the frames move with their page-table entries (Linux's
     * move_page_tables): cost follows the pages present */
    struct move_ctx c = {old, to, prot, 0};
    pt_each(m, old, old + (oldlen < newlen ? oldlen : newlen), move_pte, &c);
    if (c.err) {
        es_vm_unmap(m, to, newlen);
        return c.err;
    }
    es_vm_unmap(m, old, oldlen);
    return 0;
}

/* Recomputes a block's largest inner gap if it changed. */
static uint64_t block_gap(vblk *k)
{
    if (k->dirty) {
        k->maxgap = 0;
        for (uint32_t i = 1; i < k->n; i++)
            if (k->v[i].start - k->v[i - 1].end > k->maxgap)
                k->maxgap = k->v[i].start - k->v[i - 1].end;
        k->dirty = false;
    }
    return k->maxgap;
}

/* Top-down: the highest gap below mmap_base that fits (Linux's
 * arch_get_unmapped_area_topdown); whole blocks whose gaps are all too
 * small are stepped over. */
static uint64_t find_topdown(struct es_vmas *s, uint64_t len)
{
    uint64_t hi = s->mmap_base < s->top ? s->mmap_base : s->top;
    for (size_t b = s->nb; b-- > 0;) {
        vblk *k = s->b[b];
        if (k->v[0].start >= hi)
            continue;
        const es_vma *last = &k->v[k->n - 1];
        if (last->end <= hi && hi - last->end < len && block_gap(k) < len) {
            hi = k->v[0].start;
            continue;
        }
        for (uint32_t i = k->n; i-- > 0;) {
            const es_vma *a = &k->v[i];
            if (a->start >= hi)
                continue;
            if (a->end < hi && hi - a->end >= len)
                return hi - len;
            hi = a->start;
        }
    }
    if (hi >= ES_VM_MMAP_MIN + len)
        return hi - len;
    return 0;
}

uint64_t es_vm_find_free(es_machine *m, uint64_t len, uint64_t hint)
{
    struct es_vmas *s = es_vmas_get(m);
    if (!s || !len)
        return 0;
    len = (len + PAGE - 1) & ~(PAGE - 1);
    if (!len)
        return 0;
    hint &= ~(PAGE - 1);
    if (hint >= ES_VM_MMAP_MIN && hint + len > hint && hint + len <= s->top) {
        vpos p = first_above(s, hint);
        if (!valid(s, p) || at(s, p)->start >= hint + len)
            return hint;
    }
    return find_topdown(s, len);
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
    vpos p = first_above(s, va);
    while (va < end) {
        if (!valid(s, p) || at(s, p)->start > va || (at(s, p)->prot & prot) != prot)
            return false;
        va = at(s, p)->end;
        p = next(s, p);
    }
    return true;
}

/* The frame for the page at va of VMA a, in *pfn (0 when the cap is
 * reached): a file's page read from the file, or ES_DEMAND_SIGBUS when it
 * lies wholly past the end of the file (mm/filemap.c filemap_fault);
 * anonymous memory gets the shared zero frame for a read (Linux maps its
 * zero page: never-written memory costs nothing), a fresh one for a write. */
static int fault_frame(es_machine *m, const es_vma *a, uint64_t va, int access, uint64_t *pfn)
{
    if (a->file) {
        *pfn = es_frame_alloc(m); /* zeroed: the tail past EOF reads 0 */
        uint64_t off = a->off + ((va & ~(PAGE - 1)) - a->start);
        if (*pfn && a->file->read_page(a->file, off, es_phys(m, *pfn << 12))) {
            es_frame_free(m, *pfn);
            *pfn = 0;
            return ES_DEMAND_SIGBUS;
        }
        return 0;
    }
    if (access == ES_ACC_W)
        *pfn = es_frame_alloc(m);
    else
        *pfn = m->vmg.zero_pfn ? m->vmg.zero_pfn : (m->vmg.zero_pfn = es_frame_alloc(m));
    return 0;
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
    bool cow = false;
    if (pte && (*pte & (ES_PTE_P | SW_FRAME))) {
        cow = access == ES_ACC_W && (*pte & ES_PTE_ADDR) >> 12 == m->vmg.zero_pfn;
        if ((*pte & ES_PTE_P) && !cow)
            return -1; /* present and still refused: a real protection fault */
        if (!cow) {
            /* a kept frame whose VMA now allows access (should not happen,
             * as protect rewrites PTEs; repair it rather than fault) */
            *pte = pte_for(m, (*pte & ES_PTE_ADDR) >> 12, a->prot);
            es_tlb_flush_page(m, va);
            return 0;
        }
    }
    int prot = a->prot;
    pte = es_pte(m, m->cr3, va, true);
    uint64_t pfn = 0;
    if (pte && fault_frame(m, a, va, access, &pfn) == ES_DEMAND_SIGBUS)
        return ES_DEMAND_SIGBUS;
    if (!pfn) {
        snprintf(m->message, sizeof m->message,
                 "out of guest memory (cap %llu MiB) touching 0x%llx",
                 (unsigned long long)(m->mem_cap >> 20), (unsigned long long)va);
        return -1;
    }
    *pte = pte_for(m, pfn, prot);
    es_tlb_flush_page(m, va);
    if (m->hooks.pti_sync && !cow)
        m->hooks.pti_sync(m, va); /* pti: both PGDs see a new upper table */
    return 0;
}

void es_vm_set_layout(es_machine *m, uint64_t top, uint64_t mmap_base)
{
    struct es_vmas *s = es_vmas_get(m);
    if (!s)
        return;
    changing(s);
    s->top = top & ~(PAGE - 1);
    s->mmap_base = mmap_base & ~(PAGE - 1);
}

/* Frees the blocks of s and s itself (the file holds are the caller's). */
static void free_blocks(struct es_vmas *s)
{
    for (size_t b = 0; b < s->nb; b++)
        free(s->b[b]);
    for (int i = 0; i < NSPARE; i++)
        free(s->spare[i]);
    free(s->b);
    free(s);
}

struct es_vmas *es_vmas_clone(const struct es_vmas *s)
{
    struct es_vmas *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->top = s->top;
    c->mmap_base = s->mmap_base;
    c->files = s->files;
    c->keeper = s->keeper; /* a fork's child is as much the history's */
    c->b = malloc((s->nb ? s->nb : 1) * sizeof *c->b);
    c->capb = s->nb ? s->nb : 1;
    for (size_t b = 0; c->b && b < s->nb; b++, c->nb++)
        if (!(c->b[b] = malloc(sizeof(vblk))))
            break;
        else
            memcpy(c->b[b], s->b[b], sizeof(vblk));
    if (!c->b || c->nb < s->nb) {
        free_blocks(c);
        return NULL;
    }
    c->count = s->count;
    /* the copy's VMAs hold their files as the original's do */
    for (vpos p = {0, 0}; valid(c, p); p = next(c, p))
        if (at(c, p)->file)
            at(c, p)->file->refs++;
    return c;
}

void es_vmas_destroy(struct es_vmas *s)
{
    if (!s)
        return;
    for (vpos p = {0, 0}; valid(s, p); p = next(s, p))
        file_drop(s, at(s, p)->file);
    free_blocks(s);
}

void es_vm_set_keeper(struct es_vmas *s, es_vm_keeper *k)
{
    if (s)
        s->keeper = k;
}

es_vm_keeper *es_vm_keeper_of(const struct es_vmas *s)
{
    return s ? s->keeper : NULL;
}

void es_vm_vmas_free(struct es_vmas *s)
{
    es_vmas_destroy(s);
}

struct es_vmas *es_vm_vmas_copy(const struct es_vmas *s)
{
    struct es_vmas *c = es_vmas_clone(s);
    if (c)
        c->keeper = NULL; /* a copy is no address space's */
    return c;
}

void es_vm_vmas_swap(struct es_vmas *a, struct es_vmas *b)
{
    struct es_vmas t = *a;
    *a = *b;
    *b = t;
    b->keeper = a->keeper; /* each stays whose it was */
    a->keeper = t.keeper;
}

void es_vmas_end(struct es_vmas *s)
{
    if (s && s->keeper)
        s->keeper->dead(s->keeper, s);
    else
        es_vmas_destroy(s);
}

void es_vm_free(es_machine *m)
{
    struct es_vmas *s = m->vmas;
    if (!s)
        return;
    /* what the VMAs of every address space held, all at once: the machine
     * goes, so address spaces not released go with it */
    while (m->vmg.files) {
        es_vm_file *f = m->vmg.files;
        m->vmg.files = f->next;
        f->release(f);
    }
    free_blocks(s);
    m->vmas = NULL;
    m->hooks.demand_fault = NULL;
}
