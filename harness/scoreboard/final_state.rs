//! The end-of-program observer: after the drain, the state both models
//! hold. At `full` through the back door (L2, host memory, shape tables,
//! e_max) and the registers; below `full`, the program's host writes, host
//! memory, the registers, the weight beats taken and the L2 read back
//! through the NPU's own MEMCPY (docs/dut-contract.md, "Reading L2 back").

use super::*;

impl<'a> Run<'a> {
    pub(super) fn compare_final_state(&mut self) -> Result<(), ModelError> {
        let checks: &[FinalCheck] = if self.level == Observation::Full {
            &[
                final_l2,
                final_host,
                final_tables,
                final_emax,
                final_weight_stream,
                final_status,
                final_retired,
                final_instr_regs,
            ]
        } else {
            // Below `Full` the host writes were compared for the whole
            // program; the shape tables and e_max have no port to be read
            // by (docs/dut-contract.md, "What each level checks").
            if let Some(f) = compare_host_writes(&self.unattributed.r, &self.unattributed.d) {
                let m = self.mismatch(None, f);
                self.report(u32::MAX, m);
                return Ok(());
            }
            &[
                final_host,
                final_weight_stream,
                final_status,
                final_retired,
                final_instr_regs,
            ]
        };
        for &check in checks {
            // A failed assertion of the DUT during these reads is the DUT's
            // (the reference has none); any other error cannot tell the side.
            let found = match check(&mut *self.a, &mut *self.b) {
                Ok(found) => found,
                Err(e @ ModelError::Assertion(_)) => return Err(self.dut_failed(e)),
                Err(e) => return Err(e),
            };
            if let Some(f) = found {
                let m = self.mismatch(None, f);
                self.report(u32::MAX, m);
                return Ok(());
            }
        }
        if self.level < Observation::Full {
            // Last: the copy overwrites host memory.
            self.read_back = true;
            let words = self.a.l2_words();
            let reference_end = call(self.a, |m| read_back_l2(m, words))?;
            // The DUT's deadline, from the reference's own retires of the
            // copy as for the program's instructions (`collect`).
            if let (Some(end), true) = (
                reference_end,
                self.a.clock().is_some_and(|c| c.predicts_timing()),
            ) {
                if let Some(clock) = self.b.clock() {
                    clock.set_wait_deadline(Some(end * DEADLINE_FACTOR + DEADLINE_SLACK_CYCLES));
                }
            }
            self.on_dut(|m| read_back_l2(m, words))?;
            let read = |m: &mut dyn NpuModel, addr, out: &mut [Word]| m.read_host(addr, out);
            let found = compare_memory(
                CheckKind::FinalL2,
                Memory::Host,
                words,
                &mut *self.a,
                &mut *self.b,
                read,
            )?;
            if let Some(f) = found {
                let m = self.mismatch(None, f.read_back());
                self.report(u32::MAX, m);
            }
        }
        Ok(())
    }
}

/// Words compared at a time: two buffers of this many words stay in the
/// core's cache, so a whole memory is compared without allocating or
/// clearing a copy of it (docs/build.md, "Campaign throughput").
pub(super) const COMPARE_CHUNK_WORDS: usize = 4096;

/// The memory `m` lends, if it does.
pub(super) fn lent_memory(m: &dyn NpuModel, memory: Memory) -> Option<MemoryView<'_>> {
    match memory {
        Memory::L2 => m.l2_view(),
        Memory::Host => m.host_view(),
    }
}

/// Compares every word of one memory of the two models: in place where a
/// model lends its memory (a view), else a chunk at a time through the
/// back door (`read`). The first differing word, and how many differ in
/// all.
pub(super) fn compare_memory(
    kind: CheckKind,
    memory: Memory,
    words: u32,
    a: &mut dyn NpuModel,
    b: &mut dyn NpuModel,
    read: impl Fn(&mut dyn NpuModel, u32, &mut [Word]) -> Result<(), ModelError>,
) -> Result<Found, ModelError> {
    // A view of another length than the memory is read instead.
    let lends =
        |m: &dyn NpuModel| lent_memory(m, memory).is_some_and(|v| v.words() == words as usize);
    let (a_lends, b_lends) = (lends(&*a), lends(&*b));
    let (mut r_buf, mut d_buf) = (Vec::new(), Vec::new());
    let mut first: Option<(u32, Word, Word)> = None;
    let mut differing = 0usize;
    let mut start = 0u32;
    while start < words {
        let n = (words - start).min(COMPARE_CHUNK_WORDS as u32) as usize;
        let range = start as usize..start as usize + n;
        let r = if a_lends {
            lent_memory(&*a, memory).expect("lent").bytes(range.clone())
        } else {
            r_buf.resize(n, 0);
            call(a, |m| read(m, start, &mut r_buf[..n]))?;
            MemoryView::of_words(&r_buf[..n]).bytes(0..n)
        };
        let d = if b_lends {
            lent_memory(&*b, memory).expect("lent").bytes(range)
        } else {
            d_buf.resize(n, 0);
            call(b, |m| read(m, start, &mut d_buf[..n]))?;
            MemoryView::of_words(&d_buf[..n]).bytes(0..n)
        };
        if r != d {
            for (i, (x, y)) in r.chunks_exact(16).zip(d.chunks_exact(16)).enumerate() {
                if x != y {
                    differing += 1;
                    let word = |b: &[u8]| u128::from_le_bytes(b.try_into().expect("16 bytes"));
                    first.get_or_insert((start + i as u32, word(x), word(y)));
                }
            }
        }
        start += n as u32;
    }
    let Some((addr, reference, dut)) = first else {
        return Ok(None);
    };
    let mem = memory.name();
    Ok(Some(Finding::new(
        kind,
        Difference::FinalMemory {
            memory,
            addr,
            reference,
            dut,
            differing,
        },
        format!("{mem}[0x{addr:05x}] = {}", hex_word(reference)),
        format!("{mem}[0x{addr:05x}] = {}", hex_word(dut)),
    )))
}

pub(super) fn final_l2(a: &mut dyn NpuModel, b: &mut dyn NpuModel) -> Result<Found, ModelError> {
    let words = a.l2_words();
    let read = |m: &mut dyn NpuModel, addr, out: &mut [Word]| m.read_l2(addr, out);
    compare_memory(CheckKind::FinalL2, Memory::L2, words, a, b, read)
}

/// Words of L2 one MEMCPY of the read back copies, and the fmap shape
/// entries it uses: (8, READ_BACK_WORDS, 1) is 8 * READ_BACK_WORDS BF16
/// elements, READ_BACK_WORDS words (CONTRACT section 4); the last entry
/// holds a shorter remainder.
pub(super) const READ_BACK_WORDS: u32 = 4096;
pub(super) const READ_BACK_SHAPES: [u8; 2] = [SHAPE_ENTRIES as u8 - 1, SHAPE_ENTRIES as u8 - 2];

/// The program that copies L2 words `0..words` to host words `0..words`
/// through the NPU's own MEMCPY (L2 to host), for a model seen below
/// `Full` (docs/dut-contract.md, "Reading L2 back").
pub fn read_back_program(words: u32) -> Vec<u64> {
    let (whole, rest) = (words / READ_BACK_WORDS, words % READ_BACK_WORDS);
    let shape = |index: u8, n: u32| {
        Instr::Memset(Memset {
            dest_cache: ShapeTable::Fmap,
            dest_addr: index,
            a_value: 8,
            b_value: n as u16,
            c_value: 1,
            reserved: 0,
        })
    };
    let copy = |start: u32, index: u8| {
        Instr::Memcpy(Memcpy {
            from_device: false,
            to_device: true,
            dest_addr: start,
            src_addr: start,
            aux_addr: 0,
            shape_ptr_addr: index,
            async_: false,
        })
    };
    let mut program = vec![shape(READ_BACK_SHAPES[0], READ_BACK_WORDS)];
    if rest > 0 {
        program.push(shape(READ_BACK_SHAPES[1], rest));
    }
    program.extend((0..whole).map(|k| copy(k * READ_BACK_WORDS, READ_BACK_SHAPES[0])));
    if rest > 0 {
        program.push(copy(whole * READ_BACK_WORDS, READ_BACK_SHAPES[1]));
    }
    program.iter().map(Instr::encode).collect()
}

/// Runs [`read_back_program`] on `m` to the end; what it reports is not
/// part of the case and is dropped, but for the cycle of its last retire,
/// when `m` reports one.
pub(super) fn read_back_l2(m: &mut dyn NpuModel, words: u32) -> Result<Option<u64>, ModelError> {
    for word in read_back_program(words) {
        m.issue(word)?;
    }
    m.drain()?;
    Ok(m.take_events()
        .iter()
        .filter_map(|e| match e {
            Event::Retire { cycle, .. } => *cycle,
            _ => None,
        })
        .max())
}

pub(super) fn final_host(a: &mut dyn NpuModel, b: &mut dyn NpuModel) -> Result<Found, ModelError> {
    let read = |m: &mut dyn NpuModel, addr, out: &mut [Word]| m.read_host(addr, out);
    compare_memory(CheckKind::FinalHost, Memory::Host, HOST_WORDS, a, b, read)
}

pub(super) fn final_tables(
    a: &mut dyn NpuModel,
    b: &mut dyn NpuModel,
) -> Result<Found, ModelError> {
    let mut differing = Vec::new();
    for table in ShapeTable::ALL {
        for index in 0..SHAPE_ENTRIES as u8 {
            let r = call(a, |m| m.shape_entry(table, index))?;
            let d = call(b, |m| m.shape_entry(table, index))?;
            if r != d {
                differing.push((table, index, r, d));
            }
        }
    }
    Ok(differing.first().map(|&(table, index, r, d)| {
        let place = table_slot(table, index);
        Finding::new(
            CheckKind::FinalTables,
            Difference::FinalTable {
                table,
                index,
                differing: differing.len(),
            },
            format!("{place} = {}", shape(r)),
            format!("{place} = {}", shape(d)),
        )
    }))
}

pub(super) fn final_emax(a: &mut dyn NpuModel, b: &mut dyn NpuModel) -> Result<Found, ModelError> {
    let r = call(a, |m| m.e_max())?;
    let d = call(b, |m| m.e_max())?;
    Ok((r != d).then(|| {
        Finding::new(
            CheckKind::FinalEMax,
            Difference::FinalEMax {
                reference: r,
                dut: d,
            },
            format!("e_max = 0x{r:04x}"),
            format!("e_max = 0x{d:04x}"),
        )
    }))
}

pub(super) fn final_weight_stream(
    a: &mut dyn NpuModel,
    b: &mut dyn NpuModel,
) -> Result<Found, ModelError> {
    let (r, d) = (a.weight_beats_consumed(), b.weight_beats_consumed());
    let show = |c: [u64; 2]| {
        (0..2u8)
            .map(|s| format!("{} beats from the {}", c[usize::from(s)], stream_name(s)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    Ok((0..2u8)
        .find(|&s| r[usize::from(s)] != d[usize::from(s)])
        .map(|stream| {
            let i = usize::from(stream);
            Finding::new(
                CheckKind::FinalWeightStream,
                Difference::FinalBeats {
                    stream,
                    reference: r[i],
                    dut: d[i],
                },
                show(r),
                show(d),
            )
        }))
}

pub(super) fn read_reg(m: &mut dyn NpuModel, offset: u32) -> Result<(u32, AxiResp), ModelError> {
    call(m, |m| m.reg_read(offset))
}

pub(super) fn final_status(
    a: &mut dyn NpuModel,
    b: &mut dyn NpuModel,
) -> Result<Found, ModelError> {
    let (r, d) = (read_reg(a, reg::STATUS)?, read_reg(b, reg::STATUS)?);
    Ok((r != d).then(|| {
        let show = |(v, resp): (u32, AxiResp)| {
            format!("0x{v:08x} ({}), {}", status_fields(v), resp_name(resp))
        };
        Finding::new(
            CheckKind::FinalStatus,
            Difference::FinalStatus {
                reference: r.0,
                dut: d.0,
            },
            show(r),
            show(d),
        )
    }))
}

/// 0x00 and 0x04 read back the words last written to them, and an offset
/// the map does not name reads 0 with SLVERR (CONTRACT section 10): read
/// paths the instruction stream alone never exercises. The unmapped ones
/// are the first past the map and the last of the 12-bit space.
pub(super) fn final_instr_regs(
    a: &mut dyn NpuModel,
    b: &mut dyn NpuModel,
) -> Result<Found, ModelError> {
    for offset in [reg::INSTR_LO, reg::INSTR_HI, UNMAPPED_FIRST, UNMAPPED_LAST] {
        let (r, d) = (read_reg(a, offset)?, read_reg(b, offset)?);
        if r != d {
            let show = |(v, resp): (u32, AxiResp)| {
                format!("0x{offset:02x} = 0x{v:08x}, {}", resp_name(resp))
            };
            return Ok(Some(Finding::new(
                CheckKind::FinalInstrRegs,
                Difference::FinalInstrReg { offset },
                show(r),
                show(d),
            )));
        }
    }
    Ok(None)
}

/// Register offsets no register answers, read at the end of every case.
pub(super) const UNMAPPED_FIRST: u32 = 0x010;
pub(super) const UNMAPPED_LAST: u32 = 0xFFC;

pub(super) fn final_retired(
    a: &mut dyn NpuModel,
    b: &mut dyn NpuModel,
) -> Result<Found, ModelError> {
    let (r, d) = (read_reg(a, reg::RETIRED)?, read_reg(b, reg::RETIRED)?);
    Ok((r != d).then(|| {
        let show = |(v, resp): (u32, AxiResp)| format!("{v} retired, {}", resp_name(resp));
        Finding::new(
            CheckKind::FinalRetiredCount,
            Difference::FinalRetired {
                reference: r.0,
                dut: d.0,
            },
            show(r),
            show(d),
        )
    }))
}

// ----- formatting ------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;
    use pccx_golden::golden::{Golden, GoldenConfig};

    #[test]
    fn the_read_back_copies_every_l2_word_to_the_same_host_word() {
        // Whole chunks, and a remainder (two shape entries, two lengths).
        for words in [4096, 5000, 114_688] {
            let program = read_back_program(words);
            let copies = words.div_ceil(READ_BACK_WORDS) as usize;
            let shapes = if words % READ_BACK_WORDS == 0 { 1 } else { 2 };
            assert_eq!(program.len(), shapes + copies, "{words} words");
            let mut m = Golden::new(GoldenConfig { l2_words: words });
            let image: Vec<Word> = (0..words).map(|i| Word::from(i) * 0x1_0001 + 7).collect();
            m.write_l2(0, &image).unwrap();
            read_back_l2(&mut m, words).unwrap();
            let mut host = vec![0; words as usize];
            m.read_host(0, &mut host).unwrap();
            assert!(host == image, "{words} words: the copy differs");
            // The word after the copy is untouched.
            let mut next = [1];
            m.read_host(words, &mut next).unwrap();
            assert_eq!(next, [0]);
        }
    }
}
