// diff_host.cc - differential test of the simulator against the host CPU.
//
// Each case is one randomly generated instruction (from the byte templates
// below: opcode, ModRM with random fields, prefixes, immediates, a memory
// operand whose base points into the data window) plus a random initial
// state.  It runs natively (diff_native.c) and on the simulator
// (diff_sim.c); registers, the flags the SDM defines for the instruction
// (es_insn.fl_undef masked out), XMM registers, MXCSR and both memory
// windows must match, and a native fault must be the simulator's fault.
//
// Reproduce or extend:   ES_DIFF_SEED=<n> ES_DIFF_CASES=<per family and mode>
//   ES_DIFF_FIRST=<case index>   (or --seed= --cases= --first=)
//   ES_DIFF_SHOW=<n> mismatches printed per mnemonic (--show=), ES_DIFF_VERBOSE=1
//   lists every case
//   --gtest_filter='*alu_64*'    one family in one mode
//   ES_DIFF_DUMP=<file> (--dump=) writes the template table and every
//   generated case (bytes, initial state, outcome) to a file, so that a
//   refactoring of the generator can be shown to change nothing (diff two
//   dumps); ES_DIFF_EMU32=1 (--emu32) runs 32-bit cases as their 64-bit-mode
//   equivalents even on a host with compatibility mode
// Every mismatch prints the exact variables that rerun just that case (and
// so does a simulator crash).
//
// Output, per family and mode: one row per mnemonic with
//   pass    cases that matched (including matching faults: same signal and
//           the same state at the fault),
//   fail    mismatches (the first few are printed in full),
//   unimpl  the simulator raised #UD for a decodable instruction it lacks,
//   faults  passing cases where both sides faulted (#DE, #GP, #XM...),
//   undef~  passing cases where a flag the SDM leaves undefined differs
//           from the host (informational: Zen behaviour is the target).
// x87 condition codes C0..C3 are compared strictly (the decoder exports no
// undefined mask for them).  A totals table by family follows at exit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "decoder.h"
#include "diff_native.h"
#include "es_shim.h"
#include "fault.h"

namespace {

// ---------------------------------------------------------------- options

uint64_t g_seed = 0x5eed2026;
unsigned g_cases = 1000;
unsigned g_first = 0;
unsigned g_show = 3; // mismatches printed per mnemonic
bool g_verbose;      // ES_DIFF_VERBOSE=1: print every case
bool g_force_emu32;  // ES_DIFF_EMU32=1: the no-compatibility-mode path
FILE *g_dump;        // ES_DIFF_DUMP=<file>: every case written out

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

uint64_t mix(uint64_t a, uint64_t b)
{
    Rng r(a ^ (b * 0x9e3779b97f4a7c15ull));
    return r.next();
}

// Register values biased toward the edges where flag logic breaks.
uint64_t rval(Rng &r)
{
    static const uint64_t edges[] = {
        0, 1, 2, 0x7f, 0x80, 0xff, 0x7fff, 0x8000, 0xffff, 0x7fffffff, 0x80000000ull,
        0xffffffffull, 0x7fffffffffffffffull, 0x8000000000000000ull, ~0ull, ~1ull,
        0x100000000ull, 0xffffffff00000000ull};
    switch (r.below(8)) {
    case 0: return r.below(70);
    case 1: return edges[r.below(sizeof edges / sizeof edges[0])];
    case 2: return (uint64_t)(int64_t)(int32_t)r.next();
    case 3: return r.next() & r.next() & r.next();
    case 4: return (uint64_t)-(int64_t)r.below(70);
    default: return r.next();
    }
}

// XMM values: raw bits, or lanes of interesting floats / doubles.
void xval(Rng &r, uint8_t *x)
{
    static const uint32_t f32[] = {0, 0x80000000u, 0x3f800000u, 0xbf800000u, 0x7f800000u,
                                   0xff800000u, 0x7fc00000u, 0xffc00000u, 0x7fa00000u,
                                   0x00000001u, 0x807fffffu, 0x7f7fffffu, 0x4f000000u,
                                   0xcf000000u, 0x3f000000u, 0x5f000000u, 0x40490fdbu};
    static const uint64_t f64[] = {0, 0x8000000000000000ull, 0x3ff0000000000000ull,
                                   0xbff0000000000000ull, 0x7ff0000000000000ull,
                                   0xfff0000000000000ull, 0x7ff8000000000000ull,
                                   0x7ff4000000000000ull, 1, 0x000fffffffffffffull,
                                   0x7fefffffffffffffull, 0x41e0000000000000ull,
                                   0xc3e0000000000000ull, 0x3fe0000000000000ull,
                                   0x43e0000000000000ull, 0x400921fb54442d18ull};
    int style = r.below(4);
    for (int i = 0; i < 16; i += style == 2 ? 8 : 4) {
        if (style == 0 || style == 3) {
            uint32_t v = (uint32_t)r.next();
            if (style == 0 || r.chance(40))
                v = r.chance(50) ? f32[r.below(sizeof f32 / 4)]
                                 : (uint32_t)((r.below(2) << 31) | ((118 + r.below(20)) << 23) |
                                              (r.next() & 0x7fffff));
            memcpy(x + i, &v, 4);
        } else if (style == 2) {
            uint64_t v = r.chance(50) ? f64[r.below(sizeof f64 / 8)]
                                      : ((uint64_t)r.below(2) << 63) |
                                            ((uint64_t)(1013 + r.below(20)) << 52) |
                                            (r.next() & 0xfffffffffffffull);
            memcpy(x + i, &v, 8);
        } else {
            uint32_t v = (uint32_t)rval(r);
            memcpy(x + i, &v, 4);
        }
    }
}

// x87 values: zeros, ones, infinities, NaNs, denormals, unnormals, integers,
// normal numbers of every magnitude.
void f80val(Rng &r, uint8_t *v)
{
    uint64_t mant = r.next() | (1ull << 63);
    uint16_t se = (uint16_t)(0x3fff + (int)r.below(130) - 65);
    switch (r.below(12)) {
    case 0: mant = 0, se = 0; break;                                  // zero
    case 1: mant = 1ull << 63, se = 0x3fff; break;                    // one
    case 2: mant = 1ull << 63, se = 0x7fff; break;                    // infinity
    case 3: mant = (3ull << 62) | (r.next() >> 3 & r.next()), se = 0x7fff; break; // QNaN
    case 4: mant = (1ull << 63) | (r.next() >> 2 | 1), se = 0x7fff; break;      // SNaN
    case 5: mant = r.next() >> 1, se = 0; break;                      // denormal
    case 6: se = (uint16_t)r.below(0x7fff); mant &= ~(1ull << 63); break; // unnormal
    case 7: {                                                          // an integer
        long double x = (long double)(int64_t)rval(r);
        memcpy(v, &x, 10);
        v[9] = (uint8_t)(v[9] & 0x7f);
        if (r.chance(50))
            v[9] |= 0x80;
        return;
    }
    case 8: se = (uint16_t)r.below(0x7fff); break;                    // any magnitude
    default: break;
    }
    if (r.chance(50))
        se |= 0x8000;
    memcpy(v, &mant, 8);
    memcpy(v + 8, &se, 2);
}

// A random x87 state in an FXSAVE image (exceptions masked but for the odd
// one, so an unmasked exception sets ES/B as the SDM says).
void x87_state(Rng &r, uint8_t *fx)
{
    uint16_t fcw = 0x37f;
    if (r.chance(30))
        fcw = (uint16_t)((fcw & ~0xc00) | (r.below(4) << 10)); // rounding
    if (r.chance(20))
        fcw = (uint16_t)((fcw & ~0x300) | ("\x00\x02\x03"[r.below(3)] << 8)); // precision
    if (r.chance(5))
        fcw = (uint16_t)(fcw & ~(1u << r.below(6)));
    unsigned top = r.below(8);
    uint16_t fsw = (uint16_t)(top << 11);
    if (r.chance(30))
        fsw |= (uint16_t)(r.next() & fcw & 0x3f); // sticky flags of masked exceptions
    fsw |= (uint16_t)(r.next() & 0x4700);         // C0..C3
    memcpy(fx, &fcw, 2);
    memcpy(fx + 2, &fsw, 2);
    fx[4] = (uint8_t)(r.chance(10) ? 0xff : r.chance(10) ? 0 : (r.next() & r.next()) | r.next());
    for (int i = 0; i < 8; i++)
        f80val(r, fx + 32 + 16 * i);
}

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

std::vector<Tmpl> build_templates()
{
    std::vector<Tmpl> v;
    auto add = [&](const char *fam, uint8_t pfx, uint8_t map, uint8_t opc, int ext, uint8_t imm,
                   uint64_t f) { v.push_back(Tmpl{fam, pfx, map, opc, ext, imm, f, -1}); };
    auto add2 = [&](const char *fam, uint8_t opc, uint8_t op2, uint64_t f) {
        v.push_back(Tmpl{fam, 0, 0, opc, X_NONE, 0, f, op2});
    };

    // ---- alu: ADD OR ADC SBB AND SUB XOR CMP, TEST, NOT/NEG, INC/DEC
    for (int i = 0; i < 8; i++) {
        uint64_t lk = i == 7 ? 0 : (uint64_t)T_LOCK;
        add("alu", 0, 0, 8 * i + 0, X_RAND, 0, T_B | lk);
        add("alu", 0, 0, 8 * i + 1, X_RAND, 0, T_V | lk);
        add("alu", 0, 0, 8 * i + 2, X_RAND, 0, T_B);
        add("alu", 0, 0, 8 * i + 3, X_RAND, 0, T_V);
        add("alu", 0, 0, 8 * i + 4, X_NONE, 1, T_B);
        add("alu", 0, 0, 8 * i + 5, X_NONE, I_Z, T_V);
        add("alu", 0, 0, 0x80, i, 1, T_B | lk);
        add("alu", 0, 0, 0x81, i, I_Z, T_V | lk);
        add("alu", 0, 0, 0x83, i, 1, T_V | lk);
    }
    add("alu", 0, 0, 0x84, X_RAND, 0, T_B);
    add("alu", 0, 0, 0x85, X_RAND, 0, T_V);
    add("alu", 0, 0, 0xa8, X_NONE, 1, T_B);
    add("alu", 0, 0, 0xa9, X_NONE, I_Z, T_V);
    add("alu", 0, 0, 0xf6, 0, 1, T_B);
    add("alu", 0, 0, 0xf7, 0, I_Z, T_V);
    for (int e = 2; e <= 3; e++) {
        add("alu", 0, 0, 0xf6, e, 0, T_B | T_LOCK);
        add("alu", 0, 0, 0xf7, e, 0, T_V | T_LOCK);
    }
    for (int e = 0; e <= 1; e++) {
        add("alu", 0, 0, 0xfe, e, 0, T_B | T_LOCK);
        add("alu", 0, 0, 0xff, e, 0, T_V | T_LOCK);
    }
    add("alu", 0, 0, 0x40, X_PLUSR, 0, T_V | T_NO64);
    add("alu", 0, 0, 0x48, X_PLUSR, 0, T_V | T_NO64);

    // ---- shift: ROL ROR RCL RCR SHL SHR SAR (/6 is an undocumented alias)
    for (int e = 0; e < 8; e++) {
        if (e == 6)
            continue;
        add("shift", 0, 0, 0xc0, e, 1, T_B | T_SMALL);
        add("shift", 0, 0, 0xc1, e, 1, T_V | T_SMALL);
        add("shift", 0, 0, 0xd0, e, 0, T_B);
        add("shift", 0, 0, 0xd1, e, 0, T_V);
        add("shift", 0, 0, 0xd2, e, 0, T_B);
        add("shift", 0, 0, 0xd3, e, 0, T_V);
    }
    add("shift", 0, 1, 0xa4, X_RAND, 1, T_V | T_SMALL);
    add("shift", 0, 1, 0xa5, X_RAND, 0, T_V);
    add("shift", 0, 1, 0xac, X_RAND, 1, T_V | T_SMALL);
    add("shift", 0, 1, 0xad, X_RAND, 0, T_V);

    // ---- muldiv
    for (int e = 4; e < 8; e++) {
        uint64_t dv = e >= 6 ? (uint64_t)T_DIV : 0;
        add("muldiv", 0, 0, 0xf6, e, 0, T_B | dv);
        add("muldiv", 0, 0, 0xf7, e, 0, T_V | dv);
    }
    add("muldiv", 0, 1, 0xaf, X_RAND, 0, T_V);
    add("muldiv", 0, 0, 0x69, X_RAND, I_Z, T_V);
    add("muldiv", 0, 0, 0x6b, X_RAND, 1, T_V);

    // ---- bits: BT*, BSF/BSR, TZCNT/LZCNT/POPCNT, BSWAP, MOVBE, ADCX/ADOX
    add("bits", 0, 1, 0xa3, X_RAND, 0, T_V | T_BITOFF);
    add("bits", 0, 1, 0xab, X_RAND, 0, T_V | T_BITOFF | T_LOCK);
    add("bits", 0, 1, 0xb3, X_RAND, 0, T_V | T_BITOFF | T_LOCK);
    add("bits", 0, 1, 0xbb, X_RAND, 0, T_V | T_BITOFF | T_LOCK);
    add("bits", 0, 1, 0xba, 4, 1, T_V);
    for (int e = 5; e < 8; e++)
        add("bits", 0, 1, 0xba, e, 1, T_V | T_LOCK);
    add("bits", 0, 1, 0xbc, X_RAND, 0, T_V);
    add("bits", 0, 1, 0xbd, X_RAND, 0, T_V);
    add("bits", 0xf3, 1, 0xbc, X_RAND, 0, T_V);
    add("bits", 0xf3, 1, 0xbd, X_RAND, 0, T_V);
    add("bits", 0xf3, 1, 0xb8, X_RAND, 0, T_V);
    add("bits", 0, 1, 0xc8, X_PLUSR, 0, T_Y);
    add("bits", 0, 2, 0xf0, X_RAND, 0, T_V | T_MEM);
    add("bits", 0, 2, 0xf1, X_RAND, 0, T_V | T_MEM);
    add("bits", 0x66, 2, 0xf6, X_RAND, 0, T_Y);
    add("bits", 0xf3, 2, 0xf6, X_RAND, 0, T_Y);

    // ---- bmi: VEX-encoded BMI1/BMI2
    add("bmi", 0, 2, 0xf2, X_RAND, 0, T_Y | T_VEX | T_VVVV);    // andn
    add("bmi", 0, 2, 0xf7, X_RAND, 0, T_Y | T_VEX | T_VVVV);    // bextr
    for (int e = 1; e <= 3; e++)
        add("bmi", 0, 2, 0xf3, e, 0, T_Y | T_VEX | T_VVVV);     // blsr blsmsk blsi
    add("bmi", 0, 2, 0xf5, X_RAND, 0, T_Y | T_VEX | T_VVVV);    // bzhi
    add("bmi", 0xf2, 2, 0xf5, X_RAND, 0, T_Y | T_VEX | T_VVVV); // pdep
    add("bmi", 0xf3, 2, 0xf5, X_RAND, 0, T_Y | T_VEX | T_VVVV); // pext
    add("bmi", 0xf2, 2, 0xf6, X_RAND, 0, T_Y | T_VEX | T_VVVV); // mulx
    add("bmi", 0xf2, 3, 0xf0, X_RAND, 1, T_Y | T_VEX);          // rorx
    add("bmi", 0xf3, 2, 0xf7, X_RAND, 0, T_Y | T_VEX | T_VVVV); // sarx
    add("bmi", 0x66, 2, 0xf7, X_RAND, 0, T_Y | T_VEX | T_VVVV); // shlx
    add("bmi", 0xf2, 2, 0xf7, X_RAND, 0, T_Y | T_VEX | T_VVVV); // shrx

    // ---- mov: MOV, MOVZX/MOVSX/MOVSXD, XCHG, CMOVcc, SETcc, LEA, CBW..CQO,
    // LAHF/SAHF, flag bits
    add("mov", 0, 0, 0x88, X_RAND, 0, T_B);
    add("mov", 0, 0, 0x89, X_RAND, 0, T_V);
    add("mov", 0, 0, 0x8a, X_RAND, 0, T_B);
    add("mov", 0, 0, 0x8b, X_RAND, 0, T_V);
    add("mov", 0, 0, 0xc6, 0, 1, T_B);
    add("mov", 0, 0, 0xc7, 0, I_Z, T_V);
    add("mov", 0, 0, 0xb0, X_PLUSR, 1, T_B);
    add("mov", 0, 0, 0xb8, X_PLUSR, I_V, T_V);
    add("mov", 0, 1, 0xb6, X_RAND, 0, T_V);
    add("mov", 0, 1, 0xb7, X_RAND, 0, T_V);
    add("mov", 0, 1, 0xbe, X_RAND, 0, T_V);
    add("mov", 0, 1, 0xbf, X_RAND, 0, T_V);
    add("mov", 0, 0, 0x63, X_RAND, 0, T_Y | T_NO32);
    add("mov", 0, 0, 0x86, X_RAND, 0, T_B | T_LOCK);
    add("mov", 0, 0, 0x87, X_RAND, 0, T_V | T_LOCK);
    add("mov", 0, 0, 0x90, X_PLUSR, 0, T_V);
    add("mov", 0, 1, 0x40, X_RAND, 0, T_V | T_CC);
    add("mov", 0, 1, 0x90, 0, 0, T_B | T_CC);
    add("mov", 0, 0, 0x8d, X_RAND, 0, T_V | T_MEM);
    add("mov", 0, 0, 0xa0, X_NONE, 0, T_B | T_MOFFS);
    add("mov", 0, 0, 0xa1, X_NONE, 0, T_V | T_MOFFS);
    add("mov", 0, 0, 0xa2, X_NONE, 0, T_B | T_MOFFS);
    add("mov", 0, 0, 0xa3, X_NONE, 0, T_V | T_MOFFS);
    add("mov", 0, 0, 0x98, X_NONE, 0, T_V);
    add("mov", 0, 0, 0x99, X_NONE, 0, T_V);
    for (uint8_t o : {0x9e, 0x9f, 0xf5, 0xf8, 0xf9, 0xfc, 0xfd})
        add("mov", 0, 0, o, X_NONE, 0, 0);

    // ---- stack: PUSH/POP, PUSHF/POPF, ENTER/LEAVE, PUSHA/POPA
    add("stack", 0, 0, 0x50, X_PLUSR, 0, T_D64);
    add("stack", 0, 0, 0x58, X_PLUSR, 0, T_D64);
    add("stack", 0, 0, 0xff, 6, 0, T_D64);
    add("stack", 0, 0, 0x8f, 0, 0, T_D64);
    add("stack", 0, 0, 0x6a, X_NONE, 1, T_D64);
    add("stack", 0, 0, 0x68, X_NONE, I_Z, T_D64);
    add("stack", 0, 0, 0x9c, X_NONE, 0, T_D64);
    add("stack", 0, 0, 0x9d, X_NONE, 0, T_D64 | T_POPF);
    add("stack", 0, 0, 0xc9, X_NONE, 0, T_D64 | T_FRAME);
    add("stack", 0, 0, 0xc8, X_NONE, 0, T_D64 | T_FRAME | T_ENTER);
    add("stack", 0, 0, 0x60, X_NONE, 0, T_V | T_NO64 | T_COMPAT);
    add("stack", 0, 0, 0x61, X_NONE, 0, T_V | T_NO64 | T_COMPAT);

    // ---- string: MOVS STOS LODS CMPS SCAS, with REP/REPE/REPNE
    for (uint8_t o : {0xa4, 0xaa, 0xac})
        add("string", 0, 0, o, X_NONE, 0, T_B | T_STR | T_REPOK);
    for (uint8_t o : {0xa5, 0xab, 0xad})
        add("string", 0, 0, o, X_NONE, 0, T_V | T_STR | T_REPOK);
    for (uint8_t o : {0xa6, 0xae})
        add("string", 0, 0, o, X_NONE, 0, T_B | T_STR | T_REPOK | T_REPNE);
    for (uint8_t o : {0xa7, 0xaf})
        add("string", 0, 0, o, X_NONE, 0, T_V | T_STR | T_REPOK | T_REPNE);

    // ---- atomic: CMPXCHG, XADD, CMPXCHG8B/16B
    add("atomic", 0, 1, 0xb0, X_RAND, 0, T_B | T_LOCK | T_CMPX);
    add("atomic", 0, 1, 0xb1, X_RAND, 0, T_V | T_LOCK | T_CMPX);
    add("atomic", 0, 1, 0xc0, X_RAND, 0, T_B | T_LOCK);
    add("atomic", 0, 1, 0xc1, X_RAND, 0, T_V | T_LOCK);
    add("atomic", 0, 1, 0xc7, 1, 0, T_Y | T_MEM | T_LOCK | T_CMPX | T_C8B | T_A16);

    // ---- sse_int: SSE2 integer, SSSE3, SSE4.1/4.2 integer
    const uint64_t XX = T_RX | T_MX | T_A16;
    for (int o = 0x60; o <= 0x6d; o++)
        add("sse_int", 0x66, 1, o, X_RAND, 0, XX);
    for (int o : {0x74, 0x75, 0x76, 0x6f, 0xd6})
        add("sse_int", 0x66, 1, o, X_RAND, 0, XX);
    for (int o = 0xd1; o <= 0xfe; o++)
        if (o != 0xd6 && o != 0xd7 && o != 0xe6 && o != 0xe7 && o != 0xf0 && o != 0xf7 &&
            o != 0xff)
            add("sse_int", 0x66, 1, o, X_RAND, 0, XX);
    add("sse_int", 0x66, 1, 0x7f, X_RAND, 0, XX);
    add("sse_int", 0xf3, 1, 0x6f, X_RAND, 0, T_RX | T_MX);
    add("sse_int", 0xf3, 1, 0x7f, X_RAND, 0, T_RX | T_MX);
    add("sse_int", 0xf3, 1, 0x7e, X_RAND, 0, T_RX | T_MX);
    for (uint8_t p : {0x66, 0xf2, 0xf3})
        add("sse_int", p, 1, 0x70, X_RAND, 1, XX);
    for (int e : {2, 4, 6})
        for (int o : {0x71, 0x72})
            add("sse_int", 0x66, 1, o, e, 1, T_MX | T_REG | T_SMALL);
    for (int e : {2, 3, 6, 7})
        add("sse_int", 0x66, 1, 0x73, e, 1, T_MX | T_REG | T_SMALL);
    add("sse_int", 0x66, 1, 0x6e, X_RAND, 0, T_RX | T_Y);
    add("sse_int", 0x66, 1, 0x7e, X_RAND, 0, T_RX | T_Y);
    add("sse_int", 0x66, 1, 0xd7, X_RAND, 0, T_MX | T_REG);
    add("sse_int", 0x66, 1, 0xc4, X_RAND, 1, T_RX);
    add("sse_int", 0x66, 1, 0xc5, X_RAND, 1, T_MX | T_REG);
    for (int o = 0x00; o <= 0x0b; o++)
        add("sse_int", 0x66, 2, o, X_RAND, 0, XX);
    for (int o : {0x1c, 0x1d, 0x1e, 0x10, 0x17, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x28, 0x29,
                  0x2b, 0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x37, 0x38, 0x39, 0x3a, 0x3b, 0x3c,
                  0x3d, 0x3e, 0x3f, 0x40, 0x41})
        add("sse_int", 0x66, 2, o, X_RAND, 0, XX);
    for (int o : {0x0e, 0x0f, 0x42, 0x60, 0x61, 0x62, 0x63})
        add("sse_int", 0x66, 3, o, X_RAND, 1, XX);
    add("sse_int", 0x66, 3, 0x14, X_RAND, 1, T_RX);
    add("sse_int", 0x66, 3, 0x15, X_RAND, 1, T_RX);
    add("sse_int", 0x66, 3, 0x16, X_RAND, 1, T_RX | T_Y);
    add("sse_int", 0x66, 3, 0x20, X_RAND, 1, T_RX);
    add("sse_int", 0x66, 3, 0x22, X_RAND, 1, T_RX | T_Y);
    add("sse_int", 0x66, 1, 0xe7, X_RAND, 0, T_RX | T_MEM | T_A16); // movntdq
    add("sse_int", 0x66, 2, 0x2a, X_RAND, 0, T_RX | T_MEM | T_A16); // movntdqa
    add("sse_int", 0xf2, 1, 0xf0, X_RAND, 0, T_RX | T_MEM);         // lddqu
    add("sse_int", 0x66, 1, 0xf7, X_RAND, 0, T_RX | T_MX | T_REG | T_RDI); // maskmovdqu
    add("sse_int", 0xf2, 2, 0xf0, X_RAND, 0, T_Y); // crc32 r, r/m8
    add("sse_int", 0xf2, 2, 0xf1, X_RAND, 0, T_Y); // crc32 r, r/m32/64

    // ---- sse_fp: SSE/SSE2/SSE3/SSE4.1 floating point
    for (int o : {0x58, 0x59, 0x5c, 0x5d, 0x5e, 0x5f, 0x51, 0x10, 0x11, 0xc2, 0x5a})
        for (uint8_t p : {0x00, 0x66, 0xf3, 0xf2})
            add("sse_fp", p, 1, o, X_RAND, o == 0xc2 ? 1 : 0, XX | (o == 0xc2 ? (uint64_t)T_CMPIMM : 0));
    for (int o : {0x54, 0x55, 0x56, 0x57, 0x28, 0x29, 0x14, 0x15, 0x2e, 0x2f, 0x12, 0x13, 0x16,
                  0x17})
        for (uint8_t p : {0x00, 0x66})
            add("sse_fp", p, 1, o, X_RAND, 0, XX);
    for (uint8_t p : {0x00, 0x66})
        add("sse_fp", p, 1, 0xc6, X_RAND, 1, XX);
    for (uint8_t p : {0x00, 0x66, 0xf3})
        add("sse_fp", p, 1, 0x5b, X_RAND, 0, XX);
    for (uint8_t p : {0x66, 0xf3, 0xf2})
        add("sse_fp", p, 1, 0xe6, X_RAND, 0, XX);
    for (uint8_t p : {0xf3, 0xf2}) {
        add("sse_fp", p, 1, 0x2a, X_RAND, 0, T_RX | T_Y);
        add("sse_fp", p, 1, 0x2c, X_RAND, 0, T_MX | T_Y);
        add("sse_fp", p, 1, 0x2d, X_RAND, 0, T_MX | T_Y);
    }
    for (uint8_t p : {0x00, 0x66})
        add("sse_fp", p, 1, 0x50, X_RAND, 0, T_MX | T_REG);
    add("sse_fp", 0xf2, 1, 0x7c, X_RAND, 0, XX);
    add("sse_fp", 0x66, 1, 0x7c, X_RAND, 0, XX);
    add("sse_fp", 0xf2, 1, 0xd0, X_RAND, 0, XX);
    add("sse_fp", 0x66, 1, 0xd0, X_RAND, 0, XX);
    add("sse_fp", 0xf3, 1, 0x16, X_RAND, 0, XX);
    add("sse_fp", 0xf3, 1, 0x12, X_RAND, 0, XX);
    add("sse_fp", 0xf2, 1, 0x12, X_RAND, 0, XX);
    for (int o : {0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x40, 0x41, 0x21})
        add("sse_fp", 0x66, 3, o, X_RAND, 1, XX);
    add("sse_fp", 0x66, 3, 0x17, X_RAND, 1, T_RX); // extractps
    add("sse_fp", 0x66, 2, 0x14, X_RAND, 0, XX);  // blendvps
    add("sse_fp", 0x66, 2, 0x15, X_RAND, 0, XX);  // blendvpd
    add("sse_fp", 0, 1, 0xae, 3, 0, T_MEM);        // stmxcsr
    add("sse_fp", 0, 1, 0xae, 2, 0, T_MEM | T_LDMX); // ldmxcsr
    for (uint8_t p : {0x00, 0x66})
        add("sse_fp", p, 1, 0x2b, X_RAND, 0, T_RX | T_MEM | T_A16); // movntps/pd

    // ---- misc: hint NOPs, fences, XLAT, MOVNTI, prefetch
    add("misc", 0, 1, 0x1f, 0, 0, T_V);             // nop r/m
    add("misc", 0xf3, 0, 0x90, X_NONE, 0, 0);       // pause
    for (int e = 5; e <= 7; e++)
        add("misc", 0, 1, 0xae, e, 0, T_REG);       // lfence mfence sfence
    add("misc", 0, 0, 0xd7, X_NONE, 0, T_XLAT);     // xlat
    add("misc", 0, 1, 0xc3, X_RAND, 0, T_Y | T_MEM); // movnti
    for (int e = 0; e < 4; e++)
        add("misc", 0, 1, 0x18, e, 0, T_MEM);       // prefetch*

    // ---- x87 (the transcendentals included: AMD's results are the reference)
    const uint64_t XM = T_X87 | T_MEM, XR = T_X87 | T_REG;
    for (int e = 0; e < 8; e++)
        for (uint8_t o : {0xd8, 0xda, 0xdc, 0xde, 0xdf})
            add("x87", 0, 0, o, e, 0, XM);
    for (int e : {0, 2, 3, 5, 7})
        add("x87", 0, 0, 0xd9, e, 0, XM);
    for (int e : {0, 1, 2, 3, 7})
        add("x87", 0, 0, 0xdd, e, 0, XM);
    for (int e : {0, 1, 2, 3, 5, 7})
        add("x87", 0, 0, 0xdb, e, 0, XM);
    for (int e = 0; e < 8; e++) {
        add("x87", 0, 0, 0xd8, e, 0, XR);
        add("x87", 0, 0, 0xdc, e, 0, XR);
    }
    for (int e : {0, 1, 4, 5, 6, 7})
        add("x87", 0, 0, 0xde, e, 0, XR);
    for (int e = 0; e < 4; e++) {
        add("x87", 0, 0, 0xda, e, 0, XR); // fcmovb fcmove fcmovbe fcmovu
        add("x87", 0, 0, 0xdb, e, 0, XR); // fcmovnb ...
    }
    for (int e : {0, 1})
        add("x87", 0, 0, 0xd9, e, 0, XR); // fld st(i), fxch
    for (int e : {5, 6}) {
        add("x87", 0, 0, 0xdb, e, 0, XR); // fucomi fcomi
        add("x87", 0, 0, 0xdf, e, 0, XR); // fucomip fcomip
    }
    for (int e : {0, 2, 3, 4, 5})
        add("x87", 0, 0, 0xdd, e, 0, XR); // ffree fst fstp fucom fucomp
    for (int b = 0xe0; b <= 0xff; b++)
        if (b != 0xe2 && b != 0xe3 && b != 0xe6 && b != 0xe7 && b != 0xef)
            add2("x87", 0xd9, (uint8_t)b, T_X87); // fchs .. fcos
    add2("x87", 0xd9, 0xd0, T_X87); // fnop
    add2("x87", 0xde, 0xd9, T_X87); // fcompp
    add2("x87", 0xda, 0xe9, T_X87); // fucompp
    add2("x87", 0xdb, 0xe2, T_X87); // fnclex
    add2("x87", 0xdb, 0xe3, T_X87); // fninit
    add2("x87", 0xdf, 0xe0, T_X87); // fnstsw ax
    add("x87", 0, 0, 0x9b, X_NONE, 0, T_X87); // fwait

    // ---- bcd: 32-bit mode only; needs a host that runs compatibility mode
    for (uint8_t o : {0x27, 0x2f, 0x37, 0x3f})
        add("bcd", 0, 0, o, X_NONE, 0, T_NO64 | T_COMPAT);
    add("bcd", 0, 0, 0xd4, X_NONE, 1, T_NO64 | T_COMPAT);
    add("bcd", 0, 0, 0xd5, X_NONE, 1, T_NO64 | T_COMPAT);

    // ---- legacy32: BOUND, SALC, ARPL (32-bit mode only, like bcd)
    add("legacy32", 0, 0, 0x62, X_RAND, 0, T_V | T_MEM | T_BOUND | T_NO64 | T_COMPAT);
    add("legacy32", 0, 0, 0xd6, X_NONE, 0, T_NO64 | T_COMPAT);
    add("legacy32", 0, 0, 0x63, X_RAND, 0, T_V | T_NO64 | T_COMPAT);
    return v;
}

const std::vector<Tmpl> &templates()
{
    static const std::vector<Tmpl> t = build_templates();
    return t;
}

// ---------------------------------------------------------------- generation

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
// compatibility mode, run natively as its 64-bit-mode equivalent (the
// end of this function).
bool generate(const Tmpl &t, int mode, bool emu32, Rng &r, Case &c)
{
    const bool m64 = mode == ES_MODE_64;
    const unsigned nreg = m64 ? 16 : 8;
    memset(&c, 0, sizeof c);

    // ---- initial state
    for (int i = 0; i < 16; i++)
        c.st.gpr[i] = m64 ? rval(r) : (uint32_t)rval(r);
    c.st.gpr[ES_RSP] = DIFF_STACK + 0x1000 + (r.below(0x40) * 8) + (r.chance(10) ? r.below(8) : 0);
    c.st.rflags = 0x2 | (r.next() & kFlagBits) | ((t.f & T_STR) && r.chance(40) ? ES_DF : 0);
    c.st.mxcsr = 0x1f80;
    if (r.chance(30))
        c.st.mxcsr |= r.below(4) << 13; // rounding control
    if (r.chance(10))
        c.st.mxcsr |= 0x8040;           // FTZ, DAZ
    for (int i = 0; i < 16; i++)
        xval(r, c.st.xmm[i]);
    c.st.fx[0] = 0x7f, c.st.fx[1] = 0x03; // FNINIT state: FCW 0x37f, all empty

    for (size_t i = 0; i < DIFF_DATA_SIZE; i += 8) {
        uint64_t v = r.next();
        memcpy(c.data + i, &v, 8);
        v = r.next();
        memcpy(c.stack + i, &v, 8);
    }

    // ---- operand size
    unsigned osz = 4;
    if (t.f & T_B)
        osz = 1;
    else if (t.f & T_V)
        osz = m64 ? 2u << r.below(3) : (r.chance(30) ? 2 : 4);
    else if (t.f & T_Y)
        osz = m64 && r.chance(50) ? 8 : 4;
    else if (t.f & T_D64)
        osz = emu32 || r.chance(20) ? 2 : (m64 ? 8 : 4);

    // ---- register fields
    const bool has_modrm = t.ext != X_NONE && t.ext != X_PLUSR;
    const bool vex = (t.f & T_VEX) != 0;
    bool mem = false;
    if (has_modrm)
        mem = (t.f & T_MEM) ? true : (t.f & T_REG) ? false : r.chance(50);
    unsigned reg = t.ext >= 0 ? (unsigned)t.ext : r.below(nreg);
    unsigned rm = r.below(nreg);
    unsigned vvvv = (t.f & T_VVVV) ? r.below(nreg) : 0;
    bool plain_rex = m64 && !vex && r.chance(30);


    // ---- memory operand
    uint8_t mb[8];
    size_t mbn = 0;
    unsigned base = 0, index = 4, scale = 0;
    bool use_index = false;
    uint64_t target = 0;
    // 64-bit mode: sometimes a 67 prefix (32-bit addressing: the upper
    // halves of base and index are ignored and the sum wraps at 4 GiB)
    const bool amem32 = mem && m64 && r.chance(10);
    if (mem) {
        std::vector<unsigned> ex = {ES_RSP};
        if (t.ext == X_RAND && !(t.f & T_RX)) {
            ex.push_back(reg);
            if ((t.f & T_B) && reg >= 4 && reg < 8)
                ex.push_back(reg - 4);
        }
        if (t.f & T_VVVV)
            ex.push_back(vvvv);
        if (t.f & (T_DIV | T_CMPX))
            for (unsigned x : {0u, 1u, 2u, 3u})
                ex.push_back(x);
        auto pick = [&]() {
            for (;;) {
                unsigned x = r.below(nreg);
                if (std::find(ex.begin(), ex.end(), x) == ex.end())
                    return x;
            }
        };
        base = pick();
        ex.push_back(base);
        use_index = r.chance(30);
        if (use_index) {
            index = pick();
            scale = r.below(4);
        }
        target = DIFF_DATA + 0x400 + r.below(0x1400);
        if (t.f & T_A16)
            target = (target & ~15ull) + (r.chance(4) ? 8 : 0); // rarely misaligned: #GP
        else if (r.chance(70) && osz > 1)
            target &= ~(uint64_t)(osz - 1);
        int64_t disp = 0;
        unsigned mod;
        unsigned dk = r.below(3);
        if (dk == 0 && (base & 7) == 5)
            dk = 1;
        if (dk == 0)
            mod = 0;
        else if (dk == 1)
            mod = 1, disp = (int8_t)r.next();
        else
            mod = 2, disp = (int64_t)r.below(0x800) - 0x400;
        if (mod == 2 && (!m64 || amem32) && r.chance(30))
            disp = (int32_t)r.next(); // the address wraps around 4 GiB
        if (t.f & T_A16)
            disp &= ~15ll;
        uint64_t ival = use_index ? r.below(64) : 0;
        uint64_t bval = target - disp - (ival << scale);
        if (!m64 || amem32)
            bval &= 0xffffffffu;
        if (amem32) {
            bval |= r.next() << 32;
            ival |= r.chance(50) ? r.next() << 32 : 0;
        }
        if (use_index)
            c.st.gpr[index] = ival;
        c.st.gpr[base] = bval;
        bool sib = use_index || (base & 7) == 4;
        mb[mbn++] = (uint8_t)((mod << 6) | ((reg & 7) << 3) | (sib ? 4 : (base & 7)));
        if (sib)
            mb[mbn++] = (uint8_t)((scale << 6) | ((use_index ? index : 4) & 7) << 3 | (base & 7));
        if (mod == 1)
            mb[mbn++] = (uint8_t)disp;
        else if (mod == 2)
            for (int i = 0; i < 4; i++)
                mb[mbn++] = (uint8_t)((uint64_t)disp >> (8 * i));
    } else if (has_modrm) {
        mb[mbn++] = (uint8_t)(0xc0 | ((reg & 7) << 3) | (rm & 7));
    }

    // ---- prefixes and opcode
    uint8_t *p = c.code;
    bool lock = (t.f & T_LOCK) && mem && r.chance(30);
    if (lock)
        *p++ = 0xf0;
    if (t.f & T_REPOK) {
        unsigned k = r.below(3);
        if (k == 1)
            *p++ = 0xf3;
        else if (k == 2 && (t.f & T_REPNE))
            *p++ = 0xf2;
    }
    if ((mem || (t.f & T_IMPLMEM)) && r.chance(5))
        *p++ = "\x26\x36\x3e"[r.below(3)]; // ES/SS/DS: flat, no effect
    const bool a32 = ((t.f & (T_STR | T_MOFFS)) && m64 && r.chance(15)) || amem32;
    if (a32)
        *p++ = 0x67;
    if (osz == 2 && !vex)
        *p++ = 0x66;
    if (!vex && t.pfx)
        *p++ = t.pfx;
    unsigned opc = t.opc;
    if (t.f & T_CC)
        opc += r.below(16);
    if (t.ext == X_PLUSR) {
        rm = r.below(nreg);
        opc += rm & 7;
    }
    bool W = osz == 8 && !(t.f & T_D64);
    unsigned R = (reg >> 3) & 1, X = use_index ? (index >> 3) & 1 : 0;
    unsigned B = mem ? (base >> 3) & 1 : (rm >> 3) & 1;
    if (t.ext >= 0 || !has_modrm)
        R = 0;
    if (!has_modrm && t.ext != X_PLUSR)
        B = 0;
    const bool rex = m64 && !vex && (W || R || X || B || plain_rex);
    if (vex) {
        unsigned pp = t.pfx == 0x66 ? 1 : t.pfx == 0xf3 ? 2 : t.pfx == 0xf2 ? 3 : 0;
        *p++ = 0xc4;
        *p++ = (uint8_t)((!R << 7) | (!X << 6) | (!B << 5) | t.map);
        *p++ = (uint8_t)((W << 7) | ((~vvvv & 15) << 3) | pp);
    } else {
        if (rex)
            *p++ = (uint8_t)(0x40 | (W << 3) | (R << 2) | (X << 1) | B);
        if (t.map >= 1)
            *p++ = 0x0f;
        if (t.map == 2)
            *p++ = 0x38;
        if (t.map == 3)
            *p++ = 0x3a;
    }
    *p++ = (uint8_t)opc;
    if (t.op2 >= 0)
        *p++ = (uint8_t)t.op2;
    memcpy(p, mb, mbn);
    p += mbn;

    // ---- immediates
    unsigned ib = t.imm == I_Z ? (osz == 2 ? 2 : 4) : t.imm == I_V ? osz : t.imm;
    if (t.f & T_MOFFS)
        ib = m64 && !a32 ? 8 : 4;
    if (t.f & T_ENTER)
        ib = 3;
    uint64_t iv = r.next();
    if ((t.f & T_SMALL) && r.chance(50))
        iv = r.below(40);
    if (t.f & T_CMPIMM)
        iv = r.below(8);
    if (t.f & T_MOFFS)
        iv = DIFF_DATA + 0x400 + r.below(0x1400);
    if (t.f & T_ENTER)
        iv = (r.below(0x100) & ~7u) | ((uint64_t)r.below(3) << 16);
    for (unsigned i = 0; i < ib; i++)
        *p++ = (uint8_t)(iv >> (8 * i));
    c.len = (size_t)(p - c.code);

    // ---- operand fix-ups that make the interesting paths likely
    uint64_t *g = c.st.gpr;
    if ((t.f & T_BITOFF) && mem) // BT* m, r: +-128 bytes around the operand
        g[reg] = (uint64_t)((int64_t)r.below(2048) - 1024);
    if ((t.f & T_BOUND) && r.chance(70)) {
        // lower in index-3..index+1, upper in index-1..index+3 (as osz-wide
        // values, so they wrap around the signed range's ends): inside,
        // on either boundary, or one past it
        uint64_t idx = g[reg], lo = idx + r.below(5) - 3, hi = idx + r.below(5) - 1;
        memcpy(c.data + (target - DIFF_DATA), &lo, osz);
        memcpy(c.data + (target - DIFF_DATA) + osz, &hi, osz);
    }
    if ((t.f & T_DIV) && r.chance(70)) {
        bool idiv = t.ext == 7;
        if (osz == 1) {
            uint64_t ah = r.below(4);
            if (idiv && r.chance(50))
                ah = (g[0] & 0x80) ? 0xff : 0;
            g[0] = (g[0] & ~0xff00ull) | (ah << 8);
        } else {
            uint64_t hi = r.below(4);
            if (idiv && r.chance(50))
                hi = (g[0] >> (osz * 8 - 1)) & 1 ? ~0ull : 0;
            g[2] = hi;
        }
    }
    if (t.f & T_STR) {
        g[ES_RSI] = DIFF_DATA + 0x600 + r.below(0x600);
        g[ES_RDI] = DIFF_DATA + 0x1000 + r.below(0x600);
        g[ES_RCX] = r.below(20);
        if (a32 && r.chance(50)) // only ECX counts
            g[ES_RCX] |= r.next() << 32;
        if (!m64)
            g[ES_RCX] &= 0xffffffffu;
        if (r.chance(50)) // equal strings so REPE CMPS runs on
            memcpy(c.data + (g[ES_RDI] - DIFF_DATA) - 0x100,
                   c.data + (g[ES_RSI] - DIFF_DATA) - 0x100, 0x200);
        if (r.chance(30)) // SCAS finds (or runs through) the accumulator
            for (int i = -0x100; i < 0x100; i += osz)
                memcpy(c.data + (g[ES_RDI] - DIFF_DATA) + i, &g[ES_RAX], osz);
        if (r.chance(20)) // a mismatch somewhere
            c.data[g[ES_RDI] - DIFF_DATA + r.below(64)] ^= 1;
    }
    if (t.f & T_FRAME)
        g[ES_RBP] = g[ES_RSP] + r.below(0x80) * 8;
    if (t.f & T_POPF) {
        uint64_t fl = (r.next() & (kFlagBits | ES_DF)) | 2;
        memcpy(c.stack + (g[ES_RSP] - DIFF_STACK), &fl, 8);
    }
    if ((t.f & T_CMPX) && r.chance(50)) {
        if (t.f & T_C8B) {
            size_t off = target - DIFF_DATA;
            if (osz == 8) {
                memcpy(&g[0], c.data + off, 8);
                memcpy(&g[2], c.data + off + 8, 8);
            } else {
                uint32_t lo, hi;
                memcpy(&lo, c.data + off, 4);
                memcpy(&hi, c.data + off + 4, 4);
                g[0] = lo;
                g[2] = hi;
            }
        } else if (mem) {
            memcpy(c.data + (target - DIFF_DATA), &g[0], osz);
        } else {
            // skip AH..BH sources (byte registers 4..7 without REX)
            if (!(osz == 1 && rm >= 4 && rm < 8 && !rex)) {
                uint64_t mk = osz >= 8 ? ~0ull : (1ull << (8 * osz)) - 1;
                g[0] = (g[0] & ~mk) | (g[rm] & mk);
            }
        }
    }
    if (mem && (t.f & (T_RX | T_MX)) && r.chance(50))
        xval(r, c.data + (target - DIFF_DATA));
    if (t.f & T_XLAT)
        g[ES_RBX] = DIFF_DATA + 0x800 + r.below(0x800);
    if (t.f & T_RDI)
        g[ES_RDI] = DIFF_DATA + 0x800 + r.below(0x800);
    if (t.f & T_LDMX) {
        uint32_t mx = 0x1f80 | (r.below(4) << 13) | (r.chance(20) ? 0x8040 : 0) |
                      (uint32_t)(r.next() & 0x3f);
        if (r.chance(5))
            mx &= ~(1u << (7 + r.below(6))); // unmasked: only the next SSE op would trap
        if (r.chance(5))
            mx |= 1u << (16 + r.below(16)); // reserved: #GP
        memcpy(c.data + (target - DIFF_DATA), &mx, 4);
    }
    if (t.f & T_X87) {
        x87_state(r, c.st.fx);
        if (mem && r.chance(60)) { // a float of some format rather than noise
            uint8_t *q = c.data + (target - DIFF_DATA);
            switch (r.below(4)) {
            case 0: f80val(r, q); break;
            case 1: { long double x; f80val(r, (uint8_t *)&x); double d = (double)x; memcpy(q, &d, 8); break; }
            case 2: { long double x; f80val(r, (uint8_t *)&x); float f = (float)x; memcpy(q, &f, 4); break; }
            default: { uint64_t v = rval(r); memcpy(q, &v, 8); break; }
            }
        }
    }
    if ((t.f & (T_RX | T_MX)) && r.chance(5)) // an unmasked SIMD exception: #XM
        c.st.mxcsr &= ~(1u << (7 + r.below(6)));
    if (!m64)
        for (int i = 0; i < 16; i++)
            g[i] &= 0xffffffffu;

    if (es_decode(c.code, c.len, mode, EST_CODE, &c.d) != ES_DECODE_OK || c.d.len != c.len)
        return false;

    memcpy(c.native, c.code, c.len);
    c.nlen = c.len;
    if (emu32) {
        // The same operation in 64-bit mode: 67 gives 32-bit addressing
        // (ModRM/SIB forms are those of 32-bit mode as long as no
        // disp32-only form is used, and string instructions then use
        // ECX/ESI/EDI); INC/DEC r (40+r/48+r are REX in 64-bit mode) become
        // FF /0 and FF /1.  Registers hold zero-extended 32-bit values and
        // only their low halves are compared, so 32-bit results are those
        // of 32-bit mode.  16-bit stack operations behave alike because
        // RSP < 4 GiB; 32-bit ones cannot be expressed and are not drawn.
        uint8_t *q = c.native;
        size_t i = 0;
        if (mem || (t.f & T_IMPLMEM))
            *q++ = 0x67;
        while (i < c.len && (c.code[i] == 0x66 || c.code[i] == 0xf0 || c.code[i] == 0xf2 ||
                             c.code[i] == 0xf3 || c.code[i] == 0x26 || c.code[i] == 0x36 ||
                             c.code[i] == 0x3e))
            *q++ = c.code[i++];
        if (t.ext == X_PLUSR && (t.f & T_NO64)) {
            *q++ = 0xff;
            *q++ = (uint8_t)((c.code[i] & 0x08 ? 0xc8 : 0xc0) | (c.code[i] & 7));
            i++;
        }
        memcpy(q, c.code + i, c.len - i);
        q += c.len - i;
        c.nlen = (size_t)(q - c.native);
        es_insn nd;
        if (c.nlen > 15 || es_decode(c.native, c.nlen, ES_MODE_64, EST_CODE, &nd) != ES_DECODE_OK ||
            nd.len != c.nlen || nd.op != c.d.op)
            return false;
    }
    return true;
}

// ---------------------------------------------------------------- comparison

const char *const kGprName[16] = {"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
                                  "r8",  "r9",  "r10", "r11", "r12", "r13", "r14", "r15"};

// Exception vectors (SDM Vol. 3A, 6.3.1), spelled out here so the harness
// does not depend on machine.h's names for them.
enum { VEC_DE = 0, VEC_DB = 1, VEC_BP = 3, VEC_UD = 6, VEC_SS = 12, VEC_MF = 16, VEC_AC = 17,
       VEC_XM = 19 };

// Linux's signal for an exception vector (what the native run observes).
int vector_signal(int v)
{
    switch (v) {
    case VEC_DE: case VEC_MF: case VEC_XM: return SIGFPE;
    case VEC_UD: return SIGILL;
    case VEC_BP: case VEC_DB: return SIGTRAP;
    case VEC_AC: case VEC_SS: return SIGBUS;
    default: return SIGSEGV;
    }
}

struct Stat {
    unsigned pass = 0, fail = 0, unimpl = 0, faults = 0, undef = 0, shown = 0;
};

struct Outcome {
    bool ok;
    bool unimpl;
    bool undef_diff; // matched, but an undefined flag differs from the host
    std::string why;
};

std::string hex(uint64_t v)
{
    char b[24];
    snprintf(b, sizeof b, "0x%" PRIx64, v);
    return b;
}

// The initial values of the instruction's register operands, for the report.
std::string inputs(const Case &c)
{
    std::string out = "  inputs:";
    char b[96];
    for (int i = 0; i < c.d.nops; i++) {
        const es_operand &op = c.d.o[i];
        if (op.kind == ES_OPK_GPR || op.kind == ES_OPK_HI8) {
            snprintf(b, sizeof b, " %s=%s", kGprName[op.reg], hex(c.st.gpr[op.reg]).c_str());
        } else if (op.kind == ES_OPK_XMM) {
            uint64_t lo, hi;
            memcpy(&lo, c.st.xmm[op.reg], 8);
            memcpy(&hi, c.st.xmm[op.reg] + 8, 8);
            snprintf(b, sizeof b, " xmm%d=%016" PRIx64 "_%016" PRIx64, op.reg, hi, lo);
        } else if (op.kind == ES_OPK_MEM) {
            uint64_t a = (uint64_t)op.disp, lo = 0, hi = 0;
            if (op.base != ES_REG_NONE)
                a += c.st.gpr[op.base];
            if (op.index != ES_REG_NONE)
                a += c.st.gpr[op.index] * op.scale;
            if (c.d.asize == 4)
                a = (uint32_t)a;
            if (a >= DIFF_DATA && a + 16 <= DIFF_DATA + DIFF_DATA_SIZE) {
                memcpy(&lo, c.data + (a - DIFF_DATA), 8);
                memcpy(&hi, c.data + (a - DIFF_DATA) + 8, 8);
            }
            snprintf(b, sizeof b, " [%#" PRIx64 "]=%016" PRIx64 "_%016" PRIx64, a, hi, lo);
        } else {
            continue;
        }
        out += b;
    }
    if (c.d.opmap == 0 && c.d.opcode >= 0xd8 && c.d.opcode <= 0xdf) { // x87
        uint16_t w[2];
        memcpy(w, c.st.fx, 4);
        snprintf(b, sizeof b, " fcw=%#06x fsw=%#06x ftw=%#04x", w[0], w[1], c.st.fx[4]);
        out += b;
        for (int i = 0; i < 2; i++) {
            uint64_t mt;
            uint16_t se;
            memcpy(&mt, c.st.fx + 32 + 16 * i, 8);
            memcpy(&se, c.st.fx + 40 + 16 * i, 2);
            unsigned phys = (((unsigned)w[1] >> 11) + i) & 7;
            snprintf(b, sizeof b, " st%d=%04x_%016" PRIx64 "%s", i, se, mt,
                     (c.st.fx[4] >> phys) & 1 ? "" : "(empty)");
            out += b;
        }
    }
    snprintf(b, sizeof b, " rflags=%#" PRIx64 " mxcsr=%#x\n", c.st.rflags, c.st.mxcsr);
    return out + b;
}

Outcome compare(const Case &c, int mode, const diff_result &n, const diff_result &s)
{
    Outcome o{true, false, false, ""};
    char line[256];
    if (s.unimpl) {
        o.ok = false;
        o.unimpl = true;
        o.why = "  simulator: not implemented (#UD)\n";
        return o;
    }
    if (n.fault_elsewhere) {
        o.ok = false;
        o.why = "  harness: the native run faulted outside the instruction\n";
        return o;
    }
    if (n.fault || s.fault) {
        int ssig = s.fault > 0 && s.fault <= 32 ? vector_signal(s.fault - 1) : 0;
        if (n.fault && ssig == n.fault)
            goto state; // same fault: the state at the fault must match too
        o.ok = false;
        snprintf(line, sizeof line, "  fault: native %s, simulator %s\n",
                 n.fault ? strsignal(n.fault) : "none",
                 s.fault == 0 ? "none"
                 : s.fault <= 32 ? es_vector_name(s.fault - 1)
                                 : "harness error");
        o.why += line;
        o.why += inputs(c);
        return o;
    }
state:
    const bool m64 = mode == ES_MODE_64;
    for (int i = 0; i < (m64 ? 16 : 8); i++)
        if (n.st.gpr[i] != s.st.gpr[i]) {
            snprintf(line, sizeof line, "  %-6s in %-18s native %-18s sim %s\n", kGprName[i],
                     hex(c.st.gpr[i]).c_str(), hex(n.st.gpr[i]).c_str(),
                     hex(s.st.gpr[i]).c_str());
            o.why += line;
        }
    uint64_t mask = kCmpFlags & ~(uint64_t)c.d.fl_undef;
    uint64_t fd = (n.st.rflags ^ s.st.rflags) & kCmpFlags;
    if (fd & mask) {
        snprintf(line, sizeof line,
                 "  rflags in %-18s native %-18s sim %s (compared bits %s, undefined %s)\n",
                 hex(c.st.rflags).c_str(), hex(n.st.rflags & kCmpFlags).c_str(),
                 hex(s.st.rflags & kCmpFlags).c_str(), hex(mask).c_str(),
                 hex(c.d.fl_undef).c_str());
        o.why += line;
    } else if (fd) {
        o.undef_diff = true;
    }
    if (n.st.mxcsr != s.st.mxcsr) {
        snprintf(line, sizeof line, "  mxcsr  in %#x native %#x sim %#x\n", c.st.mxcsr,
                 n.st.mxcsr, s.st.mxcsr);
        o.why += line;
    }
    for (int i = 0; i < (m64 ? 16 : 8); i++)
        if (memcmp(n.st.xmm[i], s.st.xmm[i], 16)) {
            auto x = [](const uint8_t *v) {
                uint64_t lo, hi;
                memcpy(&lo, v, 8);
                memcpy(&hi, v + 8, 8);
                char b[40];
                snprintf(b, sizeof b, "%016" PRIx64 "_%016" PRIx64, hi, lo);
                return std::string(b);
            };
            snprintf(line, sizeof line, "  xmm%-3d in %s\n         native %s\n         sim    %s\n",
                     i, x(c.st.xmm[i]).c_str(), x(n.st.xmm[i]).c_str(), x(s.st.xmm[i]).c_str());
            o.why += line;
        }
    {
        uint16_t nw[2], sw[2], iw[2];
        memcpy(nw, n.st.fx, 4);
        memcpy(sw, s.st.fx, 4);
        memcpy(iw, c.st.fx, 4);
        if (nw[0] != sw[0]) {
            snprintf(line, sizeof line, "  fcw    in %#06x native %#06x sim %#06x\n", iw[0], nw[0], sw[0]);
            o.why += line;
        }
        if (nw[1] != sw[1]) {
            snprintf(line, sizeof line, "  fsw    in %#06x native %#06x sim %#06x%s\n", iw[1], nw[1],
                     sw[1], ((nw[1] ^ sw[1]) & ~0x4700) ? "" : " (condition codes only)");
            o.why += line;
        }
        if (n.st.fx[4] != s.st.fx[4]) {
            snprintf(line, sizeof line, "  ftw    in %#04x native %#04x sim %#04x (abridged, physical)\n",
                     c.st.fx[4], n.st.fx[4], s.st.fx[4]);
            o.why += line;
        }
        unsigned top = (nw[1] >> 11) & 7;
        for (int i = 0; i < 8; i++) {
            const uint8_t *a = n.st.fx + 32 + 16 * i, *b = s.st.fx + 32 + 16 * i;
            if (((n.st.fx[4] >> ((top + i) & 7)) & 1) && memcmp(a, b, 10)) {
                auto f = [](const uint8_t *v) {
                    uint64_t mt;
                    uint16_t se;
                    memcpy(&mt, v, 8);
                    memcpy(&se, v + 8, 2);
                    char q[32];
                    snprintf(q, sizeof q, "%04x_%016" PRIx64, se, mt);
                    return std::string(q);
                };
                snprintf(line, sizeof line, "  st(%d)  native %s sim %s\n", i, f(a).c_str(), f(b).c_str());
                o.why += line;
            }
        }
    }
    auto memdiff = [&](const uint8_t *a, const uint8_t *b, const uint8_t *init, size_t sz,
                       uint64_t at) {
        int shown = 0;
        for (size_t i = 0; i < sz; i++)
            if (a[i] != b[i] && shown++ < 8) {
                snprintf(line, sizeof line, "  mem %#" PRIx64 ": in %02x native %02x sim %02x\n",
                         at + i, init[i], a[i], b[i]);
                o.why += line;
            }
    };
    memdiff(n.data, s.data, c.data, DIFF_DATA_SIZE, DIFF_DATA);
    memdiff(n.stack, s.stack, c.stack, DIFF_STACK_SIZE, DIFF_STACK);
    o.ok = o.why.empty();
    if (!o.ok)
        o.why += inputs(c);
    return o;
}

// ---------------------------------------------------------------- the dump

// FNV-1a: the memory windows and results go into the dump as hashes.
uint64_t fnv(const void *p, size_t n, uint64_t h = 1469598103934665603ull)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ ((const uint8_t *)p)[i]) * 1099511628211ull;
    return h;
}

void dump_hex(const char *tag, const uint8_t *p, size_t n)
{
    fprintf(g_dump, " %s=", tag);
    for (size_t i = 0; i < n; i++)
        fprintf(g_dump, "%02x", p[i]);
}

// The template table, once per dump.
void dump_templates()
{
    fprintf(g_dump, "templates %zu\n", templates().size());
    for (const Tmpl &t : templates())
        fprintf(g_dump, "%s %02x %u %02x %d %u %#" PRIx64 " %d\n", t.fam.c_str(), t.pfx, t.map,
                t.opc, t.ext, t.imm, t.f, t.op2);
}

// A run's result: the state compare() looks at (in 32-bit mode the low
// eight registers; the valid x87 registers), hashed.
uint64_t result_hash(const diff_result &r, int mode)
{
    const int nreg = mode == ES_MODE_64 ? 16 : 8;
    const uint64_t fl = r.st.rflags & kCmpFlags;
    uint64_t h = fnv(r.st.gpr, 8 * nreg);
    h = fnv(&fl, sizeof fl, h);
    h = fnv(&r.st.mxcsr, sizeof r.st.mxcsr, h);
    h = fnv(r.st.xmm, 16 * nreg, h);
    h = fnv(r.st.fx, 5, h); // FCW, FSW, abridged FTW
    unsigned top = (r.st.fx[3] >> 3) & 7;
    for (int i = 0; i < 8; i++)
        if ((r.st.fx[4] >> ((top + i) & 7)) & 1)
            h = fnv(r.st.fx + 32 + 16 * i, 10, h);
    h = fnv(r.data, sizeof r.data, h);
    h = fnv(r.stack, sizeof r.stack, h);
    return h;
}

// One case: its index, the template drawn, the bytes run on both sides, the
// whole initial state (memory windows hashed) and the outcome.
void dump_case(const char *fam, int mode, unsigned i, long tmpl, const Case &c,
               const diff_result &n, const diff_result &s, const Outcome &o)
{
    fprintf(g_dump, "%s/%d #%u t%ld", fam, mode == ES_MODE_64 ? 64 : 32, i, tmpl);
    dump_hex("code", c.code, c.len);
    dump_hex("native", c.native, c.nlen);
    for (int k = 0; k < 16; k++)
        fprintf(g_dump, " %" PRIx64, c.st.gpr[k]);
    fprintf(g_dump, " fl=%" PRIx64 " mx=%x", c.st.rflags, c.st.mxcsr);
    dump_hex("xmm", &c.st.xmm[0][0], sizeof c.st.xmm);
    dump_hex("fx", c.st.fx, 160);
    fprintf(g_dump, " data=%016" PRIx64 " stack=%016" PRIx64, fnv(c.data, sizeof c.data),
            fnv(c.stack, sizeof c.stack));
    fprintf(g_dump, " | nf=%d sf=%d ok=%d un=%d ud=%d n=%016" PRIx64 " s=%016" PRIx64
                    " why=%016" PRIx64 "\n",
            n.fault, s.fault, o.ok, o.unimpl, o.undef_diff, result_hash(n, mode), result_hash(s, mode),
            fnv(o.why.data(), o.why.size()));
}

// ---------------------------------------------------------------- the tests

struct Param {
    const char *fam;
    int mode;
};

void PrintTo(const Param &p, std::ostream *os)
{
    *os << p.fam << (p.mode == ES_MODE_64 ? " in 64-bit mode" : " in 32-bit mode");
}

std::string param_name(const testing::TestParamInfo<Param> &i)
{
    return std::string(i.param.fam) + (i.param.mode == ES_MODE_64 ? "_64" : "_32");
}

// Totals over the whole run, printed at exit (the progress meter).
struct Totals {
    std::map<std::string, Stat> by_fam;
    ~Totals()
    {
        if (by_fam.empty())
            return;
        printf("\n==== differential test totals (seed %#" PRIx64 ", %u cases per family/mode)\n",
               g_seed, g_cases);
        printf("%-12s %8s %8s %8s %8s\n", "family", "pass", "fail", "unimpl", "rate");
        for (auto &[k, s] : by_fam) {
            unsigned tot = s.pass + s.fail + s.unimpl;
            printf("%-12s %8u %8u %8u %7.1f%%\n", k.c_str(), s.pass, s.fail, s.unimpl,
                   tot ? 100.0 * s.pass / tot : 0.0);
        }
    }
};
Totals g_totals;

bool features_ok(const Tmpl &t)
{
    if (t.fam == "bmi")
        return __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2");
    if (t.map == 2 && (t.opc == 0xf0 || t.opc == 0xf1) && t.pfx == 0)
        return __builtin_cpu_supports("movbe");
    if (t.map == 2 && t.opc == 0xf6)
        return __builtin_cpu_supports("adx");
    if (t.fam.rfind("sse", 0) == 0)
        return __builtin_cpu_supports("sse4.2");
    if (t.pfx == 0xf3 && t.map == 1 && (t.opc == 0xbc || t.opc == 0xbd || t.opc == 0xb8))
        return __builtin_cpu_supports("lzcnt") && __builtin_cpu_supports("popcnt") &&
               __builtin_cpu_supports("bmi");
    return true;
}

class DiffHost : public testing::TestWithParam<Param> {};

TEST_P(DiffHost, Run)
{
    const Param prm = GetParam();
    const int mode = prm.mode;
    char err[128];
    ASSERT_EQ(diff_native_init(err, sizeof err), 0) << err;

    // The simulated CPU is the host's vendor: where the SDM leaves a result
    // undefined (16-bit SHLD/SHRD counts over 16, the x87 error pointers,
    // REP with ECX = 0) entrysim models both Intel and AMD (--cpu), and the
    // host checks the one it is.
    const int host_vendor = __builtin_cpu_is("amd") ? 1 : 0;
    const bool emu32 = mode == ES_MODE_32 && (g_force_emu32 || !diff_native_has_compat());
    static bool told;
    if (emu32 && !told) {
        told = true;
        printf("NOTE: this host cannot run compatibility-mode code (USER32_CS unusable: a PVM\n"
               "      guest or ia32_emulation=0).  32-bit cases run natively as their 64-bit-mode\n"
               "      equivalents; 32-bit-operand PUSH/POP/PUSHF/POPF/ENTER/LEAVE and PUSHA/POPA\n"
               "      are not drawn (16-bit forms are).\n");
    }
    std::vector<const Tmpl *> ts;
    for (const Tmpl &t : templates())
        if (t.fam == prm.fam && features_ok(t) &&
            !((t.f & T_NO64) && mode == ES_MODE_64) && !((t.f & T_NO32) && mode == ES_MODE_32) &&
            !(emu32 && (t.f & T_COMPAT)))
            ts.push_back(&t);
    if (ts.empty())
        GTEST_SKIP() << prm.fam << " has no forms this host can run natively in this mode";

    es_machine *m = diff_sim_new(mode);
    m->vendor = (uint8_t)host_vendor;
    ASSERT_NE(m, nullptr);
    static Case c;
    static diff_result nr, sr;
    std::map<std::string, Stat> st;
    Stat &fam_tot = g_totals.by_fam[std::string(prm.fam) + (mode == ES_MODE_64 ? "/64" : "/32")];
    unsigned fails = 0, skipped = 0;
    uint64_t fam_hash = 1469598103934665603ull ^ (unsigned)mode; // FNV-1a: stable across builds
    for (const char *q = prm.fam; *q; q++)
        fam_hash = (fam_hash ^ (uint8_t)*q) * 1099511628211ull;

    for (unsigned i = g_first; i < g_first + g_cases; i++) {
        uint64_t cs = mix(mix(g_seed, fam_hash), i);
        Rng r(cs);
        bool ok = false;
        const Tmpl *drawn = nullptr;
        for (int tries = 0; tries < 20 && !ok; tries++) {
            drawn = ts[r.below((uint32_t)ts.size())];
            ok = generate(*drawn, mode, emu32, r, c);
        }
        if (!ok) {
            skipped++;
            if (g_dump)
                fprintf(g_dump, "%s/%d #%u skipped\n", prm.fam, mode == ES_MODE_64 ? 64 : 32, i);
            continue;
        }
        diff_native_run(emu32 ? ES_MODE_64 : mode, c.native, c.nlen, &c.st, c.data, c.stack, &nr);
        if (mode == ES_MODE_32)
            for (int k = 0; k < 16; k++)
                nr.st.gpr[k] &= 0xffffffffu;
        static char ctx[256];
        {
            char dis[128];
            es_format(c.code, c.len, mode, EST_CODE, ES_SYNTAX_INTEL, dis, sizeof dis);
            snprintf(ctx, sizeof ctx,
                     "[%s/%d] %s\n  reproduce: ES_DIFF_SEED=%#" PRIx64
                     " ES_DIFF_FIRST=%u ES_DIFF_CASES=1 es_diff_host --gtest_filter='*/%s'",
                     prm.fam, mode == ES_MODE_64 ? 64 : 32, dis, g_seed, i,
                     param_name(testing::TestParamInfo<Param>(prm, 0)).c_str());
            diff_set_context(ctx);
        }
        diff_sim_run(m, c.code, c.len, &c.st, c.data, c.stack, &sr);
        diff_set_context(nullptr);
        Outcome o = compare(c, mode, nr, sr);
        if (g_dump)
            dump_case(prm.fam, mode, i, (long)(drawn - templates().data()), c, nr, sr, o);
        if (g_verbose) {
            char dis[128];
            es_format(c.code, c.len, mode, EST_CODE, ES_SYNTAX_INTEL, dis, sizeof dis);
            printf("[%s/%d] #%u %-4s %s\n", prm.fam, mode == ES_MODE_64 ? 64 : 32, i,
                   o.ok ? "ok" : o.unimpl ? "unim" : "FAIL", dis);
        }
        std::string mn = es_op_name(c.d.op);
        Stat &s = st[mn];
        if (o.ok) {
            s.pass++, fam_tot.pass++;
            s.faults += nr.fault != 0;
            s.undef += o.undef_diff;
        } else if (o.unimpl) {
            s.unimpl++, fam_tot.unimpl++, fails++;
        } else {
            s.fail++, fam_tot.fail++, fails++;
        }
        if (!o.ok && !o.unimpl && s.shown++ < g_show) {
            char dis[128], bytes[64] = "";
            es_format(c.code, c.len, mode, EST_CODE, ES_SYNTAX_INTEL, dis, sizeof dis);
            for (size_t k = 0; k < c.len; k++)
                snprintf(bytes + 3 * k, 4, "%02x ", c.code[k]);
            std::string nat;
            if (emu32) {
                char nb[64] = "";
                for (size_t k = 0; k < c.nlen; k++)
                    snprintf(nb + 3 * k, 4, "%02x ", c.native[k]);
                nat = std::string("  host ran the 64-bit-mode equivalent ") + nb + "\n";
            }
            ADD_FAILURE() << "[" << prm.fam << (mode == ES_MODE_64 ? "/64] " : "/32] ") << dis
                          << "   (" << bytes << ")\n"
                          << nat
                          << "  reproduce: ES_DIFF_SEED=" << hex(g_seed) << " ES_DIFF_FIRST=" << i
                          << " ES_DIFF_CASES=1 es_diff_host --gtest_filter='*/"
                          << param_name(testing::TestParamInfo<Param>(prm, 0)) << "'\n"
                          << o.why;
        }
    }
    es_machine_free(m);

    printf("[%s/%d] %-12s %6s %6s %6s %6s %7s\n", prm.fam, mode == ES_MODE_64 ? 64 : 32,
           "mnemonic", "pass", "fail", "unimpl", "faults", "undef~");
    for (auto &[mn, s] : st)
        printf("[%s/%d] %-12s %6u %6u %6u %6u %7u%s\n", prm.fam, mode == ES_MODE_64 ? 64 : 32,
               mn.c_str(), s.pass, s.fail, s.unimpl, s.faults, s.undef,
               s.fail ? "  <- MISMATCH" : s.unimpl ? "  <- not implemented" : "");
    if (skipped)
        printf("[%s/%d] %u cases skipped (no decodable encoding drawn)\n", prm.fam,
               mode == ES_MODE_64 ? 64 : 32, skipped);
    EXPECT_EQ(fails, 0u) << "mismatching or unimplemented cases in " << prm.fam;
}

// The harness itself: the native runner really executes (known results,
// memory, a fault), and compare() notices every kind of difference.  Without
// this a broken stub could make every family "pass".
TEST(DiffHarness, NativeRunnerAndCompareCanFail)
{
    char err[128];
    ASSERT_EQ(diff_native_init(err, sizeof err), 0) << err;
    static Case c;
    static diff_result n, s;
    memset(&c, 0, sizeof c);
    c.st.gpr[ES_RAX] = 1;
    c.st.gpr[ES_RBX] = 2;
    c.st.gpr[ES_RSP] = DIFF_STACK + 0x1000;
    c.st.rflags = 2;
    c.st.mxcsr = 0x1f80;
    c.data[0x100] = 0xaa;
    const uint8_t add[] = {0x01, 0xd8}; // add eax, ebx
    diff_native_run(ES_MODE_64, add, sizeof add, &c.st, c.data, c.stack, &n);
    EXPECT_EQ(n.fault, 0);
    EXPECT_EQ(n.st.gpr[ES_RAX], 3u);
    EXPECT_EQ(n.st.rflags & kCmpFlags, (uint64_t)ES_PF);
    const uint8_t store[] = {0x48, 0x89, 0x1c, 0x25, 0x00, 0x01, 0x60, 0x00}; // mov [0x600100], rbx
    diff_native_run(ES_MODE_64, store, sizeof store, &c.st, c.data, c.stack, &n);
    EXPECT_EQ(n.data[0x100], 2);
    EXPECT_EQ(n.data[0x101], 0);
    const uint8_t push[] = {0x53}; // push rbx
    diff_native_run(ES_MODE_64, push, sizeof push, &c.st, c.data, c.stack, &n);
    EXPECT_EQ(n.st.gpr[ES_RSP], DIFF_STACK + 0x1000 - 8);
    EXPECT_EQ(n.stack[0x1000 - 8], 2);
    const uint8_t div[] = {0xf7, 0xf1}; // div ecx (ecx = 0)
    diff_native_run(ES_MODE_64, div, sizeof div, &c.st, c.data, c.stack, &n);
    EXPECT_EQ(n.fault, SIGFPE);

    // compare(): equal results pass, each kind of difference fails
    c.len = sizeof add;
    memcpy(c.code, add, sizeof add);
    ASSERT_EQ(es_decode(c.code, c.len, ES_MODE_64, EST_CODE, &c.d), ES_DECODE_OK);
    diff_native_run(ES_MODE_64, add, sizeof add, &c.st, c.data, c.stack, &n);
    s = n;
    EXPECT_TRUE(compare(c, ES_MODE_64, n, s).ok);
    s.st.gpr[ES_R15] ^= 1ull << 63;
    EXPECT_FALSE(compare(c, ES_MODE_64, n, s).ok);
    s = n;
    s.st.rflags ^= ES_OF;
    EXPECT_FALSE(compare(c, ES_MODE_64, n, s).ok);
    s = n;
    s.st.xmm[15][15] ^= 1;
    EXPECT_FALSE(compare(c, ES_MODE_64, n, s).ok);
    s = n;
    s.stack[DIFF_STACK_SIZE - 1] ^= 1;
    EXPECT_FALSE(compare(c, ES_MODE_64, n, s).ok);
    s = n;
    s.fault = VEC_DE + 1;
    EXPECT_FALSE(compare(c, ES_MODE_64, n, s).ok);
    // a flag the SDM leaves undefined (AF after AND) is noted, not failed
    const uint8_t andi[] = {0x21, 0xd8}; // and eax, ebx
    memcpy(c.code, andi, sizeof andi);
    c.len = sizeof andi;
    ASSERT_EQ(es_decode(c.code, c.len, ES_MODE_64, EST_CODE, &c.d), ES_DECODE_OK);
    ASSERT_TRUE(c.d.fl_undef & ES_AF);
    diff_native_run(ES_MODE_64, andi, sizeof andi, &c.st, c.data, c.stack, &n);
    s = n;
    s.st.rflags ^= ES_AF;
    Outcome u = compare(c, ES_MODE_64, n, s);
    EXPECT_TRUE(u.ok);
    EXPECT_TRUE(u.undef_diff);
    s.st.rflags ^= ES_ZF;
    EXPECT_FALSE(compare(c, ES_MODE_64, n, s).ok);
    // x87 state differences are caught too
    s = n;
    s.st.fx[2] ^= 1; // FSW.IE
    EXPECT_FALSE(compare(c, ES_MODE_64, n, s).ok);
    // the 32-bit view ignores upper halves and xmm8-15
    s = n;
    s.st.xmm[8][0] ^= 1;
    EXPECT_TRUE(compare(c, ES_MODE_32, n, s).ok);
    if (diff_native_has_compat()) {
        const uint8_t inc[] = {0x40}; // inc eax (32-bit mode)
        diff_native_run(ES_MODE_32, inc, sizeof inc, &c.st, c.data, c.stack, &n);
        EXPECT_EQ(n.fault, 0);
        EXPECT_EQ(n.st.gpr[ES_RAX], 2u);
    }
}

const Param kParams[] = {
    {"alu", ES_MODE_64},    {"alu", ES_MODE_32},    {"shift", ES_MODE_64},
    {"shift", ES_MODE_32},  {"muldiv", ES_MODE_64}, {"muldiv", ES_MODE_32},
    {"bits", ES_MODE_64},   {"bits", ES_MODE_32},   {"bmi", ES_MODE_64},
    {"bmi", ES_MODE_32},    {"mov", ES_MODE_64},    {"mov", ES_MODE_32},
    {"stack", ES_MODE_64},  {"stack", ES_MODE_32},  {"string", ES_MODE_64},
    {"string", ES_MODE_32}, {"atomic", ES_MODE_64}, {"atomic", ES_MODE_32},
    {"sse_int", ES_MODE_64}, {"sse_int", ES_MODE_32}, {"sse_fp", ES_MODE_64},
    {"sse_fp", ES_MODE_32}, {"misc", ES_MODE_64},   {"misc", ES_MODE_32},
    {"x87", ES_MODE_64},    {"x87", ES_MODE_32},    {"bcd", ES_MODE_32},
    {"legacy32", ES_MODE_32},
};

INSTANTIATE_TEST_SUITE_P(Families, DiffHost, testing::ValuesIn(kParams), param_name);

} // namespace

int main(int argc, char **argv)
{
    testing::InitGoogleTest(&argc, argv);
    if (const char *e = getenv("ES_DIFF_SEED"))
        g_seed = strtoull(e, nullptr, 0);
    if (const char *e = getenv("ES_DIFF_CASES"))
        g_cases = (unsigned)strtoul(e, nullptr, 0);
    if (const char *e = getenv("ES_DIFF_FIRST"))
        g_first = (unsigned)strtoul(e, nullptr, 0);
    if (const char *e = getenv("ES_DIFF_VERBOSE"))
        g_verbose = atoi(e) != 0;
    if (const char *e = getenv("ES_DIFF_SHOW"))
        g_show = (unsigned)strtoul(e, nullptr, 0);
    if (const char *e = getenv("ES_DIFF_EMU32"))
        g_force_emu32 = atoi(e) != 0;
    const char *dump = getenv("ES_DIFF_DUMP");
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "--seed=", 7))
            g_seed = strtoull(argv[i] + 7, nullptr, 0);
        else if (!strncmp(argv[i], "--cases=", 8))
            g_cases = (unsigned)strtoul(argv[i] + 8, nullptr, 0);
        else if (!strncmp(argv[i], "--first=", 8))
            g_first = (unsigned)strtoul(argv[i] + 8, nullptr, 0);
        else if (!strncmp(argv[i], "--show=", 7))
            g_show = (unsigned)strtoul(argv[i] + 7, nullptr, 0);
        else if (!strncmp(argv[i], "--dump=", 7))
            dump = argv[i] + 7;
        else if (!strcmp(argv[i], "--emu32"))
            g_force_emu32 = true;
        else if (!strcmp(argv[i], "--long") && !getenv("ES_DIFF_LONG")) {
            printf("diff_host_long: skipped (set ES_DIFF_LONG=1 to run it)\n");
            return 77;
        }
    }
    if (dump && *dump) {
        g_dump = fopen(dump, "w");
        if (!g_dump) {
            perror(dump);
            return 1;
        }
        dump_templates();
    }
    int rc = RUN_ALL_TESTS();
    if (g_dump)
        fclose(g_dump);
    return rc;
}
