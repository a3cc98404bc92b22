//! The Verilated pccx_top behind [`NpuModel`].
//!
//! One [`RtlModel`] owns one Verilated model (one per thread: Verilator
//! models are not to be shared across threads), the host memory behind its
//! ACP port and an AXI-Lite master that turns `reg_write` / `reg_read` into
//! cycle-by-cycle handshakes. Everything the observation ports report is
//! turned into [`Event`]s tagged with the cycle in which it happened.

mod adapter;
pub mod coverage;
pub mod dut;
pub mod dynamic;
mod ffi;
pub mod host_port;
pub mod host_streams;
pub mod model_override;
pub mod recipe;
pub mod verilator;
pub mod weight_lanes;
pub mod weight_port;

use pccx_golden::model::CycleBudget;
use pccx_golden::numerics::profile::NumericsProfile;
use std::collections::HashMap;
use std::ffi::c_void;

use pccx_golden::isa::layout::entry_id;
use pccx_golden::model::{
    AssertionFailure, AxiResp, Clocked, Event, MemoryView, ModelError, NpuModel, Observation,
    ShapeEntry, ShapeTable, SimControls, Word, HOST_WORDS,
};

use crate::config::HwConfig;
use ffi::{pccx_inputs, pccx_outputs, pccx_sim_ops};
pub use host_port::{HostPort, HostTiming, StallSchedule};
use pccx_golden::streams::WeightSource;
pub use weight_port::WeightPort;

/// The shim's table of entry points of one Verilated build.
pub type SimOps = pccx_sim_ops;

/// Cycles without any observable progress after which a wait is declared a
/// hang. Every accepted handshake, latch, write or retire counts as progress.
pub const DEFAULT_WATCHDOG_CYCLES: u64 = 200_000;

pub struct RtlModel {
    ops: &'static pccx_sim_ops,
    sim: *mut c_void,
    config: HwConfig,
    /// Where the model's code came from (what a waveform request without
    /// tracing is told).
    origin: Origin,
    inputs: pccx_inputs,
    outputs: pccx_outputs,
    cycle: u64,
    host: HostPort,
    weights: WeightPort,
    /// The DUT's own weight ports, when they are not pccx_top's two of
    /// 128 bits (harness/rtl/weight_lanes.rs).
    lanes: Option<weight_lanes::WeightLanes>,
    /// Host memory as two streams, when the DUT has no request port
    /// (harness/rtl/host_streams.rs).
    streams: Option<host_streams::HostStreams>,
    /// The instruction register as the harness's writes left it (what the
    /// next write of the high half latches, for `streams`).
    held_word: u64,
    events: Vec<Event>,
    latched: u64,
    /// Writes to the instruction's high word (0x04) begun: the NPU can
    /// latch no more instructions than that.
    instr_writes: u64,
    retired: u64,
    watchdog_cycles: u64,
    idle_since_progress: u64,
    /// Longest wait, in cycles, from a write's acceptance to its response
    /// (a full engine FIFO makes it long).
    longest_response_wait: u64,
    /// (sequence number, cycle) of every retire since reset, in cycle order.
    retire_log: Vec<(u32, u64)>,
    /// Start cycle of every started, not yet retired instruction.
    started: HashMap<u32, u64>,
    /// (cycle, status) at cycle 0 and at every change since reset.
    status_changes: Vec<(u64, u32)>,
    /// The armed waveform window, if any.
    wave: Option<WaveWindow>,
    /// AXI-Lite transactions accepted and not yet answered: a response
    /// while none is outstanding breaks the protocol.
    reads_outstanding: u32,
    writes_outstanding: u32,
    /// Address and data handshakes of writes not yet paired: a write is
    /// outstanding once both of its channels have been taken, in either
    /// order or together.
    aw_taken: u32,
    w_taken: u32,
    /// The first protocol violation seen, reported by the next wait.
    protocol_error: Option<String>,
    /// The first failed assertion of the RTL (its name, scope and cycle),
    /// reported by the next wait.
    assertion: Option<AssertionFailure>,
    /// Beats past this many, taken by one instruction, are not progress
    /// (weight_port::MAX_BEATS_PER_INSTRUCTION).
    beat_progress_cap: u64,
    /// The cycle past which any wait is a hang (NpuModel::set_wait_deadline).
    wait_deadline: Option<u64>,
    /// Under stall I/O: the draws that present a write's address or data
    /// channel alone for a few cycles first (AXI-Lite lets them arrive in
    /// either order); `None` with ideal I/O, where both come together.
    write_skew: Option<crate::stimulus::Rng>,
    /// Set by another thread when the seed's wall-clock limit passes
    /// (SimControls::set_abandon_flag): the next wait gives up.
    abandon: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// The seed of the design's state before each reset
    /// (SimControls::set_initial_state); `None`: as it is.
    initial_state: Option<u64>,
    /// What the status FIFO last said (a DUT with one, `adapter`).
    fifo_status: adapter::FifoStatus,
    /// Instructions of the harness's own (front-door loads) since reset:
    /// written and retired, but none of the program's.
    front_door_retired: u64,
    /// Cycles the harness's own instructions took since reset (a front-door
    /// load before the program).
    front_door_cycles: u64,
    /// The numerics profile the DUT's manifest declares (`open_manifest`).
    numerics: Option<NumericsProfile>,
    /// The cycle budget of a DUT with another design's timing.
    cycle_budget: Option<CycleBudget>,
}

/// An FST dump of cycles `from..=to`.
struct WaveWindow {
    path: std::path::PathBuf,
    from: u64,
    to: u64,
    open: bool,
    written: bool,
    problem: Option<String>,
}

/// Where an [`RtlModel`]'s code came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Linked into this binary by build.rs.
    Linked,
    /// A test-only configuration built on demand ([`dynamic::open_ops`]).
    OnDemand,
    /// A shim table the caller loaded ([`RtlModel::open_with_ops`]).
    Loaded,
    /// The shared object `PCCX_MODEL_OVERRIDE` names for the configuration
    /// ([`model_override`]).
    Overridden,
}

/// The names of the configurations compiled into this binary.
pub fn built_configs() -> Vec<&'static str> {
    crate::config::ALL
        .iter()
        .filter(|c| ffi::ops_by_name(c.name).is_some())
        .map(|c| c.name)
        .collect()
}

impl RtlModel {
    /// Opens the Verilated model of configuration `config`: the one linked
    /// into this binary, or, for a test-only configuration that is not, one
    /// built on demand (once, into the build cache; docs/build.md).
    pub fn open(config: HwConfig, timing: HostTiming) -> Result<RtlModel, String> {
        // `gate-power` names the model to open instead (a mutant's).
        if let Some(ops) = model_override::ops_for(config.name)? {
            return RtlModel::open_from(config, ops, timing, Origin::Overridden);
        }
        if let Some(ops) = ffi::ops_by_name(config.name) {
            // SAFETY: the table is a static in the shim, valid for the program's life.
            let ops: &'static pccx_sim_ops = unsafe { &*ops };
            return RtlModel::open_from(config, ops, timing, Origin::Linked);
        }
        if !config.test_only {
            return Err(format!(
                "configuration `{}` is not compiled into this binary (built: {}); \
                 rebuild without PCCX_CONFIGS or with it naming `{}`",
                config.name,
                built_configs().join(", "),
                config.name
            ));
        }
        let ops = dynamic::open_ops(&config).map_err(|e| {
            format!(
                "{e}\n(or link `{name}` into the binary: `PCCX_CONFIGS={linked},{name} cargo build`)",
                name = config.name,
                linked = built_configs().join(",")
            )
        })?;
        RtlModel::open_from(config, ops, timing, Origin::OnDemand)
    }

    /// Opens configuration `config` of the DUT that `manifest` declares
    /// (relative to the sources this binary was built from), built on
    /// demand into the build cache (docs/dut-contract.md).
    ///
    /// The model declares the manifest's timing rule (`timing`); its
    /// numerics profile is the opener's to read and set
    /// ([`RtlModel::set_numerics`]), as `--numerics` says.
    pub fn open_manifest(
        manifest: &str,
        config: HwConfig,
        timing: HostTiming,
    ) -> Result<RtlModel, String> {
        let declared = dut::Manifest::read(&dynamic::source_root().join(manifest))?;
        let ops = dynamic::open_ops_of(manifest, &config)?;
        let mut model = RtlModel::open_from(config, ops, timing, Origin::OnDemand)?;
        model.cycle_budget = match declared.timing {
            dut::DutTiming::Exact => None,
            dut::DutTiming::Budget {
                tolerance_pct,
                slack_cycles,
            } => Some(CycleBudget {
                tolerance_pct,
                slack_cycles,
            }),
        };
        Ok(model)
    }

    /// The numerics profile the model declares from now on
    /// (`NpuModel::numerics`): where its CVO is approximate by design.
    pub fn set_numerics(&mut self, profile: Option<NumericsProfile>) {
        self.numerics = profile;
    }

    /// Opens a model from a shim table that is not linked into this binary
    /// (a mutant's shared object, `pccx-cosim mutate`). `config` must give
    /// the parameters it was built with.
    pub fn open_with_ops(
        config: HwConfig,
        ops: &'static SimOps,
        timing: HostTiming,
    ) -> Result<RtlModel, String> {
        RtlModel::open_from(config, ops, timing, Origin::Loaded)
    }

    fn open_from(
        config: HwConfig,
        ops: &'static SimOps,
        timing: HostTiming,
        origin: Origin,
    ) -> Result<RtlModel, String> {
        if ops.l2_words != config.l2_words || ops.fifo_depth != config.fifo_depth {
            return Err(format!(
                "the model was built with L2_WORDS {} and FIFO_DEPTH {}, not configuration `{}`'s",
                ops.l2_words, ops.fifo_depth, config.name
            ));
        }
        let create = ops.create.ok_or("shim has no create function")?;
        // SAFETY: create() returns a fresh heap object that only this model uses.
        let sim = unsafe { create() };
        let mut model = RtlModel {
            ops,
            sim,
            config,
            origin,
            inputs: pccx_inputs::default(),
            outputs: pccx_outputs::default(),
            cycle: 0,
            host: HostPort::new(timing),
            weights: WeightPort::new(),
            lanes: {
                let default = (2, 128, 0b10);
                let shape = (ops.weight_ports, ops.weight_bits, ops.weight_gemv_ports);
                (shape != default).then(|| {
                    weight_lanes::WeightLanes::new(
                        ops.weight_ports as usize,
                        ops.weight_bits,
                        ops.weight_gemv_ports,
                    )
                })
            },
            streams: (ops.host_streams != 0).then(host_streams::HostStreams::new),
            held_word: 0,
            events: Vec::new(),
            latched: 0,
            instr_writes: 0,
            retired: 0,
            watchdog_cycles: DEFAULT_WATCHDOG_CYCLES,
            idle_since_progress: 0,
            longest_response_wait: 0,
            reads_outstanding: 0,
            writes_outstanding: 0,
            aw_taken: 0,
            w_taken: 0,
            protocol_error: None,
            assertion: None,
            beat_progress_cap: weight_port::MAX_BEATS_PER_INSTRUCTION,
            wait_deadline: None,
            abandon: None,
            initial_state: None,
            fifo_status: adapter::FifoStatus::default(),
            front_door_retired: 0,
            front_door_cycles: 0,
            numerics: None,
            cycle_budget: None,
            write_skew: None,
            retire_log: Vec::new(),
            started: HashMap::new(),
            status_changes: Vec::new(),
            wave: None,
        };
        model.reset().map_err(|e| e.to_string())?;
        Ok(model)
    }

    pub fn config(&self) -> HwConfig {
        self.config
    }

    /// Where this model's code came from.
    pub fn origin(&self) -> Origin {
        self.origin
    }

    /// Cycles simulated since the last reset.
    pub fn cycle(&self) -> u64 {
        self.cycle
    }

    /// Changes the host I/O timing (takes effect from the next reset on).
    pub fn set_host_timing(&mut self, timing: HostTiming) {
        self.host.set_timing(timing);
    }

    pub fn set_watchdog(&mut self, cycles: u64) {
        self.watchdog_cycles = cycles;
    }

    /// How many beats one instruction may take from a stream and still count
    /// as progress for the watchdog (default: the architectural maximum).
    pub fn set_beat_progress_cap(&mut self, beats: u64) {
        self.beat_progress_cap = beats;
    }

    /// The longest write-response wait since reset, in cycles.
    pub fn longest_response_wait(&self) -> u64 {
        self.longest_response_wait
    }

    /// Cycles since reset in which a ready GEMM (stream 0) or GEMV (stream
    /// 1) found its weight stream empty.
    pub fn weight_starved_cycles(&self) -> [u64; 2] {
        self.weights.starved_cycles()
    }

    /// (sequence number, cycle) of every retire since reset.
    pub fn retire_log(&self) -> &[(u32, u64)] {
        &self.retire_log
    }

    /// One clock cycle with the current AXI-Lite inputs; serves the ACP port
    /// and records what the observation ports show.
    fn tick(&mut self) {
        match &mut self.streams {
            None => {
                let response = self.host.response(self.cycle);
                self.inputs.acp_req_ready = u8::from(self.host.request_ready());
                self.inputs.acp_rsp_valid = u8::from(response.is_some());
                self.inputs.acp_rsp_rdata = split(response.unwrap_or(0));
            }
            Some(streams) => {
                let offered = streams.offer_into();
                self.inputs.host_in_valid = u8::from(offered.is_some());
                self.inputs.host_in_data =
                    split(offered.map_or(0, |addr| self.host.mem[addr as usize]));
                self.inputs.host_out_ready = u8::from(streams.ready_out());
            }
        }
        match &mut self.lanes {
            None => {
                for s in 0..weight_port::NUM_STREAMS {
                    let (valid, beat) = self.weights.offer(s);
                    self.inputs.ws_valid[s] = u8::from(valid);
                    self.inputs.ws_data[s] = split(beat);
                }
            }
            Some(lanes) => {
                for p in 0..lanes.ports() {
                    let (valid, piece) = lanes.offer(p, &mut self.weights);
                    self.inputs.ws_valid[p] = u8::from(valid);
                    self.inputs.ws_data[p] = split(piece);
                }
            }
        }
        self.inputs.cycle = self.cycle;
        if self.wave.is_some() {
            self.wave_edge();
        }
        let tick = self.ops.tick.expect("shim tick");
        // SAFETY: `sim` is live; inputs and outputs are plain C structs we own.
        unsafe { tick(self.sim, &self.inputs, &mut self.outputs) };
        self.observe();
        if self.outputs.assert_failures != 0 && self.assertion.is_none() {
            self.assertion = Some(self.first_assertion());
        }
        self.cycle += 1;
    }

    /// The cycle counted from the start of the program: from reset, less
    /// the cycles of a front-door load before it
    /// (`adapter::load_l2_front_door`). The reference counts from reset
    /// with its L2 loaded in none, so every cycle the harness compares or
    /// reports (events, deadlines, the waveform's window, `cycle_now`) is
    /// this one; only the host port's own schedule runs on `cycle`.
    fn program_cycle(&self) -> u64 {
        self.cycle - self.front_door_cycles
    }

    /// The first failed assertion the shim holds: label, scope, this cycle.
    fn first_assertion(&self) -> AssertionFailure {
        type Text = unsafe extern "C" fn(*mut std::ffi::c_void) -> *const std::ffi::c_char;
        let text = |f: Option<Text>| {
            let f = f.expect("shim assert_name/assert_scope/assert_also");
            // SAFETY: `sim` is live; the shim returns a NUL-terminated
            // string valid until the next tick.
            unsafe { std::ffi::CStr::from_ptr(f(self.sim)) }
                .to_string_lossy()
                .into_owned()
        };
        AssertionFailure {
            name: text(self.ops.assert_name),
            scope: text(self.ops.assert_scope),
            also: text(self.ops.assert_also)
                .split(',')
                .filter(|n| !n.is_empty())
                .map(String::from)
                .collect(),
            cycle: self.program_cycle(),
        }
    }

    /// Whether failed assertions of the RTL count (the default) or are
    /// ignored (mutate's rerun of an assertion's kill without them, to see
    /// when the scoreboard alone would have seen the bug).
    pub fn set_assertions(&mut self, on: bool) {
        let enable = self.ops.assert_enable.expect("shim assert_enable");
        // SAFETY: `sim` is live.
        unsafe { enable(self.sim, i32::from(on)) };
    }

    /// The first failed assertion as the error the next wait reports.
    fn assertion_error(&self) -> Option<ModelError> {
        self.assertion
            .as_ref()
            .map(|a| ModelError::Assertion(Box::new(a.clone())))
    }

    fn observe(&mut self) {
        self.check_axil_protocol();
        let (i, o, cycle) = (&self.inputs, &self.outputs, self.program_cycle());
        let mut progress = false;
        if self
            .status_changes
            .last()
            .is_none_or(|&(_, v)| v != o.status)
        {
            self.status_changes.push((cycle, o.status));
        }
        for e in set_bits(o.start_valid) {
            self.started.insert(o.start_seq[e], cycle);
            progress = true;
        }
        if o.acp_req_valid != 0 && i.acp_req_ready != 0 {
            let data = join(o.acp_req_wdata);
            let write = o.acp_req_write != 0;
            let addr = o.acp_req_addr;
            if write {
                self.events.push(Event::HostWrite {
                    seq: o.acp_req_seq,
                    addr,
                    data,
                });
            }
            self.host.request(cycle, write, addr, data);
            progress = true;
        }
        if i.acp_rsp_valid != 0 && o.acp_rsp_ready != 0 {
            self.host.response_taken();
            progress = true;
        }
        if let Some(streams) = &mut self.streams {
            if i.host_in_valid != 0 && o.host_in_ready != 0 {
                streams.taken_into();
                progress = true;
            }
            if o.host_out_valid != 0 && i.host_out_ready != 0 {
                let addr = streams.sent_out() as u32;
                let data = join(o.host_out_data);
                self.host.mem[addr as usize] = data;
                // No tap names the instruction (below `full`).
                self.events.push(Event::HostWrite { seq: 0, addr, data });
                progress = true;
            }
        }
        if let Some(lanes) = &mut self.lanes {
            // Below full (dut.rs): every piece is progress.
            let mut starved = [false; weight_port::NUM_STREAMS];
            for p in 0..lanes.ports() {
                if i.ws_valid[p] != 0 && o.ws_ready[p] != 0 {
                    lanes.taken(p, &mut self.weights);
                    progress = true;
                } else if o.ws_ready[p] != 0 {
                    starved[lanes.stream_of(p)] = true;
                }
            }
            for (s, _) in starved.iter().enumerate().filter(|(_, s)| **s) {
                self.weights.starved(s);
            }
        }
        for s in (0..weight_port::NUM_STREAMS).filter(|_| self.lanes.is_none()) {
            if i.ws_valid[s] != 0 && o.ws_ready[s] != 0 {
                let taken = self.weights.taken(s, o.ws_seq[s]);
                // Without the `ws_seq` sideband (below full) every beat is
                // instruction 0's: the cap per instruction cannot apply.
                progress |= taken <= self.beat_progress_cap || self.ops.level < 2;
            } else if o.ws_ready[s] != 0 {
                self.weights.starved(s);
            }
        }
        if o.latch_valid != 0 {
            self.events.push(Event::Latch {
                seq: o.latch_seq,
                word: o.latch_word,
                cycle: Some(cycle),
            });
            self.latched += 1;
            progress = true;
            if self.latched > self.instr_writes && self.protocol_error.is_none() {
                // A latch nobody asked for: the same word taken twice, or
                // one taken with no write of the high word.
                self.protocol_error = Some(format!(
                    "the NPU latched instruction {} in cycle {cycle}, and the host has written only {} instructions",
                    self.latched, self.instr_writes
                ));
            }
        }
        for p in set_bits(o.l2w_valid) {
            self.events.push(Event::L2Write {
                seq: o.l2w_seq[p],
                addr: o.l2w_addr[p],
                data: join(o.l2w_data[p]),
                mask: o.l2w_mask[p],
            });
            progress = true;
        }
        if o.tbl_valid != 0 {
            let (table, index) = entry_id::decode(o.tbl_entry);
            self.events.push(Event::ShapeWrite {
                seq: o.tbl_seq,
                table,
                index,
                entry: unpack_entry(o.tbl_value),
            });
            progress = true;
        }
        if o.emax_valid != 0 {
            self.events.push(Event::EMaxWrite {
                seq: o.emax_seq,
                value: o.emax_value,
            });
            progress = true;
        }
        // Retires last: an instruction's final writes share its retire cycle.
        for p in set_bits(o.ret_valid) {
            for (stream, beats) in self.weights.take_counts(o.ret_seq[p]) {
                self.events.push(Event::StreamRead {
                    seq: o.ret_seq[p],
                    stream: stream as u8,
                    beats,
                });
            }
            self.events.push(Event::Retire {
                seq: o.ret_seq[p],
                opcode: o.ret_op[p],
                err: o.ret_err[p],
                cycle: Some(cycle),
                start: self.started.remove(&o.ret_seq[p]),
            });
            self.retired += 1;
            self.retire_log.push((o.ret_seq[p], cycle));
            progress = true;
        }
        if progress {
            self.idle_since_progress = 0;
        } else {
            self.idle_since_progress += 1;
        }
    }

    /// Counts the AXI-Lite requests accepted in this cycle and the responses
    /// taken, and records a response (RVALID, BVALID) shown while no
    /// request of its kind is outstanding. A slave that answers on its own
    /// can return plausible data, so this is checked here, not left to the
    /// values read back.
    fn check_axil_protocol(&mut self) {
        let (i, o, cycle) = (&self.inputs, &self.outputs, self.cycle);
        if o.bus_edge == 0 {
            // No AXI-Lite clock edge: nothing was taken or answered.
            return;
        }
        let mut violation = None;
        if o.rvalid != 0 && self.reads_outstanding == 0 {
            violation = Some(format!(
                "AXI-Lite RVALID in cycle {cycle} with no read outstanding"
            ));
        }
        if o.bvalid != 0 && self.writes_outstanding == 0 {
            violation = Some(format!(
                "AXI-Lite BVALID in cycle {cycle} with no write outstanding"
            ));
        }
        if o.rvalid != 0 && i.rready != 0 {
            self.reads_outstanding = self.reads_outstanding.saturating_sub(1);
        }
        if o.bvalid != 0 && i.bready != 0 {
            self.writes_outstanding = self.writes_outstanding.saturating_sub(1);
        }
        if i.arvalid != 0 && o.arready != 0 {
            self.reads_outstanding += 1;
        }
        self.aw_taken += u32::from(i.awvalid != 0 && o.awready != 0);
        self.w_taken += u32::from(i.wvalid != 0 && o.wready != 0);
        let paired = self.aw_taken.min(self.w_taken);
        self.aw_taken -= paired;
        self.w_taken -= paired;
        self.writes_outstanding += paired;
        if self.protocol_error.is_none() {
            self.protocol_error = violation;
        }
    }

    /// Opens the waveform when its window begins, closes it after its end.
    fn wave_edge(&mut self) {
        let (origin, config, now) = (self.origin, self.config, self.program_cycle());
        let Some(w) = self.wave.as_mut() else { return };
        if !w.open && !w.written && w.problem.is_none() && now >= w.from && now <= w.to {
            let path = std::ffi::CString::new(w.path.to_string_lossy().as_bytes().to_vec());
            let open = self.ops.trace_open.expect("shim trace_open");
            let rc = match &path {
                // SAFETY: `sim` is live; the path is a NUL-terminated string we own.
                Ok(p) => unsafe { open(self.sim, p.as_ptr()) },
                Err(_) => -2,
            };
            match rc {
                0 => w.open = true,
                -1 => w.problem = Some(no_tracing(origin, &config)),
                _ => w.problem = Some(format!("cannot write {}", w.path.display())),
            }
        } else if w.open && now > w.to {
            self.close_wave();
        }
    }

    fn close_wave(&mut self) {
        if let Some(w) = self.wave.as_mut() {
            if w.open {
                let close = self.ops.trace_close.expect("shim trace_close");
                // SAFETY: `sim` is live.
                unsafe { close(self.sim) };
                w.open = false;
                w.written = true;
            }
        }
    }

    fn check_watchdog(&self, what: &str) -> Result<(), ModelError> {
        if let Some(e) = self.assertion_error() {
            return Err(e);
        }
        if let Some(m) = &self.protocol_error {
            return Err(ModelError::Protocol(format!("{m} (while {what})")));
        }
        // One relaxed load a cycle: the flag only ever goes from unset to
        // set, and a cycle late is soon enough.
        if let Some(flag) = &self.abandon {
            if flag.load(std::sync::atomic::Ordering::Relaxed) {
                return Err(ModelError::Abandoned {
                    what: format!(
                        "{what} (cycle {}, {} latched, {} retired)",
                        self.cycle, self.latched, self.retired
                    ),
                });
            }
        }
        if let Some(deadline) = self.wait_deadline {
            if self.program_cycle() > deadline {
                return Err(ModelError::Watchdog {
                    what: format!(
                        "{what}: still busy at cycle {}, past the deadline the reference \
                         model's own retire cycles give ({} latched, {} retired); an engine \
                         keeps working without finishing",
                        self.program_cycle(),
                        self.latched,
                        self.retired
                    ),
                    cycles: self.program_cycle(),
                });
            }
        }
        if self.idle_since_progress >= self.watchdog_cycles {
            return Err(ModelError::Watchdog {
                what: format!(
                    "{what} (cycle {}, {} latched, {} retired)",
                    self.cycle, self.latched, self.retired
                ),
                cycles: self.idle_since_progress,
            });
        }
        Ok(())
    }

    /// Ticks until `done(outputs)` holds at an edge of the AXI-Lite clock
    /// (that cycle included): with one clock, at any edge.
    fn tick_until(
        &mut self,
        what: &str,
        done: impl Fn(&pccx_outputs) -> bool,
    ) -> Result<(), ModelError> {
        self.idle_since_progress = 0;
        loop {
            self.tick();
            if self.outputs.bus_edge != 0 && done(&self.outputs) {
                self.idle_since_progress = 0;
                return Ok(());
            }
            self.check_watchdog(what)?;
        }
    }

    /// Ticks to the next edge of the AXI-Lite clock (the next tick with one
    /// clock): one cycle of the bus.
    fn bus_tick(&mut self) {
        loop {
            self.tick();
            if self.outputs.bus_edge != 0 {
                return;
            }
        }
    }

    /// Writes one shape-table entry or e_max through the backdoor port: one
    /// cycle, used while the NPU is idle.
    fn backdoor_tick(&mut self, set: impl FnOnce(&mut pccx_inputs)) {
        set(&mut self.inputs);
        self.tick();
        self.inputs.bd_tbl_we = 0;
        self.inputs.bd_emax_we = 0;
    }

    /// An error naming `what` if the DUT has no back door.
    fn need_back_door(&self, what: &str) -> Result<(), ModelError> {
        if self.has_back_door() {
            return Ok(());
        }
        Err(ModelError::Backdoor(format!(
            "this DUT (configuration {}) has no back door (its manifest has no `back_door`): \
             {what} cannot be reached from the harness",
            self.config.name
        )))
    }

    fn check_l2_range(&self, addr: u32, n: usize) -> Result<(), ModelError> {
        if u64::from(addr) + n as u64 > u64::from(self.config.l2_words) {
            return Err(ModelError::Backdoor(format!(
                "L2 words {} are outside L2 ({} words, configuration {})",
                word_span(addr, n),
                self.config.l2_words,
                self.config.name
            )));
        }
        Ok(())
    }

    fn check_host_range(addr: u32, n: usize) -> Result<(), ModelError> {
        if u64::from(addr) + n as u64 > u64::from(HOST_WORDS) {
            return Err(ModelError::Backdoor(format!(
                "host words {} are outside host memory ({HOST_WORDS} words)",
                word_span(addr, n)
            )));
        }
        Ok(())
    }
}

/// The share of instructions a stalling host issues with the write of 0x04
/// presented while the write of 0x00 still awaits its response.
const OVERLAPPED_ISSUE_PCT: u32 = 25;

impl RtlModel {
    /// Issues `word` as a master with writes outstanding may (AXI-Lite
    /// allows it): the write of 0x04 goes up, address and data, in the
    /// cycle after the slave took the write of 0x00, before that write's
    /// response, and stays up until the slave takes it. This slave takes
    /// one write at a time, so the second waits; a slave that raised a
    /// READY for a write it does not take would lose it (the write then
    /// hangs, or its word is never latched).
    fn issue_overlapped(&mut self, word: u64) -> Result<(AxiResp, AxiResp), ModelError> {
        use pccx_golden::model::reg;
        self.instr_writes += 1;
        self.instruction_sent(word);
        let (lo, hi) = (word as u32, (word >> 32) as u32);
        self.inputs.awvalid = 1;
        self.inputs.wvalid = 1;
        self.inputs.awaddr = reg::INSTR_LO as u16;
        self.inputs.wdata = lo.into();
        self.inputs.wstrb = 0xF;
        self.inputs.bready = 1;
        let what = format!("waiting for AXI-Lite to accept the write of {lo:#010x} to 0x0");
        self.tick_until(&what, |o| o.awready != 0 && o.wready != 0)?;
        self.inputs.awaddr = reg::INSTR_HI as u16;
        self.inputs.wdata = hi.into();
        let what = format!(
            "waiting for AXI-Lite to accept the write of {hi:#010x} to 0x4, issued before the \
             response to 0x0"
        );
        let mut lo_resp = None;
        let (mut aw_left, mut w_left) = (true, true);
        self.idle_since_progress = 0;
        while aw_left || w_left {
            self.tick();
            if lo_resp.is_none() && self.outputs.bvalid != 0 {
                lo_resp = Some(axi_resp(self.outputs.bresp));
            }
            aw_left &= self.outputs.awready == 0;
            w_left &= self.outputs.wready == 0;
            // A channel the slave took drops its VALID, as AXI requires.
            self.inputs.awvalid = u8::from(aw_left);
            self.inputs.wvalid = u8::from(w_left);
            self.check_watchdog(&what)?;
        }
        let what = "waiting for the write responses to 0x0 and 0x4";
        let lo_resp = match lo_resp {
            Some(r) => r,
            None => {
                self.tick_until(what, |o| o.bvalid != 0)?;
                axi_resp(self.outputs.bresp)
            }
        };
        self.tick_until(what, |o| o.bvalid != 0)?;
        let hi_resp = axi_resp(self.outputs.bresp);
        self.inputs.bready = 0;
        self.assertion_error().map_or(Ok((lo_resp, hi_resp)), Err)
    }
}

impl Drop for RtlModel {
    fn drop(&mut self) {
        if let Some(destroy) = self.ops.destroy {
            // SAFETY: `sim` came from create() and is destroyed once.
            unsafe { destroy(self.sim) };
        }
    }
}

/// Why a model of `origin` writes no waveform (its shim has no tracing).
fn no_tracing(origin: Origin, config: &HwConfig) -> String {
    match origin {
        Origin::Linked => "this build has no tracing (it was built with PCCX_NO_TRACE=1)".into(),
        Origin::OnDemand => format!(
            "configuration `{name}` is test-only and was built on demand, without \
             tracing; for a waveform, link it into the binary: \
             `PCCX_CONFIGS={linked},{name} cargo build`",
            name = config.name,
            linked = built_configs().join(",")
        ),
        Origin::Loaded => "this model was built without tracing".into(),
        Origin::Overridden => format!(
            "{} names a model for `{}` that was built without tracing",
            model_override::ENV,
            config.name
        ),
    }
}

/// The indices of the set bits of a valid mask, lowest first: the ports
/// whose payload the shim copied this cycle.
fn set_bits(mut mask: u8) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let p = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            p
        })
    })
}

/// The shim passes a 128-bit word as two u64, least significant first:
/// on a little-endian host that is the layout of a `u128`, so a slice of
/// words goes to the shim as it is, with no copy.
#[cfg(target_endian = "little")]
fn words_as_pairs(words: &[Word]) -> *const u64 {
    words.as_ptr().cast()
}

#[cfg(target_endian = "little")]
fn words_as_pairs_mut(words: &mut [Word]) -> *mut u64 {
    words.as_mut_ptr().cast()
}

fn split(w: Word) -> [u64; 2] {
    [w as u64, (w >> 64) as u64]
}

fn join(w: [u64; 2]) -> Word {
    u128::from(w[0]) | (u128::from(w[1]) << 64)
}

fn unpack_entry(v: u64) -> ShapeEntry {
    ShapeEntry {
        a: (v >> 32) as u16,
        b: (v >> 16) as u16,
        c: v as u16,
    }
}

fn pack_entry(e: ShapeEntry) -> u64 {
    (u64::from(e.a) << 32) | (u64::from(e.b) << 16) | u64::from(e.c)
}

/// The AXI-Lite address is 12 bits wide: a larger offset is not a bus access
/// (docs/semantics.md section 12).
fn check_offset(offset: u32) -> Result<(), ModelError> {
    if offset >= 0x1000 {
        return Err(ModelError::Other(format!(
            "register offset {offset:#x} is outside the 12-bit AXI-Lite address space"
        )));
    }
    Ok(())
}

fn axi_resp(bits: u8) -> AxiResp {
    if bits == 0 {
        AxiResp::Okay
    } else {
        AxiResp::SlvErr
    }
}

impl NpuModel for RtlModel {
    fn name(&self) -> &str {
        "rtl"
    }

    fn numerics(&self) -> Option<&NumericsProfile> {
        self.numerics.as_ref()
    }

    fn cycle_budget(&self) -> Option<CycleBudget> {
        self.cycle_budget
    }

    /// The level hw/dut.json declares (docs/dut-contract.md).
    fn observation(&self) -> Observation {
        // The level the DUT's manifest declares, compiled into its shim.
        Observation::ALL[(self.ops.level as usize).min(Observation::ALL.len() - 1)]
    }

    fn reset(&mut self) -> Result<(), ModelError> {
        match self.initial_state {
            Some(seed) => {
                // Random state, then the reset sequence (one shim call).
                let randomize = self.ops.randomize_state.expect("shim randomize_state");
                // SAFETY: `sim` is live.
                unsafe { randomize(self.sim, seed) };
            }
            None => {
                let reset = self.ops.reset.expect("shim reset");
                // SAFETY: `sim` is live.
                unsafe { reset(self.sim) };
            }
        }
        self.inputs = pccx_inputs::default();
        self.outputs = pccx_outputs::default();
        self.cycle = 0;
        self.host.restart();
        self.weights.restart();
        if let Some(lanes) = &mut self.lanes {
            lanes.restart();
        }
        if let Some(streams) = &mut self.streams {
            streams.restart();
        }
        self.held_word = 0;
        self.started.clear();
        self.status_changes.clear();
        self.events.clear();
        self.latched = 0;
        self.instr_writes = 0;
        self.retired = 0;
        self.idle_since_progress = 0;
        self.longest_response_wait = 0;
        self.retire_log.clear();
        self.reads_outstanding = 0;
        self.writes_outstanding = 0;
        self.aw_taken = 0;
        self.w_taken = 0;
        self.protocol_error = None;
        self.assertion = None;
        self.wait_deadline = None;
        self.fifo_status = adapter::FifoStatus::default();
        self.front_door_retired = 0;
        self.front_door_cycles = 0;
        Ok(())
    }

    fn l2_words(&self) -> u32 {
        self.config.l2_words
    }

    fn write_l2(&mut self, addr: u32, data: &[Word]) -> Result<(), ModelError> {
        self.check_l2_range(addr, data.len())?;
        if !self.has_back_door() {
            return self.load_l2_front_door(addr, data);
        }
        let write = self.ops.l2_write.expect("shim l2_write");
        // SAFETY: range checked; a u128 is two u64 in the order the shim
        // reads them, low half first, on a little-endian host (the only
        // kind this builds for, see `words_as_pairs`).
        let rc = unsafe { write(self.sim, addr, data.len() as u32, words_as_pairs(data)) };
        if rc != 0 {
            return Err(ModelError::Backdoor(format!(
                "shim refused L2 write at {addr}"
            )));
        }
        Ok(())
    }

    fn read_l2(&mut self, addr: u32, out: &mut [Word]) -> Result<(), ModelError> {
        self.check_l2_range(addr, out.len())?;
        self.need_back_door("L2")?;
        let read = self.ops.l2_read.expect("shim l2_read");
        // SAFETY: range checked; `out` has room for 2 * len u64, written
        // as the u128 words they make (see `words_as_pairs`).
        let rc = unsafe { read(self.sim, addr, out.len() as u32, words_as_pairs_mut(out)) };
        if rc != 0 {
            return Err(ModelError::Backdoor(format!(
                "shim refused L2 read at {addr}"
            )));
        }
        Ok(())
    }

    fn write_host(&mut self, addr: u32, data: &[Word]) -> Result<(), ModelError> {
        Self::check_host_range(addr, data.len())?;
        self.host.mem[addr as usize..addr as usize + data.len()].copy_from_slice(data);
        Ok(())
    }

    fn host_view(&self) -> Option<MemoryView<'_>> {
        Some(MemoryView::of_words(&self.host.mem))
    }

    fn l2_view(&self) -> Option<MemoryView<'_>> {
        let data = self.ops.l2_data?;
        // SAFETY: the shim lends its L2 array of `l2_words` 16-byte words;
        // it changes only when the model is ticked or written, which needs
        // `&mut self`, so not while this borrow of `self` lives.
        unsafe {
            let ptr = data(self.sim);
            (!ptr.is_null()).then(|| MemoryView::from_raw(ptr, self.config.l2_words as usize))
        }
    }

    fn read_host(&mut self, addr: u32, out: &mut [Word]) -> Result<(), ModelError> {
        Self::check_host_range(addr, out.len())?;
        out.copy_from_slice(&self.host.mem[addr as usize..addr as usize + out.len()]);
        Ok(())
    }

    fn shape_entry(&mut self, table: ShapeTable, index: u8) -> Result<ShapeEntry, ModelError> {
        if usize::from(index) >= pccx_golden::model::SHAPE_ENTRIES {
            return Err(ModelError::Backdoor(format!(
                "shape-table index {index} is past 63"
            )));
        }
        self.need_back_door("the shape tables")?;
        let read = self.ops.table_read.expect("shim table_read");
        // SAFETY: `sim` is live.
        let v = unsafe { read(self.sim, table as u32, u32::from(index)) };
        Ok(unpack_entry(v))
    }

    fn set_shape_entry(
        &mut self,
        table: ShapeTable,
        index: u8,
        entry: ShapeEntry,
    ) -> Result<(), ModelError> {
        if usize::from(index) >= pccx_golden::model::SHAPE_ENTRIES {
            return Err(ModelError::Backdoor(format!(
                "shape-table index {index} is past 63"
            )));
        }
        if !self.has_back_door() {
            return self.set_entry_front_door(table, index, entry);
        }
        self.backdoor_tick(|i| {
            i.bd_tbl_we = 1;
            i.bd_tbl_entry = entry_id::encode(table, index);
            i.bd_tbl_value = pack_entry(entry);
        });
        Ok(())
    }

    fn e_max(&mut self) -> Result<u16, ModelError> {
        self.need_back_door("e_max")?;
        let read = self.ops.emax_read.expect("shim emax_read");
        // SAFETY: `sim` is live.
        Ok(unsafe { read(self.sim) })
    }

    fn set_e_max(&mut self, value: u16) -> Result<(), ModelError> {
        // No instruction sets e_max to a value of the harness's choosing.
        self.need_back_door("e_max (a preload of a steered case)")?;
        self.backdoor_tick(|i| {
            i.bd_emax_we = 1;
            i.bd_emax_value = value;
        });
        Ok(())
    }

    fn issue(&mut self, word: u64) -> Result<(AxiResp, AxiResp), ModelError> {
        self.issue_word(word)
    }

    fn reg_write(&mut self, offset: u32, value: u32) -> Result<AxiResp, ModelError> {
        check_offset(offset)?;
        self.canonical_write(offset, value)
    }

    fn reg_read(&mut self, offset: u32) -> Result<(u32, AxiResp), ModelError> {
        check_offset(offset)?;
        self.canonical_read(offset)
    }

    fn idle(&mut self, cycles: u32) -> Result<(), ModelError> {
        for _ in 0..cycles {
            self.tick();
        }
        if let Some(e) = self.assertion_error() {
            return Err(e);
        }
        match &self.protocol_error {
            Some(m) => Err(ModelError::Protocol(format!("{m} (while idling)"))),
            None => Ok(()),
        }
    }

    fn drain(&mut self) -> Result<(), ModelError> {
        if !self.has_retire_tap() {
            self.drain_by_polling()?;
        } else {
            self.idle_since_progress = 0;
            while self.retired < self.latched {
                self.tick();
                self.check_watchdog("draining: waiting for every latched instruction to retire")?;
            }
        }
        // Every instruction has retired: host words of a copy not moved
        // are words no copy moved.
        if let Some((into, out)) = self
            .streams
            .as_ref()
            .map(|s| s.words_left())
            .filter(|&left| left != (0, 0))
        {
            return Err(ModelError::Protocol(format!(
                "host streams: every instruction retired with {into} words of its copies from \
                 the host not taken and {out} words of its copies to the host not sent \
                 (cycle {})",
                self.program_cycle()
            )));
        }
        // Every instruction has retired: a beat of which the DUT took only
        // some pieces is a beat no instruction finished.
        match self
            .lanes
            .as_ref()
            .and_then(|l| l.partial().map(|p| (p, l.bits())))
        {
            Some(((stream, pieces), bits)) => Err(ModelError::Protocol(format!(
                "weight stream {stream}: every instruction retired with {pieces} pieces of {bits} \
                 bits taken from it, part of a 128-bit beat (cycle {})",
                self.program_cycle()
            ))),
            None => Ok(()),
        }
    }

    fn take_events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.events)
    }

    fn clock(&mut self) -> Option<&mut dyn Clocked> {
        Some(self)
    }

    fn sim_controls(&mut self) -> Option<&mut dyn SimControls> {
        Some(self)
    }

    fn set_weight_source(&mut self, source: WeightSource) {
        self.weights.set_source(source);
    }

    fn weight_beats_consumed(&mut self) -> [u64; 2] {
        self.weights.consumed()
    }
}

impl RtlModel {
    /// One AXI-Lite write of `value` with strobes `strb` to the DUT's
    /// `addr`, as the host makes it (under stalled I/O: channels apart,
    /// BREADY held back, and for a write that `answers_slverr`, a partial
    /// strobe half the time).
    pub(crate) fn axi_write(
        &mut self,
        addr: u16,
        value: u64,
        strb: u8,
        answers_slverr: bool,
    ) -> Result<AxiResp, ModelError> {
        let offset = addr;
        let wide = self.ops.axil_bits == 64;
        self.inputs.awvalid = 1;
        self.inputs.wvalid = 1;
        self.inputs.awaddr = addr;
        self.inputs.wdata = value;
        self.inputs.wstrb = strb;
        self.inputs.bready = 1;
        // Under stalled I/O the host also holds BREADY low for 0-2 cycles
        // of a response, and writes an offset no register takes writes at
        // (0x0C and the unmapped ones) with a partial strobe half the time:
        // the same SLVERR and no effect as with a whole one, by another
        // path of the slave.
        let mut bready_hold = None;
        let mut lead = None;
        if let Some(rng) = self.write_skew.as_mut() {
            bready_hold = Some(rng.below(3));
            if answers_slverr && rng.percent(50) {
                self.inputs.wstrb = if wide {
                    1 + rng.below(254) as u8
                } else {
                    1 + rng.below(14) as u8
                };
            }
            // One channel alone for 0-2 cycles: a slave that takes the
            // address without the data (or the reverse) latches garbage.
            lead = Some((rng.below(3), rng.percent(50)));
        }
        // The value as wide as the bus: 0x and 16 or 8 hex digits.
        let (shown, digits) = if wide {
            (value, 18)
        } else {
            (value & 0xFFFF_FFFF, 10)
        };
        let what = format!(
            "waiting for AXI-Lite to accept the write of {shown:#0digits$x} to {offset:#x}"
        );
        match lead {
            Some((lead, address_first)) => {
                // Each channel's handshake on its own, as AXI allows: a
                // channel not (or no longer) valid carries junk, and one
                // the slave has taken drops its VALID while the other
                // waits. A slave that claims a channel it did not take
                // hangs the write; one that reads a payload without its
                // VALID reads junk.
                let (mut aw_left, mut w_left) = (true, true);
                self.idle_since_progress = 0;
                for t in 0.. {
                    let junk = self.write_skew.as_mut().map_or(0, |r| r.next_u64());
                    let aw = aw_left && (t >= lead || address_first);
                    let w = w_left && (t >= lead || !address_first);
                    self.inputs.awvalid = u8::from(aw);
                    self.inputs.awaddr = if aw { offset } else { (junk >> 32) as u16 };
                    self.inputs.wvalid = u8::from(w);
                    self.inputs.wdata = if w { value } else { self.junk_data(junk) };
                    self.bus_tick();
                    aw_left &= !(aw && self.outputs.awready != 0);
                    w_left &= !(w && self.outputs.wready != 0);
                    if !aw_left && !w_left {
                        break;
                    }
                    self.check_watchdog(&what)?;
                }
                let junk = self.write_skew.as_mut().map_or(0, |r| r.next_u64());
                self.inputs.wdata = self.junk_data(junk);
                self.inputs.awaddr = (junk >> 32) as u16;
            }
            None => self.tick_until(&what, |o| o.awready != 0 && o.wready != 0)?,
        }
        self.inputs.awvalid = 0;
        self.inputs.wvalid = 0;
        let what = format!("waiting for the write response to {offset:#x} (engine FIFO full?)");
        let accepted = self.cycle;
        if bready_hold.is_some() {
            self.inputs.bready = 0;
        }
        self.tick_until(&what, |o| o.bvalid != 0)?;
        self.longest_response_wait = self.longest_response_wait.max(self.cycle - accepted);
        let resp = axi_resp(self.outputs.bresp);
        if let Some(hold) = bready_hold {
            // The response stays up until it is taken, in the tick with
            // BREADY high.
            for _ in 0..hold {
                self.bus_tick();
            }
            self.inputs.bready = 1;
            self.bus_tick();
        }
        self.inputs.wstrb = strb;
        self.inputs.bready = 0;
        // An assertion that failed in the last cycles of the write (after
        // the last wait) is reported now, not at the next call.
        self.assertion_error().map_or(Ok(resp), Err)
    }

    /// The data bus's junk (what a channel carries while not valid): the
    /// low 32 bits of a draw on a 32-bit bus, as ever.
    fn junk_data(&self, junk: u64) -> u64 {
        if self.ops.axil_bits == 64 {
            junk
        } else {
            u64::from(junk as u32)
        }
    }

    /// One AXI-Lite read of the DUT's `addr`, as the host makes it.
    pub(crate) fn axi_read(&mut self, addr: u16) -> Result<(u64, AxiResp), ModelError> {
        self.inputs.arvalid = 1;
        self.inputs.araddr = addr;
        // Under stalled I/O the host holds RREADY low for 0-2 cycles of the
        // read data, as it does BREADY.
        let rready_hold = self.write_skew.as_mut().map(|rng| rng.below(3));
        self.inputs.rready = u8::from(rready_hold.is_none());
        self.tick_until("waiting for AXI-Lite to accept a read", |o| o.arready != 0)?;
        self.inputs.arvalid = 0;
        if let Some(rng) = self.write_skew.as_mut() {
            // The address is taken: junk from here on, as AXI allows.
            self.inputs.araddr = rng.next_u64() as u16;
        }
        if self.outputs.rvalid == 0 {
            self.tick_until("waiting for the read data", |o| o.rvalid != 0)?;
        }
        let result = (self.outputs.rdata, axi_resp(self.outputs.rresp));
        if let Some(hold) = rready_hold {
            for _ in 0..hold {
                self.bus_tick();
            }
            self.inputs.rready = 1;
            self.bus_tick();
        }
        self.inputs.rready = 0;
        self.assertion_error().map_or(Ok(result), Err)
    }
}

/// The RTL's clock: its observed status register and its waits.
impl Clocked for RtlModel {
    fn status_timeline(&mut self) -> Vec<(u64, u32)> {
        self.status_changes.clone()
    }

    fn cycle_now(&mut self) -> Option<u64> {
        Some(self.program_cycle())
    }

    fn predicts_timing(&mut self) -> bool {
        false
    }

    fn set_wait_deadline(&mut self, cycle: Option<u64>) {
        self.wait_deadline = cycle;
    }
}

impl SimControls for RtlModel {
    fn set_initial_state(&mut self, seed: Option<u64>) {
        self.initial_state = seed;
    }

    /// A random power-up draws L2's words too when the manifest names no
    /// `l2_array` (pccx_rand_reset.h).
    fn keeps_l2_through_reset(&self) -> bool {
        self.initial_state.is_none() || self.ops.l2_kept != 0
    }

    fn set_abandon_flag(&mut self, flag: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>) {
        self.abandon = flag;
    }

    fn set_wave_window(
        &mut self,
        path: &std::path::Path,
        from: u64,
        to: u64,
    ) -> Result<(), String> {
        self.close_wave();
        self.wave = Some(WaveWindow {
            path: path.to_path_buf(),
            from,
            to: to.max(from),
            open: false,
            written: false,
            problem: None,
        });
        Ok(())
    }

    fn finish_wave(&mut self) -> Result<(), String> {
        self.close_wave();
        match self.wave.take() {
            Some(WaveWindow {
                problem: Some(p), ..
            }) => Err(p),
            Some(WaveWindow { written: true, .. }) => Ok(()),
            Some(w) => Err(format!(
                "the run ended (cycle {}) before the window {} .. {} began",
                self.cycle, w.from, w.to
            )),
            None => Err("no waveform window was armed".into()),
        }
    }

    fn write_coverage(&mut self, path: &std::path::Path) -> Result<(), String> {
        self.write_coverage_file(path)
    }

    fn set_io_stalls(&mut self, seed: Option<u64>) {
        self.write_skew = seed.map(|s| crate::stimulus::Rng::new(s ^ 0x4157_5F57_534B_4557));
        let latency = self.host.timing().latency;
        self.weights
            .set_stalls(seed.map(|s| s ^ 0x5745_4947_4854_5321));
        if let Some(streams) = &mut self.streams {
            streams.set_stalls(seed.map(|s| s ^ 0x484F_5354_5354_524D));
        }
        self.host.set_timing(match seed {
            Some(seed) => HostTiming {
                latency,
                ..HostTiming::stalled(seed)
            },
            None => HostTiming {
                latency,
                stall: None,
            },
        });
    }
}

/// Words `addr .. addr + n - 1`, both ends included, as every range this
/// program prints (regress::merge::span).
fn word_span(addr: u32, n: usize) -> String {
    format!(
        "{addr} .. {}",
        (u64::from(addr) + n as u64).saturating_sub(1)
    )
}
