//! The result of resolution: what the linker links, in its order, which
//! bitcode definitions prevail, and what code outside the bitcode can
//! reference.

use super::line::Flavor;
use super::script::Script;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt;
use std::path::PathBuf;

/// A file the link opened (object, archive, shared library, script), an
/// index into [`LinkModel::inputs`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct InputId(pub u32);

/// A member of an archive, by its position in the archive (from 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MemberId(pub u32);

impl InputId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl MemberId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// What kind of file an input is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputKind {
    Object,
    Bitcode,
    Shared,
    Archive {
        thin: bool,
        members: Vec<Member>,
    },
    /// A linker script: what it says, and the input each of its file
    /// entries opened, in order (`None`: not found).
    Script {
        script: Script,
        opened: Vec<Option<InputId>>,
    },
    /// Raw data or a file wpd cannot read symbols from.
    Opaque,
}

/// One archive member and whether the link loads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    pub name: String,
    /// `Other`: neither an object nor bitcode (linkers skip it).
    pub kind: LoadedKind,
    pub loaded: bool,
}

/// One file the link opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Input {
    /// The path as the linker opens it (as given, or as found by `-l`
    /// search or through a script).
    pub path: PathBuf,
    pub kind: InputKind,
    /// The [`super::Item`] of the link line that named it (directly, or
    /// through a script, a group in it or `-l`).
    pub item: usize,
    /// Named by a linker script rather than by the command line.
    pub from_script: bool,
}

/// What a loaded unit is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadedKind {
    Object,
    Bitcode,
    Shared,
    /// An archive member that is neither (never loaded), or opaque data.
    Other,
}

/// One unit the link loads: a file, or a member of an archive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loaded {
    pub input: InputId,
    pub member: Option<MemberId>,
    pub kind: LoadedKind,
    /// As lld's `--trace` prints it: the path, or `archive(member)`.
    pub name: String,
    /// For bitcode: the defined symbols of this module that prevail (the
    /// linker keeps this copy), sorted.
    pub prevailing: BTreeSet<String>,
    /// For bitcode and native objects: every symbol this unit defines
    /// (prevailing or not). Empty for a shared library.
    pub defined: BTreeSet<String>,
    /// For bitcode: the symbols its symbol table references, which decided
    /// what the link extracted (wpd-ld's relink must extract the same,
    /// `wpd::final_link::extraction`), and which name the `__start_`/
    /// `__stop_` symbols that keep a section's globals.
    pub refs: Refs,
}

/// The undefined symbols of a unit's symbol table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Refs {
    pub strong: BTreeSet<String>,
    pub weak: BTreeSet<String>,
    /// Those (strong or weak) that are thread-local.
    pub tls: BTreeSet<String>,
}

impl Refs {
    /// Whether the unit references `name`, weakly or not.
    pub fn contains(&self, name: &str) -> bool {
        self.strong.contains(name) || self.weak.contains(name)
    }
}

/// The symbols code outside the bitcode can reference.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OutsideRefs {
    Known(BTreeSet<String>),
    /// Something the model cannot see into (a script command, a library not
    /// found): every externally visible bitcode symbol may be referenced.
    Unknown(String),
}

impl OutsideRefs {
    pub fn is_known(&self) -> bool {
        matches!(self, OutsideRefs::Known(_))
    }

    pub fn known(&self) -> Option<&BTreeSet<String>> {
        match self {
            OutsideRefs::Known(s) => Some(s),
            OutsideRefs::Unknown(_) => None,
        }
    }
}

/// The link as the linker that will run sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkModel {
    pub flavor: Flavor,
    /// Every file opened, in the order it was opened.
    pub inputs: Vec<Input>,
    /// Every unit loaded, in load order (lld's `--trace` order).
    pub loaded: Vec<Loaded>,
    pub outside_refs: OutsideRefs,
    /// `--wrap` symbols: a reference to `X` binds to `__wrap_X`, and one to
    /// `__real_X` binds to `X`.
    pub wraps: Vec<String>,
    /// The bitcode definitions the output exports to the dynamic linker
    /// (code outside the link can reference, derive from or interpose
    /// them). Conservative: a symbol wpd cannot rule out is in.
    pub exported: BTreeSet<String>,
    /// The exported bitcode definitions the dynamic linker may bind to
    /// another module's definition at run time (an executable's, an
    /// `LD_PRELOAD` library's): in a shared output, each default-visibility
    /// one that no `-Bsymbolic` option or `--dynamic-list` binds inside
    /// the output, or that a dynamic list or `--export-dynamic-symbol`
    /// names. Empty for an executable, whose definitions come first in
    /// every lookup. The body wpd read is not the one such a name may run.
    pub preemptible: BTreeSet<String>,
    /// Symbols the command line defines (`--defsym`, or an assignment in a
    /// linker script): no bitcode copy of them prevails.
    pub defined_by_command_line: BTreeSet<String>,
    /// Names a loaded file references that nothing the link loads
    /// defines: no object, archive member, shared library or `--defsym`.
    /// A shared output leaves them to the dynamic linker (a plugin's
    /// references to its host program's classes); an executable's are
    /// weak, or references the backends drop.
    pub unresolved: BTreeSet<String>,
    /// The bitcode's strong references that a shared library read under
    /// `--as-needed` answers. Such a reference may be what records the
    /// library in the output (its `DT_NEEDED`, and with it the library's
    /// constructors), so a native object that replaces the bitcode and no
    /// longer makes it (dead code dropped, a dead vtable entry's function)
    /// must make it again (`wpd::final_link::extraction`).
    pub as_needed_refs: BTreeSet<String>,
    /// What the real linker warns of that the front end should say too
    /// (duplicate symbols under `--noinhibit-exec`).
    pub warnings: Vec<String>,
    /// Comdat groups whose copy the link may take from any of several
    /// bitcode modules without changing what it links ([`MovableGroup`]).
    /// Empty where the model cannot tell (the linker plugin's model, a
    /// relocatable output, a `-T` script, outside references unknown).
    pub movable: Vec<MovableGroup>,
}

/// A comdat group defined, with the same members, by several bitcode
/// modules that the link loads whatever the symbols say (named on the
/// line, not archive members nor `--start-lib` objects), and by no other
/// unit the link could load (no native object, shared library, archive
/// member or `--start-lib` object defines a member or the group): the
/// first module's copy prevails, but which module's copy the output
/// holds changes neither what the link loads nor in which order, nor what
/// any reference binds to. The thin link may therefore take it from
/// another of these modules (when the members are ODR functions, whose
/// copies are interchangeable: `wpd::backends::spread`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MovableGroup {
    /// The group's signature.
    pub signature: String,
    /// Its members' names, sorted: every one weak, defined, and prevailing
    /// in the first module.
    pub members: Vec<String>,
    /// The modules that define it, as positions among the link's loaded
    /// bitcode ([`LinkModel::bitcode`]), in load order: the first one's
    /// copy is the one the linker keeps.
    pub modules: Vec<usize>,
}

impl LinkModel {
    pub fn input(&self, id: InputId) -> &Input {
        &self.inputs[id.index()]
    }

    /// Per item of the link line (its index), the input it opened itself
    /// (not through a linker script): items that open nothing, and `-l`
    /// libraries not found, have none.
    pub fn inputs_by_item(&self) -> HashMap<usize, InputId> {
        let mut map = HashMap::new();
        for (i, input) in self.inputs.iter().enumerate() {
            if !input.from_script {
                map.entry(input.item).or_insert(InputId(i as u32));
            }
        }
        map
    }

    /// The loaded bitcode units, in load order.
    pub fn bitcode(&self) -> impl Iterator<Item = &Loaded> {
        self.loaded.iter().filter(|l| l.kind == LoadedKind::Bitcode)
    }

    /// Whether an input holds bitcode: a bitcode object, an archive with a
    /// bitcode member, or a script naming one of those.
    pub fn holds_bitcode(&self, id: InputId) -> bool {
        match &self.input(id).kind {
            InputKind::Bitcode => true,
            InputKind::Archive { members, .. } => members.iter().any(|m| m.kind == LoadedKind::Bitcode),
            InputKind::Script { opened, .. } => opened.iter().flatten().any(|&i| self.holds_bitcode(i)),
            _ => false,
        }
    }

    /// The names some loaded bitcode module defines and no bitcode copy of
    /// prevails, each with the first module defining it (its position
    /// among [`LinkModel::bitcode`]): the link keeps another definition.
    pub fn replaced_in_bitcode(&self) -> BTreeMap<&str, usize> {
        let prevailing: HashSet<&str> = self.bitcode().flat_map(|l| l.prevailing.iter().map(String::as_str)).collect();
        let mut out = BTreeMap::new();
        for (k, l) in self.bitcode().enumerate() {
            for name in l.defined.iter().map(String::as_str).filter(|n| !prevailing.contains(n)) {
                out.entry(name).or_insert(k);
            }
        }
        out
    }

    /// The non-local names some loaded bitcode module defines whose copy
    /// the link keeps is not bitcode, each with the unit (or option) that
    /// keeps it: a native object's strong definition over a weak bitcode
    /// one, the first of several strong ones with `-z muldefs`, a
    /// `--defsym`, a `--wrap`ped name (its references reach `__wrap_X`).
    /// The program never runs the bitcode body of such a name.
    pub fn kept_elsewhere(&self) -> BTreeMap<String, String> {
        let elsewhere = self.replaced_in_bitcode();
        // The first native object defining each (one pass over the units).
        let mut native: BTreeMap<&str, &str> = BTreeMap::new();
        for l in self.loaded.iter().filter(|l| l.kind == LoadedKind::Object) {
            for name in l.defined.iter().filter(|n| elsewhere.contains_key(n.as_str())) {
                native.entry(name.as_str()).or_insert(l.name.as_str());
            }
        }
        let mut out = BTreeMap::new();
        for name in elsewhere.into_keys() {
            let keeper = if self.defined_by_command_line.contains(name) {
                "the command line (--defsym, or a linker script's assignment)".to_string()
            } else {
                match native.get(name) {
                    Some(unit) => format!("the native object {unit}"),
                    None => "a definition outside the bitcode".to_string(),
                }
            };
            out.insert(name.to_string(), keeper);
        }
        for w in &self.wraps {
            if self.bitcode().any(|l| l.defined.contains(w)) {
                out.insert(w.clone(), format!("__wrap_{w} (--wrap)"));
            }
        }
        out
    }

    /// Whether a member of an archive is loaded.
    pub fn member_loaded(&self, input: InputId, member: MemberId) -> bool {
        match &self.input(input).kind {
            InputKind::Archive { members, .. } => members.get(member.index()).is_some_and(|m| m.loaded),
            _ => false,
        }
    }

    /// The `--wrap` target of a reference to `name` from an object:
    /// `__wrap_X` for `X`, `X` for `__real_X`, else `name`.
    pub fn wrapped<'a>(&self, name: &'a str) -> std::borrow::Cow<'a, str> {
        if self.wraps.iter().any(|w| w == name) {
            return format!("__wrap_{name}").into();
        }
        if let Some(x) = name.strip_prefix("__real_")
            && self.wraps.iter().any(|w| w == x)
        {
            return x.to_string().into();
        }
        name.into()
    }
}

impl fmt::Display for LinkModel {
    /// One line per loaded unit, as `--trace` prints them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for l in &self.loaded {
            writeln!(f, "{}", l.name)?;
        }
        Ok(())
    }
}
