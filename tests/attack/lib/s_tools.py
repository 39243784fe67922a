"""s_tools.py - the subcommands that take data rather than a program:
`throughput` (hex blocks), `measure-native` (hex blocks run natively in a
sandboxed child: random ones and crafted ones that store through
RIP-derived pointers into the harness, move the stack pointer, use FS/GS,
set TF, change PKRU...), `bench` (random and mutated matrices) and the
command line of every subcommand (`cli`)."""
import os
import struct

from . import x86
from .common import Job, RUN_ERRORS, TOOL_STATUSES
from .s_run import write_prog

HEXCHARS = '0123456789abcdefABCDEF'


def lea_rip(reg, disp):
    """lea reg64, [rip+disp]"""
    return bytes([0x48 | (reg >> 3 << 2), 0x8d, 0x05 | (reg & 7) << 3]) + struct.pack('<i', disp)


PAYLOADS = [0x050f, 0xfeeb, 0xc3, 0x050f050f, 0xcccccccc, 0x00000000, 0xffffffff, 0x0b0f]


def crafted_block(rng):
    """A block the refusal rules cannot see through: stores through pointers
    taken from RIP, stack games, segment-relative accesses, flag tricks."""
    d = rng.choice([rng.randrange(-0x4000, 0x4000), rng.randrange(-64, 64) * 8,
                    0x1000 - 7, -0x1000, 0x2000, rng.randrange(0, 0x100000)])
    imm = struct.pack('<I', rng.choice(PAYLOADS))
    k = rng.randrange(12)
    if k == 0:   # lea rax,[rip+d]; mov dword [rax], imm
        return lea_rip(0, d) + b'\xc7\x00' + imm
    if k == 1:   # lea rax,[rip+d]; mov [rax], rbx  (rbx = R)
        return lea_rip(0, d) + b'\x48\x89\x18'
    if k == 2:   # lea rax,[rip]; add rax, d; mov qword [rax+8], imm
        return lea_rip(0, 0) + b'\x48\x05' + struct.pack('<i', d) + b'\x48\xc7\x40\x08' + imm
    if k == 3:   # the stack pointer moved onto the harness, then pushes
        return lea_rip(4, d) + b'\x50\x53\x51'
    if k == 4:   # stack pointer from the pattern / swapped / popped
        return rng.choice([b'\x48\x89\xc4\x50', b'\x48\x94\x50', b'\x5c\x50', b'\x48\x87\x20',
                           b'\x48\x81\xc4\x00\x00\x00\x40\x50', b'\x48\x31\xe4\x50'])
    if k == 5:   # FS/GS-relative loads and stores
        return rng.choice([b'\x64\x48\x8b\x04\x25\x00\x00\x00\x00', b'\x64\x48\x89\x04\x25\x08\x00\x00\x00',
                           b'\x65\x48\x8b\x04\x25\x00\x00\x00\x00', b'\x64\x48\x8b\x00',
                           b'\x64\x48\x89\x18', b'\x65\x48\x89\x18', b'\xf3\x48\x0f\xae\xd0',
                           b'\xf3\x48\x0f\xae\xc0', b'\x64\xa4'])
    if k == 6:   # TF / AC / DF through the flags
        return rng.choice([b'\x9c\x48\x81\x0c\x24\x00\x01\x00\x00\x9d',
                           b'\x9c\x48\x81\x0c\x24\x00\x00\x04\x00\x9d\x8b\x40\x01',
                           b'\xfd\x48\xa5', b'\x9c\x58\x0d\x00\x01\x00\x00\x50\x9d'])
    if k == 7:   # faults: #DE, #GP on MXCSR/XRSTOR, PKRU, privileged
        return rng.choice([b'\x31\xc9\x48\xf7\xf1', b'\x0f\xae\x10', b'\x0f\xae\x28', b'\x0f\xae\x08',
                           b'\x31\xc9\x31\xd2\xb8\x0c\x00\x00\x00\x0f\x01\xef', b'\x0f\x01\xee',
                           b'\xf4', b'\x0f\x20\xd8', b'\xfa', b'\x0f\x01\xf8', b'\x62\xf1\x7c\x48\x10\x00',
                           b'\x48\x63\xc0\x48\x8b\x04\xc5\x00\x00\x00\x80'])
    if k == 8:   # RIP-relative store (refused) and ones hidden behind prefixes
        return rng.choice([b'\x48\x89\x05' + struct.pack('<i', d), b'\x66\x89\x05' + struct.pack('<i', d),
                           b'\xf0\x48\x01\x05' + struct.pack('<i', d), b'\x0f\x11\x05' + struct.pack('<i', d)])
    if k == 9:   # enter/leave and big stack frames
        return rng.choice([b'\xc8\xff\xff\x1f', b'\xc9', b'\x48\x81\xec\x00\x00\x10\x00\x50'])
    if k == 10:  # waits
        return rng.choice([b'\xf3\x90', b'\x66\x0f\xae\xf0', b'\xf2\x0f\xae\xf0', b'\x0f\xa2', b'\x0f\x31'])
    return x86.soup(rng, 64, rng.randrange(1, 4)) + lea_rip(1, d) + b'\x48\x89\x01'


def random_block(rng):
    k = rng.random()
    if k < 0.4:
        return x86.soup(rng, 64, rng.randrange(1, 12))
    if k < 0.55:
        return rng.randbytes(rng.randrange(1, 40))
    return crafted_block(rng)


def hex_text(rng, block):
    """The hex of a block, sometimes malformed."""
    h = block.hex()
    k = rng.random()
    if k < 0.8:
        return h
    return rng.choice([h[:-1], h.upper(), ' '.join(h[i:i + 2] for i in range(0, len(h), 2)),
                       '0x' + h, h + 'g', '', '-' + h, h + '\t1.0', 'é' + h, h * 200,
                       ''.join(rng.choice(HEXCHARS + 'xz -') for _ in range(rng.randrange(1, 64)))])


class ThroughputSurface:
    name, base = 'throughput', 210    # runs of 1-20 blocks: ~391 blocks

    def prepare(self, ctx):
        return None

    def make(self, ctx, i, rng, sb):
        argv = [ctx.es, 'throughput']
        if rng.random() < 0.8:
            argv += ['--uarch', rng.choice(['znver4', 'skylake'] * 8 + ['none', '', 'x' * 300])]
        if rng.random() < 0.3:
            argv.append('--stats')
        n = rng.choices([1, 3, 20], [85, 10, 5])[0]
        blocks = [hex_text(rng, random_block(rng)) for _ in range(n)]
        if rng.random() < 0.3:
            path = os.path.join(sb.cwd, 'blocks.txt')
            with open(path, 'w') as f:
                f.write('\n'.join(blocks) + rng.choice(['\n', '', '\n\n#x\n']))
            argv += ['--file', path]
        else:
            argv += ['--'] + blocks if rng.random() < 0.05 else blocks
        return Job(argv, count=len(blocks), watchdog=ctx.tool_watchdog, allowed=TOOL_STATUSES,
                   need_msg={1, 2}, note=' '.join(blocks)[:200])


class MeasureNativeSurface:
    name, base = 'measure-native', 112   # runs of 1-4 blocks: ~201 blocks

    def prepare(self, ctx):
        return None if os.uname().machine == 'x86_64' else 'not an x86-64 host'

    def make(self, ctx, i, rng, sb):
        n = rng.choice([1, 1, 1, 2, 4])
        blocks = [hex_text(rng, crafted_block(rng) if rng.random() < 0.6 else random_block(rng))
                  for _ in range(n)]
        path = os.path.join(sb.cwd, 'blocks.txt')
        with open(path, 'w') as f:
            f.write('\n'.join(blocks) + '\n')
        t = 2.0
        argv = [ctx.es, 'measure-native', '--file', path, '--reps', str(rng.choice([1, 2, 3])),
                '--tries', '2', '--timeout', str(t)]
        if rng.random() < 0.3:
            argv.append('--json')
        # --timeout is per block: each block's child may take it in full
        return Job(argv, count=n, watchdog=n * t + 1.0 + ctx.startup_slack + n * 0.5,
                   allowed=TOOL_STATUSES, need_msg={1, 2}, note=' '.join(blocks)[:200])


AXES = {
    'kernels': ['v4.16', 'v4.17', 'dfe6450', 'dfe6450,fa69714', 'ebeb8c8', '6dc936f', 'bogus', ''],
    'conventions': ['v4.16', 'v4.17', 'v5'],
    'patches': ['ebeb8c8', 'fa69714', 'dfe6450,6dc936f', '0000000'],
    'entries': ['syscall64', 'int80', 'sysenter32', 'syscall32', 'x32', 'vsyscall', 'nope'],
    'mitigations': ['none', 'nospec', 'pti', 'pti,retpoline', 'all', 'ibrs', 'no-pti', 'x'],
    'syscalls': ['getpid', 'read', 'write', 'getppid', 'gettimeofday', 'time', 'getcpu', 'execve'],
    'uarch': ['znver4', 'skylake', 'k6'],
    'cpu': ['intel', 'amd', 'via'],
    'workloads': ['sysloop', 'sieve', 'missing'],
}


def toml_value(rng, v):
    if isinstance(v, list):
        return '[' + ', '.join(f'"{x}"' for x in v) + rng.choice(['', ',', ' ,\n']) + ']'
    return f'"{v}"'


def valid_matrix(rng, name):
    """A matrix with at most 4 cells that actually runs."""
    lines = ['[matrix]', f'name = "{name}"']
    budget = 4
    for axis in rng.sample(sorted(AXES), rng.randrange(0, 4)):
        vals = [v for v in AXES[axis][:3] if v not in ('v5', 'bogus', '')]
        take = rng.sample(vals, min(len(vals), rng.randrange(1, 3), budget))
        budget //= len(take)
        if axis == 'workloads':
            take = ['sysloop']
        lines.append(f'{axis} = {toml_value(rng, take)}')
    lines.append(f'iterations = {rng.choice([1, 10, 50])}')
    return '\n'.join(lines) + '\n'


JUNK_LINES = ['[[matrix]]', 'x = 1.5', 'name = \'single\'', 'a.b = "c"', 'iterations = 0',
              'iterations = 99999999999999999999', 'iterations = -1', 'kernels = [', '"unterminated',
              'kernels = ["v4.16" "v4.17"]', '[workload.w]', 'program = "/bin/sh"',
              'program = "sieve_hash"', 'args = ["{iterations}", "{entry}", "{nope}"]',
              'entries = ["syscall64"]', '[unknown]', 'name = "\\u0000"', 'name = "a\\qb"',
              'cpu = {intel = true}', 'name = "' + 'n' * 5000 + '"', '\x00\x01\x02', '@BADBYTES@',
              'description = """x"""', 'iterations = 1_000', 'iterations = 0x10', '= "v"', '[matrix',
              'name = "../../escaped"', 'name = "/tmp/abs"', 'name = "a/b"', 'name = ""']


def junk_matrix(rng, base):
    lines = base.split('\n')
    for _ in range(rng.choices([1, 2, 3, 4], [60, 25, 10, 5])[0]):
        k = rng.random()
        if k < 0.4:
            lines.insert(rng.randrange(len(lines) + 1), rng.choice(JUNK_LINES))
        elif k < 0.6 and lines:
            del lines[rng.randrange(len(lines))]
        elif k < 0.8 and lines:
            i = rng.randrange(len(lines))
            s = lines[i]
            j = rng.randrange(len(s) + 1)
            lines[i] = s[:j] + rng.choice(['"', '[', ']', '=', '#', ',', '\\', '\n', '']) + s[j + 1:]
        elif lines:
            lines.insert(rng.randrange(len(lines)), lines[rng.randrange(len(lines))])
    return '\n'.join(lines)


class BenchSurface:
    name, base = 'bench', 394

    def prepare(self, ctx):
        self.shipped = []
        d = os.path.join(ctx.source, 'bench', 'matrices')
        for n in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            with open(os.path.join(d, n)) as f:
                self.shipped.append(f.read())
        return None if ctx.build_file('bench', 'sysloop64') else 'bench workloads not built'

    def make(self, ctx, i, rng, sb):
        path = os.path.join(sb.cwd, 'm.toml')
        run = rng.random() < 0.35
        cell_t = 5
        if run:
            text = valid_matrix(rng, rng.choice(['m', 'm-%d' % i]))
        elif rng.random() < 0.5 and self.shipped:
            text = junk_matrix(rng, rng.choice(self.shipped))
        else:
            text = junk_matrix(rng, valid_matrix(rng, 'j'))
        with open(path, 'wb') as f:
            f.write(text.encode().replace(b'@BADBYTES@', b'\xff\xfe\x00\x80'))
        argv = [ctx.es, 'bench', '--matrix', path, '--timeout', str(cell_t), '-j', '2']
        if not run:
            argv.append('--list')
        if rng.random() < 0.5:
            argv += ['--out', os.path.join(sb.cwd, 'out')]
        if rng.random() < 0.1:
            argv += ['--runner', rng.choice(['/bin/false', '/nonexistent', sb.cwd])]
        if rng.random() < 0.05:
            argv += ['--workloads', rng.choice([sb.cwd, '/nonexistent'])]
        if rng.random() < 0.2:
            argv.append('--verbose')
        return Job(argv, watchdog=(4 * (cell_t + 1) if run else 0) + ctx.tool_watchdog,
                   allowed=TOOL_STATUSES, need_msg={1, 2}, host_writes_cwd=True,
                   note=('run: ' if run else 'list: ') + text.replace('\n', '; ')[:200])


# --- the command line of every subcommand --------------------------------

NUMS = ['0', '1', '2', '-1', '1e308', 'nan', 'inf', '0x10', '99999999999999999999', 'x', '',
        '3.5', '1e-9', ' 5', '5 ', '+1']


def cli_argv(ctx, rng, sb):
    """-> (argv, watchdog, allowed)"""
    prog = rng.choice([ctx.build_file('guest', 'asm_hello'), ctx.build_file('guest', 'asm_exit42'),
                       '/nonexistent', sb.cwd, os.path.join(sb.cwd, 'prog')])
    k = rng.randrange(9)
    if k == 0:
        opts = [['--convention', rng.choice(['v4.16', 'v4.17', 'v4', ''])],
                ['--patches', rng.choice(['', 'dfe6450', 'dfe', 'zzzzzzz', 'dfe6450,dfe6450', ','])],
                ['--mitigations', rng.choice(['pti', 'no-x', 'all,none', ',', 'pti,' * 50])],
                ['--uarch', rng.choice(['znver4', 'skylake', '', '../x'])], ['--timing'],
                ['--timing-json', rng.choice([os.path.join(sb.cwd, 't.json'), '/nonexistent/x', sb.cwd])],
                ['--direct'], ['--stats'], ['--kernel-stats'], ['--null-observer'], ['--deterministic'],
                ['--max-insns', rng.choice(NUMS)], ['--mem-cap', rng.choice(NUMS)],
                ['--root', rng.choice([sb.root, '/nonexistent', os.path.join(sb.root, 'hello.txt'), ''])],
                ['--rw'], ['--cpu', rng.choice(['intel', 'amd', 'arm'])],
                ['--gdb', rng.choice([':99999', 'abc', ':', ':-5', '1.2.3.4.5:1', 'host:port'])],
                ['--timeout', rng.choice(NUMS)], ['--bogus'], ['-'], ['--stats=1']]
        argv = ['run'] + [x for o in rng.sample(opts, rng.randrange(0, 6)) for x in o]
        argv += ['--timeout', '2', prog] if rng.random() < 0.9 else []
        return argv, 3.0 + ctx.startup_slack, None
    if k == 1:
        opts = [['--reps', rng.choice(NUMS[:8] + ['3'])], ['--tries', rng.choice(NUMS[:8] + ['2'])],
                ['--noisy-pct', rng.choice(NUMS)], ['--timeout', rng.choice(['0', '-1', '1', 'nan', 'x', '0.001'])],
                ['--json'], ['--file', rng.choice(['/nonexistent', sb.cwd, os.path.join(sb.cwd, 'blocks.txt'), ''])],
                ['--bogus']]
        with open(os.path.join(sb.cwd, 'blocks.txt'), 'w') as f:
            f.write('4801d8\n')
        return ['measure-native'] + [x for o in rng.sample(opts, rng.randrange(0, 5)) for x in o], \
            ctx.tool_watchdog, TOOL_STATUSES
    if k == 2:
        opts = [['--uarch', rng.choice(['skylake', 'x'])], ['--stats'], ['--file', rng.choice(['/nonexistent', sb.cwd, '-'])],
                ['4801d8'], ['--'], ['zz'], ['--bogus']]
        return ['throughput'] + [x for o in rng.sample(opts, rng.randrange(0, 5)) for x in o], \
            ctx.tool_watchdog, TOOL_STATUSES
    if k == 3:
        opts = [['--matrix', rng.choice(['/nonexistent', sb.cwd, ''])], ['--out', rng.choice(['', '/nonexistent/x'])],
                ['-j', rng.choice(NUMS)], ['--timeout', rng.choice(NUMS)], ['--runner', '/nonexistent'],
                ['--workloads', ''], ['--list'], ['--verbose'], ['--bogus'], ['-v']]
        return ['bench'] + [x for o in rng.sample(opts, rng.randrange(0, 5)) for x in o], \
            ctx.tool_watchdog, TOOL_STATUSES
    if k == 4:
        script = os.path.join(sb.cwd, 's.txt')
        with open(script, 'w') as f:
            f.write('step 3\nprint regs\n')
        opts = [['--size', rng.choice(['320x200', '8192x8192', '0x0', '319x200', 'axb', '99999999999x1', '640x480x'])],
                ['--font-size', rng.choice(['0', '1', '13', '200', '-1', 'x', '1e9'])],
                ['--syntax', rng.choice(['att', 'intel', 'x'])], ['--break', rng.choice(['_start', 'nosuch', '', '0x0'])],
                ['--screenshot', rng.choice([os.path.join(sb.cwd, 'x.png'), '/nonexistent/x.png', sb.cwd])],
                ['--timing'], ['--uarch', rng.choice(['skylake', 'x'])], ['--direct'], ['--bogus'],
                ['--convention', 'v4.16'], ['--patches', 'zz'], ['--cpu', 'intel']]
        argv = ['debug'] + [x for o in rng.sample(opts, rng.randrange(0, 5)) for x in o]
        return argv + ['--script', script, prog], ctx.tool_watchdog, TOOL_STATUSES
    if k == 5:
        return ['exposure'] + rng.choice([[], ['--syscall'], ['--all', '--syscall', 'read'], ['--entry', 'int80'],
                                          ['--syscall', 'read', '--entry'], ['--syscall', 'read', '--uarch', 'none', '--timing'],
                                          ['--syscall', 'read', '--mitigations', 'pti,x'], ['--syscall', 'read', 'extra']]), \
            ctx.tool_watchdog, TOOL_STATUSES
    if k == 6:
        return ['explain'] + rng.choice([[], ['read', 'write'], ['--syntax'], ['read', '--syntax', 'x'],
                                         ['read', '--patches', ''], ['--convention', 'v4.16']]), \
            ctx.tool_watchdog, TOOL_STATUSES
    if k == 7:
        return rng.choice([['--help'], ['--version'], ['-h'], ['demo'], ['demo', 'x'], ['nosuch'], ['-'],
                           ['--'], [''], ['--help', 'run'], ['run', '--help'], ['bench', '--help'],
                           ['debug', '--help'], ['measure-native', '--help']]), \
            ctx.tool_watchdog, TOOL_STATUSES
    argv = [rng.choice(['run', 'debug', 'bench', 'throughput', 'measure-native', 'exposure', 'explain'])]
    argv += ['--' + ''.join(rng.choice('abcdefghijklmnopqrstuvwxyz-=') for _ in range(rng.randrange(1, 12)))
             for _ in range(rng.randrange(1, 4))]
    if argv[0] == 'run':
        argv += ['--timeout', '2', prog]
        return argv, 3.0 + ctx.startup_slack, None
    return argv, ctx.tool_watchdog, TOOL_STATUSES


class CliSurface:
    name, base = 'cli', 300

    def prepare(self, ctx):
        return None

    def make(self, ctx, i, rng, sb):
        hello = ctx.build_file('guest', 'asm_hello')
        if hello:
            with open(hello, 'rb') as f:
                write_prog(sb, f.read())
        argv, wd, allowed = cli_argv(ctx, rng, sb)
        return Job([ctx.es] + argv, watchdog=wd, allowed=allowed,
                   need_msg=({1, 2} if allowed else RUN_ERRORS),
                   host_writes_cwd=True, note=' '.join(argv)[:200])
