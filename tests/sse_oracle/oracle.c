/* oracle.c - the native oracle behind tests/test_sse_*.cc: reads lines
 * `hex ; disassembly ; initial state` (tests/shim/sse_case.h format), runs
 * each instruction natively on the host CPU (run.S loads XMM0-15, the GPRs,
 * MXCSR and RFLAGS, calls the bytes followed by RET, stores them back) and
 * prints a table row with the resulting state.  Exceptions come back as
 * signals: SIGSEGV -> #GP (13), SIGILL -> #UD (6), SIGFPE -> #XM (19) with
 * the MXCSR the kernel saved at the fault.  The data area D is
 * buf + 0x100, buf page aligned (MAP_32BIT so 32-bit runs can reuse D).
 *
 * Regenerating a table (x86-64 Linux host; not part of the build):
 *   gcc -O1 oracle.c run.S -o oracle
 *   python3 int_cases.py | python3 asm2hex.py | ./oracle > int.rows
 *   python3 mkfile.py int SseInt "<title>" "<description>"   (writes ../test_sse_int.cc)
 * (test_sse_arith.cc = the non-compare rows of fp_cases.py plus
 * unm_cases.py; test_sse_cmp.cc = the CMP/COMIS/ROUND/DP rows plus
 * dp_cases.spec, already assembled.) */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

typedef struct { uint64_t xmm[16][2]; uint64_t gpr[16]; uint64_t rflags; uint32_t mxcsr, pad; } state;
void run_native(state *s, void *code);

static sigjmp_buf jb;
static int gsig; static uint32_t gfault_mxcsr; static int gcode;
static void handler(int sig, siginfo_t *si, void *ctx) {
    ucontext_t *uc = ctx;
    gsig = sig; gcode = si->si_code;
    gfault_mxcsr = uc->uc_mcontext.fpregs->mxcsr;
    siglongjmp(jb, 1);
}
static const char *gname[16] = {"rax","rcx","rdx","rbx","rsp","rbp","rsi","rdi","r8","r9","r10","r11","r12","r13","r14","r15"};
static uint8_t *buf; /* page aligned; D = buf + 0x100 */
#define DOFF 0x100
#define MEMN 64

static int parse_hex(const char *s, uint8_t *out, int max) {
    int n = 0;
    while (s[0] && s[1] && n < max) { unsigned x; if (sscanf(s, "%2x", &x) != 1) break; out[n++] = x; s += 2; }
    return n;
}
static uint64_t parse_val(const char *v) {
    if (v[0] == 'D') return (uint64_t)(buf + DOFF) + strtoull(v + 1, 0, 0);
    return strtoull(v, 0, 16);
}
static void apply(state *s, uint8_t *mem, char *spec) {
    char *save, *tok;
    for (tok = strtok_r(spec, " ", &save); tok; tok = strtok_r(0, " ", &save)) {
        char *eq = strchr(tok, '='); if (!eq) continue; *eq = 0; char *k = tok, *v = eq + 1;
        if (k[0] == 'x' && k[1] >= '0' && k[1] <= '9') {
            int r = atoi(k + 1); char *dot = strchr(k, '.');
            if (!dot) { char *c = strchr(v, ':'); *c = 0; s->xmm[r][1] = strtoull(v, 0, 16); s->xmm[r][0] = strtoull(c + 1, 0, 16); }
            else if (dot[1] == 'f') { float f[4] = {0}; sscanf(v, "%f,%f,%f,%f", &f[0], &f[1], &f[2], &f[3]); memcpy(s->xmm[r], f, 16); }
            else { double g[2] = {0}; sscanf(v, "%lf,%lf", &g[0], &g[1]); memcpy(s->xmm[r], g, 16); }
        } else if (!strcmp(k, "mxcsr")) s->mxcsr = strtoul(v, 0, 16);
        else if (!strcmp(k, "flags")) s->rflags = 0x202 | strtoull(v, 0, 16);
        else if (!strcmp(k, "mem")) parse_hex(v, mem, MEMN);
        else if (!strcmp(k, "m32")) ;
        else { for (int i = 0; i < 16; i++) if (!strcmp(k, gname[i])) s->gpr[i] = parse_val(v); }
    }
}
int main(void) {
    buf = mmap(0, 8192, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS|MAP_32BIT, -1, 0);
    uint8_t *code = mmap(0, 4096, PROT_READ|PROT_WRITE|PROT_EXEC, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0);
    struct sigaction sa = {0}; sa.sa_sigaction = handler; sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigaction(SIGSEGV, &sa, 0); sigaction(SIGFPE, &sa, 0); sigaction(SIGILL, &sa, 0); sigaction(SIGBUS, &sa, 0);
    char line[4096];
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = 0;
        if (!line[0] || line[0] == '#') { continue; }
        /* hex ; disasm ; init */
        char *p1 = strchr(line, ';'); if (!p1) continue; *p1 = 0;
        char *p2 = strchr(p1 + 1, ';'); if (!p2) continue; *p2 = 0;
        char hex[64]; sscanf(line, "%63s", hex);
        char dis[256]; snprintf(dis, sizeof dis, "%s", p1 + 1); 
        char *d = dis; while (*d == ' ') d++; char *e = d + strlen(d); while (e > d && e[-1] == ' ') *--e = 0;
        char init[2048]; snprintf(init, sizeof init, "%s", p2 + 1);
        char *ii = init; while (*ii == ' ') ii++;
        char initcopy[2048]; snprintf(initcopy, sizeof initcopy, "%s", ii);
        state s0; memset(&s0, 0, sizeof s0); s0.mxcsr = 0x1f80; s0.rflags = 0x202;
        uint8_t mem0[MEMN]; for (int i = 0; i < MEMN; i++) mem0[i] = (uint8_t)(i * 37 + 11);
        apply(&s0, mem0, initcopy);
        memcpy(buf + DOFF, mem0, MEMN);
        int n = parse_hex(hex, code, 15); code[n] = 0xc3;
        state s = s0; gsig = 0;
        if (!sigsetjmp(jb, 1)) run_native(&s, code);
        char out[2048]; int o = 0;
        if (gsig) {
            int vec = gsig == SIGSEGV ? 13 : gsig == SIGILL ? 6 : gsig == SIGFPE ? (gcode == FPE_INTDIV ? 0 : 19) : 99;
            o += sprintf(out + o, "fault=%d mxcsr=%x", vec, gsig == SIGFPE ? gfault_mxcsr : s0.mxcsr);
        } else {
            for (int r = 0; r < 16; r++) if (memcmp(s.xmm[r], s0.xmm[r], 16))
                o += sprintf(out + o, "x%d=%016llx:%016llx ", r, (unsigned long long)s.xmm[r][1], (unsigned long long)s.xmm[r][0]);
            for (int r = 0; r < 16; r++) if (r != 4 && s.gpr[r] != s0.gpr[r]) {
                uint64_t v = s.gpr[r], D = (uint64_t)(buf + DOFF);
                if (v >= D - 0x100 && v < D + 0x1000) o += sprintf(out + o, "%s=D%+lld ", gname[r], (long long)(v - D));
                else o += sprintf(out + o, "%s=%llx ", gname[r], (unsigned long long)v);
            }
            if (memcmp(buf + DOFF, mem0, MEMN)) { o += sprintf(out + o, "mem="); for (int i = 0; i < MEMN; i++) o += sprintf(out + o, "%02x", buf[DOFF + i]); o += sprintf(out + o, " "); }
            o += sprintf(out + o, "flags=%llx mxcsr=%x", (unsigned long long)(s.rflags & 0x8d5), s.mxcsr);
        }
        printf("    {\"%s\", \"%s\", \"%s\", \"%s\"},\n", hex, d, ii, out);
    }
}
