//! `pccx-cosim replay`: runs a repro file's case again and says whether it still mismatches.

use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::triage::repro::{self, Repro, Verdict};
use crate::triage::shrink;
use crate::triage::signature::Signature;

use super::Failure;

// The flags of `replay` (its help is the doc comment of `Command::Replay`).
#[derive(Args)]
pub(super) struct ReplayArgs {
    /// Replay the shrunk program instead of the recorded one.
    #[arg(long)]
    pub(super) min: bool,
    pub(super) file: PathBuf,
}

pub(super) fn replay(file: &Path, min: bool) -> Result<ExitCode, Failure> {
    let repro = Repro::read(file).map_err(Failure::Message)?;
    let (case, expected) = repro
        .case_to_replay(min)
        .map_err(|e| Failure::Message(format!("{}: {e}", file.display())))?;
    let s = &repro.setup;
    let fault = s
        .fault
        .map(|f| format!(" with fault {}", f.name()))
        .unwrap_or_default();
    say!(
        "replaying {}{}: seed {}, {}, on {} against the {} DUT{fault}",
        file.display(),
        if min { " (shrunk program)" } else { "" },
        case.seed,
        shrink::ProgramSize::of(&case.program),
        s.config.name,
        s.dut.name(),
    );
    let p = &repro.provenance;
    let text = |key: &str| match &p[key] {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => "unknown".into(),
        other => other.to_string(),
    };
    say!(
        "recorded by pccx-cosim {} ({}), git {}, hw/rtl last changed in {}, uncommitted RTL changes: {}",
        text("pccx_cosim_version"),
        text("build_profile"),
        text("git_commit"),
        text("rtl_last_commit"),
        text("rtl_dirty")
    );
    let verdict = repro::replay(&repro, min).map_err(|e| {
        Failure::Message(format!(
            "infrastructure error replaying {}: {e}",
            file.display()
        ))
    })?;
    let indent = |m: &dyn std::fmt::Display| {
        m.to_string()
            .lines()
            .map(|l| format!("    {l}"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    Ok(match verdict {
        Verdict::Reproduces(m) => {
            say!("reproduces: the same mismatch ({})", Signature::of(&m));
            say!("{}", indent(&m));
            ExitCode::from(1)
        }
        Verdict::Differs(m) => {
            say!(
                "mismatches, but differently: now {} ({}), recorded {} ({})",
                m.kind,
                Signature::of(&m),
                expected.kind,
                repro.signature
            );
            say!("  now:\n{}", indent(&m));
            say!("  recorded:\n{}", indent(expected));
            ExitCode::from(1)
        }
        Verdict::NoLongerReproduces => {
            say!(
                "no longer reproduces: reference and DUT agree (recorded: {} {})",
                expected.kind,
                expected.detail
            );
            ExitCode::SUCCESS
        }
    })
}
