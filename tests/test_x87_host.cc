// x87 host comparisons (64-bit mode): the same bytes run natively in this
// process and in the simulator, each followed by FNSAVE; results, the
// FNSAVE image and the flags must match (test_x87.cc says which fields
// are skipped and why).  Helpers in x87_util.h.

#include <gtest/gtest.h>

#include "x87_util.h"

TEST(X87Host, Arithmetic)
{
    // d9 e8 fld1 / d9 eb fldpi / de c1 faddp / dd 03 fld qword [rbx] /
    // d8 c9 fmul st0, st1 / dc 7b 08 fdivr qword [rbx+8] / dc e9 fsub st1, st0 /
    // d8 e9 fsubr st0, st1 / de f9 fdivp / da 43 10 fiadd dword [rbx+0x10] /
    // de 6b 14 fisubr word [rbx+0x14] / d8 43 18 fadd dword [rbx+0x18] /
    // dc e1 fsubr st1, st0 / de f1 fdivrp / d9 fa fsqrt / db 7b 20 fstp tbyte [rbx+0x20] /
    // d9 e8 fld1 / d9 ee fldz / de f9 fdivp (1/0 -> +inf, ZE) / dd 5b 30 fstp qword [rbx+0x30]
    Bytes d;
    put(d, 0, 0.1);
    put(d, 8, -7.25);
    put(d, 0x10, (int32_t)123456789);
    put(d, 0x14, (int16_t)-300);
    put(d, 0x18, 3.3f);
    same_as_host({0xd9, 0xe8, 0xd9, 0xeb, 0xde, 0xc1, 0xdd, 0x03, 0xd8, 0xc9, 0xdc, 0x7b, 0x08,
                  0xdc, 0xe9, 0xd8, 0xe9, 0xde, 0xf9, 0xda, 0x43, 0x10, 0xde, 0x6b, 0x14, 0xd8,
                  0x43, 0x18, 0xdc, 0xe1, 0xde, 0xf1, 0xd9, 0xfa, 0xdb, 0x7b, 0x20, 0xd9, 0xe8,
                  0xd9, 0xee, 0xde, 0xf9, 0xdd, 0x5b, 0x30},
                 d);
}

TEST(X87Host, RoundingAndPrecisionControl)
{
    // for each control word: d9 6b 40 fldcw [rbx+0x40] (patched) / dd 03 fld qword [rbx] /
    // dc 7b 08 fdivr qword [rbx+8] / d9 c0 fld st0 / d9 fa fsqrt /
    // d9 fc frndint / d9 5b 10 fstp dword [rbx+0x10] / dd 53 18 fst qword [rbx+0x18] /
    // df 7b 20 fistp qword [rbx+0x20] / d9 eb fldpi / db 7b 28 fstp tbyte [rbx+0x28]
    for (uint16_t cw : {0x037f, 0x077f, 0x0b7f, 0x0f7f, 0x027f, 0x007f, 0x0e7f}) {
        Bytes d;
        put(d, 0, 3.0);
        put(d, 8, 200.0);
        put(d, 0x40, cw);
        SCOPED_TRACE(cw);
        same_as_host({0xd9, 0x6b, 0x40, 0xdd, 0x03, 0xdc, 0x7b, 0x08, 0xd9, 0xc0, 0xd9, 0xfa,
                      0xd9, 0xfc, 0xd9, 0x5b, 0x10, 0xdd, 0x53, 0x18, 0xdf, 0x7b, 0x20, 0xd9,
                      0xeb, 0xdb, 0x7b, 0x28},
                     d);
    }
}

TEST(X87Host, StackFaults)
{
    // overflow by FLD m32, FLD st(i), FILD and FLDPI; underflow by FXCH, FCHS,
    // FCOM, FSTP st(i), FPTAN and FYL2X
    Bytes d;
    put(d, 0, 2.5f);
    Bytes nine;
    for (int i = 0; i < 8; i++)
        nine.insert(nine.end(), {0xd9, 0xe8}); // fld1 x8
    for (const Bytes &tail : std::vector<Bytes>{
             {0xd9, 0x03},       // fld dword [rbx]
             {0xd9, 0xc3},       // fld st(3)
             {0xdb, 0x03},       // fild dword [rbx]
             {0xd9, 0xeb},       // fldpi
             {0xd9, 0xf2},       // fptan
             {0xd9, 0xfb},       // fsincos
             {0xd9, 0xf4},       // fxtract
         }) {
        Bytes code = nine;
        code.insert(code.end(), tail.begin(), tail.end());
        SCOPED_TRACE(testing::PrintToString(tail));
        same_as_host(code, d);
    }
    for (const Bytes &code : std::vector<Bytes>{
             {0xd9, 0xe8, 0xd9, 0xc9},             // fld1 / fxch st(1)
             {0xd9, 0xe0},                         // fchs
             {0xd9, 0xe8, 0xd8, 0xd3},             // fld1 / fcom st(3)
             {0xd9, 0xe8, 0xdd, 0xdb},             // fld1 / fstp st(3) (fine)
             {0xdd, 0xda},                         // fstp st(2) from empty
             {0xd9, 0xf2},                         // fptan on empty
             {0xd9, 0xe8, 0xd9, 0xf1},             // fld1 / fyl2x
             {0xd9, 0xe8, 0xd9, 0xfd},             // fld1 / fscale
             {0xd9, 0xe8, 0xda, 0xc1},             // fld1 / fcmovb st0, st(1)
             {0xde, 0xd9},                         // fcompp
             {0xd9, 0xe4},                         // ftst
             {0xd9, 0xe5},                         // fxam
             {0xdb, 0xf1},                         // fcomi st0, st(1)
         }) {
        SCOPED_TRACE(testing::PrintToString(code));
        same_as_host(code, d);
    }
}

TEST(X87Host, Comparisons)
{
    // values: [rbx] 1.0, [rbx+8] 2.0, [rbx+0x10] QNaN, [rbx+0x18] -0.0, [rbx+0x20] 1.0f,
    // [rbx+0x24] int 2, [rbx+0x28] SNaN (double)
    Bytes d;
    put(d, 0, 1.0);
    put(d, 8, 2.0);
    put(d, 0x10, (double)NAN);
    put(d, 0x18, -0.0);
    put(d, 0x20, 1.0f);
    put(d, 0x24, (int32_t)2);
    put(d, 0x28, (uint64_t)0x7ff4000000000000ull);
    const uint8_t lda = 0x03, ldb = 0x43; // modrm for [rbx], [rbx+d8]
    auto fld = [&](uint8_t off) { return off ? Bytes{0xdd, ldb, off} : Bytes{0xdd, lda}; };
    // each: load two values, compare, store FSW: dd 7b 60 fnstsw [rbx+0x60]
    struct C {
        uint8_t a, b;
        Bytes cmp;
    } cases[] = {
        {0, 8, {0xd8, 0xd1}},          // fcom st(1)
        {8, 0, {0xd8, 0xd9}},          // fcomp st(1)
        {0, 0, {0xde, 0xd9}},          // fcompp
        {0x10, 0, {0xdd, 0xe1}},       // fucom st(1) with QNaN
        {0x10, 0, {0xd8, 0xd1}},       // fcom st(1) with QNaN: IE
        {0x28, 0, {0xdd, 0xe9}},       // fucomp st(1) with SNaN: IE
        {0x10, 0, {0xda, 0xe9}},       // fucompp
        {0x18, 0, {0xd9, 0xe4}},       // ftst on -0
        {0, 8, {0xd8, 0x53, 0x20}},    // fcom dword [rbx+0x20]
        {0, 8, {0xdc, 0x5b, 0x08}},    // fcomp qword [rbx+8]
        {0, 8, {0xda, 0x53, 0x24}},    // ficom dword [rbx+0x24]
        {0, 8, {0xdb, 0xf1}},          // fcomi
        {8, 0, {0xdf, 0xe9}},          // fucomip
        {0x28, 0, {0xdb, 0xe9}},       // fucomi with SNaN
        {0, 0x10, {0xdf, 0xf1}},       // fcomip with QNaN
    };
    for (auto &c : cases) {
        Bytes code = fld(c.b);
        Bytes la = fld(c.a);
        code.insert(code.end(), la.begin(), la.end());
        code.insert(code.end(), c.cmp.begin(), c.cmp.end());
        code.insert(code.end(), {0xdd, 0x7b, 0x60});
        SCOPED_TRACE(testing::PrintToString(c.cmp));
        same_as_host(code, d);
    }
}

TEST(X87Host, FxamClasses)
{
    // fld each value, d9 e5 fxam, dd 7b 60 fnstsw [rbx+0x60], dd d8 fstp st0
    Bytes d;
    put80(d, 0x00, 0x8000000000000000ull, 0x3fff);  // normal
    put80(d, 0x10, 0, 0x8000);                      // -0
    put80(d, 0x20, 0x0000000000000001ull, 0x0000);  // denormal
    put80(d, 0x30, 0x8000000000000000ull, 0x7fff);  // inf
    put80(d, 0x40, 0xc000000000000000ull, 0xffff);  // QNaN
    put80(d, 0x50, 0x4000000000000000ull, 0x3fff);  // unnormal (unsupported)
    put80(d, 0x60, 0x8000000000000000ull, 0x0000);  // pseudo-denormal
    for (uint8_t off = 0; off <= 0x60; off += 0x10) {
        SCOPED_TRACE(off);
        same_as_host({0xdb, 0x6b, off, 0xd9, 0xe5, 0xdd, 0x7b, 0x70, 0xd8, 0x03, 0xdd, 0x7b,
                      0x72, 0xdd, 0xd8},
                     d); // also d8 03 fadd dword [rbx] on it (unsupported -> IE)
    }
}

TEST(X87Host, TranscendentalAndFriends)
{
    // [rbx] x, [rbx+8] y as doubles; fld y / fld x / op / fstp tbyte [rbx+0x10] /
    // fstp tbyte [rbx+0x20] (second result or y) / fnstsw [rbx+0x30]
    struct Op {
        Bytes b;
    } ops[] = {
        {{0xd9, 0xfe}}, // fsin
        {{0xd9, 0xff}}, // fcos
        {{0xd9, 0xfb}}, // fsincos
        {{0xd9, 0xf2}}, // fptan
        {{0xd9, 0xf3}}, // fpatan
        {{0xd9, 0xf1}}, // fyl2x
        {{0xd9, 0xf9}}, // fyl2xp1
        {{0xd9, 0xf0}}, // f2xm1
        {{0xd9, 0xfd}}, // fscale
        {{0xd9, 0xf4}}, // fxtract
        {{0xd9, 0xf8}}, // fprem
        {{0xd9, 0xf5}}, // fprem1
        {{0xd9, 0xfc}}, // frndint
        {{0xd9, 0xfa}}, // fsqrt
    };
    const double xs[][2] = {{0.5, 3.0},   {-0.75, 2.0},  {1e19, 1.0},     {100.0, 7.0},
                            {-13.5, 2.5}, {0.0, 1.0},    {-1.0, 0.0},     {1e300, -3.5},
                            {INFINITY, 2.0}, {2.0, INFINITY}, {0x1p70, 3.0}, {1e-310, 5.0}};
    for (auto &op : ops) {
        for (auto &x : xs) {
            Bytes d;
            put(d, 0, x[0]);
            put(d, 8, x[1]);
            Bytes code = {0xdd, 0x43, 0x08, 0xdd, 0x03};
            code.insert(code.end(), op.b.begin(), op.b.end());
            code.insert(code.end(), {0xdd, 0x7b, 0x30, 0xdb, 0x7b, 0x10, 0xdb, 0x7b, 0x20});
            SCOPED_TRACE(testing::PrintToString(op.b) + " x=" + std::to_string(x[0]) +
                         " y=" + std::to_string(x[1]));
            same_as_host(code, d);
        }
    }
}

TEST(X87Host, IntegerAndBcd)
{
    // fld qword [rbx+off] / db 53 40 fist dword [rbx+0x40] / df 53 44 fist word [rbx+0x44] /
    // dd 4b 48 fisttp qword [rbx+0x48] / fld again / df 73 50 fbstp [rbx+0x50] /
    // df 63 50 fbld [rbx+0x50] / df 7b 60 fistp qword [rbx+0x60] / dd 7b 70 fnstsw [rbx+0x70]
    const double vals[] = {2.5, -3.5, 65535.7, -1e10, 1e19, NAN, 123456789012.0, -0.4};
    for (double v : vals) {
        Bytes d;
        put(d, 0, v);
        SCOPED_TRACE(v);
        same_as_host({0xdd, 0x03, 0xdb, 0x53, 0x40, 0xdf, 0x53, 0x44, 0xdd, 0x4b, 0x48, 0xdd,
                      0x03, 0xdf, 0x73, 0x50, 0xdf, 0x63, 0x50, 0xdf, 0x7b, 0x60, 0xdd, 0x7b,
                      0x70},
                     d);
    }
}

TEST(X87Host, MiscControl)
{
    // d9 e8 fld1 / d9 eb fldpi / d9 f7 fincstp / d9 f6 fdecstp / dd c1 ffree st(1) /
    // d9 c9 fxch st(1) / d9 e1 fabs / d9 e0 fchs / d9 d0 fnop / d9 ea fldl2e / d9 e9 fldl2t /
    // d9 ec fldlg2 / d9 ed fldln2 / df e0 fnstsw ax / 66 89 43 40 mov [rbx+0x40], ax /
    // d9 7b 42 fnstcw [rbx+0x42] / d9 73 50 fnstenv [rbx+0x50] / db e2 fnclex /
    // d9 63 50 fldenv [rbx+0x50] / dd f0... (none) / df c0 ffreep st0 / dd 7b 44 fnstsw [rbx+0x44]
    same_as_host({0xd9, 0xe8, 0xd9, 0xeb, 0xd9, 0xf7, 0xd9, 0xf6, 0xdd, 0xc1, 0xd9, 0xc9,
                  0xd9, 0xe1, 0xd9, 0xe0, 0xd9, 0xd0, 0xd9, 0xea, 0xd9, 0xe9, 0xd9, 0xec,
                  0xd9, 0xed, 0xdf, 0xe0, 0x66, 0x89, 0x43, 0x40, 0xd9, 0x7b, 0x42, 0xd9,
                  0x73, 0x50, 0xdb, 0xe2, 0xd9, 0x63, 0x50, 0xdf, 0xc0, 0xdd, 0x7b, 0x44},
                 {}, {{0x50 + 12, 0x50 + 16}, {0x50 + 20, 0x50 + 26}});
}

TEST(X87Host, UnmaskedExceptions)
{
    // d9 6b 40 fldcw [rbx+0x40] / db 6b 10 fld tbyte [rbx+0x10] (b) /
    // db 2b fld tbyte [rbx] (a) / op -- then only non-waiting instructions
    // follow (the appended FNSAVE), so the host's pending exception is
    // never delivered and its FPU state can be compared: which results are
    // written, which pops happen, the biased overflow/underflow results,
    // ES and B.
    struct C {
        uint16_t cw;
        uint64_t am; uint16_t ae; // a
        uint64_t bm; uint16_t be; // b
        Bytes op;
    } cases[] = {
        {0x37e, 1ull << 63, 0xbfff, 1ull << 63, 0x3fff, {0xd9, 0xfa}},              // fsqrt(-1)
        {0x37e, 1ull << 63, 0x7fff, 1ull << 63, 0xffff, {0xd8, 0xc1}},              // inf + -inf
        {0x37e, 0xc000000000000000ull, 0x7fff, 1ull << 63, 0x3fff, {0xd8, 0xd1}},   // fcom QNaN
        {0x37e, 1ull << 63, 0xbfff, 1ull << 63, 0x3fff, {0xd9, 0xf1}},              // fyl2x log2(-1)
        {0x37e, 1ull << 63, 0x403f, 0, 0, {0xdb, 0x5b, 0x30}},                      // fistp dword 2^64
        {0x37b, 0, 0, 1ull << 63, 0x3fff, {0xde, 0xf1}},                            // fdivrp 1/0
        {0x37d, 1, 0, 1ull << 63, 0x3fff, {0xde, 0xc1}},                            // faddp denormal
        {0x377, 1ull << 63, 0x7000, 1ull << 63, 0x7000, {0xd8, 0xc9}},              // fmul overflow
        {0x377, 1ull << 63, 0x7000, 0, 0, {0xd9, 0x5b, 0x30}},                      // fstp dword huge
        {0x377, 1ull << 63, 0x4100, 1ull << 63, 0x3fff, {0xd9, 0xfd}},              // fscale overflow
        {0x36f, 1ull << 63, 0x0100, 1ull << 63, 0x0100, {0xd8, 0xc9}},              // fmul underflow
        {0x36f, 1ull << 63, 0x0100, 1ull << 63, 0x7f00, {0xde, 0xf9}},              // fdivp underflow
        {0x35f, 1ull << 63, 0x3fff, 0xc000000000000000ull, 0x4000, {0xde, 0xf9}},   // 1/3: PE
        {0x35f, 1ull << 63, 0x3fff, 0xc000000000000000ull, 0x4000, {0xdd, 0x5b, 0x30}}, // fstp qword
    };
    for (auto &c : cases) {
        Bytes d;
        put80(d, 0, c.am, c.ae);
        put80(d, 0x10, c.bm, c.be);
        put(d, 0x40, c.cw);
        Bytes code = {0xd9, 0x6b, 0x40, 0xdb, 0x6b, 0x10, 0xdb, 0x2b};
        code.insert(code.end(), c.op.begin(), c.op.end());
        SCOPED_TRACE(testing::PrintToString(c.op) + " fcw " + std::to_string(c.cw));
        same_as_host(code, d);
    }
    // stack overflow with IE unmasked: the ninth FLD1 changes nothing but FSW
    Bytes d;
    put(d, 0x40, (uint16_t)0x37e);
    Bytes code = {0xd9, 0x6b, 0x40};
    for (int i = 0; i < 9; i++)
        code.insert(code.end(), {0xd9, 0xe8});
    same_as_host(code, d);
}

TEST(X87Host, SixteenBitEnvironmentFormats)
{
    // d9 e8 fld1 / d9 eb fldpi / 66 d9 73 50 fnstenv [rbx+0x50] (14 bytes) /
    // 66 dd 73 60 fnsave [rbx+0x60] (94 bytes) / 66 dd 63 60 frstor [rbx+0x60] /
    // 66 d9 63 50 fldenv [rbx+0x50] / de c1 faddp
    // skipped: FIP, FCS, FDP, FDS words of the 14-byte headers
    same_as_host({0xd9, 0xe8, 0xd9, 0xeb, 0x66, 0xd9, 0x73, 0x50, 0x66, 0xdd, 0x73, 0x60, 0x66,
                  0xdd, 0x63, 0x60, 0x66, 0xd9, 0x63, 0x50, 0xde, 0xc1},
                 {}, {{0x50 + 6, 0x50 + 14}, {0x60 + 6, 0x60 + 14}});
}

TEST(X87Host, UnmaskedInvalidCompares)
{
    // d9 6b 40 fldcw [rbx+0x40] (0x037e: IM clear) / d9 e8 fld1 / db 2b fld tbyte [rbx]
    // (QNaN) / compare: the condition codes are still written, the pops are not done
    Bytes d;
    put80(d, 0, 0xc000000000000000ull, 0x7fff);
    put(d, 0x40, (uint16_t)0x37e);
    for (const Bytes &cmp : std::vector<Bytes>{{0xd8, 0xd9},    // fcomp st(1)
                                               {0xdb, 0xf1},    // fcomi
                                               {0xdf, 0xf1},    // fcomip
                                               {0xde, 0xd9},    // fcompp
                                               {0xd8, 0xdb},    // fcomp st(3): empty
                                               {0xdb, 0xf3},    // fcomi st(3): empty
                                               {0xd9, 0xe4}}) { // ftst
        Bytes code = {0xd9, 0x6b, 0x40, 0xd9, 0xe8, 0xdb, 0x2b};
        code.insert(code.end(), cmp.begin(), cmp.end());
        SCOPED_TRACE(testing::PrintToString(cmp));
        same_as_host(code, d);
    }
}

TEST(X87Host, UnmaskedLoadsStoresAndOthers)
{
    // [rbx] a (tbyte), [rbx+0x10] b (tbyte), [rbx+0x20] SNaN float, [rbx+0x24] denormal
    // float, [rbx+0x28] int 7, [rbx+0x40] fcw; code: fldcw / fld b / fld a / op
    Bytes d;
    put(d, 0x20, (uint32_t)0x7fa00000u);
    put(d, 0x24, (uint32_t)0x00000003u);
    put(d, 0x28, (int32_t)7);
    struct C {
        uint16_t cw;
        uint64_t am; uint16_t ae;
        uint64_t bm; uint16_t be;
        Bytes op;
    } cases[] = {
        {0x37e, 1ull << 63, 0x3fff, 1ull << 63, 0x3fff, {0xd9, 0x43, 0x20}},       // fld dword SNaN
        {0x37d, 1ull << 63, 0x3fff, 1ull << 63, 0x3fff, {0xd9, 0x43, 0x24}},       // fld dword denormal
        {0x37e, 1ull << 63, 0x3fff, 1ull << 63, 0x3fff, {0xd8, 0x43, 0x20}},       // fadd dword SNaN
        {0x36f, 1ull << 63, 0x0100, 1ull << 63, 0x3fff, {0xd9, 0x5b, 0x30}},       // fstp dword tiny
        {0x37b, 0, 0, 1ull << 63, 0x3fff, {0xd9, 0xf4}},                           // fxtract 0
        {0x37d, 1, 0, 1ull << 63, 0x3fff, {0xd9, 0xfa}},                           // fsqrt denormal
        {0x37e, 1ull << 63, 0x7fff, 1ull << 63, 0x3fff, {0xd9, 0xf2}},             // fptan inf
        {0x37e, 1ull << 63, 0x7fff, 1ull << 63, 0x3fff, {0xd9, 0xfb}},             // fsincos inf
        {0x37b, 0, 0, 1ull << 63, 0x3fff, {0xd9, 0xf1}},                           // fyl2x 1*log2(0)
        {0x37e, 0xc000000000000000ull, 0xffff, 1ull << 63, 0x3fff, {0xdf, 0x5b, 0x30}}, // fistp word NaN
        {0x37e, 0xc000000000000000ull, 0xffff, 1ull << 63, 0x3fff, {0xdf, 0x73, 0x30}}, // fbstp NaN
        {0x37e, 1ull << 63, 0x7fff, 1ull << 63, 0x3fff, {0xd9, 0xf8}},             // fprem inf
        {0x37e, 1ull << 63, 0x3fff, 1ull << 63, 0x3fff, {0xd9, 0xcb}},             // fxch st(3) empty
        {0x37e, 1ull << 63, 0x3fff, 1ull << 63, 0x3fff, {0xd9, 0xc4}},             // fld st(4) empty
        {0x37e, 1ull << 63, 0x3fff, 1ull << 63, 0x3fff, {0xdd, 0xd8, 0xdd, 0xd8, 0xd9, 0xe0}}, // pops then fchs empty
        {0x37e, 1ull << 63, 0x3fff, 1ull << 63, 0x3fff, {0xdd, 0xd8, 0xdd, 0xd8, 0xdd, 0x5b, 0x30}}, // fstp qword empty
        {0x37e, 1ull << 63, 0x3fff, 1ull << 63, 0x3fff, {0xdd, 0xd8, 0xdd, 0xd8, 0xde, 0xc1}},       // faddp empty
        {0x37e, 1ull << 63, 0x3fff, 1ull << 63, 0x3fff, {0xdd, 0xd8, 0xdd, 0xd8, 0xd9, 0xf1}},       // fyl2x empty
        {0x37e, 1ull << 63, 0x3fff, 1ull << 63, 0x3fff, {0xdd, 0xd8, 0xdd, 0xd8, 0xd9, 0xf2}},       // fptan empty
        {0x37e, 1ull << 63, 0x3fff, 1ull << 63, 0x3fff, {0xdd, 0xd8, 0xdd, 0xd8, 0xda, 0x43, 0x28}}, // fiadd empty
    };
    for (auto &c : cases) {
        put80(d, 0, c.am, c.ae);
        put80(d, 0x10, c.bm, c.be);
        put(d, 0x40, c.cw);
        Bytes code = {0xd9, 0x6b, 0x40, 0xdb, 0x6b, 0x10, 0xdb, 0x2b};
        code.insert(code.end(), c.op.begin(), c.op.end());
        SCOPED_TRACE(testing::PrintToString(c.op) + " fcw " + std::to_string(c.cw));
        same_as_host(code, d);
    }
}

TEST(X87Host, FcmovAndControlWordBits)
{
    // dd 03 fld qword [rbx] / dd 43 08 fld qword [rbx+8] / db f1 fcomi st(1) (sets
    // CF/ZF/PF) / d9 ee fldz / then one fcmov st0, st(2) / d9 6b 40 fldcw [rbx+0x40]
    // (0xffff: reserved bits) / d9 7b 42 fnstcw [rbx+0x42]
    const Bytes fcmovs[] = {{0xda, 0xc2}, {0xda, 0xca}, {0xda, 0xd2}, {0xda, 0xda},
                            {0xdb, 0xc2}, {0xdb, 0xca}, {0xdb, 0xd2}, {0xdb, 0xda}};
    const double pairs[][2] = {{1.0, 2.0}, {2.0, 1.0}, {1.0, 1.0}, {NAN, 1.0}};
    for (auto &p : pairs) {
        for (auto &f : fcmovs) {
            Bytes d;
            put(d, 0, p[0]);
            put(d, 8, p[1]);
            put(d, 0x40, (uint16_t)0xffff);
            Bytes code = {0xdd, 0x03, 0xdd, 0x43, 0x08, 0xdb, 0xf1, 0xd9, 0xee};
            code.insert(code.end(), f.begin(), f.end());
            code.insert(code.end(), {0xd9, 0x6b, 0x40, 0xd9, 0x7b, 0x42});
            SCOPED_TRACE(testing::PrintToString(f) + " " + std::to_string(p[0]));
            same_as_host(code, d);
        }
    }
}

TEST(X87Host, AliasEncodings)
{
    // the undocumented aliases real programs (and fuzzers) hit:
    // d9 d9 fstp1 st(1) / dc d1 fcom2 / dc d9 fcomp3 / de d1 fcomp5 / dd c9 fxch4 /
    // df c9 fxch7 / df d1 fstp8 / df d9 fstp9 / df c1 ffreep st(1) /
    // db e0 feni / db e1 fdisi / db e4 fsetpm (no-ops on the 387 and later)
    // each after d9 e8 fld1 / d9 eb fldpi / d9 ee fldz, then df e0 fnstsw ax /
    // 66 89 43 40 mov [rbx+0x40], ax
    for (const Bytes &op : std::vector<Bytes>{{0xd9, 0xd9}, {0xdc, 0xd1}, {0xdc, 0xd9},
                                              {0xde, 0xd1}, {0xdd, 0xc9}, {0xdf, 0xc9},
                                              {0xdf, 0xd1}, {0xdf, 0xd9}, {0xdf, 0xc1},
                                              {0xdb, 0xe0}, {0xdb, 0xe1}, {0xdb, 0xe4}}) {
        Bytes code = {0xd9, 0xe8, 0xd9, 0xeb, 0xd9, 0xee};
        code.insert(code.end(), op.begin(), op.end());
        code.insert(code.end(), {0xdf, 0xe0, 0x66, 0x89, 0x43, 0x40});
        SCOPED_TRACE(testing::PrintToString(op));
        same_as_host(code, {});
    }
}

// Random instruction sequences over random operands, compared with the host.
// All exceptions stay masked (an unmasked one would be delivered natively by
// the next waiting instruction); rounding and precision control vary.
// (Long on purpose: the instruction menu is a table inside the test, next to
// the generator that reads it, so one screen shows what is covered.)
TEST(X87Host, RandomSequences)
{
    // X87_RANDOM_SEED / X87_RANDOM_ITERS explore further than the default run
    const char *seed_env = getenv("X87_RANDOM_SEED"), *iters_env = getenv("X87_RANDOM_ITERS");
    std::mt19937_64 rng(seed_env ? strtoull(seed_env, nullptr, 0) : 0x87);
    const int iters = iters_env ? atoi(iters_env) : 400;
    auto r = [&](uint64_t n) { return (uint64_t)(rng() % n); };
    // disp8 is signed: everything lives in [rbx, rbx+0x80)
    auto mem_in = [&]() { return (uint8_t)(r(8) * 16); };          // loads: 0x00..0x70
    auto mem_out = [&]() { return (uint8_t)(0x40 + r(4) * 16); };  // stores: 0x40..0x70
    auto sti = [&]() { return (uint8_t)r(8); };
    const uint8_t d9_ops[] = {0xe0, 0xe1, 0xe4, 0xe5, 0xe8, 0xe9, 0xea, 0xeb, 0xec, 0xed, 0xee,
                              0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa,
                              0xfb, 0xfc, 0xfd, 0xfe, 0xff, 0xd0};
    // state images: FNSTENV/FLDENV at 0x200, FNSAVE/FRSTOR at 0x240 and
    // FXSAVE(64)/FXRSTOR(64) at 0x300 (disp32 forms); a restore is only
    // generated after its save, so it never loads unmasked exceptions
    bool have_env = false, have_save = false, have_fx = false;
    auto gen = [&]() -> Bytes {
        if (r(12) == 0) {
            switch (r(6)) {
            case 0: have_env = true; return {0xd9, 0xb3, 0x00, 0x02, 0x00, 0x00};
            case 1: if (have_env) return {0xd9, 0xa3, 0x00, 0x02, 0x00, 0x00}; break;
            case 2: have_save = true; return {0xdd, 0xb3, 0x40, 0x02, 0x00, 0x00};
            case 3: if (have_save) return {0xdd, 0xa3, 0x40, 0x02, 0x00, 0x00}; break;
            case 4: have_fx = true;
                return r(2) ? Bytes{0x48, 0x0f, 0xae, 0x83, 0x00, 0x03, 0x00, 0x00}
                            : Bytes{0x0f, 0xae, 0x83, 0x00, 0x03, 0x00, 0x00};
            default:
                if (have_fx)
                    return r(2) ? Bytes{0x48, 0x0f, 0xae, 0x8b, 0x00, 0x03, 0x00, 0x00}
                                : Bytes{0x0f, 0xae, 0x8b, 0x00, 0x03, 0x00, 0x00};
                break;
            }
        }
        switch (r(16)) {
        case 0: // fld m32/m64/m80, fild m16/m32/m64
            switch (r(6)) {
            case 0: return {0xd9, 0x43, mem_in()};
            case 1: return {0xdd, 0x43, mem_in()};
            case 2: return {0xdb, 0x6b, mem_in()};
            case 3: return {0xdf, 0x43, mem_in()};
            case 4: return {0xdb, 0x43, mem_in()};
            default: return {0xdf, 0x6b, mem_in()};
            }
        case 1: return {0xd9, (uint8_t)(0xc0 + sti())};                  // fld st(i)
        case 2: return {0xd8, (uint8_t)(0xc0 + r(64))};                  // D8 register forms
        case 3: return {0xdc, (uint8_t)(0xc0 + r(64))};                  // DC register forms
        case 4: { // DE register forms (DE D8+i is only defined for i = 1, FCOMPP)
            uint8_t mb = (uint8_t)(0xc0 + r(64));
            return {0xde, (uint8_t)((mb & 0xf8) == 0xd8 ? 0xd9 : mb)};
        }
        case 5: return {(uint8_t)(0xd8 + 2 * r(4)), (uint8_t)(0x43 + 8 * r(8)), mem_in()}; // memory arith/compare
        case 6: return {0xd9, d9_ops[r(sizeof d9_ops)]};                  // D9 specials
        case 7: return {0xd9, d9_ops[r(sizeof d9_ops)]};
        case 8: // stores
            switch (r(10)) {
            case 0: return {0xd9, (uint8_t)(0x53 + 8 * r(2)), mem_out()}; // fst/fstp m32
            case 1: return {0xdd, (uint8_t)(0x53 + 8 * r(2)), mem_out()}; // fst/fstp m64
            case 2: return {0xdb, 0x7b, mem_out()};                       // fstp m80
            case 3: return {0xdf, (uint8_t)(0x4b + 8 * r(3)), mem_out()}; // fisttp/fist/fistp m16
            case 4: return {0xdb, (uint8_t)(0x4b + 8 * r(3)), mem_out()}; // m32
            case 5: return {0xdd, 0x4b, mem_out()};                       // fisttp m64
            case 6: return {0xdf, 0x7b, mem_out()};                       // fistp m64
            case 7: return {0xdf, 0x73, mem_out()};                       // fbstp
            default: return {0xdd, (uint8_t)(0xd0 + r(16))};              // fst/fstp st(i)
            }
        case 9: return {0xda, (uint8_t)(0xc0 + r(32))};                  // fcmov b/e/be/u
        case 10: return {0xdb, (uint8_t)(0xc0 + r(32))};                 // fcmov nb/ne/nbe/nu
        case 11: return {0xdb, (uint8_t)(0xe8 + r(16))};                 // fucomi/fcomi
        case 12: return {0xdf, (uint8_t)(0xe8 + r(16))};                 // fucomip/fcomip
        case 13: // compares and misc
            switch (r(7)) {
            case 0: return {0xdd, (uint8_t)(0xe0 + r(16))};               // fucom/fucomp
            case 1: return {0xda, 0xe9};                                  // fucompp
            case 2: return {0xde, 0xd9};                                  // fcompp
            case 3: return {0xdd, (uint8_t)(0xc0 + sti())};               // ffree
            case 4: return {0xd9, (uint8_t)(0xc8 + sti())};               // fxch
            case 5: return {0xdb, 0xe2};                                  // fnclex
            default: return {0xdf, 0x63, mem_out()};                      // fbld of stored data
            }
        case 14: // control word: random RC/PC, all exceptions masked
        {
            uint16_t cw = (uint16_t)(0x7f | (r(16) << 8));
            uint8_t off = (uint8_t)(0x7c + 2 * r(2));
            // 66 c7 43 off imm16  mov word [rbx+off], cw / d9 6b off  fldcw
            return {0x66, 0xc7, 0x43, off, (uint8_t)cw, (uint8_t)(cw >> 8), 0xd9, 0x6b, off};
        }
        default: // status: df e0 fnstsw ax / 66 89 43 78 mov [rbx+0x78], ax, or fnstsw m
            return r(2) ? Bytes{0xdf, 0xe0, 0x66, 0x89, 0x43, 0x78} : Bytes{0xdd, 0x7b, 0x7a};
        }
    };
    auto special = [&](Bytes &d, size_t off) {
        static const uint16_t exps[] = {0x0000, 0x0001, 0x3ffe, 0x3fff, 0x4000, 0x403e,
                                        0x7ffe, 0x7fff, 0x3fc0, 0x43e0, 0x0200, 0x4100};
        uint64_t mant = rng();
        switch (r(4)) {
        case 0: mant |= 1ull << 63; break;
        case 1: mant &= 0xffffffff00000000ull; mant |= 1ull << 63; break;
        case 2: mant = 1ull << 63; break;
        default: break; // anything, unnormals included
        }
        put80(d, off, mant, (uint16_t)(exps[r(12)] | (r(2) << 15)));
    };
    int failures = 0;
    for (int iter = 0; iter < iters && failures < 5; iter++) {
        Bytes d(0x100, 0);
        for (size_t off = 0; off < 0x80; off += 16) {
            switch (r(4)) {
            case 0: special(d, off); break;
            case 1: put(d, off, (double)((int64_t)rng() % 100000) / (double)(r(1000) + 1)); break;
            case 2: put(d, off, (float)((int32_t)rng() % 1000) * 0.37f); put(d, off + 8, rng()); break;
            default: put(d, off, rng()); put(d, off + 8, rng()); break;
            }
        }
        Bytes code;
        have_env = have_save = have_fx = false;
        std::vector<size_t> ends; // instruction boundaries
        int n = 4 + (int)r(14);
        for (int i = 0; i < n; i++) {
            Bytes b = gen();
            code.insert(code.end(), b.begin(), b.end());
            ends.push_back(code.size());
        }
        if (r(3) == 0) {
            // a last instruction with some exceptions unmasked: db e2 fnclex /
            // mov word [rbx+0x7c], cw / d9 6b 7c fldcw / op; only the appended
            // FNSAVE (non-waiting) follows, so the host never delivers it
            uint16_t cw = (uint16_t)(0x40 | (r(16) << 8) | r(64));
            Bytes t = {0xdb, 0xe2, 0x66, 0xc7, 0x43, 0x7c, (uint8_t)cw, (uint8_t)(cw >> 8),
                       0xd9, 0x6b, 0x7c};
            code.insert(code.end(), t.begin(), t.end());
            ends.push_back(code.size());
            Bytes b = gen();
            code.insert(code.end(), b.begin(), b.end());
            ends.push_back(code.size());
        }
        auto hex = [](const Bytes &c, size_t from, size_t to) {
            std::string h;
            for (size_t i = from; i < to; i++) {
                char t[4];
                snprintf(t, sizeof t, "%02x ", c[i]);
                h += t;
            }
            return h;
        };
        std::vector<std::pair<size_t, size_t>> skip = {
            {0x20c, 0x210}, {0x214, 0x21a},  // FNSTENV image: FIP, FDP, FDS
            {0x24c, 0x250}, {0x254, 0x25a},  // FNSAVE image: the same
            {0x31c, 0x320}, {0x3a0, 0x500}}; // FXSAVE image: MXCSR_MASK, XMM
        if (!host_is_amd())
            skip.push_back({0x308, 0x318}); // Intel stores FIP/FDP addresses
        std::string diff = host_diff(code, d, skip, true);
        if (diff.empty())
            continue;
        // name the first instruction after which the states differ
        size_t k = 0;
        for (; k < ends.size(); k++) {
            std::string pd = host_diff(Bytes(code.begin(), code.begin() + ends[k]), d, skip, true);
            if (!pd.empty()) {
                diff = pd;
                break;
            }
        }
        size_t from = k ? ends[k - 1] : 0, to = k < ends.size() ? ends[k] : code.size();
        ADD_FAILURE() << "iteration " << iter << ": " << hex(code, 0, code.size())
                      << "\n  first difference after instruction " << k << " ("
                      << hex(code, from, to) << "):" << diff;
        failures++;
    }
}

TEST(X87Host, FnstenvMasksAndClearsPending)
{
    // 66 c7 43 40 7b 03 mov word [rbx+0x40], 0x037b / d9 6b 40 fldcw (ZE unmasked) /
    // d9 e8 fld1 / d9 ee fldz / de f9 fdivp (ZE pending: ES, B) / d9 73 50 fnstenv
    // [rbx+0x50] (masks everything: ES and B clear) / d9 d0 fnop (waits: no #MF)
    same_as_host({0x66, 0xc7, 0x43, 0x40, 0x7b, 0x03, 0xd9, 0x6b, 0x40, 0xd9, 0xe8, 0xd9, 0xee,
                  0xde, 0xf9, 0xd9, 0x73, 0x50, 0xd9, 0xd0},
                 {}, {{0x50 + 12, 0x50 + 16}, {0x50 + 20, 0x50 + 26}});
}
