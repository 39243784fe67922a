/* freestanding_x32.c - C without a libc for the x32 ABI: 64-bit registers,
 * 32-bit pointers, system calls with __X32_SYSCALL_BIT (0x40000000).
 * Built with -mx32 -ffreestanding -nostdlib -static. */
typedef unsigned int u32;
typedef unsigned long long u64;

#define X32 0x40000000

static long long sys3(long long nr, long long a, long long b, long long c)
{
    long long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(nr | X32), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
    return r;
}

static u32 len(const char *s)
{
    u32 n = 0;
    while (s[n])
        n++;
    return n;
}

static void puts1(const char *s) { sys3(1, 1, (long long)(u32)s, len(s)); }

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

__attribute__((used)) static void cmain(u32 *sp)
{
    u32 argc = sp[0];
    char **argv = (char **)(sp + 1); /* 4-byte pointers on the stack */
    puts1("freestanding x32: argc=");
    putu(argc);
    puts1(" sizeof(void*)=");
    putu(sizeof(void *));
    puts1("\n");
    for (u32 i = 1; i < argc; i++) {
        puts1("  arg ");
        puts1(argv[i]);
        puts1("\n");
    }
    u64 f = 1;
    for (u64 i = 1; i <= 20; i++)
        f *= i;
    puts1("20! = ");
    putu(f);
    puts1("\n");
    sys3(60, 5, 0, 0); /* exit(5) */
}

__asm__(".globl _start\n"
        "_start:\n"
        "  mov %esp, %edi\n"
        "  and $-16, %esp\n"
        "  call cmain\n"
        "  hlt\n");
