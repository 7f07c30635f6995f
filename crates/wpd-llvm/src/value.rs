//! Copyable handles to values, types and blocks of a live module.

use crate::{Linkage, Visibility, ffi, lossy, name_text, raw_bytes};
use llvm_sys::core as c;
use llvm_sys::prelude::*;
use llvm_sys::{LLVMIntPredicate, LLVMLinkage, LLVMOpcode, LLVMTypeKind, LLVMVisibility};
use std::marker::PhantomData;

pub use llvm_sys::LLVMOpcode as Opcode;
pub use llvm_sys::LLVMTypeKind as TypeKind;

/// A value (global, constant, instruction, argument) of a live module.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Value<'m> {
    raw: LLVMValueRef,
    _m: PhantomData<&'m ()>,
}

/// A type of a live module's context.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Type<'m> {
    pub(crate) raw: LLVMTypeRef,
    _m: PhantomData<&'m ()>,
}

/// A basic block.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Block<'m> {
    raw: LLVMBasicBlockRef,
    _m: PhantomData<&'m ()>,
}

/// An operand of a metadata node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MdOperand {
    /// A constant integer (`i64 16`), zero-extended.
    Int(u64),
    /// A metadata string.
    String(String),
    /// A node; `id` is its identity within the context.
    Node { id: usize, distinct: bool },
    /// Anything else.
    Other,
}

/// Reads the operands of a metadata node given as a `MetadataAsValue`.
pub(crate) fn md_node_operands(node: LLVMValueRef) -> Vec<MdOperand> {
    // SAFETY: `node` wraps a live MDNode (callers only pass node metadata).
    let n = unsafe { c::LLVMGetMDNodeNumOperands(node) } as usize;
    let mut ops: Vec<LLVMValueRef> = vec![std::ptr::null_mut(); n];
    // SAFETY: `ops` has room for `n` operands.
    unsafe { c::LLVMGetMDNodeOperands(node, ops.as_mut_ptr()) };
    ops.into_iter().map(md_operand).collect()
}

fn md_operand(v: LLVMValueRef) -> MdOperand {
    if v.is_null() {
        return MdOperand::Other;
    }
    let val = Value::new(v);
    if let Some(i) = val.as_const_int() {
        return MdOperand::Int(i);
    }
    if let Some(s) = val.md_string() {
        return MdOperand::String(s);
    }
    // SAFETY: `v` is a live value; the checks return null when not matching.
    unsafe {
        if !c::LLVMIsAMDNode(v).is_null() {
            let md = c::LLVMValueAsMetadata(v);
            return MdOperand::Node { id: md as usize, distinct: ffi::wpd_md_is_distinct(md) != 0 };
        }
    }
    MdOperand::Other
}

macro_rules! isa {
    ($($name:ident => $f:path),* $(,)?) => {$(
        #[doc = concat!("`", stringify!($f), "` is non-null.")]
        pub fn $name(self) -> bool {
            // SAFETY: isa-style checks accept any live value.
            !unsafe { $f(self.raw) }.is_null()
        }
    )*};
}

impl<'m> Value<'m> {
    pub(crate) fn new(raw: LLVMValueRef) -> Self {
        Value { raw, _m: PhantomData }
    }

    pub(crate) fn raw(self) -> LLVMValueRef {
        self.raw
    }

    /// Identity of the value within its context (for maps and sets).
    pub fn id(self) -> usize {
        self.raw as usize
    }

    isa! {
        is_function => c::LLVMIsAFunction,
        is_global_variable => c::LLVMIsAGlobalVariable,
        is_global_alias => c::LLVMIsAGlobalAlias,
        is_global_value => c::LLVMIsAGlobalValue,
        is_constant => c::LLVMIsAConstant,
        is_const_int => c::LLVMIsAConstantInt,
        is_const_expr => c::LLVMIsAConstantExpr,
        is_const_null => c::LLVMIsAConstantPointerNull,
        is_undef => c::LLVMIsAUndefValue,
        is_instruction => c::LLVMIsAInstruction,
        is_call => c::LLVMIsACallInst,
        is_invoke => c::LLVMIsAInvokeInst,
        is_callbr => c::LLVMIsACallBrInst,
        is_argument => c::LLVMIsAArgument,
        is_metadata => c::LLVMIsAMDNode,
    }

    /// A `call`, `invoke` or `callbr`.
    pub fn is_call_base(self) -> bool {
        self.is_call() || self.is_invoke() || self.is_callbr()
    }

    /// A `musttail` call.
    pub fn is_must_tail_call(self) -> bool {
        // SAFETY: the value is live, and a call instruction (checked first)
        // is what LLVMGetTailCallKind reads.
        self.is_call()
            && unsafe { c::LLVMGetTailCallKind(self.raw) } == llvm_sys::LLVMTailCallKind::LLVMTailCallKindMustTail
    }

    /// The value's name (empty for unnamed values), in the lossless text
    /// form of `wpd_summary::name`.
    pub fn name(self) -> String {
        wpd_summary::name::from_bytes(self.name_bytes()).into_owned()
    }

    /// The bytes of the value's name as LLVM holds them, without making a
    /// `String` (for tests run on every instruction). The borrow ends
    /// before anything could rename the value.
    pub(crate) fn name_bytes(&self) -> &[u8] {
        let mut len = 0usize;
        // SAFETY: returns a pointer/length pair owned by the value.
        let p = unsafe { c::LLVMGetValueName2(self.raw, &mut len) };
        // SAFETY: `p` is null or points to `len` bytes, which live as long
        // as the value keeps its name; the slice borrows `self`, and nothing
        // renames a value while a caller holds it (every caller uses it at
        // once).
        unsafe { raw_bytes(p, len) }
    }

    /// The value's type.
    pub fn ty(self) -> Type<'m> {
        // SAFETY: every value has a type.
        Type::new(unsafe { c::LLVMTypeOf(self.raw) })
    }

    /// For a global: the type of what it defines (not `ptr`).
    pub fn global_value_type(self) -> Type<'m> {
        debug_assert!(self.is_global_value());
        // SAFETY: callers pass a global value.
        Type::new(unsafe { c::LLVMGlobalGetValueType(self.raw) })
    }

    /// Linkage of a global value.
    pub fn linkage(self) -> Linkage {
        // SAFETY: callers pass a global value.
        match unsafe { c::LLVMGetLinkage(self.raw) } {
            LLVMLinkage::LLVMAvailableExternallyLinkage => Linkage::AvailableExternally,
            LLVMLinkage::LLVMLinkOnceAnyLinkage => Linkage::LinkonceAny,
            LLVMLinkage::LLVMLinkOnceODRLinkage | LLVMLinkage::LLVMLinkOnceODRAutoHideLinkage => Linkage::LinkonceOdr,
            LLVMLinkage::LLVMWeakAnyLinkage => Linkage::WeakAny,
            LLVMLinkage::LLVMWeakODRLinkage => Linkage::WeakOdr,
            LLVMLinkage::LLVMAppendingLinkage => Linkage::Appending,
            LLVMLinkage::LLVMInternalLinkage => Linkage::Internal,
            LLVMLinkage::LLVMPrivateLinkage
            | LLVMLinkage::LLVMLinkerPrivateLinkage
            | LLVMLinkage::LLVMLinkerPrivateWeakLinkage => Linkage::Private,
            LLVMLinkage::LLVMExternalWeakLinkage => Linkage::ExternalWeak,
            LLVMLinkage::LLVMCommonLinkage => Linkage::Common,
            _ => Linkage::External,
        }
    }

    /// Visibility of a global value.
    pub fn visibility(self) -> Visibility {
        // SAFETY: callers pass a global value.
        match unsafe { c::LLVMGetVisibility(self.raw) } {
            LLVMVisibility::LLVMHiddenVisibility => Visibility::Hidden,
            LLVMVisibility::LLVMProtectedVisibility => Visibility::Protected,
            LLVMVisibility::LLVMDefaultVisibility => Visibility::Default,
        }
    }

    /// Whether a global is only declared here.
    pub fn is_declaration(self) -> bool {
        // SAFETY: callers pass a global value.
        unsafe { c::LLVMIsDeclaration(self.raw) != 0 }
    }

    /// Whether a global variable is `constant`.
    pub fn is_global_constant(self) -> bool {
        // SAFETY: callers pass a global variable.
        unsafe { c::LLVMIsGlobalConstant(self.raw) != 0 }
    }

    /// Alignment of a global object in bytes (0 if unspecified).
    pub fn alignment(self) -> u64 {
        // SAFETY: callers pass a global object.
        u64::from(unsafe { c::LLVMGetAlignment(self.raw) })
    }

    /// Initializer of a global variable definition.
    pub fn initializer(self) -> Option<Value<'m>> {
        if !self.is_global_variable() || self.is_declaration() {
            return None;
        }
        // SAFETY: a defined global variable.
        let v = unsafe { c::LLVMGetInitializer(self.raw) };
        (!v.is_null()).then(|| Value::new(v))
    }

    /// The aliasee of a global alias.
    pub fn aliasee(self) -> Option<Value<'m>> {
        if !self.is_global_alias() {
            return None;
        }
        // SAFETY: a global alias.
        let v = unsafe { c::LLVMAliasGetAliasee(self.raw) };
        (!v.is_null()).then(|| Value::new(v))
    }

    /// Comdat name of a global object.
    pub fn comdat(self) -> Option<String> {
        let mut len = 0usize;
        // SAFETY: the shim checks the value is a global object.
        let p = unsafe { ffi::wpd_comdat_name(self.raw, &mut len) };
        // SAFETY: `p` points to `len` bytes owned by the comdat.
        (!p.is_null()).then(|| unsafe { name_text(p, len) })
    }

    /// Metadata attachments of a global object: (kind id, node operands).
    pub fn metadata(self) -> Vec<(u32, Vec<MdOperand>)> {
        let mut n = 0usize;
        // SAFETY: callers pass a global object; the entries are freed below.
        let entries = unsafe { c::LLVMGlobalCopyAllMetadata(self.raw, &mut n) };
        if entries.is_null() {
            return Vec::new();
        }
        // SAFETY: every value has a type, and every type a context.
        let ctx = unsafe { c::LLVMGetTypeContext(c::LLVMTypeOf(self.raw)) };
        let out = (0..n as u32)
            .map(|i| {
                // SAFETY: `i` < n.
                let (kind, md) = unsafe {
                    (c::LLVMValueMetadataEntriesGetKind(entries, i), c::LLVMValueMetadataEntriesGetMetadata(entries, i))
                };
                // SAFETY: `md` is a live node of `ctx`.
                let as_val = unsafe { c::LLVMMetadataAsValue(ctx, md) };
                (kind, md_node_operands(as_val))
            })
            .collect();
        // SAFETY: allocated by LLVMGlobalCopyAllMetadata.
        unsafe { c::LLVMDisposeValueMetadataEntries(entries) };
        out
    }

    /// For a `MetadataAsValue` operand (e.g. the type id of a type test).
    pub fn md_operand(self) -> MdOperand {
        md_operand(self.raw)
    }

    /// String of a metadata string operand (type ids are mangled names:
    /// the lossless text form of `wpd_summary::name`).
    pub fn md_string(self) -> Option<String> {
        let mut len = 0u32;
        // SAFETY: LLVMGetMDString returns null for non-strings.
        let p = unsafe { c::LLVMGetMDString(self.raw, &mut len) };
        // SAFETY: `p` points to `len` bytes.
        (!p.is_null()).then(|| unsafe { name_text(p, len as usize) })
    }

    /// Zero-extended value of an integer constant of at most 64 bits.
    pub fn as_const_int(self) -> Option<u64> {
        if !self.is_const_int() || self.ty().int_width()? > 64 {
            return None;
        }
        // SAFETY: a ConstantInt of at most 64 bits.
        Some(unsafe { c::LLVMConstIntGetZExtValue(self.raw) })
    }

    /// Number of operands (elements of a constant aggregate, operands of an
    /// instruction or constant expression).
    pub fn num_operands(self) -> u32 {
        // SAFETY: a User; LLVMGetNumOperands returns -1 for non-users, which
        // we map to 0.
        let n = unsafe { c::LLVMGetNumOperands(self.raw) };
        n.max(0) as u32
    }

    /// Operand `i`, bounds-checked.
    pub fn operand(self, i: u32) -> Option<Value<'m>> {
        if i >= self.num_operands() {
            return None;
        }
        // SAFETY: `i` is in range.
        let v = unsafe { c::LLVMGetOperand(self.raw, i) };
        (!v.is_null()).then(|| Value::new(v))
    }

    /// All operands in order (skipping null slots).
    pub fn operands(self) -> impl Iterator<Item = Value<'m>> {
        (0..self.num_operands()).filter_map(move |i| self.operand(i))
    }

    /// Element `i` of a constant aggregate (struct, array, data array, zero).
    pub fn aggregate_element(self, i: u32) -> Option<Value<'m>> {
        // SAFETY: returns null when `i` is out of range or not an aggregate.
        let v = unsafe { c::LLVMGetAggregateElement(self.raw, i) };
        (!v.is_null()).then(|| Value::new(v))
    }

    /// Opcode of a constant expression.
    pub fn const_opcode(self) -> Option<Opcode> {
        // SAFETY: only called on constant expressions.
        self.is_const_expr().then(|| unsafe { c::LLVMGetConstOpcode(self.raw) })
    }

    /// Opcode of an instruction.
    pub fn opcode(self) -> Option<Opcode> {
        // SAFETY: only called on instructions.
        self.is_instruction().then(|| unsafe { c::LLVMGetInstructionOpcode(self.raw) })
    }

    /// The integer predicate of an `icmp`.
    pub fn icmp_predicate(self) -> Option<LLVMIntPredicate> {
        // SAFETY: only for icmp instructions.
        (self.opcode() == Some(LLVMOpcode::LLVMICmp)).then(|| unsafe { c::LLVMGetICmpPredicate(self.raw) })
    }

    /// The called operand of a call or invoke.
    pub fn called_operand(self) -> Option<Value<'m>> {
        if !self.is_call_base() {
            return None;
        }
        // SAFETY: a call base.
        let v = unsafe { c::LLVMGetCalledValue(self.raw) };
        (!v.is_null()).then(|| Value::new(v))
    }

    /// The directly called function, if the callee is a function.
    pub fn called_function(self) -> Option<Value<'m>> {
        self.called_operand().filter(|f| f.is_function())
    }

    /// Argument operands of a call or invoke.
    pub fn call_args(self) -> Vec<Value<'m>> {
        if !self.is_call_base() {
            return Vec::new();
        }
        // SAFETY: a call base.
        let n = unsafe { c::LLVMGetNumArgOperands(self.raw) };
        (0..n).filter_map(|i| self.operand(i)).collect()
    }

    /// Whether anything uses the value.
    pub fn has_uses(self) -> bool {
        // SAFETY: any value.
        !unsafe { c::LLVMGetFirstUse(self.raw) }.is_null()
    }

    /// Parameters of a function.
    pub fn params(self) -> Vec<Value<'m>> {
        if !self.is_function() {
            return Vec::new();
        }
        // SAFETY: a function.
        let n = unsafe { c::LLVMCountParams(self.raw) };
        // SAFETY: `i` < n.
        (0..n).map(|i| Value::new(unsafe { c::LLVMGetParam(self.raw, i) })).collect()
    }

    /// Basic blocks of a function definition, in order.
    pub fn blocks(self) -> Vec<Block<'m>> {
        let mut out = Vec::new();
        if !self.is_function() {
            return out;
        }
        // SAFETY: walks the function's live block list.
        unsafe {
            let mut b = c::LLVMGetFirstBasicBlock(self.raw);
            while !b.is_null() {
                out.push(Block { raw: b, _m: PhantomData });
                b = c::LLVMGetNextBasicBlock(b);
            }
        }
        out
    }

    /// Whether the function has the enum attribute `kind` (see
    /// [`crate::Context::attr_kind`]) on itself.
    pub fn has_fn_attr(self, kind: u32) -> bool {
        self.fn_attr_value(kind).is_some()
    }

    /// Value of the function attribute `kind`, when present.
    pub fn fn_attr_value(self, kind: u32) -> Option<u64> {
        if kind == 0 || !self.is_function() {
            return None;
        }
        // SAFETY: a function; index -1 is the function attribute set.
        let a = unsafe { c::LLVMGetEnumAttributeAtIndex(self.raw, llvm_sys::LLVMAttributeFunctionIndex, kind) };
        // SAFETY: `a` is a live attribute.
        (!a.is_null()).then(|| unsafe { c::LLVMGetEnumAttributeValue(a) })
    }

    /// The function's own attributes that compile flags set, as text,
    /// sorted: every string attribute (`"key"="value"`: target CPU and
    /// features, frame pointers, floating-point modes, stack protector
    /// size) and the enum attributes of `flag_kinds` it has (by name).
    /// Empty for what is not a function.
    pub fn flag_attributes(self, flag_kinds: &[(&str, u32)]) -> Vec<String> {
        if !self.is_function() {
            return Vec::new();
        }
        let index = llvm_sys::LLVMAttributeFunctionIndex;
        // SAFETY: a function; index -1 is its own attribute set.
        let n = unsafe { c::LLVMGetAttributeCountAtIndex(self.raw, index) } as usize;
        let mut attrs: Vec<LLVMAttributeRef> = vec![std::ptr::null_mut(); n];
        // SAFETY: `attrs` has room for the `n` attributes it asks for.
        unsafe { c::LLVMGetAttributesAtIndex(self.raw, index, attrs.as_mut_ptr()) };
        let mut out: Vec<String> = Vec::new();
        for a in attrs.into_iter().filter(|a| !a.is_null()) {
            // SAFETY: `a` is a live attribute of the function.
            if unsafe { c::LLVMIsStringAttribute(a) } == 0 {
                continue;
            }
            let (mut klen, mut vlen) = (0u32, 0u32);
            // SAFETY: a string attribute; each call gives a pointer to
            // `len` bytes the attribute owns.
            let (key, value) = unsafe {
                let k = c::LLVMGetStringAttributeKind(a, &mut klen);
                let v = c::LLVMGetStringAttributeValue(a, &mut vlen);
                (lossy(k, klen as usize), lossy(v, vlen as usize))
            };
            out.push(format!("{key:?}={value:?}"));
        }
        out.extend(flag_kinds.iter().filter(|&&(_, kind)| self.has_fn_attr(kind)).map(|(name, _)| name.to_string()));
        out.sort();
        out
    }

    /// The personality function of a function definition.
    pub fn personality(self) -> Option<Value<'m>> {
        // SAFETY: only asked of functions; LLVMGetPersonalityFn requires
        // LLVMHasPersonalityFn to be true first.
        if !self.is_function() || unsafe { c::LLVMHasPersonalityFn(self.raw) } == 0 {
            return None;
        }
        // SAFETY: the function has a personality.
        let p = unsafe { c::LLVMGetPersonalityFn(self.raw) };
        (!p.is_null()).then(|| Value::new(p))
    }

    /// The ids an indirect call's value profile may name this function
    /// definition by (MD5 hashes of its PGO names, its plain name and its
    /// global identifier), sorted; empty unless its module was built with a
    /// profile.
    pub fn profile_ids(self) -> Vec<u64> {
        let mut out = [0u64; 8];
        // SAFETY: `out` holds the 7 entries the shim may write (and one more); it checks
        // that the value is a function definition.
        let n = unsafe { ffi::wpd_function_profile_ids(self.raw, out.as_mut_ptr()) };
        out[..n.min(8)].to_vec()
    }

    /// Calling convention of a function.
    pub fn calling_conv(self) -> u32 {
        // SAFETY: a function.
        if self.is_function() { unsafe { c::LLVMGetFunctionCallConv(self.raw) } } else { 0 }
    }

    /// Renames a global value (`name` in the text form of
    /// `wpd_summary::name`).
    pub fn set_name(self, name: &str) {
        let bytes = wpd_summary::name::to_bytes(name);
        // SAFETY: name passed with its length.
        unsafe { c::LLVMSetValueName2(self.raw, bytes.as_ptr().cast(), bytes.len()) }
    }

    /// Sets the linkage of a global value.
    pub fn set_linkage(self, linkage: Linkage) {
        let l = match linkage {
            Linkage::External => LLVMLinkage::LLVMExternalLinkage,
            Linkage::AvailableExternally => LLVMLinkage::LLVMAvailableExternallyLinkage,
            Linkage::LinkonceAny => LLVMLinkage::LLVMLinkOnceAnyLinkage,
            Linkage::LinkonceOdr => LLVMLinkage::LLVMLinkOnceODRLinkage,
            Linkage::WeakAny => LLVMLinkage::LLVMWeakAnyLinkage,
            Linkage::WeakOdr => LLVMLinkage::LLVMWeakODRLinkage,
            Linkage::Appending => LLVMLinkage::LLVMAppendingLinkage,
            Linkage::Internal => LLVMLinkage::LLVMInternalLinkage,
            Linkage::Private => LLVMLinkage::LLVMPrivateLinkage,
            Linkage::ExternalWeak => LLVMLinkage::LLVMExternalWeakLinkage,
            Linkage::Common => LLVMLinkage::LLVMCommonLinkage,
        };
        // SAFETY: callers pass a global value.
        unsafe { c::LLVMSetLinkage(self.raw, l) }
    }

    /// Makes a function definition a declaration (`Function::deleteBody`):
    /// its body, metadata attachments and comdat dropped, external linkage.
    /// Returns whether it did; a definition an alias or ifunc names, and
    /// any other value, is left as it is.
    pub fn delete_body(self) -> bool {
        // SAFETY: the shim checks that the value is a function definition;
        // the caller's module owns it and nothing else holds its blocks.
        unsafe { ffi::wpd_delete_body(self.raw) != 0 }
    }

    /// Sets the visibility of a global value.
    pub fn set_visibility(self, visibility: Visibility) {
        let v = match visibility {
            Visibility::Default => LLVMVisibility::LLVMDefaultVisibility,
            Visibility::Hidden => LLVMVisibility::LLVMHiddenVisibility,
            Visibility::Protected => LLVMVisibility::LLVMProtectedVisibility,
        };
        // SAFETY: callers pass a global value.
        unsafe { c::LLVMSetVisibility(self.raw, v) }
    }

    /// Whether an instruction may read memory (LLVM's own predicate).
    pub fn may_read_memory(self) -> bool {
        // SAFETY: the shim checks for an instruction.
        unsafe { ffi::wpd_inst_may_read_memory(self.raw) != 0 }
    }

    /// Whether an instruction may write memory (LLVM's own predicate).
    pub fn may_write_memory(self) -> bool {
        // SAFETY: the shim checks for an instruction.
        unsafe { ffi::wpd_inst_may_write_memory(self.raw) != 0 }
    }

    /// `file:line:col` of an instruction's debug location.
    pub fn debug_loc(self) -> Option<String> {
        if !self.is_instruction() {
            return None;
        }
        let mut len = 0u32;
        // SAFETY: an instruction; returns an empty string without a location.
        let (p, line, col) = unsafe {
            (
                c::LLVMGetDebugLocFilename(self.raw, &mut len),
                c::LLVMGetDebugLocLine(self.raw),
                c::LLVMGetDebugLocColumn(self.raw),
            )
        };
        if line == 0 {
            return None;
        }
        // SAFETY: `p` points to `len` bytes.
        let file = unsafe { lossy(p, len as usize) };
        Some(format!("{file}:{line}:{col}"))
    }
}

impl<'m> Type<'m> {
    pub(crate) fn new(raw: LLVMTypeRef) -> Self {
        Type { raw, _m: PhantomData }
    }

    /// The type's kind.
    pub fn kind(self) -> TypeKind {
        // SAFETY: any type.
        unsafe { c::LLVMGetTypeKind(self.raw) }
    }

    /// Bit width of an integer type.
    pub fn int_width(self) -> Option<u32> {
        // SAFETY: only for integer types.
        (self.kind() == LLVMTypeKind::LLVMIntegerTypeKind).then(|| unsafe { c::LLVMGetIntTypeWidth(self.raw) })
    }

    /// Number of elements of a struct type.
    pub fn struct_len(self) -> Option<u32> {
        // SAFETY: only for struct types.
        (self.kind() == LLVMTypeKind::LLVMStructTypeKind).then(|| unsafe { c::LLVMCountStructElementTypes(self.raw) })
    }

    /// Length and element type of an array type.
    pub fn array(self) -> Option<(u64, Type<'m>)> {
        (self.kind() == LLVMTypeKind::LLVMArrayTypeKind)
            // SAFETY: an array type.
            .then(|| unsafe { (c::LLVMGetArrayLength2(self.raw), Type::new(c::LLVMGetElementType(self.raw))) })
    }

    /// Return type of a function type.
    pub fn return_type(self) -> Option<Type<'m>> {
        (self.kind() == LLVMTypeKind::LLVMFunctionTypeKind)
            // SAFETY: a function type.
            .then(|| Type::new(unsafe { c::LLVMGetReturnType(self.raw) }))
    }

    /// Parameter types of a function type.
    pub fn param_types(self) -> Vec<Type<'m>> {
        if self.kind() != LLVMTypeKind::LLVMFunctionTypeKind {
            return Vec::new();
        }
        // SAFETY: a function type; the buffer has room for every parameter.
        unsafe {
            let n = c::LLVMCountParamTypes(self.raw) as usize;
            let mut buf = vec![std::ptr::null_mut(); n];
            c::LLVMGetParamTypes(self.raw, buf.as_mut_ptr());
            buf.into_iter().map(Type::new).collect()
        }
    }
}

impl<'m> Block<'m> {
    /// Instructions in order.
    pub fn instructions(self) -> impl Iterator<Item = Value<'m>> {
        // SAFETY: the block is alive for 'm.
        let mut cur = unsafe { c::LLVMGetFirstInstruction(self.raw) };
        std::iter::from_fn(move || {
            if cur.is_null() {
                return None;
            }
            let v = cur;
            // SAFETY: `v` is a live instruction.
            cur = unsafe { c::LLVMGetNextInstruction(v) };
            Some(Value::new(v))
        })
    }

    /// The terminator, if the block is well formed.
    pub fn terminator(self) -> Option<Value<'m>> {
        // SAFETY: a live block.
        let t = unsafe { c::LLVMGetBasicBlockTerminator(self.raw) };
        (!t.is_null()).then(|| Value::new(t))
    }
}
