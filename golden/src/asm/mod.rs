//! A line-oriented assembler and disassembler for pccx programs.
//!
//! One statement per line; `#` and `;` start a comment; mnemonics, memory
//! names and options are case-insensitive; numbers are decimal or `0x` hex
//! (`_` may separate digits).
//!
//! ```text
//! memset fmap[3] = (1, 1, 9)                      ; rsvd=N when reserved bits are set
//! memcpy l2[100] <- host[0], shape=3              ; also host[..] <- l2[..], l2 <- l2
//! memcpy l2[5] <- l2[9], shape=3, async, aux=0x12
//! gemv l2[768] <- l2[400], fmap=9, weight=2, lanes=4, accm
//! gemm l2[512] <- l2[300], fmap=3, weight=1, findemax, w_scale, flags_rsvd=1, rsvd=2
//! cvo.exp l2[900] <- l2[768], len=64, sub_emax, async
//! .word 0x5000000000000000                        ; any word, legal or not
//! .idle 20                                        ; the host waits 20 cycles
//! .write 0x08, 0x0                                ; a register write
//! ```
//!
//! `disasm` prints every legal word in the mnemonic form above and every
//! illegal one as `.word`, and `parse_program` reads both back to the same
//! word.

mod disasm;
mod lex;
mod parse;

pub use disasm::disasm;
pub use parse::parse_program;

use std::fmt;

/// One step of a host program (docs/semantics.md section 10).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Item {
    /// An instruction word, written as 0x00 then 0x04.
    Instr(u64),
    /// The host leaves a gap of this many cycles.
    Idle(u32),
    /// One AXI-Lite register write.
    RegWrite { offset: u32, value: u32 },
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Program {
    pub items: Vec<Item>,
}

/// Where and why a program text did not assemble; lines and columns count
/// from 1.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AsmError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl fmt::Display for AsmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.line, self.column, self.message
        )
    }
}

impl std::error::Error for AsmError {}

/// One line per item, each ending in a newline; `parse_program` reads it
/// back to the same program.
pub fn format_program(program: &Program) -> String {
    program
        .items
        .iter()
        .map(|item| match *item {
            Item::Instr(word) => disasm(word) + "\n",
            Item::Idle(cycles) => format!(".idle {cycles}\n"),
            Item::RegWrite { offset, value } => format!(".write 0x{offset:02x}, 0x{value:x}\n"),
        })
        .collect()
}

#[cfg(test)]
mod tests;
