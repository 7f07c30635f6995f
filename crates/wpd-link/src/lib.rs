//! wpd-link: what the link is, decided without LLVM.
//!
//! [`resolve`] answers what the real linker answers before anything is
//! summarized: which inputs and archive members it loads (in its order),
//! which definition of each symbol prevails, and which symbols code outside
//! the bitcode can reference. Bitcode symbol tables come from the caller
//! (`wpd-llvm` reads them with LLVM's irsymtab), so this crate and its tests
//! build without LLVM.

pub mod resolve;

pub use resolve::{
    Error, Flavor, InputId, InputState, Item, LinkLine, LinkModel, Loaded, LoadedKind, MemberId, OutsideRefs, resolve,
};
