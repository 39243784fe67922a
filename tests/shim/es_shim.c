/* es_shim.c - see es_shim.h. */
#include "es_shim.h"

#include <string.h>

#include "mem.h"
#include "seg.h"

int est_map(es_machine *m, uint64_t va, int writable, int exec)
{
    uint64_t *pte = es_pte(m, m->cr3, va, true);
    uint64_t pfn = es_frame_alloc(m);
    if (!pte || !pfn)
        return -1;
    *pte = (pfn << 12) | ES_PTE_P | ES_PTE_U | (writable ? ES_PTE_W : 0) |
           (exec ? 0 : ES_PTE_NX);
    es_tlb_flush(m);
    return 0;
}

es_machine *est_new(int mode)
{
    es_machine *m = es_machine_new(64ull << 20);
    if (!m)
        return NULL;
    m->cr3 = es_new_pml4(m);
    for (uint64_t a = 0; a < 0x10000; a += 0x1000) {
        if (est_map(m, EST_CODE + a, 0, 1) || est_map(m, EST_DATA + a, 1, 0) ||
            est_map(m, EST_STACK_TOP - 0x10000 + a, 1, 0)) {
            es_machine_free(m);
            return NULL;
        }
    }
    es_set_mode(m, 3, mode);
    m->seg[ES_SEG_CS].sel = mode == ES_MODE_64 ? 0x33 : 0x23;
    m->seg[ES_SEG_SS].sel = m->seg[ES_SEG_DS].sel = m->seg[ES_SEG_ES].sel = 0x2b;
    m->gpr[ES_RSP] = EST_STACK_TOP - 0x100;
    m->rip = EST_CODE;
    return m;
}

int est_code(es_machine *m, const uint8_t *code, size_t n)
{
    if (n > 0x10000)
        return -1;
    /* code pages are read-only to the guest: write as the kernel would */
    uint64_t *pte;
    for (size_t off = 0; off < n; off += 0x1000) {
        pte = es_pte(m, m->cr3, EST_CODE + off, false);
        if (!pte)
            return -1;
    }
    for (size_t i = 0; i < n; i++) {
        pte = es_pte(m, m->cr3, EST_CODE + i, false);
        uint64_t pa = (*pte & ES_PTE_ADDR) | ((EST_CODE + i) & 0xfff);
        *es_phys(m, pa) = code[i];
        /* written behind the CPU's back: decodes of this page are stale */
        es_code_stale(m, pa >> 12);
    }
    m->rip = EST_CODE;
    return 0;
}

int est_run(es_machine *m, size_t n, uint64_t max)
{
    uint64_t end = EST_CODE + n;
    for (uint64_t i = 0; i < max; i++) {
        if (m->rip == end)
            return 0;
        int rc = es_step(m);
        if (rc != ES_OK)
            return m->stop ? m->stop : ES_STOP_FAULT;
    }
    return m->rip == end ? 0 : ES_STOP_INSNS;
}
