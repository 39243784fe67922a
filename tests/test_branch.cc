// Branch family: jmp/jcc/call/ret (near), loop*, jrcxz, and far
// jmp/call/ret between 64-bit and compatibility mode through Linux's user
// code selectors.
#include "ctl_util.h"
#include "seg.h"

using namespace ctl;

static const uint64_t C = EST_CODE;
static const uint64_t D = EST_DATA;
static const uint64_t S = EST_STACK_TOP - 0x100;
static const int M64 = ES_MODE_64, M32 = ES_MODE_32;
static const uint64_t NONCANON = 0x0000800000000000ull;

TEST(Branch, JmpJcc)
{
    run_cases({
        // the skipped hlt would raise #GP at CPL 3
        {"jmp +1; hlt", M64, {0xeb, 0x01, 0xf4}, {}, {}},
        {"jmp rel32 +1; hlt", M64, {0xe9, 0x01, 0, 0, 0, 0xf4}, {}, {}},
        {"jz +5 taken; mov eax, 1", M64, {0x74, 0x05, 0xb8, 1, 0, 0, 0}, {}, {{ES_RAX, 0}}, 0x242},
        {"jz +5 not taken; mov eax, 1", M64, {0x74, 0x05, 0xb8, 1, 0, 0, 0}, {}, {{ES_RAX, 1}}},
        {"jl (0f 8c) taken on SF!=OF", M64, {0x0f, 0x8c, 5, 0, 0, 0, 0xb8, 1, 0, 0, 0}, {},
         {{ES_RAX, 0}}, 0xa02},
        {"jle not taken on ZF=0 SF=OF", M64, {0x7e, 0x05, 0xb8, 1, 0, 0, 0}, {}, {{ES_RAX, 1}},
         0xa82},
        {"jbe taken on CF", M32, {0x76, 0x05, 0xb8, 1, 0, 0, 0}, {}, {{ES_RAX, 0}}, 0x203},
        {"jnp taken on PF=0", M64, {0x7b, 0x05, 0xb8, 1, 0, 0, 0}, {}, {{ES_RAX, 0}}, 0x202},
        {"jmp rax", M64, {0xff, 0xe0, 0xf4}, {{ES_RAX, C + 3}}, {}},
        {"jmp [rbx]", M64, {0xff, 0x23, 0xf4}, {{ES_RBX, D}}, {}, 0x202, 0, 0, {{D, C + 3, 8}}},
        {"jmp eax (32-bit mode)", M32, {0xff, 0xe0, 0xf4}, {{ES_RAX, C + 3}}, {}},
        {"jmp rax, non-canonical: #GP(0) at the jmp", M64, {0xff, 0xe0}, {{ES_RAX, NONCANON}},
         {}, 0x202, 0, 0, {}, {}, ES_VEC_GP, 0, C},
    });
}

TEST(Branch, CallRet)
{
    run_cases({
        {"call +0; pop rbx", M64, {0xe8, 0, 0, 0, 0, 0x5b}, {}, {{ES_RBX, C + 5}, {ES_RSP, S}}},
        // 0: call 7; 5: jmp 10; 7: ret 8
        {"call; jmp; ret 8", M64, {0xe8, 0x02, 0, 0, 0, 0xeb, 0x03, 0xc2, 0x08, 0x00}, {},
         {{ES_RSP, S + 8}}},
        {"call; jmp; ret 8 (32-bit mode)", M32, {0xe8, 0x02, 0, 0, 0, 0xeb, 0x03, 0xc2, 0x08, 0x00},
         {}, {{ES_RSP, S + 8}}},
        {"call rax", M64, {0xff, 0xd0, 0xf4, 0x5b}, {{ES_RAX, C + 3}}, {{ES_RBX, C + 2}}},
        {"call [rbx] (32-bit mode)", M32, {0xff, 0x13, 0xf4, 0x5b}, {{ES_RBX, D}},
         {{ES_RBX, C + 2}, {ES_RSP, S}}, 0x202, 0, 0, {{D, C + 3, 4}}},
        {"ret to a non-canonical address: #GP(0), rsp unchanged", M64, {0xc3}, {},
         {{ES_RSP, S}}, 0x202, 0, 0, {{S, NONCANON, 8}}, {}, ES_VEC_GP, 0, C},
        {"call rax, non-canonical: nothing pushed", M64, {0xff, 0xd0}, {{ES_RAX, NONCANON}},
         {{ES_RSP, S}}, 0x202, 0, 0, {}, {}, ES_VEC_GP, 0},
        {"call with rsp unmapped: #PF, rsp unchanged", M64, {0xe8, 0, 0, 0, 0},
         {{ES_RSP, 0x10008}}, {{ES_RSP, 0x10008}}, 0x202, 0, 0, {}, {}, ES_VEC_PF,
         ES_PFEC_W | ES_PFEC_U},
    });
    // 16-bit ret in 32-bit mode pops two bytes and truncates EIP
    M m(M32);
    m.wr(S, 0x12340000 | ((C + 2) & 0xffff), 4);
    est_code(m.m, (const uint8_t[]){0x66, 0xc3}, 2);
    ASSERT_EQ(es_step(m.m), ES_OK);
    EXPECT_EQ(m->rip, (C + 2) & 0xffff);
    EXPECT_EQ(m->gpr[ES_RSP], S + 2);
}

TEST(Branch, LoopJrcxz)
{
    run_cases({
        // mov ecx, 5; L: lea eax, [rax+1]; loop L
        {"mov ecx, 5; lea eax, [rax+1]; loop", M64,
         {0xb9, 5, 0, 0, 0, 0x8d, 0x40, 0x01, 0xe2, 0xfb}, {}, {{ES_RAX, 5}, {ES_RCX, 0}}},
        // host: addr32 loop with rcx = 0x100000002 leaves rcx = 1
        {"loop with a 32-bit counter (67 e2)", M64, {0x67, 0xe2, 0x00},
         {{ES_RCX, 0x100000002ull}}, {{ES_RCX, 1}}},
        {"loop with rcx = 0 wraps and branches", M64, {0xe2, 0x01, 0xf4}, {{ES_RCX, 0}},
         {{ES_RCX, ~0ull}}},
        {"loop with cx (67 e2 in 32-bit mode)", M32, {0x67, 0xe2, 0x01, 0xf4},
         {{ES_RCX, 0x10000}}, {{ES_RCX, 0x1ffff}}}, // cx wraps, the rest merges
        {"loope: ZF=1 branches", M64, {0xe1, 0x01, 0xf4}, {{ES_RCX, 3}}, {{ES_RCX, 2}}, 0x242},
        // falling through reaches the hlt: #GP there
        {"loope: ZF=0 falls through", M64, {0xe1, 0x01, 0xf4}, {{ES_RCX, 3}}, {{ES_RCX, 2}},
         0x202, 0, 0, {}, {}, ES_VEC_GP, 0, C + 2},
        {"loopne: ZF=0 branches", M64, {0xe0, 0x01, 0xf4}, {{ES_RCX, 3}}, {{ES_RCX, 2}}},
        {"jrcxz taken", M64, {0xe3, 0x01, 0xf4}, {{ES_RCX, 0}}, {}},
        {"jecxz taken on ecx = 0 (67 e3)", M64, {0x67, 0xe3, 0x01, 0xf4},
         {{ES_RCX, 0x100000000ull}}, {}},
        {"jrcxz not taken", M64, {0xe3, 0x01, 0xf4}, {{ES_RCX, 0x100000000ull}}, {}, 0x202, 0,
         0, {}, {}, ES_VEC_GP, 0, C + 2},
        {"jcxz taken on cx = 0 (32-bit mode)", M32, {0x67, 0xe3, 0x01, 0xf4},
         {{ES_RCX, 0x10000}}, {}},
    });
}

// 64-bit code: jmp far [D] -> 0x23:C+0x10 (32-bit code): mov eax, 0x12345678;
// jmp far 0x33:C+0x20 -> back in 64-bit mode at the end.
TEST(Branch, FarJmpSwitchesMode)
{
    std::vector<uint8_t> code(0x20, 0x90);
    const uint8_t jmp64[] = {0xff, 0x2c, 0x25, 0x00, 0x00, 0x60, 0x00}; // jmp far [0x600000]
    const uint8_t body32[] = {0xb8, 0x78, 0x56, 0x34, 0x12,             // mov eax, 0x12345678
                              0xea, 0x20, 0x00, 0x40, 0x00, 0x33, 0x00}; // jmp far 0x33:0x400020
    std::copy(jmp64, jmp64 + sizeof jmp64, code.begin());
    std::copy(body32, body32 + sizeof body32, code.begin() + 0x10);
    M m(M64);
    m.wr(D, C + 0x10, 4);
    m.wr(D + 4, 0x23, 2);
    est_code(m.m, code.data(), code.size());
    ASSERT_EQ(es_step(m.m), ES_OK) << m->message;
    EXPECT_EQ(m->mode, ES_MODE_32);
    EXPECT_EQ(m->seg[ES_SEG_CS].sel, 0x23);
    EXPECT_EQ(m->rip, C + 0x10);
    ASSERT_EQ(es_step(m.m), ES_OK);
    EXPECT_EQ(m->gpr[ES_RAX], 0x12345678u);
    ASSERT_EQ(es_step(m.m), ES_OK) << m->message;
    EXPECT_EQ(m->mode, ES_MODE_64);
    EXPECT_EQ(m->seg[ES_SEG_CS].sel, 0x33);
    EXPECT_EQ(m->rip, C + 0x20);
}

// 32-bit code far-calls 64-bit code, which returns with a 32-bit retf.
TEST(Branch, FarCallRetAcrossModes)
{
    std::vector<uint8_t> code(0x20, 0x90);
    const uint8_t call32[] = {0x9a, 0x10, 0x00, 0x40, 0x00, 0x33, 0x00}; // call far 0x33:0x400010
    const uint8_t body64[] = {0x48, 0x89, 0xe3,                          // mov rbx, rsp
                              0xcb};                                      // retf (32-bit slots)
    std::copy(call32, call32 + sizeof call32, code.begin());
    std::copy(body64, body64 + sizeof body64, code.begin() + 0x10);
    M m(M32);
    est_code(m.m, code.data(), code.size());
    ASSERT_EQ(es_step(m.m), ES_OK) << m->message;
    EXPECT_EQ(m->mode, ES_MODE_64);
    EXPECT_EQ(m->gpr[ES_RSP], S - 8);
    EXPECT_EQ(m.rd(S - 4, 4), 0x23u);   // CS slot
    EXPECT_EQ(m.rd(S - 8, 4), C + 7);   // return EIP
    ASSERT_EQ(es_step(m.m), ES_OK);
    EXPECT_EQ(m->gpr[ES_RBX], S - 8);
    ASSERT_EQ(es_step(m.m), ES_OK) << m->message;
    EXPECT_EQ(m->mode, ES_MODE_32);
    EXPECT_EQ(m->seg[ES_SEG_CS].sel, 0x23);
    EXPECT_EQ(m->rip, C + 7);
    EXPECT_EQ(m->gpr[ES_RSP], S);
}

TEST(Branch, FarTransferChecks)
{
    run_cases({
        {"jmp far 0x10:x (kernel CS, DPL 0)", M32, {0xea, 0, 0, 0x40, 0, 0x10, 0}, {}, {}, 0x202,
         0, 0, {}, {}, ES_VEC_GP, 0x10, C},
        {"jmp far 0x2b:x (data segment)", M32, {0xea, 0, 0, 0x40, 0, 0x2b, 0}, {}, {}, 0x202, 0,
         0, {}, {}, ES_VEC_GP, 0x28},
        {"jmp far 0:x (null)", M32, {0xea, 0, 0, 0x40, 0, 0, 0}, {}, {}, 0x202, 0, 0, {}, {},
         ES_VEC_GP, 0},
        {"jmp far [rbx] m16:64 to a non-canonical offset", M64, {0x48, 0xff, 0x2b},
         {{ES_RBX, D}}, {}, 0x202, 0, 0, {{D, NONCANON, 8}, {D + 8, 0x33, 2}}, {}, ES_VEC_GP, 0},
        {"retf to RPL 0", M64, {0xcb}, {}, {{ES_RSP, S}}, 0x202, 0, 0,
         {{S, C, 4}, {S + 4, 0x10, 4}}, {}, ES_VEC_GP, 0x10},
        // 48 cb: 8-byte offset and CS slots; ca 10 00 adds 16
        {"rex.w retf to 0x33", M64, {0x48, 0xcb, 0xf4}, {}, {{ES_RSP, S + 16}}, 0x202, 0, 0,
         {{S, C + 3, 8}, {S + 8, 0x33, 8}}},
        {"retf 0x10 to 0x23 from 32-bit mode", M32, {0xca, 0x10, 0x00, 0xf4}, {},
         {{ES_RSP, S + 0x18}}, 0x202, 0, 0, {{S, C + 4, 4}, {S + 4, 0x23, 4}}},
    });
}

TEST(Branch, Iret)
{
    run_cases({
        // frame: RIP, CS, RFLAGS, RSP, SS; IOPL and IF in the image are
        // ignored at CPL 3, the other flags load
        {"iretq to the same ring", M64, {0x48, 0xcf, 0xf4}, {},
         {{ES_RSP, S + 0x100}}, 0x202, ~0ull, 0x2d7,
         {{S, C + 3, 8}, {S + 8, 0x33, 8}, {S + 16, 0x30d7, 8}, {S + 24, S + 0x100, 8},
          {S + 32, 0x2b, 8}}},
        {"iretd (32-bit mode): three slots", M32, {0xcf, 0xf4}, {}, {{ES_RSP, S + 12}}, 0x202,
         ES_ARITH_FLAGS, ES_CF, {{S, C + 2, 4}, {S + 4, 0x23, 4}, {S + 8, 0x203, 4}}},
        {"iretq with NT set: #GP(0)", M64, {0x48, 0xcf}, {}, {{ES_RSP, S}}, 0x4202, 0, 0, {}, {},
         ES_VEC_GP, 0, C},
        {"iretq to ring 0 from ring 3: #GP(sel)", M64, {0x48, 0xcf}, {}, {{ES_RSP, S}}, 0x202, 0,
         0, {{S, C, 8}, {S + 8, 0x10, 8}, {S + 16, 0x202, 8}}, {}, ES_VEC_GP, 0x10},
        {"iretq with a kernel SS: #GP(sel)", M64, {0x48, 0xcf}, {}, {{ES_RSP, S}}, 0x202, 0, 0,
         {{S, C, 8}, {S + 8, 0x33, 8}, {S + 16, 0x202, 8}, {S + 24, S, 8}, {S + 32, 0x18, 8}},
         {}, ES_VEC_GP, 0x18},
    });
    // iretq from 64-bit code into compatibility mode
    M m(M64);
    m.wr(S, C + 0x10, 8);
    m.wr(S + 8, 0x23, 8);
    m.wr(S + 16, 0x202, 8);
    m.wr(S + 24, S - 0x40, 8);
    m.wr(S + 32, 0x2b, 8);
    est_code(m.m, (const uint8_t[]){0x48, 0xcf}, 2);
    ASSERT_EQ(es_step(m.m), ES_OK) << m->message;
    EXPECT_EQ(m->mode, ES_MODE_32);
    EXPECT_EQ(m->rip, C + 0x10);
    EXPECT_EQ(m->gpr[ES_RSP], S - 0x40);
}

// The kernel's way out: iretq at CPL 0 to ring 3 loads IOPL/IF as given,
// switches CPL and nulls data selectors the user may not hold.
TEST(Branch, IretToRing3)
{
    M m(M64);
    es_set_mode(m.m, 0, ES_MODE_64);
    m->seg[ES_SEG_CS].sel = 0x10;
    m->seg[ES_SEG_DS].sel = 0x18;
    m->seg[ES_SEG_DS].attr = 0xc093; // KERNEL_DS: DPL 0
    m->seg[ES_SEG_ES].sel = 0x2b;
    m->seg[ES_SEG_ES].attr = 0xc0f3;
    m->rflags = 0x2;
    m.wr(S, C + 0x20, 8);
    m.wr(S + 8, 0x33, 8);
    m.wr(S + 16, 0x3246, 8);
    m.wr(S + 24, S + 0x80, 8);
    m.wr(S + 32, 0x2b, 8);
    est_code(m.m, (const uint8_t[]){0x48, 0xcf}, 2);
    ASSERT_EQ(es_step(m.m), ES_OK) << m->message;
    EXPECT_EQ(m->cpl, 3);
    EXPECT_EQ(m->seg[ES_SEG_CS].sel, 0x33);
    EXPECT_EQ(m->seg[ES_SEG_SS].sel, 0x2b);
    EXPECT_EQ(m->rflags, 0x3246u);
    EXPECT_EQ(m->gpr[ES_RSP], S + 0x80);
    EXPECT_EQ(m->rip, C + 0x20);
    EXPECT_EQ(m->seg[ES_SEG_DS].sel, 0);
    EXPECT_EQ(m->seg[ES_SEG_ES].sel, 0x2b);
}
