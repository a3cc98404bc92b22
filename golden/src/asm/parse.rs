//! Assembly text -> program. Every field value is checked against its
//! field's width here, so `Instr::encode` never truncates what was written.

use super::lex::{lex, Tok, Token};
use super::{AsmError, Item, Program};
use crate::isa::layout::{self, Field};
use crate::isa::{Cvo, CvoFunc, Instr, MatOp, Memcpy, Memset};
use crate::model::ShapeTable;

/// Parses a whole program; the first error stops it.
pub fn parse_program(text: &str) -> Result<Program, AsmError> {
    let mut items = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let (tokens, end_column) = lex(line, index + 1)?;
        if tokens.is_empty() {
            continue;
        }
        let mut cursor = Cursor {
            tokens,
            pos: 0,
            line: index + 1,
            end_column,
        };
        items.push(cursor.statement()?);
        cursor.end()?;
    }
    Ok(Program { items })
}

/// Pseudo-fields for the assembler-only spellings of reserved flag bits and
/// of the directives' operands (named so that width errors read well).
const MAT_FLAGS_RSVD: Field = Field {
    name: "flags_rsvd",
    lo: 0,
    width: 3,
};
const CVO_FLAGS_RSVD: Field = Field {
    name: "flags_rsvd",
    lo: 0,
    width: 2,
};
const WORD: Field = Field {
    name: "word",
    lo: 0,
    width: 64,
};
const IDLE: Field = Field {
    name: "idle cycles",
    lo: 0,
    width: 32,
};
const OFFSET: Field = Field {
    name: "register offset",
    lo: 0,
    width: 32,
};
const VALUE: Field = Field {
    name: "register value",
    lo: 0,
    width: 32,
};

/// A trailing option: a bare flag word, or `name=value` for a field.
enum Opt {
    Flag(&'static str),
    Value(&'static str, Field),
}

impl Opt {
    fn name(&self) -> &'static str {
        match self {
            Opt::Flag(name) | Opt::Value(name, _) => name,
        }
    }
}

/// The options given on one line, by name (flags have value 1).
struct Opts(Vec<(&'static str, u64)>);

impl Opts {
    fn get(&self, name: &str) -> Option<u64> {
        self.0.iter().find(|(n, _)| *n == name).map(|&(_, v)| v)
    }

    fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// A flags field value: the `flags_rsvd` bits plus the bit of every
    /// flag word given.
    fn flags(&self, bits: &[(&str, u8)]) -> u8 {
        bits.iter()
            .filter(|(name, _)| self.has(name))
            .fold(self.or_zero("flags_rsvd") as u8, |acc, (_, bit)| acc | bit)
    }

    fn or_zero(&self, name: &str) -> u64 {
        self.get(name).unwrap_or(0)
    }
}

/// A memory operand `l2[addr]` or `host[addr]`.
struct Operand {
    is_host: bool,
    addr: u64,
    column: usize,
}

struct Cursor<'a> {
    tokens: Vec<Token<'a>>,
    pos: usize,
    line: usize,
    end_column: usize,
}

impl<'a> Cursor<'a> {
    fn error(&self, column: usize, message: String) -> AsmError {
        AsmError {
            line: self.line,
            column,
            message,
        }
    }

    fn peek(&self) -> Option<Token<'a>> {
        self.tokens.get(self.pos).copied()
    }

    /// "missing X" at the end of the line, else "expected X, found 'y'".
    fn expected(&self, what: &str) -> AsmError {
        match self.peek() {
            None => self.error(self.end_column, format!("missing {what}")),
            Some(t) => self.error(t.column, format!("expected {what}, found '{}'", t.tok)),
        }
    }

    fn ident(&mut self, what: &str) -> Result<(&'a str, usize), AsmError> {
        match self.peek() {
            Some(Token {
                tok: Tok::Ident(name),
                column,
            }) => {
                self.pos += 1;
                Ok((name, column))
            }
            _ => Err(self.expected(what)),
        }
    }

    fn punct(&mut self, p: &'static str, what: &str) -> Result<(), AsmError> {
        self.eat(p).then_some(()).ok_or_else(|| self.expected(what))
    }

    /// Consumes `p` if it comes next.
    fn eat(&mut self, p: &'static str) -> bool {
        let hit = matches!(self.peek(), Some(t) if t.tok == Tok::Punct(p));
        self.pos += usize::from(hit);
        hit
    }

    /// A number for `field`, checked against its width.
    fn field(&mut self, field: Field) -> Result<u64, AsmError> {
        match self.peek() {
            Some(Token {
                tok: Tok::Num(value),
                column,
            }) => {
                self.pos += 1;
                if field.fits(value) {
                    Ok(value)
                } else {
                    Err(self.error(
                        column,
                        format!(
                            "{} {value} does not fit in {} bits",
                            field.name, field.width
                        ),
                    ))
                }
            }
            _ => Err(self.expected(field.name)),
        }
    }

    fn end(&self) -> Result<(), AsmError> {
        match self.peek() {
            None => Ok(()),
            Some(t) => Err(self.error(
                t.column,
                format!("unexpected '{}' after the statement", t.tok),
            )),
        }
    }

    fn statement(&mut self) -> Result<Item, AsmError> {
        let (mnemonic, column) = self.ident("a mnemonic or directive")?;
        let lower = mnemonic.to_ascii_lowercase();
        let instr = match lower.as_str() {
            ".word" => return Ok(Item::Instr(self.field(WORD)?)),
            ".idle" => return Ok(Item::Idle(self.field(IDLE)? as u32)),
            ".write" => {
                let offset = self.field(OFFSET)? as u32;
                self.punct(",", "',' before the register value")?;
                let value = self.field(VALUE)? as u32;
                return Ok(Item::RegWrite { offset, value });
            }
            "memset" => self.memset()?,
            "memcpy" => self.memcpy()?,
            "gemv" => Instr::Gemv(self.mat("gemv")?),
            "gemm" => Instr::Gemm(self.mat("gemm")?),
            _ => match lower.strip_prefix("cvo.") {
                Some(func) => {
                    let func = CvoFunc::from_name(func).ok_or_else(|| {
                        self.error(column, format!("unknown cvo function '{func}'"))
                    })?;
                    self.cvo(func)?
                }
                None if lower == "cvo" => {
                    return Err(self.error(
                        column,
                        "cvo needs a function: cvo.exp, cvo.scale, ...".into(),
                    ))
                }
                None => return Err(self.error(column, format!("unknown mnemonic '{mnemonic}'"))),
            },
        };
        Ok(Item::Instr(instr.encode()))
    }

    /// `l2[addr]` or `host[addr]`; `addr` is checked against `field`.
    fn operand(&mut self, field: Field, role: &str) -> Result<Operand, AsmError> {
        let what = format!("{role} l2[..] or host[..]");
        let (memory, column) = self.ident(&what)?;
        let is_host = match memory.to_ascii_lowercase().as_str() {
            "l2" => false,
            "host" => true,
            _ => return Err(self.error(column, format!("expected {what}, found '{memory}'"))),
        };
        self.punct("[", "'['")?;
        let addr = self.field(field)?;
        self.punct("]", "']'")?;
        Ok(Operand {
            is_host,
            addr,
            column,
        })
    }

    /// An `l2[addr]` operand.
    fn l2_operand(&mut self, field: Field, role: &str) -> Result<u64, AsmError> {
        let op = self.operand(field, role)?;
        if op.is_host {
            return Err(self.error(op.column, format!("the {role} must be in l2")));
        }
        Ok(op.addr)
    }

    /// `l2[dest] <- l2[src]` (GEMV, GEMM, CVO).
    fn l2_operands(&mut self, dest: Field, src: Field) -> Result<(u64, u64), AsmError> {
        let dest = self.l2_operand(dest, "destination")?;
        self.punct("<-", "'<-'")?;
        let src = self.l2_operand(src, "source")?;
        Ok((dest, src))
    }

    /// Trailing options in any order, each optionally after a comma.
    fn options(&mut self, mnemonic: &str, allowed: &[Opt]) -> Result<Opts, AsmError> {
        let mut given = Opts(Vec::new());
        while self.peek().is_some() {
            let comma = self.eat(",");
            if comma && self.peek().is_none() {
                return Err(self.expected("an option after ','"));
            }
            let (name, column) = self.ident("an option")?;
            let opt = allowed
                .iter()
                .find(|o| o.name().eq_ignore_ascii_case(name))
                .ok_or_else(|| {
                    self.error(column, format!("unknown option '{name}' for {mnemonic}"))
                })?;
            if given.has(opt.name()) {
                return Err(self.error(column, format!("option '{}' given twice", opt.name())));
            }
            let value = match opt {
                Opt::Flag(_) if self.eat("=") => {
                    return Err(
                        self.error(column, format!("option '{}' takes no value", opt.name()))
                    )
                }
                Opt::Flag(_) => 1,
                Opt::Value(name, field) => {
                    self.punct("=", &format!("'=' after {name}"))?;
                    self.field(*field)?
                }
            };
            given.0.push((opt.name(), value));
        }
        Ok(given)
    }

    /// The value of a required `name=` option.
    fn required(&self, opts: &Opts, name: &str) -> Result<u64, AsmError> {
        opts.get(name)
            .ok_or_else(|| self.error(self.end_column, format!("missing {name}=")))
    }

    fn memset(&mut self) -> Result<Instr, AsmError> {
        use layout::memset as f;
        let (table, column) = self.ident("fmap[..] or weight[..]")?;
        let dest_cache = match table.to_ascii_lowercase().as_str() {
            "fmap" => ShapeTable::Fmap,
            "weight" => ShapeTable::Weight,
            _ => {
                return Err(self.error(column, format!("expected fmap or weight, found '{table}'")))
            }
        };
        self.punct("[", "'['")?;
        let dest_addr = self.field(f::DEST_ADDR)?;
        self.punct("]", "']'")?;
        self.punct("=", "'='")?;
        self.punct("(", "'('")?;
        let a = self.field(f::A_VALUE)?;
        self.punct(",", "','")?;
        let b = self.field(f::B_VALUE)?;
        self.punct(",", "','")?;
        let c = self.field(f::C_VALUE)?;
        self.punct(")", "')'")?;
        let opts = self.options("memset", &[Opt::Value("rsvd", f::RESERVED)])?;
        Ok(Instr::Memset(Memset {
            dest_cache,
            dest_addr: dest_addr as u8,
            a_value: a as u16,
            b_value: b as u16,
            c_value: c as u16,
            reserved: opts.or_zero("rsvd") as u8,
        }))
    }

    fn memcpy(&mut self) -> Result<Instr, AsmError> {
        use layout::memcpy as f;
        let dest = self.operand(f::DEST_ADDR, "destination")?;
        self.punct("<-", "'<-'")?;
        let src = self.operand(f::SRC_ADDR, "source")?;
        if dest.is_host && src.is_host {
            return Err(self.error(
                src.column,
                "memcpy host -> host is illegal (write it as .word)".into(),
            ));
        }
        let opts = self.options(
            "memcpy",
            &[
                Opt::Value("shape", f::SHAPE_PTR_ADDR),
                Opt::Flag("async"),
                Opt::Value("aux", f::AUX_ADDR),
            ],
        )?;
        Ok(Instr::Memcpy(Memcpy {
            from_device: src.is_host,
            to_device: dest.is_host,
            dest_addr: dest.addr as u32,
            src_addr: src.addr as u32,
            aux_addr: opts.or_zero("aux") as u32,
            shape_ptr_addr: self.required(&opts, "shape")? as u8,
            async_: opts.has("async"),
        }))
    }

    fn mat(&mut self, mnemonic: &str) -> Result<MatOp, AsmError> {
        use layout::mat as f;
        let (dest, src) = self.l2_operands(f::DEST_REG, f::SRC_ADDR)?;
        let opts = self.options(
            mnemonic,
            &[
                Opt::Value("fmap", f::SHAPE_PTR_ADDR),
                Opt::Value("weight", f::SIZE_PTR_ADDR),
                Opt::Value("lanes", f::PARALLEL_LANE),
                Opt::Flag("findemax"),
                Opt::Flag("accm"),
                Opt::Flag("w_scale"),
                Opt::Value("flags_rsvd", MAT_FLAGS_RSVD),
                Opt::Value("rsvd", f::RESERVED),
            ],
        )?;
        let flags = opts.flags(&[
            ("findemax", f::FLAG_FINDEMAX),
            ("accm", f::FLAG_ACCM),
            ("w_scale", f::FLAG_W_SCALE),
        ]);
        Ok(MatOp {
            dest_reg: dest as u32,
            src_addr: src as u32,
            flags,
            size_ptr_addr: self.required(&opts, "weight")? as u8,
            shape_ptr_addr: self.required(&opts, "fmap")? as u8,
            parallel_lane: opts.or_zero("lanes") as u8,
            reserved: opts.or_zero("rsvd") as u8,
        })
    }

    fn cvo(&mut self, func: CvoFunc) -> Result<Instr, AsmError> {
        use layout::cvo as f;
        let (dst, src) = self.l2_operands(f::DST_ADDR, f::SRC_ADDR)?;
        let mnemonic = format!("cvo.{}", func.name());
        let opts = self.options(
            &mnemonic,
            &[
                Opt::Value("len", f::LENGTH),
                Opt::Flag("sub_emax"),
                Opt::Flag("recip_scale"),
                Opt::Flag("accm"),
                Opt::Value("flags_rsvd", CVO_FLAGS_RSVD),
                Opt::Flag("async"),
            ],
        )?;
        let flags = opts.flags(&[
            ("sub_emax", f::FLAG_SUB_EMAX),
            ("recip_scale", f::FLAG_RECIP_SCALE),
            ("accm", f::FLAG_ACCM),
        ]);
        Ok(Instr::Cvo(Cvo {
            func,
            src_addr: src as u32,
            dst_addr: dst as u32,
            length: self.required(&opts, "len")? as u16,
            flags,
            async_: opts.has("async"),
        }))
    }
}
