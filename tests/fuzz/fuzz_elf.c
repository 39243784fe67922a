/* fuzz_elf.c - the ELF loader on arbitrary images: es_load_elf_mem, and
 * for an image it accepts, the initial stack (es_start_process). */
#include "fuzz_util.h"
#include "host.h"
#include "loader.h"

#define FZ_MAX_ELF (64 * 1024)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FZ_MAX_ELF)
        return 0;
    es_machine *m = es_machine_new(64ull << 20);
    if (!m)
        return 0;
    es_host_config hc = {.root = fz_tmpdir(), .deterministic = true,
                         .stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1};
    es_image img;
    if (es_host_init(m, &hc) == 0 && es_load_elf_mem(m, data, size, &img) == 0) {
        static char *const argv[] = {"prog", "arg", NULL};
        static char *const envp[] = {"A=1", NULL};
        es_start_process(m, &img, 2, argv, envp);
    }
    es_host_free(m);
    es_machine_free(m);
    return 0;
}
