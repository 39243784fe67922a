/* procs.c - processes: fork, wait, pipes between tasks, exec, vfork,
 * signals to children, SIGCHLD, orphans.  Prints what it sees (never a
 * pid), so the output under entrysim can be compared with a native run.
 *
 *   procs            every check below
 *   procs child N    (exec'd by the checks) prints its argv and exits N
 *   procs bomb       forks without end (entrysim must stop it: --max-tasks)
 *   procs deadlock   parent and child both read an empty pipe
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char *self;

static void check_fork_wait(void)
{
    pid_t me = getpid();
    pid_t c = fork();
    if (c == 0) {
        printf("child: parent is the forker: %s\n", getppid() == me ? "yes" : "no");
        fflush(stdout);
        _exit(7);
    }
    int st = 0;
    pid_t w = waitpid(c, &st, 0);
    printf("fork: wait got the child %s, exited %d status %d\n", w == c ? "yes" : "no",
           WIFEXITED(st), WEXITSTATUS(st));
    printf("fork: no more children: %s\n", wait(&st) < 0 && errno == ECHILD ? "ECHILD" : "?");
}

static void check_memory_is_copied(void)
{
    static int shared = 1;
    int local = 10;
    pid_t c = fork();
    if (c == 0) {
        shared = 2;
        local = 20;
        printf("copy: child sees %d %d\n", shared, local);
        fflush(stdout);
        _exit(0);
    }
    waitpid(c, NULL, 0);
    printf("copy: parent still sees %d %d\n", shared, local);
}

static void check_pipe(void)
{
    int p[2], q[2];
    if (pipe(p) || pipe(q))
        return;
    pid_t c = fork();
    if (c == 0) { /* echo back each line, upper-cased, until EOF */
        close(p[1]);
        close(q[0]);
        char buf[256];
        ssize_t n;
        while ((n = read(p[0], buf, sizeof buf)) > 0) {
            for (ssize_t i = 0; i < n; i++)
                if (buf[i] >= 'a' && buf[i] <= 'z')
                    buf[i] -= 32;
            write(q[1], buf, (size_t)n);
        }
        _exit(n == 0 ? 0 : 1);
    }
    close(p[0]);
    close(q[1]);
    const char *words[] = {"ping", "pong", "three"};
    for (int i = 0; i < 3; i++) {
        char buf[64];
        write(p[1], words[i], strlen(words[i]));
        ssize_t n = read(q[0], buf, sizeof buf - 1);
        buf[n > 0 ? n : 0] = 0;
        printf("pipe: %s -> %s\n", words[i], buf);
    }
    close(p[1]); /* the child's read sees EOF */
    int st;
    waitpid(c, &st, 0);
    printf("pipe: child saw EOF and exited %d\n", WEXITSTATUS(st));
    close(q[0]);
}

/* A writer that outruns the reader: a write larger than the pipe waits
 * for the reader and still arrives whole. */
static void check_big_write(void)
{
    int p[2];
    if (pipe(p))
        return;
    enum { N = 300000 };
    pid_t c = fork();
    if (c == 0) {
        close(p[0]);
        static char big[N];
        for (int i = 0; i < N; i++)
            big[i] = (char)('a' + i % 26);
        ssize_t w = write(p[1], big, N);
        _exit(w == N ? 0 : 1);
    }
    close(p[1]);
    static char got[N + 16];
    size_t total = 0;
    ssize_t n;
    while ((n = read(p[0], got + total, sizeof got - total)) > 0)
        total += (size_t)n;
    int ok = total == N;
    for (size_t i = 0; ok && i < total; i++)
        ok = got[i] == (char)('a' + i % 26);
    int st;
    waitpid(c, &st, 0);
    printf("big write: %zu bytes in order %s, writer's write was whole: %s\n", total,
           ok ? "yes" : "no", WEXITSTATUS(st) == 0 ? "yes" : "no");
    close(p[0]);
}

static void check_exec(void)
{
    pid_t c = fork();
    if (c == 0) {
        char *argv[] = {self, "child", "5", "extra arg", NULL};
        char *envp[] = {"PROCS_ENV=from-exec", NULL};
        execve(self, argv, envp);
        _exit(99);
    }
    int st;
    waitpid(c, &st, 0);
    printf("exec: the new image exited %d\n", WEXITSTATUS(st));
    c = fork();
    if (c == 0) {
        char *argv[] = {"nothing", NULL};
        execve("/nonexistent/program", argv, argv + 1);
        _exit(errno == ENOENT ? 3 : 4);
    }
    waitpid(c, &st, 0);
    printf("exec: a missing program gives ENOENT: %s\n", WEXITSTATUS(st) == 3 ? "yes" : "no");
}

static void check_vfork(void)
{
    pid_t c = vfork();
    if (c == 0) {
        char *argv[] = {self, "child", "6", NULL};
        execve(self, argv, argv + 3);
        _exit(98);
    }
    int st;
    waitpid(c, &st, 0);
    printf("vfork: the child exec'd and exited %d\n", WEXITSTATUS(st));
}

static volatile sig_atomic_t chld;
static void on_chld(int sig)
{
    (void)sig;
    chld++;
}

static void check_signals(void)
{
    signal(SIGCHLD, on_chld);
    pid_t c = fork();
    if (c == 0) {
        for (;;)
            pause();
    }
    kill(c, SIGTERM);
    int st;
    waitpid(c, &st, 0);
    printf("kill: child ended by signal %d (%s)\n", WIFSIGNALED(st) ? WTERMSIG(st) : 0,
           WTERMSIG(st) == SIGTERM ? "SIGTERM" : "?");
    c = fork();
    if (c == 0) {
        volatile int *p = (int *)16;
        *p = 1; /* SIGSEGV */
        _exit(0);
    }
    waitpid(c, &st, 0);
    printf("fault: child ended by signal %d\n", WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    printf("sigchld: the handler ran %s\n", chld >= 2 ? "for both" : "not for both");
    signal(SIGCHLD, SIG_DFL);
}

static void check_nohang_and_many(void)
{
    int st;
    pid_t c = fork();
    if (c == 0) {
        usleep(20000);
        _exit(1);
    }
    printf("wnohang: %s\n", waitpid(c, &st, WNOHANG) == 0 ? "child still running" : "?");
    waitpid(c, &st, 0);
    enum { K = 8 };
    for (int i = 0; i < K; i++)
        if (fork() == 0)
            _exit(10 + i);
    int sum = 0;
    for (int i = 0; i < K; i++)
        if (wait(&st) > 0)
            sum += WEXITSTATUS(st);
    printf("many: %d children, exit statuses sum to %d\n", K, sum);
}

static int child_main(int argc, char **argv)
{
    printf("exec'd child: argc %d:", argc);
    for (int i = 1; i < argc; i++)
        printf(" [%s]", argv[i]);
    const char *e = getenv("PROCS_ENV");
    printf(" env %s\n", e ? e : "(none)");
    return atoi(argv[2]);
}

int main(int argc, char **argv)
{
    self = argv[0];
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc >= 3 && strcmp(argv[1], "child") == 0)
        return child_main(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "bomb") == 0) {
        for (;;)
            fork();
    }
    if (argc >= 2 && strcmp(argv[1], "deadlock") == 0) {
        int p[2], q[2];
        char b;
        if (pipe(p) || pipe(q))
            return 1;
        if (fork() == 0)
            return (int)read(p[0], &b, 1);
        return (int)read(q[0], &b, 1);
    }
    check_fork_wait();
    check_memory_is_copied();
    check_pipe();
    check_big_write();
    check_exec();
    check_vfork();
    check_signals();
    check_nohang_and_many();
    printf("done\n");
    return 0;
}
