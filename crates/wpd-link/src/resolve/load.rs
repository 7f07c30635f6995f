//! Loading in the linker's order. First every item of the line is opened
//! (libraries searched, scripts followed, archives split into members)
//! into a sequence of steps; then the steps run as the real linker runs
//! them:
//!
//! - lld reads every file in order; archive members (and `--start-lib`
//!   objects) only add lazy symbols, and a strong reference from anywhere on
//!   the line, earlier or later, extracts the member at once (depth first:
//!   the extracted member is read before the rest of the file that pulled
//!   it). After the files: the entry symbol, `--undefined-glob`, symbols of
//!   `--defsym` expressions, `--wrap`.
//! - GNU ld and gold scan an archive at its position, member by member,
//!   until a pass extracts nothing; a group (`--start-group`, `GROUP`)
//!   rescans its archives until nothing new is extracted. `-u`, `-e` and the
//!   symbols of `--defsym` expressions are references before any input;
//!   `--wrap` renames references as they are read. GNU ld also extracts a
//!   member whose strong definition would replace a common symbol.

use super::exports;
use super::line::{Duplicates, Flavor, InputState, Item, LinkLine};
use super::model::{
    Input, InputId, InputKind, LinkModel, Loaded, LoadedKind, Member, MemberId, MovableGroup, OutsideRefs, Refs,
};
use super::script::{self, Command, Entry};
use super::search::Search;
use super::source::{Content, MemberKind, Source};
use super::symbols::{Definition, Symbol, SymbolTable, Visibility};
use super::symtab::{Effect, State, SymId, Symtab, UnitId};
use super::{Error, glob_match};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::Path;
use std::rc::Rc;

/// Scripts may name scripts; this deep is a loop.
const MAX_SCRIPT_DEPTH: u32 = 16;

struct Unit {
    input: InputId,
    member: Option<MemberId>,
    kind: LoadedKind,
    table: Rc<SymbolTable>,
    soname: Option<String>,
    loaded: bool,
    name: String,
    /// A shared library read under `--as-needed` (or in a script's
    /// `AS_NEEDED`): the output names it only if a reference needs it.
    as_needed: bool,
}

/// One step of the line, after opening.
enum Step {
    /// Read this unit (object, bitcode, shared library, raw data).
    Unit(UnitId),
    /// A lazy `--start-lib` object.
    Lazy(UnitId),
    /// An archive's lazy members.
    Archive(Vec<UnitId>),
    GroupStart,
    GroupEnd,
    LibStart,
    LibEnd,
}

pub struct Loader<'a> {
    line: &'a LinkLine,
    source: &'a mut dyn Source,
    search: Search<'a>,
    inputs: Vec<Input>,
    units: Vec<Unit>,
    steps: Vec<Step>,
    symtab: Symtab,
    /// Load order.
    order: Vec<UnitId>,
    comdats: HashSet<String>,
    sonames: HashSet<String>,
    /// Reasons the outside references are unknown (the first is reported).
    unknown: Vec<String>,
    script_entry: Option<String>,
    /// Symbols the scripts assign: their value replaces every file's
    /// definition, as `--defsym`'s does.
    script_assigned: BTreeSet<String>,
    /// The names version scripts list by name in a `global:` section.
    version_named: BTreeSet<String>,
    in_lib: bool,
    exported: BTreeSet<String>,
    preemptible: BTreeSet<String>,
    /// Strong definitions met after another strong one of the same name:
    /// (name, the unit whose definition stays, the later unit).
    duplicates: Vec<(SymId, UnitId, UnitId)>,
    /// What the linker will warn of, for the front end to say too.
    warnings: Vec<String>,
}

impl<'a> Loader<'a> {
    pub fn new(line: &'a LinkLine, source: &'a mut dyn Source) -> Loader<'a> {
        Loader {
            line,
            source,
            search: Search { lib_paths: line.lib_paths.clone(), sysroot: line.sysroot.as_deref() },
            inputs: Vec::new(),
            units: Vec::new(),
            steps: Vec::new(),
            symtab: Symtab::default(),
            order: Vec::new(),
            comdats: HashSet::new(),
            sonames: HashSet::new(),
            unknown: line.unknown.iter().cloned().collect(),
            script_entry: None,
            script_assigned: BTreeSet::new(),
            version_named: BTreeSet::new(),
            in_lib: false,
            exported: BTreeSet::new(),
            preemptible: BTreeSet::new(),
            duplicates: Vec::new(),
            warnings: Vec::new(),
        }
    }

    // ---- opening -------------------------------------------------------

    /// Opens every item of the line, in order.
    pub fn open(&mut self) -> Result<(), Error> {
        for (index, item) in self.line.items.iter().enumerate() {
            match item {
                Item::File { path, state } => self.open_file(Path::new(path), *state, index, false, 0)?,
                Item::Library { spec, state } => self.open_library(spec, *state, index, false, 0)?,
                Item::Script { path, state } => self.open_file(Path::new(path), *state, index, false, 0)?,
                Item::GroupStart => self.steps.push(Step::GroupStart),
                Item::GroupEnd => self.steps.push(Step::GroupEnd),
                Item::LibStart => {
                    self.in_lib = true;
                    self.steps.push(Step::LibStart);
                }
                Item::LibEnd => {
                    self.in_lib = false;
                    self.steps.push(Step::LibEnd);
                }
            }
        }
        Ok(())
    }

    fn open_library(
        &mut self,
        spec: &str,
        state: InputState,
        item: usize,
        from_script: bool,
        depth: u32,
    ) -> Result<(), Error> {
        match self.search.library(&*self.source, spec, state.static_only) {
            Some(path) => self.open_file(&path, state, item, from_script, depth),
            None => {
                // The real linker reports it; what it would define or
                // reference is unknown here.
                self.unknown.push(format!("-l{spec} (not found in the -L paths)"));
                Ok(())
            }
        }
    }

    fn add_input(&mut self, path: &Path, kind: InputKind, item: usize, from_script: bool) -> InputId {
        let id = InputId(self.inputs.len() as u32);
        self.inputs.push(Input { path: path.to_path_buf(), kind, item, from_script });
        id
    }

    fn add_unit(
        &mut self,
        input: InputId,
        member: Option<MemberId>,
        kind: LoadedKind,
        table: Rc<SymbolTable>,
        soname: Option<String>,
        name: String,
    ) -> UnitId {
        let id = UnitId(self.units.len() as u32);
        self.units.push(Unit { input, member, kind, table, soname, loaded: false, name, as_needed: false });
        id
    }

    fn open_file(
        &mut self,
        path: &Path,
        state: InputState,
        item: usize,
        from_script: bool,
        depth: u32,
    ) -> Result<(), Error> {
        let shown = path.display().to_string();
        match self.source.load(path, state.binary)? {
            Content::Object(table) => self.plain(path, InputKind::Object, LoadedKind::Object, table, item, from_script),
            Content::Bitcode(table) => {
                self.plain(path, InputKind::Bitcode, LoadedKind::Bitcode, table, item, from_script)
            }
            Content::Shared { soname, symbols } => {
                let input = self.add_input(path, InputKind::Shared, item, from_script);
                let unit = self.add_unit(input, None, LoadedKind::Shared, symbols, soname, shown);
                self.units[unit.0 as usize].as_needed = state.as_needed;
                self.steps.push(Step::Unit(unit));
            }
            Content::Archive { thin, members } => {
                let input = self.add_input(path, InputKind::Archive { thin, members: Vec::new() }, item, from_script);
                let mut units = Vec::new();
                let mut infos = Vec::with_capacity(members.len());
                for (j, m) in members.into_iter().enumerate() {
                    let (kind, table) = match m.kind {
                        MemberKind::Object(t) => (LoadedKind::Object, t),
                        MemberKind::Bitcode(t) => (LoadedKind::Bitcode, t),
                        MemberKind::Other => (LoadedKind::Other, Rc::default()),
                    };
                    if kind != LoadedKind::Other {
                        let name = format!("{shown}({})", m.name);
                        units.push(self.add_unit(input, Some(MemberId(j as u32)), kind, table, None, name));
                    }
                    infos.push(Member { name: m.name, kind, loaded: false });
                }
                if let InputKind::Archive { members, .. } = &mut self.inputs[input.index()].kind {
                    *members = infos;
                }
                if state.whole_archive {
                    self.steps.extend(units.into_iter().map(Step::Unit));
                } else {
                    self.steps.push(Step::Archive(units));
                }
            }
            Content::Script(text) => {
                let id = self.add_input(path, InputKind::Opaque, item, from_script);
                if depth >= MAX_SCRIPT_DEPTH {
                    return Err(Error::at(shown, "linker scripts nested too deeply"));
                }
                let s = script::parse(&text, &shown)?;
                if let Some(u) = &s.unknown {
                    self.unknown.push(u.clone());
                }
                self.script_assigned.extend(s.assigned.iter().cloned());
                // The input each file entry opened (None: not found).
                let mut opened = Vec::new();
                for c in &s.commands {
                    match c {
                        Command::Inputs { group, entries } => {
                            if *group {
                                self.steps.push(Step::GroupStart);
                            }
                            for e in entries {
                                let before = self.inputs.len();
                                self.open_entry(path, e, state, item, depth)?;
                                opened.push((self.inputs.len() > before).then_some(InputId(before as u32)));
                            }
                            if *group {
                                self.steps.push(Step::GroupEnd);
                            }
                        }
                        Command::SearchDir(d) => self.search.lib_paths.push(d.clone()),
                        Command::Entry(e) => self.script_entry = Some(e.clone()),
                        Command::Keep { .. } => {}
                    }
                }
                self.inputs[id.index()].kind = InputKind::Script { script: s, opened };
            }
            Content::Opaque(what) => {
                let input = self.add_input(path, InputKind::Opaque, item, from_script);
                if !state.binary {
                    self.unknown.push(format!("{shown} ({what})"));
                }
                let unit = self.add_unit(input, None, LoadedKind::Other, Rc::default(), None, shown);
                self.steps.push(Step::Unit(unit));
            }
        }
        Ok(())
    }

    /// One file entry of a script's `INPUT` or `GROUP` list.
    fn open_entry(
        &mut self,
        script: &Path,
        e: &Entry,
        state: InputState,
        item: usize,
        depth: u32,
    ) -> Result<(), Error> {
        let shown = script.display().to_string();
        match e {
            Entry::Library { spec, as_needed } => {
                let st = InputState { as_needed: state.as_needed || *as_needed, ..state };
                self.open_library(spec, st, item, true, depth + 1)
            }
            Entry::File { name, as_needed } => {
                let st = InputState { as_needed: state.as_needed || *as_needed, ..state };
                match self.search.script_file(&*self.source, script, name) {
                    Some(p) if self.source.is_file(&p) => self.open_file(&p, st, item, true, depth + 1),
                    _ => {
                        self.unknown.push(format!("{name} (named by linker script {shown}, not found)"));
                        Ok(())
                    }
                }
            }
        }
    }

    /// An object or bitcode file: loaded, or lazy inside `--start-lib`.
    fn plain(
        &mut self,
        path: &Path,
        input_kind: InputKind,
        kind: LoadedKind,
        table: Rc<SymbolTable>,
        item: usize,
        from_script: bool,
    ) {
        let input = self.add_input(path, input_kind, item, from_script);
        let unit = self.add_unit(input, None, kind, table, None, path.display().to_string());
        self.steps.push(if self.in_lib { Step::Lazy(unit) } else { Step::Unit(unit) });
    }

    // ---- reading units -------------------------------------------------

    /// The name a reference from a unit of `kind` binds to: GNU ld and gold
    /// apply `--wrap` to references as they read objects (lld applies it
    /// after resolution, see [`Loader::wrap_lld`]).
    fn referenced_name<'n>(&self, name: &'n str, kind: LoadedKind) -> std::borrow::Cow<'n, str> {
        if self.line.flavor == Flavor::Lld || kind == LoadedKind::Shared || self.line.wraps.is_empty() {
            return name.into();
        }
        if self.line.wraps.iter().any(|w| w == name) {
            return format!("__wrap_{name}").into();
        }
        if let Some(x) = name.strip_prefix("__real_")
            && self.line.wraps.iter().any(|w| w == x)
        {
            return x.to_string().into();
        }
        name.into()
    }

    /// A reference; extracts a lazy member when the rules say so.
    fn reference(&mut self, name: &str, weak: bool) {
        let id = self.symtab.id(name);
        if let Effect::Extract(u) = self.symtab.reference(id, weak) {
            self.load(u);
        }
    }

    /// Loads a unit: its definitions first, then its references (lld's
    /// order, so that a file's own definitions answer its references before
    /// any archive is asked).
    fn load(&mut self, u: UnitId) {
        let unit = &mut self.units[u.0 as usize];
        if unit.loaded {
            return;
        }
        unit.loaded = true;
        let (kind, table) = (unit.kind, Rc::clone(&unit.table));
        let key = unit.soname.clone().unwrap_or_else(|| unit.name.clone());
        self.order.push(u);
        match kind {
            LoadedKind::Other => {}
            LoadedKind::Shared => {
                // A second library with the same soname adds nothing.
                if !self.sonames.insert(key) {
                    return;
                }
                self.symtab.reserve(table.symbols.len());
                for s in &table.symbols {
                    if s.is_undefined() {
                        self.reference(&s.name, s.weak);
                    } else {
                        let id = self.symtab.id(&s.name);
                        self.symtab.shared(id, u);
                    }
                }
            }
            LoadedKind::Object | LoadedKind::Bitcode => {
                let kept: Vec<bool> =
                    table.comdats.iter().map(|c| !c.deduplicate || self.comdats.insert(c.name.clone())).collect();
                for s in table.symbols.iter().filter(|s| !s.is_undefined()) {
                    if s.comdat.is_some_and(|c| !kept.get(c as usize).copied().unwrap_or(true)) {
                        // A copy in a discarded comdat group is a reference.
                        self.reference(&s.name, s.weak);
                        continue;
                    }
                    let common = match s.definition {
                        Definition::Common { size } => Some(size),
                        _ => None,
                    };
                    let id = self.symtab.id(&s.name);
                    if let Some(first) = self.symtab.define(id, u, s.weak, common) {
                        self.duplicates.push((id, first, u));
                    }
                }
                for s in table.symbols.iter().filter(|s| s.is_undefined()) {
                    let name = self.referenced_name(&s.name, kind).into_owned();
                    self.reference(&name, s.weak);
                }
            }
        }
    }

    /// lld: a lazy unit offers its definitions; a pending strong reference
    /// extracts it.
    fn offer(&mut self, u: UnitId) {
        let table = Rc::clone(&self.units[u.0 as usize].table);
        for s in table.symbols.iter().filter(|s| !s.is_undefined()) {
            if self.units[u.0 as usize].loaded {
                return;
            }
            let id = self.symtab.id(&s.name);
            if let Effect::Extract(x) = self.symtab.lazy(id, u) {
                self.load(x);
            }
        }
    }

    /// GNU ld / gold: whether scanning an archive extracts `u` now.
    fn wanted(&self, u: UnitId) -> bool {
        let table = &self.units[u.0 as usize].table;
        table.symbols.iter().filter(|s| !s.is_undefined()).any(|s| {
            match self.symtab.find(&s.name).and_then(|id| self.symtab.state(id)) {
                Some(State::Undefined { weak: false }) => true,
                // GNU ld pulls a member whose real definition replaces a
                // common symbol (bfd's elf_link_is_defined_archive_symbol).
                Some(State::Common { .. }) => {
                    self.line.flavor == Flavor::Bfd && s.definition == Definition::Defined && !s.weak
                }
                _ => false,
            }
        })
    }

    /// GNU ld / gold: scans an archive's members until a pass extracts
    /// nothing; returns whether anything was extracted.
    fn scan(&mut self, members: &[UnitId]) -> bool {
        let mut any = false;
        loop {
            let mut progress = false;
            for &u in members {
                if !self.units[u.0 as usize].loaded && self.wanted(u) {
                    self.load(u);
                    progress = true;
                }
            }
            any |= progress;
            if !progress {
                return any;
            }
        }
    }

    /// The entry symbol: `-e`, else a script's `ENTRY`, else `_start` for
    /// an executable.
    fn entry(&self) -> Option<String> {
        self.line
            .entry
            .clone()
            .or_else(|| self.script_entry.clone())
            .or_else(|| (!self.line.exports.shared && !self.line.relocatable).then(|| "_start".to_string()))
    }

    /// Symbols `--defsym` expressions name.
    fn defsym_refs(&self) -> Vec<String> {
        self.line.defsyms.iter().flat_map(|(_, expr)| expression_symbols(expr)).collect()
    }

    // ---- running -------------------------------------------------------

    pub fn run(&mut self) {
        match self.line.flavor {
            Flavor::Lld => self.run_lld(),
            Flavor::Bfd | Flavor::Gold => self.run_gnu(),
        }
    }

    fn run_lld(&mut self) {
        // -u before the inputs: `-u foo a.a b.so` extracts from a.a.
        for name in self.line.undefined.iter().chain(&self.line.require_defined) {
            self.reference(name, false);
        }
        let steps = std::mem::take(&mut self.steps);
        for step in &steps {
            match step {
                Step::Unit(u) => self.load(*u),
                Step::Lazy(u) => self.offer(*u),
                Step::Archive(members) => {
                    for &u in members {
                        self.offer(u);
                    }
                }
                Step::GroupStart | Step::GroupEnd | Step::LibStart | Step::LibEnd => {}
            }
        }
        self.steps = steps;
        // The entry symbol is extracted from an archive (even when only
        // weakly referenced so far), as are lazy symbols matching
        // --undefined-glob.
        if let Some(e) = self.entry() {
            self.extract_if_lazy(&e);
        }
        for glob in &self.line.undefined_globs {
            let matching: Vec<String> = (0..self.symtab.names.len())
                .filter(|&i| self.symtab.states[i].is_some() && glob_match(glob, &self.symtab.names[i]))
                .map(|i| self.symtab.names[i].to_string())
                .collect();
            for name in matching {
                self.extract_if_lazy(&name);
            }
        }
        for name in self.defsym_refs() {
            self.reference(&name, false);
        }
        self.wrap_lld();
        self.define_command_line();
    }

    fn extract_if_lazy(&mut self, name: &str) {
        if let Some(id) = self.symtab.find(name)
            && let Some(State::Lazy { unit, .. }) = self.symtab.state(id)
        {
            self.load(unit);
        }
    }

    /// lld's `addWrappedSymbols`: for each wrapped symbol the link knows,
    /// `__wrap_X` is referenced (with X's binding), and X itself when
    /// `__real_X` is referenced.
    fn wrap_lld(&mut self) {
        let mut seen = HashSet::new();
        for name in &self.line.wraps {
            if !seen.insert(name) {
                continue;
            }
            let Some(id) = self.symtab.find(name) else { continue };
            let weak = match self.symtab.state(id) {
                Some(State::Undefined { weak }) => weak,
                Some(State::Lazy { weak_ref, .. }) => weak_ref,
                Some(State::Defined { weak, .. }) => weak,
                _ => false,
            };
            self.reference(&format!("__wrap_{name}"), weak);
            if self.symtab.find(&format!("__real_{name}")).is_some() {
                self.reference(name, weak);
            }
        }
    }

    fn define_command_line(&mut self) {
        for (name, _) in &self.line.defsyms {
            let id = self.symtab.id(name);
            self.symtab.command_line(id);
        }
    }

    fn run_gnu(&mut self) {
        // References before any input: -u, --require-defined, -e, and the
        // symbols --defsym expressions use.
        let mut early: Vec<String> = self.line.undefined.iter().chain(&self.line.require_defined).cloned().collect();
        early.extend(self.line.entry.iter().cloned());
        early.extend(self.defsym_refs());
        for name in early {
            let name = self.referenced_name(&name, LoadedKind::Object).into_owned();
            self.reference(&name, false);
        }
        let steps = std::mem::take(&mut self.steps);
        // Archives (and --start-lib sets) of the open groups.
        let mut groups: Vec<Vec<Vec<UnitId>>> = Vec::new();
        let mut lib: Option<Vec<UnitId>> = None;
        for step in &steps {
            match step {
                Step::Unit(u) => self.load(*u),
                Step::Lazy(u) => lib.get_or_insert_with(Vec::new).push(*u),
                Step::LibStart => lib = Some(Vec::new()),
                Step::LibEnd => {
                    if let Some(set) = lib.take() {
                        self.scan(&set);
                        if let Some(g) = groups.last_mut() {
                            g.push(set);
                        }
                    }
                }
                Step::Archive(members) => {
                    self.scan(members);
                    if let Some(g) = groups.last_mut() {
                        g.push(members.clone());
                    }
                }
                Step::GroupStart => groups.push(Vec::new()),
                Step::GroupEnd => {
                    let Some(group) = groups.pop() else { continue };
                    self.rescan(&group);
                    if let Some(outer) = groups.last_mut() {
                        outer.extend(group);
                    }
                }
            }
        }
        // An unterminated library or group ends with the line.
        if let Some(set) = lib.take() {
            self.scan(&set);
        }
        while let Some(group) = groups.pop() {
            self.rescan(&group);
        }
        self.steps = steps;
        self.define_command_line();
    }

    /// Rescans a group's archives until a whole pass extracts nothing.
    fn rescan(&mut self, group: &[Vec<UnitId>]) {
        loop {
            let mut any = false;
            for set in group {
                any |= self.scan(set);
            }
            if !any {
                return;
            }
        }
    }

    /// Two strong definitions of one name, one of them bitcode: the real
    /// linker's `duplicate symbol` error (or its warning under
    /// `--noinhibit-exec`). It must be found here: the link compiles only
    /// the prevailing copy of a bitcode definition, so the final link would
    /// never see the other one and would link a program lld refuses.
    /// Duplicates among native objects are left to the final link, which
    /// sees them all.
    pub fn check_duplicates(&mut self) -> Result<(), Error> {
        if self.line.duplicates == Duplicates::Allow {
            return Ok(());
        }
        let bitcode = |u: UnitId| self.units[u.0 as usize].kind == LoadedKind::Bitcode;
        let found: Vec<String> = self
            .duplicates
            .iter()
            .filter(|&&(_, first, later)| bitcode(first) || bitcode(later))
            .map(|&(id, first, later)| {
                let name = &self.symtab.names[id.0 as usize];
                let shown = match self.source.demangle(name) {
                    Some(d) if d != **name => format!("{d} ({name})"),
                    _ => name.to_string(),
                };
                let unit = |u: UnitId| self.units[u.0 as usize].name.as_str();
                format!("duplicate symbol: {shown}, defined in {} and in {}", unit(first), unit(later))
            })
            .collect();
        let Some(first) = found.first() else { return Ok(()) };
        if self.line.duplicates == Duplicates::Warn {
            self.warnings.extend(found);
            return Ok(());
        }
        Err(Error::msg(match found.len() {
            1 => first.clone(),
            n => format!("{first} (and {} more duplicate symbols)", n - 1),
        }))
    }

    // ---- exports -------------------------------------------------------

    /// Reads a version script or dynamic list; `None` when it cannot be
    /// read or parsed, which the caller treats conservatively (a version
    /// script that hides nothing, a dynamic list that lists everything).
    /// The real linker reports a file it cannot read itself.
    fn pattern_list(&mut self, path: &str) -> Option<exports::PatternList> {
        match self.source.load(Path::new(path), false) {
            Ok(Content::Script(text)) => exports::parse(&text, exports::Quoted::of(self.line.flavor)).ok(),
            _ => None,
        }
    }

    /// The bitcode definitions the output exports dynamically. A definition
    /// `native` names ([`Loader::native_names`]) is exported even where
    /// `-shared` or `--export-dynamic` alone would leave it out
    /// ([`exports::exported_by_all`]).
    pub fn exports(&mut self, native: &BTreeSet<String>) {
        let x = &self.line.exports;
        let versions: Vec<exports::PatternList> =
            x.version_scripts.clone().iter().filter_map(|p| self.pattern_list(p)).collect();
        // A name a version script gives a version by name must be defined
        // when the linker reads the script (lld 19 stops otherwise, hidden
        // or not): LLVM must not drop it.
        self.version_named =
            versions.iter().flat_map(|l| &l.global).filter_map(|p| p.exact_c_name()).map(str::to_string).collect();
        let mut dynamic = exports::PatternList::default();
        for p in x.dynamic_lists.clone() {
            match self.pattern_list(&p) {
                Some(l) => dynamic.global.extend(l.global),
                // Unreadable: anything may be listed.
                None => dynamic.global.push(exports::Pattern { text: "*".into(), cpp: false, exact: false }),
            }
        }
        let x = &self.line.exports;
        dynamic.global.extend(x.dynamic_symbols.iter().map(|g| exports::Pattern {
            text: g.clone(),
            cpp: false,
            exact: false,
        }));
        let all = x.shared || x.export_dynamic;
        let cpp = versions.iter().chain([&dynamic]).flat_map(|l| l.global.iter().chain(&l.local)).any(|p| p.cpp);
        let mut exported = BTreeSet::new();
        let mut preemptible = BTreeSet::new();
        for &u in &self.order {
            let unit = &self.units[u.0 as usize];
            if unit.kind != LoadedKind::Bitcode {
                continue;
            }
            // --exclude-libs: definitions from these archives stay local.
            let archive = unit.member.map(|_| &self.inputs[unit.input.index()].path);
            let excluded = archive.is_some_and(|a| {
                let base = a.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                x.exclude_libs.iter().flat_map(|l| l.split([',', ':'])).any(|l| l == "ALL" || l == base)
            });
            for s in unit.table.symbols.iter().filter(|s| !s.is_undefined()) {
                if matches!(s.visibility, Visibility::Hidden | Visibility::Internal) || excluded {
                    continue;
                }
                let demangled = if cpp { self.source.demangle(&s.name) } else { None };
                let d = demangled.as_deref();
                let listed = exports::listed(&dynamic, &s.name, d);
                // lld exports such a definition only when a shared library
                // references it; wpd, when any native file names it.
                let omitted =
                    !exports::exported_by_all(&s.name, s.may_omit) && !listed && !native.contains(s.name.as_str());
                if ((all && !omitted) || listed) && versions.iter().all(|l| exports::version_global(l, &s.name, d)) {
                    exported.insert(s.name.clone());
                    // lld's computeIsPreemptible; GNU ld and gold agree.
                    let bound = x.dynamic_list_binds || x.symbolic.binds(s.function, s.weak);
                    if x.shared && s.visibility == Visibility::Default && (listed || !bound) {
                        preemptible.insert(s.name.clone());
                    }
                }
            }
        }
        self.exported = exported;
        self.preemptible = preemptible;
    }

    // ---- the model -----------------------------------------------------

    /// The link model; `native` is [`Loader::native_names`].
    pub fn finish(mut self, native: BTreeSet<String>) -> LinkModel {
        let mut loaded = Vec::with_capacity(self.order.len());
        let mut as_needed_refs = BTreeSet::new();
        // Only a link with an `--as-needed` library looks its references up.
        let any_as_needed = self.units.iter().any(|u| u.kind == LoadedKind::Shared && u.as_needed);
        for &u in &self.order {
            let unit = &self.units[u.0 as usize];
            let mut prevailing = BTreeSet::new();
            let mut defined = BTreeSet::new();
            let mut refs = Refs::default();
            if unit.kind == LoadedKind::Bitcode {
                for s in unit.table.symbols.iter().filter(|s| s.is_undefined()) {
                    if s.weak { &mut refs.weak } else { &mut refs.strong }.insert(s.name.clone());
                    if s.tls {
                        refs.tls.insert(s.name.clone());
                    }
                    if any_as_needed && !s.weak && self.answered_as_needed(&s.name) {
                        as_needed_refs.insert(s.name.clone());
                    }
                }
            }
            if matches!(unit.kind, LoadedKind::Bitcode | LoadedKind::Object) {
                for s in unit.table.symbols.iter().filter(|s| !s.is_undefined()) {
                    if unit.kind == LoadedKind::Bitcode
                        && self.symtab.find(&s.name).and_then(|id| self.symtab.owner(id)) == Some(u)
                        && !self.script_assigned.contains(&s.name)
                    {
                        prevailing.insert(s.name.clone());
                    }
                    defined.insert(s.name.clone());
                }
            }
            loaded.push(Loaded {
                input: unit.input,
                member: unit.member,
                kind: unit.kind,
                name: unit.name.clone(),
                prevailing,
                defined,
                refs,
            });
            if let (Some(m), InputKind::Archive { members, .. }) =
                (unit.member, &mut self.inputs[unit.input.index()].kind)
            {
                members[m.index()].loaded = true;
            }
        }
        let outside_refs = match self.unknown.first() {
            Some(reason) => OutsideRefs::Unknown(format!("wpd could not inspect {reason}")),
            None if self.line.relocatable => {
                OutsideRefs::Unknown("relocatable output (-r): the rest of the program is linked later".into())
            }
            None => OutsideRefs::Known(self.outside_refs(native)),
        };
        let defined_by_command_line =
            self.line.defsyms.iter().map(|(n, _)| n.clone()).chain(std::mem::take(&mut self.script_assigned)).collect();
        // A name only references reached: undefined, or defined by an
        // archive member that only weak references asked for.
        let unresolved = (self.symtab.names.iter().zip(&self.symtab.states))
            .filter(|(_, state)| matches!(state, Some(State::Undefined { .. } | State::Lazy { weak_ref: true, .. })))
            .map(|(name, _)| name.to_string())
            .collect();
        let movable = if outside_refs.is_known() { self.movable_groups() } else { Vec::new() };
        LinkModel {
            flavor: self.line.flavor,
            inputs: self.inputs,
            loaded,
            outside_refs,
            wraps: self.line.wraps.clone(),
            exported: self.exported,
            preemptible: self.preemptible,
            defined_by_command_line,
            unresolved,
            as_needed_refs,
            warnings: self.warnings,
            movable,
        }
    }

    /// Whether a shared library read under `--as-needed` answers a
    /// bitcode unit's reference to `name` (through `--wrap`, as GNU ld and
    /// gold bind it).
    fn answered_as_needed(&self, name: &str) -> bool {
        let bound = self.referenced_name(name, LoadedKind::Bitcode);
        match self.symtab.find(&bound).and_then(|id| self.symtab.state(id)) {
            Some(State::Shared { unit }) => self.units[unit.0 as usize].as_needed,
            _ => false,
        }
    }

    /// The comdat groups the link may take from any of the loaded bitcode
    /// modules that define them ([`MovableGroup`]): none under a `-T`
    /// script (it may place sections by input file).
    fn movable_groups(&self) -> Vec<MovableGroup> {
        if self.line.relocatable || self.line.items.iter().any(|i| matches!(i, Item::Script { .. })) {
            return Vec::new();
        }
        let eager: HashSet<UnitId> = self
            .steps
            .iter()
            .filter_map(|s| match s {
                Step::Unit(u) => Some(*u),
                _ => None,
            })
            .collect();
        // Names the linker itself binds (`--wrap`, `--defsym`).
        let linker_named: HashSet<String> = self
            .line
            .wraps
            .iter()
            .flat_map(|w| [w.clone(), format!("__wrap_{w}"), format!("__real_{w}")])
            .chain(self.line.defsyms.iter().map(|(n, _)| n.clone()))
            .collect();
        // The loaded bitcode, in load order: a module's position here is
        // its place among the link's bitcode modules.
        let bitcode: Vec<UnitId> =
            self.order.iter().copied().filter(|&u| self.units[u.0 as usize].kind == LoadedKind::Bitcode).collect();
        // Signature -> (members, modules), from the bitcode loaded whatever
        // the symbols say; `None` once the group is found unfit.
        type Found<'s> = (Vec<&'s str>, Vec<usize>);
        let mut groups: BTreeMap<&str, Option<Found<'_>>> = BTreeMap::new();
        for (k, &u) in bitcode.iter().enumerate().filter(|(_, u)| eager.contains(u)) {
            let table = &self.units[u.0 as usize].table;
            for (c, comdat) in table.comdats.iter().enumerate().filter(|(_, c)| c.deduplicate) {
                let in_comdat = table.symbols.iter().filter(|s| s.comdat == Some(c as u32));
                let fit = in_comdat.clone().all(|s| {
                    s.definition == Definition::Defined
                        && s.weak
                        && !s.name.contains('@')
                        && !linker_named.contains(s.name.as_str())
                });
                let mut members: Vec<&str> = in_comdat.map(|s| s.name.as_str()).collect();
                members.sort_unstable();
                let entry = groups.entry(&comdat.name).or_insert_with(|| Some((members.clone(), Vec::new())));
                match entry {
                    Some((m, modules)) if fit && !members.is_empty() && *m == members => modules.push(k),
                    _ => *entry = None,
                }
            }
        }
        // Defined by more than one module, and the first module's copy
        // prevails for every member (no earlier native definition took a
        // name).
        let mut groups: BTreeMap<&str, Found<'_>> = groups
            .into_iter()
            .filter_map(|(sig, g)| Some((sig, g?)))
            .filter(|(_, (members, modules))| {
                modules.len() > 1
                    && members
                        .iter()
                        .all(|m| self.symtab.find(m).and_then(|id| self.symtab.owner(id)) == Some(bitcode[modules[0]]))
            })
            .collect();
        if groups.is_empty() {
            return Vec::new();
        }
        // No other unit, loaded or not, may define a member or the group:
        // taking the copy from elsewhere could then extract it, or keep
        // its copy instead.
        let mut member_of: HashMap<&str, &str> = HashMap::new();
        for (sig, (members, _)) in &groups {
            for m in members {
                member_of.insert(m, sig);
            }
        }
        let in_group = |u: UnitId, sig: &str| groups[sig].1.iter().any(|&k| bitcode[k] == u);
        let mut unfit: HashSet<&str> = HashSet::new();
        for (i, unit) in self.units.iter().enumerate() {
            let u = UnitId(i as u32);
            let defined =
                unit.table.symbols.iter().filter(|s| !s.is_undefined()).filter_map(|s| member_of.get(s.name.as_str()));
            let comdats =
                unit.table.comdats.iter().filter_map(|c| groups.get_key_value(c.name.as_str()).map(|(k, _)| k));
            for &sig in defined.chain(comdats) {
                if !in_group(u, sig) {
                    unfit.insert(sig);
                }
            }
        }
        groups.retain(|sig, _| !unfit.contains(sig));
        groups
            .into_iter()
            .map(|(sig, (members, modules))| MovableGroup {
                signature: sig.to_string(),
                members: members.into_iter().map(str::to_string).collect(),
                modules,
            })
            .collect()
    }

    /// The names native code of the link names: references of loaded
    /// native objects and shared libraries, and bitcode definitions a
    /// shared library also defines (the executable's copy is exported to
    /// preempt it) or a loaded native object also defines (as lld, which
    /// marks every symbol of a regular object used in regular objects:
    /// LTO must not internalize the bitcode copy of an inline function or
    /// vtable while the native copy stays global, or the program would
    /// have two).
    pub fn native_names(&self) -> BTreeSet<String> {
        let mut refs = BTreeSet::new();
        let mut bitcode_defs: BTreeSet<&str> = BTreeSet::new();
        for &u in &self.order {
            let unit = &self.units[u.0 as usize];
            match unit.kind {
                LoadedKind::Object | LoadedKind::Shared => {
                    refs.extend(unit.table.symbols.iter().filter(|s| s.is_undefined()).map(|s| s.name.clone()));
                }
                LoadedKind::Bitcode => bitcode_defs
                    .extend(unit.table.symbols.iter().filter(|s| !s.is_undefined()).map(|s| s.name.as_str())),
                LoadedKind::Other => {}
            }
        }
        for &u in &self.order {
            let unit = &self.units[u.0 as usize];
            if matches!(unit.kind, LoadedKind::Shared | LoadedKind::Object) {
                for s in unit.table.symbols.iter().filter(|s| !s.is_undefined()) {
                    if bitcode_defs.contains(s.name.as_str()) {
                        refs.insert(s.name.clone());
                    }
                }
            }
        }
        refs
    }

    /// Every name code outside the bitcode may reference: what native code
    /// names (`native`, [`Loader::native_names`]), the dynamic exports,
    /// the names version scripts list, and the names the command line
    /// uses.
    fn outside_refs(&self, mut refs: BTreeSet<String>) -> BTreeSet<String> {
        refs.extend(self.exported.iter().cloned());
        refs.extend(self.version_named.iter().cloned());
        let line = self.line;
        refs.extend(line.undefined.iter().cloned());
        refs.extend(line.require_defined.iter().cloned());
        refs.extend(self.entry());
        refs.insert(line.init.clone().unwrap_or_else(|| "_init".into()));
        refs.insert(line.fini.clone().unwrap_or_else(|| "_fini".into()));
        for w in &line.wraps {
            refs.insert(w.clone());
            refs.insert(format!("__wrap_{w}"));
            refs.insert(format!("__real_{w}"));
        }
        for (name, expr) in &line.defsyms {
            refs.insert(name.clone());
            refs.extend(expression_symbols(expr));
        }
        // A `__start_X`/`__stop_X` reference from any file keeps every
        // bitcode definition placed in section `X` (lld's rule: such a
        // definition is visible to regular objects).
        let start_stop: HashSet<&str> = (self.order.iter().map(|&u| &self.units[u.0 as usize]))
            .flat_map(|unit| unit.table.symbols.iter().filter(|s| s.is_undefined()))
            .filter_map(|s| s.name.strip_prefix("__start_").or_else(|| s.name.strip_prefix("__stop_")))
            .collect();
        if !start_stop.is_empty() {
            let placed = |s: &&Symbol| s.section.as_deref().is_some_and(|x| start_stop.contains(x));
            refs.extend(self.bitcode_definitions().filter(placed).map(|s| s.name.clone()));
        }
        let globs: Vec<&String> = line.undefined_globs.iter().chain(&line.exports.dynamic_symbols).collect();
        if !globs.is_empty() {
            let matched = |s: &&Symbol| globs.iter().any(|g| glob_match(g, &s.name));
            refs.extend(self.bitcode_definitions().filter(matched).map(|s| s.name.clone()));
        }
        refs
    }

    /// The definitions of every loaded bitcode unit, in load order.
    fn bitcode_definitions(&self) -> impl Iterator<Item = &Symbol> {
        (self.order.iter().map(|&u| &self.units[u.0 as usize]))
            .filter(|unit| unit.kind == LoadedKind::Bitcode)
            .flat_map(|unit| unit.table.symbols.iter().filter(|s| !s.is_undefined()))
    }
}

/// The symbol names in a linker-script expression (a `--defsym` value):
/// identifiers that are neither numbers nor built-in functions.
pub fn expression_symbols(expr: &str) -> Vec<String> {
    const BUILTINS: &[&str] = &[
        "ABSOLUTE",
        "ADDR",
        "ALIGN",
        "ALIGNOF",
        "BLOCK",
        "CONSTANT",
        "DATA_SEGMENT_ALIGN",
        "DATA_SEGMENT_END",
        "DATA_SEGMENT_RELRO_END",
        "DEFINED",
        "LENGTH",
        "LOADADDR",
        "LOG2CEIL",
        "MAX",
        "MIN",
        "NEXT",
        "ORIGIN",
        "SEGMENT_START",
        "SIZEOF",
        "SIZEOF_HEADERS",
        "MAXPAGESIZE",
        "COMMONPAGESIZE",
    ];
    let mut out = Vec::new();
    let mut cur = String::new();
    let is_sym = |c: char| c.is_alphanumeric() || matches!(c, '_' | '.' | '$' | '@') || !c.is_ascii();
    for c in expr.chars().chain(std::iter::once(' ')) {
        if is_sym(c) {
            cur.push(c);
            continue;
        }
        if !cur.is_empty() {
            let word = std::mem::take(&mut cur);
            let number = word.starts_with(|c: char| c.is_ascii_digit());
            if !number && word != "." && !BUILTINS.contains(&word.as_str()) {
                out.push(word);
            }
        }
    }
    out
}
