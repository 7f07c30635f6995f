//! Small integer expressions recorded for virtual function bodies, and their
//! evaluator. A virtual function whose result is a pure function of its
//! integer arguments is stored as a DAG of these nodes so the thin link can
//! compute its result for constant arguments without reading IR.
//!
//! Semantics follow LLVM IR on fixed-width two's complement integers:
//! arithmetic wraps, shifts by the bit width or more are poison (and so not
//! foldable: evaluation returns `None`), division by zero and signed
//! `INT_MIN / -1` are undefined (not foldable), comparisons give `i1`.
//! Poison-generating flags (`nsw`, `nuw`, `exact`) are not recorded: folding
//! to the wrapped value refines poison, as LLVM's constant folder does.

use serde::{Deserialize, Serialize};

/// Integer comparison predicates, as `icmp`.
#[derive(Serialize, Deserialize, bincode::Encode, bincode::Decode, Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[bincode(decode_context = "crate::ids::FileNames")]
#[serde(rename_all = "snake_case")]
pub enum CmpPred {
    Eq,
    Ne,
    Ugt,
    Uge,
    Ult,
    Ule,
    Sgt,
    Sge,
    Slt,
    Sle,
}

/// Operation of one node (serialized with LLVM's instruction names).
#[derive(Serialize, Deserialize, bincode::Encode, bincode::Decode, Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[bincode(decode_context = "crate::ids::FileNames")]
#[serde(rename_all = "lowercase")]
pub enum ExprOp {
    /// `value` is the constant, zero-extended from `width`.
    Const,
    /// `value` is the parameter index (0 is `this`).
    Arg,
    Add,
    Sub,
    Mul,
    And,
    Or,
    Xor,
    Shl,
    LShr,
    AShr,
    /// `icmp`; the predicate is in `pred`, result width 1.
    ICmp,
    /// operands: condition (i1), true value, false value.
    Select,
    ZExt,
    SExt,
    Trunc,
    /// Division and remainder: by zero, or `INT_MIN / -1` signed, is not
    /// foldable (undefined behaviour in IR).
    UDiv,
    SDiv,
    URem,
    SRem,
    /// `llvm.smin`/`smax`/`umin`/`umax` intrinsics.
    SMin,
    SMax,
    UMin,
    UMax,
    /// `llvm.abs`; `value` 1 when `INT_MIN` is poison (the intrinsic's flag).
    Abs,
}

/// One node; `operands` index earlier nodes only.
#[derive(Serialize, Deserialize, bincode::Encode, bincode::Decode, Debug, Clone, PartialEq, Eq, Hash)]
#[bincode(decode_context = "crate::ids::FileNames")]
pub struct ExprNode {
    pub op: ExprOp,
    /// Bit width of the result (1..=64).
    pub width: u32,
    pub operands: Vec<u32>,
    /// Constant value or parameter index, see [`ExprOp`].
    pub value: u64,
    /// Predicate of an `icmp` node.
    pub pred: Option<CmpPred>,
}

/// An expression DAG in topological order; the last node is the result.
#[derive(Serialize, Deserialize, bincode::Encode, bincode::Decode, Debug, Clone, PartialEq, Eq, Hash)]
#[bincode(decode_context = "crate::ids::FileNames")]
pub struct Expr {
    pub nodes: Vec<ExprNode>,
}

/// Keeps the low `width` bits.
pub fn mask(value: u64, width: u32) -> u64 {
    if width >= 64 { value } else { value & ((1u64 << width) - 1) }
}

/// Sign-extends the low `width` bits to 64 bits.
pub fn sext(value: u64, width: u32) -> i64 {
    if width == 0 || width >= 64 {
        value as i64
    } else {
        let shift = 64 - width;
        ((value << shift) as i64) >> shift
    }
}

impl Expr {
    /// Parameter indices the expression reads, sorted and unique.
    pub fn args_used(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self.nodes.iter().filter(|n| n.op == ExprOp::Arg).map(|n| n.value).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Width of the result.
    pub fn width(&self) -> Option<u32> {
        self.nodes.last().map(|n| n.width)
    }

    /// Evaluates with `args[i]` as the value of parameter `i` (zero-extended
    /// from the parameter width; `None` entries are unknown, e.g. `this`).
    /// Returns the result zero-extended from its width, or `None` when the
    /// expression is malformed, reads an unknown argument, or hits poison.
    pub fn eval(&self, args: &[Option<u64>]) -> Option<u64> {
        let mut vals: Vec<u64> = Vec::with_capacity(self.nodes.len());
        for (i, n) in self.nodes.iter().enumerate() {
            if n.width == 0 || n.width > 64 {
                return None;
            }
            let opnd = |k: usize| -> Option<(u64, u32)> {
                let idx = *n.operands.get(k)? as usize;
                if idx >= i {
                    return None;
                }
                Some((vals[idx], self.nodes[idx].width))
            };
            let w = n.width;
            let bin = |f: &dyn Fn(u64, u64) -> Option<u64>| -> Option<u64> {
                let (a, wa) = opnd(0)?;
                let (b, wb) = opnd(1)?;
                if wa != w || wb != w || n.operands.len() != 2 {
                    return None;
                }
                f(a, b).map(|r| mask(r, w))
            };
            let v = match n.op {
                ExprOp::Const => mask(n.value, w),
                ExprOp::Arg => mask((*args.get(n.value as usize)?)?, w),
                ExprOp::Add => bin(&|a, b| Some(a.wrapping_add(b)))?,
                ExprOp::Sub => bin(&|a, b| Some(a.wrapping_sub(b)))?,
                ExprOp::Mul => bin(&|a, b| Some(a.wrapping_mul(b)))?,
                ExprOp::And => bin(&|a, b| Some(a & b))?,
                ExprOp::Or => bin(&|a, b| Some(a | b))?,
                ExprOp::Xor => bin(&|a, b| Some(a ^ b))?,
                ExprOp::Shl => bin(&|a, b| (b < w as u64).then(|| a << b))?,
                ExprOp::UDiv => bin(&|a, b| (b != 0).then(|| a / b))?,
                ExprOp::URem => bin(&|a, b| (b != 0).then(|| a % b))?,
                ExprOp::SDiv | ExprOp::SRem => bin(&|a, b| {
                    let (sa, sb) = (sext(a, w), sext(b, w));
                    let min = if w >= 64 { i64::MIN } else { -(1i64 << (w - 1)) };
                    if sb == 0 || (sa == min && sb == -1) {
                        return None;
                    }
                    Some(if n.op == ExprOp::SDiv { (sa / sb) as u64 } else { (sa % sb) as u64 })
                })?,
                ExprOp::SMin => bin(&|a, b| Some(if sext(a, w) <= sext(b, w) { a } else { b }))?,
                ExprOp::SMax => bin(&|a, b| Some(if sext(a, w) >= sext(b, w) { a } else { b }))?,
                ExprOp::UMin => bin(&|a, b| Some(a.min(b)))?,
                ExprOp::UMax => bin(&|a, b| Some(a.max(b)))?,
                ExprOp::Abs => {
                    let (a, wa) = opnd(0)?;
                    if wa != w || n.operands.len() != 1 {
                        return None;
                    }
                    let sa = sext(a, w);
                    let min = if w >= 64 { i64::MIN } else { -(1i64 << (w - 1)) };
                    if sa == min && n.value == 1 {
                        return None;
                    }
                    mask(sa.unsigned_abs(), w)
                }
                ExprOp::LShr => bin(&|a, b| (b < w as u64).then(|| a >> b))?,
                ExprOp::AShr => bin(&|a, b| (b < w as u64).then(|| (sext(a, w) >> b) as u64))?,
                ExprOp::ICmp => {
                    let (a, wa) = opnd(0)?;
                    let (b, wb) = opnd(1)?;
                    if wa != wb || w != 1 || n.operands.len() != 2 {
                        return None;
                    }
                    let (sa, sb) = (sext(a, wa), sext(b, wb));
                    let r = match n.pred? {
                        CmpPred::Eq => a == b,
                        CmpPred::Ne => a != b,
                        CmpPred::Ugt => a > b,
                        CmpPred::Uge => a >= b,
                        CmpPred::Ult => a < b,
                        CmpPred::Ule => a <= b,
                        CmpPred::Sgt => sa > sb,
                        CmpPred::Sge => sa >= sb,
                        CmpPred::Slt => sa < sb,
                        CmpPred::Sle => sa <= sb,
                    };
                    r as u64
                }
                ExprOp::Select => {
                    let (c, wc) = opnd(0)?;
                    let (t, wt) = opnd(1)?;
                    let (f, wf) = opnd(2)?;
                    if wc != 1 || wt != w || wf != w || n.operands.len() != 3 {
                        return None;
                    }
                    if c != 0 { t } else { f }
                }
                ExprOp::ZExt | ExprOp::SExt | ExprOp::Trunc => {
                    let (a, wa) = opnd(0)?;
                    if n.operands.len() != 1 {
                        return None;
                    }
                    match n.op {
                        ExprOp::ZExt if wa < w => a,
                        ExprOp::SExt if wa < w => mask(sext(a, wa) as u64, w),
                        ExprOp::Trunc if wa > w => mask(a, w),
                        _ => return None,
                    }
                }
            };
            vals.push(v);
        }
        vals.last().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(op: ExprOp, width: u32, operands: &[u32], value: u64) -> ExprNode {
        ExprNode { op, width, operands: operands.to_vec(), value, pred: None }
    }

    #[test]
    fn is_of_type() {
        // return t == 3  (t is parameter 1, i32)
        let mut cmp = node(ExprOp::ICmp, 1, &[0, 1], 0);
        cmp.pred = Some(CmpPred::Eq);
        let e = Expr { nodes: vec![node(ExprOp::Arg, 32, &[], 1), node(ExprOp::Const, 32, &[], 3), cmp] };
        assert_eq!(e.eval(&[None, Some(3)]), Some(1));
        assert_eq!(e.eval(&[None, Some(4)]), Some(0));
        assert_eq!(e.eval(&[None]), None);
        assert_eq!(e.args_used(), vec![1]);
    }

    #[test]
    fn wrapping_and_signedness() {
        // (i8 x * 3) sext to i32, x = 100 -> 300 mod 256 = 44
        let e = Expr {
            nodes: vec![
                node(ExprOp::Arg, 8, &[], 1),
                node(ExprOp::Const, 8, &[], 3),
                node(ExprOp::Mul, 8, &[0, 1], 0),
                node(ExprOp::SExt, 32, &[2], 0),
            ],
        };
        assert_eq!(e.eval(&[None, Some(100)]), Some(44));
        // x = 200 -> 600 mod 256 = 88
        assert_eq!(e.eval(&[None, Some(200)]), Some(88));
        // x = 50 -> 150 = -106 as i8, sext -> 0xffffff96
        assert_eq!(e.eval(&[None, Some(50)]), Some(0xffff_ff96));
    }

    #[test]
    fn oversized_shift_is_poison() {
        let e = Expr {
            nodes: vec![
                node(ExprOp::Const, 32, &[], 1),
                node(ExprOp::Arg, 32, &[], 1),
                node(ExprOp::Shl, 32, &[0, 1], 0),
            ],
        };
        assert_eq!(e.eval(&[None, Some(31)]), Some(0x8000_0000));
        assert_eq!(e.eval(&[None, Some(32)]), None);
        let ashr = Expr {
            nodes: vec![
                node(ExprOp::Const, 16, &[], 0x8000),
                node(ExprOp::Arg, 16, &[], 1),
                node(ExprOp::AShr, 16, &[0, 1], 0),
            ],
        };
        assert_eq!(ashr.eval(&[None, Some(15)]), Some(0xffff));
    }

    #[test]
    fn division_min_max_abs() {
        let e = |op: ExprOp, w: u32, a: u64, b: u64| {
            Expr {
                nodes: vec![node(ExprOp::Const, w, &[], a), node(ExprOp::Const, w, &[], b), node(op, w, &[0, 1], 0)],
            }
            .eval(&[])
        };
        assert_eq!(e(ExprOp::SDiv, 32, (-7i32) as u32 as u64, 2), Some((-3i32) as u32 as u64));
        assert_eq!(e(ExprOp::SRem, 32, (-7i32) as u32 as u64, 2), Some((-1i32) as u32 as u64));
        assert_eq!(e(ExprOp::UDiv, 8, 200, 3), Some(66));
        assert_eq!(e(ExprOp::URem, 8, 200, 3), Some(2));
        assert_eq!(e(ExprOp::UDiv, 8, 1, 0), None);
        assert_eq!(e(ExprOp::SDiv, 8, 0x80, 0xFF), None); // INT_MIN / -1
        assert_eq!(e(ExprOp::SRem, 64, i64::MIN as u64, u64::MAX), None);
        assert_eq!(e(ExprOp::SMin, 16, 0xFFFF, 3), Some(0xFFFF));
        assert_eq!(e(ExprOp::UMin, 16, 0xFFFF, 3), Some(3));
        assert_eq!(e(ExprOp::SMax, 16, 0xFFFF, 3), Some(3));
        assert_eq!(e(ExprOp::UMax, 16, 0xFFFF, 3), Some(0xFFFF));
        let abs = |a: u64, poison: u64| {
            let mut n = node(ExprOp::Abs, 8, &[0], poison);
            n.value = poison;
            Expr { nodes: vec![node(ExprOp::Const, 8, &[], a), n] }.eval(&[])
        };
        assert_eq!(abs(0xFB, 1), Some(5));
        assert_eq!(abs(0x80, 0), Some(0x80));
        assert_eq!(abs(0x80, 1), None);
    }

    #[test]
    fn malformed_is_rejected() {
        // forward reference
        let e = Expr { nodes: vec![node(ExprOp::Add, 32, &[0, 0], 0)] };
        assert_eq!(e.eval(&[]), None);
        // width mismatch
        let e = Expr {
            nodes: vec![
                node(ExprOp::Const, 8, &[], 1),
                node(ExprOp::Const, 16, &[], 1),
                node(ExprOp::Add, 16, &[0, 1], 0),
            ],
        };
        assert_eq!(e.eval(&[]), None);
        assert_eq!(Expr { nodes: vec![] }.eval(&[]), None);
    }

    #[test]
    fn signed_compare_and_select() {
        // x < 0 ? -1 : 1  on i64
        let mut cmp = node(ExprOp::ICmp, 1, &[0, 1], 0);
        cmp.pred = Some(CmpPred::Slt);
        let e = Expr {
            nodes: vec![
                node(ExprOp::Arg, 64, &[], 1),
                node(ExprOp::Const, 64, &[], 0),
                cmp,
                node(ExprOp::Const, 64, &[], u64::MAX),
                node(ExprOp::Const, 64, &[], 1),
                node(ExprOp::Select, 64, &[2, 3, 4], 0),
            ],
        };
        assert_eq!(e.eval(&[None, Some(u64::MAX - 4)]), Some(u64::MAX));
        assert_eq!(e.eval(&[None, Some(5)]), Some(1));
    }
}
