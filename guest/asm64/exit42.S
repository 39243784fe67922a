/* exit42.S - exit status only: exit(42) through the exit (60) syscall. */
    .intel_syntax noprefix
    .globl _start
    .text
_start:
    mov eax, 60
    mov edi, 42
    syscall
    hlt                     /* not reached */
    .section .note.GNU-stack, "", @progbits
