/* freestanding.c - C without a libc (x86-64): its own _start, syscall
 * wrappers, number formatting, argv and auxv walking, a little arithmetic.
 * Built with -ffreestanding -nostdlib -static. */
typedef unsigned long u64;
typedef long i64;

static i64 sys3(i64 nr, i64 a, i64 b, i64 c)
{
    i64 r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(nr), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
    return r;
}

static u64 len(const char *s)
{
    u64 n = 0;
    while (s[n])
        n++;
    return n;
}

static void puts1(const char *s) { sys3(1, 1, (i64)s, (i64)len(s)); }

static void putu(u64 v)
{
    char b[24];
    int i = 23;
    b[i] = 0;
    do {
        b[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    puts1(b + i);
}

static u64 collatz_steps(u64 n)
{
    u64 s = 0;
    while (n != 1) {
        n = (n & 1) ? 3 * n + 1 : n / 2;
        s++;
    }
    return s;
}

/* called from _start with the initial stack pointer */
__attribute__((used)) static void cmain(u64 *sp)
{
    u64 argc = sp[0];
    char **argv = (char **)(sp + 1);
    char **envp = argv + argc + 1;
    while (*envp)
        envp++;
    u64 *auxv = (u64 *)(envp + 1);
    u64 pagesz = 0;
    for (u64 *a = auxv; a[0]; a += 2)
        if (a[0] == 6)
            pagesz = a[1];

    puts1("freestanding x86-64: argc=");
    putu(argc);
    puts1("\n");
    for (u64 i = 0; i < argc; i++) {
        puts1("  argv[");
        putu(i);
        puts1("]=");
        puts1(i == 0 ? "(program)" : argv[i]);
        puts1("\n");
    }
    puts1("page size ");
    putu(pagesz);
    puts1("\n");
    u64 best = 0, arg = 0;
    for (u64 n = 1; n < 30000; n++) {
        u64 s = collatz_steps(n);
        if (s > best) {
            best = s;
            arg = n;
        }
    }
    puts1("longest Collatz chain below 30000: ");
    putu(arg);
    puts1(" (");
    putu(best);
    puts1(" steps)\n");
    /* signed division and shifts */
    i64 x = -1234567;
    putu((u64)(x / 7 + 1000000));
    puts1(" ");
    putu((u64)(x % 7 + 10));
    puts1(" ");
    putu((u64)((x >> 3) + 1000000));
    puts1("\n");
    sys3(231, (i64)(argc + 10), 0, 0);
}

__asm__(".globl _start\n"
        "_start:\n"
        "  mov %rsp, %rdi\n"
        "  and $-16, %rsp\n"
        "  call cmain\n"
        "  hlt\n");
