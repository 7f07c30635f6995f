#!/usr/bin/env python3
"""Random C++ class hierarchies for differential testing of wpd.

Writes a multi-TU C++20 program into --out (deterministic from --seed):
  h1.hpp, h2.hpp   header classes (inline/comdat vtables or key functions)
  main.cpp, t1.cpp..tK.cpp
  config.sh        build configuration read by check.sh (TU modes, flags,
                   SHAPES, TRAP, exported symbols)
  summary.txt      human-readable description of the hierarchy

Besides the random hierarchy, each seed switches on some shapes (SHAPES
below, README.md "Shapes"): merged calls, pure calls through several bases,
constant vtable addresses, explicit destructor calls after placement new,
trap-only overrides, non-ASCII names, an untyped (-fno-rtti, no type
metadata) TU, -z muldefs patches, interposed library members, fat objects,
relative vtables, and slots read only through member function pointers, by
native code or by a function found with dlsym, or vtables read by
dynamic_cast and typeid, a TU that only a never-called slot's override
references (with a static initializer and a template copy other code calls),
a decorator forwarding through its own slot, arguments passed in memory
(byval), covariant returns through non-primary bases, a file of static
registrations with nothing external (registered), and a weak virtual
definition another TU overrides with a strong one (weak-override).

The program avoids undefined behaviour: arithmetic is done in unsigned
long, shift counts are small constants, no pure virtual is ever called
(no virtual calls in constructors/destructors, abstract classes are never
instantiated), every object is deleted/destroyed exactly once, and every
class appears once as a subobject (no ambiguous bases).
"""

import argparse
import os
import random
import re
import sys
from contextlib import contextmanager

TYPES = ['bool', 'char', 'short', 'int', 'long', 'unsigned']
RANGE = {
    'bool': (0, 1),
    'char': (-60, 100),
    'short': (-3000, 3000),
    'int': (-100000, 100000),
    'long': (-1000000000, 1000000000),
    'unsigned': (0, 100000),
}
STYLES = ['const', 'kind', 'expr', 'this', 'impure', 'throw']
# Shapes beyond the random hierarchy (README.md, "Shapes"); each is switched
# on by the seed (or --shapes). trap-called and trap-uncalled exclude each other.
SHAPES = ['merged-calls', 'multi-base', 'const-vtable', 'placement-dtor', 'trap-called', 'trap-uncalled',
          'unicode', 'untyped', 'muldefs', 'interposed', 'fat', 'relative',
          'mfp-call', 'dyncast', 'native-reader', 'exported-caller', 'dead-extracted', 'wrapper', 'byval', 'covariant',
          'registered', 'weak-override', 'dlopen-derived', 'dead-needed', 'dlopen-host']


def lit(t, v):
    if t == 'bool':
        return 'true' if v else 'false'
    if t in ('char', 'short'):
        return 'static_cast<%s>(%d)' % (t, v)
    if t == 'long':
        return '%dL' % v
    if t == 'unsigned':
        return '%du' % v
    return str(v)


def cast_from_ul(t, e):
    return 'static_cast<%s>(%s)' % (t, e)


class Method:
    def __init__(self, mid, ret, params, intro, style):
        self.id = mid
        self.name = 'm%d' % mid
        self.ret = ret
        self.params = params
        self.intro = intro
        self.style = style
        self.tuples = []          # constant argument tuples used at call sites
        self.uniform_const = None  # for 'const' style: shared constant or None
        self.special_done = False  # for 'kind' style: the one differing target

    def sig(self):
        return '%s %s(%s)' % (self.ret, self.name,
                              ', '.join('%s a%d' % (t, i) for i, t in enumerate(self.params)))

    def qsig(self, cls):
        return '%s %s::%s(%s)' % (self.ret, cls.name, self.name,
                                  ', '.join('%s a%d' % (t, i) for i, t in enumerate(self.params)))


class Cls:
    def __init__(self, cid, name, bases, anon_tu):
        self.id = cid
        self.name = name
        self.bases = bases        # [(Cls, virtual)]
        self.anon_tu = anon_tu    # None: header class; else the TU index
        self.final = False
        self.mode = 'inline'      # header classes: 'inline' or 'key'
        self.home = 0             # TU of out-of-line definitions
        self.fields = []
        self.intro = []           # methods introduced here
        self.defs = {}            # method id -> body string or 'PURE'
        self.def_style = {}       # method id -> body style
        self.ctor_call = None     # statement of the constructor body (a virtual call)
        self.dtor_call = None     # statement of the destructor body (a virtual call)
        self.inline_def = {}      # method id -> bool (defined in class body)
        self.final_methods = set()
        self.dtor = None          # None (implicit), 'inline', 'outline'
        self.children = []
        self.named_local = False  # untyped shape: a named (not anonymous) class of one TU

    @property
    def header(self):
        return self.anon_tu is None


class Gen:
    def __init__(self, seed, args):
        self.seed = seed
        self.r = random.Random(seed)
        self.r2 = random.Random(seed * 31 + 5)
        self.args = args
        self.classes = []
        self.methods = []
        self.ntu = 0
        self.tu_mode = {}
        self.out = {}

    # ---------------------------------------------------------------- helpers
    def ancestors(self, c):
        seen = []
        stack = [b for b, _ in c.bases]
        while stack:
            b = stack.pop()
            if b not in seen:
                seen.append(b)
                stack.extend(bb for bb, _ in b.bases)
        return seen

    def anc_or_self(self, c):
        return [c] + self.ancestors(c)

    def is_derived(self, d, b):
        return b in self.ancestors(d)

    def has_vbase(self, c):
        return any(v for x in self.anc_or_self(c) for _, v in x.bases)

    def virtual_ancestors(self, c):
        out = []
        for x in self.anc_or_self(c):
            for b, v in x.bases:
                if v and b not in out:
                    out.append(b)
        return out

    def unique_subobjects(self, bases):
        counts = {}
        vseen = set()

        def walk(cls, ident):
            counts.setdefault(cls.name, set()).add(ident)
            for b, v in cls.bases:
                if v:
                    if b.name in vseen:
                        continue
                    vseen.add(b.name)
                    walk(b, ('V', b.name))
                else:
                    walk(b, ident + (b.name,))
        for b, v in bases:
            if v:
                if b.name in vseen:
                    return False
                vseen.add(b.name)
                walk(b, ('V', b.name))
            else:
                walk(b, (b.name,))
        return all(len(s) == 1 for s in counts.values())

    def scope(self, c):
        """Methods callable on c, each once, in id order."""
        ms = {}
        for x in self.anc_or_self(c):
            for m in x.intro:
                ms[m.id] = m
        return [ms[k] for k in sorted(ms)]

    def overriders(self, c, m):
        """Final overrider candidates of m in c (maximal definers)."""
        if m.id in c.defs:
            return [c]
        cands = []
        for b, _ in c.bases:
            if m in self.scope(b):
                for o in self.overriders(b, m):
                    if o not in cands:
                        cands.append(o)
        return [o for o in cands if not any(o2 is not o and self.is_derived(o2, o) for o2 in cands)]

    def abstract(self, c):
        for m in self.scope(c):
            fo = self.overriders(c, m)
            if len(fo) != 1 or fo[0].defs[m.id] == 'PURE':
                return True
        return False

    def fields_in_scope(self, c):
        out = []
        for x in reversed(self.anc_or_self(c)):
            out.extend(x.fields)
        return out

    # ------------------------------------------------------------ expressions
    def expr(self, depth, leaves):
        r = self.r
        if depth <= 0 or r.random() < 0.25:
            if leaves and r.random() < 0.7:
                return r.choice(leaves)
            return '%dul' % r.choice([0, 1, 2, 3, 5, 7, 9, 12, 31, 100, 255, 1000, 65535])
        k = r.random()
        e1 = self.expr(depth - 1, leaves)
        e2 = self.expr(depth - 1, leaves)
        if k < 0.45:
            return '(%s %s %s)' % (e1, r.choice(['+', '-', '*', '&', '|', '^']), e2)
        if k < 0.6:
            if r.random() < 0.5:
                return '(%s << %d)' % (e1, r.randint(0, 7))
            return '(%s >> %d)' % (e1, r.randint(0, 20))
        if k < 0.72:
            return 'static_cast<unsigned long>(%s %s %s)' % (e1, r.choice(['<', '<=', '==', '!=', '>', '>=']), e2)
        if k < 0.9:
            e3 = self.expr(depth - 1, leaves)
            return '(%s %s %s ? %s : %s)' % (e1, r.choice(['<', '==', '>']), e2, e3, self.expr(depth - 1, leaves))
        return '(%s %% (%s | 1ul))' % (e1, e2)

    def param_leaves(self, m):
        return ['static_cast<unsigned long>(a%d)' % i for i in range(len(m.params))]

    def call_args_from(self, m, base_expr):
        out = []
        for i, t in enumerate(m.params):
            e = '(%s + %dul)' % (base_expr, i * 3 + 1)
            if t == 'bool':
                out.append('static_cast<bool>(%s & 1ul)' % e)
            else:
                out.append('static_cast<%s>(%s)' % (t, e))
        return ', '.join(out)

    def body(self, c, m, style):
        r = self.r
        ret = m.ret
        pl = self.param_leaves(m)
        fl = ['this->%s' % f for f in self.fields_in_scope(c)]
        if style == 'const':
            if m.uniform_const is not None:
                v = m.uniform_const
            else:
                v = r.randint(*RANGE[ret]) if r.random() < 0.5 else r.randint(0, 9)
                v = max(RANGE[ret][0], min(RANGE[ret][1], v))
            return '{ return %s; }' % lit(ret, v)
        if style == 'kind':
            if not m.special_done and c is not m.intro:
                m.special_done = True
                if pl and r.random() < 0.6:
                    k = r.choice([t[0] for t in m.tuples])
                    return '{ return %s == %dul; }' % (pl[0], k & 0xffffffffffffffff) if k >= 0 else \
                        '{ return %s == static_cast<unsigned long>(%dL); }' % (pl[0], k)
                return '{ return true; }'
            return '{ return false; }'
        if style == 'expr':
            return '{ return %s; }' % cast_from_ul(ret, self.expr(3, pl))
        if style == 'this':
            leaves = pl + fl if fl else pl + ['static_cast<unsigned long>(%d)' % c.id]
            return '{ return %s; }' % cast_from_ul(ret, self.expr(3, leaves))
        if style == 'throw':
            e = self.expr(2, pl)
            if self.args.no_always_throw:
                # depend on an argument for sure: no override always throws
                e = '%s + static_cast<unsigned long>(a0)' % e
            cond = '((%s) & 3ul) == %dul' % (e, r.randint(0, 3))
            return '{ if (%s) throw static_cast<int>(%d); return %s; }' % (
                cond, 1000 + m.id * 10 + c.id % 10, cast_from_ul(ret, self.expr(2, pl + fl)))
        # impure
        lines = ['unsigned long r = %s;' % self.expr(2, pl + fl)]
        if fl and r.random() < 0.8:
            f = r.choice(fl)
            lines.append('%s = %s;' % (f, self.expr(2, pl + fl + ['r'])))
        callees = [x for x in self.scope(c) if x.id < m.id]
        for _ in range(r.randint(0, 2)):
            if not callees:
                break
            x = r.choice(callees)
            if r.random() < 0.4:
                args = ', '.join(lit(t, v) for t, v in zip(x.params, r.choice(x.tuples)))
            else:
                args = self.call_args_from(x, 'r')
            lines.append('r = mix(r, static_cast<unsigned long>(this->%s(%s)));' % (x.name, args))
        if r.random() < 0.5:
            lines.append('std::printf("  %s::%s %%lu\\n", r);' % (c.name, m.name))
        lines.append('return %s;' % cast_from_ul(ret, 'r'))
        return '{\n    ' + '\n    '.join(lines) + '\n  }'

    # ------------------------------------------------------------- structure
    def new_method(self, c, pure_ok):
        r = self.r
        mid = len(self.methods)
        ret = r.choice(TYPES)
        nparams = r.choice([0, 1, 1, 2, 2, 3])
        params = [r.choice(TYPES) for _ in range(nparams)]
        weights = [3, 2, 4, 2, 2, 1]
        style = r.choices(STYLES, weights)[0]
        if style == 'kind':
            ret = 'bool'
        if style == 'throw' and not params:
            params = ['int']
        # Sometimes a root reuses the name and signature of another root's
        # method: a class deriving from both overrides both with one
        # function (non-virtual thunks). Drawn from its own generator, so
        # seeds where this never happens keep their programs.
        same = [x for x in self.methods if not x.intro.bases and x.intro is not c
                and x.name not in [y.name for y in c.intro]
                and (x.style != 'throw' or style == 'throw')]
        twin = None
        if not c.bases and same and self.r2.random() < 0.3:
            twin = self.r2.choice(same)
            ret, params = twin.ret, list(twin.params)
            if style == 'kind' and ret != 'bool':
                style = 'expr'
            if style == 'throw' and not params:
                style = 'expr'
        m = Method(mid, ret, params, c, style)
        if twin is not None:
            m.name = twin.name
        if style == 'const' and r.random() < 0.5:
            m.uniform_const = r.randint(0, 9) if ret != 'bool' else r.randint(0, 1)
        for _ in range(r.randint(2, 3)):
            m.tuples.append(tuple(r.randint(*RANGE[t]) if r.random() < 0.5 else r.randint(0, 5)
                                  for t in params))
        self.methods.append(m)
        c.intro.append(m)
        if pure_ok and r.random() < 0.5:
            c.defs[m.id] = 'PURE'
        else:
            c.defs[m.id] = self.body(c, m, style)
            c.def_style[m.id] = style
        return m

    def def_style(self, m):
        if m.style in ('kind', 'const') and self.r.random() < 0.85:
            return m.style
        if self.r.random() < 0.15:
            return self.r.choice(['impure', 'expr', 'this'])
        return m.style

    def name_groups(self, c):
        """In-scope methods of c by name, in id order (a group of more than
        one: same-named methods of different roots)."""
        groups = {}
        for m in self.scope(c):
            groups.setdefault(m.name, []).append(m)
        return sorted(groups.values(), key=lambda g: g[0].id)

    def fill_overrides(self, c, want_concrete):
        r = self.r
        for g in self.name_groups(c):
            if any(m.intro is c for m in g):
                continue
            m = g[0]
            finals = any(x.id in y.final_methods for x in g for y in self.ancestors(c))
            # more than one method of that name: lookup in c would be
            # ambiguous, so c declares it (overriding all of them)
            must = len(g) > 1
            for x in g:
                fo = self.overriders(c, x)
                must = must or len(fo) != 1 or (want_concrete and fo[0].defs[x.id] == 'PURE')
            if must and finals:
                return False
            p = 0.6 if m.style in ('const', 'kind', 'expr') else 0.35
            if must or (not finals and r.random() < p):
                st = self.def_style(m)
                body = self.body(c, m, st)
                fin = r.random() < 0.1
                for x in g:
                    c.defs[x.id] = body
                    c.def_style[x.id] = st
                    if fin:
                        c.final_methods.add(x.id)
        return True

    def make_class(self, name, cands, anon_tu):
        r = self.r
        cid = len(self.classes)
        for _attempt in range(20):
            if not cands or (r.random() < 0.15 and anon_tu is None):
                nb = 0
            else:
                nb = r.choices([1, 2, 3], [6, 3, 1])[0]
            nb = min(nb, len(cands))
            bases = []
            picks = r.sample(cands, nb)
            for b in picks:
                bases.append((b, r.random() < (0.45 if nb > 1 else 0.2)))
            if nb and not self.unique_subobjects(bases):
                continue
            c = Cls(cid, name, bases, anon_tu)
            want_concrete = r.random() < 0.75
            if not self.fill_overrides(c, want_concrete):
                continue
            break
        else:
            c = Cls(cid, name, [], anon_tu)
            want_concrete = True
        root = not c.bases
        c.fields = ['f%d_%d' % (cid, k) for k in range(r.choice([0, 1, 1, 2]))]
        nnew = r.randint(1, 4) if root else r.choice([0, 0, 1, 1, 2])
        pure_ok = root and r.random() < 0.4 or (not want_concrete and r.random() < 0.5)
        for _ in range(nnew):
            self.new_method(c, pure_ok)
        c.dtor = 'inline' if root else r.choice([None, 'inline', 'outline'])
        if anon_tu is None:
            c.mode = r.choice(['inline', 'key', 'key'])
            if c.dtor is None and c.mode == 'key' and r.random() < 0.5:
                c.dtor = 'outline'
            if c.mode == 'key' and c.dtor == 'inline' and r.random() < 0.6:
                c.dtor = 'outline'
            for mid in c.defs:
                c.inline_def[mid] = c.mode == 'inline' or r.random() < 0.3
            c.home = r.randrange(self.ntu)
        else:
            c.dtor = c.dtor if c.dtor != 'outline' else 'inline'
            for mid in c.defs:
                c.inline_def[mid] = True
            c.home = anon_tu
        if c.dtor == 'outline' and c.mode == 'inline':
            c.dtor = 'inline'
        for b, _ in c.bases:
            b.children.append(c)
        self.classes.append(c)
        return c

    def generate(self):
        r = self.r
        a = self.args
        # Build configuration from its own generator: every draw is made
        # whatever the options say, so --split/--hidden/--archive change the
        # build only, never the program (--tus/--native/--shared do).
        cr = random.Random(self.seed * 7919 + 17)
        d_tus, d_native = cr.randint(3, 6), (0 if cr.random() < 0.5 else cr.randint(1, 2))
        d_shared, d_split, d_hidden, d_archive = (cr.random() < 0.25, cr.random() < 0.5,
                                                   cr.random() < 0.25, cr.random() < 0.25)
        self.ntu = a.tus if a.tus else d_tus
        nonmain = list(range(1, self.ntu))
        nnative = a.native if a.native is not None else d_native
        shared = a.shared if a.shared is not None else d_shared
        nnative = min(nnative, len(nonmain) - (1 if shared else 0))
        r.shuffle(nonmain)
        self.native = sorted(nonmain[:nnative])
        self.shared = nonmain[nnative] if shared else None
        for t in range(self.ntu):
            self.tu_mode[t] = 'native' if t in self.native else 'shared' if t == self.shared else 'lto'
        self.split = a.split if a.split is not None else d_split
        hidden = a.hidden if a.hidden is not None else d_hidden
        self.hidden = hidden and self.shared is None
        self.archive = a.archive if a.archive is not None else d_archive
        # build-only variations (drawn after the others: older seeds keep
        # their programs and choices above)
        self.opt = cr.choice(['-O2', '-O2', '-O2', '-O1', '-O3', '-Os'])
        self.debug = cr.random() < 0.3
        self.nortti = cr.random() < 0.1
        self.linker = cr.choices(['lld', 'bfd', 'gold'], [8, 1, 1])[0]
        self.speculate = cr.choices(['', '2', 'off'], [6, 3, 1])[0]
        # how the archive reaches the link line (a generator of its own:
        # every choice above keeps its seeds): one archive, the members
        # split over two archives in a --start-group, the two named by a
        # linker script's GROUP (-lfzs finds libfzs.so, a text file, as
        # -lc finds glibc's libc.so), or a thin archive
        self.arform = random.Random(self.seed * 67867967 + 41).choices(
            ['plain', 'group', 'script', 'thin'], [5, 2, 2, 1])[0]
        if a.archive_form:
            self.arform = a.archive_form
        # code-generation flags real builds add, which change the IR around
        # vtables (a generator of its own: every choice above keeps its
        # seeds): -fstrict-vtable-pointers (invariant.group loads of vtable
        # pointers, launder/strip intrinsics on `this` after placement new
        # and in constructors), -fvisibility-inlines-hidden (hidden inline
        # virtual functions in default-visibility vtables)
        self.xflags = random.Random(self.seed * 86028121 + 43).choices(
            [[], ['-fstrict-vtable-pointers'], ['-fvisibility-inlines-hidden'],
             ['-fstrict-vtable-pointers', '-fvisibility-inlines-hidden']], [6, 2, 2, 1])[0]
        if a.xflags is not None:
            self.xflags = [f for f in a.xflags.split(',') if f]
        if a.opt:
            self.opt = a.opt
        if a.rtti is not None:
            self.nortti = not a.rtti
        # shapes, from their own generator (a seed without any keeps the
        # program it had before shapes existed)
        sr = random.Random(self.seed * 104729 + 3)
        on = set()
        for name, p in (('merged-calls', 0.35), ('multi-base', 0.35), ('const-vtable', 0.35),
                        ('placement-dtor', 0.35), ('trap', 0.3), ('unicode', 0.3), ('untyped', 0.3)):
            if sr.random() < p:
                on.add(name)
        if 'trap' in on:
            on.discard('trap')
            on.add('trap-called' if sr.random() < 0.5 else 'trap-uncalled')
        # where the body that runs is not the bitcode's, and two build
        # shapes (from a generator of their own: the shapes above keep
        # their seeds)
        nr = random.Random(self.seed * 15485863 + 11)
        for name, p in (('muldefs', 0.25), ('interposed', 0.25), ('fat', 0.2), ('relative', 0.2)):
            if nr.random() < p:
                on.add(name)
        # slots read other than by a plain virtual call (or not at all:
        # dyncast reads RTTI and offset-to-top), for dead slot elimination;
        # a generator of their own again (every shape above keeps its seeds)
        vr = random.Random(self.seed * 32452843 + 19)
        for name, p in (('mfp-call', 0.3), ('dyncast', 0.3), ('native-reader', 0.4), ('exported-caller', 0.3)):
            if vr.random() < p:
                on.add(name)
        # Later shapes, each from a generator of its own (multiplier,
        # offset), so that adding one changes no earlier seed's choice, each
        # with probability 0.3: a TU the link loads only for a function a
        # dead slot's override calls; a decorator among its slot's targets;
        # arguments passed in memory; covariant returns through non-primary
        # bases; a file of static registrations with nothing external; weak
        # virtual definitions, one of them overridden.
        for name, mul, add in (('dead-extracted', 49979687, 23), ('wrapper', 86028121, 29),
                               ('byval', 15485863, 31), ('covariant', 32452867, 37),
                               ('registered', 49979693, 43), ('weak-override', 86028157, 47),
                               ('dlopen-derived', 15485867, 53), ('dead-needed', 32452879, 59),
                               ('dlopen-host', 49979719, 61)):
            if random.Random(self.seed * mul + add).random() < 0.3:
                on.add(name)
        if a.shapes is not None:
            on = set(a.shapes)
        self.shapes = [x for x in SHAPES if x in on]
        self.untyped = None
        if 'untyped' in self.shapes:
            cands = [t for t in range(1, self.ntu) if self.tu_mode[t] == 'lto']
            if cands:
                self.untyped = random.Random(self.seed * 104729 + 5).choice(cands)
                self.tu_mode[self.untyped] = 'untyped'
            else:
                self.shapes.remove('untyped')
        # native-reader needs a native TU; dyncast needs RTTI (-fno-rtti
        # everywhere or relative vtables, which libstdc++'s __dynamic_cast
        # cannot read: dropped)
        if 'native-reader' in self.shapes and not self.native:
            self.shapes.remove('native-reader')
        if 'dyncast' in self.shapes and (self.nortti or 'relative' in self.shapes):
            self.shapes.remove('dyncast')
        # dlopen-derived: the plugin library is built once for every build
        # (the -O0 reference's too), so it must share their ABI (relative
        # vtables are not the reference's), and without RTTI its subclass
        # would leave no trace at all in the program
        if 'dlopen-derived' in self.shapes and (self.nortti or 'relative' in self.shapes):
            self.shapes.remove('dlopen-derived')
        # dlopen-host: its plugin too is built once for every build
        if 'dlopen-host' in self.shapes and 'relative' in self.shapes:
            self.shapes.remove('dlopen-host')

        # header classes
        nh = r.randint(4, 11)
        for i in range(nh):
            cands = [c for c in self.classes if not c.final]
            c = self.make_class('H%d' % i, cands, None)
            if c.bases and r.random() < 0.2:
                c.final = True
        # anonymous-namespace classes
        hdr = [c for c in self.classes if c.header]
        anon_tus = [t for t in range(1, self.ntu) if r.random() < 0.5]
        forced = []
        if self.native and r.random() < 0.6:
            forced.append(r.choice(self.native))   # hybrid: native subclass of an LTO class
        if self.shared is not None:
            forced.append(self.shared)           # the library derives from a program class
        for t in sorted(set(anon_tus + forced)):
            for k in range(r.randint(1, 3) if t not in forced else r.randint(1, 2)):
                local = [c for c in self.classes if c.anon_tu == t and not c.final]
                cands = [c for c in hdr if not c.final] + local
                for _ in range(20):
                    c = self.make_class('A%d' % len(self.classes), cands, t)
                    if c.bases:
                        break
                    self.classes.pop()
                    self.methods = [m for m in self.methods if m.intro is not c]
                else:
                    continue
                if r.random() < 0.3:
                    c.final = True
        # homes of factories, drivers, globals
        for c in self.classes:
            c.factory_home = r.randrange(1, self.ntu) if c.header else c.anon_tu
            c.driver_home = r.randrange(self.ntu) if c.header else c.anon_tu
        self.concrete = [c for c in self.classes if not self.abstract(c)]
        for c in self.concrete:
            if r.random() < 0.2:
                c.ctor_call = self.structor_call(c, True)
            if c.dtor is not None and r.random() < 0.2:
                c.dtor_call = self.structor_call(c, False)
        self.globals = []
        for c in self.concrete:
            if c.header and self.constexpr_ok(c) and r.random() < 0.35:
                self.globals.append((c, 'g_%s' % c.name, r.randint(1, 50), r.randrange(self.ntu)))
        if self.untyped is not None:
            # -fno-rtti there: no key function may live there (its typeinfo
            # would be missing for the TUs that reference it)
            ur = random.Random(self.seed * 104729 + 7)
            others = [t for t in range(self.ntu) if self.tu_mode[t] == 'lto'] or [0]
            for c in self.classes:
                if c.header and c.home == self.untyped:
                    c.home = ur.choice(others)
            if not self.shape_untyped_classes(self.untyped):
                self.shapes.remove('untyped')
                self.tu_mode[self.untyped] = 'lto'
                self.untyped = None

    # ------------------------------------------------------------- emission
    def ctor(self, c):
        inits = []
        for i, vb in enumerate(self.virtual_ancestors(c)):
            inits.append('%s(s + %dul)' % (vb.name, vb.id + 1))
        direct_vb = set(id(b) for b, v in c.bases if v)
        for b, v in c.bases:
            if not v and id(b) not in direct_vb:
                inits.append('%s(s * 3ul + %dul)' % (b.name, b.id))
        for k, f in enumerate(c.fields):
            inits.append('%s(s * %dul + %dul)' % (f, c.id + 2, k + 1))
        cx = '' if not self.constexpr_ok(c) else 'constexpr '
        return '  %sexplicit %s(unsigned long s)%s { %s}' % (
            cx, c.name, (' : ' + ', '.join(inits)) if inits else '', (c.ctor_call + ' ') if c.ctor_call else '')

    def constexpr_ok(self, c):
        return not self.has_vbase(c) and not any(x.ctor_call for x in self.anc_or_self(c))

    def structor_call(self, c, in_ctor):
        """A virtual call on this in c's constructor or destructor body: the
        dynamic type is then c, so only c's own final overriders run; pick
        one that calls no other virtual and cannot throw."""
        ok = []
        for m in self.scope(c):
            fo = self.overriders(c, m)
            if len(fo) == 1 and fo[0].defs[m.id] != 'PURE' and \
                    fo[0].def_style.get(m.id) in ('const', 'kind', 'expr', 'this'):
                ok.append(m)
        if not ok:
            return None
        m = self.r.choice(ok)
        args = ', '.join(lit(t, v) for t, v in zip(m.params, self.r.choice(m.tuples))) \
            if self.r.random() < 0.5 else self.call_args_from(m, 's' if in_ctor else '7ul')
        call = 'static_cast<unsigned long>(this->%s(%s))' % (m.name, args)
        if in_ctor and c.fields and self.r.random() < 0.6:
            return '%s = mix(%s, %s);' % (c.fields[0], c.fields[0], call)
        if in_ctor:
            return 'std::printf("  ctor %s %%lu\\n", %s);' % (c.name, call)
        return 'g_dtors += %s & 1ul;' % call

    def class_def(self, c):
        out = []
        heads = ', '.join('public %s%s' % ('virtual ' if v else '', b.name) for b, v in c.bases)
        out.append('struct %s%s%s {' % (c.name, ' final' if c.final else '', (' : ' + heads) if heads else ''))
        for f in c.fields:
            out.append('  unsigned long %s;' % f)
        out.append(self.ctor(c))
        if c.dtor is not None:
            v = 'virtual ' if not c.bases else ''
            ov = ' override' if c.bases else ''
            if c.dtor == 'inline':
                out.append('  %s~%s()%s { ++g_dtors; %s}' % (v, c.name, ov, (c.dtor_call + ' ') if c.dtor_call else ''))
            else:
                out.append('  %s~%s()%s;' % (v, c.name, ov))
        emitted = set()
        for mid in sorted(c.defs):
            m = self.methods[mid]
            if m.name in emitted:
                continue   # one declaration overrides every same-named method
            emitted.add(m.name)
            body = c.defs[mid]
            virt = 'virtual ' if m.intro is c else ''
            spec = '' if m.intro is c else ' override'
            if mid in c.final_methods:
                spec += ' final'
            if body == 'PURE':
                out.append('  %s%s%s = 0;' % (virt, m.sig(), spec))
            elif c.inline_def[mid]:
                out.append('  %s%s%s %s' % (virt, m.sig(), spec, body))
            else:
                out.append('  %s%s%s;' % (virt, m.sig(), spec))
        out.append('};')
        return '\n'.join(out)

    def outline_defs(self, c):
        out = []
        if c.dtor == 'outline':
            out.append('%s::~%s() { ++g_dtors; %s}' % (c.name, c.name, (c.dtor_call + ' ') if c.dtor_call else ''))
        emitted = set()
        for mid in sorted(c.defs):
            body = c.defs[mid]
            if self.methods[mid].name in emitted:
                continue
            emitted.add(self.methods[mid].name)
            if body != 'PURE' and not c.inline_def[mid]:
                out.append('%s %s' % (self.methods[mid].qsig(c), body))
        return out

    def driver(self, c, static):
        r = self.r
        out = ['%sunsigned long use_%s(%s &r, unsigned long x) {' % ('static ' if static else '', c.name, c.name),
               '  unsigned long h = %dul;' % c.id]
        for m in self.scope(c):
            vals = []
            for ti, tup in enumerate(m.tuples):
                args = ', '.join(lit(t, v) for t, v in zip(m.params, tup))
                out.append('  long v%d_%d = static_cast<long>(r.%s(%s));' % (m.id, ti, m.name, args))
                vals.append('v%d_%d' % (m.id, ti))
            out.append('  long v%d_x = static_cast<long>(r.%s(%s));' % (m.id, m.name, self.call_args_from(m, 'x')))
            vals.append('v%d_x' % m.id)
            if r.random() < 0.15:
                args = ', '.join(lit(t, v) for t, v in zip(m.params, m.tuples[0]))
                out.append('  long v%d_p = static_cast<long>((r.*(&%s::%s))(%s));' % (m.id, c.name, m.name, args))
                vals.append('v%d_p' % m.id)
            out.append('  std::printf("%s.%s%s\\n", %s);' % (c.name, m.name, ' %ld' * len(vals), ', '.join(vals)))
            out.append('  h = mix(h, static_cast<unsigned long>(%s));' % ' ^ '.join(vals))
        out.append('  return h;')
        out.append('}')
        return '\n'.join(out)

    def guarded(self, stmt, indent='  '):
        return ('%stry { %s } catch (int e) { std::printf("caught %%d\\n", e); total = mix(total, '
                'static_cast<unsigned long>(e)); }' % (indent, stmt))

    def emit(self):
        r = self.r
        self.build_shapes()
        hdr = [c for c in self.classes if c.header]
        split_at = max(1, len(hdr) // 2)
        h1 = ['#pragma once', '#include <cstdio>', '#include <new>', '',
              'extern unsigned long g_dtors;',
              'static inline unsigned long mix(unsigned long h, unsigned long v) '
              '{ return (h ^ v) * 1099511628211ul + 7ul; }', '']
        h2 = ['#pragma once', '#include "h1.hpp"', '']
        for i, c in enumerate(hdr):
            tgt = h1 if i < split_at else h2
            tgt.append(self.class_def(c))
            tgt.append('unsigned long use_%s(%s &r, unsigned long x);' % (c.name, c.name))
            if c in self.concrete:
                tgt.append('%s *make_%s(unsigned long s);' % (c.name, c.name))
            tgt.append('')
        for c, g, s, t in self.globals:
            h2.append('extern %s %s;' % (c.name, g))
        anon = [c for c in self.classes if not c.header]
        anon_factories = []
        for c in anon:
            if c in self.concrete:
                views = [x for x in self.anc_or_self(c) if x.header]
                v = r.choice(views)
                anon_factories.append((c, v))
                h2.append('%s *make_%s(unsigned long s);' % (v.name, c.name))
        anon_tus = sorted(set(c.anon_tu for c in anon))
        for t in anon_tus:
            h2.append('unsigned long run_anon_t%d(unsigned long x);' % t)
        if self.f_hdr:
            h2 += ['', '// shapes: %s' % ' '.join(self.shapes)] + self.f_hdr
        self.out['h1.hpp'] = '\n'.join(h1) + '\n'
        self.out['h2.hpp'] = '\n'.join(h2) + '\n'

        tus = {t: ['#include "h2.hpp"', ''] for t in range(self.ntu)}
        tus[0].append('unsigned long g_dtors = 0;')
        for c in hdr:
            tus[c.home].extend(self.outline_defs(c))
            tus[c.driver_home].append(self.driver(c, False))
            if c in self.concrete:
                tus[c.factory_home].append('%s *make_%s(unsigned long s) { return new %s(s); }' % (c.name, c.name, c.name))
        for c, g, s, t in self.globals:
            tus[t].append('constinit %s %s{%dul};' % (c.name, g, s))
        for t in anon_tus:
            here = [c for c in anon if c.anon_tu == t]
            for c in here:
                if c.named_local:   # untyped shape: a named class of this TU only
                    tus[t].append(self.class_def(c))
            tus[t].append('namespace {')
            for c in here:
                if not c.named_local:
                    tus[t].append(self.class_def(c))
                tus[t].append(self.driver(c, True))
            tus[t].append('} // namespace')
            for c, v in anon_factories:
                if c.anon_tu == t:
                    tus[t].append('%s *make_%s(unsigned long s) { return new %s(s); }' % (v.name, c.name, c.name))
            body = ['unsigned long run_anon_t%d(unsigned long x) {' % t, '  unsigned long total = %dul;' % t]
            for c in here:
                if c not in self.concrete:
                    continue
                views = [v for v in self.anc_or_self(c)]
                pick = [c] + r.sample(views, min(2, len(views)))
                body.append('  {')
                body.append('    %s *p = new %s(x + %dul);' % (c.name, c.name, c.id))
                for v in pick:
                    body.append(self.guarded('total = mix(total, use_%s(*p, x));' % v.name, '    '))
                if r.random() < 0.5:
                    body.append('    %s *q = p;' % pick[-1].name)
                    body.append('    delete q;')
                else:
                    body.append('    delete p;')
                body.append('  }')
            body.append('  return total;')
            body.append('}')
            tus[t].extend(body)

        for t in range(self.ntu):
            tus[t].extend(self.f_tu[t])
        # main
        m = tus[0]
        m.append('int main() {')
        m.append('  unsigned long total = 0;')
        # factory objects through views
        hconc = [c for c in self.concrete if c.header]
        for c in r.sample(hconc, min(len(hconc), 6)):
            views = self.anc_or_self(c)
            for v in r.sample(views, min(len(views), 2)):
                m.append('  {')
                m.append('    %s *p = make_%s(%dul);' % (v.name, c.name, r.randint(0, 99)))
                m.append(self.guarded('total = mix(total, use_%s(*p, %dul));' % (v.name, r.randint(0, 999)), '    '))
                m.append('    delete p;')
                m.append('  }')
        # polymorphic arrays over a common base, with direct calls in main
        for v in hdr:
            objs = [c for c in self.concrete if v in self.anc_or_self(c)]
            if len(objs) < 2 or r.random() < 0.4:
                continue
            objs = r.sample(objs, min(len(objs), 4))
            mk = []
            for c in objs:
                if c.header:
                    mk.append('make_%s(%dul)' % (c.name, r.randint(0, 99)))
                else:
                    f = [fv for fc, fv in anon_factories if fc is c][0]
                    if v in self.anc_or_self(f):
                        mk.append('make_%s(%dul)' % (c.name, r.randint(0, 99)))
            if len(mk) < 2:
                continue
            m.append('  {')
            m.append('    %s *objs[%d] = {%s};' % (v.name, len(mk), ', '.join(mk)))
            m.append('    for (unsigned long i = 0; i < %dul; ++i) {' % r.randint(2, 3))
            m.append('      for (unsigned j = 0; j < %du; ++j) {' % len(mk))
            m.append('        try {')
            m.append('          total = mix(total, use_%s(*objs[j], i));' % v.name)
            for mm in r.sample(self.scope(v), min(2, len(self.scope(v)))):
                tup = r.choice(mm.tuples)
                args = ', '.join(lit(t, x) for t, x in zip(mm.params, tup))
                m.append('          long d%d = static_cast<long>(objs[j]->%s(%s));' % (mm.id, mm.name, args))
                m.append('          std::printf("direct %s.%s %%ld\\n", d%d);' % (v.name, mm.name, mm.id))
                m.append('          total = mix(total, static_cast<unsigned long>(d%d));' % mm.id)
            m.append('        } catch (int e) { std::printf("caught %d\\n", e); total = mix(total, static_cast<unsigned long>(e)); }')
            m.append('      }')
            m.append('    }')
            m.append('    for (unsigned j = 0; j < %du; ++j) delete objs[j];' % len(mk))
            m.append('  }')
        # constinit globals
        for c, g, s, t in self.globals:
            v = r.choice(self.anc_or_self(c))
            m.append(self.guarded('total = mix(total, use_%s(%s, %dul));' % (v.name, g, r.randint(0, 99))))
        # placement new reusing a buffer with another dynamic type
        pairs = []
        for v in hdr:
            objs = [c for c in hconc if v in self.anc_or_self(c)]
            if len(objs) >= 2:
                pairs.append((v, objs))
        if pairs:
            v, objs = r.choice(pairs)
            c1, c2 = r.sample(objs, 2)
            m.append('  {')
            m.append('    alignas(16) static unsigned char buf[sizeof(%s) > sizeof(%s) ? sizeof(%s) : sizeof(%s)];'
                     % (c1.name, c2.name, c1.name, c2.name))
            for k, c in enumerate([c1, c2, c1]):
                m.append('    %s *p%d = new (buf) %s(%dul);' % (v.name, k, c.name, r.randint(0, 99)))
                m.append(self.guarded('total = mix(total, use_%s(*p%d, %dul));' % (v.name, k, k + 5), '    '))
                m.append('    p%d->~%s();' % (k, v.name))
            m.append('  }')
        # anonymous classes through their factories and TU runners
        for c, v in anon_factories:
            m.append('  {')
            m.append('    %s *p = make_%s(%dul);' % (v.name, c.name, r.randint(0, 99)))
            m.append(self.guarded('total = mix(total, use_%s(*p, %dul));' % (v.name, r.randint(0, 99)), '    '))
            m.append('    delete p;')
            m.append('  }')
        for t in anon_tus:
            m.append('  total = mix(total, run_anon_t%d(%dul));' % (t, r.randint(0, 99)))
        m.extend(self.f_main)
        m.append('  std::printf("dtors %lu\\n", g_dtors);')
        m.append('  std::printf("total %lu\\n", total);')
        m.extend(self.f_tail)
        m.append('  return static_cast<int>(total % 61ul);')
        m.append('}')
        for t in range(self.ntu):
            name = 'main.cpp' if t == 0 else 't%d.cpp' % t
            self.out[name] = '\n'.join(tus[t]) + '\n'

        # config
        tl = []
        for t in range(self.ntu):
            name = 'main.cpp' if t == 0 else 't%d.cpp' % t
            tl.append('%s:%s' % (self.tu_mode[t], name))
        # shape TUs: a native patch goes first on the line (muldefs), a
        # bitcode shared library is linked by wpd-ld of its own (interposed)
        for name, (mode, lines) in sorted(self.extra_tus.items()):
            self.out[name] = '\n'.join(['#include "h2.hpp"', ''] + lines) + '\n'
            if mode == 'patch':
                tl.insert(0, '%s:%s' % (mode, name))
            else:
                tl.append('%s:%s' % (mode, name))
        # plugins loaded with dlopen: files of their own, not the program's
        for name, lines in sorted(self.dl_plugins.items()):
            self.out[name] = '\n'.join(lines) + '\n'
            tl.append('dlopen:%s' % name)
        # C libraries every link names with --as-needed
        for name, lines in sorted(self.c_libs.items()):
            self.out[name] = '\n'.join(lines) + '\n'
            tl.append('cneeded:%s' % name)
        trap = 'trap-called' in self.shapes
        cfg = ['# generated by gen.py --seed %d' % self.seed,
               'TUS="%s"' % ' '.join(tl),
               'SPLIT=%d' % (1 if self.split else 0),
               'HIDDEN=%d' % (1 if self.hidden else 0),
               'NATIVE=%d' % len(self.native),
               'SHARED=%d' % (0 if self.shared is None else 1),
               'ARCHIVE=%d' % (1 if self.archive else 0),
               'OPT=%s' % self.opt,
               'DEBUG=%d' % (1 if self.debug else 0),
               'NORTTI=%d' % (1 if self.nortti else 0),
               'LINKER=%s' % self.linker,
               'SPECULATE=%s' % self.speculate,
               'SHAPES="%s"' % ' '.join(self.shapes),
               'TRAP=%d' % (1 if trap else 0),
               'MULDEFS=%d' % (1 if 'muldefs' in self.shapes else 0),
               'FAT=%d' % (1 if 'fat' in self.shapes else 0),
               'RELATIVE=%d' % (1 if 'relative' in self.shapes else 0),
               'IPEXPORT="%s"' % ' '.join(self.ip_exports)]
        if self.archive and self.arform != 'plain':   # only then: other seeds keep their config.sh
            cfg.append('ARFORM=%s' % self.arform)
        if self.xflags:   # only then: other seeds keep their config.sh
            cfg.append('XFLAGS="%s"' % ' '.join(self.xflags))
        if self.dl_exports:   # exported-caller (only then: other seeds keep their config.sh)
            cfg.append('DLEXPORT="%s"' % ' '.join(self.dl_exports))
        self.out['config.sh'] = '\n'.join(cfg) + '\n'
        # summary
        s = []
        for c in self.classes:
            bases = ', '.join(('virtual ' if v else '') + b.name for b, v in c.bases)
            s.append('%s%s%s : [%s] home=%s mode=%s %s' % (
                c.name, ' final' if c.final else '', ' abstract' if c not in self.concrete else '',
                bases, 'main' if c.home == 0 else 't%d' % c.home,
                c.mode if c.header else 'anon', ' '.join('%s:%s%s' % (self.methods[k].name, self.methods[k].style,
                                                                       '=0' if c.defs[k] == 'PURE' else '')
                                                         for k in sorted(c.defs))))
        s.append('TU modes: ' + ' '.join(tl))
        s.append('split=%d hidden=%d archive=%d%s' % (self.split, self.hidden, self.archive,
                                                      ' (%s)' % self.arform if self.archive else ''))
        s.append('shapes: %s' % (' '.join(self.shapes) or '-'))
        self.out['summary.txt'] = '\n'.join(s) + '\n'


    # ------------------------------------------------------------ new shapes
    # Each shape draws from its own generator (seeded by the seed and the
    # shape's name), and a seed without any new shape writes exactly the
    # program it wrote before shapes existed. Shapes add their classes to
    # h2.hpp (FC below), their functions to chosen TUs, and one guarded call
    # of run_<shape><k>() to main.

    @contextmanager
    def using(self, rng):
        """Runs the body with self.r = rng (so body(), expr() ... draw from it)."""
        saved = self.r
        self.r = rng
        try:
            yield
        finally:
            self.r = saved

    def frng(self, shape, k=0):
        return random.Random('%d:%s:%d' % (self.seed, shape, k))

    def pick_tu(self, rng, exclude=(), code=False):
        """A TU for shape code: mostly an LTO TU, sometimes any other; the
        untyped TU (-fno-rtti) only for functions (code=True), never for
        member functions (a key function there would lose its typeinfo)."""
        if not code and self.untyped is not None:
            exclude = tuple(exclude) + (self.untyped,)
        lto = [t for t in range(self.ntu) if self.tu_mode[t] == 'lto' and t not in exclude]
        anyt = [t for t in range(self.ntu) if t not in exclude]
        if lto and (rng.random() < 0.8 or not anyt):
            return rng.choice(lto)
        return rng.choice(anyt or list(range(self.ntu)))

    def fexpr(self, rng, ret, params, fields, style):
        """Return expression of a shape method: const, expr (arguments only)
        or this (arguments and fields)."""
        pl = ['static_cast<unsigned long>(a%d)' % i for i in range(len(params))]
        with self.using(rng):
            if style == 'const' or (style == 'expr' and not pl):
                return lit(ret, max(RANGE[ret][0], min(RANGE[ret][1], rng.randint(0, 9))))
            if style == 'expr':
                return cast_from_ul(ret, self.expr(3, pl))
            return cast_from_ul(ret, self.expr(3, pl + ['this->%s' % f for f in fields] or ['3ul']))

    def kargs(self, rng, params):
        return ', '.join(lit(t, rng.randint(0, 5) if rng.random() < 0.6 else rng.randint(*RANGE[t]))
                         for t in params)

    def vargs(self, params, base):
        out = []
        for i, t in enumerate(params):
            e = '(%s + %dul)' % (base, i * 3 + 1)
            out.append('static_cast<bool>(%s & 1ul)' % e if t == 'bool' else 'static_cast<%s>(%s)' % (t, e))
        return ', '.join(out)

    def emit_fc(self, fc):
        self.f_hdr.append(fc.text())
        for t, text in fc.outline:
            self.f_tu[t].append(text)

    def factory(self, fc, view, t):
        self.f_hdr.append('%s *make_%s(unsigned long s);' % (view, fc.name))
        self.f_tu[t].append('%s *make_%s(unsigned long s) { return new %s(s); }' % (view, fc.name, fc.name))
        return 'make_%s' % fc.name

    def declare_run(self, name, t, lines):
        self.f_hdr.append('unsigned long %s(unsigned long x);' % name)
        self.f_tu[t].append('unsigned long %s(unsigned long x) {' % name)
        self.f_tu[t].extend('  ' + ln for ln in lines)
        self.f_tu[t].append('}')

    def shape_root(self, rng, name, fields, ret, params, mname, pure_p, home, attr='', cv='', pad=False):
        """A root with a virtual destructor and virtual mname (pure with
        probability pure_p); pad puts another virtual before it (another
        slot offset)."""
        fc = FC(self, name, [])
        fc.fields = fields
        fc.dtor(home=home if rng.random() < 0.5 else None, virtual=True)
        if pad:
            fc.method('unsigned long', 'pad_%s' % name, ['unsigned long'], '{ return a0 + %dul; }' % rng.randint(0, 9),
                      virtual=True)
        if rng.random() < pure_p:
            fc.method(ret, mname, params, 'PURE', virtual=True, attr=attr, cv=cv)
            return fc, True
        fc.method(ret, mname, params, '{ return %s; }' % self.fexpr(rng, ret, params, fields,
                                                                   rng.choice(['const', 'expr', 'this'])),
                  virtual=True, attr=attr, cv=cv, home=home if rng.random() < 0.5 else None)
        return fc, False

    def shape_merged(self, k):
        """Calls through two or three (possibly unrelated) classes with one
        signature in the two arms of a conditional inside a loop: clang -O2
        sinks them into one call whose type tests meet in a select/phi
        feeding one llvm.assume."""
        rng = self.frng('merged-calls', k)
        ret = rng.choice(TYPES)
        params = [rng.choice(TYPES) for _ in range(rng.choice([1, 1, 2]))]
        mname = 'mg%d' % k
        t_cls, t_fac, t_loop, t_run = self.pick_tu(rng), self.pick_tu(rng, code=True), \
            self.pick_tu(rng, code=True), self.pick_tu(rng, code=True)
        nroots = rng.choice([2, 2, 3])
        related = rng.random() < 0.3
        roots, concrete = [], []   # concrete[j]: concrete class names usable as roots[j]
        pure0 = False
        for j in range(nroots):
            rn = 'Mg%d%s' % (k, 'ABC'[j])
            fields = ['f%s' % rn.lower()]
            if j == 1 and related:
                # B derives from A: the same method through two static types
                fc = FC(self, rn, [roots[0]])
                fc.fields = fields
                fc.dtor(home=None, virtual=False)
                if pure0 or rng.random() < 0.6:
                    fc.method(ret, mname, params, '{ return %s; }' % self.fexpr(rng, ret, params, fields, 'this'),
                              override=True)
                concrete[0].append(rn)
                concrete.append([rn])
            else:
                fc, pure = self.shape_root(rng, rn, fields, ret, params, mname, 0.3, t_cls,
                                           pad=rng.random() < 0.4)
                pure0 = pure0 or (j == 0 and pure)
                concrete.append([] if pure else [rn])
            roots.append(fc)
            self.emit_fc(fc)
        subs = []
        for j in range(nroots):
            for s in range(rng.choice([1, 1, 2])):
                sn = '%s%d' % (roots[j].name, s + 1)
                fc = FC(self, sn, [roots[j]])
                fc.fields = ['f%s' % sn.lower()]
                fc.dtor(home=None, virtual=False)
                uniform = rng.random() < 0.3
                body = '{ return %s; }' % (lit(ret, 1) if uniform else
                                           self.fexpr(rng, ret, params, fc.fields, rng.choice(['const', 'expr', 'this'])))
                fc.method(ret, mname, params, body, override=True, home=t_cls if rng.random() < 0.4 else None)
                if rng.random() < 0.2:
                    fc.final = True
                self.emit_fc(fc)
                subs.append(fc)
                concrete[j].append(sn)
                if j == 1 and related:
                    concrete[0].append(sn)
        makers = {}
        for fc in roots + subs:
            if any(fc.name in cs for cs in concrete):
                makers[fc.name] = self.factory(fc, fc.name, t_fac)
        names = 'abc'[:nroots]
        sig = ', '.join('%s &%s' % (roots[j].name, names[j]) for j in range(nroots))
        loop = ['unsigned long mg%d_loop(%s, unsigned long n) {' % (k, sig), '  unsigned long s = %dul;' % k,
                '  for (unsigned long i = 0; i < n; ++i) {']
        args = self.vargs(params, 'i') if rng.random() < 0.6 else self.kargs(rng, params)
        call = ['%s.%s(%s)' % (names[j], mname, args) for j in range(nroots)]
        form = rng.choice(['ternary', 'if'])
        if nroots == 2 and form == 'ternary':
            loop.append('    s = mix(s, static_cast<unsigned long>((i & 1ul) ? %s : %s));' % (call[0], call[1]))
        elif nroots == 2:
            loop.append('    if ((i & 1ul) != 0ul) s += static_cast<unsigned long>(%s);' % call[0])
            loop.append('    else s += static_cast<unsigned long>(%s);' % call[1])
        elif form == 'ternary':
            loop.append('    s = mix(s, static_cast<unsigned long>(i %% 3ul == 0ul ? %s : i %% 3ul == 1ul ? %s : %s));'
                        % tuple(call))
        else:
            loop.append('    switch (i % 3ul) {')
            for j in range(3):
                loop.append('    %s: s += static_cast<unsigned long>(%s); break;'
                            % ('case %dul' % j if j < 2 else 'default', call[j]))
            loop.append('    }')
        loop += ['  }', '  return s;', '}']
        self.f_hdr.append('unsigned long mg%d_loop(%s, unsigned long n);' % (k, sig))
        self.f_tu[t_loop].extend(loop)
        run = ['unsigned long h = 0;']
        for rep in range(rng.choice([1, 2])):
            picks = [rng.choice(concrete[j]) for j in range(nroots)]
            for j, p in enumerate(picks):
                run.append('%s *%s%d = %s(x + %dul);' % (roots[j].name, names[j], rep, makers[p], j + rep))
            run.append('h = mix(h, mg%d_loop(%s, %dul));' % (k, ', '.join('*%s%d' % (names[j], rep)
                                                                         for j in range(nroots)), rng.randint(3, 9)))
            run.append('std::printf("merged%d.%d %%lu\\n", h);' % (k, rep))
            for j in range(nroots):
                run.append('delete %s%d;' % (names[j], rep))
        # the same through classes of the random hierarchy, when two of them
        # have a method of one name and signature (inherited or twins)
        hcands = []
        hconc = [c for c in self.concrete if c.header]
        hdr = [c for c in self.classes if c.header]
        for x in hdr:
            for y in hdr:
                if x is y:
                    continue
                cx = [c for c in hconc if x in self.anc_or_self(c)]
                cy = [c for c in hconc if y in self.anc_or_self(c)]
                if not cx or not cy:
                    continue
                for mx in self.scope(x):
                    for my in self.scope(y):
                        if mx.name == my.name and mx.ret == my.ret and mx.params == my.params:
                            hcands.append((x, y, mx, cx, cy))
        if hcands and rng.random() < 0.7:
            x, y, mx, cx, cy = rng.choice(hcands)
            hl = ['unsigned long mgh%d_loop(%s &a, %s &b, unsigned long n) {' % (k, x.name, y.name),
                  '  unsigned long s = 0;', '  for (unsigned long i = 0; i < n; ++i)']
            args = self.vargs(mx.params, 'i') if rng.random() < 0.6 else self.kargs(rng, mx.params)
            hl.append('    s = mix(s, static_cast<unsigned long>((i & 1ul) ? a.%s(%s) : b.%s(%s)));'
                      % (mx.name, args, mx.name, args))
            hl += ['  return s;', '}']
            self.f_hdr.append('unsigned long mgh%d_loop(%s &a, %s &b, unsigned long n);' % (k, x.name, y.name))
            self.f_tu[self.pick_tu(rng, code=True)].extend(hl)
            px, py = rng.choice(cx), rng.choice(cy)
            run += ['%s *p = make_%s(x);' % (px.name, px.name), '%s *q = make_%s(x + 1ul);' % (py.name, py.name),
                    'h = mix(h, mgh%d_loop(*p, *q, %dul));' % (k, rng.randint(3, 6)),
                    'std::printf("merged%d.h %%lu\\n", h);' % k, 'delete p;', 'delete q;']
        run.append('return h;')
        self.declare_run('run_mg%d' % k, t_run, run)
        self.f_main.append(self.guarded('total = mix(total, run_mg%d(%dul));' % (k, rng.randint(0, 99))))

    def shape_multibase(self, k):
        """[[gnu::pure]]/[[gnu::const]] const virtual calls on one object
        through several (primary) bases in one function: GVN reuses one
        loaded vtable pointer, tested by two type tests that both dominate
        the second call."""
        rng = self.frng('multi-base', k)
        t_cls, t_fac, t_fn, t_run = self.pick_tu(rng), self.pick_tu(rng, code=True), \
            self.pick_tu(rng, code=True), self.pick_tu(rng, code=True)
        rp, pp = rng.choice(TYPES), [rng.choice(TYPES) for _ in range(rng.choice([1, 1, 2]))]
        rq, pq = rng.choice(TYPES), [rng.choice(TYPES) for _ in range(rng.choice([1, 2]))]
        ap = '[[gnu::pure]] '
        aq = rng.choice(['[[gnu::const]] ', '[[gnu::pure]] '])
        qstyles = ['const', 'expr'] if 'const' in aq else ['const', 'expr', 'this']
        pa, pb = 'Pm%dA' % k, 'Pm%dB' % k
        a = FC(self, pa, [])
        a.fields = ['f%s' % pa.lower()]
        a.dtor(home=t_cls if rng.random() < 0.4 else None, virtual=True)
        a_pure = rng.random() < 0.3
        a.method(rp, 'p%d' % k, pp, 'PURE' if a_pure else
                 '{ return %s; }' % self.fexpr(rng, rp, pp, a.fields, 'this'), virtual=True, attr=ap, cv=' const')
        a.method(rq, 'q%d' % k, pq, '{ return %s; }' % self.fexpr(rng, rq, pq, a.fields, rng.choice(qstyles)),
                 virtual=True, attr=aq, cv=' const', home=t_cls if rng.random() < 0.4 else None)
        self.emit_fc(a)
        b = FC(self, pb, [a])
        b.fields = ['f%s' % pb.lower()]
        b.dtor(home=None, virtual=False)
        b.method(rp, 'p%d' % k, pp, '{ return %s; }' % self.fexpr(rng, rp, pp, b.fields + a.fields, 'this'),
                 override=True, attr=ap, cv=' const', home=t_cls if rng.random() < 0.5 else None)
        self.emit_fc(b)
        x = None
        if rng.random() < 0.4:
            x = FC(self, 'Pm%dX' % k, [])
            x.fields = ['fpm%dx' % k]
            x.dtor(home=None, virtual=True)
            x.method('int', 'x%d' % k, ['int'], '{ return a0 + %d; }' % rng.randint(0, 9), virtual=True, attr=ap,
                     cv=' const')
            self.emit_fc(x)
        leaves = [b]
        for s in range(rng.choice([1, 2])):
            bases = [b] + ([x] if x is not None and s == 0 else [])
            c = FC(self, 'Pm%dC%d' % (k, s), bases)
            c.fields = ['fpm%dc%d' % (k, s)]
            c.dtor(home=None, virtual=False)
            if rng.random() < 0.7:
                c.method(rp, 'p%d' % k, pp, '{ return %s; }' % self.fexpr(rng, rp, pp, c.fields, rng.choice(
                    ['const', 'expr', 'this'])), override=True, attr=ap, cv=' const')
            if rng.random() < 0.6:
                c.method(rq, 'q%d' % k, pq, '{ return %s; }' % self.fexpr(rng, rq, pq, c.fields, rng.choice(qstyles)),
                         override=True, attr=aq, cv=' const', home=t_cls if rng.random() < 0.3 else None)
            if x is not None and s == 0 and rng.random() < 0.7:
                c.method('int', 'x%d' % k, ['int'], '{ return a0 * %d; }' % rng.randint(1, 9), override=True,
                         attr=ap, cv=' const')
            self.emit_fc(c)
            leaves.append(c)
        makers = [(fc, self.factory(fc, pb, t_fac)) for fc in leaves]
        ul = 'static_cast<unsigned long>'
        fn = ['unsigned long pm%d(const %s *b, unsigned long x) {' % (k, pb),
              '  unsigned long r = %s(b->p%d(%s)) + %s(static_cast<const %s *>(b)->p%d(%s));'
              % (ul, k, self.kargs(rng, pp), ul, pa, k, self.kargs(rng, pp)),
              '  r = mix(r, %s(b->q%d(%s)) ^ %s(static_cast<const %s *>(b)->q%d(%s)));'
              % (ul, k, self.vargs(pq, 'x'), ul, pa, k, self.vargs(pq, 'x')),
              '  return mix(r, %s(static_cast<const %s *>(b)->p%d(%s)));' % (ul, pa, k, self.vargs(pp, 'x')),
              '}']
        self.f_hdr.append('unsigned long pm%d(const %s *b, unsigned long x);' % (k, pb))
        self.f_tu[t_fn].extend(fn)
        run = ['unsigned long h = 0;']
        objs = [(fc, mk) for fc, mk in makers if not (fc is b and a_pure and 'p%d' % k not in b.defined)]
        run.append('%s *objs[%d] = {%s};' % (pb, len(objs), ', '.join('%s(x + %dul)' % (mk, i)
                                                                      for i, (fc, mk) in enumerate(objs))))
        run.append('for (unsigned i = 0; i < %du; ++i) h = mix(h, pm%d(objs[i], x + i));' % (len(objs), k))
        if x is not None:
            c0 = leaves[1]
            xf = ['unsigned long pmx%d(const %s *c) {' % (k, c0.name),
                  '  return %s(c->p%d(%s)) + %s(static_cast<const %s *>(c)->p%d(%s)) +'
                  % (ul, k, self.kargs(rng, pp), ul, pa, k, self.kargs(rng, pp)),
                  '         %s(static_cast<const %s *>(c)->x%d(3)) + %s(c->x%d(4));' % (ul, x.name, k, ul, k),
                  '}']
            self.f_hdr.append('unsigned long pmx%d(const %s *c);' % (k, c0.name))
            self.f_tu[t_fn].extend(xf)
            run.append('{ %s *c = new %s(x); h = mix(h, pmx%d(c)); delete c; }' % (c0.name, c0.name, k))
        run.append('std::printf("multi%d %%lu\\n", h);' % k)
        run.append('for (unsigned i = 0; i < %du; ++i) delete objs[i];' % len(objs))
        run.append('return h;')
        self.declare_run('run_pm%d' % k, t_run, run)
        self.f_main.append(self.guarded('total = mix(total, run_pm%d(%dul));' % (k, rng.randint(0, 99))))

    def shape_constvt(self, k):
        """Base *s = new Derived; s->m(); in two functions of one TU, each
        calling another slot, Derived's vtable defined in another TU (key
        function): after inlining the constructor the type tests test the
        constant address point."""
        rng = self.frng('const-vtable', k)
        t_key = self.pick_tu(rng)
        t_call = self.pick_tu(rng, exclude=(t_key,), code=True)
        kb, kd = 'Kv%dB' % k, 'Kv%dD' % k
        nslots = rng.choice([2, 2, 3])
        sigs = [(rng.choice(TYPES), [rng.choice(TYPES) for _ in range(rng.choice([0, 1, 2]))]) for _ in range(nslots)]
        base = FC(self, kb, [])
        base.fields = ['fkv%db' % k]
        # mostly k0 first: its slot is at the address point, so its load uses
        # the very constant the type tests test
        dtor_first = self.frng('const-vtable-dtor', k).random() < 0.3
        if dtor_first:
            base.dtor(home=None, virtual=True)
        kb_home = self.pick_tu(rng) if rng.random() < 0.4 else None
        for i, (ret, ps) in enumerate(sigs):
            if rng.random() < 0.25:
                base.method(ret, 'k%d' % i, ps, 'PURE', virtual=True)
            else:
                base.method(ret, 'k%d' % i, ps, '{ return %s; }' % self.fexpr(rng, ret, ps, base.fields, 'this'),
                            virtual=True, home=kb_home)
        if not dtor_first:
            base.dtor(home=None, virtual=True)
        self.emit_fc(base)
        d = FC(self, kd, [base])
        d.fields = ['fkv%dd' % k]
        for i, (ret, ps) in enumerate(sigs):
            d.method(ret, 'k%d' % i, ps, '{ return %s; }' % self.fexpr(rng, ret, ps, d.fields + base.fields,
                                                                       rng.choice(['const', 'expr', 'this'])),
                     override=True, home=t_key)
        d.dtor(home=t_key if rng.random() < 0.5 else None, virtual=False)
        self.emit_fc(d)
        others = []
        if rng.random() < 0.5:
            e = FC(self, 'Kv%dE' % k, [base])
            for i, (ret, ps) in enumerate(sigs):
                e.method(ret, 'k%d' % i, ps, '{ return %s; }' % self.fexpr(rng, ret, ps, [], 'expr'), override=True)
            e.dtor(home=None, virtual=False)
            self.emit_fc(e)
            others.append(e)
        fns = []
        slots = list(range(nslots))
        rng.shuffle(slots)
        for n, i in enumerate(slots):
            ret, ps = sigs[i]
            static = kb if n < 2 or rng.random() < 0.5 else kd
            args = self.kargs(rng, ps) if rng.random() < 0.5 else self.vargs(ps, 'x')
            f = 'kv%d_%d' % (k, n)
            self.f_tu[t_call] += ['unsigned long %s(unsigned long x) {' % f,
                                  '  %s *s = new %s(x + %dul);' % (static, kd, n),
                                  '  unsigned long r = static_cast<unsigned long>(s->k%d(%s));' % (i, args),
                                  '  delete s;', '  return r;', '}']
            self.f_hdr.append('unsigned long %s(unsigned long x);' % f)
            fns.append(f)
        run = ['unsigned long h = %dul;' % k]
        run += ['h = mix(h, %s(x));' % f for f in fns]
        for e in others:
            ret, ps = rng.choice(sigs)
            run.append('{ %s *s = new %s(x); h = mix(h, static_cast<unsigned long>(s->k%d(%s))); delete s; }'
                       % (kb, e.name, sigs.index((ret, ps)), self.vargs(ps, 'x')))
        run += ['std::printf("constvt%d %%lu\\n", h);' % k, 'return h;']
        self.declare_run('run_kv%d' % k, self.pick_tu(rng, code=True), run)
        self.f_main.append(self.guarded('total = mix(total, run_kv%d(%dul));' % (k, rng.randint(0, 99))))

    def shape_placement(self, k):
        """Placement new and explicit destructor calls p->~T() through the
        class and through a base; T's destructor is defined in the TU of the
        calls (clang makes D1 an alias of D2 there), its vtable in the TU of
        its key function."""
        rng = self.frng('placement-dtor', k)
        t_key = self.pick_tu(rng)
        t_call = self.pick_tu(rng, exclude=(t_key,))
        db, dt, du = 'Pd%dB' % k, 'Pd%dT' % k, 'Pd%dU' % k
        ret, ps = rng.choice(TYPES), [rng.choice(TYPES) for _ in range(rng.choice([0, 1, 2]))]
        b = FC(self, db, [])
        b.fields = ['fpd%db' % k]
        b_home = t_key if rng.random() < 0.5 else None
        b.method(ret, 'key%d' % k, ps, '{ return %s; }' % self.fexpr(rng, ret, ps, b.fields, 'this'), virtual=True,
                 home=b_home)
        b.dtor(home=b_home, virtual=True, body='g_dtors += 1ul; std::printf("  ~%s %%lu\\n", %s);' % (db, b.fields[0]))
        self.emit_fc(b)
        t = FC(self, dt, [b], final=rng.random() < 0.3)
        t.fields = ['fpd%dt' % k]
        t.method(ret, 'key%d' % k, ps, '{ return %s; }' % self.fexpr(rng, ret, ps, t.fields, rng.choice(
            ['const', 'expr', 'this'])), override=True, home=t_key)
        t.dtor(home=t_call, virtual=False, body='g_dtors += 2ul; std::printf("  ~%s %%lu\\n", %s);' % (dt, t.fields[0]))
        self.emit_fc(t)
        classes = [t]
        if rng.random() < 0.5:
            u = FC(self, du, [b])
            u.fields = ['fpd%du' % k]
            u.method(ret, 'key%d' % k, ps, '{ return %s; }' % self.fexpr(rng, ret, ps, u.fields, 'expr'),
                     override=True, home=t_key if rng.random() < 0.5 else None)
            u.dtor(home=t_call if rng.random() < 0.6 else None, virtual=False,
                   body='g_dtors += 3ul; std::printf("  ~%s %%lu\\n", %s);' % (du, u.fields[0]))
            self.emit_fc(u)
            classes.append(u)
        size = 'sizeof(%s)' % dt if len(classes) == 1 else \
            '(sizeof(%s) > sizeof(%s) ? sizeof(%s) : sizeof(%s))' % (dt, du, dt, du)
        args = self.kargs(rng, ps) if rng.random() < 0.5 else self.vargs(ps, 'x')
        run = ['alignas(16) static unsigned char buf[%s];' % size,
               '%s *p = new (buf) %s(x);' % (dt, dt),
               'unsigned long r = static_cast<unsigned long>(p->key%d(%s));' % (k, args),
               'p->~%s();' % dt,
               '%s *b = new (buf) %s(x + 1ul);' % (db, dt),
               'r = mix(r, static_cast<unsigned long>(b->key%d(%s)));' % (k, args),
               'b->~%s();' % db]
        if len(classes) > 1:
            run += ['b = new (buf) %s(x + 2ul);' % du,
                    'r = mix(r, static_cast<unsigned long>(b->key%d(%s)));' % (k, args),
                    'b->~%s();' % db]
        if rng.random() < 0.5:
            run += ['%s *q = new (buf) %s(x + 3ul);' % (dt, dt), 'q->%s::~%s();' % (dt, dt)]
        run += ['std::printf("placement%d %%lu\\n", r);' % k, 'return r;']
        self.declare_run('run_pd%d' % k, t_call, run)
        self.f_main.append(self.guarded('total = mix(total, run_pd%d(%dul));' % (k, rng.randint(0, 99))))

    def shape_trap(self, k, called):
        """An override whose body is only __builtin_trap(). When called, main
        calls it last (after flushing stdout): every build dies of SIGILL
        (TRAP=1 in config.sh); otherwise its object is live but the trapping
        slot is only ever called on the other classes."""
        rng = self.frng('trap', k)
        t_cls, t_fac, t_fn, t_run = self.pick_tu(rng), self.pick_tu(rng, code=True), \
            self.pick_tu(rng, code=True), self.pick_tu(rng, code=True)
        tb = 'Tr%dB' % k
        ret, ps = rng.choice(TYPES), [rng.choice(TYPES) for _ in range(rng.choice([0, 1, 1, 2]))]
        b, pure = self.shape_root(rng, tb, ['ftr%db' % k], ret, ps, 't%d' % k, 0.4, t_cls)
        b.method('unsigned long', 'o%d' % k, ['unsigned long'], '{ return a0 * %dul + this->ftr%db; }'
                 % (rng.randint(1, 9), k), virtual=True)
        self.emit_fc(b)
        nok = rng.choice([1, 1, 2])
        uniform = rng.random() < 0.5
        oks = []
        for i in range(nok):
            c = FC(self, 'Tr%dK%d' % (k, i), [b])
            c.fields = ['ftr%dk%d' % (k, i)]
            c.method(ret, 't%d' % k, ps, '{ return %s; }' % (lit(ret, 1) if uniform else self.fexpr(
                rng, ret, ps, c.fields, rng.choice(['const', 'expr', 'this']))), override=True,
                home=t_cls if rng.random() < 0.4 else None)
            c.dtor(home=None, virtual=False)
            self.emit_fc(c)
            oks.append(c)
        tt = FC(self, 'Tr%dT' % k, [b], final=rng.random() < 0.3)
        tt.fields = ['ftr%dt' % k]
        tt.method(ret, 't%d' % k, ps, '{ __builtin_trap(); }', override=True,
                  home=self.pick_tu(rng) if rng.random() < 0.5 else None)
        if rng.random() < 0.5:
            tt.method('unsigned long', 'o%d' % k, ['unsigned long'], '{ return a0 + 1ul; }', override=True)
        tt.dtor(home=None, virtual=False)
        self.emit_fc(tt)
        mk = [self.factory(c, tb, t_fac) for c in oks]
        mkt = self.factory(tt, tb, t_fac)
        args = self.kargs(rng, ps) if rng.random() < 0.5 else self.vargs(ps, 'x')
        self.f_hdr.append('unsigned long trt%d(%s *const *objs, unsigned n, unsigned long x);' % (k, tb))
        self.f_hdr.append('unsigned long tro%d(%s *const *objs, unsigned n, unsigned long x);' % (k, tb))
        self.f_tu[t_fn] += [
            'unsigned long trt%d(%s *const *objs, unsigned n, unsigned long x) {' % (k, tb),
            '  unsigned long h = x;',
            '  for (unsigned i = 0; i < n; ++i) h = mix(h, static_cast<unsigned long>(objs[i]->t%d(%s)));' % (k, args),
            '  return h;', '}',
            'unsigned long tro%d(%s *const *objs, unsigned n, unsigned long x) {' % (k, tb),
            '  unsigned long h = x;',
            '  for (unsigned i = 0; i < n; ++i) h = mix(h, objs[i]->o%d(x + i));' % k,
            '  return h;', '}']
        run = ['%s *objs[%d] = {%s};' % (tb, nok + 1, ', '.join(['%s(x + %dul)' % (m, i) for i, m in enumerate(mk)]
                                                             + ['%s(x)' % mkt])),
               'unsigned long h = tro%d(objs, %du, x);' % (k, nok + 1),
               'h = mix(h, trt%d(objs, %du, x));' % (k, nok),
               'std::printf("trap%d %%lu\\n", h);' % k,
               'for (unsigned i = 0; i < %du; ++i) delete objs[i];' % (nok + 1),
               'return h;']
        self.declare_run('run_tr%d' % k, t_run, run)
        self.f_main.append(self.guarded('total = mix(total, run_tr%d(%dul));' % (k, rng.randint(0, 99))))
        if called:
            self.declare_run('trap_now%d' % k, self.pick_tu(rng, code=True),
                             ['%s *objs[%d] = {%s};' % (tb, nok + 1, ', '.join(['%s(x)' % m for m in mk] + ['%s(x)' % mkt])),
                              'unsigned long h = trt%d(objs, %du, x);  // the last one traps' % (k, nok + 1),
                              'for (unsigned i = 0; i < %du; ++i) delete objs[i];' % (nok + 1),
                              'return h;'])
            self.f_tail += ['  std::printf("trap next\\n");', '  std::fflush(stdout);',
                            '  total = mix(total, trap_now%d(%dul));' % (k, rng.randint(0, 99)),
                            '  std::printf("trap survived %lu\\n", total);']

    UNI_CLASSES = ['Carr\u00e9', 'Gr\u00f6\u00dfe', '\u03a9', '\u0394\u03ad\u03bb\u03c4\u03b1', '\u00d1and\u00fa',
                   '\u0141\u00f3d\u017a', '\u00d8re', '\u00c7ay', '\u00dcber', '\u0416\u0443\u043a',
                   '\u03a0\u03c1\u03af\u03c3\u03bc\u03b1', 'K\u00e4se']
    UNI_METHODS = ['gr\u00f6\u00dfe', '\u03c9', 'na\u00efve', 'fa\u00e7ade', '\u00fcber', '\u03bb', 'd\u00e9j\u00e0',
                   '\u03c0', '\u00f1o\u00f1o', '\u0436\u0438\u0442\u044c', 'c\u00f4t\u00e9']

    def shape_unicode_rename(self):
        """Non-ASCII names for some classes and methods of the random
        hierarchy (drivers, factories and globals follow)."""
        rng = self.frng('unicode', 1)
        ren = {}
        for c in self.classes:
            if rng.random() < 0.5:
                ren[c.name] = '%s%d' % (rng.choice(self.UNI_CLASSES), c.id)
        for name in sorted(set(m.name for m in self.methods), key=lambda n: int(n[1:])):
            if rng.random() < 0.5:
                ren[name] = '%s%s' % (rng.choice(self.UNI_METHODS), name[1:])
        if not ren:
            return
        # bodies, constructor and destructor statements were written with
        # the old names (calls on this, printed names): rename whole words
        pat = re.compile(r'(?<!\w)(%s)(?!\w)' % '|'.join(sorted(ren, key=len, reverse=True)))
        for c in self.classes:
            c.defs = {k: (v if v == 'PURE' else pat.sub(lambda mo: ren[mo.group(1)], v)) for k, v in c.defs.items()}
            c.ctor_call = c.ctor_call and pat.sub(lambda mo: ren[mo.group(1)], c.ctor_call)
            c.dtor_call = c.dtor_call and pat.sub(lambda mo: ren[mo.group(1)], c.dtor_call)
            c.name = ren.get(c.name, c.name)
        for m in self.methods:
            m.name = ren.get(m.name, m.name)
        self.globals = [(c, 'g_%s' % c.name, s, t) for c, g, s, t in self.globals]

    def shape_unicode(self, k):
        """A hierarchy with non-ASCII class, method and field names, called
        directly and through pointers to member functions."""
        rng = self.frng('unicode', 2 + k)
        t_cls, t_fac, t_run = self.pick_tu(rng), self.pick_tu(rng, code=True), self.pick_tu(rng, code=True)
        cn = rng.sample(self.UNI_CLASSES, 3)
        mn = rng.sample(self.UNI_METHODS, 2)
        ret, ps = rng.choice(TYPES), [rng.choice(TYPES) for _ in range(rng.choice([0, 1, 2]))]
        root = FC(self, '%s_%d' % (cn[0], k), [])
        root.fields = ['%s%d' % (rng.choice(self.UNI_METHODS), k)]
        root.dtor(home=t_cls if rng.random() < 0.5 else None, virtual=True)
        for m in mn:
            root.method(ret, m, ps, '{ return %s; }' % self.fexpr(rng, ret, ps, root.fields, 'this'), virtual=True,
                        home=t_cls if rng.random() < 0.4 else None)
        self.emit_fc(root)
        subs = []
        for i in (1, 2):
            c = FC(self, '%s_%d' % (cn[i], k), [root])
            for m in mn:
                if rng.random() < 0.7:
                    c.method(ret, m, ps, '{ return %s; }' % self.fexpr(rng, ret, ps, root.fields, rng.choice(
                        ['const', 'expr', 'this'])), override=True, home=t_cls if rng.random() < 0.3 else None)
            c.dtor(home=None, virtual=False)
            self.emit_fc(c)
            subs.append(c)
        mk = [self.factory(c, root.name, t_fac) for c in [root] + subs]
        args = self.kargs(rng, ps)
        run = ['%s *objs[3] = {%s};' % (root.name, ', '.join('%s(x + %dul)' % (m, i) for i, m in enumerate(mk))),
               '%s (%s::*pms[2])(%s) = {%s};' % (ret, root.name, ', '.join(ps),
                                                 ', '.join('&%s::%s' % (root.name, m) for m in mn)),
               'unsigned long h = 0;',
               'for (unsigned i = 0; i < 3u; ++i) {',
               '  for (unsigned j = 0; j < 2u; ++j) h = mix(h, static_cast<unsigned long>((objs[i]->*pms[j])(%s)));'
               % args,
               '  h = mix(h, static_cast<unsigned long>(objs[i]->%s(%s)));' % (mn[0], self.vargs(ps, 'x')),
               '  h = mix(h, static_cast<unsigned long>((objs[i]->*(&%s::%s))(%s)));' % (root.name, mn[1], args),
               '}',
               'std::printf("%s %%lu\\n", h);' % root.name,
               'for (unsigned i = 0; i < 3u; ++i) delete objs[i];',
               'return h;']
        self.declare_run('run_uni%d' % k, t_run, run)
        self.f_main.append(self.guarded('total = mix(total, run_uni%d(%dul));' % (k, rng.randint(0, 99))))

    def shape_untyped_classes(self, t):
        """Classes in the untyped TU t (-emit-llvm without -flto, -fno-rtti)
        deriving from header classes, created there and called through their
        header base in main (typed code): an anonymous-namespace one and
        sometimes a named one."""
        rng = self.frng('untyped', 1)
        hdr = [c for c in self.classes if c.header and not c.final]
        made, want = 0, rng.choice([1, 1, 2])
        with self.using(rng):
            for _attempt in range(40):
                if made == want:
                    break
                c = self.make_class('U%d' % len(self.classes), hdr, t)
                overrides = any(self.methods[mid].intro is not c for mid in c.defs)
                if not c.bases or not overrides or self.abstract(c):
                    self.classes.pop()
                    self.methods = [m for m in self.methods if m.intro is not c]
                    continue
                c.named_local = rng.random() < 0.5
                c.factory_home = c.driver_home = t
                self.concrete.append(c)
                made += 1
        return made

    def shape_untyped_header(self, k):
        """A header class Ut<k>D whose key function (and methods) are in the
        untyped TU: typed code creates it (new Ut<k>D: the constant address
        of a vtable without type metadata) and calls it through its typed
        base beside a typed sibling. Nobody needs its (missing) typeinfo."""
        rng = self.frng('untyped', 2 + k)
        t_cls = self.pick_tu(rng)
        ret, ps = rng.choice(TYPES), [rng.choice(TYPES) for _ in range(rng.choice([0, 1, 2]))]
        b, pure = self.shape_root(rng, 'Ut%dB' % k, ['fut%db' % k], ret, ps, 'u%d' % k, 0.3, t_cls)
        self.emit_fc(b)
        d = FC(self, 'Ut%dD' % k, [b])
        d.fields = ['fut%dd' % k]
        d.method(ret, 'u%d' % k, ps, '{ return %s; }' % self.fexpr(rng, ret, ps, d.fields, rng.choice(
            ['const', 'expr', 'this'])), override=True, home=self.untyped)
        d.dtor(home=self.untyped, virtual=False)
        self.emit_fc(d)
        e = FC(self, 'Ut%dE' % k, [b])
        e.method(ret, 'u%d' % k, ps, '{ return %s; }' % self.fexpr(rng, ret, ps, [], rng.choice(['const', 'expr'])),
                 override=True)
        e.dtor(home=None, virtual=False)
        self.emit_fc(e)
        args = self.kargs(rng, ps) if rng.random() < 0.5 else self.vargs(ps, 'x')
        run = ['%s *objs[2] = {new %s(x), new %s(x + 1ul)};' % (b.name, d.name, e.name),
               'unsigned long h = %dul;' % k,
               'for (unsigned i = 0; i < 2u; ++i) h = mix(h, static_cast<unsigned long>(objs[i]->u%d(%s)));' % (k, args),
               'for (unsigned i = 0; i < 2u; ++i) delete objs[i];',
               '%s *s = new %s(x + 2ul);' % (b.name, d.name),
               'h = mix(h, static_cast<unsigned long>(s->u%d(%s)));' % (k, args),
               'delete s;',
               'std::printf("untyped%d %%lu\\n", h);' % k,
               'return h;']
        lto = [t for t in range(self.ntu) if self.tu_mode[t] == 'lto']
        self.declare_run('run_ut%d' % k, rng.choice(lto), run)
        self.f_main.append(self.guarded('total = mix(total, run_ut%d(%dul));' % (k, rng.randint(0, 99))))

    def shape_muldefs(self, k):
        """-z muldefs, a native patch first on the line: md.cpp (no LTO,
        before every other object) defines one override again, and the
        program runs the patch's body (the linker keeps the first
        definition). The bitcode bodies are pure expressions of the argument
        (constant propagation would fold them), called with constant and
        variable arguments."""
        rng = self.frng('muldefs', k)
        home, t_run = self.pick_tu(rng), self.pick_tu(rng, code=True)
        if self.tu_mode[home] == 'shared':
            home = 0
        if self.tu_mode[t_run] == 'shared':
            t_run = 0
        # Each class's key function is its destructor (declared first), so
        # the patch, which defines v<k> only, emits no vtable or typeinfo:
        # no class is seen natively, and the hierarchy stays closed.
        b = FC(self, 'Md%dB' % k, [])
        b.fields = ['fmd%db' % k]
        b.dtor(home=home, virtual=True)
        b.method('int', 'v%d' % k, ['int'], '{ return a0 + %d; }' % rng.randint(1, 9), virtual=True, cv=' const',
                 home=home)
        self.emit_fc(b)
        subs = []
        for i in range(rng.choice([1, 2])):
            c = FC(self, 'Md%dS%d' % (k, i), [b])
            c.dtor(home=home, virtual=False)
            c.method('int', 'v%d' % k, ['int'], '{ return a0 * %d + %d; }' % (rng.randint(2, 9), rng.randint(0, 99)),
                     override=True, cv=' const', home=home)
            self.emit_fc(c)
            subs.append(c)
        patched = rng.choice([b] + subs)
        self.extra_tus['md%d.cpp' % k] = ('patch', [
            '// A hot patch: the first definition on the line, which -z muldefs keeps.',
            'int %s::v%d(int a0) const { return a0 * 1000 + %d; }' % (patched.name, k, rng.randint(0, 99))])
        # Factories the optimizer cannot look into (noinline, in another TU
        # than the calls): no call is devirtualized by clang or LLVM on their
        # own, which would inline the bitcode body whatever the link keeps.
        t_fac = self.pick_tu(rng, exclude=(t_run,) + tuple(t for t in range(self.ntu)
                                                           if self.tu_mode[t] == 'shared'), code=True)
        mk = []
        for c in [b] + subs:
            self.f_hdr.append('%s *make_%s(unsigned long s);' % (b.name, c.name))
            self.f_tu[t_fac].append('__attribute__((noinline)) %s *make_%s(unsigned long s) { return new %s(s); }'
                                    % (b.name, c.name, c.name))
            mk.append('make_%s' % c.name)
        run = ['%s *objs[%d] = {%s};' % (b.name, len(mk), ', '.join('%s(x + %dul)' % (m, i) for i, m in enumerate(mk))),
               'unsigned long h = x;',
               'for (unsigned i = 0; i < %du; ++i) {' % len(mk),
               '  h = mix(h, static_cast<unsigned long>(objs[i]->v%d(%d)));' % (k, rng.randint(0, 9)),
               '  h = mix(h, static_cast<unsigned long>(objs[i]->v%d(static_cast<int>(x & 255ul))));' % k,
               '}',
               'std::printf("muldefs%d %%lu\\n", h);' % k,
               'for (unsigned i = 0; i < %du; ++i) delete objs[i];' % len(mk),
               'return h;']
        self.declare_run('run_md%d' % k, t_run, run)
        self.f_main.append(self.guarded('total = mix(total, run_md%d(%dul));' % (k, rng.randint(0, 99))))

    def shape_interposed(self, k):
        """A bitcode shared library (ip.cpp, linked by wpd-ld with -shared in
        the default mode) whose class's members the executable defines again
        and exports (--export-dynamic-symbol): at run time the library's
        vtable slots reach the executable's bodies. The library calls them
        (one target: a guarded call would inline its own body; two targets
        with a constant argument: constant propagation would fold it)."""
        rng = self.frng('interposed', k)
        b, d = 'Ip%dB' % k, 'Ip%dD' % k
        api = '__attribute__((visibility("default")))'
        self.f_hdr += ['struct %s %s {' % (api, b), '  virtual ~%s();' % b,
                       '  virtual unsigned long h%d(unsigned long a0) const;' % k,
                       '  virtual unsigned long g%d(unsigned long a0) const;' % k, '};',
                       'struct %s %s : %s {' % (api, d, b),
                       '  unsigned long g%d(unsigned long a0) const override;' % k, '};',
                       '%s %s *ip_make%d(unsigned long i);' % (api, b, k),
                       '%s unsigned long ip_run%d(%s *const *objs, unsigned long n, unsigned long x);'
                       % (api, k, b)]
        k1, k2, k3, k4 = (rng.randint(2, 9) for _ in range(4))
        self.extra_tus['ip%d.cpp' % k] = ('ishared', [
            '%s::~%s() {}' % (b, b),
            'unsigned long %s::h%d(unsigned long a0) const { return a0 * %dul + %dul; }' % (b, k, k1, k2),
            'unsigned long %s::g%d(unsigned long a0) const { return a0 + %dul; }' % (b, k, k3),
            'unsigned long %s::g%d(unsigned long a0) const { return a0 * %dul; }' % (d, k, k4),
            '__attribute__((noinline)) %s *ip_make%d(unsigned long i) { if (i & 1ul) return new %s; return new %s; }'
            % (b, k, d, b),
            '// The objects come from the executable: the library cannot see',
            '// their dynamic types, so only a devirtualizer calls anything directly.',
            'unsigned long ip_run%d(%s *const *objs, unsigned long n, unsigned long x) {' % (k, b),
            '  unsigned long h = x;',
            '  for (unsigned long i = 0; i < n; ++i) {',
            '    h = mix(h, objs[i]->h%d(3ul));' % k,
            '    h = mix(h, objs[i]->g%d(5ul));' % k,
            '    h = mix(h, objs[i]->h%d(x + i));' % k,
            '  }',
            '  std::printf("interposed%d %%lu\\n", h);' % k,
            '  return h;',
            '}'])
        exclude = tuple(t for t in range(self.ntu) if self.tu_mode[t] == 'shared')
        t_hook = self.pick_tu(rng, exclude=exclude, code=True)
        hooks = ['h%d' % k] + (['g%d' % k] if rng.random() < 0.5 else [])
        for m in hooks:
            self.f_tu[t_hook].append('unsigned long %s::%s(unsigned long a0) const { return a0 * %dul + %dul; }'
                                     % (b, m, rng.randint(11, 99), rng.randint(0, 99)))
            self.ip_exports.append('_ZNK%d%s%d%sEm' % (len(b), b, len(m), m))
        self.declare_run('run_ip%d' % k, 0, [
            '%s *objs[4] = {ip_make%d(0ul), ip_make%d(1ul), ip_make%d(2ul), ip_make%d(3ul)};' % (b, k, k, k, k),
            'unsigned long h = ip_run%d(objs, 4ul, x);' % k,
            'for (unsigned i = 0; i < 4u; ++i) delete objs[i];',
            'return h;'])
        self.f_main.append(self.guarded('total = mix(total, run_ip%d(%dul));' % (k, rng.randint(0, 99))))

    # ------------------------------------------- slots read in other ways
    # Shapes for dead virtual slot elimination: a slot that only a member
    # function pointer, native code or an exported function reads, and
    # vtables read for RTTI and offset-to-top only. Every class's method
    # named here is read nowhere else, so a wpd-ld that drops its slot (a
    # trap stub) dies of SIGILL where -O0 prints.

    def lto_tus(self):
        return [t for t in range(self.ntu) if self.tu_mode[t] == 'lto']

    def slot_root(self, rng, name, fields, methods, home):
        """A root with a virtual destructor and virtual const methods
        [(ret, name, params, pure)] (in the order given)."""
        fc = FC(self, name, [])
        fc.fields = fields
        fc.dtor(home=home if rng.random() < 0.5 else None, virtual=True)
        for ret, mn, ps, pure in methods:
            if pure:
                fc.method(ret, mn, ps, 'PURE', virtual=True, cv=' const')
            else:
                fc.method(ret, mn, ps, '{ return %s; }' % self.fexpr(rng, ret, ps, fields, rng.choice(
                    ['const', 'expr', 'this'])), virtual=True, cv=' const', home=home if rng.random() < 0.5 else None)
        return fc

    def slot_override(self, rng, fc, ret, mn, ps, home):
        fc.method(ret, mn, ps, '{ return %s; }' % self.fexpr(rng, ret, ps, fc.fields, rng.choice(
            ['const', 'expr', 'this'])), override=True, cv=' const', home=home if rng.random() < 0.4 else None)

    def shape_mfp(self, k):
        """Mf<k>B::mv<k> is called only through pointers to member functions
        of Mf<k>B (a local constant, a parameter from another function, an
        array of two, or converted to a pointer to member of the derived
        class Mf<k>D, whose B base is sometimes secondary), on objects of
        classes overriding it: its slot is read by a load at the pointer's
        vtable offset, beside a type test that feeds no assume."""
        rng = self.frng('mfp-call', k)
        t_cls, t_fac, t_fn, t_p, t_run = self.pick_tu(rng), self.pick_tu(rng, code=True), \
            self.pick_tu(rng, code=True), self.pick_tu(rng, code=True), self.pick_tu(rng, code=True)
        b, d, e, f, xn = ('Mf%d%s' % (k, c) for c in 'BDEFX')
        mv, mo = 'mv%d' % k, 'mo%d' % k
        ret, ps = rng.choice(TYPES), [rng.choice(TYPES) for _ in range(rng.choice([0, 1, 1, 2]))]
        oret, ops = rng.choice(TYPES), [rng.choice(TYPES) for _ in range(rng.choice([0, 1]))]
        pure = rng.random() < 0.3
        with_mo = rng.random() < 0.7
        ms = [(ret, mv, ps, pure)]
        if with_mo:
            ms.insert(rng.randrange(2), (oret, mo, ops, False))
        bc = self.slot_root(rng, b, ['f%s' % b.lower()], ms, t_cls)
        self.emit_fc(bc)
        bases = [bc]
        if rng.random() < 0.4:
            # Mf<k>B a secondary base of Mf<k>D: the call adjusts this
            xc = self.slot_root(rng, xn, ['f%s' % xn.lower()], [('unsigned', 'xv%d' % k, ['unsigned'], False)], t_cls)
            self.emit_fc(xc)
            bases = [xc, bc]
        dc = FC(self, d, bases)
        dc.fields = ['f%s' % d.lower()]
        dc.dtor(home=t_cls if rng.random() < 0.3 else None, virtual=False)
        self.slot_override(rng, dc, ret, mv, ps, t_cls)
        if with_mo and rng.random() < 0.5:
            self.slot_override(rng, dc, oret, mo, ops, t_cls)
        self.emit_fc(dc)
        concrete = ([] if pure else [bc]) + [dc]
        ec = FC(self, e, [bc], final=rng.random() < 0.3)
        ec.fields = ['f%s' % e.lower()]
        ec.dtor(home=None, virtual=False)
        if pure or rng.random() < 0.6:
            self.slot_override(rng, ec, ret, mv, ps, t_cls)
        self.emit_fc(ec)
        concrete.append(ec)
        if rng.random() < 0.4:
            fc = FC(self, f, [dc], final=rng.random() < 0.5)
            fc.fields = ['f%s' % f.lower()]
            fc.dtor(home=None, virtual=False)
            self.slot_override(rng, fc, ret, mv, ps, t_cls)
            self.emit_fc(fc)
            concrete.append(fc)
        pm = 'mf%d_pm' % k
        self.f_hdr.append('using %s = %s (%s::*)(%s) const;' % (pm, ret, b, ', '.join(ps)))
        mk = [self.factory(c, b, t_fac) for c in concrete]
        n = len(mk)
        def args(base='x + i'):
            return self.kargs(rng, ps) if rng.random() < 0.5 else self.vargs(ps, base)
        ul = 'static_cast<unsigned long>'
        forms = rng.sample(['local', 'param', 'array', 'derived'], rng.choice([1, 2, 2, 3]))
        if 'local' not in forms and 'param' not in forms:
            forms.append(rng.choice(['local', 'param']))
        run = ['%s *objs[%d] = {%s};' % (b, n, ', '.join('%s(x + %dul)' % (m, i) for i, m in enumerate(mk))),
               'unsigned long h = %dul;' % k]
        sig = 'unsigned long %%s(%s *const *objs, unsigned n, unsigned long x)' % b
        for form in forms:
            fn = 'mf%d_%s' % (k, form)
            if form == 'local':
                body = ['  %s m = &%s::%s;' % (pm, b, mv),
                        '  unsigned long h = x;',
                        '  for (unsigned i = 0; i < n; ++i) h = mix(h, %s((objs[i]->*m)(%s)));' % (ul, args())]
            elif form == 'param':
                # the pointer comes from the caller (another TU, sometimes)
                pf = 'mf%d_call' % k
                self.f_hdr.append('unsigned long %s(const %s *b, %s m, unsigned long x);' % (pf, b, pm))
                self.f_tu[t_p] += ['unsigned long %s(const %s *b, %s m, unsigned long x) {' % (pf, b, pm),
                                   '  return mix(x, %s((b->*m)(%s)));' % (ul, args('x')), '}']
                body = ['  unsigned long h = x;',
                        '  for (unsigned i = 0; i < n; ++i) h = mix(h, %s(objs[i], &%s::%s, x + i));' % (pf, b, mv)]
            elif form == 'array':
                # both slots through one call (mo<k> when there is one)
                other = '&%s::%s' % (b, mv) if not with_mo or oret != ret or ops != ps else '&%s::%s' % (b, mo)
                body = ['  static const %s pms[2] = {%s, &%s::%s};' % (pm, other, b, mv),
                        '  unsigned long h = x;',
                        '  for (unsigned i = 0; i < n; ++i)',
                        '    for (unsigned j = 0; j < 2u; ++j) h = mix(h, %s((objs[i]->*pms[(i + j) & 1u])(%s)));'
                        % (ul, args())]
            else:
                # converted to a pointer to member of the derived class
                body = ['  %s (%s::*md)(%s) const = &%s::%s;' % (ret, d, ', '.join(ps), b, mv),
                        '  unsigned long h = x;',
                        '  for (unsigned i = 0; i < n; ++i) {',
                        '    %s *p = new %s(x + i);' % (d, d),
                        '    h = mix(h, %s((p->*md)(%s)));' % (ul, args()),
                        '    delete p;',
                        '  }']
            self.f_hdr.append(sig % fn + ';')
            self.f_tu[t_fn] += [sig % fn + ' {'] + body + ['  return h;', '}']
            run += ['h = mix(h, %s(objs, %du, x));' % (fn, n), 'std::printf("mfp%d.%s %%lu\\n", h);' % (k, form)]
        if with_mo:
            oargs = self.kargs(rng, ops) if rng.random() < 0.5 else self.vargs(ops, 'x')
            run.append('for (unsigned i = 0; i < %du; ++i) h = mix(h, %s(objs[i]->%s(%s)));' % (n, ul, mo, oargs))
        run += ['std::printf("mfp%d %%lu\\n", h);' % k,
                'for (unsigned i = 0; i < %du; ++i) delete objs[i];' % n,
                'return h;']
        self.declare_run('run_mf%d' % k, t_run, run)
        self.f_main.append(self.guarded('total = mix(total, run_mf%d(%dul));' % (k, rng.randint(0, 99))))

    def shape_dyncast(self, k):
        """dynamic_cast (down, to a final class, across to another root,
        to void *, of a reference: std::bad_cast) and typeid on objects of
        a small hierarchy, and a virtual Dc<k>D::dd<k> called only through
        the cast's result: the vtables' RTTI and offset-to-top are read,
        slots only there. Never in the untyped TU (-fno-rtti); dropped with
        NORTTI=1 or relative vtables."""
        rng = self.frng('dyncast', k)
        ex = () if self.untyped is None else (self.untyped,)
        t_cls, t_fac, t_fn, t_run = self.pick_tu(rng), self.pick_tu(rng, exclude=ex, code=True), \
            self.pick_tu(rng, exclude=ex, code=True), self.pick_tu(rng, exclude=ex, code=True)
        b, d, e, f, g, xn = ('Dc%d%s' % (k, c) for c in 'BDEFGX')
        dv, dd, dx = 'dv%d' % k, 'dd%d' % k, 'dx%d' % k
        ret, ps = rng.choice(TYPES), [rng.choice(TYPES) for _ in range(rng.choice([0, 1, 1, 2]))]
        dret, dps = rng.choice(TYPES), [rng.choice(TYPES) for _ in range(rng.choice([0, 1]))]
        pure = rng.random() < 0.3
        bc = self.slot_root(rng, b, ['f%s' % b.lower()], [(ret, dv, ps, pure)], t_cls)
        self.emit_fc(bc)
        xc = None
        if rng.random() < 0.6:
            xc = self.slot_root(rng, xn, ['f%s' % xn.lower()], [('unsigned', dx, ['unsigned'], False)],
                                t_cls)
            self.emit_fc(xc)
        dc = FC(self, d, [bc])
        dc.fields = ['f%s' % d.lower()]
        dc.dtor(home=t_cls if rng.random() < 0.4 else None, virtual=False)
        if pure or rng.random() < 0.7:
            self.slot_override(rng, dc, ret, dv, ps, t_cls)
        dc.method(dret, dd, dps, '{ return %s; }' % self.fexpr(rng, dret, dps, dc.fields, rng.choice(
            ['const', 'expr', 'this'])), virtual=True, cv=' const', home=t_cls if rng.random() < 0.4 else None)
        self.emit_fc(dc)
        ec = FC(self, e, [bc], final=rng.random() < 0.5)
        ec.fields = ['f%s' % e.lower()]
        ec.dtor(home=None, virtual=False)
        self.slot_override(rng, ec, ret, dv, ps, t_cls)
        self.emit_fc(ec)
        fc = FC(self, f, [dc] + ([xc] if xc is not None else []), final=rng.random() < 0.6)
        fc.fields = ['f%s' % f.lower()]
        fc.dtor(home=None, virtual=False)
        self.slot_override(rng, fc, dret, dd, dps, t_cls)
        self.emit_fc(fc)
        concrete = ([] if pure else [bc]) + [dc, ec, fc]
        gc = None
        if xc is not None:
            # Dc<k>B a secondary base: offset-to-top is not 0
            gc = FC(self, g, [xc, bc])
            gc.fields = ['f%s' % g.lower()]
            gc.dtor(home=None, virtual=False)
            self.slot_override(rng, gc, ret, dv, ps, t_cls)
            self.emit_fc(gc)
            concrete.append(gc)
        ul = 'static_cast<unsigned long>'
        args = self.kargs(rng, ps) if rng.random() < 0.5 else self.vargs(ps, 'x')
        dargs = self.kargs(rng, dps) if rng.random() < 0.5 else self.vargs(dps, 'x')
        fn = ['#include <typeinfo>',
              'unsigned long dc%d(%s *b, unsigned long x) {' % (k, b),
              '  unsigned long h = %s(b->%s(%s));' % (ul, dv, args),
              '  if (%s *d = dynamic_cast<%s *>(b)) h = mix(h, 1ul + %s(d->%s(%s)));' % (d, d, ul, dd, dargs),
              '  else h = mix(h, 2ul);',
              '  if (%s *f = dynamic_cast<%s *>(b)) h = mix(h, 3ul + %s(f->f%s));' % (f, f, ul, f.lower())]
        if xc is not None:
            fn.append('  if (%s *c = dynamic_cast<%s *>(b)) h = mix(h, 4ul + c->%s(static_cast<unsigned>(x)));'
                      % (xn, xn, dx))
        fn += ['  h = mix(h, reinterpret_cast<unsigned long>(dynamic_cast<const void *>(b)) - '
               'reinterpret_cast<unsigned long>(b));',
               '  h = mix(h, typeid(*b) == typeid(%s) ? 5ul : typeid(*b) == typeid(%s) ? 6ul : 7ul);' % (e, b),
               '  try {',
               '    const %s &e = dynamic_cast<const %s &>(*b);' % (e, e),
               '    h = mix(h, 8ul + %s(e.f%s));' % (ul, e.lower()),
               '  } catch (const std::bad_cast &) {',
               '    h = mix(h, 9ul);',
               '  }',
               '  std::printf("dyncast%d %%s %%lu\\n", typeid(*b).name(), h);' % k,
               '  return h;',
               '}']
        self.f_hdr.append('unsigned long dc%d(%s *b, unsigned long x);' % (k, b))
        self.f_tu[t_fn] += fn
        mk = [self.factory(c, b, t_fac) for c in concrete]
        run = ['%s *objs[%d] = {%s};' % (b, len(mk), ', '.join('%s(x + %dul)' % (m, i) for i, m in enumerate(mk))),
               'unsigned long h = %dul;' % k,
               'for (unsigned i = 0; i < %du; ++i) h = mix(h, dc%d(objs[i], x + i));' % (len(mk), k)]
        if xc is not None:
            # from the other root: across to Dc<k>B and down to Dc<k>D
            xf = ['unsigned long dcx%d(%s *p, unsigned long x) {' % (k, xn),
                  '  unsigned long h = p->%s(static_cast<unsigned>(x));' % dx,
                  '  if (%s *b = dynamic_cast<%s *>(p)) h = mix(h, 1ul + %s(b->%s(%s)));' % (b, b, ul, dv, args),
                  '  if (%s *d = dynamic_cast<%s *>(p)) h = mix(h, 2ul + %s(d->%s(%s)));' % (d, d, ul, dd, dargs),
                  '  std::printf("dyncast%d.x %%s %%lu\\n", typeid(*p).name(), h);' % k,
                  '  return h;',
                  '}']
            self.f_hdr.append('unsigned long dcx%d(%s *p, unsigned long x);' % (k, xn))
            self.f_tu[t_fn] += xf
            run += ['%s *xs[2] = {new %s(x), new %s(x + 1ul)};' % (xn, f, g),
                    'for (unsigned i = 0; i < 2u; ++i) h = mix(h, dcx%d(xs[i], x + i));' % k,
                    'for (unsigned i = 0; i < 2u; ++i) delete xs[i];']
        run += ['std::printf("dyncast%d %%lu\\n", h);' % k,
                'for (unsigned i = 0; i < %du; ++i) delete objs[i];' % len(mk),
                'return h;']
        self.declare_run('run_dc%d' % k, t_run, run)
        self.f_main.append(self.guarded('total = mix(total, run_dc%d(%dul));' % (k, rng.randint(0, 99))))

    def shape_native_reader(self, k):
        """Nr<k>B::nr<k> is called only in a native TU (no LTO), by a
        function taking a Nr<k>B pointer or reference that bitcode passes
        objects to; the classes' vtables are bitcode (inline or key
        functions in LTO TUs), so no native object names them."""
        rng = self.frng('native-reader', k)
        lto = self.lto_tus()
        t_nat = rng.choice(self.native)
        t_cls, t_fac, t_run = rng.choice(lto), rng.choice(lto), rng.choice(lto)
        b, d, e, f = ('Nr%d%s' % (k, c) for c in 'BDEF')
        nr, no = 'nr%d' % k, 'no%d' % k
        ret, ps = rng.choice(TYPES), [rng.choice(TYPES) for _ in range(rng.choice([0, 1, 1, 2]))]
        oret, ops = rng.choice(TYPES), [rng.choice(TYPES) for _ in range(rng.choice([0, 1]))]
        pure = rng.random() < 0.3
        with_no = rng.random() < 0.7
        ms = [(ret, nr, ps, pure)]
        if with_no:
            ms.insert(rng.randrange(2), (oret, no, ops, False))
        bc = self.slot_root(rng, b, ['f%s' % b.lower()], ms, t_cls)
        self.emit_fc(bc)
        concrete = [] if pure else [bc]
        for name, base in ((d, bc), (e, bc)):
            c = FC(self, name, [base], final=rng.random() < 0.3)
            c.fields = ['f%s' % name.lower()]
            c.dtor(home=t_cls if rng.random() < 0.3 else None, virtual=False)
            self.slot_override(rng, c, ret, nr, ps, t_cls)
            if with_no and rng.random() < 0.4:
                self.slot_override(rng, c, oret, no, ops, t_cls)
            self.emit_fc(c)
            concrete.append(c)
        if rng.random() < 0.3 and not concrete[-2].final:
            c = FC(self, f, [concrete[-2]])
            c.dtor(home=None, virtual=False)
            self.slot_override(rng, c, ret, nr, ps, t_cls)
            self.emit_fc(c)
            concrete.append(c)
        ul = 'static_cast<unsigned long>'
        by_ref = rng.random() < 0.5
        param = 'const %s &b' % b if by_ref else 'const %s *b' % b
        call = 'b.%s' % nr if by_ref else 'b->%s' % nr
        args = self.kargs(rng, ps) if rng.random() < 0.5 else self.vargs(ps, 'x')
        self.f_hdr.append('unsigned long nr_read%d(%s, unsigned long x);' % (k, param))
        self.f_tu[t_nat] += ['// native-reader: the only calls of %s::%s are here, in native code' % (b, nr),
                             'unsigned long nr_read%d(%s, unsigned long x) {' % (k, param),
                             '  unsigned long h = mix(x, %s(%s(%s)));' % (ul, call, args),
                             '  std::printf("  nr_read%d %%lu\\n", h);' % k,
                             '  return h;',
                             '}']
        mk = [self.factory(c, b, t_fac) for c in concrete]
        n = len(mk)
        run = ['%s *objs[%d] = {%s};' % (b, n, ', '.join('%s(x + %dul)' % (m, i) for i, m in enumerate(mk))),
               'unsigned long h = %dul;' % k,
               'for (unsigned i = 0; i < %du; ++i) h = mix(h, nr_read%d(%sobjs[i], x + i));'
               % (n, k, '*' if by_ref else '')]
        if with_no:
            oargs = self.kargs(rng, ops) if rng.random() < 0.5 else self.vargs(ops, 'x')
            run.append('for (unsigned i = 0; i < %du; ++i) h = mix(h, %s(objs[i]->%s(%s)));' % (n, ul, no, oargs))
        run += ['std::printf("native%d %%lu\\n", h);' % k,
                'for (unsigned i = 0; i < %du; ++i) delete objs[i];' % n,
                'return h;']
        self.declare_run('run_nr%d' % k, t_run, run)
        self.f_main.append(self.guarded('total = mix(total, run_nr%d(%dul));' % (k, rng.randint(0, 99))))

    def shape_exported(self, k):
        """Ex<k>B::ev<k> is called only by fz_exported<k>, an extern "C"
        function of default visibility marked used, which main reaches only
        through dlsym(RTLD_DEFAULT, ...): every link exports it
        (DLEXPORT, --export-dynamic-symbol). It lives in the TU of its
        runner or in main.cpp (an archive member nobody names would not be
        linked)."""
        rng = self.frng('exported-caller', k)
        lto = self.lto_tus()
        t_cls, t_fac, t_run = self.pick_tu(rng), rng.choice(lto), rng.choice(lto)
        t_exp = rng.choice([t_run, 0])
        b, d, e = ('Ex%d%s' % (k, c) for c in 'BDE')
        ev, eo = 'ev%d' % k, 'eo%d' % k
        ret, ps = rng.choice(TYPES), [rng.choice(TYPES) for _ in range(rng.choice([0, 1, 1, 2]))]
        oret, ops = rng.choice(TYPES), [rng.choice(TYPES) for _ in range(rng.choice([0, 1]))]
        pure = rng.random() < 0.3
        with_eo = rng.random() < 0.7
        ms = [(ret, ev, ps, pure)]
        if with_eo:
            ms.insert(rng.randrange(2), (oret, eo, ops, False))
        bc = self.slot_root(rng, b, ['f%s' % b.lower()], ms, t_cls)
        self.emit_fc(bc)
        concrete = [] if pure else [bc]
        for name in (d, e):
            c = FC(self, name, [bc], final=rng.random() < 0.3)
            c.fields = ['f%s' % name.lower()]
            c.dtor(home=t_cls if rng.random() < 0.3 else None, virtual=False)
            if pure or name == d or rng.random() < 0.6:
                self.slot_override(rng, c, ret, ev, ps, t_cls)
            self.emit_fc(c)
            concrete.append(c)
        ul = 'static_cast<unsigned long>'
        sym = 'fz_exported%d' % k
        args = self.kargs(rng, ps) if rng.random() < 0.5 else self.vargs(ps, 'x')
        self.f_tu[t_exp] += [
            '// exported-caller: the only calls of %s::%s, reached through dlsym' % (b, ev),
            'extern "C" __attribute__((visibility("default"), used)) unsigned long %s(const %s *b, unsigned long x) {'
            % (sym, b),
            '  return mix(x, %s(b->%s(%s)));' % (ul, ev, args),
            '}']
        self.dl_exports.append(sym)
        mk = [self.factory(c, b, t_fac) for c in concrete]
        n = len(mk)
        self.f_tu[t_run].append('#include <dlfcn.h>')
        run = ['using fn_t = unsigned long (*)(const %s *, unsigned long);' % b,
               'fn_t f = reinterpret_cast<fn_t>(dlsym(RTLD_DEFAULT, "%s"));' % sym,
               'if (f == nullptr) {',
               '  std::printf("exported%d: dlsym found no %s\\n");' % (k, sym),
               '  return 0ul;',
               '}',
               '%s *objs[%d] = {%s};' % (b, n, ', '.join('%s(x + %dul)' % (m, i) for i, m in enumerate(mk))),
               'unsigned long h = %dul;' % k,
               'for (unsigned i = 0; i < %du; ++i) h = mix(h, f(objs[i], x + i));' % n]
        if with_eo:
            oargs = self.kargs(rng, ops) if rng.random() < 0.5 else self.vargs(ops, 'x')
            run.append('for (unsigned i = 0; i < %du; ++i) h = mix(h, %s(objs[i]->%s(%s)));' % (n, ul, eo, oargs))
        run += ['std::printf("exported%d %%lu\\n", h);' % k,
                'for (unsigned i = 0; i < %du; ++i) delete objs[i];' % n,
                'return h;']
        self.declare_run('run_ex%d' % k, t_run, run)
        self.f_main.append(self.guarded('total = mix(total, run_ex%d(%dul));' % (k, rng.randint(0, 99))))

    def shape_wrapper(self, k):
        """A decorator among its slot's targets, as leveldb's
        InternalKeyComparator wraps the user's comparator: Wr<k>W (and
        sometimes a second one, Wr<k>V, sometimes final) forwards w<k> to
        the Wr<k>B it wraps, through the same slot, beside one to three
        plain overrides. The runner calls w<k> through the base on plain
        objects, wrappers of them and wrappers of wrappers (the wrapper's
        own class reaching its own call), and through a final wrapper's
        own class (the only calls of the slot may then be the wrappers')."""
        rng = self.frng('wrapper', k)
        t_cls, t_run = self.pick_tu(rng), self.pick_tu(rng, code=True)
        b = 'Wr%dB' % k
        mname = 'w%d' % k
        ret, ps = rng.choice(TYPES), [rng.choice(TYPES) for _ in range(rng.choice([0, 1, 1, 2]))]
        bc, pure = self.shape_root(rng, b, ['fwr%db' % k], ret, ps, mname, 0.5, t_cls)
        self.emit_fc(bc)
        leaves = []
        for i in range(rng.choice([1, 1, 2, 3])):
            lc = FC(self, 'Wr%dL%d' % (k, i), [bc])
            lc.fields = ['fwr%dl%d' % (k, i)]
            lc.method(ret, mname, ps, '{ return %s; }' % self.fexpr(rng, ret, ps, lc.fields,
                                                                    rng.choice(['const', 'expr', 'this'])),
                      override=True, home=self.pick_tu(rng) if rng.random() < 0.6 else None)
            self.emit_fc(lc)
            leaves.append(lc.name)
        fwd = ', '.join('a%d' % i for i in range(len(ps)))
        wrappers = []
        for i, wn in enumerate(['Wr%dW' % k, 'Wr%dV' % k][:rng.choice([1, 1, 2])]):
            final = rng.random() < 0.3
            wc = FC(self, wn, [bc], final=final)
            fld = 'fwr%d%s' % (k, wn[-1].lower())
            wc.fields = [fld]
            wc.members.append('%s *inner = nullptr;' % b)
            wc.members.append('void wrap(%s *p) { inner = p; }' % b)
            body = ('{ return inner ? static_cast<%s>(static_cast<unsigned long>(inner->%s(%s)) * %dul + this->%s) '
                    ': static_cast<%s>(this->%s); }' % (ret, mname, fwd, rng.randint(2, 9), fld, ret, fld))
            wc.method(ret, mname, ps, body, override=True, home=self.pick_tu(rng) if rng.random() < 0.7 else None)
            self.emit_fc(wc)
            wrappers.append((wn, final))
        args = self.kargs(rng, ps) if rng.random() < 0.5 else self.vargs(ps, 'x')
        run = ['%s *objs[16];' % b, 'unsigned n = 0u;']
        plain = [] if pure else [b]
        for j, c in enumerate(plain + leaves):
            run.append('objs[n++] = new %s(x + %dul);' % (c, j))
        for j, (wn, final) in enumerate(wrappers):
            # a wrapper of a plain object, then a wrapper of that wrapper
            run += ['{ %s *w = new %s(x + %dul); w->wrap(objs[%d]); objs[n++] = w; }'
                    % (wn, wn, 10 + j, rng.randrange(len(plain + leaves))),
                    '{ %s *w = new %s(x + %dul); w->wrap(objs[n - 1]); objs[n++] = w; }' % (wn, wn, 20 + j)]
            if final:
                run += ['{ %s w(x + %dul); w.wrap(objs[0]);' % (wn, 30 + j),
                        '  unsigned long f = static_cast<unsigned long>(w.%s(%s));' % (mname, args),
                        '  std::printf("wrapper%d final %%lu\\n", f); x = mix(x, f); }' % k]
        run += ['unsigned long r = x;',
                'for (unsigned i = 0; i < n; ++i) r = mix(r, static_cast<unsigned long>(objs[i]->%s(%s)));'
                % (mname, args),
                'std::printf("wrapper%d %%lu\\n", r);' % k,
                'for (unsigned i = n; i > 0u; --i) delete objs[i - 1u];',
                'return r;']
        self.declare_run('run_wr%d' % k, t_run, run)
        self.f_main.append(self.guarded('total = mix(total, run_wr%d(%dul));' % (k, rng.randint(0, 99))))

    def shape_byval(self, k):
        """Arguments the x86-64 ABI passes in memory, which clang marks
        `byval`: By<k>B's bv<k> takes a 24-byte struct, its bw<k> five
        integers and a 16-byte struct (after `this` no register is left for
        it), and its bu<k>, never called, the big one again. One to three
        overrides are defined out of line, mostly in other TUs than the
        runner's, whose module then has no declaration of the targets a
        dispatch calls: wpd declares them, passing the structs as the call
        does, or LLVM refuses to make the calls direct."""
        rng = self.frng('byval', k)
        t_run = self.pick_tu(rng, code=True)
        big, two, b = 'By%dBig' % k, 'By%dTwo' % k, 'By%dB' % k
        self.f_hdr.append('struct %s { unsigned long a, b, c; };' % big)
        self.f_hdr.append('struct %s { const char *p; long n; };' % two)
        ints = ['int'] * 5
        bodies = [
            ('bv%d' % k, [big], lambda f, m: '{ return a0.a * %dul + (a0.b ^ a0.c) + this->%s; }' % (m, f)),
            ('bw%d' % k, ints + [two],
             lambda f, m: '{ return static_cast<unsigned long>(a0 * %d + a1 - a2 + a3 * a4 + a5.n + a5.p[%d]) '
                          '+ this->%s; }' % (m, m % 3, f)),
            ('bu%d' % k, [big], lambda f, m: '{ return a0.c * %dul + this->%s; }' % (m, f)),
        ]
        bc = FC(self, b, [])
        bc.fields = ['fby%db' % k]
        bc.dtor(home=self.pick_tu(rng) if rng.random() < 0.5 else None, virtual=True)
        pure = rng.random() < 0.5
        for name, ps, body in bodies:
            bc.method('unsigned long', name, ps, 'PURE' if pure else body(bc.fields[0], rng.randint(2, 9)),
                      virtual=True, home=None if pure or rng.random() < 0.5 else self.pick_tu(rng))
        self.emit_fc(bc)
        leaves = []
        for i in range(rng.choice([1, 2, 2, 3])):
            lc = FC(self, 'By%dL%d' % (k, i), [bc])
            lc.fields = ['fby%dl%d' % (k, i)]
            for name, ps, body in bodies:
                if pure or rng.random() < 0.8:
                    home = self.pick_tu(rng, exclude=(t_run,)) if rng.random() < 0.8 else None
                    lc.method('unsigned long', name, ps, body(lc.fields[0], rng.randint(2, 9)), override=True,
                              home=home)
            self.emit_fc(lc)
            leaves.append(lc.name)
        text = rng.choice(['abc', 'xyz', 'q\\tr'])
        run = ['%s *objs[8];' % b, 'unsigned n = 0u;']
        for j, c in enumerate(([] if pure else [b]) + leaves):
            run.append('objs[n++] = new %s(x + %dul);' % (c, j))
        run += ['unsigned long r = x;',
                'for (unsigned i = 0; i < n; ++i) {',
                '  %s g{x + i, %dul, i * 3ul};' % (big, rng.randint(1, 9)),
                '  %s t{"%s", static_cast<long>(i)};' % (two, text),
                '  r = mix(r, objs[i]->bv%d(g));' % k,
                '  r = mix(r, objs[i]->bw%d(1, static_cast<int>(i), 3, static_cast<int>(x & 7ul), 5, t));' % k,
                '}',
                'std::printf("byval%d %%lu\\n", r);' % k,
                'for (unsigned i = n; i > 0u; --i) delete objs[i - 1u];',
                'return r;']
        self.declare_run('run_by%d' % k, t_run, run)
        self.f_main.append(self.guarded('total = mix(total, run_by%d(%dul));' % (k, rng.randint(0, 99))))

    def shape_covariant(self, k):
        """Covariant returns: Cv<k>B's as_t returns a Cv<k>T * and copy a
        Cv<k>B *; each leaf Cv<k>L<i> returns its own type, and lists the
        bases (a padding class first, sometimes; each base sometimes
        virtual) so that the T and B subobjects are not at offset 0: the
        vtable entries are return-adjusting thunks, which a dispatch must
        call instead of the functions behind them. A leaf sometimes derives
        from the previous one; Cv<k>B's again, never called, is a dead slot
        with thunks of its own. The runner calls through the bases and
        through a leaf's own type."""
        rng = self.frng('covariant', k)
        t_run = self.pick_tu(rng, code=True)
        t, b, pad = 'Cv%dT' % k, 'Cv%dB' % k, 'Cv%dP' % k
        hdr = [
            'struct %s { virtual ~%s() = default; unsigned long pp = %dul; '
            'virtual unsigned long pv() const { return pp; } };' % (pad, pad, rng.randint(1, 9)),
            'struct %s { virtual ~%s() = default; unsigned long t = %dul; '
            'virtual unsigned long tid() const { return t * 3ul + %dul; } };' % (t, t, rng.randint(1, 9), rng.randint(0, 9)),
            'struct %s { virtual ~%s() = default; unsigned long b = %dul; virtual %s *as_t() = 0; '
            'virtual %s *copy() const = 0; virtual unsigned long bv() const { return b; } '
            'virtual %s *again() { return this; } };' % (b, b, rng.randint(1, 9), t, b, b),
        ]
        leaves = []
        for i in range(rng.choice([2, 2, 3, 4])):
            name = 'Cv%dL%d' % (k, i)
            if leaves and rng.random() < 0.3:
                heads = 'public %s' % leaves[-1]
            else:
                bases = [t, b]
                rng.shuffle(bases)
                if rng.random() < 0.7:
                    # a polymorphic base first: neither T nor B is primary
                    bases.insert(0, pad)
                heads = ', '.join('%spublic %s' % ('virtual ' if rng.random() < 0.3 else '', x) for x in bases)
            home = self.pick_tu(rng, exclude=(t_run,)) if rng.random() < 0.7 else t_run
            if home == self.untyped:
                # the runner may be in the -fno-rtti TU, a leaf's key
                # function never: a leaf deriving from it needs its typeinfo
                home = self.pick_tu(rng, exclude=(t_run,))
            m = rng.randint(2, 9)
            hdr.append('struct %s : %s {' % (name, heads))
            hdr.append('  unsigned long own%d = %dul;' % (i, m))
            hdr.append('  %s *as_t() override;' % name)
            hdr.append('  %s *copy() const override;' % name)
            hdr.append('  %s *again() override { own%d += 1ul; return this; }' % (name, i))
            hdr.append('  unsigned long tid() const override { return own%d * %dul + t; }' % (i, m))
            if rng.random() < 0.5:
                hdr.append('  unsigned long bv() const override { return own%d + b * %dul; }' % (i, m))
            hdr.append('};')
            self.f_tu[home].append('%s *%s::as_t() { t += %dul; return this; }' % (name, name, i + 1))
            self.f_tu[home].append('%s *%s::copy() const { return new %s(*this); }' % (name, name, name))
            leaves.append(name)
        self.f_hdr.extend(hdr)
        run = ['%s *objs[4];' % b, 'unsigned n = 0u;']
        for c in leaves:
            run.append('objs[n++] = new %s;' % c)
        last = leaves[-1]
        run += ['unsigned long r = x;',
                'for (unsigned i = 0; i < n; ++i) {',
                '  %s *tp = objs[i]->as_t();' % t,
                '  %s *cp = objs[i]->copy();' % b,
                '  r = mix(r, tp->tid() + cp->bv() * 7ul + cp->as_t()->tid());',
                '  delete cp;',
                '}',
                '{ %s own; %s *tp = own.as_t(); r = mix(r, tp->tid()); }' % (last, t),
                'std::printf("covariant%d %%lu\\n", r);' % k,
                'for (unsigned i = n; i > 0u; --i) delete objs[i - 1u];',
                'return r;']
        self.declare_run('run_cv%d' % k, t_run, run)
        self.f_main.append(self.guarded('total = mix(total, run_cv%d(%dul));' % (k, rng.randint(0, 99))))

    def shape_dead_extracted(self, k):
        """dx<k>.cpp (a TU of its own, an archive member with ARCHIVE=1)
        defines dx<k>_only, which only Dx<k>D::dv<k> calls, and nothing
        ever calls dv<k>: with whole-program visibility the slot is dead
        and the function with it, yet the TU must load where the link
        loaded it. Its static initializer prints, and it instantiates the
        inline template dx<k>_tmpl, which a live runner in another TU calls
        too (the link may keep dx<k>.cpp's copy)."""
        rng = self.frng('dead-extracted', k)
        lto = self.lto_tus()
        t_cls, t_fac, t_run = rng.choice(lto), rng.choice(lto), rng.choice(lto)
        b, d = 'Dx%dB' % k, 'Dx%dD' % k
        only, tmpl, seen = 'dx%d_only' % k, 'dx%d_tmpl' % k, 'dx%d_seen' % k
        mul, add = rng.randint(2, 9), rng.randint(1, 99)
        self.f_hdr += [
            '// dead-extracted: %s is called only by %s::dv%d, which nothing calls' % (only, d, k),
            'unsigned long %s(unsigned long x);' % only,
            'template <class T> __attribute__((noinline)) unsigned long %s(T x) {' % tmpl,
            '  return static_cast<unsigned long>(x) * %dul + %dul;' % (mul, add),
            '}',
            'struct %s {' % b,
            '  virtual ~%s() {}' % b,
            '  virtual unsigned long dw%d(unsigned long x) const { return x + %dul; }' % (k, rng.randint(1, 9)),
            '  virtual unsigned long dv%d(unsigned long x) const { return x; }' % k,
            '};',
            'struct %s : %s {' % (d, b),
            '  unsigned long dw%d(unsigned long x) const override;' % k,
            '  unsigned long dv%d(unsigned long x) const override;' % k,
            '};']
        self.f_tu[t_cls] += [
            'unsigned long %s::dw%d(unsigned long x) const { return x * %dul + 1ul; }' % (d, k, rng.randint(2, 9)),
            'unsigned long %s::dv%d(unsigned long x) const { return %s(x); }' % (d, k, only)]
        self.extra_tus['dx%d.cpp' % k] = ('lto', [
            '// Loaded only for %s: its initializer must still run where it did.' % only,
            'static unsigned long %s = (std::printf("dead-extracted%d loaded\\n"), %dul);' % (seen, k, rng.randint(1, 99)),
            'unsigned long %s(unsigned long x) { return mix(x, %s) + %s<int>(static_cast<int>(x & 255ul)); }'
            % (only, seen, tmpl)])
        self.live_slot_run(rng, b, d, 'dw%d' % k, 'dead-extracted%d' % k, 'run_dx%d' % k, t_fac, t_run,
                           '%s<int>(static_cast<int>(x & 255ul))' % tmpl)

    def live_slot_run(self, rng, b, d, live, label, runner, t_fac, t_run, seed):
        """Factories of `b` and its subclass `d` (in TU t_fac) and a runner
        (in TU t_run, called from main) that calls only the slot `live` on
        one object of each, starting from the expression `seed`, and
        prints `label` with the result: the other slots stay uncalled."""
        mk = []
        for c in (b, d):
            self.f_hdr.append('%s *make_%s();' % (b, c))
            self.f_tu[t_fac].append('__attribute__((noinline)) %s *make_%s() { return new %s; }' % (b, c, c))
            mk.append('make_%s' % c)
        run = ['%s *objs[2] = {%s(), %s()};' % (b, mk[0], mk[1]),
               'unsigned long h = %s;' % seed,
               'for (unsigned i = 0; i < 2u; ++i) h = mix(h, objs[i]->%s(x + i));' % live,
               'std::printf("%s %%lu\\n", h);' % label,
               'for (unsigned i = 0; i < 2u; ++i) delete objs[i];',
               'return h;']
        self.declare_run(runner, t_run, run)
        self.f_main.append(self.guarded('total = mix(total, %s(%dul));' % (runner, rng.randint(0, 99))))

    def shape_dead_needed(self, k):
        """libdn<k>.so, a C library (no C++ symbol, no libstdc++) that
        every link names with --as-needed, has a constructor that prints,
        and only Dn<k>D::nv<k> calls into it, which nothing calls: with
        whole-program visibility the slot is dead and the function with
        it, yet the library must stay needed (DT_NEEDED), so that its
        constructor runs as at -O0."""
        rng = self.frng('dead-needed', k)
        lto = self.lto_tus()
        t_cls, t_fac, t_run = rng.choice(lto), rng.choice(lto), rng.choice(lto)
        b, d, hook = 'Dn%dB' % k, 'Dn%dD' % k, 'fzdn%d_hook' % k
        self.f_hdr += [
            '// dead-needed: %s (libdn%d.so, --as-needed) is called only by %s::nv%d, which nothing calls'
            % (hook, k, d, k),
            'extern "C" unsigned long %s(unsigned long x);' % hook,
            'struct %s {' % b,
            '  virtual ~%s() {}' % b,
            '  virtual unsigned long nw%d(unsigned long x) const { return x + %dul; }' % (k, rng.randint(1, 9)),
            '  virtual unsigned long nv%d(unsigned long x) const { return x; }' % k,
            '};',
            'struct %s : %s {' % (d, b),
            '  unsigned long nw%d(unsigned long x) const override;' % k,
            '  unsigned long nv%d(unsigned long x) const override;' % k,
            '};']
        self.f_tu[t_cls] += [
            'unsigned long %s::nw%d(unsigned long x) const { return x * %dul + 1ul; }' % (d, k, rng.randint(2, 9)),
            'unsigned long %s::nv%d(unsigned long x) const { return %s(x); }' % (d, k, hook)]
        self.c_libs['dn%d.c' % k] = [
            '// dead-needed: a C library the links name with --as-needed',
            '#include <stdio.h>',
            '__attribute__((constructor)) static void fzdn%d_announce(void) { puts("dead-needed%d loaded"); }' % (k, k),
            '#ifdef __cplusplus',
            'extern "C"',
            '#endif',
            '__attribute__((visibility("default"))) unsigned long %s(unsigned long x) { return x * %dul + %dul; }'
            % (hook, rng.randint(2, 9), rng.randint(1, 99))]
        self.live_slot_run(rng, b, d, 'nw%d' % k, 'dead-needed%d' % k, 'run_dn%d' % k, t_fac, t_run, 'x')

    def shape_registered(self, k):
        """rg<k>.cpp: a file of static registrations, as test frameworks
        write them: anonymous subclasses of a header class, test functions
        making virtual calls, and a static initializer registering them, and
        nothing with external linkage. With a split LTO unit clang has no
        name for the unit and writes one regular LTO module (ThinLTO = 0);
        it is linked as an object, never archived (nothing would load it).
        Its tests call rg<k>_weigh, small enough to import, and a runner in
        another TU calls every test registered."""
        rng = self.frng('registered', k)
        lto = self.lto_tus()
        t_cls, t_reg = rng.choice(lto), rng.choice(lto)
        b, c = 'Rg%dB' % k, 'Rg%dC' % k
        fn, add, table, weigh = 'rg%d_fn' % k, 'rg%d_add' % k, 'rg%d_table' % k, 'rg%d_weigh' % k
        self.f_hdr += [
            '// registered: rg%d.cpp defines nothing external; its tests register from a static initializer' % k,
            'using %s = unsigned long (*)(unsigned long);' % fn,
            'void %s(%s f);' % (add, fn),
            'struct %s {' % b,
            '  virtual ~%s() {}' % b,
            '  virtual unsigned long rv%d(unsigned long x) const = 0;' % k,
            '  virtual unsigned long rw%d(unsigned long x) const { return x + %dul; }' % (k, rng.randint(1, 9)),
            '};',
            'struct %s : %s {' % (c, b),
            '  unsigned long rv%d(unsigned long x) const override;' % k,
            '};',
            '%s *make_%s();' % (b, c),
            'unsigned long %s(unsigned long x);' % weigh]
        self.f_tu[t_cls] += [
            'unsigned long %s::rv%d(unsigned long x) const { return x * %dul + %dul; }'
            % (c, k, rng.randint(2, 9), rng.randint(1, 99)),
            '%s *make_%s() { return new %s; }' % (b, c, c),
            'unsigned long %s(unsigned long x) { return mix(x, %dul); }' % (weigh, rng.randint(1, 99))]
        self.f_tu[t_reg] += [
            'static %s *%s(unsigned **n) {' % (fn, table),
            '  static %s fns[4];' % fn,
            '  static unsigned count = 0;',
            '  *n = &count;',
            '  return fns;',
            '}',
            'void %s(%s f) {' % (add, fn),
            '  unsigned *n;',
            '  %s *fns = %s(&n);' % (fn, table),
            '  if (*n < 4u) fns[(*n)++] = f;',
            '}']
        run = ['unsigned *n;',
               '%s *fns = %s(&n);' % (fn, table),
               'unsigned long h = x;',
               'for (unsigned i = 0; i < *n; ++i) h = mix(h, fns[i](x + i));',
               'std::printf("registered%d %%u %%lu\\n", *n, h);' % k,
               'return h;']
        self.declare_run('run_rg%d' % k, t_reg, run)
        d, e = 'Rg%dD' % k, 'Rg%dE' % k
        self.extra_tus['rg%d.cpp' % k] = ('ltoobj', [
            '// Nothing here has external linkage, and the file has vtables: under',
            '// -flto=thin clang writes it as one regular LTO module (no name for',
            '// its split unit).',
            'namespace {',
            'struct %s : %s {' % (d, b),
            '  unsigned long rv%d(unsigned long x) const override { return %s(x) + %dul; }' % (k, weigh, rng.randint(1, 9)),
            '};',
            'struct %s final : %s {' % (e, d),
            '  unsigned long rv%d(unsigned long x) const override { return x * %dul; }' % (k, rng.randint(2, 9)),
            '  unsigned long rw%d(unsigned long x) const override { return %s(x ^ %dul); }' % (k, weigh, rng.randint(1, 99)),
            '};',
            'unsigned long rg%d_test(unsigned long x) {' % k,
            '  %s *objs[3] = {new %s, new %s, make_%s()};' % (b, d, e, c),
            '  unsigned long h = x;',
            '  for (unsigned i = 0; i < 3u; ++i) h = mix(h, objs[i]->rv%d(x + i) + objs[i]->rw%d(x));' % (k, k),
            '  for (unsigned i = 0; i < 3u; ++i) delete objs[i];',
            '  return h;',
            '}',
            'unsigned long rg%d_second(unsigned long x) {' % k,
            '  %s own;' % e,
            '  const %s &r = own;' % b,
            '  return r.rv%d(x) ^ %s(x);' % (k, weigh),
            '}',
            '[[maybe_unused]] const int rg%d_registered = (%s(&rg%d_test), %s(&rg%d_second), 0);' % (k, add, k, add, k),
            '}  // namespace'])
        self.f_main.append(self.guarded('total = mix(total, run_rg%d(%dul));' % (k, rng.randint(0, 99))))

    def shape_weak(self, k):
        """Wk<k>D's wv<k> and ww<k> are defined weak in the TU holding its
        vtable (key function wk<k>_key), and wv<k> again, strong, in
        another TU (bitcode or native): the linker binds the vtable's entry
        and every call to the strong one, whose body the weak TU's
        summary never saw. The strong TU holds the runner, so it is always
        loaded; ww<k> keeps its weak body."""
        rng = self.frng('weak-override', k)
        cands = [t for t in range(self.ntu) if self.tu_mode[t] in ('lto', 'native') and t != self.untyped]
        t_weak = rng.choice([t for t in cands if self.tu_mode[t] == 'lto'])
        others = [t for t in cands if t != t_weak]
        if not others:
            # One bitcode or native TU (the others shared or untyped): no
            # second TU for the strong definition; the seed goes without.
            self.shapes.remove('weak-override')
            return
        t_strong = rng.choice(others)
        b, d, e = 'Wk%dB' % k, 'Wk%dD' % k, 'Wk%dE' % k
        self.f_hdr += [
            '// weak-override: %s::wv%d is weak where its vtable is, strong in another TU' % (d, k),
            'struct %s {' % b,
            '  virtual ~%s() {}' % b,
            '  virtual unsigned long wv%d(unsigned long x) const { return x + %dul; }' % (k, rng.randint(1, 9)),
            '  virtual unsigned long ww%d(unsigned long x) const { return x ^ %dul; }' % (k, rng.randint(1, 99)),
            '};',
            'struct %s : %s {' % (d, b),
            '  virtual void wk%d_key() const;' % k,
            '  unsigned long wv%d(unsigned long x) const override;' % k,
            '  unsigned long ww%d(unsigned long x) const override;' % k,
            '};',
            'struct %s final : %s {' % (e, d),
            '  unsigned long ww%d(unsigned long x) const override { return x * %dul; }' % (k, rng.randint(2, 9)),
            '};',
            '%s *make_%s();' % (b, d),
            '%s *make_%s();' % (b, e)]
        self.f_tu[t_weak] += [
            'void %s::wk%d_key() const {}' % (d, k),
            '__attribute__((weak)) unsigned long %s::wv%d(unsigned long x) const { return x * %dul + 1ul; }'
            % (d, k, rng.randint(2, 9)),
            '__attribute__((weak)) unsigned long %s::ww%d(unsigned long x) const { return x + %dul; }'
            % (d, k, rng.randint(10, 99)),
            '%s *make_%s() { return new %s; }' % (b, d, d)]
        self.f_tu[t_strong] += [
            'unsigned long %s::wv%d(unsigned long x) const { return x * %dul + %dul; }'
            % (d, k, rng.randint(11, 19), rng.randint(100, 199)),
            '%s *make_%s() { return new %s; }' % (b, e, e)]
        run = ['%s *objs[3] = {new %s, make_%s(), make_%s()};' % (b, b, d, e),
               'unsigned long h = x;',
               'for (unsigned i = 0; i < 3u; ++i) h = mix(h, objs[i]->wv%d(x + i) * 3ul + objs[i]->ww%d(x));' % (k, k),
               'std::printf("weak%d %%lu\\n", h);' % k,
               'for (unsigned i = 0; i < 3u; ++i) delete objs[i];',
               'return h;']
        self.declare_run('run_wk%d' % k, t_strong, run)
        self.f_main.append(self.guarded('total = mix(total, run_wk%d(%dul));' % (k, rng.randint(0, 99))))

    def shape_dlopen(self, k):
        """A plugin the program loads with dlopen at run time (libdl<k>p.so,
        native, never on the link line) derives from Dl<k>B, a class of
        default visibility in dl<k>.hpp with inline virtuals, and hands its
        object to the program's dl<k>_walk, which calls a<k> and b<k>
        through the base. The program has one or two implementations of
        its own (a single-impl or closed-set candidate). Every link exports
        dl<k>_walk and Dl<k>B's typeinfo (DLEXPORT), as -rdynamic would:
        the typeinfo is what the plugin's class names as its base, so the
        hierarchy must stay open. Dl<k>B's destructor is sometimes
        virtual, sometimes protected and trivial (then no object holds
        Dl<k>B's vtable, only its typeinfo)."""
        rng = self.frng('dlopen-derived', k)
        lto = self.lto_tus()
        t_cls, t_walk, t_run = rng.choice(lto), rng.choice(lto), self.pick_tu(rng, code=True)
        b, d, e = 'Dl%dB' % k, 'Dl%dD' % k, 'Dl%dE' % k
        walk, entry, hdr = 'dl%d_walk' % k, 'fzdl%d_run' % k, 'dl%d.hpp' % k
        lib = 'libdl%dp.so' % k
        virtual_dtor = rng.random() < 0.5
        self.out[hdr] = '\n'.join([
            '#pragma once',
            '// dlopen-derived: a plugin loaded at run time derives from %s' % b,
            'struct __attribute__((visibility("default"))) %s {' % b,
            '  virtual unsigned long a%d(unsigned long x) const { return x + %dul; }' % (k, rng.randint(1, 9)),
            '  virtual unsigned long b%d(unsigned long x) = 0;' % k,
            '  virtual ~%s() = default;' % b if virtual_dtor else 'protected:\n  ~%s() = default;' % b,
            '};',
            'extern "C" unsigned long %s(%s *p, unsigned long x);' % (walk, b),
            '']) + '\n'
        self.f_hdr.append('#include "%s"' % hdr)
        impls = [d] + ([e] if rng.random() < 0.5 else [])
        for c in impls:
            m = rng.randint(2, 9)
            self.f_hdr += ['struct %s final : %s {' % (c, b),
                           '  unsigned long own = %dul;' % m,
                           '  unsigned long b%d(unsigned long x) override;' % k]
            if rng.random() < 0.4:
                self.f_hdr.append('  unsigned long a%d(unsigned long x) const override { return x * own; }' % k)
            self.f_hdr.append('};')
            self.f_tu[t_cls].append('unsigned long %s::b%d(unsigned long x) { own += 1ul; return x * %dul + own; }'
                                    % (c, k, rng.randint(2, 9)))
        self.f_tu[t_walk] += [
            '// dlopen-derived: the plugin\'s objects reach these calls too',
            'extern "C" __attribute__((visibility("default"), used, noinline)) unsigned long %s(%s *p, unsigned long x) {'
            % (walk, b),
            '  unsigned long h = x;',
            '  for (unsigned i = 0; i < 3u; ++i) h = mix(h, p->a%d(x + i) * 3ul + p->b%d(x));' % (k, k),
            '  return h;',
            '}']
        mangled = '_ZTI%d%s' % (len(b), b)
        self.dl_exports += [walk, mangled]
        pm = rng.randint(11, 99)
        plugin = [
            '#include "%s"' % hdr,
            '',
            'namespace {',
            'struct Plug final : %s {' % b,
            '  unsigned long b%d(unsigned long x) override { return x * %dul + 1ul; }' % (k, pm)]
        if rng.random() < 0.5:
            plugin.append('  unsigned long a%d(unsigned long x) const override { return x + %dul; }' % (k, pm))
        plugin += [
            '};',
            '} // namespace',
            '',
            'extern "C" __attribute__((visibility("default"))) unsigned long %s(unsigned long x) {' % entry,
            '  Plug p;',
            '  return %s(&p, x);' % walk,
            '}']
        self.dl_plugins['dl%dp.cpp' % k] = plugin
        self.f_tu[t_run].append('#include <dlfcn.h>')
        run = ['unsigned long h = x;']
        for c in impls:
            run.append('{ %s o; h = mix(h, %s(&o, x)); }' % (c, walk))
        run += ['void *lib = dlopen("./%s", RTLD_NOW);' % lib,
                'if (lib == nullptr) {',
                '  std::printf("dlopen%d: no %s\\n");' % (k, lib),
                '  return h;',
                '}',
                'using fn_t = unsigned long (*)(unsigned long);',
                'fn_t f = reinterpret_cast<fn_t>(dlsym(lib, "%s"));' % entry,
                'h = mix(h, f(x));',
                'std::printf("dlopen%d %%lu\\n", h);' % k,
                'return h;']
        self.declare_run('run_dl%d' % k, t_run, run)
        self.f_main.append(self.guarded('total = mix(total, run_dl%d(%dul));' % (k, rng.randint(0, 99))))

    def shape_dlopen_host(self, k):
        """The program hands a plugin it loads with dlopen at run time
        (libdh<k>p.so, native, never on the link line) an object of its own
        Dh<k>S through the interface Dh<k>I; only the plugin calls p<k> and
        q<k>. Nothing is exported: clang's whole-program promise is about
        classes defined elsewhere, not calls made elsewhere, so the two
        entries must stay whatever the program calls itself."""
        rng = self.frng('dlopen-host', k)
        lto = self.lto_tus()
        t_cls, t_run = rng.choice(lto), self.pick_tu(rng, code=True)
        i, c = 'Dh%dI' % k, 'Dh%dS' % k
        hdr, lib, entry = 'dh%d.hpp' % k, 'libdh%dp.so' % k, 'fzdh%d_use' % k
        self.out[hdr] = '\n'.join([
            '#pragma once',
            '// dlopen-host: the program hands a plugin a %s; only the plugin calls p%d and q%d' % (i, k, k),
            'struct %s {' % i,
            '  virtual unsigned long p%d(unsigned long x) = 0;' % k,
            '  virtual unsigned long q%d(unsigned long x) const = 0;' % k,
            'protected:',
            '  ~%s() = default;' % i,
            '};',
            '']) + '\n'
        self.f_hdr.append('#include "%s"' % hdr)
        self.f_hdr += ['struct %s final : %s {' % (c, i),
                       '  unsigned long own = %dul;' % rng.randint(2, 9),
                       '  unsigned long p%d(unsigned long x) override;' % k,
                       '  unsigned long q%d(unsigned long x) const override;' % k,
                       '};']
        self.f_tu[t_cls] += [
            'unsigned long %s::p%d(unsigned long x) { own += x; return own * %dul; }' % (c, k, rng.randint(2, 9)),
            'unsigned long %s::q%d(unsigned long x) const { return x + own * %dul; }' % (c, k, rng.randint(2, 9))]
        self.dl_plugins['dh%dp.cpp' % k] = [
            '#include "%s"' % hdr,
            '',
            'extern "C" __attribute__((visibility("default"))) unsigned long %s(%s &h, unsigned long x) {'
            % (entry, i),
            '  return h.p%d(x) * 3ul + h.q%d(x + 1ul);' % (k, k),
            '}']
        self.f_tu[t_run].append('#include <dlfcn.h>')
        run = ['%s s;' % c,
               'unsigned long h = x;',
               'void *lib = dlopen("./%s", RTLD_NOW);' % lib,
               'if (lib == nullptr) {',
               '  std::printf("dlopen-host%d: no %s\\n");' % (k, lib),
               '  return h;',
               '}',
               'using fn_t = unsigned long (*)(%s &, unsigned long);' % i,
               'fn_t f = reinterpret_cast<fn_t>(dlsym(lib, "%s"));' % entry,
               'h = mix(h, f(s, x));',
               'h = mix(h, f(s, x + 7ul));',
               'std::printf("dlopen-host%d %%lu\\n", h);' % k,
               'return h;']
        self.declare_run('run_dh%d' % k, t_run, run)
        self.f_main.append(self.guarded('total = mix(total, run_dh%d(%dul));' % (k, rng.randint(0, 99))))

    def build_shapes(self):
        self.f_hdr, self.f_main, self.f_tail = [], [], []
        self.f_tu = {t: [] for t in range(self.ntu)}
        self.extra_tus, self.ip_exports, self.dl_exports, self.dl_plugins = {}, [], [], {}
        self.c_libs = {}
        if 'muldefs' in self.shapes:
            self.shape_muldefs(0)
        if 'interposed' in self.shapes:
            self.shape_interposed(0)
        sh = self.shapes
        if 'unicode' in sh:
            self.shape_unicode_rename()
        for name, fn in (('merged-calls', self.shape_merged), ('multi-base', self.shape_multibase),
                         ('const-vtable', self.shape_constvt), ('placement-dtor', self.shape_placement),
                         ('unicode', self.shape_unicode)):
            if name in sh:
                for k in range(self.frng(name, 99).choice([1, 1, 2])):
                    fn(k)
        if 'trap-called' in sh or 'trap-uncalled' in sh:
            self.shape_trap(0, 'trap-called' in sh)
        # A header class keyed in the -fno-rtti TU has no typeinfo; with
        # relative vtables clang's other TUs still name it (the RTTI proxy
        # of the vtable copy they keep for devirtualization), so lld and
        # wpd-ld alike fail with "undefined symbol: typeinfo for Ut0D"
        # (seeds 752, 3018, 5011, 9135): not with that pair.
        if 'untyped' in sh and 'relative' not in sh:
            self.shape_untyped_header(0)
        # slots read other than by plain virtual calls (after every other
        # shape: the code above is the same with or without these)
        for name, fn in (('mfp-call', self.shape_mfp), ('dyncast', self.shape_dyncast),
                         ('native-reader', self.shape_native_reader), ('exported-caller', self.shape_exported),
                         ('dead-extracted', self.shape_dead_extracted)):
            if name in sh:
                fn(0)
        if 'wrapper' in sh:
            self.shape_wrapper(0)
        if 'byval' in sh:
            self.shape_byval(0)
        if 'covariant' in sh:
            self.shape_covariant(0)
        if 'registered' in sh:
            self.shape_registered(0)
        if 'weak-override' in sh:
            self.shape_weak(0)
        if 'dlopen-derived' in sh:
            self.shape_dlopen(0)
        if 'dead-needed' in sh:
            self.shape_dead_needed(0)
        if 'dlopen-host' in sh:
            self.shape_dlopen_host(0)


class FC:
    """A class of a shape: text for h2.hpp plus out-of-line definitions."""

    def __init__(self, gen, name, bases, final=False):
        self.gen = gen
        self.name = name
        self.bases = bases          # [FC]
        self.final = final
        self.fields = []
        self.members = []           # in-class declarations/definitions
        self.outline = []           # (TU, definition)
        self.defined = set()

    def method(self, ret, name, params, body, virtual=False, override=False, attr='', cv='', home=None):
        sig = '%s %s(%s)%s' % (ret, name, ', '.join('%s a%d' % (t, i) for i, t in enumerate(params)), cv)
        head = '%s%s%s%s' % (attr, 'virtual ' if virtual else '', sig, ' override' if override else '')
        self.defined.add(name)
        if body == 'PURE':
            self.members.append('%s = 0;' % head)
        elif home is None:
            self.members.append('%s %s' % (head, body))
        else:
            self.members.append('%s;' % head)
            self.outline.append((home, '%s %s::%s(%s)%s %s' % (
                ret, self.name, name, ', '.join('%s a%d' % (t, i) for i, t in enumerate(params)), cv, body)))

    def dtor(self, home, virtual, body='++g_dtors;'):
        head = '%s~%s()%s' % ('virtual ' if virtual else '', self.name, '' if virtual else ' override')
        if home is None:
            self.members.append('%s { %s }' % (head, body))
        else:
            self.members.append('%s;' % head)
            self.outline.append((home, '%s::~%s() { %s }' % (self.name, self.name, body)))

    def text(self):
        heads = ', '.join('public %s' % b.name for b in self.bases)
        out = ['struct %s%s%s {' % (self.name, ' final' if self.final else '', (' : ' + heads) if heads else '')]
        for f in self.fields:
            out.append('  unsigned long %s;' % f)
        inits = ['%s(s * 3ul + %dul)' % (b.name, i + 1) for i, b in enumerate(self.bases)]
        inits += ['%s(s + %dul)' % (f, i + 2) for i, f in enumerate(self.fields)]
        out.append('  explicit %s(unsigned long s)%s {}' % (self.name, (' : ' + ', '.join(inits)) if inits else ''))
        out.extend('  ' + m for m in self.members)
        out.append('};')
        return '\n'.join(out)

def parse_shapes(text):
    if text == 'none':
        return []
    out = [x for x in text.split(',') if x]
    bad = [x for x in out if x not in SHAPES]
    if bad:
        raise argparse.ArgumentTypeError('unknown shape(s) %s (known: %s)' % (', '.join(bad), ', '.join(SHAPES)))
    if 'trap-called' in out and 'trap-uncalled' in out:
        raise argparse.ArgumentTypeError('trap-called and trap-uncalled exclude each other')
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--seed', type=int, required=True)
    ap.add_argument('--out', help='output directory (created)')
    ap.add_argument('--tus', type=int, help='number of .cpp files (3-6; default random)')
    ap.add_argument('--native', type=int, help='compile K non-main TUs natively (default random)')
    g = ap.add_mutually_exclusive_group()
    g.add_argument('--shared', dest='shared', action='store_const', const=True,
                   help='put one TU (with a subclass of a program class) in a shared library')
    g.add_argument('--no-shared', dest='shared', action='store_const', const=False)
    g = ap.add_mutually_exclusive_group()
    g.add_argument('--split', dest='split', action='store_const', const=True)
    g.add_argument('--no-split', dest='split', action='store_const', const=False)
    g = ap.add_mutually_exclusive_group()
    g.add_argument('--hidden', dest='hidden', action='store_const', const=True,
                   help='-fvisibility=hidden (ignored with --shared)')
    g.add_argument('--no-hidden', dest='hidden', action='store_const', const=False)
    g = ap.add_mutually_exclusive_group()
    g.add_argument('--archive', dest='archive', action='store_const', const=True,
                   help='put the non-main TUs (bitcode and native) into a static archive libfzar.a')
    g.add_argument('--no-archive', dest='archive', action='store_const', const=False)
    ap.add_argument('--archive-form', choices=['plain', 'group', 'script', 'thin'],
                    help='with an archive: one archive (plain), the members in two archives inside '
                         '--start-group/--end-group (group), the two named by a linker script '
                         'libfzs.so, GROUP ( libfzar.a libfzar2.a ) (script), or a thin archive '
                         '(thin); default from the seed')
    g = ap.add_mutually_exclusive_group()
    g.add_argument('--rtti', dest='rtti', action='store_const', const=True,
                   help='RTTI in every TU but the untyped one (default: -fno-rtti in one seed of ten)')
    g.add_argument('--no-rtti', dest='rtti', action='store_const', const=False,
                   help='-fno-rtti in every TU (NORTTI=1)')
    ap.add_argument('--no-always-throw', action='store_true',
                    help='make every throw depend on an argument (same program otherwise): '
                         'works around bugs/02 (an always-throwing override is not a target)')
    ap.add_argument('--xflags', metavar='LIST',
                    help='comma-separated extra flags of every non-reference compile (XFLAGS), instead of '
                         'the seed\'s choice among -fstrict-vtable-pointers and -fvisibility-inlines-hidden; '
                         '"" for none')
    ap.add_argument('--opt', choices=['-O1', '-O2', '-O3', '-Os'], help='optimization level of the non-reference builds')
    ap.add_argument('--shapes', type=parse_shapes, metavar='LIST',
                    help='exactly these shapes instead of the seed\'s choice: comma-separated among %s, '
                         'or "none"' % ', '.join(SHAPES))
    ap.add_argument('--print-shapes', action='store_true',
                    help='print the shapes the seed produces (one line, space-separated) and write nothing')
    a = ap.parse_args()
    if a.tus is not None and not 3 <= a.tus <= 6:
        ap.error('--tus must be 3..6')
    gen = Gen(a.seed, a)
    gen.generate()
    gen.emit()
    if a.print_shapes:
        print(' '.join(gen.shapes))
        return 0
    if a.out is None:
        ap.error('--out is required')
    os.makedirs(a.out, exist_ok=True)
    for name, text in gen.out.items():
        with open(os.path.join(a.out, name), 'w', encoding='utf-8') as f:
            f.write(text)
    return 0


if __name__ == '__main__':
    sys.exit(main())
