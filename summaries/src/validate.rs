//! Checks run on every summary and plan right after decoding: a file whose
//! checksum is right can still be inconsistent (written by a buggy or
//! foreign tool, or edited), and the thin link and the backends rely on
//! these invariants (binary searches over sorted lists, widths that fit a
//! machine word, names that can be emitted). An inconsistent file is a
//! one-line error, never a panic; the reader adds the file name (see
//! `container::decode`).
//!
//! Each message says briefly what is wrong and where; names in it are
//! escaped and shortened so the message stays on one line.

use crate::error::Error;
use crate::expr::{Expr, ExprOp};
use crate::ids::ModuleIdx;
use crate::plan::{ArgDecision, Plan, Promotion, Resolution, SlotDecision};
use crate::summary::{CallSite, FunctionFacts, Linkage, ModuleSummary, RetKind, Slot, SlotKind, Vtable};
use std::fmt::Debug;

/// Largest vtable size (bytes) a summary may record. Address points and
/// slot offsets lie within the size, so offsets relative to them stay far
/// from overflowing 64-bit arithmetic.
pub const MAX_VTABLE_SIZE: u64 = 1 << 32;
/// Largest alignment LLVM allows (bytes).
pub const MAX_ALIGN: u64 = 1 << 32;
/// Most bytes a plan may place beside one vtable (before and after
/// together). The thin link adds at most 128 bytes per value.
pub const MAX_LAYOUT_BYTES: usize = 1 << 20;
/// Most guarded targets per speculative call.
pub const MAX_SPECULATE: u8 = 2;

/// A format whose decoded values must be checked before use.
pub trait Validate {
    /// `Err` says briefly what is inconsistent (an [`Error::msg`]: the
    /// reader adds the file).
    fn validate(&self) -> Result<(), Error>;
}

impl Validate for ModuleSummary {
    fn validate(&self) -> Result<(), Error> {
        ModuleSummary::validate(self)
    }
}

impl Validate for Plan {
    fn validate(&self) -> Result<(), Error> {
        Plan::validate(self)
    }
}

type Check = Result<(), String>;

fn ensure(ok: bool, what: impl FnOnce() -> String) -> Check {
    if ok { Ok(()) } else { Err(what()) }
}

/// `s` cut to a length that keeps messages readable.
fn cut(s: String) -> String {
    const MAX: usize = 80;
    match s.char_indices().nth(MAX) {
        Some((end, _)) => format!("{}...", &s[..end]),
        None => s,
    }
}

/// A name for a message: escaped (no control characters, no line breaks)
/// and cut.
fn show(s: &str) -> String {
    cut(s.escape_debug().collect())
}

/// The name files and documents use for an enum value (`virtual_const_prop`).
fn word<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        _ => "?".into(),
    }
}

/// Every key strictly greater than the one before: sorted, no duplicates.
fn sorted_unique<'a, T, K: Ord + Debug>(items: &'a [T], key: impl Fn(&'a T) -> K, what: &str) -> Check {
    for (i, w) in items.windows(2).enumerate() {
        let (a, b) = (key(&w[0]), key(&w[1]));
        if a >= b {
            let how = if a == b { "duplicated" } else { "out of order" };
            return Err(format!(
                "{what} are not sorted and unique: entry {} {} is {how}",
                i + 1,
                cut(format!("{b:?}"))
            ));
        }
    }
    Ok(())
}

/// Sorted, duplicates allowed.
fn sorted<'a, T, K: Ord + Debug>(items: &'a [T], key: impl Fn(&'a T) -> K, what: &str) -> Check {
    for (i, w) in items.windows(2).enumerate() {
        let (a, b) = (key(&w[0]), key(&w[1]));
        if a > b {
            return Err(format!("{what} are not sorted: entry {} {} is out of order", i + 1, cut(format!("{b:?}"))));
        }
    }
    Ok(())
}

/// A name that may appear in a message or in the IR: no control characters
/// (they would break one-line messages, and no compiler emits them).
fn printable(what: &str, s: &str) -> Check {
    // Nearly every name is printable ASCII: checked a byte at a time,
    // without an early exit so the loop compiles to vector compares (a
    // thin link checks millions of names); the rest decode to chars (C1
    // controls are two bytes in UTF-8).
    let ascii = s.bytes().fold(true, |ok, b| ok & (b.wrapping_sub(0x20) < 0x5f));
    ensure(ascii || !s.chars().any(char::is_control), || format!("{what} {} has a control character", show(s)))
}

/// A symbol a backend may name in the IR or another module may call: also
/// non-empty, and not an LLVM intrinsic (whose address cannot be taken, and
/// which a backend must never declare with another type).
fn symbol(what: &str, s: &str) -> Check {
    ensure(!s.is_empty(), || format!("{what} has an empty name"))?;
    printable(what, s)?;
    ensure(!s.starts_with("llvm."), || format!("{what} {} is an LLVM intrinsic name", show(s)))
}

/// A content hash as wpd writes it: 32 lower-case hex digits.
fn hash(what: &str, h: &str) -> Check {
    ensure(h.len() == 32 && h.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)), || {
        format!("{what} {} is not 32 lower-case hex digits", show(h))
    })
}

/// The value fits in `width` bits (1..=64).
fn fits(value: u64, width: u32) -> bool {
    width >= 64 || value >> width == 0
}

fn width_1_to_64(what: impl FnOnce() -> String, width: u32) -> Check {
    ensure((1..=64).contains(&width), || format!("{} has width {width}, not 1-64", what()))
}

fn ret_shape(what: impl Fn() -> String, ret: RetKind, width: u32) -> Check {
    match ret {
        RetKind::Int => ensure(width >= 1, || format!("{} returns an integer of width 0", what())),
        RetKind::Void | RetKind::Other => {
            ensure(width == 0, || format!("{} returns no integer but has return width {width}", what()))
        }
    }
}

impl ModuleSummary {
    /// Checks the invariants the thin link relies on (see
    /// `docs/summary-format.md`, "Validation").
    pub fn validate(&self) -> Result<(), Error> {
        self.check().map_err(Error::msg)
    }

    fn check(&self) -> Check {
        hash("module hash", &self.module.hash)?;
        sorted_unique(&self.type_ids, |t| t.name.as_str(), "type ids")?;
        for t in &self.type_ids {
            printable("type id", t.name.as_str())?;
        }
        sorted_unique(&self.vtables, |v| v.symbol.as_str(), "vtables")?;
        for v in &self.vtables {
            vtable(v).map_err(|e| format!("vtable {}: {e}", show(&v.symbol)))?;
        }
        sorted_unique(&self.untyped_vtables, |s| s.as_str(), "untyped vtables")?;
        sorted(&self.call_sites, |c| (c.function.as_str(), c.test_index), "call sites")?;
        let mut previous: Option<&CallSite> = None;
        for c in &self.call_sites {
            // A function's call sites are consecutive and, decoded, share
            // its name and often their type id: a name is checked once.
            let same = |a: &str, b: &str| std::ptr::eq(a, b);
            let names_checked = previous.map_or((false, false), |p| {
                (same(&p.function, &c.function), same(p.type_id.as_str(), c.type_id.as_str()))
            });
            call_site(c, names_checked)
                .map_err(|e| format!("call site in {} (test {}): {e}", show(&c.function), c.test_index))?;
            previous = Some(c);
        }
        sorted_unique(&self.functions, |f| f.name.as_str(), "functions")?;
        for f in &self.functions {
            function(f).map_err(|e| format!("function {}: {e}", show(&f.name)))?;
        }
        sorted_unique(&self.globals, |g| g.name.as_str(), "globals")?;
        for g in &self.globals {
            sorted_unique(&g.refs, |s| s.as_str(), "references")
                .map_err(|e| format!("global {}: {e}", show(&g.name)))?;
        }
        let r = &self.roots;
        for (list, what) in [
            (&r.used, "llvm.used entries"),
            (&r.compiler_used, "llvm.compiler.used entries"),
            (&r.global_ctors, "llvm.global_ctors entries"),
            (&r.global_dtors, "llvm.global_dtors entries"),
        ] {
            sorted_unique(list, |s| s.as_str(), what)?;
        }
        let reads = &self.slot_reads;
        sorted_unique(&reads.untested, |r| (r.function.as_str(), &r.signature), "untested slot reads")?;
        sorted_unique(&reads.tested, |r| (r.function.as_str(), r.type_id.as_str(), r.offset), "slot reads")?;
        for r in &reads.tested {
            printable("a slot read's type id", r.type_id.as_str())?;
        }
        sorted_unique(&reads.direct, |r| (r.function.as_str(), r.vtable.as_str(), r.offset), "vtable reads")?;
        Ok(())
    }
}

fn vtable(v: &Vtable) -> Check {
    symbol("the vtable", &v.symbol)?;
    ensure(v.available_externally == (v.linkage == Linkage::AvailableExternally), || {
        format!("available_externally is {} but the linkage is {}", v.available_externally, word(&v.linkage))
    })?;
    ensure(v.align == 0 || (v.align.is_power_of_two() && v.align <= MAX_ALIGN), || {
        format!("alignment {} is not a power of two up to 2^32", v.align)
    })?;
    ensure(v.size <= MAX_VTABLE_SIZE, || format!("size {} is over 4 GiB", v.size))?;
    sorted_unique(&v.type_ids, |t| (t.offset, t.type_id.as_str()), "type id entries")?;
    for t in &v.type_ids {
        printable("type id", t.type_id.as_str())?;
        ensure(t.offset <= v.size, || {
            format!("address point {} of {} is beyond its size {}", t.offset, show(t.type_id.as_str()), v.size)
        })?;
    }
    sorted_unique(&v.slots, |s| s.offset, "slots")?;
    for s in &v.slots {
        ensure(s.offset < v.size, || format!("slot at byte {} is beyond its size {}", s.offset, v.size))?;
        if let Some(base) = s.relative_to {
            ensure(base < v.size, || format!("slot at byte {} is relative to byte {base}, beyond its size", s.offset))?;
        }
        slot(s).map_err(|e| format!("slot at byte {}: {e}", s.offset))?;
    }
    Ok(())
}

/// What each slot kind records (`docs/summary-format.md`, "Slots").
fn slot(s: &Slot) -> Check {
    let (want_symbol, want_function) = match s.kind {
        SlotKind::Null | SlotKind::Int | SlotKind::Other => (false, false),
        SlotKind::Global => (true, false),
        SlotKind::Function | SlotKind::PureVirtual => (true, true),
    };
    ensure(s.symbol.is_some() == want_symbol && s.function.is_some() == want_function, || {
        let has = |o: &Option<crate::Name>| if o.is_some() { "a" } else { "no" };
        format!("a {} slot with {} symbol and {} function", word(&s.kind), has(&s.symbol), has(&s.function))
    })?;
    // A function's slot names it twice, one shared text once decoded: the
    // function's check covers the symbol's.
    let same_text = matches!((&s.symbol, &s.function), (Some(a), Some(b)) if std::ptr::eq(a.as_str(), b.as_str()));
    if let Some(sym) = s.symbol.as_ref().filter(|_| !same_text) {
        printable("the symbol", sym)?;
    }
    if let Some(f) = &s.function {
        symbol("the function", f)?;
        let pure = f == "__cxa_pure_virtual";
        ensure(pure == (s.kind == SlotKind::PureVirtual), || format!("a {} slot holds {}", word(&s.kind), show(f)))?;
    }
    Ok(())
}

/// `names_checked`: whether the function's and the type id's names are
/// ones an earlier call site's check already passed.
fn call_site(c: &CallSite, names_checked: (bool, bool)) -> Check {
    if !names_checked.0 {
        printable("the function", &c.function)?;
    }
    if !names_checked.1 {
        printable("the type id", c.type_id.as_str())?;
    }
    ensure(c.offset.is_some() == c.call.is_some(), || "a slot offset without a call, or a call without one".into())?;
    ret_shape(|| "the call".into(), c.ret, c.ret_width)?;
    match c.call {
        None => {
            ensure(c.const_args.is_none() && c.ret == RetKind::Void, || {
                "a type test that guards no call has arguments or a result".into()
            })?;
            ensure(c.calls_sharing_test == 0, || "a type test that guards no call counts calls".into())?;
        }
        Some(_) => ensure(c.calls_sharing_test >= 1, || "a call whose type test guards no call".into())?,
    }
    for (k, a) in c.const_args.iter().flatten().enumerate() {
        width_1_to_64(|| format!("constant argument {}", k + 1), a.width)?;
        ensure(fits(a.value, a.width), || {
            format!("constant argument {} value {} does not fit in {} bits", k + 1, a.value, a.width)
        })?;
    }
    Ok(())
}

fn function(f: &FunctionFacts) -> Check {
    printable("the name", &f.name)?;
    ret_shape(|| "it".into(), f.ret, f.ret_width)?;
    if let Some(e) = &f.expr {
        expr(e, &f.param_widths).map_err(|e| format!("expression: {e}"))?;
        let width = e.width().unwrap_or(0);
        ensure(f.ret == RetKind::Int && f.ret_width == width, || {
            format!(
                "the expression is {width} bits wide, the function returns {} of width {}",
                word(&f.ret),
                f.ret_width
            )
        })?;
    }
    Ok(())
}

/// Everything `Expr::eval` treats as malformed is refused, so a valid
/// expression fails to evaluate only for its arguments' values (poison,
/// division by zero).
fn expr(e: &Expr, params: &[u32]) -> Check {
    ensure(!e.nodes.is_empty(), || "no nodes".into())?;
    for (i, n) in e.nodes.iter().enumerate() {
        let at = || format!("node {i}");
        width_1_to_64(at, n.width)?;
        let arity = match n.op {
            ExprOp::Const | ExprOp::Arg => 0,
            ExprOp::ZExt | ExprOp::SExt | ExprOp::Trunc | ExprOp::Abs => 1,
            ExprOp::Select => 3,
            _ => 2,
        };
        ensure(n.operands.len() == arity, || {
            format!("node {i} ({}) has {} operands, not {arity}", word(&n.op), n.operands.len())
        })?;
        let mut widths = Vec::with_capacity(arity);
        for &o in &n.operands {
            let Some(w) = e.nodes.get(o as usize).filter(|_| (o as usize) < i).map(|m| m.width) else {
                return Err(format!("node {i} uses node {o}, which does not come before it"));
            };
            widths.push(w);
        }
        let w = n.width;
        let ok = match n.op {
            ExprOp::Const => fits(n.value, w),
            ExprOp::Arg => params.get(n.value as usize) == Some(&w),
            ExprOp::ICmp => w == 1 && widths[0] == widths[1],
            ExprOp::Select => widths == [1, w, w],
            ExprOp::ZExt | ExprOp::SExt => widths[0] < w,
            ExprOp::Trunc => widths[0] > w,
            _ => widths.iter().all(|&x| x == w),
        };
        ensure(ok, || match n.op {
            ExprOp::Const => format!("node {i}: constant {} does not fit in {w} bits", n.value),
            ExprOp::Arg => format!("node {i}: parameter {} is not a {w}-bit parameter", n.value),
            _ => format!("node {i} ({}, {w} bits) has operands of widths {widths:?}", word(&n.op)),
        })?;
        let value_ok = match n.op {
            ExprOp::Const | ExprOp::Arg => true,
            ExprOp::Abs => n.value <= 1,
            _ => n.value == 0,
        };
        ensure(value_ok, || format!("node {i} ({}) has value {}", word(&n.op), n.value))?;
        ensure(n.pred.is_some() == (n.op == ExprOp::ICmp), || {
            format!("node {i} ({}) {} a predicate", word(&n.op), if n.pred.is_some() { "has" } else { "lacks" })
        })?;
    }
    Ok(())
}

impl Plan {
    /// Checks the invariants the backends rely on (see
    /// `docs/plan-format.md`, "Validation").
    pub fn validate(&self) -> Result<(), Error> {
        self.check().map_err(Error::msg)
    }

    fn check(&self) -> Check {
        ensure(self.options.speculate <= MAX_SPECULATE, || {
            format!("speculate is {}, at most {MAX_SPECULATE}", self.options.speculate)
        })?;
        for (i, m) in self.modules.iter().enumerate() {
            let at = || format!("module {i} ({})", show(&m.name));
            hash("the content hash", &m.hash).map_err(|e| format!("{}: {e}", at()))?;
            promotions(&m.promotions, "promotions").map_err(|e| format!("{}: {e}", at()))?;
            promotions(&m.vtable_aliases, "vtable aliases").map_err(|e| format!("{}: {e}", at()))?;
            sorted_unique(&m.keep, |k| k.as_str(), "kept definitions").map_err(|e| format!("{}: {e}", at()))?;
            for k in &m.keep {
                symbol("a kept definition", k).map_err(|e| format!("{}: {e}", at()))?;
            }
            sorted_unique(&m.outside_program, |k| k.as_str(), "functions outside the program")
                .map_err(|e| format!("{}: {e}", at()))?;
        }
        sorted_unique(&self.decisions, |d| (d.type_id.as_str(), d.offset), "decisions")?;
        for d in &self.decisions {
            decision(d, self.options.speculate, self.options.closed_set)
                .map_err(|e| format!("slot {}+{}: {e}", show(d.type_id.as_str()), d.offset))?;
        }
        sorted_unique(&self.layouts, |l| (l.symbol.as_str(), l.module), "layouts")?;
        for l in &self.layouts {
            let at = || format!("layout of {}", show(&l.symbol));
            self.vtable_of(&l.symbol, l.module).map_err(|e| format!("{}: {e}", at()))?;
            ensure(l.before.len().saturating_add(l.after.len()) <= MAX_LAYOUT_BYTES, || {
                format!("{}: {} bytes before and {} after, over 1 MiB", at(), l.before.len(), l.after.len())
            })?;
        }
        sorted_unique(&self.open_type_ids, |o| o.type_id.as_str(), "open type ids")?;
        sorted_unique(&self.dead_slots, |d| (d.symbol.as_str(), d.module), "dead-slot lists")?;
        for d in &self.dead_slots {
            let at = || format!("dead slots of {}", show(&d.symbol));
            self.vtable_of(&d.symbol, d.module).map_err(|e| format!("{}: {e}", at()))?;
            ensure(!d.offsets.is_empty(), || format!("{}: no offsets", at()))?;
            sorted_unique(&d.offsets, |o| *o, "dead-slot offsets").map_err(|e| format!("{}: {e}", at()))?;
        }
        let s = &self.stats;
        let parts =
            [s.single_impl, s.uniform_ret_val, s.unique_ret_val, s.virtual_const_prop, s.closed_set, s.speculative];
        let sum: u64 = parts.iter().chain([&s.not_devirtualized]).map(|&n| u64::from(n)).sum();
        ensure(sum == u64::from(s.call_sites), || {
            format!("the call-site counters add up to {sum}, not to call_sites {}", s.call_sites)
        })?;
        let bytes: u64 = self.layouts.iter().map(|l| (l.before.len() + l.after.len()) as u64).sum();
        ensure(bytes == s.vtable_bytes_added, || {
            format!("the layouts add {bytes} bytes, stats say {}", s.vtable_bytes_added)
        })?;
        Ok(())
    }
}

impl Plan {
    /// A vtable a layout or dead-slot list names: a symbol, and for a
    /// local one a module of the plan.
    fn vtable_of(&self, symbol_name: &str, module: Option<ModuleIdx>) -> Check {
        symbol("the vtable", symbol_name)?;
        if let Some(m) = module {
            ensure(self.modules.get(m).is_some(), || {
                format!("module {m} is not one of the {} modules", self.modules.len())
            })?;
        }
        Ok(())
    }
}

fn promotions(list: &[Promotion], what: &str) -> Check {
    sorted_unique(list, |p| p.symbol.as_str(), what)?;
    for p in list {
        symbol("a promoted symbol", &p.symbol)?;
        symbol("a promoted name", &p.promoted)?;
    }
    Ok(())
}

fn decision(d: &SlotDecision, speculate: u8, closed_set: u8) -> Check {
    printable("the type id", d.type_id.as_str())?;
    let single = d.resolution == Resolution::SingleImpl;
    ensure(single == d.target.is_some(), || {
        if single { "single_impl without a target".into() } else { "a target without single_impl".into() }
    })?;
    if let Some(t) = &d.target {
        symbol("the target", t)?;
    }
    ensure(!single || d.by_args.is_empty(), || "single_impl with per-argument decisions".into())?;
    sorted_unique(&d.by_args, |a| a.args.as_slice(), "per-argument decisions")?;
    let mut resolved = 0u64;
    for a in &d.by_args {
        arg_decision(a).map_err(|e| format!("arguments {:?}: {e}", a.args))?;
        if a.resolution != Resolution::None {
            resolved += u64::from(a.call_sites);
        }
    }
    ensure(!d.closed_set.is_empty() || (d.dispatched == 0 && !d.wrappers_guarded), || {
        "dispatched call sites or guarded wrappers without a closed set".into()
    })?;
    ensure(d.closed_set.is_empty() || d.dispatched > 0 || d.wrappers_guarded, || {
        "a closed set that serves no call".into()
    })?;
    ensure(!d.wrappers_guarded || !d.not_dispatched_in.is_empty(), || "guarded wrappers without wrappers".into())?;
    ensure(d.closed_set.is_empty() || (2..=usize::from(closed_set)).contains(&d.closed_set.len()), || {
        format!("a closed set of {} targets, closed_set is {closed_set}", d.closed_set.len())
    })?;
    ensure(!single || d.closed_set.is_empty(), || "single_impl with a closed set".into())?;
    ensure(d.dispatch_index.is_none() || !d.closed_set.is_empty(), || "a case index without a closed set".into())?;
    ensure(d.not_dispatched_in.windows(2).all(|w| w[0] < w[1]), || {
        "not_dispatched_in is not sorted and unique".into()
    })?;
    for (k, case) in d.closed_set.iter().enumerate() {
        symbol("a closed-set target", &case.target)?;
        ensure(!case.vtables.is_empty(), || format!("closed-set target {} has no vtable", show(&case.target)))?;
        sorted_unique(&case.vtables, |v| (v.symbol.as_str(), v.offset), "a closed-set case's vtables")?;
        for v in &case.vtables {
            symbol("a closed-set vtable", &v.symbol)?;
        }
        ensure(d.closed_set[..k].iter().all(|c| c.target != case.target), || {
            format!("closed-set target {} twice", show(&case.target))
        })?;
    }
    resolved += u64::from(d.dispatched);
    if !single {
        ensure(u64::from(d.devirtualized) == resolved, || {
            format!(
                "devirtualized is {}, the resolved arguments and dispatches have {resolved} call sites",
                d.devirtualized
            )
        })?;
        let used = d.resolution == Resolution::None
            || d.by_args.iter().any(|a| a.resolution == d.resolution)
            || (d.resolution == Resolution::ClosedSet && d.dispatched > 0);
        ensure(used && (resolved == 0) == (d.resolution == Resolution::None), || {
            format!("resolution {} does not match its per-argument decisions", word(&d.resolution))
        })?;
    }
    ensure(u64::from(d.devirtualized) + u64::from(d.speculated) <= u64::from(d.call_sites), || {
        format!("{} devirtualized and {} speculated of {} call sites", d.devirtualized, d.speculated, d.call_sites)
    })?;
    // Speculated calls test `speculative`, or they are wrappers' calls
    // testing the closed set's other targets (`wrappers_guarded`).
    ensure(d.speculated > 0 || d.speculative.is_empty(), || "speculative targets without call sites".into())?;
    ensure(d.speculated == 0 || !d.speculative.is_empty() || d.wrappers_guarded, || {
        "speculated call sites without targets".into()
    })?;
    ensure(d.speculative.len() <= usize::from(speculate), || {
        format!("{} speculative targets, speculate is {speculate}", d.speculative.len())
    })?;
    for t in &d.speculative {
        symbol("a speculative target", t)?;
    }
    Ok(())
}

fn arg_decision(a: &ArgDecision) -> Check {
    width_1_to_64(|| "the result".into(), a.width)?;
    let r = a.resolution;
    ensure(r != Resolution::SingleImpl && r != Resolution::ClosedSet, || format!("{} per argument", word(&r)))?;
    ensure(r == Resolution::UniformRetVal || r == Resolution::UniqueRetVal || a.value == 0, || {
        format!("a value {} with resolution {}", a.value, word(&r))
    })?;
    match r {
        Resolution::UniformRetVal => {
            ensure(fits(a.value, a.width), || format!("value {} does not fit in {} bits", a.value, a.width))?
        }
        Resolution::UniqueRetVal => {
            ensure(a.width == 1 && a.value <= 1, || "unique_ret_val of a result that is not one bit".into())?;
            match &a.member_symbol {
                Some(m) => symbol("the compared vtable", m)?,
                None => return Err("unique_ret_val without a vtable to compare with".into()),
            }
        }
        _ => ensure(a.member_symbol.is_none() && a.member_offset == 0, || {
            format!("a vtable to compare with, with resolution {}", word(&r))
        })?,
    }
    if r == Resolution::VirtualConstProp {
        ensure(a.bit.is_some() == (a.width == 1), || {
            "a bit for a result wider than one bit, or none for one bit".into()
        })?;
        ensure(a.bit.is_none_or(|b| b < 8), || format!("bit {} of a byte", a.bit.unwrap_or_default()))?;
    } else {
        ensure(a.byte_offset == 0 && a.bit.is_none(), || format!("a byte offset or bit with resolution {}", word(&r)))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::ExprNode;
    use crate::ids::{ModuleIdx, PerModule};
    use crate::plan::{AddressPoint, DeadSlots, DispatchCase, PlanModule, PlanStats, VtableLayout};
    use crate::summary::*;

    /// Every golden summary dump (`fixtures/summarize/*/expected/*.json`,
    /// real summarizer output with the hash normalized) validates. Dumps of
    /// an older shape, waiting for a re-bless, are skipped (the golden test
    /// in `tests/summaries.rs` reports them).
    #[test]
    fn golden_summaries_are_valid() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/summarize");
        let mut seen = 0;
        for fixture in std::fs::read_dir(&root).unwrap() {
            let expected = fixture.unwrap().path().join("expected");
            let Ok(files) = std::fs::read_dir(&expected) else { continue };
            for f in files {
                let path = f.unwrap().path();
                let text = std::fs::read_to_string(&path).unwrap();
                let Ok(mut s) = serde_json::from_str::<ModuleSummary>(&text) else { continue };
                s.module.hash = "0123456789abcdef0123456789abcdef".into();
                assert_eq!(s.validate(), Ok(()), "{}", path.display());
                seen += 1;
            }
        }
        eprintln!("{seen} golden summaries validated");
    }

    /// Two vtables (`_ZTV1A`, `_ZTV1B`) and one call of slot 0.
    fn summary() -> ModuleSummary {
        let vtable = |symbol: &str, f: &str| Vtable {
            symbol: symbol.into(),
            linkage: Linkage::LinkonceOdr,
            visibility: Visibility::Default,
            comdat: None,
            constant: true,
            available_externally: false,
            align: 8,
            size: 24,
            vcall_visibility: VcallVisibility::Public,
            type_ids: vec![TypeIdEntry { offset: 16, type_id: "_ZTS1A".into() }],
            slots: vec![
                Slot { offset: 0, kind: SlotKind::Null, symbol: None, function: None, value: 0, relative_to: None },
                Slot {
                    offset: 8,
                    kind: SlotKind::Global,
                    symbol: Some("_ZTI1A".into()),
                    function: None,
                    value: 0,
                    relative_to: None,
                },
                Slot {
                    offset: 16,
                    kind: SlotKind::Function,
                    symbol: Some(f.into()),
                    function: Some(f.into()),
                    value: 0,
                    relative_to: None,
                },
            ],
        };
        ModuleSummary {
            module: ModuleInfo {
                name: "a.o".into(),
                path: "a.o".into(),
                member: None,
                hash: "0123456789abcdef0123456789abcdef".into(),
                triple: String::new(),
                data_layout: String::new(),
                split: false,
                thin_fallback: false,
            },
            type_ids: vec![TypeIdInfo { name: "_ZTS1A".into(), local: false }],
            vtables: vec![vtable("_ZTV1A", "_ZN1A1fEv"), vtable("_ZTV1B", "_ZN1B1fEv")],
            untyped_vtables: vec![],
            call_sites: vec![CallSite {
                function: "main".into(),
                test_index: 0,
                type_id: "_ZTS1A".into(),
                offset: Some(0),
                kind: TestKind::TypeTest,
                assumed: true,
                call: Some(CallKind::Call),
                const_args: Some(Box::new([])),
                ret: RetKind::Int,
                ret_width: 32,
                location: None,
                calls_sharing_test: 1,
            }],
            functions: vec![],
            globals: vec![],
            roots: SpecialRoots::default(),
            slot_reads: Default::default(),
        }
    }

    /// The message for `s` after `change`; must be one line.
    fn refused(change: impl FnOnce(&mut ModuleSummary)) -> String {
        let mut s = summary();
        change(&mut s);
        let e = s.validate().unwrap_err().message;
        assert!(!e.contains('\n'), "{e}");
        e
    }

    fn function_slot(s: &mut ModuleSummary) -> &mut Slot {
        s.vtables.iter_mut().flat_map(|v| v.slots.iter_mut()).find(|s| s.kind == SlotKind::Function).unwrap()
    }

    #[test]
    fn inconsistent_summaries_are_refused() {
        assert!(summary().validate().is_ok());
        let e = refused(|s| s.module.hash = format!("a{}", "é".repeat(20)));
        assert!(e.starts_with("module hash aéé"), "{e}");
        let e = refused(|s| function_slot(s).function = None);
        assert!(e.contains("a function slot with a symbol and no function"), "{e}");
        let e = refused(|s| function_slot(s).function = Some("llvm.trap".into()));
        assert!(e.ends_with("llvm.trap is an LLVM intrinsic name"), "{e}");
        let e = refused(|s| s.vtables[1].symbol = "a\nb".into());
        assert!(e.contains("a\\nb has a control character"), "{e}");
        let e = refused(|s| s.vtables.swap(0, 1));
        assert!(e.starts_with("vtables are not sorted and unique: entry 1"), "{e}");
        let e = refused(|s| s.vtables[0].slots.reverse());
        assert!(e.contains("slots are not sorted and unique"), "{e}");
        let e = refused(|s| s.vtables[0].align = u64::MAX);
        assert!(e.contains("alignment 18446744073709551615 is not a power of two"), "{e}");
        let e = refused(|s| s.vtables[0].size = 1 << 40);
        assert!(e.contains("is over 4 GiB"), "{e}");
        let e = refused(|s| s.vtables[0].type_ids[0].offset = u64::MAX);
        assert!(e.contains("is beyond its size"), "{e}");
        let e = refused(|s| s.call_sites[0].call = None);
        assert!(e.contains("a slot offset without a call"), "{e}");
        let e = refused(|s| s.call_sites[0].const_args = Some(vec![ConstArg { width: 8, value: 256 }].into()));
        assert!(e.contains("constant argument 1 value 256 does not fit in 8 bits"), "{e}");
        let e = refused(|s| s.call_sites[0].const_args = Some(vec![ConstArg { width: 65, value: 1 }].into()));
        assert!(e.contains("constant argument 1 has width 65, not 1-64"), "{e}");
    }

    fn node(op: ExprOp, width: u32, operands: &[u32], value: u64) -> ExprNode {
        ExprNode { op, width, operands: operands.to_vec(), value, pred: None }
    }

    #[test]
    fn malformed_expressions_are_refused() {
        let params = [0, 32];
        let ok = |nodes: Vec<ExprNode>| expr(&Expr { nodes }, &params);
        let good =
            vec![node(ExprOp::Arg, 32, &[], 1), node(ExprOp::Const, 32, &[], 3), node(ExprOp::Add, 32, &[0, 1], 0)];
        assert_eq!(ok(good.clone()), Ok(()));
        assert!(ok(vec![]).is_err());
        let mut forward = good.clone();
        forward[2].operands = vec![0, 2];
        assert_eq!(ok(forward), Err("node 2 uses node 2, which does not come before it".into()));
        let mut wide = good.clone();
        wide[1].width = 65;
        assert_eq!(ok(wide), Err("node 1 has width 65, not 1-64".into()));
        let mut this = good.clone();
        this[0].value = 0;
        assert_eq!(ok(this), Err("node 0: parameter 0 is not a 32-bit parameter".into()));
        let mut big = good.clone();
        big[1].value = 1 << 32;
        assert!(ok(big).is_err());
        let mut arity = good.clone();
        arity[2].operands = vec![0];
        assert_eq!(ok(arity), Err("node 2 (add) has 1 operands, not 2".into()));
        let mut zext = good;
        zext.push(node(ExprOp::ZExt, 16, &[2], 0));
        assert_eq!(ok(zext), Err("node 3 (zext, 16 bits) has operands of widths [32]".into()));
    }

    fn plan() -> Plan {
        Plan {
            modules: PerModule::from_vec(vec![PlanModule {
                name: "a.o".into(),
                hash: "0123456789abcdef0123456789abcdef".into(),
                promotions: vec![],
                vtable_aliases: vec![],
                keep: vec![],
                outside_program: vec![],
            }]),
            decisions: vec![SlotDecision {
                type_id: "_ZTS1A".into(),
                offset: 0,
                resolution: Resolution::SingleImpl,
                targets: vec!["f".into()],
                target: Some("f".into()),
                vtables: 1,
                call_sites: 2,
                devirtualized: 2,
                reason: None,
                by_args: vec![],
                speculative: vec![],
                speculated: 0,
                closed_set: vec![],
                dispatched: 0,
                dispatch_index: None,
                not_dispatched_in: Vec::new(),
                wrappers_guarded: false,
            }],
            layouts: vec![VtableLayout {
                symbol: "_ZTV1A".into(),
                module: Some(ModuleIdx::new(0)),
                before: vec![0; 8],
                after: vec![],
            }],
            dead_slots: vec![DeadSlots { symbol: "_ZTV1B".into(), module: None, offsets: vec![16, 24] }],
            stats: PlanStats {
                call_sites: 2,
                single_impl: 2,
                vtable_bytes_added: 8,
                dead_slots: 2,
                ..PlanStats::default()
            },
            ..Plan::default()
        }
    }

    /// A slot whose closed set serves only a wrapper's call: its guarded
    /// dispatch counts as speculated without `speculative` targets.
    fn wrapper_only(p: &mut Plan) {
        p.options.closed_set = 4;
        // Of the 2 call sites, the wrapper's is guarded, the other indirect.
        (p.stats.single_impl, p.stats.speculative, p.stats.not_devirtualized) = (0, 1, 1);
        let case = |t: &str| DispatchCase {
            target: t.into(),
            vtables: vec![AddressPoint { symbol: format!("_ZTV{t}"), offset: 16 }],
            profile_ids: vec![],
        };
        let d = &mut p.decisions[0];
        d.resolution = Resolution::None;
        d.target = None;
        d.devirtualized = 0;
        d.speculated = 1;
        d.closed_set = vec![case("w"), case("g")];
        d.not_dispatched_in = vec!["w".into()];
        d.wrappers_guarded = true;
    }

    #[test]
    fn a_closed_set_for_wrappers_alone_is_checked() {
        let mut p = plan();
        wrapper_only(&mut p);
        assert_eq!(p.validate(), Ok(()));
        let refused = |change: fn(&mut Plan)| {
            let mut p = plan();
            wrapper_only(&mut p);
            change(&mut p);
            p.validate().unwrap_err().message
        };
        assert_eq!(
            refused(|p| p.decisions[0].not_dispatched_in.clear()),
            "slot _ZTS1A+0: guarded wrappers without wrappers"
        );
        assert_eq!(
            refused(|p| p.decisions[0].wrappers_guarded = false),
            "slot _ZTS1A+0: a closed set that serves no call"
        );
        // The other call dispatched: the closed set serves both.
        let mut both = plan();
        wrapper_only(&mut both);
        let d = &mut both.decisions[0];
        (d.dispatched, d.devirtualized, d.resolution) = (1, 1, Resolution::ClosedSet);
        (both.stats.closed_set, both.stats.not_devirtualized) = (1, 0);
        assert_eq!(both.validate(), Ok(()));
        assert_eq!(
            refused(|p| {
                let d = &mut p.decisions[0];
                (d.closed_set, d.not_dispatched_in, d.wrappers_guarded) = (vec![], vec![], false);
            }),
            "slot _ZTS1A+0: speculated call sites without targets"
        );
        assert_eq!(
            refused(|p| p.decisions[0].closed_set.truncate(0)),
            "slot _ZTS1A+0: dispatched call sites or guarded wrappers without a closed set"
        );
    }

    #[test]
    fn inconsistent_plans_are_refused() {
        assert_eq!(plan().validate(), Ok(()));
        let refused = |change: fn(&mut Plan)| {
            let mut p = plan();
            change(&mut p);
            p.validate().unwrap_err().message
        };
        assert_eq!(refused(|p| p.decisions[0].target = None), "slot _ZTS1A+0: single_impl without a target");
        assert_eq!(
            refused(|p| p.layouts[0].module = Some(ModuleIdx::new(1))),
            "layout of _ZTV1A: module 1 is not one of the 1 modules"
        );
        assert_eq!(
            refused(|p| p.layouts[0].before = vec![0; 2 << 20]),
            "layout of _ZTV1A: 2097152 bytes before and 0 after, over 1 MiB"
        );
        assert!(
            refused(|p| p.decisions.push(p.decisions[0].clone())).starts_with("decisions are not sorted and unique")
        );
        assert_eq!(
            refused(|p| p.dead_slots[0].module = Some(ModuleIdx::new(3))),
            "dead slots of _ZTV1B: module 3 is not one of the 1 modules"
        );
        assert_eq!(refused(|p| p.dead_slots[0].offsets.clear()), "dead slots of _ZTV1B: no offsets");
        assert!(
            refused(|p| p.dead_slots[0].offsets.reverse())
                .starts_with("dead slots of _ZTV1B: dead-slot offsets are not sorted")
        );
        assert!(refused(|p| p.dead_slots.push(p.dead_slots[0].clone())).starts_with("dead-slot lists are not sorted"));
        assert_eq!(
            refused(|p| p.modules[ModuleIdx::new(0)].hash.make_ascii_uppercase()),
            "module 0 (a.o): the content hash 0123456789ABCDEF0123456789ABCDEF is not 32 lower-case hex digits"
        );
        assert_eq!(
            refused(|p| p.decisions[0].target = Some("llvm.donothing".into())),
            "slot _ZTS1A+0: the target llvm.donothing is an LLVM intrinsic name"
        );
        let vcp = |p: &mut Plan| {
            let d = &mut p.decisions[0];
            d.resolution = Resolution::VirtualConstProp;
            d.target = None;
            d.by_args = vec![ArgDecision {
                args: vec![],
                resolution: Resolution::VirtualConstProp,
                width: 1,
                value: 0,
                member_symbol: None,
                member_offset: 0,
                byte_offset: -17,
                bit: Some(3),
                call_sites: 2,
                reason: None,
            }];
            p.stats.single_impl = 0;
            p.stats.virtual_const_prop = 2;
        };
        let mut p = plan();
        vcp(&mut p);
        assert_eq!(p.validate(), Ok(()));
        p.decisions[0].by_args[0].bit = Some(8);
        assert_eq!(p.validate(), Err(Error::msg("slot _ZTS1A+0: arguments []: bit 8 of a byte")));
        p.decisions[0].by_args[0].bit = None;
        assert_eq!(
            p.validate(),
            Err(Error::msg("slot _ZTS1A+0: arguments []: a bit for a result wider than one bit, or none for one bit"))
        );
    }
}
