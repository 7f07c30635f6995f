#!/usr/bin/env python3
"""ThinLTO parity benchmark: wpd-ld against lld's own ThinLTO (with LLVM's
whole-program devirtualization) on the same bitcode objects.

    wpd: clang++-19 -O2 -flto=thin --ld-path=wpd-ld -Wl,--lto-whole-program-visibility -Wl,--wpd-jobs=J
    lld: clang++-19 -O2 -flto=thin -fuse-ld=lld     -Wl,--lto-whole-program-visibility -Wl,--thinlto-jobs=J

Programs (each compiled with -O2 -flto=thin -fwhole-program-vtables, once
as split LTO units, clang's default with whole-program vtables, and once
with -fno-split-lto-unit):
  hotloop    a loop calling a devirtualized callee defined in another object
             (fixtures/thinlto/import)
  templates  templates instantiated in 16 objects and 192 dead external
             functions (benches/parity/gen_templates.py)
  demo       fixtures/demo
  alternating  one of two classes allocated in turn, four virtual calls and
             a virtual delete per round (benches/parity/alternating, the
             loop of perf reproducer 01)
  big        the generated program of benches/gen_big.sh (300 classes,
             2100 virtual call sites, 9 objects; its walk repeated 2000 times)
  box2d      a real code base: Box2D 2.3 (46 objects in an archive, from the
             wrapped2d crate fetched through cargo) and a simulation driver
             (benches/parity/box2d_main.cpp)
  interp     an AST-walking interpreter of a tiny language, 28 node types
             under one virtual eval (benches/parity/interp: parser,
             nodes, builtins, driver), running a program that counts
             primes by trial division, Fibonacci numbers, gcds, Collatz
             chains
  richards   Martin Richards's scheduler simulation, its tasks run through
             a virtual Task::run (benches/parity/richards), six runs of
             its idle count of a million, each self-checked
Not run by default (PROGRAMS=...), real code bases fetched through cargo
and built as tests/realworld.rs builds them, each a library in an archive
and a driver:
  libzmq     libzmq 4.3.5 (zeromq-src crate: 118 C++ objects and one C
             one) and fixtures/realworld/libzmq_driver.cpp (six socket
             patterns over inproc, tcp, ws and ipc). A short run with an
             I/O thread per context: its instruction and indirect-call
             counts vary from run to run (at -O0, by 0.1-0.3%)
  leveldb    leveldb 1.22 (leveldb-sys crate, 41 objects) and its own
             benchmark, db/db_bench.cc, run as
             `db_bench --num=20000 --benchmarks=fillseq,readrandom,readseq`
             with its database in the work folder; its output is compared
             with -O0's without its timings
  libsass    libsass (sass-sys crate 0.4.22: the 65 objects of its
             Makefile.conf, one of them C) and benches/parity/libsass_main.cpp,
             which compiles one SCSS stylesheet 40 times through the C API
  protobuf   protoc 21.5 (protobuf-src crate: libprotobuf-lite, libprotobuf
             and libprotoc as protobuf's CMake lists name them, 167 objects
             in an archive, and protoc's main.cc), generating C++, Java and
             Python from the .proto files beside descriptor.proto; the
             generated files' digests are compared with -O0's
  rocksdb    RocksDB 6.20.3 (librocksdb-sys crate: the 275 objects of its
             library sources) and benches/parity/rocksdb_main.cpp, which
             writes, merges, deletes, compacts, reads and scans a database
             with its own comparator and merge operator
  wabt       wabt 1.0.13 (wabt-sys crate: the 44 objects of libwabt, one of
             them C) and benches/parity/wabt_main.cpp, which takes a
             generated module 30 times through parse, validate, binary
             writer and reader (logged), names, text writer, decompiler
  spirv_cross  SPIRV-Cross (spirv_cross crate 0.23.1: 10 objects, backends
             derived from one Compiler class) and
             benches/parity/spirv_cross_main.cpp, which cross-compiles the
             crate's 13 test shaders to GLSL, HLSL, MSL, C++ and JSON
  glslang    glslang (glslang-sys crate 0.9.2: 48 objects, the GLSL and HLSL
             front ends and the SPIR-V back end) and
             benches/parity/glslang_main.cpp, which compiles 160 of
             glslang's own test shaders to SPIR-V (AST dump, disassembly)
  geos       GEOS 3.15 (geos-src crate 0.2.5: 468 objects, one of them C)
             and benches/parity/geos_main.cpp, which takes generated
             polygons and lines through overlay, buffer, simplification,
             Delaunay and Voronoi, polygonization, prepared predicates and
             an STR tree with a visitor of its own, 40 rounds

For each it reports, as wpd / lld ratios (at most 1.00: wpd-ld is at
least as good): the program's run time (CPU time, the two programs run in
turn, RUNS rounds), the instructions it executes (valgrind; n/a without
it), the .text size, the link time (wall time, same job count, the two
links run in turn, RUNS rounds after a warm-up), and both links' peak
memory (maximum resident set of the link's process tree); the
devirtualized call sites of each (wpd: its report; LLVM: its remarks,
written as YAML by one extra link without importing), and whether both
programs print exactly what the -O0 build prints. A call site is counted
once however many modules hold a copy of its function: LLVM devirtualizes
(and remarks) each module's copy of an inline or template function, wpd's
report counts the copy the program keeps. Both sides are counted alike: by
(calling function, kind, target), with the largest count any one module
has. Guarded speculative calls, which LLVM does not make, are reported
apart, and the sites LLVM devirtualized that wpd did not are listed in the
JSON (llvm_only); those whose wpd call is a closed-set dispatch that
keeps a target LLVM 19 wrongly drops (one that never returns: its report
says why) are listed apart (llvm_only_never_returns), and so are those
wpd left indirect because a class of the call's type id is defined in a
shared library or a native object (llvm_only_open: LLVM 19's
--lto-whole-program-visibility assumes such a hierarchy closed, so a
subclass there that overrides the method would run the wrong body).

Code placement alone moves a program's run time by a few per cent: the
same objects linked by lld in another order ran 1.6% slower (the template
program). So each program is also linked, by both linkers, in LAYOUTS - 1
shuffled orders of its objects (archive members included; the same orders
for both), and the run-time ratio (run) is that of the means over the
orders of each program's best time; run/1 is the given order's alone.
The instruction count does not depend on placement at all. Times also
come as the median over rounds of the ratio within a round (run~, link~),
which a machine whose speed drifts disturbs less; link times and memory
are the given order's.

The header names the wpd-ld binary and whether BOLT laid out its code
(`make build` does; a plain `cargo build` links the same programs more
slowly: docs/performance.md, "Code layout").
Results: stdout, bench-out/parity.txt and bench-out/parity.json.
Env: WPD_LD_BIN (default target/release/wpd-ld), RUNS (default 3),
JOBS (default 2), LAYOUTS (default 3), PROGRAMS (default "hotloop templates demo alternating big box2d
interp richards";
also closedset, fixtures/e2e/closed_set, and libzmq, leveldb, libsass, protobuf, rocksdb, wabt, spirv_cross,
glslang, geos),
DEBUG_INFO=1 (objects built with -g; results in parity-g.txt/.json),
PROFILE=1 (profile-guided: each program is first built instrumented,
clang++-19 -O2 -fprofile-generate=DIR without LTO, run once with its
normal workload, its profile merged by llvm-profdata-19 merge; the bitcode
objects are then compiled with -fprofile-use=FILE added, and both linkers
link those same objects; results in parity-profile.txt/.json, with
DEBUG_INFO=1 parity-g-profile.txt/.json; work folders end in -profile).
The -O0 reference, and PROFILE=1's instrumented build and profile, are
built once per program, not per mode (work folders <program>-O0, with the
same -g/-profile suffix, and <program>-profile-gen); sources compile as
many at once as there are cores.
Exit status 1 when an output differs from -O0 (never for a ratio).
"""
import collections
import concurrent.futures
import glob
import hashlib
import json
import os
import re
import shutil
import statistics
import random
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WPD_LD = os.path.abspath(os.environ.get('WPD_LD_BIN', os.path.join(ROOT, 'target/release/wpd-ld')))
RUNS = int(os.environ.get('RUNS', '3'))
JOBS = int(os.environ.get('JOBS', '2'))
LAYOUTS = max(1, int(os.environ.get('LAYOUTS', '3')))
PROGRAMS = os.environ.get('PROGRAMS', 'hotloop templates demo alternating big box2d interp richards').split()
OUT = os.path.join(ROOT, 'bench-out')
WORK = os.path.join(OUT, 'parity-work')
# DEBUG_INFO=1: the objects carry debug info (-g), as most real builds'
# do; results then go to parity-g.txt / parity-g.json.
DEBUG_INFO = os.environ.get('DEBUG_INFO', '') not in ('', '0')
# PROFILE=1: the bitcode objects are compiled with -fprofile-use, the
# profile of one run of the program's instrumented build; results then go
# to parity-profile.txt / parity-profile.json.
PROFILE = os.environ.get('PROFILE', '') not in ('', '0')
SUFFIX = ('-g' if DEBUG_INFO else '') + ('-profile' if PROFILE else '')
CFLAGS = ['-O2', '-flto=thin', '-fwhole-program-vtables'] + (['-g'] if DEBUG_INFO else [])
MODES = {'split': [], 'nosplit': ['-fno-split-lto-unit']}
DEVIRT_KINDS = ('single-impl', 'uniform-ret-val', 'unique-ret-val', 'virtual-const-prop', 'virtual-const-prop-1-bit')


def distinct_sites(per_module):
    """Devirtualized call sites counted once per function, not per copy:
    per_module maps a module to a Counter of (caller, kind, target); a key's
    count is the largest any one module has (each copy of an inline
    function holds the same calls)."""
    best = collections.Counter()
    for counts in per_module.values():
        for key, n in counts.items():
            best[key] = max(best[key], n)
    return best


def remark_name(scalar):
    """A name in LLVM's YAML remarks (a plain or quoted scalar) as wpd's
    report writes it: without the suffix ThinLTO gives a promoted local
    (`.llvm.<hash>`), since the report names a function as its module does."""
    if len(scalar) > 1 and scalar[0] == scalar[-1] and scalar[0] in "'\"":
        scalar = scalar[1:-1]
    return re.sub(r'\.llvm\.\d+$', '', scalar)


def llvm_devirtualized(remark_files):
    """LLVM's devirtualized call sites, from its YAML remarks (one file per
    ThinLTO backend), as distinct_sites counts. The target is kept for
    single-impl only (the other kinds' remarks name none)."""
    per_module = {}
    for path in remark_files:
        counts = per_module.setdefault(path, collections.Counter())
        with open(path) as f:
            for doc in f.read().split('\n--- !'):
                if not doc.lstrip('- !').startswith('Passed') or not re.search(r'\nPass:\s+wholeprogramdevirt\n', doc):
                    continue
                kind = remark_name(re.search(r'\nName:\s+(\S+)', doc).group(1))
                if kind not in DEVIRT_KINDS:
                    continue
                caller = remark_name(re.search(r'\nFunction:\s+(\S+)', doc).group(1))
                target = re.search(r'\n\s+- FunctionName:\s+(\S+)', doc)
                counts[(caller, kind, remark_name(target.group(1)) if target and kind == 'single-impl' else '')] += 1
    return distinct_sites(per_module)


# What wpd's report says of a closed-set call whose slot LLVM 19 takes for
# a single implementation by dropping a target that never returns (its
# mustBeUnreachableFunction, reverted in LLVM 20): a correctness reason.
NEVER_RETURNS = 'never returns but runs when called'
# What it says of a call left indirect because a class of its type id is
# defined outside the bitcode (a shared library, a native object): another.
DEFINED_OUTSIDE = re.compile(r'^open hierarchy: .* is defined in native ')


def wpd_devirtualized(report):
    """wpd's devirtualized call sites (its report's calls, the program's
    copies), as distinct_sites counts, and its guarded speculative ones;
    the callers of closed-set calls whose slot keeps a target LLVM 19
    drops (NEVER_RETURNS), as (caller, kind) keys with kind single-impl;
    and the callers of calls left indirect because their hierarchy has a
    class defined outside the bitcode (DEFINED_OUTSIDE), counted by caller."""
    per_module, speculative, kept, outside = {}, 0, set(), collections.Counter()
    for c in report['calls']:
        if c['outcome'] == 'closed-set' and NEVER_RETURNS in (c.get('reason') or ''):
            kept.add((c['function'], 'single-impl'))
        if c['outcome'] == 'indirect' and DEFINED_OUTSIDE.match(c.get('reason') or ''):
            outside[c['function']] += 1
        if c['outcome'] == 'speculative':
            speculative += 1
        elif c['outcome'] in DEVIRT_KINDS:
            key = (c['function'], c['outcome'], (c.get('target') or '') if c['outcome'] == 'single-impl' else '')
            per_module.setdefault(c['module'], collections.Counter())[key] += 1
    return distinct_sites(per_module), speculative, kept, outside


def run(cmd, cwd=None, capture=True):
    r = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(f'thinlto_parity: failed ({r.returncode}): {" ".join(cmd)}\n{r.stderr}')
    return r.stdout if capture else ''


def write_if_changed(path, text):
    """Writes a generated file unless it already holds text (another run
    of this script, PROFILE=1 beside a plain one, may be reading it)."""
    if os.path.exists(path):
        with open(path) as f:
            if f.read() == text:
                return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as f:
        f.write(text)


def crate_dir(name, version):
    """The directory of crate `name` at `version`, fetched through cargo
    (as tests/realworld.rs fetches its code bases)."""
    proj = os.path.join(WORK, f'fetch-{name}')
    write_if_changed(os.path.join(proj, 'Cargo.toml'),
                     f'[package]\nname = "fetch-{name}"\nversion = "0.0.0"\nedition = "2021"\n'
                     f'[dependencies]\n{name} = "={version}"\n[workspace]\n')
    write_if_changed(os.path.join(proj, 'src', 'main.rs'), 'fn main() {}\n')
    run(['cargo', 'fetch', '--manifest-path', os.path.join(proj, 'Cargo.toml')])
    meta = json.loads(run(['cargo', 'metadata', '--format-version', '1', '--manifest-path', os.path.join(proj, 'Cargo.toml')]))
    pkg = next(p for p in meta['packages'] if p['name'] == name)
    return os.path.dirname(pkg['manifest_path'])


def box2d_root():
    """Box2D's sources, from the wrapped2d crate (cargo fetch)."""
    return os.path.join(crate_dir('wrapped2d', '0.4.2'), 'Box2D', 'Box2D')


class Spec:
    """How a program is built and run: its sources (.cpp/.cc compiled by
    clang++-19 with cxxflags, .c by clang-19 with cflags); main_stem, the
    driver's file name for a library (every other object then goes into an
    archive); libs, after the objects on each link line; args, its
    command-line arguments ({work} stands for the folder of the build
    run); normalize, applied to its output before it is compared with the
    -O0 build's (for output that holds timings); writes, a folder of the
    work folder that the program writes files into: it is emptied before
    each checked run, and the files' names and SHA-256 digests are part of
    the output compared."""

    def __init__(self, sources, cxxflags=(), cflags=(), main_stem=None, libs=(), args=(), normalize=None,
                 writes=None):
        self.sources, self.cxxflags, self.cflags = list(sources), list(cxxflags), list(cflags)
        self.main_stem, self.libs, self.args = main_stem, list(libs), list(args)
        self.normalize = normalize or (lambda out: out)
        self.writes = writes

    def command(self, prog, work):
        return [prog] + [a.replace('{work}', work) for a in self.args]

    def output(self, prog, work):
        """What a run of prog prints (normalized), then the files it wrote."""
        written = os.path.join(work, self.writes) if self.writes else None
        if written:
            shutil.rmtree(written, ignore_errors=True)
            os.makedirs(written)
        out = self.normalize(run(self.command(prog, work)))
        if written:
            for dp, _, fs in sorted(os.walk(written)):
                for f in sorted(fs):
                    with open(os.path.join(dp, f), 'rb') as fh:
                        out += f'{os.path.relpath(os.path.join(dp, f), written)} {hashlib.sha256(fh.read()).hexdigest()}\n'
        return out


# libzmq 4.3.5's configuration on Linux as the zeromq-src crate's build
# gives it (-D flags and an empty platform.hpp), without libsodium: as
# tests/realworld.rs builds it.
LIBZMQ_DEFINES = ['-DZMQ_USE_CV_IMPL_STL11=1', '-DZMQ_STATIC=1', '-DZMQ_USE_BUILTIN_SHA1=1', '-DZMQ_HAVE_WS=1',
                  '-DZMQ_HAVE_LINUX=1', '-DZMQ_IOTHREAD_POLLER_USE_EPOLL=1', '-DZMQ_POLL_BASED_ON_POLL=1',
                  '-DZMQ_HAVE_IPC=1', '-DHAVE_STRNLEN=1', '-DZMQ_HAVE_UIO=1', '-DZMQ_HAVE_STRUCT_SOCKADDR_UN=1']


def libzmq(src_dir):
    vendor = os.path.join(crate_dir('zeromq-src', '0.3.6+4.3.5'), 'vendor')
    write_if_changed(os.path.join(src_dir, 'platform.hpp'), '')
    srcs = sorted(os.path.join(vendor, 'src', f) for f in os.listdir(os.path.join(vendor, 'src'))
                  if f.endswith('.cpp') and f != 'wss_engine.cpp')
    flags = LIBZMQ_DEFINES + ['-w', '-fPIC'] + ['-I' + d for d in (os.path.join(vendor, 'include'),
                                                                   os.path.join(vendor, 'src'), src_dir)]
    return Spec(srcs + [os.path.join(vendor, 'external/sha1/sha1.c'),
                        os.path.join(ROOT, 'fixtures/realworld/libzmq_driver.cpp')],
                cxxflags=flags + ['-std=c++11'], cflags=flags, main_stem='libzmq_driver', libs=['-lpthread'])


# db_bench's workload: small enough for one run under callgrind to take
# well under a minute.
LEVELDB_ARGS = ['--num=20000', '--benchmarks=fillseq,readrandom,readseq', '--db={work}/leveldb-db']


def leveldb_output(out):
    """db_bench's output without what varies from run to run or between
    -O0 and -O2: the timings and the warning that optimization is off."""
    out = out.replace('WARNING: Optimization is disabled: benchmarks unnecessarily slow\n', '')
    out = re.sub(r' *\d+\.\d+ micros/op;', ' T micros/op;', out)
    return re.sub(r' *\d+\.\d+ MB/s', ' R MB/s', out)


def leveldb(src_dir):
    src = os.path.join(crate_dir('leveldb-sys', '2.0.9'), 'deps', 'leveldb-1.22')
    write_if_changed(os.path.join(src_dir, 'port', 'port_config.h'),
                     '#define HAVE_FDATASYNC 1\n#define HAVE_FULLFSYNC 0\n#define HAVE_O_CLOEXEC 1\n'
                     '#define HAVE_CRC32C 0\n#define HAVE_SNAPPY 0\n')
    skip = ('_test.cc', '_bench.cc', 'leveldbutil.cc', 'env_windows.cc')
    srcs = sorted(os.path.join(src, sub, f) for sub in ('db', 'table', 'util') for f in os.listdir(os.path.join(src, sub))
                  if f.endswith('.cc') and not f.endswith(skip))
    srcs += [os.path.join(src, 'helpers/memenv/memenv.cc'), os.path.join(src, 'db/db_bench.cc')]
    flags = ['-std=c++17', '-w', '-DLEVELDB_PLATFORM_POSIX=1', '-DLEVELDB_IS_BIG_ENDIAN=0',
             '-I' + src, '-I' + os.path.join(src, 'include'), '-I' + src_dir]
    return Spec(srcs, cxxflags=flags, main_stem='db_bench', libs=['-lpthread'], args=LEVELDB_ARGS,
                normalize=leveldb_output)


def libsass():
    root = os.path.join(crate_dir('sass-sys', '0.4.22'), 'libsass')
    # The sources libsass's own Makefile compiles (Makefile.conf).
    with open(os.path.join(root, 'Makefile.conf')) as f:
        conf = f.read().replace('\\\n', ' ')
    names = lambda var: re.search(rf'^{var}\s*=(.*)$', conf, re.M).group(1).split()
    srcs = [os.path.join(root, 'src', n) for n in names('SOURCES') + names('CSOURCES')]
    flags = ['-w', '-I' + os.path.join(root, 'include')]
    return Spec(srcs + [os.path.join(ROOT, 'benches/parity/libsass_main.cpp')], cxxflags=flags + ['-std=c++11'],
                cflags=flags, main_stem='libsass_main')


# unittest_enormous_descriptor.proto would take two thirds of protoc's run
# (and of the output) on its own.
PROTOBUF_SKIPPED = ('unittest_enormous_descriptor',)


def protobuf():
    """protoc 21.5 (protobuf-src crate): libprotobuf-lite, libprotobuf and
    libprotoc as protobuf's CMake build lists them (168 objects with protoc's
    main.cc), generating C++, Java and Python from protobuf's own .proto
    files."""
    root = os.path.join(crate_dir('protobuf-src', '1.1.0+21.5'), 'protobuf')
    srcs = []
    for lst in ('libprotobuf-lite', 'libprotobuf', 'libprotoc', 'protoc'):
        with open(os.path.join(root, 'cmake', lst + '.cmake')) as f:
            srcs += [os.path.join(root, p) for p in re.findall(r'\$\{protobuf_SOURCE_DIR\}/(\S+\.cc)\b', f.read())
                     if os.path.join(root, p) not in srcs]
    src = os.path.join(root, 'src')
    protos = sorted(os.path.relpath(p, src) for p in glob.glob(os.path.join(src, 'google/protobuf/*.proto'))
                    if not os.path.basename(p).startswith(PROTOBUF_SKIPPED))
    out = '{work}/generated'
    return Spec(srcs, cxxflags=['-std=c++14', '-w', '-DHAVE_PTHREAD=1', '-I' + src], main_stem='main',
                libs=['-lpthread'], writes='generated',
                args=['-I' + src, f'--cpp_out={out}', f'--java_out={out}', f'--python_out={out}'] + protos)


def rocksdb():
    """RocksDB 6.20.3 (librocksdb-sys crate): the library sources its build
    lists (rocksdb_lib_sources.txt, with the crate's build_version.cc), built
    with its Linux defines and no compression libraries, and
    benches/parity/rocksdb_main.cpp."""
    root = crate_dir('librocksdb-sys', '6.20.3')
    with open(os.path.join(root, 'rocksdb_lib_sources.txt')) as f:
        names = [n.strip() for n in f.read().split() if n.strip() and n.strip() != 'util/build_version.cc']
    srcs = [os.path.join(root, 'rocksdb', n) for n in names] + [os.path.join(root, 'build_version.cc')]
    flags = ['-std=c++11', '-w', '-DNDEBUG=1', '-DOS_LINUX', '-DROCKSDB_PLATFORM_POSIX', '-DROCKSDB_LIB_IO_POSIX',
             '-DROCKSDB_SUPPORT_THREAD_LOCAL'] + ['-I' + os.path.join(root, d) for d in ('rocksdb/include', 'rocksdb', '')]
    return Spec(srcs + [os.path.join(ROOT, 'benches/parity/rocksdb_main.cpp')], cxxflags=flags,
                main_stem='rocksdb_main', libs=['-lpthread', '-ldl'], args=['{work}/rocksdb-db'])


def wabt(src_dir):
    """wabt 1.0.13 (wabt-sys crate): libwabt's sources as its CMake list
    names them (WABT_LIBRARY_SRC), config.h as its CMake configuration
    writes it on Linux with clang, and benches/parity/wabt_main.cpp."""
    root = os.path.join(crate_dir('wabt-sys', '0.8.0'), 'wabt')
    with open(os.path.join(root, 'CMakeLists.txt')) as f:
        listed = re.search(r'set\(WABT_LIBRARY_SRC(.*?)\)', re.sub(r'#.*', '', f.read()), re.S).group(1)
    srcs = [os.path.join(root, n) for n in re.findall(r'^\s*(src/\S+\.cc?)\s*$', listed, re.M)]
    with open(os.path.join(root, 'src', 'config.h.in')) as f:
        config = f.read()
    values = {'HAVE_ALLOCA_H': 1, 'HAVE_UNISTD_H': 1, 'HAVE_SNPRINTF': 1, 'HAVE_SSIZE_T': 1, 'HAVE_STRCASECMP': 1,
              'HAVE_WIN32_VT100': 0, 'COMPILER_IS_CLANG': 1, 'COMPILER_IS_GNU': 0, 'COMPILER_IS_MSVC': 0,
              'WITH_EXCEPTIONS': 0}
    config = re.sub(r'#cmakedefine01 (\w+)', lambda m: f'#define {m.group(1)} {values[m.group(1)]}', config)
    config = config.replace('#cmakedefine CMAKE_PROJECT_VERSION "${CMAKE_PROJECT_VERSION}"',
                            '#define CMAKE_PROJECT_VERSION "1.0.13"').replace('@SIZEOF_SIZE_T@', '8')
    write_if_changed(os.path.join(src_dir, 'config.h'), config)
    flags = ['-w', '-D__STDC_LIMIT_MACROS=1', '-D__STDC_FORMAT_MACROS=1', '-D_POSIX_C_SOURCE=200809L',
             '-I' + root, '-I' + src_dir]
    return Spec(srcs + [os.path.join(ROOT, 'benches/parity/wabt_main.cpp')], cxxflags=flags + ['-std=c++11'],
                cflags=flags, main_stem='wabt_main')


def spirv_cross():
    """SPIRV-Cross (spirv_cross crate 0.23.1): its parser, its common
    compiler and the GLSL, HLSL, MSL, C++ and reflection backends, and
    benches/parity/spirv_cross_main.cpp, which cross-compiles the crate's
    test shaders with every backend."""
    crate = crate_dir('spirv_cross', '0.23.1')
    root = os.path.join(crate, 'src', 'vendor', 'SPIRV-Cross')
    srcs = sorted(os.path.join(root, f) for f in os.listdir(root)
                  if f.startswith('spirv_') and f.endswith('.cpp') and f != 'spirv_cross_c.cpp')
    shaders = sorted(glob.glob(os.path.join(crate, 'tests', 'shaders', '*.spv')))
    return Spec(srcs + [os.path.join(ROOT, 'benches/parity/spirv_cross_main.cpp')],
                cxxflags=['-std=c++14', '-w', '-I' + root], main_stem='spirv_cross_main', args=shaders)


def glslang():
    """glslang (glslang-sys crate 0.9.2: the GLSL and HLSL front ends, the
    generic code generator, resource limits and the SPIR-V back end, 48
    objects) and benches/parity/glslang_main.cpp, which parses, links and
    translates to SPIR-V glslang's own first 100 spv.*.frag and 60 hlsl.*.frag
    test shaders, three rounds each, with the AST dump and the disassembly
    of the first."""
    native = os.path.join(crate_dir('glslang-sys', '0.9.2+e1b562a'), 'native')
    root = os.path.join(native, 'glslang')
    lib = []
    for sub in ('glslang/MachineIndependent', 'glslang/MachineIndependent/preprocessor', 'glslang/HLSL',
                'glslang/GenericCodeGen', 'glslang/ResourceLimits', 'SPIRV'):
        lib += sorted(glob.glob(os.path.join(root, sub, '*.cpp')))
    lib.append(os.path.join(root, 'glslang/OSDependent/Unix/ossource.cpp'))
    test = os.path.join(root, 'Test')
    shaders = (sorted(glob.glob(os.path.join(test, 'spv.*.frag')))[:100]
               + sorted(glob.glob(os.path.join(test, 'hlsl.*.frag')))[:60])
    flags = ['-std=c++17', '-w', '-DENABLE_HLSL=1', '-DENABLE_SPIRV=1', '-DENABLE_OPT=0', '-I' + root,
             '-I' + os.path.join(native, 'build_info')]
    return Spec(lib + [os.path.join(ROOT, 'benches/parity/glslang_main.cpp')], cxxflags=flags,
                main_stem='glslang_main', libs=['-lpthread'], args=shaders)


def geos(src_dir):
    """GEOS 3.15 (geos-src crate 0.2.5: the library's C++ sources and the
    ryu C file, 468 objects), its version header as its CMake
    configuration writes it, and benches/parity/geos_main.cpp, which takes
    generated polygons and lines through overlay, buffer, simplification,
    triangulation, polygonization, prepared predicates and an STR tree."""
    root = os.path.join(crate_dir('geos-src', '0.2.5'), 'source')
    lib = sorted(os.path.join(dp, f) for dp, _, fs in os.walk(os.path.join(root, 'src'))
                 for f in fs if f.endswith(('.cpp', '.c')))
    with open(os.path.join(root, 'include', 'geos', 'version.h.in')) as f:
        version = f.read()
    for key, value in (('VERSION_MAJOR', '3'), ('VERSION_MINOR', '15'), ('VERSION_PATCH', '1'),
                       ('VERSION', '3.15.1dev'), ('JTS_PORT', '1.20.0')):
        version = version.replace(f'@{key}@', value)
    write_if_changed(os.path.join(src_dir, 'geos', 'version.h'), version)
    includes = ['-I' + os.path.join(root, 'include'), '-I' + src_dir, '-I' + os.path.join(root, 'src', 'deps')]
    flags = ['-w', '-DNDEBUG', '-DUSE_UNSTABLE_GEOS_CPP_API'] + includes
    return Spec(lib + [os.path.join(ROOT, 'benches/parity/geos_main.cpp')], cxxflags=flags + ['-std=c++17'],
                cflags=flags + ['-std=c99'], main_stem='geos_main', args=['40'])


def sources(program, src_dir):
    """Writes or finds the program's sources; returns its Spec."""
    if program == 'hotloop':
        d = os.path.join(ROOT, 'fixtures/thinlto/import')
    elif program == 'demo':
        d = os.path.join(ROOT, 'fixtures/demo')
    elif program == 'alternating':
        d = os.path.join(ROOT, 'benches/parity/alternating')
    elif program in ('interp', 'richards'):
        d = os.path.join(ROOT, 'benches/parity', program)
    elif program == 'closedset':
        d = os.path.join(ROOT, 'fixtures/e2e/closed_set')
    elif program == 'templates':
        d = src_dir
        run([sys.executable, os.path.join(ROOT, 'benches/parity/gen_templates.py'), d])
    elif program == 'big':
        d = src_dir
        run([os.path.join(ROOT, 'benches/gen_big.sh'), d, '30', '10', '8', '2000'])
    elif program == 'box2d':
        root = box2d_root()
        lib = [os.path.join(dp, f) for dp, _, fs in os.walk(os.path.join(root, 'Box2D')) for f in fs if f.endswith('.cpp')]
        return Spec(sorted(lib) + [os.path.join(ROOT, 'benches/parity/box2d_main.cpp')], cxxflags=['-I' + root],
                    main_stem='box2d_main')
    elif program == 'libzmq':
        return libzmq(src_dir)
    elif program == 'leveldb':
        return leveldb(src_dir)
    elif program == 'libsass':
        return libsass()
    elif program == 'protobuf':
        return protobuf()
    elif program == 'rocksdb':
        return rocksdb()
    elif program == 'wabt':
        return wabt(src_dir)
    elif program == 'spirv_cross':
        return spirv_cross()
    elif program == 'glslang':
        return glslang()
    elif program == 'geos':
        return geos(src_dir)
    else:
        sys.exit(f'thinlto_parity: unknown program {program}')
    return Spec(sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith('.cpp')))


def compile_command(spec, src, flags, obj):
    """The command compiling one source with flags and the program's own."""
    if src.endswith('.c'):
        return ['clang-19'] + flags + spec.cflags + ['-c', src, '-o', obj]
    return ['clang++-19'] + flags + spec.cxxflags + ['-c', src, '-o', obj]


def compile_all(commands):
    """Runs the compile commands, as many at once as the machine has cores
    (each in its source's folder)."""
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        list(pool.map(lambda c: run(c, cwd=os.path.dirname(c[c.index('-c') + 1])), commands))


def object_stem(k, src):
    return f'{k}-' + os.path.splitext(os.path.basename(src))[0]


def program_inputs(spec, objs, lib):
    """The link's inputs: the objects, or for a library the driver's
    object and an archive (written to lib) of all the others, as a real
    build links it; then the program's libraries."""
    if spec.main_stem:
        main_objs = [o for o in objs if o.endswith(f'-{spec.main_stem}.o')]
        if os.path.exists(lib):
            os.remove(lib)
        run(['llvm-ar-19', 'rcs', lib] + [o for o in objs if o not in main_objs])
        objs = main_objs + [lib]
    return objs + spec.libs


def build_reference(program, spec):
    """The -O0 build of the program and its (normalized) output: built
    once per program (it depends on no mode)."""
    if program in REFERENCES:
        return REFERENCES[program]
    work = os.path.join(WORK, f'{program}-O0{SUFFIX}')
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    o0 = [os.path.join(work, object_stem(k, s) + '.o') for k, s in enumerate(spec.sources)]
    compile_all([compile_command(spec, s, ['-O0'], o) for s, o in zip(spec.sources, o0)])
    ref_prog = os.path.join(work, 'prog.O0')
    run(['clang++-19'] + program_inputs(spec, o0, os.path.join(work, 'lib.a')) + ['-o', ref_prog])
    REFERENCES[program] = (work, spec.output(ref_prog, work))
    return REFERENCES[program]


REFERENCES = {}
PROFILES = {}


def build_profile(program, spec):
    """PROFILE=1: the program's profile, of one run of its instrumented
    build (clang++-19 -O2 -fprofile-generate, no LTO) with its normal
    workload, merged by llvm-profdata-19; built once per program."""
    if program in PROFILES:
        return PROFILES[program]
    work = os.path.join(WORK, f'{program}-profile-gen')
    shutil.rmtree(work, ignore_errors=True)
    raw = os.path.join(work, 'raw')
    os.makedirs(raw)
    flags = ['-O2', f'-fprofile-generate={raw}']
    objs = [os.path.join(work, object_stem(k, s) + '.o') for k, s in enumerate(spec.sources)]
    compile_all([compile_command(spec, s, flags, o) for s, o in zip(spec.sources, objs)])
    prog = os.path.join(work, 'prog.instrumented')
    run(['clang++-19'] + flags + program_inputs(spec, objs, os.path.join(work, 'lib.a')) + ['-o', prog])
    run(spec.command(prog, work))
    profile = os.path.join(work, 'merged.profdata')
    run(['llvm-profdata-19', 'merge', '-o', profile] + sorted(glob.glob(os.path.join(raw, '*.profraw'))))
    PROFILES[program] = profile
    return profile


def timed_links(cmds):
    """Wall times (ms) of each link command over RUNS rounds after a
    warm-up round, the commands run in turn within a round (so that a
    noisy stretch of the machine falls on both links alike), in reverse
    order every other round (so that neither link always follows the
    other): one list per command, round by round; and the largest peak
    resident set (KiB) of each link's process tree."""
    times, peak = [[] for _ in cmds], [0] * len(cmds)
    with tempfile.NamedTemporaryFile('r', suffix='.rss') as rss:
        for i in range(RUNS + 1):
            order = range(len(cmds)) if i % 2 == 0 else reversed(range(len(cmds)))
            for k in order:
                cmd = cmds[k]
                t0 = time.perf_counter()
                r = subprocess.run(['/usr/bin/time', '-f', '%M', '-o', rss.name] + cmd,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                ms = (time.perf_counter() - t0) * 1000
                if r.returncode != 0:
                    sys.exit(f'thinlto_parity: link failed: {" ".join(cmd)}\n{r.stderr}')
                rss.seek(0)
                peak[k] = max(peak[k], int(rss.read().split()[-1]))
                if i > 0:
                    times[k].append(ms)
    return times, peak


def run_times(progs, spec, work):
    """CPU time (user + system, ms) of each program over RUNS rounds, the
    programs run in turn within a round, in reverse order every other round
    (so that neither always runs first): one list per program, round by
    round. CPU time rather than wall time: on a shared machine, waiting
    for a core is not the program's."""
    times = [[] for _ in progs]
    for r in range(RUNS):
        order = range(len(progs)) if r % 2 == 0 else reversed(range(len(progs)))
        for i in order:
            prog = progs[i]
            # (stderr too: db_bench writes its progress there)
            child = subprocess.Popen(spec.command(prog, work), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            _, status, usage = os.wait4(child.pid, 0)
            child.returncode = os.waitstatus_to_exitcode(status)
            if child.returncode != 0:
                sys.exit(f'thinlto_parity: {prog} exited {child.returncode}')
            times[i].append((usage.ru_utime + usage.ru_stime) * 1000)
    return times


def instructions(prog, spec, work):
    """(instructions executed, indirect calls executed) by the program, or
    (None, None) without valgrind. Counted by callgrind (the same on every
    run, whatever the machine's load or the code's alignment): the
    instructions are its total, the indirect calls the executions of every
    `call *` instruction of the program's own code (its disassembly; calls
    in shared libraries are not counted). Counted on a copy without debug
    info: the same code, and Debian's valgrind 3.19 cannot read clang 19's
    DWARF 5 (DEBUG_INFO=1)."""
    if shutil.which('valgrind') is None:
        return None, None
    counted = prog + '.nodebug'
    subprocess.run(['llvm-objcopy-19', '--strip-debug', prog, counted], check=True)
    out = counted + '.callgrind'
    r = subprocess.run(['valgrind', '--tool=callgrind', '--dump-instr=yes', '--compress-pos=no',
                        '--compress-strings=no', f'--callgrind-out-file={out}'] + spec.command(counted, work),
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0 or not os.path.exists(out):
        sys.exit(f'thinlto_parity: valgrind {prog} failed:\n{r.stderr}')
    # Self cost per executed address of the program's own object; the line
    # after a `calls=` line is a call's inclusive cost, not the
    # instruction's own.
    total, own, by_fn, obj, fn, skip = 0, {}, {}, None, None, False
    with open(out) as f:
        for line in f:
            if line.startswith('summary:'):
                total = int(line.split()[1])
            elif line.startswith('ob='):
                obj = line[3:].strip()
            elif line.startswith('fn='):
                fn = line[3:].strip()
            elif line.startswith('calls='):
                skip = True
            elif line.startswith('0x'):
                if skip:
                    skip = False
                    continue
                if obj == os.path.abspath(counted) or obj == counted:
                    addr, _, ir = line.split()
                    a = int(addr, 16)
                    own[a] = own.get(a, 0) + int(ir)
                    by_fn.setdefault(fn, []).append(a)
    os.remove(out)
    # A position-independent program runs at a load bias: main's entry,
    # its lowest executed address, against its address in the file.
    main_addr = next(int(l.split()[0], 16) for l in run(['llvm-nm-19', counted]).splitlines()
                     if l.split()[-1] == 'main' and len(l.split()) == 3)
    bias = min(by_fn['main']) - main_addr
    calls = [int(l.split(':')[0], 16) for l in run(['llvm-objdump-19', '-d', '--no-show-raw-insn', counted]).splitlines()
             if re.search(r'\bcall[a-z]*\s+\*', l)]
    return total, sum(own.get(a + bias, 0) for a in calls)


def paired_ratio(wpd, lld):
    """The median over rounds of wpd's time / lld's time in the same round.
    On a machine whose speed drifts (a shared VM), a slow stretch falls on
    both measurements of a round, so this ratio is steadier than the ratio
    of the two best times, which compares two different moments."""
    return statistics.median(w / l for w, l in zip(wpd, lld))


def text_size(prog):
    for line in run(['size', '-A', prog]).splitlines():
        parts = line.split()
        if parts and parts[0] == '.text':
            return int(parts[1])
    return 0


# The file in a work folder that lists the link's inputs, in order.
LINK_INPUTS = 'link-inputs.json'


def link_commands(objs, wpd_prog, lld_prog, jobs, wpd_extra=()):
    """The two links compared, as clang++ command lines: wpd-ld's, then
    lld's ThinLTO with LLVM's whole-program devirtualization."""
    wpd = (['clang++-19'] + CFLAGS + [f'--ld-path={WPD_LD}', '-Wl,--lto-whole-program-visibility',
                                      f'-Wl,--wpd-jobs={jobs}'] + list(wpd_extra) + objs + ['-o', wpd_prog])
    lld = (['clang++-19'] + CFLAGS + ['-fuse-ld=lld', '-Wl,--lto-whole-program-visibility',
                                      f'-Wl,--thinlto-jobs={jobs}'] + objs + ['-o', lld_prog])
    return wpd, lld


def bench(program, mode):
    work = os.path.join(WORK, f'{program}-{mode}{SUFFIX}')
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    spec = sources(program, os.path.join(WORK, f'{program}-src'))
    _, expected = build_reference(program, spec)
    flags = CFLAGS + MODES[mode] + ([f'-fprofile-use={build_profile(program, spec)}'] if PROFILE else [])
    objs = [os.path.join(work, object_stem(k, s) + '.o') for k, s in enumerate(spec.sources)]
    compile_all([compile_command(spec, s, flags, o) for s, o in zip(spec.sources, objs)])
    # The link orders: the given one, then LAYOUTS - 1 shuffles of it (the
    # same for both linkers). A program's code placement follows the order
    # of its inputs, and placement alone moves its run time by a few per
    # cent (lld's own template program: 1.6% between two orders of the
    # same objects), so the run-time ratio averages over placements.
    orders = [objs] + [random.Random(f'{program}-{mode}-{k}').sample(objs, len(objs)) for k in range(1, LAYOUTS)]
    # A library: everything but the driver goes into an archive, as a real
    # build links it.
    layouts = [program_inputs(spec, order, os.path.join(work, 'lib.a' if k == 0 else f'lib-{k}.a'))
               for k, order in enumerate(orders)]
    objs = layouts[0]
    output = lambda prog: spec.output(prog, work)

    # The link's inputs, for benches/link_instructions.py.
    with open(os.path.join(work, LINK_INPUTS), 'w') as f:
        json.dump(objs, f, indent=1)
    report = os.path.join(work, 'report.json')
    wpd_prog, lld_prog = os.path.join(work, 'prog.wpd'), os.path.join(work, 'prog.lld')
    wpd_cmd, lld_cmd = link_commands(objs, wpd_prog, lld_prog, JOBS, ['-Wl,--wpd-report=' + report])
    (wpd_links, lld_links), (wpd_peak, lld_peak) = timed_links([wpd_cmd, lld_cmd])
    wpd_link, lld_link = min(wpd_links), min(lld_links)
    same = output(wpd_prog) == expected and output(lld_prog) == expected
    with open(report) as f:
        wpd_report = json.load(f)
    wpd_sites, wpd_speculative, wpd_kept, wpd_outside = wpd_devirtualized(wpd_report)
    # (its own output: that link does not import, and is not the program
    # measured). LLVM emits its devirtualization remarks only when
    # -pass-remarks asks for them; the YAML files say in which function.
    remarks_yaml = os.path.join(work, 'remarks.yaml')
    for old in glob.glob(remarks_yaml + '*'):
        os.remove(old)
    remarks_cmd = lld_cmd[:-1] + [os.path.join(work, 'prog.remarks')]
    run(remarks_cmd + ['-Wl,-mllvm,-pass-remarks=wholeprogramdevirt', '-Wl,-mllvm,-import-instr-limit=0',
                       f'-Wl,--opt-remarks-filename,{remarks_yaml}', '-Wl,--opt-remarks-passes,wholeprogramdevirt'])
    lld_sites = llvm_devirtualized(sorted(glob.glob(remarks_yaml + '*')))
    # LLVM's calls wpd did not make, but for those its report gives a
    # correctness reason for (a closed-set dispatch that keeps a target
    # LLVM 19 drops; a call left indirect in a function whose calls wpd
    # found open through a class defined outside the bitcode): listed apart.
    missed = [(k, n) for k, n in lld_sites.items() if n > wpd_sites[k]]
    describe = lambda k, n: f'{k[0]} {k[1]} {k[2]} ({n} vs {wpd_sites[k]})'.rstrip()
    llvm_only_kept = sorted(describe(k, n) for k, n in missed if k[:2] in wpd_kept)
    # A caller's missed calls are the open ones only if it has as many of those.
    missed_by_caller = collections.Counter()
    for k, n in missed:
        if k[:2] not in wpd_kept:
            missed_by_caller[k[0]] += n - wpd_sites[k]
    is_open = lambda k: k[:2] not in wpd_kept and 0 < missed_by_caller[k[0]] <= wpd_outside[k[0]]
    llvm_only_open = sorted(describe(k, n) for k, n in missed if is_open(k))
    llvm_only = sorted(describe(k, n) for k, n in missed if k[:2] not in wpd_kept and not is_open(k))
    wpd_devirt, lld_devirt = sum(wpd_sites.values()), sum(lld_sites.values())
    # The other link orders' programs: linked once each, checked like the
    # first, then run as often.
    progs = [(wpd_prog, lld_prog)]
    for k, order in enumerate(layouts[1:], start=1):
        pair = (f'{wpd_prog}.{k}', f'{lld_prog}.{k}')
        for cmd in link_commands(order, *pair, JOBS):
            run(cmd)
        same = same and all(output(p) == expected for p in pair)
        progs.append(pair)
    best, wpd_all, lld_all = [], [], []
    for pair in progs:
        wpd_runs, lld_runs = run_times(list(pair), spec, work)
        best.append((min(wpd_runs), min(lld_runs)))
        wpd_all += wpd_runs
        lld_all += lld_runs
    wpd_run = statistics.mean(w for w, _ in best)
    lld_run = statistics.mean(l for _, l in best)
    (wpd_instr, wpd_icalls), (lld_instr, lld_icalls) = instructions(wpd_prog, spec, work), instructions(lld_prog, spec, work)
    wpd_text, lld_text = text_size(wpd_prog), text_size(lld_prog)
    return {
        'program': program, 'mode': mode, 'objects': len(objs) - len(spec.libs), 'layouts': len(layouts),
        'run_ms': [round(wpd_run, 1), round(lld_run, 1)], 'run_ratio': wpd_run / lld_run,
        'run_paired_ratio': paired_ratio(wpd_all, lld_all),
        'run_first_layout_ratio': best[0][0] / best[0][1],
        'run_ms_by_layout': [[round(w, 1), round(l, 1)] for w, l in best],
        'instructions': [wpd_instr, lld_instr],
        'instruction_ratio': wpd_instr / lld_instr if wpd_instr and lld_instr else None,
        'indirect_calls': [wpd_icalls, lld_icalls],
        'indirect_call_ratio': wpd_icalls / lld_icalls if wpd_icalls is not None and lld_icalls else None,
        'text_bytes': [wpd_text, lld_text], 'text_ratio': wpd_text / lld_text,
        'link_ms': [round(wpd_link, 1), round(lld_link, 1)], 'link_ratio': wpd_link / lld_link,
        'link_paired_ratio': paired_ratio(wpd_links, lld_links),
        'peak_kib': [wpd_peak, lld_peak], 'peak_ratio': wpd_peak / lld_peak,
        'devirtualized': [wpd_devirt, lld_devirt], 'wpd_speculative': wpd_speculative, 'llvm_only': llvm_only,
        'llvm_only_never_returns': llvm_only_kept, 'llvm_only_open': llvm_only_open,
        'output_matches_O0': same,
        'wpd_phases_ms': wpd_report.get('timings_ms', {}),
    }


def code_layout(binary):
    """How the wpd-ld binary's code is laid out: by BOLT from a profile
    (linker-shim/bolt.sh, what `make build` does), or as the linker left it
    (a plain `cargo build`), which links the same programs more slowly."""
    sections = subprocess.run(['readelf', '-S', '--wide', binary], capture_output=True, text=True, check=True).stdout
    if '.note.bolt_info' in sections:
        return 'code laid out by BOLT (linker-shim/bolt.sh)'
    return "the linker's code layout (linker-shim/bolt.sh not run: slower links)"


def main():
    if not os.access(WPD_LD, os.X_OK):
        sys.exit(f'thinlto_parity: {WPD_LD} not found; run cargo build --release first')
    for tool in ['clang++-19', 'clang-19', 'ld.lld-19', 'size', 'readelf'] + (['llvm-profdata-19'] if PROFILE else []):
        if shutil.which(tool) is None:
            sys.exit(f'thinlto_parity: {tool} not found')
    os.makedirs(WORK, exist_ok=True)
    layout = code_layout(WPD_LD)
    rows = []
    for program in PROGRAMS:
        for mode in MODES:
            print(f'benchmarking {program} ({mode})...', file=sys.stderr)
            rows.append(bench(program, mode))
    head = (f'ThinLTO parity: wpd-ld vs lld ThinLTO + LLVM WPD ({time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}, '
            f'{os.cpu_count()} cores, {JOBS} jobs, {RUNS} rounds, {LAYOUTS} link orders{", objects built with -g" if DEBUG_INFO else ""}'
            f'{", objects built with -fprofile-use (a run of the -fprofile-generate build)" if PROFILE else ""})\n'
            f'wpd-ld: {WPD_LD}, {layout}\n'
            'ratios are wpd / lld: at most 1.00 means wpd-ld is at least as good\n')
    fmt = '{:<10} {:<8} {:>4} {:>6} {:>6} {:>6} {:>6} {:>7} {:>6} {:>6} {:>6} {:>9} {:>11} {:>11} {:>6}'
    lines = [head, fmt.format('program', 'mode', 'objs', 'run', 'run~', 'run/1', 'instr', 'icalls', '.text', 'link', 'link~',
                              'peak mem', 'devirt wpd', 'devirt lld', 'output')]
    for r in rows:
        instr = 'n/a' if r['instruction_ratio'] is None else f"{r['instruction_ratio']:.3f}"
        icalls = 'n/a' if r['indirect_call_ratio'] is None else f"{r['indirect_call_ratio']:.3f}"
        lines.append(fmt.format(r['program'], r['mode'], r['objects'], f"{r['run_ratio']:.2f}",
                                f"{r['run_paired_ratio']:.2f}", f"{r['run_first_layout_ratio']:.2f}", instr, icalls,
                                f"{r['text_ratio']:.2f}", f"{r['link_ratio']:.2f}", f"{r['link_paired_ratio']:.2f}",
                                f"{r['peak_ratio']:.2f}", r['devirtualized'][0], r['devirtualized'][1],
                                'same' if r['output_matches_O0'] else 'DIFFERS'))
    lines.append(f'run: ratio of the mean over {LAYOUTS} link orders of the best run times; run~: median of the '
                 'ratio within a round (all orders); run/1: the given order alone; instr: instructions executed; '
                 'icalls: indirect calls executed (call * in the program\'s code)')
    lines.append('link: ratio of the best times; link~: median over rounds of the ratio within a round')
    lines.append('devirt: distinct call sites devirtualized (a function copied into several modules counts once); '
                 "wpd's guarded speculative calls are not in it")
    lines.append('')
    lines.append('absolute values (wpd / lld): run ms (mean of the orders), .text bytes, link ms, peak KiB; '
                 'run ms by link order; instructions executed')
    for r in rows:
        lines.append(f"{r['program']:<10} {r['mode']:<8} run {r['run_ms']}, .text {r['text_bytes']}, "
                     f"link {r['link_ms']}, peak {r['peak_kib']}")
        lines.append(f"{'':<19} run by order {r['run_ms_by_layout']}, instructions {r['instructions']}, "
                     f"indirect calls {r['indirect_calls']}")
        lines.append(f"{'':<19} speculative calls (wpd) {r['wpd_speculative']}; devirtualized by LLVM only: "
                     f"{', '.join(r['llvm_only']) or 'none'}")
        if r['llvm_only_never_returns']:
            lines.append(f"{'':<19} devirtualized by LLVM only, dispatched by wpd (a target that never returns, "
                         f"which LLVM 19 drops): {', '.join(r['llvm_only_never_returns'])}")
        if r.get('llvm_only_open'):
            lines.append(f"{'':<19} devirtualized by LLVM only, left indirect by wpd (a class of the type id is "
                         f"defined outside the bitcode): {', '.join(r['llvm_only_open'])}")
    text = '\n'.join(lines) + '\n'
    print(text)
    with open(os.path.join(OUT, f'parity{SUFFIX}.txt'), 'w') as f:
        f.write(text)
    with open(os.path.join(OUT, f'parity{SUFFIX}.json'), 'w') as f:
        json.dump(rows, f, indent=1)
    print(f'results written to {OUT}/parity{SUFFIX}.txt and parity{SUFFIX}.json', file=sys.stderr)
    if not all(r['output_matches_O0'] for r in rows):
        sys.exit(1)


if __name__ == '__main__':
    main()
