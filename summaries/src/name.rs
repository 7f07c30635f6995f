//! Symbol names as text, losslessly. ELF and LLVM names are bytes; wpd keeps
//! them in `String`s (summaries, plans, reports, maps) in one injective
//! encoding: valid UTF-8 stays as it is, a backslash becomes `\\`, and every
//! byte that is not part of valid UTF-8, or of a control character, becomes
//! `\xNN` (so a name is always printable on one line). Two different byte
//! names never share a text name (a lossy conversion would merge them), and
//! [`to_bytes`] gives the original bytes back wherever a name goes to LLVM or
//! the linker. Ordinary C++ mangled names (ASCII, or UTF-8 identifiers) are
//! unchanged.

use std::borrow::Cow;

/// The text form of a byte name.
pub fn from_bytes(bytes: &[u8]) -> Cow<'_, str> {
    // The common case, printable ASCII without a backslash. This runs for
    // every symbol of every input the linker reads (libstdc++'s dynamic
    // symbols alone are some 40,000 names): a fold without an early exit,
    // which the compiler turns into vector compares.
    let plain = bytes.iter().fold(true, |ok, &b| ok & (b.wrapping_sub(0x20) < 0x5f) & (b != b'\\'));
    if plain {
        return Cow::Borrowed(std::str::from_utf8(bytes).expect("printable ASCII is UTF-8"));
    }
    if let Ok(s) = std::str::from_utf8(bytes)
        && !s.chars().any(|c| c == '\\' || c.is_control())
    {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(bytes.len() + 8);
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if c == '\\' {
                out.push_str("\\\\");
            } else if c.is_control() {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!("\\x{b:02x}"));
                }
            } else {
                out.push(c);
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    Cow::Owned(out)
}

/// The bytes of a text name made by [`from_bytes`]. A backslash that starts
/// no escape stands for itself, so any string maps to some bytes.
pub fn to_bytes(name: &str) -> Cow<'_, [u8]> {
    if !name.contains('\\') {
        return Cow::Borrowed(name.as_bytes());
    }
    let b = name.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' {
            if b.get(i + 1) == Some(&b'\\') {
                out.push(b'\\');
                i += 2;
                continue;
            }
            if b.get(i + 1) == Some(&b'x')
                && let Some(hex) = b.get(i + 2..i + 4)
                && let Ok(h) = std::str::from_utf8(hex)
                && let Ok(v) = u8::from_str_radix(h, 16)
            {
                out.push(v);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_are_unchanged() {
        for n in ["_ZTV4Base", "_ZTS6Carré", "", "main"] {
            assert!(matches!(from_bytes(n.as_bytes()), Cow::Borrowed(_)));
            assert_eq!(from_bytes(n.as_bytes()), n);
            assert_eq!(to_bytes(n), n.as_bytes());
        }
    }

    #[test]
    fn only_printable_ascii_bytes_pass_unchanged() {
        for b in 0..=255u8 {
            let plain = (0x20..0x7f).contains(&b) && b != b'\\';
            for name in [vec![b], [b"_ZN3Foo".as_slice(), &[b], b"barEv"].concat()] {
                assert_eq!(matches!(from_bytes(&name), Cow::Borrowed(_)), plain, "byte {b:#04x}");
            }
        }
    }

    #[test]
    fn round_trip_is_lossless_and_injective() {
        let names: Vec<Vec<u8>> = vec![
            b"a\xffb".to_vec(),
            b"a\xfeb".to_vec(),
            b"a\\xffb".to_vec(),
            b"a\\b".to_vec(),
            b"\\".to_vec(),
            b"\xc3".to_vec(),
            b"\xc3\xa9\xff\\x".to_vec(),
        ];
        let texts: Vec<String> = names.iter().map(|n| from_bytes(n).into_owned()).collect();
        for (n, t) in names.iter().zip(&texts) {
            assert_eq!(to_bytes(t).as_ref(), n.as_slice(), "{t}");
        }
        let distinct: std::collections::BTreeSet<&String> = texts.iter().collect();
        assert_eq!(distinct.len(), texts.len());
        assert_eq!(texts[0], "a\\xffb");
        assert_eq!(texts[2], "a\\\\xffb");
        assert_eq!(from_bytes(b"tab\there\x7f"), "tab\\x09here\\x7f");
        assert_eq!(to_bytes("tab\\x09here\\x7f").as_ref(), b"tab\there\x7f");
        assert!(!from_bytes("c1\u{85}".as_bytes()).chars().any(char::is_control));
    }

    #[test]
    fn every_byte_sequence_round_trips() {
        // A small exhaustive check over two-byte names.
        for a in 0..=255u8 {
            for b in [0u8, b'\\', b'x', b'f', 0x80, 0xc3, 0xa9, 0xff] {
                let n = [a, b];
                assert_eq!(to_bytes(&from_bytes(&n)).as_ref(), &n);
            }
        }
    }
}
