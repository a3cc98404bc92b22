//! `pccx-cosim gate-power`: the flags of the gate's kill measurement (`tools::gate_power`).

use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

use super::args::parse_u64;
use super::Failure;

#[derive(Args)]
#[cfg_attr(not(feature = "rtl"), allow(dead_code))]
pub(super) struct GatePowerArgs {
    /// The mutants listed in FILE (one id per line, `# reason` allowed), as
    /// `hw/mutants/curated.txt`.
    #[arg(long, value_name = "FILE", required_unless_present = "killed_in")]
    ids: Option<PathBuf>,
    /// Draw the mutants from those a `mutate --json` report records as
    /// killed (and not equivalent), `--sample` of them.
    #[arg(long, value_name = "JSON", conflicts_with = "ids", requires = "sample")]
    killed_in: Option<PathBuf>,
    /// How many to draw from `--killed-in`.
    #[arg(long)]
    sample: Option<usize>,
    /// Seed of the draw.
    #[arg(long, default_value_t = 1, value_parser = parse_u64)]
    sample_seed: u64,
    /// The report: every mutant's verdict, the binaries and their times.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Where the schemata, mutants built alone and the gate's logs go.
    #[arg(long, value_name = "DIR", default_value = "target/pccx-gate-power")]
    work: PathBuf,
    /// A test binary running longer than this many times its time with no
    /// mutant (plus 30 s) is stopped: the mutant hangs the gate.
    #[arg(long, default_value_t = 5)]
    timeout_factor: u32,
}

#[cfg(feature = "rtl")]
pub(super) fn gate_power(args: &GatePowerArgs) -> Result<ExitCode, Failure> {
    use crate::tools::gate_power::{self as gp, GateRequest};
    use crate::tools::mutate;
    let root = std::env::current_dir()
        .map_err(|e| Failure::Message(format!("cannot read the current directory: {e}")))?;
    if !root.join("Cargo.toml").is_file() || !root.join("hw/rtl").is_dir() {
        return Err(Failure::Message(
            "gate-power runs `cargo test`'s binaries: run it from the repository root".into(),
        ));
    }
    let mutants: Vec<String> = match (&args.ids, &args.killed_in) {
        (Some(file), _) => mutate::read_ids(file).map_err(Failure::Message)?,
        (None, Some(report)) => {
            let killed = gp::killed_in(report).map_err(Failure::Message)?;
            let n = args.sample.unwrap_or(killed.len());
            if n > killed.len() {
                return Err(Failure::Message(format!(
                    "--sample {n}: {} records only {} killed mutants",
                    report.display(),
                    killed.len()
                )));
            }
            gp::sample_ids(&killed, n, args.sample_seed)
        }
        (None, None) => unreachable!("clap requires one"),
    };
    if mutants.is_empty() {
        return Err(Failure::Message("no mutants to run".into()));
    }
    // The linked configurations: the ones every gate test can open.
    let linked = crate::rtl::built_configs();
    let configs = crate::config::ALL
        .iter()
        .filter(|c| !c.test_only && linked.contains(&c.name))
        .cloned()
        .collect();
    let request = GateRequest {
        root,
        mutants,
        configs,
        work: args.work.clone(),
        timeout_factor: args.timeout_factor,
    };
    std::fs::create_dir_all(&args.work)
        .map_err(|e| Failure::Message(format!("{}: cannot create: {e}", args.work.display())))?;
    let journal = args.work.join("gate-power.jsonl");
    let report = gp::run(&request, &journal, &|line| say!("{line}")).map_err(Failure::Message)?;
    say!("{}", gp::table(&report));
    say!("{}", report.summary.text());
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report).expect("reports serialise");
        std::fs::write(path, text + "\n")
            .map_err(|e| Failure::Message(format!("{}: cannot write: {e}", path.display())))?;
    }
    Ok(if report.summary.survived == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

#[cfg(not(feature = "rtl"))]
pub(super) fn gate_power(_: &GatePowerArgs) -> Result<ExitCode, Failure> {
    Err(Failure::Message(
        "gate-power runs the RTL: this binary was built without it (--no-default-features)".into(),
    ))
}
