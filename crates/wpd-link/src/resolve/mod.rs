//! Resolution: the link as the real linker will make it, decided before
//! anything is summarized (docs/design.md, "Resolve").
//!
//! [`resolve`] takes the link line as data ([`LinkLine`]: inputs in order
//! with their `-Bstatic`/`--as-needed`/`--whole-archive` state, groups,
//! `--start-lib` sets, `-u`, `-e`, `--wrap`, `--defsym`, exports, and the
//! [`Flavor`] of the linker that will run) and a [`Source`] of files, and
//! returns a [`LinkModel`]: the loaded units in load order, the prevailing
//! definitions of each bitcode module, and the symbols referenced from
//! outside the bitcode. Only loaded bitcode is summarized, devirtualized and
//! compiled; a devirtualized call can then only name a function the link
//! already has, so it never makes the linker extract a member it would not
//! have extracted.
//!
//! Files by concern: `line.rs` (the link line), `source.rs` (reading files),
//! `elf.rs` (native symbol tables), `symbols.rs` (symbol tables), `search.rs`
//! (`-l` and script lookup), `script.rs` (`INPUT`/`GROUP`), `symtab.rs`
//! (combining definitions), `load.rs` (the linker's order, per flavor),
//! `model.rs` (the result).

mod elf;
pub mod exports;
mod line;
mod load;
mod model;
pub mod script;
mod search;
mod source;
mod symbols;
mod symtab;
#[cfg(test)]
mod tests;

pub use elf::fat_lto_bitcode;
pub(crate) use elf::needed;
pub use line::{Duplicates, Exports, Flavor, InputState, Item, LinkLine, StateChange, StateStack, Symbolic};
pub use load::expression_symbols;
pub use model::{
    Input, InputId, InputKind, LinkModel, Loaded, LoadedKind, Member, MemberId, MovableGroup, OutsideRefs, Refs,
};
pub use script::Script;
pub use source::{BitcodeReader, Content, DiskSource, FatLto, MemberContent, MemberKind, Source};
pub use symbols::{Comdat, Definition, Symbol, SymbolTable, Visibility};

pub use crate::error::Error;

/// Resolves the link line against the files of `source`.
pub fn resolve(line: &LinkLine, source: &mut dyn Source) -> Result<LinkModel, Error> {
    let mut loader = load::Loader::new(line, source);
    loader.open()?;
    loader.run();
    loader.check_duplicates()?;
    let native = loader.native_names();
    loader.exports(&native);
    Ok(loader.finish(native))
}

/// Shell-style glob match (`*`, `?`, `[...]`), as lld matches
/// `--undefined-glob` and `--export-dynamic-symbol` patterns.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    fn go(p: &[u8], t: &[u8]) -> bool {
        match p.first() {
            None => t.is_empty(),
            Some(b'*') => (0..=t.len()).any(|i| go(&p[1..], &t[i..])),
            Some(b'?') => !t.is_empty() && go(&p[1..], &t[1..]),
            Some(b'[') => {
                let Some(end) = p.iter().skip(2).position(|&c| c == b']').map(|e| e + 2) else {
                    return t.first() == Some(&b'[') && go(&p[1..], &t[1..]);
                };
                let Some(&c) = t.first() else { return false };
                let (neg, set) = match p[1] {
                    b'!' | b'^' => (true, &p[2..end]),
                    _ => (false, &p[1..end]),
                };
                let mut hit = false;
                let mut i = 0;
                while i < set.len() {
                    if i + 2 < set.len() && set[i + 1] == b'-' {
                        hit |= set[i] <= c && c <= set[i + 2];
                        i += 3;
                    } else {
                        hit |= set[i] == c;
                        i += 1;
                    }
                }
                hit != neg && go(&p[end + 1..], &t[1..])
            }
            Some(&c) => t.first() == Some(&c) && go(&p[1..], &t[1..]),
        }
    }
    go(pattern.as_bytes(), text.as_bytes())
}
