/* freestanding32.c - C without a libc for i386: int 0x80 system calls,
 * 64-bit arithmetic through libgcc-free code, argv from the initial stack.
 * Built with -m32 -ffreestanding -nostdlib -static. */
typedef unsigned int u32;
typedef unsigned long long u64;

static int sys3(int nr, int a, int b, int c)
{
    int r;
    __asm__ volatile("int $0x80" : "=a"(r) : "a"(nr), "b"(a), "c"(b), "d"(c) : "memory");
    return r;
}

static u32 len(const char *s)
{
    u32 n = 0;
    while (s[n])
        n++;
    return n;
}

static void puts1(const char *s) { sys3(4, 1, (int)s, (int)len(s)); }

static void putu(u32 v)
{
    char b[12];
    int i = 11;
    b[i] = 0;
    do {
        b[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    puts1(b + i);
}

static void puthex64(u64 v)
{
    char b[17];
    for (int i = 15; i >= 0; i--) {
        b[i] = "0123456789abcdef"[v & 15];
        v >>= 4;
    }
    b[16] = 0;
    puts1(b);
}

__attribute__((used)) static void cmain(u32 *sp)
{
    u32 argc = sp[0];
    char **argv = (char **)(sp + 1);
    puts1("freestanding i386: argc=");
    putu(argc);
    puts1("\n");
    for (u32 i = 1; i < argc; i++) {
        puts1("  arg ");
        puts1(argv[i]);
        puts1("\n");
    }
    /* 64-bit arithmetic in 32-bit registers: add/adc, shifts, multiply */
    u64 h = 0xcbf29ce484222325ull;
    for (u32 i = 0; i < 100000; i++) {
        h ^= i & 0xff;
        h = (h << 5) + (h >> 3) + (u64)i * 0x9e3779b9u;
    }
    puts1("hash ");
    puthex64(h);
    puts1("\n");
    u32 primes = 0;
    for (u32 n = 2; n < 20000; n++) {
        u32 d = 2;
        while (d * d <= n && n % d)
            d++;
        if (d * d > n)
            primes++;
    }
    puts1("primes below 20000: ");
    putu(primes);
    puts1("\n");
    sys3(1, 7, 0, 0); /* exit(7) */
}

__asm__(".globl _start\n"
        "_start:\n"
        "  mov %esp, %eax\n"
        "  and $-16, %esp\n"
        "  sub $12, %esp\n"
        "  push %eax\n"
        "  call cmain\n"
        "  hlt\n");
