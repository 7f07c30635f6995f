#!/usr/bin/env bash
# Lays out wpd-ld's machine code by profile with LLVM's BOLT (bolt-19).
#
#   linker-shim/bolt.sh [path/to/wpd-ld]      (default target/release/wpd-ld)
#
# Nearly all of a link's time is LLVM's optimizer and code generator, linked
# into wpd-ld from Debian's static libraries, laid out in archive order: the
# hot code of a backend is spread over tens of megabytes. BOLT instruments
# the binary, this script runs training links through the instrumented copy
# (seven programs written by fuzz/hierarchies/gen.py, none of them a
# benchmark's or a test's program), and BOLT rewrites the binary with its hot
# functions together and each function's hot blocks first (ext-tsp, hot/cold
# splitting). It changes where the code is, never what it does: the objects
# and programs wpd-ld writes are byte-identical (tests/link_options.rs
# `optimized_layout_same_output` checks it). docs/performance.md, "Code layout"
# and the dated entry "wpd-ld's code layout", has the measurements.
#
# The binary is rewritten in place (the file cargo hard-links to
# target/release/deps, so cargo still sees its own output, fresh). It needs
# the relocations the linker kept (linker-shim/build.rs, --emit-relocs). A
# binary BOLT already rewrote is left as it is; without llvm-bolt this says
# so and leaves the binary as the linker laid it out (correct, slower).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BIN=${1:-target/release/wpd-ld}
BINDIR=$(llvm-config-19 --bindir)
# Called by its real path: BOLT finds its instrumentation runtime in ../lib.
BOLT=$BINDIR/llvm-bolt
MERGE=$BINDIR/merge-fdata

say() { echo "bolt.sh: $*"; }
[ -f "$BIN" ] || { echo "bolt.sh: error: $BIN: no such file (cargo build --release first)" >&2; exit 1; }
if [ ! -x "$BOLT" ] || [ ! -x "$MERGE" ]; then
  say "llvm-bolt (bolt-19) not installed: $BIN keeps the linker's layout (apt-get install bolt-19)"
  exit 0
fi
sections=$(readelf -S --wide "$BIN")
if grep -q '\.note\.bolt_info' <<<"$sections"; then
  say "$BIN is already laid out by BOLT"
  exit 0
fi
if ! grep -q '\.rela\.text' <<<"$sections"; then
  echo "bolt.sh: error: $BIN has no relocations (linker-shim/build.rs links it with --emit-relocs)" >&2
  exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/wpd-bolt.XXXXXX")
work=$(cd "$work" && pwd)
trap 'rm -rf "$work"' EXIT
# BOLT's log: kept only to show on failure.
log=$work/bolt.log
run_bolt() {
  if ! "$BOLT" "$@" >"$log" 2>&1; then
    tail -20 "$log" >&2
    echo "bolt.sh: error: llvm-bolt failed on $BIN (log above)" >&2
    exit 1
  fi
}

say "instrumenting $BIN"
run_bolt "$BIN" -instrument -o "$work/wpd-ld.inst" \
  -instrumentation-file="$work/profile" -instrumentation-file-append-pid

# Training: ThinLTO objects as clang writes them, split and unsplit units,
# linked with whole-program visibility, one job (one profile per link).
cxx=clang++-19
flags=(-O2 -flto=thin -fwhole-program-vtables)
train() { # name, objects...
  local name=$1; shift
  "$cxx" "${flags[@]}" --ld-path="$work/wpd-ld.inst" -Wl,--lto-whole-program-visibility -Wl,--wpd-jobs=1 \
    "$@" -o "$work/$name.exe" 2>"$work/$name.err" || {
    cat "$work/$name.err" >&2
    echo "bolt.sh: error: training link $name failed" >&2
    exit 1
  }
}
train_gen() { # seed, gen.py options...
  local seed=$1; shift
  local dir=$work/gen$seed
  python3 fuzz/hierarchies/gen.py --seed "$seed" --out "$dir" --native 0 --no-shared --no-archive "$@" >/dev/null
  local objs=()
  for src in "$dir"/*.cpp; do
    "$cxx" "${flags[@]}" -std=c++20 -w -c "$src" -o "${src%.cpp}.o"
    objs+=("${src%.cpp}.o")
  done
  train "gen$seed" "${objs[@]}"
}
say "training links"
# Seeds that no test (tests/fuzz_smoke.rs) and no benchmark uses, with the
# shapes they had when the layout was measured: the later shapes (muldefs,
# interposed) need link lines of their own (a native patch first, a shared
# library), which one link of every source cannot give.
train_gen 901 --tus 6 --split --shapes unicode
train_gen 902 --tus 6 --no-split --shapes multi-base,untyped
train_gen 903 --tus 5 --split --shapes placement-dtor,untyped
train_gen 904 --tus 6 --no-split --shapes const-vtable,placement-dtor,trap-uncalled
train_gen 905 --tus 6 --split --shapes multi-base,trap-called
train_gen 906 --tus 6 --no-split --shapes multi-base,const-vtable,placement-dtor,trap-uncalled,unicode,untyped
train_gen 907 --tus 4 --split --shapes unicode

shopt -s nullglob
profiles=("$work"/profile.*.fdata)
[ ${#profiles[@]} -gt 0 ] || { echo "bolt.sh: error: the training links wrote no profile" >&2; exit 1; }
"$MERGE" "${profiles[@]}" -o "$work/merged.fdata" 2>/dev/null

say "laying out $BIN from ${#profiles[@]} training profiles"
run_bolt "$BIN" -o "$work/wpd-ld.bolt" -data="$work/merged.fdata" \
  -reorder-blocks=ext-tsp -reorder-functions=cdsort -split-functions -split-all-cold -split-eh \
  -use-gnu-stack
# The layout must not change what wpd-ld writes: the demo (not a training
# program) linked by the new binary and by the linker's layout must be the
# same bytes.
say "checking: the demo links to the same program with either layout"
demo=()
for src in fixtures/demo/*.cpp; do
  "$cxx" "${flags[@]}" -c "$src" -o "$work/demo-$(basename "${src%.cpp}").o"
  demo+=("$work/demo-$(basename "${src%.cpp}").o")
done
"$cxx" "${flags[@]}" --ld-path="$work/wpd-ld.bolt" -Wl,--lto-whole-program-visibility "${demo[@]}" -o "$work/demo.bolt.exe"
"$cxx" "${flags[@]}" --ld-path="$(realpath "$BIN")" -Wl,--lto-whole-program-visibility "${demo[@]}" -o "$work/demo.plain.exe"
cmp -s "$work/demo.bolt.exe" "$work/demo.plain.exe" || {
  echo "bolt.sh: error: laid out by BOLT, $BIN links the demo to other bytes than before; $BIN keeps the linker's layout" >&2
  exit 1
}
# Every file is replaced by a rename, so none is ever half written.
replace() { # source, destination
  cp "$1" "$2.bolt-new"
  mv -f "$2.bolt-new" "$2"
}
# The linker's layout stays beside the binary as wpd-ld.prebolt
# (tests/link_options.rs compares the two).
replace "$BIN" "$(dirname "$BIN")/wpd-ld.prebolt"
# cargo's own output is target/release/deps/wpd_ld-<hash>, hard-linked to
# $BIN (and linked again at every build, fresh or not): both names get the
# new binary.
deps_copy=$(find "$(dirname "$BIN")/deps" -maxdepth 1 -samefile "$BIN" 2>/dev/null | head -1)
[ -z "$deps_copy" ] || replace "$work/wpd-ld.bolt" "$deps_copy"
replace "$work/wpd-ld.bolt" "$BIN"
say "done: $BIN ($(stat -c %s "$BIN") bytes)"
