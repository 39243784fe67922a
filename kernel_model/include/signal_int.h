/* signal_int.h - what signal.c (64-bit frames, the exit work) shares with
 * signal32.c (i386 frames); kernel-internal. */
#ifndef ES_SIGNAL_INT_H
#define ES_SIGNAL_INT_H

#include "kmodel.h"

/* RFLAGS bits a frame may change (arch/x86/kernel/signal.c FIX_EFLAGS):
 * AC OF DF TF SF ZF AF PF CF RF */
#define ES_FIX_EFLAGS 0x50dd5ul

struct pt_regs *es_current_pt_regs(void);
/* trapno, err and cr2 of the last user fault (0 after a syscall) */
void es_sig_fault_info(u32 *trapno, u32 *err, u32 *cr2);
/* xstate.c: XSAVE enabled at boot (CR4.OSXSAVE, XCR0 = the user features
 * CPUID offers of x87, SSE, AVX). */
void es_fpu_boot(void);
/* xstate.c: whether frames carry XSAVE images; the bytes one takes (the
 * area and FP_XSTATE_MAGIC2, or 512 for FXSAVE). */
bool es_fpu_xstate(void);
unsigned long es_fpu_frame_size(void);
/* xstate.c: the current state as the image at user address fx (64-bit or
 * 32-bit format, 64-byte aligned); 0 or -EFAULT. */
int es_fpu_save_user(unsigned long fx, bool is64);
/* xstate.c: the FPU's initial state for a handler (fpu__clear). */
void es_fpu_init_state(void);
/* xstate.c: the state from the user image at fx (0 = the initial state);
 * false when it cannot be read or its XSAVE header is invalid. */
bool es_restore_fpu(unsigned long fx, bool is64);
/* ES_SIG_KILL: the process dies of sig (the run stops). */
void es_sig_kill(unsigned long sig);
/* ES_SIG_RETURN: the blocked set and the stack_t at uss (compat layout
 * when compat) come back. */
void es_sig_return(u64 mask, unsigned long uss, bool compat);
/* signal32.c: the 64-bit siginfo the host wrote, in the compat layout
 * (i386 and x32 frames). */
void es_info32(unsigned char out[128], const unsigned char in[128]);
/* signal32.c: the i386 frame for k; 0 or -EFAULT. */
int es_setup_frame32(const struct es_ksignal *k, struct pt_regs *regs);

#endif
