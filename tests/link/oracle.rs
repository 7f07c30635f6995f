//! The real linker as the oracle of what a link loads.
//!
//! wpd-ld decides itself which archive members and shared libraries a link
//! loads (its resolution) and reports the result in the report's
//! `link_model.loaded`. The same link made by a real linker tells what that
//! linker loads; the two lists must agree. Each linker says it in its own
//! way, on a link of the *original* inputs (bitcode through the linker's
//! own LTO, not wpd-ld's native replacements, whose paths are temporary):
//!
//! - lld (`--trace`, on stdout): one input a line in the order lld parses
//!   them, archive members as `archive(member)` (the stored name; for a thin
//!   archive the member's path relative to the archive's folder). A
//!   `--thinlto-index-only` link prints the same list without running the
//!   LTO backends (only archive members that code generation itself would
//!   call, such as libgcc helpers, are missing).
//! - GNU ld (`-t -t`, with the LLVMgold plugin for bitcode): every file it
//!   opens (archives and linker scripts too, several times when groups
//!   rescan them), members as `(archive)member`, thin archive members as
//!   their own paths, and the plugin's temporary `lto-llvm-*.o` objects.
//! - gold (`--trace`): files and members it reads itself, members as
//!   `archive(member)`, but never the bitcode files the LLVMgold plugin
//!   claims. Those come from the plugin's `thinlto-index-only=LIST` file,
//!   which names every claimed module (an archive member as
//!   `<archive>.llvm.<data offset>.<source file>`). The plugin ends the link
//!   once the index is written, so gold's list has no order and lacks
//!   members only code generation asks for.
//!
//! Entries are normalized before comparison: paths made absolute and
//! canonical (relative ones against the link's folder), archive members as
//! (archive, stored name) — for a thin archive (archive, canonical member
//! path) —, files classified by their contents (ELF relocatable or bitcode:
//! object; ELF shared object: shared library), and archives and linker
//! scripts themselves dropped (a linker lists them when it opens them, not
//! because it loads them), as are repeats (lld lists a library once per
//! `-l`).

use crate::{CLANGXX, Check, read, run_raw, show_cmd};
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A real linker whose view is compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Flavor {
    Lld,
    Bfd,
    Gold,
}

impl Flavor {
    /// The report's spelling (`link_model.flavor`).
    pub fn name(self) -> &'static str {
        match self {
            Flavor::Lld => "lld",
            Flavor::Bfd => "bfd",
            Flavor::Gold => "gold",
        }
    }

    /// From the report's spelling.
    pub fn from_name(s: &str) -> Option<Flavor> {
        [Flavor::Lld, Flavor::Bfd, Flavor::Gold].into_iter().find(|f| f.name() == s)
    }

    /// The flavor of a `--wpd-linker=PATH` value, from its file name
    /// (`ld.bfd`/`ld` is GNU ld, `ld.gold` gold, anything else lld).
    pub fn of_linker(path: &str) -> Flavor {
        let name = path.rsplit('/').next().unwrap_or(path);
        if name.contains("gold") {
            Flavor::Gold
        } else if name == "ld" || name.contains("bfd") {
            Flavor::Bfd
        } else {
            Flavor::Lld
        }
    }

    /// The flavor of a wpd-ld link with these flags (`-Wl,--wpd-linker=`).
    pub fn of_flags<S: AsRef<str>>(flags: &[S]) -> Flavor {
        flags
            .iter()
            .filter_map(|f| f.as_ref().strip_prefix("-Wl,--wpd-linker="))
            .next_back()
            .map_or(Flavor::Lld, Flavor::of_linker)
    }

    /// How the linker names itself in messages.
    pub fn linker(self) -> &'static str {
        match self {
            Flavor::Lld => "ld.lld",
            Flavor::Bfd => "GNU ld",
            Flavor::Gold => "gold",
        }
    }

    /// Whether its list is in load order (gold's is not: see the module
    /// documentation).
    pub fn ordered(self) -> bool {
        self != Flavor::Gold
    }
}

/// One input a link loads, normalized.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Loaded {
    /// A relocatable object or bitcode file given as a file.
    Object(PathBuf),
    /// An archive member: the canonical archive and the member (its stored
    /// name; for a thin archive the member's canonical path).
    Member(PathBuf, String),
    /// A shared library.
    Shared(PathBuf),
    /// An entry naming no file (shown as given).
    Unknown(String),
}

impl fmt::Display for Loaded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Loaded::Object(p) | Loaded::Shared(p) => write!(f, "{}", p.display()),
            Loaded::Member(a, m) => write!(f, "{}({m})", a.display()),
            Loaded::Unknown(s) => write!(f, "{s} (no such file)"),
        }
    }
}

/// What one side says a link loaded.
#[derive(Debug, Clone)]
pub struct LinkView {
    pub flavor: Flavor,
    /// Normalized, repeats removed, in the order given.
    pub loaded: Vec<Loaded>,
    /// Each entry as the side spelled it (first occurrence).
    pub shown: Vec<String>,
}

impl LinkView {
    /// From `(entry, as spelled)` pairs.
    fn new(flavor: Flavor, entries: Vec<(Loaded, String)>) -> LinkView {
        let mut seen = BTreeSet::new();
        let (loaded, shown) = entries.into_iter().filter(|(e, _)| seen.insert(e.clone())).unzip();
        LinkView { flavor, loaded, shown }
    }

    /// How the side spelled an entry.
    fn spelled(&self, e: &Loaded) -> String {
        match self.loaded.iter().position(|x| x == e) {
            Some(i) if self.shown[i] != e.to_string() => format!("{} (= {e})", self.shown[i]),
            _ => e.to_string(),
        }
    }

    /// `(objects, members, shared libraries)`.
    pub fn counts(&self) -> (usize, usize, usize) {
        let n = |f: fn(&Loaded) -> bool| self.loaded.iter().filter(|e| f(e)).count();
        (
            n(|e| matches!(e, Loaded::Object(_))),
            n(|e| matches!(e, Loaded::Member(..))),
            n(|e| matches!(e, Loaded::Shared(_))),
        )
    }

    /// One entry a line, indented, as the side spelled it.
    pub fn listing(&self) -> String {
        self.shown.iter().map(|e| format!("    {e}\n")).collect()
    }
}

// ---------------------------------------------------------------------------
// Files and archives

/// What a file is, from its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Object,
    Shared,
    Archive {
        thin: bool,
    },
    /// Anything else a linker reads: a linker script.
    Script,
}

fn kind(path: &Path) -> Option<Kind> {
    use std::io::Read;
    let mut head = [0u8; 18];
    let mut f = std::fs::File::open(path).ok()?;
    let n = f.read(&mut head).ok()?;
    let head = &head[..n];
    Some(if head.starts_with(b"\x7fELF") && n >= 18 {
        match u16::from_le_bytes([head[16], head[17]]) {
            3 => Kind::Shared,
            _ => Kind::Object,
        }
    } else if head.starts_with(b"BC\xc0\xde") || head.starts_with(&[0xde, 0xc0, 0x17, 0x0b]) {
        Kind::Object
    } else if head.starts_with(b"!<arch>\n") {
        Kind::Archive { thin: false }
    } else if head.starts_with(b"!<thin>\n") {
        Kind::Archive { thin: true }
    } else {
        Kind::Script
    })
}

/// `cwd/p`, canonical, if it exists.
fn canon(cwd: &Path, p: &str) -> Option<PathBuf> {
    cwd.join(p).canonicalize().ok()
}

/// One member of an archive.
#[derive(Debug, Clone)]
pub struct ArMember {
    /// The stored name (GNU long names resolved, trailing `/` removed).
    pub name: String,
    /// Offset of its header in the archive.
    pub header: usize,
    /// Offset of its data (for a thin archive, where the data would be).
    pub data: usize,
}

/// The members of a GNU (or BSD) `ar` archive, regular or thin, in order;
/// `None` when the file is not an archive.
pub fn ar_members(path: &Path) -> Check<Option<(bool, Vec<ArMember>)>> {
    let bytes = read(path)?;
    let thin = if bytes.starts_with(b"!<arch>\n") {
        false
    } else if bytes.starts_with(b"!<thin>\n") {
        true
    } else {
        return Ok(None);
    };
    let bad = |why: &str| format!("{}: malformed archive ({why})", path.display());
    let mut members = Vec::new();
    let mut long_names: &[u8] = &[];
    let mut at = 8;
    while at + 60 <= bytes.len() {
        let h = &bytes[at..at + 60];
        if &h[58..60] != b"`\n" {
            return Err(bad("bad header magic"));
        }
        let field = |r: std::ops::Range<usize>| String::from_utf8_lossy(&h[r]).trim_end().to_string();
        let raw = field(0..16);
        let size: usize = field(48..58).parse().map_err(|_| bad("bad size"))?;
        let mut data = at + 60;
        let special = raw == "/" || raw == "/SYM64/" || raw == "//" || raw == "__.SYMDEF" || raw == "__.SYMDEF SORTED";
        let name = if raw == "//" {
            long_names = bytes.get(data..data + size).ok_or_else(|| bad("long name table past the end"))?;
            String::new()
        } else if let Some(off) =
            raw.strip_prefix('/').filter(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()))
        {
            let off: usize = off.parse().map_err(|_| bad("bad long name offset"))?;
            let rest = long_names.get(off..).ok_or_else(|| bad("long name offset past the table"))?;
            let end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
            let n = String::from_utf8_lossy(&rest[..end]).into_owned();
            n.strip_suffix('/').map(str::to_string).unwrap_or(n)
        } else if let Some(len) = raw.strip_prefix("#1/") {
            let len: usize = len.parse().map_err(|_| bad("bad BSD name length"))?;
            let n = bytes.get(data..data + len).ok_or_else(|| bad("BSD name past the end"))?;
            data += len;
            String::from_utf8_lossy(n).trim_end_matches('\0').to_string()
        } else {
            raw.strip_suffix('/').unwrap_or(&raw).to_string()
        };
        if !special {
            members.push(ArMember { name, header: at, data });
        }
        // A thin archive stores only its symbol and name tables.
        let stored = !thin || special;
        at = at + 60 + if stored { size } else { 0 };
        at += at % 2;
    }
    Ok(Some((thin, members)))
}

/// Archives read so far, by canonical path.
#[derive(Default)]
struct Archives {
    read: HashMap<PathBuf, Option<(bool, Vec<ArMember>)>>,
}

impl Archives {
    fn get(&mut self, archive: &Path) -> Option<&(bool, Vec<ArMember>)> {
        self.read.entry(archive.to_path_buf()).or_insert_with(|| ar_members(archive).ok().flatten()).as_ref()
    }

    /// The normalized member `name` of `archive` (canonical).
    fn member(&mut self, archive: &Path, name: &str) -> Loaded {
        let thin = self.get(archive).is_some_and(|a| a.0);
        Loaded::Member(archive.to_path_buf(), if thin { thin_member_path(archive, name) } else { name.to_string() })
    }

    /// Thin archives among `candidates`: each member's canonical path to
    /// its normalized entry.
    fn thin_members(&mut self, candidates: &[PathBuf]) -> HashMap<PathBuf, Loaded> {
        let mut m = HashMap::new();
        for a in candidates {
            if let Some((true, members)) = self.get(a).cloned() {
                for mem in members {
                    let p = PathBuf::from(thin_member_path(a, &mem.name));
                    m.entry(p).or_insert_with(|| Loaded::Member(a.clone(), thin_member_path(a, &mem.name)));
                }
            }
        }
        m
    }
}

/// A thin archive member's canonical path (as given when it is missing).
fn thin_member_path(archive: &Path, name: &str) -> String {
    let dir = archive.parent().unwrap_or(Path::new("/"));
    let p = dir.join(name);
    p.canonicalize().unwrap_or(p).display().to_string()
}

/// Normalizes a file the linker or wpd-ld names (`None`: an archive or a
/// linker script, which are opened, not loaded).
fn file_entry(cwd: &Path, s: &str, thin: &HashMap<PathBuf, Loaded>) -> Option<Loaded> {
    let Some(p) = canon(cwd, s) else { return Some(Loaded::Unknown(s.to_string())) };
    if let Some(m) = thin.get(&p) {
        return Some(m.clone());
    }
    match kind(&p) {
        Some(Kind::Object) => Some(Loaded::Object(p)),
        Some(Kind::Shared) => Some(Loaded::Shared(p)),
        Some(Kind::Archive { .. } | Kind::Script) => None,
        None => Some(Loaded::Unknown(s.to_string())),
    }
}

/// `archive(member)` (lld, gold, wpd-ld): the archive part is the longest
/// prefix before a `(` that names an existing file.
fn split_member(cwd: &Path, s: &str) -> Option<(PathBuf, String)> {
    let inner = s.strip_suffix(')')?;
    inner.match_indices('(').find_map(|(i, _)| {
        let a = canon(cwd, &inner[..i]).filter(|a| a.is_file())?;
        Some((a, inner[i + 1..].to_string()))
    })
}

/// `(archive)member` (GNU ld).
fn split_bfd_member(cwd: &Path, s: &str) -> Option<(PathBuf, String)> {
    let inner = s.strip_prefix('(')?;
    inner.match_indices(')').find_map(|(i, _)| {
        let a = canon(cwd, &inner[..i]).filter(|a| a.is_file())?;
        Some((a, inner[i + 1..].to_string()))
    })
}

/// Archives a link's arguments may name: positional paths and
/// `lib<name>.a` in the `-L` folders for each `-l<name>` (`-Wl,`
/// arguments split at commas). Used to recognize thin archive members,
/// which GNU ld and the gold plugin print as plain paths.
pub fn named_archives(cwd: &Path, args: &[OsString]) -> Vec<PathBuf> {
    let mut words = Vec::new();
    for a in args {
        let a = a.to_string_lossy();
        match a.strip_prefix("-Wl,") {
            Some(w) => words.extend(w.split(',').map(str::to_string)),
            None => words.push(a.into_owned()),
        }
    }
    let (mut dirs, mut libs, mut out) = (Vec::new(), Vec::new(), Vec::new());
    for w in &words {
        if let Some(d) = w.strip_prefix("-L") {
            dirs.push(cwd.join(d));
        } else if let Some(l) = w.strip_prefix("-l") {
            libs.push(l.to_string());
        } else if !w.starts_with('-') {
            out.extend(canon(cwd, w));
        }
    }
    for l in &libs {
        let file = l.strip_prefix(':').map_or(format!("lib{l}.a"), str::to_string);
        out.extend(dirs.iter().filter_map(|d| d.join(&file).canonicalize().ok()));
    }
    out.retain(|p| matches!(kind(p), Some(Kind::Archive { .. })));
    out
}

// ---------------------------------------------------------------------------
// The linkers' views

/// Whether a file the plugin made (GNU ld and gold list the LTO objects).
fn plugin_temporary(s: &str) -> bool {
    s.rsplit('/').next().is_some_and(|n| n.starts_with("lto-llvm-") && n.ends_with(".o"))
}

/// Member spellings a side uses.
#[derive(Clone, Copy, PartialEq)]
enum Spelling {
    /// `archive(member)`: lld, gold, wpd-ld.
    Parens,
    /// `(archive)member`: GNU ld.
    Bfd,
}

/// The normalized entry of one line (`None`: nothing loaded, e.g. an
/// archive or a linker script).
fn entry(cwd: &Path, line: &str, how: Spelling, ar: &mut Archives, thin: &HashMap<PathBuf, Loaded>) -> Option<Loaded> {
    let member = match how {
        Spelling::Parens => split_member(cwd, line),
        Spelling::Bfd => split_bfd_member(cwd, line),
    };
    match member {
        Some((a, m)) => Some(ar.member(&a, &m)),
        None => file_entry(cwd, line, thin),
    }
}

/// Non-empty lines.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines().map(str::trim_end).filter(|l| !l.is_empty())
}

/// lld's `--trace` output (stdout of the link), run in `cwd`. lld prints
/// remarks (`file:line:col: ...`) on stdout too: a line that names no file
/// and reads like a diagnostic is skipped.
pub fn parse_lld_trace(cwd: &Path, stdout: &str) -> LinkView {
    let mut ar = Archives::default();
    let mut entries = Vec::new();
    for line in lines(stdout) {
        match entry(cwd, line, Spelling::Parens, &mut ar, &HashMap::new()) {
            Some(Loaded::Unknown(_)) if line.contains(": ") => {}
            Some(e) => entries.push((e, line.to_string())),
            None => {}
        }
    }
    LinkView::new(Flavor::Lld, entries)
}

/// GNU ld's `-t -t` output, run in `cwd` with `args` (which name the thin
/// archives whose members GNU ld prints as plain paths).
pub fn parse_bfd_trace(cwd: &Path, stdout: &str, args: &[OsString]) -> LinkView {
    let mut ar = Archives::default();
    let mut candidates = named_archives(cwd, args);
    candidates
        .extend(lines(stdout).filter_map(|l| canon(cwd, l)).filter(|p| matches!(kind(p), Some(Kind::Archive { .. }))));
    let thin = ar.thin_members(&candidates);
    let mut entries = Vec::new();
    for line in lines(stdout).filter(|l| !plugin_temporary(l)) {
        entries.extend(entry(cwd, line, Spelling::Bfd, &mut ar, &thin).map(|e| (e, line.to_string())));
    }
    LinkView::new(Flavor::Bfd, entries)
}

/// gold's `--trace` output plus the LLVMgold plugin's
/// `thinlto-index-only` list of claimed modules, run in `cwd` with `args`.
/// gold spells a native thin archive member `archive(./dir/m.o)`, the
/// plugin a bitcode one by its path.
pub fn parse_gold(cwd: &Path, stdout: &str, claimed: &str, args: &[OsString]) -> LinkView {
    let mut ar = Archives::default();
    let thin = ar.thin_members(&named_archives(cwd, args));
    let mut entries = Vec::new();
    for line in lines(stdout).filter(|l| !plugin_temporary(l)) {
        entries.extend(entry(cwd, line, Spelling::Parens, &mut ar, &thin).map(|e| (e, line.to_string())));
    }
    for line in lines(claimed) {
        let e = match gold_claimed_member(cwd, line, &mut ar) {
            Some(m) => m,
            None => file_entry(cwd, line, &thin).unwrap_or_else(|| Loaded::Unknown(line.to_string())),
        };
        entries.push((e, line.to_string()));
    }
    LinkView::new(Flavor::Gold, entries)
}

/// `<archive>.llvm.<data offset>.<source>`: LLVMgold's name of a claimed
/// archive member.
fn gold_claimed_member(cwd: &Path, s: &str, ar: &mut Archives) -> Option<Loaded> {
    s.match_indices(".llvm.").find_map(|(i, _)| {
        let a = canon(cwd, &s[..i]).filter(|a| a.is_file())?;
        let rest = &s[i + 6..];
        let digits = rest.split('.').next()?;
        let off: usize = digits.parse().ok()?;
        let (_, members) = ar.get(&a)?;
        let m = members.iter().find(|m| m.data == off)?.name.clone();
        Some(ar.member(&a, &m))
    })
}

/// wpd-ld's view: the report's `link_model` (`loaded` entries are paths as
/// wpd-ld opened them, relative to `cwd`, or `archive(member)`).
pub fn from_report(report: &Value, cwd: &Path) -> Check<LinkView> {
    let lm = report.get("link_model").ok_or("report has no link_model")?;
    let flavor = lm.get("flavor").and_then(Value::as_str).ok_or("report: link_model.flavor missing or not a string")?;
    let flavor = Flavor::from_name(flavor).ok_or_else(|| format!("report: unknown link_model.flavor {flavor:?}"))?;
    let loaded =
        lm.get("loaded").and_then(Value::as_array).ok_or("report: link_model.loaded missing or not an array")?;
    if !lm.get("outside_refs_known").is_some_and(Value::is_boolean) {
        return Err("report: link_model.outside_refs_known missing or not a boolean".into());
    }
    let mut ar = Archives::default();
    let mut entries = Vec::new();
    for e in loaded {
        let s = e.as_str().ok_or_else(|| format!("report: link_model.loaded entry {e} is not a string"))?;
        entries.extend(entry(cwd, s, Spelling::Parens, &mut ar, &HashMap::new()).map(|e| (e, s.to_string())));
    }
    Ok(LinkView::new(flavor, entries))
}

// ---------------------------------------------------------------------------
// Oracle links

/// The real linker's own link of `args` (inputs and link flags, without
/// wpd-ld's or LTO options) in `dir`: `clang++-19 -O2 -flto=thin
/// -fwhole-program-vtables -fuse-ld=<flavor>` plus the flavor's trace
/// options. `index_only`: lld stops after the thin link
/// (`--thinlto-index-only`); gold always does (see the module
/// documentation). `out` is the output (absent after an index-only link);
/// `label` names the plugin's list file beside it.
pub fn oracle_command(flavor: Flavor, dir: &Path, args: &[OsString], out: &Path, index_only: bool) -> Command {
    let mut cmd = Command::new(CLANGXX);
    cmd.current_dir(dir).args(super::LINK_FLAGS).arg(format!("-fuse-ld={}", flavor.name()));
    let list = claimed_list(out);
    match flavor {
        Flavor::Lld => {
            cmd.arg("-Wl,--trace");
            if index_only {
                cmd.arg(format!("-Wl,--thinlto-index-only={}", list.display()));
            }
        }
        Flavor::Bfd => {
            cmd.arg("-Wl,-t,-t");
        }
        Flavor::Gold => {
            cmd.arg("-Wl,--trace").arg(format!("-Wl,-plugin-opt,thinlto-index-only={}", list.display()));
            // LLVMgold ends an index-only link before its cleanup hook runs,
            // leaving its `lto-llvm-*.o` temporaries behind: keep them in the
            // link's folder, not in the machine's /tmp.
            cmd.env("TMPDIR", dir);
        }
    }
    cmd.args(args).arg("-o").arg(out);
    cmd
}

fn claimed_list(out: &Path) -> PathBuf {
    let mut s = out.as_os_str().to_owned();
    s.push(".oracle-modules");
    PathBuf::from(s)
}

/// Runs [`oracle_command`] and parses the linker's answer.
pub fn oracle_link(flavor: Flavor, dir: &Path, args: &[OsString], out: &Path, index_only: bool) -> Check<LinkView> {
    let mut cmd = oracle_command(flavor, dir, args, out, index_only);
    let o = run_raw(&mut cmd)?;
    if !o.status.success() {
        return Err(format!(
            "oracle link `{}` failed ({})\n--- stdout\n{}--- stderr\n{}",
            show_cmd(&cmd),
            o.status,
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    let stdout = String::from_utf8_lossy(&o.stdout);
    Ok(match flavor {
        Flavor::Lld => parse_lld_trace(dir, &stdout),
        Flavor::Bfd => parse_bfd_trace(dir, &stdout, args),
        Flavor::Gold => {
            let claimed = String::from_utf8_lossy(&read(&claimed_list(out))?).into_owned();
            parse_gold(dir, &stdout, &claimed, args)
        }
    })
}

/// Whether a link flag can change what the link loads: wpd-ld's own
/// options, LTO and code generation options cannot.
pub fn affects_loading(flag: &str) -> bool {
    !["-Wl,--wpd-", "-Wl,--lto-", "-Wl,--no-lto-", "-Wl,--thinlto-", "-Wl,-plugin-opt", "-Wl,-mllvm"]
        .iter()
        .any(|p| flag.starts_with(p))
}

// ---------------------------------------------------------------------------
// Comparison

/// What one comparison covered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Compared {
    pub objects: usize,
    pub members: usize,
    pub libraries: usize,
}

/// Compares wpd-ld's view with the real linker's: the same objects,
/// archive members and shared libraries, and, when the linker's list is in
/// load order, the same order. The error shows both lists.
pub fn compare(ours: &LinkView, theirs: &LinkView) -> Result<Compared, String> {
    let both = || {
        format!(
            "wpd-ld (link_model.loaded, flavor {}):\n{}{} ({}):\n{}",
            ours.flavor.name(),
            ours.listing(),
            theirs.flavor.linker(),
            if theirs.flavor.ordered() { "load order" } else { "no order" },
            theirs.listing()
        )
    };
    if ours.flavor != theirs.flavor {
        return Err(format!(
            "link_model.flavor is {}, the link used {}\n{}",
            ours.flavor.name(),
            theirs.flavor.name(),
            both()
        ));
    }
    let a: BTreeSet<&Loaded> = ours.loaded.iter().collect();
    let b: BTreeSet<&Loaded> = theirs.loaded.iter().collect();
    if a != b {
        let only = |x: &BTreeSet<&Loaded>, y: &BTreeSet<&Loaded>, v: &LinkView| {
            x.difference(y).map(|e| format!("    {}\n", v.spelled(e))).collect::<String>()
        };
        return Err(format!(
            "wpd-ld's resolution loads other inputs than {}:\nonly wpd-ld:\n{}only {}:\n{}\n{}",
            theirs.flavor.linker(),
            only(&a, &b, ours),
            theirs.flavor.linker(),
            only(&b, &a, theirs),
            both()
        ));
    }
    if theirs.flavor.ordered() && ours.loaded != theirs.loaded {
        let at = ours.loaded.iter().zip(&theirs.loaded).position(|(x, y)| x != y).unwrap_or(0);
        return Err(format!(
            "wpd-ld's resolution loads the inputs {} loads, in another order (first difference at entry {})\n{}",
            theirs.flavor.linker(),
            at + 1,
            both()
        ));
    }
    let (objects, members, libraries) = theirs.counts();
    Ok(Compared { objects, members, libraries })
}

/// Entries of a view by kind, for summaries: `3 objects, 2 members, 7
/// shared libraries`.
pub fn describe(view: &LinkView) -> String {
    let (o, m, l) = view.counts();
    let unknown = view.loaded.len() - o - m - l;
    let mut s = format!("{o} objects, {m} members, {l} shared libraries");
    if unknown > 0 {
        s.push_str(&format!(", {unknown} unknown"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gnu_archive(members: &[(&str, &[u8])]) -> Vec<u8> {
        let mut out = b"!<arch>\n".to_vec();
        let mut names = String::new();
        let mut idx = Vec::new();
        for (n, _) in members {
            idx.push(names.len());
            names.push_str(n);
            names.push_str("/\n");
        }
        let header = |out: &mut Vec<u8>, name: &str, size: usize| {
            out.extend(format!("{name:<16}{:<12}{:<6}{:<6}{:<8}{size:<10}`\n", 0, 0, 0, 644).as_bytes());
        };
        header(&mut out, "//", names.len());
        out.extend(names.as_bytes());
        if out.len() % 2 == 1 {
            out.push(b'\n');
        }
        for ((_, data), i) in members.iter().zip(idx) {
            header(&mut out, &format!("/{i}"), data.len());
            out.extend(*data);
            if out.len() % 2 == 1 {
                out.push(b'\n');
            }
        }
        out
    }

    #[test]
    fn archives_and_traces() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let obj: &[u8] = b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x01\0rest";
        std::fs::write(d.join("libx.a"), gnu_archive(&[("first_member.o", obj), ("b.o", b"BC\xc0\xde")])).unwrap();
        let (thin, members) = ar_members(&d.join("libx.a")).unwrap().unwrap();
        assert!(!thin);
        assert_eq!(members.iter().map(|m| m.name.as_str()).collect::<Vec<_>>(), ["first_member.o", "b.o"]);
        assert_eq!(members[0].data, members[0].header + 60);
        std::fs::write(d.join("a.o"), obj).unwrap();
        let mut so = obj.to_vec();
        so[16] = 3;
        std::fs::write(d.join("liby.so"), so).unwrap();
        std::fs::write(d.join("libz.so"), "GROUP ( liby.so )").unwrap();
        let lld = parse_lld_trace(d, "a.o\n./libx.a(b.o)\nliby.so\n./libx.a(first_member.o)\nliby.so\n");
        let c = |p: &str| d.canonicalize().unwrap().join(p);
        assert_eq!(
            lld.loaded,
            [
                Loaded::Object(c("a.o")),
                Loaded::Member(c("libx.a"), "b.o".into()),
                Loaded::Shared(c("liby.so")),
                Loaded::Member(c("libx.a"), "first_member.o".into())
            ]
        );
        let bfd = parse_bfd_trace(
            d,
            "a.o\n./libx.a\n(./libx.a)b.o\nlibz.so\nliby.so\n/tmp/lto-llvm-1234.o\n(libx.a)first_member.o\n",
            &[],
        );
        assert_eq!(compare(&LinkView { flavor: Flavor::Bfd, ..lld.clone() }, &bfd).unwrap().members, 2);
        let off = members[1].data;
        let gold = parse_gold(d, "liby.so\n", &format!("a.o\n{}/libx.a.llvm.{off}.b.cpp\n", d.display()), &[]);
        assert_eq!(gold.loaded.len(), 3);
        assert!(gold.loaded.contains(&Loaded::Member(c("libx.a"), "b.o".into())));
        // Order matters for lld, not for gold.
        let mut swapped = lld.clone();
        swapped.loaded.swap(0, 1);
        assert!(compare(&swapped, &lld).unwrap_err().contains("another order"));
        let mut fewer = lld.clone();
        fewer.loaded.pop();
        let e = compare(&fewer, &lld).unwrap_err();
        assert!(e.contains("only ld.lld:\n") && e.contains("first_member.o"), "{e}");
    }

    #[test]
    fn report_view() {
        let dir = tempfile::tempdir().unwrap();
        let r: Value = serde_json::json!({"schema": "wpd-report/2"});
        assert_eq!(from_report(&r, dir.path()).unwrap_err(), "report has no link_model");
        let r: Value =
            serde_json::json!({"link_model": {"flavor": "gold", "loaded": ["nope.o"], "outside_refs_known": true}});
        let v = from_report(&r, dir.path()).unwrap();
        assert_eq!((v.flavor, v.loaded), (Flavor::Gold, vec![Loaded::Unknown("nope.o".into())]));
        assert_eq!(Flavor::of_flags(&["-Wl,--wpd-linker=/usr/bin/ld.bfd"]), Flavor::Bfd);
        assert_eq!(Flavor::of_flags(&["-Wl,--wpd-linker=ld.gold"]), Flavor::Gold);
        assert_eq!(Flavor::of_flags::<&str>(&[]), Flavor::Lld);
        assert!(!affects_loading("-Wl,--wpd-speculate=2") && affects_loading("-Wl,-u,foo"));
    }
}
