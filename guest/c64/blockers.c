/* blockers.c - calls that block, and traps, for the --timeout and
 * single-step tests (tests/e2e/blockers.sh).  argv[1] names the case. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int touch_pages(void)
{
    for (;;) {
        size_t n = 64u << 20;
        volatile char *p = mmap(0, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return 3;
        for (size_t i = 0; i < n; i += 4096)
            p[i] = 1;
        munmap((void *)p, n);
    }
}

int main(int argc, char **argv)
{
    const char *c = argc > 1 ? argv[1] : "";
    char b[16];
    int p[2];
    if (!strcmp(c, "sleep"))
        sleep(100);
    else if (!strcmp(c, "nanosleep"))
        nanosleep(&(struct timespec){100, 0}, 0);
    else if (!strcmp(c, "short_sleeps"))
        for (;;)
            nanosleep(&(struct timespec){0, 1}, 0);
    else if (!strcmp(c, "poll_nothing"))
        poll(0, 0, -1);
    else if (!strcmp(c, "own_pipe") && !pipe(p))
        return (int)read(p[0], b, 1);
    else if (!strcmp(c, "stdin"))
        return (int)read(0, b, 1);
    else if (!strcmp(c, "poll_stdin"))
        poll(&(struct pollfd){.fd = 0, .events = POLLIN}, 1, -1);
    else if (!strcmp(c, "select_nothing"))
        select(0, 0, 0, 0, 0);
    else if (!strcmp(c, "epoll")) {
        struct epoll_event ev;
        epoll_wait(epoll_create1(0), &ev, 1, -1);
    } else if (!strcmp(c, "fifo") && argc > 2)
        open(argv[2], O_RDONLY);
    else if (!strcmp(c, "touch"))
        return touch_pages();
    else if (!strcmp(c, "spin"))
        for (;;)
            __asm__ volatile("");
    else if (!strcmp(c, "popf_tf")) /* the trap comes after the nop */
        __asm__ volatile("pushfq; orq $0x100, (%rsp); popfq; nop");
    else if (!strcmp(c, "int1"))
        __asm__ volatile(".byte 0xf1");
    else if (!strcmp(c, "fd0")) { /* stdin closed by the caller: EBADF */
        struct stat st;
        int r = fstat(0, &st);
        printf("fstat(0)=%d errno=%s\n", r, r ? strerrorname_np(errno) : "-");
        return r == 0;
    } else
        return 2;
    return 0;
}
