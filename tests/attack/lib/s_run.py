"""s_run.py - the surfaces that run a guest program: mutated real ELFs
(`elf`), random code in a minimal ELF (`code`) and kernel-entry probes under
every kernel configuration (`kernel`, which also drives `exposure` and
`explain`)."""
import os

from . import elfmut, kprobe, x86
from .common import STALLED_PIPE, Job, RUN_ERRORS, TOOL_STATUSES

PATCHES = ['dfe6450', 'fa69714', 'ebeb8c8', '6dc936f']
MITIGATIONS = ['pti', 'retpoline', 'ibrs', 'nospec', 'no-pti', 'no-nospec', 'none', 'all']
ELF_SOURCES = ['asm_hello', 'asm_exit42', 'c64_freestanding', 'i386_freestanding',
               'x32_freestanding', 'musl_hello', 'musl_hello_pie', 'glibc_hello',
               'glibc_hello_pie', 'i386_glibc_hello', 'x32_glibc_compute']


def kernel_opts(rng):
    """--convention / --patches / --mitigations / --cpu, any combination."""
    o = []
    k = rng.random()
    if k < 0.3:
        o += ['--convention', rng.choice(['v4.16', 'v4.17'])]
    elif k < 0.6:
        o += ['--patches', ','.join(rng.sample(PATCHES, rng.randrange(0, 5)))]
    if rng.random() < 0.5:
        o += ['--mitigations', ','.join(rng.sample(MITIGATIONS, rng.randrange(1, 3)))]
    if rng.random() < 0.5:
        o += ['--cpu', rng.choice(['intel', 'amd'])]
    return o


def run_opts(rng, direct_p=0.15):
    """A random configuration of `entrysim run` (the kernel is the default)."""
    o = []
    direct = rng.random() < direct_p
    if direct:
        o.append('--direct')
        if rng.random() < 0.3:
            o += ['--cpu', rng.choice(['intel', 'amd'])]
    else:
        o += kernel_opts(rng)
        if rng.random() < 0.1:
            o += ['--stats', '--kernel-stats']
    if rng.random() < 0.15:
        o += ['--timing', '--uarch', rng.choice(['znver4', 'skylake'])]
    if rng.random() < 0.1:
        o.append('--stats')
    if rng.random() < 0.2:
        o.append('--deterministic')
    if rng.random() < 0.05:
        o.append('--null-observer')
    if rng.random() < 0.08:
        o += ['--mem-cap', str(rng.choice([1, 2, 4, 16, 64]))]
    return o


def random_args(rng):
    k = rng.random()
    if k < 0.7:
        return [rng.choice(['a', 'b c', '-x', '', '--', '%s%n', 'é']) for _ in range(rng.randrange(0, 4))]
    if k < 0.85:
        return ['x' * rng.choice([1000, 65536, 131071])]
    return [str(i) for i in range(rng.choice([200, 2000]))]


def write_prog(sb, data, name='prog'):
    p = os.path.join(sb.cwd, name)
    with open(p, 'wb') as f:
        f.write(data)
    os.chmod(p, 0o755)
    return p


def run_job(ctx, rng, sb, prog, extra, args, note, *, timeout=None, rw=None, stdin=None,
            allowed=None, need_msg=()):
    """`entrysim run --timeout S --root ROOT [extra] PROG ARGS`; a hang is
    the run still going at S + 1 s."""
    t = timeout or ctx.run_timeout
    rw = rng.random() < 0.3 if rw is None else rw
    # a stdin that never delivers, a stdout nobody reads: --timeout must
    # still end the run (the guest blocks in a host read or write)
    stall = False
    if stdin is None and rng.random() < 0.05:
        stdin = STALLED_PIPE
    elif stdin is None and rng.random() < 0.03:
        stall = True
    wrap = [ctx.noopenat2] if ctx.noopenat2 and rng.random() < 0.2 else []
    argv = wrap + [ctx.es, 'run', '--timeout', str(t), '--root', sb.root] + (['--rw'] if rw else [])
    argv += extra + ['--', prog] + args
    return Job(argv, watchdog=t + 1.0 + ctx.startup_slack, allowed=allowed, need_msg=need_msg,
               rw=rw, stdin=stdin, stall_stdout=stall,
               note=note + (' [stdin: stalled pipe]' if stdin == STALLED_PIPE else '') +
               (' [stdout: not read]' if stall else ''))


class ElfSurface:
    name, base = 'elf', 825

    def prepare(self, ctx):
        self.sources = {}
        for n in ELF_SOURCES + ['sysloop64', 'sysloop32']:
            p = ctx.build_file('guest', n) or ctx.build_file('bench', n)
            if p:
                with open(p, 'rb') as f:
                    self.sources[n] = f.read()
        self.names = sorted(self.sources)
        return None if self.sources else 'no guest programs in the build tree'

    def make(self, ctx, i, rng, sb):
        src = rng.choice(self.names)
        data, what = elfmut.mutate(rng, self.sources[src])
        prog = write_prog(sb, data)
        note = f'{src}: {what}'
        if rng.random() < 0.2:
            # the debugger also reads the section headers (.symtab)
            script = os.path.join(sb.cwd, 'script.txt')
            cmds = ['break main', 'break _start', 'break _start+4', 'step 20', 'print regs',
                    'breaks', 'step 200', 'x rsp 64', 'reverse 5', 'print status', 'step 1000']
            with open(script, 'w') as f:
                f.write('\n'.join(rng.sample(cmds, rng.randrange(2, len(cmds)))) + '\n')
            argv = [ctx.es, 'debug', '--script', script] + kernel_opts(rng) + ['--', prog]
            return Job(argv, watchdog=ctx.tool_watchdog, allowed=TOOL_STATUSES, need_msg={1, 2},
                       note='debug ' + note)
        return run_job(ctx, rng, sb, prog, run_opts(rng), random_args(rng), note)


class CodeSurface:
    name, base = 'code', 900

    def prepare(self, ctx):
        return None

    def make(self, ctx, i, rng, sb):
        blob, mode, what = x86.random_program(rng)
        prog = write_prog(sb, blob)
        extra = run_opts(rng, direct_p=0.25)
        if rng.random() < 0.7:
            extra += ['--max-insns', str(rng.choice([1000, 100000, 2000000]))]
        return run_job(ctx, rng, sb, prog, extra, [], f'{mode}: {what}')


EXPOSE_ENTRIES = ['syscall64', 'int80', 'sysenter32', 'syscall32', 'x32', 'vsyscall', 'bogus']
EXPOSE_NAMES = ['read', 'write', 'getpid', 'gettimeofday', 'time', 'getcpu', 'clone', 'execve',
                'recv', 'mmap', 'ioctl', 'rt_sigreturn', 'exit', 'io_submit', 'futex', 'nosuch',
                '', 'read\n', 'a' * 300, '0', '-1', 'sys_read', '__x64_sys_read']


class KernelSurface:
    """~150 probe programs x 4 configurations each, plus exposure/explain."""
    name, base = 'kernel', 600

    def prepare(self, ctx):
        return None

    def paths(self, sb):
        return ['hello.txt', '/', '..', '../outside/' + sb.secret_name, sb.host_outside_path(),
                'abs_secret', 'rel_secret', 'abs_dir/' + sb.secret_name, 'dang_abs', 'sub/deep',
                '/proc/self/root' + sb.host_outside_path(), 'hostroot' + sb.host_outside_path(),
                'newfile', '../outside/victim.txt', 'sub/up/victim.txt', '']

    def make(self, ctx, i, rng, sb):
        if rng.random() < 0.25:
            return self.tool_job(ctx, rng)
        # the program depends on i // 4 only: the same probe under 4 configurations
        prng = ctx.rng('kernel-prog', i // 4)
        blob, what = kprobe.build(prng, self.paths(sb))
        prog = write_prog(sb, blob)
        return run_job(ctx, rng, sb, prog, run_opts(rng, direct_p=0.1), [], what,
                       allowed=None)

    def tool_job(self, ctx, rng):
        if rng.random() < 0.7:
            argv = [ctx.es, 'exposure']
            argv += ['--syscall', rng.choice(EXPOSE_NAMES)] if rng.random() < 0.97 else ['--all']
            if rng.random() < 0.8:
                argv += ['--entry', rng.choice(EXPOSE_ENTRIES)]
            argv += kernel_opts(rng)
            if rng.random() < 0.2:
                argv += ['--timing', '--uarch', rng.choice(['znver4', 'skylake', 'none', 'x'])]
            if rng.random() < 0.3:
                argv.append('--json')
        else:
            argv = [ctx.es, 'explain', rng.choice(EXPOSE_NAMES)]
            argv += kernel_opts(rng)[:2]
            if rng.random() < 0.3:
                argv += ['--syntax', rng.choice(['intel', 'att', 'x'])]
        return Job(argv, watchdog=ctx.tool_watchdog, allowed=TOOL_STATUSES, need_msg={1, 2},
                   note=' '.join(argv[1:4]))


def run_statuses_with_message():
    """For programs whose own exit statuses are known: entrysim's must come
    with a line on stderr."""
    return RUN_ERRORS
