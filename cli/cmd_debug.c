/* debugger.c - `entrysim debug`: the command line of the step-through
 * debugger (issue 5).  Parses the options, starts a dbg.h session and
 * either opens the SDL window (ui_window.c) or, with --script / --screenshot,
 * runs headless: the script's commands, then a PNG of the window as it
 * would look, drawn into memory (no display or video driver needed, so it
 * works in CI). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_debug.h"
#include "kernel.h"
#include "mitigations.h"
#include "timing.h"
#include "ui_app.h"

enum { EX_OK = 0, EX_ERROR = 1, EX_USAGE = 2 };

#define MAX_BREAKS 64
#define DEFAULT_W 1440
#define DEFAULT_H 860
#define DEFAULT_FONT 13

static const char usage_text[] =
    "usage: entrysim debug [OPTIONS] PROGRAM [ARGS...]\n"
    "  --convention v4.16|v4.17   the guest kernel's syscall convention (default v4.17)\n"
    "  --patches LIST             v4.16 + these commits of the series instead\n"
    "  --mitigations LIST         guest-kernel mitigations (as for run)\n"
    "  --cpu intel|amd            CPU vendor the guest sees (default amd)\n"
    "  --timing                   attach the cycle model: cycles per instruction\n"
    "  --uarch NAME               its microarchitecture (znver4, skylake; implies --timing)\n"
    "  --break SYM|ADDR           a breakpoint before starting (repeatable)\n"
    "  --syntax intel|att         disassembly syntax (default intel)\n"
    "  --script FILE              run FILE's commands without a window ('help' lists them)\n"
    "  --screenshot PNG           after the script (or at the start), save the window as PNG\n"
    "  --size WxH                 window / screenshot size in pixels (default 1440x860)\n"
    "  --font-size N              font size in points (default 13)\n"
    "Exit status: 0 done, 1 the program could not start or a script command failed,\n"
    "2 bad usage or no display without --script.\n";

static int usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "entrysim: debug: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'entrysim debug --help'.\n");
    return EX_USAGE;
}

typedef struct dopts {
    es_kernel_opts k; /* --convention --patches --mitigations --cpu --uarch */
    const char *script, *screenshot;
    int syntax, w, h, font_px;
    bool timing;
    const char *breaks[MAX_BREAKS];
    int nbreaks;
} dopts;

static bool parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v < lo || v > hi)
        return false;
    *out = (int)v;
    return true;
}

/* Options up to PROGRAM; returns the index of PROGRAM, or -(exit status). */
static int parse(int argc, char **argv, dopts *o)
{
    char err[256];
    int i = 0;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) {
            i++;
            break;
        }
        if (a[0] != '-' || !a[1])
            break;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(usage_text, stdout);
            return -EX_OK - 1000;
        }
        if (!strcmp(a, "--timing")) {
            o->timing = true;
            continue;
        }
        /* --opt=value or --opt value */
        char name[32];
        const char *val, *eq = strchr(a, '=');
        if (eq) {
            snprintf(name, sizeof name, "%.*s", (int)(eq - a), a);
            val = eq + 1;
        } else {
            snprintf(name, sizeof name, "%s", a);
            if (i + 1 >= argc)
                return -usage("%s needs a value", a);
            val = argv[++i];
        }
        int kopt = es_kernel_opt(&o->k, name, val, err, sizeof err);
        if (kopt < 0)
            return -usage("%s", err);
        if (kopt > 0) {
            if (!strcmp(name, "--uarch"))
                o->timing = true; /* a model named is a model wanted */
        } else if (!strcmp(name, "--break")) {
            if (o->nbreaks == MAX_BREAKS)
                return -usage("%s", "too many --break options");
            o->breaks[o->nbreaks++] = val;
        } else if (!strcmp(name, "--syntax")) {
            if (!strcmp(val, "intel"))
                o->syntax = ES_SYNTAX_INTEL;
            else if (!strcmp(val, "att"))
                o->syntax = ES_SYNTAX_ATT;
            else
                return -usage("--syntax must be intel or att, not '%s'", val);
        } else if (!strcmp(name, "--script")) {
            o->script = val;
        } else if (!strcmp(name, "--screenshot")) {
            o->screenshot = val;
        } else if (!strcmp(name, "--size")) {
            int w = 0, h = 0;
            char ws[16] = "", hs[16] = "";
            if (sscanf(val, "%15[0-9]x%15[0-9]", ws, hs) != 2 || !parse_int(ws, 320, 8192, &w) ||
                !parse_int(hs, 200, 8192, &h))
                return -usage("--size must be WxH (320x200 to 8192x8192), not '%s'", val);
            o->w = w, o->h = h;
        } else if (!strcmp(name, "--font-size")) {
            if (!parse_int(val, 8, 48, &o->font_px))
                return -usage("--font-size must be 8..48, not '%s'", val);
        } else {
            return -usage("unknown option '%s'", a);
        }
    }
    if (es_kernel_opts_check(&o->k, err, sizeof err))
        return -usage("%s", err);
    if (i >= argc)
        return -usage("%s", "no PROGRAM given");
    return i;
}

int es_debug_cmd(int argc, char **argv)
{
    dopts o = {.k = es_kernel_opts_default(),
               .syntax = ES_SYNTAX_INTEL, .w = DEFAULT_W, .h = DEFAULT_H,
               .font_px = DEFAULT_FONT};
    int pi = parse(argc, argv, &o);
    if (pi == -EX_OK - 1000)
        return EX_OK;
    if (pi < 0)
        return -pi;

    es_dbg_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    /* The guest gets an empty environment and the deterministic clock, so
     * a script and its screenshot come out the same on every machine. */
    cfg.launch = (es_launch_cfg){
        .program = argv[pi], .argc = argc - pi, .argv = argv + pi, .envp = NULL,
        .root = ".", .deterministic = true, .vendor = o.k.vendor, .patches = o.k.patches,
        .mitigations = o.k.mitigations, .stdin_fd = 0, .stdout_fd = 1, .stderr_fd = 2,
    };
    cfg.uarch = o.timing ? o.k.uarch : NULL;
    char err[400];
    es_dbg *d = es_dbg_new(&cfg, err, sizeof err);
    if (!d) {
        fprintf(stderr, "entrysim: debug: %s\n", err);
        return EX_ERROR;
    }
    es_dbg_set_syntax(d, o.syntax);
    for (int i = 0; i < o.nbreaks; i++)
        if (es_dbg_break_add(d, o.breaks[i], err, sizeof err) < 0) {
            fprintf(stderr, "entrysim: debug: --break %s: %s\n", o.breaks[i], err);
            es_dbg_free(d);
            return EX_USAGE;
        }
    es_ui_app app;
    if (es_ui_app_init(&app, d, o.font_px, o.w, o.h, err, sizeof err)) {
        fprintf(stderr, "entrysim: debug: %s\n", err);
        es_dbg_free(d);
        return EX_ERROR;
    }
    int status = EX_OK;
    if (o.script || o.screenshot) {
        if (o.script && es_dbg_exec_file(d, o.script, stdout) == ES_DBG_CMD_ERROR)
            status = EX_ERROR;
        fflush(stdout);
        /* the bottom line of a handout: where and why the script stopped */
        es_dbg_status st;
        es_dbg_get_status(d, &st);
        uint64_t rip = 0, off = 0;
        es_dbg_resolve(d, "rip", &rip, err, sizeof err);
        const char *sym = es_dbg_symbolize(d, rip, &off);
        char where[160] = "";
        if (sym && off)
            snprintf(where, sizeof where, " <%s+0x%llx>", sym, (unsigned long long)off);
        else if (sym)
            snprintf(where, sizeof where, " <%s>", sym);
        snprintf(app.view.message, sizeof app.view.message, "[%s] insn %llu  0x%llx%s",
                 es_dbg_stop_name(st.last_stop), (unsigned long long)st.icount,
                 (unsigned long long)rip, where);
        if (status == EX_OK && o.screenshot &&
            es_ui_app_screenshot(&app, d, o.screenshot, err, sizeof err)) {
            fprintf(stderr, "entrysim: debug: --screenshot: %s\n", err);
            status = EX_ERROR;
        }
    } else {
        char title[300];
        snprintf(title, sizeof title, "entrysim debug - %s", argv[pi]);
        status = es_ui_app_window(&app, title);
    }
    es_ui_app_free(&app);
    es_dbg_free(d);
    return status;
}
