/* entry_64.S - 64-bit SYSCALL entry, exception entries and the return paths
 * (after Linux 4.16/4.17 arch/x86/entry/entry_64.S and calling.h; our own
 * code, no KPTI trampoline: TSS.RSP0 is the task stack's top, which is also
 * cpu_current_top_of_stack).
 *
 * Depends on ES_PATCHES bits dfe64506 (do_syscall_64's arguments) and
 * 6dc936f (DX/CX cleared by PUSH_AND_CLEAR_REGS).
 *
 * Mitigation sites (calling.h, patched before boot): SWITCH_TO_KERNEL_CR3
 * right after SWAPGS on every entry from user mode and SWITCH_TO_USER_CR3
 * as the last step before SYSRET/IRET (pti); IBRS_ENTER once pt_regs is
 * saved and IBRS_EXIT before the registers are restored (ibrs).  The code
 * lives in .entry.text, the only kernel text the user PGD maps under pti,
 * so everything up to the CR3 switch (and after the switch back) must be
 * here and touch only the entry data (es_percpu, GDT/IDT/TSS) and the task
 * stack. */
#include "kmodel.h"
#include "calling.h"

/* Builds the register part of struct pt_regs below an orig_ax slot, in
 * Linux's push order (di first, r15 last), clearing each register Linux
 * 4.16 clears after saving it ("nospec": no user value stays live for
 * speculation in the kernel's C code).  Seed 6dc936f175cc adds DX and CX:
 * DI and SI are not cleared because they carry do_syscall_64's arguments. */
.macro PUSH_AND_CLEAR_REGS rax=%rax
	pushq	%rdi			/* pt_regs->di */
	pushq	%rsi			/* pt_regs->si */
	pushq	%rdx			/* pt_regs->dx */
#if ES_HAS(6DC936F)
	xorl	%edx, %edx		/* 6dc936f: nospec dx */
#endif
	pushq	%rcx			/* pt_regs->cx */
#if ES_HAS(6DC936F)
	xorl	%ecx, %ecx		/* 6dc936f: nospec cx */
#endif
	pushq	\rax			/* pt_regs->ax */
	pushq	%r8			/* pt_regs->r8 */
	xorl	%r8d, %r8d
	pushq	%r9			/* pt_regs->r9 */
	xorl	%r9d, %r9d
	pushq	%r10			/* pt_regs->r10 */
	xorl	%r10d, %r10d
	pushq	%r11			/* pt_regs->r11 */
	xorl	%r11d, %r11d
	pushq	%rbx			/* pt_regs->bx */
	xorl	%ebx, %ebx
	pushq	%rbp			/* pt_regs->bp */
	xorl	%ebp, %ebp
	pushq	%r12			/* pt_regs->r12 */
	xorl	%r12d, %r12d
	pushq	%r13			/* pt_regs->r13 */
	xorl	%r13d, %r13d
	pushq	%r14			/* pt_regs->r14 */
	xorl	%r14d, %r14d
	pushq	%r15			/* pt_regs->r15 */
	xorl	%r15d, %r15d
.endm

/* Restores the registers from pt_regs; leaves RSP at orig_ax (or at di
 * with pop_rdi=0).  skip_r11rcx: RCX and R11 already hold the SYSRET
 * values. */
.macro POP_REGS pop_rdi=1 skip_r11rcx=0
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%rbp
	popq	%rbx
	.if \skip_r11rcx
	popq	%rsi
	.else
	popq	%r11
	.endif
	popq	%r10
	popq	%r9
	popq	%r8
	popq	%rax
	.if \skip_r11rcx
	popq	%rsi
	.else
	popq	%rcx
	.endif
	popq	%rdx
	popq	%rsi
	.if \pop_rdi
	popq	%rdi
	.endif
.endm

	.section .entry.text, "ax"

/* SYSCALL from 64-bit mode (MSR_LSTAR).  The CPU left RIP in RCX, RFLAGS
 * in R11, CS/SS from STAR, interrupts masked by SFMASK; RSP is still the
 * user's. */
	.p2align 4
	.globl	entry_SYSCALL_64
	.type	entry_SYSCALL_64, @function
entry_SYSCALL_64:
	swapgs
	movq	%rsp, %gs:PCPU_RSP_SCRATCH
	SWITCH_TO_KERNEL_CR3 scratch_reg=%rsp
	movq	%gs:PCPU_TOP_OF_STACK, %rsp

	/* the hardware frame IRET would use */
	pushq	$__USER_DS			/* pt_regs->ss */
	pushq	%gs:PCPU_RSP_SCRATCH		/* pt_regs->sp */
	pushq	%r11				/* pt_regs->flags */
	pushq	$__USER_CS			/* pt_regs->cs */
	pushq	%rcx				/* pt_regs->ip */
	.globl	entry_SYSCALL_64_after_hwframe
entry_SYSCALL_64_after_hwframe:
	pushq	%rax				/* pt_regs->orig_ax */

	PUSH_AND_CLEAR_REGS rax=$-ENOSYS

#if ES_HAS(DFE64506)
	/* dfe64506c01e: the number is still in RAX; pass it, do not reload it */
	movq	%rax, %rdi
	movq	%rsp, %rsi
#else
	movq	%rsp, %rdi
#endif
	IBRS_ENTER				/* after the arguments: clobbers ax, cx, dx */
	call	do_syscall_64
	IBRS_EXIT

	/* Opportunistic SYSRET (Linux's conditions): RCX == RIP, canonical
	 * RIP (SYSRET #GPs in ring 0 on Intel otherwise), CS and SS the
	 * values SYSRET loads, R11 == RFLAGS, neither RF nor TF set. */
	movq	RCX(%rsp), %rcx
	movq	RIP(%rsp), %r11
	cmpq	%rcx, %r11
	jne	.Lrestore_regs_and_return_to_usermode

	shlq	$16, %rcx			/* 64 - (47 + 1) */
	sarq	$16, %rcx
	cmpq	%rcx, %r11
	jne	.Lrestore_regs_and_return_to_usermode

	cmpq	$__USER_CS, CS(%rsp)
	jne	.Lrestore_regs_and_return_to_usermode

	movq	R11(%rsp), %r11
	cmpq	%r11, EFLAGS(%rsp)
	jne	.Lrestore_regs_and_return_to_usermode

	testq	$(X86_EFLAGS_RF | X86_EFLAGS_TF), %r11
	jnz	.Lrestore_regs_and_return_to_usermode

	cmpq	$__USER_DS, SS(%rsp)
	jne	.Lrestore_regs_and_return_to_usermode

	.globl	syscall_return_via_sysret
syscall_return_via_sysret:
	POP_REGS pop_rdi=0 skip_r11rcx=1
	SWITCH_TO_USER_CR3 scratch_reg=%rdi	/* RDI is popped below */
	popq	%rdi
	movq	RSP-ORIG_RAX(%rsp), %rsp
	swapgs
	sysretq
	.size	entry_SYSCALL_64, .-entry_SYSCALL_64

/* The IRET way back to user mode (any entry; pt_regs on the stack).  The
 * 64-bit SYSCALL path did IBRS_EXIT already and comes in below it. */
	.p2align 4
	.globl	swapgs_restore_regs_and_return_to_usermode
	.type	swapgs_restore_regs_and_return_to_usermode, @function
swapgs_restore_regs_and_return_to_usermode:
	IBRS_EXIT
.Lrestore_regs_and_return_to_usermode:
	POP_REGS pop_rdi=0
	SWITCH_TO_USER_CR3 scratch_reg=%rdi	/* on the task stack: mapped in both PGDs */
	popq	%rdi
	addq	$8, %rsp			/* orig_ax */
	swapgs
	iretq
	.size	swapgs_restore_regs_and_return_to_usermode, .-swapgs_restore_regs_and_return_to_usermode

/* Exceptions 0-31.  Vectors without an error code push -1 in its place so
 * the frame is the same (Linux's idtentry); the error code ends up in the
 * orig_ax slot and is handed to es_do_exception, which gets orig_ax = -1. */
.macro idtentry sym vec has_err
	.p2align 4
	.globl	\sym
	.type	\sym, @function
\sym:
	.if \has_err == 0
	pushq	$-1
	.endif
	/* pt_regs first (the task stack is mapped in the user PGD too), so
	 * the CR3 switch and IBRS have scratch registers (Linux 4.17's
	 * error_entry order) */
	PUSH_AND_CLEAR_REGS
	testb	$3, CS(%rsp)
	jz	1f
	swapgs					/* from user mode */
	SWITCH_TO_KERNEL_CR3 scratch_reg=%rax
	IBRS_ENTER
1:
	cld
	movq	%rsp, %rdi
	movl	$\vec, %esi
	movq	ORIG_RAX(%rsp), %rdx
	movq	$-1, ORIG_RAX(%rsp)
	call	es_do_exception
	jmp	es_exception_return
	.size	\sym, .-\sym
.endm

	idtentry divide_error			0	0
	idtentry debug				1	0
	idtentry nmi				2	0
	idtentry int3				3	0
	idtentry overflow			4	0
	idtentry bounds				5	0
	idtentry invalid_op			6	0
	idtentry device_not_available		7	0
	idtentry double_fault			8	1
	idtentry coprocessor_segment_overrun	9	0
	idtentry invalid_TSS			10	1
	idtentry segment_not_present		11	1
	idtentry stack_segment			12	1
	idtentry general_protection		13	1
	idtentry page_fault			14	1
	idtentry spurious_interrupt_bug		15	0
	idtentry coprocessor_error		16	0
	idtentry alignment_check		17	1
	idtentry machine_check			18	0
	idtentry simd_coprocessor_error		19	0
	idtentry virtualization_exception	20	0
	idtentry control_protection		21	1
	idtentry reserved_exception_22		22	0
	idtentry reserved_exception_23		23	0
	idtentry reserved_exception_24		24	0
	idtentry reserved_exception_25		25	0
	idtentry reserved_exception_26		26	0
	idtentry reserved_exception_27		27	0
	idtentry reserved_exception_28		28	0
	idtentry vmm_communication		29	1
	idtentry security_exception		30	1
	idtentry reserved_exception_31		31	0
	/* the local APIC timer (Linux's LOCAL_TIMER_VECTOR): the simulator's
	 * modeled tick, raised when a timer expired (sim/cpu.c) */
	idtentry apic_timer_interrupt		0xec	0
	/* other vectors 32-255: no device interrupts in this machine */
	idtentry unexpected_interrupt		255	0

	.p2align 4
	.type	es_exception_return, @function
es_exception_return:
	testb	$3, CS(%rsp)
	jz	1f
	jmp	swapgs_restore_regs_and_return_to_usermode
1:	POP_REGS
	addq	$8, %rsp
	iretq
	.size	es_exception_return, .-es_exception_return

/* A forked task's first instructions (Linux's ret_from_fork): the
 * simulator built its stack as es_switch_to leaves one, with this as the
 * return address and the pt_regs copied from the parent (ax = 0) above.
 * The exit work first, then the IRET way back: Linux returns a new task
 * by IRET too (the pt_regs' rcx and r11 are the user's, not SYSRET's). */
	.p2align 4
	.globl	ret_from_fork
	.type	ret_from_fork, @function
ret_from_fork:
	movq	%rsp, %rdi			/* pt_regs */
	call	es_ret_from_fork
	jmp	swapgs_restore_regs_and_return_to_usermode
	.size	ret_from_fork, .-ret_from_fork

/* es_switch_to(struct es_next *next) (Linux's __switch_to_asm and the
 * switch_mm/load_sp0 parts of __switch_to): the callee-saved registers go
 * on this task's stack, the simulator records that RSP and picks the next
 * task (ES_SCHED_SWITCH); for another task, its PGD goes into CR3 (a full
 * flush: PCID 0 is every process's kernel ASID here), its stack top into
 * TSS.RSP0 and cpu_current_top_of_stack, and the pops and RET happen on its
 * stack.  Plain kernel text: it runs on kernel CR3 only. */
	.text
	.p2align 4
	.globl	es_switch_to
	.type	es_switch_to, @function
es_switch_to:
	pushq	%rbp
	pushq	%rbx
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
	movq	%rdi, %rdx			/* struct es_next, on this stack */
	movq	%rsp, %rsi			/* where this task resumes */
	movl	$ES_SCHED_SWITCH, %edi
	movl	$ES_HC_SCHED, %eax
	vmcall
	testq	%rax, %rax
	jz	1f
	movq	ES_NEXT_CR3(%rdx), %rax		/* 0: a thread of the same mm */
	testq	%rax, %rax			/* (switch_mm_irqs_off: no CR3 write) */
	jz	2f
	movq	%rax, %cr3
2:	movq	ES_NEXT_TOP(%rdx), %rax
	movq	%rax, %gs:PCPU_TOP_OF_STACK
	movq	%rax, es_tss+TSS_RSP0(%rip)
	movq	ES_NEXT_SP(%rdx), %rsp
	/* Linux's __switch_to (C, after __switch_to_asm) leaves its own
	 * kernel values in the caller-saved registers; nothing here would
	 * overwrite the previous task's, so they are cleared: no value of
	 * one task's system call reaches another task's kernel code (a new
	 * child's ret_from_fork starts with only its pt_regs) */
	xorl	%ecx, %ecx
	xorl	%esi, %esi
	xorl	%edi, %edi
	xorl	%r8d, %r8d
	xorl	%r9d, %r9d
	xorl	%r10d, %r10d
	xorl	%r11d, %r11d
1:	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%rbx
	popq	%rbp
	ret
	.size	es_switch_to, .-es_switch_to

	.section .rodata
	.p2align 3
	.globl	es_exception_stubs
es_exception_stubs:
	.quad divide_error, debug, nmi, int3, overflow, bounds, invalid_op
	.quad device_not_available, double_fault, coprocessor_segment_overrun
	.quad invalid_TSS, segment_not_present, stack_segment, general_protection
	.quad page_fault, spurious_interrupt_bug, coprocessor_error, alignment_check
	.quad machine_check, simd_coprocessor_error, virtualization_exception
	.quad control_protection, reserved_exception_22, reserved_exception_23
	.quad reserved_exception_24, reserved_exception_25, reserved_exception_26
	.quad reserved_exception_27, reserved_exception_28, vmm_communication
	.quad security_exception, reserved_exception_31
	.size	es_exception_stubs, .-es_exception_stubs
