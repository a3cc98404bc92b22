//! `pccx-cosim gen`: prints the program a seed generates, as assembler text.

use clap::Args;
use pccx_golden::asm;
use std::process::ExitCode;

use crate::config::{self, HwConfig};
use crate::stimulus::{GenOptions, TestCase};

use super::args::{config_values, parse_u64};
use super::Failure;

// The flags of `gen` (its help is the doc comment of `Command::Gen`).
#[derive(Args)]
pub(super) struct GenArgs {
    #[arg(long, value_parser = parse_u64)]
    pub(super) seed: u64,
    #[arg(long, default_value_t = 40)]
    pub(super) instrs: usize,
    #[arg(long, default_value = config::DEFAULT_NAME, value_parser = config_values())]
    pub(super) config: HwConfig,
}

pub(super) fn generate(seed: u64, instrs: usize, config: HwConfig) -> Result<ExitCode, Failure> {
    let case = TestCase::generate(seed, &GenOptions::for_config(&config, instrs));
    print!("{}", asm::format_program(&case.program));
    Ok(ExitCode::SUCCESS)
}
