/* decoder.c - Zydis behind the project's compact es_insn form. */
#include "decoder.h"

#include <stdio.h>
#include <string.h>

#include <Zycore/Format.h>
#include <Zydis/Zydis.h>

_Static_assert((int)ES_OP_ADD == (int)ZYDIS_MNEMONIC_ADD, "es_op must mirror ZydisMnemonic");
_Static_assert((int)ES_OP_COUNT == (int)ZYDIS_MNEMONIC_MAX_VALUE + 1, "es_op count");

static int init_decoder(ZydisDecoder *dec, int mode)
{
    ZyanStatus st = mode == ES_MODE_64
                        ? ZydisDecoderInit(dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)
                        : ZydisDecoderInit(dec, ZYDIS_MACHINE_MODE_LONG_COMPAT_32,
                                           ZYDIS_STACK_WIDTH_32);
    return ZYAN_SUCCESS(st) ? 0 : -1;
}

static uint8_t seg_of(ZydisRegister r)
{
    switch (r) {
    case ZYDIS_REGISTER_ES: return ES_SEG_ES;
    case ZYDIS_REGISTER_CS: return ES_SEG_CS;
    case ZYDIS_REGISTER_SS: return ES_SEG_SS;
    case ZYDIS_REGISTER_DS: return ES_SEG_DS;
    case ZYDIS_REGISTER_FS: return ES_SEG_FS;
    case ZYDIS_REGISTER_GS: return ES_SEG_GS;
    default: return ES_SEG_NONE;
    }
}

/* Maps a general-purpose register to its number 0..15 (rax..r15) whatever
 * its width; 0xff for anything else. */
static uint8_t gpr_num(ZydisRegister r)
{
    if (r == ZYDIS_REGISTER_NONE)
        return ES_REG_NONE;
    if (r == ZYDIS_REGISTER_RIP || r == ZYDIS_REGISTER_EIP)
        return ES_REG_RIP;
    if (r >= ZYDIS_REGISTER_AH && r <= ZYDIS_REGISTER_BH)
        return ES_REG_NONE; /* cannot be an address register */
    ZydisRegisterClass c = ZydisRegisterGetClass(r);
    if (c == ZYDIS_REGCLASS_GPR8 || c == ZYDIS_REGCLASS_GPR16 || c == ZYDIS_REGCLASS_GPR32 ||
        c == ZYDIS_REGCLASS_GPR64) {
        /* Zydis' GPR8 ids put ah..bh at 4..7 and spl..dil at 8..11 */
        int id = ZydisRegisterGetId(r);
        if (c == ZYDIS_REGCLASS_GPR8) {
            if (r >= ZYDIS_REGISTER_SPL && r <= ZYDIS_REGISTER_DIL)
                return (uint8_t)(4 + (r - ZYDIS_REGISTER_SPL));
            if (r >= ZYDIS_REGISTER_R8B && r <= ZYDIS_REGISTER_R15B)
                return (uint8_t)(8 + (r - ZYDIS_REGISTER_R8B));
            return (uint8_t)(r - ZYDIS_REGISTER_AL);
        }
        return (uint8_t)id;
    }
    return ES_REG_NONE;
}

static int convert_reg(ZydisRegister r, es_operand *o)
{
    if (r >= ZYDIS_REGISTER_AH && r <= ZYDIS_REGISTER_BH) {
        o->kind = ES_OPK_HI8;
        o->reg = (uint8_t)(r - ZYDIS_REGISTER_AH);
        o->size = 1;
        return 0;
    }
    switch (ZydisRegisterGetClass(r)) {
    case ZYDIS_REGCLASS_GPR8:
    case ZYDIS_REGCLASS_GPR16:
    case ZYDIS_REGCLASS_GPR32:
    case ZYDIS_REGCLASS_GPR64:
        o->kind = ES_OPK_GPR;
        o->reg = gpr_num(r);
        return 0;
    case ZYDIS_REGCLASS_XMM:
        o->kind = ES_OPK_XMM;
        break;
    case ZYDIS_REGCLASS_YMM:
        o->kind = ES_OPK_YMM;
        break;
    case ZYDIS_REGCLASS_MMX:
        o->kind = ES_OPK_MMX;
        break;
    case ZYDIS_REGCLASS_X87:
        o->kind = ES_OPK_ST;
        break;
    case ZYDIS_REGCLASS_SEGMENT:
        o->kind = ES_OPK_SEG;
        o->reg = seg_of(r);
        return 0;
    case ZYDIS_REGCLASS_CONTROL:
        o->kind = ES_OPK_CR;
        break;
    case ZYDIS_REGCLASS_DEBUG:
        o->kind = ES_OPK_DR;
        break;
    default:
        return -1; /* zmm, mask, bound...: not modelled */
    }
    o->reg = (uint8_t)ZydisRegisterGetId(r);
    return 0;
}

/* One visible operand of a decoded instruction as an es_operand: 0, or -1
 * for a kind the simulator does not model.  RIP-relative memory and
 * relative branch targets become absolute (rip is the instruction's). */
static int convert_operand(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *z,
                           int mode, uint64_t rip, es_operand *o)
{
    o->size = (uint8_t)(z->size / 8);
    o->write = (z->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) != 0;
    switch (z->type) {
    case ZYDIS_OPERAND_TYPE_REGISTER:
        if (convert_reg(z->reg.value, o) != 0)
            return -1;
        o->vvvv = z->encoding == ZYDIS_OPERAND_ENCODING_NDSNDD;
        break;
    case ZYDIS_OPERAND_TYPE_MEMORY:
        o->kind = z->mem.type == ZYDIS_MEMOP_TYPE_AGEN ? ES_OPK_AGEN : ES_OPK_MEM;
        if (z->mem.type == ZYDIS_MEMOP_TYPE_MIB)
            return -1;
        o->seg = seg_of(z->mem.segment);
        o->base = gpr_num(z->mem.base);
        o->index = gpr_num(z->mem.index);
        if (z->mem.type == ZYDIS_MEMOP_TYPE_VSIB) {
            /* the index is a vector register; the element width is the
             * operand's element size */
            es_operand ix;
            if (convert_reg(z->mem.index, &ix) != 0 || ix.kind == ES_OPK_GPR)
                return -1;
            o->kind = ES_OPK_VSIB;
            o->index = ix.reg;
            o->vsib = ix.kind == ES_OPK_YMM ? 32 : 16;
            o->size = (uint8_t)(z->element_size / 8);
        }
        o->scale = o->index == ES_REG_NONE ? 0 : z->mem.scale;
        o->disp = z->mem.disp.has_displacement ? z->mem.disp.value : 0;
        if (o->base == ES_REG_RIP) {
            /* fold RIP-relative into an absolute displacement: the
             * cache entry belongs to this RIP anyway */
            o->base = ES_REG_NONE;
            o->disp = (int64_t)(rip + in->length + (uint64_t)o->disp);
        }
        break;
    case ZYDIS_OPERAND_TYPE_POINTER:
        o->kind = ES_OPK_PTR;
        o->imm = z->ptr.offset;
        o->ptr_sel = z->ptr.segment;
        break;
    case ZYDIS_OPERAND_TYPE_IMMEDIATE:
        if (z->imm.is_relative) {
            uint64_t t = rip + in->length + (uint64_t)z->imm.value.s;
            if (mode == ES_MODE_32)
                t &= 0xffffffffu;
            if (in->operand_width == 16)
                t &= 0xffffu;
            o->kind = ES_OPK_REL;
            o->imm = (int64_t)t;
        } else {
            o->kind = ES_OPK_IMM;
            o->imm = z->imm.is_signed ? z->imm.value.s : (int64_t)z->imm.value.u;
        }
        break;
    default:
        return -1;
    }
    return 0;
}

int es_decode(const uint8_t *bytes, size_t avail, int mode, uint64_t rip, es_insn *out)
{
    ZydisDecoder dec;
    ZydisDecodedInstruction in;
    ZydisDecodedOperand zo[ZYDIS_MAX_OPERAND_COUNT];

    if (init_decoder(&dec, mode) != 0)
        return ES_DECODE_INVALID;
    ZyanStatus st = ZydisDecoderDecodeFull(&dec, bytes, avail, &in, zo);
    if (st == ZYDIS_STATUS_NO_MORE_DATA)
        return avail >= ZYDIS_MAX_INSTRUCTION_LENGTH ? ES_DECODE_INVALID : ES_DECODE_NEED_MORE;
    if (!ZYAN_SUCCESS(st))
        return ES_DECODE_INVALID;

    memset(out, 0, sizeof *out);
    out->op = (uint16_t)in.mnemonic;
    out->len = in.length;
    out->osize = (uint8_t)(in.operand_width / 8);
    out->asize = (uint8_t)(in.address_width / 8);
    out->mode = (uint8_t)mode;
    out->opcode = in.opcode;
    out->opmap = (uint8_t)in.opcode_map;
    if (in.attributes & ZYDIS_ATTRIB_HAS_MODRM)
        out->modrm = (uint8_t)((in.raw.modrm.mod << 6) | (in.raw.modrm.reg << 3) | in.raw.modrm.rm);
    if (in.attributes & (ZYDIS_ATTRIB_HAS_REP | ZYDIS_ATTRIB_HAS_REPE))
        out->pfx |= ES_PFX_REP;
    if (in.attributes & ZYDIS_ATTRIB_HAS_REPNE)
        out->pfx |= ES_PFX_REPNE;
    if (in.attributes & ZYDIS_ATTRIB_HAS_LOCK)
        out->pfx |= ES_PFX_LOCK;
    if (in.attributes & ZYDIS_ATTRIB_HAS_OPERANDSIZE)
        out->pfx |= ES_PFX_OSIZE;
    if (in.attributes & ZYDIS_ATTRIB_HAS_SEGMENT)
        out->pfx |= ES_PFX_SEGOVR;
    /* raw.rex and raw.vex share storage in Zydis: REX.W only means
     * something for the legacy encodings */
    if (in.encoding == ZYDIS_INSTRUCTION_ENCODING_LEGACY && in.raw.rex.W)
        out->pfx |= ES_PFX_REXW;
    if (in.encoding == ZYDIS_INSTRUCTION_ENCODING_VEX) {
        out->pfx |= ES_PFX_VEX;
        if (in.raw.vex.W)
            out->pfx |= ES_PFX_REXW;
        if (in.raw.vex.L)
            out->pfx |= ES_PFX_VEXL;
    } else if (in.encoding != ZYDIS_INSTRUCTION_ENCODING_LEGACY &&
               in.encoding != ZYDIS_INSTRUCTION_ENCODING_3DNOW) {
        return ES_DECODE_INVALID; /* EVEX, MVEX, XOP: not modelled */
    }
    if (in.cpu_flags) {
        out->fl_undef = (uint16_t)in.cpu_flags->undefined;
        out->fl_mod = (uint16_t)(in.cpu_flags->modified | in.cpu_flags->set_0 |
                                 in.cpu_flags->set_1 | in.cpu_flags->undefined);
    }

    /* The string instructions' memory operands are hidden; keep the
     * effective segment of the source so an override (fs: movsb) works. */
    out->sseg = ES_SEG_DS;
    for (int i = in.operand_count_visible; i < in.operand_count; i++)
        if (zo[i].type == ZYDIS_OPERAND_TYPE_MEMORY && zo[i].mem.base != ZYDIS_REGISTER_RDI &&
            zo[i].mem.base != ZYDIS_REGISTER_EDI && zo[i].mem.base != ZYDIS_REGISTER_DI) {
            out->sseg = seg_of(zo[i].mem.segment);
            break;
        }

    int n = in.operand_count_visible;
    if (n > 4)
        return ES_DECODE_INVALID; /* only AVX-512 forms have more; not modelled */
    out->nops = (uint8_t)n;
    for (int i = 0; i < n; i++)
        if (convert_operand(&in, &zo[i], mode, rip, &out->o[i]) != 0)
            return ES_DECODE_INVALID;
    return ES_DECODE_OK;
}

/* What the formatter hooks need: the symbolizer and the hooks they replace
 * (Zydis hands user_data to every hook; no global holds them). */
typedef struct fmt_ctx {
    es_symbolizer sym;
    void *sym_ctx;
    ZydisFormatterFunc print_abs, print_disp;
} fmt_ctx;

/* Appends " <name+0xoff>" (or " <name>") as a symbol token when addr has a
 * name. */
static ZyanStatus append_sym(ZydisFormatterBuffer *buffer, const fmt_ctx *fc, uint64_t addr)
{
    uint64_t off = 0;
    const char *name = fc->sym(fc->sym_ctx, addr, &off);
    if (!name)
        return ZYAN_STATUS_SUCCESS;
    ZYAN_CHECK(ZydisFormatterBufferAppend(buffer, ZYDIS_TOKEN_SYMBOL));
    ZyanString *str;
    ZYAN_CHECK(ZydisFormatterBufferGetString(buffer, &str));
    char text[160];
    if (off)
        snprintf(text, sizeof text, " <%s+0x%llx>", name, (unsigned long long)off);
    else
        snprintf(text, sizeof text, " <%s>", name);
    return ZyanStringAppendFormat(str, "%s", text);
}

/* Branch targets, RIP-relative and absolute memory: the address as Zydis
 * prints it, then its symbol. */
static ZyanStatus hook_abs(const ZydisFormatter *f, ZydisFormatterBuffer *buffer,
                           ZydisFormatterContext *ctx)
{
    const fmt_ctx *fc = ctx->user_data;
    ZYAN_CHECK(fc->print_abs(f, buffer, ctx));
    ZyanU64 addr;
    if (!ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(ctx->instruction, ctx->operand,
                                               ctx->runtime_address, &addr)))
        return ZYAN_STATUS_SUCCESS;
    return append_sym(buffer, fc, addr);
}

/* A displacement without a base register is a table's address (the
 * dispatch's `call [sys_call_table + rax*8]`): named too. */
static ZyanStatus hook_disp(const ZydisFormatter *f, ZydisFormatterBuffer *buffer,
                            ZydisFormatterContext *ctx)
{
    const fmt_ctx *fc = ctx->user_data;
    ZYAN_CHECK(fc->print_disp(f, buffer, ctx));
    const ZydisDecodedOperand *o = ctx->operand;
    if (o->type != ZYDIS_OPERAND_TYPE_MEMORY || o->mem.base != ZYDIS_REGISTER_NONE ||
        !o->mem.disp.has_displacement)
        return ZYAN_STATUS_SUCCESS;
    uint64_t addr = (uint64_t)o->mem.disp.value;
    if (ctx->instruction->address_width == 32)
        addr &= 0xffffffffu;
    return append_sym(buffer, fc, addr);
}

size_t es_format_sym(const uint8_t *bytes, size_t avail, int mode, uint64_t rip, int syntax,
                     es_symbolizer sym, void *sym_ctx, char *buf, size_t bufsz)
{
    ZydisDecoder dec;
    ZydisFormatter fmt;
    ZydisDecodedInstruction in;
    ZydisDecodedOperand zo[ZYDIS_MAX_OPERAND_COUNT];

    if (bufsz == 0)
        return 0;
    if (init_decoder(&dec, mode) != 0 ||
        !ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, bytes, avail, &in, zo))) {
        snprintf(buf, bufsz, "(bad)");
        return 0;
    }
    ZydisFormatterInit(&fmt, syntax == ES_SYNTAX_ATT ? ZYDIS_FORMATTER_STYLE_ATT
                                                     : ZYDIS_FORMATTER_STYLE_INTEL);
    fmt_ctx fc = {sym, sym_ctx, hook_abs, hook_disp};
    if (sym) {
        /* SetHook swaps: fc's fields come back holding Zydis's own printers */
        ZydisFormatterSetHook(&fmt, ZYDIS_FORMATTER_FUNC_PRINT_ADDRESS_ABS,
                              (const void **)&fc.print_abs);
        ZydisFormatterSetHook(&fmt, ZYDIS_FORMATTER_FUNC_PRINT_DISP, (const void **)&fc.print_disp);
    }
    if (!ZYAN_SUCCESS(ZydisFormatterFormatInstruction(&fmt, &in, zo, in.operand_count_visible, buf,
                                                      bufsz, rip, sym ? &fc : NULL))) {
        snprintf(buf, bufsz, "(unformattable)");
    }
    return in.length;
}

size_t es_format(const uint8_t *bytes, size_t avail, int mode, uint64_t rip, int syntax,
                 char *buf, size_t bufsz)
{
    return es_format_sym(bytes, avail, mode, rip, syntax, NULL, NULL, buf, bufsz);
}

const char *es_op_name(unsigned op)
{
    if (op >= ES_OP_COUNT)
        return "invalid";
    const char *s = ZydisMnemonicGetString((ZydisMnemonic)op);
    return s ? s : "invalid";
}

int es_decode_access(const uint8_t *bytes, size_t avail, int mode, uint64_t rip,
                     es_access_info *out)
{
    ZydisDecoder dec;
    ZydisDecodedInstruction in;
    ZydisDecodedOperand zo[ZYDIS_MAX_OPERAND_COUNT];

    (void)rip;
    memset(out, 0, sizeof *out);
    if (init_decoder(&dec, mode) != 0)
        return ES_DECODE_INVALID;
    ZyanStatus st = ZydisDecoderDecodeFull(&dec, bytes, avail, &in, zo);
    if (st == ZYDIS_STATUS_NO_MORE_DATA)
        return ES_DECODE_NEED_MORE;
    if (!ZYAN_SUCCESS(st))
        return ES_DECODE_INVALID;
    for (int i = 0; i < in.operand_count; i++) {
        const ZydisDecodedOperand *z = &zo[i];
        if (z->type == ZYDIS_OPERAND_TYPE_REGISTER) {
            uint8_t r = z->reg.value >= ZYDIS_REGISTER_AH && z->reg.value <= ZYDIS_REGISTER_BH
                             ? (uint8_t)(z->reg.value - ZYDIS_REGISTER_AH)
                             : gpr_num(z->reg.value);
            if (r < 16) {
                if (z->actions & ZYDIS_OPERAND_ACTION_MASK_READ)
                    out->gpr_read |= (uint16_t)(1u << r);
                if (z->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE)
                    out->gpr_write |= (uint16_t)(1u << r);
                if (z->actions & ZYDIS_OPERAND_ACTION_CONDWRITE)
                    out->gpr_condwrite |= (uint16_t)(1u << r);
            }
        }
    }
    if (in.cpu_flags) {
        out->flags_read = in.cpu_flags->tested;
        out->flags_written = in.cpu_flags->modified | in.cpu_flags->set_0 |
                             in.cpu_flags->set_1 | in.cpu_flags->undefined;
    }
    return ES_DECODE_OK;
}
