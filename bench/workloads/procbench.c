/* procbench.c - process workloads for bench/procs.sh:
 *   procbench getpid N      N getpid calls (the per-call floor)
 *   procbench pingpong N    N round trips of one byte between a parent and
 *                           its child over two pipes (two blocking reads,
 *                           two context switches a round trip)
 *   procbench forkexec N    N times fork, execve of itself ("child"), wait
 * Prints "<mode> <N> ok" when every operation did what it should, so the
 * script can tell a fast wrong run from a right one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int pingpong(long n)
{
    int up[2], down[2];
    if (pipe(up) || pipe(down))
        return 1;
    pid_t c = fork();
    if (c < 0)
        return 1;
    char b = 0;
    if (c == 0) {
        for (long i = 0; i < n; i++) {
            if (read(down[0], &b, 1) != 1)
                _exit(1);
            b++;
            if (write(up[1], &b, 1) != 1)
                _exit(1);
        }
        _exit(0);
    }
    for (long i = 0; i < n; i++) {
        char w = (char)i, r = 0;
        if (write(down[1], &w, 1) != 1 || read(up[0], &r, 1) != 1 || r != (char)(w + 1))
            return 1;
    }
    int st;
    return waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st);
}

static int forkexec(long n, const char *self)
{
    for (long i = 0; i < n; i++) {
        pid_t c = fork();
        if (c < 0)
            return 1;
        if (c == 0) {
            char *argv[] = {(char *)self, "child", NULL};
            execv(self, argv);
            _exit(127);
        }
        int st;
        if (waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st) != 7)
            return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "child"))
        return 7;
    if (argc != 3)
        return 2;
    long n = atol(argv[2]);
    int bad = 0;
    if (!strcmp(argv[1], "getpid")) {
        for (long i = 0; i < n; i++)
            bad |= syscall(SYS_getpid) <= 0;
    } else if (!strcmp(argv[1], "pingpong")) {
        bad = pingpong(n);
    } else if (!strcmp(argv[1], "forkexec")) {
        bad = forkexec(n, argv[0]);
    } else {
        return 2;
    }
    if (bad)
        return 1;
    printf("%s %ld ok\n", argv[1], n);
    return 0;
}
