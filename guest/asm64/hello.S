/* hello.S - the smallest useful guest: write(1, msg, len); exit_group(0). */
    .intel_syntax noprefix
    .globl _start
    .text
_start:
    mov eax, 1              /* write */
    mov edi, 1
    lea rsi, [rip + msg]
    mov edx, msg_end - msg
    syscall
    mov eax, 231            /* exit_group */
    xor edi, edi
    syscall
    .section .rodata
msg: .ascii "hello, world\n"
msg_end:
    .section .note.GNU-stack, "", @progbits
