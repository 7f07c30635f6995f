//! Symbol resolutions for LLVM's ThinLTO, from wpd's link model.
//!
//! wpd hands its rewritten modules to LLVM's `lto::LTO`, which needs, for
//! every symbol of every module, what lld's `IRCompiler::add` tells it
//! (lld/ELF/LTO.cpp): whether this module's copy prevails, whether code
//! outside the bitcode can see it (then it is neither internalized nor
//! dropped as dead), whether it is exported dynamically, whether the
//! definition is final in this linkage unit, and whether the linker
//! redefines it. [`LtoSymbols`] answers those from the [`LinkModel`]: the
//! same resolution the real linker will make, decided before it runs.
//!
//! A symbol the rewrite introduced (a local wpd promoted to give a
//! devirtualized call something to name) was never in the model: it is
//! defined by exactly one module, which therefore prevails.
//!
//! The thin link may take a [`crate::MovableGroup`]'s copy from another
//! module than the linker would ([`LtoSymbols::with_moves`]): that module's
//! copy then prevails, and the first module's does not.

use crate::resolve::{LinkModel, Loaded, MovableGroup};
use std::collections::{BTreeMap, BTreeSet, HashSet};

/// The facts about one symbol of a module that the resolution needs (the
/// module's symbol table, read by the caller through LLVM).
#[derive(Clone, Copy, Debug)]
pub struct SymbolView<'a> {
    pub name: &'a str,
    /// The section it is placed in (`__start_`/`__stop_` refer to it).
    pub section: &'a str,
    pub undefined: bool,
    /// One of several equivalent copies (`linkonce_odr`, `weak_odr`: the
    /// one-definition rule makes any copy's body the program's).
    pub odr_copy: bool,
    /// A common symbol (the largest copy is the one; LLVM sizes them).
    pub common: bool,
    /// Hidden or protected.
    pub non_default_visibility: bool,
    pub hidden: bool,
    /// Made by wpd's rewrite of this module (a promoted local, an alias
    /// for a local vtable).
    pub introduced: bool,
}

/// What the link decided about one symbol of one module.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SymbolResolution {
    pub prevailing: bool,
    pub final_definition: bool,
    pub visible_to_regular_obj: bool,
    pub export_dynamic: bool,
    pub linker_redefined: bool,
}

/// The link's symbol facts, by module of the link (the loaded bitcode in
/// load order), read from the model (borrowed, not copied).
#[derive(Clone, Debug)]
pub struct LtoSymbols<'m> {
    /// The loaded bitcode units: what each defines and what prevails.
    modules: Vec<&'m Loaded>,
    /// Every name some module's definition prevails for.
    prevailing_anywhere: HashSet<&'m str>,
    /// Names code outside the bitcode references; `None`: unknown (all).
    outside: Option<&'m BTreeSet<String>>,
    exported: &'m BTreeSet<String>,
    export_dynamic: bool,
    executable: bool,
    relocatable: bool,
    /// `--defsym` names, `--wrap` symbols and their `__real_` names.
    redefined: BTreeSet<String>,
    /// Section names with a `__start_`/`__stop_` reference, from outside
    /// the bitcode or from a bitcode module (as lld keeps them).
    start_stop: BTreeSet<String>,
    /// The model's movable groups.
    movable: &'m [MovableGroup],
    /// Names whose prevailing copy the thin link took from another module
    /// than the linker's first: the module it took it from.
    moved: BTreeMap<String, usize>,
    /// Names the bitcode defines and no bitcode copy of prevails (a native
    /// object's definition comes first under `-z muldefs`, `--defsym` or a
    /// script's assignment replaces them): the first module defining each
    /// ([`LinkModel::replaced_in_bitcode`]).
    replaced: BTreeMap<&'m str, usize>,
}

/// How the output is linked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OutputKind {
    pub shared: bool,
    pub relocatable: bool,
    /// `--export-dynamic` (`-E`).
    pub export_dynamic: bool,
}

impl<'m> LtoSymbols<'m> {
    pub fn new(model: &'m LinkModel, output: OutputKind) -> LtoSymbols<'m> {
        let modules: Vec<&Loaded> = model.bitcode().collect();
        let prevailing_anywhere = modules.iter().flat_map(|l| l.prevailing.iter().map(String::as_str)).collect();
        let outside = model.outside_refs.known();
        let mut redefined: BTreeSet<String> = model.defined_by_command_line.clone();
        for w in &model.wraps {
            redefined.insert(w.clone());
            redefined.insert(format!("__real_{w}"));
        }
        let bitcode_refs = modules.iter().flat_map(|l| l.refs.strong.iter().chain(&l.refs.weak));
        let start_stop = outside
            .into_iter()
            .flatten()
            .chain(bitcode_refs)
            .filter_map(|n| n.strip_prefix("__start_").or_else(|| n.strip_prefix("__stop_")))
            .map(str::to_string)
            .collect();
        LtoSymbols {
            modules,
            prevailing_anywhere,
            outside,
            exported: &model.exported,
            export_dynamic: output.export_dynamic,
            executable: !output.shared && !output.relocatable,
            relocatable: output.relocatable,
            redefined,
            start_stop,
            movable: &model.movable,
            moved: BTreeMap::new(),
            replaced: model.replaced_in_bitcode(),
        }
    }

    /// The comdat groups the thin link may take from any module that
    /// defines them ([`MovableGroup`]).
    pub fn movable(&self) -> &'m [MovableGroup] {
        self.movable
    }

    /// The same resolutions, except that each name of `moves` prevails in
    /// the module given (a position among the bitcode modules) and in no
    /// other. Only members of the model's movable groups may move
    /// ([`crate::MovableGroup`]), each group whole, to a module that
    /// defines it; the caller ensures it.
    pub fn with_moves(&self, moves: BTreeMap<String, usize>) -> LtoSymbols<'m> {
        LtoSymbols { moved: moves, ..self.clone() }
    }

    /// Whether the linker keeps the `module`-th bitcode module's copy of
    /// `name` (before any move).
    pub fn prevails_in(&self, module: usize, name: &str) -> bool {
        self.modules.get(module).is_some_and(|l| l.prevailing.contains(name))
    }

    /// How many modules the link has.
    pub fn module_count(&self) -> usize {
        self.modules.len()
    }

    /// The resolution of `sym` in the `module`-th bitcode module of the
    /// link, after wpd's rewrite.
    pub fn resolve(&self, module: usize, sym: &SymbolView<'_>) -> SymbolResolution {
        let unit = self.modules.get(module);
        let known = unit.is_some_and(|l| l.defined.contains(sym.name));
        // A definition the model did not see in this module: a name this
        // module's rewrite made (its own, unique to it), or one the model
        // leaves out of the link's symbol table (never resolved across
        // files): this copy is the one, and nothing wpd cannot see into is
        // internalized or dropped.
        let unseen = !sym.undefined && !known;
        // A definition the link replaces (not an ODR copy, whose body
        // means what the kept one does): LLVM's thin link would still let
        // other modules import its body (and inline it) when another
        // summary of the name keeps it alive (clang's available_externally
        // copy beside a split unit's vtable, or a thunk's in another
        // unit), let its own module inline a weak one, and stops outright
        // on a weak one beside such a copy ("Interposable and
        // available_externally"). As a `--wrap`ped or `--defsym` name in
        // lld's links, the first module's copy is given to LLVM as
        // prevailing and redefined by the linker: weak, so never imported,
        // inlined or folded, and the definition the link keeps wins over
        // it.
        let replaced =
            !sym.undefined && !sym.odr_copy && !sym.common && known && self.replaced.get(sym.name) == Some(&module);
        let prevails = !sym.undefined
            && (replaced
                || match self.moved.get(sym.name) {
                    Some(&to) => to == module,
                    None if known => unit.is_some_and(|l| l.prevailing.contains(sym.name)),
                    None => true,
                });
        let outside = match &self.outside {
            None => true,
            Some(refs) => refs.contains(sym.name),
        };
        // The model lists what the output exports of the definitions it
        // knows (with `--export-dynamic`, not those LLVM may omit from the
        // symbol table); `--export-dynamic` exports a name it does not know.
        let exported = (self.exported.contains(sym.name) || (self.export_dynamic && !known)) && !sym.hidden;
        let visible = self.relocatable
            || outside
            || (unseen && !sym.introduced)
            || (prevails && exported)
            || self.redefined.contains(sym.name)
            || replaced
            || (!sym.section.is_empty() && self.start_stop.contains(sym.section));
        let final_definition = (self.executable || sym.non_default_visibility)
            && (prevails || self.prevailing_anywhere.contains(sym.name));
        SymbolResolution {
            prevailing: prevails,
            final_definition,
            visible_to_regular_obj: visible,
            export_dynamic: exported,
            linker_redefined: prevails && (replaced || self.redefined.contains(sym.name)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve::{Flavor, LoadedKind, OutsideRefs};
    use crate::{InputId, Loaded};

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    fn model(outside: Option<&[&str]>) -> LinkModel {
        let unit = |name: &str, defined: &[&str], prevailing: &[&str]| Loaded {
            input: InputId(0),
            member: None,
            kind: LoadedKind::Bitcode,
            name: name.into(),
            prevailing: set(prevailing),
            defined: set(defined),
            refs: Default::default(),
        };
        LinkModel {
            flavor: Flavor::Lld,
            inputs: Vec::new(),
            loaded: vec![
                unit("a.o", &["main", "_Z3tplv", "_Z5wrapv"], &["main", "_Z3tplv", "_Z5wrapv"]),
                unit("b.o", &["_Z3tplv", "_Z6helperv", "api"], &["_Z6helperv", "api"]),
            ],
            outside_refs: match outside {
                Some(o) => OutsideRefs::Known(set(o)),
                None => OutsideRefs::Unknown("test".into()),
            },
            wraps: vec!["_Z5wrapv".into()],
            exported: set(&["api"]),
            preemptible: BTreeSet::new(),
            defined_by_command_line: BTreeSet::new(),
            unresolved: BTreeSet::new(),
            as_needed_refs: BTreeSet::new(),
            warnings: Vec::new(),
            movable: Vec::new(),
        }
    }

    fn def(name: &str) -> SymbolView<'_> {
        SymbolView {
            name,
            section: "",
            undefined: false,
            odr_copy: false,
            common: false,
            non_default_visibility: false,
            hidden: false,
            introduced: false,
        }
    }

    #[test]
    fn one_copy_prevails_and_only_outside_references_are_visible() {
        let m1 = model(Some(&["main"]));
        let s = LtoSymbols::new(&m1, OutputKind::default());
        let main = s.resolve(0, &def("main"));
        assert!(main.prevailing && main.visible_to_regular_obj && main.final_definition);
        // The template: a's copy prevails, b's does not; nothing outside
        // the bitcode references it, so LLVM may internalize it.
        assert!(s.resolve(0, &def("_Z3tplv")).prevailing);
        let b_tpl = s.resolve(1, &def("_Z3tplv"));
        assert!(!b_tpl.prevailing && !b_tpl.visible_to_regular_obj);
        let helper = s.resolve(1, &def("_Z6helperv"));
        assert!(helper.prevailing && !helper.visible_to_regular_obj && !helper.export_dynamic);
        // Undefined references never prevail.
        let r = s.resolve(0, &SymbolView { undefined: true, ..def("_Z6helperv") });
        assert!(!r.prevailing && !r.visible_to_regular_obj);
    }

    #[test]
    fn exports_wraps_and_new_names() {
        let m2 = model(Some(&["main"]));
        let s = LtoSymbols::new(&m2, OutputKind::default());
        let api = s.resolve(1, &def("api"));
        assert!(api.visible_to_regular_obj && api.export_dynamic);
        // A hidden definition is never exported.
        assert!(!s.resolve(1, &SymbolView { hidden: true, non_default_visibility: true, ..def("api") }).export_dynamic);
        let wrapped = s.resolve(0, &def("_Z5wrapv"));
        assert!(wrapped.visible_to_regular_obj && wrapped.linker_redefined);
        // A name the rewrite made (a promoted local) is this module's own.
        let promoted = s.resolve(1, &SymbolView { introduced: true, ..def("_ZN12_GLOBAL__N_14Impl3getEv.wpd.1") });
        assert!(promoted.prevailing && !promoted.visible_to_regular_obj);
        // A definition the model never saw, and wpd did not make: kept.
        let unseen = s.resolve(1, &def("llvm.embedded.object"));
        assert!(unseen.prevailing && unseen.visible_to_regular_obj);
    }

    #[test]
    fn unknown_outside_references_keep_everything_visible() {
        let m3 = model(None);
        let s = LtoSymbols::new(&m3, OutputKind::default());
        assert!(s.resolve(1, &def("_Z6helperv")).visible_to_regular_obj);
        let m4 = model(Some(&[]));
        let r = LtoSymbols::new(&m4, OutputKind { relocatable: true, ..OutputKind::default() });
        assert!(r.resolve(1, &def("_Z6helperv")).visible_to_regular_obj);
        assert!(!r.resolve(1, &def("_Z6helperv")).final_definition);
        let m5 = model(Some(&[]));
        let shared = LtoSymbols::new(&m5, OutputKind { shared: true, ..OutputKind::default() });
        assert!(!shared.resolve(1, &def("_Z6helperv")).final_definition);
    }

    #[test]
    fn a_definition_the_link_replaces_is_redefined_in_its_first_module() {
        // c.o and d.o define `patched`, whose copy the link keeps is not
        // bitcode (a native object first under -z muldefs).
        let mut m = model(Some(&["main"]));
        for name in ["c.o", "d.o"] {
            let mut unit = m.loaded[1].clone();
            unit.name = name.into();
            unit.defined = set(&["patched", "weakly"]);
            unit.prevailing = BTreeSet::new();
            m.loaded.push(unit);
        }
        let s = LtoSymbols::new(&m, OutputKind::default());
        // The first module's strong copy goes to LLVM as the linker's own
        // `--wrap` or `--defsym` names do: never imported or inlined.
        let first = s.resolve(2, &def("patched"));
        assert!(first.prevailing && first.linker_redefined && first.visible_to_regular_obj);
        let second = s.resolve(3, &def("patched"));
        assert!(!second.prevailing && !second.linker_redefined);
        // An ODR copy is left to LLVM's resolution (not prevailing): any
        // copy may be inlined. A weak copy of another kind is replaced.
        let odr = s.resolve(2, &SymbolView { odr_copy: true, ..def("weakly") });
        assert!(!odr.prevailing && !odr.linker_redefined);
        assert!(s.resolve(2, &def("weakly")).linker_redefined);
        // A common symbol's copies are sized by LLVM: left to it.
        assert!(!s.resolve(2, &SymbolView { common: true, ..def("patched") }).linker_redefined);
        // A copy that prevails somewhere is not replaced.
        assert!(!s.resolve(1, &def("_Z3tplv")).linker_redefined);
    }

    #[test]
    fn start_stop_sections_stay() {
        let m6 = model(Some(&["__start_plugins"]));
        let s = LtoSymbols::new(&m6, OutputKind::default());
        let r = s.resolve(1, &SymbolView { section: "plugins", ..def("_Z6helperv") });
        assert!(r.visible_to_regular_obj);
        // A bitcode module's own reference keeps the section too.
        let mut m = model(Some(&[]));
        assert!(
            !LtoSymbols::new(&m, OutputKind::default())
                .resolve(1, &SymbolView { section: "reg", ..def("_Z6helperv") })
                .visible_to_regular_obj
        );
        m.loaded[0].refs.weak.insert("__stop_reg".into());
        let s = LtoSymbols::new(&m, OutputKind::default());
        assert!(s.resolve(1, &SymbolView { section: "reg", ..def("_Z6helperv") }).visible_to_regular_obj);
    }
}
