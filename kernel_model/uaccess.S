/* uaccess.S - user memory accesses of the kernel with a fault fixup
 * (Linux's get_user/put_user/copy_user and __ex_table): a #PF or #GP at an
 * instruction listed in __ex_table resumes at its fixup (es_do_exception),
 * which returns -EFAULT or the bytes left.  No range check here: the C
 * callers (include/uaccess.h, usercopy.c) check access_ok first. */
#include "kmodel.h"

/* EXTABLE insn, fixup: a fault at insn resumes at fixup (Linux's
 * _ASM_EXTABLE; traps.c searches the table) */
.macro EXTABLE insn, fixup
	.pushsection __ex_table, "a"
	.p2align 3
	.quad	\insn, \fixup
	.popsection
.endm

/* GET_USER size, insn, reg: int __es_get_user_<size>(void *dst, unsigned long uaddr) */
.macro GET_USER size, load, store
	.p2align 4
	.globl	__es_get_user_\size
	.type	__es_get_user_\size, @function
__es_get_user_\size:
1:	\load
	\store
	xorl	%eax, %eax
	ret
2:	movl	$-EFAULT, %eax
	ret
	.size	__es_get_user_\size, .-__es_get_user_\size
	EXTABLE 1b, 2b
.endm

/* PUT_USER size, insn: int __es_put_user_<size>(unsigned long uaddr, value) */
.macro PUT_USER size, store
	.p2align 4
	.globl	__es_put_user_\size
	.type	__es_put_user_\size, @function
__es_put_user_\size:
1:	\store
	xorl	%eax, %eax
	ret
2:	movl	$-EFAULT, %eax
	ret
	.size	__es_put_user_\size, .-__es_put_user_\size
	EXTABLE 1b, 2b
.endm

	.text
	GET_USER 1, "movzbl (%rsi), %eax", "movb %al, (%rdi)"
	GET_USER 2, "movzwl (%rsi), %eax", "movw %ax, (%rdi)"
	GET_USER 4, "movl (%rsi), %eax", "movl %eax, (%rdi)"
	GET_USER 8, "movq (%rsi), %rax", "movq %rax, (%rdi)"
	PUT_USER 1, "movb %sil, (%rdi)"
	PUT_USER 2, "movw %si, (%rdi)"
	PUT_USER 4, "movl %esi, (%rdi)"
	PUT_USER 8, "movq %rsi, (%rdi)"

/* unsigned long __es_copy_user(void *to, const void *from, unsigned long n)
 * A byte loop (the simple form of Linux's copy_user_generic_unrolled): on
 * a fault in either access RDX still counts the bytes not copied, which is
 * what copy_{from,to}_user return. */
	.p2align 4
	.globl	__es_copy_user
	.type	__es_copy_user, @function
__es_copy_user:
	testq	%rdx, %rdx
	jz	4f
3:	movb	(%rsi), %al
5:	movb	%al, (%rdi)
	incq	%rsi
	incq	%rdi
	decq	%rdx
	jnz	3b
4:	movq	%rdx, %rax
	ret
	.size	__es_copy_user, .-__es_copy_user
	EXTABLE 3b, 4b
	EXTABLE 5b, 4b

/* int __es_probe_write_1(unsigned long uaddr) - 0 when the user byte can be
 * read and written back unchanged, -EFAULT when either access faults
 * (what Linux's copy_to_user would hit under sig_on_uaccess_err) */
	.p2align 4
	.globl	__es_probe_write_1
	.type	__es_probe_write_1, @function
__es_probe_write_1:
6:	movb	(%rdi), %al
7:	movb	%al, (%rdi)
	xorl	%eax, %eax
	ret
8:	movl	$-EFAULT, %eax
	ret
	.size	__es_probe_write_1, .-__es_probe_write_1
	EXTABLE 6b, 8b
	EXTABLE 7b, 8b
