//! The visibility policy: which vtables may be treated as closed (LLVM's
//! vcall visibility after `--lto-whole-program-visibility`), which
//! hierarchies are open whatever the user promised (validated against the
//! native side of the link), and which call sites may be rewritten.
//!
//! A class is open when native code can see it: its typeinfo `_ZTI<X>` or
//! vtable `_ZTV<X>` is defined or referenced by a native object or shared
//! library (a library deriving from it references the base typeinfo), a
//! native typeinfo names it as a base, its vtable is exported dynamically,
//! or its bitcode vtable has no typeinfo to check against while native C++
//! code other than the runtime is in the link. An open class
//! opens its own type id, its member-function-pointer type ids, and every
//! type id its vtable carries (its bases': a class deriving from it derives
//! from them too).

use crate::hierarchy::{Hierarchy, LinkFacts};
use crate::native::NativeScan;
pub use crate::resolve::glob_match;
use std::collections::BTreeMap;
use wpd_summary::{CallSite, SlotKind, TestKind, TypeId, VcallVisibility, Visibility, Vtable};

/// What the native side says, and the user's overrides.
#[derive(Clone, Debug, Default)]
pub struct Validation {
    /// Off with `--wpd-no-validate`: trust the visibility as LLVM does.
    pub enabled: bool,
    /// `unknown` applies even when validation is off (relocatable output).
    pub always: bool,
    /// Classes (mangled name after `_ZTV`/`_ZTI`) native code sees, with why.
    pub native_classes: BTreeMap<String, String>,
    /// When set, nothing can be validated (an input wpd could not read, a
    /// native vtable without typeinfo): every externally named hierarchy is
    /// open, for this reason.
    pub unknown: Option<String>,
    /// `--wpd-known-safe=GLOB`: vtable symbols never opened by validation.
    pub known_safe: Vec<String>,
    /// `--wpd-open=GLOB`: vtable symbols always open.
    pub force_open: Vec<String>,
    /// The first native input (not the C or C++ runtime) with C++ code:
    /// it may call virtual functions through vtables no summary sees, so
    /// no slot is dead ([`NativeScan::cxx_code`]).
    pub native_cxx: Option<String>,
    /// The first native object (not of the runtime) that loads code at run
    /// time ([`NativeScan::loads_code`]).
    pub native_loader: Option<String>,
}

impl Validation {
    /// Validation from a scan of the native inputs; `unknown` says why the
    /// native side is not fully known, when it is not.
    pub fn from_native(scan: &NativeScan, unknown: Option<String>) -> Validation {
        let native_classes = scan
            .classes
            .iter()
            .map(|(class, sightings)| {
                let why: Vec<String> = sightings.iter().map(|s| s.to_string()).collect();
                (class.clone(), why.join("; "))
            })
            .collect();
        let unknown = unknown.or_else(|| {
            scan.vtables_without_typeinfo().first().map(|(class, file)| {
                format!(
                    "native vtable _ZTV{class} in {file} has no typeinfo, so what it derives from cannot be checked"
                )
            })
        });
        Validation {
            enabled: true,
            always: false,
            native_classes,
            unknown,
            known_safe: Vec::new(),
            force_open: Vec::new(),
            native_cxx: scan.cxx_code.clone(),
            native_loader: scan.loads_code.clone(),
        }
    }
}

/// The policy of one link.
#[derive(Clone, Debug, Default)]
pub struct Policy {
    /// The user promised whole-program visibility.
    pub whole_program_visibility: bool,
    pub facts: LinkFacts,
    pub validation: Validation,
    /// Guarded speculative devirtualization: at most this many targets
    /// (0: off).
    pub speculate: u8,
    /// Closed-set dispatch: at most this many targets (0: off).
    pub closed_set: u8,
    /// Dead-slot elimination (off with `--wpd-no-dead-slots`).
    pub dead_slots: bool,
}

impl Policy {
    /// Whether the vtable's symbol is exported to the dynamic linker, where
    /// other modules may derive from it or replace it.
    pub fn dynamically_exported(&self, v: &Vtable) -> bool {
        !v.linkage.is_local() && v.visibility != Visibility::Hidden && self.facts.exports(&v.symbol, v.visibility)
    }

    /// The vtable's vcall visibility after the policy: whole-program
    /// visibility upgrades `public` to `linkage_unit`, except for vtables
    /// exported dynamically (as LLVM's `updateVCallVisibilityInModule`).
    pub fn effective_visibility(&self, v: &Vtable) -> VcallVisibility {
        if v.vcall_visibility == VcallVisibility::Public
            && self.whole_program_visibility
            && !self.dynamically_exported(v)
        {
            VcallVisibility::LinkageUnit
        } else {
            v.vcall_visibility
        }
    }

    /// Why a call site must be left alone whatever its slot's decision.
    pub fn call_site_blocker(&self, c: &CallSite) -> Option<&'static str> {
        if !c.assumed {
            return Some("the type test does not feed llvm.assume (a CFI check, or a use wpd cannot follow)");
        }
        if c.kind == TestKind::PublicTypeTest && !self.whole_program_visibility {
            return Some("public type test without whole-program visibility (--lto-whole-program-visibility)");
        }
        None
    }

    /// Classes of bitcode vtables without type metadata (TUs built without
    /// `-fwhole-program-vtables`) and, through their typeinfos' references,
    /// every base class of them: code the type-id index cannot see derives
    /// from those. An untyped vtable whose typeinfo no bitcode module
    /// defines (`-fno-rtti`) hides its bases: then the whole link is
    /// unknown, and the reason is returned.
    fn untyped_classes(&self, link: &Hierarchy<'_>, classes: &mut BTreeMap<String, String>) -> Option<String> {
        let mut typeinfo_refs: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for s in link.summaries {
            for g in &s.globals {
                if g.name.starts_with("_ZTI") {
                    let e = typeinfo_refs.entry(g.name.as_str()).or_default();
                    e.extend(g.refs.iter().map(wpd_summary::Name::as_str).filter(|r| r.starts_with("_ZTI")));
                }
            }
        }
        let mut unknown = None;
        for s in link.summaries {
            for vt in &s.untyped_vtables {
                let Some(class) = vt.strip_prefix("_ZTV") else { continue };
                let why = format!(
                    "{vt} in {} has no type metadata (not built with -flto=thin -fwhole-program-vtables)",
                    s.module.name
                );
                if !typeinfo_refs.contains_key(format!("_ZTI{class}").as_str()) {
                    unknown.get_or_insert_with(|| {
                        format!("{why} and no typeinfo (-fno-rtti), so the classes it derives from cannot be known")
                    });
                }
                let mut stack = vec![format!("_ZTI{class}")];
                let mut seen = std::collections::BTreeSet::new();
                while let Some(ti) = stack.pop() {
                    if !seen.insert(ti.clone()) {
                        continue;
                    }
                    let c = ti.trim_start_matches("_ZTI").to_string();
                    let reason = if c == class { why.clone() } else { format!("a base of a class whose {why}") };
                    classes.entry(c).or_insert(reason);
                    if let Some(bases) = typeinfo_refs.get(ti.as_str()) {
                        stack.extend(bases.iter().map(|b| b.to_string()));
                    }
                }
            }
        }
        unknown
    }

    /// Opens each class whose typeinfo the output exports dynamically: a
    /// library loaded at run time (`dlopen`, never on the link line) may
    /// derive from it, naming that typeinfo as its base, whether or not
    /// any module holds the class's vtable (an abstract class whose
    /// constructor and destructor are inline often has none). The
    /// typeinfo's visibility is its class's vtable's where a module holds
    /// one (it matters only when the link model does not say what is
    /// exported).
    fn exported_typeinfos(&self, link: &Hierarchy<'_>, classes: &mut BTreeMap<String, String>) {
        let mut visibility: BTreeMap<&str, Visibility> = BTreeMap::new();
        for (key, r) in &link.vtables {
            let vt = link.vtable(*r);
            if let (None, Some(class)) = (key.module, vt.symbol.strip_prefix("_ZTV")) {
                visibility.insert(class, vt.visibility);
            }
        }
        let how = if self.facts.shared { "-shared" } else { "--export-dynamic or an export list" };
        for type_id in link.by_type_id.keys() {
            let id = type_id.as_str();
            let Some(class) = id.strip_prefix("_ZTS").filter(|_| !id.starts_with("_ZTSM")) else { continue };
            let typeinfo = format!("_ZTI{class}");
            let vis = visibility.get(class).copied().unwrap_or(Visibility::Default);
            if self.facts.exports(&typeinfo, vis) {
                classes.entry(class.to_string()).or_insert_with(|| {
                    format!(
                        "{typeinfo} is exported dynamically ({how}): a library loaded at run time may derive from it"
                    )
                });
            }
        }
    }

    /// Open type ids of the link with the reason for each.
    pub fn open_type_ids<'a>(&self, link: &Hierarchy<'a>) -> BTreeMap<&'a TypeId, String> {
        let mut open: BTreeMap<&'a TypeId, String> = BTreeMap::new();
        if !self.validation.enabled && !self.validation.always && self.validation.force_open.is_empty() {
            return open;
        }
        let v = &self.validation;
        // Classes open for a reason, by class name.
        let mut classes: BTreeMap<String, String> = BTreeMap::new();
        if v.enabled {
            for (class, why) in &v.native_classes {
                classes.insert(class.clone(), why.clone());
            }
        }
        for (key, r) in &link.vtables {
            let vt = link.vtable(*r);
            let Some(class) = vt.symbol.strip_prefix("_ZTV") else { continue };
            // Only classes named across modules can be seen from outside;
            // internal classes carry local type ids.
            let own_id = format!("_ZTS{class}");
            if key.module.is_some() || !vt.type_ids.iter().any(|t| t.type_id == own_id) {
                continue;
            }
            if v.force_open.iter().any(|g| glob_match(g, &vt.symbol)) {
                classes.insert(class.to_string(), format!("{} matches --wpd-open", vt.symbol));
                continue;
            }
            if !v.enabled {
                continue;
            }
            if self.dynamically_exported(vt) {
                let how = if self.facts.shared { "-shared" } else { "--export-dynamic" };
                classes
                    .entry(class.to_string())
                    .or_insert_with(|| format!("{} is exported dynamically ({how})", vt.symbol));
            }
            let has_typeinfo = vt
                .slots
                .iter()
                .any(|s| s.kind == SlotKind::Global && s.symbol.as_deref().is_some_and(|n| n.starts_with("_ZTI")));
            // Without typeinfo, a subclass in a shared library would leave
            // no trace (it references its base's typeinfo only with RTTI);
            // where no native input may hold C++ code but the runtime's, no
            // such subclass can be linked, and the class is as closed as
            // one with typeinfo.
            if let (false, Some(native)) = (has_typeinfo, &v.native_cxx) {
                classes.entry(class.to_string()).or_insert_with(|| {
                    format!(
                        "{} has no typeinfo to check against (-fno-rtti), and native C++ code is in the link, where a subclass would leave no trace: {native}",
                        vt.symbol
                    )
                });
            }
        }
        if v.enabled {
            self.exported_typeinfos(link, &mut classes);
        }
        let mut unknown = v.unknown.clone().filter(|_| v.enabled || v.always);
        if v.enabled {
            let hidden_bases = self.untyped_classes(link, &mut classes);
            unknown = unknown.or(hidden_bases);
            classes.retain(|class, _| !v.known_safe.iter().any(|g| glob_match(g, &format!("_ZTV{class}"))));
        }
        // Type ids of open classes: their own, their member-function-pointer
        // ids, and everything their bitcode vtables carry.
        let all_ids: Vec<&'a TypeId> = link.by_type_id.keys().copied().collect();
        for &type_id in &all_ids {
            let id = type_id.as_str();
            if let Some(unknown) = &unknown
                && id.starts_with("_ZTS")
            {
                open.insert(type_id, unknown.clone());
                continue;
            }
            let class = id.strip_prefix("_ZTSM").or_else(|| id.strip_prefix("_ZTS"));
            if let Some(rest) = class {
                // `_ZTS<X>` exactly, or `_ZTSM<X><function type>.virtual`.
                // Prefixes end on character boundaries: UTF-8 identifiers
                // are mangled as their bytes.
                let found = if id.starts_with("_ZTSM") {
                    rest.char_indices().skip(1).find_map(|(k, _)| classes.get_key_value(&rest[..k]))
                } else {
                    classes.get_key_value(rest)
                };
                if let Some((c, why)) = found {
                    open.insert(type_id, format!("open class {c}: {why}"));
                }
            }
        }
        for (_, r) in &link.vtables {
            let vt = link.vtable(*r);
            let Some(class) = vt.symbol.strip_prefix("_ZTV") else { continue };
            if let Some(why) = classes.get(class) {
                for t in &vt.type_ids {
                    open.entry(&t.type_id).or_insert_with(|| format!("base of open class {class}: {why}"));
                }
            }
        }
        open
    }
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    #[test]
    fn globs() {
        assert!(glob_match("_ZTV*", "_ZTV4Base"));
        assert!(glob_match("_ZTV?Base", "_ZTV4Base"));
        assert!(glob_match("_ZTV[0-9]Base", "_ZTV4Base"));
        assert!(!glob_match("_ZTV[!0-9]Base", "_ZTV4Base"));
        assert!(!glob_match("_ZTV*Derived", "_ZTV4Base"));
        assert!(glob_match("*", ""));
    }
}
