//! summarize: one bitcode file (a module, or the two modules of a split LTO
//! unit) → one [`ModuleSummary`]. Runs once per input, in parallel, each task
//! with its own LLVM context.
//!
//! The parts, in the order they run:
//! - [`vtables`]: globals with `!type`, their type ids and slots;
//! - [`calls`]: type tests / checked loads and the virtual calls they guard;
//! - [`refs`]: what every defined global references, and the module's roots;
//! - [`functions`]: facts (and result expressions) of slot targets.

mod bodies;
pub(crate) mod calls;
mod functions;
mod refs;
mod vtables;

use crate::error::{Error, Result};
use crate::input::BitcodeInput;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use wpd_llvm::{Context, MdOperand, Module};
use wpd_summary::{
    CallSite, GlobalRefs, Linkage, ModuleInfo, ModuleSummary, SlotReads, SpecialRoots, TypeId, TypeIdInfo,
    UntestedRead, VtableRead,
};

/// Which function bodies the summarizer reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Bodies {
    /// Only those it must look into; the references of the others come
    /// from clang's summary index ([`bodies`]).
    #[default]
    Needed,
    /// Every one, each walked for its references: the same summary, made
    /// without trusting the index (`wpd summarize --read-all-bodies`).
    All,
}

/// Summarizes one bitcode input, reading only the function bodies it needs.
pub fn summarize(input: &BitcodeInput) -> Result<ModuleSummary> {
    summarize_reading(input, Bodies::Needed)
}

/// Summarizes one bitcode input, reading `bodies`.
pub fn summarize_reading(input: &BitcodeInput, bodies: Bodies) -> Result<ModuleSummary> {
    let ctx = Context::new();
    let parts = ctx
        .parse_bitcode_lazy(&input.bytes, &input.name)
        .map_err(|e| Error::at(&input.name, format!("invalid bitcode: {}", e.message)))?;
    let unreadable = |e: Error| Error::at(&input.name, format!("invalid bitcode: {}", e.message));
    let indexed = match bodies {
        Bodies::Needed => bodies::read_tested(&parts).map_err(unreadable)?,
        Bodies::All => {
            parts.iter().try_for_each(bodies::read_all).map_err(unreadable)?;
            parts.iter().map(|_| None).collect()
        }
    };
    let modules: Vec<&Module<'_>> = parts.iter().map(|p| &**p).collect();
    for module in &modules {
        wpd_llvm::check_target(&module.triple()).map_err(|e| Error::at(&input.name, e.message))?;
    }
    let hash = input.content_hash();
    let first = modules[0];
    let info = ModuleInfo {
        name: input.name.clone(),
        path: input.path.clone(),
        member: input.member.clone(),
        hash: hash.clone(),
        triple: first.triple(),
        data_layout: first.data_layout(),
        split: modules.len() > 1,
        thin_fallback: false,
    };
    let mut ids = TypeIdNamer::new(&hash);
    let mut vtables = scan_vtables(&modules, &mut ids);
    // Every body making an indirect call: a call through a pointer to a
    // virtual member function reads a slot without a type test, and in a
    // part with internal type ids, every virtual call left indirect is one
    // (`bodies::read_indirect`).
    for (module, index) in parts.iter().zip(&indexed) {
        bodies::read_indirect(module, index.as_ref()).map_err(unreadable)?;
    }
    let mut tested = Vec::new();
    let calls = scan_calls(&modules, &mut ids, &mut tested);
    tested.sort();
    tested.dedup();
    let (untested, direct) = untested_and_direct_reads(&modules);
    let slot_reads = SlotReads {
        whole_program_vtables: modules.iter().any(|m| m.flag_int("Virtual Function Elim").is_some()),
        tested,
        untested,
        direct,
    };
    let mut call_sites: Vec<CallSite> = calls.into_iter().map(|c| c.site).collect();
    let mut globals: BTreeMap<wpd_summary::Name, GlobalRefs> = BTreeMap::new();
    let mut roots = SpecialRoots::default();
    let mut untyped_vtables = Vec::new();
    for (module, indexed) in modules.iter().zip(&indexed) {
        for g in refs::collect(module, indexed.as_ref().map(|i| &i.refs)) {
            merge_global(&mut globals, g);
        }
        refs::roots(module, &mut roots);
        untyped_vtables.extend(vtables::untyped(module).into_iter().map(wpd_summary::Name::from));
    }
    untyped_vtables.sort();
    untyped_vtables.dedup();
    dedup_vtables(&mut vtables);
    vtables.sort_by(|a, b| a.symbol.cmp(&b.symbol));
    // Stable: calls of one test keep program order.
    call_sites.sort_by(|a, b| (&a.function, a.test_index).cmp(&(&b.function, b.test_index)));
    for list in [&mut roots.used, &mut roots.compiler_used, &mut roots.global_ctors, &mut roots.global_dtors] {
        list.sort();
        list.dedup();
    }

    let wanted: BTreeSet<&str> =
        vtables.iter().flat_map(|v| v.slots.iter()).filter_map(|s| s.function.as_deref()).collect();
    bodies::read_named(&parts, &wanted).map_err(unreadable)?;
    let functions = functions::collect(&modules, &wanted);

    let mut type_ids: Vec<TypeIdInfo> = vtables
        .iter()
        .flat_map(|v| v.type_ids.iter().map(|t| t.type_id.as_str()))
        .chain(call_sites.iter().map(|c| c.type_id.as_str()))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .map(|name| TypeIdInfo { name: TypeId::from(name), local: ids.is_local(name) })
        .collect();
    type_ids.sort();

    // clang's ThinLTO writer names a split unit after its external
    // definitions; with none, it writes one regular LTO module instead,
    // flagged ThinLTO = 0. That flag alone does not tell it from an
    // object built with -flto=full, which keeps importing functions.
    let thin_fallback = modules.len() == 1
        && first.flag_int("ThinLTO") == Some(0)
        && first.flag_int("EnableSplitLTOUnit") == Some(1)
        && !globals.values().any(|g| g.linkage == wpd_summary::Linkage::External);
    Ok(ModuleSummary {
        module: ModuleInfo { thin_fallback, ..info },
        type_ids,
        vtables,
        untyped_vtables,
        call_sites,
        functions,
        globals: globals.into_values().collect(),
        roots,
        slot_reads,
    })
}

/// A call site and, when it guards a call, the only handle to that call
/// (rewrites consume it), with the module part holding it.
pub(crate) struct ScannedCall<'m> {
    pub site: CallSite,
    pub call: Option<wpd_llvm::VirtualCall<'m>>,
    /// Index of the part (module of the file) holding the call.
    pub part: usize,
}

/// The call sites of every part of a file, with type ids named as the
/// summarizer names them: the backend's view of the same file. Both name
/// internal type ids in order of first appearance, the vtables of all
/// parts first, so the name of one a vtable carries does not depend on
/// which function bodies were read.
pub(crate) fn scan<'m>(modules: &[&'m Module<'_>], hash: &str) -> Vec<ScannedCall<'m>> {
    let mut ids = TypeIdNamer::new(hash);
    scan_vtables(modules, &mut ids);
    scan_calls(modules, &mut ids, &mut Vec::new())
}

fn scan_vtables(modules: &[&Module<'_>], ids: &mut TypeIdNamer) -> Vec<wpd_summary::Vtable> {
    modules.iter().enumerate().flat_map(|(index, module)| vtables::collect(module, index, ids)).collect()
}

fn scan_calls<'m>(
    modules: &[&'m Module<'_>],
    ids: &mut TypeIdNamer,
    reads: &mut Vec<wpd_summary::SlotRead>,
) -> Vec<ScannedCall<'m>> {
    modules.iter().enumerate().flat_map(|(index, module)| calls::collect(module, index, ids, reads)).collect()
}

/// The slot reads of every body read that no type test guards, sorted and
/// without repeats: calls through pointers to virtual member functions (by
/// the signature they call), and loads straight from a vtable's constant
/// address. A body the shim could not scan reads anything: an untested
/// read of no known signature, so that nothing can be dead in this link.
fn untested_and_direct_reads(modules: &[&Module<'_>]) -> (Vec<UntestedRead>, Vec<VtableRead>) {
    let mut untested = BTreeSet::new();
    let mut direct = BTreeSet::new();
    for m in modules {
        for f in m.functions() {
            let function: wpd_summary::Name = f.name().into();
            untested.extend(
                m.untested_slot_loads(f)
                    .into_iter()
                    .map(|t| UntestedRead { function: function.clone(), signature: t.map(functions::signature) }),
            );
            match m.vtable_loads(f) {
                Some(loads) => direct.extend(loads.into_iter().map(|(v, offset)| VtableRead {
                    function: function.clone(),
                    vtable: v.name().into(),
                    offset,
                })),
                None => {
                    untested.insert(UntestedRead { function, signature: None });
                }
            }
        }
    }
    (untested.into_iter().collect(), direct.into_iter().collect())
}

/// Keeps one record per vtable symbol: a definition over a declaration, a
/// real definition over an `available_externally` copy.
fn dedup_vtables(vtables: &mut Vec<wpd_summary::Vtable>) {
    let rank = |v: &wpd_summary::Vtable| (!v.slots.is_empty(), !v.available_externally);
    let mut best: HashMap<wpd_summary::Name, usize> = HashMap::new();
    for (i, v) in vtables.iter().enumerate() {
        match best.get(&v.symbol) {
            Some(&j) if rank(&vtables[j]) >= rank(v) => {}
            _ => {
                best.insert(v.symbol.clone(), i);
            }
        }
    }
    let keep: BTreeSet<usize> = best.into_values().collect();
    let mut i = 0;
    vtables.retain(|_| {
        i += 1;
        keep.contains(&(i - 1))
    });
}

/// Merges a global's record into the module-wide map. In a split unit the
/// same symbol can be defined in both parts (`available_externally` copies of
/// virtual functions in the regular part): keep the real definition. Two
/// local symbols of the same name in the two parts are different objects;
/// their references are united, which only keeps more alive.
fn merge_global(map: &mut BTreeMap<wpd_summary::Name, GlobalRefs>, g: GlobalRefs) {
    match map.get_mut(&g.name) {
        None => {
            map.insert(g.name.clone(), g);
        }
        Some(old) => {
            let old_copy = old.linkage == Linkage::AvailableExternally;
            let new_copy = g.linkage == Linkage::AvailableExternally;
            if old_copy && !new_copy {
                *old = g;
            } else if old_copy == new_copy {
                old.refs.extend(g.refs);
                old.refs.sort();
                old.refs.dedup();
            }
        }
    }
}

/// Names type ids: metadata strings as they are; distinct nodes (internal
/// classes) as `local.<n>.<module hash prefix>`, numbered in order of first
/// appearance, so names are stable and cannot collide across modules.
pub(crate) struct TypeIdNamer {
    hash: String,
    locals: HashMap<(usize, usize), String>,
    local_names: BTreeSet<String>,
}

impl TypeIdNamer {
    fn new(hash: &str) -> Self {
        let hash = &hash[..16.min(hash.len())];
        TypeIdNamer { hash: hash.to_string(), locals: HashMap::new(), local_names: BTreeSet::new() }
    }

    /// The name of a type id operand of module `module`.
    pub(crate) fn name(&mut self, module: usize, op: &MdOperand) -> Option<TypeId> {
        match op {
            MdOperand::String(s) => Some(TypeId::new(s.clone())),
            MdOperand::Node { id, .. } => {
                let next = self.locals.len();
                let hash = &self.hash;
                let name = self.locals.entry((module, *id)).or_insert_with(|| format!("local.{next}.{hash}")).clone();
                self.local_names.insert(name.clone());
                Some(TypeId::new(name))
            }
            _ => None,
        }
    }

    fn is_local(&self, name: &str) -> bool {
        self.local_names.contains(name)
    }
}

/// Helper shared by the parts: LLVM's metadata kind ids for a module.
pub(crate) struct MdKinds {
    pub ty: u32,
    pub vcall_visibility: u32,
}

impl MdKinds {
    pub(crate) fn of(module: &Module<'_>) -> MdKinds {
        MdKinds { ty: module.md_kind("type"), vcall_visibility: module.md_kind("vcall_visibility") }
    }
}
