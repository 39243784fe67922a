// diff_compare.cc - the native result of a case against the simulator's,
// and the text that explains a mismatch.
//
// Compared: the GPRs (the low eight in 32-bit mode), the arithmetic flags
// and DF the SDM defines for the instruction (es_insn.fl_undef masked
// out: a difference there only sets undef_diff), MXCSR, the XMM
// registers and the upper halves of the YMM registers (by register: a
// legacy SSE instruction keeps bits 255:128, a VEX.128 one zeroes them),
// FCW/FSW/abridged FTW and the valid x87 registers, and both
// memory windows.  A native fault must be the simulator's fault, with the
// same state at the fault.
#include <cinttypes>
#include <csignal>
#include <cstdarg>
#include <cstring>

#include "diff_host.h"
#include "fault.h"

namespace diffhost {

const char *const kGprName[16] = {"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
                                  "r8",  "r9",  "r10", "r11", "r12", "r13", "r14", "r15"};

std::string hex(uint64_t v)
{
    char b[24];
    snprintf(b, sizeof b, "0x%" PRIx64, v);
    return b;
}

namespace {

// Linux's signal for an exception vector (what the native run observes).
int vector_signal(int v)
{
    switch (v) {
    case VEC_DE: case VEC_MF: case VEC_XM: return SIGFPE;
    case VEC_UD: return SIGILL;
    case VEC_BP: case VEC_DB: return SIGTRAP;
    case VEC_AC: case VEC_SS: return SIGBUS;
    default: return SIGSEGV;
    }
}

std::string xmm_text(const uint8_t *v) // hi_lo
{
    uint64_t lo, hi;
    memcpy(&lo, v, 8);
    memcpy(&hi, v + 8, 8);
    char b[40];
    snprintf(b, sizeof b, "%016" PRIx64 "_%016" PRIx64, hi, lo);
    return b;
}

std::string f80_text(const uint8_t *v) // sign+exponent_mantissa
{
    uint64_t mt;
    uint16_t se;
    memcpy(&mt, v, 8);
    memcpy(&se, v + 8, 2);
    char q[32];
    snprintf(q, sizeof q, "%04x_%016" PRIx64, se, mt);
    return q;
}

// A YMM register: bits 255:128, then 127:0.
std::string ymm_text(const diff_state &st, int r)
{
    return xmm_text(st.ymmh[r]) + "_" + xmm_text(st.xmm[r]);
}

// The address and first 16 bytes of a memory operand.
std::string mem_input(const Case &c, const es_operand &op)
{
    uint64_t a = (uint64_t)op.disp, lo = 0, hi = 0;
    if (op.base != ES_REG_NONE)
        a += c.st.gpr[op.base];
    if (op.index != ES_REG_NONE)
        a += c.st.gpr[op.index] * op.scale;
    if (c.d.asize == 4)
        a = (uint32_t)a;
    uint64_t q[2] = {0, 0}; // bytes 31:16 of a 32-byte operand
    bool wide = op.size == 32 && a >= DIFF_DATA && a + 32 <= DIFF_DATA + DIFF_DATA_SIZE;
    if (a >= DIFF_DATA && a + 16 <= DIFF_DATA + DIFF_DATA_SIZE) {
        memcpy(&lo, c.data + (a - DIFF_DATA), 8);
        memcpy(&hi, c.data + (a - DIFF_DATA) + 8, 8);
    }
    if (wide)
        memcpy(q, c.data + (a - DIFF_DATA) + 16, 16);
    char b[128];
    if (wide)
        snprintf(b, sizeof b, " [%#" PRIx64 "]=%016" PRIx64 "_%016" PRIx64 "_%016" PRIx64
                 "_%016" PRIx64, a, q[1], q[0], hi, lo);
    else
        snprintf(b, sizeof b, " [%#" PRIx64 "]=%016" PRIx64 "_%016" PRIx64, a, hi, lo);
    return b;
}

// FCW, FSW, FTW and ST0/ST1 of an x87 instruction's initial state.
std::string x87_inputs(const Case &c)
{
    char b[96];
    uint16_t w[2];
    memcpy(w, c.st.fx, 4);
    snprintf(b, sizeof b, " fcw=%#06x fsw=%#06x ftw=%#04x", w[0], w[1], c.st.fx[4]);
    std::string out = b;
    for (int i = 0; i < 2; i++) {
        uint64_t mt;
        uint16_t se;
        memcpy(&mt, c.st.fx + 32 + 16 * i, 8);
        memcpy(&se, c.st.fx + 40 + 16 * i, 2);
        unsigned phys = (((unsigned)w[1] >> 11) + i) & 7;
        snprintf(b, sizeof b, " st%d=%04x_%016" PRIx64 "%s", i, se, mt,
                 (c.st.fx[4] >> phys) & 1 ? "" : "(empty)");
        out += b;
    }
    return out;
}

} // namespace

std::string inputs(const Case &c)
{
    std::string out = "  inputs:";
    char b[96];
    for (int i = 0; i < c.d.nops; i++) {
        const es_operand &op = c.d.o[i];
        if (op.kind == ES_OPK_GPR || op.kind == ES_OPK_HI8) {
            snprintf(b, sizeof b, " %s=%s", kGprName[op.reg], hex(c.st.gpr[op.reg]).c_str());
            out += b;
        } else if (op.kind == ES_OPK_XMM) {
            out += " xmm" + std::to_string(op.reg) + "=" + xmm_text(c.st.xmm[op.reg]);
        } else if (op.kind == ES_OPK_YMM) {
            out += " ymm" + std::to_string(op.reg) + "=" + ymm_text(c.st, op.reg);
        } else if (op.kind == ES_OPK_MEM) {
            out += mem_input(c, op);
        } else if (op.kind == ES_OPK_VSIB) {
            // a gather: base (its value is in the GPRs above) and the index vector
            char b2[96];
            snprintf(b2, sizeof b2, " vsib[%s=%s + v%u*%u %+" PRId64 "] v%u=",
                     op.base < 16 ? kGprName[op.base] : "none",
                     hex(op.base < 16 ? c.st.gpr[op.base] : 0).c_str(), op.index, op.scale,
                     op.disp, op.index);
            out += b2 + ymm_text(c.st, op.index);
        }
    }
    if (c.d.opmap == 0 && c.d.opcode >= 0xd8 && c.d.opcode <= 0xdf) // x87
        out += x87_inputs(c);
    if (c.d.op == ES_OP_PCMPESTRI || c.d.op == ES_OP_PCMPESTRM || c.d.op == ES_OP_VPCMPESTRI ||
        c.d.op == ES_OP_VPCMPESTRM) { // the implicit lengths
        snprintf(b, sizeof b, " rax=%s rdx=%s", hex(c.st.gpr[ES_RAX]).c_str(),
                 hex(c.st.gpr[ES_RDX]).c_str());
        out += b;
    }
    snprintf(b, sizeof b, " rflags=%#" PRIx64 " mxcsr=%#x\n", c.st.rflags, c.st.mxcsr);
    return out + b;
}

namespace {

// What one check looks at: the case, both results and the mode.
struct Cmp {
    const Case &c;
    const diff_result &n, &s;
    const int nreg; // registers of the mode: 16 or 8
    Outcome &o;
    void say(const char *fmt, ...) __attribute__((format(printf, 2, 3)))
    {
        char line[256];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(line, sizeof line, fmt, ap);
        va_end(ap);
        o.why += line;
    }
};

void cmp_gprs(Cmp &k)
{
    for (int i = 0; i < k.nreg; i++)
        if (k.n.st.gpr[i] != k.s.st.gpr[i])
            k.say("  %-6s in %-18s native %-18s sim %s\n", kGprName[i],
                  hex(k.c.st.gpr[i]).c_str(), hex(k.n.st.gpr[i]).c_str(),
                  hex(k.s.st.gpr[i]).c_str());
}

void cmp_flags(Cmp &k)
{
    const Case &c = k.c;
    uint64_t mask = kCmpFlags & ~(uint64_t)c.d.fl_undef;
    uint64_t fd = (k.n.st.rflags ^ k.s.st.rflags) & kCmpFlags;
    if (fd & mask)
        k.say("  rflags in %-18s native %-18s sim %s (compared bits %s, undefined %s)\n",
              hex(c.st.rflags).c_str(), hex(k.n.st.rflags & kCmpFlags).c_str(),
              hex(k.s.st.rflags & kCmpFlags).c_str(), hex(mask).c_str(),
              hex(c.d.fl_undef).c_str());
    else if (fd)
        k.o.undef_diff = true;
}

void cmp_mxcsr(Cmp &k)
{
    if (k.n.st.mxcsr != k.s.st.mxcsr)
        k.say("  mxcsr  in %#x native %#x sim %#x\n", k.c.st.mxcsr, k.n.st.mxcsr, k.s.st.mxcsr);
}

void cmp_xmm(Cmp &k)
{
    for (int i = 0; i < k.nreg; i++)
        if (memcmp(k.n.st.xmm[i], k.s.st.xmm[i], 16))
            k.say("  xmm%-3d in %s\n         native %s\n         sim    %s\n", i,
                  xmm_text(k.c.st.xmm[i]).c_str(), xmm_text(k.n.st.xmm[i]).c_str(),
                  xmm_text(k.s.st.xmm[i]).c_str());
}

// Bits 255:128 by register; a report line shows the whole YMM value (in:
// bits 255:128 of the initial state).
void cmp_ymmh(Cmp &k)
{
    for (int i = 0; i < k.nreg; i++)
        if (memcmp(k.n.st.ymmh[i], k.s.st.ymmh[i], 16))
            k.say("  ymm%-2d[255:128] in %s\n         native %s\n         sim    %s\n", i,
                  xmm_text(k.c.st.ymmh[i]).c_str(), xmm_text(k.n.st.ymmh[i]).c_str(),
                  xmm_text(k.s.st.ymmh[i]).c_str());
}

void cmp_x87(Cmp &k)
{
    const uint8_t *nf = k.n.st.fx, *sf = k.s.st.fx, *cf = k.c.st.fx;
    uint16_t nw[2], sw[2], iw[2];
    memcpy(nw, nf, 4);
    memcpy(sw, sf, 4);
    memcpy(iw, cf, 4);
    if (nw[0] != sw[0])
        k.say("  fcw    in %#06x native %#06x sim %#06x\n", iw[0], nw[0], sw[0]);
    if (nw[1] != sw[1])
        k.say("  fsw    in %#06x native %#06x sim %#06x%s\n", iw[1], nw[1], sw[1],
              ((nw[1] ^ sw[1]) & ~0x4700) ? "" : " (condition codes only)");
    if (nf[4] != sf[4])
        k.say("  ftw    in %#04x native %#04x sim %#04x (abridged, physical)\n", cf[4], nf[4],
              sf[4]);
    unsigned top = (nw[1] >> 11) & 7;
    for (int i = 0; i < 8; i++) {
        const uint8_t *a = nf + 32 + 16 * i, *b = sf + 32 + 16 * i;
        if (((nf[4] >> ((top + i) & 7)) & 1) && memcmp(a, b, 10))
            k.say("  st(%d)  native %s sim %s\n", i, f80_text(a).c_str(), f80_text(b).c_str());
    }
}

void memdiff(Cmp &k, const uint8_t *a, const uint8_t *b, const uint8_t *init, size_t sz,
             uint64_t at)
{
    int shown = 0;
    for (size_t i = 0; i < sz; i++)
        if (a[i] != b[i] && shown++ < 8)
            k.say("  mem %#" PRIx64 ": in %02x native %02x sim %02x\n", at + i, init[i], a[i],
                  b[i]);
}

void cmp_memory(Cmp &k)
{
    memdiff(k, k.n.data, k.s.data, k.c.data, DIFF_DATA_SIZE, DIFF_DATA);
    memdiff(k, k.n.stack, k.s.stack, k.c.stack, DIFF_STACK_SIZE, DIFF_STACK);
}

// In this order: the order of the lines in a mismatch report.
void (*const kChecks[])(Cmp &) = {cmp_gprs,  cmp_flags, cmp_mxcsr, cmp_xmm,
                                          cmp_ymmh, cmp_x87,   cmp_memory};

// Faults: false when the outcome is decided (a harness problem, or the two
// sides did not fault alike); true when the states are to be compared
// (no fault, or the same fault).
bool faults_alike(const Case &c, const diff_result &n, const diff_result &s, Outcome &o)
{
    if (s.unimpl) {
        o.ok = false;
        o.unimpl = true;
        o.why = "  simulator: not implemented (#UD)\n";
        return false;
    }
    if (n.fault_elsewhere) {
        o.ok = false;
        o.why = "  harness: the native run faulted outside the instruction\n";
        return false;
    }
    if (!n.fault && !s.fault)
        return true;
    int ssig = s.fault > 0 && s.fault <= 32 ? vector_signal(s.fault - 1) : 0;
    if (n.fault && ssig == n.fault)
        return true; // same fault: the state at the fault must match too
    o.ok = false;
    char line[256];
    snprintf(line, sizeof line, "  fault: native %s, simulator %s\n",
             n.fault ? strsignal(n.fault) : "none",
             s.fault == 0 ? "none" : s.fault <= 32 ? es_vector_name(s.fault - 1) : "harness error");
    o.why += line;
    o.why += inputs(c);
    return false;
}

} // namespace

Outcome compare(const Case &c, int mode, const diff_result &n, const diff_result &s)
{
    Outcome o{true, false, false, ""};
    if (!faults_alike(c, n, s, o))
        return o;
    Cmp k{c, n, s, mode == ES_MODE_64 ? 16 : 8, o};
    for (void (*check)(Cmp &) : kChecks)
        check(k);
    o.ok = o.why.empty();
    if (!o.ok)
        o.why += inputs(c);
    return o;
}

} // namespace diffhost
