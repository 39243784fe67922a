// The debugger window's drawing side (debugger/ui.h): PNG writer/reader,
// layout, what the panels show for a hand-made session state, and a golden
// image of a small fixed render.  No display is needed: the renderer draws
// into memory.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ui.h"

namespace {

struct Font {
    es_ui_font *f = nullptr;
    explicit Font(int px)
    {
        char err[256] = "";
        f = es_ui_font_open(nullptr, px, err, sizeof err);
        EXPECT_NE(f, nullptr) << err;
    }
    ~Font() { es_ui_font_close(f); }
};

struct Canvas {
    std::vector<uint32_t> px;
    es_ui_canvas cv;
    Canvas(int w, int h) : px((size_t)w * h)
    {
        cv.px = px.data();
        cv.w = w, cv.h = h, cv.pitch = w;
    }
    uint32_t at(int x, int y) const { return px[(size_t)y * cv.pitch + x]; }
    int count(es_ui_rect r, uint32_t c) const
    {
        int n = 0;
        for (int y = r.y; y < r.y + r.h; y++)
            for (int x = r.x; x < r.x + r.w; x++)
                n += at(x, y) == c;
        return n;
    }
};

std::string tmp_path(const char *name)
{
    const char *d = getenv("TMPDIR");
    return std::string(d && *d ? d : "/tmp") + "/es_ui_" + std::to_string(getpid()) + "_" + name;
}

void add_reg(es_ui_view *v, const char *name, uint64_t val, int group, bool changed,
             es_label taint = 0, const char *labels = "")
{
    es_dbg_reg *r = &v->regs[v->nregs++];
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", name);
    r->value = val;
    r->width = group == ES_DBG_RG_SEG && !strchr(name, '.') ? 2 : 8;
    r->group = (uint8_t)group;
    r->changed = changed;
    r->taint = taint;
    snprintf(r->labels, sizeof r->labels, "%s", labels);
}

// A state in the middle of entry_SYSCALL_64 after the pushes: rdi changed
// and user-derived, pt_regs half written, dx cleared when `cleared`.
void sample_view(es_ui_view *v, bool cleared)
{
    memset(v, 0, sizeof *v);
    static const char *gpr[16] = {"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
                                  "r8",  "r9",  "r10", "r11", "r12", "r13", "r14", "r15"};
    for (int i = 0; i < 16; i++)
        add_reg(v, gpr[i], 0x1000u * (i + 1), ES_DBG_RG_GPR, i == 7,
                i == 7 || i == 6 ? ES_TL_REG(i) : 0, i == 7 ? "rdi" : (i == 6 ? "rsi" : ""));
    add_reg(v, "rip", 0xffffffff81a00030ull, ES_DBG_RG_CTRL, true);
    add_reg(v, "rflags", 0x2, ES_DBG_RG_CTRL, false);
    add_reg(v, "cpl", 0, ES_DBG_RG_CTRL, true);
    add_reg(v, "mode", ES_MODE_64, ES_DBG_RG_CTRL, false);
    add_reg(v, "cs", 0x10, ES_DBG_RG_SEG, true);
    add_reg(v, "gs.base", 0xffff888000010000ull, ES_DBG_RG_SEG, false);
    add_reg(v, "lstar", 0xffffffff81a00000ull, ES_DBG_RG_MSR, false);
    snprintf(v->flags, sizeof v->flags, "IF");
    static const char *syms[4] = {"entry_SYSCALL_64", "", "", ""};
    for (int i = 0; i < 8; i++) {
        es_dbg_line *l = &v->lines[v->nlines++];
        l->addr = 0xffffffff81a00000ull + 4 * i;
        l->len = 4;
        snprintf(l->text, sizeof l->text, "%s", i == 6 ? "push rdi" : "mov rax, qword ptr [rsp+0x8]");
        if (i < 4)
            snprintf(l->sym, sizeof l->sym, "%s", syms[i]);
        l->label = i == 0;
        l->current = i == 6;
        l->breakpoint = i == 2;
        l->cycles = i < 6 ? i + 1 : -1;
    }
    v->has_ptregs = true;
    v->ptregs_base = 0xffffc90000003f58ull;
    static const char *fields[ES_DBG_PTREGS_SLOTS] = {
        "r15", "r14", "r13", "r12", "bp", "bx", "r11", "r10", "r9", "r8", "ax",
        "cx",  "dx",  "si",  "di",  "orig_ax", "ip", "cs", "flags", "sp", "ss"};
    for (int i = 0; i < ES_DBG_PTREGS_SLOTS; i++) {
        es_dbg_slot *s = &v->slots[i];
        s->field = fields[i];
        s->off = 8u * i;
        s->written = i >= 12;
        s->order = s->written ? (unsigned)(ES_DBG_PTREGS_SLOTS - i) : 0;
        s->value = 0x100u + i;
        s->cleared = cleared && i == 12;
        if (i == 14) {
            s->taint = ES_TL_REG(7);
            snprintf(s->labels, sizeof s->labels, "rdi");
        }
    }
    es_dbg_live *l = &v->live[v->nlive++];
    snprintf(l->where, sizeof l->where, "pt_regs->di");
    l->value = 0x10e;
    l->taint = ES_TL_REG(7);
    snprintf(l->labels, sizeof l->labels, "rdi");
    v->mem_addr = 0x401000;
    for (int i = 0; i < 64; i++)
        v->mem[i] = (uint8_t)("Hello, entrysim!"[i % 16]);
    v->mem_len = 64;
    v->output = "hello\nworld\n";
    v->output_len = strlen(v->output);
    v->st.cpl = 0;
    v->st.mode = ES_MODE_64;
    v->st.icount = 1234;
    snprintf(v->st.convention, sizeof v->st.convention, "%s", cleared ? "v4.17" : "v4.16");
    snprintf(v->st.program, sizeof v->st.program, "hello");
    v->st.history = 1234;
    snprintf(v->message, sizeof v->message, "stepped");
}

// The vector register panel shown as fmt (enum es_dbg_vfmt): ymm0 all
// ones and ymm1 the floats 1..8 (both changed by the last command), the
// others a pattern; 8 registers for compat mode.
void add_vregs(es_ui_view *v, int fmt, size_t n = 16)
{
    v->show_vregs = true;
    v->vregs_fmt = fmt;
    v->nvregs = n;
    for (size_t i = 0; i < n; i++) {
        es_dbg_vreg *r = &v->vregs[i];
        memset(r, 0, sizeof *r);
        snprintf(r->name, sizeof r->name, "ymm%zu", i);
        for (int k = 0; k < 4; k++)
            r->value.q[k] = 0x0101010101010101ull * (i + 1) + (uint64_t)k;
        r->changed = i < 2;
    }
    memset(&v->vregs[0].value, 0xff, sizeof(es_ymm));
    for (int k = 0; k < 8; k++)
        v->vregs[1].value.f[k] = (float)(k + 1);
}

// The sample state rendered at w x h: the font, the view, the pixels and
// the layout the renderer used; vregs: the vector panel as that format.
struct Sample {
    Font font;
    std::unique_ptr<es_ui_view> v{new es_ui_view()};
    Canvas c;
    es_ui_layout lo;
    Sample(bool cleared, int w, int h, int px = 13, const char *help = nullptr,
           int vregs = ES_DBG_VF_OFF)
        : font(px), c(w, h)
    {
        sample_view(v.get(), cleared);
        if (vregs != ES_DBG_VF_OFF)
            add_vregs(v.get(), vregs);
        v->help = help;
        v->show_help = help != nullptr;
        if (font.f) {
            es_ui_render(&c.cv, font.f, v.get());
            es_ui_layout_compute(&lo, v.get(), w, h, font.f);
        }
    }
};

TEST(DebuggerUiPng, RoundTripKeepsEveryPixel)
{
    const int w = 300, h = 250; // > 65535 raw bytes: several stored blocks
    std::vector<uint32_t> px((size_t)w * h);
    for (size_t i = 0; i < px.size(); i++)
        px[i] = 0xFF000000u | (uint32_t)(i * 2654435761u >> 8);
    std::string p = tmp_path("rt.png");
    char err[256];
    ASSERT_EQ(es_png_write(p.c_str(), px.data(), w, h, w, err, sizeof err), 0) << err;
    uint32_t *back = nullptr;
    int bw = 0, bh = 0;
    ASSERT_EQ(es_png_read(p.c_str(), &back, &bw, &bh, err, sizeof err), 0) << err;
    EXPECT_EQ(bw, w);
    EXPECT_EQ(bh, h);
    EXPECT_EQ(memcmp(back, px.data(), px.size() * 4), 0);
    free(back);
    remove(p.c_str());
}

TEST(DebuggerUiPng, CorruptFilesAreRefusedNotCrashed)
{
    const int w = 40, h = 30;
    std::vector<uint32_t> px((size_t)w * h, 0xFF336699u);
    std::string p = tmp_path("bad.png");
    char err[256];
    ASSERT_EQ(es_png_write(p.c_str(), px.data(), w, h, w, err, sizeof err), 0) << err;
    FILE *fp = fopen(p.c_str(), "rb");
    std::vector<unsigned char> bytes(1 << 16);
    bytes.resize(fread(bytes.data(), 1, bytes.size(), fp));
    fclose(fp);
    // Flip one byte at a time across the file, and truncate: every variant
    // must be refused with a message (CRC, length, Adler-32...).
    for (size_t i = 0; i < bytes.size(); i += 7) {
        std::vector<unsigned char> b = bytes;
        b[i] ^= 0x5a;
        fp = fopen(p.c_str(), "wb");
        fwrite(b.data(), 1, b.size(), fp);
        fclose(fp);
        uint32_t *out = nullptr;
        int ow, oh;
        err[0] = 0;
        EXPECT_EQ(es_png_read(p.c_str(), &out, &ow, &oh, err, sizeof err), -1) << "byte " << i;
        EXPECT_NE(err[0], 0);
        EXPECT_EQ(out, nullptr);
    }
    for (size_t n : {size_t(0), size_t(8), size_t(30), bytes.size() - 1}) {
        fp = fopen(p.c_str(), "wb");
        fwrite(bytes.data(), 1, n, fp);
        fclose(fp);
        uint32_t *out = nullptr;
        int ow, oh;
        EXPECT_EQ(es_png_read(p.c_str(), &out, &ow, &oh, err, sizeof err), -1) << n;
    }
    remove(p.c_str());
    uint32_t *out = nullptr;
    int ow, oh;
    EXPECT_EQ(es_png_read("/nonexistent/x.png", &out, &ow, &oh, err, sizeof err), -1);
}

TEST(DebuggerUiLayout, PanelsFitAndFollowTheWindowSize)
{
    Font font(13);
    ASSERT_NE(font.f, nullptr);
    for (auto wh : {std::pair<int, int>{1440, 860}, {900, 600}, {2000, 1200}}) {
        es_ui_layout lo;
        es_ui_layout_compute(&lo, nullptr, wh.first, wh.second, font.f);
        for (int p = 0; p < ES_UI_NPANELS; p++) {
            es_ui_rect r = lo.p[p];
            EXPECT_GE(r.x, 0);
            EXPECT_GE(r.y, 0);
            EXPECT_LE(r.x + r.w, wh.first) << p;
            EXPECT_LE(r.y + r.h, wh.second) << p;
            for (int q = p + 1; q < ES_UI_NPANELS; q++) {
                es_ui_rect s = lo.p[q];
                bool apart = r.x + r.w <= s.x || s.x + s.w <= r.x || r.y + r.h <= s.y ||
                             s.y + s.h <= r.y;
                EXPECT_TRUE(apart) << p << " overlaps " << q;
            }
        }
        // pt_regs has room for its 21 slots at every one of these sizes
        EXPECT_GE(es_ui_panel_body(&lo, ES_UI_P_PTREGS).h / lo.ch, 21) << wh.first;
    }
    es_ui_layout a, b;
    es_ui_layout_compute(&a, nullptr, 1440, 860, font.f);
    es_ui_layout_compute(&b, nullptr, 1000, 700, font.f);
    EXPECT_NE(a.p[ES_UI_P_PTREGS].x, b.p[ES_UI_P_PTREGS].x);
    EXPECT_NE(a.p[ES_UI_P_MESSAGE].y, b.p[ES_UI_P_MESSAGE].y);
}

TEST(DebuggerUiRender, ChangedRegisterIsHighlightedAndOnlyIt)
{
    Sample s(true, 1440, 860);
    ASSERT_NE(s.font.f, nullptr);
    const es_ui_view &v = *s.v;
    const Canvas &c = s.c;
    const es_ui_layout &lo = s.lo;
    for (size_t i = 0; i < v.nregs; i++) {
        int n = c.count(es_ui_reg_rect(&lo, &v, i), ES_UI_CHANGED_BG);
        if (v.regs[i].changed)
            EXPECT_GT(n, 20) << v.regs[i].name;
        else
            EXPECT_EQ(n, 0) << v.regs[i].name;
    }
    // rdi is user-derived: its value is drawn in rdi's label colour
    es_ui_rect rdi = es_ui_reg_rect(&lo, &v, 7);
    EXPECT_GT(c.count(rdi, es_ui_label_colour(7)), 0);
    EXPECT_EQ(c.count(es_ui_reg_rect(&lo, &v, 0), es_ui_label_colour(7)), 0);
}

TEST(DebuggerUiRender, ClearedSlotsAndCurrentLineAreMarked)
{
    Sample a(false, 1440, 860), b(true, 1440, 860);
    ASSERT_NE(a.font.f, nullptr);
    const Canvas &ca = a.c, &cb = b.c;
    const es_ui_layout &lo = a.lo;
    es_ui_rect dx = es_ui_panel_row(&lo, ES_UI_P_PTREGS, 12);
    EXPECT_EQ(ca.count(dx, ES_UI_CLEARED_BG), 0);
    EXPECT_GT(cb.count(dx, ES_UI_CLEARED_BG), dx.w);
    es_ui_rect di = es_ui_panel_row(&lo, ES_UI_P_PTREGS, 14);
    EXPECT_EQ(ca.count(di, ES_UI_CLEARED_BG), 0);
    EXPECT_GT(ca.count(di, es_ui_label_colour(7)), 0);
    // The current line's band: label row + 6 rows before it
    es_ui_rect cur = es_ui_panel_row(&lo, ES_UI_P_DISASM, 7);
    EXPECT_GT(ca.count(cur, ES_UI_CURRENT_BG), cur.w);
    EXPECT_EQ(ca.count(es_ui_panel_row(&lo, ES_UI_P_DISASM, 6), ES_UI_CURRENT_BG), 0);
    // A breakpoint mark on line 2 (row 3)
    EXPECT_GT(ca.count(es_ui_panel_row(&lo, ES_UI_P_DISASM, 3), ES_UI_BP), 4);
}

TEST(DebuggerUiRender, ClicksMapToTheLinesDrawn)
{
    Sample s(false, 1440, 860);
    ASSERT_NE(s.font.f, nullptr);
    auto at_row = [&](int row) {
        es_ui_rect r = es_ui_panel_row(&s.lo, ES_UI_P_DISASM, row);
        return es_ui_disasm_hit(&s.lo, s.v.get(), r.x + 40, r.y + r.h / 2);
    };
    EXPECT_EQ(at_row(0), -1); // the <entry_SYSCALL_64>: label
    EXPECT_EQ(at_row(1), 0);
    EXPECT_EQ(at_row(7), 6);  // the current line, highlighted there
    EXPECT_EQ(at_row(8), 7);
    EXPECT_EQ(at_row(9), -1); // past the last line
    es_ui_rect regs = s.lo.p[ES_UI_P_REGS];
    EXPECT_EQ(es_ui_disasm_hit(&s.lo, s.v.get(), regs.x + 5, regs.y + 40), -1);
}

TEST(DebuggerUiRender, HelpOverlayCoversTheMiddle)
{
    Sample plain(false, 800, 600), help(false, 800, 600, 13, "F1 ? help\ns step\nn next");
    ASSERT_NE(plain.font.f, nullptr);
    es_ui_rect mid = {380, 290, 40, 20};
    EXPECT_EQ(plain.c.count(mid, ES_UI_STATUS_BG), 0);
    EXPECT_GT(help.c.count(mid, ES_UI_STATUS_BG), 0);
}

// Any size draws without writing outside the canvas (the canvas has guard
// pixels around it that must stay untouched), help overlay included.
TEST(DebuggerUiRender, TinyAndOddSizesStayInsideTheCanvas)
{
    Font font(13);
    ASSERT_NE(font.f, nullptr);
    static es_ui_view v;
    sample_view(&v, true);
    v.help = "a\nlong help line that is wider than a tiny window can show";
    v.show_help = true;
    for (int pass = 0; pass < 2; pass++, add_vregs(&v, ES_DBG_VF_FLOAT))
    for (auto wh : {std::pair<int, int>{1, 1}, {7, 300}, {50, 30}, {320, 200}, {641, 401}}) {
        const int w = wh.first, h = wh.second, guard = 64;
        std::vector<uint32_t> buf((size_t)(w + 2 * guard) * (h + 2 * guard), 0x12345678u);
        es_ui_canvas cv;
        cv.pitch = w + 2 * guard;
        cv.px = buf.data() + (size_t)guard * cv.pitch + guard;
        cv.w = w, cv.h = h;
        es_ui_render(&cv, font.f, &v);
        size_t touched = 0;
        for (int y = -guard; y < h + guard; y++)
            for (int x = -guard; x < w + guard; x++) {
                bool inside = x >= 0 && y >= 0 && x < w && y < h;
                uint32_t p = buf[(size_t)(y + guard) * cv.pitch + x + guard];
                if (!inside)
                    touched += p != 0x12345678u;
            }
        EXPECT_EQ(touched, 0u) << w << "x" << h;
    }
}

// Compares a render with tests/golden/NAME; on mismatch (or when the
// golden is missing) writes NAME.actual.png next to it.  Tolerance: a
// channel may differ by 48 on at most 0.02% of the pixels (antialiasing
// of another FreeType build; a single character moved or changed exceeds
// it), the size must match exactly.  ES_UPDATE_GOLDEN=1 rewrites it.
void expect_golden(const Canvas &c, const char *name)
{
    std::string golden = std::string(ES_TEST_GOLDEN_DIR) + "/" + name;
    std::string actual = golden.substr(0, golden.size() - 4) + ".actual.png";
    char err[256];
    if (getenv("ES_UPDATE_GOLDEN")) {
        ASSERT_EQ(es_png_write(golden.c_str(), c.px.data(), c.cv.w, c.cv.h, c.cv.pitch, err,
                               sizeof err), 0) << err;
        return;
    }
    uint32_t *g = nullptr;
    int gw = 0, gh = 0;
    int rc = es_png_read(golden.c_str(), &g, &gw, &gh, err, sizeof err);
    size_t bad = 0;
    if (rc == 0 && gw == c.cv.w && gh == c.cv.h) {
        for (int y = 0; y < gh; y++)
            for (int x = 0; x < gw; x++) {
                uint32_t p = g[(size_t)y * gw + x], q = c.at(x, y);
                for (int sh = 0; sh < 24; sh += 8) {
                    int d = (int)((p >> sh) & 0xFF) - (int)((q >> sh) & 0xFF);
                    if (d > 48 || d < -48) {
                        bad++;
                        break;
                    }
                }
            }
    }
    free(g);
    bool ok = rc == 0 && gw == c.cv.w && gh == c.cv.h && bad * 5000 <= (size_t)gw * gh;
    if (!ok)
        es_png_write(actual.c_str(), c.px.data(), c.cv.w, c.cv.h, c.cv.pitch, err, sizeof err);
    EXPECT_TRUE(ok) << golden << ": " << (rc ? err : "") << " size " << gw << "x" << gh
                    << ", " << bad << " pixels differ; see " << actual;
}

TEST(DebuggerUiRender, GoldenImage)
{
    Sample s(true, 1200, 720, 12);
    ASSERT_NE(s.font.f, nullptr);
    expect_golden(s.c, "debugger_ui_sample.png");
}

// ---- the vector register panel ----

// Hidden (the default), it changes nothing: the layout is the one without
// a view.  Shown, it is a band above the bottom line that overlaps no
// other panel, and the columns above it are shorter by its height.
TEST(DebuggerUiVregs, BandOnlyWhenShown)
{
    Font font(13);
    ASSERT_NE(font.f, nullptr);
    static es_ui_view v;
    sample_view(&v, false);
    for (auto wh : {std::pair<int, int>{1440, 860}, {900, 600}, {2000, 1200}}) {
        const int w = wh.first, h = wh.second;
        es_ui_layout none, hidden, shown;
        es_ui_layout_compute(&none, nullptr, w, h, font.f);
        v.show_vregs = false;
        es_ui_layout_compute(&hidden, &v, w, h, font.f);
        EXPECT_EQ(memcmp(&none, &hidden, sizeof none), 0) << w;
        EXPECT_TRUE(hidden.hidden[ES_UI_P_VREGS]);
        add_vregs(&v, ES_DBG_VF_HEX);
        es_ui_layout_compute(&shown, &v, w, h, font.f);
        ASSERT_FALSE(shown.hidden[ES_UI_P_VREGS]) << w;
        es_ui_rect b = shown.p[ES_UI_P_VREGS];
        EXPECT_LE(b.y + b.h, shown.p[ES_UI_P_MESSAGE].y) << w;
        EXPECT_GT(b.w, w * 9 / 10) << w;
        for (int p = 0; p < ES_UI_NPANELS; p++) {
            es_ui_rect r = shown.p[p];
            EXPECT_LE(r.x + r.w, w) << p;
            EXPECT_LE(r.y + r.h, h) << p;
            for (int q = p + 1; q < ES_UI_NPANELS; q++) {
                es_ui_rect s = shown.p[q];
                EXPECT_TRUE(r.x + r.w <= s.x || s.x + s.w <= r.x || r.y + r.h <= s.y ||
                            s.y + s.h <= r.y) << p << " overlaps " << q << " at " << w;
            }
        }
        EXPECT_LT(shown.p[ES_UI_P_PTREGS].h, none.p[ES_UI_P_PTREGS].h);
        EXPECT_LE(shown.p[ES_UI_P_PTREGS].y + shown.p[ES_UI_P_PTREGS].h, b.y);
        // at the usual sizes, still room for pt_regs' 21 slots, and every
        // register has its place (a small window drops the last rows:
        // the band takes at most 40% of the height); none twice
        if (w >= 1440) {
            EXPECT_GE(es_ui_panel_body(&shown, ES_UI_P_PTREGS).h / shown.ch, 21) << w;
        }
        for (size_t i = 0; i < v.nvregs; i++) {
            es_ui_rect r = es_ui_vreg_rect(&shown, &v, i);
            if (w >= 1440) {
                EXPECT_GT(r.w, 0) << i << " at " << w;
            }
            if (r.w == 0)
                continue;
            for (size_t k = 0; k < i; k++) {
                es_ui_rect s = es_ui_vreg_rect(&shown, &v, k);
                EXPECT_TRUE(s.w == 0 || r.x + r.w <= s.x || s.x + s.w <= r.x || r.y + r.h <= s.y ||
                            s.y + s.h <= r.y) << i << " overlaps " << k;
            }
        }
        sample_view(&v, false);
    }
}

// The registers the last command changed have the amber background, the
// others none; floats take more room than hex words, so fewer registers
// go side by side.
TEST(DebuggerUiVregs, ChangedRegistersAreHighlighted)
{
    for (int fmt : {ES_DBG_VF_HEX, ES_DBG_VF_FLOAT, ES_DBG_VF_DOUBLE}) {
        Sample s(false, 1440, 860, 13, nullptr, fmt);
        ASSERT_NE(s.font.f, nullptr);
        const es_ui_view &v = *s.v;
        for (size_t i = 0; i < v.nvregs; i++) {
            es_ui_rect r = es_ui_vreg_rect(&s.lo, &v, i);
            int n = s.c.count(r, ES_UI_CHANGED_BG);
            if (v.vregs[i].changed)
                EXPECT_GT(n, 20) << v.vregs[i].name << " fmt " << fmt;
            else
                EXPECT_EQ(n, 0) << v.vregs[i].name << " fmt " << fmt;
        }
        es_ui_rect r0 = es_ui_vreg_rect(&s.lo, &v, 0), r8 = es_ui_vreg_rect(&s.lo, &v, 8);
        if (fmt == ES_DBG_VF_HEX) { // two side by side at this width: ymm8 beside ymm0
            EXPECT_EQ(r8.y, r0.y);
        } else {
            EXPECT_GT(r8.y, r0.y);
        }
    }
}

TEST(DebuggerUiVregs, GoldenImage)
{
    Sample s(true, 1200, 720, 12, nullptr, ES_DBG_VF_HEX);
    ASSERT_NE(s.font.f, nullptr);
    expect_golden(s.c, "debugger_ui_vregs.png");
}

} // namespace
