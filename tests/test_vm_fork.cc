// Address spaces as objects (sim/vm_mm.c): fork's eager copy, switching,
// release, the memory cap, kernel stacks in every PGD (and under PTI in
// both PGDs of each pair), and execve's loading hook (sim/boot/exec.c).
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "elf_util.h"
#include "exec.h"
#include "kernel.h"
#include "loader.h"
#include "machine.h"
#include "mem.h"
#include "mitigations.h"
#include "pti.h"
#include "seg.h"
#include "vm.h"
#include "vm_fixture.h"

namespace {

constexpr uint64_t A = 0x10000000;
constexpr uint64_t PG = 4096;

struct Fork : VmBase {
    uint64_t val(uint64_t va)
    {
        uint64_t v = ~0ull;
        EXPECT_EQ(rd(va, &v), 0) << std::hex << va;
        return v;
    }
    uint64_t pte(uint64_t va)
    {
        uint64_t *e = es_pte(m, m->cr3, va, false);
        return e ? *e : 0;
    }
};

TEST_F(Fork, ChildSeesACopyAndWritesStayPrivate)
{
    ASSERT_EQ(es_vm_map(m, A, 16 * PG, ES_PROT_R | ES_PROT_W), 0);
    ASSERT_EQ(wr(A, 0x1111), 0);
    ASSERT_EQ(wr(A + PG, 0x2222), 0);
    ASSERT_EQ(wr(A + 5 * PG + 8, 0x5555), 0);
    EXPECT_EQ(val(A + 9 * PG), 0u); // the zero frame: shared, not copied
    es_mm parent = es_vm_current(m);
    EXPECT_EQ(parent.pgd, m->cr3);
    EXPECT_EQ(parent.vmas, m->vmas);
    uint64_t before = m->frames_used;
    es_mm child{};
    ASSERT_EQ(es_vm_fork(m, &child), 0);
    // 3 data pages + PDPT, PD, PT + the PGD; the kernel-stack PDPT the
    // fork makes is the kernel's and does not count
    EXPECT_EQ(m->frames_used, before + 3 + 3 + 1);
    EXPECT_NE(child.pgd, parent.pgd);
    EXPECT_NE(child.vmas, parent.vmas);
    EXPECT_EQ(m->cr3, parent.pgd) << "fork does not switch";

    es_vm_switch_cr3(m, child);
    EXPECT_EQ(m->cr3, child.pgd);
    EXPECT_EQ(val(A), 0x1111u);
    EXPECT_EQ(val(A + PG), 0x2222u);
    EXPECT_EQ(val(A + 5 * PG + 8), 0x5555u);
    EXPECT_EQ(es_vm_prot_at(m, A + 15 * PG), ES_PROT_R | ES_PROT_W);
    EXPECT_EQ(es_vm_prot_at(m, A + 16 * PG), -1);
    ASSERT_EQ(wr(A, 0xc0c0), 0);
    ASSERT_EQ(wr(A + 9 * PG, 0x9999), 0); // the child's own frame
    ASSERT_EQ(es_vm_map(m, A + 32 * PG, PG, ES_PROT_R | ES_PROT_W), 0);
    ASSERT_EQ(wr(A + 32 * PG, 1), 0);

    es_vm_switch_cr3(m, parent);
    EXPECT_EQ(val(A), 0x1111u);
    EXPECT_EQ(val(A + 9 * PG), 0u);
    EXPECT_EQ(es_vm_prot_at(m, A + 32 * PG), -1) << "the child's mapping is its own";
    es_vm_release(m, child);
    EXPECT_EQ(m->frames_used, before);
    EXPECT_EQ(val(A + 5 * PG + 8), 0x5555u);
}

TEST_F(Fork, ZeroFrameStaysSharedAndReadOnly)
{
    ASSERT_EQ(es_vm_map(m, A, 4 * PG, ES_PROT_R | ES_PROT_W), 0);
    EXPECT_EQ(val(A + 2 * PG), 0u);
    ASSERT_NE(m->vmg.zero_pfn, 0u);
    uint64_t zero = m->vmg.zero_pfn << 12;
    EXPECT_EQ(pte(A + 2 * PG) & ES_PTE_ADDR, zero);
    es_mm parent = es_vm_current(m), child{};
    ASSERT_EQ(es_vm_fork(m, &child), 0);
    es_vm_switch_cr3(m, child);
    EXPECT_EQ(pte(A + 2 * PG) & ES_PTE_ADDR, zero);
    EXPECT_FALSE(pte(A + 2 * PG) & ES_PTE_W);
    ASSERT_EQ(wr(A + 2 * PG, 7), 0);
    EXPECT_NE(pte(A + 2 * PG) & ES_PTE_ADDR, zero) << "a write takes a frame of its own";
    es_vm_switch_cr3(m, parent);
    EXPECT_EQ(pte(A + 2 * PG) & ES_PTE_ADDR, zero);
    EXPECT_FALSE(pte(A + 2 * PG) & ES_PTE_W);
    EXPECT_EQ(val(A + 2 * PG), 0u);
    // releasing the child leaves the zero frame to the parent
    es_vm_release(m, child);
    EXPECT_EQ(m->vmg.zero_pfn << 12, zero);
    EXPECT_EQ(val(A + 3 * PG), 0u);
    EXPECT_EQ(pte(A + 3 * PG) & ES_PTE_ADDR, zero);
}

TEST_F(Fork, ProtNonePageKeepsItsContents)
{
    ASSERT_EQ(es_vm_map(m, A, 2 * PG, ES_PROT_R | ES_PROT_W), 0);
    ASSERT_EQ(wr(A + PG, 0xabcdef), 0);
    ASSERT_EQ(es_vm_protect(m, A, 2 * PG, 0), 0);
    es_mm parent = es_vm_current(m), child{};
    ASSERT_EQ(es_vm_fork(m, &child), 0);
    es_vm_switch_cr3(m, child);
    uint64_t v;
    EXPECT_EQ(rd(A + PG, &v), -1) << "still PROT_NONE in the child";
    ASSERT_EQ(es_vm_protect(m, A, 2 * PG, ES_PROT_R), 0);
    EXPECT_EQ(val(A + PG), 0xabcdefu);
    es_vm_switch_cr3(m, parent);
    es_vm_release(m, child);
}

TEST_F(Fork, OutOfMemoryUndoesEverything)
{
    ASSERT_EQ(es_vm_map(m, A, 32 * PG, ES_PROT_R | ES_PROT_W), 0);
    for (uint64_t i = 0; i < 32; i++)
        ASSERT_EQ(wr(A + i * PG, i + 1), 0);
    es_mm probe{};
    ASSERT_EQ(es_vm_fork(m, &probe), 0); // makes the kernel-stack PDPT
    es_vm_release(m, probe);
    uint64_t before = m->frames_used, cap = m->mem_cap;
    for (uint64_t room : {0ull, 1ull, 4ull, 20ull, 35ull}) { // 36 are needed
        m->mem_cap = (before + room) * PG;
        es_mm child{};
        EXPECT_EQ(es_vm_fork(m, &child), -ENOMEM) << room;
        EXPECT_EQ(m->frames_used, before) << room;
    }
    m->mem_cap = (before + 36) * PG;
    es_mm child{};
    ASSERT_EQ(es_vm_fork(m, &child), 0);
    m->mem_cap = cap;
    EXPECT_EQ(val(A + 31 * PG), 32u);
    es_vm_release(m, child);
    EXPECT_EQ(m->frames_used, before);
}

TEST_F(Fork, ReleaseRefusesTheCurrentAddressSpace)
{
    ASSERT_EQ(es_vm_map(m, A, PG, ES_PROT_R | ES_PROT_W), 0);
    ASSERT_EQ(wr(A, 3), 0);
    uint64_t used = m->frames_used;
    es_vm_release(m, es_vm_current(m));
    EXPECT_EQ(m->frames_used, used);
    EXPECT_EQ(val(A), 3u);
}

TEST_F(Fork, ExecResetDropsEveryUserMapping)
{
    ASSERT_EQ(es_vm_kstack_alloc(m, 1), ES_KSTACK_BASE + ES_KSTACK_STRIDE + ES_KSTACK_SIZE);
    uint64_t used = m->frames_used;
    ASSERT_EQ(es_vm_map(m, A, 4 * PG, ES_PROT_R | ES_PROT_W), 0);
    ASSERT_EQ(es_vm_map(m, 0x7f0000000000ull, PG, ES_PROT_R | ES_PROT_W), 0);
    ASSERT_EQ(wr(A, 1), 0);
    ASSERT_EQ(wr(0x7f0000000000ull, 2), 0);
    es_vm_set_layout(m, 0xffffe000, 0xf0000000);
    uint64_t pgd = m->cr3;
    ASSERT_EQ(es_vm_exec_reset(m), 0);
    EXPECT_EQ(m->cr3, pgd);
    EXPECT_EQ(m->frames_used, used) << "frames and user page tables freed";
    EXPECT_EQ(es_vm_prot_at(m, A), -1);
    uint64_t v;
    EXPECT_EQ(rd(A, &v), -1);
    const uint64_t *pml4 = (const uint64_t *)es_phys(m, pgd);
    for (int i = 0; i < 256; i++)
        EXPECT_EQ(pml4[i], 0u) << i;
    EXPECT_NE(es_vm_kptr(m, ES_KSTACK_BASE + ES_KSTACK_STRIDE, 8), nullptr) << "kernel half kept";
    // the default layout again: 47-bit addresses can be mapped
    EXPECT_EQ(es_vm_map(m, 0x7f0000000000ull, PG, ES_PROT_R), 0);
}

// ------------------------------------------------------ kernel stacks

uint64_t kstack_lo(unsigned slot)
{
    return ES_KSTACK_BASE + slot * ES_KSTACK_STRIDE;
}

// CPL 0 may read and write the whole stack in the current PGD; CPL 3 may
// not; the guard below is unmapped.
void expect_kstack(es_machine *m, unsigned slot, const char *where)
{
    uint64_t pa;
    for (uint64_t off = 0; off < ES_KSTACK_SIZE; off += PG) {
        EXPECT_EQ(es_translate(m, kstack_lo(slot) + off, ES_ACC_W, 0, &pa), 0u)
            << where << " slot " << slot << " +" << off;
        EXPECT_NE(es_translate(m, kstack_lo(slot) + off, ES_ACC_R, 1, &pa), 0u)
            << where << ": not for user mode";
    }
    EXPECT_NE(es_translate(m, kstack_lo(slot) - 1, ES_ACC_R, 0, &pa), 0u) << where << ": guard";
}

TEST_F(Fork, KernelStacksAreInEveryAddressSpace)
{
    uint64_t top3 = es_vm_kstack_alloc(m, 3);
    ASSERT_EQ(top3, kstack_lo(3) + ES_KSTACK_SIZE);
    EXPECT_EQ(es_vm_kstack_alloc(m, 3), 0u) << "taken";
    EXPECT_EQ(es_vm_kstack_alloc(m, ES_KSTACK_SLOTS), 0u) << "no such slot";
    uint8_t *p = es_vm_kptr(m, top3 - 8, 8);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p[0], 0) << "zeroed";
    memcpy(p, "parent!", 8);
    EXPECT_EQ(es_vm_kptr(m, top3 - 4, 8), nullptr) << "crosses into the guard";
    es_mm parent = es_vm_current(m), child{};
    ASSERT_EQ(es_vm_fork(m, &child), 0);
    uint64_t top4 = es_vm_kstack_alloc(m, 4);
    ASSERT_EQ(top4, kstack_lo(4) + ES_KSTACK_SIZE);
    memcpy(es_vm_kptr(m, top4 - 16, 8), "slot4", 6);
    expect_kstack(m, 3, "parent");
    expect_kstack(m, 4, "parent");
    es_vm_switch_cr3(m, child);
    expect_kstack(m, 3, "child");
    expect_kstack(m, 4, "child");
    EXPECT_STREQ((const char *)es_vm_kptr(m, top3 - 8, 8), "parent!") << "the same frames";
    EXPECT_STREQ((const char *)es_vm_kptr(m, top4 - 16, 8), "slot4");
    es_vm_kstack_free(m, 3);
    uint64_t pa;
    EXPECT_NE(es_translate(m, kstack_lo(3), ES_ACC_R, 0, &pa), 0u);
    es_vm_switch_cr3(m, parent);
    EXPECT_NE(es_translate(m, kstack_lo(3), ES_ACC_R, 0, &pa), 0u) << "gone everywhere";
    EXPECT_NE(es_vm_kstack_alloc(m, 3), 0u) << "free again";
    es_vm_release(m, child);
}

// ------------------------------------------------------ under PTI

bool have_images()
{
    size_t n = 0;
    return es_kernel_image(ES_CONV_V417, &n) && n;
}

uint64_t present(es_machine *m, uint64_t root, uint64_t va)
{
    uint64_t *e = es_pte(m, root, va, false);
    return e && (*e & ES_PTE_P) ? *e : 0;
}

TEST(ForkPti, EachProcessGetsAPairWithTheKernelStacks)
{
    if (!have_images())
        GTEST_SKIP() << "entrysim was built without kernel_model/";
    es_machine *m = es_machine_new(64ull << 20);
    ASSERT_NE(m, nullptr);
    ASSERT_EQ(es_kernel_load(m, 15), 0) << m->message;
    ASSERT_EQ(es_kernel_set_mitigations(m, ES_MIT_PTI), 0) << m->message;
    ASSERT_NE(m->hooks.pti_fork, nullptr);
    es_set_mode(m, 3, ES_MODE_64);
    ASSERT_EQ(es_vm_map(m, A, 2 * PG, ES_PROT_R | ES_PROT_W), 0);
    uint64_t v = 0x77;
    ASSERT_EQ(es_write(m, A, &v, 8), 0);
    uint64_t top3 = es_vm_kstack_alloc(m, 3);
    ASSERT_NE(top3, 0u);
    es_mm parent = es_vm_current(m), child{};
    EXPECT_EQ(parent.pgd, es_kernel_pti_pgd(m));
    uint64_t before = m->frames_used;
    ASSERT_EQ(es_vm_fork(m, &child), 0);
    EXPECT_EQ(child.pgd & 0x1fff, 0u) << "an 8 KiB-aligned pair";
    ASSERT_NE(es_vm_kstack_alloc(m, 4), 0u);
    uint64_t entry = es_kernel_sym(m, "entry_SYSCALL_64");
    uint64_t table = es_kernel_sym(m, "sys_call_table");
    for (uint64_t pgd : {parent.pgd, child.pgd}) {
        SCOPED_TRACE(pgd == parent.pgd ? "parent" : "child");
        const uint64_t *kp = (const uint64_t *)es_phys(m, pgd);
        const uint64_t *up = (const uint64_t *)es_phys(m, pgd + PG);
        for (int i = 0; i < 256; i++)
            EXPECT_EQ(kp[i], up[i]) << "user half, PML4 entry " << i;
        for (unsigned slot : {3u, 4u}) {
            EXPECT_NE(present(m, pgd, kstack_lo(slot)), 0u);
            EXPECT_EQ(present(m, pgd + PG, kstack_lo(slot)), present(m, pgd, kstack_lo(slot)));
        }
        EXPECT_NE(present(m, pgd + PG, entry), 0u);
        EXPECT_EQ(present(m, pgd + PG, table), 0u) << "the user PGD stays isolated";
        EXPECT_NE(present(m, pgd, table), 0u);
        EXPECT_NE(present(m, pgd, A), 0u);
    }
    EXPECT_NE(present(m, parent.pgd, A) & ES_PTE_ADDR, present(m, child.pgd, A) & ES_PTE_ADDR);
    // the child, in user mode on its user PGD with a PCID: a mapping in a
    // new PML4 slot reaches its own kernel PGD, not the parent's pair
    es_vm_switch_cr3(m, child);
    m->cr3 = child.pgd | 0x1000 | 1;
    EXPECT_EQ(es_vm_current(m).pgd, child.pgd);
    ASSERT_EQ(es_read(m, A, &v, 8), 0);
    EXPECT_EQ(v, 0x77u);
    const uint64_t far = 0x7e0000000000ull;
    ASSERT_EQ(es_vm_map(m, far, PG, ES_PROT_R | ES_PROT_W), 0);
    ASSERT_EQ(es_write(m, far, &v, 8), 0);
    EXPECT_NE(present(m, child.pgd, far), 0u);
    EXPECT_EQ(present(m, parent.pgd, far), 0u);
    EXPECT_EQ(present(m, parent.pgd + PG, far), 0u);
    // back to the parent; the child's pair and all it held go
    es_vm_switch_cr3(m, parent);
    es_vm_release(m, child);
    EXPECT_EQ(m->frames_used, before + 4 /* slot 4's stack */);
    es_machine_free(m);
}

// ------------------------------------------------------ execve

struct Exec : LoaderBase {
    void SetUp() override
    {
        LoaderBase::SetUp();
        auto b = exec64();
        ASSERT_EQ(es_load_elf_mem(m, b.data(), b.size(), &img), 0) << m->message;
        char *const argv[] = {(char *)"old", nullptr};
        char *const envp[] = {nullptr};
        ASSERT_EQ(es_start_process(m, &img, 1, argv, envp), 0) << m->message;
        es_exec_install(m);
        ASSERT_NE(m->hooks.exec, nullptr);
        ASSERT_EQ(es_vm_map(m, A, PG, ES_PROT_R | ES_PROT_W), 0);
        uint64_t v = 5;
        ASSERT_EQ(es_write(m, A, &v, 8), 0);
    }
    uint64_t peek(uint64_t va) { return LoaderBase::peek(va, 8); }
    int exec(const std::vector<uint8_t> &b, int abi, es_exec_start *st)
    {
        char *const argv[] = {(char *)"new", (char *)"arg1", nullptr};
        char *const envp[] = {(char *)"A=1", nullptr};
        return m->hooks.exec(m, b.data(), b.size(), abi, 2, argv, envp, "/bin/new", st);
    }
};

TEST_F(Exec, LoadsTheNewProgramInPlaceOfTheOld)
{
    uint64_t pgd = m->cr3;
    es_exec_start st{};
    ASSERT_EQ(exec(exec64(2, 0x800000), ES_ABI_X64, &st), 0) << m->message;
    EXPECT_EQ(m->cr3, pgd) << "the same PGD";
    EXPECT_EQ(es_vm_prot_at(m, A), -1) << "old mappings gone";
    EXPECT_EQ(es_vm_prot_at(m, 0x400000), -1);
    EXPECT_EQ(es_vm_prot_at(m, 0x800000), ES_PROT_R | ES_PROT_X);
    EXPECT_EQ(st.rip, 0x801100u);
    EXPECT_EQ(st.cs, 0x33u);
    EXPECT_EQ(st.abi, ES_ABI_X64);
    EXPECT_EQ(st.brk_start, 0x806000u);
    EXPECT_EQ(st.rsp & 15, 0u);
    EXPECT_LT(st.rsp, 0x7ffffffff000ull);
    EXPECT_GT(st.rsp, 0x7ffffffff000ull - (8 << 20));
    // --direct: the registers are set too
    EXPECT_EQ(m->rip, st.rip);
    EXPECT_EQ(m->gpr[ES_RSP], st.rsp);
    EXPECT_EQ(m->seg[ES_SEG_CS].sel, 0x33);
    EXPECT_EQ(peek(st.rsp), 2u) << "argc";
    EXPECT_EQ(str(peek(st.rsp + 8)), "new");
    EXPECT_EQ(str(peek(st.rsp + 16)), "arg1");
    EXPECT_EQ(peek(st.rsp + 24), 0u);
    EXPECT_EQ(str(peek(st.rsp + 32)), "A=1");
    uint64_t fn = 0;
    for (uint64_t a = st.rsp + 48; peek(a); a += 16)
        if (peek(a) == 31) // AT_EXECFN
            fn = peek(a + 8);
    EXPECT_EQ(str(fn), "/bin/new");
    // nothing leaks: a second exec of the same program costs the same
    uint64_t used = m->frames_used;
    ASSERT_EQ(exec(exec64(2, 0x800000), ES_ABI_X64, &st), 0) << m->message;
    EXPECT_EQ(m->frames_used, used);
}

TEST_F(Exec, RefusedProgramsLeaveTheProcessAlone)
{
    uint64_t rip = m->rip, used = m->frames_used;
    es_exec_start st{};
    std::vector<uint8_t> junk(200, 0x90);
    EXPECT_EQ(exec(junk, ES_ABI_X64, &st), -ENOEXEC);
    EXPECT_NE(std::string(m->message).find("not an ELF"), std::string::npos) << m->message;
    auto i386 = elf(false, 3, 2, 0x8049100,
                    {{PT_LOAD, 5, 0, 0x8048000, 0x1800, 0x1800}, {PT_GNU_STACK, 6, 0, 0, 0, 0}},
                    0x1800);
    EXPECT_EQ(exec(i386, ES_ABI_X64, &st), -ENOEXEC) << "another ABI";
    auto inside_stack = exec64(2, 0x7ffffff00000ull);
    EXPECT_EQ(exec(inside_stack, ES_ABI_X64, &st), -ENOEXEC) << "placement is checked first";
    EXPECT_EQ(m->rip, rip);
    EXPECT_EQ(m->frames_used, used);
    EXPECT_EQ(peek(A), 5u) << "old mappings intact";
    EXPECT_EQ(es_vm_prot_at(m, 0x400000), ES_PROT_R | ES_PROT_X);
}

TEST_F(Exec, OutOfMemoryAfterThePointOfNoReturnIsDeath)
{
    es_exec_start st{};
    m->mem_cap = (m->frames_used - 2) * PG; // everything freed by the reset, and more
    // a data segment much larger than the cap allows, written by the loader
    auto huge = elf(true, 62, 2, 0x801100,
                    {{PT_LOAD, 6, 0, 0x800000, 0x400000, 0x400000}, {PT_GNU_STACK, 6, 0, 0, 0, 0}},
                    0x400000);
    EXPECT_EQ(exec(huge, ES_ABI_X64, &st), ES_EXEC_DEAD);
    EXPECT_NE(m->message[0], 0);
}

} // namespace
