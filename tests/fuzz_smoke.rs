//! A deterministic smoke run of the differential fuzzer in
//! `fuzz/hierarchies/`: `gen.py` writes the program of each seed below,
//! `check.sh` builds it at `-O0` (the reference) and through `wpd-ld` with
//! and without `--lto-whole-program-visibility`, runs everything and compares
//! stdout and exit status (a program may end in `SIGILL` on purpose). One
//! trial per seed, named by its seed. The seeds are chosen so that every
//! shape of `gen.py` appears; the test checks that each seed still produces
//! the shapes listed for it (`gen.py` records them in `config.sh`) and that
//! its sources show them.
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
/// hierarchy every seed has). Together they cover every shape of gen.py.
const SEEDS: &[(u64, &[&str])] = &[
    (13, &["merged-calls", "multi-base", "const-vtable", "placement-dtor", "untyped"]),
    (16, &["const-vtable", "placement-dtor", "trap-uncalled", "unicode"]),
    (22, &["multi-base", "trap-called", "unicode", "untyped"]),
    (7, &["merged-calls", "multi-base", "trap-called"]),
    (11, &["merged-calls", "multi-base", "unicode"]),
    (3, &["placement-dtor"]),
    (2, &["const-vtable"]),
    (21, &["const-vtable", "untyped"]),
    (26, &["multi-base", "trap-uncalled"]),
    (33, &["merged-calls", "unicode", "untyped"]),
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
];

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
        _ => false,
    }
}

/// The last lines of a link's stderr that are not remarks.
fn link_errors(dir: &Path, name: &str) -> String {
    let Ok(text) = std::fs::read_to_string(dir.join(format!("{name}.link.err"))) else {
        return String::new();
    };
    let lines: Vec<&str> =
        text.lines().filter(|l| !l.contains(": devirtualized a call to ") && !l.starts_with("speculative: ")).collect();
    let tail = &lines[lines.len().saturating_sub(12)..];
    tail.iter().map(|l| format!("    {l}\n")).collect()
}

fn file_text(path: &Path) -> String {
    std::fs::read(path).map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default()
}

fn check_seed(seed: u64, want: &[&str]) -> Check {
    let tmp = temp_dir(&format!("fuzz-smoke-{seed}"))?;
    let dir = tmp.path().join(format!("seed-{seed}"));
    let gen_py = fuzz_dir().join("gen.py");
    run(Command::new("python3").arg(&gen_py).arg("--seed").arg(seed.to_string()).arg("--out").arg(&dir))?;

    let config = String::from_utf8_lossy(&read(&dir.join("config.sh"))?).into_owned();
    let got: BTreeSet<String> =
        config_value(&config, "SHAPES").unwrap_or_default().split_whitespace().map(str::to_string).collect();
    let mut sources = String::new();
    for entry in std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))? {
        let p = entry.map_err(|e| e.to_string())?.path();
        if p.extension().is_some_and(|x| x == "cpp" || x == "hpp") {
            sources.push_str(&String::from_utf8_lossy(&read(&p)?));
        }
    }
    for shape in want {
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
    cmd.arg(&repro).env("LLD", "0").env("SAN", "never").env("WPD_FLAGS", WPD_FLAGS).env("WPD_LD", &wpd_ld);
    let out = run_raw(&mut cmd)?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let result = stdout.lines().rev().find(|l| l.starts_with("RESULT")).unwrap_or("(no RESULT line)").to_string();
    let code = out.status.code();
    if code == Some(0) {
        return Ok(());
    }

    let mut msg = format!("seed {seed} (shapes: {}): {result}\n", got.iter().cloned().collect::<Vec<_>>().join(" "));
    msg += &format!(
        "reproduce: python3 fuzz/hierarchies/gen.py --seed {seed} --out /tmp/seed-{seed} && \
         cp fuzz/hierarchies/check.sh /tmp/seed-{seed}/repro.sh && \
         WPD_LD={} LLD=0 bash /tmp/seed-{seed}/repro.sh   (SAN=1: also check the program is UB-free)\n   \
         or: fuzz/hierarchies/run.sh 1 {seed}   (keeps it in fuzz/hierarchies/failures/seed-{seed})\n",
        wpd_ld.display()
    );
    msg += &format!("check: {} -> {}\n", show_cmd(&cmd), out.status);
    match code {
        Some(2) => msg += "the -O0 reference could not be built or run: a generator bug\n",
        Some(3) => msg += "the sanitized -O0 build disagrees or reports: the generated program has UB\n",
        _ => {}
    }
    let reference = file_text(&dir.join("ref.out"));
    let ref_rc = file_text(&dir.join("ref.rc"));
    for name in ["p_wpv", "p_nowpv"] {
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
        msg += &format!("{name}: exit status {}, -O0 {}\n", rc.trim(), ref_rc.trim());
        if output != reference {
            msg += &format!("{name}: stdout differs from -O0, {}", short_diff(&reference, &output));
        }
    }
    msg += &format!("--- check.sh stderr (last lines)\n{}", {
        let err = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = err.lines().filter(|l| !l.starts_with("+ ")).collect();
        lines[lines.len().saturating_sub(10)..].join("\n")
    });
    Err(msg)
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    let covered: BTreeSet<&str> = SEEDS.iter().flat_map(|(_, s)| s.iter().copied()).collect();
    let missing: Vec<&str> = ALL_SHAPES.iter().copied().filter(|s| !covered.contains(s)).collect();
    trials.push(Trial::test("every_shape_is_covered", move || {
        if missing.is_empty() { Ok(()) } else { Err(format!("no seed covers {missing:?}").into()) }
    }));
    for &(seed, shapes) in SEEDS {
        trials.push(Trial::test(format!("seed_{seed}"), move || check_seed(seed, shapes).map_err(Into::into)));
    }
    libtest_mimic::run(&args, trials).exit();
}
