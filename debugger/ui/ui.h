/* ui.h - the debugger window's drawing side (issue 5): a snapshot of the
 * session as plain data (es_ui_view), a layout computed from the window
 * size, a renderer that draws the snapshot into a 32-bit pixel buffer, the
 * font and a PNG writer/reader.  Nothing here runs the guest: ui_model.c
 * fills an es_ui_view from a dbg.h session, ui_window.c shows the pixels in
 * an SDL window, and the tests draw hand-made views.
 *
 * Pixels are 0xAARRGGBB in host order (SDL_PIXELFORMAT_ARGB8888), row by
 * row, `pitch` pixels per row.  The renderer is deterministic: the same
 * view, size and font give the same pixels (the golden-image test relies on
 * it). */
#ifndef ENTRYSIM_UI_H
#define ENTRYSIM_UI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dbg.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the font ----
 * A monospace TrueType font (DejaVu Sans Mono from fonts-dejavu-core; the
 * path is fixed at configure time, ES_UI_FONT_PATH) rendered once per size
 * into an alpha mask per printable ASCII character, so drawing text is a
 * blend of cached masks (no per-frame TrueType work). */
typedef struct es_ui_font es_ui_font;
/* Opens the font at `px` points (8..48).  path NULL = the configured
 * default.  Returns NULL with a one-line reason in err. */
es_ui_font *es_ui_font_open(const char *path, int px, char *err, size_t errlen);
void es_ui_font_close(es_ui_font *f);
/* Cell size: every glyph advances cell_w; lines are cell_h apart. */
int es_ui_font_cell_w(const es_ui_font *f);
int es_ui_font_cell_h(const es_ui_font *f);

/* ---- a pixel buffer ---- */
typedef struct es_ui_canvas {
    uint32_t *px;
    int w, h, pitch; /* pitch in pixels */
} es_ui_canvas;

typedef struct es_ui_rect {
    int x, y, w, h;
} es_ui_rect;

/* Fills r (clipped to the canvas) with colour c. */
void es_ui_fill(es_ui_canvas *cv, es_ui_rect r, uint32_t c);
/* Draws ASCII text at (x, y) (top-left of the first cell) in colour fg,
 * clipped to `clip`; characters outside 0x20..0x7e draw as '?'.  Returns
 * the x after the last character drawn or skipped. */
int es_ui_text(es_ui_canvas *cv, const es_ui_font *f, es_ui_rect clip, int x, int y,
               uint32_t fg, const char *s);

/* ---- the colours (a dark theme); tests look for some of them ---- */
#define ES_UI_BG 0xFF1E1F24u          /* window background */
#define ES_UI_PANEL 0xFF26282Eu       /* panel body */
#define ES_UI_TITLE_BG 0xFF3A3F4Bu    /* panel title bar */
#define ES_UI_FG 0xFFD8DADFu          /* normal text */
#define ES_UI_DIM 0xFF80848Eu         /* addresses, unwritten slots, hints */
#define ES_UI_CURRENT_BG 0xFF2F4F7Fu  /* the disassembly line at RIP */
#define ES_UI_CHANGED_BG 0xFF6B5716u  /* a register changed by the last command */
#define ES_UI_CHANGED_FG 0xFFFFE08Au
#define ES_UI_BP 0xFFE0484Au          /* breakpoint mark */
#define ES_UI_CLEARED_BG 0xFF5A2430u  /* a pt_regs slot the entry code zeroed */
#define ES_UI_WRITTEN_FG 0xFFFFFFFFu  /* a pt_regs slot written by this entry */
#define ES_UI_SYM 0xFF8FC1FFu         /* symbol labels */
#define ES_UI_STATUS_BG 0xFF101114u
#define ES_UI_ERROR 0xFFFF7A7Au
/* Colour of taint label bit `bit` (ES_TL_REG(i), ES_TL_RIP...): a fixed
 * palette, so a user value keeps its colour from panel to panel. */
uint32_t es_ui_label_colour(int bit);
/* Colour for a taint set: the colour of its lowest label, ES_UI_FG when
 * clean. */
uint32_t es_ui_taint_colour(es_label t);

/* ---- the snapshot the renderer draws ---- */
#define ES_UI_MAX_LINES 64
#define ES_UI_MAX_WP 24
#define ES_UI_MAX_LIVE 48
#define ES_UI_MEM_BYTES 256
typedef struct es_ui_view {
    es_dbg_status st;
    es_dbg_reg regs[ES_DBG_MAX_REGS];
    size_t nregs;
    char flags[96];                 /* es_dbg_flags_str of rflags */
    es_dbg_line lines[ES_UI_MAX_LINES];
    size_t nlines;
    /* --speculate: the wrong path the last command's run squashed (drawn
     * greyed under the disassembly while fresh) */
    es_dbg_line wp[ES_UI_MAX_WP];
    size_t nwp;
    uint64_t wp_windows;
    bool wp_fresh;
    bool has_ptregs;
    uint64_t ptregs_base;
    es_dbg_slot slots[ES_DBG_PTREGS_SLOTS];
    es_dbg_live live[ES_UI_MAX_LIVE];
    size_t nlive;
    /* the vector register panel (the `vregs` command, key V): shown or
     * not, and as what (enum es_dbg_vfmt) */
    bool show_vregs;
    int vregs_fmt;
    es_dbg_vreg vregs[ES_DBG_MAX_VREGS];
    size_t nvregs;
    const char *probe;              /* es_dbg_probe_table or NULL */
    uint64_t mem_addr;
    uint8_t mem[ES_UI_MEM_BYTES];
    size_t mem_len;                 /* bytes readable from mem_addr */
    const char *output;             /* guest stdout/stderr, not NUL-terminated */
    size_t output_len;
    int syntax;                     /* enum es_syntax */
    char message[256];              /* last command's report (bottom line) */
    bool message_error;
    bool show_help;
    const char *help;               /* the overlay's text (lines split by '\n') */
    const char *prompt;             /* non-NULL: the ':' command line being typed */
    char caption[160];              /* a script's `caption`: replaces the bottom line */
} es_ui_view;

/* ---- layout ----
 * Three columns: disassembly over memory over output on the left,
 * registers over exposure in the middle, pt_regs on the right; a status
 * line on top and a message/key line at the bottom; when the view shows
 * them, the vector registers in a band across the window above the bottom
 * line (the columns get shorter).  Computed from the canvas size, the font
 * cell and which optional panels the view shows, so a resize or a toggle
 * re-flows the panels.  Where each panel goes, its title and its draw
 * function are one row of the panel table in ui_panels.c; a new panel is a
 * name here (in drawing order), a row there and its draw function. */
enum es_ui_panel {
    ES_UI_P_STATUS = 0, ES_UI_P_DISASM, ES_UI_P_MEM, ES_UI_P_OUTPUT, ES_UI_P_REGS,
    ES_UI_P_EXPOSURE, ES_UI_P_PTREGS, ES_UI_P_VREGS, ES_UI_P_MESSAGE, ES_UI_NPANELS
};
typedef struct es_ui_layout {
    es_ui_rect p[ES_UI_NPANELS];    /* outer rectangles (all 0 when hidden) */
    bool hidden[ES_UI_NPANELS];     /* an optional panel the view does not show */
    int cw, ch;                     /* font cell */
} es_ui_layout;
/* v: which optional panels are shown (NULL: none of them). */
void es_ui_layout_compute(es_ui_layout *lo, const es_ui_view *v, int w, int h,
                          const es_ui_font *f);
/* The body (inside the title bar and margin) of panel p. */
es_ui_rect es_ui_panel_body(const es_ui_layout *lo, int p);
/* The rectangle of text row `row` (0-based) of panel p's body. */
es_ui_rect es_ui_panel_row(const es_ui_layout *lo, int p, int row);
/* Where register i of the view is drawn (the registers panel shows GPRs in
 * one sub-column and the rest in a second one). */
es_ui_rect es_ui_reg_rect(const es_ui_layout *lo, const es_ui_view *v, size_t i);
/* Where vector register i of the view is drawn (name and value; the panel
 * puts as many registers side by side as its width holds, ymm0.. down the
 * first of them).  All 0 when the panel is hidden or too small for it. */
es_ui_rect es_ui_vreg_rect(const es_ui_layout *lo, const es_ui_view *v, size_t i);

/* The disassembly line (index into v->lines) drawn at pixel (x, y), or -1
 * (outside the panel, a symbol label row, past the last line). */
int es_ui_disasm_hit(const es_ui_layout *lo, const es_ui_view *v, int x, int y);

/* The panel at pixel (x, y), or -1; *item is what that panel's hit test
 * says is there (for the disassembly, es_ui_disasm_hit), -1 if nothing. */
int es_ui_hit(const es_ui_layout *lo, const es_ui_view *v, int x, int y, int *item);

/* Draws the whole window. */
void es_ui_render(es_ui_canvas *cv, const es_ui_font *f, const es_ui_view *v);

/* ---- PNG ----
 * Writes an 8-bit RGB PNG (no alpha, zlib-deflated rows, filter None).
 * Returns 0, or -1 with a reason in err. */
int es_png_write(const char *path, const uint32_t *px, int w, int h, int pitch, char *err,
                 size_t errlen);
/* Reads a PNG written by es_png_write (8-bit RGB, not interlaced, filter
 * None on every row); anything else -- or a bad CRC, truncated or corrupt
 * data -- is refused with a reason, never a crash.
 * *out is malloc'ed 0xFFRRGGBB pixels, w*h. Returns 0 or -1. */
int es_png_read(const char *path, uint32_t **out, int *w, int *h, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
