/* gdbstub.c - gdb remote serial protocol server (see gdbstub.h).
 *
 * Protocol reference: the gdb manual, appendix "GDB Remote Serial
 * Protocol".  A packet is `$payload#cc` (cc = payload bytes summed mod 256,
 * two hex digits), acknowledged with `+` (or `-`: resend) until gdb asks for
 * QStartNoAckMode.  While the guest runs the only thing gdb sends is a raw
 * 0x03 byte (interrupt).  The stub is all-stop with one thread (id 1).
 *
 * Execution is es_step one instruction at a time; breakpoints (Z0 and Z1
 * alike) are addresses compared with RIP before each instruction, so guest
 * memory is never patched and the decode cache never sees an INT3.  Memory
 * goes through the current page tables with supervisor rights
 * (es_kernel_read/es_kernel_write), so kernel addresses read the same in
 * user and kernel mode.
 *
 * Nothing here is global: the connection state lives in a struct on
 * es_gdb_serve's stack. */
#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gdbstub.h"
#include "fault.h"
#include "gdbstub_int.h"
#include "kernel.h"
#include "mem.h"
#include "vm.h"

/* Largest packet payload accepted and sent (advertised as PacketSize). */
#define PKT_MAX 0x4000
/* Software (Z0) and hardware (Z1) breakpoints: x86 has four debug-address
 * registers (SDM Vol. 3B, 17.2), so Z1 is limited to four as gdb expects;
 * Z0 to a generous table. */
#define MAX_SW 256
#define MAX_HW 4
/* Instructions between two looks at the socket for an interrupt while
 * running (a poll() costs about as much as a few hundred steps). */
#define POLL_EVERY 4096
/* After the process is gone, how long to wait for gdb to hang up. */
#define LINGER_MS 2000

/* Signal numbers of the protocol are gdb's own (include/gdb/signals.def),
 * which agree with Linux's for the classic ones used here. */
enum { GDB_SIGINT = 2, GDB_SIGILL = 4, GDB_SIGTRAP = 5, GDB_SIGABRT = 6, GDB_SIGKILL = 9,
       GDB_SIGSEGV = 11, GDB_SIGXCPU = 24 };

typedef struct gdb {
    es_machine *m;
    int fd;
    bool noack;      /* QStartNoAckMode accepted */
    bool swbreak;    /* gdb understands the swbreak/hwbreak stop reasons */
    bool dead;       /* W or X sent: the process is gone */
    bool closed;     /* connection lost */
    bool overflow;   /* the packet just read did not fit */
    int dying_sig;   /* T<sig> reported for a stop that ends the run; 0 = none */
    uint8_t in[4096];
    size_t in_pos, in_len;
    char pkt[PKT_MAX + 1];
    size_t pkt_len;
    char out[2 * PKT_MAX + 64];
    char stop[96];   /* last stop reply, for `?` */
    uint64_t sw[MAX_SW], hw[MAX_HW];
    int nsw, nhw;
} gdb;

/* ---- transport ---- */

/* Reads more bytes into g->in (waiting up to timeout_ms, -1 = forever).
 * Returns 1 on data, 0 on timeout, -1 on EOF or error (g->closed set). */
static int fill(gdb *g, int timeout_ms)
{
    if (g->in_pos == g->in_len)
        g->in_pos = g->in_len = 0;
    if (g->in_len == sizeof g->in) {
        if (g->in_pos == 0)
            return 1; /* full of unread bytes */
        memmove(g->in, g->in + g->in_pos, g->in_len - g->in_pos);
        g->in_len -= g->in_pos;
        g->in_pos = 0;
    }
    struct pollfd p = {.fd = g->fd, .events = POLLIN};
    int r;
    do
        r = poll(&p, 1, timeout_ms);
    while (r < 0 && errno == EINTR);
    if (r == 0)
        return 0;
    ssize_t n;
    do
        n = recv(g->fd, g->in + g->in_len, sizeof g->in - g->in_len, 0);
    while (n < 0 && errno == EINTR);
    if (r < 0 || n <= 0) {
        g->closed = true;
        return -1;
    }
    g->in_len += (size_t)n;
    return 1;
}

/* Next byte, or -1 on EOF/error, -2 on timeout. */
static int get_byte(gdb *g, int timeout_ms)
{
    if (g->in_pos == g->in_len) {
        int r = fill(g, timeout_ms);
        if (r <= 0)
            return r == 0 ? -2 : -1;
    }
    return g->in[g->in_pos++];
}

static int send_all(gdb *g, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = send(g->fd, c, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            g->closed = true;
            return -1;
        }
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Value of a hex digit, -1 for anything else. */
static int hexval(int c)
{
    if (!isxdigit(c))
        return -1;
    return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

static const char hexdig[] = "0123456789abcdef";

/* Sends one packet; in ack mode waits for `+`, resending on `-` (a few
 * times: a peer that nacks forever is broken). */
static int put_packet(gdb *g, const char *data, size_t n)
{
    char frame[sizeof g->out + 4];
    if (n > sizeof frame - 4)
        n = sizeof frame - 4;
    unsigned sum = 0;
    frame[0] = '$';
    for (size_t i = 0; i < n; i++) {
        frame[1 + i] = data[i];
        sum += (uint8_t)data[i];
    }
    frame[1 + n] = '#';
    frame[2 + n] = hexdig[(sum >> 4) & 15];
    frame[3 + n] = hexdig[sum & 15];
    for (int tries = 0; tries < 8; tries++) {
        if (send_all(g, frame, n + 4))
            return -1;
        if (g->noack)
            return 0;
        for (;;) {
            int c = get_byte(g, -1);
            if (c < 0)
                return -1;
            if (c == '+')
                return 0;
            if (c == '-')
                break;
            /* anything else before the ack is line noise */
        }
    }
    return -1;
}

static int reply(gdb *g, const char *s)
{
    return put_packet(g, s, strlen(s));
}

/* Waits for the next packet into g->pkt (NUL-terminated, binary-safe
 * length in pkt_len).  Returns 0, -1 when the connection is gone, -2 on
 * timeout.  A stray 0x03 while stopped is ignored (there is nothing to
 * interrupt); a packet too long for the buffer is acknowledged and marked
 * g->overflow so the caller answers with an error. */
static int get_packet(gdb *g, int timeout_ms)
{
    for (;;) {
        int c = get_byte(g, timeout_ms);
        if (c < 0)
            return c;
        if (c != '$')
            continue;
        unsigned sum = 0;
        size_t n = 0;
        g->overflow = false;
        for (;;) {
            c = get_byte(g, -1);
            if (c < 0)
                return -1;
            if (c == '#')
                break;
            sum += (unsigned)c;
            if (n < PKT_MAX)
                g->pkt[n++] = (char)c;
            else
                g->overflow = true;
        }
        int h = get_byte(g, -1), l = h < 0 ? -1 : get_byte(g, -1);
        if (h < 0 || l < 0)
            return -1;
        g->pkt[n] = 0;
        g->pkt_len = n;
        bool good = hexval(h) >= 0 && hexval(l) >= 0 &&
                    (unsigned)(hexval(h) << 4 | hexval(l)) == (sum & 0xff);
        if (!good) {
            if (!g->noack && send_all(g, "-", 1))
                return -1;
            continue; /* gdb resends; in no-ack mode the packet is lost */
        }
        if (!g->noack && send_all(g, "+", 1))
            return -1;
        return 0;
    }
}

/* Whether gdb sent an interrupt (0x03) since the last look; other bytes
 * stay buffered for the next packet. */
static bool interrupted(gdb *g)
{
    if (fill(g, 0) < 0)
        return false;
    for (size_t i = g->in_pos; i < g->in_len; i++) {
        if (g->in[i] == 0x03) {
            memmove(g->in + i, g->in + i + 1, g->in_len - i - 1);
            g->in_len--;
            return true;
        }
    }
    return false;
}

/* ---- parsing helpers (every malformed field is an error, never a
 * crash: lengths are bounded, digits checked) ---- */

/* Parses 1..16 hex digits at *p; advances *p. */
static bool parse_hex(const char **p, uint64_t *out)
{
    uint64_t v = 0;
    int n = 0;
    int d;
    while ((d = hexval((unsigned char)**p)) >= 0) {
        if (++n > 16)
            return false;
        v = v << 4 | (uint64_t)d;
        (*p)++;
    }
    *out = v;
    return n > 0;
}

/* "ADDR,LEN" followed by `end` (':' or NUL). */
static bool parse_addr_len(const char **p, uint64_t *addr, uint64_t *len, char end)
{
    if (!parse_hex(p, addr) || **p != ',')
        return false;
    (*p)++;
    if (!parse_hex(p, len) || **p != end)
        return false;
    if (end)
        (*p)++;
    return true;
}

static bool decode_hex(const char *s, size_t nchars, uint8_t *out)
{
    if (nchars % 2)
        return false;
    for (size_t i = 0; i < nchars / 2; i++) {
        int h = hexval((unsigned char)s[2 * i]), l = hexval((unsigned char)s[2 * i + 1]);
        if (h < 0 || l < 0)
            return false;
        out[i] = (uint8_t)(h << 4 | l);
    }
    return true;
}

static char *encode_hex(char *dst, const uint8_t *src, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        *dst++ = hexdig[src[i] >> 4];
        *dst++ = hexdig[src[i] & 15];
    }
    *dst = 0;
    return dst;
}

/* ---- memory ---- */

/* Linux's user half ends at 0x00007fffffffffff (47-bit addresses). */
#define USER_END 0x0000800000000000ull

/* Reads up to n bytes at va page by page; returns how many were readable
 * from the start.  A user page of a valid mapping that was never touched
 * is faulted in, as ptrace's access_process_vm does (mm/memory.c). */
size_t es_gdb_mem_read(es_machine *m, uint64_t va, uint8_t *dst, size_t n)
{
    size_t done = 0;
    while (done < n) {
        size_t chunk = 4096 - (va & 4095);
        if (chunk > n - done)
            chunk = n - done;
        if (es_kernel_read(m, va, dst + done, chunk) &&
            (va >= USER_END || !m->vmas || es_vm_prot_at(m, va) <= 0 ||
             es_copy_from_guest(m, dst + done, va, chunk)))
            break;
        done += chunk;
        va += chunk;
        if (va == 0)
            break; /* wrapped around the top of the address space */
    }
    return done;
}

/* Writes n bytes at va (ignoring write protection, as ptrace's POKETEXT
 * does); 0 or -1 when some page is not mapped. */
static int mem_write(es_machine *m, uint64_t va, const uint8_t *src, size_t n)
{
    size_t done = 0;
    while (done < n) {
        size_t chunk = 4096 - (va & 4095);
        if (chunk > n - done)
            chunk = n - done;
        if (es_kernel_write(m, va, src + done, chunk)) {
            uint8_t probe;
            /* fault the page in through a read, then write supervisor-style */
            if (va >= USER_END || es_gdb_mem_read(m, va, &probe, 1) != 1 ||
                es_kernel_write(m, va, src + done, chunk))
                return -1;
        }
        done += chunk;
        va += chunk;
        if (va == 0 && done < n)
            return -1;
    }
    return 0;
}

/* ---- breakpoints ---- */

static bool in_set(const uint64_t *set, int n, uint64_t a)
{
    for (int i = 0; i < n; i++)
        if (set[i] == a)
            return true;
    return false;
}

/* Inserts (or removes) a; returns false when the set is full. */
static bool set_update(uint64_t *set, int *n, int cap, uint64_t a, bool insert)
{
    for (int i = 0; i < *n; i++) {
        if (set[i] == a) {
            if (!insert)
                set[i] = set[--*n];
            return true;
        }
    }
    if (!insert)
        return true; /* removing an absent breakpoint is not an error */
    if (*n >= cap)
        return false;
    set[(*n)++] = a;
    return true;
}

/* ---- stop replies ---- */

/* The gdb signal for a stop that ends the run (m->stop set). */
static int end_signal(const es_machine *m)
{
    switch (m->stop) {
    case ES_STOP_FAULT: return m->signal ? m->signal : GDB_SIGSEGV;
    case ES_STOP_INSNS:
    case ES_STOP_TIME: return GDB_SIGXCPU;
    case ES_STOP_HLT: return GDB_SIGILL;
    case ES_STOP_BREAK: return GDB_SIGTRAP;
    default: return GDB_SIGABRT;
    }
}

static void set_stop(gdb *g, int sig, const char *reason)
{
    snprintf(g->stop, sizeof g->stop, "T%02xthread:1;%s", sig & 0xff, reason);
}

/* The run ended (m->stop set by the machine).  An exit is final (W); a
 * fatal fault or limit is first reported as a signal stop (T) so the state
 * can be inspected, and as X when gdb resumes it. */
static void note_end(gdb *g)
{
    es_machine *m = g->m;
    if (m->stop == ES_STOP_EXIT) {
        snprintf(g->stop, sizeof g->stop, "W%02x", m->exit_status & 0xff);
        g->dead = true;
    } else {
        g->dying_sig = end_signal(m);
        set_stop(g, g->dying_sig, "");
    }
}

/* Resumes: one instruction (step) or until a breakpoint, an interrupt or
 * the end of the run.  Leaves the stop reply in g->stop. */
static void resume_run(gdb *g, bool step)
{
    es_machine *m = g->m;
    if (g->dying_sig) {
        snprintf(g->stop, sizeof g->stop, "X%02x", g->dying_sig & 0xff);
        g->dead = true;
        return;
    }
    for (uint64_t n = 0;; n++) {
        if (n) {
            /* a breakpoint at the resume address does not fire again: gdb
             * steps off it itself, as with x86's RF flag */
            bool hw = in_set(g->hw, g->nhw, m->rip);
            if (hw || in_set(g->sw, g->nsw, m->rip)) {
                set_stop(g, GDB_SIGTRAP, !g->swbreak ? "" : hw ? "hwbreak:;" : "swbreak:;");
                return;
            }
            if (step) {
                set_stop(g, GDB_SIGTRAP, "");
                return;
            }
            if (n % POLL_EVERY == 0 && interrupted(g)) {
                set_stop(g, GDB_SIGINT, "");
                return;
            }
            if (n % POLL_EVERY == 0 && es_deadline_passed(m)) {
                note_end(g);
                return;
            }
            if (g->closed)
                return;
        }
        /* es_step does not count --max-insns; es_run would */
        if (m->max_insns && m->icount >= m->max_insns)
            m->stop = ES_STOP_INSNS;
        else
            es_step(m);
        if (m->stop != ES_STOP_NONE) {
            note_end(g);
            return;
        }
    }
}

/* --timeout bounds each resume: the guest runs (and its host calls wait)
 * at most that long before the stop is reported as SIGXCPU. */
static void resume(gdb *g, bool step)
{
    es_deadline_arm(g->m);
    resume_run(g, step);
    es_deadline_clear(g->m);
}

/* Parses the signal/address tail of c/C/s/S: "c [addr]" resumes at addr;
 * signals to deliver are ignored (the guest kernel raises its own). */
static bool resume_args(gdb *g, const char *p, bool has_sig)
{
    uint64_t v;
    if (has_sig) {
        if (!parse_hex(&p, &v))
            return false;
        if (*p == ';')
            p++;
        else if (*p)
            return false;
    }
    if (*p) {
        if (!parse_hex(&p, &v) || *p)
            return false;
        g->m->rip = v & g->m->ipmask;
    }
    return true;
}

/* vCont;ACTION[:TID][;ACTION[:TID]]...: with one thread, the first action
 * that applies to thread 1 (or to all) is the one. */
static int vcont_action(const char *p)
{
    while (*p == ';') {
        p++;
        char a = *p;
        const char *q = p + 1;
        uint64_t sig;
        if ((a == 'C' || a == 'S') && !parse_hex(&q, &sig))
            return -1;
        bool applies = true;
        if (*q == ':') {
            q++;
            applies = !strncmp(q, "-1", 2) || !strncmp(q, "p-1", 3) || !strncmp(q, "1", 1) ||
                      !strncmp(q, "p1", 2);
            while (*q && *q != ';')
                q++;
        }
        if (*q && *q != ';')
            return -1;
        if (a != 'c' && a != 'C' && a != 's' && a != 'S' && a != 't')
            return -1;
        if (applies)
            return a;
        p = q;
    }
    return *p ? -1 : 0;
}

/* ---- packets ---- */

static int reply_regs(gdb *g)
{
    char *o = g->out;
    uint8_t buf[16];
    for (size_t r = 0; r < es_gdb_nregs(); r++) {
        unsigned n = es_gdb_reg_read(g->m, r, buf);
        o = encode_hex(o, buf, n);
    }
    return reply(g, g->out);
}

static const char *write_regs(gdb *g, const char *hex, size_t len)
{
    size_t total = 0;
    for (size_t r = 0; r < es_gdb_nregs(); r++)
        total += es_gdb_reg_size(r);
    if (len != 2 * total)
        return "E01";
    uint8_t buf[16], cur[16];
    for (size_t r = 0; r < es_gdb_nregs(); r++) {
        unsigned n = es_gdb_reg_size(r);
        if (!decode_hex(hex, 2 * n, buf))
            return "E01";
        hex += 2 * n;
        es_gdb_reg_read(g->m, r, cur);
        /* read-only registers are accepted when unchanged (gdb writes the
         * whole set back) */
        if (memcmp(buf, cur, n) && es_gdb_reg_write(g->m, r, buf))
            return "E01";
    }
    return "OK";
}

static const char *read_mem(gdb *g, const char *p)
{
    uint64_t addr, len;
    if (!parse_addr_len(&p, &addr, &len, 0))
        return "E01";
    if (len > PKT_MAX / 2)
        len = PKT_MAX / 2; /* a shorter reply is allowed; gdb asks again */
    uint8_t buf[PKT_MAX / 2];
    size_t got = es_gdb_mem_read(g->m, addr, buf, len);
    if (got == 0 && len)
        return "E14"; /* EFAULT, as gdbserver answers */
    encode_hex(g->out, buf, got);
    return g->out;
}

static const char *write_mem(gdb *g, const char *p, bool binary)
{
    uint64_t addr, len;
    if (!parse_addr_len(&p, &addr, &len, ':') || len > PKT_MAX)
        return "E01";
    uint8_t buf[PKT_MAX];
    size_t avail = g->pkt_len - (size_t)(p - g->pkt);
    if (binary) {
        /* X data: '}' escapes the next byte xor 0x20 */
        size_t n = 0;
        for (size_t i = 0; i < avail; i++) {
            uint8_t c = (uint8_t)p[i];
            if (c == '}') {
                if (++i >= avail)
                    return "E01";
                c = (uint8_t)p[i] ^ 0x20;
            }
            if (n >= len)
                return "E01";
            buf[n++] = c;
        }
        if (n != len)
            return "E01";
    } else if (avail != 2 * len || !decode_hex(p, avail, buf)) {
        return "E01";
    }
    if (len && mem_write(g->m, addr, buf, len))
        return "E14";
    return "OK";
}

static const char *breakpoint(gdb *g, const char *p, bool insert)
{
    char type = p[0];
    uint64_t addr, kind;
    if (!type)
        return "E01";
    p += 1;
    if (*p != ',')
        return "E01";
    p++;
    if (!parse_hex(&p, &addr) || *p != ',')
        return "E01";
    p++;
    if (!parse_hex(&p, &kind) || (*p && *p != ';'))
        return "E01";
    if (type == '0')
        return set_update(g->sw, &g->nsw, MAX_SW, addr, insert) ? "OK" : "E28";
    if (type == '1')
        return set_update(g->hw, &g->nhw, MAX_HW, addr, insert) ? "OK" : "E28";
    return ""; /* watchpoints (Z2..Z4): not supported */
}

/* qXfer:features:read:ANNEX:OFFSET,LENGTH */
static const char *xfer_features(gdb *g, const char *p)
{
    if (strncmp(p, "target.xml:", 11))
        return "E00";
    p += 11;
    uint64_t off, len;
    if (!parse_addr_len(&p, &off, &len, 0))
        return "E01";
    static const size_t xml_cap = 16384;
    char *xml = malloc(xml_cap);
    if (!xml)
        return "E0c";
    size_t n = es_gdb_target_xml(xml, xml_cap);
    if (off > n) {
        free(xml);
        return "E01";
    }
    size_t take = n - off;
    if (take > len)
        take = len;
    if (take > PKT_MAX / 2)
        take = PKT_MAX / 2; /* escaping may double the size */
    char *o = g->out;
    *o++ = off + take < n ? 'm' : 'l';
    for (size_t i = 0; i < take; i++) {
        char c = xml[off + i];
        if (c == '#' || c == '$' || c == '}' || c == '*') {
            *o++ = '}';
            c ^= 0x20;
        }
        *o++ = c;
    }
    *o = 0;
    free(xml);
    return g->out;
}

/* `monitor CMD` (qRcmd,HEX): answered by gdbstub_monitor.c as console
 * output, hex encoded here. */
static const char *monitor(gdb *g, const char *hexcmd)
{
    char cmd[256], text[8192];
    size_t n = strlen(hexcmd);
    if (n / 2 >= sizeof cmd || !decode_hex(hexcmd, n, (uint8_t *)cmd))
        return "E01";
    cmd[n / 2] = 0;
    es_gdb_monitor(g->m, cmd, text, sizeof text);
    encode_hex(g->out, (const uint8_t *)text, strlen(text));
    return g->out;
}

static const char *query(gdb *g, const char *p)
{
    if (!strncmp(p, "qRcmd,", 6))
        return monitor(g, p + 6);
    if (!strncmp(p, "qSupported", 10)) {
        g->swbreak = strstr(p, "swbreak+") != NULL;
        snprintf(g->out, sizeof g->out,
                 "PacketSize=%x;QStartNoAckMode+;qXfer:features:read+;swbreak+;hwbreak+;"
                 "vContSupported+",
                 PKT_MAX);
        return g->out;
    }
    if (!strncmp(p, "qXfer:features:read:", 20))
        return xfer_features(g, p + 20);
    if (!strcmp(p, "qAttached"))
        return "1"; /* gdb detaches on quit: the run goes on */
    if (!strcmp(p, "qC"))
        return "QC1";
    if (!strcmp(p, "qfThreadInfo"))
        return "m1";
    if (!strcmp(p, "qsThreadInfo"))
        return "l";
    if (!strncmp(p, "qSymbol:", 8))
        return "OK";
    if (!strncmp(p, "qThreadExtraInfo,", 17)) {
        char s[48];
        snprintf(s, sizeof s, "CPL %u, %s mode", g->m->cpl,
                 g->m->ipmask == ~0ull ? "64-bit" : "compatibility");
        encode_hex(g->out, (const uint8_t *)s, strlen(s));
        return g->out;
    }
    return "";
}

/* gdb's kill: the run stops (ES_STOP_BREAK) unless the process already
 * ended on its own, whose outcome the caller then reports. */
static void kill_run(gdb *g)
{
    if (g->dead || g->dying_sig)
        return;
    es_stop(g->m, ES_STOP_BREAK);
    snprintf(g->m->message, sizeof g->m->message, "killed by gdb at rip=0x%llx",
             (unsigned long long)g->m->rip);
}

/* Handles one packet.  Returns false when the session is over (detach,
 * kill or connection lost). */
static bool dispatch(gdb *g)
{
    es_machine *m = g->m;
    const char *p = g->pkt;
    if (g->overflow)
        return reply(g, "E01") == 0;
    switch (p[0]) {
    case '?':
        return reply(g, g->stop) == 0;
    case 'g':
        return reply_regs(g) == 0;
    case 'G':
        return reply(g, write_regs(g, p + 1, g->pkt_len - 1)) == 0;
    case 'p': {
        const char *q = p + 1;
        uint64_t r;
        uint8_t buf[16];
        if (!parse_hex(&q, &r) || *q || r >= es_gdb_nregs())
            return reply(g, "E01") == 0;
        encode_hex(g->out, buf, es_gdb_reg_read(m, r, buf));
        return reply(g, g->out) == 0;
    }
    case 'P': {
        const char *q = p + 1;
        uint64_t r;
        uint8_t buf[16];
        if (!parse_hex(&q, &r) || *q != '=' || r >= es_gdb_nregs() ||
            strlen(q + 1) != 2 * es_gdb_reg_size(r) ||
            !decode_hex(q + 1, 2 * es_gdb_reg_size(r), buf) || es_gdb_reg_write(m, r, buf))
            return reply(g, "E01") == 0;
        return reply(g, "OK") == 0;
    }
    case 'm':
        return reply(g, read_mem(g, p + 1)) == 0;
    case 'M':
        return reply(g, write_mem(g, p + 1, false)) == 0;
    case 'X':
        return reply(g, write_mem(g, p + 1, true)) == 0;
    case 'c':
    case 's':
    case 'C':
    case 'S':
        if (!resume_args(g, p + 1, p[0] == 'C' || p[0] == 'S'))
            return reply(g, "E01") == 0;
        resume(g, p[0] == 's' || p[0] == 'S');
        return g->closed ? false : reply(g, g->stop) == 0;
    case 'v':
        if (!strcmp(p, "vCont?"))
            return reply(g, "vCont;c;C;s;S") == 0;
        if (!strncmp(p, "vCont;", 6)) {
            int a = vcont_action(p + 5);
            if (a < 0)
                return reply(g, "E01") == 0;
            if (a == 0 || a == 't') /* nothing to run: already stopped */
                return reply(g, g->stop) == 0;
            resume(g, a == 's' || a == 'S');
            return g->closed ? false : reply(g, g->stop) == 0;
        }
        if (!strncmp(p, "vKill", 5)) {
            kill_run(g);
            reply(g, "OK");
            return false;
        }
        return reply(g, "") == 0; /* vMustReplyEmpty and the rest */
    case 'Z':
    case 'z':
        return reply(g, breakpoint(g, p + 1, p[0] == 'Z')) == 0;
    case 'H':
        return reply(g, p[1] && (p[2] == '0' || p[2] == '1' || !strcmp(p + 2, "-1")) ? "OK"
                                                                                     : "E01") == 0;
    case 'T':
        return reply(g, !strcmp(p + 1, "1") || !strcmp(p + 1, "p1.1") ? "OK" : "E01") == 0;
    case 'q':
        return reply(g, query(g, p)) == 0;
    case 'Q':
        if (!strcmp(p, "QStartNoAckMode")) {
            /* this reply is still acknowledged; the next packet is not */
            if (reply(g, "OK"))
                return false;
            g->noack = true;
            return true;
        }
        return reply(g, "") == 0;
    case 'D':
        reply(g, "OK");
        return false;
    case 'k':
        /* no reply (the protocol's k has none); the run stops unless the
         * process already ended on its own */
        kill_run(g);
        return false;
    default:
        return reply(g, "") == 0;
    }
}

/* ---- sockets ---- */

int es_gdb_listen(const char *addr, int *port, char *err, size_t errlen)
{
    const char *colon = strrchr(addr, ':');
    if (!colon) {
        snprintf(err, errlen, "--gdb %s: expected [HOST]:PORT", addr);
        return -1;
    }
    char host[256];
    size_t hl = (size_t)(colon - addr);
    if (hl >= sizeof host) {
        snprintf(err, errlen, "--gdb: host name too long");
        return -1;
    }
    memcpy(host, addr, hl);
    host[hl] = 0;
    char *end;
    long pn = strtol(colon + 1, &end, 10);
    if (!colon[1] || *end || pn < 0 || pn > 65535) {
        snprintf(err, errlen, "--gdb %s: the port must be a number 0..65535", addr);
        return -1;
    }
    /* no host: localhost only, a debugger port is not for the network */
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICSERV}, *res = NULL;
    int rc = getaddrinfo(hl ? host : "127.0.0.1", colon + 1, &hints, &res);
    if (rc) {
        snprintf(err, errlen, "--gdb %s: %s", addr, gai_strerror(rc));
        return -1;
    }
    int fd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
        bind(fd, res->ai_addr, res->ai_addrlen) || listen(fd, 1)) {
        snprintf(err, errlen, "--gdb %s: %s", addr, strerror(errno));
        if (fd >= 0)
            close(fd);
        freeaddrinfo(res);
        return -1;
    }
    freeaddrinfo(res);
    struct sockaddr_in sa;
    socklen_t sl = sizeof sa;
    if (getsockname(fd, (struct sockaddr *)&sa, &sl)) {
        snprintf(err, errlen, "--gdb %s: %s", addr, strerror(errno));
        close(fd);
        return -1;
    }
    *port = ntohs(sa.sin_port);
    return fd;
}

/* Runs from the kernel's startup code to the program's first instruction
 * (the first one at CPL 3), where gdb expects a new process to stand. */
static void run_to_user(es_machine *m)
{
    while (m->cpl != 3 && m->stop == ES_STOP_NONE) {
        if (m->max_insns && m->icount >= m->max_insns) {
            m->stop = ES_STOP_INSNS;
            break;
        }
        es_step(m);
    }
}

int es_gdb_serve_fd(es_machine *m, int listen_fd)
{
    int fd;
    do
        fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    int e = errno;
    close(listen_fd);
    if (fd < 0) {
        snprintf(m->message, sizeof m->message, "gdb: accept: %s", strerror(e));
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    gdb *g = calloc(1, sizeof *g);
    if (!g) {
        close(fd);
        snprintf(m->message, sizeof m->message, "gdb: out of memory");
        return -1;
    }
    g->m = m;
    g->fd = fd;
    m->stop = ES_STOP_NONE;
    run_to_user(m);
    if (m->stop != ES_STOP_NONE)
        note_end(g);
    else
        set_stop(g, GDB_SIGTRAP, "");
    for (;;) {
        /* once the process is gone, gdb hangs up; do not wait forever */
        int r = get_packet(g, g->dead ? LINGER_MS : -1);
        if (r < 0 || !dispatch(g))
            break;
    }
    close(fd);
    free(g);
    return 0;
}

int es_gdb_serve(es_machine *m, const char *addr)
{
    int port;
    int lfd = es_gdb_listen(addr, &port, m->message, sizeof m->message);
    if (lfd < 0)
        return -1;
    const char *colon = strrchr(addr, ':');
    fprintf(stderr, "entrysim: gdb: listening on %.*s:%d\n",
            colon == addr ? 9 : (int)(colon - addr), colon == addr ? "127.0.0.1" : addr, port);
    fflush(stderr);
    return es_gdb_serve_fd(m, lfd);
}
