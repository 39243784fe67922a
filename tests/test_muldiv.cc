// MUL, IMUL (1, 2, 3 operands), DIV, IDIV (#DE on zero and on overflow,
// INT_MIN / -1 included), MULX.  Undefined flags as on the AMD Zen host:
// MUL/IMUL keep SF ZF AF PF; DIV/IDIV clear SF ZF PF, set AF, keep CF OF.
// Every expected value was checked by running the bytes natively on it.
#include "est_case.h"

#define M64 ES_MODE_64
#define M32 ES_MODE_32
#define D 0x600100ull // EST_DATA + 0x100
#define SZAP (F_S | F_Z | F_A | F_P)

static const EstCase kMulDiv[] = {
    // 48 f7 e3    mul rbx
    {"mul rbx", "48 f7 e3", M64, {{ES_RAX, 0xffffffffffffffff}, {ES_RBX, 2}}, SZAP, {},
     {{ES_RAX, 0xfffffffffffffffe}, {ES_RDX, 1}}, SZAP | F_C | F_O, {}},
    // f7 e3    mul ebx  (both halves zero-extend)
    {"mul ebx", "f7 e3", M64, {{ES_RAX, 0xffffffff00000002}, {ES_RBX, 3}, {ES_RDX, 0xdead0000dead}},
     F_C | F_O, {}, {{ES_RAX, 6}, {ES_RDX, 0}}, 0, {}},
    // 66 f7 e3    mul bx
    {"mul bx", "66 f7 e3", M64, {{ES_RAX, 0x8000}, {ES_RBX, 2}, {ES_RDX, 0x1234567800000000}}, 0, {},
     {{ES_RAX, 0}, {ES_RDX, 0x1234567800000001}}, F_C | F_O, {}},
    // f6 e3    mul bl  (AX = AL * BL; DX untouched)
    {"mul bl", "f6 e3", M64, {{ES_RAX, 0x5580}, {ES_RBX, 2}, {ES_RDX, 7}}, F_Z, {},
     {{ES_RAX, 0x0100}}, F_Z | F_C | F_O, {}},
    // f6 e4    mul ah
    {"mul ah", "f6 e4", M64, {{ES_RAX, 0x0f0f}}, 0, {}, {{ES_RAX, 0x00e1}}, 0, {}},
    // 48 f7 23    mul qword [rbx]
    {"mul qword [rbx]", "48 f7 23", M64, {{ES_RAX, 0x100000000}, {ES_RBX, D}}, 0,
     {{0x100, 8, 0x100000001}}, {{ES_RAX, 0x100000000}, {ES_RDX, 1}}, F_C | F_O, {}},
    // 48 f7 eb    imul rbx
    {"imul rbx", "48 f7 eb", M64, {{ES_RAX, 0xffffffffffffffff}, {ES_RBX, 0xffffffffffffffff}}, F_C,
     {}, {{ES_RAX, 1}, {ES_RDX, 0}}, 0, {}},
    // 48 f7 eb    imul rbx  (negative 128-bit product)
    {"imul rbx (neg)", "48 f7 eb", M64, {{ES_RAX, 0x4000000000000000}, {ES_RBX, 0xfffffffffffffffc}},
     0, {}, {{ES_RAX, 0}, {ES_RDX, 0xffffffffffffffff}}, F_C | F_O, {}},
    // f7 e9    imul ecx
    {"imul ecx", "f7 e9", M64, {{ES_RAX, 0x40000000}, {ES_RCX, 2}, {ES_RDX, 0xffffffffffffffff}}, 0,
     {}, {{ES_RAX, 0x80000000}, {ES_RDX, 0}}, F_C | F_O, {}},
    // f6 e9    imul cl
    {"imul cl", "f6 e9", M64, {{ES_RAX, 0x80}, {ES_RCX, 0xff}}, 0, {}, {{ES_RAX, 0x0080}},
     F_C | F_O, {}},
    // 66 f7 ed    imul bp
    {"imul bp", "66 f7 ed", M64, {{ES_RAX, 0xfffe}, {ES_RBP, 3}}, 0, {},
     {{ES_RAX, 0xfffa}, {ES_RDX, 0xffff}}, 0, {}},
    // 48 0f af c3    imul rax, rbx
    {"imul rax, rbx", "48 0f af c3", M64, {{ES_RAX, 0x100000000}, {ES_RBX, 0x100000000}}, F_P, {},
     {{ES_RAX, 0}}, F_P | F_C | F_O, {}},
    // 66 0f af c3    imul ax, bx
    {"imul ax, bx", "66 0f af c3", M64, {{ES_RAX, 0x1111fffe}, {ES_RBX, 3}}, F_C | F_O, {},
     {{ES_RAX, 0x1111fffa}}, 0, {}},
    // 6b 03 fd    imul eax, [rbx], -3
    {"imul eax, [rbx], -3", "6b 03 fd", M64, {{ES_RAX, 0xffffffffffffffff}, {ES_RBX, D}}, 0,
     {{0x100, 4, 5}}, {{ES_RAX, 0xfffffff1}}, 0, {}},
    // 48 69 c3 78 56 34 12    imul rax, rbx, 0x12345678
    {"imul rax, rbx, imm32", "48 69 c3 78 56 34 12", M64, {{ES_RBX, 0x100000000}}, 0, {},
     {{ES_RAX, 0x1234567800000000}}, 0, {}},
    // 66 45 69 c1 00 01    imul r8w, r9w, 0x100
    {"imul r8w, r9w, 0x100", "66 45 69 c1 00 01", M64, {{ES_R8, 0x7777}, {ES_R9, 0x100}}, 0, {},
     {{ES_R8, 0}}, F_C | F_O, {}},

    // 48 f7 f3    div rbx
    {"div rbx", "48 f7 f3", M64, {{ES_RDX, 1}, {ES_RAX, 0}, {ES_RBX, 2}}, F_C | F_Z | F_S | F_P, {},
     {{ES_RAX, 0x8000000000000000}, {ES_RDX, 0}}, F_C | F_A, {}},
    // f7 f3    div ebx
    {"div ebx", "f7 f3", M64, {{ES_RDX, 0xffffffff00000001}, {ES_RAX, 5}, {ES_RBX, 0x10}}, F_O, {},
     {{ES_RAX, 0x10000000}, {ES_RDX, 5}}, F_O | F_A, {}},
    // f6 f3    div bl
    {"div bl", "f6 f3", M64, {{ES_RAX, 0x0107}, {ES_RBX, 0x10}}, 0, {}, {{ES_RAX, 0x0710}}, F_A, {}},
    // 66 f7 33    div word [rbx]
    {"div word [rbx]", "66 f7 33", M64, {{ES_RAX, 0x0009}, {ES_RDX, 0x0001}, {ES_RBX, D}}, 0,
     {{0x100, 2, 0x0002}}, {{ES_RAX, 0x8004}, {ES_RDX, 1}}, F_A, {}},
    // 48 f7 fb    idiv rbx
    {"idiv rbx", "48 f7 fb", M64, {{ES_RDX, 0xffffffffffffffff}, {ES_RAX, 0xfffffffffffffff9}, {ES_RBX, 2}},
     0, {}, {{ES_RAX, 0xfffffffffffffffd}, {ES_RDX, 0xffffffffffffffff}}, F_A, {}},
    // 66 f7 f9    idiv cx
    {"idiv cx", "66 f7 f9", M64, {{ES_RDX, 0xffff}, {ES_RAX, 0xfff9}, {ES_RCX, 2}}, 0, {},
     {{ES_RAX, 0xfffd}, {ES_RDX, 0xffff}}, F_A, {}},
    // f6 fb    idiv bl
    {"idiv bl", "f6 fb", M64, {{ES_RAX, 0xff81}, {ES_RBX, 0x02}}, 0, {}, {{ES_RAX, 0xffc1}}, F_A, {}},
    // 48 f7 fb    idiv rbx  (largest positive quotient)
    {"idiv rbx (max)", "48 f7 fb", M64, {{ES_RDX, 0}, {ES_RAX, 0x7fffffffffffffff}, {ES_RBX, 1}}, 0,
     {}, {}, F_A, {}},

    // ---- #DE ----
    // 48 f7 f3    div rbx  (zero divisor)
    {"div rbx (0)", "48 f7 f3", M64, {{ES_RAX, 1}, {ES_RDX, 2}}, F_C, {}, {}, 0, {}, ES_VEC_DE},
    // f7 f3    div ebx  (quotient >= 2^32)
    {"div ebx (overflow)", "f7 f3", M64, {{ES_RDX, 2}, {ES_RBX, 2}}, 0, {}, {}, 0, {}, ES_VEC_DE},
    // f6 f3    div bl  (quotient 0x100)
    {"div bl (overflow)", "f6 f3", M64, {{ES_RAX, 0x1000}, {ES_RBX, 0x10}}, 0, {}, {}, 0, {}, ES_VEC_DE},
    // 48 f7 fb    idiv rbx  (INT64_MIN / -1)
    {"idiv rbx (INT64_MIN/-1)", "48 f7 fb", M64,
     {{ES_RDX, 0xffffffffffffffff}, {ES_RAX, 0x8000000000000000}, {ES_RBX, 0xffffffffffffffff}}, 0,
     {}, {}, 0, {}, ES_VEC_DE},
    // f7 f9    idiv ecx  (INT32_MIN / -1)
    {"idiv ecx (INT32_MIN/-1)", "f7 f9", M64, {{ES_RDX, 0xffffffff}, {ES_RAX, 0x80000000}, {ES_RCX, 0xffffffff}},
     0, {}, {}, 0, {}, ES_VEC_DE},
    // f6 f9    idiv cl  (-128 / -1)
    {"idiv cl (-128/-1)", "f6 f9", M64, {{ES_RAX, 0xff80}, {ES_RCX, 0xff}}, 0, {}, {}, 0, {}, ES_VEC_DE},
    // 48 f7 fb    idiv rbx  (2^63 / 1 does not fit)
    {"idiv rbx (2^63/1)", "48 f7 fb", M64, {{ES_RAX, 0x8000000000000000}, {ES_RBX, 1}}, 0, {}, {},
     0, {}, ES_VEC_DE},
    // 66 f7 33    div word [rbx]  (zero in memory)
    {"div word [rbx] (0)", "66 f7 33", M64, {{ES_RBX, D}}, 0, {}, {}, 0, {}, ES_VEC_DE},

    // c4 e2 f3 f6 c3    mulx rax, rcx, rbx  (rax = high, rcx = low of rdx * rbx; no flags)
    {"mulx rax, rcx, rbx", "c4 e2 f3 f6 c3", M64, {{ES_RDX, 0xffffffffffffffff}, {ES_RBX, 0x10}},
     F_Z | F_C, {}, {{ES_RAX, 0xf}, {ES_RCX, 0xfffffffffffffff0}}, F_Z | F_C, {}},
    // c4 e2 fb f6 c3    mulx rax, rax, rbx  (same register: gets the high half)
    {"mulx rax, rax, rbx", "c4 e2 fb f6 c3", M64, {{ES_RDX, 0x8000000000000001}, {ES_RBX, 4}}, 0, {},
     {{ES_RAX, 2}}, 0, {}},
    // c4 e2 73 f6 03    mulx eax, ecx, [rbx]
    {"mulx eax, ecx, [rbx]", "c4 e2 73 f6 03", M64, {{ES_RDX, 0x1ffffffff}, {ES_RBX, D}}, 0,
     {{0x100, 4, 0x10}}, {{ES_RAX, 0xf}, {ES_RCX, 0xfffffff0}}, 0, {}},

    // f0 f7 23    lock mul dword [rbx]
    {"lock mul dword [rbx]", "f0 f7 23", M64, {{ES_RBX, D}}, 0, {}, {}, 0, {}, ES_VEC_UD},

    // ---- compatibility mode (same bytes on the host) ----
    // f7 e3    mul ebx
    {"mul ebx (32)", "f7 e3", M32, {{ES_RAX, 0x80000000}, {ES_RBX, 4}}, 0, {},
     {{ES_RAX, 0}, {ES_RDX, 2}}, F_C | F_O, {}, -1, "f7 e3"},
    // f7 f1    div ecx
    {"div ecx (32)", "f7 f1", M32, {{ES_RAX, 100}, {ES_RCX, 7}}, 0, {},
     {{ES_RAX, 14}, {ES_RDX, 2}}, F_A, {}, -1, "f7 f1"},
    // f7 f1    div ecx  (zero)
    {"div ecx (32, 0)", "f7 f1", M32, {{ES_RAX, 100}}, 0, {}, {}, 0, {}, ES_VEC_DE, "f7 f1"},
    // 0f af 03    imul eax, [ebx]
    {"imul eax, [ebx] (32)", "0f af 03", M32, {{ES_RAX, 0x10000}, {ES_RBX, D}}, 0,
     {{0x100, 4, 0x10000}}, {{ES_RAX, 0}}, F_C | F_O, {}, -1, "0f af 03"},
};
EST_CASE_SUITE(MulDiv, kMulDiv)
