/* ui_window.c - the debugger's SDL2 window: keys mapped to session
 * commands, the help overlay, the ':' command line, resize, and the
 * screenshot renderer shared with headless runs.
 *
 * Drawing goes to a plain pixel buffer (ui_panels.c) that is blitted to
 * the window surface, so the window and a headless --screenshot show the
 * same pixels, and headless runs need no video driver at all. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <SDL.h>

#include "kernel.h"
#include "ui_app.h"

/* ---- the key map ----
 * A key is a typed character (layout-independent, from SDL_TEXTINPUT) or a
 * function/special key (SDL_KEYDOWN).  The command is a session command
 * (es_dbg_exec) or one of the window's own actions, which start with '@'. */
typedef struct keybind {
    const char *chars;   /* characters that trigger it ("" = none) */
    SDL_Keycode key;     /* special key (0 = none) */
    bool shift;          /* key needs Shift */
    const char *cmd;
    const char *keys;    /* as the help shows them */
    const char *what;
} keybind;

static const keybind keymap[] = {
    {"s", SDLK_F11, false, "step", "s  F11", "step into (one instruction)"},
    {"n", SDLK_F10, false, "next", "n  F10", "step over calls"},
    {"f", SDLK_F11, true, "finish", "f  S-F11", "step out (to the caller)"},
    {"c", SDLK_F5, false, "continue", "c  F5", "run to a breakpoint or the end"},
    {"y", 0, false, "syscall", "y", "run to the next syscall/sysenter/int 0x80"},
    {"k", 0, false, "kentry", "k", "run to the next kernel entry (CPL 3 -> 0)"},
    {"u", 0, false, "kexit", "u", "run to the return to user (CPL 0 -> 3)"},
    {"r", SDLK_F7, true, "reverse 1", "r  S-F7", "reverse step (undo one instruction)"},
    {"R", SDLK_F5, true, "rcontinue", "R  S-F5", "reverse continue (back to a breakpoint)"},
    {"b", SDLK_F9, false, "@break", "b  F9", "toggle a breakpoint at RIP (or click a line)"},
    {"t", 0, false, "@syntax", "t", "toggle Intel / AT&T syntax"},
    {"v", 0, false, "@convention", "v", "restart under the other convention (v4.16/v4.17)"},
    {"X", 0, false, "restart", "X", "restart the program"},
    {"m", 0, false, "@mem", "m", "memory view follows rsp, rdi, rsi, rip in turn"},
    {"V", 0, false, "vregs", "V", "vector registers: show / hide (:vregs float for floats)"},
    {":", 0, false, "@prompt", ":", "type a command (break SYM, until SYM, mem ADDR...)"},
    {"+=", 0, false, "@bigger", "+ -", "font size"},
    {"-", 0, false, "@smaller", "", ""},
    {"?", SDLK_F1, false, "@help", "?  F1", "this help (Esc closes it)"},
    {"q", 0, false, "@quit", "q", "quit"},
};

static char *build_help(void)
{
    char *h = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&h, &len);
    if (!f)
        return NULL;
    fprintf(f, "entrysim debug - keys\n\n");
    for (size_t i = 0; i < sizeof keymap / sizeof *keymap; i++)
        if (keymap[i].what[0])
            fprintf(f, "  %-9s %s\n", keymap[i].keys, keymap[i].what);
    fprintf(f, "\nCommands (the ':' line and --script):\n");
    es_dbg_help(f);
    if (fclose(f)) {
        free(h);
        return NULL;
    }
    return h;
}

int es_ui_app_init(es_ui_app *a, es_dbg *d, int font_px, int w, int h, char *err,
                   size_t errlen)
{
    memset(a, 0, sizeof *a);
    a->d = d;
    a->font_px = font_px;
    a->w = w, a->h = h;
    a->font = es_ui_font_open(NULL, font_px, err, errlen);
    a->help = build_help();
    if (!a->font || !a->help) {
        if (a->font && !a->help)
            snprintf(err, errlen, "out of memory");
        es_ui_app_free(a);
        return -1;
    }
    a->view.help = a->help;
    es_dbg_set_screenshot(d, es_ui_app_screenshot, a);
    return 0;
}

void es_ui_app_free(es_ui_app *a)
{
    if (a->d)
        es_dbg_set_screenshot(a->d, NULL, NULL);
    es_ui_font_close(a->font);
    free(a->px);
    free(a->help);
    a->font = NULL, a->px = NULL, a->help = NULL;
}

/* Draws into a->px at the current size (reallocating on resize). */
static int draw(es_ui_app *a)
{
    size_t n = (size_t)a->w * a->h;
    uint32_t *px = realloc(a->px, n * sizeof *px);
    if (!px)
        return -1;
    a->px = px;
    es_ui_view_fill(&a->view, a->d);
    a->view.prompt = a->prompting ? a->prompt : NULL;
    es_ui_canvas cv = {a->px, a->w, a->h, a->w};
    es_ui_render(&cv, a->font, &a->view);
    return 0;
}

int es_ui_app_screenshot(void *ctx, es_dbg *d, const char *file, char *err, size_t errlen)
{
    es_ui_app *a = ctx;
    (void)d;
    if (draw(a)) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return es_png_write(file, a->px, a->w, a->h, a->w, err, errlen);
}

static void set_message(es_ui_app *a, bool error, const char *s)
{
    snprintf(a->view.message, sizeof a->view.message, "%s", s);
    a->view.message_error = error;
}

int es_ui_app_exec(es_ui_app *a, const char *line)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    int rc = es_dbg_exec(a->d, line, out);
    if (out)
        fclose(out);
    /* The first non-empty line of the report. */
    const char *s = buf ? buf : "";
    while (*s == '\n')
        s++;
    char first[256];
    size_t k = 0;
    while (s[k] && s[k] != '\n' && k + 1 < sizeof first)
        first[k] = s[k], k++;
    first[k] = 0;
    set_message(a, rc == ES_DBG_CMD_ERROR, first[0] ? first : line);
    free(buf);
    return rc;
}

/* A breakpoint at addr, or delete the one there. */
static void toggle_break_at(es_ui_app *a, uint64_t addr)
{
    for (size_t i = 0; i < es_dbg_break_count(a->d); i++) {
        const es_dbg_bp *bp = es_dbg_break_get(a->d, i);
        if (bp && bp->addr == addr) {
            char cmd[32];
            snprintf(cmd, sizeof cmd, "delete %d", bp->id);
            es_ui_app_exec(a, cmd);
            return;
        }
    }
    char cmd[48];
    snprintf(cmd, sizeof cmd, "break 0x%" PRIx64, addr);
    es_ui_app_exec(a, cmd);
}

/* b: toggle at RIP. */
static void toggle_break(es_ui_app *a)
{
    uint64_t rip = 0;
    char err[128];
    if (es_dbg_resolve(a->d, "rip", &rip, err, sizeof err) == 0)
        toggle_break_at(a, rip);
}

void es_ui_app_click(es_ui_app *a, int x, int y)
{
    /* the view as last drawn: the click refers to what the user saw */
    es_ui_layout lo;
    es_ui_layout_compute(&lo, &a->view, a->w, a->h, a->font);
    int i;
    if (es_ui_hit(&lo, &a->view, x, y, &i) == ES_UI_P_DISASM && i >= 0 && a->view.lines[i].len)
        toggle_break_at(a, a->view.lines[i].addr);
}

static void cycle_mem(es_ui_app *a)
{
    static const char *const follow[] = {"rsp", "rdi", "rsi", "rip"};
    /* which one is shown now: the first whose value is the view's address */
    es_dbg_reg regs[ES_DBG_MAX_REGS];
    size_t n = es_dbg_regs(a->d, regs, ES_DBG_MAX_REGS);
    uint64_t at = es_dbg_memview(a->d);
    size_t next = 0;
    for (size_t f = 0; f < 4; f++)
        for (size_t i = 0; i < n; i++)
            if (!strcmp(regs[i].name, follow[f]) && regs[i].value == at)
                next = (f + 1) % 4;
    char cmd[16];
    snprintf(cmd, sizeof cmd, "mem %s", follow[next]);
    es_ui_app_exec(a, cmd);
}

/* Runs a key's command; returns false when the window should close. */
static bool run_bind(es_ui_app *a, const keybind *k)
{
    const char *c = k->cmd;
    if (c[0] != '@') {
        return es_ui_app_exec(a, c) != ES_DBG_CMD_QUIT;
    } else if (!strcmp(c, "@quit")) {
        return false;
    } else if (!strcmp(c, "@help")) {
        a->view.show_help = !a->view.show_help;
    } else if (!strcmp(c, "@break")) {
        toggle_break(a);
    } else if (!strcmp(c, "@syntax")) {
        es_ui_app_exec(a, es_dbg_syntax(a->d) == ES_SYNTAX_ATT ? "syntax intel" : "syntax att");
    } else if (!strcmp(c, "@convention")) {
        es_dbg_status st;
        es_dbg_get_status(a->d, &st);
        es_ui_app_exec(a, st.patches == ES_CONV_V417 ? "restart --convention v4.16"
                                                     : "restart --convention v4.17");
    } else if (!strcmp(c, "@mem")) {
        cycle_mem(a);
    } else if (!strcmp(c, "@prompt")) {
        a->prompting = true;
        a->prompt[0] = 0;
    } else if (!strcmp(c, "@bigger") || !strcmp(c, "@smaller")) {
        int px = a->font_px + (c[1] == 'b' ? 2 : -2);
        char err[200];
        es_ui_font *f = px >= 8 && px <= 48 ? es_ui_font_open(NULL, px, err, sizeof err) : NULL;
        if (f) {
            es_ui_font_close(a->font);
            a->font = f, a->font_px = px;
        }
    }
    return true;
}

bool es_ui_app_text(es_ui_app *a, const char *text)
{
    if (a->prompting) {
        size_t n = strlen(a->prompt);
        snprintf(a->prompt + n, sizeof a->prompt - n, "%s", text);
        return true;
    }
    if (!text[0] || text[1])
        return true; /* only single characters are bound */
    for (size_t i = 0; i < sizeof keymap / sizeof *keymap; i++)
        if (strchr(keymap[i].chars, text[0]))
            return run_bind(a, &keymap[i]);
    return true;
}

bool es_ui_app_key(es_ui_app *a, int32_t key, bool shift)
{
    if (a->prompting) {
        size_t n = strlen(a->prompt);
        if (key == SDLK_ESCAPE) {
            a->prompting = false;
        } else if (key == SDLK_BACKSPACE && n) {
            a->prompt[n - 1] = 0;
        } else if (key == SDLK_RETURN || key == SDLK_KP_ENTER) {
            a->prompting = false;
            char line[sizeof a->prompt];
            memcpy(line, a->prompt, sizeof line);
            if (es_ui_app_exec(a, line) == ES_DBG_CMD_QUIT)
                return false;
        }
        return true;
    }
    if (key == SDLK_ESCAPE) {
        if (a->view.show_help) {
            a->view.show_help = false;
            return true;
        }
        return false;
    }
    for (size_t i = 0; i < sizeof keymap / sizeof *keymap; i++)
        if (keymap[i].key && keymap[i].key == key && keymap[i].shift == shift)
            return run_bind(a, &keymap[i]);
    return true;
}

/* Handles one event; returns false to quit. */
static bool handle(es_ui_app *a, const SDL_Event *e)
{
    if (e->type == SDL_QUIT)
        return false;
    if (e->type == SDL_TEXTINPUT)
        return es_ui_app_text(a, e->text.text);
    if (e->type == SDL_KEYDOWN)
        return es_ui_app_key(a, e->key.keysym.sym, (e->key.keysym.mod & KMOD_SHIFT) != 0);
    if (e->type == SDL_MOUSEBUTTONDOWN && e->button.button == SDL_BUTTON_LEFT)
        es_ui_app_click(a, e->button.x, e->button.y);
    return true;
}

static int present(es_ui_app *a, SDL_Window *win)
{
    SDL_Surface *ws = SDL_GetWindowSurface(win);
    if (!ws)
        return -1;
    a->w = ws->w, a->h = ws->h;
    if (draw(a))
        return -1;
    SDL_Surface *src = SDL_CreateRGBSurfaceWithFormatFrom(a->px, a->w, a->h, 32, a->w * 4,
                                                          SDL_PIXELFORMAT_ARGB8888);
    if (!src)
        return -1;
    int rc = SDL_BlitSurface(src, NULL, ws, NULL);
    SDL_FreeSurface(src);
    return rc ? -1 : SDL_UpdateWindowSurface(win);
}

int es_ui_app_window(es_ui_app *a, const char *title)
{
    if (SDL_Init(SDL_INIT_VIDEO) != 0) {
        fprintf(stderr,
                "entrysim: debug: no display (%s); run headless with --script FILE "
                "[--screenshot PNG]\n",
                SDL_GetError());
        return 2;
    }
    const char *drv = SDL_GetCurrentVideoDriver();
    if (drv && (!strcmp(drv, "offscreen") || !strcmp(drv, "dummy"))) {
        /* SDL_VIDEODRIVER chose an invisible window: nobody could press a key */
        fprintf(stderr, "entrysim: debug: the '%s' video driver shows nothing; run headless "
                        "with --script FILE [--screenshot PNG]\n", drv);
        SDL_Quit();
        return 2;
    }
    SDL_Window *win = SDL_CreateWindow(title, SDL_WINDOWPOS_UNDEFINED, SDL_WINDOWPOS_UNDEFINED,
                                       a->w, a->h, SDL_WINDOW_RESIZABLE);
    if (!win) {
        fprintf(stderr, "entrysim: debug: cannot open a window: %s\n", SDL_GetError());
        SDL_Quit();
        return 1;
    }
    SDL_SetWindowMinimumSize(win, 640, 400);
    SDL_StartTextInput();
    int status = 0;
    bool dirty = true, running = true;
    while (running) {
        if (dirty && present(a, win)) {
            fprintf(stderr, "entrysim: debug: drawing failed: %s\n", SDL_GetError());
            status = 1;
            break;
        }
        dirty = false;
        SDL_Event e;
        if (!SDL_WaitEvent(&e))
            continue;
        do {
            if (!handle(a, &e))
                running = false;
            /* any input or window change can change what is shown */
            dirty = dirty || e.type != SDL_MOUSEMOTION;
        } while (running && SDL_PollEvent(&e));
    }
    SDL_StopTextInput();
    SDL_DestroyWindow(win);
    SDL_Quit();
    return status;
}
