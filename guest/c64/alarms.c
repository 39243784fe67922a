/* alarms.c - SIGALRM from ITIMER_REAL (setitimer, alarm) and the waits a
 * signal ends, run natively and under entrysim with the same output: a
 * periodic timer interrupting a loop that makes no system call (the
 * modeled timer tick), pause() and nanosleep() cut short (EINTR),
 * sigsuspend with its temporary mask, alarm()'s return value, getitimer.
 * argv[1] = "default": an alarm without a handler kills (142). */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
    (void)sig;
    alarms++;
}

static void timer_ms(long first, long every)
{
    struct itimerval it = {{every / 1000, every % 1000 * 1000}, {first / 1000, first % 1000 * 1000}};
    setitimer(ITIMER_REAL, &it, NULL);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc > 1 && !strcmp(argv[1], "default")) {
        timer_ms(5, 0);
        for (volatile unsigned long i = 0;; i++)
            ;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);

    timer_ms(2, 2); /* periodic: the loop below makes no system call */
    volatile unsigned long spins = 0;
    while (alarms < 3)
        spins++;
    timer_ms(0, 0);
    printf("periodic: %d alarms, loop ran %d\n", (int)alarms, spins > 0);

    struct itimerval cur;
    timer_ms(5000, 0);
    getitimer(ITIMER_REAL, &cur);
    printf("getitimer: pending %d, at most 5 s %d\n", cur.it_value.tv_sec || cur.it_value.tv_usec,
           cur.it_value.tv_sec <= 5);
    printf("alarm(0) after 5 s armed: %u\n", alarm(0));
    printf("alarm(0) again: %u\n", alarm(0));

    alarms = 0;
    timer_ms(3, 0);
    int r = pause();
    printf("pause: %d %s, alarms %d\n", r, strerror(errno), (int)alarms);

    struct timespec ts = {10, 0};
    timer_ms(3, 0);
    r = nanosleep(&ts, NULL);
    printf("nanosleep 10 s: %d %s, alarms %d\n", r, strerror(errno), (int)alarms);

    sigset_t block, empty, now;
    sigemptyset(&block);
    sigaddset(&block, SIGALRM);
    sigemptyset(&empty);
    sigprocmask(SIG_BLOCK, &block, NULL);
    timer_ms(3, 0);
    r = sigsuspend(&empty);
    sigprocmask(SIG_BLOCK, NULL, &now);
    printf("sigsuspend: %d %s, alarms %d, SIGALRM blocked again %d\n", r, strerror(errno),
           (int)alarms, sigismember(&now, SIGALRM));
    return 0;
}
