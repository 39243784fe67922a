// kernel_util.h - what the guest-kernel test files share: a hand-built kernel
// image, a machine around it, a minimal user ELF, a process under the kernel,
// the built guest programs.  (Split from test_kernel.cc.)
#ifndef ENTRYSIM_TESTS_KERNEL_UTIL_H
#define ENTRYSIM_TESTS_KERNEL_UTIL_H

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

#include "build_path.h"
#include "es_boot.h"
#include "host.h"
#include "kernel.h"
#include "loader.h"
#include "machine.h"
#include "mem.h"
#include "vm.h"

namespace {

inline void put(std::vector<uint8_t> &b, size_t at, uint64_t v, int n)
{
    if (b.size() < at + n)
        b.resize(at + n);
    for (int i = 0; i < n; i++)
        b[at + i] = (uint8_t)(v >> (8 * i));
}

constexpr uint64_t KT = 0xffffffff81000000ull; // text: 2 pages, R+X
constexpr uint64_t KD = 0xffffffff81200000ull; // data: 2 pages file + 2 bss, R+W
constexpr uint64_t KSTACK_TOP = KD + 0x4000;

struct Sym {
    const char *name;
    uint64_t value, size;
    int type, bind, shndx;
};

// ELF64 ET_EXEC: text at file 0x1000, data at 0x3000, then symtab, strtab
// and section headers.  The text starts with `startup` (the code run at
// startup_64) and has vsyscall_page at its second page (0x0f 0x05 0xc3
// pattern); the data holds es_boot_info and vdso32_image.
inline std::vector<uint8_t> fake_kernel(unsigned patches, const std::vector<uint8_t> &startup = {0xf4})
{
    std::vector<uint8_t> b(0x5000, 0);
    memcpy(b.data(), "\177ELF", 4);
    b[4] = 2;
    b[5] = 1;
    b[6] = 1;
    put(b, 16, 2, 2);    // ET_EXEC
    put(b, 18, 62, 2);   // EM_X86_64
    put(b, 20, 1, 4);
    put(b, 24, KT, 8);
    put(b, 32, 64, 8);   // phoff
    put(b, 52, 64, 2);
    put(b, 54, 56, 2);
    put(b, 56, 2, 2);
    put(b, 58, 64, 2);
    auto ph = [&](int i, uint32_t flags, uint64_t off, uint64_t va, uint64_t fsz, uint64_t msz) {
        size_t p = 64 + 56 * i;
        put(b, p, 1, 4);
        put(b, p + 4, flags, 4);
        put(b, p + 8, off, 8);
        put(b, p + 16, va, 8);
        put(b, p + 24, va, 8);
        put(b, p + 32, fsz, 8);
        put(b, p + 40, msz, 8);
        put(b, p + 48, 0x1000, 8);
    };
    ph(0, 5, 0x1000, KT, 0x2000, 0x2000);
    ph(1, 6, 0x3000, KD, 0x2000, 0x4000);
    for (size_t i = 0; i < startup.size(); i++)
        b[0x1000 + i] = startup[i];
    for (int i = 0; i < 0x1000; i++)
        b[0x2000 + i] = (uint8_t)"\x0f\x05\xc3"[i % 3];
    // es_boot_info: the kernel build's constants
    put(b, 0x3000 + offsetof(es_boot_info, boot_stack_top), KSTACK_TOP, 8);
    put(b, 0x3000 + offsetof(es_boot_info, patches), patches, 8);
    for (int i = 0; i < 0x1000; i++)
        b[0x4000 + i] = (uint8_t)(i * 13 + 1);

    const std::vector<Sym> syms = {
        {"startup_64", KT, 16, 2, 1, 1},
        {"startup_alias", KT, 0, 0, 1, 1},
        {"helper_local", KT + 0x10, 0x20, 2, 0, 1},
        {"vsyscall_page", KT + 0x1000, 0x1000, 1, 1, 1},
        {"es_boot_info", KD, sizeof(es_boot_info), 1, 1, 2},
        {"vdso32_image", KD + 0x1000, 0x1000, 1, 1, 2},
        {"boot_stack", KD + 0x2000, 0x2000, 1, 0, 2},
        {"dup", KT + 0x40, 4, 2, 0, 1},
        {"dup", KT + 0x50, 4, 2, 1, 1},
        {"an_absolute", 0x1234, 0, 0, 1, 0xfff1},
        {"an_undefined", 0, 0, 0, 1, 0},
        {"past_the_image", KD + 0x9000, 0, 0, 1, 2},
    };
    std::string strtab(1, '\0');
    size_t symoff = b.size();
    b.resize(symoff + 24 * (syms.size() + 1), 0);
    for (size_t i = 0; i < syms.size(); i++) {
        size_t p = symoff + 24 * (i + 1);
        put(b, p, strtab.size(), 4);
        strtab += syms[i].name;
        strtab += '\0';
        b[p + 4] = (uint8_t)(syms[i].bind << 4 | syms[i].type);
        put(b, p + 6, syms[i].shndx, 2);
        put(b, p + 8, syms[i].value, 8);
        put(b, p + 16, syms[i].size, 8);
    }
    size_t stroff = b.size();
    b.insert(b.end(), strtab.begin(), strtab.end());
    while (b.size() % 8)
        b.push_back(0);
    size_t shoff = b.size();
    b.resize(shoff + 3 * 64, 0);
    put(b, shoff + 64 + 4, 2, 4); // SHT_SYMTAB
    put(b, shoff + 64 + 24, symoff, 8);
    put(b, shoff + 64 + 32, 24 * (syms.size() + 1), 8);
    put(b, shoff + 64 + 40, 2, 4); // link: strtab
    put(b, shoff + 64 + 56, 24, 8);
    put(b, shoff + 128 + 4, 3, 4); // SHT_STRTAB
    put(b, shoff + 128 + 24, stroff, 8);
    put(b, shoff + 128 + 32, strtab.size(), 8);
    put(b, 40, shoff, 8);
    put(b, 60, 3, 2);
    return b;
}

inline uint64_t pte_of(es_machine *m, uint64_t va)
{
    uint64_t *p = es_pte(m, m->cr3, va, false);
    return p ? *p : 0;
}

struct Machine {
    es_machine *m;
    explicit Machine(uint64_t cap = 64ull << 20) : m(es_machine_new(cap)) {}
    ~Machine() { es_machine_free(m); }
};

// An ELF64 ET_EXEC with one RWX segment at 0x400000 (headers included),
// code at 0x400100 and a zeroed result area at 0x400800.
constexpr uint64_t UBASE = 0x400000, UCODE = 0x400100, URES = 0x400800;

inline std::vector<uint8_t> user_elf(const std::vector<uint8_t> &code)
{
    std::vector<uint8_t> b(0x1000, 0);
    memcpy(b.data(), "\177ELF", 4);
    b[4] = 2;
    b[5] = 1;
    b[6] = 1;
    put(b, 16, 2, 2);
    put(b, 18, 62, 2);
    put(b, 20, 1, 4);
    put(b, 24, UCODE, 8);
    put(b, 32, 64, 8);
    put(b, 52, 64, 2);
    put(b, 54, 56, 2);
    put(b, 56, 1, 2);
    put(b, 64, 1, 4);
    put(b, 68, 7, 4);
    put(b, 72, 0, 8);
    put(b, 80, UBASE, 8);
    put(b, 88, UBASE, 8);
    put(b, 96, 0x1000, 8);
    put(b, 104, 0x1000, 8);
    put(b, 112, 0x1000, 8);
    memcpy(&b[0x100], code.data(), code.size());
    return b;
}

struct Proc {
    es_machine *m = nullptr;
    FILE *out = nullptr;
    es_image img{};
    int vendor = -1; // -1: the machine's default; 0 Intel, 1 AMD
    Proc() = default;
    Proc(const Proc &) = delete;
    ~Proc()
    {
        if (m) {
            es_host_free(m);
            es_machine_free(m);
        }
        if (out)
            fclose(out);
    }
    // kernel: -1 = --direct, else the patch set (from the embedded image,
    // or `image` when given)
    bool start(const std::vector<uint8_t> &elf, int kernel, const std::vector<uint8_t> *image = nullptr)
    {
        m = es_machine_new(64ull << 20);
        out = tmpfile();
        if (!m || !out)
            return false;
        m->deterministic = true;
        if (vendor >= 0)
            m->vendor = (uint8_t)vendor;
        es_host_config cfg{};
        cfg.root = ".";
        cfg.deterministic = true;
        cfg.stdin_fd = -1;
        cfg.stdout_fd = fileno(out);
        cfg.stderr_fd = fileno(out);
        if (es_host_init(m, &cfg))
            return false;
        if (es_load_elf_mem(m, elf.data(), elf.size(), &img))
            return false;
        if (kernel >= 0) {
            int rc = image ? es_kernel_load_image(m, image->data(), image->size(), (unsigned)kernel)
                           : es_kernel_load(m, (unsigned)kernel);
            if (rc)
                return false;
            es_kernel_set_abi(m, img.abi);
        }
        char arg0[] = "prog";
        char *argv[] = {arg0, nullptr};
        char *envp[] = {nullptr};
        if (es_start_process(m, &img, 1, argv, envp))
            return false;
        if (kernel >= 0 && es_kernel_boot(m))
            return false;
        m->max_insns = 2000000;
        return true;
    }
    uint64_t res(int i)
    {
        uint64_t v = 0;
        es_copy_from_guest(m, &v, URES + 8 * i, 8);
        return v;
    }
    std::string output()
    {
        fflush(out);
        std::string s;
        rewind(out);
        int c;
        while ((c = fgetc(out)) != EOF)
            s += (char)c;
        return s;
    }
};

inline bool have_images()
{
    size_t n = 0;
    return es_kernel_image(ES_CONV_V417, &n) && n;
}

} // namespace

#endif
