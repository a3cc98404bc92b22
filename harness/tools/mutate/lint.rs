//! Verilator's verdict on each mutant alone, found in batches: mutants applied together to one copy of hw/rtl and linted at once, a refused batch split until every refusal is that of one mutant linted alone.
//!
//! A lint costs about 0.65 s here whatever the number of mutants in it
//! (parsing and elaborating all of hw/rtl), and about 95 % of mutants
//! lint cleanly, so one lint per batch of 16 replaces 16. The verdicts keep
//! their meaning: "not compiling" is only ever said from a lint of that
//! mutant alone (with that lint's message), and "compiles" from a clean
//! lint of a set that holds it. That a mutant which lints cleanly among
//! others also does alone is what Verilator's checks being local gives;
//! docs/mutation.md records it checked on every site ("Linting in
//! batches"), and `--lint-batch 1` lints each mutant alone.

use std::collections::{BTreeSet, HashMap};
use std::sync::OnceLock;
use std::time::Instant;

use super::build::Builder;
use super::Mutant;

/// Mutants linted at once by default (`mutate --lint-batch`); the number
/// lives in `tools::mutants`, which builds without the RTL too, for the
/// command line's default.
pub const DEFAULT_BATCH: usize = crate::tools::mutants::DEFAULT_LINT_BATCH;

/// One mutant's lint verdict: `Err` holds the stage and Verilator's
/// message, as [`Builder::lint_alone`] gives them.
pub type LintVerdict = Result<(), (&'static str, String)>;

/// The lint verdicts of a set of mutants, each batch linted when one of
/// its mutants is first asked about (so a pool's workers share the work,
/// and the first results come after one lint, not after all of them).
pub struct LintBatches<'a> {
    builder: &'a Builder,
    batches: Vec<Batch>,
    /// Mutant id to (batch, position in it).
    place: HashMap<String, (usize, usize)>,
}

struct Batch {
    members: Vec<Mutant>,
    /// Each member's verdict and the seconds this batch's lints took.
    settled: OnceLock<(Vec<LintVerdict>, f64)>,
}

impl<'a> LintBatches<'a> {
    /// Batches of at most `size` of `mutants` (at least 1), as few as fit.
    /// Mutant k goes to batch `k mod B` (B batches in all), so that
    /// neighbours, which often share a line, land apart; else to the next
    /// batch with room and no mutant on its line; else it is linted alone.
    pub fn new(builder: &'a Builder, mutants: &[Mutant], size: usize) -> LintBatches<'a> {
        let batches: Vec<Batch> = group(mutants, size)
            .into_iter()
            .map(|members| Batch {
                members,
                settled: OnceLock::new(),
            })
            .collect();
        let place = batches
            .iter()
            .enumerate()
            .flat_map(|(b, batch)| {
                batch
                    .members
                    .iter()
                    .enumerate()
                    .map(move |(k, m)| (m.id(), (b, k)))
            })
            .collect();
        LintBatches {
            builder,
            batches,
            place,
        }
    }

    /// How many batches the mutants are in.
    pub fn batch_count(&self) -> usize {
        self.batches.len()
    }

    /// `mutant`'s verdict, and the seconds spent linting for it here (the
    /// whole batch's lints when this call ran them, 0 when another had). A
    /// mutant not given to [`LintBatches::new`] is linted alone.
    pub fn verdict(&self, mutant: &Mutant) -> (LintVerdict, f64) {
        let Some(&(b, k)) = self.place.get(&mutant.id()) else {
            let begin = Instant::now();
            let verdict = self.builder.lint_alone(mutant);
            return (verdict, begin.elapsed().as_secs_f64());
        };
        let mut ran = false;
        let (verdicts, seconds) = self.batches[b].settled.get_or_init(|| {
            ran = true;
            let begin = Instant::now();
            let members: Vec<&Mutant> = self.batches[b].members.iter().collect();
            let verdicts = settle(&members, &|set| self.builder.lint_together(set));
            (verdicts, begin.elapsed().as_secs_f64())
        });
        (verdicts[k].clone(), if ran { *seconds } else { 0.0 })
    }
}

/// `mutants` in batches of at most `size` (at least 1), as
/// [`LintBatches::new`] describes.
fn group(mutants: &[Mutant], size: usize) -> Vec<Vec<Mutant>> {
    let size = size.max(1);
    let count = mutants.len().div_ceil(size).max(1);
    let mut batches: Vec<Vec<Mutant>> = vec![Vec::new(); count];
    for (k, m) in mutants.iter().enumerate() {
        let fits = |b: &Vec<Mutant>| {
            b.len() < size && !b.iter().any(|o| o.file == m.file && o.line == m.line)
        };
        match (0..count)
            .map(|j| (k + j) % count)
            .find(|&b| fits(&batches[b]))
        {
            Some(b) => batches[b].push(m.clone()),
            None => batches.push(vec![m.clone()]),
        }
    }
    batches.retain(|b| !b.is_empty());
    batches
}

/// Each of `set`'s verdicts, by `lint` (Verilator on mutants applied
/// together): a set that lints cleanly is clean throughout; a single mutant's
/// lint is its verdict; a refused set is split, first the mutants on the
/// lines Verilator's errors name (each linted alone) from the rest, else in
/// halves.
pub fn settle(set: &[&Mutant], lint: &dyn Fn(&[&Mutant]) -> LintVerdict) -> Vec<LintVerdict> {
    let message = match lint(set) {
        Ok(()) => return vec![Ok(()); set.len()],
        Err(refused) if set.len() == 1 => return vec![Err(refused)],
        Err((_, message)) => message,
    };
    let named = error_lines(&message);
    let suspect: Vec<bool> = set
        .iter()
        .map(|m| named.contains(&(m.file.clone(), m.line)))
        .collect();
    let suspects = suspect.iter().filter(|&&s| s).count();
    let (first, second): (Vec<usize>, Vec<usize>) = if suspects == 0 || suspects == set.len() {
        let half = set.len() / 2;
        ((0..half).collect(), (half..set.len()).collect())
    } else {
        (0..set.len()).partition(|&k| suspect[k])
    };
    let mut verdicts: Vec<Option<LintVerdict>> = vec![None; set.len()];
    let alone = suspects > 0 && suspects < set.len();
    let groups: Vec<Vec<usize>> = if alone {
        first.iter().map(|&k| vec![k]).chain([second]).collect()
    } else {
        vec![first, second]
    };
    for group in groups {
        let members: Vec<&Mutant> = group.iter().map(|&k| set[k]).collect();
        for (k, v) in group.iter().zip(settle(&members, lint)) {
            verdicts[*k] = Some(v);
        }
    }
    verdicts
        .into_iter()
        .map(|v| v.expect("every member is in one group"))
        .collect()
}

/// The (file name, line) of each error in Verilator's output:
/// `%Error: <dir>/rtl/<file>:<line>:<column>: ...` (also `%Error-CODE:`).
fn error_lines(message: &str) -> BTreeSet<(String, usize)> {
    message
        .lines()
        .filter(|l| l.starts_with("%Error"))
        .filter_map(|l| {
            let (_, rest) = l.split_once(": ")?;
            let mut parts = rest.split(':');
            let path = parts.next()?;
            let line = parts.next()?.parse().ok()?;
            let file = path.rsplit('/').next()?;
            Some((file.to_string(), line))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::mutate::MutantClass;
    use std::cell::Cell;

    fn mutant(file: &str, line: usize) -> Mutant {
        Mutant {
            file: file.into(),
            line,
            column: 1,
            class: MutantClass::OperatorSwap,
            original: "+".into(),
            replacement: "-".into(),
        }
    }

    /// A stand-in for Verilator (this tests the splitting, not Verilator;
    /// tests/mutate_schema.rs checks the batches against real lints): a
    /// set is refused when it holds a mutant on a "bad" line, the error
    /// naming that line, or naming nothing when `silent`.
    fn fake_lint<'a>(
        bad: &'a [(&'a str, usize)],
        silent: bool,
        calls: &'a Cell<usize>,
    ) -> impl Fn(&[&Mutant]) -> LintVerdict + 'a {
        move |set| {
            calls.set(calls.get() + 1);
            let hits: Vec<String> = set
                .iter()
                .filter(|m| bad.contains(&(m.file.as_str(), m.line)))
                .map(|m| {
                    format!(
                        "%Error: /w/l0001/rtl/{}:{}:7: no such member",
                        m.file, m.line
                    )
                })
                .collect();
            match (hits.is_empty(), silent) {
                (true, _) => Ok(()),
                (false, false) => Err(("verilator", hits.join("\n"))),
                (false, true) => Err(("verilator", "%Error: Exiting due to 1 error".into())),
            }
        }
    }

    fn set_of(n: usize) -> Vec<Mutant> {
        (0..n)
            .map(|k| mutant(["a.sv", "b.sv"][k % 2], 10 + k))
            .collect()
    }

    #[test]
    fn a_clean_batch_costs_one_lint_and_every_refusal_is_a_lint_alone() {
        let mutants = set_of(16);
        let refs: Vec<&Mutant> = mutants.iter().collect();
        for silent in [false, true] {
            let calls = Cell::new(0);
            let clean = settle(&refs, &fake_lint(&[], silent, &calls));
            assert!(clean.iter().all(|v| v.is_ok()));
            assert_eq!(calls.get(), 1);
            let bad = [("b.sv", 13), ("a.sv", 22)];
            let calls = Cell::new(0);
            let verdicts = settle(&refs, &fake_lint(&bad, silent, &calls));
            for (m, v) in mutants.iter().zip(&verdicts) {
                let is_bad = bad.contains(&(m.file.as_str(), m.line));
                assert_eq!(v.is_err(), is_bad, "{} (silent {silent})", m.id());
                if let Err((_, message)) = v {
                    // The message of the mutant alone: its line only.
                    assert!(message.contains(&format!("{}:{}:", m.file, m.line)) || silent);
                    assert_eq!(message.lines().count(), 1);
                }
            }
            // Named lines: the two alone, then the clean rest; unnamed:
            // halving, still far fewer than one lint each.
            let most = if silent { 15 } else { 4 };
            assert!(
                calls.get() <= most,
                "{} lints (silent {silent})",
                calls.get()
            );
        }
    }

    #[test]
    fn batches_never_put_two_mutants_of_one_line_together() {
        let line_of = |b: &[Mutant]| {
            b.iter()
                .map(|m| (m.file.clone(), m.line))
                .collect::<Vec<_>>()
        };
        // Three sites on one line, next to each other: 43 mutants in three
        // batches of at most 16, the three in three of them.
        let mut mutants = set_of(40);
        for column in 1..=3 {
            mutants.insert(
                5,
                Mutant {
                    column,
                    ..mutant("c.sv", 99)
                },
            );
        }
        let batches = group(&mutants, 16);
        assert_eq!(batches.len(), 3);
        assert!(batches.iter().all(|b| b.len() <= 16));
        for b in &batches {
            let lines = line_of(b);
            assert_eq!(lines.iter().collect::<BTreeSet<_>>().len(), lines.len());
        }
        assert_eq!(batches.iter().map(Vec::len).sum::<usize>(), 43);
        // One batch would hold two of one line: the second is alone.
        let two = vec![
            mutant("c.sv", 9),
            Mutant {
                column: 4,
                ..mutant("c.sv", 9)
            },
        ];
        assert_eq!(
            group(&two, 16).iter().map(Vec::len).collect::<Vec<_>>(),
            [1, 1]
        );
        assert_eq!(group(&set_of(5), 1).len(), 5);
        assert_eq!(
            error_lines(
                "%Error-UNSUPPORTED: x/rtl/pccx_top.sv:153:28: no\n: ... In instance\n%Warning-WIDTH: x/rtl/a.sv:1:1: w"
            ),
            BTreeSet::from([("pccx_top.sv".to_string(), 153)])
        );
    }
}
