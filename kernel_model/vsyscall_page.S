/* vsyscall_page.S - the legacy vsyscall page (Linux's vsyscall_emu_64.S):
 * gettimeofday at 0x000, time at 0x400, getcpu at 0x800, each
 * "mov $nr,%rax; syscall; ret", the rest int3.  The loader maps it at
 * 0xffffffffff600000 readable but not executable (vsyscall=emulate), so a
 * call into it faults and emulate_vsyscall (vsyscall.c) does the work. */
	.section .rodata.vsyscall, "a"
	.p2align 12
	.globl	vsyscall_page
	.type	vsyscall_page, @object
vsyscall_page:
	movq	$96, %rax		/* __NR_gettimeofday */
	syscall
	ret
	.balign	1024, 0xcc
	movq	$201, %rax		/* __NR_time */
	syscall
	ret
	.balign	1024, 0xcc
	movq	$309, %rax		/* __NR_getcpu */
	syscall
	ret
	.balign	4096, 0xcc
	.size	vsyscall_page, 4096
