#!/usr/bin/env python3
"""Where a link's work goes, in instructions: wpd-ld against lld's own
ThinLTO on the objects of a ThinLTO-parity work folder, both run once under
valgrind's callgrind with one backend thread.

    python3 benches/link_instructions.py [PROGRAM-MODE ...]
    (default: box2d-split; run benches/thinlto_parity.py first: it builds
    bench-out/parity-work/PROGRAM-MODE and records the link's inputs there,
    and its link_commands() gives both links here as it times them)

Wall times on a shared virtual machine wander by several per cent from one
link to the next; instruction counts do not (two runs of the same link
differ by well under 0.1%), so a change of one per cent in the link's
work shows. Instructions are not time (cache misses, the allocator, lld's
dynamic loading of libLLVM.so), so this explains a link-time ratio, it
does not replace it.

For each folder it prints, in millions of instructions:
- both links' totals and their ratio;
- lld: its backend threads (thread pool) and the rest (process start,
  reading the inputs, LLVM's thin link, the regular LTO module, writing
  the output), from callgrind's per-thread counts;
- wpd-ld: its backends (`WpdThinBackend::run`: parse, import, optimize,
  compile) and each of its own phases, inclusive counts of the functions
  that run them, and what is left.
Results: stdout and bench-out/link-instructions.json.
Env: WPD_LD_BIN (default target/release/wpd-ld), as thinlto_parity.py.
Needs valgrind.
"""
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

import thinlto_parity as parity

# wpd-ld's phases: (label, a function whose inclusive count is the phase).
WPD_PHASES = [
    ('backends', r'WpdThinBackend::run\('),
    ('summarize', r'wpd::summarize::summarize_reading$'),
    ('rewrite devirtualized modules', r'wpd::backends::rewrite_to_bitcode$'),
    ('regular parts as modules', r'wpd::backends::vtables_module$'),
    ('module layouts', r'wpd_llvm::lto::thinlto_layout$'),
    ('resolve the line', r'wpd_ld::inputs::resolve$'),
    ("LLVM's add of the modules", r'wpd::backends::thinlto::add_modules$'),
    ("LLVM's thin link", r'llvm::lto::LTO::run\('),
    ('final link', r'wpd_ld::final_link$'),
]


def linker_command(clang_cmd):
    """The linker's command line that clang's driver runs for `clang_cmd`."""
    out = subprocess.run(clang_cmd + ['-###'], stderr=subprocess.PIPE, text=True, check=True).stderr
    return shlex.split(out.strip().splitlines()[-1])


def callgrind(cmd, out_dir, name):
    """Runs `cmd` under callgrind (one output file per thread); returns the
    output files."""
    prefix = os.path.join(out_dir, name)
    subprocess.run(['valgrind', '--tool=callgrind', '--separate-threads=yes', f'--callgrind-out-file={prefix}.%p']
                   + cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    # NAME.PID-TID, one per thread (NAME.PID itself holds no counts).
    return sorted(p for p in glob.glob(prefix + '.*') if re.search(r'-\d+$', p))


def totals(path):
    """The file's instruction total."""
    with open(path) as f:
        for line in f:
            if line.startswith('totals:') or line.startswith('summary:'):
                return int(line.split()[1])
    return 0


def inclusive(paths):
    """Inclusive instruction counts by function: in each thread's file the
    largest count listed for the name, summed over the threads."""
    counts = {}
    for path in paths:
        out = subprocess.run(['callgrind_annotate', '--inclusive=yes', '--threshold=100', '--auto=no', path],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
        here = {}
        for line in out.splitlines():
            # "  1,234 ( 0.01%)  file.rs:name [object]" (file "???" when unknown)
            m = re.match(r'\s*([0-9,]+) \(\s*[0-9.]+%\)\s+(?:\?\?\?|[^\s:]*[/.][^\s:]*):(?!:)(.*?)(?: \[[^\]]*\])?$', line)
            if not m:
                continue
            name = re.sub(r' \(\d+x\)$', '', m.group(2))
            here[name] = max(here.get(name, 0), int(m.group(1).replace(',', '')))
        for name, v in here.items():
            counts[name] = counts.get(name, 0) + v
    return counts


def measure(folder):
    with open(os.path.join(parity.WORK, folder, parity.LINK_INPUTS)) as f:
        inputs = json.load(f)
    tmp = tempfile.mkdtemp(prefix='wpd-instr-')
    try:
        wpd, lld = (linker_command(c) for c in parity.link_commands(
            inputs, os.path.join(tmp, 'prog.wpd'), os.path.join(tmp, 'prog.lld'), jobs=1))
        wpd_files = callgrind(wpd, tmp, 'wpd')
        lld_files = callgrind(lld, tmp, 'lld')
        wpd_total = sum(totals(p) for p in wpd_files)
        # lld: thread 1 is the driver; the others are its backends.
        lld_threads = {int(os.path.basename(p).rsplit('-', 1)[1]): totals(p) for p in lld_files}
        lld_total = sum(lld_threads.values())
        lld_main = lld_threads.get(1, 0)
        counts = inclusive(wpd_files)
        phases = {}
        for label, pattern in WPD_PHASES:
            found = [v for k, v in counts.items() if re.search(pattern, k)]
            phases[label] = max(found) if found else 0
        phases['rest'] = wpd_total - sum(phases.values())
        return {
            'folder': folder,
            'wpd_total': wpd_total,
            'lld_total': lld_total,
            'ratio': wpd_total / lld_total,
            'lld_backends': lld_total - lld_main,
            'lld_rest': lld_main,
            'wpd_phases': phases,
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    if not shutil.which('valgrind'):
        sys.exit('link_instructions.py: valgrind not found (apt-get install valgrind)')
    folders = sys.argv[1:] or ['box2d-split']
    results = []
    for folder in folders:
        inputs = os.path.join(parity.WORK, folder, parity.LINK_INPUTS)
        if not os.path.exists(inputs):
            sys.exit(f'link_instructions.py: {inputs} not found: run benches/thinlto_parity.py')
        r = measure(folder)
        results.append(r)
        m = 1e6
        print(f"{folder}: wpd-ld {r['wpd_total'] / m:.0f}M, lld {r['lld_total'] / m:.0f}M instructions "
              f"(ratio {r['ratio']:.3f})")
        print(f"  lld    backends {r['lld_backends'] / m:8.1f}M   the rest {r['lld_rest'] / m:8.1f}M")
        for label, v in r['wpd_phases'].items():
            print(f"  wpd-ld {label:32} {v / m:8.1f}M")
    with open(os.path.join(parity.OUT, 'link-instructions.json'), 'w') as f:
        json.dump(results, f, indent=1)


if __name__ == '__main__':
    main()
