/* fuzz_exec.c - decode and execute random bytes as a static program:
 * byte 0 bit 0 picks i386 (ELF32) over x86-64, the rest is the code.
 * Built twice: fuzz_exec_direct (FZ_KERNEL 0, --direct: syscalls go to
 * the host services) and fuzz_exec_kernel (FZ_KERNEL 1: through the guest
 * kernel, boot included).  Bounded by an instruction cap and a code size
 * cap so one input takes milliseconds. */
#include <stdio.h>

#include "fuzz_util.h"
#include "launch.h"

#ifndef FZ_KERNEL
#define FZ_KERNEL 0
#endif

/* The guest kernel's boot runs before the program (a few thousand
 * instructions); the cap leaves the program as much again. */
#define FZ_MAX_INSNS (FZ_KERNEL ? 200000 : 20000)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size - 1 > FZ_MAX_CODE)
        return 0;
    static char prog[4200];
    if (!prog[0])
        snprintf(prog, sizeof prog, "%s/prog", fz_tmpdir());
    if (fz_write_elf(prog, data[0] & 1, data + 1, size - 1))
        return 0;
    es_machine *m = fz_launch(prog, fz_tmpdir(), false, !FZ_KERNEL, FZ_MAX_INSNS);
    if (!m)
        return 0;
    es_run(m);
    es_launch_free(m);
    return 0;
}
