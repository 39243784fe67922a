// ALU family: ADD ADC SUB SBB AND OR XOR CMP TEST INC DEC NEG NOT, all
// widths, high-byte registers, memory and LOCK forms, both modes.
// Expected values were checked by running the same bytes natively on the
// AMD Zen host (32-bit cases through their 64-bit equivalents, `native`).
#include "est_case.h"

#define M64 ES_MODE_64
#define M32 ES_MODE_32
#define D 0x600100ull // EST_DATA + 0x100: where memory operands point

static const EstCase kAlu[] = {
    // 48 01 d8    add rax, rbx
    {"add rax, rbx", "48 01 d8", M64, {{ES_RAX, 0x7fffffffffffffff}, {ES_RBX, 1}}, 0, {},
     {{ES_RAX, 0x8000000000000000}}, F_O | F_S | F_A | F_P, {}},
    // 01 d8    add eax, ebx  (the 32-bit result zero-extends into rax)
    {"add eax, ebx", "01 d8", M64, {{ES_RAX, 0xffffffffffffffff}, {ES_RBX, 1}}, 0, {},
     {{ES_RAX, 0}}, F_C | F_Z | F_A | F_P, {}},
    // 66 01 d8    add ax, bx  (the upper 48 bits stay)
    {"add ax, bx", "66 01 d8", M64, {{ES_RAX, 0x123456789abcfff0}, {ES_RBX, 0x10}}, 0, {},
     {{ES_RAX, 0x123456789abc0000}}, F_C | F_Z | F_P, {}},
    // 00 d8    add al, bl
    {"add al, bl", "00 d8", M64, {{ES_RAX, 0xaaaaaaaaaaaaaa7f}, {ES_RBX, 1}}, 0, {},
     {{ES_RAX, 0xaaaaaaaaaaaaaa80}}, F_O | F_S | F_A, {}},
    // 00 fc    add ah, bh
    {"add ah, bh", "00 fc", M64, {{ES_RAX, 0x11ff}, {ES_RBX, 0x22ee}}, 0, {},
     {{ES_RAX, 0x33ff}}, F_P, {}},
    // 40 00 fe    add sil, dil
    {"add sil, dil", "40 00 fe", M64, {{ES_RSI, 0x1f0}, {ES_RDI, 0x10}}, 0, {},
     {{ES_RSI, 0x100}}, F_C | F_Z | F_P, {}},
    // 45 01 c8    add r8d, r9d
    {"add r8d, r9d", "45 01 c8", M64, {{ES_R8, 0x1234567880000000}, {ES_R9, 0x80000000}}, 0, {},
     {{ES_R8, 0}}, F_C | F_O | F_Z | F_P, {}},
    // 80 03 80    add byte [rbx], 0x80
    {"add byte [rbx], 0x80", "80 03 80", M64, {{ES_RBX, D}}, 0, {{0x100, 8, 0x1111111111111180}},
     {}, F_C | F_O | F_Z | F_P, {{0x100, 8, 0x1111111111111100}}},
    // 48 03 03    add rax, [rbx]
    {"add rax, [rbx]", "48 03 03", M64, {{ES_RAX, 5}, {ES_RBX, D}}, 0, {{0x100, 8, 0xfffffffffffffffb}},
     {{ES_RAX, 0}}, F_C | F_Z | F_A | F_P, {}},
    // f0 48 01 03    lock add [rbx], rax
    {"lock add [rbx], rax", "f0 48 01 03", M64, {{ES_RAX, 0x0100000000000001}, {ES_RBX, D}}, 0,
     {{0x100, 8, 0x00ffffffffffffff}}, {}, F_A | F_P, {{0x100, 8, 0x0200000000000000}}},
    // 48 05 00 00 00 80    add rax, -0x80000000 (imm32 sign-extended)
    {"add rax, imm32", "48 05 00 00 00 80", M64, {{ES_RAX, 0x80000000}}, 0, {},
     {{ES_RAX, 0}}, F_C | F_Z | F_P, {}},
    // 48 11 d8    adc rax, rbx  (CF in)
    {"adc rax, rbx", "48 11 d8", M64, {{ES_RAX, 0xffffffffffffffff}, {ES_RBX, 0}}, F_C, {},
     {{ES_RAX, 0}}, F_C | F_Z | F_A | F_P, {}},
    // 14 ff    adc al, 0xff  (CF in)
    {"adc al, 0xff", "14 ff", M64, {{ES_RAX, 0x100}}, F_C, {}, {{ES_RAX, 0x100}},
     F_C | F_Z | F_A | F_P, {}},
    // 66 11 d8    adc ax, bx  (CF clear)
    {"adc ax, bx", "66 11 d8", M64, {{ES_RAX, 0x7fff}, {ES_RBX, 1}}, 0, {}, {{ES_RAX, 0x8000}},
     F_O | F_S | F_A | F_P, {}},
    // 48 29 d8    sub rax, rbx
    {"sub rax, rbx", "48 29 d8", M64, {{ES_RAX, 0}, {ES_RBX, 1}}, 0, {},
     {{ES_RAX, 0xffffffffffffffff}}, F_C | F_S | F_A | F_P, {}},
    // 2d 00 00 00 80    sub eax, 0x80000000
    {"sub eax, 0x80000000", "2d 00 00 00 80", M64, {{ES_RAX, 0xffffffff00000001}}, 0, {},
     {{ES_RAX, 0x80000001}}, F_C | F_O | F_S, {}},
    // 28 e0    sub al, ah
    {"sub al, ah", "28 e0", M64, {{ES_RAX, 0x0180}}, 0, {}, {{ES_RAX, 0x017f}}, F_O | F_A, {}},
    // 19 d8    sbb eax, ebx  (CF in)
    {"sbb eax, ebx", "19 d8", M64, {{ES_RAX, 5}, {ES_RBX, 5}}, F_C, {},
     {{ES_RAX, 0xffffffff}}, F_C | F_S | F_A | F_P, {}},
    // 48 19 d8    sbb rax, rbx  (CF clear)
    {"sbb rax, rbx", "48 19 d8", M64, {{ES_RAX, 0x8000000000000000}, {ES_RBX, 1}}, 0, {},
     {{ES_RAX, 0x7fffffffffffffff}}, F_O | F_A | F_P, {}},
    // f0 83 1b 01    lock sbb dword [rbx], 1  (CF in)
    {"lock sbb dword [rbx], 1", "f0 83 1b 01", M64, {{ES_RBX, D}}, F_C,
     {{0x100, 8, 0xaaaaaaaa00000002}}, {}, F_Z | F_P, {{0x100, 8, 0xaaaaaaaa00000000}}},
    // 48 39 d8    cmp rax, rbx  (equal)
    {"cmp rax, rbx", "48 39 d8", M64, {{ES_RAX, 0x1234}, {ES_RBX, 0x1234}}, F_C | F_S, {}, {},
     F_Z | F_P, {}},
    // 3c 80    cmp al, 0x80
    {"cmp al, 0x80", "3c 80", M64, {{ES_RAX, 0x7f}}, 0, {}, {}, F_C | F_O | F_S | F_P, {}},
    // 48 39 03    cmp [rbx], rax
    {"cmp [rbx], rax", "48 39 03", M64, {{ES_RAX, 2}, {ES_RBX, D}}, 0, {{0x100, 8, 1}}, {},
     F_C | F_S | F_A | F_P, {{0x100, 8, 1}}},
    // 66 83 f9 ff    cmp cx, -1
    {"cmp cx, -1", "66 83 f9 ff", M64, {{ES_RCX, 0xffff}}, 0, {}, {}, F_Z | F_P, {}},
    // 48 85 c0    test rax, rax  (clears CF, OF, AF)
    {"test rax, rax", "48 85 c0", M64, {{ES_RAX, 0}}, F_C | F_O | F_A, {}, {}, F_Z | F_P, {}},
    // f6 c4 80    test ah, 0x80
    {"test ah, 0x80", "f6 c4 80", M64, {{ES_RAX, 0x8000}}, F_Z, {}, {}, F_S, {}},
    // 85 03    test [rbx], eax
    {"test [rbx], eax", "85 03", M64, {{ES_RAX, 0x80000003}, {ES_RBX, D}}, 0,
     {{0x100, 4, 0xffff0001}}, {}, F_S, {}},
    // 48 25 00 ff ff ff    and rax, 0xffffffffffffff00
    {"and rax, imm32", "48 25 00 ff ff ff", M64, {{ES_RAX, 0x923456789abcdef0}}, F_C | F_O, {},
     {{ES_RAX, 0x923456789abcde00}}, F_S | F_P, {}},
    // 21 d8    and eax, ebx
    {"and eax, ebx", "21 d8", M64, {{ES_RAX, 0xffffffffffffffff}, {ES_RBX, 0xf0f0}}, 0, {},
     {{ES_RAX, 0xf0f0}}, F_P, {}},
    // 66 45 09 c8    or r8w, r9w
    {"or r8w, r9w", "66 45 09 c8", M64, {{ES_R8, 0x1111000000000001}, {ES_R9, 0x8000}}, 0, {},
     {{ES_R8, 0x1111000000008001}}, F_S, {}},
    // 0c 01    or al, 1
    {"or al, 1", "0c 01", M64, {{ES_RAX, 0x100}}, F_Z | F_C, {}, {{ES_RAX, 0x101}}, 0, {}},
    // 31 c0    xor eax, eax
    {"xor eax, eax", "31 c0", M64, {{ES_RAX, 0xdeadbeef12345678}}, F_C | F_S, {}, {{ES_RAX, 0}},
     F_Z | F_P, {}},
    // 30 fb    xor bl, bh
    {"xor bl, bh", "30 fb", M64, {{ES_RBX, 0x0ff0}}, 0, {}, {{ES_RBX, 0x0fff}}, F_S | F_P, {}},
    // f0 80 33 ff    lock xor byte [rbx], 0xff
    {"lock xor byte [rbx], 0xff", "f0 80 33 ff", M64, {{ES_RBX, D}}, 0, {{0x100, 2, 0x1234}}, {},
     F_S, {{0x100, 2, 0x12cb}}},
    // 48 ff c0    inc rax  (CF is preserved)
    {"inc rax", "48 ff c0", M64, {{ES_RAX, 0x7fffffffffffffff}}, F_C, {},
     {{ES_RAX, 0x8000000000000000}}, F_C | F_O | F_S | F_A | F_P, {}},
    // fe c4    inc ah
    {"inc ah", "fe c4", M64, {{ES_RAX, 0xff55}}, 0, {}, {{ES_RAX, 0x0055}}, F_Z | F_A | F_P, {}},
    // ff c9    dec ecx  (CF preserved, result zero-extended)
    {"dec ecx", "ff c9", M64, {{ES_RCX, 0xffffffff00000000}}, F_C, {}, {{ES_RCX, 0xffffffff}},
     F_C | F_S | F_A | F_P, {}},
    // 66 41 ff c8    dec r8w
    {"dec r8w", "66 41 ff c8", M64, {{ES_R8, 0x8000}}, 0, {}, {{ES_R8, 0x7fff}},
     F_O | F_A | F_P, {}},
    // f0 66 ff 0b    lock dec word [rbx]
    {"lock dec word [rbx]", "f0 66 ff 0b", M64, {{ES_RBX, D}}, 0, {{0x100, 4, 0x55550001}}, {},
     F_Z | F_P, {{0x100, 4, 0x55550000}}},
    // f0 fe 03    lock inc byte [rbx]
    {"lock inc byte [rbx]", "f0 fe 03", M64, {{ES_RBX, D}}, 0, {{0x100, 2, 0x017f}}, {},
     F_O | F_S | F_A, {{0x100, 2, 0x0180}}},
    // 48 f7 d8    neg rax
    {"neg rax", "48 f7 d8", M64, {{ES_RAX, 1}}, 0, {}, {{ES_RAX, 0xffffffffffffffff}},
     F_C | F_S | F_A | F_P, {}},
    // f7 d8    neg eax  (zero: CF = 0)
    {"neg eax (0)", "f7 d8", M64, {{ES_RAX, 0xffffffff00000000}}, F_C, {}, {{ES_RAX, 0}},
     F_Z | F_P, {}},
    // f6 dc    neg ah
    {"neg ah", "f6 dc", M64, {{ES_RAX, 0x8001}}, 0, {}, {{ES_RAX, 0x8001}}, F_C | F_O | F_S, {}},
    // f0 48 f7 1b    lock neg qword [rbx]
    {"lock neg qword [rbx]", "f0 48 f7 1b", M64, {{ES_RBX, D}}, 0, {{0x100, 8, 2}}, {},
     F_C | F_S | F_A, {{0x100, 8, 0xfffffffffffffffe}}},
    // 48 f7 d3    not rbx  (no flags change)
    {"not rbx", "48 f7 d3", M64, {{ES_RBX, 0x00ff00ff00ff00ff}}, F_C | F_Z | F_O, {},
     {{ES_RBX, 0xff00ff00ff00ff00}}, F_C | F_Z | F_O, {}},
    // f6 d7    not bh
    {"not bh", "f6 d7", M64, {{ES_RBX, 0x1234}}, F_S, {}, {{ES_RBX, 0xed34}}, F_S, {}},
    // f7 d1    not ecx  (zero-extends)
    {"not ecx", "f7 d1", M64, {{ES_RCX, 0xffffffff0000ffff}}, 0, {}, {{ES_RCX, 0xffff0000}}, 0, {}},
    // f0 f6 13    lock not byte [rbx]
    {"lock not byte [rbx]", "f0 f6 13", M64, {{ES_RBX, D}}, 0, {{0x100, 2, 0x1234}}, {}, 0,
     {{0x100, 2, 0x12cb}}},

    // ---- faults ----
    // f0 01 d8    lock add eax, ebx: LOCK needs a memory destination
    {"lock add eax, ebx", "f0 01 d8", M64, {{ES_RAX, 1}, {ES_RBX, 2}}, 0, {}, {}, 0, {}, ES_VEC_UD},
    // f0 39 03    lock cmp [rbx], eax: CMP does not write, LOCK is invalid
    {"lock cmp [rbx], eax", "f0 39 03", M64, {{ES_RBX, D}}, 0, {}, {}, 0, {}, ES_VEC_UD},
    // f0 85 03    lock test [rbx], eax
    {"lock test [rbx], eax", "f0 85 03", M64, {{ES_RBX, D}}, 0, {}, {}, 0, {}, ES_VEC_UD},
    // f0 f6 d0    lock not al
    {"lock not al", "f0 f6 d0", M64, {{ES_RAX, 1}}, 0, {}, {}, 0, {}, ES_VEC_UD},

    // ---- compatibility mode ----
    // 01 d8    add eax, ebx
    {"add eax, ebx (32)", "01 d8", M32, {{ES_RAX, 0xffffffff}, {ES_RBX, 2}}, 0, {},
     {{ES_RAX, 1}}, F_C | F_A, {}, -1, "01 d8"},
    // 40    inc eax (one-byte form, a REX prefix in 64-bit mode)
    {"inc eax (32)", "40", M32, {{ES_RAX, 0x7fffffff}}, F_C, {}, {{ES_RAX, 0x80000000}},
     F_C | F_O | F_S | F_A | F_P, {}, -1, "ff c0"},
    // 4b    dec ebx
    {"dec ebx (32)", "4b", M32, {{ES_RBX, 0}}, 0, {}, {{ES_RBX, 0xffffffff}},
     F_S | F_A | F_P, {}, -1, "ff cb"},
    // 66 48    dec ax
    {"dec ax (32)", "66 48", M32, {{ES_RAX, 0x10000}}, 0, {}, {{ES_RAX, 0x1ffff}},
     F_S | F_A | F_P, {}, -1, "66 ff c8"},
    // 00 0b    add [ebx], cl
    {"add [ebx], cl (32)", "00 0b", M32, {{ES_RBX, D}, {ES_RCX, 0x90}}, 0, {{0x100, 2, 0x2290}},
     {}, F_C | F_O, {{0x100, 2, 0x2220}}, -1, "00 0b"},
    // f0 31 03    lock xor [ebx], eax
    {"lock xor [ebx], eax (32)", "f0 31 03", M32, {{ES_RAX, 0xffffffff}, {ES_RBX, D}}, 0,
     {{0x100, 8, 0x1111111100000000}}, {}, F_S | F_P, {{0x100, 8, 0x11111111ffffffff}}, -1,
     "f0 31 03"},
    // 18 ec    sbb ah, ch
    {"sbb ah, ch (32)", "18 ec", M32, {{ES_RAX, 0x0000}, {ES_RCX, 0x0000}}, F_C, {},
     {{ES_RAX, 0xff00}}, F_C | F_S | F_A | F_P, {}, -1, "18 ec"},
    // 66 83 e8 01    sub ax, 1
    {"sub ax, 1 (32)", "66 83 e8 01", M32, {{ES_RAX, 0x12340000}}, 0, {}, {{ES_RAX, 0x1234ffff}},
     F_C | F_S | F_A | F_P, {}, -1, "66 83 e8 01"},
    // f7 1b    neg dword [ebx]
    {"neg dword [ebx] (32)", "f7 1b", M32, {{ES_RBX, D}}, 0, {{0x100, 4, 0x80000000}}, {},
     F_C | F_O | F_S | F_P, {{0x100, 4, 0x80000000}}, -1, "f7 1b"},
    // f0 01 d8    lock add eax, ebx (32): #UD as well
    {"lock add eax, ebx (32)", "f0 01 d8", M32, {}, 0, {}, {}, 0, {}, ES_VEC_UD, "f0 01 d8"},
};
EST_CASE_SUITE(Alu, kAlu)
