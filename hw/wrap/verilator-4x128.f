// hw/wrap/verilator-4x128.f: hw/wrap/verilator.f's DUT with four 128-bit weight ports (a stream's beats in turn on its two ports), the public pccx project's shape
// (tests/dut_variants.rs; docs/dut-contract.md, "Adapters").
-F verilator.f
-GWS_BITS=128
-GWS_PER_STREAM=2
