#!/usr/bin/env bash
# Benchmark: guarded speculative devirtualization. The program
# (benches/speculate/) calls Engine::step in a hot loop (ROUNDS x 1000
# calls, default 100000 rounds) on objects of one bitcode class, Diesel;
# Engine's hierarchy is open because electric.cpp, compiled without LTO,
# derives from it, so wpd may not rewrite the call unguarded. The same
# objects are linked through wpd-ld with whole-program visibility twice:
#   spec: -Wl,--wpd-speculate=1   (a guarded direct call, inlinable)
#   off : -Wl,--wpd-speculate=off (the plain indirect call)
# Each program runs RUNS times (default 5), interleaved; both must print the
# same thing. Reports median wall times and the ratio spec/off (below 1:
# speculation is faster).
# Results go to stdout and bench-out/speculate.txt.
# Env: WPD_LD_BIN (default target/release/wpd-ld), RUNS, ROUNDS.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
wpd_ld=${WPD_LD_BIN:-$root/target/release/wpd-ld}
runs=${RUNS:-5}
rounds=${ROUNDS:-100000}
out=$root/bench-out
work=$out/speculate-work
src=$root/benches/speculate
cflags=(-O2 -flto=thin -fwhole-program-vtables)

[[ -x $wpd_ld ]] || { echo "speculate.sh: $wpd_ld not found; run 'cargo build --release -p linker-shim' first" >&2; exit 1; }
wpd_ld=$(cd "$(dirname "$wpd_ld")" && pwd)/$(basename "$wpd_ld")
for tool in clang++-19 ld.lld-19 python3; do
  command -v "$tool" >/dev/null || { echo "speculate.sh: $tool not found" >&2; exit 1; }
done

rm -rf "$work"
mkdir -p "$work"
echo "compiling benches/speculate and linking it twice through wpd-ld..." >&2
clang++-19 "${cflags[@]}" -c "$src/engine.cpp" -o "$work/engine.o"
clang++-19 "${cflags[@]}" -c "$src/main.cpp" -o "$work/main.o"
clang++-19 -O2 -c "$src/electric.cpp" -o "$work/electric.o"
for mode in spec off; do
  value=1
  [[ $mode == off ]] && value=off
  clang++-19 "${cflags[@]}" --ld-path="$wpd_ld" -Wl,--lto-whole-program-visibility "-Wl,--wpd-speculate=$value" \
    "-Wl,--wpd-report=$work/$mode.json" "$work/electric.o" "$work/engine.o" "$work/main.o" -o "$work/$mode"
done
counts() {
  python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["call_sites"]
print("speculative %d, single_impl %d, not_devirtualized %d of %d" % (c["speculative"], c["single_impl"], c["not_devirtualized"], c["total"]))' "$1"
}
python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["call_sites"]; sys.exit(0 if c["speculative"] > 0 and c["single_impl"] == 0 else 1)' \
  "$work/spec.json" || { echo "speculate.sh: expected guarded calls and no unguarded single-impl: $(counts "$work/spec.json")" >&2; exit 1; }

time_us() {
  local exe=$1 t0 t1
  t0=$(date +%s%N)
  "$exe" "$rounds" >"$exe.out"
  t1=$(date +%s%N)
  cmp -s "$exe.out" "$work/spec.out" || { echo "speculate.sh: $exe and spec print different things" >&2; exit 1; }
  echo $(((t1 - t0) / 1000))
}

"$work/spec" "$rounds" >"$work/spec.out"
declare -A times
for ((i = 0; i < runs; i++)); do
  for mode in spec off; do
    times[$mode]+="$(time_us "$work/$mode") "
  done
done
median_ms() { tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.1f", m / 1000 }'; }

{
  echo "guarded speculative devirtualization: --wpd-speculate=1 vs off ($(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores)"
  echo "$rounds rounds x 1000 calls of Engine::step on an open hierarchy, $runs interleaved runs each, median wall time"
  echo "ratio = spec / off (below 1: speculation is faster)"
  echo
  s=$(median_ms <<<"${times[spec]}")
  o=$(median_ms <<<"${times[off]}")
  printf '%10s %10s %7s\n' spec_ms off_ms ratio
  printf '%10s %10s %7.2f\n' "$s" "$o" "$(echo "$s $o" | awk '{ print ($2 > 0 ? $1 / $2 : 0) }')"
  echo
  echo "spec: $(counts "$work/spec.json")"
  echo "off:  $(counts "$work/off.json")"
} | tee "$out/speculate.txt"
echo "results written to $out/speculate.txt" >&2
