/* vex.h - the VEX-encoded forms (AVX, AVX2, FMA, F16C): YMM register
 * access and the run of an SSE handler over the lanes of a VEX form
 * (sim/isa/vex.c).
 *
 * A VEX form of an SSE instruction computes what the SSE one does in each
 * 128-bit lane, from a non-destructive first source (VEX.vvvv), without
 * the legacy m128 alignment rule, and writes the whole YMM register: the
 * VEX.128 forms zero bits 255:128 (SDM Vol. 1, 14.1.2 "Instruction
 * Syntax and Encoding"; Vol. 2, 2.3.10 and 2.4 "AVX and SSE Instruction
 * Exception Specification").  isa.tbl lists these forms in `%vex` lines:
 * the generated dispatch runs the SSE handler through es_vex_run with the
 * op's layout, so one handler serves the legacy, VEX.128 and VEX.256
 * forms.  The VEX-only instructions (moves with their own alignment
 * rules, broadcasts, 128-bit-lane inserts/extracts/permutes, the AVX2
 * permutes, variable shifts and gathers, FMA, F16C) have handlers of
 * their own, written with the accessors below.
 *
 * The layouts (how lane 1 of a VEX.256 form gets its operands; a VEX.256
 * form splits its YMM operands and m256 into lanes, and gives both lanes
 * the same XMM operand or smaller memory operand, like the shift counts):
 *   lane    the same immediate in both lanes
 *   imm2/3/4  lane 1 gets the immediate shifted right by 2, 3 or 4 bits
 *           (VBLENDPD and VSHUFPD, VMPSADBW, VBLENDPS: a bit per element)
 *   widen2/4/8  the source has 1/2, 1/4, 1/8 of the destination's bytes
 *           (VPMOVZX/SX, VCVTPS2PD, VCVTDQ2PD): lane 1 reads the upper
 *           half of it
 *   blendv  the fourth operand (VEX.is4) is the mask the SSE form reads
 *           from XMM0
 * A VEX.256 form with an XMM destination (VCVTPD2PS, VCVT(T)PD2DQ)
 * narrows: each lane's low 64 bits make the result.
 */
#ifndef ENTRYSIM_VEX_H
#define ENTRYSIM_VEX_H

#include <string.h>

#include "ops.h"

enum {
    ES_VEX_LANE,
    ES_VEX_IMM2,
    ES_VEX_IMM3,
    ES_VEX_IMM4,
    ES_VEX_WIDEN2,
    ES_VEX_WIDEN4,
    ES_VEX_WIDEN8,
    ES_VEX_BLENDV,
};

/* The storage of bits 128*lane+127 .. 128*lane of vector register reg
 * (lane 0 or 1; see es_machine.xmm/ymmh). */
static inline es_xmm *es_vlane(es_machine *m, unsigned reg, unsigned lane)
{
    return lane ? &m->ymmh[reg & 15] : &m->xmm[reg & 15];
}

/* Vector length of a VEX form in bytes: 16 (VEX.128) or 32 (VEX.256). */
static inline unsigned es_vlen(const es_insn *d)
{
    return (d->pfx & ES_PFX_VEXL) ? 32 : 16;
}

/* The checks every VEX instruction makes first (SDM Vol. 2, 2.4, Table
 * 2-18 ... 2-21): #UD unless XCR0 enables the SSE and AVX state (and
 * CR4.OSXSAVE is set), #NM with CR0.TS. */
int es_vex_check(es_machine *m);

/* Operand i as a YMM value: an XMM register (bits 255:128 read as zero),
 * a YMM register, or memory of the operand's size (the rest zero).  No
 * alignment rule (the VEX forms have none but the explicitly aligned
 * moves: es_vread_aligned).  Nonzero with the fault recorded on failure;
 * another operand kind raises #UD. */
int es_vread(es_machine *m, const es_insn *d, int i, es_ymm *v);

/* The same, with #GP(0) unless a memory operand is aligned to its size
 * (VMOVAPS, VMOVDQA, VMOVNT*: SDM Vol. 2, 2.4.1, exception class 1). */
int es_vread_aligned(es_machine *m, const es_insn *d, int i, es_ymm *v);

/* Writes operand i: an XMM register gets bits 127:0 and its bits 255:128
 * are zeroed (the VEX.128 rule), a YMM register all of v, memory the
 * operand's size.  `align` as es_vread_aligned (memory only). */
int es_vwrite(es_machine *m, const es_insn *d, int i, const es_ymm *v, int align);

/* Runs d, a VEX form, through sse, the handler of its legacy SSE form,
 * with the given layout (the dispatch entries isa.tbl's %vex lines
 * generate). */
int es_vex_run(es_machine *m, const es_insn *d, es_handler sse, int layout);

#endif
