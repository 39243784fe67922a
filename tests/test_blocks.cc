// The run loop's block cache (issue 18): es_run executes pre-decoded basic
// blocks and chains them, and everything the per-instruction loop
// guaranteed must still hold -- self-modifying code, faults in the middle
// of a block with exact state, --max-insns landing mid-block, stepping and
// stopping inside blocks, code pages remapped under a cached block, blocks
// next to a page boundary.  Each case runs code through es_run more than
// once so its blocks are cached (and chained) before the event under test.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "code_rand.h"
#include "es_shim.h"
#include "es_syscall_names.h"
#include "host.h"
#include "machine.h"
#include "mem.h"
#include "vm.h"

namespace {

// a writable and executable region: code is written to it as the kernel
// writes (es_copy_to_guest), and self-modifying code can store to it
const uint64_t W = 0x700000;
const uint64_t C = W + 0x2000;

struct Blocks : ::testing::Test {
    es_machine *m = nullptr;
    void SetUp() override
    {
        m = est_new(ES_MODE_64);
        ASSERT_NE(m, nullptr);
        for (uint64_t a = 0; a < 0x3000; a += 0x1000)
            ASSERT_EQ(est_map(m, W + a, 1, 1), 0);
    }
    void TearDown() override
    {
        if (m && m->host)
            es_host_free(m);
        es_machine_free(m);
    }
    // code at va, written as the kernel would (stale decodes die)
    void load(uint64_t va, const std::vector<uint8_t> &code)
    {
        ASSERT_EQ(es_copy_to_guest(m, va, code.data(), code.size()), 0);
        m->rip = va;
    }
    // runs at most n more instructions (0: no limit); returns the stop
    int run(uint64_t n = 0)
    {
        m->max_insns = n ? m->icount + n : 0;
        return es_run(m);
    }
    // runs to the HLT ending the code: at CPL 3 it raises #GP(0) there
    void run_to_hlt(uint64_t hlt)
    {
        ASSERT_EQ(run(10000000), ES_STOP_FAULT) << m->message;
        EXPECT_EQ(m->fault.vector, ES_VEC_GP) << m->message;
        EXPECT_EQ(m->rip, hlt);
    }
};

// A store into the block being executed changes the instructions after it
// in that block: they must run as rewritten, not as decoded.
TEST_F(Blocks, SelfModifyingStoreIntoTheRunningBlock)
{
    load(W, {
                0x31, 0xdb,                         // 0: xor ebx, ebx
                0x31, 0xc9,                         // 2: xor ecx, ecx
                0x88, 0x0d, 0x03, 0x00, 0x00, 0x00, // 4: mov [rip+3], cl  (the imm8 at 0xd)
                0x90,                               // a: nop
                0x83, 0xc3, 0x00,                   // b: add ebx, imm8
                0xff, 0xc1,                         // e: inc ecx
                0x83, 0xf9, 0x04,                   // 10: cmp ecx, 4
                0x75, 0xef,                         // 13: jne 4
                0xf4,                               // 15: hlt
            });
    run_to_hlt(W + 0x15);
    EXPECT_EQ(m->gpr[ES_RBX], 0u + 1 + 2 + 3);
    EXPECT_EQ(m->icount, 2u + 4 * 6);
    // again, from the cached (and since rewritten) code
    m->rip = W;
    run_to_hlt(W + 0x15);
    EXPECT_EQ(m->gpr[ES_RBX], 6u);
}

// A store into the block that follows (reached by a jump the cache
// chains) must retire the chained successor.
TEST_F(Blocks, SelfModifyingStoreIntoTheChainedSuccessor)
{
    load(W, {
                0x31, 0xdb,                         // 0: xor ebx, ebx
                0x31, 0xc9,                         // 2: xor ecx, ecx
                0x88, 0x0d, 0x05, 0x00, 0x00, 0x00, // 4: mov [rip+5], cl  (the imm8 at 0xf)
                0xeb, 0x01,                         // a: jmp d
                0x90,                               // c: nop
                0x83, 0xc3, 0x00,                   // d: add ebx, imm8
                0xff, 0xc1,                         // 10: inc ecx
                0x83, 0xf9, 0x08,                   // 12: cmp ecx, 8
                0x75, 0xed,                         // 15: jne 4
                0xf4,                               // 17: hlt
            });
    run_to_hlt(W + 0x17);
    EXPECT_EQ(m->gpr[ES_RBX], 28u); // 0 + 1 + ... + 7
}

// A fault on the fourth instruction of a cached block: the first three
// retired (registers, flags, count), the fourth and later did nothing, RIP
// is the faulting instruction.
TEST_F(Blocks, FaultInTheMiddleOfACachedBlockLeavesExactState)
{
    const std::vector<uint8_t> code = {
        0xb8, 0x01, 0x00, 0x00, 0x00,                   // 0: mov eax, 1
        0xbb, 0xff, 0xff, 0xff, 0x7f,                   // 5: mov ebx, 0x7fffffff
        0x01, 0xd8,                                     // a: add eax, ebx (OF, SF, AF, PF)
        0x48, 0x8b, 0x0c, 0x25, 0x00, 0x10, 0x00, 0x00, // c: mov rcx, [0x1000]  #PF
        0xba, 0x05, 0x00, 0x00, 0x00,                   // 14: mov edx, 5
        0xf4,                                           // 19: hlt
    };
    load(C + 0x100, code);
    for (int pass = 0; pass < 3; pass++) {
        SCOPED_TRACE(pass);
        m->rip = C + 0x100;
        m->gpr[ES_RAX] = m->gpr[ES_RBX] = 0;
        m->gpr[ES_RCX] = m->gpr[ES_RDX] = 0x77;
        m->rflags = 0x202;
        uint64_t n0 = m->icount, d0 = m->decodes;
        ASSERT_EQ(run(), ES_STOP_FAULT);
        EXPECT_EQ(m->fault.vector, ES_VEC_PF);
        EXPECT_EQ(m->fault.error, (uint32_t)ES_PFEC_U);
        EXPECT_EQ(m->fault.addr, 0x1000u);
        EXPECT_EQ(m->fault.rip, C + 0x10c);
        EXPECT_EQ(m->rip, C + 0x10c);
        EXPECT_EQ(m->icount - n0, 3u);
        EXPECT_EQ(m->gpr[ES_RAX], 0x80000000u);
        EXPECT_EQ(m->gpr[ES_RBX], 0x7fffffffu);
        EXPECT_EQ(m->gpr[ES_RCX], 0x77u);
        EXPECT_EQ(m->gpr[ES_RDX], 0x77u);
        EXPECT_EQ(m->rflags & (ES_ARITH_FLAGS | 0xffff0000u), (uint64_t)(ES_OF | ES_SF | ES_AF | ES_PF));
        if (pass > 0) { // the second run decoded nothing: the block was cached
            EXPECT_EQ(m->decodes, d0);
        }
    }
}

// A load walking off the end of the data region faults in a hot, cached,
// self-chained loop block: the count of iterations and RIP are exact.
TEST_F(Blocks, FaultInAHotLoopBlock)
{
    load(C, {
                0x48, 0xc7, 0xc3, 0x00, 0x00, 0x60, 0x00, // 0: mov rbx, 0x600000
                0x31, 0xc9,                               // 7: xor ecx, ecx
                0x48, 0x8b, 0x03,                         // 9: mov rax, [rbx]
                0x48, 0x83, 0xc3, 0x08,                   // c: add rbx, 8
                0xff, 0xc1,                               // 10: inc ecx
                0xeb, 0xf5,                               // 12: jmp 9
            });
    ASSERT_EQ(run(), ES_STOP_FAULT);
    EXPECT_EQ(m->fault.vector, ES_VEC_PF);
    EXPECT_EQ(m->fault.addr, EST_DATA + 0x10000);
    EXPECT_EQ(m->rip, C + 9);
    EXPECT_EQ(m->gpr[ES_RBX], EST_DATA + 0x10000);
    EXPECT_EQ(m->gpr[ES_RCX], 0x10000u / 8);
    EXPECT_EQ(m->icount, 2 + 4 * (0x10000u / 8));
}

// A block of more fast instructions than a block holds ends at its
// sentinel with no branch: the threaded chain runs to it, RIP goes on to
// the fall-through block, and the count and flags are exact -- on the
// first run (decoding) and the cached ones.
TEST_F(Blocks, LongStraightLineRunsThroughTheSentinel)
{
    std::vector<uint8_t> code;
    for (int i = 0; i < 150; i++) // add eax, 1 (83 c0 01): 3 bytes each
        code.insert(code.end(), {0x83, 0xc0, 0x01});
    code.push_back(0xf4); // hlt
    load(C, code);
    for (int pass = 0; pass < 3; pass++) {
        SCOPED_TRACE(pass);
        m->rip = C;
        m->gpr[ES_RAX] = 0xffffff00;
        uint64_t n0 = m->icount;
        run_to_hlt(C + 450);
        EXPECT_EQ(m->icount - n0, 150u);
        EXPECT_EQ(m->gpr[ES_RAX], 0xffffff96u);
        EXPECT_EQ(m->rflags & ES_ARITH_FLAGS, (uint64_t)(ES_SF | ES_PF)); // 0x95 + 1
    }
}

// A compare against memory fused with its Jcc faults in a cached block:
// nothing of the pair retires, RIP is the compare, and what came before
// in the block retired.
TEST_F(Blocks, FusedCompareAgainstMemoryFaultsWithExactState)
{
    load(C, {
                0x48, 0x83, 0xc3, 0x08, // 0: add rbx, 8
                0x80, 0x3b, 0x00,       // 4: cmp byte [rbx], 0
                0x74, 0xf7,             // 7: je 0
                0xf4,                   // 9: hlt
            });
    for (int pass = 0; pass < 3; pass++) {
        SCOPED_TRACE(pass);
        m->rip = C;
        m->gpr[ES_RBX] = 0x1000 - 8; // [rbx] after the add: unmapped
        uint64_t n0 = m->icount;
        ASSERT_EQ(run(), ES_STOP_FAULT);
        EXPECT_EQ(m->fault.vector, ES_VEC_PF);
        EXPECT_EQ(m->fault.addr, 0x1000u);
        EXPECT_EQ(m->fault.rip, C + 4);
        EXPECT_EQ(m->rip, C + 4);
        EXPECT_EQ(m->icount - n0, 1u);
        EXPECT_EQ(m->gpr[ES_RBX], 0x1000u);
    }
}

// The stack and near transfers run by their specialised handlers: a call
// and ret pair in a loop, then a ret to a non-canonical address faults
// (#GP) at the ret with RSP and the count exact, and a push into an
// unmapped stack page faults at the push -- in cached blocks.
TEST_F(Blocks, CallRetPushPopFaultWithExactState)
{
    load(C, {
                0x31, 0xc9,                               // 0: xor ecx, ecx
                0xe8, 0x09, 0x00, 0x00, 0x00,             // 2: call 0x10
                0xff, 0xc1,                               // 7: inc ecx
                0x83, 0xf9, 0x05,                         // 9: cmp ecx, 5
                0x75, 0xf4,                               // c: jne 2
                0x53,                                     // e: push rbx
                0xc3,                                     // f: ret (to rbx)
                0x50,                                     // 10: push rax
                0x41, 0x5a,                               // 11: pop r10
                0xc3,                                     // 13: ret
            });
    const uint64_t top = EST_STACK_TOP - 0x100;
    for (int pass = 0; pass < 3; pass++) {
        SCOPED_TRACE(pass);
        m->rip = C;
        m->gpr[ES_RSP] = top;
        m->gpr[ES_RAX] = 0x1234;
        m->gpr[ES_RBX] = 0x8000000000000000ull; // non-canonical: the last ret's target
        uint64_t n0 = m->icount;
        ASSERT_EQ(run(), ES_STOP_FAULT);
        EXPECT_EQ(m->fault.vector, ES_VEC_GP);
        EXPECT_EQ(m->fault.rip, C + 0xf);
        EXPECT_EQ(m->rip, C + 0xf);
        EXPECT_EQ(m->gpr[ES_RCX], 5u);
        EXPECT_EQ(m->gpr[ES_R10], 0x1234u);
        EXPECT_EQ(m->gpr[ES_RSP], top - 8); // the push happened, the ret popped nothing
        // xor, then 5 x (call, push, pop, ret, inc, cmp, jne), push
        EXPECT_EQ(m->icount - n0, 1u + 5 * 7 + 1);
    }
    // a push with RSP at the bottom of the mapped stack
    load(C + 0x100, {0x48, 0x89, 0xe0, 0x53, 0xf4}); // mov rax, rsp; push rbx; hlt
    for (int pass = 0; pass < 2; pass++) {
        m->rip = C + 0x100;
        m->gpr[ES_RSP] = 0x1008; // below it, nothing is mapped
        uint64_t n0 = m->icount;
        ASSERT_EQ(run(), ES_STOP_FAULT);
        EXPECT_EQ(m->fault.vector, ES_VEC_PF);
        EXPECT_EQ(m->fault.rip, C + 0x103);
        EXPECT_EQ(m->gpr[ES_RSP], 0x1008u);
        EXPECT_EQ(m->gpr[ES_RAX], 0x1008u);
        EXPECT_EQ(m->icount - n0, 1u);
    }
}

// --max-insns stops after exactly that many instructions, wherever in a
// block that falls, and a later run resumes there.
TEST_F(Blocks, MaxInsnsLandsInTheMiddleOfABlock)
{
    load(C, {
                0x31, 0xc0,                         // 0: xor eax, eax
                0xff, 0xc0, 0xff, 0xc0, 0xff, 0xc0, // 2: inc eax x 6
                0xff, 0xc0, 0xff, 0xc0, 0xff, 0xc0, //
                0xeb, 0xf2,                         // e: jmp 2
            });
    ASSERT_EQ(run(1 + 7 * 100 + 3), ES_STOP_INSNS);
    EXPECT_EQ(m->icount, 704u);
    EXPECT_EQ(m->gpr[ES_RAX], 603u);
    EXPECT_EQ(m->rip, C + 8);
    ASSERT_EQ(run(2), ES_STOP_INSNS);
    EXPECT_EQ(m->gpr[ES_RAX], 605u);
    EXPECT_EQ(m->rip, C + 0xc);
    ASSERT_EQ(run(5), ES_STOP_INSNS);
    EXPECT_EQ(m->gpr[ES_RAX], 609u);
    EXPECT_EQ(m->rip, C + 8);
    // across es_run's internal batches of 65536
    ASSERT_EQ(run(7 * 20000 + 1), ES_STOP_INSNS);
    EXPECT_EQ(m->gpr[ES_RAX], 609u + 6 * 20000 + 1);
    EXPECT_EQ(m->rip, C + 0xa);
    EXPECT_EQ(m->icount, 704u + 2 + 5 + 7 * 20000 + 1);
}

// The state after every instruction of a program with loops, a call, a
// memory read-modify-write and flags, reached by runs of 1..9 instructions
// alternating with single steps (a debugger stopping inside blocks), equals
// the state of a machine that only steps.
TEST_F(Blocks, RunsAndStepsInterleavedMatchSteppingAlone)
{
    const std::vector<uint8_t> code = {
        0x31, 0xc0,                               // 0: xor eax, eax
        0x31, 0xc9,                               // 2: xor ecx, ecx
        0x48, 0xc7, 0xc3, 0x00, 0x00, 0x60, 0x00, // 4: mov rbx, 0x600000
        0x01, 0x0b,                               // b: add [rbx], ecx
        0x03, 0x03,                               // d: add eax, [rbx]
        0x48, 0x83, 0xc3, 0x08,                   // f: add rbx, 8
        0xff, 0xc1,                               // 13: inc ecx
        0xe8, 0x09, 0x00, 0x00, 0x00,             // 15: call 23
        0x81, 0xf9, 0xe8, 0x03, 0x00, 0x00,       // 1a: cmp ecx, 1000
        0x75, 0xe9,                               // 20: jne b
        0xf4,                                     // 22: hlt
        0xc1, 0xc0, 0x03,                         // 23: rol eax, 3
        0xc3,                                     // 26: ret
    };
    struct State {
        uint64_t rip, rflags, gpr[16];
    };
    auto snap = [](es_machine *x) {
        State s;
        s.rip = x->rip;
        s.rflags = x->rflags;
        memcpy(s.gpr, x->gpr, sizeof s.gpr);
        return s;
    };
    // the reference: es_step alone
    es_machine *r = est_new(ES_MODE_64);
    ASSERT_NE(r, nullptr);
    ASSERT_EQ(est_map(r, C, 1, 1), 0);
    ASSERT_EQ(es_copy_to_guest(r, C, code.data(), code.size()), 0);
    r->rip = C;
    std::vector<State> ref{snap(r)};
    while (es_step(r) == ES_OK)
        ref.push_back(snap(r));
    ASSERT_EQ(r->fault.vector, ES_VEC_GP); // the hlt
    ASSERT_EQ(ref.size(), 3 + 1000 * 9 + 1u);
    load(C, code);
    for (unsigned k = 0; m->icount + 1 < ref.size(); k++) {
        uint64_t n = 1 + (k * 7) % 9;
        if (m->icount + n >= ref.size())
            n = ref.size() - 1 - m->icount;
        if (k % 3 == 2)
            ASSERT_EQ(es_step(m), ES_OK);
        else
            ASSERT_EQ(run(n), ES_STOP_INSNS) << m->message;
        const State &s = ref[m->icount], t = snap(m);
        ASSERT_EQ(t.rip, s.rip) << "after " << m->icount;
        ASSERT_EQ(t.rflags, s.rflags) << "after " << m->icount;
        ASSERT_EQ(memcmp(t.gpr, s.gpr, sizeof s.gpr), 0) << "after " << m->icount;
    }
    for (uint64_t a = EST_DATA; a < EST_DATA + 8000; a += 8) {
        uint64_t x = 0, y = 0;
        ASSERT_EQ(es_read(m, a, &x, 8), 0);
        ASSERT_EQ(es_read(r, a, &y, 8), 0);
        ASSERT_EQ(x, y) << std::hex << a;
    }
    es_machine_free(r);
}

// POPF setting RFLAGS.TF in the middle of a block: exactly one more
// instruction runs, then the single-step trap (#DB) is taken.
TEST_F(Blocks, TrapFlagSetInsideABlockTrapsAfterOneInstruction)
{
    load(C, {
                0x9c,                                           // 0: pushf
                0x48, 0x81, 0x0c, 0x24, 0x00, 0x01, 0x00, 0x00, // 1: or qword [rsp], 0x100
                0x9d,                                           // 9: popf
                0xff, 0xc0,                                     // a: inc eax
                0xff, 0xc0,                                     // c: inc eax
                0xf4,                                           // e: hlt
            });
    for (int pass = 0; pass < 2; pass++) {
        m->rip = C;
        m->gpr[ES_RAX] = 0;
        m->rflags = 0x202;
        ASSERT_EQ(run(), ES_STOP_FAULT);
        EXPECT_EQ(m->fault.vector, ES_VEC_DB);
        EXPECT_EQ(m->rip, C + 0xc);
        EXPECT_EQ(m->gpr[ES_RAX], 1u);
    }
}

// Code across a page boundary: an instruction straddling it heads a loop
// whose rest is on the second page.  Rewriting the second page and
// remapping it under the cached code both take effect.
TEST_F(Blocks, CodeAcrossAPageBoundary)
{
    const uint64_t B = W + 0x1000; // the boundary
    load(B - 9, {
                    0x31, 0xdb,                   // -9: xor ebx, ebx
                    0xb9, 0x05, 0x00, 0x00, 0x00, // -7: mov ecx, 5
                    0x83, 0xc3, 0x02,             // -2: add ebx, 2  (its imm8 at +0)
                    0xff, 0xc9,                   // +1: dec ecx
                    0x75, 0xf9,                   // +3: jnz -2
                    0xf4,                         // +5: hlt
                });
    run_to_hlt(B + 5);
    EXPECT_EQ(m->gpr[ES_RBX], 10u);
    // the immediate on the second page rewritten (as the kernel writes)
    uint8_t imm = 3;
    ASSERT_EQ(es_copy_to_guest(m, B, &imm, 1), 0);
    m->rip = B - 9;
    run_to_hlt(B + 5);
    EXPECT_EQ(m->gpr[ES_RBX], 15u);
    // the second page remapped to a fresh frame holding other bytes; the
    // TLB flush is what munmap/mmap do
    uint64_t *pte = es_pte(m, m->cr3, B, false);
    ASSERT_NE(pte, nullptr);
    uint64_t old = *pte;
    uint64_t pfn = es_frame_alloc(m);
    ASSERT_NE(pfn, 0u);
    *pte = (pfn << 12) | ES_PTE_P | ES_PTE_U | ES_PTE_W;
    es_tlb_flush_page(m, B);
    const uint8_t code2[] = {0x07, 0xff, 0xc9, 0x75, 0xf9, 0xf4}; // imm8 7; dec; jnz; hlt
    memcpy(es_phys(m, pfn << 12), code2, sizeof code2);
    m->rip = B - 9;
    run_to_hlt(B + 5);
    EXPECT_EQ(m->gpr[ES_RBX], 35u);
    // the old frame back, not executable: fetching the straddler faults
    *pte = old | ES_PTE_NX;
    es_tlb_flush_page(m, B);
    m->rip = B - 9;
    uint64_t n0 = m->icount;
    ASSERT_EQ(run(), ES_STOP_FAULT);
    EXPECT_EQ(m->fault.vector, ES_VEC_PF);
    EXPECT_EQ(m->fault.error, (uint32_t)(ES_PFEC_P | ES_PFEC_U | ES_PFEC_I));
    EXPECT_EQ(m->fault.addr, B);
    EXPECT_EQ(m->rip, B - 2);
    EXPECT_EQ(m->icount - n0, 2u);
}

// The guest's own mprotect of a code page it has run (cached blocks, a
// call chained to them) makes the next call fault; munmap and a new
// mapping with other code at the same address run the new code.
TEST_F(Blocks, CodePagesRemappedByMprotectAndMunmap)
{
    es_host_config cfg = {};
    cfg.root = "/";
    cfg.stdin_fd = cfg.stdout_fd = cfg.stderr_fd = -1;
    ASSERT_EQ(es_host_init(m, &cfg), 0) << m->message;
    const uint64_t P = 0x10000000, F = P + 0x2000; // caller page, callee page
    const int RWX = ES_PROT_R | ES_PROT_W | ES_PROT_X;
    ASSERT_EQ(es_vm_map(m, P, 0x1000, RWX), 0);
    ASSERT_EQ(es_vm_map(m, F, 0x1000, RWX), 0);
    const std::vector<uint8_t> callee = {0xff, 0xc3, 0xc3}; // inc ebx; ret
    ASSERT_EQ(es_copy_to_guest(m, F, callee.data(), callee.size()), 0);
    load(P, {
                0xe8, 0xfb, 0x1f, 0x00, 0x00, // 0: call F
                0xe8, 0xf6, 0x1f, 0x00, 0x00, // 5: call F
                0xb8, 0x0a, 0x00, 0x00, 0x00, // a: mov eax, 10 (mprotect)
                0xbf, 0x00, 0x20, 0x00, 0x10, // f: mov edi, F
                0xbe, 0x00, 0x10, 0x00, 0x00, // 14: mov esi, 0x1000
                0xba, 0x01, 0x00, 0x00, 0x00, // 19: mov edx, PROT_READ
                0x0f, 0x05,                   // 1e: syscall
                0xe8, 0xdb, 0x1f, 0x00, 0x00, // 20: call F
                0xf4,                         // 25: hlt
            });
    for (int pass = 0; pass < 2; pass++) {
        SCOPED_TRACE(pass);
        m->rip = P;
        m->gpr[ES_RBX] = 0;
        m->gpr[ES_RSP] = EST_STACK_TOP - 0x100;
        ASSERT_EQ(run(), ES_STOP_FAULT) << m->message;
        EXPECT_EQ(m->fault.vector, ES_VEC_PF);
        EXPECT_EQ(m->fault.error, (uint32_t)(ES_PFEC_P | ES_PFEC_U | ES_PFEC_I));
        EXPECT_EQ(m->rip, F);
        EXPECT_EQ(m->gpr[ES_RBX], 2u);
        EXPECT_EQ(m->gpr[ES_RAX], 0u); // mprotect's result
        // executable again for the next pass
        uint64_t a[6] = {F, 0x1000, ES_PROT_R | ES_PROT_X};
        ASSERT_EQ(es_host_call(m, ES_ABI_X64, ES_NR64_mprotect, a), 0);
    }
    // munmap, then a new mapping at the same address with other code
    uint64_t u[6] = {F, 0x1000};
    ASSERT_EQ(es_host_call(m, ES_ABI_X64, ES_NR64_munmap, u), 0);
    m->rip = P;
    m->gpr[ES_RSP] = EST_STACK_TOP - 0x100;
    ASSERT_EQ(run(), ES_STOP_FAULT);
    EXPECT_EQ(m->fault.vector, ES_VEC_PF);
    EXPECT_EQ(m->fault.error, (uint32_t)(ES_PFEC_U | ES_PFEC_I));
    EXPECT_EQ(m->rip, F);
    ASSERT_EQ(es_vm_map(m, F, 0x1000, RWX), 0);
    const std::vector<uint8_t> other = {0x83, 0xc3, 0x64, 0xc3}; // add ebx, 100; ret
    ASSERT_EQ(es_copy_to_guest(m, F, other.data(), other.size()), 0);
    m->rip = P;
    m->gpr[ES_RBX] = 0;
    m->gpr[ES_RSP] = EST_STACK_TOP - 0x100;
    ASSERT_EQ(run(), ES_STOP_FAULT); // the guest's mprotect again
    EXPECT_EQ(m->fault.error, (uint32_t)(ES_PFEC_P | ES_PFEC_U | ES_PFEC_I));
    EXPECT_EQ(m->rip, F);
    EXPECT_EQ(m->gpr[ES_RBX], 200u);
}

} // namespace

namespace {

// Random code built from the forms sim/isa/fast.c specialises (ALU and
// MOV on registers and immediates at 32 and 64 bits, loads, stores and CMP
// through [rbx+disp8] both ways, byte and word moves and byte compares,
// MOVZX/MOVSX/MOVSXD, PUSH/POP, Jcc by every condition), with random
// values: es_run
// (the specialised handlers) must leave registers, flags and memory as
// es_step (the generic handlers of isa.tbl) does.
struct Gen : CodeRand {
    void one(std::vector<uint8_t> &c)
    {
        static const uint8_t rr[] = {0x01, 0x29, 0x21, 0x09, 0x31, 0x39, 0x85, 0x89};
        static const uint8_t digit[] = {0, 1, 4, 5, 6, 7};
        bool w = next() & 1;
        uint8_t disp = (uint8_t)((next() % 15) * 8 + (next() % 4 == 0 ? next() % 8 : 0));
        switch (next() % 15) {
        case 13: { // byte and word moves and byte compares (REX: sil/dil, not dh/bh)
            uint8_t r1 = (uint8_t)reg(), r2 = (uint8_t)reg();
            switch (next() % 11) {
            case 10: c.insert(c.end(), {0x66, 0x89, (uint8_t)(0xc0 | r1 << 3 | r2)}); break;
            case 0: c.insert(c.end(), {0x40, 0x88, (uint8_t)(0xc0 | r1 << 3 | r2)}); break;
            case 1: c.insert(c.end(), {0x40, 0x8a, (uint8_t)(0x43 | r1 << 3), disp}); break;
            case 2: c.insert(c.end(), {0x66, 0x8b, (uint8_t)(0x43 | r1 << 3), disp}); break;
            case 3: c.insert(c.end(), {0x66, 0x89, (uint8_t)(0x43 | r1 << 3), disp}); break;
            case 4: c.insert(c.end(), {0x40, 0x38, (uint8_t)(0xc0 | r1 << 3 | r2)}); break;
            case 5: c.insert(c.end(), {0x40, 0x3a, (uint8_t)(0x43 | r1 << 3), disp}); break;
            case 6: c.insert(c.end(), {0x66, (uint8_t)(0xb8 | r1)}); imm(c, 2); break;
            case 7: c.insert(c.end(), {0x40, 0x80, (uint8_t)(0xf8 | r1)}); imm(c, 1); break;
            case 8: c.insert(c.end(), {0x40, 0x38, (uint8_t)(0x43 | r1 << 3), disp}); break;
            default: c.insert(c.end(), {0x66, 0xc7, 0x43, disp}); imm(c, 2); break;
            }
            break;
        }
        case 10: // cmp r, [rbx+d]
            if (w) c.push_back(0x48);
            c.insert(c.end(), {0x3b, (uint8_t)(0x43 | reg() << 3), disp});
            break;
        case 11: { // movzx/movsx r, r8/r16/[rbx+d]; movsxd r64, r32/[rbx+d]
            static const uint8_t op2[] = {0xb6, 0xb7, 0xbe, 0xbf};
            bool mem = next() & 1;
            uint8_t modrm = mem ? (uint8_t)(0x43 | reg() << 3) : (uint8_t)(0xc0 | reg() << 3 | reg());
            if (next() % 5 == 0) {
                c.insert(c.end(), {0x48, 0x63, modrm});
            } else {
                if (w || !mem) c.push_back(w ? 0x48 : 0x40); // REX: sil/dil, not dh/bh
                c.insert(c.end(), {0x0f, op2[next() % 4], modrm});
            }
            if (mem) c.push_back(disp);
            break;
        }
        case 14: { // sbb r, r (the same register: array_index_nospec's mask)
            uint8_t r = (uint8_t)reg();
            if (w) c.push_back(0x48);
            c.insert(c.end(), {0x19, (uint8_t)(0xc0 | r << 3 | r)});
            break;
        }
        case 12: // push r / imm8, pop r (balanced: RSP ends where it started)
            if (next() & 1) c.push_back((uint8_t)(0x50 | reg()));
            else { c.push_back(0x6a); imm(c, 1); }
            c.push_back((uint8_t)(0x58 | reg()));
            break;
        case 0: case 1: // op r, r
            if (w) c.push_back(0x48);
            c.insert(c.end(), {rr[next() % 8], (uint8_t)(0xc0 | reg() << 3 | reg())});
            break;
        case 2: // op r, imm8 / imm32; test r, imm32
            if (w) c.push_back(0x48);
            switch (next() % 3) {
            case 0: c.insert(c.end(), {0x83, (uint8_t)(0xc0 | digit[next() % 6] << 3 | reg())}); imm(c, 1); break;
            case 1: c.insert(c.end(), {0x81, (uint8_t)(0xc0 | digit[next() % 6] << 3 | reg())}); imm(c, 4); break;
            default: c.insert(c.end(), {0xf7, (uint8_t)(0xc0 | reg())}); imm(c, 4); break;
            }
            break;
        case 3: // mov r, imm32 / r64, simm32 / movabs
            if (next() & 1) { c.push_back((uint8_t)(0xb8 | reg())); imm(c, 4); }
            else if (w) { c.insert(c.end(), {0x48, (uint8_t)(0xb8 | reg())}); imm(c, 8); }
            else { c.insert(c.end(), {0x48, 0xc7, (uint8_t)(0xc0 | reg())}); imm(c, 4); }
            break;
        case 4: // load, store r32/r64 through [rbx+disp8]
            if (w) c.push_back(0x48);
            c.insert(c.end(), {(uint8_t)(next() & 1 ? 0x8b : 0x89), (uint8_t)(0x43 | reg() << 3), disp});
            break;
        case 5: // byte store of al..dl, immediate stores of every width
            switch (next() % 4) {
            case 0: c.insert(c.end(), {0x88, (uint8_t)(0x43 | (next() % 3) << 3), disp}); break;
            case 1: c.insert(c.end(), {0xc6, 0x43, disp}); imm(c, 1); break;
            case 2: c.insert(c.end(), {0xc7, 0x43, disp}); imm(c, 4); break;
            default: c.insert(c.end(), {0x48, 0xc7, 0x43, disp}); imm(c, 4); break;
            }
            break;
        case 6: // cmp byte/dword/qword [rbx+d], imm8; cmp [rbx+d], r
            switch (next() % 3) {
            case 0: c.insert(c.end(), {0x80, 0x7b, disp}); imm(c, 1); break;
            case 1: if (w) c.push_back(0x48); c.insert(c.end(), {0x83, 0x7b, disp}); imm(c, 1); break;
            default: if (w) c.push_back(0x48); c.insert(c.end(), {0x39, (uint8_t)(0x43 | reg() << 3), disp}); break;
            }
            break;
        default: // jcc over an inc: every condition, both lengths
            if (next() & 1) c.insert(c.end(), {(uint8_t)(0x70 | next() % 16), 0x02});
            else c.insert(c.end(), {0x0f, (uint8_t)(0x80 | next() % 16), 0x02, 0, 0, 0});
            c.insert(c.end(), {0xff, (uint8_t)(0xc0 | reg())});
            break;
        }
    }
};

TEST(BlocksFast, SpecialisedHandlersMatchTheGenericOnes)
{
    Gen g{{0x9e3779b97f4a7c15ull}};
    for (int round = 0; round < 300; round++) {
        std::vector<uint8_t> code;
        for (int i = 0; i < 60; i++)
            g.one(code);
        code.push_back(0xf4); // hlt: #GP at CPL 3 ends both runs
        es_machine *a = est_new(ES_MODE_64), *b = est_new(ES_MODE_64);
        ASSERT_TRUE(a && b);
        uint64_t regs[16], data[16], fl = 0x202 | (g.next() & ES_ARITH_FLAGS);
        for (uint64_t &r : regs)
            r = g.next() >> (g.next() % 64);
        for (uint64_t &d : data)
            d = g.next();
        for (es_machine *x : {a, b}) {
            ASSERT_EQ(est_map(x, W, 1, 1), 0);
            ASSERT_EQ(es_copy_to_guest(x, W, code.data(), code.size()), 0);
            ASSERT_EQ(es_write(x, EST_DATA, data, sizeof data), 0);
            memcpy(x->gpr, regs, sizeof regs);
            x->gpr[ES_RBX] = EST_DATA;
            x->gpr[ES_RSP] = EST_STACK_TOP - 0x100;
            x->rflags = fl;
            x->rip = W;
        }
        ASSERT_EQ(es_run(a), ES_STOP_FAULT);
        while (es_step(b) == ES_OK) {
        }
        SCOPED_TRACE(round);
        EXPECT_EQ(a->fault.vector, ES_VEC_GP);
        EXPECT_EQ(a->rip, b->rip);
        EXPECT_EQ(a->icount, b->icount);
        EXPECT_EQ(a->rflags, b->rflags);
        for (int r = 0; r < 16; r++)
            EXPECT_EQ(a->gpr[r], b->gpr[r]) << "gpr " << r;
        ExpectSameData(a, b);
        es_machine_free(a);
        es_machine_free(b);
        if (HasFailure())
            break;
    }
}

} // namespace
