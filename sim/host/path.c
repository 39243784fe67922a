/* path.c - guest paths confined to the guest root.
 *
 * Confinement: every guest path is composed into an absolute guest path
 * (cwd or a directory fd's path + relative path) and resolved from the
 * root directory fd.  The directory part is opened with openat2(...,
 * RESOLVE_IN_ROOT) when the host kernel has it (5.6+; checked once at
 * init), otherwise by walking it component by component with O_NOFOLLOW,
 * where ".." at the root stays at the root and symlinks are expanded
 * inside the root.  The last component is always handled here with
 * O_NOFOLLOW, following a symlink by re-resolving its target the same way,
 * so no host-side path lookup ever leaves the root.  Guest fds map to host
 * fds through h->fds (fs.c): the guest names only fds it opened (or 0/1/2).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "host_int.h"

#define MAX_LINKS 40              /* MAXSYMLINKS */

#ifndef SYS_openat2
#define SYS_openat2 437
#endif
struct es_open_how {
    uint64_t flags, mode, resolve;
};
#define ES_RESOLVE_NO_MAGICLINKS 0x02
#define ES_RESOLVE_IN_ROOT 0x10

static const struct es_open_how g_in_root = {
    .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
    .resolve = ES_RESOLVE_IN_ROOT | ES_RESOLVE_NO_MAGICLINKS,
};

int es_hs_root_open(es_machine *m)
{
    struct es_host *h = m->host;
    const char *root = h->cfg.root && *h->cfg.root ? h->cfg.root : ".";
    char real[ES_HOST_PATH_MAX];
    if (!realpath(root, real)) {
        snprintf(m->message, sizeof m->message, "guest root %s: %s", root, strerror(errno));
        return -1;
    }
    h->rootlen = strcmp(real, "/") ? strlen(real) : 0;
    memcpy(h->root, real, h->rootlen);
    h->root[h->rootlen] = 0;
    h->rootfd = open(real, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (h->rootfd < 0) {
        snprintf(m->message, sizeof m->message, "guest root %s: %s", root, strerror(errno));
        return -1;
    }
    struct es_open_how how = g_in_root;
    long t = syscall(SYS_openat2, h->rootfd, ".", &how, sizeof how);
    h->use_openat2 = t >= 0;
    if (t >= 0)
        close((int)t);
    /* The guest starts where the user ran entrysim when that lies inside
     * the root (--root=/ then behaves as a shell would: relative paths
     * name the same files natively and in the guest); else at the root. */
    char here[ES_HOST_PATH_MAX];
    strcpy(h->cwd, "/");
    if (getcwd(here, sizeof here) && !strncmp(here, h->root, h->rootlen) &&
        here[h->rootlen] == '/' && strlen(here + h->rootlen) < sizeof h->cwd)
        strcpy(h->cwd, here + h->rootlen);
    return 0;
}

/* Guest path of a host fd, from the host's /proc/self/fd link. */
int es_hs_gpath_of(struct es_host *h, int hfd, char *out, size_t cap)
{
    char link[64], real[ES_HOST_PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", hfd);
    ssize_t n = readlink(link, real, sizeof real - 1);
    if (n < 0)
        return -ENOENT;
    real[n] = 0;
    if (strncmp(real, h->root, h->rootlen) || (real[h->rootlen] != '/' && real[h->rootlen]))
        return -ENOENT; /* cannot happen for fds opened through the root */
    const char *rest = real + h->rootlen;
    if (!*rest)
        rest = "/";
    if (strlen(rest) >= cap)
        return -ENAMETOOLONG;
    strcpy(out, rest);
    return 0;
}

int es_hs_dirfd_gpath(struct es_host *h, int64_t fd, char *out, size_t cap)
{
    es_hfd *f = es_hs_fd(h, (int)fd);
    if (!f)
        return -EBADF;
    struct stat st;
    if (fstat(f->host, &st))
        return -errno;
    if (!S_ISDIR(st.st_mode))
        return -ENOTDIR;
    return es_hs_gpath_of(h, f->host, out, cap);
}

/* Absolute guest path of `path` relative to guest dirfd (or the cwd). */
static int compose(es_machine *m, int64_t dirfd, const char *path, char *out, size_t cap)
{
    struct es_host *h = m->host;
    if (path[0] == '/') {
        if (strlen(path) >= cap)
            return -ENAMETOOLONG;
        strcpy(out, path);
        return 0;
    }
    char base[ES_HOST_PATH_MAX];
    if ((int)dirfd == G_AT_FDCWD) {
        strcpy(base, h->cwd);
    } else {
        int r = es_hs_dirfd_gpath(h, dirfd, base, sizeof base);
        if (r)
            return r;
    }
    if (snprintf(out, cap, "%s/%s", base, path) >= (int)cap)
        return -ENAMETOOLONG;
    return 0;
}

/* Walks `rel` (relative to the root) as a directory, one component at a
 * time with O_NOFOLLOW, expanding symlinks inside the root.  Returns an
 * O_PATH fd of the directory or -errno. */
static int walk_dir(struct es_host *h, const char *rel)
{
    enum { DEPTH = 256 };
    int stack[DEPTH], depth = 0, links = 0;
    char buf[2 * ES_HOST_PATH_MAX];
    if (strlen(rel) >= sizeof buf)
        return -ENAMETOOLONG;
    strcpy(buf, rel);
    char *p = buf;
    int err = 0;
    while (*p) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        char *end = strchr(p, '/');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char comp[256];
        if (len > 255) {
            err = -ENAMETOOLONG;
            goto out;
        }
        memcpy(comp, p, len);
        comp[len] = 0;
        p += len;
        if (!strcmp(comp, "."))
            continue;
        if (!strcmp(comp, "..")) {
            if (depth) /* never above the root */
                close(stack[--depth]);
            continue;
        }
        int cur = depth ? stack[depth - 1] : h->rootfd;
        int fd = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
            err = -errno;
            goto out;
        }
        struct stat st;
        if (fstat(fd, &st)) {
            err = -errno;
            close(fd);
            goto out;
        }
        if (S_ISLNK(st.st_mode)) {
            char tgt[ES_HOST_PATH_MAX];
            ssize_t n = readlinkat(fd, "", tgt, sizeof tgt - 1);
            close(fd);
            if (n < 0) {
                err = -errno;
                goto out;
            }
            tgt[n] = 0;
            if (++links > MAX_LINKS) {
                err = -ELOOP;
                goto out;
            }
            char nbuf[2 * ES_HOST_PATH_MAX];
            if (snprintf(nbuf, sizeof nbuf, "%s/%s", tgt, p) >= (int)sizeof nbuf) {
                err = -ENAMETOOLONG;
                goto out;
            }
            if (tgt[0] == '/') /* absolute targets start again at the root */
                while (depth)
                    close(stack[--depth]);
            strcpy(buf, nbuf);
            p = buf;
            continue;
        }
        if (!S_ISDIR(st.st_mode)) {
            close(fd);
            err = -ENOTDIR;
            goto out;
        }
        if (depth == DEPTH) {
            close(fd);
            err = -ENAMETOOLONG;
            goto out;
        }
        stack[depth++] = fd;
    }
out:
    if (err) {
        while (depth)
            close(stack[--depth]);
        return err;
    }
    if (!depth) {
        int fd = fcntl(h->rootfd, F_DUPFD_CLOEXEC, 0);
        return fd < 0 ? -errno : fd;
    }
    int fd = stack[--depth];
    while (depth)
        close(stack[--depth]);
    return fd;
}

static int open_dir(struct es_host *h, const char *rel)
{
    if (h->use_openat2) {
        struct es_open_how how = g_in_root;
        for (int tries = 0; tries < 4; tries++) {
            long fd = syscall(SYS_openat2, h->rootfd, *rel ? rel : ".", &how, sizeof how);
            if (fd >= 0)
                return (int)fd;
            if (errno != EAGAIN) /* EAGAIN: a rename raced the lookup */
                return -errno;
        }
    }
    return walk_dir(h, rel);
}

/* Splits absolute guest path gp into (O_PATH fd of its directory, last
 * component).  A path ending in ".", ".." or "/" resolves entirely as a
 * directory and yields name "." (`create`: trailing slashes are dropped
 * instead, so mkdir("d/") names d).  *last_off: where the last component
 * starts in gp (its directory is gp[0, last_off)). */
int es_hs_split(struct es_host *h, const char *gp, bool create, int *dirfd, char *name,
                 size_t *last_off)
{
    char p[ES_HOST_PATH_MAX];
    size_t n = strlen(gp);
    if (n >= sizeof p)
        return -ENAMETOOLONG;
    memcpy(p, gp, n + 1);
    bool slash = false;
    while (n > 1 && p[n - 1] == '/') {
        p[--n] = 0;
        slash = true;
    }
    char *last = strrchr(p, '/');
    const char *lname = last ? last + 1 : p;
    bool whole = !*lname || !strcmp(lname, ".") || !strcmp(lname, "..") || (slash && !create);
    if (strlen(lname) > 255)
        return -ENAMETOOLONG;
    int fd;
    if (whole) {
        fd = open_dir(h, p + (p[0] == '/'));
        strcpy(name, ".");
        *last_off = n;
    } else {
        *last_off = (size_t)(lname - p);
        strcpy(name, lname);
        if (last)
            *last = 0;
        fd = open_dir(h, p + (p[0] == '/'));
    }
    if (fd < 0)
        return fd;
    *dirfd = fd;
    return 0;
}

bool es_hs_is_proc_self_exe(const char *gp)
{
    return !strcmp(gp, "/proc/self/exe");
}

/* Opens absolute guest path gp with host open flags (O_NOFOLLOW is added;
 * a symlink in last position is followed by re-resolution when `follow`).
 * Returns a host fd or -errno. */
int es_hs_open_gp(struct es_host *h, const char *gp0, int flags, mode_t mode, bool follow)
{
    char gp[2 * ES_HOST_PATH_MAX];
    if (strlen(gp0) >= sizeof gp)
        return -ENAMETOOLONG;
    strcpy(gp, gp0);
    if (es_hs_is_proc_self_exe(gp) && h->exe[0] && follow)
        strcpy(gp, h->exe);
    for (int links = 0;; links++) {
        int dfd;
        char name[256];
        size_t off;
        int r = es_hs_split(h, gp, (flags & O_CREAT) != 0, &dfd, name, &off);
        if (r)
            return r;
        struct stat st;
        if (follow && strcmp(name, ".") && !fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) &&
            S_ISLNK(st.st_mode)) {
            char tgt[ES_HOST_PATH_MAX];
            ssize_t n = readlinkat(dfd, name, tgt, sizeof tgt - 1);
            close(dfd);
            if (n < 0)
                return -errno;
            tgt[n] = 0;
            if (links >= MAX_LINKS)
                return -ELOOP;
            char ngp[2 * ES_HOST_PATH_MAX];
            if (tgt[0] == '/')
                snprintf(ngp, sizeof ngp, "%s", tgt);
            else if (snprintf(ngp, sizeof ngp, "%.*s/%s", (int)off, gp, tgt) >= (int)sizeof ngp)
                return -ENAMETOOLONG;
            strcpy(gp, ngp);
            continue;
        }
        int fd = openat(dfd, name, flags | O_NOFOLLOW | O_CLOEXEC, mode);
        int e = errno;
        close(dfd);
        return fd < 0 ? -e : fd;
    }
}

/* Guest path argument -> composed absolute guest path. */
int es_hs_get_gp(es_machine *m, const es_scall *c, int64_t dirfd, uint64_t upath, char *gp,
                 size_t cap, bool empty_ok)
{
    char path[ES_HOST_PATH_MAX];
    int64_t n = es_hs_get_str(m, c, upath, path, sizeof path);
    if (n < 0)
        return (int)n;
    if (n == 0 && !empty_ok)
        return -ENOENT;
    return compose(m, dirfd, path, gp, cap);
}

/* Opens guest (dirfd, path) as O_PATH for stat-like calls; an empty path
 * with AT_EMPTY_PATH names dirfd itself. */
int es_hs_open_at(es_machine *m, const es_scall *c, int64_t dirfd, uint64_t upath,
                  bool follow, bool empty_path)
{
    struct es_host *h = m->host;
    char path[ES_HOST_PATH_MAX];
    int64_t n = es_hs_get_str(m, c, upath, path, sizeof path);
    if (n < 0)
        return (int)n;
    if (n == 0) {
        if (!empty_path)
            return -ENOENT;
        if ((int)dirfd == G_AT_FDCWD)
            return es_hs_open_gp(h, h->cwd, O_PATH, 0, true);
        es_hfd *f = es_hs_fd(h, (int)dirfd);
        if (!f)
            return -EBADF;
        int fd = fcntl(f->host, F_DUPFD_CLOEXEC, 0);
        return fd < 0 ? -errno : fd;
    }
    char gp[ES_HOST_PATH_MAX];
    int r = compose(m, dirfd, path, gp, sizeof gp);
    if (r)
        return r;
    return es_hs_open_gp(h, gp, O_PATH, 0, follow);
}

/* mkdir/unlink/rename...: (dirfd, name) of a guest path, writes allowed only
 * with --rw. */
int es_hs_name_at(es_machine *m, const es_scall *c, int64_t dirfd, uint64_t upath, bool create,
                  int *dfd, char *name)
{
    if (!m->host->cfg.rw)
        return -EROFS;
    char gp[ES_HOST_PATH_MAX];
    int r = es_hs_get_gp(m, c, dirfd, upath, gp, sizeof gp, false);
    if (r)
        return r;
    size_t off;
    return es_hs_split(m->host, gp, create, dfd, name, &off);
}
