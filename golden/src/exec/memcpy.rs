//! MEMCPY (docs/semantics.md section 5).

use crate::isa::{MemRoute, Memcpy};
use crate::model::{ErrorCode, ShapeTable, HOST_WORDS};
use crate::state::{in_range, State};
use crate::tables::{memcpy_words, Tables};

pub fn execute(state: &mut State, seq: u32, op: &Memcpy) -> Result<(), ErrorCode> {
    let len = memcpy_words(state.tables.get(ShapeTable::Fmap, op.shape_ptr_addr));
    let (src, dest) = (u64::from(op.src_addr), u64::from(op.dest_addr));
    let route = op.route();
    check_ranges(route, src, dest, len, state.l2_words())?;
    // All reads before any write: memmove semantics for overlapping L2 -> L2.
    let data = match route {
        MemRoute::HostToL2 => state.read_host(src, len),
        MemRoute::L2ToHost | MemRoute::L2ToL2 => state.read_l2(src, len),
    };
    for (addr, word) in (dest..).zip(data) {
        match route {
            MemRoute::L2ToHost => state.write_host(seq, addr, word),
            MemRoute::HostToL2 | MemRoute::L2ToL2 => state.write_l2(seq, addr, word, 0xFF),
        }
    }
    Ok(())
}

/// A MEMCPY's range checks on an L2 of `l2_words`: source first, then
/// destination (the first failing range names the code); zero words are
/// in range wherever they start.
pub fn check_ranges(
    route: MemRoute,
    src: u64,
    dest: u64,
    len: u64,
    l2_words: u32,
) -> Result<(), ErrorCode> {
    // As State::check_host and check_l2 judge a range.
    let fits = |base: u64, size: u32| len == 0 || in_range(base, len, size as usize);
    let host = |base| {
        fits(base, HOST_WORDS)
            .then_some(())
            .ok_or(ErrorCode::HostRange)
    };
    let l2 = |base| fits(base, l2_words).then_some(()).ok_or(ErrorCode::L2Range);
    match route {
        MemRoute::HostToL2 => host(src)?,
        MemRoute::L2ToHost | MemRoute::L2ToL2 => l2(src)?,
    }
    match route {
        MemRoute::L2ToHost => host(dest),
        MemRoute::HostToL2 | MemRoute::L2ToL2 => l2(dest),
    }
}

/// The host words a MEMCPY moves, in the order it moves them (word `i` of
/// the copy is host word `host_addr + i`): what the DMA in front of a DUT
/// whose host memory is two streams is programmed with (docs/dut-contract.md,
/// "Host memory by streams").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostTransfer {
    /// L2 to host (the DUT sends), else host to L2 (the DUT takes).
    pub to_host: bool,
    pub host_addr: u64,
    pub words: u64,
}

/// The host transfer of `op` with the shape tables as `tables` hold them
/// when it executes, on an L2 of `l2_words`: `None` when it moves no host
/// word (an L2 to L2 copy, zero words, or a range check that fails, after
/// which nothing moves).
pub fn host_transfer(op: &Memcpy, tables: &Tables, l2_words: u32) -> Option<HostTransfer> {
    let len = memcpy_words(tables.get(ShapeTable::Fmap, op.shape_ptr_addr));
    let (src, dest) = (u64::from(op.src_addr), u64::from(op.dest_addr));
    let route = op.route();
    if len == 0 || check_ranges(route, src, dest, len, l2_words).is_err() {
        return None;
    }
    match route {
        MemRoute::HostToL2 => Some(HostTransfer {
            to_host: false,
            host_addr: src,
            words: len,
        }),
        MemRoute::L2ToHost => Some(HostTransfer {
            to_host: true,
            host_addr: dest,
            words: len,
        }),
        MemRoute::L2ToL2 => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ShapeEntry;

    fn copy(from_host: bool, to_host: bool, dest: u32, src: u32) -> Memcpy {
        Memcpy {
            from_device: from_host,
            to_device: to_host,
            dest_addr: dest,
            src_addr: src,
            aux_addr: 0,
            shape_ptr_addr: 5,
            async_: true,
        }
    }

    #[test]
    fn a_host_transfer_is_the_copy_s_host_words_or_none_when_nothing_moves() {
        let mut tables = Tables::default();
        // 17 elements: three words.
        tables.set(ShapeTable::Fmap, 5, ShapeEntry { a: 17, b: 1, c: 1 });
        let t = |m: &Memcpy| host_transfer(m, &tables, 4096);
        assert_eq!(
            t(&copy(true, false, 10, 100)),
            Some(HostTransfer {
                to_host: false,
                host_addr: 100,
                words: 3
            })
        );
        assert_eq!(
            t(&copy(false, true, 200, 20)),
            Some(HostTransfer {
                to_host: true,
                host_addr: 200,
                words: 3
            })
        );
        // L2 to L2, a host range past the end, an L2 range past the end.
        assert_eq!(t(&copy(false, false, 10, 20)), None);
        assert_eq!(t(&copy(true, false, 10, HOST_WORDS - 2)), None);
        assert_eq!(t(&copy(true, false, 4094, 0)), None);
        assert_eq!(t(&copy(false, true, 0, 4094)), None);
        // Zero words.
        tables.set(ShapeTable::Fmap, 5, ShapeEntry::default());
        assert_eq!(host_transfer(&copy(true, false, 0, 0), &tables, 4096), None);
    }
}
