/* sdk_add2.S - the guest of the kernel_sdk test: calls the student's
 * add2(40, 2) system call, number NR (given by the test, the first free
 * number of the kernel tree's table), and exits with its result (42).
 * -DI386: the i386 program, int $0x80 with the syscall_32.tbl number. */
	.globl _start
	.text
_start:
#ifdef I386
	.code32
	movl $NR, %eax
	movl $40, %ebx
	movl $2, %ecx
	int $0x80
	movl %eax, %ebx
	movl $1, %eax
	int $0x80
#else
	movl $NR, %eax
	movq $40, %rdi
	movq $2, %rsi
	syscall
	movl %eax, %edi
	movl $60, %eax
	syscall
#endif
