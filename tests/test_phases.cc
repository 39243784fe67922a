// Phase tracker (sim/phases.h): tiny guest programs built here make a known
// number of system calls through each entry path (SYSCALL, INT 0x80, the
// vDSO's SYSENTER and compat SYSCALL sequences, x32, a vsyscall) and run
// through the guest kernel.  In instruction-count mode (no timing model,
// one cycle per instruction) the figures are exact and deterministic, so
// the tests check the accounting identities, that each phase the path has
// is reached, the number of calls, how the conventions differ, the JSON
// report and a golden text report.  With the cycle model (when it can be
// built) the same identities must hold.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include "exposure.h"
#include "kernel.h"
#include "launch.h"
#include "machine.h"
#include "mitigations.h"
#include "phases.h"
#include "timing.h"

namespace {

enum Kind { K64, K32, KX32 };

void put(std::vector<uint8_t> &b, size_t at, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        b[at + i] = (uint8_t)(v >> (8 * i));
}

// A one-segment static ELF (RWX) at 0x400000 whose entry is the code.
std::vector<uint8_t> make_elf(Kind k, const std::vector<uint8_t> &code)
{
    const uint64_t base = 0x400000;
    bool e64 = k == K64;
    size_t eh = e64 ? 64 : 52, ph = e64 ? 56 : 32, hdrs = eh + ph;
    std::vector<uint8_t> b(hdrs + code.size(), 0);
    memcpy(b.data(), "\x7f" "ELF", 4);
    b[4] = e64 ? 2 : 1; // class
    b[5] = 1;           // little endian
    b[6] = 1;           // version
    put(b, 16, 2, 2);   // ET_EXEC
    put(b, 18, k == K32 ? 3 : 62, 2); // EM_386 / EM_X86_64 (x32 = ELF32 + EM_X86_64)
    put(b, 20, 1, 4);
    if (e64) {
        put(b, 24, base + hdrs, 8); // e_entry
        put(b, 32, eh, 8);          // e_phoff
        put(b, 52, eh, 2);
        put(b, 54, ph, 2);
        put(b, 56, 1, 2);
        size_t p = eh;
        put(b, p + 0, 1, 4);              // PT_LOAD
        put(b, p + 4, 7, 4);              // RWX
        put(b, p + 16, base, 8);          // vaddr
        put(b, p + 24, base, 8);          // paddr
        put(b, p + 32, b.size(), 8);      // filesz
        put(b, p + 40, b.size() + 0x1000, 8); // memsz (a scratch page after the code)
        put(b, p + 48, 0x1000, 8);
    } else {
        put(b, 24, base + hdrs, 4);
        put(b, 28, eh, 4);
        put(b, 40, eh, 2);
        put(b, 42, ph, 2);
        put(b, 44, 1, 2);
        size_t p = eh;
        put(b, p + 0, 1, 4);
        put(b, p + 8, base, 4);
        put(b, p + 12, base, 4);
        put(b, p + 16, b.size(), 4);
        put(b, p + 20, b.size() + 0x1000, 4);
        put(b, p + 24, 7, 4);
        put(b, p + 28, 0x1000, 4);
    }
    memcpy(b.data() + hdrs, code.data(), code.size());
    return b;
}

void imm32(std::vector<uint8_t> &c, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        c.push_back((uint8_t)(v >> (8 * i)));
}

// x86-64: `n` times getpid (39) then, when lseek_too, `n` times
// lseek(999, 0, 0) (8: three arguments, -EBADF); exit_group(0).
// nrbit = __X32_SYSCALL_BIT for the x32 program.
std::vector<uint8_t> prog64(uint32_t n, bool lseek_too, uint32_t nrbit = 0)
{
    std::vector<uint8_t> c;
    auto loop = [&](uint32_t nr, bool args) {
        c.push_back(0xbb), imm32(c, n); // mov ebx, n
        size_t top = c.size();
        if (args) {
            c.push_back(0xbf), imm32(c, 999);             // mov edi, 999
            c.insert(c.end(), {0x31, 0xf6, 0x31, 0xd2}); // xor esi,esi; xor edx,edx
        }
        c.push_back(0xb8), imm32(c, nr | nrbit);     // mov eax, nr
        c.insert(c.end(), {0x0f, 0x05, 0xff, 0xcb}); // syscall; dec ebx
        c.push_back(0x75), c.push_back((uint8_t)(top - (c.size() + 1))); // jnz top
    };
    loop(39, false);
    if (lseek_too)
        loop(8, true);
    c.push_back(0xb8), imm32(c, 231 | nrbit);    // mov eax, exit_group
    c.insert(c.end(), {0x31, 0xff, 0x0f, 0x05}); // xor edi, edi; syscall
    return c;
}

// x86-64: `n` times fork (57); the child exits (60) with 7, the parent
// waits (wait4(-1, 0, 0, 0)); then exit_group(0).
std::vector<uint8_t> progfork(uint32_t n)
{
    std::vector<uint8_t> c;
    c.push_back(0xbb), imm32(c, n); // mov ebx, n
    size_t top = c.size();
    c.push_back(0xb8), imm32(c, 57);                   // mov eax, fork
    c.insert(c.end(), {0x0f, 0x05, 0x48, 0x85, 0xc0}); // syscall; test rax, rax
    c.insert(c.end(), {0x75, 12});                     // jnz parent
    c.push_back(0xbf), imm32(c, 7);                    // mov edi, 7
    c.push_back(0xb8), imm32(c, 60);                   // mov eax, exit
    c.insert(c.end(), {0x0f, 0x05});                   // syscall
    c.insert(c.end(), {0x48, 0xc7, 0xc7, 0xff, 0xff, 0xff, 0xff}); // parent: mov rdi, -1
    c.insert(c.end(), {0x31, 0xf6, 0x31, 0xd2, 0x45, 0x31, 0xd2}); // xor esi, edx, r10d
    c.push_back(0xb8), imm32(c, 61);                               // mov eax, wait4
    c.insert(c.end(), {0x0f, 0x05, 0xff, 0xcb});                   // syscall; dec ebx
    c.push_back(0x75), c.push_back((uint8_t)(top - (c.size() + 1))); // jnz top
    c.push_back(0xb8), imm32(c, 231);            // mov eax, exit_group
    c.insert(c.end(), {0x31, 0xff, 0x0f, 0x05}); // xor edi, edi; syscall
    return c;
}

// i386: `n` times getpid (20) by `how` ("int80", "sysenter", "syscall"),
// then exit_group(0) by INT 0x80.  The fast entries go through a local copy
// of the vDSO's __kernel_vsyscall sequence, which the kernel returns from
// at the real vDSO's landing pad (pop ebp, edx, ecx; ret).
std::vector<uint8_t> prog32(uint32_t n, const std::string &how)
{
    std::vector<uint8_t> c;
    c.push_back(0xbe), imm32(c, n); // mov esi, n
    size_t top = c.size();
    c.push_back(0xb8), imm32(c, 20); // mov eax, getpid
    size_t call_at = 0;
    if (how == "int80") {
        c.insert(c.end(), {0xcd, 0x80});
    } else {
        call_at = c.size();
        c.push_back(0xe8), imm32(c, 0); // call vsyscall (patched below)
    }
    c.push_back(0x4e);                                               // dec esi
    c.push_back(0x75), c.push_back((uint8_t)(top - (c.size() + 1))); // jnz top
    c.push_back(0xb8), imm32(c, 252);                                // mov eax, exit_group
    c.insert(c.end(), {0x31, 0xdb, 0xcd, 0x80});                    // xor ebx,ebx; int 0x80
    if (how != "int80") {
        uint32_t rel = (uint32_t)(c.size() - (call_at + 5));
        for (int i = 0; i < 4; i++)
            c[call_at + 1 + i] = (uint8_t)(rel >> (8 * i));
        c.insert(c.end(), {0x51, 0x52, 0x55}); // push ecx; push edx; push ebp
        if (how == "sysenter")
            c.insert(c.end(), {0x89, 0xe5, 0x0f, 0x34}); // mov ebp, esp; sysenter
        else
            c.insert(c.end(), {0x89, 0xcd, 0x0f, 0x05}); // mov ebp, ecx; syscall
    }
    return c;
}

// x86-64: `n` calls of the vsyscall time(NULL), then exit_group(0).
std::vector<uint8_t> prog_vsyscall(uint32_t n)
{
    std::vector<uint8_t> c;
    c.push_back(0xbb), imm32(c, n);
    size_t top = c.size();
    c.insert(c.end(), {0x31, 0xff});                        // xor edi, edi
    c.insert(c.end(), {0x48, 0xb8});                        // mov rax, 0xffffffffff600400
    for (uint64_t v = 0xffffffffff600400ull, i = 0; i < 8; i++)
        c.push_back((uint8_t)(v >> (8 * i)));
    c.insert(c.end(), {0xff, 0xd0, 0xff, 0xcb}); // call rax; dec ebx
    c.push_back(0x75), c.push_back((uint8_t)(top - (c.size() + 1)));
    c.push_back(0xb8), imm32(c, 231);
    c.insert(c.end(), {0x31, 0xff, 0x0f, 0x05});
    return c;
}

struct Guest {
    es_machine *m = nullptr;
    es_timing *t = nullptr;
    es_phases *p = nullptr;
    std::string path;
    int stop = 0;
    ~Guest()
    {
        es_phases_free(p);
        es_timing_free(t);
        if (m)
            es_launch_free(m);
        if (!path.empty())
            unlink(path.c_str());
    }
};

// Runs the program through the guest kernel; uarch NULL = instruction count.
bool run(Guest &r, Kind k, const std::vector<uint8_t> &code, unsigned patches, int vendor,
         const char *uarch = nullptr, unsigned mit = ES_MIT_DEFAULT)
{
    size_t sz;
    if (!es_kernel_image(patches, &sz)) {
        ADD_FAILURE() << "no kernel image in this build";
        return false;
    }
    char tmpl[] = "/tmp/es_phases_XXXXXX";
    int fd = mkstemp(tmpl);
    if (fd < 0)
        return false;
    r.path = tmpl;
    auto elf = make_elf(k, code);
    bool ok = write(fd, elf.data(), elf.size()) == (ssize_t)elf.size();
    close(fd);
    chmod(tmpl, 0755);
    if (!ok)
        return false;
    char *argv[] = {tmpl, nullptr};
    es_launch_cfg c = {};
    c.program = tmpl;
    c.argc = 1;
    c.argv = argv;
    c.deterministic = true;
    c.vendor = vendor;
    c.patches = patches;
    c.mitigations = mit;
    c.max_insns = 5000000;
    c.stdin_fd = -1, c.stdout_fd = -1, c.stderr_fd = -1;
    char err[256] = "";
    if (es_launch(&c, &r.m, err, sizeof err) != ES_LAUNCH_OK) {
        ADD_FAILURE() << "launch: " << err;
        return false;
    }
    if (uarch) {
        r.t = es_timing_new(uarch, err, sizeof err);
        if (!r.t || es_timing_attach(r.t, r.m))
            return false;
    }
    r.p = es_phases_attach(r.m, r.t);
    if (!r.p) {
        ADD_FAILURE() << "es_phases_attach";
        return false;
    }
    r.stop = es_run(r.m);
    EXPECT_EQ(r.stop, ES_STOP_EXIT) << r.m->message;
    EXPECT_EQ(r.m->exit_status, 0);
    return true;
}

const es_phase_row *find(const es_phases *p, const char *entry, const char *name)
{
    for (size_t i = 0; i < es_phases_nrows(p); i++) {
        const es_phase_row *r = es_phases_row(p, i);
        if (!strcmp(es_ph_entry_name(r->entry), entry) && !strcmp(r->name, name))
            return r;
    }
    return nullptr;
}

// The identities every report must satisfy.
void check_sums(const es_phases *p, bool count_mode)
{
    es_phase_totals t;
    es_phases_totals(p, &t);
    EXPECT_EQ(t.user_cycles + t.kernel_cycles, t.cycles);
    if (count_mode) {
        EXPECT_EQ(t.cycles, t.insns);
    }
    uint64_t rows = 0, sys = 0;
    for (size_t i = 0; i < es_phases_nrows(p); i++) {
        const es_phase_row *r = es_phases_row(p, i);
        uint64_t s = 0;
        for (int k = 0; k < ES_PH_COUNT; k++)
            s += r->phase[k];
        EXPECT_EQ(s, r->cycles) << r->name;
        rows += r->cycles;
        if (r->entry != ES_PH_ENTRY_TRAP)
            sys += r->cycles;
    }
    EXPECT_EQ(rows + t.boot_cycles, t.kernel_cycles);
    EXPECT_EQ(sys, t.sys_cycles);
    uint64_t ph = 0;
    for (int k = 0; k < ES_PH_COUNT; k++)
        ph += t.sys_phase[k];
    EXPECT_EQ(ph, t.sys_cycles);
}

// A syscall that went in and came back: every phase reached; one cycle
// each for the entry and exit instructions in instruction-count mode.
void check_full(const es_phase_row *r, uint64_t n, bool count_mode)
{
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->count, n) << r->name;
    for (int k = 0; k < ES_PH_COUNT; k++)
        EXPECT_GT(r->phase[k], 0u) << r->name << " " << es_phase_name(k);
    if (count_mode) {
        EXPECT_EQ(r->phase[ES_PH_HW_ENTRY], n) << r->name;
        EXPECT_EQ(r->phase[ES_PH_HW_EXIT], n) << r->name;
        // every call takes the same path
        for (int k = 0; k < ES_PH_COUNT; k++)
            EXPECT_EQ(r->phase[k] % n, 0u) << r->name << " " << es_phase_name(k);
    }
}

TEST(Phases, Syscall64CountsAndSums)
{
    for (unsigned patches : {ES_CONV_V416, ES_CONV_V417, ES_PATCH_DFE64506 | ES_PATCH_6DC936F}) {
        Guest r;
        ASSERT_TRUE(run(r, K64, prog64(10, true), patches, 1));
        check_sums(r.p, true);
        check_full(find(r.p, "syscall64", "getpid"), 10, true);
        check_full(find(r.p, "syscall64", "lseek"), 10, true);
        const es_phase_row *ex = find(r.p, "syscall64", "exit_group");
        ASSERT_NE(ex, nullptr);
        EXPECT_EQ(ex->count, 1u);
        EXPECT_EQ(ex->phase[ES_PH_HW_EXIT], 0u); // never returns
        EXPECT_GT(ex->phase[ES_PH_BODY], 0u);
        es_phase_totals t;
        es_phases_totals(r.p, &t);
        EXPECT_EQ(t.sys_count, 21u);
        EXPECT_EQ(t.trap_count, 0u);
        EXPECT_GT(t.boot_cycles, 0u);
        EXPECT_GT(t.user_cycles, 0u);
        EXPECT_EQ(es_phases_nrows(r.p), 3u);
    }
}

// A forked child's first way to user mode is its own record: the switch
// that first runs it, ret_from_fork and its C half (the exit work), then
// IRET; no dispatcher, stub or body.  The parent's wait4 keeps its record
// across the switches (one entry per call), and the sums still hold.
TEST(Phases, ForkChildIsItsOwnPath)
{
    for (unsigned patches : {ES_CONV_V416, ES_CONV_V417}) {
        Guest r;
        ASSERT_TRUE(run(r, K64, progfork(3), patches, 1));
        check_sums(r.p, true);
        const es_phase_row *c = find(r.p, "child", "ret_from_fork");
        ASSERT_NE(c, nullptr);
        EXPECT_EQ(c->count, 3u);
        EXPECT_EQ(c->phase[ES_PH_HW_ENTRY], 0u);
        EXPECT_GT(c->phase[ES_PH_ENTRY_ASM], 0u);
        EXPECT_EQ(c->phase[ES_PH_DISPATCH] + c->phase[ES_PH_STUB] + c->phase[ES_PH_BODY], 0u);
        EXPECT_GT(c->phase[ES_PH_EXIT_PATH], 0u);
        EXPECT_EQ(c->phase[ES_PH_HW_EXIT], 3u); // one IRET each
        check_full(find(r.p, "syscall64", "fork"), 3, true);
        check_full(find(r.p, "syscall64", "wait4"), 3, true);
        const es_phase_row *ex = find(r.p, "syscall64", "exit");
        ASSERT_NE(ex, nullptr);
        EXPECT_EQ(ex->count, 3u);
        EXPECT_EQ(ex->phase[ES_PH_HW_EXIT], 0u);
    }
}

// v4.16: the dispatcher loads six registers from pt_regs and calls
// sys_lseek, whose stub (SyS_lseek) only narrows them; fa697140's
// dispatcher passes only regs and __x64_sys_lseek loads the three it
// needs from pt_regs.  getpid has nothing to decode in either.
TEST(Phases, ConventionsDifferInDispatchAndStub)
{
    Guest a, b;
    ASSERT_TRUE(run(a, K64, prog64(4, true), ES_CONV_V416, 1));
    ASSERT_TRUE(run(b, K64, prog64(4, true), ES_CONV_V417, 1));
    const es_phase_row *l6 = find(a.p, "syscall64", "lseek"), *l7 = find(b.p, "syscall64", "lseek");
    ASSERT_TRUE(l6 && l7);
    EXPECT_GT(l6->phase[ES_PH_DISPATCH], l7->phase[ES_PH_DISPATCH]);
    EXPECT_GT(l7->phase[ES_PH_STUB], l6->phase[ES_PH_STUB]);
    // entry code, body and hardware transitions do not depend on the stubs
    EXPECT_EQ(l6->phase[ES_PH_HW_ENTRY], l7->phase[ES_PH_HW_ENTRY]);
    EXPECT_EQ(l6->phase[ES_PH_HW_EXIT], l7->phase[ES_PH_HW_EXIT]);
}

TEST(Phases, Compat32Entries)
{
    struct C {
        const char *how, *entry;
        int vendor;
    } cases[] = {{"int80", "int80", 1}, {"sysenter", "sysenter32", 0}, {"syscall", "syscall32", 1}};
    for (const C &c : cases)
        for (unsigned patches : {ES_CONV_V416, ES_CONV_V417}) {
            SCOPED_TRACE(std::string(c.entry) + " patches " + std::to_string(patches));
            Guest r;
            ASSERT_TRUE(run(r, K32, prog32(6, c.how), patches, c.vendor));
            check_sums(r.p, true);
            check_full(find(r.p, c.entry, "getpid"), 6, true);
            const es_phase_row *ex = find(r.p, "int80", "exit_group");
            ASSERT_NE(ex, nullptr);
            EXPECT_EQ(ex->count, 1u);
        }
}

TEST(Phases, X32AndVsyscall)
{
    {
        Guest r;
        ASSERT_TRUE(run(r, KX32, prog64(5, false, 0x40000000u), ES_CONV_V417, 1));
        check_sums(r.p, true);
        check_full(find(r.p, "x32", "getpid"), 5, true);
    }
    for (unsigned patches : {ES_CONV_V416, ES_CONV_V417}) {
        Guest r;
        ASSERT_TRUE(run(r, K64, prog_vsyscall(3), patches, 1));
        check_sums(r.p, true);
        const es_phase_row *v = find(r.p, "vsyscall", "time");
        ASSERT_NE(v, nullptr);
        EXPECT_EQ(v->count, 3u);
        for (int k = 0; k < ES_PH_COUNT; k++)
            EXPECT_GT(v->phase[k], 0u) << es_phase_name(k);
        es_phase_totals t;
        es_phases_totals(r.p, &t);
        EXPECT_EQ(t.sys_count, 4u); // 3 vsyscalls + exit_group
    }
}

std::string capture(const std::function<void(FILE *)> &fn)
{
    char *buf = nullptr;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    fn(f);
    fclose(f);
    std::string s(buf, len);
    free(buf);
    return s;
}

std::string json_of(const Guest &r, const es_run_meta &meta)
{
    return capture([&](FILE *f) { es_phases_fprint_json(r.p, r.m, &meta, f); });
}

// Pulls the number after "key": at or after `from`.
double num_after(const std::string &s, const std::string &key, size_t from = 0)
{
    size_t at = s.find("\"" + key + "\":", from);
    if (at == std::string::npos)
        return -1;
    return strtod(s.c_str() + at + key.size() + 3, nullptr);
}

TEST(Phases, JsonReport)
{
    Guest r;
    ASSERT_TRUE(run(r, K64, prog64(7, false), ES_CONV_V417, 1));
    es_run_meta meta = {"prog \"q\"", "znver4", "v4.17", "nospec", "amd", 0, false};
    std::string j = json_of(r, meta);
    es_phase_totals t;
    es_phases_totals(r.p, &t);
    EXPECT_EQ(j.rfind("{\"entrysim\":\"0.1.0\",\"program\":\"prog \\\"q\\\"\"", 0), 0u) << j;
    EXPECT_NE(j.find("\"uarch\":\"none\""), std::string::npos); // no model attached
    EXPECT_NE(j.find("\"kernel\":\"v4.17\""), std::string::npos);
    EXPECT_EQ(num_after(j, "instructions"), (double)t.insns);
    EXPECT_EQ(num_after(j, "cycles"), (double)t.cycles);
    EXPECT_EQ(num_after(j, "user_cycles"), (double)t.user_cycles);
    EXPECT_EQ(num_after(j, "kernel_cycles"), (double)t.kernel_cycles);
    EXPECT_NEAR(num_after(j, "ipc"), 1.0, 1e-9);
    size_t sc = j.find("\"syscalls\":");
    EXPECT_EQ(num_after(j, "count", sc), 8.0);
    size_t g = j.find("{\"name\":\"getpid\",\"nr\":39,\"entry\":\"syscall64\"");
    ASSERT_NE(g, std::string::npos) << j;
    EXPECT_EQ(num_after(j, "count", g), 7.0);
    const es_phase_row *row = find(r.p, "syscall64", "getpid");
    EXPECT_EQ(num_after(j, "body", g), (double)row->phase[ES_PH_BODY]);
    EXPECT_NEAR(num_after(j, "cycles_per_call", g), row->cycles / 7.0, 1e-3);
    EXPECT_NE(j.find("\"stats\":null"), std::string::npos);
    // balanced braces and brackets, one object on one line
    int depth = 0;
    bool in = false;
    for (size_t i = 0; i < j.size(); i++) {
        char c = j[i];
        if (in) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in = false;
            continue;
        }
        if (c == '"')
            in = true;
        else if (c == '{' || c == '[')
            depth++;
        else if (c == '}' || c == ']') {
            EXPECT_GE(--depth, 0);
        }
    }
    EXPECT_EQ(depth, 0);
    EXPECT_EQ(j.back(), '\n');
    EXPECT_EQ(j.find('\n'), j.size() - 1);
    // unwritable path: -1, no crash
    EXPECT_EQ(es_phases_write_json(r.p, r.m, &meta, "/nonexistent-dir/x.json"), -1);
}

// Instruction-count report of 3 getpid + 2 lseek calls under v4.17,
// against tests/golden/phases_count_v417.txt (ES_UPDATE_GOLDEN=1 rewrites).
TEST(Phases, GoldenTextReport)
{
    Guest r;
    ASSERT_TRUE(run(r, K64, prog64(3, true), ES_CONV_V417, 1));
    es_run_meta meta = {"getpid3-lseek3", "znver4", "v4.17", "nospec", "amd", 0, false};
    std::string out = capture([&](FILE *f) { es_phases_print(r.p, r.m, &meta, f); });
    std::string path = std::string(__FILE__).substr(0, std::string(__FILE__).rfind('/')) +
                       "/golden/phases_count_v417.txt";
    if (getenv("ES_UPDATE_GOLDEN")) {
        std::ofstream(path) << out;
        GTEST_SKIP() << "golden rewritten";
    }
    std::ifstream in(path);
    ASSERT_TRUE(in.good()) << path;
    std::stringstream ss;
    ss << in.rdbuf();
    EXPECT_EQ(out, ss.str());
}

// With the cycle model: the same identities; the transitions costed from
// the privileged table make hw_entry/hw_exit more than one cycle.
TEST(Phases, WithTimingModel)
{
    char err[200] = "";
    es_timing *probe = es_timing_new("znver4", err, sizeof err);
    if (!probe)
        GTEST_SKIP() << "cycle model not available: " << err;
    es_timing_free(probe);
    for (const char *u : {"znver4", "skylake"}) {
        Guest r;
        ASSERT_TRUE(run(r, K64, prog64(20, true), ES_CONV_V417, 1, u));
        check_sums(r.p, false);
        const es_phase_row *g = find(r.p, "syscall64", "getpid");
        ASSERT_NE(g, nullptr);
        EXPECT_EQ(g->count, 20u);
        // cycles are charged at retirement: a one-instruction stub (a tail
        // jump) may retire in the same cycle as the dispatcher's call, so
        // only the phases with serialising or many instructions must be
        // nonzero on their own
        for (int k : {ES_PH_HW_ENTRY, ES_PH_ENTRY_ASM, ES_PH_BODY, ES_PH_EXIT_PATH, ES_PH_HW_EXIT})
            EXPECT_GT(g->phase[k], 0u) << u << " " << es_phase_name(k);
        EXPECT_GT(g->phase[ES_PH_DISPATCH] + g->phase[ES_PH_STUB], 0u) << u;
        EXPECT_GT(g->phase[ES_PH_HW_ENTRY], 20u) << u;
        EXPECT_GT(g->phase[ES_PH_HW_EXIT], 20u) << u;
        es_phase_totals t;
        es_phases_totals(r.p, &t);
        es_timing_stats s;
        es_timing_get_stats(r.t, &s);
        EXPECT_EQ(t.insns, s.insns) << u;
        EXPECT_EQ(t.cycles, es_timing_cycles(r.t)) << u;
    }
}

// `entrysim exposure --timing`: one call per case, run on to its return.
// In instruction-count mode getpid's phases must equal those of a call in
// a program's loop (the path does not depend on the register values).
TEST(Phases, ExposureTiming)
{
    struct C {
        int entry, vendor;
    } cases[] = {{ES_ENTRY_SYSCALL64, 1}, {ES_ENTRY_INT80, 1}, {ES_ENTRY_SYSENTER32, 0},
                 {ES_ENTRY_SYSCALL32, 1}, {ES_ENTRY_X32, 1}};
    es_exposure_opts o = {true, nullptr, ES_MIT_DEFAULT, nullptr, nullptr};
    for (const C &c : cases)
        for (unsigned patches : {ES_CONV_V416, ES_CONV_V417}) {
            SCOPED_TRACE(std::string(es_entry_name(c.entry)) + " " + std::to_string(patches));
            es_exposure e;
            ASSERT_EQ(es_exposure_run_opts(patches, c.entry, c.vendor, "getpid", &o, &e), 0)
                << e.error;
            EXPECT_TRUE(e.timed);
            EXPECT_TRUE(e.returned);
            uint64_t s = 0;
            for (int k = 0; k < ES_PH_COUNT; k++) {
                EXPECT_GT(e.phase[k], 0u) << es_phase_name(k);
                s += e.phase[k];
            }
            EXPECT_EQ(s, e.cycles);
            EXPECT_EQ(e.phase[ES_PH_HW_ENTRY], 1u);
            EXPECT_EQ(e.phase[ES_PH_HW_EXIT], 1u);
            if (c.entry == ES_ENTRY_SYSCALL64) {
                Guest r;
                ASSERT_TRUE(run(r, K64, prog64(2, false), patches, 1));
                const es_phase_row *g = find(r.p, "syscall64", "getpid");
                ASSERT_NE(g, nullptr);
                for (int k = 0; k < ES_PH_COUNT; k++)
                    EXPECT_EQ(e.phase[k] * 2, g->phase[k]) << es_phase_name(k);
            }
        }
    // exit never returns; the untimed run fills nothing
    es_exposure e;
    ASSERT_EQ(es_exposure_run_opts(ES_CONV_V417, ES_ENTRY_SYSCALL64, 1, "exit", &o, &e), 0);
    EXPECT_TRUE(e.timed);
    EXPECT_FALSE(e.returned);
    EXPECT_GT(e.phase[ES_PH_BODY], 0u);
    EXPECT_EQ(e.phase[ES_PH_HW_EXIT], 0u);
    ASSERT_EQ(es_exposure_run(ES_CONV_V417, ES_ENTRY_SYSCALL64, 1, "getpid", &e), 0);
    EXPECT_FALSE(e.timed);
    EXPECT_EQ(e.cycles, 0u);
}

// Mitigations change the entry code, not the boundaries: in
// instruction-count mode the retpoline thunk lands in dispatch, PTI's CR3
// switches in entry_asm and exit_path, IBRS's WRMSRs there too; stub and
// body are untouched.
TEST(Phases, MitigationsMoveOnlyTheirPhases)
{
    auto row = [](Guest &g, unsigned mit) {
        EXPECT_TRUE(run(g, K64, prog64(3, true), ES_CONV_V417, 1, nullptr, mit));
        check_sums(g.p, true);
        const es_phase_row *r = find(g.p, "syscall64", "lseek");
        EXPECT_NE(r, nullptr);
        return r;
    };
    Guest g0, gr, gp, gi;
    const es_phase_row *base = row(g0, ES_MIT_DEFAULT);
    const es_phase_row *ret = row(gr, ES_MIT_DEFAULT | ES_MIT_RETPOLINE);
    const es_phase_row *pti = row(gp, ES_MIT_DEFAULT | ES_MIT_PTI);
    const es_phase_row *ibrs = row(gi, ES_MIT_DEFAULT | ES_MIT_IBRS);
    ASSERT_TRUE(base && ret && pti && ibrs);
    for (const es_phase_row *r : {ret, pti, ibrs}) {
        check_full(r, 3, true);
        EXPECT_EQ(r->phase[ES_PH_STUB], base->phase[ES_PH_STUB]);
        EXPECT_EQ(r->phase[ES_PH_BODY], base->phase[ES_PH_BODY]);
        EXPECT_EQ(r->phase[ES_PH_HW_ENTRY], base->phase[ES_PH_HW_ENTRY]);
        EXPECT_EQ(r->phase[ES_PH_HW_EXIT], base->phase[ES_PH_HW_EXIT]);
    }
    EXPECT_GT(ret->phase[ES_PH_DISPATCH], base->phase[ES_PH_DISPATCH]);
    EXPECT_EQ(ret->phase[ES_PH_ENTRY_ASM], base->phase[ES_PH_ENTRY_ASM]);
    EXPECT_EQ(ret->phase[ES_PH_EXIT_PATH], base->phase[ES_PH_EXIT_PATH]);
    EXPECT_GT(pti->phase[ES_PH_ENTRY_ASM], base->phase[ES_PH_ENTRY_ASM]);
    EXPECT_GT(pti->phase[ES_PH_EXIT_PATH], base->phase[ES_PH_EXIT_PATH]);
    EXPECT_EQ(pti->phase[ES_PH_DISPATCH], base->phase[ES_PH_DISPATCH]);
    EXPECT_GT(ibrs->phase[ES_PH_ENTRY_ASM], base->phase[ES_PH_ENTRY_ASM]);
    EXPECT_EQ(ibrs->phase[ES_PH_DISPATCH], base->phase[ES_PH_DISPATCH]);
}

} // namespace
