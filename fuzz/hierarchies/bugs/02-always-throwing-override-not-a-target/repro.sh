#!/usr/bin/env bash
# Wrong single_impl: an override that always throws is dropped from the
# slot's targets because its entry block ends in `unreachable`
# (__cxa_throw; unreachable), as LLVM 19's mustBeUnreachableFunction does.
# lld 19's own ThinLTO is wrong the same way; LLVM 20 reverted that rule
# (llvm-project PR #115668: "Regard unreachable function as a possible
# devirtualizable target", motivated by LOG(FATAL)-style functions).
# Expected (-O0):  f: 1 / caught 42
# Actual (wpd-ld): f: 1 / f: 2   (remark: single-impl ... _ZN1B1fEi)
# Status: fixed by c92e406 (only a body that is nothing but `unreachable`
# drops a function from the targets); this script now prints "same output".
set -u
cd "$(dirname "$0")"
ROOT=$(cd ../../../.. && pwd)
WPD_LD=${WPD_LD:-$ROOT/target/release/wpd-ld}
T=$(mktemp -d); cp *.h *.cpp "$T"; cd "$T"
clang++-19 -O0 b.cpp main.cpp -o ref && ./ref > ref.out
for f in b main; do clang++-19 -O2 -flto=thin -fwhole-program-vtables -c $f.cpp -o $f.o; done
clang++-19 -O2 -flto=thin --ld-path="$WPD_LD" -Wl,--lto-whole-program-visibility -Wl,--wpd-remarks b.o main.o -o p
./p > p.out
diff ref.out p.out && echo "same output"
