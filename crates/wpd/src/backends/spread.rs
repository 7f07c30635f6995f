//! Prevailing copies go where the backends have least to do (docs/performance.md,
//! "Prevailing copies go where the backends have least to do").
//!
//! A linker keeps the first copy of a comdat group, so the first object on
//! the line that instantiates a header's templates and inline functions
//! holds the copy of every one of them that the output keeps. Under ThinLTO
//! the other copies become `available_externally` (optimized where they are
//! inlined, never compiled), and that first module's backend compiles them
//! all: on a program of 16 objects sharing their templates, one backend took
//! 104 ms and each of the others 56 ms, and the link waited for it.
//!
//! wpd's link model knows which groups the output may take from any of
//! several modules without changing what the link loads or binds
//! ([`wpd_link::MovableGroup`]). Where every member of such a group is an
//! ODR function (or an alias of one), in every module, its copies are
//! interchangeable: ThinLTO already inlines each module's own copy. The
//! thin link then places groups, the largest first, each in the module
//! with the least work so far (its own functions, plus the groups placed
//! there), staying with the linker's choice on a tie. Work is counted in
//! instructions (the summaries' counts): the same measure the backends are
//! started by. The result depends on the summaries and the model only, not
//! on thread counts.

use std::collections::{BTreeMap, HashSet};
use wpd_link::MovableGroup;
use wpd_link::lto::LtoSymbols;
use wpd_summary::{GlobalKind, Linkage, ModuleSummary};

/// What each backend costs beyond the instructions it compiles.
const PER_MODULE: u64 = 200;

/// Where the thin link takes movable groups from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Spread {
    /// Each member of a group placed elsewhere than the linker's first
    /// module, with the module (position among the bitcode) that holds it.
    pub moves: BTreeMap<String, usize>,
    /// What the report says of it.
    pub copies: PrevailingCopies,
}

/// Where the thin link took movable comdat groups from: the report's
/// `prevailing_copies`.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct PrevailingCopies {
    /// Groups whose copies are interchangeable, wherever they went.
    pub movable_groups: usize,
    /// The instructions of the functions of the moved groups.
    pub instructions_moved: u64,
    /// The groups taken from another module than the one the linker keeps
    /// first, by signature.
    pub moved: Vec<MovedCopy>,
}

/// One group of [`PrevailingCopies::moved`].
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct MovedCopy {
    pub group: String,
    /// The module whose copy the linker would keep, and the one compiled
    /// (the modules' names).
    pub from: String,
    pub to: String,
    /// Its functions' instructions.
    pub instructions: u64,
}

/// Places the model's movable `groups` (`summaries[k]` describes bitcode
/// module `k`, `symbols` the link's resolutions); `unfit` names a member
/// that must stay where the linker puts it (placed in a named section, or
/// also defined by the regular part of a split unit).
pub fn spread(
    groups: &[MovableGroup],
    summaries: &[ModuleSummary],
    symbols: &LtoSymbols<'_>,
    unfit: &dyn Fn(&str) -> bool,
) -> Spread {
    let mut out = Spread::default();
    if groups.is_empty() || summaries.len() != symbols.module_count() {
        return out;
    }
    // Each group that may go anywhere, with its weight.
    let mut placeable: Vec<(u64, &MovableGroup)> = groups
        .iter()
        .filter(|g| g.modules.iter().all(|&k| k < summaries.len()))
        .filter(|g| !g.members.iter().any(|m| unfit(m)))
        .filter_map(|g| Some((interchangeable(g, summaries)?, g)))
        .collect();
    out.copies.movable_groups = placeable.len();
    if placeable.is_empty() {
        return out;
    }
    let placed: HashSet<&str> = placeable.iter().flat_map(|(_, g)| g.members.iter().map(String::as_str)).collect();
    let mut load: Vec<u64> = summaries
        .iter()
        .enumerate()
        .map(|(k, s)| {
            let own: u64 = s
                .globals
                .iter()
                .filter(|g| g.kind == GlobalKind::Function && !placed.contains(g.name.as_str()))
                .filter(|g| compiled_here(g.linkage, || symbols.prevails_in(k, &g.name)))
                .map(|g| u64::from(g.instructions))
                .sum();
            PER_MODULE + own
        })
        .collect();
    // The largest first; ties by signature, so the order is total.
    placeable.sort_by(|(a, ga), (b, gb)| b.cmp(a).then_with(|| ga.signature.cmp(&gb.signature)));
    for (weight, g) in placeable {
        // The least loaded module; on a tie the earlier in the group, so
        // the linker's first module wins ties.
        let Some(&to) = g.modules.iter().min_by_key(|&&k| load[k]) else { continue };
        load[to] += weight;
        if to != g.modules[0] {
            out.copies.instructions_moved += weight;
            out.copies.moved.push(MovedCopy {
                group: g.signature.clone(),
                from: summaries[g.modules[0]].module.name.clone(),
                to: summaries[to].module.name.clone(),
                instructions: weight,
            });
            for m in &g.members {
                out.moves.insert(m.clone(), to);
            }
        }
    }
    out.copies.moved.sort_by(|a, b| a.group.cmp(&b.group));
    out
}

/// Whether a module compiles its definition of this linkage: a linkonce or
/// weak copy only where it prevails.
fn compiled_here(linkage: Linkage, prevails: impl FnOnce() -> bool) -> bool {
    match linkage {
        Linkage::AvailableExternally => false,
        Linkage::LinkonceAny | Linkage::LinkonceOdr | Linkage::WeakAny | Linkage::WeakOdr => prevails(),
        _ => true,
    }
}

/// The group's weight (its functions' instructions in the linker's first
/// module) when every member, in every module that defines the group, is
/// an ODR function or an alias of a member, and each function's copies
/// were compiled with the same flags (`GlobalRefs::flags`: an inline
/// function compiled with `-fexceptions` in one unit and `-fno-exceptions`
/// or `-mavx2` in another does not run alike); `None` otherwise.
fn interchangeable(g: &MovableGroup, summaries: &[ModuleSummary]) -> Option<u64> {
    let mut weight = None;
    let mut flags: Vec<Option<u64>> = vec![None; g.members.len()];
    for &k in &g.modules {
        let globals = &summaries[k].globals;
        let mut here = 0u64;
        for (m, first) in g.members.iter().zip(&mut flags) {
            let i = globals.binary_search_by(|x| x.name.as_str().cmp(m)).ok()?;
            let d = &globals[i];
            if !matches!(d.linkage, Linkage::LinkonceOdr | Linkage::WeakOdr) || *first.get_or_insert(d.flags) != d.flags
            {
                return None;
            }
            match d.kind {
                GlobalKind::Function => here += u64::from(d.instructions),
                GlobalKind::Alias
                    if d.refs.iter().all(|r| g.members.binary_search_by(|m| m.as_str().cmp(r)).is_ok()) => {}
                _ => return None,
            }
        }
        weight.get_or_insert(here);
    }
    weight.filter(|&w| w > 0)
}
