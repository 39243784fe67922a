/* mmx.c - MMX instructions (inline asm, so the compiler cannot use SSE
 * for them: gcc implements the MMX intrinsics with SSE on x86-64) on a
 * few operand pairs, printed as hex, and the x87 state they share: the
 * tag word and TOP after an MMX instruction and after EMMS (fnstenv), the
 * register an MMX write leaves behind, and x87 arithmetic after EMMS.
 * Built for x86-64 and i386: both print the same (the i386 build is
 * checked against the x86-64 native output, tests/e2e/expected/mmx.out). */
#include <stdint.h>
#include <stdio.h>

static const uint64_t in[][2] = {
    {0x0123456789abcdefull, 0xfedcba9876543210ull},
    {0x7fff8000ffff0001ull, 0x80007fff0001ffffull},
    {0x00ff7f80017e8081ull, 0x8081ff007f01807full},
    {0xffffffffffffffffull, 0x0000000000000003ull},
};

/* mm0 = a; OP mm1 = b, mm0; result from mm0 */
#define BIN(name, insn)                                                                 \
    static uint64_t name(uint64_t a, uint64_t b)                                        \
    {                                                                                   \
        uint64_t r;                                                                     \
        __asm__ volatile("movq %1, %%mm0\n\tmovq %2, %%mm1\n\t" insn                     \
                         "\n\tmovq %%mm0, %0"                                           \
                         : "=m"(r)                                                      \
                         : "m"(a), "m"(b)                                               \
                         : "mm0", "mm1");                                               \
        return r;                                                                       \
    }

BIN(paddb, "paddb %%mm1, %%mm0")
BIN(paddsw, "paddsw %%mm1, %%mm0")
BIN(paddusb, "paddusb %%mm1, %%mm0")
BIN(psubq, "psubq %%mm1, %%mm0")
BIN(pmullw, "pmullw %%mm1, %%mm0")
BIN(pmulhw, "pmulhw %%mm1, %%mm0")
BIN(pmaddwd, "pmaddwd %%mm1, %%mm0")
BIN(pmuludq, "pmuludq %%mm1, %%mm0")
BIN(pcmpgtw, "pcmpgtw %%mm1, %%mm0")
BIN(pcmpeqb, "pcmpeqb %%mm1, %%mm0")
BIN(packsswb, "packsswb %%mm1, %%mm0")
BIN(packuswb, "packuswb %%mm1, %%mm0")
BIN(packssdw, "packssdw %%mm1, %%mm0")
BIN(punpcklbw, "punpcklbw %%mm1, %%mm0")
BIN(punpckhwd, "punpckhwd %%mm1, %%mm0")
BIN(punpckhdq, "punpckhdq %%mm1, %%mm0")
BIN(psllw, "psllw %%mm1, %%mm0")
BIN(psrad_imm, "psrad $5, %%mm0")
BIN(psrlq_imm, "psrlq $12, %%mm0")
BIN(pandn, "pandn %%mm1, %%mm0")
BIN(pavgb, "pavgb %%mm1, %%mm0")
BIN(psadbw, "psadbw %%mm1, %%mm0")
BIN(pminsw, "pminsw %%mm1, %%mm0")
BIN(pshufw, "pshufw $0x1b, %%mm1, %%mm0")
BIN(pshufb, "pshufb %%mm1, %%mm0")
BIN(phaddw, "phaddw %%mm1, %%mm0")
BIN(phsubsw, "phsubsw %%mm1, %%mm0")
BIN(pmaddubsw, "pmaddubsw %%mm1, %%mm0")
BIN(pmulhrsw, "pmulhrsw %%mm1, %%mm0")
BIN(psignb, "psignb %%mm1, %%mm0")
BIN(pabsw, "pabsw %%mm1, %%mm0")
BIN(palignr3, "palignr $3, %%mm1, %%mm0")
BIN(palignr11, "palignr $11, %%mm1, %%mm0")
BIN(pinsrw, "movd %%mm1, %%eax\n\tpinsrw $6, %%eax, %%mm0")

static const struct {
    const char *name;
    uint64_t (*fn)(uint64_t, uint64_t);
} ops[] = {
#define OP(n) {#n, n}
    OP(paddb),     OP(paddsw),    OP(paddusb),   OP(psubq),     OP(pmullw),    OP(pmulhw),
    OP(pmaddwd),   OP(pmuludq),   OP(pcmpgtw),   OP(pcmpeqb),   OP(packsswb),  OP(packuswb),
    OP(packssdw),  OP(punpcklbw), OP(punpckhwd), OP(punpckhdq), OP(psllw),     OP(psrad_imm),
    OP(psrlq_imm), OP(pandn),     OP(pavgb),     OP(psadbw),    OP(pminsw),    OP(pshufw),
    OP(pshufb),    OP(phaddw),    OP(phsubsw),   OP(pmaddubsw), OP(pmulhrsw),  OP(psignb),
    OP(pabsw),     OP(palignr3),  OP(palignr11), OP(pinsrw),
};

/* The x87 environment: control, status (TOP), tag words. */
struct env {
    uint16_t fcw, r0, fsw, r1, ftw, r2;
    uint32_t rest[4];
};

static void show_env(const char *when)
{
    struct env e;
    __asm__ volatile("fnstenv %0\n\tfldcw %0" : "=m"(e));
    printf("%-22s TOP %u tags %04x\n", when, (e.fsw >> 11) & 7, e.ftw);
}

int main(void)
{
    for (unsigned i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        printf("%-10s", ops[i].name);
        for (unsigned k = 0; k < sizeof in / sizeof in[0]; k++)
            printf(" %016llx", (unsigned long long)ops[i].fn(in[k][0], in[k][1]));
        printf("\n");
    }
    uint32_t mask, word;
    uint64_t v = in[2][0];
    __asm__ volatile("movq %2, %%mm3\n\tpmovmskb %%mm3, %0\n\tpextrw $2, %%mm3, %1"
                     : "=r"(mask), "=r"(word)
                     : "m"(v)
                     : "mm3");
    printf("pmovmskb %02x pextrw %04x\n", mask, word);
    /* back to x87 use: without EMMS the compiler's own x87 code (i386
     * initialises doubles with FLD/FSTP) would push onto a full stack */
    __asm__ volatile("emms");

    /* the x87 side: two values pushed, then an MMX write */
    volatile double x = 1.5, y = 3.25;
    double got;
    __asm__ volatile("fldl %0\n\tfldl %1" : : "m"(x), "m"(y));
    show_env("two x87 values");
    __asm__ volatile("movq %0, %%mm7" : : "m"(in[0][0]) : "mm7");
    show_env("after movq mm7");
    /* R7 (ST(7) with TOP 0): significand mm7, sign and exponent all ones */
    unsigned char st[108];
    __asm__ volatile("fnsave %0\n\tfrstor %0" : "=m"(st));
    printf("R7 ");
    for (int i = 9; i >= 0; i--)
        printf("%02x", st[28 + 70 + i]);
    printf("\n");
    __asm__ volatile("emms");
    show_env("after emms");
    __asm__ volatile("fldl %1\n\tfmull %2\n\tfstpl %0" : "=m"(got) : "m"(x), "m"(y));
    printf("x87 after emms: %.6f\n", got);
    return 0;
}
