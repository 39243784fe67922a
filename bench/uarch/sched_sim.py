#!/usr/bin/env python3
"""sched_sim.py - toy schedulers against the Zen 5 dependent-ALU measurements.

Each candidate mechanism for the shortfall measured by bench/uarch/blocks.tsv
(alu_dep_*, alu_chains_*) is run as a small cycle-stepped machine: 1-cycle
ALU ops, 8 dispatched a cycle, 6 issued a cycle, copies of the block
independent except for the chains' loop-carried registers.  It prints the
ops a cycle each mechanism gives next to the measured figure.  None fits
(bench/README-scoring.md, issue 20), which is what this script records.
"""

MEASURED = {'none': 6.0, 'd1': 4.06, 'd2': 3.84, 'd3': 4.1, 'd6': 4.52, 'chain6': 4.8,
            'K1': 1.0, 'K2': 2.27, 'K3': 3.0, 'K4': 3.83, 'K5': 3.98, 'K6': 4.67,
            'K8': 5.03, 'K12': 5.35}


def cases():
    c = {'none': [('p%d' % i, ['cl']) for i in range(12)]}
    P = ['p%d' % i for i in range(6)]
    C = ['c%d' % i for i in range(6)]
    for d in (1, 2, 3, 6):  # six producers of cl, each read at distance d
        ops = []
        for g in range(0, 6, d):
            ops += [(P[g + j], ['cl']) for j in range(d)]
            ops += [(C[g + j], [P[g + j]]) for j in range(d)]
        c['d%d' % d] = ops
    c['chain6'] = [('a', ['cl'])] + [('a', ['a'])] * 5 + [('b', ['cl'])] + [('b', ['b'])] * 5
    for k in (1, 2, 3, 4, 5, 6, 8, 12):
        c['K%d' % k] = [('r%d' % (i % k), ['r%d' % (i % k)]) for i in range(12)]
    return c


def steady(issued, per):
    a, b = per * 100, per * 250
    return per / ((issued[b] - issued[a]) / 150)


def run_queues(ops, steer, nq=6, disp=8, copies=300):
    """One queue per ALU, the queue chosen at dispatch; each picks its oldest ready op."""
    prog = [o for _ in range(copies) for o in ops]
    n, producer, deps, issued = len(prog), {}, [None] * len(prog), [None] * len(prog)
    queues, i, cyc, done, rr = [[] for _ in range(nq)], 0, 0, 0, 0
    while done < n:
        for q in queues:
            for k, idx in enumerate(q):
                if all(issued[p] is not None and issued[p] + 1 <= cyc for p in deps[idx]):
                    issued[idx] = cyc
                    q.pop(k)
                    done += 1
                    break
        for slot in range(disp):
            if i >= n:
                break
            if steer == 'round-robin':
                qi = rr % nq
            elif steer == 'least-occupied':
                qi = min(range(nq), key=lambda j: (len(queues[j]), (j - rr) % nq))
            else:  # by dispatch slot
                qi = slot % nq
            rr += 1
            d, s = prog[i]
            deps[i] = [producer[r] for r in s if r in producer]
            queues[qi].append(i)
            producer[d] = i
            i += 1
        cyc += 1
    return steady(issued, len(ops))


def run_window(ops, window, width=6, disp=8, sched=64, copies=300):
    """One scheduler picking up to `width` ready ops among its oldest `window`."""
    prog = [o for _ in range(copies) for o in ops]
    n, producer, deps, issued = len(prog), {}, [None] * len(prog), [None] * len(prog)
    q, i, cyc, done = [], 0, 0, 0
    while done < n:
        picked, keep = 0, []
        for pos, idx in enumerate(q):
            if picked < width and pos < window and all(
                    issued[p] is not None and issued[p] + 1 <= cyc for p in deps[idx]):
                issued[idx] = cyc
                picked += 1
                done += 1
            else:
                keep.append(idx)
        q = keep
        for _ in range(disp):
            if i >= n or len(q) >= sched:
                break
            d, s = prog[i]
            deps[i] = [producer[r] for r in s if r in producer]
            q.append(i)
            producer[d] = i
            i += 1
        cyc += 1
    return steady(issued, len(ops))


def main():
    c = cases()
    models = [('steer ' + s, lambda ops, s=s: run_queues(ops, s))
              for s in ('slot', 'round-robin', 'least-occupied')]
    models += [('pick window %d' % w, lambda ops, w=w: run_window(ops, w)) for w in (6, 8, 12, 16)]
    print('case\tmeasured\t' + '\t'.join(m for m, _ in models))
    for name, ops in c.items():
        print('%s\t%.2f\t%s' % (name, MEASURED[name],
                                '\t'.join('%.2f' % f(ops) for _, f in models)))


if __name__ == '__main__':
    main()
