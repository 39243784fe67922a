#!/usr/bin/env python3
"""Reads lines `asm ; init` and writes `hex ; asm ; init` (assembled by GNU as, Intel syntax)."""
import subprocess, sys, tempfile, os
lines = [l.rstrip('\n') for l in sys.stdin if l.strip() and not l.startswith('#')]
src = '.intel_syntax noprefix\n'
for i, l in enumerate(lines):
    asm = l.split(';')[0].strip()
    src += f'L{i}:\n {asm}\n'
src += f'L{len(lines)}:\n'
with tempfile.TemporaryDirectory() as d:
    open(f'{d}/a.s', 'w').write(src)
    subprocess.run(['as', '--64', '-o', f'{d}/a.o', f'{d}/a.s'], check=True)
    subprocess.run(['objcopy', '-O', 'binary', '-j', '.text', f'{d}/a.o', f'{d}/a.bin'], check=True)
    code = open(f'{d}/a.bin', 'rb').read()
    syms = subprocess.run(['nm', f'{d}/a.o'], capture_output=True, text=True).stdout
addr = {}
for s in syms.split('\n'):
    p = s.split()
    if len(p) == 3 and p[2].startswith('L'):
        addr[int(p[2][1:])] = int(p[0], 16)
# nm may not list local labels; fall back to assembling one by one
if len(addr) < len(lines) + 1:
    addr = None
out = []
for i, l in enumerate(lines):
    asm, init = l.split(';', 1) if ';' in l else (l, '')
    if addr:
        b = code[addr[i]:addr[i + 1]]
    else:
        with tempfile.TemporaryDirectory() as d:
            open(f'{d}/a.s', 'w').write('.intel_syntax noprefix\n' + asm + '\n')
            subprocess.run(['as', '--64', '-o', f'{d}/a.o', f'{d}/a.s'], check=True)
            subprocess.run(['objcopy', '-O', 'binary', '-j', '.text', f'{d}/a.o', f'{d}/a.bin'], check=True)
            b = open(f'{d}/a.bin', 'rb').read()
    out.append(f'{b.hex()} ; {asm.strip()} ; {init.strip()}')
print('\n'.join(out))
