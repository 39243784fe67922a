/* throughput.c - steady-state cycles per iteration of a basic block under
 * the cycle model, with BHive's definition (the one `entrysim
 * measure-native` applies on the host, sim/native/measure.c):
 *
 *  - the block is refused up front when measure-native would refuse it
 *    (control flow, privileged, REP string, segment loads, writes through
 *    FS/GS or RIP-relative operands: es_native_check_block);
 *  - it is copied TP_UNROLL times followed by a jump back to the first copy
 *    (the host harness closes its loop with dec/jnz the same way, once per
 *    unrolled body);
 *  - every GPR starts at 0x12345600, RSP at that + 1 GiB, x87/MXCSR/XMM in
 *    their reset state; pages the block touches are mapped on demand, all
 *    onto one physical page filled with the 8-byte pattern 0x12345600;
 *  - a functional pass maps the working set (BHive discards runs that
 *    mapped pages), then fresh machines with the same pages run twice with
 *    the model attached (the first run warms its caches and predictors as
 *    BHive's repetitions do) and the cycle count of the second is read at
 *    two iteration counts:
 *    throughput = (cycles(I2) - cycles(I1)) / (I2 - I1).
 *
 * Running the block functionally gives the real addresses, so memory
 * dependencies and store-to-load forwarding are exact.  Faults (#DE, #UD,
 * a page that cannot be mapped) end in an error naming the byte offset.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault.h"
#include "mem.h"
#include "measure.h"
#include "seg.h"
#include "tm_int.h"

#define TP_REG 0x12345600ull       /* BHive's register value (as measure.c) */
#define TP_STACK_OFFSET 0x40000000ull
#define TP_CODE 0x7f0000000000ull /* far from the data region */
#define TP_UNROLL 50u              /* copies per loop body (as measure.c) */
#define TP_ITERS1 8u               /* loop trips timed (two lengths) */
#define TP_ITERS2 16u
#define TP_MAX_PAGES 2048u         /* as measure.c: on-demand pages before giving up */
#define TP_MAX_BLOCK 4096u

typedef struct tp_run {
    es_machine *m;
    uint64_t data_pa;
    uint64_t *pages; /* mapped linear pages */
    size_t npages;
} tp_run;

static int map_page(tp_run *r, uint64_t va, int record)
{
    uint64_t *pte = es_pte(r->m, r->m->cr3, va, true);
    if (!pte)
        return -1;
    *pte = r->data_pa | ES_PTE_P | ES_PTE_W | ES_PTE_U | ES_PTE_A | ES_PTE_D;
    if (record) {
        uint64_t *p = realloc(r->pages, (r->npages + 1) * sizeof *p);
        if (!p)
            return -1;
        r->pages = p;
        r->pages[r->npages++] = va & ~0xfffull;
    }
    return 0;
}

/* A fresh machine with the unrolled code at TP_CODE and BHive's state. */
static es_machine *tp_machine(tp_run *r, const uint8_t *code, size_t len, int mode,
                              char *err, size_t errlen)
{
    es_machine *m = es_machine_new(64ull << 20);
    if (!m) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    r->m = m;
    m->cr3 = es_new_pml4(m);
    uint64_t dpfn = es_frame_alloc(m);
    size_t total = len * TP_UNROLL + 5;
    if (!m->cr3 || !dpfn)
        goto oom;
    r->data_pa = dpfn << 12;
    uint8_t *data = es_phys(m, r->data_pa);
    if (!data)
        goto oom;
    for (int i = 0; i < 4096; i += 8) {
        uint64_t v = TP_REG;
        memcpy(data + i, &v, 8);
    }
    for (uint64_t off = 0; off < total; off += 4096) {
        uint64_t pfn = es_frame_alloc(m);
        uint64_t *pte = es_pte(m, m->cr3, TP_CODE + off, true);
        if (!pfn || !pte)
            goto oom;
        *pte = (pfn << 12) | ES_PTE_P | ES_PTE_U | ES_PTE_A;
    }
    /* the unrolled body and `jmp rel32` back to its start */
    uint8_t jmp[5] = {0xe9};
    int32_t rel = -(int32_t)(len * TP_UNROLL + 5);
    memcpy(jmp + 1, &rel, 4);
    for (size_t i = 0; i < total; i++) {
        uint64_t va = TP_CODE + i;
        uint64_t *pte = es_pte(m, m->cr3, va, false);
        uint8_t *p = es_phys(m, (*pte & ES_PTE_ADDR) | (va & 0xfff));
        size_t k = i - (i / len) * len;
        *p = i < len * TP_UNROLL ? code[k] : jmp[i - len * TP_UNROLL];
    }
    for (size_t i = 0; i < r->npages; i++)
        if (map_page(r, r->pages[i], 0))
            goto oom;
    es_set_mode(m, 3, mode);
    m->seg[ES_SEG_CS].sel = mode == ES_MODE_64 ? 0x33 : 0x23;
    m->seg[ES_SEG_SS].sel = m->seg[ES_SEG_DS].sel = m->seg[ES_SEG_ES].sel = 0x2b;
    for (int g = 0; g < 16; g++)
        m->gpr[g] = TP_REG;
    m->gpr[ES_RSP] = TP_REG + TP_STACK_OFFSET;
    m->rip = TP_CODE;
    m->deterministic = true;
    return m;
oom:
    snprintf(err, errlen, "out of memory");
    es_machine_free(m);
    r->m = NULL;
    return NULL;
}

/* Runs `iters` trips of the loop; records the model's cycle count after
 * TP_ITERS1 and TP_ITERS2 trips in cyc[0], cyc[1] (and its statistics in
 * stats[0], stats[1] when stats is given) when t is given.  Maps pages on
 * demand when `mapping`.  0, or -1 with a message. */
static int tp_execute(tp_run *r, es_timing *t, size_t len, bool mapping, uint64_t *cyc,
                      es_timing_stats *stats, char *err, size_t errlen)
{
    es_machine *m = r->m;
    uint64_t end = TP_CODE + len * TP_UNROLL; /* the jmp back */
    uint64_t trips = 0, guard = 0;
    while (trips < TP_ITERS2) {
        int rc = es_step(m);
        if (rc == ES_FAULT || m->stop == ES_STOP_FAULT) {
            uint64_t off = (m->fault.rip - TP_CODE) % (len ? len : 1);
            if (m->fault.vector == ES_VEC_PF && mapping && r->npages < TP_MAX_PAGES &&
                m->fault.addr >= 4096 && m->fault.addr < (1ull << 47)) {
                if (map_page(r, m->fault.addr, 1)) {
                    snprintf(err, errlen, "out of memory");
                    return -1;
                }
                es_tlb_flush(m);
                m->stop = ES_STOP_NONE;
                continue;
            }
            if (m->fault.vector == ES_VEC_DB && (m->dr[6] & 0x4000))
                snprintf(err, errlen, "the block sets RFLAGS.TF (a single-step #DB)");
            else if (m->fault.vector == ES_VEC_PF)
                snprintf(err, errlen, "#PF at byte %llu: address 0x%llx cannot be mapped",
                         (unsigned long long)off, (unsigned long long)m->fault.addr);
            else
                snprintf(err, errlen, "%s at byte %llu", es_vector_name(m->fault.vector),
                         (unsigned long long)off);
            return -1;
        }
        if (rc != ES_OK) {
            snprintf(err, errlen, "the block stopped the machine: %s",
                     m->message[0] ? m->message : "unsupported instruction");
            return -1;
        }
        if (++guard > (uint64_t)TP_ITERS2 * TP_UNROLL * (len + 1) * 4) {
            snprintf(err, errlen, "the block does not make progress");
            return -1;
        }
        if (m->rip < TP_CODE || m->rip > end) {
            snprintf(err, errlen, "the block left its code");
            return -1;
        }
        if (m->rip == end) {
            /* the trip ends when the jmp back retires */
            if (es_step(m) != ES_OK || m->rip != TP_CODE) {
                snprintf(err, errlen, "the loop jump failed");
                return -1;
            }
            trips++;
            if (t && (trips == TP_ITERS1 || trips == TP_ITERS2)) {
                int k = trips == TP_ITERS2;
                cyc[k] = es_timing_cycles(t);
                if (stats)
                    es_timing_get_stats(t, &stats[k]);
            }
        }
    }
    return 0;
}

int es_timing_throughput(const char *uarch, const uint8_t *code, size_t len, int mode,
                         double *cycles, char *err, size_t errlen)
{
    return es_timing_throughput_stats(uarch, code, len, mode, cycles, NULL, err, errlen);
}

int es_timing_throughput_stats(const char *uarch, const uint8_t *code, size_t len, int mode,
                               double *cycles, es_timing_stats *per_iter, char *err,
                               size_t errlen)
{
    es_timing_stats st[2];
    if (mode != ES_MODE_64) {
        snprintf(err, errlen, "only 64-bit blocks are supported");
        return -1;
    }
    if (len > TP_MAX_BLOCK) {
        snprintf(err, errlen, "block too long");
        return -1;
    }
    if (es_native_check_block(code, len, err, errlen))
        return -1;
    es_timing *t = es_timing_new(uarch, err, errlen);
    if (!t)
        return -1;
    tp_run r = {0};
    int rc = -1;
    uint64_t cyc[2] = {0, 0};
    /* pass 1: functional, maps the working set */
    if (!tp_machine(&r, code, len, mode, err, errlen))
        goto out;
    if (tp_execute(&r, NULL, len, true, cyc, NULL, err, errlen))
        goto out;
    es_machine_free(r.m);
    r.m = NULL;
    /* passes 2 and 3: the same start state with the model attached; the
     * first warms the model's caches, TLBs and predictors as the host
     * harness's earlier repetitions warm the real ones, the second is
     * timed */
    for (int pass = 0; pass < 2; pass++) {
        if (!tp_machine(&r, code, len, mode, err, errlen))
            goto out;
        if (es_timing_attach(t, r.m)) {
            snprintf(err, errlen, "cannot attach the cycle model");
            goto out;
        }
        if (tp_execute(&r, t, len, false, cyc, per_iter ? st : NULL, err, errlen))
            goto out;
        if (pass == 0) {
            es_machine_free(r.m);
            r.m = NULL;
        }
    }
    double iters = (double)(TP_ITERS2 - TP_ITERS1) * TP_UNROLL;
    *cycles = (double)(cyc[1] - cyc[0]) / iters;
    if (per_iter) {
        /* field by field: the struct is all uint64_t counters */
        const uint64_t *a = (const uint64_t *)&st[0], *b = (const uint64_t *)&st[1];
        uint64_t *o = (uint64_t *)per_iter;
        for (size_t k = 0; k < sizeof *per_iter / sizeof(uint64_t); k++)
            o[k] = (uint64_t)((double)(b[k] - a[k]) * 1000.0 / iters + 0.5);
        per_iter->cycles = (uint64_t)(*cycles * 1000.0 + 0.5);
    }
    rc = 0;
out:
    if (r.m)
        es_machine_free(r.m);
    free(r.pages);
    es_timing_free(t);
    return rc;
}
