// hw/wrap/verilator-streams-dup.f: hw/wrap/verilator-streams.f's DUT with a
// planted bug: every 5th host word read is answered without being taken
// from the stream (tests/dut_variants.rs; docs/dut-contract.md, "Host
// memory by streams").
-F verilator-streams.f
-GDUP_EVERY=5
