/* diff_fuzz.c - differential fuzzer: runs instruction encodings in the
 * simulator and natively on this x86-64 host with the same random
 * registers, flags and data memory, and reports every difference in the
 * sixteen GPRs (RSP aside), the six arithmetic flags, 1 KiB of data memory
 * around [rbx], or the exception raised.
 *
 * This is how the AMD Zen behaviour of the flags the SDM leaves undefined
 * was measured for sim/alu.c, shift.c, muldiv.c, bits.c.
 *
 *   es_oracle_fuzz [-n iters] [-c count_range] [-s] [-32] hex...
 *     hex       one instruction per argument, e.g. 48d3e0 (shl rax, cl);
 *               its decoded length must be the whole argument
 *     -c N      RCX (shift counts, bit offsets) drawn from 0..N-1 (default:
 *               the general distribution)
 *     -s        with -c: RCX drawn from -N/2..N/2-1 (signed bit offsets)
 *     -32       run the simulator in compatibility mode (the host still
 *               runs 64-bit code: use encodings that mean the same)
 * RBX points at EST_DATA + 0x100 for memory operands.  Exit status 1 when
 * anything differed.  A fault on both sides counts as a match when the
 * signal fits the vector (SIGSEGV: #GP or #PF).
 */
#include "native_run.h"

#include "es_shim.h"
#include "mem.h"

static uint64_t g_rs = 88172645463325252ull;

static uint64_t rnd(void)
{
    g_rs ^= g_rs << 13;
    g_rs ^= g_rs >> 7;
    g_rs ^= g_rs << 17;
    return g_rs;
}

/* Operand values with the edge cases over-represented. */
static uint64_t rval(void)
{
    switch (rnd() % 10) {
    case 0: return 0;
    case 1: return 1;
    case 2: return ~0ull;
    case 3: return 1ull << (rnd() % 64);
    case 4: return (1ull << (rnd() % 64)) - 1;
    case 5: return rnd() % 300;
    case 6: return -(rnd() % 300);
    case 7: return (rnd() & 0xff) * 0x0101010101010101ull;
    default: return rnd();
    }
}

static int parse_hex(const char *s, uint8_t *b, int max)
{
    int n = 0;
    while (s[0] && s[1] && n < max) {
        unsigned x;
        if (sscanf(s, "%2x", &x) != 1)
            return -1;
        b[n++] = (uint8_t)x;
        s += 2;
    }
    return n;
}

static int signal_fits(int sig, int vector)
{
    switch (sig) {
    case SIGFPE: return vector == ES_VEC_DE;
    case SIGILL: return vector == ES_VEC_UD;
    case SIGSEGV: case SIGBUS: return vector == ES_VEC_GP || vector == ES_VEC_PF;
    default: return 0;
    }
}

int main(int argc, char **argv)
{
    long iters = 2000, cmax = 0;
    int sgn = 0, mode = ES_MODE_64, a = 1, total_bad = 0;
    for (; a < argc && argv[a][0] == '-'; a++) {
        if (!strcmp(argv[a], "-n") && a + 1 < argc)
            iters = atol(argv[++a]);
        else if (!strcmp(argv[a], "-c") && a + 1 < argc)
            cmax = atol(argv[++a]);
        else if (!strcmp(argv[a], "-s"))
            sgn = 1;
        else if (!strcmp(argv[a], "-32"))
            mode = ES_MODE_32;
        else {
            fprintf(stderr, "usage: %s [-n iters] [-c count_range] [-s] [-32] hex...\n", argv[0]);
            return 2;
        }
    }
    native_init();
    es_machine *m = est_new(mode);
    if (!m)
        return 2;
    uint64_t *code_pte = es_pte(m, m->cr3, EST_CODE, false);
    for (; a < argc; a++) {
        uint8_t code[16];
        char dis[96];
        int n = parse_hex(argv[a], code, 15);
        size_t len = n > 0 ? es_format(code, (size_t)n, mode, EST_CODE, 0, dis, sizeof dis) : 0;
        if (n <= 0 || len != (size_t)n) {
            printf("%-24s skipped: decodes to %zu bytes, not %d\n", argv[a], len, n);
            continue;
        }
        est_code(m, code, (size_t)n);
        /* est_code writes behind the decode cache's back */
        es_code_stale(m, (*code_pte & ES_PTE_ADDR) >> 12);
        long bad = 0;
        for (long it = 0; it < iters; it++) {
            uint64_t r[16], nr[16], fl = 0x202 | (rnd() & ES_ARITH_FLAGS), nfl = fl;
            uint8_t mem[1024], nmem[1024], smem[1024];
            for (int i = 0; i < 16; i++)
                r[i] = rval();
            if (cmax)
                r[ES_RCX] = sgn ? (uint64_t)((int64_t)(rnd() % cmax) - cmax / 2) : rnd() % cmax;
            r[ES_RBX] = EST_DATA + 0x100;
            r[ES_RSP] = 0;
            for (int i = 0; i < 1024; i++)
                mem[i] = (uint8_t)rnd();
            if (rnd() % 4 == 0) {
                uint64_t v = rval();
                memcpy(mem + 0x100, &v, 8);
            }
            memcpy(nr, r, sizeof r);
            memcpy((void *)(uintptr_t)NAT_DATA, mem, sizeof mem);
            int sig = native_run(code, (size_t)n, nr, &nfl);
            memcpy(nmem, (void *)(uintptr_t)NAT_DATA, sizeof nmem);

            memcpy(m->gpr, r, sizeof r);
            m->gpr[ES_RSP] = EST_STACK_TOP - 0x100;
            m->rflags = fl;
            m->rip = EST_CODE;
            es_write(m, EST_DATA, mem, sizeof mem);
            int rc = es_step(m);
            es_read(m, EST_DATA, smem, sizeof smem);

            int diff = 0;
            if ((sig != 0) != (rc != ES_OK))
                diff = 1;
            else if (sig)
                diff = !signal_fits(sig, m->fault.vector);
            else {
                for (int i = 0; i < 16; i++)
                    if (i != ES_RSP && nr[i] != m->gpr[i])
                        diff = 1;
                if ((nfl ^ m->rflags) & ES_ARITH_FLAGS)
                    diff = 1;
                if (memcmp(nmem, smem, sizeof smem))
                    diff = 1;
            }
            if (diff && ++bad <= 3) {
                printf("DIFF %s: flags %03llx rax %llx rcx %llx rdx %llx rsi %llx [rbx] %llx\n", dis,
                       (unsigned long long)fl, (unsigned long long)r[0], (unsigned long long)r[1],
                       (unsigned long long)r[2], (unsigned long long)r[6],
                       (unsigned long long)*(uint64_t *)(mem + 0x100));
                printf("  host: signal %d flags %03llx rax %llx rcx %llx rdx %llx rsi %llx [rbx] %llx\n",
                       sig, (unsigned long long)(nfl & ES_ARITH_FLAGS), (unsigned long long)nr[0],
                       (unsigned long long)nr[1], (unsigned long long)nr[2],
                       (unsigned long long)nr[6], (unsigned long long)*(uint64_t *)(nmem + 0x100));
                printf("  sim:  status %d vector %d flags %03llx rax %llx rcx %llx rdx %llx rsi %llx [rbx] %llx\n",
                       rc, rc == ES_OK ? -1 : m->fault.vector,
                       (unsigned long long)(m->rflags & ES_ARITH_FLAGS), (unsigned long long)m->gpr[0],
                       (unsigned long long)m->gpr[1], (unsigned long long)m->gpr[2],
                       (unsigned long long)m->gpr[6], (unsigned long long)*(uint64_t *)(smem + 0x100));
            }
        }
        printf("%-24s %-36s %ld/%ld differ\n", argv[a], dis, bad, iters);
        total_bad += bad != 0;
    }
    es_machine_free(m);
    return total_bad != 0;
}
