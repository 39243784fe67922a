/* demo.c - a tiny static x86-64 program, hand-assembled, wrapped in an ELF
 * header at run time, so `entrysim demo` works with no files around. */
#include "demo.h"

#include <string.h>

#define VADDR 0x400000u
#define HDRS (64 + 56) /* ELF header + one program header */

/* Code at 0x400078 (after the headers); the message follows it directly. */
static const uint8_t code[] = {
    0xb8, 0x01, 0x00, 0x00, 0x00,             /* mov eax, 1        ; write */
    0xbf, 0x01, 0x00, 0x00, 0x00,             /* mov edi, 1        ; stdout */
    0x48, 0x8d, 0x35, 0x5b, 0x00, 0x00, 0x00, /* lea rsi, [rip+0x5b] ; msg */
    0xba, 0x70, 0x00, 0x00, 0x00,             /* mov edx, 0x70     ; length */
    0x0f, 0x05,                               /* syscall */
    0x31, 0xdb,                               /* xor ebx, ebx      ; sum */
    0xb9, 0x40, 0x42, 0x0f, 0x00,             /* mov ecx, 1000000 */
    0x48, 0x89, 0xc8,                         /* 1: mov rax, rcx */
    0x48, 0x0f, 0xaf, 0xc1,                   /* imul rax, rcx */
    0x48, 0x01, 0xc3,                         /* add rbx, rax */
    0x48, 0xff, 0xc9,                         /* dec rcx */
    0x75, 0xf1,                               /* jne 1b */
    0x48, 0x8d, 0x74, 0x24, 0xff,             /* lea rsi, [rsp-1]  ; digits go below rsp */
    0xc6, 0x06, 0x0a,                         /* mov byte [rsi], '\n' */
    0x48, 0x89, 0xd8,                         /* mov rax, rbx */
    0x41, 0xb8, 0x0a, 0x00, 0x00, 0x00,       /* mov r8d, 10 */
    0x31, 0xd2,                               /* 2: xor edx, edx */
    0x49, 0xf7, 0xf0,                         /* div r8 */
    0x80, 0xc2, 0x30,                         /* add dl, '0' */
    0x48, 0xff, 0xce,                         /* dec rsi */
    0x88, 0x16,                               /* mov [rsi], dl */
    0x48, 0x85, 0xc0,                         /* test rax, rax */
    0x75, 0xee,                               /* jne 2b */
    0x48, 0x89, 0xe2,                         /* mov rdx, rsp */
    0x48, 0x29, 0xf2,                         /* sub rdx, rsi      ; length */
    0xb8, 0x01, 0x00, 0x00, 0x00,             /* mov eax, 1        ; write */
    0xbf, 0x01, 0x00, 0x00, 0x00,             /* mov edi, 1 */
    0x0f, 0x05,                               /* syscall */
    0xb8, 0xe7, 0x00, 0x00, 0x00,             /* mov eax, 231      ; exit_group */
    0x31, 0xff,                               /* xor edi, edi */
    0x0f, 0x05,                               /* syscall */
};

static const char msg[] = "Hello from a 64-bit guest program running on entrysim.\n"
                          "It adds up i*i for i = 1..1000000 in a loop; the sum is:\n";

/* the lea's displacement and the mov edx's length above assume these */
_Static_assert(sizeof code == 0x6c, "code size changed: fix the lea displacement");
_Static_assert(sizeof msg - 1 == 0x70, "message length changed: fix mov edx");

const char es_demo_expected[] =
    "Hello from a 64-bit guest program running on entrysim.\n"
    "It adds up i*i for i = 1..1000000 in a loop; the sum is:\n"
    "333333833333500000\n";

static void put(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

size_t es_demo_elf(uint8_t *buf, size_t cap)
{
    size_t size = HDRS + sizeof code + sizeof msg - 1;
    if (cap < size)
        return 0;
    memset(buf, 0, HDRS);
    /* ELF header: ELFCLASS64, little-endian, ET_EXEC, EM_X86_64 */
    memcpy(buf, "\177ELF\2\1\1", 7);
    put(buf + 16, 2, 2);              /* e_type ET_EXEC */
    put(buf + 18, 62, 2);             /* e_machine EM_X86_64 */
    put(buf + 20, 1, 4);              /* e_version */
    put(buf + 24, VADDR + HDRS, 8);   /* e_entry */
    put(buf + 32, 64, 8);             /* e_phoff */
    put(buf + 52, 64, 2);             /* e_ehsize */
    put(buf + 54, 56, 2);             /* e_phentsize */
    put(buf + 56, 1, 2);              /* e_phnum */
    /* one PT_LOAD, R+X, the whole file at VADDR */
    uint8_t *ph = buf + 64;
    put(ph + 0, 1, 4);                /* PT_LOAD */
    put(ph + 4, 5, 4);                /* PF_R | PF_X */
    put(ph + 16, VADDR, 8);           /* p_vaddr */
    put(ph + 24, VADDR, 8);           /* p_paddr */
    put(ph + 32, size, 8);            /* p_filesz */
    put(ph + 40, size, 8);            /* p_memsz */
    put(ph + 48, 0x1000, 8);          /* p_align */
    memcpy(buf + HDRS, code, sizeof code);
    memcpy(buf + HDRS + sizeof code, msg, sizeof msg - 1);
    return size;
}
