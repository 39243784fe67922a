// Loader tests: ELF validation on in-memory images, segment mapping and
// protections, static-pie bias, the initial stack (argv, envp, auxv) and
// registers read back from guest memory.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "demo.h"
#include "elf_util.h"
#include "host.h"
#include "launch.h"
#include "loader.h"
#include "machine.h"
#include "mem.h"
#include "seg.h"
#include "vm.h"

#include <csignal>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

struct Loader : LoaderBase {
    // Expects a clean rejection: -1 and a one-line message with `part`.
    void rejects(const std::vector<uint8_t> &b, const char *part)
    {
        // the same machine for every case: creating one costs ~0.2 s
        // under ASan, and a rejection must not depend on a fresh machine
        m->message[0] = 0;
        EXPECT_EQ(es_load_elf_mem(m, b.data(), b.size(), &img), -1) << part;
        EXPECT_NE(strstr(m->message, part), nullptr) << "message: " << m->message;
        EXPECT_EQ(strchr(m->message, '\n'), nullptr);
    }
};

TEST_F(Loader, ExecMapsSegmentsWithTheirProtection)
{
    auto b = exec64();
    ASSERT_EQ(load(b), 0) << m->message;
    EXPECT_EQ(img.abi, ES_ABI_X64);
    EXPECT_EQ(img.entry, 0x401100u);
    EXPECT_EQ(img.load_bias, 0u);
    EXPECT_EQ(img.phdr, 0x400040u); // the table inside the first segment
    EXPECT_EQ(img.phnum, 3u);
    EXPECT_EQ(img.phent, 56u);
    EXPECT_EQ(img.brk_start, 0x406000u); // page after 0x402010 + 0x3000
    EXPECT_EQ(img.stack_top, 0x7ffffffff000u);
    // file bytes in place: the segment's first page starts at file offset 0
    EXPECT_EQ(peek(0x400000, 4), 0x464c457fu);
    EXPECT_EQ(peek(0x401234, 1), (uint64_t)(uint8_t)(0x1234 * 7 + 3));
    EXPECT_EQ(peek(0x402010, 1), (uint64_t)(uint8_t)(0x2010 * 7 + 3));
    EXPECT_EQ(peek(0x40210f, 1), (uint64_t)(uint8_t)(0x210f * 7 + 3));
    // bss: zero from p_filesz on
    EXPECT_EQ(peek(0x402110, 8), 0u);
    EXPECT_EQ(peek(0x405008, 8), 0u);
    EXPECT_EQ(es_vm_prot_at(m, 0x400000), ES_PROT_R | ES_PROT_X);
    EXPECT_EQ(es_vm_prot_at(m, 0x402000), ES_PROT_R | ES_PROT_W);
    EXPECT_EQ(es_vm_prot_at(m, 0x406000), -1);
    // the stack: 8 MiB, not executable with PT_GNU_STACK RW
    EXPECT_EQ(es_vm_prot_at(m, 0x7fffffffefffu), ES_PROT_R | ES_PROT_W);
    EXPECT_EQ(es_vm_prot_at(m, 0x7ffffffff000u - (8 << 20)), ES_PROT_R | ES_PROT_W);
    EXPECT_EQ(es_vm_prot_at(m, 0x7ffffffff000u - (8 << 20) - 1), -1);
    // user code cannot write its text
    es_set_mode(m, 3, ES_MODE_64);
    uint64_t v = 0;
    EXPECT_EQ(es_write(m, 0x401000, &v, 8), -1);
    EXPECT_EQ(m->fault.vector, ES_VEC_PF);
}

TEST_F(Loader, StaticPieLoadsAtDynBase)
{
    auto b = exec64(3, 0);
    ASSERT_EQ(load(b), 0) << m->message;
    EXPECT_EQ(img.load_bias, 0x555555554000u);
    EXPECT_EQ(img.entry, 0x555555554000u + 0x1100);
    EXPECT_EQ(img.phdr, 0x555555554040u);
    EXPECT_EQ(peek(0x555555554000u, 4), 0x464c457fu);
    EXPECT_EQ(es_vm_prot_at(m, 0x555555556000u), ES_PROT_R | ES_PROT_W);
}

TEST_F(Loader, I386)
{
    auto b = elf(false, 3, 2, 0x8049000,
                 {{PT_LOAD, 5, 0, 0x8048000, 0x1800, 0x1800},
                  {PT_LOAD, 6, 0x1800, 0x804a800, 0x10, 0x100}},
                 0x1810);
    ASSERT_EQ(load(b), 0) << m->message;
    EXPECT_EQ(img.abi, ES_ABI_I386);
    EXPECT_EQ(img.phent, 32u);
    EXPECT_EQ(img.phdr, 0x8048034u);
    EXPECT_EQ(img.stack_top, 0xffffe000u);
    // no PT_GNU_STACK on a 32-bit program: READ_IMPLIES_EXEC, as Linux
    EXPECT_EQ(es_vm_prot_at(m, 0x804a800), ES_PROT_R | ES_PROT_W | ES_PROT_X);
    EXPECT_EQ(es_vm_prot_at(m, 0xffffdfff), ES_PROT_R | ES_PROT_W | ES_PROT_X);
    EXPECT_EQ(peek(0x804a800, 1), (uint64_t)(uint8_t)(0x1800 * 7 + 3));
}

TEST_F(Loader, I386StaticPie)
{
    auto b = elf(false, 3, 3, 0x100, {{PT_LOAD, 7, 0, 0, 0x200, 0x200}}, 0x200);
    ASSERT_EQ(load(b), 0) << m->message;
    EXPECT_EQ(img.load_bias, 0x56555000u);
    EXPECT_EQ(img.entry, 0x56555100u);
}

TEST_F(Loader, X32IsElf32WithX86_64Machine)
{
    auto b = elf(false, 62, 2, 0x401000, {{PT_LOAD, 5, 0, 0x400000, 0x1800, 0x1800}}, 0x1800);
    ASSERT_EQ(load(b), 0) << m->message;
    EXPECT_EQ(img.abi, ES_ABI_X32);
    EXPECT_EQ(img.stack_top, 0xffffe000u);
}

TEST_F(Loader, RejectsMalformedFiles)
{
    rejects({}, "empty");
    rejects({0x7f, 'E', 'L'}, "not an ELF");
    rejects(std::vector<uint8_t>(100, 0), "not an ELF");
    auto b = exec64();
    auto t = b;
    t.resize(40);
    rejects(t, "truncated ELF header");
    t = b;
    t[4] = 3;
    rejects(t, "class");
    t = b;
    t[5] = 2;
    rejects(t, "little-endian");
    t = b;
    put(t, 16, 1, 2);
    rejects(t, "relocatable");
    t = b;
    put(t, 16, 4, 2);
    rejects(t, "core");
    t = b;
    put(t, 18, 40, 2); // EM_ARM
    rejects(t, "unsupported machine");
    t = b;
    put(t, 54, 32, 2);
    rejects(t, "program header entry size");
    t = b;
    put(t, 56, 0, 2);
    rejects(t, "no program headers");
    t = b;
    put(t, 56, 0xffff, 2);
    rejects(t, "too many program headers");
    t = b;
    put(t, 56, 1000, 2); // within Linux's bound, but past the end of the file
    rejects(t, "outside the file");
    t = b;
    put(t, 32, 0x2100, 8);
    rejects(t, "outside the file");
    t = b;
    put(t, 32, 0xffffffffffffff00ull, 8); // phoff + size wraps
    rejects(t, "outside the file");
}

TEST_F(Loader, RejectsBadSegments)
{
    auto seg = [](Seg s) {
        return elf(true, 62, 2, 0x400100, {{PT_LOAD, 5, 0, 0x400000, 0x200, 0x200}, s}, 0x1000);
    };
    rejects(seg({PT_INTERP, 4, 0x200, 0, 0x1c, 0x1c}), "dynamically linked programs are not supported; link with -static");
    rejects(seg({PT_LOAD, 6, 0x200, 0x600200, 0x300, 0x100}), "file size exceeds memory size");
    rejects(seg({PT_LOAD, 6, 0x200, 0x600200, 0x2000, 0x2000}), "past the end of the file");
    rejects(seg({PT_LOAD, 6, 0xfffffffffffff200ull, 0x600200, 0x2000, 0x2000}), "past the end of the file");
    rejects(seg({PT_LOAD, 6, 0x200, 0x600300, 0x10, 0x10}), "modulo the page size");
    rejects(seg({PT_LOAD, 6, 0x200, 0xfffffffffffff200ull, 0x10, 0x1000}), "overflows");
    rejects(seg({PT_LOAD, 6, 0x200, 0xffff800000000200ull, 0x10, 0x10}), "outside the user address space");
    rejects(seg({PT_LOAD, 6, 0x200, 0x7ffffffff200ull, 0x10, 0x10}), "outside the user address space");
    rejects(seg({PT_LOAD, 6, 0x200, 0x200, 0x10, 0x10}), "outside the user address space"); // page 0
    rejects(elf(true, 62, 2, 0x400100, {{PT_GNU_STACK, 6, 0, 0, 0, 0}}, 0x100), "no loadable segments");
    rejects(elf(true, 62, 2, 0xffffffff81000000ull, {{PT_LOAD, 5, 0, 0x400000, 0x200, 0x200}}, 0x200),
            "entry point");
    // 32-bit: a segment that ends above the 4 GiB task size
    rejects(elf(false, 3, 2, 0x8048000, {{PT_LOAD, 5, 0, 0xfffff000u, 0x100, 0x2000}}, 0x100), "outside");
}

TEST_F(Loader, MutatedImagesNeverCrash)
{
    // deterministic mutations of a valid image: every outcome is a clean
    // load or a clean one-line rejection (ASan/UBSan builds check bounds)
    auto good = exec64();
    uint64_t s = 0x1234567;
    auto rnd = [&]() {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        return s;
    };
    int loaded = 0, rejected = 0;
    for (int it = 0; it < 300; it++) {
        auto b = good;
        int k = 1 + (int)(rnd() % 4);
        for (int j = 0; j < k; j++) {
            size_t at = rnd() % 0x120; // headers
            b[at] = (uint8_t)rnd();
        }
        if (rnd() % 8 == 0)
            b.resize(rnd() % b.size());
        if (it % 100 == 99) { // loads accumulate mappings: start afresh now and then
            es_machine_free(m);
            m = es_machine_new(64ull << 20);
        }
        m->message[0] = 0;
        int rc = es_load_elf_mem(m, b.data(), b.size(), &img);
        if (rc == 0) {
            loaded++;
        } else {
            ASSERT_EQ(rc, -1);
            ASSERT_NE(m->message[0], 0);
            rejected++;
        }
    }
    EXPECT_GT(loaded, 0);
    EXPECT_GT(rejected, 0);
}

TEST_F(Loader, InitialStackAndRegisters64)
{
    auto b = exec64();
    ASSERT_EQ(load(b), 0) << m->message;
    m->deterministic = true;
    char a0[] = "/bin/prog", a1[] = "one", a2[] = "two words";
    char e0[] = "HOME=/", e1[] = "X=1";
    char *argv[] = {a0, a1, a2, nullptr};
    char *envp[] = {e0, e1, nullptr};
    ASSERT_EQ(es_start_process(m, &img, 3, argv, envp), 0) << m->message;

    uint64_t sp = m->gpr[ES_RSP];
    EXPECT_EQ(sp % 16, 0u);
    EXPECT_GT(sp, 0x7ffffffff000u - (8 << 20));
    EXPECT_EQ(m->rip, 0x401100u);
    EXPECT_EQ(m->rflags, 0x202u);
    EXPECT_EQ(m->mode, ES_MODE_64);
    EXPECT_EQ(m->cpl, 3);
    EXPECT_EQ(m->seg[ES_SEG_CS].sel, 0x33);
    EXPECT_EQ(m->seg[ES_SEG_SS].sel, 0x2b);
    EXPECT_EQ(m->seg[ES_SEG_FS].sel, 0);
    for (int r = 0; r < 16; r++) {
        if (r != ES_RSP) {
            EXPECT_EQ(m->gpr[r], 0u) << "gpr " << r;
        }
    }

    EXPECT_EQ(peek(sp, 8), 3u); // argc
    EXPECT_EQ(str(peek(sp + 8, 8)), "/bin/prog");
    EXPECT_EQ(str(peek(sp + 16, 8)), "one");
    EXPECT_EQ(str(peek(sp + 24, 8)), "two words");
    EXPECT_EQ(peek(sp + 32, 8), 0u);
    EXPECT_EQ(str(peek(sp + 40, 8)), "HOME=/");
    EXPECT_EQ(str(peek(sp + 48, 8)), "X=1");
    EXPECT_EQ(peek(sp + 56, 8), 0u);
    // strings are laid out argv, envp, execfn upwards, as Linux does
    EXPECT_LT(peek(sp + 8, 8), peek(sp + 40, 8));

    std::vector<std::pair<uint64_t, uint64_t>> aux;
    for (uint64_t p = sp + 64;; p += 16) {
        uint64_t t = peek(p, 8), v = peek(p + 8, 8);
        aux.push_back({t, v});
        if (t == 0 || aux.size() > 64)
            break;
    }
    ASSERT_EQ(aux.back().first, 0u);
    auto get = [&](uint64_t tag) -> uint64_t {
        for (auto &e : aux)
            if (e.first == tag)
                return e.second;
        ADD_FAILURE() << "auxv lacks " << tag;
        return ~0ull;
    };
    EXPECT_EQ(get(6), 4096u);           // AT_PAGESZ
    EXPECT_EQ(get(3), 0x400040u);       // AT_PHDR
    EXPECT_EQ(get(4), 56u);             // AT_PHENT
    EXPECT_EQ(get(5), 3u);              // AT_PHNUM
    EXPECT_EQ(get(7), 0u);              // AT_BASE: no interpreter
    EXPECT_EQ(get(9), 0x401100u);       // AT_ENTRY
    EXPECT_EQ(get(17), 100u);           // AT_CLKTCK
    EXPECT_EQ(get(23), 0u);             // AT_SECURE
    EXPECT_EQ(get(26), 0u);             // AT_HWCAP2
    // AT_HWCAP: CPUID.1:EDX of the modelled CPU; at least FPU, CX8, CMOV,
    // FXSR, SSE, SSE2 (the x86-64 baseline)
    EXPECT_EQ(get(16) & 0x07008101, 0x07008101u);
    EXPECT_GT(get(51), 0u);             // AT_MINSIGSTKSZ
    EXPECT_EQ(str(get(15)), "x86_64");  // AT_PLATFORM
    EXPECT_EQ(str(get(31)), "/bin/prog"); // AT_EXECFN
    uint64_t r = get(25);               // AT_RANDOM: 16 bytes
    uint64_t r0 = peek(r, 8), r1 = peek(r + 8, 8);
    EXPECT_TRUE(r0 || r1);

    // deterministic mode: the same random bytes on another machine
    es_machine *m2 = es_machine_new(64ull << 20);
    m2->deterministic = true;
    es_image img2;
    ASSERT_EQ(es_load_elf_mem(m2, b.data(), b.size(), &img2), 0);
    ASSERT_EQ(es_start_process(m2, &img2, 3, argv, envp), 0);
    EXPECT_EQ(m2->gpr[ES_RSP], sp);
    uint64_t q0 = 0;
    ASSERT_EQ(es_copy_from_guest(m2, &q0, r, 8), 0);
    EXPECT_EQ(q0, r0);
    es_machine_free(m2);
}

TEST_F(Loader, InitialStack32BitWords)
{
    auto b = elf(false, 3, 2, 0x8049000, {{PT_LOAD, 5, 0, 0x8048000, 0x1800, 0x1800}}, 0x1800);
    ASSERT_EQ(load(b), 0) << m->message;
    char a0[] = "p32";
    char *argv[] = {a0, nullptr};
    char *envp[] = {nullptr};
    ASSERT_EQ(es_start_process(m, &img, 1, argv, envp), 0) << m->message;
    EXPECT_EQ(m->mode, ES_MODE_32);
    EXPECT_EQ(m->seg[ES_SEG_CS].sel, 0x23);
    EXPECT_EQ(m->seg[ES_SEG_DS].sel, 0x2b);
    uint64_t sp = m->gpr[ES_RSP];
    EXPECT_LT(sp, 0xffffe000u);
    EXPECT_EQ(sp % 16, 0u);
    EXPECT_EQ(peek(sp, 4), 1u);
    EXPECT_EQ(str(peek(sp + 4, 4)), "p32");
    EXPECT_EQ(peek(sp + 8, 4), 0u);  // argv end
    EXPECT_EQ(peek(sp + 12, 4), 0u); // envp end
    bool saw_platform = false;
    for (uint64_t p = sp + 16; p < sp + 16 + 8 * 40; p += 8) {
        uint32_t t = (uint32_t)peek(p, 4), v = (uint32_t)peek(p + 4, 4);
        if (t == 0)
            break;
        if (t == 15) {
            EXPECT_EQ(str(v), "i686");
            saw_platform = true;
        }
        if (t == 9) {
            EXPECT_EQ(v, 0x8049000u);
        }
    }
    EXPECT_TRUE(saw_platform);
}

TEST_F(Loader, DemoImageLoads)
{
    uint8_t buf[1024];
    size_t n = es_demo_elf(buf, sizeof buf);
    ASSERT_GT(n, 0u);
    ASSERT_EQ(es_load_elf_mem(m, buf, n, &img), 0) << m->message;
    EXPECT_EQ(img.entry, 0x400078u);
    // the first instruction: b8 01 00 00 00   mov eax, 1
    EXPECT_EQ(peek(0x400078, 1), 0xb8u);
    EXPECT_EQ(es_demo_elf(buf, 16), 0u);
}

TEST_F(Loader, DemoRunsToCompletion)
{
    // the whole path: load, initial stack, run, host write/exit_group;
    // guest stdout goes to a temporary file
    FILE *out = tmpfile();
    ASSERT_NE(out, nullptr);
    es_host_config cfg{};
    cfg.root = ".";
    cfg.deterministic = true;
    cfg.stdin_fd = 0;
    cfg.stdout_fd = fileno(out);
    cfg.stderr_fd = 2;
    ASSERT_EQ(es_host_init(m, &cfg), 0) << m->message;
    uint8_t buf[1024];
    size_t n = es_demo_elf(buf, sizeof buf);
    ASSERT_EQ(es_load_elf_mem(m, buf, n, &img), 0) << m->message;
    char a0[] = "demo";
    char *argv[] = {a0, nullptr};
    char *envp[] = {nullptr};
    ASSERT_EQ(es_start_process(m, &img, 1, argv, envp), 0) << m->message;
    EXPECT_EQ(es_host_brk(m), 0x401000u); // the page after the image
    m->max_insns = 50000000;
    EXPECT_EQ(es_run(m), ES_STOP_EXIT) << m->message;
    EXPECT_EQ(m->exit_status, 0);
    EXPECT_EQ(m->icount, 5000145u); // 5 per loop iteration, 1e6 iterations
    std::string got;
    rewind(out);
    char c[256];
    size_t k;
    while ((k = fread(c, 1, sizeof c, out)) > 0)
        got.append(c, k);
    fclose(out);
    EXPECT_EQ(got, es_demo_expected);
    es_host_free(m);
}

// ------------------------------------------- the stack's 8 MiB (issue 12)

TEST_F(Loader, SegmentsInTheStackAreRefused)
{
    // the stack is 8 MiB right below the top of user space; a segment there
    // was silently replaced by it
    const uint64_t top64 = 0x7ffffffff000ull, top32 = 0xffffe000ull, stack = 8ull << 20;
    auto seg64 = [](uint64_t va) {
        return elf(true, 62, 2, 0x400100,
                   {{PT_LOAD, 5, 0, 0x400000, 0x200, 0x200}, {PT_LOAD, 6, 0x200, va, 0x10, 0x10}},
                   0x1000);
    };
    rejects(seg64(top64 - 0x400000 + 0x200), "overlap the stack");
    rejects(seg64(top64 - stack + 0x200), "overlap the stack");
    rejects(elf(false, 3, 2, 0x8048100,
                {{PT_LOAD, 5, 0, 0x8048000, 0x200, 0x200},
                 {PT_LOAD, 6, 0x200, top32 - 0x1000 + 0x200, 0x10, 0x10}},
                0x1000),
            "overlap the stack");
    // a bss reaching into it counts too
    rejects(elf(false, 3, 2, 0x10100, {{PT_LOAD, 7, 0, 0x10000, 0x200, top32 - 0x10000}}, 0x200),
            "overlap the stack");
    // right below it is fine
    ASSERT_EQ(load(seg64(top64 - stack - 0x1000 + 0x200)), 0) << m->message;
    EXPECT_EQ(es_vm_prot_at(m, top64 - stack - 0x1000), ES_PROT_R | ES_PROT_W);
}

// ------------------------------ es_launch on files execve refuses (issue 12)

// A fresh temporary directory, removed with what it holds.
struct TmpDir {
    std::string dir;
    TmpDir()
    {
        char t[] = "/tmp/es_loader_XXXXXX";
        dir = mkdtemp(t) ? t : "";
    }
    ~TmpDir()
    {
        std::string c = "rm -rf '" + dir + "'";
        if (!dir.empty() && system(c.c_str()) != 0)
            perror("rm");
    }
    std::string write(const char *name, const std::vector<uint8_t> &b, mode_t mode) const
    {
        std::string p = dir + "/" + name;
        FILE *f = fopen(p.c_str(), "wb");
        EXPECT_NE(f, nullptr) << p;
        if (f) {
            EXPECT_EQ(fwrite(b.data(), 1, b.size(), f), b.size());
            fclose(f);
        }
        EXPECT_EQ(chmod(p.c_str(), mode), 0);
        return p;
    }
};

// es_launch of `prog` in a child process, so that a launch that blocks
// fails the test instead of hanging it: the launch code and its message,
// or -1 when it had not returned after 5 s.
int launch_in_child(const std::string &prog, bool direct, std::string *why)
{
    int p[2];
    if (pipe(p) != 0)
        return -2;
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        char *argv[] = {const_cast<char *>(prog.c_str()), nullptr};
        es_launch_cfg c = {};
        c.program = prog.c_str();
        c.argc = 1;
        c.argv = argv;
        c.deterministic = true;
        c.direct = direct;
        c.stdin_fd = -1, c.stdout_fd = -1, c.stderr_fd = -1;
        es_machine *m = nullptr;
        char err[512] = "";
        int rc = es_launch(&c, &m, err, sizeof err);
        if (write(p[1], err, strlen(err)) < 0)
            rc = 99;
        _exit(rc);
    }
    close(p[1]);
    int st = 0;
    for (int i = 0; i < 500; i++) {
        if (waitpid(pid, &st, WNOHANG) == pid) {
            char buf[512];
            ssize_t n = read(p[0], buf, sizeof buf);
            close(p[0]);
            why->assign(buf, n > 0 ? (size_t)n : 0);
            return WIFEXITED(st) ? WEXITSTATUS(st) : 200;
        }
        usleep(10000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    close(p[0]);
    *why = "still blocked after 5 s";
    return -1;
}

TEST(LoaderFiles, FifoIsRefusedAtOnce)
{
    // opening a FIFO for reading waited for a writer forever
    TmpDir t;
    std::string fifo = t.dir + "/fifo";
    ASSERT_EQ(mkfifo(fifo.c_str(), 0755), 0);
    std::string why;
    EXPECT_EQ(launch_in_child(fifo, true, &why), ES_LAUNCH_NOEXEC) << why;
    EXPECT_NE(why.find("not a regular file"), std::string::npos) << why;
}

TEST(LoaderFiles, NoExecutePermissionIsRefused)
{
    // execve needs execute permission (EACCES, a shell's 126 "Permission
    // denied"), also for root, who needs one execute bit
    TmpDir t;
    std::string prog = t.write("prog", exec64(), 0644), why;
    EXPECT_EQ(launch_in_child(prog, true, &why), ES_LAUNCH_NOEXEC) << why;
    EXPECT_NE(why.find("Permission denied"), std::string::npos) << why;
    ASSERT_EQ(chmod(prog.c_str(), 0755), 0);
    EXPECT_EQ(launch_in_child(prog, true, &why), ES_LAUNCH_OK) << why;
}

TEST(LoaderFiles, I386ImageWithNoRoomForTheVdsoIsNotLoadable)
{
    // an i386 image filling everything from 64 KiB up to the stack leaves
    // no page for the 32-bit vDSO: the program cannot be executed (126),
    // not a simulator failure (1)
    TmpDir t;
    const uint64_t below_stack = 0xffffe000ull - (8ull << 20);
    std::string prog =
        t.write("full", elf(false, 3, 2, 0x10100, {{PT_LOAD, 7, 0, 0x10000, 0x200, below_stack - 0x10000}}, 0x200),
                0755),
        why;
    EXPECT_EQ(launch_in_child(prog, false, &why), ES_LAUNCH_NOEXEC) << why;
    EXPECT_NE(why.find("no room below 4 GiB for the 32-bit vDSO"), std::string::npos) << why;
    EXPECT_EQ(why.find("guest kernel"), std::string::npos) << why;
    // without the kernel there is no vDSO to place
    EXPECT_EQ(launch_in_child(prog, true, &why), ES_LAUNCH_OK) << why;
}

} // namespace
