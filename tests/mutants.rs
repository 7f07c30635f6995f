//! Structural mutations of decoded summaries and plans, for the pipeline
//! mutation test: each mutation changes one field or list of a real value
//! (flip, swap, duplicate, delete, rename to another name of the same
//! file, odd names, out-of-range numbers) and returns a one-line
//! description of what it did. A deterministic generator makes every
//! mutant reproducible from its seed.

use wpd_summary::{
    ArgDecision, Body, CallKind, CmpPred, ConstArg, ExprOp, Linkage, ModuleIdx, ModuleSummary, Plan, Promotion,
    Resolution, RetKind, SlotKind, TestKind, VcallVisibility, Visibility,
};

/// A small deterministic generator (xorshift64).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    pub fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }
    pub fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())].clone()
    }
}

/// Names no compiler writes but a file may hold: empty, intrinsics, line
/// breaks, replacement characters, a multi-byte character across byte 16,
/// NUL, escapes, very long.
pub fn odd_names() -> Vec<String> {
    vec![
        String::new(),
        "llvm.donothing".into(),
        "llvm.type.test".into(),
        "a\nb".into(),
        "\u{fffd}\u{fffd}".into(),
        format!("a{}", "é".repeat(20)),
        "nul\0byte".into(),
        "\\xff\\x00".into(),
        "__cxa_pure_virtual".into(),
        "main".into(),
        "x".repeat(300),
    ]
}

/// Hash-like strings: wrong length, upper case, not hex, multi-byte.
fn odd_hashes(real: &str) -> Vec<String> {
    vec![
        String::new(),
        real.to_uppercase(),
        real.chars().skip(1).collect(),
        format!("{real}0"),
        "g".repeat(32),
        format!("0{}", "é".repeat(16)),
        "0".repeat(32),
    ]
}

fn numbers(near: u64) -> Vec<u64> {
    vec![
        0,
        1,
        7,
        8,
        16,
        near,
        near.wrapping_add(8),
        near.wrapping_sub(8),
        1 << 32,
        (1 << 32) + 8,
        i64::MAX as u64,
        u64::MAX - 7,
        u64::MAX,
    ]
}

const WIDTHS: &[u32] = &[0, 1, 7, 8, 16, 32, 63, 64, 65, 128, u32::MAX];

const LINKAGES: &[Linkage] = &[
    Linkage::External,
    Linkage::AvailableExternally,
    Linkage::LinkonceAny,
    Linkage::LinkonceOdr,
    Linkage::WeakAny,
    Linkage::Internal,
    Linkage::Private,
    Linkage::ExternalWeak,
    Linkage::Common,
];

const SLOT_KINDS: &[SlotKind] =
    &[SlotKind::Null, SlotKind::Function, SlotKind::PureVirtual, SlotKind::Global, SlotKind::Int, SlotKind::Other];

const RESOLUTIONS: &[Resolution] = &[
    Resolution::None,
    Resolution::SingleImpl,
    Resolution::UniformRetVal,
    Resolution::UniqueRetVal,
    Resolution::VirtualConstProp,
];

/// Swaps, duplicates or deletes one element; returns what it did.
fn shuffle<T: Clone>(v: &mut Vec<T>, rng: &mut Rng, what: &str) -> Option<String> {
    if v.is_empty() {
        return None;
    }
    let i = rng.below(v.len());
    Some(match rng.below(3) {
        0 if v.len() > 1 => {
            let j = (i + 1 + rng.below(v.len() - 1)) % v.len();
            v.swap(i, j);
            format!("{what}: swap {i} and {j}")
        }
        1 => {
            let e = v[i].clone();
            v.insert(i, e);
            format!("{what}: duplicate {i}")
        }
        _ => {
            v.remove(i);
            format!("{what}: delete {i}")
        }
    })
}

/// A name for a name field: another name of the same file, or an odd one.
fn name(rng: &mut Rng, pool: &[String]) -> wpd_summary::Name {
    if rng.chance(3) { rng.pick(&odd_names()).into() } else { rng.pick(pool).into() }
}

/// Every name a summary mentions (the pool renames draw from).
pub fn summary_names(s: &ModuleSummary) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    v.extend(s.type_ids.iter().map(|t| t.name.to_string()));
    for vt in &s.vtables {
        v.push(vt.symbol.to_string());
        v.extend(vt.slots.iter().filter_map(|s| s.function.as_deref().map(str::to_string)));
    }
    v.extend(s.functions.iter().map(|f| f.name.to_string()));
    v.extend(s.globals.iter().map(|g| g.name.to_string()));
    v.sort();
    v.dedup();
    if v.is_empty() {
        v.push("x".into());
    }
    v
}

/// Every name a plan mentions.
pub fn plan_names(p: &Plan) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for d in &p.decisions {
        v.push(d.type_id.to_string());
        v.extend(d.targets.iter().cloned());
        v.extend(d.target.iter().cloned());
        v.extend(d.speculative.iter().cloned());
        v.extend(d.by_args.iter().filter_map(|a| a.member_symbol.clone()));
    }
    v.extend(p.layouts.iter().map(|l| l.symbol.clone()));
    for m in &p.modules {
        v.extend(m.promotions.iter().chain(&m.vtable_aliases).flat_map(|p| [p.symbol.clone(), p.promoted.clone()]));
        v.extend(m.keep.iter().cloned());
    }
    v.sort();
    v.dedup();
    if v.is_empty() {
        v.push("x".into());
    }
    v
}

/// One mutation of a summary; `None` when the chosen part is empty.
fn summary_once(s: &mut ModuleSummary, pool: &[String], hashes: &[String], rng: &mut Rng) -> Option<String> {
    let n_vt = s.vtables.len();
    Some(match rng.below(16) {
        0 => {
            let h = if rng.chance(2) { rng.pick(hashes) } else { rng.pick(&odd_hashes(&s.module.hash)) };
            s.module.hash = h.clone();
            format!("module.hash = {h:?}")
        }
        1 => shuffle(&mut s.vtables, rng, "vtables")?,
        2 | 3 => {
            if n_vt == 0 {
                return None;
            }
            let i = rng.below(n_vt);
            let v = &mut s.vtables[i];
            let at = format!("vtables[{i}] ({})", v.symbol);
            match rng.below(9) {
                0 => {
                    v.symbol = name(rng, pool);
                    format!("{at}.symbol = {:?}", v.symbol)
                }
                1 => {
                    v.linkage = rng.pick(LINKAGES);
                    format!("{at}.linkage = {:?}", v.linkage)
                }
                2 => {
                    v.constant = !v.constant;
                    v.available_externally = !v.available_externally;
                    v.visibility = rng.pick(&[Visibility::Default, Visibility::Hidden, Visibility::Protected]);
                    v.vcall_visibility = rng.pick(&[
                        VcallVisibility::Public,
                        VcallVisibility::LinkageUnit,
                        VcallVisibility::TranslationUnit,
                    ]);
                    format!(
                        "{at}: flip constant/available_externally, visibility {:?}/{:?}",
                        v.visibility, v.vcall_visibility
                    )
                }
                3 => {
                    v.align = rng.pick(&[0, 1, 3, 8, 16, 256, 1 << 32, 1 << 33, u64::MAX]);
                    format!("{at}.align = {}", v.align)
                }
                4 => {
                    v.size = rng.pick(&numbers(v.size));
                    format!("{at}.size = {}", v.size)
                }
                5 => shuffle(&mut v.type_ids, rng, &format!("{at}.type_ids"))?,
                6 => {
                    if v.type_ids.is_empty() {
                        return None;
                    }
                    let k = rng.below(v.type_ids.len());
                    let t = &mut v.type_ids[k];
                    if rng.chance(2) {
                        t.offset = rng.pick(&numbers(t.offset));
                        format!("{at}.type_ids[{k}].offset = {}", t.offset)
                    } else {
                        t.type_id = name(rng, pool).into();
                        format!("{at}.type_ids[{k}].type_id = {:?}", t.type_id)
                    }
                }
                7 => shuffle(&mut v.slots, rng, &format!("{at}.slots"))?,
                _ => {
                    if v.slots.is_empty() {
                        return None;
                    }
                    let k = rng.below(v.slots.len());
                    let sl = &mut v.slots[k];
                    match rng.below(4) {
                        0 => {
                            sl.kind = rng.pick(SLOT_KINDS);
                            format!("{at}.slots[{k}].kind = {:?}", sl.kind)
                        }
                        1 => {
                            sl.function =
                                if sl.function.is_some() && rng.chance(2) { None } else { Some(name(rng, pool)) };
                            format!("{at}.slots[{k}].function = {:?}", sl.function)
                        }
                        2 => {
                            sl.symbol = if rng.chance(2) { None } else { Some(name(rng, pool)) };
                            format!("{at}.slots[{k}].symbol = {:?}", sl.symbol)
                        }
                        _ => {
                            sl.offset = rng.pick(&numbers(sl.offset));
                            format!("{at}.slots[{k}].offset = {}", sl.offset)
                        }
                    }
                }
            }
        }
        4 => shuffle(&mut s.call_sites, rng, "call_sites")?,
        5..=7 => {
            if s.call_sites.is_empty() {
                return None;
            }
            let i = rng.below(s.call_sites.len());
            let c = &mut s.call_sites[i];
            let at = format!("call_sites[{i}] ({}#{})", c.function, c.test_index);
            match rng.below(8) {
                0 => {
                    c.offset = if rng.chance(4) { None } else { Some(rng.pick(&numbers(c.offset.unwrap_or(16)))) };
                    format!("{at}.offset = {:?}", c.offset)
                }
                1 => {
                    c.call = rng.pick(&[None, Some(CallKind::Call), Some(CallKind::Invoke)]);
                    format!("{at}.call = {:?}", c.call)
                }
                2 => {
                    let arg = ConstArg { width: rng.pick(WIDTHS), value: rng.pick(&numbers(3)) };
                    match rng.below(3) {
                        0 => c.const_args = None,
                        1 => c.const_args = Some(Box::new([])),
                        _ => {
                            let mut args = c.const_args.take().map(Vec::from).unwrap_or_default();
                            args.push(arg);
                            c.const_args = Some(args.into());
                        }
                    }
                    format!("{at}.const_args = {:?}", c.const_args)
                }
                3 => {
                    c.ret = rng.pick(&[RetKind::Void, RetKind::Int, RetKind::Other]);
                    c.ret_width = rng.pick(WIDTHS);
                    format!("{at}.ret = {:?}/{}", c.ret, c.ret_width)
                }
                4 => {
                    c.type_id = name(rng, pool).into();
                    format!("{at}.type_id = {:?}", c.type_id)
                }
                5 => {
                    c.function = name(rng, pool);
                    format!("{at}.function = {:?}", c.function)
                }
                6 => {
                    c.assumed = !c.assumed;
                    c.kind = rng.pick(&[TestKind::TypeTest, TestKind::PublicTypeTest, TestKind::TypeCheckedLoad]);
                    format!("{at}: assumed = {}, kind = {:?}", c.assumed, c.kind)
                }
                _ => {
                    c.calls_sharing_test = rng.pick(&[0, 1, 2, u32::MAX]);
                    c.test_index = rng.pick(&[0, 1, u32::MAX]);
                    format!("{at}: calls_sharing_test {}, test_index {}", c.calls_sharing_test, c.test_index)
                }
            }
        }
        8 => shuffle(&mut s.functions, rng, "functions")?,
        9..=11 => {
            if s.functions.is_empty() {
                return None;
            }
            let i = rng.below(s.functions.len());
            let f = &mut s.functions[i];
            let at = format!("functions[{i}] ({})", f.name);
            match rng.below(8) {
                0 => {
                    f.name = name(rng, pool);
                    format!("{at}.name = {:?}", f.name)
                }
                1 => {
                    f.ret = rng.pick(&[RetKind::Void, RetKind::Int, RetKind::Other]);
                    f.ret_width = rng.pick(WIDTHS);
                    format!("{at}.ret = {:?}/{}", f.ret, f.ret_width)
                }
                2 => {
                    match rng.below(3) {
                        0 => f.param_widths.clear(),
                        1 => f.param_widths.push(rng.pick(WIDTHS)),
                        _ => {
                            if let Some(w) = f.param_widths.last_mut() {
                                *w = rng.pick(WIDTHS);
                            }
                        }
                    }
                    format!("{at}.param_widths = {:?}", f.param_widths)
                }
                3 => {
                    f.reads_memory = rng.chance(2);
                    f.writes_memory = rng.chance(2);
                    f.uses_this = rng.chance(2);
                    f.cold = rng.chance(3);
                    f.noreturn = rng.chance(3);
                    f.body = rng.pick(&[Body::Code, Body::Unreachable, Body::TrapOnly]);
                    f.linkage = rng.pick(LINKAGES);
                    format!("{at}: flags and body {:?}, linkage {:?}", f.body, f.linkage)
                }
                4 => {
                    f.expr = None;
                    format!("{at}.expr = None")
                }
                _ => {
                    let e = f.expr.as_mut()?;
                    if e.nodes.is_empty() {
                        return None;
                    }
                    let k = rng.below(e.nodes.len());
                    let n = &mut e.nodes[k];
                    match rng.below(6) {
                        0 => n.width = rng.pick(WIDTHS),
                        1 => n.operands = vec![rng.pick(&[0, k as u32, k as u32 + 1, u32::MAX]); rng.below(4)],
                        2 => {
                            n.op = rng.pick(&[
                                ExprOp::Const,
                                ExprOp::Arg,
                                ExprOp::Add,
                                ExprOp::Shl,
                                ExprOp::SDiv,
                                ExprOp::ICmp,
                                ExprOp::Select,
                                ExprOp::ZExt,
                                ExprOp::Trunc,
                                ExprOp::Abs,
                            ])
                        }
                        3 => n.value = rng.pick(&numbers(1)),
                        4 => n.pred = rng.pick(&[None, Some(CmpPred::Slt), Some(CmpPred::Eq)]),
                        _ => {
                            let dup = e.nodes[k].clone();
                            e.nodes.push(dup);
                        }
                    }
                    format!("{at}.expr node {k} -> {:?}", e.nodes.get(k))
                }
            }
        }
        12 => shuffle(&mut s.globals, rng, "globals")?,
        13 => {
            if s.globals.is_empty() {
                return None;
            }
            let i = rng.below(s.globals.len());
            let g = &mut s.globals[i];
            let at = format!("globals[{i}] ({})", g.name);
            match rng.below(4) {
                0 => {
                    g.linkage = rng.pick(LINKAGES);
                    format!("{at}.linkage = {:?}", g.linkage)
                }
                1 => {
                    g.name = name(rng, pool);
                    format!("{at}.name = {:?}", g.name)
                }
                2 => {
                    g.refs.push(name(rng, pool));
                    format!("{at}.refs += {:?}", g.refs.last())
                }
                _ => shuffle(&mut g.refs, rng, &format!("{at}.refs"))?,
            }
        }
        14 => {
            let n = name(rng, pool);
            let list = match rng.below(5) {
                0 => &mut s.roots.used,
                1 => &mut s.roots.global_ctors,
                2 => &mut s.roots.compiler_used,
                3 => &mut s.roots.global_dtors,
                _ => &mut s.untyped_vtables,
            };
            list.push(n.clone());
            format!("roots/untyped_vtables += {n:?}")
        }
        _ => shuffle(&mut s.type_ids, rng, "type_ids").unwrap_or_else(|| "type_ids: unchanged".into()),
    })
}

/// Sorts and deduplicates the lists of a summary by their documented keys,
/// so that a mutant reaches the thin link instead of failing validation for
/// its order alone.
fn normalize_summary(s: &mut ModuleSummary) {
    s.type_ids.sort_by(|a, b| a.name.cmp(&b.name));
    s.type_ids.dedup_by(|a, b| a.name == b.name);
    s.vtables.sort_by(|a, b| a.symbol.cmp(&b.symbol));
    s.vtables.dedup_by(|a, b| a.symbol == b.symbol);
    for v in &mut s.vtables {
        v.type_ids.sort();
        v.type_ids.dedup();
        v.slots.sort_by_key(|s| s.offset);
        v.slots.dedup_by_key(|s| s.offset);
    }
    s.untyped_vtables.sort();
    s.untyped_vtables.dedup();
    s.call_sites.sort_by(|a, b| (&a.function, a.test_index).cmp(&(&b.function, b.test_index)));
    s.functions.sort_by(|a, b| a.name.cmp(&b.name));
    s.functions.dedup_by(|a, b| a.name == b.name);
    s.globals.sort_by(|a, b| a.name.cmp(&b.name));
    s.globals.dedup_by(|a, b| a.name == b.name);
    for g in &mut s.globals {
        g.refs.sort();
        g.refs.dedup();
    }
    let r = &mut s.roots;
    for list in [&mut r.used, &mut r.compiler_used, &mut r.global_ctors, &mut r.global_dtors] {
        list.sort();
        list.dedup();
    }
}

/// Mutates `s` one to three times (then, half the time, restores the
/// documented order of its lists); returns the description.
pub fn mutate_summary(s: &mut ModuleSummary, pool: &[String], hashes: &[String], rng: &mut Rng) -> String {
    let rounds = if rng.chance(3) { 2 + rng.below(2) } else { 1 };
    let mut done = Vec::new();
    let mut tries = 0;
    while done.len() < rounds && tries < 100 {
        tries += 1;
        if let Some(d) = summary_once(s, pool, hashes, rng) {
            done.push(d);
        }
    }
    if rng.chance(2) {
        normalize_summary(s);
        done.push("re-sorted".into());
    }
    done.join("; ")
}

/// One mutation of a plan.
fn plan_once(p: &mut Plan, pool: &[String], hashes: &[String], rng: &mut Rng) -> Option<String> {
    Some(match rng.below(12) {
        0 => {
            let o = &mut p.options;
            o.whole_program_visibility = !o.whole_program_visibility;
            o.speculate = rng.pick(&[0, 1, 2, 3, 255]);
            format!("options: wpv {}, speculate {}", o.whole_program_visibility, o.speculate)
        }
        1 => {
            let mut modules = std::mem::take(&mut p.modules).into_vec();
            let done = shuffle(&mut modules, rng, "modules");
            p.modules = modules.into();
            done?
        }
        2 => {
            if p.modules.is_empty() {
                return None;
            }
            let i = rng.below(p.modules.len());
            let m = &mut p.modules[ModuleIdx::new(i)];
            let at = format!("modules[{i}] ({})", m.name);
            let promo = Promotion { symbol: String::from(name(rng, pool)), promoted: String::from(name(rng, pool)) };
            match rng.below(6) {
                5 => {
                    let k = String::from(name(rng, pool));
                    m.keep.push(k.clone());
                    format!("{at}.keep += {k:?}")
                }
                0 => {
                    let h = if rng.chance(2) { rng.pick(hashes) } else { rng.pick(&odd_hashes(&m.hash)) };
                    m.hash = h;
                    format!("{at}.hash = {:?}", m.hash)
                }
                1 => {
                    m.promotions.push(promo.clone());
                    format!("{at}.promotions += {promo:?}")
                }
                2 => {
                    m.vtable_aliases.push(promo.clone());
                    format!("{at}.vtable_aliases += {promo:?}")
                }
                3 => shuffle(&mut m.promotions, rng, &format!("{at}.promotions"))?,
                _ => shuffle(&mut m.vtable_aliases, rng, &format!("{at}.vtable_aliases"))?,
            }
        }
        3 => shuffle(&mut p.decisions, rng, "decisions")?,
        4..=8 => {
            if p.decisions.is_empty() {
                return None;
            }
            let i = rng.below(p.decisions.len());
            let d = &mut p.decisions[i];
            let at = format!("decisions[{i}] ({}+{})", d.type_id, d.offset);
            match rng.below(7) {
                0 => {
                    d.resolution = rng.pick(RESOLUTIONS);
                    format!("{at}.resolution = {:?}", d.resolution)
                }
                1 => {
                    d.target = if rng.chance(3) { None } else { Some(String::from(name(rng, pool))) };
                    format!("{at}.target = {:?}", d.target)
                }
                2 => {
                    if rng.chance(2) {
                        d.speculative.push(String::from(name(rng, pool)));
                    } else {
                        d.speculative.clear();
                    }
                    d.speculated = rng.pick(&[0, 1, d.call_sites]);
                    format!("{at}.speculative = {:?}, speculated {}", d.speculative, d.speculated)
                }
                3 => {
                    d.offset = rng.pick(&numbers(d.offset));
                    d.type_id = if rng.chance(2) { d.type_id.clone() } else { name(rng, pool).into() };
                    format!("{at} -> slot {}+{}", d.type_id, d.offset)
                }
                4 => shuffle(&mut d.by_args, rng, &format!("{at}.by_args"))?,
                5 if d.by_args.is_empty() => {
                    d.by_args.push(ArgDecision {
                        args: vec![],
                        resolution: Resolution::UniformRetVal,
                        width: 32,
                        value: 7,
                        member_symbol: None,
                        member_offset: 0,
                        byte_offset: 0,
                        bit: None,
                        call_sites: d.call_sites,
                        reason: None,
                    });
                    format!("{at}.by_args = [uniform 7]")
                }
                _ => {
                    if d.by_args.is_empty() {
                        return None;
                    }
                    let k = rng.below(d.by_args.len());
                    let a = &mut d.by_args[k];
                    match rng.below(6) {
                        0 => a.resolution = rng.pick(RESOLUTIONS),
                        1 => a.width = rng.pick(WIDTHS),
                        2 => a.value = rng.pick(&numbers(1)),
                        3 => {
                            a.member_symbol = if rng.chance(3) { None } else { Some(String::from(name(rng, pool))) };
                            a.member_offset = rng.pick(&numbers(a.member_offset));
                        }
                        4 => {
                            a.byte_offset = rng.pick(&[0, -1, -17, 8, 56, 1 << 40, i64::MIN, i64::MAX]);
                            a.bit = rng.pick(&[None, Some(0), Some(7), Some(8), Some(200)]);
                        }
                        _ => a.args = rng.pick(&[vec![], vec![1], vec![2, u64::MAX]]),
                    }
                    format!("{at}.by_args[{k}] -> {a:?}")
                }
            }
        }
        9 => shuffle(&mut p.layouts, rng, "layouts")?,
        10 => {
            if p.layouts.is_empty() {
                return None;
            }
            let i = rng.below(p.layouts.len());
            let l = &mut p.layouts[i];
            let at = format!("layouts[{i}] ({})", l.symbol);
            match rng.below(4) {
                0 => {
                    l.symbol = String::from(name(rng, pool));
                    format!("{at}.symbol = {:?}", l.symbol)
                }
                1 => {
                    l.module = rng.pick(&[None, Some(0), Some(1), Some(99), Some(u32::MAX)]).map(ModuleIdx::from);
                    format!("{at}.module = {:?}", l.module)
                }
                2 => {
                    l.before = vec![0xA5; rng.pick(&[0, 1, 7, 8, 4096, 2 << 20])];
                    format!("{at}.before: {} bytes", l.before.len())
                }
                _ => {
                    l.after = vec![0x5A; rng.pick(&[0, 1, 3, 8, 4096])];
                    format!("{at}.after: {} bytes", l.after.len())
                }
            }
        }
        _ => {
            p.stats.call_sites = p.stats.call_sites.wrapping_add(1);
            "stats.call_sites += 1".into()
        }
    })
}

/// Makes each decision agree with itself again where a mutation left it
/// half-changed (a target without single_impl, a value beside a resolution
/// that has none), so that more mutants reach the backends' rewrites.
fn repair_decisions(p: &mut Plan) {
    p.options.speculate = p.options.speculate.min(2);
    for d in &mut p.decisions {
        if d.target.is_some() && d.by_args.is_empty() {
            d.resolution = Resolution::SingleImpl;
        } else if d.resolution == Resolution::SingleImpl {
            d.resolution = Resolution::None;
        }
        if d.resolution != Resolution::SingleImpl {
            d.target = None;
        }
        for a in &mut d.by_args {
            if a.resolution == Resolution::SingleImpl
                || (a.resolution == Resolution::UniqueRetVal && a.member_symbol.is_none())
            {
                a.resolution = Resolution::None;
            }
            if !matches!(a.resolution, Resolution::UniformRetVal | Resolution::UniqueRetVal) {
                a.value = 0;
            }
            if a.resolution != Resolution::UniqueRetVal {
                a.member_symbol = None;
                a.member_offset = 0;
            }
            if a.resolution != Resolution::VirtualConstProp {
                a.byte_offset = 0;
                a.bit = None;
            }
        }
        if d.resolution != Resolution::SingleImpl {
            let mut count: Vec<(Resolution, u32)> = Vec::new();
            for a in d.by_args.iter().filter(|a| a.resolution != Resolution::None) {
                match count.iter_mut().find(|(r, _)| *r == a.resolution) {
                    Some((_, n)) => *n += a.call_sites,
                    None => count.push((a.resolution, a.call_sites)),
                }
            }
            d.resolution =
                count.iter().max_by_key(|(r, n)| (*n, std::cmp::Reverse(*r))).map_or(Resolution::None, |c| c.0);
        }
        d.speculative.truncate(usize::from(p.options.speculate));
        if d.speculative.is_empty() {
            d.speculated = 0;
        } else {
            d.speculated = d.speculated.max(1);
        }
    }
}

/// Restores the documented order of a plan's lists and recomputes its
/// counters, so a mutant reaches the backend unless a field itself is
/// inconsistent.
fn normalize_plan(p: &mut Plan) {
    repair_decisions(p);
    for m in &mut p.modules {
        for list in [&mut m.promotions, &mut m.vtable_aliases] {
            list.sort();
            list.dedup_by(|a, b| a.symbol == b.symbol);
        }
        m.keep.sort();
        m.keep.dedup();
    }
    p.decisions.sort_by(|a, b| (a.type_id.as_str(), a.offset).cmp(&(b.type_id.as_str(), b.offset)));
    p.decisions.dedup_by(|a, b| a.type_id == b.type_id && a.offset == b.offset);
    let s = &mut p.stats;
    *s = wpd_summary::PlanStats {
        modules: s.modules,
        vtables: s.vtables,
        live_vtables: s.live_vtables,
        ..Default::default()
    };
    for d in &mut p.decisions {
        d.by_args.sort_by(|a, b| a.args.cmp(&b.args));
        d.by_args.dedup_by(|a, b| a.args == b.args);
        if d.resolution != Resolution::SingleImpl {
            d.devirtualized = d.by_args.iter().filter(|a| a.resolution != Resolution::None).map(|a| a.call_sites).sum();
            for a in &d.by_args {
                match a.resolution {
                    Resolution::UniformRetVal => s.uniform_ret_val += a.call_sites,
                    Resolution::UniqueRetVal => s.unique_ret_val += a.call_sites,
                    Resolution::VirtualConstProp => s.virtual_const_prop += a.call_sites,
                    _ => {}
                }
            }
        } else {
            s.single_impl += d.devirtualized;
        }
        d.call_sites = d.call_sites.max(d.devirtualized + d.speculated);
        s.speculative += d.speculated;
        s.call_sites += d.call_sites;
        s.not_devirtualized += d.call_sites - d.devirtualized - d.speculated;
    }
    p.layouts.sort_by(|a, b| (a.symbol.as_str(), a.module).cmp(&(b.symbol.as_str(), b.module)));
    p.layouts.dedup_by(|a, b| a.symbol == b.symbol && a.module == b.module);
    s.vtable_bytes_added = p.layouts.iter().map(|l| (l.before.len() + l.after.len()) as u64).sum();
}

/// Mutates `p` one to three times (then, half the time, restores its order
/// and counters); returns the description.
pub fn mutate_plan(p: &mut Plan, pool: &[String], hashes: &[String], rng: &mut Rng) -> String {
    let rounds = if rng.chance(3) { 2 + rng.below(2) } else { 1 };
    let mut done = Vec::new();
    let mut tries = 0;
    while done.len() < rounds && tries < 100 {
        tries += 1;
        if let Some(d) = plan_once(p, pool, hashes, rng) {
            done.push(d);
        }
    }
    if rng.chance(2) {
        normalize_plan(p);
        done.push("re-sorted, counters recomputed".into());
    }
    done.join("; ")
}
