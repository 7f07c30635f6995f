//! Which function bodies the summarizer reads. Most of a module's bytes are
//! bodies, and the summary needs few of them: those holding type tests
//! (call sites), those vtable slots name (facts), and those clang's
//! per-module summary index does not describe (references). The index
//! gives every other function's references, as LLVM's own thin link takes
//! them for liveness.
//!
//! A part is read whole when the index cannot be trusted to point at every
//! body with a call site:
//! - it has no index (bitcode not written by clang's ThinLTO or LTO
//!   pipeline);
//! - it has an ifunc (the index records no call to one).
//!
//! The index records only type tests of ids that are strings. A vtable of
//! a class with internal linkage (in an anonymous namespace, in a module
//! built without split LTO units) carries a distinct metadata node instead,
//! and the calls it can serve are the ones wpd devirtualizes without any
//! visibility flag: every body that makes an indirect call is read too
//! ([`read_indirect`]). Every virtual call left indirect is one; a test
//! whose calls are all gone only feeds assumptions and is no call site. A
//! call through a pointer to a virtual member function is one too, and
//! reads a vtable slot without any type test.

use crate::error::Result;
use std::collections::{BTreeSet, HashMap};
use wpd_llvm::{LazyModule, Value};

/// Per function (by [`Value::id`]): what the index says of it.
pub(super) type Indexed<'m> = HashMap<usize, Described<'m>>;

/// What the index says of one function.
pub(super) struct Described<'m> {
    /// What it references and calls.
    pub refs: Vec<Value<'m>>,
    /// clang's count of its instructions.
    pub instructions: u32,
}

/// What one part's index says about its functions.
pub(super) struct Index<'m> {
    pub refs: Indexed<'m>,
    /// The functions making indirect calls.
    indirect: Vec<Value<'m>>,
}

/// Reads, in each part, the bodies with type tests and the bodies the index
/// does not describe; returns each part's index (`None`: every body of
/// that part was read).
pub(super) fn read_tested<'m>(parts: &'m [LazyModule<'_>]) -> Result<Vec<Option<Index<'m>>>> {
    let mut out = Vec::with_capacity(parts.len());
    for part in parts {
        let summaries = if part.ifuncs().next().is_some() { None } else { part.function_summaries()? };
        let Some(summaries) = summaries else {
            read_all(part)?;
            out.push(None);
            continue;
        };
        let mut index = Index { refs: HashMap::with_capacity(summaries.len()), indirect: Vec::new() };
        for s in summaries {
            if s.type_tests {
                part.materialize(s.function)?;
            }
            if s.indirect_calls {
                index.indirect.push(s.function);
            }
            index.refs.insert(s.function.id(), Described { refs: s.refs, instructions: s.instructions });
        }
        for f in part.functions() {
            if !index.refs.contains_key(&f.id()) {
                part.materialize(f)?;
            }
        }
        out.push(Some(index));
    }
    Ok(out)
}

/// Reads the bodies of a part that make indirect calls: in a part whose
/// vtables carry a type id with internal linkage, every virtual call left
/// indirect is one (see the module comment), and in every part, a call
/// through a pointer to a virtual member function loads its slot without
/// a type test ([`wpd_summary::SlotReads::untested`]).
pub(super) fn read_indirect(part: &LazyModule<'_>, index: Option<&Index<'_>>) -> Result<()> {
    match index {
        Some(index) => index.indirect.iter().try_for_each(|&f| part.materialize(f)),
        None => Ok(()),
    }
}

/// Reads every body of a part.
pub(super) fn read_all(part: &LazyModule<'_>) -> Result<()> {
    part.functions().try_for_each(|f| part.materialize(f))
}

/// Reads the bodies of the functions named in `names`, in every part.
pub(super) fn read_named(parts: &[LazyModule<'_>], names: &BTreeSet<&str>) -> Result<()> {
    if names.is_empty() {
        return Ok(());
    }
    for part in parts {
        for name in names {
            if let Some(f) = part.function(name) {
                part.materialize(f)?;
            }
        }
    }
    Ok(())
}
