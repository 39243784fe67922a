F = dict(one=0x3f800000, m25=0xc0200000, tenth=0x3dcccccd, three=0x40400000, pz=0, nz=0x80000000,
         inf=0x7f800000, ninf=0xff800000, qnan=0x7fc00001, qnan2=0xffc00005, snan=0x7f800002,
         den=0x00000001, nden=0x807fffff, big=0x7f7fffff, minn=0x00800000, half=0x3f000000, m1=0xbf800000,
         onep=0x3f800001, tiny=0x0c000000)
D = dict(one=0x3ff0000000000000, m25=0xc004000000000000, tenth=0x3fb999999999999a, three=0x4008000000000000,
         pz=0, nz=0x8000000000000000, inf=0x7ff0000000000000, ninf=0xfff0000000000000,
         qnan=0x7ff8000000000001, qnan2=0xfff8000000000005, snan=0x7ff0000000000002,
         den=0x1, nden=0x800fffffffffffff, big=0x7fefffffffffffff, minn=0x0010000000000000,
         half=0x3fe0000000000000, m1=0xbff0000000000000, onep=0x3ff0000000000001, tiny=0x2000000000000000)
pairs = [('one', 'three'), ('tenth', 'three'), ('inf', 'ninf'), ('qnan', 'one'), ('one', 'qnan'), ('snan', 'qnan2'),
         ('qnan2', 'snan'), ('den', 'one'), ('big', 'big'), ('minn', 'half'), ('nz', 'pz'), ('pz', 'pz'),
         ('one', 'pz'), ('m25', 'nz'), ('onep', 'tenth'), ('tiny', 'tiny'), ('nden', 'den'), ('pz', 'nz'),
         ('m1', 'inf'), ('inf', 'inf')]
groups4 = [pairs[i:i + 4] for i in range(0, len(pairs), 4)]
groups2 = [pairs[i:i + 2] for i in range(0, len(pairs), 2)]
def xf(r, vals):
    lo = vals[0] | vals[1] << 32; hi = vals[2] | vals[3] << 32
    return f"x{r}={hi:016x}:{lo:016x}"
def xd(r, vals):
    return f"x{r}={vals[1]:016x}:{vals[0]:016x}"
def ps_init(g):
    return xf(0, [F[a] for a, b in g]) + ' ' + xf(1, [F[b] for a, b in g])
def pd_init(g):
    return xd(0, [D[a] for a, b in g]) + ' ' + xd(1, [D[b] for a, b in g])
mx_all = ['1f80', '3f80', '5f80', '7f80', '9fc0', '1f00', '1e80', '1d80', '1b80', '1780', '0f80']
for op in ('add', 'sub', 'mul', 'div', 'min', 'max', 'sqrt'):
    for g in groups4:
        print(f"{op}ps xmm0, xmm1 ; {ps_init(g)} m32")
        print(f"{op}ss xmm0, xmm1 ; {ps_init(g)} m32")
    for g in groups2[1::2] + groups2[2:3]:
        print(f"{op}pd xmm0, xmm1 ; {pd_init(g)} m32")
        print(f"{op}sd xmm0, xmm1 ; {pd_init(g)} m32")
    for mx in mx_all[1:]:
        print(f"{op}ps xmm0, xmm1 ; {ps_init(groups4[(mx_all.index(mx)) % 5])} mxcsr={mx}")
        print(f"{op}pd xmm0, xmm1 ; {pd_init(groups2[(mx_all.index(mx)) % 10])} mxcsr={mx}")
    print(f"{op}ps xmm0, [rdi] ; {ps_init(groups4[0])} rdi=D+0x10 m32")
    print(f"{op}ps xmm0, [rdi] ; {ps_init(groups4[0])} rdi=D+0x14 m32")
    print(f"{op}ss xmm0, [rdi] ; {ps_init(groups4[0])} rdi=D+0x14 m32")
    print(f"{op}sd xmm0, [rdi] ; {pd_init(groups2[0])} rdi=D+0x13 m32")
    print(f"{op}pd xmm0, [rdi] ; {pd_init(groups2[0])} rdi=D+0x18 m32")
# precise rounding differences under each RC
for mx in ('1f80', '3f80', '5f80', '7f80'):
    print(f"divss xmm0, xmm1 ; x0.f=1 x1.f=3 mxcsr={mx} m32")
    print(f"divsd xmm0, xmm1 ; x0.d=-1 x1.d=3 mxcsr={mx} m32")
    print(f"addsd xmm0, xmm1 ; x0.d=1 x1=0:3ca0000000000001 mxcsr={mx} m32")
    print(f"sqrtsd xmm0, xmm1 ; x1.d=2 mxcsr={mx} m32")
    print(f"mulps xmm0, xmm1 ; {ps_init(groups4[3])} mxcsr={mx} m32")
for op in ('addsub', 'hadd', 'hsub'):
    for g in groups4:
        print(f"{op}ps xmm0, xmm1 ; {ps_init(g)} m32")
    for g in groups2:
        print(f"{op}pd xmm0, xmm1 ; {pd_init(g)} m32")
    print(f"{op}ps xmm0, xmm1 ; {ps_init(groups4[1])} mxcsr=1f00")
    print(f"{op}pd xmm0, [rdi] ; {pd_init(groups2[0])} rdi=D+0x18 m32")
for imm in (0xff, 0x31, 0x5a, 0xa5, 0x7f):
    for g in (groups4[0], groups4[1], groups4[3]):
        print(f"dpps xmm0, xmm1, {imm:#x} ; {ps_init(g)} m32")
for imm in (0x33, 0x31, 0x12, 0x30):
    for g in (groups2[0], groups2[1], groups2[4]):
        print(f"dppd xmm0, xmm1, {imm:#x} ; {pd_init(g)} m32")
# compares
for p in list(range(8)) + [0x1d]:
    for g in groups4:
        print(f"cmpps xmm0, xmm1, {p} ; {ps_init(g)} m32")
    for g in groups2[:3]:
        print(f"cmppd xmm0, xmm1, {p} ; {pd_init(g)} m32")
    print(f"cmpss xmm0, xmm1, {p} ; {ps_init(groups4[1])} m32")
    print(f"cmpsd xmm0, xmm1, {p} ; {pd_init(groups2[2])} m32")
for g in (groups4[1], groups4[3], groups4[4]):
    print(f"cmpps xmm0, xmm1, 1 ; {ps_init(g)} mxcsr=9fc0")
    print(f"cmpps xmm0, xmm1, 1 ; {ps_init(g)} mxcsr=1f00")
    print(f"cmpps xmm0, xmm1, 0 ; {ps_init(g)} mxcsr=1e80")
print(f"cmpss xmm0, dword ptr [rdi], 2 ; {ps_init(groups4[0])} rdi=D+3 m32")
print(f"cmpps xmm0, [rdi], 2 ; {ps_init(groups4[0])} rdi=D+8 m32")
for a, b in pairs:
    for op in ('comiss', 'ucomiss'):
        print(f"{op} xmm0, xmm1 ; x0=0:{F[a]:08x} x1=0:{F[b]:08x} flags=8d5 m32")
    for op in ('comisd', 'ucomisd'):
        print(f"{op} xmm0, xmm1 ; x0=0:{D[a]:016x} x1=0:{D[b]:016x} flags=8d5 m32")
print(f"comiss xmm0, xmm1 ; x0=0:{F['qnan']:08x} x1=0:{F['one']:08x} mxcsr=1f00 flags=8d5 m32")
print(f"ucomisd xmm0, xmm1 ; x0=0:{D['snan']:016x} x1=0:{D['one']:016x} mxcsr=1f00 flags=8d5 m32")
print(f"comisd xmm0, xmm1 ; x0=0:{D['den']:016x} x1=0:{D['one']:016x} mxcsr=1fc0 flags=8d5 m32")
print(f"ucomiss xmm0, dword ptr [rdi] ; x0.f=1 rdi=D+1 m32")
# round
rvals = [0x3fc00000, 0x40200000, 0xbfc00000, 0xc0200000, 0x3f000000, 0xbf000000, 0x3f400000, 0x4b7fffff,
         0x4b000001, 0x3e800000, 0x00000001, 0x80000001, 0x7fc00001, 0x7f800002, 0xff800000, 0x80000000,
         0x4effffff, 0x3f800000]
for imm in (0, 1, 2, 3, 4, 9, 12):
    for i in range(0, len(rvals), 4):
        v = (rvals[i:i + 4] + [0, 0, 0])[:4]
        print(f"roundps xmm0, xmm1, {imm} ; {xf(1, v)} mxcsr=3f80 m32")
    print(f"roundss xmm0, xmm1, {imm} ; x0=11:22 {xf(1, rvals[1:5])} m32")
rvd = [0x3ff8000000000000, 0x4004000000000000, 0xbff8000000000000, 0xc004000000000000, 0x3fe0000000000000,
       0xbfe0000000000000, 0x433fffffffffffff, 0x4330000000000001, 0x1, 0x8000000000000001, 0x7ff0000000000002,
       0xfff0000000000000]
for imm in (0, 1, 2, 3, 4, 10):
    for i in range(0, len(rvd), 2):
        print(f"roundpd xmm0, xmm1, {imm} ; {xd(1, rvd[i:i + 2])} mxcsr=5f80 m32")
    print(f"roundsd xmm0, xmm1, {imm} ; x0=11:22 {xd(1, rvd[2:4])} m32")
print(f"roundpd xmm0, xmm1, 2 ; {xd(1, rvd[8:10])} mxcsr=1fc0 m32")
print(f"roundps xmm0, xmm1, 0 ; {xf(1, rvals[0:4])} mxcsr=0f80 m32")
print(f"roundps xmm0, xmm1, 8 ; {xf(1, rvals[0:4])} mxcsr=0f80 m32")
print(f"roundss xmm0, xmm1, 0 ; {xf(1, [0x7f800002, 0, 0, 0])} mxcsr=1f00 m32")
print(f"roundsd xmm0, qword ptr [rdi], 1 ; rdi=D+3 m32")
