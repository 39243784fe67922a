/* bench_cells.c - where `entrysim bench` keeps finished cells: the local
 * run's store (OUT/store.tsv, appended), and a sharded run's per-cell files
 * (OUT/cells/KEY.tsv and KEY.failed, each written whole by rename(2), safe
 * with many writers on a shared filesystem where appends are not, e.g.
 * NFS: O_APPEND is emulated by the client, see open(2)); the job file that
 * lets --status and --merge key the cells from the folder alone; and those
 * two commands.  bench/README.md. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_int.h"
#include "escape.h"

#define STORE_FIELDS (5 + ES_BENCH_NPHASES)

/* One store line (key, figures, axes; no newline) into line; its length,
 * or -1 when it does not fit. */
static int store_line(const es_cell *c, char *line, size_t cap)
{
    int n = snprintf(line, cap, "%s\t%.17g\t%.17g\t%.17g\t%.17g\t%lld", c->key, c->cycles,
                     c->instructions, c->calls, c->call_cycles, c->iterations);
    for (int p = 0; p < ES_BENCH_NPHASES; p++)
        n += snprintf(line + n, cap - (size_t)n, "\t%.17g", c->phases[p]);
    for (int a = 0; a < AX_COUNT; a++)
        n += snprintf(line + n, cap - (size_t)n, "\t%s", c->v[a]);
    return n + 2 > (int)cap ? -1 : n;
}

/* Parses a store line (NUL-terminated, no newline) into its figures; false
 * for a comment or a malformed line. */
static bool parse_line(const char *line, double f[STORE_FIELDS])
{
    const char *tab = strchr(line, '\t');
    if (*line == '#' || !tab || tab - line != 16)
        return false;
    const char *p = tab;
    int k = 0;
    for (; k < STORE_FIELDS && *p == '\t'; k++) {
        char *e;
        f[k] = strtod(p + 1, &e);
        if (e == p + 1)
            break;
        p = e;
    }
    return k == STORE_FIELDS;
}

static void take_figures(es_cell *c, const double f[STORE_FIELDS])
{
    c->state = CELL_REUSED;
    c->cycles = f[0], c->instructions = f[1], c->calls = f[2], c->call_cycles = f[3];
    for (int ph = 0; ph < ES_BENCH_NPHASES; ph++)
        c->phases[ph] = f[5 + ph];
}

/* Takes the finished cells of the store at path (none when it does not
 * exist yet); -1 with the reason on stderr when it cannot be read (a FIFO
 * or a directory is refused, not waited on).  A line without its newline
 * (an interrupted append) is ignored. */
int es_store_load(const char *path, es_cell *cells, size_t n)
{
    size_t len;
    char err[PATH_MAX + 64];
    struct stat st;
    if (stat(path, &st) && errno == ENOENT)
        return 0; /* a new store */
    char *text = es_bench_read_file(path, &len, err, sizeof err);
    if (!text) {
        fprintf(stderr, "entrysim: bench: %s\n", es_escape_ctl(err, sizeof err, err));
        return -1;
    }
    for (char *line = text, *nl; (nl = strchr(line, '\n')); line = nl + 1) {
        *nl = 0;
        double f[STORE_FIELDS];
        if (!parse_line(line, f))
            continue;
        for (size_t i = 0; i < n; i++)
            if (!cells[i].skip && cells[i].state == CELL_PENDING &&
                !strncmp(cells[i].key, line, 16))
                take_figures(&cells[i], f);
    }
    free(text);
    return 0;
}

int es_store_append(const char *path, const es_cell *c)
{
    char line[1024];
    int n = store_line(c, line, sizeof line);
    if (n < 0)
        return -1;
    line[n++] = '\n';
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NONBLOCK | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        close(fd);
        errno = EINVAL;
        return -1;
    }
    if (st.st_size == 0) {
        static const char head[] =
            "# entrysim bench store v1: key cycles instructions calls call_cycles iterations "
            "<7 phases> <axes>\n";
        if (write(fd, head, sizeof head - 1) < 0) {
            close(fd);
            return -1;
        }
    }
    /* one write of the whole line: concurrent appenders cannot interleave */
    ssize_t w = write(fd, line, (size_t)n);
    int rc = close(fd);
    return w == n && rc == 0 ? 0 : -1;
}

/* ------------------------------------------------------- per-cell files */

/* A regular file's first line (at most cap-1 bytes, newline dropped); false
 * when it is missing, not regular, or has no complete line. */
static bool first_line(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return false;
    struct stat st;
    ssize_t r = -1;
    if (!fstat(fd, &st) && S_ISREG(st.st_mode))
        r = read(fd, buf, cap - 1);
    close(fd);
    if (r <= 0)
        return false;
    buf[r] = 0;
    char *nl = strchr(buf, '\n');
    if (!nl)
        return false;
    *nl = 0;
    return true;
}

void es_cells_load(const char *odir, es_cell *cells, size_t n, bool failed_too)
{
    char path[PATH_MAX], line[2048];
    for (size_t i = 0; i < n; i++) {
        es_cell *c = &cells[i];
        if (c->skip || (c->state != CELL_PENDING && c->state != CELL_FAILED))
            continue;
        double f[STORE_FIELDS];
        (void)es_bench_pathf(path, sizeof path, "%s/cells/%s.tsv", odir, c->key);
        if (first_line(path, line, sizeof line) && parse_line(line, f) &&
            !strncmp(line, c->key, 16)) {
            take_figures(c, f);
            continue;
        }
        (void)es_bench_pathf(path, sizeof path, "%s/cells/%s.failed", odir, c->key);
        if (failed_too && first_line(path, line, sizeof line) && !strncmp(line, c->key, 16) &&
            line[16] == '\t') {
            c->state = CELL_FAILED;
            snprintf(c->note, sizeof c->note, "%.255s", line + 17);
        }
    }
}

/* Writes text to path through a temporary file in the same folder (named
 * by host and pid, so that writers on different nodes never share one),
 * synced before the rename: after a crash the file is whole or absent.
 * Without replace, an existing file is kept (link(2) does not replace). */
int es_write_atomic(const char *path, const char *text, size_t len, bool replace)
{
    char tmp[PATH_MAX + 128], host[64] = "host";
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = 0;
    for (char *p = host; *p; p++)
        if (*p == '/')
            *p = '_';
    if (es_bench_pathf(tmp, sizeof tmp, "%s.%s.%ld.tmp", path, host, (long)getpid()))
        return errno = ENAMETOOLONG, -1;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    ssize_t w = write(fd, text, len);
    int e = w == (ssize_t)len ? 0 : w < 0 ? errno : EIO;
    if (!e && fsync(fd))
        e = errno;
    if (close(fd) && !e)
        e = errno;
    if (!e && (replace ? rename(tmp, path) : link(tmp, path)) && (replace || errno != EEXIST))
        e = errno;
    if (e || !replace) {
        unlink(tmp);
        errno = e;
        return e ? -1 : 0;
    }
    return 0;
}

int es_cell_file_write(const char *odir, const es_cell *c)
{
    char path[PATH_MAX], line[1024];
    bool ok = c->state == CELL_DONE;
    int n;
    if (ok) {
        n = store_line(c, line, sizeof line);
    } else {
        n = snprintf(line, sizeof line, "%s\t%s", c->key, c->note);
        for (char *p = line + 17; *p; p++)
            if (*p == '\n' || *p == '\t')
                *p = ' '; /* one line, one field */
    }
    if (n < 0 || n + 2 > (int)sizeof line)
        return errno = E2BIG, -1;
    line[n++] = '\n';
    if (es_bench_pathf(path, sizeof path, "%s/cells/%s.%s", odir, c->key, ok ? "tsv" : "failed"))
        return errno = ENAMETOOLONG, -1;
    if (es_write_atomic(path, line, (size_t)n, true))
        return -1;
    if (ok) { /* an earlier attempt's failure no longer counts */
        (void)es_bench_pathf(path, sizeof path, "%s/cells/%s.failed", odir, c->key);
        unlink(path);
    }
    return 0;
}
