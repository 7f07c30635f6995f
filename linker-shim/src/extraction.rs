//! Keeps the real linker's archive extraction as the original link had it
//! ([`wpd::extraction`]): every native object that replaces a bitcode unit
//! keeps the strong references its bitcode made (a member extracted for
//! one of them alone still loads, with its static initializers), and its
//! new references are weak (a member the original link extracted later
//! still loads there). Only for symbols a native object of the final link
//! defines, global or weak.

use crate::inputs::Resolution;
use std::collections::HashSet;
use wpd::extraction::{References, keep_references};
use wpd::thinlto::Natives;
use wpd_link::LoadedKind;

/// One unit's edited native object and vtables object (`None`: as
/// compiled).
pub type Edited = (Option<Vec<u8>>, Option<Vec<u8>>);

/// Per loaded bitcode unit (in load order), its edited objects; and the
/// edits in all.
pub struct Kept {
    pub objects: Vec<Edited>,
    pub edits: wpd::extraction::Edits,
}

/// Edits every native object of `natives` (one per loaded bitcode unit of
/// `res`'s model, in load order).
pub fn keep_extraction(res: &Resolution<'_>, natives: &Natives) -> Result<Kept, String> {
    let model = &res.model;
    // Global definitions of the final link's objects: the native inputs'
    // (as the model read them) and the compiled objects'.
    let mut defined: HashSet<String> =
        model.loaded.iter().filter(|l| l.kind == LoadedKind::Object).flat_map(|l| l.defined.iter().cloned()).collect();
    let compiled =
        natives.objects.iter().chain(natives.beside.iter().flatten()).chain(natives.regular.iter().map(|r| &r.object));
    for object in compiled {
        defined.extend(wpd::extraction::global_definitions(object, "a compiled object").map_err(|e| e.to_string())?);
    }
    let defined_in_link = |name: &str| defined.contains(name);
    let mut out = Kept { objects: Vec::with_capacity(natives.objects.len()), edits: Default::default() };
    for (k, (l, object)) in model.bitcode().zip(&natives.objects).enumerate() {
        let input = model.input(l.input);
        let bytes = match l.member {
            Some(m) => res.source.member_bytes(&input.path, m.index()),
            None => res.source.bytes(&input.path),
        }
        .ok_or_else(|| format!("{}: input changed while linking", l.name))?;
        let symtab = wpd_llvm::read_bitcode_symtab(bytes).map_err(|e| format!("{}: {e}", l.name))?;
        let undefined: HashSet<&str> = symtab.symbols.iter().filter(|s| s.undefined).map(|s| s.name.as_str()).collect();
        let mut strong: Vec<&str> =
            symtab.symbols.iter().filter(|s| s.undefined && !s.weak).map(|s| s.name.as_str()).collect();
        strong.sort_unstable();
        strong.dedup();
        let refs = References { undefined: &undefined, strong: &strong, defined_in_link: &defined_in_link };
        let mut edit = |object: &[u8], restore: bool| -> Result<Option<Vec<u8>>, String> {
            let edited = keep_references(object, &refs, restore, &l.name).map_err(|e| e.to_string())?;
            Ok(edited.map(|(bytes, e)| {
                out.edits.weakened += e.weakened;
                out.edits.restored += e.restored;
                bytes
            }))
        };
        // The lost references go back into the unit's own object; its
        // vtables object (tied to it) is loaded with it.
        let thin = edit(object, true)?;
        let vtables = match natives.beside.get(k).and_then(|b| b.as_deref()) {
            Some(v) => edit(v, false)?,
            None => None,
        };
        out.objects.push((thin, vtables));
    }
    Ok(out)
}
