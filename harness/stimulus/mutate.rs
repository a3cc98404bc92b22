//! Program mutations for coverage-steered campaigns: new programs made from
//! programs that reached something new (splice, field edits, a flood of
//! every engine, gaps removed) and backdoor preloads (docs/coverage.md,
//! "Steering").
//!
//! Every mutation yields a program both models accept: any instruction word
//! is legal input (an illegal one retires with its error code), so the
//! mutations need not keep instructions legal, only programs bounded.

use super::{Preload, Rng};
use pccx_golden::asm::{Item, Program};
use pccx_golden::isa::{self, CvoFunc, Decoded, Instr, Opcode};
use pccx_golden::model::{ShapeEntry, ShapeTable, SHAPE_ENTRIES};

/// The ways a program can be mutated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mutation {
    /// The head of one program and the tail of another.
    Splice,
    /// A few instructions with one field changed: a flag, `async`, the
    /// CVO function, the MEMSET table, a length.
    EditFields,
    /// Every engine's last instruction of the program, FIFO-depth + 1
    /// times each, round robin (MEMSETs last in each round) and back to
    /// back: many FIFOs full with their engines busy at once.
    Flood,
    /// Every idle gap removed: more instructions in flight at once.
    Squeeze,
}

impl Mutation {
    pub const ALL: [Mutation; 4] = [
        Mutation::Splice,
        Mutation::EditFields,
        Mutation::Flood,
        Mutation::Squeeze,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Mutation::Splice => "splice",
            Mutation::EditFields => "edit-fields",
            Mutation::Flood => "flood",
            Mutation::Squeeze => "squeeze",
        }
    }
}

/// `program` mutated by `how` (`other` is the second parent of a splice),
/// at most `max_items` items long.
pub fn mutate(
    how: Mutation,
    program: &Program,
    other: &Program,
    fifo_depth: u32,
    max_items: usize,
    rng: &mut Rng,
) -> Program {
    let mut items = match how {
        Mutation::Splice => splice(&program.items, &other.items, rng),
        Mutation::EditFields => edit_fields(&program.items, rng),
        Mutation::Flood => flood(&program.items, fifo_depth, rng),
        Mutation::Squeeze => program
            .items
            .iter()
            .copied()
            .filter(|i| !matches!(i, Item::Idle(_)))
            .collect(),
    };
    items.truncate(max_items);
    Program { items }
}

fn splice(a: &[Item], b: &[Item], rng: &mut Rng) -> Vec<Item> {
    let cut_a = rng.below(a.len() as u64 + 1) as usize;
    let cut_b = rng.below(b.len() as u64 + 1) as usize;
    a[..cut_a].iter().chain(&b[cut_b..]).copied().collect()
}

fn edit_fields(items: &[Item], rng: &mut Rng) -> Vec<Item> {
    let mut out = items.to_vec();
    let instrs: Vec<usize> = (0..out.len())
        .filter(|&i| matches!(out[i], Item::Instr(_)))
        .collect();
    if instrs.is_empty() {
        return out;
    }
    for _ in 0..rng.range(1, 4) {
        let at = instrs[rng.below(instrs.len() as u64) as usize];
        if let Item::Instr(word) = out[at] {
            out[at] = Item::Instr(edit_word(word, rng));
        }
    }
    out
}

/// One field of a legal instruction changed (an illegal word is left as
/// it is: its error does not depend on its fields).
fn edit_word(word: u64, rng: &mut Rng) -> u64 {
    let Decoded::Legal(mut instr) = isa::decode(word) else {
        return word;
    };
    match &mut instr {
        Instr::Gemv(op) | Instr::Gemm(op) => op.flags ^= 1 << rng.below(3),
        Instr::Memcpy(m) => m.async_ = !m.async_,
        Instr::Memset(m) => {
            m.dest_cache = match m.dest_cache {
                ShapeTable::Fmap => ShapeTable::Weight,
                ShapeTable::Weight => ShapeTable::Fmap,
            }
        }
        Instr::Cvo(c) => match rng.below(4) {
            0 => c.func = CvoFunc::ALL[rng.below(CvoFunc::ALL.len() as u64) as usize],
            1 => c.flags ^= 1 << rng.below(3),
            2 => c.async_ = !c.async_,
            _ => c.length = [0, 1, 7, 8, 9][rng.below(5) as usize],
        },
    }
    instr.encode()
}

fn flood(items: &[Item], fifo_depth: u32, rng: &mut Rng) -> Vec<Item> {
    // Per engine, the last legal instruction of the program: a MAT op then
    // comes after the MEMSETs of its shapes, so it finds them.
    let mut per_engine: Vec<(Opcode, u64)> = Vec::new();
    for item in items {
        if let Item::Instr(word) = *item {
            if let Decoded::Legal(instr) = isa::decode(word) {
                let op = instr.opcode();
                match per_engine.iter_mut().find(|(o, _)| *o == op) {
                    Some(slot) => slot.1 = word,
                    None => per_engine.push((op, word)),
                }
            }
        }
    }
    // MEMSETs last: a MEMSET is over in a cycle or two, so its FIFO is
    // full only while the others are already.
    per_engine.sort_by_key(|&(op, _)| op == Opcode::Memset);
    let at = rng.below(items.len() as u64 + 1) as usize;
    let mut out: Vec<Item> = items[..at]
        .iter()
        .copied()
        .filter(|i| !matches!(i, Item::Idle(_)))
        .collect();
    for _ in 0..=fifo_depth {
        out.extend(per_engine.iter().map(|&(_, w)| Item::Instr(w)));
    }
    out.extend_from_slice(&items[at..]);
    out
}

/// Shape-table entries and e_max set by backdoor before a program: a few
/// entries of either table with small shapes (each dimension 0-64, so
/// that a MAT op that reads one runs, or fails on a shape check), and e_max
/// half the time.
pub fn random_preload(rng: &mut Rng) -> Preload {
    let tables = (0..rng.range(1, 6))
        .map(|_| {
            let table = if rng.percent(50) {
                ShapeTable::Fmap
            } else {
                ShapeTable::Weight
            };
            let index = rng.below(SHAPE_ENTRIES as u64) as u8;
            let dim = |rng: &mut Rng| rng.range(0, 64) as u16;
            let entry = ShapeEntry {
                a: dim(rng),
                b: dim(rng),
                c: dim(rng),
            };
            (table, index, entry)
        })
        .collect();
    let e_max = rng.percent(50).then(|| rng.next_u64() as u16);
    Preload { tables, e_max }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program() -> Program {
        // Built from encoded instructions so the test does not depend on
        // the assembler's syntax.
        let memset = Instr::Memset(isa::Memset {
            dest_cache: ShapeTable::Weight,
            dest_addr: 1,
            a_value: 16,
            b_value: 8,
            c_value: 0,
            reserved: 0,
        });
        let cvo = Instr::Cvo(isa::Cvo {
            func: CvoFunc::Exp,
            src_addr: 0x10,
            dst_addr: 0x200,
            length: 8,
            flags: 0,
            async_: false,
        });
        Program {
            items: vec![
                Item::Instr(memset.encode()),
                Item::Idle(20),
                Item::Instr(cvo.encode()),
                Item::Idle(5),
                Item::Instr(memset.encode()),
            ],
        }
    }

    #[test]
    fn a_flood_repeats_every_engine_fifo_depth_plus_one_times_with_no_gaps() {
        let p = program();
        let mut rng = Rng::new(3);
        let out = mutate(Mutation::Flood, &p, &p, 4, 1000, &mut rng);
        let instrs = out
            .items
            .iter()
            .filter(|i| matches!(i, Item::Instr(_)))
            .count();
        // Three instructions of its own, and two engines (MEMSET, CVO) x 5.
        assert_eq!(instrs, 3 + 2 * 5);
    }

    #[test]
    fn squeeze_removes_every_gap_and_nothing_else() {
        let p = program();
        let out = mutate(Mutation::Squeeze, &p, &p, 4, 1000, &mut Rng::new(1));
        assert_eq!(out.items.len(), 3);
        assert!(out.items.iter().all(|i| matches!(i, Item::Instr(_))));
    }

    #[test]
    fn field_edits_change_words_but_keep_them_decodable_and_bounded() {
        let p = program();
        let mut changed = 0;
        for seed in 0..50 {
            let out = mutate(Mutation::EditFields, &p, &p, 4, 1000, &mut Rng::new(seed));
            assert_eq!(out.items.len(), p.items.len());
            changed += usize::from(out != p);
            for item in &out.items {
                if let Item::Instr(w) = item {
                    assert!(matches!(isa::decode(*w), Decoded::Legal(_)), "{w:#x}");
                }
            }
        }
        // Two edits of one field can undo each other, or set a length it had.
        assert!(changed > 30, "only {changed} of 50 edited programs differ");
        let long = mutate(Mutation::Splice, &p, &p, 4, 2, &mut Rng::new(9));
        assert!(long.items.len() <= 2);
    }

    #[test]
    fn preloads_stay_inside_the_tables() {
        for seed in 0..100 {
            let p = random_preload(&mut Rng::new(seed));
            assert!(!p.tables.is_empty());
            assert!(p
                .tables
                .iter()
                .all(|&(_, i, _)| usize::from(i) < SHAPE_ENTRIES));
        }
    }
}
