// Taint propagation, instruction by instruction: each case labels every
// user register with itself (rax with `nr`), runs a few instructions and
// checks the exact label sets that result.
#include "ctl_util.h"

#include "seg.h"
#include "taint.h"
#include "taint_fixture.h"

using namespace ctl;

static const uint64_t D = EST_DATA;
static const uint64_t S = EST_STACK_TOP - 0x100; // initial RSP of est_new

#define L(r) ES_TL_REG(ES_##r)

using T = TaintRun;

TEST(Taint, LabelsStartAsTheRegistersThemselves)
{
    T x;
    EXPECT_EQ(x.reg(ES_RAX), ES_TL_NR);
    EXPECT_EQ(x.reg(ES_RDI), L(RDI));
    EXPECT_EQ(x.reg(ES_R10), L(R10));
    EXPECT_EQ(es_taint_flags(x.t), ES_TL_RFLAGS);
    char buf[64];
    es_taint_label_str(L(RBX) | L(RCX) | ES_TL_MEM, 1, buf, sizeof buf);
    EXPECT_STREQ(buf, "ecx,ebx,mem");
    es_taint_label_str(L(R10) | ES_TL_NR, 0, buf, sizeof buf);
    EXPECT_STREQ(buf, "r10,nr");
}

TEST(Taint, I386LeavesR8ToR15Clean)
{
    T x;
    es_taint_label_user_regs(x.t, x.m.m, 1);
    EXPECT_EQ(x.reg(ES_RBX), L(RBX));
    EXPECT_EQ(x.reg(ES_R8), 0u);
    EXPECT_EQ(x.reg(ES_R15), 0u);
}

TEST(Taint, MovCopies)
{
    T x;
    x.run({0x48, 0x89, 0xfb}); // mov rbx, rdi
    EXPECT_EQ(x.reg(ES_RBX), L(RDI));
    EXPECT_EQ(x.reg(ES_RDI), L(RDI));
}

TEST(Taint, MovImmediateClears)
{
    T x;
    x.run({0x41, 0xb8, 1, 0, 0, 0}); // mov r8d, 1
    EXPECT_EQ(x.reg(ES_R8), 0u);
}

TEST(Taint, PartialWriteKeepsTheRest)
{
    T x;
    x.run({0x88, 0xd0}); // mov al, dl
    EXPECT_EQ(x.reg(ES_RAX), ES_TL_NR | L(RDX));
    T y;
    y.run({0x89, 0xd0}); // mov eax, edx: zero-extends, replaces
    EXPECT_EQ(y.reg(ES_RAX), L(RDX));
}

TEST(Taint, AddUnitesAndSetsFlags)
{
    T x;
    x.run({0x48, 0x01, 0xf3}); // add rbx, rsi
    EXPECT_EQ(x.reg(ES_RBX), L(RBX) | L(RSI));
    EXPECT_EQ(es_taint_flags(x.t), L(RBX) | L(RSI));
}

TEST(Taint, XorAndSubOfARegisterWithItselfClear)
{
    T x;
    x.run({0x31, 0xc0, 0x4d, 0x29, 0xd2}); // xor eax, eax; sub r10, r10
    EXPECT_EQ(x.reg(ES_RAX), 0u);
    EXPECT_EQ(x.reg(ES_R10), 0u);
    EXPECT_EQ(es_taint_flags(x.t), 0u);
}

TEST(Taint, XorOfTwoRegistersUnites)
{
    T x;
    x.run({0x48, 0x31, 0xf7}); // xor rdi, rsi
    EXPECT_EQ(x.reg(ES_RDI), L(RDI) | L(RSI));
}

TEST(Taint, PushPopMovesThroughTheStack)
{
    T x;
    x.run({0x57, 0x5b}); // push rdi; pop rbx
    EXPECT_EQ(x.reg(ES_RBX), L(RDI));
    EXPECT_EQ(es_taint_mem(x.t, S - 8, 8), L(RDI));
    EXPECT_EQ(x.reg(ES_RSP), L(RSP)); // stack-pointer arithmetic carries no data
}

TEST(Taint, LeaTakesBaseAndIndex)
{
    T x;
    x.run({0x48, 0x8d, 0x44, 0xb7, 0x08}); // lea rax, [rdi+rsi*4+8]
    EXPECT_EQ(x.reg(ES_RAX), L(RDI) | L(RSI));
    T y;
    y.run({0x48, 0x8d, 0x05, 0x10, 0, 0, 0}); // lea rax, [rip+0x10]
    EXPECT_EQ(y.reg(ES_RAX), 0u);
}

// array_index_nospec as Linux 4.17 compiles it: cmp nr, NR; sbb mask, mask;
// and nr, mask.  The mask derives from nr only (through CF), not from the
// old rdx.
TEST(Taint, SbbMaskIdiomDerivesFromNr)
{
    T x({{ES_RAX, 3}});
    x.run({0x48, 0x3d, 0xb4, 0x01, 0, 0, // cmp rax, 0x1b4
           0x48, 0x19, 0xd2,             // sbb rdx, rdx
           0x48, 0x21, 0xd0});           // and rax, rdx
    EXPECT_EQ(x.m->gpr[ES_RDX], ~0ull);
    EXPECT_EQ(x.reg(ES_RDX), ES_TL_NR);
    EXPECT_EQ(x.reg(ES_RAX), ES_TL_NR);
}

TEST(Taint, CmovTakesTheChosenValueAndTheFlags)
{
    T x({{ES_RDI, 1}, {ES_RSI, 2}});
    x.run({0x48, 0x39, 0xf7,        // cmp rdi, rsi (1 < 2: CF)
           0x48, 0x0f, 0x42, 0xc2}); // cmovb rax, rdx
    EXPECT_EQ(x.reg(ES_RAX), L(RDX) | L(RDI) | L(RSI));
    T y({{ES_RDI, 3}, {ES_RSI, 2}});
    y.run({0x48, 0x39, 0xf7, 0x48, 0x0f, 0x42, 0xc2}); // not taken
    EXPECT_EQ(y.reg(ES_RAX), ES_TL_NR | L(RDI) | L(RSI));
}

TEST(Taint, SetccReadsFlags)
{
    T x;
    x.run({0x31, 0xc0,        // xor eax, eax
           0x48, 0x39, 0xf7,  // cmp rdi, rsi
           0x0f, 0x92, 0xc0}); // setb al
    EXPECT_EQ(x.reg(ES_RAX), L(RDI) | L(RSI));
}

TEST(Taint, MemoryRoundTrip)
{
    T x({{ES_RBX, D}});
    x.run({0x48, 0x89, 0x33,  // mov [rbx], rsi
           0x48, 0x8b, 0x0b,  // mov rcx, [rbx]
           0x88, 0x53, 0x10,  // mov [rbx+0x10], dl
           0x0f, 0xb6, 0x43, 0x10}); // movzx eax, byte [rbx+0x10]
    EXPECT_EQ(x.reg(ES_RCX), L(RSI));
    EXPECT_EQ(x.reg(ES_RAX), L(RDX));
    EXPECT_EQ(es_taint_mem(x.t, D, 8), L(RSI));
    EXPECT_EQ(es_taint_mem(x.t, D + 0x10, 1), L(RDX));
    EXPECT_EQ(es_taint_mem(x.t, D + 0x11, 7), 0u);

    T y({{ES_RBX, D}});
    y.run({0x48, 0x89, 0x33,                    // mov [rbx], rsi
           0x48, 0xc7, 0x03, 0, 0, 0, 0,        // mov qword [rbx], 0
           0x48, 0x8b, 0x0b});                  // mov rcx, [rbx]
    EXPECT_EQ(y.reg(ES_RCX), 0u);
}

TEST(Taint, ReadModifyWriteMemory)
{
    T x({{ES_RBX, D}});
    x.run({0x48, 0x89, 0x33,  // mov [rbx], rsi
           0x48, 0x01, 0x3b,  // add [rbx], rdi
           0x48, 0x8b, 0x03}); // mov rax, [rbx]
    EXPECT_EQ(x.reg(ES_RAX), L(RSI) | L(RDI));
    EXPECT_EQ(es_taint_flags(x.t), L(RSI) | L(RDI));
}

TEST(Taint, CallRetLeaveTheReturnAddressClean)
{
    T x;
    // call +2; jmp +3; push rdi; pop rax; ret
    x.run({0xe8, 0x02, 0, 0, 0, 0xeb, 0x03, 0x57, 0x58, 0xc3});
    EXPECT_EQ(x.reg(ES_RAX), L(RDI));
    EXPECT_EQ(es_taint_mem(x.t, S - 8, 8), 0u); // the return address slot
    EXPECT_EQ(x.m->gpr[ES_RSP], S);
}

TEST(Taint, XchgSwaps)
{
    T x({{ES_RBX, D}});
    x.run({0x48, 0x87, 0xfe,  // xchg rsi, rdi
           0x4c, 0x89, 0x03,  // mov [rbx], r8
           0x4c, 0x87, 0x0b}); // xchg [rbx], r9
    EXPECT_EQ(x.reg(ES_RSI), L(RDI));
    EXPECT_EQ(x.reg(ES_RDI), L(RSI));
    EXPECT_EQ(x.reg(ES_R9), L(R8));
    EXPECT_EQ(es_taint_mem(x.t, D, 8), L(R9));
}

TEST(Taint, ImplicitOperandsThroughTheFallback)
{
    T x;
    x.run({0x48, 0x0f, 0xaf, 0xfe}); // imul rdi, rsi
    EXPECT_EQ(x.reg(ES_RDI), L(RDI) | L(RSI));
    T y;
    y.run({0x48, 0xf7, 0xe6}); // mul rsi: rdx:rax = rax * rsi
    EXPECT_EQ(y.reg(ES_RAX), ES_TL_NR | L(RSI));
    EXPECT_EQ(y.reg(ES_RDX), ES_TL_NR | L(RSI));
    T z;
    z.run({0x48, 0x99}); // cqo
    EXPECT_EQ(z.reg(ES_RDX), ES_TL_NR);
}

// The fallback's register accesses are decoded once per instruction and
// kept: the same code again gives the same labels, and other code put at
// the same address (as self-modifying code would) is decoded afresh.
TEST(Taint, TheFallbackFollowsNewCodeAtTheSameAddress)
{
    T x;
    x.run({0x48, 0x0f, 0xaf, 0xfe}); // imul rdi, rsi
    EXPECT_EQ(x.reg(ES_RDI), L(RDI) | L(RSI));
    es_taint_label_user_regs(x.t, x.m.m, 0);
    x.run({0x48, 0x0f, 0xaf, 0xfe}); // the same, from the kept decode
    EXPECT_EQ(x.reg(ES_RDI), L(RDI) | L(RSI));
    es_taint_label_user_regs(x.t, x.m.m, 0);
    x.run({0x48, 0x0f, 0xaf, 0xf9}); // imul rdi, rcx at the same address
    EXPECT_EQ(x.reg(ES_RDI), L(RDI) | L(RCX));
    es_taint_label_user_regs(x.t, x.m.m, 0);
    x.run({0x48, 0xf7, 0xe6}); // mul rsi there: rdx:rax = rax * rsi
    EXPECT_EQ(x.reg(ES_RDX), ES_TL_NR | L(RSI));
    EXPECT_EQ(x.reg(ES_RDI), L(RDI));
}

TEST(Taint, RepMovsCopiesByteLabels)
{
    T x({{ES_RSI, D}, {ES_RDI, D + 0x100}, {ES_RCX, 16}});
    es_taint_set_mem(x.t, D, 4, L(RDX));
    es_taint_set_mem(x.t, D + 8, 8, L(R10));
    x.run({0xf3, 0xa4}); // rep movsb
    EXPECT_EQ(es_taint_mem(x.t, D + 0x100, 4), L(RDX));
    EXPECT_EQ(es_taint_mem(x.t, D + 0x104, 4), 0u);
    EXPECT_EQ(es_taint_mem(x.t, D + 0x108, 8), L(R10));
    EXPECT_EQ(x.reg(ES_RCX), L(RCX)); // counters keep their labels
}

TEST(Taint, StosStoresRax)
{
    T x({{ES_RDI, D}, {ES_RCX, 2}});
    x.run({0xf3, 0x48, 0xab}); // rep stosq
    EXPECT_EQ(es_taint_mem(x.t, D, 16), ES_TL_NR);
}

TEST(Taint, KernelLoadsFromUserMemoryAreMem)
{
    T x({{ES_RBX, D}});
    es_set_mode(x.m.m, 0, ES_MODE_64);
    x.run({0x48, 0x8b, 0x03,        // mov rax, [rbx]
           0x48, 0x8b, 0x4b, 0x08}); // mov rcx, [rbx+8]
    EXPECT_EQ(x.reg(ES_RAX), ES_TL_MEM);
    EXPECT_EQ(x.reg(ES_RCX), ES_TL_MEM);
}

TEST(Taint, MachineStateReadsAreClean)
{
    T x;
    x.run({0x0f, 0x31}); // rdtsc
    EXPECT_EQ(x.reg(ES_RAX), 0u);
    EXPECT_EQ(x.reg(ES_RDX), 0u);
    EXPECT_EQ(x.reg(ES_RCX), L(RCX));
}

TEST(Taint, FaultingInstructionChangesNoLabel)
{
    T x({{ES_RBX, 0x10000}}); // unmapped
    x.m.run({0x48, 0x8b, 0x3b}); // mov rdi, [rbx]: #PF
    EXPECT_EQ(x.reg(ES_RDI), L(RDI));
}

TEST(Taint, NotAttachedCostsNothingAndChangesNothing)
{
    M m(ES_MODE_64);
    EXPECT_EQ(m->nobs, 0);
    es_taint *t = es_taint_new();
    EXPECT_EQ(es_taint_reg(t, ES_RDI), 0u);
    es_taint_free(t);
}

// Shadow memory over page boundaries (es_taint_mem and es_taint_set_mem
// walk a page at a time): a range reads the union of its bytes on both
// pages, setting labels every byte of it, clearing only it, and clearing
// makes no page.
TEST(Taint, ShadowRangesAcrossAPageBoundary)
{
    es_taint *t = es_taint_new();
    const uint64_t P = 0x7000;
    ASSERT_EQ(es_taint_set_mem(t, P + 0xffe, 1, 0x4), 0);      // last-but-one byte of page 1
    ASSERT_EQ(es_taint_set_mem(t, P + 0x1003, 1, 0x10), 0);    // fourth byte of page 2
    EXPECT_EQ(es_taint_mem(t, P + 0xffc, 8), 0x14u);           // reads both pages
    EXPECT_EQ(es_taint_mem(t, P + 0xfff, 4), 0u);              // between them
    EXPECT_EQ(es_taint_mem(t, P + 0xfff, 5), 0x10u);
    ASSERT_EQ(es_taint_set_mem(t, P + 0xffa, 12, 0x1), 0);     // 6 bytes on each page
    for (uint64_t a = P + 0xff9; a < P + 0x1008; a++)
        EXPECT_EQ(es_taint_mem(t, a, 1), a >= P + 0xffa && a < P + 0x1006 ? 0x1u : 0u) << a;
    ASSERT_EQ(es_taint_set_mem(t, P + 0xffc, 4, 0), 0);        // clear the middle
    EXPECT_EQ(es_taint_mem(t, P + 0xffa, 2), 0x1u);
    EXPECT_EQ(es_taint_mem(t, P + 0xffc, 4), 0u);
    EXPECT_EQ(es_taint_mem(t, P + 0x1000, 6), 0x1u);
    // a 3-page range where only the middle page exists
    ASSERT_EQ(es_taint_set_mem(t, 0x20000 + 0x1800, 1, 0x8), 0);
    EXPECT_EQ(es_taint_mem(t, 0x20000, 0x3000), 0x8u);
    ASSERT_EQ(es_taint_set_mem(t, 0x40000, 0x3000, 0), 0);     // nothing there: no page made
    EXPECT_EQ(es_taint_mem(t, 0x40000, 0x3000), 0u);
    es_taint_free(t);
}
