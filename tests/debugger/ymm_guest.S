/* ymm_guest.S - a few VEX instructions for the debugger's and the gdb
 * stub's vector register tests: each one changes a known part of the YMM
 * state (whole registers, an upper half only, all upper halves at once),
 * with labels to stop at and a getpid in between so that the kernel runs
 * with the values live. */
    .intel_syntax noprefix
    .globl _start, ones_set, floats_set, upper_cleared, after_getpid
    .text
_start:
    vpcmpeqd ymm0, ymm0, ymm0       /* ymm0: all ones, upper half included */
ones_set:
    lea rax, [rip + values]
    vmovups ymm1, [rax]             /* ymm1: the floats 1.0 .. 8.0, low first */
floats_set:
    vzeroupper                      /* bits 255:128 of every YMM register := 0 */
upper_cleared:
    mov eax, 39                     /* getpid */
    syscall
after_getpid:
    vinsertf128 ymm2, ymm1, xmm0, 1 /* ymm2: ones above, 4.0 .. 1.0 below */
    vperm2f128 ymm3, ymm4, ymm4, 1  /* ymm3: ymm4's halves swapped, so a
                                       debugger's write of ymm4's upper half
                                       shows in ymm3's lower one */
    mov eax, 60
    xor edi, edi
    syscall
    hlt                             /* not reached */

    .section .rodata
    .balign 32
values:
    .float 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0
    .section .note.GNU-stack, "", @progbits
