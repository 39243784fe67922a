// The debugger's front end on a real session (guest/asm64/hello.S under
// the guest kernel): `entrysim debug` headless (--script, --screenshot,
// exit statuses), and what the rendered window shows after scripted steps
// -- pt_regs rows that differ between v4.16 and v4.17 exactly where the
// entry code cleared a saved register, the highlight on changed registers.
#include <gtest/gtest.h>

#include <SDL.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "cmd_debug.h"
#include "kernel.h"
#include "mitigations.h"
#include "ui_app.h"

namespace {

const std::string hello = std::string(ES_TEST_GUEST_DIR) + "/asm_hello";

std::string tmp_path(const char *name)
{
    const char *d = getenv("TMPDIR");
    return std::string(d && *d ? d : "/tmp") + "/es_dbgui_" + std::to_string(getpid()) + "_" +
           name;
}

std::string write_file(const char *name, const char *text)
{
    std::string p = tmp_path(name);
    FILE *fp = fopen(p.c_str(), "w");
    fputs(text, fp);
    fclose(fp);
    return p;
}

int debug_cmd(std::vector<std::string> args)
{
    std::vector<char *> argv;
    for (auto &a : args)
        argv.push_back(&a[0]);
    argv.push_back(nullptr);
    return es_debug_cmd((int)args.size(), argv.data());
}

// Reads a PNG the debugger wrote (and removes it); empty when unreadable.
std::vector<uint32_t> take_png(const std::string &path, int *w, int *h)
{
    uint32_t *px = nullptr;
    char err[256];
    *w = *h = 0;
    int rc = es_png_read(path.c_str(), &px, w, h, err, sizeof err);
    EXPECT_EQ(rc, 0) << err;
    std::vector<uint32_t> v(px, px + (rc == 0 ? (size_t)*w * *h : 0));
    free(px);
    remove(path.c_str());
    return v;
}

// A session + front end at a fixed size, driven by commands.
struct Session {
    es_dbg *d = nullptr;
    es_ui_app app;
    bool app_ok = false;
    Session(unsigned patches, int w, int h, const std::string &prog = hello)
    {
        es_dbg_cfg cfg;
        memset(&cfg, 0, sizeof cfg);
        static char *argv[] = {(char *)"asm_hello", nullptr};
        cfg.launch.program = prog.c_str();
        cfg.launch.argc = 1;
        cfg.launch.argv = argv;
        cfg.launch.root = ".";
        cfg.launch.deterministic = true;
        cfg.launch.vendor = 1;
        cfg.launch.patches = patches;
        cfg.launch.mitigations = ES_MIT_DEFAULT;
        cfg.launch.stdin_fd = 0, cfg.launch.stdout_fd = 1, cfg.launch.stderr_fd = 2;
        char err[400] = "";
        d = es_dbg_new(&cfg, err, sizeof err);
        EXPECT_NE(d, nullptr) << err;
        if (d) {
            app_ok = es_ui_app_init(&app, d, 13, w, h, err, sizeof err) == 0;
            EXPECT_TRUE(app_ok) << err;
        }
    }
    ~Session()
    {
        if (app_ok)
            es_ui_app_free(&app);
        es_dbg_free(d);
    }
    void exec(const char *line) { EXPECT_EQ(es_dbg_exec(d, line, nullptr), ES_DBG_CMD_OK) << line; }
    // Renders through the screenshot path and reads the PNG back.
    std::vector<uint32_t> shot(const char *name)
    {
        std::string p = tmp_path(name);
        char err[256];
        EXPECT_EQ(es_ui_app_screenshot(&app, d, p.c_str(), err, sizeof err), 0) << err;
        int w, h;
        std::vector<uint32_t> v = take_png(p, &w, &h);
        EXPECT_EQ(w, app.w);
        EXPECT_EQ(h, app.h);
        return v;
    }
};

int count(const std::vector<uint32_t> &px, int pitch, es_ui_rect r, uint32_t c)
{
    int n = 0;
    for (int y = r.y; y < r.y + r.h; y++)
        for (int x = r.x; x < r.x + r.w; x++)
            n += px[(size_t)y * pitch + x] == c;
    return n;
}

bool rows_equal(const std::vector<uint32_t> &a, const std::vector<uint32_t> &b, int pitch,
                es_ui_rect r)
{
    for (int y = r.y; y < r.y + r.h; y++)
        if (memcmp(&a[(size_t)y * pitch + r.x], &b[(size_t)y * pitch + r.x], r.w * 4))
            return false;
    return true;
}

TEST(DebuggerSession, HeadlessScriptWritesAScreenshotOfTheGivenSize)
{
    std::string script = write_file("s1.txt", "syscall\nstep 5\n");
    std::string png = tmp_path("s1.png");
    ASSERT_EQ(debug_cmd({"--script", script, "--screenshot", png, "--size", "1000x700", hello}),
              0);
    int w, h;
    std::vector<uint32_t> px = take_png(png, &w, &h);
    EXPECT_EQ(w, 1000);
    EXPECT_EQ(h, 700);
    // not a blank image: the panels and text are there
    size_t bg = 0;
    for (uint32_t p : px)
        bg += p == ES_UI_BG;
    EXPECT_FALSE(px.empty());
    EXPECT_LT(bg, px.size() / 4);
    remove(script.c_str());
}

// Issue 13: a caption is drawn on the next screenshot only; the transcript
// has a JSON line per command; --transcript needs a script.
TEST(DebuggerSession, CaptionTranscriptFromTheCommandLine)
{
    std::string a = tmp_path("cap_a.png"), b = tmp_path("cap_b.png");
    std::string t = tmp_path("cap.jsonl");
    std::string text = "kentry\ncaption \"the entry\"\nscreenshot " + a + "\nscreenshot " + b + "\n";
    std::string script = write_file("cap.txt", text.c_str());
    ASSERT_EQ(debug_cmd({"--script", script, "--transcript", t, "--size", "800x500", hello}), 0);
    int w, h;
    std::vector<uint32_t> pa = take_png(a, &w, &h), pb = take_png(b, &w, &h);
    ASSERT_EQ(pa.size(), pb.size());
    es_ui_rect bottom = {0, h - 20, w, 20};
    EXPECT_FALSE(rows_equal(pa, pb, w, bottom)); // the caption, then nothing
    es_ui_rect top = {0, 0, w, h - 40};
    EXPECT_TRUE(rows_equal(pa, pb, w, top));
    std::ifstream in(t);
    std::vector<std::string> lines;
    for (std::string x; std::getline(in, x);)
        lines.push_back(x);
    ASSERT_EQ(lines.size(), 4u);
    EXPECT_NE(lines[0].find("\"symbol\": \"entry_SYSCALL_64+0x0\""), std::string::npos);
    EXPECT_EQ(debug_cmd({"--transcript", t, hello}), 2);
    remove(script.c_str());
}

TEST(DebuggerSession, ScreenshotCommandInAScriptUsesTheRenderer)
{
    std::string png = tmp_path("s2.png");
    std::string text = "step\nscreenshot " + png + "\n";
    std::string script = write_file("s2.txt", text.c_str());
    ASSERT_EQ(debug_cmd({"--script", script, "--size", "800x500", hello}), 0);
    int w, h;
    take_png(png, &w, &h);
    EXPECT_EQ(w, 800);
    EXPECT_EQ(h, 500);
    remove(script.c_str());
}

TEST(DebuggerSession, ExitStatuses)
{
    std::string ok = write_file("ok.txt", "step\n");
    std::string bad = write_file("bad.txt", "step\nfrobnicate\nstep\n");
    EXPECT_EQ(debug_cmd({"--script", bad, hello}), 1);              // a bad script command
    EXPECT_EQ(debug_cmd({"--script", ok, "/nonexistent/prog"}), 1);  // cannot start
    EXPECT_EQ(debug_cmd({"--script", "/nonexistent/script", hello}), 1);
    EXPECT_EQ(debug_cmd({"--script", ok, "--screenshot", "/nonexistent/dir/x.png", hello}), 1);
    EXPECT_EQ(debug_cmd({"--bogus", hello}), 2);
    EXPECT_EQ(debug_cmd({"--convention", "v5", hello}), 2);
    EXPECT_EQ(debug_cmd({"--convention", "v4.16", "--patches", "dfe64506", hello}), 2);
    EXPECT_EQ(debug_cmd({"--size", "10x10", hello}), 2);
    EXPECT_EQ(debug_cmd({"--script", ok}), 2); // no program
    EXPECT_EQ(debug_cmd({"--break", "no_such_symbol_xyz", "--script", ok, hello}), 2);
    remove(ok.c_str());
    remove(bad.c_str());
}

TEST(DebuggerSession, NoDisplayWithoutScriptIsExit2)
{
    // X11 without $DISPLAY (and no Wayland): SDL cannot open a display.
    std::string disp = getenv("DISPLAY") ? getenv("DISPLAY") : "";
    std::string wl = getenv("WAYLAND_DISPLAY") ? getenv("WAYLAND_DISPLAY") : "";
    unsetenv("DISPLAY");
    unsetenv("WAYLAND_DISPLAY");
    setenv("SDL_VIDEODRIVER", "x11", 1);
    EXPECT_EQ(debug_cmd({hello}), 2);
    // an invisible driver is no display either
    setenv("SDL_VIDEODRIVER", "offscreen", 1);
    EXPECT_EQ(debug_cmd({hello}), 2);
    unsetenv("SDL_VIDEODRIVER");
    if (!disp.empty())
        setenv("DISPLAY", disp.c_str(), 1);
    if (!wl.empty())
        setenv("WAYLAND_DISPLAY", wl.c_str(), 1);
}

// Stepping through entry_SYSCALL_64 to do_syscall_64 under both
// conventions: the pt_regs rows differ where (and because) one of them
// cleared the saved register, and look the same where neither the value
// nor the mark differ.
TEST(DebuggerSession, PtRegsRowsDifferAtClearedSlotsBetweenConventions)
{
    const int W = 1440, H = 860;
    Session a(ES_CONV_V416, W, H), b(ES_CONV_V417, W, H);
    ASSERT_TRUE(a.app_ok && b.app_ok);
    for (Session *s : {&a, &b}) {
        s->exec("syscall");
        s->exec("until do_syscall_64");
    }
    es_dbg_slot sa[ES_DBG_PTREGS_SLOTS], sb[ES_DBG_PTREGS_SLOTS];
    uint64_t base;
    ASSERT_EQ(es_dbg_ptregs(a.d, &base, sa), 0);
    ASSERT_EQ(es_dbg_ptregs(b.d, &base, sb), 0);
    std::vector<uint32_t> pa = a.shot("a.png"), pb = b.shot("b.png");
    ASSERT_EQ(pa.size(), (size_t)W * H);
    ASSERT_EQ(pb.size(), (size_t)W * H);
    es_ui_layout lo;
    es_ui_layout_compute(&lo, &a.app.view, W, H, a.app.font);
    int differing_marks = 0;
    for (int i = 0; i < ES_DBG_PTREGS_SLOTS; i++) {
        es_ui_rect row = es_ui_panel_row(&lo, ES_UI_P_PTREGS, i);
        EXPECT_EQ(count(pa, W, row, ES_UI_CLEARED_BG) > 0, sa[i].cleared) << sa[i].field;
        EXPECT_EQ(count(pb, W, row, ES_UI_CLEARED_BG) > 0, sb[i].cleared) << sb[i].field;
        if (sa[i].cleared != sb[i].cleared) {
            differing_marks++;
            EXPECT_FALSE(rows_equal(pa, pb, W, row)) << sa[i].field;
        }
        bool same = sa[i].cleared == sb[i].cleared && sa[i].written == sb[i].written &&
                    sa[i].value == sb[i].value && sa[i].taint == sb[i].taint &&
                    sa[i].order == sb[i].order && !strcmp(sa[i].labels, sb[i].labels);
        if (same) {
            EXPECT_TRUE(rows_equal(pa, pb, W, row)) << sa[i].field;
        }
    }
    // 6dc936f175cc clears dx and cx (the series' last patch): at least one
    // slot must be marked under one convention and not the other.
    EXPECT_GT(differing_marks, 0);
}

TEST(DebuggerSession, ChangedRegistersAreHighlightedWhereTheyAre)
{
    const int W = 1440, H = 860;
    Session s(ES_CONV_V417, W, H);
    ASSERT_TRUE(s.app_ok);
    s.exec("syscall");
    s.exec("step 3"); // into the kernel: swapgs, stack switch...
    std::vector<uint32_t> px = s.shot("c.png");
    ASSERT_EQ(px.size(), (size_t)W * H);
    static es_ui_view v;
    es_ui_view_fill(&v, s.d);
    es_ui_layout lo;
    es_ui_layout_compute(&lo, &v, W, H, s.app.font);
    int changed = 0;
    for (size_t i = 0; i < v.nregs; i++) {
        int n = count(px, W, es_ui_reg_rect(&lo, &v, i), ES_UI_CHANGED_BG);
        if (v.regs[i].changed) {
            EXPECT_GT(n, 0) << v.regs[i].name;
        } else {
            EXPECT_EQ(n, 0) << v.regs[i].name;
        }
        changed += v.regs[i].changed;
    }
    EXPECT_GT(changed, 0); // rip at least
}

// The vector register panel on a real session: key V shows it (the same
// `vregs` command a script gives), the register a VEX instruction changed
// is highlighted there and only it, and V hides it again.
TEST(DebuggerSession, VectorPanelFollowsTheKeyAndMarksChanges)
{
    const int W = 1440, H = 860;
    if (access(ES_YMM_GUEST, R_OK))
        GTEST_SKIP() << ES_YMM_GUEST << " not built";
    Session s(ES_CONV_V417, W, H, ES_YMM_GUEST);
    ASSERT_TRUE(s.app_ok);
    es_ui_app *a = &s.app;
    EXPECT_TRUE(es_ui_app_text(a, "V"));
    EXPECT_EQ(es_dbg_vregs_view(s.d), ES_DBG_VF_HEX);
    EXPECT_STREQ(a->view.message, "vector registers shown as hex");
    EXPECT_TRUE(es_ui_app_text(a, "s")); // vpcmpeqd ymm0, ymm0, ymm0
    std::vector<uint32_t> px = s.shot("v.png");
    ASSERT_EQ(px.size(), (size_t)W * H);
    ASSERT_TRUE(a->view.show_vregs);
    ASSERT_EQ(a->view.nvregs, 16u);
    es_ui_layout lo;
    es_ui_layout_compute(&lo, &a->view, W, H, a->font);
    ASSERT_FALSE(lo.hidden[ES_UI_P_VREGS]);
    for (size_t i = 0; i < a->view.nvregs; i++) {
        int n = count(px, W, es_ui_vreg_rect(&lo, &a->view, i), ES_UI_CHANGED_BG);
        if (i == 0) {
            EXPECT_TRUE(a->view.vregs[0].changed);
            EXPECT_GT(n, 20);
        } else {
            EXPECT_EQ(n, 0) << a->view.vregs[i].name;
        }
    }
    EXPECT_TRUE(es_ui_app_text(a, "V"));
    EXPECT_EQ(es_dbg_vregs_view(s.d), ES_DBG_VF_OFF);
    s.shot("v2.png");
    EXPECT_FALSE(a->view.show_vregs);
    es_ui_layout_compute(&lo, &a->view, W, H, a->font);
    EXPECT_TRUE(lo.hidden[ES_UI_P_VREGS]);
}

TEST(DebuggerSession, WindowFollowsASizeChange)
{
    Session s(ES_CONV_V417, 1440, 860);
    ASSERT_TRUE(s.app_ok);
    s.exec("step");
    std::vector<uint32_t> big = s.shot("big.png");
    s.app.w = 900, s.app.h = 600;
    std::vector<uint32_t> small = s.shot("small.png");
    EXPECT_EQ(big.size(), (size_t)1440 * 860);
    EXPECT_EQ(small.size(), (size_t)900 * 600);
}

uint64_t rip_of(es_dbg *d)
{
    es_dbg_reg regs[ES_DBG_MAX_REGS];
    size_t n = es_dbg_regs(d, regs, ES_DBG_MAX_REGS);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(regs[i].name, "rip"))
            return regs[i].value;
    return 0;
}

// The key map, pressed the way the window feeds it (text input for
// characters, key codes for function keys), without a display.
TEST(DebuggerSession, KeysDriveTheSession)
{
    Session s(ES_CONV_V417, 1000, 700);
    ASSERT_TRUE(s.app_ok);
    es_ui_app *a = &s.app;
    es_dbg_status st;
    es_dbg_get_status(s.d, &st);
    uint64_t i0 = st.icount;
    EXPECT_TRUE(es_ui_app_text(a, "s"));
    es_dbg_get_status(s.d, &st);
    EXPECT_EQ(st.icount, i0 + 1);
    EXPECT_TRUE(es_ui_app_key(a, SDLK_F11, false)); // step into, too
    es_dbg_get_status(s.d, &st);
    EXPECT_EQ(st.icount, i0 + 2);
    EXPECT_TRUE(es_ui_app_text(a, "r")); // reverse step
    es_dbg_get_status(s.d, &st);
    EXPECT_EQ(st.icount, i0 + 1);

    EXPECT_TRUE(es_ui_app_text(a, "y")); // to the next syscall instruction
    es_dbg_get_status(s.d, &st);
    EXPECT_EQ(st.last_stop, ES_DBG_REACHED);
    EXPECT_EQ(st.cpl, 3);
    EXPECT_TRUE(es_ui_app_text(a, "k")); // kernel entry
    es_dbg_get_status(s.d, &st);
    EXPECT_EQ(st.cpl, 0);
    uint64_t off = 1;
    const char *sym = es_dbg_symbolize(s.d, rip_of(s.d), &off);
    ASSERT_NE(sym, nullptr);
    EXPECT_STREQ(sym, "entry_SYSCALL_64");

    uint64_t rip = rip_of(s.d);
    EXPECT_TRUE(es_ui_app_text(a, "b"));
    EXPECT_TRUE(es_dbg_break_at(s.d, rip));
    EXPECT_TRUE(es_ui_app_key(a, SDLK_F9, false)); // toggles it off again
    EXPECT_FALSE(es_dbg_break_at(s.d, rip));

    // a click on another disassembly line toggles a breakpoint there
    s.shot("click.png"); // draws the view the click refers to
    es_ui_layout lo;
    es_ui_layout_compute(&lo, &a->view, a->w, a->h, a->font);
    es_ui_rect body = es_ui_panel_body(&lo, ES_UI_P_DISASM);
    int x = body.x + 50, y = -1, line = -1;
    for (int yy = body.y; yy < body.y + body.h && y < 0; yy += lo.ch) {
        int i = es_ui_disasm_hit(&lo, &a->view, x, yy + 1);
        if (i >= 0 && !a->view.lines[i].current && a->view.lines[i].len)
            y = yy + 1, line = i;
    }
    ASSERT_GE(line, 0);
    uint64_t addr = a->view.lines[line].addr;
    es_ui_app_click(a, x, y);
    EXPECT_TRUE(es_dbg_break_at(s.d, addr));
    es_ui_app_click(a, x, y);
    EXPECT_FALSE(es_dbg_break_at(s.d, addr));

    int syn = es_dbg_syntax(s.d);
    EXPECT_TRUE(es_ui_app_text(a, "t"));
    EXPECT_NE(es_dbg_syntax(s.d), syn);

    // ':' opens the command line; typed text goes there, not to the keys
    EXPECT_TRUE(es_ui_app_text(a, ":"));
    EXPECT_TRUE(a->prompting);
    EXPECT_TRUE(es_ui_app_text(a, "break do_syscall_64x"));
    EXPECT_TRUE(es_ui_app_key(a, SDLK_BACKSPACE, false));
    EXPECT_TRUE(es_ui_app_key(a, SDLK_RETURN, false));
    EXPECT_FALSE(a->prompting);
    EXPECT_EQ(es_dbg_break_count(s.d), 1u);
    EXPECT_TRUE(es_ui_app_text(a, "c"));
    es_dbg_get_status(s.d, &st);
    EXPECT_EQ(st.last_stop, ES_DBG_BREAKPOINT);
    sym = es_dbg_symbolize(s.d, rip_of(s.d), &off);
    ASSERT_NE(sym, nullptr);
    EXPECT_STREQ(sym, "do_syscall_64");
    EXPECT_EQ(off, 0u);
    EXPECT_TRUE(es_ui_app_text(a, "R")); // reverse continue: back to the oldest state
    es_dbg_get_status(s.d, &st);
    EXPECT_LT(st.icount, i0 + 10);

    // a bad typed command: an error on the message line, no crash
    EXPECT_TRUE(es_ui_app_text(a, ":"));
    EXPECT_TRUE(es_ui_app_text(a, "frobnicate"));
    EXPECT_TRUE(es_ui_app_key(a, SDLK_RETURN, false));
    EXPECT_TRUE(a->view.message_error);

    // restart under the other convention, breakpoints kept
    EXPECT_TRUE(es_ui_app_text(a, "v"));
    es_dbg_get_status(s.d, &st);
    EXPECT_EQ(st.patches, ES_CONV_V416);
    EXPECT_EQ(es_dbg_break_count(s.d), 1u);

    EXPECT_TRUE(es_ui_app_key(a, SDLK_F1, false));
    EXPECT_TRUE(a->view.show_help);
    EXPECT_TRUE(es_ui_app_key(a, SDLK_ESCAPE, false)); // closes the help only
    EXPECT_FALSE(a->view.show_help);
    EXPECT_FALSE(es_ui_app_text(a, "q"));
    EXPECT_FALSE(es_ui_app_key(a, SDLK_ESCAPE, false));
}

} // namespace
