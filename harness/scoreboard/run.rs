//! The run of one case: both models loaded, the program applied item by
//! item, events collected and filed, the drain and the quiescence, then the
//! level's checks (instructions.rs, final_state.rs, timing.rs), and the
//! outcome. The driver every observation level shares.

use super::*;

impl<'a> Run<'a> {
    pub(super) fn new(
        case: &'a TestCase,
        a: &'a mut dyn NpuModel,
        b: &'a mut dyn NpuModel,
    ) -> Run<'a> {
        let level = a.observation().min(b.observation());
        let hand_off = b.numerics().cloned().map(numerics::HandOff::new);
        let cycle_budget = b.cycle_budget();
        Run {
            case,
            a,
            b,
            issued: Vec::new(),
            pairs: BTreeMap::new(),
            pending: BTreeSet::new(),
            found: Vec::new(),
            last_cycle: [None; 2],
            timing: TimingMode::Exact,
            level,
            unattributed: Pair::default(),
            reference_shapes: BTreeMap::new(),
            read_back: false,
            hand_off,
            cycle_budget,
            dut_end_cycle: None,
        }
    }

    pub(super) fn has_mismatch(&self) -> bool {
        !self.found.is_empty()
    }

    pub(super) fn outcome(mut self) -> Outcome {
        self.found.sort_by_key(|(rank, _)| *rank);
        let mut engine_busy = PerEngine::<u64>::default();
        let mut retire_latency = RetireLatency::default();
        for p in self.pairs.values() {
            let retire = p.d.retire_cycle();
            // The engine of the retired opcode; bits no opcode has count
            // nowhere.
            let engine = p.d.retires.first().and_then(|r| Engine::of_bits(r.0));
            if let (Some(start), Some(retire), Some(engine)) = (p.d.start, retire, engine) {
                engine_busy[engine] += retire.saturating_sub(start) + 1;
            }
            let latch = p.d.latch_cycles.first().copied().flatten();
            if let (Some(latch), Some(retire), Some(engine)) = (latch, retire, engine) {
                retire_latency.add(engine, retire.saturating_sub(latch));
            }
        }
        Outcome {
            handed_over: self.hand_off.as_ref().map_or(0, |h| h.accepted),
            engine_busy,
            retire_latency,
            instructions: self.issued.len() as u32,
            // Below `retire` the DUT shows no retire; the end of its drain
            // is its own last cycle.
            cycles: self.last_cycle[1]
                .or(self.dut_end_cycle)
                .or(self.last_cycle[0]),
            first_mismatch: self.found.into_iter().next().map(|(_, m)| m),
        }
    }

    pub(super) fn note_after_mismatch(&mut self, e: &ModelError) {
        for (_, m) in &mut self.found {
            // A hang or protocol violation is that error already.
            if !matches!(
                m.kind,
                CheckKind::Hang | CheckKind::BusProtocol | CheckKind::Assertion
            ) {
                m.afterwards = Some(e.to_string());
            }
        }
    }

    /// Calls `f` on the DUT; an error there goes through [`Self::dut_failed`].
    pub(super) fn on_dut<T>(
        &mut self,
        f: impl FnOnce(&mut dyn NpuModel) -> Result<T, ModelError>,
    ) -> Result<T, ModelError> {
        f(&mut *self.b).map_err(|e| self.dut_failed(e))
    }

    /// An error of the DUT. A hang (past the watchdog, or past the deadline
    /// the reference's retires give), a bus protocol violation or a failed
    /// assertion is the DUT's failure, not the harness's: it is reported as
    /// a mismatch, at the oldest instruction the DUT has not retired and the
    /// cycle it was seen, and the error ends the run (run_case_resident
    /// then returns the outcome with it). Other errors are the harness's.
    ///
    /// A failed assertion is reported first when the scoreboard had found
    /// nothing before the DUT call it failed in returned: the model stops
    /// at the assertion's edge, so what the scoreboard finds now comes from
    /// the same cycles, and the assertion names the fault where it happens.
    pub(super) fn dut_failed(&mut self, e: ModelError) -> ModelError {
        let (kind, difference) = match &e {
            ModelError::Watchdog { what, .. } => {
                (CheckKind::Hang, Difference::Hang { at: what.clone() })
            }
            ModelError::Protocol(what) => (
                CheckKind::BusProtocol,
                Difference::BusProtocol { what: what.clone() },
            ),
            ModelError::Assertion(a) => match assertions::by_name(&a.name) {
                Some(known) => (
                    CheckKind::Assertion,
                    Difference::Assertion {
                        name: known.name,
                        scope: a.scope.clone(),
                        also: a.also.clone(),
                    },
                ),
                None => {
                    return ModelError::Other(format!(
                        "{}: assertion {} failed, which harness/scoreboard/assertions.rs \
                         does not list: add it there (its name is a signature field)",
                        self.b.name(),
                        a.name
                    ))
                }
            },
            _ => return named(e, self.b.name()),
        };
        let found_before = self.has_mismatch();
        let dut_text = e.to_string();
        self.collect();
        let seq = (0..self.issued.len() as u32)
            .find(|s| self.pairs.get(s).is_none_or(|p| !p.d.retired()));
        let reference = seq
            .and_then(|s| self.pairs.get(&s))
            .map_or_else(|| "-".to_string(), |p| retire_text(&p.r));
        let mut m = self.mismatch(seq, Finding::new(kind, difference, reference, dut_text));
        m.cycle = self.b.clock().and_then(|c| c.cycle_now()).or(m.cycle);
        match &e {
            ModelError::Assertion(a) => {
                m.cycle = Some(a.cycle); // the edge it failed at
                if found_before {
                    self.report(seq.unwrap_or(u32::MAX), m);
                } else {
                    self.report_first(m);
                }
            }
            _ => self.report(seq.unwrap_or(u32::MAX), m),
        }
        named(e, self.b.name())
    }

    /// The word addresses of every L2 and host write the reference made.
    pub(super) fn reference_writes(&self) -> (Vec<u32>, Vec<u32>) {
        let records = || {
            self.pairs
                .values()
                .map(|p| &p.r)
                .chain([&self.unattributed.r])
        };
        let mut host: Vec<u32> = records().flat_map(|r| r.host.iter().map(|w| w.0)).collect();
        if self.read_back {
            host.extend(0..self.a.l2_words());
        }
        (
            records()
                .flat_map(|r| r.l2.iter().map(|w| w.addr))
                .collect(),
            host,
        )
    }

    pub(super) fn execute(&mut self, resident: &Resident) -> Result<(), ModelError> {
        self.load(resident)?;
        if self.hand_off.is_some() && self.level < Observation::Full {
            return Err(ModelError::Other(format!(
                "{} declares a numerics profile, whose values are handed over from its L2 \
                 writes, but is seen at the {} level: run it at `full` (docs/dut-contract.md, \
                 \"Numerics profiles\")",
                self.b.name(),
                self.level
            )));
        }
        for item in &self.case.program.items {
            self.apply(item)?;
            self.collect();
            if self.has_mismatch() {
                break;
            }
        }
        if self.hand_off.is_some() {
            // The DUT first: the reference waits for its values.
            self.on_dut(|m| m.drain())?;
            self.finish_hand_off()?;
            call(self.a, |m| m.drain())?;
        } else {
            call(self.a, |m| m.drain())?;
            self.collect();
            self.on_dut(|m| m.drain())?;
        }
        self.dut_end_cycle = self.b.clock().and_then(|c| c.cycle_now());
        if let Some(clock) = self.b.clock() {
            clock.set_wait_deadline(None);
        }
        self.collect();
        // Quiescence: a drained NPU must stay silent. Idle a little and look
        // again, so a stray write or a second retire reported after the
        // last instruction finished is still caught.
        call(self.a, |m| m.idle(QUIESCENCE_CYCLES))?;
        self.on_dut(|m| m.idle(QUIESCENCE_CYCLES))?;
        self.collect();
        self.sweep();
        if !self.has_mismatch() {
            self.compare_final_state()?;
        }
        if !self.has_mismatch() {
            self.compare_timing();
        }
        Ok(())
    }

    pub(super) fn load(&mut self, resident: &Resident) -> Result<(), ModelError> {
        let want = self.case.options.l2_words;
        for m in [&mut *self.a, &mut *self.b] {
            if m.l2_words() != want {
                return Err(ModelError::Other(format!(
                    "{} has {} L2 words but the case was generated for {want}: \
                     reference, DUT and stimulus must use one hardware configuration",
                    m.name(),
                    m.l2_words()
                )));
            }
        }
        let case = self.case;
        let stalls = case.io_stall_seed();
        for m in [&mut *self.a, &mut *self.b] {
            if let Some(sim) = m.sim_controls() {
                sim.set_io_stalls(stalls);
                sim.set_initial_state(case.initial_state_seed());
            }
        }
        // Both images in full unless the models hold the previous case of
        // a campaign (scoreboard/resident.rs) and keep it through the reset.
        let changes = resident.changes_through_reset(case, &mut [&mut *self.a, &mut *self.b]);
        let full = changes
            .is_none()
            .then(|| (case.l2_image(), case.host_image()));
        let weights = case.weight_source();
        for m in [&mut *self.a, &mut *self.b] {
            m.set_weight_source(weights.clone());
            call(m, |m| m.reset())?;
            match &full {
                Some((l2, host)) => {
                    call(m, |m| m.write_l2(0, l2))?;
                    call(m, |m| m.write_host(0, host))?;
                }
                None => {
                    if let Some(changes) = &changes {
                        call(m, |m| changes.apply(m))?;
                    }
                }
            }
            // Backdoor writes of the case's own (steered cases), one cycle
            // each on both sides.
            // Each is read back at once: a backdoor that drops or bends a
            // write shows here, not only if a later instruction happens to
            // read the value before it is overwritten.
            // (A model seen below `Full` has no back door to read through.)
            let reads_back = m.observation() == Observation::Full;
            for &(table, index, entry) in &case.preload.tables {
                call(m, |m| m.set_shape_entry(table, index, entry))?;
                if !reads_back {
                    continue;
                }
                let back = call(m, |m| m.shape_entry(table, index))?;
                if back != entry {
                    return Err(ModelError::Backdoor(format!(
                        "{}: shape-table entry {index} of {table:?} reads {back:?} after a backdoor write of {entry:?}",
                        m.name()
                    )));
                }
            }
            if let Some(v) = case.preload.e_max {
                call(m, |m| m.set_e_max(v))?;
            }
            if let Some(v) = case.preload.e_max.filter(|_| reads_back) {
                let back = call(m, |m| m.e_max())?;
                if back != v {
                    return Err(ModelError::Backdoor(format!(
                        "{}: e_max reads {back:#06x} after a backdoor write of {v:#06x}",
                        m.name()
                    )));
                }
            }
            // Drop whatever the reset or the load reported: it belongs to
            // no instruction of this case.
            m.take_events();
        }
        Ok(())
    }

    pub(super) fn apply(&mut self, item: &Item) -> Result<(), ModelError> {
        if self.hand_off.is_some() {
            return self.apply_handing_off(item);
        }
        match *item {
            Item::Instr(word) => {
                let seq = self.issued.len() as u32;
                self.issued.push(word);
                let ra = call(self.a, |m| m.issue(word))?;
                let rb = self.on_dut(|m| m.issue(word))?;
                self.compare_issue(seq, ra, rb);
            }
            Item::Idle(cycles) => {
                call(self.a, |m| m.idle(cycles))?;
                self.on_dut(|m| m.idle(cycles))?;
            }
            Item::RegWrite { offset, value } => {
                let ra = call(self.a, |m| m.reg_write(offset, value))?;
                let rb = self.on_dut(|m| m.reg_write(offset, value))?;
                let seq = self.issued.len() as u32;
                self.compare_write(offset, value, seq, ra, rb);
            }
        }
        Ok(())
    }

    /// The two sides' responses to instruction `seq`'s writes.
    pub(super) fn compare_issue(
        &mut self,
        seq: u32,
        ra: (AxiResp, AxiResp),
        rb: (AxiResp, AxiResp),
    ) {
        if ra == rb {
            return;
        }
        let what = |(lo, hi): (AxiResp, AxiResp)| {
            format!("0x00 write {}, 0x04 write {}", resp_name(lo), resp_name(hi))
        };
        let m = self.mismatch(
            Some(seq),
            Finding::new(
                CheckKind::RegResponse,
                Difference::IssueResponses,
                what(ra),
                what(rb),
            ),
        );
        self.report(seq, m);
    }

    /// The two sides' responses to a `.write` item issued before
    /// instruction `seq`.
    pub(super) fn compare_write(
        &mut self,
        offset: u32,
        value: u32,
        seq: u32,
        ra: AxiResp,
        rb: AxiResp,
    ) {
        if ra == rb {
            return;
        }
        // Ranked with the next instruction: it happened before that one
        // was latched.
        let m = self.mismatch(
            None,
            Finding::new(
                CheckKind::RegResponse,
                Difference::WriteResponse {
                    offset,
                    value,
                    before_seq: seq,
                },
                resp_name(ra).into(),
                resp_name(rb).into(),
            ),
        );
        self.report(seq, m);
    }

    /// Takes both models' events, files them per sequence number, and
    /// compares every instruction both sides have now retired.
    pub(super) fn collect(&mut self) {
        self.ingest_both();
        self.compare_ready();
    }

    /// Takes both models' events and files them per sequence number.
    pub(super) fn ingest_both(&mut self) {
        let ea = self.a.take_events();
        let eb = self.b.take_events();
        self.ingest(Side::Reference, ea);
        self.ingest(Side::Dut, eb);
    }

    /// Sets the DUT's deadline and compares every instruction both sides
    /// have retired (but one whose values a hand-off still waits for).
    pub(super) fn compare_ready(&mut self) {
        // A timed reference says when everything issued so far retires. A
        // DUT still busy far past that (DEADLINE_FACTOR times, plus
        // DEADLINE_SLACK_CYCLES for stalled I/O), in a drain or while an issue
        // waits for a full FIFO, hangs, even if it keeps showing activity
        // the plain watchdog counts as progress. A reference behind the DUT
        // (numerics.rs) has not seen everything issued yet: no deadline
        // then, and the watchdog alone judges a hang.
        let behind = self.hand_off.as_ref().is_some_and(|h| h.behind());
        if self.a.clock().is_some_and(|c| c.predicts_timing()) {
            let deadline = (!behind)
                .then(|| self.last_cycle[0].unwrap_or(0) * DEADLINE_FACTOR + DEADLINE_SLACK_CYCLES);
            if let Some(clock) = self.b.clock() {
                clock.set_wait_deadline(deadline);
            }
        }
        let awaiting = self.hand_off.as_ref().and_then(|h| h.awaiting());
        let ready: Vec<u32> = self
            .pending
            .iter()
            .copied()
            .filter(|seq| {
                let p = &self.pairs[seq];
                p.r.retired() && p.d.retired() && Some(*seq) != awaiting
            })
            .collect();
        for seq in ready {
            self.compare_instruction(seq);
        }
    }

    /// Places a finding at instruction `seq` (`None`: no instruction).
    pub(super) fn mismatch(&self, seq: Option<u32>, f: Finding) -> Mismatch {
        let word = seq.and_then(|s| self.issued.get(s as usize).copied());
        let cycle = seq.and_then(|s| {
            self.pairs
                .get(&s)
                .and_then(|p| p.d.retire_cycle().or(p.r.retire_cycle()))
        });
        Mismatch {
            kind: f.kind,
            seq,
            word,
            cycle,
            difference: f.difference,
            reference: f.reference,
            dut: f.dut,
            afterwards: None,
            reference_model: self.a.name().to_string(),
            dut_model: self.b.name().to_string(),
        }
    }

    pub(super) fn report(&mut self, rank_seq: u32, m: Mismatch) {
        self.found.push(((true, rank_seq, m.kind), m));
    }

    /// Reports `m` ahead of every other difference (a failed assertion that
    /// came first in time).
    pub(super) fn report_first(&mut self, m: Mismatch) {
        self.found.push(((false, 0, m.kind), m));
    }

    /// Timing, once everything functional matched: per instruction in
    /// program order, then the status register over time (exact), or the
    /// retire order (order).
    pub(super) fn compare_timing(&mut self) {
        if let Some(budget) = self.cycle_budget {
            return self.compare_budget(budget);
        }
        // A black box shows no instruction (docs/dut-contract.md).
        if self.level == Observation::BlackBox {
            return;
        }
        self.compare_instruction_timing(self.timing);
    }

    /// Timing per instruction, as `timing` says.
    fn compare_instruction_timing(&mut self, timing: TimingMode) {
        let cycles: Vec<timing::Cycles> = (0..self.issued.len() as u32)
            .map(|seq| {
                let p = &self.pairs[&seq];
                timing::Cycles::of(&p.r, &p.d)
            })
            .collect();
        let found = match timing {
            TimingMode::Off => None,
            // The status timeline is sampled every cycle: a tap of `Full`.
            TimingMode::Exact if self.level < Observation::Full => timing::exact(&cycles),
            TimingMode::Exact => timing::exact(&cycles).or_else(|| {
                let timeline = |m: &mut dyn NpuModel| m.clock().map(|c| c.status_timeline());
                let (ra, rb) = (timeline(&mut *self.a), timeline(&mut *self.b));
                timing::status(ra.as_deref(), rb.as_deref())
            }),
            TimingMode::Order => {
                let shape_writes: Vec<Vec<(ShapeTable, u8, ShapeEntry)>> = (0..self.issued.len()
                    as u32)
                    .map(|seq| self.reference_shapes.get(&seq).cloned().unwrap_or_default())
                    .collect();
                timing::order(&self.issued, &shape_writes, &cycles)
            }
        };
        if let Some((seq, f)) = found {
            let m = self.mismatch(seq, f);
            self.report(seq.unwrap_or(u32::MAX), m);
        }
    }

    /// The timing of a DUT that is another design (docs/dut-contract.md,
    /// "Timing"): under ideal I/O, the program's cycles to the end of the
    /// DUT's drain within the budget of the reference's prediction; per
    /// instruction (from the `retire` level) the ordering rules alone.
    fn compare_budget(&mut self, budget: CycleBudget) {
        if self.timing == TimingMode::Off {
            return;
        }
        if self.timing == TimingMode::Exact {
            // Under stalled I/O the prediction (ideal I/O) says nothing of
            // the program's length.
            if let (Some(reference), Some(dut)) = (self.last_cycle[0], self.dut_end_cycle) {
                let allowed = budget.of(reference);
                if dut > allowed {
                    let m = self.mismatch(
                        None,
                        Finding::new(
                            CheckKind::Timing,
                            Difference::CycleBudget {
                                reference,
                                dut,
                                allowed,
                                tolerance_pct: budget.tolerance_pct,
                                slack_cycles: budget.slack_cycles,
                            },
                            format!("ends by cycle {reference}"),
                            format!("drained at cycle {dut}"),
                        ),
                    );
                    self.report(u32::MAX, m);
                    return;
                }
            }
        }
        if self.level >= Observation::Retire {
            self.compare_instruction_timing(TimingMode::Order);
        }
    }
}
