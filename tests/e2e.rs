//! End-to-end harness: every `fixtures/e2e/<name>/` program is compiled with
//! clang++-19 (ThinLTO bitcode), linked through `wpd-ld` with and without
//! whole-program visibility, run, and compared with a `-O0` build of the
//! same sources. Each link's report is checked against the fixture's
//! `expect` file and the report schema's invariants, and the same objects
//! are linked by lld's own ThinLTO: every call LLVM devirtualizes must be
//! devirtualized by wpd too (single-impl by count, every kind by source
//! location), and LLVM's program must agree with `-O0` as well.
//!
//! A fixture may list sources to compile without LTO in `native` (native
//! objects in the link) or into a native shared library (`shared`), and may
//! carry an `llvm-unsound` note when lld's
//! ThinLTO miscompiles it: then LLVM is neither the floor nor checked.
//!
//! More tests: the real linker chosen with `--wpd-linker` (lld, GNU ld,
//! gold) is the one that linked, and `--wpd-jobs=1`/`--wpd-jobs=2` give
//! byte-identical binaries. `WPD_E2E_VERBOSE=1` prints the devirtualization
//! counts of every fixture.

use libtest_mimic::{Arguments, Trial};
use serde_json::Value;
use std::ffi::OsString;
use std::path::Path;
use std::process::Command;
use wpd_tests::link::{
    COUNTERS, Remark, RunResult, check_report, counter, expect_empty_dir, library_inputs, link, llvm_command,
    llvm_remarks, locations, missing_locations, positional_inputs, read_report, reference_run, run_program, same_run,
    split_stderr, wpd_ld_command,
};
use wpd_tests::{BASE_FLAGS, Built, CLANGXX, Check, Fixture, compile, fixtures, mkdir, read, run, show_cmd, temp_dir};

/// Real linkers for `--wpd-linker`, by short name.
const LINKERS: &[(&str, &str)] = &[("lld", "ld.lld-19"), ("bfd", "/usr/bin/ld.bfd"), ("gold", "/usr/bin/ld.gold")];
/// Fixtures linked with every linker (archive member selection, exception
/// tables).
const LINKER_FIXTURES: &[&str] = &["archive", "exceptions"];
/// Fixtures linked with `--wpd-jobs=1` and `--wpd-jobs=2` (promoted
/// locals; vtables rebuilt for constant propagation).
const JOBS_FIXTURES: &[&str] = &["anon_namespace", "ret_vals"];

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    match fixtures("e2e") {
        Ok(all) => {
            for fx in &all {
                let fx = fx.clone();
                trials.push(Trial::test(fx.name.clone(), move || fixture_test(&fx).map_err(Into::into)));
            }
            for &(short, linker) in LINKERS {
                for &name in LINKER_FIXTURES {
                    let fx = all.iter().find(|f| f.name == name).cloned();
                    let present = linker_exists(linker);
                    let trial = Trial::test(format!("linker_{short}_{name}"), move || {
                        let fx = fx.ok_or(format!("no fixture {name}"))?;
                        linker_test(&fx, short, linker).map_err(Into::into)
                    });
                    // A missing GNU linker is an environment gap, not a wpd bug.
                    trials.push(trial.with_ignored_flag(!present));
                }
            }
            for &name in JOBS_FIXTURES {
                let fx = all.iter().find(|f| f.name == name).cloned();
                trials.push(Trial::test(format!("jobs_1_and_2_are_byte_identical_{name}"), move || {
                    jobs_test(&fx.ok_or(format!("no fixture {name}"))?).map_err(Into::into)
                }));
            }
        }
        Err(e) => trials.push(Trial::test("fixtures", move || Err(e.into()))),
    }
    libtest_mimic::run(&args, trials).exit();
}

fn verbose() -> bool {
    std::env::var_os("WPD_E2E_VERBOSE").is_some_and(|v| v != "0" && !v.is_empty())
}

fn linker_exists(linker: &str) -> bool {
    if linker.contains('/') {
        return Path::new(linker).is_file();
    }
    std::env::var_os("PATH").is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(linker).is_file()))
}

// ---------------------------------------------------------------------------
// Expectations

/// Which links an expectation applies to.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Scope {
    Both,
    Wpv,
    NoWpv,
}

#[derive(Debug, Clone)]
enum Expect {
    /// `<counter> <op> <n|counter>` on `call_sites`.
    Count { key: String, op: String, rhs: Rhs },
    /// `target S`: a single_impl decision's target contains S.
    Target(String),
    /// `indirect S`: a decision with resolution none lists a target
    /// containing S and devirtualizes nothing.
    Indirect(String),
    /// `reason S`: some decision's reason contains S.
    Reason(String),
    /// `remark S`: some remark line contains S.
    Remark(String),
    /// `no-remark S`: no remark line contains S.
    NoRemark(String),
}

/// The right-hand side of a count: a number or another counter.
#[derive(Debug, Clone)]
enum Rhs {
    Num(u64),
    Counter(String),
}

#[derive(Debug, Clone)]
struct Line {
    scope: Scope,
    expect: Expect,
    text: String,
}

/// Parses `fixtures/e2e/<name>/expect` (see fixtures/e2e/README.md).
fn load_expect(fx: &Fixture) -> Check<Vec<Line>> {
    let path = fx.dir.join("expect");
    let text = String::from_utf8(read(&path)?).map_err(|_| format!("{} is not UTF-8", path.display()))?;
    let mut lines = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let t = raw.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let bad = |why: &str| format!("{}:{}: {why}: {t}", path.display(), i + 1);
        let (scope, rest) = if let Some(r) = t.strip_prefix("wpv:") {
            (Scope::Wpv, r.trim())
        } else if let Some(r) = t.strip_prefix("nowpv:") {
            (Scope::NoWpv, r.trim())
        } else {
            (Scope::Both, t)
        };
        let (word, arg) = rest.split_once(' ').map(|(w, a)| (w, a.trim())).unwrap_or((rest, ""));
        let expect = match word {
            "target" | "indirect" | "reason" | "remark" | "no-remark" if arg.is_empty() => {
                return Err(bad("missing argument"));
            }
            "target" => Expect::Target(arg.into()),
            "indirect" => Expect::Indirect(arg.into()),
            "reason" => Expect::Reason(arg.into()),
            "remark" => Expect::Remark(arg.into()),
            "no-remark" => Expect::NoRemark(arg.into()),
            key if COUNTERS.contains(&key) => {
                let mut it = arg.split_whitespace();
                let (Some(op), Some(n), None) = (it.next(), it.next(), it.next()) else {
                    return Err(bad("expected `<counter> <op> <n|counter>`"));
                };
                if !["==", ">=", "<=", ">", "<"].contains(&op) {
                    return Err(bad("unknown operator"));
                }
                let rhs = match n.parse() {
                    Ok(v) => Rhs::Num(v),
                    Err(_) if COUNTERS.contains(&n) => Rhs::Counter(n.into()),
                    Err(_) => return Err(bad("neither a number nor a counter")),
                };
                Expect::Count { key: key.into(), op: op.into(), rhs }
            }
            _ => return Err(bad("unknown expectation")),
        };
        lines.push(Line { scope, expect, text: t.to_string() });
    }
    if lines.is_empty() {
        return Err(format!("{} has no expectations", path.display()));
    }
    Ok(lines)
}

fn decisions(report: &Value) -> &[Value] {
    report.get("decisions").and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

fn str_field<'a>(d: &'a Value, key: &str) -> &'a str {
    d.get(key).and_then(Value::as_str).unwrap_or("")
}

fn check_expect(e: &Expect, report: &Value, remarks: &[Remark]) -> Check {
    let ok = match e {
        Expect::Count { key, op, rhs } => {
            let v = counter(report, key)?;
            let n = match rhs {
                Rhs::Num(n) => *n,
                Rhs::Counter(k) => counter(report, k)?,
            };
            let ok = match op.as_str() {
                "==" => v == n,
                ">=" => v >= n,
                "<=" => v <= n,
                ">" => v > n,
                _ => v < n,
            };
            if !ok {
                return Err(format!("call_sites.{key} is {v}, the bound is {n}"));
            }
            true
        }
        Expect::Target(s) => decisions(report)
            .iter()
            .any(|d| str_field(d, "resolution") == "single_impl" && str_field(d, "target").contains(s.as_str())),
        Expect::Indirect(s) => decisions(report).iter().any(|d| {
            str_field(d, "resolution") == "none"
                && d.get("devirtualized").and_then(Value::as_u64) == Some(0)
                && wpd_tests::array(d, "targets").iter().any(|t| t.as_str().is_some_and(|t| t.contains(s.as_str())))
        }),
        Expect::Reason(s) => decisions(report).iter().any(|d| str_field(d, "reason").contains(s.as_str())),
        Expect::Remark(s) => remarks.iter().any(|r| r.line.contains(s.as_str())),
        Expect::NoRemark(s) => !remarks.iter().any(|r| r.line.contains(s.as_str())),
    };
    if ok { Ok(()) } else { Err("not satisfied".into()) }
}

fn check_expectations(lines: &[Line], wpv: bool, report: &Value, remarks: &[Remark]) -> Check {
    let mut errs = Vec::new();
    for l in lines {
        let applies = match l.scope {
            Scope::Both => true,
            Scope::Wpv => wpv,
            Scope::NoWpv => !wpv,
        };
        if applies && let Err(e) = check_expect(&l.expect, report, remarks) {
            errs.push(format!("expectation `{}`: {e}", l.text));
        }
    }
    if errs.is_empty() { Ok(()) } else { Err(errs.join("\n")) }
}

// ---------------------------------------------------------------------------
// Building

/// Sources listed in the fixture's `native` file (compiled without LTO).
fn native_sources(fx: &Fixture) -> Check<Vec<String>> {
    let path = fx.dir.join("native");
    if !path.is_file() {
        return Ok(Vec::new());
    }
    let text = String::from_utf8_lossy(&read(&path)?).into_owned();
    let names: Vec<String> = text.split_whitespace().map(str::to_string).collect();
    for n in &names {
        if !fx.sources.contains(n) {
            return Err(format!("{}: {n} is not a source of the fixture", path.display()));
        }
    }
    Ok(names)
}

/// The fixture's `shared` file: a library name (`libx.so`) and the sources
/// built into that native shared library.
fn shared_library(fx: &Fixture) -> Check<Option<(String, Vec<String>)>> {
    let path = fx.dir.join("shared");
    if !path.is_file() {
        return Ok(None);
    }
    let text = String::from_utf8_lossy(&read(&path)?).into_owned();
    let mut words = text.split_whitespace().map(str::to_string);
    let lib = words.next().filter(|l| l.starts_with("lib") && l.ends_with(".so"));
    let sources: Vec<String> = words.collect();
    let Some(lib) = lib else {
        return Err(format!("{}: expected `lib<name>.so <source>...`", path.display()));
    };
    if sources.is_empty() || sources.iter().any(|s| !fx.sources.contains(s)) {
        return Err(format!("{}: the library needs sources of the fixture", path.display()));
    }
    Ok(Some((lib, sources)))
}

/// Compiles the fixture: bitcode objects (and archive) as `compile` does,
/// plus native objects for the `native` sources, which come first, and the
/// `shared` library (by absolute path, so the program finds it).
fn build_fixture(fx: &Fixture, dir: &Path) -> Check<Built> {
    let native = native_sources(fx)?;
    let shared = shared_library(fx)?;
    let mut bitcode = fx.clone();
    bitcode.sources.retain(|s| !native.contains(s) && !shared.as_ref().is_some_and(|(_, srcs)| srcs.contains(s)));
    let mut built = compile(&bitcode, dir, &[])?;
    let native_dir = dir.join("native");
    for (i, src) in native.iter().enumerate() {
        mkdir(&native_dir)?;
        let obj = native_dir.join(wpd_tests::object_name(src));
        let flags = BASE_FLAGS.iter().filter(|f| !f.starts_with("-flto") && !f.starts_with("-fwhole-program"));
        run(Command::new(CLANGXX)
            .current_dir(&fx.dir)
            .args(flags)
            .args(&fx.flags)
            .arg("-c")
            .arg(src)
            .arg("-o")
            .arg(&obj))?;
        built.objects.push(obj.clone());
        built.inputs.insert(i, obj);
    }
    if let Some((lib, sources)) = shared {
        let so = dir.join(lib);
        let flags = BASE_FLAGS.iter().filter(|f| !f.starts_with("-flto") && !f.starts_with("-fwhole-program"));
        run(Command::new(CLANGXX)
            .current_dir(&fx.dir)
            .args(flags)
            .args(&fx.flags)
            .args(["-fPIC", "-shared"])
            .args(&sources)
            .arg("-o")
            .arg(&so))?;
        built.inputs.push(so);
    }
    Ok(built)
}

// ---------------------------------------------------------------------------
// One wpd-ld link

/// A successful, checked wpd-ld link.
struct WpdLink {
    report: Value,
    remarks: Vec<Remark>,
    run: RunResult,
}

fn mode(wpv: bool) -> &'static str {
    if wpv { "wpv" } else { "nowpv" }
}

/// Links `inputs` in `build` through wpd-ld (report + remarks on), checks
/// the report, the remarks, the temporary directory, and runs the program.
fn wpd_link(build: &Path, label: &str, inputs: &[OsString], wpv: bool, extra: &[String]) -> Check<WpdLink> {
    let out = build.join(label);
    let report_path = build.join(format!("{label}.report.json"));
    let tmpdir = build.join(format!("{label}.tmp"));
    let mut args = vec![format!("-Wl,--wpd-report={}", report_path.display()), "-Wl,--wpd-remarks".to_string()];
    args.extend(extra.iter().cloned());
    let mut cmd = wpd_ld_command(build, inputs, &out, wpv, &args, &tmpdir)?;
    let shown = show_cmd(&cmd);
    let o = link(&mut cmd, &out)?;
    expect_empty_dir(&tmpdir, &format!("after `{shown}`"))?;
    let stderr = String::from_utf8_lossy(&o.stderr);
    let (remarks, other) = split_stderr(&stderr);
    let suspicious: Vec<&String> = other
        .iter()
        .filter(|l| {
            let l = l.to_ascii_lowercase();
            l.contains("error") || l.contains("panick") || l.contains("devirtualized")
        })
        .collect();
    if !suspicious.is_empty() {
        return Err(format!(
            "`{shown}` succeeded but printed:\n{}",
            suspicious.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n")
        ));
    }
    let report = read_report(&report_path)?;
    check_report(&report, wpv, &out).map_err(|e| format!("{} ({}): {e}", report_path.display(), mode(wpv)))?;
    // One remark per devirtualized call, of the matching kind.
    for (kind, key) in
        [("single-impl", "single_impl"), ("uniform-ret-val", "uniform_ret_val"), ("unique-ret-val", "unique_ret_val")]
    {
        let n = remarks.iter().filter(|r| r.kind == kind).count() as u64;
        let c = counter(&report, key)?;
        if n != c {
            return Err(format!("{n} `{kind}` remarks but call_sites.{key} is {c} ({})", mode(wpv)));
        }
    }
    let vcp = remarks.iter().filter(|r| r.kind.starts_with("virtual-const-prop")).count() as u64;
    let c = counter(&report, "virtual_const_prop")?;
    if vcp != c {
        return Err(format!("{vcp} virtual-const-prop remarks but call_sites.virtual_const_prop is {c}"));
    }
    let run = run_program(&out, build)?;
    Ok(WpdLink { report, remarks, run })
}

// ---------------------------------------------------------------------------
// Tests

/// Compile, -O0 reference, wpd-ld with and without whole-program
/// visibility, expectations, LLVM parity.
fn fixture_test(fx: &Fixture) -> Check {
    let expect = load_expect(fx)?;
    let tmp = temp_dir(&fx.name)?;
    let build = tmp.path().join("build");
    let built = build_fixture(fx, &build)?;
    let reference = reference_run(fx, &tmp.path().join("ref"))?;
    let inputs = positional_inputs(&built);
    let llvm_unsound = fx.dir.join("llvm-unsound").is_file();
    let has_native = !native_sources(fx)?.is_empty() || shared_library(fx)?.is_some();
    let llvm_extra: &[&str] = if has_native { &["-Wl,--lto-validate-all-vtables-have-type-infos"] } else { &[] };
    let mut failures = Vec::new();
    let mut summary = format!("{}:", fx.name);
    for wpv in [true, false] {
        let m = mode(wpv);
        let ours = match wpd_link(&build, &format!("wpd-{m}"), &inputs, wpv, &[]) {
            Ok(l) => l,
            Err(e) => {
                failures.push(format!("[{m}] {e}"));
                continue;
            }
        };
        if let Err(e) = same_run(&format!("[{m}] wpd-ld"), &reference, &ours.run) {
            failures.push(e);
        }
        if let Err(e) = check_expectations(&expect, wpv, &ours.report, &ours.remarks) {
            failures.push(format!("[{m}] {e}"));
        }
        match parity(&build, &inputs, wpv, &ours, &reference, llvm_extra, llvm_unsound) {
            Ok(llvm) => {
                let wpd = counter(&ours.report, "single_impl").unwrap_or(0);
                summary.push_str(&format!(" {m}: wpd {wpd} llvm {llvm};"));
            }
            Err(e) => failures.push(format!("[{m}] {e}")),
        }
        // Archives also go through `-L<dir> -l<name>`.
        if wpv && let Some(lib_inputs) = library_inputs(&built) {
            match wpd_link(&build, "wpd-lib", &lib_inputs, wpv, &[]) {
                Ok(l) => {
                    if let Err(e) = same_run("[-l] wpd-ld", &reference, &l.run) {
                        failures.push(e);
                    }
                    let (a, b) = (counter(&l.report, "single_impl"), counter(&ours.report, "single_impl"));
                    if a != b {
                        failures.push(format!("[-l] single_impl {a:?}, positional archive gave {b:?}"));
                    }
                }
                Err(e) => failures.push(format!("[-l] {e}")),
            }
        }
    }
    if verbose() {
        eprintln!("{summary}");
    }
    if failures.is_empty() { Ok(()) } else { Err(failures.join("\n\n")) }
}

/// Links the same objects with lld's ThinLTO, checks its program, and
/// requires wpd to devirtualize at least the calls LLVM does (unless the
/// fixture says LLVM is unsound on it). Returns LLVM's number of
/// single-impl call sites.
fn parity(
    build: &Path,
    inputs: &[OsString],
    wpv: bool,
    ours: &WpdLink,
    reference: &RunResult,
    extra: &[&str],
    unsound: bool,
) -> Check<u64> {
    let m = mode(wpv);
    let out = build.join(format!("llvm-{m}"));
    let mut cmd = llvm_command(build, inputs, &out, wpv, extra);
    let o = link(&mut cmd, &out)?;
    let theirs = llvm_remarks(&o);
    let llvm_run = same_run(&format!("lld ThinLTO ({m})"), reference, &run_program(&out, build)?);
    let llvm_single = theirs.iter().filter(|r| r.kind == "single-impl").count() as u64;
    if unsound {
        if verbose()
            && let Err(e) = llvm_run
        {
            eprintln!("note: llvm-unsound fixture: {e}");
        }
        return Ok(llvm_single);
    }
    llvm_run?;
    let wpd_single = counter(&ours.report, "single_impl")?;
    let mut errs = Vec::new();
    if wpd_single < llvm_single {
        errs.push(format!("LLVM devirtualizes {llvm_single} call sites with single-impl, wpd only {wpd_single}"));
    }
    let missing = missing_locations(&locations(&theirs, Some("single-impl")), &locations(&ours.remarks, None));
    if !missing.is_empty() {
        errs.push(format!("calls LLVM devirtualizes (single-impl) that wpd does not: {}", missing.join(", ")));
    }
    // The other kinds (return-value optimizations) are LLVM's floor too;
    // wpd may resolve a call differently, but must resolve it.
    let other = missing_locations(&locations(&theirs, None), &locations(&ours.remarks, None));
    if !other.is_empty() && missing.is_empty() {
        errs.push(format!("calls LLVM devirtualizes otherwise that wpd does not: {}", other.join(", ")));
    }
    if errs.is_empty() {
        Ok(llvm_single)
    } else {
        Err(format!(
            "LLVM parity: {}\nLLVM remarks:\n{}\nwpd remarks:\n{}",
            errs.join("\n"),
            theirs.iter().map(|r| r.line.as_str()).collect::<Vec<_>>().join("\n"),
            ours.remarks.iter().map(|r| r.line.as_str()).collect::<Vec<_>>().join("\n")
        ))
    }
}

/// Which linker produced an executable, from its sections: lld writes
/// `Linker: LLD` into `.comment`, gold adds `.note.gnu.gold-version`, GNU
/// ld neither.
fn linked_by(exe: &Path) -> Check<&'static str> {
    let mut cmd = Command::new("llvm-readelf-19");
    cmd.arg("-S").arg("-p").arg(".comment").arg(exe);
    let o = wpd_tests::run_raw(&mut cmd)?;
    let text = String::from_utf8_lossy(&o.stdout);
    if text.contains(".note.gnu.gold-version") {
        Ok("gold")
    } else if text.lines().any(|l| l.contains("Linker:") && l.contains("LLD")) {
        Ok("lld")
    } else if text.contains("Section Headers") {
        Ok("bfd")
    } else {
        Err(format!("`{}` did not list sections:\n{text}", show_cmd(&cmd)))
    }
}

/// Links a fixture (archive as `-l` when it has one) with `--wpd-linker`
/// and checks the program, the wpv expectations and the linker used.
fn linker_test(fx: &Fixture, short: &str, linker: &str) -> Check {
    let expect = load_expect(fx)?;
    let tmp = temp_dir(&format!("{}-{short}", fx.name))?;
    let build = tmp.path().join("build");
    let built = build_fixture(fx, &build)?;
    let reference = reference_run(fx, &tmp.path().join("ref"))?;
    let inputs = library_inputs(&built).unwrap_or_else(|| positional_inputs(&built));
    let l = wpd_link(&build, &format!("wpd-{short}"), &inputs, true, &[format!("-Wl,--wpd-linker={linker}")])?;
    same_run(&format!("wpd-ld --wpd-linker={linker}"), &reference, &l.run)?;
    check_expectations(&expect, true, &l.report, &l.remarks)?;
    let by = linked_by(&build.join(format!("wpd-{short}")))?;
    if by != short {
        return Err(format!("--wpd-linker={linker}: the output looks linked by {by}"));
    }
    Ok(())
}

/// `--wpd-jobs=1` and `--wpd-jobs=2` give byte-identical programs and the
/// same decisions.
fn jobs_test(fx: &Fixture) -> Check {
    let tmp = temp_dir(&format!("{}-jobs", fx.name))?;
    let build = tmp.path().join("build");
    let built = build_fixture(fx, &build)?;
    let inputs = positional_inputs(&built);
    let mut outputs = Vec::new();
    for jobs in [1, 2] {
        let label = format!("jobs{jobs}");
        let l = wpd_link(&build, &label, &inputs, true, &[format!("-Wl,--wpd-jobs={jobs}")])?;
        if counter(&l.report, "total")? == counter(&l.report, "not_devirtualized")? {
            return Err(format!("{label}: nothing devirtualized, the comparison would prove little"));
        }
        let bytes = read(&build.join(&label))?;
        outputs.push((label, bytes, l.report));
    }
    let (a, b) = (&outputs[0], &outputs[1]);
    if a.1 != b.1 {
        let at = a.1.iter().zip(&b.1).position(|(x, y)| x != y).unwrap_or(a.1.len().min(b.1.len()));
        return Err(format!(
            "{} ({} bytes) and {} ({} bytes) differ, first at byte {at}",
            a.0,
            a.1.len(),
            b.0,
            b.1.len()
        ));
    }
    for key in ["decisions", "call_sites"] {
        if a.2.get(key) != b.2.get(key) {
            return Err(format!("the reports' `{key}` differ between --wpd-jobs=1 and --wpd-jobs=2"));
        }
    }
    Ok(())
}
