/* copytree.c - see copytree.h. */
#include "copytree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int es_copy_file(const char *from, const char *to, mode_t mode, const char *who,
                 bool overwrite)
{
    int in = open(from, O_RDONLY | O_CLOEXEC);
    int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (overwrite ? O_TRUNC : O_EXCL);
    int out = in < 0 ? -1 : open(to, flags, mode & 0777);
    int rc = in < 0 || out < 0 ? -1 : 0;
    char buf[65536];
    for (ssize_t r; rc == 0 && (r = read(in, buf, sizeof buf)) != 0;)
        if (r < 0 || write(out, buf, (size_t)r) != r)
            rc = -1;
    if (out >= 0 && close(out))
        rc = -1;
    if (in >= 0)
        close(in);
    if (rc)
        fprintf(stderr, "entrysim: %s: %s -> %s: %s\n", who, from, to, strerror(errno));
    return rc;
}

int es_copy_tree(const char *from, const char *to, const char *who, bool overwrite)
{
    DIR *d = opendir(from);
    if (!d)
        return fprintf(stderr, "entrysim: %s: %s: %s\n", who, from, strerror(errno)), -1;
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue; /* ., .. and nothing hidden is handed out */
        char src[PATH_MAX], dst[PATH_MAX];
        struct stat st;
        if ((size_t)snprintf(src, sizeof src, "%s/%s", from, e->d_name) >= sizeof src ||
            (size_t)snprintf(dst, sizeof dst, "%s/%s", to, e->d_name) >= sizeof dst ||
            stat(src, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            if (mkdir(dst, 0755) != 0 && !(overwrite && errno == EEXIST))
                rc = (fprintf(stderr, "entrysim: %s: %s: %s\n", who, dst, strerror(errno)), -1);
            else
                rc = es_copy_tree(src, dst, who, overwrite);
        } else if (S_ISREG(st.st_mode)) {
            rc = es_copy_file(src, dst, st.st_mode | 0644, who, overwrite);
        }
    }
    closedir(d);
    return rc;
}

int es_dir_used(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT ? 0 : -1;
    int used = 0;
    for (struct dirent *e; !used && (e = readdir(d));)
        used = strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return used;
}

static int share_try(const char *dir, const char *probe, char *out, size_t n)
{
    char path[PATH_MAX + 64];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, probe) >= sizeof path ||
        access(path, R_OK) != 0 || strlen(dir) >= n)
        return -1;
    memcpy(out, dir, strlen(dir) + 1);
    return 0;
}

int es_share_dir(const char *env, const char *sub, const char *probe, const char *who,
                 const char *what, char *out, size_t n)
{
    const char *val = getenv(env);
    if (val && *val) {
        if (share_try(val, probe, out, n) == 0)
            return 0;
        fprintf(stderr, "entrysim: %s: %s=%s has no %s\n", who, env, val, probe);
        return -1;
    }
    char exe[PATH_MAX], cand[PATH_MAX + 64];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k > 0) {
        exe[k] = 0;
        char *slash = strrchr(exe, '/');
        if (slash)
            *slash = 0;
        const char *const ups[] = {"", "/.."};
        for (int i = 0; i < 2; i++) {
            snprintf(cand, sizeof cand, "%s%s/share/entrysim/%s", exe, ups[i], sub);
            if (share_try(cand, probe, out, n) == 0)
                return 0;
        }
    }
    fprintf(stderr, "entrysim: %s: no %s next to the binary (looked for share/entrysim/%s in %s "
                    "and its parent; %s names another)\n", who, what, sub, k > 0 ? exe : "?", env);
    return -1;
}
