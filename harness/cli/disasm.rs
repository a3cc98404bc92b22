//! `pccx-cosim disasm`: disassembles words given as hex or in a file, as text or JSON Lines.

use clap::Args;
use pccx_golden::asm::{self, Item};
use pccx_golden::isa::{self, Decoded};
use serde_json::json;
use std::path::Path;
use std::process::ExitCode;

use super::asm::{parse, read};
use super::Failure;

// The flags of `disasm` (its help is the doc comment of `Command::Disasm`).
#[derive(Args)]
pub(super) struct DisasmArgs {
    /// One JSON object per word (JSON Lines).
    #[arg(long)]
    pub(super) json: bool,
    #[arg(required = true, value_name = "WORD|FILE")]
    pub(super) inputs: Vec<String>,
}

/// A `0x` word of hex digits too many for 64 bits (leading zeros aside).
fn is_wide_hex(s: &str) -> bool {
    let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) else {
        return false;
    };
    let digits = hex.replace('_', "");
    !digits.is_empty()
        && digits.chars().all(|c| c.is_ascii_hexdigit())
        && digits.trim_start_matches('0').len() > 16
}

fn parse_word(s: &str) -> Option<u64> {
    let hex = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X"))?;
    u64::from_str_radix(&hex.replace('_', ""), 16).ok()
}

/// The words of a file: one hex word per line (blank lines and `#` or `;`
/// comments allowed, as `asm` prints them), else assembler text.
fn words_of_file(path: &Path) -> Result<Vec<u64>, Failure> {
    let text = read(path)?;
    let plain: Option<Vec<u64>> = text
        .lines()
        .map(|line| line.split(['#', ';']).next().unwrap_or("").trim())
        .filter(|line| !line.is_empty())
        .map(parse_word)
        .collect();
    match plain {
        Some(words) => Ok(words),
        None => Ok(parse(path, &text)?
            .items
            .iter()
            .filter_map(|item| match item {
                Item::Instr(word) => Some(*word),
                _ => None,
            })
            .collect()),
    }
}

pub(super) fn disasm(json: bool, inputs: &[String]) -> Result<ExitCode, Failure> {
    let words: Vec<u64> = match inputs
        .iter()
        .map(|s| parse_word(s))
        .collect::<Option<Vec<_>>>()
    {
        Some(words) => words,
        None => {
            if let Some(wide) = inputs.iter().find(|s| is_wide_hex(s)) {
                return Err(Failure::Message(format!(
                    "`{wide}` does not fit in a 64-bit instruction word (at most 16 hex digits)"
                )));
            }
            if inputs.len() != 1 {
                return Err(Failure::Message(format!(
                    "disasm takes hex words (0x...) or exactly one file, not: {}",
                    inputs.join(" ")
                )));
            }
            words_of_file(Path::new(&inputs[0]))?
        }
    };
    for word in words {
        if json {
            say!("{}", word_json(word));
        } else {
            say!("0x{word:016x}  {}", asm::disasm(word));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `{"word", "op", "fields"}` as in shared/vectors, plus `"illegal"` (the
/// error code's name) and `"reason"` for a word the decoder rejects. The
/// opcode is `op`, so it is not repeated among the fields. Keys are written
/// in that order, fields in bit order from the top: serde_json's map would
/// sort them.
fn word_json(word: u64) -> String {
    let fields: Vec<(&str, String)> = isa::fields(word)
        .into_iter()
        .filter(|(name, _)| *name != "opcode")
        .map(|(name, value)| (name, value.to_string()))
        .collect();
    let mut pairs = vec![
        ("word", json!(format!("0x{word:016x}")).to_string()),
        ("op", json!(isa::op_name(word)).to_string()),
        ("fields", ordered_object(&fields)),
    ];
    if let Decoded::Illegal { reason, .. } = isa::decode(word) {
        pairs.push(("illegal", json!(reason.error_code().name()).to_string()));
        pairs.push(("reason", json!(reason.to_string()).to_string()));
    }
    ordered_object(&pairs)
}

/// A JSON object with its keys in the given order; the values are JSON
/// text already.
fn ordered_object(pairs: &[(&str, String)]) -> String {
    let body: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{}:{v}", json!(k)))
        .collect();
    format!("{{{}}}", body.join(","))
}
