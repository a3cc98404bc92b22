//! The NPU's five engines (one per opcode, numbered as the RTL's
//! `pccx_pkg::ENG_*` are) and [`PerEngine`], a value for each of them.
//!
//! Every part of the project that counts, weighs or names something per
//! engine uses these: the timing model's engine clocks, the scoreboard's
//! busy cycles and latencies, the coverage bins of full FIFOs, the
//! generator's instruction mix, failure signatures. The upper-case names
//! are the ones files and reports show (`MEM` for the MEMCPY engine).

use crate::isa::{Instr, Opcode};
use std::ops::{AddAssign, Index, IndexMut};

/// One of the NPU's engines. The order is the opcode's, so arrays and
/// files indexed by engine list them GEMV, GEMM, MEM, MEMSET, CVO.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Engine {
    Gemv,
    Gemm,
    /// The MEMCPY engine.
    Mem,
    Memset,
    Cvo,
}

impl Engine {
    /// Every engine, in opcode order.
    pub const ALL: [Engine; 5] = [
        Engine::Gemv,
        Engine::Gemm,
        Engine::Mem,
        Engine::Memset,
        Engine::Cvo,
    ];

    /// The engine that executes `opcode`.
    pub fn of(opcode: Opcode) -> Engine {
        match opcode {
            Opcode::Gemv => Engine::Gemv,
            Opcode::Gemm => Engine::Gemm,
            Opcode::Memcpy => Engine::Mem,
            Opcode::Memset => Engine::Memset,
            Opcode::Cvo => Engine::Cvo,
        }
    }

    /// The engine of a legal instruction.
    pub fn of_instr(instr: &Instr) -> Engine {
        Engine::of(instr.opcode())
    }

    /// The engine of a retired opcode as events carry it (the opcode's
    /// bits); `None` for bits no opcode has.
    pub fn of_bits(bits: u8) -> Option<Engine> {
        Opcode::from_bits(bits).map(Engine::of)
    }

    /// The opcode the engine executes.
    pub fn opcode(self) -> Opcode {
        match self {
            Engine::Gemv => Opcode::Gemv,
            Engine::Gemm => Opcode::Gemm,
            Engine::Mem => Opcode::Memcpy,
            Engine::Memset => Opcode::Memset,
            Engine::Cvo => Opcode::Cvo,
        }
    }

    /// The position in [`Engine::ALL`] (and in a [`PerEngine`]).
    pub fn index(self) -> usize {
        self as usize
    }

    /// The upper-case name files and reports use: `GEMV`, `GEMM`, `MEM`,
    /// `MEMSET`, `CVO`.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Gemv => "GEMV",
            Engine::Gemm => "GEMM",
            Engine::Mem => "MEM",
            Engine::Memset => "MEMSET",
            Engine::Cvo => "CVO",
        }
    }
}

impl std::fmt::Display for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A value per engine, indexed by [`Engine`]. It serialises as the plain
/// array of the five values in [`Engine::ALL`] order, the form result
/// files have always held.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(transparent)]
pub struct PerEngine<T>(pub [T; 5]);

impl<T> PerEngine<T> {
    /// The value of each engine, computed from it.
    pub fn from_fn(mut value: impl FnMut(Engine) -> T) -> PerEngine<T> {
        PerEngine(Engine::ALL.map(&mut value))
    }

    /// Each engine with its value, in [`Engine::ALL`] order.
    pub fn iter(&self) -> impl Iterator<Item = (Engine, &T)> {
        Engine::ALL.into_iter().zip(&self.0)
    }

    /// Each engine with its value, to change.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (Engine, &mut T)> {
        Engine::ALL.into_iter().zip(&mut self.0)
    }

    /// The values, in [`Engine::ALL`] order.
    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.0.iter()
    }
}

impl<T> Index<Engine> for PerEngine<T> {
    type Output = T;

    fn index(&self, engine: Engine) -> &T {
        &self.0[engine.index()]
    }
}

impl<T> IndexMut<Engine> for PerEngine<T> {
    fn index_mut(&mut self, engine: Engine) -> &mut T {
        &mut self.0[engine.index()]
    }
}

/// Adds engine by engine (busy cycles summed over seeds).
impl<T: AddAssign> AddAssign for PerEngine<T> {
    fn add_assign(&mut self, other: PerEngine<T>) {
        for (mine, theirs) in self.0.iter_mut().zip(other.0) {
            *mine += theirs;
        }
    }
}

impl<T> From<[T; 5]> for PerEngine<T> {
    fn from(values: [T; 5]) -> PerEngine<T> {
        PerEngine(values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engines_follow_the_opcodes() {
        for (i, engine) in Engine::ALL.into_iter().enumerate() {
            assert_eq!(engine.index(), i);
            assert_eq!(usize::from(engine.opcode().bits()), i);
            assert_eq!(Engine::of(engine.opcode()), engine);
            assert_eq!(Engine::of_bits(engine.opcode().bits()), Some(engine));
        }
        assert_eq!(Engine::of_bits(5), None);
        let names: Vec<&str> = Engine::ALL.iter().map(|e| e.name()).collect();
        assert_eq!(names, ["GEMV", "GEMM", "MEM", "MEMSET", "CVO"]);
    }

    #[test]
    fn per_engine_values_are_indexed_by_engine_and_serialise_as_an_array() {
        let mut busy = PerEngine::from_fn(|e| e.index() as u64 * 10);
        busy[Engine::Mem] += 1;
        assert_eq!(busy, PerEngine([0, 10, 21, 30, 40]));
        busy += PerEngine::from([1, 1, 1, 1, 1]);
        assert_eq!(busy, PerEngine([1, 11, 22, 31, 41]));
        busy[Engine::Mem] -= 1;
        assert_eq!(serde_json::to_string(&busy).unwrap(), "[1,11,21,31,41]");
        let back: PerEngine<u64> = serde_json::from_str("[1,2,3,4,5]").unwrap();
        assert_eq!(back[Engine::Cvo], 5);
        assert!(serde_json::from_str::<PerEngine<u64>>("[1,2,3,4]").is_err());
    }
}
