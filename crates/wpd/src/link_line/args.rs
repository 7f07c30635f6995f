//! A hand-written scanner for ld command lines (GNU ld, gold and lld share
//! the grammar; clap does not fit it): `@response` files, short options with
//! joined or separate values, long options with one or two dashes and `=`
//! or separate values. Every option is looked up in the one table of
//! `options.rs`; an option it does not know may change symbols and is an
//! error (or, with `--wpd-unknown-options=unknown-refs`, passed on with
//! every outside reference unknown). Every item keeps its position; what
//! wpd does not consume passes through untouched.

use super::options::{self, Action, Arity, Spec};
use crate::error::{Error, Result};
use std::path::PathBuf;
use wpd_link::resolve::{Duplicates, StateChange, StateStack};
use wpd_link::{Item as LineItem, LinkLine};

/// One command-line item, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// A positional input file; `line` is its item in [`LinkArgs::line`].
    Input { path: String, line: usize },
    /// `-l` library (`foo` or `:file`) with the raw arguments.
    Library { spec: String, raw: Vec<String>, line: usize },
    /// Passed to the real linker unchanged (an option with its value).
    Pass(Vec<String>),
}

/// What to do with an ld option `options.rs` does not know.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum UnknownOptions {
    /// Stop with an error naming it (the default).
    #[default]
    Error,
    /// Pass it on (as a flag; a value must be joined with `=`) and treat
    /// every outside reference as unknown.
    UnknownRefs,
}

/// wpd-ld's own options (`--wpd-*`) beyond the link's settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WpdOptions {
    pub linker: Option<String>,
    /// `--wpd-remarks-file=`: every remark as LLVM optimization records.
    pub remarks_file: Option<PathBuf>,
    /// `--wpd-size-baseline`: the report also gets the sizes of the same
    /// link without devirtualization (a second link).
    pub size_baseline: bool,
    /// `--wpd-quiet`: no progress line on a terminal.
    pub quiet: bool,
    /// `--wpd-spawn-linker`: run the real linker as its own process even
    /// when it is the lld wpd-ld links as a library.
    pub spawn_linker: bool,
    /// `--wpd-low-memory`: the allocator returns freed pages to the system
    /// at once instead of after 10 ms (see `allocator`).
    pub low_memory: bool,
    pub unknown_options: UnknownOptions,
    /// `--wpd-index-only=DIR`: distributed backends (see
    /// `crate::backends::distributed`).
    pub index_only: Option<PathBuf>,
    /// `--wpd-from-index=DIR`: the final link on the objects of DIR's jobs.
    pub from_index: Option<PathBuf>,
    /// lld's DTLTO options (`--thinlto-distributor=` and the rest).
    pub dtlto: Dtlto,
}

/// lld's integrated distributed ThinLTO options. The link runs the
/// distributor on its backend jobs when `distributor` is set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dtlto {
    /// `--thinlto-distributor=`.
    pub distributor: Option<PathBuf>,
    /// `--thinlto-distributor-arg=`, in order.
    pub distributor_args: Vec<String>,
    /// `--thinlto-remote-compiler=`: the `wpd` executable the jobs run
    /// (where the distributor runs them); by default the one beside wpd-ld.
    pub remote_compiler: Option<PathBuf>,
    /// `--thinlto-remote-compiler-arg=`: arguments before each job's own.
    pub remote_compiler_args: Vec<String>,
}

/// A scanned command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LinkArgs {
    pub items: Vec<Item>,
    /// The link line for resolution: inputs with their state, groups, and
    /// the symbol options (`-u`, `-e`, `--wrap`, `--defsym`, exports).
    pub line: LinkLine,
    pub output: Option<String>,
    pub shared: bool,
    /// `-r`: the output is an object for a later link.
    pub relocatable: bool,
    /// `-pie`: a position-independent executable.
    pub pie: bool,
    pub export_dynamic: bool,
    /// `--dynamic-list`, `--export-dynamic-symbol(-list)` (and, outside
    /// `-shared`, `--version-script`): some symbols are exported; wpd
    /// treats the link as exporting (conservative).
    pub partial_export: bool,
    /// What the link asks of wpd, by the parser the linker plugin uses too
    /// (`-plugin-opt=`, `-mllvm`, and the lld and `--wpd-` spellings of the
    /// same settings).
    pub settings: crate::settings::LinkSettings,
    pub wpd: WpdOptions,
}

impl LinkArgs {
    /// What the link makes, for the policy and code generation.
    pub fn output_kind(&self) -> crate::settings::Output {
        crate::settings::Output {
            shared: self.shared,
            relocatable: self.relocatable,
            pic: self.pie,
            export_dynamic: self.export_dynamic,
            partial_export: self.partial_export,
        }
    }
}

/// Splits a response file the way GNU tools do: whitespace separates,
/// single and double quotes group, backslash escapes.
pub fn split_response(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut have = false;
    let mut quote: Option<char> = None;
    let mut chars = text.chars();
    while let Some(ch) = chars.next() {
        match (quote, ch) {
            (_, '\\') => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                    have = true;
                }
            }
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(ch);
                have = true;
            }
            (None, c) if c.is_whitespace() => {
                if have {
                    out.push(std::mem::take(&mut cur));
                    have = false;
                }
            }
            (None, c) => {
                cur.push(c);
                have = true;
            }
        }
    }
    if have {
        out.push(cur);
    }
    out
}

/// Expands `@file` arguments (recursively, up to a depth limit).
pub fn expand_response_files(args: Vec<String>) -> Result<Vec<String>> {
    fn go(args: Vec<String>, depth: u32, out: &mut Vec<String>) -> Result<()> {
        for a in args {
            match a.strip_prefix('@') {
                Some(path) if !path.is_empty() => {
                    if depth > 16 {
                        return Err(Error::msg(format!("response files nested too deeply at @{path}")));
                    }
                    let text = std::fs::read_to_string(path)
                        .map_err(|e| Error::msg(format!("cannot read response file {path}: {e}")))?;
                    go(split_response(&text), depth + 1, out)?;
                }
                _ => out.push(a),
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    go(args, 0, &mut out)?;
    Ok(out)
}

/// A response file holding `args`, one a line, in the GNU syntax that lld,
/// GNU ld and gold read (and [`split_response`] reads back): an argument
/// with whitespace, a quote or a backslash goes in double quotes, with `\`
/// and `"` escaped. LLVM's reader drops empty arguments: callers keep a
/// command line with one inline.
pub fn response_file_text(args: &[String]) -> String {
    let mut text = String::with_capacity(args.iter().map(|a| a.len() + 3).sum());
    for a in args {
        if a.chars().any(|c| c.is_whitespace() || matches!(c, '"' | '\'' | '\\')) {
            text.push('"');
            for c in a.chars() {
                if matches!(c, '"' | '\\') {
                    text.push('\\');
                }
                text.push(c);
            }
            text.push('"');
        } else {
            text.push_str(a);
        }
        text.push('\n');
    }
    text
}

/// `args` without the options whose action is `action` (with their values):
/// the command line as given, minus those.
pub fn without_action(args: &[String], action: Action) -> Result<Vec<String>> {
    let mut out = Vec::with_capacity(args.len());
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        if !arg.starts_with('-') || arg == "-" {
            out.push(arg.clone());
        } else {
            match scan_option(args, &mut i)? {
                Scanned::Known { spec, .. } if spec.action == action => {}
                Scanned::Known { raw, .. } => out.extend(raw),
                Scanned::Unknown(raw) => out.push(raw),
            }
        }
        i += 1;
    }
    Ok(out)
}

/// One scanned option.
enum Scanned {
    /// An option of the table, with its value and raw arguments.
    Known { spec: &'static Spec, value: Option<String>, raw: Vec<String> },
    /// An option the table does not know (its raw argument).
    Unknown(String),
}

/// Reads the option at `args[*i]` with the table, consuming a separate
/// value when the option takes one. A single-dash argument is a long
/// option when its name is one (`-export-dynamic`, `-soname`), except
/// after `o` (`-ofile` is `-o file`, as in GNU ld), else a short option
/// with its value joined (`-lfoo`, `-L/dir`).
fn scan_option(args: &[String], i: &mut usize) -> Result<Scanned> {
    let arg = &args[*i];
    let (body, double) = match arg.strip_prefix("--") {
        Some(b) => (b, true),
        None => (&arg[1..], false),
    };
    let (name, joined) = match body.split_once('=') {
        Some((n, v)) => (n, Some(v.to_string())),
        None => (body, None),
    };
    let value_of = |spec: &'static Spec, joined: Option<String>, i: &mut usize| -> Result<Scanned> {
        let mut raw = vec![arg.clone()];
        let value = match spec.arity {
            Arity::Flag if joined.is_some() => return Ok(Scanned::Unknown(arg.clone())),
            Arity::Flag => None,
            Arity::Optional | Arity::Prefix => joined,
            Arity::Value => match joined {
                Some(v) => Some(v),
                None => {
                    *i += 1;
                    let v = args.get(*i).ok_or_else(|| Error::msg(format!("option {arg} needs a value")))?;
                    raw.push(v.clone());
                    Some(v.clone())
                }
            },
        };
        Ok(Scanned::Known { spec, value, raw })
    };
    if (double || !body.starts_with('o') || body == "o") && name.chars().count() > 1 {
        if let Some(spec) = options::long(name) {
            return value_of(spec, joined, i);
        }
        if let Some((spec, rest)) = options::prefix(body) {
            return Ok(Scanned::Known { spec, value: Some(rest.to_string()), raw: vec![arg.clone()] });
        }
    }
    if !double
        && let Some(c) = body.chars().next()
        && let Some(spec) = options::short(c)
    {
        let rest = &body[c.len_utf8()..];
        match spec.arity {
            Arity::Flag if rest.is_empty() => return value_of(spec, None, i),
            Arity::Value if !rest.is_empty() => {
                return Ok(Scanned::Known { spec, value: Some(rest.to_string()), raw: vec![arg.clone()] });
            }
            Arity::Value => return value_of(spec, None, i),
            _ => {}
        }
    }
    Ok(Scanned::Unknown(arg.clone()))
}

/// Scans an ld command line (response files already expanded).
pub fn parse(args: &[String]) -> Result<LinkArgs> {
    parse_with(args, UnknownOptions::Error)
}

/// Scans an ld command line, an option `options.rs` does not know doing
/// what `unknown` says unless the line says otherwise
/// (`--wpd-unknown-options=`).
pub fn parse_with(args: &[String], unknown_options: UnknownOptions) -> Result<LinkArgs> {
    let mut out = LinkArgs::default();
    out.wpd.unknown_options = unknown_options;
    let mut state = StateStack::default();
    let mut unknown: Vec<String> = Vec::new();
    // `--allow-multiple-definition` / `-z muldefs` (the last of them and
    // `--no-allow-multiple-definition` wins), `--noinhibit-exec`: what the
    // line does with duplicate symbols (`LinkLine::duplicates`).
    let (mut allow_multiple_definition, mut noinhibit_exec) = (false, false);
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        if !arg.starts_with('-') || arg == "-" {
            let line = out.line.items.len();
            out.line.items.push(LineItem::File { path: arg.clone(), state: state.current });
            out.items.push(Item::Input { path: arg.clone(), line });
            i += 1;
            continue;
        }
        let (spec, value, raw) = match scan_option(args, &mut i)? {
            Scanned::Known { spec, value, raw } => (spec, value, raw),
            Scanned::Unknown(raw) => {
                let body = raw.trim_start_matches('-');
                if body.starts_with("wpd-") {
                    return Err(Error::msg(format!("unknown wpd option {raw}")));
                }
                let lto = ["lto-", "no-lto-", "thinlto-", "opt-remarks"];
                if lto.iter().any(|p| body.starts_with(p)) {
                    return Err(Error::msg(format!("LTO option {raw} is not supported by wpd-ld")));
                }
                unknown.push(raw.clone());
                out.items.push(Item::Pass(vec![raw]));
                i += 1;
                continue;
            }
        };
        i += 1;
        let shown = raw.join(" ");
        let v = value.clone().unwrap_or_default();
        let mut pass = true;
        match spec.action {
            Action::Pass => {}
            Action::Output => out.output = Some(v),
            Action::Library => {
                let line = out.line.items.len();
                out.line.items.push(LineItem::Library { spec: v.clone(), state: state.current });
                out.items.push(Item::Library { spec: v, raw, line });
                continue;
            }
            Action::LibraryPath => out.line.lib_paths.push(v),
            Action::Sysroot => out.line.sysroot = Some(v),
            Action::Script => out.line.items.push(LineItem::Script { path: v, state: state.current }),
            Action::Static(on) => state.apply(StateChange::Static(on))?,
            Action::AsNeeded(on) => state.apply(StateChange::AsNeeded(on))?,
            Action::WholeArchive(on) => state.apply(StateChange::WholeArchive(on))?,
            Action::PushState => state.apply(StateChange::Push)?,
            Action::PopState => state.apply(StateChange::Pop)?,
            Action::GroupStart => out.line.items.push(LineItem::GroupStart),
            Action::GroupEnd => out.line.items.push(LineItem::GroupEnd),
            Action::LibStart => out.line.items.push(LineItem::LibStart),
            Action::LibEnd => out.line.items.push(LineItem::LibEnd),
            Action::Format => match v.as_str() {
                "binary" => state.apply(StateChange::Binary(true))?,
                f if f == "default" || f.starts_with("elf") => state.apply(StateChange::Binary(false))?,
                _ => return Err(Error::msg(format!("input format {v} ({shown}) is not supported by wpd-ld"))),
            },
            Action::Entry => out.line.entry = Some(v),
            Action::Undefined => out.line.undefined.push(v),
            Action::UndefinedGlob => out.line.undefined_globs.push(v),
            Action::RequireDefined => out.line.require_defined.push(v),
            Action::Init => out.line.init = Some(v),
            Action::Fini => out.line.fini = Some(v),
            Action::Wrap => out.line.wraps.push(v),
            Action::Defsym => match v.split_once('=') {
                Some((name, expr)) if !name.is_empty() => {
                    out.line.defsyms.push((name.trim().to_string(), expr.to_string()))
                }
                _ => return Err(Error::msg(format!("invalid {shown} (expected --defsym=SYMBOL=EXPRESSION)"))),
            },
            Action::Shared => out.shared = true,
            Action::Relocatable => out.relocatable = true,
            Action::Pie(on) => out.pie = on,
            Action::ExportDynamic(on) => out.export_dynamic = on,
            Action::Symbolic(kind) => out.line.exports.symbolic = kind,
            Action::FatLtoObjects(on) => {
                out.settings.fat_lto_objects = Some(on);
                pass = false;
            }
            Action::DynamicList(binds) => {
                out.partial_export = true;
                out.line.exports.dynamic_list_binds |= binds && value.is_some();
                match value {
                    Some(file) => out.line.exports.dynamic_lists.push(file),
                    None => out.line.exports.dynamic_symbols.push("*".into()),
                }
            }
            Action::ExcludeLibs => out.line.exports.exclude_libs.push(v),
            Action::ExportDynamicSymbol => {
                out.partial_export = true;
                out.line.exports.dynamic_symbols.push(v);
            }
            Action::VersionScript => out.line.exports.version_scripts.push(v),
            Action::UnknownRefs => {
                out.line.unknown.get_or_insert_with(|| format!("{shown} (which wpd does not model)"));
            }
            Action::Refuse(why) => {
                return Err(Error::msg(format!("linker option {shown} is not supported by wpd-ld: {why}")));
            }
            Action::Z => {
                if options::z_keyword(&v).is_none() {
                    unknown.push(shown.clone());
                }
                if v == "muldefs" {
                    allow_multiple_definition = true;
                }
            }
            Action::MultipleDefinitions(on) => allow_multiple_definition = on,
            Action::NoInhibitExec => noinhibit_exec = true,
            Action::Plugin => pass = false,
            Action::PluginOpt => {
                out.settings.plugin_opt(&v)?;
                pass = false;
            }
            Action::Mllvm => {
                // lld parses -mllvm and -plugin-opt=- options alike.
                out.settings.llvm_option(&v, &format!("-mllvm {v}"))?;
                pass = false;
            }
            Action::LtoO => {
                out.settings.opt_level = crate::settings::parse_opt_level(&v)
                    .ok_or_else(|| Error::msg(format!("invalid optimization level {shown} (0 to 3)")))?;
                pass = false;
            }
            Action::LtoPartitions => {
                crate::settings::check_lto_partitions(&v, &shown)?;
                pass = false;
            }
            Action::LtoCgo => {
                let level = v.parse::<u8>().ok().filter(|&l| l <= 3);
                out.settings.cg_opt_level = Some(
                    level.ok_or_else(|| Error::msg(format!("invalid codegen optimization level {shown} (0 to 3)")))?,
                );
                pass = false;
            }
            Action::LtoWholeProgramVisibility(on) => {
                out.settings.whole_program_visibility = on;
                pass = false;
            }
            Action::LtoValidate(on) => {
                out.settings.validate = on;
                pass = false;
            }
            Action::LtoKnownSafe | Action::WpdKnownSafe => {
                out.settings.known_safe.push(v);
                pass = false;
            }
            Action::LtoSampleProfile => {
                out.settings.profile.sample = Some(PathBuf::from(v));
                pass = false;
            }
            Action::LtoCsGenerate => {
                out.settings.profile.cs_generate = true;
                pass = false;
            }
            Action::LtoCsFile => {
                out.settings.profile.cs_profile = Some(PathBuf::from(v));
                pass = false;
            }
            Action::ThinltoJobs | Action::WpdJobs => {
                out.settings.jobs = crate::parse_jobs(&v).map_err(|e| Error::msg(format!("{shown}: {e}")))?;
                pass = false;
            }
            Action::CacheDir => {
                if v.is_empty() {
                    return Err(Error::msg(format!("{shown} needs a directory")));
                }
                out.settings.cache_dir = Some(PathBuf::from(&v));
                pass = false;
            }
            Action::CachePolicy => {
                out.settings.set_cache_policy(&v, &shown)?;
                pass = false;
            }
            Action::LtoIgnored => pass = false,
            Action::LtoDisableVerify => {
                out.settings.disable_verify = true;
                pass = false;
            }
            Action::WpdLinker => {
                out.wpd.linker = Some(v);
                pass = false;
            }
            Action::WpdReport => {
                out.settings.report = Some(PathBuf::from(v));
                pass = false;
            }
            Action::WpdRemarks => {
                if v.is_empty() {
                    out.settings.remarks = crate::report::Remarks::Passed;
                } else {
                    out.settings.set_remarks(&v, &format!("--wpd-remarks={v}"))?;
                }
                pass = false;
            }
            Action::WpdRemarksFile => {
                out.wpd.remarks_file = Some(PathBuf::from(v));
                pass = false;
            }
            Action::WpdSizeBaseline => {
                out.wpd.size_baseline = true;
                pass = false;
            }
            Action::WpdQuiet => {
                out.wpd.quiet = true;
                pass = false;
            }
            Action::WpdSaveTemps => {
                out.settings.save_temps = true;
                pass = false;
            }
            Action::WpdSpawnLinker => {
                out.wpd.spawn_linker = true;
                pass = false;
            }
            Action::WpdLowMemory => {
                out.wpd.low_memory = true;
                pass = false;
            }
            Action::WpdNoValidate => {
                out.settings.validate = false;
                pass = false;
            }
            Action::WpdNoDeadSlots => {
                out.settings.dead_slots = false;
                pass = false;
            }
            Action::WpdIndexOnly | Action::WpdFromIndex => {
                if v.is_empty() {
                    return Err(Error::msg(format!("{shown} needs a directory")));
                }
                let dir = Some(PathBuf::from(&v));
                if spec.action == Action::WpdIndexOnly {
                    out.wpd.index_only = dir
                } else {
                    out.wpd.from_index = dir
                }
                pass = false;
            }
            Action::ThinltoIndexOnly => {
                out.settings.index_only.enabled = true;
                if !v.is_empty() {
                    out.settings.index_only.list = Some(PathBuf::from(&v));
                }
                pass = false;
            }
            Action::ThinltoEmitImports => {
                out.settings.index_only.emit_imports = true;
                pass = false;
            }
            Action::ThinltoPrefixReplace => {
                out.settings.index_only.set_prefix_replace(&v, &shown)?;
                pass = false;
            }
            Action::ThinltoObjectSuffixReplace => {
                out.settings.index_only.set_object_suffix_replace(&v, &shown)?;
                pass = false;
            }
            Action::LtoObjPath => {
                if v.is_empty() {
                    return Err(Error::msg(format!("{shown} needs a file")));
                }
                out.settings.index_only.obj_path = Some(PathBuf::from(&v));
                pass = false;
            }
            Action::ThinltoDistributor | Action::ThinltoRemoteCompiler => {
                if v.is_empty() {
                    return Err(Error::msg(format!("{shown} needs a program")));
                }
                let path = Some(PathBuf::from(&v));
                if spec.action == Action::ThinltoDistributor {
                    out.wpd.dtlto.distributor = path;
                } else {
                    out.wpd.dtlto.remote_compiler = path;
                }
                pass = false;
            }
            Action::ThinltoDistributorArg => {
                out.wpd.dtlto.distributor_args.push(v);
                pass = false;
            }
            Action::ThinltoRemoteCompilerArg => {
                out.wpd.dtlto.remote_compiler_args.push(v);
                pass = false;
            }
            Action::WpdOpen => {
                out.settings.open.push(v);
                pass = false;
            }
            Action::WpdSpeculate => {
                out.settings.set_speculate(&v, &format!("--wpd-speculate={v}"))?;
                pass = false;
            }
            Action::WpdClosedSet => {
                out.settings.set_closed_set(&v, &format!("--wpd-closed-set={v}"))?;
                pass = false;
            }
            Action::WpdUnknownOptions => {
                out.wpd.unknown_options = match v.as_str() {
                    "error" => UnknownOptions::Error,
                    "unknown-refs" => UnknownOptions::UnknownRefs,
                    _ => return Err(Error::msg(format!("invalid --wpd-unknown-options={v} (error or unknown-refs)"))),
                };
                pass = false;
            }
        }
        if pass {
            out.items.push(Item::Pass(raw));
        }
    }
    if let Some(first) = unknown.first() {
        match out.wpd.unknown_options {
            UnknownOptions::Error => {
                return Err(Error::msg(format!(
                    "unknown linker option {first} may change symbol resolution; wpd-ld does not pass it on \
                     (-Wl,--wpd-unknown-options=unknown-refs links anyway, with every outside reference unknown)"
                )));
            }
            UnknownOptions::UnknownRefs => {
                out.line.unknown.get_or_insert_with(|| format!("the unknown linker option {first}"));
            }
        }
    }
    out.line.exports.shared = out.shared;
    out.line.exports.export_dynamic = out.export_dynamic;
    out.line.relocatable = out.relocatable;
    out.line.duplicates = match (allow_multiple_definition, noinhibit_exec) {
        (true, _) => Duplicates::Allow,
        (false, true) => Duplicates::Warn,
        (false, false) => Duplicates::Error,
    };
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backends::codegen::{DebuggerTuning, Profile};
    use wpd_link::Item as LineItem;

    fn p(args: &[&str]) -> LinkArgs {
        parse(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn clang_gold_style_line() {
        let a = p(&[
            "-pie",
            "-dynamic-linker",
            "/lib64/ld-linux-x86-64.so.2",
            "-o",
            "prog",
            "crt1.o",
            "-L/usr/lib",
            "-plugin",
            "/x/LLVMgold.so",
            "-plugin-opt=mcpu=znver3",
            "-plugin-opt=O3",
            "-plugin-opt=thinlto",
            "--lto-whole-program-visibility",
            "a.o",
            "-lstdc++",
            "-l",
            "m",
            "-e",
            "start",
        ]);
        assert_eq!(a.output.as_deref(), Some("prog"));
        assert_eq!(a.settings.cpu, "znver3");
        assert_eq!(a.settings.opt_level, 3);
        assert!(a.settings.whole_program_visibility);
        assert_eq!(a.line.lib_paths, vec!["/usr/lib"]);
        assert_eq!(a.line.entry.as_deref(), Some("start"));
        let inputs: Vec<_> = a
            .items
            .iter()
            .filter_map(|i| if let Item::Input { path, .. } = i { Some(path.as_str()) } else { None })
            .collect();
        assert_eq!(inputs, vec!["crt1.o", "a.o"]);
        let libs: Vec<_> = a
            .items
            .iter()
            .filter_map(|i| if let Item::Library { spec, .. } = i { Some(spec.as_str()) } else { None })
            .collect();
        assert_eq!(libs, vec!["stdc++", "m"]);
        // The dynamic linker path is a value, not an input; plugin options are gone.
        assert!(a.items.contains(&Item::Pass(vec!["-dynamic-linker".into(), "/lib64/ld-linux-x86-64.so.2".into()])));
        assert!(!a.items.iter().any(|i| matches!(i, Item::Pass(v) if v[0].contains("plugin"))));
    }

    #[test]
    fn single_dash_long_options_are_not_short_ones() {
        let a = p(&["-export-dynamic", "-soname", "libx.so", "-shared", "x.o"]);
        assert!(a.export_dynamic && a.shared);
        assert!(a.line.entry.is_none() && a.line.undefined.is_empty());
        assert!(a.items.contains(&Item::Pass(vec!["-soname".into(), "libx.so".into()])));
    }

    #[test]
    fn lld_style_and_wpd_options() {
        let a = p(&["--lto-O1", "--thinlto-jobs=3", "--wpd-report=r.json", "--wpd-remarks", "--wpd-linker", "ld.bfd"]);
        assert_eq!(a.settings.opt_level, 1);
        assert_eq!(a.settings.cg_opt_level, None);
        assert_eq!(p(&["--lto-CGO0"]).settings.cg_opt_level, Some(0));
        assert!(parse(&["--lto-CGO4".to_string()]).unwrap_err().to_string().contains("--lto-CGO4"));
        for bad in ["--lto-O4", "--lto-O9", "-plugin-opt=O4", "--thinlto-jobs=x", "-plugin-opt=jobs=-1"] {
            assert!(parse(&[bad.to_string()]).unwrap_err().to_string().contains(bad), "{bad}");
        }
        assert_eq!(a.settings.jobs, Some(3));
        // As lld takes them: 0 or nothing is the default count.
        assert_eq!(p(&["--thinlto-jobs=0"]).settings.jobs, None);
        assert_eq!(p(&["--thinlto-jobs="]).settings.jobs, None);
        assert_eq!(p(&["-plugin-opt=jobs=0"]).settings.jobs, None);
        // One partition is what wpd does; other counts are refused by name.
        p(&["--lto-partitions=1", "-plugin-opt=lto-partitions=1", "--lto-partitions", "1"]);
        for bad in ["--lto-partitions=2", "--lto-partitions=0", "--lto-partitions=x", "-plugin-opt=lto-partitions=4"] {
            assert!(parse(&[bad.to_string()]).unwrap_err().to_string().contains(bad), "{bad}");
        }
        assert_eq!(a.settings.report, Some(PathBuf::from("r.json")));
        assert_eq!(a.settings.remarks, crate::report::Remarks::Passed);
        assert_eq!(a.wpd.linker.as_deref(), Some("ld.bfd"));
        assert!(a.items.is_empty());
        assert!(parse(&["--wpd-bogus".to_string()]).unwrap_err().to_string().contains("--wpd-bogus"));
        let c = p(&["--wpd-no-validate", "--wpd-known-safe=_ZTV3Foo", "--wpd-open", "_ZTV*Bar", "--wpd-speculate=2"]);
        assert!(!c.settings.validate);
        assert_eq!(c.settings.known_safe, vec!["_ZTV3Foo"]);
        assert_eq!(c.settings.open, vec!["_ZTV*Bar"]);
        assert_eq!(c.settings.speculate, 2);
        assert_eq!(p(&["--wpd-speculate=off"]).settings.speculate, 0);
        assert!(parse(&["--wpd-speculate=3".to_string()]).is_err());
        assert!(parse(&["-plugin-opt=bogus".to_string()]).unwrap_err().to_string().contains("-plugin-opt=bogus"));
        let b = p(&["--lto-whole-program-visibility", "--no-lto-whole-program-visibility"]);
        assert!(!b.settings.whole_program_visibility);
    }

    #[test]
    fn cache_options_in_every_spelling() {
        for spelling in [&["--wpd-cache-dir=c"][..], &["--thinlto-cache-dir=c"], &["-plugin-opt=cache-dir=c"]] {
            let a = p(spelling);
            assert_eq!(a.settings.cache_dir, Some(PathBuf::from("c")), "{spelling:?}");
            assert!(a.items.is_empty(), "{spelling:?} was passed on");
        }
        assert_eq!(
            p(&["--thinlto-cache-policy=prune_after=24h:cache_size=10%"]).settings.cache_policy,
            "prune_after=24h:cache_size=10%"
        );
        assert_eq!(p(&["-plugin-opt=cache-policy=prune_interval=1h"]).settings.cache_policy, "prune_interval=1h");
        let e = parse(&["--thinlto-cache-policy=prune_after=forever".to_string()]).unwrap_err();
        assert!(e.to_string().contains("--thinlto-cache-policy"), "{e}");
        assert!(parse(&["-plugin-opt=cache-dir=".to_string()]).is_err());
        assert!(parse(&["--thinlto-cache-dir=".to_string()]).is_err());
    }

    #[test]
    fn distributed_options() {
        let a = p(&["--wpd-index-only=jobs", "a.o"]);
        assert_eq!(a.wpd.index_only, Some(PathBuf::from("jobs")));
        assert_eq!(p(&["--wpd-from-index", "d", "a.o"]).wpd.from_index, Some(PathBuf::from("d")));
        assert!(parse(&["--wpd-index-only=".to_string()]).unwrap_err().to_string().contains("needs a directory"));
        // lld's index files for clang's backends, in lld's and gold's spellings.
        for spelling in [
            &["--thinlto-index-only=list.txt", "--thinlto-emit-imports-files", "--lto-obj-path=lto.o"][..],
            &[
                "-plugin-opt=thinlto-index-only=list.txt",
                "-plugin-opt=thinlto-emit-imports-files",
                "-plugin-opt=obj-path=lto.o",
            ],
        ] {
            let x = p(spelling).settings.index_only;
            assert!(x.enabled && x.emit_imports, "{spelling:?}");
            assert_eq!(x.list, Some(PathBuf::from("list.txt")));
            assert_eq!(x.obj_path, Some(PathBuf::from("lto.o")));
        }
        let x = p(&[
            "--thinlto-index-only",
            "--thinlto-prefix-replace=src/;out/",
            "--thinlto-object-suffix-replace=.min.o;.o",
        ])
        .settings
        .index_only;
        assert_eq!(x.list, None);
        assert_eq!(x.output_path(&x.module_path("src/a.min.o"), false), "out/a.o");
        assert_eq!(x.output_path("lib/b.o", false), "lib/b.o");
        let x = p(&["--thinlto-index-only", "--thinlto-prefix-replace=src/;idx/;obj/"]).settings.index_only;
        assert_eq!(
            (x.output_path("src/a.o", false), x.output_path("src/a.o", true)),
            ("idx/a.o".into(), "obj/a.o".into())
        );
        for bad in ["--thinlto-prefix-replace=a", "--thinlto-object-suffix-replace=a;b;c"] {
            assert!(parse(&[bad.to_string()]).unwrap_err().to_string().contains("expects"), "{bad}");
        }
        // The final link's command line: the link's own, minus the option.
        let argv: Vec<String> =
            ["-o", "out", "--wpd-index-only", "jobs", "a.o", "-plugin-opt=O3", "-wpd-index-only=x", "-lfoo"]
                .iter()
                .map(|s| s.to_string())
                .collect();
        assert_eq!(
            without_action(&argv, Action::WpdIndexOnly).unwrap(),
            ["-o", "out", "a.o", "-plugin-opt=O3", "-lfoo"]
        );
    }

    #[test]
    fn random_command_lines_never_panic() {
        // Fragments of real ld command lines, glued at random: the scanner
        // must return a result (Ok or a one-line error), never panic.
        const PARTS: &[&str] = &[
            "-",
            "--",
            "-o",
            "-l",
            "-L",
            "-e",
            "-u",
            "-z",
            "=",
            "-plugin",
            "-plugin-opt=",
            "O2",
            "mcpu=",
            "jobs=",
            "--lto-O",
            "--wpd-",
            "report=",
            "speculate=",
            "x.o",
            "@",
            "'",
            "\"",
            "\\",
            " ",
            "-Bstatic",
            "-(",
            "--start-group",
            "-soname",
            "-mllvm",
            "-function-sections",
            "1",
            "é",
            "-m",
            "elf_x86_64",
            "-r",
        ];
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        for _ in 0..20_000 {
            let args: Vec<String> =
                (0..next(8)).map(|_| (0..1 + next(3)).map(|_| PARTS[next(PARTS.len())]).collect::<String>()).collect();
            if let Err(e) = parse(&args) {
                assert!(!e.to_string().contains('\n'), "{e}");
            }
            let joined = args.join(" ");
            let _ = split_response(&joined);
        }
    }

    #[test]
    fn section_flags() {
        let a = p(&["-plugin-opt=-function-sections=0", "-plugin-opt=-data-sections=1"]);
        assert!(!a.settings.function_sections && a.settings.data_sections);
        assert!(a.settings.llvm_options.is_empty());
        assert!(parse(&["-plugin-opt=-function-sections=x".to_string()]).is_err());
    }

    #[test]
    fn codegen_flags_become_typed_options() {
        // As clang 19 passes them for -ggdb, -femulated-tls, ...; lld also
        // takes them through -mllvm.
        let a = p(&[
            "-plugin-opt=-debugger-tune=lldb",
            "-plugin-opt=-emulated-tls",
            "-plugin-opt=-stack-size-section",
            "-plugin-opt=-split-machine-functions",
            "-plugin-opt=-enable-tlsdesc",
            "-mllvm",
            "-enable-jmc-instrument=1",
            "-plugin-opt=-pass-remarks=inline",
        ]);
        let m = &a.settings.machine;
        assert_eq!(m.debugger_tuning, Some(DebuggerTuning::Lldb));
        assert!(m.emulated_tls && m.stack_size_section && m.split_machine_functions);
        assert!(m.tls_descriptors && m.jmc_instrument);
        assert_eq!(a.settings.llvm_options, vec!["-pass-remarks=inline"]);
        assert_eq!(p(&["-mllvm", "--debugger-tune=sce"]).settings.machine.debugger_tuning, Some(DebuggerTuning::Sce));
        assert!(!p(&["-plugin-opt=-emulated-tls=false"]).settings.machine.emulated_tls);
        for bad in ["-plugin-opt=-debugger-tune=vi", "-plugin-opt=-debugger-tune", "-plugin-opt=-emulated-tls=2"] {
            assert!(parse(&[bad.to_string()]).unwrap_err().to_string().contains(bad), "{bad}");
        }
        // A longer name is another option, for LLVM to judge.
        assert_eq!(p(&["-plugin-opt=-emulated-tls-x"]).settings.llvm_options, vec!["-emulated-tls-x"]);
    }

    #[test]
    fn mcpu_under_either_spelling_is_one_setting() {
        // lld turns -plugin-opt=mcpu= into -mcpu=: the last one wins.
        assert_eq!(p(&["-plugin-opt=mcpu=x86-64", "-mllvm", "-mcpu=znver3"]).settings.cpu, "znver3");
        assert_eq!(p(&["-mllvm", "-mcpu=znver3", "-plugin-opt=mcpu=haswell"]).settings.cpu, "haswell");
        assert_eq!(p(&["-plugin-opt=--mcpu=native"]).settings.cpu, "native");
        assert!(p(&["-mllvm", "-mcpu=znver3"]).settings.llvm_options.is_empty());
        assert!(
            parse(&["-mllvm".to_string(), "-mcpu=".to_string()]).unwrap_err().to_string().contains("needs a value")
        );
        // Other code generation flags go to LLVM's parser, which knows them.
        assert_eq!(p(&["-mllvm", "-align-loops=32"]).settings.llvm_options, vec!["-align-loops=32"]);
    }

    #[test]
    fn split_dwarf_and_profile_options() {
        let a = p(&[
            "-plugin-opt=dwo_dir=out_dwo",
            "-plugin-opt=sample-profile=s.prof",
            "-plugin-opt=cs-profile-generate",
            "-plugin-opt=cs-profile-path=d/default_%m.profraw",
        ]);
        assert_eq!(a.settings.dwo_dir, Some(PathBuf::from("out_dwo")));
        assert_eq!(a.settings.profile.sample, Some(PathBuf::from("s.prof")));
        assert!(a.settings.profile.cs_generate);
        assert_eq!(a.settings.profile.cs_profile, Some(PathBuf::from("d/default_%m.profraw")));
        let b = p(&["--lto-sample-profile=x", "--lto-cs-profile-generate", "--lto-cs-profile-file=y"]);
        assert_eq!(
            b.settings.profile,
            Profile { sample: Some("x".into()), cs_profile: Some("y".into()), cs_generate: true }
        );
        assert!(b.items.is_empty());
        assert!(parse(&["-plugin-opt=dwo_dir=".to_string()]).is_err());
        for refused in ["-plugin-opt=opt-remarks-filename=x.yaml", "-plugin-opt=stats-file=x.stats"] {
            let e = parse(&[refused.to_string()]).unwrap_err();
            assert!(e.to_string().contains(refused) && e.to_string().contains("not supported"), "{e}");
        }
    }

    #[test]
    fn response_file_text_reads_back() {
        let args: Vec<String> =
            ["-L/a b", "x.o", "it's", "say \"hi\"", "back\\slash", "tab\there", "new\nline", "é", "-o", "@x"]
                .iter()
                .map(|s| s.to_string())
                .collect();
        let text = response_file_text(&args);
        assert_eq!(split_response(&text), args);
        assert!(text.starts_with("\"-L/a b\"\nx.o\n"));
    }

    #[test]
    fn duplicate_definitions_policy() {
        assert_eq!(p(&["a.o"]).line.duplicates, Duplicates::Error);
        assert_eq!(p(&["-z", "muldefs", "a.o"]).line.duplicates, Duplicates::Allow);
        assert_eq!(p(&["--allow-multiple-definition", "a.o"]).line.duplicates, Duplicates::Allow);
        let undone = p(&["--allow-multiple-definition", "--no-allow-multiple-definition", "a.o"]);
        assert_eq!(undone.line.duplicates, Duplicates::Error);
        assert_eq!(p(&["--noinhibit-exec", "a.o"]).line.duplicates, Duplicates::Warn);
        assert_eq!(p(&["--noinhibit-exec", "-zmuldefs", "a.o"]).line.duplicates, Duplicates::Allow);
    }

    #[test]
    fn relocatable_output() {
        assert!(p(&["-r", "a.o", "-o", "x.o"]).relocatable);
        assert!(p(&["--relocatable", "a.o"]).relocatable);
        assert!(!p(&["-rpath", "/x", "a.o"]).relocatable);
    }

    #[test]
    fn bstatic_applies_to_later_libraries() {
        let a = p(&["-lx", "-Bstatic", "-ly", "-Bdynamic", "-lz", "-static", "-lw"]);
        let st: Vec<bool> = a
            .line
            .items
            .iter()
            .filter_map(|i| if let LineItem::Library { state, .. } = i { Some(state.static_only) } else { None })
            .collect();
        assert_eq!(st, vec![false, true, false, true]);
    }

    #[test]
    fn push_state_saves_and_pop_state_restores() {
        let a = p(&[
            "--push-state",
            "-Bstatic",
            "--whole-archive",
            "--as-needed",
            "-lhelper",
            "--pop-state",
            "-lgreet",
            "-push-state",
            "--no-as-needed",
            "-pop-state",
        ]);
        let states: Vec<_> = a
            .line
            .items
            .iter()
            .filter_map(
                |i| if let LineItem::Library { spec, state } = i { Some((spec.as_str(), *state)) } else { None },
            )
            .collect();
        let helper = states[0].1;
        assert!(helper.static_only && helper.whole_archive && helper.as_needed);
        assert_eq!(states[1], ("greet", wpd_link::InputState::default()));
        let e = parse(&["--pop-state".to_string()]).unwrap_err();
        assert!(e.to_string().contains("--pop-state"), "{e}");
    }

    #[test]
    fn groups_libs_and_symbol_options_reach_the_link_line() {
        let a = p(&[
            "-(",
            "a.a",
            "-)",
            "--start-group",
            "--end-group",
            "--start-lib",
            "x.o",
            "--end-lib",
            "--wrap=make",
            "--wrap",
            "free",
            "--defsym=alias=target+4",
            "-u",
            "force",
            "--undefined-glob=plug*",
            "--require-defined=must",
            "-init",
            "my_init",
            "-fini=my_fini",
            "--export-dynamic-symbol=api_*",
            "-T",
            "layout.ld",
        ]);
        let l = &a.line;
        assert_eq!(l.items[0], LineItem::GroupStart);
        assert_eq!(l.items[2], LineItem::GroupEnd);
        assert!(l.items.contains(&LineItem::LibStart) && l.items.contains(&LineItem::LibEnd));
        assert_eq!(l.wraps, vec!["make", "free"]);
        assert_eq!(l.defsyms, vec![("alias".to_string(), "target+4".to_string())]);
        assert_eq!(l.undefined, vec!["force"]);
        assert_eq!(l.undefined_globs, vec!["plug*"]);
        assert_eq!(l.require_defined, vec!["must"]);
        assert_eq!((l.init.as_deref(), l.fini.as_deref()), (Some("my_init"), Some("my_fini")));
        assert_eq!(l.exports.dynamic_symbols, vec!["api_*"]);
        assert!(a.partial_export);
        assert!(matches!(l.items.last(), Some(LineItem::Script { path, .. }) if path == "layout.ld"));
        // Every one of them is also passed on, in place.
        assert!(a.items.contains(&Item::Pass(vec!["--wrap".into(), "free".into()])));
        assert!(a.items.contains(&Item::Pass(vec!["-T".into(), "layout.ld".into()])));
    }

    #[test]
    fn unknown_options_are_refused_or_make_refs_unknown() {
        for bad in ["--frobnicate", "-Q", "--export-all-symbols", "-z", "-zbogus"] {
            let args: Vec<String> = if bad == "-z" { vec!["-z".into(), "bogus".into()] } else { vec![bad.to_string()] };
            let e = parse(&args).unwrap_err();
            assert!(
                e.to_string().starts_with("unknown linker option ")
                    && e.to_string().contains("may change symbol resolution"),
                "{e}"
            );
            assert!(!e.to_string().contains('\n'));
        }
        let a = p(&["--frobnicate=3", "a.o", "--wpd-unknown-options=unknown-refs"]);
        assert_eq!(a.items[0], Item::Pass(vec!["--frobnicate=3".into()]));
        assert!(a.line.unknown.as_deref().is_some_and(|u| u.contains("--frobnicate=3")));
        assert!(parse(&["--wpd-unknown-options=maybe".to_string()]).is_err());
        // Known but not honourable: refused with the reason.
        let e = parse(&["--remap-inputs=a.o=b.o".to_string()]).unwrap_err();
        assert!(e.to_string().contains("--remap-inputs") && e.to_string().contains("not supported"), "{e}");
        // Modelled conservatively.
        assert!(p(&["--just-symbols=syms.o"]).line.unknown.is_some());
        assert_eq!(p(&["--version-script=v.map"]).line.exports.version_scripts, vec!["v.map"]);
        assert_eq!(p(&["--exclude-libs=ALL"]).line.exports.exclude_libs, vec!["ALL"]);
    }

    #[test]
    fn unknown_flags_pass_through_in_place() {
        let a = p(&["--gc-sections", "a.o", "--icf=all", "-z", "now", "--start-group", "b.a", "--end-group"]);
        assert_eq!(a.items[0], Item::Pass(vec!["--gc-sections".into()]));
        assert_eq!(a.items[2], Item::Pass(vec!["--icf=all".into()]));
        assert_eq!(a.items[3], Item::Pass(vec!["-z".into(), "now".into()]));
        assert!(matches!(&a.items[5], Item::Input { path, .. } if path == "b.a"));
    }

    #[test]
    fn verify_pie_and_remarks_options() {
        let a = p(&["--disable-verify", "-pie", "--wpd-remarks=missed", "--wpd-quiet", "--wpd-size-baseline", "a.o"]);
        assert!(a.settings.disable_verify && a.pie && a.wpd.quiet && a.wpd.size_baseline);
        assert_eq!(a.settings.remarks, crate::report::Remarks::Missed);
        assert!(!p(&["-pie", "-no-pie", "a.o"]).pie);
        assert!(parse(&["--wpd-remarks=loud".to_string()]).is_err());
    }

    #[test]
    fn every_option_is_documented() {
        let doc = include_str!("../../../../docs/cli.md");
        for spec in super::options::OPTIONS {
            for name in spec.names {
                let shown = if name.chars().count() == 1 { format!("`-{name}") } else { format!("`--{name}") };
                assert!(doc.contains(&shown), "docs/cli.md does not list {shown} ({})", spec.effect.describe());
            }
        }
        for (k, _) in super::options::Z_KEYWORDS {
            assert!(doc.contains(&format!("`{}", k.trim_end_matches('='))), "docs/cli.md does not list -z {k}");
        }
    }

    #[test]
    fn response_files() {
        assert_eq!(split_response("a 'b c' \"d\\\"e\" f\\ g\n"), vec!["a", "b c", "d\"e", "f g"]);
        let dir = tempfile::tempdir().unwrap();
        let inner = dir.path().join("inner.rsp");
        std::fs::write(&inner, "-lfoo\n").unwrap();
        let outer = dir.path().join("outer.rsp");
        std::fs::write(&outer, format!("x.o @{}", inner.display())).unwrap();
        let args = expand_response_files(vec![format!("@{}", outer.display()), "y.o".into()]).unwrap();
        assert_eq!(args, vec!["x.o", "-lfoo", "y.o"]);
        assert!(expand_response_files(vec!["@/nonexistent/rsp".into()]).is_err());
    }
}
