/* native_run.h - run instruction bytes on this x86-64 host with given
 * general registers and RFLAGS (scratch oracle for the instruction tests;
 * see est_native.cc and diff_fuzz.c).
 *
 * A small thunk loads all GPRs but RSP and RFLAGS from a fixed block at
 * 0x700000, runs the bytes, and stores them back.  The data page is mapped
 * at EST_DATA (0x600000, 64 KiB) so memory operands use the same addresses
 * as in the simulator.  Faults arrive as signals and are returned (SIGFPE
 * = #DE, SIGILL = #UD, SIGSEGV = #GP/#PF).  Header-only, C and C++.
 */
#ifndef ENTRYSIM_NATIVE_RUN_H
#define ENTRYSIM_NATIVE_RUN_H

#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define NAT_S 0x700000u    /* register block: gpr[16] at +0, rflags at +0x80, saved rsp at +0x100 */
#define NAT_DATA 0x600000u /* = EST_DATA, 64 KiB */

static uint8_t *g_code;
static sigjmp_buf g_jb;
static volatile int g_sig;

static void on_signal(int s)
{
    g_sig = s;
    siglongjmp(g_jb, 1);
}

static void native_init(void)
{
    if (g_code)
        return;
    void *p = mmap((void *)(uintptr_t)NAT_DATA, 0x10000, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    void *q = mmap((void *)(uintptr_t)NAT_S, 0x1000, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (p != (void *)(uintptr_t)NAT_DATA || q != (void *)(uintptr_t)NAT_S) {
        perror("mmap at the fixed test addresses");
        exit(2);
    }
    g_code = (uint8_t *)mmap(0, 0x1000, PROT_READ | PROT_WRITE | PROT_EXEC,
                             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (g_code == MAP_FAILED) {
        perror("mmap code");
        exit(2);
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_NODEFER;
    sigaction(SIGFPE, &sa, 0);
    sigaction(SIGILL, &sa, 0);
    sigaction(SIGSEGV, &sa, 0);
    sigaction(SIGBUS, &sa, 0);
}

static uint8_t *put32(uint8_t *p, uint32_t v)
{
    memcpy(p, &v, 4);
    return p + 4;
}

/* mov r64, [abs32] (load) or mov [abs32], r64 (store) */
static uint8_t *mov_abs(uint8_t *p, int r, int store)
{
    *p++ = (uint8_t)(0x48 | (r >= 8 ? 4 : 0));
    *p++ = store ? 0x89 : 0x8b;
    *p++ = (uint8_t)(((r & 7) << 3) | 4);
    *p++ = 0x25;
    return put32(p, NAT_S + 8 * r);
}

/* Runs the bytes with regs (all but RSP) and flags; returns 0 and updates
 * them, or returns the signal the bytes raised. */
static int native_run(const uint8_t *insn, size_t n, uint64_t *regs, uint64_t *flags)
{
    native_init();
    uint64_t *S = (uint64_t *)(uintptr_t)NAT_S;
    uint8_t *p = g_code;
    static const uint8_t pro[] = {0x53, 0x55, 0x41, 0x54, 0x41, 0x55, 0x41, 0x56, 0x41, 0x57};
    memcpy(p, pro, sizeof pro); /* push rbx, rbp, r12..r15 */
    p += sizeof pro;
    *p++ = 0x48; *p++ = 0x89; *p++ = 0x24; *p++ = 0x25; /* mov [S+0x100], rsp */
    p = put32(p, NAT_S + 0x100);
    *p++ = 0xff; *p++ = 0x34; *p++ = 0x25; /* push qword [S+0x80]; popfq */
    p = put32(p, NAT_S + 0x80);
    *p++ = 0x9d;
    for (int r = 0; r < 16; r++)
        if (r != 4)
            p = mov_abs(p, r, 0);
    memcpy(p, insn, n);
    p += n;
    for (int r = 0; r < 16; r++)
        if (r != 4)
            p = mov_abs(p, r, 1);
    *p++ = 0x9c; *p++ = 0x8f; *p++ = 0x04; *p++ = 0x25; /* pushfq; pop qword [S+0x80] */
    p = put32(p, NAT_S + 0x80);
    *p++ = 0x48; *p++ = 0x8b; *p++ = 0x24; *p++ = 0x25; /* mov rsp, [S+0x100] */
    p = put32(p, NAT_S + 0x100);
    static const uint8_t epi[] = {0x41, 0x5f, 0x41, 0x5e, 0x41, 0x5d, 0x41, 0x5c, 0x5d, 0x5b, 0xc3};
    memcpy(p, epi, sizeof epi);

    for (int r = 0; r < 16; r++)
        S[r] = regs[r];
    S[0x80 / 8] = *flags;
    g_sig = 0;
    if (sigsetjmp(g_jb, 1) != 0)
        return g_sig;
    ((void (*)(void))(void *)g_code)();
    for (int r = 0; r < 16; r++)
        if (r != 4)
            regs[r] = S[r];
    *flags = S[0x80 / 8];
    return 0;
}

#endif
