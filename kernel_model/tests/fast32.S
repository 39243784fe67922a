/* fast32.S - a 32-bit program for the kernel_entry_paths test: a write
 * through a copy of the vDSO's __kernel_vsyscall using SYSENTER (MODE 0,
 * Intel) or SYSCALL (MODE 1, AMD); the kernel returns to the vDSO page's
 * landing pad, which pops EBP, EDX, ECX and returns here.  Checks the
 * result and that ECX, EDX, ESI, EDI survive.  Exit status 0 = all good. */
	.code32
	.globl _start
	.text
vsys_sysenter:
	pushl %ecx
	pushl %edx
	pushl %ebp
	movl %esp, %ebp
	sysenter
	int $0x80
vsys_syscall:
	pushl %ecx
	pushl %edx
	pushl %ebp
	movl %ecx, %ebp
	syscall
	int $0x80
_start:
	movl $0x11111111, %esi
	movl $0x22222222, %edi
	movl $4, %eax
	movl $1, %ebx
	movl $msg, %ecx
	movl $len, %edx
	movl mode, %ebp
	cmpl $0, %ebp
	jne 1f
	call vsys_sysenter
	jmp 2f
1:	call vsys_syscall
2:	cmpl $len, %eax
	jne fail
	cmpl $msg, %ecx
	jne fail
	cmpl $len, %edx
	jne fail
	cmpl $0x11111111, %esi
	jne fail
	cmpl $0x22222222, %edi
	jne fail
	movl $1, %eax
	xorl %ebx, %ebx
	int $0x80
fail:
	movl $1, %eax
	movl $99, %ebx
	int $0x80
	.data
mode: .long MODE
msg: .ascii "fast 32-bit syscall ok\n"
	.set len, . - msg
	.section .note.GNU-stack, "", @progbits
