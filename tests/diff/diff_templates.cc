// diff_templates.cc - the instruction templates of the differential test,
// as a table.
//
// A Group is a family name, a list of values k and rows; it expands to,
// for each k in order, each row in order, one template.  A row names where
// k goes (Use): the ModRM /digit (ext X_K), the opcode (+k, or +8k for the
// eight ALU operations), the mandatory prefix or the second opcode byte.
// A case draws a template of its family by index, so adding, removing or
// reordering a family's rows changes that family's cases for every seed
// (the other families keep theirs): do it on purpose, not as a tidy-up.
#include <algorithm>
#include <initializer_list>

#include "diff_host.h"

namespace diffhost {
namespace {

enum { X_K = -4 }; // ext: the group's value k

enum Use { K_NONE, K_OPC, K_OPC8, K_PFX, K_OP2 };

struct Row {
    uint8_t pfx, map, opc;
    int ext;
    uint8_t imm;
    uint64_t f;
    Use k = K_NONE;
    int op2 = -1;
};

struct Group {
    const char *fam;
    std::vector<int> ks;
    std::vector<Row> rows;
    void (*adjust)(Tmpl &t, int k) = nullptr; // a per-k exception to the rows
};

// a..b inclusive, without the values in `except`
std::vector<int> span(int a, int b, std::initializer_list<int> except = {})
{
    std::vector<int> v;
    for (int i = a; i <= b; i++)
        if (std::find(except.begin(), except.end(), i) == except.end())
            v.push_back(i);
    return v;
}

std::vector<int> cat(std::initializer_list<std::vector<int>> parts)
{
    std::vector<int> v;
    for (const std::vector<int> &p : parts)
        v.insert(v.end(), p.begin(), p.end());
    return v;
}

const std::vector<int> k0 = {0}; // a group of plain rows

void cmp_takes_no_lock(Tmpl &t, int k) // CMP is ALU operation 7
{
    if (k == 7)
        t.f &= ~(uint64_t)T_LOCK;
}

void div_bias(Tmpl &t, int k) // F6/F7 /6 /7: DIV, IDIV
{
    if (k >= 6)
        t.f |= T_DIV;
}

void cmpps_imm(Tmpl &t, int k) // 0F C2: CMPPS & co. take a predicate
{
    if (k == 0xc2)
        t.imm = 1, t.f |= T_CMPIMM;
}

const uint64_t XX = T_RX | T_MX | T_A16;
const uint64_t XM = T_X87 | T_MEM, XR = T_X87 | T_REG;
const uint64_t VEXG = T_Y | T_VEX | T_VVVV;
const uint64_t STRB = T_B | T_STR | T_REPOK, STRV = T_V | T_STR | T_REPOK;
const uint64_t BCD = T_NO64 | T_COMPAT;
// VEX vector forms: reg and r/m name vector registers; the memory operand
// is mostly aligned to the vector length (misaligned now and then: only the
// aligned moves may fault).  VN: VEX.vvvv is the first source (NDS).
// LR: VEX.128 and VEX.256 (or VEX.LIG, L drawn all the same).  WIG: VEX.W
// is ignored, drawn at random.
const uint64_t VV = T_VEX | T_RX | T_MX | T_A16, VN = VV | T_VX;
const uint64_t LR = T_LR, L1 = T_L1, WIG = T_WIG, W1 = T_W1;
// the SSE2 integer ops with a VEX.NDS form (66 0F xx)
const std::vector<int> kVexInt0F = cat(
    {span(0x60, 0x6d), {0x74, 0x75, 0x76}, span(0xd1, 0xfe, {0xd6, 0xd7, 0xe6, 0xe7, 0xf0, 0xf7})});
// the SSSE3/SSE4.1/4.2 integer ops with a VEX.NDS form (66 0F38 xx)
const std::vector<int> kVexInt38 = cat(
    {span(0x00, 0x0b), {0x28, 0x29, 0x2b}, span(0x37, 0x40)});
// PABS*, PMOVSX*, PMOVZX* (66 0F38 xx, no vvvv)
const std::vector<int> kVexInt38Unary = {0x1c, 0x1d, 0x1e, 0x20, 0x21, 0x22, 0x23, 0x24,
                                         0x25, 0x30, 0x31, 0x32, 0x33, 0x34, 0x35};

//   pfx   map opc   ext     imm  flags                       [k use, op2]
const Group kGroups[] = {
    // ---- alu: ADD OR ADC SBB AND SUB XOR CMP, TEST, NOT/NEG, INC/DEC
    {"alu", span(0, 7), {
        {0, 0, 0x00, X_RAND, 0, T_B | T_LOCK, K_OPC8},
        {0, 0, 0x01, X_RAND, 0, T_V | T_LOCK, K_OPC8},
        {0, 0, 0x02, X_RAND, 0, T_B, K_OPC8},
        {0, 0, 0x03, X_RAND, 0, T_V, K_OPC8},
        {0, 0, 0x04, X_NONE, 1, T_B, K_OPC8},
        {0, 0, 0x05, X_NONE, I_Z, T_V, K_OPC8},
        {0, 0, 0x80, X_K, 1, T_B | T_LOCK},
        {0, 0, 0x81, X_K, I_Z, T_V | T_LOCK},
        {0, 0, 0x83, X_K, 1, T_V | T_LOCK}}, cmp_takes_no_lock},
    {"alu", k0, {
        {0, 0, 0x84, X_RAND, 0, T_B},
        {0, 0, 0x85, X_RAND, 0, T_V},
        {0, 0, 0xa8, X_NONE, 1, T_B},
        {0, 0, 0xa9, X_NONE, I_Z, T_V},
        {0, 0, 0xf6, 0, 1, T_B},
        {0, 0, 0xf7, 0, I_Z, T_V}}},
    {"alu", {2, 3}, {{0, 0, 0xf6, X_K, 0, T_B | T_LOCK}, {0, 0, 0xf7, X_K, 0, T_V | T_LOCK}}},
    {"alu", {0, 1}, {{0, 0, 0xfe, X_K, 0, T_B | T_LOCK}, {0, 0, 0xff, X_K, 0, T_V | T_LOCK}}},
    {"alu", k0, {{0, 0, 0x40, X_PLUSR, 0, T_V | T_NO64}, {0, 0, 0x48, X_PLUSR, 0, T_V | T_NO64}}},

    // ---- shift: ROL ROR RCL RCR SHL SHR SAR (/6 is an undocumented alias)
    {"shift", span(0, 7, {6}), {
        {0, 0, 0xc0, X_K, 1, T_B | T_SMALL},
        {0, 0, 0xc1, X_K, 1, T_V | T_SMALL},
        {0, 0, 0xd0, X_K, 0, T_B},
        {0, 0, 0xd1, X_K, 0, T_V},
        {0, 0, 0xd2, X_K, 0, T_B},
        {0, 0, 0xd3, X_K, 0, T_V}}},
    {"shift", k0, {
        {0, 1, 0xa4, X_RAND, 1, T_V | T_SMALL},
        {0, 1, 0xa5, X_RAND, 0, T_V},
        {0, 1, 0xac, X_RAND, 1, T_V | T_SMALL},
        {0, 1, 0xad, X_RAND, 0, T_V}}},

    // ---- muldiv
    {"muldiv", span(4, 7), {{0, 0, 0xf6, X_K, 0, T_B}, {0, 0, 0xf7, X_K, 0, T_V}}, div_bias},
    {"muldiv", k0, {
        {0, 1, 0xaf, X_RAND, 0, T_V},
        {0, 0, 0x69, X_RAND, I_Z, T_V},
        {0, 0, 0x6b, X_RAND, 1, T_V}}},

    // ---- bits: BT*, BSF/BSR, TZCNT/LZCNT/POPCNT, BSWAP, MOVBE, ADCX/ADOX
    {"bits", k0, {{0, 1, 0xa3, X_RAND, 0, T_V | T_BITOFF}}}, // bt
    {"bits", {0xab, 0xb3, 0xbb},                              // bts btr btc
     {{0, 1, 0, X_RAND, 0, T_V | T_BITOFF | T_LOCK, K_OPC}}},
    {"bits", k0, {{0, 1, 0xba, 4, 1, T_V}}},                  // bt imm8
    {"bits", span(5, 7), {{0, 1, 0xba, X_K, 1, T_V | T_LOCK}}}, // bts btr btc imm8
    {"bits", {0xbc, 0xbd}, {{0, 1, 0, X_RAND, 0, T_V, K_OPC}}}, // bsf bsr
    {"bits", {0xbc, 0xbd, 0xb8}, {{0xf3, 1, 0, X_RAND, 0, T_V, K_OPC}}}, // tzcnt lzcnt popcnt
    {"bits", k0, {
        {0, 1, 0xc8, X_PLUSR, 0, T_Y},
        {0, 2, 0xf0, X_RAND, 0, T_V | T_MEM},
        {0, 2, 0xf1, X_RAND, 0, T_V | T_MEM},
        {0x66, 2, 0xf6, X_RAND, 0, T_Y},
        {0xf3, 2, 0xf6, X_RAND, 0, T_Y}}},

    // ---- bmi: VEX-encoded BMI1/BMI2
    {"bmi", k0, {
        {0, 2, 0xf2, X_RAND, 0, VEXG},  // andn
        {0, 2, 0xf7, X_RAND, 0, VEXG}}}, // bextr
    {"bmi", span(1, 3), {{0, 2, 0xf3, X_K, 0, VEXG}}}, // blsr blsmsk blsi
    {"bmi", k0, {
        {0, 2, 0xf5, X_RAND, 0, VEXG},          // bzhi
        {0xf2, 2, 0xf5, X_RAND, 0, VEXG},       // pdep
        {0xf3, 2, 0xf5, X_RAND, 0, VEXG},       // pext
        {0xf2, 2, 0xf6, X_RAND, 0, VEXG},       // mulx
        {0xf2, 3, 0xf0, X_RAND, 1, T_Y | T_VEX}, // rorx
        {0xf3, 2, 0xf7, X_RAND, 0, VEXG},       // sarx
        {0x66, 2, 0xf7, X_RAND, 0, VEXG},       // shlx
        {0xf2, 2, 0xf7, X_RAND, 0, VEXG}}},     // shrx

    // ---- mov: MOV, MOVZX/MOVSX/MOVSXD, XCHG, CMOVcc, SETcc, LEA, CBW..CQO,
    // LAHF/SAHF, flag bits
    {"mov", k0, {
        {0, 0, 0x88, X_RAND, 0, T_B},
        {0, 0, 0x89, X_RAND, 0, T_V},
        {0, 0, 0x8a, X_RAND, 0, T_B},
        {0, 0, 0x8b, X_RAND, 0, T_V},
        {0, 0, 0xc6, 0, 1, T_B},
        {0, 0, 0xc7, 0, I_Z, T_V},
        {0, 0, 0xb0, X_PLUSR, 1, T_B},
        {0, 0, 0xb8, X_PLUSR, I_V, T_V},
        {0, 1, 0xb6, X_RAND, 0, T_V},
        {0, 1, 0xb7, X_RAND, 0, T_V},
        {0, 1, 0xbe, X_RAND, 0, T_V},
        {0, 1, 0xbf, X_RAND, 0, T_V},
        {0, 0, 0x63, X_RAND, 0, T_Y | T_NO32},
        {0, 0, 0x86, X_RAND, 0, T_B | T_LOCK},
        {0, 0, 0x87, X_RAND, 0, T_V | T_LOCK},
        {0, 0, 0x90, X_PLUSR, 0, T_V},
        {0, 1, 0x40, X_RAND, 0, T_V | T_CC},
        {0, 1, 0x90, 0, 0, T_B | T_CC},
        {0, 0, 0x8d, X_RAND, 0, T_V | T_MEM},
        {0, 0, 0xa0, X_NONE, 0, T_B | T_MOFFS},
        {0, 0, 0xa1, X_NONE, 0, T_V | T_MOFFS},
        {0, 0, 0xa2, X_NONE, 0, T_B | T_MOFFS},
        {0, 0, 0xa3, X_NONE, 0, T_V | T_MOFFS},
        {0, 0, 0x98, X_NONE, 0, T_V},
        {0, 0, 0x99, X_NONE, 0, T_V}}},
    {"mov", {0x9e, 0x9f, 0xf5, 0xf8, 0xf9, 0xfc, 0xfd}, {{0, 0, 0, X_NONE, 0, 0, K_OPC}}},

    // ---- stack: PUSH/POP, PUSHF/POPF, ENTER/LEAVE, PUSHA/POPA
    {"stack", k0, {
        {0, 0, 0x50, X_PLUSR, 0, T_D64},
        {0, 0, 0x58, X_PLUSR, 0, T_D64},
        {0, 0, 0xff, 6, 0, T_D64},
        {0, 0, 0x8f, 0, 0, T_D64},
        {0, 0, 0x6a, X_NONE, 1, T_D64},
        {0, 0, 0x68, X_NONE, I_Z, T_D64},
        {0, 0, 0x9c, X_NONE, 0, T_D64},
        {0, 0, 0x9d, X_NONE, 0, T_D64 | T_POPF},
        {0, 0, 0xc9, X_NONE, 0, T_D64 | T_FRAME},
        {0, 0, 0xc8, X_NONE, 0, T_D64 | T_FRAME | T_ENTER},
        {0, 0, 0x60, X_NONE, 0, T_V | T_NO64 | T_COMPAT},
        {0, 0, 0x61, X_NONE, 0, T_V | T_NO64 | T_COMPAT}}},

    // ---- string: MOVS STOS LODS CMPS SCAS, with REP/REPE/REPNE
    {"string", {0xa4, 0xaa, 0xac}, {{0, 0, 0, X_NONE, 0, STRB, K_OPC}}},
    {"string", {0xa5, 0xab, 0xad}, {{0, 0, 0, X_NONE, 0, STRV, K_OPC}}},
    {"string", {0xa6, 0xae}, {{0, 0, 0, X_NONE, 0, STRB | T_REPNE, K_OPC}}},
    {"string", {0xa7, 0xaf}, {{0, 0, 0, X_NONE, 0, STRV | T_REPNE, K_OPC}}},

    // ---- atomic: CMPXCHG, XADD, CMPXCHG8B/16B
    {"atomic", k0, {
        {0, 1, 0xb0, X_RAND, 0, T_B | T_LOCK | T_CMPX},
        {0, 1, 0xb1, X_RAND, 0, T_V | T_LOCK | T_CMPX},
        {0, 1, 0xc0, X_RAND, 0, T_B | T_LOCK},
        {0, 1, 0xc1, X_RAND, 0, T_V | T_LOCK},
        {0, 1, 0xc7, 1, 0, T_Y | T_MEM | T_LOCK | T_CMPX | T_C8B | T_A16}}},

    // ---- sse_int: SSE2 integer, SSSE3, SSE4.1/4.2 integer
    {"sse_int",
     cat({span(0x60, 0x6d), {0x74, 0x75, 0x76, 0x6f, 0xd6},
          span(0xd1, 0xfe, {0xd6, 0xd7, 0xe6, 0xe7, 0xf0, 0xf7}), {0x7f}}),
     {{0x66, 1, 0, X_RAND, 0, XX, K_OPC}}},
    {"sse_int", k0, {
        {0xf3, 1, 0x6f, X_RAND, 0, T_RX | T_MX},
        {0xf3, 1, 0x7f, X_RAND, 0, T_RX | T_MX},
        {0xf3, 1, 0x7e, X_RAND, 0, T_RX | T_MX}}},
    {"sse_int", {0x66, 0xf2, 0xf3}, {{0, 1, 0x70, X_RAND, 1, XX, K_PFX}}},
    {"sse_int", {2, 4, 6}, {
        {0x66, 1, 0x71, X_K, 1, T_MX | T_REG | T_SMALL},
        {0x66, 1, 0x72, X_K, 1, T_MX | T_REG | T_SMALL}}},
    {"sse_int", {2, 3, 6, 7}, {{0x66, 1, 0x73, X_K, 1, T_MX | T_REG | T_SMALL}}},
    {"sse_int", k0, {
        {0x66, 1, 0x6e, X_RAND, 0, T_RX | T_Y},
        {0x66, 1, 0x7e, X_RAND, 0, T_RX | T_Y},
        {0x66, 1, 0xd7, X_RAND, 0, T_MX | T_REG},
        {0x66, 1, 0xc4, X_RAND, 1, T_RX},
        {0x66, 1, 0xc5, X_RAND, 1, T_MX | T_REG}}},
    {"sse_int",
     cat({span(0x00, 0x0b),
          {0x1c, 0x1d, 0x1e, 0x10, 0x17, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x28, 0x29, 0x2b,
           0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x37, 0x38, 0x39, 0x3a, 0x3b, 0x3c, 0x3d, 0x3e,
           0x3f, 0x40, 0x41}}),
     {{0x66, 2, 0, X_RAND, 0, XX, K_OPC}}},
    {"sse_int", {0x0e, 0x0f, 0x42, 0x60, 0x61, 0x62, 0x63}, {{0x66, 3, 0, X_RAND, 1, XX, K_OPC}}},
    {"sse_int", k0, {
        {0x66, 3, 0x14, X_RAND, 1, T_RX},
        {0x66, 3, 0x15, X_RAND, 1, T_RX},
        {0x66, 3, 0x16, X_RAND, 1, T_RX | T_Y},
        {0x66, 3, 0x20, X_RAND, 1, T_RX},
        {0x66, 3, 0x22, X_RAND, 1, T_RX | T_Y},
        {0x66, 1, 0xe7, X_RAND, 0, T_RX | T_MEM | T_A16},        // movntdq
        {0x66, 2, 0x2a, X_RAND, 0, T_RX | T_MEM | T_A16},        // movntdqa
        {0xf2, 1, 0xf0, X_RAND, 0, T_RX | T_MEM},                // lddqu
        {0x66, 1, 0xf7, X_RAND, 0, T_RX | T_MX | T_REG | T_RDI}, // maskmovdqu
        {0xf2, 2, 0xf0, X_RAND, 0, T_Y},                         // crc32 r, r/m8
        {0xf2, 2, 0xf1, X_RAND, 0, T_Y}}},                       // crc32 r, r/m32/64

    // ---- sse_fp: SSE/SSE2/SSE3/SSE4.1 floating point
    {"sse_fp", {0x58, 0x59, 0x5c, 0x5d, 0x5e, 0x5f, 0x51, 0x10, 0x11, 0xc2, 0x5a}, {
        {0x00, 1, 0, X_RAND, 0, XX, K_OPC},
        {0x66, 1, 0, X_RAND, 0, XX, K_OPC},
        {0xf3, 1, 0, X_RAND, 0, XX, K_OPC},
        {0xf2, 1, 0, X_RAND, 0, XX, K_OPC}}, cmpps_imm},
    {"sse_fp", {0x54, 0x55, 0x56, 0x57, 0x28, 0x29, 0x14, 0x15, 0x2e, 0x2f, 0x12, 0x13, 0x16, 0x17},
     {{0x00, 1, 0, X_RAND, 0, XX, K_OPC}, {0x66, 1, 0, X_RAND, 0, XX, K_OPC}}},
    {"sse_fp", {0x00, 0x66}, {{0, 1, 0xc6, X_RAND, 1, XX, K_PFX}}},
    {"sse_fp", {0x00, 0x66, 0xf3}, {{0, 1, 0x5b, X_RAND, 0, XX, K_PFX}}},
    {"sse_fp", {0x66, 0xf3, 0xf2}, {{0, 1, 0xe6, X_RAND, 0, XX, K_PFX}}},
    {"sse_fp", {0xf3, 0xf2}, {
        {0, 1, 0x2a, X_RAND, 0, T_RX | T_Y, K_PFX},
        {0, 1, 0x2c, X_RAND, 0, T_MX | T_Y, K_PFX},
        {0, 1, 0x2d, X_RAND, 0, T_MX | T_Y, K_PFX}}},
    {"sse_fp", {0x00, 0x66}, {{0, 1, 0x50, X_RAND, 0, T_MX | T_REG, K_PFX}}},
    {"sse_fp", {0x7c, 0xd0}, { // haddps haddpd, addsubps addsubpd
        {0xf2, 1, 0, X_RAND, 0, XX, K_OPC},
        {0x66, 1, 0, X_RAND, 0, XX, K_OPC}}},
    {"sse_fp", k0, {
        {0xf3, 1, 0x16, X_RAND, 0, XX},
        {0xf3, 1, 0x12, X_RAND, 0, XX},
        {0xf2, 1, 0x12, X_RAND, 0, XX}}},
    {"sse_fp", {0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x40, 0x41, 0x21},
     {{0x66, 3, 0, X_RAND, 1, XX, K_OPC}}},
    {"sse_fp", k0, {
        {0x66, 3, 0x17, X_RAND, 1, T_RX}, // extractps
        {0x66, 2, 0x14, X_RAND, 0, XX},   // blendvps
        {0x66, 2, 0x15, X_RAND, 0, XX},   // blendvpd
        {0, 1, 0xae, 3, 0, T_MEM},        // stmxcsr
        {0, 1, 0xae, 2, 0, T_MEM | T_LDMX}}}, // ldmxcsr
    {"sse_fp", {0x00, 0x66}, {{0, 1, 0x2b, X_RAND, 0, T_RX | T_MEM | T_A16, K_PFX}}}, // movntps/pd

    // ---- misc: hint NOPs, fences, XLAT, MOVNTI, prefetch
    {"misc", k0, {
        {0, 1, 0x1f, 0, 0, T_V},          // nop r/m
        {0xf3, 0, 0x90, X_NONE, 0, 0}}},  // pause
    {"misc", span(5, 7), {{0, 1, 0xae, X_K, 0, T_REG}}}, // lfence mfence sfence
    {"misc", k0, {
        {0, 0, 0xd7, X_NONE, 0, T_XLAT},      // xlat
        {0, 1, 0xc3, X_RAND, 0, T_Y | T_MEM}}}, // movnti
    {"misc", span(0, 3), {{0, 1, 0x18, X_K, 0, T_MEM}}}, // prefetch*

    // ---- x87 (the transcendentals included: AMD's results are the reference)
    {"x87", span(0, 7), {
        {0, 0, 0xd8, X_K, 0, XM},
        {0, 0, 0xda, X_K, 0, XM},
        {0, 0, 0xdc, X_K, 0, XM},
        {0, 0, 0xde, X_K, 0, XM},
        {0, 0, 0xdf, X_K, 0, XM}}},
    {"x87", {0, 2, 3, 5, 7}, {{0, 0, 0xd9, X_K, 0, XM}}},
    {"x87", {0, 1, 2, 3, 7}, {{0, 0, 0xdd, X_K, 0, XM}}},
    {"x87", {0, 1, 2, 3, 5, 7}, {{0, 0, 0xdb, X_K, 0, XM}}},
    {"x87", span(0, 7), {{0, 0, 0xd8, X_K, 0, XR}, {0, 0, 0xdc, X_K, 0, XR}}},
    {"x87", {0, 1, 4, 5, 6, 7}, {{0, 0, 0xde, X_K, 0, XR}}},
    {"x87", span(0, 3), {
        {0, 0, 0xda, X_K, 0, XR},   // fcmovb fcmove fcmovbe fcmovu
        {0, 0, 0xdb, X_K, 0, XR}}}, // fcmovnb ...
    {"x87", {0, 1}, {{0, 0, 0xd9, X_K, 0, XR}}}, // fld st(i), fxch
    {"x87", {5, 6}, {
        {0, 0, 0xdb, X_K, 0, XR},   // fucomi fcomi
        {0, 0, 0xdf, X_K, 0, XR}}}, // fucomip fcomip
    {"x87", {0, 2, 3, 4, 5}, {{0, 0, 0xdd, X_K, 0, XR}}}, // ffree fst fstp fucom fucomp
    {"x87", span(0xe0, 0xff, {0xe2, 0xe3, 0xe6, 0xe7, 0xef}),
     {{0, 0, 0xd9, X_NONE, 0, T_X87, K_OP2}}}, // fchs .. fcos
    {"x87", k0, {
        {0, 0, 0xd9, X_NONE, 0, T_X87, K_NONE, 0xd0}, // fnop
        {0, 0, 0xde, X_NONE, 0, T_X87, K_NONE, 0xd9}, // fcompp
        {0, 0, 0xda, X_NONE, 0, T_X87, K_NONE, 0xe9}, // fucompp
        {0, 0, 0xdb, X_NONE, 0, T_X87, K_NONE, 0xe2}, // fnclex
        {0, 0, 0xdb, X_NONE, 0, T_X87, K_NONE, 0xe3}, // fninit
        {0, 0, 0xdf, X_NONE, 0, T_X87, K_NONE, 0xe0}, // fnstsw ax
        {0, 0, 0x9b, X_NONE, 0, T_X87}}},             // fwait

    // ---- bcd: 32-bit mode only; needs a host that runs compatibility mode
    {"bcd", {0x27, 0x2f, 0x37, 0x3f}, {{0, 0, 0, X_NONE, 0, BCD, K_OPC}}},
    {"bcd", k0, {{0, 0, 0xd4, X_NONE, 1, BCD}, {0, 0, 0xd5, X_NONE, 1, BCD}}},

    // ---- legacy32: BOUND, SALC, ARPL (32-bit mode only, like bcd)
    {"legacy32", k0, {
        {0, 0, 0x62, X_RAND, 0, T_V | T_MEM | T_BOUND | BCD},
        {0, 0, 0xd6, X_NONE, 0, BCD},
        {0, 0, 0x63, X_RAND, 0, T_V | BCD}}},

    // ---- mmx: the MMX forms (no prefix) of the packed-integer ops, with
    // a random x87 state underneath (TOP, tags, the registers they alias)
    {"mmx",
     cat({span(0x60, 0x6b), {0x6f, 0x74, 0x75, 0x76},
          span(0xd1, 0xfe, {0xd6, 0xd7, 0xe6, 0xe7, 0xf0, 0xf7}), {0x7f}}),
     {{0, 1, 0, X_RAND, 0, T_X87, K_OPC}}},
    {"mmx", k0, {
        {0, 1, 0x70, X_RAND, 1, T_X87},                     // pshufw
        {0, 1, 0x6e, X_RAND, 0, T_X87 | T_Y},               // movd/movq mm, r/m
        {0, 1, 0x7e, X_RAND, 0, T_X87 | T_Y},               // movd/movq r/m, mm
        {0, 1, 0xd7, X_RAND, 0, T_X87 | T_REG},             // pmovmskb
        {0, 1, 0xc4, X_RAND, 1, T_X87},                     // pinsrw
        {0, 1, 0xc5, X_RAND, 1, T_X87 | T_REG},             // pextrw
        {0, 1, 0xe7, X_RAND, 0, T_X87 | T_MEM},             // movntq
        {0, 1, 0xf7, X_RAND, 0, T_X87 | T_REG | T_RDI},     // maskmovq
        {0, 1, 0x77, X_NONE, 0, T_X87},                     // emms
        {0xf3, 1, 0xd6, X_RAND, 0, T_X87 | T_RX | T_REG},   // movq2dq
        {0xf2, 1, 0xd6, X_RAND, 0, T_X87 | T_MX | T_REG},   // movdq2q
        {0, 3, 0x0f, X_RAND, 1, T_X87}}},                   // palignr
    {"mmx", {2, 4, 6}, {
        {0, 1, 0x71, X_K, 1, T_X87 | T_REG | T_SMALL},
        {0, 1, 0x72, X_K, 1, T_X87 | T_REG | T_SMALL}}},
    {"mmx", {2, 6}, {{0, 1, 0x73, X_K, 1, T_X87 | T_REG | T_SMALL}}},
    {"mmx", cat({span(0x00, 0x0b), {0x1c, 0x1d, 0x1e}}), {{0, 2, 0, X_RAND, 0, T_X87, K_OPC}}},
    // cvtpi2ps cvttps2pi cvtps2pi (no prefix), cvtpi2pd cvttpd2pi cvtpd2pi (66)
    {"mmx", {0x2a, 0x2c, 0x2d}, {
        {0, 1, 0, X_RAND, 0, T_X87 | T_RX | T_MX, K_OPC},
        {0x66, 1, 0, X_RAND, 0, T_X87 | T_RX | T_MX, K_OPC}}},

    // ---- crypto: AES-NI and PCLMULQDQ (legacy SSE encodings)
    {"crypto", {0xdb, 0xdc, 0xdd, 0xde, 0xdf}, {{0x66, 2, 0, X_RAND, 0, XX, K_OPC}}},
    {"crypto", k0, {
        {0x66, 3, 0xdf, X_RAND, 1, XX},   // aeskeygenassist
        {0x66, 3, 0x44, X_RAND, 1, XX},   // pclmulqdq
        {0, 3, 0xcc, X_RAND, 1, XX}}},    // sha1rnds4
    // sha1nexte sha1msg1 sha1msg2 sha256rnds2 sha256msg1 sha256msg2
    {"crypto", span(0xc8, 0xcd), {{0, 2, 0, X_RAND, 0, XX, K_OPC}}},

    // ---- avx: the VEX.128/VEX.256 forms of the SSE..SSE4.2, AES and
    // PCLMULQDQ instructions (integer ops VEX.128: their VEX.256 forms are
    // avx2's) and the AVX-only ones
    {"avx", {0x58, 0x59, 0x5c, 0x5d, 0x5e, 0x5f}, { // add mul sub min div max
        {0x00, 1, 0, X_RAND, 0, VN | LR | WIG, K_OPC},
        {0x66, 1, 0, X_RAND, 0, VN | LR | WIG, K_OPC},
        {0xf3, 1, 0, X_RAND, 0, VN | LR | WIG, K_OPC},  // ss: VEX.LIG
        {0xf2, 1, 0, X_RAND, 0, VN | LR | WIG, K_OPC}}},
    {"avx", {0x00, 0x66, 0xf3, 0xf2}, {{0, 1, 0xc2, X_RAND, 1, VN | LR | WIG | T_CMP32, K_PFX}}},
    {"avx", {0x00, 0x66}, {{0, 1, 0x51, X_RAND, 0, VV | LR | WIG, K_PFX}}},   // sqrtps/pd
    {"avx", {0xf3, 0xf2}, {{0, 1, 0x51, X_RAND, 0, VN | LR | WIG, K_PFX}}},   // sqrtss/sd
    {"avx", {0x54, 0x55, 0x56, 0x57, 0x14, 0x15}, { // and andn or xor unpcklp unpckhp
        {0x00, 1, 0, X_RAND, 0, VN | LR | WIG, K_OPC},
        {0x66, 1, 0, X_RAND, 0, VN | LR | WIG, K_OPC}}},
    {"avx", {0x00, 0x66}, {{0, 1, 0xc6, X_RAND, 1, VN | LR | WIG, K_PFX}}},   // shufps/pd
    {"avx", {0x7c, 0x7d, 0xd0}, {                   // hadd hsub addsub
        {0x66, 1, 0, X_RAND, 0, VN | LR | WIG, K_OPC},
        {0xf2, 1, 0, X_RAND, 0, VN | LR | WIG, K_OPC}}},
    {"avx", {0x00, 0x66}, {
        {0, 1, 0x10, X_RAND, 0, VV | LR | WIG, K_PFX},                 // vmovups/pd load
        {0, 1, 0x11, X_RAND, 0, VV | LR | WIG, K_PFX},                 // store
        {0, 1, 0x28, X_RAND, 0, VV | LR | WIG | T_MISAL, K_PFX},       // vmovaps/pd load
        {0, 1, 0x29, X_RAND, 0, VV | LR | WIG | T_MISAL, K_PFX},       // store
        {0, 1, 0x2b, X_RAND, 0, VV | T_MEM | LR | WIG | T_MISAL, K_PFX}, // vmovntps/pd
        {0, 1, 0x2e, X_RAND, 0, VV | LR | WIG, K_PFX},                 // vucomiss/sd
        {0, 1, 0x2f, X_RAND, 0, VV | LR | WIG, K_PFX},                 // vcomiss/sd
        {0, 1, 0x50, X_RAND, 0, T_VEX | T_MX | T_REG | LR | WIG, K_PFX}, // vmovmskps/pd
        {0, 1, 0x12, X_RAND, 0, VN | T_MEM | WIG, K_PFX},              // vmovlps/pd m64
        {0, 1, 0x13, X_RAND, 0, VV | T_MEM | WIG, K_PFX},              // vmovlps/pd store
        {0, 1, 0x16, X_RAND, 0, VN | T_MEM | WIG, K_PFX},              // vmovhps/pd m64
        {0, 1, 0x17, X_RAND, 0, VV | T_MEM | WIG, K_PFX}}},            // vmovhps/pd store
    {"avx", k0, {
        {0, 1, 0x12, X_RAND, 0, VN | T_REG | WIG},           // vmovhlps
        {0, 1, 0x16, X_RAND, 0, VN | T_REG | WIG},           // vmovlhps
        {0xf3, 1, 0x12, X_RAND, 0, VV | LR | WIG},           // vmovsldup
        {0xf3, 1, 0x16, X_RAND, 0, VV | LR | WIG},           // vmovshdup
        {0xf2, 1, 0x12, X_RAND, 0, VV | LR | WIG}}},         // vmovddup
    {"avx", {0xf3, 0xf2}, {
        {0, 1, 0x10, X_RAND, 0, VN | T_REG | LR | WIG, K_PFX}, // vmovss/sd xmm, xmm, xmm
        {0, 1, 0x10, X_RAND, 0, VV | T_MEM | LR | WIG, K_PFX}, // vmovss/sd xmm, m
        {0, 1, 0x11, X_RAND, 0, VN | T_REG | LR | WIG, K_PFX}, // 11 /r reg form
        {0, 1, 0x11, X_RAND, 0, VV | T_MEM | LR | WIG, K_PFX}, // vmovss/sd m, xmm
        {0, 1, 0x5a, X_RAND, 0, VN | LR | WIG, K_PFX},        // vcvtss2sd vcvtsd2ss
        {0, 1, 0x2a, X_RAND, 0, T_VEX | T_RX | T_VX | T_Y | LR, K_PFX}, // vcvtsi2ss/sd
        {0, 1, 0x2c, X_RAND, 0, T_VEX | T_MX | T_Y | LR, K_PFX}, // vcvttss2si
        {0, 1, 0x2d, X_RAND, 0, T_VEX | T_MX | T_Y | LR, K_PFX}}}, // vcvtss2si
    {"avx", {0x00, 0x66}, {{0, 1, 0x5a, X_RAND, 0, VV | LR | WIG, K_PFX}}}, // vcvtps2pd vcvtpd2ps
    {"avx", {0x00, 0x66, 0xf3}, {{0, 1, 0x5b, X_RAND, 0, VV | LR | WIG, K_PFX}}}, // dq2ps ps2dq tps2dq
    {"avx", {0x66, 0xf3, 0xf2}, {{0, 1, 0xe6, X_RAND, 0, VV | LR | WIG, K_PFX}}}, // tpd2dq dq2pd pd2dq
    {"avx", k0, {
        {0, 1, 0xae, 3, 0, T_VEX | T_MEM | WIG},             // vstmxcsr
        {0, 1, 0xae, 2, 0, T_VEX | T_MEM | T_LDMX | WIG},    // vldmxcsr
        {0, 1, 0x77, X_NONE, 0, T_VEX | WIG},                // vzeroupper
        {0, 1, 0x77, X_NONE, 0, T_VEX | WIG | L1}}},         // vzeroall
    // SSE4.1 floating point
    {"avx", {0x08, 0x09}, {{0x66, 3, 0, X_RAND, 1, VV | LR | WIG, K_OPC}}}, // vroundps/pd
    {"avx", {0x0a, 0x0b, 0x0c, 0x0d, 0x40}, // vroundss/sd vblendps/pd vdpps
     {{0x66, 3, 0, X_RAND, 1, VN | LR | WIG, K_OPC}}},
    {"avx", k0, {
        {0x66, 3, 0x41, X_RAND, 1, VN | WIG},                     // vdppd
        {0x66, 3, 0x21, X_RAND, 1, VN | WIG},                     // vinsertps
        {0x66, 3, 0x17, X_RAND, 1, T_VEX | T_RX | WIG},           // vextractps
        {0x66, 3, 0x4a, X_RAND, 1, VN | LR | T_IS4},              // vblendvps
        {0x66, 3, 0x4b, X_RAND, 1, VN | LR | T_IS4}}},            // vblendvpd
    // the AVX-only ones
    {"avx", k0, {
        {0x66, 2, 0x0c, X_RAND, 0, VN | LR},                      // vpermilps ymm
        {0x66, 2, 0x0d, X_RAND, 0, VN | LR},                      // vpermilpd ymm
        {0x66, 3, 0x04, X_RAND, 1, VV | LR},                      // vpermilps imm
        {0x66, 3, 0x05, X_RAND, 1, VV | LR},                      // vpermilpd imm
        {0x66, 3, 0x06, X_RAND, 1, VN | L1},                      // vperm2f128
        {0x66, 3, 0x18, X_RAND, 1, VN | L1},                      // vinsertf128
        {0x66, 3, 0x19, X_RAND, 1, VV | L1},                      // vextractf128
        {0x66, 2, 0x18, X_RAND, 0, VV | T_MEM | LR},              // vbroadcastss m32
        {0x66, 2, 0x19, X_RAND, 0, VV | T_MEM | L1},              // vbroadcastsd m64
        {0x66, 2, 0x1a, X_RAND, 0, VV | T_MEM | L1},              // vbroadcastf128
        {0x66, 2, 0x2c, X_RAND, 0, VN | T_MEM | LR},              // vmaskmovps load
        {0x66, 2, 0x2d, X_RAND, 0, VN | T_MEM | LR},              // vmaskmovpd load
        {0x66, 2, 0x2e, X_RAND, 0, VN | T_MEM | LR},              // vmaskmovps store
        {0x66, 2, 0x2f, X_RAND, 0, VN | T_MEM | LR},              // vmaskmovpd store
        {0x66, 2, 0x0e, X_RAND, 0, VV | LR},                      // vtestps
        {0x66, 2, 0x0f, X_RAND, 0, VV | LR},                      // vtestpd
        {0x66, 2, 0x17, X_RAND, 0, VV | LR | WIG}}},              // vptest
    // integer, VEX.128 (and the moves, VEX.256 too)
    {"avx", kVexInt0F, {{0x66, 1, 0, X_RAND, 0, VN | WIG, K_OPC}}},
    {"avx", kVexInt38, {{0x66, 2, 0, X_RAND, 0, VN | WIG, K_OPC}}},
    {"avx", kVexInt38Unary, {{0x66, 2, 0, X_RAND, 0, VV | WIG, K_OPC}}},
    {"avx", {0x66, 0xf2, 0xf3}, {{0, 1, 0x70, X_RAND, 1, VV | WIG, K_PFX}}}, // vpshufd/lw/hw
    {"avx", {2, 4, 6}, {
        {0x66, 1, 0x71, X_K, 1, T_VEX | T_MX | T_REG | T_VX | T_SMALL | WIG},
        {0x66, 1, 0x72, X_K, 1, T_VEX | T_MX | T_REG | T_VX | T_SMALL | WIG}}},
    {"avx", {2, 3, 6, 7}, {{0x66, 1, 0x73, X_K, 1, T_VEX | T_MX | T_REG | T_VX | T_SMALL | WIG}}},
    {"avx", k0, {
        {0x66, 1, 0x6f, X_RAND, 0, VV | LR | WIG | T_MISAL},      // vmovdqa load
        {0x66, 1, 0x7f, X_RAND, 0, VV | LR | WIG | T_MISAL},      // vmovdqa store
        {0xf3, 1, 0x6f, X_RAND, 0, VV | LR | WIG},                // vmovdqu load
        {0xf3, 1, 0x7f, X_RAND, 0, VV | LR | WIG},                // vmovdqu store
        {0x66, 1, 0xe7, X_RAND, 0, VV | T_MEM | LR | WIG | T_MISAL}, // vmovntdq
        {0xf2, 1, 0xf0, X_RAND, 0, VV | T_MEM | LR | WIG},        // vlddqu
        {0x66, 1, 0xd7, X_RAND, 0, T_VEX | T_MX | T_REG | LR | WIG}, // vpmovmskb
        {0xf3, 1, 0x7e, X_RAND, 0, VV | WIG},                     // vmovq xmm, xmm/m64
        {0x66, 1, 0xd6, X_RAND, 0, VV | WIG},                     // vmovq xmm/m64, xmm
        {0x66, 1, 0x6e, X_RAND, 0, T_VEX | T_RX | T_Y},           // vmovd/q xmm, r/m
        {0x66, 1, 0x7e, X_RAND, 0, T_VEX | T_RX | T_Y},           // vmovd/q r/m, xmm
        {0x66, 1, 0xc4, X_RAND, 1, T_VEX | T_RX | T_VX},          // vpinsrw
        {0x66, 1, 0xc5, X_RAND, 1, T_VEX | T_MX | T_REG},         // vpextrw r, xmm
        {0x66, 1, 0xf7, X_RAND, 0, T_VEX | T_RX | T_MX | T_REG | T_RDI | WIG}, // vmaskmovdqu
        {0x66, 2, 0x2a, X_RAND, 0, VV | T_MEM | WIG | T_MISAL},   // vmovntdqa (128)
        {0x66, 2, 0x41, X_RAND, 0, VV | WIG},                     // vphminposuw
        {0x66, 3, 0x0e, X_RAND, 1, VN | WIG},                     // vpblendw
        {0x66, 3, 0x0f, X_RAND, 1, VN | WIG},                     // vpalignr
        {0x66, 3, 0x42, X_RAND, 1, VN | WIG},                     // vmpsadbw
        {0x66, 3, 0x4c, X_RAND, 1, VN | T_IS4},                   // vpblendvb
        {0x66, 3, 0x14, X_RAND, 1, T_VEX | T_RX},                 // vpextrb
        {0x66, 3, 0x15, X_RAND, 1, T_VEX | T_RX},                 // vpextrw r/m16
        {0x66, 3, 0x16, X_RAND, 1, T_VEX | T_RX | T_Y},           // vpextrd/q
        {0x66, 3, 0x20, X_RAND, 1, T_VEX | T_RX | T_VX},          // vpinsrb
        {0x66, 3, 0x22, X_RAND, 1, T_VEX | T_RX | T_VX | T_Y}}},  // vpinsrd/q
    // SSE4.2 string compares (VEX.W1: RAX/RDX lengths), AES, PCLMULQDQ
    {"avx", span(0x60, 0x63), {{0x66, 3, 0, X_RAND, 1, VV | T_Y, K_OPC}}},
    {"avx", {0xdc, 0xdd, 0xde, 0xdf}, {{0x66, 2, 0, X_RAND, 0, VN | WIG, K_OPC}}},
    {"avx", k0, {
        {0x66, 2, 0xdb, X_RAND, 0, VV | WIG},                     // vaesimc
        {0x66, 3, 0xdf, X_RAND, 1, VV | WIG},                     // vaeskeygenassist
        {0x66, 3, 0x44, X_RAND, 1, VN | WIG}}},                   // vpclmulqdq

    // ---- avx2: the VEX.256 integer forms and the AVX2-only ops
    {"avx2", kVexInt0F, {{0x66, 1, 0, X_RAND, 0, VN | L1 | WIG, K_OPC}}},
    {"avx2", kVexInt38, {{0x66, 2, 0, X_RAND, 0, VN | L1 | WIG, K_OPC}}},
    {"avx2", kVexInt38Unary, {{0x66, 2, 0, X_RAND, 0, VV | L1 | WIG, K_OPC}}},
    {"avx2", {0x66, 0xf2, 0xf3}, {{0, 1, 0x70, X_RAND, 1, VV | L1 | WIG, K_PFX}}},
    {"avx2", {2, 4, 6}, {
        {0x66, 1, 0x71, X_K, 1, T_VEX | T_MX | T_REG | T_VX | T_SMALL | L1 | WIG},
        {0x66, 1, 0x72, X_K, 1, T_VEX | T_MX | T_REG | T_VX | T_SMALL | L1 | WIG}}},
    {"avx2", {2, 3, 6, 7},
     {{0x66, 1, 0x73, X_K, 1, T_VEX | T_MX | T_REG | T_VX | T_SMALL | L1 | WIG}}},
    {"avx2", k0, {
        {0x66, 2, 0x2a, X_RAND, 0, VV | T_MEM | L1 | WIG | T_MISAL}, // vmovntdqa ymm
        {0x66, 3, 0x0e, X_RAND, 1, VN | L1 | WIG},                // vpblendw
        {0x66, 3, 0x0f, X_RAND, 1, VN | L1 | WIG},                // vpalignr
        {0x66, 3, 0x42, X_RAND, 1, VN | L1 | WIG},                // vmpsadbw
        {0x66, 3, 0x4c, X_RAND, 1, VN | L1 | T_IS4},              // vpblendvb
        {0x66, 2, 0x58, X_RAND, 0, VV | LR},                      // vpbroadcastd
        {0x66, 2, 0x59, X_RAND, 0, VV | LR},                      // vpbroadcastq
        {0x66, 2, 0x78, X_RAND, 0, VV | LR},                      // vpbroadcastb
        {0x66, 2, 0x79, X_RAND, 0, VV | LR},                      // vpbroadcastw
        {0x66, 2, 0x5a, X_RAND, 0, VV | T_MEM | L1},              // vbroadcasti128
        {0x66, 2, 0x18, X_RAND, 0, VV | T_REG | LR},              // vbroadcastss xmm
        {0x66, 2, 0x19, X_RAND, 0, VV | T_REG | L1},              // vbroadcastsd xmm
        {0x66, 2, 0x16, X_RAND, 0, VN | L1},                      // vpermps
        {0x66, 2, 0x36, X_RAND, 0, VN | L1},                      // vpermd
        {0x66, 3, 0x00, X_RAND, 1, VV | L1 | W1},                 // vpermq
        {0x66, 3, 0x01, X_RAND, 1, VV | L1 | W1},                 // vpermpd
        {0x66, 3, 0x46, X_RAND, 1, VN | L1},                      // vperm2i128
        {0x66, 3, 0x38, X_RAND, 1, VN | L1},                      // vinserti128
        {0x66, 3, 0x39, X_RAND, 1, VV | L1},                      // vextracti128
        {0x66, 3, 0x02, X_RAND, 1, VN | LR},                      // vpblendd
        {0x66, 2, 0x47, X_RAND, 0, VN | LR},                      // vpsllvd
        {0x66, 2, 0x47, X_RAND, 0, VN | LR | W1},                 // vpsllvq
        {0x66, 2, 0x45, X_RAND, 0, VN | LR},                      // vpsrlvd
        {0x66, 2, 0x45, X_RAND, 0, VN | LR | W1},                 // vpsrlvq
        {0x66, 2, 0x46, X_RAND, 0, VN | LR},                      // vpsravd
        {0x66, 2, 0x8c, X_RAND, 0, VN | T_MEM | LR},              // vpmaskmovd load
        {0x66, 2, 0x8c, X_RAND, 0, VN | T_MEM | LR | W1},         // vpmaskmovq load
        {0x66, 2, 0x8e, X_RAND, 0, VN | T_MEM | LR},              // vpmaskmovd store
        {0x66, 2, 0x8e, X_RAND, 0, VN | T_MEM | LR | W1}}},       // vpmaskmovq store
    // gathers: dd dq qd qq, ps pd
    {"avx2", span(0x90, 0x93), {
        {0x66, 2, 0, X_RAND, 0, T_VEX | T_RX | T_VX | T_MEM | T_VSIB | LR, K_OPC},
        {0x66, 2, 0, X_RAND, 0, T_VEX | T_RX | T_VX | T_MEM | T_VSIB | LR | W1, K_OPC}}},

    // ---- fma: FMA3 (W0 ps/ss, W1 pd/sd) and F16C
    {"fma", {0x96, 0x97, 0x98, 0x9a, 0x9c, 0x9e, 0xa6, 0xa7, 0xa8, 0xaa, 0xac, 0xae,
             0xb6, 0xb7, 0xb8, 0xba, 0xbc, 0xbe}, { // packed: fmaddsub fmsubadd fmadd fmsub
        {0x66, 2, 0, X_RAND, 0, VN | LR, K_OPC},    // fnmadd fnmsub, 132 213 231
        {0x66, 2, 0, X_RAND, 0, VN | LR | W1, K_OPC}}},
    {"fma", {0x99, 0x9b, 0x9d, 0x9f, 0xa9, 0xab, 0xad, 0xaf, 0xb9, 0xbb, 0xbd, 0xbf}, {
        {0x66, 2, 0, X_RAND, 0, VN | LR, K_OPC},    // scalar (VEX.LIG)
        {0x66, 2, 0, X_RAND, 0, VN | LR | W1, K_OPC}}},
    {"fma", k0, {
        {0x66, 2, 0x13, X_RAND, 0, VV | LR | T_HALF},             // vcvtph2ps
        {0x66, 3, 0x1d, X_RAND, 1, VV | LR | T_RND8}}},           // vcvtps2ph
};

// One template from a row at the group's value k.
Tmpl expand(const Group &g, const Row &w, int k)
{
    Tmpl t{g.fam, w.pfx, w.map, w.opc, w.ext == X_K ? k : w.ext, w.imm, w.f, w.op2};
    switch (w.k) {
    case K_NONE: break;
    case K_OPC: t.opc = (uint8_t)(t.opc + k); break;
    case K_OPC8: t.opc = (uint8_t)(t.opc + 8 * k); break;
    case K_PFX: t.pfx = (uint8_t)k; break;
    case K_OP2: t.op2 = k; break;
    }
    if (g.adjust)
        g.adjust(t, k);
    return t;
}

std::vector<Tmpl> build_templates()
{
    std::vector<Tmpl> v;
    for (const Group &g : kGroups)
        for (int k : g.ks)
            for (const Row &w : g.rows)
                v.push_back(expand(g, w, k));
    return v;
}

} // namespace

const std::vector<Tmpl> &templates()
{
    static const std::vector<Tmpl> t = build_templates();
    return t;
}

} // namespace diffhost
