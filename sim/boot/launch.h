/* launch.h - from a command line to a machine ready to run: resolve the
 * program (PATH lookup as a shell), create the machine and its host
 * services, load the ELF, load and configure the guest kernel (patch set,
 * mitigations, ABI), build the process and boot.  Shared by `entrysim run`,
 * `entrysim debug` and anything else that starts a guest program. */
#ifndef ENTRYSIM_LAUNCH_H
#define ENTRYSIM_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "machine.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct es_launch_cfg {
    const char *program;  /* as given: a path, or a name looked up in PATH */
    int argc;             /* guest argv (argv[0] is normally `program`) */
    char *const *argv;
    char *const *envp;    /* guest environment (NULL = empty) */
    const char *root;     /* the directory the guest sees as / (NULL = ".") */
    bool rw, deterministic;
    uint64_t mem_cap_mb;  /* 0 = 1024 */
    int vendor;           /* 0 Intel, 1 AMD */
    bool direct;          /* no guest kernel */
    unsigned patches;     /* ES_PATCH_* bitmask of the guest kernel */
    const char *kernel_dir; /* a tree built by `entrysim kernel build` (NULL = the
                               embedded images): DIR/build/kernel-pNN.elf */
    unsigned mitigations; /* ES_MIT_* */
    uint64_t max_insns;   /* 0 = unlimited */
    double timeout;       /* seconds, 0 = unlimited */
    int max_tasks;        /* tasks alive at once (fork beyond it ends the run); 0 = 64 */
    int stdin_fd, stdout_fd, stderr_fd; /* host fds behind guest 0, 1, 2 */
} es_launch_cfg;

/* PATH lookup as a shell does it: `prog` itself when it has a slash or
 * exists in the current directory, else the first regular file
 * DIR/prog of $PATH; `prog` when none (into buf, returned). */
const char *es_launch_resolve(const char *prog, char *buf, size_t bufsz);

/* Exit-status-like results of es_launch (0 = ready). */
enum {
    ES_LAUNCH_OK = 0,
    ES_LAUNCH_ERROR = 1,     /* simulator or guest-kernel set-up failed */
    ES_LAUNCH_NOEXEC = 126,  /* not a loadable static ELF (or unreadable) */
    ES_LAUNCH_NOTFOUND = 127 /* no such program */
};

/* Creates *out ready for es_run (kernel booted unless direct).  Returns
 * ES_LAUNCH_OK, or one of the codes above with a one-line reason in err
 * ("prog: No such file or directory") and *out NULL.  The machine is freed
 * with es_launch_free. */
int es_launch(const es_launch_cfg *c, es_machine **out, char *err, size_t errlen);
void es_launch_free(es_machine *m);

#ifdef __cplusplus
}
#endif
#endif
