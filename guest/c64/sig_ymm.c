/* sig_ymm.c - the AVX state across a signal handler: YMM7 holds a value
 * when UD2 raises SIGILL; the handler finds it in the frame's XSAVE image
 * (the software bytes' magic and features, XSTATE_BV's AVX bit, the upper
 * half at the AVX component's offset from CPUID), changes the saved upper
 * half, clobbers every YMM register (VZEROALL) and skips the UD2; after
 * sigreturn YMM8 must hold the value from the frame.  The image's size
 * depends on the CPU (AVX-512 hosts save more), so only what x86-64-v3
 * fixes is printed.  Built for x86-64 and i386: the i386 frame's fpstate
 * points at the FNSAVE header, the XSAVE image follows it at +112. */
#define _GNU_SOURCE
#include <cpuid.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>

static uint32_t avx_off; /* CPUID.(0DH,2).EBX: the AVX component's offset */
static int seen;

static void on_ill(int sig, siginfo_t *si, void *ctx)
{
    (void)sig, (void)si;
    ucontext_t *uc = ctx;
#ifdef __i386__
    uint8_t *fx = (uint8_t *)uc->uc_mcontext.fpregs + 112;
#else
    uint8_t *fx = (uint8_t *)uc->uc_mcontext.fpregs;
#endif
    uint32_t magic1, xfeat, size;
    uint64_t bv, hi;
    memcpy(&magic1, fx + 464, 4);
    memcpy(&xfeat, fx + 472, 4);
    memcpy(&size, fx + 480, 4);
    memcpy(&bv, fx + 512, 8);
    memcpy(&hi, fx + avx_off + 7 * 16, 8); /* YMM7 bits 191:128 */
    uint32_t magic2;
    memcpy(&magic2, fx + size, 4);
    printf("frame: magic1 %s magic2 %s xfeatures avx %d xstate_bv avx %d uc_flags fp_xstate %d\n",
           magic1 == 0x46505853u ? "ok" : "bad", magic2 == 0x46505845u ? "ok" : "bad",
           (xfeat >> 2) & 1, (int)((bv >> 2) & 1), (int)(uc->uc_flags & 1));
    printf("frame: ymm7[191:128] %016llx\n", (unsigned long long)hi);
    hi ^= 0xffff0000ffff0000ull; /* sigreturn restores what the frame says */
    memcpy(fx + avx_off + 7 * 16, &hi, 8);
    __asm__ volatile("vzeroall" ::: "memory");
#ifdef __i386__
    uc->uc_mcontext.gregs[REG_EIP] += 2; /* past the UD2 */
#else
    uc->uc_mcontext.gregs[REG_RIP] += 2;
#endif
    seen++;
}

int main(void)
{
    unsigned a, b, c, d;
    __cpuid_count(0xd, 2, a, b, c, d);
    avx_off = b;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_ill;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGILL, &sa, NULL);
    static const uint64_t in[4] = {0x1111111111111111ull, 0x2222222222222222ull,
                                   0x0123456789abcdefull, 0xfedcba9876543210ull};
    uint64_t out[4];
    __asm__ volatile("vmovdqu %1, %%ymm7\n\tud2\n\tvmovdqu %%ymm7, %0"
                     : "=m"(out)
                     : "m"(in)
                     : "xmm7", "memory");
    printf("handler ran %d, after sigreturn ymm7 %016llx %016llx %016llx %016llx\n", seen,
           (unsigned long long)out[3], (unsigned long long)out[2], (unsigned long long)out[1],
           (unsigned long long)out[0]);
    return 0;
}
