//! A deterministic smoke run of the differential fuzzer in
//! `fuzz/hierarchies/`: `gen.py` writes the program of each seed below,
//! `check.sh` builds it at `-O0` (the reference), through `wpd-ld` with
//! and without `--lto-whole-program-visibility`, and as a Bazel-style build
//! (`--thinlto-index-only`, clang's own backends; `BAZEL=1`; not for fat
//! objects, which it refuses) and as wpd-ld's own distributed sequence
//! (`--wpd-index-only`, its jobs, `--wpd-from-index`; `DIST=1`) and through
//! the linker plugin (`PLUGIN=1`), runs everything and compares
//! stdout and exit status (a program may end in `SIGILL` on purpose). One
//! trial per seed, named by its seed. The seeds are chosen so that every
//! shape of `gen.py` appears; the test checks that each seed still produces
//! the shapes listed for it (`gen.py` records them in `config.sh`) and that
//! its sources show them. A failure names the seed, the command that
//! reproduces it and the difference from `-O0` (or the link's errors).
//!
//! lld's own ThinLTO link (informational in `run.sh`) and the sanitized
//! `-O0` build after a failure are skipped (every seed here was checked
//! UB-free with `SAN=1`), and every wpd-ld link uses `--wpd-jobs=1`:
//! libtest-mimic already runs one trial per core. `WPD_KEEP_TMP=1` keeps each
//! seed's directory.

use libtest_mimic::{Arguments, Trial};
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use wpd_tests::link::wpd_ld_bin;
use wpd_tests::{Check, read, repo_root, run, run_raw, short_diff, show_cmd, temp_dir, write};

/// The seeds, each with the shapes it must produce (besides the random
/// hierarchy every seed has). The first twelve together cover every shape of
/// gen.py up to `untyped` in its list, `wrapper` (22, 33 and 46) and
/// `covariant` (3; 50 and 122 too), `registered` (3 and 13, split units: the
/// file clang writes as regular LTO), `weak-override` (161 and 127: the
/// strong definition native, in a split link; 3, 33 and 46 too); the shapes
/// between come with the seeds
/// below, and `byval` with the seeds of the bug it found; then, for each of
/// the bugs the fuzzer found in
/// wpd-ld (listed in fuzz/hierarchies/README.md, "Bugs the shapes found"),
/// seeds that hit it (two or three each, K2 is hit by most of them); two
/// seeds for each of the shapes where the body that runs is not the
/// bitcode's (muldefs, interposed) or the build differs (fat, relative);
/// two or more for each shape that reads a slot other than by a plain
/// virtual call (mfp-call, native-reader, exported-caller) or reads a vtable
/// for RTTI only (dyncast); then seeds that passed,
/// over the build choices (split or not, hidden, native, shared, archive,
/// linker, -O level, speculation, -fno-rtti). An entry `archive:<form>`
/// is no shape but how the seed's archive reaches the link line
/// (`ARFORM` in config.sh: group, script or thin), `plugin:<linker>` the
/// linker of the plugin's link, and `xflags:<flag>` a code-generation flag
/// of every non-reference compile ([`XFLAGS`]). About two minutes on two
/// cores; `fuzz/hierarchies/run.sh` runs any number more.
const SEEDS: &[(u64, &[&str])] = &[
    // every shape
    (13, &["merged-calls", "multi-base", "const-vtable", "placement-dtor", "untyped", "registered"]),
    (16, &["const-vtable", "placement-dtor", "trap-uncalled", "unicode"]),
    (22, &["multi-base", "trap-called", "unicode", "untyped", "wrapper"]),
    (7, &["merged-calls", "multi-base", "trap-called"]),
    (161, &["const-vtable", "placement-dtor", "trap-called", "weak-override"]),
    (272, &["multi-base"]),
    (14, &["multi-base", "const-vtable", "trap-uncalled"]),
    (1, &["merged-calls", "const-vtable", "untyped"]),
    (3, &["placement-dtor", "covariant", "registered"]),
    (33, &["merged-calls", "unicode", "untyped", "wrapper"]),
    (46, &["multi-base", "const-vtable", "wrapper"]),
    (27, &["merged-calls", "placement-dtor"]),
    // K1 two tests, one call
    (191, &["multi-base"]),
    (206, &["merged-calls", "multi-base"]),
    (328, &["multi-base"]),
    // K3 merged tests
    (101, &["merged-calls", "multi-base", "const-vtable", "trap-uncalled"]),
    (228, &["merged-calls", "multi-base", "const-vtable", "unicode", "untyped"]),
    (390, &["merged-calls"]),
    // K4 untyped -fno-rtti
    (52, &["multi-base", "untyped"]),
    (122, &["multi-base", "untyped", "covariant"]),
    (180, &["untyped"]),
    // K5 trap-only override
    (93, &["trap-called"]),
    (307, &["merged-calls", "trap-called"]),
    (406, &["const-vtable", "placement-dtor", "trap-called", "unicode", "untyped"]),
    // K6 non-ASCII names
    (129, &["merged-calls", "const-vtable", "unicode"]),
    (151, &["const-vtable", "unicode", "untyped"]),
    // K7 constant vtable address
    (285, &["const-vtable"]),
    (304, &["multi-base", "const-vtable"]),
    (494, &["placement-dtor", "trap-uncalled"]),
    // N3 linkonce target dropped
    (112, &["const-vtable"]),
    (259, &["merged-calls", "multi-base", "const-vtable", "trap-uncalled"]),
    (440, &["const-vtable"]),
    // the body that runs is not the bitcode's (issue 42): each catches a
    // wpd-ld that folds or calls the bitcode body anyway; fat objects and
    // relative vtables are build shapes
    (563, &["merged-calls", "muldefs"]),
    (588, &["merged-calls", "muldefs"]),
    (549, &["interposed"]),
    (552, &["multi-base", "const-vtable", "placement-dtor", "muldefs", "interposed"]),
    (517, &["unicode", "fat"]),
    (529, &["const-vtable", "untyped", "interposed", "fat"]),
    (516, &["const-vtable", "placement-dtor", "unicode", "relative"]),
    (560, &["const-vtable", "placement-dtor", "fat", "relative"]),
    // slots read other than by a plain virtual call, or vtables read for
    // RTTI only: each catches a wpd-ld that drops a slot (dead slot
    // elimination) that a member function pointer, native code or a function
    // found with dlsym still calls
    (825, &["untyped", "mfp-call", "dyncast", "native-reader", "exported-caller"]),
    (845, &["trap-called", "muldefs", "mfp-call", "dyncast", "native-reader", "exported-caller"]),
    (840, &["muldefs", "interposed", "mfp-call", "native-reader", "exported-caller"]),
    (823, &["merged-calls", "const-vtable", "mfp-call", "dyncast", "exported-caller"]),
    (898, &["trap-called", "fat", "mfp-call", "dyncast", "native-reader"]),
    (705, &["unicode", "relative", "mfp-call", "exported-caller"]),
    // found by those shapes (fuzz/hierarchies/README.md): a bitcode copy of
    // a vtable a native object also defines made local (two vtables, a
    // dynamic_cast to a final class fails), and a closed-set dispatch
    // declined on a vtable pointer folded to a constant
    (853, &["multi-base", "const-vtable", "trap-called", "untyped", "dyncast", "exported-caller"]),
    (896, &["merged-calls", "multi-base", "untyped", "muldefs", "dyncast", "exported-caller"]),
    (616, &["merged-calls", "placement-dtor", "fat", "dyncast", "exported-caller"]),
    // a global vtable's layout applied to a unit's internal construction
    // vtable of the same name
    (13003, &["placement-dtor", "interposed", "fat", "mfp-call"]),
    // a member loaded only for a function a dead slot's override calls
    // (archive, no native code: its slots die); wpd-ld's program lost the
    // member's initializer before the extraction markers
    (58, &["merged-calls", "mfp-call", "dead-extracted"]),
    (90, &["merged-calls", "multi-base", "unicode", "dead-extracted"]),
    (110, &["merged-calls", "dead-extracted", "dlopen-derived"]),
    // a closed-set dispatch whose targets the caller's module does not
    // declare, over arguments passed in memory: wpd declared them without
    // `byval`, LLVM refused to promote the calls, and with a dead slot the
    // link failed (split, unsplit, hidden)
    (41, &["merged-calls", "dead-extracted", "byval"]),
    (108, &["const-vtable", "unicode", "dead-extracted", "byval"]),
    (163, &["dyncast", "byval"]),
    // the plugin judged native code by the linker's resolutions only and
    // missed a -fno-rtti native vtable (no typeinfo) under a program class:
    // it devirtualized a destructor call wpd-ld keeps open (PLUGIN=1)
    (121018, &["interposed", "mfp-call", "native-reader"]),
    // ... and left out an archive member GNU ld had loaded, because one of
    // its references (the typeinfo of the -fno-rtti unit's class) stays
    // undefined until the backends drop it (PLUGIN=1)
    (122014, &["untyped", "dead-extracted", "weak-override"]),
    // ... and under mold, which offers the plugin no native file, missed the
    // same vtable until the plugin read mold's command line
    (121018, &["plugin:mold", "native-reader"]),
    // a plugin loaded with dlopen derives from a class whose typeinfo the
    // program exports; wpd-ld took the class for closed where no object
    // held its vtable (Dl0B's destructor protected and trivial: 110, 125)
    // or where the vtable was not exported (144)
    (125, &["interposed", "dlopen-derived"]),
    (144, &["exported-caller", "dlopen-derived"]),
    // a C library linked --as-needed that only a dead slot's override
    // calls: the native object lost the only reference, the linker left
    // the library out of DT_NEEDED and its constructor did not run (wpd-ld,
    // its distributed links, and the plugin under mold)
    (222, &["dyncast", "weak-override", "dead-needed"]),
    (53, &["plugin:mold", "multi-base", "dead-extracted", "dead-needed"]),
    // the program hands a plugin it loads with dlopen an object whose
    // functions only the plugin calls: their entries were dead slots, and
    // the plugin trapped
    (10, &["covariant", "dlopen-host"]),
    // the archive reaching the link line in two archives inside
    // --start-group (gold), named by a linker script's GROUP (GNU ld, beside
    // a shared library), and as a thin archive (gold)
    (43, &["archive:group", "relative", "byval"]),
    (6, &["archive:script", "interposed", "covariant"]),
    (90, &["archive:thin", "dead-extracted", "byval"]),
    // code-generation flags real builds add (gen.py --xflags): strict vtable
    // pointers (invariant.group loads, launder and strip intrinsics) around
    // a placement new, beside a shared library; hidden inline functions in
    // vtables of default visibility, with a bitcode shared library whose
    // definitions the program interposes
    (27, &["xflags:-fstrict-vtable-pointers", "merged-calls", "placement-dtor"]),
    (6, &["xflags:-fvisibility-inlines-hidden", "interposed", "covariant"]),
    // passing seeds over the build choices
    (8, &["const-vtable", "untyped"]),
    (21, &["const-vtable", "untyped"]),
    (26, &["multi-base", "trap-uncalled"]),
    (50, &["const-vtable", "unicode", "covariant"]),
    (77, &["trap-called", "untyped"]),
    (127, &["merged-calls", "trap-called", "weak-override"]),
    (136, &["const-vtable", "trap-uncalled"]),
    (141, &["const-vtable", "trap-uncalled"]),
];

/// Every shape gen.py knows (its SHAPES list).
const ALL_SHAPES: &[&str] = &[
    "merged-calls",
    "multi-base",
    "const-vtable",
    "placement-dtor",
    "trap-called",
    "trap-uncalled",
    "unicode",
    "untyped",
    "muldefs",
    "interposed",
    "fat",
    "relative",
    "mfp-call",
    "dyncast",
    "native-reader",
    "exported-caller",
    "dead-extracted",
    "wrapper",
    "byval",
    "covariant",
    "registered",
    "weak-override",
    "dlopen-derived",
    "dead-needed",
    "dlopen-host",
];

/// The ways gen.py puts an archive on the link line besides one plain
/// archive (`--archive-form`), as [`SEEDS`] names them.
const ARCHIVE_FORMS: &[&str] = &["archive:group", "archive:script", "archive:thin"];

/// The linkers [`SEEDS`] names for the plugin's link besides the one
/// check.sh picks (GNU ld, or gold for a seed that picks gold):
/// check.sh's `PLUGIN_LD`.
const PLUGIN_LINKERS: &[&str] = &["plugin:mold"];

/// The code-generation flags gen.py may add to every non-reference compile
/// (`--xflags`, `XFLAGS` in config.sh), as [`SEEDS`] names them. A seed
/// without such an entry is generated with none, whatever its own choice,
/// so that the seeds pinned for a bug keep the build that showed it.
const XFLAGS: &[&str] = &["xflags:-fstrict-vtable-pointers", "xflags:-fvisibility-inlines-hidden"];

/// Extra `-Wl,` flags of both wpd-ld links (check.sh's `WPD_FLAGS`).
const WPD_FLAGS: &str = "-Wl,--wpd-jobs=1";

fn fuzz_dir() -> std::path::PathBuf {
    repo_root().join("fuzz/hierarchies")
}

/// The value of `NAME=...` in config.sh (quotes removed).
fn config_value(config: &str, name: &str) -> Option<String> {
    config.lines().find_map(|l| l.strip_prefix(&format!("{name}=")).map(|v| v.trim_matches('"').to_string()))
}

/// Evidence of a shape in the generated sources, so that a gen.py change
/// that keeps the name but loses the shape is noticed.
fn shows(shape: &str, sources: &str, config: &str) -> bool {
    match shape {
        "merged-calls" => sources.contains("_loop(") && sources.contains(" ? "),
        "multi-base" => sources.contains("[[gnu::pure]]") && sources.contains("static_cast<const Pm"),
        "const-vtable" => sources.contains(" *s = new Kv"),
        "placement-dtor" => sources.contains("new (buf) Pd") && sources.contains("->~Pd"),
        "trap-called" => sources.contains("__builtin_trap()") && config.contains("TRAP=1"),
        "trap-uncalled" => sources.contains("__builtin_trap()") && config.contains("TRAP=0"),
        "unicode" => !sources.is_ascii() && sources.contains("::*"),
        "untyped" => config.contains("untyped:"),
        "muldefs" => config.contains("patch:") && config.contains("MULDEFS=1") && sources.contains("-z muldefs keeps"),
        "interposed" => config.contains("ishared:") && config.contains("IPEXPORT=\"_ZNK") && sources.contains("ip_run"),
        "fat" => config.contains("FAT=1"),
        "relative" => config.contains("RELATIVE=1"),
        "mfp-call" => sources.contains("using mf0_pm = ") && sources.contains("->*m)("),
        "dyncast" => sources.contains("dynamic_cast<Dc0") && sources.contains("typeid(*b)"),
        "native-reader" => config.contains("native:") && sources.contains("// native-reader: the only calls of"),
        "exported-caller" => {
            config.contains("DLEXPORT=\"fz_exported0")
                && sources.contains("visibility(\"default\"), used")
                && sources.contains("dlsym(RTLD_DEFAULT, \"fz_exported0\")")
        }
        "dead-extracted" => {
            config.contains("lto:dx0.cpp")
                && sources.contains("unsigned long Dx0D::dv0(unsigned long x) const { return dx0_only(x); }")
                && sources.contains("dead-extracted0 loaded")
        }
        "wrapper" => sources.contains("void wrap(Wr0B *p) { inner = p; }") && sources.contains("w->wrap(objs[n - 1]);"),
        "byval" => {
            sources.contains("unsigned long bw0(int a0, int a1, int a2, int a3, int a4, By0Two a5)")
                && sources.contains("r = mix(r, objs[i]->bv0(g));")
        }
        "covariant" => sources.contains("virtual Cv0T *as_t() = 0;") && sources.contains("Cv0L0 *as_t() override;"),
        "weak-override" => {
            sources.contains("__attribute__((weak)) unsigned long Wk0D::wv0(unsigned long x) const")
                && sources.contains("void Wk0D::wk0_key() const {}")
        }
        "dlopen-derived" => {
            config.contains("dlopen:dl0p.cpp")
                && config.contains("_ZTI4Dl0B")
                && sources.contains("struct Plug final : Dl0B {")
                && sources.contains("unsigned long dl0_walk(Dl0B *p, unsigned long x) {")
        }
        "dead-needed" => {
            config.contains("cneeded:dn0.c")
                && sources.contains("unsigned long Dn0D::nv0(unsigned long x) const { return fzdn0_hook(x); }")
                && sources.contains("dead-needed0 loaded")
        }
        "dlopen-host" => {
            config.contains("dlopen:dh0p.cpp")
                && sources.contains("struct Dh0S final : Dh0I {")
                && sources.contains("return h.p0(x) * 3ul + h.q0(x + 1ul);")
                && sources.contains("h = mix(h, f(s, x));")
        }
        "registered" => {
            config.contains("ltoobj:rg0.cpp")
                && sources.contains("const int rg0_registered = (rg0_add(&rg0_test), rg0_add(&rg0_second), 0);")
        }
        _ => false,
    }
}

/// What a failed link said: its error lines (a panic with its message),
/// else the last lines of its stderr that are not remarks.
fn link_errors(dir: &Path, name: &str) -> String {
    let text = file_text(&dir.join(format!("{name}.link.err")));
    let lines: Vec<&str> =
        text.lines().filter(|l| !l.contains(": devirtualized a call to ") && !l.starts_with("speculative: ")).collect();
    let mut key: Vec<&str> = Vec::new();
    for (i, &l) in lines.iter().enumerate() {
        if l.contains("panicked at") {
            key.extend(lines[i..].iter().take(2));
        } else if l.contains("error") || l.contains("undefined") || l.contains("Segmentation fault") {
            key.push(l);
        }
    }
    key.dedup();
    let shown: Vec<&str> = if key.is_empty() { lines[lines.len().saturating_sub(12)..].to_vec() } else { key };
    shown.iter().take(12).map(|l| format!("    {l}\n")).collect()
}

/// An exit status as run.sh records it (`timeout` and the shell: 128 + the
/// signal number when killed), with the signal's name.
fn status_name(rc: &str) -> String {
    let rc = rc.trim();
    let name = match rc {
        "124" => " (timeout)",
        "132" => " (SIGILL)",
        "134" => " (SIGABRT)",
        "136" => " (SIGFPE)",
        "139" => " (SIGSEGV)",
        _ => "",
    };
    format!("{rc}{name}")
}

fn file_text(path: &Path) -> String {
    std::fs::read(path).map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default()
}

fn check_seed(seed: u64, want: &[&str]) -> Check {
    let tmp = temp_dir(&format!("fuzz-smoke-{seed}"))?;
    let dir = tmp.path().join(format!("seed-{seed}"));
    let gen_py = fuzz_dir().join("gen.py");
    let xflags: Vec<&str> = want.iter().filter_map(|s| s.strip_prefix("xflags:")).collect();
    let mut generate = Command::new("python3");
    generate.arg(&gen_py).arg("--seed").arg(seed.to_string()).arg(format!("--xflags={}", xflags.join(",")));
    run(generate.arg("--out").arg(&dir))?;

    let config = String::from_utf8_lossy(&read(&dir.join("config.sh"))?).into_owned();
    let got_xflags = config_value(&config, "XFLAGS").unwrap_or_default();
    if got_xflags != xflags.join(" ") {
        return Err(format!("seed {seed}: gen.py --xflags={} wrote XFLAGS=\"{got_xflags}\"", xflags.join(",")));
    }
    let got: BTreeSet<String> =
        config_value(&config, "SHAPES").unwrap_or_default().split_whitespace().map(str::to_string).collect();
    let mut sources = String::new();
    for entry in std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))? {
        let p = entry.map_err(|e| e.to_string())?.path();
        if p.extension().is_some_and(|x| x == "cpp" || x == "hpp" || x == "c") {
            sources.push_str(&String::from_utf8_lossy(&read(&p)?));
        }
    }
    let plugin_ld = want.iter().find_map(|s| s.strip_prefix("plugin:"));
    for shape in want {
        if shape.starts_with("plugin:") || shape.starts_with("xflags:") {
            continue;
        }
        if let Some(form) = shape.strip_prefix("archive:") {
            let archive = config_value(&config, "ARCHIVE").unwrap_or_default();
            let got_form = config_value(&config, "ARFORM").unwrap_or_else(|| "plain".to_string());
            if archive != "1" || got_form != form {
                return Err(format!(
                    "seed {seed} no longer links an archive as {form} (ARCHIVE={archive}, ARFORM={got_form}): pick another seed"
                ));
            }
            continue;
        }
        if !got.contains(*shape) {
            return Err(format!(
                "seed {seed} no longer produces shape {shape} (it produces {got:?}): pick another seed"
            ));
        }
        if !shows(shape, &sources, &config) {
            return Err(format!("seed {seed}: config.sh names shape {shape} but the sources do not show it"));
        }
    }

    let wpd_ld = wpd_ld_bin()?;
    let check =
        String::from_utf8_lossy(&read(&fuzz_dir().join("check.sh"))?).replace("@WPD_LD@", &wpd_ld.to_string_lossy());
    let repro = dir.join("repro.sh");
    write(&repro, check.as_bytes())?;
    let mut cmd = Command::new("bash");
    // DIST=1: wpd-ld's distributed sequence (--wpd-index-only, the jobs,
    // --wpd-from-index), and PLUGIN=1: a link through libwpd_plugin.so
    // under GNU ld (gold for the seeds that pick it), equal to -O0 too.
    // BAZEL=1: also the Bazel-style sequence (wpd-ld --thinlto-index-only,
    // clang's own backends, lld), equal to -O0 too.
    cmd.arg(&repro)
        .env("LLD", "0")
        .env("SAN", "never")
        .env("BAZEL", "1")
        .env("DIST", "1")
        .env("PLUGIN", "1")
        .env("WPD_FLAGS", WPD_FLAGS)
        .env("WPD_LD", &wpd_ld);
    if let Some(ld) = plugin_ld {
        cmd.env("PLUGIN_LD", ld);
    }
    let out = run_raw(&mut cmd)?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let result = stdout.lines().rev().find(|l| l.starts_with("RESULT")).unwrap_or("(no RESULT line)").to_string();
    let code = out.status.code();
    if code == Some(0) {
        return Ok(());
    }

    let mut msg = format!("seed {seed} (shapes: {}): {result}\n", got.iter().cloned().collect::<Vec<_>>().join(" "));
    msg += &format!(
        "reproduce: python3 fuzz/hierarchies/gen.py --seed {seed} --xflags={xf} --out /tmp/seed-{seed} && \
         cp fuzz/hierarchies/check.sh /tmp/seed-{seed}/repro.sh && \
         WPD_LD={} LLD=0 bash /tmp/seed-{seed}/repro.sh   (SAN=1: also check the program is UB-free)\n   \
         or: GEN_ARGS=--xflags={xf} fuzz/hierarchies/run.sh 1 {seed}   (keeps it in fuzz/hierarchies/failures/seed-{seed})\n",
        wpd_ld.display(),
        xf = xflags.join(",")
    );
    msg += &format!("check: {} -> {}\n", show_cmd(&cmd), out.status);
    match code {
        Some(2) => msg += "the -O0 reference could not be built or run: a generator bug\n",
        Some(3) => msg += "the sanitized -O0 build disagrees or reports: the generated program has UB\n",
        _ => {}
    }
    let reference = file_text(&dir.join("ref.out"));
    let ref_rc = file_text(&dir.join("ref.rc"));
    for name in ["p_wpv", "p_nowpv", "p_bazel", "p_dist", "p_plugin"] {
        let link_rc = dir.join(format!("{name}.rc"));
        if !link_rc.is_file() {
            msg += &format!("{name}: link failed:\n{}", link_errors(&dir, name));
            continue;
        }
        let rc = file_text(&link_rc);
        let output = file_text(&dir.join(format!("{name}.out")));
        if output == reference && rc == ref_rc {
            msg += &format!("{name}: same output as -O0\n");
            continue;
        }
        msg += &format!("{name}: exit status {}, -O0 {}\n", status_name(&rc), status_name(&ref_rc));
        if output != reference {
            msg += &format!("{name}: stdout differs from -O0, {}", short_diff(&reference, &output));
        }
    }
    // check.sh's own verdicts (compiler warnings and commands left out)
    let err = String::from_utf8_lossy(&out.stderr);
    let verdicts: Vec<&str> = err.lines().filter(|l| l.starts_with("p_") || l.starts_with("reference")).collect();
    if !verdicts.is_empty() {
        msg += &format!("--- check.sh\n{}\n", verdicts.join("\n"));
    }
    Err(msg)
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    let covered: BTreeSet<&str> = SEEDS.iter().flat_map(|(_, s)| s.iter().copied()).collect();
    let missing: Vec<&str> = ALL_SHAPES
        .iter()
        .chain(ARCHIVE_FORMS)
        .chain(PLUGIN_LINKERS)
        .chain(XFLAGS)
        .copied()
        .filter(|s| !covered.contains(s))
        .collect();
    trials.push(Trial::test("every_shape_is_covered", move || {
        if missing.is_empty() { Ok(()) } else { Err(format!("no seed covers {missing:?}").into()) }
    }));
    for &(seed, shapes) in SEEDS {
        let mut name = match shapes.iter().find_map(|s| s.strip_prefix("plugin:")) {
            Some(ld) => format!("seed_{seed}_plugin_{ld}"),
            None => format!("seed_{seed}"),
        };
        for flag in shapes.iter().filter_map(|s| s.strip_prefix("xflags:-f")) {
            name += &format!("_{}", flag.replace('-', "_"));
        }
        trials.push(Trial::test(name, move || check_seed(seed, shapes).map_err(Into::into)));
    }
    libtest_mimic::run(&args, trials).exit();
}
