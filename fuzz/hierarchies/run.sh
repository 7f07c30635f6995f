#!/usr/bin/env bash
# Differential fuzzer: random C++ hierarchies, wpd-ld links vs clang -O0.
#
#   fuzz/hierarchies/run.sh N [START_SEED]
#
# Environment: GEN_ARGS (extra gen.py options, e.g. "--native 1 --shared"),
# WPD_LD (default target/release/wpd-ld, snapshotted for the batch),
# SAN=1 (always build a sanitized -O0 too; SAN=never: not even after a
# failure), LLD=0 (skip lld's ThinLTO),
# KEEP_ALL=1 (keep every seed's directory in the work dir), WPD_FLAGS (extra
# -Wl, flags for the wpd-ld links).
set -u
N=${1:?usage: run.sh N [START_SEED]}
START=${2:-1}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
SRC_LD=${WPD_LD:-$ROOT/target/release/wpd-ld}
[ -x "$SRC_LD" ] || { echo "no wpd-ld at $SRC_LD (cargo build --release --workspace)" >&2; exit 2; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/wpd-fuzz.XXXXXX")
cp "$SRC_LD" "$WORK/wpd-ld"
# The distributed sequence's jobs (DIST=1) run the wpd beside wpd-ld.
[ -x "$(dirname "$SRC_LD")/wpd" ] && cp "$(dirname "$SRC_LD")/wpd" "$WORK/wpd"
# And the plugin's links (PLUGIN=1) the plugin beside it.
[ -f "$(dirname "$SRC_LD")/libwpd_plugin.so" ] && cp "$(dirname "$SRC_LD")/libwpd_plugin.so" "$WORK/"
export WPD_LD=$WORK/wpd-ld
FAILDIR=$HERE/failures
GEN_ARGS=${GEN_ARGS:-}

pass=0 fail=0 generr=0 lldbad=0 known=0
WORKAROUNDS="--split --no-always-throw"
declare -A tot_wpv tot_nowpv
KINDS="total single_impl uniform_ret_val unique_ret_val virtual_const_prop closed_set speculative not_devirtualized"
for k in $KINDS; do tot_wpv[$k]=0; tot_nowpv[$k]=0; done

counters() { # report.json -> "k=v ..." in KINDS order
    python3 - "$1" <<'EOF' 2>/dev/null
import json, sys
c = json.load(open(sys.argv[1]))["call_sites"]
print(" ".join("%s=%d" % (k, c.get(k, 0)) for k in
      "total single_impl uniform_ret_val unique_ret_val virtual_const_prop closed_set speculative not_devirtualized".split()))
EOF
}
short() { sed -e 's/total=/tot=/; s/single_impl=/si=/; s/uniform_ret_val=/urv=/; s/unique_ret_val=/unq=/;
                 s/virtual_const_prop=/vcp=/; s/closed_set=/cs=/; s/speculative=/spec=/; s/not_devirtualized=/nd=/' <<<"$1"; }

for ((seed = START; seed < START + N; seed++)); do
    d=$WORK/seed-$seed
    # shellcheck disable=SC2086
    if ! python3 "$HERE/gen.py" --seed "$seed" --out "$d" $GEN_ARGS; then
        echo "seed $seed: GENERATOR CRASH"; generr=$((generr + 1)); continue
    fi
    sed "s|@WPD_LD@|$ROOT/target/release/wpd-ld|" "$HERE/check.sh" >"$d/repro.sh"
    chmod +x "$d/repro.sh"
    echo "GEN_ARGS=\"$GEN_ARGS\"  # python3 fuzz/hierarchies/gen.py --seed $seed --out DIR $GEN_ARGS" >>"$d/config.sh"
    "$d/repro.sh" >"$d/result.txt" 2>"$d/repro.log"
    rc=$?
    result=$(tail -1 "$d/result.txt")
    SPECULATE= DEBUG=0 NORTTI=0 OPT=-O2 LINKER=lld SHAPES= ARFORM= XFLAGS=
    . "$d/config.sh"
    cfg="split=$SPLIT hidden=$HIDDEN native=$NATIVE shared=$SHARED ar=${ARCHIVE:-0}${ARFORM:+/$ARFORM} tus=$(wc -w <<<"$TUS") $OPT ld=$LINKER"
    [ "$DEBUG" = 1 ] && cfg+=" -g"
    [ "$NORTTI" = 1 ] && cfg+=" no-rtti"
    [ -n "$XFLAGS" ] && cfg+=" ${XFLAGS// /,}"
    [ -n "$SPECULATE" ] && cfg+=" spec=$SPECULATE"
    [ -n "$SHAPES" ] && cfg+=" shapes=${SHAPES// /,}"
    cw=$(counters "$d/r_wpv.json") cn=$(counters "$d/r_nowpv.json")
    for kv in $cw; do tot_wpv[${kv%=*}]=$((tot_wpv[${kv%=*}] + ${kv#*=})); done
    for kv in $cn; do tot_nowpv[${kv%=*}]=$((tot_nowpv[${kv%=*}] + ${kv#*=})); done
    [[ $result == *lld=MISMATCH* || $result == *lld=LINKFAIL* ]] && lldbad=$((lldbad + 1))
    case $rc in
    0) pass=$((pass + 1)); st=ok ;;
    1) fail=$((fail + 1)); st=FAIL ;;
    *) generr=$((generr + 1)); st=GENBUG ;;
    esac
    echo "seed $seed: $st ${result#RESULT } [$cfg] wpv: $(short "$cw")"
    if [ "$st" != ok ]; then
        rm -rf "$FAILDIR/seed-$seed"
        mkdir -p "$FAILDIR"
        cp -r "$d" "$FAILDIR/seed-$seed"
        sed -i "s|^WPD_LD=.*|WPD_LD=\${WPD_LD:-$ROOT/target/release/wpd-ld}|" "$FAILDIR/seed-$seed/repro.sh"
        { grep -hE 'error|undefined reference|panicked' "$d"/p_*.link.err 2>/dev/null | grep -v '^clang' | head -2
          grep -h '^p_' "$d/repro.log" | head -3; } | cut -c1-200 | sed 's/^/    /'
        echo "    kept in fuzz/hierarchies/failures/seed-$seed (./repro.sh)"
        # Known bugs (see bugs/): name the signature, then check the same
        # program with the workarounds, so a known bug hides nothing else.
        sig=""
        grep -q 'undefined symbol: vtable for (anonymous namespace)::.*(\.wpd\.' "$d"/p_*.link.err 2>/dev/null &&
            sig="01-unique-ret-val-local-vtable-nosplit"
        for n in p_wpv p_nowpv; do
            [ -f "$d/$n.out" ] && diff "$d/ref.out" "$d/$n.out" | grep -q '^[<>] caught' &&
                sig="${sig:+$sig + }02-always-throwing-override-not-a-target?"
        done
        if [ "$st" = FAIL ] && [ -n "$sig" ]; then
            w=$d-workaround
            # shellcheck disable=SC2086
            python3 "$HERE/gen.py" --seed "$seed" --out "$w" $GEN_ARGS $WORKAROUNDS >/dev/null
            sed "s|@WPD_LD@|$ROOT/target/release/wpd-ld|" "$HERE/check.sh" >"$w/repro.sh"
            chmod +x "$w/repro.sh"
            "$w/repro.sh" >"$w/result.txt" 2>"$w/repro.log"
            wrc=$?
            echo "    known? $sig; with $WORKAROUNDS: $(tail -1 "$w/result.txt")"
            if [ "$wrc" = 0 ]; then
                known=$((known + 1))
            else
                rm -rf "$FAILDIR/seed-$seed-workaround"; cp -r "$w" "$FAILDIR/seed-$seed-workaround"
                echo "    STILL FAILS with the workarounds: kept in fuzz/hierarchies/failures/seed-$seed-workaround"
            fi
            rm -rf "$w"
        fi
    fi
    [ "${KEEP_ALL:-0}" = 1 ] || rm -rf "$d"
done

echo "totals (wpv):   $(for k in $KINDS; do printf '%s=%d ' $k ${tot_wpv[$k]}; done)"
echo "totals (nowpv): $(for k in $KINDS; do printf '%s=%d ' $k ${tot_nowpv[$k]}; done)"
echo "lld ThinLTO (information): $lldbad seeds mismatched or failed"
[ "$generr" != 0 ] && echo "generator/reference problems: $generr (kept in failures/)"
[ "${KEEP_ALL:-0}" = 1 ] && echo "work dir: $WORK" || rm -rf "$WORK"
[ "$known" != 0 ] && echo "failures explained by known bugs (pass with $WORKAROUNDS): $known of $fail"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
