//! The source language of a native object, from the `DW_AT_language` of
//! its compile units in `.debug_info`: enough to tell C and assembly,
//! which cannot call a C++ virtual function, from everything else.
//!
//! Only what that needs is read: each unit's header, its first entry's
//! abbreviation, and the attributes before `DW_AT_language` (skipped by
//! form). Anything unexpected (compressed sections, type units, an
//! unknown form, a truncated unit) gives `None`: the language is unknown.

/// The languages of an object's compile units, as far as they matter here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Language {
    /// Every unit is C (any standard) or assembly.
    NotCxx,
    /// A unit is C++ or another language.
    Other,
}

const DW_AT_LANGUAGE: u64 = 0x13;
const DW_FORM_IMPLICIT_CONST: u64 = 0x21;
const DW_FORM_INDIRECT: u64 = 0x16;

/// `DW_LANG_C89`, `C`, `C99`, `C11`, `C17` and `Mips_Assembler` (what GNU
/// as and clang's integrated assembler write for `.S` files).
fn c_or_assembly(lang: u64) -> bool {
    matches!(lang, 0x01 | 0x02 | 0x0c | 0x1d | 0x2c | 0x8001)
}

/// The languages of the units in `info` (a relocatable object's
/// `.debug_info`), with `abbrev` its `.debug_abbrev`. `None` when there is
/// no unit or one cannot be read.
///
/// In a relocatable object a unit's abbreviation offset is a relocation
/// whose addend the section may not hold, so only an object with one unit
/// (every compiler's output; `ld -r` makes more) is read, at offset 0.
pub fn language(info: &[u8], abbrev: &[u8]) -> Option<Language> {
    let mut r = Reader { bytes: info, at: 0 };
    let (length, offset_size) = match r.u32()? {
        0xffff_ffff => (usize::try_from(r.u64()?).ok()?, 8),
        n if n >= 0xffff_fff0 => return None,
        n => (n as usize, 4),
    };
    let end = r.at.checked_add(length)?;
    if end != info.len() {
        return None;
    }
    let version = r.u16()?;
    let address_size = match version {
        2..=4 => {
            r.skip(offset_size)?;
            r.u8()?
        }
        5 => {
            let unit_type = r.u8()?;
            let address_size = r.u8()?;
            r.skip(offset_size)?;
            match unit_type {
                // compile, partial
                1 | 3 => {}
                // skeleton, split compile: a unit id
                4 | 5 => r.skip(8)?,
                _ => return None,
            }
            address_size
        }
        _ => return None,
    };
    let code = r.uleb()?;
    let lang = first_language(abbrev, code, &mut r, Sizes { address_size, offset_size, version })?;
    Some(if c_or_assembly(lang) { Language::NotCxx } else { Language::Other })
}

#[derive(Clone, Copy)]
struct Sizes {
    address_size: u8,
    offset_size: usize,
    version: u16,
}

/// Finds abbreviation `code` and reads the entry at `entry` up to its
/// `DW_AT_language`.
fn first_language(abbrev: &[u8], code: u64, entry: &mut Reader<'_>, sizes: Sizes) -> Option<u64> {
    let mut a = Reader { bytes: abbrev, at: 0 };
    loop {
        let this = a.uleb()?;
        if this == 0 {
            return None;
        }
        let _tag = a.uleb()?;
        let _children = a.u8()?;
        let wanted = this == code;
        loop {
            let (attr, form) = (a.uleb()?, a.uleb()?);
            if attr == 0 && form == 0 {
                break;
            }
            let implicit = if form == DW_FORM_IMPLICIT_CONST { Some(a.sleb()? as u64) } else { None };
            if !wanted {
                continue;
            }
            if attr == DW_AT_LANGUAGE {
                return match implicit {
                    Some(v) => Some(v),
                    None => entry.constant(form),
                };
            }
            if implicit.is_none() {
                entry.skip_form(form, sizes)?;
            }
        }
        if wanted {
            return None;
        }
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let end = self.at.checked_add(n)?;
        let s = self.bytes.get(self.at..end)?;
        self.at = end;
        Some(s)
    }
    fn skip(&mut self, n: usize) -> Option<()> {
        self.take(n).map(|_| ())
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes(self.take(2)?.try_into().ok()?))
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn uleb(&mut self) -> Option<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.u8()?;
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }
    fn sleb(&mut self) -> Option<i64> {
        let mut value = 0i64;
        let mut shift = 0;
        loop {
            let b = self.u8()?;
            value |= i64::from(b & 0x7f) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                if shift < 64 && b & 0x40 != 0 {
                    value |= -1i64 << shift;
                }
                return Some(value);
            }
            if shift >= 64 {
                return None;
            }
        }
    }
    /// An unsigned constant in `form` (how `DW_AT_language` is written).
    fn constant(&mut self, form: u64) -> Option<u64> {
        match form {
            0x0b => self.u8().map(u64::from),
            0x05 => self.u16().map(u64::from),
            0x06 => self.u32().map(u64::from),
            0x07 => self.u64(),
            0x0f => self.uleb(),
            _ => None,
        }
    }
    /// Skips one attribute value of `form`.
    fn skip_form(&mut self, form: u64, sizes: Sizes) -> Option<()> {
        let offset = sizes.offset_size;
        let n = match form {
            0x01 => usize::from(sizes.address_size),
            0x03 => usize::from(self.u16()?),
            0x04 => self.u32()? as usize,
            0x05 | 0x12 | 0x26 | 0x2a => 2,
            0x06 | 0x13 | 0x1c | 0x28 | 0x2c => 4,
            0x07 | 0x14 | 0x20 | 0x24 => 8,
            0x08 => {
                let len = self.bytes.get(self.at..)?.iter().position(|&b| b == 0)?;
                len + 1
            }
            0x09 | 0x18 => usize::try_from(self.uleb()?).ok()?,
            0x0a => usize::from(self.u8()?),
            0x0b | 0x0c | 0x11 | 0x25 | 0x29 => 1,
            0x0d => {
                self.sleb()?;
                0
            }
            0x0f | 0x15 | 0x1a | 0x1b | 0x22 | 0x23 | 0x1f01 | 0x1f02 => {
                self.uleb()?;
                0
            }
            // DWARF 2 wrote DW_FORM_ref_addr at the address's size.
            0x10 if sizes.version == 2 => usize::from(sizes.address_size),
            0x0e | 0x10 | 0x17 | 0x1d | 0x1f | 0x1f20 | 0x1f21 => offset,
            0x19 => 0,
            0x1e => 16,
            0x27 | 0x2b => 3,
            DW_FORM_INDIRECT => {
                let form = self.uleb()?;
                if form == DW_FORM_INDIRECT || form == DW_FORM_IMPLICIT_CONST {
                    return None;
                }
                return self.skip_form(form, sizes);
            }
            _ => return None,
        };
        self.skip(n)
    }
}

#[cfg(test)]
mod tests {
    use super::{Language, language};

    /// A DWARF 5 unit whose first entry holds a string producer, then the
    /// language as `DW_FORM_data2`.
    fn unit(lang: u16) -> (Vec<u8>, Vec<u8>) {
        // abbrev 1: DW_TAG_compile_unit, no children,
        // DW_AT_producer/DW_FORM_string, DW_AT_language/DW_FORM_data2.
        let abbrev = vec![1, 0x11, 0, 0x25, 0x08, 0x13, 0x05, 0, 0, 0];
        let mut body = vec![5, 0, 1, 8, 0, 0, 0, 0, 1];
        body.extend_from_slice(b"cc\0");
        body.extend_from_slice(&lang.to_le_bytes());
        let mut info = (body.len() as u32).to_le_bytes().to_vec();
        info.extend(body);
        (info, abbrev)
    }

    #[test]
    fn tells_c_from_cxx_and_gives_up_on_damage() {
        let (info, abbrev) = unit(0x1d);
        assert_eq!(language(&info, &abbrev), Some(Language::NotCxx));
        let (info, abbrev) = unit(0x21);
        assert_eq!(language(&info, &abbrev), Some(Language::Other));
        let (info, abbrev) = unit(0x02);
        assert_eq!(language(&info[..info.len() - 1], &abbrev), None);
        assert_eq!(language(&info, &abbrev[..3]), None);
        assert_eq!(language(&[], &abbrev), None);
    }
}
