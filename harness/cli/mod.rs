//! The command line of `pccx-cosim`: the clap definition, one module per subcommand, and the dispatch.
//!
//! A flag of one subcommand goes into that subcommand's file (its clap
//! `Args` struct and the function that runs it); a new subcommand is a new
//! file here, a variant of `Command` and an arm of `main`'s match.
//! `harness/main.rs` only calls `main`.
//!
//! Exit status: 0 all seeds matched (or the tool did its job), 1 some seed
//! mismatched or timed out (`cvo-accuracy`: some function failed its
//! bound), 2 usage or infrastructure error (the message says which; for
//! `merge`: seeds missing), 3 a campaign stopped by SIGTERM or SIGINT
//! after writing what finished, 4 a campaign ended because a seed was
//! stuck in the simulator past `--seed-timeout`.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

mod args;
mod asm;
mod bench;
mod cvo_accuracy;
mod disasm;
mod gate_power;
mod generate;
mod merge;
mod mutate;
mod plot_coverage;
mod replay;
mod report;
mod run;
mod slurm;
mod workload;

#[derive(Parser)]
#[command(
    name = "pccx-cosim",
    version,
    about = "Co-simulates the pccx NPU: the Verilated RTL against the golden model, on seeded random programs",
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    run: run::RunArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Disassemble instruction words: hex words on the command line, or one
    /// file of words (one per line) or of assembler text.
    Disasm(disasm::DisasmArgs),
    /// Assemble a file; print its words, one per line.
    Asm(asm::AsmArgs),
    /// Benchmark: the same programs replayed into the RTL alone, then run as
    /// a campaign (RTL against golden) with one worker and with --jobs
    /// workers, in turn, several times; prints the median simulated cycles
    /// per second of each and their ratios (docs/build.md).
    Bench(bench::BenchArgs),
    /// Mutation testing: build mutants of hw/rtl (one token changed each),
    /// run a bounded campaign on each, and report the kill rate
    /// (docs/mutation.md). Exit 1 with --require-all-killed if one survives.
    Mutate(mutate::MutateArgs),
    /// Combine mutation reports (`mutate --json`) of the same mutants on
    /// several configurations: per-configuration and combined kill rates,
    /// a mutant killed on any configuration counting as killed, equivalent
    /// only if equivalent on all (docs/mutation.md, "Per configuration").
    /// Exit 1 if a mutant survives every configuration.
    MutateCombine(mutate::MutateCombineArgs),
    /// (Internal: one mutant's campaign, in a child process of `mutate`.)
    #[command(hide = true)]
    MutateRun(mutate::MutateRunArgs),
    /// The gate's power: `cargo test`'s own test binaries run against
    /// mutants (one mutant schema per linked configuration, the mutant
    /// chosen at run time), and which the gate kills, by which test, how
    /// fast (docs/mutation.md). Run from the repository root. Exit 1 if a
    /// mutant survives the gate.
    GatePower(gate_power::GatePowerArgs),
    /// Run a repro file's case again: exit 1 if it still mismatches, 0 if
    /// reference and DUT now agree, 2 if the file is malformed.
    Replay(replay::ReplayArgs),
    /// The golden CVO functions against the exact functions over all 65,536
    /// BF16 inputs, and REDUCE_SUM against an exact sum: max ULP error,
    /// results not correctly rounded, special values, PASS/FAIL against
    /// CONTRACT section 7's bounds (docs/cvo.md section 6). Exit 1 on a FAIL.
    CvoAccuracy(cvo_accuracy::CvoAccuracyArgs),
    /// Print the program a seed generates, as assembler text.
    Gen(generate::GenArgs),
    /// Merge campaign directories (shards, reruns) into the report the
    /// whole campaign would have written: exit 0 all matched, 1 a seed
    /// mismatched or timed out, 2 seeds missing (docs/scale-out.md).
    Merge(merge::MergeArgs),
    /// Coverage against programs, from `--coverage-curve` files (a steered
    /// and a plain campaign, say), as one SVG: functional bins, and RTL
    /// line, branch and toggle points when every file has them.
    PlotCoverage(plot_coverage::PlotCoverageArgs),
    /// The morning-after page: one self-contained HTML file of a campaign,
    /// a merged cluster run or a mutation run, with its failures grouped by
    /// signature and linked to their repro, shrunk program and waveform,
    /// engine utilisation and latency, coverage, kill tables, shards
    /// (docs/report.md).
    Report(report::ReportArgs),
    /// Run a campaign as a Slurm job array (`slurm submit`), watch it and
    /// merge its shards (`slurm wait`), or cancel it (docs/scale-out.md).
    Slurm(slurm::SlurmArgs),
    /// Run a workload (a transformer decoder block) as pccx programs on the
    /// DUT against the golden model, with every check, and against the same
    /// mathematics in f64: per layer instructions, cycles, engine
    /// utilisation, host work and error (docs/workloads.md). Exit 1 when the
    /// DUT differs.
    Workload(workload::WorkloadArgs),
}

/// A usage or infrastructure failure: printed, exit status 2.
pub(super) enum Failure {
    /// Printed after the program's name.
    Message(String),
    /// `FILE:LINE:COL: message`, printed alone so that editors can jump to
    /// it.
    Located(String),
}

/// Parses the command line, runs the subcommand (a campaign without one)
/// and reports a failure: the binary's `main`.
pub fn main() -> ExitCode {
    keep_large_buffers_in_the_heap();
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Disasm(disasm::DisasmArgs { json, inputs })) => disasm::disasm(json, &inputs),
        Some(Command::Asm(asm::AsmArgs { file })) => asm::assemble(&file),
        Some(Command::Gen(generate::GenArgs {
            seed,
            instrs,
            config,
        })) => generate::generate(seed, instrs, config),
        Some(Command::Bench(args)) => bench::bench(args),
        Some(Command::Replay(replay::ReplayArgs { min, file })) => replay::replay(&file, min),
        Some(Command::CvoAccuracy(cvo_accuracy::CvoAccuracyArgs { json, plots })) => {
            cvo_accuracy::cvo_accuracy(json.as_deref(), plots.as_deref())
        }
        Some(Command::MutateRun(args)) => mutate::mutate_run(args),
        Some(Command::Mutate(args)) => mutate::mutate(args),
        Some(Command::MutateCombine(args)) => mutate::mutate_combine(&args),
        Some(Command::GatePower(args)) => gate_power::gate_power(&args),
        Some(Command::Merge(args)) => merge::merge(&args),
        Some(Command::Slurm(args)) => slurm::slurm(args),
        Some(Command::PlotCoverage(args)) => plot_coverage::plot_coverage(&args),
        Some(Command::Report(args)) => report::report(&args),
        Some(Command::Workload(args)) => workload::workload(args),
        None => run::run(&cli.run),
    };
    match result {
        Ok(code) => code,
        Err(Failure::Message(message)) => {
            eprintln!("pccx-cosim: {message}");
            ExitCode::from(2)
        }
        Err(Failure::Located(message)) => {
            eprintln!("{message}");
            ExitCode::from(2)
        }
    }
}

/// A seed allocates and frees images and read-back buffers of a megabyte or
/// more (L2, host memory). glibc serves blocks that large with a fresh
/// `mmap` each time and unmaps them on free, so every seed paid for
/// faulting in and clearing those pages again: `perf` showed the kernel's
/// page-fault and page-clearing paths as the largest share of a default
/// campaign, and 200 kv260 seeds spent 1.64 s in the kernel against 1.53 s
/// in user code (docs/build.md, "Throughput"). Serving them from the heap
/// and keeping freed memory there lets the next seed reuse the same pages.
fn keep_large_buffers_in_the_heap() {
    use std::ffi::c_int;
    extern "C" {
        fn mallopt(param: c_int, value: c_int) -> c_int;
    }
    // glibc's <malloc.h>.
    const M_TRIM_THRESHOLD: c_int = -1;
    const M_MMAP_THRESHOLD: c_int = -3;
    // 32 MiB is the largest mmap threshold glibc accepts on 64-bit hosts;
    // the trim threshold keeps up to 64 MiB of freed heap for reuse.
    // SAFETY: mallopt only sets allocator parameters; it is called before
    // any thread starts. A refusal (return 0) leaves glibc's defaults,
    // which are correct, only slower.
    unsafe {
        mallopt(M_MMAP_THRESHOLD, 32 << 20);
        mallopt(M_TRIM_THRESHOLD, 64 << 20);
    }
}
