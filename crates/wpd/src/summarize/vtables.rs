//! Globals carrying `!type` metadata (vtables and vtable groups): their
//! type ids, vcall visibility and every pointer-sized slot (or, in a
//! relative vtable, every 32-bit entry that is an offset to a global).

use super::{MdKinds, TypeIdNamer};
use wpd_llvm::{MdOperand, Module, Opcode, TypeKind, Value};
use wpd_summary::{Linkage, Slot, SlotKind, TypeIdEntry, VcallVisibility, Vtable};

/// Names of `_ZTV*` definitions of `module` without `!type` metadata.
pub(super) fn untyped(module: &Module<'_>) -> Vec<String> {
    let ty = MdKinds::of(module).ty;
    module
        .globals()
        .filter(|g| !g.is_declaration() && g.linkage() != wpd_summary::Linkage::AvailableExternally)
        .map(|g| (g, g.name()))
        .filter(|(_, n)| n.starts_with("_ZTV"))
        .filter(|(g, _)| !g.metadata().iter().any(|(k, _)| *k == ty))
        .map(|(_, n)| n)
        .collect()
}

/// Every global variable of `module` with at least one `!type` attachment.
pub(super) fn collect(module: &Module<'_>, index: usize, ids: &mut TypeIdNamer) -> Vec<Vtable> {
    let kinds = MdKinds::of(module);
    let ptr_size = module.pointer_size();
    let mut out = Vec::new();
    for g in module.globals() {
        let md = g.metadata();
        let mut type_ids: Vec<TypeIdEntry> = md
            .iter()
            .filter(|(k, _)| *k == kinds.ty)
            .filter_map(|(_, ops)| match ops.as_slice() {
                [MdOperand::Int(offset), id] => Some(TypeIdEntry { offset: *offset, type_id: ids.name(index, id)? }),
                _ => None,
            })
            .collect();
        if type_ids.is_empty() {
            continue;
        }
        type_ids.sort();
        type_ids.dedup();
        let vcall_visibility = md
            .iter()
            .find(|(k, _)| *k == kinds.vcall_visibility)
            .and_then(|(_, ops)| match ops.first() {
                Some(MdOperand::Int(1)) => Some(VcallVisibility::LinkageUnit),
                Some(MdOperand::Int(2)) => Some(VcallVisibility::TranslationUnit),
                _ => None,
            })
            .unwrap_or(VcallVisibility::Public);
        let mut slots = Vec::new();
        if let Some(init) = g.initializer() {
            flatten(module, g, init, 0, ptr_size, &mut slots);
        }
        let linkage = g.linkage();
        out.push(Vtable {
            symbol: g.name().into(),
            linkage,
            visibility: g.visibility(),
            comdat: g.comdat().map(Into::into),
            constant: g.is_global_constant(),
            available_externally: linkage == Linkage::AvailableExternally,
            align: g.alignment(),
            size: module.abi_size(g.global_value_type()),
            vcall_visibility,
            type_ids,
            slots,
        });
    }
    out
}

/// Walks the constant initializer of `global`, recording each
/// pointer-sized leaf and each relative entry (a 32-bit offset from a
/// place in `global` to another global).
fn flatten<'m>(module: &'m Module<'_>, global: Value<'m>, c: Value<'m>, base: u64, ptr_size: u64, out: &mut Vec<Slot>) {
    let ty = c.ty();
    match ty.kind() {
        TypeKind::LLVMStructTypeKind => {
            for i in 0..ty.struct_len().unwrap_or(0) {
                if let Some(e) = c.aggregate_element(i) {
                    flatten(module, global, e, base + module.struct_offset(ty, i), ptr_size, out);
                }
            }
        }
        TypeKind::LLVMArrayTypeKind => {
            let Some((n, elem)) = ty.array() else { return };
            let size = module.abi_size(elem);
            for i in 0..n.min(u64::from(u32::MAX)) {
                match c.aggregate_element(i as u32) {
                    Some(e) => flatten(module, global, e, base + i * size, ptr_size, out),
                    None => break,
                }
            }
        }
        TypeKind::LLVMPointerTypeKind => out.push(pointer_slot(module, c, base)),
        TypeKind::LLVMIntegerTypeKind if ty.int_width() == Some(32) && ptr_size != 4 => {
            match (relative_slot(module, global, c, base), c.as_const_int()) {
                (Some(slot), _) => out.push(slot),
                // Offset-to-top, and 0 for a pure virtual function.
                (None, Some(0)) => out.push(slot(base, SlotKind::Null, None, None, 0)),
                (None, Some(v)) => out.push(slot(base, SlotKind::Int, None, None, i64::from(v as u32 as i32))),
                (None, None) => {}
            }
        }
        TypeKind::LLVMIntegerTypeKind if u64::from(ty.int_width().unwrap_or(0)) == ptr_size * 8 => {
            let slot = match c.as_const_int() {
                Some(0) => slot(base, SlotKind::Null, None, None, 0),
                Some(v) => slot(base, SlotKind::Int, None, None, v as i64),
                None => slot(base, SlotKind::Other, None, None, 0),
            };
            out.push(slot);
        }
        _ => {}
    }
}

fn slot(offset: u64, kind: SlotKind, symbol: Option<String>, function: Option<String>, value: i64) -> Slot {
    Slot { offset, kind, symbol: symbol.map(Into::into), function: function.map(Into::into), value, relative_to: None }
}

/// Classifies a pointer constant stored in a vtable.
fn pointer_slot(module: &Module<'_>, c: Value<'_>, offset: u64) -> Slot {
    if c.is_const_null() {
        return slot(offset, SlotKind::Null, None, None, 0);
    }
    if c.const_opcode() == Some(Opcode::LLVMIntToPtr)
        && let Some(v) = c.operand(0).and_then(|v| v.as_const_int())
    {
        let kind = if v == 0 { SlotKind::Null } else { SlotKind::Int };
        return slot(offset, kind, None, None, v as i64);
    }
    let (base, addend) = module.strip_const_offset(c);
    if !base.is_global_value() {
        return slot(offset, SlotKind::Other, None, None, 0);
    }
    let symbol = base.name();
    match resolve_function(module, base) {
        Some(f) if addend == 0 => {
            let name = f.name();
            let kind = if name == "__cxa_pure_virtual" { SlotKind::PureVirtual } else { SlotKind::Function };
            slot(offset, kind, Some(symbol), Some(name), 0)
        }
        _ => slot(offset, SlotKind::Global, Some(symbol), None, addend),
    }
}

/// Classifies an entry of a relative vtable: an offset from a place in
/// `global` itself (the address point, for clang's vtables) to a function
/// (`dso_local_equivalent` looked through), or to a typeinfo through its
/// proxy (a constant holding the typeinfo's address, which the slot then
/// names). `None` for anything else (offset-to-top and other integers).
fn relative_slot<'m>(module: &'m Module<'_>, global: Value<'m>, c: Value<'m>, offset: u64) -> Option<Slot> {
    let entry = module.relative_entry(c)?;
    let relative_to = u64::try_from(entry.offset).ok().filter(|_| entry.base == global)?;
    let mut slot = pointer_slot(module, entry.target, offset);
    if slot.kind == SlotKind::Global
        && let Some(held) = entry.target.initializer().filter(|_| entry.target.is_global_constant())
    {
        let (pointee, addend) = module.strip_const_offset(held);
        if pointee.is_global_value() {
            slot.symbol = Some(pointee.name().into());
            slot.value = addend;
        }
    }
    slot.relative_to = Some(relative_to);
    Some(slot)
}

/// Looks through aliases (and casts) to the function a global denotes.
fn resolve_function<'m>(module: &'m Module<'_>, mut v: Value<'m>) -> Option<Value<'m>> {
    for _ in 0..32 {
        if v.is_function() {
            return Some(v);
        }
        let (base, off) = module.strip_const_offset(v.aliasee()?);
        if off != 0 {
            return None;
        }
        v = base;
    }
    None
}
