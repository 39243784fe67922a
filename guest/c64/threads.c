/* threads.c - POSIX threads as a static glibc or musl program uses them:
 * clone(CLONE_VM|CLONE_THREAD|CLONE_SETTLS|CLONE_CHILD_CLEARTID...),
 * futexes under mutexes, condition variables, barriers, semaphores and
 * pthread_join, thread-local storage through %fs, a signal sent to one
 * thread, a timed wait, and exit_group from a thread.  Every line printed
 * is the same whatever order the threads ran in, so the run can be
 * compared with the native one.
 *
 * Modes: (none) the checks below; "exit-from-thread": a thread calls
 * exit(3) while main waits on a condition; "main-exits": main calls
 * pthread_exit and the last thread ends the process (status 0). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NT 4
/* linux/futex.h (musl-gcc has no kernel headers) */
#define FUTEX_PRIVATE_FLAG 128
#define FUTEX_WAIT_PRIVATE (0 | FUTEX_PRIVATE_FLAG)
#define FUTEX_WAKE_PRIVATE (1 | FUTEX_PRIVATE_FLAG)
#define FUTEX_CMP_REQUEUE_PRIVATE (4 | FUTEX_PRIVATE_FLAG)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static long counter;
static __thread long mine = -1;

static pid_t tid(void)
{
    return (pid_t)syscall(SYS_gettid);
}

static void *adder(void *arg)
{
    long id = (long)arg;
    mine = id;
    for (int i = 0; i < 20000; i++) {
        pthread_mutex_lock(&lock);
        counter++;
        pthread_mutex_unlock(&lock);
        if (i % 5000 == 0)
            sched_yield();
    }
    /* the thread-local copy is this thread's, whoever ran in between */
    return (void *)(mine * 100 + (tid() != getpid()));
}

static void check_mutex(void)
{
    pthread_t t[NT];
    for (long i = 0; i < NT; i++)
        pthread_create(&t[i], NULL, adder, (void *)(i + 1));
    long sum = 0;
    for (int i = 0; i < NT; i++) {
        void *r;
        pthread_join(t[i], &r);
        sum += (long)r;
    }
    printf("mutex: %d threads x 20000 increments = %ld\n", NT, counter);
    printf("tls and join: return values sum to %ld (expected %d), main's copy %ld\n", sum,
           100 * (1 + 2 + 3 + 4) + NT, mine);
}

/* a bounded queue: one producer, two consumers, condition variables */
#define QN 8
static int queue[QN], qhead, qlen, qdone;
static pthread_cond_t qfull = PTHREAD_COND_INITIALIZER, qempty = PTHREAD_COND_INITIALIZER;

static void *producer(void *arg)
{
    (void)arg;
    for (int v = 1; v <= 500; v++) {
        pthread_mutex_lock(&lock);
        while (qlen == QN)
            pthread_cond_wait(&qfull, &lock);
        queue[(qhead + qlen++) % QN] = v;
        pthread_cond_signal(&qempty);
        pthread_mutex_unlock(&lock);
    }
    pthread_mutex_lock(&lock);
    qdone = 1;
    pthread_cond_broadcast(&qempty);
    pthread_mutex_unlock(&lock);
    return NULL;
}

static void *consumer(void *arg)
{
    long got = 0;
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&lock);
        while (!qlen && !qdone)
            pthread_cond_wait(&qempty, &lock);
        if (!qlen) {
            pthread_mutex_unlock(&lock);
            return (void *)got;
        }
        got += queue[qhead];
        qhead = (qhead + 1) % QN;
        qlen--;
        pthread_cond_signal(&qfull);
        pthread_mutex_unlock(&lock);
    }
}

static void check_condvar(void)
{
    pthread_t p, c1, c2;
    pthread_create(&c1, NULL, consumer, NULL);
    pthread_create(&c2, NULL, consumer, NULL);
    pthread_create(&p, NULL, producer, NULL);
    void *a, *b;
    pthread_join(p, NULL);
    pthread_join(c1, &a);
    pthread_join(c2, &b);
    printf("condvar: consumers got %ld in all (expected %d)\n", (long)a + (long)b, 500 * 501 / 2);
}

static pthread_barrier_t bar;
static int arrived[NT];

static void *at_barrier(void *arg)
{
    long id = (long)arg;
    __atomic_store_n(&arrived[id], 1, __ATOMIC_SEQ_CST);
    pthread_barrier_wait(&bar);
    int all = 1;
    for (int i = 0; i < NT; i++)
        all &= __atomic_load_n(&arrived[i], __ATOMIC_SEQ_CST);
    return (void *)(long)all;
}

static void check_barrier(void)
{
    pthread_t t[NT];
    pthread_barrier_init(&bar, NULL, NT);
    for (long i = 0; i < NT; i++)
        pthread_create(&t[i], NULL, at_barrier, (void *)i);
    long ok = 0;
    for (int i = 0; i < NT; i++) {
        void *r;
        pthread_join(t[i], &r);
        ok += (long)r;
    }
    printf("barrier: %ld of %d threads saw everyone arrive\n", ok, NT);
}

static sem_t sem;

static void *poster(void *arg)
{
    (void)arg;
    for (int i = 0; i < 50; i++)
        sem_post(&sem);
    return NULL;
}

static void check_semaphore(void)
{
    sem_init(&sem, 0, 0);
    pthread_t t;
    pthread_create(&t, NULL, poster, NULL);
    int n = 0;
    for (int i = 0; i < 50; i++)
        n += sem_wait(&sem) == 0;
    pthread_join(t, NULL);
    printf("semaphore: %d waits returned\n", n);
}

static volatile sig_atomic_t handled_tid;

static void on_usr1(int sig)
{
    (void)sig;
    handled_tid = tid();
}

static void *sleeper(void *arg)
{
    pid_t *me = arg;
    pthread_mutex_lock(&lock);
    *me = tid();
    pthread_cond_broadcast(&cond);
    while (!handled_tid)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
    return NULL;
}

static void check_thread_signal(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    pid_t target = 0;
    pthread_t t;
    pthread_create(&t, NULL, sleeper, &target);
    pthread_mutex_lock(&lock);
    while (!target)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
    pthread_kill(t, SIGUSR1);
    /* the handler ran in the target; wake it to see that */
    while (!handled_tid)
        sched_yield();
    pthread_mutex_lock(&lock);
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    pthread_join(t, NULL);
    printf("pthread_kill: the handler ran in the target thread: %s\n",
           handled_tid == target ? "yes" : "no");
}

static void check_timedwait(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 20 * 1000 * 1000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&lock);
    int r = pthread_cond_timedwait(&cond, &lock, &ts);
    pthread_mutex_unlock(&lock);
    printf("timedwait: %s\n", r == ETIMEDOUT ? "ETIMEDOUT" : strerror(r));
}

static pthread_mutex_t robust;

static void *dies_holding(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&robust);
    return NULL; /* ends with the lock held */
}

/* a robust mutex whose owner thread ended: the next lock says so
 * (the kernel walks the dead thread's robust list) */
static void check_robust(void)
{
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(&robust, &a);
    pthread_t t;
    pthread_create(&t, NULL, dies_holding, NULL);
    pthread_join(t, NULL);
    int r = pthread_mutex_lock(&robust);
    printf("robust: the dead owner's mutex gives %s", r == EOWNERDEAD ? "EOWNERDEAD" : strerror(r));
    if (r == EOWNERDEAD) {
        pthread_mutex_consistent(&robust);
        pthread_mutex_unlock(&robust);
        r = pthread_mutex_lock(&robust);
        printf(", then %s", r ? strerror(r) : "0");
    }
    printf("\n");
    pthread_mutex_unlock(&robust);
}

static long futex(void *uaddr, int op, int val, const struct timespec *ts, void *u2, int v3)
{
    long r = syscall(SYS_futex, uaddr, op, val, ts, u2, v3);
    return r < 0 ? -errno : r;
}

/* the raw calls' error rules (kernel/futex.c) */
static void check_futex_raw(void)
{
    static int word = 5, other = 0;
    struct timespec ms = {0, 1000 * 1000};
    printf("futex: WAIT on a changed value: %s\n",
           futex(&word, FUTEX_WAIT_PRIVATE, 4, NULL, NULL, 0) == -EAGAIN ? "EAGAIN" : "?");
    printf("futex: WAIT with a 1 ms timeout: %s\n",
           futex(&word, FUTEX_WAIT_PRIVATE, 5, &ms, NULL, 0) == -ETIMEDOUT ? "ETIMEDOUT" : "?");
    printf("futex: WAKE with no waiters: %ld\n", futex(&word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0));
    printf("futex: WAIT on a bad address: %s\n",
           futex((void *)8, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0) == -EFAULT ? "EFAULT" : "?");
    printf("futex: CMP_REQUEUE with a changed value: %s\n",
           futex(&word, FUTEX_CMP_REQUEUE_PRIVATE, 1, (void *)1, &other, 4) == -EAGAIN ? "EAGAIN"
                                                                                      : "?");
    printf("futex: an unknown op: %s\n",
           futex(&word, 99 | FUTEX_PRIVATE_FLAG, 0, NULL, NULL, 0) == -ENOSYS ? "ENOSYS" : "?");
}

static void *quitter(void *arg)
{
    (void)arg;
    printf("thread: calling exit(3)\n");
    fflush(stdout);
    exit(3);
}

static void *last_one(void *arg)
{
    (void)arg;
    usleep(10000);
    printf("thread: main has gone, I am the last\n");
    fflush(stdout);
    return NULL;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc > 1 && !strcmp(argv[1], "exit-from-thread")) {
        pthread_t t;
        pthread_create(&t, NULL, quitter, NULL);
        pthread_mutex_lock(&lock);
        for (;;)
            pthread_cond_wait(&cond, &lock); /* exit_group ends this wait */
    }
    if (argc > 1 && !strcmp(argv[1], "main-exits")) {
        pthread_t t;
        pthread_create(&t, NULL, last_one, NULL);
        printf("main: pthread_exit\n");
        pthread_exit(NULL);
    }
    mine = 0;
    check_mutex();
    check_condvar();
    check_barrier();
    check_semaphore();
    check_thread_signal();
    check_timedwait();
    check_futex_raw();
    check_robust();
    return 0;
}
