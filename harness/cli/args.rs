//! Shared by the subcommands: number parsing for flags, the configuration a `--config` names, the fault an `--inject-fault` names.

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};

use crate::config::{self, HwConfig};
use crate::env::faults::Fault;
use pccx_golden::model::Observation;

pub(super) fn parse_u64(s: &str) -> Result<u64, String> {
    let parsed = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(&hex.replace('_', ""), 16),
        None => s.replace('_', "").parse(),
    };
    parsed.map_err(|e| format!("`{s}` is not a 64-bit number: {e}"))
}

/// `--config`, parsed into the configuration it names: every
/// configuration is a choice, the test-only ones marked as such (they are
/// not linked into the binary, but built on first use; docs/build.md).
pub(super) fn config_values() -> impl TypedValueParser<Value = HwConfig> {
    PossibleValuesParser::new(config::ALL.iter().map(|c| {
        let value = PossibleValue::new(c.name);
        if c.test_only {
            value.help("test-only: built on first use, which needs Verilator")
        } else {
            value
        }
    }))
    .try_map(|name| {
        config::by_name(&name).ok_or_else(|| format!("no configuration named `{name}`"))
    })
}

/// `--observe`: an observation level by its name (docs/dut-contract.md).
pub(super) fn observation_values() -> impl TypedValueParser<Value = Observation> {
    PossibleValuesParser::new(Observation::ALL.map(|o| {
        PossibleValue::new(o.name()).help(match o {
            Observation::BlackBox => {
                "only the external interfaces; L2 read back by MEMCPY at the end"
            }
            Observation::Retire => "plus each instruction's retire and its cycle",
            Observation::Full => "every tap and the back door (the default)",
        })
    }))
    .map(|name| Observation::by_name(&name).expect("a possible value"))
}

/// `--inject-fault`: a fault by its name, with its default parameters.
pub(super) fn fault_values() -> impl TypedValueParser<Value = Fault> {
    PossibleValuesParser::new(Fault::names()).try_map(|name| {
        Fault::by_name(&name).ok_or_else(|| format!("`{name}` is not a fault of this build"))
    })
}
