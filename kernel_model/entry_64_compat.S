/* entry_64_compat.S - the 32-bit system call entries of a 64-bit kernel
 * (after Linux 4.16/4.17 arch/x86/entry/entry_64_compat.S; our own code).
 *
 * Depends on ES_PATCHES bit 6dc936f only: seed 6dc936f175cc clears SI, DX
 * and CX after saving them in entry_SYSCALL_compat and entry_INT80_compat
 * (do_fast_syscall_32 and do_int80_syscall_32 take one argument, in DI).
 * The seed leaves entry_SYSENTER_compat alone, and so do we.
 *
 * Mitigation sites as in entry_64.S (pti: CR3 switch right after SWAPGS
 * and before SYSRETL; ibrs: IBRS_ENTER before the C call, IBRS_EXIT on the
 * way out, the IRET way in swapgs_restore_regs_and_return_to_usermode). */
#include "kmodel.h"
#include "calling.h"

/* The rest of pt_regs for the 32-bit entries: r8-r11 are not part of the
 * 32-bit register file, so Linux stores 0 for them; bx and bp are saved
 * and cleared.  r12-r15 are saved by INT80 only (zeroed by the fast
 * entries: a compat-mode task cannot have set them). */
.macro PUSH_COMPAT_TAIL save_r12_15
	pushq	$0			/* pt_regs->r8  = 0 */
	xorl	%r8d, %r8d
	pushq	$0			/* pt_regs->r9  = 0 */
	xorl	%r9d, %r9d
	pushq	$0			/* pt_regs->r10 = 0 */
	xorl	%r10d, %r10d
	pushq	$0			/* pt_regs->r11 = 0 */
	xorl	%r11d, %r11d
	pushq	%rbx			/* pt_regs->bx */
	xorl	%ebx, %ebx
	pushq	%rbp			/* pt_regs->bp */
	xorl	%ebp, %ebp
	.if \save_r12_15
	pushq	%r12			/* pt_regs->r12 */
	xorl	%r12d, %r12d
	pushq	%r13			/* pt_regs->r13 */
	xorl	%r13d, %r13d
	pushq	%r14			/* pt_regs->r14 */
	xorl	%r14d, %r14d
	pushq	%r15			/* pt_regs->r15 */
	xorl	%r15d, %r15d
	.else
	pushq	$0			/* pt_regs->r12 = 0 */
	xorl	%r12d, %r12d
	pushq	$0			/* pt_regs->r13 = 0 */
	xorl	%r13d, %r13d
	pushq	$0			/* pt_regs->r14 = 0 */
	xorl	%r14d, %r14d
	pushq	$0			/* pt_regs->r15 = 0 */
	xorl	%r15d, %r15d
	.endif
.endm

	.section .entry.text, "ax"

/* SYSENTER (MSR_IA32_SYSENTER_EIP), from the vDSO: user ESP in EBP (the
 * vDSO did mov %esp,%ebp), arg6 at [EBP]; SYSENTER lost the user EIP, so
 * do_fast_syscall_32 returns to the vDSO's landing pad. */
	.p2align 4
	.globl	entry_SYSENTER_compat
	.type	entry_SYSENTER_compat, @function
entry_SYSENTER_compat:
	swapgs
	SWITCH_TO_KERNEL_CR3 scratch_reg=%rsp	/* RSP is replaced anyway */
	movq	%gs:PCPU_TOP_OF_STACK, %rsp
	movl	%eax, %eax			/* zero-extend the number */

	pushq	$__USER32_DS			/* pt_regs->ss */
	pushq	%rbp				/* pt_regs->sp (the vDSO put ESP in EBP) */
	pushfq					/* pt_regs->flags (IF clear) */
	orl	$X86_EFLAGS_IF, (%rsp)		/* user mode had interrupts on */
	pushq	$__USER32_CS			/* pt_regs->cs */
	pushq	$0				/* pt_regs->ip: set by do_fast_syscall_32 */
	pushq	%rax				/* pt_regs->orig_ax */
	pushq	%rdi				/* pt_regs->di */
	pushq	%rsi				/* pt_regs->si */
	pushq	%rdx				/* pt_regs->dx */
	pushq	%rcx				/* pt_regs->cx */
	pushq	$-ENOSYS			/* pt_regs->ax */
	PUSH_COMPAT_TAIL 0
	cld

	/* SYSENTER does not clear NT/AC/TF; clear them if set (Linux's
	 * .Lsysenter_fix_flags). */
	testl	$(X86_EFLAGS_NT | X86_EFLAGS_AC | X86_EFLAGS_TF), EFLAGS(%rsp)
	jnz	.Lsysenter_fix_flags
.Lsysenter_flags_fixed:
	IBRS_ENTER
	movq	%rsp, %rdi
	call	do_fast_syscall_32
	testl	%eax, %eax
	jz	.Lsyscall_32_done
	jmp	sysret32_from_system_call

.Lsysenter_fix_flags:
	pushq	$X86_EFLAGS_FIXED
	popfq
	jmp	.Lsysenter_flags_fixed
	.size	entry_SYSENTER_compat, .-entry_SYSENTER_compat

/* SYSCALL from compatibility mode (MSR_CSTAR; AMD CPUs): EIP in ECX, so the
 * vDSO moved the user's ECX (arg2) to EBP; arg6 is at [ESP]. */
	.p2align 4
	.globl	entry_SYSCALL_compat
	.type	entry_SYSCALL_compat, @function
entry_SYSCALL_compat:
	swapgs
	movl	%esp, %r8d			/* user ESP */
	SWITCH_TO_KERNEL_CR3 scratch_reg=%rsp
	movq	%gs:PCPU_TOP_OF_STACK, %rsp

	pushq	$__USER32_DS			/* pt_regs->ss */
	pushq	%r8				/* pt_regs->sp */
	pushq	%r11				/* pt_regs->flags */
	pushq	$__USER32_CS			/* pt_regs->cs */
	pushq	%rcx				/* pt_regs->ip */
	.globl	entry_SYSCALL_compat_after_hwframe
entry_SYSCALL_compat_after_hwframe:
	movl	%eax, %eax			/* discard orig_ax high bits */
	pushq	%rax				/* pt_regs->orig_ax */
	pushq	%rdi				/* pt_regs->di */
	pushq	%rsi				/* pt_regs->si */
#if ES_HAS(6DC936F)
	xorl	%esi, %esi			/* 6dc936f: nospec si */
#endif
	pushq	%rdx				/* pt_regs->dx */
#if ES_HAS(6DC936F)
	xorl	%edx, %edx			/* 6dc936f: nospec dx */
#endif
	pushq	%rbp				/* pt_regs->cx (the vDSO stashed it in bp) */
#if ES_HAS(6DC936F)
	xorl	%ecx, %ecx			/* 6dc936f: nospec cx */
#endif
	pushq	$-ENOSYS			/* pt_regs->ax */
	PUSH_COMPAT_TAIL 0
	IBRS_ENTER
	movq	%rsp, %rdi
	call	do_fast_syscall_32
	testl	%eax, %eax
	jz	.Lsyscall_32_done

	/* Opportunistic SYSRETL (do_fast_syscall_32 said the state allows
	 * it): back to the landing pad in ECX with RFLAGS from R11. */
	.globl	sysret32_from_system_call
sysret32_from_system_call:
	IBRS_EXIT				/* ax, cx, dx are reloaded below */
	movq	RBX(%rsp), %rbx
	movq	RBP(%rsp), %rbp
	movq	EFLAGS(%rsp), %r11
	movq	RIP(%rsp), %rcx
	addq	$RAX, %rsp			/* skip r8-r15 */
	popq	%rax				/* pt_regs->ax */
	popq	%rdx				/* skip pt_regs->cx */
	popq	%rdx				/* pt_regs->dx */
	popq	%rsi				/* pt_regs->si */
	popq	%rdi				/* pt_regs->di */
	movq	RSP-ORIG_RAX(%rsp), %rsp
	/* R12-R15 still hold what the task had; R8-R10 are zeroed so no
	 * kernel value leaks. */
	SWITCH_TO_USER_CR3 scratch_reg=%r8	/* on the user stack: no memory touched */
	xorl	%r8d, %r8d
	xorl	%r9d, %r9d
	xorl	%r10d, %r10d
	swapgs
	sysretl
	.size	entry_SYSCALL_compat, .-entry_SYSCALL_compat

/* INT 0x80 (IDT gate, DPL 3): the CPU switched to TSS.RSP0 and pushed the
 * hardware frame (Linux copies it from the entry trampoline stack; here it
 * already is on the task stack). */
	.p2align 4
	.globl	entry_INT80_compat
	.type	entry_INT80_compat, @function
entry_INT80_compat:
	swapgs
	movl	%eax, %eax			/* zero-extend the number */
	pushq	%rax				/* pt_regs->orig_ax */
	pushq	%rdi				/* pt_regs->di */
	SWITCH_TO_KERNEL_CR3 scratch_reg=%rdi	/* RDI saved; set again before the call */
	pushq	%rsi				/* pt_regs->si */
#if ES_HAS(6DC936F)
	xorl	%esi, %esi			/* 6dc936f: nospec si */
#endif
	pushq	%rdx				/* pt_regs->dx */
#if ES_HAS(6DC936F)
	xorl	%edx, %edx			/* 6dc936f: nospec dx */
#endif
	pushq	%rcx				/* pt_regs->cx */
#if ES_HAS(6DC936F)
	xorl	%ecx, %ecx			/* 6dc936f: nospec cx */
#endif
	pushq	$-ENOSYS			/* pt_regs->ax */
	PUSH_COMPAT_TAIL 1
	cld
	IBRS_ENTER

	movq	%rsp, %rdi
	call	do_int80_syscall_32
.Lsyscall_32_done:
	jmp	swapgs_restore_regs_and_return_to_usermode
	.size	entry_INT80_compat, .-entry_INT80_compat
