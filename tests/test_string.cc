// String family: movs/stos/lods/cmps/scas with rep prefixes, direction,
// address size, segment override, restartable faults mid-rep, and port
// I/O privilege.
#include "ctl_util.h"

#include <cstring>

using namespace ctl;

static const uint64_t C = EST_CODE;
static const uint64_t D = EST_DATA;
static const int M64 = ES_MODE_64, M32 = ES_MODE_32;
static const uint64_t ARITH = ES_ARITH_FLAGS;

static void fill(M &m, uint64_t va, size_t n, uint8_t seed)
{
    std::vector<uint8_t> b(n);
    for (size_t i = 0; i < n; i++)
        b[i] = (uint8_t)(seed + i * 7 + (i >> 8));
    ASSERT_EQ(es_write(m.m, va, b.data(), (unsigned)n), 0);
}

static std::vector<uint8_t> read(M &m, uint64_t va, size_t n)
{
    std::vector<uint8_t> b(n);
    EXPECT_EQ(es_read(m.m, va, b.data(), (unsigned)n), 0);
    return b;
}

TEST(String, RepMovsbAcrossPages)
{
    // 10000 bytes from D+0x123 to D+0x5001: both runs cross page
    // boundaries at different offsets
    M m(M64);
    fill(m, D + 0x123, 10000, 3);
    m->gpr[ES_RSI] = D + 0x123;
    m->gpr[ES_RDI] = D + 0x5001;
    m->gpr[ES_RCX] = 10000;
    ASSERT_EQ(m.run({0xf3, 0xa4}), 0) << m->message; // rep movsb
    EXPECT_EQ(read(m, D + 0x5001, 10000), read(m, D + 0x123, 10000));
    EXPECT_EQ(m->gpr[ES_RCX], 0u);
    EXPECT_EQ(m->gpr[ES_RSI], D + 0x123 + 10000);
    EXPECT_EQ(m->gpr[ES_RDI], D + 0x5001 + 10000);
    EXPECT_EQ(m->icount, 1u);
}

TEST(String, MovsForms)
{
    run_cases({
        // destination one above the source: element order makes a fill
        {"rep movsb, rdi = rsi + 1", M64, {0xf3, 0xa4},
         {{ES_RSI, D}, {ES_RDI, D + 1}, {ES_RCX, 7}}, {{ES_RCX, 0}, {ES_RDI, D + 8}}, 0x202, 0,
         0, {{D, 0x0807060504030261ull, 8}}, {{D, 0x6161616161616161ull, 8}}},
        {"rep movsq, df = 1", M64, {0xf3, 0x48, 0xa5},
         {{ES_RSI, D + 8}, {ES_RDI, D + 0x108}, {ES_RCX, 2}},
         {{ES_RCX, 0}, {ES_RSI, D - 8}, {ES_RDI, D + 0xf8}}, 0x602, 0, 0,
         {{D, 1, 8}, {D + 8, 2, 8}}, {{D + 0x100, 1, 8}, {D + 0x108, 2, 8}}},
        {"movsd (one element, no rep)", M64, {0xa5}, {{ES_RSI, D}, {ES_RDI, D + 0x20}, {ES_RCX, 9}},
         {{ES_RCX, 9}, {ES_RSI, D + 4}, {ES_RDI, D + 0x24}}, 0x202, 0, 0,
         {{D, 0x1111111122222222ull, 8}}, {{D + 0x20, 0x22222222, 8}}},
        {"rep movsw with rcx = 0 does nothing", M64, {0xf3, 0x66, 0xa5},
         {{ES_RSI, D}, {ES_RDI, D + 0x20}, {ES_RCX, 0}}, {{ES_RSI, D}, {ES_RDI, D + 0x20}}, 0x202,
         0, 0, {{D, 5, 8}}, {{D + 0x20, 0, 8}}},
        {"rep movsd (32-bit mode)", M32, {0xf3, 0xa5}, {{ES_RSI, D}, {ES_RDI, D + 0x20}, {ES_RCX, 2}},
         {{ES_RCX, 0}, {ES_RSI, D + 8}, {ES_RDI, D + 0x28}}, 0x202, 0, 0,
         {{D, 0x1234567890abcdefull, 8}}, {{D + 0x20, 0x1234567890abcdefull, 8}}},
        {"addr32 rep movsb: esi/edi/ecx, zero-extended", M64, {0x67, 0xf3, 0xa4},
         {{ES_RSI, 0xffffffff00000000ull | D}, {ES_RDI, 0xffffffff00000000ull | (D + 0x40)},
          {ES_RCX, 0xffffffff00000003ull}},
         {{ES_RCX, 0}, {ES_RSI, D + 3}, {ES_RDI, D + 0x43}}, 0x202, 0, 0, {{D, 0xabcdef, 4}},
         {{D + 0x40, 0xabcdef, 4}}},
    });
}

TEST(String, SourceSegmentOverride)
{
    M m(M64);
    m->seg[ES_SEG_FS].base = D + 0x1000;
    m.wr(D + 0x1010, 0x5566778899aabbccull, 8);
    m->gpr[ES_RSI] = 0x10;
    m->gpr[ES_RDI] = D;
    ASSERT_EQ(m.run({0x64, 0x48, 0xa5}), 0) << m->message; // movsq fs:[rsi] -> es:[rdi]
    EXPECT_EQ(m.rd(D, 8), 0x5566778899aabbccull);
    // lods with gs override
    M g(M32);
    g->seg[ES_SEG_GS].base = D;
    g.wr(D + 4, 0x99, 1);
    g->gpr[ES_RSI] = 4;
    ASSERT_EQ(g.run({0x65, 0xac}), 0); // lodsb gs:[esi]
    EXPECT_EQ(g->gpr[ES_RAX] & 0xff, 0x99u);
    EXPECT_EQ(g->gpr[ES_RSI], 5u);
}

TEST(String, StosLods)
{
    run_cases({
        {"rep stosb", M64, {0xf3, 0xaa}, {{ES_RAX, 0x41}, {ES_RDI, D + 1}, {ES_RCX, 6}},
         {{ES_RCX, 0}, {ES_RDI, D + 7}}, 0x202, 0, 0, {}, {{D, 0x0041414141414100ull, 8}}},
        {"rep stosd", M64, {0xf3, 0xab}, {{ES_RAX, 0xffffffff12345678ull}, {ES_RDI, D}, {ES_RCX, 3}},
         {{ES_RCX, 0}, {ES_RDI, D + 12}}, 0x202, 0, 0, {},
         {{D, 0x1234567812345678ull, 8}, {D + 8, 0x12345678, 8}}},
        {"rep stosq, df = 1", M64, {0xf3, 0x48, 0xab}, {{ES_RAX, 7}, {ES_RDI, D + 8}, {ES_RCX, 2}},
         {{ES_RCX, 0}, {ES_RDI, D - 8}}, 0x602, 0, 0, {}, {{D, 7, 8}, {D + 8, 7, 8}}},
        {"stosw", M32, {0x66, 0xab}, {{ES_RAX, 0xbeef}, {ES_RDI, D}}, {{ES_RDI, D + 2}}, 0x202,
         0, 0, {}, {{D, 0xbeef, 4}}},
        {"lodsb", M64, {0xac}, {{ES_RAX, ~0ull}, {ES_RSI, D}}, {{ES_RAX, 0xffffffffffffff11ull},
         {ES_RSI, D + 1}}, 0x202, 0, 0, {{D, 0x11, 1}}},
        {"lodsd zero-extends", M64, {0xad}, {{ES_RAX, ~0ull}, {ES_RSI, D}},
         {{ES_RAX, 0x44332211}}, 0x202, 0, 0, {{D, 0x44332211, 4}}},
        {"rep lodsq leaves the last element", M64, {0xf3, 0x48, 0xad}, {{ES_RSI, D}, {ES_RCX, 2}},
         {{ES_RAX, 2}, {ES_RCX, 0}, {ES_RSI, D + 16}}, 0x202, 0, 0, {{D, 1, 8}, {D + 8, 2, 8}}},
    });
}

TEST(String, CmpsScas)
{
    run_cases({
        // "abcX" vs "abcY": stops after the 4th byte, 'X' < 'Y'
        {"repe cmpsb", M64, {0xf3, 0xa6}, {{ES_RSI, D}, {ES_RDI, D + 0x10}, {ES_RCX, 10}},
         {{ES_RCX, 6}, {ES_RSI, D + 4}, {ES_RDI, D + 0x14}}, 0x202, ARITH,
         ES_CF | ES_SF | ES_AF | ES_PF, {{D, 0x58636261, 4}, {D + 0x10, 0x59636261, 4}}},
        {"repe cmpsb, all equal", M64, {0xf3, 0xa6}, {{ES_RSI, D}, {ES_RDI, D + 0x10}, {ES_RCX, 3}},
         {{ES_RCX, 0}}, 0x202, ARITH, ES_ZF | ES_PF,
         {{D, 0x58636261, 4}, {D + 0x10, 0x59636261, 4}}},
        {"repne cmpsw stops on equal", M64, {0xf2, 0x66, 0xa7},
         {{ES_RSI, D}, {ES_RDI, D + 0x10}, {ES_RCX, 4}}, {{ES_RCX, 1}}, 0x202, ES_ZF, ES_ZF,
         {{D, 0x0005000100020003ull, 8}, {D + 0x10, 0x0009000100080007ull, 8}}},
        {"cmpsq (no rep)", M64, {0x48, 0xa7}, {{ES_RSI, D}, {ES_RDI, D + 8}},
         {{ES_RSI, D + 8}, {ES_RDI, D + 16}}, 0x202, ARITH, ES_CF | ES_SF | ES_PF | ES_AF,
         {{D, 1, 8}, {D + 8, 2, 8}}},
        // strlen idiom: "hello\0", rcx = -1
        {"repne scasb finds the terminator", M64, {0xf2, 0xae},
         {{ES_RAX, 0}, {ES_RDI, D}, {ES_RCX, ~0ull}},
         {{ES_RCX, ~0ull - 6}, {ES_RDI, D + 6}}, 0x202, ARITH, ES_ZF | ES_PF,
         {{D, 0x6f6c6c6568ull, 8}}},
        {"repne scasb runs out", M64, {0xf2, 0xae}, {{ES_RAX, 0x7a}, {ES_RDI, D}, {ES_RCX, 3}},
         {{ES_RCX, 0}, {ES_RDI, D + 3}}, 0x202, ES_ZF, 0, {{D, 0x6f6c6c6568ull, 8}}},
        {"repe scasd (32-bit mode)", M32, {0xf3, 0xaf}, {{ES_RAX, 5}, {ES_RDI, D}, {ES_RCX, 4}},
         {{ES_RCX, 1}, {ES_RDI, D + 12}}, 0x202, ES_ZF, 0,
         {{D, 0x0000000500000005ull, 8}, {D + 8, 6, 8}}},
        {"repne scasb, df = 1", M64, {0xf2, 0xae}, {{ES_RAX, 0x68}, {ES_RDI, D + 4}, {ES_RCX, 9}},
         {{ES_RCX, 4}, {ES_RDI, D - 1}}, 0x602, ES_ZF, ES_ZF, {{D, 0x6f6c6c6568ull, 8}}},
    });
}

// A fault part-way through a rep leaves the completed iterations' counts
// and RIP at the instruction, so re-executing finishes the job.
TEST(String, FaultMidRepIsRestartable)
{
    M m(M64);
    const uint64_t end = D + 0x10000; // first unmapped page
    m->gpr[ES_RAX] = 0x5a;
    m->gpr[ES_RDI] = end - 0x10;
    m->gpr[ES_RCX] = 0x20;
    ASSERT_EQ(m.run({0xf3, 0xaa}), ES_STOP_FAULT); // rep stosb
    EXPECT_EQ(m->fault.vector, ES_VEC_PF);
    EXPECT_EQ(m->fault.addr, end);
    EXPECT_EQ(m->rip, C);
    EXPECT_EQ(m->gpr[ES_RCX], 0x10u);
    EXPECT_EQ(m->gpr[ES_RDI], end);
    EXPECT_EQ(m.rd(end - 1, 1), 0x5au);
    // map the page and resume
    ASSERT_EQ(est_map(m.m, end, 1, 0), 0);
    ASSERT_EQ(est_run(m.m, 2, 10), 0) << m->message;
    EXPECT_EQ(m->gpr[ES_RCX], 0u);
    EXPECT_EQ(m->gpr[ES_RDI], end + 0x10);
    EXPECT_EQ(m.rd(end + 0xf, 1), 0x5au);

    // movsq whose source runs into an unmapped page
    M n(M64);
    n->gpr[ES_RSI] = end - 8;
    n->gpr[ES_RDI] = D;
    n->gpr[ES_RCX] = 4;
    ASSERT_EQ(n.run({0xf3, 0x48, 0xa5}), ES_STOP_FAULT);
    EXPECT_EQ(n->fault.vector, ES_VEC_PF);
    EXPECT_EQ(n->gpr[ES_RCX], 3u);
    EXPECT_EQ(n->gpr[ES_RSI], end);
    EXPECT_EQ(n->gpr[ES_RDI], D + 8);

    // repe cmpsb reading past the end
    M c(M64);
    c->gpr[ES_RSI] = end - 2;
    c->gpr[ES_RDI] = D;
    c->gpr[ES_RCX] = 5;
    ASSERT_EQ(c.run({0xf3, 0xa6}), ES_STOP_FAULT);
    EXPECT_EQ(c->gpr[ES_RCX], 3u);
    EXPECT_EQ(c->gpr[ES_RSI], end);
}

TEST(String, PortIoIsPrivileged)
{
    run_cases({
        {"insb", M64, {0x6c}, {{ES_RDI, D}}, {{ES_RDI, D}}, 0x202, 0, 0, {}, {}, ES_VEC_GP, 0, C},
        {"outsd", M32, {0x6f}, {}, {}, 0x202, 0, 0, {}, {}, ES_VEC_GP, 0},
        {"in al, 0x60", M64, {0xe4, 0x60}, {}, {}, 0x202, 0, 0, {}, {}, ES_VEC_GP, 0},
        {"out dx, eax", M32, {0xef}, {}, {}, 0x202, 0, 0, {}, {}, ES_VEC_GP, 0},
    });
}

// The page-run fast paths of REP MOVS/STOS/SCASB against an element-by-
// element reference model: random element sizes, counts, overlapping
// source and destination, both directions, runs crossing pages.
namespace {

struct Lcg {
    uint64_t s;
    uint64_t next()
    {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        return s >> 33;
    }
};

const unsigned kWin = 0x8000; // the part of the data region the cases use

void ref_rep(std::vector<uint8_t> &mem, int kind, unsigned size, int df, uint64_t &si,
             uint64_t &di, uint64_t &cx, uint64_t ax, bool &zf)
{
    int64_t step = df ? -(int64_t)size : (int64_t)size;
    while (cx) {
        if (kind == 0) { // movs
            uint8_t tmp[8];
            memcpy(tmp, &mem[si - D], size);
            memcpy(&mem[di - D], tmp, size);
            si += step;
        } else if (kind == 1) { // stos
            memcpy(&mem[di - D], &ax, size);
        } else { // repne scasb
            zf = mem[di - D] == (uint8_t)ax;
        }
        di += step;
        cx--;
        if (kind == 2 && zf)
            break;
    }
}

} // namespace

TEST(String, RandomRepAgainstReference)
{
    Lcg r{12345};
    for (int iter = 0; iter < 300; iter++) {
        int kind = (int)(r.next() % 3);
        unsigned size = kind == 2 ? 1 : 1u << (r.next() % 4);
        int df = (int)(r.next() % 4 == 0);
        uint64_t cx = r.next() % (6000 / size); // runs of up to 6000 bytes
        uint64_t span = cx * size;
        uint64_t lo = span + 8, hi = kWin - span - 8;
        uint64_t si = D + lo + r.next() % (hi - lo);
        uint64_t di = r.next() % 2 ? si + (r.next() % 16) - 8 : D + lo + r.next() % (hi - lo);
        uint64_t ax = ((uint64_t)r.next() << 32) | r.next();
        SCOPED_TRACE(testing::Message() << "iter " << iter << " kind " << kind << " size "
                                        << size << " df " << df << " count " << cx);
        for (int observed = 0; observed < 2; observed++) {
            M m(M64);
            std::vector<uint8_t> mem(kWin);
            for (auto &b : mem)
                b = (uint8_t)(r.next() % 8 + 'a'); // small alphabet: scasb finds hits
            ASSERT_EQ(es_write(m.m, D, mem.data(), kWin), 0);
            if (observed) { // an observer forces every access down the slow path
                es_observer o = {};
                o.mem = [](void *, es_machine *, uint64_t, unsigned, int) {};
                es_observe(m.m, &o);
            }
            m->gpr[ES_RSI] = si, m->gpr[ES_RDI] = di, m->gpr[ES_RCX] = cx;
            m->gpr[ES_RAX] = ax;
            m->rflags = 0x202 | (df ? ES_DF : 0);
            static const uint8_t movs[4][3] = {{0xf3, 0xa4}, {0xf3, 0x66, 0xa5}, {0xf3, 0xa5},
                                               {0xf3, 0x48, 0xa5}};
            static const uint8_t stos[4][3] = {{0xf3, 0xaa}, {0xf3, 0x66, 0xab}, {0xf3, 0xab},
                                               {0xf3, 0x48, 0xab}};
            unsigned lg = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : 3;
            std::vector<uint8_t> code;
            if (kind == 0)
                code.assign(movs[lg], movs[lg] + (lg == 0 || lg == 2 ? 2 : 3));
            else if (kind == 1)
                code.assign(stos[lg], stos[lg] + (lg == 0 || lg == 2 ? 2 : 3));
            else
                code = {0xf2, 0xae};
            ASSERT_EQ(m.run(code), 0) << m->message;
            uint64_t rsi = si, rdi = di, rcx = cx;
            bool zf = false;
            ref_rep(mem, kind, size, df, rsi, rdi, rcx, ax, zf);
            EXPECT_EQ(read(m, D, kWin), mem);
            EXPECT_EQ(m->gpr[ES_RCX], rcx);
            EXPECT_EQ(m->gpr[ES_RDI], rdi);
            if (kind == 0) {
                EXPECT_EQ(m->gpr[ES_RSI], rsi);
            }
            if (kind == 2 && cx) {
                EXPECT_EQ((m->rflags & ES_ZF) != 0, zf);
            }
        }
    }
}
