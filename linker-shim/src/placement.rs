//! Where the link's regular LTO object may stand. A split LTO unit the plan
//! leaves alone is kept in two: its thin part compiled where the unit stood,
//! its regular part (the vtables) either compiled with it, by its backend
//! (`wpd::backends::thinlto::compile`), or linked with the other units' regular parts
//! into LLVM's one regular LTO module, as lld's LTO links them. That
//! module's object stands in one place, so moving a unit's vtables there
//! must not change what the real linker does.
//!
//! It cannot when no archive member or `--start-lib` object is waiting to
//! be extracted before that place: the object's references then extract
//! nothing earlier than the unit's own would have (GNU ld and gold look at
//! archives only at their position, lld extracts a lazy member when a
//! reference meets it), and its definitions only meet objects and shared
//! libraries, which every linker loads whatever is defined. So the units
//! that qualify are the plain bitcode files of the command line's first run
//! of plain files (objects and bitcode, nothing else between them), when
//! nothing before that run is an archive, a `--start-lib` object, a library
//! searched with `-l` that is not a shared library, or a linker script; the
//! object goes right before the first of them (`thinlto::RegularObject`).
//! Every other split unit's vtables are compiled with its thin part, and
//! so are all of them in a link that wraps a symbol (`--wrap`).

use std::collections::HashSet;
use wpd_link::resolve::InputKind;
use wpd_link::{InputId, Item, LinkLine, LinkModel};

/// The inputs whose vtables may go to the link's regular LTO object.
pub fn regular_lto_inputs(line: &LinkLine, model: &LinkModel) -> HashSet<InputId> {
    // GNU ld, gold and mold wrap only the references of other objects: a
    // vtable's reference to a `--wrap`ped function its own unit defines
    // reaches the function, not `__wrap_`, and must stay in the object
    // that defines it.
    if !model.wraps.is_empty() {
        return HashSet::new();
    }
    let opened = model.inputs_by_item();
    let mut run = HashSet::new();
    let mut started = false;
    for (index, item) in line.items.iter().enumerate() {
        let input = opened.get(&index).copied();
        let kind = input.map(|i| &model.input(i).kind);
        // A positional object or bitcode file. (`--start-lib` is neither
        // plain nor harmless, so no file is ever looked at inside one.)
        if matches!(item, Item::File { .. }) && matches!(kind, Some(InputKind::Object | InputKind::Bitcode)) {
            started = true;
            if let (Some(i), Some(InputKind::Bitcode)) = (input, kind) {
                run.insert(i);
            }
            continue;
        }
        if started {
            break;
        }
        // Before the run: only what cannot hold a member waiting to be
        // extracted (a shared library, an input not found).
        let harmless = matches!(item, Item::File { .. } | Item::Library { .. })
            && matches!(kind, None | Some(InputKind::Shared | InputKind::Object));
        if !harmless {
            return HashSet::new();
        }
    }
    run
}
