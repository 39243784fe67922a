// Stack family: push/pop (registers, memory, immediates, segment
// registers), pushf/popf, enter/leave, pusha/popa.  POPF masks and ENTER's
// nesting were checked on the host (Zen 4) at CPL 3.
#include "ctl_util.h"

using namespace ctl;

static const uint64_t D = EST_DATA;
static const uint64_t S = EST_STACK_TOP - 0x100; // initial RSP of est_new
static const int M64 = ES_MODE_64, M32 = ES_MODE_32;

TEST(Stack, PushPop64)
{
    run_cases({
        {"push rax; pop rbx", M64, {0x50, 0x5b}, {{ES_RAX, 0x1122334455667788ull}},
         {{ES_RBX, 0x1122334455667788ull}, {ES_RSP, S}}, 0x202, 0, 0, {},
         {{S - 8, 0x1122334455667788ull, 8}}},
        {"push -128 (6a 80)", M64, {0x6a, 0x80}, {}, {{ES_RSP, S - 8}}, 0x202, 0, 0, {},
         {{S - 8, 0xffffffffffffff80ull, 8}}},
        {"push 0x7fffffff (68)", M64, {0x68, 0xff, 0xff, 0xff, 0x7f}, {}, {{ES_RSP, S - 8}},
         0x202, 0, 0, {}, {{S - 8, 0x7fffffffull, 8}}},
        {"push word 1 (66 6a 01)", M64, {0x66, 0x6a, 0x01}, {}, {{ES_RSP, S - 2}}, 0x202, 0, 0,
         {{S - 8, ~0ull, 8}}, {{S - 8, 0x0001ffffffffffffull, 8}}},
        {"push qword [rbx]", M64, {0xff, 0x33}, {{ES_RBX, D}}, {{ES_RSP, S - 8}}, 0x202, 0, 0,
         {{D, 0xabcdef, 8}}, {{S - 8, 0xabcdef, 8}}},
        {"push r8; pop r15", M64, {0x41, 0x50, 0x41, 0x5f}, {{ES_R8, 42}}, {{ES_R15, 42}}},
        {"pop ax (66 58)", M64, {0x66, 0x58}, {{ES_RAX, ~0ull}},
         {{ES_RAX, 0xffffffffffff1234ull}, {ES_RSP, S + 2}}, 0x202, 0, 0, {{S, 0x1234, 2}}},
        {"push rsp pushes the old value", M64, {0x54}, {}, {{ES_RSP, S - 8}}, 0x202, 0, 0, {},
         {{S - 8, S, 8}}},
        {"pop rsp loads the popped value", M64, {0x5c}, {}, {{ES_RSP, 0x1234}}, 0x202, 0, 0,
         {{S, 0x1234, 8}}},
        {"pop qword [rsp] addresses with the incremented rsp", M64, {0x8f, 0x04, 0x24}, {},
         {{ES_RSP, S + 8}}, 0x202, 0, 0, {{S, 0x77, 8}, {S + 8, 0, 8}}, {{S + 8, 0x77, 8}}},
        {"pop qword [rbx] to a read-only page: #PF, rsp unchanged", M64, {0x8f, 0x03},
         {{ES_RBX, EST_CODE}}, {{ES_RSP, S}}, 0x202, 0, 0, {}, {}, ES_VEC_PF,
         ES_PFEC_P | ES_PFEC_W | ES_PFEC_U},
        {"push rax with rsp on an unmapped page: #PF, rsp unchanged", M64, {0x50},
         {{ES_RSP, 0x10008}}, {{ES_RSP, 0x10008}}, 0x202, 0, 0, {}, {}, ES_VEC_PF,
         ES_PFEC_W | ES_PFEC_U},
    });
}

TEST(Stack, PushPop32)
{
    run_cases({
        {"push eax; pop ebx", M32, {0x50, 0x5b}, {{ES_RAX, 0x11223344}},
         {{ES_RBX, 0x11223344}, {ES_RSP, S}}},
        {"push -1 (6a ff): 4 bytes", M32, {0x6a, 0xff}, {}, {{ES_RSP, S - 4}}, 0x202, 0, 0,
         {{S - 8, 0, 8}}, {{S - 8, 0xffffffff00000000ull, 8}}},
        {"push ax (66 50)", M32, {0x66, 0x50}, {{ES_RAX, 0xbeef}}, {{ES_RSP, S - 2}}, 0x202, 0,
         0, {}, {{S - 2, 0xbeef, 2}}},
        {"pushad; popad round trip (esp slot skipped)", M32,
         {0x60, 0xc7, 0x44, 0x24, 0x0c, 0x99, 0, 0, 0, 0x61},
         {{ES_RAX, 1}, {ES_RCX, 2}, {ES_RDX, 3}, {ES_RBX, 4}, {ES_RBP, 6}, {ES_RSI, 7},
          {ES_RDI, 8}},
         {{ES_RAX, 1}, {ES_RCX, 2}, {ES_RDX, 3}, {ES_RBX, 4}, {ES_RSP, S}, {ES_RBP, 6},
          {ES_RSI, 7}, {ES_RDI, 8}},
         0x202, 0, 0, {}, {{S - 4, 1, 4}, {S - 20, 0x99, 4}, {S - 32, 8, 4}}},
        {"pushad stores the original esp", M32, {0x60}, {}, {{ES_RSP, S - 32}}, 0x202, 0, 0,
         {}, {{S - 20, S, 4}}},
        {"popad ignores the esp slot", M32, {0x61}, {}, {{ES_RSP, S + 32}, {ES_RAX, 0xa}},
         0x202, 0, 0, {{S + 12, 0xdead, 4}, {S + 28, 0xa, 4}}},
        {"pusha (16-bit)", M32, {0x66, 0x60}, {{ES_RAX, 0x10001}}, {{ES_RSP, S - 16}}, 0x202, 0,
         0, {}, {{S - 2, 1, 2}}},
    });
}

TEST(Stack, SegmentRegisters)
{
    run_cases({
        {"push fs (Intel, the default vendor: 16-bit write)", M64, {0x0f, 0xa0}, {},
         {{ES_RSP, S - 8}}, 0x202, 0, 0, {{S - 8, ~0ull, 8}}, {{S - 8, 0xffffffffffff0000ull, 8}}},
        {"push es; pop ds (32-bit mode)", M32, {0x06, 0x1f}, {}, {{ES_RSP, S}}, 0x202, 0, 0, {},
         {{S - 4, 0x2b, 2}}},
        {"pop ds with a kernel selector: #GP, esp unchanged", M32, {0x1f}, {}, {{ES_RSP, S}},
         0x202, 0, 0, {{S, 0x18, 4}}, {}, ES_VEC_GP, 0x18},
        {"pop ss (0x2b)", M32, {0x17}, {}, {{ES_RSP, S + 4}}, 0x202, 0, 0, {{S, 0x2b, 4}}},
        {"pop gs (null)", M64, {0x0f, 0xa9}, {}, {{ES_RSP, S + 8}}, 0x202, 0, 0, {{S, 0, 8}}},
    });
    // the vendor rule: AMD zero-extends a pushed selector (measured on
    // Zen 4), Intel writes only the selector's two bytes
    M m(M64);
    m->vendor = 1;
    m.wr(S - 8, ~0ull, 8);
    ASSERT_EQ(m.run({0x0f, 0xa8}), 0); // push gs
    EXPECT_EQ(m.rd(S - 8, 8), 0u);
    M i(M64);
    i->vendor = 0;
    i.wr(S - 8, ~0ull, 8);
    ASSERT_EQ(i.run({0x0f, 0xa8}), 0);
    EXPECT_EQ(i.rd(S - 8, 8), 0xffffffffffff0000ull);
}

TEST(Stack, PushfPopf)
{
    run_cases({
        {"pushfq clears RF and VM in the image", M64, {0x9c}, {}, {{ES_RSP, S - 8}},
         0x202 | ES_RF | ES_CF, 0, 0, {}, {{S - 8, 0x203, 8}}},
        {"pushf (16-bit)", M64, {0x66, 0x9c}, {}, {{ES_RSP, S - 2}}, 0x8d7, 0, 0, {},
         {{S - 2, 0x8d7, 2}}},
        // host: popfq of 0x3f7ed7 at CPL 3 reads back 0x244ed7
        {"popfq all bits at CPL 3: IOPL, VIF, VIP, VM, RF stay", M64, {0x9d}, {}, {{ES_RSP, S + 8}},
         0x202, ~0ull, 0x244ed7, {{S, 0x3f7ed7, 8}}},
        {"popfq 0 at CPL 3: IF stays set, bit 1 reads 1", M64, {0x9d}, {}, {}, 0x2d7, ~0ull, 0x202,
         {{S, 0, 8}}},
        {"popfw 0xfed7", M64, {0x66, 0x9d}, {}, {{ES_RSP, S + 2}}, 0x202, ~0ull, 0x4ed7,
         {{S, 0xfed7, 2}}},
        {"popfd (32-bit mode)", M32, {0x9d}, {}, {{ES_RSP, S + 4}}, 0x202, ~0ull, 0x240ad7,
         {{S, 0x240ad5, 4}}},
        {"popfq with IOPL 3: IF may change", M64, {0x9d}, {}, {}, 0x3202, ~0ull, 0x3002,
         {{S, 0, 8}}},
    });
}

TEST(Stack, EnterLeave)
{
    // host: enter 8, 2 with rsp = S, rbp = B: [S-8] = B, [S-16] = [B-8],
    // [S-24] = S-8, rbp = S-8, rsp = S-0x20
    const uint64_t B = D + 0x100;
    run_cases({
        {"enter 0x10, 0", M64, {0xc8, 0x10, 0x00, 0x00}, {{ES_RBP, B}},
         {{ES_RBP, S - 8}, {ES_RSP, S - 0x18}}, 0x202, 0, 0, {}, {{S - 8, B, 8}}},
        {"enter 8, 2", M64, {0xc8, 0x08, 0x00, 0x02}, {{ES_RBP, B}},
         {{ES_RBP, S - 8}, {ES_RSP, S - 0x20}}, 0x202, 0, 0, {{B - 8, 0x1111, 8}},
         {{S - 8, B, 8}, {S - 16, 0x1111, 8}, {S - 24, S - 8, 8}}},
        {"enter 0, 1", M64, {0xc8, 0x00, 0x00, 0x01}, {{ES_RBP, B}},
         {{ES_RBP, S - 8}, {ES_RSP, S - 16}}, 0x202, 0, 0, {}, {{S - 16, S - 8, 8}}},
        {"enter 4, 0 (32-bit mode)", M32, {0xc8, 0x04, 0x00, 0x00}, {{ES_RBP, B}},
         {{ES_RBP, S - 4}, {ES_RSP, S - 8}}, 0x202, 0, 0, {}, {{S - 4, B, 4}}},
        {"enter 8, 3 with a bad enclosing frame: #PF, registers unchanged", M64,
         {0xc8, 0x08, 0x00, 0x03}, {{ES_RBP, 0x10010}}, {{ES_RBP, 0x10010}, {ES_RSP, S}}, 0x202,
         0, 0, {}, {}, ES_VEC_PF, ES_PFEC_U},
        {"leave", M64, {0xc9}, {{ES_RBP, S + 0x20}}, {{ES_RBP, 0x4242}, {ES_RSP, S + 0x28}},
         0x202, 0, 0, {{S + 0x20, 0x4242, 8}}},
        {"enter 0x20, 0; leave", M64, {0xc8, 0x20, 0, 0, 0xc9}, {{ES_RBP, B}},
         {{ES_RBP, B}, {ES_RSP, S}}},
        {"leave (32-bit mode)", M32, {0xc9}, {{ES_RBP, S + 0x20}},
         {{ES_RBP, 0x4242}, {ES_RSP, S + 0x24}}, 0x202, 0, 0, {{S + 0x20, 0x4242, 4}}},
    });
}
