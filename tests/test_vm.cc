// Address-space tests: VMAs, demand paging, unmap/protect, PROT_NONE,
// find_free, the memory cap.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>

#include "machine.h"
#include "mem.h"
#include "seg.h"
#include "vm.h"
#include "vm_fixture.h"

namespace {

struct Vm : VmBase {
};

constexpr uint64_t A = 0x10000000;

TEST_F(Vm, MapIsDemandPaged)
{
    uint64_t before = m->frames_used;
    ASSERT_EQ(es_vm_map(m, A, 256 << 20, ES_PROT_R | ES_PROT_W), 0);
    // 256 MiB mapped, nothing touched: no frames spent
    EXPECT_EQ(m->frames_used, before);
    uint64_t v = 1;
    ASSERT_EQ(rd(A + 0x123450, &v), 0);
    EXPECT_EQ(v, 0u);
    // one data page plus at most three new page-table pages
    EXPECT_GE(m->frames_used, before + 1);
    EXPECT_LE(m->frames_used, before + 4);
    ASSERT_EQ(wr(A + 0x123450, 0x1122334455667788ull), 0);
    ASSERT_EQ(rd(A + 0x123450, &v), 0);
    EXPECT_EQ(v, 0x1122334455667788ull);
}

TEST_F(Vm, UnmappedAccessIsNotPresentFault)
{
    uint64_t v;
    EXPECT_EQ(rd(A, &v), -1);
    EXPECT_EQ(m->fault.vector, ES_VEC_PF);
    EXPECT_EQ(m->fault.addr, A);
    EXPECT_EQ(m->fault.error, (uint32_t)ES_PFEC_U); // read, user, not present
}

TEST_F(Vm, ProtNoneFaultsAndKeepsContents)
{
    ASSERT_EQ(es_vm_map(m, A, 0x3000, ES_PROT_R | ES_PROT_W), 0);
    ASSERT_EQ(wr(A + 0x1008, 0xabcdef), 0);
    ASSERT_EQ(es_vm_protect(m, A + 0x1000, 0x1000, 0), 0);
    uint64_t v;
    EXPECT_EQ(rd(A + 0x1008, &v), -1);
    EXPECT_EQ(m->fault.vector, ES_VEC_PF);
    EXPECT_EQ(m->fault.addr, A + 0x1008);
    // neighbours unaffected (the VMA was split in three)
    EXPECT_EQ(wr(A + 0x0ff8, 1), 0);
    EXPECT_EQ(wr(A + 0x2000, 2), 0);
    EXPECT_EQ(es_vm_prot_at(m, A), ES_PROT_R | ES_PROT_W);
    EXPECT_EQ(es_vm_prot_at(m, A + 0x1000), 0);
    EXPECT_EQ(es_vm_prot_at(m, A + 0x2fff), ES_PROT_R | ES_PROT_W);
    // readable again: the old contents are back
    ASSERT_EQ(es_vm_protect(m, A + 0x1000, 0x1000, ES_PROT_R), 0);
    ASSERT_EQ(rd(A + 0x1008, &v), 0);
    EXPECT_EQ(v, 0xabcdefu);
    // but not writable: present page, protection violation, write
    EXPECT_EQ(wr(A + 0x1008, 3), -1);
    EXPECT_EQ(m->fault.error, (uint32_t)(ES_PFEC_P | ES_PFEC_W | ES_PFEC_U));
}

TEST_F(Vm, ProtNoneNeverTouchedFaults)
{
    ASSERT_EQ(es_vm_map(m, A, 0x1000, 0), 0);
    uint64_t v;
    EXPECT_EQ(rd(A, &v), -1);
    EXPECT_EQ(wr(A, 0), -1);
    EXPECT_EQ(es_vm_prot_at(m, A), 0);
    // kernel copies fail too (read()/write() would return EFAULT)
    EXPECT_EQ(es_copy_to_guest(m, A, &v, 8), -1);
}

TEST_F(Vm, WriteToReadOnlyMappingFaults)
{
    ASSERT_EQ(es_vm_map(m, A, 0x1000, ES_PROT_R), 0);
    EXPECT_EQ(wr(A, 5), -1);
    EXPECT_EQ(m->fault.vector, ES_VEC_PF);
    EXPECT_TRUE(m->fault.write);
}

TEST_F(Vm, ExecuteNeedsProtExec)
{
    // 90    nop
    const uint8_t nop = 0x90;
    ASSERT_EQ(es_vm_map(m, A, 0x1000, ES_PROT_R | ES_PROT_W), 0);
    ASSERT_EQ(es_copy_to_guest(m, A, &nop, 1), 0);
    uint8_t b = 0;
    EXPECT_EQ(es_fetch_bytes(m, A, &b, 1), 0u);
    EXPECT_EQ(m->fault.vector, ES_VEC_PF);
    EXPECT_TRUE(m->fault.error & ES_PFEC_I);
    EXPECT_TRUE(m->fault.error & ES_PFEC_P);
    ASSERT_EQ(es_vm_protect(m, A, 0x1000, ES_PROT_R | ES_PROT_X), 0);
    EXPECT_EQ(es_fetch_bytes(m, A, &b, 1), 1u);
    EXPECT_EQ(b, 0x90);
}

TEST_F(Vm, UnmapFreesFramesAndFaults)
{
    ASSERT_EQ(es_vm_map(m, A, 0x10000, ES_PROT_R | ES_PROT_W), 0);
    uint64_t before = m->frames_used;
    for (uint64_t off = 0; off < 0x10000; off += 0x1000)
        ASSERT_EQ(wr(A + off, off), 0);
    uint64_t touched = m->frames_used;
    EXPECT_GE(touched, before + 16);
    ASSERT_EQ(es_vm_unmap(m, A + 0x4000, 0x8000), 0);
    EXPECT_EQ(m->frames_used, touched - 8);
    uint64_t v;
    EXPECT_EQ(rd(A + 0x4000, &v), -1);
    EXPECT_EQ(rd(A + 0xb000, &v), -1);
    ASSERT_EQ(rd(A + 0x3000, &v), 0);
    EXPECT_EQ(v, 0x3000u);
    ASSERT_EQ(rd(A + 0xc000, &v), 0);
    EXPECT_EQ(v, 0xc000u);
    EXPECT_EQ(es_vm_prot_at(m, A + 0x5000), -1);
    // unmapping nothing is fine, as munmap
    EXPECT_EQ(es_vm_unmap(m, 0x70000000, 0x1000), 0);
    EXPECT_EQ(es_vm_unmap(m, A + 1, 0x1000), -EINVAL);
}

TEST_F(Vm, MapReplacesWithZeroPages)
{
    ASSERT_EQ(es_vm_map(m, A, 0x2000, ES_PROT_R | ES_PROT_W), 0);
    ASSERT_EQ(wr(A + 0x1000, 77), 0);
    ASSERT_EQ(es_vm_map(m, A + 0x1000, 0x1000, ES_PROT_R | ES_PROT_W), 0);
    uint64_t v = 1;
    ASSERT_EQ(rd(A + 0x1000, &v), 0);
    EXPECT_EQ(v, 0u);
}

TEST_F(Vm, ProtectOverHoleIsEnomemAndChangesNothing)
{
    ASSERT_EQ(es_vm_map(m, A, 0x1000, ES_PROT_R | ES_PROT_W), 0);
    ASSERT_EQ(es_vm_map(m, A + 0x2000, 0x1000, ES_PROT_R | ES_PROT_W), 0);
    EXPECT_EQ(es_vm_protect(m, A, 0x3000, ES_PROT_R), -ENOMEM);
    EXPECT_EQ(es_vm_prot_at(m, A), ES_PROT_R | ES_PROT_W);
    EXPECT_EQ(wr(A, 1), 0);
}

TEST_F(Vm, RangeOk)
{
    ASSERT_EQ(es_vm_map(m, A, 0x1000, ES_PROT_R | ES_PROT_W), 0);
    ASSERT_EQ(es_vm_map(m, A + 0x1000, 0x1000, ES_PROT_R), 0);
    EXPECT_TRUE(es_vm_range_ok(m, A + 0x800, 0x1000, ES_PROT_R));
    EXPECT_FALSE(es_vm_range_ok(m, A + 0x800, 0x1000, ES_PROT_W));
    EXPECT_TRUE(es_vm_range_ok(m, A + 0x800, 0x800, ES_PROT_W));
    EXPECT_FALSE(es_vm_range_ok(m, A + 0x1800, 0x1000, ES_PROT_R)); // runs off the end
    EXPECT_FALSE(es_vm_range_ok(m, ~0ull - 10, 100, 0));             // wraps
    EXPECT_TRUE(es_vm_range_ok(m, 0, 0, ES_PROT_R));                 // empty
}

TEST_F(Vm, FindFreeTopDownBelowMmapBase)
{
    es_vm_set_layout(m, 0x7ffffffff000ull, 0x7ffff7fff000ull);
    uint64_t a = es_vm_find_free(m, 0x5000, 0);
    EXPECT_EQ(a, 0x7ffff7fff000ull - 0x5000);
    ASSERT_EQ(es_vm_map(m, a, 0x5000, ES_PROT_R), 0);
    uint64_t b = es_vm_find_free(m, 0x1000, 0);
    EXPECT_EQ(b, a - 0x1000);
    // a free hint is taken as is; a busy one is not
    EXPECT_EQ(es_vm_find_free(m, 0x2000, 0x40000000), 0x40000000u);
    EXPECT_EQ(es_vm_find_free(m, 0x2000, a), b - 0x1000);
    // a gap between two mappings that fits is used
    ASSERT_EQ(es_vm_map(m, a - 0x3000, 0x1000, ES_PROT_R), 0);
    EXPECT_EQ(es_vm_find_free(m, 0x2000, 0), a - 0x2000);
}

TEST_F(Vm, Layout32Bit)
{
    es_vm_set_layout(m, 0xffffe000ull, 0xf7ffe000ull);
    EXPECT_EQ(es_vm_map(m, 0xfffff000ull, 0x1000, ES_PROT_R), -ENOMEM);
    EXPECT_EQ(es_vm_map(m, 0xffffd000ull, 0x1000, ES_PROT_R), 0);
    uint64_t a = es_vm_find_free(m, 0x10000, 0);
    EXPECT_EQ(a, 0xf7ffe000ull - 0x10000);
}

TEST_F(Vm, MemoryCapTurnsTouchIntoFault)
{
    make(64 * 4096); // 64 frames, page tables included
    ASSERT_EQ(es_vm_map(m, A, 16 << 20, ES_PROT_R | ES_PROT_W), 0); // mapping is free
    int failed_at = -1;
    for (int i = 0; i < 100; i++) {
        if (wr(A + (uint64_t)i * 4096, 1)) {
            failed_at = i;
            break;
        }
    }
    ASSERT_GE(failed_at, 50);
    ASSERT_LT(failed_at, 64);
    EXPECT_EQ(m->fault.vector, ES_VEC_PF);
    EXPECT_NE(strstr(m->message, "out of guest memory"), nullptr) << m->message;
    // freeing memory makes room again
    ASSERT_EQ(es_vm_unmap(m, A, 0x10000), 0);
    EXPECT_EQ(wr(A + (uint64_t)failed_at * 4096, 1), 0);
}

TEST_F(Vm, AdjacentEqualMappingsMerge)
{
    // grows like brk, page by page; behaviour is what matters: one range
    for (int i = 0; i < 64; i++)
        ASSERT_EQ(es_vm_map(m, A + (uint64_t)i * 4096, 4096, ES_PROT_R | ES_PROT_W), 0);
    EXPECT_TRUE(es_vm_range_ok(m, A, 64 * 4096, ES_PROT_R | ES_PROT_W));
    ASSERT_EQ(es_vm_protect(m, A, 64 * 4096, ES_PROT_R), 0);
    EXPECT_FALSE(es_vm_range_ok(m, A, 4096, ES_PROT_W));
}

TEST_F(Vm, UnmapWholeSparseAddressSpace)
{
    // a few touched pages far apart, then munmap of the entire user range:
    // the page-table walk skips absent tables instead of visiting 2^35 pages
    const uint64_t at[] = {0x10000, 0x400000, 0x7f0000000000ull, 0x7ffffffe0000ull};
    uint64_t before = m->frames_used;
    for (uint64_t a : at) {
        ASSERT_EQ(es_vm_map(m, a, 0x2000, ES_PROT_R | ES_PROT_W), 0);
        ASSERT_EQ(wr(a + 0x1000, a), 0);
    }
    uint64_t touched = m->frames_used;
    EXPECT_GE(touched, before + 4);
    ASSERT_EQ(es_vm_unmap(m, 0x10000, 0x7ffffffff000ull - 0x10000), 0);
    EXPECT_EQ(m->frames_used, touched - 4); // the data pages; page tables stay
    for (uint64_t a : at) {
        uint64_t v;
        EXPECT_EQ(es_vm_prot_at(m, a), -1);
        EXPECT_EQ(rd(a + 0x1000, &v), -1);
    }
}

TEST_F(Vm, BadArguments)
{
    EXPECT_EQ(es_vm_map(m, A + 1, 0x1000, ES_PROT_R), -EINVAL);
    EXPECT_EQ(es_vm_map(m, A, 0, ES_PROT_R), -EINVAL);
    EXPECT_EQ(es_vm_map(m, A, 0x800, ES_PROT_R), -EINVAL);
    EXPECT_EQ(es_vm_map(m, 0x7ffffffff000ull, 0x2000, ES_PROT_R), -ENOMEM);
    EXPECT_EQ(es_vm_prot_at(m, A), -1);
    EXPECT_EQ(es_vm_find_free(m, 0, 0), 0u);
}

} // namespace
