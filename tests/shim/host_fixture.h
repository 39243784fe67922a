// host_fixture.h - the HostTest fixture the host-services suites share
// (tests/test_host*.cc): a shim machine with host services over a
// temporary guest root, and helpers to call services and look at guest
// memory.  Each suite instantiates it (INSTANTIATE_TEST_SUITE_P) for the
// two path resolutions, openat2 and the component walk.
#ifndef ENTRYSIM_TEST_HOST_FIXTURE_H
#define ENTRYSIM_TEST_HOST_FIXTURE_H

#include <gtest/gtest.h>

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "es_shim.h"
#include "es_syscall_32.h"
#include "es_syscall_64.h"
#include "es_syscall_names.h"
#include "host.h"
#include "host_int.h"
#include "machine.h"
#include "mem.h"

namespace {

const uint64_t X32 = ES_X32_SYSCALL_BIT;

struct HostTest : ::testing::TestWithParam<bool> {
    es_machine *m = nullptr;
    std::string tmp, root;
    int out[2] = {-1, -1}; // the guest's stdout
    uint64_t strp = EST_DATA; // next free string slot

    void SetUp() override
    {
        char t[] = "/tmp/es_host_XXXXXX";
        ASSERT_NE(mkdtemp(t), nullptr);
        tmp = t;
        root = tmp + "/root";
        ASSERT_EQ(mkdir(root.c_str(), 0755), 0);
        ASSERT_EQ(mkdir((root + "/sub").c_str(), 0755), 0);
        write_file(root + "/hello.txt", "hello world\n");
        write_file(root + "/sub/inner.txt", "inner\n");
        write_file(tmp + "/secret.txt", "secret\n"); // outside the root
        ASSERT_EQ(symlink("sub/inner.txt", (root + "/link_in").c_str()), 0);
        ASSERT_EQ(symlink("/hello.txt", (root + "/abs_in").c_str()), 0);
        ASSERT_EQ(symlink("../secret.txt", (root + "/esc").c_str()), 0);
        ASSERT_EQ(symlink("../../../../secret.txt", (root + "/sub/esc2").c_str()), 0);
        ASSERT_EQ(symlink("..", (root + "/updir").c_str()), 0);
        ASSERT_EQ(symlink((tmp + "/secret.txt").c_str(), (root + "/hostabs").c_str()), 0);
        ASSERT_EQ(pipe(out), 0);
        m = est_new(ES_MODE_64);
        ASSERT_NE(m, nullptr);
        init(false);
    }

    int devnull = -1;

    void fuzz(bool rw);

    void init(bool rw, bool det = true, bool std02 = true)
    {
        es_host_config cfg = {};
        cfg.root = root.c_str();
        cfg.rw = rw;
        cfg.deterministic = det;
        if (devnull < 0)
            devnull = open("/dev/null", O_RDONLY);
        cfg.stdin_fd = std02 ? devnull : -1;
        cfg.stdout_fd = out[1];
        cfg.stderr_fd = std02 ? out[1] : -1;
        cfg.exe = "/bin/prog";
        m->deterministic = det;
        ASSERT_EQ(es_host_init(m, &cfg), 0) << m->message;
        m->host->use_openat2 = m->host->use_openat2 && GetParam();
    }

    void TearDown() override
    {
        if (m) {
            es_host_free(m);
            es_machine_free(m);
        }
        close(out[0]);
        close(out[1]);
        close(devnull);
        std::string cmd = "chmod -R u+rwx '" + tmp + "' 2>/dev/null; rm -rf '" + tmp + "'";
        (void)!system(cmd.c_str());
    }

    static void write_file(const std::string &p, const char *s)
    {
        int fd = open(p.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
        ASSERT_GE(fd, 0);
        ASSERT_EQ(write(fd, s, strlen(s)), (ssize_t)strlen(s));
        close(fd);
    }

    // A host file's contents ("<missing>" when it cannot be opened).
    static std::string read_file(const std::string &p)
    {
        int fd = open(p.c_str(), O_RDONLY);
        if (fd < 0)
            return "<missing>";
        std::string s;
        char b[4096];
        for (ssize_t n; (n = read(fd, b, sizeof b)) > 0;)
            s.append(b, (size_t)n);
        close(fd);
        return s;
    }

    int64_t call(int abi, uint64_t nr, uint64_t a0 = 0, uint64_t a1 = 0, uint64_t a2 = 0,
                 uint64_t a3 = 0, uint64_t a4 = 0, uint64_t a5 = 0)
    {
        uint64_t a[6] = {a0, a1, a2, a3, a4, a5};
        return es_host_call(m, abi, nr, a);
    }
    int64_t c64(uint64_t nr, uint64_t a0 = 0, uint64_t a1 = 0, uint64_t a2 = 0, uint64_t a3 = 0,
                uint64_t a4 = 0, uint64_t a5 = 0)
    {
        return call(ES_ABI_X64, nr, a0, a1, a2, a3, a4, a5);
    }
    int64_t c32(uint64_t nr, uint64_t a0 = 0, uint64_t a1 = 0, uint64_t a2 = 0, uint64_t a3 = 0,
                uint64_t a4 = 0, uint64_t a5 = 0)
    {
        return call(ES_ABI_I386, nr, a0, a1, a2, a3, a4, a5);
    }

    // A guest string in the first data page.
    uint64_t str(const char *s)
    {
        uint64_t va = strp;
        EXPECT_EQ(es_copy_to_guest(m, va, s, strlen(s) + 1), 0);
        strp += (strlen(s) + 16) & ~7ull;
        return va;
    }
    std::vector<uint8_t> peek(uint64_t va, size_t n)
    {
        std::vector<uint8_t> v(n);
        EXPECT_EQ(es_copy_from_guest(m, v.data(), va, n), 0);
        return v;
    }
    uint64_t u64(uint64_t va) { auto v = peek(va, 8); uint64_t x; memcpy(&x, v.data(), 8); return x; }
    uint32_t u32(uint64_t va) { auto v = peek(va, 4); uint32_t x; memcpy(&x, v.data(), 4); return x; }
    int64_t open_ro(const char *p) { return c64(ES_NR64_open, str(p), O_RDONLY); }
};

const uint64_t BUF = EST_DATA + 0x4000; // 48 KiB of scratch after the strings

} // namespace

#endif
