/* exec.c - execve: a static program from the guest root replaces the
 * calling process's image (fs/exec.c's order: arguments copied first,
 * the file opened and checked, then the point of no return).
 *
 * The loader is above this layer (sim/boot/exec.c, reached through
 * es_hooks.exec); it validates the ELF, resets the address space, maps the
 * segments and builds the initial stack.  This file does the process half:
 * the argument and environment strings, a `#!` script's interpreter, the
 * fds marked close-on-exec, caught signals back to their default, the
 * name, the break, and the user registers the kernel returns to (Linux's
 * start_thread writes pt_regs; here the body is the simulator's, so it
 * writes them in the task's kernel stack).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host_int.h"
#include "hypercall.h"
#include "mem.h"
#include "task.h"
#include "x87.h"

#define ARG_MAX_BYTES (2u << 20) /* what we copy of argv + envp (Linux: stack / 4) */
#define MAX_ARGS 65536
#define MAX_IMAGE (512u << 20)
#define PT_REGS_SIZE 168

typedef struct strvec {
    char **v;
    int n, cap;
    size_t bytes;
} strvec;

static void sv_free(strvec *s)
{
    for (int i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    *s = (strvec){0};
}

static int sv_push(strvec *s, const char *str, size_t len)
{
    if (s->n + 2 > s->cap) {
        int cap = s->cap ? s->cap * 2 : 16;
        char **nv = realloc(s->v, (size_t)cap * sizeof *nv);
        if (!nv)
            return -ENOMEM;
        s->v = nv;
        s->cap = cap;
    }
    char *d = malloc(len + 1);
    if (!d)
        return -ENOMEM;
    memcpy(d, str, len);
    d[len] = 0;
    s->v[s->n++] = d;
    s->v[s->n] = NULL;
    s->bytes += len + 1;
    return 0;
}

/* Copies the NULL-terminated pointer array at uv (32-bit pointers for
 * ptr32 callers) and its strings; -E2BIG past ARG_MAX_BYTES. */
static int copy_strings(es_machine *m, const es_scall *c, uint64_t uv, strvec *out)
{
    static char buf[ES_HOST_PATH_MAX * 32];
    for (int i = 0; uv; i++) {
        if (i >= MAX_ARGS)
            return -E2BIG;
        uint8_t p[8] = {0};
        unsigned w = c->ptr32 ? 4 : 8;
        if (es_hs_get(m, c, p, uv + (uint64_t)i * w, w))
            return -EFAULT;
        uint64_t sp = w == 4 ? es_ld32(p) : es_ld64(p);
        if (!sp)
            return 0;
        int64_t n = es_hs_get_str(m, c, sp, buf, sizeof buf);
        if (n < 0)
            return n == -ENAMETOOLONG ? -E2BIG : (int)n;
        if (out->bytes + (size_t)n + 1 > ARG_MAX_BYTES)
            return -E2BIG;
        int r = sv_push(out, buf, (size_t)n);
        if (r)
            return r;
    }
    return 0;
}

/* Reads the whole file behind host fd into *data (malloc'd). */
static int read_image(int fd, uint8_t **data, size_t *size)
{
    struct stat st;
    if (fstat(fd, &st))
        return -errno;
    if (!S_ISREG(st.st_mode))
        return -EACCES;
    if (!(st.st_mode & 0111))
        return -EACCES;
    if ((uint64_t)st.st_size > MAX_IMAGE)
        return -ENOMEM;
    uint8_t *b = malloc(st.st_size ? (size_t)st.st_size : 1);
    if (!b)
        return -ENOMEM;
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t r = pread(fd, b + got, (size_t)st.st_size - got, (off_t)got);
        if (r <= 0) {
            free(b);
            return r < 0 ? -errno : -EIO;
        }
        got += (size_t)r;
    }
    *data = b;
    *size = got;
    return 0;
}

static int open_image(es_machine *m, const char *gp, uint8_t **data, size_t *size)
{
    int fd = es_hs_open_gp(m->host, gp, O_RDONLY | O_CLOEXEC, 0, true);
    if (fd < 0)
        return fd;
    int r = read_image(fd, data, size);
    close(fd);
    return r;
}

/* A `#!interp [arg]` script: argv becomes interp [arg] path argv[1..]
 * (fs/binfmt_script.c); *data is replaced by the interpreter's image. */
static int script(es_machine *m, char *gp, uint8_t **data, size_t *size, strvec *argv)
{
    char line[256];
    size_t n = *size < sizeof line - 1 ? *size : sizeof line - 1;
    memcpy(line, *data, n);
    line[n] = 0;
    char *nl = strchr(line, '\n');
    if (!nl)
        return -ENOEXEC;
    *nl = 0;
    char *interp = line + 2;
    while (*interp == ' ' || *interp == '\t')
        interp++;
    char *arg = interp + strcspn(interp, " \t");
    if (*arg) {
        *arg++ = 0;
        arg += strspn(arg, " \t");
        char *end = arg + strlen(arg);
        while (end > arg && (end[-1] == ' ' || end[-1] == '\t'))
            *--end = 0;
    }
    if (!*interp || interp[0] != '/')
        return -ENOEXEC;
    strvec nv = {0};
    int r = sv_push(&nv, interp, strlen(interp));
    if (!r && *arg)
        r = sv_push(&nv, arg, strlen(arg));
    if (!r)
        r = sv_push(&nv, gp, strlen(gp));
    for (int i = 1; !r && i < argv->n; i++)
        r = sv_push(&nv, argv->v[i], strlen(argv->v[i]));
    if (!r) {
        free(*data);
        *data = NULL;
        r = open_image(m, interp, data, size);
    }
    if (r) {
        sv_free(&nv);
        return r == -ENOENT ? -ENOENT : r;
    }
    sv_free(argv);
    *argv = nv;
    snprintf(gp, ES_HOST_PATH_MAX, "%s", interp);
    return 0;
}

/* de_thread: the other threads of the process end, and a thread that
 * exec's takes its leader's place and pid (fs/exec.c). */
static void de_thread(es_machine *m)
{
    es_task *t = es_task_cur(m);
    if (!t)
        return;
    es_thread_end_others(m, m->host, t);
    if (!t->is_thread)
        return;
    es_task *l = es_task_leader(m->host->world, t);
    if (l) {
        t->tid = l->tid;
        t->parent = l->parent;
        t->exit_signal = l->exit_signal;
        t->mm_live = l->mm_live;
        l->mm_live = false;
        l->is_thread = true; /* its process state is t's now */
        l->state = ES_T_GONE;
        es_task_reap(m, l);
    }
    t->is_thread = false;
}

/* After the point of no return: what the new image starts with. */
static void reset_process(es_machine *m, const char *gp, const char *name)
{
    struct es_host *h = m->host;
    for (int fd = 0; fd < ES_HOST_MAX_FDS; fd++)
        if (h->fds[fd].host >= 0 && h->fds[fd].cloexec)
            es_hs_fd_close(h, fd);
    /* caught signals go back to SIG_DFL; ignored ones stay ignored; the
     * mask and pending set are kept (fs/exec.c flush_signal_handlers) */
    for (int s = 1; s <= 64; s++)
        if (h->sigact[s].handler > 1)
            h->sigact[s] = (es_ksigaction){0};
    h->ss_sp = h->ss_size = 0;
    h->ss_flags = 2; /* SS_DISABLE */
    h->tid_address = h->robust_head = h->robust_len = 0;
    es_hs_ldt_free(h); /* the new mm has no LDT (destroy_context) */
    es_hs_ldt_load(m);
    snprintf(h->exe, sizeof h->exe, "%s", gp);
    const char *base = strrchr(name, '/');
    memset(h->comm, 0, sizeof h->comm);
    snprintf(h->comm, sizeof h->comm, "%s", base ? base + 1 : name);
}

/* The user registers of the new image (start_thread): in the task's
 * pt_regs when the kernel returns to user mode, else (--direct) the
 * loader set the machine's own.  FS/GS bases and TLS descriptors are
 * cleared, the FPU is in its initial state. */
static int start_regs(es_machine *m, const es_exec_start *st)
{
    m->seg[ES_SEG_FS].base = 0;
    m->seg[ES_SEG_FS].sel = 0;
    /* load_gs_index(0) in start_thread_common: an i386 program's TLS
     * selector must not outlive its image (the base is the user GS base,
     * in IA32_KERNEL_GS_BASE while the kernel runs) */
    m->seg[ES_SEG_GS].sel = 0;
    m->msr.kernel_gs_base = 0;
    memset(&m->gdt[12], 0, 3 * sizeof m->gdt[0]);
    es_x87_init(m); /* fpu__clear: FCW 0x37f, MXCSR 0x1f80, registers zero */
    m->mxcsr = 0x1f80;
    memset(m->xmm, 0, sizeof m->xmm);
    memset(m->ymmh, 0, sizeof m->ymmh);
    es_task *t = es_task_cur(m);
    if (!t)
        return 0;
    uint8_t r[PT_REGS_SIZE] = {0};
    es_copy_from_guest(m, r, t->ktop - PT_REGS_SIZE, sizeof r);
    uint64_t orig = es_ld64(r + 120);
    memset(r, 0, sizeof r);
    es_st64(r + 120, orig);                /* orig_ax */
    es_st64(r + 128, st->rip);             /* ip */
    es_st64(r + 136, st->cs);              /* cs */
    es_st64(r + 144, 0x200);               /* flags: IF */
    es_st64(r + 152, st->rsp);             /* sp */
    es_st64(r + 160, 0x2b);                /* ss: __USER_DS */
    return es_copy_to_guest(m, t->ktop - PT_REGS_SIZE, r, sizeof r) ? -EFAULT : 0;
}

static int64_t do_execve(es_machine *m, const es_scall *c, uint64_t upath, uint64_t uargv,
                         uint64_t uenvp)
{
    if (!m->hooks.exec)
        return -ENOSYS;
    char path[ES_HOST_PATH_MAX], gp[ES_HOST_PATH_MAX];
    int64_t n = es_hs_get_str(m, c, upath, path, sizeof path);
    if (n < 0)
        return n;
    int r = es_hs_get_gp(m, c, G_AT_FDCWD, upath, gp, sizeof gp, false);
    strvec argv = {0}, envp = {0};
    uint8_t *data = NULL;
    size_t size = 0;
    if (!r)
        r = copy_strings(m, c, uargv, &argv);
    if (!r)
        r = copy_strings(m, c, uenvp, &envp);
    if (!r && !argv.n)
        r = sv_push(&argv, "", 0); /* Linux 4.17 allowed an empty argv */
    if (!r)
        r = open_image(m, gp, &data, &size);
    if (!r && size >= 2 && data[0] == '#' && data[1] == '!')
        r = script(m, path, &data, &size, &argv);
    if (!r && argv.n && argv.v[0] == NULL)
        r = -EFAULT;
    es_exec_start st = {0};
    if (!r) {
        char *const *ev = envp.v ? envp.v : (char *const[]){NULL};
        /* Linux ends the other threads once the image is known to load;
         * here the hook checks and loads in one step, so a valid ELF header
         * is the test (an exec that fails later leaves the caller alone) */
        if (size >= 4 && !memcmp(data, "\x7f" "ELF", 4))
            de_thread(m);
        struct es_vmas *before = m->vmas;
        r = m->hooks.exec(m, data, size, c->abi, argv.n, argv.v, ev, path, &st);
        if (m->vmas != before && m->host->world) /* the old one went to its keeper */
            es_hist_born(m->host->world, ES_HIST_VMAS, m->vmas);
        es_task *cur = es_task_cur(m);
        if (cur && cur->mm_live)
            cur->mm = es_vm_current(m); /* the reset made a new VMA list */
        if (r == ES_EXEC_DEAD) {
            es_hs_kill_self(m, 9); /* past the point of no return: SIGKILL */
            r = 0;
        } else if (!r) {
            reset_process(m, gp, path);
            es_host_set_brk(m, st.brk_start);
            r = start_regs(m, &st);
            es_task *t = es_task_cur(m);
            if (t)
                t->vfork_done = true;
        }
    }
    free(data);
    sv_free(&argv);
    sv_free(&envp);
    return r;
}

ES_SYS(execve) { return do_execve(m, c, a[0], a[1], a[2]); }
