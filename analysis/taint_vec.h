/* taint_vec.h - taint tracking's vector-register half (internal to
 * analysis/taint*.c; the public accessors are in taint.h).
 *
 * The shadow mirrors the register file's layout (sim/machine.h): a label
 * per register per 128-bit lane, lane 0 = bits 127:0 (es_machine.xmm[]),
 * lane 1 = bits 255:128 (es_machine.ymmh[]).  AVX-512 is an extension of
 * the constants in taint.h (ES_TAINT_NVREG 32, ES_TAINT_NLANE 4) plus a
 * kmask[8] array here; the lane masks below are 8 bits wide so they need
 * no change.
 *
 * Like the GPR half, `before` queues what an instruction will write (from
 * the old labels) and `retire` applies it, adding what the instruction
 * read from memory (rd).
 */
#ifndef ENTRYSIM_TAINT_VEC_H
#define ENTRYSIM_TAINT_VEC_H

#include <stdbool.h>
#include <stdint.h>

#include "decoder.h"
#include "taint.h"

/* At most: a gather's destination and mask, or one implicit XMM0 write
 * next to the explicit destination. */
#define TV_NPEND 4

typedef struct tv_pend {
    uint8_t reg;
    uint8_t set;  /* lanes (bit i = lane i) that get the label */
    uint8_t zero; /* lanes the instruction zeroes (VEX.128's upper lane) */
    es_label l;
} tv_pend;

/* Writes to every register at once, not named by operands. */
enum { TV_BULK_NONE = 0, TV_BULK_ZEROUPPER, TV_BULK_ZEROALL, TV_BULK_RESTORE };

typedef struct es_tvec {
    es_label lab[ES_TAINT_NVREG][ES_TAINT_NLANE];
    /* the instruction in flight */
    tv_pend w[TV_NPEND];
    uint8_t nw;
    uint8_t bulk;       /* TV_BULK_* */
    uint8_t bulk_n;     /* registers it covers (8 outside 64-bit mode) */
    uint8_t bulk_lanes; /* TV_BULK_RESTORE: the lanes restored */
    bool partial;       /* a gather: a fault leaves its completed elements */
} es_tvec;

void es_tvec_clear(es_tvec *v);
/* Forgets the previous instruction's queued writes. */
void es_tvec_begin(es_tvec *v);
/* Union of the labels of every vector register lane d reads: explicit
 * operands (as wide as the operand), a gather's index register, implicit
 * XMM0, the whole file for the save instructions.  0 for a zero idiom. */
es_label es_tvec_reads(const es_tvec *v, const es_insn *d);
/* Queues d's vector register writes, each getting l (plus rd at retire). */
void es_tvec_writes(es_tvec *v, const es_insn *d, es_label l);
/* VZEROUPPER / VZEROALL. */
void es_tvec_vzero(es_tvec *v, const es_insn *d);
/* The instruction retired: applies the queued writes. */
void es_tvec_retire(es_tvec *v, es_label rd);
/* The instruction faulted: a gather keeps the elements it completed, so
 * its queued labels are merged into (never replace) the old ones. */
void es_tvec_fault(es_tvec *v, es_label rd);

#endif
