/* noopenat2.c - runs a command with openat2(2) failing with ENOSYS, as on
 * Linux before 5.6 (a seccomp filter; no privilege needed), so that
 * entrysim confines guest paths with its own component-by-component walk
 * (walk_dir in sim/host/path.c) instead of RESOLVE_IN_ROOT.
 *
 *   noopenat2 PROGRAM [ARGS...]     exit status: PROGRAM's, or 127
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>

#define NR_OPENAT2 437

int main(int argc, char **argv)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR_OPENAT2, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof f / sizeof f[0], f};
    if (argc < 2) {
        fprintf(stderr, "usage: noopenat2 PROGRAM [ARGS...]\n");
        return 127;
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
        perror("noopenat2: seccomp");
        return 127;
    }
    execv(argv[1], argv + 1);
    perror(argv[1]);
    return 127;
}
