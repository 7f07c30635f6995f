//! The global symbol table and lld's rules for combining two sightings of
//! one name (`lld/ELF/Symbols.cpp`, `Symbol::resolve`): a strong definition
//! beats a weak one, the first of equals wins, a strong definition beats a
//! common and the largest common wins, a shared library's definition
//! answers a reference but yields to any object's, and a lazy archive
//! symbol is extracted by a strong reference but not by a weak one. GNU ld
//! and gold combine sightings the same way; they differ in when archives
//! are looked at (`load.rs`).

use rustc_hash::FxHashMap;
use std::rc::Rc;

/// A loadable unit (object file, archive member, shared library), an index
/// into the loader's units.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct UnitId(pub u32);

/// A name in the global symbol table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SymId(pub u32);

/// What the link knows about a name so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// Referenced, not defined. `weak` while every reference is weak.
    Undefined {
        weak: bool,
    },
    /// Defined by a member not loaded yet (lld); `weak_ref`: only weak
    /// references have been seen, which do not extract it.
    Lazy {
        unit: UnitId,
        weak_ref: bool,
    },
    Defined {
        unit: UnitId,
        weak: bool,
    },
    Common {
        unit: UnitId,
        size: u64,
    },
    /// Defined by a shared library.
    Shared {
        unit: UnitId,
    },
    /// Defined by the command line (`--defsym`): overrides every file.
    CommandLine,
}

/// What a sighting asks of the loader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    None,
    /// Load this lazy unit now.
    Extract(UnitId),
}

#[derive(Default)]
pub struct Symtab {
    /// Fx hashing: names are the link's own inputs, and this map sees every
    /// symbol of every file the link reads. The map and `names` share one
    /// allocation per name.
    ids: FxHashMap<Rc<str>, SymId>,
    /// In insertion order (lld's `symVector`).
    pub names: Vec<Rc<str>>,
    pub states: Vec<Option<State>>,
}

impl Symtab {
    pub fn id(&mut self, name: &str) -> SymId {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = SymId(self.names.len() as u32);
        let name: Rc<str> = name.into();
        self.ids.insert(Rc::clone(&name), id);
        self.names.push(name);
        self.states.push(None);
        id
    }

    /// Room for `additional` more names without rehashing.
    pub fn reserve(&mut self, additional: usize) {
        self.ids.reserve(additional);
        self.names.reserve(additional);
        self.states.reserve(additional);
    }

    pub fn find(&self, name: &str) -> Option<SymId> {
        self.ids.get(name).copied()
    }

    pub fn state(&self, id: SymId) -> Option<State> {
        self.states[id.0 as usize]
    }

    fn set(&mut self, id: SymId, s: State) {
        self.states[id.0 as usize] = Some(s);
    }

    /// A reference (`weak` for a weak undefined symbol).
    pub fn reference(&mut self, id: SymId, weak: bool) -> Effect {
        match self.state(id) {
            None => self.set(id, State::Undefined { weak }),
            Some(State::Undefined { weak: w }) => self.set(id, State::Undefined { weak: w && weak }),
            Some(State::Lazy { unit, .. }) if !weak => return Effect::Extract(unit),
            Some(State::Lazy { unit, .. }) => self.set(id, State::Lazy { unit, weak_ref: true }),
            Some(_) => {}
        }
        Effect::None
    }

    /// A definition in a loaded unit (`common`: a common symbol's size).
    /// Returns the unit of the strong definition already there when this
    /// one is strong too: a duplicate, which the first wins.
    pub fn define(&mut self, id: SymId, unit: UnitId, weak: bool, common: Option<u64>) -> Option<UnitId> {
        let new = match common {
            Some(size) => State::Common { unit, size },
            None => State::Defined { unit, weak },
        };
        let replace = match (self.state(id), common) {
            (None | Some(State::Undefined { .. } | State::Lazy { .. } | State::Shared { .. }), _) => true,
            (Some(State::CommandLine), _) => false,
            // The largest common wins; a strong definition beats a common.
            (Some(State::Common { size: old, .. }), Some(size)) => size > old,
            (Some(State::Common { .. }), None) => !weak,
            // A common beats a weak definition, not a strong one.
            (Some(State::Defined { weak: old_weak, .. }), Some(_)) => old_weak,
            // Strong beats weak; otherwise the first stays.
            (Some(State::Defined { weak: old_weak, .. }), None) => old_weak && !weak,
        };
        if replace {
            self.set(id, new);
        }
        match self.state(id) {
            Some(State::Defined { unit: first, weak: false }) if !replace && !weak && common.is_none() => Some(first),
            _ => None,
        }
    }

    /// A lazy definition: a member not loaded yet that defines `id`.
    pub fn lazy(&mut self, id: SymId, unit: UnitId) -> Effect {
        match self.state(id) {
            None => self.set(id, State::Lazy { unit, weak_ref: false }),
            Some(State::Undefined { weak: true }) => self.set(id, State::Lazy { unit, weak_ref: true }),
            Some(State::Undefined { weak: false }) => return Effect::Extract(unit),
            Some(_) => {}
        }
        Effect::None
    }

    /// A shared library's definition: answers references and lazy symbols;
    /// any object's definition wins over it.
    pub fn shared(&mut self, id: SymId, unit: UnitId) {
        if matches!(self.state(id), None | Some(State::Undefined { .. } | State::Lazy { .. })) {
            self.set(id, State::Shared { unit });
        }
    }

    /// A symbol the command line defines (`--defsym`).
    pub fn command_line(&mut self, id: SymId) {
        self.set(id, State::CommandLine);
    }

    /// The unit whose definition of `id` prevails, if a unit's does.
    pub fn owner(&self, id: SymId) -> Option<UnitId> {
        match self.state(id)? {
            State::Defined { unit, .. } | State::Common { unit, .. } | State::Shared { unit } => Some(unit),
            _ => None,
        }
    }
}
