/* exposure_live.c - live mode (exposure.h): the exposure of every syscall
 * a real program makes, recorded while it runs. */
#include <stdlib.h>
#include <string.h>

#include "exposure.h"
#include "exposure_probe.h"
#include "host.h"
#include "kernel.h"
#include "loader.h"

struct es_live {
    es_taint *t;
    int abi;
    unsigned patches;
    es_exposure *v;
    size_t n, cap;
    bool open;
};

static void live_before(void *ctx, es_machine *m, const es_insn *d, uint64_t rip)
{
    es_live *l = ctx;
    if (m->cpl == 3) {
        int entry = es_entry_of(m, d);
        if (entry < 0)
            return;
        if (l->n == l->cap) {
            size_t nc = l->cap ? l->cap * 2 : 16;
            es_exposure *nv = realloc(l->v, nc * sizeof *nv);
            if (!nv)
                return;
            l->v = nv;
            l->cap = nc;
        }
        es_exposure *e = &l->v[l->n++];
        memset(e, 0, sizeof *e);
        e->patches = l->patches;
        e->entry = entry;
        e->vendor = m->vendor;
        e->abi = es_entry_abi(entry);
        e->nr = (int)(uint32_t)(m->gpr[ES_RAX] & ~ES_X32_SYSCALL_BIT);
        if (!es_syscall_name(entry, e->nr, e->name, sizeof e->name))
            snprintf(e->name, sizeof e->name, "#%d", e->nr);
        e->arity = es_syscall_arity(entry, e->nr);
        es_probe_setup(m, e, entry, l->patches);
        es_taint_label_user_regs(l->t, m, e->abi);
        l->open = true;
        return;
    }
    if (!l->open || !l->n)
        return;
    es_exposure *e = &l->v[l->n - 1];
    for (int p = 0; p < ES_NPROBES; p++)
        if (e->probe[p].present && !e->probe[p].hit && rip == e->probe[p].addr)
            es_probe_record(&e->probe[p], l->t);
}

es_live *es_live_attach(es_machine *m, int abi)
{
    es_live *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->t = es_taint_new();
    l->abi = abi;
    l->patches = es_kernel_patches(m);
    if (!l->t) {
        free(l);
        return NULL;
    }
    es_taint_kernel_only(l->t, true);
    /* the labeller first: the taint observer's `before` of the syscall
     * instruction must see the fresh labels */
    es_observer o = {0};
    o.ctx = l;
    o.before = live_before;
    if (es_observe(m, &o) || es_taint_attach(m, l->t)) {
        es_live_free(l);
        return NULL;
    }
    return l;
}

size_t es_live_count(const es_live *l) { return l->n; }
const es_exposure *es_live_get(const es_live *l, size_t i) { return i < l->n ? &l->v[i] : NULL; }

void es_live_free(es_live *l)
{
    if (!l)
        return;
    es_taint_free(l->t);
    free(l->v);
    free(l);
}
