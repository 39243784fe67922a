/* vsyscall64.S - a 64-bit program for the kernel_entry_paths test: the
 * three vsyscall entries (emulated by the kernel's #PF handler; getcpu must
 * leave RDX as it was, seed fa697140), -ENOSYS for an out-of-range number,
 * with and without the x32 bit, and for a hole of the table, and a 32-bit
 * write through int $0x80 from 64-bit mode.  Exit status 0 = all good. */
	.globl	_start
	.text
_start:
	subq	$64, %rsp
	leaq	16(%rsp), %rdi		/* gettimeofday(&tv, NULL) */
	xorl	%esi, %esi
	movq	$0x1234, %rdx
	movq	$0xffffffffff600000, %rax
	call	*%rax
	movq	%rax, %r12
	xorl	%edi, %edi		/* time(NULL) */
	movq	$0xffffffffff600400, %rax
	call	*%rax
	movq	%rax, %r13
	leaq	0(%rsp), %rdi		/* getcpu(&cpu, &node, <junk in rdx>) */
	leaq	8(%rsp), %rsi
	movq	$0x5555, %rdx
	movq	$0xffffffffff600800, %rax
	call	*%rax
	movq	%rax, %r14
	movl	$1, %edi
	cmpq	$0x5555, %rdx
	jne	fail
	movl	$2, %edi
	testq	%r12, %r12
	jne	fail
	movl	$3, %edi
	testq	%r13, %r13
	jle	fail
	movl	$4, %edi
	testq	%r14, %r14
	jne	fail
	movl	$5, %edi
	movq	$1000, %rax
	syscall
	cmpq	$-38, %rax
	jne	fail
	movl	$6, %edi
	movq	$0x40000000+1000, %rax
	syscall
	cmpq	$-38, %rax
	jne	fail
	movl	$7, %edi
	movq	$400, %rax
	syscall
	cmpq	$-38, %rax
	jne	fail
	movl	$4, %eax		/* i386 write(1, msg, len) */
	movl	$1, %ebx
	leaq	msg(%rip), %rcx
	movl	$msglen, %edx
	int	$0x80
	movl	$8, %edi
	cmpq	$msglen, %rax
	jne	fail
	movl	$60, %eax
	xorl	%edi, %edi
	syscall
fail:
	movl	$60, %eax
	syscall

	.data
msg:	.ascii	"int $0x80 from 64-bit mode\n"
	.set	msglen, . - msg
	.section .note.GNU-stack, "", @progbits
