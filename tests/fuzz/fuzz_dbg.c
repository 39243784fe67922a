/* fuzz_dbg.c - debugger command scripts (debugger/dbg_cmd.c): every line
 * of the input is run with es_dbg_exec on a fresh session of a small
 * program that loops on getpid through the guest kernel (so kentry,
 * kexit, ptregs and taint have something to show).  Errors do not end
 * the script (so later lines still run); quit does.  Bounded by the
 * session's run budget and undo log, and by caps on lines and size. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dbg.h"
#include "fuzz_util.h"
#include "mitigations.h"

#define FZ_MAX_INPUT 4096
#define FZ_MAX_LINES 64

static es_dbg *session(void)
{
    /* 1: mov $39,%eax (getpid); syscall; jmp 1b */
    static const uint8_t loop[] = {0xb8, 0x27, 0x00, 0x00, 0x00, 0x0f, 0x05, 0xeb, 0xf7};
    static char prog[4200];
    if (!prog[0]) {
        snprintf(prog, sizeof prog, "%s/getpid_loop", fz_tmpdir());
        if (fz_write_elf(prog, false, loop, sizeof loop))
            abort();
    }
    static char *argv[] = {prog, NULL};
    es_dbg_cfg c = {
        .launch = {.program = prog, .argc = 1, .argv = argv, .root = fz_tmpdir(),
                   .deterministic = true, .mem_cap_mb = 64, .stdin_fd = -1,
                   .mitigations = ES_MIT_DEFAULT},
        .undo_insns = 20000, .undo_bytes = 16u << 20, .output_cap = 4096,
        .run_budget = 20000,
    };
    char err[320];
    es_dbg *d = es_dbg_new(&c, err, sizeof err);
    if (!d) {
        fprintf(stderr, "fuzz_dbg: %s\n", err);
        abort(); /* the program is fixed: a failed start is a bug */
    }
    return d;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FZ_MAX_INPUT)
        return 0;
    static FILE *out;
    if (!out && !(out = fopen("/dev/null", "w")))
        abort();
    char *script = fz_cstr(data, size, FZ_MAX_INPUT);
    es_dbg *d = session();
    char *save = NULL;
    int lines = 0;
    for (char *l = strtok_r(script, "\n", &save); l && lines < FZ_MAX_LINES;
         l = strtok_r(NULL, "\n", &save), lines++)
        if (es_dbg_exec(d, l, out) == ES_DBG_CMD_QUIT)
            break;
    es_dbg_free(d);
    free(script);
    return 0;
}
