//! What each instruction reads and writes (docs/semantics.md section 8), and
//! whether two footprints conflict. The scheduler models (RTL and the
//! timing part of the harness) order instructions by these; the sequential
//! interpreter does not need them.

use crate::isa::{CvoFunc, Instr, MemRoute};
use crate::model::ShapeTable;
use crate::tables::{memcpy_words, Tables};

/// A half-open word range `[start, end)`, never empty (an empty access is
/// `None` in a [`Footprint`]). Bounds are nominal: they may run past the
/// memory, since an instruction that will fail its range check still orders.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Range {
    pub start: u64,
    pub end: u64,
}

impl Range {
    /// `[start, start + len)`, or `None` when `len == 0`.
    pub fn new(start: u64, len: u64) -> Option<Range> {
        (len > 0).then(|| Range {
            start,
            end: start + len,
        })
    }

    pub fn len(&self) -> u64 {
        self.end - self.start
    }

    pub fn is_empty(&self) -> bool {
        self.start >= self.end
    }

    pub fn overlaps(&self, other: &Range) -> bool {
        self.start < other.end && other.start < self.end
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Footprint {
    pub l2_read: Option<Range>,
    pub l2_write: Option<Range>,
    pub host_read: Option<Range>,
    pub host_write: Option<Range>,
    /// Shape-table entries whose values determine the ranges.
    pub table_reads: Vec<(ShapeTable, u8)>,
    pub table_write: Option<(ShapeTable, u8)>,
    pub emax_read: bool,
    pub emax_write: bool,
    /// `async = 0` MEMCPY or CVO: waits for all older, holds all younger.
    pub barrier: bool,
}

/// The L2 words a CVO of `length` elements reads and writes:
/// ceil(length/8) each way, one more read for SCALE (the scalar at src,
/// then the vector), one word written by REDUCE_SUM (its scalar result;
/// none for an empty vector).
pub fn cvo_range_words(func: CvoFunc, length: u16) -> (u64, u64) {
    let words = u64::from(length).div_ceil(8);
    let read = words + u64::from(func == CvoFunc::Scale);
    let write = match func {
        CvoFunc::ReduceSum => u64::from(length != 0),
        _ => words,
    };
    (read, write)
}

/// The footprint of a legal instruction, with ranges from the current
/// table contents.
///
/// # Panics
/// On a hand-built host -> host MEMCPY (see `Memcpy::route`).
pub fn footprint(instr: &Instr, tables: &Tables) -> Footprint {
    match instr {
        Instr::Memset(m) => Footprint {
            table_write: Some((m.dest_cache, m.dest_addr)),
            ..Footprint::default()
        },
        Instr::Memcpy(m) => {
            let len = memcpy_words(tables.get(ShapeTable::Fmap, m.shape_ptr_addr));
            let src = Range::new(m.src_addr.into(), len);
            let dest = Range::new(m.dest_addr.into(), len);
            let mut fp = Footprint {
                table_reads: vec![(ShapeTable::Fmap, m.shape_ptr_addr)],
                barrier: !m.async_,
                ..Footprint::default()
            };
            match m.route() {
                MemRoute::HostToL2 => (fp.host_read, fp.l2_write) = (src, dest),
                MemRoute::L2ToHost => (fp.l2_read, fp.host_write) = (src, dest),
                MemRoute::L2ToL2 => (fp.l2_read, fp.l2_write) = (src, dest),
            }
            fp
        }
        Instr::Gemv(m) | Instr::Gemm(m) => {
            let fmap = tables.get(ShapeTable::Fmap, m.shape_ptr_addr);
            let weight = tables.get(ShapeTable::Weight, m.size_ptr_addr);
            let (rows, k, n) = (u64::from(fmap.a), u64::from(fmap.b), u64::from(weight.b));
            Footprint {
                // INT8 activations, 16 per word, each row word-aligned.
                l2_read: Range::new(m.src_addr.into(), rows * k.div_ceil(16)),
                // BF16 results, 8 per word, each row word-aligned.
                l2_write: Range::new(m.dest_reg.into(), rows * n.div_ceil(8)),
                table_reads: vec![
                    (ShapeTable::Fmap, m.shape_ptr_addr),
                    (ShapeTable::Weight, m.size_ptr_addr),
                ],
                emax_write: m.findemax(),
                ..Footprint::default()
            }
        }
        Instr::Cvo(c) => {
            let (read, write) = cvo_range_words(c.func, c.length);
            let l2_read = Range::new(u64::from(c.src_addr), read);
            let l2_write = Range::new(u64::from(c.dst_addr), write);
            Footprint {
                l2_read,
                l2_write,
                emax_read: c.sub_emax(),
                barrier: !c.async_,
                ..Footprint::default()
            }
        }
    }
}

fn overlap(a: &Option<Range>, b: &Option<Range>) -> bool {
    matches!((a, b), (Some(a), Some(b)) if a.overlaps(b))
}

/// Whether `writer`'s writes touch anything `other` reads or writes.
fn writes_hit(writer: &Footprint, other: &Footprint) -> bool {
    let l2 =
        overlap(&writer.l2_write, &other.l2_read) || overlap(&writer.l2_write, &other.l2_write);
    let host = overlap(&writer.host_write, &other.host_read)
        || overlap(&writer.host_write, &other.host_write);
    let table = writer.table_write.is_some_and(|entry| {
        other.table_reads.contains(&entry) || other.table_write == Some(entry)
    });
    let emax = writer.emax_write && (other.emax_read || other.emax_write);
    l2 || host || table || emax
}

/// RAW, WAR or WAW between an older and a younger instruction on any L2
/// word, host word, shape-table entry or e_max. Barriers are the caller's
/// business. (The relation happens to be symmetric.)
pub fn conflicts(older: &Footprint, younger: &Footprint) -> bool {
    writes_hit(older, younger) || writes_hit(younger, older)
}

#[cfg(test)]
mod tests;
