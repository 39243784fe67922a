/* retpoline.S - the indirect-branch thunks gcc calls under
 * -mindirect-branch=thunk-extern -mindirect-branch-register (every C file
 * of the kernel is built so; the dispatchers' call through sys_call_table
 * becomes `call __x86_indirect_thunk_rax`).  After Linux 4.17
 * arch/x86/lib/retpoline.S and JMP_NOSPEC/RETPOLINE_JMP of
 * arch/x86/include/asm/nospec-branch.h; our own code.
 *
 * The thunk body is an alternative site (ES_ALT_RETPOLINE):
 *   off: jmp *%reg                       (what the image has unpatched)
 *   on:  call 2f                         (pushes the address of the trap)
 *     1: pause; lfence; jmp 1b           (where a return prediction goes:
 *                                         speculation spins harmlessly)
 *     2: mov %reg, (%rsp); ret           (architecturally: to *%reg)
 * The pause/lfence loop is never executed architecturally: the CALL and
 * the RET are what a run shows.  Every branch of the replacement targets a
 * label inside it, so copying it over the site keeps it correct. */
#include "kmodel.h"

.macro THUNK reg
	.section .text.__x86.indirect_thunk, "ax"
	.p2align 5
	.globl	__x86_indirect_thunk_\reg
	.type	__x86_indirect_thunk_\reg, @function
__x86_indirect_thunk_\reg:
	ALTERNATIVE "jmp *%\reg", "call 2f; 1: pause; lfence; jmp 1b; 2: mov %\reg, (%rsp); ret", ES_ALT_RETPOLINE
	.size	__x86_indirect_thunk_\reg, .-__x86_indirect_thunk_\reg
.endm

	THUNK rax
	THUNK rbx
	THUNK rcx
	THUNK rdx
	THUNK rsi
	THUNK rdi
	THUNK rbp
	THUNK r8
	THUNK r9
	THUNK r10
	THUNK r11
	THUNK r12
	THUNK r13
	THUNK r14
	THUNK r15
