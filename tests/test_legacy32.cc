// Legacy instructions of 32-bit mode only: BOUND, SALC, ARPL (sim/isa/legacy32.c).
//
// Expectations from the SDM instruction pages (BOUND, ARPL; SALC is
// undocumented: AL = CF ? FFH : 00H, no flag changes).  What the SDM leaves
// open (the order of BOUND's two reads, whether ARPL writes an unchanged
// destination) was measured on the Intel host with 32-bit programs on
// unreadable / read-only pages.  tests/diff (family legacy32) checks the
// same instructions against the host CPU in compatibility mode.  At the
// end: a BOUND #BR in a user program is SIGSEGV, with and without the guest
// kernel (Linux's do_bounds: without MPX, do_trap(X86_TRAP_BR, SIGSEGV, ...)).
#include "est_case.h"

#include <string>
#include <vector>

#include "es_boot.h"
#include "host.h"
#include "kernel.h"
#include "loader.h"

#define M64 ES_MODE_64
#define M32 ES_MODE_32

// the bounds of every BOUND case are at EST_DATA (ebx) unless said otherwise
static const uint32_t D = (uint32_t)EST_DATA;
static const uint32_t ALLF = F_C | F_P | F_A | F_Z | F_S | F_O;

static const EstCase kBound[] = {
    // 62 03    bound eax, qword ptr [ebx]
    {"bound (inside)", "62 03", M32, {{ES_RAX, 5}, {ES_RBX, D}}, ALLF,
     {{0, 4, 0}, {4, 4, 10}}, {}, ALLF, {}},
    {"bound (inside, no flags)", "62 03", M32, {{ES_RAX, 5}, {ES_RBX, D}}, 0,
     {{0, 4, 0}, {4, 4, 10}}, {}, 0, {}},
    {"bound (= lower bound)", "62 03", M32, {{ES_RAX, 7}, {ES_RBX, D}}, F_Z,
     {{0, 4, 7}, {4, 4, 9}}, {}, F_Z, {}},
    {"bound (= upper bound)", "62 03", M32, {{ES_RAX, 9}, {ES_RBX, D}}, F_C,
     {{0, 4, 7}, {4, 4, 9}}, {}, F_C, {}},
    {"bound (lower = upper = index)", "62 03", M32, {{ES_RAX, 0x80000000}, {ES_RBX, D}}, 0,
     {{0, 4, 0x80000000}, {4, 4, 0x80000000}}, {}, 0, {}},
    {"bound (lower - 1): #BR", "62 03", M32, {{ES_RAX, 6}, {ES_RBX, D}}, F_S,
     {{0, 4, 7}, {4, 4, 9}}, {}, 0, {}, ES_VEC_BR},
    {"bound (upper + 1): #BR", "62 03", M32, {{ES_RAX, 10}, {ES_RBX, D}}, 0,
     {{0, 4, 7}, {4, 4, 9}}, {}, 0, {}, ES_VEC_BR},
    // signed comparisons: -1 in [-2, 16] (unsigned it is above 16)
    {"bound (signed: -1 in [-2, 16])", "62 03", M32, {{ES_RAX, 0xffffffff}, {ES_RBX, D}}, 0,
     {{0, 4, 0xfffffffe}, {4, 4, 16}}, {}, 0, {}},
    // 5 in [-10, 10] (unsigned it is below 0xfffffff6)
    {"bound (signed: 5 in [-10, 10])", "62 03", M32, {{ES_RAX, 5}, {ES_RBX, D}}, 0,
     {{0, 4, 0xfffffff6}, {4, 4, 10}}, {}, 0, {}},
    // 0x7fffffff > -1 signed (unsigned it would be inside [0, 0xffffffff])
    {"bound (signed: INT_MAX above [0, -1])", "62 03", M32, {{ES_RAX, 0x7fffffff}, {ES_RBX, D}}, 0,
     {{0, 4, 0}, {4, 4, 0xffffffff}}, {}, 0, {}, ES_VEC_BR},
    {"bound (signed: INT_MIN below [INT_MIN + 1, INT_MAX])", "62 03", M32,
     {{ES_RAX, 0x80000000}, {ES_RBX, D}}, 0, {{0, 4, 0x80000001}, {4, 4, 0x7fffffff}}, {}, 0, {},
     ES_VEC_BR},
    // 62 4c 8b 08    bound ecx, qword ptr [ebx+ecx*4+8]
    {"bound ecx, [ebx+ecx*4+8]", "62 4c 8b 08", M32, {{ES_RCX, 2}, {ES_RBX, D}}, 0,
     {{0x10, 4, 2}, {0x14, 4, 2}}, {}, 0, {}},
    {"bound ecx, [ebx+ecx*4+8]: #BR", "62 4c 8b 08", M32, {{ES_RCX, 3}, {ES_RBX, D}}, 0,
     {{0x14, 4, 4}, {0x18, 4, 5}}, {}, 0, {}, ES_VEC_BR},

    // 16-bit operand size: m16&16, the index is AX; the upper half of EAX
    // and the bytes past the two words do not count
    // 66 62 03    bound ax, dword ptr [ebx]
    {"bound ax (inside)", "66 62 03", M32, {{ES_RAX, 0x1234fffe}, {ES_RBX, D}}, F_P,
     {{0, 2, 0xfff0}, {2, 2, 0x0000}, {4, 4, 0}}, {}, F_P, {}},
    {"bound ax (= lower, INT16_MIN)", "66 62 03", M32, {{ES_RAX, 0xffff8000}, {ES_RBX, D}}, 0,
     {{0, 2, 0x8000}, {2, 2, 0x7fff}}, {}, 0, {}},
    {"bound ax (= upper, INT16_MAX)", "66 62 03", M32, {{ES_RAX, 0x7fff}, {ES_RBX, D}}, 0,
     {{0, 2, 0x8000}, {2, 2, 0x7fff}}, {}, 0, {}},
    {"bound ax (upper + 1): #BR", "66 62 03", M32, {{ES_RAX, 0x00000003}, {ES_RBX, D}}, 0,
     {{0, 2, 0}, {2, 2, 2}, {4, 4, 0x7fffffff}}, {}, 0, {}, ES_VEC_BR},
    {"bound ax (lower - 1): #BR", "66 62 03", M32, {{ES_RAX, 0x0000ffff}, {ES_RBX, D}}, 0,
     {{0, 2, 0}, {2, 2, 2}}, {}, 0, {}, ES_VEC_BR},
    // 0x8000 is -32768 as a word: inside [-32768, 0] though unsigned it is not
    {"bound ax (signed word)", "66 62 03", M32, {{ES_RAX, 0x8000}, {ES_RBX, D}}, 0,
     {{0, 2, 0x8000}, {2, 2, 0}}, {}, 0, {}},

    // the lower bound is read and compared first: with the upper bound on
    // an unmapped page, an index below the lower one is #BR, any other a
    // #PF (measured on the Intel host; tests/diff maps both bounds always)
    {"bound (below, upper bound unmapped): #BR", "62 03", M32,
     {{ES_RAX, 0x80000000}, {ES_RBX, D + 0x10000 - 4}}, 0, {{0xfffc, 4, 0}}, {}, 0, {},
     ES_VEC_BR},
    {"bound (= lower, upper bound unmapped): #PF", "62 03", M32,
     {{ES_RAX, 0}, {ES_RBX, D + 0x10000 - 4}}, 0, {{0xfffc, 4, 0}}, {}, 0, {}, ES_VEC_PF},
    {"bound ax (above, upper bound unmapped): #PF", "66 62 03", M32,
     {{ES_RAX, 0x7fff}, {ES_RBX, D + 0x10000 - 2}}, 0, {{0xfffe, 2, 0}}, {}, 0, {}, ES_VEC_PF},
    // a lower bound across the end of the mapping: #PF whatever the index
    {"bound (lower bound across the page end): #PF", "62 03", M32,
     {{ES_RAX, 0x80000000}, {ES_RBX, D + 0x10000 - 2}}, 0, {}, {}, 0, {}, ES_VEC_PF},

    // 62 is EVEX in 64-bit mode; BOUND does not exist there
    {"bound in 64-bit mode", "62 03", M64, {{ES_RAX, 5}, {ES_RBX, D}}, 0,
     {{0, 4, 0}, {4, 4, 10}}, {}, 0, {}, ES_VEC_UD},
};
EST_CASE_SUITE(Bound, kBound)

static const EstCase kSalc[] = {
    // d6    salc
    {"salc (CF = 0)", "d6", M32, {{ES_RAX, 0x12345678}}, 0, {}, {{ES_RAX, 0x12345600}}, 0, {}},
    {"salc (CF = 0, other flags kept)", "d6", M32, {{ES_RAX, 0xffffffff}}, ALLF & ~F_C, {},
     {{ES_RAX, 0xffffff00}}, ALLF & ~F_C, {}},
    {"salc (CF = 1)", "d6", M32, {{ES_RAX, 0x12345600}}, F_C, {}, {{ES_RAX, 0x123456ff}}, F_C, {}},
    {"salc (CF = 1, other flags kept)", "d6", M32, {{ES_RAX, 0x00000042}}, ALLF, {},
     {{ES_RAX, 0x000000ff}}, ALLF, {}},
    {"salc in 64-bit mode", "d6", M64, {{ES_RAX, 0x12345678}}, F_C, {}, {}, 0, {}, ES_VEC_UD},
};
EST_CASE_SUITE(Salc, kSalc)

static const EstCase kArpl[] = {
    // 63 d8    arpl ax, bx
    {"arpl (RPL 0 -> 3)", "63 d8", M32, {{ES_RAX, 0xdead0010}, {ES_RBX, 0x23}}, 0, {},
     {{ES_RAX, 0xdead0013}}, F_Z, {}},
    {"arpl (adjusts: other flags kept)", "63 d8", M32, {{ES_RAX, 0x0009}, {ES_RBX, 0x0002}},
     F_C | F_S | F_O | F_P | F_A, {}, {{ES_RAX, 0x000a}}, F_C | F_S | F_O | F_P | F_A | F_Z, {}},
    {"arpl (equal RPL: ZF = 0)", "63 d8", M32, {{ES_RAX, 0x2b}, {ES_RBX, 0x23}}, F_Z | F_C, {}, {},
     F_C, {}},
    {"arpl (dest RPL above: ZF = 0)", "63 d8", M32, {{ES_RAX, 0x0003}, {ES_RBX, 0x0001}},
     ALLF, {}, {}, ALLF & ~F_Z, {}},
    // only the source's RPL bits count: EBX = 0xffff0002
    {"arpl (source bits above RPL ignored)", "63 d8", M32, {{ES_RAX, 0x0001}, {ES_RBX, 0xffff0002}},
     0, {}, {{ES_RAX, 0x0002}}, F_Z, {}},
    // 66 63 d8    arpl ax, bx (the operand size prefix changes nothing)
    {"arpl (66 prefix)", "66 63 d8", M32, {{ES_RAX, 0x5550000}, {ES_RBX, 0x1}}, 0, {},
     {{ES_RAX, 0x5550001}}, F_Z, {}},
    // 63 c0    arpl ax, ax
    {"arpl ax, ax", "63 c0", M32, {{ES_RAX, 0x3}}, F_Z, {}, {}, 0, {}},
    // 63 0b    arpl word ptr [ebx], cx (the word after it untouched)
    {"arpl [ebx], cx (adjusts)", "63 0b", M32, {{ES_RBX, D}, {ES_RCX, 0x33}}, 0,
     {{0, 4, 0xffff0028}}, {}, F_Z, {{0, 4, 0xffff002b}}},
    {"arpl [ebx], cx (no change)", "63 0b", M32, {{ES_RBX, D}, {ES_RCX, 0x31}}, F_Z,
     {{0, 4, 0x77770003}}, {}, 0, {{0, 4, 0x77770003}}},
    // the destination is written only when it changes: on a read-only
    // page (the code page, zero past the instruction) an unchanged one does
    // not fault (measured on the Intel host), a changed one is a #PF
    {"arpl [code page], cx (no change, read-only)", "63 0b", M32,
     {{ES_RBX, EST_CODE + 0x100}, {ES_RCX, 0x10}}, F_Z, {}, {}, 0, {}},
    {"arpl [code page], cx (adjusts, read-only): #PF", "63 0b", M32,
     {{ES_RBX, EST_CODE + 0x100}, {ES_RCX, 0x13}}, F_Z, {}, {}, 0, {}, ES_VEC_PF},

    // 64-bit mode: 63 is MOVSXD
    // 48 63 d8    movsxd rbx, eax
    {"movsxd rbx, eax (64-bit mode)", "48 63 d8", M64, {{ES_RAX, 0x80000000}, {ES_RBX, 5}}, ALLF,
     {}, {{ES_RBX, 0xffffffff80000000ull}}, ALLF, {}},
    {"movsxd rbx, eax (positive)", "48 63 d8", M64, {{ES_RAX, 0xffffffff7fffffffull}}, 0, {},
     {{ES_RBX, 0x7fffffff}}, 0, {}},
    // 48 63 03    movsxd rax, dword ptr [rbx]
    {"movsxd rax, [rbx]", "48 63 03", M64, {{ES_RBX, D}}, 0, {{0, 8, 0x11111111fffffffeull}},
     {{ES_RAX, 0xfffffffffffffffeull}}, 0, {}},
    // 63 d8    movsxd ebx, eax (no REX.W: a 32-bit move, zero-extended)
    {"movsxd ebx, eax (no REX.W)", "63 d8", M64, {{ES_RAX, 0x80000000}, {ES_RBX, ~0ull}}, F_Z, {},
     {{ES_RBX, 0x80000000}}, F_Z, {}},
};
EST_CASE_SUITE(Arpl, kArpl)

// ---- #BR in a user program: SIGSEGV, with and without the guest kernel ----

namespace {

constexpr uint32_t UBASE = 0x08048000, UCODE = UBASE + 0x100, UBOUNDS = UBASE + 0x800;

void put(std::vector<uint8_t> &b, size_t at, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        b[at + i] = (uint8_t)(v >> (8 * i));
}

// An i386 ET_EXEC: one RWX segment at UBASE (headers included), the code at
// UCODE, the bounds [0, 10] at UBOUNDS.
std::vector<uint8_t> elf32(const std::vector<uint8_t> &code)
{
    std::vector<uint8_t> b(0x1000, 0);
    memcpy(b.data(), "\177ELF\1\1\1", 7);
    put(b, 16, 2, 2);  // ET_EXEC
    put(b, 18, 3, 2);  // EM_386
    put(b, 20, 1, 4);
    put(b, 24, UCODE, 4);
    put(b, 28, 52, 4); // program headers after the header
    put(b, 40, 52, 2);
    put(b, 42, 32, 2);
    put(b, 44, 1, 2);
    put(b, 52, 1, 4);  // PT_LOAD
    put(b, 60, UBASE, 4);
    put(b, 64, UBASE, 4);
    put(b, 68, 0x1000, 4);
    put(b, 72, 0x1000, 4);
    put(b, 76, 7, 4);  // RWX
    put(b, 80, 0x1000, 4);
    memcpy(&b[UCODE - UBASE], code.data(), code.size());
    put(b, UBOUNDS - UBASE, 0, 4);
    put(b, UBOUNDS - UBASE + 4, 10, 4);
    return b;
}

// mov ebx, UBOUNDS; mov eax, <index>; bound eax, [ebx]; mov ebx, 3;
// mov eax, 1; int 0x80 (exit(3))
std::vector<uint8_t> bound_program(uint32_t index)
{
    std::vector<uint8_t> c = {0xbb, 0, 0, 0, 0, 0xb8, 0, 0, 0, 0, 0x62, 0x03,
                              0xbb, 3, 0, 0, 0, 0xb8, 1, 0, 0, 0, 0xcd, 0x80};
    put(c, 1, UBOUNDS, 4);
    put(c, 6, index, 4);
    return c;
}
constexpr uint32_t BOUND_AT = UCODE + 10;

struct Prog {
    es_machine *m = nullptr;
    ~Prog()
    {
        if (m) {
            es_host_free(m);
            es_machine_free(m);
        }
    }
    // kernel: -1 = --direct, else the patch set of the embedded image
    bool start(const std::vector<uint8_t> &elf, int kernel)
    {
        m = es_machine_new(64ull << 20);
        if (!m)
            return false;
        m->deterministic = true;
        es_host_config cfg{};
        cfg.root = ".";
        cfg.deterministic = true;
        cfg.stdin_fd = -1;
        cfg.stdout_fd = -1;
        cfg.stderr_fd = -1;
        es_image img{};
        if (es_host_init(m, &cfg) || es_load_elf_mem(m, elf.data(), elf.size(), &img))
            return false;
        if (kernel >= 0 && (es_kernel_load(m, (unsigned)kernel) || es_kernel_set_abi(m, img.abi)))
            return false;
        char arg0[] = "bound";
        char *argv[] = {arg0, nullptr};
        char *envp[] = {nullptr};
        if (es_start_process(m, &img, 1, argv, envp) || (kernel >= 0 && es_kernel_boot(m)))
            return false;
        m->max_insns = 2000000;
        return true;
    }
};

std::vector<int> kernels()
{
    size_t n = 0;
    if (es_kernel_image(ES_CONV_V417, &n) && n)
        return {-1, (int)ES_CONV_V416, (int)ES_CONV_V417};
    return {-1};
}

// index 10 in [0, 10] runs on to exit(3); index 11 stops at the BOUND
TEST(BoundUser, InRangeRunsOnOutOfRangeIsSigsegvAtTheBound)
{
    for (int k : kernels()) {
        for (uint32_t index : {10u, 11u}) {
            SCOPED_TRACE((k < 0 ? std::string("direct") : "patches " + std::to_string(k)) +
                         ", index " + std::to_string(index));
            Prog r;
            ASSERT_TRUE(r.start(elf32(bound_program(index)), k)) << r.m->message;
            es_run(r.m);
            if (index == 10) {
                ASSERT_EQ(r.m->stop, ES_STOP_EXIT) << r.m->message;
                EXPECT_EQ(r.m->exit_status, 3);
                continue;
            }
            ASSERT_EQ(r.m->stop, ES_STOP_FAULT) << r.m->message;
            EXPECT_EQ(r.m->fault.vector, ES_VEC_BR);
            EXPECT_EQ(r.m->fault.rip, BOUND_AT) << "#BR is a fault: the saved EIP is the BOUND's";
            EXPECT_EQ(r.m->signal, 11) << "SIGSEGV (exit status 139)";
            EXPECT_EQ(std::string(r.m->message), "guest fault #BR at rip=0x804810a");
        }
    }
}

} // namespace
