//! `forward_to_inner!`: the `NpuModel` methods a wrapping model (the
//! coverage probe, the fault injector) passes straight to its `inner` model.
//! Both wrappers change what they observe (events, register traffic) and
//! nothing about the backdoor or the simulator's controls listed here, so
//! they share one list instead of two copies that drift apart. (The clock
//! and the weight source each forwards itself: the fault injector can delay
//! the status timeline and bend a weight beat.)

/// Expands, inside `impl NpuModel for W`, to the methods that only call
/// `self.inner`'s method of the same name.
macro_rules! forward_to_inner {
    () => {
        fn l2_words(&self) -> u32 {
            self.inner.l2_words()
        }

        fn write_l2(
            &mut self,
            addr: u32,
            data: &[pccx_golden::model::Word],
        ) -> Result<(), pccx_golden::model::ModelError> {
            self.inner.write_l2(addr, data)
        }

        fn read_l2(
            &mut self,
            addr: u32,
            out: &mut [pccx_golden::model::Word],
        ) -> Result<(), pccx_golden::model::ModelError> {
            self.inner.read_l2(addr, out)
        }

        fn l2_view(&self) -> Option<pccx_golden::model::MemoryView<'_>> {
            self.inner.l2_view()
        }

        fn host_view(&self) -> Option<pccx_golden::model::MemoryView<'_>> {
            self.inner.host_view()
        }

        fn write_host(
            &mut self,
            addr: u32,
            data: &[pccx_golden::model::Word],
        ) -> Result<(), pccx_golden::model::ModelError> {
            self.inner.write_host(addr, data)
        }

        fn read_host(
            &mut self,
            addr: u32,
            out: &mut [pccx_golden::model::Word],
        ) -> Result<(), pccx_golden::model::ModelError> {
            self.inner.read_host(addr, out)
        }

        fn shape_entry(
            &mut self,
            table: pccx_golden::model::ShapeTable,
            index: u8,
        ) -> Result<pccx_golden::model::ShapeEntry, pccx_golden::model::ModelError> {
            self.inner.shape_entry(table, index)
        }

        fn set_shape_entry(
            &mut self,
            table: pccx_golden::model::ShapeTable,
            index: u8,
            entry: pccx_golden::model::ShapeEntry,
        ) -> Result<(), pccx_golden::model::ModelError> {
            self.inner.set_shape_entry(table, index, entry)
        }

        fn e_max(&mut self) -> Result<u16, pccx_golden::model::ModelError> {
            self.inner.e_max()
        }

        fn set_e_max(&mut self, value: u16) -> Result<(), pccx_golden::model::ModelError> {
            self.inner.set_e_max(value)
        }

        fn idle(&mut self, cycles: u32) -> Result<(), pccx_golden::model::ModelError> {
            self.inner.idle(cycles)
        }

        fn sim_controls(&mut self) -> Option<&mut dyn pccx_golden::model::SimControls> {
            self.inner.sim_controls()
        }

        fn observation(&self) -> pccx_golden::model::Observation {
            self.inner.observation()
        }

        fn numerics(&self) -> Option<&pccx_golden::numerics::profile::NumericsProfile> {
            self.inner.numerics()
        }

        fn cycle_budget(&self) -> Option<pccx_golden::model::CycleBudget> {
            self.inner.cycle_budget()
        }
    };
}
