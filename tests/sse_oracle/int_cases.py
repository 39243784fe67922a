# Emits `asm ; init` lines for the packed-integer table.
A = "x0=8000ff017f80fe02:0123456789abcdef"
B = "x1=fedcba9876543210:7fff8000ffff0001"
C = "x2=00ff7f80017ffe81:8000000180007fff"
D = "x3=ffffffff00000000:80000000fffffffe"
bin_ops = """pand pandn por pxor andps andpd andnps andnpd orps orpd xorps xorpd
paddb paddw paddd paddq psubb psubw psubd psubq paddsb paddsw paddusb paddusw psubsb psubsw psubusb psubusw
pmullw pmulhw pmulhuw pmuludq pmulld pmuldq pmaddwd pmaddubsw pmulhrsw pavgb pavgw psadbw
pminub pminsb pminuw pminsw pminud pminsd pmaxub pmaxsb pmaxuw pmaxsw pmaxud pmaxsd
pabsb pabsw pabsd psignb psignw psignd
pcmpeqb pcmpeqw pcmpeqd pcmpeqq pcmpgtb pcmpgtw pcmpgtd pcmpgtq
punpcklbw punpckhbw punpcklwd punpckhwd punpckldq punpckhdq punpcklqdq punpckhqdq unpcklps unpckhps unpcklpd unpckhpd
packsswb packuswb packssdw packusdw
phaddw phaddd phaddsw phsubw phsubd phsubsw pshufb
pmovsxbw pmovsxbd pmovsxbq pmovsxwd pmovsxwq pmovsxdq pmovzxbw pmovzxbd pmovzxbq pmovzxwd pmovzxwq pmovzxdq
phminposuw""".split()
small_mem = {'pmovsxbw': 'qword', 'pmovsxbd': 'dword', 'pmovsxbq': 'word', 'pmovsxwd': 'qword',
             'pmovsxwq': 'dword', 'pmovsxdq': 'qword'}
for k in list(small_mem):
    small_mem[k.replace('sx', 'zx')] = small_mem[k]
for op in bin_ops:
    print(f"{op} xmm0, xmm1 ; {A} {B} m32")
    if op not in ('pand', 'pandn', 'por', 'andps', 'andpd', 'andnps', 'andnpd', 'orps', 'orpd', 'xorps', 'xorpd', 'phminposuw') and not op.startswith('punpck') and not op.startswith('unpck'):
        print(f"{op} xmm2, xmm3 ; {C} {D}")
    if op in small_mem:
        print(f"{op} xmm1, {small_mem[op]} ptr [rdi] ; {B} rdi=D+3 m32")
    else:
        print(f"{op} xmm1, [rdi] ; {B} rdi=D+0x10 m32")
print(f"pxor xmm0, xmm0 ; {A} m32")
print(f"pcmpeqb xmm5, xmm5 ; m32")
print(f"phminposuw xmm0, xmm1 ; x1=0005000300070003:0009000400060008")
print(f"pmaddwd xmm0, xmm1 ; x0=8000800080008000:8000800080008000 x1=8000800080008000:80008000ffff0001")
print(f"pmulhrsw xmm0, xmm1 ; x0=8000800040007fff:8000800080008000 x1=80007fff40007fff:80008000ffff0001")
print(f"pabsb xmm0, xmm1 ; x1=807f01ff80ff0000:8081fe7f00010280")
print(f"pshufb xmm0, xmm1 ; {A} x1=800f0e0d81020100:0f8f070605040302")
print(f"psignb xmm0, xmm1 ; {A} x1=807f01ff800000ff:0102030405060708")
# aligned-operand faults and the unaligned / scalar forms that do not fault
for op in ('paddb', 'pxor', 'pshufb', 'pmaxsd', 'packuswb', 'pmovmskb'):
    if op == 'pmovmskb':
        continue
    print(f"{op} xmm1, [rdi] ; {B} rdi=D+8 m32")
print(f"pmovzxbw xmm1, qword ptr [rdi] ; rdi=D+1 m32")
# shifts
for op in ('psllw psrlw psraw pslld psrld psrad psllq psrlq'.split()):
    for n in (1, 7, 15, 16, 31, 33, 64, 200):
        if op.endswith('w') and n in (31, 63): continue
        if op.endswith('d') and n in (7, 63): continue
        if op.endswith('q') and n in (16,): continue
        print(f"{op} xmm0, {n} ; {A} m32")
    for cnt in ('0000000000000003', '0000000000000011', '0000000000000021', '0000000100000002'):
        print(f"{op} xmm0, xmm1 ; {A} x1=ffffffffffffffff:{cnt} m32")
    print(f"{op} xmm0, [rdi] ; {A} rdi=D+0x20 m32")
for n in (0, 1, 5, 15, 16, 255):
    print(f"pslldq xmm0, {n} ; {A} m32")
    print(f"psrldq xmm0, {n} ; {A} m32")
for n in (0, 1, 5, 15, 16, 17, 31, 32, 255):
    print(f"palignr xmm0, xmm1, {n} ; {A} {B} m32")
print(f"palignr xmm0, [rdi], 3 ; {A} rdi=D+0x20 m32")
for imm in (0x1b, 0x00, 0xe4, 0x4e):
    print(f"pshufd xmm0, xmm1, {imm} ; {B} m32")
    print(f"pshufhw xmm0, xmm1, {imm} ; {B} m32")
    print(f"pshuflw xmm0, xmm1, {imm} ; {B} m32")
    print(f"shufps xmm0, xmm1, {imm} ; {A} {B} m32")
for imm in (0, 1, 2, 3):
    print(f"shufpd xmm0, xmm1, {imm} ; {A} {B} m32")
print(f"pshufd xmm0, [rdi], 0x1b ; rdi=D+0x30 m32")
print(f"pshufd xmm0, [rdi], 0x1b ; rdi=D+0x34 m32")
# blends
for imm in (0x00, 0xa5, 0xff, 0x3c):
    print(f"pblendw xmm0, xmm1, {imm} ; {A} {B} m32")
for imm in (0, 5, 0xa, 0xf):
    print(f"blendps xmm0, xmm1, {imm} ; {A} {B} m32")
for imm in (0, 1, 2, 3):
    print(f"blendpd xmm0, xmm1, {imm} ; {A} {B} m32")
print(f"pblendvb xmm2, xmm1 ; x0=8000ff017f80fe02:0123456789abcdef {B} {C} m32")
print(f"blendvps xmm2, xmm1 ; x0=8000000000000000:0000000180000000 {B} {C} m32")
print(f"blendvpd xmm2, xmm1 ; x0=8000000000000000:7fffffffffffffff {B} {C} m32")
print(f"pblendvb xmm0, xmm1 ; x0=8000ff017f80fe02:0123456789abcdef {B} m32")
print(f"blendvpd xmm0, [rdi] ; x0=0000000000000000:8000000000000000 rdi=D+0x10 m32")
# insert / extract
for i in (0, 3, 9, 15, 16):
    print(f"pextrb eax, xmm1, {i} ; {B} rax=ffffffffffffffff")
    print(f"pinsrb xmm1, eax, {i} ; {B} rax=12345678 m32")
for i in (0, 3, 7, 8):
    print(f"pextrw eax, xmm1, {i} ; {B} rax=ffffffffffffffff")
    print(f"pinsrw xmm1, eax, {i} ; {B} rax=12345678 m32")
for i in (0, 1, 3, 4):
    print(f"pextrd eax, xmm1, {i} ; {B} rax=ffffffffffffffff")
    print(f"pinsrd xmm1, eax, {i} ; {B} rax=12345678 m32")
    print(f"extractps eax, xmm1, {i} ; {B} rax=ffffffffffffffff")
for i in (0, 1, 2):
    print(f"pextrq rax, xmm1, {i} ; {B}")
    print(f"pinsrq xmm1, rax, {i} ; {B} rax=123456789abcdef0")
print(f"pextrb rax, xmm1, 1 ; {B} rax=ffffffffffffffff")
print(f"pextrb byte ptr [rdi+1], xmm1, 5 ; {B} rdi=D+0 m32")
print(f"pextrw word ptr [rdi+1], xmm1, 5 ; {B} rdi=D+0 m32")
print(f"pextrd dword ptr [rdi+1], xmm1, 3 ; {B} rdi=D+0 m32")
print(f"pextrq qword ptr [rdi+1], xmm1, 1 ; {B} rdi=D+0")
print(f"extractps dword ptr [rdi+1], xmm1, 2 ; {B} rdi=D+0 m32")
print(f"pinsrb xmm1, byte ptr [rdi+1], 5 ; {B} rdi=D+0 m32")
print(f"pinsrw xmm1, word ptr [rdi+1], 5 ; {B} rdi=D+0 m32")
print(f"pinsrd xmm1, dword ptr [rdi+1], 2 ; {B} rdi=D+0 m32")
print(f"pinsrq xmm1, qword ptr [rdi+1], 1 ; {B} rdi=D+0")
for imm in (0x00, 0x10, 0x20, 0x30, 0x40, 0xc0, 0x55, 0x3f, 0xd9):
    print(f"insertps xmm0, xmm1, {imm} ; {A} {B} m32")
print(f"insertps xmm0, dword ptr [rdi+1], 0xe6 ; {A} rdi=D+0 m32")
