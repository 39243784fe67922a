/* ui_font.c - the debugger's monospace font: DejaVu Sans Mono through
 * SDL2_ttf, rasterised once per size into one 8-bit coverage mask per
 * printable ASCII character.  Drawing text is then a blend of cached masks,
 * which keeps frames cheap and the output identical from run to run (the
 * golden-image test needs that; the font comes from the pinned Debian
 * package fonts-dejavu-core, so CI rasterises the same glyphs). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <SDL.h>
#include <SDL_ttf.h>

#include "ui.h"

#ifndef ES_UI_FONT_PATH
#define ES_UI_FONT_PATH "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"
#endif

#define FIRST_CH 0x20
#define LAST_CH 0x7e
#define NGLYPH (LAST_CH - FIRST_CH + 1)

struct es_ui_font {
    int cw, ch;
    uint8_t *mask; /* NGLYPH masks of cw*ch coverage bytes */
};

/* Copies the alpha channel of one rendered glyph into its cell, clipped. */
static void take_alpha(es_ui_font *f, int g, SDL_Surface *s)
{
    SDL_Surface *c = SDL_ConvertSurfaceFormat(s, SDL_PIXELFORMAT_ARGB8888, 0);
    if (!c)
        return;
    uint8_t *dst = f->mask + (size_t)g * f->cw * f->ch;
    SDL_LockSurface(c);
    int w = c->w < f->cw ? c->w : f->cw, h = c->h < f->ch ? c->h : f->ch;
    for (int y = 0; y < h; y++) {
        const uint32_t *row = (const uint32_t *)((const uint8_t *)c->pixels + (size_t)y * c->pitch);
        for (int x = 0; x < w; x++)
            dst[y * f->cw + x] = (uint8_t)(row[x] >> 24);
    }
    SDL_UnlockSurface(c);
    SDL_FreeSurface(c);
}

es_ui_font *es_ui_font_open(const char *path, int px, char *err, size_t errlen)
{
    if (!path)
        path = ES_UI_FONT_PATH;
    if (px < 8 || px > 48) {
        snprintf(err, errlen, "font size %d out of range (8..48)", px);
        return NULL;
    }
    /* TTF_Init/TTF_Quit are reference counted, so each font holds one. */
    if (TTF_Init() != 0) {
        snprintf(err, errlen, "SDL_ttf: %s", TTF_GetError());
        return NULL;
    }
    TTF_Font *tf = TTF_OpenFont(path, px);
    if (!tf) {
        snprintf(err, errlen, "cannot open the font %s (package fonts-dejavu-core): %s", path,
                 TTF_GetError());
        TTF_Quit();
        return NULL;
    }
    es_ui_font *f = calloc(1, sizeof *f);
    int minx, maxx, miny, maxy, adv;
    if (!f || TTF_GlyphMetrics(tf, 'M', &minx, &maxx, &miny, &maxy, &adv) != 0 || adv <= 0 ||
        !TTF_FontFaceIsFixedWidth(tf)) {
        snprintf(err, errlen, "%s: not a usable monospace font", path);
        free(f);
        TTF_CloseFont(tf);
        TTF_Quit();
        return NULL;
    }
    f->cw = adv;
    /* Glyph surfaces can be taller than the line skip (DejaVu's '_' at 12
     * points is 15 rows, the skip 14): the cell takes the tallest, so
     * nothing is cut off. */
    SDL_Surface *gs[NGLYPH] = {0};
    SDL_Color white = {255, 255, 255, 255};
    f->ch = TTF_FontLineSkip(tf);
    for (int g = 0; g < NGLYPH; g++) {
        if (FIRST_CH + g != ' ')
            gs[g] = TTF_RenderGlyph_Blended(tf, (Uint16)(FIRST_CH + g), white);
        if (gs[g] && gs[g]->h > f->ch)
            f->ch = gs[g]->h;
    }
    f->mask = calloc((size_t)NGLYPH * f->cw * f->ch, 1);
    for (int g = 0; g < NGLYPH; g++) {
        if (gs[g] && f->mask)
            take_alpha(f, g, gs[g]);
        SDL_FreeSurface(gs[g]);
    }
    if (!f->mask) {
        snprintf(err, errlen, "out of memory");
        free(f);
        TTF_CloseFont(tf);
        TTF_Quit();
        return NULL;
    }
    TTF_CloseFont(tf);
    TTF_Quit();
    return f;
}

void es_ui_font_close(es_ui_font *f)
{
    if (!f)
        return;
    free(f->mask);
    free(f);
}

int es_ui_font_cell_w(const es_ui_font *f) { return f->cw; }
int es_ui_font_cell_h(const es_ui_font *f) { return f->ch; }

static uint32_t blend(uint32_t bg, uint32_t fg, unsigned a)
{
    uint32_t out = 0xFF000000u;
    for (int sh = 0; sh < 24; sh += 8) {
        unsigned b = (bg >> sh) & 0xFF, c = (fg >> sh) & 0xFF;
        out |= (uint32_t)((b * (255 - a) + c * a + 127) / 255) << sh;
    }
    return out;
}

static es_ui_rect intersect(es_ui_rect a, es_ui_rect b)
{
    int x0 = a.x > b.x ? a.x : b.x, y0 = a.y > b.y ? a.y : b.y;
    int x1 = a.x + a.w < b.x + b.w ? a.x + a.w : b.x + b.w;
    int y1 = a.y + a.h < b.y + b.h ? a.y + a.h : b.y + b.h;
    es_ui_rect r = {x0, y0, x1 > x0 ? x1 - x0 : 0, y1 > y0 ? y1 - y0 : 0};
    return r;
}

void es_ui_fill(es_ui_canvas *cv, es_ui_rect r, uint32_t c)
{
    es_ui_rect all = {0, 0, cv->w, cv->h};
    r = intersect(r, all);
    for (int y = r.y; y < r.y + r.h; y++)
        for (int x = r.x; x < r.x + r.w; x++)
            cv->px[(size_t)y * cv->pitch + x] = c;
}

int es_ui_text(es_ui_canvas *cv, const es_ui_font *f, es_ui_rect clip, int x, int y,
               uint32_t fg, const char *s)
{
    es_ui_rect all = {0, 0, cv->w, cv->h};
    clip = intersect(clip, all);
    for (; *s; s++, x += f->cw) {
        unsigned char c = (unsigned char)*s;
        if (c < FIRST_CH || c > LAST_CH)
            c = '?';
        if (c == ' ' || x >= clip.x + clip.w)
            continue;
        es_ui_rect cell = intersect((es_ui_rect){x, y, f->cw, f->ch}, clip);
        const uint8_t *m = f->mask + (size_t)(c - FIRST_CH) * f->cw * f->ch;
        for (int yy = cell.y; yy < cell.y + cell.h; yy++)
            for (int xx = cell.x; xx < cell.x + cell.w; xx++) {
                unsigned a = m[(yy - y) * f->cw + (xx - x)];
                if (a) {
                    uint32_t *p = &cv->px[(size_t)yy * cv->pitch + xx];
                    *p = blend(*p, fg, a);
                }
            }
    }
    return x;
}
