/* cmd_lab.c - `entrysim lab list|start|grade`: the classroom labs.
 *
 * A lab is a folder NN-name of the labs directory (labs/ in the source
 * tree): lab.conf (title, minutes, kernel), README.md (the handout),
 * starter/ (what a student starts from), grade.py (the grader, on
 * labs/lib/grading.py) and solution/ (the reference solution, which the
 * installed package leaves out).  The list of labs is that directory: help
 * and errors print from it.
 *
 * The labs directory is found relative to the entrysim binary, as the kernel
 * SDK is: BINDIR/share/entrysim/labs in the build tree, BINDIR/../share/
 * entrysim/labs when installed; ENTRYSIM_LABS overrides both. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd_kernel.h"
#include "cmd_lab.h"
#include "copytree.h"
#include "help.h"
#include "opts.h"

enum { L_HELP, L_JSON, L_ONLY };

static const es_opt lab_opts[] = {
    {"--json", NULL, L_JSON, "grade: one JSON object (score, max, each check) for an LMS upload"},
    {"--only", "TEXT", L_ONLY, "grade: only the checks whose name contains TEXT"},
    {"--help", NULL, L_HELP, "this help"},
    {"-h", NULL, L_HELP, NULL},
};

static const char *const lab_words[] = {"list", "start", "grade", NULL};

const es_cmd es_cmd_lab = {
    .name = "lab",
    .synopsis = "lab list|start LAB DIR|grade [DIR]   (classroom labs)",
    .about =
        "  lab list            the labs, one line each, with the minutes they take\n"
        "  lab start LAB DIR   copy LAB's starter files into the new directory DIR\n"
        "                      (and a kernel tree of your own, DIR/kernel, where the\n"
        "                      lab needs one); LAB is its name or a unique prefix (03)\n"
        "  lab grade [DIR]     grade the lab started in DIR (default .): each check\n"
        "                      with its points, then the total\n"
        "\n"
        "Each lab's handout is DIR/README.md.  Grading runs the lab's grader with\n"
        "python3 and this entrysim; checks read entrysim's JSON and your files.\n"
        "Environment: ENTRYSIM_LABS (the labs directory; default: share/entrysim/labs\n"
        "next to this entrysim or in its parent).\n",
    .opts = lab_opts,
    .nopts = sizeof lab_opts / sizeof lab_opts[0],
    .footer = "Exit status: list, start: 0 done, 2 bad usage (an unknown lab: the message\n"
              "lists them), 1 a host failure; grade: 0 full marks, 1 fewer (or the grader\n"
              "could not run), 2 bad usage or DIR holds no started lab.\n",
    .run = es_lab_cmd,
    .words = lab_words,
};

/* A lab folder's name: two digits, a dash, then a name. */
static int is_lab(const struct dirent *e)
{
    const char *s = e->d_name;
    return s[0] >= '0' && s[0] <= '9' && s[1] >= '0' && s[1] <= '9' && s[2] == '-' && s[3];
}

/* lab.conf's value for key into out ("" when absent). */
static void conf_get(const char *labs, const char *lab, const char *key, char *out, size_t n)
{
    char path[PATH_MAX + 300], line[512];
    out[0] = 0;
    snprintf(path, sizeof path, "%s/%s/lab.conf", labs, lab);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    size_t kl = strlen(key);
    while (fgets(line, sizeof line, f)) {
        char *p = line + strspn(line, " \t");
        if (strncmp(p, key, kl) || !strchr(" \t=", p[kl]))
            continue;
        p += kl + strspn(p + kl, " \t");
        if (*p != '=')
            continue;
        p += 1 + strspn(p + 1, " \t");
        p[strcspn(p, "\r\n")] = 0;
        snprintf(out, n, "%s", p);
        break;
    }
    fclose(f);
}

static int lab_list(const char *labs)
{
    struct dirent **v;
    int n = scandir(labs, &v, is_lab, alphasort);
    if (n < 0)
        return fprintf(stderr, "entrysim: lab: %s: %s\n", labs, strerror(errno)), ES_EX_ERROR;
    for (int i = 0; i < n; i++) {
        char title[256], minutes[32], kernel[16];
        conf_get(labs, v[i]->d_name, "title", title, sizeof title);
        conf_get(labs, v[i]->d_name, "minutes", minutes, sizeof minutes);
        conf_get(labs, v[i]->d_name, "kernel", kernel, sizeof kernel);
        printf("%-26s %4s min  %s%s\n", v[i]->d_name, minutes[0] ? minutes : "?", title,
               !strcmp(kernel, "yes") ? " (a kernel tree of your own)" : "");
        free(v[i]);
    }
    free(v);
    return ES_EX_OK;
}

/* The lab named `want` (its name or a unique prefix) into out: 0, or
 * ES_EX_USAGE with the labs listed. */
static int lab_pick(const char *labs, const char *want, char *out, size_t n)
{
    struct dirent **v;
    int nv = scandir(labs, &v, is_lab, alphasort);
    if (nv < 0)
        return fprintf(stderr, "entrysim: lab: %s: %s\n", labs, strerror(errno)), ES_EX_ERROR;
    int hits = 0;
    for (int i = 0; i < nv; i++)
        if (!strcmp(v[i]->d_name, want) || !strncmp(v[i]->d_name, want, strlen(want))) {
            if (!strcmp(v[i]->d_name, want))
                hits = 0; /* an exact name wins over longer names it prefixes */
            hits++;
            snprintf(out, n, "%s", v[i]->d_name);
            if (!strcmp(v[i]->d_name, want))
                break;
        }
    if (hits != 1) {
        fprintf(stderr, "entrysim: lab: %s lab '%s'; the labs:\n", hits ? "more than one" : "no",
                want);
        for (int i = 0; i < nv; i++)
            fprintf(stderr, "  %s\n", v[i]->d_name);
    }
    for (int i = 0; i < nv; i++)
        free(v[i]);
    free(v);
    return hits == 1 ? 0 : ES_EX_USAGE;
}

static int lab_start(const char *labs, const char *want, const char *dir)
{
    char lab[256], kernel[16], src[PATH_MAX + 300], sub[PATH_MAX + 16];
    int rc = lab_pick(labs, want, lab, sizeof lab);
    if (rc)
        return rc;
    int used = es_dir_used(dir);
    if (used)
        return fprintf(stderr, "entrysim: lab start: %s %s; give a new or empty directory\n", dir,
                       used > 0 ? "is not empty" : "is not a directory"), ES_EX_USAGE;
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return fprintf(stderr, "entrysim: lab start: %s: %s\n", dir, strerror(errno)),
               ES_EX_ERROR;
    conf_get(labs, lab, "kernel", kernel, sizeof kernel);
    if (!strcmp(kernel, "yes")) {
        snprintf(sub, sizeof sub, "%s/kernel", dir);
        char *kargv[] = {"init", sub, NULL};
        if ((rc = es_kernel_cmd(2, kargv)) != ES_EX_OK)
            return rc;
    }
    snprintf(src, sizeof src, "%s/%s/starter", labs, lab);
    if (access(src, R_OK) == 0 && es_copy_tree(src, dir, "lab start", true))
        return ES_EX_ERROR;
    /* the handout goes with the starter files */
    snprintf(src, sizeof src, "%s/%s/README.md", labs, lab);
    snprintf(sub, sizeof sub, "%s/README.md", dir);
    if (access(src, R_OK) == 0 && es_copy_file(src, sub, 0644, "lab start", true))
        return ES_EX_ERROR;
    snprintf(sub, sizeof sub, "%s/.entrysim-lab", dir);
    FILE *f = fopen(sub, "w");
    if (!f || fprintf(f, "lab = %s\n", lab) < 0 || fclose(f))
        return fprintf(stderr, "entrysim: lab start: %s: %s\n", sub, strerror(errno)),
               ES_EX_ERROR;
    printf("entrysim: lab start: %s in %s; the handout is %s/README.md (its links to docs/ "
           "are to the source tree, or /usr/share/doc/entrysim installed); when done: "
           "cd %s && entrysim lab grade\n", lab, dir, dir, dir);
    return ES_EX_OK;
}

/* Runs the lab's grader on dir; returns its exit status. */
static int lab_grade(const char *labs, const char *dir, bool json, const char *only)
{
    char mark[PATH_MAX + 32], lab[256] = "", grader[PATH_MAX + 300], exe[PATH_MAX];
    snprintf(mark, sizeof mark, "%s/.entrysim-lab", dir);
    FILE *f = fopen(mark, "r");
    char line[300];
    if (f) {
        while (fgets(line, sizeof line, f))
            if (sscanf(line, " lab = %255s", lab) == 1)
                break;
        fclose(f);
    }
    if (!lab[0])
        return fprintf(stderr, "entrysim: lab grade: %s holds no started lab (no .entrysim-lab: "
                               "start one with 'entrysim lab start LAB DIR')\n", dir), ES_EX_USAGE;
    snprintf(grader, sizeof grader, "%s/%s/grade.py", labs, lab);
    if (access(grader, R_OK) != 0)
        return fprintf(stderr, "entrysim: lab grade: no grader for %s (%s: %s)\n", lab, grader,
                       strerror(errno)), ES_EX_ERROR;
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k <= 0)
        return fprintf(stderr, "entrysim: lab grade: cannot find this entrysim\n"), ES_EX_ERROR;
    exe[k] = 0;
    char *argv[10] = {"python3", grader, "--entrysim", exe, "--work", (char *)dir};
    int n = 6;
    if (json)
        argv[n++] = "--json";
    if (only) {
        argv[n++] = "--only";
        argv[n++] = (char *)only;
    }
    argv[n] = NULL;
    fflush(stdout);
    execvp("python3", argv);
    fprintf(stderr, "entrysim: lab grade: cannot run python3 (the graders need it): %s\n",
            strerror(errno));
    return ES_EX_ERROR;
}

int es_lab_cmd(int argc, char **argv)
{
    es_opts p = es_opts_for(&es_cmd_lab, argc, argv);
    p.mixed = true;
    const char *pos[3] = {NULL};
    int npos = 0;
    bool json = false;
    const char *only = NULL;
    for (int id; (id = es_opts_next(&p)) != ES_OPT_DONE;) {
        if (id == L_HELP) {
            es_cmd_help(stdout, &es_cmd_lab);
            return ES_EX_OK;
        }
        if (id == L_JSON)
            json = true;
        else if (id == L_ONLY)
            only = p.val;
        else if (id == ES_OPT_ARG && npos < 3)
            pos[npos++] = p.arg;
        else if (id == ES_OPT_NOVALUE)
            return es_opts_fail(&p, "%s needs a value", p.name);
        else
            return es_opts_fail(&p, "unexpected argument '%s'", p.arg);
    }
    int word = npos ? es_opt_pick(pos[0], lab_words) : -1;
    static const int want[] = {1, 3, 2}; /* list, start LAB DIR, grade [DIR] */
    if (word < 0 || npos > want[word] || (word == 1 && npos != 3) ||
        ((json || only) && word != 2))
        return es_opts_fail(&p, "%s", "expected 'list', 'start LAB DIR' or 'grade [--json] [DIR]'");
    char labs[PATH_MAX];
    if (es_share_dir("ENTRYSIM_LABS", "labs", "lib/grading.py", "lab", "labs", labs, sizeof labs))
        return ES_EX_ERROR;
    if (word == 0)
        return lab_list(labs);
    if (word == 1)
        return lab_start(labs, pos[1], pos[2]);
    return lab_grade(labs, npos == 2 ? pos[1] : ".", json, only);
}
