//! Keeps the real linker's archive extraction as the original link had it
//! ([`wpd::final_link::extraction`]): every native object that replaces a
//! bitcode unit keeps the strong references its bitcode made (a member
//! extracted for one of them alone still loads, with its static
//! initializers), its new references are weak (a member the original link
//! extracted later still loads there), and a reference whose definition
//! is gone (dead code LLVM or wpd dropped) becomes a reference to a marker
//! the unit that kept the definition defines. Only for symbols a native
//! object of the final link defines, global or weak, and for lost
//! references an `--as-needed` library answers.

use std::collections::HashSet;
use wpd::backends::thinlto::Natives;
use wpd::error::Result;
use wpd::final_link::extraction::{AsNeeded, Unit, global_definitions, keep_extraction as keep};
use wpd_link::{LinkModel, LoadedKind};

/// Edits every native object of `natives` (one per loaded bitcode unit of
/// `model`, in load order); returns, per unit in that order, its edited
/// object (`None`: as compiled).
pub fn keep_extraction(model: &LinkModel, natives: &Natives) -> Result<Vec<Option<Vec<u8>>>> {
    // Global definitions of the final link's other objects: the native
    // inputs' (as the model read them) and LLVM's regular LTO object's
    // (`keep` reads the units' own).
    let mut defined: HashSet<String> =
        model.loaded.iter().filter(|l| l.kind == LoadedKind::Object).flat_map(|l| l.defined.iter().cloned()).collect();
    if let Some(r) = &natives.regular {
        defined.extend(global_definitions(&r.object, "the regular LTO object")?);
    }
    let units: Vec<Unit<'_>> = model
        .bitcode()
        .zip(&natives.objects)
        .map(|(l, object)| Unit { name: &l.name, object, refs: &l.refs, prevailing: &l.prevailing })
        .collect();
    let as_needed = AsNeeded {
        answers: &|name| model.as_needed_refs.contains(name),
        retained_section: model.flavor == wpd_link::Flavor::Lld,
    };
    let edited = keep(&units, &|name| defined.contains(name), &as_needed)?;
    Ok(edited.into_iter().map(|e| e.map(|(bytes, _)| bytes)).collect())
}
