// Decoder tests: bytes -> compact form, formatting in both syntaxes.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

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

// Issue 13: targets shown as symbol+off.  A two-symbol table: `func` at
// 0x401000 (0x100 bytes) and `table` at 0x602000 (0x800 bytes).
static const char *two_syms(void *ctx, uint64_t addr, uint64_t *off)
{
    ++*(int *)ctx;
    if (addr >= 0x401000 && addr < 0x401100) {
        *off = addr - 0x401000;
        return "func";
    }
    if (addr >= 0x602000 && addr < 0x602800) {
        *off = addr - 0x602000;
        return "table";
    }
    return nullptr;
}

static std::string fmt_sym(const std::vector<uint8_t> &b, uint64_t rip, int mode = ES_MODE_64,
                           int syntax = ES_SYNTAX_INTEL)
{
    char buf[200];
    int calls = 0;
    size_t n = es_format_sym(b.data(), b.size(), mode, rip, syntax, two_syms, &calls, buf,
                             sizeof buf);
    EXPECT_EQ(n, b.size());
    return buf;
}

TEST(Decoder, FormatNamesBranchTargets)
{
    // call rel32 from 0x400ffb to 0x401000; jmp rel8 into the middle of func
    EXPECT_EQ(fmt_sym({0xe8, 0x00, 0x00, 0x00, 0x00}, 0x400ffb), "call 0x0000000000401000 <func>");
    EXPECT_EQ(fmt_sym({0xeb, 0x0e}, 0x401000), "jmp 0x0000000000401010 <func+0x10>");
    // a target without a name stays a bare address, as es_format prints it
    char plain[200];
    const uint8_t far[] = {0xe8, 0x00, 0x10, 0x00, 0x00};
    es_format(far, sizeof far, ES_MODE_64, 0x500000, ES_SYNTAX_INTEL, plain, sizeof plain);
    EXPECT_EQ(fmt_sym({0xe8, 0x00, 0x10, 0x00, 0x00}, 0x500000), plain);
}

TEST(Decoder, FormatNamesMemoryOperands)
{
    // mov rax, [rip + 0x201ff9] at 0x400000: 0x602000 = table
    EXPECT_EQ(fmt_sym({0x48, 0x8b, 0x05, 0xf9, 0x1f, 0x20, 0x00}, 0x400000),
              "mov rax, [0x0000000000602000 <table>]");
    // call [table + rax*8]: a base-less displacement is the table's address
    std::string s = fmt_sym({0xff, 0x14, 0xc5, 0x08, 0x20, 0x60, 0x00}, 0x401000);
    EXPECT_NE(s.find("<table+0x8>"), std::string::npos) << s;
    // AT&T and 32-bit code too: mov eax, [0x602010]
    s = fmt_sym({0xa1, 0x10, 0x20, 0x60, 0x00}, 0x8048000, ES_MODE_32, ES_SYNTAX_ATT);
    EXPECT_NE(s.find("<table+0x10>"), std::string::npos) << s;
    // a displacement off a base register is not an address: left alone
    s = fmt_sym({0x48, 0x8b, 0x80, 0x00, 0x20, 0x60, 0x00}, 0x401000); // mov rax, [rax+0x602000]
    EXPECT_EQ(s.find('<'), std::string::npos) << s;
}
