/* mem.c - physical frames, page walks, TLB refill and the slow paths.
 *
 * The bottom of the memory stack: vm.c (the process's VMAs) sits on top of
 * this file and calls down into it.  The one call upward, demand paging
 * when a walk fails, goes through m->hooks.demand_fault, which vm.c
 * installs when it creates the VMA list (no VMAs, no demand paging). */
#include "mem.h"

#include <stdlib.h>
#include <sys/mman.h>

#include "fault.h"
#include "transient.h"

#define PAGE 4096ull
/* Frames come from 2 MiB host arenas reserved without backing: the host
 * gives a page memory when it is first written, so the host memory of
 * guest frames is the frames touched, with no allocator overhead per page
 * (one aligned_alloc per frame made a 64 MiB cap cost 142 MB). */
#define ARENA_FRAMES 512ull

/* An arena all zero: a freed machine's (es_spares), whose pages the host
 * has already given memory, spares the page faults of a fresh one, most
 * of a short run's time.  NULL when out of address space.  Out of line:
 * inlined, it made the callers' fast paths slower (es_phys, stores). */
static __attribute__((noinline)) uint8_t *new_arena(es_machine *m)
{
    void *p = es_spares_take_arena(m->spares);
    if (!p)
        p = mmap(NULL, ARENA_FRAMES * PAGE, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static uint8_t *arena(es_machine *m, uint64_t a)
{
    if (a >= m->narenas) {
        size_t n = m->narenas ? m->narenas : 16;
        while (n <= a)
            n *= 2;
        uint8_t **na = realloc(m->arenas, n * sizeof *na);
        if (!na)
            return NULL;
        memset(na + m->narenas, 0, (n - m->narenas) * sizeof *na);
        m->arenas = na;
        m->narenas = n;
    }
    if (!m->arenas[a] && !(m->arenas[a] = new_arena(m)))
        return NULL;
    return m->arenas[a];
}

void es_mem_unmap_arena(void *arena)
{
    munmap(arena, ARENA_FRAMES * PAGE);
}

/* Leaves arena a to m->spares all zero again: only frames with a host
 * page were ever written (frame_host hands out every pointer into it).
 * false when the spares have no room. */
static bool spare_arena(es_machine *m, size_t a)
{
    if (!m->spares)
        return false;
    uint64_t end = (a + 1) * ARENA_FRAMES < m->nframes ? (a + 1) * ARENA_FRAMES : m->nframes;
    for (uint64_t pfn = a * ARENA_FRAMES; pfn < end; pfn++)
        if (m->frames[pfn].host)
            memset(m->frames[pfn].host, 0, PAGE);
    return es_spares_keep_arena(m->spares, m->arenas[a]);
}

static uint8_t *frame_host(es_machine *m, uint64_t pfn)
{
    if (pfn == 0 || pfn >= m->nframes)
        return NULL;
    es_frame *f = &m->frames[pfn];
    if (!f->host) {
        uint8_t *a = arena(m, pfn / ARENA_FRAMES);
        if (!a)
            return NULL;
        f->host = a + (pfn % ARENA_FRAMES) * PAGE; /* zero until written */
    }
    return f->host;
}

void es_mem_free(es_machine *m)
{
    for (size_t a = 0; a < m->narenas; a++)
        if (m->arenas[a] && !spare_arena(m, a))
            munmap(m->arenas[a], ARENA_FRAMES * PAGE);
    free(m->arenas);
    m->arenas = NULL;
    m->narenas = 0;
}

uint64_t es_frame_alloc(es_machine *m)
{
    uint64_t pfn;
    if (m->frames_used * PAGE >= m->mem_cap)
        return 0;
    if (m->nfree_pfns) {
        pfn = m->free_pfns[--m->nfree_pfns];
    } else {
        if (m->next_free_pfn >= m->nframes)
            return 0;
        pfn = m->next_free_pfn++;
    }
    uint8_t *h = frame_host(m, pfn);
    if (!h)
        return 0;
    memset(h, 0, PAGE);
    es_code_stale(m, pfn); /* stale decodes of a previous owner die */
    m->frames[pfn].has_code = 0;
    m->frames_used++;
    return pfn;
}

void es_frame_free(es_machine *m, uint64_t pfn)
{
    if (pfn == 0 || pfn >= m->nframes)
        return;
    if (m->nfree_pfns == m->cap_free_pfns) {
        size_t nc = m->cap_free_pfns ? m->cap_free_pfns * 2 : 1024;
        uint64_t *n = realloc(m->free_pfns, nc * sizeof *n);
        if (!n)
            return; /* leak the frame rather than corrupt state */
        m->free_pfns = n;
        m->cap_free_pfns = nc;
    }
    m->free_pfns[m->nfree_pfns++] = pfn;
    es_code_stale(m, pfn);
    m->frames[pfn].has_code = 0;
    if (m->frames_used)
        m->frames_used--;
}

static void wlog_add(es_machine *m, uint64_t pfn);

uint8_t *es_phys(es_machine *m, uint64_t pa)
{
    uint8_t *h = frame_host(m, pa >> 12);
    if (__builtin_expect(m->wlog != NULL, 0) && h && m->wlog->any_phys)
        wlog_add(m, pa >> 12); /* a host service may write through it */
    return h ? h + (pa & (PAGE - 1)) : NULL;
}

uint64_t es_new_pml4(es_machine *m)
{
    return es_frame_alloc(m) << 12;
}

uint64_t *es_pte(es_machine *m, uint64_t cr3, uint64_t va, bool create)
{
    uint64_t table = cr3 & ES_PTE_ADDR;
    for (int level = 3; level >= 0; level--) {
        uint64_t *t = (uint64_t *)es_phys(m, table);
        if (!t)
            return NULL;
        uint64_t *e = &t[(va >> (12 + 9 * level)) & 511];
        if (level == 0)
            return e;
        if (!(*e & ES_PTE_P)) {
            if (!create)
                return NULL;
            uint64_t pfn = es_frame_alloc(m);
            if (!pfn)
                return NULL;
            *e = (pfn << 12) | ES_PTE_P | ES_PTE_W | ES_PTE_U;
        } else if (*e & ES_PTE_PS) {
            return NULL; /* a large page: no 4 KiB leaf to return */
        }
        table = *e & ES_PTE_ADDR;
    }
    return NULL;
}

static bool canonical(uint64_t va)
{
    return (uint64_t)((int64_t)(va << 16) >> 16) == va; /* shift unsigned: no UB */
}

/* Set in every failed walk's result: a supervisor read of a not-present
 * page has error code 0, which must not read as success.  Stripped before
 * the code reaches #PF. */
#define WALK_FAIL 0x80000000u

/* IA-32e 4-level walk (SDM Vol. 3A, 4.5).  Permissions combine across
 * levels: writable only if R/W at every level, user only if U/S at every
 * level, executable unless NX at any level (with EFER.NXE).  CR0.WP is
 * treated as set, as Linux runs. */
/* Lists frame pfn in es_run_fenced's es_wlog (once). */
static void wlog_add(es_machine *m, uint64_t pfn)
{
    es_wlog *w = m->wlog;
    es_frame *f = &m->frames[pfn];
    if (f->wlogged)
        return;
    if (w->n == w->cap) {
        size_t nc = w->cap ? w->cap * 2 : 64;
        uint64_t *np = realloc(w->pfn, nc * sizeof *np);
        if (!np) {
            w->overflow = true;
            return;
        }
        w->pfn = np;
        w->cap = nc;
    }
    f->wlogged = 1;
    w->pfn[w->n++] = pfn;
}

void es_wlog_clear(es_machine *m, es_wlog *w)
{
    for (size_t i = 0; i < w->n; i++)
        m->frames[w->pfn[i]].wlogged = 0;
    w->n = 0;
    w->overflow = false;
}

static uint32_t walk(es_machine *m, uint64_t va, int access, int user, uint64_t *pa,
                     uint32_t *perm)
{
    uint32_t pfec = (access == ES_ACC_W ? ES_PFEC_W : 0) | (user ? ES_PFEC_U : 0) |
                    (access == ES_ACC_X && (m->efer & (1u << 11)) ? ES_PFEC_I : 0);
    /* *pa receives the full physical address (page offset included) */
    if (!(m->cr0 & 0x80000000u)) { /* paging off: identity */
        *pa = va;
        *perm = ES_TP_W | ES_TP_U | ES_TP_X;
        return 0;
    }
    uint64_t table = m->cr3 & ES_PTE_ADDR;
    uint32_t p = ES_TP_W | ES_TP_U | ES_TP_X;
    bool nxe = (m->efer >> 11) & 1;
    for (int level = 3; level >= 0; level--) {
        uint64_t *t = (uint64_t *)es_phys(m, table);
        if (!t)
            return pfec | WALK_FAIL;
        uint64_t *ep = &t[(va >> (12 + 9 * level)) & 511];
        uint64_t e = *ep;
        if (!(e & ES_PTE_P))
            return pfec | WALK_FAIL;
        if (!(e & ES_PTE_W))
            p &= ~ES_TP_W;
        if (!(e & ES_PTE_U))
            p &= ~ES_TP_U;
        if (nxe && (e & ES_PTE_NX))
            p &= ~ES_TP_X;
        bool leaf = level == 0 || ((level == 1 || level == 2) && (e & ES_PTE_PS));
        if (leaf) {
            uint64_t span = 1ull << (12 + 9 * level);
            *pa = (e & ES_PTE_ADDR & ~(span - 1)) | (va & (span - 1));
            /* permission check on the combined rights */
            bool ok = true;
            if (user && !(p & ES_TP_U))
                ok = false;
            if (access == ES_ACC_W && !(p & ES_TP_W))
                ok = false;
            if (access == ES_ACC_X && !(p & ES_TP_X))
                ok = false;
            if (!ok)
                return pfec | ES_PFEC_P | WALK_FAIL;
            e |= ES_PTE_A;
            if (access == ES_ACC_W)
                e |= ES_PTE_D;
            if (__builtin_expect(m->spec != NULL, 0) && *ep != e)
                es_transient_log(m, table + ((va >> (12 + 9 * level)) & 511) * 8, 8);
            if (__builtin_expect(m->wlog != NULL, 0) && *ep != e)
                wlog_add(m, table >> 12); /* an unobserved run set A or D here */
            *ep = e;
            *perm = p;
            return 0;
        }
        table = e & ES_PTE_ADDR;
    }
    return pfec | WALK_FAIL;
}

int es_walk_read(es_machine *m, uint64_t va, bool user, uint64_t *pa)
{
    uint32_t perm;
    if (m->mode == ES_MODE_64 && !canonical(va))
        return -1;
    return walk(m, va, ES_ACC_R, user, pa, &perm) ? -1 : 0;
}

uint32_t es_translate(es_machine *m, uint64_t va, int access, int user, uint64_t *pa)
{
    uint32_t perm;
    return walk(m, va, access, user, pa, &perm);
}

void es_update_ac(es_machine *m)
{
    bool want = m->cpl == 3 && (m->cr0 & (1u << 18)) && (m->rflags & ES_AC);
    if (want != m->ac_check) {
        m->ac_check = want;
        es_tlb_flush(m);
    }
}

/* #AC(0) for a misaligned 2/4/8-byte data access with checking on. */
static int misaligned(es_machine *m, uint64_t va, unsigned n)
{
    if (m->ac_check && (n == 2 || n == 4 || n == 8) && (va & (n - 1))) {
        es_raise(m, ES_VEC_AC, 0);
        return 1;
    }
    return 0;
}

void es_tlb_flush(es_machine *m)
{
    for (int i = 0; i < ES_TLB_SIZE; i++)
        m->tlb[i].tag = 1;
    m->fetch_va = 1;
}

void es_tlb_flush_page(es_machine *m, uint64_t va)
{
    es_tlbe *e = es_tlb_slot(m, va);
    if ((e->tag & ~1ull) == (va & ~(PAGE - 1))) /* a shadow entry too (xlate) */
        e->tag = 1;
    if (m->fetch_va == (va & ~(PAGE - 1)))
        m->fetch_va = 1;
}

/* Translates one page for access, demand-faulting VMAs; on failure records
 * the fault.  Fills the TLB unless observers need every access. */
static int xlate(es_machine *m, uint64_t va, int access, uint64_t *pa, uint32_t *perm);

int es_fetch_walk(es_machine *m, uint64_t va, uint64_t *pa)
{
    uint32_t perm;
    if (xlate(m, va, ES_ACC_X, pa, &perm))
        return -1;
    *pa &= ~(PAGE - 1);
    return 0;
}

/* With memory observers attached (m->tlb_bypass) the TLB must never let
 * an access past the slow path, yet walking the page tables for each one
 * cost ~10% of an observed run.  So the slow path keeps translations of
 * its own in the TLB's slots under tags with bit 0 set: no fast path
 * (es_host_ptr, es_fetch_page, the block engine) ever matches one, flushes
 * clear them with the rest, and only xlate reads them.  SHADOW_D marks one
 * made by a write walk (the PTE's dirty bit set): a write through an entry
 * a read made walks, as the first write to a page did before. */
#define SHADOW_D 0x8u

static inline bool shadow_on(const es_machine *m, uint64_t va)
{
    /* page 0's tag would be 1, the empty slot's */
    return m->tlb_bypass && !m->ac_check && !m->spec && va >= PAGE;
}

static inline bool shadow_hit(es_machine *m, uint64_t va, int access, int user, uint64_t *pa,
                              uint32_t *perm)
{
    const es_tlbe *e = es_tlb_slot(m, va);
    uint32_t p = e->perm;
    if (e->tag != ((va & ~(PAGE - 1)) | 1) || (user && !(p & ES_TP_U)) ||
        (access == ES_ACC_W && !(p & SHADOW_D)) || (access == ES_ACC_X && !(p & ES_TP_X)))
        return false;
    *pa = e->pa | (va & (PAGE - 1));
    *perm = p & (ES_TP_W | ES_TP_U | ES_TP_X);
    return true;
}

static inline void shadow_fill(es_machine *m, uint64_t va, int access, uint64_t pa, uint32_t perm)
{
    es_tlbe *e = es_tlb_slot(m, va);
    e->tag = (va & ~(PAGE - 1)) | 1;
    e->pa = pa & ~(PAGE - 1);
    e->perm = perm | (access == ES_ACC_W ? SHADOW_D : 0);
}

static int xlate(es_machine *m, uint64_t va, int access, uint64_t *pa, uint32_t *perm)
{
    int user = m->cpl == 3;
    if (m->mode == ES_MODE_64 && !canonical(va)) {
        es_raise(m, ES_VEC_GP, 0);
        return -1;
    }
    if (shadow_on(m, va) && shadow_hit(m, va, access, user, pa, perm)) {
        if (__builtin_expect(m->wlog != NULL, 0) && access == ES_ACC_W)
            wlog_add(m, *pa >> 12);
        return 0;
    }
    uint32_t pfec = walk(m, va, access, user, pa, perm);
    /* demand paging of the process's VMAs, also for a guest kernel's own
     * accesses to user addresses (get_user, the i386 arg6 load), which
     * Linux's page-fault handler serves the same way */
    int demand = -1;
    if (pfec && !m->spec && (user || (m->has_kernel && va < (1ull << 47))) && m->hooks.demand_fault &&
        (demand = m->hooks.demand_fault(m, va, access)) == 0)
        pfec = walk(m, va, access, user, pa, perm);
    /* Meltdown (a wrong-path window of a CPU that has it): a user read of
     * a present supervisor page gets its data before the check faults */
    if (__builtin_expect(m->spec != NULL, 0) && pfec && user && access == ES_ACC_R &&
        (pfec & ES_PFEC_P) && es_transient_meltdown(m))
        pfec = walk(m, va, access, 0, pa, perm);
    if (pfec) {
        es_raise(m, ES_VEC_PF, pfec & ~WALK_FAIL);
        m->fault.addr = va;
        m->fault.write = access == ES_ACC_W;
        m->fault.bus = demand == ES_DEMAND_SIGBUS;
        return -1;
    }
    uint8_t *host = es_phys(m, *pa & ~(PAGE - 1));
    if (!host) {
        es_raise(m, ES_VEC_MC, 0);
        return -1;
    }
    es_frame *f = &m->frames[*pa >> 12];
    if (shadow_on(m, va))
        shadow_fill(m, va, access, *pa, *perm);
    if (!m->tlb_bypass && !m->ac_check) {
        es_tlbe *e = es_tlb_slot(m, va);
        e->tag = va & ~(PAGE - 1);
        e->addend = (uintptr_t)host - (va & ~(PAGE - 1));
        e->pa = *pa & ~(PAGE - 1);
        /* a page holding decoded code is never writable through the TLB, so
         * every store to it reaches es_write_slow and invalidates decodes */
        e->perm = *perm & ~(f->has_code ? ES_TP_W : 0);
        if (__builtin_expect(m->wlog != NULL, 0) && (e->perm & ES_TP_W))
            wlog_add(m, *pa >> 12); /* stores may reach it through the TLB */
    }
    if (__builtin_expect(m->wlog != NULL, 0) && access == ES_ACC_W)
        wlog_add(m, *pa >> 12);
    return 0;
}

static void notify_mem(es_machine *m, uint64_t va, unsigned n, int write)
{
    for (int i = 0; i < m->nobs; i++)
        if (m->obs[i].mem)
            m->obs[i].mem(m->obs[i].ctx, m, va, n, write);
}

int es_read_slow(es_machine *m, uint64_t va, void *dst, unsigned n)
{
    uint8_t *d = dst;
    if (m->mode == ES_MODE_32)
        va &= 0xffffffffu;
    if (misaligned(m, va, n))
        return -1;
    /* translate every page first so a fault leaves no partial effect */
    uint64_t first = va, end = va + n;
    while (n) {
        uint64_t pa;
        uint32_t perm;
        if (xlate(m, va, ES_ACC_R, &pa, &perm))
            return -1;
        unsigned chunk = (unsigned)(PAGE - (va & (PAGE - 1)));
        if (chunk > n)
            chunk = n;
        memcpy(d, es_phys(m, pa), chunk);
        d += chunk;
        va += chunk;
        n -= chunk;
    }
    if (m->nobs)
        notify_mem(m, first, (unsigned)(end - first), 0);
    return 0;
}

int es_write_slow(es_machine *m, uint64_t va, const void *src, unsigned n)
{
    const uint8_t *s = src;
    if (m->mode == ES_MODE_32)
        va &= 0xffffffffu;
    if (misaligned(m, va, n))
        return -1;
    uint64_t pas[2];
    unsigned chunks[2];
    int np = 0;
    uint64_t v = va;
    unsigned left = n;
    /* check all pages (at most two for n <= 4096... larger n loops) before writing */
    if (n > PAGE) {
        while (left) {
            unsigned c = (unsigned)(PAGE - (v & (PAGE - 1)));
            if (c > left)
                c = left;
            if (es_write_slow(m, v, s, c))
                return -1;
            s += c;
            v += c;
            left -= c;
        }
        return 0;
    }
    while (left) {
        uint64_t pa;
        uint32_t perm;
        if (xlate(m, v, ES_ACC_W, &pa, &perm))
            return -1;
        unsigned c = (unsigned)(PAGE - (v & (PAGE - 1)));
        if (c > left)
            c = left;
        pas[np] = pa;
        chunks[np++] = c;
        v += c;
        left -= c;
    }
    for (int i = 0; i < np; i++) {
        es_frame *f = &m->frames[pas[i] >> 12];
        if (f->has_code) {
            /* self-modifying code: every decode from this page is stale,
             * and a block running on it must stop after this instruction
             * (sim/block.c leaves a block when the fetch page is reset) */
            es_code_stale(m, pas[i] >> 12);
            f->has_code = 0;
            m->fetch_va = 1;
        }
        if (__builtin_expect(m->spec != NULL, 0))
            es_transient_log(m, pas[i], chunks[i]); /* the squash puts it back */
        memcpy(es_phys(m, pas[i]), s, chunks[i]);
        s += chunks[i];
    }
    if (m->nobs)
        notify_mem(m, va, n, 1);
    return 0;
}

int es_read(es_machine *m, uint64_t va, void *dst, unsigned n)
{
    uint8_t *p = es_host_ptr(m, va, n, 0);
    if (p) {
        memcpy(dst, p, n);
        return 0;
    }
    return es_read_slow(m, va, dst, n);
}

int es_write(es_machine *m, uint64_t va, const void *src, unsigned n)
{
    uint8_t *p = es_host_ptr(m, va, n, 1);
    if (p) {
        memcpy(p, src, n);
        return 0;
    }
    return es_write_slow(m, va, src, n);
}

/* Kernel-side copies: supervisor rights, demand faulting of user VMAs. */
static int kcopy(es_machine *m, uint64_t va, uint8_t *host, size_t n, int write)
{
    while (n) {
        size_t c = PAGE - (va & (PAGE - 1));
        if (c > n)
            c = n;
        /* a TLB entry granting the access at the current privilege says
         * what the walk would (and a writable one is not a code page's) */
        uint8_t *t = es_host_ptr(m, va, (unsigned)c, write);
        if (t) {
            if (__builtin_expect(m->wlog != NULL, 0) && write)
                wlog_add(m, es_tlb_slot(m, va)->pa >> 12);
            memcpy(write ? t : host, write ? host : t, c);
            host += c;
            va += c;
            n -= c;
            continue;
        }
        uint64_t pa;
        uint32_t perm;
        uint32_t pfec = walk(m, va, write ? ES_ACC_W : ES_ACC_R, 0, &pa, &perm);
        if (pfec && m->hooks.demand_fault &&
            m->hooks.demand_fault(m, va, write ? ES_ACC_W : ES_ACC_R) == 0)
            pfec = walk(m, va, write ? ES_ACC_W : ES_ACC_R, 0, &pa, &perm);
        if (pfec)
            return -1;
        uint8_t *g = es_phys(m, pa);
        if (!g)
            return -1;
        if (write) {
            es_frame *f = &m->frames[pa >> 12];
            if (__builtin_expect(m->wlog != NULL, 0))
                wlog_add(m, pa >> 12);
            if (f->has_code) {
                es_code_stale(m, pa >> 12);
                f->has_code = 0;
                m->fetch_va = 1;
            }
            memcpy(g, host, c);
        } else {
            memcpy(host, g, c);
        }
        host += c;
        va += c;
        n -= c;
    }
    return 0;
}

int es_copy_from_guest(es_machine *m, void *dst, uint64_t va, size_t n)
{
    return kcopy(m, va, dst, n, 0);
}

int es_copy_to_guest(es_machine *m, uint64_t va, const void *src, size_t n)
{
    return kcopy(m, va, (uint8_t *)src, n, 1);
}

size_t es_fetch_bytes(es_machine *m, uint64_t va, uint8_t *dst, size_t n)
{
    size_t got = 0;
    while (got < n) {
        uint64_t pa;
        uint32_t perm;
        uint64_t v = va + got;
        if (m->mode == ES_MODE_32)
            v &= 0xffffffffu;
        if (xlate(m, v, ES_ACC_X, &pa, &perm))
            return got; /* the fault stays recorded; it matters only if the
                           decoder needs bytes from this page */
        size_t c = PAGE - (v & (PAGE - 1));
        if (c > n - got)
            c = n - got;
        memcpy(dst + got, es_phys(m, pa), c);
        got += c;
    }
    return got;
}
