/* mmx.h - the MMX forms of the packed-integer instructions (sim/isa/mmx.c).
 *
 * MMX registers alias the x87 data registers: MMi is the 64-bit
 * significand of physical register Ri (not ST(i)); writing it sets Ri's
 * sign and exponent bits to all ones.  Every MMX instruction sets TOP to
 * 0 and, but EMMS, the tag word to all valid; EMMS sets it all empty (SDM
 * Vol. 1, 9.5 "Compatibility with x87 FPU architecture", Table 9-2).
 *
 * Most MMX forms share their mnemonic with an SSE form: isa.tbl lists them
 * in `%mmx` lines, and the generated dispatch runs the SSE handler on two
 * XMM registers laid out from the MMX operands (es_mmx_run) -- one handler
 * per operation for both widths.  The layouts make the 128-bit operation's
 * low 64 bits the 64-bit one's result:
 *   lane  dst = {a, 0}, src = {b, 0}: lane-wise operations, low unpacks,
 *         shifts, PMOVMSKB, PSADBW, PMULUDQ
 *   pair  dst = src = {a, b}: packs and horizontal add/subtract, whose
 *         64-bit form takes half its result from each operand
 *   high  dst = {0, a >> 32}, src = {0, b >> 32}: high unpacks (their
 *         128-bit form interleaves the high quadwords' low halves)
 *   dup   dst = {a, a}, src = {b, 0}: PSHUFB (byte indexes mod 8)
 *   imm3  as lane, the word index immediate mod 4 (PEXTRW, PINSRW)
 */
#ifndef ENTRYSIM_MMX_H
#define ENTRYSIM_MMX_H

#include <string.h>

#include "ops.h"

enum { ES_MMX_LANE, ES_MMX_PAIR, ES_MMX_HIGH, ES_MMX_DUP, ES_MMX_IMM3 };

/* Whether d is the MMX form of its mnemonic (an MMX register operand). */
static inline bool es_mmx_form(const es_insn *d)
{
    return d->o[0].kind == ES_OPK_MMX || d->o[1].kind == ES_OPK_MMX;
}

/* Runs the MMX form d through sse, the handler of its SSE form, with the
 * given layout. */
int es_mmx_run(es_machine *m, const es_insn *d, es_handler sse, int layout);

#endif
