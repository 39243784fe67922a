/* dbg_undo.c - the undo log behind reverse step and reverse continue.
 *
 * Why a log and not periodic snapshots + deterministic re-execution: the
 * guest's syscalls reach the host (files, the terminal, the clock), so
 * re-executing from a snapshot would repeat host-side effects (write the
 * same bytes to a file twice) and could read different data the second
 * time; a log of old values restores exactly the state the student saw,
 * and stepping back one instruction costs one record, not a replay.
 *
 * Each executed instruction gets one record:
 *   - the 8-byte words of the architectural state (es_machine from gpr to
 *     the TSC: registers, segments, CRs, MSRs, descriptor tables) that the
 *     instruction changed, with their old values, and the instruction count;
 *   - the old bytes of every guest memory write, by physical address (the
 *     address space may change, e.g. with PTI's CR3 switch).  The `mem`
 *     observer is told about a write after it happened, so the old bytes come
 *     from a mirror: a copy of every guest frame as it was after the
 *     previous instruction, updated with each write; the accessed/dirty
 *     bits the CPU's page walks set are found the same way (the leaf entry
 *     is compared with the mirror after every access and fetch);
 *   - the taint labels the instruction changed (registers, flags, and the
 *     old labels of the bytes it wrote: the session's observer runs before
 *     the taint observer, so it still sees them) and the pt_regs tracking.
 * Memory that changes without a CPU write is found by comparing frames
 * with the mirror: after a VMCALL (the host servicing a syscall), the
 * frames the sim lists as touched during it (es_wlog with any_phys);
 * after a step that allocated frames or switched CR3, every frame.
 * Those changes are logged the same way, so reverse restores guest memory
 * even across a syscall.
 * The frame allocator is logged as well (REC_ALLOC: its counters and the
 * entries of its free stack a record changed), so that a reverse gives
 * back exactly the frames the steps took and stepping forward again takes
 * the same ones; and a VMCALL's record holds the host's record of the
 * process table (REC_HOST, sim/host/hist.c: tasks made, ended and
 * switched to, which come back or go as the guest's memory does).
 * What is not undone: host-side effects (bytes written to files or the
 * terminal, file offsets, the host's descriptor table, changes to a VMA
 * list made in place: a mapping made stays made) and the cycle model's
 * clock.
 *
 * User code between two kernel entries needs none of this per instruction
 * (the taint observer does not follow it, nothing of the pt_regs tracking
 * changes, and it cannot reach the host): a continue runs it unobserved
 * through the block engine (es_run_fenced, stopping before each entry
 * instruction, breakpoint and goal) as one record of the run -- the words
 * of the architectural state it changed and the old bytes of the frames
 * it may have written (the sim lists them) -- and reverse steps into such
 * a record by restoring its start and running it again, deterministically,
 * up to the instruction wanted (sim code has no other input there; RDTSC
 * is fenced: it reads the host's clock).
 *
 * Kernel code between two VMCALLs is recorded as one record of the run as
 * well (dbg_undo_run_begin/end, dbg_run_kernel), though each of its
 * instructions still goes through es_step with every observer (taint and
 * the pt_regs tracking follow the kernel): the sim's list of written frames
 * (es_wlog) stays attached for the whole run and the frames are compared
 * with the mirror at its end, so a write costs only the log of the taint
 * labels it replaces (the taint observer changes them right after; the
 * oldest label of a byte is the one restored, as entries are applied newest
 * first), and an access no compare of page-table entries.  Reverse re-runs
 * such a record with the observers, as it re-runs user code.  A record's
 * span counts steps, not instructions: a fault the kernel takes is a step
 * that retires nothing.
 *
 * Left out of every record: the taint observer's vector-register labels
 * (a kernel run's record has them: a re-run must start from them) and its
 * pending exception frame (labelled at the instruction after a delivered
 * exception; no kernel run starts there, see dbg_int.h's exc_pending).
 *
 * The log is bounded by steps (cfg.undo_insns) and bytes (cfg.undo_bytes);
 * the oldest records are dropped first.
 */
#include <stdlib.h>
#include <string.h>

#include "dbg_int.h"
#include "host.h"
#include "mem.h"
#include "seg.h"

#define PAGE 4096u

enum { REC_ARCH = 'A', REC_MEM = 'M', REC_TREG = 'R', REC_TMEM = 'T', REC_TZERO = 'Z',
       REC_TONE = 'O', REC_TRACK = 'K', REC_TVEC = 'V', REC_ALLOC = 'L', REC_FREE = 'F',
       REC_HOST = 'H' };

static size_t entry_size(const uint8_t *p);
static bool fstack_sync(dbg_undo *u, const es_machine *m);

#define NTVEC (ES_TAINT_NVREG * ES_TAINT_NLANE)

static int sput(dbg_undo *u, const void *p, size_t n)
{
    if (u->slen + n > u->scap) {
        size_t nc = u->scap ? u->scap * 2 : 4096;
        while (nc < u->slen + n)
            nc *= 2;
        uint8_t *ns = realloc(u->scratch, nc);
        if (!ns)
            return -1;
        u->scratch = ns;
        u->scap = nc;
    }
    memcpy(u->scratch + u->slen, p, n);
    u->slen += n;
    return 0;
}

static void put_u8(dbg_undo *u, uint8_t v) { sput(u, &v, 1); }
static void put_u64(dbg_undo *u, uint64_t v) { sput(u, &v, 8); }

/* An entry's head in one piece (a kernel run logs one per write):
 * tag, a 64-bit address, a 16-bit count or word index. */
static void put_head(dbg_undo *u, uint8_t tag, uint64_t a, uint16_t n)
{
    uint8_t h[11];
    h[0] = tag;
    memcpy(h + 1, &a, 8);
    memcpy(h + 9, &n, 2);
    sput(u, h, sizeof h);
}

static uint8_t *frame_ptr(es_machine *m, uint64_t pfn)
{
    return pfn && pfn < m->nframes ? m->frames[pfn].host : NULL;
}

int dbg_undo_init(es_dbg *d)
{
    dbg_undo *u = &d->undo;
    es_machine *m = d->m;
    memset(u, 0, sizeof *u);
    u->cap = d->cfg.undo_insns ? d->cfg.undo_insns : 1000000;
    u->insns = 0;
    u->max_bytes = d->cfg.undo_bytes ? d->cfg.undo_bytes : (size_t)256 << 20;
    /* the ring grows with the records it holds (grow_ring): a history of
     * runs holds far fewer records than steps, and a ring of cap slots
     * (24 MiB for 1M) was walked through, page by page, all the same */
    u->rcap = u->cap < 4096 ? u->cap : 4096;
    u->ring = calloc(u->rcap, sizeof *u->ring);
    u->mirror = calloc(m->nframes ? m->nframes : 1, sizeof *u->mirror);
    u->nmirror = m->nframes;
    if (!u->ring || !u->mirror)
        return -1;
    for (uint64_t p = 0; p < m->nframes; p++) {
        uint8_t *h = frame_ptr(m, p);
        if (!h)
            continue;
        if (!(u->mirror[p] = malloc(PAGE)))
            return -1;
        memcpy(u->mirror[p], h, PAGE);
    }
    /* the host's tasks are undone with the rest (without its history, out
     * of host memory, a reverse leaves them as they are, as it once did) */
    es_host_history(m);
    return fstack_sync(u, m) ? 0 : -1;
}

/* A record's blob: from the pool of freed ones of its size class
 * (DBG_SMALL << c bytes) -- one per step, so malloc and free were a fifth
 * of a `continue`; a kernel run's (a few hundred bytes to a few KiB)
 * likewise.  -1: larger than every class. */
static int blob_class(size_t len)
{
    int c = 0;
    for (size_t cap = DBG_SMALL; cap < len; cap <<= 1)
        if (++c == DBG_NCLASS)
            return -1;
    return c;
}

static uint8_t *blob_alloc(dbg_undo *u, size_t len)
{
    int c = blob_class(len);
    if (c < 0)
        return malloc(len);
    if (u->npool[c])
        return u->pool[c][--u->npool[c]];
    return malloc((size_t)DBG_SMALL << c);
}

static void blob_free(dbg_undo *u, dbg_rec *r)
{
    int c = blob_class(r->len);
    if (c >= 0) {
        if (u->npool[c] == u->cappool[c]) {
            size_t nc = u->cappool[c] ? u->cappool[c] * 2 : 1024;
            uint8_t **np = realloc(u->pool[c], nc * sizeof *np);
            if (np) {
                u->pool[c] = np;
                u->cappool[c] = nc;
            }
        }
        if (u->npool[c] < u->cappool[c]) {
            u->pool[c][u->npool[c]++] = r->blob;
            r->blob = NULL;
            return;
        }
    }
    free(r->blob);
    r->blob = NULL;
}

/* A record that leaves the history: the host's records in it let go of
 * what only they could bring back (a reaped task, an exited process). */
static void drop_host(es_machine *m, const uint8_t *b, size_t len)
{
    for (const uint8_t *p = b + 8, *end = b + len; p < end;) {
        size_t n = entry_size(p);
        if (!n)
            break;
        if (*p == REC_HOST) {
            es_host_rec *h;
            memcpy(&h, p + 1, sizeof h);
            es_host_rec_drop(m, h);
        }
        p += n;
    }
}

static void drop_oldest(dbg_undo *u, es_machine *m)
{
    dbg_rec *r = &u->ring[u->head];
    if (r->host)
        drop_host(m, r->blob, r->len);
    u->bytes -= r->len;
    u->insns -= r->span;
    blob_free(u, r);
    u->head = (u->head + 1) % u->rcap;
    u->count--;
}

void dbg_undo_free(es_dbg *d)
{
    dbg_undo *u = &d->undo;
    while (u->count)
        drop_oldest(u, d->m);
    if (u->mirror)
        for (uint64_t p = 0; p < u->nmirror; p++)
            free(u->mirror[p]);
    free(u->mirror);
    if (d->m)
        es_wlog_clear(d->m, &u->wlog);
    free(u->wlog.pfn);
    free(u->ring);
    free(u->scratch);
    free(u->fstack);
    for (int c = 0; c < DBG_NCLASS; c++) {
        for (size_t i = 0; i < u->npool[c]; i++)
            free(u->pool[c][i]);
        free(u->pool[c]);
    }
    memset(u, 0, sizeof *u);
}

static void taint_regs(const es_dbg *d, es_label out[17])
{
    if (d->taint)
        es_taint_regs(d->taint, out);
    else
        memset(out, 0, 17 * sizeof *out);
}

/* The frame allocator's state (sim/mem.c), with the frames the VM layer
 * made on first need (freed again if a reverse goes back past it). */
static void alloc_state(const es_machine *m, uint64_t out[5])
{
    out[0] = m->frames_used;
    out[1] = m->next_free_pfn;
    out[2] = m->nfree_pfns;
    out[3] = m->vmg.zero_pfn;
    out[4] = m->vmg.kstack_pdpt;
}

/* The copy of the free stack brought up to date; false when host memory
 * ran out (the history cannot be trusted to give frames back). */
static bool fstack_sync(dbg_undo *u, const es_machine *m)
{
    size_t n = m->nfree_pfns;
    if (n > u->capfstack) {
        size_t cap = u->capfstack ? u->capfstack : 1024;
        while (cap < n)
            cap *= 2;
        uint64_t *f = realloc(u->fstack, cap * sizeof *f);
        if (!f)
            return false;
        u->fstack = f;
        u->capfstack = cap;
    }
    if (n)
        memcpy(u->fstack, m->free_pfns, n * sizeof *u->fstack);
    u->nfstack = n;
    alloc_state(m, u->alloc_synced);
    return true;
}

/* Frames may have been taken or given back during the record (a fork's
 * copy, an exit, a demand fault): the allocator's old state and the
 * entries of the free stack below its old top that differ now or were
 * popped (still there, but a later record's pushes overwrite them, and
 * its undo puts back only what lay below its own start).  es_frame_alloc
 * pops and es_frame_free pushes, so with these put back a reverse frees
 * exactly the frames the steps took and takes back those they freed
 * (their contents come back as REC_MEM), and stepping forward again gets
 * the same frames: the same page tables and CR3 values as the first time.
 * A VMCALL's record looks even when the counters are as they were (a
 * frame freed and another taken). */
static void log_alloc(dbg_undo *u, es_machine *m, bool changed)
{
    size_t old = u->alloc_before[2] < u->nfstack ? u->alloc_before[2] : u->nfstack;
    size_t top = m->nfree_pfns;
    for (size_t i = 0; i < old; i++)
        if (i >= top || m->free_pfns[i] != u->fstack[i]) {
            if (!changed) {
                put_u8(u, REC_ALLOC);
                sput(u, u->alloc_before, sizeof u->alloc_before);
                changed = true;
            }
            put_u8(u, REC_FREE);
            put_u64(u, i);
            put_u64(u, u->fstack[i]);
        }
    if (changed && !fstack_sync(u, m))
        u->lost = true;
}

void dbg_undo_host_begin(es_dbg *d)
{
    dbg_undo *u = &d->undo;
    if (u->recording && !u->host_step) {
        es_host_step_begin(d->m);
        u->host_step = true;
    }
}

/* The host's record of the step's changes to the process table, if any,
 * goes in the record. */
static void log_host(dbg_undo *u, es_machine *m)
{
    es_host_rec *h = NULL;
    u->host_step = false;
    if (es_host_step_end(m, &h)) {
        u->lost = true;
        return;
    }
    if (!h)
        return;
    uint8_t e[1 + sizeof h];
    e[0] = REC_HOST;
    memcpy(e + 1, &h, sizeof h);
    if (sput(u, e, sizeof e)) {
        es_host_rec_drop(m, h); /* the history goes: nothing may come back */
        u->lost = true;
        return;
    }
    u->rec_host = true;
}

void dbg_undo_begin(es_dbg *d)
{
    dbg_undo *u = &d->undo;
    es_machine *m = d->m;
    u->slen = 0;
    u->recording = true;
    u->resync = false;
    memcpy(u->arch_before, (const uint8_t *)m + DBG_ARCH_OFF, sizeof u->arch_before);
    taint_regs(d, u->treg_before);
    u->icount_before = m->icount;
    u->track_before = d->track;
    alloc_state(m, u->alloc_before);
    u->cr3_before = m->cr3;
    u->rec_host = false;
    /* frames taken or freed outside a record (none should be) are not
     * undone, but must not be taken for the record's own */
    if (memcmp(u->alloc_before, u->alloc_synced, sizeof u->alloc_before) && !fstack_sync(u, m))
        u->lost = true;
    put_u64(u, m->icount);
}

/* Logs the old bytes (and labels) of pa[0..n) from the mirror, then
 * brings the mirror up to date. */
static void log_phys(dbg_undo *u, es_machine *m, uint64_t pa, unsigned n)
{
    uint64_t pfn = pa >> 12;
    unsigned off = (unsigned)(pa & (PAGE - 1));
    uint8_t *h = frame_ptr(m, pfn);
    if (pfn >= u->nmirror || !u->mirror[pfn] || !h) {
        u->resync = true; /* a frame that appeared during this step */
        return;
    }
    put_head(u, REC_MEM, pa, (uint16_t)n);
    sput(u, u->mirror[pfn] + off, n);
    memcpy(u->mirror[pfn] + off, h + off, n);
}

/* The page walk of an access sets the leaf entry's accessed (and, for a
 * write, dirty) bit (SDM Vol. 3A, 4.8) without a memory notification: the
 * entry is compared with the mirror after each access so that its old
 * value is logged like any other write. */
static void pte_changed(dbg_undo *u, es_machine *m, uint64_t pte_pa)
{
    uint64_t pfn = pte_pa >> 12;
    const uint8_t *h = frame_ptr(m, pfn);
    if (!pte_pa || !h || pfn >= u->nmirror || !u->mirror[pfn])
        return;
    unsigned off = (unsigned)(pte_pa & (PAGE - 1));
    if (memcmp(u->mirror[pfn] + off, h + off, 8))
        log_phys(u, m, pte_pa, 8);
}

/* Logs the labels of [va, va+n) before a write (the taint observer has
 * not seen it yet): REC_TZERO when they are all clean, the common case,
 * REC_TONE when they are all one label (a store labels all its bytes
 * alike: a kernel run's pushes of user registers), else each byte's.  A
 * write of up to 64 bytes reads each label once (a lookup per byte is what
 * it costs). */
static void log_labels(dbg_undo *u, const es_taint *t, uint64_t va, unsigned n)
{
    es_label l[64];
    es_label any = 0, diff = 0;
    if (n > 0xffff)
        n = 0xffff;
    if (n <= 64)
        for (unsigned i = 0; i < n; i++) {
            any |= l[i] = es_taint_mem(t, va + i, 1);
            diff |= l[i] ^ l[0];
        }
    else
        any = diff = es_taint_mem(t, va, n);
    put_head(u, !any ? REC_TZERO : diff ? REC_TMEM : REC_TONE, va, (uint16_t)n);
    if (!any)
        return;
    if (!diff) {
        sput(u, l, sizeof *l);
        return;
    }
    if (n <= 64) {
        sput(u, l, n * sizeof *l);
        return;
    }
    for (unsigned i = 0; i < n; i++) {
        es_label b = es_taint_mem(t, va + i, 1);
        sput(u, &b, sizeof b);
    }
}

void dbg_undo_mem_write(es_dbg *d, uint64_t va, unsigned n)
{
    dbg_undo *u = &d->undo;
    es_machine *m = d->m;
    if (!u->recording)
        return;
    if (d->taint)
        log_labels(u, d->taint, va, n);
    if (u->by_frame)
        return; /* the frame is listed (wlog) and compared at the run's end */
    while (n) {
        unsigned c = PAGE - (unsigned)(va & (PAGE - 1));
        if (c > n)
            c = n;
        uint64_t pa, pte;
        if (dbg_walk(m, va, &pa, &pte)) {
            log_phys(u, m, pa, c);
            pte_changed(u, m, pte);
        } else {
            u->resync = true;
        }
        va += c;
        n -= c;
    }
}

void dbg_undo_pte(es_dbg *d, uint64_t va, unsigned n)
{
    dbg_undo *u = &d->undo;
    /* in a kernel run the walk lists the table whose bits it set */
    if (!u->recording || u->by_frame || !n)
        return;
    uint64_t pa, pte;
    if (dbg_walk(d->m, va, &pa, &pte))
        pte_changed(u, d->m, pte);
    uint64_t last = va + n - 1;
    if ((last ^ va) >> 12 && dbg_walk(d->m, last, &pa, &pte))
        pte_changed(u, d->m, pte);
}

/* The first byte in [lo, hi) where a and b differ (one does), by halving
 * with memcmp: a kernel stack's frame changes near one end of the page (a
 * byte loop was a tenth of a continue). */
static unsigned first_diff(const uint8_t *a, const uint8_t *b, unsigned lo, unsigned hi)
{
    while (hi - lo > 64) {
        unsigned mid = lo + (hi - lo) / 2;
        if (memcmp(a + lo, b + lo, mid - lo))
            hi = mid;
        else
            lo = mid;
    }
    while (a[lo] == b[lo])
        lo++;
    return lo;
}

/* One past the last byte in [lo, hi) where a and b differ (one does). */
static unsigned last_diff(const uint8_t *a, const uint8_t *b, unsigned lo, unsigned hi)
{
    while (hi - lo > 64) {
        unsigned mid = lo + (hi - lo) / 2;
        if (memcmp(a + mid, b + mid, hi - mid))
            lo = mid;
        else
            hi = mid;
    }
    while (a[hi - 1] == b[hi - 1])
        hi--;
    return hi;
}

/* Compares frame p with the mirror and logs the old bytes of the span
 * that differs. */
static void log_frame(dbg_undo *u, es_machine *m, uint64_t p)
{
    static const uint8_t zero[PAGE];
    uint8_t *h = frame_ptr(m, p);
    if (!h || p >= u->nmirror)
        return;
    if (!u->mirror[p]) {
        /* a fresh frame: es_frame_alloc/es_phys hand them out zeroed */
        if (!(u->mirror[p] = malloc(PAGE)))
            return;
        memcpy(u->mirror[p], zero, PAGE);
    }
    uint8_t *mm = u->mirror[p];
    if (!memcmp(mm, h, PAGE))
        return;
    unsigned lo = first_diff(mm, h, 0, PAGE), hi = last_diff(mm, h, lo, PAGE);
    log_phys(u, m, (p << 12) + lo, hi - lo);
}

/* Compares every frame with the mirror. */
static void resync(dbg_undo *u, es_machine *m)
{
    for (uint64_t p = 1; p < m->nframes && p < u->nmirror; p++)
        log_frame(u, m, p);
}

/* Doubles the ring (at most cap slots: a record undoes a step at least),
 * the oldest record first in the new one. */
static bool grow_ring(dbg_undo *u)
{
    uint64_t nc = u->rcap * 2 < u->cap ? u->rcap * 2 : u->cap;
    if (nc <= u->rcap)
        return false;
    dbg_rec *n = calloc(nc, sizeof *n);
    if (!n)
        return false;
    for (uint64_t i = 0; i < u->count; i++)
        n[i] = u->ring[(u->head + i) % u->rcap];
    free(u->ring);
    u->ring = n;
    u->rcap = nc;
    u->head = 0;
    return true;
}

/* Out of host memory, or a record that could not be made whole: the
 * history is forgotten rather than kept with a gap (blob: the record that
 * was not pushed, NULL when it was). */
static void forget(dbg_undo *u, es_machine *m, uint8_t *blob)
{
    if (u->rec_host)
        drop_host(m, blob ? blob : u->scratch, u->slen);
    if (blob)
        free(blob);
    while (u->count)
        drop_oldest(u, m);
    u->lost = false;
}

static void push_record(dbg_undo *u, es_machine *m, uint64_t span)
{
    uint8_t *blob = blob_alloc(u, u->slen);
    if (!blob) {
        forget(u, m, NULL);
        return;
    }
    memcpy(blob, u->scratch, u->slen);
    while (u->count && (u->count == u->cap || u->insns + span > u->cap ||
                        u->bytes + u->slen > u->max_bytes))
        drop_oldest(u, m);
    if (u->count == u->rcap && !grow_ring(u)) {
        forget(u, m, blob);
        return;
    }
    dbg_rec *r = &u->ring[(u->head + u->count) % u->rcap];
    r->blob = blob;
    r->len = (uint32_t)u->slen;
    r->span = span;
    r->host = u->rec_host;
    u->rec_host = false; /* the ring's now, not the scratch's */
    u->bytes += u->slen;
    u->insns += span;
    u->count++;
    u->pushed++;
}

/* Logs the old values of words [from, to) of the architectural region
 * that differ from now.  The words are copied out rather than read
 * through a cast: the region holds many types (long double, unions), and
 * memcpy keeps the aliasing rules. */
static void log_arch(dbg_undo *u, const uint8_t *now, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++) {
        uint64_t v;
        memcpy(&v, now + i * 8, 8);
        if (v != u->arch_before[i]) {
            uint8_t e[11];
            uint16_t w = (uint16_t)i;
            e[0] = REC_ARCH;
            memcpy(e + 1, &w, 2);
            memcpy(e + 3, &u->arch_before[i], 8);
            sput(u, e, sizeof e);
        }
    }
}

/* Ends the record of span instructions begun by dbg_undo_begin: the old
 * bytes of memory that changed without a CPU write the observer saw, the
 * architectural words, taint labels and tracking that changed. */
static void end_record(es_dbg *d, uint64_t span)
{
    dbg_undo *u = &d->undo;
    es_machine *m = d->m;
    u->recording = false;
    uint64_t alloc[5];
    alloc_state(m, alloc);
    bool alloc_changed = memcmp(alloc, u->alloc_before, sizeof alloc) != 0;
    /* a CR3 load inside a kernel run is the guest's MOV CR3 (PTI switches
     * at every entry and exit), which writes no memory: what the run wrote
     * is listed whatever the address space; host code that installs page
     * tables runs in a VMCALL, which is always a record of its own */
    if (alloc_changed || (m->cr3 != u->cr3_before && !u->by_frame) || u->wlog.overflow)
        u->resync = true;
    if (u->resync)
        resync(u, m);
    else /* the frames an unobserved run listed */
        for (size_t i = 0; i < u->wlog.n; i++)
            log_frame(u, m, u->wlog.pfn[i]);
    es_wlog_clear(m, &u->wlog);
    /* 64 bytes at a time first: an instruction changes a few words of
     * the 150 (RIP, a register or two, RFLAGS, the TSC) */
    const uint8_t *now = (const uint8_t *)m + DBG_ARCH_OFF;
    size_t i = 0;
    for (; i + 8 <= DBG_ARCH_WORDS; i += 8)
        if (!es_same64(now + i * 8, (const uint8_t *)&u->arch_before[i]))
            log_arch(u, now, i, i + 8);
    log_arch(u, now, i, DBG_ARCH_WORDS);
    es_label t[17];
    taint_regs(d, t);
    for (int r = 0; r < 17; r++)
        if (t[r] != u->treg_before[r]) {
            put_u8(u, REC_TREG);
            put_u8(u, (uint8_t)r);
            sput(u, &u->treg_before[r], sizeof(es_label));
        }
    if (memcmp(&d->track, &u->track_before, sizeof d->track)) {
        put_u8(u, REC_TRACK);
        sput(u, &u->track_before, sizeof u->track_before);
    }
    for (int v = 0; u->by_frame && d->taint && v < NTVEC; v++)
        if (es_taint_vreg(d->taint, v / ES_TAINT_NLANE, v % ES_TAINT_NLANE) != u->tvec_before[v]) {
            put_u8(u, REC_TVEC);
            put_u8(u, (uint8_t)v);
            sput(u, &u->tvec_before[v], sizeof(es_label));
        }
    if (alloc_changed) {
        put_u8(u, REC_ALLOC);
        sput(u, u->alloc_before, sizeof u->alloc_before);
    }
    if (alloc_changed || u->host_step)
        log_alloc(u, m, alloc_changed);
    if (u->host_step)
        log_host(u, m);
    push_record(u, m, span);
    if (u->lost)
        forget(u, m, NULL);
}

void dbg_undo_end(es_dbg *d)
{
    if (d->undo.recording)
        end_record(d, 1);
}

int dbg_undo_fast(es_dbg *d, uint64_t budget, const es_fence *f, uint64_t *ran)
{
    dbg_undo *u = &d->undo;
    es_machine *m = d->m;
    dbg_undo_begin(d);
    int rc = es_run_fenced(m, budget, f, &u->wlog);
    *ran = m->icount - u->icount_before;
    if (*ran)
        end_record(d, *ran);
    else /* nothing retired; what a walk touched goes in the next record */
        u->recording = false;
    return rc;
}

void dbg_undo_run_begin(es_dbg *d)
{
    dbg_undo *u = &d->undo;
    dbg_undo_begin(d);
    u->by_frame = true;
    /* a re-run must start from the same vector labels (single steps are
     * never re-run: their records leave them out, as before) */
    for (int i = 0; i < NTVEC; i++)
        u->tvec_before[i] = d->taint ? es_taint_vreg(d->taint, i / ES_TAINT_NLANE,
                                                     i % ES_TAINT_NLANE) : 0;
    /* without any_phys (listing every frame es_phys hands out would list
     * most frames the run reads, each compared at its end): the only host
     * code a kernel step reaches outside a VMCALL is a demand fault on a
     * kernel access to a user page, and what it writes is found anyway --
     * a new frame or page table changes the allocator's state (end_record
     * then compares every frame), and a leaf entry it rewrites without the
     * accessed bit gets that bit from the walk retried right after, which
     * lists the table */
    u->wlog.any_phys = false;
    es_wlog_attach(d->m, &u->wlog);
}

void dbg_undo_run_end(es_dbg *d, uint64_t steps)
{
    dbg_undo *u = &d->undo;
    es_wlog_attach(d->m, NULL);
    u->wlog.any_phys = false;
    if (steps)
        end_record(d, steps);
    else /* nothing ran; what was listed goes in the next record */
        u->recording = false;
    u->by_frame = false;
}

uint64_t es_dbg_history(const es_dbg *d)
{
    return d->undo.insns;
}

static void restore_phys(dbg_undo *u, es_machine *m, uint64_t pa, const uint8_t *old, unsigned n)
{
    uint64_t pfn = pa >> 12;
    uint8_t *h = frame_ptr(m, pfn);
    if (!h)
        return;
    es_frame *f = &m->frames[pfn];
    if (f->has_code) {
        /* decoded instructions from this page are stale now */
        es_code_stale(m, pfn);
        f->has_code = 0;
    }
    unsigned off = (unsigned)(pa & (PAGE - 1));
    memcpy(h + off, old, n);
    if (pfn < u->nmirror && u->mirror[pfn])
        memcpy(u->mirror[pfn] + off, old, n);
}

/* The bytes of the record entry at p; 0 for no entry. */
static size_t entry_size(const uint8_t *p)
{
    uint16_t n;
    switch (*p) {
    case REC_ARCH: return 1 + 2 + 8;
    case REC_MEM: memcpy(&n, p + 9, 2); return 1 + 8 + 2 + n;
    case REC_TREG: case REC_TVEC: return 1 + 1 + sizeof(es_label);
    case REC_TMEM: memcpy(&n, p + 9, 2); return 1 + 8 + 2 + (size_t)n * sizeof(es_label);
    case REC_TZERO: return 1 + 8 + 2;
    case REC_TONE: return 1 + 8 + 2 + sizeof(es_label);
    case REC_TRACK: return 1 + sizeof(dbg_track);
    case REC_ALLOC: return 1 + 5 * 8;
    case REC_FREE: return 1 + 8 + 8;
    case REC_HOST: return 1 + sizeof(es_host_rec *);
    default: return 0;
    }
}

/* The allocator as it was before the record (REC_ALLOC); the free stack's
 * entries come with REC_FREE. */
static void undo_alloc(es_dbg *d, const uint8_t *p)
{
    es_machine *m = d->m;
    uint64_t a[5];
    memcpy(a, p, sizeof a);
    m->frames_used = a[0];
    m->next_free_pfn = a[1];
    m->nfree_pfns = (size_t)a[2];
    m->vmg.zero_pfn = a[3];
    m->vmg.kstack_pdpt = a[4];
    d->undo.nfstack = (size_t)a[2];
    memcpy(d->undo.alloc_synced, a, sizeof a);
}

/* Puts back what the record entry at p saved. */
static void undo_entry(es_dbg *d, const uint8_t *p)
{
    es_machine *m = d->m;
    es_taint *t = d->taint;
    uint64_t a;
    uint16_t n;
    es_label l = 0;
    switch (*p) {
    case REC_ARCH:
        memcpy(&n, p + 1, 2);
        memcpy((uint8_t *)m + DBG_ARCH_OFF + 8u * n, p + 3, 8);
        break;
    case REC_MEM:
        memcpy(&a, p + 1, 8);
        memcpy(&n, p + 9, 2);
        restore_phys(&d->undo, m, a, p + 11, n);
        break;
    case REC_TREG:
        memcpy(&l, p + 2, sizeof l);
        if (t && p[1] == 16)
            es_taint_set_flags(t, l);
        else if (t)
            es_taint_set_reg(t, p[1], l);
        break;
    case REC_TVEC:
        memcpy(&l, p + 2, sizeof l);
        if (t)
            es_taint_set_vreg(t, p[1] / ES_TAINT_NLANE, p[1] % ES_TAINT_NLANE, l);
        break;
    case REC_TMEM:
        memcpy(&a, p + 1, 8);
        memcpy(&n, p + 9, 2);
        for (unsigned i = 0; i < n && t; i++) {
            memcpy(&l, p + 11 + i * sizeof l, sizeof l);
            es_taint_set_mem(t, a + i, 1, l);
        }
        break;
    case REC_TONE:
        memcpy(&l, p + 11, sizeof l);
        /* fall through */
    case REC_TZERO:
        memcpy(&a, p + 1, 8);
        memcpy(&n, p + 9, 2);
        if (t)
            es_taint_set_mem(t, a, n, l);
        break;
    case REC_TRACK:
        memcpy(&d->track, p + 1, sizeof d->track);
        break;
    case REC_ALLOC:
        undo_alloc(d, p + 1);
        break;
    case REC_FREE: {
        uint64_t i, v;
        memcpy(&i, p + 1, 8);
        memcpy(&v, p + 9, 8);
        m->free_pfns[i] = v;
        d->undo.fstack[i] = v;
        break;
    }
    case REC_HOST: {
        es_host_rec *h;
        memcpy(&h, p + 1, sizeof h);
        es_host_rec_undo(m, h);
        break;
    }
    }
}

bool dbg_undo_pop(es_dbg *d, uint64_t *span)
{
    dbg_undo *u = &d->undo;
    es_machine *m = d->m;
    if (!u->count)
        return false;
    /* an unobserved run that stopped at once retired nothing, but its walks
     * may have set accessed bits: back to the mirror (the state after the
     * newest record) first */
    for (size_t i = 0; i < u->wlog.n; i++) {
        uint64_t p = u->wlog.pfn[i];
        uint8_t *h = frame_ptr(m, p);
        if (p < u->nmirror && u->mirror[p] && h && memcmp(u->mirror[p], h, PAGE)) {
            if (m->frames[p].has_code) {
                es_code_stale(m, p);
                m->frames[p].has_code = 0;
            }
            memcpy(h, u->mirror[p], PAGE);
        }
    }
    es_wlog_clear(m, &u->wlog);
    dbg_rec *r = &u->ring[(u->head + u->count - 1) % u->rcap];
    const uint8_t *b = r->blob, *end = r->blob + r->len;
    uint64_t icount;
    memcpy(&icount, b, 8);
    /* entries are applied newest first: two writes of one instruction to
     * the same bytes (REP MOVS over itself) must end at the oldest value */
    size_t nent = 0, cap = 64;
    const uint8_t **ent = malloc(cap * sizeof *ent);
    if (!ent)
        return false;
    for (const uint8_t *p = b + 8; p < end;) {
        if (nent == cap) {
            const uint8_t **ne = realloc(ent, (cap *= 2) * sizeof *ent);
            if (!ne) {
                free(ent);
                return false;
            }
            ent = ne;
        }
        ent[nent++] = p;
        size_t n = entry_size(p);
        if (!n) { /* cannot happen: we wrote it */
            nent--;
            break;
        }
        p += n;
    }
    while (nent)
        undo_entry(d, ent[--nent]);
    free(ent);
    m->icount = icount;
    m->stop = ES_STOP_NONE;
    m->message[0] = 0;
    /* derived state (TLB permissions, fetch page, EIP mask, #AC checking)
     * follows the restored CPL/mode/CR3 */
    es_tlb_flush(m);
    es_set_mode(m, m->cpl, m->mode);
    u->bytes -= r->len;
    u->insns -= r->span;
    *span = r->span;
    blob_free(u, r);
    u->count--;
    return true;
}
