//! Serde helpers the file formats share: numbers written as hex strings,
//! and numbers read from either a JSON number or a string of one.
//!
//! 64-bit seeds and words are written as `0x` strings, which no JSON reader
//! rounds; readers take a number too, and decimal or `0x` hex strings
//! (`_` separators allowed), so a file edited by hand still reads.

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;
use std::marker::PhantomData;

/// An unsigned number written as `0x` and `DIGITS` hex digits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Hex<T, const DIGITS: usize>(pub T);

/// A 64-bit value as 16 hex digits (seeds, instruction words).
pub type Hex64 = Hex<u64, 16>;
/// A 128-bit L2 word as 32 hex digits.
pub type Hex128 = Hex<u128, 32>;

/// The unsigned integer types a [`Hex`] can hold.
pub trait Unsigned: Copy + fmt::LowerHex + TryFrom<u128> {
    const BITS: u32;
}

impl Unsigned for u16 {
    const BITS: u32 = 16;
}
impl Unsigned for u32 {
    const BITS: u32 = 32;
}
impl Unsigned for u64 {
    const BITS: u32 = 64;
}
impl Unsigned for u128 {
    const BITS: u32 = 128;
}

impl<T: Unsigned, const DIGITS: usize> Serialize for Hex<T, DIGITS> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("0x{:0DIGITS$x}", self.0))
    }
}

impl<'de, T: Unsigned, const DIGITS: usize> Deserialize<'de> for Hex<T, DIGITS> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(UnsignedVisitor::<T>(PhantomData))
            .map(Hex)
    }
}

/// Reads an unsigned number that may be written as a string (see the
/// module's note); for `#[serde(deserialize_with = "format::flexible")]`.
pub fn flexible<'de, D: Deserializer<'de>, T: Unsigned>(d: D) -> Result<T, D::Error> {
    d.deserialize_any(UnsignedVisitor::<T>(PhantomData))
}

struct UnsignedVisitor<T>(PhantomData<T>);

impl<T: Unsigned> UnsignedVisitor<T> {
    fn fit<E: de::Error>(v: u128) -> Result<T, E> {
        T::try_from(v).map_err(|_| E::custom(format!("{v:#x} does not fit in {} bits", T::BITS)))
    }
}

impl<T: Unsigned> Visitor<'_> for UnsignedVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "an unsigned {}-bit number (a JSON number, or a decimal or 0x hex string)",
            T::BITS
        )
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        Self::fit(u128::from(v))
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<T, E> {
        Self::fit(v)
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<T, E> {
        let digits = s.replace('_', "");
        let parsed = match digits
            .strip_prefix("0x")
            .or_else(|| digits.strip_prefix("0X"))
        {
            Some(hex) => u128::from_str_radix(hex, 16),
            None => digits.parse(),
        };
        let v = parsed.map_err(|e| E::custom(format!("`{s}` is not an unsigned number: {e}")))?;
        Self::fit(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read<T: for<'de> Deserialize<'de>>(text: &str) -> Result<T, String> {
        serde_json::from_str(text).map_err(|e| e.to_string())
    }

    #[test]
    fn hex_numbers_read_from_numbers_and_strings() {
        assert_eq!(read::<Hex64>("16").unwrap().0, 16);
        assert_eq!(read::<Hex64>("\"0x10\"").unwrap().0, 16);
        assert_eq!(read::<Hex64>("\"1_000\"").unwrap().0, 1000);
        assert_eq!(
            serde_json::to_string(&Hex::<u32, 2>(8)).unwrap(),
            "\"0x08\""
        );
        assert_eq!(
            serde_json::to_string(&Hex64::default()).unwrap(),
            "\"0x0000000000000000\""
        );
    }

    #[test]
    fn bad_numbers_say_why() {
        assert!(read::<Hex<u32, 8>>("\"0x100000000\"")
            .unwrap_err()
            .contains("does not fit in 32 bits"));
        assert!(read::<Hex64>("\"0xzz\"")
            .unwrap_err()
            .contains("is not an unsigned number"));
        assert!(read::<Hex64>("-1").unwrap_err().contains("unsigned 64-bit"));
        assert!(read::<Hex64>("true")
            .unwrap_err()
            .contains("unsigned 64-bit"));
    }
}
