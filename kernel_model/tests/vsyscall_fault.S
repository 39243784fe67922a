/* vsyscall_fault.S - a bad output pointer given to an emulated vsyscall
 * must end the process with SIGSEGV as Linux 4.16/4.17 do ("vsyscall
 * fault"), not return -EFAULT.  MODE 0: gettimeofday(0x1, NULL) (a user
 * address with nothing mapped: the copy faults); MODE 1: time(kernel
 * address) (fails the range check); MODE 2: getcpu(&ok, 0x1, junk).
 * Reaching the exit below means the call returned: exit status 7. */
	.globl	_start
	.text
_start:
	subq	$64, %rsp
#if MODE == 0
	movl	$1, %edi
	xorl	%esi, %esi
	movq	$0xffffffffff600000, %rax
#elif MODE == 1
	movq	$0xffff888000000000, %rdi
	movq	$0xffffffffff600400, %rax
#else
	leaq	0(%rsp), %rdi
	movl	$1, %esi
	movq	$0xffffffffff600800, %rax
#endif
	call	*%rax
	movl	$60, %eax
	movl	$7, %edi
	syscall
	.section .note.GNU-stack, "", @progbits
