//! Index files for clang's own ThinLTO backends: lld's `--thinlto-index-only`
//! flow, as Bazel and other build systems run it (docs/cli.md, "Bazel-style
//! distributed ThinLTO"). The link stops after the thin link and writes,
//! per bitcode input, `<input>.thinlto.bc` (and `<input>.imports`); the
//! build system then compiles each input with an unmodified
//! `clang -c -x ir <input> -fthinlto-index=<input>.thinlto.bc` and links the
//! objects itself.
//!
//! Those backends compile the inputs as clang wrote them, so wpd cannot
//! rewrite a module: what carries over of the plan is what LLVM's backend
//! applies from the index, its type-id resolutions (WholeProgramDevirt in
//! its importing mode). [`resolutions`] turns the plan into them:
//! single implementations (a local target exported by LLVM's thin link and
//! named as its backend promotes it) and uniform return values of slots
//! whose type id is a metadata string (a type id local to its module has
//! no name in the index). Unique return values and virtual constant
//! propagation need a rewritten module; the report lists those calls under
//! `clang_indexes.not_carried`. Closed-set dispatch, speculation and dead
//! slots need one too, and an index-only link does not plan them
//! ([`crate::link`]).
//! LLVM's own decisions are dropped from the index (`wpd_lto_new_index_only`):
//! a call wpd left indirect stays indirect.

use crate::backends::codegen::CodegenOptions;
use crate::backends::thinlto::{lto_options, resolution};
use crate::error::{Error, Result};
use crate::input::BitcodeInput;
use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use wpd_link::lto::LtoSymbols;
use wpd_llvm::{IndexOnly, LtoInput, LtoResolution, SlotResolution, ThinLto};
use wpd_summary::plan::Resolution;
use wpd_summary::{ModuleSummary, Plan};

/// lld's `--thinlto-index-only[=FILE]` and its companions (gold's
/// `-plugin-opt=thinlto-index-only…`): the link stops after the thin link
/// and writes, beside each bitcode input, the index file a
/// `clang -fthinlto-index=<input>.thinlto.bc` backend compiles it with
/// ([`crate::backends::clang_indexes`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ClangIndexes {
    pub enabled: bool,
    /// `=FILE`: the native objects the final link takes, one per line.
    pub list: Option<PathBuf>,
    /// `thinlto-emit-imports-files`: `<input>.imports` too.
    pub emit_imports: bool,
    /// `thinlto-prefix-replace=OLD;NEW[;NATIVE]`: files go to the input's
    /// path with OLD replaced by NEW (listed objects: by NATIVE).
    pub prefix_replace: Option<(String, String, String)>,
    /// `thinlto-object-suffix-replace=OLD;NEW`: the inputs are index-only
    /// bitcode (`-fthin-link-bitcode=`) whose full bitcode is the file with
    /// suffix OLD replaced by NEW; the indexes name that file.
    pub object_suffix_replace: Option<(String, String)>,
    /// `lto-obj-path=`/`obj-path=`: where the object of LLVM's regular LTO
    /// module goes (the vtables of split LTO units).
    pub obj_path: Option<PathBuf>,
}

impl ClangIndexes {
    /// `thinlto-prefix-replace=` (`shown`: as spelled).
    pub fn set_prefix_replace(&mut self, v: &str, shown: &str) -> Result<()> {
        let parts: Vec<&str> = v.split(';').collect();
        match parts.as_slice() {
            [old, new] => self.prefix_replace = Some((old.to_string(), new.to_string(), String::new())),
            [old, new, native] => self.prefix_replace = Some((old.to_string(), new.to_string(), native.to_string())),
            _ => return Err(Error::msg(format!("{shown} expects 'old;new' or 'old;new;native'"))),
        }
        Ok(())
    }

    /// `thinlto-object-suffix-replace=` (`shown`: as spelled).
    pub fn set_object_suffix_replace(&mut self, v: &str, shown: &str) -> Result<()> {
        match v.split(';').collect::<Vec<_>>().as_slice() {
            [old, new] => self.object_suffix_replace = Some((old.to_string(), new.to_string())),
            _ => return Err(Error::msg(format!("{shown} expects 'old;new'"))),
        }
        Ok(())
    }

    /// The companions mean nothing without `thinlto-index-only`: an error
    /// rather than an option taken and ignored.
    pub fn check(&self) -> Result<()> {
        if self.enabled {
            return Ok(());
        }
        let given = [
            (self.emit_imports, "thinlto-emit-imports-files"),
            (self.prefix_replace.is_some(), "thinlto-prefix-replace"),
            (self.object_suffix_replace.is_some(), "thinlto-object-suffix-replace"),
            (self.obj_path.is_some(), "lto-obj-path"),
        ];
        match given.iter().find(|(on, _)| *on) {
            Some((_, name)) => Err(Error::msg(format!("{name} is only for a --thinlto-index-only link"))),
            None => Ok(()),
        }
    }

    /// Where an index file, imports file or listed object of the input
    /// `path` goes: `path` with the prefix replaced (`native`: the object
    /// list's prefix), as LLVM's `getThinLTOOutputFile`.
    pub fn output_path(&self, path: &str, native: bool) -> String {
        match &self.prefix_replace {
            Some((old, new, native_prefix)) => {
                let to = if native && !native_prefix.is_empty() { native_prefix } else { new };
                match path.strip_prefix(old.as_str()) {
                    Some(rest) => format!("{to}{rest}"),
                    None => path.to_string(),
                }
            }
            None => path.to_string(),
        }
    }

    /// The module name an input at `path` is known by: its path, with the
    /// object suffix replaced.
    pub fn module_path(&self, path: &str) -> String {
        match &self.object_suffix_replace {
            Some((old, new)) => match path.strip_suffix(old.as_str()) {
                Some(stem) => format!("{stem}{new}"),
                None => path.to_string(),
            },
            None => path.to_string(),
        }
    }
}

/// What of the plan reaches clang's backends (the report's `clang_indexes`).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Carried {
    /// Type-id resolutions written into the index.
    pub resolutions: usize,
    /// Call sites the backends turn into direct calls ...
    pub single_impl: u32,
    /// ... and into a constant.
    pub uniform_ret_val: u32,
    /// Call sites the plan devirtualizes that the backends cannot, by kind.
    pub not_carried: Vec<NotCarried>,
}

/// Devirtualizations of one kind that an index cannot carry.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct NotCarried {
    /// `single-impl`, `unique-ret-val`, ... (the remarks' words).
    pub kind: &'static str,
    /// Call sites.
    pub count: u32,
    pub why: &'static str,
}

/// The plan's devirtualizations as LLVM type-id resolutions, what they
/// carry, and the functions the resolutions name (which must stay visible
/// to every backend: none may internalize or drop them).
/// `thin[k]`: input `k` has a ThinLTO module (else all its code goes to
/// LLVM's regular LTO module, where no local of it can be exported).
pub fn resolutions(
    plan: &Plan,
    summaries: &[ModuleSummary],
    thin: &[bool],
) -> (Vec<SlotResolution>, Carried, BTreeSet<String>) {
    let local: HashSet<&str> =
        summaries.iter().flat_map(|s| s.type_ids.iter().filter(|t| t.local).map(|t| t.name.as_str())).collect();
    // A local target wpd promotes: its module (in input order) and its name.
    let promoted: std::collections::HashMap<&str, (usize, &str)> = plan
        .modules
        .iter()
        .enumerate()
        .flat_map(|(k, m)| m.promotions.iter().map(move |p| (p.promoted.as_str(), (k, p.symbol.as_str()))))
        .collect();
    let mut out = Vec::new();
    let mut carried = Carried::default();
    let mut targets = BTreeSet::new();
    let mut lost = std::collections::BTreeMap::<(&'static str, &'static str), u32>::new();
    const LOCAL: &str = "the type id is local to its module: an index names type ids by string";
    const REWRITE: &str = "needs wpd's rewrite of the module, which clang's backend compiles as clang wrote it";
    for d in &plan.decisions {
        let id_bytes = wpd_summary::name::to_bytes(d.type_id.as_str()).into_owned();
        let is_local = local.contains(d.type_id.as_str());
        if d.resolution == Resolution::SingleImpl {
            match &d.target {
                // Every call of the slot: LLVM's backend resolves a slot,
                // not a call. A local target is exported by LLVM's thin
                // link, under LLVM's promoted name for it.
                Some(t)
                    if !is_local
                        && d.devirtualized == d.call_sites
                        && promoted.get(t.as_str()).is_none_or(|&(k, _)| thin.get(k) == Some(&true)) =>
                {
                    let (name, local_module) = match promoted.get(t.as_str()) {
                        Some(&(k, symbol)) => (symbol, Some(k)),
                        None => (t.as_str(), None),
                    };
                    out.push(SlotResolution {
                        type_id: id_bytes,
                        offset: d.offset,
                        single_impl: Some(wpd_summary::name::to_bytes(name).into_owned()),
                        local_module,
                        args: Vec::new(),
                        value: 0,
                    });
                    if local_module.is_none() {
                        targets.insert(t.clone());
                    }
                    carried.single_impl += d.devirtualized;
                }
                _ if is_local => *lost.entry(("single-impl", LOCAL)).or_default() += d.devirtualized,
                Some(_) if d.devirtualized == d.call_sites => {
                    *lost
                        .entry(("single-impl", "the target is local to a module without a ThinLTO part"))
                        .or_default() += d.devirtualized
                }
                _ => {
                    *lost
                        .entry((
                            "single-impl",
                            "only some of the slot's calls are devirtualized: an index resolves them all",
                        ))
                        .or_default() += d.devirtualized
                }
            }
            continue;
        }
        for a in &d.by_args {
            match a.resolution {
                Resolution::UniformRetVal if !is_local => {
                    out.push(SlotResolution {
                        type_id: id_bytes.clone(),
                        offset: d.offset,
                        single_impl: None,
                        local_module: None,
                        args: a.args.clone(),
                        value: a.value,
                    });
                    carried.uniform_ret_val += a.call_sites;
                }
                Resolution::UniformRetVal => *lost.entry(("uniform-ret-val", LOCAL)).or_default() += a.call_sites,
                Resolution::UniqueRetVal => *lost.entry(("unique-ret-val", REWRITE)).or_default() += a.call_sites,
                Resolution::VirtualConstProp => {
                    *lost.entry(("virtual-const-prop", REWRITE)).or_default() += a.call_sites
                }
                _ => {}
            }
        }
    }
    out.sort();
    out.dedup();
    carried.resolutions = out.len();
    carried.not_carried =
        lost.into_iter().filter(|(_, n)| *n > 0).map(|((kind, why), count)| NotCarried { kind, count, why }).collect();
    (out, carried, targets)
}

/// What an index-only link wrote.
#[derive(Debug, Default)]
pub struct IndexFiles {
    pub carried: Carried,
    /// Every file written: index and imports files, the object list and
    /// LLVM's regular LTO object (`--lto-obj-path`).
    pub written: Vec<PathBuf>,
}

/// Writes the index files of the link's inputs (in link order, with their
/// summaries and the plan) for clang's backends, as `opts` asks.
pub fn write(
    inputs: &[BitcodeInput],
    summaries: &[ModuleSummary],
    plan: &Plan,
    symbols: &LtoSymbols<'_>,
    codegen: &CodegenOptions,
    opts: &ClangIndexes,
    jobs: Option<usize>,
) -> Result<IndexFiles> {
    if symbols.module_count() != inputs.len() {
        return Err(Error::msg(format!(
            "the link model has {} bitcode modules, the link {}",
            symbols.module_count(),
            inputs.len()
        )));
    }
    let mut names = Vec::with_capacity(inputs.len());
    let mut thin = Vec::with_capacity(inputs.len());
    let mut seen = HashSet::new();
    let mut split_units = false;
    for input in inputs {
        if input.member.is_some() {
            return Err(Error::at(
                &input.name,
                "--thinlto-index-only: an archive member has no file of its own for clang's backend to compile; \
                 link its objects between --start-lib and --end-lib instead",
            ));
        }
        if !is_bitcode_file(Path::new(&input.path)) {
            return Err(Error::at(
                &input.name,
                "--thinlto-index-only: not a bitcode file (a fat LTO object?); clang's backend compiles bitcode files",
            ));
        }
        let name = opts.module_path(&input.path);
        if !seen.insert(name.clone()) {
            return Err(Error::at(&input.name, "--thinlto-index-only: this module is named twice in the link"));
        }
        let layout = wpd_llvm::thinlto_layout(&input.bytes, &input.name)
            .map_err(|e| Error::at(&input.name, format!("invalid bitcode: {}", e.message)))?;
        // A split unit's regular part, or a file with no ThinLTO module at
        // all, goes to LLVM's regular LTO module.
        split_units |= layout.is_none_or(|l| l.split_unit);
        thin.push(layout.is_some());
        names.push(name);
    }
    if split_units && opts.obj_path.is_none() {
        return Err(Error::msg(
            "--thinlto-index-only: split LTO units' vtables (and bitcode without a ThinLTO module) are compiled by \
             this link into LLVM's regular LTO object; name it with --lto-obj-path=FILE (-plugin-opt=obj-path=FILE) \
             and link it with the backends' objects",
        ));
    }
    let (resolutions, carried, targets) = resolutions(plan, summaries, &thin);
    let mut written = Vec::new();
    let mut indexes = Vec::new();
    for name in &names {
        let base = opts.output_path(name, false);
        indexes.push(PathBuf::from(format!("{base}.thinlto.bc")));
        written.push(PathBuf::from(format!("{base}.thinlto.bc")));
        if opts.emit_imports {
            written.push(PathBuf::from(format!("{base}.imports")));
        }
    }
    // Files of an earlier run would pass for this one's.
    for f in &written {
        let _ = std::fs::remove_file(f);
    }
    written.extend(opts.list.iter().cloned());
    written.extend(opts.obj_path.iter().cloned());
    let (old, new, native) = match &opts.prefix_replace {
        Some((o, n, x)) => (o.as_str(), n.as_str(), x.as_str()),
        None => ("", "", ""),
    };
    let x = IndexOnly {
        old_prefix: old,
        new_prefix: new,
        native_prefix: native,
        emit_imports: opts.emit_imports,
        linked_objects: opts.list.as_deref(),
        whole_program_visibility: plan.options.whole_program_visibility,
        resolutions,
        type_ids: summaries
            .iter()
            .flat_map(|s| s.type_ids.iter().filter(|t| !t.local))
            .map(|t| wpd_summary::name::to_bytes(t.name.as_str()).into_owned())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect(),
    };
    let result = (|| -> Result<()> {
        let options = wpd_llvm::LtoOptions { regular_parts: split_units, ..lto_options(codegen, jobs) };
        let mut lto = ThinLto::index_only(&options, &x)?;
        for (k, (input, name)) in inputs.iter().zip(&names).enumerate() {
            let lto_input = LtoInput::open(&input.bytes, name)
                .map_err(|e| Error::at(&input.name, format!("cannot read the module: {}", e.message)))?;
            let resolutions: Vec<LtoResolution> = lto_input
                .symbols()
                .iter()
                .map(|s| {
                    let mut r = resolution(symbols, k, s, false, &summaries[k]);
                    // A function a resolution names is called from other
                    // modules' backends by name: LLVM's thin link must
                    // neither internalize nor drop it.
                    if !s.undefined && r.prevailing && targets.contains(&s.name) {
                        r.visible_to_regular_obj = true;
                    }
                    r
                })
                .collect();
            lto.add(lto_input, &resolutions).map_err(|e| e.context(&input.name))?;
        }
        let objects =
            lto.run(&mut |w| eprintln!("wpd: warning: {}", w.replace('\n', " ")), &|| {}, None).map_err(|e| {
                if e.message.contains("inconsistent LTO Unit splitting") {
                    // What lld says of the same inputs; wpd's own links
                    // take them (each module is rewritten with one flag).
                    Error::msg(
                        "--thinlto-index-only: the link mixes bitcode with and without split LTO units (a module \
                         built without -flto=thin, or with -fno-split-lto-unit), which LLVM's thin link refuses, \
                         as lld does; build every object alike, or link with --wpd-index-only",
                    )
                } else {
                    Error::msg(format!("ThinLTO index-only link: {}", e.message))
                }
            })?;
        // A file with no ThinLTO module (its code all in the regular LTO
        // object) has no index from LLVM: it gets one that compiles to an
        // empty object, so that a build system compiling every input finds
        // its files.
        for (input, index) in inputs.iter().zip(&indexes) {
            if !index.exists() {
                write_empty(&input.path, opts)?;
            }
        }
        // As lld: the regular LTO object, empty when no input had a
        // regular part.
        if let Some(path) = &opts.obj_path {
            wpd_summary::container::write_bytes_atomic(&objects.regular, path)?;
        }
        Ok(())
    })();
    match result {
        Ok(()) => Ok(IndexFiles { carried, written }),
        Err(e) => {
            // No half-written set of indexes: a build system would compile
            // stale ones.
            for f in &written {
                let _ = std::fs::remove_file(f);
            }
            Err(e)
        }
    }
}

/// Whether the file at `path` is bitcode (plain or wrapped), not an object
/// file carrying bitcode in a section.
fn is_bitcode_file(path: &Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 4];
    std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut magic)).is_ok()
        && (magic == *b"BC\xC0\xDE" || magic == [0xDE, 0xC0, 0x17, 0x0B])
}

/// Writes the empty index (and, with `emit_imports`, the empty imports
/// file) of the bitcode input at `path`: clang's backend compiles it into
/// an empty object, so a build system that compiles every input finds its
/// files, as with lld. For a bitcode file the link did not load, or one
/// whose code is all in LLVM's regular LTO object. Returns the files
/// written.
pub fn write_empty(path: &str, opts: &ClangIndexes) -> Result<Vec<PathBuf>> {
    let base = opts.output_path(&opts.module_path(path), false);
    let index = PathBuf::from(format!("{base}.thinlto.bc"));
    if let Some(dir) = index.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| Error::at(dir.display().to_string(), e.to_string()))?;
    }
    wpd_llvm::write_empty_index(&index).map_err(|e| Error::at(path, e.message))?;
    let mut written = vec![index];
    if opts.emit_imports {
        let imports = PathBuf::from(format!("{base}.imports"));
        std::fs::write(&imports, b"").map_err(|e| Error::at(imports.display().to_string(), e.to_string()))?;
        written.push(imports);
    }
    Ok(written)
}
