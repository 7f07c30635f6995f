//! Typed indices and names (Cranelift's `EntityRef` style): a module's
//! position in the link, a vtable's position in its module's summary, and a
//! type id's name, each its own type so one is never passed for another.
//!
//! Every type here serializes exactly like the integer or string it wraps
//! (`#[serde(transparent)]`), so summaries and plans encode as they did
//! before the types existed; `Debug` prints the wrapped value too.

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use std::borrow::Borrow;
use std::fmt;
use std::ops::{Index, IndexMut};
use std::sync::Arc;

/// An index into a list: `new` and `index` are the only conversions from
/// and to `usize`, so the casts live here and not at every use.
macro_rules! entity_ref {
    ($(#[$doc:meta])* $name:ident, $what:literal) => {
        $(#[$doc])*
        #[derive(Serialize, Deserialize, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        #[serde(transparent)]
        pub struct $name(u32);

        impl $name {
            /// The index `index`; panics when it does not fit in 32 bits
            /// (the formats store 32-bit indices).
            pub fn new(index: usize) -> $name {
                $name(u32::try_from(index).expect(concat!($what, " index fits in 32 bits")))
            }

            /// The index as a `usize`, for indexing a slice.
            pub fn index(self) -> usize {
                self.0 as usize
            }

            /// The index as stored.
            pub fn as_u32(self) -> u32 {
                self.0
            }
        }

        impl From<u32> for $name {
            fn from(v: u32) -> $name {
                $name(v)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&self.0, f)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.0, f)
            }
        }
    };
}

entity_ref!(
    /// A module's position in the link's input order (the index of its
    /// summary among the link's, and of its entry in [`crate::Plan::modules`]).
    ModuleIdx,
    "module"
);

entity_ref!(
    /// A vtable's index within its module's summary
    /// ([`crate::ModuleSummary::vtables`]).
    VtableIdx,
    "vtable"
);

/// A name in a summary: a symbol, a type id, a source location. Shared,
/// not copied: a module names the same few functions and type ids at
/// every one of its call sites, and a large link holds a million call
/// sites, so each distinct name of a summary is one allocation that every
/// mention holds (an `Arc<str>`, 16 bytes, against 24 plus a heap copy
/// for a `String`). Ordered, hashed, compared and serialized as the text.
///
/// Decoding a summary ([`crate::container::decode`]) shares the names of
/// one file through [`Interner::scope`]; elsewhere a `Name` is made from a
/// string like any other value.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Name(Arc<str>);

impl Name {
    pub fn new(text: &str) -> Name {
        Name(Arc::from(text))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for Name {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl From<&str> for Name {
    fn from(s: &str) -> Name {
        Name::new(s)
    }
}

impl From<String> for Name {
    fn from(s: String) -> Name {
        Name(Arc::from(s))
    }
}

impl From<&String> for Name {
    fn from(s: &String) -> Name {
        Name::new(s)
    }
}

impl From<Name> for String {
    fn from(n: Name) -> String {
        n.0.to_string()
    }
}

impl PartialEq<Name> for str {
    fn eq(&self, other: &Name) -> bool {
        self == &*other.0
    }
}

impl PartialEq<Name> for &str {
    fn eq(&self, other: &Name) -> bool {
        *self == &*other.0
    }
}

impl PartialEq<Name> for String {
    fn eq(&self, other: &Name) -> bool {
        **self == *other.0
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl Serialize for Name {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Name {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Name, D::Error> {
        struct Visit;
        impl serde::de::Visitor<'_> for Visit {
            type Value = Name;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a name")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Name, E> {
                Interner::name(v.as_bytes()).ok_or_else(|| E::custom("a name is not UTF-8"))
            }
            fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<Name, E> {
                Interner::name(v).ok_or_else(|| E::custom("a name is not UTF-8"))
            }
        }
        // bincode stores a string as its bytes: read as bytes, a name is
        // checked for UTF-8 by the interner, once per distinct name, rather
        // than at every mention by the decoder.
        if d.is_human_readable() { d.deserialize_str(Visit) } else { d.deserialize_bytes(Visit) }
    }
}

/// The names of the file being decoded on this thread, so each distinct
/// name is allocated once ([`Name`]). Keyed by the bytes as stored, so a
/// name met again is neither copied nor checked for UTF-8 again.
pub struct Interner;

thread_local! {
    static NAMES: std::cell::RefCell<Option<FxHashMap<Box<[u8]>, Name>>> = const { std::cell::RefCell::new(None) };
}

impl Interner {
    /// Runs `f` with a fresh table of names on this thread: every [`Name`]
    /// decoded inside shares one allocation per distinct text. The table
    /// is dropped afterwards (the names live on in what `f` returned), and
    /// a scope opened inside another one keeps the outer table.
    pub fn scope<T>(f: impl FnOnce() -> T) -> T {
        let opened = NAMES.with(|n| {
            let mut n = n.borrow_mut();
            if n.is_some() {
                return false;
            }
            *n = Some(FxHashMap::default());
            true
        });
        struct Close(bool);
        impl Drop for Close {
            fn drop(&mut self) {
                if self.0 {
                    NAMES.with(|n| *n.borrow_mut() = None);
                }
            }
        }
        let _close = Close(opened);
        f()
    }

    /// The name stored as `bytes`: the one the open scope already has, or
    /// a new one; `None` when the bytes are not UTF-8.
    fn name(bytes: &[u8]) -> Option<Name> {
        NAMES.with(|n| match n.borrow_mut().as_mut() {
            None => std::str::from_utf8(bytes).ok().map(Name::new),
            Some(table) => match table.get(bytes) {
                Some(shared) => Some(shared.clone()),
                None => {
                    let name = Name::new(std::str::from_utf8(bytes).ok()?);
                    table.insert(bytes.into(), name.clone());
                    Some(name)
                }
            },
        })
    }
}

/// A type id: the `!type` metadata string (`_ZTS4Base`), or the name the
/// summarizer gives a distinct node (`local.<n>.<hash prefix>`). Ordered,
/// hashed and compared as the string.
#[derive(Serialize, Deserialize, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[serde(transparent)]
pub struct TypeId(Name);

impl TypeId {
    pub fn new(name: impl Into<Name>) -> TypeId {
        TypeId(name.into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0.into()
    }

    /// The id as a [`Name`] (shared, not copied).
    pub fn name(&self) -> &Name {
        &self.0
    }
}

impl From<String> for TypeId {
    fn from(s: String) -> TypeId {
        TypeId(s.into())
    }
}

impl From<&str> for TypeId {
    fn from(s: &str) -> TypeId {
        TypeId(s.into())
    }
}

impl From<Name> for TypeId {
    fn from(s: Name) -> TypeId {
        TypeId(s)
    }
}

impl From<TypeId> for String {
    fn from(t: TypeId) -> String {
        t.0.into()
    }
}

impl fmt::Debug for TypeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

/// The impls a text newtype shares with `str`: borrowing, comparing with
/// strings, printing; each through the type's `as_str`.
macro_rules! text_impls {
    ($name:ty) => {
        impl Borrow<str> for $name {
            fn borrow(&self) -> &str {
                self.as_str()
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                self.as_str()
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.as_str() == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.as_str() == *other
            }
        }

        impl PartialEq<String> for $name {
            fn eq(&self, other: &String) -> bool {
                self.as_str() == other.as_str()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

text_impls!(Name);
text_impls!(TypeId);

/// One `T` per module of the link, indexed by [`ModuleIdx`]; serialized as
/// the plain list.
#[derive(Serialize, Deserialize, Clone, PartialEq, Eq)]
#[serde(transparent)]
pub struct PerModule<T>(Vec<T>);

impl<T> Default for PerModule<T> {
    fn default() -> PerModule<T> {
        PerModule(Vec::new())
    }
}

impl<T> PerModule<T> {
    /// The values of modules `0..`, in order.
    pub fn from_vec(v: Vec<T>) -> PerModule<T> {
        PerModule(v)
    }

    /// `len` modules, each with `f(module)`.
    pub fn with_len(len: usize, mut f: impl FnMut(ModuleIdx) -> T) -> PerModule<T> {
        PerModule((0..len).map(|i| f(ModuleIdx::new(i))).collect())
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn get(&self, m: ModuleIdx) -> Option<&T> {
        self.0.get(m.index())
    }

    pub fn get_mut(&mut self, m: ModuleIdx) -> Option<&mut T> {
        self.0.get_mut(m.index())
    }

    /// Appends the value of the next module, returning its index.
    pub fn push(&mut self, v: T) -> ModuleIdx {
        self.0.push(v);
        ModuleIdx::new(self.0.len() - 1)
    }

    pub fn iter(&self) -> std::slice::Iter<'_, T> {
        self.0.iter()
    }

    pub fn iter_mut(&mut self) -> std::slice::IterMut<'_, T> {
        self.0.iter_mut()
    }

    /// Every module's index.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = ModuleIdx> + ExactSizeIterator + use<T> {
        (0..self.0.len()).map(ModuleIdx::new)
    }

    /// Every module's index with its value, in module order.
    pub fn iter_enumerated(&self) -> impl DoubleEndedIterator<Item = (ModuleIdx, &T)> + ExactSizeIterator {
        modules(&self.0)
    }

    pub fn as_slice(&self) -> &[T] {
        &self.0
    }

    pub fn into_vec(self) -> Vec<T> {
        self.0
    }
}

/// The elements of a per-module slice (`summaries[m]` describes module
/// `m`) with their module indices.
pub fn modules<T>(items: &[T]) -> impl DoubleEndedIterator<Item = (ModuleIdx, &T)> + ExactSizeIterator {
    items.iter().enumerate().map(|(i, v)| (ModuleIdx::new(i), v))
}

impl<T> Index<ModuleIdx> for PerModule<T> {
    type Output = T;
    fn index(&self, m: ModuleIdx) -> &T {
        &self.0[m.index()]
    }
}

impl<T> IndexMut<ModuleIdx> for PerModule<T> {
    fn index_mut(&mut self, m: ModuleIdx) -> &mut T {
        &mut self.0[m.index()]
    }
}

impl<T> From<Vec<T>> for PerModule<T> {
    fn from(v: Vec<T>) -> PerModule<T> {
        PerModule(v)
    }
}

impl<T> FromIterator<T> for PerModule<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> PerModule<T> {
        PerModule(iter.into_iter().collect())
    }
}

impl<T> IntoIterator for PerModule<T> {
    type Item = T;
    type IntoIter = std::vec::IntoIter<T>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a, T> IntoIterator for &'a PerModule<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl<'a, T> IntoIterator for &'a mut PerModule<T> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter_mut()
    }
}

impl<T: fmt::Debug> fmt::Debug for PerModule<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_encode_like_what_they_wrap() {
        let cfg = bincode::config::standard();
        let enc = |v: &dyn erased::Enc| v.enc(cfg);
        assert_eq!(enc(&ModuleIdx::new(300)), enc(&300u32));
        assert_eq!(enc(&Some(VtableIdx::new(7))), enc(&Some(7u32)));
        assert_eq!(enc(&TypeId::from("_ZTS4Base")), enc(&"_ZTS4Base".to_string()));
        assert_eq!(enc(&PerModule::from_vec(vec![1u32, 2])), enc(&vec![1u32, 2]));
        assert_eq!(serde_json::to_string(&TypeId::from("x")).unwrap(), "\"x\"");
        assert_eq!(serde_json::to_string(&Some(ModuleIdx::new(3))).unwrap(), "3");
        assert_eq!(format!("{:?} {}", TypeId::from("a"), ModuleIdx::new(4)), "\"a\" 4");
    }

    #[test]
    fn per_module_is_indexed_by_module() {
        let mut p: PerModule<&str> = PerModule::with_len(2, |_| "");
        let c = p.push("c");
        p[ModuleIdx::new(1)] = "b";
        assert_eq!(c, ModuleIdx::new(2));
        let v: Vec<(usize, &str)> = p.iter_enumerated().map(|(m, s)| (m.index(), *s)).collect();
        assert_eq!(v, [(0, ""), (1, "b"), (2, "c")]);
        assert!(p.get(ModuleIdx::new(3)).is_none());
    }

    mod erased {
        pub trait Enc {
            fn enc(&self, cfg: bincode::config::Configuration) -> Vec<u8>;
        }
        impl<T: serde::Serialize> Enc for T {
            fn enc(&self, cfg: bincode::config::Configuration) -> Vec<u8> {
                bincode::serde::encode_to_vec(self, cfg).unwrap()
            }
        }
    }
}
