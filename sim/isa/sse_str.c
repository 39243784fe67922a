/* sse_str.c - SSE4.1/4.2 string and search helpers: PCMPESTRI/M,
 * PCMPISTRI/M (glibc's strcspn, strspn, strpbrk...), CRC32, PTEST,
 * MPSADBW and PHMINPOSUW. */
#include "sse.h"

/* ---- PCMPxSTRx (SDM Vol. 2, 4.1 "Imm8 control byte") ----
 * imm[1:0] element format (ub, uw, sb, sw); imm[3:2] aggregation (equal
 * any, ranges, equal each, equal ordered); imm[5:4] polarity; imm[6] index
 * (least/most significant) or mask form (bit mask/element mask).
 * Operand 1 (xmm1) is the set or needle `a`, operand 2 (xmm2/m128) the
 * string `b`; neither needs alignment (measured on the host). */

/* The n elements of v as ints (sign- or zero-extended per the format). */
static inline void elems(const es_xmm *v, unsigned fmt, int *e)
{
    switch (fmt) {
    case 0: for (int i = 0; i < 16; i++) e[i] = v->b[i]; break;
    case 1: for (int i = 0; i < 8; i++) e[i] = v->w[i]; break;
    case 2: for (int i = 0; i < 16; i++) e[i] = v->sb[i]; break;
    default: for (int i = 0; i < 8; i++) e[i] = v->sw[i]; break;
    }
}

/* Implicit length: the index of the first zero element, or n. */
static inline int implicit_len(const int *e, int n)
{
    for (int i = 0; i < n; i++)
        if (e[i] == 0)
            return i;
    return n;
}

/* Explicit length: |rAX| or |rDX| (64-bit with REX.W), saturated to n. */
static inline int explicit_len(const es_machine *m, const es_insn *d, int r, int n)
{
    int64_t v = (d->pfx & ES_PFX_REXW) ? (int64_t)m->gpr[r] : (int64_t)(int32_t)m->gpr[r];
    uint64_t a = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    return a > (uint64_t)n ? n : (int)a;
}

/* IntRes2 of the comparison; sets the arithmetic flags as the SDM
 * defines them (CF: result nonzero, ZF: b shorter than n, SF: a shorter
 * than n, OF: result bit 0, AF = PF = 0). */
static unsigned pcmpstr(es_machine *m, const int *a, const int *b, int la, int lb, unsigned imm)
{
    int n = (imm & 1) ? 8 : 16;
    unsigned res = 0;
    switch ((imm >> 2) & 3) {
    case 0: /* equal any: b[j] is one of a[0..la) */
        if (!(imm & 1)) {
            /* bytes: a 256-bit set of a's elements (the signed format
             * compares the same bit patterns) */
            uint64_t set[4] = {0, 0, 0, 0};
            for (int i = 0; i < la; i++)
                set[(a[i] & 0xff) >> 6] |= 1ull << (a[i] & 63);
            for (int j = 0; j < lb; j++)
                res |= (unsigned)((set[(b[j] & 0xff) >> 6] >> (b[j] & 63)) & 1) << j;
            break;
        }
        for (int j = 0; j < lb; j++)
            for (int i = 0; i < la; i++)
                if (a[i] == b[j]) {
                    res |= 1u << j;
                    break;
                }
        break;
    case 1: /* ranges: a[i] <= b[j] <= a[i+1] for a valid pair */
        for (int j = 0; j < lb; j++)
            for (int i = 0; i + 1 < la; i += 2)
                if (a[i] <= b[j] && b[j] <= a[i + 1]) {
                    res |= 1u << j;
                    break;
                }
        break;
    case 2: /* equal each: both invalid compares true, one invalid false */
        for (int j = 0; j < n; j++)
            if ((j >= la && j >= lb) || (j < la && j < lb && a[j] == b[j]))
                res |= 1u << j;
        break;
    default: /* equal ordered: a (up to la) occurs in b at j; past the end
              * of a matches anything, past the end of b matches nothing */
        for (int j = 0; j < n; j++) {
            int ok = 1;
            for (int k = 0; k < la && j + k < n; k++)
                if (j + k >= lb || a[k] != b[j + k]) {
                    ok = 0;
                    break;
                }
            if (ok)
                res |= 1u << j;
        }
        break;
    }
    unsigned all = (1u << n) - 1;
    switch ((imm >> 4) & 3) {
    case 1: res = ~res & all; break;
    case 3: res ^= (1u << lb) - 1; break; /* negate only the valid part of b */
    default: break;
    }
    uint64_t f = (res ? ES_CF : 0) | (lb < n ? ES_ZF : 0) | (la < n ? ES_SF : 0) |
                 ((res & 1) ? ES_OF : 0);
    es_set_flags(m, f, ES_ARITH_FLAGS);
    return res;
}

static inline int pcmpstr_common(es_machine *m, const es_insn *d, int explicit_lens, int mask)
{
    es_xmm t;
    const es_xmm *b = sse_src(m, d, 1, &t, 0);
    if (!b)
        return ES_FAULT;
    unsigned imm = sse_imm8(d, 2);
    int n = (imm & 1) ? 8 : 16;
    int ea[16], eb[16];
    elems(&m->vr[d->o[0].reg], imm & 3, ea);
    elems(b, imm & 3, eb);
    int la, lb;
    if (explicit_lens) {
        la = explicit_len(m, d, ES_RAX, n);
        lb = explicit_len(m, d, ES_RDX, n);
    } else {
        la = implicit_len(ea, n);
        lb = implicit_len(eb, n);
    }
    unsigned res = pcmpstr(m, ea, eb, la, lb, imm);
    if (!mask) {
        unsigned idx = !res ? (unsigned)n
                       : (imm & 0x40) ? 31u - (unsigned)__builtin_clz(res)
                                      : (unsigned)__builtin_ctz(res);
        es_gpr_set(m, ES_RCX, 4, idx);
        return ES_OK;
    }
    es_xmm r = {{0}};
    if (imm & 0x40) {
        for (int j = 0; j < n; j++)
            if (res & (1u << j)) {
                if (n == 16)
                    r.b[j] = 0xff;
                else
                    r.w[j] = 0xffff;
            }
    } else {
        r.d[0] = res;
    }
    m->xmm[0] = r;
    return ES_OK;
}

int op_pcmpestri(es_machine *m, const es_insn *d)
{
    return pcmpstr_common(m, d, 1, 0);
}
int op_pcmpestrm(es_machine *m, const es_insn *d)
{
    return pcmpstr_common(m, d, 1, 1);
}
int op_pcmpistri(es_machine *m, const es_insn *d)
{
    return pcmpstr_common(m, d, 0, 0);
}
int op_pcmpistrm(es_machine *m, const es_insn *d)
{
    return pcmpstr_common(m, d, 0, 1);
}

/* ---- CRC32 (SSE4.2): CRC-32C, polynomial 0x1EDC6F41 bit-reflected,
 * over the source bytes in memory order, without pre/post inversion. ---- */
static const uint32_t crc32c_nibble[16] = {
    0x00000000, 0x105ec76f, 0x20bd8ede, 0x30e349b1, 0x417b1dbc, 0x5125dad3,
    0x61c69362, 0x7198540d, 0x82f63b78, 0x92a8fc17, 0xa24bb5a6, 0xb21572c9,
    0xc38d26c4, 0xd3d3e1ab, 0xe330a81a, 0xf36e6f75,
};

int op_crc32(es_machine *m, const es_insn *d)
{
    uint64_t v;
    TRY(es_rd(m, d, 1, &v));
    uint32_t crc = (uint32_t)m->gpr[d->o[0].reg];
    for (unsigned i = 0; i < d->o[1].size; i++) {
        crc ^= (uint8_t)(v >> (8 * i));
        crc = (crc >> 4) ^ crc32c_nibble[crc & 15];
        crc = (crc >> 4) ^ crc32c_nibble[crc & 15];
    }
    /* r32 and r64 destinations: the result zero-extends */
    m->gpr[d->o[0].reg] = crc;
    return ES_OK;
}

/* ---- PTEST: ZF = (a AND b) == 0, CF = (NOT a AND b) == 0, others 0 ---- */
int op_ptest(es_machine *m, const es_insn *d)
{
    es_xmm t;
    const es_xmm *b = sse_src(m, d, 1, &t, 1);
    if (!b)
        return ES_FAULT;
    const es_xmm *a = &m->vr[d->o[0].reg];
    uint64_t f = 0;
    if (((a->q[0] & b->q[0]) | (a->q[1] & b->q[1])) == 0)
        f |= ES_ZF;
    if (((~a->q[0] & b->q[0]) | (~a->q[1] & b->q[1])) == 0)
        f |= ES_CF;
    es_set_flags(m, f, ES_ARITH_FLAGS);
    return ES_OK;
}

/* ---- MPSADBW: eight sums of absolute differences of 4-byte groups; the
 * source group is at imm[1:0]*4, the destination window at imm[2]*4 ---- */
int op_mpsadbw(es_machine *m, const es_insn *d)
{
    SSE_OPERANDS(x, s, t, 1);
    unsigned imm = sse_imm8(d, 2);
    unsigned so = (imm & 3) * 4, dof = ((imm >> 2) & 1) * 4;
    es_xmm r;
    for (int i = 0; i < 8; i++) {
        unsigned sum = 0;
        for (int k = 0; k < 4; k++) {
            int v = x->b[dof + i + k] - s->b[so + k];
            sum += v < 0 ? -v : v;
        }
        r.w[i] = (uint16_t)sum;
    }
    *x = r;
    return ES_OK;
}

/* ---- PHMINPOSUW: the smallest unsigned word and its (lowest) index ---- */
int op_phminposuw(es_machine *m, const es_insn *d)
{
    SSE_OPERANDS(x, s, t, 1);
    unsigned mi = 0;
    for (unsigned i = 1; i < 8; i++)
        if (s->w[i] < s->w[mi])
            mi = i;
    es_xmm r = {{0}};
    r.w[0] = s->w[mi];
    r.w[1] = (uint16_t)mi;
    *x = r;
    return ES_OK;
}

