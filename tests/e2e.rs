//! End-to-end harness: every `fixtures/e2e/<name>/` program is compiled with
//! clang++-19 (ThinLTO bitcode), linked through `wpd-ld` with and without
//! whole-program visibility, run, and compared with a `-O0` build of the
//! same sources. Each link's report is checked against the fixture's
//! `expect` file and the report schema's invariants, and the same objects
//! are linked by lld's own ThinLTO: every call LLVM devirtualizes must be
//! devirtualized by wpd too (per kind by count, every kind by source
//! location), and LLVM's program must agree with `-O0` as well.
//!
//! The real linker is the oracle of what a link loads: for every wpd-ld
//! link below, the report's `link_model.loaded` (wpd-ld's resolution: the
//! objects, archive members and shared libraries the link loads, in order)
//! must equal what the real linker loads in its own link of the original
//! inputs (`link::oracle`): lld's `--trace` (of the LLVM comparison link
//! when it has the same inputs and loading flags, else of one more link),
//! GNU ld's `-t -t` and gold's `--trace` plus the LLVMgold plugin's list of
//! claimed bitcode for `--wpd-linker` links. A difference, or a report
//! without `link_model`, fails the test with both lists.
//!
//! Every fixture whose flags do not say `-fno-split-lto-unit` is built
//! unsplit too: same output, same counts (unless a `split-differs` note
//! says why not). Fixture files select more: the link line's layout
//! (`link`: objects, bitcode/thin/native archives, shared libraries, linker
//! scripts and options such as groups, `--whole-archive`, `-u`, `-init`,
//! version scripts, in order; the `-O0` reference is linked the same way),
//! native objects (`native`), a native shared library in the link
//! (`shared`, also found via `-l`) or loaded with dlopen (`plugin`), a
//! shared library as the link's output (`output-shared`), extra wpd-ld
//! flags (`wpd-flags`), extra links with their own expectations
//! (`variant-<name>`), lld being unsound (`llvm-unsound`) or the safety
//! floor (`llvm-validated`), a Bazel-style link that may differ from -O0
//! as lld's does (`index-only-differs`); see fixtures/e2e/README.md.
//!
//! More tests: the real linker chosen with `--wpd-linker` (lld, GNU ld,
//! gold) is the one that linked and loads what wpd-ld's resolution says,
//! `--wpd-jobs=1`/`--wpd-jobs=2` give byte-identical binaries, and the
//! oracle finds a member left out, one added, two swapped and a wrong
//! flavor (`oracle_detects_differences`). `WPD_E2E_VERBOSE=1` prints the
//! devirtualization counts of every fixture and, at the end, the oracle's
//! totals (links checked, members and libraries compared, differences).

use libtest_mimic::{Arguments, Trial};
use serde_json::Value;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use wpd_tests::link::oracle::{self, Flavor, LinkView};
use wpd_tests::link::{
    CLOSED_SET, COUNTERS, Remark, RunResult, SPECULATIVE, check_report, counter, expect_empty_dir, library_args, link,
    llvm_command, llvm_remarks, locations, missing_locations, positional_inputs, read_report, reference_result,
    reference_run, run_program, same_run, split_stderr, wpd_ld_command,
};
use wpd_tests::{
    BASE_FLAGS, CLANGXX, Check, Fixture, LLVM_AR, compile, fixtures, mkdir, object_name, read, run, run_raw, show_cmd,
    temp_dir,
};

/// Real linkers for `--wpd-linker`, by short name.
const LINKERS: &[(&str, &str)] = &[("lld", "ld.lld-19"), ("bfd", "/usr/bin/ld.bfd"), ("gold", "/usr/bin/ld.gold")];
/// Fixtures linked with every linker (archive member selection, exception
/// tables, groups, thin archives).
const LINKER_FIXTURES: &[&str] = &["archive", "exceptions", "archive_group", "thin_archive", "dead_slots_extraction"];
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
            for fx in &all {
                let fx = fx.clone();
                trials.push(Trial::test(format!("plugin_{}", fx.name), move || plugin_test(&fx).map_err(Into::into)));
            }
            let fx = all.iter().find(|f| f.name == "archive").cloned();
            trials.push(Trial::test("oracle_detects_differences", move || {
                oracle_self_test(&fx.ok_or("no fixture archive")?).map_err(Into::into)
            }));
            for &name in JOBS_FIXTURES {
                let fx = all.iter().find(|f| f.name == name).cloned();
                trials.push(Trial::test(format!("jobs_1_and_2_are_byte_identical_{name}"), move || {
                    jobs_test(&fx.ok_or(format!("no fixture {name}"))?).map_err(Into::into)
                }));
            }
        }
        Err(e) => trials.push(Trial::test("fixtures", move || Err(e.into()))),
    }
    let conclusion = libtest_mimic::run(&args, trials);
    if verbose() {
        eprintln!("{}", ORACLE.summary());
    }
    conclusion.exit();
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

/// One item of a `link` file: what goes on the link line at that place.
#[derive(Debug, Clone)]
enum Item {
    /// `obj <source>...`: bitcode objects.
    Obj(Vec<String>),
    /// `native <source>...`: native objects (no LTO).
    Native(Vec<String>),
    /// `archive`, `thin-archive`, `native-archive lib<name>.a <source>...`:
    /// an archive of bitcode (or native) members, by path.
    Archive { file: String, thin: bool, native: bool, sources: Vec<String> },
    /// `shared lib<name>.so <source>...`: a native shared library, by path.
    Shared(Lib),
    /// `input <file>...`: fixture files (linker scripts) copied into the
    /// build folder and given by path.
    Input(Vec<String>),
    /// `file <file>...`: fixture files copied into the build folder only
    /// (named by flags, e.g. a version script).
    File(Vec<String>),
    /// A line of words starting with `-`: driver arguments as they are.
    Args(Vec<String>),
    /// `built <item>`: an `obj`, `native`, archive or `shared` item built
    /// but not put on the link line (a linker script or `-l` names it).
    Built(Box<Item>),
}

impl Item {
    /// The sources the item compiles.
    fn sources(&self) -> &[String] {
        match self {
            Item::Obj(s) | Item::Native(s) => s,
            Item::Archive { sources, .. } => sources,
            Item::Shared(l) => &l.sources,
            Item::Input(_) | Item::File(_) | Item::Args(_) => &[],
            Item::Built(i) => i.sources(),
        }
    }

    /// Whether it puts native code in the link.
    fn native(&self) -> bool {
        match self {
            Item::Built(i) => i.native(),
            _ => matches!(self, Item::Native(_) | Item::Shared(_) | Item::Archive { native: true, .. }),
        }
    }
}

/// Parses a fixture's `link` file (see fixtures/e2e/README.md).
fn load_layout(fx: &Fixture) -> Check<Option<Vec<Item>>> {
    let path = fx.dir.join("link");
    if !path.is_file() {
        return Ok(None);
    }
    let text = String::from_utf8(read(&path)?).map_err(|_| format!("{} is not UTF-8", path.display()))?;
    let mut items = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let t = raw.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let bad = |why: &str| format!("{}:{}: {why}: {t}", path.display(), i + 1);
        let mut words: Vec<String> = t.split_whitespace().map(str::to_string).collect();
        let built = words[0] == "built";
        if built {
            words.remove(0);
            if !words.first().is_some_and(|w| {
                ["obj", "native", "archive", "thin-archive", "native-archive", "shared"].contains(&w.as_str())
            }) {
                return Err(bad("`built` goes with obj, native, archive, thin-archive, native-archive or shared"));
            }
        }
        let (head, rest) = (words[0].as_str(), &words[1..]);
        let item = match head {
            _ if head.starts_with('-') => {
                if let Some(w) = words.iter().find(|w| !w.starts_with('-')) {
                    return Err(bad(&format!("`{w}` is not a driver argument (they start with `-`)")));
                }
                Item::Args(words.clone())
            }
            "obj" | "native" | "input" | "file" if rest.is_empty() => return Err(bad("nothing listed")),
            "obj" => Item::Obj(rest.to_vec()),
            "native" => Item::Native(rest.to_vec()),
            "input" => Item::Input(rest.to_vec()),
            "file" => Item::File(rest.to_vec()),
            "archive" | "thin-archive" | "native-archive" | "shared" => {
                let (file, sources) = rest.split_first().ok_or_else(|| bad("expected a file name and sources"))?;
                let suffix = if head == "shared" { ".so" } else { ".a" };
                if !file.starts_with("lib") || !file.ends_with(suffix) || file.contains('/') || sources.is_empty() {
                    return Err(bad(&format!("expected `{head} lib<name>{suffix} <source>...`")));
                }
                if head == "shared" {
                    Item::Shared(Lib { file: file.clone(), sources: sources.to_vec() })
                } else {
                    let (thin, native) = (head == "thin-archive", head == "native-archive");
                    Item::Archive { file: file.clone(), thin, native, sources: sources.to_vec() }
                }
            }
            _ => {
                return Err(bad(
                    "unknown item (obj, native, archive, thin-archive, native-archive, shared, input, file, built, or arguments starting with `-`)",
                ));
            }
        };
        for f in match &item {
            Item::Input(f) | Item::File(f) => f.as_slice(),
            _ => &[],
        } {
            if f.contains('/') || !fx.dir.join(f).is_file() {
                return Err(bad(&format!("`{f}` is not a file of the fixture")));
            }
        }
        items.push(if built { Item::Built(Box::new(item)) } else { item });
    }
    if items.is_empty() {
        return Err(format!("{}: empty link file", path.display()));
    }
    Ok(Some(items))
}

/// What a fixture directory says besides its sources and `flags` (see
/// fixtures/e2e/README.md).
#[derive(Debug, Clone)]
struct Config {
    /// The link line's layout (`link`).
    layout: Option<Vec<Item>>,
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
    /// `index-only-differs`: the Bazel-style link (clang's backends, then
    /// a final link of their objects in the bitcode's place) need not print
    /// what `-O0` prints; a difference is a note, as with lld's own.
    index_only_differs: bool,
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
        !self.native.is_empty() || self.shared.is_some() || self.layout.iter().flatten().any(Item::native)
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
        layout: load_layout(fx)?,
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
        index_only_differs: fx.dir.join("index-only-differs").is_file(),
        unsplit_variant: !fx.flags.iter().any(|f| f == "-fno-split-lto-unit"),
    };
    let mut seen: Vec<&String> = cfg.non_bitcode();
    if let Some(o) = &cfg.output_shared {
        seen.extend(&o.sources);
    }
    if let Some(layout) = &cfg.layout {
        if fx.archive.is_some() || !cfg.native.is_empty() || cfg.shared.is_some() {
            return Err(format!("{}: link does not combine with archive, native, shared", fx.dir.display()));
        }
        let listed: Vec<&String> = layout.iter().flat_map(Item::sources).collect();
        if let Some(o) = &cfg.output_shared {
            // The layout is the shared library's link.
            let mut a: Vec<&String> = listed.clone();
            let mut b: Vec<&String> = o.sources.iter().collect();
            a.sort();
            b.sort();
            if a != b {
                return Err(format!("{}: with output-shared, link lists exactly its sources", fx.dir.display()));
            }
        } else {
            seen.extend(listed);
            for s in &fx.sources {
                if !seen.contains(&s) {
                    return Err(format!("{}: {s} is in no item of link (nor plugin)", fx.dir.display()));
                }
            }
        }
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
    /// `closed S`: a decision dispatches calls over a closed set with a
    /// target containing S.
    Closed(String),
    /// `reason S`: some decision's reason contains S.
    Reason(String),
    /// `no-reason S`: no decision's reason, and no open type id's reason,
    /// contains S (a reason that must not be given, because it is not true).
    NoReason(String),
    /// `open S`: some `open_type_ids` entry's type id or reason contains S.
    Open(String),
    /// `remark S`: some remark line contains S.
    Remark(String),
    /// `no-remark S`: no remark line contains S.
    NoRemark(String),
    /// `stdout S`: the program's output (the `-O0` build's, which every
    /// build must equal) contains S.
    Stdout(String),
    /// `no-stdout S`: it does not.
    NoStdout(String),
}

/// Counts an expectation may use besides the `call_sites` counters:
/// `after`/`before`, constant-propagation argument tuples stored after /
/// before the vtables (`by_args[].byte_offset` positive / negative);
/// `bytes_added`, the report's `vtables.bytes_added`; `open_type_ids`, how
/// many type ids validation (or `--wpd-open`) opened; `outside_program`,
/// the report's `outside_program_call_sites`; `dead_slots` and
/// `dead_functions`, the report's `dead_slots.slots` and `.functions`.
const DERIVED: &[&str] =
    &["after", "before", "bytes_added", "open_type_ids", "outside_program", "dead_slots", "dead_functions"];

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
            "target" | "indirect" | "closed" | "reason" | "no-reason" | "open" | "remark" | "no-remark" | "stdout"
            | "no-stdout"
                if arg.is_empty() =>
            {
                return Err(bad("missing argument"));
            }
            "stdout" | "no-stdout" if scope != Scope::Both => {
                return Err(bad("stdout expectations hold for every build: no scope"));
            }
            "stdout" => Expect::Stdout(arg.into()),
            "no-stdout" => Expect::NoStdout(arg.into()),
            "target" => Expect::Target(arg.into()),
            "indirect" => Expect::Indirect(arg.into()),
            "closed" => Expect::Closed(arg.into()),
            "reason" => Expect::Reason(arg.into()),
            "no-reason" => Expect::NoReason(arg.into()),
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
        "dead_slots" | "dead_functions" => {
            let field = if key == "dead_slots" { "slots" } else { "functions" };
            report
                .pointer(&format!("/dead_slots/{field}"))
                .and_then(Value::as_u64)
                .ok_or_else(|| format!("report: dead_slots.{field} missing"))
        }
        "outside_program" => report
            .get("outside_program_call_sites")
            .and_then(Value::as_u64)
            .ok_or_else(|| "report: outside_program_call_sites missing".to_string()),
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
        Expect::Closed(s) => decisions(report).iter().any(|d| {
            d.get("devirtualized").and_then(Value::as_u64).is_some_and(|n| n > 0)
                && wpd_tests::array(d, "closed_set").iter().any(|c| str_field(c, "target").contains(s.as_str()))
        }),
        Expect::Reason(s) => decisions(report).iter().any(|d| str_field(d, "reason").contains(s.as_str())),
        Expect::NoReason(s) => {
            !decisions(report).iter().any(|d| str_field(d, "reason").contains(s.as_str()))
                && !wpd_tests::array(report, "open_type_ids")
                    .iter()
                    .any(|o| str_field(o, "reason").contains(s.as_str()))
        }
        Expect::Open(s) => wpd_tests::array(report, "open_type_ids")
            .iter()
            .any(|o| str_field(o, "type_id").contains(s.as_str()) || str_field(o, "reason").contains(s.as_str())),
        Expect::Remark(s) => remarks.iter().any(|r| r.line.contains(s.as_str())),
        Expect::NoRemark(s) => !remarks.iter().any(|r| r.line.contains(s.as_str())),
        // Checked once, on the -O0 build (check_stdout).
        Expect::Stdout(_) | Expect::NoStdout(_) => true,
    };
    if ok { Ok(()) } else { Err("not satisfied".into()) }
}

/// The `stdout`/`no-stdout` expectations, on the `-O0` build's output.
fn check_stdout(lines: &[Line], reference: &RunResult) -> Check {
    let mut errs = Vec::new();
    for l in lines {
        let ok = match &l.expect {
            Expect::Stdout(s) => reference.stdout.contains(s.as_str()),
            Expect::NoStdout(s) => !reference.stdout.contains(s.as_str()),
            _ => true,
        };
        if !ok {
            errs.push(format!("expectation `{}`: not satisfied by the -O0 build's output", l.text));
        }
    }
    if errs.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{}
-O0 output:
{}",
            errs.join("\n"),
            reference.stdout
        ))
    }
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

/// A compiled fixture: the LTO link's input arguments (positional paths,
/// or a `link` layout's arguments), the same with libraries as `-L -l`
/// (`None`: no library), and for `output-shared` fixtures the native
/// objects of the program that loads the library.
struct Build {
    args: Vec<OsString>,
    lib_args: Option<Vec<OsString>>,
    main_objects: Vec<PathBuf>,
}

/// Compiles the fixture into `dir` (`extra` flags for the bitcode): bitcode
/// objects (and archive) as `compile` does, plus native objects for the
/// `native` sources, which come first, and the `shared` library (by
/// absolute path, so the program finds it). A `link` layout is built as it
/// says instead. For `output-shared` fixtures the library's sources become
/// `-fPIC` bitcode and the others the native main program.
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
    let mut inputs = Vec::new();
    if let Some(layout) = &cfg.layout {
        inputs = build_layout(fx, layout, dir, Compile::Lto(&extra))?;
    } else {
        let built = compile(&bitcode, dir, &extra)?;
        inputs.extend(positional_inputs(&built));
    }
    let native_dir = dir.join("native");
    let mut main_objects = Vec::new();
    for (i, src) in cfg.native.iter().chain(&main_sources).enumerate() {
        let obj = compile_one(fx, src, &native_dir, Compile::Native)?;
        if i < cfg.native.len() {
            inputs.insert(i, obj.into_os_string());
        } else {
            main_objects.push(obj);
        }
    }
    if let Some(lib) = &cfg.shared {
        inputs.push(build_native_lib(fx, lib, dir)?.into_os_string());
    }
    let lib_args = library_args(&inputs);
    Ok(Build { args: inputs, lib_args, main_objects })
}

/// How a source is compiled.
#[derive(Debug, Clone, Copy)]
enum Compile<'a> {
    /// ThinLTO bitcode (the base flags, the fixture's, these).
    Lto(&'a [&'a str]),
    /// Native, optimized (the base flags without LTO).
    Native,
    /// Native `-O0` (the reference build; these extra flags).
    Reference(&'a [&'a str]),
}

/// Compiles `src` of the fixture into `dir/<stem>.o`.
fn compile_one(fx: &Fixture, src: &str, dir: &Path, how: Compile) -> Check<PathBuf> {
    mkdir(dir)?;
    let obj = dir.join(object_name(src));
    let mut cmd = Command::new(CLANGXX);
    cmd.current_dir(&fx.dir);
    match how {
        Compile::Lto(extra) => cmd.args(BASE_FLAGS).args(&fx.flags).args(extra),
        Compile::Native => cmd.args(native_flags()).args(&fx.flags),
        Compile::Reference(extra) => cmd.arg("-O0").args(&fx.flags).args(extra),
    };
    run(cmd.arg("-c").arg(src).arg("-o").arg(&obj))?;
    Ok(obj)
}

/// Builds a `link` layout into `dir` and returns the link line's input
/// arguments: objects, archives and shared libraries by absolute path,
/// `input` files by absolute path, arguments as they are (`file` and
/// `input` files are copied into `dir`, where the links run). `how` says
/// how bitcode items are compiled (native items are always native; in the
/// `-O0` reference every item is, built the same way).
fn build_layout(fx: &Fixture, layout: &[Item], dir: &Path, how: Compile) -> Check<Vec<OsString>> {
    mkdir(dir)?;
    let native = match how {
        Compile::Lto(_) | Compile::Native => Compile::Native,
        r @ Compile::Reference(_) => r,
    };
    let mut args = Vec::new();
    for item in layout {
        if let Item::Built(inner) = item {
            build_layout(fx, std::slice::from_ref(inner), dir, how)?;
            continue;
        }
        match item {
            Item::Obj(sources) | Item::Native(sources) => {
                let (sub, how) = if matches!(item, Item::Obj(_)) { ("", how) } else { ("native", native) };
                for src in sources {
                    args.push(compile_one(fx, src, &dir.join(sub), how)?.into_os_string());
                }
            }
            Item::Archive { file, thin, native: n, sources } => {
                let members = format!("{}.members", file.trim_end_matches(".a"));
                let how = if *n { native } else { how };
                let mut names = Vec::new();
                for src in sources {
                    compile_one(fx, src, &dir.join(&members), how)?;
                    names.push(format!("{members}/{}", object_name(src)));
                }
                let lib = dir.join(file);
                // Run in `dir` with relative member paths: a thin archive
                // stores them relative to itself.
                run(Command::new(LLVM_AR)
                    .current_dir(dir)
                    .arg(if *thin { "rcsT" } else { "rcs" })
                    .arg(file)
                    .args(&names))?;
                args.push(lib.into_os_string());
            }
            Item::Shared(lib) => args.push(build_native_lib(fx, lib, dir)?.into_os_string()),
            Item::Input(files) | Item::File(files) => {
                for f in files {
                    let to = dir.join(f);
                    std::fs::copy(fx.dir.join(f), &to)
                        .map_err(|e| format!("cannot copy {f} to {}: {e}", dir.display()))?;
                    if matches!(item, Item::Input(_)) {
                        args.push(to.into_os_string());
                    }
                }
            }
            Item::Args(words) => args.extend(words.iter().map(OsString::from)),
            Item::Built(_) => unreachable!("handled above"),
        }
    }
    Ok(args)
}

/// The `-O0` reference: every source in one program, except a `plugin`,
/// which is built beside it (the program loads it at run time). A `link`
/// layout (without `output-shared`) is built at `-O0` and linked as it
/// says, so archive members, groups and options behave as in the LTO
/// links.
fn reference(fx: &Fixture, cfg: &Config, dir: &Path) -> Check<RunResult> {
    let mut fx = fx.clone();
    if let Some(p) = &cfg.plugin {
        build_native_lib(&fx, p, dir)?;
        fx.sources.retain(|s| !p.sources.contains(s));
    }
    match &cfg.layout {
        Some(layout) if cfg.output_shared.is_none() => {
            let args = build_layout(&fx, layout, dir, Compile::Reference(&[]))?;
            let exe = dir.join("ref");
            run(Command::new(CLANGXX).current_dir(dir).arg("-O0").args(&fx.flags).args(&args).arg("-o").arg(&exe))?;
            reference_result(&fx, run_program(&exe, dir)?)
        }
        _ => reference_run(&fx, dir),
    }
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

    /// The remarks of the kinds LLVM also has (not speculation, not
    /// closed-set dispatch).
    fn devirtualized_as_llvm_can(&self) -> Vec<Remark> {
        self.remarks.iter().filter(|r| r.kind != SPECULATIVE && r.kind != CLOSED_SET).cloned().collect()
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
        (&[CLOSED_SET], "closed_set"),
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

/// lld's own ThinLTO link of the same inputs into `t` (with `--trace`):
/// its remarks (one per call site), its program's run, and what lld loaded.
fn llvm_link(
    t: &Target,
    label: &str,
    inputs: &[OsString],
    wpv: bool,
    extra: &[&str],
) -> Check<(Vec<Remark>, RunResult, LinkView)> {
    let out = t.output(label);
    let mut flags: Vec<&str> = t.output_flags().to_vec();
    flags.extend(extra);
    flags.push("-Wl,--trace");
    let mut cmd = llvm_command(t.dir, inputs, &out, wpv, &flags);
    let o = link(&mut cmd, &out)?;
    let view = oracle::parse_lld_trace(t.dir, &String::from_utf8_lossy(&o.stdout));
    Ok((llvm_remarks(&o), t.run(label)?, view))
}

// ---------------------------------------------------------------------------
// The real linker as the oracle of what a link loads

/// The oracle's totals over the run (printed with `WPD_E2E_VERBOSE=1`).
struct OracleStats {
    /// wpd-ld links whose report was checked against a real linker.
    links: AtomicUsize,
    /// ... of which by lld, GNU ld, gold.
    by_flavor: [AtomicUsize; 3],
    /// ... of which had no `link_model` to compare.
    no_model: AtomicUsize,
    /// ... of which differed from the real linker.
    differences: AtomicUsize,
    /// Real-linker links made only for the oracle (the others are the
    /// LLVM comparison links).
    extra_links: AtomicUsize,
    /// Entries compared (links with a `link_model` and no difference).
    objects: AtomicUsize,
    members: AtomicUsize,
    libraries: AtomicUsize,
    /// Entries the real linkers listed, over every checked link.
    seen_members: AtomicUsize,
    seen_libraries: AtomicUsize,
}

static ORACLE: OracleStats = OracleStats {
    links: AtomicUsize::new(0),
    by_flavor: [AtomicUsize::new(0), AtomicUsize::new(0), AtomicUsize::new(0)],
    no_model: AtomicUsize::new(0),
    differences: AtomicUsize::new(0),
    extra_links: AtomicUsize::new(0),
    objects: AtomicUsize::new(0),
    members: AtomicUsize::new(0),
    libraries: AtomicUsize::new(0),
    seen_members: AtomicUsize::new(0),
    seen_libraries: AtomicUsize::new(0),
};

fn add(n: &AtomicUsize, v: usize) {
    n.fetch_add(v, Ordering::Relaxed);
}

impl OracleStats {
    fn summary(&self) -> String {
        let g = |n: &AtomicUsize| n.load(Ordering::Relaxed);
        let links = g(&self.links);
        format!(
            "oracle: {links} wpd-ld links checked against the real linker (lld {}, GNU ld {}, gold {}; {} extra oracle links): {} compared ({} archive members, {} shared libraries, {} objects), {} differences, {} without link_model; the real linkers listed {} members and {} shared libraries",
            g(&self.by_flavor[0]),
            g(&self.by_flavor[1]),
            g(&self.by_flavor[2]),
            g(&self.extra_links),
            links - g(&self.no_model) - g(&self.differences),
            g(&self.members),
            g(&self.libraries),
            g(&self.objects),
            g(&self.differences),
            g(&self.no_model),
            g(&self.seen_members),
            g(&self.seen_libraries),
        )
    }
}

/// The real linker's views of one test's links, kept by what decides what
/// a link loads: the linker, the output kind, the link flags that can
/// change loading (not wpd-ld's or LTO options) and the inputs.
struct Oracle {
    dir: PathBuf,
    output_flags: &'static [&'static str],
    views: Vec<(Flavor, Vec<OsString>, LinkView)>,
    /// Links checked by this test, and how many differed or had no model.
    checked: usize,
    failed: usize,
}

impl Oracle {
    fn new(t: &Target) -> Oracle {
        Oracle { dir: t.dir.to_path_buf(), output_flags: t.output_flags(), views: Vec::new(), checked: 0, failed: 0 }
    }

    /// The arguments of a real-linker link equivalent to a link of `inputs`
    /// with `flags`, as far as loading goes.
    fn args<S: AsRef<str>>(&self, inputs: &[OsString], flags: &[S]) -> Vec<OsString> {
        let mut v: Vec<OsString> = self.output_flags.iter().map(OsString::from).collect();
        v.extend(flags.iter().map(AsRef::as_ref).filter(|f| oracle::affects_loading(f)).map(OsString::from));
        v.extend(inputs.iter().cloned());
        v
    }

    /// Records what lld loaded in a link of `inputs` with `flags` (an LLVM
    /// comparison link).
    fn add(&mut self, inputs: &[OsString], flags: &[&str], view: LinkView) {
        let args = self.args(inputs, flags);
        if !self.views.iter().any(|(f, a, _)| *f == view.flavor && *a == args) {
            self.views.push((view.flavor, args, view));
        }
    }

    /// Compares what wpd-ld's report says its link of `inputs` with `flags`
    /// (wpd-ld flags included: `--wpd-linker` picks the real linker)
    /// loaded with what that real linker loads in the same link, linking
    /// once more (`<label>.oracle`) when no earlier link shows it.
    fn check(&mut self, label: &str, inputs: &[OsString], flags: &[String], report: &Value) -> Check {
        let flavor = Flavor::of_flags(flags);
        let args = self.args(inputs, flags);
        let theirs = match self.views.iter().find(|(f, a, _)| *f == flavor && *a == args) {
            Some((_, _, v)) => v.clone(),
            None => {
                let out = self.dir.join(format!("{label}.oracle"));
                let v = oracle::oracle_link(flavor, &self.dir, &args, &out, false)?;
                add(&ORACLE.extra_links, 1);
                self.views.push((flavor, args, v.clone()));
                v
            }
        };
        self.checked += 1;
        add(&ORACLE.links, 1);
        add(&ORACLE.by_flavor[flavor as usize], 1);
        let (_, m, l) = theirs.counts();
        add(&ORACLE.seen_members, m);
        add(&ORACLE.seen_libraries, l);
        let ours = match oracle::from_report(report, &self.dir) {
            Ok(v) => v,
            Err(e) => {
                self.failed += 1;
                add(&ORACLE.no_model, 1);
                // The real linker's list once per test, its size after.
                let listing = if self.failed == 1 { format!(":\n{}", theirs.listing()) } else { String::new() };
                return Err(format!("oracle: {e}; {} loaded {}{listing}", flavor.linker(), oracle::describe(&theirs)));
            }
        };
        match oracle::compare(&ours, &theirs) {
            Ok(c) => {
                add(&ORACLE.objects, c.objects);
                add(&ORACLE.members, c.members);
                add(&ORACLE.libraries, c.libraries);
                Ok(())
            }
            Err(e) => {
                self.failed += 1;
                add(&ORACLE.differences, 1);
                Err(format!("oracle: {e}"))
            }
        }
    }

    /// `oracle: 5 links, 2 failed` for the verbose summary.
    fn summary(&self) -> String {
        format!(" oracle: {} links, {} failed", self.checked, self.failed)
    }
}

// ---------------------------------------------------------------------------
// Tests

/// Compile, -O0 reference, wpd-ld with and without whole-program
/// visibility, expectations, LLVM parity; the variants; the unsplit build.
/// A fixture built in a temporary directory (kept alive by `tmp`), with its
/// native plugin library if it has one, and its -O0 run.
struct Prepared {
    cfg: Config,
    tmp: wpd_tests::TempDir,
    build: PathBuf,
    b: Build,
    reference: RunResult,
}

fn prepare(fx: &Fixture, label: &str) -> Check<Prepared> {
    let cfg = load_config(fx)?;
    let tmp = temp_dir(label)?;
    let build = tmp.path().join("build");
    let b = build_fixture(fx, &cfg, &build, &[])?;
    if let Some(p) = &cfg.plugin {
        build_native_lib(fx, p, &build)?;
    }
    let reference = reference(fx, &cfg, &tmp.path().join("ref"))?;
    Ok(Prepared { cfg, tmp, build, b, reference })
}

fn fixture_test(fx: &Fixture) -> Check {
    let Prepared { cfg, tmp: _tmp, build, b, reference } = prepare(fx, &fx.name)?;
    let expect = load_expect(fx, &cfg)?;
    let t = Target { dir: &build, shared_main: cfg.output_shared.as_ref().map(|_| b.main_objects.as_slice()) };
    let inputs = b.args.clone();
    let llvm_extra = llvm_flags(&cfg);
    let mut failures = Vec::new();
    if let Err(e) = check_stdout(&expect, &reference) {
        failures.push(e);
    }
    let mut summary = format!("{}:", fx.name);
    let mut split_counts = None;
    let mut oracle = Oracle::new(&t);
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
            match bazel_check(&t, "bazel", &inputs, wpv, &cfg, &ours, &reference) {
                Ok(s) => summary.push_str(&s),
                Err(e) => failures.push(format!("[{m}] {e}")),
            }
        }
        let label = format!("llvm-{m}");
        match llvm_check(&t, &label, &inputs, wpv, &ours, &reference, &cfg, &llvm_extra, &mut oracle) {
            Ok(llvm) => summary.push_str(&format!(" {m}: wpd {} llvm {llvm};", devirtualized_counts(&ours.report))),
            Err(e) => failures.push(format!("[{m}] {e}")),
        }
        if let Err(e) = oracle.check(&format!("wpd-{m}"), &inputs, &cfg.wpd_flags, &ours.report) {
            failures.push(format!("[{m}] {e}"));
        }
        // Libraries also go through `-L<dir> -l<name>`.
        if wpv == cfg.modes()[0]
            && let Some(lib_inputs) = &b.lib_args
        {
            match wpd_link(&t, "wpd-lib", lib_inputs, wpv, &cfg.wpd_flags, true) {
                Ok(l) => {
                    check_run("[-l] wpd-ld", &reference, &l, &mut failures);
                    let (a, b) = (l.report.get("call_sites"), ours.report.get("call_sites"));
                    if a != b {
                        failures.push(format!("[-l] call_sites {a:?}, positional inputs gave {b:?}"));
                    }
                    if let Err(e) = check_expectations(&expect, LinkKind::Main(wpv), &l.report, &l.remarks) {
                        failures.push(format!("[-l] {e}"));
                    }
                    if let Err(e) = oracle.check("wpd-lib", lib_inputs, &cfg.wpd_flags, &l.report) {
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
                if let Err(e) = oracle.check(&label, &inputs, &flags, &l.report) {
                    failures.push(format!("[{}] {e}", v.name));
                }
            }
            Err(e) => failures.push(format!("[{}] {e}", v.name)),
        }
    }
    if cfg.unsplit_variant
        && let Err(e) = unsplit_test(fx, &cfg, &t, &expect, &reference, split_counts.as_ref(), &llvm_extra, &mut oracle)
    {
        failures.push(e);
    }
    if verbose() {
        summary.push_str(&oracle.summary());
        eprintln!("{summary}");
    }
    if failures.is_empty() { Ok(()) } else { Err(failures.join("\n\n")) }
}

// ---------------------------------------------------------------------------
// Bazel-style distributed ThinLTO: clang's own backends

/// The link's inputs for an index-only link: a positional archive of
/// bitcode becomes its members between `--start-lib` and `--end-lib` (lazy,
/// as a build system that distributes ThinLTO names them: an archive member
/// has no file of its own for clang's backend), extracted into `dir`;
/// under `--whole-archive` the members are plain objects. lld resolves
/// lazy objects in any order and refuses them inside a group: the group's
/// bounds go when an archive in it is converted.
fn index_only_inputs(inputs: &[OsString], dir: &Path) -> Check<Vec<OsString>> {
    let mut out = Vec::new();
    let mut whole = false;
    let mut converted = false;
    for a in inputs {
        let text = a.to_string_lossy();
        if text.contains("--no-whole-archive") {
            whole = false;
        } else if text.contains("--whole-archive") {
            whole = true;
        }
        let path = Path::new(a);
        if !(text.ends_with(".a") && path.is_file()) {
            out.push(a.clone());
            continue;
        }
        let listed = run(Command::new(LLVM_AR).arg("t").arg(path))?.stdout;
        let names: Vec<String> = String::from_utf8_lossy(&listed).lines().map(str::to_string).collect();
        let thin = read(path)?.starts_with(b"!<thin>");
        let members: Vec<PathBuf> = if thin {
            let base = path.parent().unwrap_or(Path::new("."));
            names.iter().map(|n| base.join(n)).collect()
        } else {
            let to = dir.join(format!("{}.x", path.file_name().unwrap_or_default().to_string_lossy()));
            mkdir(&to)?;
            run(Command::new(LLVM_AR).arg("x").arg(format!("--output={}", to.display())).arg(path))?;
            names.iter().map(|n| to.join(Path::new(n).file_name().unwrap_or_default())).collect()
        };
        let bitcode = members.iter().any(|m| read(m).is_ok_and(|b| b.starts_with(b"BC\xC0\xDE")));
        if !bitcode {
            out.push(a.clone());
            continue;
        }
        converted = true;
        if !whole {
            out.push("-Wl,--start-lib".into());
        }
        out.extend(members.into_iter().map(OsString::from));
        if !whole {
            out.push("-Wl,--end-lib".into());
        }
    }
    if converted {
        out.retain(|a| !a.to_string_lossy().ends_with("-group"));
    }
    Ok(out)
}

/// The Bazel-style sequence on the fixture's objects: wpd-ld
/// `--thinlto-index-only` writes the index files, unmodified clang backends
/// (`clang -c -x ir X.o -fthinlto-index=X.o.thinlto.bc`) compile the listed
/// objects, lld links them with LLVM's regular LTO object, and the program
/// must print what -O0 prints. The single-impl calls clang's backends
/// remark must be, by location, those of the in-process link (`ours`),
/// less the calls the report lists as not carried (then by count).
fn bazel_check(
    t: &Target,
    label: &str,
    inputs: &[OsString],
    wpv: bool,
    cfg: &Config,
    ours: &WpdLink,
    reference: &RunResult,
) -> Check<String> {
    let dir = t.dir.join(format!("{label}-files"));
    mkdir(&dir)?;
    let inputs = index_only_inputs(inputs, &dir)?;
    let list = dir.join("objects.txt");
    let lto_obj = dir.join("lto.o");
    let report_path = dir.join("report.json");
    let mut flags: Vec<String> = vec![
        format!("-Wl,--thinlto-index-only={}", list.display()),
        "-Wl,--thinlto-emit-imports-files".into(),
        format!("-Wl,--lto-obj-path={}", lto_obj.display()),
        format!("-Wl,--wpd-report={}", report_path.display()),
    ];
    flags.extend(t.output_flags().iter().map(|s| s.to_string()));
    flags.extend(cfg.wpd_flags.iter().cloned());
    let out = t.output(label);
    let mut cmd = wpd_ld_command(t.dir, &inputs, &out, wpv, &flags, &dir.join("tmp"))?;
    let shown = show_cmd(&cmd);
    let o = run_raw(&mut cmd)?;
    let stderr = String::from_utf8_lossy(&o.stderr);
    if !o.status.success() {
        // A bitcode archive a linker script names cannot become --start-lib
        // objects here; its members have no file of their own for clang's
        // backend, and wpd-ld says so in one line (lld would write indexes
        // named `lib.a(m.o at 1234).thinlto.bc` that no backend can use).
        let script = inputs.iter().any(|a| a.to_string_lossy().ends_with(".ld"));
        let refusal: Vec<&str> = stderr.lines().filter(|l| l.starts_with("wpd-ld: error:")).collect();
        if script
            && refusal.len() == 1
            && refusal[0].contains(".a(")
            && refusal[0].contains("an archive member has no file of its own")
            && !out.exists()
        {
            return Ok(format!(" {label}: refused (a bitcode archive named by a linker script);"));
        }
        return Err(format!("`{shown}` failed:\n{stderr}"));
    }
    let report = read_report(&report_path)?;
    // As a build system would: every bitcode input is compiled with its
    // index (one the link did not need, or whose code is all in LLVM's
    // regular LTO object, into an empty object); the listed objects are
    // the ones the final link needs.
    let listed = String::from_utf8_lossy(&read(&list)?).into_owned();
    let mut natives: Vec<(String, PathBuf)> = Vec::new();
    let mut remarks = Vec::new();
    let bitcode: Vec<String> = inputs
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .filter(|a| Path::new(&format!("{a}.thinlto.bc")).is_file())
        .collect();
    for object in listed.lines().filter(|l| !l.is_empty()) {
        if !bitcode.iter().any(|b| b == object) {
            return Err(format!(
                "[{label}] {} lists {object}, which is not a bitcode input of the link",
                list.display()
            ));
        }
    }
    for object in &bitcode {
        let object = object.as_str();
        let native = PathBuf::from(format!("{object}.native.o"));
        let o = run_raw(
            Command::new(CLANGXX)
                .current_dir(t.dir)
                .args(["-O2", "-c", "-x", "ir", object])
                .arg(format!("-fthinlto-index={object}.thinlto.bc"))
                .arg("-Rpass=wholeprogramdevirt")
                .arg("-o")
                .arg(&native),
        )?;
        if !o.status.success() {
            return Err(format!("clang's backend of {object} failed:\n{}", String::from_utf8_lossy(&o.stderr)));
        }
        remarks.extend(llvm_remarks(&o));
        natives.push((object.to_string(), native));
    }
    // The final link: the objects in the bitcode's place, LLVM's regular
    // LTO object first, every other input and option as it was.
    let mut final_args: Vec<OsString> = vec![lto_obj.clone().into_os_string()];
    for a in &inputs {
        let text = a.to_string_lossy();
        match natives.iter().find(|(o, _)| *o == text) {
            Some((o, native)) if listed.lines().any(|l| l == o) => final_args.push(native.clone().into_os_string()),
            Some(_) => {}
            None => final_args.push(a.clone()),
        }
    }
    let keep: Vec<&String> = cfg.wpd_flags.iter().filter(|f| !f.contains("--wpd-") && !f.contains("--lto-")).collect();
    run(Command::new(CLANGXX)
        .current_dir(t.dir)
        .arg("-fuse-ld=lld")
        .args(t.output_flags())
        .args(keep)
        .args(&final_args)
        .arg("-o")
        .arg(&out))?;
    match same_run(&format!("[{label}] clang backends"), reference, &t.run(label)?) {
        Err(e) if cfg.index_only_differs => eprintln!("note: index-only-differs fixture: {e}"),
        r => r?,
    }
    // What the backends devirtualized against the in-process link, by
    // location (LLVM remarks each copy of a function it compiles: imported
    // and inline ones too).
    let mut said = format!(" {label}:");
    for (kind, key) in [("single-impl", "single_impl"), ("uniform-ret-val", "uniform_ret_val")] {
        let distinct = |r: &[Remark]| locations(r, Some(kind)).into_keys().collect::<std::collections::BTreeSet<_>>();
        let (theirs, mine) = (distinct(&remarks), distinct(&ours.devirtualized()));
        let extra: Vec<&String> = theirs.difference(&mine).collect();
        if !extra.is_empty() {
            return Err(format!("[{label}] clang's backends made {kind} calls the in-process link did not: {extra:?}"));
        }
        let lost: Vec<&String> = mine.difference(&theirs).collect();
        let not_carried: u64 = report["clang_indexes"]["not_carried"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|n| n["kind"] == kind)
            .filter_map(|n| n["count"].as_u64())
            .sum();
        if !lost.is_empty() && not_carried == 0 {
            return Err(format!("[{label}] {kind} calls of the in-process link lost by clang's backends: {lost:?}"));
        }
        let carried = report["clang_indexes"][key].as_u64().unwrap_or(0);
        let planned = report["plan"][key].as_u64().unwrap_or(0);
        if carried + not_carried != planned {
            return Err(format!("[{label}] report: {carried} {kind} carried + {not_carried} not != {planned} planned"));
        }
        // The counts of the in-process link, call site for call site.
        let in_process = counter(&ours.report, key)?;
        if carried + not_carried != in_process {
            return Err(format!(
                "[{label}] {carried} {kind} calls carried and {not_carried} not, the in-process link made {in_process}"
            ));
        }
        said.push_str(&format!(" {kind} {}/{} locations ({not_carried} not carried);", theirs.len(), mine.len()));
    }
    Ok(said)
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
    oracle: &mut Oracle,
) -> Check {
    let b = build_fixture(fx, cfg, &t.dir.join("nosplit"), &["-fno-split-lto-unit"])?;
    let t = Target { dir: t.dir, shared_main: cfg.output_shared.as_ref().map(|_| b.main_objects.as_slice()) };
    let inputs = b.args;
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
        if wpv == cfg.modes()[0] {
            match bazel_check(&t, "bazel-nosplit", &inputs, wpv, cfg, &ours, reference) {
                Ok(said) if verbose() => eprintln!("{}:{said}", fx.name),
                Ok(_) => {}
                Err(e) => failures.push(format!("[{m}] {e}")),
            }
        }
        let mut cfg = cfg.clone();
        cfg.llvm_validated = false; // LLVM does fewer kinds on unsplit objects
        if let Err(e) = llvm_check(&t, &format!("llvm-{m}"), &inputs, wpv, &ours, reference, &cfg, llvm_extra, oracle) {
            failures.push(format!("[{m}] {e}"));
        }
        if let Err(e) = oracle.check(&format!("wpd-{m}"), &inputs, &cfg.wpd_flags, &ours.report) {
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
    ["single_impl", "uniform_ret_val", "unique_ret_val", "virtual_const_prop", "closed_set", "speculative"]
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
    oracle: &mut Oracle,
) -> Check<String> {
    let (all_theirs, llvm_run, view) = llvm_link(t, label, inputs, wpv, extra)?;
    oracle.add(inputs, extra, view);
    // LLVM remarks a call in every copy of a linkonce function that some
    // backend compiles (discarded copies too, as available_externally);
    // wpd counts the program's call sites, each once. So LLVM's remarks
    // count once per kind and location.
    let mut seen = std::collections::BTreeSet::new();
    let theirs: Vec<Remark> =
        all_theirs.into_iter().filter(|r| r.loc.is_none() || seen.insert((r.kind.clone(), r.loc.clone()))).collect();
    let per_kind: Vec<u64> = KINDS
        .iter()
        .map(|(kinds, _)| theirs.iter().filter(|r| kinds.contains(&r.kind.as_str())).count() as u64)
        .collect();
    let shown = per_kind.iter().map(u64::to_string).collect::<Vec<_>>().join("/");
    let ours_dv = ours.devirtualized();
    let mut errs = Vec::new();
    if cfg.llvm_validated {
        let extra = missing_locations(&locations(&ours.devirtualized_as_llvm_can(), None), &locations(&theirs, None));
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

/// Links a fixture (libraries as `-l` when it has some) with
/// `--wpd-linker` and checks the program, the wpv expectations, the linker
/// used, and what the link loaded against that linker's own link of the
/// same inputs (GNU ld and gold with the LLVMgold plugin).
fn linker_test(fx: &Fixture, short: &str, linker: &str) -> Check {
    let cfg = load_config(fx)?;
    let expect = load_expect(fx, &cfg)?;
    let tmp = temp_dir(&format!("{}-{short}", fx.name))?;
    let build = tmp.path().join("build");
    let b = build_fixture(fx, &cfg, &build, &[])?;
    let reference = reference(fx, &cfg, &tmp.path().join("ref"))?;
    let t = Target { dir: &build, shared_main: None };
    let inputs = b.lib_args.clone().unwrap_or(b.args);
    let mut flags = cfg.wpd_flags.clone();
    flags.push(format!("-Wl,--wpd-linker={linker}"));
    let label = format!("wpd-{short}");
    let l = wpd_link(&t, &label, &inputs, true, &flags, true)?;
    if let Some(r) = &l.run {
        same_run(&format!("wpd-ld --wpd-linker={linker}"), &reference, r)?;
    }
    check_expectations(&expect, LinkKind::Main(true), &l.report, &l.remarks)?;
    let by = linked_by(&build.join(&label))?;
    if by != short {
        return Err(format!("--wpd-linker={linker}: the output looks linked by {by}"));
    }
    let mut oracle = Oracle::new(&t);
    oracle.check(&label, &inputs, &flags, &l.report)
}

/// The linkers that load `libwpd_plugin.so` (`-fuse-ld=` names).
const PLUGIN_LINKERS: &[&str] = &["bfd", "gold", "mold"];

/// The fixture linked through the linker plugin by GNU ld, gold and mold
/// (the linker's own resolutions as the link model): each program agrees
/// with -O0, and the devirtualized counts equal wpd-ld's on the same
/// objects. The link is the fixture's main one (whole-program visibility
/// unless `nowpv-only`), with libraries as `-l` when it has some.
fn plugin_test(fx: &Fixture) -> Check {
    let Prepared { cfg, tmp: _tmp, build, b, reference } = prepare(fx, &format!("{}-plugin", fx.name))?;
    let t = Target { dir: &build, shared_main: cfg.output_shared.as_ref().map(|_| b.main_objects.as_slice()) };
    let inputs = b.args.clone();
    let wpv = cfg.modes()[0];
    let ours = wpd_link(&t, "wpd", &inputs, wpv, &cfg.wpd_flags, true)?;
    // What the plugin decides must be what wpd-ld decides, dead slots
    // included (whether code loaded with the program may call them).
    let decided = |r: &Value| format!("{}, dead functions {}", devirtualized_counts(r), r["dead_slots"]["functions"]);
    let expected = decided(&ours.report);
    let so = wpd_tests::link::wpd_plugin_so()?;
    let mut failures = Vec::new();
    for &linker in PLUGIN_LINKERS {
        let label = format!("plugin-{linker}");
        let report_path = build.join(format!("{label}.report.json"));
        // No -flto at link time: clang would load its own LLVMgold.so.
        let mut cmd = Command::new(CLANGXX);
        cmd.current_dir(&build)
            .arg(format!("-fuse-ld={linker}"))
            .arg(format!("-Wl,-plugin,{}", so.display()))
            .arg(format!("-Wl,-plugin-opt=wpd-report={}", report_path.display()))
            .args(t.output_flags());
        if wpv {
            cmd.arg("-Wl,-plugin-opt=whole-program-visibility");
        }
        for f in &cfg.wpd_flags {
            // wpd-ld's own options (and lld's validation overrides) become
            // plugin options.
            if let Some(rest) = f.strip_prefix("-Wl,--wpd-") {
                cmd.arg(format!("-Wl,-plugin-opt=wpd-{rest}"));
            } else if let Some(glob) = f.strip_prefix("-Wl,--lto-known-safe-vtables=") {
                cmd.arg(format!("-Wl,-plugin-opt=wpd-known-safe={glob}"));
            } else {
                cmd.arg(f);
            }
        }
        cmd.args(&inputs).arg("-o").arg(t.output(&label));
        let shown = show_cmd(&cmd);
        let o = run_raw(&mut cmd)?;
        if !o.status.success() {
            failures.push(format!("[{linker}] `{shown}` failed: {}", String::from_utf8_lossy(&o.stderr)));
            continue;
        }
        match t.run(&label) {
            Ok(r) => {
                if let Err(e) = same_run(&format!("[{linker}] plugin"), &reference, &r) {
                    failures.push(e);
                }
            }
            Err(e) => failures.push(format!("[{linker}] {e}")),
        }
        match read_report(&report_path) {
            Ok(report) => {
                let got = decided(&report);
                // mold shows the plugin no native file: the plugin reads
                // them from mold's command line, and decides as wpd-ld.
                if got != expected {
                    failures.push(format!("[{linker}] plugin devirtualized {got}, wpd-ld {expected}"));
                }
            }
            Err(e) => failures.push(format!("[{linker}] {e}")),
        }
    }
    if failures.is_empty() { Ok(()) } else { Err(failures.join("\n\n")) }
}

/// `--wpd-jobs=1` and `--wpd-jobs=2` give byte-identical programs and the
/// same decisions.
fn jobs_test(fx: &Fixture) -> Check {
    let tmp = temp_dir(&format!("{}-jobs", fx.name))?;
    let build = tmp.path().join("build");
    let cfg = load_config(fx)?;
    let b = build_fixture(fx, &cfg, &build, &[])?;
    let t = Target { dir: &build, shared_main: None };
    let inputs = b.args;
    let mut outputs = Vec::new();
    let mut oracle = Oracle::new(&t);
    let mut oracle_failures = Vec::new();
    for jobs in [1, 2] {
        let label = format!("jobs{jobs}");
        let mut flags = cfg.wpd_flags.clone();
        flags.push(format!("-Wl,--wpd-jobs={jobs}"));
        let l = wpd_link(&t, &label, &inputs, true, &flags, false)?;
        if let Err(e) = oracle.check(&label, &inputs, &flags, &l.report) {
            oracle_failures.push(format!("[{label}] {e}"));
        }
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
    if oracle_failures.is_empty() { Ok(()) } else { Err(oracle_failures.join("\n\n")) }
}

/// The oracle is not vacuous: on the `archive` fixture's link, wpd-ld's
/// list equals lld's, and the same report with a member left out, a member
/// lld does not load added, two members swapped, or another flavor does
/// not.
fn oracle_self_test(fx: &Fixture) -> Check {
    let cfg = load_config(fx)?;
    let tmp = temp_dir("oracle-self-test")?;
    let build = tmp.path().join("build");
    let b = build_fixture(fx, &cfg, &build, &[])?;
    let t = Target { dir: &build, shared_main: None };
    let l = wpd_link(&t, "wpd", &b.args, true, &cfg.wpd_flags, false)?;
    let mut oracle = Oracle::new(&t);
    oracle.check("wpd", &b.args, &cfg.wpd_flags, &l.report)?;
    let theirs = oracle.views.first().map(|(_, _, v)| v.clone()).ok_or("no oracle view")?;
    let loaded: Vec<String> = wpd_tests::array(l.report.get("link_model").unwrap_or(&Value::Null), "loaded")
        .iter()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect();
    let members: Vec<usize> = (0..loaded.len()).filter(|&i| loaded[i].contains("libzoo.a(")).collect();
    if members.len() < 2 {
        return Err(format!("expected two libzoo.a members in link_model.loaded: {loaded:?}"));
    }
    let archive = loaded[members[0]].split("libzoo.a(").next().unwrap_or("").to_string() + "libzoo.a";
    let mut dropped = loaded.clone();
    dropped.remove(members[0]);
    let mut added = loaded.clone();
    added.insert(members[0], format!("{archive}(parrot.o)"));
    let mut swapped = loaded.clone();
    swapped.swap(members[0], members[1]);
    let cases = [
        ("a member left out", dropped, "lld", "only ld.lld:\n    "),
        ("parrot.o added", added, "lld", "parrot.o"),
        ("two members swapped", swapped, "lld", "another order"),
        ("flavor bfd", loaded, "bfd", "link_model.flavor is bfd"),
    ];
    for (what, list, flavor, needle) in cases {
        let mut report = l.report.clone();
        report["link_model"]["loaded"] = Value::from(list);
        report["link_model"]["flavor"] = Value::from(flavor);
        let ours = oracle::from_report(&report, &build)?;
        match oracle::compare(&ours, &theirs) {
            Ok(_) => return Err(format!("{what}: the oracle found no difference")),
            Err(e) if !e.contains(needle) => return Err(format!("{what}: expected `{needle}` in:\n{e}")),
            Err(_) => {}
        }
    }
    Ok(())
}
