// diff_generate.cc - one differential-test case from a template: the
// instruction bytes (prefixes, REX or VEX, opcode, ModRM/SIB/displacement,
// immediate) and a random initial state whose registers make a memory
// operand land in the data window.
//
// The steps run in a fixed order and each draws from the case's PRNG: a
// case is reproduced from its seed alone, so any change to the order or
// number of draws changes every case after it (diff two ES_DIFF_DUMP files
// to check a refactoring).
#include <algorithm>
#include <cstring>

#include "diff_host.h"
#include "es_shim.h"

namespace diffhost {
namespace {

// The case being built: the template, the choices made so far and the
// write position in the instruction bytes.
struct Gen {
    const Tmpl &t;
    const int mode;
    const bool emu32;
    Rng &r;
    Case &c;
    const bool m64 = mode == ES_MODE_64;
    const unsigned nreg = m64 ? 16 : 8;
    unsigned osz = 4;
    bool has_modrm = false, vex = false, mem = false, plain_rex = false;
    unsigned reg = 0, rm = 0, vvvv = 0;
    unsigned vl = 16; // VEX.L = 1: 32 (the vector length in bytes)
    uint8_t mb[8] = {}; // ModRM, SIB, displacement
    size_t mbn = 0;
    unsigned base = 0, index = 4, scale = 0;
    bool use_index = false;
    uint64_t target = 0; // the memory operand's address
    bool amem32 = false, a32 = false, rex = false;
    uint8_t *p = nullptr;
    uint64_t *gpr() { return c.st.gpr; }
    uint8_t *at_target() { return c.data + (target - DIFF_DATA); }
};

void init_state(Gen &g)
{
    Rng &r = g.r;
    Case &c = g.c;
    const Tmpl &t = g.t;
    const bool m64 = g.m64;
    // Bits 255:128 of the YMM registers, from a stream of their own (seeded
    // by, but not drawing from, the case's): every other draw stays what
    // it was before the harness had YMM state, so the older families keep
    // their cases.
    Rng yr(mix(r.s, 0x594d4d48u));
    for (int i = 0; i < 16; i++)
        xval(yr, c.st.ymmh[i]);
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
}

unsigned operand_size(Gen &g)
{
    const uint64_t f = g.t.f;
    if (f & T_B)
        return 1;
    if (f & T_V)
        return g.m64 ? 2u << g.r.below(3) : (g.r.chance(30) ? 2 : 4);
    if (f & T_Y)
        return g.m64 && g.r.chance(50) ? 8 : 4;
    if (f & T_D64)
        return g.emu32 || g.r.chance(20) ? 2 : (g.m64 ? 8 : 4);
    return 4;
}

void register_fields(Gen &g)
{
    const Tmpl &t = g.t;
    Rng &r = g.r;
    g.has_modrm = t.ext != X_NONE && t.ext != X_PLUSR;
    g.vex = (t.f & T_VEX) != 0;
    if (g.has_modrm)
        g.mem = (t.f & T_MEM) ? true : (t.f & T_REG) ? false : r.chance(50);
    g.reg = t.ext >= 0 ? (unsigned)t.ext : r.below(g.nreg);
    g.rm = r.below(g.nreg);
    g.vvvv = (t.f & T_VVVV) ? r.below(g.nreg) : 0;
    g.plain_rex = g.m64 && !g.vex && r.chance(30);
    // (the draws below happen for the VEX vector templates only)
    if (t.f & T_VX) {
        // a gather's mask (vvvv) and destination (reg) differ but now and
        // then: the same register is #UD
        g.vvvv = r.below(g.nreg);
        if ((t.f & T_VSIB) && r.chance(95))
            while (g.vvvv == g.reg)
                g.vvvv = r.below(g.nreg);
        else if (t.f & T_VSIB)
            g.vvvv = g.reg;
    }
    if (t.f & T_L1)
        g.vl = 32;
    else if ((t.f & T_LR) && r.chance(50))
        g.vl = 32;
}

// Base and index: any register but RSP and the instruction's other
// register operands (so the address survives their initial values).
void mem_registers(Gen &g)
{
    const Tmpl &t = g.t;
    std::vector<unsigned> ex = {ES_RSP};
    if (t.ext == X_RAND && !(t.f & T_RX)) {
        ex.push_back(g.reg);
        if ((t.f & T_B) && g.reg >= 4 && g.reg < 8)
            ex.push_back(g.reg - 4);
    }
    if (t.f & T_VVVV)
        ex.push_back(g.vvvv);
    if (t.f & (T_DIV | T_CMPX))
        for (unsigned x : {0u, 1u, 2u, 3u})
            ex.push_back(x);
    auto pick = [&]() {
        for (;;) {
            unsigned x = g.r.below(g.nreg);
            if (std::find(ex.begin(), ex.end(), x) == ex.end())
                return x;
        }
    };
    g.base = pick();
    ex.push_back(g.base);
    if (t.f & T_VSIB) {
        // the index is a vector register: not the destination or the mask
        // but now and then (#UD)
        g.use_index = true;
        g.index = g.r.below(g.nreg);
        if (g.r.chance(95))
            while (g.index == g.reg || g.index == g.vvvv)
                g.index = g.r.below(g.nreg);
        else
            g.index = g.r.chance(50) ? g.reg : g.vvvv;
        g.scale = g.r.below(4);
        return;
    }
    g.use_index = g.r.chance(30);
    if (g.use_index) {
        g.index = pick();
        g.scale = g.r.below(4);
    }
}

// The target address, a displacement form, and base/index values that
// reach the target from it.  Returns mod; disp through *disp.
unsigned mem_address(Gen &g, int64_t *disp_out)
{
    const Tmpl &t = g.t;
    Rng &r = g.r;
    const bool m64 = g.m64, amem32 = g.amem32;
    g.target = DIFF_DATA + 0x400 + r.below(0x1400);
    // the alignment of a vector operand: 16, or 32 for a VEX.256 form
    const int64_t al = g.vl;
    if ((t.f & T_A16) && g.vl == 16 && !(t.f & T_MISAL)) {
        g.target = (g.target & ~15ull) + (r.chance(4) ? 8 : 0); // rarely misaligned: #GP
    } else if (t.f & T_A16) {
        // (VEX only) an aligned move misaligned a quarter of the time, the
        // rest now and then (no alignment rule: they must not fault)
        static const unsigned mis[] = {8, 4, 16};
        g.target &= ~(uint64_t)(al - 1);
        if (r.chance((t.f & T_MISAL) ? 25 : 6))
            g.target += mis[r.below(al == 32 ? 3 : 2)];
    } else if (r.chance(70) && g.osz > 1) {
        g.target &= ~(uint64_t)(g.osz - 1);
    }
    if (t.f & T_VSIB) // the middle of the window: the index vector reaches +-2 KiB
        g.target = DIFF_DATA + 0xc00 + (r.below(0x800) & ~7u);
    int64_t disp = 0;
    unsigned mod;
    unsigned dk = r.below(3);
    if (dk == 0 && (g.base & 7) == 5)
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
        disp &= ~(al - 1);
    const bool gpr_index = g.use_index && !(t.f & T_VSIB);
    uint64_t ival = gpr_index ? r.below(64) : 0;
    uint64_t bval = g.target - disp - (ival << g.scale);
    if (!m64 || amem32)
        bval &= 0xffffffffu;
    if (amem32) {
        bval |= r.next() << 32;
        if (!(t.f & T_VSIB)) // (drawn without an index too: the older families' draws)
            ival |= r.chance(50) ? r.next() << 32 : 0;
    }
    if (gpr_index)
        g.gpr()[g.index] = ival;
    g.gpr()[g.base] = bval;
    *disp_out = disp;
    return mod;
}

void mem_encode(Gen &g, unsigned mod, int64_t disp)
{
    const unsigned base = g.base;
    bool sib = g.use_index || (base & 7) == 4;
    g.mb[g.mbn++] = (uint8_t)((mod << 6) | ((g.reg & 7) << 3) | (sib ? 4 : (base & 7)));
    if (sib)
        g.mb[g.mbn++] =
            (uint8_t)((g.scale << 6) | ((g.use_index ? g.index : 4) & 7) << 3 | (base & 7));
    if (mod == 1)
        g.mb[g.mbn++] = (uint8_t)disp;
    else if (mod == 2)
        for (int i = 0; i < 4; i++)
            g.mb[g.mbn++] = (uint8_t)((uint64_t)disp >> (8 * i));
}

// ModRM (and SIB, displacement): a memory operand in the data window, or
// a register.  64-bit mode: sometimes a 67 prefix (32-bit addressing: the
// upper halves of base and index are ignored and the sum wraps at 4 GiB).
void modrm(Gen &g)
{
    g.amem32 = g.mem && g.m64 && g.r.chance(10);
    if (g.mem) {
        mem_registers(g);
        int64_t disp;
        unsigned mod = mem_address(g, &disp);
        mem_encode(g, mod, disp);
    } else if (g.has_modrm) {
        g.mb[g.mbn++] = (uint8_t)(0xc0 | ((g.reg & 7) << 3) | (g.rm & 7));
    }
}

void legacy_prefixes(Gen &g)
{
    const Tmpl &t = g.t;
    Rng &r = g.r;
    uint8_t *&p = g.p;
    bool lock = (t.f & T_LOCK) && g.mem && r.chance(30);
    if (lock)
        *p++ = 0xf0;
    if (t.f & T_REPOK) {
        unsigned k = r.below(3);
        if (k == 1)
            *p++ = 0xf3;
        else if (k == 2 && (t.f & T_REPNE))
            *p++ = 0xf2;
    }
    if ((g.mem || (t.f & T_IMPLMEM)) && r.chance(5))
        *p++ = "\x26\x36\x3e"[r.below(3)]; // ES/SS/DS: flat, no effect
    g.a32 = ((t.f & (T_STR | T_MOFFS)) && g.m64 && r.chance(15)) || g.amem32;
    if (g.a32)
        *p++ = 0x67;
    if (g.osz == 2 && !g.vex)
        *p++ = 0x66;
    if (!g.vex && t.pfx)
        *p++ = t.pfx;
}

// REX or VEX, the opcode map escapes, the opcode (+cc, +r), the fixed
// second byte and the ModRM bytes.
void opcode(Gen &g)
{
    const Tmpl &t = g.t;
    uint8_t *&p = g.p;
    unsigned opc = t.opc;
    if (t.f & T_CC)
        opc += g.r.below(16);
    if (t.ext == X_PLUSR) {
        g.rm = g.r.below(g.nreg);
        opc += g.rm & 7;
    }
    bool W = g.osz == 8 && !(t.f & T_D64);
    unsigned R = (g.reg >> 3) & 1, X = g.use_index ? (g.index >> 3) & 1 : 0;
    unsigned B = g.mem ? (g.base >> 3) & 1 : (g.rm >> 3) & 1;
    if (t.ext >= 0 || !g.has_modrm)
        R = 0;
    if (!g.has_modrm && t.ext != X_PLUSR)
        B = 0;
    g.rex = g.m64 && !g.vex && (W || R || X || B || g.plain_rex);
    if (g.vex) {
        unsigned pp = t.pfx == 0x66 ? 1 : t.pfx == 0xf3 ? 2 : t.pfx == 0xf2 ? 3 : 0;
        unsigned L = g.vl == 32;
        // (the draws happen for the VEX vector templates only)
        if ((t.f & T_W1) || ((t.f & T_WIG) && g.r.chance(30)))
            W = true;
        // the two-byte form C5 when it can say the same (0F map, no W, X, B)
        if (t.map == 1 && !W && !X && !B && g.r.chance(40)) {
            *p++ = 0xc5;
            *p++ = (uint8_t)((!R << 7) | ((~g.vvvv & 15) << 3) | (L << 2) | pp);
        } else {
            *p++ = 0xc4;
            *p++ = (uint8_t)((!R << 7) | (!X << 6) | (!B << 5) | t.map);
            *p++ = (uint8_t)((W << 7) | ((~g.vvvv & 15) << 3) | (L << 2) | pp);
        }
    } else {
        if (g.rex)
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
    memcpy(p, g.mb, g.mbn);
    p += g.mbn;
}

void immediates(Gen &g)
{
    const Tmpl &t = g.t;
    Rng &r = g.r;
    const unsigned osz = g.osz;
    unsigned ib = t.imm == I_Z ? (osz == 2 ? 2 : 4) : t.imm == I_V ? osz : t.imm;
    if (t.f & T_MOFFS)
        ib = g.m64 && !g.a32 ? 8 : 4;
    if (t.f & T_ENTER)
        ib = 3;
    uint64_t iv = r.next();
    if ((t.f & T_SMALL) && r.chance(50))
        iv = r.below(40);
    if (t.f & T_CMPIMM)
        iv = r.below(8);
    if (t.f & T_CMP32)
        iv = r.below(32);
    if (t.f & T_IS4) // a register of the mode (bit 7 is ignored in 32-bit mode)
        iv = (iv & 0x0f) | (r.below(g.nreg) << 4);
    if ((t.f & T_RND8) && r.chance(75))
        iv = r.below(8);
    if (t.f & T_MOFFS)
        iv = DIFF_DATA + 0x400 + r.below(0x1400);
    if (t.f & T_ENTER)
        iv = (r.below(0x100) & ~7u) | ((uint64_t)r.below(3) << 16);
    for (unsigned i = 0; i < ib; i++)
        *g.p++ = (uint8_t)(iv >> (8 * i));
}

// ---- operand fix-ups that make the interesting paths likely

void fix_bitoff(Gen &g) // BT* m, r: +-128 bytes around the operand
{
    if (g.mem)
        g.gpr()[g.reg] = (uint64_t)((int64_t)g.r.below(2048) - 1024);
}

void fix_bound(Gen &g)
{
    // lower in index-3..index+1, upper in index-1..index+3 (as osz-wide
    // values, so they wrap around the signed range's ends): inside, on
    // either boundary, or one past it
    Rng &r = g.r;
    if (!r.chance(70))
        return;
    uint64_t idx = g.gpr()[g.reg], lo = idx + r.below(5) - 3, hi = idx + r.below(5) - 1;
    memcpy(g.at_target(), &lo, g.osz);
    memcpy(g.at_target() + g.osz, &hi, g.osz);
}

void fix_div(Gen &g) // a dividend that mostly does not overflow the quotient
{
    Rng &r = g.r;
    uint64_t *gr = g.gpr();
    if (!r.chance(70))
        return;
    bool idiv = g.t.ext == 7;
    if (g.osz == 1) {
        uint64_t ah = r.below(4);
        if (idiv && r.chance(50))
            ah = (gr[0] & 0x80) ? 0xff : 0;
        gr[0] = (gr[0] & ~0xff00ull) | (ah << 8);
    } else {
        uint64_t hi = r.below(4);
        if (idiv && r.chance(50))
            hi = (gr[0] >> (g.osz * 8 - 1)) & 1 ? ~0ull : 0;
        gr[2] = hi;
    }
}

void fix_string(Gen &g)
{
    Rng &r = g.r;
    uint64_t *gr = g.gpr();
    uint8_t *data = g.c.data;
    gr[ES_RSI] = DIFF_DATA + 0x600 + r.below(0x600);
    gr[ES_RDI] = DIFF_DATA + 0x1000 + r.below(0x600);
    gr[ES_RCX] = r.below(20);
    if (g.a32 && r.chance(50)) // only ECX counts
        gr[ES_RCX] |= r.next() << 32;
    if (!g.m64)
        gr[ES_RCX] &= 0xffffffffu;
    if (r.chance(50)) // equal strings so REPE CMPS runs on
        memcpy(data + (gr[ES_RDI] - DIFF_DATA) - 0x100, data + (gr[ES_RSI] - DIFF_DATA) - 0x100,
               0x200);
    if (r.chance(30)) // SCAS finds (or runs through) the accumulator
        for (int i = -0x100; i < 0x100; i += g.osz)
            memcpy(data + (gr[ES_RDI] - DIFF_DATA) + i, &gr[ES_RAX], g.osz);
    if (r.chance(20)) // a mismatch somewhere
        data[gr[ES_RDI] - DIFF_DATA + r.below(64)] ^= 1;
}

void fix_frame(Gen &g)
{
    g.gpr()[ES_RBP] = g.gpr()[ES_RSP] + g.r.below(0x80) * 8;
}

void fix_popf(Gen &g)
{
    uint64_t fl = (g.r.next() & (kFlagBits | ES_DF)) | 2;
    memcpy(g.c.stack + (g.gpr()[ES_RSP] - DIFF_STACK), &fl, 8);
}

void fix_cmpxchg(Gen &g) // the comparison succeeds half the time
{
    uint64_t *gr = g.gpr();
    const unsigned osz = g.osz;
    if (!g.r.chance(50))
        return;
    if (g.t.f & T_C8B) {
        const uint8_t *m = g.at_target();
        if (osz == 8) {
            memcpy(&gr[0], m, 8);
            memcpy(&gr[2], m + 8, 8);
        } else {
            uint32_t lo, hi;
            memcpy(&lo, m, 4);
            memcpy(&hi, m + 4, 4);
            gr[0] = lo;
            gr[2] = hi;
        }
    } else if (g.mem) {
        memcpy(g.at_target(), &gr[0], osz);
    } else if (!(osz == 1 && g.rm >= 4 && g.rm < 8 && !g.rex)) {
        // (AH..BH sources, byte registers 4..7 without REX, are skipped)
        uint64_t mk = osz >= 8 ? ~0ull : (1ull << (8 * osz)) - 1;
        gr[0] = (gr[0] & ~mk) | (gr[g.rm] & mk);
    }
}

void fix_simd_memory(Gen &g) // floats rather than noise in a SIMD operand
{
    if (g.mem && g.r.chance(50)) {
        xval(g.r, g.at_target());
        if (g.vl == 32) // (VEX.256 only) an m256 operand
            xval(g.r, g.at_target() + 16);
    }
}

void fix_xlat(Gen &g)
{
    g.gpr()[ES_RBX] = DIFF_DATA + 0x800 + g.r.below(0x800);
}

void fix_rdi(Gen &g)
{
    g.gpr()[ES_RDI] = DIFF_DATA + 0x800 + g.r.below(0x800);
}

void fix_ldmxcsr(Gen &g)
{
    Rng &r = g.r;
    uint32_t mx = 0x1f80 | (r.below(4) << 13) | (r.chance(20) ? 0x8040 : 0) |
                  (uint32_t)(r.next() & 0x3f);
    if (r.chance(5))
        mx &= ~(1u << (7 + r.below(6))); // unmasked: only the next SSE op would trap
    if (r.chance(5))
        mx |= 1u << (16 + r.below(16)); // reserved: #GP
    memcpy(g.at_target(), &mx, 4);
}

void fix_x87(Gen &g)
{
    Rng &r = g.r;
    x87_state(r, g.c.st.fx);
    if (!g.mem || !r.chance(60))
        return;
    uint8_t *q = g.at_target(); // a float of some format rather than noise
    switch (r.below(4)) {
    case 0: f80val(r, q); break;
    case 1: { long double x; f80val(r, (uint8_t *)&x); double d = (double)x; memcpy(q, &d, 8); break; }
    case 2: { long double x; f80val(r, (uint8_t *)&x); float f = (float)x; memcpy(q, &f, 4); break; }
    default: { uint64_t v = rval(r); memcpy(q, &v, 8); break; }
    }
}

void fix_unmask_simd(Gen &g) // an unmasked SIMD exception: #XM
{
    if (g.r.chance(5))
        g.c.st.mxcsr &= ~(1u << (7 + g.r.below(6)));
}

// A gather (VPGATHERDD & co.): the index vector's elements reach +-2 KiB
// around the target, mostly aligned to the element; a tenth of the cases
// one element points below the data window's mapping (a #PF if its mask
// bit is set: the elements below it must be done, SDM Vol. 2 VPGATHERDD
// "faults are delivered in a right-to-left manner").  The mask: random
// sign bits, or all set, or all clear.  Half the time the window holds
// floats rather than noise.
void fix_vsib(Gen &g)
{
    Rng &r = g.r;
    Case &c = g.c;
    const bool qidx = g.t.opc & 1;             // 91, 93: qword indices
    const unsigned dw = (g.t.f & T_W1) ? 8 : 4; // the data element
    const unsigned sc = 1u << g.scale;
    const unsigned n = qidx ? 4 : 8;            // index elements of a YMM register
    uint8_t v[32];
    for (unsigned i = 0; i < n; i++) {
        int64_t off = (int64_t)r.below(0xff0) - 0x800;
        off &= ~(int64_t)((r.chance(80) ? std::max(dw, sc) : sc) - 1);
        int64_t idx = off / sc;
        if (qidx)
            memcpy(v + 8 * i, &idx, 8);
        else
            memcpy(v + 4 * i, &idx, 4);
    }
    if (r.chance(10)) { // one element below the mapping (0x5e8000..0x5f0000)
        int64_t off = -(int64_t)(0x11000 + (r.below(0x8000) & ~7u)), idx = off / sc;
        unsigned i = r.below(n);
        if (qidx)
            memcpy(v + 8 * i, &idx, 8);
        else
            memcpy(v + 4 * i, &idx, 4);
    }
    memcpy(c.st.xmm[g.index], v, 16);
    memcpy(c.st.ymmh[g.index], v + 16, 16);
    unsigned mk = r.below(10); // 0..2: all set, 3: all clear, else as drawn
    for (unsigned i = 0; mk < 4 && i < 32; i += dw) {
        uint8_t *top = (i < 16 ? c.st.xmm[g.vvvv] + i : c.st.ymmh[g.vvvv] + i - 16) + dw - 1;
        *top = (uint8_t)(mk < 3 ? *top | 0x80 : *top & 0x7f);
    }
    if (r.chance(50))
        for (unsigned a = 0x400; a < 0x1c00; a += 16)
            xval(r, c.data + a);
}

// VCVTPH2PS: half-precision values in most vector registers and in the
// memory operand.
void fix_half(Gen &g)
{
    Rng &r = g.r;
    for (unsigned i = 0; i < g.nreg; i++)
        if (r.chance(60)) {
            hval(r, g.c.st.xmm[i]);
            hval(r, g.c.st.ymmh[i]);
        }
    if (g.mem && r.chance(70)) {
        hval(r, g.at_target());
        hval(r, g.at_target() + 16);
    }
}

// In this order (each draws from the PRNG), where the template has a flag.
const struct Fixup {
    uint64_t when;
    void (*apply)(Gen &g);
} kFixups[] = {
    {T_BITOFF, fix_bitoff},       {T_BOUND, fix_bound},   {T_DIV, fix_div},
    {T_STR, fix_string},          {T_FRAME, fix_frame},   {T_POPF, fix_popf},
    {T_CMPX, fix_cmpxchg},        {T_RX | T_MX, fix_simd_memory},
    {T_XLAT, fix_xlat},           {T_RDI, fix_rdi},       {T_LDMX, fix_ldmxcsr},
    {T_X87, fix_x87},             {T_RX | T_MX, fix_unmask_simd},
    {T_VSIB, fix_vsib},           {T_HALF, fix_half},
};

// The host cannot run compatibility mode: the same operation in 64-bit
// mode.  67 gives 32-bit addressing (ModRM/SIB forms are those of 32-bit
// mode as long as no disp32-only form is used, and string instructions
// then use ECX/ESI/EDI); INC/DEC r (40+r/48+r are REX in 64-bit mode)
// become FF /0 and FF /1.  Registers hold zero-extended 32-bit values and
// only their low halves are compared, so 32-bit results are those of
// 32-bit mode.  16-bit stack operations behave alike because RSP < 4 GiB;
// 32-bit ones cannot be expressed and are not drawn.
bool native_equivalent(Gen &g)
{
    Case &c = g.c;
    uint8_t *q = c.native;
    size_t i = 0;
    if (g.mem || (g.t.f & T_IMPLMEM))
        *q++ = 0x67;
    while (i < c.len && (c.code[i] == 0x66 || c.code[i] == 0xf0 || c.code[i] == 0xf2 ||
                         c.code[i] == 0xf3 || c.code[i] == 0x26 || c.code[i] == 0x36 ||
                         c.code[i] == 0x3e))
        *q++ = c.code[i++];
    if (g.t.ext == X_PLUSR && (g.t.f & T_NO64)) {
        *q++ = 0xff;
        *q++ = (uint8_t)((c.code[i] & 0x08 ? 0xc8 : 0xc0) | (c.code[i] & 7));
        i++;
    }
    memcpy(q, c.code + i, c.len - i);
    q += c.len - i;
    c.nlen = (size_t)(q - c.native);
    es_insn nd;
    if (c.d.op == ES_OP_INVALID) // a gather's #UD (see generate): #UD as well
        return c.nlen <= 15 &&
               es_decode(c.native, c.nlen, ES_MODE_64, EST_CODE, &nd) == ES_DECODE_INVALID;
    return !(c.nlen > 15 ||
             es_decode(c.native, c.nlen, ES_MODE_64, EST_CODE, &nd) != ES_DECODE_OK ||
             nd.len != c.nlen || nd.op != c.d.op);
}

} // namespace

bool generate(const Tmpl &t, int mode, bool emu32, Rng &r, Case &c)
{
    memset(&c, 0, sizeof c);
    Gen g{t, mode, emu32, r, c};
    init_state(g);
    g.osz = operand_size(g);
    register_fields(g);
    modrm(g);
    g.p = c.code;
    legacy_prefixes(g);
    opcode(g);
    immediates(g);
    c.len = (size_t)(g.p - c.code);
    for (const Fixup &f : kFixups)
        if (t.f & f.when)
            f.apply(g);
    if (!g.m64)
        for (int i = 0; i < 16; i++)
            c.st.gpr[i] &= 0xffffffffu;

    int rc = es_decode(c.code, c.len, mode, EST_CODE, &c.d);
    if (rc == ES_DECODE_INVALID && (t.f & T_VSIB) &&
        (g.index == g.reg || g.index == g.vvvv || g.vvvv == g.reg)) {
        // a gather whose destination, index and mask are not three
        // registers: #UD (SDM Vol. 2, VPGATHERDD), which the decoder
        // already knows; the case is kept, reported as "invalid"
        memset(&c.d, 0, sizeof c.d);
        c.d.op = ES_OP_INVALID;
        c.d.len = (uint8_t)c.len;
        c.d.mode = (uint8_t)mode;
    } else if (rc != ES_DECODE_OK || c.d.len != c.len) {
        return false;
    }
    memcpy(c.native, c.code, c.len);
    c.nlen = c.len;
    return !emu32 || native_equivalent(g);
}

} // namespace diffhost
