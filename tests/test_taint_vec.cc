// Taint through the XMM/YMM registers (analysis/taint_vec.c): a label per
// register per 128-bit lane, moved by the fallback rule between GPRs,
// memory and vector registers; VEX.128 writes clear the upper lane, legacy
// SSE writes keep it, VZEROUPPER/VZEROALL clear lanes, a gather's index
// register and the elements it reads reach its destination.  Each case
// labels every user GPR with itself (vector registers start clean, see
// taint.h) and checks the exact label sets that result.
#include "ctl_util.h"

#include "taint.h"
#include "taint_fixture.h"

using namespace ctl;

static const uint64_t D = EST_DATA;

#define L(r) ES_TL_REG(ES_##r)

using T = TaintRun; // the machine's XCR0 enables AVX (x87 | SSE | AVX)

TEST(TaintVec, VectorRegistersStartClean)
{
    T x;
    for (int r = 0; r < ES_TAINT_NVREG; r++)
        for (int l = 0; l < ES_TAINT_NLANE; l++)
            EXPECT_EQ(es_taint_vreg(x.t, r, l), 0u);
    es_taint_set_vreg(x.t, 3, 1, L(RSI));
    EXPECT_EQ(x.hi(3), L(RSI));
    EXPECT_EQ(es_taint_vreg(x.t, 16, 0), 0u); // out of range
    EXPECT_EQ(es_taint_vreg(x.t, 3, ES_TAINT_NLANE), 0u);
    es_taint_label_user_regs(x.t, x.m.m, 0); // a new entry: no vector label survives
    EXPECT_EQ(x.hi(3), 0u);
}

TEST(TaintVec, GprToXmmToYmmToGpr)
{
    T x;
    x.run({0x66, 0x48, 0x0f, 0x6e, 0xc7}); // movq xmm0, rdi
    EXPECT_EQ(x.lo(0), L(RDI));
    EXPECT_EQ(x.hi(0), 0u);
    x.run({0xc5, 0xfd, 0xd4, 0xca}); // vpaddq ymm1, ymm0, ymm2
    EXPECT_EQ(x.lo(1), L(RDI));
    EXPECT_EQ(x.hi(1), L(RDI)); // lanes as wide as the operand: the union
    x.run({0xc4, 0xe1, 0xf9, 0x7e, 0xc8}); // vmovq rax, xmm1
    EXPECT_EQ(x.reg(ES_RAX), L(RDI));
}

TEST(TaintVec, GprDestinationsOfVectorSources)
{
    T x;
    es_taint_set_vreg(x.t, 1, 0, L(RSI));
    es_taint_set_vreg(x.t, 1, 1, L(R9));
    x.run({0xc5, 0xfd, 0xd7, 0xc1}); // vpmovmskb eax, ymm1: both lanes
    EXPECT_EQ(x.reg(ES_RAX), L(RSI) | L(R9));
    x.run({0xc4, 0xe3, 0x79, 0x16, 0xca, 0x01}); // vpextrd edx, xmm1, 1: lane 0
    EXPECT_EQ(x.reg(ES_RDX), L(RSI));
    x.run({0x66, 0x0f, 0x7e, 0xc9}); // movd ecx, xmm1
    EXPECT_EQ(x.reg(ES_RCX), L(RSI));
}

TEST(TaintVec, Vex128ClearsTheUpperLaneLegacySseKeepsIt)
{
    T x;
    x.run({0x66, 0x48, 0x0f, 0x6e, 0xc7,  // movq xmm0, rdi
           0xc4, 0xe2, 0x7d, 0x59, 0xc8}); // vpbroadcastq ymm1, xmm0
    EXPECT_EQ(x.lo(1), L(RDI));
    EXPECT_EQ(x.hi(1), L(RDI));
    x.run({0x66, 0x48, 0x0f, 0x6e, 0xce}); // movq xmm1, rsi: legacy, bits 255:128 stay
    EXPECT_EQ(x.lo(1), L(RSI));
    EXPECT_EQ(x.hi(1), L(RDI));
    x.run({0x66, 0x0f, 0xd4, 0xc8}); // paddq xmm1, xmm0: reads its destination
    EXPECT_EQ(x.lo(1), L(RSI) | L(RDI));
    EXPECT_EQ(x.hi(1), L(RDI));
    x.run({0xc4, 0xe1, 0xf9, 0x6e, 0xca}); // vmovq xmm1, rdx: VEX.128 zeroes 255:128
    EXPECT_EQ(x.lo(1), L(RDX));
    EXPECT_EQ(x.hi(1), 0u);
    es_taint_set_vreg(x.t, 1, 1, L(R8));
    x.run({0xc5, 0xf1, 0xd4, 0xc8}); // vpaddq xmm1, xmm1, xmm0
    EXPECT_EQ(x.lo(1), L(RDX) | L(RDI));
    EXPECT_EQ(x.hi(1), 0u);
}

TEST(TaintVec, VzeroupperAndVzeroallClear)
{
    T x;
    for (int r = 0; r < ES_TAINT_NVREG; r++) {
        es_taint_set_vreg(x.t, r, 0, L(RSI));
        es_taint_set_vreg(x.t, r, 1, L(RDI));
    }
    x.run({0xc5, 0xf8, 0x77}); // vzeroupper
    for (int r = 0; r < ES_TAINT_NVREG; r++) {
        EXPECT_EQ(x.lo(r), L(RSI)) << r;
        EXPECT_EQ(x.hi(r), 0u) << r;
    }
    es_taint_set_vreg(x.t, 15, 1, L(RDI));
    x.run({0xc5, 0xfc, 0x77}); // vzeroall
    for (int r = 0; r < ES_TAINT_NVREG; r++) {
        EXPECT_EQ(x.lo(r), 0u) << r;
        EXPECT_EQ(x.hi(r), 0u) << r;
    }
}

// vpgatherdd xmm0, [rbx+xmm1*4], xmm2 with every index 0 (from rsi): the
// destination takes the index register's label and the label of the
// memory the elements were read from, nothing else; the mask ends zero.
TEST(TaintVec, GatherTakesItsIndexAndTheMemoryItReads)
{
    T x({{ES_RBX, D}, {ES_RSI, 0}});
    es_taint_set_mem(x.t, D, 4, L(R8));
    es_taint_set_mem(x.t, D + 0x40, 4, L(R9)); // not read
    es_taint_set_vreg(x.t, 0, 1, L(R10));
    x.run({0x66, 0x48, 0x0f, 0x6e, 0xce,         // movq xmm1, rsi
           0x66, 0x0f, 0x76, 0xd2,               // pcmpeqd xmm2, xmm2: all ones, clean
           0xc4, 0xe2, 0x69, 0x90, 0x04, 0x8b}); // vpgatherdd xmm0, [rbx+xmm1*4], xmm2
    EXPECT_EQ(x.m->xmm[2].q[0], 0u); // the mask completed
    EXPECT_EQ(x.lo(0), L(RSI) | L(R8));
    EXPECT_EQ(x.hi(0), 0u); // VEX.128
    EXPECT_EQ(x.lo(2), 0u);
    EXPECT_EQ(x.hi(2), 0u);

    T y({{ES_RBX, D}, {ES_RSI, 0}});
    es_taint_set_mem(y.t, D, 4, L(R8));
    y.run({0x66, 0x48, 0x0f, 0x6e, 0xce,         // movq xmm1, rsi (lane 0 only)
           0xc5, 0xed, 0x76, 0xd2,               // vpcmpeqd ymm2, ymm2, ymm2
           0xc4, 0xe2, 0x6d, 0x90, 0x04, 0x8b}); // vpgatherdd ymm0, [rbx+ymm1*4], ymm2
    EXPECT_EQ(y.lo(0), L(RSI) | L(R8));
    EXPECT_EQ(y.hi(0), L(RSI) | L(R8));
}

// A gather that faults part-way keeps the elements it completed: their
// labels join the destination's old ones instead of being dropped.
TEST(TaintVec, GatherFaultingPartWayKeepsWhatItRead)
{
    T x({{ES_RBX, D + 0xfffc}}); // element 1 is past the data area: #PF
    x.m->xmm[1].d[0] = 0, x.m->xmm[1].d[1] = 1, x.m->xmm[1].d[2] = 2, x.m->xmm[1].d[3] = 3;
    x.m->xmm[2].q[0] = x.m->xmm[2].q[1] = ~0ull;
    es_taint_set_vreg(x.t, 0, 0, L(R10));
    es_taint_set_vreg(x.t, 1, 0, L(RSI));
    es_taint_set_vreg(x.t, 2, 0, L(R11));
    es_taint_set_mem(x.t, D + 0xfffc, 4, L(R8));
    x.m.run({0xc4, 0xe2, 0x69, 0x90, 0x04, 0x8b}); // vpgatherdd xmm0, [rbx+xmm1*4], xmm2
    EXPECT_EQ(x.m->fault.vector, ES_VEC_PF);
    EXPECT_EQ(x.m->xmm[2].d[0], 0u); // element 0 completed
    EXPECT_EQ(x.lo(0), L(R10) | L(RSI) | L(R11) | L(R8));
    EXPECT_EQ(x.lo(2) & L(R11), L(R11)); // the mask is only partly cleared
}

TEST(TaintVec, CleanValuesOverwriteLabels)
{
    T x;
    x.run({0x66, 0x48, 0x0f, 0x6e, 0xc7, // movq xmm0, rdi
           0xbb, 0x01, 0x00, 0x00, 0x00, // mov ebx, 1
           0x66, 0x48, 0x0f, 0x6e, 0xc3}); // movq xmm0, rbx
    EXPECT_EQ(x.lo(0), 0u);

    es_taint_set_vreg(x.t, 0, 0, L(RDI));
    es_taint_set_vreg(x.t, 0, 1, L(RDI));
    x.run({0xc5, 0xfd, 0x6f, 0xc3}); // vmovdqa ymm0, ymm3 (clean)
    EXPECT_EQ(x.lo(0), 0u);
    EXPECT_EQ(x.hi(0), 0u);

    es_taint_set_vreg(x.t, 4, 0, L(RSI));
    es_taint_set_vreg(x.t, 4, 1, L(RSI));
    x.run({0x66, 0x0f, 0xef, 0xe4}); // pxor xmm4, xmm4: the zero idiom
    EXPECT_EQ(x.lo(4), 0u);
    EXPECT_EQ(x.hi(4), L(RSI)); // legacy: the upper lane is not written
    x.run({0xc5, 0xdd, 0xef, 0xe4}); // vpxor ymm4, ymm4, ymm4
    EXPECT_EQ(x.hi(4), 0u);
}

TEST(TaintVec, MemoryRoundTrip)
{
    T x({{ES_RBX, D}});
    x.run({0x66, 0x48, 0x0f, 0x6e, 0xc7, // movq xmm0, rdi
           0xf3, 0x0f, 0x7f, 0x03,       // movdqu [rbx], xmm0
           0xf3, 0x0f, 0x6f, 0x2b});     // movdqu xmm5, [rbx]
    EXPECT_EQ(es_taint_mem(x.t, D, 16), L(RDI));
    EXPECT_EQ(x.lo(5), L(RDI));
    es_taint_set_mem(x.t, D + 16, 16, L(R12));
    x.run({0xc5, 0xfe, 0x6f, 0x33}); // vmovdqu ymm6, [rbx]: both lanes get what was read
    EXPECT_EQ(x.lo(6), L(RDI) | L(R12));
    EXPECT_EQ(x.hi(6), L(RDI) | L(R12));
}

// FXSAVE stores the XMM registers, FXRSTOR loads them: the image carries
// their labels and gives its own back.
TEST(TaintVec, FxsaveAndFxrstorCarryTheXmmLabels)
{
    T x({{ES_RBX, D}});
    es_taint_set_vreg(x.t, 7, 0, L(R13));
    x.run({0x48, 0x0f, 0xae, 0x03}); // fxsave64 [rbx]
    EXPECT_EQ(es_taint_mem(x.t, D + 160 + 7 * 16, 16) & L(R13), L(R13));
    es_taint_set_mem(x.t, D, 512, L(R14));
    x.run({0x48, 0x0f, 0xae, 0x0b}); // fxrstor64 [rbx]
    EXPECT_EQ(x.lo(3), L(R14));
    EXPECT_EQ(x.lo(7), L(R13) | L(R14)); // merged: conservative
    EXPECT_EQ(x.hi(3), 0u);              // FXRSTOR has no YMM state
}
