//! A hand-written scanner for ld command lines (GNU ld, gold and lld share
//! the grammar; clap does not fit it): `@response` files, short options with
//! joined or separate values, long options with one or two dashes and `=`
//! or separate values. Every item keeps its position; what wpd does not
//! own passes through untouched.

use std::path::PathBuf;

/// One command-line item, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// A positional input file.
    Input(String),
    /// `-l` library: `foo` or `:file`, and whether only archives may match
    /// (`-Bstatic` in effect).
    Library { spec: String, static_only: bool, raw: Vec<String> },
    /// Passed to the real linker unchanged (an option with its value).
    Pass(Vec<String>),
}

/// wpd's own options (`--wpd-*`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WpdOptions {
    pub linker: Option<String>,
    pub report: Option<PathBuf>,
    pub remarks: bool,
    pub save_temps: bool,
    /// Look for open hierarchies on the native side (default on).
    pub validate: bool,
    /// Vtable symbol globs never opened by validation.
    pub known_safe: Vec<String>,
    /// Vtable symbol globs always open.
    pub open: Vec<String>,
    /// Most targets per guarded speculative call (0: off).
    pub speculate: u8,
}

/// A scanned command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkArgs {
    pub items: Vec<Item>,
    pub output: Option<String>,
    pub lib_paths: Vec<String>,
    pub sysroot: Option<String>,
    pub shared: bool,
    /// `-r`: the output is an object for a later link.
    pub relocatable: bool,
    pub export_dynamic: bool,
    /// `--dynamic-list`, `--export-dynamic-symbol(-list)`: some symbols are
    /// exported; wpd treats the link as exporting (conservative).
    pub partial_export: bool,
    /// `-T` linker scripts: symbols they name are unknown to wpd.
    pub has_script: bool,
    pub whole_program_visibility: bool,
    pub opt_level: u8,
    pub cpu: String,
    pub jobs: Option<usize>,
    /// Options for LLVM itself (`-mllvm`, `-plugin-opt=-...`).
    pub llvm_options: Vec<String>,
    /// `-function-sections` / `-data-sections` code generation options
    /// (lld's LTO defaults: on).
    pub function_sections: bool,
    pub data_sections: bool,
    /// Symbols the command line names (`-u`, `-e`, `--require-defined`).
    pub named_symbols: Vec<String>,
    pub wpd: WpdOptions,
}

impl Default for LinkArgs {
    fn default() -> Self {
        LinkArgs {
            items: Vec::new(),
            output: None,
            lib_paths: Vec::new(),
            sysroot: None,
            shared: false,
            relocatable: false,
            export_dynamic: false,
            partial_export: false,
            has_script: false,
            whole_program_visibility: false,
            opt_level: 2,
            cpu: "x86-64".into(),
            jobs: None,
            llvm_options: Vec::new(),
            function_sections: true,
            data_sections: true,
            named_symbols: Vec::new(),
            wpd: WpdOptions { validate: true, speculate: 1, ..WpdOptions::default() },
        }
    }
}

/// Long options (used with `-` or `--`) whose value may be the next argument.
const LONG_WITH_VALUE: &[&str] = &[
    "output",
    "library",
    "library-path",
    "entry",
    "undefined",
    "script",
    "soname",
    "rpath",
    "rpath-link",
    "dynamic-linker",
    "plugin",
    "plugin-opt",
    "version-script",
    "dynamic-list",
    "export-dynamic-symbol",
    "export-dynamic-symbol-list",
    "hash-style",
    "Map",
    "defsym",
    "wrap",
    "trace-symbol",
    "exclude-libs",
    "section-start",
    "image-base",
    "require-defined",
    "retain-symbols-file",
    "just-symbols",
    "auxiliary",
    "filter",
    "mllvm",
    "format",
    "oformat",
    "architecture",
    "mri-script",
    "gpsize",
    "Ttext",
    "Tdata",
    "Tbss",
    "Ttext-segment",
    "Trodata-segment",
    "Tldata-segment",
    "dependency-file",
    "error-limit",
    "symbol-ordering-file",
    "call-graph-ordering-file",
    "sysroot",
    "init",
    "fini",
    "undefined-glob",
    "package-metadata",
    "emulation",
    "thinlto-jobs",
    "plugin-opt",
    "wpd-linker",
    "wpd-report",
    "wpd-jobs",
    "wpd-known-safe",
    "wpd-open",
    "wpd-speculate",
    "lto-known-safe-vtables",
    "z",
    "soname",
];

/// Long options without a value that start with a letter that is also a
/// value-taking short option (so `-export-dynamic` is not `-e xport-dynamic`).
const LONG_FLAGS: &[&str] = &[
    "export-dynamic",
    "no-export-dynamic",
    "eh-frame-hdr",
    "enable-new-dtags",
    "error-unresolved-symbols",
    "emit-relocs",
    "end-group",
    "exclude-libs-all",
    "fatal-warnings",
    "fix-cortex-a53-843419",
    "fini-array",
    "undefined-version",
    "unresolved-symbols",
    "relax",
    "lto-whole-program-visibility",
    "no-lto-whole-program-visibility",
];

/// Single-letter options that take a value (joined `-lfoo` or separate).
const SHORT_WITH_VALUE: &[char] =
    &['o', 'l', 'L', 'e', 'u', 'T', 'm', 'z', 'h', 'R', 'y', 'Y', 'f', 'F', 'A', 'G', 'I'];

/// Splits a response file the way GNU tools do: whitespace separates,
/// single and double quotes group, backslash escapes.
fn split_response(text: &str) -> Vec<String> {
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
pub fn expand_response_files(args: Vec<String>) -> Result<Vec<String>, String> {
    fn go(args: Vec<String>, depth: u32, out: &mut Vec<String>) -> Result<(), String> {
        for a in args {
            match a.strip_prefix('@') {
                Some(path) if !path.is_empty() => {
                    if depth > 16 {
                        return Err(format!("response files nested too deeply at @{path}"));
                    }
                    let text =
                        std::fs::read_to_string(path).map_err(|e| format!("cannot read response file {path}: {e}"))?;
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

/// A parsed option: its canonical name, its value, and the raw arguments.
struct Opt {
    name: String,
    value: Option<String>,
    raw: Vec<String>,
}

/// Reads one option starting at `args[*i]`, consuming a separate value when
/// the option takes one.
fn read_option(args: &[String], i: &mut usize) -> Result<Opt, String> {
    let arg = &args[*i];
    let mut raw = vec![arg.clone()];
    let (body, double) = match arg.strip_prefix("--") {
        Some(b) => (b, true),
        None => (&arg[1..], false),
    };
    let (name, joined) = match body.split_once('=') {
        Some((n, v)) => (n.to_string(), Some(v.to_string())),
        None => (body.to_string(), None),
    };
    let first = body.chars().next().unwrap_or(' ');
    let is_long = double
        || (!body.starts_with('o')
            && (LONG_WITH_VALUE.contains(&name.as_str()) || LONG_FLAGS.contains(&name.as_str())))
        || body.len() == 1
        || !SHORT_WITH_VALUE.contains(&first)
        || body.starts_with("wpd-");
    let (name, mut value) = if is_long {
        (name, joined)
    } else {
        // A short option with its value joined: -lfoo, -L/dir, -ofile.
        (first.to_string(), Some(body[first.len_utf8()..].to_string()))
    };
    let takes_value = if name.chars().count() == 1 {
        SHORT_WITH_VALUE.contains(&name.chars().next().unwrap_or(' '))
    } else {
        LONG_WITH_VALUE.contains(&name.as_str())
    };
    if value.is_none() && takes_value {
        *i += 1;
        let v = args.get(*i).ok_or_else(|| format!("option {arg} needs a value"))?;
        raw.push(v.clone());
        value = Some(v.clone());
    }
    Ok(Opt { name, value, raw })
}

/// Handles one `-plugin-opt=` value (gold plugin style, as clang passes).
fn plugin_opt(out: &mut LinkArgs, v: &str) -> Result<(), String> {
    if let Some(level) = v.strip_prefix('O').and_then(|l| l.parse::<u8>().ok()) {
        out.opt_level = level.min(3);
    } else if let Some(cpu) = v.strip_prefix("mcpu=") {
        out.cpu = cpu.to_string();
    } else if let Some(j) = v.strip_prefix("jobs=") {
        out.jobs = Some(parse_jobs(j)?);
    } else if v == "whole-program-visibility" {
        out.whole_program_visibility = true;
    } else if v == "save-temps" {
        out.wpd.save_temps = true;
    } else if v == "thinlto" {
        // "Use ThinLTO": wpd always works on ThinLTO bitcode.
    } else if let Some(on) = codegen_flag(v, "function-sections") {
        out.function_sections = on?;
    } else if let Some(on) = codegen_flag(v, "data-sections") {
        out.data_sections = on?;
    } else if v.starts_with('-') {
        out.llvm_options.push(v.to_string());
    } else {
        return Err(format!("unsupported plugin option -plugin-opt={v}"));
    }
    Ok(())
}

/// `-name`, `-name=1`, `-name=0` (LLVM boolean code generation flags that
/// clang forwards, but LLVM registers only in its own tools).
fn codegen_flag(v: &str, name: &str) -> Option<Result<bool, String>> {
    let rest = v.trim_start_matches('-').strip_prefix(name)?;
    Some(match rest {
        "" | "=1" | "=true" => Ok(true),
        "=0" | "=false" => Ok(false),
        _ => Err(format!("invalid value in -plugin-opt={v}")),
    })
}

fn parse_jobs(v: &str) -> Result<usize, String> {
    if v == "all" {
        return Ok(std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
    }
    v.parse::<usize>().ok().filter(|n| *n > 0).ok_or_else(|| format!("invalid job count '{v}'"))
}

/// Scans an ld command line (response files already expanded).
pub fn parse(args: &[String]) -> Result<LinkArgs, String> {
    let mut out = LinkArgs::default();
    let mut static_only = false;
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        if !arg.starts_with('-') || arg == "-" {
            out.items.push(Item::Input(arg.clone()));
            i += 1;
            continue;
        }
        let opt = read_option(args, &mut i)?;
        i += 1;
        let value = opt.value.clone().unwrap_or_default();
        let mut pass = true;
        match opt.name.as_str() {
            "o" | "output" => out.output = Some(value),
            "l" | "library" => {
                out.items.push(Item::Library { spec: value, static_only, raw: opt.raw });
                continue;
            }
            "L" | "library-path" => out.lib_paths.push(value),
            "e" | "entry" | "u" | "undefined" | "require-defined" => out.named_symbols.push(value),
            "sysroot" => out.sysroot = Some(value),
            "shared" | "Bshareable" => out.shared = true,
            "r" | "relocatable" | "i" => out.relocatable = true,
            "static" | "Bstatic" | "dn" | "non_shared" => static_only = true,
            "Bdynamic" | "dy" | "call_shared" => static_only = false,
            "E" | "export-dynamic" => out.export_dynamic = true,
            "no-export-dynamic" => out.export_dynamic = false,
            "dynamic-list" | "export-dynamic-symbol" | "export-dynamic-symbol-list" => out.partial_export = true,
            "T" | "script" => out.has_script = true,
            "plugin" => pass = false,
            "plugin-opt" => {
                plugin_opt(&mut out, &value)?;
                pass = false;
            }
            "lto-whole-program-visibility" => {
                out.whole_program_visibility = true;
                pass = false;
            }
            "no-lto-whole-program-visibility" => {
                out.whole_program_visibility = false;
                pass = false;
            }
            "thinlto-jobs" => {
                out.jobs = Some(parse_jobs(&value)?);
                pass = false;
            }
            "mllvm" => {
                if let Some(on) = codegen_flag(&value, "function-sections") {
                    out.function_sections = on?;
                } else if let Some(on) = codegen_flag(&value, "data-sections") {
                    out.data_sections = on?;
                } else {
                    out.llvm_options.push(value);
                }
                pass = false;
            }
            "wpd-linker" => {
                out.wpd.linker = Some(value);
                pass = false;
            }
            "wpd-report" => {
                out.wpd.report = Some(PathBuf::from(value));
                pass = false;
            }
            "wpd-jobs" => {
                out.jobs = Some(parse_jobs(&value)?);
                pass = false;
            }
            "wpd-remarks" => {
                out.wpd.remarks = true;
                pass = false;
            }
            "wpd-save-temps" => {
                out.wpd.save_temps = true;
                pass = false;
            }
            "wpd-no-validate" => {
                out.wpd.validate = false;
                pass = false;
            }
            "lto-validate-all-vtables-have-type-infos" => {
                out.wpd.validate = true;
                pass = false;
            }
            "wpd-known-safe" | "lto-known-safe-vtables" => {
                out.wpd.known_safe.push(value);
                pass = false;
            }
            "wpd-open" => {
                out.wpd.open.push(value);
                pass = false;
            }
            "wpd-speculate" => {
                out.wpd.speculate = match value.as_str() {
                    "off" | "0" => 0,
                    "1" => 1,
                    "2" => 2,
                    _ => return Err(format!("invalid --wpd-speculate={value} (off, 1 or 2)")),
                };
                pass = false;
            }
            name if name.starts_with("wpd-") => return Err(format!("unknown wpd option {}", opt.raw[0])),
            name if name.starts_with("lto-O") => {
                out.opt_level =
                    name[5..].parse::<u8>().map_err(|_| format!("invalid optimization level {}", opt.raw[0]))?.min(3);
                pass = false;
            }
            name if name.starts_with("lto-") || name.starts_with("thinlto-") => {
                return Err(format!("LTO option {} is not supported by wpd-ld", opt.raw[0]));
            }
            _ => {}
        }
        if pass {
            out.items.push(Item::Pass(opt.raw));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(a.cpu, "znver3");
        assert_eq!(a.opt_level, 3);
        assert!(a.whole_program_visibility);
        assert_eq!(a.lib_paths, vec!["/usr/lib"]);
        assert_eq!(a.named_symbols, vec!["start"]);
        let inputs: Vec<_> =
            a.items.iter().filter_map(|i| if let Item::Input(s) = i { Some(s.as_str()) } else { None }).collect();
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
        assert!(a.named_symbols.is_empty());
        assert!(a.items.contains(&Item::Pass(vec!["-soname".into(), "libx.so".into()])));
    }

    #[test]
    fn lld_style_and_wpd_options() {
        let a = p(&["--lto-O1", "--thinlto-jobs=3", "--wpd-report=r.json", "--wpd-remarks", "--wpd-linker", "ld.bfd"]);
        assert_eq!(a.opt_level, 1);
        assert_eq!(a.jobs, Some(3));
        assert_eq!(a.wpd.report, Some(PathBuf::from("r.json")));
        assert!(a.wpd.remarks);
        assert_eq!(a.wpd.linker.as_deref(), Some("ld.bfd"));
        assert!(a.items.is_empty());
        assert!(parse(&["--wpd-bogus".to_string()]).unwrap_err().contains("--wpd-bogus"));
        let c = p(&["--wpd-no-validate", "--wpd-known-safe=_ZTV3Foo", "--wpd-open", "_ZTV*Bar", "--wpd-speculate=2"]);
        assert!(!c.wpd.validate);
        assert_eq!(c.wpd.known_safe, vec!["_ZTV3Foo"]);
        assert_eq!(c.wpd.open, vec!["_ZTV*Bar"]);
        assert_eq!(c.wpd.speculate, 2);
        assert_eq!(p(&["--wpd-speculate=off"]).wpd.speculate, 0);
        assert!(parse(&["--wpd-speculate=3".to_string()]).is_err());
        assert!(parse(&["-plugin-opt=dwo_dir=x".to_string()]).is_err());
        let b = p(&["--lto-whole-program-visibility", "--no-lto-whole-program-visibility"]);
        assert!(!b.whole_program_visibility);
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
                assert!(!e.contains('\n'), "{e}");
            }
            let joined = args.join(" ");
            let _ = split_response(&joined);
        }
    }

    #[test]
    fn section_flags() {
        let a = p(&["-plugin-opt=-function-sections=0", "-plugin-opt=-data-sections=1"]);
        assert!(!a.function_sections && a.data_sections);
        assert!(a.llvm_options.is_empty());
        assert!(parse(&["-plugin-opt=-function-sections=x".to_string()]).is_err());
    }

    #[test]
    fn relocatable_output() {
        assert!(p(&["-r", "a.o", "-o", "x.o"]).relocatable);
        assert!(p(&["--relocatable", "a.o"]).relocatable);
        assert!(!p(&["-rpath", "/x", "a.o"]).relocatable);
    }

    #[test]
    fn bstatic_applies_to_later_libraries() {
        let a = p(&["-lx", "-Bstatic", "-ly", "-Bdynamic", "-lz"]);
        let st: Vec<bool> = a
            .items
            .iter()
            .filter_map(|i| if let Item::Library { static_only, .. } = i { Some(*static_only) } else { None })
            .collect();
        assert_eq!(st, vec![false, true, false]);
    }

    #[test]
    fn unknown_flags_pass_through_in_place() {
        let a = p(&["--gc-sections", "a.o", "--icf=all", "-z", "now", "--start-group", "b.a", "--end-group"]);
        assert_eq!(a.items[0], Item::Pass(vec!["--gc-sections".into()]));
        assert_eq!(a.items[2], Item::Pass(vec!["--icf=all".into()]));
        assert_eq!(a.items[3], Item::Pass(vec!["-z".into(), "now".into()]));
        assert_eq!(a.items[5], Item::Input("b.a".into()));
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
