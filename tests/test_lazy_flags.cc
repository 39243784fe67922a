// Lazy arithmetic flags in the block loop (issue 18): the specialised ALU
// handlers may record an operation instead of computing CF/PF/AF/ZF/SF/OF,
// but every reader must see exact flags -- Jcc, SETcc, CMOVcc, ADC/SBB,
// PUSHF, LAHF, INC/DEC and the other partial writers, SYSCALL (R11), an
// exception raised right after the producer, a --max-insns stop right
// after it, es_step (the debugger) after a run, and m->rflags whenever
// es_run returns.  The reference is always a machine that only steps (the
// generic handlers of isa.tbl, which compute flags eagerly).
//
// These pass on the eager core too: they are the contract a lazy core
// must keep, and were checked to fail against lazy cores missing one of
// the materialisation points (see the commit message).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "code_rand.h"
#include "es_shim.h"
#include "es_syscall_names.h"
#include "host.h"
#include "machine.h"
#include "mem.h"

namespace {

const uint64_t W = 0x700000; // writable and executable code region

struct State {
    uint64_t rip, rflags, icount, gpr[16];
    bool operator==(const State &o) const
    {
        return rip == o.rip && rflags == o.rflags && icount == o.icount &&
               !memcmp(gpr, o.gpr, sizeof gpr);
    }
};

State snap(const es_machine *x)
{
    State s;
    s.rip = x->rip;
    s.rflags = x->rflags;
    s.icount = x->icount;
    memcpy(s.gpr, x->gpr, sizeof s.gpr);
    return s;
}

std::ostream &operator<<(std::ostream &os, const State &s)
{
    os << std::hex << "rip=" << s.rip << " rflags=" << s.rflags << std::dec << " n=" << s.icount;
    return os;
}

es_machine *machine(const std::vector<uint8_t> &code, const uint64_t regs[16], uint64_t fl)
{
    es_machine *x = est_new(ES_MODE_64);
    if (!x)
        return nullptr;
    for (uint64_t a = 0; a < 0x2000; a += 0x1000)
        if (est_map(x, W + a, 1, 1))
            return nullptr;
    if (es_copy_to_guest(x, W, code.data(), code.size()))
        return nullptr;
    memcpy(x->gpr, regs, 16 * sizeof regs[0]);
    x->gpr[ES_RBX] = EST_DATA;
    x->gpr[ES_RSP] = EST_STACK_TOP - 0x100;
    x->rflags = fl;
    x->rip = W;
    return x;
}

int run(es_machine *x, uint64_t n = 0)
{
    x->max_insns = n ? x->icount + n : 0;
    return es_run(x);
}

// Random code: the producers sim/isa/fast.c specialises, then readers of
// every kind, partial writers, and jumps that end blocks (so a recorded
// operation crosses into the next, chained block).
struct Gen : CodeRand {
    unsigned low() { return (unsigned)(next() % 3); }  // al, cl, dl
    void w(std::vector<uint8_t> &c)
    {
        if (next() & 1)
            c.push_back(0x48);
    }
    uint8_t disp() { return (uint8_t)((next() % 15) * 8); }
    // a flag producer the block loop may run lazily
    void producer(std::vector<uint8_t> &c)
    {
        static const uint8_t rr[] = {0x01, 0x29, 0x21, 0x09, 0x31, 0x39, 0x85};
        static const uint8_t digit[] = {0, 1, 4, 5, 6, 7};
        switch (next() % 5) {
        case 0: case 1:
            w(c);
            c.insert(c.end(), {rr[next() % 7], (uint8_t)(0xc0 | reg() << 3 | reg())});
            break;
        case 2:
            w(c);
            if (next() & 1) { c.insert(c.end(), {0x83, (uint8_t)(0xc0 | digit[next() % 6] << 3 | reg())}); imm(c, 1); }
            else { c.insert(c.end(), {0x81, (uint8_t)(0xc0 | digit[next() % 6] << 3 | reg())}); imm(c, 4); }
            break;
        case 3: // equal operands now and then: ZF, and CF/SF edges
            w(c);
            { unsigned r = reg(); c.insert(c.end(), {0x39, (uint8_t)(0xc0 | r << 3 | r)}); }
            break;
        default: // cmp [rbx+d] with an immediate (byte, dword, qword) or a register
            switch (next() % 3) {
            case 0: c.insert(c.end(), {0x80, 0x7b, disp()}); imm(c, 1); break;
            case 1: w(c); c.insert(c.end(), {0x83, 0x7b, disp()}); imm(c, 1); break;
            default: w(c); c.insert(c.end(), {0x39, (uint8_t)(0x43 | reg() << 3), disp()}); break;
            }
            break;
        }
    }
    // an instruction reading (all or some of) the arithmetic flags
    void reader(std::vector<uint8_t> &c)
    {
        unsigned cc = (unsigned)(next() % 16);
        switch (next() % 14) {
        case 0: case 1: // jcc over an inc, short or near
            if (next() & 1) c.insert(c.end(), {(uint8_t)(0x70 | cc), 0x02});
            else c.insert(c.end(), {0x0f, (uint8_t)(0x80 | cc), 0x02, 0, 0, 0});
            c.insert(c.end(), {0xff, (uint8_t)(0xc0 | reg())});
            break;
        case 2: c.insert(c.end(), {0x0f, (uint8_t)(0x90 | cc), (uint8_t)(0xc0 | low())}); break; // setcc
        case 3: w(c); c.insert(c.end(), {0x0f, (uint8_t)(0x40 | cc), (uint8_t)(0xc0 | reg() << 3 | reg())}); break;
        case 4: w(c); c.insert(c.end(), {0x11, (uint8_t)(0xc0 | reg() << 3 | reg())}); break; // adc
        case 5: w(c); c.insert(c.end(), {0x83, (uint8_t)(0xd8 | reg())}); imm(c, 1); break;   // sbb imm
        case 6: c.insert(c.end(), {0x9c, (uint8_t)(0x58 | reg())}); break;                    // pushf; pop
        case 7: c.push_back(0x9f); break;                                                     // lahf
        case 8: w(c); c.insert(c.end(), {0xff, (uint8_t)((next() & 1 ? 0xc0 : 0xc8) | reg())}); break; // inc/dec
        case 9: c.push_back((uint8_t[]){0xf8, 0xf9, 0xf5}[next() % 3]); break;                // clc/stc/cmc
        case 10: w(c); c.insert(c.end(), {0xd1, (uint8_t)(0xd0 | reg())}); break;             // rcl r, 1
        case 11: w(c); c.insert(c.end(), {0x0f, 0xa3, (uint8_t)(0xc0 | reg() << 3 | reg())}); break; // bt
        case 12: c.insert(c.end(), {0xeb, 0x00}); break; // jmp to the next: a new block
        default: c.insert(c.end(), {0x9c, 0x9d}); break;  // pushf; popf (ends a block)
        }
    }
    std::vector<uint8_t> program(int n, bool fault_at_end)
    {
        std::vector<uint8_t> c;
        for (int i = 0; i < n; i++) {
            if (next() % 3)
                producer(c);
            reader(c);
        }
        producer(c);
        if (fault_at_end) // mov rax, [0x1000]: #PF right after the producer
            c.insert(c.end(), {0x48, 0x8b, 0x04, 0x25, 0x00, 0x10, 0x00, 0x00});
        else
            c.push_back(0xf4); // hlt: #GP at CPL 3
        return c;
    }
};

// Random programs run through es_run in pieces of 1..13 instructions
// (cached, chained blocks; the budget landing anywhere, in particular
// right after a producer) with single steps between some pieces: after
// each piece the state equals the stepping machine's after as many
// instructions, as does the final fault.
TEST(LazyFlagsRandom, ProgramsInPiecesMatchSteppingAlone)
{
    Gen g{{0x2545f4914f6cdd1dull}};
    for (int round = 0; round < 200; round++) {
        SCOPED_TRACE(round);
        std::vector<uint8_t> code = g.program(40, round % 2);
        uint64_t regs[16], fl = 0x202 | (g.next() & ES_ARITH_FLAGS);
        for (uint64_t &r : regs)
            r = g.next() >> (g.next() % 64);
        uint64_t data[16];
        for (uint64_t &d : data)
            d = g.next() >> (g.next() % 64);
        es_machine *r = machine(code, regs, fl), *a = machine(code, regs, fl);
        ASSERT_TRUE(r && a);
        ASSERT_EQ(es_write(r, EST_DATA, data, sizeof data), 0);
        ASSERT_EQ(es_write(a, EST_DATA, data, sizeof data), 0);
        std::vector<State> ref{snap(r)};
        while (es_step(r) == ES_OK)
            ref.push_back(snap(r));
        uint8_t vec = r->fault.vector;
        ASSERT_EQ(vec, round % 2 ? ES_VEC_PF : ES_VEC_GP);
        // a first whole run caches and chains the blocks
        ASSERT_EQ(run(a), ES_STOP_FAULT);
        EXPECT_EQ(snap(a), snap(r));
        a->rip = W;
        a->icount = 0;
        memcpy(a->gpr, regs, sizeof regs);
        a->gpr[ES_RBX] = EST_DATA;
        a->gpr[ES_RSP] = EST_STACK_TOP - 0x100;
        a->rflags = fl;
        ASSERT_EQ(es_write(a, EST_DATA, data, sizeof data), 0);
        for (unsigned k = 0; a->icount + 1 < ref.size(); k++) {
            uint64_t n = 1 + (g.next() % 13);
            if (a->icount + n >= ref.size())
                n = ref.size() - 1 - a->icount;
            if (k % 4 == 3)
                ASSERT_EQ(es_step(a), ES_OK);
            else
                ASSERT_EQ(run(a, n), ES_STOP_INSNS) << a->message;
            ASSERT_EQ(snap(a), ref[a->icount]);
        }
        ASSERT_EQ(run(a), ES_STOP_FAULT);
        EXPECT_EQ(a->fault.vector, vec);
        EXPECT_EQ(snap(a), snap(r));
        ExpectSameData(a, r);
        es_machine_free(a);
        es_machine_free(r);
        if (HasFailure())
            break;
    }
}

struct LazyFlags : ::testing::Test {
    es_machine *m = nullptr;
    void start(const std::vector<uint8_t> &code, uint64_t eax, uint64_t ebx)
    {
        uint64_t regs[16] = {};
        regs[ES_RAX] = eax;
        m = machine(code, regs, 0x202);
        ASSERT_NE(m, nullptr);
        m->gpr[ES_RBX] = ebx;
    }
    void again(uint64_t eax, uint64_t ebx)
    {
        m->rip = W;
        m->gpr[ES_RAX] = eax;
        m->gpr[ES_RBX] = ebx;
        m->rflags = 0x202;
    }
    void TearDown() override
    {
        if (m && m->host)
            es_host_free(m);
        es_machine_free(m);
    }
};

// cmp eax, ebx sets CF|SF|AF|PF for 1 - 2 (0xffffffff): what every reader
// below must see.
const uint64_t CMP_1_2 = ES_CF | ES_SF | ES_AF | ES_PF;

// A page fault on the instruction right after the producer, in a cached
// and chained block: RFLAGS is the producer's exactly.
TEST_F(LazyFlags, FaultRightAfterTheProducer)
{
    start({
              0x39, 0xd8,                                     // 0: cmp eax, ebx
              0x48, 0x8b, 0x0c, 0x25, 0x00, 0x10, 0x00, 0x00, // 2: mov rcx, [0x1000]  #PF
          },
          1, 2);
    for (int pass = 0; pass < 3; pass++) {
        again(1, 2);
        ASSERT_EQ(run(m), ES_STOP_FAULT);
        EXPECT_EQ(m->fault.vector, ES_VEC_PF);
        EXPECT_EQ(m->rip, W + 2);
        EXPECT_EQ(m->rflags, 0x202 | CMP_1_2);
    }
}

// --max-insns landing right after the producer, inside a hot loop block:
// RFLAGS is exact when es_run returns, and the Jcc after it still decides
// from it when the run resumes.
TEST_F(LazyFlags, MaxInsnsStopRightAfterTheProducer)
{
    start({
              0xff, 0xc0,       // 0: inc eax
              0x39, 0xd8,       // 2: cmp eax, ebx
              0x72, 0xfa,       // 4: jb 0
              0xf4,             // 6: hlt
          },
          0, 100);
    ASSERT_EQ(run(m, 3 * 40 + 2), ES_STOP_INSNS); // after the 41st cmp: 41 - 100
    EXPECT_EQ(m->rip, W + 4);
    EXPECT_EQ(m->rflags & ES_ARITH_FLAGS, (uint64_t)(ES_CF | ES_SF | ES_PF)); // 0xffffffc5
    ASSERT_EQ(run(m), ES_STOP_FAULT);
    EXPECT_EQ(m->rip, W + 6);
    EXPECT_EQ(m->gpr[ES_RAX], 100u);
    EXPECT_EQ(m->rflags & ES_ARITH_FLAGS, (uint64_t)(ES_ZF | ES_PF));
}

// Each reader after the producer in the same block, and in the next block
// (after a jmp), sees CF|SF|AF|PF of 1 - 2.
TEST_F(LazyFlags, EveryReaderSeesTheProducersFlags)
{
    const std::vector<uint8_t> code = {
        0x45, 0x39, 0xc8,       // cmp r8d, r9d
        0x0f, 0x92, 0xc1,       // setb cl
        0x45, 0x39, 0xc8,       // cmp r8d, r9d
        0x0f, 0x48, 0xd3,       // cmovs edx, ebx
        0x45, 0x39, 0xc8,       // cmp r8d, r9d
        0x11, 0xf6,             // adc esi, esi   (0 + CF)
        0x45, 0x39, 0xc8,       // cmp r8d, r9d
        0xeb, 0x00,             // jmp to the next: a new block
        0x19, 0xff,             // sbb edi, edi   (-CF)
        0x45, 0x39, 0xc8,       // cmp r8d, r9d
        0x9f,                   // lahf
        0x88, 0xe5,             // mov ch, ah
        0x45, 0x39, 0xc8,       // cmp r8d, r9d
        0x9c,                   // pushf
        0x41, 0x5a,             // pop r10
        0x45, 0x39, 0xc8,       // cmp r8d, r9d
        0x41, 0xff, 0xc0,       // inc r8d (keeps CF)
        0x41, 0x0f, 0x92, 0xc3, // setb r11b
        0xf4,                   // hlt
    };
    start(code, 0, 2);
    for (int pass = 0; pass < 2; pass++) {
        again(0, 2);
        for (int r : {ES_RCX, ES_RDX, ES_RSI, ES_RDI, ES_R10, ES_R11})
            m->gpr[r] = 0;
        m->gpr[ES_R8] = 1;
        m->gpr[ES_R9] = 2;
        ASSERT_EQ(run(m), ES_STOP_FAULT);
        EXPECT_EQ(m->rip, W + code.size() - 1);
        EXPECT_EQ(m->gpr[ES_RCX], (0x02 | CMP_1_2) << 8 | 1); // lahf's AH, setb's CL
        EXPECT_EQ(m->gpr[ES_RDX], 2u);
        EXPECT_EQ(m->gpr[ES_RSI], 1u);
        EXPECT_EQ(m->gpr[ES_RDI], 0xffffffffu);
        EXPECT_EQ(m->gpr[ES_R10], 0x202 | CMP_1_2);
        EXPECT_EQ(m->gpr[ES_R11], 1u);
        EXPECT_EQ(m->rflags & ES_ARITH_FLAGS, (uint64_t)ES_CF); // inc: 2, CF kept
    }
}

// A compare against memory that faults, right before its Jcc (the pair
// the block loop runs in one call): nothing of the pair retired, RFLAGS
// is the previous producer's, RIP the compare's.
TEST_F(LazyFlags, FaultInACompareBeforeItsJcc)
{
    start({
              0x39, 0xd8,             // 0: cmp eax, ebx
              0x80, 0x39, 0x00,       // 2: cmp byte [rcx], 0   #PF when rcx = 0x1000
              0x74, 0x02,             // 5: je 9
              0xff, 0xc2,             // 7: inc edx
              0xf4,                   // 9: hlt
          },
          1, 2);
    for (int pass = 0; pass < 3; pass++) {
        again(1, 2);
        m->gpr[ES_RCX] = pass == 2 ? 0x1000 : EST_DATA;
        m->gpr[ES_RDX] = 0;
        uint64_t n0 = m->icount;
        ASSERT_EQ(run(m), ES_STOP_FAULT);
        if (pass < 2) { // [rcx] = 0: je taken, the hlt
            EXPECT_EQ(m->fault.vector, ES_VEC_GP);
            EXPECT_EQ(m->rip, W + 9);
            EXPECT_EQ(m->icount - n0, 3u);
            EXPECT_EQ(m->rflags & ES_ARITH_FLAGS, (uint64_t)(ES_ZF | ES_PF));
            continue;
        }
        EXPECT_EQ(m->fault.vector, ES_VEC_PF);
        EXPECT_EQ(m->fault.addr, 0x1000u);
        EXPECT_EQ(m->rip, W + 2);
        EXPECT_EQ(m->icount - n0, 1u);
        EXPECT_EQ(m->rflags, 0x202 | CMP_1_2);
    }
}

// An INT3 right after the producer: the exception leaves its flags.
TEST_F(LazyFlags, ExceptionRightAfterTheProducer)
{
    start({0x48, 0x01, 0xd8, 0xcc}, 0x7fffffffffffffffull, 1); // add rax, rbx; int3
    for (int pass = 0; pass < 2; pass++) {
        again(0x7fffffffffffffffull, 1);
        ASSERT_EQ(run(m), ES_STOP_FAULT);
        EXPECT_EQ(m->fault.vector, ES_VEC_BP);
        EXPECT_EQ(m->rflags, (uint64_t)(0x202 | ES_OF | ES_SF | ES_AF | ES_PF));
    }
}

// SYSCALL right after the producer hands RFLAGS to the kernel in R11.
TEST_F(LazyFlags, SyscallRightAfterTheProducer)
{
    start({
              0xb8, 0x27, 0x00, 0x00, 0x00, // 0: mov eax, 39 (getpid)
              0x39, 0xda,                   // 5: cmp edx, ebx
              0x0f, 0x05,                   // 7: syscall
              0xf4,                         // 9: hlt
          },
          0, 2);
    es_host_config cfg = {};
    cfg.root = "/";
    cfg.stdin_fd = cfg.stdout_fd = cfg.stderr_fd = -1;
    ASSERT_EQ(es_host_init(m, &cfg), 0) << m->message;
    for (int pass = 0; pass < 2; pass++) {
        again(0, 2);
        m->gpr[ES_RDX] = 1;
        ASSERT_EQ(run(m), ES_STOP_FAULT) << m->message;
        EXPECT_EQ(m->rip, W + 9);
        EXPECT_EQ(m->gpr[ES_R11], 0x202 | CMP_1_2);
    }
}

} // namespace
