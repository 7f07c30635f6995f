//! References between global values (the thin link's liveness graph) and the
//! roots a module keeps alive by itself (`llvm.used`, constructors, ...).

use super::bodies::Indexed;
use std::collections::{BTreeSet, HashSet};
use wpd_llvm::{Module, Value};
use wpd_summary::{GlobalKind, GlobalRefs, Linkage, SpecialRoots};

/// One record per defined global value of `module`. A function `indexed`
/// describes takes its references and instruction count from there (its
/// body may be unread); any other function's body is walked.
pub(super) fn collect(module: &Module<'_>, indexed: Option<&Indexed<'_>>) -> Vec<GlobalRefs> {
    let mut out = Vec::new();
    let kinds: Vec<(&str, u32)> = FLAG_ATTRIBUTES.iter().map(|&n| (n, wpd_llvm::Context::attr_kind(n))).collect();
    let record = |g, kind, w, instructions| record(g, kind, w, instructions, &kinds);
    for f in module.functions() {
        if f.is_declaration() {
            continue;
        }
        let mut w = Walker::default();
        if let Some(d) = indexed.and_then(|i| i.get(&f.id())) {
            for &r in &d.refs {
                w.visit(r);
            }
            out.push(record(f, GlobalKind::Function, w, d.instructions));
            continue;
        }
        let mut instructions = 0u32;
        for block in f.blocks() {
            for inst in block.instructions() {
                instructions = instructions.saturating_add(1);
                for op in inst.operands() {
                    w.visit(op);
                }
            }
        }
        if let Some(p) = f.personality() {
            w.visit(p);
        }
        out.push(record(f, GlobalKind::Function, w, instructions));
    }
    for g in module.globals() {
        let Some(init) = g.initializer() else { continue };
        if g.name().starts_with("llvm.") {
            continue; // llvm.used & co. are roots, not referrers
        }
        let mut w = Walker::default();
        w.visit(init);
        out.push(record(g, GlobalKind::Variable, w, 0));
    }
    for (list, kind) in
        [(module.aliases().collect::<Vec<_>>(), GlobalKind::Alias), (module.ifuncs().collect(), GlobalKind::Ifunc)]
    {
        for a in list {
            let mut w = Walker::default();
            // An ifunc's resolver is its only operand.
            for op in a.operands() {
                w.visit(op);
            }
            out.push(record(a, kind, w, 0));
        }
    }
    out
}

/// `g`'s record; `flag_kinds`: [`FLAG_ATTRIBUTES`] with their kind ids.
fn record(g: Value<'_>, kind: GlobalKind, w: Walker, instructions: u32, flag_kinds: &[(&str, u32)]) -> GlobalRefs {
    let linkage = g.linkage();
    let flags = match (kind, linkage) {
        (GlobalKind::Function, Linkage::LinkonceOdr | Linkage::WeakOdr) => flags_fingerprint(g, flag_kinds),
        _ => 0,
    };
    GlobalRefs {
        name: g.name().into(),
        kind,
        linkage,
        visibility: g.visibility(),
        refs: w.refs.into_iter().map(Into::into).collect(),
        instructions,
        flags,
    }
}

/// The enum attributes a compile flag puts on every function of a unit
/// (besides the string attributes, which all come from flags): exceptions
/// off, `-O0`, sanitizers, stack protection, strict floating point.
const FLAG_ATTRIBUTES: &[&str] = &[
    "nounwind",
    "optnone",
    "sanitize_address",
    "sanitize_hwaddress",
    "sanitize_memory",
    "sanitize_thread",
    "sanitize_memtag",
    "safestack",
    "shadowcallstack",
    "speculative_load_hardening",
    "ssp",
    "sspreq",
    "sspstrong",
    "strictfp",
    "nocf_check",
    "uwtable",
];

/// [`GlobalRefs::flags`] of an ODR function: a hash of the attributes
/// compile flags gave it, never 0.
fn flags_fingerprint(f: Value<'_>, flag_kinds: &[(&str, u32)]) -> u64 {
    let text = f.flag_attributes(flag_kinds).join("\n");
    xxhash_rust::xxh3::xxh3_64(text.as_bytes()).max(1)
}

/// Collects the global values reachable through constant operands.
#[derive(Default)]
struct Walker {
    refs: BTreeSet<String>,
    seen: HashSet<usize>,
}

impl Walker {
    fn visit(&mut self, v: Value<'_>) {
        if v.is_global_value() {
            let name = v.name();
            if !name.starts_with("llvm.") {
                self.refs.insert(name);
            }
            return;
        }
        // Constant expressions and aggregates hold further references;
        // instructions, arguments, blocks and metadata are not followed.
        if v.is_constant() && v.num_operands() > 0 && self.seen.insert(v.id()) {
            for op in v.operands() {
                self.visit(op);
            }
        }
    }
}

/// Appends the module's `llvm.used`, `llvm.compiler.used`,
/// `llvm.global_ctors` and `llvm.global_dtors` entries to `roots`.
pub(super) fn roots(module: &Module<'_>, roots: &mut SpecialRoots) {
    let lists: [(&str, &mut Vec<wpd_summary::Name>); 4] = [
        ("llvm.used", &mut roots.used),
        ("llvm.compiler.used", &mut roots.compiler_used),
        ("llvm.global_ctors", &mut roots.global_ctors),
        ("llvm.global_dtors", &mut roots.global_dtors),
    ];
    for (name, list) in lists {
        let Some(init) = module.global(name).and_then(|g| g.initializer()) else { continue };
        // Every global named anywhere in the entry: the function and, for
        // ctors/dtors, the associated data.
        let mut w = Walker::default();
        w.visit(init);
        list.extend(w.refs.into_iter().map(wpd_summary::Name::from));
    }
}
