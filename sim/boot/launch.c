/* launch.c - see launch.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "exec.h"
#include "host.h"
#include "kernel.h"
#include "launch.h"
#include "loader.h"
#include "mitigations.h"

/* The program's path as the guest sees it (under the root, which the guest
 * sees as /), or NULL when it lies outside the root. */
static char *guest_path(const char *root, const char *prog)
{
    char *r = realpath(root, NULL), *p = realpath(prog, NULL), *out = NULL;
    if (r && p) {
        size_t n = strlen(r);
        if (strcmp(r, "/") == 0)
            out = strdup(p);
        else if (strncmp(p, r, n) == 0 && p[n] == '/')
            out = strdup(p + n);
    }
    free(r);
    free(p);
    return out;
}

/* PROGRAM without a slash that is not in the current directory is looked
 * up in PATH, as a shell would. */
const char *es_launch_resolve(const char *prog, char *buf, size_t bufsz)
{
    struct stat st;
    if (strchr(prog, '/') || stat(prog, &st) == 0)
        return prog;
    const char *path = getenv("PATH");
    if (!path)
        return prog;
    while (*path) {
        const char *colon = strchr(path, ':');
        size_t n = colon ? (size_t)(colon - path) : strlen(path);
        if (n && (size_t)snprintf(buf, bufsz, "%.*s/%s", (int)n, path, prog) < bufsz &&
            stat(buf, &st) == 0 && S_ISREG(st.st_mode))
            return buf;
        path += n + (colon ? 1 : 0);
    }
    return prog;
}

void es_launch_free(es_machine *m)
{
    if (!m)
        return;
    es_host_free(m);
    es_machine_free(m);
}

static int fail(es_machine *m, int code, char *err, size_t errlen, const char *what,
                const char *why)
{
    snprintf(err, errlen, "%s: %s", what, why);
    es_launch_free(m);
    return code;
}

int es_launch(const es_launch_cfg *c, es_machine **out, char *err, size_t errlen)
{
    *out = NULL;
    const char *root = c->root ? c->root : ".";
    char pathbuf[4096];
    const char *path = es_launch_resolve(c->program, pathbuf, sizeof pathbuf);
    struct stat st;
    if (stat(path, &st) != 0) {
        int e = errno;
        snprintf(err, errlen, "%s: %s", c->program, strerror(e));
        return e == ENOENT || e == ENOTDIR ? ES_LAUNCH_NOTFOUND : ES_LAUNCH_NOEXEC;
    }
    uint64_t cap = c->mem_cap_mb ? c->mem_cap_mb : 1024;
    es_machine *m = es_machine_new(cap << 20);
    if (!m) {
        snprintf(err, errlen, "cannot allocate the machine");
        return ES_LAUNCH_ERROR;
    }
    m->deterministic = c->deterministic;
    if (m->deterministic)
        m->rng = ES_RNG_SEED; /* RDRAND's values too */
    m->vendor = (uint8_t)c->vendor;
    m->max_insns = c->max_insns;
    m->wall_limit = c->timeout;
    char *exe = guest_path(root, path);
    es_host_config hc = {
        .root = root,
        .rw = c->rw,
        .deterministic = c->deterministic,
        .stdin_fd = c->stdin_fd,
        .stdout_fd = c->stdout_fd,
        .stderr_fd = c->stderr_fd,
        .exe = exe,
        .name = path,
        .max_tasks = c->max_tasks,
    };
    int rc = es_host_init(m, &hc);
    free(exe); /* es_host_init keeps its own copy */
    if (rc) {
        snprintf(err, errlen, "%s", m->message[0] ? m->message : "host services failed");
        es_launch_free(m);
        return ES_LAUNCH_ERROR;
    }
    es_image img;
    if (es_load_elf(m, path, &img))
        return fail(m, ES_LAUNCH_NOEXEC, err, errlen, c->program, m->message);
    if (!c->direct &&
        ((c->kernel_dir ? es_kernel_load_dir(m, c->kernel_dir, c->patches)
                        : es_kernel_load(m, c->patches)) ||
         es_kernel_set_mitigations(m, c->mitigations)))
        return fail(m, ES_LAUNCH_ERROR, err, errlen, "guest kernel", m->message);
    int abi_rc = c->direct ? 0 : es_kernel_set_abi(m, img.abi);
    if (abi_rc == ES_KERNEL_NO_ROOM) /* the program leaves no room for its vDSO */
        return fail(m, ES_LAUNCH_NOEXEC, err, errlen, c->program, m->message);
    if (abi_rc)
        return fail(m, ES_LAUNCH_ERROR, err, errlen, "guest kernel", m->message);
    static char *const no_env[] = {NULL};
    if (es_start_process(m, &img, c->argc, c->argv, c->envp ? c->envp : no_env))
        return fail(m, ES_LAUNCH_NOEXEC, err, errlen, c->program, m->message);
    if (!c->direct && es_kernel_boot(m))
        return fail(m, ES_LAUNCH_ERROR, err, errlen, "guest kernel", m->message);
    es_exec_install(m); /* execve loads its program through it */
    *out = m;
    return ES_LAUNCH_OK;
}
