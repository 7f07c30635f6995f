//! Link-and-run helpers for the end-to-end harnesses: locating `wpd-ld`,
//! building link command lines (through `wpd-ld` or through lld's own
//! ThinLTO for comparison), running the linked programs with a timeout,
//! parsing devirtualization remarks (wpd's and LLVM's wording) and checking
//! the invariants of a `wpd-report/2` JSON report.
//!
//! `wpd-ld` is never built here: `make test` builds it first. The harnesses
//! use `$WPD_LD_BIN` when set, else `target/release/wpd-ld` (or
//! `$CARGO_TARGET_DIR/release/wpd-ld`).

pub mod oracle;

use crate::{Built, CLANGXX, Check, Fixture, file_name, mkdir, read, repo_root, run_raw, show_cmd};
use serde_json::Value;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Flags of every link step (the compile flags that matter to the driver).
pub const LINK_FLAGS: &[&str] = &["-O2", "-flto=thin", "-fwhole-program-vtables"];
/// The flag that turns on whole-program visibility (for wpd-ld and lld).
pub const WPV_FLAG: &str = "-Wl,--lto-whole-program-visibility";
/// How long a fixture program may run.
pub const RUN_TIMEOUT: Duration = Duration::from_secs(30);
/// Remark kinds, in LLVM's wording.
pub const REMARK_KINDS: &[&str] =
    &["single-impl", "uniform-ret-val", "unique-ret-val", "virtual-const-prop-1-bit", "virtual-const-prop"];
/// The `call_sites` counters of a report, in schema order.
pub const COUNTERS: &[&str] = &[
    "total",
    "single_impl",
    "uniform_ret_val",
    "unique_ret_val",
    "virtual_const_prop",
    "closed_set",
    "speculative",
    "not_devirtualized",
];

/// The `wpd-ld` binary under test (absolute path).
/// The linker plugin `libwpd_plugin.so` (`WPD_PLUGIN` overrides; else
/// beside wpd-ld).
pub fn wpd_plugin_so() -> Check<PathBuf> {
    if let Some(p) = std::env::var_os("WPD_PLUGIN") {
        let p = PathBuf::from(p);
        return if p.is_file() { Ok(p) } else { Err(format!("WPD_PLUGIN={} is not a file", p.display())) };
    }
    let p = wpd_ld_bin()?.with_file_name("libwpd_plugin.so");
    if p.is_file() { Ok(p) } else { Err(format!("{} not built (cargo build --release)", p.display())) }
}

pub fn wpd_ld_bin() -> Check<PathBuf> {
    if let Some(p) = std::env::var_os("WPD_LD_BIN") {
        let p = PathBuf::from(p);
        let p = if p.is_relative() { repo_root().join(p) } else { p };
        return if p.is_file() { Ok(p) } else { Err(format!("WPD_LD_BIN={} is not a file", p.display())) };
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|t| if t.is_relative() { repo_root().join(t) } else { t })
        .unwrap_or_else(|| repo_root().join("target"));
    let p = target.join("release").join("wpd-ld");
    if p.is_file() {
        Ok(p)
    } else {
        Err(format!(
            "wpd-ld binary not found at {}: run `make test` (or `cargo build --release -p linker-shim`), or set WPD_LD_BIN",
            p.display()
        ))
    }
}

/// The linker inputs of a compiled fixture as command-line arguments:
/// every plain object, then the archive as a positional path.
pub fn positional_inputs(built: &Built) -> Vec<OsString> {
    built.inputs.iter().map(|p| p.clone().into_os_string()).collect()
}

/// The same inputs with every library (`lib<name>.a`, `lib<name>.so`) given
/// as `-L<dir> -l<name>`, shared libraries with `-Wl,-rpath,<dir>` so the
/// program finds them; `None` when the fixture has no library.
pub fn library_inputs(built: &Built) -> Option<Vec<OsString>> {
    library_args(&positional_inputs(built))
}

/// Link arguments with every path to a library (`lib<name>.a`,
/// `lib<name>.so`) replaced by `-L<dir> -l<name>` (shared libraries also
/// get `-Wl,-rpath,<dir>`), other arguments unchanged; `None` when no
/// argument is a library.
pub fn library_args(args: &[OsString]) -> Option<Vec<OsString>> {
    let mut out = Vec::new();
    let mut found = false;
    for a in args {
        let p = Path::new(a);
        let name = file_name(p);
        let lib = name.strip_prefix("lib").filter(|_| !a.to_string_lossy().starts_with('-'));
        let (archive, shared) = (lib.and_then(|n| n.strip_suffix(".a")), lib.and_then(|n| n.strip_suffix(".so")));
        match archive.or(shared) {
            Some(lib) => {
                let dir = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
                out.push(OsString::from(format!("-L{}", dir.display())));
                out.push(OsString::from(format!("-l{lib}")));
                if shared.is_some() {
                    out.push(OsString::from(format!("-Wl,-rpath,{}", dir.display())));
                }
                found = true;
            }
            None => out.push(a.clone()),
        }
    }
    found.then_some(out)
}

/// `clang++-19 <LINK_FLAGS> --ld-path=<wpd-ld> [wpv] extra inputs -o out`,
/// run in `dir` with `TMPDIR=tmpdir` (created when missing).
pub fn wpd_ld_command(
    dir: &Path,
    inputs: &[OsString],
    out: &Path,
    wpv: bool,
    extra: &[String],
    tmpdir: &Path,
) -> Check<Command> {
    mkdir(tmpdir)?;
    let mut cmd = Command::new(CLANGXX);
    cmd.current_dir(dir).env("TMPDIR", tmpdir).args(LINK_FLAGS);
    cmd.arg(format!("--ld-path={}", wpd_ld_bin()?.display()));
    if wpv {
        cmd.arg(WPV_FLAG);
    }
    cmd.args(extra).args(inputs).arg("-o").arg(out);
    Ok(cmd)
}

/// The comparison link: lld's own ThinLTO with WholeProgramDevirt remarks
/// and without cross-module function importing.
pub fn llvm_command(dir: &Path, inputs: &[OsString], out: &Path, wpv: bool, extra: &[&str]) -> Command {
    let mut cmd = Command::new(CLANGXX);
    cmd.current_dir(dir).args(LINK_FLAGS).arg("-fuse-ld=lld");
    if wpv {
        cmd.arg(WPV_FLAG);
    }
    cmd.args(extra);
    // Without importing, every remark is about a call site of the module
    // that defines it (an imported copy of a function would repeat the
    // remarks of its calls), so remarks count call sites as wpd does.
    cmd.arg("-Wl,-mllvm,-pass-remarks=wholeprogramdevirt").arg("-Wl,-mllvm,-import-instr-limit=0");
    cmd.args(inputs).arg("-o").arg(out);
    cmd
}

/// What a program printed and how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunResult {
    /// Its stdout.
    pub stdout: String,
    /// Its exit code (`None`: killed by a signal).
    pub code: Option<i32>,
    /// The signal that killed it, if one did.
    pub signal: Option<i32>,
}

impl RunResult {
    /// One-line description of the exit.
    pub fn exit(&self) -> String {
        match self.code {
            Some(c) => format!("exit code {c}"),
            None => format!("killed by signal {}", self.signal.unwrap_or(0)),
        }
    }
}

/// Runs a linked program from `dir` and captures its stdout (via a file, so
/// a hung program can be killed after `RUN_TIMEOUT`).
pub fn run_program(program: &Path, dir: &Path) -> Check<RunResult> {
    let out_path = program.with_extension("stdout");
    let out_file =
        std::fs::File::create(&out_path).map_err(|e| format!("cannot create {}: {e}", out_path.display()))?;
    let mut child = Command::new(program)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(out_file)
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", program.display()))?;
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() > RUN_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{} did not finish within {RUN_TIMEOUT:?}", program.display()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(format!("cannot wait for {}: {e}", program.display())),
        }
    };
    let stdout = String::from_utf8_lossy(&read(&out_path)?).into_owned();
    use std::os::unix::process::ExitStatusExt;
    Ok(RunResult { stdout, code: status.code(), signal: status.signal() })
}

/// Builds the fixture with `clang++-19 -O0` (no LTO, all sources in one
/// command) into `dir/ref`, runs it and requires exit code 0.
pub fn reference_run(fx: &Fixture, dir: &Path) -> Check<RunResult> {
    mkdir(dir)?;
    let exe = dir.join("ref");
    let mut cmd = Command::new(CLANGXX);
    cmd.current_dir(&fx.dir).arg("-O0").args(&fx.flags).args(&fx.sources).arg("-o").arg(&exe);
    crate::run(&mut cmd)?;
    reference_result(fx, run_program(&exe, dir)?)
}

/// Requires a fixture's `-O0` reference run to be usable: exit code 0 (a
/// signal with a `killed` note) and some output.
pub fn reference_result(fx: &Fixture, r: RunResult) -> Check<RunResult> {
    // A fixture with a `killed` note dies by a signal on purpose (a trap
    // the optimized program must keep); every other one exits 0.
    let killed = fx.dir.join("killed").is_file();
    if (killed && r.signal.is_none()) || (!killed && r.code != Some(0)) {
        return Err(format!("the -O0 reference build of {} ended with {}:\n{}", fx.name, r.exit(), r.stdout));
    }
    if r.stdout.is_empty() {
        return Err(format!("the -O0 reference build of {} printed nothing", fx.name));
    }
    Ok(r)
}

/// Links `objects` in `dir` with clang++ and `flags` (a wpd-ld link when
/// `label` is `wpd-ld`, else a plugin link) into the program `dir/label`
/// with its report `dir/label.json`, runs it, and checks that it prints
/// what `want` printed; returns the report.
pub fn link_run_report(
    dir: &Path,
    label: &str,
    flags: &[String],
    objects: &[OsString],
    want: &RunResult,
) -> Check<Value> {
    let prog = dir.join(label);
    let report_path = dir.join(format!("{label}.json"));
    let report_flag = if label == "wpd-ld" {
        format!("-Wl,--wpd-report={}", report_path.display())
    } else {
        format!("-Wl,-plugin-opt=wpd-report={}", report_path.display())
    };
    crate::run(Command::new(CLANGXX).current_dir(dir).args(flags).arg(report_flag).args(objects).arg("-o").arg(&prog))?;
    same_run(label, want, &run_program(&prog, dir)?)?;
    read_report(&report_path)
}

/// Requires `got` to equal the -O0 reference, naming `what` otherwise.
pub fn same_run(what: &str, reference: &RunResult, got: &RunResult) -> Check {
    if reference == got {
        return Ok(());
    }
    let mut msg = format!("{what}: output differs from the -O0 build");
    if reference.code != got.code {
        msg.push_str(&format!(" ({} instead of {})", got.exit(), reference.exit()));
    }
    msg.push('\n');
    msg.push_str(&crate::short_diff(&reference.stdout, &got.stdout));
    Err(msg)
}

/// One devirtualization remark.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remark {
    /// `single-impl`, `uniform-ret-val`, ...
    pub kind: String,
    /// The function called (may be empty for LLVM's constant propagation).
    pub callee: String,
    /// `file:line:col` with the file reduced to its last component, when
    /// the call has a debug location.
    pub loc: Option<String>,
    /// The whole line.
    pub line: String,
}

/// `dir/sub/file.cpp:7:48` -> `file.cpp:7:48`.
pub fn loc_key(loc: &str) -> String {
    let mut parts = loc.rsplitn(3, ':');
    let (col, line, file) = (parts.next(), parts.next(), parts.next());
    match (file, line, col) {
        (Some(f), Some(l), Some(c)) => {
            let base = f.rsplit('/').next().unwrap_or(f);
            format!("{base}:{l}:{c}")
        }
        _ => loc.to_string(),
    }
}

fn split_kind(text: &str) -> Option<(&str, &str)> {
    REMARK_KINDS.iter().find_map(|k| {
        let rest = text.strip_prefix(k)?.strip_prefix(": devirtualized a call to")?;
        Some((*k, rest.strip_prefix(' ').unwrap_or(rest)))
    })
}

/// The remark kind of wpd-ld's guarded speculative calls (not a
/// devirtualization: the indirect call stays behind the guard).
pub const SPECULATIVE: &str = "speculative";

/// The remark kind of wpd-ld's closed-set dispatches (no indirect call is
/// left, but LLVM has no such kind to compare with).
pub const CLOSED_SET: &str = "closed-set";

/// A wpd-ld remark: `<kind>: devirtualized a call to <fn> (<file>:<line>:<col>)`
/// or `... <fn> (in <function>, <module>)`, or a guarded speculative call,
/// `speculative: guarded direct call to <fn>[ or <fn>] (<location>)` (kind
/// [`SPECULATIVE`]).
pub fn parse_wpd_remark(line: &str) -> Option<Remark> {
    let speculative = line.strip_prefix("speculative: guarded direct call to ").map(|r| (SPECULATIVE, r));
    let closed_set = line
        .strip_prefix("closed-set: dispatched over ")
        .and_then(|r| r.split_once(": "))
        .map(|(_, r)| (CLOSED_SET, r));
    let (kind, rest) = match speculative.or(closed_set) {
        Some(s) => s,
        None => split_kind(line)?,
    };
    let (callee, paren) = match rest.rfind(" (") {
        Some(i) if rest.ends_with(')') => (&rest[..i], &rest[i + 2..rest.len() - 1]),
        _ => (rest, ""),
    };
    let loc = (!paren.is_empty() && !paren.starts_with("in ")).then(|| loc_key(paren));
    Some(Remark { kind: kind.to_string(), callee: callee.to_string(), loc, line: line.to_string() })
}

/// An lld remark: `<file>:<line>:<col>: <kind>: devirtualized a call to <fn>`
/// (any `ld.lld: remark: ` style prefix is skipped).
pub fn parse_llvm_remark(line: &str) -> Option<Remark> {
    let idx = REMARK_KINDS.iter().filter_map(|k| line.find(&format!(": {k}: devirtualized a call to"))).min()?;
    let (kind, callee) = split_kind(&line[idx + 2..])?;
    let prefix = &line[..idx];
    let loc_text = prefix.rsplit(": ").next().unwrap_or(prefix);
    let loc = (!loc_text.starts_with("<unknown>")).then(|| loc_key(loc_text));
    Some(Remark { kind: kind.to_string(), callee: callee.trim().to_string(), loc, line: line.to_string() })
}

/// Splits a wpd-ld stderr into remarks and other lines.
pub fn split_stderr(stderr: &str) -> (Vec<Remark>, Vec<String>) {
    let mut remarks = Vec::new();
    let mut other = Vec::new();
    for line in stderr.lines() {
        match parse_wpd_remark(line) {
            Some(r) => remarks.push(r),
            None => other.push(line.to_string()),
        }
    }
    (remarks, other)
}

/// LLVM remarks from a lld link's combined stdout and stderr.
pub fn llvm_remarks(out: &Output) -> Vec<Remark> {
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push('\n');
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    text.lines().filter_map(parse_llvm_remark).collect()
}

/// Multiset of remark locations of one kind (`None`: every kind).
pub fn locations(remarks: &[Remark], kind: Option<&str>) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for r in remarks {
        if kind.is_none_or(|k| r.kind == k)
            && let Some(l) = &r.loc
        {
            *m.entry(l.clone()).or_insert(0) += 1;
        }
    }
    m
}

/// Locations (with multiplicity) in `sub` that `sup` lacks.
pub fn missing_locations(sub: &BTreeMap<String, usize>, sup: &BTreeMap<String, usize>) -> Vec<String> {
    let mut missing = Vec::new();
    for (loc, &n) in sub {
        let have = sup.get(loc).copied().unwrap_or(0);
        if have < n {
            missing.push(format!("{loc} (x{})", n - have));
        }
    }
    missing
}

/// A `call_sites` counter of a report.
pub fn counter(report: &Value, key: &str) -> Check<u64> {
    report
        .get("call_sites")
        .and_then(|c| c.get(key))
        .and_then(Value::as_u64)
        .ok_or_else(|| format!("report: call_sites.{key} missing or not an unsigned integer"))
}

/// Devirtualized call sites by (calling function, kind, single-impl target),
/// each counted once however many modules hold a copy of its function: the
/// largest count any one module has (LLVM devirtualizes, and remarks, every
/// module's copy of an inline function; wpd's report counts the copy the
/// program keeps). The parity bench counts the same way
/// (`benches/thinlto_parity.py`, `distinct_sites`).
pub type DevirtualizedSites = BTreeMap<(String, String, String), usize>;

/// Adds one module's counts to `best`, keeping the larger of each.
fn keep_largest(best: &mut DevirtualizedSites, module: DevirtualizedSites) {
    for (site, n) in module {
        let b = best.entry(site).or_default();
        *b = n.max(*b);
    }
}

/// A name in LLVM's YAML remarks as wpd's report writes it: unquoted, and
/// without the `.llvm.<hash>` suffix ThinLTO gives a promoted local.
fn yaml_remark_name(scalar: &str) -> &str {
    let s = scalar.trim().trim_matches(|c| c == '\'' || c == '"');
    match s.rsplit_once(".llvm.") {
        Some((name, hash)) if !hash.is_empty() && hash.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => s,
    }
}

/// LLVM's devirtualized call sites from the YAML remarks of a
/// [`llvm_command`] link given `-Wl,--opt-remarks-filename` (one file per
/// backend), which name the calling function even without debug lines.
pub fn llvm_yaml_devirtualized(files: &[PathBuf]) -> Check<DevirtualizedSites> {
    let mut best = DevirtualizedSites::new();
    for f in files {
        let text = std::fs::read_to_string(f).map_err(|e| format!("{}: {e}", f.display()))?;
        let mut module = DevirtualizedSites::new();
        for doc in text.split("\n--- !").map(|d| d.trim_start_matches(['-', ' ', '!'])) {
            let field = |key: &str| doc.lines().find_map(|l| l.strip_prefix(key)).map(yaml_remark_name);
            let (Some("wholeprogramdevirt"), Some(kind), Some(caller)) =
                (field("Pass:"), field("Name:"), field("Function:"))
            else {
                continue;
            };
            if !doc.starts_with("Passed") || !REMARK_KINDS.contains(&kind) {
                continue;
            }
            let target = match kind {
                "single-impl" => {
                    doc.lines().find_map(|l| l.trim_start().strip_prefix("- FunctionName:")).map(yaml_remark_name)
                }
                _ => None,
            };
            *module.entry((caller.into(), kind.into(), target.unwrap_or_default().into())).or_default() += 1;
        }
        keep_largest(&mut best, module);
    }
    Ok(best)
}

/// wpd's devirtualized call sites (not its guarded speculative calls) from
/// its report, counted as [`llvm_yaml_devirtualized`] counts LLVM's.
pub fn report_devirtualized(report: &Value) -> DevirtualizedSites {
    let mut per_module: BTreeMap<&str, DevirtualizedSites> = BTreeMap::new();
    for c in report["calls"].as_array().into_iter().flatten() {
        let kind = c["outcome"].as_str().unwrap_or("");
        if !REMARK_KINDS.contains(&kind) {
            continue;
        }
        let target = if kind == "single-impl" { c["target"].as_str().unwrap_or("") } else { "" };
        let site = (c["function"].as_str().unwrap_or("").into(), kind.into(), target.into());
        *per_module.entry(c["module"].as_str().unwrap_or("")).or_default().entry(site).or_default() += 1;
    }
    let mut best = DevirtualizedSites::new();
    for module in per_module.into_values() {
        keep_largest(&mut best, module);
    }
    best
}

/// Reads and parses a report.
pub fn read_report(path: &Path) -> Check<Value> {
    let bytes = read(path)?;
    serde_json::from_slice(&bytes).map_err(|e| format!("{} is not JSON: {e}", path.display()))
}

/// The schema invariants of a `wpd-report/2` report of a link whose
/// whole-program visibility was `wpv` and whose output is `output`.
pub fn check_report(report: &Value, wpv: bool, output: &Path) -> Check {
    let mut errs = Vec::new();
    if report.get("schema").and_then(Value::as_str) != Some("wpd-report/2") {
        errs.push(format!("schema is {:?}, expected \"wpd-report/2\"", report.get("schema")));
    }
    let mut counts = BTreeMap::new();
    for key in COUNTERS {
        match counter(report, key) {
            Ok(n) => {
                counts.insert(*key, n);
            }
            Err(e) => errs.push(e),
        }
    }
    if counts.len() == COUNTERS.len() {
        let parts: u64 = COUNTERS[1..].iter().map(|k| counts[k]).sum();
        if parts != counts["total"] {
            errs.push(format!(
                "call_sites.total is {} but single_impl + uniform_ret_val + unique_ret_val + virtual_const_prop + speculative + not_devirtualized = {parts}",
                counts["total"]
            ));
        }
    }
    match report.get("decisions").and_then(Value::as_array) {
        None => errs.push("decisions missing or not an array".into()),
        Some(decisions) => {
            let mut sites = 0;
            let mut single = 0;
            for d in decisions {
                let res = d.get("resolution").and_then(Value::as_str).unwrap_or("<missing>");
                let n = d.get("call_sites").and_then(Value::as_u64);
                let dv = d.get("devirtualized").and_then(Value::as_u64);
                let (Some(n), Some(dv)) = (n, dv) else {
                    errs.push(format!("decision without call_sites/devirtualized counts: {d}"));
                    continue;
                };
                sites += n;
                if dv > n {
                    errs.push(format!("decision devirtualizes {dv} of {n} call sites: {d}"));
                }
                let reason = d.get("reason").and_then(Value::as_str).unwrap_or("");
                match res {
                    "none" => {
                        if reason.trim().is_empty() {
                            errs.push(format!("decision with resolution none has no reason: {d}"));
                        }
                        if dv != 0 {
                            errs.push(format!("decision with resolution none devirtualizes {dv} call sites: {d}"));
                        }
                    }
                    "single_impl" => {
                        single += dv;
                        if d.get("target").and_then(Value::as_str).is_none_or(str::is_empty) {
                            errs.push(format!("single_impl decision without a target: {d}"));
                        }
                        if dv == 0 {
                            errs.push(format!("single_impl decision devirtualizes no call site: {d}"));
                        }
                        if dv < n && reason.trim().is_empty() {
                            errs.push(format!("decision leaves {} call sites without a reason: {d}", n - dv));
                        }
                    }
                    "uniform_ret_val" | "unique_ret_val" | "virtual_const_prop" | "closed_set" | "speculative" => {}
                    other => errs.push(format!("unknown resolution {other:?} in {d}")),
                }
            }
            if let Some(&total) = counts.get("total")
                && sites != total
            {
                errs.push(format!("decisions cover {sites} call sites, call_sites.total is {total}"));
            }
            if let Some(&n) = counts.get("single_impl")
                && single != n
            {
                errs.push(format!(
                    "single_impl decisions devirtualize {single} call sites, call_sites.single_impl is {n}"
                ));
            }
        }
    }
    // The counts are the backends' outcomes; the plan predicted them, and
    // any call site where the two differ is a bug, named here.
    match report.get("mismatches").and_then(Value::as_array) {
        None => errs.push("mismatches missing or not an array".into()),
        Some(m) if !m.is_empty() => {
            let lines: Vec<String> = m.iter().map(|l| l.as_str().unwrap_or("?").to_string()).collect();
            errs.push(format!("plan and backend disagree on {} call site(s):\n    {}", m.len(), lines.join("\n    ")));
        }
        Some(_) => {}
    }
    for key in COUNTERS {
        let planned = report.pointer(&format!("/planned/{key}")).and_then(Value::as_u64);
        let done = report.pointer(&format!("/call_sites/{key}")).and_then(Value::as_u64);
        if planned != done {
            errs.push(format!("call_sites.{key} (backend) is {done:?}, planned.{key} (plan) is {planned:?}"));
        }
    }
    // Dead slots: a count with its entries replaced and the stub in the
    // output (the program then ran equal to -O0: no stub was reached), or
    // the reason there are none.
    match report.get("dead_slots") {
        None => errs.push("dead_slots missing".into()),
        Some(d) => {
            let slots = d.get("slots").and_then(Value::as_u64).unwrap_or(0);
            let replaced = d.get("replaced").and_then(Value::as_u64).unwrap_or(0);
            let off = d.get("off").and_then(Value::as_str);
            if slots == 0 && off.is_none() {
                errs.push(format!("dead_slots has no slots and no reason: {d}"));
            }
            if slots > 0 && (off.is_some() || replaced < slots) {
                errs.push(format!("dead_slots: {slots} slots, {replaced} entries replaced, off {off:?}"));
            }
            // A global vtable with dead entries that the output kept (LTO
            // drops one whose every use was devirtualized) holds the stub.
            match std::process::Command::new("llvm-nm-19").arg(output).output() {
                Ok(o) if o.status.success() => {
                    let text = String::from_utf8_lossy(&o.stdout).into_owned();
                    let names: std::collections::BTreeSet<String> =
                        text.lines().filter_map(|l| l.split_whitespace().last()).map(str::to_string).collect();
                    let entries = d.get("entries").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
                    let global = |e: &&Value| e.get("module").is_none_or(Value::is_null);
                    let kept: Vec<&str> = entries
                        .iter()
                        .filter(global)
                        .filter_map(|e| e.get("vtable").and_then(Value::as_str))
                        .filter(|v| names.contains(*v))
                        .collect();
                    // ThinLTO renames the stub `__wpd_dead_slot.llvm.<hash>`
                    // where it promotes it (a vtable imported elsewhere).
                    let stub = names.iter().any(|n| n.starts_with("__wpd_dead_slot"));
                    if !kept.is_empty() && !stub {
                        errs.push(format!(
                            "{} keeps vtables with dead entries ({}) but has no __wpd_dead_slot",
                            output.display(),
                            kept.join(", ")
                        ));
                    }
                }
                _ => errs.push(format!("llvm-nm-19 cannot read {}", output.display())),
            }
        }
    }
    match report.pointer("/options/whole_program_visibility").and_then(Value::as_bool) {
        Some(v) if v == wpv => {}
        other => errs.push(format!("options.whole_program_visibility is {other:?}, the link used {wpv}")),
    }
    match report.get("timings_ms").and_then(Value::as_object) {
        Some(t) if !t.is_empty() => {
            for (phase, ms) in t {
                if ms.as_f64().is_none_or(|v| v.is_nan() || v < 0.0) {
                    errs.push(format!("timings_ms.{phase} is {ms}, not a non-negative number"));
                }
            }
        }
        _ => errs.push("timings_ms missing, empty or not an object".into()),
    }
    // A peak per phase, in MiB: at least the size of the process's code.
    match report.get("peak_mib").and_then(Value::as_object) {
        Some(p) if p.keys().eq(report["timings_ms"].as_object().into_iter().flatten().map(|(k, _)| k)) => {
            for (phase, mib) in p {
                if mib.as_f64().is_none_or(|v| !(1.0..1e6).contains(&v)) {
                    errs.push(format!("peak_mib.{phase} is {mib}, not a plausible size in MiB"));
                }
            }
        }
        other => errs.push(format!("peak_mib {other:?} does not name the phases of timings_ms")),
    }
    match report.pointer("/size/output/file") {
        Some(v) => {
            let actual = std::fs::metadata(output).map(|m| m.len()).ok();
            if v.as_u64() != actual {
                errs.push(format!("size.output.file is {v}, {} has {actual:?} bytes", output.display()));
            }
            let text = report.pointer("/size/output/sections/.text").and_then(Value::as_u64);
            if !text.is_some_and(|t| t > 0 && Some(t) < actual) {
                errs.push(format!("size.output.sections[.text] is {text:?} for a {actual:?}-byte output"));
            }
        }
        None => errs.push("size.output.file missing".into()),
    }
    // One `calls` entry per call site, agreeing with the counts.
    match report.get("calls").and_then(Value::as_array) {
        None => errs.push("calls missing or not an array".into()),
        Some(calls) => {
            let n = |outcome: &str| calls.iter().filter(|c| c["outcome"] == outcome).count() as u64;
            if Some(calls.len() as u64) != counts.get("total").copied() {
                errs.push(format!("calls has {} entries, call_sites.total is {:?}", calls.len(), counts.get("total")));
            }
            if Some(n("indirect")) != counts.get("not_devirtualized").copied() {
                errs.push(format!(
                    "calls has {} indirect entries, not_devirtualized is {:?}",
                    n("indirect"),
                    counts.get("not_devirtualized")
                ));
            }
            if Some(n("single-impl")) != counts.get("single_impl").copied() {
                errs.push(format!(
                    "calls has {} single-impl entries, single_impl is {:?}",
                    n("single-impl"),
                    counts.get("single_impl")
                ));
            }
            for c in calls {
                // An indirect call says why; a closed-set one may say why
                // its slot has no single target; no other call has a reason.
                let reason = c["reason"].as_str().is_some_and(|r| !r.is_empty());
                let ok = match c["outcome"].as_str() {
                    Some("indirect") => reason,
                    Some("closed-set") => true,
                    _ => !reason,
                };
                if !ok {
                    errs.push(format!("an indirect call has a reason, and only it and a closed-set call: {c}"));
                }
            }
        }
    }
    if errs.is_empty() { Ok(()) } else { Err(format!("report invariants:\n  {}", errs.join("\n  "))) }
}

/// Runs a link command that must succeed; returns its output.
pub fn link(cmd: &mut Command, out: &Path) -> Check<Output> {
    let o = run_raw(cmd)?;
    if !o.status.success() {
        return Err(format!(
            "`{}` failed ({})\n--- stdout\n{}--- stderr\n{}",
            show_cmd(cmd),
            o.status,
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    if !out.is_file() {
        return Err(format!("`{}` succeeded but wrote no {}", show_cmd(cmd), out.display()));
    }
    Ok(o)
}

/// The directory is empty (no leftover temporary file or directory).
pub fn expect_empty_dir(dir: &Path, what: &str) -> Check {
    let left = crate::list_dir(dir)?;
    if left.is_empty() { Ok(()) } else { Err(format!("{what}: {} is not empty: {left:?}", dir.display())) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wpd_remarks_parse() {
        let r = parse_wpd_remark("single-impl: devirtualized a call to _ZN1A1fEv (dir/a.cpp:6:16)").unwrap();
        assert_eq!(
            (r.kind.as_str(), r.callee.as_str(), r.loc.as_deref()),
            ("single-impl", "_ZN1A1fEv", Some("a.cpp:6:16"))
        );
        let r = parse_wpd_remark("virtual-const-prop-1-bit: devirtualized a call to _ZN1A1gEv (in main, m.o)").unwrap();
        assert_eq!((r.kind.as_str(), r.loc), ("virtual-const-prop-1-bit", None));
        assert!(parse_wpd_remark("wpd-ld: warning: something").is_none());
        let r = parse_wpd_remark("speculative: guarded direct call to _ZN1A1fEv or _ZN1B1fEv (d/m.cpp:3:4)").unwrap();
        assert_eq!(
            (r.kind.as_str(), r.callee.as_str(), r.loc.as_deref()),
            (SPECULATIVE, "_ZN1A1fEv or _ZN1B1fEv", Some("m.cpp:3:4"))
        );
    }

    #[test]
    fn llvm_remarks_parse() {
        let r = parse_llvm_remark("main.cpp:7:48: single-impl: devirtualized a call to _ZNK6Diesel5modelEv").unwrap();
        assert_eq!(
            (r.kind.as_str(), r.callee.as_str(), r.loc.as_deref()),
            ("single-impl", "_ZNK6Diesel5modelEv", Some("main.cpp:7:48"))
        );
        let r = parse_llvm_remark("b.cpp:10:33: virtual-const-prop: devirtualized a call to ").unwrap();
        assert_eq!((r.kind.as_str(), r.callee.as_str()), ("virtual-const-prop", ""));
        let r = parse_llvm_remark("<unknown>:0:0: single-impl: devirtualized a call to _ZN1A1fEv").unwrap();
        assert_eq!(r.loc, None);
        // The thin link's per-slot summary lines are not call sites.
        assert!(parse_llvm_remark("<unknown>:0:0: devirtualized _ZN1A1fEv").is_none());
    }

    #[test]
    fn yaml_remarks_count_each_site_once() {
        assert_eq!(yaml_remark_name(" '_ZN1A1fEv.llvm.123' "), "_ZN1A1fEv");
        assert_eq!(yaml_remark_name("_ZN3fooEv.llvm.x"), "_ZN3fooEv.llvm.x");
        let doc = |caller: &str, kind: &str| {
            format!(
                "--- !Passed\nPass:            wholeprogramdevirt\nName:            {kind}\nFunction:        {caller}\nArgs:\n  - String:          'devirtualized a call to '\n  - FunctionName:    _ZN1B1fEv\n...\n"
            )
        };
        let dir = crate::temp_dir("yaml-remarks").unwrap();
        // Two backends hold a copy of `inl` (one call each), one has two
        // calls in `main`; a missed remark and another pass do not count.
        let a = dir.path().join("r.thin.1.yaml");
        let b = dir.path().join("r.thin.2.yaml");
        std::fs::write(
            &a,
            doc("inl.llvm.7", "single-impl") + &doc("main", "single-impl") + &doc("main", "single-impl"),
        )
        .unwrap();
        std::fs::write(
            &b,
            doc("inl", "single-impl")
                + &doc("main", "uniform-ret-val")
                + &doc("x", "inline").replace("wholeprogramdevirt", "inline"),
        )
        .unwrap();
        let got = llvm_yaml_devirtualized(&[a, b]).unwrap();
        let key = |c: &str, k: &str, t: &str| (c.to_string(), k.to_string(), t.to_string());
        let want: DevirtualizedSites = [
            (key("inl", "single-impl", "_ZN1B1fEv"), 1),
            (key("main", "single-impl", "_ZN1B1fEv"), 2),
            (key("main", "uniform-ret-val", ""), 1),
        ]
        .into();
        assert_eq!(got, want);
        let report = serde_json::json!({"calls": [
            {"module": "a.o", "function": "inl", "outcome": "single-impl", "target": "_ZN1B1fEv"},
            {"module": "b.o", "function": "inl", "outcome": "single-impl", "target": "_ZN1B1fEv"},
            {"module": "a.o", "function": "main", "outcome": "speculative", "target": null},
            {"module": "a.o", "function": "main", "outcome": "indirect", "target": null},
        ]});
        assert_eq!(report_devirtualized(&report), [(key("inl", "single-impl", "_ZN1B1fEv"), 1)].into());
    }

    #[test]
    fn location_multisets() {
        let a = [parse_wpd_remark("single-impl: devirtualized a call to f (x.cpp:1:2)").unwrap()];
        let b = [
            parse_llvm_remark("x.cpp:1:2: single-impl: devirtualized a call to f").unwrap(),
            parse_llvm_remark("x.cpp:1:2: single-impl: devirtualized a call to f").unwrap(),
        ];
        assert_eq!(missing_locations(&locations(&b, Some("single-impl")), &locations(&a, None)), ["x.cpp:1:2 (x1)"]);
        assert!(missing_locations(&locations(&a, None), &locations(&b, None)).is_empty());
    }
}
