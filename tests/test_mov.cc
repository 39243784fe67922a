// MOV family: mov (all forms), movzx/movsx/movsxd, xchg, cmovcc, setcc,
// lea, cbw..cqo, lahf/sahf, flag instructions, cli/sti, xlat, and segment
// register loads.  Expected values were checked on the host (Zen 4) where
// the instruction is usable from user mode.
#include "ctl_util.h"

extern "C" {
#include "seg.h"
}

using namespace ctl;

static const uint64_t D = EST_DATA;
static const int M64 = ES_MODE_64, M32 = ES_MODE_32;

TEST(Mov, GprImmMemory)
{
    run_cases({
        {"mov rax, 0x8000000000000001", M64, {0x48, 0xb8, 1, 0, 0, 0, 0, 0, 0, 0x80},
         {}, {{ES_RAX, 0x8000000000000001ull}}},
        {"mov eax, 0xffffffff (zero-extends)", M64, {0xb8, 0xff, 0xff, 0xff, 0xff},
         {{ES_RAX, 0x1234567800000000ull}}, {{ES_RAX, 0xffffffffull}}},
        {"mov ax, 0x1234 (merges)", M64, {0x66, 0xb8, 0x34, 0x12},
         {{ES_RAX, ~0ull}}, {{ES_RAX, 0xffffffffffff1234ull}}},
        {"mov al, ah", M64, {0x88, 0xe0}, {{ES_RAX, 0xab34}}, {{ES_RAX, 0xabab}}},
        {"mov sil, al (REX byte register)", M64, {0x40, 0x88, 0xc6},
         {{ES_RAX, 0x7f}, {ES_RSI, 0x1100}}, {{ES_RSI, 0x117f}}},
        {"mov rax, [moffs64 0x600008]", M64, {0x48, 0xa1, 0x08, 0, 0x60, 0, 0, 0, 0, 0},
         {}, {{ES_RAX, 0x1122334455667788ull}}, 0x202, 0, 0, {{D + 8, 0x1122334455667788ull, 8}}},
        {"mov [moffs64 0x600010], al", M64, {0xa2, 0x10, 0, 0x60, 0, 0, 0, 0, 0},
         {{ES_RAX, 0x5a}}, {}, 0x202, 0, 0, {}, {{D + 16, 0x5a, 8}}},
        {"mov [rbx], ecx", M64, {0x89, 0x0b}, {{ES_RBX, D}, {ES_RCX, 0xdeadbeefcafef00dull}},
         {}, 0x202, 0, 0, {{D, ~0ull, 8}}, {{D, 0xffffffffcafef00dull, 8}}},
        {"mov qword [rbx], -1 (imm32 sign-extended)", M64, {0x48, 0xc7, 0x03, 0xff, 0xff, 0xff, 0xff},
         {{ES_RBX, D}}, {}, 0x202, 0, 0, {}, {{D, ~0ull, 8}}},
        {"mov eax, [moffs32 0x600000] (32-bit mode)", M32, {0xa1, 0, 0, 0x60, 0},
         {}, {{ES_RAX, 0x55667788}}, 0x202, 0, 0, {{D, 0x1122334455667788ull, 8}}},
        {"mov rax, [rbx] faults on an unmapped page, rax unchanged", M64, {0x48, 0x8b, 0x03},
         {{ES_RAX, 7}, {ES_RBX, 0x10000}}, {{ES_RAX, 7}}, 0x202, 0, 0, {}, {}, ES_VEC_PF, ES_PFEC_U,
         EST_CODE},
    });
}

TEST(Mov, ExtendingMoves)
{
    run_cases({
        {"movzx eax, byte [rbx]", M64, {0x0f, 0xb6, 0x03}, {{ES_RBX, D}, {ES_RAX, ~0ull}},
         {{ES_RAX, 0xf0}}, 0x202, 0, 0, {{D, 0xf0, 1}}},
        {"movzx ax, cl (16-bit destination merges)", M64, {0x66, 0x0f, 0xb6, 0xc1},
         {{ES_RCX, 0x80}, {ES_RAX, ~0ull}}, {{ES_RAX, 0xffffffffffff0080ull}}},
        {"movsx rax, word [rbx]", M64, {0x48, 0x0f, 0xbf, 0x03}, {{ES_RBX, D}},
         {{ES_RAX, 0xffffffffffff8001ull}}, 0x202, 0, 0, {{D, 0x8001, 2}}},
        {"movsx eax, cl (zero-extends to 64)", M64, {0x0f, 0xbe, 0xc1},
         {{ES_RCX, 0x80}, {ES_RAX, ~0ull}}, {{ES_RAX, 0xffffff80ull}}},
        {"movsxd rax, ecx", M64, {0x48, 0x63, 0xc1}, {{ES_RCX, 0x80000000}},
         {{ES_RAX, 0xffffffff80000000ull}}},
        {"movsxd eax, ecx (no REX.W: plain 32-bit move)", M64, {0x63, 0xc1},
         {{ES_RCX, 0xffffffff80000000ull}, {ES_RAX, ~0ull}}, {{ES_RAX, 0x80000000ull}}},
    });
}

TEST(Mov, Xchg)
{
    run_cases({
        {"xchg eax, eax (87 c0 zero-extends)", M64, {0x87, 0xc0},
         {{ES_RAX, 0x123456789abcdef0ull}}, {{ES_RAX, 0x9abcdef0ull}}},
        {"nop (90: xchg eax, eax does not zero-extend)", M64, {0x90},
         {{ES_RAX, 0x123456789abcdef0ull}}, {{ES_RAX, 0x123456789abcdef0ull}}},
        {"xchg rcx, rdx (48 87 d1)", M64, {0x48, 0x87, 0xd1}, {{ES_RCX, 1}, {ES_RDX, 2}},
         {{ES_RCX, 2}, {ES_RDX, 1}}},
        {"xchg ecx, edx", M64, {0x87, 0xd1}, {{ES_RCX, ~0ull}, {ES_RDX, 0x100000002ull}},
         {{ES_RCX, 2}, {ES_RDX, 0xffffffffull}}},
        {"xchg ah, al", M64, {0x86, 0xc4}, {{ES_RAX, 0x1234}}, {{ES_RAX, 0x3412}}},
        {"xchg [rbx], rcx", M64, {0x48, 0x87, 0x0b}, {{ES_RBX, D}, {ES_RCX, 5}},
         {{ES_RCX, 9}}, 0x202, 0, 0, {{D, 9, 8}}, {{D, 5, 8}}},
        {"xchg [rbx], ecx on a read-only page: #PF, ecx unchanged", M64, {0x87, 0x0b},
         {{ES_RBX, EST_CODE}, {ES_RCX, 5}}, {{ES_RCX, 5}}, 0x202, 0, 0, {}, {}, ES_VEC_PF,
         ES_PFEC_P | ES_PFEC_W | ES_PFEC_U},
    });
}

TEST(Mov, CmovSetcc)
{
    run_cases({
        {"cmovz eax, ecx, ZF=0: upper half of rax still cleared", M64, {0x0f, 0x44, 0xc1},
         {{ES_RAX, 0x1111111122222222ull}, {ES_RCX, 3}}, {{ES_RAX, 0x22222222ull}}, 0x202},
        {"cmovz rax, rcx, ZF=1", M64, {0x48, 0x0f, 0x44, 0xc1}, {{ES_RAX, 1}, {ES_RCX, 3}},
         {{ES_RAX, 3}}, 0x242},
        {"cmovnz rax, rcx, ZF=1", M64, {0x48, 0x0f, 0x45, 0xc1}, {{ES_RAX, 1}, {ES_RCX, 3}},
         {{ES_RAX, 1}}, 0x242},
        {"cmovl ax, cx, SF!=OF", M64, {0x66, 0x0f, 0x4c, 0xc1}, {{ES_RAX, ~0ull}, {ES_RCX, 3}},
         {{ES_RAX, 0xffffffffffff0003ull}}, 0x282},
        {"cmovbe eax, [rbx], false: the load still faults", M64, {0x0f, 0x46, 0x03},
         {{ES_RBX, 0x10000}, {ES_RAX, 1}}, {{ES_RAX, 1}}, 0x202, 0, 0, {}, {}, ES_VEC_PF, ES_PFEC_U},
        {"setl al, SF!=OF", M64, {0x0f, 0x9c, 0xc0}, {{ES_RAX, 0xff00}}, {{ES_RAX, 0xff01}}, 0x282},
        {"setnle al, ZF=1", M64, {0x0f, 0x9f, 0xc0}, {{ES_RAX, 0xffff}}, {{ES_RAX, 0xff00}}, 0x242},
        {"setp byte [rbx]", M64, {0x0f, 0x9a, 0x03}, {{ES_RBX, D}}, {}, 0x206, 0, 0,
         {{D, 0xffff, 2}}, {{D, 0xff01, 2}}},
        {"seta ah (CF=0 ZF=0)", M64, {0x0f, 0x97, 0xc4}, {{ES_RAX, 0}}, {{ES_RAX, 0x100}}, 0x202},
    });
}

TEST(Mov, Lea)
{
    run_cases({
        {"lea rax, [rax+rbx*2+0x10]", M64, {0x48, 0x8d, 0x44, 0x58, 0x10},
         {{ES_RAX, 0x100000000ull}, {ES_RBX, 0x8}}, {{ES_RAX, 0x100000020ull}}},
        {"lea eax, [rax+rbx*2+0x10] (64-bit address truncated)", M64, {0x8d, 0x44, 0x58, 0x10},
         {{ES_RAX, 0x1fffffff0ull}, {ES_RBX, 0x8}}, {{ES_RAX, 0x10ull}}},
        {"lea ax, [rax+rbx*2+0x10]", M64, {0x66, 0x8d, 0x44, 0x58, 0x10},
         {{ES_RAX, 0xaaaaaaaaaaaafff0ull}, {ES_RBX, 0x8}}, {{ES_RAX, 0xaaaaaaaaaaaa0010ull}}},
        {"lea rax, [eax+ebx*2+0x10] (32-bit address, zero-extended)", M64,
         {0x67, 0x48, 0x8d, 0x44, 0x58, 0x10}, {{ES_RAX, 0xfffffffffffffff0ull}, {ES_RBX, 0x8}},
         {{ES_RAX, 0x10ull}}},
        {"lea rax, [rip+0x10]", M64, {0x48, 0x8d, 0x05, 0x10, 0, 0, 0}, {},
         {{ES_RAX, EST_CODE + 7 + 0x10}}},
        {"lea eax, [ebx+ecx*8-4] (32-bit mode)", M32, {0x8d, 0x44, 0xcb, 0xfc},
         {{ES_RBX, 0x1000}, {ES_RCX, 2}}, {{ES_RAX, 0x100c}}},
    });
}

TEST(Mov, SignExtendAccumulator)
{
    run_cases({
        {"cbw", M64, {0x66, 0x98}, {{ES_RAX, 0x12345680}}, {{ES_RAX, 0x1234ff80}}},
        {"cwde", M64, {0x98}, {{ES_RAX, 0xffffffff00008000ull}}, {{ES_RAX, 0xffff8000ull}}},
        {"cdqe", M64, {0x48, 0x98}, {{ES_RAX, 0x80000000}}, {{ES_RAX, 0xffffffff80000000ull}}},
        {"cwd", M64, {0x66, 0x99}, {{ES_RAX, 0x8000}, {ES_RDX, 0x12340000}},
         {{ES_RDX, 0x1234ffff}}},
        {"cdq (zero-extends rdx)", M64, {0x99}, {{ES_RAX, 0x7fffffff}, {ES_RDX, ~0ull}},
         {{ES_RDX, 0}}},
        {"cqo", M64, {0x48, 0x99}, {{ES_RAX, 1ull << 63}}, {{ES_RDX, ~0ull}}},
        {"cwde (32-bit mode)", M32, {0x98}, {{ES_RAX, 0x7fff}}, {{ES_RAX, 0x7fff}}},
    });
}

TEST(Mov, FlagInstructions)
{
    const uint64_t A = ES_ARITH_FLAGS | ES_DF;
    run_cases({
        {"lahf", M64, {0x9f}, {{ES_RAX, 0}}, {{ES_RAX, 0xd700}}, 0x2d7 | ES_OF},
        {"sahf", M64, {0x9e}, {{ES_RAX, 0xff00}}, {}, 0x202 | ES_OF, A,
         ES_SF | ES_ZF | ES_AF | ES_PF | ES_CF | ES_OF},
        {"sahf clears", M64, {0x9e}, {{ES_RAX, 0x0000}}, {}, 0x2d7, A, 0},
        {"clc", M64, {0xf8}, {}, {}, 0x203, A, 0},
        {"stc", M64, {0xf9}, {}, {}, 0x202, A, ES_CF},
        {"cmc; cmc; cmc", M64, {0xf5, 0xf5, 0xf5}, {}, {}, 0x202, A, ES_CF},
        {"std", M64, {0xfd}, {}, {}, 0x202, A, ES_DF},
        {"cld", M64, {0xfc}, {}, {}, 0x602, A, 0},
        {"cli at CPL 3, IOPL 0", M64, {0xfa}, {}, {}, 0x202, ES_IF, ES_IF, {}, {}, ES_VEC_GP, 0,
         EST_CODE},
        {"sti at CPL 3, IOPL 0", M32, {0xfb}, {}, {}, 0x002, ES_IF, 0, {}, {}, ES_VEC_GP, 0},
        {"cli at CPL 3, IOPL 3", M64, {0xfa}, {}, {}, 0x3202, ES_IF, 0},
    });
}

TEST(Mov, Xlat)
{
    run_cases({
        {"xlat", M64, {0xd7}, {{ES_RBX, D}, {ES_RAX, 0x1105}}, {{ES_RAX, 0x1177}}, 0x202, 0, 0,
         {{D + 5, 0x77, 1}}},
        {"xlat with al = 0xff (unsigned index)", M32, {0xd7}, {{ES_RBX, D}, {ES_RAX, 0xff}},
         {{ES_RAX, 0x66}}, 0x202, 0, 0, {{D + 0xff, 0x66, 1}}},
    });
}

TEST(Mov, SegmentRegisterMoves)
{
    run_cases({
        {"mov ds, ax (0x2b)", M64, {0x8e, 0xd8}, {{ES_RAX, 0x2b}}, {}},
        {"mov ds, ax (USER32_CS 0x23: readable code)", M64, {0x8e, 0xd8}, {{ES_RAX, 0x23}}, {}},
        {"mov ds, ax (null)", M64, {0x8e, 0xd8}, {{ES_RAX, 0}}, {}},
        {"mov ds, ax (KERNEL_DS 0x18: DPL 0)", M64, {0x8e, 0xd8}, {{ES_RAX, 0x18}}, {}, 0x202, 0,
         0, {}, {}, ES_VEC_GP, 0x18},
        {"mov es, ax (KERNEL_CS 0x13: RPL 3 but DPL 0)", M64, {0x8e, 0xc0}, {{ES_RAX, 0x13}},
         {}, 0x202, 0, 0, {}, {}, ES_VEC_GP, 0x10},
        {"mov ds, ax (past the table)", M64, {0x8e, 0xd8}, {{ES_RAX, 0x83}}, {}, 0x202, 0, 0,
         {}, {}, ES_VEC_GP, 0x80},
        {"mov ds, ax (LDT selector)", M64, {0x8e, 0xd8}, {{ES_RAX, 0x2f}}, {}, 0x202, 0, 0, {},
         {}, ES_VEC_GP, 0x2c},
        {"mov ss, ax (null)", M64, {0x8e, 0xd0}, {{ES_RAX, 0}}, {}, 0x202, 0, 0, {}, {}, ES_VEC_GP, 0},
        {"mov ss, ax (RPL 0 != CPL)", M32, {0x8e, 0xd0}, {{ES_RAX, 0x28}}, {}, 0x202, 0, 0, {},
         {}, ES_VEC_GP, 0x28},
        {"mov ss, ax (code segment)", M32, {0x8e, 0xd0}, {{ES_RAX, 0x23}}, {}, 0x202, 0, 0, {},
         {}, ES_VEC_GP, 0x20},
        {"mov ss, ax (0x2b)", M32, {0x8e, 0xd0}, {{ES_RAX, 0x2b}}, {}},
        {"mov eax, ds (zero-extends, as on Zen 4)", M64, {0x8c, 0xd8}, {{ES_RAX, ~0ull}},
         {{ES_RAX, 0x2b}}},
        {"mov ax, ds (merges)", M64, {0x66, 0x8c, 0xd8}, {{ES_RAX, ~0ull}},
         {{ES_RAX, 0xffffffffffff002bull}}},
        {"mov [rbx], ds (16-bit store)", M64, {0x8c, 0x1b}, {{ES_RBX, D}}, {}, 0x202, 0, 0,
         {{D, ~0ull, 8}}, {{D, 0xffffffffffff002bull, 8}}},
        {"mov rax, cr0 at CPL 3", M64, {0x0f, 0x20, 0xc0}, {}, {}, 0x202, 0, 0, {}, {}, ES_VEC_GP, 0},
        {"mov cr3, rax at CPL 3", M64, {0x0f, 0x22, 0xd8}, {}, {}, 0x202, 0, 0, {}, {}, ES_VEC_GP, 0},
        {"mov rax, dr7 at CPL 3", M64, {0x0f, 0x21, 0xf8}, {}, {}, 0x202, 0, 0, {}, {}, ES_VEC_GP, 0},
    });
}

// A TLS descriptor (as set_thread_area installs at GDT entry 12) gives FS
// its base in 64-bit mode and a data segment its base in 32-bit mode.
TEST(Mov, SegmentBaseFromDescriptor)
{
    const uint64_t tls = 0x00cff3000000ffffull | (0x600100ull & 0xffffff) << 16;
    {
        M m(M64);
        m->gdt[12] = tls;
        m->gpr[ES_RAX] = 0x63;
        m->gpr[ES_RBX] = 0;
        m.wr(D + 0x108, 0xabcdef, 8);
        // mov fs, ax ; mov rcx, fs:[rbx+8]
        ASSERT_EQ(m.run({0x8e, 0xe0, 0x64, 0x48, 0x8b, 0x4b, 0x08}), 0) << m->message;
        EXPECT_EQ(m->seg[ES_SEG_FS].sel, 0x63);
        EXPECT_EQ(m->seg[ES_SEG_FS].base, 0x600100ull);
        EXPECT_EQ(m->gpr[ES_RCX], 0xabcdefull);
        EXPECT_TRUE(m->gdt[12] & (1ull << 40)); // accessed bit set
        // mov fs, ax with a null selector clears the base (Zen 3+ and Intel)
        m->gpr[ES_RAX] = 0;
        ASSERT_EQ(m.run({0x8e, 0xe0}), 0);
        EXPECT_EQ(m->seg[ES_SEG_FS].base, 0u);
    }
    {
        M m(M64);
        m->gdt[12] = tls;
        m->gpr[ES_RAX] = 0x63;
        // mov ds, ax in 64-bit mode: the base is ignored (kept 0)
        ASSERT_EQ(m.run({0x8e, 0xd8}), 0);
        EXPECT_EQ(m->seg[ES_SEG_DS].base, 0u);
    }
    {
        M m(M32);
        m->gdt[12] = tls;
        m->gpr[ES_RAX] = 0x63;
        m->gpr[ES_RBX] = 0x10;
        m.wr(D + 0x110, 0x44332211, 4);
        // mov es, ax ; mov ecx, es:[ebx]
        ASSERT_EQ(m.run({0x8e, 0xc0, 0x26, 0x8b, 0x0b}), 0) << m->message;
        EXPECT_EQ(m->seg[ES_SEG_ES].base, 0x600100ull);
        EXPECT_EQ(m->gpr[ES_RCX], 0x44332211ull);
    }
}

TEST(Mov, NotPresentDescriptor)
{
    M m(M64);
    m->gdt[13] = 0x00cf73000000ffffull; // USER_DS-like, P = 0
    m->gpr[ES_RAX] = 0x6b;
    ASSERT_EQ(m.run({0x8e, 0xd8}), ES_STOP_FAULT);
    EXPECT_EQ(m->fault.vector, ES_VEC_NP);
    EXPECT_EQ(m->fault.error, 0x68u);
    EXPECT_EQ(m->seg[ES_SEG_DS].sel, 0x2b); // unchanged
}

TEST(Mov, LoadFarPointer)
{
    run_cases({
        {"lfs eax, [rbx] (m16:32)", M64, {0x0f, 0xb4, 0x03}, {{ES_RBX, D}, {ES_RAX, ~0ull}},
         {{ES_RAX, 0x12345678}}, 0x202, 0, 0, {{D, 0x0000002b12345678ull, 8}}},
        {"lss rax, [rbx] (m16:64)", M64, {0x48, 0x0f, 0xb2, 0x03}, {{ES_RBX, D}},
         {{ES_RAX, 0x1122334455667788ull}}, 0x202, 0, 0,
         {{D, 0x1122334455667788ull, 8}, {D + 8, 0x2b, 2}}},
        {"les eax, [ebx] (32-bit mode)", M32, {0xc4, 0x03}, {{ES_RBX, D}}, {{ES_RAX, 0x1000}},
         0x202, 0, 0, {{D, 0x0000002b00001000ull, 8}}},
        {"lds eax, [ebx] with a kernel selector: #GP, eax unchanged", M32, {0xc5, 0x03},
         {{ES_RBX, D}, {ES_RAX, 7}}, {{ES_RAX, 7}}, 0x202, 0, 0,
         {{D, 0x0000001800001000ull, 8}}, {}, ES_VEC_GP, 0x18},
    });
}

// After LGDT the descriptors come from the guest's own table.
TEST(Mov, SegmentLoadFromGuestGdt)
{
    M m(M64);
    es_set_mode(m.m, 0, ES_MODE_64);
    const uint64_t gdt = D + 0x800;
    m.wr(gdt + 8, 0x00cff3000000ffffull | (0x123000ull << 16), 8); // DPL 3 data, base 0x123000
    m.wr(D, 15, 2);                                                // limit: two entries
    m.wr(D + 2, gdt, 8);                                           // base
    m->gpr[ES_RBX] = D;
    m->gpr[ES_RAX] = 0x0b;
    // lgdt [rbx]; mov fs, ax
    ASSERT_EQ(m.run({0x0f, 0x01, 0x13, 0x8e, 0xe0}), 0) << m->message;
    EXPECT_EQ(m->gdtr.base, gdt);
    EXPECT_EQ(m->gdtr.limit, 15);
    EXPECT_EQ(m->seg[ES_SEG_FS].base, 0x123000u);
    EXPECT_TRUE(m.rd(gdt + 8, 8) & (1ull << 40)); // accessed bit written back
    // selector 0x10 is past the limit now
    m->gpr[ES_RAX] = 0x13;
    ASSERT_EQ(m.run({0x8e, 0xe0}), ES_STOP_FAULT);
    EXPECT_EQ(m->fault.vector, ES_VEC_GP);
    EXPECT_EQ(m->fault.error, 0x10u);
}
