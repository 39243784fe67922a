// Bit family: BT BTS BTR BTC (register, immediate and bit-string memory
// forms), BSF BSR, LZCNT TZCNT POPCNT, BSWAP, MOVBE, BMI1 (ANDN BEXTR BLSI
// BLSMSK BLSR), BMI2 (BZHI PDEP PEXT), ADX (ADCX ADOX).  Undefined flags
// and the 16-bit BSWAP as on the AMD Zen host; every expected value was
// checked by running the bytes natively on it.
#include "est_case.h"

#define M64 ES_MODE_64
#define M32 ES_MODE_32
#define D 0x600100ull // EST_DATA + 0x100
#define ALL (F_C | F_P | F_A | F_Z | F_S | F_O)

static const EstCase kBits[] = {
    // 0f a3 c8    bt eax, ecx  (offset 63 mod 32 = 31; only CF changes)
    {"bt eax, ecx", "0f a3 c8", M64, {{ES_RAX, 0x80000000}, {ES_RCX, 63}}, ALL & ~F_C, {}, {}, ALL,
     {}},
    // 48 0f ba e0 45    bt rax, 0x45  (bit 5)
    {"bt rax, 0x45", "48 0f ba e0 45", M64, {{ES_RAX, 0xffffffffffffffdf}}, F_C, {}, {}, 0, {}},
    // 66 0f ba e8 11    bts ax, 17  (bit 1)
    {"bts ax, 17", "66 0f ba e8 11", M64, {{ES_RAX, 0xffff0000}}, 0, {}, {{ES_RAX, 0xffff0002}}, 0,
     {}},
    // 0f b3 d8    btr eax, ebx  (zero-extends)
    {"btr eax, ebx", "0f b3 d8", M64, {{ES_RAX, 0xffffffffffffffff}, {ES_RBX, 4}}, 0, {},
     {{ES_RAX, 0xffffffef}}, F_C, {}},
    // 48 0f bb d8    btc rax, rbx
    {"btc rax, rbx", "48 0f bb d8", M64, {{ES_RAX, 0}, {ES_RBX, 0x7f}}, F_C, {},
     {{ES_RAX, 0x8000000000000000}}, 0, {}},
    // 0f ab 0b    bts [rbx], ecx  (offset 35: dword at rbx+4, bit 3)
    {"bts [rbx], ecx (35)", "0f ab 0b", M64, {{ES_RBX, D}, {ES_RCX, 35}}, 0, {{0x100, 8, 0}}, {}, 0,
     {{0x100, 8, 0x0000000800000000}}},
    // 48 0f b3 0b    btr [rbx], rcx  (offset -1: qword at rbx-8, bit 63)
    {"btr [rbx], rcx (-1)", "48 0f b3 0b", M64, {{ES_RBX, D}, {ES_RCX, 0xffffffffffffffff}}, 0,
     {{0xf8, 8, 0x8000000000000001}}, {}, F_C, {{0xf8, 8, 0x0000000000000001}}},
    // 66 0f bb 0b    btc [rbx], cx  (offset -17: word at rbx-4, bit 15)
    {"btc [rbx], cx (-17)", "66 0f bb 0b", M64, {{ES_RBX, D}, {ES_RCX, 0xffef}}, 0,
     {{0xfc, 2, 0x8000}}, {}, F_C, {{0xfc, 2, 0}}},
    // 48 0f a3 0b    bt [rbx], rcx  (offset 1000: qword at rbx+120, bit 40)
    {"bt [rbx], rcx (1000)", "48 0f a3 0b", M64, {{ES_RBX, D}, {ES_RCX, 1000}}, 0,
     {{0x178, 8, 0x0000010000000000}}, {}, F_C, {}},
    // 0f ba 23 23    bt dword [rbx], 35  (an immediate offset wraps: bit 3)
    {"bt dword [rbx], 35", "0f ba 23 23", M64, {{ES_RBX, D}}, 0, {{0x100, 8, 0x0000000100000008}},
     {}, F_C, {}},
    // f0 0f ab 03    lock bts [rbx], eax
    {"lock bts [rbx], eax", "f0 0f ab 03", M64, {{ES_RAX, 0}, {ES_RBX, D}}, 0, {{0x100, 4, 1}}, {},
     F_C, {{0x100, 4, 1}}},
    // f0 48 0f ba 33 3f    lock btr qword [rbx], 63
    {"lock btr qword [rbx], 63", "f0 48 0f ba 33 3f", M64, {{ES_RBX, D}}, 0,
     {{0x100, 8, 0xffffffffffffffff}}, {}, F_C, {{0x100, 8, 0x7fffffffffffffff}}},
    // f0 0f a3 03    lock bt [rbx], eax: BT does not write, LOCK is invalid
    {"lock bt [rbx], eax", "f0 0f a3 03", M64, {{ES_RBX, D}}, 0, {}, {}, 0, {}, ES_VEC_UD},

    // 0f bc c3    bsf eax, ebx  (Zen: flags of a logic result on the index)
    {"bsf eax, ebx", "0f bc c3", M64, {{ES_RAX, 0xffffffffffffffff}, {ES_RBX, 0x80}}, ALL, {},
     {{ES_RAX, 7}}, 0, {}},
    // 48 0f bc c3    bsf rax, rbx  (zero source: destination unchanged, ZF)
    {"bsf rax, rbx (0)", "48 0f bc c3", M64, {{ES_RAX, 0x1234}}, F_C | F_S | F_O, {}, {},
     F_Z | F_P, {}},
    // 0f bd c3    bsr eax, ebx  (zero source: not even zero-extended)
    {"bsr eax, ebx (0)", "0f bd c3", M64, {{ES_RAX, 0xffffffffffffffff}}, 0, {}, {}, F_Z | F_P, {}},
    // 48 0f bd 03    bsr rax, [rbx]
    {"bsr rax, [rbx]", "48 0f bd 03", M64, {{ES_RBX, D}}, 0, {{0x100, 8, 0x8000000000000001}},
     {{ES_RAX, 63}}, F_P, {}},
    // 66 0f bd ca    bsr cx, dx
    {"bsr cx, dx", "66 0f bd ca", M64, {{ES_RCX, 0xffffffff}, {ES_RDX, 0x0300}}, 0, {},
     {{ES_RCX, 0xffff0009}}, F_P, {}},
    // f3 0f bd c3    lzcnt eax, ebx  (OF kept, SF AF PF cleared on Zen)
    {"lzcnt eax, ebx", "f3 0f bd c3", M64, {{ES_RBX, 1}}, F_O | F_S | F_P | F_A, {},
     {{ES_RAX, 31}}, F_O, {}},
    // f3 48 0f bd c3    lzcnt rax, rbx  (zero source: 64, CF)
    {"lzcnt rax, rbx (0)", "f3 48 0f bd c3", M64, {{ES_RAX, 5}}, 0, {}, {{ES_RAX, 64}}, F_C, {}},
    // 66 f3 0f bd c3    lzcnt ax, bx
    {"lzcnt ax, bx", "66 f3 0f bd c3", M64, {{ES_RAX, 0xffff0000}, {ES_RBX, 0x8000}}, 0, {},
     {{ES_RAX, 0xffff0000}}, F_Z, {}},
    // f3 0f bc c3    tzcnt eax, ebx  (zero source: 32, CF)
    {"tzcnt eax, ebx (0)", "f3 0f bc c3", M64, {{ES_RAX, 0xffffffffffffffff}}, 0, {},
     {{ES_RAX, 32}}, F_C, {}},
    // f3 48 0f bc 03    tzcnt rax, [rbx]
    {"tzcnt rax, [rbx]", "f3 48 0f bc 03", M64, {{ES_RBX, D}}, F_S, {{0x100, 8, 0x100}},
     {{ES_RAX, 8}}, 0, {}},
    // f3 0f bc c3    tzcnt eax, ebx  (result 0: ZF)
    {"tzcnt eax, ebx (odd)", "f3 0f bc c3", M64, {{ES_RAX, 7}, {ES_RBX, 1}}, F_C, {}, {{ES_RAX, 0}},
     F_Z, {}},
    // f3 48 0f b8 c3    popcnt rax, rbx  (all other flags cleared)
    {"popcnt rax, rbx", "f3 48 0f b8 c3", M64, {{ES_RBX, 0xff00ff}}, ALL, {}, {{ES_RAX, 16}}, 0,
     {}},
    // f3 0f b8 c3    popcnt eax, ebx  (zero: ZF)
    {"popcnt eax, ebx (0)", "f3 0f b8 c3", M64, {{ES_RAX, 0xffffffffffffffff}, {ES_RBX, 0xffffffff00000000}},
     F_C, {}, {{ES_RAX, 0}}, F_Z, {}},
    // 66 f3 0f b8 0b    popcnt cx, [rbx]
    {"popcnt cx, [rbx]", "66 f3 0f b8 0b", M64, {{ES_RBX, D}, {ES_RCX, 0x12345678}}, 0,
     {{0x100, 4, 0xffff7001}}, {{ES_RCX, 0x12340004}}, 0, {}},

    // 0f c8    bswap eax
    {"bswap eax", "0f c8", M64, {{ES_RAX, 0xffffffff11223344}}, ALL, {}, {{ES_RAX, 0x44332211}},
     ALL, {}},
    // 49 0f c9    bswap r9
    {"bswap r9", "49 0f c9", M64, {{ES_R9, 0x0102030405060708}}, 0, {}, {{ES_R9, 0x0807060504030201}},
     0, {}},
    // 66 0f c8    bswap ax  (undefined in the SDM: Zen clears the low 16 bits)
    {"bswap ax", "66 0f c8", M64, {{ES_RAX, 0x1234567812345678}}, 0, {},
     {{ES_RAX, 0x1234567812340000}}, 0, {}},
    // 0f 38 f0 03    movbe eax, [rbx]
    {"movbe eax, [rbx]", "0f 38 f0 03", M64, {{ES_RAX, 0xffffffffffffffff}, {ES_RBX, D}}, 0,
     {{0x100, 4, 0x11223344}}, {{ES_RAX, 0x44332211}}, 0, {}},
    // 48 0f 38 f1 03    movbe [rbx], rax
    {"movbe [rbx], rax", "48 0f 38 f1 03", M64, {{ES_RAX, 0x0102030405060708}, {ES_RBX, D}}, 0, {},
     {}, 0, {{0x100, 8, 0x0807060504030201}}},
    // 66 0f 38 f0 0b    movbe cx, [rbx]
    {"movbe cx, [rbx]", "66 0f 38 f0 0b", M64, {{ES_RBX, D}, {ES_RCX, 0xaaaaaaaa}}, 0,
     {{0x100, 2, 0x1234}}, {{ES_RCX, 0xaaaa3412}}, 0, {}},

    // c4 e2 f0 f2 c3    andn rax, rcx, rbx
    {"andn rax, rcx, rbx", "c4 e2 f0 f2 c3", M64, {{ES_RCX, 0x00ff00ff00ff00ff}, {ES_RBX, 0xf0f0f0f0f0f0f0f0}},
     F_C | F_O | F_A, {}, {{ES_RAX, 0xf000f000f000f000}}, F_S | F_P, {}},
    // c4 e2 70 f2 c3    andn eax, ecx, ebx  (zero)
    {"andn eax, ecx, ebx", "c4 e2 70 f2 c3", M64, {{ES_RAX, 9}, {ES_RCX, 0xffffffff}, {ES_RBX, 0x1234}},
     0, {}, {{ES_RAX, 0}}, F_Z | F_P, {}},
    // c4 e2 70 f7 c3    bextr eax, ebx, ecx  (start 4, length 8; Zen: AF set, SF clear)
    {"bextr eax, ebx, ecx", "c4 e2 70 f7 c3", M64, {{ES_RBX, 0x12345678}, {ES_RCX, 0x0804}}, F_C | F_O,
     {}, {{ES_RAX, 0x67}}, F_A, {}},
    // c4 e2 f0 f7 c3    bextr rax, rbx, rcx  (start 70 >= 64: 0)
    {"bextr rax, rbx, rcx (70)", "c4 e2 f0 f7 c3", M64, {{ES_RAX, 1}, {ES_RBX, 0xffffffffffffffff}, {ES_RCX, 0x2046}},
     0, {}, {{ES_RAX, 0}}, F_Z | F_A | F_P, {}},
    // c4 e2 f0 f7 c3    bextr rax, rbx, rcx  (start 0, length 64: the whole source)
    {"bextr rax, rbx, rcx (len 64)", "c4 e2 f0 f7 c3", M64, {{ES_RBX, 0x8000000000000001}, {ES_RCX, 0x4000}},
     0, {}, {{ES_RAX, 0x8000000000000001}}, F_A, {}},
    // c4 e2 f0 f3 db    blsi rcx, rbx
    {"blsi rcx, rbx", "c4 e2 f0 f3 db", M64, {{ES_RBX, 0x0000000000001200}}, F_O, {},
     {{ES_RCX, 0x200}}, F_C | F_P, {}},
    // c4 e2 70 f3 d3    blsmsk ecx, ebx  (zero source: all ones, CF)
    {"blsmsk ecx, ebx (0)", "c4 e2 70 f3 d3", M64, {{ES_RCX, 5}}, 0, {}, {{ES_RCX, 0xffffffff}},
     F_C | F_S | F_P, {}},
    // c4 e2 f0 f3 cb    blsr rcx, rbx
    {"blsr rcx, rbx", "c4 e2 f0 f3 cb", M64, {{ES_RBX, 0x8000000000000000}}, 0, {}, {{ES_RCX, 0}},
     F_Z | F_P, {}},
    // c4 e2 f0 f5 c3    bzhi rax, rbx, rcx  (index 8)
    {"bzhi rax, rbx, rcx", "c4 e2 f0 f5 c3", M64, {{ES_RBX, 0xffffffffffffffff}, {ES_RCX, 0x108}}, 0,
     {}, {{ES_RAX, 0xff}}, F_P, {}},
    // c4 e2 70 f5 c3    bzhi eax, ebx, ecx  (index 40 >= 32: unchanged, CF)
    {"bzhi eax, ebx, ecx (40)", "c4 e2 70 f5 c3", M64, {{ES_RBX, 0x80000000}, {ES_RCX, 40}}, 0, {},
     {{ES_RAX, 0x80000000}}, F_C | F_S | F_P, {}},
    // c4 e2 f3 f5 c3    pdep rax, rcx, rbx
    {"pdep rax, rcx, rbx", "c4 e2 f3 f5 c3", M64, {{ES_RCX, 0b1011}, {ES_RBX, 0xf000000000000f0f}}, ALL,
     {}, {{ES_RAX, 0xb}}, ALL, {}},
    // c4 e2 72 f5 c3    pext eax, ecx, ebx
    {"pext eax, ecx, ebx", "c4 e2 72 f5 c3", M64, {{ES_RCX, 0x12345678}, {ES_RBX, 0xff00ff00}}, 0, {},
     {{ES_RAX, 0x1256}}, 0, {}},
    // 66 48 0f 38 f6 c3    adcx rax, rbx  (CF in and out only)
    {"adcx rax, rbx", "66 48 0f 38 f6 c3", M64, {{ES_RAX, 0xffffffffffffffff}, {ES_RBX, 0}}, F_C | F_O,
     {}, {{ES_RAX, 0}}, F_C | F_O, {}},
    // f3 0f 38 f6 c3    adox eax, ebx  (OF in and out only)
    {"adox eax, ebx", "f3 0f 38 f6 c3", M64, {{ES_RAX, 0xffffffff7fffffff}, {ES_RBX, 0x80000000}}, F_O | F_C,
     {}, {{ES_RAX, 0}}, F_O | F_C, {}},
    // f3 48 0f 38 f6 03    adox rax, [rbx]
    {"adox rax, [rbx]", "f3 48 0f 38 f6 03", M64, {{ES_RAX, 1}, {ES_RBX, D}}, F_Z, {{0x100, 8, 2}},
     {{ES_RAX, 3}}, F_Z, {}},

    // ---- compatibility mode (same bytes on the host) ----
    // 0f a3 0b    bt [ebx], ecx
    {"bt [ebx], ecx (32)", "0f a3 0b", M32, {{ES_RBX, D}, {ES_RCX, 0xffffffff}}, 0,
     {{0xfc, 4, 0x80000000}}, {}, F_C, {}, -1, "0f a3 0b"},
    // 0f c9    bswap ecx
    {"bswap ecx (32)", "0f c9", M32, {{ES_RCX, 0xaabbccdd}}, 0, {}, {{ES_RCX, 0xddccbbaa}}, 0, {},
     -1, "0f c9"},
    // f3 0f b8 c3    popcnt eax, ebx
    {"popcnt eax, ebx (32)", "f3 0f b8 c3", M32, {{ES_RBX, 0xffffffff}}, F_Z, {}, {{ES_RAX, 32}}, 0,
     {}, -1, "f3 0f b8 c3"},
};
EST_CASE_SUITE(Bits, kBits)
