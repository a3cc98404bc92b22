//! pccx-cosim harness: the Verilated RTL behind the `NpuModel` interface,
//! the scoreboard, the stimulus generator and the campaign runner.
