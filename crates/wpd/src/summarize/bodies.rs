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
//! - it has an ifunc (the index records no call to one);
//! - a vtable of the part has a type id with internal linkage (a class in
//!   an anonymous namespace): the index records no test of such an id (see
//!   [`read_all`]).

use std::collections::{BTreeSet, HashMap};
use wpd_llvm::{LazyModule, Value};

/// Per function (by [`Value::id`]): what the index says it references.
pub(super) type Indexed<'m> = HashMap<usize, Vec<Value<'m>>>;

/// Reads, in each part, the bodies with type tests and the bodies the index
/// does not describe; returns per part the references of the others
/// (`None`: every body of that part was read).
pub(super) fn read_tested<'m>(parts: &'m [LazyModule<'_>]) -> Result<Vec<Option<Indexed<'m>>>, String> {
    let mut out = Vec::with_capacity(parts.len());
    for part in parts {
        let summaries = if part.ifuncs().next().is_some() { None } else { part.function_summaries()? };
        let Some(summaries) = summaries else {
            read_part(part)?;
            out.push(None);
            continue;
        };
        let mut indexed: Indexed<'m> = HashMap::with_capacity(summaries.len());
        for s in summaries {
            if s.type_tests {
                part.materialize(s.function)?;
            }
            indexed.insert(s.function.id(), s.refs);
        }
        for f in part.functions() {
            if !indexed.contains_key(&f.id()) {
                part.materialize(f)?;
            }
        }
        out.push(Some(indexed));
    }
    Ok(out)
}

/// Reads every body of a part whose vtables carry a type id with internal
/// linkage (a distinct metadata node), once the vtables are scanned. Tests
/// of such ids are in no index (it only records ids that are strings), and
/// they are the calls wpd can devirtualize without any visibility flag.
/// Such a node is private to its part: a split LTO unit's thin part names
/// the ids it tests by strings, so only the part holding the vtable is
/// read whole. A part whose internal ids are only in tests needs nothing
/// more: no vtable anywhere can match those tests.
pub(super) fn read_all(part: &LazyModule<'_>) -> Result<(), String> {
    read_part(part)
}

/// Reads the bodies of the functions named in `names`, in every part.
pub(super) fn read_named(parts: &[LazyModule<'_>], names: &BTreeSet<&str>) -> Result<(), String> {
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

fn read_part(part: &LazyModule<'_>) -> Result<(), String> {
    part.functions().try_for_each(|f| part.materialize(f))
}
