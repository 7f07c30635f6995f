#!/usr/bin/env bash
# Benchmark: wall time of `wpd summarize` against `llvm-dis-19` (a full
# bitcode read plus text output) on the same objects: every fixture object
# plus a generated larger program (benches/gen_big.sh, ~300 classes, ~2000
# virtual calls, 8 TUs).
#   per module : one process per object, wpd -j 1 vs llvm-dis
#   total -j1  : one wpd -j 1 over all objects vs llvm-dis over each in turn
#   total -j2  : one wpd -j 2 over all objects vs two parallel llvm-dis
# Uses hyperfine when installed, else repeated runs timed with date +%s%N
# (median). Results go to stdout and bench-out/summarize.txt.
# Env: WPD_BIN (default target/release/wpd), RUNS (default 5).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
wpd=${WPD_BIN:-$root/target/release/wpd}
runs=${RUNS:-5}
out=$root/bench-out
work=$out/work
flags=(-O2 -flto=thin -fwhole-program-vtables)

[[ -x $wpd ]] || { echo "summarize.sh: $wpd not found; run 'cargo build --release -p wpd-cli' first" >&2; exit 1; }
for tool in clang++-19 llvm-dis-19; do
  command -v "$tool" >/dev/null || { echo "summarize.sh: $tool not found" >&2; exit 1; }
done

rm -rf "$work"
mkdir -p "$work/objs" "$work/big" "$work/wpds" "$work/dis"

echo "compiling fixtures and the generated program..." >&2
for dir in "$root"/fixtures/summarize/*/; do
  name=$(basename "$dir")
  read -r -a extra < "$dir/flags" || true
  for src in "$dir"*.cpp; do
    stem=$(basename "$src" .cpp)
    (cd "$dir" && clang++-19 "${flags[@]}" "${extra[@]}" -c "$stem.cpp" -o "$work/objs/$name-$stem.o")
  done
done
"$root/benches/gen_big.sh" "$work/big"
for src in "$work"/big/*.cpp; do
  stem=$(basename "$src" .cpp)
  (cd "$work/big" && clang++-19 "${flags[@]}" -c "$stem.cpp" -o "$work/objs/big-$stem.o")
done
mapfile -t objs < <(ls "$work"/objs/*.o)

# median wall time in milliseconds of a shell command string
have_hyperfine=0
command -v hyperfine >/dev/null && have_hyperfine=1
time_ms() {
  if ((have_hyperfine)); then
    hyperfine -N --warmup 1 --runs "$runs" --export-csv "$work/hf.csv" "$1" >/dev/null 2>&1 ||
      hyperfine --warmup 1 --runs "$runs" --export-csv "$work/hf.csv" "$1" >/dev/null
    awk -F, 'NR == 2 { printf "%.2f", $4 * 1000 }' "$work/hf.csv"
  else
    local samples=() i t0 t1
    bash -c "$1" >/dev/null # warm-up
    for ((i = 0; i < runs; i++)); do
      t0=$(date +%s%N)
      bash -c "$1" >/dev/null
      t1=$(date +%s%N)
      samples+=($(((t1 - t0) / 1000)))
    done
    printf '%s\n' "${samples[@]}" | sort -n | awk '{ a[NR] = $1 } END { printf "%.2f", a[int((NR + 1) / 2)] / 1000 }'
  fi
}
# quote a path for the command strings above
q() { printf '%q' "$1"; }

{
  echo "wpd summarize vs llvm-dis-19 ($(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, median of $runs runs,"
  echo "timer: $( ((have_hyperfine)) && echo hyperfine || echo 'date +%s%N'); ratio = llvm-dis / wpd, higher is better for wpd)"
  echo
  printf '%-44s %9s %10s %10s %7s\n' module size_KiB wpd_ms dis_ms ratio
  total_w=0
  total_d=0
  for o in "${objs[@]}"; do
    n=$(basename "$o")
    kib=$(( $(stat -c %s "$o") / 1024 ))
    w=$(time_ms "$(q "$wpd") summarize -j 1 $(q "$o") -o $(q "$work/wpds")")
    d=$(time_ms "llvm-dis-19 $(q "$o") -o $(q "$work/dis/$n.ll")")
    printf '%-44s %9d %10s %10s %7.2f\n' "$n" "$kib" "$w" "$d" "$(echo "$d $w" | awk '{ print ($2 > 0 ? $1 / $2 : 0) }')"
    total_w=$(echo "$total_w $w" | awk '{ print $1 + $2 }')
    total_d=$(echo "$total_d $d" | awk '{ print $1 + $2 }')
  done
  printf '%-44s %9s %10.2f %10.2f %7.2f\n' "sum of per-module runs" "" "$total_w" "$total_d" "$(echo "$total_d $total_w" | awk '{ print ($2 > 0 ? $1 / $2 : 0) }')"
  echo

  all=""
  for o in "${objs[@]}"; do all+=" $(q "$o")"; done
  list=$work/objs.txt
  printf '%s\n' "${objs[@]}" > "$list"
  dis_one="llvm-dis-19 \"\$1\" -o $(q "$work/dis")/\$(basename \"\$1\").ll"
  w1=$(time_ms "$(q "$wpd") summarize -j 1$all -o $(q "$work/wpds")")
  d1=$(time_ms "xargs -P 1 -n 1 sh -c '$dis_one' _ < $(q "$list")")
  w2=$(time_ms "$(q "$wpd") summarize -j 2$all -o $(q "$work/wpds")")
  d2=$(time_ms "xargs -P 2 -n 1 sh -c '$dis_one' _ < $(q "$list")")
  printf '%-44s %9s %10s %10s %7s\n' "all ${#objs[@]} objects" "" wpd_ms dis_ms ratio
  printf '%-44s %9s %10s %10s %7.2f\n' "  sequential (wpd -j 1, llvm-dis one by one)" "" "$w1" "$d1" "$(echo "$d1 $w1" | awk '{ print ($2 > 0 ? $1 / $2 : 0) }')"
  printf '%-44s %9s %10s %10s %7.2f\n' "  parallel (wpd -j 2, 2 llvm-dis at a time)" "" "$w2" "$d2" "$(echo "$d2 $w2" | awk '{ print ($2 > 0 ? $1 / $2 : 0) }')"
} | tee "$out/summarize.txt"
echo "results written to $out/summarize.txt" >&2
