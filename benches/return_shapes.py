#!/usr/bin/env python3
"""What the targets of each virtual call slot return, for the slots whose
calls return a pointer: the measurement issue 44 asks for before building
return-value folding for pointer results.

    python3 benches/return_shapes.py bench-out/parity-work/<program>-split ...

Each argument is a work folder of benches/thinlto_parity.py: the program's
bitcode objects (`*.o`) and wpd-ld's report of its link (`report.json`).
The report gives each slot's live targets and what wpd did with its calls;
the objects' bodies (`llvm-dis-19`) say what each target returns:

  a constant per target   every target's body is `ret ptr <global address>`:
                          the results could be stored beside the vtables
                          (virtual constant propagation of a pointer, with a
                          relocation), or folded when all are the same;
  same constant           all of them return the one address (uniform);
  some targets constant   some bodies return a global's address, others
                          compute the pointer;
  computed                no target returns a constant address;
  single target           one target (single implementation covers it).

Slots whose calls return no pointer are not listed. A call site in a
function copied into several modules counts once, as in the report.
"""
import collections
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

# A local symbol's module suffix, as summaries and split units name it.
SUFFIX = re.compile(r'\.[0-9a-f]{32}$|\.wpd\.[0-9a-f]+$')
DEFINE = re.compile(r'@("[^"]+"|[\w.$]+)\(')
CONST_RET = re.compile(r'ret ptr (null|@[\w.$"]+|getelementptr .*)$')
LABEL = re.compile(r'^[\w.]+:')


def returns(objs):
    """Function name (with and without a module suffix) -> ('const', what it
    returns) for a body that is one `ret ptr` of a constant, ('ptr', None)
    for another body returning a pointer, ('other', None) otherwise."""
    found = {}
    with tempfile.TemporaryDirectory() as tmp:
        for k, obj in enumerate(objs):
            out = os.path.join(tmp, f'{k}.ll')
            # A split unit holds two modules: llvm-dis writes out.0, out.1.
            subprocess.run(['llvm-dis-19', obj, '-o', out], check=True)
            for ll in glob.glob(out + '*'):
                name, pointer, body = None, False, []
                with open(ll) as f:
                    for line in f:
                        if line.startswith('define '):
                            head = line.split('(')[0]
                            name = DEFINE.search(line).group(1).strip('"')
                            pointer = re.search(r'\bptr @', head + '(') is not None
                            body = []
                        elif name and line.startswith('}'):
                            insts = [s for s in (l.strip() for l in body)
                                     if s and not s.startswith(';') and not LABEL.match(s)]
                            if not pointer:
                                kind = ('other', None)
                            else:
                                m = CONST_RET.match(insts[0]) if len(insts) == 1 else None
                                kind = ('const', m.group(1)) if m else ('ptr', None)
                            found.setdefault(name, kind)
                            found.setdefault(SUFFIX.sub('', name), kind)
                            name = None
                        elif name:
                            body.append(line)
    return found


def shape(kinds):
    if len(kinds) == 1:
        return 'single target'
    if all(k == 'const' for k, _ in kinds):
        return 'same constant' if len({v for _, v in kinds}) == 1 else 'a constant per target'
    if any(k == 'const' for k, _ in kinds):
        return 'some targets constant'
    return 'computed'


def measure(work):
    objs = sorted(glob.glob(os.path.join(work, '*.o')))
    try:
        with open(os.path.join(work, 'report.json')) as f:
            report = json.load(f)
    except (OSError, ValueError) as e:
        print(f'{work}: no wpd-ld report to read ({e}); skipped', file=sys.stderr)
        return
    found = returns(objs)
    slots, sites, left = collections.Counter(), collections.Counter(), collections.Counter()
    for d in report['decisions']:
        targets = d.get('targets') or []
        if not targets or d.get('offset') is None:
            continue
        kinds = [found.get(SUFFIX.sub('', t), ('unknown', None)) for t in targets]
        if not all(k in ('const', 'ptr') for k, _ in kinds):
            continue
        key = (shape(kinds), d['resolution'])
        slots[key] += 1
        sites[key] += d['call_sites']
        left[key] += d['call_sites'] - d['devirtualized']
    print(f"{os.path.basename(os.path.normpath(work))}: {len(report['decisions'])} slots, "
          f"{report['call_sites']['total']} call sites")
    for key in sorted(slots):
        print(f'  {key[0]:<22} {key[1]:<12} slots {slots[key]:>4}  call sites {sites[key]:>5}  '
              f'left indirect {left[key]:>5}')


if __name__ == '__main__':
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for w in sys.argv[1:]:
        measure(w)
