/* crypto.c - AES-NI (AESENC, AESENCLAST, AESDEC, AESDECLAST, AESIMC,
 * AESKEYGENASSIST), PCLMULQDQ and the SHA extensions, legacy SSE encodings (an m128 source
 * 16-byte aligned).  The AES steps follow FIPS-197 on the state as the
 * SDM holds it (byte 4c + r is row r of column c); the S-box is computed
 * from its definition (inverse in GF(2^8), then the affine map) rather
 * than kept as a table. */
#include "sse.h"

/* ---- GF(2^8) with the AES polynomial x^8 + x^4 + x^3 + x + 1 ---- */

static uint8_t gmul(uint8_t a, uint8_t b)
{
    uint8_t p = 0;
    for (; b; b >>= 1) {
        if (b & 1)
            p ^= a;
        a = (uint8_t)((a << 1) ^ (a & 0x80 ? 0x1b : 0));
    }
    return p;
}

/* a^254 = a^-1 (0 for 0) */
static uint8_t ginv(uint8_t a)
{
    uint8_t r = 1, x = a;
    for (unsigned e = 254; e; e >>= 1) {
        if (e & 1)
            r = gmul(r, x);
        x = gmul(x, x);
    }
    return a ? r : 0;
}

static uint8_t rotl8(uint8_t b, unsigned n)
{
    return (uint8_t)(b << n | b >> (8 - n));
}

static uint8_t sbox(uint8_t x)
{
    uint8_t b = ginv(x);
    return b ^ rotl8(b, 1) ^ rotl8(b, 2) ^ rotl8(b, 3) ^ rotl8(b, 4) ^ 0x63;
}

static uint8_t inv_sbox(uint8_t y)
{
    return ginv(rotl8(y, 1) ^ rotl8(y, 3) ^ rotl8(y, 6) ^ 0x05);
}

/* ---- the round steps on a 16-byte state ---- */

static void shift_rows(uint8_t s[16], bool inverse)
{
    uint8_t t[16];
    for (int c = 0; c < 4; c++)
        for (int r = 0; r < 4; r++)
            t[4 * c + r] = s[4 * ((inverse ? c - r + 4 : c + r) % 4) + r];
    memcpy(s, t, 16);
}

static void sub_bytes(uint8_t s[16], bool inverse)
{
    for (int i = 0; i < 16; i++)
        s[i] = inverse ? inv_sbox(s[i]) : sbox(s[i]);
}

/* each column times the (Inv)MixColumns matrix, whose rows rotate the
 * first one: 02 03 01 01, or 0e 0b 0d 09 */
static void mix_columns(uint8_t s[16], bool inverse)
{
    static const uint8_t fwd[4] = {2, 3, 1, 1}, inv[4] = {14, 11, 13, 9};
    const uint8_t *k = inverse ? inv : fwd;
    for (int c = 0; c < 4; c++) {
        uint8_t col[4], *p = s + 4 * c;
        memcpy(col, p, 4);
        for (int r = 0; r < 4; r++)
            p[r] = gmul(k[(4 - r) % 4], col[0]) ^ gmul(k[(5 - r) % 4], col[1]) ^
                   gmul(k[(6 - r) % 4], col[2]) ^ gmul(k[(7 - r) % 4], col[3]);
    }
}

enum { AES_DEC = 1, AES_LAST = 2 };

/* AESENC/AESENCLAST/AESDEC/AESDECLAST xmm1, xmm2/m128: one round of the
 * state in xmm1 with the round key xmm2/m128 (the last round without
 * (Inv)MixColumns). */
static int aes_round(es_machine *m, const es_insn *d, unsigned how)
{
    SSE_OPERANDS(x, k, t, 1);
    uint8_t s[16];
    memcpy(s, x, 16);
    bool dec = how & AES_DEC;
    shift_rows(s, dec);
    sub_bytes(s, dec);
    if (!(how & AES_LAST))
        mix_columns(s, dec);
    for (int i = 0; i < 16; i++)
        x->b[i] = s[i] ^ k->b[i];
    return ES_OK;
}

int op_aesenc(es_machine *m, const es_insn *d) { return aes_round(m, d, 0); }
int op_aesenclast(es_machine *m, const es_insn *d) { return aes_round(m, d, AES_LAST); }
int op_aesdec(es_machine *m, const es_insn *d) { return aes_round(m, d, AES_DEC); }
int op_aesdeclast(es_machine *m, const es_insn *d) { return aes_round(m, d, AES_DEC | AES_LAST); }

/* AESIMC xmm1, xmm2/m128: InvMixColumns of a round key (the equivalent
 * inverse cipher's keys). */
int op_aesimc(es_machine *m, const es_insn *d)
{
    SSE_OPERANDS(x, s, t, 1);
    uint8_t v[16];
    memcpy(v, s, 16);
    mix_columns(v, true);
    memcpy(x, v, 16);
    return ES_OK;
}

static uint32_t sub_word(uint32_t w)
{
    uint32_t r = 0;
    for (int i = 0; i < 4; i++)
        r |= (uint32_t)sbox((uint8_t)(w >> (8 * i))) << (8 * i);
    return r;
}

/* AESKEYGENASSIST xmm1, xmm2/m128, imm8: SubWord of dwords 1 and 3, and
 * RotWord of those XOR the round constant imm8 (SDM Vol. 2A). */
int op_aeskeygenassist(es_machine *m, const es_insn *d)
{
    SSE_OPERANDS(x, s, t, 1);
    uint32_t rcon = sse_imm8(d, 2);
    uint32_t x1 = sub_word(s->d[1]), x3 = sub_word(s->d[3]);
    es_xmm r = {.d = {x1, (x1 >> 8 | x1 << 24) ^ rcon, x3, (x3 >> 8 | x3 << 24) ^ rcon}};
    *x = r;
    return ES_OK;
}

/* PCLMULQDQ xmm1, xmm2/m128, imm8: the carry-less product of the quadword
 * of xmm1 imm8 bit 0 picks and the one of xmm2/m128 bit 4 picks. */
int op_pclmulqdq(es_machine *m, const es_insn *d)
{
    SSE_OPERANDS(x, s, t, 1);
    unsigned imm = sse_imm8(d, 2);
    uint64_t a = x->q[imm & 1], b = s->q[(imm >> 4) & 1], lo = 0, hi = 0;
    for (int i = 0; i < 64; i++)
        if ((b >> i) & 1) {
            lo ^= a << i;
            hi ^= i ? a >> (64 - i) : 0;
        }
    x->q[0] = lo;
    x->q[1] = hi;
    return ES_OK;
}

/* ---- SHA extensions (SDM Vol. 2, SHA1RNDS4 ... SHA256MSG2) ----
 * Dwords are named as the SDM does: the state's A is bits 127:96. */

/* Whether an m128 source must be 16-byte aligned: Intel lists the SHA
 * instructions under exception type 4 (#GP); Zen 4/5 take any address
 * (measured by the differential test on this host). */
static int sha_align(const es_machine *m)
{
    return m->vendor == 0;
}

static uint32_t rol32(uint32_t x, unsigned n)
{
    return x << n | x >> (32 - n);
}

static uint32_t ror32(uint32_t x, unsigned n)
{
    return x >> n | x << (32 - n);
}

/* SHA1RNDS4 xmm1, xmm2/m128, imm8: four rounds with the function and
 * constant imm8[1:0] picks; W0 of xmm2 already holds E (SHA1NEXTE). */
int op_sha1rnds4(es_machine *m, const es_insn *d)
{
    static const uint32_t k[4] = {0x5a827999, 0x6ed9eba1, 0x8f1bbcdc, 0xca62c1d6};
    SSE_OPERANDS(x, s, t, sha_align(m));
    unsigned f = sse_imm8(d, 2) & 3;
    uint32_t a = x->d[3], b = x->d[2], c = x->d[1], dd = x->d[0], e = 0;
    for (int i = 0; i < 4; i++) {
        uint32_t fn = f == 0 ? (b & c) ^ (~b & dd) : f == 2 ? (b & c) ^ (b & dd) ^ (c & dd) : b ^ c ^ dd;
        uint32_t na = fn + rol32(a, 5) + s->d[3 - i] + e + k[f];
        e = dd, dd = c, c = rol32(b, 30), b = a, a = na;
    }
    es_xmm r = {.d = {dd, c, b, a}};
    *x = r;
    return ES_OK;
}

/* SHA1NEXTE xmm1, xmm2/m128: E of the next four rounds (A ROL 30) added
 * to xmm2's first message dword. */
int op_sha1nexte(es_machine *m, const es_insn *d)
{
    SSE_OPERANDS(x, s, t, sha_align(m));
    es_xmm r = *s;
    r.d[3] += rol32(x->d[3], 30);
    *x = r;
    return ES_OK;
}

/* SHA1MSG1 xmm1, xmm2/m128: the first XORs of the next four message dwords. */
int op_sha1msg1(es_machine *m, const es_insn *d)
{
    SSE_OPERANDS(x, s, t, sha_align(m));
    uint32_t w0 = x->d[3], w1 = x->d[2], w2 = x->d[1], w3 = x->d[0], w4 = s->d[3], w5 = s->d[2];
    es_xmm r = {.d = {w5 ^ w3, w4 ^ w2, w3 ^ w1, w2 ^ w0}};
    *x = r;
    return ES_OK;
}

/* SHA1MSG2 xmm1, xmm2/m128: W16..W19, each from the one before it. */
int op_sha1msg2(es_machine *m, const es_insn *d)
{
    SSE_OPERANDS(x, s, t, sha_align(m));
    uint32_t w16 = rol32(x->d[3] ^ s->d[2], 1), w17 = rol32(x->d[2] ^ s->d[1], 1);
    uint32_t w18 = rol32(x->d[1] ^ s->d[0], 1), w19 = rol32(x->d[0] ^ w16, 1);
    es_xmm r = {.d = {w19, w18, w17, w16}};
    *x = r;
    return ES_OK;
}

/* SHA256RNDS2 xmm1, xmm2/m128, <XMM0>: two rounds; xmm1 holds C D G H,
 * xmm2 A B E F, XMM0's low two dwords the message plus constant. */
int op_sha256rnds2(es_machine *m, const es_insn *d)
{
    SSE_OPERANDS(x, s, t, sha_align(m));
    uint32_t a = s->d[3], b = s->d[2], c = x->d[3], dd = x->d[2];
    uint32_t e = s->d[1], f = s->d[0], g = x->d[1], h = x->d[0];
    for (int i = 0; i < 2; i++) {
        uint32_t t1 = ((e & f) ^ (~e & g)) + (ror32(e, 6) ^ ror32(e, 11) ^ ror32(e, 25)) +
                      m->xmm[0].d[i] + h;
        uint32_t t2 = ((a & b) ^ (a & c) ^ (b & c)) + (ror32(a, 2) ^ ror32(a, 13) ^ ror32(a, 22));
        h = g, g = f, f = e, e = t1 + dd;
        dd = c, c = b, b = a, a = t1 + t2;
    }
    es_xmm r = {.d = {f, e, b, a}};
    *x = r;
    return ES_OK;
}

static uint32_t small_sigma0(uint32_t w) { return ror32(w, 7) ^ ror32(w, 18) ^ (w >> 3); }
static uint32_t small_sigma1(uint32_t w) { return ror32(w, 17) ^ ror32(w, 19) ^ (w >> 10); }

/* SHA256MSG1 xmm1, xmm2/m128: W[i] + sigma0(W[i+1]) for the next four. */
int op_sha256msg1(es_machine *m, const es_insn *d)
{
    SSE_OPERANDS(x, s, t, sha_align(m));
    uint32_t w0 = x->d[0], w1 = x->d[1], w2 = x->d[2], w3 = x->d[3], w4 = s->d[0];
    es_xmm r = {.d = {w0 + small_sigma0(w1), w1 + small_sigma0(w2), w2 + small_sigma0(w3),
                      w3 + small_sigma0(w4)}};
    *x = r;
    return ES_OK;
}

/* SHA256MSG2 xmm1, xmm2/m128: W16..W19 from the partial sums and W14, W15. */
int op_sha256msg2(es_machine *m, const es_insn *d)
{
    SSE_OPERANDS(x, s, t, sha_align(m));
    uint32_t w16 = x->d[0] + small_sigma1(s->d[2]), w17 = x->d[1] + small_sigma1(s->d[3]);
    uint32_t w18 = x->d[2] + small_sigma1(w16), w19 = x->d[3] + small_sigma1(w17);
    es_xmm r = {.d = {w16, w17, w18, w19}};
    *x = r;
    return ES_OK;
}
