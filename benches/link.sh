#!/usr/bin/env bash
# Benchmark: wall time of a whole link through wpd-ld against lld's own
# ThinLTO, on the same bitcode objects, both with whole-program visibility
# and JOBS backend threads (default 2):
#   wpd : clang++-19 -O2 -flto=thin --ld-path=wpd-ld -Wl,--lto-whole-program-visibility -Wl,--wpd-jobs=JOBS
#   lld : clang++-19 -O2 -flto=thin -fuse-ld=lld     -Wl,--lto-whole-program-visibility -Wl,--thinlto-jobs=JOBS
# Programs: the demo (fixtures/demo) and a generated larger one
# (benches/gen_big.sh, ~300 classes, ~2000 virtual calls, 8 TUs). Best of
# RUNS (default 3) after one warm-up link; both programs are run once and
# must print the same thing. Also prints output sizes, the devirtualized
# call sites (every kind) of each and wpd's per-phase times (the report's
# timings_ms).
# Results go to stdout and bench-out/link.txt.
# Env: WPD_LD_BIN (default target/release/wpd-ld), RUNS, JOBS.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
wpd_ld=${WPD_LD_BIN:-$root/target/release/wpd-ld}
runs=${RUNS:-3}
jobs=${JOBS:-2}
out=$root/bench-out
work=$out/link-work
cflags=(-O2 -flto=thin -fwhole-program-vtables)

[[ -x $wpd_ld ]] || { echo "link.sh: $wpd_ld not found; run 'cargo build --release -p linker-shim' first" >&2; exit 1; }
wpd_ld=$(cd "$(dirname "$wpd_ld")" && pwd)/$(basename "$wpd_ld")
for tool in clang++-19 ld.lld-19 python3; do
  command -v "$tool" >/dev/null || { echo "link.sh: $tool not found" >&2; exit 1; }
done

rm -rf "$work"
mkdir -p "$work/demo" "$work/big-src" "$work/big"
echo "compiling the demo and the generated program..." >&2
for src in "$root"/fixtures/demo/*.cpp; do
  clang++-19 "${cflags[@]}" -c "$src" -o "$work/demo/$(basename "$src" .cpp).o"
done
"$root/benches/gen_big.sh" "$work/big-src"
for src in "$work"/big-src/*.cpp; do
  stem=$(basename "$src" .cpp)
  (cd "$work/big-src" && clang++-19 "${cflags[@]}" -c "$stem.cpp" -o "$work/big/$stem.o")
done

# best wall time in milliseconds of a command (arguments), after a warm-up
best_ms() {
  local best= i t0 t1 ms
  "$@" >/dev/null 2>&1 || { echo "link.sh: failed: $*" >&2; "$@" >&2; exit 1; }
  for ((i = 0; i < runs; i++)); do
    t0=$(date +%s%N)
    "$@" >/dev/null 2>&1
    t1=$(date +%s%N)
    ms=$(((t1 - t0) / 1000000))
    if [[ -z $best ]] || ((ms < best)); then best=$ms; fi
  done
  echo "$best"
}

{
  echo "whole-link time: wpd-ld vs lld ThinLTO ($(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, $jobs jobs, best of $runs)"
  echo "ratio = lld / wpd (above 1: wpd-ld links faster)"
  echo
  printf '%-8s %8s %9s %9s %7s %11s %11s %11s %11s\n' program objects wpd_ms lld_ms ratio wpd_bytes lld_bytes wpd_devirt lld_devirt
  for prog in demo big; do
    dir=$work/$prog
    mapfile -t objs < <(ls "$dir"/*.o)
    report=$dir/report.json
    wpd_cmd=(clang++-19 "${cflags[@]}" --ld-path="$wpd_ld" -Wl,--lto-whole-program-visibility "-Wl,--wpd-jobs=$jobs"
      "-Wl,--wpd-report=$report" "${objs[@]}" -o "$dir/prog.wpd")
    lld_cmd=(clang++-19 "${cflags[@]}" -fuse-ld=lld -Wl,--lto-whole-program-visibility "-Wl,--thinlto-jobs=$jobs"
      "${objs[@]}" -o "$dir/prog.lld")
    w=$(best_ms "${wpd_cmd[@]}")
    l=$(best_ms "${lld_cmd[@]}")
    if ! cmp -s <("$dir/prog.wpd") <("$dir/prog.lld"); then
      echo "link.sh: $prog: the wpd-ld and lld programs print different output" >&2
      exit 1
    fi
    # devirtualized call sites (every kind): LLVM's from its remarks (one
    # extra link without importing, so one remark is one call site; not
    # timed), wpd's from the report
    ls=$("${lld_cmd[@]}" -Wl,-mllvm,-pass-remarks=wholeprogramdevirt -Wl,-mllvm,-import-instr-limit=0 2>&1 |
      grep -cE ': (single-impl|uniform-ret-val|unique-ret-val|virtual-const-prop(-1-bit)?): devirtualized a call to' || true)
    ws=$(python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["call_sites"]; print(c["total"] - c["not_devirtualized"])' "$report")
    printf '%-8s %8d %9d %9d %7.2f %11d %11d %11s %11s\n' "$prog" "${#objs[@]}" "$w" "$l" \
      "$(echo "$l $w" | awk '{ print ($2 > 0 ? $1 / $2 : 0) }')" \
      "$(stat -c %s "$dir/prog.wpd")" "$(stat -c %s "$dir/prog.lld")" "$ws" "$ls"
  done
  for prog in demo big; do
    echo
    echo "wpd-ld phases, $prog (timings_ms of the last timed link):"
    python3 "$root/benches/report.py" timings "$work/$prog/report.json"
  done
} | tee "$out/link.txt"
echo "results written to $out/link.txt" >&2
