"""common.py - what every surface shares: the per-input random generator,
the sandbox each run gets (guest root, canaries outside it), running a
command under a wall-clock watchdog, and classifying the outcome.

A run is judged by what the host sees, never by what the simulator says
about itself:
  escape     the canary's secret appears in the output, a file outside the
             guest root (or inside it without --rw) changed, or a confinement
             probe listed/stat'ed something outside the root;
  sanitizer  stderr holds an ASan/UBSan/LSan report;
  hang       still running at the watchdog (--timeout + 1 s where the
             command has a --timeout);
  crash      killed by a signal, or an exit status the command does not
             document, or a documented error status without any message;
  clean      everything else.
"""
import hashlib
import os
import random
import selectors
import shutil
import signal
import stat
import subprocess
import time

BAD = ('crash', 'sanitizer', 'hang', 'escape')
SAN_MARKERS = (b'AddressSanitizer', b'runtime error:', b'LeakSanitizer',
               b'UndefinedBehaviorSanitizer')
STDIN_FILE = 'stdin_dir/stdin.txt'   # relative to the sandbox
STALLED_PIPE = '<stalled pipe>'       # Job.stdin: a pipe that never delivers
STDIN_OBJECTS = (STDIN_FILE, 'stdin_dir')
CAP = 1 << 20                    # output kept per stream; the rest is drained
SIG_STATUSES = frozenset(128 + s for s in range(1, 65))
# `entrysim run`: the guest's own 0-255 plus these, each with a message
RUN_ERRORS = frozenset({1, 2, 124, 125, 126, 127, 137}) | SIG_STATUSES
TOOL_STATUSES = frozenset({0, 1, 2})   # every other subcommand


def rng_for(seed, surface, index, salt=''):
    """The generator of one input: the same input for the same seed, surface
    and index whatever the scale, the order or the number of workers."""
    return random.Random(f'{seed}/{surface}/{index}/{salt}')


class Job:
    """One run: a command line and how to judge it."""

    def __init__(self, argv, *, count=1, watchdog=10.0, allowed=None, need_msg=(),
                 stdin=None, rw=False, host_writes_cwd=False, probe=False, interact=None,
                 note='', stall_stdout=False):
        self.argv = argv
        self.count = count            # inputs this run stands for (gdb: packets)
        self.watchdog = watchdog      # seconds of wall time before it is a hang
        self.allowed = allowed        # exit statuses the command documents (None: any)
        self.need_msg = frozenset(need_msg)  # statuses that must come with a message
        self.stdin = stdin            # None: /dev/null, else a host path to open
        self.rw = rw                  # the guest may write under its root
        self.host_writes_cwd = host_writes_cwd  # the tool itself writes in cwd (bench, debug)
        self.probe = probe            # confinement probe: check its D:/I: lines
        self.interact = interact      # gdb: a function(job, sandbox, proc) -> Result
        self.note = note              # a few words on what the input is
        self.stall_stdout = stall_stdout  # stdout: a pipe nobody reads


class Result:
    def __init__(self, rc=None, out=b'', err=b'', elapsed=0.0, hung=False, why=''):
        self.rc, self.out, self.err = rc, out, err
        self.elapsed, self.hung, self.why = elapsed, hung, why
        self.extra = b''              # what else came back (gdb replies)


class Sandbox:
    """T/root (the guest's /), T/outside (canaries), T/cwd (the host cwd and
    the inputs), T/stdin_dir, T/logs.  Symlinks planted in the root point out
    of it in every way a user's directory might."""

    def __init__(self, base, name, rng):
        self.t = os.path.join(base, name)
        if os.path.lexists(self.t):
            shutil.rmtree(self.t)
        tok = '%016x' % rng.getrandbits(64)
        self.name_tok = 'nm%012x' % rng.getrandbits(48)
        self.secret = ('SECRET-' + tok).encode()
        self.secret_name = 'secret-%s.txt' % self.name_tok
        self.created_name = 'created-%s' % self.name_tok
        self.root = os.path.join(self.t, 'root')
        self.outside = os.path.join(self.t, 'outside')
        self.cwd = os.path.join(self.t, 'cwd')
        self.stdin_dir = os.path.join(self.t, 'stdin_dir')
        self.logs = os.path.join(self.t, 'logs')
        self._build()

    def _build(self):
        for d in (self.root, self.outside, self.cwd, self.stdin_dir, self.logs,
                  os.path.join(self.root, 'sub', 'deep'), os.path.join(self.root, 'emptydir'),
                  os.path.join(self.outside, 'dir-' + self.name_tok)):
            os.makedirs(d, exist_ok=True)
        files = {
            os.path.join(self.outside, self.secret_name): self.secret + b'\n',
            os.path.join(self.outside, 'victim.txt'): b'victim\n',
            os.path.join(self.outside, 'dir-' + self.name_tok, 'inner.txt'): self.secret + b'\n',
            os.path.join(self.t, STDIN_FILE): b'stdin data\n',
            os.path.join(self.cwd, 'canary.txt'): self.secret + b'\n',
            os.path.join(self.root, 'hello.txt'): b'hello from the root\n',
            os.path.join(self.root, 'rw.txt'): b'rw\n',
            os.path.join(self.root, 'sub', 'deep', 'file.txt'): b'deep\n',
        }
        for p, b in files.items():
            with open(p, 'wb') as f:
                f.write(b)
        links = {
            'abs_secret': os.path.join(self.outside, self.secret_name),
            'rel_secret': '../outside/' + self.secret_name,
            'abs_dir': self.outside, 'rel_dir': '../outside',
            'sub/up': '../../outside', 'hostroot': '/', 'proc': '/proc', 'loop': 'loop',
            'dang_abs': os.path.join(self.outside, self.created_name),
            'dang_rel': '../outside/' + self.created_name,
            'cwd_link': self.cwd, 'tmp_link': '/tmp',
        }
        for name, target in links.items():
            os.symlink(target, os.path.join(self.root, name))

    def host_outside_path(self):
        return os.path.join(self.outside, self.secret_name)

    def forbidden_inodes(self):
        """(dev, ino) a guest must never see: everything outside its root."""
        ids = set()
        for top in (self.t, self.cwd, '/'):
            st = os.lstat(top)
            ids.add((st.st_dev, st.st_ino))
        for dirpath, dirs, files in os.walk(self.outside):
            for n in [dirpath] + [os.path.join(dirpath, x) for x in dirs + files]:
                st = os.lstat(n)
                ids.add((st.st_dev, st.st_ino))
        return ids

    def snapshot(self, job):
        """Everything under T a run must leave alone: names, types, modes,
        sizes, mtimes, ctimes, link counts, link targets and contents."""
        skip = {self.logs}
        if job.rw:
            skip.add(self.root)
        if job.host_writes_cwd:
            skip.add(self.cwd)
        snap = {}
        for dirpath, dirs, files in os.walk(self.t):
            dirs[:] = [d for d in dirs if os.path.join(dirpath, d) not in skip]
            for n in [dirpath] + [os.path.join(dirpath, x) for x in dirs + files]:
                st = os.lstat(n)
                if os.path.islink(n):
                    what = os.readlink(n)
                elif os.path.isfile(n):
                    with open(n, 'rb') as f:
                        what = hashlib.sha1(f.read(1 << 22)).hexdigest()
                else:
                    what = ''
                rel = os.path.relpath(n, self.t)
                if rel in STDIN_OBJECTS:
                    # what is given as stdin (that file or that directory):
                    # the guest holds an fd to it, and (with --rw) may change
                    # its metadata as a native process could; its contents
                    # and entries must not change (the fd is read-only)
                    snap[rel] = (stat.S_IFMT(st.st_mode), st.st_size if what else 0, what)
                    snap['@meta:' + rel] = (st.st_mode, st.st_mtime_ns, st.st_ctime_ns,
                                            st.st_nlink)
                    continue
                snap[rel] = (st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns,
                             st.st_nlink, what)
        snap['@tmp'] = os.path.lexists(os.path.join('/tmp', self.created_name))
        return snap

    def remove(self):
        # a guest with --rw may leave a directory without write permission
        for dirpath, dirs, _ in os.walk(self.t):
            for d in dirs:
                p = os.path.join(dirpath, d)
                if not os.path.islink(p):
                    try:
                        os.chmod(p, 0o755)
                    except OSError:
                        pass
        shutil.rmtree(self.t, ignore_errors=True)


def snapshot_diff(before, after, meta=False):
    """What changed; meta: only the '@meta:' entries, else all but them."""
    changed = []
    for k in sorted(k for k in set(before) | set(after) if k.startswith('@meta:') == meta):
        if before.get(k) != after.get(k):
            what = 'created' if k not in before else 'deleted' if k not in after else 'changed'
            changed.append(f'{k} {what}')
    return changed


def execute(argv, cwd, stdin, watchdog, env, stall_stdout=False):
    """Runs argv, keeping the first CAP bytes of stdout and stderr; kills its
    process group (its own session) at the watchdog.  stdin: None
    (/dev/null), a path (a directory too) or STALLED_PIPE (a pipe that stays
    open and empty); stall_stdout: stdout is a pipe nobody reads."""
    keep = []
    if stdin == STALLED_PIPE:
        fin, w = os.pipe()
        keep.append(w)
    else:
        fin = os.open(stdin or os.devnull, os.O_RDONLY)
    fout = subprocess.PIPE
    if stall_stdout:
        r, fout = os.pipe()
        keep.append(r)
    start = time.monotonic()
    try:
        p = subprocess.Popen(argv, cwd=cwd, stdin=fin, stdout=fout, stderr=subprocess.PIPE,
                             env=env, start_new_session=True)
    finally:
        os.close(fin)
        if stall_stdout:
            os.close(fout)
    try:
        return collect(p, start, watchdog)
    finally:
        for fd in keep:
            os.close(fd)


def collect(p, start, watchdog):
    bufs = {1: bytearray(), 2: bytearray()}
    sel = selectors.DefaultSelector()
    if p.stdout:
        sel.register(p.stdout, selectors.EVENT_READ, 1)
    sel.register(p.stderr, selectors.EVENT_READ, 2)
    hung = False
    exited_at = None
    while sel.get_map():
        now = time.monotonic()
        if now >= start + watchdog:
            hung = True
            break
        if exited_at is None and p.poll() is not None:
            exited_at = now
        if exited_at is not None and now > exited_at + 2.0:
            break          # a grandchild holds the pipes: the run itself is over
        for key, _ in sel.select(timeout=min(0.2, start + watchdog - now)):
            data = os.read(key.fd, 65536)
            if not data:
                sel.unregister(key.fileobj)
                continue
            b = bufs[key.data]
            if len(b) < CAP:
                b += data[:CAP - len(b)]
    sel.close()
    rc = None
    if not hung:
        try:
            rc = p.wait(timeout=max(0.0, start + watchdog - time.monotonic()))
        except subprocess.TimeoutExpired:
            hung = True
    kill_group(p)
    if hung:
        p.wait()
    if p.stdout:
        p.stdout.close()
    p.stderr.close()
    return Result(rc, bytes(bufs[1]), bytes(bufs[2]), time.monotonic() - start, hung)


def kill_group(p):
    """Ends what this run started: the child's own process group (the
    session start_new_session gave it), by id."""
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def escape_reasons(job, sb, res, before, after, forbidden):
    why = []
    blob = res.out + res.err + res.extra
    if sb.secret in blob:
        why.append('the canary secret is in the output')
    diff = snapshot_diff(before, after)
    if diff:
        why.append('outside/read-only files changed: ' + '; '.join(diff[:6]))
    if job.probe:
        for line in res.out.split(b'\n'):
            if line.startswith(b'D:') and sb.name_tok.encode() in line:
                why.append('listed a directory outside the root: ' + line[:120].decode('latin-1'))
            elif line.startswith(b'I:'):
                try:
                    dev, ino = (int(x) for x in line[2:].split(b':')[:2])
                except ValueError:
                    continue
                if (dev, ino) in forbidden:
                    why.append('stat of an inode outside the root: ' + line.decode('latin-1'))
    return why


def classify(job, sb, res, before, after, forbidden):
    """-> (class, reason)"""
    esc = escape_reasons(job, sb, res, before, after, forbidden)
    if esc:
        return 'escape', '; '.join(esc[:4])
    for m in SAN_MARKERS:
        if m in res.err:
            return 'sanitizer', 'stderr has ' + m.decode()
    if res.hung:
        return 'hang', res.why or f'still running after {job.watchdog:.1f} s'
    if res.rc is None:
        return 'hang', res.why or 'no exit status'
    if res.rc < 0:
        return 'crash', f'killed by signal {-res.rc}'
    if job.allowed is not None and res.rc not in job.allowed:
        return 'crash', f'exit status {res.rc} is not documented'
    if res.rc in job.need_msg and not (res.err.strip() or res.out.strip()):
        return 'crash', f'exit status {res.rc} without any message'
    return 'clean', res.why
