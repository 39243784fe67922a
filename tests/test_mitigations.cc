// Mitigation toggles (sim/mitigations.h, kernel_model/include/alternative.h):
// the --mitigations list, the bytes es_kernel_set_mitigations patches into
// each alternative site, and runs of a real guest (kernel_model/tests/
// mitig64.c) through the kernel under every combination: same output and
// exit status, CR3 switching and user-PGD isolation under pti, WRMSR
// IA32_SPEC_CTRL under ibrs, the retpoline's CALL/RET under retpoline.  Also
// the CPU side: MSRs 0x48/0x49 and CR4.PCIDE / CR3 bit 63.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

#include "build_path.h"
#include "guest_cpuid.h"
#include "es_boot.h"
#include "decoder.h"
#include "es_shim.h"
#include "kernel.h"
#include "launch.h"
#include "machine.h"
#include "mem.h"
#include "mitigations.h"
#include "pti.h"
#include "seg.h"

namespace {

// ------------------------------------------------------------ the list

unsigned parse_ok(const char *s)
{
    unsigned out = 0xdead;
    char err[256] = "";
    EXPECT_EQ(es_mitigations_parse(s, &out, err, sizeof err), 0) << s << ": " << err;
    return out;
}

std::string parse_err(const char *s)
{
    unsigned out = 0xdead;
    char err[256] = "";
    EXPECT_EQ(es_mitigations_parse(s, &out, err, sizeof err), -1) << s;
    EXPECT_EQ(out, 0xdeadu) << "output written on error for " << s;
    EXPECT_NE(err[0], 0) << "no message for " << s;
    return err;
}

std::string name(unsigned mit)
{
    char b[64];
    es_mitigations_name(mit, b, sizeof b);
    return b;
}

TEST(MitigationList, AppliedToTheDefault)
{
    EXPECT_EQ(parse_ok(""), (unsigned)ES_MIT_DEFAULT);
    EXPECT_EQ(parse_ok("nospec"), (unsigned)ES_MIT_NOSPEC);
    EXPECT_EQ(parse_ok("pti"), ES_MIT_PTI | ES_MIT_NOSPEC);
    EXPECT_EQ(parse_ok("retpoline"), ES_MIT_RETPOLINE | ES_MIT_NOSPEC);
    EXPECT_EQ(parse_ok("ibrs"), ES_MIT_IBRS | ES_MIT_NOSPEC);
    EXPECT_EQ(parse_ok("no-nospec"), 0u);
    EXPECT_EQ(parse_ok("none"), 0u);
    EXPECT_EQ(parse_ok("none,pti"), (unsigned)ES_MIT_PTI);
    EXPECT_EQ(parse_ok("all"), (unsigned)ES_MIT_ALL);
    EXPECT_EQ(parse_ok("all,no-ibrs"), ES_MIT_ALL & ~ES_MIT_IBRS);
    EXPECT_EQ(parse_ok("pti,none"), 0u) << "left to right";
    EXPECT_EQ(parse_ok(" pti , retpoline "), ES_MIT_PTI | ES_MIT_RETPOLINE | ES_MIT_NOSPEC);
    EXPECT_EQ(parse_ok("pti,pti"), ES_MIT_PTI | ES_MIT_NOSPEC);
    EXPECT_EQ(parse_ok("no-pti"), (unsigned)ES_MIT_DEFAULT);
}

TEST(MitigationList, Errors)
{
    EXPECT_NE(parse_err("kpti").find("unknown mitigation 'kpti'"), std::string::npos);
    EXPECT_NE(parse_err("pti,spectre").find("'spectre'"), std::string::npos);
    EXPECT_NE(parse_err("no-foo").find("unknown"), std::string::npos);
    EXPECT_NE(parse_err("no-").find("unknown"), std::string::npos);
    EXPECT_NE(parse_err("no-all").find("unknown"), std::string::npos);
    EXPECT_NE(parse_err("PTI").find("unknown"), std::string::npos) << "names are lower case";
    EXPECT_NE(parse_err("pti,,retpoline").find("empty item"), std::string::npos);
    EXPECT_NE(parse_err("pti,").find("empty item"), std::string::npos);
    EXPECT_NE(parse_err(",pti").find("empty item"), std::string::npos);
    EXPECT_NE(parse_err(" , ").find("empty item"), std::string::npos);
}

TEST(MitigationList, Names)
{
    EXPECT_EQ(name(0), "none");
    EXPECT_EQ(name(ES_MIT_ALL), "pti,retpoline,ibrs,nospec");
    EXPECT_EQ(name(ES_MIT_NOSPEC | ES_MIT_PTI), "pti,nospec");
    EXPECT_EQ(name(ES_MIT_IBRS | ES_MIT_RETPOLINE), "retpoline,ibrs");
    // every set survives a round trip through its name
    for (unsigned s = 0; s <= ES_MIT_ALL; s++)
        EXPECT_EQ(parse_ok(("none," + name(s)).c_str()), s) << name(s);
    char small[5];
    es_mitigations_name(ES_MIT_ALL, small, sizeof small);
    EXPECT_EQ(strlen(small), 4u) << "truncated, terminated";
}

// ------------------------------------------------------ the patched sites

bool have_images()
{
    size_t n = 0;
    return es_kernel_image(ES_CONV_V417, &n) && n;
}

// A machine with only the kernel image loaded and `mit` applied.
struct Image {
    es_machine *m = nullptr;
    Image(unsigned patches, unsigned mit)
    {
        m = es_machine_new(64ull << 20);
        if (!m || es_kernel_load(m, patches) || es_kernel_set_mitigations(m, mit))
            ADD_FAILURE() << (m ? m->message : "no machine");
    }
    ~Image() { es_machine_free(m); }
    Image(const Image &) = delete;
    // Intel-syntax listing of a sized symbol
    std::vector<std::string> listing(const char *sym)
    {
        uint64_t a = 0, size = 0;
        std::vector<std::string> out;
        if (!es_kernel_sym_size(m, sym, &a, &size) || !size) {
            ADD_FAILURE() << sym << " missing or unsized";
            return out;
        }
        std::vector<uint8_t> b(size);
        EXPECT_EQ(es_kernel_read(m, a, b.data(), size), 0);
        for (size_t off = 0; off < size;) {
            char text[128];
            size_t n = es_format(&b[off], size - off, ES_MODE_64, a + off, ES_SYNTAX_INTEL, text,
                                 sizeof text);
            if (!n) {
                ADD_FAILURE() << sym << "+" << off << ": " << text;
                break;
            }
            out.push_back(text);
            off += n;
        }
        return out;
    }
};

bool starts(const std::string &s, const char *p) { return s.rfind(p, 0) == 0; }

size_t find_insn(const std::vector<std::string> &l, const char *prefix, size_t from = 0)
{
    for (size_t i = from; i < l.size(); i++)
        if (starts(l[i], prefix))
            return i;
    return l.size();
}

size_t count_insn(const std::vector<std::string> &l, const char *prefix)
{
    size_t n = 0;
    for (const auto &s : l)
        n += starts(s, prefix);
    return n;
}

TEST(MitigationSites, RetpolineThunk)
{
    if (!have_images())
        GTEST_SKIP() << "entrysim was built without kernel_model/";
    for (unsigned patches : {0u, 15u}) {
        Image off(patches, 0), on(patches, ES_MIT_RETPOLINE);
        auto l = off.listing("__x86_indirect_thunk_rax");
        ASSERT_GE(l.size(), 2u);
        EXPECT_EQ(l[0], "jmp rax");
        // the assembler's 0x90 padding became long NOPs: 15 bytes, 2 NOPs
        for (size_t i = 1; i < l.size(); i++)
            EXPECT_TRUE(starts(l[i], "nop")) << l[i];
        EXPECT_LE(l.size(), 4u) << "padding left as single-byte NOPs";
        l = on.listing("__x86_indirect_thunk_rax");
        ASSERT_GE(l.size(), 6u);
        EXPECT_TRUE(starts(l[0], "call ")) << l[0];
        EXPECT_EQ(l[1], "pause");
        EXPECT_EQ(l[2], "lfence");
        EXPECT_TRUE(starts(l[3], "jmp ")) << l[3];
        EXPECT_EQ(l[4], "mov [rsp], rax");
        EXPECT_EQ(l[5], "ret");
        // another register's thunk uses that register
        auto r11 = on.listing("__x86_indirect_thunk_r11");
        ASSERT_GE(r11.size(), 6u);
        EXPECT_EQ(r11[4], "mov [rsp], r11");
        // the dispatcher calls the thunk, not *%rax, in both
        auto d = off.listing("do_syscall_64");
        EXPECT_EQ(count_insn(d, "call 0x"), 1u);
        EXPECT_EQ(count_insn(d, "call rax"), 0u);
    }
}

TEST(MitigationSites, NospecMaskIsNopedOut)
{
    if (!have_images())
        GTEST_SKIP() << "entrysim was built without kernel_model/";
    for (unsigned patches : {0u, 15u}) {
        SCOPED_TRACE(patches);
        Image on(patches, ES_MIT_NOSPEC), off(patches, 0);
        for (const char *fn : {"do_syscall_64", "do_int80_syscall_32"}) {
            auto a = on.listing(fn), b = off.listing(fn);
            EXPECT_EQ(count_insn(a, "sbb "), 1u) << fn;
            EXPECT_EQ(count_insn(b, "sbb "), 0u) << fn;
            EXPECT_GT(count_insn(b, "nop"), count_insn(a, "nop")) << fn;
            // the bounds check itself stays
            EXPECT_GE(count_insn(b, "cmp "), 1u) << fn;
        }
    }
}

// In entry code, a site of calling.h: the instruction before `first` is a
// short JMP over the block when off and NOPs when on.
void expect_site(Image &img, const char *fn, const char *first, bool on, size_t nsites)
{
    auto l = img.listing(fn);
    size_t found = 0;
    for (size_t i = find_insn(l, first); i < l.size(); i = find_insn(l, first, i + 1)) {
        ASSERT_GT(i, 0u);
        if (on)
            EXPECT_TRUE(starts(l[i - 1], "nop")) << fn << ": " << l[i - 1] << " before " << l[i];
        else
            EXPECT_TRUE(starts(l[i - 1], "jmp ")) << fn << ": " << l[i - 1] << " before " << l[i];
        found++;
    }
    EXPECT_EQ(found, nsites) << fn << ": sites starting with " << first;
}

TEST(MitigationSites, IbrsAndPtiBlocks)
{
    if (!have_images())
        GTEST_SKIP() << "entrysim was built without kernel_model/";
    for (unsigned patches : {0u, 15u}) {
        SCOPED_TRACE(patches);
        Image none(patches, 0), ibrs(patches, ES_MIT_IBRS), pti(patches, ES_MIT_PTI);
        // entry_SYSCALL_64: IBRS_ENTER + IBRS_EXIT
        for (Image *i : {&none, &ibrs, &pti})
            expect_site(*i, "entry_SYSCALL_64", "mov ecx, 0x48", i == &ibrs, 2);
        // the CR3 reads: `mov reg, cr3` after the JMP/NOPs
        for (Image *i : {&none, &pti}) {
            auto l = i->listing("entry_SYSCALL_64");
            std::vector<size_t> at;
            for (size_t k = 0; k < l.size(); k++)
                if (l[k].find(", cr3") != std::string::npos) {
                    at.push_back(k);
                    EXPECT_TRUE(starts(l[k - 1], i == &pti ? "nop" : "jmp ")) << l[k - 1];
                }
            ASSERT_EQ(at.size(), 2u) << "entry and SYSRET exit";
            // with PCID (CPUID reports it): the entry sets the no-flush bit;
            // the exit sets the user PCID, then the no-flush bit unless the
            // per-cpu flush flag was set; unpatched, NOPs
            const std::string &in = l[at[0] + 1], &out = l[at[1] + 1];
            EXPECT_EQ(starts(in, "bts "), i == &pti) << in;
            EXPECT_EQ(starts(out, "or "), i == &pti) << out;
            EXPECT_EQ(starts(l[at[1] + 2], "btr "), i == &pti) << l[at[1] + 2];
            EXPECT_EQ(starts(in, "nop"), i != &pti) << in;
            EXPECT_EQ(starts(out, "nop"), i != &pti) << out;
        }
        // the other entries have theirs too
        for (const char *fn : {"entry_INT80_compat", "entry_SYSCALL_compat",
                               "entry_SYSENTER_compat", "page_fault",
                               "swapgs_restore_regs_and_return_to_usermode"}) {
            auto l = pti.listing(fn);
            size_t n = 0;
            for (const auto &s : l)
                n += s.find(", cr3") != std::string::npos;
            EXPECT_GE(n, 1u) << fn;
        }
        expect_site(ibrs, "entry_INT80_compat", "mov ecx, 0x48", true, 1);
        expect_site(ibrs, "swapgs_restore_regs_and_return_to_usermode", "mov ecx, 0x48", true, 1);
    }
}

TEST(MitigationSites, ReappliedFromTheOriginalBytes)
{
    if (!have_images())
        GTEST_SKIP() << "entrysim was built without kernel_model/";
    Image img(15, ES_MIT_RETPOLINE);
    ASSERT_EQ(es_kernel_set_mitigations(img.m, ES_MIT_NOSPEC), 0) << img.m->message;
    EXPECT_EQ(img.listing("__x86_indirect_thunk_rax")[0], "jmp rax");
    EXPECT_EQ(es_kernel_mitigations(img.m), (unsigned)ES_MIT_NOSPEC);
    // pti splits the page tables: it cannot be taken back
    ASSERT_EQ(es_kernel_set_mitigations(img.m, ES_MIT_PTI), 0) << img.m->message;
    EXPECT_EQ(es_kernel_set_mitigations(img.m, 0), -1);
    EXPECT_NE(std::string(img.m->message).find("pti"), std::string::npos);
    EXPECT_EQ(es_kernel_set_mitigations(img.m, 0x10), -1) << "unknown bit";
    es_machine *bare = es_machine_new(1 << 20);
    EXPECT_EQ(es_kernel_set_mitigations(bare, ES_MIT_PTI), -1) << "no kernel";
    EXPECT_EQ(es_kernel_mitigations(bare), 0u);
    es_machine_free(bare);
}

// File offset of a virtual address in an ELF64 image (its PT_LOAD
// segments), 0 if none holds it.
size_t file_offset(const uint8_t *img, size_t size, uint64_t va)
{
    uint64_t phoff = 0;
    uint16_t phnum = 0;
    memcpy(&phoff, img + 32, 8);
    memcpy(&phnum, img + 56, 2);
    for (unsigned i = 0; i < phnum && phoff + (i + 1) * 56 <= size; i++) {
        const uint8_t *ph = img + phoff + i * 56;
        uint32_t type = 0;
        uint64_t off = 0, vaddr = 0, filesz = 0;
        memcpy(&type, ph, 4);
        memcpy(&off, ph + 8, 8);
        memcpy(&vaddr, ph + 16, 8);
        memcpy(&filesz, ph + 32, 8);
        if (type == 1 && va >= vaddr && va < vaddr + filesz)
            return (size_t)(off + va - vaddr);
    }
    return 0;
}

// A corrupt .altinstructions record is refused at load with a reason, and
// nothing is patched from it.
TEST(MitigationSites, MalformedRecordsAreRejected)
{
    if (!have_images())
        GTEST_SKIP() << "entrysim was built without kernel_model/";
    size_t n = 0;
    const uint8_t *img = es_kernel_image(15, &n);
    uint64_t alt = 0;
    {
        Image i(15, ES_MIT_DEFAULT);
        alt = es_kernel_sym(i.m, "__alt_instructions");
    }
    size_t off = file_offset(img, n, alt);
    ASSERT_NE(off, 0u);
    struct Bad {
        size_t at;
        uint8_t v;
        const char *why;
    } bad[] = {
        {8, 99, "unknown feature"},                 // feature (u16)
        {12, 255, "longer than the site"},          // replacement length
        {11, 200, "longer than the site"},          // padding length
        {3, 0x7f, "outside the image"},             // site offset's top byte
        {4 + 3, 0x80, "outside the image"},         // replacement offset's
    };
    for (const Bad &b : bad) {
        std::vector<uint8_t> copy(img, img + n);
        copy[off + b.at] = b.v;
        es_machine *m = es_machine_new(64ull << 20);
        EXPECT_EQ(es_kernel_load_image(m, copy.data(), n, 15), -1) << b.why;
        EXPECT_NE(std::string(m->message).find(b.why), std::string::npos) << m->message;
        EXPECT_EQ(m->kernel, nullptr);
        es_machine_free(m);
    }
}

// ---------------------------------------------------------- guest runs

std::string test_prog()
{
    return es_build_path("kernel_model/tests/mitig64");
}

struct Trace {
    uint64_t thunk = 0, thunk_size = 0, dispatch = 0;
    std::vector<uint64_t> cr3_user, cr3_kernel; // distinct values seen
    std::vector<uint64_t> cr3_sources;          // MOV to CR3 operands
    std::vector<uint64_t> spec_ctrl_writes;
    std::vector<uint64_t> thunk_rips;
    std::vector<int> pf_errors;
    static void add(std::vector<uint64_t> &v, uint64_t x)
    {
        for (uint64_t y : v)
            if (y == x)
                return;
        v.push_back(x);
    }
};

void before(void *ctx, es_machine *m, const es_insn *d, uint64_t rip)
{
    Trace *t = (Trace *)ctx;
    if (m->cpl == 3)
        Trace::add(t->cr3_user, m->cr3);
    if (rip == t->dispatch)
        Trace::add(t->cr3_kernel, m->cr3);
    if (d->op == ES_OP_MOV && d->o[0].kind == ES_OPK_CR && d->o[0].reg == 3)
        t->cr3_sources.push_back(m->gpr[d->o[1].reg]);
    if (d->op == ES_OP_WRMSR && (uint32_t)m->gpr[ES_RCX] == MSR_IA32_SPEC_CTRL)
        t->spec_ctrl_writes.push_back((uint32_t)m->gpr[ES_RAX]);
    if (rip >= t->thunk && rip < t->thunk + t->thunk_size)
        Trace::add(t->thunk_rips, rip - t->thunk);
}

void on_exception(void *ctx, es_machine *m, int vector, uint32_t error)
{
    (void)m;
    if (vector == ES_VEC_PF)
        ((Trace *)ctx)->pf_errors.push_back((int)error);
}

struct GuestRun {
    es_machine *m = nullptr;
    FILE *out = tmpfile();
    Trace t;
    int status = -1;
    std::string err;
    GuestRun(unsigned patches, unsigned mit, std::vector<std::string> args, bool trace)
    {
        std::string prog = test_prog();
        std::vector<char *> argv;
        argv.push_back(prog.data());
        for (auto &a : args)
            argv.push_back(a.data());
        argv.push_back(nullptr);
        es_launch_cfg c{};
        c.program = prog.c_str();
        c.argc = (int)argv.size() - 1;
        c.argv = argv.data();
        c.deterministic = true;
        c.mem_cap_mb = 64;
        c.vendor = 1;
        c.patches = patches;
        c.mitigations = mit;
        c.max_insns = 5000000;
        c.stdin_fd = -1;
        c.stdout_fd = fileno(out);
        c.stderr_fd = fileno(out);
        char e[512] = "";
        if (es_launch(&c, &m, e, sizeof e) != ES_LAUNCH_OK) {
            err = e;
            return;
        }
        es_kernel_sym_size(m, "__x86_indirect_thunk_rax", &t.thunk, &t.thunk_size);
        t.dispatch = es_kernel_sym(m, "do_syscall_64");
        if (trace) {
            es_observer ob{};
            ob.ctx = &t;
            ob.before = before;
            ob.exception = on_exception;
            es_observe(m, &ob);
        }
        es_run(m);
        if (m->stop == ES_STOP_EXIT)
            status = m->exit_status;
        else if (m->stop == ES_STOP_FAULT)
            status = 128 + m->signal;
    }
    ~GuestRun()
    {
        es_launch_free(m);
        fclose(out);
    }
    GuestRun(const GuestRun &) = delete;
    std::string output()
    {
        fflush(out);
        rewind(out);
        std::string s;
        for (int c; (c = fgetc(out)) != EOF;)
            s += (char)c;
        return s;
    }
};

bool have_prog()
{
    return access(test_prog().c_str(), R_OK) == 0;
}

TEST(MitigationRuns, SameResultUnderEveryCombination)
{
    if (!have_images())
        GTEST_SKIP() << "entrysim was built without kernel_model/";
    ASSERT_TRUE(have_prog()) << test_prog() << " missing: build es_kernel_test_progs";
    const std::string want = "mitig64: start\nmitig64: from a new page\nmitig64: done\n";
    for (unsigned patches : {0u, 15u, 5u}) {
        for (unsigned mit = 0; mit <= ES_MIT_ALL; mit++) {
            SCOPED_TRACE("patches " + std::to_string(patches) + " mitigations " + name(mit));
            GuestRun r(patches, mit, {"run"}, false);
            ASSERT_TRUE(r.m) << r.err;
            EXPECT_EQ(r.status, 42) << r.m->message;
            EXPECT_EQ(r.output(), want);
            EXPECT_EQ(es_kernel_mitigations(r.m), mit);
        }
    }
}

TEST(MitigationRuns, PtiSwitchesCr3OnEntryAndExit)
{
    if (!have_images())
        GTEST_SKIP() << "entrysim was built without kernel_model/";
    ASSERT_TRUE(have_prog()) << test_prog();
    GuestRun off(15, ES_MIT_NOSPEC, {"run"}, true);
    ASSERT_EQ(off.status, 42) << off.err;
    EXPECT_TRUE(off.t.cr3_sources.empty()) << "no CR3 writes without pti";
    ASSERT_EQ(off.t.cr3_user.size(), 1u);
    ASSERT_EQ(off.t.cr3_kernel.size(), 1u);
    EXPECT_EQ(off.t.cr3_user[0], off.t.cr3_kernel[0]);

    GuestRun on(15, ES_MIT_PTI | ES_MIT_NOSPEC, {"run"}, true);
    ASSERT_EQ(on.status, 42) << on.err;
    uint64_t pgd = es_kernel_pti_pgd(on.m);
    ASSERT_NE(pgd, 0u);
    EXPECT_EQ(pgd & 0x1fff, 0u) << "8 KiB-aligned pair";
    // user mode always on the user PGD with the user PCID, the dispatcher
    // always on the kernel PGD with PCID 0
    ASSERT_EQ(on.t.cr3_user.size(), 1u);
    EXPECT_EQ(on.t.cr3_user[0], pgd | PTI_USER_PGTABLE_MASK | PTI_USER_PCID_MASK);
    ASSERT_EQ(on.t.cr3_kernel.size(), 1u);
    EXPECT_EQ(on.t.cr3_kernel[0], pgd);
    // a switch in and one out per syscall (7 SYSCALLs + 1 INT 0x80, the
    // last one exit_group: no way out), plus the boot's switch to user
    const auto &src = on.t.cr3_sources;
    ASSERT_EQ(src.size(), 8u + 7u + 1u);
    // switches to the kernel keep its PCID's translations (bit 63); so do
    // switches to user mode unless user mappings changed meanwhile: after
    // the 4th syscall (mmap) and the 6th (munmap) the user PCID is flushed
    for (size_t i = 0; i < src.size(); i++) {
        bool to_user = (src[i] & PTI_USER_PGTABLE_MASK) != 0;
        EXPECT_EQ(to_user, i % 2 == 0) << i;
        bool flush = to_user && (i == 2 * 4 || i == 2 * 6);
        if (i == 0)
            continue; // the boot's: the user PCID was never used, either is right
        EXPECT_EQ((src[i] >> 63) == 0, flush) << i << ": 0x" << std::hex << src[i];
    }
    EXPECT_FALSE(on.m->cr3 >> 63) << "bit 63 is never stored";
    // the user halves stayed identical (mitig64 mapped a page in a PML4
    // slot of its own from user mode: the kernel PGD got it too)
    uint64_t kp[512], up[512];
    memcpy(kp, es_phys(on.m, pgd), sizeof kp);
    memcpy(up, es_phys(on.m, pgd + 4096), sizeof up);
    EXPECT_TRUE(kp[0x7e0000000000ull >> 39] & ES_PTE_P);
    for (int i = 0; i < 256; i++)
        EXPECT_EQ(kp[i], up[i]) << "PML4 entry " << i;
    // the kernel half: the table the dispatcher reads is in the kernel PGD
    // only; the entry text is in both, with the same frame
    auto present = [&](uint64_t root, uint64_t va) {
        uint64_t *e = es_pte(on.m, root, va, false);
        return e && (*e & ES_PTE_P) ? *e : 0;
    };
    uint64_t table = es_kernel_sym(on.m, "sys_call_table");
    uint64_t entry = es_kernel_sym(on.m, "entry_SYSCALL_64");
    EXPECT_NE(present(pgd, table), 0u);
    EXPECT_EQ(present(pgd + 4096, table), 0u);
    EXPECT_NE(present(pgd + 4096, entry), 0u);
    EXPECT_EQ(present(pgd + 4096, entry), present(pgd, entry));
}

TEST(MitigationRuns, PtiUserPgdDoesNotMapKernelData)
{
    if (!have_images())
        GTEST_SKIP() << "entrysim was built without kernel_model/";
    ASSERT_TRUE(have_prog()) << test_prog();
    uint64_t data = 0, text = 0;
    {
        Image img(15, 0);
        data = es_kernel_sym(img.m, "sys_call_table");
        text = es_kernel_sym(img.m, "entry_SYSCALL_64");
    }
    ASSERT_NE(data, 0u);
    char hex[32];
    for (unsigned mit : {0u, (unsigned)ES_MIT_PTI}) {
        SCOPED_TRACE(name(mit));
        snprintf(hex, sizeof hex, "%llx", (unsigned long long)data);
        GuestRun r(15, mit, {"peek", hex}, true);
        ASSERT_TRUE(r.m) << r.err;
        EXPECT_EQ(r.status, 139) << "SIGSEGV";
        ASSERT_FALSE(r.t.pf_errors.empty());
        int e = r.t.pf_errors.front();
        EXPECT_EQ(e & 4, 4) << "user access";
        // P (bit 0): present-but-supervisor without pti, not present with it
        EXPECT_EQ(e & 1, mit ? 0 : 1) << "error code " << e;
        // the entry text is in the user PGD (supervisor-only): P = 1 either way
        snprintf(hex, sizeof hex, "%llx", (unsigned long long)text);
        GuestRun t(15, mit, {"peek", hex}, true);
        EXPECT_EQ(t.status, 139);
        ASSERT_FALSE(t.t.pf_errors.empty());
        EXPECT_EQ(t.t.pf_errors.front() & 1, 1);
    }
}

TEST(MitigationRuns, IbrsWritesSpecCtrlOnEntryAndExit)
{
    if (!have_images())
        GTEST_SKIP() << "entrysim was built without kernel_model/";
    ASSERT_TRUE(have_prog()) << test_prog();
    for (unsigned patches : {0u, 15u}) {
        GuestRun off(patches, 0, {"run"}, true);
        EXPECT_TRUE(off.t.spec_ctrl_writes.empty());
        GuestRun on(patches, ES_MIT_IBRS, {"run"}, true);
        ASSERT_EQ(on.status, 42) << on.err;
        // IBRS on at each of the 8 entries, off at the 7 exits
        ASSERT_EQ(on.t.spec_ctrl_writes.size(), 15u);
        for (size_t i = 0; i < on.t.spec_ctrl_writes.size(); i++)
            EXPECT_EQ(on.t.spec_ctrl_writes[i], i % 2 == 0 ? 1u : 0u) << i;
        EXPECT_EQ(on.m->msr.spec_ctrl, 1u) << "exit_group ends in the kernel";
    }
}

TEST(MitigationRuns, RetpolineGoesThroughCallAndRet)
{
    if (!have_images())
        GTEST_SKIP() << "entrysim was built without kernel_model/";
    ASSERT_TRUE(have_prog()) << test_prog();
    GuestRun off(15, 0, {"run"}, true);
    ASSERT_EQ(off.status, 42);
    // only the JMP *%rax at the thunk's start
    EXPECT_EQ(off.t.thunk_rips, std::vector<uint64_t>{0});
    GuestRun on(15, ES_MIT_RETPOLINE, {"run"}, true);
    ASSERT_EQ(on.status, 42);
    // call (0, 5 bytes), then mov [rsp], rax (12) and ret (16); the
    // pause (5) / lfence (7) / jmp (10) loop only ever runs speculatively
    std::vector<uint64_t> want{0, 12, 16};
    EXPECT_EQ(on.t.thunk_rips, want);
}

// ------------------------------------------------------ the CPU's side

struct Cpu {
    es_machine *m = est_new(ES_MODE_64);
    Cpu() { es_set_mode(m, 0, ES_MODE_64); }
    ~Cpu() { es_machine_free(m); }
    Cpu(const Cpu &) = delete;
    int run(std::vector<uint8_t> code)
    {
        est_code(m, code.data(), code.size());
        return est_run(m, code.size(), 10);
    }
    int wrmsr(uint32_t n, uint64_t v)
    {
        m->gpr[ES_RCX] = n;
        m->gpr[ES_RAX] = (uint32_t)v;
        m->gpr[ES_RDX] = v >> 32;
        return run({0x0f, 0x30});
    }
    int rdmsr(uint32_t n)
    {
        m->gpr[ES_RCX] = n;
        return run({0x0f, 0x32});
    }
    int mov_cr(int cr, uint64_t v)
    {
        m->gpr[ES_RAX] = v;
        return run({0x0f, 0x22, (uint8_t)(0xc0 | cr << 3)});
    }
};

TEST(MitigationCpu, SpecCtrlMsrsFollowCpuid)
{
    for (int vendor : {0, 1}) {
        SCOPED_TRACE(vendor ? "AMD" : "Intel");
        Cpu c;
        c.m->vendor = (uint8_t)vendor;
        uint32_t r[4];
        es_cpuid(c.m, 7, 0, r);
        uint32_t x8[4];
        es_cpuid(c.m, 0x80000008, 0, x8);
        if (vendor)
            EXPECT_EQ(x8[1] & 0x5000u, 0x5000u) << "AMD: IBPB (12), IBRS (14)";
        else
            EXPECT_TRUE(r[3] >> 26 & 1) << "Intel: CPUID.7.0:EDX[26]";
        ASSERT_EQ(c.wrmsr(0x48, 1), 0) << c.m->message;
        EXPECT_EQ(c.m->msr.spec_ctrl, 1u);
        ASSERT_EQ(c.rdmsr(0x48), 0);
        EXPECT_EQ(c.m->gpr[ES_RAX], 1u);
        EXPECT_EQ(c.wrmsr(0x48, 2), ES_STOP_FAULT) << "STIBP is not advertised";
        EXPECT_EQ(c.m->fault.vector, ES_VEC_GP);
        EXPECT_EQ(c.m->msr.spec_ctrl, 1u);
        ASSERT_EQ(c.wrmsr(0x49, 1), 0) << "IBPB";
        EXPECT_EQ(c.wrmsr(0x49, 2), ES_STOP_FAULT);
        EXPECT_EQ(c.rdmsr(0x49), ES_STOP_FAULT) << "PRED_CMD is write-only";
        EXPECT_EQ(c.m->fault.vector, ES_VEC_GP);
    }
}

TEST(MitigationCpu, Cr4PcideAndCr3NoFlushBit)
{
    Cpu c;
    uint32_t r[4];
    es_cpuid(c.m, 1, 0, r);
    ASSERT_TRUE(r[2] >> 17 & 1) << "CPUID.1:ECX.PCID";
    const uint64_t cr3 = c.m->cr3, cr4 = c.m->cr4, pcide = 1ull << 17;
    // bit 63 is reserved while PCIDE is clear
    EXPECT_EQ(c.mov_cr(3, cr3 | 1ull << 63), ES_STOP_FAULT);
    // PCIDE needs PCID 0 in CR3
    ASSERT_EQ(c.mov_cr(3, cr3 | 5), 0) << c.m->message;
    EXPECT_EQ(c.mov_cr(4, cr4 | pcide), ES_STOP_FAULT);
    EXPECT_EQ(c.m->fault.vector, ES_VEC_GP);
    ASSERT_EQ(c.mov_cr(3, cr3), 0);
    ASSERT_EQ(c.mov_cr(4, cr4 | pcide), 0) << c.m->message;
    EXPECT_EQ(c.m->cr4, cr4 | pcide);
    // now bit 63 is the no-flush hint: accepted, not stored; PCID kept
    ASSERT_EQ(c.mov_cr(3, cr3 | 1ull << 63 | 0x801), 0) << c.m->message;
    EXPECT_EQ(c.m->cr3, cr3 | 0x801);
    // bits 62:48 stay reserved
    EXPECT_EQ(c.mov_cr(3, cr3 | 1ull << 62), ES_STOP_FAULT);
    // translations keep working after either kind of load
    ASSERT_EQ(c.mov_cr(3, cr3), 0);
    uint64_t v = 0;
    EXPECT_EQ(es_copy_from_guest(c.m, &v, EST_DATA, 8), 0);
}

} // namespace
