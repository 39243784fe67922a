/* head_64.S - startup_64 and the kernel's stacks.
 *
 * The loader (sim/kernel.c) starts here at CPL 0 in 64-bit mode, CS 0x10,
 * SS 0x18, interrupts off, RSP = es_boot_info.boot_stack_top, with
 * es_boot_info filled in.  es_setup (setup.c) loads the GDT, TSS, IDT and
 * MSRs; then we enter the user program with IRETQ, all GPRs zero, as
 * Linux's start_thread leaves them.
 *
 * startup_64 is entry text (.text.head is the first part of .entry.text in
 * kernel.lds): under pti its last instructions run on the user PGD.  The
 * IRET frame is built on the task stack, which both PGDs map. */
#include "kmodel.h"
#include "calling.h"

	.section .text.head, "ax"
	.p2align 4
	.globl	startup_64
	.type	startup_64, @function
startup_64:
	cld
	call	es_setup

	/* IRET frame from es_boot_info, on the task stack */
	leaq	es_task_stack_top(%rip), %rsp
	pushq	es_boot_info+ES_BOOT_USER_SS(%rip)
	pushq	es_boot_info+ES_BOOT_USER_RSP(%rip)
	pushq	es_boot_info+ES_BOOT_USER_RFLAGS(%rip)
	pushq	es_boot_info+ES_BOOT_USER_CS(%rip)
	pushq	es_boot_info+ES_BOOT_USER_RIP(%rip)

	SWITCH_TO_USER_CR3 scratch_reg=%rax	/* with the kernel's GS */
	swapgs				/* GS base: the user's (0); per-cpu area in KERNEL_GS_BASE */
	xorl	%eax, %eax
	xorl	%ebx, %ebx
	xorl	%ecx, %ecx
	xorl	%edx, %edx
	xorl	%esi, %esi
	xorl	%edi, %edi
	xorl	%ebp, %ebp
	xorl	%r8d, %r8d
	xorl	%r9d, %r9d
	xorl	%r10d, %r10d
	xorl	%r11d, %r11d
	xorl	%r12d, %r12d
	xorl	%r13d, %r13d
	xorl	%r14d, %r14d
	xorl	%r15d, %r15d
	iretq
	.size	startup_64, .-startup_64

	.bss
	.p2align 12
	.globl	boot_stack
boot_stack:
	.skip	KERNEL_STACK_SIZE
	.globl	boot_stack_top
boot_stack_top:
	.globl	es_task_stack
	.type	es_task_stack, @object
	.size	es_task_stack, KERNEL_STACK_SIZE	/* sized: pti maps it in the user PGD */
es_task_stack:
	.skip	KERNEL_STACK_SIZE
	.globl	es_task_stack_top
es_task_stack_top:
