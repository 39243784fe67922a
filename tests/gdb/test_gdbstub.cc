// The gdb remote stub, driven by a small protocol client: the guest runs
// through the guest kernel (es_launch), the stub serves it in a thread (or
// in an `entrysim run --gdb :0` child), and each test checks the replies
// and the machine's state afterwards.
#include <gtest/gtest.h>

#include <algorithm>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

extern "C" {
#include "gdbstub.h"
#include "kernel.h"
#include "launch.h"
#include "machine.h"
#include "mitigations.h"
}

namespace {

std::string guest(const char *name)
{
    return std::string(ES_GUEST_DIR) + "/" + name;
}

bool exists(const std::string &p)
{
    return access(p.c_str(), R_OK) == 0;
}

// e_entry of an ELF file (32- or 64-bit).
uint64_t elf_entry(const std::string &path)
{
    FILE *f = fopen(path.c_str(), "rb");
    uint8_t h[64] = {0};
    if (f) {
        size_t n = fread(h, 1, sizeof h, f);
        (void)n;
        fclose(f);
    }
    uint64_t e = 0;
    memcpy(&e, h + 24, h[4] == 1 ? 4 : 8); // EI_CLASS: ELFCLASS32 has a 4-byte e_entry
    return e;
}

std::string hex(const void *p, size_t n)
{
    static const char d[] = "0123456789abcdef";
    std::string s;
    for (size_t i = 0; i < n; i++) {
        uint8_t b = static_cast<const uint8_t *>(p)[i];
        s += d[b >> 4];
        s += d[b & 15];
    }
    return s;
}

std::string hex64(uint64_t v)
{
    return hex(&v, 8);
}

// Little-endian register value from the hex of a `p` reply.
uint64_t le(const std::string &h)
{
    uint64_t v = 0;
    for (size_t i = 0; i + 1 < h.size() && i < 16; i += 2)
        v |= std::stoull(h.substr(i, 2), nullptr, 16) << (4 * i);
    return v;
}

std::string addr(uint64_t a)
{
    char b[32];
    snprintf(b, sizeof b, "%llx", (unsigned long long)a);
    return b;
}

// A minimal protocol client.
struct Client {
    int fd = -1;
    bool ack = true;

    ~Client()
    {
        if (fd >= 0)
            close(fd);
    }
    bool connect_to(int port)
    {
        fd = socket(AF_INET, SOCK_STREAM, 0);
        int one = 1; // acks and packets are tiny: no Nagle delays
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        sockaddr_in sa{};
        sa.sin_family = AF_INET;
        sa.sin_port = htons((uint16_t)port);
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        for (int i = 0; i < 200; i++) {
            if (connect(fd, (sockaddr *)&sa, sizeof sa) == 0)
                return true;
            usleep(10000);
        }
        return false;
    }
    void hangup()
    {
        if (fd >= 0)
            close(fd);
        fd = -1;
    }
    void raw(const std::string &s)
    {
        ASSERT_EQ(send(fd, s.data(), s.size(), MSG_NOSIGNAL), (ssize_t)s.size());
    }
    // -1 on EOF, -2 on timeout
    int byte(int timeout_ms = 30000)
    {
        pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, timeout_ms) <= 0)
            return -2;
        uint8_t c;
        return recv(fd, &c, 1, 0) == 1 ? c : -1;
    }
    static std::string frame(const std::string &payload)
    {
        unsigned sum = 0;
        for (unsigned char c : payload)
            sum += c;
        char cs[3];
        snprintf(cs, sizeof cs, "%02x", sum & 0xff);
        return "$" + payload + "#" + cs;
    }
    void put(const std::string &payload)
    {
        raw(frame(payload));
        if (ack) {
            EXPECT_EQ(byte(), '+') << "no ack for " << payload.substr(0, 40);
        }
    }
    // The next packet's payload ("<eof>" / "<timeout>" when none).
    std::string get(int timeout_ms = 30000)
    {
        int c;
        while ((c = byte(timeout_ms)) != '$')
            if (c < 0)
                return c == -1 ? "<eof>" : "<timeout>";
        std::string s;
        unsigned sum = 0;
        while ((c = byte()) != '#') {
            if (c < 0)
                return "<eof>";
            s += (char)c;
            sum += (unsigned)c;
        }
        char cs[3] = {(char)byte(), (char)byte(), 0};
        EXPECT_EQ(strtoul(cs, nullptr, 16), sum & 0xff) << "bad checksum on " << s;
        if (ack)
            raw("+");
        // run-length encoding: X*N repeats X N-29 more times
        std::string out;
        for (size_t i = 0; i < s.size(); i++) {
            if (s[i] == '*' && i + 1 < s.size() && !out.empty()) {
                out.append((size_t)(s[i + 1] - 29), out.back());
                i++;
            } else {
                out += s[i];
            }
        }
        return out;
    }
    std::string cmd(const std::string &payload)
    {
        put(payload);
        return get();
    }
};

// A guest program under the stub, served from a thread.
struct Session {
    es_machine *m = nullptr;
    std::thread th;
    int rc = -1;
    Client c;
    uint64_t entry = 0;

    bool start(const std::string &prog)
    {
        entry = elf_entry(prog);
        char *argv[] = {const_cast<char *>(prog.c_str()), nullptr};
        es_launch_cfg lc{};
        lc.program = prog.c_str();
        lc.argc = 1;
        lc.argv = argv;
        lc.root = "/";
        lc.deterministic = true;
        lc.vendor = 1;
        lc.patches = ES_CONV_V417;
        lc.mitigations = ES_MIT_DEFAULT;
        lc.max_insns = 100000000;
        lc.stdin_fd = 0;
        lc.stdout_fd = 1;
        lc.stderr_fd = 2;
        char err[400];
        if (es_launch(&lc, &m, err, sizeof err)) {
            ADD_FAILURE() << err;
            return false;
        }
        int port = 0;
        int lfd = es_gdb_listen(":0", &port, err, sizeof err);
        if (lfd < 0) {
            ADD_FAILURE() << err;
            return false;
        }
        EXPECT_GT(port, 0);
        th = std::thread([this, lfd] { rc = es_gdb_serve_fd(m, lfd); });
        return c.connect_to(port);
    }
    // Waits for the stub to return (after D, k or a hang-up).
    int join()
    {
        c.hangup();
        if (th.joinable())
            th.join();
        return rc;
    }
    ~Session()
    {
        join();
        es_launch_free(m);
    }
    std::string xml()
    {
        std::string doc;
        for (;;) {
            std::string r = c.cmd("qXfer:features:read:target.xml:" + addr(doc.size()) + ",400");
            if (r.empty() || (r[0] != 'm' && r[0] != 'l'))
                return doc + "<error " + r + ">";
            doc += r.substr(1);
            if (r[0] == 'l')
                return doc;
        }
    }
    // gdb's number of register `name` from the target description.
    int regnum(const std::string &name)
    {
        std::string d = xml();
        size_t at = d.find("<reg name=\"" + name + "\"");
        if (at == std::string::npos)
            return -1;
        size_t rn = d.find("regnum=\"", at);
        return std::stoi(d.substr(rn + 8));
    }
    uint64_t reg(int n)
    {
        char b[16];
        snprintf(b, sizeof b, "p%x", n);
        return le(c.cmd(b));
    }
};

// Declares Session `s` serving guest program `name`; skips the test when
// the guest was not built.
#define START(s, name)                                      \
    Session s;                                              \
    do {                                                    \
        std::string prog_ = guest(name);                    \
        if (!exists(prog_))                                 \
            GTEST_SKIP() << "guest not built: " << prog_;   \
        ASSERT_TRUE(s.start(prog_));                        \
    } while (0)

// The stub returned with the guest exited on its own with `status`.
void expect_exited(Session &s, int status)
{
    EXPECT_EQ(s.join(), 0);
    EXPECT_EQ(s.m->stop, ES_STOP_EXIT);
    EXPECT_EQ(s.m->exit_status, status);
}

// gdb's amd64 numbering (the stub's description order)
enum { R_RAX = 0, R_RDI = 5, R_RSP = 7, R_RIP = 16, R_EFLAGS = 17, R_CS = 18 };

TEST(GdbStub, RegistersBreakpointAndStepIntoTheKernel)
{
    START(s, "asm_exit42");
    uint64_t entry_sys = es_kernel_sym(s.m, "entry_SYSCALL_64");
    ASSERT_NE(entry_sys, 0u);
    uint8_t kbytes[8];
    ASSERT_EQ(es_kernel_read(s.m, entry_sys, kbytes, sizeof kbytes), 0);

    std::string sup = s.c.cmd("qSupported:multiprocess+;swbreak+;hwbreak+");
    EXPECT_NE(sup.find("PacketSize=4000"), std::string::npos) << sup;
    EXPECT_NE(sup.find("qXfer:features:read+"), std::string::npos) << sup;
    std::string doc = s.xml();
    EXPECT_NE(doc.find("<architecture>i386:x86-64</architecture>"), std::string::npos);
    EXPECT_NE(doc.find("org.gnu.gdb.i386.core"), std::string::npos);
    EXPECT_NE(doc.find("<reg name=\"xmm15\" bitsize=\"128\""), std::string::npos);
    EXPECT_EQ(s.regnum("rip"), R_RIP);
    EXPECT_EQ(s.regnum("rsp"), R_RSP);
    EXPECT_EQ(s.c.cmd("qAttached"), "1");
    EXPECT_EQ(s.c.cmd("qC"), "QC1");
    EXPECT_EQ(s.c.cmd("qfThreadInfo"), "m1");
    EXPECT_EQ(s.c.cmd("qsThreadInfo"), "l");
    EXPECT_EQ(s.c.cmd("Hg0"), "OK");

    // the process stands at its entry point, in user mode
    EXPECT_EQ(s.c.cmd("?").substr(0, 3), "T05");
    std::string g = s.c.cmd("g");
    ASSERT_GE(g.size(), 2u * 136);
    EXPECT_EQ(le(g.substr(2 * 128, 16)), s.entry); // rip follows 16 GPRs
    EXPECT_EQ(s.reg(R_RIP), s.entry);
    EXPECT_EQ(s.reg(R_CS), 0x33u);
    EXPECT_EQ(s.reg(s.regnum("cpl")), 3u);
    // code: mov eax, 60
    EXPECT_EQ(s.c.cmd("m" + addr(s.entry) + ",5"), "b83c000000");
    // kernel memory through the page tables with supervisor rights, from
    // user mode
    EXPECT_EQ(s.c.cmd("m" + addr(entry_sys) + ",8"), hex(kbytes, 8));

    // breakpoint on the syscall instruction (entry + 10)
    EXPECT_EQ(s.c.cmd("Z0," + addr(s.entry + 10) + ",1"), "OK");
    std::string stop = s.c.cmd("c");
    EXPECT_EQ(stop.substr(0, 3), "T05") << stop;
    EXPECT_NE(stop.find("swbreak:"), std::string::npos) << stop;
    EXPECT_EQ(s.reg(R_RIP), s.entry + 10);
    EXPECT_EQ(s.reg(R_RAX), 60u);
    EXPECT_EQ(s.reg(R_RDI), 42u);
    EXPECT_EQ(s.c.cmd("z0," + addr(s.entry + 10) + ",1"), "OK");

    // change the exit status through a register write
    EXPECT_EQ(s.c.cmd("P" + addr(R_RDI) + "=" + hex64(7)), "OK");
    EXPECT_EQ(s.reg(R_RDI), 7u);

    // one step from `syscall` lands on entry_SYSCALL_64 at CPL 0
    EXPECT_EQ(s.c.cmd("s").substr(0, 3), "T05");
    EXPECT_EQ(s.reg(R_RIP), entry_sys);
    EXPECT_EQ(s.reg(R_CS), 0x10u);
    EXPECT_EQ(s.reg(s.regnum("cpl")), 0u);
    EXPECT_EQ(s.c.cmd("m" + addr(entry_sys) + ",8"), hex(kbytes, 8));
    // SYSCALL saved the user RIP in RCX (SDM Vol. 2B, SYSCALL)
    EXPECT_EQ(s.reg(2), s.entry + 12); // rcx is gdb's register 2

    // monitor commands (qRcmd): answers are console text, hex encoded
    auto monitor = [&s](const std::string &cmd) {
        std::string r = s.c.cmd("qRcmd," + hex(cmd.data(), cmd.size())), text;
        for (size_t i = 0; i + 1 < r.size(); i += 2)
            text += (char)std::stoi(r.substr(i, 2), nullptr, 16);
        return text;
    };
    EXPECT_EQ(monitor("sym entry_SYSCALL_64"), "entry_SYSCALL_64 = 0x" + addr(entry_sys) + "\n");
    EXPECT_EQ(monitor("sym no_such_symbol"), "no kernel symbol 'no_such_symbol'\n");
    std::string where = monitor("where");
    EXPECT_NE(where.find("(entry_SYSCALL_64+0x0), CPL 0, 64-bit mode"), std::string::npos)
        << where;
    EXPECT_NE(monitor("kernel").find("kernel-p15.elf"), std::string::npos);
    EXPECT_NE(monitor("help").find("sym NAME"), std::string::npos);
    EXPECT_NE(monitor("help").find("disas [N]"), std::string::npos);
    // the code at rip with its targets named (issue 13): the entry's call
    // of the dispatcher, which gdb's own x/i shows as a bare address
    std::string dis = monitor("disas");
    EXPECT_EQ(dis.rfind("=> 0x" + addr(entry_sys) + " <entry_SYSCALL_64+0x0>:  swapgs", 0), 0u)
        << dis;
    EXPECT_EQ(std::count(dis.begin(), dis.end(), '\n'), 8) << dis;
    dis = monitor("disas 64");
    EXPECT_NE(dis.find("call 0x"), std::string::npos) << dis;
    EXPECT_NE(dis.find(" <do_syscall_64>"), std::string::npos) << dis;
    EXPECT_EQ(s.c.cmd("qRcmd,zz"), "E01");

    // detach: the run continues to its exit with the status we wrote
    EXPECT_EQ(s.c.cmd("D"), "OK");
    EXPECT_EQ(s.join(), 0);
    EXPECT_EQ(s.m->stop, ES_STOP_NONE);
    EXPECT_EQ(es_run(s.m), ES_STOP_EXIT);
    EXPECT_EQ(s.m->exit_status, 7);
}

TEST(GdbStub, MemoryWritesAndMalformedPackets)
{
    START(s, "asm_exit42");
    Client &c = s.c;

    // unmapped and non-canonical addresses: EFAULT, no crash
    EXPECT_EQ(c.cmd("m0,8"), "E14");
    EXPECT_EQ(c.cmd("m8000000000000000,8"), "E14");
    EXPECT_EQ(c.cmd("M0,1:00"), "E14");
    // a huge length is answered with what fits (gdb asks again)
    std::string big = c.cmd("m" + addr(s.entry) + ",ffffffff");
    EXPECT_GT(big.size(), 10u);
    EXPECT_LE(big.size(), 0x4000u);
    EXPECT_EQ(big.substr(0, 10), "b83c000000");

    // stack memory: hex and binary (escaped) writes
    uint64_t sp = s.reg(R_RSP);
    EXPECT_EQ(c.cmd("M" + addr(sp - 16) + ",4:deadbeef"), "OK");
    EXPECT_EQ(c.cmd("m" + addr(sp - 16) + ",4"), "deadbeef");
    // X data: 0x23 '#', 0x7d '}', 0x24 '$', 0x2a '*' all travel escaped
    std::string x = "X" + addr(sp - 8) + ",4:";
    for (char ch : std::string("#}$*")) {
        x += '}';
        x += (char)(ch ^ 0x20);
    }
    EXPECT_EQ(c.cmd(x), "OK");
    EXPECT_EQ(c.cmd("m" + addr(sp - 8) + ",4"), "237d242a");
    EXPECT_EQ(c.cmd("X" + addr(sp - 8) + ",0:"), "OK"); // gdb's probe for X support

    // malformed packets get errors
    EXPECT_EQ(c.cmd("mzz,4"), "E01");
    EXPECT_EQ(c.cmd("m1000"), "E01");
    EXPECT_EQ(c.cmd("m11111111111111111,1"), "E01"); // 17 digits
    EXPECT_EQ(c.cmd("M1000,2:zz"), "E01");
    EXPECT_EQ(c.cmd("M" + addr(sp - 16) + ",2:00"), "E01"); // short data
    EXPECT_EQ(c.cmd("M" + addr(sp - 16) + ",ffffffffffff:00"), "E01");
    EXPECT_EQ(c.cmd("X" + addr(sp - 16) + ",2:}"), "E01"); // dangling escape
    EXPECT_EQ(c.cmd("p999"), "E01");
    EXPECT_EQ(c.cmd("p"), "E01");
    EXPECT_EQ(c.cmd("P0=12"), "E01");
    EXPECT_EQ(c.cmd("P" + addr(R_CS) + "=" + hex(std::string("\x10\0\0\0", 4).data(), 4)),
              "E01"); // selectors are read-only
    EXPECT_EQ(c.cmd("G00"), "E01");
    EXPECT_EQ(c.cmd("Z0,zz,1"), "E01");
    EXPECT_EQ(c.cmd("Z0"), "E01");
    EXPECT_EQ(c.cmd("Z2,1000,4"), ""); // watchpoints: unsupported
    EXPECT_EQ(c.cmd("C"), "E01");
    EXPECT_EQ(c.cmd("vCont;x"), "E01");
    EXPECT_EQ(c.cmd("qXfer:features:read:other.xml:0,10"), "E00");
    EXPECT_EQ(c.cmd("qXfer:features:read:target.xml:ffffff,10"), "E01");
    EXPECT_EQ(c.cmd("Jnonsense"), "");
    EXPECT_EQ(c.cmd(""), "");
    // a packet longer than PacketSize
    EXPECT_EQ(c.cmd("m" + std::string(20000, '0')), "E01");
    // a bad checksum is nacked; noise between packets is skipped
    c.raw("$g#00");
    EXPECT_EQ(c.byte(), '-');
    c.raw("garbage+-\x03");
    EXPECT_EQ(c.cmd("?").substr(0, 3), "T05");

    // G writes back what g read; a changed selector is refused
    std::string regs = c.cmd("g");
    EXPECT_EQ(c.cmd("G" + regs), "OK");
    std::string bad = regs;
    bad[2 * 140] = '1'; // cs (after 16 GPRs, rip, eflags) 0x33 -> 0x10
    bad[2 * 140 + 1] = '0';
    EXPECT_EQ(c.cmd("G" + bad), "E01");

    // no-ack mode
    EXPECT_EQ(c.cmd("QStartNoAckMode"), "OK");
    c.ack = false;
    EXPECT_EQ(c.cmd("m" + addr(sp - 16) + ",4"), "deadbeef");

    // patch the code: mov edi, 42 -> mov edi, 9 (the decoded copy must go)
    EXPECT_EQ(c.cmd("M" + addr(s.entry + 6) + ",1:09"), "OK");
    EXPECT_EQ(c.cmd("c"), "W09");
    expect_exited(s, 9);
}

TEST(GdbStub, InterruptAndKill)
{
    START(s, "asm_exit42");
    // jmp $ at the entry: the guest spins until interrupted
    EXPECT_EQ(s.c.cmd("M" + addr(s.entry) + ",2:ebfe"), "OK");
    s.c.put("c");
    EXPECT_EQ(s.c.get(300), "<timeout>"); // still running
    s.c.raw("\x03");
    std::string stop = s.c.get();
    EXPECT_EQ(stop.substr(0, 3), "T02") << stop;
    EXPECT_EQ(s.reg(R_RIP), s.entry);
    // kill: no reply, the run stops with ES_STOP_BREAK
    s.c.put("k");
    EXPECT_EQ(s.join(), 0);
    EXPECT_EQ(s.m->stop, ES_STOP_BREAK);
    EXPECT_NE(strstr(s.m->message, "killed by gdb"), nullptr) << s.m->message;
}

TEST(GdbStub, HardwareBreakpointVContAndExit)
{
    START(s, "asm_exit42");
    s.c.cmd("qSupported:swbreak+;hwbreak+");
    EXPECT_EQ(s.c.cmd("vCont?"), "vCont;c;C;s;S");
    EXPECT_EQ(s.c.cmd("Z1," + addr(s.entry + 5) + ",1"), "OK");
    for (int i = 0; i < 3; i++)
        EXPECT_EQ(s.c.cmd("Z1," + addr(0x1000 + i) + ",1"), "OK");
    EXPECT_EQ(s.c.cmd("Z1,2000,1"), "E28"); // four debug registers
    std::string stop = s.c.cmd("vCont;c:1");
    EXPECT_NE(stop.find("hwbreak:"), std::string::npos) << stop;
    EXPECT_EQ(s.reg(R_RIP), s.entry + 5);
    EXPECT_EQ(s.c.cmd("vCont;s:1;c").substr(0, 3), "T05");
    EXPECT_EQ(s.reg(R_RIP), s.entry + 10);
    // the process exits: W with the status, and the stub lets gdb go
    EXPECT_EQ(s.c.cmd("vCont;c"), "W2a");
    expect_exited(s, 42);
}

TEST(GdbStub, FatalFaultIsASignalThenTheEnd)
{
    START(s, "asm_exit42");
    // mov rax, [0]: the guest kernel's #PF handler kills it with SIGSEGV
    EXPECT_EQ(s.c.cmd("M" + addr(s.entry) + ",8:488b042500000000"), "OK");
    EXPECT_EQ(s.c.cmd("c").substr(0, 3), "T0b");
    EXPECT_EQ(s.c.cmd("c"), "X0b");
    EXPECT_EQ(s.join(), 0);
    EXPECT_EQ(s.m->stop, ES_STOP_FAULT);
    EXPECT_EQ(s.m->signal, 11);
}

// The AVX feature: ymm0h..ymm15h, the upper halves of the YMM registers,
// numbered after every other register (so no earlier number moved), read
// after the guest's `vpcmpeqd ymm0, ymm0, ymm0` and written into the
// machine by P and G.
TEST(GdbStub, YmmUpperHalvesReadAndWritten)
{
    Session s;
    if (!exists(ES_YMM_GUEST))
        GTEST_SKIP() << "guest not built: " << ES_YMM_GUEST;
    ASSERT_TRUE(s.start(ES_YMM_GUEST));
    std::string doc = s.xml();
    EXPECT_NE(doc.find("<feature name=\"org.gnu.gdb.i386.avx\">"), std::string::npos);
    EXPECT_NE(doc.find("<reg name=\"ymm15h\" bitsize=\"128\" type=\"uint128\""),
              std::string::npos);
    int y0 = s.regnum("ymm0h");
    EXPECT_EQ(y0, s.regnum("cpl") + 1);
    EXPECT_EQ(s.regnum("ymm15h"), y0 + 15);
    auto p_cmd = [](char op, int n) {
        char b[16];
        snprintf(b, sizeof b, "%c%x", op, n);
        return std::string(b);
    };
    const std::string zeros(32, '0'), ones(32, 'f');
    EXPECT_EQ(s.c.cmd(p_cmd('p', y0)), zeros);
    EXPECT_EQ(s.c.cmd("s").substr(0, 3), "T05"); // vpcmpeqd ymm0, ymm0, ymm0
    EXPECT_EQ(s.c.cmd(p_cmd('p', y0)), ones);
    EXPECT_EQ(s.c.cmd(p_cmd('p', s.regnum("xmm0"))), ones);
    // the g packet ends with the 16 upper halves
    std::string g = s.c.cmd("g");
    ASSERT_GT(g.size(), 2u * 16 * 16);
    EXPECT_EQ(g.substr(g.size() - 2 * 16 * 16, 32), ones);
    // P writes one
    uint8_t v[16];
    for (int i = 0; i < 16; i++)
        v[i] = (uint8_t)(0x10 + i);
    EXPECT_EQ(s.c.cmd(p_cmd('P', y0 + 5) + "=" + hex(v, 16)), "OK");
    EXPECT_EQ(s.c.cmd(p_cmd('p', y0 + 5)), hex(v, 16));
    // G writes back what g read, ymm15h changed
    g = s.c.cmd("g");
    g.replace(g.size() - 32, 32, hex(v, 16));
    EXPECT_EQ(s.c.cmd("G" + g), "OK");
    EXPECT_EQ(s.c.cmd(p_cmd('p', y0 + 15)), hex(v, 16));
    EXPECT_EQ(s.c.cmd("D"), "OK");
    EXPECT_EQ(s.join(), 0);
    EXPECT_EQ(memcmp(s.m->ymmh[5].b, v, 16), 0);
    EXPECT_EQ(memcmp(s.m->ymmh[15].b, v, 16), 0);
    EXPECT_EQ(s.m->ymmh[0].q[0] & s.m->ymmh[0].q[1], ~0ull);
    EXPECT_EQ(es_run(s.m), ES_STOP_EXIT);
    EXPECT_EQ(s.m->exit_status, 0);
}

// An i386 program runs in compatibility mode under the same x86-64
// description: breakpoints on the kernel's compat entry points catch its
// first system call, at CPL 0 with the 64-bit kernel's CS.
TEST(GdbStub, CompatModeProcessIntoTheKernel)
{
    START(s, "i386_freestanding");
    uint64_t int80 = es_kernel_sym(s.m, "entry_INT80_compat");
    uint64_t sysenter = es_kernel_sym(s.m, "entry_SYSENTER_compat");
    ASSERT_NE(int80, 0u);
    ASSERT_NE(sysenter, 0u);
    EXPECT_EQ(s.reg(R_RIP), s.entry);
    EXPECT_EQ(s.reg(R_CS), 0x23u); // USER32_CS
    EXPECT_NE(s.c.cmd("qThreadExtraInfo,1"), ""); // "CPL 3, compatibility mode", hex
    EXPECT_EQ(s.c.cmd("Z0," + addr(int80) + ",1"), "OK");
    EXPECT_EQ(s.c.cmd("Z0," + addr(sysenter) + ",1"), "OK");
    EXPECT_EQ(s.c.cmd("c").substr(0, 3), "T05");
    uint64_t rip = s.reg(R_RIP);
    EXPECT_TRUE(rip == int80 || rip == sysenter) << std::hex << rip;
    EXPECT_EQ(s.reg(R_CS), 0x10u);
    EXPECT_EQ(s.reg(s.regnum("cpl")), 0u);
    EXPECT_EQ(s.c.cmd("z0," + addr(int80) + ",1"), "OK");
    EXPECT_EQ(s.c.cmd("z0," + addr(sysenter) + ",1"), "OK");
    EXPECT_EQ(s.c.cmd("D"), "OK");
    EXPECT_EQ(s.join(), 0);
    EXPECT_EQ(es_run(s.m), ES_STOP_EXIT);
}

// Garbage in every field: random packets built from the protocol's own
// letters, digits and separators (no resume or leave commands) each get an
// answer, and the stub still works afterwards.  Deterministic (fixed seed).
TEST(GdbStub, RandomPacketsNeverCrashTheStub)
{
    START(s, "asm_exit42");
    static const char first[] = "?gGpPmMXZzHTqQ!J";
    static const char body[] = "0123456789abcdefABCDEFxyz,:;=-+#$}*~qXfer:features:read:target.xml";
    uint64_t x = 0x9e3779b97f4a7c15ull;
    auto rnd = [&x](uint64_t n) {
        x ^= x << 13; // xorshift64
        x ^= x >> 7;
        x ^= x << 17;
        return x % n;
    };
    for (int i = 0; i < 3000; i++) {
        std::string p(1, first[rnd(sizeof first - 1)]);
        size_t len = rnd(i % 10 == 0 ? 300 : 40);
        for (size_t k = 0; k < len; k++)
            p += body[rnd(sizeof body - 1)];
        if (i % 97 == 0)
            p = "qXfer:features:read:target.xml:" + p;
        // '#' and '$' cannot travel unescaped in a packet
        for (char &ch : p)
            if (ch == '#' || ch == '$')
                ch = '0';
        std::string r = s.c.cmd(p);
        ASSERT_NE(r, "<eof>") << "after " << p;
        ASSERT_NE(r, "<timeout>") << "after " << p;
    }
    EXPECT_EQ(s.c.cmd("?").substr(0, 1), "T");
    EXPECT_EQ(s.c.cmd("D"), "OK");
    EXPECT_EQ(s.join(), 0);
}

TEST(GdbStub, ListenRejectsBadAddresses)
{
    int port;
    char err[200];
    EXPECT_EQ(es_gdb_listen("1234", &port, err, sizeof err), -1);
    EXPECT_NE(strstr(err, "HOST]:PORT"), nullptr) << err;
    EXPECT_EQ(es_gdb_listen(":99999", &port, err, sizeof err), -1);
    EXPECT_EQ(es_gdb_listen(":12ab", &port, err, sizeof err), -1);
    EXPECT_EQ(es_gdb_listen(":", &port, err, sizeof err), -1);
    EXPECT_EQ(es_gdb_listen("no.such.host.invalid:0", &port, err, sizeof err), -1);
    int fd = es_gdb_listen("127.0.0.1:0", &port, err, sizeof err);
    ASSERT_GE(fd, 0) << err;
    // the same port twice: a clear error, not a crash
    EXPECT_EQ(es_gdb_listen(("127.0.0.1:" + std::to_string(port)).c_str(), &port, err,
                            sizeof err),
              -1);
    close(fd);
}

// `entrysim run --gdb :0 PROG` as a user runs it: the port on stderr, the
// exit status of the guest after gdb lets it run.
TEST(GdbStub, CommandLine)
{
    std::string prog = guest("asm_exit42");
    if (!exists(prog))
        GTEST_SKIP() << "guest not built: " << prog;
    int errp[2];
    ASSERT_EQ(pipe(errp), 0);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        dup2(errp[1], 2);
        close(errp[0]);
        execl(ES_ENTRYSIM, ES_ENTRYSIM, "run", "--gdb", ":0", prog.c_str(), (char *)nullptr);
        _exit(127);
    }
    close(errp[1]);
    std::string err;
    char ch;
    while (err.find('\n') == std::string::npos && read(errp[0], &ch, 1) == 1)
        err += ch;
    const char *tag = "entrysim: gdb: listening on 127.0.0.1:";
    ASSERT_EQ(err.rfind(tag, 0), 0u) << err;
    int port = atoi(err.c_str() + strlen(tag));
    Client c;
    ASSERT_TRUE(c.connect_to(port));
    EXPECT_EQ(c.cmd("?").substr(0, 3), "T05");
    EXPECT_EQ(c.cmd("c"), "W2a");
    c.hangup();
    int st = 0;
    ASSERT_EQ(waitpid(pid, &st, 0), pid);
    close(errp[0]);
    ASSERT_TRUE(WIFEXITED(st));
    EXPECT_EQ(WEXITSTATUS(st), 42);
}

} // namespace
