//! Shared by the subcommands: number parsing for flags, and the configuration a `--config` names.

use clap::builder::{PossibleValue, PossibleValuesParser};

use crate::config::{self, HwConfig};

pub(super) fn parse_u64(s: &str) -> Result<u64, String> {
    let parsed = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(&hex.replace('_', ""), 16),
        None => s.replace('_', "").parse(),
    };
    parsed.map_err(|e| format!("`{s}` is not a 64-bit number: {e}"))
}

pub(super) fn hw_config(name: &str) -> HwConfig {
    // clap has already checked the name against config::names().
    config::by_name(name).expect("a configuration clap accepted")
}

/// `--jobs`: the number given, else one worker per core.
pub(super) fn jobs(given: Option<usize>) -> Result<usize, super::Failure> {
    match given {
        Some(0) => Err(super::Failure::Message(
            "--jobs 0: a campaign needs at least one worker".into(),
        )),
        Some(n) => Ok(n),
        None => Ok(std::thread::available_parallelism().map_or(1, |n| n.get())),
    }
}

/// The `--config` choices of a subcommand that opens the RTL: every
/// configuration, the test-only ones marked as such (they are not linked
/// into the binary, but built on first use; docs/build.md).
pub(super) fn config_values() -> PossibleValuesParser {
    PossibleValuesParser::new(config::ALL.iter().map(|c| {
        let value = PossibleValue::new(c.name);
        if c.test_only {
            value.help("test-only: built on first use, which needs Verilator")
        } else {
            value
        }
    }))
}
