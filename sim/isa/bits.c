/* bits.c - bit tests and scans, byte swaps, and the BMI1/BMI2/ADX/LZCNT/
 * POPCNT extensions: BT, BTS, BTR, BTC, BSF, BSR, LZCNT, TZCNT, POPCNT,
 * BSWAP, MOVBE, ANDN, BEXTR, BLSI, BLSMSK, BLSR, BZHI, PDEP, PEXT, ADCX,
 * ADOX.
 *
 * Undefined flags follow AMD Zen, measured by running each form natively
 * on the Zen host with random operands (see the comments per handler).
 */
#include "ops.h"

/* ---- BT, BTS, BTR, BTC (SDM Vol. 2A, "BT") ----
 *
 * With a register destination, or an immediate offset, the offset is taken
 * modulo the operand width.  With a memory destination and a register
 * offset the offset is a signed integer of the operand size and selects a
 * bit anywhere around the address: the access is the operand-sized word at
 * EA + (offset >> log2(width)) * (width / 8) (floor division), so
 * `bt [x], reg` reads bytes beyond (or before) the operand.
 *
 * Flags: CF = the selected bit; ZF unchanged (SDM); OF, SF, AF and PF are
 * undefined and Zen leaves them unchanged. */

enum { BT_TEST, BT_SET, BT_RESET, BT_COMPLEMENT };

/* The value BTS, BTR or BTC writes back: v with bit `bit` set, cleared
 * or flipped. */
static inline uint64_t bt_apply(uint64_t v, uint64_t bit, int kind)
{
    uint64_t mask = 1ull << bit;
    return kind == BT_SET ? v | mask : kind == BT_RESET ? v & ~mask : v ^ mask;
}

static inline int bt_common(es_machine *m, const es_insn *d, int kind)
{
    const es_operand *o = &d->o[0];
    unsigned sz = o->size, w = sz * 8;
    uint64_t off, v, bit;
    TRY(es_rd(m, d, 1, &off));
    if (o->kind != ES_OPK_MEM || d->o[1].kind == ES_OPK_IMM) {
        bit = off & (w - 1);
        TRY(es_rd(m, d, 0, &v));
        if (kind != BT_TEST)
            TRY(es_wr(m, d, 0, bt_apply(v, bit, kind)));
        es_set_flags(m, (v >> bit) & 1, ES_CF);
        return ES_OK;
    }
    int64_t s = es_sext(off, sz);
    bit = (uint64_t)s & (w - 1);
    uint64_t ea = es_ea(m, d, o) + (uint64_t)((s >> (w == 16 ? 4 : w == 32 ? 5 : 6)) * (int64_t)sz);
    if (d->asize == 4)
        ea = (uint32_t)ea;
    else if (d->asize == 2)
        ea = (uint16_t)ea;
    uint64_t lin = ea + m->seg[o->seg].base;
    if (d->mode != ES_MODE_64)
        lin = (uint32_t)lin;
    TRY(es_load(m, lin, sz, &v));
    if (kind != BT_TEST)
        TRY(es_store(m, lin, sz, bt_apply(v, bit, kind)));
    es_set_flags(m, (v >> bit) & 1, ES_CF);
    return ES_OK;
}

int op_bt(es_machine *m, const es_insn *d) { return bt_common(m, d, BT_TEST); }
int op_bts(es_machine *m, const es_insn *d) { return bt_common(m, d, BT_SET); }
int op_btr(es_machine *m, const es_insn *d) { return bt_common(m, d, BT_RESET); }
int op_btc(es_machine *m, const es_insn *d) { return bt_common(m, d, BT_COMPLEMENT); }

/* ---- scans and counts ---- */

/* BSF/BSR: ZF = (source == 0).  With a zero source the destination is left
 * unchanged, as AMD documents (a 32-bit register is not even zero-extended).
 * The undefined CF, OF, SF, AF, PF: Zen sets them as for a logic result
 * (CF = OF = AF = 0) of the bit index found, or of 0 when there is none. */
static inline void bsf_flags(es_machine *m, uint64_t index, int zero)
{
    uint64_t f = zero ? ES_ZF | ES_PF : es_flags_logic(index, 1) & ~ES_ZF;
    es_set_flags(m, f, ES_ARITH_FLAGS);
}

static inline __attribute__((always_inline)) int
bit_scan(es_machine *m, const es_insn *d, int reverse)
{
    uint64_t s;
    TRY(es_rd(m, d, 1, &s));
    if (s == 0) {
        bsf_flags(m, 0, 1);
        return ES_OK;
    }
    uint64_t r = reverse ? (uint64_t)(63 - __builtin_clzll(s)) : (uint64_t)__builtin_ctzll(s);
    TRY(es_wr(m, d, 0, r));
    bsf_flags(m, r, 0);
    return ES_OK;
}

int op_bsf(es_machine *m, const es_insn *d) { return bit_scan(m, d, 0); }
int op_bsr(es_machine *m, const es_insn *d) { return bit_scan(m, d, 1); }

/* LZCNT/TZCNT: CF = (source == 0), ZF = (result == 0); of the undefined
 * ones Zen clears SF, AF and PF and leaves OF unchanged. */
#define CNT_FLAGS (ES_CF | ES_ZF | ES_SF | ES_AF | ES_PF)
static inline __attribute__((always_inline)) int
zero_count(es_machine *m, const es_insn *d, int leading)
{
    uint64_t s;
    unsigned w = d->o[0].size * 8;
    TRY(es_rd(m, d, 1, &s));
    uint64_t r = !s ? w
                 : leading ? (uint64_t)(__builtin_clzll(s) - (64 - w))
                           : (uint64_t)__builtin_ctzll(s);
    TRY(es_wr(m, d, 0, r));
    es_set_flags(m, (s ? 0 : ES_CF) | (r ? 0 : ES_ZF), CNT_FLAGS);
    return ES_OK;
}

int op_lzcnt(es_machine *m, const es_insn *d) { return zero_count(m, d, 1); }
int op_tzcnt(es_machine *m, const es_insn *d) { return zero_count(m, d, 0); }

/* POPCNT: ZF = (source == 0), the other five cleared (SDM). */
int op_popcnt(es_machine *m, const es_insn *d)
{
    uint64_t s;
    TRY(es_rd(m, d, 1, &s));
    TRY(es_wr(m, d, 0, (uint64_t)__builtin_popcountll(s)));
    es_set_flags(m, s ? 0 : ES_ZF, ES_ARITH_FLAGS);
    return ES_OK;
}

/* ---- byte order ---- */

static inline uint64_t bswap_sz(uint64_t v, unsigned sz)
{
    switch (sz) {
    case 2: return __builtin_bswap16((uint16_t)v);
    case 4: return __builtin_bswap32((uint32_t)v);
    default: return __builtin_bswap64(v);
    }
}

/* BSWAP r16 is undefined (SDM); Zen writes 0 to the low 16 bits (as if it
 * swapped the zero-extended 32-bit value and kept its low half), leaving
 * bits 16..63 alone. */
int op_bswap(es_machine *m, const es_insn *d)
{
    uint64_t v;
    unsigned sz = d->o[0].size;
    TRY(es_rd(m, d, 0, &v));
    return es_wr(m, d, 0, sz == 2 ? 0 : bswap_sz(v, sz)) ? ES_FAULT : ES_OK;
}

/* MOVBE: a load or store with the bytes reversed; no flags. */
int op_movbe(es_machine *m, const es_insn *d)
{
    uint64_t v;
    TRY(es_rd(m, d, 1, &v));
    return es_wr(m, d, 0, bswap_sz(v, d->o[0].size)) ? ES_FAULT : ES_OK;
}

/* ---- BMI1 / BMI2 ---- */

/* Flags of the BMI1/BMI2 logic group: ZF and SF from the result, OF = 0,
 * CF as given; the undefined AF and PF are, on Zen, those of a logic
 * result (AF = 0, PF = parity of the low byte). */
static inline void bmi_flags(es_machine *m, uint64_t r, unsigned sz, int cf)
{
    es_set_flags(m, es_flags_logic(r, sz) | (cf ? ES_CF : 0), ES_ARITH_FLAGS);
}

int op_andn(es_machine *m, const es_insn *d)
{
    uint64_t a, b;
    unsigned sz = d->o[0].size;
    TRY(es_rd(m, d, 1, &a));
    TRY(es_rd(m, d, 2, &b));
    uint64_t r = ~a & b & es_mask(sz);
    TRY(es_wr(m, d, 0, r));
    bmi_flags(m, r, sz, 0);
    return ES_OK;
}

/* BEXTR dest, src, ctl: ctl[7:0] = start, ctl[15:8] = length.  ZF from
 * the result, CF = OF = 0; of the undefined ones Zen sets AF, clears SF and
 * computes PF from the result. */
int op_bextr(es_machine *m, const es_insn *d)
{
    uint64_t s, c;
    unsigned sz = d->o[0].size, w = sz * 8;
    TRY(es_rd(m, d, 1, &s));
    TRY(es_rd(m, d, 2, &c));
    unsigned start = c & 0xff, len = (c >> 8) & 0xff;
    uint64_t r = start < w ? s >> start : 0;
    if (len < 64)
        r &= (1ull << len) - 1;
    TRY(es_wr(m, d, 0, r));
    es_set_flags(m, (es_flags_logic(r, sz) & ~ES_SF) | ES_AF, ES_ARITH_FLAGS);
    return ES_OK;
}

/* BLSI (lowest set bit; CF = source != 0), BLSMSK (mask up to it) and
 * BLSR (reset it); CF = source == 0 for the last two. */
enum { BLS_ISOLATE, BLS_MASK, BLS_RESET };

static inline __attribute__((always_inline)) int
bls(es_machine *m, const es_insn *d, int kind)
{
    uint64_t s;
    unsigned sz = d->o[0].size;
    TRY(es_rd(m, d, 1, &s));
    uint64_t r = kind == BLS_ISOLATE ? s & (0 - s) : kind == BLS_MASK ? s ^ (s - 1) : s & (s - 1);
    r &= es_mask(sz);
    TRY(es_wr(m, d, 0, r));
    bmi_flags(m, r, sz, kind == BLS_ISOLATE ? s != 0 : s == 0);
    return ES_OK;
}

int op_blsi(es_machine *m, const es_insn *d) { return bls(m, d, BLS_ISOLATE); }
int op_blsmsk(es_machine *m, const es_insn *d) { return bls(m, d, BLS_MASK); }
int op_blsr(es_machine *m, const es_insn *d) { return bls(m, d, BLS_RESET); }

/* BZHI dest, src, index: clear the bits from index[7:0] up; CF = index is
 * past the top bit. */
int op_bzhi(es_machine *m, const es_insn *d)
{
    uint64_t s, c;
    unsigned sz = d->o[0].size, w = sz * 8;
    TRY(es_rd(m, d, 1, &s));
    TRY(es_rd(m, d, 2, &c));
    unsigned n = c & 0xff;
    uint64_t r = n < w ? s & ((1ull << n) - 1) : s;
    TRY(es_wr(m, d, 0, r));
    bmi_flags(m, r, sz, n > w - 1);
    return ES_OK;
}

/* PDEP scatters the low source bits to the mask's set bits; PEXT gathers
 * the source bits under the mask into the low bits. */
static inline __attribute__((always_inline)) int
deposit_extract(es_machine *m, const es_insn *d, int extract)
{
    uint64_t s, mask, r = 0;
    TRY(es_rd(m, d, 1, &s));
    TRY(es_rd(m, d, 2, &mask));
    for (uint64_t k = 1; mask; k <<= 1) {
        uint64_t low = mask & (0 - mask);
        if (extract ? s & low : s & k)
            r |= extract ? k : low;
        mask ^= low;
    }
    return es_wr(m, d, 0, r) ? ES_FAULT : ES_OK;
}

int op_pdep(es_machine *m, const es_insn *d) { return deposit_extract(m, d, 0); }
int op_pext(es_machine *m, const es_insn *d) { return deposit_extract(m, d, 1); }

/* ---- ADX: add with carry through CF only (ADCX) or OF only (ADOX) ---- */

static inline int adx(es_machine *m, const es_insn *d, uint64_t flag)
{
    uint64_t a, b;
    unsigned sz = d->o[0].size;
    TRY(es_rd(m, d, 0, &a));
    TRY(es_rd(m, d, 1, &b));
    uint64_t cin = (m->rflags & flag) != 0;
    uint64_t r = (a + b + cin) & es_mask(sz);
    int carry = r < a || (cin && r == a);
    TRY(es_wr(m, d, 0, r));
    es_set_flags(m, carry ? flag : 0, flag);
    return ES_OK;
}

int op_adcx(es_machine *m, const es_insn *d) { return adx(m, d, ES_CF); }
int op_adox(es_machine *m, const es_insn *d) { return adx(m, d, ES_OF); }

