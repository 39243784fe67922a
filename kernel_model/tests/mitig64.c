/* mitig64.c - a 64-bit guest for the mitigation tests (tests/test_mitigations.cc
 * and the kernel_entry_paths runs with --mitigations): no libc, its own
 * _start.
 *
 *   mitig64 run          write, getpid by SYSCALL and by INT 0x80 (must
 *                        agree), mmap a page at 0x7e0000000000 (a PML4 slot
 *                        no other mapping uses: under pti both PGDs must see
 *                        the new upper table), store a message there, write it
 *                        from there, munmap; exit 42 when all went right
 *   mitig64 peek HEX     read 8 bytes at address HEX from user mode (a
 *                        kernel address faults: SIGSEGV) */
typedef unsigned long u64;
typedef long i64;

static i64 sys6(i64 nr, i64 a, i64 b, i64 c, i64 d, i64 e, i64 f)
{
    register i64 r10 __asm__("r10") = d;
    register i64 r8 __asm__("r8") = e;
    register i64 r9 __asm__("r9") = f;
    i64 r;
    __asm__ volatile("syscall"
                     : "=a"(r)
                     : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return r;
}

static i64 int80(i64 nr)
{
    i64 r;
    /* the compat entry saves r8-r11 as 0 (32-bit tasks have none) */
    __asm__ volatile("int $0x80" : "=a"(r) : "a"(nr) : "r8", "r9", "r10", "r11", "memory");
    return r;
}

static u64 len(const char *s)
{
    u64 n = 0;
    while (s[n])
        n++;
    return n;
}

static void puts1(const char *s) { sys6(1, 1, (i64)s, (i64)len(s), 0, 0, 0); }

static __attribute__((noreturn)) void die(int code)
{
    for (;;)
        sys6(231, code, 0, 0, 0, 0, 0);
}

static int streq(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}

static u64 hex(const char *s)
{
    u64 v = 0;
    for (; *s; s++)
        v = v * 16 + (u64)(*s <= '9' ? *s - '0' : (*s | 0x20) - 'a' + 10);
    return v;
}

static int run(void)
{
    puts1("mitig64: start\n");
    i64 pid = sys6(39, 0, 0, 0, 0, 0, 0);
    if (pid <= 0 || int80(20) != pid)
        return 1;
    const u64 at = 0x7e0000000000ul;
    i64 p = sys6(9, (i64)at, 4096, 3 /* RW */, 0x32 /* PRIVATE|ANON|FIXED */, -1, 0);
    if ((u64)p != at)
        return 2;
    const char msg[] = "mitig64: from a new page\n";
    char *q = (char *)p;
    for (u64 i = 0; i < sizeof msg; i++)
        q[i] = msg[i];
    if (sys6(1, 1, p, (i64)(sizeof msg - 1), 0, 0, 0) != (i64)(sizeof msg - 1))
        return 3;
    if (sys6(11, p, 4096, 0, 0, 0, 0) != 0)
        return 4;
    puts1("mitig64: done\n");
    return 42;
}

__attribute__((used)) static void start_c(u64 *sp)
{
    u64 argc = sp[0];
    char **argv = (char **)(sp + 1);
    if (argc >= 2 && streq(argv[1], "run"))
        die(run());
    if (argc >= 3 && streq(argv[1], "peek")) {
        volatile u64 *a = (volatile u64 *)hex(argv[2]);
        u64 v = *a;
        die((int)(v & 1));
    }
    puts1("usage: mitig64 run | peek HEX\n");
    die(2);
}

__asm__(".globl _start\n_start:\n\tmov %rsp, %rdi\n\tand $-16, %rsp\n\tcall start_c\n\thlt\n");
