/* ui_app.h - the debugger's front end over a dbg.h session: the snapshot
 * taken from the session (ui_model.c), the key map and the SDL window loop
 * (ui_window.c), the headless screenshot.  debugger.c (the command line)
 * drives it. */
#ifndef ENTRYSIM_UI_APP_H
#define ENTRYSIM_UI_APP_H

#include "dbg.h"
#include "ui.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fills v's session part (status, registers, disassembly, pt_regs,
 * exposure, memory, output, syntax) from d.  The message, help and prompt
 * fields are left alone.  Pointers in v (output, probe) stay valid until
 * the session's state next changes. */
void es_ui_view_fill(es_ui_view *v, es_dbg *d);

typedef struct es_ui_app {
    es_dbg *d;
    es_ui_font *font;
    int font_px;
    int w, h;              /* window / screenshot size in pixels */
    es_ui_view view;
    uint32_t *px;          /* w*h canvas */
    char prompt[200];      /* the ':' command line */
    bool prompting;
    char *help;            /* keys + es_dbg_help(), built once */
} es_ui_app;

/* Opens the font and sets the size; registers the screenshot renderer with
 * the session (so the `screenshot FILE` command works).  Returns 0, or -1
 * with err. */
int es_ui_app_init(es_ui_app *a, es_dbg *d, int font_px, int w, int h, char *err,
                   size_t errlen);
void es_ui_app_free(es_ui_app *a);

/* Draws the current state at a->w x a->h and writes it to `file` as PNG
 * (the window's exact pixels).  Matches es_dbg_screenshot_fn (ctx = a). */
int es_ui_app_screenshot(void *ctx, es_dbg *d, const char *file, char *err, size_t errlen);

/* Runs one session command (a key's command, or a typed one) and puts the
 * first line of its report in the message line.  Returns es_dbg_exec's
 * result. */
int es_ui_app_exec(es_ui_app *a, const char *line);

/* Input, as the window receives it (SDL_TEXTINPUT text; SDL_KEYDOWN key
 * code, an SDL_Keycode, and whether Shift is down): runs the bound command
 * or edits the ':' line.  Return false when the user asked to quit.  Public
 * so the tests can press keys without a display. */
bool es_ui_app_text(es_ui_app *a, const char *text);
bool es_ui_app_key(es_ui_app *a, int32_t key, bool shift);
/* A left click at window pixel (x, y): on a disassembly line, toggles a
 * breakpoint at its address (as drawn last). */
void es_ui_app_click(es_ui_app *a, int x, int y);

/* Opens the window and runs until the user quits.  Returns 0, or 2 when
 * there is no display (message on stderr), 1 on another SDL failure. */
int es_ui_app_window(es_ui_app *a, const char *title);

#ifdef __cplusplus
}
#endif
#endif
