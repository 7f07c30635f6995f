//! Where virtual constant propagation stores results: bytes (or bits)
//! beside each vtable, at one offset from the address point that is free in
//! every vtable of the set, as LLVM lays them out.
//!
//! Offsets are relative to the address point, so one load `vptr + offset`
//! works whichever vtable the object has. A vtable of size `S` with address
//! point `ap` has its "after" byte `i` at ap-relative offset `S - ap + i`,
//! and its "before" byte at distance `d >= 1` from its start at ap-relative
//! offset `-ap - d`.

use crate::hierarchy::VtableId;
use rustc_hash::FxHashMap as HashMap;

/// Bytes (as bit masks) already used beside one vtable, and their values.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Beside {
    /// Index `d - 1` holds the byte at distance `d` before the start.
    pub before_used: Vec<u8>,
    pub before: Vec<u8>,
    /// Index `i` holds the byte `i` after the end.
    pub after_used: Vec<u8>,
    pub after: Vec<u8>,
}

/// One member of the set: a vtable and the address point of the type id
/// in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Member {
    pub vtable: VtableId,
    pub address_point: u64,
    pub size: u64,
}

/// Which side a value went to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Before,
    After,
}

/// A placement: ap-relative byte offset, and the bit for 1-bit values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    pub byte_offset: i64,
    pub bit: Option<u8>,
    pub side: Side,
    /// New bytes this placement adds over all vtables.
    pub padding: u64,
}

/// The allocator for one link: per vtable, what is already beside it.
#[derive(Default, Debug)]
pub struct Layout {
    pub vtables: HashMap<VtableId, Beside>,
}

fn used(v: &[u8], i: usize) -> u8 {
    v.get(i).copied().unwrap_or(0)
}

impl Layout {
    /// Byte index within `side` of member `m` for ap-relative byte `off`.
    fn index(m: &Member, side: Side, off: i64) -> Option<usize> {
        let (s, ap) = (m.size as i64, m.address_point as i64);
        match side {
            Side::After => {
                let i = off - (s - ap);
                (i >= 0).then_some(i as usize)
            }
            Side::Before => {
                let d = -ap - off; // distance from the start, >= 1
                (d >= 1).then_some((d - 1) as usize)
            }
        }
    }

    fn free(&self, members: &[Member], side: Side, off: i64, bytes: u64, bit: Option<u8>) -> bool {
        members.iter().all(|m| {
            let b = self.vtables.get(&m.vtable);
            (0..bytes as i64).all(|k| {
                let Some(i) = Self::index(m, side, off + k) else { return false };
                let mask = bit.map_or(0xFF, |b| 1u8 << b);
                let u = b.map_or(0, |b| used(if side == Side::After { &b.after_used } else { &b.before_used }, i));
                u & mask == 0
            })
        })
    }

    /// Bytes that placing `bytes` at `off` adds beyond what each vtable has.
    fn padding(&self, members: &[Member], side: Side, off: i64, bytes: u64) -> u64 {
        let mut per_vtable: HashMap<VtableId, usize> = HashMap::default();
        for m in members {
            // The highest index touched on this side.
            let last = (0..bytes as i64).filter_map(|k| Self::index(m, side, off + k)).max().unwrap_or(0) + 1;
            let e = per_vtable.entry(m.vtable).or_insert(0);
            *e = (*e).max(last);
        }
        per_vtable
            .iter()
            .map(|(v, &need)| {
                let have = self.vtables.get(v).map_or(0, |b| match side {
                    Side::After => b.after_used.len(),
                    Side::Before => b.before_used.len(),
                });
                need.saturating_sub(have) as u64
            })
            .sum()
    }

    /// The lowest free place on `side` for a `width`-bit value: after the
    /// vtables, counting up from the first byte past every member's end;
    /// before them, counting down from the first byte ahead of every
    /// member's start. Values are naturally aligned; bits take any free bit.
    fn lowest(&self, members: &[Member], side: Side, width: u32) -> Placement {
        let bytes = u64::from(width.div_ceil(8));
        let align = bytes.next_power_of_two() as i64;
        let step = if width == 1 { 1 } else { align };
        // `off` is the value's first byte, ap-relative.
        let (mut off, dir) = match side {
            Side::After => {
                let min = members.iter().map(|m| m.size as i64 - m.address_point as i64).max().unwrap_or(0);
                ((min + align - 1).div_euclid(align) * align, step)
            }
            Side::Before => {
                // The value must end at or before -ap for every member.
                let max_ap = members.iter().map(|m| m.address_point as i64).max().unwrap_or(0);
                ((-max_ap).div_euclid(align) * align - bytes as i64, -step)
            }
        };
        loop {
            let bit = if width == 1 { (0..8u8).find(|&b| self.free(members, side, off, 1, Some(b))) } else { None };
            if bit.is_some() || (width != 1 && self.free(members, side, off, bytes, None)) {
                let padding = self.padding(members, side, off, bytes);
                return Placement { byte_offset: off, bit, side, padding };
            }
            off += dir;
        }
    }

    /// Chooses a place for a `width`-bit value in every member: the side
    /// that adds fewer bytes (before on a tie), or `None` when both would add
    /// more than `max_padding` bytes.
    pub fn place(&self, members: &[Member], width: u32, max_padding: u64) -> Option<Placement> {
        let before = self.lowest(members, Side::Before, width);
        let after = self.lowest(members, Side::After, width);
        let best = if before.padding <= after.padding { before } else { after };
        (best.padding <= max_padding).then_some(best)
    }

    /// Stores each member's value (`values[k]` for `members[k]`) at `p`.
    pub fn store(&mut self, members: &[Member], width: u32, p: Placement, values: &[u64]) {
        let bytes = width.div_ceil(8) as i64;
        for (m, &value) in members.iter().zip(values) {
            let b = self.vtables.entry(m.vtable).or_default();
            for k in 0..bytes {
                let i = Self::index(m, p.side, p.byte_offset + k).expect("placement is beside the vtable");
                let (used, vals) = match p.side {
                    Side::After => (&mut b.after_used, &mut b.after),
                    Side::Before => (&mut b.before_used, &mut b.before),
                };
                if used.len() <= i {
                    used.resize(i + 1, 0);
                    vals.resize(i + 1, 0);
                }
                match p.bit {
                    Some(bit) => {
                        used[i] |= 1 << bit;
                        if value & 1 != 0 {
                            vals[i] |= 1 << bit;
                        }
                    }
                    None => {
                        used[i] = 0xFF;
                        vals[i] = (value >> (8 * k)) as u8; // little endian
                    }
                }
            }
        }
    }
}

impl Beside {
    /// The final bytes before the vtable (in memory order), padded at the
    /// front to a multiple of `align` so the vtable start stays aligned.
    pub fn before_bytes(&self, align: u64) -> Vec<u8> {
        if self.before.is_empty() {
            return Vec::new();
        }
        let align = align.max(1) as usize;
        let len = self.before.len().div_ceil(align) * align;
        let mut out = vec![0u8; len];
        for (i, &v) in self.before.iter().enumerate() {
            out[len - 1 - i] = v; // distance i + 1 from the start
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wpd_summary::{ModuleIdx, VtableIdx};

    /// The `k`-th vtable of module 0.
    fn v(k: usize) -> VtableId {
        VtableId { module: ModuleIdx::new(0), index: VtableIdx::new(k) }
    }

    fn m(vtable: usize, ap: u64, size: u64) -> Member {
        Member { vtable: v(vtable), address_point: ap, size }
    }

    #[test]
    fn first_value_goes_right_before_the_address_points() {
        let l = Layout::default();
        // Two vtables, primary address point 16, 48 bytes each.
        let ms = [m(0, 16, 48), m(1, 16, 48)];
        let p = l.place(&ms, 32, 128).unwrap();
        assert_eq!(p.side, Side::Before);
        assert_eq!(p.byte_offset, -20); // bytes [-20,-16): distance 1..4 from the start
        assert_eq!(p.padding, 8);
    }

    #[test]
    fn bits_pack_into_one_byte_then_spill() {
        let mut l = Layout::default();
        let ms = [m(0, 16, 32), m(1, 16, 40)];
        let mut seen = Vec::new();
        for k in 0..9 {
            let p = l.place(&ms, 1, 128).unwrap();
            l.store(&ms, 1, p, &[k % 2, 1]);
            seen.push((p.byte_offset, p.bit));
        }
        assert_eq!(seen[0], (-17, Some(0)));
        assert_eq!(seen[7], (-17, Some(7)));
        assert_eq!(seen[8], (-18, Some(0)));
        let b0 = &l.vtables[&v(0)];
        assert_eq!(b0.before[0], 0b1010_1010);
        assert_eq!(l.vtables[&v(1)].before[0], 0xFF);
    }

    #[test]
    fn different_address_points_share_one_relative_offset() {
        let mut l = Layout::default();
        // Secondary address point at 72 in a 104-byte group, primary 16 in another.
        let ms = [m(0, 16, 48), m(1, 72, 104)];
        let p = l.place(&ms, 64, 128).unwrap();
        // Before: must clear ap 72 -> off <= -80; after: >= max(32, 32) = 32 -> 0 padding difference
        l.store(&ms, 64, p, &[0x1122334455667788, 7]);
        match p.side {
            Side::After => {
                assert_eq!(p.byte_offset, 32);
                assert_eq!(l.vtables[&v(0)].after[..8], 0x1122334455667788u64.to_le_bytes());
                assert_eq!(l.vtables[&v(1)].after[..8], 7u64.to_le_bytes());
            }
            Side::Before => panic!("after costs 16 bytes, before 8 + 64: {p:?}"),
        }
    }

    #[test]
    fn cap_is_respected() {
        let l = Layout::default();
        assert!(l.place(&[m(0, 16, 48)], 64, 4).is_none());
    }

    #[test]
    fn before_bytes_are_aligned_and_in_memory_order() {
        let b = Beside { before_used: vec![0xFF, 0xFF], before: vec![0xAA, 0xBB], ..Beside::default() };
        assert_eq!(b.before_bytes(8), vec![0, 0, 0, 0, 0, 0, 0xBB, 0xAA]);
    }
}
