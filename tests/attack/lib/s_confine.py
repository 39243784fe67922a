"""s_confine.py - confinement probes: the probe program (probe.c, one build
per ABI) run under `entrysim run --root T/root`, trying to read, list, stat,
create, change or delete what lies outside the root: `..` in every
spelling, absolute host paths, /proc/self/root, symlinks planted in the root
(absolute, relative, dangling, to /, to /proc, loops) and symlinks, hard
links, renames and O_TMPFILE files the guest makes itself, directory fds
(O_PATH, fchdir, openat), and the fds it inherits (stdin a directory or a
file outside the root, raw fd numbers it never opened)."""
import os
import subprocess

from .common import STALLED_PIPE, Job, RUN_ERRORS
from .s_run import run_opts

O_RDONLY, O_WRONLY, O_RDWR, O_CREAT, O_EXCL, O_TRUNC = 0, 1, 2, 0o100, 0o200, 0o1000
O_DIRECTORY, O_NOFOLLOW, O_PATH, O_TMPFILE = 0o200000, 0o400000, 0o10000000, 0o20200000
AT_SYMLINK_FOLLOW, AT_EMPTY_PATH, AT_REMOVEDIR = 0x400, 0x1000, 0x200
FLAVOURS = {   # name: compiler command (the output and source are appended)
    'x86-64 glibc': ['gcc', '-static', '-O1'],
    'i386 glibc': ['gcc', '-m32', '-static', '-O1'],
    'x32 glibc': ['gcc', '-mx32', '-static', '-O1'],
    'x86-64 musl': ['musl-gcc', '-static', '-O1'],
}


def build_probes(src, outdir):
    """Compiles probe.c once per ABI the host toolchain can build."""
    got = {}
    for name, cc in FLAVOURS.items():
        out = os.path.join(outdir, 'probe-' + name.replace(' ', '-'))
        if not os.path.exists(out):
            r = subprocess.run(cc + ['-o', out, src], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
            if r.returncode:
                continue
        got[name] = out
    return got


def build_noopenat2(src, outdir):
    """The seccomp wrapper that takes openat2 away (None if it cannot be built)."""
    out = os.path.join(outdir, 'noopenat2')
    if not os.path.exists(out):
        r = subprocess.run(['gcc', '-O1', '-o', out, src], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        if r.returncode:
            return None
    return out


def forms(sb, name):
    """Spellings of T/outside/NAME as seen from inside the root."""
    host = os.path.join(sb.outside, name)
    rel = '../outside/' + name
    return [rel, '../../outside/' + name, '/../outside/' + name, '/..//../outside/./' + name,
            'sub/../../outside/' + name, 'sub/deep/../../../outside/' + name, './' + rel,
            '//' + rel, '/sub/deep/../../../../outside/' + name, host, host.replace('/', '//'),
            '/proc/self/root' + host, '/proc/self/cwd/' + rel, 'abs_dir/' + name,
            'rel_dir/' + name, 'sub/up/' + name, 'hostroot' + host, 'proc/self/root' + host,
            'cwd_link/' + rel, '../' * 40 + host.lstrip('/'), 'loop/' + name,
            '/' + '/'.join(['..'] * 8) + host, 'abs_dir/./../outside/' + name,
            'sub/up/../outside/' + name]


class Gen:
    """Draws the steps of one probe."""

    def __init__(self, rng, sb, rw):
        self.rng, self.sb, self.rw = rng, sb, rw
        self.stdin = None

    def path(self, name):
        return self.rng.choice(forms(self.sb, name))

    def secret(self):
        r = self.rng.random()
        if r < 0.15:
            return self.rng.choice(['abs_secret', 'rel_secret', 'cwd_link/canary.txt',
                                    'abs_dir/dir-%s/inner.txt' % self.sb.name_tok])
        return self.path(self.sb.secret_name)

    def read_steps(self):
        r, s = self.rng, self.secret()
        dirs = [self.path('dir-' + self.sb.name_tok), self.path(''), '..', '/..', 'abs_dir',
                'rel_dir', 'sub/up', 'hostroot', '/proc/self/root', 'cwd_link']
        k = r.randrange(14)
        if k == 0:
            return [f'cat|{s}']
        if k == 1:
            return [f'open|1|{s}|{r.choice([0, O_NOFOLLOW, O_PATH, O_RDWR])}|0', 'read|1', 'mmap|1']
        if k == 2:
            return [f'ls|{r.choice(dirs)}']
        if k == 3:
            return [f'{r.choice(["stat", "lstat", "oldstat"])}|{r.choice(dirs + [s])}']
        if k == 4:   # a directory fd, then a path relative to it
            d = r.choice(['/', '..', 'sub', 'abs_dir', 'rel_dir', 'sub/up', 'hostroot'])
            fl = r.choice([O_DIRECTORY, O_PATH | O_DIRECTORY, O_PATH])
            rel = r.choice(['../outside/' + self.sb.secret_name, self.sb.secret_name, '..',
                            '../../outside/' + self.sb.secret_name, s])
            return [f'open|1|{d}|{fl}|0', f'openat|2|s1|{rel}|0', 'read|2', 'getdents|s1',
                    'fstat|s1', f'fstatat|s1|..|0']
        if k == 5:   # fchdir / chdir upwards, then relative paths
            d = r.choice(['/', '..', 'sub/deep', 'abs_dir', 'sub/up', 'hostroot'])
            return [f'open|1|{d}|{O_DIRECTORY}|0', 'fchdir|s1'] + ['chdir|..'] * r.randrange(1, 5) + \
                   ['getcwd', 'ls|.', f'cat|outside/{self.sb.secret_name}', f'cat|{s}']
        if k == 6:   # a symlink the guest makes
            if not self.rw:
                return [f'symlink|{s}|mine', 'cat|mine']
            t = r.choice([s, self.path(''), '/proc/self/root', '..'])
            return [f'symlink|{t}|mine', 'cat|mine', 'ls|mine', 'stat|mine', 'readlink|mine',
                    f'cat|mine/{self.sb.secret_name}', f'cat|mine/outside/{self.sb.secret_name}']
        if k == 7:   # a hard link to something outside
            fl = r.choice([0, AT_SYMLINK_FOLLOW])
            return [f'linkat|cwd|{r.choice(["abs_secret", "rel_secret", s])}|cwd|hl|{fl}', 'cat|hl']
        if k == 8:   # renames of planted links, then through them
            return [f'rename|{r.choice(["abs_dir", "rel_dir", "sub/up", "abs_secret"])}|x',
                    f'cat|x/{self.sb.secret_name}', 'cat|x', 'ls|x']
        if k == 9:   # stdin: a directory outside the root
            self.stdin = self.sb.stdin_dir
            return r.choice([
                [f'openat|1|r0|../outside/{self.sb.secret_name}|0', 'read|1'],
                ['fchdir|r0', f'cat|../outside/{self.sb.secret_name}', 'getcwd', 'ls|..'],
                [f'openat|1|r0|..|{O_DIRECTORY}', 'getdents|s1', 'fstat|s1'],
                ['getdents|r0', 'fstat|r0', f'fstatat|r0|..|0', f'fstatat|r0||{AT_EMPTY_PATH}'],
                [f'linkat|r0|../outside/{self.sb.secret_name}|cwd|hl|0', 'cat|hl']])
        if k == 10:  # fds the guest never opened (the host's own fds are 3, 4...)
            fd = r.choice(['r3', 'r4', 'r5', 'r6', 'r7', 'r10', 'r255', 'r1023', 'r-1', 'r-100'])
            return r.choice([[f'openat|1|{fd}|{r.choice([self.sb.secret_name, "..", "../outside/" + self.sb.secret_name])}|0', 'read|1'],
                             [f'getdents|{fd}'], [f'fstat|{fd}'], [f'read|{fd}'], [f'fchdir|{fd}', 'ls|.'],
                             [f'fstatat|{fd}|..|0'], [f'sendfile|r1|{fd}|4096']])
        if k == 11:  # /proc-style views
            return [f'readlink|{r.choice(["/proc/self/fd/0", "/proc/self/cwd", "/proc/self/root", "proc", "abs_secret", "hostroot"])}',
                    f'cat|{r.choice(["/proc/self/environ", "/proc/self/maps", "/proc/self/mounts", "proc/self/fd/0", "/etc/passwd", "hostroot/etc/hostname"])}']
        if k == 12:  # long and odd spellings
            return [f'cat|{"/" * r.randrange(1, 5000)}{s}', f'cat|{"./" * r.randrange(1, 3000)}{s}',
                    f'stat|{"../" * r.randrange(1, 2000)}']
        return [f'sendfile|r1|s1|4096', f'open|1|{s}|0|0', 'sendfile|r1|s1|4096']

    def write_steps(self):
        r, sb = self.rng, self.sb
        v, c, d = self.path('victim.txt'), self.path(sb.created_name), self.path('dir-' + sb.name_tok)
        opts = [
            [f'put|{v}|pwned'], [f'creat|{c}'], [f'unlink|{v}'], [f'rename|{v}|stolen'],
            [f'rename|hello.txt|{c}'], [f'mkdir|{c}'], [f'rmdir|{d}'], [f'truncate|{v}|0'],
            [f'chmod|{v}|511'], [f'chown|{v}'], [f'utimes|{v}'], [f'mknod|{c}'],
            [f'link|{v}|hl', 'put|hl|pwned'], [f'link|hello.txt|{c}'], [f'symlink|x|{c}'],
            [f'open|1|{r.choice(["dang_abs", "dang_rel"])}|{O_WRONLY | O_CREAT}|0', 'write|1|pwned'],
            [f'open|1|{r.choice(["dang_abs", "dang_rel"])}|{O_WRONLY | O_CREAT | O_EXCL}|0'],
            [f'renameat2|cwd|abs_dir|cwd|sub|2', 'put|sub/victim.txt|pwned', 'unlink|abs_dir/victim.txt'],
            [f'renameat2|cwd|rel_secret|cwd|hello.txt|2', 'put|hello.txt|pwned'],
            [f'unlinkat|cwd|{d}|{AT_REMOVEDIR}'], [f'unlinkat|cwd|{v}|0'],
            [f'open|1|/|{O_TMPFILE | O_RDWR}|0', 'write|1|pwned', f'linkat|s1||cwd|{c}|{AT_EMPTY_PATH}'],
            [f'open|1|{v}|{O_RDWR}|0', 'write|1|pwned', 'ftruncate|1|0', 'mmapw|1|pwned'],
            [f'fchmodat|cwd|{v}|511'], [f'open|1|{v}|{O_PATH}|0', 'fchmod|s1|511', 'fchown|s1', 'futimens|s1'],
            [f'mkdirat|cwd|{c}'], [f'symlinkat|{v}|cwd|{c}'],
            [f'open|1|abs_dir|{O_PATH | O_DIRECTORY}|0', f'openat|2|s1|victim.txt|{O_WRONLY | O_TRUNC}',
             f'unlinkat|s1|victim.txt|0', f'mkdirat|s1|{sb.created_name}'],
        ]
        if r.random() < 0.25:   # stdin: a file outside the root
            self.stdin = os.path.join(sb.stdin_dir, 'stdin.txt')
            return r.choice([['fchmod|r0|511'], ['fchown|r0'], ['futimens|r0'], ['ftruncate|r0|0'],
                             ['write|r0|pwned'], [f'linkat|r0||cwd|stolen|{AT_EMPTY_PATH}', 'put|stolen|pwned'],
                             ['mmapw|r0|pwned'], ['fstat|r0']])
        return r.choice(opts)

    def steps(self):
        out = []
        for _ in range(self.rng.choice([1, 1, 2, 3])):
            out += self.read_steps() if self.rng.random() < 0.6 else self.write_steps()
        return out


class ConfineSurface:
    name, base = 'confine', 3000

    def prepare(self, ctx):
        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        self.probes = build_probes(os.path.join(here, 'probe.c'), ctx.bindir)
        self.names = sorted(self.probes)
        return None if self.probes else 'no compiler builds probe.c'

    def make(self, ctx, i, rng, sb):
        flavour = rng.choice(self.names)
        rw = rng.random() < 0.7    # without --rw every write stops at EROFS
        g = Gen(rng, sb, rw)
        steps = g.steps()
        extra = run_opts(rng, direct_p=0.3)
        # 40%: as on a host kernel without openat2 (before 5.6), where
        # entrysim walks the path itself
        wrap = [ctx.noopenat2] if ctx.noopenat2 and rng.random() < 0.4 else []
        argv = wrap + [ctx.es, 'run', '--timeout', str(ctx.run_timeout), '--root', sb.root]
        argv += (['--rw'] if rw else []) + extra + ['--', self.probes[flavour]] + steps
        if g.stdin is None and rng.random() < 0.05:
            g.stdin = STALLED_PIPE
        return Job(argv, watchdog=ctx.run_timeout + 1.0 + ctx.startup_slack,
                   allowed={0, 10, 11} | RUN_ERRORS, need_msg=RUN_ERRORS - {1},
                   stdin=g.stdin, rw=rw, probe=True,
                   note=f'{flavour}{" --rw" if rw else ""}{" (no openat2)" if wrap else ""}: ' +
                   ' '.join(steps)[:300])
