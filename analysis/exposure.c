/* exposure.c - one exposure case (exposure.h: es_exposure_run).
 *
 * The generated guest (exposure_guest.c) makes the syscall through the
 * entry path.  The kernel boots, IRETQs to the program, the program runs to its entry
 * instruction; there every user register is labelled with itself and the
 * taint observer is attached; then the run goes on, one instruction at a
 * time, until the last probe.
 */
#include "exposure.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoder.h"
#include "host.h"
#include "kernel.h"
#include "loader.h"
#include "mem.h"
#include "mitigations.h"
#include "exposure_guest.h"
#include "exposure_probe.h"
#include "timing.h"

static int fail(es_exposure *e, const char *msg)
{
    snprintf(e->error, sizeof e->error, "%s", msg);
    return -1;
}

int es_exposure_run(unsigned patches, int entry, int vendor, const char *name, es_exposure *e)
{
    return es_exposure_run_opts(patches, entry, vendor, name, NULL, e);
}

/* After the run: the one system call the guest made, from the tracker. */
static void take_phases(es_exposure *e, const es_phases *ph, const es_machine *m)
{
    e->timed = true;
    e->returned = m->cpl == 3 && m->stop == ES_STOP_NONE;
    for (size_t i = 0; i < es_phases_nrows(ph); i++) {
        const es_phase_row *r = es_phases_row(ph, i);
        if (r->entry != e->entry || r->count == 0)
            continue;
        e->cycles = r->cycles;
        memcpy(e->phase, r->phase, sizeof e->phase);
        return;
    }
}

/* Fills e's description of the case and refuses what cannot run: 0 or -1
 * with e->error. */
static int check_case(unsigned patches, int entry, int vendor, const char *name,
                      const es_exposure_opts *opts, es_exposure *e)
{
    memset(e, 0, sizeof *e);
    e->mitigations = opts->mitigations;
    if (opts->timing && opts->uarch)
        snprintf(e->uarch, sizeof e->uarch, "%s", opts->uarch);
    e->patches = patches;
    e->entry = entry;
    snprintf(e->name, sizeof e->name, "%s", name);
    if (entry < 0 || entry >= ES_ENTRY_COUNT)
        return fail(e, "unknown entry path");
    if (vendor < 0)
        vendor = entry == ES_ENTRY_SYSENTER32 ? 0 : 1;
    e->vendor = vendor;
    /* SDM Vol. 2B SYSCALL: #UD in compatibility mode on Intel; AMD APM
     * Vol. 3 SYSENTER: #UD in long mode, compatibility mode included */
    if (entry == ES_ENTRY_SYSCALL32 && vendor == 0)
        return fail(e, "syscall32 needs --cpu amd: Intel CPUs raise #UD for SYSCALL in "
                       "compatibility mode");
    if (entry == ES_ENTRY_SYSENTER32 && vendor == 1)
        return fail(e, "sysenter32 needs --cpu intel: AMD CPUs raise #UD for SYSENTER in "
                       "long mode (compatibility mode included)");

    e->nr = -1;
    e->abi = es_entry_abi(entry);
    e->nr = opts->ktab ? es_ktab_nr(opts->ktab, entry, name) : es_syscall_nr(entry, name);
    if (e->nr >= 0)
        e->arity = opts->ktab ? es_ktab_arity(opts->ktab, entry, e->nr)
                              : es_syscall_arity(entry, e->nr);
    if (e->nr < 0) {
        e->bad_name = true;
        if (entry == ES_ENTRY_VSYSCALL)
            snprintf(e->error, sizeof e->error,
                     "%s: the vsyscall page offers only gettimeofday, time and getcpu", name);
        else
            snprintf(e->error, sizeof e->error, "%s: no such syscall in the %s table%s", name,
                     es_entry_is32(entry) ? "i386" : "x86-64",
                     entry == ES_ENTRY_X32         ? " for x32"
                     : entry == ES_ENTRY_SYSCALL64 ? " for 64-bit processes"
                                                   : "");
        return -1;
    }
    size_t imgsz;
    if (!opts->kernel_dir && !es_kernel_image(patches, &imgsz))
        return fail(e, "this build has no guest kernel image");
    return 0;
}

/* The machine with the guest loaded and the kernel booted, and with
 * opts->timing the cycle model and phase tracker attached from the boot on
 * (so the call finds the caches as a program's first syscall would).
 * 0, or -1 with e->error. */
static int boot_case(es_machine *m, const uint8_t *elf, size_t elfn, unsigned patches,
                     const es_exposure_opts *opts, es_kimages *images, es_exposure *e,
                     es_timing **tm, es_phases **ph)
{
    m->deterministic = true;
    m->vendor = (uint8_t)e->vendor;
    es_host_config cfg = {.root = "/", .deterministic = true,
                          .stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1};
    es_image img;
    char *args[] = {"exposure", NULL};
    char *env[] = {NULL};
    if (es_host_init(m, &cfg) || es_load_elf_mem(m, elf, elfn, &img) ||
        (images             ? es_kernel_load_shared(m, images, patches)
         : opts->kernel_dir ? es_kernel_load_dir(m, opts->kernel_dir, patches)
                            : es_kernel_load(m, patches)) ||
        es_kernel_set_mitigations(m, opts->mitigations))
        return fail(e, m->message);
    es_kernel_set_abi(m, e->abi);
    if (opts->timing) {
        char err[200] = "";
        if (opts->uarch && !(*tm = es_timing_new(opts->uarch, err, sizeof err)))
            return fail(e, err);
        if ((*tm && es_timing_attach(*tm, m)) || !(*ph = es_phases_attach(m, *tm)))
            return fail(e, "no free observer slot for the cycle model");
    }
    if (es_start_process(m, &img, 1, args, env) || es_kernel_boot(m))
        return fail(e, m->message);
    return 0;
}

/* Runs the booted machine to the entry instruction untraced, labels the
 * user registers there and follows them, with taint tracking, through the
 * probes: to the last probe, or with ph back to user mode.  0, or -1 with
 * e->error. */
static int trace_case(es_machine *m, es_taint *t, es_exposure *e, uint64_t label_rip,
                      const es_phases *ph)
{
    es_probe *pd = &e->probe[ES_PROBE_DISPATCH], *pt = &e->probe[ES_PROBE_TABLE_TARGET],
             *pb = &e->probe[ES_PROBE_BODY];
    es_probe *last = pb->present ? pb : pt->present ? pt : pd;
    const uint64_t boot_budget = 20000000, run_budget = 5000000;
    uint64_t steps = 0;
    while (!(m->cpl == 3 && m->rip == label_rip)) {
        if (++steps > boot_budget || (es_step(m) != ES_OK && m->stop != ES_STOP_NONE) ||
            m->stop != ES_STOP_NONE) {
            snprintf(e->error, sizeof e->error,
                     "the generated program did not reach its syscall instruction (%s)",
                     m->message[0] ? m->message : "instruction budget");
            return -1;
        }
    }
    es_taint_label_user_regs(t, m, e->abi);
    if (e->entry == ES_ENTRY_VSYSCALL)
        es_taint_set_reg(t, ES_RAX, ES_TL_REG(ES_RAX)); /* a marker, not a number */
    if (es_taint_attach(m, t))
        return fail(e, "no free observer slot");
    bool entered = false;
    for (steps = 0; steps < run_budget; steps++) {
        if (m->cpl == 0) {
            entered = true;
            for (int p = 0; p < ES_NPROBES; p++)
                if (e->probe[p].present && !e->probe[p].hit && m->rip == e->probe[p].addr)
                    es_probe_record(&e->probe[p], t);
            if (last->hit && !ph)
                break;
        } else if (entered) {
            break; /* back in user mode */
        }
        es_step(m);
        if (m->stop != ES_STOP_NONE)
            break;
    }
    return 0;
}

int es_exposure_run_opts(unsigned patches, int entry, int vendor, const char *name,
                         const es_exposure_opts *opts, es_exposure *e)
{
    return es_exposure_run_batch(patches, entry, vendor, name, opts, NULL, e);
}

int es_exposure_run_batch(unsigned patches, int entry, int vendor, const char *name,
                          const es_exposure_opts *opts, const es_exposure_batch *batch,
                          es_exposure *e)
{
    static const es_exposure_opts defaults = {.timing = false, .uarch = NULL,
                                              .mitigations = ES_MIT_DEFAULT};
    static const es_exposure_batch alone = {NULL, NULL};
    if (!opts)
        opts = &defaults;
    if (!batch)
        batch = &alone;
    if (check_case(patches, entry, vendor, name, opts, e))
        return -1;
    uint8_t elf[ES_GUEST_MAX];
    uint64_t label_rip;
    int nr = entry == ES_ENTRY_VSYSCALL ? es_vsyscall_index(name) : e->nr;
    size_t elfn = es_exposure_guest(entry, nr, elf, &label_rip);

    es_machine *m = es_machine_new_spared(64ull << 20, batch->spares);
    es_taint *t = es_taint_new();
    es_timing *tm = NULL;
    es_phases *ph = NULL;
    int rc = -1;
    if (!m || !t)
        fail(e, "out of host memory");
    else if (!boot_case(m, elf, elfn, patches, opts, batch->images, e, &tm, &ph)) {
        es_probe_setup(m, e, entry, patches);
        rc = trace_case(m, t, e, label_rip, ph);
        if (!rc && ph)
            take_phases(e, ph, m);
    }
    es_phases_free(ph);
    es_timing_free(tm);
    es_taint_free(t);
    if (m) {
        es_host_free(m);
        es_machine_free(m);
    }
    return rc;
}

int es_exposure_count(const es_exposure *e)
{
    int n = 0;
    for (int p = 0; p < ES_NPROBES; p++)
        if (e->probe[p].hit)
            n += __builtin_popcount(e->probe[p].exposed);
    return n;
}

