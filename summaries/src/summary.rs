//! The per-module summary: everything the thin link needs to know about one
//! bitcode module (or one split LTO unit), so it never has to read IR.
//!
//! Every list is sorted by the summarizer (see each field), so equal inputs
//! give byte-identical files. Files are bincode (the derived `Encode` and
//! `Decode`); JSON (`wpd dump`) is serde, where enums are snake_case
//! strings. The layout is plain (no skipped or internally tagged fields):
//! bincode is not self-describing.

use crate::expr::Expr;
use crate::ids::{FileNames, Name, TypeId};
use serde::{Deserialize, Serialize};

/// Version of the summary types; bump on any change below.
pub const SUMMARY_VERSION: u32 = 13;

/// One module's summary.
#[derive(Serialize, Deserialize, bincode::Encode, bincode::Decode, Debug, Clone, PartialEq, Eq)]
#[bincode(decode_context = "crate::ids::FileNames")]
pub struct ModuleSummary {
    /// Where the module came from.
    pub module: ModuleInfo,
    /// Every type id mentioned by a vtable or a call site, sorted by name.
    pub type_ids: Vec<TypeIdInfo>,
    /// Globals carrying `!type` metadata, sorted by symbol.
    pub vtables: Vec<Vtable>,
    /// Vtables (`_ZTV*` definitions) without `!type` metadata: their TU was
    /// built without `-fwhole-program-vtables`, so their classes are as
    /// invisible to the type-id index as native ones. Sorted.
    pub untyped_vtables: Vec<Name>,
    /// Virtual call sites, sorted by (function, position in the function).
    pub call_sites: Vec<CallSite>,
    /// Facts about functions that some vtable slot of this module points to
    /// and that this module defines, sorted by name.
    pub functions: Vec<FunctionFacts>,
    /// Every defined global value with what it references, sorted by name.
    pub globals: Vec<GlobalRefs>,
    /// `llvm.used`, `llvm.compiler.used`, `llvm.global_ctors`/`dtors`.
    pub roots: SpecialRoots,
    /// Reads of vtable slots besides the call sites' own: what the thin
    /// link needs to know that a slot no code loads is dead.
    pub slot_reads: SlotReads,
}

/// How a module's code may read vtable slots, besides the calls recorded
/// in `call_sites` (each of which loads its slot unless the plan rewrites
/// it). A slot is dead only when no read of any module can reach it.
#[derive(Serialize, Deserialize, bincode::Encode, bincode::Decode, Debug, Clone, PartialEq, Eq, Default)]
#[bincode(decode_context = "crate::ids::FileNames")]
pub struct SlotReads {
    /// Built with `-fwhole-program-vtables` (clang's "Virtual Function
    /// Elim" module flag is present). Without it, the module's virtual
    /// calls carry no type tests, and read slots wpd cannot see.
    pub whole_program_vtables: bool,
    /// Loads of a vtable slot without a type test: clang's load through a
    /// pointer to a virtual member function (a `!nosanitize` load at an
    /// offset the program computes), which may read any slot of any vtable
    /// whose function has the type it is called with. Sorted, deduplicated.
    pub untested: Vec<UntestedRead>,
    /// Loads from a tested vtable pointer that are not calls of the test's
    /// own records: the loaded function pointer is used other than by a
    /// call, the load is reached through a `phi` or `select`, or (offset
    /// `None`) the pointer is used in a way that may read any slot. Sorted,
    /// deduplicated.
    pub tested: Vec<SlotRead>,
    /// Loads straight from a vtable global at a constant address (the
    /// optimizer forwarded a vtable pointer the constructor stored): the
    /// entry at that byte of that vtable is read, whatever call sites say.
    /// Sorted, deduplicated.
    pub direct: Vec<VtableRead>,
}

/// A load of the entry at byte `offset` of vtable `vtable` (this module's,
/// for a local one; any entry when `offset` is `None`) in `function`.
#[derive(Serialize, Deserialize, bincode::Encode, bincode::Decode, Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
#[bincode(decode_context = "crate::ids::FileNames")]
pub struct VtableRead {
    pub function: Name,
    pub vtable: Name,
    pub offset: Option<u64>,
}

/// A slot load without a type test in `function`, whose loaded pointer
/// is called as `signature` (`None`: used otherwise, so any slot).
#[derive(Serialize, Deserialize, bincode::Encode, bincode::Decode, Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
#[bincode(decode_context = "crate::ids::FileNames")]
pub struct UntestedRead {
    pub function: Name,
    pub signature: Option<Signature>,
}

/// A function type as the summaries describe slot targets
/// ([`FunctionFacts`]): the return kind and width, and each parameter's
/// bit width (0 for a parameter that is not an integer). A call of a
/// pointer to member function calls only functions of its own type, so
/// only slots of functions with this signature.
#[derive(
    Serialize, Deserialize, bincode::Encode, bincode::Decode, Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash,
)]
#[bincode(decode_context = "crate::ids::FileNames")]
pub struct Signature {
    pub ret: RetKind,
    pub ret_width: u32,
    pub param_widths: Vec<u32>,
}

impl FunctionFacts {
    /// The function's signature, as a call through a pointer names it.
    pub fn signature(&self) -> Signature {
        Signature { ret: self.ret, ret_width: self.ret_width, param_widths: self.param_widths.clone() }
    }
}

/// A read of the slot at `offset` from the address point of any vtable
/// carrying `type_id` (every slot when `offset` is `None`).
#[derive(Serialize, Deserialize, bincode::Encode, bincode::Decode, Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
#[bincode(decode_context = "crate::ids::FileNames")]
pub struct SlotRead {
    pub function: Name,
    pub type_id: TypeId,
    pub offset: Option<u64>,
}

/// Identity of the module.
#[derive(Serialize, Deserialize, bincode::Encode, bincode::Decode, Debug, Clone, PartialEq, Eq)]
#[bincode(decode_context = "crate::ids::FileNames")]
pub struct ModuleInfo {
    /// Display name: the input path, or `archive.a(member.o)`.
    pub name: String,
    /// The file the bytes came from.
    pub path: String,
    /// Archive member name when the module is an archive member.
    pub member: Option<String>,
    /// xxh3-128 of the bitcode bytes, lower-case hex.
    pub hash: String,
    /// Target triple of the module.
    pub triple: String,
    /// Data layout string of the module.
    pub data_layout: String,
    /// Whether the file was a split LTO unit (two modules, summarized as one).
    pub split: bool,
    /// Whether clang, asked for ThinLTO, wrote one regular LTO module
    /// (module flags `ThinLTO` = 0 and `EnableSplitLTOUnit` = 1, nothing
    /// defined with external linkage): it found no external definition to
    /// name the split unit by, as in a file of static functions and static
    /// registrations. LLVM's own link compiles such a module in
    /// its regular LTO partition, which imports no function from ThinLTO
    /// modules; wpd's backends import only variables into it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub thin_fallback: bool,
}

/// A type id and whether it is module-local (an internal class).
#[derive(Serialize, Deserialize, bincode::Encode, bincode::Decode, Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
#[bincode(decode_context = "crate::ids::FileNames")]
pub struct TypeIdInfo {
    /// The id: the metadata string, or for a distinct metadata node a
    /// generated name `local.<n>.<module hash prefix>`.
    pub name: TypeId,
    /// True when the id was a distinct node (no other module can name it).
    pub local: bool,
}

/// LLVM linkage types.
#[derive(
    Serialize, Deserialize, bincode::Encode, bincode::Decode, Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash,
)]
#[bincode(decode_context = "crate::ids::FileNames")]
#[serde(rename_all = "snake_case")]
pub enum Linkage {
    External,
    AvailableExternally,
    LinkonceAny,
    LinkonceOdr,
    WeakAny,
    WeakOdr,
    Appending,
    Internal,
    Private,
    ExternalWeak,
    Common,
}

impl Linkage {
    /// Every variant, in declaration (encoding) order.
    pub const ALL: [Linkage; 11] = [
        Linkage::External,
        Linkage::AvailableExternally,
        Linkage::LinkonceAny,
        Linkage::LinkonceOdr,
        Linkage::WeakAny,
        Linkage::WeakOdr,
        Linkage::Appending,
        Linkage::Internal,
        Linkage::Private,
        Linkage::ExternalWeak,
        Linkage::Common,
    ];

    /// Local to the module (`internal` or `private`).
    pub fn is_local(self) -> bool {
        matches!(self, Linkage::Internal | Linkage::Private)
    }
    /// Another definition may replace this one at link or load time, so its
    /// body must not be assumed (LLVM's `isInterposable`).
    pub fn is_interposable(self) -> bool {
        matches!(self, Linkage::LinkonceAny | Linkage::WeakAny | Linkage::ExternalWeak | Linkage::Common)
    }
}

/// Symbol visibility.
#[derive(
    Serialize, Deserialize, bincode::Encode, bincode::Decode, Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash,
)]
#[bincode(decode_context = "crate::ids::FileNames")]
#[serde(rename_all = "snake_case")]
pub enum Visibility {
    Default,
    Hidden,
    Protected,
}

impl Visibility {
    /// Every variant, in declaration (encoding) order.
    pub const ALL: [Visibility; 3] = [Visibility::Default, Visibility::Hidden, Visibility::Protected];
}

/// `!vcall_visibility` of a vtable; absent metadata means `public`.
#[derive(
    Serialize, Deserialize, bincode::Encode, bincode::Decode, Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash,
)]
#[bincode(decode_context = "crate::ids::FileNames")]
#[serde(rename_all = "snake_case")]
pub enum VcallVisibility {
    Public,
    LinkageUnit,
    TranslationUnit,
}

/// A global with `!type` metadata (normally a vtable or vtable group).
#[derive(Serialize, Deserialize, bincode::Encode, bincode::Decode, Debug, Clone, PartialEq, Eq)]
#[bincode(decode_context = "crate::ids::FileNames")]
pub struct Vtable {
    pub symbol: Name,
    pub linkage: Linkage,
    pub visibility: Visibility,
    pub comdat: Option<Name>,
    /// Declared `constant`.
    pub constant: bool,
    /// `available_externally` (a copy; the definition is elsewhere).
    pub available_externally: bool,
    pub align: u64,
    /// Size of the initializer in bytes.
    pub size: u64,
    pub vcall_visibility: VcallVisibility,
    /// Every `!type` entry, sorted by (offset, type id).
    pub type_ids: Vec<TypeIdEntry>,
    /// Every pointer-sized slot of the initializer, by offset.
    pub slots: Vec<Slot>,
}

/// One `!type !{i64 offset, id}` attachment.
#[derive(Serialize, Deserialize, bincode::Encode, bincode::Decode, Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
#[bincode(decode_context = "crate::ids::FileNames")]
pub struct TypeIdEntry {
    /// Byte offset of the address point inside the global.
    pub offset: u64,
    pub type_id: TypeId,
}

/// What a pointer-sized vtable slot holds.
#[derive(
    Serialize, Deserialize, bincode::Encode, bincode::Decode, Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash,
)]
#[bincode(decode_context = "crate::ids::FileNames")]
#[serde(rename_all = "snake_case")]
pub enum SlotKind {
    /// Null pointer (or integer zero).
    Null,
    /// A function, possibly through aliases.
    Function,
    /// `__cxa_pure_virtual`: calling it is undefined behaviour.
    PureVirtual,
    /// Some other global (typeinfo, usually), plus an addend.
    Global,
    /// An integer (offset-to-top, virtual base offset).
    Int,
    /// A pointer that is none of the above (e.g. an undef or a non-global
    /// expression). Entries of a relative vtable that are not offsets to a
    /// global are not recorded at all.
    Other,
}

impl SlotKind {
    /// Every variant, in declaration (encoding) order.
    pub const ALL: [SlotKind; 6] =
        [SlotKind::Null, SlotKind::Function, SlotKind::PureVirtual, SlotKind::Global, SlotKind::Int, SlotKind::Other];
}

/// One slot of a vtable global: a pointer, or an entry of a relative
/// vtable (`-fexperimental-relative-c++-abi-vtables`: a 32-bit offset from
/// a place in the same global to the target).
#[derive(Serialize, Deserialize, bincode::Encode, Debug, Clone, PartialEq, Eq)]
pub struct Slot {
    /// Byte offset from the start of the global.
    pub offset: u64,
    pub kind: SlotKind,
    /// The symbol stored in the slot, as written (may be an alias). For a
    /// relative entry of a typeinfo, the typeinfo its proxy holds.
    pub symbol: Option<Name>,
    /// For `function` slots: the function after looking through aliases.
    pub function: Option<Name>,
    /// For `int` slots the value; for `global` slots the byte addend.
    pub value: i64,
    /// For an entry of a relative vtable: the byte offset in the global
    /// it is relative to (`symbol − (global + relative_to)`), which must be
    /// the address point a call loads it through. `None` for a pointer.
    pub relative_to: Option<u64>,
}

/// Decoded as [`CallSite`] is: a thin link decodes one per vtable entry.
impl bincode::Decode<FileNames> for Slot {
    fn decode<D: bincode::de::Decoder<Context = FileNames>>(d: &mut D) -> Result<Slot, bincode::error::DecodeError> {
        use crate::fast_decode as fast;
        Ok(Slot {
            offset: fast::u64(d)?,
            kind: fast::variant(d, &SlotKind::ALL)?,
            symbol: fast::option(d, Name::decode)?,
            function: fast::option(d, Name::decode)?,
            value: fast::i64(d)?,
            relative_to: fast::option(d, fast::u64)?,
        })
    }
}

bincode::impl_borrow_decode_with_context!(Slot, FileNames);

/// Which intrinsic tests the vtable pointer at a call site.
#[derive(
    Serialize, Deserialize, bincode::Encode, bincode::Decode, Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash,
)]
#[bincode(decode_context = "crate::ids::FileNames")]
#[serde(rename_all = "snake_case")]
pub enum TestKind {
    TypeTest,
    PublicTypeTest,
    TypeCheckedLoad,
}

impl TestKind {
    /// Every variant, in declaration (encoding) order.
    pub const ALL: [TestKind; 3] = [TestKind::TypeTest, TestKind::PublicTypeTest, TestKind::TypeCheckedLoad];
}

/// `call` or `invoke`.
#[derive(
    Serialize, Deserialize, bincode::Encode, bincode::Decode, Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash,
)]
#[bincode(decode_context = "crate::ids::FileNames")]
#[serde(rename_all = "snake_case")]
pub enum CallKind {
    Call,
    Invoke,
    /// A `musttail` call: it must stay the one call before its function's
    /// `ret` (clang's `[[clang::musttail]]`).
    MustTailCall,
}

impl CallKind {
    /// Every variant, in declaration (encoding) order.
    pub const ALL: [CallKind; 3] = [CallKind::Call, CallKind::Invoke, CallKind::MustTailCall];

    /// Whether the call may become several behind comparisons (a dispatch,
    /// a guard): not a `musttail` call, which LLVM cannot split (its
    /// promotion utilities refuse it), though its callee may be replaced
    /// or its result folded.
    pub fn may_branch(self) -> bool {
        self != CallKind::MustTailCall
    }
}

/// Kind of a return type.
#[derive(
    Serialize, Deserialize, bincode::Encode, bincode::Decode, Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash,
)]
#[bincode(decode_context = "crate::ids::FileNames")]
#[serde(rename_all = "snake_case")]
pub enum RetKind {
    Void,
    Int,
    Other,
}

impl RetKind {
    /// Every variant, in declaration (encoding) order.
    pub const ALL: [RetKind; 3] = [RetKind::Void, RetKind::Int, RetKind::Other];
}

/// An integer constant argument.
#[derive(
    Serialize, Deserialize, bincode::Encode, bincode::Decode, Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash,
)]
#[bincode(decode_context = "crate::ids::FileNames")]
pub struct ConstArg {
    /// Bit width of the integer type.
    pub width: u32,
    /// The value, zero-extended from `width` bits.
    pub value: u64,
}

/// One virtual call site: a type test (or checked load) and one indirect call
/// through a function pointer loaded at a constant offset from the tested
/// vtable pointer. A type test that guards no call still gets one record
/// (with `offset`, `call` and `const_args` absent) so the count of records
/// equals the count of tests whenever each test guards at most one call.
#[derive(Serialize, Deserialize, bincode::Encode, Debug, Clone, PartialEq, Eq)]
pub struct CallSite {
    /// The function containing the call.
    pub function: Name,
    /// Index of the type test among the tests of `function`, in program order.
    pub test_index: u32,
    pub type_id: TypeId,
    /// Byte offset of the slot from the address point.
    pub offset: Option<u64>,
    pub kind: TestKind,
    /// Whether the test result feeds `llvm.assume` (checked loads: unused
    /// or only feeding assumes). Other uses (CFI checks) block rewriting.
    pub assumed: bool,
    pub call: Option<CallKind>,
    /// All arguments after `this`, when every one is an integer constant.
    pub const_args: Option<Box<[ConstArg]>>,
    pub ret: RetKind,
    /// Bit width for `int` returns, else 0.
    pub ret_width: u32,
    /// `file:line:col` from `!dbg`, when present.
    pub location: Option<Name>,
    /// How many calls the same type test guards (this one included; 0 on
    /// the record of a test that guards none).
    pub calls_sharing_test: u32,
}

/// Decoded field by field in the order `bincode::Encode` writes them, each
/// small value through [`crate::fast_decode`]: a thin link decodes a
/// million call sites.
impl bincode::Decode<FileNames> for CallSite {
    fn decode<D: bincode::de::Decoder<Context = FileNames>>(
        d: &mut D,
    ) -> Result<CallSite, bincode::error::DecodeError> {
        use crate::fast_decode as fast;
        Ok(CallSite {
            function: Name::decode(d)?,
            test_index: fast::u32(d)?,
            type_id: TypeId::decode(d)?,
            offset: fast::option(d, fast::u64)?,
            kind: fast::variant(d, &TestKind::ALL)?,
            assumed: fast::bool(d)?,
            call: fast::option(d, |d| fast::variant(d, &CallKind::ALL))?,
            const_args: Option::<Box<[ConstArg]>>::decode(d)?,
            ret: fast::variant(d, &RetKind::ALL)?,
            ret_width: fast::u32(d)?,
            location: fast::option(d, Name::decode)?,
            calls_sharing_test: fast::u32(d)?,
        })
    }
}

bincode::impl_borrow_decode_with_context!(CallSite, FileNames);

/// Facts about a function that a vtable slot points to.
#[derive(Serialize, Deserialize, bincode::Encode, bincode::Decode, Debug, Clone, PartialEq, Eq)]
#[bincode(decode_context = "crate::ids::FileNames")]
pub struct FunctionFacts {
    pub name: Name,
    pub linkage: Linkage,
    pub visibility: Visibility,
    pub reads_memory: bool,
    pub writes_memory: bool,
    /// Parameter 0 (`this`) has uses in the body.
    pub uses_this: bool,
    pub ret: RetKind,
    pub ret_width: u32,
    /// Bit width of each parameter, 0 for non-integer parameters.
    pub param_widths: Vec<u32>,
    /// The result as an expression of the integer parameters, when the body
    /// is one straight-line block of supported, memory-free operations.
    pub expr: Option<Expr>,
    /// What the body does when it is entered (see [`Body`]).
    pub body: Body,
    pub noinline: bool,
    pub optnone: bool,
    pub cold: bool,
    pub noreturn: bool,
    /// LLVM calling convention number (0 = C).
    pub calling_conv: u32,
    /// Number of instructions in the body.
    pub instructions: u32,
    /// The ids an indirect call's value profile names this function by
    /// (MD5 hashes of its PGO names, plain name and global identifier),
    /// sorted; empty unless its module was built with a profile.
    pub profile_ids: Vec<u64>,
}

/// What a function body does on entry, for the rule that removes
/// never-callable functions from a slot's targets.
#[derive(
    Serialize, Deserialize, bincode::Encode, bincode::Decode, Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash,
)]
#[bincode(decode_context = "crate::ids::FileNames")]
#[serde(rename_all = "snake_case")]
pub enum Body {
    /// Anything else: the function has behaviour and is a target.
    Code,
    /// Nothing but `unreachable`: entering it is undefined behaviour, so it
    /// is never validly called.
    Unreachable,
    /// Only `llvm.trap` calls, then `unreachable`. A user's
    /// `__builtin_trap()` body compiles to this and traps when called, so it
    /// stays a target; only clang's deleting destructor of an abstract class
    /// (the same IR) is never callable, which the thin link recognizes by
    /// the function's name and its vtable.
    TrapOnly,
}

/// Kind of a global value.
#[derive(
    Serialize, Deserialize, bincode::Encode, bincode::Decode, Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash,
)]
#[bincode(decode_context = "crate::ids::FileNames")]
#[serde(rename_all = "snake_case")]
pub enum GlobalKind {
    Function,
    Variable,
    Alias,
    Ifunc,
}

impl GlobalKind {
    /// Every variant, in declaration (encoding) order.
    pub const ALL: [GlobalKind; 4] = [GlobalKind::Function, GlobalKind::Variable, GlobalKind::Alias, GlobalKind::Ifunc];
}

/// A defined global value and the global values it references (through
/// instructions, constant expressions and initializers). Liveness in the
/// thin link walks these edges; a missing edge would be a miscompile.
#[derive(Serialize, Deserialize, bincode::Encode, Debug, Clone, PartialEq, Eq)]
pub struct GlobalRefs {
    pub name: Name,
    pub kind: GlobalKind,
    pub linkage: Linkage,
    pub visibility: Visibility,
    /// Referenced global values by name, sorted and deduplicated.
    pub refs: Vec<Name>,
    /// A function's instructions (clang's summary count, or its body's
    /// when wpd read it); 0 for other kinds. What compiling it costs, for
    /// the thin link's choice of where a prevailing copy goes.
    pub instructions: u32,
    /// For an ODR function (`linkonce_odr`, `weak_odr`): a fingerprint of
    /// the attributes compile flags gave this copy (`-fno-exceptions`,
    /// `-ffast-math`, `-mavx2`, `-O0`, sanitizers); 0 for anything else.
    /// Copies of one inline function whose fingerprints differ were
    /// compiled with different flags and need not run alike, so the thin
    /// link keeps the copy the linker keeps (`wpd::backends::spread`).
    pub flags: u64,
}

/// Decoded as [`CallSite`] is: a thin link decodes one per global.
impl bincode::Decode<FileNames> for GlobalRefs {
    fn decode<D: bincode::de::Decoder<Context = FileNames>>(
        d: &mut D,
    ) -> Result<GlobalRefs, bincode::error::DecodeError> {
        use crate::fast_decode as fast;
        Ok(GlobalRefs {
            name: Name::decode(d)?,
            kind: fast::variant(d, &GlobalKind::ALL)?,
            linkage: fast::variant(d, &Linkage::ALL)?,
            visibility: fast::variant(d, &Visibility::ALL)?,
            refs: Vec::<Name>::decode(d)?,
            instructions: fast::u32(d)?,
            flags: fast::u64(d)?,
        })
    }
}

bincode::impl_borrow_decode_with_context!(GlobalRefs, FileNames);

/// Globals the module itself keeps alive.
#[derive(Serialize, Deserialize, bincode::Encode, bincode::Decode, Debug, Clone, PartialEq, Eq, Default)]
#[bincode(decode_context = "crate::ids::FileNames")]
pub struct SpecialRoots {
    pub used: Vec<Name>,
    pub compiler_used: Vec<Name>,
    pub global_ctors: Vec<Name>,
    pub global_dtors: Vec<Name>,
}

impl ModuleSummary {
    /// Canonical JSON for `wpd dump`: object keys sorted, lists as stored.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("summary types serialize to JSON")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast decoders (`fast_decode::variant`) read a variant's index
    /// as the position in its enum's `ALL`: that must be the index bincode
    /// writes, for every variant.
    #[test]
    fn every_variant_table_is_in_encoding_order() {
        fn check<T: bincode::Encode + bincode::Decode<FileNames> + std::fmt::Debug>(all: &[T]) {
            for (i, v) in all.iter().enumerate() {
                let bytes = bincode::encode_to_vec(v, bincode::config::standard()).unwrap();
                assert_eq!(bytes, [i as u8], "{v:?} is encoded as {bytes:?}, not as its place {i} in ALL");
            }
            // And ALL has every variant: the next index is none.
            let next = [all.len() as u8];
            let decoded: Result<(T, usize), _> =
                bincode::decode_from_slice_with_context(&next, bincode::config::standard(), FileNames(Vec::new()));
            assert!(decoded.is_err(), "variant {} exists but is not in ALL", all.len());
        }
        check(&TestKind::ALL);
        check(&CallKind::ALL);
        check(&RetKind::ALL);
        check(&SlotKind::ALL);
        check(&GlobalKind::ALL);
        check(&Linkage::ALL);
        check(&Visibility::ALL);
    }
}
