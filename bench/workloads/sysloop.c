/* sysloop.c - the bench matrix's workload: N system calls of one kind
 * through one entry path, and nothing else of note.  Freestanding (no libc,
 * so the only kernel entries are the measured ones plus exit and one line
 * of output) and built three ways by bench/CMakeLists.txt:
 *   sysloop64   x86-64:  syscall64 (SYSCALL), vsyscall (call into the
 *               legacy vsyscall page at 0xffffffffff600000)
 *   sysloop32   i386:    int80 (INT $0x80), sysenter32 / syscall32 (call
 *               __kernel_vsyscall from AT_SYSINFO; the vDSO the kernel maps
 *               uses SYSENTER on Intel and SYSCALL on AMD, so which of the
 *               two runs is chosen by `entrysim run --cpu`)
 *   sysloopx32  x32:     x32 (SYSCALL with __X32_SYSCALL_BIT)
 *
 *   usage: sysloop ENTRY SYSCALL N
 *   SYSCALL: getpid getppid read write gettimeofday time getcpu
 *
 * Every call's result is checked (a broken entry path must fail the cell,
 * not produce a cycle count): exit 0 and "sysloop: N ENTRY SYSCALL" on
 * stdout when all N calls behaved; exit 1 with a message otherwise; exit 2
 * on bad arguments.  Syscall numbers come from the kernel model's generated
 * syscall_nrs.h (tables/*.tbl), not from this file. */
#include "syscall_nrs.h"

#define AT_NULL 0
#define AT_SYSINFO 32 /* include/uapi/linux/auxvec.h (i386: __kernel_vsyscall) */

#if defined(__x86_64__) && defined(__ILP32__)
/* arch/x86/include/uapi/asm/unistd.h: x32 numbers are the common 64-bit
 * ones with bit 30 set */
#define X32_SYSCALL_BIT 0x40000000L
#define NR(n) (ES_NR64_##n | X32_SYSCALL_BIT)
#define ABI_X32 1
#elif defined(__x86_64__)
#define NR(n) ES_NR64_##n
#define ABI_64 1
#else
#define NR(n) ES_NR32_##n
#define ABI_32 1
#endif

/* the vsyscall page's three entry points, 1 KiB apart
 * (arch/x86/entry/vsyscall/vsyscall_emu_64.S) */
#if defined(ABI_64)
#define VSYSCALL_GETTIMEOFDAY 0xffffffffff600000UL
#define VSYSCALL_TIME 0xffffffffff600400UL
#define VSYSCALL_GETCPU 0xffffffffff600800UL
#else
#define VSYSCALL_GETTIMEOFDAY 0UL /* no vsyscall page outside 64-bit mode */
#define VSYSCALL_TIME 0UL
#define VSYSCALL_GETCPU 0UL
#endif

#if defined(__x86_64__)
__asm__(".globl _start\n"
        "_start:\n"
        "  mov %rsp, %rdi\n"
        "  and $-16, %rsp\n"
        "  call cstart\n"
        "  hlt\n");
#else
__asm__(".globl _start\n"
        "_start:\n"
        "  mov %esp, %eax\n"
        "  and $-16, %esp\n"
        "  sub $12, %esp\n"
        "  push %eax\n"
        "  call cstart\n"
        "  hlt\n");
#endif

/* The native entry of this ABI: SYSCALL (x86-64, x32) or INT $0x80. */
static long native3(long nr, long a, long b, long c)
{
    long r;
#if defined(__x86_64__)
    __asm__ volatile("syscall" : "=a"(r) : "a"(nr), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
#else
    __asm__ volatile("int $0x80" : "=a"(r) : "a"(nr), "b"(a), "c"(b), "d"(c) : "memory");
#endif
    return r;
}

#if defined(ABI_32)
/* __kernel_vsyscall takes the INT $0x80 registers and preserves all but
 * EAX (arch/x86/entry/vdso/vdso32/system_call.S) */
static long vdso3(unsigned long fn, long nr, long a, long b, long c)
{
    long r;
    __asm__ volatile("call *%[fn]"
                     : "=a"(r)
                     : [fn] "m"(fn), "a"(nr), "b"(a), "c"(b), "d"(c)
                     : "memory");
    return r;
}
#endif

#if defined(ABI_64)
/* A vsyscall is an ordinary SysV call (built with -mno-red-zone: the CALL
 * pushes below the stack pointer). */
static long vcall3(unsigned long fn, long a, long b, long c)
{
    register long r8 __asm__("r8");
    register long r9 __asm__("r9");
    register long r10 __asm__("r10");
    register long r11 __asm__("r11");
    long r;
    __asm__ volatile("call *%%rax"
                     : "=a"(r), "+D"(a), "+S"(b), "+d"(c), "=r"(r8), "=r"(r9), "=r"(r10),
                       "=r"(r11)
                     : "a"(fn)
                     : "rcx", "memory", "cc");
    (void)r8, (void)r9, (void)r10, (void)r11;
    return r;
}
#endif

static int streq(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}

static unsigned long slen(const char *s)
{
    unsigned long n = 0;
    while (s[n])
        n++;
    return n;
}

static void say(const char *s)
{
    native3(NR(write), 1, (long)s, (long)slen(s));
}

static void die(int status, const char *a, const char *b)
{
    native3(NR(write), 2, (long)a, (long)slen(a));
    native3(NR(write), 2, (long)b, (long)slen(b));
    native3(NR(write), 2, (long)"\n", 1);
    native3(NR(exit_group), status, 0, 0);
    for (;;)
        ;
}

enum kind { K_GETPID, K_GETPPID, K_READ, K_WRITE, K_GETTIMEOFDAY, K_TIME, K_GETCPU };
static const char *const kind_names[] = {"getpid", "getppid", "read",  "write",
                                         "gettimeofday", "time", "getcpu"};
#define NKINDS (int)(sizeof kind_names / sizeof kind_names[0])

enum entry { E_NATIVE, E_VSYSCALL, E_VDSO };

struct call {
    long nr, a, b, c;
    unsigned long vsyscall; /* entry point in the vsyscall page */
};

static long long buf[4]; /* timeval / time_t / getcpu outputs, read byte */

static struct call make_call(enum kind k)
{
    struct call c = {0, 0, 0, 0, 0};
    switch (k) {
    case K_GETPID: c.nr = NR(getpid); break;
    case K_GETPPID: c.nr = NR(getppid); break;
    case K_READ: c.nr = NR(read), c.a = 0, c.b = (long)buf, c.c = 1; break; /* stdin: /dev/null */
    case K_WRITE: c.nr = NR(write), c.a = 1, c.b = (long)".", c.c = 1; break;
    case K_GETTIMEOFDAY:
        c.nr = NR(gettimeofday), c.a = (long)buf, c.vsyscall = VSYSCALL_GETTIMEOFDAY;
        break;
    case K_TIME: c.nr = NR(time), c.a = (long)buf, c.vsyscall = VSYSCALL_TIME; break;
    case K_GETCPU:
        c.nr = NR(getcpu), c.a = (long)&buf[0], c.b = (long)&buf[1], c.vsyscall = VSYSCALL_GETCPU;
        break;
    }
    return c;
}

/* The program: arguments, then the timed loop for each syscall.  (Long on
 * purpose: a freestanding workload with no libc, its whole flow visible in
 * one function, so what a bench cell measures can be read top to bottom.) */
void cstart(unsigned long *sp);
void cstart(unsigned long *sp)
{
    long argc = (long)sp[0];
    char **argv = (char **)(sp + 1);
    char **envp = argv + argc + 1;
    while (*envp)
        envp++;
    unsigned long sysinfo = 0;
    for (unsigned long *av = (unsigned long *)(envp + 1); av[0] != AT_NULL; av += 2)
        if (av[0] == AT_SYSINFO)
            sysinfo = av[1];
    if (argc != 4)
        die(2, "usage: sysloop ENTRY SYSCALL N", "");

    enum entry e;
    const char *en = argv[1];
#if defined(ABI_64)
    if (streq(en, "syscall64"))
        e = E_NATIVE;
    else if (streq(en, "vsyscall"))
        e = E_VSYSCALL;
    else
        die(2, "sysloop64: entry must be syscall64 or vsyscall, not ", en);
#elif defined(ABI_X32)
    if (streq(en, "x32"))
        e = E_NATIVE;
    else
        die(2, "sysloopx32: entry must be x32, not ", en);
#else
    if (streq(en, "int80"))
        e = E_NATIVE;
    else if (streq(en, "sysenter32") || streq(en, "syscall32"))
        e = E_VDSO;
    else
        die(2, "sysloop32: entry must be int80, sysenter32 or syscall32, not ", en);
    if (e == E_VDSO && !sysinfo)
        die(1, "sysloop32: no AT_SYSINFO (no vDSO) for ", en);
#endif
    (void)sysinfo;

    int k = -1;
    for (int i = 0; i < NKINDS; i++)
        if (streq(argv[2], kind_names[i]))
            k = i;
    if (k < 0)
        die(2, "sysloop: unknown syscall ", argv[2]);
    struct call c = make_call((enum kind)k);
    if (e == E_VSYSCALL && !c.vsyscall)
        die(2, "sysloop: the vsyscall page has no ", argv[2]);

    unsigned long n = 0;
    for (const char *p = argv[3]; *p; p++) {
        if (*p < '0' || *p > '9')
            die(2, "sysloop: N must be a decimal number: ", argv[3]);
        n = n * 10 + (unsigned long)(*p - '0');
    }

    long first = 0;
    for (unsigned long i = 0; i < n; i++) {
        long r;
#if defined(ABI_64)
        r = e == E_VSYSCALL ? vcall3(c.vsyscall, c.a, c.b, c.c) : native3(c.nr, c.a, c.b, c.c);
#elif defined(ABI_32)
        r = e == E_VDSO ? vdso3(sysinfo, c.nr, c.a, c.b, c.c) : native3(c.nr, c.a, c.b, c.c);
#else
        r = native3(c.nr, c.a, c.b, c.c);
#endif
        /* expected results: ids are stable, read hits EOF, write writes
         * its byte, time returns the time it stores, the rest return 0 */
        int ok;
        switch ((enum kind)k) {
        case K_GETPID:
        case K_GETPPID: ok = r > 0 && (i == 0 || r == first); break;
        case K_READ: ok = r == 0; break;
        case K_WRITE: ok = r == 1; break;
        case K_TIME: ok = r > 0 && r == (long)buf[0]; break;
        default: ok = r == 0; break;
        }
        if (!ok)
            die(1, "sysloop: unexpected result from ", argv[2]);
        if (i == 0)
            first = r;
    }

    /* "sysloop: N ENTRY SYSCALL\n", built forwards (bounded: argv[1]
     * and argv[2] were matched against short names above) */
    char line[96], digits[24], *p = line, *d = digits;
    unsigned long v = n;
    do
        *d++ = (char)('0' + v % 10);
    while (v /= 10);
    for (const char *q = "sysloop: "; *q;)
        *p++ = *q++;
    while (d > digits)
        *p++ = *--d;
    *p++ = ' ';
    for (const char *q = argv[1]; *q;)
        *p++ = *q++;
    *p++ = ' ';
    for (const char *q = argv[2]; *q;)
        *p++ = *q++;
    *p++ = '\n';
    *p = 0;
    say(line);
    native3(NR(exit_group), 0, 0, 0);
    for (;;)
        ;
}
