#!/usr/bin/env bash
# wpd-ld link fails: unique_ret_val whose unique member is an
# anonymous-namespace (local) vtable, with -fno-split-lto-unit.
# Expected: links, prints "1 0" (as clang++-19 -O0 a.cpp main.cpp).
# Actual: ld.lld-19: error: undefined symbol: vtable for (anonymous namespace)::D (.wpd.<hash>)
# The backend of a.o both references the plan's hidden alias
# _ZTVN12_GLOBAL__N_11DE.wpd.<hash> (the unique-member comparison) and defines
# it; the definition gets LLVM's auto-rename `.wpd.<hash>.1` (nm shows U and D .1).
# With split LTO units (no -fno-split-lto-unit) it links and runs fine.
# Status: fixed by 1d6690f (hidden aliases for local vtables exist before
# unique-return rewrites name them); this script now prints "1 0" twice.
set -eu
cd "$(dirname "$0")"
ROOT=$(cd ../../../.. && pwd)
T=$(mktemp -d); cp *.h *.cpp "$T"; cd "$T"
WPD_LD=${WPD_LD:-$ROOT/target/release/wpd-ld}
clang++-19 -O0 a.cpp main.cpp -o ref && ./ref
for f in a main; do clang++-19 -O2 -flto=thin -fwhole-program-vtables -fno-split-lto-unit -c $f.cpp -o $f.o; done
clang++-19 -O2 -flto=thin --ld-path="$WPD_LD" -Wl,--lto-whole-program-visibility -Wl,--wpd-remarks a.o main.o -o p
./p
