/* bench_out.c - results.csv, results.json and chart.svg of a bench run. */
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"

/* fopen(path, "w") that neither waits on a FIFO nor writes to a device:
 * only a regular file (new or truncated) is written. */
static FILE *create_out(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_NONBLOCK | O_CLOEXEC, 0644);
    if (fd < 0)
        return NULL;
    struct stat st;
    FILE *f = NULL;
    if (!fstat(fd, &st) && S_ISREG(st.st_mode) && !ftruncate(fd, 0))
        f = fdopen(fd, "w");
    if (!f)
        close(fd);
    return f;
}

/* Per-call figures: the report's per-syscall row when it has one, else the
 * whole run divided by the workload's iterations. */
static double per_call(const es_cell *c)
{
    return c->calls > 0 ? c->call_cycles / c->calls : c->cycles / (double)c->iterations;
}

static double phase_per_call(const es_cell *c, int p)
{
    return c->calls > 0 ? c->phases[p] / c->calls : 0;
}

static bool ok(const es_cell *c)
{
    return c->state == CELL_DONE || c->state == CELL_REUSED;
}

static void csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void num(FILE *f, double v)
{
    if (v == floor(v) && fabs(v) < 1e15)
        fprintf(f, "%.0f", v);
    else
        fprintf(f, "%.2f", v);
}

int es_bench_write_csv(const char *path, const es_cell *cells, size_t n)
{
    FILE *f = create_out(path);
    if (!f)
        return -1;
    fputs("key", f);
    for (int a = 0; a < AX_COUNT; a++)
        fprintf(f, ",%s", es_bench_axis_names[a]);
    fputs(",iterations,status,cycles,instructions,ipc,calls,cycles_per_call", f);
    for (int p = 0; p < ES_BENCH_NPHASES; p++)
        fprintf(f, ",%s", es_bench_phase_names[p]);
    fputs(",note\n", f);
    for (size_t i = 0; i < n; i++) {
        const es_cell *c = &cells[i];
        if (c->skip)
            continue;
        fputs(c->key, f);
        for (int a = 0; a < AX_COUNT; a++) {
            fputc(',', f);
            csv_field(f, c->v[a]);
        }
        fprintf(f, ",%lld,%s", c->iterations, ok(c) ? "ok" : "failed");
        if (ok(c)) {
            fputc(',', f), num(f, c->cycles);
            fputc(',', f), num(f, c->instructions);
            fprintf(f, ",%.3f,", c->cycles > 0 ? c->instructions / c->cycles : 0.0);
            num(f, c->calls);
            fprintf(f, ",%.2f", per_call(c));
            for (int p = 0; p < ES_BENCH_NPHASES; p++)
                fprintf(f, ",%.2f", phase_per_call(c, p));
            fputs(",\n", f);
        } else {
            for (int k = 0; k < 5 + ES_BENCH_NPHASES; k++)
                fputc(',', f);
            fputc(',', f);
            csv_field(f, c->note);
            fputc('\n', f);
        }
    }
    return fclose(f) ? -1 : 0;
}

static void json_axes(FILE *f, const es_cell *c)
{
    for (int a = 0; a < AX_COUNT; a++) {
        fprintf(f, "\"%s\": ", es_bench_axis_names[a]);
        es_json_write_str(f, c->v[a]);
        fputs(", ", f);
    }
    fprintf(f, "\"iterations\": %lld", c->iterations);
}

int es_bench_write_json(const char *path, const es_matrix *m, const es_cell *cells, size_t n,
                        const char *version)
{
    FILE *f = create_out(path);
    if (!f)
        return -1;
    size_t nok = 0, nfail = 0, nskip = 0;
    fputs("{\n  \"matrix\": ", f);
    es_json_write_str(f, m->name);
    fputs(",\n  \"entrysim\": ", f);
    es_json_write_str(f, version);
    fputs(",\n  \"cells\": [", f);
    const char *sep = "\n";
    for (size_t i = 0; i < n; i++) {
        const es_cell *c = &cells[i];
        if (c->skip) {
            nskip++;
            continue;
        }
        fprintf(f, "%s    {\"key\": \"%s\", ", sep, c->key);
        sep = ",\n";
        json_axes(f, c);
        if (ok(c)) {
            nok++;
            fprintf(f, ", \"status\": \"ok\", \"cycles\": %.17g, \"instructions\": %.17g, "
                       "\"calls\": %.17g, \"call_cycles\": %.17g, \"cycles_per_call\": %.17g, "
                       "\"phases_per_call\": {",
                    c->cycles, c->instructions, c->calls, c->call_cycles, per_call(c));
            for (int p = 0; p < ES_BENCH_NPHASES; p++)
                fprintf(f, "%s\"%s\": %.17g", p ? ", " : "", es_bench_phase_names[p],
                        phase_per_call(c, p));
            fputs("}}", f);
        } else {
            nfail++;
            fputs(", \"status\": \"failed\", \"note\": ", f);
            es_json_write_str(f, c->note);
            fputc('}', f);
        }
    }
    fputs("\n  ],\n  \"skipped\": [", f);
    sep = "\n";
    for (size_t i = 0; i < n; i++) {
        const es_cell *c = &cells[i];
        if (!c->skip)
            continue;
        fprintf(f, "%s    {", sep);
        sep = ",\n";
        json_axes(f, c);
        fputs(", \"reason\": ", f);
        es_json_write_str(f, c->skip);
        fputc('}', f);
    }
    fprintf(f, "\n  ],\n  \"summary\": {\"cells\": %zu, \"ok\": %zu, \"failed\": %zu, "
               "\"skipped\": %zu}\n}\n",
            nok + nfail, nok, nfail, nskip);
    return fclose(f) ? -1 : 0;
}

static void xml(FILE *f, const char *s)
{
    for (; *s; s++)
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
}

/* 1, 2 or 5 times a power of ten: about 5 gridlines up to max. */
static double tick_step(double max)
{
    double raw = max / 5, p = pow(10, floor(log10(raw))), m = raw / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

/* colours of the phases, in es_bench_phase_names order */
static const char *const colour[ES_BENCH_NPHASES] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
                                                     "#59a14f", "#edc948", "#b07aa1"};

/* The chart's geometry (pixels) and scale. */
typedef struct svg_geom {
    bool varies[AX_COUNT]; /* the axes that vary label the bars; the fixed
                            * ones go in the title */
    double step, top;      /* gridline step and the y axis' top value */
    int left, right, tpad, plot_h, barw, gap, bottom, width, height;
} svg_geom;

static void svg_layout(svg_geom *g, const es_matrix *m, const es_cell *cells, size_t n)
{
    for (int a = 0; a < AX_COUNT; a++)
        g->varies[a] = m->naxis[a] > 1;
    size_t nbars = 0;
    double max = 0;
    for (size_t i = 0; i < n; i++)
        if (!cells[i].skip) {
            nbars++;
            if (ok(&cells[i]) && per_call(&cells[i]) > max)
                max = per_call(&cells[i]);
        }
    if (max <= 0)
        max = 1;
    /* the bar labels run downwards under the axis: room for the longest */
    size_t longest = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = 0;
        for (int a = 0; a < AX_COUNT; a++)
            if (g->varies[a] && !cells[i].skip)
                len += strlen(cells[i].v[a]) + 1;
        if (len > longest)
            longest = len;
    }
    g->step = tick_step(max), g->top = ceil(max / g->step) * g->step;
    g->left = 80, g->right = 190, g->tpad = 60, g->plot_h = 320, g->barw = 34, g->gap = 14;
    g->bottom = 30 + (int)(longest < 12 ? 12 : longest) * 7; /* ~7 px a character */
    g->width = g->left + g->right + (int)nbars * (g->barw + g->gap) + g->gap;
    g->height = g->tpad + g->plot_h + g->bottom;
}

/* The document's head, the title with the fixed axes, the y axis. */
static void svg_head(FILE *f, const svg_geom *g, const es_matrix *m)
{
    const int left = g->left, tpad = g->tpad, plot_h = g->plot_h, width = g->width;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"11\">\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            width, g->height, width, g->height);
    fputs("<text x=\"10\" y=\"22\" font-size=\"15\">entrysim bench: ", f);
    xml(f, m->name);
    fputs(" &#8212; cycles per system call by phase</text>\n<text x=\"10\" y=\"42\">", f);
    for (int a = 0, first = 1; a < AX_COUNT; a++)
        if (!g->varies[a] && m->naxis[a] == 1) {
            fprintf(f, "%s%s ", first ? "" : " &#183; ", es_bench_axis_names[a]);
            xml(f, m->axes[a][0]);
            first = 0;
        }
    fputs("</text>\n", f);
    /* y axis, gridlines and tick labels */
    fprintf(f, "<g class=\"axis\">\n<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n",
            left, tpad, left, tpad + plot_h);
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", left,
            tpad + plot_h, width - g->right, tpad + plot_h);
    for (double v = 0; v <= g->top + g->step / 2; v += g->step) {
        double y = tpad + plot_h - v / g->top * plot_h;
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                   "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
                left + 1, y, width - g->right, y, left - 6, y + 4, v);
    }
    fprintf(f, "<text transform=\"translate(18 %d) rotate(-90)\" text-anchor=\"middle\">"
               "cycles per call</text>\n</g>\n",
            tpad + plot_h / 2);
}

/* The stacked segments of a finished cell's bar at x. */
static void svg_stack(FILE *f, const svg_geom *g, const es_cell *c, int x, const char *label)
{
    fprintf(f, "<g class=\"bar\" data-key=\"%s\">\n<title>", c->key);
    xml(f, label);
    fprintf(f, ": %.1f cycles per call</title>\n", per_call(c));
    double y = g->tpad + g->plot_h, sum = 0;
    for (int p = 0; p < ES_BENCH_NPHASES; p++)
        sum += phase_per_call(c, p);
    /* phases of the report; a run without a per-phase split (no
     * syscalls seen) is one grey segment of its whole per-call cost */
    for (int p = 0; p < ES_BENCH_NPHASES && sum > 0; p++) {
        double h = phase_per_call(c, p) / g->top * g->plot_h;
        if (h <= 0)
            continue;
        y -= h;
        fprintf(f, "<rect class=\"%s\" x=\"%d\" y=\"%.2f\" width=\"%d\" height=\"%.2f\" "
                   "fill=\"%s\"/>\n",
                es_bench_phase_names[p], x, y, g->barw, h, colour[p]);
    }
    if (sum <= 0) {
        double h = per_call(c) / g->top * g->plot_h;
        y -= h;
        fprintf(f, "<rect class=\"total\" x=\"%d\" y=\"%.2f\" width=\"%d\" "
                   "height=\"%.2f\" fill=\"#999\"/>\n",
                x, y, g->barw, h);
    }
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"9\">%.0f</text>\n",
            x + g->barw / 2.0, y - 4, per_call(c));
}

/* One cell's bar (or its "failed" mark) at x, with its label. */
static void svg_bar(FILE *f, const svg_geom *g, const es_cell *c, int x)
{
    char label[512] = "";
    size_t k = 0;
    for (int a = 0; a < AX_COUNT; a++)
        if (g->varies[a] && k < sizeof label)
            k += (size_t)snprintf(label + k, sizeof label - k, "%s%s", k ? " " : "", c->v[a]);
    if (!k)
        snprintf(label, sizeof label, "%s", c->v[AX_WORKLOAD]);
    if (ok(c))
        svg_stack(f, g, c, x, label);
    else
        fprintf(f, "<g class=\"failed\" data-key=\"%s\">\n<text x=\"%.1f\" y=\"%d\" "
                   "text-anchor=\"middle\" fill=\"#c00\">failed</text>\n",
                c->key, x + g->barw / 2.0, g->tpad + g->plot_h - 6);
    fprintf(f, "<text transform=\"translate(%.1f %d) rotate(-90)\" text-anchor=\"end\">",
            x + g->barw / 2.0 + 4, g->tpad + g->plot_h + 8);
    xml(f, label);
    fputs("</text>\n</g>\n", f);
}

int es_bench_write_svg(const char *path, const es_matrix *m, const es_cell *cells, size_t n)
{
    svg_geom g;
    svg_layout(&g, m, cells, n);
    FILE *f = create_out(path);
    if (!f)
        return -1;
    svg_head(f, &g, m);
    /* one stacked bar per cell */
    int x = g.left + g.gap;
    for (size_t i = 0; i < n; i++)
        if (!cells[i].skip) {
            svg_bar(f, &g, &cells[i], x);
            x += g.barw + g.gap;
        }
    /* legend, top of the stack first as in the bars */
    fputs("<g class=\"legend\">\n", f);
    for (int p = ES_BENCH_NPHASES - 1, row = 0; p >= 0; p--, row++) {
        int ly = g.tpad + row * 20;
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"14\" fill=\"%s\"/>"
                   "<text x=\"%d\" y=\"%d\">%s</text>\n",
                g.width - g.right + 20, ly, colour[p], g.width - g.right + 40, ly + 11,
                es_bench_phase_names[p]);
    }
    fputs("</g>\n</svg>\n", f);
    return fclose(f) ? -1 : 0;
}
