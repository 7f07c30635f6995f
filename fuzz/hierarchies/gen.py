#!/usr/bin/env python3
"""Random C++ class hierarchies for differential testing of wpd.

Writes a multi-TU C++20 program into --out (deterministic from --seed):
  h1.hpp, h2.hpp   header classes (inline/comdat vtables or key functions)
  main.cpp, t1.cpp..tK.cpp
  config.sh        build configuration read by run.sh (TU modes, flags)
  summary.txt      human-readable description of the hierarchy

The program avoids undefined behaviour: arithmetic is done in unsigned
long, shift counts are small constants, no pure virtual is ever called
(no virtual calls in constructors/destructors, abstract classes are never
instantiated), every object is deleted/destroyed exactly once, and every
class appears once as a subobject (no ambiguous bases).
"""

import argparse
import os
import random
import sys

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
        if a.opt:
            self.opt = a.opt

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
            tus[t].append('namespace {')
            for c in here:
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
        m.append('  std::printf("dtors %lu\\n", g_dtors);')
        m.append('  std::printf("total %lu\\n", total);')
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
               'SPECULATE=%s' % self.speculate]
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
        s.append('split=%d hidden=%d archive=%d' % (self.split, self.hidden, self.archive))
        self.out['summary.txt'] = '\n'.join(s) + '\n'


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--seed', type=int, required=True)
    ap.add_argument('--out', required=True, help='output directory (created)')
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
    ap.add_argument('--no-always-throw', action='store_true',
                    help='make every throw depend on an argument (same program otherwise): '
                         'works around bugs/02 (an always-throwing override is not a target)')
    ap.add_argument('--opt', choices=['-O1', '-O2', '-O3', '-Os'], help='optimization level of the non-reference builds')
    a = ap.parse_args()
    if a.tus is not None and not 3 <= a.tus <= 6:
        ap.error('--tus must be 3..6')
    gen = Gen(a.seed, a)
    gen.generate()
    gen.emit()
    os.makedirs(a.out, exist_ok=True)
    for name, text in gen.out.items():
        with open(os.path.join(a.out, name), 'w') as f:
            f.write(text)


if __name__ == '__main__':
    sys.exit(main())
