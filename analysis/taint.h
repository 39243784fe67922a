/* taint.h - taint tracking: which user values every register and byte of
 * memory derives from.
 *
 * An observer (es_observer: before, retire, mem, exception hooks).  Each
 * GPR carries a label set, a bitmask of the user's registers at the moment
 * es_taint_label_user_regs was called, plus `rip`, `rflags`, `nr` (the
 * syscall number, which is what user RAX holds) and `mem` (anything read
 * from user addresses).  The arithmetic flags carry one label set; memory
 * has a sparse byte-granular shadow (pages materialise on the first write
 * of a non-empty label).  Propagation rules are documented in
 * docs/EXPOSURE.md; in short: destination = union of the sources, with
 * moves copying, zero idioms clearing, LEA taking base and index, the
 * stack moving labels through the shadow, and every instruction without a
 * specific rule sending the union of everything it reads (register,
 * memory, flags, implicit operands included, from es_decode_access) to
 * everything it writes.  XMM/YMM registers carry a label set per 128-bit
 * lane (analysis/taint_vec.c): the fallback reads and writes them as
 * operands, VEX.128 writes clear the upper lane, VZEROUPPER/VZEROALL clear
 * lanes, a gather's index register and every element it reads flow to its
 * destination.  Nothing is tracked for x87/MMX state.
 *
 * With the observer not attached nothing runs; attached, every memory
 * access takes the slow path (that is the price of the mem hook).
 */
#ifndef ENTRYSIM_TAINT_H
#define ENTRYSIM_TAINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "machine.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef uint32_t es_label;

/* Label bits: 0..15 the user's GPRs (rax..r15), then these. */
#define ES_TL_REG(i) ((es_label)1u << (i))
#define ES_TL_RIP ((es_label)1u << 16)
#define ES_TL_RFLAGS ((es_label)1u << 17)
#define ES_TL_NR ((es_label)1u << 18)
#define ES_TL_MEM ((es_label)1u << 19)
#define ES_TL_NBITS 20

/* User addresses: below the canonical hole (loads from them are `mem`). */
#define ES_TAINT_USER_TOP 0x0000800000000000ull

typedef struct es_taint es_taint;

es_taint *es_taint_new(void);
void es_taint_free(es_taint *t);
/* Attaches the observer to m; 0, or -1 when the observer table is full. */
int es_taint_attach(es_machine *m, es_taint *t);

/* Labels every user GPR with itself (user RAX with `nr`, since it holds the
 * syscall number at the syscall instruction), the arithmetic flags with
 * `rflags` and RIP with `rip`; the vector registers are cleared (see
 * ES_TAINT_NVREG).  abi (enum es_abi: 0 x64, 1 i386, 2 x32):
 * for i386, R8..R15 are not user-controllable (a 32-bit program cannot
 * name them) and stay clean.  Memory shadow is left as it is. */
void es_taint_label_user_regs(es_taint *t, es_machine *m, int abi);
/* Clears every label (registers, vector registers, flags, memory). */
void es_taint_clear(es_taint *t);

/* With `on`, instructions at CPL 3 other than the kernel entries are not
 * followed (for callers that relabel at every syscall). */
void es_taint_kernel_only(es_taint *t, bool on);

es_label es_taint_reg(const es_taint *t, int reg);
void es_taint_set_reg(es_taint *t, int reg, es_label l);
es_label es_taint_flags(const es_taint *t);
/* The 16 registers' labels, then the flags' (out[16]), in one call. */
void es_taint_regs(const es_taint *t, es_label out[17]);
void es_taint_set_flags(es_taint *t, es_label l);
/* Union of the labels of n bytes at linear address va. */
es_label es_taint_mem(const es_taint *t, uint64_t va, size_t n);
int es_taint_set_mem(es_taint *t, uint64_t va, size_t n, es_label l);

/* Vector registers: one label set per register per 128-bit lane, as the
 * register file is laid out (lane 0 = XMM bits 127:0, lane 1 = YMM bits
 * 255:128).  AVX-512 raises these to 32 and 4.
 *
 * They get no label of their own at an entry: the label vocabulary is a
 * 32-bit set with 20 bits taken, too few to name 16 (or 32) more
 * registers, and widening es_label would change the shadow memory's size
 * and every consumer that stores labels (the debugger's undo records).
 * The kernel never reads vector registers, so only labels flowing in
 * from GPRs and memory are followed; es_taint_label_user_regs clears
 * them, since a user vector value at an entry derives from no labelled
 * user register. */
#define ES_TAINT_NVREG 16
#define ES_TAINT_NLANE 2
/* 0 for a register or lane out of range. */
es_label es_taint_vreg(const es_taint *t, int reg, int lane);
void es_taint_set_vreg(es_taint *t, int reg, int lane, es_label l);

/* Name of label bit `bit` (0..ES_TL_NBITS-1) as the user knows it: "rdi"
 * for x64/x32, "edi" for i386; "rip"/"eip", "rflags"/"eflags", "nr",
 * "mem".  NULL for an unknown bit. */
const char *es_taint_label_name(int bit, int abi);
/* Writes the names of the bits of l, comma-separated, into buf. */
size_t es_taint_label_str(es_label l, int abi, char *buf, size_t bufsz);
/* 64-bit name of GPR i ("rax".."r15"), for kernel-side keys. */
const char *es_taint_gpr_name(int reg);

#ifdef __cplusplus
}
#endif
#endif
