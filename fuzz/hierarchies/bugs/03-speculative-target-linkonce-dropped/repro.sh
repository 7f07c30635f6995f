#!/usr/bin/env bash
# wpd-ld link fails: a speculative (guarded) call names a linkonce_odr target
# whose only definition is in another module, and that module's backend
# discards it. Found by the fuzzer (shape const-vtable, seed 14 with
# --wpd-speculate=2: "undefined reference to Kv0E::~Kv0E()" from kv0_0).
# Expected: links, prints "3" (as clang++-19 -O0 k.cpp main.cpp).
# Actual:   speculative: guarded direct call to _ZN1E1fEv (in _Z1kP1B, k.o)
#           ld.lld-19: error: undefined symbol: E::f()   (referenced by k.o)
# k.o's backend references _ZN1E1fEv, but main.o's native object
# (--wpd-save-temps; nm) no longer defines it: E's vtable and E::f() were
# linkonce_odr in main.o only and became unreferenced there once clang had
# devirtualized main's calls and dropped the new/delete pair (the summary
# still shows E's vtable, so the thin link counts E::f as a target). A guarded
# target must stay defined where it is (or be imported into the caller).
# With -Wl,--lto-whole-program-visibility the call becomes single-impl and
# fails the same way (undefined E::f()); lld's own ThinLTO with whole-program
# visibility devirtualizes it too (single-impl) but links and prints 3.
# Status: fails with the wpd-ld of the fuzzing campaign (8d7008f plus work in
# progress); the wpd-ld of the current tree links it: this script prints 3
# twice.
set -u
cd "$(dirname "$0")"
ROOT=$(cd ../../../.. && pwd)
WPD_LD=${WPD_LD:-$ROOT/target/release/wpd-ld}
T=$(mktemp -d); cp *.h *.cpp "$T"; cd "$T"
clang++-19 -O0 k.cpp main.cpp -o ref && ./ref
for f in k main; do clang++-19 -O2 -flto=thin -fwhole-program-vtables -c $f.cpp -o $f.o; done
clang++-19 -O2 -flto=thin --ld-path="$WPD_LD" -Wl,--wpd-remarks main.o k.o -o p && ./p
