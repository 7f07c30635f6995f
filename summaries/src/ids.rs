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
        #[derive(Serialize, Deserialize, bincode::Encode, bincode::Decode, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
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
/// mention holds. A mention is one pointer (8 bytes: an `Arc` of a boxed
/// `str`, where an `Arc<str>` would be 16 and a `String` 24 plus a heap
/// copy); reading the text costs one more indirection. Ordered, hashed and
/// compared as the text.
///
/// A wpd file holds each distinct name once ([`NameTable`]), so decoding
/// one ([`crate::container::decode`]) gives every mention of a name the
/// same allocation; elsewhere a `Name` is made from a string like any
/// other value, and serialized as its text.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Name(Arc<Box<str>>);

impl Name {
    pub fn new(text: &str) -> Name {
        Name(Arc::new(Box::from(text)))
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
        Name(Arc::new(s.into_boxed_str()))
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
        self == &**other.0
    }
}

impl PartialEq<Name> for &str {
    fn eq(&self, other: &Name) -> bool {
        *self == &**other.0
    }
}

impl PartialEq<Name> for String {
    fn eq(&self, other: &Name) -> bool {
        **self == **other.0
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self.0, f)
    }
}

/// Through serde (JSON: `wpd dump`, reports) a name is its text.
impl Serialize for Name {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Name {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Name, D::Error> {
        String::deserialize(d).map(Name::from)
    }
}

/// In a file (inside [`NameTable::writing`]) a name is its index in the
/// table; anywhere else its text.
impl bincode::Encode for Name {
    fn encode<E: bincode::enc::Encoder>(&self, e: &mut E) -> Result<(), bincode::error::EncodeError> {
        match NameTable::index_of(self) {
            Some(index) => index.encode(e),
            None => self.as_str().encode(e),
        }
    }
}

/// In a file a name is its index in the file's table, which the decoder
/// carries as its context ([`FileNames`]).
impl bincode::Decode<FileNames> for Name {
    fn decode<D: bincode::de::Decoder<Context = FileNames>>(d: &mut D) -> Result<Name, bincode::error::DecodeError> {
        let index = crate::fast_decode::u32(d)?;
        let names = &d.context().0;
        names.get(index as usize).cloned().ok_or_else(|| {
            bincode::error::DecodeError::OtherString(format!(
                "name {index} is not in the file's table of {} names",
                names.len()
            ))
        })
    }
}

bincode::impl_borrow_decode_with_context!(Name, FileNames);

/// The table of names of the file being decoded: the context every type
/// holding a [`Name`] decodes with (`#[bincode(decode_context = ...)]`),
/// so a name is an index into it and nothing else.
pub struct FileNames(pub Vec<Name>);

/// How a wpd file ([`crate::container`], bincode) holds its names: each
/// distinct [`Name`] once, in a table ahead of the value, and its index in
/// that table at every mention. A summary names the same functions and
/// type ids at each of its call
/// sites, so the file is smaller, and reading it allocates and checks each
/// name once ([`FileNames`]). Outside [`NameTable::writing`], and through
/// serde (JSON), a name is its text.
pub struct NameTable;

/// A file being serialized: the names met so far, in first-use order, and
/// each one's index. Encoding has no context in bincode, so the table
/// lives in a thread-local while [`NameTable::writing`] runs.
struct Writing {
    index: FxHashMap<Name, u32>,
    names: Vec<Name>,
}

thread_local! {
    static TABLE: std::cell::RefCell<Option<Writing>> = const { std::cell::RefCell::new(None) };
}

impl NameTable {
    /// Runs `f` (which serializes) with names written as indices; returns
    /// its result and the table the indices refer to, in first-use order.
    /// What was there before is put back afterwards, also when `f` panics.
    pub fn writing<T>(f: impl FnOnce() -> T) -> (T, Vec<Name>) {
        struct Restore(Option<Writing>);
        impl Drop for Restore {
            fn drop(&mut self) {
                let outer = self.0.take();
                TABLE.with(|t| *t.borrow_mut() = outer);
            }
        }
        let ours = Writing { index: FxHashMap::default(), names: Vec::new() };
        let restore = Restore(TABLE.with(|t| t.borrow_mut().replace(ours)));
        let out = f();
        let ours = TABLE.with(|t| t.borrow_mut().take());
        drop(restore);
        (out, ours.map(|w| w.names).unwrap_or_default())
    }

    /// While writing: `name`'s index, added to the table if new.
    fn index_of(name: &Name) -> Option<u32> {
        TABLE.with(|t| {
            t.borrow_mut().as_mut().map(|Writing { index, names }| {
                *index.entry(name.clone()).or_insert_with(|| {
                    names.push(name.clone());
                    u32::try_from(names.len() - 1).expect("a file has fewer than 2^32 names")
                })
            })
        })
    }
}

/// A type id: the `!type` metadata string (`_ZTS4Base`), or the name the
/// summarizer gives a distinct node (`local.<n>.<hash prefix>`). Ordered,
/// hashed and compared as the string.
#[derive(
    Serialize, Deserialize, bincode::Encode, bincode::Decode, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default,
)]
#[bincode(decode_context = "crate::ids::FileNames")]
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

    /// Whether no module but one can name this type id: a distinct node
    /// the summarizer named (`local.<n>.<hash>`), or a class with internal
    /// linkage (an anonymous namespace) whose id LLVM's ThinLTO writer
    /// made a string unique to its module, `<n>.<32 hex digits of the
    /// module's id>` (`1.21576b91ab9b15712202e1b4a494877f`). No `!type`
    /// string clang writes for a class with linkage has that form.
    pub fn is_module_local(&self) -> bool {
        let s = self.as_str();
        if s.starts_with("local.") {
            return true;
        }
        s.split_once('.').is_some_and(|(n, hash)| {
            !n.is_empty()
                && n.bytes().all(|b| b.is_ascii_digit())
                && hash.len() == 32
                && hash.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        })
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
#[derive(Serialize, Deserialize, bincode::Encode, bincode::Decode, Clone, PartialEq, Eq)]
#[bincode(decode_context = "crate::ids::FileNames")]
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
    fn module_local_type_ids() {
        for local in
            ["local.0.61e5286711430aa7", "1.21576b91ab9b15712202e1b4a494877f", "12.0123456789abcdef0123456789abcdef"]
        {
            assert!(TypeId::from(local).is_module_local(), "{local}");
        }
        for named in [
            "_ZTS4Base",
            "_ZTSM4HostKFivE.virtual",
            "1.21576b91ab9b15712202e1b4a494877",
            "1.21576B91AB9B15712202E1B4A494877F",
            ".21576b91ab9b15712202e1b4a494877f",
            "x.21576b91ab9b15712202e1b4a494877f",
        ] {
            assert!(!TypeId::from(named).is_module_local(), "{named}");
        }
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
        impl<T: bincode::Encode> Enc for T {
            fn enc(&self, cfg: bincode::config::Configuration) -> Vec<u8> {
                bincode::encode_to_vec(self, cfg).unwrap()
            }
        }
    }
}
