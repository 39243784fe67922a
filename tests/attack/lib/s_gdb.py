"""s_gdb.py - the gdb remote protocol over TCP (`entrysim run --gdb
127.0.0.1:0`): sessions of packets drawn from the whole protocol (and
beyond what the stub implements: vFile host I/O, qXfer annexes naming host
files, extended-mode and reverse packets), with boundary addresses,
lengths and register numbers, binary X packets, bad checksums, missing
terminators, RLE, over-long packets, stray bytes, acks and nacks, ^C while
running.  Each session ends by dropping the connection, `D` or `k`; before
that a `?` must still get an answer (the stub is alive), and after it the
run must end within --timeout + 1 s (the stub's --timeout starts at the
detach)."""
import os
import re
import socket
import subprocess
import time

from .common import CAP, Job, RUN_ERRORS, Result, kill_group
from .s_run import kernel_opts

PROGS = ['asm_hello', 'asm_exit42', 'asm_loop', 'c64_freestanding', 'i386_freestanding',
         'musl_hello', 'glibc_hello']
ADDRS = [0, 1, 0x400000, 0x400078, 0x401000, 0x600000, 0x7ffffffde000, 0x7fffffffeff8,
         0xffffffff81000000, 0xffffffff81000080, 0xffffffffff600000, 0x800000000000,
         0xffff800000000000, 0xfffffffffffffff8, 0xffffffffffffffff]
LENS = [0, 1, 2, 8, 0x40, 0x100, 0xfff, 0x1000, 0x3fff, 0x4000, 0x4001, 0x10000, 0xffffffff,
        0xffffffffffffffff]
RESUME = (b'c', b's', b'C', b'S', b'vCont;c', b'vCont;s', b'vCont;C', b'vCont;S', b'vCont;r')


def hexs(b):
    return b.hex().encode()


def num(rng, pool):
    v = rng.choice(pool) if rng.random() < 0.85 else rng.getrandbits(rng.choice([8, 32, 64, 72]))
    return b'%x' % v


def escape_bin(data):
    out = bytearray()
    for c in data:
        if c in b'#$}*':
            out += bytes([0x7d, c ^ 0x20])
        else:
            out.append(c)
    return bytes(out)


def payload(rng, sb, prog):
    a, n = (lambda: num(rng, ADDRS)), (lambda: num(rng, LENS))
    monitor = rng.choice([b'help', b'sym do_syscall_64', b'sym nosuch', b'sym ', b'where', b'kernel',
                          b'x' * 3000, b'', b'sym ' + b'A' * 500, b'\xff\xfe', b'reset', b'exit'])
    annex = rng.choice([b'target.xml', b'64bit-core.xml', b'nosuch.xml', b'../../../etc/passwd',
                        sb.host_outside_path().encode(), b'', b'target.xml\x00x'])
    path = rng.choice([sb.host_outside_path().encode(), b'/etc/passwd', prog.encode(), b''])
    choices = [
        lambda: b'?', lambda: b'g', lambda: b'G' + hexs(rng.randbytes(rng.choice([0, 8, 100, 560, 1024, 4000]))),
        lambda: b'p' + num(rng, list(range(0, 90)) + [0xffffffff]),
        lambda: b'P' + num(rng, list(range(0, 90))) + b'=' + hexs(rng.randbytes(rng.choice([1, 4, 8, 10, 16, 64]))),
        lambda: b'm' + a() + b',' + n(), lambda: b'm' + a(), lambda: b'm,' + n(),
        lambda: b'M' + a() + b',' + n() + b':' + hexs(rng.randbytes(rng.randrange(0, 64))),
        lambda: b'X' + a() + b',' + n() + b':' + escape_bin(rng.randbytes(rng.randrange(0, 64))),
        lambda: b'x' + a() + b',' + n(),
        lambda: b'c', lambda: b'c' + a(), lambda: b's', lambda: b's' + a(),
        lambda: b'C' + num(rng, [5, 9, 11, 0, 0xff]), lambda: b'S' + num(rng, [5, 11]) + b';' + a(),
        lambda: rng.choice([b'vCont?', b'vCont;c', b'vCont;s', b'vCont;s:1;c', b'vCont;C05', b'vCont;S0b:1',
                            b'vCont;t', b'vCont;x', b'vCont;', b'vCont;s:-1', b'vCont;s:2']),
        lambda: b'vCont;r' + a() + b',' + a(),
        lambda: b'Z' + rng.choice(b'01234').to_bytes(1, 'little') + b',' + a() + b',' + num(rng, [1, 2, 4, 8, 0, 99]),
        lambda: b'z' + rng.choice(b'01234').to_bytes(1, 'little') + b',' + a() + b',' + num(rng, [1, 8]),
        lambda: rng.choice([b'D', b'D;1', b'k', b'vKill;1', b'vKill']),
        lambda: b'qSupported' + rng.choice([b'', b':multiprocess+;swbreak+;hwbreak+;xmlRegisters=i386',
                                           b':' + b'x+;' * 500]),
        lambda: b'qXfer:features:read:' + annex + b':' + n() + b',' + n(),
        lambda: rng.choice([b'qXfer:exec-file:read::0,fff', b'qXfer:auxv:read::0,fff',
                            b'qXfer:libraries:read::0,fff', b'qXfer:memory-map:read::0,fff',
                            b'qXfer:threads:read::0,fff', b'qXfer:features:write:target.xml:0:x']),
        lambda: rng.choice([b'vFile:open:' + hexs(path) + b',0,0', b'vFile:pread:0,100,0',
                            b'vFile:unlink:' + hexs(path), b'vFile:readlink:' + hexs(path),
                            b'vFile:setfs:0', b'vFile:close:0', b'vFile:fstat:0']),
        lambda: b'qRcmd,' + hexs(monitor),
        lambda: rng.choice([b'qAttached', b'qAttached:1', b'qC', b'qfThreadInfo', b'qsThreadInfo',
                            b'qThreadExtraInfo,1', b'qThreadExtraInfo,zz', b'Hg0', b'Hg-1', b'Hc1',
                            b'Hgp1.1', b'T1', b'T2', b'Tzz', b'QStartNoAckMode', b'qOffsets', b'qSymbol::',
                            b'qTStatus', b'vMustReplyEmpty', b'qL1200000000000000000', b'!', b'R00',
                            b'A1,0,61', b'bc', b'bs', b'i', b'I', b'r', b'd', b'QPassSignals:0e;',
                            b'QNonStop:1', b'QThreadEvents:1', b'vAttach;1', b'vStopped', b'jThreadsInfo',
                            b'qGetTLSAddr:1,0,0', b'QSetWorkingDir:' + hexs(path), b'vRun;' + hexs(path)]),
        lambda: b'qSearch:memory:' + a() + b';' + n() + b';' + hexs(rng.randbytes(4)),
        lambda: b'qCRC:' + a() + b',' + n(),
        lambda: bytes(rng.choice(b'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:;,=')
                      for _ in range(rng.randrange(1, 40))),
        lambda: rng.randbytes(rng.randrange(1, 40)),
    ]
    return rng.choice(choices)()


def frame(rng, body):
    cs = b'%02x' % (sum(body) & 0xff)
    k = rng.random()
    if k < 0.9:
        return b'$' + body + b'#' + cs
    return rng.choice([b'$' + body + b'#' + b'%02x' % ((sum(body) + 1) & 0xff), b'$' + body,
                       b'$' + body + b'#' + cs.upper(), b'$' + body + b'#' + cs[:1], body + b'#' + cs,
                       b'$' + body + b'$' + body + b'#' + cs, b'$' + body + b'#zz'])


def packets(rng, sb, prog):
    """-> list of (bytes, is_resume)"""
    out = []
    if rng.random() < 0.05:
        return out           # connect and leave at once
    if rng.random() < 0.7:
        out.append((frame(rng, b'qSupported:multiprocess+;swbreak+;hwbreak+'), False))
    for _ in range(rng.randrange(3, 20)):
        k = rng.random()
        if k < 0.88:
            body = payload(rng, sb, prog)
            data = frame(rng, body)
            if body.startswith(RESUME) and rng.random() < 0.25:
                data += frame(rng, payload(rng, sb, prog))   # arrives while the guest runs
            out.append((data, body.startswith(RESUME)))
        else:
            out.append((rng.choice([b'\x03', b'+', b'-', b'$', b'#00', rng.randbytes(rng.randrange(1, 64)),
                                    b'$' + b'm0,1' * 6000 + b'#00', b'$m400000,*"0#00', b'}}}}']), False))
    return out


def complete(buf):
    """Does buf hold a whole reply packet (or a nack: nothing else follows)?"""
    return re.search(rb'[$%][^#]*#[0-9a-fA-F]{2}', bytes(buf)) is not None or buf.endswith(b'-')


def recv_reply(sock, wait):
    """-> (bytes, eof): what came back within `wait` seconds, up to a whole
    packet; eof when the stub closed the connection."""
    got = bytearray()
    end = time.monotonic() + wait
    while time.monotonic() < end and not complete(got):
        sock.settimeout(max(0.01, end - time.monotonic()))
        try:
            b = sock.recv(65536)
        except socket.timeout:
            break
        except OSError:
            return bytes(got), True
        if not b:
            return bytes(got), True
        got += b
    return bytes(got), False


def send(sock, data):
    try:
        sock.sendall(data)
        return True
    except OSError:
        return False


def wait_port(p, err_path, wait):
    end = time.monotonic() + wait
    while time.monotonic() < end:
        with open(err_path, 'rb') as f:
            m = re.search(rb'listening on [0-9.]+:(\d+)', f.read())
        if m:
            return int(m.group(1))
        if p.poll() is not None:
            return None
        time.sleep(0.02)
    return None


def read_cap(path):
    with open(path, 'rb') as f:
        return f.read(CAP)


class GdbSurface:
    name, base = 'gdb', 150      # sessions of 3-20 packets: ~1,615 packets

    def prepare(self, ctx):
        self.progs = [p for p in (ctx.build_file('guest', n) for n in PROGS) if p]
        return None if self.progs else 'no guest programs'

    def make(self, ctx, i, rng, sb):
        prog = rng.choice(self.progs)
        t = ctx.run_timeout
        argv = [ctx.es, 'run', '--gdb', '127.0.0.1:0', '--timeout', str(t), '--root', sb.root]
        argv += ['--direct'] if rng.random() < 0.2 else kernel_opts(rng)
        if rng.random() < 0.1:
            argv += ['--timing']
        if rng.random() < 0.1:
            argv += ['--max-insns', str(rng.choice([10, 1000, 100000]))]
        pk = packets(rng, sb, prog)
        ending = rng.choice(['close', 'close', 'D', 'k'])
        second = rng.random() < 0.05    # a second client tries the same port
        job = Job(argv + ['--', prog], count=max(1, len(pk)), watchdog=t + 1.0 + ctx.startup_slack,
                  allowed=RUN_ERRORS | set(range(0, 256)), need_msg=(),
                  note=f'{os.path.basename(prog)}, {len(pk)} packets, then {ending}' +
                  (', with a second client' if second else ''))
        job.interact = lambda job, sb, ctx: session(job, sb, ctx, pk, ending, second)
        return job


def session(job, sb, ctx, pk, ending, second=False):
    out_p, err_p = os.path.join(sb.logs, 'stdout'), os.path.join(sb.logs, 'stderr')
    fin = os.open(os.devnull, os.O_RDONLY)
    start = time.monotonic()
    with open(out_p, 'wb') as fo, open(err_p, 'wb') as fe:
        p = subprocess.Popen(job.argv, cwd=sb.cwd, stdin=fin, stdout=fo, stderr=fe, env=ctx.env,
                             start_new_session=True)
    os.close(fin)
    res = Result()
    try:
        res = converse(job, ctx, p, err_p, pk, ending, second)
    finally:
        kill_group(p)
        p.wait()
    res.rc = p.returncode if not res.hung else None
    res.out, res.err = read_cap(out_p), read_cap(err_p)
    res.elapsed = time.monotonic() - start
    return res


def converse(job, ctx, p, err_p, pk, ending, second):
    res = Result()
    port = wait_port(p, err_p, 5.0 * ctx.mult)
    if port is None:
        if p.poll() is None:
            res.hung, res.why = True, 'no "listening" line'
        return res
    sock = socket.create_connection(('127.0.0.1', port), timeout=5)
    other = None
    if second:    # one connection is served: the other must not disturb it
        try:
            other = socket.create_connection(('127.0.0.1', port), timeout=1)
            other.sendall(b'$?#3f$k#6b')
        except OSError:
            other = None
    replies = bytearray()
    sent, noack, eof = 0, False, False
    if not pk:
        sock.close()
        return wait_gone(job, ctx, p, res)
    for data, resume in pk:
        if p.poll() is not None or eof or not send(sock, data):
            break
        sent += 1
        wait = 2.0 if resume else 0.3 if data.startswith(b'$') else 0.1
        got, eof = recv_reply(sock, wait * ctx.mult)
        if resume and not complete(got) and not eof:
            send(sock, b'\x03')
            more, eof = recv_reply(sock, 3.0 * ctx.mult)
            got += more
        replies += got
        if b'$' in got and not noack:
            send(sock, b'+')
        if data.startswith(b'$QStartNoAckMode#') and b'OK' in got:
            noack = True
    job.count = max(sent, 1)
    if p.poll() is None and not eof:
        # still connected: the stub must answer `?` (after a ^C if running)
        send(sock, b'\x03')
        got, eof = recv_reply(sock, 0.3 * ctx.mult)
        replies += got
        if not eof and send(sock, b'$?#3f'):
            got, eof = recv_reply(sock, 5.0 * ctx.mult)
            replies += got
            if p.poll() is None and not eof and not complete(got):
                res.hung, res.why = True, f'stub unresponsive: no answer to ? after {sent} packets'
        if not res.hung and not eof:
            send(sock, {'D': b'+$D#44', 'k': b'+$k#6b', 'close': b'+'}[ending])
            recv_reply(sock, 0.2)
    res.extra = bytes(replies[:CAP])
    sock.close()
    if other:
        other.close()
    if res.hung:
        return res
    return wait_gone(job, ctx, p, res)


def wait_gone(job, ctx, p, res):
    """gdb has gone: the run must end within --timeout + 1 s."""
    deadline = time.monotonic() + job.watchdog
    while p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    if p.poll() is None:
        res.hung = True
        res.why = f'still running {job.watchdog:.1f} s after gdb left (--timeout {ctx.run_timeout})'
    return res
