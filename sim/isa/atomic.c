/* atomic.c - CMPXCHG, CMPXCHG8B, CMPXCHG16B and XADD.  (XCHG is in
 * mov.c.)  One interpreter thread runs the guest, so every
 * read-modify-write here is atomic; LOCK only matters for its #UD rules,
 * which the decoder enforces (LOCK on a register destination or on an
 * instruction outside SDM Vol. 2 LOCK's list does not decode).
 */
#include "ops.h"

/* CMPXCHG r/m, r (SDM CMPXCHG): flags as CMP accumulator, dest.  A memory
 * destination always gets a write cycle (the old value when the compare
 * fails), so a read-only page faults either way.  With a 32-bit register
 * destination only the register actually written is zero-extended: the
 * destination on success, EAX on failure (measured on Zen 4). */
int op_cmpxchg(es_machine *m, const es_insn *d)
{
    unsigned size = d->o[0].size;
    uint64_t dst, src, acc = m->gpr[ES_RAX] & es_mask(size);
    TRY(es_rd(m, d, 0, &dst));
    TRY(es_rd(m, d, 1, &src));
    uint64_t f = es_flags_sub(acc, dst, 0, size);
    if (acc == dst) {
        TRY(es_wr(m, d, 0, src));
    } else {
        if (d->o[0].kind == ES_OPK_MEM)
            TRY(es_wr(m, d, 0, dst));
        es_gpr_set(m, ES_RAX, size, dst);
    }
    es_set_flags(m, f, ES_ARITH_FLAGS);
    return ES_OK;
}

/* CMPXCHG8B m64: EDX:EAX against m64; on success m64 = ECX:EBX and ZF=1,
 * else EDX:EAX = m64 (zero-extended in 64-bit mode) and ZF=0.  Other flags
 * are unaffected. */
int op_cmpxchg8b(es_machine *m, const es_insn *d)
{
    uint64_t a = es_lin(m, d, &d->o[0]), v;
    TRY(es_load(m, a, 8, &v));
    uint64_t cmp = (m->gpr[ES_RAX] & 0xffffffffull) | (m->gpr[ES_RDX] << 32);
    if (v == cmp) {
        uint64_t nv = (m->gpr[ES_RBX] & 0xffffffffull) | (m->gpr[ES_RCX] << 32);
        TRY(es_store(m, a, 8, nv));
        m->rflags |= ES_ZF;
    } else {
        TRY(es_store(m, a, 8, v));
        m->gpr[ES_RAX] = (uint32_t)v;
        m->gpr[ES_RDX] = v >> 32;
        m->rflags &= ~(uint64_t)ES_ZF;
    }
    return ES_OK;
}

/* CMPXCHG16B m128: #GP(0) unless the operand is 16-byte aligned (SDM
 * CMPXCHG16B); then as CMPXCHG8B with RDX:RAX and RCX:RBX. */
int op_cmpxchg16b(es_machine *m, const es_insn *d)
{
    uint64_t a = es_lin(m, d, &d->o[0]);
    if (a & 15)
        return es_raise(m, ES_VEC_GP, 0);
    uint64_t v[2];
    TRY(es_read(m, a, v, 16));
    if (v[0] == m->gpr[ES_RAX] && v[1] == m->gpr[ES_RDX]) {
        uint64_t nv[2] = {m->gpr[ES_RBX], m->gpr[ES_RCX]};
        TRY(es_write(m, a, nv, 16));
        m->rflags |= ES_ZF;
    } else {
        TRY(es_write(m, a, v, 16));
        m->gpr[ES_RAX] = v[0];
        m->gpr[ES_RDX] = v[1];
        m->rflags &= ~(uint64_t)ES_ZF;
    }
    return ES_OK;
}

/* XADD r/m, r: TEMP = SRC + DEST; SRC = DEST; DEST = TEMP, in that order
 * (so "xadd eax, eax" leaves the sum). */
int op_xadd(es_machine *m, const es_insn *d)
{
    unsigned size = d->o[0].size;
    uint64_t dst, src;
    TRY(es_rd(m, d, 0, &dst));
    TRY(es_rd(m, d, 1, &src));
    uint64_t sum = dst + src;
    if (d->o[0].kind == ES_OPK_MEM) {
        TRY(es_wr(m, d, 0, sum));
        es_wr(m, d, 1, dst);
    } else {
        es_wr(m, d, 1, dst);
        es_wr(m, d, 0, sum);
    }
    es_set_flags(m, es_flags_add(dst, src, 0, size), ES_ARITH_FLAGS);
    return ES_OK;
}

