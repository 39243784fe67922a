/* diff_stub.S - templates of the native side of the differential test.
 *
 * The harness copies these to a fixed page below 4 GiB (DIFF_RB), so every
 * address they use is an absolute constant: the input state at DIFF_IN, the
 * output state at DIFF_OUT, the host's RSP/MXCSR/DS/ES at DIFF_SAVE and a
 * private scratch stack for POPF/PUSHF (so the instruction's own stack
 * memory is touched only by the instruction).  DIFF_SLOT bytes of NOPs
 * hold the instruction under test; the NOPs after it change nothing.
 *
 * The 32-bit template switches the 64-bit process into compatibility mode
 * with a far return to Linux's USER32_CS (0x23) and back to USER_CS (0x33),
 * so both modes run in one process with one set of mappings (see
 * diff_native.c for why this beats a separate -m32 runner).
 *
 * State layout (struct diff_state in diff_native.h): gpr[16] at 0,
 * rflags at 128, mxcsr at 136, xmm[16] at 144, an FXSAVE image at 400 (the
 * x87 state; loaded first, so MXCSR and XMM come from their own fields),
 * ymmh[16] (bits 255:128 of the YMM registers) at 912.  The XMM halves are
 * loaded with MOVDQU (which keeps bits 255:128), then VINSERTF128 puts the
 * upper halves in, so the instruction starts from the full random YMM
 * state: a legacy SSE instruction must keep the upper halves, a VEX.128
 * one must zero them.  VEXTRACTF128 stores them after.  (VINSERTF128 and
 * VEXTRACTF128 are AVX; the integer forms would need AVX2.)  FNINIT after
 * the final FXSAVE leaves the host's x87 unit clean (no pending exception
 * can surface later in the harness), VZEROUPPER the upper halves (no
 * SSE/AVX transition penalty in the harness's own code on Intel hosts).
 */
#define FX 400
#define DIFF_RB 0x20000000
#define DIFF_IN (DIFF_RB + 0x1000)
#define DIFF_OUT (DIFF_RB + 0x1800) /* sizeof(diff_state) is 1168 */
#define DIFF_SAVE (DIFF_RB + 0x2000)
#define DIFF_SCRATCH_TOP (DIFF_RB + 0x3000)
#define DIFF_STUB32_AT (DIFF_RB + 0x800)
#define X(i) (144 + 16 * (i))
#define Y(i) (912 + 16 * (i))

/* The vector registers 0..n-1 from DIFF_IN (XMM halves, then bits
 * 255:128) and to DIFF_OUT. */
        .macro LOAD_VREGS n
        .irp i,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
        .if \i < \n
        movdqu DIFF_IN + X(\i), %xmm\i
        vinsertf128 $1, DIFF_IN + Y(\i), %ymm\i, %ymm\i
        .endif
        .endr
        .endm
        .macro STORE_VREGS n
        .irp i,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
        .if \i < \n
        movdqu %xmm\i, DIFF_OUT + X(\i)
        vextractf128 $1, %ymm\i, DIFF_OUT + Y(\i)
        .endif
        .endr
        .endm

        .text
        .code64

/* void stub64(void): called through a function pointer at DIFF_RB */
        .globl diff_stub64, diff_stub64_slot, diff_stub64_end
diff_stub64:
        push %rbx
        push %rbp
        push %r12
        push %r13
        push %r14
        push %r15
        mov %rsp, DIFF_SAVE
        stmxcsr DIFF_SAVE + 8
        fxrstor64 DIFF_IN + FX
        ldmxcsr DIFF_IN + 136
        LOAD_VREGS 16
        mov $DIFF_SCRATCH_TOP, %esp
        pushq DIFF_IN + 128
        popfq
        mov DIFF_IN + 0, %rax
        mov DIFF_IN + 8, %rcx
        mov DIFF_IN + 16, %rdx
        mov DIFF_IN + 24, %rbx
        mov DIFF_IN + 40, %rbp
        mov DIFF_IN + 48, %rsi
        mov DIFF_IN + 56, %rdi
        mov DIFF_IN + 64, %r8
        mov DIFF_IN + 72, %r9
        mov DIFF_IN + 80, %r10
        mov DIFF_IN + 88, %r11
        mov DIFF_IN + 96, %r12
        mov DIFF_IN + 104, %r13
        mov DIFF_IN + 112, %r14
        mov DIFF_IN + 120, %r15
        mov DIFF_IN + 32, %rsp
diff_stub64_slot:
        .fill 16, 1, 0x90
        mov %rax, DIFF_OUT + 0
        mov %rcx, DIFF_OUT + 8
        mov %rdx, DIFF_OUT + 16
        mov %rbx, DIFF_OUT + 24
        mov %rsp, DIFF_OUT + 32
        mov %rbp, DIFF_OUT + 40
        mov %rsi, DIFF_OUT + 48
        mov %rdi, DIFF_OUT + 56
        mov %r8, DIFF_OUT + 64
        mov %r9, DIFF_OUT + 72
        mov %r10, DIFF_OUT + 80
        mov %r11, DIFF_OUT + 88
        mov %r12, DIFF_OUT + 96
        mov %r13, DIFF_OUT + 104
        mov %r14, DIFF_OUT + 112
        mov %r15, DIFF_OUT + 120
        mov $DIFF_SCRATCH_TOP, %esp
        pushfq
        popq DIFF_OUT + 128
        cld
        stmxcsr DIFF_OUT + 136
        STORE_VREGS 16
        fxsave64 DIFF_OUT + FX
        fninit
        vzeroupper
        ldmxcsr DIFF_SAVE + 8
        mov DIFF_SAVE, %rsp
        pop %r15
        pop %r14
        pop %r13
        pop %r12
        pop %rbp
        pop %rbx
        ret
diff_stub64_end:

/* void stub32(void): called at DIFF_STUB32_AT; runs the slot in
 * compatibility mode.  DS and ES are null in a 64-bit Linux process, which
 * would #GP in compatibility mode: load USER_DS (0x2b) and restore after. */
        .globl diff_stub32, diff_stub32_slot, diff_stub32_end
diff_stub32:
        push %rbx
        push %rbp
        push %r12
        push %r13
        push %r14
        push %r15
        mov %rsp, DIFF_SAVE
        stmxcsr DIFF_SAVE + 8
        movw %ds, DIFF_SAVE + 16
        movw %es, DIFF_SAVE + 18
        mov $0x2b, %eax
        mov %eax, %ds
        mov %eax, %es
        pushq $0x23
        pushq $(DIFF_STUB32_AT + (1f - diff_stub32))
        lretq
        .code32
1:
        mov $DIFF_SCRATCH_TOP, %esp
        fxrstor DIFF_IN + FX
        ldmxcsr DIFF_IN + 136
        LOAD_VREGS 8
        pushl DIFF_IN + 128
        popfl
        mov DIFF_IN + 0, %eax
        mov DIFF_IN + 8, %ecx
        mov DIFF_IN + 16, %edx
        mov DIFF_IN + 24, %ebx
        mov DIFF_IN + 40, %ebp
        mov DIFF_IN + 48, %esi
        mov DIFF_IN + 56, %edi
        mov DIFF_IN + 32, %esp
diff_stub32_slot:
        .fill 16, 1, 0x90
        mov %eax, DIFF_OUT + 0
        mov %ecx, DIFF_OUT + 8
        mov %edx, DIFF_OUT + 16
        mov %ebx, DIFF_OUT + 24
        mov %esp, DIFF_OUT + 32
        mov %ebp, DIFF_OUT + 40
        mov %esi, DIFF_OUT + 48
        mov %edi, DIFF_OUT + 56
        mov $DIFF_SCRATCH_TOP, %esp
        pushfl
        popl DIFF_OUT + 128
        cld
        stmxcsr DIFF_OUT + 136
        STORE_VREGS 8
        fxsave DIFF_OUT + FX
        fninit
        vzeroupper
        pushl $0x33
        pushl $(DIFF_STUB32_AT + (2f - diff_stub32))
        lret
        .code64
2:
        mov DIFF_SAVE, %rsp
        movw DIFF_SAVE + 16, %ax
        mov %eax, %ds
        movw DIFF_SAVE + 18, %ax
        mov %eax, %es
        ldmxcsr DIFF_SAVE + 8
        pop %r15
        pop %r14
        pop %r13
        pop %r12
        pop %rbp
        pop %rbx
        ret
diff_stub32_end:

        .section .note.GNU-stack, "", @progbits
