/* null_read.S - a program that dies of SIGSEGV: it reads address 0 after
 * one getpid, so a debugger session sees a syscall, then the fault. */
    .intel_syntax noprefix
    .globl _start
    .text
_start:
    mov eax, 39             /* getpid */
    syscall
    xor eax, eax
    mov rax, [rax]          /* #PF: not present */
    hlt                     /* not reached */
    .section .note.GNU-stack, "", @progbits
