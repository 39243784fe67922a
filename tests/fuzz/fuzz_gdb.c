/* fuzz_gdb.c - the gdb remote-serial-protocol stub (debugger/gdb/) fed
 * arbitrary bytes over a loopback TCP connection, the way gdb talks to
 * it.  Byte 0: bit 0 = send the rest as a raw stream; else the rest is
 * split at newlines into packet bodies that the harness frames
 * ($body#checksum, followed by the `+` that acknowledges the reply) so the
 * fuzzer need not learn checksums.  Bit 1 = the guest kernel runs (kernel
 * stop states), else --direct.  The guest is a small endless loop, bounded
 * by an instruction cap. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz_util.h"
#include "gdbstub.h"
#include "launch.h"

#define FZ_MAX_INPUT (16 * 1024)

typedef struct client {
    int port;
    const uint8_t *data;
    size_t size;
} client;

static void send_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
        if (w <= 0)
            return;
        c += w;
        n -= (size_t)w;
    }
}

static void send_framed(int fd, const uint8_t *body, size_t n)
{
    char tail[5];
    unsigned sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += body[i];
    snprintf(tail, sizeof tail, "#%02x+", sum & 0xff);
    send_all(fd, "$", 1);
    send_all(fd, body, n);
    send_all(fd, tail, 4);
}

/* gdb's side: connect, send everything, half-close, drain the replies. */
static void *client_main(void *arg)
{
    client *c = arg;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)c->port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa)) {
        perror("fuzz_gdb: connect");
        abort();
    }
    const uint8_t *p = c->data + 1, *end = c->data + c->size;
    if (c->data[0] & 1) {
        send_all(fd, p, (size_t)(end - p));
    } else {
        while (p < end) {
            const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
            const uint8_t *e = nl ? nl : end;
            send_framed(fd, p, (size_t)(e - p));
            p = e + 1;
        }
    }
    shutdown(fd, SHUT_WR);
    char buf[4096];
    while (recv(fd, buf, sizeof buf, 0) > 0)
        ;
    close(fd);
    return NULL;
}

static es_machine *guest(bool kernel)
{
    /* mov $1,%rax; 1: inc %rax; jmp 1b */
    static const uint8_t loop[] = {0x48, 0xc7, 0xc0, 0x01, 0x00, 0x00, 0x00,
                                   0x48, 0xff, 0xc0, 0xeb, 0xfb};
    static char prog[4200];
    if (!prog[0]) {
        snprintf(prog, sizeof prog, "%s/loop", fz_tmpdir());
        if (fz_write_elf(prog, false, loop, sizeof loop))
            abort();
    }
    es_machine *m = fz_launch(prog, fz_tmpdir(), false, !kernel, 50000);
    if (!m)
        abort(); /* the program is fixed: a failed launch is a bug */
    return m;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > FZ_MAX_INPUT)
        return 0;
    es_machine *m = guest(data[0] & 2);
    char err[256];
    client c = {.data = data, .size = size};
    int lfd = es_gdb_listen("127.0.0.1:0", &c.port, err, sizeof err);
    if (lfd < 0) {
        fprintf(stderr, "fuzz_gdb: %s\n", err);
        abort();
    }
    pthread_t t;
    if (pthread_create(&t, NULL, client_main, &c))
        abort();
    es_gdb_serve_fd(m, lfd);
    pthread_join(t, NULL);
    es_launch_free(m);
    return 0;
}
