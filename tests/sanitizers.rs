//! Programs built with a sanitizer (`fixtures/sanitizers/`): `-fsanitize=`
//! links compiler-rt's runtime (`libclang_rt.*`), whose vtables have no
//! typeinfo (it is built with `-fno-rtti`), exports names through its
//! dynamic list (AddressSanitizer's `__asan_*` includes the descriptors of
//! the program's instrumented globals, vtables among them), and adds checks
//! around the program's vtable loads (AddressSanitizer's shadow check of a
//! slot's address, UBSan's hash of the vtable pointer). None of that reads a
//! slot or derives from a program class, so the program's closed hierarchy
//! is devirtualized and its dead slots dropped as without the sanitizer.
//!
//! Each sanitizer: the `-O0` program built with it is the reference; the
//! ThinLTO objects built with it are linked through wpd-ld and through GNU
//! ld with the plugin, with whole-program visibility. Each program must
//! print what the reference prints; each report must show every call site
//! rewritten unguarded, dead slots on with functions dropped, and no class
//! opened for the runtime's vtables.

use libtest_mimic::{Arguments, Trial};
use serde_json::Value;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use wpd_tests::link::{RunResult, link_run_report, run_program, wpd_ld_bin, wpd_plugin_so};
use wpd_tests::{CLANGXX, Check, mkdir, repo_root, run, temp_dir, uint};

/// Each case: a name and its `-fsanitize=` flags (compile and link).
const CASES: &[(&str, &[&str])] = &[
    ("address", &["-fsanitize=address"]),
    ("undefined", &["-fsanitize=undefined", "-fno-sanitize-recover=all"]),
    ("thread", &["-fsanitize=thread"]),
];

const SOURCES: &[&str] = &["main", "animals"];

fn main() {
    let args = Arguments::from_args();
    let trials = CASES
        .iter()
        .map(|&(name, flags)| Trial::test(name, move || check(name, flags).map_err(|e| format!("{name}: {e}").into())));
    libtest_mimic::run(&args, trials.collect()).exit();
}

fn src(name: &str) -> PathBuf {
    repo_root().join("fixtures/sanitizers").join(format!("{name}.cpp"))
}

fn check(name: &str, sanitize: &[&str]) -> Check {
    let tmp = temp_dir(&format!("sanitizers-{name}"))?;
    let (ref_dir, dir) = (tmp.path().join("ref"), tmp.path().join("lto"));
    mkdir(&ref_dir)?;
    mkdir(&dir)?;
    let reference = ref_dir.join("prog");
    run(Command::new(CLANGXX)
        .arg("-O0")
        .args(sanitize)
        .args(SOURCES.iter().map(|s| src(s)))
        .arg("-o")
        .arg(&reference))?;
    let want = run_program(&reference, &ref_dir)?;
    let mut objects: Vec<OsString> = Vec::new();
    for s in SOURCES {
        let o = dir.join(format!("{s}.o"));
        run(Command::new(CLANGXX)
            .args(["-O2", "-flto=thin", "-fwhole-program-vtables", "-c"])
            .args(sanitize)
            .arg(src(s))
            .arg("-o")
            .arg(&o))?;
        objects.push(o.into());
    }
    let links: Vec<(&str, Vec<String>)> = vec![
        (
            "wpd-ld",
            vec![
                "-flto=thin".into(),
                format!("--ld-path={}", wpd_ld_bin()?.display()),
                "-Wl,--lto-whole-program-visibility".into(),
            ],
        ),
        (
            "plugin-bfd",
            vec![
                "-fuse-ld=bfd".into(),
                format!("-Wl,-plugin,{}", wpd_plugin_so()?.display()),
                "-Wl,-plugin-opt=whole-program-visibility".into(),
            ],
        ),
    ];
    let mut failures = Vec::new();
    for (label, flags) in &links {
        if let Err(e) = link_and_check(&dir, label, flags, sanitize, &objects, &want) {
            failures.push(format!("[{label}] {e}"));
        }
    }
    if failures.is_empty() { Ok(()) } else { Err(failures.join("\n")) }
}

fn link_and_check(
    dir: &Path,
    label: &str,
    flags: &[String],
    sanitize: &[&str],
    objects: &[OsString],
    want: &RunResult,
) -> Check {
    let flags: Vec<String> = flags.iter().cloned().chain(sanitize.iter().map(|s| s.to_string())).collect();
    let report = link_run_report(dir, label, &flags, objects, want)?;
    let mut errs = Vec::new();
    let calls = &report["call_sites"];
    let (total, left, guarded) =
        (uint(calls, "total")?, uint(calls, "not_devirtualized")?, uint(calls, "speculative")?);
    if total < 5 || left != 0 || guarded != 0 {
        errs.push(format!("every call site should be rewritten unguarded; call_sites is {calls}"));
    }
    let dead = &report["dead_slots"];
    if !dead["off"].is_null() || dead["functions"].as_u64().unwrap_or(0) == 0 {
        errs.push(format!("dead slots should be on and drop functions; dead_slots is {dead}"));
    }
    let opened: Vec<&Value> = report["open_type_ids"]
        .as_array()
        .map(|a| a.iter().filter(|o| o.to_string().contains("libclang_rt")).collect())
        .unwrap_or_default();
    if !opened.is_empty() {
        errs.push(format!("the sanitizer runtime opened classes: {opened:?}"));
    }
    // The runtime is in the link (so its vtables were there to be read).
    if label == "wpd-ld" {
        let loaded = report["link_model"]["loaded"].as_array().map(Vec::as_slice).unwrap_or_default();
        if !loaded.iter().any(|l| l.to_string().contains("libclang_rt.")) {
            errs.push("the link loaded no libclang_rt member".into());
        }
    }
    if errs.is_empty() { Ok(()) } else { Err(errs.join("; ")) }
}
