//! End-to-end harness: every `fixtures/e2e/<name>/` program is compiled with
//! clang++-19 (ThinLTO bitcode), linked through `wpd-ld` with and without
//! whole-program visibility, run, and compared with a `-O0` build of the
//! same sources. Each link's report is checked against the fixture's
//! `expect` file and the report schema's invariants, and the same objects
//! are linked by lld's own ThinLTO: every call LLVM devirtualizes must be
//! devirtualized by wpd too (per kind by count, every kind by source
//! location), and LLVM's program must agree with `-O0` as well.
//!
//! Every fixture whose flags do not say `-fno-split-lto-unit` is built
//! unsplit too: same output, same counts (unless a `split-differs` note
//! says why not). Fixture files select more: native objects (`native`), a
//! native shared library in the link (`shared`, also found via `-l`) or
//! loaded with dlopen (`plugin`), a shared library as the link's output
//! (`output-shared`), extra wpd-ld flags (`wpd-flags`), extra links with
//! their own expectations (`variant-<name>`), lld being unsound
//! (`llvm-unsound`) or the safety floor (`llvm-validated`); see
//! fixtures/e2e/README.md.
//!
//! More tests: the real linker chosen with `--wpd-linker` (lld, GNU ld,
//! gold) is the one that linked, and `--wpd-jobs=1`/`--wpd-jobs=2` give
//! byte-identical binaries. `WPD_E2E_VERBOSE=1` prints the devirtualization
//! counts of every fixture.

use libtest_mimic::{Arguments, Trial};
use serde_json::Value;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use wpd_tests::link::{
    COUNTERS, Remark, RunResult, SPECULATIVE, check_report, counter, expect_empty_dir, library_inputs, link,
    llvm_command, llvm_remarks, locations, missing_locations, positional_inputs, read_report, reference_run,
    run_program, same_run, split_stderr, wpd_ld_command,
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
// Fixture configuration

/// A native shared library of a fixture: its file name (`lib<name>.so`) and
/// the sources built into it.
#[derive(Debug, Clone)]
struct Lib {
    file: String,
    sources: Vec<String>,
}

/// An extra wpd-ld link of a fixture (`variant-<name>`).
#[derive(Debug, Clone)]
struct Variant {
    name: String,
    /// wpd-ld flags (`-Wl,...`) after the fixture's `wpd-flags`.
    flags: Vec<String>,
    /// `norun`: only the report is checked (the program may be wrong).
    run: bool,
    /// `nowpv`: linked without whole-program visibility.
    wpv: bool,
}

/// What a fixture directory says besides its sources and `flags` (see
/// fixtures/e2e/README.md).
#[derive(Debug, Clone)]
struct Config {
    native: Vec<String>,
    shared: Option<Lib>,
    plugin: Option<Lib>,
    output_shared: Option<Lib>,
    wpd_flags: Vec<String>,
    variants: Vec<Variant>,
    /// Extra flags of the lld links (`llvm-flags`).
    llvm_flags: Vec<String>,
    /// `nowpv-only`: not the whole program (it loads plugins), so never
    /// linked with whole-program visibility.
    nowpv_only: bool,
    llvm_unsound: bool,
    llvm_validated: bool,
    split_differs: bool,
    /// Also built with `-fno-split-lto-unit` (the fixture's own flags do not
    /// set it).
    unsplit_variant: bool,
}

impl Config {
    /// The main links: with whole-program visibility (unless `nowpv-only`),
    /// then without.
    fn modes(&self) -> &'static [bool] {
        if self.nowpv_only { &[false] } else { &[true, false] }
    }

    /// The fixture has native code deriving from its classes in the link.
    fn has_native(&self) -> bool {
        !self.native.is_empty() || self.shared.is_some()
    }

    /// Sources not compiled to bitcode for the LTO link.
    fn non_bitcode(&self) -> Vec<&String> {
        let mut v: Vec<&String> = self.native.iter().collect();
        for lib in [&self.shared, &self.plugin].into_iter().flatten() {
            v.extend(&lib.sources);
        }
        v
    }
}

/// Whitespace-separated words of an optional fixture file (`None`: absent).
fn words(fx: &Fixture, file: &str) -> Check<Option<Vec<String>>> {
    let path = fx.dir.join(file);
    if !path.is_file() {
        return Ok(None);
    }
    let text = String::from_utf8(read(&path)?).map_err(|_| format!("{} is not UTF-8", path.display()))?;
    Ok(Some(text.split_whitespace().map(str::to_string).collect()))
}

/// A `lib<name>.so <source>...` file.
fn lib_file(fx: &Fixture, file: &str) -> Check<Option<Lib>> {
    let Some(w) = words(fx, file)? else { return Ok(None) };
    let bad = || format!("{}: expected `lib<name>.so <source>...`", fx.dir.join(file).display());
    let (lib, sources) = w.split_first().ok_or_else(bad)?;
    if !(lib.starts_with("lib") && lib.ends_with(".so")) || sources.is_empty() {
        return Err(bad());
    }
    Ok(Some(Lib { file: lib.clone(), sources: sources.to_vec() }))
}

/// Flags for wpd-ld links: every word must be a `-Wl,` option.
fn link_flags(fx: &Fixture, file: &str, words: &[String]) -> Check<Vec<String>> {
    for w in words {
        if !w.starts_with("-Wl,") {
            return Err(format!("{}: `{w}` is not a `-Wl,` linker flag", fx.dir.join(file).display()));
        }
    }
    Ok(words.to_vec())
}

fn load_config(fx: &Fixture) -> Check<Config> {
    let native = words(fx, "native")?.unwrap_or_default();
    let wpd_flags = match words(fx, "wpd-flags")? {
        Some(w) => link_flags(fx, "wpd-flags", &w)?,
        None => Vec::new(),
    };
    let mut variants = Vec::new();
    for file in wpd_tests::list_dir(&fx.dir)? {
        let Some(name) = file.strip_prefix("variant-") else { continue };
        if name.is_empty()
            || !name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
            || ["wpv", "nowpv"].contains(&name)
        {
            return Err(format!("{}/{file}: a variant name is [a-z0-9_]+, not wpv or nowpv", fx.dir.display()));
        }
        let w = words(fx, &file)?.unwrap_or_default();
        let (run, wpv) = (!w.iter().any(|x| x == "norun"), !w.iter().any(|x| x == "nowpv"));
        let flags: Vec<String> = w.into_iter().filter(|x| x != "norun" && x != "nowpv").collect();
        let flags = link_flags(fx, &file, &flags)?;
        variants.push(Variant { name: name.to_string(), flags, run, wpv });
    }
    let llvm_flags = match words(fx, "llvm-flags")? {
        Some(w) => link_flags(fx, "llvm-flags", &w)?,
        None => Vec::new(),
    };
    let cfg = Config {
        native,
        shared: lib_file(fx, "shared")?,
        plugin: lib_file(fx, "plugin")?,
        output_shared: lib_file(fx, "output-shared")?,
        wpd_flags,
        variants,
        llvm_flags,
        nowpv_only: fx.dir.join("nowpv-only").is_file(),
        llvm_unsound: fx.dir.join("llvm-unsound").is_file(),
        llvm_validated: fx.dir.join("llvm-validated").is_file(),
        split_differs: fx.dir.join("split-differs").is_file(),
        unsplit_variant: !fx.flags.iter().any(|f| f == "-fno-split-lto-unit"),
    };
    let mut seen: Vec<&String> = cfg.non_bitcode();
    if let Some(o) = &cfg.output_shared {
        seen.extend(&o.sources);
    }
    for (i, s) in seen.iter().enumerate() {
        if !fx.sources.contains(s) {
            return Err(format!("{}: {s} is not a source of the fixture", fx.dir.display()));
        }
        if seen[..i].contains(s) {
            return Err(format!("{}: {s} is listed twice (native, shared, plugin, output-shared)", fx.dir.display()));
        }
    }
    if cfg.output_shared.is_some() && (cfg.has_native() || cfg.plugin.is_some() || fx.archive.is_some()) {
        return Err(format!("{}: output-shared does not combine with other kinds", fx.dir.display()));
    }
    if cfg.nowpv_only && cfg.variants.iter().any(|v| v.wpv) {
        return Err(format!("{}: nowpv-only: every variant needs `nowpv`", fx.dir.display()));
    }
    if cfg.llvm_validated && !cfg.has_native() {
        return Err(format!("{}: llvm-validated needs native or shared code", fx.dir.display()));
    }
    Ok(cfg)
}

// ---------------------------------------------------------------------------
// Expectations

/// Which links an expectation applies to.
#[derive(Debug, Clone, PartialEq)]
enum Scope {
    Both,
    Wpv,
    NoWpv,
    /// Only the link of this variant.
    Variant(String),
}

/// The link whose report is being checked.
#[derive(Debug, Clone, Copy)]
enum LinkKind<'a> {
    /// A main link, with or without whole-program visibility.
    Main(bool),
    Variant(&'a str),
}

impl Scope {
    fn applies(&self, link: LinkKind<'_>) -> bool {
        match (self, link) {
            (Scope::Both, LinkKind::Main(_)) => true,
            (Scope::Wpv, LinkKind::Main(wpv)) => wpv,
            (Scope::NoWpv, LinkKind::Main(wpv)) => !wpv,
            (Scope::Variant(v), LinkKind::Variant(w)) => v == w,
            _ => false,
        }
    }
}

#[derive(Debug, Clone)]
enum Expect {
    /// `<counter> <op> <n|counter>` on `call_sites` (or a derived count).
    Count { key: String, op: String, rhs: Rhs },
    /// `target S`: a single_impl decision's target contains S.
    Target(String),
    /// `indirect S`: a decision with resolution none lists a target
    /// containing S and devirtualizes nothing.
    Indirect(String),
    /// `reason S`: some decision's reason contains S.
    Reason(String),
    /// `open S`: some `open_type_ids` entry's type id or reason contains S.
    Open(String),
    /// `remark S`: some remark line contains S.
    Remark(String),
    /// `no-remark S`: no remark line contains S.
    NoRemark(String),
}

/// Counts an expectation may use besides the `call_sites` counters:
/// `after`/`before`, constant-propagation argument tuples stored after /
/// before the vtables (`by_args[].byte_offset` positive / negative);
/// `bytes_added`, the report's `vtables.bytes_added`; `open_type_ids`, how
/// many type ids validation (or `--wpd-open`) opened.
const DERIVED: &[&str] = &["after", "before", "bytes_added", "open_type_ids"];

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

fn is_count(key: &str) -> bool {
    COUNTERS.contains(&key) || DERIVED.contains(&key)
}

/// Parses `fixtures/e2e/<name>/expect` (see fixtures/e2e/README.md).
fn load_expect(fx: &Fixture, cfg: &Config) -> Check<Vec<Line>> {
    let path = fx.dir.join("expect");
    let text = String::from_utf8(read(&path)?).map_err(|_| format!("{} is not UTF-8", path.display()))?;
    let mut lines = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let t = raw.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let bad = |why: &str| format!("{}:{}: {why}: {t}", path.display(), i + 1);
        let (scope, rest) = match t.split_once(':') {
            Some((head, rest)) if !head.is_empty() && !head.contains(char::is_whitespace) => {
                let scope = match head {
                    "wpv" if cfg.nowpv_only => return Err(bad("a nowpv-only fixture has no wpv link")),
                    "wpv" => Scope::Wpv,
                    "nowpv" => Scope::NoWpv,
                    v if cfg.variants.iter().any(|x| x.name == v) => Scope::Variant(v.to_string()),
                    _ => return Err(bad("unknown scope (wpv, nowpv or a variant-<name> file)")),
                };
                (scope, rest.trim())
            }
            _ => (Scope::Both, t),
        };
        let (word, arg) = rest.split_once(' ').map(|(w, a)| (w, a.trim())).unwrap_or((rest, ""));
        let expect = match word {
            "target" | "indirect" | "reason" | "open" | "remark" | "no-remark" if arg.is_empty() => {
                return Err(bad("missing argument"));
            }
            "target" => Expect::Target(arg.into()),
            "indirect" => Expect::Indirect(arg.into()),
            "reason" => Expect::Reason(arg.into()),
            "open" => Expect::Open(arg.into()),
            "remark" => Expect::Remark(arg.into()),
            "no-remark" => Expect::NoRemark(arg.into()),
            key if is_count(key) => {
                let mut it = arg.split_whitespace();
                let (Some(op), Some(n), None) = (it.next(), it.next(), it.next()) else {
                    return Err(bad("expected `<counter> <op> <n|counter>`"));
                };
                if !["==", ">=", "<=", ">", "<"].contains(&op) {
                    return Err(bad("unknown operator"));
                }
                let rhs = match n.parse() {
                    Ok(v) => Rhs::Num(v),
                    Err(_) if is_count(n) => Rhs::Counter(n.into()),
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
    for v in &cfg.variants {
        if !lines.iter().any(|l| l.scope == Scope::Variant(v.name.clone())) {
            return Err(format!("{}: variant `{}` has no `{}:` expectation", path.display(), v.name, v.name));
        }
    }
    Ok(lines)
}

fn decisions(report: &Value) -> &[Value] {
    report.get("decisions").and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

fn str_field<'a>(d: &'a Value, key: &str) -> &'a str {
    d.get(key).and_then(Value::as_str).unwrap_or("")
}

/// A `call_sites` counter or a derived count (see [`DERIVED`]).
fn count(report: &Value, key: &str) -> Check<u64> {
    let vcp_offsets = || {
        decisions(report)
            .iter()
            .flat_map(|d| wpd_tests::array(d, "by_args"))
            .filter(|a| str_field(a, "resolution") == "virtual_const_prop")
            .map(|a| a.get("byte_offset").and_then(Value::as_i64))
    };
    match key {
        "after" => Ok(vcp_offsets().filter(|o| o.is_some_and(|o| o > 0)).count() as u64),
        "before" => Ok(vcp_offsets().filter(|o| o.is_some_and(|o| o < 0)).count() as u64),
        "bytes_added" => report
            .pointer("/vtables/bytes_added")
            .and_then(Value::as_u64)
            .ok_or_else(|| "report: vtables.bytes_added missing".to_string()),
        "open_type_ids" => Ok(wpd_tests::array(report, "open_type_ids").len() as u64),
        _ => counter(report, key),
    }
}

fn check_expect(e: &Expect, report: &Value, remarks: &[Remark]) -> Check {
    let ok = match e {
        Expect::Count { key, op, rhs } => {
            let v = count(report, key)?;
            let n = match rhs {
                Rhs::Num(n) => *n,
                Rhs::Counter(k) => count(report, k)?,
            };
            let ok = match op.as_str() {
                "==" => v == n,
                ">=" => v >= n,
                "<=" => v <= n,
                ">" => v > n,
                _ => v < n,
            };
            if !ok {
                return Err(format!("{key} is {v}, the bound is {n}"));
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
        Expect::Open(s) => wpd_tests::array(report, "open_type_ids")
            .iter()
            .any(|o| str_field(o, "type_id").contains(s.as_str()) || str_field(o, "reason").contains(s.as_str())),
        Expect::Remark(s) => remarks.iter().any(|r| r.line.contains(s.as_str())),
        Expect::NoRemark(s) => !remarks.iter().any(|r| r.line.contains(s.as_str())),
    };
    if ok { Ok(()) } else { Err("not satisfied".into()) }
}

fn check_expectations(lines: &[Line], link: LinkKind<'_>, report: &Value, remarks: &[Remark]) -> Check {
    let mut errs = Vec::new();
    for l in lines {
        if l.scope.applies(link)
            && let Err(e) = check_expect(&l.expect, report, remarks)
        {
            errs.push(format!("expectation `{}`: {e}", l.text));
        }
    }
    if errs.is_empty() { Ok(()) } else { Err(errs.join("\n")) }
}

// ---------------------------------------------------------------------------
// Building

/// Flags of native (non-LTO) compiles: the base flags without LTO.
fn native_flags() -> impl Iterator<Item = &'static &'static str> {
    BASE_FLAGS.iter().filter(|f| !f.starts_with("-flto") && !f.starts_with("-fwhole-program"))
}

/// Builds a native shared library (`-fPIC -shared`, no LTO) into `dir`.
fn build_native_lib(fx: &Fixture, lib: &Lib, dir: &Path) -> Check<PathBuf> {
    mkdir(dir)?;
    let so = dir.join(&lib.file);
    run(Command::new(CLANGXX)
        .current_dir(&fx.dir)
        .args(native_flags())
        .args(&fx.flags)
        .args(["-fPIC", "-shared"])
        .args(&lib.sources)
        .arg("-o")
        .arg(&so))?;
    Ok(so)
}

/// A compiled fixture: the LTO link's inputs, and for `output-shared`
/// fixtures the native objects of the program that loads the library.
struct Build {
    built: Built,
    main_objects: Vec<PathBuf>,
}

/// Compiles the fixture into `dir` (`extra` flags for the bitcode): bitcode
/// objects (and archive) as `compile` does, plus native objects for the
/// `native` sources, which come first, and the `shared` library (by
/// absolute path, so the program finds it). For `output-shared` fixtures
/// the library's sources become `-fPIC` bitcode and the others the native
/// main program.
fn build_fixture(fx: &Fixture, cfg: &Config, dir: &Path, extra: &[&str]) -> Check<Build> {
    let skip = cfg.non_bitcode();
    let mut bitcode = fx.clone();
    bitcode.sources.retain(|s| !skip.contains(&s));
    let mut main_sources = Vec::new();
    let mut extra = extra.to_vec();
    if let Some(o) = &cfg.output_shared {
        main_sources = bitcode.sources.iter().filter(|s| !o.sources.contains(s)).cloned().collect();
        bitcode.sources = o.sources.clone();
        extra.push("-fPIC");
    }
    let mut built = compile(&bitcode, dir, &extra)?;
    let native_dir = dir.join("native");
    let mut main_objects = Vec::new();
    for (i, src) in cfg.native.iter().chain(&main_sources).enumerate() {
        mkdir(&native_dir)?;
        let obj = native_dir.join(wpd_tests::object_name(src));
        run(Command::new(CLANGXX)
            .current_dir(&fx.dir)
            .args(native_flags())
            .args(&fx.flags)
            .arg("-c")
            .arg(src)
            .arg("-o")
            .arg(&obj))?;
        built.objects.push(obj.clone());
        if i < cfg.native.len() {
            built.inputs.insert(i, obj);
        } else {
            main_objects.push(obj);
        }
    }
    if let Some(lib) = &cfg.shared {
        built.inputs.push(build_native_lib(fx, lib, dir)?);
    }
    Ok(Build { built, main_objects })
}

/// The `-O0` reference: every source in one program, except a `plugin`,
/// which is built beside it (the program loads it at run time).
fn reference(fx: &Fixture, cfg: &Config, dir: &Path) -> Check<RunResult> {
    let mut fx = fx.clone();
    if let Some(p) = &cfg.plugin {
        build_native_lib(&fx, p, dir)?;
        fx.sources.retain(|s| !p.sources.contains(s));
    }
    reference_run(&fx, dir)
}

// ---------------------------------------------------------------------------
// One link

/// Where a fixture's links go and what they produce.
struct Target<'a> {
    /// Outputs are written and programs run here (a `plugin` lies here).
    dir: &'a Path,
    /// `output-shared` fixtures: the link makes a shared library, and these
    /// native objects linked with it make the program.
    shared_main: Option<&'a [PathBuf]>,
}

impl Target<'_> {
    /// The output of link `label` (an executable or a shared library).
    fn output(&self, label: &str) -> PathBuf {
        match self.shared_main {
            Some(_) => self.dir.join(format!("lib{label}.so")),
            None => self.dir.join(label),
        }
    }

    /// Extra driver flags for the kind of output.
    fn output_flags(&self) -> &'static [&'static str] {
        if self.shared_main.is_some() { &["-shared", "-fPIC"] } else { &[] }
    }

    /// Runs the program of link `label`: for a shared library, first links
    /// the native main objects with it.
    fn run(&self, label: &str) -> Check<RunResult> {
        let exe = match self.shared_main {
            None => self.dir.join(label),
            Some(objs) => {
                let exe = self.dir.join(format!("{label}.main"));
                run(Command::new(CLANGXX)
                    .current_dir(self.dir)
                    .args(objs)
                    .arg(self.output(label))
                    .arg(format!("-Wl,-rpath,{}", self.dir.display()))
                    .arg("-o")
                    .arg(&exe))?;
                exe
            }
        };
        run_program(&exe, self.dir)
    }
}

/// A successful, checked wpd-ld link.
struct WpdLink {
    report: Value,
    remarks: Vec<Remark>,
    /// The program's run (`None`: not run).
    run: Option<RunResult>,
}

impl WpdLink {
    /// Remarks of calls rewritten unguarded (not speculative).
    fn devirtualized(&self) -> Vec<Remark> {
        self.remarks.iter().filter(|r| r.kind != SPECULATIVE).cloned().collect()
    }
}

fn mode(wpv: bool) -> &'static str {
    if wpv { "wpv" } else { "nowpv" }
}

/// Links `inputs` through wpd-ld into `t` (report + remarks on), checks the
/// report, the remarks, the temporary directory, and runs the program when
/// `run_it`.
fn wpd_link(t: &Target, label: &str, inputs: &[OsString], wpv: bool, extra: &[String], run_it: bool) -> Check<WpdLink> {
    let out = t.output(label);
    let report_path = t.dir.join(format!("{label}.report.json"));
    let tmpdir = t.dir.join(format!("{label}.tmp"));
    let mut args = vec![format!("-Wl,--wpd-report={}", report_path.display()), "-Wl,--wpd-remarks".to_string()];
    args.extend(t.output_flags().iter().map(|s| s.to_string()));
    args.extend(extra.iter().cloned());
    let mut cmd = wpd_ld_command(t.dir, inputs, &out, wpv, &args, &tmpdir)?;
    let shown = show_cmd(&cmd);
    let o = link(&mut cmd, &out)?;
    expect_empty_dir(&tmpdir, &format!("after `{shown}`"))?;
    let stderr = String::from_utf8_lossy(&o.stderr);
    let (remarks, other) = split_stderr(&stderr);
    let suspicious: Vec<&String> = other
        .iter()
        .filter(|l| {
            let l = l.to_ascii_lowercase();
            l.contains("error") || l.contains("panick") || l.contains("devirtualized") || l.contains("speculative")
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
    // One remark per rewritten call, of the matching kind.
    for (kinds, key) in [
        (&["single-impl"][..], "single_impl"),
        (&["uniform-ret-val"], "uniform_ret_val"),
        (&["unique-ret-val"], "unique_ret_val"),
        (&["virtual-const-prop", "virtual-const-prop-1-bit"], "virtual_const_prop"),
        (&[SPECULATIVE], "speculative"),
    ] {
        let n = remarks.iter().filter(|r| kinds.contains(&r.kind.as_str())).count() as u64;
        let c = counter(&report, key)?;
        if n != c {
            return Err(format!("{n} `{}` remarks but call_sites.{key} is {c} ({label})", kinds.join("`/`")));
        }
    }
    let run = if run_it { Some(t.run(label)?) } else { None };
    Ok(WpdLink { report, remarks, run })
}

/// lld's own ThinLTO link of the same inputs into `t`: its remarks (one per
/// call site) and its program's run.
fn llvm_link(
    t: &Target,
    label: &str,
    inputs: &[OsString],
    wpv: bool,
    extra: &[&str],
) -> Check<(Vec<Remark>, RunResult)> {
    let out = t.output(label);
    let mut flags: Vec<&str> = t.output_flags().to_vec();
    flags.extend(extra);
    let mut cmd = llvm_command(t.dir, inputs, &out, wpv, &flags);
    let o = link(&mut cmd, &out)?;
    Ok((llvm_remarks(&o), t.run(label)?))
}

// ---------------------------------------------------------------------------
// Tests

/// Compile, -O0 reference, wpd-ld with and without whole-program
/// visibility, expectations, LLVM parity; the variants; the unsplit build.
fn fixture_test(fx: &Fixture) -> Check {
    let cfg = load_config(fx)?;
    let expect = load_expect(fx, &cfg)?;
    let tmp = temp_dir(&fx.name)?;
    let build = tmp.path().join("build");
    let b = build_fixture(fx, &cfg, &build, &[])?;
    if let Some(p) = &cfg.plugin {
        build_native_lib(fx, p, &build)?;
    }
    let reference = reference(fx, &cfg, &tmp.path().join("ref"))?;
    let t = Target { dir: &build, shared_main: cfg.output_shared.as_ref().map(|_| b.main_objects.as_slice()) };
    let inputs = positional_inputs(&b.built);
    let llvm_extra = llvm_flags(&cfg);
    let mut failures = Vec::new();
    let mut summary = format!("{}:", fx.name);
    let mut split_counts = None;
    for &wpv in cfg.modes() {
        let m = mode(wpv);
        let ours = match wpd_link(&t, &format!("wpd-{m}"), &inputs, wpv, &cfg.wpd_flags, true) {
            Ok(l) => l,
            Err(e) => {
                failures.push(format!("[{m}] {e}"));
                continue;
            }
        };
        check_run(&format!("[{m}] wpd-ld"), &reference, &ours, &mut failures);
        if let Err(e) = check_expectations(&expect, LinkKind::Main(wpv), &ours.report, &ours.remarks) {
            failures.push(format!("[{m}] {e}"));
        }
        if wpv == cfg.modes()[0] {
            split_counts = ours.report.get("call_sites").cloned();
        }
        match llvm_check(&t, &format!("llvm-{m}"), &inputs, wpv, &ours, &reference, &cfg, &llvm_extra) {
            Ok(llvm) => summary.push_str(&format!(" {m}: wpd {} llvm {llvm};", devirtualized_counts(&ours.report))),
            Err(e) => failures.push(format!("[{m}] {e}")),
        }
        // Libraries also go through `-L<dir> -l<name>`.
        if wpv == cfg.modes()[0]
            && let Some(lib_inputs) = library_inputs(&b.built)
        {
            match wpd_link(&t, "wpd-lib", &lib_inputs, wpv, &cfg.wpd_flags, true) {
                Ok(l) => {
                    check_run("[-l] wpd-ld", &reference, &l, &mut failures);
                    let (a, b) = (l.report.get("call_sites"), ours.report.get("call_sites"));
                    if a != b {
                        failures.push(format!("[-l] call_sites {a:?}, positional inputs gave {b:?}"));
                    }
                    if let Err(e) = check_expectations(&expect, LinkKind::Main(wpv), &l.report, &l.remarks) {
                        failures.push(format!("[-l] {e}"));
                    }
                }
                Err(e) => failures.push(format!("[-l] {e}")),
            }
        }
    }
    for v in &cfg.variants {
        let label = format!("wpd-variant-{}", v.name);
        let flags: Vec<String> = cfg.wpd_flags.iter().chain(&v.flags).cloned().collect();
        match wpd_link(&t, &label, &inputs, v.wpv, &flags, v.run) {
            Ok(l) => {
                check_run(&format!("[{}] wpd-ld", v.name), &reference, &l, &mut failures);
                if let Err(e) = check_expectations(&expect, LinkKind::Variant(&v.name), &l.report, &l.remarks) {
                    failures.push(format!("[{}] {e}", v.name));
                }
            }
            Err(e) => failures.push(format!("[{}] {e}", v.name)),
        }
    }
    if cfg.unsplit_variant
        && let Err(e) = unsplit_test(fx, &cfg, &t, &expect, &reference, split_counts.as_ref(), &llvm_extra)
    {
        failures.push(e);
    }
    if verbose() {
        eprintln!("{summary}");
    }
    if failures.is_empty() { Ok(()) } else { Err(failures.join("\n\n")) }
}

/// The same fixture built with `-fno-split-lto-unit`: the programs must
/// agree with `-O0`, LLVM must still be the floor, and (unless the fixture
/// has a `split-differs` note) the expectations hold and the counts equal
/// the split build's with whole-program visibility (without, for
/// `nowpv-only` fixtures).
fn unsplit_test(
    fx: &Fixture,
    cfg: &Config,
    t: &Target,
    expect: &[Line],
    reference: &RunResult,
    split_counts: Option<&Value>,
    llvm_extra: &[&str],
) -> Check {
    let b = build_fixture(fx, cfg, &t.dir.join("nosplit"), &["-fno-split-lto-unit"])?;
    let t = Target { dir: t.dir, shared_main: cfg.output_shared.as_ref().map(|_| b.main_objects.as_slice()) };
    let inputs = positional_inputs(&b.built);
    let mut failures = Vec::new();
    for &wpv in cfg.modes() {
        let m = format!("nosplit-{}", mode(wpv));
        let ours = match wpd_link(&t, &format!("wpd-{m}"), &inputs, wpv, &cfg.wpd_flags, true) {
            Ok(l) => l,
            Err(e) => {
                failures.push(format!("[{m}] {e}"));
                continue;
            }
        };
        check_run(&format!("[{m}] wpd-ld"), reference, &ours, &mut failures);
        if !cfg.split_differs {
            if let Err(e) = check_expectations(expect, LinkKind::Main(wpv), &ours.report, &ours.remarks) {
                failures.push(format!("[{m}] {e}"));
            }
            let counts = ours.report.get("call_sites");
            if wpv == cfg.modes()[0] && counts != split_counts {
                failures.push(format!(
                    "[{m}] call_sites differ from the split build's (add a `split-differs` note if that is right):\n  split:   {}\n  unsplit: {}",
                    split_counts.map_or("-".into(), Value::to_string),
                    counts.map_or("-".into(), Value::to_string)
                ));
            }
        }
        let mut cfg = cfg.clone();
        cfg.llvm_validated = false; // LLVM does fewer kinds on unsplit objects
        if let Err(e) = llvm_check(&t, &format!("llvm-{m}"), &inputs, wpv, &ours, reference, &cfg, llvm_extra) {
            failures.push(format!("[{m}] {e}"));
        }
    }
    if failures.is_empty() { Ok(()) } else { Err(failures.join("\n\n")) }
}

/// Requires a link's program (when it ran) to agree with `-O0`.
fn check_run(what: &str, reference: &RunResult, l: &WpdLink, failures: &mut Vec<String>) {
    if let Some(r) = &l.run
        && let Err(e) = same_run(what, reference, r)
    {
        failures.push(e);
    }
}

/// Flags of the LLVM links: lld validates vtables against native code when
/// there is some; then the fixture's `llvm-flags`.
fn llvm_flags(cfg: &Config) -> Vec<&str> {
    let mut v = Vec::new();
    if cfg.has_native() {
        v.push("-Wl,--lto-validate-all-vtables-have-type-infos");
    }
    v.extend(cfg.llvm_flags.iter().map(String::as_str));
    v
}

/// `single-impl/uniform/unique/vcp/speculative` counts of a report.
fn devirtualized_counts(report: &Value) -> String {
    ["single_impl", "uniform_ret_val", "unique_ret_val", "virtual_const_prop", "speculative"]
        .iter()
        .map(|k| counter(report, k).unwrap_or(0).to_string())
        .collect::<Vec<_>>()
        .join("/")
}

/// Remark kinds of LLVM counted against each `call_sites` counter.
const KINDS: &[(&[&str], &str)] = &[
    (&["single-impl"], "single_impl"),
    (&["uniform-ret-val"], "uniform_ret_val"),
    (&["unique-ret-val"], "unique_ret_val"),
    (&["virtual-const-prop", "virtual-const-prop-1-bit"], "virtual_const_prop"),
];

/// Links the same objects with lld's ThinLTO. Unless the fixture says LLVM
/// is unsound on it: LLVM's program must agree with `-O0`, and wpd must
/// devirtualize at least the calls LLVM does (per kind by count, every
/// location). With `llvm-validated`: every call wpd rewrites unguarded must
/// be devirtualized by LLVM too (lld validating vtables against native
/// code), so wpd is never less safe than validated LLVM. Returns LLVM's
/// counts per kind.
fn llvm_check(
    t: &Target,
    label: &str,
    inputs: &[OsString],
    wpv: bool,
    ours: &WpdLink,
    reference: &RunResult,
    cfg: &Config,
    extra: &[&str],
) -> Check<String> {
    let (theirs, llvm_run) = llvm_link(t, label, inputs, wpv, extra)?;
    let per_kind: Vec<u64> = KINDS
        .iter()
        .map(|(kinds, _)| theirs.iter().filter(|r| kinds.contains(&r.kind.as_str())).count() as u64)
        .collect();
    let shown = per_kind.iter().map(u64::to_string).collect::<Vec<_>>().join("/");
    let ours_dv = ours.devirtualized();
    let mut errs = Vec::new();
    if cfg.llvm_validated {
        let extra = missing_locations(&locations(&ours_dv, None), &locations(&theirs, None));
        if !extra.is_empty() {
            errs.push(format!("wpd devirtualizes calls that validated LLVM leaves alone: {}", extra.join(", ")));
        }
    }
    if cfg.llvm_unsound {
        if verbose()
            && let Err(e) = same_run(&format!("lld ThinLTO ({label})"), reference, &llvm_run)
        {
            eprintln!("note: llvm-unsound fixture: {e}");
        }
    } else {
        if let Err(e) = same_run(&format!("lld ThinLTO ({label})"), reference, &llvm_run) {
            errs.push(e);
        }
        for ((_, key), &theirs_n) in KINDS.iter().zip(&per_kind) {
            let n = counter(&ours.report, key)?;
            if n < theirs_n {
                errs.push(format!("LLVM devirtualizes {theirs_n} call sites as {key}, wpd only {n}"));
            }
        }
        let missing = missing_locations(&locations(&theirs, Some("single-impl")), &locations(&ours_dv, None));
        if !missing.is_empty() {
            errs.push(format!("calls LLVM devirtualizes (single-impl) that wpd does not: {}", missing.join(", ")));
        }
        // The other kinds (return-value optimizations) are LLVM's floor too;
        // wpd may resolve a call differently, but must resolve it.
        let other = missing_locations(&locations(&theirs, None), &locations(&ours_dv, None));
        if !other.is_empty() && missing.is_empty() {
            errs.push(format!("calls LLVM devirtualizes otherwise that wpd does not: {}", other.join(", ")));
        }
    }
    if errs.is_empty() {
        Ok(shown)
    } else {
        Err(format!(
            "LLVM comparison ({label}): {}\nLLVM remarks:\n{}\nwpd remarks:\n{}",
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
    let cfg = load_config(fx)?;
    let expect = load_expect(fx, &cfg)?;
    let tmp = temp_dir(&format!("{}-{short}", fx.name))?;
    let build = tmp.path().join("build");
    let b = build_fixture(fx, &cfg, &build, &[])?;
    let reference = reference(fx, &cfg, &tmp.path().join("ref"))?;
    let t = Target { dir: &build, shared_main: None };
    let inputs = library_inputs(&b.built).unwrap_or_else(|| positional_inputs(&b.built));
    let mut flags = cfg.wpd_flags.clone();
    flags.push(format!("-Wl,--wpd-linker={linker}"));
    let l = wpd_link(&t, &format!("wpd-{short}"), &inputs, true, &flags, true)?;
    if let Some(r) = &l.run {
        same_run(&format!("wpd-ld --wpd-linker={linker}"), &reference, r)?;
    }
    check_expectations(&expect, LinkKind::Main(true), &l.report, &l.remarks)?;
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
    let cfg = load_config(fx)?;
    let b = build_fixture(fx, &cfg, &build, &[])?;
    let t = Target { dir: &build, shared_main: None };
    let inputs = positional_inputs(&b.built);
    let mut outputs = Vec::new();
    for jobs in [1, 2] {
        let label = format!("jobs{jobs}");
        let mut flags = cfg.wpd_flags.clone();
        flags.push(format!("-Wl,--wpd-jobs={jobs}"));
        let l = wpd_link(&t, &label, &inputs, true, &flags, false)?;
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
