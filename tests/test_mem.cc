// Paging, TLB and fault recording (sim/mem.c).
#include <gtest/gtest.h>

#include "es_shim.h"
#include "mem.h"
#include "seg.h"

namespace {

struct Mem : ::testing::Test {
    es_machine *m = nullptr;
    void SetUp() override { m = est_new(ES_MODE_64); ASSERT_NE(m, nullptr); }
    void TearDown() override { es_machine_free(m); }
};

TEST_F(Mem, LoadStoreRoundTripAllSizes)
{
    for (unsigned size : {1u, 2u, 4u, 8u}) {
        uint64_t v = 0x1122334455667788ull;
        ASSERT_EQ(es_store(m, EST_DATA + 8, size, v), 0);
        uint64_t r = 0;
        ASSERT_EQ(es_load(m, EST_DATA + 8, size, &r), 0);
        EXPECT_EQ(r, v & (size == 8 ? ~0ull : (1ull << (size * 8)) - 1)) << size;
    }
}

TEST_F(Mem, PageCrossingAccessIsContiguous)
{
    // 8 bytes straddling the first and second data pages
    ASSERT_EQ(es_store(m, EST_DATA + 0xffc, 8, 0x0807060504030201ull), 0);
    uint64_t lo = 0, hi = 0;
    ASSERT_EQ(es_load(m, EST_DATA + 0xffc, 4, &lo), 0);
    ASSERT_EQ(es_load(m, EST_DATA + 0x1000, 4, &hi), 0);
    EXPECT_EQ(lo, 0x04030201u);
    EXPECT_EQ(hi, 0x08070605u);
}

TEST_F(Mem, NotPresentPageFaultHasErrorCodeAndAddress)
{
    uint64_t v;
    EXPECT_NE(es_load(m, 0x12345678, 4, &v), 0);
    EXPECT_EQ(m->fault.vector, ES_VEC_PF);
    EXPECT_EQ(m->fault.addr, 0x12345678u);
    EXPECT_EQ(m->fault.error, (uint32_t)ES_PFEC_U); // user read, not present
    EXPECT_NE(es_store(m, 0x12345678, 4, 1), 0);
    EXPECT_EQ(m->fault.error, (uint32_t)(ES_PFEC_U | ES_PFEC_W));
}

TEST_F(Mem, WriteToReadOnlyCodePageIsProtectionFault)
{
    EXPECT_NE(es_store(m, EST_CODE, 1, 0x90), 0);
    EXPECT_EQ(m->fault.vector, ES_VEC_PF);
    EXPECT_EQ(m->fault.error, (uint32_t)(ES_PFEC_P | ES_PFEC_W | ES_PFEC_U));
}

TEST_F(Mem, CrossingIntoUnmappedPageFaultsWithoutPartialWrite)
{
    // last data page is followed by an unmapped page
    uint64_t last = EST_DATA + 0xfffc;
    ASSERT_EQ(es_store(m, last, 4, 0xaabbccdd), 0);
    EXPECT_NE(es_store(m, last, 8, 0x1111111111111111ull), 0);
    EXPECT_EQ(m->fault.addr, EST_DATA + 0x10000);
    uint64_t v = 0;
    ASSERT_EQ(es_load(m, last, 4, &v), 0);
    EXPECT_EQ(v, 0xaabbccddu); // nothing written
}

TEST_F(Mem, NonCanonicalIsGeneralProtection)
{
    uint64_t v;
    EXPECT_NE(es_load(m, 0x0000800000000000ull, 8, &v), 0);
    EXPECT_EQ(m->fault.vector, ES_VEC_GP);
}

TEST_F(Mem, SupervisorPageRefusedAtCpl3AllowedAtCpl0)
{
    uint64_t va = 0x900000;
    ASSERT_EQ(est_map(m, va, 1, 0), 0);
    uint64_t *pte = es_pte(m, m->cr3, va, false);
    ASSERT_NE(pte, nullptr);
    *pte &= ~ES_PTE_U;
    es_tlb_flush(m);
    uint64_t v;
    EXPECT_NE(es_load(m, va, 8, &v), 0);
    EXPECT_EQ(m->fault.error, (uint32_t)(ES_PFEC_P | ES_PFEC_U));
    es_set_mode(m, 0, ES_MODE_64);
    EXPECT_EQ(es_load(m, va, 8, &v), 0);
}

TEST_F(Mem, TlbHonoursPermissionChangeAfterFlush)
{
    ASSERT_EQ(es_store(m, EST_DATA, 8, 1), 0); // fills the TLB writable
    uint64_t *pte = es_pte(m, m->cr3, EST_DATA, false);
    *pte &= ~ES_PTE_W;
    es_tlb_flush_page(m, EST_DATA);
    EXPECT_NE(es_store(m, EST_DATA, 8, 2), 0);
    EXPECT_EQ(m->fault.error, (uint32_t)(ES_PFEC_P | ES_PFEC_W | ES_PFEC_U));
}

TEST_F(Mem, NxPageCannotBeFetched)
{
    uint8_t b[4];
    EXPECT_EQ(es_fetch_bytes(m, EST_DATA, b, 4), 0u);
    EXPECT_EQ(m->fault.vector, ES_VEC_PF);
    EXPECT_EQ(m->fault.error, (uint32_t)(ES_PFEC_P | ES_PFEC_U | ES_PFEC_I));
}

TEST_F(Mem, AccessedAndDirtyBitsSet)
{
    ASSERT_EQ(es_store(m, EST_DATA + 0x2000, 4, 7), 0);
    uint64_t *pte = es_pte(m, m->cr3, EST_DATA + 0x2000, false);
    EXPECT_TRUE(*pte & ES_PTE_A);
    EXPECT_TRUE(*pte & ES_PTE_D);
}

// With a memory observer attached every access takes the slow path; the
// translations it keeps for itself (shadow TLB entries) must not let an
// access skip the observer, outlive an INVLPG, or skip the dirty bit.
struct ObservedMem : Mem {
    int accesses = 0;
    void SetUp() override
    {
        Mem::SetUp();
        es_observer o = {};
        o.ctx = this;
        o.mem = [](void *ctx, es_machine *, uint64_t, unsigned, int) {
            static_cast<ObservedMem *>(ctx)->accesses++;
        };
        ASSERT_EQ(es_observe(m, &o), 0);
    }
};

TEST_F(ObservedMem, EveryAccessReachesTheObserver)
{
    uint64_t v = 0;
    for (int i = 0; i < 3; i++)
        ASSERT_EQ(es_load(m, EST_DATA + 8, 8, &v), 0);
    ASSERT_EQ(es_store(m, EST_DATA + 8, 8, 5), 0);
    EXPECT_EQ(accesses, 4);
}

TEST_F(ObservedMem, ATranslationDoesNotOutliveInvlpg)
{
    ASSERT_EQ(es_store(m, EST_DATA, 8, 1), 0);
    uint64_t *pte = es_pte(m, m->cr3, EST_DATA, false);
    uint64_t fresh = es_frame_alloc(m);
    ASSERT_NE(fresh, 0u);
    *pte = (*pte & ~ES_PTE_ADDR) | (fresh << 12);
    es_tlb_flush_page(m, EST_DATA);
    uint64_t v = 7;
    ASSERT_EQ(es_load(m, EST_DATA, 8, &v), 0);
    EXPECT_EQ(v, 0u); // the new frame's, not the 1 stored before
    *pte &= ~ES_PTE_W;
    es_tlb_flush_page(m, EST_DATA);
    EXPECT_NE(es_store(m, EST_DATA, 8, 2), 0);
    EXPECT_EQ(m->fault.error, (uint32_t)(ES_PFEC_P | ES_PFEC_W | ES_PFEC_U));
}

TEST_F(ObservedMem, AWriteAfterAReadSetsTheDirtyBit)
{
    uint64_t v = 0;
    ASSERT_EQ(es_load(m, EST_DATA + 0x3000, 8, &v), 0);
    uint64_t *pte = es_pte(m, m->cr3, EST_DATA + 0x3000, false);
    EXPECT_TRUE(*pte & ES_PTE_A);
    EXPECT_FALSE(*pte & ES_PTE_D);
    ASSERT_EQ(es_store(m, EST_DATA + 0x3000, 8, 3), 0);
    EXPECT_TRUE(*pte & ES_PTE_D);
}

TEST_F(Mem, MemoryCapStopsFrameAllocation)
{
    es_machine *small = es_machine_new(16 * 4096);
    ASSERT_NE(small, nullptr);
    int got = 0;
    while (es_frame_alloc(small) != 0 && got < 100)
        got++;
    EXPECT_EQ(got, 16);
    es_machine_free(small);
}

TEST_F(Mem, KernelCopiesCrossPages)
{
    uint8_t src[6000];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (uint8_t)(i * 7);
    ASSERT_EQ(es_copy_to_guest(m, EST_DATA + 100, src, sizeof src), 0);
    uint8_t dst[6000];
    ASSERT_EQ(es_copy_from_guest(m, dst, EST_DATA + 100, sizeof dst), 0);
    EXPECT_EQ(memcmp(src, dst, sizeof src), 0);
    EXPECT_NE(es_copy_from_guest(m, dst, 0x12340000, 16), 0);
}

TEST_F(Mem, AlignmentCheckAfterPopfSetsAc)
{
    const uint8_t code[] = {
        0x9c,                                     // pushfq
        0x81, 0x0c, 0x24, 0x00, 0x00, 0x04, 0x00, // or dword [rsp], 0x40000 (AC)
        0x9d,                                     // popfq
        0x8b, 0x03,                               // mov eax, [rbx]      aligned: fine
        0x8b, 0x43, 0x01,                         // mov eax, [rbx+1]    misaligned: #AC(0)
    };
    ASSERT_EQ(est_code(m, code, sizeof code), 0);
    m->gpr[ES_RBX] = EST_DATA;
    EXPECT_EQ(est_run(m, sizeof code, 100), ES_STOP_FAULT);
    EXPECT_EQ(m->fault.vector, ES_VEC_AC);
    EXPECT_EQ(m->rip, EST_CODE + 11); // at the misaligned load
    // at CPL 0 the same access is not checked
    es_set_mode(m, 0, ES_MODE_64);
    uint64_t v;
    EXPECT_EQ(es_load(m, EST_DATA + 1, 4, &v), 0);
}

TEST_F(Mem, NoAlignmentCheckWithoutAc)
{
    uint64_t v;
    EXPECT_EQ(es_load(m, EST_DATA + 1, 4, &v), 0);
    EXPECT_EQ(es_load(m, EST_DATA + 3, 8, &v), 0);
}

} // namespace
