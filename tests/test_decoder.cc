// Decoder tests: bytes -> compact form, formatting in both syntaxes.
#include <gtest/gtest.h>

#include <cstring>

#include "decoder.h"

TEST(Decoder, AddRegImm)
{
    // 48 83 c0 05    add rax, 5
    const uint8_t b[] = {0x48, 0x83, 0xc0, 0x05};
    es_insn d;
    ASSERT_EQ(es_decode(b, sizeof b, ES_MODE_64, 0x1000, &d), ES_DECODE_OK);
    EXPECT_EQ(d.op, ES_OP_ADD);
    EXPECT_EQ(d.len, 4);
    EXPECT_EQ(d.nops, 2);
    EXPECT_EQ(d.o[0].kind, ES_OPK_GPR);
    EXPECT_EQ(d.o[0].reg, 0);
    EXPECT_EQ(d.o[0].size, 8);
    EXPECT_EQ(d.o[1].kind, ES_OPK_IMM);
    EXPECT_EQ(d.o[1].imm, 5);
}

TEST(Decoder, HighByteAndRexByte)
{
    // 88 e0    mov al, ah      40 88 e0   mov al, spl
    const uint8_t a[] = {0x88, 0xe0};
    const uint8_t b[] = {0x40, 0x88, 0xe0};
    es_insn d;
    ASSERT_EQ(es_decode(a, sizeof a, ES_MODE_64, 0, &d), ES_DECODE_OK);
    EXPECT_EQ(d.o[1].kind, ES_OPK_HI8);
    EXPECT_EQ(d.o[1].reg, 0);
    ASSERT_EQ(es_decode(b, sizeof b, ES_MODE_64, 0, &d), ES_DECODE_OK);
    EXPECT_EQ(d.o[1].kind, ES_OPK_GPR);
    EXPECT_EQ(d.o[1].reg, 4);
    EXPECT_EQ(d.o[1].size, 1);
}

TEST(Decoder, RipRelativeFoldedToAbsolute)
{
    // 48 8b 05 10 00 00 00    mov rax, [rip+0x10]
    const uint8_t b[] = {0x48, 0x8b, 0x05, 0x10, 0, 0, 0};
    es_insn d;
    ASSERT_EQ(es_decode(b, sizeof b, ES_MODE_64, 0x401000, &d), ES_DECODE_OK);
    EXPECT_EQ(d.o[1].kind, ES_OPK_MEM);
    EXPECT_EQ(d.o[1].base, ES_REG_NONE);
    EXPECT_EQ(d.o[1].disp, 0x401000 + 7 + 0x10);
}

TEST(Decoder, RelativeBranchResolved)
{
    // e8 fb ff ff ff    call $ (to itself); 32-bit mode wraps
    const uint8_t b[] = {0xe8, 0xfb, 0xff, 0xff, 0xff};
    es_insn d;
    ASSERT_EQ(es_decode(b, sizeof b, ES_MODE_32, 0x8048000, &d), ES_DECODE_OK);
    EXPECT_EQ(d.op, ES_OP_CALL);
    EXPECT_EQ(d.o[0].kind, ES_OPK_REL);
    EXPECT_EQ(d.o[0].imm, 0x8048000);
}

TEST(Decoder, TruncatedAndInvalid)
{
    const uint8_t trunc[] = {0x48, 0x8b};
    const uint8_t bad[] = {0x0f, 0x0b}; // ud2 is valid
    // sixteen bytes: fifteen prefixes then nop, longer than the 15-byte limit
    const uint8_t inval[] = {0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66,
                             0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x90};
    es_insn d;
    EXPECT_EQ(es_decode(trunc, sizeof trunc, ES_MODE_64, 0, &d), ES_DECODE_NEED_MORE);
    EXPECT_EQ(es_decode(bad, sizeof bad, ES_MODE_64, 0, &d), ES_DECODE_OK);
    EXPECT_EQ(d.op, ES_OP_UD2);
    EXPECT_NE(es_decode(inval, sizeof inval, ES_MODE_64, 0, &d), ES_DECODE_OK);
}

TEST(Decoder, FormatIntelAndAtt)
{
    const uint8_t b[] = {0x48, 0x01, 0xd8}; // add rax, rbx
    char buf[64];
    EXPECT_EQ(es_format(b, sizeof b, ES_MODE_64, 0, ES_SYNTAX_INTEL, buf, sizeof buf), 3u);
    EXPECT_STREQ(buf, "add rax, rbx");
    EXPECT_EQ(es_format(b, sizeof b, ES_MODE_64, 0, ES_SYNTAX_ATT, buf, sizeof buf), 3u);
    EXPECT_STREQ(buf, "add %rbx, %rax");
}

TEST(Decoder, AccessInfoReportsConditionalWrites)
{
    es_access_info a;
    const uint8_t cmov[] = {0x48, 0x0f, 0x45, 0xc2}; // cmovne rax, rdx
    ASSERT_EQ(es_decode_access(cmov, sizeof cmov, ES_MODE_64, 0, &a), ES_DECODE_OK);
    EXPECT_EQ(a.gpr_condwrite, 1u << 0);      // rax may keep its old value
    EXPECT_TRUE(a.gpr_read & (1u << 2));      // rdx
    EXPECT_TRUE(a.gpr_write & (1u << 0));
    const uint8_t add[] = {0x48, 0x01, 0xd0}; // add rax, rdx
    ASSERT_EQ(es_decode_access(add, sizeof add, ES_MODE_64, 0, &a), ES_DECODE_OK);
    EXPECT_EQ(a.gpr_condwrite, 0u);
}
