fv = [0x3fc00000, 0x40200000, 0xbfc00000, 0xc0200000, 0x4f000000, 0xcf000000, 0xcf000001, 0x4effffff,
      0x5f000000, 0xdf000000, 0x7fc00000, 0x7f800001, 0xff800000, 0x00000001, 0x3f7fffff, 0x80000000]
dv = [0x3ff8000000000000, 0x4004000000000000, 0xbff8000000000000, 0xc004000000000000,
      0x41dfffffffc00000, 0xc1e0000000100000, 0x41e0000000000000, 0xc1e0000000000000,
      0x43e0000000000000, 0xc3e0000000000000, 0x7ff8000000000000, 0x7ff0000000000001,
      0x0000000000000001, 0x3fefffffffffffff, 0x47efffffe0000000, 0x36a0000000000000, 0x3ff0000010000000,
      0x3810000000000000, 0x380fffffffffffff]
def xf(r, vals):
    vals = (vals + [0, 0, 0, 0])[:4]
    return f"x{r}={vals[2] | vals[3] << 32:016x}:{vals[0] | vals[1] << 32:016x}"
def xd(r, vals):
    vals = (vals + [0, 0])[:2]
    return f"x{r}={vals[1]:016x}:{vals[0]:016x}"
mxs = ['1f80', '3f80', '5f80', '7f80']
for v in fv:
    for mx in mxs:
        print(f"cvtss2si eax, xmm1 ; x1=0:{v:08x} rax=ffffffffffffffff mxcsr={mx} m32")
    print(f"cvttss2si eax, xmm1 ; x1=0:{v:08x} rax=ffffffffffffffff m32")
    print(f"cvttss2si rax, xmm1 ; x1=0:{v:08x}")
    print(f"cvtss2si rax, xmm1 ; x1=0:{v:08x} mxcsr=3f80")
    print(f"cvtss2sd xmm0, xmm1 ; x0=1111111111111111:2222222222222222 x1=0:{v:08x} m32")
for v in dv:
    for mx in mxs:
        print(f"cvtsd2si eax, xmm1 ; x1=0:{v:016x} rax=ffffffffffffffff mxcsr={mx} m32")
        print(f"cvtsd2ss xmm0, xmm1 ; x0=1111111111111111:2222222222222222 x1=0:{v:016x} mxcsr={mx} m32")
    print(f"cvttsd2si eax, xmm1 ; x1=0:{v:016x} rax=ffffffffffffffff m32")
    print(f"cvttsd2si rax, xmm1 ; x1=0:{v:016x}")
    print(f"cvtsd2si rax, xmm1 ; x1=0:{v:016x} mxcsr=5f80")
print(f"cvtsd2ss xmm0, xmm1 ; x1=0:{dv[17]:016x} mxcsr=9f80 m32")
print(f"cvtsd2ss xmm0, xmm1 ; x1=0:{dv[14]:016x} mxcsr=1b80 m32")
print(f"cvtss2sd xmm0, xmm1 ; x1=0:00000001 mxcsr=1fc0 m32")
print(f"cvtss2sd xmm0, xmm1 ; x1=0:00000001 mxcsr=1e80 m32")
print(f"cvttsd2si eax, xmm1 ; x1=0:{dv[10]:016x} mxcsr=1f00 rax=5 m32")
print(f"cvttss2si eax, xmm1 ; x1=0:{fv[14]:08x} mxcsr=0f80 rax=5 m32")
for iv in (0, 1, 0x7fffffff, 0x80000000, 0x01000001, 0xffffffff, 0x12345679):
    for mx in mxs:
        print(f"cvtsi2ss xmm0, eax ; x0=1111111111111111:2222222222222222 rax={iv:x} mxcsr={mx} m32")
    print(f"cvtsi2sd xmm0, eax ; x0=1111111111111111:2222222222222222 rax={iv:x} m32")
for iv in (0x7fffffffffffffff, 0x8000000000000001, 0x0020000000000001, 0xfffffffffffffffd, 0x123456789abcdef1):
    for mx in mxs:
        print(f"cvtsi2ss xmm0, rax ; rax={iv:x} mxcsr={mx}")
        print(f"cvtsi2sd xmm0, rax ; rax={iv:x} mxcsr={mx}")
print(f"cvtsi2sd xmm0, dword ptr [rdi] ; rdi=D+1 m32")
print(f"cvtsi2ss xmm0, qword ptr [rdi] ; rdi=D+1")
print(f"cvtsi2ss xmm0, eax ; rax=01000001 mxcsr=0f80 m32")
print(f"cvtss2si eax, dword ptr [rdi] ; rdi=D+1 m32")
print(f"cvtsd2si eax, qword ptr [rdi] ; rdi=D+1 m32")
for i in range(0, len(fv), 4):
    for mx in mxs:
        print(f"cvtps2dq xmm0, xmm1 ; {xf(1, fv[i:i+4])} mxcsr={mx} m32")
        print(f"cvtdq2ps xmm0, xmm1 ; x1=80000000ffffffff:7fffffff01000001 mxcsr={mx} m32")
    print(f"cvttps2dq xmm0, xmm1 ; {xf(1, fv[i:i+4])} m32")
    print(f"cvtps2pd xmm0, xmm1 ; {xf(1, fv[i:i+4])} m32")
    print(f"cvtps2pd xmm0, xmm1 ; {xf(1, fv[i+2:i+4])} m32")
for i in range(0, len(dv) - 1, 2):
    for mx in mxs:
        print(f"cvtpd2dq xmm0, xmm1 ; x0=11:22 {xd(1, dv[i:i+2])} mxcsr={mx} m32")
        print(f"cvtpd2ps xmm0, xmm1 ; x0=11:22 {xd(1, dv[i:i+2])} mxcsr={mx} m32")
    print(f"cvttpd2dq xmm0, xmm1 ; x0=11:22 {xd(1, dv[i:i+2])} m32")
print(f"cvtdq2pd xmm0, xmm1 ; x1=80000000ffffffff:7fffffff80000000 m32")
print(f"cvtdq2pd xmm0, qword ptr [rdi] ; rdi=D+3 m32")
print(f"cvtps2pd xmm0, qword ptr [rdi] ; rdi=D+3 m32")
print(f"cvtpd2ps xmm0, [rdi] ; rdi=D+8 m32")
print(f"cvtdq2ps xmm0, [rdi] ; rdi=D+0x10 m32")
print(f"cvtps2dq xmm0, xmm1 ; {xf(1, fv[8:12])} mxcsr=1f00 m32")
print(f"cvtpd2ps xmm0, xmm1 ; {xd(1, dv[14:16])} mxcsr=1780 m32")
print(f"cvtpd2ps xmm0, xmm1 ; {xd(1, dv[14:16])} mxcsr=1b80 m32")
