/* student.c of the Spectre v1 lab kernel (guest/spectre/spectre_v1.c).
 *
 * spectre_gadget(idx, probe) is the classic bounds-check-bypass gadget:
 * a bounded read of lab_array[idx] and a load from the caller's probe
 * array that depends on the byte read.  Architecturally it never reads
 * past lab_array; under --speculate the cycle model runs the mispredicted
 * path, and lab_array[idx] for an out-of-bounds idx is lab_secret's byte.
 * The bound is evicted on every call (CLFLUSH, as an attacker would evict
 * it by filling its cache set), so the comparison waits for memory and the
 * wrong path has hundreds of cycles.
 *
 * With `fix` (the third argument) non-zero the gadget is closed the way
 * Linux closes its own: array_index_nospec() clamps idx to 0 on the wrong
 * path (fix = 1), or an LFENCE after the check stops it (fix = 2).
 *
 * spectre_offset() hands out lab_secret - lab_array, spectre_secret_addr()
 * lab_secret's address (for meltdown.c): finding kernel addresses is
 * another lab. */
#include "syscalls.h"

static unsigned long lab_size = 16;
static unsigned char lab_array[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
static const char lab_secret[] = "The kernel's secret";

SYSCALL_DEFINE3(spectre_gadget, unsigned long, idx, const unsigned char __user *, probe,
                unsigned long, fix)
{
    const volatile unsigned char *p = (const volatile unsigned char *)probe;
    __asm__ volatile("clflush %0; mfence" : : "m"(lab_size) : "memory");
    if (idx < lab_size) {
        if (fix == 1)
            idx = array_index_nospec_ul(idx, lab_size);
        else if (fix == 2)
            __asm__ volatile("lfence" ::: "memory");
        (void)p[lab_array[idx] * 512];
    }
    return 0;
}

SYSCALL_DEFINE0(spectre_offset)
{
    return (long)(lab_secret - (const char *)lab_array);
}

SYSCALL_DEFINE0(spectre_secret_addr)
{
    return (long)lab_secret;
}
