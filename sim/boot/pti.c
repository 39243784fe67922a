/* pti.c - page-table isolation for the guest kernel (see pti.h). */
#include "pti.h"

#include <errno.h>
#include <string.h>

#include "fault.h"
#include "guest_cpuid.h"
#include "es_boot.h"
#include "kernel.h"
#include "kernel_int.h"
#include "kmem.h"
#include "ksyms.h"
#include "mem.h"
#include "vm.h"

/* Two physically consecutive frames, the first 8 KiB aligned: the PGD
 * pair (Linux allocates it as one order-1 page, PGD_ALLOCATION_ORDER).
 * Frames come one at a time, so take a few until two neighbours turn up
 * and give the rest back. */
static uint64_t alloc_pgd_pair(es_machine *m)
{
    enum { TRIES = 64 };
    uint64_t got[TRIES], pair = 0;
    size_t n = 0;
    while (n < TRIES && !pair) {
        uint64_t pfn = es_frame_alloc(m);
        if (!pfn)
            break;
        got[n++] = pfn;
        for (size_t a = 0; a < n && !pair; a++)
            for (size_t b = 0; b < n && !(got[a] & 1); b++)
                if (got[b] == got[a] + 1)
                    pair = got[a];
    }
    for (size_t a = 0; a < n; a++)
        if (got[a] != pair && got[a] != pair + 1)
            es_frame_free(m, got[a]);
    return pair << 12;
}

/* Maps [lo, hi) of the kernel PGD into the user PGD with the same leaf
 * entries (same frames, same rights). */
static int pti_share(es_machine *m, uint64_t kpgd, uint64_t upgd, uint64_t lo, uint64_t hi,
                     const char *what)
{
    if (!lo || hi < lo)
        return es_fail_msg(m, "kernel image: %s is missing or empty (pti cannot map it)", what);
    for (uint64_t va = PAGE_START(lo); va < hi; va += PAGE) {
        uint64_t *kpte = es_pte(m, kpgd, va, false);
        if (!kpte || !(*kpte & ES_PTE_P))
            return es_fail_msg(m, "kernel image: %s at 0x%llx is not mapped", what,
                        (unsigned long long)va);
        uint64_t e = *kpte;
        uint64_t *upte = es_pte(m, upgd, va, true);
        if (!upte)
            return es_fail_msg(m, "out of guest memory for pti's user page tables");
        *upte = e;
    }
    return 0;
}

/* PTI with PCID: user mappings were changed or removed (sim/vm.c), so the
 * kernel's next switch to the user PGD must flush the user PCID (sets the
 * per-cpu flag SWITCH_TO_USER_CR3 tests, Linux's user_pcid_flush_mask).
 * No-op otherwise. */
static void pti_user_flush(es_machine *m)
{
    const struct es_kernel *k = m->kernel;
    if (!k || !k->pti_pgd || !es_cpu_has_pcid(m))
        return;
    uint64_t pcpu = es_kernel_sym(m, "es_percpu");
    uint64_t one = 1;
    if (pcpu)
        es_kernel_write(m, pcpu + ES_PCPU_USER_PCID_FLUSH, &one, sizeof one);
}

/* PTI: after the simulator adds a user mapping at va (sim/vm.c), copies
 * the PML4 entry of the user half between the two PGDs so both see it
 * (Linux's pti_set_user_pgtbl keeps them equal the same way).  No-op
 * without pti. */
static void pti_sync(es_machine *m, uint64_t va)
{
    const struct es_kernel *k = m->kernel;
    if (!k || !k->pti_pgd || va >= KERNEL_LO)
        return;
    /* the current process's pair, whichever of its PGDs CR3 holds */
    uint64_t pair = es_vm_current(m).pgd;
    uint64_t *kp = (uint64_t *)es_phys(m, pair);
    uint64_t *up = (uint64_t *)es_phys(m, pair + PAGE);
    unsigned i = (unsigned)((va >> 39) & 511);
    if (!kp || !up || kp[i] == up[i])
        return;
    /* a new PML4 entry appears in whichever PGD was current */
    if (kp[i] & ES_PTE_P)
        up[i] = kp[i];
    else
        kp[i] = up[i];
}

/* fork (sim/vm.c es_vm_fork): a new pair whose kernel halves are the
 * current pair's, each from its own PGD (the user PGD's maps only the
 * entry trampolines); the user halves empty for vm.c to fill. */
static int pti_fork(es_machine *m, uint64_t *kernel_pgd_out)
{
    uint64_t cur = es_vm_current(m).pgd;
    const uint64_t *ck = (const uint64_t *)es_phys(m, cur);
    const uint64_t *cu = (const uint64_t *)es_phys(m, cur + PAGE);
    uint64_t pair = alloc_pgd_pair(m);
    if (!ck || !cu || !pair) {
        if (pair) {
            es_frame_free(m, pair >> 12);
            es_frame_free(m, (pair >> 12) + 1);
        }
        return -ENOMEM;
    }
    uint64_t *kp = (uint64_t *)es_phys(m, pair), *up = (uint64_t *)es_phys(m, pair + PAGE);
    memcpy(kp + 256, ck + 256, PAGE / 2);
    memcpy(up + 256, cu + 256, PAGE / 2);
    *kernel_pgd_out = pair;
    return 0;
}

/* Page-table isolation (Linux 4.17 arch/x86/mm/pti.c, our own code): a
 * PGD pair replaces the address space's PGD.  The kernel PGD is the old
 * one; the user PGD shares the user half (PML4 entries 0-255 point to the
 * same lower tables) and maps of the kernel half only what runs before
 * the entry code's CR3 switch or after the switch back: the entry text,
 * the entry data (per-cpu area, GDT, IDT, TSS), the task stack the CPU
 * pushes the interrupt frame on, and the vsyscall page (Linux maps its
 * cpu_entry_area and the vsyscall page the same way).  Any other kernel
 * address is not present in user mode. */
int es_pti_setup(es_machine *m, struct es_kernel *k)
{
    if (k->pti_pgd)
        return 0;
    if (!m->cr3)
        return es_fail_msg(m, "no address space to isolate");
    enum { EXTRA = 96 }; /* the pair, its search, a few page tables */
    if (es_kernel_grow_frames(m, EXTRA))
        return es_fail_msg(m, "out of host memory");
    uint64_t cap = m->mem_cap, used = m->frames_used;
    m->mem_cap = (m->frames_used + EXTRA) * PAGE;
    int rc = 0;
    uint64_t pair = alloc_pgd_pair(m);
    if (!pair)
        rc = es_fail_msg(m, "out of guest memory for pti's page-table pair");
    if (!rc) {
        uint64_t *old = (uint64_t *)es_phys(m, m->cr3 & ES_PTE_ADDR);
        uint64_t *kp = (uint64_t *)es_phys(m, pair), *up = (uint64_t *)es_phys(m, pair + PAGE);
        memcpy(kp, old, PAGE);
        memcpy(up, old, PAGE / 2); /* the user half */
        /* and the kernel stacks, if some were made already (sim/vm_mm.c):
         * the CPU pushes the entry frame on them before the CR3 switch */
        unsigned ks = (unsigned)((ES_KSTACK_BASE >> 39) & 511);
        up[ks] = old[ks];
        uint64_t task = 0, task_size = 0; /* its top may be the image's end: use the size */
        es_kernel_sym_size(m, "es_task_stack", &task, &task_size);
        rc = pti_share(m, pair, pair + PAGE, es_kernel_sym(m, "__entry_text_start"),
                       es_kernel_sym(m, "__entry_text_end"), "the entry text") ||
             pti_share(m, pair, pair + PAGE, es_kernel_sym(m, "__entry_data_start"),
                       es_kernel_sym(m, "__entry_data_end"), "the entry data") ||
             pti_share(m, pair, pair + PAGE, task, task + task_size, "the task stack") ||
             pti_share(m, pair, pair + PAGE, ES_VSYSCALL_ADDR, ES_VSYSCALL_ADDR + PAGE,
                       "the vsyscall page");
    }
    /* the kernel's frames do not count against the process's cap; the
     * old PGD frame stays allocated (unused) */
    m->frames_used = used;
    m->mem_cap = cap;
    if (rc)
        return -1;
    m->cr3 = pair; /* the kernel PGD, PCID 0: the loader's view until boot */
    k->pti_pgd = pair;
    /* vm.c's mapping changes must now keep the two PGDs in step */
    m->hooks.pti_sync = pti_sync;
    m->hooks.pti_user_flush = pti_user_flush;
    m->hooks.pti_fork = pti_fork; /* every process gets a pair of its own */
    es_tlb_flush(m);
    m->fetch_va = 1;
    return 0;
}

uint64_t es_kernel_pti_pgd(const es_machine *m)
{
    return m->kernel ? m->kernel->pti_pgd : 0;
}
