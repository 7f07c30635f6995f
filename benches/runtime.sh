#!/usr/bin/env bash
# Benchmark: run time of the demo program (fixtures/demo: type predicates and
# small virtual getters in a hot loop) devirtualized by wpd-ld against lld's
# own ThinLTO (LLVM's WholeProgramDevirt), built from the same objects, both
# with whole-program visibility:
#   wpd : clang++-19 -O2 -flto=thin --ld-path=wpd-ld -Wl,--lto-whole-program-visibility
#   llvm: clang++-19 -O2 -flto=thin -fuse-ld=lld     -Wl,--lto-whole-program-visibility
# once from split objects (the default: LLVM does every optimization too) and
# once from -fno-split-lto-unit objects (LLVM does single-impl only, wpd
# still does the return-value optimizations). Each program runs RUNS times
# (default 5), all four interleaved, with ROUNDS rounds over the shapes
# (default 50000, about 270 million virtual calls; `make demo` runs 10000);
# every run must print the same output. Reports median wall times and the
# ratio wpd/llvm (below 1: the wpd-ld program is faster).
# Results go to stdout and bench-out/runtime.txt.
# Env: WPD_LD_BIN (default target/release/wpd-ld), RUNS, ROUNDS.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
wpd_ld=${WPD_LD_BIN:-$root/target/release/wpd-ld}
runs=${RUNS:-5}
rounds=${ROUNDS:-50000}
out=$root/bench-out
work=$out/runtime-work
cflags=(-O2 -flto=thin -fwhole-program-vtables)
wpv=-Wl,--lto-whole-program-visibility

[[ -x $wpd_ld ]] || { echo "runtime.sh: $wpd_ld not found; run 'cargo build --release -p linker-shim' first" >&2; exit 1; }
wpd_ld=$(cd "$(dirname "$wpd_ld")" && pwd)/$(basename "$wpd_ld")
for tool in clang++-19 ld.lld-19 python3; do
  command -v "$tool" >/dev/null || { echo "runtime.sh: $tool not found" >&2; exit 1; }
done

rm -rf "$work"
mkdir -p "$work"
echo "compiling and linking fixtures/demo (split and unsplit)..." >&2
for split in split nosplit; do
  dir=$work/$split
  mkdir -p "$dir"
  extra=()
  [[ $split == nosplit ]] && extra=(-fno-split-lto-unit)
  for src in "$root"/fixtures/demo/*.cpp; do
    clang++-19 "${cflags[@]}" "${extra[@]}" -c "$src" -o "$dir/$(basename "$src" .cpp).o"
  done
  objs=("$dir"/*.o)
  clang++-19 "${cflags[@]}" --ld-path="$wpd_ld" "$wpv" "-Wl,--wpd-report=$dir/report.json" "${objs[@]}" -o "$dir/wpd"
  clang++-19 "${cflags[@]}" -fuse-ld=lld "$wpv" "${objs[@]}" -o "$dir/llvm"
done

# Wall time of one run in microseconds; the output goes to $1.out (checked
# against the first run's).
time_us() {
  local exe=$1 t0 t1
  t0=$(date +%s%N)
  "$exe" "$rounds" >"$exe.out"
  t1=$(date +%s%N)
  if [[ -f $work/expected.out ]]; then
    cmp -s "$exe.out" "$work/expected.out" || { echo "runtime.sh: $exe printed something else" >&2; exit 1; }
  else
    cp "$exe.out" "$work/expected.out"
  fi
  echo $(((t1 - t0) / 1000))
}

programs=(split/wpd split/llvm nosplit/wpd nosplit/llvm)
declare -A times
for ((i = 0; i < runs; i++)); do
  for p in "${programs[@]}"; do
    times[$p]+="$(time_us "$work/$p") "
  done
done

median_ms() { tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.1f", m / 1000 }'; }
devirt() {
  python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["call_sites"]
print("%d/%d (single %d, uniform %d, unique %d, vcp %d)" % (c["total"] - c["not_devirtualized"] - c["speculative"], c["total"],
      c["single_impl"], c["uniform_ret_val"], c["unique_ret_val"], c["virtual_const_prop"]))' "$1"
}

{
  echo "demo run time: wpd-ld vs lld ThinLTO, same objects ($(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores)"
  echo "$rounds rounds over 1000 shapes, $runs interleaved runs each, median wall time"
  echo "ratio = wpd / llvm (below 1: the wpd-ld program is faster)"
  echo
  printf '%-9s %10s %10s %7s   %s\n' objects wpd_ms llvm_ms ratio 'wpd devirtualized call sites'
  for split in split nosplit; do
    w=$(median_ms <<<"${times[$split/wpd]}")
    l=$(median_ms <<<"${times[$split/llvm]}")
    printf '%-9s %10s %10s %7.2f   %s\n' "$split" "$w" "$l" "$(echo "$w $l" | awk '{ print ($2 > 0 ? $1 / $2 : 0) }')" \
      "$(devirt "$work/$split/report.json")"
  done
  echo
  echo "output: $(tail -1 "$work/expected.out")"
} | tee "$out/runtime.txt"
echo "results written to $out/runtime.txt" >&2
