/* loop.S - a counted loop with a data-dependent branch, then prints the
 * result as 16 hex digits and exits with its low byte. */
    .intel_syntax noprefix
    .globl _start
    .text
_start:
    xor eax, eax            /* accumulator */
    mov ecx, 3000000
1:  lea rdx, [rax + rcx]
    test cl, 1
    jz 2f
    rol rdx, 7
2:  xor rax, rdx
    dec ecx
    jnz 1b
    mov rbx, rax            /* keep the result */
    lea rdi, [rip + buf + 16]
    mov byte ptr [rdi], 10
    mov ecx, 16
3:  mov edx, eax
    and edx, 15
    lea rsi, [rip + hex]
    mov dl, [rsi + rdx]
    dec rdi
    mov [rdi], dl
    shr rax, 4
    dec ecx
    jnz 3b
    mov eax, 1              /* write(1, buf, 17) */
    mov esi, edi
    mov rsi, rdi
    mov edi, 1
    mov edx, 17
    syscall
    mov eax, 231
    movzx edi, bl
    and edi, 63             /* keep clear of the 128+N signal range */
    syscall
    .section .rodata
hex: .ascii "0123456789abcdef"
    .bss
buf: .skip 32
    .section .note.GNU-stack, "", @progbits
