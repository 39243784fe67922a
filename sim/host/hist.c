/* hist.c - the process table's history, for reverse execution: the host's
 * half of the debugger's undo log (debugger/dbg_undo.c), which restores
 * guest memory, the registers and the frame allocator itself.
 *
 * Why: a step that enters the simulator (a VMCALL: a system call, a
 * context switch) may fork, end or reap a task, replace an address space
 * (exec) or change which task runs.  Left alone, a reverse over it gives
 * back the guest's memory and registers but not the host's task table, so
 * stepping forward again forks a second child, frees the address space of
 * whichever task the host wrongly thinks is current, and so on (a leaked
 * VMA list was the symptom: es_task_put_mm chose by CR3, es_vm_release
 * refused by m->vmas, and nobody owned the list after that).
 *
 * How: es_host_step_begin takes a copy of the state below before such a
 * step; es_host_step_end compares and returns the old values that changed,
 * with the objects the step made and ended, as one record (NULL when
 * nothing changed).  Undoing a record writes the old values back, frees
 * what the step made, and brings back what it ended -- which therefore is
 * not freed when it ends while the history is on but kept here (the
 * graveyard), until the record that ended it leaves the history
 * (es_host_rec_drop) or the run ends (es_hist_free).
 *
 * What a reverse gives back (the guest-visible semantics):
 *  - the task table (which slot holds which task, the pid counter, the
 *    tasks alive, the kernel-stack slots, the deterministic clock's sleep,
 *    the run's result kept for the first process), every task's state
 *    (its wait, saved user registers, per-thread signal state, mm), which
 *    task, process and address space are current;
 *  - of each process's state (struct es_host): signals (actions, mask,
 *    pending, siginfo, alternate stack), the interval timer, brk, limits,
 *    umask, the getrandom stream, ids and comm;
 *  - past a fork/clone: the child is gone -- task, process state (its
 *    host fds, dups of the parent's, closed) and VMA list freed, its
 *    frames free again -- and the pid counter is back, so stepping forward
 *    again forks a child with the same pid, frames, page tables and
 *    kernel stack as the first time: the same guest-visible state;
 *  - past an exit, a reap, exec's new VMA list: the task, its process
 *    state and its VMA list are back as they were.
 *  - the VMAs of an address space a step changed (mmap, munmap, mprotect,
 *    brk, mremap): a copy made before the change is swapped back;
 *  - an fd a step opened (open, pipe, dup, socket...) is closed again, so
 *    stepping forward gets the same fd numbers (a pipe made, used and
 *    closed within what the reverse went back over is made afresh).
 * Not given back (host resources, as the undo log's header says): an fd a
 * step closed (the host fd is gone: a pipe's reader must see EOF when the
 * last writer closes, so it cannot be kept open for a reverse) and so the
 * fds of a task brought back past its exit, what was read from and
 * written to files and pipes, file offsets, the cwd, root and exe paths,
 * and the LDT's entries.
 */
#include "task.h"

#include "mem.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* the part of struct es_host a record restores: from brk_start up to the
 * world pointer, and the ids and comm (not the LDT: its own allocation) */
#define PA_OFF offsetof(struct es_host, brk_start)
#define PA_END offsetof(struct es_host, world)
#define PB_OFF offsetof(struct es_host, pid)
#define PB_END offsetof(struct es_host, ldt)
#define PSTATE ((PA_END - PA_OFF) + (PB_END - PB_OFF))
/* and which of its fds were open (a bit each) */
#define PSNAP (PSTATE + ES_HOST_MAX_FDS / 8)

/* record entries: old bytes of live memory; an old table slot; an object
 * the step made; one it ended; a VMA list and a copy of it as it was; an
 * fd the step opened */
enum { H_BYTES = 1, H_SLOT, H_BORN, H_DIED, H_VMAS, H_FD };

typedef struct hobj {
    int kind; /* ES_HIST_* */
    void *p;
} hobj;

typedef struct hvec {
    void *p;
    size_t n, cap;
} hvec;

struct es_host_rec {
    size_t len;
    uint8_t b[];
};

typedef struct es_hist {
    es_vm_keeper keeper; /* first: the keeper's callback finds the history */
    es_world *w;
    bool on, open, failed;
    /* the state when the step began */
    es_world wsnap;
    struct es_host *host;
    struct es_vmas *vmas;
    hvec slots;  /* es_task *: the table w->t[0..n) */
    hvec tptr;   /* es_task *: every task in the table */
    hvec tsnap;  /* es_task: their copies */
    hvec pptr;   /* struct es_host *: every task's process, and m->host */
    hvec psnap;  /* PSNAP bytes each */
    hvec vptr;   /* struct es_vmas *: the VMA lists in use */
    hvec log;    /* hobj: made (H_BORN) and ended (H_DIED) in the step */
    hvec saved;  /* struct es_vmas *: pairs of a list the step changed and
                    its copy from before the change */
    hvec dead;   /* hobj: ended in a step still in the history */
    hvec rec;    /* uint8_t: the record being built */
} es_hist;

static bool reserve(hvec *v, size_t n, size_t elem)
{
    if (n <= v->cap)
        return true;
    size_t cap = v->cap ? v->cap : 16;
    while (cap < n)
        cap *= 2;
    void *p = realloc(v->p, cap * elem);
    if (!p)
        return false;
    v->p = p;
    v->cap = cap;
    return true;
}

static bool push(hvec *v, const void *x, size_t elem)
{
    if (!reserve(v, v->n + 1, elem))
        return false;
    memcpy((uint8_t *)v->p + v->n++ * elem, x, elem);
    return true;
}

static es_hist *hist_of(es_machine *m)
{
    return m && m->host && m->host->world ? m->host->world->hist : NULL;
}

static void destroy(int kind, void *p)
{
    if (kind == ES_HIST_TASK) {
        free(p);
    } else if (kind == ES_HIST_PROC) {
        es_hs_fs_release(p);
        es_hs_ldt_free(p);
        free(p);
    } else if (kind == ES_HIST_VMAS) {
        es_vm_vmas_free(p);
    }
}

/* Takes p off the graveyard; false when it is not there. */
static bool unbury(es_hist *h, const void *p)
{
    hobj *d = h->dead.p;
    for (size_t i = 0; i < h->dead.n; i++)
        if (d[i].p == p) {
            d[i] = d[--h->dead.n];
            return true;
        }
    return false;
}

static bool listed(const hvec *v, const void *p)
{
    void *const *a = v->p;
    for (size_t i = 0; i < v->n; i++)
        if (a[i] == p)
            return true;
    return false;
}

/* ---- births and deaths (task.c, thread.c, exec.c, the VMA keeper) ---- */

void es_hist_born(es_world *w, int kind, void *p)
{
    es_hist *h = w->hist;
    hobj o = {kind, p};
    if (h && h->on && h->open && p && !push(&h->log, &o, sizeof o))
        h->failed = true;
}

bool es_hist_keep(es_world *w, int kind, void *p)
{
    es_hist *h = w->hist;
    if (!h || !h->on || !h->open || !p)
        return false;
    hobj *l = h->log.p;
    for (size_t i = 0; i < h->log.n; i++)
        if (l[i].p == p && l[i].kind == kind) {
            /* made in this step: no state of the history knows it */
            memmove(&l[i], &l[i + 1], (h->log.n - i - 1) * sizeof *l);
            h->log.n--;
            return false;
        }
    const hvec *known = kind == ES_HIST_TASK ? &h->tptr : kind == ES_HIST_PROC ? &h->pptr : &h->vptr;
    hobj o = {-kind, p}; /* the log's deaths have negative kinds */
    if (!listed(known, p))
        return false; /* made and ended in the step (a failed clone) */
    hobj d = {kind, p};
    if (!reserve(&h->dead, h->dead.n + 1, sizeof d) || !push(&h->log, &o, sizeof o)) {
        h->failed = true;
        return false;
    }
    push(&h->dead, &d, sizeof d);
    return true;
}

static void vmas_dead(es_vm_keeper *k, struct es_vmas *s)
{
    es_hist *h = (es_hist *)k;
    if (!es_hist_keep(h->w, ES_HIST_VMAS, s))
        es_vm_vmas_free(s);
}

/* A list the step's start knew changes for the first time in the step: a
 * copy as it was (a list the step made goes whole if the step is undone). */
static void vmas_changing(es_vm_keeper *k, struct es_vmas *s)
{
    es_hist *h = (es_hist *)k;
    struct es_vmas **v = h->saved.p;
    if (!h->on || !h->open || !listed(&h->vptr, s))
        return;
    for (size_t i = 0; i < h->saved.n; i += 2)
        if (v[i] == s)
            return;
    struct es_vmas *c = es_vm_vmas_copy(s);
    if (!c || !reserve(&h->saved, h->saved.n + 2, sizeof c)) {
        es_vm_vmas_free(c);
        h->failed = true;
        return;
    }
    push(&h->saved, &s, sizeof s);
    push(&h->saved, &c, sizeof c);
}

/* ---- on, off ---- */

int es_host_history(es_machine *m)
{
    es_world *w = m->host ? m->host->world : NULL;
    if (!w)
        return -1;
    if (w->hist)
        return 0;
    es_hist *h = calloc(1, sizeof *h);
    if (!h)
        return -1;
    h->keeper.dead = vmas_dead;
    h->keeper.changing = vmas_changing;
    h->w = w;
    h->on = true;
    w->hist = h;
    es_vm_set_keeper(m->vmas, &h->keeper);
    for (int i = 0; i < w->n; i++)
        if (w->t[i] && w->t[i]->mm_live)
            es_vm_set_keeper(w->t[i]->mm.vmas, &h->keeper);
    return 0;
}

void es_hist_off(es_world *w)
{
    if (w->hist)
        w->hist->on = false; /* what ends from now on is freed at once */
}

void es_hist_free(es_world *w)
{
    es_hist *h = w->hist;
    if (!h)
        return;
    hobj *d = h->dead.p;
    for (size_t i = 0; i < h->dead.n; i++)
        destroy(d[i].kind, d[i].p);
    hvec *v[] = {&h->slots, &h->tptr, &h->tsnap, &h->pptr, &h->psnap,
                 &h->vptr,  &h->log,  &h->dead,  &h->rec,  &h->saved};
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        free(v[i]->p);
    free(h);
    w->hist = NULL;
}

/* ---- the step ---- */

static void put(es_hist *h, const void *x, size_t n)
{
    if (!reserve(&h->rec, h->rec.n + n, 1)) {
        h->failed = true;
        return;
    }
    memcpy((uint8_t *)h->rec.p + h->rec.n, x, n);
    h->rec.n += n;
}

static void proc_copy(uint8_t *to, const struct es_host *p)
{
    memcpy(to, (const uint8_t *)p + PA_OFF, PA_END - PA_OFF);
    memcpy(to + (PA_END - PA_OFF), (const uint8_t *)p + PB_OFF, PB_END - PB_OFF);
    uint8_t *open = to + PSTATE;
    memset(open, 0, ES_HOST_MAX_FDS / 8);
    for (int fd = 0; fd < p->fd_top; fd++)
        if (p->fds[fd].host >= 0)
            open[fd / 8] |= (uint8_t)(1u << (fd % 8));
}

/* The fds of p open now that were not when the step began. */
static void new_fds(es_hist *h, struct es_host *p, const uint8_t *open)
{
    for (int fd = 0; fd < p->fd_top; fd++) {
        int hfd = p->fds[fd].host;
        if (hfd < 0 || (open[fd / 8] & (1u << (fd % 8))))
            continue;
        uint8_t e[17] = {H_FD};
        uint32_t f[2] = {(uint32_t)fd, (uint32_t)hfd};
        memcpy(e + 1, &p, 8);
        memcpy(e + 9, f, 8);
        put(h, e, sizeof e);
    }
}

static bool snap_proc(es_hist *h, struct es_host *p)
{
    if (!p || listed(&h->pptr, p))
        return true;
    if (!push(&h->pptr, &p, sizeof p) || !reserve(&h->psnap, h->pptr.n, PSNAP))
        return false;
    proc_copy((uint8_t *)h->psnap.p + (h->pptr.n - 1) * PSNAP, p);
    return true;
}

static bool snap_task(es_hist *h, es_task *t)
{
    if (!push(&h->tptr, &t, sizeof t) || !push(&h->tsnap, t, sizeof *t))
        return false;
    if (t->mm_live && t->mm.vmas && !listed(&h->vptr, t->mm.vmas) &&
        !push(&h->vptr, &t->mm.vmas, sizeof t->mm.vmas))
        return false;
    return snap_proc(h, t->proc);
}

void es_host_step_begin(es_machine *m)
{
    es_hist *h = hist_of(m);
    if (!h || !h->on)
        return;
    es_world *w = h->w;
    h->open = true;
    h->failed = false;
    h->log.n = h->slots.n = h->tptr.n = h->tsnap.n = h->pptr.n = h->vptr.n = h->saved.n = 0;
    h->wsnap = *w;
    h->host = m->host;
    h->vmas = m->vmas;
    bool ok = reserve(&h->slots, (size_t)w->n, sizeof(es_task *)) && snap_proc(h, m->host) &&
              (!m->vmas || push(&h->vptr, &m->vmas, sizeof m->vmas));
    for (int i = 0; ok && i < w->n; i++) {
        ((es_task **)h->slots.p)[i] = w->t[i];
        if (w->t[i])
            ok = snap_task(h, w->t[i]);
    }
    h->slots.n = (size_t)w->n;
    if (!ok)
        h->failed = true;
}

static void put_bytes(es_hist *h, uint8_t *live, const uint8_t *old, uint32_t n)
{
    uint8_t tag = H_BYTES;
    put(h, &tag, 1);
    put(h, &live, sizeof live);
    put(h, &n, sizeof n);
    put(h, old, n);
}

/* The runs of bytes where live differs from old, as H_BYTES entries. */
static void diff(es_hist *h, void *live, const void *old, size_t n)
{
    uint8_t *a = live;
    const uint8_t *b = old;
    for (size_t i = 0; i < n;) {
        if (i + 64 <= n && es_same64(a + i, b + i)) {
            i += 64; /* most of it is as it was */
            continue;
        }
        if (a[i] == b[i]) {
            i++;
            continue;
        }
        size_t j = i + 1;
        /* a gap of fewer than 16 equal bytes costs less than a new head */
        while (j < n && (a[j] != b[j] || (j + 16 < n && memcmp(a + j, b + j, 16))))
            j++;
        put_bytes(h, a + i, b + i, (uint32_t)(j - i));
        i = j;
    }
}

static void diff_state(es_hist *h, es_machine *m)
{
    es_world *w = h->w;
    /* the table's allocation is not state: it only grows */
    h->wsnap.t = w->t;
    h->wsnap.cap = w->cap;
    h->wsnap.hist = w->hist;
    diff(h, w, &h->wsnap, sizeof *w);
    es_task **slots = h->slots.p;
    for (size_t i = 0; i < h->slots.n && i < (size_t)w->n; i++)
        if (w->t[i] != slots[i]) {
            uint8_t tag = H_SLOT;
            uint32_t idx = (uint32_t)i;
            put(h, &tag, 1);
            put(h, &idx, sizeof idx);
            put(h, &slots[i], sizeof slots[i]);
        }
    /* an ended task or process is kept (es_hist_keep): still there */
    es_task **tp = h->tptr.p;
    for (size_t i = 0; i < h->tptr.n; i++)
        diff(h, tp[i], (es_task *)h->tsnap.p + i, sizeof(es_task));
    struct es_host **pp = h->pptr.p;
    for (size_t i = 0; i < h->pptr.n; i++) {
        const uint8_t *s = (const uint8_t *)h->psnap.p + i * PSNAP;
        diff(h, (uint8_t *)pp[i] + PA_OFF, s, PA_END - PA_OFF);
        diff(h, (uint8_t *)pp[i] + PB_OFF, s + (PA_END - PA_OFF), PB_END - PB_OFF);
        new_fds(h, pp[i], s + PSTATE);
    }
    diff(h, &m->host, &h->host, sizeof m->host);
    diff(h, &m->vmas, &h->vmas, sizeof m->vmas);
}

/* A step whose record cannot be made: what it ended is freed now (the
 * debugger forgets its history, and with it every other record). */
static void step_failed(es_hist *h)
{
    hobj *l = h->log.p;
    for (size_t i = 0; i < h->log.n; i++)
        if (l[i].kind < 0 && unbury(h, l[i].p))
            destroy(-l[i].kind, l[i].p);
    struct es_vmas **v = h->saved.p;
    for (size_t i = 1; i < h->saved.n; i += 2)
        es_vm_vmas_free(v[i]);
}

int es_host_step_end(es_machine *m, es_host_rec **out)
{
    es_hist *h = hist_of(m);
    *out = NULL;
    if (!h || !h->open)
        return 0;
    h->open = false;
    h->rec.n = 0;
    if (!h->failed)
        diff_state(h, m);
    hobj *l = h->log.p;
    for (size_t i = 0; !h->failed && i < h->log.n; i++) {
        uint8_t e[10];
        e[0] = l[i].kind < 0 ? H_DIED : H_BORN;
        e[1] = (uint8_t)(l[i].kind < 0 ? -l[i].kind : l[i].kind);
        memcpy(e + 2, &l[i].p, 8);
        put(h, e, sizeof e);
    }
    for (size_t i = 0; !h->failed && i < h->saved.n; i += 2) {
        uint8_t e[17] = {H_VMAS};
        memcpy(e + 1, (struct es_vmas **)h->saved.p + i, 16);
        put(h, e, sizeof e);
    }
    if (!h->failed && h->rec.n && !(*out = malloc(sizeof **out + h->rec.n)))
        h->failed = true;
    if (h->failed) {
        step_failed(h);
        return -1;
    }
    if (*out) {
        (*out)->len = h->rec.n;
        memcpy((*out)->b, h->rec.p, h->rec.n);
    }
    return 0;
}

/* ---- undo, drop ---- */

/* Calls fn on each entry of r: its tag and the bytes after the tag. */
static void each(const es_host_rec *r, void (*fn)(void *ctx, uint8_t tag, const uint8_t *e),
                 void *ctx)
{
    for (size_t i = 0; i < r->len;) {
        uint8_t tag = r->b[i];
        const uint8_t *e = r->b + i + 1;
        uint32_t n = 0;
        if (tag == H_BYTES)
            memcpy(&n, e + 8, sizeof n);
        fn(ctx, tag, e);
        i += 1 + (tag == H_BYTES ? 12 + (size_t)n
                  : tag == H_SLOT ? 12
                  : tag == H_VMAS || tag == H_FD ? 16
                                                 : 9);
    }
}

typedef struct undo_ctx {
    es_hist *h;
    bool born; /* the second pass: free what the step made */
} undo_ctx;

static void undo_one(void *ctx, uint8_t tag, const uint8_t *e)
{
    undo_ctx *c = ctx;
    void *p;
    memcpy(&p, tag == H_SLOT ? e + 4 : tag == H_BYTES || tag == H_FD ? e : e + 1, sizeof p);
    if (c->born) {
        if (tag == H_BORN)
            destroy(e[0], p);
        return;
    }
    if (tag == H_BYTES) {
        uint32_t n;
        memcpy(&n, e + 8, sizeof n);
        memcpy(p, e + 12, n);
    } else if (tag == H_SLOT) {
        uint32_t i;
        memcpy(&i, e, sizeof i);
        c->h->w->t[i] = p;
    } else if (tag == H_DIED) {
        unbury(c->h, p); /* in use again */
    } else if (tag == H_VMAS) {
        struct es_vmas *v[2];
        memcpy(v, e, sizeof v);
        es_vm_vmas_swap(v[0], v[1]); /* the old VMAs back, the copy holds the new */
        es_vm_vmas_free(v[1]);
    } else if (tag == H_FD) {
        /* still the host fd the step opened: every later step is undone,
         * and one that closed it left the slot free */
        struct es_host *ph = p;
        uint32_t f[2];
        memcpy(f, e + 8, sizeof f);
        if (ph->fds[f[0]].host == (int)f[1])
            es_hs_fd_close(ph, (int)f[0]);
    }
}

void es_host_rec_undo(es_machine *m, es_host_rec *r)
{
    es_hist *h = hist_of(m);
    if (h && r) {
        undo_ctx c = {h, false};
        each(r, undo_one, &c);
        /* nothing the restored state names is among what the step made */
        c.born = true;
        each(r, undo_one, &c);
        /* the LDT the machine reads is the current process's (es_hs_ldt_load
         * without LDTR, which the undo log restores) */
        struct es_host *p = m->host;
        m->ldt = p && p->ldt_n ? p->ldt : NULL;
        m->ldt_n = m->ldt ? p->ldt_n : 0;
    }
    free(r);
}

static void drop_one(void *ctx, uint8_t tag, const uint8_t *e)
{
    es_hist *h = ctx;
    void *p;
    memcpy(&p, e + 1, sizeof p);
    if (tag == H_DIED && unbury(h, p))
        destroy(e[0], p);
    if (tag == H_VMAS) {
        memcpy(&p, e + 8, sizeof p);
        es_vm_vmas_free(p); /* the copy: nothing will want it back */
    }
}

void es_host_rec_drop(es_machine *m, es_host_rec *r)
{
    es_hist *h = hist_of(m);
    if (h && r)
        each(r, drop_one, h);
    free(r);
}
