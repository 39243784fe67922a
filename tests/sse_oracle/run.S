    .text
    .globl run_native
# run_native(state *rdi, code *rsi): loads state, calls code, stores state.
run_native:
    push %rbx; push %rbp; push %r12; push %r13; push %r14; push %r15
    mov %rdi, g_state(%rip)
    mov %rsi, g_code(%rip)
    stmxcsr g_host(%rip)
    movdqu 0(%rdi),%xmm0;  movdqu 16(%rdi),%xmm1;  movdqu 32(%rdi),%xmm2;  movdqu 48(%rdi),%xmm3
    movdqu 64(%rdi),%xmm4; movdqu 80(%rdi),%xmm5;  movdqu 96(%rdi),%xmm6;  movdqu 112(%rdi),%xmm7
    movdqu 128(%rdi),%xmm8; movdqu 144(%rdi),%xmm9; movdqu 160(%rdi),%xmm10; movdqu 176(%rdi),%xmm11
    movdqu 192(%rdi),%xmm12; movdqu 208(%rdi),%xmm13; movdqu 224(%rdi),%xmm14; movdqu 240(%rdi),%xmm15
    ldmxcsr 392(%rdi)
    pushq 384(%rdi); popfq
    mov 256(%rdi),%rax; mov 264(%rdi),%rcx; mov 272(%rdi),%rdx; mov 280(%rdi),%rbx
    mov 296(%rdi),%rbp; mov 304(%rdi),%rsi
    mov 320(%rdi),%r8; mov 328(%rdi),%r9; mov 336(%rdi),%r10; mov 344(%rdi),%r11
    mov 352(%rdi),%r12; mov 360(%rdi),%r13; mov 368(%rdi),%r14; mov 376(%rdi),%r15
    mov 312(%rdi),%rdi
    call *g_code(%rip)
    pushfq
    push %rdi
    mov g_state(%rip),%rdi
    popq 312(%rdi)
    popq 384(%rdi)
    mov %rax,256(%rdi); mov %rcx,264(%rdi); mov %rdx,272(%rdi); mov %rbx,280(%rdi)
    mov %rbp,296(%rdi); mov %rsi,304(%rdi)
    mov %r8,320(%rdi); mov %r9,328(%rdi); mov %r10,336(%rdi); mov %r11,344(%rdi)
    mov %r12,352(%rdi); mov %r13,360(%rdi); mov %r14,368(%rdi); mov %r15,376(%rdi)
    movdqu %xmm0,0(%rdi);  movdqu %xmm1,16(%rdi);  movdqu %xmm2,32(%rdi);  movdqu %xmm3,48(%rdi)
    movdqu %xmm4,64(%rdi); movdqu %xmm5,80(%rdi);  movdqu %xmm6,96(%rdi);  movdqu %xmm7,112(%rdi)
    movdqu %xmm8,128(%rdi); movdqu %xmm9,144(%rdi); movdqu %xmm10,160(%rdi); movdqu %xmm11,176(%rdi)
    movdqu %xmm12,192(%rdi); movdqu %xmm13,208(%rdi); movdqu %xmm14,224(%rdi); movdqu %xmm15,240(%rdi)
    stmxcsr 392(%rdi)
    ldmxcsr g_host(%rip)
    pop %r15; pop %r14; pop %r13; pop %r12; pop %rbp; pop %rbx
    ret
    .bss
    .align 8
g_state: .quad 0
g_code: .quad 0
g_host: .long 0
    .section .note.GNU-stack,"",@progbits
