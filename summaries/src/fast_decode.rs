//! Fast paths for the fields a thin link decodes millions of times (a
//! call site's numbers, flags and names), for the one configuration wpd's
//! files use: bincode's standard one (`container::config`: variable-length
//! integers, little-endian). There a `u32` or `u64` below 251 is that one
//! byte, a `bool` or an `Option`'s tag is one byte (0 or 1), and an enum's
//! variant is its index as a `u32`.
//!
//! Each helper reads such a byte in place, claims from the decoder's limit
//! what bincode's own `Decode` would claim, and leaves every other case
//! (a larger integer, an invalid byte, the end of the input) to bincode's
//! `Decode`, which reads it or reports it exactly as without the fast
//! path. So the bytes read and the values and errors produced are
//! bincode's; only the per-field calls and error plumbing are skipped
//! (a call site took 573 instructions to decode through them).

use bincode::Decode;
use bincode::de::Decoder;
use bincode::de::read::Reader;
use bincode::error::DecodeError;

/// The next byte of the input, not consumed.
#[inline(always)]
fn peek<D: Decoder>(d: &mut D) -> Option<u8> {
    d.reader().peek_read(1).map(|b| b[0])
}

/// Consumes the byte [`peek`] saw, claiming `claim` bytes as bincode's
/// decoder of the field's type does.
#[inline(always)]
fn take<D: Decoder>(d: &mut D, claim: usize) -> Result<(), DecodeError> {
    d.claim_bytes_read(claim)?;
    d.reader().consume(1);
    Ok(())
}

/// A `u32` (bincode claims 4 bytes for one, whatever its length).
#[inline(always)]
pub(crate) fn u32<D: Decoder>(d: &mut D) -> Result<u32, DecodeError> {
    match peek(d) {
        Some(b) if b < 251 => take(d, 4).map(|()| u32::from(b)),
        _ => u32::decode(d),
    }
}

/// A `u64` (bincode claims 8 bytes).
#[inline(always)]
pub(crate) fn u64<D: Decoder>(d: &mut D) -> Result<u64, DecodeError> {
    match peek(d) {
        Some(b) if b < 251 => take(d, 8).map(|()| u64::from(b)),
        _ => u64::decode(d),
    }
}

/// A `bool`.
#[inline(always)]
pub(crate) fn bool<D: Decoder>(d: &mut D) -> Result<bool, DecodeError> {
    match peek(d) {
        Some(b @ (0 | 1)) => take(d, 1).map(|()| b == 1),
        _ => bool::decode(d),
    }
}

/// An `Option<T>` whose value, when there is one, `some` decodes.
#[inline(always)]
pub(crate) fn option<D: Decoder, T: Decode<D::Context>>(
    d: &mut D,
    some: impl FnOnce(&mut D) -> Result<T, DecodeError>,
) -> Result<Option<T>, DecodeError> {
    match peek(d) {
        Some(0) => take(d, 1).map(|()| None),
        Some(1) => {
            take(d, 1)?;
            some(d).map(Some)
        }
        _ => Option::<T>::decode(d),
    }
}

/// A fieldless enum whose variants, in declaration order (their encoded
/// indices), are `all` (each enum's `ALL`, checked against bincode's
/// encoding by a test in `summary.rs`).
#[inline(always)]
pub(crate) fn variant<D: Decoder, T: Decode<D::Context> + Copy>(d: &mut D, all: &[T]) -> Result<T, DecodeError> {
    match peek(d) {
        Some(b) if usize::from(b) < all.len() => take(d, 4).map(|()| all[usize::from(b)]),
        _ => T::decode(d),
    }
}

/// An `i64` (zigzag-encoded: 0, -1, 1, -2, ...; bincode claims 8 bytes).
#[inline(always)]
pub(crate) fn i64<D: Decoder>(d: &mut D) -> Result<i64, DecodeError> {
    match peek(d) {
        Some(b) if b < 251 => {
            take(d, 8)?;
            let half = i64::from(b >> 1);
            Ok(if b & 1 == 0 { half } else { !half })
        }
        _ => i64::decode(d),
    }
}
