/* exposure_guest.c - the program `entrysim exposure` runs (exposure_guest.h).
 *
 * The generated guest is a one-page static ELF built here: it sets a
 * distinct marker in every register the entry path lets the user set, the
 * syscall number in (E)AX, and enters the kernel the way the entry path
 * does in real programs:
 *   syscall64   syscall
 *   x32         syscall, nr | __X32_SYSCALL_BIT
 *   int80       int 0x80                                 (i386 process)
 *   sysenter32  push ecx; push edx; push ebp; mov ebp, esp; sysenter
 *               (the vDSO's __kernel_vsyscall on Intel: arg 6 is on the stack)
 *   syscall32   push ecx; push edx; push ebp; mov ebp, ecx; syscall
 *               (the vDSO's __kernel_vsyscall on AMD: SYSCALL clobbers ECX,
 *               so arg 2 rides in EBP and arg 6 on the stack)
 *   vsyscall    call [ptr] with ptr = 0xffffffffff600000 + 0x400 * n
 */
#include <stdbool.h>
#include <string.h>

#include "exposure.h"
#include "exposure_guest.h"
#include "host.h"
#include "kernel.h"
#include "loader.h"

#define GVADDR 0x400000u

static void put(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Wraps code in a static ELF with one R+X PT_LOAD: ELF64 for x86-64,
 * ELF32 (EM_386 or, for x32, EM_X86_64) otherwise. */
static size_t make_elf(uint8_t *buf, int abi, const uint8_t *code, size_t n)
{
    bool c64 = abi == ES_ABI_X64;
    size_t hdrs = c64 ? 64 + 56 : 52 + 32;
    size_t size = hdrs + n;
    memset(buf, 0, hdrs);
    memcpy(buf, c64 ? "\177ELF\2\1\1" : "\177ELF\1\1\1", 7);
    put(buf + 16, 2, 2);                            /* ET_EXEC */
    put(buf + 18, abi == ES_ABI_I386 ? 3 : 62, 2);  /* EM_386 / EM_X86_64 */
    put(buf + 20, 1, 4);
    if (c64) {
        put(buf + 24, GVADDR + hdrs, 8);
        put(buf + 32, 64, 8);
        put(buf + 52, 64, 2);
        put(buf + 54, 56, 2);
        put(buf + 56, 1, 2);
        uint8_t *ph = buf + 64;
        put(ph + 0, 1, 4);
        put(ph + 4, 5, 4);
        put(ph + 16, GVADDR, 8);
        put(ph + 24, GVADDR, 8);
        put(ph + 32, size, 8);
        put(ph + 40, size, 8);
        put(ph + 48, 0x1000, 8);
    } else {
        put(buf + 24, GVADDR + hdrs, 4);
        put(buf + 28, 52, 4);
        put(buf + 40, 52, 2);
        put(buf + 42, 32, 2);
        put(buf + 44, 1, 2);
        uint8_t *ph = buf + 52;
        put(ph + 0, 1, 4);
        put(ph + 8, GVADDR, 4);
        put(ph + 12, GVADDR, 4);
        put(ph + 16, size, 4);
        put(ph + 20, size, 4);
        put(ph + 24, 5, 4);
        put(ph + 28, 0x1000, 4);
    }
    memcpy(buf + hdrs, code, n);
    return size;
}

/* The marker loaded into GPR i: recognisable in a register dump. */
static uint64_t marker(int i, bool wide)
{
    return wide ? 0x5e5e000000000000ull | (uint64_t)(i + 1) * 0x0000001100110011ull
                : 0x5e000000u | (uint32_t)(i + 1) * 0x00001111u;
}

/* Builds the program; *label_off = offset of the instruction at which the
 * user registers are labelled (the kernel entry instruction). */
static size_t gen_code(int entry, int nr, uint8_t *c, size_t *label_off)
{
    size_t k = 0;
    if (!es_entry_is32(entry)) {
        for (int r = 0; r < 16; r++) {
            if (r == ES_RSP || (r == ES_RAX && entry != ES_ENTRY_VSYSCALL))
                continue;
            c[k++] = (uint8_t)(0x48 | (r >= 8 ? 1 : 0)); /* REX.W (+B) */
            c[k++] = (uint8_t)(0xb8 + (r & 7));          /* mov r64, imm64 */
            put(c + k, marker(r, true), 8);
            k += 8;
        }
        if (entry == ES_ENTRY_VSYSCALL) {
            /* emulate_vsyscall checks the output pointers before the call
             * (write_ok_or_segv): they must be writable user memory, so
             * they point below the stack pointer.  Labels go by register,
             * not by value, so this changes nothing in the analysis. */
            static const uint8_t lea[] = {
                0x48, 0x8d, 0xbc, 0x24, 0x00, 0xff, 0xff, 0xff, /* lea rdi, [rsp-0x100] */
                0x48, 0x8d, 0xb4, 0x24, 0x00, 0xfe, 0xff, 0xff, /* lea rsi, [rsp-0x200] */
            };
            memcpy(c + k, lea, sizeof lea);
            k += sizeof lea;
            *label_off = k;
            c[k++] = 0xff, c[k++] = 0x15; /* call [rip+2] */
            put(c + k, 2, 4);
            k += 4;
            c[k++] = 0xeb, c[k++] = 0xfe; /* jmp $ */
            put(c + k, ES_VSYSCALL_ADDR + 0x400ull * (uint64_t)nr, 8);
            k += 8;
            return k;
        }
        uint32_t n = (uint32_t)nr | (entry == ES_ENTRY_X32 ? (uint32_t)ES_X32_SYSCALL_BIT : 0);
        c[k++] = 0xb8; /* mov eax, nr */
        put(c + k, n, 4);
        k += 4;
        *label_off = k;
        c[k++] = 0x0f, c[k++] = 0x05; /* syscall */
        c[k++] = 0xeb, c[k++] = 0xfe;
        return k;
    }
    for (int r = 1; r < 8; r++) {
        if (r == ES_RSP)
            continue;
        c[k++] = (uint8_t)(0xb8 + r); /* mov r32, imm32 */
        put(c + k, marker(r, false), 4);
        k += 4;
    }
    c[k++] = 0xb8;
    put(c + k, (uint32_t)nr, 4);
    k += 4;
    if (entry == ES_ENTRY_INT80) {
        *label_off = k;
        c[k++] = 0xcd, c[k++] = 0x80;
    } else if (entry == ES_ENTRY_SYSENTER32) {
        c[k++] = 0x51, c[k++] = 0x52, c[k++] = 0x55; /* push ecx; push edx; push ebp */
        c[k++] = 0x89, c[k++] = 0xe5;                 /* mov ebp, esp */
        *label_off = k;
        c[k++] = 0x0f, c[k++] = 0x34; /* sysenter */
    } else {
        /* as the vDSO's __kernel_vsyscall enters on AMD: the same three
         * pushes as for SYSENTER, then arg 2 moves to EBP because SYSCALL
         * overwrites ECX with the return address */
        c[k++] = 0x51, c[k++] = 0x52, c[k++] = 0x55; /* push ecx; push edx; push ebp */
        c[k++] = 0x89, c[k++] = 0xcd;                 /* mov ebp, ecx */
        *label_off = k;
        c[k++] = 0x0f, c[k++] = 0x05; /* syscall */
    }
    c[k++] = 0xeb, c[k++] = 0xfe;
    return k;
}


size_t es_exposure_guest(int entry, int nr, uint8_t elf[ES_GUEST_MAX], uint64_t *label_rip)
{
    uint8_t code[256];
    size_t label_off = 0;
    int abi = es_entry_abi(entry);
    size_t n = gen_code(entry, nr, code, &label_off);
    size_t hdrs = abi == ES_ABI_X64 ? 64 + 56 : 52 + 32;
    *label_rip = GVADDR + hdrs + label_off;
    return make_elf(elf, abi, code, n);
}
