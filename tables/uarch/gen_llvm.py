#!/usr/bin/env python3
"""Generate per-instruction-form tables for the cycle model from LLVM's
scheduling models (llvm-mca-16).

For every instruction form in FORMS (mnemonic + operand kinds) the script
writes one concrete Intel-syntax line, puts each line in its own llvm-mca code
region, runs

    llvm-mca-16 -mcpu=<cpu> -instruction-info -resource-pressure -iterations=100

and parses, per region, the Instruction Info row (#uOps, Latency, RThroughput,
MayLoad, MayStore, HasSideEffects) and the "Resource pressure by instruction"
row (resource-cycles per iteration on each port / unit; with 100 iterations the
scheduler spreads the uops over the whole port set, so the non-zero entries are
the form's port set and their values the average share).

Output: tables/uarch/<name>.llvm.tsv (see README.md for the format).
Forms llvm-mc cannot assemble, or the cpu model rejects, are dropped and listed
on stderr.

Usage: python3 tables/uarch/gen_llvm.py [--out DIR] [--mca llvm-mca-16] [--mc llvm-mc-16] [--only NAME]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

CPUS = {            # table name -> llvm -mcpu
    "znver4": "znver4",
    "skylake": "skylake",
    # Golden Cove (Alder/Raptor Lake P-cores; the cores of Sapphire and
    # Emerald Rapids): LLVM 16's AlderlakeP model.  -mcpu=sapphirerapids
    # gives Skylake-X's model in LLVM 16 (its own came with LLVM 17).
    "goldencove": "alderlake",
}
RESOURCE_PREFIXES = ("Zn4", "SKL", "ADLP")   # stripped from resource names for brevity
MCA_TIMEOUT = 5     # seconds for one llvm-mca run (all forms take about one); a region that hangs it is dropped

# ---------------------------------------------------------------------------
# Instruction forms.  Operand kinds (Intel order, destination first):
#   r64 r32 r16 r8        general registers     imm8 imm32 imm64  immediates
#   m8 m16 m32 m64        memory of that width  m128 m256         vector memory
#   m                     memory without size (lea, prefetch, clflush)
#   xmm ymm               vector registers      cl one            shift counts
#   rel                   a branch target label
# ---------------------------------------------------------------------------
ALU2 = ["add", "sub", "and", "or", "xor", "adc", "sbb", "cmp"]
ALU_OPS = ["r64,r64", "r32,r32", "r16,r16", "r8,r8",
           "r64,imm8", "r64,imm32", "r32,imm8", "r32,imm32",
           "r64,m64", "r32,m32", "m64,r64", "m32,r32", "m64,imm8", "m32,imm32", "m8,imm8"]
SHIFTS = ["shl", "shr", "sar", "rol", "ror", "rcl", "rcr"]
CMOVS = ["cmove", "cmovne", "cmovl", "cmovg", "cmovb", "cmova", "cmovs", "cmovbe"]
SETCCS = ["sete", "setne", "setl", "setg", "setb", "seta", "setbe"]

FORMS = []


def add(mnem, *ops_list):
    for ops in ops_list:
        FORMS.append((mnem, ops))


for m in ALU2:
    add(m, *ALU_OPS)
add("test", "r64,r64", "r32,r32", "r8,r8", "r64,imm32", "r32,imm32", "r8,imm8", "m64,r64", "m32,imm32", "m8,imm8")
for m in ["inc", "dec", "neg", "not"]:
    add(m, "r64", "r32", "r8", "m64", "m32")
for m in SHIFTS:
    add(m, "r64,imm8", "r32,imm8", "r64,one", "r64,cl", "r32,cl", "m64,imm8", "m64,cl")
add("shld", "r64,r64,imm8", "r64,r64,cl")
add("shrd", "r64,r64,imm8", "r64,r64,cl")
for m in ["shlx", "shrx", "sarx"]:
    add(m, "r64,r64,r64", "r32,r32,r32", "r64,m64,r64")
add("rorx", "r64,r64,imm8", "r32,r32,imm8")
add("andn", "r64,r64,r64", "r32,r32,r32")
add("bzhi", "r64,r64,r64")
add("pdep", "r64,r64,r64")
add("pext", "r64,r64,r64")
for m in ["blsr", "blsi", "blsmsk"]:
    add(m, "r64,r64")
for m in ["popcnt", "lzcnt", "tzcnt", "bsf", "bsr"]:
    add(m, "r64,r64", "r32,r32", "r64,m64")
add("bswap", "r64", "r32")
for m in ["bt", "bts", "btr", "btc"]:
    add(m, "r64,r64", "r64,imm8", "r32,r32", "r32,imm8", "m64,r64", "m64,imm8")
# multiply / divide
add("imul", "r64,r64", "r32,r32", "r16,r16", "r64,m64", "r32,m32", "r64,r64,imm8", "r64,r64,imm32",
    "r32,r32,imm32", "r64", "r32", "m64")
add("mul", "r64", "r32", "r8", "m64")
add("mulx", "r64,r64,r64")
add("div", "r64", "r32", "r16", "r8", "m64", "m32")
add("idiv", "r64", "r32", "r16", "r8", "m64", "m32")
# lea
add("lea", "r64,m_base", "r64,m_bd", "r64,m_bi", "r64,m", "r32,m", "r64,m_rip")
# moves
add("mov", "r64,r64", "r32,r32", "r16,r16", "r8,r8", "r64,imm32", "r64,imm64", "r32,imm32", "r16,imm16", "r8,imm8",
    "r64,m64", "r32,m32", "r16,m16", "r8,m8", "m64,r64", "m32,r32", "m16,r16", "m8,r8",
    "m64,imm32", "m32,imm32", "m16,imm16", "m8,imm8", "r64,m_rip64")
add("movzx", "r32,r8", "r32,r16", "r64,r8", "r64,r16", "r32,m8", "r32,m16", "r64,m8", "r64,m16")
add("movsx", "r32,r8", "r32,r16", "r64,r8", "r64,r16", "r32,m8", "r32,m16", "r64,m8", "r64,m16")
add("movsxd", "r64,r32", "r64,m32")
add("movbe", "r64,m64", "m64,r64")
add("xchg", "r64,r64", "r64,m64")
add("xadd", "r64,r64")
add("cmpxchg", "r64,r64", "m64,r64")
add("lock xadd", "m64,r64")
add("lock cmpxchg", "m64,r64")
add("lock add", "m64,imm8", "m64,r64")
add("lock inc", "m64")
add("cmpxchg16b", "m128")
add("push", "r64", "imm8", "imm32", "m64")
add("pop", "r64", "m64")
for m in CMOVS:
    add(m, "r64,r64", "r32,r32", "r64,m64")
for m in SETCCS:
    add(m, "r8", "m8")
for m in ["cdq", "cqo", "cdqe", "cwde", "clc", "stc", "cmc", "cld", "std", "lahf", "sahf", "pushfq", "popfq",
          "nop", "pause", "leave", "ret", "rdtscp"]:
    add(m, "")
add("nop", "r32", "m32")
add("xor", "zero32")          # xor r32,r32 zero idiom
# control transfer
add("jmp", "rel", "r64", "m64")
for m in ["je", "jne", "jl", "jg", "jb", "ja", "js", "jbe"]:
    add(m, "rel")
add("call", "rel", "r64", "m64")
add("ret", "imm16")
# string ops (rep forms are data dependent; llvm gives a fixed cost)
for m in ["movsb", "movsq", "stosb", "stosq", "lodsq", "cmpsb", "scasb"]:
    add(m, "")
for m in ["rep movsb", "rep movsq", "rep stosb", "rep stosq"]:
    add(m, "")
# prefetch / cache
add("prefetcht0", "m")
add("prefetchnta", "m")
add("clflush", "m")
add("clflushopt", "m")

# SSE / AVX scalar and packed
SSE_PS = ["addps", "subps", "mulps", "divps", "sqrtps", "minps", "maxps", "andps", "orps", "xorps", "andnps",
          "addpd", "subpd", "mulpd", "divpd", "sqrtpd", "andpd", "xorpd",
          "addss", "subss", "mulss", "divss", "sqrtss", "minss", "maxss",
          "addsd", "subsd", "mulsd", "divsd", "sqrtsd", "minsd", "maxsd",
          "unpcklps", "unpcklpd", "unpckhpd", "rcpps", "rsqrtps", "haddps"]
SSE_INT = ["paddb", "paddw", "paddd", "paddq", "psubb", "psubd", "psubq", "pand", "pandn", "por", "pxor",
           "pcmpeqb", "pcmpeqd", "pcmpeqq", "pcmpgtb", "pcmpgtd", "pminub", "pmaxub", "pminsd", "pmaxsd",
           "pmullw", "pmulld", "pmuludq", "pmaddwd", "pavgb", "psadbw", "pshufb", "punpcklbw", "punpcklqdq",
           "punpckhqdq", "packuswb", "packssdw", "palignr_imm"]
for m in SSE_PS + SSE_INT:
    if m.endswith("_imm"):
        base = m[:-4]
        add(base, "xmm,xmm,imm8", "xmm,m128,imm8")
        add("v" + base, "xmm,xmm,xmm,imm8", "ymm,ymm,ymm,imm8")
        continue
    scalar = m in SSE_PS and (m.endswith("ss") or m.endswith("sd"))
    mem = "m128" if not scalar else "m32" if m.endswith("ss") else "m64"
    add(m, "xmm,xmm", "xmm," + mem)
    if m in ("sqrtps", "sqrtpd", "rcpps", "rsqrtps"):
        add("v" + m, "xmm,xmm", "ymm,ymm", "ymm,m256")
    elif m in ("sqrtss", "sqrtsd"):
        add("v" + m, "xmm,xmm,xmm")
    else:
        add("v" + m, "xmm,xmm,xmm", "xmm,xmm," + mem)
        if not scalar:
            add("v" + m, "ymm,ymm,ymm", "ymm,ymm,m256")
for m in ["psllq", "psrlq", "pslld", "psrld", "psrad", "psllw", "psrlw", "pslldq", "psrldq"]:
    add(m, "xmm,imm8")
    add("v" + m, "xmm,xmm,imm8", "ymm,ymm,imm8")
for m in ["psllq", "psrlq", "pslld", "psrld"]:
    add(m, "xmm,xmm")
for m in ["vpsllvd", "vpsrlvd", "vpsllvq", "vpsrlvq", "vpsravd"]:
    add(m, "xmm,xmm,xmm", "ymm,ymm,ymm")
for m in ["pshufd", "pshuflw", "pshufhw"]:
    add(m, "xmm,xmm,imm8", "xmm,m128,imm8")
add("vpshufd", "ymm,ymm,imm8")
add("shufps", "xmm,xmm,imm8")
add("vshufps", "ymm,ymm,ymm,imm8")
add("shufpd", "xmm,xmm,imm8")
add("blendps", "xmm,xmm,imm8")
add("pblendw", "xmm,xmm,imm8")
add("vpblendd", "ymm,ymm,ymm,imm8")
add("blendvps", "xmm,xmm,xmm0")
add("vblendvps", "ymm,ymm,ymm,ymm")
add("pblendvb", "xmm,xmm,xmm0")
add("vpblendvb", "ymm,ymm,ymm,ymm")
add("pmovmskb", "r32,xmm")
add("vpmovmskb", "r32,ymm")
add("movmskps", "r32,xmm")
add("ptest", "xmm,xmm")
add("vptest", "ymm,ymm")
add("pmovzxbw", "xmm,xmm", "xmm,m64")
add("pmovsxdq", "xmm,xmm")
add("vpmovzxbw", "ymm,xmm")
add("pextrd", "r32,xmm,imm8")
add("pextrq", "r64,xmm,imm8")
add("pinsrd", "xmm,r32,imm8")
add("pinsrq", "xmm,r64,imm8", "xmm,m64,imm8")
add("pcmpistri", "xmm,xmm,imm8")
add("pcmpestri", "xmm,xmm,imm8")
add("crc32", "r32,r8", "r64,r64")
add("aesenc", "xmm,xmm")
add("aesdec", "xmm,xmm")
add("pclmulqdq", "xmm,xmm,imm8")
add("vpermd", "ymm,ymm,ymm")
add("vpermq", "ymm,ymm,imm8")
add("vperm2i128", "ymm,ymm,ymm,imm8")
add("vperm2f128", "ymm,ymm,ymm,imm8")
add("vpermilps", "ymm,ymm,imm8")
add("vinserti128", "ymm,ymm,xmm,imm8", "ymm,ymm,m128,imm8")
add("vextracti128", "xmm,ymm,imm8", "m128,ymm,imm8")
add("vextractf128", "xmm,ymm,imm8")
add("vbroadcastss", "xmm,m32", "ymm,m32", "ymm,xmm")
add("vpbroadcastd", "xmm,xmm", "ymm,xmm", "ymm,m32")
add("vpbroadcastb", "ymm,xmm")
add("vpbroadcastq", "ymm,m64")
add("vzeroupper", "")
add("vzeroall", "")
for m in ["vfmadd231ps", "vfmadd213ps", "vfmadd231pd", "vfnmadd231ps"]:
    add(m, "xmm,xmm,xmm", "ymm,ymm,ymm", "ymm,ymm,m256")
for m in ["vfmadd231ss", "vfmadd231sd", "vfmadd213sd"]:
    add(m, "xmm,xmm,xmm", "xmm,xmm,m64" if m.endswith("sd") else "xmm,xmm,m32")
add("vgatherdps", "ymm,vsib_y,ymm")
add("vpgatherdd", "ymm,vsib_y,ymm")
add("vmaskmovps", "ymm,ymm,m256", "m256,ymm,ymm")
# vector moves
for m in ["movaps", "movups", "movapd", "movdqa", "movdqu"]:
    add(m, "xmm,xmm", "xmm,m128", "m128,xmm")
    add("v" + m, "xmm,xmm", "xmm,m128", "m128,xmm", "ymm,ymm", "ymm,m256", "m256,ymm")
add("movntdq", "m128,xmm")
add("vmovntdq", "m256,ymm")
add("movnti", "m64,r64")
add("movss", "xmm,xmm", "xmm,m32", "m32,xmm")
add("movsd", "xmm,xmm", "xmm,m64", "m64,xmm")
add("vmovss", "xmm,m32", "m32,xmm")
add("vmovsd", "xmm,m64", "m64,xmm")
add("movd", "xmm,r32", "r32,xmm", "xmm,m32", "m32,xmm")
add("movq", "xmm,r64", "r64,xmm", "xmm,m64", "m64,xmm", "xmm,xmm")
add("vmovd", "xmm,r32", "r32,xmm")
add("vmovq", "xmm,r64", "r64,xmm")
add("movhps", "xmm,m64")
add("movlps", "xmm,m64")
add("movddup", "xmm,xmm")
add("movshdup", "xmm,xmm")
add("vpxor", "zeroxmm")        # vpxor xmm,xmm,xmm zero idiom
add("pxor", "zeroxmm2")
add("xorps", "zeroxmm2")
# conversions and compares
add("cvtsi2sd", "xmm,r64", "xmm,r32", "xmm,m64")
add("cvtsi2ss", "xmm,r64", "xmm,r32")
add("cvttsd2si", "r64,xmm", "r32,xmm", "r64,m64")
add("cvttss2si", "r64,xmm", "r32,xmm")
add("cvtsd2si", "r64,xmm")
add("cvtss2si", "r32,xmm")
add("cvtsd2ss", "xmm,xmm", "xmm,m64")
add("cvtss2sd", "xmm,xmm", "xmm,m32")
add("cvtdq2ps", "xmm,xmm")
add("cvtps2dq", "xmm,xmm")
add("cvttps2dq", "xmm,xmm")
add("cvtdq2pd", "xmm,xmm")
add("cvtps2pd", "xmm,xmm")
add("cvtpd2ps", "xmm,xmm")
add("vcvtdq2ps", "ymm,ymm")
add("vcvttps2dq", "ymm,ymm")
add("vcvtps2pd", "ymm,xmm")
add("vcvtph2ps", "ymm,xmm")
add("vcvtps2ph", "xmm,ymm,imm8")
add("cvtsi2sd", "xmm,m32")
add("ucomisd", "xmm,xmm", "xmm,m64")
add("ucomiss", "xmm,xmm")
add("comisd", "xmm,xmm")
add("cmpps", "xmm,xmm,imm8")
add("cmpsd", "xmm,xmm,imm8")
add("vcmpps", "ymm,ymm,ymm,imm8")
add("roundsd", "xmm,xmm,imm8")
add("roundps", "xmm,xmm,imm8")
add("ldmxcsr", "m32")
add("stmxcsr", "m32")
# x87 (a few that still show up in libm)
add("fld", "m64")
add("fstp", "m64")
add("fadd", "m64")
add("fmul", "m64")
add("fxch", "st1")
# x86-64-v3: the VEX forms that -march=x86-64-v3 code and glibc's AVX2
# string functions use and the lists above lack (each added once: a form
# listed above keeps its place and its row).
def add_new(mnem, *ops_list):
    for ops in ops_list:
        if (mnem, ops) not in FORMS:
            FORMS.append((mnem, ops))


V3_PACKED = ["vpand", "vpandn", "vpor", "vpxor", "vpaddb", "vpaddw", "vpaddd", "vpaddq", "vpsubb",
             "vpsubw", "vpsubd", "vpsubq", "vpaddusb", "vpsubusb", "vpcmpeqb", "vpcmpeqw",
             "vpcmpeqd", "vpcmpeqq", "vpcmpgtb", "vpcmpgtw", "vpcmpgtd", "vpcmpgtq", "vpminub",
             "vpminuw", "vpminud", "vpminsb", "vpminsd", "vpmaxub", "vpmaxud", "vpmaxsd", "vpmullw",
             "vpmulld", "vpmuludq", "vpmuldq", "vpmulhw", "vpmulhuw", "vpmaddwd", "vpmaddubsw",
             "vpavgb", "vpsadbw", "vpshufb", "vpunpcklbw", "vpunpckhbw", "vpunpcklwd", "vpunpckhwd",
             "vpunpckldq", "vpunpckhdq", "vpunpcklqdq", "vpunpckhqdq", "vpacksswb", "vpackuswb",
             "vpackssdw", "vpackusdw", "vpsllvd", "vpsllvq", "vpsrlvd", "vpsrlvq", "vpsravd",
             "vaddps", "vaddpd", "vsubps", "vsubpd", "vmulps", "vmulpd", "vdivps", "vdivpd",
             "vminps", "vminpd", "vmaxps", "vmaxpd", "vandps", "vandpd", "vandnps", "vandnpd",
             "vorps", "vorpd", "vxorps", "vxorpd", "vunpcklps", "vunpckhps", "vunpcklpd",
             "vunpckhpd", "vhaddps", "vhaddpd", "vaddsubps", "vaddsubpd", "vpermilps", "vpermd",
             "vpermps"]
for m in V3_PACKED:
    add_new(m, "xmm,xmm,xmm", "xmm,xmm,m128", "ymm,ymm,ymm", "ymm,ymm,m256")
for m in ["vaddss", "vsubss", "vmulss", "vdivss", "vminss", "vmaxss", "vsqrtss", "vcvtss2sd"]:
    add_new(m, "xmm,xmm,xmm", "xmm,xmm,m32")
for m in ["vaddsd", "vsubsd", "vmulsd", "vdivsd", "vminsd", "vmaxsd", "vsqrtsd", "vcvtsd2ss"]:
    add_new(m, "xmm,xmm,xmm", "xmm,xmm,m64")
for kind in ["fmadd", "fmsub", "fnmadd", "fnmsub", "fmaddsub", "fmsubadd"]:
    for order in ["132", "213", "231"]:
        for t in ["ps", "pd"]:
            add_new(f"v{kind}{order}{t}", "xmm,xmm,xmm", "xmm,xmm,m128", "ymm,ymm,ymm",
                    "ymm,ymm,m256")
        if kind in ("fmaddsub", "fmsubadd"):
            continue
        add_new(f"v{kind}{order}ss", "xmm,xmm,xmm", "xmm,xmm,m32")
        add_new(f"v{kind}{order}sd", "xmm,xmm,xmm", "xmm,xmm,m64")
for m in ["vpsllw", "vpslld", "vpsllq", "vpsrlw", "vpsrld", "vpsrlq", "vpsraw", "vpsrad"]:
    add_new(m, "xmm,xmm,imm8", "ymm,ymm,imm8", "xmm,xmm,xmm", "ymm,ymm,xmm")
for m in ["vpslldq", "vpsrldq"]:
    add_new(m, "xmm,xmm,imm8", "ymm,ymm,imm8")
for m in ["vpabsb", "vpabsw", "vpabsd", "vsqrtps", "vsqrtpd", "vrcpps", "vrsqrtps",
          "vcvtdq2ps", "vcvtps2dq", "vcvttps2dq", "vmovshdup", "vmovsldup", "vmovddup"]:
    add_new(m, "xmm,xmm", "xmm,m128", "ymm,ymm", "ymm,m256")
for m in ["vpmovzxbw", "vpmovzxwd", "vpmovzxdq", "vpmovsxbw", "vpmovsxwd", "vpmovsxdq",
          "vcvtps2pd", "vcvtdq2pd", "vcvtph2ps"]:
    add_new(m, "xmm,xmm", "ymm,xmm", "ymm,m128")
for m in ["vpmovzxbd", "vpmovzxwq", "vpmovsxbd", "vpmovsxwq"]:
    add_new(m, "ymm,xmm", "ymm,m64")
add_new("vpmovzxbq", "ymm,xmm", "ymm,m32")
for m in ["vcvtpd2ps", "vcvtpd2dq", "vcvttpd2dq"]:
    add_new(m, "xmm,xmm", "xmm,ymm")
for m in ["vpshufd", "vpshufhw", "vpshuflw", "vpermilps", "vpermilpd", "vroundps", "vroundpd"]:
    add_new(m, "xmm,xmm,imm8", "ymm,ymm,imm8", "ymm,m256,imm8")
add_new("vpermq", "ymm,m256,imm8")
add_new("vpermpd", "ymm,ymm,imm8", "ymm,m256,imm8")
for m in ["vpalignr", "vshufps", "vshufpd", "vblendps", "vblendpd", "vpblendw", "vpblendd",
          "vdpps", "vmpsadbw", "vcmpps", "vcmppd"]:
    add_new(m, "xmm,xmm,xmm,imm8", "ymm,ymm,ymm,imm8", "ymm,ymm,m256,imm8")
for m in ["vcmpss", "vcmpsd", "vroundss", "vroundsd", "vinsertps", "vdppd"]:
    add_new(m, "xmm,xmm,xmm,imm8")
for m in ["vblendvps", "vblendvpd", "vpblendvb"]:
    add_new(m, "xmm,xmm,xmm,xmm", "ymm,ymm,ymm,ymm")
for m in ["vaesenc", "vaesenclast", "vaesdec", "vaesdeclast"]:
    add_new(m, "xmm,xmm,xmm", "xmm,xmm,m128")
add_new("vaesimc", "xmm,xmm")
add_new("vaeskeygenassist", "xmm,xmm,imm8")
add_new("vpclmulqdq", "xmm,xmm,xmm,imm8")
for m in ["vmovaps", "vmovups", "vmovapd", "vmovupd", "vmovdqa", "vmovdqu"]:
    add_new(m, "xmm,xmm", "xmm,m128", "m128,xmm", "ymm,ymm", "ymm,m256", "m256,ymm")
add_new("vmovntps", "m128,xmm", "m256,ymm")
add_new("vmovntpd", "m256,ymm")
add_new("vmovntdqa", "xmm,m128", "ymm,m256")
add_new("vlddqu", "xmm,m128", "ymm,m256")
add_new("vmovd", "xmm,m32", "m32,xmm")
add_new("vmovq", "xmm,m64", "m64,xmm", "xmm,xmm")
add_new("vmovss", "xmm,xmm,xmm")
add_new("vmovsd", "xmm,xmm,xmm")
add_new("vmovhps", "xmm,xmm,m64", "m64,xmm")
add_new("vmovlps", "xmm,xmm,m64", "m64,xmm")
add_new("vmovhlps", "xmm,xmm,xmm")
add_new("vmovlhps", "xmm,xmm,xmm")
add_new("vpmovmskb", "r32,xmm")
add_new("vmovmskps", "r32,xmm", "r32,ymm")
add_new("vmovmskpd", "r32,xmm", "r32,ymm")
add_new("vptest", "xmm,xmm", "xmm,m128", "ymm,m256")
add_new("vtestps", "xmm,xmm", "ymm,ymm")
add_new("vtestpd", "xmm,xmm", "ymm,ymm")
add_new("vpextrb", "r32,xmm,imm8", "m8,xmm,imm8")
add_new("vpextrw", "r32,xmm,imm8")
add_new("vpextrd", "r32,xmm,imm8", "m32,xmm,imm8")
add_new("vpextrq", "r64,xmm,imm8")
add_new("vextractps", "r32,xmm,imm8")
add_new("vpinsrb", "xmm,xmm,r32,imm8", "xmm,xmm,m8,imm8")
add_new("vpinsrw", "xmm,xmm,r32,imm8")
add_new("vpinsrd", "xmm,xmm,r32,imm8", "xmm,xmm,m32,imm8")
add_new("vpinsrq", "xmm,xmm,r64,imm8", "xmm,xmm,m64,imm8")
add_new("vpcmpistri", "xmm,xmm,imm8")
add_new("vpcmpestri", "xmm,xmm,imm8")
add_new("vinsertf128", "ymm,ymm,xmm,imm8", "ymm,ymm,m128,imm8")
add_new("vextractf128", "m128,ymm,imm8")
add_new("vbroadcastss", "xmm,xmm")
add_new("vbroadcastsd", "ymm,m64", "ymm,xmm")
add_new("vbroadcastf128", "ymm,m128")
add_new("vbroadcasti128", "ymm,m128")
add_new("vpbroadcastb", "xmm,xmm", "ymm,m8")
add_new("vpbroadcastw", "xmm,xmm", "ymm,xmm", "ymm,m16")
add_new("vpbroadcastd", "xmm,m32")
add_new("vpbroadcastq", "xmm,xmm", "ymm,xmm", "xmm,m64")
add_new("vperm2f128", "ymm,ymm,m256,imm8")
add_new("vperm2i128", "ymm,ymm,m256,imm8")
for m in ["vmaskmovps", "vmaskmovpd", "vpmaskmovd", "vpmaskmovq"]:
    add_new(m, "xmm,xmm,m128", "ymm,ymm,m256", "m128,xmm,xmm", "m256,ymm,ymm")
add_new("vpgatherdd", "xmm,vsib_x,xmm")
add_new("vgatherdps", "xmm,vsib_x,xmm")
add_new("vpgatherdq", "xmm,vsib_x,xmm", "ymm,vsib_x,ymm")
add_new("vgatherdpd", "xmm,vsib_x,xmm", "ymm,vsib_x,ymm")
add_new("vpgatherqd", "xmm,vsibq_x,xmm", "xmm,vsibq_y,xmm")
add_new("vgatherqps", "xmm,vsibq_x,xmm", "xmm,vsibq_y,xmm")
add_new("vpgatherqq", "xmm,vsibq_x,xmm", "ymm,vsibq_y,ymm")
add_new("vgatherqpd", "xmm,vsibq_x,xmm", "ymm,vsibq_y,ymm")
add_new("vcvtps2ph", "xmm,xmm,imm8", "m128,ymm,imm8", "m64,xmm,imm8")
add_new("vcvtsi2ss", "xmm,xmm,r32", "xmm,xmm,r64")
add_new("vcvtsi2sd", "xmm,xmm,r32", "xmm,xmm,r64")
for m in ["vcvttss2si", "vcvtss2si"]:
    add_new(m, "r32,xmm", "r64,xmm")
for m in ["vcvttsd2si", "vcvtsd2si"]:
    add_new(m, "r32,xmm", "r64,xmm")
for m in ["vucomiss", "vcomiss"]:
    add_new(m, "xmm,xmm", "xmm,m32")
for m in ["vucomisd", "vcomisd"]:
    add_new(m, "xmm,xmm", "xmm,m64")
add_new("vldmxcsr", "m32")
add_new("vstmxcsr", "m32")

# fences, serialising, privileged
for m in ["lfence", "mfence", "sfence", "cpuid", "rdtsc", "rdtscp", "rdpmc", "swapgs", "wrmsr", "rdmsr",
          "syscall", "sysretq", "sysenter", "sysexit", "iretq", "iretd", "int3", "hlt", "cli", "sti",
          "invd", "wbinvd", "xgetbv", "xsetbv", "vmcall", "ud2", "serialize", "rdrand_r64", "rdseed_r64",
          "rdfsbase_r64", "wrfsbase_r64", "rdgsbase_r64", "wrgsbase_r64", "clac", "stac", "lgdt_m", "lidt_m",
          "sgdt_m", "sidt_m", "ltr_r16", "str_r16", "lldt_r16", "invlpg_m", "invpcid_r64_m128",
          "mov_cr3_r64", "mov_r64_cr3", "mov_cr0_r64", "mov_r64_cr0", "mov_cr4_r64", "mov_r64_cr2",
          "mov_dr7_r64", "xsave_m", "xrstor_m", "xsaveopt_m", "fxsave_m", "fxrstor_m", "int_imm8",
          "mov_ss_r16", "mov_ds_r16", "mov_r16_ss", "mov_gs_r16", "lsl_r32_r32", "verw_m16", "verw_r16",
          "ljmp_m", "retfq", "monitor", "mwait", "rsm", "push_fs", "pop_fs"]:
    if "_" in m and m not in ("mov_r64_cr3",):
        parts = m.split("_", 1)
        mn, rest = parts[0], parts[1]
        add(mn, ",".join(rest.split("_")))
    elif m == "mov_r64_cr3":
        add("mov", "r64,cr3")
    else:
        add(m, "")

# Concrete operands.  Registers differ per operand position so that no form is
# a self-dependency unless the instruction itself reads its destination.
REGS = {
    "r64": ["rbx", "rcx", "rdx"], "r32": ["ebx", "ecx", "edx"], "r16": ["bx", "cx", "dx"], "r8": ["bl", "cl", "dl"],
    "xmm": ["xmm1", "xmm2", "xmm3", "xmm4"], "ymm": ["ymm1", "ymm2", "ymm3", "ymm4"],
}
FIXED = {
    "imm8": "7", "imm16": "0x1234", "imm32": "0x12345", "imm64": "0x123456789ab",
    "m8": "byte ptr [rdi+8]", "m16": "word ptr [rdi+8]", "m32": "dword ptr [rdi+8]", "m64": "qword ptr [rdi+8]",
    "m128": "xmmword ptr [rdi+16]", "m256": "ymmword ptr [rdi+32]", "m": "[rdi+rsi*4+8]",
    "m_base": "[rdi]", "m_bd": "[rdi+8]", "m_bi": "[rdi+rsi]", "m_rip": "[rip+.Ltarget]",
    "m_rip64": "qword ptr [rip+.Ltarget]",
    "vsib_y": "[rdi+ymm5*4]", "vsib_x": "[rdi+xmm5*4]", "vsibq_y": "[rdi+ymm5*8]",
    "vsibq_x": "[rdi+xmm5*8]", "xmm0": "xmm0", "one": "1", "cl": "cl", "rel": ".Ltarget",
    "st1": "st(1)", "cr3": "cr3", "cr0": "cr0", "cr4": "cr4", "cr2": "cr2", "dr7": "dr7",
    "ss": "ss", "ds": "ds", "gs": "gs", "fs": "fs",
}


def concrete(mnem, ops):
    """Intel-syntax text of one instance of the form."""
    if ops == "zero32":
        return "xor eax, eax"
    if ops == "zeroxmm":
        return "vpxor xmm1, xmm1, xmm1"
    if ops == "zeroxmm2":
        return f"{mnem} xmm1, xmm1"
    if not ops:
        return mnem
    out = []
    used = {}
    for i, k in enumerate(ops.split(",")):
        if k in REGS:
            n = used.get(k, 0)
            # shifts/rotates by cl: the count register must be cl, the shifted one something else
            out.append(REGS[k][n])
            used[k] = n + 1
        elif k in FIXED:
            out.append(FIXED[k])
        else:
            raise ValueError(f"unknown operand kind {k!r} in {mnem} {ops}")
    if "cl" in ops.split(","):          # avoid using cl as a data register too
        out = [o if o not in ("rcx", "ecx", "cx") else {"rcx": "rdx", "ecx": "edx", "cx": "dx"}[o]
               for o in out[:-1]] + [out[-1]]
    return f"{mnem} " + ", ".join(out)


def form_name(mnem, ops):
    special = {"zero32": "r32,r32 (zero idiom)", "zeroxmm": "xmm,xmm,xmm (zero idiom)",
               "zeroxmm2": "xmm,xmm (zero idiom)"}
    ops = special.get(ops, ops)
    ops = ops.replace("m_base", "m[base]").replace("m_bd", "m[base+disp]").replace("m_bi", "m[base+index]")
    ops = ops.replace("m_rip64", "m64[rip]").replace("m_rip", "m[rip]").replace("vsib_y", "vm32y").replace("vsib_x", "vm32x")
    ops = ops.replace("vsibq_y", "vm64y").replace("vsibq_x", "vm64x")
    return f"{mnem} {ops.replace(',', ', ')}".strip()


def run(cmd, inp):
    return subprocess.run(cmd, input=inp, capture_output=True, text=True)


def assemblable(mc, lines):
    """Indices of lines llvm-mc accepts (one batch, then drop reported lines)."""
    ok = set(range(len(lines)))
    for _ in range(50):
        idx = sorted(ok)
        src = ".intel_syntax noprefix\n.Ltarget:\n" + "\n".join(lines[i] for i in idx) + "\n"
        r = run([mc, "-triple=x86_64-unknown-linux-gnu", "-mcpu=znver4", "-filetype=null", "-"], src)
        bad = {int(m) for m in re.findall(r"^<stdin>:(\d+):\d+: error", r.stderr, re.M)}
        if not bad:
            return ok
        for ln in bad:
            j = ln - 3              # two header lines, 1-based
            if 0 <= j < len(idx):
                print(f"gen_llvm: llvm-mc rejects: {lines[idx[j]]}", file=sys.stderr)
                ok.discard(idx[j])
    return ok


def mca_source(lines, keep):
    src = [".intel_syntax noprefix", ".Ltarget:"]
    for i in keep:
        src += [f"# LLVM-MCA-BEGIN f{i}", lines[i], "# LLVM-MCA-END"]
    return "\n".join(src) + "\n"


def mca_run(mcaexe, cpu, src):
    """llvm-mca on src; None when it does not finish in MCA_TIMEOUT or
    crashes (killed by a signal)."""
    try:
        r = subprocess.run([mcaexe, f"-mcpu={cpu}", "-instruction-info", "-resource-pressure",
                            "-iterations=100"], input=src, capture_output=True, text=True,
                           timeout=MCA_TIMEOUT)
    except subprocess.TimeoutExpired:
        return None
    return None if r.returncode < 0 or "Stack dump:" in r.stderr else r


def hanging(mcaexe, cpu, lines, keep):
    """The regions of keep that llvm-mca does not finish or crashes on (by
    halving): LLVM 16's AlderlakeP model never ends on a few forms (vdpps,
    rdmsr, xsave...) and crashes on others."""
    if mca_run(mcaexe, cpu, mca_source(lines, keep)) is not None:
        return []
    if len(keep) == 1:
        return keep
    h = len(keep) // 2
    return hanging(mcaexe, cpu, lines, keep[:h]) + hanging(mcaexe, cpu, lines, keep[h:])


def mca(mcaexe, cpu, lines):
    """Run llvm-mca with one code region per line; return {line_index: record}."""
    idx = list(range(len(lines)))
    drop = set()
    for _ in range(50):
        keep = [i for i in idx if i not in drop]
        r = mca_run(mcaexe, cpu, mca_source(lines, keep))
        if r is None:
            for i in hanging(mcaexe, cpu, lines, keep):
                print(f"gen_llvm: llvm-mca -mcpu={cpu} hangs or crashes on: {lines[i]}", file=sys.stderr)
                drop.add(i)
            continue
        if r.returncode == 0:
            return parse(r.stdout, keep, lines)
        bad = {int(m) for m in re.findall(r"^<stdin>:(\d+):\d+: error", r.stderr, re.M)}
        if not bad:
            sys.exit(f"gen_llvm: llvm-mca failed for {cpu}:\n{r.stderr[:2000]}")
        for ln in bad:
            j = (ln - 3) // 3           # region lines are BEGIN, insn, END
            if 0 <= j < len(keep):
                print(f"gen_llvm: llvm-mca -mcpu={cpu} rejects: {lines[keep[j]]}", file=sys.stderr)
                drop.add(keep[j])
    sys.exit("gen_llvm: too many llvm-mca retries")


def parse(out, keep, lines):
    recs = {}
    regions = re.split(r"^\[\d+\] Code Region - ", out, flags=re.M)[1:]
    for reg in regions:
        name = reg.split("\n", 1)[0].strip()
        i = int(name[1:])
        info = re.search(r"^(\[1\]\s+\[2\]\s+\[3\]\s+\[4\]\s+\[5\]\s+\[6\]\s+)Instructions:\n(.*)\n", reg, re.M)
        head, row = info.group(1), info.group(2)
        m = re.match(r"\s*(\d+)\s+(\d+)\s+([\d.]+)", row)
        uops, lat, rtp = m.group(1), m.group(2), m.group(3)
        # the flag columns are aligned under their "[4]" "[5]" "[6]" headings
        c4, c5, c6 = head.index("[4]"), head.index("[5]"), head.index("[6]")
        load = "*" in row[c4:c5]
        store = "*" in row[c5:c6]
        side = "U" in row[c6:len(head)]
        res = dict(re.findall(r"^\[([\d.]+)\]\s+- (\S+)", reg, re.M))
        hdr = re.search(r"Resource pressure by instruction:\n(.*)\n(.*)\n", reg)
        cols = re.findall(r"\[([\d.]+)\]", hdr.group(1))
        vals = hdr.group(2).split()[:len(cols)]
        ports = []
        agg = {}
        for c, v in zip(cols, vals):
            if v == "-":
                continue
            nm = res[c]
            for p in RESOURCE_PREFIXES:
                if nm.startswith(p):
                    nm = nm[len(p):]
            agg[nm] = agg.get(nm, 0.0) + float(v)   # sub-units (LSU.0/.1/.2) summed
        for nm, v in agg.items():
            ports.append(f"{nm}:{v:g}")
        recs[i] = dict(uops=uops, latency=lat, rthroughput=rtp, ports="+".join(ports) or "-",
                       load=int(load), store=int(store), side_effects=int(side))
    return recs


HEADER = ["form", "uops", "latency", "rthroughput", "ports", "load", "store", "side_effects", "asm", "source"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--mca", default="llvm-mca-16")
    ap.add_argument("--mc", default="llvm-mc-16")
    ap.add_argument("--only", choices=sorted(CPUS), help="write only this table")
    a = ap.parse_args()
    ver = run([a.mca, "--version"], "").stdout
    m = re.search(r"LLVM version (\S+)", ver)
    version = m.group(1) if m else "unknown"
    seen = set()
    forms = []
    for mn, ops in FORMS:
        key = form_name(mn, ops)
        if key in seen:
            continue
        seen.add(key)
        forms.append((key, concrete(mn, ops)))
    lines = [f[1] for f in forms]
    ok = assemblable(a.mc, lines)
    for name, cpu in CPUS.items():
        if a.only and name != a.only:
            continue
        recs = mca(a.mca, cpu, [l if i in ok else "nop" for i, l in enumerate(lines)])
        path = os.path.join(a.out, f"{name}.llvm.tsv")
        n = 0
        with open(path, "w") as f:
            f.write(f"# {name}: per-instruction-form costs from LLVM {version} scheduling model "
                    f"(llvm-mca-16 -mcpu={cpu} -instruction-info -resource-pressure -iterations=100).\n")
            f.write("# Generated by tables/uarch/gen_llvm.py; do not edit. Format: tables/uarch/README.md.\n")
            gone = [key for i, (key, _) in enumerate(forms) if i in ok and i not in recs]
            if gone:
                f.write("# dropped (llvm-mca hangs or crashes on them for this cpu): " + "; ".join(gone) + "\n")
            f.write("\t".join(HEADER) + "\n")
            for i, (key, asm) in enumerate(forms):
                if i not in ok or i not in recs:
                    continue
                r = recs[i]
                f.write("\t".join([key, r["uops"], r["latency"], r["rthroughput"], r["ports"], str(r["load"]),
                                   str(r["store"]), str(r["side_effects"]), asm,
                                   f"llvm-mca-16 ({version}) -mcpu={cpu}"]) + "\n")
                n += 1
        print(f"gen_llvm: wrote {path}: {n} forms", file=sys.stderr)


if __name__ == "__main__":
    main()
