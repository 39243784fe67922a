/* fuzz_host.c - the host-services syscall layer (sim/host/) called with
 * random numbers and arguments, as a --direct guest would, with writes
 * allowed under a guest root that is a fresh tree under the process's own
 * temporary directory.  After every input the harness checks that
 * nothing escaped the root: the sibling of the root is left as it was,
 * and no host file descriptor stays open on a file of the box.
 *
 * Input: byte 0 = n, then n bytes copied to a scratch page of the guest
 * (paths, structures), then records of one call each: ABI byte, two number
 * bytes, six argument selectors (see arg()). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_util.h"
#include "host.h"
#include "launch.h"
#include "mem.h"
#include "vm.h"

#define FZ_SCRATCH 0x10000000ull
#define FZ_SCRATCH_LEN 0x4000ull
#define FZ_MAX_CALLS 16
#define SECRET "secret\n"

typedef struct input {
    const uint8_t *p, *end;
} input;

static uint8_t take(input *in)
{
    return in->p < in->end ? *in->p++ : 0;
}

static const uint64_t interesting[] = {
    0, 1, 2, 3, 4, 0xffffffffffffffffull, (uint64_t)-100 /* AT_FDCWD */, 0x7fffffff,
    0x80000000, 0xffffffff, 1ull << 63, 4096, 0x42 /* O_RDWR|O_CREAT */,
    0x241 /* O_WRONLY|O_CREAT|O_TRUNC */, 0x10000 /* O_DIRECTORY */, 0600, 0755,
    FZ_SCRATCH, FZ_SCRATCH + FZ_SCRATCH_LEN - 8, FZ_SCRATCH + FZ_SCRATCH_LEN,
    FZ_LOAD_VA, 0x7ffffffff000ull, 0xffffffffff600000ull, 0xffff800000000000ull,
    0x1000000000ull, 3 /* PROT_READ|PROT_WRITE */, 0x22 /* MAP_PRIVATE|MAP_ANONYMOUS */,
    0x32 /* |MAP_FIXED */, 0x100000,
};

/* One argument from its selector byte: small integers, pointers into the
 * scratch page, interesting values, or 8 raw bytes of the input. */
static uint64_t arg(input *in)
{
    uint8_t s = take(in);
    switch (s >> 6) {
    case 0: return (uint64_t)((int64_t)(s & 0x3f) - 8);
    case 1: return FZ_SCRATCH + (uint64_t)(s & 0x3f) * 64;
    case 2: return interesting[(s & 0x3f) % (sizeof interesting / sizeof interesting[0])];
    default: {
        uint64_t v = 0;
        for (int i = 0; i < 8; i++)
            v |= (uint64_t)take(in) << (8 * i);
        return v;
    }
    }
}

static char box[4200], root[4300], secret[4300], prog[4400];

static void put_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f)) {
        perror(path);
        abort();
    }
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    if (flag == FTW_DP) /* the guest may have taken our permissions away (not through a
                           symlink: chmod follows it) */
        chmod(p, 0700);
    return remove(p);
}

/* A fresh root: files, a directory, symlinks that point inside and out
 * (the host must resolve them within the root). */
static void fresh_root(void)
{
    static const uint8_t exit0[] = {0xb8, 0x3c, 0, 0, 0, 0x31, 0xff, 0x0f, 0x05};
    chmod(root, 0700);
    nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    char p[4500];
    if (mkdir(root, 0755))
        abort();
    snprintf(p, sizeof p, "%s/sub", root);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/hello.txt", root);
    put_file(p, "hello world\n");
    snprintf(p, sizeof p, "%s/esc", root);
    symlink("../secret.txt", p);
    snprintf(p, sizeof p, "%s/sub/up", root);
    symlink("../../..", p);
    snprintf(p, sizeof p, "%s/abs", root);
    symlink(secret, p);
    if (fz_write_elf(prog, false, exit0, sizeof exit0))
        abort();
}

/* Nothing but root/ and secret.txt in the box, and the secret intact. */
static void check_box(void)
{
    DIR *d = opendir(box);
    if (!d)
        abort();
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, "root") &&
            strcmp(e->d_name, "secret.txt")) {
            fprintf(stderr, "fuzz_host: escape: %s/%s created outside the root\n", box,
                    e->d_name);
            abort();
        }
    }
    closedir(d);
    char buf[64] = "";
    FILE *f = fopen(secret, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = 0;
    struct stat st;
    if (strcmp(buf, SECRET) || lstat(secret, &st) || !S_ISREG(st.st_mode) ||
        (st.st_mode & 0777) != 0600) {
        fprintf(stderr, "fuzz_host: escape: %s was changed (mode %o, \"%s\")\n", secret,
                (unsigned)st.st_mode, buf);
        abort();
    }
}

/* No host descriptor of the process is left on a file of the box (a
 * guest file that es_host_free did not close).  Descriptors elsewhere are
 * not the guest's: libFuzzer's symbolizer keeps pipes open, for one. */
static void check_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return;
    struct dirent *e;
    size_t n = strlen(box);
    while ((e = readdir(d))) {
        char link[300], target[4096];
        snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
        ssize_t len = readlink(link, target, sizeof target - 1);
        if (len <= 0)
            continue;
        target[len] = 0;
        if (strncmp(target, box, n) == 0 && (target[n] == '/' || !target[n])) {
            fprintf(stderr, "fuzz_host: host descriptor %s (%s) left open by the guest\n",
                    e->d_name, target);
            abort();
        }
    }
    closedir(d);
}

/* A call that blocks as Linux would (select with no descriptors and no
 * timeout, pause, a read of an empty pipe...) is interrupted after
 * FZ_CALL_MS by a signal whose handler does nothing (no SA_RESTART), so
 * the host's blocking system call returns EINTR.  A call that still does
 * not return is a hang libFuzzer reports (-timeout).  libFuzzer owns
 * SIGALRM, so the timer uses a real-time signal. */
#define FZ_CALL_MS 100

static void on_tick(int sig) {}

static timer_t call_timer(void)
{
    static timer_t t;
    static bool made;
    if (!made) {
        struct sigaction sa = {.sa_handler = on_tick};
        sigemptyset(&sa.sa_mask);
        struct sigevent ev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGRTMIN + 1};
        if (sigaction(SIGRTMIN + 1, &sa, NULL) || timer_create(CLOCK_MONOTONIC, &ev, &t))
            abort();
        made = true;
    }
    return t;
}

static int64_t call_bounded(es_machine *m, int abi, uint64_t nr, const uint64_t a[6])
{
    struct itimerspec on = {.it_value = {.tv_nsec = FZ_CALL_MS * 1000000L}}, off = {0};
    timer_settime(call_timer(), 0, &on, NULL);
    int64_t r = es_host_call(m, abi, nr, a);
    timer_settime(call_timer(), 0, &off, NULL);
    return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    static int trace = -1;
    if (trace < 0)
        trace = getenv("FZ_HOST_TRACE") != NULL;
    if (!box[0]) {
        snprintf(box, sizeof box, "%s/box", fz_tmpdir());
        snprintf(root, sizeof root, "%s/root", box);
        snprintf(secret, sizeof secret, "%s/secret.txt", box);
        snprintf(prog, sizeof prog, "%s/prog", root);
        if (mkdir(box, 0700))
            abort();
        put_file(secret, SECRET);
        chmod(secret, 0600);
    }
    fresh_root();
    es_machine *m = fz_launch(prog, root, true, true, 1000);
    if (!m)
        abort(); /* the program is fixed: a failed launch is a bug */
    input in = {data, data + size};
    uint8_t n = take(&in);
    uint8_t scratch[256] = {0};
    for (unsigned i = 0; i < n; i++)
        scratch[i] = take(&in);
    if (es_vm_map(m, FZ_SCRATCH, FZ_SCRATCH_LEN, ES_PROT_R | ES_PROT_W) ||
        es_copy_to_guest(m, FZ_SCRATCH, scratch, sizeof scratch))
        abort();
    for (int c = 0; c < FZ_MAX_CALLS && in.p < in.end && m->stop == ES_STOP_NONE; c++) {
        int abi = take(&in) % 3;
        uint64_t nr = take(&in) | (uint64_t)(take(&in) & 1) << 8;
        if (abi == ES_ABI_X32)
            nr |= ES_X32_SYSCALL_BIT;
        uint64_t a[6];
        for (int i = 0; i < 6; i++)
            a[i] = arg(&in);
        int64_t r = call_bounded(m, abi, nr, a);
        if (trace) /* FZ_HOST_TRACE=1: the calls of a crash, for its report */
            fprintf(stderr, "abi %d nr %#llx (%#llx, %#llx, %#llx, %#llx, %#llx, %#llx) = %lld\n",
                    abi, (unsigned long long)nr, (unsigned long long)a[0],
                    (unsigned long long)a[1], (unsigned long long)a[2],
                    (unsigned long long)a[3], (unsigned long long)a[4],
                    (unsigned long long)a[5], (long long)r);
    }
    es_launch_free(m);
    check_box();
    check_fds();
    return 0;
}
