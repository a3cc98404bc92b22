//! The two shape tables (docs/semantics.md section 1), shared by the
//! interpreter and by footprint computation.

use crate::model::{ShapeEntry, ShapeTable, SHAPE_ENTRIES};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tables {
    pub fmap: [ShapeEntry; SHAPE_ENTRIES],
    pub weight: [ShapeEntry; SHAPE_ENTRIES],
}

/// Both tables all zero, as after reset.
impl Default for Tables {
    fn default() -> Tables {
        Tables {
            fmap: [ShapeEntry::default(); SHAPE_ENTRIES],
            weight: [ShapeEntry::default(); SHAPE_ENTRIES],
        }
    }
}

impl Tables {
    pub fn table(&self, table: ShapeTable) -> &[ShapeEntry; SHAPE_ENTRIES] {
        match table {
            ShapeTable::Fmap => &self.fmap,
            ShapeTable::Weight => &self.weight,
        }
    }

    pub fn table_mut(&mut self, table: ShapeTable) -> &mut [ShapeEntry; SHAPE_ENTRIES] {
        match table {
            ShapeTable::Fmap => &mut self.fmap,
            ShapeTable::Weight => &mut self.weight,
        }
    }

    /// The entry at a 6-bit pointer.
    ///
    /// # Panics
    /// If `index >= 64`; pointers from `isa::decode` are always 6-bit.
    pub fn get(&self, table: ShapeTable, index: u8) -> ShapeEntry {
        self.table(table)[usize::from(index)]
    }

    /// # Panics
    /// If `index >= 64`.
    pub fn set(&mut self, table: ShapeTable, index: u8, entry: ShapeEntry) {
        self.table_mut(table)[usize::from(index)] = entry;
    }
}

/// MEMCPY length in words: `ceil(a*b*c / 8)`, exact (a*b*c < 2^48).
pub fn memcpy_words(shape: ShapeEntry) -> u64 {
    let elements = u64::from(shape.a) * u64::from(shape.b) * u64::from(shape.c);
    elements.div_ceil(8)
}
