//! `pccx-cosim asm`: assembles a file to words; also the file reading and parsing `disasm` shares.

use clap::Args;
use pccx_golden::asm::{self, Item};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::Failure;

// The flags of `asm` (its help is the doc comment of `Command::Asm`).
#[derive(Args)]
pub(super) struct AsmArgs {
    pub(super) file: PathBuf,
}

pub(super) fn read(path: &Path) -> Result<String, Failure> {
    std::fs::read_to_string(path)
        .map_err(|e| Failure::Message(format!("cannot read {}: {e}", path.display())))
}

/// A program from assembler text, or the `FILE:LINE:COL: message` failure.
pub(super) fn parse(path: &Path, text: &str) -> Result<asm::Program, Failure> {
    asm::parse_program(text).map_err(|e| {
        Failure::Located(format!(
            "{}:{}:{}: {}",
            path.display(),
            e.line,
            e.column,
            e.message
        ))
    })
}

pub(super) fn assemble(path: &Path) -> Result<ExitCode, Failure> {
    let program = parse(path, &read(path)?)?;
    for item in &program.items {
        match item {
            Item::Instr(word) => say!("0x{word:016x}"),
            Item::Idle(cycles) => say!("# .idle {cycles}"),
            Item::RegWrite { offset, value } => say!("# .write 0x{offset:02x}, 0x{value:08x}"),
        }
    }
    Ok(ExitCode::SUCCESS)
}
