import random
random.seed(7)
def x(r, b):  # 16 bytes (list) -> xN=hi:lo
    lo = int.from_bytes(bytes(b[:8]), 'little'); hi = int.from_bytes(bytes(b[8:]), 'little')
    return f"x{r}={hi:016x}:{lo:016x}"
s_hello = list(b"hello, world!\0zz")
s_set = list(b" ,!\0" + bytes(12))
s_rng = list(b"azAZ09\0" + bytes(9))
s_needle = list(b"wor\0" + bytes(12))
s_full = list(b"abcdefghijklmnop")
s_sign = [0x80, 0x7f, 0x01, 0xff, 0x00, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]
cases = [(s_set, s_hello), (s_rng, s_hello), (s_needle, s_hello), (s_full, s_full), (s_hello, s_hello), (s_sign, s_hello), (s_rng, s_sign)]
imms = [0x00, 0x04, 0x08, 0x0c, 0x14, 0x1a, 0x34, 0x38, 0x3a, 0x40, 0x44, 0x4c, 0x70, 0x05, 0x0d, 0x06, 0x07, 0x0b, 0x3b, 0x4d]
for a, b in cases:
    for imm in imms:
        print(f"pcmpistri xmm1, xmm2, {imm:#x} ; {x(1, a)} {x(2, b)} rcx=ffffffffffffffff m32")
        if imm in (0x40, 0x04, 0x0c, 0x3a, 0x4d, 0x05, 0x70): print(f"pcmpistrm xmm1, xmm2, {imm:#x} ; {x(1, a)} {x(2, b)} m32")
for la, lb in ((3, 13), (16, 16), (-5, 20), (0, 0), (7, 0x80000000), (17, -1)):
    for imm in (0x00, 0x04, 0x08, 0x0c, 0x30, 0x40, 0x01, 0x0d, 0x4c):
        rax = la & 0xffffffffffffffff; rdx = lb & 0xffffffffffffffff
        print(f"pcmpestri xmm1, xmm2, {imm:#x} ; {x(1, s_set)} {x(2, s_hello)} rax={rax:x} rdx={rdx:x} rcx=ffffffffffffffff m32")
        print(f"pcmpestrm xmm1, xmm2, {imm:#x} ; {x(1, s_needle)} {x(2, s_hello)} rax={rax:x} rdx={rdx:x} m32")
print(f"pcmpestri xmm1, xmm2, 0x0c ; {x(1, s_needle)} {x(2, s_hello)} rax=ffffffff00000003 rdx=100000000 rcx=ffffffffffffffff")
print(f".byte 0x66,0x48,0x0f,0x3a,0x61,0xca,0x0c ; {x(1, s_needle)} {x(2, s_hello)} rax=ffffffff00000003 rdx=100000000 rcx=ffffffffffffffff")
print(f"pcmpistri xmm1, [rdi], 0x00 ; {x(1, s_set)} rdi=D+0x3 rcx=ffffffffffffffff m32")
print(f"pcmpistrm xmm1, [rdi], 0x40 ; {x(1, s_set)} rdi=D+0x3 m32")
# CRC32
for src in ('al', 'ax', 'eax', 'rax'):
    dst = 'rcx' if src == 'rax' else 'ecx'
    print(f"crc32 {dst}, {src} ; rax=0123456789abcdef rcx=ffffffffdeadbeef" + (" m32" if src != 'rax' else ""))
print(f"crc32 rcx, al ; rax=0123456789abcdef rcx=ffffffffdeadbeef")
print(f"crc32 ecx, byte ptr [rdi] ; rdi=D+3 rcx=ffffffff m32")
print(f"crc32 ecx, word ptr [rdi] ; rdi=D+3 rcx=0 m32")
print(f"crc32 ecx, dword ptr [rdi] ; rdi=D+3 rcx=12345678 m32")
print(f"crc32 rcx, qword ptr [rdi] ; rdi=D+3 rcx=12345678")
# PTEST
for a, b in (("0:0", "0:0"), ("ff:0", "0:ff"), ("ff:0", "ff:0"), ("ffffffffffffffff:ffffffffffffffff", "1:0"), ("0:1", "0:3")):
    print(f"ptest xmm0, xmm1 ; x0={a} x1={b} flags=8d5 m32")
print(f"ptest xmm0, [rdi] ; x0=0:ff rdi=D+0x10 flags=8d5 m32")
print(f"ptest xmm0, [rdi] ; x0=0:ff rdi=D+0x18 m32")
# MPSADBW
for imm in range(8):
    print(f"mpsadbw xmm0, xmm1, {imm} ; x0=8000ff017f80fe02:0123456789abcdef x1=fedcba9876543210:7fff8000ffff0001 m32")
print(f"mpsadbw xmm0, [rdi], 5 ; x0=8000ff017f80fe02:0123456789abcdef rdi=D+0x20 m32")
