/* sdk_uaccess.c - the guest of the kernel_uaccess test: calls the student
 * system calls of kernel_uaccess.sh (numbers NR_UCOPY, NR_UGET, NR_UPUT,
 * NR_USTR, NR_WHOAMI given with -D) with good and bad user pointers and
 * exits with the number of the first check that failed (0: all passed).
 * Freestanding x86-64 (no libc): raw SYSCALL. */
typedef unsigned long ul;

static long sc(long nr, long a, long b, long c)
{
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(nr), "D"(a), "S"(b), "d"(c)
                     : "rcx", "r11", "memory");
    return r;
}

static long sc6(long nr, long a, long b, long c, long d, long e, long f)
{
    long r;
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    __asm__ volatile("syscall" : "=a"(r) : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8),
                     "r"(r9) : "rcx", "r11", "memory");
    return r;
}

#define EFAULT 14
#define KERNEL_TEXT 0xffffffff81000000ul
#define NONCANON 0x0000800000000000ul /* the first address past user space's hole */
#define TASK_SIZE_MAX ((1ul << 47) - 4096)

static const char rodata[8] = "const!!";
static int check_no;
#define CHECK(cond)                                                                          \
    do {                                                                                     \
        check_no++;                                                                          \
        if (!(cond))                                                                         \
            sc(60, check_no, 0, 0);                                                          \
    } while (0)

/* copy_from_user/copy_to_user: whole, partial at an unmapped page, bad */
static void check_copies(char *page)
{
    char out[8];
    const char *src = page + 4096 - 3; /* "abc" then the unmapped page */
    page[4093] = 'a', page[4094] = 'b', page[4095] = 'c';
    for (int i = 0; i < 8; i++)
        out[i] = 'x';
    CHECK(sc(NR_UCOPY, (long)out, (long)"hello", 6) == 0);
    CHECK(out[0] == 'H' && out[4] == 'O' && out[5] == 0 && out[6] == 'x');
    /* 5 bytes not copied from user; the tail is zeroed, all 8 go back */
    CHECK(sc(NR_UCOPY, (long)out, (long)src, 8) == (5l << 16));
    CHECK(out[0] == 'A' && out[2] == 'C' && out[3] == 0 && out[7] == 0);
    CHECK(sc(NR_UCOPY, (long)out, (long)KERNEL_TEXT, 8) == (8l << 16));
    CHECK(sc(NR_UCOPY, (long)out, (long)NONCANON, 8) == (8l << 16));
    CHECK(sc(NR_UCOPY, (long)KERNEL_TEXT, (long)"hi", 2) == 2);       /* to kernel: nothing */
    CHECK(sc(NR_UCOPY, (long)(page + 4094), (long)"wxyz", 4) == 2);   /* 2 written, 2 not */
    CHECK(page[4094] == 'W' && page[4095] == 'X');
    CHECK(sc(NR_UCOPY, (long)rodata, (long)"hi", 2) == 2);            /* read-only page */
    CHECK(rodata[0] == 'c');
}

/* get_user/put_user of each size, and every kind of bad pointer */
static void check_get_put(char *page)
{
    long v = 0x1122334455667788l;
    CHECK(sc(NR_UGET, (long)&v, 8, 0) == 0x1122334455667788l);
    CHECK(sc(NR_UGET, (long)&v, 4, 0) == 0x55667788l);
    CHECK(sc(NR_UGET, (long)&v, 2, 0) == 0x7788l);
    CHECK(sc(NR_UGET, (long)&v, 1, 0) == 0x88l);
    for (int size = 1; size <= 8; size *= 2) {
        CHECK(sc(NR_UGET, (long)KERNEL_TEXT, size, 0) == -EFAULT);
        CHECK(sc(NR_UGET, (long)NONCANON, size, 0) == -EFAULT);
        CHECK(sc(NR_UGET, 0x8000000000000000l, size, 0) == -EFAULT);
        CHECK(sc(NR_UGET, 16, size, 0) == -EFAULT);                  /* unmapped */
        CHECK(sc(NR_UGET, (long)(page + 4096), size, 0) == -EFAULT);
        CHECK(sc(NR_UGET, (long)(TASK_SIZE_MAX - size + 1), size, 0) == -EFAULT);
        CHECK(sc(NR_UPUT, (long)KERNEL_TEXT, size, 1) == -EFAULT);
        CHECK(sc(NR_UPUT, (long)NONCANON, size, 1) == -EFAULT);
        CHECK(sc(NR_UPUT, (long)rodata, size, 1) == -EFAULT);
        CHECK(sc(NR_UPUT, (long)(page + 4096), size, 1) == -EFAULT);
    }
    CHECK(rodata[0] == 'c');
    long w = 0;
    CHECK(sc(NR_UPUT, (long)&w, 8, -2) == 0 && w == -2);
    w = 0;
    CHECK(sc(NR_UPUT, (long)&w, 2, -1) == 0 && w == 0xffff);
    CHECK(sc(NR_UPUT, (long)(page + 4095), 1, 'z') == 0 && page[4095] == 'z');
    CHECK(sc(NR_UPUT, (long)(page + 4094), 4, 1) == -EFAULT);       /* straddles */
    CHECK(page[4094] == 'W');                                          /* untouched */
}

/* strncpy_from_user: length, truncation, faults */
static void check_strings(char *page)
{
    CHECK(sc(NR_USTR, (long)"hello", 32, 0) == 5);
    CHECK(sc(NR_USTR, (long)"hello", 3, 0) == 3);                    /* no NUL within 3 */
    CHECK(sc(NR_USTR, (long)"", 32, 0) == 0);
    CHECK(sc(NR_USTR, (long)(page + 4093), 32, 0) == -EFAULT);       /* runs off the page */
    page[4095] = 0;
    CHECK(sc(NR_USTR, (long)(page + 4093), 32, 0) == 2);             /* ends in time */
    CHECK(sc(NR_USTR, (long)KERNEL_TEXT, 32, 0) == -EFAULT);
    CHECK(sc(NR_USTR, (long)NONCANON, 32, 0) == -EFAULT);
    CHECK(sc(NR_USTR, 16, 32, 0) == -EFAULT);
}

void _start(void)
{
    /* two pages, the second unmapped again: a page with nothing after it */
    char *page = (char *)sc6(9, 0, 8192, 3, 0x22, -1, 0);
    if ((ul)page > -4096ul || sc(11, (long)(page + 4096), 4096, 0))
        sc(60, 100, 0, 0);
    check_copies(page);
    check_get_put(page);
    check_strings(page);
    CHECK(sc(NR_WHOAMI, 0, 0, 0) == sc(39, 0, 0, 0)); /* current->pid == getpid() */
    sc(60, 0, 0, 0);
    for (;;)
        ;
}
