//! The thin-link plan (`.wpdp`): every devirtualization decision of one
//! link, read by every backend. One entry per vtable slot (type id, byte
//! offset) that some call site uses, with the resolution or the reason there
//! is none, plus the local symbols that backends must promote.

use crate::ids::{ModuleIdx, PerModule, TypeId};
use serde::{Deserialize, Serialize};

/// Version of the plan types; bump on any change below.
pub const PLAN_VERSION: u32 = 12;

/// The decisions of one link.
#[derive(Serialize, Deserialize, bincode::Encode, bincode::Decode, Debug, Clone, PartialEq, Eq, Default)]
#[bincode(decode_context = "crate::ids::FileNames")]
pub struct Plan {
    /// The link facts the decisions were made under.
    pub options: PlanOptions,
    /// The modules of the link, in input order.
    pub modules: PerModule<PlanModule>,
    /// One decision per (type id, offset) used by a call site, sorted.
    pub decisions: Vec<SlotDecision>,
    /// Vtables that grow bytes before or after them (virtual constant
    /// propagation), sorted by symbol; every module defining a copy rebuilds
    /// it from these exact bytes.
    pub layouts: Vec<VtableLayout>,
    /// Type ids treated as open (never devirtualized unguarded), with why.
    pub open_type_ids: Vec<OpenTypeId>,
    /// Vtable slots no code of the program can load once the plan is
    /// applied, sorted by (symbol, module): every module defining a copy
    /// of the vtable puts a trap stub there, so the functions only those
    /// slots named are dropped by ThinLTO's dead stripping.
    pub dead_slots: Vec<DeadSlots>,
    /// Why no slot of the link is dead, when dead-slot elimination is off
    /// for the whole link (`--wpd-no-dead-slots`, or a reader of slots wpd
    /// cannot see).
    pub dead_slots_off: Option<String>,
    /// Totals for reports.
    pub stats: PlanStats,
}

/// The dead slots of one vtable.
#[derive(Serialize, Deserialize, bincode::Encode, bincode::Decode, Debug, Clone, PartialEq, Eq)]
#[bincode(decode_context = "crate::ids::FileNames")]
pub struct DeadSlots {
    pub symbol: String,
    /// For a local vtable: the index of its module in [`Plan::modules`].
    pub module: Option<ModuleIdx>,
    /// Byte offsets of the dead entries in the vtable global (as the
    /// summary's slots), sorted.
    pub offsets: Vec<u64>,
}

/// A type id whose hierarchy may have members wpd cannot see.
#[derive(Serialize, Deserialize, bincode::Encode, bincode::Decode, Debug, Clone, PartialEq, Eq)]
#[bincode(decode_context = "crate::ids::FileNames")]
pub struct OpenTypeId {
    pub type_id: TypeId,
    pub reason: String,
}

/// What the thin link was told about the link.
#[derive(Serialize, Deserialize, bincode::Encode, bincode::Decode, Debug, Clone, PartialEq, Eq, Default)]
#[bincode(decode_context = "crate::ids::FileNames")]
pub struct PlanOptions {
    /// `--lto-whole-program-visibility` or gold's `whole-program-visibility`.
    pub whole_program_visibility: bool,
    /// Output is a shared library (`-shared`).
    pub shared: bool,
    /// `--export-dynamic` (`-E`), or a dynamic list.
    pub export_dynamic: bool,
    /// Whether open hierarchies were looked for on the native side.
    pub validated: bool,
    /// Most targets guarded per speculative call (0: off).
    pub speculate: u8,
    /// Most targets of a closed-set dispatch (0: off).
    pub closed_set: u8,
    /// Whether every reference from outside the bitcode was known; when not,
    /// every externally visible symbol was treated as a liveness root.
    pub external_refs_known: bool,
}

/// A module of the link.
#[derive(Serialize, Deserialize, bincode::Encode, bincode::Decode, Debug, Clone, PartialEq, Eq)]
#[bincode(decode_context = "crate::ids::FileNames")]
pub struct PlanModule {
    /// Display name (`a.o`, `lib.a(m.o)`).
    pub name: String,
    /// Content hash of the bitcode, as in its summary: backends find their
    /// module by it.
    pub hash: String,
    /// Local symbols this module must turn into hidden globals, because a
    /// rewritten call (possibly in another module) now names them.
    pub promotions: Vec<Promotion>,
    /// Local vtables another module compares against (unique return value):
    /// this module adds a hidden alias named `promoted` for `symbol`.
    pub vtable_aliases: Vec<Promotion>,
    /// Discardable (`linkonce`/`linkonce_odr`) definitions this module must
    /// keep (as `weak`/`weak_odr`), sorted: a rewritten call or comparison
    /// in some module now names them, and this module holds the first copy
    /// in the link. Without it, the module's optimizer may drop its
    /// unreferenced copy and leave the new reference undefined.
    pub keep: Vec<String>,
    /// Functions of this module with call sites whose code is not part of
    /// the program, sorted: nothing live reaches them, or another module's
    /// copy of them prevails (a `linkonce`/`weak` copy the linker discards).
    /// Their calls are still rewritten like every other, but reports do not
    /// count them: counts are of the program's call sites, whichever
    /// archive members a linker happens to load and whichever copy it keeps.
    pub outside_program: Vec<String>,
}

/// Bytes placed around one vtable global.
#[derive(Serialize, Deserialize, bincode::Encode, bincode::Decode, Debug, Clone, PartialEq, Eq)]
#[bincode(decode_context = "crate::ids::FileNames")]
pub struct VtableLayout {
    pub symbol: String,
    /// For a local vtable: the index of its module in [`Plan::modules`].
    pub module: Option<ModuleIdx>,
    /// Bytes placed immediately before the vtable (length a multiple of its
    /// alignment, so the original start stays aligned).
    pub before: Vec<u8>,
    /// Bytes placed immediately after the vtable.
    pub after: Vec<u8>,
}

/// A local symbol renamed to a unique hidden global.
#[derive(Serialize, Deserialize, bincode::Encode, bincode::Decode, Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
#[bincode(decode_context = "crate::ids::FileNames")]
pub struct Promotion {
    pub symbol: String,
    pub promoted: String,
}

/// How a slot's calls are resolved.
#[derive(
    Serialize, Deserialize, bincode::Encode, bincode::Decode, Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash,
)]
#[bincode(decode_context = "crate::ids::FileNames")]
#[serde(rename_all = "snake_case")]
pub enum Resolution {
    /// Left alone; see the reason.
    None,
    /// Every target is one function: direct call.
    SingleImpl,
    /// Every target returns the same constant for the call's arguments.
    UniformRetVal,
    /// A boolean result is true (or false) for exactly one vtable: compare
    /// the vtable pointer with it.
    UniqueRetVal,
    /// Each vtable's result is stored beside it and loaded.
    VirtualConstProp,
    /// The slot's complete set of targets: the vtable pointer is compared
    /// with the classes' address points, each target called directly, the
    /// last one without a test.
    ClosedSet,
}

impl Resolution {
    /// The word LLVM's remarks use.
    pub fn remark_name(self) -> &'static str {
        match self {
            Resolution::None => "none",
            Resolution::SingleImpl => "single-impl",
            Resolution::UniformRetVal => "uniform-ret-val",
            Resolution::UniqueRetVal => "unique-ret-val",
            Resolution::VirtualConstProp => "virtual-const-prop",
            Resolution::ClosedSet => "closed-set",
        }
    }
}

/// The decision for one slot.
#[derive(Serialize, Deserialize, bincode::Encode, bincode::Decode, Debug, Clone, PartialEq, Eq)]
#[bincode(decode_context = "crate::ids::FileNames")]
pub struct SlotDecision {
    pub type_id: TypeId,
    /// Byte offset from the address point.
    pub offset: u64,
    pub resolution: Resolution,
    /// The possible callees found (display names), sorted.
    pub targets: Vec<String>,
    /// For `single_impl`: the symbol every call now names (after promotion).
    pub target: Option<String>,
    /// Live vtables carrying the type id.
    pub vtables: u32,
    /// Call sites using the slot.
    pub call_sites: u32,
    /// Call sites the backend rewrites.
    pub devirtualized: u32,
    /// Why the slot (or some of its call sites) was left alone.
    pub reason: Option<String>,
    /// For slots that are not single-impl: one entry per constant argument
    /// tuple of its call sites, sorted by arguments.
    pub by_args: Vec<ArgDecision>,
    /// Guarded speculation for the calls left indirect: the functions (by
    /// the symbol calls name) compared with the loaded function pointer, in
    /// order; empty when not speculating.
    pub speculative: Vec<String>,
    /// Call sites that get the guarded direct calls.
    pub speculated: u32,
    /// Closed-set dispatch for the calls no other rewrite resolves: one
    /// case per target, in comparison order; the last case is called
    /// without a test (its vtables are listed, not compared). Empty when
    /// the slot's set is not complete or too large. Its calls count in
    /// `devirtualized`.
    pub closed_set: Vec<DispatchCase>,
    /// Call sites that get the closed-set dispatch (counted in
    /// `devirtualized` too).
    pub dispatched: u32,
    /// Where the dispatch reads its case: the byte offset, from the address
    /// point, of a one-byte case index stored beside every member vtable
    /// (a class whose target is `closed_set[k]` holds `k`), so each case is
    /// one comparison however many classes share its target. `None`: the
    /// dispatch compares the vtable pointer with the cases' address points.
    pub dispatch_index: Option<i64>,
    /// Functions (by summary name, sorted) whose calls of this slot are
    /// not dispatched although the set is closed: each is itself one of
    /// the slot's targets (a wrapper forwarding to the object it wraps),
    /// which the dispatch would make call itself directly, and LLVM never
    /// inlines a directly recursive function.
    pub not_dispatched_in: Vec<String>,
    /// The calls in `not_dispatched_in` get a guarded dispatch: each tests
    /// every target but its own function's, calls them without inlining,
    /// and keeps the indirect call. False when the code budget refused
    /// those guards, or there are none. A closed set with `dispatched` 0
    /// serves these calls alone.
    pub wrappers_guarded: bool,
}

/// One target of a closed-set dispatch and the vtables that reach it.
#[derive(Serialize, Deserialize, bincode::Encode, bincode::Decode, Debug, Clone, PartialEq, Eq)]
#[bincode(decode_context = "crate::ids::FileNames")]
pub struct DispatchCase {
    /// The symbol the direct call names (promoted for a local function).
    pub target: String,
    /// The address points whose vtable holds `target` in the slot, sorted.
    pub vtables: Vec<AddressPoint>,
    /// The ids a call's value profile names `target` by
    /// ([`crate::FunctionFacts::profile_ids`]); empty without a profile.
    pub profile_ids: Vec<u64>,
}

/// A vtable's address point: the value a vtable pointer holds.
#[derive(Serialize, Deserialize, bincode::Encode, bincode::Decode, Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
#[bincode(decode_context = "crate::ids::FileNames")]
pub struct AddressPoint {
    /// The vtable's symbol (a hidden alias for a local vtable).
    pub symbol: String,
    /// The address point's byte offset in it.
    pub offset: u64,
}

/// The decision for the calls of one slot with one constant argument tuple.
#[derive(Serialize, Deserialize, bincode::Encode, bincode::Decode, Debug, Clone, PartialEq, Eq)]
#[bincode(decode_context = "crate::ids::FileNames")]
pub struct ArgDecision {
    /// Argument values after `this` (zero-extended), as at the call sites.
    pub args: Vec<u64>,
    pub resolution: Resolution,
    /// Bit width of the result.
    pub width: u32,
    /// `uniform_ret_val`: the constant; `unique_ret_val`: 1 when the unique
    /// vtable is the one returning true, 0 when it is the one returning false.
    pub value: u64,
    /// `unique_ret_val`: the symbol to compare against (a hidden alias for
    /// a local vtable) ...
    pub member_symbol: Option<String>,
    /// ... and the address point offset within it.
    pub member_offset: u64,
    /// `virtual_const_prop`: byte offset of the stored value from the
    /// address point (negative: before the vtable).
    pub byte_offset: i64,
    /// `virtual_const_prop` of a 1-bit result: the bit within that byte.
    pub bit: Option<u8>,
    pub call_sites: u32,
    pub reason: Option<String>,
}

/// Totals.
#[derive(Serialize, Deserialize, bincode::Encode, bincode::Decode, Debug, Clone, PartialEq, Eq, Default)]
#[bincode(decode_context = "crate::ids::FileNames")]
pub struct PlanStats {
    pub modules: u32,
    pub vtables: u32,
    pub live_vtables: u32,
    pub call_sites: u32,
    pub single_impl: u32,
    pub uniform_ret_val: u32,
    pub unique_ret_val: u32,
    pub virtual_const_prop: u32,
    /// Call sites dispatched over their slot's closed set.
    pub closed_set: u32,
    /// Call sites given guarded direct calls (not counted in
    /// `not_devirtualized`; the counters partition `call_sites`).
    pub speculative: u32,
    pub not_devirtualized: u32,
    /// Bytes added around vtables by virtual constant propagation.
    pub vtable_bytes_added: u64,
    /// Vtable entries replaced by the trap stub (every copy of a vtable
    /// counted once).
    pub dead_slots: u32,
    /// Functions of the program that only dead slots referenced, and their
    /// instructions (clang's count): what ThinLTO's dead stripping drops.
    pub dead_functions: u32,
    pub dead_instructions: u64,
}

impl SlotDecision {
    /// The decision for the calls of this slot whose arguments after `this`
    /// are the constants `args` (none when a call has other arguments).
    pub fn for_args(&self, args: Option<&[crate::ConstArg]>) -> Option<&ArgDecision> {
        let args = args?;
        self.by_args.iter().find(|a| a.args.len() == args.len() && a.args.iter().zip(args).all(|(v, c)| *v == c.value))
    }
}

impl Plan {
    /// Whether the calls in `function` of module `module` are call sites of
    /// the program (see [`PlanModule::outside_program`]).
    pub fn in_program(&self, module: ModuleIdx, function: &str) -> bool {
        self.modules
            .get(module)
            .is_none_or(|m| m.outside_program.binary_search_by(|f| f.as_str().cmp(function)).is_err())
    }

    /// The decision for a slot.
    pub fn decision(&self, type_id: &TypeId, offset: u64) -> Option<&SlotDecision> {
        self.decisions
            .binary_search_by(|d| (&d.type_id, d.offset).cmp(&(type_id, offset)))
            .ok()
            .map(|i| &self.decisions[i])
    }

    /// The dead slots of a vtable (`module` for local ones).
    pub fn dead_slots_of(&self, symbol: &str, module: Option<ModuleIdx>) -> Option<&DeadSlots> {
        self.dead_slots
            .binary_search_by(|d| (d.symbol.as_str(), d.module).cmp(&(symbol, module)))
            .ok()
            .map(|i| &self.dead_slots[i])
    }

    /// The layout of a vtable (`module` for local ones).
    pub fn layout(&self, symbol: &str, module: Option<ModuleIdx>) -> Option<&VtableLayout> {
        self.layouts
            .binary_search_by(|l| (l.symbol.as_str(), l.module).cmp(&(symbol, module)))
            .ok()
            .map(|i| &self.layouts[i])
    }

    /// Canonical JSON for `wpd dump`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("plan types serialize to JSON")
    }
}
