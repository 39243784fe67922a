/* forker.c - Lab 10, Task 1: fork N children, one after the other, and
 * report what each fork gave back as one JSON line.
 *
 *   gcc -static -O2 -g -o forker forker.c
 *   entrysim run ./forker [N]        N children (1 to 50, default 1)
 *
 * prints, on one line (the grader reads it):
 *   {"children": N, "pids": [...], "reported": [...], "statuses": [...], "counter": C}
 *
 *   pids      what fork() returned in the parent, child by child
 *   reported  the pid each child found with getpid() and sent back through
 *             the pipe it inherited
 *   statuses  each child's exit status (WEXITSTATUS), in the same order
 *   counter   the parent's global `counter` at the end
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_CHILDREN 50

static int counter; /* a global: does a child's change reach the parent? */

static void put_list(const char *key, const long *v, int n)
{
    printf("\"%s\": [", key);
    for (int i = 0; i < n; i++)
        printf("%s%ld", i ? ", " : "", v[i]);
    printf("], ");
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1;
    if (n < 1 || n > MAX_CHILDREN) {
        fprintf(stderr, "usage: forker [N]   (1 <= N <= %d)\n", MAX_CHILDREN);
        return 2;
    }
    long pids[MAX_CHILDREN] = {0}, reported[MAX_CHILDREN] = {0}, statuses[MAX_CHILDREN] = {0};
    int fds[2];
    if (pipe(fds)) {
        perror("pipe");
        return 1;
    }

    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid < 0) {
            perror("fork");
            return 1;
        }
        if (pid == 0) {
            /* the child: its own copy of counter, the parent's pipe */
            counter += i + 1;
            pid_t me = getpid();
            if (write(fds[1], &me, sizeof me) != sizeof me)
                _exit(255);
            _exit(counter);
        }
        /* the parent */
        pids[i] = pid;
        int status = 0;
        if (waitpid(pid, &status, 0) != pid) {
            perror("waitpid");
            return 1;
        }
        statuses[i] = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        pid_t got = 0;
        if (read(fds[0], &got, sizeof got) != sizeof got) {
            perror("read");
            return 1;
        }
        reported[i] = got;
    }

    printf("{\"children\": %d, ", n);
    put_list("pids", pids, n);
    put_list("reported", reported, n);
    put_list("statuses", statuses, n);
    printf("\"counter\": %d}\n", counter);
    return 0;
}
