"""s_debug.py - debugger scripts (`entrysim debug --script FILE PROG`):
every command of docs/DEBUGGER.md with valid, boundary and nonsense
arguments, breakpoints on user and kernel symbols, reverse execution,
restarts under other kernels, screenshots; the script stops at its first
error, so most lines are well-formed and the odd ones come late."""
import os

from .common import Job, TOOL_STATUSES
from .s_run import kernel_opts

# short programs only (under 60 k instructions): the debugger steps about
# 0.4 M instructions a second, so c64_freestanding (17 M) and
# i386_freestanding (5 M) would make `continue` take a minute
PROGS = ['asm_hello', 'asm_exit42', 'x32_freestanding', 'musl_hello', 'glibc_hello',
         'glibc_hello_pie', 'i386_glibc_hello']
# symbols every program has (the guest kernel's, _start) and addresses
SYMS = ['_start', '_start+0x10', 'do_syscall_64', 'entry_SYSCALL_64', 'entry_INT80_compat',
        'entry_SYSENTER_compat', 'entry_SYSCALL_compat', 'do_int80_syscall_32',
        'do_fast_syscall_32', 'do_syscall_64+0x1',
        '0x400000', '0x401000', '0xffffffff81000000', '0xffffffff81000080', '0x0',
        '0xffffffffffffffff', '0x800000000000', 'rsp', 'rip', 'rax', 'rdi', 'r15']
ODD_SYMS = ['main', 'nosuch', '_start+-1', '_start+99999999999', '+', '0x', '-1', '1e9', '$rsp',
            'write', 'sys_write', '', 'A' * 5000, '0x1ffffffffffffffff', 'rsp+8']
REGS = ['rax', 'rbx', 'rcx', 'rdx', 'rsi', 'rdi', 'rbp', 'rsp', 'r8', 'r11', 'r15', 'rip', 'rflags',
        'eax', 'edi', 'cs', 'ss', 'cpl', 'regs', 'ptregs', 'taint', 'exposure', 'status', 'output']
GPRS = ['rax', 'rbx', 'rcx', 'rdx', 'rsi', 'rdi', 'rbp', 'rsp', 'r8', 'r15', 'rip']
ODD_REGS = ['eflags', 'ax', 'al', 'cr3', 'efer', 'xmm0', 'st0', 'fs_base', 'nosuch', '', 'r16']
COUNTS = ['', '1', '2', '5', '17', '100', '1000', '5000']
ODD_COUNTS = ['0', '-1', '18446744073709551615', '99999999999999999999', 'abc', '0x10', '1e3',
              '1 2 3']
SIZES = ['', '1', '16', '64', '4096']
ODD_SIZES = ['0', '-1', '4097', '99999999999', 'x']
RUNS_TO_END = ('continue', 'c', 'until', 'finish', 'kentry', 'kexit', 'syscall')


def command(rng, shots, odd):
    """One command; odd: with a boundary or nonsense argument (the script
    stops at the first error, so odd commands come last)."""
    c = rng.choice
    sym = c(ODD_SYMS) if odd else c(SYMS)
    n = c(ODD_COUNTS) if odd else c(COUNTS)
    k = rng.choices(range(15), [30, 6, 3, 3, 5, 2, 8, 4, 8, 6, 5, 4, 3, 4, 1])[0]
    return [
        lambda: c(['step', 's', 'si']) + (' ' + n if n else ''),
        lambda: c(['next', 'n']),
        lambda: c(['finish', 'continue', 'c', 'until ' + sym]),
        lambda: c(['syscall', 'kentry', 'kexit']),
        lambda: c(['break ', 'b ']) + sym,
        lambda: c(['delete ', 'd ']) + c(['0', '-1', '99', 'x', '']) if odd else 'breaks',
        lambda: 'reverse' + (' ' + n if n else '') if rng.random() < 0.7 else c(['rstep', 'rs']),
        lambda: c(['rcontinue', 'rc']),
        lambda: 'print ' + (c(ODD_REGS) if odd else c(REGS)),
        lambda: c(['print mem ', 'x ']) + sym + ' ' + (c(ODD_SIZES) if odd else c(SIZES)),
        lambda: 'mem ' + (sym if rng.random() < 0.5 else c(ODD_REGS if odd else GPRS)),
        lambda: 'syntax ' + (c(['x', '', 'intel att']) if odd else c(['intel', 'att'])),
        lambda: 'restart ' + ' '.join(c([['--direct'], ['--patches', 'zz'], ['--cpu'], ['--bogus', 'x'],
                                         ['--mitigations', 'x']]) if odd else kernel_opts(rng)),
        lambda: 'screenshot ' + c(shots[1:] if odd else shots[:1]),
        lambda: c(['step 1 2 3', 'break', 'x', 'print', 'until', 'STEP 1', 'step\x00 1', 'é',
                   'x rsp 64 extra', 'quit now']) if odd else c(['help', '# comment', '', '   ', '\tstep']),
    ][k]()


def script_lines(rng, shots):
    lines = []
    for _ in range(rng.randrange(3, 40)):
        line = command(rng, shots, odd=False)
        if line.startswith('screenshot') and rng.random() < 0.7:
            continue            # keep screenshots rare: they cost time
        lines.append(line)
        if line.split(' ')[0] in RUNS_TO_END and rng.random() < 0.9:
            # the program may have ended: go back, or start again
            lines.append(rng.choice(['reverse 50', 'rcontinue', 'restart'] +
                                    ['restart ' + ' '.join(kernel_opts(rng))]))
    if rng.random() < 0.6:
        lines.append(command(rng, shots, odd=True))
    return lines


class DebugSurface:
    name, base = 'debug', 397

    def prepare(self, ctx):
        self.progs = [p for p in (ctx.build_file('guest', n) for n in PROGS) if p]
        return None if self.progs else 'no guest programs'

    def make(self, ctx, i, rng, sb):
        shots = [os.path.join(sb.cwd, 'shot.png'), '/nonexistent/dir/x.png', sb.cwd, '']
        lines = script_lines(rng, shots)
        script = os.path.join(sb.cwd, 'script.txt')
        with open(script, 'wb') as f:
            f.write('\n'.join(lines).encode() + rng.choice([b'\n', b'', b'\r\n', b'\n\x00']))
        argv = [ctx.es, 'debug', '--script', script] + kernel_opts(rng)
        if rng.random() < 0.15:
            argv += ['--timing', '--uarch', rng.choice(['znver4', 'skylake'])]
        if rng.random() < 0.2:
            argv += ['--break', rng.choice(SYMS if rng.random() < 0.8 else ODD_SYMS)]
        if rng.random() < 0.1:
            argv += ['--syntax', 'att']
        if rng.random() < 0.05:
            argv += ['--size', '320x200', '--screenshot', os.path.join(sb.cwd, 'end.png')]
        argv += ['--', rng.choice(self.progs)] + rng.choice([[], ['a'], ['a', 'b c']])
        return Job(argv, watchdog=ctx.tool_watchdog, allowed=TOOL_STATUSES, need_msg={1, 2},
                   host_writes_cwd=True, note=' | '.join(lines)[:300])
