/* uaccess.S - reading user memory from the kernel with a fault fixup
 * (Linux's get_user and __ex_table: a #PF/#GP at a listed instruction
 * resumes at its fixup, see es_do_exception). */
#include "kmodel.h"

	.text
/* int es_get_user_u64(u64 *dst, unsigned long uaddr) - no range check here */
	.p2align 4
	.globl	__es_get_user_8
	.type	__es_get_user_8, @function
__es_get_user_8:
1:	movq	(%rsi), %rax
	movq	%rax, (%rdi)
	xorl	%eax, %eax
	ret
2:	movl	$-EFAULT, %eax
	ret
	.size	__es_get_user_8, .-__es_get_user_8

	.p2align 4
	.globl	__es_get_user_4
	.type	__es_get_user_4, @function
__es_get_user_4:
3:	movl	(%rsi), %eax
	movl	%eax, (%rdi)
	xorl	%eax, %eax
	ret
4:	movl	$-EFAULT, %eax
	ret
	.size	__es_get_user_4, .-__es_get_user_4

/* int __es_probe_write_1(unsigned long uaddr) - 0 when the user byte can be
 * read and written back unchanged, -EFAULT when either access faults
 * (what Linux's copy_to_user would hit under sig_on_uaccess_err) */
	.p2align 4
	.globl	__es_probe_write_1
	.type	__es_probe_write_1, @function
__es_probe_write_1:
5:	movb	(%rdi), %al
6:	movb	%al, (%rdi)
	xorl	%eax, %eax
	ret
7:	movl	$-EFAULT, %eax
	ret
	.size	__es_probe_write_1, .-__es_probe_write_1

	.section __ex_table, "a"
	.p2align 3
	.quad	1b, 2b
	.quad	3b, 4b
	.quad	5b, 7b
	.quad	6b, 7b
