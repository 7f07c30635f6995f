#!/usr/bin/env bash
# Builds and checks one generated program (run.sh copies this file into each
# seed's directory as repro.sh). Run it inside that directory:
#
#   ./repro.sh            # build everything, compare every link with -O0
#   WPD_LD=/abs/wpd-ld ./repro.sh
#   SAN=1 ./repro.sh      # also build -O0 with ASan+UBSan (is the program UB-free?)
#   SAN=never ./repro.sh  # not even after a failure (which builds it by default)
#   LLD=0 ./repro.sh      # skip the informational lld ThinLTO link
#   WPD_FLAGS="-Wl,--wpd-no-validate" ./repro.sh   # extra flags for both wpd-ld links
#   BAZEL=1 ./repro.sh    # also the Bazel-style sequence (--thinlto-index-only, clang backends)
#   DIST=1 ./repro.sh     # also wpd-ld's distributed sequence (--wpd-index-only, its jobs, --wpd-from-index)
#   PLUGIN=1 ./repro.sh   # also a link through libwpd_plugin.so under GNU ld (gold with LINKER=gold)
#   PLUGIN=1 PLUGIN_LD=mold ./repro.sh   # that link under mold (or bfd, gold) whatever LINKER says
#   SANITIZE=address,undefined ./repro.sh   # every build (the -O0 reference's
#                         # too) compiled and linked with -fsanitize=...
#
# Reads config.sh (TUS="mode:file ...", mode lto, ltoobj (bitcode never
# archived: the registered shape's file), native, shared or untyped:
# bitcode without type metadata, -emit-llvm -fno-rtti without -flto; patch: a
# native object first on every link line, linked with -z muldefs (MULDEFS=1);
# ishared: bitcode built into libfzip.so by a link of its own (wpd-ld's,
# lld's, -O0 for the reference), whose members the executable defines again
# and exports (IPEXPORT, --export-dynamic-symbol); dlopen: a native
# plugin lib<name>.so no link names, which the programs load at run time;
# DLEXPORT: functions
# the program finds with dlsym, exported by every link (the reference's
# too) with --export-dynamic-symbol; FAT=1: bitcode objects are
# fat (-ffat-lto-objects, linked with --fat-lto-objects); RELATIVE=1: every
# non-reference compile uses relative vtables; SPLIT,
# HIDDEN, NATIVE, SHARED, ARCHIVE: non-main TUs go into libfzar.a, linked as
# -L. -lfzar (ARFORM: in two archives in a group, or named by a linker
# script, or a thin archive; see below); OPT: -O level of every non-reference compile and link; DEBUG:
# -g; NORTTI: -fno-rtti; XFLAGS: more flags of every non-reference compile
# (-fstrict-vtable-pointers, -fvisibility-inlines-hidden); LINKER: lld, bfd or gold behind wpd-ld; SPECULATE:
# --wpd-speculate= value or empty; TRAP=1: the program ends in
# __builtin_trap(), so every build must die of SIGILL, exit status 132).
# Writes <link>.out/.err/.rc for ref, p_wpv, p_nowpv, p_bazel, p_dist, p_plugin, p_lld; reports
# r_wpv.json and r_nowpv.json; remarks in p_wpv.link.err / p_nowpv.link.err.
# Last line: RESULT wpv=<st> nowpv=<st> bazel=<st> dist=<st> plugin=<st> lld=<st> san=<st>, where st is ok,
# refused (bazel: a mix of split and unsplit bitcode, which LLVM's thin
# link refuses),
# MISMATCH, LINKFAIL (wpd-ld exited non-zero), or skip.
# Exit status: 0 wpd fine, 1 a wpd link failed or mismatched, 2 the
# reference itself could not be built or run (generator bug), 3 the
# sanitized -O0 build disagrees or reports (generator UB).
cd "$(dirname "$0")" || exit 2
ulimit -c 0 2>/dev/null   # SIGILL of TRAP=1 programs: no core files
TRAP=0
. ./config.sh
WPD_LD=${WPD_LD:-@WPD_LD@}
SAN=${SAN:-0}
LLD=${LLD:-1}
RUN_TIMEOUT=${RUN_TIMEOUT:-10}
CXX=${CXX:-clang++-19}
CC=${CC:-clang-19}
STD=-std=c++20
OPT=${OPT:--O2}
LTOF=("$OPT" -flto=thin -fwhole-program-vtables)
[ "$SPLIT" = 0 ] && LTOF+=(-fno-split-lto-unit)
VIS=()   # flags of every non-reference compile
[ "$HIDDEN" = 1 ] && VIS+=(-fvisibility=hidden)
[ "${DEBUG:-0}" = 1 ] && VIS+=(-g)
[ "${NORTTI:-0}" = 1 ] && VIS+=(-fno-rtti)
[ "${RELATIVE:-0}" = 1 ] && VIS+=(-fexperimental-relative-c++-abi-vtables)
for x in ${XFLAGS:-}; do VIS+=("$x"); done
LINKX=() # flags of every link (the reference's too)
if [ -n "${SANITIZE:-}" ]; then
    VIS+=("-fsanitize=$SANITIZE")
    LINKX+=("-fsanitize=$SANITIZE")
    # UBSan's dynamic type check reads the Itanium layout (libstdc++'s
    # __dynamic_cast): relative vtables fail it with or without wpd.
    [ "${RELATIVE:-0}" = 1 ] && LINKX+=(-fno-sanitize=vptr) && VIS+=(-fno-sanitize=vptr)
    export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
fi
[ "${MULDEFS:-0}" = 1 ] && LINKX+=(-Wl,-z,muldefs)
for s in ${IPEXPORT:-}; do LINKX+=("-Wl,--export-dynamic-symbol=$s"); done
for s in ${DLEXPORT:-}; do LINKX+=("-Wl,--export-dynamic-symbol=$s"); done
LLDX=()  # flags of the lld links
WPDX=()  # per-seed wpd-ld options
if [ "${FAT:-0}" = 1 ]; then LTOF+=(-ffat-lto-objects); WPDX+=(-Wl,--fat-lto-objects); LLDX+=(-Wl,--fat-lto-objects); fi
case ${LINKER:-lld} in bfd) WPDX+=(-Wl,--wpd-linker=/usr/bin/ld.bfd) ;; gold) WPDX+=(-Wl,--wpd-linker=/usr/bin/ld.gold) ;; esac
[ -n "${SPECULATE:-}" ] && WPDX+=("-Wl,--wpd-speculate=$SPECULATE")

say() { echo "$*" >&2; }
rcname() { # name -> "rc" or "rc (SIGNAME)"
    local rc; rc=$(cat "$1.rc")
    if [ "$rc" = 124 ]; then echo "124 (timeout)"
    elif [ "$rc" -gt 128 ]; then echo "$rc (SIG$(kill -l $((rc - 128))))"
    else echo "$rc"; fi
}
run() { # name -> name.out name.err name.rc
    timeout "$RUN_TIMEOUT" "./$1" >"$1.out" 2>"$1.err"
    echo $? >"$1.rc"
}
same() { # name: stdout and exit status equal to ref's
    cmp -s ref.out "$1.out" && cmp -s ref.rc "$1.rc"
}

srcs=() objs=() libs=() members=() ishared=()
ARCHIVE=${ARCHIVE:-0}
for tu in $TUS; do
    mode=${tu%%:*} f=${tu#*:}
    [ "$mode" = ishared ] || [ "$mode" = dlopen ] || [ "$mode" = cneeded ] || srcs+=("$f")
    case $mode in
    lto)    say "+ $CXX $STD ${LTOF[*]} ${VIS[*]} -c $f -o ${f%.cpp}.o"
            $CXX $STD "${LTOF[@]}" "${VIS[@]}" -c "$f" -o "${f%.cpp}.o" || exit 2
            if [ "$ARCHIVE" = 1 ] && [ "$f" != main.cpp ]; then members+=("${f%.cpp}.o"); else objs+=("${f%.cpp}.o"); fi ;;
    ltoobj) # bitcode never archived: a file of static registrations,
            # which nothing in an archive would load
            say "+ $CXX $STD ${LTOF[*]} ${VIS[*]} -c $f -o ${f%.cpp}.o"
            $CXX $STD "${LTOF[@]}" "${VIS[@]}" -c "$f" -o "${f%.cpp}.o" || exit 2
            objs+=("${f%.cpp}.o") ;;
    untyped) say "+ $CXX $STD $OPT -emit-llvm -fno-rtti ${VIS[*]} -c $f -o ${f%.cpp}.o"
            $CXX $STD "$OPT" -emit-llvm -fno-rtti "${VIS[@]}" -c "$f" -o "${f%.cpp}.o" || exit 2
            if [ "$ARCHIVE" = 1 ] && [ "$f" != main.cpp ]; then members+=("${f%.cpp}.o"); else objs+=("${f%.cpp}.o"); fi ;;
    native) say "+ $CXX $STD $OPT ${VIS[*]} -c $f -o ${f%.cpp}.o"
            $CXX $STD "$OPT" "${VIS[@]}" -c "$f" -o "${f%.cpp}.o" || exit 2
            if [ "$ARCHIVE" = 1 ] && [ "$f" != main.cpp ]; then members+=("${f%.cpp}.o"); else objs+=("${f%.cpp}.o"); fi ;;
    patch)  say "+ $CXX $STD $OPT ${VIS[*]} -c $f -o ${f%.cpp}.o"
            $CXX $STD "$OPT" "${VIS[@]}" -c "$f" -o "${f%.cpp}.o" || exit 2
            objs+=("${f%.cpp}.o") ;;
    ishared) say "+ $CXX $STD ${LTOF[*]} ${VIS[*]} -fPIC -c $f -o ${f%.cpp}.o"
            $CXX $STD "${LTOF[@]}" "${VIS[@]}" -fPIC -c "$f" -o "${f%.cpp}.o" || exit 2
            ishared+=("$f") ;;
    dlopen) # a plugin the programs load with dlopen at run time (every
            # build, the reference too): never on a link line
            say "+ $CXX $STD $OPT ${VIS[*]} -fPIC -shared $f -o lib${f%.cpp}.so"
            $CXX $STD "$OPT" "${VIS[@]}" -fPIC -shared "$f" -o "lib${f%.cpp}.so" || exit 2 ;;
    cneeded) # a C library (compiled as C: its symbol table names a .c
            # source) every link names --as-needed
            say "+ $CC $OPT -fPIC -shared $f -o lib${f%.c}.so"
            $CC "$OPT" -fPIC -shared "$f" -o "lib${f%.c}.so" || exit 2
            LINKX+=(-Wl,--as-needed -L. "-l${f%.c}" -Wl,--no-as-needed '-Wl,-rpath,$ORIGIN') ;;
    shared) say "+ $CXX $STD $OPT ${VIS[*]} -fPIC -shared $f -o libfz.so"
            $CXX $STD "$OPT" "${VIS[@]}" -fPIC -shared "$f" -o libfz.so || exit 2
            libs=(-L. -lfz '-Wl,-rpath,$ORIGIN') ;;
    esac
done

# The interposed shape's library, per link: -O0 for the reference, wpd-ld
# (default mode) for both wpd links, lld's ThinLTO for the lld link.
iplib() { # dir -> link flags naming dir/libfzip.so
    [ ${#ishared[@]} = 0 ] || echo "-L$1 -lfzip -Wl,-rpath,\$ORIGIN/$1"
}
if [ ${#ishared[@]} != 0 ]; then
    ipobjs=("${ishared[@]/%.cpp/.o}")
    mkdir -p ref_ip wpd_ip lld_ip
    say "+ $CXX $STD -O0 -fPIC -shared ${ishared[*]} -o ref_ip/libfzip.so"
    $CXX $STD -O0 -fPIC -shared "${ishared[@]}" -o ref_ip/libfzip.so || exit 2
    say "+ $CXX $OPT -flto=thin --ld-path=$WPD_LD ${WPDX[*]} -shared -fPIC ${ipobjs[*]} -o wpd_ip/libfzip.so"
    $CXX "$OPT" -flto=thin --ld-path="$WPD_LD" "${WPDX[@]}" -shared -fPIC "${ipobjs[@]}" -o wpd_ip/libfzip.so \
        2>wpd_ip.link.err || { cat wpd_ip.link.err >&2; rm -f wpd_ip/libfzip.so; }
    if [ "$LLD" = 1 ]; then
        $CXX "$OPT" -flto=thin -fuse-ld=lld "${LLDX[@]}" -shared -fPIC "${ipobjs[@]}" -o lld_ip/libfzip.so 2>/dev/null
    fi
fi

# ARFORM: plain (one archive), group (members alternately in libfzar.a
# and libfzar2.a, inside --start-group/--end-group), script (the same two
# archives named by libfzs.so, a linker script: GROUP ( libfzar.a
# libfzar2.a ), found by -lfzs), thin (a thin archive).
ARFORM=${ARFORM:-plain}
if [ ${#members[@]} != 0 ]; then
    rm -f libfzar.a libfzar2.a libfzs.so
    case $ARFORM in
    group|script)
        first=() second=() i=0
        for o in "${members[@]}"; do
            if [ $((i % 2)) = 0 ]; then first+=("$o"); else second+=("$o"); fi
            i=$((i + 1))
        done
        say "+ llvm-ar-19 rcs libfzar.a ${first[*]}; llvm-ar-19 rcs libfzar2.a ${second[*]}"
        llvm-ar-19 rcs libfzar.a "${first[@]}" || exit 2
        llvm-ar-19 rcs libfzar2.a "${second[@]}" || exit 2
        if [ "$ARFORM" = group ]; then
            libs=(-L. -Wl,--start-group -lfzar -lfzar2 -Wl,--end-group "${libs[@]}")
        else
            echo "/* the fuzzer's archives */ GROUP ( libfzar.a libfzar2.a )" >libfzs.so
            libs=(-L. -lfzs "${libs[@]}")
        fi ;;
    thin)
        say "+ llvm-ar-19 rcsT libfzar.a ${members[*]}"
        llvm-ar-19 rcsT libfzar.a "${members[@]}" || exit 2
        libs=(-L. -lfzar "${libs[@]}") ;;
    *)
        say "+ llvm-ar-19 rcs libfzar.a ${members[*]}"
        llvm-ar-19 rcs libfzar.a "${members[@]}" || exit 2
        libs=(-L. -lfzar "${libs[@]}") ;;
    esac
fi

say "+ $CXX $STD -O0 ${srcs[*]} ${LINKX[*]} $(iplib ref_ip) -o ref"
# shellcheck disable=SC2046
$CXX $STD -O0 "${srcs[@]}" "${LINKX[@]}" $(iplib ref_ip) -o ref || exit 2
run ref
if [ "$TRAP" = 1 ]; then
    [ "$(cat ref.rc)" = 132 ] || { say "reference should die of SIGILL (rc 132), got rc $(cat ref.rc)"; exit 2; }
elif [ "$(cat ref.rc)" -ge 124 ]; then say "reference timed out or crashed (rc $(cat ref.rc))"; exit 2; fi

link_wpd() { # name, extra flags...
    local name=$1; shift
    if [ ${#ishared[@]} != 0 ] && [ ! -f wpd_ip/libfzip.so ]; then
        cp wpd_ip.link.err "$name.link.err"; return 1
    fi
    say "+ $CXX $OPT -flto=thin --ld-path=$WPD_LD $* ${WPDX[*]} ${WPD_FLAGS:-} -Wl,--wpd-report=r_${name#p_}.json -Wl,--wpd-remarks ${objs[*]} ${libs[*]} ${LINKX[*]} $(iplib wpd_ip) -o $name"
    # shellcheck disable=SC2086,SC2046
    $CXX "$OPT" -flto=thin --ld-path="$WPD_LD" "$@" "${WPDX[@]}" ${WPD_FLAGS:-} -Wl,--wpd-report="r_${name#p_}.json" -Wl,--wpd-remarks \
        "${objs[@]}" "${libs[@]}" "${LINKX[@]}" $(iplib wpd_ip) -o "$name" 2>"$name.link.err"
}
status() { # name, link status
    if [ "$2" != 0 ]; then echo LINKFAIL; return; fi
    run "$1"
    if same "$1"; then echo ok; else echo MISMATCH; fi
}

link_wpd p_wpv -Wl,--lto-whole-program-visibility; st_wpv=$(status p_wpv $?)
link_wpd p_nowpv; st_nowpv=$(status p_nowpv $?)

# BAZEL=1: Bazel-style distributed ThinLTO with clang's own backends:
# wpd-ld --thinlto-index-only (archive members as --start-lib objects),
# clang -fthinlto-index= per bitcode object, lld on the objects it lists
# and LLVM's regular LTO object. (Not for FAT=1: fat objects are refused.)
link_bazel() { # name -> status
    local name=$1 lazy=() inputs=() bitcode=() final=() o
    for o in "${members[@]}"; do lazy+=("$o"); done
    inputs=("${objs[@]}")
    [ ${#lazy[@]} != 0 ] && inputs+=(-Wl,--start-lib "${lazy[@]}" -Wl,--end-lib)
    local others=()
    for o in "${libs[@]}"; do
        case $o in -lfzar | -lfzar2 | -lfzs | -Wl,--start-group | -Wl,--end-group) ;; *) others+=("$o") ;; esac
    done
    rm -f ./*.thinlto.bc "$name.objects" "$name.lto.o"
    say "+ $CXX $OPT -flto=thin --ld-path=$WPD_LD -Wl,--lto-whole-program-visibility -Wl,--thinlto-index-only=$name.objects -Wl,--lto-obj-path=$name.lto.o ${WPDX[*]} ${inputs[*]} ${others[*]} ${LINKX[*]} $(iplib wpd_ip) -o $name"
    # shellcheck disable=SC2086,SC2046
    $CXX "$OPT" -flto=thin --ld-path="$WPD_LD" -Wl,--lto-whole-program-visibility "${WPDX[@]}" ${WPD_FLAGS:-} \
        -Wl,--thinlto-index-only="$name.objects" -Wl,--lto-obj-path="$name.lto.o" -Wl,--wpd-report=r_bazel.json \
        "${inputs[@]}" "${others[@]}" "${LINKX[@]}" $(iplib wpd_ip) -o "$name" 2>"$name.link.err" || {
        # Untyped bitcode (no ThinLTO summary) beside split units: LLVM's
        # thin link refuses the mix, as lld does, and wpd-ld says so. (A
        # weak function a native one overrides, on which LLVM 19's thin
        # link stops when clang copied it beside the unit's vtables, links:
        # wpd-ld gives LLVM the weak copy as linker-redefined.)
        if grep -q 'mixes bitcode with and without split LTO units' \
            "$name.link.err"; then echo refused; else echo LINKFAIL; fi
        return; }
    for o in "${objs[@]}" "${lazy[@]}"; do
        [ -f "$o.thinlto.bc" ] || continue
        $CXX "$OPT" -c -x ir "$o" -fthinlto-index="$o.thinlto.bc" -o "$o.native.o" 2>>"$name.link.err" || { echo LINKFAIL; return; }
        bitcode+=("$o")
    done
    for o in "${objs[@]}"; do
        if [[ " ${bitcode[*]} " == *" $o "* ]]; then
            grep -qx "$o" "$name.objects" && final+=("$o.native.o")
        else
            final+=("$o")
        fi
    done
    # Archive members stay lazy: native ones as they are, bitcode ones as
    # their objects when the index-only link loaded them.
    if [ ${#lazy[@]} != 0 ]; then
        final+=(-Wl,--start-lib)
        for o in "${lazy[@]}"; do
            if [[ " ${bitcode[*]} " != *" $o "* ]]; then final+=("$o")
            elif grep -qx "$o" "$name.objects"; then final+=("$o.native.o"); fi
        done
        final+=(-Wl,--end-lib)
    fi
    # As lld places LTO's objects: after the inputs (a -z muldefs patch
    # object first on the line still wins).
    final+=("$name.lto.o")
    say "+ $CXX -fuse-ld=lld ${final[*]} ${others[*]} ${LINKX[*]} $(iplib wpd_ip) -o $name"
    # shellcheck disable=SC2046
    $CXX -fuse-ld=lld "${final[@]}" "${others[@]}" "${LINKX[@]}" $(iplib wpd_ip) -o "$name" 2>>"$name.link.err" ||
        { echo LINKFAIL; return; }
    status "$name" 0
}
st_bazel=skip
if [ "${BAZEL:-0}" = 1 ] && [ "${FAT:-0}" != 1 ]; then st_bazel=$(link_bazel p_bazel); fi

# DIST=1: wpd-ld's own distributed sequence: --wpd-index-only=DIR (wpd's
# thin link and plan applied, LLVM's thin link, one job per bitcode
# module), the jobs run by the Ninja file it writes (`wpd backend`, found
# beside wpd-ld), then the final link from DIR (--wpd-from-index).
link_dist() { # name -> status
    local name=$1 dir=$1.jobs
    rm -rf "$dir"
    say "+ $CXX $OPT -flto=thin --ld-path=$WPD_LD -Wl,--lto-whole-program-visibility -Wl,--wpd-index-only=$dir ${WPDX[*]} ${objs[*]} ${libs[*]} ${LINKX[*]} $(iplib wpd_ip) -o $name"
    # shellcheck disable=SC2086,SC2046
    $CXX "$OPT" -flto=thin --ld-path="$WPD_LD" -Wl,--lto-whole-program-visibility "${WPDX[@]}" ${WPD_FLAGS:-} \
        -Wl,--wpd-index-only="$dir" "${objs[@]}" "${libs[@]}" "${LINKX[@]}" $(iplib wpd_ip) -o "$name" \
        2>"$name.link.err" || { echo LINKFAIL; return; }
    ninja -C "$dir" >>"$name.link.err" 2>&1 || { echo LINKFAIL; return; }
    # shellcheck disable=SC2086,SC2046
    $CXX "$OPT" -flto=thin --ld-path="$WPD_LD" -Wl,--lto-whole-program-visibility "${WPDX[@]}" ${WPD_FLAGS:-} \
        -Wl,--wpd-from-index="$dir" "${objs[@]}" "${libs[@]}" "${LINKX[@]}" $(iplib wpd_ip) -o "$name" \
        2>>"$name.link.err" || { echo LINKFAIL; return; }
    status "$name" 0
}
st_dist=skip
if [ "${DIST:-0}" = 1 ]; then st_dist=$(link_dist p_dist); fi

# PLUGIN=1: wpd as GNU ld's (or, with LINKER=gold, gold's) plugin,
# libwpd_plugin.so beside wpd-ld (WPD_PLUGIN overrides), with
# whole-program visibility; no -flto on the link line, or clang would load
# LLVM's own plugin first. Not for FAT=1 (the plugin takes a fat object's
# native code, as GNU ld does).
link_plugin() { # name -> status
    local name=$1 plugin=${WPD_PLUGIN:-$(dirname "$WPD_LD")/libwpd_plugin.so} ld=bfd
    [ -f "$plugin" ] || { echo skip; return; }
    [ "${LINKER:-lld}" = gold ] && ld=gold
    [ -n "${PLUGIN_LD:-}" ] && ld=$PLUGIN_LD
    say "+ $CXX $OPT -fuse-ld=$ld -Wl,-plugin,$plugin -Wl,-plugin-opt=whole-program-visibility ${objs[*]} ${libs[*]} ${LINKX[*]} $(iplib wpd_ip) -o $name"
    # shellcheck disable=SC2046
    $CXX "$OPT" -fuse-ld=$ld -Wl,-plugin,"$plugin" -Wl,-plugin-opt=whole-program-visibility \
        "${objs[@]}" "${libs[@]}" "${LINKX[@]}" $(iplib wpd_ip) -o "$name" 2>"$name.link.err" || { echo LINKFAIL; return; }
    status "$name" 0
}
st_plugin=skip
if [ "${PLUGIN:-0}" = 1 ] && [ "${FAT:-0}" != 1 ]; then st_plugin=$(link_plugin p_plugin); fi

st_lld=skip
if [ "$LLD" = 1 ]; then
    val=()
    [ "$NATIVE" != 0 ] || [ "$SHARED" != 0 ] && val=(-Wl,--lto-validate-all-vtables-have-type-infos)
    say "+ $CXX $OPT -flto=thin -fuse-ld=lld -Wl,--lto-whole-program-visibility ${val[*]} ${LLDX[*]} ${objs[*]} ${libs[*]} ${LINKX[*]} $(iplib lld_ip) -o p_lld"
    # shellcheck disable=SC2046
    $CXX "$OPT" -flto=thin -fuse-ld=lld -Wl,--lto-whole-program-visibility "${val[@]}" "${LLDX[@]}" \
        "${objs[@]}" "${libs[@]}" "${LINKX[@]}" $(iplib lld_ip) -o p_lld 2>p_lld.link.err
    st_lld=$(status p_lld $?)
fi

st_san=skip
if [ "$SAN" = 1 ] || { [ "$SAN" != never ] && { [ "$st_wpv" != ok ] || [ "$st_nowpv" != ok ]; }; }; then
    say "+ $CXX $STD -O0 -g -fsanitize=address,undefined -fno-sanitize-recover=all ${srcs[*]} ${LINKX[*]} $(iplib ref_ip) -o ref_san"
    # shellcheck disable=SC2046
    if $CXX $STD -O0 -g -fsanitize=address,undefined -fno-sanitize-recover=all "${srcs[@]}" "${LINKX[@]}" $(iplib ref_ip) -o ref_san; then
        ASAN_OPTIONS=detect_leaks=0 run ref_san
        if same ref_san && ! [ -s ref_san.err ]; then st_san=ok; else st_san=MISMATCH; fi
    else
        st_san=BUILDFAIL
    fi
fi

for n in p_wpv p_nowpv p_bazel p_dist p_plugin p_lld; do
    [ -f $n.out ] && ! same $n && diff ref.out $n.out | head -5 | sed "s/^/$n: /" >&2
    [ -f $n.rc ] && ! cmp -s ref.rc $n.rc && echo "$n: exit $(rcname $n), expected $(rcname ref)" >&2
done
echo "RESULT wpv=$st_wpv nowpv=$st_nowpv bazel=$st_bazel dist=$st_dist plugin=$st_plugin lld=$st_lld san=$st_san"
[ "$st_san" != ok ] && [ "$st_san" != skip ] && exit 3
[ "$st_wpv" = ok ] && [ "$st_nowpv" = ok ] && [[ $st_bazel == ok || $st_bazel == skip || $st_bazel == refused ]] &&
    [[ $st_dist == ok || $st_dist == skip ]] && [[ $st_plugin == ok || $st_plugin == skip ]] || exit 1
exit 0
