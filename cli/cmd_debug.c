/* cmd_debug.c - `entrysim debug`: the command line of the step-through
 * debugger (issue 5).  Parses the options, starts a dbg.h session and
 * either opens the SDL window (ui_window.c) or, with --script / --screenshot,
 * runs headless: the script's commands, then a PNG of the window as it
 * would look, drawn into memory (no display or video driver needed, so it
 * works in CI). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_debug.h"
#include "help.h"
#include "kernel.h"
#include "kernel_opts.h"
#include "mitigations.h"
#include "opts.h"
#include "dbg.h"
#ifdef ES_HAVE_UI
#include "ui_app.h"
#endif

enum { EX_OK = ES_EX_OK, EX_ERROR = ES_EX_ERROR, EX_USAGE = ES_EX_USAGE };

#define MAX_BREAKS 64
#define DEFAULT_W 1440
#define DEFAULT_H 860
#define DEFAULT_FONT 13

typedef struct dopts {
    es_kernel_opts k; /* --convention --patches --mitigations --cpu --uarch */
    const char *script, *screenshot, *transcript;
    int syntax, w, h, font_px;
    bool timing, speculate;
    const char *breaks[MAX_BREAKS];
    int nbreaks;
} dopts;

enum { D_KERNEL, D_HELP, D_TIMING, D_SPEC, D_BREAK, D_SYNTAX, D_SCRIPT, D_SHOT, D_SIZE, D_FONT, D_TRANS };

static const es_opt debug_opts[] = {
    ES_KERNEL_OPT_ROWS(D_KERNEL),
    ES_KOPT_KERNEL(D_KERNEL),
    {"--timing", NULL, D_TIMING,
     "attach the cycle model: cycles per instruction (--uarch implies it)"},
    {"--speculate", NULL, D_SPEC,
     "the cycle model runs each mispredicted branch's wrong path and squashes it ('print "
     "wrongpath' shows the last one; implies --timing)"},
    {"--break", "SYM|ADDR", D_BREAK, "a breakpoint before starting (repeatable)"},
    {"--syntax", "{syntax}", D_SYNTAX, "the disassembly's syntax (default intel)"},
    {"--script", "FILE", D_SCRIPT, "run FILE's commands without a window ('help' lists them)"},
    {"--screenshot", "PNG", D_SHOT, "after the script (or at the start), save the window as PNG"},
    {"--size", "WxH", D_SIZE, "window / screenshot size in pixels (default 1440x860)"},
    {"--transcript", "FILE", D_TRANS,
     "with --script: the state after each command, a JSON line each"},
    {"--font-size", "N", D_FONT, "font size in points (default 13)"},
    ES_OPT_HELP_ROWS(D_HELP),
};

const es_cmd es_cmd_debug = {
    .name = "debug",
    .synopsis = "debug [OPTIONS] PROGRAM [ARGS...]",
    .about = "The step-through debugger (docs/DEBUGGER.md): a window, or headless with\n"
             "--script / --screenshot.  Options come before PROGRAM.\n",
    .opts = debug_opts,
    .nopts = sizeof debug_opts / sizeof debug_opts[0],
    .footer = "Exit status: 0 done, 1 the program could not start or a script command failed,\n"
              "2 bad usage or no display without --script.\n",
    .run = es_debug_cmd,
};

/* One option: 0, or the exit status of a usage error. */
static int debug_option(es_opts *p, int id, dopts *o)
{
    char err[256], ws[16] = "", hs[16] = "";
    const char *val = p->val;
    switch (id) {
    case D_KERNEL:
        if (es_kernel_opt(&o->k, p->name, val, err, sizeof err) < 0)
            return es_opts_fail(p, "%s", err);
        if (!strcmp(p->name, "--uarch"))
            o->timing = true; /* a model named is a model wanted */
        return 0;
    case D_TIMING:
        o->timing = true;
        return 0;
    case D_SPEC:
        o->timing = o->speculate = true;
        return 0;
    case D_BREAK:
        if (o->nbreaks == MAX_BREAKS)
            return es_opts_fail(p, "%s", "too many --break options");
        o->breaks[o->nbreaks++] = val;
        return 0;
    case D_SYNTAX:
        if ((o->syntax = es_syntax_pick(val)) < 0)
            return es_opts_fail(p, "--syntax must be %s, not '%s'",
                                es_syntaxes_list(", ", " or ", err, sizeof err), val);
        return 0;
    case D_SCRIPT:
        o->script = val;
        return 0;
    case D_SHOT:
        o->screenshot = val;
        return 0;
    case D_TRANS:
        o->transcript = val;
        return 0;
    case D_SIZE:
        if (sscanf(val, "%15[0-9]x%15[0-9]", ws, hs) != 2 || !es_opt_int(ws, 320, 8192, &o->w) ||
            !es_opt_int(hs, 200, 8192, &o->h))
            return es_opts_fail(p, "--size must be WxH (320x200 to 8192x8192), not '%s'", val);
        return 0;
    case D_FONT:
        if (!es_opt_int(val, 8, 48, &o->font_px))
            return es_opts_fail(p, "--font-size must be 8..48, not '%s'", val);
        return 0;
    case ES_OPT_NOVALUE:
        return es_opts_fail(p, "%s needs a value", p->arg);
    }
    return es_opts_fail(p, "unknown option '%s'", p->arg);
}

/* Options up to PROGRAM; returns the index of PROGRAM, or -(exit status)
 * (-EX_OK - 1000 after --help). */
static int parse(int argc, char **argv, dopts *o)
{
    es_opts p = es_opts_for(&es_cmd_debug, argc, argv);
    p.prefix = "entrysim: debug: ";
    char err[256];
    for (int id, rc; (id = es_opts_next(&p)) != ES_OPT_DONE;) {
        if (id == D_HELP) {
            es_cmd_help(stdout, &es_cmd_debug);
            return -EX_OK - 1000;
        }
        if ((rc = debug_option(&p, id, o)))
            return -rc;
    }
    if (es_kernel_opts_check(&o->k, err, sizeof err))
        return -es_opts_fail(&p, "%s", err);
    if (p.i >= argc)
        return -es_opts_fail(&p, "%s", "no PROGRAM given");
    if (o->transcript && !o->script)
        return -es_opts_fail(&p, "%s", "--transcript needs --script");
    es_kernel_opts_note(&o->k, stderr);
    return p.i;
}

/* Runs --script (if any); returns EX_OK or EX_ERROR, with the bottom line
 * of a handout -- where and why the script stopped -- in msg. */
static int run_script(es_dbg *d, const char *script, char *msg, size_t msglen)
{
    int status = EX_OK;
    char err[400];
    if (script && es_dbg_exec_file(d, script, stdout) == ES_DBG_CMD_ERROR)
        status = EX_ERROR;
    fflush(stdout);
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
    snprintf(msg, msglen, "[%s] insn %llu  0x%llx%s", es_dbg_stop_name(st.last_stop),
             (unsigned long long)st.icount, (unsigned long long)rip, where);
    return status;
}

#ifdef ES_HAVE_UI
/* The SDL2 window, or headless: the script, then a PNG of the window. */
static int run_front_end(es_dbg *d, const dopts *o, const char *prog)
{
    char err[400];
    es_ui_app app;
    if (es_ui_app_init(&app, d, o->font_px, o->w, o->h, err, sizeof err)) {
        fprintf(stderr, "entrysim: debug: %s\n", err);
        return EX_ERROR;
    }
    int status = EX_OK;
    if (o->script || o->screenshot) {
        status = run_script(d, o->script, app.view.message, sizeof app.view.message);
        if (status == EX_OK && o->screenshot &&
            es_ui_app_screenshot(&app, d, o->screenshot, err, sizeof err)) {
            fprintf(stderr, "entrysim: debug: --screenshot: %s\n", err);
            status = EX_ERROR;
        }
    } else {
        char title[300];
        snprintf(title, sizeof title, "entrysim debug - %s", prog);
        status = es_ui_app_window(&app, title);
    }
    es_ui_app_free(&app);
    return status;
}
#else
/* Built without SDL2 (ENTRYSIM_UI=OFF): the session core still runs
 * scripts; there is no window to open or draw. */
static int run_front_end(es_dbg *d, const dopts *o, const char *prog)
{
    (void)prog;
    if (!o->script || o->screenshot) {
        fprintf(stderr, "entrysim: debug: this entrysim was built without the SDL2 window "
                        "(cmake -DENTRYSIM_UI=ON); only --script runs\n");
        return EX_USAGE;
    }
    char msg[256];
    return run_script(d, o->script, msg, sizeof msg);
}
#endif

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
        .kernel_dir = o.k.kernel_dir,
        .mitigations = o.k.mitigations, .stdin_fd = 0, .stdout_fd = 1, .stderr_fd = 2,
    };
    cfg.uarch = o.timing ? o.k.uarch : NULL;
    cfg.speculate = o.speculate;
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
    FILE *tr = NULL;
    if (o.transcript && !(tr = fopen(o.transcript, "w"))) {
        fprintf(stderr, "entrysim: debug: --transcript %s: %s\n", o.transcript, strerror(errno));
        es_dbg_free(d);
        return EX_USAGE;
    }
    es_dbg_set_transcript(d, tr);
    int status = run_front_end(d, &o, argv[pi]);
    es_dbg_free(d);
    if (tr && fclose(tr)) {
        fprintf(stderr, "entrysim: debug: --transcript %s: %s\n", o.transcript, strerror(errno));
        status = EX_ERROR;
    }
    return status;
}
