// hw/wrap/verilator-4x64-swapped.f: hw/wrap/verilator.f's DUT with the four 64-bit ports with a planted bug (each beat's halves the wrong way round), for the test that the adapter's order is checked
// (tests/dut_variants.rs; docs/dut-contract.md, "Adapters").
-F verilator.f
-GWS_BITS=64
-GWS_PER_STREAM=2
-GWS_SWAP_HALVES=1
