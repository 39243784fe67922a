/* ui_panels.c - layout and drawing of the debugger window from an
 * es_ui_view snapshot.  Pure drawing into a pixel buffer: no SDL window,
 * no session, so the tests can draw hand-made views and the headless
 * screenshot path draws exactly what the window shows. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ui.h"

#define GAP 4   /* pixels between panels */
#define PAD 4   /* pixels inside a panel body */

/* 16 distinct colours for the taint labels, in label-bit order (rax..r15,
 * rip, rflags, nr, ...), chosen to stay readable on the dark panels. */
static const uint32_t label_palette[16] = {
    0xFFFF8C69u, 0xFF7FD67Fu, 0xFF6FB7FFu, 0xFFE6C85Au, 0xFFD98CFFu, 0xFF5FD7D7u,
    0xFFFFA3C8u, 0xFFB5E35Bu, 0xFFFFB347u, 0xFF9FA8FFu, 0xFF7FFFD4u, 0xFFFF6F91u,
    0xFFC9B27Cu, 0xFF8FD3FFu, 0xFFE07BE0u, 0xFFA6E3A1u,
};

uint32_t es_ui_label_colour(int bit)
{
    return label_palette[(unsigned)bit % 16u];
}

uint32_t es_ui_taint_colour(es_label t)
{
    if (!t)
        return ES_UI_FG;
    int bit = 0;
    while (!(t & 1u))
        t >>= 1, bit++;
    return es_ui_label_colour(bit);
}

/* ---- the panel table ----
 * Every panel is one row of `panels` (below, after the draw functions):
 * where it goes, its title and its draw function; the layout, the frames
 * and the drawing order all come from it.  A panel goes in a bar across the
 * window (top or bottom, one text line high), in a band across the window
 * above the bottom bar (as many text rows as its `rows` function asks for
 * the view, none = hidden: an optional panel), or in a column, where it
 * takes `share` percent of the height between the bars and bands; the last
 * panel of a column has share 0 and takes the rest.  Columns take
 * column_share percent of the width, the last one the rest.  Adding a
 * panel: an ES_UI_P_ name in ui.h, a draw function and a row here. */
enum { AT_BAND = -3, AT_TOP = -2, AT_BOTTOM = -1 };

typedef void panel_draw_fn(es_ui_canvas *cv, const es_ui_font *f, const es_ui_layout *lo,
                           const es_ui_view *v);
typedef void panel_title_fn(const es_ui_view *v, char *buf, size_t n);
typedef int panel_hit_fn(const es_ui_layout *lo, const es_ui_view *v, int x, int y);
/* Text rows a band panel wants for the view, `cols` characters wide; 0
 * hides it. */
typedef int panel_rows_fn(const es_ui_view *v, int cols);

typedef struct panel_def {
    int column;               /* AT_TOP, AT_BOTTOM, AT_BAND or a column (0 = left) */
    int share;                /* percent of the column's height, 0 = the rest */
    const char *title;        /* fixed title; NULL for a bar */
    panel_title_fn *title_fn; /* a title that depends on the view (instead of title) */
    panel_draw_fn *draw;
    panel_hit_fn *hit;        /* what a click at (x, y) hits, or NULL */
    panel_rows_fn *rows;      /* AT_BAND: its height from the view */
} panel_def;

/* A band takes at most this percent of the height between the bars, so
 * the columns keep room for pt_regs' 21 slots in a window of usual size. */
#define BAND_MAX 40

static const panel_def panels[ES_UI_NPANELS];

/* Columns: the disassembly needs the most characters (address, text,
 * symbol), the registers and pt_regs about 45 each. */
static const int column_share[] = {36, 36, 0};
#define NCOLUMNS ((int)(sizeof column_share / sizeof *column_share))

static void layout_columns(int w, int x[NCOLUMNS], int cw[NCOLUMNS])
{
    int fixed = 0;
    for (int c = 0; c < NCOLUMNS; c++)
        fixed += cw[c] = w * column_share[c] / 100;
    for (int c = 0; c < NCOLUMNS; c++) {
        if (!column_share[c])
            cw[c] = w - fixed - (NCOLUMNS + 1) * GAP;
        x[c] = c ? x[c - 1] + cw[c - 1] + GAP : GAP;
    }
}

static bool is_bar(int p)
{
    return panels[p].column == AT_TOP || panels[p].column == AT_BOTTOM;
}

/* The bands the view shows, stacked up from the bottom of the middle area
 * (top + *mid_h); *mid_h becomes what is left for the columns. */
static void layout_bands(es_ui_layout *lo, const es_ui_view *v, int w, int top, int *mid_h)
{
    int y_end = top + *mid_h, cap = *mid_h * BAND_MAX / 100;
    int cols = lo->cw ? (w - 2 * GAP - 2 * PAD) / lo->cw : 0;
    for (int p = ES_UI_NPANELS - 1; p >= 0; p--) {
        if (panels[p].column != AT_BAND)
            continue;
        int rows = v && panels[p].rows ? panels[p].rows(v, cols) : 0;
        int ph = lo->ch + 2 + PAD + rows * lo->ch; /* title, margin, rows (es_ui_panel_body) */
        if (ph > cap)
            ph = cap;
        lo->hidden[p] = rows <= 0 || ph <= lo->ch + 2 + PAD;
        if (lo->hidden[p])
            continue;
        cap -= ph + GAP;
        y_end -= ph;
        lo->p[p] = (es_ui_rect){GAP, y_end, w - 2 * GAP, ph};
        y_end -= GAP;
    }
    *mid_h = y_end - top > 0 ? y_end - top : 0;
}

void es_ui_layout_compute(es_ui_layout *lo, const es_ui_view *v, int w, int h,
                          const es_ui_font *f)
{
    memset(lo, 0, sizeof *lo);
    lo->cw = es_ui_font_cell_w(f), lo->ch = es_ui_font_cell_h(f);
    int bar = lo->ch + 4;
    int top = bar + GAP, mid_h = h - bar - GAP - top;
    if (mid_h < 0)
        mid_h = 0;
    layout_bands(lo, v, w, top, &mid_h);
    int x[NCOLUMNS], cw[NCOLUMNS], used[NCOLUMNS] = {0}, count[NCOLUMNS] = {0};
    layout_columns(w, x, cw);
    for (int p = 0; p < ES_UI_NPANELS; p++) {
        const panel_def *d = &panels[p];
        if (d->column == AT_BAND)
            continue;
        if (is_bar(p)) {
            lo->p[p] = (es_ui_rect){0, d->column == AT_TOP ? 0 : h - bar, w, bar};
            continue;
        }
        int c = d->column, k = count[c]++;
        int ph = d->share ? mid_h * d->share / 100 : mid_h - used[c] - k * GAP;
        lo->p[p] = (es_ui_rect){x[c], top + used[c] + k * GAP, cw[c], ph};
        used[c] += ph;
    }
    for (int i = 0; i < ES_UI_NPANELS; i++) {
        if (lo->p[i].w < 0)
            lo->p[i].w = 0;
        if (lo->p[i].h < 0)
            lo->p[i].h = 0;
    }
}

es_ui_rect es_ui_panel_body(const es_ui_layout *lo, int p)
{
    es_ui_rect r = lo->p[p];
    if (is_bar(p))
        return (es_ui_rect){r.x + PAD, r.y + 2, r.w - 2 * PAD, r.h - 4};
    int title = lo->ch + 2;
    es_ui_rect b = {r.x + PAD, r.y + title + PAD / 2, r.w - 2 * PAD, r.h - title - PAD};
    if (b.w < 0)
        b.w = 0;
    if (b.h < 0)
        b.h = 0;
    return b;
}

int es_ui_hit(const es_ui_layout *lo, const es_ui_view *v, int x, int y, int *item)
{
    for (int p = 0; p < ES_UI_NPANELS; p++) {
        es_ui_rect r = lo->p[p];
        if (!lo->hidden[p] && x >= r.x && x < r.x + r.w && y >= r.y && y < r.y + r.h) {
            *item = panels[p].hit ? panels[p].hit(lo, v, x, y) : -1;
            return p;
        }
    }
    *item = -1;
    return -1;
}

es_ui_rect es_ui_panel_row(const es_ui_layout *lo, int p, int row)
{
    es_ui_rect b = es_ui_panel_body(lo, p);
    return (es_ui_rect){b.x, b.y + row * lo->ch, b.w, lo->ch};
}

static int panel_rows(const es_ui_layout *lo, int p)
{
    return es_ui_panel_body(lo, p).h / lo->ch;
}

/* ---- registers ----
 * The 16 GPRs in a first sub-column ("rax value labels"), everything else
 * (rip, rflags and its decoded flags, cpl, mode, selectors and bases, entry
 * MSRs) in a second one beside it, or below it when the panel is narrower
 * than REGS_SIDE_COLS characters. */
#define GPR_NAME_COLS 4   /* "r15 " */
#define MISC_NAME_COLS 15 /* "kernel_gs_base " */
#define REGS_SIDE_COLS 60

static bool reg_first_col(const es_dbg_reg *r)
{
    return r->group == ES_DBG_RG_GPR && strcmp(r->name, "rip") && strcmp(r->name, "rflags");
}

es_ui_rect es_ui_reg_rect(const es_ui_layout *lo, const es_ui_view *v, size_t i)
{
    es_ui_rect b = es_ui_panel_body(lo, ES_UI_P_REGS);
    bool first = reg_first_col(&v->regs[i]), side = b.w / lo->cw >= REGS_SIDE_COLS;
    int row = 0, nfirst = 0;
    for (size_t k = 0; k < v->nregs; k++)
        nfirst += reg_first_col(&v->regs[k]);
    for (size_t k = 0; k < i; k++)
        if (reg_first_col(&v->regs[k]) == first)
            row += !strcmp(v->regs[k].name, "rflags") ? 2 : 1; /* decoded flags below rflags */
    if (!side)
        return (es_ui_rect){b.x, b.y + (first ? row : nfirst + 1 + row) * lo->ch, b.w, lo->ch};
    int misc_w = (MISC_NAME_COLS + 17) * lo->cw;
    if (first)
        return (es_ui_rect){b.x, b.y + row * lo->ch, b.w - misc_w, lo->ch};
    return (es_ui_rect){b.x + b.w - misc_w, b.y + row * lo->ch, misc_w, lo->ch};
}

static void draw_regs(es_ui_canvas *cv, const es_ui_font *f, const es_ui_layout *lo,
                      const es_ui_view *v)
{
    int cw = lo->cw;
    es_ui_rect body = es_ui_panel_body(lo, ES_UI_P_REGS);
    for (size_t i = 0; i < v->nregs; i++) {
        const es_dbg_reg *r = &v->regs[i];
        es_ui_rect rr = es_ui_reg_rect(lo, v, i);
        if (rr.y + rr.h > body.y + body.h)
            continue; /* a window too small for every register */
        char val[40];
        if (!strcmp(r->name, "mode"))
            snprintf(val, sizeof val, "%s", r->value == ES_MODE_64 ? "64-bit" : "compat");
        else if (!strcmp(r->name, "cpl"))
            snprintf(val, sizeof val, "%" PRIu64, r->value);
        else {
            int digits = r->width ? r->width * 2 : 16;
            if (digits > 16)
                digits = 16;
            snprintf(val, sizeof val, "%0*" PRIx64, digits, r->value);
        }
        int vx = rr.x + (reg_first_col(r) ? GPR_NAME_COLS : MISC_NAME_COLS) * cw;
        es_ui_text(cv, f, rr, rr.x, rr.y, ES_UI_DIM, r->name);
        uint32_t fg = r->taint ? es_ui_taint_colour(r->taint) : ES_UI_FG;
        if (r->changed) {
            es_ui_rect hl = {vx - 2, rr.y, (int)strlen(val) * cw + 4, lo->ch};
            if (hl.x + hl.w > rr.x + rr.w)
                hl.w = rr.x + rr.w - hl.x;
            es_ui_fill(cv, hl, ES_UI_CHANGED_BG);
            if (!r->taint)
                fg = ES_UI_CHANGED_FG;
        }
        int end = es_ui_text(cv, f, rr, vx, rr.y, fg, val);
        if (r->labels[0])
            es_ui_text(cv, f, rr, end + cw, rr.y, es_ui_taint_colour(r->taint), r->labels);
        if (!strcmp(r->name, "rflags") && v->flags[0] && rr.y + 2 * rr.h <= body.y + body.h)
            es_ui_text(cv, f, (es_ui_rect){rr.x, rr.y + lo->ch, rr.w, lo->ch}, vx,
                       rr.y + lo->ch, ES_UI_DIM, v->flags);
    }
}

/* ---- vector registers ----
 * A band across the window: "ymm0  q3 q2 q1 q0" per register (16 hex
 * digits a word, or 8 floats, or 4 doubles, the highest element first, as
 * `print ymmN` shows them), as many registers side by side as fit, ymm0..
 * down the first of them. */
#define VREG_NAME_COLS 6 /* "ymm15 " */
#define VREG_GAP_COLS 3  /* between two registers side by side */

/* Characters of one value in format fmt (enum es_dbg_vfmt): elements of
 * fixed width so the columns line up from register to register. */
static int vreg_value_cols(int fmt)
{
    return fmt == ES_DBG_VF_FLOAT ? 8 * 13 - 1 : fmt == ES_DBG_VF_DOUBLE ? 4 * 23 - 1 : 4 * 17 - 1;
}

static void vreg_value_str(const es_ymm *y, int fmt, char *buf, size_t n)
{
    size_t o = 0;
    buf[0] = 0;
    int count = fmt == ES_DBG_VF_FLOAT ? 8 : 4;
    for (int k = count - 1; k >= 0 && o < n; k--) {
        const char *sep = k + 1 < count ? " " : "";
        int w = fmt == ES_DBG_VF_FLOAT    ? snprintf(buf + o, n - o, "%s%12.6g", sep, (double)y->f[k])
                : fmt == ES_DBG_VF_DOUBLE ? snprintf(buf + o, n - o, "%s%22.15g", sep, y->g[k])
                                          : snprintf(buf + o, n - o, "%s%016" PRIx64, sep, y->q[k]);
        o += w > 0 ? (size_t)w : 0;
    }
}

static int vregs_per_row(const es_ui_view *v, int cols)
{
    int cell = VREG_NAME_COLS + vreg_value_cols(v->vregs_fmt) + VREG_GAP_COLS;
    int per = (cols + VREG_GAP_COLS) / cell;
    return per < 1 ? 1 : per;
}

static int vregs_rows(const es_ui_view *v, int cols)
{
    if (!v->show_vregs || !v->nvregs)
        return 0;
    int per = vregs_per_row(v, cols);
    return ((int)v->nvregs + per - 1) / per;
}

es_ui_rect es_ui_vreg_rect(const es_ui_layout *lo, const es_ui_view *v, size_t i)
{
    es_ui_rect b = es_ui_panel_body(lo, ES_UI_P_VREGS), none = {0, 0, 0, 0};
    if (lo->hidden[ES_UI_P_VREGS] || i >= v->nvregs || !lo->cw)
        return none;
    int rows = vregs_rows(v, b.w / lo->cw);
    int cell = (VREG_NAME_COLS + vreg_value_cols(v->vregs_fmt) + VREG_GAP_COLS) * lo->cw;
    int row = (int)i % rows, col = (int)i / rows;
    es_ui_rect r = {b.x + col * cell, b.y + row * lo->ch, cell - VREG_GAP_COLS * lo->cw, lo->ch};
    if (r.y + r.h > b.y + b.h)
        return none; /* a window too small for every register */
    if (r.x + r.w > b.x + b.w)
        r.w = b.x + b.w - r.x;
    return r;
}

static void draw_vregs(es_ui_canvas *cv, const es_ui_font *f, const es_ui_layout *lo,
                       const es_ui_view *v)
{
    for (size_t i = 0; i < v->nvregs; i++) {
        const es_dbg_vreg *r = &v->vregs[i];
        es_ui_rect rr = es_ui_vreg_rect(lo, v, i);
        if (rr.w <= 0)
            continue;
        char val[256];
        vreg_value_str(&r->value, v->vregs_fmt, val, sizeof val);
        int vx = rr.x + VREG_NAME_COLS * lo->cw;
        es_ui_text(cv, f, rr, rr.x, rr.y, ES_UI_DIM, r->name);
        if (r->changed) {
            es_ui_rect hl = {vx - 2, rr.y, (int)strlen(val) * lo->cw + 4, lo->ch};
            if (hl.x + hl.w > rr.x + rr.w)
                hl.w = rr.x + rr.w - hl.x;
            es_ui_fill(cv, hl, ES_UI_CHANGED_BG);
        }
        es_ui_text(cv, f, rr, vx, rr.y, r->changed ? ES_UI_CHANGED_FG : ES_UI_FG, val);
    }
}

static void title_vregs(const es_ui_view *v, char *buf, size_t n)
{
    int fmt = v->vregs_fmt;
    snprintf(buf, n, "vector registers, %s (V hides; :vregs hex|float|double)",
             fmt == ES_DBG_VF_FLOAT    ? "floats f7..f0"
             : fmt == ES_DBG_VF_DOUBLE ? "doubles d3..d0"
                                       : "hex q3..q0");
}

/* ---- disassembly ---- */
/* Rows: a label row before each symbol's first instruction, then one row
 * per instruction.  Scrolled so that RIP sits a third of the way down;
 * returns the first row shown. */
/* Rows above an instruction: its symbol's label, then its source line when
 * it starts one. */
static int head_rows(const es_dbg_line *l)
{
    return (l->label && l->sym[0]) + (l->src_start && l->src[0]);
}

/* Rows under the disassembly for a fresh wrong path: a header and its
 * instructions, at most a third of the panel. */
static int wrongpath_rows(const es_ui_layout *lo, const es_ui_view *v)
{
    int rows = panel_rows(lo, ES_UI_P_DISASM);
    if (!v->wp_fresh || !v->nwp)
        return 0;
    int want = (int)v->nwp + 1;
    return want < rows / 3 ? want : rows / 3;
}

static int disasm_first_row(const es_ui_layout *lo, const es_ui_view *v)
{
    int rows = panel_rows(lo, ES_UI_P_DISASM) - wrongpath_rows(lo, v), cur_row = 0, total = 0;
    for (size_t i = 0; i < v->nlines; i++) {
        total += head_rows(&v->lines[i]);
        if (v->lines[i].current)
            cur_row = total;
        total++;
    }
    int first = cur_row - rows / 3;
    if (first > total - rows)
        first = total - rows;
    return first < 0 ? 0 : first;
}

int es_ui_disasm_hit(const es_ui_layout *lo, const es_ui_view *v, int x, int y)
{
    es_ui_rect b = es_ui_panel_body(lo, ES_UI_P_DISASM);
    if (x < b.x || x >= b.x + b.w || y < b.y || y >= b.y + b.h)
        return -1;
    int want = (y - b.y) / lo->ch + disasm_first_row(lo, v), row = 0;
    for (size_t i = 0; i < v->nlines; i++) {
        for (int h = head_rows(&v->lines[i]); h > 0; h--)
            if (row++ == want)
                return -1; /* a label or source row */
        if (row++ == want)
            return (int)i;
    }
    return -1;
}

/* The squashed wrong path, greyed, in the panel's last rows. */
static void draw_wrongpath(es_ui_canvas *cv, const es_ui_font *f, const es_ui_layout *lo,
                           const es_ui_view *v)
{
    int rows = panel_rows(lo, ES_UI_P_DISASM), n = wrongpath_rows(lo, v), cw = lo->cw;
    if (!n)
        return;
    int row = rows - n;
    es_ui_rect hr = es_ui_panel_row(lo, ES_UI_P_DISASM, row++);
    char head[96];
    snprintf(head, sizeof head, "~ wrong path %" PRIu64 ", squashed (print wrongpath: all)",
             v->wp_windows);
    es_ui_text(cv, f, hr, hr.x + cw, hr.y, ES_UI_CHANGED_FG, head);
    for (size_t i = 0; i < v->nwp && row < rows; i++, row++) {
        const es_dbg_line *l = &v->wp[i];
        es_ui_rect rr = es_ui_panel_row(lo, ES_UI_P_DISASM, row);
        char addr[24];
        snprintf(addr, sizeof addr, "%016" PRIx64, l->addr);
        int x = es_ui_text(cv, f, rr, rr.x + 2 * cw, rr.y, ES_UI_DIM, addr);
        x = es_ui_text(cv, f, rr, x + 2 * cw, rr.y, ES_UI_DIM, l->len ? l->text : "(bad)");
        char note[48] = "";
        if (!l->executed)
            snprintf(note, sizeof note, "not started");
        else if (l->filled != UINT64_MAX)
            snprintf(note, sizeof note, "filled %" PRIx64, l->filled);
        int rx = rr.x + rr.w - (int)strlen(note) * cw;
        if (note[0] && rx > x + cw)
            es_ui_text(cv, f, rr, rx, rr.y, ES_UI_DIM, note);
    }
}

static void draw_disasm(es_ui_canvas *cv, const es_ui_font *f, const es_ui_layout *lo,
                        const es_ui_view *v)
{
    draw_wrongpath(cv, f, lo, v);
    int rows = panel_rows(lo, ES_UI_P_DISASM) - wrongpath_rows(lo, v);
    int cw = lo->cw, row = -disasm_first_row(lo, v);
    for (size_t i = 0; i < v->nlines && row < rows; i++) {
        const es_dbg_line *l = &v->lines[i];
        if (l->label && l->sym[0]) {
            if (row >= 0) {
                es_ui_rect rr = es_ui_panel_row(lo, ES_UI_P_DISASM, row);
                char lab[112];
                snprintf(lab, sizeof lab, "<%s>:", l->sym);
                es_ui_text(cv, f, rr, rr.x + 2 * cw, rr.y, ES_UI_SYM, lab);
            }
            row++;
        }
        if (l->src_start && l->src[0]) {
            if (row >= 0 && row < rows) {
                es_ui_rect rr = es_ui_panel_row(lo, ES_UI_P_DISASM, row);
                es_ui_text(cv, f, rr, rr.x + 3 * cw, rr.y, ES_UI_DIM, l->src);
            }
            row++;
        }
        if (row >= 0 && row < rows) {
            es_ui_rect rr = es_ui_panel_row(lo, ES_UI_P_DISASM, row);
            if (l->current)
                es_ui_fill(cv, rr, ES_UI_CURRENT_BG);
            if (l->breakpoint) {
                int d = lo->ch / 2;
                es_ui_fill(cv, (es_ui_rect){rr.x + 1, rr.y + (lo->ch - d) / 2, d, d}, ES_UI_BP);
            }
            if (l->current)
                es_ui_text(cv, f, rr, rr.x + cw, rr.y, ES_UI_CHANGED_FG, ">");
            char addr[24];
            snprintf(addr, sizeof addr, "%016" PRIx64, l->addr);
            int x = es_ui_text(cv, f, rr, rr.x + 2 * cw, rr.y, ES_UI_DIM, addr);
            x = es_ui_text(cv, f, rr, x + 2 * cw, rr.y, ES_UI_FG, l->len ? l->text : "(bad)");
            char right[48] = "";
            if (l->cycles >= 0)
                snprintf(right, sizeof right, "%" PRId64 " cyc", l->cycles);
            if (right[0]) {
                int rx = rr.x + rr.w - (int)strlen(right) * cw;
                if (rx > x + cw)
                    es_ui_text(cv, f, rr, rx, rr.y, ES_UI_DIM, right);
            }
        }
        row++;
    }
}

/* ---- pt_regs ---- */
static void draw_ptregs(es_ui_canvas *cv, const es_ui_font *f, const es_ui_layout *lo,
                        const es_ui_view *v)
{
    int cw = lo->cw;
    if (!v->has_ptregs) {
        es_ui_rect rr = es_ui_panel_row(lo, ES_UI_P_PTREGS, 0);
        es_ui_text(cv, f, rr, rr.x, rr.y, ES_UI_DIM, "(no guest kernel)");
        return;
    }
    for (int i = 0; i < ES_DBG_PTREGS_SLOTS; i++) {
        const es_dbg_slot *s = &v->slots[i];
        es_ui_rect rr = es_ui_panel_row(lo, ES_UI_P_PTREGS, i);
        if (s->cleared)
            es_ui_fill(cv, rr, ES_UI_CLEARED_BG);
        char off[8];
        snprintf(off, sizeof off, "%02x", s->off);
        es_ui_text(cv, f, rr, rr.x, rr.y, ES_UI_DIM, off);
        es_ui_text(cv, f, rr, rr.x + 3 * cw, rr.y, s->written ? ES_UI_FG : ES_UI_DIM,
                   s->field ? s->field : "?");
        int vx = rr.x + 11 * cw;
        int end;
        if (s->written) {
            char val[24];
            snprintf(val, sizeof val, "%016" PRIx64, s->value);
            end = es_ui_text(cv, f, rr, vx, rr.y,
                             s->taint ? es_ui_taint_colour(s->taint) : ES_UI_WRITTEN_FG, val);
        } else {
            end = es_ui_text(cv, f, rr, vx, rr.y, ES_UI_DIM, "................");
        }
        char tail[128];
        if (s->cleared)
            snprintf(tail, sizeof tail, "cleared%s%s", s->labels[0] ? " " : "", s->labels);
        else if (s->written && s->order)
            snprintf(tail, sizeof tail, "#%-2u %s", s->order, s->labels);
        else /* an unwritten slot's old contents say nothing about this entry */
            snprintf(tail, sizeof tail, "%s", s->written ? s->labels : "");
        es_ui_text(cv, f, rr, end + cw, rr.y,
                   s->cleared ? ES_UI_ERROR : (s->taint ? es_ui_taint_colour(s->taint) : ES_UI_DIM),
                   tail);
    }
}

/* Copies the line at s (up to '\n' or end; tabs as spaces, cut to cap-1
 * bytes) into buf; returns where the next line starts. */
static const char *take_line(const char *s, const char *end, char *buf, size_t cap, size_t *len)
{
    size_t k = 0;
    for (; s < end && *s != '\n'; s++)
        if (k + 1 < cap)
            buf[k++] = *s == '\t' ? ' ' : *s;
    buf[k] = 0;
    *len = k;
    return s < end ? s + 1 : s;
}

/* Draws text split at '\n', starting at body row `row`; with `wrap`, a line
 * wider than the panel continues on the next rows, indented.  Returns the
 * rows used. */
static int draw_lines(es_ui_canvas *cv, const es_ui_font *f, const es_ui_layout *lo, int p,
                      int row, const char *s, size_t n, uint32_t fg, bool wrap)
{
    int rows = panel_rows(lo, p), used = 0, cols = es_ui_panel_body(lo, p).w / lo->cw;
    const int indent = 4;
    char buf[512];
    for (const char *q = s, *end = s + n; q < end && row + used < rows;) {
        size_t k;
        q = take_line(q, end, buf, sizeof buf, &k);
        size_t at = 0;
        do {
            es_ui_rect rr = es_ui_panel_row(lo, p, row + used);
            int x = rr.x + (at ? indent * lo->cw : 0);
            size_t take = k - at;
            if (wrap && cols > 2 * indent) {
                size_t room = (size_t)(at ? cols - indent : cols);
                if (take > room) {
                    take = room;
                    /* break after a space when one is in the second half */
                    for (size_t j = room; j > room / 2; j--)
                        if (buf[at + j - 1] == ' ') {
                            take = j;
                            break;
                        }
                }
            }
            char save = buf[at + take];
            buf[at + take] = 0;
            es_ui_text(cv, f, rr, x, rr.y, fg, buf + at);
            buf[at + take] = save;
            at += take;
            used++;
        } while (at < k && row + used < rows);
    }
    return used;
}

static void draw_exposure(es_ui_canvas *cv, const es_ui_font *f, const es_ui_layout *lo,
                          const es_ui_view *v)
{
    /* At a probe point, `entrysim exposure`'s table first, then (after a
     * blank row) the live values as everywhere else. */
    int row = 0;
    if (v->probe)
        row = draw_lines(cv, f, lo, ES_UI_P_EXPOSURE, 0, v->probe, strlen(v->probe), ES_UI_FG,
                         true) + 1;
    int rows = panel_rows(lo, ES_UI_P_EXPOSURE), cw = lo->cw;
    if (!v->nlive && row < rows) {
        es_ui_rect rr = es_ui_panel_row(lo, ES_UI_P_EXPOSURE, row);
        es_ui_text(cv, f, rr, rr.x, rr.y, ES_UI_DIM, "no user-derived values live");
        return;
    }
    for (size_t i = 0; i < v->nlive && row < rows; i++, row++) {
        const es_dbg_live *l = &v->live[i];
        es_ui_rect rr = es_ui_panel_row(lo, ES_UI_P_EXPOSURE, row);
        uint32_t c = es_ui_taint_colour(l->taint);
        es_ui_text(cv, f, rr, rr.x, rr.y, ES_UI_FG, l->where);
        char val[24];
        snprintf(val, sizeof val, "%016" PRIx64, l->value);
        int end = es_ui_text(cv, f, rr, rr.x + 18 * cw, rr.y, c, val); /* "pt_regs->orig_ax " */
        es_ui_text(cv, f, rr, end + cw, rr.y, c, l->labels);
    }
}

static void draw_mem(es_ui_canvas *cv, const es_ui_font *f, const es_ui_layout *lo,
                     const es_ui_view *v)
{
    es_ui_rect b = es_ui_panel_body(lo, ES_UI_P_MEM);
    int cols = b.w / lo->cw;
    /* "addr  hh hh ... ascii": 18 + 4 per byte */
    int per = cols >= 18 + 4 * 16 ? 16 : cols >= 18 + 4 * 8 ? 8 : 4;
    int rows = panel_rows(lo, ES_UI_P_MEM);
    for (int r = 0; r < rows && (size_t)(r * per) < ES_UI_MEM_BYTES; r++) {
        char line[128];
        int o = snprintf(line, sizeof line, "%016" PRIx64 " ", v->mem_addr + (uint64_t)r * per);
        char ascii[20];
        for (int k = 0; k < per; k++) {
            size_t i = (size_t)r * per + k;
            if (i < v->mem_len) {
                o += snprintf(line + o, sizeof line - o, " %02x", v->mem[i]);
                ascii[k] = v->mem[i] >= 0x20 && v->mem[i] < 0x7f ? (char)v->mem[i] : '.';
            } else {
                o += snprintf(line + o, sizeof line - o, " ??");
                ascii[k] = ' ';
            }
        }
        ascii[per] = 0;
        snprintf(line + o, sizeof line - o, "  %s", ascii);
        es_ui_rect rr = es_ui_panel_row(lo, ES_UI_P_MEM, r);
        line[16] = 0; /* address dim, bytes normal */
        es_ui_text(cv, f, rr, rr.x, rr.y, ES_UI_DIM, line);
        es_ui_text(cv, f, rr, rr.x + 16 * lo->cw, rr.y, ES_UI_FG, line + 17);
    }
}

static void draw_output(es_ui_canvas *cv, const es_ui_font *f, const es_ui_layout *lo,
                        const es_ui_view *v)
{
    /* The last lines that fit (a trailing newline does not count). */
    int rows = panel_rows(lo, ES_UI_P_OUTPUT);
    size_t n = v->output_len, start = n;
    if (!v->output || !n || rows <= 0)
        return;
    if (v->output[n - 1] == '\n')
        n--, start--;
    int lines = 1;
    while (start > 0) {
        if (v->output[start - 1] == '\n' && ++lines > rows)
            break;
        start--;
    }
    draw_lines(cv, f, lo, ES_UI_P_OUTPUT, 0, v->output + start, n - start, ES_UI_FG, false);
}

/* Stop reasons as the status line words them (enum es_dbg_stop); kept
 * here so the renderer does not need a session. */
static const char *stop_word(int why)
{
    static const char *const w[] = {"stepped", "reached", "breakpoint", "exited",
                                    "faulted", "budget spent", "oldest state"};
    return why >= 0 && why < (int)(sizeof w / sizeof *w) ? w[why] : "?";
}

static void draw_status(es_ui_canvas *cv, const es_ui_font *f, const es_ui_layout *lo,
                        const es_ui_view *v)
{
    const es_dbg_status *s = &v->st;
    es_ui_rect b = es_ui_panel_body(lo, ES_UI_P_STATUS);
    char line[768], cyc[64] = "";
    if (s->timing)
        snprintf(cyc, sizeof cyc, "  cycles %" PRIu64 " (+%" PRIu64 ")", s->cycles, s->last_cost);
    else
        snprintf(cyc, sizeof cyc, "  cycles -");
    char state[96];
    if (s->exited)
        snprintf(state, sizeof state, "exited %d", s->exit_status);
    else if (s->bp_hit)
        snprintf(state, sizeof state, "%s #%d", stop_word(s->last_stop), s->bp_hit);
    else
        snprintf(state, sizeof state, "%s", stop_word(s->last_stop));
    snprintf(line, sizeof line,
             "%s CPL %d  insns %" PRIu64 "%s  | %s  mitigations %s  %s | %s | undo %" PRIu64
             "  %s  %s",
             s->mode == ES_MODE_64 ? "64-bit" : "compat", s->cpl, s->icount, cyc,
             s->convention[0] ? s->convention : "?",
             s->mitigation_names[0] ? s->mitigation_names : "none", s->vendor ? "amd" : "intel",
             state, s->history, v->syntax == ES_SYNTAX_ATT ? "att" : "intel", s->program);
    es_ui_text(cv, f, b, b.x, b.y, s->cpl == 0 ? ES_UI_CHANGED_FG : ES_UI_FG, line);
}

static void draw_message(es_ui_canvas *cv, const es_ui_font *f, const es_ui_layout *lo,
                         const es_ui_view *v)
{
    es_ui_rect b = es_ui_panel_body(lo, ES_UI_P_MESSAGE);
    const char *hint = "F1/? help";
    int hx = b.x + b.w - (int)strlen(hint) * lo->cw;
    if (v->prompt) {
        char line[300];
        snprintf(line, sizeof line, ":%s_", v->prompt);
        es_ui_text(cv, f, b, b.x, b.y, ES_UI_CHANGED_FG, line);
    } else if (v->caption[0]) {
        /* a handout's caption: the line a screenshot is about */
        es_ui_text(cv, f, b, b.x, b.y, ES_UI_CHANGED_FG, v->caption);
    } else {
        /* the first line of the report */
        char line[256];
        snprintf(line, sizeof line, "%s", v->message);
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = 0;
        es_ui_rect clip = b;
        clip.w = hx - b.x - lo->cw;
        es_ui_text(cv, f, clip, b.x, b.y, v->message_error ? ES_UI_ERROR : ES_UI_FG, line);
    }
    es_ui_text(cv, f, b, hx, b.y, ES_UI_DIM, hint);
}

static void draw_help(es_ui_canvas *cv, const es_ui_font *f, const es_ui_layout *lo,
                      const es_ui_view *v)
{
    if (!v->help)
        return;
    int lines = 1, longest = 0, cur = 0;
    for (const char *p = v->help; *p; p++) {
        if (*p == '\n')
            lines++, cur = 0;
        else if (++cur > longest)
            longest = cur;
    }
    int w = (longest + 4) * lo->cw, h = (lines + 2) * lo->ch;
    if (w > cv->w - 2 * GAP)
        w = cv->w - 2 * GAP;
    if (h > cv->h - 2 * GAP)
        h = cv->h - 2 * GAP;
    es_ui_rect box = {(cv->w - w) / 2, (cv->h - h) / 2, w, h};
    es_ui_fill(cv, (es_ui_rect){box.x - 2, box.y - 2, box.w + 4, box.h + 4}, ES_UI_SYM);
    es_ui_fill(cv, box, ES_UI_STATUS_BG);
    es_ui_rect inner = {box.x + 2 * lo->cw, box.y + lo->ch, box.w - 4 * lo->cw, box.h - 2 * lo->ch};
    const char *p = v->help, *end = p + strlen(p);
    for (int row = 0; p < end && (row + 1) * lo->ch <= inner.h; row++) {
        char buf[256];
        size_t n;
        p = take_line(p, end, buf, sizeof buf, &n);
        es_ui_text(cv, f, inner, inner.x, inner.y + row * lo->ch, ES_UI_FG, buf);
    }
}

static void draw_frame(es_ui_canvas *cv, const es_ui_font *f, const es_ui_layout *lo, int p,
                       const char *title)
{
    es_ui_rect r = lo->p[p];
    es_ui_fill(cv, r, ES_UI_PANEL);
    es_ui_rect t = {r.x, r.y, r.w, lo->ch + 2};
    es_ui_fill(cv, t, ES_UI_TITLE_BG);
    es_ui_text(cv, f, t, r.x + PAD, r.y + 1, ES_UI_FG, title);
}

static void title_disasm(const es_ui_view *v, char *buf, size_t n)
{
    snprintf(buf, n, "%s", v->syntax == ES_SYNTAX_ATT ? "disassembly (AT&T)" : "disassembly (Intel)");
}

static void title_mem(const es_ui_view *v, char *buf, size_t n)
{
    snprintf(buf, n, "memory @ %016" PRIx64, v->mem_addr);
}

static void title_exposure(const es_ui_view *v, char *buf, size_t n)
{
    snprintf(buf, n, "%s", v->probe ? "exposure at this probe" : "live user values");
}

static void title_ptregs(const es_ui_view *v, char *buf, size_t n)
{
    if (v->has_ptregs)
        snprintf(buf, n, "pt_regs @ %016" PRIx64, v->ptregs_base);
    else
        snprintf(buf, n, "pt_regs");
}

/* In ES_UI_P_ order, which is also the drawing order. */
static const panel_def panels[ES_UI_NPANELS] = {
    [ES_UI_P_STATUS] = {AT_TOP, 0, NULL, NULL, draw_status, NULL, NULL},
    [ES_UI_P_DISASM] = {0, 50, NULL, title_disasm, draw_disasm, es_ui_disasm_hit, NULL},
    [ES_UI_P_MEM] = {0, 24, NULL, title_mem, draw_mem, NULL, NULL},
    [ES_UI_P_OUTPUT] = {0, 0, "guest output", NULL, draw_output, NULL, NULL},
    [ES_UI_P_REGS] = {1, 62, "registers (changed / from user)", NULL, draw_regs, NULL, NULL},
    [ES_UI_P_EXPOSURE] = {1, 0, NULL, title_exposure, draw_exposure, NULL, NULL},
    [ES_UI_P_PTREGS] = {2, 0, NULL, title_ptregs, draw_ptregs, NULL, NULL},
    [ES_UI_P_VREGS] = {AT_BAND, 0, NULL, title_vregs, draw_vregs, NULL, vregs_rows},
    [ES_UI_P_MESSAGE] = {AT_BOTTOM, 0, NULL, NULL, draw_message, NULL, NULL},
};

void es_ui_render(es_ui_canvas *cv, const es_ui_font *f, const es_ui_view *v)
{
    es_ui_layout lo;
    es_ui_layout_compute(&lo, v, cv->w, cv->h, f);
    es_ui_fill(cv, (es_ui_rect){0, 0, cv->w, cv->h}, ES_UI_BG);
    /* bar backgrounds, then frames, then contents: a title bar in a window
     * too small for its panel may cover the bottom bar's background */
    for (int p = 0; p < ES_UI_NPANELS; p++)
        if (is_bar(p))
            es_ui_fill(cv, lo.p[p], ES_UI_STATUS_BG);
    for (int p = 0; p < ES_UI_NPANELS; p++) {
        char t[128];
        if (is_bar(p) || lo.hidden[p])
            continue;
        if (panels[p].title_fn)
            panels[p].title_fn(v, t, sizeof t);
        else
            snprintf(t, sizeof t, "%s", panels[p].title);
        draw_frame(cv, f, &lo, p, t);
    }
    for (int p = 0; p < ES_UI_NPANELS; p++)
        if (!lo.hidden[p])
            panels[p].draw(cv, f, &lo, v);
    if (v->show_help)
        draw_help(cv, f, &lo, v);
}
