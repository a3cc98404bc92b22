//! The per-instruction observer (the `retire` and `full` levels,
//! docs/dut-contract.md): each model's events filed by sequence number,
//! and each instruction compared once both sides retired it: the retire
//! (opcode, error code, once) from `retire` on; the latch, the weight-stream
//! reads and every L2, host, shape-table and e_max write at `full`. Below
//! `full` a host write names no instruction and is filed for the program
//! (final_state.rs compares those).

use super::*;

/// What one side reported for one sequence number.
#[derive(Clone, Debug, Default)]
pub(super) struct Record {
    pub(super) latches: Vec<u64>,
    pub(super) latch_cycles: Vec<Option<u64>>,
    pub(super) start: Option<u64>,
    /// (opcode, err, cycle)
    pub(super) retires: Vec<(u8, u8, Option<u64>)>,
    pub(super) l2: Vec<L2Write>,
    pub(super) host: Vec<(u32, Word)>,
    pub(super) shape: Vec<(ShapeTable, u8, ShapeEntry)>,
    pub(super) emax: Vec<u16>,
    /// (stream, beats) of every weight-stream read.
    pub(super) streams: Vec<(u8, u32)>,
}

impl Record {
    pub(super) fn retired(&self) -> bool {
        !self.retires.is_empty()
    }

    pub(super) fn retire_cycle(&self) -> Option<u64> {
        self.retires.first().and_then(|r| r.2)
    }
}

/// An L2 write with the data of disabled elements cleared: only enabled
/// elements are architectural, so only they are compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct L2Write {
    pub(super) addr: u32,
    pub(super) mask: u8,
    pub(super) data: Word,
}

impl L2Write {
    pub(super) fn new(addr: u32, data: Word, mask: u8) -> L2Write {
        L2Write {
            addr,
            mask,
            data: data & element_mask(mask),
        }
    }
}

/// The bits of the BF16 elements that `mask` enables.
pub(super) fn element_mask(mask: u8) -> Word {
    (0..8)
        .filter(|i| mask & (1 << i) != 0)
        .fold(0, |m, i| m | (0xFFFF << (16 * i)))
}

#[derive(Debug, Default)]
pub(super) struct Pair {
    pub(super) r: Record,
    pub(super) d: Record,
    pub(super) compared: bool,
}

impl Pair {
    pub(super) fn side(&mut self, side: Side) -> &mut Record {
        match side {
            Side::Reference => &mut self.r,
            Side::Dut => &mut self.d,
        }
    }
}

impl<'a> Run<'a> {
    pub(super) fn ingest(&mut self, side: Side, events: Vec<Event>) {
        // Both sides through the same level, so that the checks compare
        // like with like.
        let level = self.level;
        if side == Side::Reference {
            for e in &events {
                // The reference's own retire cycles, whatever the level:
                // the deadlines and the cycle budget are its prediction,
                // not an observation of the DUT.
                if let Event::Retire { cycle, .. } = *e {
                    self.last_cycle[0] = self.last_cycle[0].max(cycle);
                }
                if let Event::ShapeWrite {
                    seq,
                    table,
                    index,
                    entry,
                } = *e
                {
                    self.reference_shapes
                        .entry(seq)
                        .or_default()
                        .push((table, index, entry));
                }
            }
        }
        for event in events.into_iter().filter_map(|e| level.show(e)) {
            if let Event::HostWrite {
                seq: UNATTRIBUTED,
                addr,
                data,
            } = event
            {
                self.unattributed.side(side).host.push((addr, data));
                continue;
            }
            let seq = event.seq();
            let pair = self.pairs.entry(seq).or_default();
            let compared = pair.compared;
            if !compared {
                self.pending.insert(seq);
            }
            let rec = pair.side(side);
            let retired_before = rec.retired();
            match event {
                Event::Latch { word, cycle, .. } => {
                    rec.latches.push(word);
                    rec.latch_cycles.push(cycle);
                }
                Event::Retire {
                    opcode,
                    err,
                    cycle,
                    start,
                    ..
                } => {
                    if rec.retires.is_empty() {
                        rec.start = start;
                    }
                    rec.retires.push((opcode, err, cycle));
                    // The reference's are counted above, before the cut.
                    if side == Side::Dut {
                        self.last_cycle[1] = self.last_cycle[1].max(cycle);
                    }
                }
                Event::L2Write {
                    addr, data, mask, ..
                } => rec.l2.push(L2Write::new(addr, data, mask)),
                Event::HostWrite { addr, data, .. } => rec.host.push((addr, data)),
                Event::ShapeWrite {
                    table,
                    index,
                    entry,
                    ..
                } => rec.shape.push((table, index, entry)),
                Event::EMaxWrite { value, .. } => rec.emax.push(value),
                Event::StreamRead { stream, beats, .. } => rec.streams.push((stream, beats)),
            }
            let retires = rec.retires.len();
            let is_retire = matches!(event, Event::Retire { .. });
            let is_latch = matches!(event, Event::Latch { .. });
            let relatched = (is_latch && compared).then(|| latch_text(&rec.latches));
            let is_write = !is_retire && !is_latch;
            // Events that arrive before the comparison are judged by it;
            // these can only be judged on arrival.
            if is_write && retired_before {
                let (r, d) = side.split(
                    format!("{}, after its retire", describe_write(&event)),
                    "no late write".into(),
                );
                let m = self.mismatch(
                    Some(seq),
                    Finding::new(
                        CheckKind::WriteAfterRetire,
                        Difference::LateWrite { by: side, seq },
                        r,
                        d,
                    ),
                );
                self.report(seq, m);
            } else if is_retire && compared && retires > 1 {
                let (r, d) = side.split(
                    format!("retired seq {seq} {retires} times"),
                    "retired it once".into(),
                );
                let m = self.mismatch(
                    Some(seq),
                    Finding::new(
                        CheckKind::ExtraRetire,
                        Difference::RetiredAgain { by: side, seq },
                        r,
                        d,
                    ),
                );
                self.report(seq, m);
            } else if let Some(latches) = relatched {
                let (r, d) = side.split(latches, "latched it once".into());
                let m = self.mismatch(
                    Some(seq),
                    Finding::new(
                        CheckKind::Latch,
                        Difference::LatchedAgain { by: side, seq },
                        r,
                        d,
                    ),
                );
                self.report(seq, m);
            }
        }
    }

    /// After the drain: whatever was never compared. Every issued
    /// instruction must have retired on both sides.
    pub(super) fn sweep(&mut self) {
        // A black box reports nothing per instruction.
        if self.level == Observation::BlackBox {
            return;
        }
        let seqs: Vec<u32> = self.pending.iter().copied().collect();
        for seq in seqs {
            let p = &self.pairs[&seq];
            match (p.r.retired(), p.d.retired()) {
                (true, true) => self.compare_instruction(seq),
                (true, false) => {
                    let r = retire_text(&p.r);
                    let m = self.mismatch(
                        Some(seq),
                        Finding::new(
                            CheckKind::MissingRetire,
                            Difference::DutNeverRetired { seq },
                            r,
                            "no retire".into(),
                        ),
                    );
                    self.report(seq, m);
                }
                (false, true) => {
                    let d = retire_text(&p.d);
                    let difference = if (seq as usize) < self.issued.len() {
                        Difference::ReferenceNeverRetired { seq }
                    } else {
                        Difference::NeverIssued {
                            seq,
                            issued: self.issued.len(),
                        }
                    };
                    let m = self.mismatch(
                        Some(seq),
                        Finding::new(CheckKind::ExtraRetire, difference, "no retire".into(), d),
                    );
                    self.report(seq, m);
                }
                (false, false) if (seq as usize) < self.issued.len() => {
                    let m = self.mismatch(
                        Some(seq),
                        Finding::new(
                            CheckKind::MissingRetire,
                            Difference::NeitherRetired { seq },
                            "no retire".into(),
                            "no retire".into(),
                        ),
                    );
                    self.report(seq, m);
                }
                // Events for a sequence number that was never issued (a
                // write with a wrong one, say): compare what there is, so
                // that it shows up under its own kind.
                (false, false) => self.compare_instruction(seq),
            }
        }
        for seq in 0..self.issued.len() as u32 {
            if !self.pairs.contains_key(&seq) {
                let m = self.mismatch(
                    Some(seq),
                    Finding::new(
                        CheckKind::MissingRetire,
                        Difference::NothingReported { seq },
                        "nothing".into(),
                        "nothing".into(),
                    ),
                );
                self.report(seq, m);
            }
        }
    }

    pub(super) fn compare_instruction(&mut self, seq: u32) {
        let expected = self.issued.get(seq as usize).copied();
        let pair = self
            .pairs
            .get_mut(&seq)
            .expect("compared seqs have records");
        pair.compared = true;
        self.pending.remove(&seq);
        let (r, d) = (&pair.r, &pair.d);
        let found = compare_records(seq, expected, r, d, self.level);
        if let Some(f) = found {
            let m = self.mismatch(Some(seq), f);
            self.report(seq, m);
        }
    }
}

/// The checks of one instruction, in [`CheckKind`] order; the first that
/// fails is returned.
pub(super) fn compare_records(
    seq: u32,
    expected: Option<u64>,
    r: &Record,
    d: &Record,
    level: Observation,
) -> Found {
    // Latch: exactly one, of the word the harness issued; none for a
    // sequence number that was never issued.
    let latch_ok = |rec: &Record| match expected {
        Some(word) => rec.latches == [word],
        None => rec.latches.is_empty(),
    };
    // Latches are a tap of `Full`.
    if level == Observation::Full && (!latch_ok(r) || !latch_ok(d)) {
        let wrong = if latch_ok(r) {
            Side::Dut
        } else {
            Side::Reference
        };
        return Some(Finding::new(
            CheckKind::Latch,
            Difference::LatchWord {
                seq,
                issued: expected,
                wrong,
            },
            latch_text(&r.latches),
            latch_text(&d.latches),
        ));
    }
    if let (Some(&(ro, _, _)), Some(&(dop, _, _))) = (r.retires.first(), d.retires.first()) {
        if ro != dop {
            return Some(Finding::new(
                CheckKind::RetireOpcode,
                Difference::RetireOpcode {
                    reference: ro,
                    dut: dop,
                },
                retire_text(r),
                retire_text(d),
            ));
        }
    }
    if let (Some(&(_, re, _)), Some(&(_, de, _))) = (r.retires.first(), d.retires.first()) {
        if re != de {
            return Some(Finding::new(
                CheckKind::RetireErr,
                Difference::RetireErr {
                    reference: re,
                    dut: de,
                },
                retire_text(r),
                retire_text(d),
            ));
        }
    }
    if r.retires.len() > 1 || d.retires.len() > 1 {
        return Some(Finding::new(
            CheckKind::ExtraRetire,
            Difference::RetiredMoreThanOnce { seq },
            retire_text(r),
            retire_text(d),
        ));
    }
    compare_stream_reads(r, d)
        .or_else(|| compare_l2_writes(r, d))
        .or_else(|| compare_host_writes(r, d))
        .or_else(|| compare_shape_writes(r, d))
        .or_else(|| compare_emax_writes(r, d))
}

/// The first key (in key order) whose group of entries differs between
/// `r` and `d`, with both groups. Each side is sorted first, so the order in
/// which a model reported its writes does not matter.
pub(super) fn first_differing_group<T: Ord + Clone, K: Ord + Copy>(
    r: &[T],
    d: &[T],
    key: impl Fn(&T) -> K,
) -> Option<(K, Vec<T>, Vec<T>)> {
    // Almost every instruction matches: say so without building groups,
    // in the order reported if both sides agree on it, else sorted.
    if r == d {
        return None;
    }
    if r.len() == d.len() {
        let sorted = |v: &[T]| {
            let mut v = v.to_vec();
            v.sort_by(|a, b| key(a).cmp(&key(b)).then_with(|| a.cmp(b)));
            v
        };
        if sorted(r) == sorted(d) {
            return None;
        }
    }
    let group = |v: &[T]| {
        let mut m: BTreeMap<K, Vec<T>> = BTreeMap::new();
        for x in v {
            m.entry(key(x)).or_default().push(x.clone());
        }
        for g in m.values_mut() {
            g.sort();
        }
        m
    };
    let (gr, gd) = (group(r), group(d));
    let mut keys: Vec<K> = gr.keys().chain(gd.keys()).copied().collect();
    keys.sort();
    keys.dedup();
    keys.into_iter().find_map(|k| {
        let (a, b) = (
            gr.get(&k).cloned().unwrap_or_default(),
            gd.get(&k).cloned().unwrap_or_default(),
        );
        (a != b).then_some((k, a, b))
    })
}

/// Missing, extra, a different count, or (same count) the first value of
/// each: how two differing groups of writes to one place differ.
pub(super) fn group_diff<T, V>(r: &[T], d: &[T], value: impl Fn(&T) -> V) -> GroupDiff<V> {
    match (r.len(), d.len()) {
        (_, 0) => GroupDiff::Missing,
        (0, _) => GroupDiff::Extra,
        (a, b) if a != b => GroupDiff::Count {
            reference: a,
            dut: b,
        },
        _ => GroupDiff::Value {
            reference: value(&r[0]),
            dut: value(&d[0]),
        },
    }
}

pub(super) fn list<T>(items: &[T], show: impl Fn(&T) -> String) -> String {
    if items.is_empty() {
        "no write".into()
    } else {
        items.iter().map(show).collect::<Vec<_>>().join("; ")
    }
}

pub(super) fn compare_stream_reads(r: &Record, d: &Record) -> Found {
    let (stream, a, b) = first_differing_group(&r.streams, &d.streams, |s| s.0)?;
    let place = stream_name(stream);
    let show = |s: &(u8, u32)| format!("{} beats from the {place}", s.1);
    Some(Finding::new(
        CheckKind::WeightStream,
        Difference::StreamRead {
            stream,
            diff: group_diff(&a, &b, |s| s.1),
        },
        list_reads(&a, show),
        list_reads(&b, show),
    ))
}

pub(super) fn list_reads<T>(items: &[T], show: impl Fn(&T) -> String) -> String {
    if items.is_empty() {
        "no stream read".into()
    } else {
        items.iter().map(show).collect::<Vec<_>>().join("; ")
    }
}

pub(super) fn compare_l2_writes(r: &Record, d: &Record) -> Found {
    let (addr, a, b) = first_differing_group(&r.l2, &d.l2, |w| w.addr)?;
    let place = format!("L2[0x{addr:05x}]");
    let show = |w: &L2Write| format!("{place} <- {} mask 0x{:02x}", hex_word(w.data), w.mask);
    Some(Finding::new(
        CheckKind::L2Writes,
        Difference::L2Write {
            addr,
            diff: group_diff(&a, &b, |w| (w.mask, w.data)),
            totals: (r.l2.len(), d.l2.len()),
        },
        list(&a, show),
        list(&b, show),
    ))
}

pub(super) fn compare_host_writes(r: &Record, d: &Record) -> Found {
    let (addr, a, b) = first_differing_group(&r.host, &d.host, |w| w.0)?;
    let place = format!("HOST[0x{addr:05x}]");
    let show = |w: &(u32, Word)| format!("{place} <- {}", hex_word(w.1));
    Some(Finding::new(
        CheckKind::HostWrites,
        Difference::HostWrite {
            addr,
            diff: group_diff(&a, &b, |w| w.1),
            totals: (r.host.len(), d.host.len()),
        },
        list(&a, show),
        list(&b, show),
    ))
}

pub(super) fn compare_shape_writes(r: &Record, d: &Record) -> Found {
    // ShapeEntry has no order; compare as (a, b, c) tuples.
    let flat = |v: &[(ShapeTable, u8, ShapeEntry)]| -> Vec<(ShapeTable, u8, (u16, u16, u16))> {
        v.iter().map(|&(t, i, e)| (t, i, (e.a, e.b, e.c))).collect()
    };
    let ((table, index), a, b) =
        first_differing_group(&flat(&r.shape), &flat(&d.shape), |w| (w.0, w.1))?;
    let place = table_slot(table, index);
    let entry = |w: &(ShapeTable, u8, (u16, u16, u16))| {
        let (a, b, c) = w.2;
        ShapeEntry { a, b, c }
    };
    let show = |w: &(ShapeTable, u8, (u16, u16, u16))| format!("{place} <- {}", shape(entry(w)));
    Some(Finding::new(
        CheckKind::ShapeWrites,
        Difference::ShapeWrite {
            table,
            index,
            diff: group_diff(&a, &b, entry),
        },
        list(&a, show),
        list(&b, show),
    ))
}

pub(super) fn compare_emax_writes(r: &Record, d: &Record) -> Found {
    let ((), a, b) = first_differing_group(&r.emax, &d.emax, |_| ())?;
    let show = |v: &u16| format!("e_max <- 0x{v:04x}");
    Some(Finding::new(
        CheckKind::EMaxWrites,
        Difference::EMaxWrite {
            diff: group_diff(&a, &b, |v| *v),
        },
        list(&a, show),
        list(&b, show),
    ))
}

/// A write event as the reports show it.
pub(super) fn describe_write(event: &Event) -> String {
    match *event {
        Event::L2Write {
            addr, data, mask, ..
        } => format!("L2[0x{addr:05x}] <- {} mask 0x{mask:02x}", hex_word(data)),
        Event::HostWrite { addr, data, .. } => format!("HOST[0x{addr:05x}] <- {}", hex_word(data)),
        Event::ShapeWrite {
            table,
            index,
            entry,
            ..
        } => format!("{} <- {}", table_slot(table, index), shape(entry)),
        Event::EMaxWrite { value, .. } => format!("e_max <- 0x{value:04x}"),
        Event::StreamRead { stream, beats, .. } => {
            format!("{beats} beats from the {}", stream_name(stream))
        }
        Event::Latch { .. } | Event::Retire { .. } => "not a write".into(),
    }
}

pub(super) fn retire_text(rec: &Record) -> String {
    if rec.retires.is_empty() {
        return "no retire".into();
    }
    rec.retires
        .iter()
        .map(|&(op, err, cycle)| {
            let at = cycle.map(|c| format!(" at cycle {c}")).unwrap_or_default();
            format!("retired opcode 0x{op:x} with err {}{at}", err_name(err))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

pub(super) fn latch_text(latches: &[u64]) -> String {
    match latches {
        [] => "no latch".into(),
        _ => latches
            .iter()
            .map(|w| format!("latched 0x{w:016x}"))
            .collect::<Vec<_>>()
            .join("; "),
    }
}
