/* string.c - MOVS, STOS, LODS, CMPS, SCAS (byte..quadword) with REP,
 * REPE and REPNE; INS/OUTS/IN/OUT (privileged by IOPL).
 *
 * The source is seg:rSI (DS unless overridden, es_insn.sseg), the
 * destination always ES:rDI; the address size picks SI/ESI/RSI and the
 * CX/ECX/RCX counter.  A REP instruction commits rSI, rDI and rCX after
 * every element, so a fault part-way leaves the counts of the completed
 * iterations with RIP still at the instruction: restartable, as on the CPU
 * (SDM Vol. 1, 7.3.9.3; Vol. 2 REP).
 *
 * REP MOVS and REP STOS with DF = 0 copy whole runs within a page through
 * es_host_ptr instead of one access per element.
 */
#include <string.h>

#include "ops.h"

static inline int rep_of(const es_insn *d)
{
    return d->pfx & (ES_PFX_REP | ES_PFX_REPNE);
}

/* The REP count.  With a 32-bit address size and ECX = 0, Intel still
 * writes ECX, zero-extending RCX; AMD leaves RCX alone (both measured by
 * tests/diff on their hosts). */
static inline uint64_t rep_count(es_machine *m, unsigned as)
{
    uint64_t count = m->gpr[ES_RCX] & es_mask(as);
    if (count == 0 && as == 4 && m->vendor == 0)
        m->gpr[ES_RCX] = 0;
    return count;
}

/* Element step: +size or -size by DF. */
static inline int64_t step_of(const es_machine *m, unsigned size)
{
    return (m->rflags & ES_DF) ? -(int64_t)size : (int64_t)size;
}

static inline void advance(es_machine *m, int r, unsigned as, int64_t by)
{
    es_gpr_set(m, r, as, m->gpr[r] + (uint64_t)by);
}

static inline uint64_t src_lin(const es_machine *m, const es_insn *d)
{
    return es_seg_lin(m, d->sseg, m->gpr[ES_RSI] & es_mask(d->asize));
}

static inline uint64_t dst_lin(const es_machine *m, const es_insn *d)
{
    return es_seg_lin(m, ES_SEG_ES, m->gpr[ES_RDI] & es_mask(d->asize));
}

/* Bytes a forward run may cover from offset `off` at linear `lin` without
 * leaving the page or wrapping the address size. */
static inline uint64_t run_room(uint64_t off, uint64_t lin, uint64_t amask)
{
    uint64_t r = 4096 - (lin & 0xfff);
    uint64_t w = amask - off + 1; /* 0 for a 64-bit address size: no limit */
    return (w && w < r) ? w : r;
}

/* ---- MOVS ---- */

static inline int movs_one(es_machine *m, const es_insn *d, unsigned size, int64_t step)
{
    uint64_t v;
    TRY(es_load(m, src_lin(m, d), size, &v));
    TRY(es_store(m, dst_lin(m, d), size, v));
    advance(m, ES_RSI, d->asize, step);
    advance(m, ES_RDI, d->asize, step);
    return 0;
}

/* Bytes of a fast run: count elements of size bytes, at most a page and
 * at most `room`, in whole elements. */
static inline uint64_t run_len(uint64_t count, unsigned size, uint64_t room)
{
    uint64_t n = count < (4096 / size) ? count * size : 4096;
    if (room < n)
        n = room;
    return n - n % size;
}

/* Copies as many whole elements as fit in the current source and
 * destination pages; returns the count done (0: take the slow path). */
static uint64_t movs_run(es_machine *m, const es_insn *d, unsigned size, uint64_t count)
{
    uint64_t amask = es_mask(d->asize);
    uint64_t si = m->gpr[ES_RSI] & amask, di = m->gpr[ES_RDI] & amask;
    uint64_t ls = es_seg_lin(m, d->sseg, si), ld = es_seg_lin(m, ES_SEG_ES, di);
    uint64_t rs = run_room(si, ls, amask), rd = run_room(di, ld, amask);
    uint64_t n = run_len(count, size, rs < rd ? rs : rd);
    if (n == 0)
        return 0;
    const uint8_t *s = es_host_ptr(m, ls, (unsigned)n, 0);
    uint8_t *t = es_host_ptr(m, ld, (unsigned)n, 1);
    if (!s || !t)
        return 0;
    if (t > s && t < s + n) {
        /* destination just above the source: the element-by-element
         * result (a repeating pattern) differs from memmove's */
        for (uint64_t i = 0; i < n; i += size) {
            uint8_t tmp[8];
            memcpy(tmp, s + i, size);
            memcpy(t + i, tmp, size);
        }
    } else {
        memmove(t, s, n);
    }
    advance(m, ES_RSI, d->asize, (int64_t)n);
    advance(m, ES_RDI, d->asize, (int64_t)n);
    return n / size;
}

/* ---- STOS ---- */

static inline int stos_one(es_machine *m, const es_insn *d, unsigned size, int64_t step)
{
    TRY(es_store(m, dst_lin(m, d), size, m->gpr[ES_RAX]));
    advance(m, ES_RDI, d->asize, step);
    return 0;
}

static uint64_t stos_run(es_machine *m, const es_insn *d, unsigned size, uint64_t count)
{
    uint64_t amask = es_mask(d->asize);
    uint64_t di = m->gpr[ES_RDI] & amask;
    uint64_t ld = es_seg_lin(m, ES_SEG_ES, di);
    uint64_t n = run_len(count, size, run_room(di, ld, amask));
    if (n == 0)
        return 0;
    uint8_t *t = es_host_ptr(m, ld, (unsigned)n, 1);
    if (!t)
        return 0;
    uint64_t v = m->gpr[ES_RAX];
    if (size == 1)
        memset(t, (int)(v & 0xff), n);
    else
        for (uint64_t i = 0; i < n; i += size)
            memcpy(t + i, &v, size); /* little-endian host */
    advance(m, ES_RDI, d->asize, (int64_t)n);
    return n / size;
}

/* The REP loop of MOVS and STOS: whole runs within pages on the fast path
 * (forward only), one element otherwise (at a page edge, backwards, or
 * where the run cannot be done in place); RCX counts down as it goes, so
 * a fault leaves the registers at the faulting element.  Inlined with a
 * constant `stos`. */
static inline __attribute__((always_inline)) int rep_move(es_machine *m, const es_insn *d,
                                                          int stos)
{
    unsigned size = d->osize, as = d->asize;
    int64_t step = step_of(m, size);
    if (!rep_of(d))
        return (stos ? stos_one(m, d, size, step) : movs_one(m, d, size, step)) ? ES_FAULT
                                                                                : ES_OK;
    uint64_t count = rep_count(m, as);
    while (count) {
        uint64_t done = step <= 0 ? 0
                        : stos    ? stos_run(m, d, size, count)
                                  : movs_run(m, d, size, count);
        if (done) {
            count -= done;
        } else {
            TRY(stos ? stos_one(m, d, size, step) : movs_one(m, d, size, step));
            count--;
        }
        es_gpr_set(m, ES_RCX, as, count);
    }
    return ES_OK;
}

int op_movs(es_machine *m, const es_insn *d) { return rep_move(m, d, 0); }
int op_stos(es_machine *m, const es_insn *d) { return rep_move(m, d, 1); }

/* ---- LODS ---- */

int op_lods(es_machine *m, const es_insn *d)
{
    unsigned size = d->osize, as = d->asize;
    int64_t step = step_of(m, size);
    uint64_t v;
    if (!rep_of(d)) {
        TRY(es_load(m, src_lin(m, d), size, &v));
        es_gpr_set(m, ES_RAX, size, v);
        advance(m, ES_RSI, as, step);
        return ES_OK;
    }
    uint64_t count = rep_count(m, as);
    while (count) {
        TRY(es_load(m, src_lin(m, d), size, &v));
        es_gpr_set(m, ES_RAX, size, v);
        advance(m, ES_RSI, as, step);
        es_gpr_set(m, ES_RCX, as, --count);
    }
    return ES_OK;
}

/* ---- CMPS / SCAS: REPE stops on ZF = 0, REPNE on ZF = 1 ---- */

static inline int cmps_one(es_machine *m, const es_insn *d, unsigned size, int64_t step)
{
    uint64_t a, b;
    TRY(es_load(m, src_lin(m, d), size, &a));
    TRY(es_load(m, dst_lin(m, d), size, &b));
    es_set_flags(m, es_flags_sub(a, b, 0, size), ES_ARITH_FLAGS);
    advance(m, ES_RSI, d->asize, step);
    advance(m, ES_RDI, d->asize, step);
    return 0;
}

static inline int scas_one(es_machine *m, const es_insn *d, unsigned size, int64_t step)
{
    uint64_t b;
    TRY(es_load(m, dst_lin(m, d), size, &b));
    es_set_flags(m, es_flags_sub(m->gpr[ES_RAX], b, 0, size), ES_ARITH_FLAGS);
    advance(m, ES_RDI, d->asize, step);
    return 0;
}

static inline int rep_done(const es_machine *m, const es_insn *d)
{
    int zf = (m->rflags & ES_ZF) != 0;
    return (d->pfx & ES_PFX_REPNE) ? zf : !zf;
}

int op_cmps(es_machine *m, const es_insn *d)
{
    unsigned size = d->osize, as = d->asize;
    int64_t step = step_of(m, size);
    if (!rep_of(d))
        return cmps_one(m, d, size, step) ? ES_FAULT : ES_OK;
    uint64_t count = rep_count(m, as);
    while (count) {
        TRY(cmps_one(m, d, size, step));
        es_gpr_set(m, ES_RCX, as, --count);
        if (rep_done(m, d))
            break;
    }
    return ES_OK;
}

/* REPNE SCASB with DF = 0 (the classic strlen/memchr idiom): search a page
 * run with memchr.  Returns elements done, 0 for the slow path. */
static uint64_t scasb_run(es_machine *m, const es_insn *d, uint64_t count)
{
    uint64_t amask = es_mask(d->asize);
    uint64_t di = m->gpr[ES_RDI] & amask, ld = es_seg_lin(m, ES_SEG_ES, di);
    uint64_t n = count < 4096 ? count : 4096, r = run_room(di, ld, amask);
    if (r < n)
        n = r;
    const uint8_t *p = n ? es_host_ptr(m, ld, (unsigned)n, 0) : NULL;
    if (!p)
        return 0;
    uint8_t al = (uint8_t)m->gpr[ES_RAX];
    const uint8_t *hit = memchr(p, al, n);
    uint64_t done = hit ? (uint64_t)(hit - p) + 1 : n;
    es_set_flags(m, es_flags_sub(al, p[done - 1], 0, 1), ES_ARITH_FLAGS);
    advance(m, ES_RDI, d->asize, (int64_t)done);
    return done;
}

int op_scas(es_machine *m, const es_insn *d)
{
    unsigned size = d->osize, as = d->asize;
    int64_t step = step_of(m, size);
    if (!rep_of(d))
        return scas_one(m, d, size, step) ? ES_FAULT : ES_OK;
    uint64_t count = rep_count(m, as);
    int fast = size == 1 && step > 0 && (d->pfx & ES_PFX_REPNE);
    while (count) {
        uint64_t done = fast ? scasb_run(m, d, count) : 0;
        if (done) {
            count -= done;
        } else {
            TRY(scas_one(m, d, size, step));
            count--;
        }
        es_gpr_set(m, ES_RCX, as, count);
        if (rep_done(m, d))
            break;
    }
    return ES_OK;
}

/* ---- port I/O: no devices; CPL > IOPL faults (no TSS I/O bitmap is
 * modelled, so ioperm-style permission is never granted) ---- */

static int io_allowed(es_machine *m)
{
    if (m->cpl > ((m->rflags & ES_IOPL) >> 12))
        return es_raise(m, ES_VEC_GP, 0);
    return 0;
}

int op_in(es_machine *m, const es_insn *d)
{
    TRY(io_allowed(m));
    es_gpr_set(m, ES_RAX, d->o[0].size, ~0ull); /* floating bus */
    return ES_OK;
}

int op_out(es_machine *m, const es_insn *d)
{
    TRY(io_allowed(m));
    return ES_OK;
}

int op_ins_outs(es_machine *m, const es_insn *d)
{
    TRY(io_allowed(m));
    return es_unimplemented(m, d);
}

/* String MOVSD/CMPSD share their mnemonics with the SSE2 scalar-double
 * instructions (0F 10/11, 0F C2): the table entry belongs to sse.c, which
 * hands the 1-byte-map forms (A5, A7) to these. */
int es_string_movsd(es_machine *m, const es_insn *d)
{
    return op_movs(m, d);
}

int es_string_cmpsd(es_machine *m, const es_insn *d)
{
    return op_cmps(m, d);
}

