/* getpid.S - three getpid calls, then exit_group(0): the smallest program
 * with a system call that does nothing but enter and leave the kernel
 * (tests/test_traces.cc traces its entry path). */
    .intel_syntax noprefix
    .globl _start
    .text
_start:
    mov ebx, 3
1:  mov eax, 39             /* getpid */
    syscall
    dec ebx
    jnz 1b
    mov eax, 231            /* exit_group */
    xor edi, edi
    syscall
    .section .note.GNU-stack, "", @progbits
