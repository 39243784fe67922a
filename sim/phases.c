/* phases.c - placeholder until the phase tracker lands (issue 4, in
 * progress this session). */
#include "phases.h"

const char *es_phase_name(int phase)
{
    static const char *const n[] = {"hw_entry", "entry_asm", "dispatch", "stub",
                                    "body", "exit_path", "hw_exit"};
    return phase >= 0 && phase < ES_PH_COUNT ? n[phase] : "?";
}

es_phases *es_phases_attach(es_machine *m, es_timing *t) { (void)m; (void)t; return NULL; }
void es_phases_free(es_phases *p) { (void)p; }
void es_phases_print(const es_phases *p, es_machine *m, const es_run_meta *meta, FILE *out)
{
    (void)p; (void)m; (void)meta;
    fputs("entrysim: timing: the phase report is not built yet\n", out);
}
int es_phases_write_json(const es_phases *p, es_machine *m, const es_run_meta *meta,
                         const char *path)
{
    (void)p; (void)m; (void)meta; (void)path;
    return -1;
}
