D = dict(den=0x1, den2=0x000fffffffffffff, minn=0x0010000000000000, half=0x3fe0000000000000,
         tenth=0x3fb999999999999a, three=0x4008000000000000, big=0x7fefffffffffffff, two=0x4000000000000000,
         p1023=0x7fe0000000000000, onep5=0x3ff8000000000000, tinyish=0x0020000000000001, one=0x3ff0000000000000,
         m3=0xc008000000000000, p600=0x6570000000000000, n600=0x1a70000000000000)
F = dict(den=0x1, den2=0x007fffff, minn=0x00800000, half=0x3f000000, tenth=0x3dcccccd, three=0x40400000,
         big=0x7f7fffff, two=0x40000000, p127=0x7f000000, onep5=0x3fc00000, tinyish=0x01000001, one=0x3f800000,
         m3=0xc0400000, p60=0x5d800000, n60=0x21800000)
combos = [('mul', 'den', 'den'), ('mul', 'minn', 'half'), ('mul', 'minn', 'tenth'), ('mul', 'tinyish', 'half'),
          ('div', 'den', 'three'), ('div', 'minn', 'two'), ('div', 'one', 'big'), ('add', 'den', 'den2'),
          ('sub', 'minn', 'den'), ('mul', 'big', 'big'), ('mul', 'p1023', 'two'), ('mul', 'p1023', 'onep5'),
          ('div', 'big', 'half'), ('div', 'one', 'den'), ('add', 'big', 'big'), ('mul', 'n600', 'n600'),
          ('div', 'p600', 'n600'), ('div', 'n600', 'p600'), ('mul', 'p600', 'p600'), ('div', 'm3', 'den')]
for mx in ('1780', '1b80', '1380', '9780', '1f80'):
    for op, a, b in combos:
        print(f"{op}sd xmm0, xmm1 ; x0=5:{D[a]:016x} x1=6:{D[b]:016x} mxcsr={mx} m32")
        fa = {'p1023': 'p127', 'n600': 'n60', 'p600': 'p60'}.get(a, a)
        fb = {'p1023': 'p127', 'n600': 'n60', 'p600': 'p60'}.get(b, b)
        print(f"{op}ss xmm0, xmm1 ; x0=5:{F[fa]:08x} x1=6:{F[fb]:08x} mxcsr={mx} m32")
    for v in (0x3690000000000000, 0x3690000000000001, 0x36a0000000000000, 0x380fffffe0000000, 0x47f0000000000000,
              0x47efffffe0000000, 0x47efffffff000000, 0x0000000000000001):
        print(f"cvtsd2ss xmm0, xmm1 ; x0=5:7 x1=6:{v:016x} mxcsr={mx} m32")
print(f"mulps xmm0, xmm1 ; x0={F['big']:08x}{F['minn']:08x}:{F['one']:08x}{F['tenth']:08x} x1={F['two']:08x}{F['half']:08x}:{F['three']:08x}{F['three']:08x} mxcsr=1380 m32")
print(f"mulpd xmm0, xmm1 ; x0={D['minn']:016x}:{D['one']:016x} x1={D['half']:016x}:{D['three']:016x} mxcsr=1780 m32")
print(f"mulpd xmm0, xmm1 ; x0={D['minn']:016x}:{D['one']:016x} x1={D['half']:016x}:{D['three']:016x} mxcsr=0780 m32")
