//! Facts about virtual function bodies: memory behaviour, use of `this`,
//! attributes, and when the result is a pure function of the integer
//! arguments, that function as an [`Expr`] the thin link can evaluate.

use std::collections::{BTreeSet, HashMap};
use wpd_llvm::{Context, IntPredicate, Module, Opcode, Type, TypeKind, Value};
use wpd_summary::{Body, CmpPred, Expr, ExprNode, ExprOp, FunctionFacts, Linkage, RetKind, Signature};

/// Largest expression recorded (nodes); bigger bodies are not worth folding.
const MAX_EXPR_NODES: usize = 64;

/// Facts for each wanted function defined in one of `modules`, preferring a
/// real definition over an `available_externally` copy.
pub(super) fn collect<'m>(modules: &[&'m Module<'_>], wanted: &BTreeSet<&str>) -> Vec<FunctionFacts> {
    let mut chosen: HashMap<String, Value<'m>> = HashMap::new();
    for &module in modules {
        for f in module.functions() {
            if f.is_declaration() {
                continue;
            }
            let name = f.name();
            if !wanted.contains(name.as_str()) {
                continue;
            }
            let better = match chosen.get(&name) {
                None => true,
                Some(old) => {
                    old.linkage() == Linkage::AvailableExternally && f.linkage() != Linkage::AvailableExternally
                }
            };
            if better {
                chosen.insert(name, f);
            }
        }
    }
    let attrs = Attrs::new();
    let mut out: Vec<FunctionFacts> = chosen.into_iter().map(|(name, f)| facts(name, f, &attrs)).collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

struct Attrs {
    noinline: u32,
    optnone: u32,
    cold: u32,
    noreturn: u32,
}

impl Attrs {
    fn new() -> Attrs {
        Attrs {
            noinline: Context::attr_kind("noinline"),
            optnone: Context::attr_kind("optnone"),
            cold: Context::attr_kind("cold"),
            noreturn: Context::attr_kind("noreturn"),
        }
    }
}

/// The signature of function type `fty`, as [`FunctionFacts`] records it.
pub(super) fn signature(fty: Type<'_>) -> Signature {
    let (ret, ret_width) = match fty.return_type().map(|t| (t.kind(), t.int_width())) {
        Some((TypeKind::LLVMVoidTypeKind, _)) => (RetKind::Void, 0),
        Some((TypeKind::LLVMIntegerTypeKind, Some(w))) => (RetKind::Int, w),
        _ => (RetKind::Other, 0),
    };
    Signature { ret, ret_width, param_widths: fty.param_types().iter().map(|t| t.int_width().unwrap_or(0)).collect() }
}

fn facts(name: String, f: Value<'_>, attrs: &Attrs) -> FunctionFacts {
    let fty = f.global_value_type();
    let Signature { ret, ret_width, param_widths } = signature(fty);
    let params = f.params();
    let blocks = f.blocks();
    let (mut reads, mut writes, mut count) = (false, false, 0u32);
    for b in &blocks {
        for i in b.instructions() {
            reads |= i.may_read_memory();
            writes |= i.may_write_memory();
            count += 1;
        }
    }
    let body = body_kind(blocks.first().copied());
    FunctionFacts {
        name: name.into(),
        linkage: f.linkage(),
        visibility: f.visibility(),
        reads_memory: reads,
        writes_memory: writes,
        uses_this: params.first().is_some_and(|p| p.has_uses()),
        ret,
        ret_width,
        param_widths,
        expr: if reads || writes { None } else { build_expr(f, &params) },
        body,
        noinline: f.has_fn_attr(attrs.noinline),
        optnone: f.has_fn_attr(attrs.optnone),
        cold: f.has_fn_attr(attrs.cold),
        noreturn: f.has_fn_attr(attrs.noreturn),
        calling_conv: f.calling_conv(),
        instructions: count,
        profile_ids: f.profile_ids(),
    }
}

/// What the entry block does: nothing but `unreachable`, `llvm.trap` calls
/// then `unreachable`, or anything else. A block that throws or aborts
/// before `unreachable` is code: LLVM 19's mustBeUnreachableFunction
/// dropped such functions as targets and miscompiled (reverted in LLVM 20).
fn body_kind(entry: Option<wpd_llvm::Block<'_>>) -> Body {
    let Some(entry) = entry else { return Body::Code };
    let mut traps = 0;
    for i in entry.instructions() {
        if i.opcode() == Some(Opcode::LLVMUnreachable) {
            return if traps == 0 { Body::Unreachable } else { Body::TrapOnly };
        }
        if i.called_function().is_some_and(|f| f.name() == "llvm.trap") {
            traps += 1;
            continue;
        }
        return Body::Code;
    }
    Body::Code
}

/// The returned value as an expression, when the body is a single block of
/// supported integer operations ending in `ret`.
fn build_expr(f: Value<'_>, params: &[Value<'_>]) -> Option<Expr> {
    let blocks = f.blocks();
    let [block] = blocks.as_slice() else { return None };
    let term = block.terminator()?;
    if term.opcode() != Some(Opcode::LLVMRet) {
        return None;
    }
    // Every instruction must be one we can express (so nothing else happens).
    for inst in block.instructions() {
        if inst != term && expr_op(inst).is_none() {
            return None;
        }
    }
    let mut b = ExprBuilder { params, nodes: Vec::new(), memo: HashMap::new() };
    b.node(term.operand(0)?)?;
    Some(Expr { nodes: b.nodes })
}

/// The expression operation of an instruction: an arithmetic opcode, or a
/// call of a min/max/abs intrinsic.
fn expr_op(inst: Value<'_>) -> Option<ExprOp> {
    let op = inst.opcode()?;
    if op != Opcode::LLVMCall {
        return op_of(op);
    }
    let name = inst.called_function()?.name();
    let base = name.strip_prefix("llvm.")?.split('.').next()?;
    Some(match base {
        "smin" => ExprOp::SMin,
        "smax" => ExprOp::SMax,
        "umin" => ExprOp::UMin,
        "umax" => ExprOp::UMax,
        "abs" => ExprOp::Abs,
        _ => return None,
    })
}

fn op_of(op: Opcode) -> Option<ExprOp> {
    Some(match op {
        Opcode::LLVMAdd => ExprOp::Add,
        Opcode::LLVMSub => ExprOp::Sub,
        Opcode::LLVMMul => ExprOp::Mul,
        Opcode::LLVMAnd => ExprOp::And,
        Opcode::LLVMOr => ExprOp::Or,
        Opcode::LLVMXor => ExprOp::Xor,
        Opcode::LLVMShl => ExprOp::Shl,
        Opcode::LLVMLShr => ExprOp::LShr,
        Opcode::LLVMAShr => ExprOp::AShr,
        Opcode::LLVMICmp => ExprOp::ICmp,
        Opcode::LLVMSelect => ExprOp::Select,
        Opcode::LLVMZExt => ExprOp::ZExt,
        Opcode::LLVMSExt => ExprOp::SExt,
        Opcode::LLVMTrunc => ExprOp::Trunc,
        Opcode::LLVMUDiv => ExprOp::UDiv,
        Opcode::LLVMSDiv => ExprOp::SDiv,
        Opcode::LLVMURem => ExprOp::URem,
        Opcode::LLVMSRem => ExprOp::SRem,
        _ => return None,
    })
}

fn pred_of(p: IntPredicate) -> CmpPred {
    match p {
        IntPredicate::LLVMIntEQ => CmpPred::Eq,
        IntPredicate::LLVMIntNE => CmpPred::Ne,
        IntPredicate::LLVMIntUGT => CmpPred::Ugt,
        IntPredicate::LLVMIntUGE => CmpPred::Uge,
        IntPredicate::LLVMIntULT => CmpPred::Ult,
        IntPredicate::LLVMIntULE => CmpPred::Ule,
        IntPredicate::LLVMIntSGT => CmpPred::Sgt,
        IntPredicate::LLVMIntSGE => CmpPred::Sge,
        IntPredicate::LLVMIntSLT => CmpPred::Slt,
        IntPredicate::LLVMIntSLE => CmpPred::Sle,
    }
}

struct ExprBuilder<'a, 'm> {
    params: &'a [Value<'m>],
    nodes: Vec<ExprNode>,
    memo: HashMap<usize, u32>,
}

impl<'m> ExprBuilder<'_, 'm> {
    fn node(&mut self, v: Value<'m>) -> Option<u32> {
        if let Some(&i) = self.memo.get(&v.id()) {
            return Some(i);
        }
        let width = v.ty().int_width().filter(|w| (1..=64).contains(w))?;
        let mut n = ExprNode { op: ExprOp::Const, width, operands: Vec::new(), value: 0, pred: None };
        if v.is_const_int() {
            n.value = v.as_const_int()?;
        } else if v.is_argument() {
            n.op = ExprOp::Arg;
            n.value = self.params.iter().position(|p| *p == v)? as u64;
        } else {
            n.op = expr_op(v)?;
            n.pred = v.icmp_predicate().map(pred_of);
            let arity = match n.op {
                ExprOp::Select => 3,
                ExprOp::ZExt | ExprOp::SExt | ExprOp::Trunc => 1,
                ExprOp::Abs => {
                    // llvm.abs(x, i1 int_min_is_poison): the flag is a constant.
                    n.value = v.operand(1)?.as_const_int()?;
                    1
                }
                _ => 2,
            };
            for k in 0..arity {
                let operand = v.operand(k)?;
                n.operands.push(self.node(operand)?);
            }
        }
        if self.nodes.len() >= MAX_EXPR_NODES {
            return None;
        }
        let index = self.nodes.len() as u32;
        self.nodes.push(n);
        self.memo.insert(v.id(), index);
        Some(index)
    }
}
