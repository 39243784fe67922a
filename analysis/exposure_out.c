/* exposure_out.c - exposure results as text and JSON, and a batch of
 * cases (`entrysim exposure`) printed to the caller's FILE*s. */
#include <stdlib.h>
#include <string.h>

#include "exposure.h"
#include "kernel.h"
#include "mitigations.h"

static const char *const point_names[ES_NPROBES] = {"dispatch", "table_target", "body"};
/* registers in the order people list them */
static const int order[16] = {ES_RAX, ES_RBX, ES_RCX, ES_RDX, ES_RSI, ES_RDI, ES_RBP, ES_RSP,
                              ES_R8,  ES_R9,  ES_R10, ES_R11, ES_R12, ES_R13, ES_R14, ES_R15};

static void conv_name(unsigned patches, char *buf, size_t n)
{
    es_patches_name(patches, buf, n);
}

void es_exposure_print_json(FILE *f, const es_exposure *e)
{
    char conv[64];
    conv_name(e->patches, conv, sizeof conv);
    fprintf(f, "{\"convention\": \"%s\", \"patches\": [", conv);
    int k = 0;
    for (int i = 0; i < ES_NPATCHES; i++)
        if (e->patches & (1u << i))
            fprintf(f, "%s\"%.8s\"", k++ ? ", " : "", es_patch_id(i));
    /* "nr" is the table row; an x32 program passes it with the x32 bit set */
    fprintf(f, "], \"entry\": \"%s\", \"cpu\": \"%s\", \"syscall\": \"%s\", \"nr\": %d, %s"
               "\"arity\": %d, \"probes\": [",
            es_entry_name(e->entry), e->vendor ? "amd" : "intel", e->name, e->nr,
            e->entry == ES_ENTRY_X32 ? "\"x32_bit\": true, " : "", e->arity);
    k = 0;
    for (int p = 0; p < ES_NPROBES; p++) {
        const es_probe *pr = &e->probe[p];
        if (!pr->present)
            continue;
        fprintf(f, "%s{\"point\": \"%s\", \"symbol\": \"%s\", \"reached\": %s, \"regs\": {",
                k++ ? ", " : "", point_names[p], pr->symbol, pr->hit ? "true" : "false");
        int j = 0;
        for (int oi = 0; oi < 16 && pr->hit; oi++) {
            int r = order[oi];
            if (!pr->regs[r])
                continue;
            fprintf(f, "%s\"%s\": [", j++ ? ", " : "", es_taint_gpr_name(r));
            int q = 0;
            for (int b = 0; b < ES_TL_NBITS; b++)
                if (pr->regs[r] & (1u << b))
                    fprintf(f, "%s\"%s\"", q++ ? ", " : "", es_taint_label_name(b, e->abi));
            fputc(']', f);
        }
        fputs("}, \"exposed\": [", f);
        j = 0;
        for (int oi = 0; oi < 16; oi++)
            if (pr->exposed & (1u << order[oi]))
                fprintf(f, "%s\"%s\"", j++ ? ", " : "", es_taint_gpr_name(order[oi]));
        fputs("]}", f);
    }
    fputc(']', f);
    if (e->timed) {
        char mit[64];
        es_mitigations_name(e->mitigations, mit, sizeof mit);
        fprintf(f, ", \"timing\": {\"uarch\": \"%s\", \"mitigations\": \"%s\", "
                   "\"returned\": %s, \"cycles\": %llu, \"phases\": {",
                e->uarch[0] ? e->uarch : "none", mit, e->returned ? "true" : "false",
                (unsigned long long)e->cycles);
        for (int k = 0; k < ES_PH_COUNT; k++)
            fprintf(f, "%s\"%s\": %llu", k ? ", " : "", es_phase_name(k),
                    (unsigned long long)e->phase[k]);
        fputs("}}", f);
    }
    fputc('}', f);
}

void es_exposure_print_text(FILE *f, const es_exposure *e)
{
    char conv[64];
    conv_name(e->patches, conv, sizeof conv);
    fprintf(f, "%s via %s (nr %d, %d argument%s), %s, %s CPU\n", e->name,
            es_entry_name(e->entry), e->nr, e->arity, e->arity == 1 ? "" : "s", conv,
            e->vendor ? "AMD" : "Intel");
    for (int p = 0; p < ES_NPROBES; p++) {
        const es_probe *pr = &e->probe[p];
        if (!pr->present)
            continue;
        fprintf(f, "  %-13s %-32s", point_names[p], pr->symbol);
        if (!pr->hit) {
            fputs(" (not reached)\n", f);
            continue;
        }
        int col = 0;
        for (int oi = 0; oi < 16; oi++) {
            int r = order[oi];
            if (!pr->regs[r])
                continue;
            char lab[160];
            es_taint_label_str(pr->regs[r], e->abi, lab, sizeof lab);
            char cell[200];
            snprintf(cell, sizeof cell, "%s=%s%s", es_taint_gpr_name(r), lab,
                     (pr->exposed & (1u << r)) ? "!" : "");
            if (col && col + strlen(cell) > 64) {
                fprintf(f, "\n  %-13s %-32s", "", "");
                col = 0;
            }
            col += fprintf(f, " %s", cell);
        }
        if (!col)
            fputs(" (no user values)", f);
        fprintf(f, "\n");
    }
    fprintf(f, "  exposed: %d register%s  (reg=labels: the register holds a value derived from "
               "those user registers; ! = exposed)\n",
            es_exposure_count(e), es_exposure_count(e) == 1 ? "" : "s");
    if (e->timed) {
        char mit[64];
        es_mitigations_name(e->mitigations, mit, sizeof mit);
        fprintf(f, "  cycles (%s, %s, one cold call%s): %llu =", 
                e->uarch[0] ? e->uarch : "instruction count", mit,
                e->returned ? "" : ", did not return to user mode",
                (unsigned long long)e->cycles);
        for (int k = 0; k < ES_PH_COUNT; k++)
            fprintf(f, " %s %llu", es_phase_name(k), (unsigned long long)e->phase[k]);
        fputc('\n', f);
    }
}


/* The totals line after several cases. */
static void print_summary(FILE *sf, const es_exposure_cfg *cfg, const int total[2],
                          const int ran[2], int perpt[2][ES_NPROBES])
{
    fprintf(sf, "summary (%s):", es_entry_name(cfg->entry));
    for (int c = 0; c < cfg->nconv; c++) {
        char conv[64];
        conv_name(cfg->convs[c], conv, sizeof conv);
        fprintf(sf, "%s %s: %d exposed register%s in %d syscall%s (dispatch %d, "
                    "table_target %d, body %d)",
                c ? ";" : "", conv, total[c], total[c] == 1 ? "" : "s", ran[c],
                ran[c] == 1 ? "" : "s", perpt[c][0], perpt[c][1], perpt[c][2]);
    }
    fputc('\n', sf);
}

/* The syscalls of the entry: the kernel tree's rows, or the built-in ones. */
static size_t entry_names(const es_exposure_opts *o, int entry, const char **names, size_t cap)
{
    return o->ktab ? es_ktab_syscalls(o->ktab, entry, names, cap)
                   : es_entry_syscalls(entry, names, cap);
}

int es_exposure_report(const es_exposure_cfg *cfg, FILE *out, FILE *diag)
{
    const unsigned *convs = cfg->convs;
    int nconv = cfg->nconv, entry = cfg->entry, vendor = cfg->vendor;
    bool all = cfg->all, json = cfg->json;
    const es_exposure_opts opts = cfg->opts;
    /* every case boots one of the same one or two images in a machine of
     * its own: parse each image once, and pass the machines' memory on
     * (out of memory for either: each case makes its own, as before) */
    es_exposure_batch batch = {es_kimages_new(opts.kernel_dir), es_spares_new()};
    /* the names to run */
    size_t cap = cfg->all ? entry_names(&opts, entry, NULL, 0) : 1, nn = 1;
    const char **names = calloc(cap ? cap : 1, sizeof *names);
    if (!names) {
        es_kimages_free(batch.images);
        es_spares_free(batch.spares);
        return 1;
    }
    if (cfg->all)
        nn = entry_names(&opts, entry, names, cap);
    else
        names[0] = cfg->name;

    int status = 0, cases = 0;
    int total[2] = {0, 0}, perpt[2][ES_NPROBES] = {{0}}, ran[2] = {0, 0};
    for (size_t k = 0; k < nn; k++) {
        for (int c = 0; c < nconv; c++) {
            es_exposure e;
            if (es_exposure_run_batch(convs[c], entry, vendor, names[k], &opts, &batch, &e)) {
                fprintf(diag, "entrysim: exposure: %s\n", e.error);
                /* a name the entry does not have is the user's mistake */
                status = e.bad_name && !all ? 2 : 1;
                if (!all)
                    goto done;
                continue;
            }
            ran[c]++;
            total[c] += es_exposure_count(&e);
            for (int p = 0; p < ES_NPROBES; p++)
                if (e.probe[p].hit)
                    perpt[c][p] += __builtin_popcount(e.probe[p].exposed);
            if (json) {
                fputs(cases ? ",\n " : "[\n ", out);
                es_exposure_print_json(out, &e);
            } else {
                es_exposure_print_text(out, &e);
            }
            cases++;
        }
        if (!json && nconv > 1 && !all)
            fputc('\n', out);
    }
done:
    if (json && cases)
        fputs("\n]\n", out);
    else if (json && !status)
        fputs("[]\n", out);
    /* a summary of nothing would read as "0 exposed registers" */
    if ((all || nconv > 1) && cases)
        print_summary(json ? diag : out, cfg, total, ran, perpt);
    free(names);
    es_kimages_free(batch.images);
    es_spares_free(batch.spares);
    return status;
}


