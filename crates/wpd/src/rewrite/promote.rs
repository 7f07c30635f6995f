//! Promotion of local functions that devirtualized calls in other modules
//! now name (as ThinLTO promotes locals): renamed to the plan's unique name,
//! external linkage, hidden visibility. Also keeps the discardable copies
//! such calls name ([`keep`]).

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

/// Turns this module's `linkonce`/`linkonce_odr` definition of each symbol
/// in `keep` into `weak`/`weak_odr`, so that it is emitted even when nothing
/// in this module uses it any more: rewritten calls elsewhere name it.
pub fn keep(modules: &[Module<'_>], keep: &[String], input: &str) -> Result<()> {
    for name in keep {
        let found = modules
            .iter()
            .filter_map(|m| m.function(name).or_else(|| m.global(name)))
            .find(|g| !g.is_declaration() && matches!(g.linkage(), Linkage::LinkonceOdr | Linkage::LinkonceAny));
        let Some(g) = found else {
            return Err(Error::at(input, format!("plan keeps {name}, which this module does not define as linkonce")));
        };
        let weak = if g.linkage() == Linkage::LinkonceOdr { Linkage::WeakOdr } else { Linkage::WeakAny };
        g.set_linkage(weak);
    }
    Ok(())
}
