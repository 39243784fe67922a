// diff_values.cc - random operand values for the differential test:
// integers near the edges where flag logic breaks, floats of every class
// in XMM lanes, x87 registers and control/status words.
#include <cstring>

#include "diff_host.h"

namespace diffhost {

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

// Half-precision values (VCVTPH2PS): zeros, ones, infinities, quiet and
// signalling NaNs, denormals, the largest and smallest normals, random
// normals near one, or raw bits.
void hval(Rng &r, uint8_t *x)
{
    static const uint16_t f16[] = {0x0000, 0x8000, 0x3c00, 0xbc00, 0x7c00, 0xfc00, 0x7e00,
                                   0xfe00, 0x7d00, 0x7c01, 0xfd55, 0x0001, 0x83ff, 0x03ff,
                                   0x0400, 0x7bff, 0xfbff, 0x3555, 0x4248};
    bool raw = r.chance(20);
    for (int i = 0; i < 16; i += 2) {
        uint16_t v = (uint16_t)r.next();
        if (!raw)
            v = r.chance(50) ? f16[r.below(sizeof f16 / 2)]
                             : (uint16_t)((r.below(2) << 15) | ((10 + r.below(12)) << 10) |
                                          (r.next() & 0x3ff));
        memcpy(x + i, &v, 2);
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

} // namespace diffhost
