//! Dead slots: vtable entries no code of the program can load once the
//! plan is applied. Each one gets a trap stub in place of its function
//! (`rewrite::dead_slots`), so a function only dead slots named is
//! referenced by nothing and ThinLTO's dead stripping drops it: virtual
//! function elimination across a ThinLTO link, which LLVM does only in full
//! LTO (GlobalDCE).
//!
//! A read of a slot is a pair (type id, offset from the address point):
//! - every call site of the program that the plan leaves loading its slot
//!   (left indirect, speculated with the indirect call as fallback, or
//!   dispatched with a value profile, which may keep the indirect call for
//!   cold targets); a call rewritten to a direct call, a constant, a
//!   comparison or a closed-set dispatch without fallback loads nothing;
//! - every other load through a tested vtable pointer the summaries record
//!   ([`wpd_summary::SlotReads::tested`]; offset `None`: any slot);
//! - every load straight from a vtable's constant address
//!   ([`wpd_summary::SlotReads::direct`]): that entry of that vtable.
//!
//! The slot at byte `p` of a vtable is live when some read (T, o) has T
//! among the vtable's type ids at an address point `a` with `a + o = p`
//! (or reads any slot of T with `a <= p`). Functions only dead slots named
//! leave the program, and their call sites stop reading: the analysis
//! repeats until nothing more dies.
//!
//! Only vtables whose every reader is known qualify: each of its type ids
//! closed (not open: no native or shared-library class sees it, it is not
//! exported dynamically), its vcall visibility not public after the policy
//! (whole-program visibility, or hidden/`linkage-unit`), no relative
//! entries; and when the output exports symbols (a shared library, an
//! executable with a dynamic export) or the program loads libraries itself
//! (`dlopen`), every type id local to one module
//! ([`TypeId::is_module_local`]: a class in an anonymous namespace with no
//! public base), since code loaded with it may call virtual functions of
//! the objects it is handed. And the link as a whole must have no reader
//! wpd cannot see: no native C++ code besides the runtime ([`Validation::native_cxx`]), no
//! C++ bitcode built without `-fwhole-program-vtables`, no call through a
//! pointer to a virtual member function (it loads a slot without a type
//! test), and a native side wpd could read.

use crate::decide::{ProgramCalls, SlotCalls};
use crate::hierarchy::{Hierarchy, Live, RefEdges, RefNode, SymKey, VtableId};
use crate::native::{CODE_LOADERS, runtime_symbol, sanitizer_metadata};
use crate::outcome::Outcome;
use crate::policy::Policy;
use rayon::prelude::*;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::collections::BTreeMap;
use wpd_summary::ids::modules;
use wpd_summary::{
    DeadSlots, GlobalKind, Plan, Signature, SlotDecision, SlotKind, TypeId, UntestedRead, VcallVisibility,
};

/// The dead slots of a link, or why there are none.
pub struct Analysis {
    pub dead: Vec<DeadSlots>,
    pub off: Option<String>,
    pub slots: u32,
    pub functions: u32,
    pub instructions: u64,
}

/// Which slots of one type id are read: every one, or these offsets.
#[derive(Default)]
struct Reads {
    any: bool,
    offsets: HashSet<u64>,
}

/// A vtable whose slots may be dead.
struct Candidate<'a> {
    key: SymKey<'a>,
    vtable: VtableId,
    node: Option<RefNode>,
    /// (address point, number of the type id among the reads) for each of
    /// its type ids some code reads.
    read_types: Vec<(u64, usize)>,
    /// For each slot of the vtable, the graph nodes of the names it holds
    /// (its symbol, its function): the references its entry makes.
    slot_refs: Vec<[Option<RefNode>; 2]>,
}

/// Rounds of the fixpoint at most (each round only removes more).
const MAX_ROUNDS: usize = 16;

/// Finds the dead slots of the link under `plan` (its decisions made).
pub fn analyze<'a>(link: &Hierarchy<'a>, policy: &Policy, plan: &'a Plan, calls: &ProgramCalls<'a>) -> Analysis {
    let none = |why: String| Analysis { dead: Vec::new(), off: Some(why), slots: 0, functions: 0, instructions: 0 };
    if let Some(why) = link_blocker(link, policy) {
        return none(why);
    }
    let open: HashSet<&TypeId> = plan.open_type_ids.iter().map(|o| &o.type_id).collect();
    // Code loaded with the output (a program using the shared library, a
    // plugin calling what the executable exports) may call virtual
    // functions of any object it is handed, hidden class or not: then only
    // classes no other module can name qualify, every type id of theirs
    // local to one module (anonymous namespaces).
    let facts = &policy.facts;
    // A name exported counts unless it is the C++ runtime's (GNU ld and
    // gold export the program's copy of a template instantiation
    // libstdc++.so also defines, `std::basic_stringbuf<char>::
    // ~basic_stringbuf()`, for the runtime's own calls) or
    // AddressSanitizer's descriptor of a global, which its runtime's
    // dynamic list exports ([`sanitizer_metadata`]).
    let program = |n: &String| !runtime_symbol(n) && !sanitizer_metadata(n);
    let exports = facts.shared
        || facts.export_dynamic
        || match &facts.exported {
            // Exported by name (a dynamic list, `--export-dynamic-symbol`):
            // the names wpd-ld's link model lists.
            Some(exported) if facts.partial_export => exported.iter().any(program),
            None => facts.partial_export,
            // The plugin learns of dynamic exports from the resolutions
            // only: a name exported that nothing outside the bitcode
            // references.
            Some(exported) => exported
                .iter()
                .any(|n| program(n) && facts.external_refs.as_ref().is_some_and(|refs| !refs.contains(n))),
        };
    // A library the program loads itself (`dlopen`) is no input of the
    // link: it may call virtual functions of the objects the program hands
    // it (a plugin given the host's interface), exported or not.
    let loader = loads_code(link, policy);
    let exports = exports || loader.is_some();
    let candidates: Vec<_> = link
        .vtables
        .iter()
        .filter(|(key, r)| {
            let vt = link.vtable(*r);
            link.is_live(*key)
                && !vt.slots.is_empty()
                && vt.slots.iter().all(|s| s.relative_to.is_none())
                && policy.effective_visibility(vt) != VcallVisibility::Public
                && vt.type_ids.iter().all(|t| !open.contains(&t.type_id))
                && (!exports || vt.type_ids.iter().all(|t| t.type_id.is_module_local()))
        })
        .copied()
        .collect();
    if candidates.is_empty() {
        return none(if let Some(loader) = loader {
            format!(
                "{loader}: a library it loads may call virtual functions of the objects it is handed, and no vtable is local to one module"
            )
        } else if exports {
            "the output exports symbols (-shared, --export-dynamic, a dynamic list): code loaded with it may call virtual functions of the objects it is handed, and no vtable is local to one module".into()
        } else {
            "no vtable whose every reader is known (each type id closed, vcall visibility not public)".into()
        });
    }
    let graph = &link.graph;
    let named = rewritten_refs(link, plan, calls);
    let mut skip: HashSet<(RefNode, RefNode)> = HashSet::default();
    let mut live = graph.live_without(&skip, &named);
    // The reads below are those of code of the program only
    // ([`ProgramCalls`]): sound while the rewrites' references make nothing
    // live that was not (their names are functions and vtables of live
    // vtables). Checked, not assumed: otherwise no slot is dead.
    if !link.live().includes(&live) {
        return none("internal: the plan's rewrites name code the link found dead".into());
    }
    let all_reads = ReadSites::collect(link, policy, plan, calls);
    // Each candidate's graph node and the address points of its type ids
    // that code reads (with their numbers among the reads), found once.
    let candidates: Vec<Candidate<'_>> = candidates
        .into_par_iter()
        .map(|(key, vtable)| {
            let vt = link.vtable(vtable);
            let node = |name: Option<&str>| name.and_then(|n| graph.get(link.key(vtable.module, n)));
            Candidate {
                key,
                vtable,
                node: graph.get(key),
                read_types: vt
                    .type_ids
                    .iter()
                    .filter_map(|t| all_reads.type_no(&t.type_id).map(|n| (t.offset, n)))
                    .collect(),
                slot_refs: vt.slots.iter().map(|s| [node(s.symbol.as_deref()), node(s.function.as_deref())]).collect(),
            }
        })
        .collect();
    let mut dead: BTreeMap<(SymKey<'_>, VtableId), Vec<u64>> = BTreeMap::new();
    for _ in 0..MAX_ROUNDS {
        let (reads, called_as, direct) = all_reads.of(&live);
        dead.clear();
        // Each candidate on its own (on the pool's threads), then put
        // together in order.
        let found: Vec<Vec<u64>> = candidates
            .par_iter()
            .map(|c| {
                if !c.node.is_some_and(|n| live.has(n)) {
                    return Vec::new();
                }
                let vt = link.vtable(c.vtable);
                let direct = direct.get(&c.key);
                vt.slots
                    .iter()
                    .filter(|s| s.kind == SlotKind::Function)
                    .filter(|s| !member_pointer_target(link, c.vtable.module, s.function.as_deref(), &called_as))
                    .filter(|s| direct.is_none_or(|d| !d.any && !d.offsets.contains(&s.offset)))
                    .filter(|s| {
                        !c.read_types.iter().any(|&(point, n)| {
                            s.offset >= point && (reads[n].any || reads[n].offsets.contains(&(s.offset - point)))
                        })
                    })
                    .map(|s| s.offset)
                    .collect()
            })
            .collect();
        for (c, offsets) in candidates.iter().zip(found) {
            if !offsets.is_empty() {
                dead.insert((c.key, c.vtable), offsets);
            }
        }
        // A vtable's reference to a function survives while one of its
        // live slots (or any entry that is not a dead slot) names it. (A
        // name of the vtable's module is one graph node: the same node, the
        // same name.)
        let mut next: HashSet<(RefNode, RefNode)> = HashSet::default();
        for c in &candidates {
            let (Some(from), Some(offsets)) = (c.node, dead.get(&(c.key, c.vtable))) else { continue };
            let slots = &link.vtable(c.vtable).slots;
            let is_dead = |i: usize| offsets.binary_search(&slots[i].offset).is_ok();
            let named = |to: RefNode| (0..slots.len()).any(|j| !is_dead(j) && c.slot_refs[j].contains(&Some(to)));
            for (i, refs) in c.slot_refs.iter().enumerate() {
                if is_dead(i) {
                    next.extend(refs.iter().flatten().filter(|&&to| !named(to)).map(|&to| (from, to)));
                }
            }
        }
        if next == skip {
            break;
        }
        skip = next;
        live = graph.live_without(&skip, &named);
    }
    // What dead stripping drops: functions live before, dead now (found
    // module by module on the pool's threads, then counted once each in
    // module order).
    let dropped: Vec<Vec<(RefNode, u32)>> = link
        .summaries
        .par_iter()
        .enumerate()
        .map(|(m, s)| {
            let m = wpd_summary::ModuleIdx::new(m);
            s.globals
                .iter()
                .filter(|g| g.kind == GlobalKind::Function)
                .filter_map(|g| graph.get(link.key(m, &g.name)).map(|n| (n, g.instructions)))
                .filter(|&(n, _)| link.live().has(n) && !live.has(n))
                .collect()
        })
        .collect();
    let (mut functions, mut instructions) = (0u32, 0u64);
    let mut counted: HashSet<RefNode> = HashSet::default();
    for (n, size) in dropped.into_iter().flatten() {
        if counted.insert(n) {
            functions += 1;
            instructions += u64::from(size);
        }
    }
    let slots = dead.values().map(|o| o.len() as u32).sum();
    let mut list: Vec<DeadSlots> = dead
        .into_iter()
        .map(|((key, _), offsets)| DeadSlots { symbol: key.name.to_string(), module: key.module, offsets })
        .collect();
    list.sort_by(|a, b| (a.symbol.as_str(), a.module).cmp(&(b.symbol.as_str(), b.module)));
    let off = list.is_empty().then(|| "every slot of the closed vtables may be loaded".to_string());
    Analysis { dead: list, off, slots, functions, instructions }
}

/// What the plan's rewrites make each function name, which the summaries'
/// references do not show: a call site of a decided slot, rewritten, names
/// the slot's single-implementation, speculative or dispatch targets (a
/// dispatch calls a class's this-adjusting thunk directly, whose vtable
/// entry may then be dead) and the vtables its comparisons name. So the
/// references are (function holding the call, name): a target only dead
/// code calls dies with it. Promoted names are taken back to the local
/// symbol of their module.
fn rewritten_refs<'a>(link: &Hierarchy<'a>, plan: &'a Plan, calls: &ProgramCalls<'a>) -> RefEdges {
    let graph = &link.graph;
    let mut promoted: HashMap<&'a str, SymKey<'a>> = HashMap::default();
    for (m, s) in modules(link.summaries) {
        if let Some(pm) = plan.modules.get(m) {
            for p in pm.promotions.iter().chain(&pm.vtable_aliases) {
                if let Some(g) = s.globals.iter().find(|g| g.name == p.symbol) {
                    promoted.insert(p.promoted.as_str(), link.key(m, &g.name));
                }
            }
        }
    }
    let key = |name: &'a str| promoted.get(name).copied().unwrap_or(SymKey { module: None, name });
    // Slot by slot on the pool's threads: the names and the functions
    // holding the calls; then added in slot order.
    let slots: Vec<(&SlotCalls<'a>, &SlotDecision)> = decided_slots(calls, plan).collect();
    let edges: Vec<(Vec<RefNode>, Vec<RefNode>)> = slots
        .par_iter()
        .map(|&(slot, d)| {
            let mut names: Vec<SymKey<'a>> = Vec::new();
            names.extend(d.target.as_deref().map(key));
            names.extend(d.speculative.iter().map(|t| key(t)));
            for case in &d.closed_set {
                names.push(key(&case.target));
                names.extend(case.vtables.iter().map(|v| key(&v.symbol)));
            }
            names.extend(d.by_args.iter().filter_map(|a| a.member_symbol.as_deref()).map(key));
            // A name no summary defines or references has no body to keep.
            let to: Vec<RefNode> = names.into_iter().filter_map(|n| graph.get(n)).collect();
            if to.is_empty() {
                return (Vec::new(), to);
            }
            let mut from: Vec<RefNode> = slot.holders.clone();
            from.sort_unstable();
            from.dedup();
            (from, to)
        })
        .collect();
    let mut out = RefEdges::default();
    for (from, to) in edges {
        for f in from {
            out.entry(f).or_default().extend(&to);
        }
    }
    out
}

/// Each slot the program calls, with the plan's decision for it: the plan
/// decides the slots of [`ProgramCalls`] in the same order, one each.
fn decided_slots<'c, 'a>(
    calls: &'c ProgramCalls<'a>,
    plan: &'a Plan,
) -> impl Iterator<Item = (&'c SlotCalls<'a>, &'a SlotDecision)> {
    assert_eq!(calls.slots.len(), plan.decisions.len(), "one decision per slot the program calls");
    calls.slots.iter().zip(&plan.decisions).inspect(|(slot, d)| {
        debug_assert!(slot.offset == d.offset && *slot.type_id == d.type_id, "decisions in slot order");
    })
}

/// Why no slot of the link can be dead, if none can.
fn link_blocker(link: &Hierarchy<'_>, policy: &Policy) -> Option<String> {
    if !policy.dead_slots {
        return Some("--wpd-no-dead-slots".into());
    }
    let v = &policy.validation;
    if v.always {
        return Some("relocatable output (-r): the rest of the program is linked later".into());
    }
    if let Some(unknown) = &v.unknown {
        return Some(format!("the native side is not known: {unknown}"));
    }
    if let Some(file) = &v.native_cxx {
        return Some(format!("native C++ code in {file} may call virtual functions through vtables wpd cannot see"));
    }
    for (m, s) in modules(link.summaries) {
        let cxx = s.globals.iter().any(|g| g.name.starts_with("_Z") || g.refs.iter().any(|r| r.starts_with("_Z")));
        if cxx && !s.slot_reads.whole_program_vtables {
            return Some(format!(
                "{} was built without -fwhole-program-vtables: its virtual calls read slots without type tests",
                s.module.name
            ));
        }
        let untyped = |r: &&UntestedRead| r.signature.is_none() && link.in_program(m, &r.function);
        if let Some(r) = s.slot_reads.untested.iter().find(untyped) {
            return Some(format!(
                "{} in {} loads a slot through a pointer to a virtual member function and does not only call it",
                r.function, s.module.name
            ));
        }
    }
    None
}

/// Where code of the program calls (or takes the address of) a function
/// that loads a library at run time ([`CODE_LOADERS`]): `F in M calls
/// dlopen`, or a native object of the link that does. The reference graph
/// answers whether live code names one; the summaries are searched for
/// which function only then.
fn loads_code(link: &Hierarchy<'_>, policy: &Policy) -> Option<String> {
    let Some(&loader) = CODE_LOADERS.iter().find(|&&name| link.is_live(SymKey { module: None, name })) else {
        return policy.validation.native_loader.clone();
    };
    let caller = modules(link.summaries).find_map(|(m, s)| {
        s.globals
            .iter()
            .find(|g| link.is_live(link.key(m, &g.name)) && g.refs.iter().any(|r| r == loader))
            .map(|g| format!("{} in {}", g.name, s.module.name))
    });
    Some(format!("{} calls {loader}", caller.as_deref().unwrap_or("the program")))
}

/// Whether a call through a pointer to a virtual member function, called
/// as one of `called_as`, may reach the slot holding `function` (of module
/// `m`'s vtable): its signature is one of them, or is not known.
fn member_pointer_target(
    link: &Hierarchy<'_>,
    m: wpd_summary::ModuleIdx,
    function: Option<&str>,
    called_as: &HashSet<&Signature>,
) -> bool {
    if called_as.is_empty() {
        return false;
    }
    let Some(f) = function else { return true };
    link.bitcode_facts(link.key(m, f)).is_none_or(|facts| called_as.contains(&facts.signature()))
}

/// Every read of a slot the summaries record, each with the function
/// holding it (in the copy the link keeps; the others are never code of
/// the program), gathered once: the rounds of the fixpoint only ask which
/// holders are still live.
/// What a load through a tested pointer reads: a type id, by its number in
/// [`ReadSites::type_nos`], and an offset (`None`: any).
type TypeRead = (usize, Option<u64>);

struct ReadSites<'a> {
    /// Call sites that load their slot under the plan, and other loads
    /// through a tested pointer, by what they read, with the functions
    /// holding them. A round asks only whether one holder is live.
    tested: Vec<(TypeRead, Vec<RefNode>)>,
    /// The type ids read, numbered.
    type_nos: HashMap<&'a TypeId, usize>,
    /// Calls through pointers to virtual member functions, by the
    /// signature they call.
    untested: Vec<(RefNode, &'a Signature)>,
    /// Loads straight from a vtable's constant address (by vtable symbol).
    direct: Vec<(RefNode, SymKey<'a>, Option<u64>)>,
}

/// What the reads of the live code come to: by type id, the signatures
/// member-function-pointer calls call, and by vtable symbol.
type LiveReads<'a> = (Vec<Reads>, HashSet<&'a Signature>, HashMap<SymKey<'a>, Reads>);

impl<'a> ReadSites<'a> {
    fn collect(link: &Hierarchy<'a>, policy: &Policy, plan: &'a Plan, calls: &ProgramCalls<'a>) -> ReadSites<'a> {
        let mut type_nos: HashMap<&'a TypeId, usize> = HashMap::default();
        let mut number = |t: &'a TypeId| {
            let next = type_nos.len();
            *type_nos.entry(t).or_insert(next)
        };
        let mut groups: HashMap<TypeRead, Vec<RefNode>> = HashMap::default();
        let mut add = |read: TypeRead, h: RefNode| {
            let holders = groups.entry(read).or_default();
            // A function's reads of one slot are often consecutive.
            if holders.last() != Some(&h) {
                holders.push(h);
            }
        };
        // The program's calls that still load their slot under the plan
        // (found slot by slot on the pool's threads, added in slot order).
        let slots: Vec<(&SlotCalls<'a>, &SlotDecision)> = decided_slots(calls, plan).collect();
        let loading: Vec<Vec<RefNode>> = slots
            .par_iter()
            .map(|&(slot, d)| {
                let mut holders: Vec<RefNode> = Vec::new();
                for (c, &h) in slot.sites.iter().zip(&slot.holders) {
                    if Outcome::may_load_slot_under(Some(d), c, policy) && holders.last() != Some(&h) {
                        holders.push(h);
                    }
                }
                holders
            })
            .collect();
        for ((slot, _), holders) in slots.into_iter().zip(loading) {
            let read = (number(slot.type_id), Some(slot.offset));
            for h in holders {
                add(read, h);
            }
        }
        for &(h, t) in &calls.untargeted {
            add((number(t), None), h);
        }
        // The other reads, of code of the program only (as the calls'): a
        // function the link found dead never comes back to life here.
        let (mut untested, mut direct) = (Vec::new(), Vec::new());
        for (m, s) in modules(link.summaries) {
            let mut holder = link.program_nodes(m);
            for r in &s.slot_reads.untested {
                if let (Some(sig), Some(h)) = (&r.signature, holder(&r.function)) {
                    untested.push((h, sig));
                }
            }
            for read in &s.slot_reads.tested {
                if let Some(h) = holder(&read.function) {
                    add((number(&read.type_id), read.offset), h);
                }
            }
            for read in &s.slot_reads.direct {
                if let Some(h) = holder(&read.function) {
                    direct.push((h, link.key(m, &read.vtable), read.offset));
                }
            }
        }
        // (A round's result is a union: the groups' order does not matter.)
        let tested = groups.into_iter().collect();
        ReadSites { tested, type_nos, untested, direct }
    }

    /// The number of type id `t` among those read, if any code reads it.
    fn type_no(&self, t: &TypeId) -> Option<usize> {
        self.type_nos.get(t).copied()
    }

    /// The reads of the code `live` keeps.
    fn of(&self, live: &Live) -> LiveReads<'a> {
        fn add(r: &mut Reads, offset: Option<u64>) {
            match offset {
                Some(o) => {
                    r.offsets.insert(o);
                }
                None => r.any = true,
            }
        }
        let mut by_type: Vec<Reads> = (0..self.type_nos.len()).map(|_| Reads::default()).collect();
        for &((t, offset), ref holders) in &self.tested {
            if holders.iter().any(|&h| live.has(h)) {
                add(&mut by_type[t], offset);
            }
        }
        let called_as = self.untested.iter().filter(|(h, _)| live.has(*h)).map(|&(_, sig)| sig).collect();
        let mut by_vtable: HashMap<SymKey<'a>, Reads> = HashMap::default();
        for &(h, v, offset) in &self.direct {
            if live.has(h) {
                add(by_vtable.entry(v).or_default(), offset);
            }
        }
        (by_type, called_as, by_vtable)
    }
}
