#!/usr/bin/env python3
"""Run-time re-measurement of the programs benches/thinlto_parity.py linked.

    python3 benches/parity_rerun.py [PROGRAM...]

Runs each program's two links from the last parity run
(bench-out/parity-work/<program>-<MODE>/prog.wpd and prog.lld, same
objects, wpd-ld and lld's ThinLTO with LLVM's WPD) ROUNDS times in
alternation (the first of a round alternates too), after one warm-up run
of each, and reports the CPU time (user + system) of each: the medians and
the median over rounds of the per-round ratio wpd / lld, which a machine
whose speed drifts disturbs least. No rebuild and no valgrind, so many
rounds are cheap; thinlto_parity.py's RUNS does the same inside the full
bench. Each run gets an empty work folder (leveldb writes its database
there). Programs default to every one linked in MODE.
Results: stdout and bench-out/parity-rerun.txt.
Env: ROUNDS (default 11), MODE (split or nosplit; default split).
"""
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import thinlto_parity as tp  # noqa: E402

ROUNDS = int(os.environ.get('ROUNDS', '11'))
MODE = os.environ.get('MODE', 'split')


def cpu_time(spec, prog):
    """CPU seconds of one run of prog (its output discarded)."""
    work = tempfile.mkdtemp(prefix='parity-rerun-')
    try:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(spec.command(prog, work), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def measure(program):
    work = os.path.join(tp.WORK, f'{program}-{MODE}')
    spec = tp.sources(program, os.path.join(tp.WORK, f'{program}-src'))
    wpd, lld = os.path.join(work, 'prog.wpd'), os.path.join(work, 'prog.lld')
    cpu_time(spec, wpd)
    cpu_time(spec, lld)
    w, l = [], []
    for r in range(ROUNDS):
        if r % 2 == 0:
            w.append(cpu_time(spec, wpd))
            l.append(cpu_time(spec, lld))
        else:
            l.append(cpu_time(spec, lld))
            w.append(cpu_time(spec, wpd))
    return (f'{program:<12} {MODE:<8} wpd {statistics.median(w) * 1000:9.1f} ms  lld {statistics.median(l) * 1000:9.1f} ms'
            f'  median ratio {statistics.median(a / b for a, b in zip(w, l)):.3f}'
            f'  ratio of medians {statistics.median(w) / statistics.median(l):.3f}  ({ROUNDS} rounds)')


def main():
    programs = sys.argv[1:] or sorted(
        d[:-len(MODE) - 1] for d in os.listdir(tp.WORK)
        if d.endswith(f'-{MODE}') and os.path.exists(os.path.join(tp.WORK, d, 'prog.wpd')))
    lines = []
    for p in programs:
        if not os.path.exists(os.path.join(tp.WORK, f'{p}-{MODE}', 'prog.wpd')):
            sys.exit(f'parity_rerun: {p} has no {MODE} links in {tp.WORK}: run thinlto_parity.py first')
        lines.append(measure(p))
        print(lines[-1], flush=True)
    with open(os.path.join(tp.OUT, 'parity-rerun.txt'), 'w') as f:
        f.write('\n'.join(lines) + '\n')


if __name__ == '__main__':
    main()
