// diff_host.h - what the parts of the differential test share: the case
// generator's PRNG, the instruction templates, a generated case, the
// comparison of the two runs and the case dump.
//
//   diff_templates.cc  the template table (byte patterns by family)
//   diff_values.cc     random register, XMM and x87 values
//   diff_generate.cc   one case from a template: bytes and initial state
//   diff_compare.cc    native result against the simulator's, the report
//   diff_dump.cc       every case written out (ES_DIFF_DUMP)
//   diff_host.cc       the GoogleTest tests and the options
// The C parts (diff_native.c, diff_sim.c, the simulator) are reached
// through their extern "C" headers.
#ifndef ENTRYSIM_DIFF_HOST_H
#define ENTRYSIM_DIFF_HOST_H

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "decoder.h"
#include "diff_native.h"

namespace diffhost {

// ---------------------------------------------------------------- PRNG

struct Rng {
    uint64_t s;
    explicit Rng(uint64_t seed) : s(seed) {}
    uint64_t next()
    { // splitmix64: tiny, seedable, good enough for test generation
        uint64_t z = (s += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    uint32_t below(uint32_t n) { return (uint32_t)(next() % n); }
    bool chance(unsigned pct) { return below(100) < pct; }
};

inline uint64_t mix(uint64_t a, uint64_t b)
{
    Rng r(a ^ (b * 0x9e3779b97f4a7c15ull));
    return r.next();
}

// Register values biased toward the edges where flag logic breaks.
uint64_t rval(Rng &r);
// XMM values: raw bits, or lanes of interesting floats / doubles.
void xval(Rng &r, uint8_t *x);
// 16 bytes of half-precision values of every class (F16C sources).
void hval(Rng &r, uint8_t *x);
// x87 values of every class (zero, NaN, denormal, unnormal...).
void f80val(Rng &r, uint8_t *v);
// A random x87 state in an FXSAVE image.
void x87_state(Rng &r, uint8_t *fx);

// ---------------------------------------------------------------- templates

enum : uint64_t {
    T_B = 1ull << 0,       // byte operation
    T_V = 1ull << 1,       // operand size 16/32/64 (66, REX.W)
    T_Y = 1ull << 2,       // operand size 32/64 (REX.W / VEX.W)
    T_D64 = 1ull << 3,     // stack op: 64 by default in 64-bit mode, 66 -> 16
    T_MEM = 1ull << 4,     // r/m must be memory
    T_REG = 1ull << 5,     // r/m must be a register
    T_NO64 = 1ull << 6,    // invalid in 64-bit mode
    T_NO32 = 1ull << 7,    // 64-bit mode only
    T_RX = 1ull << 8,      // ModRM.reg names an XMM register
    T_MX = 1ull << 9,      // ModRM.rm (register form) names an XMM register
    T_A16 = 1ull << 10,    // memory operand 16-byte aligned
    T_BITOFF = 1ull << 11, // ModRM.reg is a bit offset into memory: keep it small
    T_DIV = 1ull << 12,    // bias the dividend so most cases do not #DE
    T_STR = 1ull << 13,    // string instruction: RSI/RDI/RCX/DF set up
    T_REPOK = 1ull << 14,  // may take F3
    T_REPNE = 1ull << 15,  // may take F2
    T_LOCK = 1ull << 16,   // may take LOCK with a memory destination
    T_CMPX = 1ull << 17,   // CMPXCHG: make the comparison succeed half the time
    T_FRAME = 1ull << 18,  // LEAVE/ENTER: RBP points into the stack window
    T_POPF = 1ull << 19,   // POPF: the popped value keeps TF/AC clear
    T_VEX = 1ull << 20,    // VEX encoded (pfx -> pp, map -> mmmmm)
    T_VVVV = 1ull << 21,   // VEX.vvvv names a GPR operand
    T_CC = 1ull << 22,     // opcode + random condition code
    T_SMALL = 1ull << 23,  // imm8 is a shift count: small half the time
    T_CMPIMM = 1ull << 24, // imm8 is an SSE compare predicate 0..7
    T_C8B = 1ull << 25,    // CMPXCHG8B/16B
    T_ENTER = 1ull << 26,  // imm16 + imm8 of ENTER
    T_COMPAT = 1ull << 27, // needs real compatibility mode natively (PUSHA/POPA)
    T_XLAT = 1ull << 28,   // XLAT: RBX points into the data window
    T_X87 = 1ull << 29,    // x87: random register stack, control and status words
    T_MOFFS = 1ull << 30,  // MOV moffs: the immediate is an address in the data window
    T_RDI = 1ull << 31,    // implicit [RDI] (MASKMOVDQU): RDI points into the window
    T_LDMX = 1ull << 32,   // LDMXCSR: a mostly valid MXCSR image in memory
    T_BOUND = 1ull << 33,  // BOUND: bounds in memory around the index most of the time
    // the VEX forms (AVX, AVX2, FMA, F16C)
    T_VX = 1ull << 34,     // VEX.vvvv names a vector register (NDS/NDD operand)
    T_LR = 1ull << 35,     // VEX.L random: the VEX.128 and VEX.256 forms (or L ignored)
    T_L1 = 1ull << 36,     // VEX.L = 1: the VEX.256 form only
    T_W1 = 1ull << 37,     // VEX.W = 1 (an opcode bit: the D/Q, PS/PD forms)
    T_WIG = 1ull << 38,    // VEX.W ignored: drawn at random
    T_IS4 = 1ull << 39,    // imm8[7:4] names a vector register (VBLENDVPS & co.)
    T_CMP32 = 1ull << 40,  // imm8 is a VCMPPS predicate 0..31
    T_VSIB = 1ull << 41,   // gather: VSIB memory operand, index vector into the window
    T_HALF = 1ull << 42,   // half-precision sources (VCVTPH2PS)
    T_RND8 = 1ull << 43,   // imm8 is mostly a rounding control 0..7 (VCVTPS2PH)
    T_MISAL = 1ull << 44,  // an aligned move: misaligned (#GP) a quarter of the time
};
// implicit memory operands: 32-bit addressing in the emulated 32-bit mode
const uint64_t T_IMPLMEM = T_STR | T_XLAT | T_MOFFS | T_RDI;

enum { X_RAND = -1, X_NONE = -2, X_PLUSR = -3 };
enum { I_Z = 5, I_V = 6 };

struct Tmpl {
    std::string fam;
    uint8_t pfx; // mandatory prefix: 0, 0x66, 0xf2, 0xf3
    uint8_t map; // 0: one byte, 1: 0F, 2: 0F38, 3: 0F3A
    uint8_t opc;
    int ext;     // /digit, X_RAND, X_NONE, X_PLUSR
    uint8_t imm; // bytes, or I_Z (16/32), I_V (16/32/64)
    uint64_t f;
    int op2;     // a fixed second opcode byte (D9 E8 fld1), or -1
};

// Every template, families in a fixed order (cases draw by index).
const std::vector<Tmpl> &templates();

// ---------------------------------------------------------------- cases

struct Case {
    uint8_t code[16];
    size_t len;
    uint8_t native[16]; // what the host runs (differs only in emulated 32-bit mode)
    size_t nlen;
    diff_state st;
    uint8_t data[DIFF_DATA_SIZE];
    uint8_t stack[DIFF_STACK_SIZE];
    es_insn d;
};

const uint64_t kFlagBits = ES_CF | ES_PF | ES_AF | ES_ZF | ES_SF | ES_OF;
const uint64_t kCmpFlags = kFlagBits | ES_DF;

// Generates one case from template t; false when the bytes do not decode
// (the caller draws again).  emu32: a 32-bit case on a host without
// compatibility mode, run natively as its 64-bit-mode equivalent.
bool generate(const Tmpl &t, int mode, bool emu32, Rng &r, Case &c);

// ---------------------------------------------------------------- comparison

extern const char *const kGprName[16];

// Exception vectors (SDM Vol. 3A, 6.3.1), spelled out here so the harness
// does not depend on machine.h's names for them.
enum { VEC_DE = 0, VEC_DB = 1, VEC_BP = 3, VEC_UD = 6, VEC_SS = 12, VEC_MF = 16, VEC_AC = 17,
       VEC_XM = 19 };

struct Outcome {
    bool ok;
    bool unimpl;
    bool undef_diff; // matched, but an undefined flag differs from the host
    std::string why;
};

std::string hex(uint64_t v);
// The initial values of the instruction's register operands, for the report.
std::string inputs(const Case &c);
// The native run n against the simulator's s.
Outcome compare(const Case &c, int mode, const diff_result &n, const diff_result &s);

// ---------------------------------------------------------------- the dump

// The template table, once per dump.
void dump_templates(FILE *f);
// One case: index, template drawn (index into templates()), bytes, initial
// state and outcome.
void dump_case(FILE *f, const char *fam, int mode, unsigned i, long tmpl, const Case &c,
               const diff_result &n, const diff_result &s, const Outcome &o);

} // namespace diffhost

#endif
