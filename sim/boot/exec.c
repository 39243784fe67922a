/* exec.c - execve's loading half (m->hooks.exec): what Linux's
 * load_elf_binary does for a static program once the file is read, on the
 * current process.
 *
 * Everything that can refuse the program is checked first (the ELF, its
 * ABI, its placement), so a refused execve returns to the old program
 * unchanged; then the old address space goes (es_vm_exec_reset, Linux's
 * point of no return in begin_new_exec) and the new image, its vDSO and
 * its stack are made.  A failure after that kills the process, as Linux's
 * exec does with SIGSEGV (ES_EXEC_DEAD). */
#include "exec.h"

#include <errno.h>

#include "fault.h"
#include "host.h"
#include "kernel.h"
#include "loader.h"
#include "vm.h"

#define PAGE 4096ull

/* The checks before the point of no return: 0 or -ENOEXEC / -ENOMEM. */
static int exec_check(es_machine *m, const uint8_t *data, size_t size, int cur_abi)
{
    int abi = -1;
    uint64_t lo = 0, hi = 0;
    int rc = es_elf_check(m, data, size, &abi, &lo, &hi);
    if (rc)
        return rc;
    if (abi != cur_abi) {
        es_fail_msg(m, "exec of a program of another ABI (%d, the process has %d)", abi, cur_abi);
        return -ENOEXEC;
    }
    /* the 32-bit vDSO keeps its address (the kernel knows it): a program
     * whose segments cover it cannot be run here */
    uint64_t vdso = abi == ES_ABI_I386 ? es_kernel_vdso32(m) : 0;
    if (vdso && vdso + PAGE > lo && vdso < hi) {
        es_fail_msg(m, "the program's segments cover the 32-bit vDSO at 0x%llx",
                    (unsigned long long)vdso);
        return -ENOEXEC;
    }
    return 0;
}

static int exec_hook(es_machine *m, const uint8_t *data, size_t size, int cur_abi, int argc,
                     char *const argv[], char *const envp[], const char *execfn,
                     es_exec_start *start)
{
    int rc = exec_check(m, data, size, cur_abi);
    if (rc)
        return rc;
    /* the point of no return */
    if (es_vm_exec_reset(m)) {
        es_fail_msg(m, "out of host memory resetting the address space");
        return ES_EXEC_DEAD;
    }
    es_image img;
    uint64_t sp = 0;
    static char *const none[] = {NULL};
    if (es_load_elf_mem(m, data, size, &img) || es_kernel_remap_vdso32(m) ||
        es_build_stack(m, &img, argc, argv, envp ? envp : none, execfn, &sp))
        return ES_EXEC_DEAD; /* the reason is in m->message */
    if (!m->has_kernel) /* --direct: nobody else sets the registers */
        es_start_thread(m, &img, sp);
    es_host_set_brk(m, img.brk_start); /* no-op without host services */
    *start = (es_exec_start){
        .rip = img.entry,
        .rsp = sp,
        .brk_start = img.brk_start,
        .abi = img.abi,
        .cs = img.abi == ES_ABI_I386 ? 0x23 : 0x33,
    };
    return 0;
}

void es_exec_install(es_machine *m)
{
    m->hooks.exec = exec_hook;
}
