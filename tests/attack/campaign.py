#!/usr/bin/env python3
"""campaign.py - the attack campaign of issue 12: generates inputs for every
surface of entrysim deterministically from a seed, runs each under a
wall-clock watchdog in a sandbox of its own, and counts per surface the
runs that ended cleanly, crashed the host process, tripped a sanitizer,
hung past --timeout + 1 s or escaped the guest root.  Exits 1 when any of
the bad classes is non-zero.  Usage and method: tests/attack/README.md.

    tests/attack/campaign.py --entrysim build/release/entrysim            # default scale
    tests/attack/campaign.py --entrysim build/release/entrysim --scale 1  # the earlier attacker's counts
    tests/attack/campaign.py --entrysim ... --only confine:17             # one input again
"""
import argparse
import collections
import concurrent.futures
import os
import re
import shlex
import shutil
import sys
import tempfile
import time

sys.dont_write_bytecode = True    # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib.common import BAD, Sandbox, classify, execute, rng_for, snapshot_diff  # noqa: E402
from lib.s_confine import ConfineSurface, build_noopenat2  # noqa: E402
from lib.s_debug import DebugSurface  # noqa: E402
from lib.s_gdb import GdbSurface  # noqa: E402
from lib.s_run import CodeSurface, ElfSurface, KernelSurface  # noqa: E402
from lib.s_tools import BenchSurface, CliSurface, MeasureNativeSurface, ThroughputSurface  # noqa: E402

SURFACES = [ElfSurface, CodeSurface, KernelSurface, ConfineSurface, ThroughputSurface,
            MeasureNativeSurface, BenchSurface, DebugSurface, GdbSurface, CliSurface]
DEFAULT_SCALE = 1.0
HERE = os.path.dirname(os.path.abspath(__file__))


class Context:
    def __init__(self, a):
        self.es = os.path.abspath(a.entrysim)
        self.build = os.path.abspath(a.build or os.path.dirname(self.es))
        self.source = os.path.dirname(os.path.dirname(HERE))
        self.seed = a.seed
        self.work = a.work
        self.bindir = os.path.join(self.work, 'bin')
        self.jobs_dir = os.path.join(self.work, 'jobs')
        self.findings = a.findings
        self.keep = a.keep
        self.show = a.show
        with open(self.es, 'rb') as f:
            self.asan = b'__asan_init' in f.read()
        # sanitizer builds run several times slower: fixed watchdogs (not
        # the --timeout + 1 s contract) and the gdb waits scale with it
        self.mult = 4.0 if self.asan else 1.0
        self.run_timeout = a.run_timeout
        self.startup_slack = a.slack
        # `throughput` of a 4 KiB block can take half a minute (fsin x 2048:
        # 28 s), `debug` steps ~0.4 M instructions a second
        self.tool_watchdog = 60.0 * self.mult
        self.env = dict(os.environ)
        self.env.setdefault('ASAN_OPTIONS', 'detect_leaks=1')
        self.env.setdefault('UBSAN_OPTIONS', 'print_stacktrace=1')
        os.makedirs(self.bindir, exist_ok=True)
        self.noopenat2 = build_noopenat2(os.path.join(HERE, 'noopenat2.c'), self.bindir)
        os.makedirs(self.jobs_dir, exist_ok=True)

    def rng(self, surface, index, salt=''):
        return rng_for(self.seed, surface, index, salt)

    def build_file(self, sub, name):
        p = os.path.join(self.build, sub, name)
        return p if os.path.isfile(p) else None


class Outcome:
    def __init__(self, surface, index, cls, why, count, elapsed, note, rc, err):
        self.surface, self.index, self.cls, self.why = surface, index, cls, why
        self.count, self.elapsed, self.note, self.rc = count, elapsed, note, rc
        # the simulator's own message: its first line that is not a report
        lines = [x for x in err.split(b'\n') if x.startswith(b'entrysim:') and not
                 re.match(rb'entrysim: (gdb: listening|stats:|timing:)', x)] if err else []
        self.err_line = lines[0][:160].decode('latin-1') if lines else ''
        self.meta = ''             # metadata of the stdin file changed (not an escape)
        self.cmd = ''              # the subcommand


def run_one(ctx, surf, i, retry=True):
    sb = Sandbox(ctx.jobs_dir, f'{surf.name}-{i}', ctx.rng(surf.name, i, 'sandbox'))
    job = surf.make(ctx, i, ctx.rng(surf.name, i), sb)
    forbidden = sb.forbidden_inodes() if job.probe else set()
    before = sb.snapshot(job)
    if job.interact:
        res = job.interact(job, sb, ctx)
    else:
        res = execute(job.argv, sb.cwd, job.stdin, job.watchdog, ctx.env, job.stall_stdout)
    after = sb.snapshot(job)
    cls, why = classify(job, sb, res, before, after, forbidden)
    meta = snapshot_diff(before, after, meta=True)
    if cls == 'hang' and retry:
        # a loaded machine can delay a run: count it only if it hangs again
        sb.remove()
        again = run_one(ctx, surf, i, retry=False)
        if again.cls != 'hang':
            again.why = (again.why + '; ' if again.why else '') + \
                f'overrun not reproduced (first run: {why})'
        return again
    if cls in BAD:
        save_finding(ctx, surf, i, job, sb, res, cls, why)
    if not ctx.keep:
        sb.remove()
    if ctx.show:
        print(f'--- {surf.name}:{i} {cls} {why}\n$ {shlex.join(job.argv)}\nstatus {res.rc}, '
              f'{res.elapsed:.2f} s\nstdout: {res.out[:1500]!r}\nstderr: {res.err[:1500]!r}'
              + (f'\nreplies: {res.extra[:1500]!r}' if res.extra else ''), flush=True)
    o = Outcome(surf.name, i, cls, why, job.count, res.elapsed, job.note, res.rc, res.err)
    o.meta = '; '.join(meta)
    o.cmd = job.argv[1] if len(job.argv) > 1 else ''
    return o


def save_finding(ctx, surf, i, job, sb, res, cls, why):
    d = os.path.join(ctx.findings, f'seed{ctx.seed}-{surf.name}-{i}')
    if os.path.exists(d):
        shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(sb.t, os.path.join(d, 'sandbox'), symlinks=True,
                    ignore=shutil.ignore_patterns('stdout', 'stderr'))
    argv = []
    for a in job.argv:
        if a.startswith(ctx.work + os.sep) and not a.startswith(sb.t + os.sep) and os.path.isfile(a):
            # a program of the campaign's own (the confinement probe): keep a copy
            os.makedirs(os.path.join(d, 'bin'), exist_ok=True)
            a = shutil.copy2(a, os.path.join(d, 'bin'))
        argv.append(a.replace(sb.t, os.path.join(d, 'sandbox')))
    stdin = (job.stdin or '/dev/null').replace(sb.t, os.path.join(d, 'sandbox'))
    with open(os.path.join(d, 'result.txt'), 'w') as f:
        f.write(f'class: {cls}\nwhy: {why}\nexit status: {res.rc}\nelapsed: {res.elapsed:.2f} s\n'
                f'watchdog: {job.watchdog:.1f} s\nstdin: {stdin}\n'
                f'input: {job.note}\n\n'
                f'command (cwd {os.path.join(d, "sandbox", "cwd")}):\n  {shlex.join(argv)}\n\n'
                f'regenerate: {sys.executable} {os.path.abspath(__file__)} --entrysim {ctx.es} '
                f'--seed {ctx.seed} --only {surf.name}:{i} --keep\n')
    for name, data in (('stdout', res.out), ('stderr', res.err), ('replies', res.extra)):
        if data:
            with open(os.path.join(d, name), 'wb') as f:
                f.write(data)


def selftest(ctx):
    """The classification must see what it is there to see: fake commands
    that crash, read the canary, write outside the root, hang, report a
    sanitizer error or exit with an undocumented status.  -> failures"""
    from lib.common import Job, TOOL_STATUSES
    cases = [
        ('kill -SEGV $$', 'crash', {}), ('exit 3', 'crash', {'allowed': TOOL_STATUSES}),
        ('exit 1', 'crash', {'allowed': TOOL_STATUSES, 'need_msg': {1}}),
        ('cat canary.txt', 'escape', {}), ('echo x >> ../outside/victim.txt', 'escape', {}),
        ('touch ../root/new', 'escape', {}), ('touch ../root/new', 'clean', {'rw': True}),
        ('sleep 5', 'hang', {'watchdog': 0.5}),
        ('echo "==1==ERROR: AddressSanitizer: heap-use-after-free" >&2; exit 1', 'sanitizer', {}),
        ('echo error: nope; exit 1', 'clean', {'allowed': TOOL_STATUSES, 'need_msg': {1}}),
        ('exit 0', 'clean', {'allowed': TOOL_STATUSES}),
    ]
    bad = []
    for i, (cmd, want, kw) in enumerate(cases):
        sb = Sandbox(ctx.jobs_dir, f'selftest-{i}', ctx.rng('selftest', i))
        job = Job(['sh', '-c', cmd], **kw)
        before = sb.snapshot(job)
        res = execute(job.argv, sb.cwd, None, job.watchdog, ctx.env)
        got, why = classify(job, sb, res, before, sb.snapshot(job), set())
        if got != want:
            bad.append(f'{cmd!r}: {got} ({why}), expected {want}')
        sb.remove()
    return bad


def count_for(surf, scale, overrides):
    if surf.name in overrides:
        return overrides[surf.name]
    return max(1, round(surf.base * scale))


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--entrysim', required=True, help='the entrysim binary (release or ASan build)')
    p.add_argument('--build', help='its build tree (default: the directory of --entrysim)')
    p.add_argument('--seed', type=int, default=1)
    p.add_argument('--scale', type=float, default=DEFAULT_SCALE,
                   help=f'inputs = base count x scale (default {DEFAULT_SCALE}; 1 = the earlier '
                        'attacker\'s counts)')
    p.add_argument('--count', action='append', default=[], metavar='SURFACE=N',
                   help='inputs for one surface, whatever the scale')
    p.add_argument('--surfaces', help='comma-separated subset (default: all)')
    p.add_argument('--only', help='SURFACE:I[,SURFACE:I...]: just these inputs')
    p.add_argument('-j', '--jobs', type=int, default=os.cpu_count() or 2)
    p.add_argument('--run-timeout', type=float, default=2.0,
                   help='the --timeout given to every `entrysim run` (default 2 s)')
    p.add_argument('--slack', type=float, default=0.0,
                   help='seconds added to every --timeout + 1 s watchdog (default 0)')
    p.add_argument('--work', help='scratch directory (default: a new one under $TMPDIR)')
    p.add_argument('--findings', default='/tmp/attack_findings',
                   help='where bad inputs are saved (default /tmp/attack_findings)')
    p.add_argument('--keep', action='store_true', help='keep every sandbox')
    p.add_argument('-v', '--verbose', action='store_true', help='a line per bad or notable run')
    p.add_argument('--show', action='store_true', help='print every run: command, status, output')
    p.add_argument('--selftest', action='store_true',
                   help='only check that the classification flags fake bad runs (--smoke does it too)')
    p.add_argument('--smoke', action='store_true',
                   help='the ctest smoke mode: the self-test, then scale 0.02 with 6 gdb sessions')
    a = p.parse_args(argv)
    a.overrides = {}
    if a.smoke:
        # every surface, about 2% of the inputs, under a minute on 2 cores
        a.scale = 0.02
        a.overrides['gdb'] = 6
    for c in a.count:
        name, _, n = c.partition('=')
        a.overrides[name] = int(n)
    return a


def select(a, surfaces):
    """-> [(surface, [indices])]"""
    if a.only:
        want = collections.defaultdict(list)
        for item in a.only.split(','):
            name, _, i = item.partition(':')
            want[name].append(int(i))
        return [(s, want[s.name]) for s in surfaces if s.name in want]
    names = set(a.surfaces.split(',')) if a.surfaces else None
    return [(s, list(range(count_for(s, a.scale, a.overrides)))) for s in surfaces
            if names is None or s.name in names]


def run_surface(ctx, surf, indices, jobs, verbose):
    out = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futs = [pool.submit(run_one, ctx, surf, i) for i in indices]
        for f in concurrent.futures.as_completed(futs):
            o = f.result()
            out.append(o)
            if verbose and (o.cls != 'clean' or 'not reproduced' in o.why):
                print(f'  {o.cls.upper()} {o.surface}:{o.index}: {o.why} [{o.note[:150]}]', flush=True)
    return out


def table(rows):
    head = ['surface', 'inputs', 'runs', 'clean', 'crashes', 'sanitizer', 'hangs', 'escapes', 'secs']
    lines = [head]
    tot = [0] * 7
    for name, res, secs in rows:
        c = collections.Counter(o.cls for o in res)
        vals = [sum(o.count for o in res), len(res), c['clean'], c['crash'], c['sanitizer'],
                c['hang'], c['escape']]
        tot = [x + y for x, y in zip(tot, vals)]
        lines.append([name] + [str(v) for v in vals] + [f'{secs:.0f}'])
    lines.append(['total'] + [str(v) for v in tot] + [f'{sum(r[2] for r in rows):.0f}'])
    w = [max(len(r[i]) for r in lines) for i in range(len(head))]
    return '\n'.join('  '.join(r[i].rjust(w[i]) if i else r[i].ljust(w[i]) for i in range(len(head)))
                     for r in lines), tot


def notes(results):
    """What is worth a look although it is not a failure."""
    n = []
    over = [o for o in results if 'not reproduced' in o.why]
    if over:
        n.append(f'{len(over)} watchdog overrun(s) not reproduced on a second run: ' +
                 ', '.join(f'{o.surface}:{o.index}' for o in over[:10]))
    status1 = collections.Counter(o.err_line for o in results
                                  if o.cls == 'clean' and o.rc == 1 and o.err_line.startswith('entrysim:')
                                  and o.cmd == 'run' and o.surface != 'gdb')
    for line, k in status1.most_common(6):
        n.append(f'{k} run(s) ended with status 1 (simulator error): {line}')
    slow = sorted((o for o in results if o.cls == 'clean' and o.elapsed > 10), key=lambda o: -o.elapsed)
    if slow:
        n.append(f'{len(slow)} clean run(s) took over 10 s: ' +
                 ', '.join(f'{o.surface}:{o.index} {o.elapsed:.0f} s' for o in slow[:8]))
    meta = [o for o in results if o.meta]
    if meta:
        n.append(f'{len(meta)} run(s) changed the metadata (mode, times, owner, links) of the '
                 'file or directory given as stdin, through fd 0 (allowed with --rw: the guest holds that fd), e.g. ' + f'{meta[0].surface}:{meta[0].index}')
    usage = [o for o in results if o.surface == 'confine' and o.rc == 11]
    if usage:
        n.append(f'{len(usage)} confinement probe(s) refused their own steps (status 11)')
    return n


def main(argv=None):
    a = parse_args(argv if argv is not None else sys.argv[1:])
    tmp = None
    if not a.work:
        tmp = a.work = tempfile.mkdtemp(prefix='es-attack-')
    ctx = Context(a)
    if a.smoke or a.selftest:
        bad = selftest(ctx)
        print('selftest: ' + ('; '.join(bad) if bad else 'the classification sees crashes, escapes, '
                              'hangs and sanitizer reports'), flush=True)
        if bad:
            return 3
        if a.selftest:
            return 0
    surfaces = [cls() for cls in SURFACES]
    plan = select(a, surfaces)
    print(f'entrysim: {ctx.es}{" (ASan build)" if ctx.asan else ""}; seed {a.seed}, scale {a.scale}, '
          f'{a.jobs} workers, run --timeout {ctx.run_timeout} s', flush=True)
    rows, results = [], []
    t0 = time.monotonic()
    for surf, indices in plan:
        skip = surf.prepare(ctx)
        if skip:
            print(f'{surf.name}: skipped ({skip})', flush=True)
            continue
        t = time.monotonic()
        res = run_surface(ctx, surf, indices, a.jobs, a.verbose)
        secs = time.monotonic() - t
        rows.append((surf.name, res, secs))
        results += res
        if a.verbose:
            st = collections.Counter(o.rc for o in res)
            print(f'  exit statuses: ' + ', '.join(f'{k}: {v}' for k, v in st.most_common(12)))
        bad = collections.Counter(o.cls for o in res if o.cls != 'clean')
        print(f'{surf.name}: {len(res)} runs in {secs:.0f} s' +
              (', ' + ', '.join(f'{v} {k}' for k, v in sorted(bad.items())) if bad else ''),
              flush=True)
    text, tot = table(rows)
    print('\n' + text)
    for line in notes(results):
        print('note: ' + line)
    bad = sum(tot[3:7])
    print(f'\n{len(results)} runs in {time.monotonic() - t0:.0f} s; ' +
          (f'{bad} bad, inputs saved under {a.findings}' if bad else 'no crash, sanitizer report, '
           'hang or escape'))
    for o in sorted((o for o in results if o.cls in BAD), key=lambda o: (o.surface, o.index))[:40]:
        print(f'  {o.cls.upper()} {o.surface}:{o.index}: {o.why}')
    if tmp and not a.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
