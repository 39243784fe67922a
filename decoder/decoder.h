/* decoder.h - the project's compact decoded-instruction form.
 *
 * This is the only interface to instruction decoding.  Nothing outside
 * decoder/ includes Zydis: the decoder copies what the interpreter needs out
 * of Zydis' ~1 KB decoded structures into es_insn (80 bytes), which the
 * decode cache stores and the interpreter dispatches on.
 */
#ifndef ENTRYSIM_DECODER_H
#define ENTRYSIM_DECODER_H

#include <stddef.h>
#include <stdint.h>

#include "es_ops.h" /* generated: enum es_op, one per Zydis mnemonic */

#ifdef __cplusplus
extern "C" {
#endif

/* Execution modes the decoder understands (CS.L / CS.D). */
enum es_mode { ES_MODE_32 = 0, ES_MODE_64 = 1 };

/* Operand kinds. */
enum es_opk {
    ES_OPK_NONE = 0,
    ES_OPK_GPR,  /* reg = 0..15 (rax..r15); size 1 means low byte (al, spl, r8b) */
    ES_OPK_HI8,  /* reg = 0..3 for ah, ch, dh, bh */
    ES_OPK_XMM,  /* reg = 0..15 */
    ES_OPK_YMM,  /* reg = 0..15: all 256 bits (the VEX.256 forms) */
    ES_OPK_MMX,  /* reg = 0..7 */
    ES_OPK_ST,   /* reg = 0..7: x87 st(i) */
    ES_OPK_SEG,  /* reg = enum es_seg */
    ES_OPK_CR,   /* reg = 0..15 */
    ES_OPK_DR,   /* reg = 0..15 */
    ES_OPK_MEM,  /* base/index/scale/disp/seg; size = access width in bytes */
    ES_OPK_IMM,  /* imm (sign-extended to 64 bits when the encoding is signed) */
    ES_OPK_REL,  /* branch target, already resolved to an absolute address in imm */
    ES_OPK_PTR,  /* far pointer: imm = offset, ptr_sel = selector */
    ES_OPK_AGEN, /* LEA-style address generation (no access) */
    ES_OPK_VSIB, /* a gather's memory operand: base/scale/disp/seg as MEM, index =
                  * the XMM/YMM register number, size = the element width */
};

enum es_seg { ES_SEG_ES = 0, ES_SEG_CS, ES_SEG_SS, ES_SEG_DS, ES_SEG_FS, ES_SEG_GS, ES_SEG_NONE = 7 };

#define ES_REG_NONE 0xff /* no base / no index */
#define ES_REG_RIP 0x10  /* RIP-relative base (64-bit mode) */

typedef struct es_operand {
    uint8_t kind;  /* enum es_opk */
    uint8_t size;  /* width in bytes (register or memory access; 10 for m80, 16 for xmm) */
    uint8_t reg;   /* register number for register kinds */
    uint8_t seg;   /* enum es_seg for MEM/AGEN: the effective segment */
    uint8_t base;  /* MEM/AGEN: GPR number, ES_REG_RIP or ES_REG_NONE */
    uint8_t index; /* MEM/AGEN: GPR number or ES_REG_NONE */
    uint8_t scale; /* MEM/AGEN: 1, 2, 4, 8 (0 when no index) */
    uint8_t write; /* the instruction writes this operand */
    uint8_t vvvv;  /* VEX: the register is encoded in VEX.vvvv (NDS/NDD) */
    uint8_t vsib;  /* VSIB: 16 or 32, the index register's width in bytes */
    union {
        int64_t imm;  /* IMM/REL/PTR */
        int64_t disp; /* MEM/AGEN */
    };
    uint16_t ptr_sel; /* PTR: the selector of a far pointer */
    uint8_t pad[4];
} es_operand;

/* Prefix bits in es_insn.pfx. */
#define ES_PFX_REP 0x01   /* F3 on a string instruction (REP / REPE) */
#define ES_PFX_REPNE 0x02 /* F2 on a string instruction */
#define ES_PFX_LOCK 0x04
#define ES_PFX_OSIZE 0x08 /* 66 present */
#define ES_PFX_REXW 0x10  /* REX.W */
#define ES_PFX_SEGOVR 0x20
#define ES_PFX_VEX 0x40   /* VEX-encoded (Zydis names these forms V*) */
#define ES_PFX_VEXL 0x80  /* VEX.L = 1: the 256-bit form */

typedef struct es_insn {
    uint16_t op;     /* enum es_op */
    uint8_t len;     /* bytes, 1..15 */
    uint8_t nops;    /* visible operands in o[] */
    uint8_t osize;   /* effective operand size in bytes (2, 4, 8; 1 for byte forms) */
    uint8_t asize;   /* effective address size in bytes (2, 4, 8) */
    uint8_t mode;    /* enum es_mode it was decoded in */
    uint8_t pfx;     /* ES_PFX_* */
    uint16_t fl_undef; /* RFLAGS bits the SDM leaves undefined after this insn */
    uint16_t fl_mod;   /* RFLAGS bits it may modify (tested bits excluded) */
    uint8_t opcode;    /* last opcode byte (for forms that share a mnemonic) */
    uint8_t opmap;     /* 0: 1-byte map, 1: 0F, 2: 0F38, 3: 0F3A, 4+: other */
    uint8_t modrm;     /* ModRM byte when present, else 0 */
    uint8_t sseg;      /* string instructions: segment of the source (DS or override) */
    es_operand o[4];
} es_insn;

/* Status codes of es_decode. */
enum es_decode_status {
    ES_DECODE_OK = 0,
    ES_DECODE_INVALID = 1,   /* not an instruction: the CPU raises #UD */
    ES_DECODE_NEED_MORE = 2, /* bytes ran out before the instruction ended */
};

/* Decodes one instruction of at most `avail` bytes at `bytes`, as executed in
 * `mode` at linear address `rip` (relative branch targets are resolved
 * against it).  Fills *out and returns ES_DECODE_OK, or returns a failure
 * status and leaves *out unspecified.  Thread-safe, no allocation. */
int es_decode(const uint8_t *bytes, size_t avail, int mode, uint64_t rip, es_insn *out);

enum es_syntax { ES_SYNTAX_INTEL = 0, ES_SYNTAX_ATT = 1 };

/* Formats the instruction at `bytes` for display (decoding it again in full)
 * into buf (NUL-terminated, truncated to bufsz).  Returns the instruction
 * length, or 0 if it does not decode (buf then says so). */
size_t es_format(const uint8_t *bytes, size_t avail, int mode, uint64_t rip, int syntax,
                 char *buf, size_t bufsz);

/* Names an address: the symbol containing addr (its offset in *off), or
 * NULL. */
typedef const char *(*es_symbolizer)(void *ctx, uint64_t addr, uint64_t *off);

/* es_format, with every branch target, RIP-relative or absolute memory
 * operand and base-less displacement (a table's address) that sym names
 * followed by " <name+0xoff>", as objdump shows them.  sym NULL: es_format. */
size_t es_format_sym(const uint8_t *bytes, size_t avail, int mode, uint64_t rip, int syntax,
                     es_symbolizer sym, void *sym_ctx, char *buf, size_t bufsz);

/* Register and flag access of one instruction, including the operands the
 * encoding leaves implicit (push's RSP, mul's RDX:RAX, the string
 * registers...), for analyses such as taint tracking that must not miss
 * them.  Bit i of gpr_read/gpr_write is GPR i (rax..r15); flags are RFLAGS
 * bit masks. */
typedef struct es_access_info {
    uint16_t gpr_read, gpr_write;
    /* GPRs written only when a condition holds (CMOVcc's destination,
     * CMPXCHG's accumulator): their old value can survive, so a timing
     * model must treat them as read too.  Also set in gpr_write. */
    uint16_t gpr_condwrite;
    uint32_t flags_read, flags_written;
} es_access_info;

/* Fills *out for the instruction at `bytes` (decoded again in full);
 * returns ES_DECODE_OK or a failure status. */
int es_decode_access(const uint8_t *bytes, size_t avail, int mode, uint64_t rip,
                     es_access_info *out);

/* The mnemonic of an es_op, lower case ("add"); "invalid" when out of range. */
const char *es_op_name(unsigned op);

#ifdef __cplusplus
}
#endif
#endif
