//! `pccx-cosim bench`: how fast the Verilated model simulates on its own,
//! with no golden model and no scoreboard in the loop, either replaying a
//! campaign's programs (the yardstick of a campaign's throughput) or while
//! the GEMM systolic array (or the GEMV vector core, or the uCVO cores) is
//! busy on one large instruction (docs/build.md).

use std::time::Instant;

use pccx_golden::asm::Item;
use pccx_golden::isa::{Cvo, CvoFunc, Instr, MatOp};
use pccx_golden::model::{Event, ModelError, NpuModel, ShapeEntry, ShapeTable};
use pccx_golden::streams::WeightSource;

use crate::config::HwConfig;
use crate::env::models::{self, DutKind, Setup};
use crate::regress::campaign::{self, CampaignOptions};
use crate::scoreboard::{Resident, QUIESCENCE_CYCLES};
use crate::stimulus::TestCase;

/// Simulated cycles (the last retire cycle of each case, summed, as a
/// campaign counts them) and the wall time they took.
#[derive(Clone, Copy, Debug)]
pub struct Throughput {
    pub cycles: u64,
    pub seconds: f64,
}

impl Throughput {
    pub fn cycles_per_second(&self) -> f64 {
        self.cycles as f64 / self.seconds.max(1e-9)
    }
}

/// Replays `cases` into `rtl` alone, as a campaign drives its DUT: the
/// same loading (only the words a case changes, scoreboard/resident.rs),
/// the same front-door traffic, the drain and the quiescence idle, but no
/// reference, no checks and no final comparison. The cases are made
/// beforehand, so their generation is not timed.
pub fn rtl_alone(rtl: &mut dyn NpuModel, cases: &[TestCase]) -> Result<Throughput, ModelError> {
    let mut resident = Resident::new();
    let mut cycles = 0u64;
    let (mut l2_writes, mut host_writes) = (Vec::new(), Vec::new());
    let begin = Instant::now();
    for case in cases {
        if let Some(sim) = rtl.sim_controls() {
            sim.set_io_stalls(case.io_stall_seed());
            sim.set_initial_state(case.initial_state_seed());
        }
        rtl.set_weight_source(case.weight_source());
        let changes = resident.changes_through_reset(case, &mut [&mut *rtl]);
        rtl.reset()?;
        if let Some(changes) = changes {
            changes.apply(rtl)?;
        } else {
            rtl.write_l2(0, &case.l2_image())?;
            rtl.write_host(0, &case.host_image())?;
        }
        for &(table, index, entry) in &case.preload.tables {
            rtl.set_shape_entry(table, index, entry)?;
        }
        if let Some(v) = case.preload.e_max {
            rtl.set_e_max(v)?;
        }
        rtl.take_events();
        l2_writes.clear();
        host_writes.clear();
        let mut last_retire = 0u64;
        let mut note = |events: Vec<Event>| {
            for e in events {
                match e {
                    Event::L2Write { addr, .. } => l2_writes.push(addr),
                    Event::HostWrite { addr, .. } => host_writes.push(addr),
                    Event::Retire { cycle: Some(c), .. } => last_retire = last_retire.max(c),
                    _ => {}
                }
            }
        };
        for item in &case.program.items {
            match *item {
                Item::Instr(word) => {
                    rtl.issue(word)?;
                }
                Item::Idle(n) => rtl.idle(n)?,
                Item::RegWrite { offset, value } => {
                    rtl.reg_write(offset, value)?;
                }
            }
            note(rtl.take_events());
        }
        rtl.drain()?;
        rtl.idle(QUIESCENCE_CYCLES)?;
        note(rtl.take_events());
        cycles += last_retire;
        resident.matched(case, l2_writes.iter().copied(), host_writes.iter().copied());
    }
    Ok(Throughput {
        cycles,
        seconds: begin.elapsed().as_secs_f64(),
    })
}

/// One round of `bench` on a campaign's programs: the RTL alone, then the
/// campaign on one worker and (with `jobs` > 1) on `jobs`, in turn, so that
/// a change in the machine's load falls on all alike.
#[derive(Clone, Copy, Debug)]
pub struct CampaignRound {
    /// Simulated cycles of the programs (the same for every measurement).
    pub cycles: u64,
    /// Simulated cycles per second of the RTL alone.
    pub rtl_alone: f64,
    /// Of the campaign (RTL + golden + scoreboard), one worker.
    pub campaign: f64,
    /// Of the campaign on `jobs` workers, when `jobs` > 1.
    pub parallel: Option<f64>,
    /// Seeds that mismatched (the figures still count them).
    pub mismatched: u64,
}

/// A campaign worker of the benchmark: the reference and the RTL, nothing
/// recorded.
struct BenchWorker {
    reference: Box<dyn NpuModel>,
    dut: Box<dyn NpuModel>,
}

impl campaign::Worker for BenchWorker {
    type Done = ();

    fn models(&mut self) -> (&mut dyn NpuModel, &mut dyn NpuModel) {
        (&mut *self.reference, &mut *self.dut)
    }

    fn finish(self) {}
}

/// One campaign of the benchmark on `jobs` workers: (cycles, cycles/s,
/// seeds mismatched).
fn campaign_rate(options: &CampaignOptions, jobs: usize) -> Result<(u64, f64, u64), String> {
    let make = |_: usize| -> Result<BenchWorker, String> {
        Ok(BenchWorker {
            reference: models::open_reference(&options.config),
            dut: models::open_dut(&options.config, DutKind::Rtl)?,
        })
    };
    let (report, _) = campaign::run_campaign_jobs(options, jobs, &make, &mut |_| {});
    let s = &report.summary;
    if let Some(e) = &s.stopped {
        return Err(format!(
            "infrastructure error at seed {}: {}",
            e.seed, e.message
        ));
    }
    Ok((
        s.cycles.unwrap_or(0),
        s.cycles_per_second().unwrap_or(0.0),
        s.mismatched,
    ))
}

/// Measures one [`CampaignRound`] of `options`' programs.
pub fn campaign_round(options: &CampaignOptions, jobs: usize) -> Result<CampaignRound, String> {
    let gen = options.gen_options();
    let cases: Vec<TestCase> = options
        .seeds()
        .map(|s| TestCase::generate(s, &gen))
        .collect();
    let mut rtl = models::open_dut(&options.config, DutKind::Rtl)?;
    let alone = rtl_alone(&mut *rtl, &cases).map_err(|e| format!("the RTL alone: {e}"))?;
    drop(rtl);
    let (cycles, campaign, mismatched) = campaign_rate(options, 1)?;
    if cycles != alone.cycles {
        return Err(format!(
            "the RTL alone simulated {} cycles and the campaign {cycles}: \
             they did not run the same programs",
            alone.cycles
        ));
    }
    let parallel = if jobs > 1 {
        Some(campaign_rate(options, jobs)?.1)
    } else {
        None
    };
    Ok(CampaignRound {
        cycles,
        rtl_alone: alone.cycles_per_second(),
        campaign,
        parallel,
        mismatched,
    })
}

/// Which engine a busy benchmark keeps busy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BusyEngine {
    Gemm,
    Gemv,
    Cvo,
}

/// One measurement: simulated cycles from the instruction's start to its
/// retire, and the wall time they took.
#[derive(Clone, Copy, Debug)]
pub struct BusyRun {
    pub cycles: u64,
    pub seconds: f64,
}

impl BusyRun {
    pub fn cycles_per_second(&self) -> f64 {
        self.cycles as f64 / self.seconds.max(1e-9)
    }
}

/// Shapes of the benchmark instruction: the largest GEMM the limits allow
/// with every array row and column working on kv260 (M = 16 rows of K = 512,
/// N = 256: 2 x 16 x 8 passes), and a GEMV over N = 4096 columns.
fn shape(engine: BusyEngine) -> (u16, u16, u16) {
    match engine {
        BusyEngine::Gemm => (16, 512, 256),
        BusyEngine::Gemv => (1, 2048, 4096),
        BusyEngine::Cvo => (0, 0, 0),
    }
}

/// Where the benchmark GEMV/GEMM writes its output: word 8192 where L2 is
/// large enough (kv260, small), else the top of L2 (tiny's 4,096 words);
/// the activations are read from word 0. A configuration whose L2 cannot
/// hold both is refused up front, with the sizes.
fn busy_dest(config: HwConfig, engine: BusyEngine) -> Result<u32, String> {
    let (m, k, n) = shape(engine);
    if engine == BusyEngine::Cvo {
        return Ok(0);
    }
    let shape = pccx_golden::exec::mat::MatShape {
        m: u64::from(m),
        k: u64::from(k),
        n: u64::from(n),
    };
    let (act, out) = (shape.act_words(), shape.out_words());
    let l2 = u64::from(config.l2_words);
    if act + out > l2 {
        return Err(format!(
            "--busy {engine:?} on `{}`: its {act} activation and {out} output words do not fit \
             the configuration's {l2}-word L2",
            config.name
        ));
    }
    Ok(8192.min(l2 - out) as u32)
}

/// Runs one instruction of `engine` on `config` and measures it.
pub fn busy_run(config: HwConfig, engine: BusyEngine, seed: u64) -> Result<BusyRun, String> {
    // The RTL alone, opened by the one model factory (no fault, ideal I/O).
    let mut rtl = Setup::new(config, DutKind::Rtl, None).open_dut()?;
    rtl.set_weight_source(WeightSource::new(seed));
    rtl.reset().map_err(|e| e.to_string())?;
    let (m, k, n) = shape(engine);
    let dest_reg = busy_dest(config, engine)?;
    let fail = |e: pccx_golden::model::ModelError| e.to_string();
    rtl.set_shape_entry(ShapeTable::Fmap, 1, ShapeEntry { a: m, b: k, c: 0 })
        .map_err(fail)?;
    rtl.set_shape_entry(ShapeTable::Weight, 2, ShapeEntry { a: k, b: n, c: 0 })
        .map_err(fail)?;
    let op = MatOp {
        dest_reg,
        src_addr: 0,
        flags: 0b10_1000, // findemax, w_scale: the whole output path works
        size_ptr_addr: 2,
        shape_ptr_addr: 1,
        parallel_lane: 0,
        reserved: 0,
    };
    let word = match engine {
        BusyEngine::Gemm => Instr::Gemm(op),
        BusyEngine::Gemv => Instr::Gemv(op),
        BusyEngine::Cvo => {
            // Every BF16 pattern in turn from word 0, as many as half of L2
            // holds (all 65,535 a length can name on kv260).
            let words = (config.l2_words / 2).min(8192);
            let patterns = crate::stimulus::cvo_sweep::all_patterns();
            rtl.write_l2(0, &patterns[..words as usize]).map_err(fail)?;
            Instr::Cvo(Cvo {
                func: CvoFunc::Sin,
                src_addr: 0,
                dst_addr: words,
                length: (8 * words).min(65_535) as u16,
                flags: 0,
                async_: true,
            })
        }
    }
    .encode();
    let begin = Instant::now();
    rtl.issue(word).map_err(fail)?;
    rtl.drain().map_err(fail)?;
    let seconds = begin.elapsed().as_secs_f64();
    let (err, start, retire) = rtl
        .take_events()
        .iter()
        .find_map(|e| match e {
            Event::Retire {
                err, cycle, start, ..
            } => Some((*err, start.unwrap_or(0), cycle.unwrap_or(0))),
            _ => None,
        })
        .ok_or("the benchmark instruction did not retire")?;
    if err != 0 {
        return Err(format!(
            "the benchmark instruction retired with error code {err}"
        ));
    }
    Ok(BusyRun {
        cycles: retire - start,
        seconds,
    })
}
