//! `Observed`: a DUT seen at a lower observation level than it offers
//! (docs/dut-contract.md): its reports cut to what that level shows, and
//! its back-door reads refused, so that no check can use more than the
//! level allows. `--observe` and `mutate --observe` wrap our RTL in it.

use pccx_golden::model::{
    AxiResp, Clocked, Event, MemoryView, ModelError, NpuModel, Observation, ShapeEntry, ShapeTable,
    SimControls, Word,
};
use pccx_golden::streams::WeightSource;
use std::ops::DerefMut;

/// `inner` (owned, `Box<dyn NpuModel>`, or lent, `&mut RtlModel`) seen at
/// `level` or its own level, whichever is lower.
pub struct Observed<T> {
    level: Observation,
    inner: T,
}

impl<T> Observed<T>
where
    T: DerefMut,
    T::Target: NpuModel,
{
    pub fn new(inner: T, level: Observation) -> Observed<T> {
        Observed { level, inner }
    }

    fn refused(&self, what: &str) -> ModelError {
        ModelError::Backdoor(format!(
            "{}: {what} is not observable at the {} level (docs/dut-contract.md)",
            self.inner.name(),
            self.observation()
        ))
    }
}

impl<T> NpuModel for Observed<T>
where
    T: DerefMut,
    T::Target: NpuModel,
{
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn observation(&self) -> Observation {
        self.level.min(self.inner.observation())
    }

    fn numerics(&self) -> Option<&pccx_golden::numerics::profile::NumericsProfile> {
        self.inner.numerics()
    }

    fn cycle_budget(&self) -> Option<pccx_golden::model::CycleBudget> {
        self.inner.cycle_budget()
    }

    fn reset(&mut self) -> Result<(), ModelError> {
        self.inner.reset()
    }

    fn l2_words(&self) -> u32 {
        self.inner.l2_words()
    }

    // Loading is stimulus, not observation: the back door still writes
    // (docs/dut-contract.md, "Loading").
    fn write_l2(&mut self, addr: u32, data: &[Word]) -> Result<(), ModelError> {
        self.inner.write_l2(addr, data)
    }

    fn read_l2(&mut self, _addr: u32, _out: &mut [Word]) -> Result<(), ModelError> {
        if self.observation() == Observation::Full {
            return self.inner.read_l2(_addr, _out);
        }
        Err(self.refused("L2 through the back door"))
    }

    fn l2_view(&self) -> Option<MemoryView<'_>> {
        (self.observation() == Observation::Full)
            .then(|| self.inner.l2_view())
            .flatten()
    }

    // Host memory is the harness's own (the host port's): every level sees it.
    fn write_host(&mut self, addr: u32, data: &[Word]) -> Result<(), ModelError> {
        self.inner.write_host(addr, data)
    }

    fn read_host(&mut self, addr: u32, out: &mut [Word]) -> Result<(), ModelError> {
        self.inner.read_host(addr, out)
    }

    fn host_view(&self) -> Option<MemoryView<'_>> {
        self.inner.host_view()
    }

    fn shape_entry(&mut self, table: ShapeTable, index: u8) -> Result<ShapeEntry, ModelError> {
        if self.observation() == Observation::Full {
            return self.inner.shape_entry(table, index);
        }
        Err(self.refused("a shape-table entry"))
    }

    fn set_shape_entry(
        &mut self,
        table: ShapeTable,
        index: u8,
        entry: ShapeEntry,
    ) -> Result<(), ModelError> {
        self.inner.set_shape_entry(table, index, entry)
    }

    fn e_max(&mut self) -> Result<u16, ModelError> {
        if self.observation() == Observation::Full {
            return self.inner.e_max();
        }
        Err(self.refused("e_max"))
    }

    fn set_e_max(&mut self, value: u16) -> Result<(), ModelError> {
        self.inner.set_e_max(value)
    }

    fn reg_write(&mut self, offset: u32, value: u32) -> Result<AxiResp, ModelError> {
        self.inner.reg_write(offset, value)
    }

    fn reg_read(&mut self, offset: u32) -> Result<(u32, AxiResp), ModelError> {
        self.inner.reg_read(offset)
    }

    fn idle(&mut self, cycles: u32) -> Result<(), ModelError> {
        self.inner.idle(cycles)
    }

    fn drain(&mut self) -> Result<(), ModelError> {
        self.inner.drain()
    }

    fn take_events(&mut self) -> Vec<Event> {
        let events = self.inner.take_events();
        let level = self.observation();
        events.into_iter().filter_map(|e| level.show(e)).collect()
    }

    fn set_weight_source(&mut self, source: WeightSource) {
        self.inner.set_weight_source(source)
    }

    fn weight_beats_consumed(&mut self) -> [u64; 2] {
        self.inner.weight_beats_consumed()
    }

    // The clock stays: its waits and deadlines are how a hang is seen at
    // every level. Its status timeline is a per-cycle tap, which the
    // scoreboard reads only at the full level.
    fn clock(&mut self) -> Option<&mut dyn Clocked> {
        self.inner.clock()
    }

    fn sim_controls(&mut self) -> Option<&mut dyn SimControls> {
        self.inner.sim_controls()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pccx_golden::golden::{Golden, GoldenConfig};
    use pccx_golden::model::UNATTRIBUTED;

    fn observed(level: Observation) -> Observed<Box<dyn NpuModel>> {
        let golden: Box<dyn NpuModel> = Box::new(Golden::new(GoldenConfig { l2_words: 64 }));
        Observed::new(golden, level)
    }

    #[test]
    fn back_door_reads_are_refused_below_full() {
        for level in [Observation::BlackBox, Observation::Retire] {
            let mut m = observed(level);
            let mut out = [0; 1];
            let e = m.read_l2(0, &mut out).unwrap_err().to_string();
            assert!(
                e.contains("not observable") && e.contains(level.name()),
                "{e}"
            );
            assert!(m.l2_view().is_none());
            assert!(m.shape_entry(ShapeTable::Fmap, 0).is_err());
            assert!(m.e_max().is_err());
            // Host memory is the harness's: still there.
            assert!(m.read_host(0, &mut out).is_ok());
        }
        let mut full = observed(Observation::Full);
        assert!(full.read_l2(0, &mut [0; 1]).is_ok());
        assert!(full.l2_view().is_some());
    }

    #[test]
    fn reports_are_cut_to_the_level() {
        let events = || {
            vec![
                Event::Latch {
                    seq: 0,
                    word: 1,
                    cycle: Some(1),
                },
                Event::Retire {
                    seq: 0,
                    opcode: 2,
                    err: 0,
                    cycle: Some(9),
                    start: Some(3),
                },
                Event::L2Write {
                    seq: 0,
                    addr: 1,
                    data: 2,
                    mask: 0xFF,
                },
                Event::HostWrite {
                    seq: 0,
                    addr: 4,
                    data: 5,
                },
            ]
        };
        let m = observed(Observation::BlackBox);
        let shown: Vec<Event> = events()
            .into_iter()
            .filter_map(|e| m.observation().show(e))
            .collect();
        assert_eq!(
            shown,
            [Event::HostWrite {
                seq: UNATTRIBUTED,
                addr: 4,
                data: 5
            }]
        );
        let m = observed(Observation::Retire);
        let shown: Vec<Event> = events()
            .into_iter()
            .filter_map(|e| m.observation().show(e))
            .collect();
        assert_eq!(
            shown,
            [
                Event::Retire {
                    seq: 0,
                    opcode: 2,
                    err: 0,
                    cycle: Some(9),
                    start: None
                },
                Event::HostWrite {
                    seq: UNATTRIBUTED,
                    addr: 4,
                    data: 5
                },
            ]
        );
        let m = observed(Observation::Full);
        let shown: Vec<Event> = events()
            .into_iter()
            .filter_map(|e| m.observation().show(e))
            .collect();
        assert_eq!(shown, events());
    }
}
