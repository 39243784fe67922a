/* spectre_table.c - do_syscall_64's table bound under --speculate (issue
 * 15): nine getpid calls train the bound check "nr < NR_syscalls" taken,
 * then a call with a number past the table (600..607) mispredicts it.  On
 * the wrong path the table load reads sys_call_table[nr] -- the line
 * array_index_nospec exists to keep it from -- unless the clamp makes the
 * index 0.  Nothing is leaked to user space here: the value loaded is only
 * an indirect call's target (the model has no indirect-branch or nested
 * speculation), so the evidence is the cycle model's count of lines the
 * dispatch phase's wrong path filled (`--timing-json`: per_syscall rows
 * #600..#607, speculation.fills.dispatch), tests/e2e.
 *   usage: spectre_table [ROUNDS (default 1000)] */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 1000;
    long enosys = 0;
    for (int i = 0; i < rounds; i++) {
        for (int k = 0; k < 9; k++)
            syscall(SYS_getpid);
        if (syscall(600 + (i & 7)) == -1 && errno == ENOSYS)
            enosys++;
    }
    printf("%d out-of-range calls, %ld ENOSYS\n", rounds, enosys);
    return enosys == rounds ? 0 : 1;
}
