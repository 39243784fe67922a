/* kmem.c - the guest kernel's memory as the simulator sees it (see kmem.h):
 * reads and writes through the kernel's page tables, and frames beyond the
 * process's memory cap. */
#include "kmem.h"

#include <stdlib.h>
#include <string.h>

#include "kernel_int.h"
#include "mem.h"
#include "vm.h"

/* Host pointer to the byte at va in the current tables (4 KiB, 2 MiB and
 * 1 GiB leaves), no permission checks, no A/D updates; NULL if unmapped. */
static uint8_t *kptr_pa(es_machine *m, uint64_t va, uint64_t *pa_out)
{
    /* the current address space's kernel PGD: under pti the user PGD
     * lacks most of the kernel half, and the CPU may be in user mode on it;
     * not the boot pair, which belongs to one process only */
    uint64_t root = es_vm_current(m).pgd;
    if (!root)
        return NULL;
    uint64_t table = root & ES_PTE_ADDR;
    for (int level = 3; level >= 0; level--) {
        uint64_t *t = (uint64_t *)es_phys(m, table);
        if (!t)
            return NULL;
        uint64_t e = t[(va >> (12 + 9 * level)) & 511];
        if (!(e & ES_PTE_P))
            return NULL;
        if (level == 0 || ((level == 1 || level == 2) && (e & ES_PTE_PS))) {
            uint64_t span = 1ull << (12 + 9 * level);
            uint64_t pa = (e & ES_PTE_ADDR & ~(span - 1)) | (va & (span - 1));
            if (pa_out)
                *pa_out = pa;
            return es_phys(m, pa);
        }
        table = e & ES_PTE_ADDR;
    }
    return NULL;
}

/* Copies n bytes between host memory and kernel virtual addresses, page by
 * page; a write bumps the code generation of pages holding decoded code
 * (written behind the CPU's back, their decodes are stale). */
static int kcopy(es_machine *m, uint64_t va, uint8_t *host, size_t n, bool write)
{
    while (n) {
        uint64_t pa = 0;
        uint8_t *p = kptr_pa(m, va, &pa);
        if (!p)
            return -1;
        if (write && (pa >> 12) < m->nframes && m->frames[pa >> 12].has_code) {
            es_code_stale(m, pa >> 12);
            m->fetch_va = 1; /* a block running on it stops (sim/block.h) */
        }
        size_t chunk = PAGE - (va & (PAGE - 1));
        if (chunk > n)
            chunk = n;
        if (write)
            memcpy(p, host, chunk);
        else
            memcpy(host, p, chunk);
        host += chunk;
        va += chunk;
        n -= chunk;
    }
    return 0;
}

int es_kernel_read(es_machine *m, uint64_t va, void *dst, size_t n)
{
    return kcopy(m, va, dst, n, false);
}

int es_kernel_write(es_machine *m, uint64_t va, const void *src, size_t n)
{
    return kcopy(m, va, (uint8_t *)src, n, true);
}

/* Makes room for `extra` more frames beyond the user's memory cap: the
 * kernel's pages are the machine's, not the process's, so --mem-cap keeps
 * meaning what it meant without a kernel. */
int es_kernel_grow_frames(es_machine *m, uint64_t extra)
{
    /* into the room es_machine_new left when there is enough: a realloc
     * copies the whole table (a 64 MiB cap: 400 KB, every page touched) */
    if (m->nframes + extra > m->frames_room) {
        es_frame *f = realloc(m->frames, (size_t)(m->nframes + extra) * sizeof *f);
        if (!f)
            return -1;
        m->frames = f;
        m->frames_room = m->nframes + extra;
    }
    memset(m->frames + m->nframes, 0, (size_t)extra * sizeof *m->frames);
    m->nframes += extra;
    m->fetch_va = 1; /* fetch_frame pointed into the old array */
    m->fetch_frame = NULL;
    return 0;
}
