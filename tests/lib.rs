//! Shared helpers for the end-to-end harnesses: fixture discovery, compiling
//! fixtures with clang++-19, running `wpd`, and reading its JSON dumps.
//!
//! The harnesses never build `wpd` themselves: `make test` builds it first.
//! They use `$WPD_BIN` when set, else `target/release/wpd` (or
//! `$CARGO_TARGET_DIR/release/wpd`).

pub mod disasm;
pub mod link;

use serde_json::Value;
use std::ffi::OsStr;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Result type of every check: `Err` carries a human-readable failure.
pub type Check<T = ()> = Result<T, String>;

/// The C++ compiler every fixture is built with.
pub const CLANGXX: &str = "clang++-19";
/// The C compiler (for non-bitcode inputs).
pub const CLANG: &str = "clang-19";
/// The bitcode disassembler used for cross-checks.
pub const LLVM_DIS: &str = "llvm-dis-19";
/// The archiver used for bitcode archives.
pub const LLVM_AR: &str = "llvm-ar-19";

/// Flags every fixture object is compiled with (before the fixture's own).
/// `-g` gives call sites locations; `-fdebug-compilation-dir=.` keeps the
/// checkout's absolute path out of the bitcode.
pub const BASE_FLAGS: &[&str] = &["-O2", "-flto=thin", "-fwhole-program-vtables", "-g", "-fdebug-compilation-dir=."];

/// The repository root (the parent of this crate).
pub fn repo_root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.parent().unwrap_or(here).to_path_buf()
}

/// The `wpd` binary under test.
pub fn wpd_bin() -> Check<PathBuf> {
    if let Some(p) = std::env::var_os("WPD_BIN") {
        let p = PathBuf::from(p);
        return if p.is_file() { Ok(p) } else { Err(format!("WPD_BIN={} is not a file", p.display())) };
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|t| if t.is_relative() { repo_root().join(t) } else { t })
        .unwrap_or_else(|| repo_root().join("target"));
    let p = target.join("release").join("wpd");
    if p.is_file() {
        Ok(p)
    } else {
        Err(format!(
            "wpd binary not found at {}: run `make test` (or `cargo build --release -p wpd-cli`), or set WPD_BIN",
            p.display()
        ))
    }
}

/// Renders a command line for messages.
pub fn show_cmd(cmd: &Command) -> String {
    let mut s = String::new();
    if let Some(dir) = cmd.get_current_dir() {
        let _ = write!(s, "(cd {} && ", dir.display());
    }
    s.push_str(&cmd.get_program().to_string_lossy());
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    if cmd.get_current_dir().is_some() {
        s.push(')');
    }
    s
}

/// Runs a command to completion and returns its output, whatever its status.
pub fn run_raw(cmd: &mut Command) -> Check<Output> {
    cmd.output().map_err(|e| format!("cannot run `{}`: {e}", show_cmd(cmd)))
}

/// Runs a command and requires exit status 0.
pub fn run(cmd: &mut Command) -> Check<Output> {
    let out = run_raw(cmd)?;
    if out.status.success() {
        Ok(out)
    } else {
        Err(format!(
            "`{}` failed ({})\n--- stdout\n{}--- stderr\n{}",
            show_cmd(cmd),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// Reads a file with the path in the error.
pub fn read(path: &Path) -> Check<Vec<u8>> {
    std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// Writes a file with the path in the error.
pub fn write(path: &Path, bytes: &[u8]) -> Check {
    std::fs::write(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Creates a directory (and parents).
pub fn mkdir(path: &Path) -> Check {
    std::fs::create_dir_all(path).map_err(|e| format!("cannot create {}: {e}", path.display()))
}

/// Sorted file names in a directory.
pub fn list_dir(dir: &Path) -> Check<Vec<String>> {
    let mut names = Vec::new();
    let rd = std::fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    for entry in rd {
        let entry = entry.map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
        names.push(entry.file_name().to_string_lossy().into_owned());
    }
    names.sort();
    Ok(names)
}

/// A new temporary directory; kept on disk when `WPD_KEEP_TMP` is set.
pub fn temp_dir(label: &str) -> Check<TempDir> {
    let dir = tempfile::Builder::new()
        .prefix(&format!("wpd-{label}-"))
        .tempdir()
        .map_err(|e| format!("cannot create a temporary directory: {e}"))?;
    Ok(TempDir { dir: Some(dir) })
}

/// A temporary directory that `WPD_KEEP_TMP=1` preserves for debugging.
pub struct TempDir {
    dir: Option<tempfile::TempDir>,
}

impl TempDir {
    /// Its path.
    pub fn path(&self) -> &Path {
        self.dir.as_ref().expect("live temp dir").path()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if std::env::var_os("WPD_KEEP_TMP").is_some()
            && let Some(d) = self.dir.take()
        {
            eprintln!("keeping {}", d.keep().display());
        }
    }
}

/// One C++ program under `fixtures/<group>/<name>/`.
#[derive(Debug, Clone)]
pub struct Fixture {
    /// Directory name.
    pub name: String,
    /// Absolute directory.
    pub dir: PathBuf,
    /// `.cpp` file names (relative to `dir`), sorted.
    pub sources: Vec<String>,
    /// Extra clang flags from the `flags` file.
    pub flags: Vec<String>,
    /// Archive name from the `archive` file: every source but `main.cpp`
    /// goes into this bitcode archive.
    pub archive: Option<String>,
}

/// All fixtures of a group (`fixtures/<group>/*/`), sorted by name.
pub fn fixtures(group: &str) -> Check<Vec<Fixture>> {
    let root = repo_root().join("fixtures").join(group);
    let mut out = Vec::new();
    for name in list_dir(&root)? {
        let dir = root.join(&name);
        if dir.is_dir() {
            out.push(load_fixture(&name, &dir)?);
        }
    }
    if out.is_empty() {
        return Err(format!("no fixtures under {}", root.display()));
    }
    Ok(out)
}

/// Reads one fixture directory.
pub fn load_fixture(name: &str, dir: &Path) -> Check<Fixture> {
    let sources: Vec<String> = list_dir(dir)?.into_iter().filter(|n| n.ends_with(".cpp")).collect();
    if sources.is_empty() {
        return Err(format!("fixture {} has no .cpp files", dir.display()));
    }
    let flags_path = dir.join("flags");
    let flags = String::from_utf8(read(&flags_path)?)
        .map_err(|_| format!("{} is not UTF-8", flags_path.display()))?
        .split_whitespace()
        .map(str::to_string)
        .collect();
    let archive_path = dir.join("archive");
    let archive = if archive_path.is_file() {
        let a = String::from_utf8_lossy(&read(&archive_path)?).trim().to_string();
        if !sources.iter().any(|s| s == "main.cpp") {
            return Err(format!("{}: an archive fixture needs main.cpp", dir.display()));
        }
        Some(a)
    } else {
        None
    };
    Ok(Fixture { name: name.to_string(), dir: dir.to_path_buf(), sources, flags, archive })
}

/// A fixture compiled into a directory.
#[derive(Debug, Clone)]
pub struct Built {
    /// What to give `wpd summarize`: plain objects, then the archive if any.
    pub inputs: Vec<PathBuf>,
    /// Every compiled object, including archive members (which live in a
    /// `members/` subdirectory so their file names are the member names).
    pub objects: Vec<PathBuf>,
}

/// Object file name for a source (`a.cpp` -> `a.o`).
pub fn object_name(source: &str) -> String {
    format!("{}.o", source.strip_suffix(".cpp").unwrap_or(source))
}

/// Compiles every source of `fx` into `out` (run from the fixture directory
/// with relative source paths), plus `extra` flags, and builds the archive.
pub fn compile(fx: &Fixture, out: &Path, extra: &[&str]) -> Check<Built> {
    mkdir(out)?;
    let members_dir = out.join("members");
    let mut inputs = Vec::new();
    let mut objects = Vec::new();
    let mut members = Vec::new();
    for src in &fx.sources {
        let in_archive = fx.archive.is_some() && src != "main.cpp";
        let dir = if in_archive { &members_dir } else { out };
        mkdir(dir)?;
        let obj = dir.join(object_name(src));
        run(Command::new(CLANGXX)
            .current_dir(&fx.dir)
            .args(BASE_FLAGS)
            .args(&fx.flags)
            .args(extra)
            .arg("-c")
            .arg(src)
            .arg("-o")
            .arg(&obj))?;
        objects.push(obj.clone());
        if in_archive {
            members.push(obj);
        } else {
            inputs.push(obj);
        }
    }
    if let Some(name) = &fx.archive {
        let lib = out.join(name);
        run(Command::new(LLVM_AR).arg("rcs").arg(&lib).args(&members))?;
        inputs.push(lib);
    }
    Ok(Built { inputs, objects })
}

/// Runs `wpd summarize -o out_dir [args] inputs`, requiring success.
pub fn summarize(inputs: &[PathBuf], out_dir: &Path, args: &[&str]) -> Check<Output> {
    mkdir(out_dir)?;
    let out = run(Command::new(wpd_bin()?).arg("summarize").args(inputs).arg("-o").arg(out_dir).args(args))?;
    if !out.stderr.is_empty() {
        return Err(format!("wpd summarize succeeded but wrote to stderr:\n{}", String::from_utf8_lossy(&out.stderr)));
    }
    Ok(out)
}

/// The `.wpds` file names `wpd summarize` must write for `inputs`: one per
/// object, one per member of an archive (`libx.a(m.o).wpds`).
pub fn expected_summaries(built: &Built) -> Check<Vec<String>> {
    let mut names = Vec::new();
    for input in &built.inputs {
        let file = file_name(input);
        if file.ends_with(".a") {
            for m in archive_members(input)? {
                names.push(format!("{file}({m}).wpds"));
            }
        } else {
            names.push(format!("{file}.wpds"));
        }
    }
    names.sort();
    Ok(names)
}

/// Member names of an archive, in order (via `llvm-ar-19 t`).
pub fn archive_members(lib: &Path) -> Check<Vec<String>> {
    let out = run(Command::new(LLVM_AR).arg("t").arg(lib))?;
    Ok(String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).filter(|l| !l.is_empty()).collect())
}

/// The object a summary was made from: `x.o.wpds` -> `x.o` among the
/// inputs, `libx.a(m.o).wpds` -> the compiled member `m.o`.
pub fn object_for_summary(built: &Built, summary_name: &str) -> Check<PathBuf> {
    let stem = summary_name.strip_suffix(".wpds").ok_or_else(|| format!("{summary_name}: not a .wpds name"))?;
    let wanted = match stem.find(".a(") {
        Some(i) if stem.ends_with(')') => &stem[i + 3..stem.len() - 1],
        _ => stem,
    };
    built
        .objects
        .iter()
        .find(|o| file_name(o) == wanted)
        .cloned()
        .ok_or_else(|| format!("no compiled object for summary {summary_name}"))
}

/// A path's last component as a string.
pub fn file_name(p: &Path) -> String {
    p.file_name().unwrap_or(OsStr::new("")).to_string_lossy().into_owned()
}

/// Runs `wpd dump` and parses its JSON. Also requires the output to be
/// canonical: exactly the (compact or pretty) serialization with sorted keys.
pub fn dump(wpds: &Path) -> Check<Value> {
    let out = run(Command::new(wpd_bin()?).arg("dump").arg(wpds))?;
    let text =
        String::from_utf8(out.stdout).map_err(|_| format!("wpd dump {}: stdout is not UTF-8", wpds.display()))?;
    let value: Value =
        serde_json::from_str(&text).map_err(|e| format!("wpd dump {}: stdout is not JSON: {e}", wpds.display()))?;
    let trimmed = text.trim_end_matches('\n');
    let pretty = serde_json::to_string_pretty(&value).expect("JSON value serializes");
    let compact = serde_json::to_string(&value).expect("JSON value serializes");
    if trimmed != pretty && trimmed != compact {
        return Err(format!(
            "wpd dump {}: output is not canonical JSON (keys sorted, serde_json layout)",
            wpds.display()
        ));
    }
    Ok(value)
}

/// Makes a dump independent of where the fixture was built: `module.path`
/// and `module.name` lose the build-directory prefix, and the content hash
/// (and its prefix inside `local.<n>.<hex>` type ids) becomes a placeholder,
/// so goldens change only when the summary's content does.
pub fn normalize(mut v: Value, build_dir: &Path) -> Value {
    let mut prefixes = vec![format!("{}/", build_dir.display())];
    if let Ok(c) = build_dir.canonicalize() {
        prefixes.push(format!("{}/", c.display()));
    }
    let mut hash16 = None;
    if let Some(module) = v.get_mut("module").and_then(Value::as_object_mut) {
        for key in ["path", "name"] {
            if let Some(Value::String(s)) = module.get_mut(key) {
                for p in &prefixes {
                    *s = s.replace(p.as_str(), "");
                }
            }
        }
        if let Some(Value::String(h)) = module.get_mut("hash") {
            if h.len() >= 16 {
                hash16 = Some(h[..16].to_string());
            }
            *h = "<hash>".to_string();
        }
    }
    if let Some(h) = hash16 {
        replace_strings(&mut v, &h, "<hash16>");
    }
    v
}

fn replace_strings(v: &mut Value, from: &str, to: &str) {
    match v {
        Value::String(s) if s.contains(from) => *s = s.replace(from, to),
        Value::Array(a) => a.iter_mut().for_each(|x| replace_strings(x, from, to)),
        Value::Object(o) => o.values_mut().for_each(|x| replace_strings(x, from, to)),
        _ => {}
    }
}

/// Pretty JSON with a trailing newline (the golden file format).
pub fn to_golden(v: &Value) -> String {
    let mut s = serde_json::to_string_pretty(v).expect("JSON value serializes");
    s.push('\n');
    s
}

/// A short line-based diff for failure messages (first differing lines).
pub fn short_diff(expected: &str, actual: &str) -> String {
    let e: Vec<&str> = expected.lines().collect();
    let a: Vec<&str> = actual.lines().collect();
    let first = e.iter().zip(&a).position(|(x, y)| x != y).unwrap_or(e.len().min(a.len()));
    let mut s = format!("first difference at line {} (expected {} lines, got {}):\n", first + 1, e.len(), a.len());
    let lo = first.saturating_sub(3);
    for i in lo..(first + 8) {
        match (e.get(i), a.get(i)) {
            (Some(x), Some(y)) if x == y => {
                let _ = writeln!(s, "  {x}");
            }
            (x, y) => {
                if let Some(x) = x {
                    let _ = writeln!(s, "- {x}");
                }
                if let Some(y) = y {
                    let _ = writeln!(s, "+ {y}");
                }
            }
        }
    }
    s
}

/// Field `key` of a JSON object as an array (empty when absent or null).
pub fn array<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key).and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// Field `key` as a string, or an error naming it.
pub fn string<'a>(v: &'a Value, key: &str) -> Check<&'a str> {
    v.get(key).and_then(Value::as_str).ok_or_else(|| format!("field `{key}` missing or not a string in {v}"))
}

/// Field `key` as an unsigned integer, or an error naming it.
pub fn uint(v: &Value, key: &str) -> Check<u64> {
    v.get(key).and_then(Value::as_u64).ok_or_else(|| format!("field `{key}` missing or not an unsigned integer in {v}"))
}

/// `fixtures/demo` compiled as ThinLTO bitcode into `dir`: `main.o`,
/// `shapes.o`.
pub fn demo_objects(dir: &Path) -> Check<Vec<PathBuf>> {
    let mut objects = Vec::new();
    for s in ["main.cpp", "shapes.cpp"] {
        let obj = dir.join(s.replace(".cpp", ".o"));
        run(Command::new(CLANGXX)
            .args(["-O2", "-flto=thin", "-fwhole-program-vtables", "-c"])
            .arg(repo_root().join("fixtures/demo").join(s))
            .arg("-o")
            .arg(&obj))?;
        objects.push(obj);
    }
    Ok(objects)
}

/// What `fixtures/demo` built with `-O0` (into `dir/demo-ref`) prints.
pub fn demo_reference(dir: &Path) -> Check<Vec<u8>> {
    let reference = dir.join("demo-ref");
    run(Command::new(CLANGXX)
        .arg("-O0")
        .args(["main.cpp", "shapes.cpp"].map(|s| repo_root().join("fixtures/demo").join(s)))
        .arg("-o")
        .arg(&reference))?;
    Ok(run(&mut Command::new(&reference))?.stdout)
}
