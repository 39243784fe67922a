/* ui_model.c - the window's snapshot of a debugging session: everything
 * es_ui_render draws, read through dbg.h. */
#include <stdio.h>
#include <string.h>

#include "ui_app.h"

/* Instructions decoded around RIP; the disassembly panel scrolls within
 * them so RIP stays a third of the way down at any window height. */
#define DISASM_BEFORE 20
#define DISASM_AFTER 40

void es_ui_view_fill(es_ui_view *v, es_dbg *d)
{
    es_dbg_get_status(d, &v->st);
    snprintf(v->caption, sizeof v->caption, "%s", es_dbg_caption(d));
    v->nregs = es_dbg_regs(d, v->regs, ES_DBG_MAX_REGS);
    v->flags[0] = 0;
    for (size_t i = 0; i < v->nregs; i++)
        if (!strcmp(v->regs[i].name, "rflags"))
            es_dbg_flags_str(v->regs[i].value, v->flags, sizeof v->flags);
    v->nlines = es_dbg_disasm(d, DISASM_BEFORE, DISASM_AFTER, v->lines, ES_UI_MAX_LINES);
    uint64_t windows;
    v->nwp = es_dbg_wrongpath(d, v->wp, ES_UI_MAX_WP, &windows);
    v->wp_fresh = v->nwp && windows != v->wp_windows; /* one ran since the last look */
    v->wp_windows = windows;
    v->has_ptregs = es_dbg_ptregs(d, &v->ptregs_base, v->slots) == 0;
    v->nlive = es_dbg_exposure(d, v->live, ES_UI_MAX_LIVE);
    v->vregs_fmt = es_dbg_vregs_view(d);
    v->show_vregs = v->vregs_fmt != ES_DBG_VF_OFF;
    v->nvregs = es_dbg_vregs(d, v->vregs, ES_DBG_MAX_VREGS);
    v->probe = es_dbg_probe_table(d);
    v->mem_addr = es_dbg_memview(d);
    v->mem_len = es_dbg_read(d, v->mem_addr, v->mem, sizeof v->mem);
    v->output = es_dbg_output(d, &v->output_len);
    v->syntax = es_dbg_syntax(d);
}
