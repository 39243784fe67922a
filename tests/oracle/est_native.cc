// est_native.cc - host oracle for the instruction tables of
// tests/test_<name>.cc: runs every case's bytes natively on this x86-64
// host, with the case's registers, flags and data memory, and compares
// the outcome with the table's expected values.  Run it after editing a
// table: an expected value nobody checked against real hardware is a guess.
//
// Built per table by tests/oracle/CMakeLists.txt as es_oracle_<name>
// (x86-64 Linux hosts only; not a ctest: flags the SDM leaves undefined
// differ between vendors, and the tables follow AMD Zen).  32-bit cases run
// through their `native` 64-bit equivalent, or are reported unchecked.
//
// How: a small thunk is generated per case that loads all GPRs but RSP
// and RFLAGS from a fixed block at 0x700000, runs the bytes, and stores
// them back; the data page is mapped at EST_DATA (0x600000) so memory
// operands use the same addresses as in the simulator.  Faults arrive as
// signals (SIGFPE = #DE, SIGILL = #UD, SIGSEGV = #GP/#PF).
#define EST_NATIVE_CHECK
#include "est_case.h"

#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <vector>

#define NAT_S 0x700000u    // register block: gpr[16] at +0, rflags at +0x80, saved rsp at +0x100
#define NAT_DATA 0x600000u // = EST_DATA, 64 KiB

static uint8_t *g_code;
static sigjmp_buf g_jb;
static volatile int g_sig;

static void on_signal(int s)
{
    g_sig = s;
    siglongjmp(g_jb, 1);
}

static void native_init()
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

// mov r64, [abs32] (load) or mov [abs32], r64 (store)
static uint8_t *mov_abs(uint8_t *p, int r, int store)
{
    *p++ = (uint8_t)(0x48 | (r >= 8 ? 4 : 0));
    *p++ = store ? 0x89 : 0x8b;
    *p++ = (uint8_t)(((r & 7) << 3) | 4);
    *p++ = 0x25;
    return put32(p, NAT_S + 8 * r);
}

// Runs the bytes with regs (all but RSP) and flags; returns 0 and updates
// them, or returns the signal the bytes raised.
static int native_run(const uint8_t *insn, size_t n, uint64_t *regs, uint64_t *flags)
{
    native_init();
    uint64_t *S = (uint64_t *)(uintptr_t)NAT_S;
    uint8_t *p = g_code;
    static const uint8_t pro[] = {0x53, 0x55, 0x41, 0x54, 0x41, 0x55, 0x41, 0x56, 0x41, 0x57};
    memcpy(p, pro, sizeof pro); // push rbx, rbp, r12..r15
    p += sizeof pro;
    *p++ = 0x48; *p++ = 0x89; *p++ = 0x24; *p++ = 0x25; // mov [S+0x100], rsp
    p = put32(p, NAT_S + 0x100);
    *p++ = 0xff; *p++ = 0x34; *p++ = 0x25; // push qword [S+0x80]; popfq
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
    *p++ = 0x9c; *p++ = 0x8f; *p++ = 0x04; *p++ = 0x25; // pushfq; pop qword [S+0x80]
    p = put32(p, NAT_S + 0x80);
    *p++ = 0x48; *p++ = 0x8b; *p++ = 0x24; *p++ = 0x25; // mov rsp, [S+0x100]
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

struct Suite {
    const char *name;
    const EstCase *c;
    size_t n;
};

static std::vector<Suite> &suites()
{
    static std::vector<Suite> s;
    return s;
}

int est_native_register(const char *suite, const EstCase *cases, size_t n)
{
    suites().push_back({suite, cases, n});
    return 0;
}

#include EST_TEST_FILE

static bool fault_matches(int vector, int sig)
{
    switch (vector) {
    case ES_DE: return sig == SIGFPE;
    case ES_UD: return sig == SIGILL;
    case ES_GP: case 14 /* #PF */: return sig == SIGSEGV || sig == SIGBUS;
    default: return false;
    }
}

int main()
{
    int bad = 0, checked = 0, unchecked = 0;
    native_init();
    for (const Suite &s : suites()) {
        for (size_t i = 0; i < s.n; i++) {
            const EstCase &c = s.c[i];
            const char *hex = c.mode == ES_MODE_64 ? c.hex : c.native;
            if (!hex) {
                unchecked++;
                printf("unchecked %s.%zu %s (32-bit only)\n", s.name, i, c.dis);
                continue;
            }
            std::vector<uint8_t> code = est_hex(hex);
            uint64_t r[16] = {0};
            for (const EstReg &x : c.in)
                r[x.r] = x.v;
            uint64_t exp[16];
            memcpy(exp, r, sizeof r);
            for (const EstReg &x : c.out)
                exp[x.r] = x.v;
            memset((void *)(uintptr_t)NAT_DATA, 0, 0x10000);
            for (const EstMem &w : c.mem_in)
                memcpy((void *)(uintptr_t)(NAT_DATA + w.off), &w.v, w.size);
            uint64_t f = 0x202 | c.fl_in;
            int sig = native_run(code.data(), code.size(), r, &f);
            checked++;
            std::string msg;
            char b[128];
            if (c.fault >= 0) {
                if (!fault_matches(c.fault, sig)) {
                    snprintf(b, sizeof b, " expected vector %d, got signal %d", c.fault, sig);
                    msg += b;
                }
            } else if (sig) {
                snprintf(b, sizeof b, " signal %d", sig);
                msg += b;
            } else {
                for (int k = 0; k < 16; k++)
                    if (k != 4 && r[k] != exp[k]) {
                        snprintf(b, sizeof b, " gpr%d=%llx (table %llx)", k,
                                 (unsigned long long)r[k], (unsigned long long)exp[k]);
                        msg += b;
                    }
                if ((f & ES_ARITH_FLAGS) != c.fl_out) {
                    snprintf(b, sizeof b, " flags=%llx (table %x)",
                             (unsigned long long)(f & ES_ARITH_FLAGS), c.fl_out);
                    msg += b;
                }
                for (const EstMem &w : c.mem_out) {
                    uint64_t v = 0;
                    memcpy(&v, (void *)(uintptr_t)(NAT_DATA + w.off), w.size);
                    if (v != w.v) {
                        snprintf(b, sizeof b, " mem+%x=%llx (table %llx)", w.off,
                                 (unsigned long long)v, (unsigned long long)w.v);
                        msg += b;
                    }
                }
            }
            if (!msg.empty()) {
                bad++;
                printf("MISMATCH %s.%zu %s [%s]:%s\n", s.name, i, c.dis, hex, msg.c_str());
            }
        }
    }
    printf("%d cases run natively, %d mismatches, %d unchecked\n", checked, bad, unchecked);
    return bad != 0;
}
