// hw/wrap/verilator-4x64.f: hw/wrap/verilator.f's DUT with four 64-bit weight ports (each beat's halves on a stream's two ports)
// (tests/dut_variants.rs; docs/dut-contract.md, "Adapters").
-F verilator.f
-GWS_BITS=64
-GWS_PER_STREAM=2
