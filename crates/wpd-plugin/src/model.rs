//! The link model from the linker itself: which bitcode files it loaded
//! (the files the plugin claimed, in claim order) and how it resolved every
//! one of their symbols. `wpd-ld` works this out by re-reading the command
//! line (`wpd_link::resolve`); here the linker says it, and the rest of the
//! pipeline is the same.

use crate::api::resolution as r;
use std::collections::BTreeSet;
use wpd_link::InputId;
use wpd_link::native::{NativeScan, Sighting, runtime_symbol};
use wpd_link::resolve::{Flavor, LinkModel, Loaded, LoadedKind, OutsideRefs, exports};
use wpd_llvm::BitcodeSymbol;

/// One loaded bitcode file: its name, the symbols the plugin gave the
/// linker (those `BitcodeSymbol::in_link`), and their resolutions, in the
/// same order.
pub struct Resolved<'a> {
    pub name: &'a str,
    pub symbols: &'a [BitcodeSymbol],
    pub resolutions: &'a [i32],
}

/// The output kind, from `LDPT_LINKER_OUTPUT`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    Relocatable,
    Executable,
    Pie,
    Shared,
}

/// The native files the linker offered the plugin (its claim-file hook
/// sees every file it loads, bitcode or not), or, where it offered none
/// (mold offers bitcode only), those its command line loads
/// ([`wpd::link_line::inputs::native_side`]).
#[derive(Debug, Default)]
pub struct NativeFiles {
    /// How many.
    pub count: usize,
    /// They come from the linker's command line, not from the linker.
    pub from_command_line: bool,
    /// Why the native side is not known (the command line could not be
    /// read): every hierarchy is then open and every definition
    /// referenced from outside.
    pub unknown: Option<String>,
    /// What they say, as wpd-ld's scan of its native inputs says it:
    /// vtables, typeinfos (a vtable without one, `-fno-rtti` code, may
    /// derive from any class), undefined names, and the first that may
    /// hold C++ code besides the runtime's, and why (`cxx_code`).
    pub scan: NativeScan,
    /// When they come from the command line (mold): the bitcode's strong
    /// references a shared library read under `--as-needed` answers. mold
    /// records such a library only if the objects the plugin hands back
    /// reference it, so the backends' objects make these references again
    /// ([`wpd::final_link::extraction::restore_as_needed`]).
    pub as_needed_refs: BTreeSet<String>,
}

/// The undefined symbols of a bitcode file's symbol table, as the link
/// model records a unit's references.
fn refs(symbols: &[BitcodeSymbol]) -> wpd_link::Refs {
    let mut refs = wpd_link::Refs::default();
    for s in symbols.iter().filter(|s| s.undefined) {
        if s.weak { &mut refs.weak } else { &mut refs.strong }.insert(s.name.clone());
        if s.tls {
            refs.tls.insert(s.name.clone());
        }
    }
    refs
}

/// What the resolutions say, for the pipeline: the link model, and the
/// native side's view of C++ classes for validation.
pub struct FromLinker {
    pub model: LinkModel,
    pub native: NativeScan,
}

fn prevails(res: i32) -> bool {
    matches!(res, r::PREVAILING_DEF | r::PREVAILING_DEF_IRONLY | r::PREVAILING_DEF_IRONLY_EXP)
}

/// Builds the link model from the linker's resolutions.
///
/// - A definition prevails when the linker says so (`PREVAILING_DEF*`).
/// - Code outside the bitcode references what the linker resolved as
///   `PREVAILING_DEF` (referenced from a regular object: `main` from
///   `crt1.o`, `-u`, a native caller).
/// - The output exports what the linker put in its dynamic symbol table
///   (`PREVAILING_DEF_IRONLY_EXP`), and, conservatively, every
///   default-visibility definition a regular object references.
/// - A class is seen natively when its vtable or typeinfo (`_ZTV`/`_ZTI`)
///   is referenced from a regular object, preempted by a regular object's
///   definition, or defined by one or by a shared library (an IR reference
///   resolved there), besides what the scan of the native files the linker
///   offered found (`offered.scan`, as `wpd-ld` scans its native inputs:
///   a native vtable without typeinfo, `-fno-rtti`, is seen there).
///
/// A definition the linker left unresolved (`UNKNOWN`) is kept as if
/// referenced from outside, and so is every name in `mentioned` (symbols
/// the linker's command line or scripts name: `-init`, `-e`, `--defsym`,
/// `ENTRY`, … which not every linker reports as references). A name in
/// `redefined` (the command line's `--defsym`, a script's assignment) is
/// defined there, over every file: no bitcode copy of it prevails, and the
/// program never runs the body wpd read.
///
/// Native C++ code (which turns dead slots off) is what `offered` found in
/// the native files the linker offered the plugin; when it offered none
/// (mold), every link's native side is unknown; else a C++ name shared
/// with the bitcode that a regular object or shared library resolves.
pub fn from_linker(
    files: &[Resolved<'_>],
    output: Output,
    flavor: Flavor,
    wraps: Vec<String>,
    mentioned: &BTreeSet<String>,
    redefined: &BTreeSet<String>,
    offered: &NativeFiles,
) -> FromLinker {
    let mut loaded = Vec::with_capacity(files.len());
    let mut outside = BTreeSet::new();
    let mut exported = BTreeSet::new();
    let cxx_code = match (&offered.scan.cxx_code, &offered.unknown) {
        (Some(why), _) => Some(why.clone()),
        (None, Some(why)) => Some(why.clone()),
        // Every C++ link has native startup objects: a linker that
        // offered none links native code the plugin cannot check.
        (None, None) if offered.count == 0 && !offered.from_command_line => {
            Some("the native files the linker did not show the plugin".into())
        }
        (None, None) => None,
    };
    let mut native = NativeScan { cxx_code, ..offered.scan.clone() };
    let mut unresolved = BTreeSet::new();
    for f in files {
        let mut defined = BTreeSet::new();
        let mut prevailing = BTreeSet::new();
        for (s, &res) in f.symbols.iter().zip(f.resolutions) {
            // A loaded file's reference the linker's table could not bind.
            if s.undefined && res == r::UNDEF {
                unresolved.insert(s.name.clone());
            }
            if !s.undefined {
                defined.insert(s.name.clone());
                if (prevails(res) || res == r::UNKNOWN) && !redefined.contains(&s.name) {
                    prevailing.insert(s.name.clone());
                }
                if res == r::PREVAILING_DEF || res == r::UNKNOWN || mentioned.contains(&s.name) {
                    outside.insert(s.name.clone());
                    if s.visibility == wpd_summary::Visibility::Default && output != Output::Relocatable {
                        exported.insert(s.name.clone());
                    }
                }
                // In the dynamic symbol table because the output exports
                // everything (`-shared`, `--export-dynamic`), which leaves
                // out what LLVM may omit, as LLVMgold does.
                if res == r::PREVAILING_DEF_IRONLY_EXP && exports::exported_by_all(&s.name, s.may_omit) {
                    exported.insert(s.name.clone());
                }
            }
            // C++ code outside the bitcode that shares a name with it (not
            // the runtime's): it may call the program's virtual functions
            // through vtables no summary sees.
            let outside_cxx = matches!(res, r::PREVAILING_DEF | r::PREEMPTED_REG | r::RESOLVED_EXEC | r::RESOLVED_DYN);
            if native.cxx_code.is_none() && outside_cxx && s.name.starts_with("_Z") && !runtime_symbol(&s.name) {
                let how = if res == r::RESOLVED_DYN { "a shared library" } else { "a regular object" };
                native.cxx_code = Some(format!("{how} (it shares {} with {})", s.name, f.name));
            }
            let Some(class) = s.name.strip_prefix("_ZTV").or_else(|| s.name.strip_prefix("_ZTI")) else { continue };
            let sighting = match res {
                r::PREVAILING_DEF => Sighting::References { symbol: s.name.clone(), file: "a regular object".into() },
                r::PREEMPTED_REG | r::RESOLVED_EXEC => {
                    Sighting::Defines { symbol: s.name.clone(), file: "a regular object".into() }
                }
                r::RESOLVED_DYN => Sighting::Defines { symbol: s.name.clone(), file: "a shared library".into() },
                // In the dynamic symbol table: a shared library of the link
                // references it, or the output exports it.
                r::PREVAILING_DEF_IRONLY_EXP => {
                    Sighting::References { symbol: s.name.clone(), file: "the dynamic symbol table".into() }
                }
                _ => continue,
            };
            native.see(class, sighting);
        }
        loaded.push(Loaded {
            input: InputId(0),
            member: None,
            kind: LoadedKind::Bitcode,
            name: f.name.to_string(),
            prevailing,
            defined,
            refs: refs(f.symbols),
        });
    }
    // A bitcode reference to `__start_X`/`__stop_X` keeps every bitcode
    // definition placed in section `X`, as in wpd-ld's model (the linker
    // keeps it, LLVMgold too).
    let start_stop: BTreeSet<&str> = (files.iter().flat_map(|f| f.symbols.iter()).filter(|s| s.undefined))
        .filter_map(|s| s.name.strip_prefix("__start_").or_else(|| s.name.strip_prefix("__stop_")))
        .collect();
    if !start_stop.is_empty() {
        for s in files.iter().flat_map(|f| f.symbols.iter()).filter(|s| !s.undefined) {
            if s.start_stop_section.as_deref().is_some_and(|x| start_stop.contains(x)) {
                outside.insert(s.name.clone());
            }
        }
    }
    native.refs.extend(outside.iter().cloned());
    native.see_unresolved(&unresolved);
    // The plugin interface does not say whether `-Bsymbolic` or a dynamic
    // list binds a shared output's definitions inside it: every exported
    // default-visibility definition may be preempted.
    let preemptible = match output {
        Output::Shared => files
            .iter()
            .flat_map(|f| f.symbols.iter())
            .filter(|s| !s.undefined && s.visibility == wpd_summary::Visibility::Default && exported.contains(&s.name))
            .map(|s| s.name.clone())
            .collect(),
        _ => BTreeSet::new(),
    };
    let model = LinkModel {
        flavor,
        inputs: Vec::new(),
        loaded,
        outside_refs: match &offered.unknown {
            Some(why) => OutsideRefs::Unknown(why.clone()),
            None => OutsideRefs::Known(outside),
        },
        wraps,
        exported,
        preemptible,
        defined_by_command_line: redefined
            .iter()
            .filter(|n| files.iter().any(|f| f.symbols.iter().any(|s| !s.undefined && s.name == **n)))
            .cloned()
            .collect(),
        unresolved,
        // The linker records the libraries it needs from the symbols the
        // plugin gave it before the backends ran: the bitcode's own.
        as_needed_refs: BTreeSet::new(),
        warnings: Vec::new(),
        // The linker (gold, GNU ld) keeps its own choice of copy: wpd
        // moves none.
        movable: Vec::new(),
    };
    FromLinker { model, native }
}

/// The bitcode-defined names (`defined`) the linker's arguments name, read
/// once with the text files they name (scripts, version scripts, dynamic
/// lists, response files).
#[derive(Debug, Default)]
pub struct NamedByArgs {
    /// Those they mention as a word. Conservative: a word that happens to
    /// equal a symbol only keeps that symbol.
    pub mentioned: BTreeSet<String>,
    /// Those they define over every file: `--defsym=NAME=EXPR` (and
    /// `--defsym NAME=EXPR`, `-defsym`), and the assignments (`NAME =
    /// EXPR;`, not `PROVIDE`) of the scripts they name. GNU ld and gold do
    /// not tell the plugin: they resolve the bitcode's own definition as
    /// prevailing, then the command line's value replaces it in the
    /// output. Conservative: an assignment in any text file named (a
    /// script or a response file) counts.
    pub redefined: BTreeSet<String>,
}

/// What the linker's arguments (`args[0]` the linker) name of `defined`.
pub fn named_by_args(args: &[String], defined: &BTreeSet<String>) -> NamedByArgs {
    fn words(text: &str) -> impl Iterator<Item = &str> {
        text.split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$' | '@')))
            .filter(|w| !w.is_empty())
    }
    let mut out = NamedByArgs::default();
    let mut see = |text: &str| {
        out.mentioned.extend(words(text).filter(|w| defined.contains(*w)).map(str::to_string));
    };
    let mut redefined = BTreeSet::new();
    let mut keep = |name: &str| {
        if let Some(name) = defined.get(name.trim()) {
            redefined.insert(name.clone());
        }
    };
    let mut it = args.iter().skip(1);
    while let Some(a) = it.next() {
        // Plugin options name vtables for wpd (`wpd-known-safe=`), not
        // symbols for the link.
        if a.contains("plugin-opt") {
            continue;
        }
        see(a);
        let defsym = match a.as_str() {
            "--defsym" | "-defsym" => it.next().inspect(|v| see(v)).map(String::as_str),
            _ => a.strip_prefix("--defsym=").or_else(|| a.strip_prefix("-defsym=")),
        };
        if let Some((name, _)) = defsym.and_then(|v| v.split_once('=')) {
            keep(name);
            continue;
        }
        let path = a.strip_prefix('@').unwrap_or(a);
        if let Some(text) = small_text_file(std::path::Path::new(path)) {
            see(&text);
            for name in wpd_link::resolve::script::assignments(&text) {
                keep(&name);
            }
        }
    }
    out.redefined = redefined;
    out
}

/// The contents of `path` when it is a small text file (a script, a version
/// script, a dynamic list, a response file). Objects, archives and shared
/// libraries are recognized by their first bytes and not read further.
fn small_text_file(path: &std::path::Path) -> Option<String> {
    use std::io::Read;
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() >= (1 << 20) {
        return None;
    }
    let mut file = std::fs::File::open(path).ok()?;
    let mut head = [0u8; 4];
    let n = file.read(&mut head).ok()?;
    let binary: [&[u8]; 4] = [b"\x7fELF", b"BC\xc0\xde", b"\xde\xc0\x17\x0b", b"!<ar"];
    if binary.iter().any(|m| head[..n].starts_with(m) && n == 4) {
        return None;
    }
    let mut rest = Vec::with_capacity(meta.len() as usize);
    rest.extend_from_slice(&head[..n]);
    file.read_to_end(&mut rest).ok()?;
    String::from_utf8(rest).ok()
}

/// Whether a claimed archive member was only probed, not loaded. GNU ld
/// claims members it then does not load (it checks an archive's members
/// through the plugin), and its `get_symbols` (v2) does not say so: it
/// looks each name up in its symbol table, and a name it never entered
/// comes back as `UNDEF` for a reference and as `PREVAILING_DEF_IRONLY`
/// for a definition. Such a member is left out, as the linker leaves it
/// out; were it loaded after all, its symbols would be missing and the
/// link would fail loudly.
///
/// A member is taken as probed when one of its non-weak references is
/// still undefined (`LDPR_UNDEF`) once every input was read, unless the
/// linker shows that it entered one of the member's definitions: a
/// definition resolved `PREVAILING_DEF` or `PREVAILING_DEF_IRONLY_EXP`
/// (the linker consulted its table for those), or one resolved
/// `PREVAILING_DEF_IRONLY` whose name is `bound` (another file's record of
/// the name says the table holds it, [`binds_name`]). A loaded member may
/// well keep an undefined reference that the backends then drop: a
/// reference to the typeinfo of a class whose key function was compiled
/// with `-fno-rtti`, from code the program never runs.
pub fn probed_only(symbols: &[BitcodeSymbol], resolutions: &[i32], bound: impl Fn(&str) -> bool) -> bool {
    let dangling = symbols.iter().zip(resolutions).any(|(s, &res)| s.undefined && !s.weak && res == r::UNDEF);
    let entered = symbols.iter().zip(resolutions).any(|(s, &res)| {
        !s.undefined
            && (res == r::PREVAILING_DEF
                || res == r::PREVAILING_DEF_IRONLY_EXP
                || (res == r::PREVAILING_DEF_IRONLY && bound(&s.name)))
    });
    dangling && !entered
}

/// Whether a symbol's resolution shows that the linker's symbol table
/// holds its name: every resolution but the two GNU ld also gives for a
/// name it never entered (`UNDEF`, `PREVAILING_DEF_IRONLY`) and `UNKNOWN`.
pub fn binds_name(res: i32) -> bool {
    !matches!(res, r::UNKNOWN | r::UNDEF | r::PREVAILING_DEF_IRONLY)
}

/// The `--wrap` symbols of the linker's arguments (`--wrap=X`, `--wrap X`,
/// `-wrap X`), for linkers that do not offer `get_wrap_symbols`.
pub fn wrapped(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut it = args.iter().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--wrap" | "-wrap" => out.extend(it.next().cloned()),
            _ => {
                if let Some(v) = a.strip_prefix("--wrap=").or_else(|| a.strip_prefix("-wrap=")) {
                    out.push(v.to_string());
                }
            }
        }
    }
    out
}

/// What the linker's arguments export dynamically besides what a shared
/// output exports: everything (`--export-dynamic`, `-E`; the last of it
/// and `--no-export-dynamic` wins), and names (`--export-dynamic-symbol`,
/// `--export-dynamic-symbol-list`). GNU ld, gold and mold resolve a name
/// these export as `PREVAILING_DEF`, as one a native file references, so
/// the resolutions cannot tell; code loaded with the output may be handed
/// the program's objects either way. (A dynamic list's names resolve as
/// `PREVAILING_DEF_IRONLY_EXP`, which the model reads as exported; and the
/// sanitizers' runtimes bring dynamic lists of their own.)
pub fn exports_by_args(args: &[String]) -> (bool, bool) {
    let (mut everything, mut by_name) = (false, false);
    for a in args.iter().skip(1) {
        let body = a.trim_start_matches('-');
        if !a.starts_with('-') || a.contains("plugin-opt") {
            continue;
        }
        match body {
            "export-dynamic" | "E" => everything = true,
            "no-export-dynamic" => everything = false,
            _ if body.starts_with("export-dynamic-symbol") => by_name = true,
            _ => {}
        }
    }
    (everything, by_name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exports_named_by_args() {
        let args = |a: &[&str]| {
            exports_by_args(&std::iter::once("ld").chain(a.iter().copied()).map(String::from).collect::<Vec<_>>())
        };
        assert_eq!(args(&["-o", "x", "a.o"]), (false, false));
        assert_eq!(args(&["--export-dynamic"]), (true, false));
        assert_eq!(args(&["-E", "--no-export-dynamic"]), (false, false));
        assert_eq!(args(&["--export-dynamic-symbol=_Z4makei"]), (false, true));
        assert_eq!(args(&["-export-dynamic-symbol", "f"]), (false, true));
        assert_eq!(args(&["--export-dynamic-symbol-list=l.txt"]), (false, true));
        assert_eq!(args(&["--dynamic-list", "l.txt"]), (false, false));
        assert_eq!(args(&["-plugin-opt=export-dynamic"]), (false, false));
    }

    fn sym(name: &str, undefined: bool) -> BitcodeSymbol {
        BitcodeSymbol {
            name: name.into(),
            undefined,
            weak: false,
            common: false,
            common_size: 0,
            common_align: 0,
            visibility: wpd_summary::Visibility::Default,
            comdat: None,
            used: false,
            tls: false,
            may_omit: false,
            global: true,
            format_specific: false,
            executable: true,
            unnamed_addr: false,
            indirect: false,
            start_stop_section: None,
        }
    }

    #[test]
    fn resolutions_become_the_model() {
        let a = [
            sym("main", false),
            sym("_Z3tplv", false),
            sym("_ZTV4Base", false),
            sym("_ZTI3Ext", true),
            sym("_ZTI4Host", true),
        ];
        let ra = [r::PREVAILING_DEF, r::PREVAILING_DEF_IRONLY, r::PREVAILING_DEF, r::RESOLVED_DYN, r::UNDEF];
        let omit = |n: &str| BitcodeSymbol { may_omit: true, ..sym(n, false) };
        let b = [sym("_Z3tplv", false), sym("api", false), omit("_Z6inlinev"), omit("_ZTV5Local")];
        let exp = r::PREVAILING_DEF_IRONLY_EXP;
        let rb = [r::PREEMPTED_IR, exp, exp, exp];
        let files = [
            Resolved { name: "a.o", symbols: &a, resolutions: &ra },
            Resolved { name: "b.o", symbols: &b, resolutions: &rb },
        ];
        let nothing = BTreeSet::new();
        // An executable's model: the linker's flavor, the names the command
        // line mentions and those it defines, the native files offered.
        let exe = |flavor, named: &BTreeSet<String>, redefined: &BTreeSet<String>, offered: &NativeFiles| {
            from_linker(&files, Output::Executable, flavor, Vec::new(), named, redefined, offered)
        };
        // The linker offered native files, none of them C++.
        let offered = NativeFiles { count: 3, scan: NativeScan::default(), ..Default::default() };
        let m = exe(Flavor::Bfd, &nothing, &nothing, &offered);
        assert!(m.model.loaded[0].prevailing.contains("_Z3tplv"));
        assert!(!m.model.loaded[1].prevailing.contains("_Z3tplv"));
        assert!(m.model.loaded[1].defined.contains("_Z3tplv"));
        let outside = m.model.outside_refs.known().unwrap();
        assert!(outside.contains("main") && !outside.contains("_Z3tplv") && !outside.contains("api"));
        assert!(m.model.exported.contains("api"));
        // In the dynamic symbol table because everything is (-rdynamic): an
        // inline function LLVM may omit is left out, as LLVMgold leaves it,
        // a vtable is not.
        assert!(!m.model.exported.contains("_Z6inlinev") && m.model.exported.contains("_ZTV5Local"));
        // Base's vtable is referenced natively; Ext's typeinfo comes from a
        // shared library.
        assert!(matches!(m.native.classes["4Base"][0], Sighting::References { .. }));
        assert!(matches!(m.native.classes["3Ext"][0], Sighting::Defines { .. }));
        assert!(!m.native.classes.contains_key("3tplv"));
        // Host's typeinfo is defined nowhere in the link (a shared output,
        // a plugin of the program that defines the class).
        assert!(matches!(m.native.classes["4Host"][0], Sighting::Unresolved { .. }));
        assert!(m.model.unresolved.contains("_ZTI4Host") && !m.model.unresolved.contains("_ZTI3Ext"));
        // A name the command line defines (`--defsym`) prevails nowhere.
        let redefined = BTreeSet::from(["_Z3tplv".to_string(), "not_in_the_bitcode".to_string()]);
        let m = exe(Flavor::Bfd, &redefined, &redefined, &offered);
        assert!(!m.model.loaded[0].prevailing.contains("_Z3tplv") && m.model.loaded[0].defined.contains("_Z3tplv"));
        assert_eq!(m.model.defined_by_command_line, BTreeSet::from(["_Z3tplv".to_string()]));
        assert!(m.model.kept_elsewhere().contains_key("_Z3tplv"));
        // A symbol the command line names (`-init=api`) is referenced.
        let named = BTreeSet::from(["_Z3tplv".to_string()]);
        let m = exe(Flavor::Bfd, &named, &nothing, &offered);
        assert!(m.model.outside_refs.known().unwrap().contains("_Z3tplv"));
        // No native file offered (mold): none on the command line either
        // says what three offered files without C++ say; no file at all
        // is native code the plugin cannot check; a command line the
        // plugin could not read leaves the native side unknown.
        let seen = exe(Flavor::Bfd, &nothing, &nothing, &offered);
        let none = NativeFiles { from_command_line: true, ..Default::default() };
        let m = exe(Flavor::Lld, &nothing, &nothing, &none);
        assert_eq!(m.native.cxx_code, seen.native.cxx_code);
        assert!(m.model.outside_refs.known().is_some());
        let m = exe(Flavor::Lld, &nothing, &nothing, &NativeFiles::default());
        assert!(m.native.cxx_code.is_some() && m.model.outside_refs.known().is_some());
        let unreadable = NativeFiles { from_command_line: true, unknown: Some("why".into()), ..Default::default() };
        let m = exe(Flavor::Lld, &nothing, &nothing, &unreadable);
        assert_eq!(m.native.cxx_code.as_deref(), Some("why"));
        assert!(m.model.outside_refs.known().is_none());
    }

    #[test]
    fn probed_members() {
        let nothing_bound = |_: &str| false;
        let syms = [sym("_Z3usev", true), sym("_Z3defv", false)];
        assert!(probed_only(&syms, &[r::UNDEF, r::PREVAILING_DEF_IRONLY], nothing_bound));
        assert!(!probed_only(&syms, &[r::RESOLVED_IR, r::PREVAILING_DEF_IRONLY], nothing_bound));
        // A weak reference may stay undefined in a loaded file.
        let weak = [BitcodeSymbol { weak: true, ..sym("_Z3usev", true) }];
        assert!(!probed_only(&weak, &[r::UNDEF], nothing_bound));
        // A loaded member keeps an undefined reference (the backends drop
        // it): the linker entered its definition, which another file's
        // reference resolved to, or which a regular object references.
        let bound = |name: &str| name == "_Z3defv";
        assert!(!probed_only(&syms, &[r::UNDEF, r::PREVAILING_DEF_IRONLY], bound));
        assert!(!probed_only(&syms, &[r::UNDEF, r::PREVAILING_DEF], nothing_bound));
        assert!(!probed_only(&syms, &[r::UNDEF, r::PREVAILING_DEF_IRONLY_EXP], nothing_bound));
        // A definition another file's copy preempts proves nothing.
        assert!(probed_only(&syms, &[r::UNDEF, r::PREEMPTED_IR], bound));
        assert!(binds_name(r::RESOLVED_IR) && binds_name(r::PREEMPTED_IR) && binds_name(r::PREVAILING_DEF));
        assert!(!binds_name(r::UNDEF) && !binds_name(r::PREVAILING_DEF_IRONLY));
    }

    #[test]
    fn defsyms_and_script_assignments_redefine() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("link.ld");
        let text = "SECTIONS { . = ALIGN(8); }\nassigned = other;\nPROVIDE(provided = other);\nbumped += 4;\nASSERT(compared == 1, \"x\")\n";
        std::fs::write(&script, text).unwrap();
        let defined: BTreeSet<String> = ["a", "b", "c", "assigned", "provided", "bumped", "compared", "other", "kept"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let args: Vec<String> = [
            "ld",
            "--defsym=a=kept",
            "--defsym",
            "b=kept+4",
            "-defsym=c=0x10",
            "-plugin-opt=wpd-report=x=y.json",
            &script.display().to_string(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let got = named_by_args(&args, &defined).redefined;
        let want: BTreeSet<String> = ["a", "b", "c", "assigned", "bumped"].iter().map(|s| s.to_string()).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn names_in_arguments_and_scripts() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("link.ld");
        std::fs::write(&script, "ENTRY(start_here)\nSECTIONS { .text : { *(.text) } }\n").unwrap();
        let defined: BTreeSet<String> =
            ["start_here", "hook", "other", "_ZTV4Base"].iter().map(|s| s.to_string()).collect();
        let args = vec![
            "ld".to_string(),
            "-init=hook".into(),
            "-T".into(),
            script.display().to_string(),
            "-o".into(),
            "other-prog".into(),
            "-plugin-opt=wpd-known-safe=_ZTV4Base".into(),
        ];
        let m = named_by_args(&args, &defined).mentioned;
        assert!(m.contains("start_here") && m.contains("hook"), "{m:?}");
        assert!(!m.contains("_ZTV4Base"));
        let w: Vec<String> =
            ["ld", "--wrap=malloc", "-wrap", "free", "--wrap", "open", "x.o"].iter().map(|s| s.to_string()).collect();
        assert_eq!(wrapped(&w), ["malloc", "free", "open"]);
    }
}
