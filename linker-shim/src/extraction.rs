//! Keeps the real linker's archive extraction as the original link had it
//! ([`wpd::final_link::extraction`]): every native object that replaces a bitcode unit
//! keeps the strong references its bitcode made (a member extracted for
//! one of them alone still loads, with its static initializers), and its
//! new references are weak (a member the original link extracted later
//! still loads there). Only for symbols a native object of the final link
//! defines, global or weak.

use std::collections::HashSet;
use wpd::backends::thinlto::Natives;
use wpd::error::Result;
use wpd::final_link::extraction::{References, keep_references};
use wpd_link::{LinkModel, LoadedKind};

/// Edits every native object of `natives` (one per loaded bitcode unit of
/// `model`, in load order); returns, per unit in that order, its edited
/// object (`None`: as compiled).
pub fn keep_extraction(model: &LinkModel, natives: &Natives) -> Result<Vec<Option<Vec<u8>>>> {
    // Global definitions of the final link's objects: the native inputs'
    // (as the model read them) and the compiled objects'.
    let mut defined: HashSet<String> =
        model.loaded.iter().filter(|l| l.kind == LoadedKind::Object).flat_map(|l| l.defined.iter().cloned()).collect();
    let mut compiled: Vec<(&[u8], &str)> = Vec::new();
    for (l, object) in model.bitcode().zip(&natives.objects) {
        compiled.push((object, &l.name));
    }
    if let Some(r) = &natives.regular {
        compiled.push((&r.object, "the regular LTO object"));
    }
    for (object, name) in compiled {
        defined.extend(wpd::final_link::extraction::global_definitions(object, name)?);
    }
    let defined_in_link = |name: &str| defined.contains(name);
    let mut out = Vec::with_capacity(natives.objects.len());
    for (l, object) in model.bitcode().zip(&natives.objects) {
        let refs = References { bitcode: &l.refs, defined_in_link: &defined_in_link };
        let edited = keep_references(object, &refs, &l.name)?;
        out.push(edited.map(|(bytes, _)| bytes));
    }
    Ok(out)
}
