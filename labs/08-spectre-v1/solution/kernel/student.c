/* student.c - lab 08 (Spectre v1): the system call lab_lookup.
 *
 *   long lab_lookup(unsigned long idx, const unsigned char *table)
 *
 * returns table[lab.array[idx] * 512]: the byte of the caller's table
 * (256 entries, 512 bytes apart) that entry idx of the kernel's lab.array
 * selects; -EINVAL when idx >= lab_size; -EFAULT when that byte of table
 * cannot be read.  Its row in syscall_64.tbl (number 333):
 *
 *     333  common  lab_lookup  __x64_sys_lab_lookup
 *
 * lab_spectre.h holds the data (lab_size, lab.array, lab.secret) and the
 * helpers lab_evict_bound() and barrier_nospec(); array_index_nospec()
 * comes with syscalls.h.  Task 2 of README.md: close the Spectre v1 gadget
 * below without changing what lab_lookup returns.
 *
 * Fixed: array_index_nospec() after the bounds check.
 */
#include "syscalls.h"
#include "lab_spectre.h"

SYSCALL_DEFINE2(lab_lookup, unsigned long, idx, const unsigned char __user *, table)
{
    unsigned char v;

    lab_evict_bound(); /* the attacker's eviction (see lab_spectre.h): keep this line */
    if (idx >= lab_size)
        return -EINVAL;
    /* Spectre v1: the CPU may run on past the check above with an idx it
     * failed (the bound is still on its way from memory).  Clamp idx so
     * that even then it is 0 when idx >= lab_size: CMP/SBB/AND, no branch
     * to mispredict. */
    idx = array_index_nospec(idx, lab_size);
    if (get_user(v, table + lab.array[idx] * 512))
        return -EFAULT;
    return v;
}
