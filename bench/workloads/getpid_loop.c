/* getpid_loop.c - N getpid system calls and nothing else, for
 * bench/syscalls.sh: a static, libc-free program (x86-64: SYSCALL; built
 * with -m32: INT 0x80).  Prints "N getpid calls" and exits 0.
 *   usage: getpid_loop N */

#if defined(__x86_64__)
__asm__(".globl _start\n"
        "_start:\n"
        "  mov (%rsp), %rdi\n"
        "  lea 8(%rsp), %rsi\n"
        "  and $-16, %rsp\n"
        "  call main\n"
        "  mov %eax, %edi\n"
        "  mov $231, %eax\n" /* exit_group */
        "  syscall\n"
        "  hlt\n");

static long sys3(long nr, long a, long b, long c)
{
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(nr), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
    return r;
}
#define NR_GETPID 39
#define NR_WRITE 1
#else
__asm__(".globl _start\n"
        "_start:\n"
        "  mov (%esp), %eax\n"
        "  lea 4(%esp), %edx\n"
        "  and $-16, %esp\n"
        "  sub $8, %esp\n"
        "  push %edx\n"
        "  push %eax\n"
        "  call main\n"
        "  mov %eax, %ebx\n"
        "  mov $252, %eax\n" /* exit_group */
        "  int $0x80\n"
        "  hlt\n");

static long sys3(long nr, long a, long b, long c)
{
    long r;
    __asm__ volatile("int $0x80" : "=a"(r) : "a"(nr), "b"(a), "c"(b), "d"(c) : "memory");
    return r;
}
#define NR_GETPID 20
#define NR_WRITE 4
#endif

int main(int argc, char **argv);
int main(int argc, char **argv)
{
    unsigned long n = 1000000;
    if (argc > 1) {
        n = 0;
        for (const char *p = argv[1]; *p >= '0' && *p <= '9'; p++)
            n = n * 10 + (unsigned long)(*p - '0');
    }
    long pid = sys3(NR_GETPID, 0, 0, 0);
    for (unsigned long i = 0; i < n; i++)
        if (sys3(NR_GETPID, 0, 0, 0) != pid)
            return 1;
    char buf[48], *e = buf + sizeof buf, *p = e;
    const char tail[] = " getpid calls\n";
    for (int i = (int)sizeof tail - 2; i >= 0; i--)
        *--p = tail[i];
    unsigned long v = n;
    do
        *--p = (char)('0' + v % 10);
    while (v /= 10);
    sys3(NR_WRITE, 1, (long)p, (long)(e - p));
    return 0;
}
