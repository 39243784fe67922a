/* host_syscall.c - the host's own system-call round trip in core cycles,
 * to set beside the model's (docs/TIMING.md): getpid through SYSCALL and,
 * when the kernel allows it, through INT 0x80 from 64-bit code.  Timed with
 * RDTSCP between LFENCEs and converted to core cycles with a chain of
 * dependent 1-cycle ADDs timed the same way (no hardware counters here);
 * minimum over 30 repetitions.  Run it on an idle machine.
 *   usage: es_host_syscall [CALLS]      (default 20000 per repetition) */
#define _GNU_SOURCE
#include <signal.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <x86intrin.h>

static uint64_t tsc(void) { unsigned a; _mm_lfence(); uint64_t t = __rdtscp(&a); _mm_lfence(); return t; }

/* TSC ticks per core cycle: 1M dependent adds take 1M cycles */
static double ticks_per_cycle(void)
{
    double best = 1e9;
    for (int r = 0; r < 50; r++) {
        uint64_t x = 0, t0 = tsc();
        for (int i = 0; i < 10000; i++)
            __asm__ volatile(".rept 100\n add $1, %0\n .endr" : "+r"(x));
        uint64_t t1 = tsc();
        double v = (double)(t1 - t0) / 1e6;
        if (v < best) best = v;
    }
    return best;
}

static long sys_getpid_syscall(void)
{
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(39) : "rcx", "r11", "memory");
    return r;
}

static long sys_getpid_int80(void)
{
    long r;
    __asm__ volatile("int $0x80" : "=a"(r) : "a"(20) : "memory");
    return r;
}

static sigjmp_buf jb;
static void on_sig(int s) { (void)s; siglongjmp(jb, 1); }

static double per_call(long (*f)(void), int n)
{
    double best = 1e18;
    for (int r = 0; r < 30; r++) {
        uint64_t t0 = tsc();
        for (int i = 0; i < n; i++)
            f();
        uint64_t t1 = tsc();
        double v = (double)(t1 - t0) / n;
        if (v < best) best = v;
    }
    return best;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 20000;
    if (n < 1 || n > 100000000) {
        fprintf(stderr, "usage: es_host_syscall [CALLS 1..100000000]\n");
        return 2;
    }
    double tpc = ticks_per_cycle();
    printf("tsc ticks per core cycle\t%.3f\n", tpc);
    printf("getpid syscall\t%.1f cycles\n", per_call(sys_getpid_syscall, n) / tpc);
    signal(SIGSEGV, on_sig);
    signal(SIGILL, on_sig);
    if (!sigsetjmp(jb, 1)) {
        long pid = sys_getpid_int80();
        if (pid < 0)
            printf("getpid int80\tunavailable (%ld)\n", pid);
        else
            printf("getpid int80\t%.1f cycles\n", per_call(sys_getpid_int80, n) / tpc);
    } else {
        printf("getpid int80\tunavailable (signal)\n");
    }
    printf("tsc ticks per core cycle\t%.3f\n", ticks_per_cycle());
    return 0;
}
