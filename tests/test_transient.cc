// Wrong-path windows (sim/transient.h): whatever the transient
// instructions did -- stores of every width, a page-crossing store, a
// string store, pushes, SSE and flags -- the squash puts every register
// and byte back, and a fault inside the window is neither delivered nor
// left behind.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "es_shim.h"
#include "mem.h"
#include "transient.h"

namespace {

std::vector<uint8_t> region(es_machine *m, uint64_t va, size_t n)
{
    std::vector<uint8_t> b(n);
    EXPECT_EQ(es_read(m, va, b.data(), (unsigned)n), 0);
    return b;
}

// rdi = EST_DATA; stores, a page-crossing store, rep stosb, push/pop,
// SSE, flags; then a load from an unmapped address (the window's end).
const uint8_t WRONG_PATH[] = {
    0x48, 0xc7, 0xc0, 0x11, 0x22, 0x33, 0x44, // mov rax, 0x44332211
    0x48, 0x89, 0x07,                         // mov [rdi], rax
    0x88, 0x47, 0x10,                         // mov [rdi+0x10], al
    0x48, 0x89, 0x87, 0xfc, 0x0f, 0x00, 0x00, // mov [rdi+0xffc], rax (crosses a page)
    0x66, 0x0f, 0x6e, 0xc0,                   // movd xmm0, eax
    0x66, 0x0f, 0xfe, 0xc0,                   // paddd xmm0, xmm0
    0xf3, 0x0f, 0x7f, 0x47, 0x40,             // movdqu [rdi+0x40], xmm0
    0x57,                                     // push rdi
    0x48, 0x8d, 0x7f, 0x80,                   // lea rdi, [rdi-0x80]
    0x48, 0x8d, 0xbf, 0x00, 0x03, 0x00, 0x00, // lea rdi, [rdi+0x300]: EST_DATA + 0x280
    0xb9, 0x2c, 0x01, 0x00, 0x00,             // mov ecx, 300
    0xb0, 0xab,                               // mov al, 0xab
    0xf3, 0xaa,                               // rep stosb
    0x5f,                                     // pop rdi
    0x48, 0x83, 0xe8, 0x01,                   // sub rax, 1 (flags)
    0x48, 0x8b, 0x04, 0x25, 0x00, 0x00, 0x00, 0x10, // mov rax, [0x10000000] (unmapped)
    0x90,                                     // never reached
};

TEST(Transient, SquashRestoresRegistersAndMemoryExactly)
{
    es_machine *m = est_new(ES_MODE_64);
    ASSERT_NE(m, nullptr);
    ASSERT_EQ(est_code(m, WRONG_PATH, sizeof WRONG_PATH), 0);
    for (int i = 0; i < 16; i++)
        m->gpr[i] = 0x1000 * (uint64_t)i + 7;
    m->gpr[ES_RDI] = EST_DATA;
    m->gpr[ES_RSP] = EST_STACK_TOP - 0x100;
    for (int i = 0; i < 16; i++)
        for (int b = 0; b < 16; b++)
            m->xmm[i].b[b] = (uint8_t)(i * 16 + b);
    m->rflags = 0x202;
    std::vector<uint8_t> fill(0x2000);
    for (size_t i = 0; i < fill.size(); i++)
        fill[i] = (uint8_t)(i * 7);
    ASSERT_EQ(es_write(m, EST_DATA, fill.data(), (unsigned)fill.size()), 0);

    es_machine before = *m;
    auto data = region(m, EST_DATA, 0x2000), stack = region(m, EST_STACK_TOP - 0x1000, 0x1000);

    es_transient *x = es_transient_begin(m, EST_CODE);
    ASSERT_NE(x, nullptr);
    int rc, n = 0;
    while ((rc = es_step_transient(m, nullptr, nullptr)) == ES_OK)
        n++;
    EXPECT_EQ(rc, ES_FAULT);
    EXPECT_EQ(m->fault.vector, ES_VEC_PF);
    EXPECT_EQ(n, 15); // every instruction up to the faulting load
    // the wrong path really wrote: the stores are there until the squash
    EXPECT_EQ(region(m, EST_DATA, 8)[0], 0x11);
    EXPECT_EQ(region(m, EST_DATA + 0x280, 300), std::vector<uint8_t>(300, 0xab));
    es_transient_end(m, x);

    EXPECT_EQ(region(m, EST_DATA, 0x2000), data);
    EXPECT_EQ(region(m, EST_STACK_TOP - 0x1000, 0x1000), stack);
    EXPECT_EQ(memcmp(m->gpr, before.gpr, sizeof m->gpr), 0);
    EXPECT_EQ(m->rip, before.rip);
    EXPECT_EQ(m->rflags, before.rflags);
    EXPECT_EQ(memcmp(m->xmm, before.xmm, sizeof m->xmm), 0);
    EXPECT_EQ(m->fault.vector, before.fault.vector);
    EXPECT_EQ(m->stop, before.stop);
    EXPECT_EQ(m->icount, before.icount);
    EXPECT_EQ(m->spec, nullptr);
    EXPECT_EQ(m->tlb_bypass, before.tlb_bypass);
    // and the machine runs on from where it was
    EXPECT_EQ(es_step(m), ES_OK);
    EXPECT_EQ(m->gpr[ES_RAX], 0x44332211u);
    es_machine_free(m);
}

// pre() sees each decode first and may end the window before it runs.
TEST(Transient, PreEndsTheWindowBeforeTheInstruction)
{
    es_machine *m = est_new(ES_MODE_64);
    ASSERT_NE(m, nullptr);
    ASSERT_EQ(est_code(m, WRONG_PATH, sizeof WRONG_PATH), 0);
    m->gpr[ES_RDI] = EST_DATA;
    auto data = region(m, EST_DATA, 64);
    es_transient *x = es_transient_begin(m, EST_CODE);
    ASSERT_NE(x, nullptr);
    int seen = 0;
    auto pre = [](void *ctx, es_machine *, const es_insn *) { return ++*(int *)ctx < 2; };
    EXPECT_EQ(es_step_transient(m, pre, &seen), ES_OK);   // mov rax, imm
    EXPECT_EQ(es_step_transient(m, pre, &seen), ES_STOP); // the store: refused
    EXPECT_EQ(region(m, EST_DATA, 64), data);
    es_transient_end(m, x);
    EXPECT_EQ(m->gpr[ES_RAX], 0u);
    es_machine_free(m);
}

} // namespace
