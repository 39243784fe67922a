// Decimal adjusts (compatibility mode only): AAA AAS AAM AAD DAA DAS.
//
// The host cannot run 32-bit code (IA-32 emulation is disabled in its
// kernel), so these expectations come from the SDM pseudo-code and its
// worked examples (DAA: 79H + 35H; DAS: 35H - 47H), with the undefined flags
// as sim/bcd.c defines them.  Only the 64-bit #UD cases ran on the host.
#include "est_case.h"

#define M64 ES_MODE_64
#define M32 ES_MODE_32

static const EstCase kBcd[] = {
    // 37    aaa  (5 + 6 = 0x0b: adjust, carry into AH)
    {"aaa (0x0b)", "37", M32, {{ES_RAX, 0x12340000 | 0x000b}}, 0, {}, {{ES_RAX, 0x12340101}},
     F_A | F_C, {}},
    // 37    aaa  (9 + 9 = 0x12 with AF set by the ADD)
    {"aaa (AF in)", "37", M32, {{ES_RAX, 0x0012}}, F_A, {}, {{ES_RAX, 0x0108}}, F_A | F_C, {}},
    // 37    aaa  (no adjustment: AL keeps its low nibble)
    {"aaa (no adjust)", "37", M32, {{ES_RAX, 0x0335}}, F_C, {}, {{ES_RAX, 0x0305}}, F_P, {}},
    // 37    aaa  (AX + 106H carries from AL into AH)
    {"aaa (AL carry)", "37", M32, {{ES_RAX, 0x00fa}}, 0, {}, {{ES_RAX, 0x0200}},
     F_A | F_C | F_Z | F_P, {}},
    // 3f    aas  (5 - 6 = 0xff)
    {"aas (0xff)", "3f", M32, {{ES_RAX, 0x01ff}}, 0, {}, {{ES_RAX, 0x0009}}, F_A | F_C | F_P, {}},
    // 3f    aas  (AF in, AH borrows)
    {"aas (AF in)", "3f", M32, {{ES_RAX, 0x0000}}, F_A, {}, {{ES_RAX, 0xfe0a}},
     F_A | F_C | F_P, {}},
    // 27    daa  (SDM example: 79H + 35H = AEH -> 14H, CF, AF)
    {"daa (SDM example)", "27", M32, {{ES_RAX, 0xae}}, 0, {}, {{ES_RAX, 0x14}},
     F_A | F_C | F_P, {}},
    // 27    daa  (CF in: +60H)
    {"daa (CF in)", "27", M32, {{ES_RAX, 0x5500}}, F_C, {}, {{ES_RAX, 0x5560}}, F_C | F_P, {}},
    // 27    daa  (no adjustment)
    {"daa (no adjust)", "27", M32, {{ES_RAX, 0x42}}, F_O, {}, {}, F_P, {}},
    // 2f    das  (SDM example: 35H - 47H = EEH -> 88H)
    {"das (SDM example)", "2f", M32, {{ES_RAX, 0xee}}, F_S | F_A | F_P | F_C, {}, {{ES_RAX, 0x88}},
     F_S | F_A | F_P | F_C, {}},
    // 2f    das  (AF in, AL < 6: the borrow sets CF; current SDM, no ELSE)
    {"das (borrow)", "2f", M32, {{ES_RAX, 0x03}}, F_A, {}, {{ES_RAX, 0xfd}}, F_S | F_A | F_C, {}},
    // d4 0a    aam  (79 -> 7, 9)
    {"aam", "d4 0a", M32, {{ES_RAX, 0xabcd004f}}, F_C | F_O | F_A, {}, {{ES_RAX, 0xabcd0709}}, F_P,
     {}},
    // d4 10    aam 16
    {"aam 16", "d4 10", M32, {{ES_RAX, 0x00ff}}, 0, {}, {{ES_RAX, 0x0f0f}}, F_P, {}},
    // d4 00    aam 0: #DE
    {"aam 0", "d4 00", M32, {{ES_RAX, 0x1234}}, 0, {}, {}, 0, {}, ES_VEC_DE},
    // d5 0a    aad  (7, 9 -> 79)
    {"aad", "d5 0a", M32, {{ES_RAX, 0x55550709}}, F_Z, {}, {{ES_RAX, 0x5555004f}}, 0, {}},
    // d5 00    aad 0
    {"aad 0", "d5 00", M32, {{ES_RAX, 0x0509}}, 0, {}, {{ES_RAX, 0x0009}}, F_P, {}},
    // d5 1f    aad 31  (the product wraps to 8 bits)
    {"aad 31", "d5 1f", M32, {{ES_RAX, 0x0909}}, 0, {}, {{ES_RAX, 0x0020}}, F_A, {}},

    // invalid in 64-bit mode (these two ran on the host: SIGILL)
    // 37    (aaa)
    {"aaa in 64-bit mode", "37", M64, {{ES_RAX, 0x0b}}, 0, {}, {}, 0, {}, ES_VEC_UD},
    // d4 0a    (aam)
    {"aam in 64-bit mode", "d4 0a", M64, {{ES_RAX, 0x4f}}, 0, {}, {}, 0, {}, ES_VEC_UD},
};
EST_CASE_SUITE(Bcd, kBcd)
