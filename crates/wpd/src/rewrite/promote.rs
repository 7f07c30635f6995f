//! Promotion of local functions that devirtualized calls in other modules
//! now name (as ThinLTO promotes locals): renamed to the plan's unique name,
//! external linkage, hidden visibility.

use crate::error::{Error, Result};
use wpd_llvm::Module;
use wpd_summary::{Linkage, Promotion, Visibility};

/// Adds the hidden aliases other modules use to name local vtables.
pub fn aliases(modules: &[Module<'_>], aliases: &[Promotion], input: &str) -> Result<()> {
    for a in aliases {
        if !modules.iter().any(|m| m.add_hidden_alias(&a.symbol, &a.promoted)) {
            return Err(Error::at(input, format!("plan names vtable {}, which this module does not define", a.symbol)));
        }
    }
    Ok(())
}

/// Applies `promotions` to whichever part of the file defines each symbol.
pub fn apply(modules: &[Module<'_>], promotions: &[Promotion], input: &str) -> Result<()> {
    for p in promotions {
        let found = modules
            .iter()
            .filter_map(|m| m.function(&p.symbol))
            .find(|f| !f.is_declaration() && f.linkage().is_local());
        let Some(f) = found else {
            return Err(Error::at(input, format!("plan promotes {}, which this module does not define", p.symbol)));
        };
        f.set_name(&p.promoted);
        f.set_linkage(Linkage::External);
        f.set_visibility(Visibility::Hidden);
    }
    Ok(())
}
