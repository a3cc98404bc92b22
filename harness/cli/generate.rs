//! `pccx-cosim gen`: prints the program a seed generates, as assembler text.

use clap::builder::PossibleValuesParser;
use clap::Args;
use pccx_golden::asm;
use std::process::ExitCode;

use crate::config;
use crate::stimulus::{GenOptions, TestCase};

use super::args::{hw_config, parse_u64};
use super::Failure;

// The flags of `gen` (its help is the doc comment of `Command::Gen`).
#[derive(Args)]
pub(super) struct GenArgs {
    #[arg(long, value_parser = parse_u64)]
    pub(super) seed: u64,
    #[arg(long, default_value_t = 40)]
    pub(super) instrs: usize,
    #[arg(long, default_value = config::DEFAULT_NAME, value_parser = PossibleValuesParser::new(config::names()))]
    pub(super) config: String,
}

pub(super) fn generate(seed: u64, instrs: usize, config: &str) -> Result<ExitCode, Failure> {
    let case = TestCase::generate(seed, &GenOptions::for_config(&hw_config(config), instrs));
    print!("{}", asm::format_program(&case.program));
    Ok(ExitCode::SUCCESS)
}
