// Atomic family: cmpxchg, cmpxchg8b, cmpxchg16b, xadd, and LOCK rules.
// Register results were checked on the host (Zen 4).
#include "ctl_util.h"

using namespace ctl;

static const uint64_t C = EST_CODE;
static const uint64_t D = EST_DATA;
static const int M64 = ES_MODE_64, M32 = ES_MODE_32;
static const uint64_t ARITH = ES_ARITH_FLAGS;

TEST(Atomic, Cmpxchg)
{
    run_cases({
        // host: equal -> rcx = 7 (zero-extended), rax untouched
        {"cmpxchg ecx, edx (equal)", M64, {0x0f, 0xb1, 0xd1},
         {{ES_RAX, 0xaaaaaaaa00000005ull}, {ES_RCX, 0xbbbbbbbb00000005ull},
          {ES_RDX, 0xcccccccc00000007ull}},
         {{ES_RAX, 0xaaaaaaaa00000005ull}, {ES_RCX, 7}}, 0x202, ARITH, ES_ZF | ES_PF},
        // host: not equal -> rax = 6 (zero-extended), rcx untouched
        {"cmpxchg ecx, edx (not equal)", M64, {0x0f, 0xb1, 0xd1},
         {{ES_RAX, 0xaaaaaaaa00000005ull}, {ES_RCX, 0xbbbbbbbb00000006ull},
          {ES_RDX, 0xcccccccc00000007ull}},
         {{ES_RAX, 6}, {ES_RCX, 0xbbbbbbbb00000006ull}}, 0x202, ARITH,
         ES_CF | ES_SF | ES_AF | ES_PF},
        {"lock cmpxchg [rbx], rcx (equal)", M64, {0xf0, 0x48, 0x0f, 0xb1, 0x0b},
         {{ES_RAX, 10}, {ES_RBX, D}, {ES_RCX, 99}}, {{ES_RAX, 10}}, 0x202, ES_ZF, ES_ZF,
         {{D, 10, 8}}, {{D, 99, 8}}},
        {"lock cmpxchg [rbx], rcx (not equal)", M64, {0xf0, 0x48, 0x0f, 0xb1, 0x0b},
         {{ES_RAX, 10}, {ES_RBX, D}, {ES_RCX, 99}}, {{ES_RAX, 11}}, 0x202, ES_ZF, 0,
         {{D, 11, 8}}, {{D, 11, 8}}},
        {"cmpxchg [rbx], cl (byte, equal)", M32, {0x0f, 0xb0, 0x0b},
         {{ES_RAX, 0x1280}, {ES_RBX, D}, {ES_RCX, 0x7f}}, {{ES_RAX, 0x1280}}, 0x202, ARITH,
         ES_ZF | ES_PF, {{D, 0xff80, 2}}, {{D, 0xff7f, 2}}},
        // the write cycle happens even when the compare fails
        {"cmpxchg [rbx], ecx on a read-only page (not equal): #PF write", M64, {0x0f, 0xb1, 0x0b},
         {{ES_RAX, 0x12345}, {ES_RBX, C}}, {{ES_RAX, 0x12345}}, 0x202, 0, 0, {}, {}, ES_VEC_PF,
         ES_PFEC_P | ES_PFEC_W | ES_PFEC_U, C},
    });
}

TEST(Atomic, Cmpxchg8b16b)
{
    run_cases({
        // host: mismatch loads m64 into edx:eax, zero-extending
        {"cmpxchg8b [rsi] (not equal)", M64, {0x0f, 0xc7, 0x0e},
         {{ES_RSI, D}, {ES_RAX, 0xaaaaaaaa00000001ull}, {ES_RDX, 0xcccccccc00000002ull}},
         {{ES_RAX, 0x22222222}, {ES_RDX, 0x11111111}}, 0x242, ES_ZF, 0,
         {{D, 0x1111111122222222ull, 8}}, {{D, 0x1111111122222222ull, 8}}},
        {"cmpxchg8b [rsi] (equal): rax/rdx untouched", M64, {0x0f, 0xc7, 0x0e},
         {{ES_RSI, D}, {ES_RAX, 0xaaaaaaaa22222222ull}, {ES_RDX, 0xcccccccc11111111ull},
          {ES_RBX, 5}, {ES_RCX, 6}},
         {{ES_RAX, 0xaaaaaaaa22222222ull}, {ES_RDX, 0xcccccccc11111111ull}}, 0x203,
         ES_ZF | ES_CF, ES_ZF | ES_CF, {{D, 0x1111111122222222ull, 8}},
         {{D, 0x0000000600000005ull, 8}}},
        {"lock cmpxchg8b [esi] (32-bit mode)", M32, {0xf0, 0x0f, 0xc7, 0x0e},
         {{ES_RSI, D}, {ES_RAX, 1}, {ES_RDX, 2}, {ES_RBX, 3}, {ES_RCX, 4}}, {}, 0x202, ES_ZF,
         ES_ZF, {{D, 0x0000000200000001ull, 8}}, {{D, 0x0000000400000003ull, 8}}},
        {"cmpxchg16b [rsi] (equal)", M64, {0x48, 0x0f, 0xc7, 0x0e},
         {{ES_RSI, D + 0x10}, {ES_RAX, 1}, {ES_RDX, 2}, {ES_RBX, 3}, {ES_RCX, 4}}, {{ES_RAX, 1}},
         0x202, ES_ZF, ES_ZF, {{D + 0x10, 1, 8}, {D + 0x18, 2, 8}},
         {{D + 0x10, 3, 8}, {D + 0x18, 4, 8}}},
        {"cmpxchg16b [rsi] (not equal)", M64, {0x48, 0x0f, 0xc7, 0x0e},
         {{ES_RSI, D + 0x10}, {ES_RAX, 1}, {ES_RDX, 9}, {ES_RBX, 3}, {ES_RCX, 4}},
         {{ES_RAX, 1}, {ES_RDX, 2}}, 0x242, ES_ZF, 0, {{D + 0x10, 1, 8}, {D + 0x18, 2, 8}},
         {{D + 0x10, 1, 8}, {D + 0x18, 2, 8}}},
        {"cmpxchg16b [rsi] misaligned: #GP(0)", M64, {0x48, 0x0f, 0xc7, 0x0e},
         {{ES_RSI, D + 8}, {ES_RAX, 1}}, {{ES_RAX, 1}}, 0x202, 0, 0, {}, {}, ES_VEC_GP, 0, C},
    });
}

TEST(Atomic, Xadd)
{
    run_cases({
        // host: rcx = 0xc, rdx = 5 (both zero-extended)
        {"xadd ecx, edx", M64, {0x0f, 0xc1, 0xd1},
         {{ES_RCX, 0xbbbbbbbb00000005ull}, {ES_RDX, 0xcccccccc00000007ull}},
         {{ES_RCX, 0xc}, {ES_RDX, 5}}, 0x202, ARITH, ES_PF},
        {"xadd eax, eax (sum wins)", M64, {0x0f, 0xc1, 0xc0}, {{ES_RAX, 3}}, {{ES_RAX, 6}}},
        {"lock xadd [rbx], rcx", M64, {0xf0, 0x48, 0x0f, 0xc1, 0x0b},
         {{ES_RBX, D}, {ES_RCX, 1}}, {{ES_RCX, ~0ull}}, 0x202, ARITH,
         ES_ZF | ES_CF | ES_PF | ES_AF, {{D, ~0ull, 8}}, {{D, 0, 8}}},
        {"xadd [rbx], al (byte)", M32, {0x0f, 0xc0, 0x03}, {{ES_RBX, D}, {ES_RAX, 0x7f}},
         {{ES_RAX, 0x01}}, 0x202, ARITH, ES_OF | ES_SF | ES_AF, {{D, 0x01, 1}},
         {{D, 0x80, 1}}},
        {"xadd [rbx], ecx on a read-only page: #PF, ecx unchanged", M64, {0x0f, 0xc1, 0x0b},
         {{ES_RBX, C}, {ES_RCX, 1}}, {{ES_RCX, 1}}, 0x202, 0, 0, {}, {}, ES_VEC_PF,
         ES_PFEC_P | ES_PFEC_W | ES_PFEC_U},
    });
}

TEST(Atomic, LockRules)
{
    run_cases({
        // LOCK with a register destination does not decode: #UD
        {"lock cmpxchg ecx, edx", M64, {0xf0, 0x0f, 0xb1, 0xd1}, {}, {}, 0x202, 0, 0, {}, {},
         ES_VEC_UD, 0, C},
        {"lock mov [rbx], eax", M64, {0xf0, 0x89, 0x03}, {{ES_RBX, D}}, {}, 0x202, 0, 0, {}, {},
         ES_VEC_UD, 0},
        // xchg with memory is locked with or without the prefix
        {"lock xchg [rbx], ecx", M64, {0xf0, 0x87, 0x0b}, {{ES_RBX, D}, {ES_RCX, 1}},
         {{ES_RCX, 2}}, 0x202, 0, 0, {{D, 2, 4}}, {{D, 1, 4}}},
    });
}
