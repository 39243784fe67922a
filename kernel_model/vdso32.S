/* vdso32.S - the 32-bit vDSO's code page (Linux's vdso32/system_call.S,
 * reduced to __kernel_vsyscall).  Two flavours with the same layout; the
 * loader copies the one for the CPU (es_boot.h):
 *   __kernel_vsyscall:  push %ecx; push %edx; push %ebp
 *                       mov %esp,%ebp; sysenter     (Intel: vdso32_image)
 *                       mov %ecx,%ebp; syscall      (AMD: vdso32_image_syscall)
 *                       int $0x80                   (never reached: the kernel
 *                                                    returns to the landing pad)
 *   int80_landing_pad:  pop %ebp; pop %edx; pop %ecx; ret
 */
#include "es_boot.h"

.macro vdso32 sym fast
	.p2align 12
	.globl	\sym
	.type	\sym, @object
\sym:
	.code32
	pushl	%ecx
	pushl	%edx
	pushl	%ebp
	.if \fast
	movl	%ecx, %ebp
	syscall
	.else
	movl	%esp, %ebp
	sysenter
	.endif
	int	$0x80
.L\sym\()_landing:
	popl	%ebp
	popl	%edx
	popl	%ecx
	ret
	.code64
	.if (.L\sym\()_landing - \sym) != ES_VDSO32_INT80_LANDING_PAD
	.error "int80_landing_pad is not at ES_VDSO32_INT80_LANDING_PAD"
	.endif
	.balign	4096, 0xcc
	.size	\sym, 4096
.endm

	.section .rodata.vdso32, "a"
	vdso32 vdso32_image 0
	vdso32 vdso32_image_syscall 1
