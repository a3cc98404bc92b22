//! Shrinking: a failing case cut down to a few instructions that still fail
//! the same way (docs/harness.md, "Shrinking").
//!
//! "The same way" is the failure's [`Signature`]: the check, the engine and
//! the field. Sequence numbers, addresses and values may change as the
//! program shrinks; the kind of bug may not. The images (L2 and host seeds)
//! and the generator options stay as they were.
//!
//! Two passes, repeated until neither changes anything or the budget of runs
//! is spent:
//!
//! 1. **Drop items** (delta debugging): remove chunks of half the program,
//!    then quarters, ... then single items, keeping each removal after which
//!    the case still fails. Chunks are tried from the end of the program, so
//!    the sequence numbers of the instructions before them stay put.
//! 2. **Simplify items**: each instruction first to its plainest form (every
//!    field zero but the opcode, the direction, the table, the function, with
//!    `async` set), else field by field: `async` set, every other field as
//!    small as it can be while the case still fails (binary search: shape
//!    values and lengths, addresses, reserved bits, `aux_addr`, flags).
//!    Idle gaps get shorter, register writes write zero.

use crate::scoreboard::{run_case, Mismatch};
use crate::stimulus::TestCase;
use crate::triage::signature::Signature;
use pccx_golden::asm::{Item, Program};
use pccx_golden::isa::{self, layout, layout::Field, Decoded, Instr};
use pccx_golden::model::{NpuModel, ShapeTable, SHAPE_ENTRIES};
use pccx_golden::{Golden, GoldenConfig};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

/// Makes a fresh DUT for each run (so that no run sees another's state, a
/// fault's counters included).
pub type DutFactory<'a> = dyn FnMut() -> Result<Box<dyn NpuModel>, String> + 'a;

/// How big a program is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ProgramSize {
    /// Items: instructions, idle gaps and register writes.
    pub items: usize,
    pub instructions: usize,
}

impl ProgramSize {
    pub fn of(program: &Program) -> ProgramSize {
        ProgramSize {
            items: program.items.len(),
            instructions: program
                .items
                .iter()
                .filter(|i| matches!(i, Item::Instr(_)))
                .count(),
        }
    }
}

impl std::fmt::Display for ProgramSize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = |n: usize| if n == 1 { "" } else { "s" };
        write!(
            f,
            "{} instruction{} ({} item{})",
            self.instructions,
            s(self.instructions),
            self.items,
            s(self.items)
        )
    }
}

/// Limits of one shrink.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShrinkOptions {
    /// Most cases to run, the first (which confirms the failure) included.
    pub max_runs: usize,
    /// Stop starting new runs after this long.
    pub max_time: Duration,
}

impl Default for ShrinkOptions {
    fn default() -> Self {
        ShrinkOptions {
            max_runs: 3000,
            max_time: Duration::from_secs(120),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct ShrinkResult {
    /// The smallest failing case found: the original's images and options
    /// with a smaller program.
    pub case: TestCase,
    /// Its first mismatch (of the same signature as the original's).
    pub mismatch: Mismatch,
    pub signature: Signature,
    pub before: ProgramSize,
    pub after: ProgramSize,
    /// Cases run, the confirming first run included.
    pub runs: usize,
    /// The budget ran out before the shrinker had tried everything: a
    /// smaller program may exist.
    pub exhausted: bool,
}

/// Shrinks `case`, which must fail on `make_dut()`'s models against the
/// golden reference, with the default budget.
pub fn shrink(case: &TestCase, make_dut: &mut DutFactory) -> Result<ShrinkResult, String> {
    shrink_with(case, make_dut, &ShrinkOptions::default())
}

/// [`shrink`] with a budget. An error: the case does not fail to begin with
/// (or no longer: a flaky DUT), or a DUT could not be made.
pub fn shrink_with(
    case: &TestCase,
    make_dut: &mut DutFactory,
    options: &ShrinkOptions,
) -> Result<ShrinkResult, String> {
    let mut reference = Golden::new(GoldenConfig {
        l2_words: case.options.l2_words,
    });
    shrink_against(case, &mut reference, make_dut, options)
}

/// [`shrink_with`] against a given reference (the campaign's, so that the
/// shrinker compares exactly as the campaign did); it is reset for each run.
pub fn shrink_against(
    case: &TestCase,
    reference: &mut dyn NpuModel,
    make_dut: &mut DutFactory,
    options: &ShrinkOptions,
) -> Result<ShrinkResult, String> {
    let mut s = Shrinker {
        base: case.clone(),
        make_dut,
        reference,
        options: *options,
        started: Instant::now(),
        runs: 0,
        exhausted: false,
        target: None,
        best: None,
    };
    let first = match s.run(&case.program)? {
        RunResult::Mismatch(m) => *m,
        RunResult::Matched => return Err("the case does not fail: nothing to shrink".into()),
        RunResult::Error(e) => {
            return Err(format!(
                "the case stops with an infrastructure error, not a mismatch: {e}"
            ))
        }
    };
    s.target = Some(Signature::of(&first));
    s.best = Some(first);
    let mut items = case.program.items.clone();
    loop {
        let dropped = s.drop_items(&mut items)?;
        let simplified = s.simplify_items(&mut items)?;
        if !(dropped || simplified) || s.exhausted {
            break;
        }
    }
    let program = Program { items };
    Ok(ShrinkResult {
        before: ProgramSize::of(&case.program),
        after: ProgramSize::of(&program),
        case: TestCase {
            program,
            ..case.clone()
        },
        mismatch: s.best.take().expect("set by the first run"),
        signature: s.target.take().expect("set by the first run"),
        runs: s.runs,
        exhausted: s.exhausted,
    })
}

enum RunResult {
    Matched,
    Mismatch(Box<Mismatch>),
    Error(String),
}

struct Shrinker<'a, 'b> {
    base: TestCase,
    make_dut: &'a mut DutFactory<'b>,
    reference: &'a mut dyn NpuModel,
    options: ShrinkOptions,
    started: Instant,
    runs: usize,
    exhausted: bool,
    /// The signature every accepted program must fail with.
    target: Option<Signature>,
    /// The mismatch of the last accepted program.
    best: Option<Mismatch>,
}

impl Shrinker<'_, '_> {
    fn run(&mut self, program: &Program) -> Result<RunResult, String> {
        self.runs += 1;
        let case = TestCase {
            program: program.clone(),
            ..self.base.clone()
        };
        let mut dut = (self.make_dut)().map_err(|e| format!("cannot make a DUT: {e}"))?;
        let reference = &mut *self.reference;
        let ran = catch_unwind(AssertUnwindSafe(|| run_case(&case, reference, &mut *dut)));
        Ok(match ran {
            Ok(Ok(outcome)) => match outcome.first_mismatch {
                Some(m) => RunResult::Mismatch(Box::new(m)),
                None => RunResult::Matched,
            },
            Ok(Err(e)) => RunResult::Error(e.to_string()),
            Err(_) => RunResult::Error("a model panicked".into()),
        })
    }

    /// Whether `items` still fail with the target signature (then they are
    /// the new best). `false` without running once the budget is spent.
    fn still_fails(&mut self, items: &[Item]) -> Result<bool, String> {
        if self.runs >= self.options.max_runs || self.started.elapsed() >= self.options.max_time {
            self.exhausted = true;
            return Ok(false);
        }
        let program = Program {
            items: items.to_vec(),
        };
        match self.run(&program)? {
            RunResult::Mismatch(m) if Some(Signature::of(&m)) == self.target => {
                self.best = Some(*m);
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// Delta debugging over the items: chunks of len/2, len/4, ... 1, each
    /// size tried from the end; single items until no removal works.
    fn drop_items(&mut self, items: &mut Vec<Item>) -> Result<bool, String> {
        let mut changed = false;
        let mut chunk = (items.len() / 2).max(1);
        loop {
            let mut progress = false;
            let mut end = items.len();
            while end > 0 && !self.exhausted {
                let start = end.saturating_sub(chunk);
                let mut candidate = items[..start].to_vec();
                candidate.extend_from_slice(&items[end..]);
                if self.still_fails(&candidate)? {
                    *items = candidate;
                    progress = true;
                    changed = true;
                }
                end = start.min(items.len());
            }
            if self.exhausted || items.is_empty() || (chunk == 1 && !progress) {
                return Ok(changed);
            }
            chunk = (chunk / 2).max(1);
        }
    }

    /// The fmap entries the program uses renumbered 0, 1, ... in order of
    /// first use, by swapping two entry numbers in every MEMSET of the fmap
    /// table, every MEMCPY and every GEMV/GEMM at once (which changes nothing the program
    /// does, as long as the case still fails).
    fn renumber_entries(&mut self, items: &mut [Item]) -> Result<bool, String> {
        let mut changed = false;
        for target in 0..SHAPE_ENTRIES as u8 {
            let order = fmap_entries_in_use(items);
            let Some(&entry) = order.get(usize::from(target)) else {
                break;
            };
            if entry == target || self.exhausted {
                continue;
            }
            let swapped: Vec<Item> = items
                .iter()
                .map(|item| match *item {
                    Item::Instr(w) => Item::Instr(swap_fmap_entries(w, entry, target)),
                    other => other,
                })
                .collect();
            if self.still_fails(&swapped)? {
                items.copy_from_slice(&swapped);
                changed = true;
            }
        }
        Ok(changed)
    }

    /// Each item in turn made as plain as it can be.
    fn simplify_items(&mut self, items: &mut [Item]) -> Result<bool, String> {
        let mut changed = self.renumber_entries(items)?;
        for i in 0..items.len() {
            if self.exhausted {
                break;
            }
            changed |= match items[i] {
                Item::Instr(_) => self.simplify_instr(items, i)?,
                Item::Idle(cycles) if cycles > 1 => {
                    let smallest =
                        self.smallest(items, i, 1, u64::from(cycles), |_, v| Item::Idle(v as u32))?;
                    smallest < u64::from(cycles)
                }
                Item::RegWrite { offset, value } if value != 0 => {
                    self.try_item(items, i, Item::RegWrite { offset, value: 0 })?
                }
                _ => false,
            };
        }
        Ok(changed)
    }

    /// Puts `item` at `i` if the case still fails with it.
    fn try_item(&mut self, items: &mut [Item], i: usize, item: Item) -> Result<bool, String> {
        let old = std::mem::replace(&mut items[i], item);
        if self.still_fails(items)? {
            Ok(true)
        } else {
            items[i] = old;
            Ok(false)
        }
    }

    fn simplify_instr(&mut self, items: &mut [Item], i: usize) -> Result<bool, String> {
        let Item::Instr(word) = items[i] else {
            unreachable!("called on instructions")
        };
        let plain = plainest(word);
        if plain != word && self.try_item(items, i, Item::Instr(plain))? {
            return Ok(true);
        }
        let mut changed = false;
        for field in isa::layout_of(isa::opcode_bits(word)) {
            let Item::Instr(now) = items[i] else {
                unreachable!()
            };
            let value = field.get(now);
            if is_async(field) {
                if value == 0 {
                    changed |= self.try_item(items, i, Item::Instr(with(now, field, 1)))?;
                }
                continue;
            }
            if value == 0 || is_identity(field) {
                continue;
            }
            let smallest = self.smallest(items, i, 0, value, |item, v| match item {
                Item::Instr(w) => Item::Instr(with(w, field, v)),
                other => other,
            })?;
            changed |= smallest < value;
        }
        Ok(changed)
    }

    /// The smallest value in `lo..=value` that `set` can give item `i` with
    /// the case still failing, found by binary search (as if failing were
    /// monotonic in the value; where it is not, the value found still
    /// fails). Leaves the item at that value and returns it.
    fn smallest(
        &mut self,
        items: &mut [Item],
        i: usize,
        lo: u64,
        value: u64,
        set: impl Fn(Item, u64) -> Item,
    ) -> Result<u64, String> {
        let original = items[i];
        if self.try_item(items, i, set(original, lo))? {
            return Ok(lo);
        }
        // Invariant: `hi` fails (the item holds it), `lo` does not.
        let (mut lo, mut hi) = (lo, value);
        while hi - lo > 1 && !self.exhausted {
            let mid = lo + (hi - lo) / 2;
            if self.try_item(items, i, set(original, mid))? {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        Ok(hi)
    }
}

/// The fmap entries that MEMSETs write and MEMCPYs, GEMVs and GEMMs read,
/// in order of first use.
fn fmap_entries_in_use(items: &[Item]) -> Vec<u8> {
    let mut order = Vec::new();
    for item in items {
        let Item::Instr(word) = *item else { continue };
        let entry = match isa::decode(word) {
            Decoded::Legal(Instr::Memset(m)) if m.dest_cache == ShapeTable::Fmap => m.dest_addr,
            Decoded::Legal(Instr::Memcpy(m)) => m.shape_ptr_addr,
            Decoded::Legal(Instr::Gemv(m) | Instr::Gemm(m)) => m.shape_ptr_addr,
            _ => continue,
        };
        if !order.contains(&entry) {
            order.push(entry);
        }
    }
    order
}

/// `word` with fmap entry numbers `a` and `b` swapped, if it is a MEMSET of
/// the fmap table, a MEMCPY, a GEMV or a GEMM.
fn swap_fmap_entries(word: u64, a: u8, b: u8) -> u64 {
    let field = match isa::decode(word) {
        Decoded::Legal(Instr::Memset(m)) if m.dest_cache == ShapeTable::Fmap => {
            layout::memset::DEST_ADDR
        }
        Decoded::Legal(Instr::Memcpy(_)) => layout::memcpy::SHAPE_PTR_ADDR,
        Decoded::Legal(Instr::Gemv(_) | Instr::Gemm(_)) => layout::mat::SHAPE_PTR_ADDR,
        _ => return word,
    };
    let v = field.get(word) as u8;
    let swapped = match v {
        v if v == a => b,
        v if v == b => a,
        v => v,
    };
    with(word, &field, u64::from(swapped))
}

/// `word` with `field` set to `value`.
fn with(word: u64, field: &Field, value: u64) -> u64 {
    (word & !field.put(u64::MAX)) | field.put(value)
}

fn is_async(field: &Field) -> bool {
    *field == layout::memcpy::ASYNC || *field == layout::cvo::ASYNC
}

/// The fields that say what an instruction is rather than what it works
/// on: the plainest form keeps them.
fn is_identity(field: &Field) -> bool {
    [
        layout::memcpy::FROM_DEVICE,
        layout::memcpy::TO_DEVICE,
        layout::memset::DEST_CACHE,
        layout::cvo::CVO_FUNC,
    ]
    .contains(field)
}

/// The word with every field zero but the opcode and the identity fields,
/// and `async` set.
fn plainest(word: u64) -> u64 {
    isa::layout_of(isa::opcode_bits(word))
        .iter()
        .fold(word, |w, f| {
            if is_identity(f) {
                w
            } else if is_async(f) {
                with(w, f, 1)
            } else {
                with(w, f, 0)
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::faults::{Fault, Faulty};
    use crate::stimulus::{GenOptions, OpWeights};
    use pccx_golden::asm::{disasm, parse_program};
    use pccx_golden::model::ErrorCode;

    const L2_WORDS: u32 = 4096;

    fn golden() -> Golden {
        Golden::new(GoldenConfig { l2_words: L2_WORDS })
    }

    fn faulty_golden(fault: Fault) -> impl FnMut() -> Result<Box<dyn NpuModel>, String> {
        move || Ok(Box::new(Faulty::new(golden(), fault)) as Box<dyn NpuModel>)
    }

    #[test]
    fn the_plainest_word_keeps_what_the_instruction_is() {
        let copy = parse_program("memcpy host[77] <- l2[5], shape=3, aux=0x99\n").unwrap();
        let Item::Instr(word) = copy.items[0] else {
            panic!()
        };
        assert_eq!(
            disasm(plainest(word)),
            "memcpy host[0] <- l2[0], shape=0, async"
        );
        assert_eq!(plainest(0x5123_4567_89ab_cdef), 0x5000_0000_0000_0000);
        assert_eq!(
            with(0xffff_ffff_ffff_ffff, &layout::memset::C_VALUE, 0),
            0xffff_ffff_fff0_000f
        );
    }

    #[test]
    fn swapping_entries_touches_fmap_memsets_copies_and_matrix_ops_only() {
        let p = parse_program(
            "memset fmap[7] = (1, 1, 1), rsvd=3\n\
             memset weight[7] = (1, 1, 1)\n\
             memcpy l2[1] <- host[2], shape=7, async\n\
             memcpy l2[1] <- host[2], shape=0\n\
             memcpy l2[1] <- host[2], shape=5\n\
             gemv l2[1] <- l2[2], fmap=7, weight=7\n\
             gemm l2[1] <- l2[2], fmap=9, weight=0\n",
        )
        .unwrap();
        assert_eq!(fmap_entries_in_use(&p.items), [7, 0, 5, 9]);
        let swapped: Vec<String> = p
            .items
            .iter()
            .map(|i| match *i {
                Item::Instr(w) => disasm(swap_fmap_entries(w, 7, 0)),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(
            swapped,
            [
                "memset fmap[0] = (1, 1, 1), rsvd=0x3",
                "memset weight[7] = (1, 1, 1)",
                "memcpy l2[1] <- host[2], shape=0, async",
                "memcpy l2[1] <- host[2], shape=7",
                "memcpy l2[1] <- host[2], shape=5",
                "gemv l2[1] <- l2[2], fmap=0, weight=7, lanes=0",
                "gemm l2[1] <- l2[2], fmap=9, weight=0, lanes=0",
            ]
        );
    }

    /// A generated program with the fault at an address one of its copies
    /// writes late in the program: the shrunk program is the copy and the
    /// MEMSET that gives it a shape, with the smallest shape that still
    /// reaches the address.
    #[test]
    fn an_address_fault_shrinks_to_a_memset_and_a_copy() {
        // Slice-1 programs: MEMSETs and copies only, as when this was written.
        let options = GenOptions {
            weights: OpWeights::SLICE1,
            ..GenOptions::new(40, L2_WORDS, 4)
        };
        let case = TestCase::generate(11, &options);
        let addr = last_l2_write(&case);
        let mut make = faulty_golden(Fault::L2DataAt { addr, bit: 40 });
        let r = shrink(&case, &mut make).unwrap();
        assert_eq!(
            r.signature.to_string(),
            "l2-writes/MEM/data",
            "{}",
            r.mismatch
        );
        assert_eq!(r.before.instructions, 40);
        assert!(r.after.instructions <= 3, "{}", format_items(&r.case));
        assert!(!r.exhausted);
        // Shrunk, the case still fails the same way.
        let mut dut = make().unwrap();
        let m = run_case(&r.case, &mut golden(), &mut *dut)
            .unwrap()
            .first_mismatch
            .unwrap();
        assert_eq!(Signature::of(&m), r.signature);
        assert_eq!(m, r.mismatch);
    }

    /// The last L2 address golden writes on `case` (any instruction's).
    fn last_l2_write(case: &TestCase) -> u32 {
        let mut g = golden();
        g.reset().unwrap();
        g.write_l2(0, &case.l2_image()).unwrap();
        let mut last = None;
        for item in &case.program.items {
            if let Item::Instr(word) = *item {
                g.issue(word).unwrap();
            }
            for e in g.take_events() {
                if let pccx_golden::model::Event::L2Write { addr, .. } = e {
                    last = Some(addr);
                }
            }
        }
        last.expect("the program writes L2")
    }

    fn format_items(case: &TestCase) -> String {
        pccx_golden::asm::format_program(&case.program)
    }

    /// A fault on one error code, in a program whose first illegal opcode
    /// comes late: the shrunk program is that word alone, made plain.
    #[test]
    fn an_error_code_fault_shrinks_to_one_illegal_word() {
        let options = GenOptions::new(40, L2_WORDS, 4);
        let is_illegal_opcode =
            |item: &Item| matches!(item, Item::Instr(w) if isa::opcode_bits(*w) >= 5);
        let case = (0..200)
            .map(|seed| TestCase::generate(seed, &options))
            .find(|c| {
                let instrs: Vec<&Item> = c
                    .program
                    .items
                    .iter()
                    .filter(|i| matches!(i, Item::Instr(_)))
                    .collect();
                let first = instrs.iter().position(|i| is_illegal_opcode(i));
                first.is_some_and(|p| p >= 20)
            })
            .expect("a seed below 200 whose first illegal opcode is seq 20 or later");
        let ill = ErrorCode::IllegalOpcode.bits();
        let mut make = faulty_golden(Fault::RetireErrIf { err: ill, xor: 1 });
        let r = shrink(&case, &mut make).unwrap();
        assert_eq!(r.signature.to_string(), "retire-err/decoder/err");
        let plain_illegal_opcode = |w: u64| isa::opcode_bits(w) >= 5 && layout::BODY.get(w) == 0;
        assert!(
            matches!(r.case.program.items[..], [Item::Instr(w)] if plain_illegal_opcode(w)),
            "not a plain illegal opcode alone:\n{}",
            format_items(&r.case)
        );
    }

    #[test]
    fn a_case_that_matches_is_not_shrunk() {
        let case = TestCase::generate(1, &GenOptions::new(10, L2_WORDS, 4));
        let mut make = || Ok(Box::new(golden()) as Box<dyn NpuModel>);
        let e = shrink(&case, &mut make).unwrap_err();
        assert!(e.contains("does not fail"), "{e}");
    }

    #[test]
    fn the_budget_stops_the_shrinker_with_a_failing_case() {
        let case = TestCase::generate(11, &GenOptions::new(40, L2_WORDS, 4));
        let mut make = faulty_golden(Fault::RetireErr { nth: 0, xor: 1 });
        let options = ShrinkOptions {
            max_runs: 4,
            ..ShrinkOptions::default()
        };
        let r = shrink_with(&case, &mut make, &options).unwrap();
        assert!(r.exhausted);
        assert_eq!(r.runs, 4);
        assert!(r.after.items < r.before.items, "the first halving worked");
        assert_eq!(r.signature.to_string(), "retire-err/MEMSET/err");
    }
}
