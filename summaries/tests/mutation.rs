//! Mutation tests for the summary and plan decoders: bodies with flipped,
//! replaced, inserted and removed bytes — re-sealed with a valid checksum so
//! they reach the bincode decoder and then validation — must fail with a
//! one-line error naming the file, or decode to a value that keeps what the
//! consumers rely on (lookups by binary search find every entry, function
//! slots name their function, expressions are well formed); never panic or
//! allocate without bound. `tests/mutation_pipeline.rs` (crate wpd-tests)
//! runs structurally mutated real summaries and plans through `wpd
//! thin-link` and `wpd backend`.

use std::path::Path;
use wpd_summary::container::{decode, decode_unchecked, encode};
use wpd_summary::*;

fn sample_summary() -> ModuleSummary {
    let arg = ExprNode { op: ExprOp::Arg, width: 32, operands: vec![], value: 1, pred: None };
    let k = ExprNode { op: ExprOp::Const, width: 32, operands: vec![], value: 3, pred: None };
    let cmp = ExprNode { op: ExprOp::ICmp, width: 1, operands: vec![0, 1], value: 0, pred: Some(CmpPred::Eq) };
    ModuleSummary {
        module: ModuleInfo {
            name: "a.o".into(),
            path: "a.o".into(),
            member: None,
            hash: "00112233445566778899aabbccddeeff".into(),
            triple: "x86_64-pc-linux-gnu".into(),
            data_layout: "e-m:e".into(),
            split: true,
            thin_fallback: false,
        },
        type_ids: vec![TypeIdInfo { name: "_ZTS4Base".into(), local: false }],
        vtables: vec![Vtable {
            symbol: "_ZTV4Base".into(),
            linkage: Linkage::LinkonceOdr,
            visibility: Visibility::Default,
            comdat: Some("_ZTV4Base".into()),
            constant: true,
            available_externally: false,
            align: 8,
            size: 32,
            vcall_visibility: VcallVisibility::Public,
            type_ids: vec![TypeIdEntry { offset: 16, type_id: "_ZTS4Base".into() }],
            slots: vec![
                Slot { offset: 0, kind: SlotKind::Null, symbol: None, function: None, value: 0, relative_to: None },
                Slot {
                    offset: 16,
                    kind: SlotKind::Function,
                    symbol: Some("f".into()),
                    function: Some("f".into()),
                    value: 0,
                    relative_to: None,
                },
            ],
        }],
        untyped_vtables: vec!["_ZTV5Other".into()],
        call_sites: vec![CallSite {
            function: "main".into(),
            test_index: 0,
            type_id: "_ZTS4Base".into(),
            offset: Some(0),
            kind: TestKind::PublicTypeTest,
            assumed: true,
            call: Some(CallKind::Call),
            const_args: Some(vec![ConstArg { width: 32, value: 7 }].into()),
            ret: RetKind::Int,
            ret_width: 1,
            location: Some("a.cpp:3:4".into()),
            calls_sharing_test: 1,
        }],
        functions: vec![FunctionFacts {
            name: "f".into(),
            linkage: Linkage::LinkonceOdr,
            visibility: Visibility::Default,
            reads_memory: false,
            writes_memory: false,
            uses_this: false,
            ret: RetKind::Int,
            ret_width: 1,
            param_widths: vec![0, 32],
            expr: Some(Expr { nodes: vec![arg, k, cmp] }),
            body: wpd_summary::Body::Code,
            noinline: false,
            optnone: false,
            cold: false,
            noreturn: false,
            calling_conv: 0,
            instructions: 2,
            profile_ids: vec![7],
        }],
        globals: vec![GlobalRefs {
            name: "main".into(),
            kind: GlobalKind::Function,
            linkage: Linkage::External,
            visibility: Visibility::Default,
            refs: vec!["_ZTV4Base".into()],
            instructions: 3,
            flags: 0,
        }],
        roots: SpecialRoots::default(),
        slot_reads: Default::default(),
    }
}

/// Re-seals `body` under `image`'s header with a valid length and checksum.
fn reseal(image: &[u8], body: &[u8]) -> Vec<u8> {
    let mut out = image[..40].to_vec();
    out[16..24].copy_from_slice(&(body.len() as u64).to_le_bytes());
    out[24..40].copy_from_slice(&xxhash_rust::xxh3::xxh3_128(body).to_le_bytes());
    out.extend_from_slice(body);
    out
}

/// A small deterministic generator (xorshift), so failures reproduce.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Mutates the body of `value`'s file `rounds` times; each mutant must be
/// refused with one line naming the file, or decode to a value that passes
/// `check`. Returns (decoded, refused).
fn mutate<T: bincode::Decode<wpd_summary::ids::FileNames> + bincode::Encode + Validate>(
    kind: Kind,
    value: &T,
    rounds: usize,
    check: fn(&T),
) -> (usize, usize) {
    let image = encode(kind, value).unwrap();
    let body = image[40..].to_vec();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut ok, mut err) = (0, 0);
    for _ in 0..rounds {
        let mut b = body.clone();
        for _ in 0..1 + rng.below(4) {
            let i = rng.below(b.len());
            match rng.below(4) {
                0 => b[i] ^= 1 << rng.below(8),
                1 => b[i] = rng.next() as u8,
                2 => b.insert(i, rng.next() as u8),
                _ => {
                    b.remove(i);
                }
            }
            if b.is_empty() {
                b.push(0);
            }
        }
        match decode::<T>(kind, &reseal(&image, &b), Path::new("m.wpds")) {
            Ok(v) => {
                check(&v);
                ok += 1;
            }
            Err(e) => {
                let e = e.to_string();
                assert!(e.starts_with("m.wpds: ") && !e.contains('\n'), "{e}");
                err += 1;
            }
        }
    }
    (ok, err)
}

/// What the thin link relies on in a summary that passed validation.
fn check_summary(s: &ModuleSummary) {
    for v in &s.vtables {
        for (i, slot) in v.slots.iter().enumerate() {
            assert_eq!(v.slots.binary_search_by_key(&slot.offset, |s| s.offset), Ok(i));
            if slot.kind == SlotKind::Function {
                assert!(slot.function.is_some());
            }
        }
        assert!(v.type_ids.iter().all(|t| t.offset <= v.size && v.size <= 1 << 32));
    }
    assert!(s.module.hash.get(..16).is_some());
    for f in &s.functions {
        let Some(e) = &f.expr else { continue };
        // Well formed: with every parameter known, only poison-prone
        // operators may fail to evaluate.
        let args: Vec<Option<u64>> = f.param_widths.iter().map(|_| Some(3)).collect();
        let partial = e.nodes.iter().any(|n| {
            matches!(
                n.op,
                ExprOp::Shl
                    | ExprOp::LShr
                    | ExprOp::AShr
                    | ExprOp::UDiv
                    | ExprOp::SDiv
                    | ExprOp::URem
                    | ExprOp::SRem
                    | ExprOp::Abs
            )
        });
        assert!(partial || e.eval(&args).is_some(), "{e:?}");
        assert_eq!(e.width(), Some(f.ret_width));
    }
}

/// What a backend relies on in a plan that passed validation.
fn check_plan(p: &Plan) {
    for d in &p.decisions {
        assert_eq!(p.decision(&d.type_id, d.offset), Some(d));
        assert_eq!(d.resolution == Resolution::SingleImpl, d.target.is_some());
        for a in &d.by_args {
            assert!((1..=64).contains(&a.width) && a.bit.is_none_or(|b| b < 8));
        }
    }
    for l in &p.layouts {
        assert_eq!(p.layout(&l.symbol, l.module), Some(l));
        assert!(l.module.is_none_or(|m| p.modules.get(m).is_some()));
    }
}

#[test]
fn mutated_summaries_never_panic() {
    assert_eq!(sample_summary().validate(), Ok(()));
    let (ok, err) = mutate(Kind::Summary, &sample_summary(), 20_000, check_summary);
    // Both outcomes happen: the test really reaches the decoder.
    assert!(ok > 0 && err > 0, "ok {ok} err {err}");
}

#[test]
fn mutated_plans_never_panic() {
    let plan = Plan {
        modules: PerModule::from_vec(vec![PlanModule {
            name: "a.o".into(),
            hash: "00112233445566778899aabbccddeeff".into(),
            promotions: vec![Promotion { symbol: "f".into(), promoted: "f.wpd.00".into() }],
            vtable_aliases: vec![],
            keep: vec!["g".into()],
            outside_program: vec!["h".into()],
        }]),
        decisions: vec![
            SlotDecision {
                type_id: "_ZTS4Base".into(),
                offset: 16,
                resolution: Resolution::VirtualConstProp,
                targets: vec!["f".into(), "g".into()],
                target: None,
                vtables: 2,
                call_sites: 3,
                devirtualized: 3,
                reason: None,
                by_args: vec![ArgDecision {
                    args: vec![1, 2],
                    resolution: Resolution::VirtualConstProp,
                    width: 1,
                    value: 0,
                    member_symbol: None,
                    member_offset: 0,
                    byte_offset: -17,
                    bit: Some(3),
                    call_sites: 3,
                    reason: None,
                }],
                speculative: vec![],
                speculated: 0,
                closed_set: vec![],
                dispatched: 0,
                dispatch_index: None,
                not_dispatched_in: Vec::new(),
                wrappers_guarded: false,
            },
            SlotDecision {
                type_id: "_ZTS4Base".into(),
                offset: 24,
                resolution: Resolution::ClosedSet,
                targets: vec!["f".into(), "g".into()],
                target: None,
                vtables: 3,
                call_sites: 2,
                devirtualized: 2,
                reason: None,
                by_args: vec![],
                speculative: vec![],
                speculated: 0,
                closed_set: vec![
                    DispatchCase {
                        target: "f".into(),
                        vtables: vec![AddressPoint { symbol: "_ZTV1A".into(), offset: 16 }],
                        profile_ids: vec![],
                    },
                    DispatchCase {
                        target: "g".into(),
                        vtables: vec![
                            AddressPoint { symbol: "_ZTV1B".into(), offset: 16 },
                            AddressPoint { symbol: "_ZTV1C".into(), offset: 16 },
                        ],
                        profile_ids: vec![3, 9],
                    },
                ],
                dispatched: 2,
                dispatch_index: Some(-9),
                not_dispatched_in: Vec::new(),
                wrappers_guarded: false,
            },
        ],
        layouts: vec![VtableLayout { symbol: "_ZTV4Base".into(), module: None, before: vec![0; 8], after: vec![] }],
        options: PlanOptions { closed_set: 4, ..PlanOptions::default() },
        stats: PlanStats {
            call_sites: 5,
            virtual_const_prop: 3,
            closed_set: 2,
            vtable_bytes_added: 8,
            ..PlanStats::default()
        },
        ..Plan::default()
    };
    assert_eq!(plan.validate(), Ok(()));
    let (ok, err) = mutate(Kind::Plan, &plan, 20_000, check_plan);
    assert!(ok > 0 && err > 0, "ok {ok} err {err}");
}

#[test]
fn decoded_expressions_evaluate_without_panicking() {
    // Whatever a corrupt summary decodes to, even unvalidated, evaluating
    // its expressions is safe (operands are checked against the node order).
    let image = encode(Kind::Summary, &sample_summary()).unwrap();
    let body = image[40..].to_vec();
    let mut rng = Rng(42);
    for _ in 0..20_000 {
        let mut b = body.clone();
        let i = rng.below(b.len());
        b[i] = rng.next() as u8;
        if let Ok(s) = decode_unchecked::<ModuleSummary>(Kind::Summary, &reseal(&image, &b), Path::new("e")) {
            for f in &s.functions {
                if let Some(e) = &f.expr {
                    let _ = e.eval(&[None, Some(rng.next()), Some(rng.next())]);
                }
            }
        }
    }
}

/// Call sites, slots and globals decode through hand-written fast paths
/// for one-byte numbers, flags and variants (`fast_decode.rs`), with
/// bincode's own decoding for everything else: every field on both sides
/// of the one-byte boundary (251), every variant and every `None`/`Some`
/// must come back as it was written.
#[test]
fn records_decode_as_written_on_both_sides_of_one_byte() {
    let numbers = [0u32, 1, 250, 251, 252, 65_535, 65_536, u32::MAX];
    let offsets = [None, Some(0u64), Some(250), Some(251), Some(1 << 20), Some(u64::MAX)];
    let kinds = [TestKind::TypeTest, TestKind::PublicTypeTest, TestKind::TypeCheckedLoad];
    let mut sites = Vec::new();
    for (i, &n) in numbers.iter().enumerate() {
        let offset = offsets[i % offsets.len()];
        let call = match i % 3 {
            0 => None,
            1 => Some(CallKind::Call),
            _ => Some(CallKind::Invoke),
        };
        let ret = [RetKind::Void, RetKind::Int, RetKind::Other][i % 3];
        sites.push(CallSite {
            function: format!("f{i}").into(),
            test_index: n,
            type_id: if i % 2 == 0 { "_ZTS4Base".into() } else { "_ZTS1B".into() },
            offset,
            kind: kinds[i % 3],
            assumed: i % 2 == 0,
            call,
            const_args: (i % 2 == 1).then(|| vec![ConstArg { width: 64, value: u64::from(n) << 3 }].into()),
            ret,
            ret_width: n,
            location: (i % 3 != 2).then(|| format!("a.cpp:{n}:1").into()),
            calls_sharing_test: n.wrapping_mul(7),
        });
    }
    // Slots and globals decode through the same fast paths: their offsets,
    // signed values and instruction counts cross the boundary too.
    let mut base = sample_summary();
    let values = [0i64, -1, 1, 125, -125, 126, -126, i64::MIN, i64::MAX];
    base.vtables[0].size = 1 << 40;
    base.vtables[0].slots = values
        .iter()
        .enumerate()
        .map(|(i, &value)| Slot {
            offset: [0u64, 250, 251, 1 << 20, 1 << 33][i % 5] + 8 * i as u64,
            kind: SlotKind::ALL[i % SlotKind::ALL.len()],
            symbol: (i % 2 == 0).then(|| format!("s{i}").into()),
            function: (i % 3 == 0).then(|| format!("f{i}").into()),
            value,
            relative_to: [None, Some(0), Some(300)][i % 3],
        })
        .collect();
    base.globals = numbers
        .iter()
        .enumerate()
        .map(|(i, &n)| GlobalRefs {
            name: format!("g{i}").into(),
            kind: GlobalKind::ALL[i % GlobalKind::ALL.len()],
            linkage: Linkage::ALL[i % Linkage::ALL.len()],
            visibility: Visibility::ALL[i % Visibility::ALL.len()],
            refs: (0..i).map(|k| format!("r{k}").into()).collect(),
            instructions: n,
            flags: u64::from(n) << 40 | i as u64,
        })
        .collect();
    let summary = ModuleSummary { call_sites: sites, ..base };
    let image = encode(Kind::Summary, &summary).unwrap();
    let back: ModuleSummary = decode_unchecked(Kind::Summary, &image, Path::new("w.wpds")).unwrap();
    assert_eq!(back.call_sites, summary.call_sites);
    assert_eq!(back.vtables, summary.vtables);
    assert_eq!(back.globals, summary.globals);
}
