/* gdbstub_regs.c - the registers the gdb stub exposes: one table that
 * yields both the target description gdb reads (qXfer:features:read) and
 * the byte layout of the g/G/p/P packets, so the two cannot disagree.
 *
 * gdb's amd64 support (gdb/amd64-tdep.c, i386_validate_tdesc_p) accepts a
 * description only when feature "org.gnu.gdb.i386.core" names rax..gs, the
 * eight st registers and the eight x87 control registers, and
 * "org.gnu.gdb.i386.sse" names xmm0..15 and mxcsr, each by its expected
 * name; "org.gnu.gdb.i386.segments" adds fs_base and gs_base, and
 * "org.gnu.gdb.i386.avx" ymm0h..ymm15h, bits 255:128 of each YMM register,
 * from which gdb composes $ymm0..$ymm15 with the xmm registers (gdb's
 * features/i386/64bit-avx.xml; amd64_init_abi names them).  Registers of
 * features gdb does not know (ours: "org.entrysim.system") still show up
 * in `info registers system` and as $cr3 etc. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gdbstub_int.h"
#include "mem.h"
#include "x87.h"

/* In the order of the table below, so register numbers rise through the
 * description (the avx feature came last: appending it kept every number
 * before it). */
enum feature { F_CORE, F_SSE, F_SEGMENTS, F_SYSTEM, F_AVX, F_COUNT };

static const char *const feature_name[F_COUNT] = {
    "org.gnu.gdb.i386.core", "org.gnu.gdb.i386.sse", "org.gnu.gdb.i386.segments",
    "org.entrysim.system", "org.gnu.gdb.i386.avx",
};

/* What a register entry reads and writes. */
enum kind {
    K_GPR, K_RIP, K_FLAGS, K_SEL, K_ST, K_FCTRL, K_FSTAT, K_FTAG, K_FISEG, K_FIOFF, K_FOSEG,
    K_FOOFF, K_FOP, K_XMM, K_MXCSR, K_SEGBASE, K_CR0, K_CR2, K_CR3, K_CR4, K_CR8, K_EFER,
    K_KGSBASE, K_CPL, K_YMMH,
};

typedef struct reg {
    const char *name;
    uint8_t bits;
    uint8_t feature;
    uint8_t kind;
    uint8_t idx; /* GPR number, segment, st(i), xmm or ymm number */
    const char *type;
} reg;

#define GPR(n, i, t) {n, 64, F_CORE, K_GPR, i, t}
#define SEL(n, s) {n, 32, F_CORE, K_SEL, s, "int32"}
#define ST(i) {"st" #i, 80, F_CORE, K_ST, i, "i387_ext"}
#define FPC(n, k) {n, 32, F_CORE, k, 0, "int"}
#define XMM(i) {"xmm" #i, 128, F_SSE, K_XMM, i, "vec128"}
#define SYS(n, k) {n, 64, F_SYSTEM, k, 0, "uint64"}
#define YMMH(i) {"ymm" #i "h", 128, F_AVX, K_YMMH, i, "uint128"}

/* gdb's amd64 register order (gdb/amd64-tdep.c amd64_register_names):
 * note rbx before rcx and rsp last of the first eight, unlike the
 * encoding order of enum es_gpr. */
static const reg regs[] = {
    GPR("rax", ES_RAX, "int64"), GPR("rbx", ES_RBX, "int64"), GPR("rcx", ES_RCX, "int64"),
    GPR("rdx", ES_RDX, "int64"), GPR("rsi", ES_RSI, "int64"), GPR("rdi", ES_RDI, "int64"),
    GPR("rbp", ES_RBP, "data_ptr"), GPR("rsp", ES_RSP, "data_ptr"),
    GPR("r8", ES_R8, "int64"), GPR("r9", ES_R9, "int64"), GPR("r10", ES_R10, "int64"),
    GPR("r11", ES_R11, "int64"), GPR("r12", ES_R12, "int64"), GPR("r13", ES_R13, "int64"),
    GPR("r14", ES_R14, "int64"), GPR("r15", ES_R15, "int64"),
    {"rip", 64, F_CORE, K_RIP, 0, "code_ptr"},
    {"eflags", 32, F_CORE, K_FLAGS, 0, "i386_eflags"},
    SEL("cs", ES_SEG_CS), SEL("ss", ES_SEG_SS), SEL("ds", ES_SEG_DS), SEL("es", ES_SEG_ES),
    SEL("fs", ES_SEG_FS), SEL("gs", ES_SEG_GS),
    ST(0), ST(1), ST(2), ST(3), ST(4), ST(5), ST(6), ST(7),
    FPC("fctrl", K_FCTRL), FPC("fstat", K_FSTAT), FPC("ftag", K_FTAG), FPC("fiseg", K_FISEG),
    FPC("fioff", K_FIOFF), FPC("foseg", K_FOSEG), FPC("fooff", K_FOOFF), FPC("fop", K_FOP),
    XMM(0), XMM(1), XMM(2), XMM(3), XMM(4), XMM(5), XMM(6), XMM(7),
    XMM(8), XMM(9), XMM(10), XMM(11), XMM(12), XMM(13), XMM(14), XMM(15),
    {"mxcsr", 32, F_SSE, K_MXCSR, 0, "i386_mxcsr"},
    {"fs_base", 64, F_SEGMENTS, K_SEGBASE, ES_SEG_FS, "int"},
    {"gs_base", 64, F_SEGMENTS, K_SEGBASE, ES_SEG_GS, "int"},
    SYS("cr0", K_CR0), SYS("cr2", K_CR2), SYS("cr3", K_CR3), SYS("cr4", K_CR4),
    SYS("cr8", K_CR8), SYS("efer", K_EFER), SYS("kernel_gs_base", K_KGSBASE),
    SYS("cpl", K_CPL),
    YMMH(0), YMMH(1), YMMH(2), YMMH(3), YMMH(4), YMMH(5), YMMH(6), YMMH(7),
    YMMH(8), YMMH(9), YMMH(10), YMMH(11), YMMH(12), YMMH(13), YMMH(14), YMMH(15),
};

#define NREGS (sizeof regs / sizeof regs[0])

size_t es_gdb_nregs(void)
{
    return NREGS;
}

unsigned es_gdb_reg_size(size_t r)
{
    return r < NREGS ? regs[r].bits / 8u : 0;
}

/* RFLAGS bits a debugger may change: not VM (a mode switch) and not the
 * reserved bits; bit 1 always reads 1 (SDM Vol. 1, 3.4.3). */
#define WRITABLE_FLAGS \
    (ES_ARITH_FLAGS | ES_TF | ES_IF | ES_DF | ES_IOPL | ES_NT | ES_RF | ES_AC | ES_ID)

static uint64_t scalar(const es_machine *m, const reg *r)
{
    switch (r->kind) {
    case K_GPR: return m->gpr[r->idx];
    case K_RIP: return m->rip;
    case K_FLAGS: return m->rflags;
    case K_SEL: return m->seg[r->idx].sel;
    case K_FCTRL: return m->fpu.fcw;
    case K_FSTAT: return es_x87_fsw(m);
    case K_FTAG: return m->fpu.ftw;
    case K_FISEG: return m->fpu.fcs;
    case K_FIOFF: return (uint32_t)m->fpu.fip;
    case K_FOSEG: return m->fpu.fds;
    case K_FOOFF: return (uint32_t)m->fpu.fdp;
    case K_FOP: return m->fpu.fop;
    case K_MXCSR: return m->mxcsr;
    case K_SEGBASE: return m->seg[r->idx].base;
    case K_CR0: return m->cr0;
    case K_CR2: return m->cr2;
    case K_CR3: return m->cr3;
    case K_CR4: return m->cr4;
    case K_CR8: return m->cr8;
    case K_EFER: return m->efer;
    case K_KGSBASE: return m->msr.kernel_gs_base;
    case K_CPL: return m->cpl;
    default: return 0;
    }
}

unsigned es_gdb_reg_read(es_machine *m, size_t r, uint8_t out[16])
{
    if (r >= NREGS)
        return 0;
    const reg *g = &regs[r];
    unsigned n = g->bits / 8u;
    memset(out, 0, 16);
    if (g->kind == K_ST) {
        /* gdb's st0..st7 are stack-relative, as in FXSAVE; the host long
         * double is the same 80-bit extended format (x86-64 hosts) */
        long double v = m->fpu.fpr[(m->fpu.top + g->idx) & 7];
        memcpy(out, &v, 10);
    } else if (g->kind == K_XMM) {
        memcpy(out, m->xmm[g->idx].b, 16);
    } else if (g->kind == K_YMMH) {
        memcpy(out, m->ymmh[g->idx].b, 16);
    } else {
        uint64_t v = scalar(m, g);
        memcpy(out, &v, n); /* little-endian host */
    }
    return n;
}

int es_gdb_reg_write(es_machine *m, size_t r, const uint8_t *in)
{
    if (r >= NREGS)
        return -1;
    const reg *g = &regs[r];
    if (g->kind == K_ST) {
        long double v = 0;
        memcpy(&v, in, 10);
        m->fpu.fpr[(m->fpu.top + g->idx) & 7] = v;
        return 0;
    }
    if (g->kind == K_XMM) {
        memcpy(m->xmm[g->idx].b, in, 16);
        return 0;
    }
    if (g->kind == K_YMMH) {
        memcpy(m->ymmh[g->idx].b, in, 16);
        return 0;
    }
    uint64_t v = 0;
    memcpy(&v, in, g->bits / 8u);
    switch (g->kind) {
    case K_GPR: m->gpr[g->idx] = v; return 0;
    case K_RIP: m->rip = v & m->ipmask; return 0;
    case K_FLAGS:
        m->rflags = (m->rflags & ~(uint64_t)WRITABLE_FLAGS) | (v & WRITABLE_FLAGS) | 2;
        es_update_ac(m);
        return 0;
    case K_FCTRL: m->fpu.fcw = (uint16_t)v; return 0;
    case K_FSTAT: es_x87_set_fsw(m, (uint16_t)v); return 0;
    case K_FTAG: m->fpu.ftw = (uint16_t)v; return 0;
    case K_FISEG: m->fpu.fcs = (uint16_t)v; return 0;
    case K_FIOFF: m->fpu.fip = (uint32_t)v; return 0;
    case K_FOSEG: m->fpu.fds = (uint16_t)v; return 0;
    case K_FOOFF: m->fpu.fdp = (uint32_t)v; return 0;
    case K_FOP: m->fpu.fop = (uint16_t)(v & 0x7ff); return 0;
    /* MXCSR bits 16..31 are reserved (LDMXCSR would #GP, SDM Vol. 1, 10.2.3) */
    case K_MXCSR: m->mxcsr = (uint32_t)(v & 0xffff); return 0;
    case K_SEGBASE: m->seg[g->idx].base = v; return 0;
    default: return -1; /* selectors, control registers, cpl */
    }
}

/* Appends to buf at *len; false once it would not fit. */
__attribute__((format(printf, 4, 5))) static bool put(char *buf, size_t cap, size_t *len, const char *fmt, ...)
{
    if (*len >= cap)
        return false;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *len, cap - *len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= cap - *len) {
        *len = cap;
        return false;
    }
    *len += (size_t)n;
    return true;
}

/* Types the core and sse features refer to (gdb's target description
 * format, "Target Description Format" in the gdb manual: <flags>, <vector>,
 * <union>); bit positions from SDM Vol. 1, 3.4.3 (EFLAGS) and 10.2.3
 * (MXCSR). */
static const struct { const char *name; unsigned bit; } eflags_bits[] = {
    {"CF", 0}, {"", 1}, {"PF", 2}, {"AF", 4}, {"ZF", 6}, {"SF", 7}, {"TF", 8}, {"IF", 9},
    {"DF", 10}, {"OF", 11}, {"NT", 14}, {"RF", 16}, {"VM", 17}, {"AC", 18}, {"VIF", 19},
    {"VIP", 20}, {"ID", 21},
}, mxcsr_bits[] = {
    {"IE", 0}, {"DE", 1}, {"ZE", 2}, {"OE", 3}, {"UE", 4}, {"PE", 5}, {"DAZ", 6}, {"IM", 7},
    {"DM", 8}, {"ZM", 9}, {"OM", 10}, {"UM", 11}, {"PM", 12}, {"FZ", 15},
};

static const struct { const char *id, *elem; unsigned count; } vec_types[] = {
    {"v4f", "ieee_single", 4}, {"v2d", "ieee_double", 2}, {"v16i8", "int8", 16},
    {"v8i16", "int16", 8}, {"v4i32", "int32", 4}, {"v2i64", "int64", 2},
};

size_t es_gdb_target_xml(char *buf, size_t cap)
{
    size_t len = 0;
    bool ok = put(buf, cap, &len,
                  "<?xml version=\"1.0\"?>\n<!DOCTYPE target SYSTEM \"gdb-target.dtd\">\n"
                  "<target version=\"1.0\">\n<architecture>i386:x86-64</architecture>\n");
    for (int f = 0; f < F_COUNT && ok; f++) {
        ok = put(buf, cap, &len, "<feature name=\"%s\">\n", feature_name[f]);
        if (f == F_CORE) {
            ok = ok && put(buf, cap, &len, "<flags id=\"i386_eflags\" size=\"4\">\n");
            for (size_t i = 0; ok && i < sizeof eflags_bits / sizeof eflags_bits[0]; i++)
                ok = put(buf, cap, &len, "<field name=\"%s\" start=\"%u\" end=\"%u\"/>\n",
                         eflags_bits[i].name, eflags_bits[i].bit, eflags_bits[i].bit);
            ok = ok && put(buf, cap, &len, "</flags>\n");
        } else if (f == F_SSE) {
            for (size_t i = 0; ok && i < sizeof vec_types / sizeof vec_types[0]; i++)
                ok = put(buf, cap, &len, "<vector id=\"%s\" type=\"%s\" count=\"%u\"/>\n",
                         vec_types[i].id, vec_types[i].elem, vec_types[i].count);
            ok = ok && put(buf, cap, &len,
                           "<union id=\"vec128\">\n<field name=\"v4_float\" type=\"v4f\"/>\n"
                           "<field name=\"v2_double\" type=\"v2d\"/>\n"
                           "<field name=\"v16_int8\" type=\"v16i8\"/>\n"
                           "<field name=\"v8_int16\" type=\"v8i16\"/>\n"
                           "<field name=\"v4_int32\" type=\"v4i32\"/>\n"
                           "<field name=\"v2_int64\" type=\"v2i64\"/>\n"
                           "<field name=\"uint128\" type=\"uint128\"/>\n</union>\n"
                           "<flags id=\"i386_mxcsr\" size=\"4\">\n");
            for (size_t i = 0; ok && i < sizeof mxcsr_bits / sizeof mxcsr_bits[0]; i++)
                ok = put(buf, cap, &len, "<field name=\"%s\" start=\"%u\" end=\"%u\"/>\n",
                         mxcsr_bits[i].name, mxcsr_bits[i].bit, mxcsr_bits[i].bit);
            ok = ok && put(buf, cap, &len, "</flags>\n");
        }
        for (size_t r = 0; ok && r < NREGS; r++) {
            if (regs[r].feature != f)
                continue;
            /* no group for ymm0h..: gdb shows the $ymmN it composes, not them */
            const char *group = f == F_SSE && regs[r].kind == K_XMM ? " group=\"vector\""
                                : f == F_CORE && regs[r].kind >= K_ST ? " group=\"float\""
                                : f == F_SYSTEM                       ? " group=\"system\""
                                                                      : "";
            ok = put(buf, cap, &len, "<reg name=\"%s\" bitsize=\"%u\" type=\"%s\" regnum=\"%zu\"%s/>\n",
                     regs[r].name, regs[r].bits, regs[r].type, r, group);
        }
        ok = ok && put(buf, cap, &len, "</feature>\n");
    }
    ok = ok && put(buf, cap, &len, "</target>\n");
    return ok ? len : 0;
}
