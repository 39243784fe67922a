/* ldt.c - modify_ldt(2): an LDT data segment loaded into a segment
 * register the C library leaves alone (FS on i386, GS on x86-64) and read
 * through it, the table read back (func 0) and the default one (func 2),
 * the old and new write modes, the errors Linux returns (as the raw
 * int-sized value the syscall gives), a selector past the table (#GP ->
 * SIGSEGV), and a fork child seeing the parent's LDT; on i386 also a far
 * call through an LDT code segment.  Built for i386 and x86-64
 * (tests/e2e/expected/ldt.out, i386_ldt.out: one line more).  Hosts
 * whose kernel refuses modify_ldt (ENOSYS: PVM guests) cannot run it
 * natively; the expected output follows arch/x86/kernel/ldt.c. */
#define _GNU_SOURCE
#include <asm/ldt.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static char buf[64] = "hello from an LDT segment";
static sigjmp_buf jb;

static void on_segv(int sig)
{
    (void)sig;
    siglongjmp(jb, 1);
}

/* The result as the int the ABI says it is: an x86-64 caller gets an
 * error zero-extended in RAX (glibc's syscall() then returns it as a
 * positive long), an i386 one gets -1 and errno from glibc. */
static int ldt(int func, void *p, unsigned long n)
{
    long r = syscall(SYS_modify_ldt, func, p, n);
    return r == -1 ? -errno : (int)r;
}

static struct user_desc desc(unsigned idx, uint32_t base, uint32_t limit)
{
    struct user_desc d;
    memset(&d, 0, sizeof d);
    d.entry_number = idx;
    d.base_addr = base;
    d.limit = limit;
    d.seg_32bit = 1;
    d.useable = 1;
    return d;
}

static unsigned sel(unsigned idx)
{
    return idx << 3 | 4 | 3; /* TI = 1, RPL 3 */
}

#ifdef __x86_64__
#define SEG "gs" /* glibc's TLS is FS here */
#else
#define SEG "fs" /* and GS here */
#endif

/* the byte at seg:off after loading selector s into SEG */
static int seg_byte(unsigned s, unsigned off)
{
    unsigned char c;
    unsigned old;
    __asm__ volatile("mov %%" SEG ", %0" : "=r"(old));
    __asm__ volatile("mov %1, %%" SEG "\n\tmovb %%" SEG ":(%2), %0\n\tmov %3, %%" SEG
                     : "=q"(c)
                     : "r"(s), "r"((uintptr_t)off), "r"(old));
    return c;
}

/* An entry without its base (which depends on the build), and whether the
 * base is want. */
static void show(const char *what, const uint32_t e[2], uint32_t want)
{
    uint32_t base = (e[0] >> 16) | (e[1] & 0xff) << 16 | (e[1] & 0xff000000);
    printf("  %s: limit %05x access %02x flags %x base %s\n", what,
           (e[0] & 0xffff) | (e[1] & 0xf0000), (e[1] >> 8) & 0xff, (e[1] >> 20) & 0xf,
           base == want ? "as written" : "other");
}

#ifndef __x86_64__
/* the target of a far call: returns 42 with a far return */
extern int ldt_far(void);
__asm__(".text\n.globl ldt_far\nldt_far:\n\tmovl $42, %eax\n\tlret\n");

static void far_call(void)
{
    struct user_desc c = desc(5, 0, 0xfffff);
    c.contents = 2; /* code, readable */
    c.limit_in_pages = 1;
    int r = ldt(0x11, &c, sizeof c);
    struct {
        uint32_t off;
        uint16_t sel;
    } __attribute__((packed)) fp = {(uint32_t)(uintptr_t)ldt_far, (uint16_t)sel(5)};
    int v;
    uint16_t cs;
    __asm__ volatile("lcall *%1" : "=a"(v) : "m"(fp) : "memory");
    __asm__ volatile("mov %%cs, %0" : "=r"(cs));
    printf("code segment %d; far call through it: %d, back in CS %#x\n", r, v, cs);
}
#endif

int main(void)
{
    struct user_desc d = desc(3, (uint32_t)(uintptr_t)buf, sizeof buf - 1);
    uint32_t b = (uint32_t)(uintptr_t)buf;
    printf("write new mode: %d\n", ldt(0x11, &d, sizeof d));
    printf("seg:11 through entry 3: %c%c%c\n", seg_byte(sel(3), 11), seg_byte(sel(3), 12),
           seg_byte(sel(3), 13));

    uint32_t raw[10][2];
    memset(raw, 0xee, sizeof raw);
    int n = ldt(0, raw, sizeof raw);
    printf("read: %d\n", n);
    show("entry 3", raw[3], b);
    printf("  entries 0-2, 4-9 (4-9 zero-filled): %s\n",
           raw[0][0] | raw[0][1] | raw[1][0] | raw[1][1] | raw[2][0] | raw[2][1] | raw[4][0] |
                   raw[9][1]
               ? "not zero"
               : "zero");

    /* old mode: AVL dropped; base 0 and limit 0 clears */
    struct user_desc o = desc(1, 0x1000, 0x10);
    printf("write old mode: %d\n", ldt(1, &o, sizeof o));
    ldt(0, raw, sizeof raw);
    show("entry 1", raw[1], 0x1000);
    o = desc(1, 0, 0);
    printf("clear (old mode): %d\n", ldt(1, &o, sizeof o));
    ldt(0, raw, sizeof raw);
    printf("  entry 1: %08x %08x\n", raw[1][1], raw[1][0]);

    unsigned char def[200];
    memset(def, 0xee, sizeof def);
    n = ldt(2, def, sizeof def);
    printf("read default: %d (byte 0 %02x, 127 %02x, 128 %02x)\n", n, def[0], def[127], def[128]);

    struct user_desc bad = desc(8192, 0, 0);
    printf("entry 8192: %d\n", ldt(0x11, &bad, sizeof bad));
    printf("bytecount 15: %d\n", ldt(0x11, &d, 15));
    bad = desc(2, 0, 0xfff);
    bad.contents = 3;
    printf("conforming, old mode: %d\n", ldt(1, &bad, sizeof bad));
    printf("conforming, present: %d\n", ldt(0x11, &bad, sizeof bad));
    bad.seg_not_present = 1;
    printf("conforming, not present: %d\n", ldt(0x11, &bad, sizeof bad));
    printf("func 7: %d\n", ldt(7, &d, sizeof d));
    printf("bad pointer: %d\n", ldt(0x11, (void *)16, sizeof d));
    /* what the register holds: an int (Linux 4.17 casts SYSCALL_DEFINE3's
     * long to unsigned int; the asmlinkage int before it left the same) */
    long reg = syscall(SYS_modify_ldt, 7, &d, sizeof d);
#ifdef __x86_64__
    int as_int = reg == 0xffffffdaL; /* -ENOSYS zero-extended in RAX */
#else
    int as_int = reg == -1 && errno == ENOSYS;
#endif
    printf("the error is an int in the register: %s\n", as_int ? "yes" : "no");

    signal(SIGSEGV, on_segv);
    if (!sigsetjmp(jb, 1))
        printf("entry 100: %c\n", seg_byte(sel(100), 0));
    else
        printf("entry 100: SIGSEGV (past the table)\n");

#ifndef __x86_64__
    far_call();
#endif
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        printf("child seg:0 through entry 3: %c\n", seg_byte(sel(3), 0));
        return 0;
    }
    int st;
    waitpid(pid, &st, 0);
    printf("child exited %d\n", WEXITSTATUS(st));
    return 0;
}
