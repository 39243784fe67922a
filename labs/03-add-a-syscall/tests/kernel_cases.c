/* kernel_cases.c - the grader's test program for sumarray (lab
 * 03-add-a-syscall): calls system call 333 with the raw SYSCALL
 * instruction (no libc wrapper, so the kernel's own return value is seen)
 * and prints one JSON object per case on stdout:
 *
 *     {"case": "...", "ok": true|false, "why": "..."}
 *
 * then {"done": N}.  argv[1] picks the group: visible (the cases the
 * handout lists), efault, einval, all.  The expected sums are computed here,
 * in user space; EFAULT and EINVAL are Linux's errno values
 * (include/uapi/asm-generic/errno-base.h, the host's <errno.h>).
 *
 * Built by grade.py with gcc -static -O1. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define NR_SUMARRAY 333
#define SUMARRAY_MAX 4096
#define SENTINEL 0x5a5a5a5a5a5a5a5aL
#define KERNEL_TEXT 0xffffffff81000000UL
#define NONCANON 0x0000800000000000UL

static long sc3(long a, long b, long c)
{
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"((long)NR_SUMARRAY), "D"(a), "S"(b), "d"(c)
                     : "rcx", "r11", "memory");
    return r;
}

/* The same call with junk in the registers sumarray does not declare. */
static long sc3_junk(long a, long b, long c)
{
    long r;
    register long r10 __asm__("r10") = 0x1010101010101010L;
    register long r8 __asm__("r8") = -1;
    register long r9 __asm__("r9") = (long)KERNEL_TEXT;
    __asm__ volatile("syscall" : "=a"(r) : "a"((long)NR_SUMARRAY), "D"(a), "S"(b), "d"(c),
                     "r"(r10), "r"(r8), "r"(r9) : "rcx", "r11", "memory");
    return r;
}

static int ncases, nfail;

static const char *errname(long r)
{
    static char buf[32];
    switch (r) {
    case 0: return "0";
    case -EFAULT: return "-EFAULT (-14)";
    case -EINVAL: return "-EINVAL (-22)";
    case -ENOSYS: return "-ENOSYS (-38)";
    }
    snprintf(buf, sizeof buf, "%ld", r);
    return buf;
}

static void report(const char *name, int ok, const char *why)
{
    ncases++;
    nfail += !ok;
    printf("{\"case\": \"%s\", \"ok\": %s, \"why\": \"%s\"}\n", name, ok ? "true" : "false",
           ok ? "" : why);
    fflush(stdout);
}

/* A call that must succeed: returns 0 and writes want to *out. */
static void expect_sum(const char *name, long r, const long *outp, long want)
{
    char why[256];
    long out = *outp; /* read after the call (argument order is unspecified) */
    if (r != 0)
        snprintf(why, sizeof why, "returned %s, want 0", errname(r));
    else if (out != want)
        snprintf(why, sizeof why, "returned 0 but *out = %ld, want %ld", out, want);
    report(name, r == 0 && out == want, why);
}

/* A call that must fail with err and leave *out (when readable) alone. */
static void expect_err(const char *name, long r, long err, const long *out)
{
    char why[256];
    int ok = r == -err;
    if (!ok)
        snprintf(why, sizeof why, "returned %s, want %s", errname(r), errname(-err));
    else if (out && *out != SENTINEL) {
        ok = 0;
        snprintf(why, sizeof why, "returned %s but wrote %ld to *out (write *out only on success)",
                 errname(r), *out);
    }
    report(name, ok, why);
}

static long big[SUMARRAY_MAX + 8];
static const long ro_values[4] = {11, -22, 33, -44};

/* Two pages, the second unmapped again: the returned page has nothing after it. */
static char *page_before_hole(void)
{
    char *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED || munmap(p + 4096, 4096)) {
        printf("{\"error\": \"mmap failed\"}\n");
        _exit(3);
    }
    return p;
}

static void visible(void)
{
    long a[100], out;
    for (int i = 0; i < 100; i++)
        a[i] = i + 1;
    out = SENTINEL;
    expect_sum("arr = 1..100, n = 100: sum 5050", sc3((long)a, 100, (long)&out), &out, 5050);
    long one = -7;
    out = SENTINEL;
    expect_sum("arr = {-7}, n = 1: sum -7", sc3((long)&one, 1, (long)&out), &out, -7);
    out = SENTINEL;
    expect_err("arr = NULL, n = 3: -EFAULT", sc3(0, 3, (long)&out), EFAULT, &out);
    expect_err("out = NULL: -EFAULT", sc3((long)a, 100, 0), EFAULT, NULL);
    out = SENTINEL;
    expect_err("n = 0: -EINVAL", sc3((long)a, 0, (long)&out), EINVAL, &out);
    out = SENTINEL;
    expect_err("n = 4097: -EINVAL", sc3((long)big, SUMARRAY_MAX + 1, (long)&out), EINVAL, &out);
}

static void efault(void)
{
    long a[16], out, want = 0;
    for (int i = 0; i < 16; i++)
        want += a[i] = (i % 2 ? -1 : 1) * (long)(i * 1000003L);

    out = SENTINEL;
    expect_err("arr = a kernel address (0xffffffff81000000): -EFAULT",
               sc3((long)KERNEL_TEXT, 4, (long)&out), EFAULT, &out);
    out = SENTINEL;
    expect_err("arr = a non-canonical address (0x800000000000): -EFAULT",
               sc3((long)NONCANON, 4, (long)&out), EFAULT, &out);
    out = SENTINEL;
    expect_err("arr = an unmapped user address (0x1000): -EFAULT", sc3(0x1000, 2, (long)&out),
               EFAULT, &out);

    char *p = page_before_hole();
    long *tail = (long *)(p + 4096) - 10; /* the page's last 10 longs */
    long tsum = 0;
    for (int i = 0; i < 10; i++)
        tsum += tail[i] = 100 + i;
    out = SENTINEL;
    expect_sum("arr = the last 10 longs of a page, n = 10 (ends exactly at the page's end)",
               sc3((long)tail, 10, (long)&out), &out, tsum);
    out = SENTINEL;
    expect_err("arr = the last 10 longs of a page, n = 11 (the 11th is unmapped): -EFAULT",
               sc3((long)tail, 11, (long)&out), EFAULT, &out);

    expect_err("out = a kernel address (0xffffffff81000000): -EFAULT",
               sc3((long)a, 16, (long)KERNEL_TEXT), EFAULT, NULL);
    expect_err("out = a non-canonical address: -EFAULT", sc3((long)a, 16, (long)NONCANON), EFAULT,
               NULL);
    long *ro = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    *ro = SENTINEL;
    mprotect(ro, 4096, PROT_READ);
    expect_err("out = a read-only page: -EFAULT", sc3((long)a, 16, (long)ro), EFAULT, ro);
    expect_err("out = the last 4 bytes of a page before an unmapped one: -EFAULT",
               sc3((long)a, 16, (long)(p + 4092)), EFAULT, NULL);

    out = SENTINEL;
    expect_sum("arr = a read-only page (reading it is fine)",
               sc3((long)ro_values, 4, (long)&out), &out, 11 - 22 + 33 - 44);
    out = SENTINEL;
    expect_sum("the same call with junk in r10, r8, r9", sc3_junk((long)a, 16, (long)&out), &out,
               want);
    /* the call still works after all those faults */
    out = SENTINEL;
    expect_sum("a good call after the faults", sc3((long)a, 16, (long)&out), &out, want);
}

static void einval(void)
{
    long out, want = 0;
    unsigned long x = 12345;
    for (int i = 0; i < SUMARRAY_MAX; i++) {
        x = x * 6364136223846793005UL + 1442695040888963407UL;
        big[i] = (long)(x >> 24) - (1L << 39); /* +-2^39: no overflow in 4096 terms */
        want += big[i];
    }
    out = SENTINEL;
    expect_sum("n = 4096 (the largest n), 32 KiB over 9 pages", sc3((long)big, SUMARRAY_MAX,
               (long)&out), &out, want);

    char raw[8 * 20 + 8];
    long uwant = 0;
    for (int i = 0; i < 20; i++) {
        long v = (i - 10) * 7777777L;
        memcpy(raw + 3 + 8 * i, &v, 8);
        uwant += v;
    }
    out = SENTINEL;
    expect_sum("arr not 8-byte aligned", sc3((long)(raw + 3), 20, (long)&out), &out, uwant);

    out = SENTINEL;
    expect_err("n = 2^32 + 5 (not 5: n is an unsigned long): -EINVAL",
               sc3((long)big, (1L << 32) + 5, (long)&out), EINVAL, &out);
    out = SENTINEL;
    expect_err("n = 2^61 + 1 (n * 8 wraps to 8): -EINVAL", sc3((long)big, (1L << 61) + 1,
               (long)&out), EINVAL, &out);
    out = SENTINEL;
    expect_err("n = ULONG_MAX: -EINVAL", sc3((long)big, -1L, (long)&out), EINVAL, &out);
    out = SENTINEL;
    expect_err("n = 0 with arr = NULL (n is checked first): -EINVAL", sc3(0, 0, (long)&out),
               EINVAL, &out);
    expect_err("n = 5000 with out = NULL (n is checked first): -EINVAL", sc3((long)big, 5000, 0),
               EINVAL, NULL);
}

int main(int argc, char **argv)
{
    const char *group = argc > 1 ? argv[1] : "all";
    int all = !strcmp(group, "all");
    if (all || !strcmp(group, "visible"))
        visible();
    if (all || !strcmp(group, "efault"))
        efault();
    if (all || !strcmp(group, "einval"))
        einval();
    printf("{\"done\": %d, \"failed\": %d}\n", ncases, nfail);
    return nfail ? 1 : 0;
}
